//! Why an archive could not be read or converted, naming the archive and, for an event,
//! the rank, its location and the event's position.
#![forbid(unsafe_code)]

use std::path::PathBuf;

/// An archive that could not be read or converted.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The OTF2 library refused a call (a missing, truncated or corrupted file).
    #[error("{path}: cannot read the OTF2 archive, {doing}: {message}", path = .path.display())]
    Library {
        path: PathBuf,
        /// The library function that failed.
        call: &'static str,
        /// What the reading was at, naming the archive's file where one is concerned.
        doing: String,
        /// What the library said.
        message: String,
    },
    /// The definitions do not describe an MPI run.
    #[error("{path}: {kind}", path = .path.display())]
    Definitions { path: PathBuf, kind: DefError },
    /// An event record that cannot be replayed.
    #[error(
        "{path}: rank {rank} (location {location}), event {position} at {time_s:.9} s: {kind}",
        path = .path.display()
    )]
    Event {
        path: PathBuf,
        rank: u32,
        location: u64,
        /// Position among the location's events, from 1.
        position: u64,
        /// Seconds since the archive's first tick.
        time_s: f64,
        kind: EventError,
    },
    /// The members of a communicator disagree about a collective.
    #[error("{path}: communicator {comm} ('{name}'), collective #{instance}: {kind}", path = .path.display())]
    Collective {
        path: PathBuf,
        comm: u32,
        name: String,
        /// Position among the collectives on the communicator, from 1.
        instance: u64,
        kind: CollectiveError,
    },
}

/// What is wrong with the definitions.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DefError {
    #[error("no clock properties (ticks per second) in the definitions")]
    NoClock,
    #[error("no MPI ranks: the definitions have no group of type COMM_LOCATIONS for the MPI paradigm (not a trace of an MPI program?)")]
    NoMpiRanks,
    #[error("two groups of type COMM_LOCATIONS for the MPI paradigm ({0} and {1})")]
    TwoRankLists(u32, u32),
    #[error("{0} MPI ranks; at most {max} are supported", max = perfcompose_sim::trace::MAX_RANKS)]
    TooManyRanks(usize),
    #[error("rank {rank} is location {location}, which is not defined")]
    UndefinedLocation { rank: u32, location: u64 },
    #[error("rank {rank} is location {location}, which is an earlier rank already")]
    RepeatedLocation { rank: u32, location: u64 },
    #[error("communicator {comm} ('{name}') refers to group {group}, which is not defined")]
    UndefinedGroup { comm: u32, name: String, group: u32 },
    #[error("communicator {comm} ('{name}') refers to group {group} of type {kind}, not a COMM_GROUP or COMM_SELF group")]
    NotACommGroup {
        comm: u32,
        name: String,
        group: u32,
        kind: u8,
    },
    #[error("communicator {comm} ('{name}') has member {member}, but the run has {ranks} ranks")]
    MemberOutOfRange {
        comm: u32,
        name: String,
        member: u64,
        ranks: usize,
    },
    #[error("communicator {comm} ('{name}') lists rank {rank} twice")]
    RepeatedMember { comm: u32, name: String, rank: u32 },
}

/// What is wrong with an event record.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EventError {
    #[error("communicator {0} is not defined")]
    UndefinedComm(u32),
    #[error("communicator {0} is an intercommunicator, which the conversion does not support")]
    InterComm(u32),
    #[error("region {0} is not defined")]
    UndefinedRegion(u32),
    #[error("rank {rank} of communicator {comm} ('{name}') does not exist (it has {size} ranks)")]
    RankOutOfRange {
        rank: u32,
        comm: u32,
        name: String,
        size: usize,
    },
    #[error("the rank is not a member of communicator {comm} ('{name}') it uses")]
    NotMember { comm: u32, name: String },
    #[error("{op} on communicator {comm} ('{name}') names root {root}, which is not one of its {size} ranks")]
    BadRoot {
        op: &'static str,
        comm: u32,
        name: String,
        root: u32,
        size: usize,
    },
    #[error("collective operation {0} is not one OTF2 defines")]
    UnknownCollective(u8),
}

/// How the members of a communicator disagree about one of its collectives.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CollectiveError {
    #[error("rank {rank_a} calls {op_a} where rank {rank_b} calls {op_b}")]
    Mismatch {
        rank_a: u32,
        op_a: &'static str,
        rank_b: u32,
        op_b: &'static str,
    },
    #[error("rank {rank} never reaches this {op} (its other members did)")]
    Missing { rank: u32, op: &'static str },
}
