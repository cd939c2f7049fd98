//! What can go wrong in an MPI job, as the user should read it.

use std::path::PathBuf;

use perfcompose_core::comm::CalibrationError;
use perfcompose_core::Diagnostic;
use perfcompose_runtime::{BuildError, DataKind, RunFailure};

/// An error of the MPI runtime. Every one is the user's to fix (how the job was started,
/// a file, a flag); a fault inside a block ends the job instead (see [`crate::job`]).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("MPI is already initialised in this process")]
    AlreadyStarted,
    #[error("{what} needs at least {need} MPI processes, this job has {have}{}; start it as `mpirun -np {need} perfcompose …`", if *launched { "" } else { " (it was not started by mpirun)" })]
    TooFewProcesses {
        what: &'static str,
        need: usize,
        have: usize,
        /// Whether an MPI launcher started this process.
        launched: bool,
    },
    #[error("a time limit of {seconds} s is further ahead than this machine's clock reaches")]
    TimeLimit { seconds: f64 },
    /// The design does not fit this job or its blocks; the reason is the source.
    #[error("the design cannot run on MPI")]
    Design(#[from] DesignError),
    #[error("the term asks for {nodes} processes (its nodes= or procs=) but the job has {processes}; start it as `mpirun -np {nodes} perfcompose …`")]
    Nodes { nodes: usize, processes: usize },
    /// From the thread runtime: a term, a block measurement, a fit.
    #[error(transparent)]
    Runtime(#[from] perfcompose_runtime::Error),
    /// A run stopped on data it cannot use; what is the source.
    #[error("the distributed run failed")]
    Run(#[from] RunFault),
    #[error("the measurements do not give a network model: {0}")]
    Calibration(#[from] CalibrationError),
    #[error("cannot read {}", .path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write {}", .path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}:{line}:{column}: not a perfcompose network calibration: {message}")]
    Malformed {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{path}:{line}:{column}: `{}{field}` is {value:e}, and it must be {rule}; recalibrate with `mpirun -np 2 perfcompose calibrate network`", if table.is_empty() { String::new() } else { format!("{table}.") })]
    BadParameter {
        path: PathBuf,
        line: usize,
        column: usize,
        /// The object holding the field (empty: the top level).
        table: &'static str,
        field: &'static str,
        value: f64,
        rule: &'static str,
    },
    #[error("{path} is a network calibration of {found}, this perfcompose reads version {expected}; recalibrate with `mpirun -np 2 perfcompose calibrate network`")]
    Version {
        path: PathBuf,
        found: String,
        expected: u32,
    },
}

impl Error {
    /// The message and every cause's on one line (`outer: cause: its cause`), for a
    /// process that prints the error itself as it ends the job ([`crate::Job::fail`]).
    pub fn with_causes(&self) -> String {
        let mut text = self.to_string();
        let mut cause = std::error::Error::source(self);
        while let Some(c) = cause {
            text.push_str(": ");
            text.push_str(&c.to_string());
            cause = c.source();
        }
        text
    }
}

impl From<Diagnostic> for Error {
    fn from(d: Diagnostic) -> Error {
        Error::Runtime(perfcompose_runtime::Error::from(d))
    }
}

/// Why a design cannot run on the processes of a job ([`Error::Design`]). What a term
/// says wrong (a `procs=` that is not a number, a block that is not a kernel name) is a
/// located [`Diagnostic`] instead, with its caret.
#[derive(Debug, thiserror::Error)]
pub enum DesignError {
    /// A kernel that is not registered, or not of the role its place needs.
    #[error(transparent)]
    Build(#[from] BuildError),
    #[error("a square mesh needs a perfect square of processes, the job has {processes}")]
    NotSquare { processes: usize },
    #[error("a hypercube needs a power-of-two number of processes, the job has {processes}")]
    NotPowerOfTwo { processes: usize },
    #[error("matrices of order {order} do not split into blocks on a {side} × {side} mesh: use a positive multiple of {side}")]
    BlockOrder { order: usize, side: usize },
}

/// Why a distributed run stopped ([`Error::Run`]): a block gave back data of another
/// shape than its pattern needs, or a process received what it cannot use.
#[derive(Debug, thiserror::Error)]
pub enum RunFault {
    #[error("`{kernel}` did not give back its blocks [A, B, C]")]
    NoBlocksBack { kernel: String },
    #[error("{design} expects each process's problem as two blocks [A, B] of equal size")]
    NotTwoBlocks { design: String },
    #[error("`{kernel}` did not split its problem in two")]
    NotSplit { kernel: String },
    #[error("`{kernel}` split its problem in {parts} parts, not 2")]
    Parts { kernel: String, parts: usize },
    #[error(
        "the leaf and combine results of {design} must be integer arrays to exchange, got {got}"
    )]
    NotIntegers { design: String, got: DataKind },
    #[error("a local MapReduce gave no keyed collection")]
    NoCollection,
    #[error("a MapReduce job is a batch of inputs")]
    NotABatch,
    #[error("map outputs of different sizes (expected {keys} keys)")]
    UnevenMap { keys: usize },
    #[error("rank {rank} sent key {key} of {keys}")]
    ForeignKey {
        rank: usize,
        key: usize,
        keys: usize,
    },
    /// The thread runtime's MapReduce of this process stopped.
    #[error("the local MapReduce failed")]
    Local(#[source] RunFailure),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_design_error_keeps_its_reason_as_the_source_and_on_the_failing_ranks_line() {
        let e = Error::from(DesignError::NotSquare { processes: 2 });
        assert_eq!(e.to_string(), "the design cannot run on MPI");
        let source = std::error::Error::source(&e).expect("the reason");
        assert!(
            matches!(
                source.downcast_ref::<DesignError>(),
                Some(DesignError::NotSquare { processes: 2 })
            ),
            "{source}"
        );
        assert_eq!(
            e.with_causes(),
            "the design cannot run on MPI: a square mesh needs a perfect square of processes, the job has 2"
        );
    }

    #[test]
    fn a_file_error_does_not_repeat_its_cause() {
        let e = Error::Read {
            path: PathBuf::from("/x/net.json"),
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "gone"),
        };
        assert_eq!(e.with_causes(), "cannot read /x/net.json: gone");
    }
}
