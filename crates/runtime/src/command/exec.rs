//! Starting a process and timing it: the [`Executor`] trait, and [`System`], which
//! starts real processes. Tests put a script of outcomes in its place.

use std::io;
use std::process::{Command, ExitStatus, Stdio};
use std::time::Instant;

/// What one run of a process gave.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// From just before the process was started to just after it ended, ns.
    pub wall_ns: f64,
    /// How it ended (`exit status: 1`, `signal: 9 (SIGKILL)`).
    pub status: ExitStatus,
    /// The standard output (empty unless asked for).
    pub stdout: String,
    pub stderr: String,
}

/// Runs processes.
pub trait Executor {
    /// Run `argv` (program and arguments) to its end, its standard input empty, keeping
    /// its standard error and, with `capture_stdout`, its standard output (discarded
    /// otherwise). `Err`: it could not be started.
    fn run(&mut self, argv: &[String], capture_stdout: bool) -> io::Result<Outcome>;
}

/// The operating system's processes, started directly (no shell in between).
#[derive(Clone, Copy, Debug, Default)]
pub struct System;

impl Executor for System {
    fn run(&mut self, argv: &[String], capture_stdout: bool) -> io::Result<Outcome> {
        let Some((program, args)) = argv.split_first() else {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "empty command"));
        };
        let mut c = Command::new(program);
        c.args(args)
            .stdin(Stdio::null())
            .stdout(if capture_stdout {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stderr(Stdio::piped());
        let start = Instant::now();
        let child = c.spawn()?;
        let out = child.wait_with_output()?;
        let wall_ns = start.elapsed().as_nanos() as f64;
        Ok(Outcome {
            wall_ns,
            status: out.status,
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        })
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn argv(w: &[&str]) -> Vec<String> {
        w.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_process_runs_directly_with_its_output_kept_when_asked() {
        let o = System
            .run(&argv(&["sh", "-c", "echo out; echo err >&2; exit 3"]), true)
            .unwrap();
        assert_eq!(o.status.code(), Some(3), "{}", o.status);
        assert_eq!((o.stdout.as_str(), o.stderr.as_str()), ("out\n", "err\n"));
        assert!(o.wall_ns > 0.0);
        let o = System.run(&argv(&["echo", "{x} $HOME"]), false).unwrap();
        assert!(o.status.success() && o.stdout.is_empty());
        let e = System
            .run(&argv(&["/nonexistent/perfcompose-test"]), false)
            .unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
    }
}
