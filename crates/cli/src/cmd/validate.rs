//! `perfcompose validate`: measure blocks, fit, compose, run the whole design, fit it and
//! compare (seed 000 §4). Glue over `perfcompose_runtime::validate`: flags to options,
//! paths to the archive, the report to a table.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::bail;
use comfy_table::{presets::UTF8_FULL_CONDENSED, Table};
use perfcompose_core::fit::Measure;
use perfcompose_runtime::data::ImageSize;
use perfcompose_runtime::host::{neighbour, states};
use perfcompose_runtime::plan::parse_plan;
use perfcompose_runtime::validate::{self, Archive, Options, Report, SavedRun, Suite, Verdict};

use super::runtime_args::{
    bar, check_sizes, progress, quiet_caught_panics, registry, Image, RuntimeArgs,
};

/// Flags of `perfcompose validate`.
#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:
  perfcompose validate                       the quick suite (about two minutes)
  perfcompose validate --suite paper --save results/
  perfcompose validate --suite mine.toml     a suite of your own (docs/validation.md)
  perfcompose validate --term 'pipe(tpool(2, qsort), inc)' --sizes 16384,65536,131072
  perfcompose validate --suite paper --only 'pipe(inc, inc)'
  perfcompose validate --from results/ --measure median
  mpirun -np 2 perfcompose validate --suite mpi          distributed designs (a build with --features mpi)
  mpirun -np 2 perfcompose validate --term 'mapreduce(map, reduce_per_key, nodes=2, threads=1, keys=768, per_key=x, reduction=global)'")]
pub struct Args {
    /// Which configurations: `quick` (CI-sized), `paper` (the seed's tables over its
    /// range of x), `mpi` (distributed MapReduce, under mpirun), or a suite file
    /// (`FILE.toml`).
    #[arg(long, default_value = "quick", value_name = "quick|paper|mpi|FILE")]
    pub suite: String,
    /// Validate one design written with the registered kernels instead of a suite.
    #[arg(long, value_name = "TERM", conflicts_with_all = ["from", "only"])]
    pub term: Option<String>,
    /// Sizes of the sweep for --term, comma separated.
    #[arg(long, value_delimiter = ',', value_name = "X,...", requires = "term")]
    pub sizes: Option<Vec<usize>>,
    /// The picture a MapReduce given with --term runs on.
    #[arg(long, value_enum, default_value_t, requires = "term")]
    pub image: Image,
    /// Only these configurations of the suite (repeatable; spacing aside): re-run the
    /// rows that missed without the whole suite.
    #[arg(long, value_name = "TERM")]
    pub only: Vec<String>,
    /// Save every measurement and the report into DIR as the run goes (a run stopped
    /// part way keeps its finished rows).
    #[arg(long, value_name = "DIR")]
    pub save: Option<PathBuf>,
    /// Run nothing: validate a run saved with --save again (its suite, or --only some of
    /// it), e.g. under another statistic, modeler or calibration.
    #[arg(long, value_name = "DIR", conflicts_with = "save")]
    pub from: Option<PathBuf>,
    /// Print the report as JSON (schema in docs/validation.md).
    #[arg(long)]
    pub json: bool,
    /// Statistic of the repetitions that blocks and programs are fitted and compared on
    /// (other work on a machine only slows repetitions down: the minimum is the default;
    /// the seed used the median).
    #[arg(long, value_enum, default_value_t)]
    pub measure: Statistic,
    /// Modeler for the blocks and the whole programs (`perfcompose fit --list-modelers`).
    #[arg(long, default_value = validate::VALIDATE_MODELER)]
    pub modeler: String,
    /// Cores the prediction may use (default: what the OS grants this process; with
    /// --from, the saved run's).
    #[arg(long, value_name = "N")]
    pub cores: Option<usize>,
    /// Overhead calibration file (default: the one `perfcompose calibrate overhead`
    /// stored for this machine; with --from, the saved run's).
    #[arg(long, value_name = "FILE")]
    pub calibration: Option<PathBuf>,
    /// Compose without the calibrated pattern overhead.
    #[arg(long, conflicts_with = "calibration")]
    pub no_overhead: bool,
    /// Network calibration a distributed run composes with (default: the one
    /// `mpirun -np 2 perfcompose calibrate network` stored for this machine).
    #[arg(long, value_name = "FILE")]
    pub network: Option<PathBuf>,
    /// Record one run of each distributed configuration (at its largest size) as SimGrid
    /// time-independent traces into DIR/CONFIGURATION/, for `perfcompose simulate` and
    /// `smpirun -replay`.
    #[arg(long, value_name = "DIR")]
    pub trace: Option<PathBuf>,
    /// A distributed run ends with status 2 when it runs longer than this, so that a
    /// lost message cannot hang it.
    #[arg(long, value_name = "SECONDS", default_value_t = 3600.0)]
    pub time_limit: f64,
    #[command(flatten)]
    pub runtime: RuntimeArgs,
}

/// Whether the run is distributed: the `mpi` suite, or a term with a MapReduce on more
/// than one node or a divide and conquer (which runs on processes only).
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
/// divide and conquer (the one construct the thread runtime lowers to
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

/// Statistic of the repetitions.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Statistic {
    #[default]
    Minimum,
    Median,
    Mean,
}

impl From<Statistic> for Measure {
    fn from(s: Statistic) -> Measure {
        match s {
            Statistic::Minimum => Measure::Minimum,
            Statistic::Median => Measure::Median,
            Statistic::Mean => Measure::Mean,
        }
    }
}

/// The suite `--suite` and `--term` ask for.
fn suite_of(args: &Args) -> anyhow::Result<Suite> {
    if let Some(term) = &args.term {
        let (_, plan) = parse_plan("<term>", term)?;
        let sizes = match &args.sizes {
            Some(s) => {
                check_sizes(s)?;
                s.clone()
            }
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
    let registry = registry();
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
    if args.cores == Some(0) {
        bail!("--cores must be at least 1");
    }
    if distributed(&args) {
        return validate_distributed(&args, &registry);
    }
    if args.trace.is_some() {
        bail!("--trace records distributed runs (a mapreduce over nodes > 1, or --suite mpi, under mpirun)");
    }
    let saved = args.from.as_deref().map(SavedRun::open).transpose()?;
    let suite = match &saved {
        Some(run) => run.suite()?,
        None => suite_of(&args)?,
    };
    let suite = if args.only.is_empty() {
        suite
    } else {
        validate::select(suite, &args.only)?
    };
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
    };
    if let Some(run) = &saved {
        let again = validate::reanalyze(&suite, run, &registry, &opts)?;
        if !again.missing.is_empty() {
            eprintln!(
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
        Some(dir) => Some(Archive::create(dir, &suite, opts.overhead.as_ref(), &opts)?),
        None => None,
    };
    let report = validate::run_suite(&suite, &registry, &opts, &mut progress(&bar), archive)?;
    bar.finish_and_clear();
    if let Some(dir) = &args.save {
        eprintln!("wrote measurements and report to {}", dir.display());
    }
    print(&args, &report)
}

#[cfg(feature = "mpi")]
fn validate_distributed(
    args: &Args,
    registry: &perfcompose_runtime::Registry,
) -> anyhow::Result<()> {
    super::distributed::validate(args, registry)
}

#[cfg(not(feature = "mpi"))]
fn validate_distributed(_: &Args, _: &perfcompose_runtime::Registry) -> anyhow::Result<()> {
    bail!("distributed designs (mapreduce over nodes > 1, dc, --suite mpi) run on MPI processes: build perfcompose with `cargo build --release --features mpi` (after `bash scripts/install-mpi`) and start it as `mpirun -np 2 perfcompose validate ...`")
}

/// A calibration measured with the workers placed otherwise than this run's.
fn warn_if_calibrated_otherwise(opts: &Options) {
    let Some(c) = &opts.overhead else {
        return;
    };
    let calibrated = c.pinned;
    if calibrated != opts.config.pin {
        let how = |pinned: bool| if pinned { "pinned" } else { "not pinned" };
        eprintln!(
            "warning: the overhead calibration was measured with the workers {}, this run has them {}: \
             recalibrate with `perfcompose calibrate overhead{}`",
            how(calibrated),
            how(opts.config.pin),
            if opts.config.pin { "" } else { " --no-pin" }
        );
    }
}

pub fn print(args: &Args, report: &Report) -> anyhow::Result<()> {
    let mut out = crate::report::stdout();
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&report.to_json())?)?;
    } else {
        print_report(&mut out, report)?;
    }
    Ok(())
}

fn pct(v: f64) -> String {
    if v.is_finite() {
        format!("{:.1}%", 100.0 * v)
    } else {
        "n/a".into()
    }
}

fn print_report(out: &mut impl Write, report: &Report) -> io::Result<()> {
    let mut blocks = Table::new();
    blocks.load_preset(UTF8_FULL_CONDENSED);
    blocks.set_header(vec![
        "block",
        "fitted model [ns], all its measurements (each configuration uses its own)",
    ]);
    for (k, m) in &report.components {
        blocks.add_row(vec![k.clone(), m.rounded(4)]);
    }
    writeln!(out, "{blocks}")?;

    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    t.set_header(vec![
        "configuration",
        "threads",
        "modular model [ns]",
        "monolithic model [ns]",
        "coef. error",
        "time error",
        "program vs itself",
        "verdict",
    ]);
    let mut notes = Vec::new();
    for (i, r) in report.rows.iter().enumerate() {
        let target = r
            .target
            .map_or(String::new(), |t| format!("{:.0}%", 100.0 * t));
        let verdict = match r.verdict() {
            Verdict::Within => format!("ok (≤ {target})"),
            Verdict::MissWithinRepeat => {
                format!("MISS (> {target}), within its own variation [{}]", i + 1)
            }
            Verdict::Miss => format!("MISS (> {target}) [{}]", i + 1),
            Verdict::ReportedOnly => format!("reported only [{}]", i + 1),
        };
        if !r.notes.is_empty() {
            let text: Vec<String> = r.notes.iter().map(ToString::to_string).collect();
            notes.push(format!(
                "[{}] {}: {}",
                i + 1,
                r.configuration,
                text.join("; ")
            ));
        }
        t.add_row(vec![
            r.configuration.clone(),
            format!(
                "{}{}",
                r.threads,
                if r.within_cores { "" } else { " > cores" }
            ),
            r.modular.rounded(4),
            r.monolithic.rounded(4),
            pct(r.coefficient_error),
            pct(r.time_error),
            r.repeat_error.map_or_else(|| "–".into(), pct),
            verdict,
        ]);
    }
    writeln!(out, "{t}")?;
    for n in notes {
        writeln!(out, "{n}")?;
    }
    let s = report.summary();
    writeln!(
        out,
        "{} of {} configurations within target ({} of the misses within the program's own variation), median time error {}; {} reported only (more threads than {} cores); target: median ≤ {:.0}% and ≥ {:.0}% within: {}",
        s.within_target,
        s.judged,
        s.misses_within_repeat,
        s.median_error.map_or_else(|| "n/a".into(), pct),
        report.rows.len() - s.judged,
        report.cores,
        100.0 * s.rule.median_error,
        100.0 * s.rule.share_within,
        if s.meets_target { "met" } else { "NOT met" },
    )?;
    writeln!(
        out,
        "statistic: the {}; pattern overhead {}",
        report.measure,
        if report.overhead_calibrated {
            "included (calibrated)"
        } else {
            "not included (`perfcompose calibrate overhead` measures it)"
        }
    )?;
    print_host(out, report)?;
    if let Some((before, after)) = report.load {
        writeln!(
            out,
            "load average {before:.1} before, {after:.1} after the run (which counts the run's own threads) on {} cores{}",
            report.cores,
            if before > report.cores as f64 * 0.75 {
                ": other work was running when the run started, so whole-program times may be inflated; validate on a quiet machine"
            } else {
                ""
            }
        )?;
    }
    Ok(())
}

/// What the host check around the designs read.
fn print_host(out: &mut impl Write, report: &Report) -> io::Result<()> {
    let hosts: Vec<(&str, &validate::HostAtRow)> = report
        .rows
        .iter()
        .filter_map(|r| Some((r.configuration.as_str(), r.host.as_ref()?)))
        .collect();
    if hosts.is_empty() {
        return Ok(());
    }
    let moved = hosts.iter().filter(|(_, h)| h.speed_moved()).count();
    let worst = hosts
        .iter()
        .map(|&(c, h)| (c, h.speed_change()))
        .max_by(|a, b| a.1.ln().abs().total_cmp(&b.1.ln().abs()));
    writeln!(
        out,
        "host speed, the check's blocks alone right after each of the {} designs within the cores over right before it: {moved} moved by more than {:.2}x either way{}",
        hosts.len(),
        neighbour::SPEED_TOLERANCE,
        worst.map_or(String::new(), |(c, r)| format!(", the most {r:.2}x ({c})")),
    )?;
    if let Some([before, after]) = &report.host_check {
        writeln!(
            out,
            "host check, a busy core next to the one timing a block (median of {} rounds): before the first design of two threads {}; after the last {}",
            before.rounds,
            before.describe(),
            after.describe(),
        )?;
    }
    let mut shares: Vec<f64> = hosts
        .iter()
        .filter_map(|(_, h)| h.state_shares())
        .flat_map(|[b, a]| [b.every, a.every])
        .collect();
    if !shares.is_empty() {
        shares.sort_by(f64::total_cmp);
        writeln!(
            out,
            "cores' speed states (`{}` x={} on every core at once at each end of the designs within the cores): every core in its fast state at once in {:.0}% of the windows (median; {:.0}% to {:.0}%), fast being within {:.2}x of the fastest window of any core in this run",
            states::KERNEL,
            states::X,
            shares[shares.len() / 2] * 100.0,
            shares[0] * 100.0,
            shares[shares.len() - 1] * 100.0,
            states::FAST,
        )?;
    }
    Ok(())
}
