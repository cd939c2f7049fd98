//! The MPI runtime on two processes: MapReduce in the pattern-composition paper's three reductions gives the
//! histogram of every input and sends exactly the bytes `bytes_per_job` states; and a run
//! that goes wrong ends with an answer, not a hang: a block that panics on one rank ends
//! the whole job naming the rank and the block, a rank that waits for a message that
//! never comes is ended by the time limit, and a job that goes right prints once, from
//! rank 0.
//!
//! On four and nine processes (oversubscribed on two cores), Fox's matrix multiplication
//! with each of the matrix-multiplication paper's broadcasts gives the product of the whole matrices.
//!
//! This test starts itself under `mpirun -np 2` (or 4) (the parent role); each rank runs
//! the scenario named in `PERFCOMPOSE_MPI_SCENARIO` (the child role).

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mpi::traits::*;
use perfcompose_core::term::{Broadcast, Reduction};
use perfcompose_mpi::dc::DistributedDc;
use perfcompose_mpi::graph;
use perfcompose_mpi::mapreduce::{bytes_per_job, image_jobs, DistributedMapReduce};
use perfcompose_mpi::matmul::{whole_matrices, DistributedMatmul};
use perfcompose_mpi::matrix::{self, multiply_add};
use perfcompose_mpi::Job;
use perfcompose_runtime::data::ImageSize;
use perfcompose_runtime::kernel::histogram;
use perfcompose_runtime::{Config, Data, Registry};

const SCENARIO: &str = "PERFCOMPOSE_MPI_SCENARIO";
/// Longer than any scenario takes when the job ends as it should.
const OUTER_LIMIT: Duration = Duration::from_secs(120);

fn main() {
    match std::env::var(SCENARIO) {
        Ok(s) => child(&s),
        Err(_) => parent(),
    }
}

fn child(scenario: &str) {
    // The lost message waits for the time limit; everything else ends long before.
    let limit = if scenario == "hang" { 3 } else { 60 };
    let job = Job::start(Duration::from_secs(limit)).expect("MPI starts");
    match scenario {
        "ok" => {
            job.block("greet", || job.barrier());
            if job.is_root() {
                println!("ok from {} ranks", job.size());
            }
        }
        "panic" => {
            job.block("sort", || {
                if job.rank() == 1 {
                    panic!("bad input on purpose");
                }
            });
            // Rank 0 would wait here for ever without the abort.
            job.enter("after sort");
            let mut v = 0u64;
            if job.rank() == 0 {
                job.world().process_at_rank(1).receive_into(&mut v);
            }
            job.barrier();
        }
        "hang" => {
            job.enter("wait for a message");
            let mut v = 0u64;
            if job.rank() == 0 {
                job.world().process_at_rank(1).receive_into(&mut v);
            } else {
                job.barrier();
            }
        }
        "mapreduce" => mapreduce(&job),
        "dc" => dc(&job),
        "matmul" => matmul(&job),
        other => panic!("unknown scenario {other}"),
    }
}

/// Every reduction on 1 and 2 threads per process: rank 0 prints one line per design,
/// `ok` when the results and the bytes sent are right.
fn mapreduce(job: &Job) {
    let registry = Registry::builtin();
    let image = ImageSize::Small.image();
    let one = histogram(&image);
    let (x, jobs) = (5, 2);
    let config = Config {
        pin: false,
        ..Config::default()
    };
    for (reduce, reduction) in [
        ("reduce_pairwise", Reduction::Pairwise),
        ("reduce_per_key", Reduction::Local),
        ("reduce_per_key", Reduction::Global),
    ] {
        for threads in [1, 2] {
            let design = DistributedMapReduce::new(
                job,
                &registry,
                "map",
                reduce,
                threads,
                Some(reduction),
                config.clone(),
            )
            .expect("builds");
            let inputs = image_jobs(&image, x, jobs, job.rank(), job.size());
            let out = job.block("mapreduce", || design.run(job, inputs).expect("runs"));
            let mut total = 0u64;
            job.world().all_reduce_into(
                &design.bytes_sent(),
                &mut total,
                mpi::collective::SystemOperation::sum(),
            );
            if let Some(results) = out {
                let want: Vec<u64> = one.iter().map(|v| v * x as u64).collect();
                let right = results.len() == jobs && results.iter().all(|r| *r == want);
                let bytes = jobs as u64 * bytes_per_job(reduction, job.size(), x, one.len());
                println!(
                    "{} threads={threads}: results {}, bytes {total} of {bytes}",
                    reduction.name(),
                    if right { "right" } else { "WRONG" },
                );
            }
        }
    }
}

/// Connected components by hypercube divide and conquer: rank 0 prints `right` when
/// every job's labelling is the sequential one, and the bytes each process sent.
fn dc(job: &Job) {
    let mut registry = Registry::builtin();
    graph::register(&mut registry);
    let design =
        DistributedDc::new(job, &registry, "cc_divide", "cc_combine", "cc_leaf").expect("builds");
    let problems: Vec<Vec<i32>> = (0..2)
        .map(|j| graph::random_edges(graph::NODES, 20_000, j))
        .collect();
    let inputs = problems.iter().map(|p| Data::Ints(p.clone())).collect();
    let out = job.block("dc", || design.run(job, inputs).expect("runs"));
    let mut most = 0u64;
    job.world().all_reduce_into(
        &design.bytes_sent(),
        &mut most,
        mpi::collective::SystemOperation::max(),
    );
    if let Some(answers) = out {
        let right = answers.len() == 2
            && answers.iter().zip(&problems).all(|(a, p)| match a {
                Data::Ints(labels) => *labels == graph::components(graph::NODES, p),
                _ => false,
            });
        // One exchange of the labelling (4-byte words) per level and job.
        let stated = 2 * job.size().trailing_zeros() as u64 * graph::NODES as u64 * 4;
        println!(
            "dc: results {}, bytes {most} of {stated}",
            if right { "right" } else { "WRONG" }
        );
    }
}

/// Each broadcast on the job's mesh, two jobs of order 12: rank 0 gathers the blocks of
/// C and compares them with the sequential product. Every process sends one block per
/// roll (`q` per job) and, over the `q` broadcasts of a job of its row, in which it takes
/// each place of the tree or chain once, as many blocks as one broadcast sends (`q − 1`).
fn matmul(job: &Job) {
    const ORDER: usize = 12;
    const JOBS: u64 = 2;
    let mut registry = Registry::builtin();
    matrix::register(&mut registry);
    for (bcast, segments) in [
        (Broadcast::Flat, 1),
        (Broadcast::Binomial, 1),
        (Broadcast::Pipeline, 3),
    ] {
        let design = DistributedMatmul::new(job, &registry, matrix::MULTIPLY, bcast, segments)
            .expect("builds");
        let q = design.side();
        let m = ORDER / q;
        let before = design.bytes_sent();
        let mut right = true;
        for (t, problem) in design
            .inputs(ORDER, JOBS)
            .expect("inputs")
            .into_iter()
            .enumerate()
        {
            let c = job.block("matmul", || design.multiply(job, problem).expect("runs"));
            if job.rank() != 0 {
                job.world().process_at_rank(0).send(&c[..]);
                continue;
            }
            let (a, b) = whole_matrices(ORDER, q, t as u64);
            let mut want = vec![0.0; ORDER * ORDER];
            multiply_add(&a, &b, &mut want, ORDER);
            for r in 0..job.size() {
                let block = if r == 0 {
                    c.clone()
                } else {
                    job.world().process_at_rank(r as i32).receive_vec::<f64>().0
                };
                let (i, j) = (r / q, r % q);
                for row in 0..m {
                    for col in 0..m {
                        let got = block[row * m + col];
                        let w = want[(i * m + row) * ORDER + j * m + col];
                        right &= (got - w).abs() < 1e-9;
                    }
                }
            }
        }
        let mine = design.bytes_sent() - before;
        let mut most = 0u64;
        job.world()
            .all_reduce_into(&mine, &mut most, mpi::collective::SystemOperation::max());
        if job.is_root() {
            let stated = JOBS * (2 * q as u64 - 1) * (8 * m * m) as u64;
            println!(
                "matmul {}: results {}, bytes {most} of {stated}",
                bcast.name(),
                if right { "right" } else { "WRONG" }
            );
        }
    }
}

struct Outcome {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn run(scenario: &str) -> Outcome {
    run_on(scenario, 2)
}

fn run_on(scenario: &str, processes: usize) -> Outcome {
    let exe = std::env::current_exe().expect("the test's own path");
    let np = processes.to_string();
    let mut child = Command::new("mpirun")
        .args(["-np", &np, "-x", SCENARIO])
        .arg(&exe)
        .env(SCENARIO, scenario)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_rmaps_base_oversubscribe", "1")
        // mpirun forwards its standard input to rank 0: never the test harness's own.
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| {
            panic!("cannot start mpirun ({e}); install Open MPI with `bash scripts/install-mpi`")
        });
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait for mpirun") {
            break s;
        }
        if start.elapsed() > OUTER_LIMIT {
            let _ = child.kill();
            panic!("scenario `{scenario}` still running after {OUTER_LIMIT:?}: the job hangs");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut stdout = String::new();
    let mut stderr = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    Outcome {
        code: status.code(),
        stdout,
        stderr,
    }
}

/// The checks of the parent process: a name and a check that runs the job and says
/// whether it went right.
type Check = (&'static str, fn() -> (bool, Outcome));

fn checks() -> Vec<Check> {
    fn bytes_as_stated(l: &str) -> bool {
        let (sent, stated) = l
            .rsplit_once("bytes ")
            .and_then(|(_, b)| b.split_once(" of "))
            .unwrap_or(("", "-"));
        sent == stated
    }
    fn matmul_on(processes: usize) -> (bool, Outcome) {
        let o = run_on("matmul", processes);
        let lines: Vec<&str> = o.stdout.lines().collect();
        let ok = o.code == Some(0)
            && lines.len() == 3
            && lines
                .iter()
                .all(|l| l.contains("results right") && bytes_as_stated(l));
        (ok, o)
    }
    vec![
        ("a_job_that_goes_right_prints_once_from_rank_0", || {
            let o = run("ok");
            (o.code == Some(0) && o.stdout == "ok from 2 ranks\n", o)
        }),
        (
            "mapreduce_in_every_reduction_gives_the_histogram_and_sends_the_stated_bytes",
            || {
                let o = run("mapreduce");
                let lines: Vec<&str> = o.stdout.lines().collect();
                let ok = o.code == Some(0)
                    && lines.len() == 6
                    && lines.iter().all(|l| l.contains("results right"))
                    && lines.iter().all(|l| bytes_as_stated(l));
                (ok, o)
            },
        ),
        (
            "connected_components_by_hypercube_divide_and_conquer_match_the_sequential_labelling",
            || {
                let o = run("dc");
                let ok = o.code == Some(0)
                    && o.stdout.contains("dc: results right")
                    && o.stdout.lines().all(bytes_as_stated);
                (ok, o)
            },
        ),
        (
            "fox_matrix_multiplication_on_2x2_with_each_broadcast_gives_the_product",
            || matmul_on(4),
        ),
        (
            "fox_matrix_multiplication_on_3x3_with_each_broadcast_gives_the_product",
            || matmul_on(9),
        ),
        (
            "a_panic_on_one_rank_ends_the_job_naming_the_rank_and_the_block",
            || {
                let o = run("panic");
                let ok = o.code.is_some_and(|c| c != 0)
                    && o.stderr
                        .contains("rank 1 of 2: block `sort` panicked: bad input on purpose");
                (ok, o)
            },
        ),
        ("a_lost_message_ends_the_job_at_its_time_limit", || {
            let o = run("hang");
            let ok = o.code.is_some_and(|c| c != 0)
                && o.stderr.contains(
                    "rank 0: the job ran past its time limit of 3 s in block `wait for a message`",
                );
            (ok, o)
        }),
    ]
}

/// The parent speaks enough of libtest's command line for `cargo test` and
/// `cargo nextest`: `--list` (`--format terse`: `NAME: test` lines; `--ignored`: none),
/// a name filter (`--exact` for a whole name); other flags are accepted and ignored.
fn parent() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |f: &str| args.iter().any(|a| a == f);
    // The first argument that is neither a flag nor a flag's value.
    let mut filter = None;
    let mut rest = args.iter();
    while let Some(a) = rest.next() {
        match a.as_str() {
            "--format" | "--test-threads" | "--color" | "--logfile" | "--skip" | "-Z" => {
                rest.next();
            }
            a if a.starts_with('-') => {}
            _ => {
                filter = Some(a);
                break;
            }
        }
    }
    let selected: Vec<Check> = checks()
        .into_iter()
        .filter(|(name, _)| match filter {
            None => true,
            Some(f) if flag("--exact") => name == f,
            Some(f) => name.contains(f.as_str()),
        })
        .collect();
    if flag("--list") {
        if !flag("--ignored") {
            for (name, _) in &selected {
                println!("{name}: test");
            }
        }
        return;
    }
    let mut failures = Vec::new();
    for (name, check) in &selected {
        let (ok, o) = check();
        println!("test {name} ... {}", if ok { "ok" } else { "FAILED" });
        if !ok {
            failures.push(format!(
                "{name}: status {:?}\n--- stdout\n{}\n--- stderr\n{}",
                o.code, o.stdout, o.stderr
            ));
        }
    }
    if !failures.is_empty() {
        eprintln!("{}", failures.join("\n\n"));
        std::process::exit(1);
    }
}
