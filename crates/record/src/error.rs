//! What can go wrong between the raw logs and the traces.

use std::path::PathBuf;

/// An error of this crate, naming the file it is about.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot read {}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write {}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{} (byte {offset}): {kind}", path.display())]
    Raw {
        path: PathBuf,
        offset: u64,
        kind: RawError,
    },
    #[error(transparent)]
    Set(#[from] SetError),
    #[error("{}:{line}:{column}: not a measured.json of `perfcompose record`", path.display())]
    Json {
        path: PathBuf,
        line: usize,
        column: usize,
        #[source]
        source: serde_json::Error,
    },
    #[error("{} is measured.json version {}, this perfcompose reads version {expected}; record again", path.display(), found.map_or("(none)".to_string(), |v| v.to_string()))]
    Version {
        path: PathBuf,
        found: Option<u32>,
        expected: u32,
    },
}

/// A raw log that is not what the library writes.
#[derive(Debug, thiserror::Error)]
pub enum RawError {
    #[error("not a raw log of `perfcompose record` (it does not start with its magic)")]
    BadMagic,
    #[error("the file ends in the middle of a record")]
    Truncated,
    #[error("unknown record kind {0}")]
    UnknownKind(u32),
    #[error("a record with {0} extra values (too many)")]
    TooLarge(u32),
    #[error("the log does not start with the process's start record")]
    NoStart,
    #[error("world rank {rank} of {size} is not a rank")]
    BadRank { rank: i64, size: i64 },
    #[error("rank {rank} of a communicator of {size} is out of range")]
    BadCommRank { rank: i64, size: usize },
    #[error("communicator {0} is used before its members were logged")]
    UnknownComm(i64),
    #[error("unknown collective {0}")]
    UnknownColl(i64),
    #[error("a collective on {size} processes with {got} per-process counts")]
    BadCounts { size: usize, got: usize },
    #[error("a record of kind {0:?} with malformed fields")]
    Malformed(crate::raw::Kind),
}

/// A recording whose logs do not make one MPI job.
#[derive(Debug, thiserror::Error)]
pub enum SetError {
    #[error(
        "no process called MPI_Init under the recorder (no raw log in {}); is the command an MPI \
         program linked dynamically against the MPI library, started by a launcher that passes \
         the environment (LD_PRELOAD, PERFCOMPOSE_RECORD_DIR) on? Programs written with \
         `use mpi_f08` are not recorded",
        dir.display()
    )]
    NoProcesses { dir: PathBuf },
    #[error("ranks {missing:?} of {size} left no log (their process did not call MPI_Init under the recorder, or could not write its log)")]
    MissingRanks { missing: Vec<u32>, size: u32 },
    #[error("two processes claim world rank {rank} ({} and {}): the command ran more than one MPI job", first.display(), second.display())]
    DuplicateRank {
        rank: u32,
        first: PathBuf,
        second: PathBuf,
    },
    #[error("the logs disagree on the number of processes ({first} and {second}): the command ran more than one MPI job")]
    SizeMismatch { first: u32, second: u32 },
    #[error("rank {rank} did not reach MPI_Finalize (its log {} ends before it)", path.display())]
    Unfinished { rank: u32, path: PathBuf },
}
