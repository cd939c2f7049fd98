//! `perfcompose validate`: measure blocks, fit, compose, run the whole design, fit it and
//! compare (the pattern-composition paper, §4). Glue over `perfcompose_runtime::validate`: flags to options,
//! paths to the archive, the report to a table.

use std::path::Path;

use anyhow::bail;
use perfcompose_runtime::data::ImageSize;
use perfcompose_runtime::plan::parse_plan;
use perfcompose_runtime::validate::{self, Archive, Options, SavedRun, Suite};

use crate::cmd::runtime_args::{bar, progress, quiet_caught_panics, registry};

mod args;
#[cfg(feature = "mpi")]
mod mpi;
mod print;
mod program;

pub use args::Args;
use print::print;

/// Whether the run is distributed: the `mpi` suite, or a term with a MapReduce on more
/// than one node, a divide and conquer or a matrix multiplication (which run on
/// processes only).
fn distributed(args: &Args) -> bool {
    if args.from.is_some() {
        return false;
    }
    match &args.term {
        Some(t) => parse_plan("<term>", t).is_ok_and(|(_, p)| processes(&p) > 1),
        None => args.suite == "mpi",
    }
}

/// How many processes the plan needs: the largest node count of its MapReduces; a
/// divide and conquer or a matmul (the constructs the thread runtime lowers to
/// [`Plan::Unsupported`](perfcompose_runtime::Plan::Unsupported)) counts as several.
fn processes(plan: &perfcompose_runtime::Plan) -> usize {
    use perfcompose_runtime::Plan;
    match plan {
        Plan::MapReduce { nodes, .. } => *nodes,
        Plan::Seq(ps) | Plan::Pipe(ps) => ps.iter().map(processes).max().unwrap_or(1),
        Plan::TPool(_, t) => processes(t),
        Plan::Kernel(_) => 1,
        Plan::Unsupported { .. } => 2,
    }
}

/// The checks of flags that clap cannot make alone.
fn check_flags(args: &Args) -> anyhow::Result<()> {
    if perfcompose_core::fit::modeler(&args.modeler).is_none() {
        bail!(
            "unknown modeler `{}` (available: {})",
            args.modeler,
            perfcompose_core::fit::modelers()
                .iter()
                .map(|m| m.name())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    if args
        .max_rounds
        .is_some_and(|n| n < validate::verdict::MIN_ROUNDS)
    {
        bail!(
            "--max-rounds must be at least {} (the fewest rounds whose interval is a 95% one)",
            validate::verdict::MIN_ROUNDS
        );
    }
    if !(args.level > 0.0 && args.level < 1.0) {
        bail!(
            "--level {}: give a probability between 0 and 1, e.g. 0.95",
            args.level
        );
    }
    Ok(())
}

/// `budget` with the limits --max-rounds and --max-seconds set.
pub(crate) fn budget(args: &Args, budget: validate::Budget) -> validate::Budget {
    validate::Budget {
        rounds: args.max_rounds.unwrap_or(budget.rounds),
        seconds: args.max_seconds.map_or(budget.seconds, |d| d.as_secs_f64()),
    }
}

/// The suite `--suite` and `--term` ask for.
fn suite_of(args: &Args) -> anyhow::Result<Suite> {
    if let Some(term) = &args.term {
        let (_, plan) = parse_plan("<term>", term)?;
        let sizes = match &args.term_sizes()? {
            Some(s) => s.checked(true)?,
            None if plan.has_mapreduce() => vec![8, 16, 32, 64],
            None => vec![4096, 16384, 32768, 65536, 131072],
        };
        return Ok(Suite::of_term(term, sizes, ImageSize::from(args.image)));
    }
    if let Some(s) = Suite::builtin(&args.suite) {
        return Ok(s);
    }
    let path = Path::new(&args.suite);
    if path.extension().is_some_and(|e| e == "toml") || path.is_file() {
        return Ok(Suite::load(path)?);
    }
    bail!(
        "unknown suite `{}` (expected quick, paper or a suite file ending in .toml)",
        args.suite
    )
}

pub fn run(args: Args) -> anyhow::Result<()> {
    quiet_caught_panics();
    perfcompose_runtime::bench::keep_freed_memory();
    // Under `mpirun` every process checks the same flags: rank 0 alone reports them.
    check_flags(&args).map_err(|e| {
        if distributed(&args) {
            crate::report::once_per_job(e)
        } else {
            e
        }
    })?;
    if !args.command.is_empty() {
        return program::run(&args);
    }
    let registry = registry();
    if distributed(&args) {
        return validate_distributed(&args, &registry);
    }
    if !args.at.is_empty() && args.term.is_none() {
        bail!("--at gives the sizes of --term's design, or of your program after --; a suite has its own");
    }
    if args.trace.is_some() {
        bail!("--trace records distributed runs (a mapreduce over nodes > 1, or --suite mpi, under mpirun)");
    }
    let saved = args.from.as_deref().map(SavedRun::open).transpose()?;
    if let Some(run) = saved.as_ref().filter(|r| r.manifest.program.is_some()) {
        return program::from_saved(&args, run);
    }
    let suite = match &saved {
        Some(run) => run.suite()?,
        None => suite_of(&args)?,
    };
    let mut suite = if args.only.is_empty() {
        suite
    } else {
        validate::select(suite, &args.only)?
    };
    suite.budget = budget(&args, suite.budget);
    let overhead = if args.no_overhead {
        None
    } else {
        match (&args.calibration, &saved) {
            (None, Some(run)) => run.calibration()?,
            (explicit, _) => super::input::calibration(explicit.as_deref())?.map(|(c, _)| c),
        }
    };
    let config = args.runtime.config();
    let opts = Options {
        cores: args
            .cores
            .or(saved.as_ref().map(|r| r.manifest.cores))
            .unwrap_or_else(perfcompose_runtime::host::available_cores),
        overhead,
        config,
        memory_limit: args.runtime.memory_limit()?,
        measure: args.measure.into(),
        modeler: args.modeler.clone(),
        caches: match &saved {
            Some(run) => run.manifest.caches_bytes.clone(),
            None => perfcompose_runtime::host::cache_sizes(),
        },
        level: args.level,
    };
    if let Some(run) = &saved {
        let again = validate::reanalyze(&suite, run, &registry, &opts)?;
        if !again.missing.is_empty() {
            perfcompose_core::stderr_line!(
                "{} has no measurements of {} of the suite's configurations (skipped): {}",
                run.dir.display(),
                again.missing.len(),
                again.missing.join("; ")
            );
        }
        return print(&args, &again.report);
    }
    warn_if_calibrated_otherwise(&opts);
    let bar = bar(validate::steps(&suite) as u64, args.json);
    let archive = match &args.save {
        Some(dir) => {
            let archive = Archive::create(dir, &suite, opts.overhead.as_ref(), &opts)?;
            crate::version::record(dir)?;
            Some(archive)
        }
        None => None,
    };
    let report = validate::run_suite(&suite, &registry, &opts, &mut progress(&bar), archive)?;
    bar.finish_and_clear();
    if let Some(dir) = &args.save {
        perfcompose_core::stderr_line!("wrote measurements and report to {}", dir.display());
    }
    print(&args, &report)
}

#[cfg(feature = "mpi")]
fn validate_distributed(
    args: &Args,
    registry: &perfcompose_runtime::Registry,
) -> anyhow::Result<()> {
    mpi::validate(args, registry)
}

#[cfg(not(feature = "mpi"))]
fn validate_distributed(_: &Args, _: &perfcompose_runtime::Registry) -> anyhow::Result<()> {
    Err(crate::report::once_per_job(anyhow::anyhow!("distributed designs (mapreduce over nodes > 1, dc, matmul, --suite mpi) run on MPI processes: build perfcompose with `cargo build --release --features mpi` (after `bash scripts/install-mpi`) and start it as `mpirun -np 2 perfcompose validate ...`")))
}

/// A calibration measured with the workers placed otherwise than this run's.
fn warn_if_calibrated_otherwise(opts: &Options) {
    let Some(c) = &opts.overhead else {
        return;
    };
    let calibrated = c.pinned;
    if calibrated != opts.config.pin {
        let how = |pinned: bool| if pinned { "pinned" } else { "not pinned" };
        perfcompose_core::stderr_line!(
            "warning: the overhead calibration was measured with the workers {}, this run has them {}: \
             recalibrate with `perfcompose calibrate overhead{}`",
            how(calibrated),
            how(opts.config.pin),
            if opts.config.pin { "" } else { " --no-pin" }
        );
    }
}
