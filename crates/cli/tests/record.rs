//! `perfcompose record` end to end (builds with the `mpi` feature): the C and the Fortran
//! test programs of `testdata/record/` recorded under `mpirun -np 2` and `-np 4`; their
//! traces replay in `simulate` and, when SimGrid is installed (`bash scripts/install-simgrid`),
//! in `smpirun -replay` to the same simulated time; the calls the recorder does not cover
//! are named; a failing program, a command that is no MPI program and a directory that
//! cannot be written end with status 2. Nothing here asserts how fast anything ran.
#![cfg(feature = "mpi")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("perfcompose-record-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/record")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[track_caller]
fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        text(&o.stdout),
        text(&o.stderr)
    );
    text(&o.stdout)
}

/// Compile `source` with the MPI compiler `compiler` into `dir`.
fn compile(compiler: &str, source: &str, dir: &Path) -> PathBuf {
    let exe = dir.join(source.replace('.', "_"));
    // In `dir`, where Fortran's module files go too.
    let o = Command::new(compiler)
        .current_dir(dir)
        .arg("-O1")
        .arg("-o")
        .arg(&exe)
        .arg(testdata().join(source))
        .output()
        .unwrap_or_else(|e| {
            panic!("{compiler}: {e} (install Open MPI and gfortran: bash scripts/install-record)")
        });
    ok(&o);
    exe
}

/// `perfcompose ARGS` with Open MPI allowed to run as root and oversubscribed, and no
/// network calibration stored.
fn perfcompose(args: &[&str], config: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_perfcompose"))
        .args(args)
        .env("XDG_CONFIG_HOME", config)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_rmaps_base_oversubscribe", "1")
        .output()
        .unwrap()
}

fn has(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Record `exe` on `np` processes into `dir`, replay it with `simulate` (and `smpirun` if
/// installed), and check what every program of `testdata/record/` does.
fn record_and_replay(exe: &Path, np: usize, dir: &Path, config: &Path, speed: Option<&str>) {
    let np_s = np.to_string();
    let mut args = vec!["record", "-o", dir.to_str().unwrap()];
    if let Some(s) = speed {
        args.extend(["--speed", s]);
    }
    args.extend(["--", "mpirun", "-np", &np_s, exe.to_str().unwrap()]);
    let o = perfcompose(&args, config);
    let out = ok(&o);
    assert!(out.contains(&format!("recorded {np} processes")), "{out}");
    // The calls not covered, on stderr and in measured.json.
    let err = text(&o.stderr);
    assert!(err.contains("MPI_Scan"), "{err}");
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("measured.json")).unwrap()).unwrap();
    assert_eq!(m["version"], 1);
    assert_eq!(m["processes"], np);
    let ranks = m["ranks"].as_array().unwrap();
    assert_eq!(ranks.len(), np);
    for r in ranks {
        assert!(r["seconds"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["recorded_calls"].as_u64().unwrap() > 0, "{r}");
    }
    let measured = m["measured_time_s"].as_f64().unwrap();
    assert!(
        measured > 0.0 && m["run_wall_s"].as_f64().unwrap() >= measured,
        "{m}"
    );
    let uncovered = m["uncovered"].as_array().unwrap();
    let count = |call: &str| {
        uncovered
            .iter()
            .find(|u| u["call"] == call)
            .map(|u| u["count"].as_u64().unwrap())
    };
    assert_eq!(count("MPI_Scan"), Some(np as u64), "{m}");
    assert_eq!(count("MPI_Iprobe"), Some(np as u64 - 1), "{m}");
    // Each rank cancelled one receive: counted, and left out (the replays end).
    assert_eq!(count("MPI_Cancel"), Some(np as u64), "{m}");
    assert_eq!(
        count("request cancelled by MPI_Cancel (left out of the trace)"),
        Some(np as u64),
        "{m}"
    );
    assert!(!std::fs::read_to_string(dir.join("trace_1.txt"))
        .unwrap()
        .contains(" 99 "));
    if let Some(s) = speed {
        assert_eq!(m["speed_source"], format!("given: --speed {s}"));
    }

    // Rank 0 received one message from every other rank through MPI_ANY_SOURCE, twice:
    // the trace names the actual sources (tag 40 by recv, tags 41 + r by irecv).
    let t0 = std::fs::read_to_string(dir.join("trace_0.txt")).unwrap();
    for r in 1..np {
        assert!(t0.contains(&format!("0 recv {r} 40 4\n")), "{t0}");
        assert!(t0.contains(&format!("0 irecv {r} {} 4\n", 41 + r)), "{t0}");
    }
    // Collectives on the split halves are messages; those on the world are actions.
    assert!(t0.contains(" -7002 "), "{t0}");
    assert!(t0.contains("0 allreduce 1 0 0\n"), "{t0}");
    assert!(t0.ends_with("0 finalize\n"), "{t0}");

    // simulate replays it on the platform and hostfile record wrote.
    let trace = dir.join("trace.txt");
    let o = perfcompose(
        &[
            "simulate",
            "--platform",
            dir.join("platform.xml").to_str().unwrap(),
            "--hostfile",
            dir.join("hostfile").to_str().unwrap(),
            "--trace",
            trace.to_str().unwrap(),
            "--measured-time",
            &measured.to_string(),
            "--json",
        ],
        config,
    );
    let sim: serde_json::Value = serde_json::from_str(&ok(&o)).unwrap();
    let simulated = sim["simulated_time_s"].as_f64().unwrap();
    assert!(simulated > 0.0, "{sim}");
    assert_eq!(sim["ranks"].as_array().unwrap().len(), np);

    if !has("smpirun") {
        eprintln!("smpirun is not installed (bash scripts/install-simgrid): the SimGrid replay of {} is skipped", dir.display());
        return;
    }
    // SimGrid opens the index's entries relative to its working directory: from DIR.
    let o = Command::new("smpirun")
        .current_dir(dir)
        .args(["-replay", "trace.txt", "-np", &np_s])
        .args(["-platform", "platform.xml", "-hostfile", "hostfile"])
        .args([
            "--cfg=network/model:CM02",
            "--cfg=network/TCP-gamma:0",
            "--cfg=network/crosstraffic:0",
        ])
        .output()
        .unwrap();
    let log = text(&o.stderr) + &text(&o.stdout);
    assert!(o.status.success(), "{log}");
    let smpi: f64 = log
        .lines()
        .find_map(|l| l.split("Simulation time ").nth(1))
        .unwrap_or_else(|| panic!("no simulation time in:\n{log}"))
        .trim()
        .parse()
        .unwrap();
    // smpirun prints 6 decimals.
    assert!(
        (smpi - simulated).abs() <= 1e-3 * simulated + 1e-6,
        "smpirun {smpi} s, simulate {simulated} s"
    );
}

#[test]
fn the_c_program_records_on_two_and_four_processes_and_replays() {
    let dir = scratch("c");
    let exe = compile("mpicc", "phases.c", &dir);
    record_and_replay(&exe, 2, &dir.join("np2"), &dir, None);
    record_and_replay(&exe, 4, &dir.join("np4"), &dir, Some("1Gf"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_fortran_program_records_on_two_and_four_processes_and_replays() {
    let dir = scratch("fortran");
    let exe = compile("mpif90", "phases.F90", &dir);
    record_and_replay(&exe, 2, &dir.join("np2"), &dir, Some("2Gf"));
    record_and_replay(&exe, 4, &dir.join("np4"), &dir, None);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_failing_program_a_non_mpi_command_and_an_unwritable_directory_exit_2() {
    let dir = scratch("bad");
    let exe = compile("mpicc", "phases.c", &dir);
    let out = dir.join("out");
    let o = perfcompose(
        &[
            "record",
            "-o",
            out.to_str().unwrap(),
            "--speed",
            "1Gf",
            "--",
            "mpirun",
            "-np",
            "2",
            exe.to_str().unwrap(),
            "fail",
        ],
        &dir,
    );
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(
        err.contains("the program failed") && err.contains("status 3"),
        "{err}"
    );
    assert!(!out.join("measured.json").exists());

    let o = perfcompose(
        &[
            "record",
            "-o",
            out.to_str().unwrap(),
            "--speed",
            "1Gf",
            "--",
            "true",
        ],
        &dir,
    );
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(err.contains("no process called MPI_Init"), "{err}");

    // A regular file where the directory should go.
    let file = dir.join("file");
    std::fs::write(&file, "").unwrap();
    let o = perfcompose(
        &[
            "record",
            "-o",
            file.join("sub").to_str().unwrap(),
            "--speed",
            "1Gf",
            "--",
            "mpirun",
            "-np",
            "2",
            exe.to_str().unwrap(),
        ],
        &dir,
    );
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(
        err.contains("cannot use") && err.contains("recording's directory"),
        "{err}"
    );

    let o = perfcompose(
        &[
            "record",
            "-o",
            out.to_str().unwrap(),
            "--speed",
            "fast",
            "--",
            "true",
        ],
        &dir,
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("--speed 'fast'"),
        "{}",
        text(&o.stderr)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
