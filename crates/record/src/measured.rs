//! `DIR/measured.json`: what a recording measured (the time of every rank and of the whole
//! run), the speed its computation was written at, and the calls it did not cover.

use serde::{Deserialize, Serialize};

/// The version of `measured.json` this crate writes and reads.
pub const MEASURED_VERSION: u32 = 1;

/// `DIR/measured.json`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Measured {
    pub version: u32,
    /// The command recorded, word by word.
    pub command: Vec<String>,
    pub processes: u32,
    /// The hosts the ranks ran on, without repeats, in rank order.
    pub hosts: Vec<String>,
    /// The speed computation was written at (flop/s): a host of this speed replays each
    /// `compute` in the time it took.
    pub flops_per_s: f64,
    /// Where that speed came from.
    pub speed_source: String,
    /// Latest entry into MPI_Finalize less earliest return from MPI_Init (s): the span a
    /// replay of the trace predicts.
    pub measured_time_s: f64,
    /// The whole command, launcher start-up and MPI_Init included (s).
    pub run_wall_s: f64,
    pub ranks: Vec<RankTime>,
    /// Calls written to the trace, over all ranks.
    pub recorded_calls: u64,
    /// Calls the recorder saw but does not cover, over all ranks.
    pub uncovered_calls: u64,
    pub uncovered: Vec<Uncovered>,
    /// The index of the traces, relative to the directory.
    pub trace: String,
    /// The platform suggested for replaying the traces here, relative to the directory.
    pub platform: String,
    /// The hostfile placing rank `r` on host `r` of that platform.
    pub hostfile: String,
    pub notes: Vec<String>,
}

/// One rank's times.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RankTime {
    pub rank: u32,
    pub host: String,
    pub pid: u32,
    /// From MPI_Init's return to MPI_Finalize's entry (s).
    pub seconds: f64,
    /// Written as computation (s).
    pub compute_s: f64,
    /// Inside the calls written to the trace (s).
    pub recorded_call_s: f64,
    pub recorded_calls: u64,
    pub actions: u64,
}

/// A call the recorder does not cover.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Uncovered {
    pub call: String,
    pub count: u64,
    /// The ranks that made it.
    pub ranks: Vec<u32>,
}

impl Measured {
    /// Read `measured.json`, checking its version.
    pub fn from_json(text: &str) -> Result<Measured, serde_json::Error> {
        serde_json::from_str(text)
    }
}
