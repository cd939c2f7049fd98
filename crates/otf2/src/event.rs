//! The event records of an OTF2 archive that the conversion reads, as plain values.
#![forbid(unsafe_code)]

/// OTF2's "undefined" value of a 32-bit field (`OTF2_UNDEFINED_UINT32`): a collective
/// without a root, a communicator without a parent.
pub const UNDEFINED_U32: u32 = u32::MAX;

/// One event record of a location, where it is in the location's events and when.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    /// Position among the location's events, from 1 (OTF2's event position).
    pub position: u64,
    /// Timestamp in ticks of the archive's clock.
    pub time: u64,
    pub event: Event,
}

/// The events the conversion replays or counts. Ranks are as the record names them: in
/// the communicator, or world ranks when its group has OTF2's `GLOBAL_MEMBERS` flag.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    Enter {
        region: u32,
    },
    Leave {
        region: u32,
    },
    /// A blocking send (`MPI_Send`, `MPI_Ssend`, ..., the send half of `MPI_Sendrecv`).
    MpiSend {
        receiver: u32,
        comm: u32,
        tag: u32,
        bytes: u64,
    },
    MpiIsend {
        receiver: u32,
        comm: u32,
        tag: u32,
        bytes: u64,
        request: u64,
    },
    MpiIsendComplete {
        request: u64,
    },
    /// An `MPI_Irecv` posted; its source, tag and size come with its completion
    /// ([`Event::MpiIrecv`]).
    MpiIrecvRequest {
        request: u64,
    },
    MpiRecv {
        sender: u32,
        comm: u32,
        tag: u32,
        bytes: u64,
    },
    /// The completion of an `MPI_Irecv`.
    MpiIrecv {
        sender: u32,
        comm: u32,
        tag: u32,
        bytes: u64,
        request: u64,
    },
    /// A test that found the request not complete.
    MpiRequestTest {
        request: u64,
    },
    MpiRequestCancelled {
        request: u64,
    },
    MpiCollectiveBegin,
    /// The end of a collective: what it was, on which communicator, its root (in the
    /// communicator, [`UNDEFINED_U32`] for none) and the bytes this rank sent and received
    /// by Score-P's counting (see [`crate::collective`]).
    MpiCollectiveEnd {
        op: u8,
        comm: u32,
        root: u32,
        sent: u64,
        received: u64,
    },
    /// Communication the conversion does not replay (non-blocking collectives, one-sided
    /// operations): counted, its time stays in the computation around it.
    NotReplayed {
        what: &'static str,
    },
}
