//! `mpirun -np P perfcompose validate` for distributed designs: the thread runtime's
//! validation ([`perfcompose_runtime::validate`]) with the program run on every process
//! and the communication composed from the calibrated network.
//!
//! For one configuration (a `mapreduce(..., nodes=P, ...)` or `dc(..., procs=P, ...)`
//! term on a job of `P` processes, [`crate::design`]), rank 0 leads ([`crate::crew`])
//! [`MIN_ROUNDS`] paired rounds, each of
//!
//! - the program at every size, all processes together, and
//! - the blocks' unit tests on rank 0 alone, the other processes waiting without
//!   spinning: a MapReduce's map and reduce kernels, under the conditions the thread
//!   runtime's validation gives a MapReduce block with as many threads as run on this
//!   host at once (`P × n` when every process is here); a dc's divide, combine and leaf,
//!
//! the program first in even rounds, the blocks first in odd ones. Each round's blocks
//! predict that round's program; the rounds pooled give the row. The rows are reported
//! only until the network model is calibrated for distributed designs. It fits the
//! blocks' models (a dc's over the basis `1, x`, as the divide-and-conquer paper fits its block
//! costs) and composes the term with a communication component built from the network
//! calibration ([`crate::communication`]): for a MapReduce the shuffle (what the processes send
//! each other, the exact bytes of [`crate::mapreduce::bytes_per_job`], timed with the
//! calibrated Hockney lines, eager below the eager limit and rendezvous above, plus rank
//! 0's reduction of what it receives); for a dc the exchange `2·(l + K·g)` with the divide-and-conquer paper's
//! calibrated `l` and `g`. The row has the thread runtime's schema: time error,
//! coefficient error, repeat error, notes.
//!
//! With a trace directory, one more run at the largest size is recorded
//! ([`crate::trace`]) into `DIR/SLUG/`: `trace.txt` (the index), one file per rank, and
//! `measured.json` with the run's measured time, for `perfcompose simulate
//! --measured-time`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use perfcompose_core::components::{Component, ComponentSource, Components};
use perfcompose_core::compose::{compose, ComposeOptions};
use perfcompose_core::fit::{fit_basis, parse_basis, FitOptions};
use perfcompose_core::measure::Point;
use perfcompose_core::model::Expr;
use perfcompose_core::term::{Reduction, Term};
use perfcompose_runtime::bench::{self, KernelSampler, Repeated, Sampling, Series};
use perfcompose_runtime::data::ImageSize;
use perfcompose_runtime::kernel::Inputs;
use perfcompose_runtime::validate::analyze::{coefficient_error, compare, fit_series};
use perfcompose_runtime::validate::protocol::{half, point_stat, pool_series, repeat_error};
use perfcompose_runtime::validate::verdict::MIN_ROUNDS;
use perfcompose_runtime::validate::{BlockKey, Coverage, Note, Options, Rounds, Row};
use perfcompose_runtime::{Config, Registry};

use crate::crew::{self, Command};
use crate::design::Design;
use crate::error::{DesignError, Error};
use crate::graph::NODES;
use crate::job::Job;
use crate::matrix::MULTIPLY;
use crate::network::NetworkCalibration;

/// A repetition of the program runs jobs for at least this long.
const REPETITION_SECONDS: f64 = 0.01;
/// Rounds per distributed configuration: the fewest that give a 95% interval (the rows
/// are reported only, so more rounds could decide nothing).
const ROUNDS: usize = MIN_ROUNDS;
/// The target of a distributed row: the time error within 15% (the MapReduce target of
/// the thread runtime's suites; the suite's rule is [`perfcompose_runtime::validate::Rule::MPI`]).
pub const TARGET_DISTRIBUTED: f64 = 0.15;

/// One distributed configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    pub group: String,
    pub term: String,
    pub image: ImageSize,
    /// Inputs per job.
    pub sizes: Vec<usize>,
}

/// The `mpi` suite on `processes` processes: MapReduce in the pattern-composition paper's three reductions
/// (one thread per process) over the three image sizes, the divide-and-conquer paper's connected
/// components by hypercube divide and conquer (a power-of-two job only), and the matrix-multiplication paper's
/// matrix multiplication with its three broadcasts (a job of a square number of
/// processes, 4 or more).
pub fn mpi_suite(processes: usize) -> Vec<Case> {
    let mut cases = Vec::new();
    for image in [ImageSize::Small, ImageSize::Medium, ImageSize::Large] {
        let sizes = match image {
            ImageSize::Large => vec![2, 4, 8],
            _ => vec![2, 4, 8, 16],
        };
        for reduction in Reduction::ALL {
            let (reduce, keys, per_key) = match reduction {
                Reduction::Pairwise => ("reduce_pairwise", "x", "768"),
                _ => ("reduce_per_key", "768", "x"),
            };
            cases.push(Case {
                group: format!(
                    "MapReduce over {processes} processes, {} image",
                    image.name()
                ),
                term: format!(
                    "mapreduce(map, {reduce}, nodes={processes}, threads=1, keys={keys}, per_key={per_key}, reduction={})",
                    reduction.name()
                ),
                image,
                sizes: sizes.clone(),
            });
        }
    }
    if processes.is_power_of_two() {
        cases.push(Case {
            group: format!("divide and conquer over {processes} processes"),
            term: format!(
                "dc(cc_divide, cc_combine, cc_leaf, procs={processes}, exchange=ex, size={NODES})"
            ),
            image: ImageSize::default(),
            sizes: (16..=19).map(|e| 1usize << e).collect(),
        });
    }
    let side = (processes as f64).sqrt().round() as usize;
    if side >= 2 && side * side == processes {
        for bcast in ["flat", "binomial", "pipeline, segments=4"] {
            cases.push(Case {
                group: format!("matrix multiplication over {side} × {side} processes"),
                term: format!("matmul({MULTIPLY}, procs={processes}, message=msg, bcast={bcast})"),
                image: ImageSize::default(),
                sizes: matmul_sizes(side),
            });
        }
    }
    cases
}

/// Matrix orders for a matmul on a `side × side` mesh: blocks of order 64 to 256.
pub fn matmul_sizes(side: usize) -> Vec<usize> {
    [64, 128, 192, 256]
        .iter()
        .map(|m| m * side.max(1))
        .collect()
}

/// Everything a distributed validation needs besides the configuration.
pub struct Setup<'a> {
    pub registry: &'a Registry,
    pub sampling: Sampling,
    pub validate: Options,
    pub network: &'a NetworkCalibration,
    /// Where to record a trace of each configuration, if anywhere.
    pub trace: Option<PathBuf>,
}

impl Case {
    /// A folder name for the configuration: the term's letters and digits.
    pub fn slug(&self) -> String {
        let mut s = String::new();
        for c in format!("{} {}", self.term, self.image.name()).chars() {
            if c.is_ascii_alphanumeric() {
                s.push(c);
            } else if !s.ends_with('_') {
                s.push('_');
            }
        }
        s.trim_matches('_').to_string()
    }
}

/// The program's repetitions on rank 0: each one a command to the followers and a run
/// of `jobs` jobs on every process.
struct Leader<'a> {
    job: &'a Job,
    design: &'a Design,
    registry: &'a Registry,
    x: usize,
    jobs: u64,
}

impl Repeated for Leader<'_> {
    fn x(&self) -> usize {
        self.x
    }
    fn batch(&self) -> u64 {
        self.jobs
    }
    fn one(&mut self) -> Result<f64, perfcompose_runtime::Error> {
        crew::lead(
            self.job,
            Command::Run {
                x: self.x as u64,
                jobs: self.jobs,
            },
        );
        Ok(run_once(
            self.job,
            self.design,
            self.registry,
            self.x,
            self.jobs,
        ))
    }
}

/// One repetition on every process: `jobs` jobs of `x` inputs each, started together;
/// rank 0 returns ns per job (the others 0). A process whose run fails ends the job.
fn run_once(job: &Job, design: &Design, registry: &Registry, x: usize, jobs: u64) -> f64 {
    run_jobs(job, design, registry, x, jobs, None)
}

/// [`run_once`], recorded as a trace with computation at `record` flop/s when given
/// (from the moment the processes start together).
fn run_jobs(
    job: &Job,
    design: &Design,
    registry: &Registry,
    x: usize,
    jobs: u64,
    record: Option<f64>,
) -> f64 {
    let inputs = match design.inputs(registry, x, jobs, job) {
        Ok(i) => i,
        Err(e) => job.fail(&e.with_causes()),
    };
    job.barrier();
    if let Some(flops) = record {
        design.record(flops);
    }
    let t0 = mpi::time();
    let out = job.block(design.name(), || design.run(job, inputs));
    let elapsed = mpi::time() - t0;
    match out {
        Ok(Some(results)) if results != jobs as usize => job.fail(&format!(
            "{} gave {results} results for {jobs} jobs",
            design.name(),
        )),
        Ok(_) => elapsed * 1e9 / jobs as f64,
        Err(e) => job.fail(&e.with_causes()),
    }
}

/// The configuration's design, built for `job`: the term parsed, `nodes=`/`procs=`
/// checked against the job's processes, the kernels and the reduction checked. Every
/// process calls this for every configuration before any runs, so that a mistake ends
/// the job with one message instead of leaving processes waiting.
pub fn build_case(
    job: &Job,
    case: &Case,
    registry: &Registry,
    config: &Config,
) -> Result<(Term, Design), Error> {
    Design::build(job, &case.term, case.image, registry, config)
}

/// One recorded run on every process: `jobs` jobs of `x` inputs, each process writing its
/// trace into `dir`; rank 0 returns the run's time in seconds. A process that cannot
/// write its trace ends the job.
fn record_once(
    job: &Job,
    design: &Design,
    x: usize,
    jobs: u64,
    setup: &Setup<'_>,
    dir: &Path,
) -> f64 {
    let ns_per_job = run_jobs(
        job,
        design,
        setup.registry,
        x,
        jobs,
        Some(setup.network.flops_per_s),
    );
    let actions = design.take_recording().unwrap_or_default();
    if let Err(e) = crate::trace::write_rank(dir, "trace", job.rank(), job.size(), &actions) {
        job.fail(&format!(
            "cannot write the trace into {}: {e}",
            dir.display()
        ));
    }
    ns_per_job * jobs as f64 / 1e9
}

/// Validate configuration `case` on `job`: every process calls this; rank 0 gets the
/// row, the others `None`. An error on rank 0 after the followers have started is
/// returned after they have been stopped.
pub fn validate_case(
    job: &Job,
    case: &Case,
    setup: &Setup<'_>,
    progress: &mut dyn FnMut(&str, usize, usize),
) -> Result<Option<Row>, Error> {
    let (term, design) = build_case(job, case, setup.registry, &setup.validate.config)?;
    let registry = setup.registry;
    let trace_dir = setup.trace.as_ref().map(|d| d.join(case.slug()));
    // Collective: every process, before the followers start waiting for commands.
    let here = job.processes_on_this_host();
    if !job.is_root() {
        loop {
            match crew::follow(job) {
                Command::Run { x, jobs } => {
                    run_once(job, &design, registry, x as usize, jobs);
                }
                Command::Record { x, jobs } => {
                    let dir = trace_dir.as_deref().unwrap_or(Path::new("."));
                    record_once(job, &design, x as usize, jobs, setup, dir);
                }
                Command::Stop => return Ok(None),
            }
        }
    }
    let mut result = lead_case(job, case, setup, &design, here, progress);
    if let (Ok(_), Some(dir)) = (&result, &trace_dir) {
        let x = case.sizes.iter().copied().max().unwrap_or(1);
        let jobs = jobs_per_repetition(job, &design, registry, x);
        crew::lead(job, Command::Record { x: x as u64, jobs });
        let seconds = record_once(job, &design, x, jobs, setup, dir);
        let measured = serde_json::json!({
            "configuration": case.term,
            "image": case.image.name(),
            "x": x,
            "jobs": jobs,
            "processes": job.size(),
            "measured_time_s": seconds,
        });
        if let Err(e) = std::fs::write(dir.join("measured.json"), format!("{measured:#}\n")) {
            result = Err(Error::Write {
                path: dir.join("measured.json"),
                source: e,
            });
        }
    }
    crew::lead(job, Command::Stop);
    let measured = result?;
    let row = analyze(case, &term, setup, &design, here, measured)?;
    Ok(Some(row))
}

/// One round of a distributed configuration: the program's sweep and every block's,
/// the program first in even rounds.
struct MpiRound {
    program: Series,
    blocks: Vec<Series>,
    program_first: bool,
}

/// What rank 0 measured for one configuration.
struct Measured {
    rounds: Vec<MpiRound>,
    /// Component name → the block measurement that stands for it, as placed.
    placed: Vec<(String, BlockKey)>,
}

fn lead_case(
    job: &Job,
    case: &Case,
    setup: &Setup<'_>,
    design: &Design,
    here: usize,
    progress: &mut dyn FnMut(&str, usize, usize),
) -> Result<Measured, Error> {
    let placed = design.blocks(setup.registry, setup.validate.cores, case.image, here);
    let mut needs: Vec<BlockKey> = Vec::new();
    for (_, key) in &placed {
        if !needs.contains(key) {
            needs.push(key.clone());
        }
    }
    // The thread runtime's sweeps for its MapReduce kernels (a per-key reduction from 4
    // values up, so that jobs of a few inputs are interpolated, not extrapolated); each
    // other kernel's own.
    let sweeps = perfcompose_runtime::validate::Suite::quick().kernel_sizes;
    let block_sizes: Vec<Vec<usize>> = needs
        .iter()
        .map(|k| match sweeps.get(&k.kernel) {
            Some(s) => Ok(s.clone()),
            None => setup
                .registry
                .get(&k.kernel)
                .map(|kernel| kernel.default_sizes(false)),
        })
        .collect::<Result<_, _>>()
        .map_err(DesignError::from)?;
    let per_round = case.sizes.len() + block_sizes.iter().map(Vec::len).sum::<usize>();
    let total = ROUNDS * per_round;
    let mut done = 0;
    let sampling = half(&setup.sampling);
    let program_sweep = |label: &str,
                         done: &mut usize,
                         progress: &mut dyn FnMut(&str, usize, usize)|
     -> Result<Series, Error> {
        let mut points = Vec::new();
        for &x in &case.sizes {
            progress(&format!("{} {label}, x = {x}", case.term), *done, total);
            let jobs = jobs_per_repetition(job, design, setup.registry, x);
            let mut leader = Leader {
                job,
                design,
                registry: setup.registry,
                x,
                jobs,
            };
            points.push(bench::sample_point(&sampling, &mut leader)?);
            *done += 1;
        }
        Ok(Series::program(case.term.clone(), points))
    };
    let inputs = Inputs::with_image(case.image);
    let block_sweeps = |label: &str,
                        done: &mut usize,
                        progress: &mut dyn FnMut(&str, usize, usize)|
     -> Result<Vec<Series>, Error> {
        // The others sleep while rank 0 times the blocks: they may use every core.
        let every_core = crate::job::EveryCore::new();
        let mut blocks = Vec::new();
        for (key, sizes) in needs.iter().zip(&block_sizes) {
            let mut points = Vec::new();
            for &x in sizes {
                progress(&format!("{key} {label}, x = {x}"), *done, total);
                let mut sampler = KernelSampler::for_block(
                    setup.registry,
                    &key.kernel,
                    x,
                    &inputs,
                    &sampling,
                    setup.validate.memory_limit,
                    key.conditions.clone(),
                )?;
                points.push(bench::sample_point(&sampling, &mut sampler)?);
                *done += 1;
            }
            blocks.push(Series::kernel(key.to_string(), points));
        }
        drop(every_core);
        Ok(blocks)
    };
    let mut rounds = Vec::with_capacity(ROUNDS);
    for r in 0..ROUNDS {
        let label = format!("(round {})", r + 1);
        let program_first = r % 2 == 0;
        let (program, blocks) = if program_first {
            let p = program_sweep(&label, &mut done, progress)?;
            (p, block_sweeps(&label, &mut done, progress)?)
        } else {
            let b = block_sweeps(&label, &mut done, progress)?;
            (program_sweep(&label, &mut done, progress)?, b)
        };
        rounds.push(MpiRound {
            program,
            blocks,
            program_first,
        });
    }
    progress(&case.term, total, total);
    Ok(Measured { rounds, placed })
}

/// Jobs per repetition at size `x`: as many as take [`REPETITION_SECONDS`], from one
/// untimed probe job (which also warms up).
fn jobs_per_repetition(job: &Job, design: &Design, registry: &Registry, x: usize) -> u64 {
    crew::lead(
        job,
        Command::Run {
            x: x as u64,
            jobs: 1,
        },
    );
    let ns = run_once(job, design, registry, x, 1);
    ((REPETITION_SECONDS * 1e9 / ns.max(1.0)).ceil() as u64).clamp(1, 64)
}

/// A distributed configuration's prediction ([`predict`]).
struct Prediction {
    modular: Expr,
    /// The models composed, by block key or network component.
    used: BTreeMap<String, Expr>,
    /// What the composition said.
    notes: Vec<String>,
}

/// The prediction composed from block series `blocks` (one per measurement, named by
/// key) and the calibrated network.
fn predict(
    term: &Term,
    setup: &Setup<'_>,
    design: &Design,
    cap: Option<f64>,
    blocks: &[Series],
    placed: &[(String, BlockKey)],
) -> Result<Prediction, Error> {
    let opts = &setup.validate;
    let mut models = BTreeMap::new();
    for b in blocks {
        let model = match design.basis() {
            Some(basis) => fit_over(b, basis, opts)?,
            None => fit_series(b, opts, &[])?,
        };
        // Processes sharing cores run every block that much slower (the cores cap).
        let model = match cap {
            Some(s) => Expr::mul(Expr::constant(s), model),
            None => model,
        };
        models.insert(b.name.clone(), model);
    }
    let keys = design.keys();
    let mut fitted = Vec::new();
    let mut used = BTreeMap::new();
    for (name, key) in placed {
        let printed = key.to_string();
        let model =
            models
                .get(&printed)
                .cloned()
                .ok_or_else(|| perfcompose_runtime::Error::NoModel {
                    block: printed.clone(),
                })?;
        used.insert(printed, model.clone());
        fitted.push((name.clone(), key.clone(), model));
    }
    let (models, composed_term) = design.components(term, fitted, setup.network, keys)?;
    let mut comps = Components::default();
    for (name, model) in models {
        let at = match placed.iter().find(|(n, _)| *n == name) {
            Some((_, key)) => format!("fitted to `{key}` measured on rank 0"),
            None => {
                used.insert(name.clone(), model.clone());
                format!(
                    "the calibrated network of {} ({})",
                    setup.network.host, setup.network.mpi_library
                )
            }
        };
        comps = comps.with(component(&name, model, at));
    }
    let composed = compose(
        &composed_term,
        &comps,
        ComposeOptions {
            cores: Some(opts.cores as u64),
        },
    )?;
    let notes = composed.notes.iter().map(|n| n.text.clone()).collect();
    Ok(Prediction {
        modular: composed.model,
        used,
        notes,
    })
}

fn analyze(
    case: &Case,
    term: &Term,
    setup: &Setup<'_>,
    design: &Design,
    here: usize,
    measured: Measured,
) -> Result<Row, Error> {
    let opts = &setup.validate;
    let cap = Some(design.cores_cap(here, opts.cores)).filter(|&s| s > 1.0);
    let keys = design.keys();
    // Each round's prediction against its program.
    let mut errors = Vec::with_capacity(measured.rounds.len());
    for round in &measured.rounds {
        let modular = predict(term, setup, design, cap, &round.blocks, &measured.placed)?.modular;
        errors.push(
            round
                .program
                .points
                .iter()
                .map(|p| {
                    let predicted = modular
                        .eval_at(&[(bench::PARAMETER, p.x as f64)])
                        .unwrap_or(f64::NAN);
                    (p.x, predicted, point_stat(p, opts.measure))
                })
                .collect(),
        );
    }
    let pooled: Vec<Series> = (0..measured.rounds.first().map_or(0, |r| r.blocks.len()))
        .map(|k| {
            let parts: Vec<&Series> = measured.rounds.iter().map(|r| &r.blocks[k]).collect();
            pool_series(&parts[0].name, &parts)
        })
        .collect();
    let Prediction {
        modular,
        used,
        notes: composition,
    } = predict(term, setup, design, cap, &pooled, &measured.placed)?;
    let programs: Vec<&Series> = measured.rounds.iter().map(|r| &r.program).collect();
    let program = pool_series(&case.term, &programs);
    let half = |first: bool| {
        let parts: Vec<&Series> = measured
            .rounds
            .iter()
            .filter(|r| r.program_first == first)
            .map(|r| &r.program)
            .collect();
        pool_series(&case.term, &parts)
    };
    let (h0, h1) = (half(true), half(false));
    let monolithic = fit_series(&program, opts, &[])?;
    let (points, time_error) = compare(&program, &modular, opts.measure);
    let x_min = case.sizes.iter().copied().min().unwrap_or(1) as f64;
    let x_max = case.sizes.iter().copied().max().unwrap_or(1) as f64;
    let threads_here = here * design.threads();
    let within_cores = threads_here <= opts.cores;
    let mut notes: Vec<Note> = composition
        .into_iter()
        .map(|text| Note::Composition { text })
        .collect();
    notes.push(Note::Composition {
        text: design.network_note(setup.network, keys),
    });
    if let Some(s) = cap {
        notes.push(Note::Composition {
            text: format!(
                "{here} processes × {} thread(s) share {} cores: every block model is multiplied by {s} (the cores cap; blocks timed with at most one thread per core)",
                design.threads(),
                opts.cores
            ),
        });
    }
    if within_cores {
        notes.push(Note::Composition {
            text: format!(
                "reported only: distributed designs are judged (against ±{:.0}%) once the network model is calibrated for them",
                100.0 * TARGET_DISTRIBUTED
            ),
        });
    } else {
        notes.push(Note::Oversubscribed {
            threads: threads_here,
            cores: opts.cores,
        });
    }
    let mut kernels: Vec<String> = measured.placed.iter().map(|(n, _)| n.clone()).collect();
    kernels.sort();
    Ok(Row {
        group: case.group.clone(),
        configuration: case.term.clone(),
        kernels,
        threads: here.max(1) * design.threads(),
        within_cores,
        coefficient_error: coefficient_error(&modular, &monolithic, x_min, x_max),
        modular,
        monolithic,
        time_error,
        overhead_ns: 0.0,
        target: None,
        notes,
        coverage: Coverage::default(),
        points,
        components: used,
        fit_floor: None,
        error_from_measured_blocks: None,
        repeat_error: repeat_error(&h0, &h1, opts.measure),
        host: None,
        rounds: Some(Rounds::of(&errors, None)),
    })
}

/// A block's model over a known basis (`1, x`: the divide-and-conquer paper's form of a block cost), fitted
/// to the statistic validate compares on.
fn fit_over(series: &Series, basis: &str, opts: &Options) -> Result<Expr, Error> {
    let points: Vec<Point> = series
        .points
        .iter()
        .map(|p| Point::new(vec![p.x as f64], p.values.clone()))
        .collect();
    let basis = parse_basis(basis)?;
    let fit = fit_basis(
        &[bench::PARAMETER.to_string()],
        &points,
        &basis,
        &FitOptions {
            measure: Some(opts.measure),
            allow_negative: false,
            breaks: Vec::new(),
        },
    )
    .map_err(|source| perfcompose_runtime::Error::Fit {
        series: series.name.clone(),
        source,
    })?;
    Ok(fit.model)
}

/// A component fitted or built on this machine.
fn component(name: &str, model: Expr, at: String) -> Component {
    let text = model.to_string();
    Component::exact(name, model, ComponentSource::Model { text, at })
}
