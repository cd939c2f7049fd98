//! What the commands that run designs on this machine share (`bench`, `validate`,
//! `calibrate`): the runtime's flags, the kernel registry, the image flag, a progress bar.

use anyhow::bail;
use indicatif::{ProgressBar, ProgressStyle};
use perfcompose_core::compose::grid::{parse_at, WholeSizes};
use perfcompose_runtime::bench::{self, Progress};
use perfcompose_runtime::data::ImageSize;
use perfcompose_runtime::{Config, Registry};

/// How the runtime runs designs on this machine.
#[derive(clap::Args, Debug, Clone)]
pub struct RuntimeArgs {
    /// Let the OS place the worker threads instead of pinning each to a core of its own
    /// (pinning is the default; a design with more worker threads than cores is never
    /// pinned).
    #[arg(long)]
    pub no_pin: bool,
    /// Memory the inputs of one measurement may take, in MiB (default: half of the
    /// available memory).
    #[arg(long, value_name = "MIB")]
    pub memory_limit: Option<u64>,
}

impl RuntimeArgs {
    /// The runtime's configuration: the library's defaults, unpinned with `--no-pin`.
    pub fn config(&self) -> Config {
        Config {
            pin: !self.no_pin,
            ..Config::default()
        }
    }

    /// Bytes the inputs may take.
    pub fn memory_limit(&self) -> anyhow::Result<u128> {
        match self.memory_limit {
            Some(0) => bail!("--memory-limit must be at least 1 MiB"),
            Some(m) => Ok(u128::from(m) << 20),
            None => Ok(bench::default_memory_limit()),
        }
    }
}

/// The picture the MapReduce kernels run on.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Image {
    /// 341 × 227
    #[default]
    Small,
    /// 1024 × 681
    Medium,
    /// 3072 × 2048
    Large,
}

impl From<Image> for ImageSize {
    fn from(i: Image) -> ImageSize {
        match i {
            Image::Small => ImageSize::Small,
            Image::Medium => ImageSize::Medium,
            Image::Large => ImageSize::Large,
        }
    }
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

/// The kernels the commands know.
pub fn registry() -> Registry {
    Registry::builtin()
}

/// `--at x=...` of `bench` and `validate --term`: values written as `--at` writes them
/// (`x=4096,65536`, `x=2^12`, `x=2^10..2^18:9`), rounded to whole sizes, with the note
/// saying so when that changed a value. The old `--sizes 4096,65536` (without `x=`) is
/// kept as a hidden alias, so that saved command lines still work.
#[derive(Clone, Debug, PartialEq)]
pub struct Sizes {
    sizes: Vec<usize>,
    note: Option<String>,
}

impl Sizes {
    /// The sizes, refusing a size of zero; the rounding note goes to stderr when `say`
    /// (one MPI rank says it for the job).
    pub fn checked(&self, say: bool) -> anyhow::Result<Vec<usize>> {
        if let Some(z) = self.sizes.iter().find(|&&s| s == 0) {
            bail!("--at x: size {z} is not positive (sizes start at 1)");
        }
        if let (true, Some(note)) = (say, &self.note) {
            perfcompose_core::stderr_line!("{note}");
        }
        Ok(self.sizes.clone())
    }
}

/// Parse `--at x=...` (or `--sizes ...`, its old spelling without `x=`; clap's value
/// parser).
pub fn parse_sizes(text: &str) -> anyhow::Result<Sizes> {
    let hint = "sizes are numbers, constant expressions or a range: x=4096,65536 or x=2^10..2^18:9";
    let at = match text.split_once('=') {
        Some((name, _)) if name.trim() != "x" => {
            bail!("`{}`: the sizes are values of x ({hint})", name.trim())
        }
        Some(_) => text.to_string(),
        None => format!("x={text}"),
    };
    let axis = parse_at(&at).map_err(|d| anyhow::anyhow!("{} ({hint})", d.message))?;
    let whole = WholeSizes::new(&axis.values)?;
    let sizes = whole
        .sizes
        .iter()
        .map(|&s| usize::try_from(s))
        .collect::<Result<_, _>>()?;
    Ok(Sizes {
        sizes,
        note: whole.note("--at x"),
    })
}

/// A progress bar on stderr (hidden with `--json` and when stderr is not a terminal).
pub fn bar(len: u64, hidden: bool) -> ProgressBar {
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

/// The measuring side's progress, shown on `bar`.
pub fn progress(bar: &ProgressBar) -> impl FnMut(Progress<'_>) + '_ {
    move |p: Progress<'_>| {
        if p.done > 0 {
            bar.inc(1);
        }
        bar.set_message(format!("{} x={}", p.label, p.x));
    }
}
