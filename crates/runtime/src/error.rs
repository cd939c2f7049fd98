//! Error types of the runtime: building a program, running it, and kernels.
//!
//! A run that fails still accounts for every element it was given (see [`RunError`]):
//! the contract is that no element is lost or duplicated, even when a block panics.

use std::fmt;

use perfcompose_core::diag::Diagnostic;

/// A program could not be built from a pattern or a plan.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    #[error("{pattern} needs at least one thread, got 0")]
    ZeroThreads { pattern: String },
    #[error("unknown kernel `{name}`")]
    UnknownKernel {
        name: String,
        /// Registered kernels, for the hint.
        known: Vec<String>,
    },
    #[error("kernel `{name}` is a {role} kernel and cannot be used as {used_as}")]
    WrongRole {
        name: String,
        role: String,
        used_as: String,
    },
    #[error("{what} has no runtime implementation: {why}")]
    Unsupported { what: String, why: String },
    #[error("{at}: {message}")]
    TypeMismatch { at: String, message: String },
}

impl BuildError {
    /// A hint for users (which kernels exist, how to rewrite a term).
    pub fn hint(&self) -> Option<String> {
        match self {
            BuildError::UnknownKernel { known, .. } => {
                Some(format!("registered kernels: {}", known.join(", ")))
            }
            BuildError::ZeroThreads { .. } => Some("use a thread count of 1 or more".into()),
            _ => None,
        }
    }
}

/// A kernel refused its input or could not produce it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KernelError {
    #[error("kernel `{kernel}`: {message}")]
    BadInput { kernel: String, message: String },
    #[error("{what} needs {needed_bytes} bytes, more than the {limit_bytes} bytes allowed")]
    TooLarge {
        what: String,
        needed_bytes: u128,
        limit_bytes: u128,
    },
    #[error("out of memory allocating {what} ({bytes} bytes)")]
    OutOfMemory { what: String, bytes: u128 },
}

/// One element that failed: the block that panicked and its message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    /// Position of the element in the input stream (0-based).
    pub seq: u64,
    /// Name of the block (or pattern) that failed.
    pub stage: String,
    /// The panic message.
    pub message: String,
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "block `{}` panicked on element {}: {}",
            self.stage, self.seq, self.message
        )
    }
}

/// A run that stopped because one or more elements failed.
///
/// Accounting (tested): `delivered.len() + faults.len() == fed`, every index below `fed`
/// appears exactly once in `delivered` or `faults`. The input iterator is read at most one
/// element beyond `fed` (the driver's look-ahead; that element never reaches a block).
/// Elements already in flight when the first fault happened are finished and delivered;
/// no new element is fed after the driver sees the fault.
#[derive(Debug)]
pub struct RunError<O> {
    pub faults: Vec<Fault>,
    /// Elements that completed, with their input position, in input order.
    pub delivered: Vec<(u64, O)>,
    /// How many elements were taken from the input before the run stopped.
    pub fed: u64,
}

impl<O> fmt::Display for RunError<O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let first = &self.faults[0];
        write!(f, "{first}")?;
        if self.faults.len() > 1 {
            write!(f, " (and {} more failed elements)", self.faults.len() - 1)?;
        }
        write!(
            f,
            "; {} of {} fed elements completed, the run was stopped",
            self.delivered.len(),
            self.fed
        )
    }
}

impl<O: fmt::Debug> std::error::Error for RunError<O> {}

/// Everything that can go wrong in the runtime, for callers that do not care which layer.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Build(#[from] BuildError),
    #[error(transparent)]
    Kernel(#[from] KernelError),
    /// Input the user wrote (a term, `--only`, a suite file, a saved run) is malformed:
    /// located, so that the binary can show the line with a caret under the problem.
    #[error("{}", .0.render())]
    Input(Box<Diagnostic>),
    /// A measurement or a run failed (a block panicked, a harness thread died, ...).
    #[error("{0}")]
    Run(String),
    #[error("{0}")]
    Io(String),
}

impl From<Diagnostic> for Error {
    fn from(d: Diagnostic) -> Error {
        Error::Input(Box::new(d))
    }
}

impl<O> From<RunError<O>> for Error {
    fn from(e: RunError<O>) -> Error {
        Error::Run(e.to_string())
    }
}
