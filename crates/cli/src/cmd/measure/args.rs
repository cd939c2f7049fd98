//! The flags of `perfcompose measure`.

use std::path::PathBuf;

use crate::cmd::timing_args::TimingArgs;

/// Flags of `perfcompose measure`.
#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:
  perfcompose measure --name sort --at x=1000,2000,4000,8000 -o blocks.txt -- ./mysort --n {x}
  perfcompose measure --name halo --at p=2,4,8 --at size=2^10,2^12 -o halo.txt -- ./halo {p} {size}
  perfcompose measure --name sum --at x=1000,2000 -o blocks.txt --time-from 'took ([0-9.]+) (ms)' -- ./sum {x}
  perfcompose measure --name grep --at x=1,2 -o blocks.txt --shell --prepare 'make input-{x}' -- 'grep -c a input-{x} > /dev/null'")]
pub struct Args {
    /// The block's name: the callpath of its series in the file (what a components
    /// file's `callpath = "NAME"` picks).
    #[arg(long, value_name = "NAME")]
    pub name: String,
    /// Measure at NAME=V1,V2,... (numbers or constant expressions such as 2^10); repeat
    /// for a grid over several names (the product; the first varies slowest). `{NAME}`
    /// in the command is replaced by the point's value.
    #[arg(long = "at", value_name = "NAME=V1,V2,...", required = true)]
    pub at: Vec<String>,
    /// Add the measurements to FILE (created if missing): Extra-P's text format, or
    /// JSON Lines for a name ending in .jsonl. Written after every point.
    #[arg(long, short, value_name = "FILE")]
    pub output: PathBuf,
    /// Print JSON (schema in docs/measure.md).
    #[arg(long)]
    pub json: bool,
    #[command(flatten, next_help_heading = "How the command is timed")]
    pub timing: TimingArgs,
    /// The command and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}
