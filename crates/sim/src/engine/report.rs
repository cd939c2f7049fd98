//! What a replay gives back: the per-rank and overall report, the error (with the trace
//! line at fault, or the deadlocked ranks), and progress while it runs.

use std::fmt;

use super::config::NetworkModel;
use crate::trace::TraceError;

/// Per-rank results.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct RankReport {
    pub rank: u32,
    pub host: String,
    /// Seconds spent computing (`compute`, and the computation of reductions).
    pub compute_s: f64,
    /// Seconds in `sleep` actions and `MPI_Test` injections.
    pub sleep_s: f64,
    /// Seconds blocked while a message it waits for is being transferred.
    pub communication_s: f64,
    /// Seconds blocked before its partner had posted the matching operation.
    pub waiting_s: f64,
    /// When the rank finished its trace.
    pub finish_s: f64,
    pub actions: u64,
}

/// Results of a replay.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Report {
    /// When the last rank finished (seconds).
    pub simulated_time_s: f64,
    pub ranks: Vec<RankReport>,
    /// Trace actions replayed.
    pub actions: u64,
    /// Point-to-point messages transferred (including those of collectives).
    pub messages: u64,
    /// Events processed by the simulator.
    pub events: u64,
    pub network: NetworkModel,
    pub notes: Vec<String>,
}

/// A rank stuck in a deadlock.
#[derive(Clone, Debug, PartialEq)]
pub struct BlockedRank {
    pub rank: u32,
    pub file: String,
    pub line: u64,
    /// The action, in SimGrid's syntax.
    pub action: String,
    /// What it waits for, one entry per pending request.
    pub waits: Vec<String>,
}

/// Why a replay failed.
#[derive(Clone, Debug, PartialEq)]
pub enum SimError {
    Trace(TraceError),
    Deadlock {
        time: f64,
        blocked: Vec<BlockedRank>,
    },
    /// A problem with one action (no route, bad collective, ...).
    Action {
        file: String,
        line: u64,
        rank: u32,
        action: String,
        message: String,
        hint: Option<String>,
    },
    Setup(String),
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Trace(e) => write!(f, "{e}"),
            SimError::Deadlock { time, blocked } => {
                writeln!(
                    f,
                    "deadlock at simulated time {time:.9} s: {} rank(s) wait for messages nobody will send",
                    blocked.len()
                )?;
                for b in blocked {
                    writeln!(
                        f,
                        "  rank {} at {}:{}: `{}`",
                        b.rank, b.file, b.line, b.action
                    )?;
                    for w in &b.waits {
                        writeln!(f, "      waits for {w}")?;
                    }
                }
                Ok(())
            }
            SimError::Action {
                file,
                line,
                rank,
                action,
                message,
                hint,
            } => {
                write!(
                    f,
                    "{message}\n  --> {file}:{line} (rank {rank}): `{action}`"
                )?;
                if let Some(h) = hint {
                    write!(f, "\n  = hint: {h}")?;
                }
                Ok(())
            }
            SimError::Setup(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for SimError {}

impl From<TraceError> for SimError {
    fn from(e: TraceError) -> Self {
        SimError::Trace(e)
    }
}
/// Progress of a running replay (for a progress bar).
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    pub bytes_read: u64,
    pub actions: u64,
    pub simulated_time: f64,
}
