//! What can go wrong in an MPI job, as the user should read it.

use std::path::PathBuf;

use perfcompose_core::comm::CalibrationError;
use perfcompose_core::Diagnostic;

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
    #[error("{0}")]
    Options(String),
    #[error("the design cannot run on MPI: {0}")]
    Design(String),
    #[error("the term asks for {nodes} processes (its nodes= or procs=) but the job has {processes}; start it as `mpirun -np {nodes} perfcompose …`")]
    Nodes { nodes: usize, processes: usize },
    /// From the thread runtime: a term, a block measurement, a fit.
    #[error(transparent)]
    Runtime(#[from] perfcompose_runtime::Error),
    #[error("the distributed run failed: {0}")]
    Run(String),
    #[error("the measurements do not give a network model: {0}")]
    Calibration(#[from] CalibrationError),
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write {path}: {source}")]
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

impl From<Diagnostic> for Error {
    fn from(d: Diagnostic) -> Error {
        Error::Runtime(perfcompose_runtime::Error::from(d))
    }
}
