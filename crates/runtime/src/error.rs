//! Error types of the runtime: building a program, running it, and kernels.
//!
//! A run that fails still accounts for every element it was given (see [`RunError`]):
//! the contract is that no element is lost or duplicated, even when a block panics.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use perfcompose_core::diag::Diagnostic;
use perfcompose_core::fit::FitError;
use perfcompose_core::measure::WriteError;

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

/// What [`Error::Run`] keeps of a [`RunError`]: the faults and how far the run got,
/// without the outputs (whose type the error cannot name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunFailure {
    pub faults: Vec<Fault>,
    /// How many elements completed.
    pub delivered: usize,
    /// How many elements were taken from the input before the run stopped.
    pub fed: u64,
}

impl fmt::Display for RunFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(first) = self.faults.first() {
            write!(f, "{first}")?;
        }
        if self.faults.len() > 1 {
            write!(f, " (and {} more failed elements)", self.faults.len() - 1)?;
        }
        write!(
            f,
            "; {} of {} fed elements completed, the run was stopped",
            self.delivered, self.fed
        )
    }
}

impl std::error::Error for RunFailure {}

impl<O> From<RunError<O>> for RunFailure {
    fn from(e: RunError<O>) -> RunFailure {
        RunFailure {
            faults: e.faults,
            delivered: e.delivered.len(),
            fed: e.fed,
        }
    }
}

/// A block's unit test that cannot be built or run as asked: the conditions do not fit
/// the builder, or the blocks do not fit the test.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnitTestError {
    #[error("`{kernel}` as stage {} of {} is timed next to the other stages: build its test with KernelSampler::staged", .index + 1, .kernels.join(", "))]
    NeedsStaged {
        kernel: String,
        /// The stage's position (0-based) among `kernels`.
        index: usize,
        kernels: Vec<String>,
    },
    #[error("`{kernel}` as block {} of seq({}) is timed in that seq: build its test with KernelSampler::replicated", .index + 1, .kernels.join(", "))]
    NeedsReplicated {
        kernel: String,
        /// The block's position (0-based) among `kernels`.
        index: usize,
        kernels: Vec<String>,
    },
    #[error("a stage's unit test needs the pipeline it is a stage of")]
    NoPipeline,
    #[error("a replica block's unit test needs the seq it is a block of")]
    NoSeq,
    /// The timed part's position is past the end of the whole (`stage 3 of a pipeline of
    /// 2 stages`).
    #[error("{part} {} of a {whole} of {count} {part}s", .index + 1)]
    NoSuchPart {
        part: &'static str,
        whole: &'static str,
        /// 0-based.
        index: usize,
        count: usize,
    },
    #[error("no element reached `{stage}` in its pipeline")]
    Starved { stage: String },
    #[error("`{kernel}` made {made} instead of {keys} counts for {keys} values; a per-key reduction's test gathers keyed counts")]
    NotCounts {
        kernel: String,
        made: crate::data::DataKind,
        keys: usize,
    },
    #[error("the `{kernel}` unit test took no repetition")]
    NoRepetition { kernel: String },
}

/// A measuring thread that ended by a panic its block's own catch did not see.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LostThread {
    #[error("a thread of a stage's unit test failed")]
    Stage,
    /// `ran` says what the siblings ran (`kernel `inc``, `a block of seq(a, b)`).
    #[error("{ran} panicked on a sibling thread")]
    Sibling { ran: String },
    #[error("the timed thread of `{kernel}`'s test failed")]
    Timed { kernel: String },
    #[error("`{kernel}` panicked while sampling the cores' speed states")]
    CoreStates { kernel: String },
}

/// What was being done to a file that failed ([`Error::File`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileAction {
    Read,
    Write,
    Create,
}

impl fmt::Display for FileAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FileAction::Read => "read",
            FileAction::Write => "write",
            FileAction::Create => "create",
        })
    }
}

/// Everything that can go wrong in the runtime, for callers that do not care which layer.
/// A variant with a cause returns it from [`std::error::Error::source`] (and does not
/// repeat it in its message), so that a printer of the cause chain shows each once.
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
    /// A run stopped because elements failed (a block panicked).
    #[error(transparent)]
    Run(#[from] RunFailure),
    /// A block panicked in its unit test; `message` is the panic's.
    #[error("kernel `{kernel}` panicked: {message}")]
    Panicked { kernel: String, message: String },
    #[error(transparent)]
    Thread(#[from] LostThread),
    #[error(transparent)]
    UnitTest(#[from] UnitTestError),
    /// A command of the user's (a program design of a suite file) failed.
    #[error(transparent)]
    Command(#[from] crate::command::CommandError),
    /// A file or folder that could not be read, written or created.
    #[error("cannot {action} {}", .path.display())]
    File {
        action: FileAction,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// A value that could not be written as JSON to `path`.
    #[error("cannot write {} as JSON", .path.display())]
    Json {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    /// Measurements that Extra-P's text format cannot hold.
    #[error("cannot write the measurements as Extra-P text")]
    ExtrapText(#[source] WriteError),
    /// An overhead calibration file that cannot be read, written or used.
    #[error(transparent)]
    Calibration(#[from] crate::overhead::FileError),
    /// `dir` holds no saved validation run: its manifest `path` cannot be read.
    #[error("{} is not a saved validation run (cannot read {}); save one with `perfcompose validate --save DIR`", .dir.display(), .path.display())]
    NotSaved {
        dir: PathBuf,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// A saved run measured a configuration but not one of its blocks.
    #[error("{}: the saved measurements have configuration `{configuration}` but not its block `{block}` (callpath `{callpath}`)", .dir.display())]
    MissingBlock {
        dir: PathBuf,
        configuration: String,
        block: String,
        callpath: String,
    },
    /// A saved run measured none of the suite's configurations.
    #[error("{} has none of the {count} configurations of suite `{suite}`", .dir.display())]
    NoConfiguration {
        dir: PathBuf,
        count: usize,
        suite: String,
    },
    #[error("a calibration needs at least one element and one repetition, not {elements} and {repetitions}")]
    EmptyCalibration { elements: usize, repetitions: usize },
    #[error("unknown modeler `{name}`")]
    UnknownModeler { name: String },
    #[error("cannot fit `{series}`")]
    Fit {
        series: String,
        #[source]
        source: FitError,
    },
    /// A block a design places has no fitted model.
    #[error("no model of block `{block}`")]
    NoModel { block: String },
}

impl Error {
    /// A failed read, write or creation of `path`.
    pub fn file(action: FileAction, path: &Path) -> impl FnOnce(io::Error) -> Error + '_ {
        move |source| Error::File {
            action,
            path: path.to_path_buf(),
            source,
        }
    }
}

impl From<Diagnostic> for Error {
    fn from(d: Diagnostic) -> Error {
        Error::Input(Box::new(d))
    }
}

impl<O> From<RunError<O>> for Error {
    fn from(e: RunError<O>) -> Error {
        Error::Run(e.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stopped_run_keeps_its_faults_typed_with_the_same_message() {
        let fault = Fault {
            seq: 3,
            stage: "qsort".into(),
            message: "boom".into(),
        };
        let run = RunError {
            faults: vec![fault.clone()],
            delivered: vec![(0, 'a'), (1, 'b')],
            fed: 4,
        };
        let text = run.to_string();
        let e = Error::from(run);
        let Error::Run(failure) = &e else {
            panic!("a run's faults are Error::Run: {e:?}");
        };
        assert_eq!(failure.faults, [fault]);
        assert_eq!((failure.delivered, failure.fed), (2, 4));
        assert_eq!(e.to_string(), text);
    }

    #[test]
    fn a_file_error_names_the_path_and_keeps_the_system_error_as_its_source() {
        let io = io::Error::new(io::ErrorKind::PermissionDenied, "denied");
        let e = Error::file(FileAction::Create, Path::new("/x/y"))(io);
        assert_eq!(e.to_string(), "cannot create /x/y");
        let source = std::error::Error::source(&e).expect("the io::Error");
        assert_eq!(
            source.downcast_ref::<io::Error>().map(io::Error::kind),
            Some(io::ErrorKind::PermissionDenied)
        );
    }

    #[test]
    fn a_failed_fit_names_the_series_and_keeps_the_fitters_reason() {
        let e = Error::Fit {
            series: "qsort".into(),
            source: FitError::NoPoints,
        };
        assert_eq!(e.to_string(), "cannot fit `qsort`");
        let source = std::error::Error::source(&e).expect("the fit's error");
        assert_eq!(source.downcast_ref::<FitError>(), Some(&FitError::NoPoints));
    }
}
