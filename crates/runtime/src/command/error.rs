//! Why measuring a command failed.

use std::fmt;
use std::io;
use std::process::ExitStatus;

/// Lines of a failed command's stderr (or output) an error shows.
pub const TAIL_LINES: usize = 10;

/// A command that could not be measured. Every variant that ran something names the
/// command line as run and the point.
#[derive(Debug)]
pub enum CommandError {
    /// A placeholder or a word of the command line is wrong (before anything runs).
    Line { message: String, hint: String },
    /// A parameter of the grid that neither the command nor `--prepare` gets: every
    /// point would run the same command (before anything runs).
    UnusedParameter { parameter: String },
    /// `--time-from` is not a usable regular expression.
    Pattern { pattern: String, message: String },
    /// The program could not be started (e.g. no such executable): the system's reason
    /// is the source.
    Spawn {
        command: String,
        point: String,
        source: io::Error,
    },
    /// The program ended with a non-zero status or by a signal.
    Failed {
        command: String,
        point: String,
        status: ExitStatus,
        stderr: Vec<String>,
    },
    /// `--time-from` found no time in the program's output.
    NoTime {
        command: String,
        point: String,
        pattern: String,
        output: Vec<String>,
    },
    /// `--time-from` matched, but not a time.
    BadTime {
        command: String,
        point: String,
        text: String,
        why: String,
    },
}

impl CommandError {
    /// A hint for users, where one helps.
    pub fn hint(&self) -> Option<String> {
        match self {
            CommandError::Line { hint, .. } => Some(hint.clone()),
            CommandError::UnusedParameter { parameter } => Some(format!(
                "put {{{parameter}}} where the program takes the value, e.g. -- ./myblock {{{parameter}}} (with --shell: 'N={{{parameter}}} ./myblock')"
            )),
            CommandError::Pattern { .. } => Some(
                "the first group captures the number, an optional second one its unit (ns, us, µs, ms, s), e.g. --time-from 'took ([0-9.e+-]+) ?(ms|s)'".into(),
            ),
            CommandError::Spawn { .. } => Some(
                "give the path of an executable (./prog), or run the words through sh -c with --shell".into(),
            ),
            CommandError::NoTime { .. } => {
                Some("the pattern is searched in the standard output, then in the standard error".into())
            }
            _ => None,
        }
    }
}

fn tail(f: &mut fmt::Formatter<'_>, what: &str, lines: &[String]) -> fmt::Result {
    if lines.is_empty() {
        return write!(f, "; its {what} was empty");
    }
    write!(f, "; the last lines of its {what}:")?;
    for l in lines {
        write!(f, "\n  | {l}")?;
    }
    Ok(())
}

impl fmt::Display for CommandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CommandError::Line { message, .. } => f.write_str(message),
            CommandError::UnusedParameter { parameter } => write!(
                f,
                "the command has no `{{{parameter}}}` (nor --prepare): the points of --at {parameter}=... would all run the same command"
            ),
            CommandError::Pattern { pattern, message } => {
                write!(f, "--time-from `{pattern}`: {message}")
            }
            CommandError::Spawn { command, point, .. } => {
                write!(f, "cannot start `{command}` at {point}")
            }
            CommandError::Failed {
                command,
                point,
                status,
                stderr,
            } => {
                write!(f, "`{command}` failed at {point} ({status})")?;
                tail(f, "standard error", stderr)
            }
            CommandError::NoTime {
                command,
                point,
                pattern,
                output,
            } => {
                write!(
                    f,
                    "`{command}` at {point}: --time-from `{pattern}` matched nothing in its output"
                )?;
                tail(f, "output", output)
            }
            CommandError::BadTime {
                command,
                point,
                text,
                why,
            } => write!(
                f,
                "`{command}` at {point}: --time-from matched `{text}`, which is not a time: {why}"
            ),
        }
    }
}

impl std::error::Error for CommandError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CommandError::Spawn { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// The last [`TAIL_LINES`] non-empty lines of `text`.
pub(super) fn last_lines(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(TAIL_LINES)..]
        .iter()
        .map(|l| l.to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_names_the_command_the_point_and_the_last_stderr_lines() {
        let stderr: String = (1..=15).map(|i| format!("line {i}\n\n")).collect();
        let e = CommandError::Failed {
            command: "./sort 1000".into(),
            point: "x=1000".into(),
            status: std::os::unix::process::ExitStatusExt::from_raw(3 << 8),
            stderr: last_lines(&stderr),
        };
        let text = e.to_string();
        assert!(
            text.starts_with("`./sort 1000` failed at x=1000 (exit status: 3); the last lines of its standard error:\n  | line 6\n"),
            "{text}"
        );
        assert!(text.ends_with("  | line 15"), "{text}");
        assert!(!text.contains("line 5\n"), "{text}");
    }
}
