//! The flags of `perfcompose validate`.

use std::path::PathBuf;

use perfcompose_core::fit::Measure;
use perfcompose_runtime::validate;

use crate::cmd::runtime_args::{parse_sizes, Image, RuntimeArgs, Sizes};
use crate::cmd::timing_args::TimingArgs;

/// The help heading of the flags for distributed runs.
const DISTRIBUTED: &str = "Distributed runs (under mpirun)";

/// Flags of `perfcompose validate`: its own first, then those of distributed runs, of the
/// pattern runtime and of timing a program, each group under its heading.
#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:
  perfcompose validate                       the quick suite (about two minutes)
  perfcompose validate --suite paper --save results/
  perfcompose validate --suite mine.toml     a suite of your own (docs/validation.md)
  perfcompose validate --term 'pipe(tpool(2, qsort), inc)' --at x=16384,65536,131072
  perfcompose validate --suite paper --only 'pipe(inc, inc)'
  perfcompose validate --from results/ --measure median
  mpirun -np 2 perfcompose validate --suite mpi          distributed designs (a build with --features mpi)
  mpirun -np 2 perfcompose validate --term 'mapreduce(map, reduce_per_key, nodes=2, threads=1, keys=768, per_key=x, reduction=global)'
  mpirun -np 4 perfcompose validate --term 'matmul(mm_block, procs=4, message=msg, bcast=binomial)'
  perfcompose validate --components blocks.toml --term 'pipe(sort, checksum)' --at x=1000,2000,4000 -- ./myprog {x}
                                             your own program against the prediction from its blocks (docs/measure.md)")]
pub struct Args {
    /// Which configurations: `quick` (CI-sized), `paper` (the pattern-composition paper's tables over its
    /// range of x), `mpi` (distributed MapReduce, divide and conquer and matrix
    /// multiplication, under mpirun), or a suite file (`FILE.toml`).
    #[arg(long, default_value = "quick", value_name = "quick|paper|mpi|FILE")]
    pub suite: String,
    /// Validate one design written with the registered kernels instead of a suite; with
    /// a command after `--`, the design of that program over the blocks of --components.
    #[arg(long, value_name = "TERM", conflicts_with_all = ["from", "only"])]
    pub term: Option<String>,
    /// The block models of your own program (a components file; `measurements =
    /// "FILE"` blocks are fitted on load with --modeler and --measure).
    #[arg(long, value_name = "FILE", requires = "command")]
    pub components: Option<PathBuf>,
    /// The sizes: x=V1,V2,... or a range x=A..B[:N] (values that are not whole numbers
    /// are rounded, and the rounding said): the sweep of --term, or the sizes your
    /// program runs at (`{x}` in the command is replaced).
    #[arg(long = "at", value_name = "x=V1,V2,...")]
    pub at: Vec<String>,
    /// The old spelling of `--at x=...` for --term (without `x=`), kept for saved
    /// command lines.
    #[arg(long, value_parser = parse_sizes, value_name = "X,...", requires = "term", conflicts_with = "at", hide = true)]
    pub sizes: Option<Sizes>,
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
    /// (the default of every command; other work on a machine only slows repetitions
    /// down; the paper used the median).
    #[arg(long, value_enum, default_value_t)]
    pub measure: Statistic,
    /// Modeler for the blocks and the whole programs (`perfcompose fit --list-modelers`).
    #[arg(long, default_value = validate::VALIDATE_MODELER)]
    pub modeler: String,
    /// Cores the prediction may use (default: what the OS grants this process; with
    /// --from, the saved run's).
    #[arg(long, value_name = "N", value_parser = clap::builder::TypedValueParser::map(crate::cmd::input::cores(), |c| c as usize))]
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
    #[arg(long, value_name = "FILE", help_heading = DISTRIBUTED)]
    pub network: Option<PathBuf>,
    /// Record one run of each distributed configuration (at its largest size) as SimGrid
    /// time-independent traces into DIR/CONFIGURATION/, for `perfcompose simulate` and
    /// `smpirun -replay`.
    #[arg(long, value_name = "DIR", help_heading = DISTRIBUTED)]
    pub trace: Option<PathBuf>,
    /// A distributed run ends with status 2 when it runs longer than this, so that a
    /// lost message cannot hang it.
    #[arg(long, value_name = "SECONDS", default_value = "3600", value_parser = crate::cmd::seconds::seconds, help_heading = DISTRIBUTED)]
    pub time_limit: std::time::Duration,
    // Rounds and intervals (docs/validation.md, "Verdicts over rounds").
    /// At most this many rounds per configuration (at least 6, the fewest that decide a
    /// row at 95%) [default: the suite's; quick 10, paper and --term 12].
    #[arg(long, value_name = "N")]
    pub max_rounds: Option<usize>,
    /// At most about this long per configuration, its rounds together (a round is never
    /// cut short; 6 rounds are always taken) [default: the suite's; quick 60 s, --term
    /// 120 s, paper 180 s].
    #[arg(long, value_name = "SECONDS", value_parser = crate::cmd::seconds::seconds)]
    pub max_seconds: Option<std::time::Duration>,
    /// Level of the one-run intervals the program's runs are counted in, as `predict`'s.
    #[arg(long, value_name = "P", default_value_t = validate::DEFAULT_LEVEL)]
    pub level: f64,

    #[command(
        flatten,
        next_help_heading = "The pattern runtime (designs perfcompose runs itself)"
    )]
    pub runtime: RuntimeArgs,
    #[command(
        flatten,
        next_help_heading = "Timing your own program (a command after --)"
    )]
    pub timing: TimingArgs,
    /// Your own program and its arguments, after `--`: validated against the prediction
    /// of --term from the blocks of --components.
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

impl Args {
    /// The sizes of --term's sweep: `--at x=...` (or its old spelling `--sizes`);
    /// `None` for the design's default sweep.
    pub fn term_sizes(&self) -> anyhow::Result<Option<Sizes>> {
        match (&self.sizes, &self.at[..]) {
            (Some(s), _) => Ok(Some(s.clone())),
            (None, []) => Ok(None),
            (None, [one]) => Ok(Some(parse_sizes(one)?)),
            (None, _) => anyhow::bail!("--term takes its sizes from one --at x=V1,V2,..."),
        }
    }
}

/// Statistic of the repetitions.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Statistic {
    Minimum,
    Median,
    Mean,
}

impl Default for Statistic {
    /// The statistic every command defaults to ([`Measure::default`]).
    fn default() -> Statistic {
        match Measure::default() {
            Measure::Median => Statistic::Median,
            Measure::Mean => Statistic::Mean,
            Measure::Minimum | Measure::Maximum => Statistic::Minimum,
        }
    }
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
