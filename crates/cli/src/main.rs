//! The `perfcompose` binary: glue only.
//!
//! Parses flags (clap), dispatches to one module per subcommand under `cmd/`, and turns
//! every error into a message on stderr with exit status 2 (user errors: bad files,
//! bad terms, bad flags) — except a closed standard output (`perfcompose ... | head`),
//! which ends the command quietly with status 0. Under `mpirun`, an error every rank
//! meets alike (a flag) is printed by rank 0 alone. All logic lives in the library
//! crates.
#![cfg_attr(not(test), deny(clippy::print_stdout, clippy::print_stderr))]

mod cmd;
mod report;

use std::io::Write as _;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Predict the performance of parallel programs from models of their building blocks.
#[derive(Parser, Debug)]
#[command(name = "perfcompose", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Compose the model of a design from component models and evaluate it.
    Predict(cmd::predict::Args),
    /// Compare two designs, or check the relational laws on the given components.
    Check(cmd::check::Args),
    /// The best design under a core budget: thread counts marked `?` chosen, and with
    /// --rewrites the designs the relational laws make comparable.
    Optimize(cmd::optimize::Args),
    /// The pattern-composition paper's tables, recomputed from its Table 1 blocks (built in).
    Demo(cmd::demo::Args),
    /// Fit performance models to measurements (Extra-P's job).
    Fit(cmd::fit::Args),
    /// Time any command over a parameter grid and add the measurements to an Extra-P
    /// file (unit performance tests of your own blocks).
    Measure(cmd::measure::Args),
    /// Unit performance tests of kernels, and measurements of whole designs.
    #[command(subcommand)]
    Bench(cmd::bench::Args),
    /// Calibrate this machine: the pattern runtime's own overhead (stored for `validate`
    /// and `predict --overhead`) or, under `mpirun`, its network.
    Calibrate(cmd::calibrate::Args),
    /// Run designs for real and compare measured with predicted performance.
    Validate(Box<cmd::validate::Args>),
    /// Replay message-passing traces on a platform description.
    Simulate(cmd::simulate::Args),
    /// Run an MPI program under a recorder and write its SimGrid traces, its measured
    /// times and a platform to replay them on: `record -o DIR -- mpirun -np P PROGRAM`.
    Record(cmd::record::Args),
    /// Pictures of models, designs, validations and replays as one HTML file.
    Report(cmd::report::Args),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // Under `mpirun` every rank parses the same flags: rank 0 alone says what is
        // wrong (or prints the help), the others end with the same status.
        Err(e) if perfcompose_runtime::host::launcher_rank().is_some_and(|r| r != 0) => {
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
        }
        Err(e) => e.exit(),
    };
    let result = match cli.command {
        Command::Predict(a) => cmd::predict::run(a),
        Command::Check(a) => cmd::check::run(a),
        Command::Optimize(a) => cmd::optimize::run(a),
        Command::Demo(a) => cmd::demo::run(a),
        Command::Fit(a) => cmd::fit::run(a),
        Command::Measure(a) => cmd::measure::run(a),
        Command::Bench(a) => cmd::bench::run(a),
        Command::Calibrate(a) => cmd::calibrate::run(a),
        Command::Validate(a) => cmd::validate::run(*a),
        Command::Simulate(a) => cmd::simulate::run(a),
        Command::Record(a) => cmd::record::run(a),
        Command::Report(a) => cmd::report::run(a),
    };
    // Flush here rather than at exit, where a failed flush would go unnoticed.
    let result = result.and_then(|()| Ok(std::io::stdout().flush()?));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // The reader of our output went away: nothing left to do, nothing to complain about.
        Err(e) if report::is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) if report::is_reported_elsewhere(&e) => ExitCode::from(2),
        Err(e) => {
            report::print_error(&e);
            ExitCode::from(2)
        }
    }
}
