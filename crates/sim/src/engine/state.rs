//! The simulated state: ranks, requests, flows in transfer, links as the max-min model
//! sees them, hosts' CPUs and mailboxes.

use std::collections::VecDeque;

use crate::coll::Op;
use crate::platform::HostId;
use crate::trace::Located;

pub(super) const NO_CNST: u32 = u32::MAX;

/// A route between two hosts: its links are `Sim::route_links[start..start + len]`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Route {
    pub(super) start: u32,
    pub(super) len: u32,
    pub(super) latency: f64,
    /// Narrowest bandwidth on the route.
    pub(super) min_bw: f64,
}

pub(super) struct Req {
    pub(super) owner: u32,
    pub(super) peer: u32,
    pub(super) tag: i32,
    pub(super) bytes: f64,
    pub(super) send: bool,
    pub(super) detached: bool,
    pub(super) matched: bool,
    pub(super) done: bool,
    /// Held by its owner (storage, request list or a blocking call).
    pub(super) held: bool,
    /// Its owner is blocked until it completes.
    pub(super) waiter: bool,
    pub(super) match_time: f64,
    pub(super) serial: u64,
}

/// A message in transfer. Slots are recycled, so a replay allocates no flow per message.
#[derive(Clone, Copy, Debug)]
pub(super) struct Flow {
    /// Bytes left at `last`, transferred at `rate` since.
    pub(super) remaining: f64,
    pub(super) rate: f64,
    pub(super) last: f64,
    /// Max-min sharing penalty (CM02: the route's latency).
    pub(super) penalty: f64,
    /// `1 / penalty`, its weight in a link's usage (the same bits the solver computes).
    pub(super) inv_pen: f64,
    /// The most the flow can get alone: the route's narrowest bandwidth, or less under a
    /// TCP window bound. In a max-min problem this is the variable's bound and stands in
    /// for every link that cannot bind (see `Sim::slack`).
    pub(super) cap: f64,
    /// Narrowest bandwidth on the route (the flow's share of its links' demand).
    pub(super) min_bw: f64,
    /// The route's links: `Sim::route_links[links..links + nlinks]`.
    pub(super) links: u32,
    pub(super) nlinks: u32,
    /// How many of them bind (are not `Sim::slack`) while the flow is active: 0 means
    /// it is alone, 1 that a single link joins it to others.
    pub(super) nbind: u32,
    pub(super) send: u32,
    pub(super) recv: u32,
}

/// A link as the max-min model sees it.
#[derive(Clone, Copy, Debug)]
pub(super) struct LinkState {
    pub(super) bandwidth: f64,
    /// Sum over the link's active flows of their route's narrowest bandwidth.
    pub(super) demand: f64,
    /// Component stamp of the last search that reached the link.
    pub(super) mark: u64,
    /// Its constraint in the problem being built, or `NO_CNST`.
    pub(super) cnst: u32,
    pub(super) fatpipe: bool,
    /// Not `Sim::slack`: the link joins its flows into one sharing problem. Kept up to
    /// date as flows start and end, with each flow's `nbind`.
    pub(super) binding: bool,
    /// Touched (a flow started or ended on it) since the last solve.
    pub(super) dirty: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum State {
    Running,
    /// Blocked on requests (`count` outstanding).
    Waiting,
    /// Computing or sleeping until an event.
    Busy,
    /// Finished its trace (maybe waiting for final requests when `finishing`).
    Done,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum BusyKind {
    Compute,
    Sleep,
}

pub(super) type Key = (u32, u32, i32);

pub(super) struct Rank {
    pub(super) host: HostId,
    pub(super) state: State,
    pub(super) ops: VecDeque<Op>,
    pub(super) slots: Vec<u32>,
    /// Pending trace-level requests in posting order with their (src, dst, tag) key, as
    /// SMPI's replay stores them; `None` marks a request a `test` found complete. A flat
    /// list: ranks rarely have more than a handful pending, and a map of queues allocated
    /// per message showed up in profiles.
    pub(super) storage: Vec<(Key, Option<u32>)>,
    /// Pending `irecv`/`isend` requests by recency (dPerf's `wait`): (req, serial).
    pub(super) recent_recv: Vec<(u32, u64)>,
    pub(super) recent_send: Vec<(u32, u64)>,
    pub(super) count: u32,
    pub(super) awaited: Vec<u32>,
    pub(super) block_start: f64,
    pub(super) busy_kind: BusyKind,
    /// After an `MPI_Test` injection: the request tested and its storage key.
    pub(super) pending_test: Option<(Key, u32)>,
    pub(super) finishing: bool,
    pub(super) cur: Option<Located>,
    pub(super) compute_s: f64,
    pub(super) sleep_s: f64,
    pub(super) comm_s: f64,
    pub(super) wait_s: f64,
    pub(super) finish_s: f64,
    pub(super) actions: u64,
    /// Work left of the execution on a shared host.
    pub(super) exec_left: f64,
}

pub(super) struct HostCpu {
    pub(super) speed: f64,
    pub(super) cores: u32,
    /// Ranks deployed on it (a host with no more ranks than cores never shares).
    pub(super) shared: bool,
    pub(super) running: Vec<u32>,
    pub(super) last: f64,
    pub(super) version: u32,
}

pub(super) struct Mailbox {
    pub(super) sends: VecDeque<u32>,
    pub(super) recvs: VecDeque<u32>,
}
