//! The MPI commands end to end under `mpirun -np 2` (builds with the `mpi` feature):
//! `calibrate network` writes its JSON, its stored file, a `[machine]` table a components
//! file reads and a platform `simulate` reads; a distributed `validate` gives a row in the
//! thread runtime's schema (a matrix multiplication on four processes, oversubscribed, is
//! reported with the cores cap); mistakes end the job with status 2 and one message. Nothing
//! here asserts how fast anything ran.
#![cfg(feature = "mpi")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("perfcompose-mpi-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `mpirun -np 2 perfcompose ARGS` with `config` as the configuration directory.
fn mpirun(args: &[&str], config: &Path) -> Output {
    mpirun_on(2, args, config)
}

/// `mpirun -np PROCESSES perfcompose ARGS` (oversubscribed beyond the cores).
fn mpirun_on(processes: usize, args: &[&str], config: &Path) -> Output {
    Command::new("mpirun")
        .args(["-np", &processes.to_string(), "-x", "XDG_CONFIG_HOME"])
        .arg(env!("CARGO_BIN_EXE_perfcompose"))
        .args(args)
        .env("XDG_CONFIG_HOME", config)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_rmaps_base_oversubscribe", "1")
        .output()
        .expect("mpirun (install Open MPI with `bash scripts/install-mpi`)")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[track_caller]
fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "status {:?}\n{}",
        o.status.code(),
        text(&o.stderr)
    );
    text(&o.stdout)
}

/// A quick calibration of this machine's network into `dir`.
fn calibrate(dir: &Path) -> serde_json::Value {
    let net = dir.join("net.json");
    let out = ok(&mpirun(
        &[
            "calibrate",
            "network",
            "--json",
            "--max-bytes",
            "65536",
            "--reps",
            "3",
            "-o",
            net.to_str().unwrap(),
            "--machine-out",
            dir.join("machine.toml").to_str().unwrap(),
            "--platform-out",
            dir.join("platform.xml").to_str().unwrap(),
            // Hosts for the four-process traces too.
            "--platform-hosts",
            "4",
        ],
        dir,
    ));
    // One JSON document: rank 1 printed nothing.
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

#[test]
fn calibrate_network_writes_its_json_and_files_other_commands_read() {
    let dir = scratch("calibrate");
    let v = calibrate(&dir);
    for key in ["alpha_s", "beta_s_per_byte"] {
        assert!(v["hockney"][key].is_f64(), "{v}");
        assert!(v["hockney_eager"][key].is_f64(), "{v}");
    }
    for key in ["L_s", "o_s", "g_s", "G_s_per_byte"] {
        assert!(
            v["loggp"][key].as_f64().is_some_and(|x| x >= 0.0),
            "{key}: {v}"
        );
    }
    assert!(v["eager_limit_bytes"].is_u64());
    let points = v["points"].as_array().unwrap();
    assert_eq!(points.len(), 14, "8 B to 64 KiB");
    assert!(points.iter().all(|p| p["seconds"].as_f64().unwrap() > 0.0));
    assert_eq!(v["processes"], 2);
    // The stored file reads back as the same calibration.
    let stored: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("net.json")).unwrap()).unwrap();
    assert_eq!(stored, v);
    // The [machine] table serves a components file, and predict uses it.
    std::fs::write(
        dir.join("comps.toml"),
        "machine_file = \"machine.toml\"\n[components.msg]\nmodel = \"hockney(8 * x)\"\n",
    )
    .unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_perfcompose"))
        .args(["predict", "--components"])
        .arg(dir.join("comps.toml"))
        .args(["msg", "--at", "x=1000", "--json"])
        .output()
        .unwrap();
    let p: serde_json::Value = serde_json::from_str(&ok(&o)).unwrap();
    // In nanoseconds, like the block models it is composed with.
    let predicted = p["values"][0]["value"].as_f64().unwrap();
    let alpha = v["hockney_eager"]["alpha_s"].as_f64().unwrap();
    let beta = v["hockney"]["beta_s_per_byte"].as_f64().unwrap();
    let want = (alpha + beta * 8000.0) * 1e9;
    assert!(
        (predicted - want).abs() <= 1e-6 * want,
        "{predicted} ns, want {want} ns"
    );
    // The platform replays a trace.
    let trace = dir.join("trace.txt");
    std::fs::write(&trace, "0 send 1 0 1000000\n1 recv 0 0 1000000\n").unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_perfcompose"))
        .args(["simulate", "--platform"])
        .arg(dir.join("platform.xml"))
        .arg("--trace")
        .arg(&trace)
        .output()
        .unwrap();
    ok(&o);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_distributed_mapreduce_validates_into_the_thread_runtimes_row_schema() {
    let dir = scratch("validate");
    calibrate(&dir);
    let net = dir.join("net.json");
    let term =
        "mapreduce(map, reduce_per_key, nodes=2, threads=1, keys=768, per_key=x, reduction=global)";
    let out = ok(&mpirun(
        &[
            "validate",
            "--term",
            term,
            "--sizes",
            "2,4",
            "--network",
            net.to_str().unwrap(),
            "--trace",
            dir.join("traces").to_str().unwrap(),
            "--json",
        ],
        &dir,
    ));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{v}");
    let row = &rows[0];
    assert_eq!(row["configuration"], term);
    assert!(row["time_error"].is_f64(), "{row}");
    // Two sizes may fit a constant, against which growth cannot be compared (null).
    assert!(
        row["coefficient_error"].is_f64() || row["coefficient_error"].is_null(),
        "{row}"
    );
    assert!(row["repeat_error"].is_f64(), "{row}");
    // Six paired rounds, reported only until the network model is calibrated for
    // distributed designs.
    assert_eq!(row["verdict"], "reported_only", "{row}");
    assert_eq!(row["rounds"], 6, "{row}");
    assert!(row["error_interval"]["low"].is_f64(), "{row}");
    assert!(row.to_string().contains("network calibration"), "{row}");
    assert!(v["summary"]["judged"].is_u64(), "{v}");
    // The recorded trace replays on the calibrated platform.
    // One directory per configuration, and the run's provenance beside them.
    assert!(dir.join("traces/provenance.json").is_file());
    let traces: Vec<PathBuf> = std::fs::read_dir(dir.join("traces"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(traces.len(), 1, "{traces:?}");
    let measured: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(traces[0].join("measured.json")).unwrap())
            .unwrap();
    let seconds = measured["measured_time_s"].as_f64().unwrap();
    assert!(seconds > 0.0);
    let o = Command::new(env!("CARGO_BIN_EXE_perfcompose"))
        .args(["simulate", "--platform"])
        .arg(dir.join("platform.xml"))
        .arg("--trace")
        .arg(traces[0].join("trace.txt"))
        .args(["--measured-time", &seconds.to_string(), "--json"])
        .output()
        .unwrap();
    let sim: serde_json::Value = serde_json::from_str(&ok(&o)).unwrap();
    assert!(sim["slowdown"].is_f64(), "{sim}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_distributed_divide_and_conquer_validates_with_the_calibrated_exchange() {
    let dir = scratch("dc");
    calibrate(&dir);
    let net = dir.join("net.json");
    let term = "dc(cc_divide, cc_combine, cc_leaf, procs=2, exchange=ex, size=32768)";
    let out = ok(&mpirun(
        &[
            "validate",
            "--term",
            term,
            "--sizes",
            "16384,65536",
            "--network",
            net.to_str().unwrap(),
            "--json",
        ],
        &dir,
    ));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    let row = &v["rows"][0];
    assert_eq!(row["configuration"], term);
    assert!(row["time_error"].is_f64(), "{row}");
    assert!(row.to_string().contains("Ex(K) = 2·(l + K·g)"), "{row}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_distributed_matrix_multiplication_is_reported_with_the_cores_cap_and_traced() {
    let dir = scratch("matmul");
    calibrate(&dir);
    let net = dir.join("net.json");
    let term = "matmul(mm_block, procs=4, message=msg, bcast=pipeline, segments=2)";
    let out = ok(&mpirun_on(
        4,
        &[
            "validate",
            "--term",
            term,
            "--sizes",
            "64,128",
            "--network",
            net.to_str().unwrap(),
            "--trace",
            dir.join("traces").to_str().unwrap(),
            "--json",
        ],
        &dir,
    ));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    let row = &v["rows"][0];
    assert_eq!(row["configuration"], term);
    assert!(row["time_error"].is_f64(), "{row}");
    // Four processes on two cores: reported, not judged, with the cap applied.
    assert!(row["target"].is_null(), "{row}");
    assert!(row.to_string().contains("the cores cap"), "{row}");
    assert!(row.to_string().contains("2 × 2 mesh"), "{row}");
    assert_eq!(v["summary"]["judged"], 0, "{v}");
    // One directory per configuration, and the run's provenance beside them.
    assert!(dir.join("traces/provenance.json").is_file());
    let traces: Vec<PathBuf> = std::fs::read_dir(dir.join("traces"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(traces.len(), 1, "{traces:?}");
    let index = std::fs::read_to_string(traces[0].join("trace.txt")).unwrap();
    assert_eq!(index.lines().count(), 4, "{index}");
    let o = Command::new(env!("CARGO_BIN_EXE_perfcompose"))
        .args(["simulate", "--platform"])
        .arg(dir.join("platform.xml"))
        .arg("--trace")
        .arg(traces[0].join("trace.txt"))
        .arg("--json")
        .output()
        .unwrap();
    ok(&o);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn mistakes_end_the_job_with_status_2_and_one_message() {
    let dir = scratch("mistakes");
    let net = dir.join("none.json");
    // A term for more nodes than processes.
    let o = mpirun(
        &[
            "validate",
            "--term",
            "mapreduce(map, reduce_per_key, nodes=3, threads=1, keys=768, per_key=x)",
            "--network",
            net.to_str().unwrap(),
        ],
        &dir,
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    let e = text(&o.stderr);
    assert_eq!(
        e.matches("asks for 3 processes (its nodes= or procs=) but the job has 2")
            .count(),
        1,
        "{e}"
    );
    // A mesh of four processes on a job of two.
    let o = mpirun(
        &[
            "validate",
            "--term",
            "matmul(mm_block, procs=4, message=msg, bcast=flat)",
            "--network",
            net.to_str().unwrap(),
        ],
        &dir,
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    let e = text(&o.stderr);
    assert_eq!(
        e.matches("asks for 4 processes (its nodes= or procs=) but the job has 2")
            .count(),
        1,
        "{e}"
    );
    // No calibration stored for this machine.
    let o = mpirun(
        &[
            "validate",
            "--term",
            "mapreduce(map, reduce_per_key, nodes=2, threads=1, keys=768, per_key=x)",
        ],
        &dir,
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    let e = text(&o.stderr);
    assert_eq!(e.matches("no network calibration").count(), 1, "{e}");
    // A reduction that does not fit the reduce kernel, and a job of one process.
    let o = mpirun(
        &[
            "validate",
            "--term",
            "mapreduce(map, reduce_pairwise, nodes=2, threads=1, keys=x, per_key=768, reduction=global)",
            "--network",
            net.to_str().unwrap(),
        ],
        &dir,
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("does not fit the reduce kernel"));
    let single = Command::new(env!("CARGO_BIN_EXE_perfcompose"))
        .args(["calibrate", "network", "--no-save"])
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .output()
        .unwrap();
    assert_eq!(single.status.code(), Some(2), "{}", text(&single.stderr));
    assert!(text(&single.stderr).contains("at least 2 MPI processes"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `perfcompose ARGS` started without `mpirun`.
fn alone(args: &[&str], config: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_perfcompose"))
        .args(args)
        .env("XDG_CONFIG_HOME", config)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .output()
        .unwrap()
}

/// The job ended with status 2 and printed `message` once, without a panic.
#[track_caller]
fn refused_once(o: &Output, message: &str) {
    let e = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert_eq!(e.matches(message).count(), 1, "{e}");
    assert!(!e.contains("panicked"), "{e}");
}

#[test]
fn the_mpi_suite_without_mpirun_is_refused_like_calibrate_network() {
    let dir = scratch("alone");
    let o = alone(&["validate", "--suite", "mpi"], &dir);
    refused_once(
        &o,
        "validate --suite mpi needs at least 2 MPI processes, this job has 1 (it was not started by mpirun); start it as `mpirun -np 2 perfcompose …`",
    );
    let o = alone(&["calibrate", "network", "--no-save"], &dir);
    refused_once(
        &o,
        "calibrate network needs at least 2 MPI processes, this job has 1 (it was not started by mpirun)",
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn flag_mistakes_under_mpirun_are_printed_once_and_never_panic() {
    let dir = scratch("flags");
    for (args, message) in [
        (
            &["validate", "--suite", "mpi", "--time-limit", "1e20"][..],
            "1e20 s is longer than a year",
        ),
        (
            &["calibrate", "network", "--no-save", "--time-limit", "1e19"][..],
            "1e19 s is longer than a year",
        ),
        (
            &["validate", "--suite", "mpi", "--time-limit=-5"][..],
            "give a positive number of seconds, not -5",
        ),
        (
            &["validate", "--suite", "mpi", "--cores", "0"][..],
            "0 is not in 1..=65536",
        ),
        (
            &["validate", "--suite", "mpi", "--modeler", "nosuch"][..],
            "unknown modeler `nosuch`",
        ),
    ] {
        refused_once(&mpirun(args, &dir), message);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_unknown_kernel_under_mpirun_is_located_with_a_suggestion() {
    let dir = scratch("kernel");
    let term = "dc(cc_divide, cc_combin, cc_leaf, procs=2, exchange=ex, size=1024)";
    let net = dir.join("none.json");
    let o = mpirun(
        &[
            "validate",
            "--term",
            term,
            "--network",
            net.to_str().unwrap(),
        ],
        &dir,
    );
    refused_once(&o, "unknown kernel `cc_combin` (<term>:1:15)");
    let e = text(&o.stderr);
    assert!(e.contains("────┬────"), "{e}");
    assert!(e.contains("did you mean `cc_combine`?"), "{e}");
    // The thread runtime says the same about its terms.
    let o = alone(&["validate", "--term", "seq(qsort, incc)"], &dir);
    refused_once(&o, "unknown kernel `incc` (<term>:1:12)");
    assert!(text(&o.stderr).contains("did you mean `inc`?"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_part_of_a_term_that_mpi_cannot_run_is_located_with_its_caret() {
    let dir = scratch("located");
    let net = dir.join("none.json");
    for (term, message, caret) in [
        (
            "dc(cc_divide, seq(cc_combine, cc_combine), cc_leaf, procs=2, exchange=ex, size=1024)",
            "the combine of a dc must be a kernel name to run on MPI (<term>:1:15)",
            "─────────────┬─────────────",
        ),
        (
            "dc(cc_divide, cc_combine, cc_leaf, procs=p, exchange=ex, size=1024)",
            "procs= must be a number to run on MPI (<term>:1:42)",
            "┬",
        ),
    ] {
        let o = mpirun(
            &[
                "validate",
                "--term",
                term,
                "--network",
                net.to_str().unwrap(),
            ],
            &dir,
        );
        refused_once(&o, message);
        let e = text(&o.stderr);
        assert!(e.contains(caret), "{e}");
        assert!(!e.contains("the design cannot run on MPI"), "{e}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_hand_edited_calibration_with_a_negative_start_up_is_refused_at_its_line() {
    let dir = scratch("edited");
    calibrate(&dir);
    let net = dir.join("net.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&net).unwrap()).unwrap();
    v["hockney_eager"]["alpha_s"] = serde_json::json!(-1.0);
    let edited = dir.join("edited.json");
    std::fs::write(&edited, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    let term = "mapreduce(map, reduce_per_key, nodes=2, threads=1, keys=768, per_key=x)";
    let o = mpirun(
        &[
            "validate",
            "--term",
            term,
            "--network",
            edited.to_str().unwrap(),
        ],
        &dir,
    );
    refused_once(
        &o,
        "`hockney_eager.alpha_s` is -1e0, and it must be a finite time ≥ 0",
    );
    assert!(
        text(&o.stderr).contains("edited.json:"),
        "{}",
        text(&o.stderr)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
