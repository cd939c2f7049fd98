//! A replay's timeline: what each rank did when, in simulated time, and writers for the
//! viewers people already use — Chrome's trace-event JSON ([`chrome`]: Perfetto,
//! chrome://tracing) and Paje ([`paje`]: Vite, as SimGrid writes it).
//!
//! The engine records a [`Span`] whenever a rank stops being busy (compute, sleep) or
//! blocked (a send, a receive, a wait, a collective); the spans of one rank never
//! overlap. They are the same intervals the per-rank breakdown adds up.

pub mod chrome;
pub mod paje;

use crate::trace::Action;

/// What a rank was doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Activity {
    Compute,
    Sleep,
    /// Blocked on a send's transfer.
    Send,
    /// Blocked on a receive's transfer.
    Recv,
    /// Blocked in a `wait`/`waitall` on pending transfers (or at the end of its trace).
    Wait,
    /// Blocked in a collective's transfers.
    Collective,
    /// Blocked before the partner had posted the matching operation (the breakdown's
    /// "waiting").
    Late,
}

impl Activity {
    pub const ALL: [Activity; 7] = [
        Activity::Compute,
        Activity::Sleep,
        Activity::Send,
        Activity::Recv,
        Activity::Wait,
        Activity::Collective,
        Activity::Late,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Activity::Compute => "compute",
            Activity::Sleep => "sleep",
            Activity::Send => "send",
            Activity::Recv => "recv",
            Activity::Wait => "wait",
            Activity::Collective => "collective",
            Activity::Late => "late",
        }
    }

    /// Parse a [`Activity::name`].
    pub fn from_name(s: &str) -> Option<Activity> {
        Activity::ALL.into_iter().find(|a| a.name() == s)
    }
}

/// One interval of one rank. `action` is the trace action it belongs to (`bcast`,
/// `isend`, ..., or `finalize` for the wait at the end of a trace).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Span {
    pub rank: u32,
    pub activity: Activity,
    pub action: &'static str,
    pub start: f64,
    pub end: f64,
}

/// The name of an action and the activity of blocking in it.
pub(crate) fn blocking_activity(a: Option<&Action>) -> (&'static str, Activity) {
    use Activity as A;
    match a {
        None => ("finalize", A::Wait),
        Some(a) => match a {
            Action::Init => ("init", A::Wait),
            Action::Finalize => ("finalize", A::Wait),
            Action::NoOp => ("noop", A::Wait),
            Action::Compute { .. } => ("compute", A::Compute),
            Action::Sleep { .. } => ("sleep", A::Sleep),
            Action::Send { .. } => ("send", A::Send),
            Action::Isend { .. } => ("isend", A::Send),
            Action::Recv { .. } => ("recv", A::Recv),
            Action::Irecv { .. } => ("irecv", A::Recv),
            Action::Wait { .. } => ("wait", A::Wait),
            Action::Test { .. } => ("test", A::Wait),
            Action::WaitAll => ("waitall", A::Wait),
            Action::WaitLast => ("wait", A::Wait),
            Action::SendRecv { .. } => ("sendrecv", A::Recv),
            Action::Barrier => ("barrier", A::Collective),
            Action::Bcast { .. } => ("bcast", A::Collective),
            Action::Reduce { .. } => ("reduce", A::Collective),
            Action::AllReduce { .. } => ("allreduce", A::Collective),
            Action::AllToAll { .. } => ("alltoall", A::Collective),
            Action::Gather { .. } => ("gather", A::Collective),
            Action::AllGather { .. } => ("allgather", A::Collective),
            Action::Scatter { .. } => ("scatter", A::Collective),
        },
    }
}

/// Simulated seconds as whole nanoseconds: both writers round every instant the same
/// way, so spans that touch in the replay touch (never overlap) in the files.
pub(crate) fn nanos(t: f64) -> u64 {
    (t * 1e9).round().max(0.0) as u64
}
