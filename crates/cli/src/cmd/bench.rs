//! `perfcompose bench`: unit performance tests of kernels (`bench kernels`) and the
//! measurement of a whole design (`bench design`), over a sweep of sizes. Glue over
//! `perfcompose_runtime::bench`.

use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::bail;
use comfy_table::{presets::UTF8_FULL_CONDENSED, Table};
use perfcompose_core::measure::stats::MIN_SAMPLES_FOR_CI;
use perfcompose_core::measure::Measure;
use perfcompose_runtime::bench::{self, Conditions, InputState, Sampling, Series};
use perfcompose_runtime::data::ImageSize;
use perfcompose_runtime::kernel::{self, Inputs};
use perfcompose_runtime::plan::parse_plan;
use perfcompose_runtime::validate::protocol::point_stat;
use perfcompose_runtime::validate::write_measurements;
use perfcompose_runtime::{Plan, Registry};

use super::runtime_args::{
    bar, parse_sizes, progress, quiet_caught_panics, registry, Image, RuntimeArgs, Sizes,
};

/// What `perfcompose bench` measures.
#[derive(clap::Subcommand, Debug)]
pub enum Args {
    /// Unit performance tests: time kernels over a sweep of sizes.
    #[command(after_help = "Examples:
  perfcompose bench kernels                       every kernel, fast grid (about a minute)
  perfcompose bench kernels qsort inc -o blocks.txt   Extra-P text, ready for `perfcompose fit`
  perfcompose bench kernels --full qsort          the pattern-composition paper's grid: x = 1024, 2048, ..., 262144
  perfcompose bench kernels inc --input warm      inc as the second block of a seq runs it
  perfcompose bench kernels --list")]
    Kernels(KernelArgs),
    /// Measure a whole design: average time per element of a stream, over a sweep.
    #[command(after_help = "Examples:
  perfcompose bench design 'pipe(qsort, inc)' -o whole.txt
  perfcompose bench design 'tpool(2, qsort)' --at x=4096,65536")]
    Design(DesignArgs),
}

/// How many sizes and repetitions.
#[derive(clap::Args, Debug)]
pub struct SweepArgs {
    /// The pattern-composition paper's grid (x from 1,024 to 262,144 in steps of 1,024) and 256 repetitions.
    #[arg(long)]
    pub full: bool,
    /// Sizes to measure (overrides the default sweep): x=V1,V2,... or a range
    /// x=A..B[:N], as every command's --at (values that are not whole numbers are
    /// rounded, and the rounding said).
    #[arg(long = "at", alias = "sizes", value_parser = parse_sizes, value_name = "x=V1,V2,...")]
    pub sizes: Option<Sizes>,
    /// Fewest repetitions per point.
    #[arg(long, value_name = "N")]
    pub reps: Option<u32>,
    /// Most repetitions per point (equal to --reps: exactly that many).
    #[arg(long, value_name = "N")]
    pub max_reps: Option<u32>,
    /// Repeat until the 95% confidence interval of the median is within this fraction
    /// of it.
    #[arg(long, value_name = "FRACTION")]
    pub target: Option<f64>,
    /// Untimed warm-up repetitions per point.
    #[arg(long, value_name = "N")]
    pub warmup: Option<u32>,
    /// The picture the MapReduce kernels run on.
    #[arg(long, value_enum, default_value_t)]
    pub image: Image,
    /// Write the measurements to FILE: Extra-P text, or JSON when FILE ends in `.json`.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Print JSON on stdout instead of a table.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub runtime: RuntimeArgs,
}

/// Where a kernel's input is when its call starts.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Input {
    /// In memory, as a stream element or a queue hands it over.
    #[default]
    Cold,
    /// In this core's cache, as the second block of a `seq` finds it.
    Warm,
    /// Just written by another thread, as the stage after another one in a `pipe` finds
    /// it.
    HandedOver,
}

/// Flags of `perfcompose bench kernels`.
#[derive(clap::Args, Debug)]
pub struct KernelArgs {
    /// Kernels to time (default: every registered kernel).
    pub kernels: Vec<String>,
    /// Where the input is when a call starts.
    #[arg(long, value_enum, default_value_t)]
    pub input: Input,
    /// Time each kernel while N other threads run it too, taking the other elements of
    /// the same stream in turn, as the workers of a task pool do.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub siblings: usize,
    /// List the registered kernels and exit.
    #[arg(long)]
    pub list: bool,
    #[command(flatten)]
    pub sweep: SweepArgs,
}

/// Flags of `perfcompose bench design`.
#[derive(clap::Args, Debug)]
pub struct DesignArgs {
    /// The design, written with registered kernels: `pipe(tpool(2, qsort), inc)`.
    pub term: String,
    /// After the sweep, run the design once more on 64 elements of the smallest size and
    /// write which thread ran which block when as a Chrome trace (Perfetto,
    /// chrome://tracing). The traced run is not measured: recording costs time.
    #[arg(long, value_name = "FILE")]
    pub timeline: Option<PathBuf>,
    #[command(flatten)]
    pub sweep: SweepArgs,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    quiet_caught_panics();
    bench::keep_freed_memory();
    let registry = registry();
    let (series, sweep) = match &args {
        Args::Kernels(k) if k.list => return list(&registry),
        Args::Kernels(k) => (kernels(k, &registry)?, &k.sweep),
        Args::Design(d) => (design(d, &registry)?, &d.sweep),
    };
    if let Some(path) = &sweep.output {
        let files = write_measurements(path, &series)?;
        for f in &files {
            crate::version::record(f)?;
        }
        if !sweep.json {
            for f in files {
                perfcompose_core::stderr_line!("wrote {}", f.display());
            }
        }
    }
    let mut out = crate::report::stdout();
    if sweep.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&series)?)?;
    } else {
        print_table(&mut out, &series)?;
    }
    Ok(())
}

fn kernels(args: &KernelArgs, registry: &Registry) -> anyhow::Result<Vec<Series>> {
    let sweep = &args.sweep;
    let (spec, given) = sampling(sweep)?;
    let limit = sweep.runtime.memory_limit()?;
    let inputs = Inputs::with_image(ImageSize::from(sweep.image));
    let names = if args.kernels.is_empty() {
        registry.names()
    } else {
        args.kernels.clone()
    };
    let kernels = names
        .iter()
        .map(|n| registry.get(n).map(Arc::clone))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| {
            let hint = e.hint().unwrap_or_default();
            anyhow::anyhow!("{e} ({hint})")
        })?;
    let sizes: Vec<Vec<usize>> = kernels
        .iter()
        .map(|k| given.clone().unwrap_or_else(|| k.default_sizes(sweep.full)))
        .collect();
    let total: usize = sizes.iter().map(Vec::len).sum();
    let bar = bar(total as u64, sweep.json);
    let how = Conditions {
        input: match args.input {
            Input::Cold => InputState::Cold,
            Input::Warm => InputState::Warm,
            Input::HandedOver => InputState::Remote,
        },
        siblings: args.siblings,
        ..Default::default()
    };
    let mut out = Vec::new();
    for (k, sizes) in kernels.iter().zip(&sizes) {
        let s = bench::bench_kernel_in(
            k.as_ref(),
            sizes,
            &inputs,
            &spec,
            limit,
            how.clone(),
            &mut progress(&bar),
        )?;
        bar.inc(1);
        out.push(s);
    }
    bar.finish_and_clear();
    Ok(out)
}

fn design(args: &DesignArgs, registry: &Registry) -> anyhow::Result<Vec<Series>> {
    let sweep = &args.sweep;
    let (spec, given) = sampling(sweep)?;
    let (term, plan) = parse_plan("<term>", &args.term)?;
    // A construct the runtime cannot run says so first (when it builds); a name that is
    // no kernel is located in the term.
    if plan.runs() {
        registry.check_term(&term)?;
    }
    let sizes = match given {
        Some(s) => s,
        None => default_sizes_for(registry, &plan, sweep.full),
    };
    let bar = bar(sizes.len() as u64, sweep.json);
    let s = bench::bench_plan(
        &plan,
        registry,
        sweep.runtime.config(),
        &sizes,
        &Inputs::with_image(ImageSize::from(sweep.image)),
        &spec,
        sweep.runtime.memory_limit()?,
        &mut progress(&bar),
    )?;
    bar.finish_and_clear();
    if let Some(path) = &args.timeline {
        let x = sizes.iter().copied().min().unwrap_or(1024);
        traced_run(&plan, registry, sweep, x, path)?;
    }
    Ok(vec![s])
}

/// Elements of the traced run of `bench design --timeline`.
const TRACED_ELEMENTS: usize = 64;

/// One traced run of `plan` on elements of size `x`, written to `path` as a Chrome trace.
fn traced_run(
    plan: &Plan,
    registry: &Registry,
    sweep: &SweepArgs,
    x: usize,
    path: &std::path::Path,
) -> anyhow::Result<()> {
    use anyhow::Context as _;
    let rec = perfcompose_runtime::timeline::Recorder::new();
    let built = plan.build_traced(registry, sweep.runtime.config(), &rec)?;
    let inputs = perfcompose_runtime::plan::stream_inputs(
        registry,
        &built.source_kernel,
        x,
        TRACED_ELEMENTS,
        &Inputs::with_image(ImageSize::from(sweep.image)),
        sweep.runtime.memory_limit()?,
    )?;
    built
        .program
        .run(inputs)
        .map_err(perfcompose_runtime::Error::from)
        .context("the traced run failed")?;
    let file =
        std::fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut w = io::BufWriter::new(file);
    rec.write_chrome(
        &mut w,
        &format!("{plan} (x = {x}, {TRACED_ELEMENTS} elements)"),
    )
    .and_then(|()| w.flush())
    .with_context(|| format!("cannot write {}", path.display()))?;
    perfcompose_core::stderr_line!(
        "wrote the timeline of one run ({} block calls on {} threads, x = {x}) to {}",
        rec.calls().len(),
        rec.threads(),
        path.display()
    );
    Ok(())
}

fn list(registry: &Registry) -> anyhow::Result<()> {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    t.set_header(vec!["kernel", "role", "x is", "what it does"]);
    for k in registry.iter() {
        t.add_row(vec![
            k.name().to_string(),
            k.op().role().to_string(),
            k.size_meaning().to_string(),
            k.summary().to_string(),
        ]);
    }
    writeln!(crate::report::stdout(), "{t}")?;
    Ok(())
}

/// The sampling the flags ask for, and the sizes of `--at` (checked, their rounding said).
fn sampling(args: &SweepArgs) -> anyhow::Result<(Sampling, Option<Vec<usize>>)> {
    let sizes = args.sizes.as_ref().map(|s| s.checked(true)).transpose()?;
    let mut s = if args.full {
        Sampling::full()
    } else {
        Sampling::quick()
    };
    if let Some(r) = args.reps {
        if r == 0 {
            bail!("--reps must be at least 1");
        }
        s.min_reps = r;
        s.max_reps = s.max_reps.max(r);
    }
    if let Some(r) = args.max_reps {
        if r < s.min_reps {
            bail!(
                "--max-reps {r} is below the {} minimum repetitions",
                s.min_reps
            );
        }
        s.max_reps = r;
    }
    if let Some(t) = args.target {
        if !(t > 0.0 && t < 1.0) {
            bail!("--target must be a fraction between 0 and 1, got {t}");
        }
        s.target = Some(t);
    }
    if let Some(w) = args.warmup {
        s.warmup = w;
    }
    Ok((s, sizes))
}

/// The default sweep of a design: the sweep of its source kernel.
fn default_sizes_for(registry: &Registry, plan: &Plan, full: bool) -> Vec<usize> {
    plan.source_kernel()
        .and_then(|k| registry.get(k).ok())
        .map_or_else(kernel::quick_sizes, |k| k.default_sizes(full))
}

/// The points of `series`: first the statistic `fit`, `predict` and `validate` reduce
/// the repetitions to ([`Measure::default`]), then the median and its confidence
/// interval, which decide when a point has repetitions enough.
fn print_table(out: &mut impl Write, series: &[Series]) -> io::Result<()> {
    let fitted = Measure::default();
    // The fitted statistic's column, unless it is the median's.
    let own = fitted != Measure::Median;
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    let mut header = vec!["series".to_string(), "x".to_string()];
    if own {
        header.push(format!("{fitted} [ns]"));
    }
    header.extend(["median [ns]", "CV", "95% CI of median", "reps", "batch"].map(String::from));
    t.set_header(header);
    for s in series {
        for p in &s.points {
            let mut row = vec![s.name.clone(), p.x.to_string()];
            if own {
                row.push(format!("{:.1}", point_stat(p, fitted)));
            }
            row.extend([
                format!("{:.1}", p.median),
                format!("{:.2}%", 100.0 * p.cv),
                super::measure::ci_cell(
                    (p.values.len() >= MIN_SAMPLES_FOR_CI).then_some((p.ci_low, p.ci_high)),
                    p.converged,
                    p.values.len(),
                    |v| format!("{v:.1}"),
                ),
                p.values.len().to_string(),
                p.batch.to_string(),
            ]);
            t.add_row(row);
        }
    }
    writeln!(out, "{t}")
}
