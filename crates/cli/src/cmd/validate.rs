//! `perfcompose validate`: measure blocks, fit, compose, run the whole design, fit it and
//! compare (seed 000 §4). Glue over `perfcompose_runtime::validate`.

use std::io::{self, Write};
use std::path::PathBuf;

use anyhow::{bail, Context};
use comfy_table::{presets::UTF8_FULL_CONDENSED, Table};
use perfcompose_core::fit::Measure;
use perfcompose_runtime::bench::Sampling;
use perfcompose_runtime::overhead;
use perfcompose_runtime::validate::{self, Options, Report, Suite};
use perfcompose_runtime::Plan;

use super::bench::{bar, check_sizes, config_of, inputs_of, memory_limit, progress};

/// Flags of `perfcompose validate`.
#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:
  perfcompose validate                       the quick suite (under 2 minutes)
  perfcompose validate --suite paper --save results/
  perfcompose validate --term 'pipe(tpool(2, qsort), inc)' --sizes 16384,65536,131072
  perfcompose validate --json
  perfcompose validate --suite paper --from results/ --modeler perfcompose
  perfcompose validate --suite paper --only 'pipe(inc, inc)' --protocol sandwich
  perfcompose validate --suite paper --only 'tpool(2, qsort)' --protocol rounds")]
pub struct Args {
    /// Which configurations: `quick` (CI-sized) or `paper` (the seed's tables, full grids).
    #[arg(long, default_value = "quick", value_parser = ["quick", "paper", "tiny", "tiny-stops"], hide_possible_values = true)]
    pub suite: String,
    /// Validate one design written with the registered kernels instead of a suite.
    #[arg(long, value_name = "TERM")]
    pub term: Option<String>,
    /// Only these configurations of the suite (repeatable; a term as the suite writes
    /// it, spacing aside): re-run the rows that missed without the whole suite.
    #[arg(long, value_name = "TERM", conflicts_with = "term")]
    pub only: Vec<String>,
    /// Sizes of the sweep for --term, comma separated.
    #[arg(long, value_delimiter = ',', value_name = "X,...", requires = "term")]
    pub sizes: Option<Vec<usize>>,
    /// Image resolution for --term with MapReduce: small, medium, large.
    #[arg(long, default_value = "small")]
    pub image: String,
    /// Print the report as JSON (schema in docs/validation.md).
    #[arg(long)]
    pub json: bool,
    /// Cores the prediction may use (default: what the OS grants this process).
    #[arg(long, value_name = "N")]
    pub cores: Option<usize>,
    /// Do not add the calibrated pattern overhead to the modular models.
    #[arg(long)]
    pub no_overhead: bool,
    /// Overhead calibration file (default: the one `perfcompose calibrate overhead` stored).
    #[arg(long, value_name = "FILE")]
    pub calibration: Option<PathBuf>,
    /// Write every measurement (blocks.txt, programs.txt in Extra-P text), the overhead
    /// calibration used (overhead-calibration.json) and the report (report.json) into DIR.
    #[arg(long, value_name = "DIR")]
    pub save: Option<PathBuf>,
    /// Run nothing: validate the suite again from the measurements a `--save DIR` run
    /// wrote (DIR/blocks*.txt, DIR/programs*.txt), fitted with --modeler, with DIR's
    /// overhead-calibration.json unless --calibration or --no-overhead says otherwise.
    /// Compares modelers or calibrations on identical data.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["pin", "no_pin", "capacity", "spin_us", "memory_limit"])]
    pub from: Option<PathBuf>,
    /// Modeler used for both the blocks and the whole programs: `segmented` (the default
    /// here) breaks a block's model where its input outgrows a cache and the
    /// measurements step up there; `perfcompose` is one model per block.
    #[arg(long, default_value = perfcompose_runtime::validate::VALIDATE_MODELER)]
    pub modeler: String,
    /// Statistic of the repetitions that blocks and programs are fitted and compared on:
    /// auto (the default): the minimum (other work on the machine only slows
    /// repetitions down), unless the cores' speed states sampled at the ends of the
    /// designs (the host check) read each core fast in under half of the windows, when
    /// every row is validated again under the mean once the suite has ended (with
    /// --from, from DIR/report.json's samples; a run saved without them keeps the
    /// minimum; docs/validation.md, "Which statistic on a two-state host"); or one of
    /// minimum, median (the seed's), mean, maximum
    #[arg(long, default_value = "auto")]
    pub measure: String,
    /// Time every block alone, as seed 000 does: no sibling threads for the workers of a
    /// task pool or a MapReduce, no neighbouring stages for a pipeline's stages (inputs
    /// stay where the design leaves them). Shows what those loads change.
    #[arg(long)]
    pub unloaded: bool,
    /// Let the OS place the worker threads instead of pinning each to a core of its own
    /// (pinning is the default: unpinned, Linux at times kept both stages of a pipeline on
    /// one of two cores, which then took the sum of its stages per element; docs/runtime.md,
    /// "Where the threads run"). A design with more worker threads than cores is never
    /// pinned.
    #[arg(long, conflicts_with = "pin")]
    pub no_pin: bool,
    /// Pin worker threads to cores (the default; accepted for scripts that say so).
    #[arg(long, hide = true)]
    pub pin: bool,
    /// Capacity of the queues between stages.
    #[arg(long, value_name = "N")]
    pub capacity: Option<usize>,
    /// How long a pinned worker checks an empty (or full) queue before it sleeps on it,
    /// µs (default 1,000; 0 sleeps at once, so every element handed to a waiting stage
    /// costs a futex wake). Unpinned workers never spin.
    #[arg(long, value_name = "US")]
    pub spin_us: Option<u64>,
    /// Memory the inputs may take, in MiB (default: half of the available memory).
    #[arg(long, value_name = "MIB")]
    pub memory_limit: Option<u64>,
    /// When the blocks are measured: `interleaved` (per configuration and size, the
    /// program and its blocks in turn, so that a drift of the machine moves both),
    /// `sandwich` (the program before and after its blocks: reports how well the
    /// machine reproduces the program, `repeat_error`), `rounds` (the program and its
    /// blocks in shuffled rounds of a few repetitions each, until all meet the target:
    /// randomised multiple interleaved trials; `repeat_error` compares the first and
    /// second half of the rounds) or `separate` (every block once, before all programs).
    #[arg(long, default_value = "interleaved", value_name = "PROTOCOL")]
    pub protocol: String,
    /// Do not measure again the points that stand out from their neighbouring sizes (by
    /// default up to a quarter of a sweep's points off their neighbours by more than half
    /// the row's target — the whole target in the quick suite — are measured a second
    /// time: a program point with its blocks, then a block point (with its program, see
    /// `--block-revisit`) if its share of the blocks there could move the prediction by
    /// that much; the faster visit is kept
    /// under the minimum, the one closer to the neighbours otherwise, and each is noted
    /// in its row).
    #[arg(long)]
    pub no_revisit: bool,
    /// What a block point that stands out is measured again with: `visit` (the
    /// program and every block at that size again, as the protocol measures them
    /// together; under the minimum each keeps its faster visit) or `alone` (the block
    /// alone; under the minimum that can lower the block while its program keeps its
    /// one visit)
    #[arg(long, default_value = "visit", value_name = "WHAT")]
    pub block_revisit: String,
    /// Do not check, right before and right after each design within the cores, how
    /// fast the host runs `inc` and `qsort` alone and, for two threads or more, how much
    /// a busy core slows them on another (under a second each), and how often each core
    /// and every core at once runs `inc` in its fast state (a second; docs/validation.md,
    /// "The cores' speed states"). By default a row that misses says whether the host's
    /// speed moved by more than 1.10x across it, whether a neighbour's slowdown exceeded
    /// 1.10x at either end and what the speed states read, and rows.jsonl and --json
    /// give them
    #[arg(long, conflicts_with = "wait_quiet")]
    pub no_host_check: bool,
    /// Before measuring each design, while the host check reads the blocks alone more
    /// than 1.10x slower than their median over the suite's checks so far or, for two
    /// threads or more, a busy core slowing a block on the other by more than 1.10x,
    /// wait up to SECS, checking again every 15 s; the row notes any wait.
    /// Default 0: measure at once
    #[arg(long, value_name = "SECS", default_value_t = 0)]
    pub wait_quiet: u64,
    /// Compose each pipeline of single blocks with the plain larger of its stages' times,
    /// leaving out what it loses to its stages' slow and fast phases (by default added
    /// from the spread of the stages' unit tests over windows of 64 calls, saved in
    /// DIR/phases.json with --save; see docs/validation.md, "The stochastic max")
    #[arg(long)]
    pub no_phases: bool,
    /// Time each block that is timed alone on a thread pinned to the first core, where a
    /// pinned program of one thread runs its worker, instead of on the calling thread
    /// (found on the other core). Off by default until a run on a host whose cores
    /// switch speeds on their own shows it (docs/validation.md, "Lone unit tests on the
    /// program's core")
    #[arg(long, conflicts_with = "from")]
    pub pin_lone_tests: bool,
    /// Sizes of the machine's data caches, one per level, comma-separated: `48K,2M,260M`
    /// (K, M, G: binary multiples). The segmented modeler breaks a block's model only
    /// where its input outgrows one within its sweep; `none`: wherever the data says
    /// (docs/fitting.md). Default: this machine's (Linux sysfs); with --from, the saved
    /// run's DIR/machine.json where it has one.
    #[arg(long, value_delimiter = ',', value_name = "SIZE,...")]
    pub caches: Vec<String>,
}

/// A cache size: bytes, or a number with K, M or G (binary multiples, `KiB` and `KB`
/// read the same).
fn parse_size(s: &str) -> anyhow::Result<u64> {
    let t = s.trim();
    let upper = t.to_ascii_uppercase();
    let digits = upper.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let unit = &upper[digits.len()..];
    let mult: u64 = match unit {
        "" | "B" => 1,
        "K" | "KB" | "KIB" => 1 << 10,
        "M" | "MB" | "MIB" => 1 << 20,
        "G" | "GB" | "GIB" => 1 << 30,
        _ => bail!("--caches: `{t}` is not a size (a number, then K, M or G)"),
    };
    let n: u64 = digits
        .trim()
        .parse()
        .map_err(|_| anyhow::anyhow!("--caches: `{t}` is not a size (a number, then K, M or G)"))?;
    match n.checked_mul(mult) {
        Some(b) if b > 0 => Ok(b),
        _ => bail!("--caches: `{t}` is not a size of a cache (positive, under 16 EiB)"),
    }
}

/// The file a `--save DIR` run describes its machine in (what `--from DIR` needs of it).
const MACHINE_FILE: &str = "machine.json";

/// The caches of a saved run's machine (DIR/machine.json), if it says.
fn saved_caches(dir: &std::path::Path) -> anyhow::Result<Option<Vec<u64>>> {
    #[derive(serde::Deserialize)]
    struct Machine {
        caches_bytes: Vec<u64>,
    }
    let m: Option<Machine> =
        read_saved_json(&dir.join(MACHINE_FILE), "{\"caches_bytes\": [bytes, ...]}")?;
    Ok(m.map(|m| m.caches_bytes))
}

/// A JSON file a `--save DIR` run wrote, or `None` when there is none; malformed, an
/// error naming the file, line and column and what it should hold (`expected`).
fn read_saved_json<T: serde::de::DeserializeOwned>(
    p: &std::path::Path,
    expected: &str,
) -> anyhow::Result<Option<T>> {
    let text = match std::fs::read_to_string(p) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(anyhow::Error::from(e).context(format!("cannot read {}", p.display())))
        }
    };
    serde_json::from_str(&text).map(Some).map_err(|e| {
        anyhow::anyhow!(
            "{}:{}:{}: {} (expected {expected})",
            p.display(),
            e.line(),
            e.column(),
            e
        )
    })
}

fn write_machine(dir: &std::path::Path, caches: &[u64]) -> anyhow::Result<()> {
    let p = dir.join(MACHINE_FILE);
    let text = serde_json::to_string_pretty(&serde_json::json!({ "caches_bytes": caches }))?;
    std::fs::write(&p, text + "\n").with_context(|| format!("cannot write {}", p.display()))
}

/// A term as the runtime's plan (errors are located diagnostics, rendered with a caret).
pub fn plan_of(term: &str) -> anyhow::Result<Plan> {
    let (_, plan) = validate::parse_plan("<term>", term)?;
    Ok(plan)
}

/// A few-second suite for tests of the plumbing (hidden `--suite tiny`).
fn tiny_suite() -> Suite {
    let sizes = vec![1024, 2048, 4096, 8192];
    let mut s = validate::term_suite(
        "seq(inc, nop)",
        sizes.clone(),
        Default::default(),
        tiny_sampling(),
    );
    s.name = "tiny".into();
    for term in ["tpool(2, inc)", "pipe(inc, nop)"] {
        let mut more =
            validate::term_suite(term, sizes.clone(), Default::default(), tiny_sampling());
        s.cases.append(&mut more.cases);
    }
    let mut mr = validate::term_suite(
        "mapreduce(map, reduce_per_key, nodes=1, threads=2, keys=768, per_key=x)",
        vec![2, 4, 6, 8],
        Default::default(),
        tiny_sampling(),
    );
    s.cases.append(&mut mr.cases);
    s.kernel_sizes.insert("map".into(), vec![1, 2, 3]);
    s
}

/// The tiny suite's first two configurations, then one whose block panics (hidden
/// `--suite tiny-stops`, with the test kernels only): a run that stops part way, for the
/// tests of what `--save` keeps.
fn tiny_stops_suite() -> Suite {
    let mut s = tiny_suite();
    s.name = "tiny-stops".into();
    s.cases.truncate(2);
    let mut stops = validate::term_suite(
        "seq(inc, panic)",
        vec![1024, 2048, 4096, 8192],
        Default::default(),
        tiny_sampling(),
    );
    s.cases.append(&mut stops.cases);
    s
}

fn tiny_sampling() -> Sampling {
    Sampling {
        warmup: 0,
        min_reps: 3,
        max_reps: 3,
        target: None,
        min_sample: std::time::Duration::from_micros(100),
        max_point_time: std::time::Duration::from_millis(200),
        batch: None,
    }
}

pub fn run(args: Args) -> anyhow::Result<()> {
    super::bench::quiet_caught_panics();
    perfcompose_runtime::bench::keep_freed_memory();
    let registry = super::bench::registry();
    let auto_measure = args.measure.eq_ignore_ascii_case("auto");
    let measure: Measure = if auto_measure {
        Measure::Minimum
    } else {
        args.measure
            .parse()
            .map_err(|e: String| anyhow::anyhow!("--measure: {e} or `auto`"))?
    };
    let protocol: validate::Protocol = args
        .protocol
        .parse()
        .map_err(|e: String| anyhow::anyhow!("--protocol: {e}"))?;
    let block_revisit: validate::BlockRevisit = args
        .block_revisit
        .parse()
        .map_err(|e: String| anyhow::anyhow!("--block-revisit: {e}"))?;
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
    let cores = match args.cores {
        Some(0) => bail!("--cores must be at least 1"),
        Some(c) => c,
        None => overhead::available_cores(),
    };
    let inputs = inputs_of(&args.image)?;
    let suite = match &args.term {
        Some(term) => {
            let plan = plan_of(term)?;
            let sizes = match &args.sizes {
                Some(s) => {
                    check_sizes(s)?;
                    s.clone()
                }
                None => match plan {
                    Plan::MapReduce { .. } => vec![8, 16, 32, 64],
                    _ => vec![4096, 16384, 32768, 65536, 131072],
                },
            };
            validate::term_suite(term, sizes, inputs.image, validate::quick_suite().sampling)
        }
        None => match args.suite.as_str() {
            "paper" => validate::paper_suite(),
            "tiny" => tiny_suite(),
            "tiny-stops" if super::bench::test_kernels() => tiny_stops_suite(),
            "quick" => validate::quick_suite(),
            other => bail!("unknown suite `{other}` (expected `quick` or `paper`)"),
        },
    };
    let suite = if args.only.is_empty() {
        suite
    } else {
        validate::select(suite, &args.only).map_err(anyhow::Error::from)?
    };
    let saved_calibration = args
        .from
        .as_ref()
        .map(|dir| dir.join("overhead-calibration.json"))
        .filter(|p| p.is_file());
    let overhead = if args.no_overhead {
        None
    } else {
        super::input::calibration(args.calibration.as_deref().or(saved_calibration.as_deref()))?
    };
    let overhead = overhead.map(|(c, _)| c);
    let config = config_of(!args.no_pin, args.capacity, args.spin_us)?;
    let caches = if args.caches.len() == 1 && args.caches[0] == "none" {
        Vec::new()
    } else if !args.caches.is_empty() {
        args.caches
            .iter()
            .map(|c| parse_size(c))
            .collect::<anyhow::Result<Vec<u64>>>()?
    } else {
        match args
            .from
            .as_deref()
            .map(saved_caches)
            .transpose()?
            .flatten()
        {
            Some(saved) => saved,
            None => {
                let here = perfcompose_runtime::bench::cache_sizes();
                if let (Some(dir), "segmented") = (&args.from, args.modeler.as_str()) {
                    eprintln!(
                        "note: {} has no {MACHINE_FILE} (saved before 2026-11-26): cache breaks at this machine's caches ({}); --caches says otherwise",
                        dir.display(),
                        here.iter().map(|b| format!("{}K", b >> 10)).collect::<Vec<_>>().join(",")
                    );
                }
                here
            }
        }
    };
    if let Some(c) = &overhead {
        let calibrated = c.pinned;
        if calibrated != config.pin && args.from.is_none() {
            let how = |pinned: bool| if pinned { "pinned" } else { "not pinned" };
            eprintln!(
                "warning: the overhead calibration was measured with the workers {}, this run has them {}: \
                 recalibrate with `perfcompose calibrate overhead{}`",
                how(calibrated),
                how(config.pin),
                if config.pin { "" } else { " --no-pin" }
            );
        } else if !c.spins_as(&config) && args.from.is_none() {
            eprintln!(
                "warning: the overhead calibration was measured with workers that {} before sleeping on a queue, \
                 this run's {}: recalibrate with `perfcompose calibrate overhead{}`",
                match c.spin_us {
                    0 => "did not spin".to_string(),
                    us => format!("spun {us} µs"),
                },
                match overhead::Calibration::spin_of(&config).as_micros() {
                    0 => "do not spin".to_string(),
                    us => format!("spin {us} µs"),
                },
                if config.pin { "" } else { " --no-pin" }
            );
        }
    }
    let opts = Options {
        cores,
        overhead,
        config,
        memory_limit: memory_limit(args.memory_limit),
        measure,
        auto_measure,
        modeler: args.modeler.clone(),
        protocol,
        loaded: !args.unloaded,
        revisit: !args.no_revisit,
        block_revisit,
        caches,
        host_check: !args.no_host_check,
        quiet_wait: std::time::Duration::from_secs(args.wait_quiet),
        phases: !args.no_phases,
        pin_lone_tests: args.pin_lone_tests,
    };
    if let Some(dir) = &args.from {
        let saved = read_saved(dir)?;
        let mut opts = opts;
        let auto = if opts.auto_measure {
            let auto = saved_auto_measure(dir)?;
            opts.measure = auto.measure;
            Some(auto)
        } else {
            None
        };
        let mut again =
            validate::reanalyze(&suite, &saved, &registry, &opts).map_err(anyhow::Error::from)?;
        again.report.auto_measure = auto;
        if !again.missing.is_empty() {
            eprintln!(
                "{} has no measurements of {} of the suite's configurations (skipped): {}",
                dir.display(),
                again.missing.len(),
                again.missing.join("; ")
            );
        }
        return finish(&args, &again.report, &opts);
    }
    let steps = validate::steps(&suite, &registry, &opts).map_err(anyhow::Error::from)?;
    let bar = bar(steps as u64, args.json);
    let mut tick = progress(&bar);
    // With --save, every finished row is appended to DIR/rows.jsonl at once, and the
    // measurements taken so far are written as they will be at the end (blocks.txt,
    // programs.txt, the calibration), so that an interrupted long suite keeps what it
    // measured and `--from DIR` validates its finished rows again.
    let mut partial = match &args.save {
        Some(dir) => Some(Partial::start(dir, opts.overhead.as_ref(), &opts.caches)?),
        None => None,
    };
    let report = validate::run_suite_with(
        &suite,
        &registry,
        &opts,
        &mut |p| tick(p),
        &mut |row, measured| {
            if let Some(p) = partial.as_mut() {
                p.row(row, measured);
            }
        },
    )
    .map_err(anyhow::Error::from)?;
    bar.finish_and_clear();
    finish(&args, &report, &opts)
}

/// What a `--save DIR` run writes while it runs (see [`Partial::row`]).
struct Partial {
    dir: PathBuf,
    rows: std::fs::File,
    /// Set once a write failed (the run goes on; the final save reports its own errors).
    warned: bool,
}

impl Partial {
    /// Create DIR, start DIR/rows.jsonl afresh and store the calibration the run uses.
    fn start(
        dir: &std::path::Path,
        calibration: Option<&overhead::Calibration>,
        caches: &[u64],
    ) -> anyhow::Result<Partial> {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let p = dir.join("rows.jsonl");
        let rows =
            std::fs::File::create(&p).with_context(|| format!("cannot create {}", p.display()))?;
        if let Some(c) = calibration {
            c.save(&dir.join("overhead-calibration.json"))
                .map_err(anyhow::Error::from)?;
        }
        write_machine(dir, caches)?;
        Ok(Partial {
            dir: dir.to_path_buf(),
            rows,
            warned: false,
        })
    }

    /// A row is done: write every measurement so far (each file replaced whole, so a
    /// stop leaves the previous row's or this one's, never half of one), then the row.
    fn row(&mut self, row: &validate::Row, measured: &[perfcompose_runtime::bench::Series]) {
        let line = serde_json::json!({
            "configuration": row.configuration,
            "threads": row.threads,
            "within_cores": row.within_cores,
            "modular": row.modular.to_string(),
            "monolithic": row.monolithic.to_string(),
            "coefficient_error": row.coefficient_error,
            "time_error": row.time_error,
            "repeat_error": row.repeat_error,
            "overhead_ns": row.overhead_ns,
            "passed": row.passed(),
            "notes": row.notes,
            "host_check": row.host.as_ref().map(validate::HostAtRow::to_json),
        });
        let written = write_series(&self.dir, measured).and_then(|()| {
            writeln!(self.rows, "{line}")?;
            self.rows.flush()?;
            Ok(())
        });
        if let Err(e) = written {
            if !self.warned {
                eprintln!(
                    "warning: cannot save the measurements so far in {}: {e:#}",
                    self.dir.display()
                );
                self.warned = true;
            }
        }
    }
}

/// Write measurements as a `--save DIR` run does: blocks (kind `kernel`) to
/// DIR/blocks*.txt, programs to DIR/programs*.txt (Extra-P text, one file per sweep).
fn write_series(
    dir: &std::path::Path,
    series: &[perfcompose_runtime::bench::Series],
) -> anyhow::Result<()> {
    let (blocks, programs): (Vec<_>, Vec<_>) =
        series.iter().cloned().partition(|s| s.kind == "kernel");
    let phases = validate::phases_of(&blocks);
    for (name, series) in [("blocks.txt", blocks), ("programs.txt", programs)] {
        super::bench::write_measurements(&dir.join(name), &series)?;
    }
    if !phases.is_empty() {
        let p = dir.join(PHASES_FILE);
        let file = PhasesFile {
            window: perfcompose_runtime::bench::PHASE_WINDOW,
            series: phases,
        };
        std::fs::write(&p, serde_json::to_string(&file)? + "\n")
            .with_context(|| format!("cannot write {}", p.display()))?;
    }
    Ok(())
}

/// What `--measure auto` chooses for a saved run: from the cores' speed states of
/// DIR/report.json's rows (judged against the whole run's fastest windows), or of
/// DIR/rows.jsonl's for a run stopped before its report (judged against the fastest
/// windows up to each row); the minimum for a run saved before the samples existed.
fn saved_auto_measure(dir: &std::path::Path) -> anyhow::Result<validate::AutoMeasure> {
    let report = dir.join("report.json");
    let rows: Vec<serde_json::Value> = if report.is_file() {
        let text = std::fs::read_to_string(&report)
            .with_context(|| format!("cannot read {}", report.display()))?;
        let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
            anyhow::anyhow!(
                "{}:{}:{}: not a validate report: {e}",
                report.display(),
                e.line(),
                e.column()
            )
        })?;
        v.get("rows")
            .and_then(serde_json::Value::as_array)
            .cloned()
            .unwrap_or_default()
    } else {
        let lines = dir.join("rows.jsonl");
        if !lines.is_file() {
            return Ok(validate::AutoMeasure::choose([]));
        }
        let text = std::fs::read_to_string(&lines)
            .with_context(|| format!("cannot read {}", lines.display()))?;
        text.lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(i, l)| {
                serde_json::from_str(l).map_err(|e| {
                    anyhow::anyhow!(
                        "{}:{}:{}: not a row: {e}",
                        lines.display(),
                        i + 1,
                        e.column()
                    )
                })
            })
            .collect::<anyhow::Result<_>>()?
    };
    let each = |row: &serde_json::Value, end: &str| -> Option<Vec<f64>> {
        let shares = row.pointer(&format!("/host_check/core_states/{end}/each"))?;
        Some(
            shares
                .as_array()?
                .iter()
                .filter_map(serde_json::Value::as_f64)
                .collect(),
        )
    };
    let samples: Vec<Vec<f64>> = rows
        .iter()
        .flat_map(|r| [each(r, "before"), each(r, "after")])
        .flatten()
        .collect();
    Ok(validate::AutoMeasure::choose(
        samples.iter().map(Vec::as_slice),
    ))
}

/// Where a `--save DIR` run keeps its stages' phases ([`PhasesFile`]).
const PHASES_FILE: &str = "phases.json";

/// DIR/phases.json: per saved block series (its callpath in blocks*.txt) and size, the
/// quantiles of its unit test's window means over its repetition's mean
/// (`bench::PointStats::phases`) and every stage's mean call in each of its repetitions
/// (`bench::PointStats::stages`; runs saved before 2026-11-28 have none), which
/// blocks*.txt cannot hold.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct PhasesFile {
    /// Calls per window.
    window: usize,
    series: validate::Phases,
}

/// Attach DIR/phases.json, when there is one, to the saved `series` of the same names
/// and sizes.
fn read_phases(
    dir: &std::path::Path,
    series: &mut [perfcompose_runtime::bench::Series],
) -> anyhow::Result<()> {
    let Some(file): Option<PhasesFile> = read_saved_json(
        &dir.join(PHASES_FILE),
        "{\"window\": calls, \"series\": {callpath: [{\"x\": size, \"phases\": [ratio, ...], \"stages\": [[ns, ...], ...]}, ...]}}",
    )?
    else {
        return Ok(());
    };
    for s in series.iter_mut() {
        let Some(points) = file.series.get(&s.name) else {
            continue;
        };
        for at in points {
            if let Some(point) = s.points.iter_mut().find(|q| q.x == at.x) {
                point.phases = at
                    .phases
                    .iter()
                    .copied()
                    .filter(|v| v.is_finite())
                    .collect();
                point.stages = at.stages.clone();
            }
        }
    }
    Ok(())
}

/// Save (with --save) and print a report.
fn finish(args: &Args, report: &Report, opts: &Options) -> anyhow::Result<()> {
    if let Some(dir) = &args.save {
        save(dir, report, opts.overhead.as_ref(), &opts.caches)?;
    }
    let mut out = crate::report::stdout();
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&report.to_json())?)?;
    } else {
        print_report(&mut out, report)?;
    }
    Ok(())
}

/// Every measurement a `--save DIR` run wrote: the Extra-P text files `blocks*.txt` and
/// `programs*.txt` in DIR.
fn read_saved(dir: &std::path::Path) -> anyhow::Result<Vec<perfcompose_runtime::bench::Series>> {
    let entries =
        std::fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            (name.starts_with("blocks") || name.starts_with("programs"))
                && name.ends_with(".txt")
                && p.is_file()
        })
        .collect();
    files.sort();
    if files.is_empty() {
        bail!(
            "{} has no measurements (blocks*.txt, programs*.txt from `perfcompose validate --save {}`)",
            dir.display(),
            dir.display()
        );
    }
    let mut series = Vec::new();
    for f in files {
        let exp = perfcompose_core::measure::read_path(&f)?;
        series.extend(validate::series_from_experiment(&exp));
    }
    read_phases(dir, &mut series)?;
    Ok(series)
}

fn save(
    dir: &std::path::Path,
    report: &Report,
    calibration: Option<&overhead::Calibration>,
    caches: &[u64],
) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    if let Some(c) = calibration {
        c.save(&dir.join("overhead-calibration.json"))
            .map_err(anyhow::Error::from)?;
    }
    write_machine(dir, caches)?;
    write_series(dir, &report.series)?;
    let path = dir.join("report.json");
    std::fs::write(
        &path,
        serde_json::to_string_pretty(&report.to_json())? + "\n",
    )
    .with_context(|| format!("cannot write {}", path.display()))?;
    let detail = dir.join("points.json");
    let points: Vec<_> = report
        .rows
        .iter()
        .map(|r| {
            serde_json::json!({
                "configuration": r.configuration,
                "overhead_ns": r.overhead_ns,
                "notes": r.notes,
                "components": r
                    .components
                    .iter()
                    .map(|(k, m)| (k.clone(), m.to_string()))
                    .collect::<std::collections::BTreeMap<_, _>>(),
                "points": r.points,
                "block_fit_miss": r.fit_floor,
                "time_error_from_measured_blocks": r.error_from_measured_blocks,
                "repeat_error": r.repeat_error,
                "host_check": r.host.as_ref().map(validate::HostAtRow::to_json),
            })
        })
        .collect();
    std::fs::write(&detail, serde_json::to_string_pretty(&points)? + "\n")
        .with_context(|| format!("cannot write {}", detail.display()))?;
    eprintln!("wrote measurements and report to {}", dir.display());
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
        match report.protocol {
            validate::Protocol::Interleaved
            | validate::Protocol::Sandwich
            | validate::Protocol::Rounds => {
                "fitted model [ns], all its measurements (each configuration uses its own)"
            }
            validate::Protocol::Separate => "fitted model [ns]",
        },
    ]);
    for (k, m) in &report.components {
        blocks.add_row(vec![k.clone(), m.rounded(4)]);
    }
    writeln!(out, "{blocks}")?;

    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    // The sandwich and rounds protocols' column: how far the program's two measurements
    // are apart.
    let repeats = report.rows.iter().any(|r| r.repeat_error.is_some());
    let mut header = vec![
        "configuration",
        "threads",
        "modular model [ns]",
        "monolithic model [ns]",
        "coef. error",
        "time error",
    ];
    if repeats {
        header.push("program vs itself");
    }
    header.push("verdict");
    t.set_header(header);
    let mut notes = Vec::new();
    for (i, r) in report.rows.iter().enumerate() {
        let verdict = match (r.passed(), r.target) {
            (Some(true), Some(t)) => format!("ok (≤ {:.0}%)", 100.0 * t),
            (Some(false), Some(t)) => format!("MISS (> {:.0}%) [{}]", 100.0 * t, i + 1),
            _ => format!("reported only [{}]", i + 1),
        };
        if !r.notes.is_empty() {
            notes.push(format!(
                "[{}] {}: {}",
                i + 1,
                r.configuration,
                r.notes.join("; ")
            ));
        }
        let mut cells = vec![
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
        ];
        if repeats {
            cells.push(r.repeat_error.map_or_else(|| "–".into(), pct));
        }
        cells.push(verdict);
        t.add_row(cells);
    }
    writeln!(out, "{t}")?;
    for n in notes {
        writeln!(out, "{n}")?;
    }
    let judged: Vec<_> = report.rows.iter().filter_map(|r| r.passed()).collect();
    writeln!(
        out,
        "{} cores; {} of {} configurations within target; {} reported only (more threads than cores); pattern overhead {}",
        report.cores,
        judged.iter().filter(|p| **p).count(),
        judged.len(),
        report.rows.len() - judged.len(),
        if report.overhead_calibrated {
            "included (calibrated)"
        } else {
            "not included (run `perfcompose calibrate overhead` to calibrate)"
        }
    )?;
    let hosts: Vec<(&str, &validate::HostAtRow)> = report
        .rows
        .iter()
        .filter_map(|r| Some((r.configuration.as_str(), r.host.as_ref()?)))
        .collect();
    if !hosts.is_empty() {
        let tolerance = perfcompose_runtime::bench::neighbour::SPEED_TOLERANCE;
        let moved = hosts.iter().filter(|(_, h)| h.speed_moved()).count();
        let worst = hosts
            .iter()
            .map(|&(c, h)| (c, h.speed_change()))
            .max_by(|a, b| a.1.ln().abs().total_cmp(&b.1.ln().abs()));
        writeln!(
            out,
            "host speed, the check's blocks alone right after each of the {} designs within the cores over right before it: {moved} moved by more than {tolerance:.2}x either way{}",
            hosts.len(),
            worst.map_or(String::new(), |(c, r)| format!(", the most {r:.2}x ({c})")),
        )?;
    }
    if let Some([before, after]) = &report.host_check {
        let around: Vec<(&str, f64)> = report
            .rows
            .iter()
            .filter_map(|r| {
                let host = r.host.as_ref().filter(|h| h.before.has_neighbours())?;
                Some((r.configuration.as_str(), host.worst()))
            })
            .collect();
        let disturbed = around
            .iter()
            .filter(|(_, w)| *w > perfcompose_runtime::bench::neighbour::NEIGHBOUR_TOLERANCE)
            .count();
        let worst = around.iter().copied().max_by(|a, b| a.1.total_cmp(&b.1));
        writeln!(
            out,
            "host check, a busy core next to the one timing a block (median of {} rounds): before the first design of two threads {}; after the last {}; around each of the {} such designs: {disturbed} disturbed at an end{}{}",
            before.rounds,
            before.describe(),
            after.describe(),
            around.len(),
            worst.map_or(String::new(), |(c, w)| format!(", the worst {w:.2}x ({c})")),
            if disturbed > 0 {
                format!(
                    ": over {:.2}x, designs of two threads run at a speed their unit tests may not have met (docs/validation.md, \"Equal stages on the AMD host\")",
                    perfcompose_runtime::bench::neighbour::NEIGHBOUR_TOLERANCE
                )
            } else {
                String::new()
            }
        )?;
    }
    if let Some(auto) = &report.auto_measure {
        writeln!(out, "{}", auto.describe())?;
    }
    let shares: Vec<f64> = hosts
        .iter()
        .filter_map(|(_, h)| h.state_shares())
        .flat_map(|[b, a]| [b.every, a.every])
        .collect();
    // How long each sample ran (the suite's `state_sample`).
    let seconds = hosts
        .iter()
        .find_map(|(_, h)| h.states[0].as_ref())
        .map_or(0.0, |s| s.seconds());
    if let Some(fastest) = hosts
        .first()
        .map(|(_, h)| &h.fastest)
        .filter(|_| !shares.is_empty())
    {
        use perfcompose_runtime::bench::states;
        let mut sorted = shares;
        sorted.sort_by(f64::total_cmp);
        let fastest: Vec<String> = fastest
            .iter()
            .map(|t| format!("{:.1} µs", t / 1e3))
            .collect();
        writeln!(
            out,
            "cores' speed states, `{}` x={} on every core at once for {} s at each end of the designs within the cores: every core in its fast state at once in {:.0}% of the windows (median over both ends of {} designs; {:.0}% to {:.0}%), fast being within {:.2}x of the fastest window of any core in this run (each core's fastest: {}); a design of two threads or more is at its fastest only then (docs/validation.md, \"Cores that switch between two speeds\")",
            states::KERNEL,
            states::X,
            seconds,
            sorted[sorted.len() / 2] * 100.0,
            sorted.len() / 2,
            sorted[0] * 100.0,
            sorted[sorted.len() - 1] * 100.0,
            states::FAST,
            fastest.join(", "),
        )?;
    }
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
