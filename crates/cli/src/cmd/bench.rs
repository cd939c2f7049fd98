//! `perfcompose bench`: unit performance tests of kernels and whole-program measurement of
//! a design. Glue over `perfcompose_runtime::bench`.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{bail, Context};
use comfy_table::{presets::UTF8_FULL_CONDENSED, Table};
use indicatif::{ProgressBar, ProgressStyle};
use perfcompose_runtime::bench::{self, Progress, Sampling, Series};
use perfcompose_runtime::data::ImageSize;
use perfcompose_runtime::kernel::Inputs;
use perfcompose_runtime::{Config, Plan, Registry};

/// Flags of `perfcompose bench`.
#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:
  perfcompose bench                          all kernels, fast grid (~1 minute)
  perfcompose bench qsort inc -o blocks.txt  Extra-P text, ready for `perfcompose fit`
  perfcompose bench --full qsort             the seed's grid: x = 1024, 2048, ..., 262144
  perfcompose bench --term 'pipe(qsort, inc)' -o whole.txt")]
pub struct Args {
    /// Kernels to time (default: every registered kernel).
    pub kernels: Vec<String>,
    /// Measure a whole design instead: average time per element of a stream.
    #[arg(long, value_name = "TERM", conflicts_with = "kernels")]
    pub term: Option<String>,
    /// The seed's grid (x from 1,024 to 262,144 in steps of 1,024) and 256 repetitions.
    #[arg(long)]
    pub full: bool,
    /// Sizes to measure, comma separated (overrides the kernel's default sweep).
    #[arg(long, value_delimiter = ',', value_name = "X,...")]
    pub sizes: Option<Vec<usize>>,
    /// Fewest repetitions per point.
    #[arg(long, value_name = "N")]
    pub reps: Option<u32>,
    /// Most repetitions per point.
    #[arg(long, value_name = "N")]
    pub max_reps: Option<u32>,
    /// Adaptive stop: repeat until the 95% CI of the median is within this fraction of it.
    #[arg(long, value_name = "FRACTION")]
    pub target: Option<f64>,
    /// No adaptive stop: exactly --reps repetitions.
    #[arg(long)]
    pub fixed: bool,
    /// Untimed warm-up repetitions per point.
    #[arg(long, value_name = "N")]
    pub warmup: Option<u32>,
    /// Calls per repetition of a kernel, fixed (default: as many as one sample of 200 µs
    /// needs for warm inputs, a program's repetition for cold and handed-over ones),
    /// within the memory the inputs may take; the table's `batch` column says what was
    /// used.
    #[arg(long, value_name = "N", conflicts_with = "term")]
    pub batch: Option<u64>,
    /// Image resolution for the MapReduce kernels: small (341x227), medium (1024x681),
    /// large (3072x2048).
    #[arg(long, default_value = "small")]
    pub image: String,
    /// Write the measurements to FILE: Extra-P text, or JSON when FILE ends in `.json`.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Print JSON on stdout instead of a table.
    #[arg(long)]
    pub json: bool,
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
    /// Time kernels with their input in the cache, as the second block of a `seq` sees it
    /// (default: cold, as a stream element or a queue hands it over).
    #[arg(long, conflicts_with = "term")]
    pub warm: bool,
    /// Time kernels with their input just written by another thread and handed over
    /// through a queue, as the stage after another one in a `pipe` sees it.
    #[arg(long, conflicts_with_all = ["term", "warm"])]
    pub remote: bool,
    /// Time kernels while N other threads run them too, taking the other elements of the
    /// same stream in turn, as the workers of a task pool or a MapReduce do (`validate`
    /// names such blocks `NAME_parM`, M = N + 1).
    #[arg(long, value_name = "N", conflicts_with = "term")]
    pub siblings: Option<usize>,
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
    /// List the registered kernels and exit.
    #[arg(long)]
    pub list: bool,
}

/// Stay quiet for panics the runtime catches and reports itself (a panicking kernel);
/// other panics (bugs) keep the default report.
pub fn quiet_caught_panics() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !(perfcompose_runtime::on_worker_thread() || perfcompose_runtime::in_user_code()) {
            default(info);
        }
    }));
}

/// Environment variable that adds the test kernel `panic` (panics on every element), so
/// tests can check that a failing kernel surfaces as an error.
pub const TEST_KERNELS_ENV: &str = "PERFCOMPOSE_TEST_KERNELS";

/// Whether the test kernels are registered ([`TEST_KERNELS_ENV`] is `1`).
pub fn test_kernels() -> bool {
    std::env::var_os(TEST_KERNELS_ENV).is_some_and(|v| v == "1")
}

/// The kernels the commands know: the built-in ones (plus `panic` for tests).
pub fn registry() -> Registry {
    let mut r = Registry::builtin();
    if test_kernels() {
        r.register_block("panic", "panics on every element (for tests)", |_| {
            panic!("the test kernel `panic` was called")
        });
    }
    r
}

pub fn run(args: Args) -> anyhow::Result<()> {
    quiet_caught_panics();
    perfcompose_runtime::bench::keep_freed_memory();
    let registry = registry();
    if args.list {
        return list(&registry);
    }
    let inputs = inputs_of(&args.image)?;
    let spec = sampling(&args)?;
    let config = config_of(!args.no_pin, args.capacity, args.spin_us)?;
    let limit = memory_limit(args.memory_limit);
    if let Some(sizes) = &args.sizes {
        check_sizes(sizes)?;
    }
    let series = if let Some(term) = &args.term {
        let plan = super::validate::plan_of(term)?;
        let sizes = args
            .sizes
            .clone()
            .unwrap_or_else(|| default_sizes_for(&registry, &plan, args.full));
        let bar = bar(sizes.len() as u64, args.json);
        let s = bench::bench_plan(
            &plan,
            &registry,
            config,
            &sizes,
            &inputs,
            &spec,
            limit,
            &mut progress(&bar),
        )
        .map_err(anyhow::Error::from)?;
        bar.finish_and_clear();
        vec![s]
    } else {
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
        let plans: Vec<Vec<usize>> = kernels
            .iter()
            .map(|k| {
                args.sizes
                    .clone()
                    .unwrap_or_else(|| k.default_sizes(args.full))
            })
            .collect();
        let total: usize = plans.iter().map(Vec::len).sum();
        let bar = bar(total as u64, args.json);
        let mut out = Vec::new();
        for (k, sizes) in kernels.iter().zip(&plans) {
            let state = if args.warm {
                bench::InputState::Warm
            } else if args.remote {
                bench::InputState::Remote
            } else {
                bench::InputState::Cold
            };
            let how = bench::Conditions {
                input: state,
                siblings: args.siblings.unwrap_or(0),
                ..Default::default()
            };
            let s = bench::bench_kernel_in(
                k.as_ref(),
                sizes,
                &inputs,
                &spec,
                limit,
                how,
                &mut progress(&bar),
            )
            .map_err(anyhow::Error::from)?;
            bar.inc(1);
            out.push(s);
        }
        bar.finish_and_clear();
        out
    };
    if let Some(path) = &args.output {
        let files = write_measurements(path, &series)?;
        if !args.json {
            for f in files {
                eprintln!("wrote {}", f.display());
            }
        }
    }
    let mut out = crate::report::stdout();
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&series)?)?;
    } else {
        print_table(&mut out, &series)?;
    }
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

pub(crate) fn inputs_of(image: &str) -> anyhow::Result<Inputs> {
    let image = ImageSize::parse(image)
        .with_context(|| format!("unknown image size `{image}` (use small, medium or large)"))?;
    Ok(Inputs::with_image(image))
}

pub(crate) fn config_of(
    pin: bool,
    capacity: Option<usize>,
    spin_us: Option<u64>,
) -> anyhow::Result<Config> {
    let mut c = Config {
        pin,
        ..Config::default()
    };
    if let Some(us) = spin_us {
        if us > 1_000_000 {
            bail!("--spin-us must be at most 1,000,000 (one second)");
        }
        c.spin = std::time::Duration::from_micros(us);
    }
    if let Some(cap) = capacity {
        if cap == 0 {
            bail!("--capacity must be at least 1");
        }
        c.capacity = cap;
    }
    Ok(c)
}

pub(crate) fn memory_limit(mib: Option<u64>) -> u128 {
    mib.map_or_else(bench::default_memory_limit, |m| u128::from(m) << 20)
}

pub(crate) fn check_sizes(sizes: &[usize]) -> anyhow::Result<()> {
    if sizes.is_empty() {
        bail!("--sizes needs at least one size");
    }
    if let Some(z) = sizes.iter().find(|&&s| s == 0) {
        bail!("--sizes: size {z} is not positive (sizes start at 1)");
    }
    Ok(())
}

fn sampling(args: &Args) -> anyhow::Result<Sampling> {
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
    if args.fixed {
        s.target = None;
        s.max_reps = s.min_reps;
    }
    if let Some(w) = args.warmup {
        s.warmup = w;
    }
    if let Some(b) = args.batch {
        if b == 0 {
            bail!("--batch must be at least 1");
        }
        s.batch = Some(b);
    }
    Ok(s)
}

/// The default sweep of a design: the sweep of its source kernel.
pub(crate) fn default_sizes_for(registry: &Registry, plan: &Plan, full: bool) -> Vec<usize> {
    plan.source_kernel()
        .and_then(|k| registry.get(k).ok())
        .map_or_else(bench::quick_sizes, |k| k.default_sizes(full))
}

pub(crate) fn bar(len: u64, hidden: bool) -> ProgressBar {
    if hidden {
        return ProgressBar::hidden();
    }
    let b = ProgressBar::new(len);
    b.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    b
}

pub(crate) fn progress(bar: &ProgressBar) -> impl FnMut(Progress<'_>) + '_ {
    move |p: Progress<'_>| {
        if p.done > 0 {
            bar.inc(1);
        }
        bar.set_message(format!("{} x={}", p.label, p.x));
    }
}

/// Write measurements: JSON for `.json`, else Extra-P text. Series with different sweeps
/// cannot share an Extra-P text file; the first sweep goes to `path`, every other one to
/// `STEM-NAME.EXT` named after its first series. Returns the files written.
pub(crate) fn write_measurements(path: &Path, series: &[Series]) -> anyhow::Result<Vec<PathBuf>> {
    // Written beside the file, then renamed over it: a run stopped while it writes
    // (`validate --save` rewrites its files after every row) leaves the old file whole.
    let write = |p: &Path, text: String| -> anyhow::Result<()> {
        let name = p
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        let tmp = p.with_file_name(format!(".{name}.partial"));
        let mut f = std::fs::File::create(&tmp)
            .with_context(|| format!("cannot create {}", tmp.display()))?;
        f.write_all(text.as_bytes())
            .with_context(|| format!("cannot write {}", tmp.display()))?;
        drop(f);
        std::fs::rename(&tmp, p).with_context(|| format!("cannot write {}", p.display()))
    };
    if path.extension().is_some_and(|e| e == "json") {
        write(path, serde_json::to_string_pretty(series)? + "\n")?;
        return Ok(vec![path.to_path_buf()]);
    }
    let mut written = Vec::new();
    for (i, (name, group)) in bench::group_by_sweep(series).into_iter().enumerate() {
        let p = if i == 0 {
            path.to_path_buf()
        } else {
            let stem = path
                .file_stem()
                .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
            let safe: String = name
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '_' {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            let ext = path
                .extension()
                .map_or_else(|| "txt".into(), |e| e.to_string_lossy().into_owned());
            path.with_file_name(format!("{stem}-{safe}.{ext}"))
        };
        write(&p, bench::extrap_text(&bench::to_experiment(&group))?)?;
        written.push(p);
    }
    Ok(written)
}

fn print_table(out: &mut impl Write, series: &[Series]) -> io::Result<()> {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    t.set_header(vec![
        "series",
        "x",
        "median [ns]",
        "CV",
        "95% CI of median",
        "reps",
        "batch",
    ]);
    for s in series {
        for p in &s.points {
            t.add_row(vec![
                s.name.clone(),
                p.x.to_string(),
                format!("{:.1}", p.median),
                format!("{:.2}%", 100.0 * p.cv),
                format!(
                    "{:.1} .. {:.1}{}",
                    p.ci_low,
                    p.ci_high,
                    if p.converged {
                        ""
                    } else {
                        " (target not reached)"
                    }
                ),
                p.values.len().to_string(),
                p.batch.to_string(),
            ]);
        }
    }
    writeln!(out, "{t}")
}
