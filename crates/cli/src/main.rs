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
mod version;

use std::io::Write as _;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Predict the performance of parallel programs from models of their building blocks.
#[derive(Parser, Debug)]
#[command(
    name = "perfcompose",
    version = version::VERSION,
    about = "Predict the performance of parallel programs from models of their building blocks: measure and fit the blocks, compose a design, check it against the real run.",
    long_about = None
)]
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

/// The command line's parser: `Cli`'s, where every option that takes a value takes a
/// negative number as one (`--target -1` is then refused by the option's own check,
/// instead of clap reading `-1` as a flag and suggesting `-- -1`, which would start the
/// measured command).
pub fn command() -> clap::Command {
    fn negative_values(cmd: clap::Command) -> clap::Command {
        cmd.mut_args(|a| {
            if a.get_action().takes_values() && !a.is_positional() {
                a.allow_negative_numbers(true)
            } else {
                a
            }
        })
        .mut_subcommands(negative_values)
    }
    negative_values(<Cli as clap::CommandFactory>::command())
}

/// Parse `args` (the program's name first) with [`command`].
fn parse(args: impl IntoIterator<Item = std::ffi::OsString>) -> Result<Cli, clap::Error> {
    let matches = command().try_get_matches_from(args)?;
    <Cli as clap::FromArgMatches>::from_arg_matches(&matches)
}

fn main() -> ExitCode {
    let cli = match parse(std::env::args_os()) {
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

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use clap::error::ErrorKind;

    use super::*;

    /// The words of a command as a user would type it (single and double quotes group).
    fn words(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut word = String::new();
        let mut quote = None;
        for c in text.chars() {
            match (quote, c) {
                (None, '\'' | '"') => quote = Some(c),
                (Some(q), c) if c == q => quote = None,
                (None, c) if c.is_whitespace() => {
                    if !word.is_empty() {
                        out.push(std::mem::take(&mut word));
                    }
                }
                _ => word.push(c),
            }
        }
        if !word.is_empty() {
            out.push(word);
        }
        out
    }

    /// Every `` `perfcompose ...` `` in `text`: the commands hints and notes name.
    fn named_commands(text: &str) -> Vec<String> {
        text.split('`')
            .skip(1)
            .step_by(2)
            .filter(|s| s.starts_with("perfcompose "))
            // A format string's `{}` (`calibrate overhead{}`) adds flags at run time.
            .map(|s| s.replace("{}", ""))
            .collect()
    }

    /// Whether `perfcompose` parses `command`: a hint may leave out required arguments,
    /// nothing else (no unknown command, flag or value).
    fn parses(command: &str) -> Result<(), String> {
        match parse(words(command).into_iter().map(Into::into)) {
            Ok(_) => Ok(()),
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::MissingRequiredArgument
                        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
                ) =>
            {
                Ok(())
            }
            // A hint that names a flag without its value (`simulate --timeline`).
            Err(e)
                if e.kind() == ErrorKind::InvalidValue
                    && words(command).last().is_some_and(|w| w.starts_with("--")) =>
            {
                Ok(())
            }
            Err(e) => Err(format!("`{command}`: {}", e.kind())),
        }
    }

    fn files_under(dir: &Path, keep: &dyn Fn(&Path) -> bool, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                files_under(&p, keep, out);
            } else if keep(&p) {
                out.push(p);
            }
        }
    }

    /// Every command a hint names parses: those in the golden cases' expected output
    /// (`testdata/*/*/stderr`, `stdout`), and those in the sources' messages.
    #[test]
    fn every_command_a_hint_names_exists() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut files = Vec::new();
        files_under(
            &root.join("testdata"),
            &|p| {
                matches!(
                    p.file_name().and_then(|n| n.to_str()),
                    Some("stderr" | "stdout")
                )
            },
            &mut files,
        );
        let golden = files.len();
        assert!(golden > 50, "only {golden} golden outputs found");
        files_under(
            &root.join("crates"),
            &|p| {
                p.extension().is_some_and(|e| e == "rs")
                    && p.components().any(|c| c.as_os_str() == "src")
            },
            &mut files,
        );
        let mut named = 0;
        let mut bad = Vec::new();
        for f in &files {
            let text = std::fs::read_to_string(f).unwrap_or_default();
            // The sources' messages, not their comments.
            let text: String = text
                .lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .map(|l| format!("{l}\n"))
                .collect();
            for c in named_commands(&text) {
                named += 1;
                if let Err(e) = parses(&c) {
                    bad.push(format!("{}: {e}", f.display()));
                }
            }
        }
        assert!(named >= 20, "only {named} commands found");
        assert!(
            bad.is_empty(),
            "hints name commands that do not parse:\n{}",
            bad.join("\n")
        );
    }

    /// `--target -1` is the option's value (refused by its own check), not a flag that
    /// clap would suggest to pass as `-- -1` (which starts the measured command): in
    /// every command, for every option that takes a value.
    #[test]
    fn every_option_that_takes_a_value_takes_a_negative_number() {
        fn visit(cmd: &clap::Command, path: Vec<String>, bad: &mut Vec<String>) {
            for a in cmd.get_arguments() {
                let Some(long) = a.get_long() else { continue };
                if a.is_positional() || !a.get_action().takes_values() {
                    continue;
                }
                let mut args = path.clone();
                args.extend([format!("--{long}"), "-1".into()]);
                if let Err(e) = parse(args.iter().map(Into::into)) {
                    if matches!(e.kind(), ErrorKind::UnknownArgument)
                        || e.to_string().contains("-- -1")
                    {
                        bad.push(args.join(" "));
                    }
                }
            }
            for sub in cmd.get_subcommands() {
                let mut p = path.clone();
                p.push(sub.get_name().to_string());
                visit(sub, p, bad);
            }
        }
        let mut bad = Vec::new();
        visit(&command(), vec!["perfcompose".into()], &mut bad);
        assert!(bad.is_empty(), "read -1 as a flag:\n{}", bad.join("\n"));
    }

    /// `validate --help` prints its own flags first, then each group once under its
    /// heading (not 30 options in one list). Help texts wrap by the terminal's width
    /// in some builds, so this checks the headings, not a golden text.
    #[test]
    fn validate_help_groups_its_flags_under_headings() {
        let mut cmd = command();
        let help = cmd
            .find_subcommand_mut("validate")
            .unwrap()
            .render_help()
            .to_string();
        let at = |s: &str| {
            help.find(s)
                .unwrap_or_else(|| panic!("no `{s}` in\n{help}"))
        };
        let timing = at("Timing your own program (a command after --):");
        let runtime = at("The pattern runtime (designs perfcompose runs itself):");
        let distributed = at("Distributed runs (under mpirun):");
        assert!(at("--suite") < distributed && distributed < at("--time-limit"));
        assert!(runtime < at("--no-pin") && at("--no-pin") < timing);
        assert!(timing < at("--time-from") && timing < at("--max-reps"));
        assert_eq!(help.matches("--time-from").count(), 1, "{help}");
        let measure = command()
            .find_subcommand_mut("measure")
            .unwrap()
            .render_help()
            .to_string();
        assert!(measure.find("How the command is timed:") < measure.find("--time-from"));
    }

    /// The top-level help names every command (its about line lists none, so that it
    /// cannot fall behind).
    #[test]
    fn the_help_names_every_command() {
        let help = command().render_help().to_string();
        for sub in command().get_subcommands() {
            assert!(help.contains(&format!("  {} ", sub.get_name())), "{help}");
        }
        assert!(!help.contains("predict, check, fit"), "{help}");
    }
}
