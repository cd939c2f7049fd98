//! The replay engine: a deterministic discrete-event simulation of MPI ranks replaying
//! their traces on a platform.
//!
//! Semantics follow SMPI (SimGrid 3.32) as `smpirun -replay` runs it, because that is what
//! users will check us against:
//!
//! - **Messages** rendezvous in the receiver's mailbox, matched in posting order by source
//!   and tag. The transfer starts when both sides have posted (SMPI's default
//!   `smpi/async-small-thresh` is 0, so there is no true eager push); it carries the payload
//!   plus a 16-byte envelope.
//! - **Detached sends**: a send below `smpi/send-is-detached-thresh` (65,536 bytes) returns
//!   at once, and waiting on it returns at once; at or above it a send completes only when
//!   the data is delivered (rendezvous). Receives always wait for the data.
//! - **Transfer time**: the route's latency (× latency factor) is paid first, then the
//!   payload flows at the rate the network model gives — the route's narrowest link
//!   (latency-bandwidth model), or a weighted max-min share of every link on the route
//!   recomputed whenever a flow starts or ends (CM02: weight = 1 / route latency, no TCP
//!   window bound when `TCP-gamma` is 0, no cross traffic).
//! - **Compute** takes flops / host speed; ranks sharing a host beyond its core count share
//!   it equally.
//! - **End of trace**: as SMPI, a rank waits for the last pending request of each
//!   (source, destination, tag) before it finishes. The simulated time is when the last
//!   rank finishes.
//!
//! Events live in a `BinaryHeap` ordered by (time, sequence number), so runs are
//! deterministic. When no event remains but ranks still wait, the trace deadlocks: the
//! error says which ranks wait on what, with the trace file and line of their action.

use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::fmt;

use crate::coll::{self, Call, Op, Selection};
use crate::lmm::{single_constraint_level, Solver};
use crate::platform::{HostId, Platform, Sharing};
use crate::trace::{
    write_action, Action, Located, ReaderOptions, TraceError, TraceReader, TraceSet,
};

/// SMPI's `smpi/send-is-detached-thresh` default (bytes).
pub const DETACHED_THRESHOLD: f64 = 65536.0;
/// SMPI adds this envelope (tag, destination, communicator) to every message's size.
pub const ENVELOPE_BYTES: f64 = 16.0;
/// SMPI's `smpi/test` default: simulated time injected by each `MPI_Test`.
pub const TEST_SLEEP: f64 = 1e-4;
/// Work left below this many seconds at the current rate counts as done (SimGrid's
/// `surf/precision`).
const TIME_PRECISION: f64 = 1e-9;
/// Recency stacks of pending requests are compacted when they reach a power of two at
/// least this long.
const RECENT_COMPACT: usize = 256;
/// A re-solve touching at least 1/BATCH_SHARE of the queued flows rebuilds the flow queue
/// once instead of moving each flow (n log n sifts against one O(n) build).
const BATCH_SHARE: usize = 4;
/// How often (in actions) the progress callback runs.
const PROGRESS_EVERY: u64 = 1 << 16;

/// How the network shares bandwidth.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize)]
pub enum NetworkModel {
    /// Each message alone on its route: latency + size / narrowest bandwidth.
    LatencyBandwidth,
    /// Flow-level weighted max-min sharing, as SimGrid's CM02 model.
    #[default]
    MaxMin,
}

impl NetworkModel {
    pub fn name(self) -> &'static str {
        match self {
            NetworkModel::LatencyBandwidth => "latency-bandwidth",
            NetworkModel::MaxMin => "maxmin",
        }
    }
}

/// Simulation options. `Default` is SimGrid 3.32's CM02 with `TCP-gamma` 0 and no cross
/// traffic, and SMPI's default thresholds and collectives.
#[derive(Clone, Debug)]
pub struct Config {
    pub network: NetworkModel,
    /// `smpi/send-is-detached-thresh` (bytes).
    pub detached_threshold: f64,
    /// `network/latency-factor` (CM02: 1).
    pub latency_factor: f64,
    /// `network/bandwidth-factor` (CM02: 1).
    pub bandwidth_factor: f64,
    /// `network/TCP-gamma` (bytes); 0 disables the window bound.
    pub tcp_gamma: f64,
    pub envelope_bytes: f64,
    pub coll: Selection,
    pub reader: ReaderOptions,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            network: NetworkModel::MaxMin,
            detached_threshold: DETACHED_THRESHOLD,
            latency_factor: 1.0,
            bandwidth_factor: 1.0,
            tcp_gamma: 0.0,
            envelope_bytes: ENVELOPE_BYTES,
            coll: Selection::default(),
            reader: ReaderOptions::default(),
        }
    }
}

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

/// Replay `traces` on `platform`, rank `r` running on `slots[r % slots.len()]`.
pub fn simulate(
    platform: &Platform,
    traces: &TraceSet,
    slots: &[HostId],
    config: &Config,
    progress: &mut dyn FnMut(Progress),
) -> Result<Report, SimError> {
    if slots.is_empty() {
        return Err(SimError::Setup("no host to deploy the ranks on".into()));
    }
    let reader = traces.reader(config.reader)?;
    let mut sim = Sim::new(platform, traces, reader, slots, config);
    sim.run(progress)?;
    Ok(sim.report(traces))
}

const NO_CNST: u32 = u32::MAX;

/// Where [`Sim::apply_rates`] finds the solved rates (before the bandwidth factor).
#[derive(Clone, Copy, Debug)]
enum Rates {
    /// `Sim::values[i]` for the i-th flow of the component.
    Values,
    /// The solver's last solution, in the same order.
    Solver,
    /// `level / penalty` (one binding link).
    Level(f64),
}

/// A route between two hosts: its links are `Sim::route_links[start..start + len]`.
#[derive(Clone, Copy, Debug)]
struct Route {
    start: u32,
    len: u32,
    latency: f64,
    /// Narrowest bandwidth on the route.
    min_bw: f64,
}

/// A small multiplicative hasher for the engine's integer-keyed maps (route cache, request
/// storage): SipHash showed up at 10% of the replay time, and keys here are not
/// attacker-controlled.
#[derive(Default, Clone, Copy)]
struct FxHasher(u64);

impl FxHasher {
    fn add(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl std::hash::Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.add(b as u64);
        }
    }
    fn write_u32(&mut self, i: u32) {
        self.add(i as u64);
    }
    fn write_i32(&mut self, i: i32) {
        self.add(i as u32 as u64);
    }
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

type FxMap<K, V> = HashMap<K, V, std::hash::BuildHasherDefault<FxHasher>>;

/// An event's place in time order as one integer: the time's bits made monotone in
/// `f64::total_cmp`'s order, then the sequence number that breaks ties (unique, so the
/// order is total and runs are deterministic). Comparing one integer is cheaper than a
/// float then an integer, and the queues compare a lot.
fn order_key(t: f64, seq: u64) -> u128 {
    let b = t.to_bits();
    let monotone = if b >> 63 == 0 { b | 1 << 63 } else { !b };
    (u128::from(monotone) << 64) | u128::from(seq)
}

/// The (time, seq) an [`order_key`] was made of.
fn from_order_key(k: u128) -> (f64, u64) {
    let m = (k >> 64) as u64;
    let bits = if m >> 63 == 1 { m & !(1 << 63) } else { !m };
    (f64::from_bits(bits), k as u64)
}

/// A scheduled event, ordered by its key alone.
#[derive(Clone, Copy, Debug)]
struct Scheduled {
    key: u128,
    time: f64,
    ev: Ev,
}

impl PartialEq for Scheduled {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl Eq for Scheduled {}
impl PartialOrd for Scheduled {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Scheduled {
    fn cmp(&self, other: &Self) -> Ordering {
        self.key.cmp(&other.key)
    }
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Ev {
    /// A rank's compute, sleep or test injection ends.
    Resume(u32),
    /// A flow's latency is paid (max-min: it starts taking bandwidth).
    FlowLatency(u32),
    /// A flow completes (popped from the flow queue, never stored in the heap).
    FlowDone(u32),
    /// Some execution on a shared host may complete, if the host's version matches.
    Cpu(u32, u32),
}

/// An indexed binary min-heap of flow completion times: a rate change moves the flow's
/// entry instead of leaving a stale event behind (which made the main heap grow).
#[derive(Default)]
struct FlowQueue {
    /// (order key of (time, seq), flow): the key is computed once per entry, not at each
    /// comparison.
    heap: Vec<(u128, u32)>,
    /// Position of each flow in `heap`, or u32::MAX.
    pos: Vec<u32>,
}

impl FlowQueue {
    fn less(a: &(u128, u32), b: &(u128, u32)) -> bool {
        a.0 < b.0
    }

    /// The earliest entry: (time, seq, flow).
    fn peek(&self) -> Option<(f64, u64, u32)> {
        self.heap.first().map(|&(k, f)| {
            let (t, seq) = from_order_key(k);
            (t, seq, f)
        })
    }

    /// The earliest entry's order key.
    fn peek_key(&self) -> Option<u128> {
        self.heap.first().map(|e| e.0)
    }

    fn set(&mut self, f: u32, t: f64, seq: u64) {
        if self.pos.len() <= f as usize {
            self.pos.resize(f as usize + 1, u32::MAX);
        }
        let p = self.pos[f as usize];
        if p == u32::MAX {
            self.heap.push((order_key(t, seq), f));
            let i = self.heap.len() - 1;
            self.pos[f as usize] = i as u32;
            self.up(i);
        } else {
            let i = p as usize;
            let old = self.heap[i];
            self.heap[i] = (order_key(t, seq), f);
            if Self::less(&self.heap[i], &old) {
                self.up(i);
            } else {
                self.down(i);
            }
        }
    }

    fn remove(&mut self, f: u32) {
        let Some(&p) = self.pos.get(f as usize) else {
            return;
        };
        if p == u32::MAX {
            return;
        }
        let i = p as usize;
        let last = self.heap.len() - 1;
        self.heap.swap(i, last);
        self.heap.pop();
        self.pos[f as usize] = u32::MAX;
        if i < self.heap.len() {
            self.pos[self.heap[i].1 as usize] = i as u32;
            self.up(i);
            self.down(i);
        }
    }

    fn pop(&mut self) -> Option<(f64, u64, u32)> {
        let top = self.peek()?;
        self.remove(top.2);
        Some(top)
    }

    /// Like [`FlowQueue::set`] inside a batch: the entry is written in place (or appended)
    /// and heap order is restored only by [`FlowQueue::end_batch`]. A re-solve that moves
    /// most of the queue's flows is cheaper as one O(n) rebuild than as n sifts of
    /// O(log n); the order entries pop in is the same, since (time, seq) keys are unique.
    fn batch_set(&mut self, f: u32, t: f64, seq: u64) {
        if self.pos.len() <= f as usize {
            self.pos.resize(f as usize + 1, u32::MAX);
        }
        let p = self.pos[f as usize];
        if p == u32::MAX {
            self.pos[f as usize] = self.heap.len() as u32;
            self.heap.push((order_key(t, seq), f));
        } else {
            self.heap[p as usize] = (order_key(t, seq), f);
        }
    }

    /// Like [`FlowQueue::remove`] inside a batch.
    fn batch_remove(&mut self, f: u32) {
        let Some(&p) = self.pos.get(f as usize) else {
            return;
        };
        if p == u32::MAX {
            return;
        }
        self.heap.swap_remove(p as usize);
        self.pos[f as usize] = u32::MAX;
        if let Some(&(_, g)) = self.heap.get(p as usize) {
            self.pos[g as usize] = p;
        }
    }

    /// Restore heap order after `batch_set`/`batch_remove` (Floyd's bottom-up build), then
    /// the positions in one pass.
    fn end_batch(&mut self) {
        let n = self.heap.len();
        for i in (0..n / 2).rev() {
            let mut i = i;
            loop {
                let l = 2 * i + 1;
                if l >= n {
                    break;
                }
                let r = l + 1;
                let m = if r < n && Self::less(&self.heap[r], &self.heap[l]) {
                    r
                } else {
                    l
                };
                if !Self::less(&self.heap[m], &self.heap[i]) {
                    break;
                }
                self.heap.swap(i, m);
                i = m;
            }
        }
        for (i, &(_, f)) in self.heap.iter().enumerate() {
            self.pos[f as usize] = i as u32;
        }
    }

    fn up(&mut self, mut i: usize) {
        while i > 0 {
            let parent = (i - 1) / 2;
            if Self::less(&self.heap[i], &self.heap[parent]) {
                self.swap(i, parent);
                i = parent;
            } else {
                break;
            }
        }
    }

    fn down(&mut self, mut i: usize) {
        loop {
            let l = 2 * i + 1;
            let r = l + 1;
            let mut m = i;
            if l < self.heap.len() && Self::less(&self.heap[l], &self.heap[m]) {
                m = l;
            }
            if r < self.heap.len() && Self::less(&self.heap[r], &self.heap[m]) {
                m = r;
            }
            if m == i {
                break;
            }
            self.swap(i, m);
            i = m;
        }
    }

    fn swap(&mut self, a: usize, b: usize) {
        self.heap.swap(a, b);
        self.pos[self.heap[a].1 as usize] = a as u32;
        self.pos[self.heap[b].1 as usize] = b as u32;
    }
}

struct Req {
    owner: u32,
    peer: u32,
    tag: i32,
    bytes: f64,
    send: bool,
    detached: bool,
    matched: bool,
    done: bool,
    /// Held by its owner (storage, request list or a blocking call).
    held: bool,
    /// Its owner is blocked until it completes.
    waiter: bool,
    match_time: f64,
    serial: u64,
}

/// A message in transfer. Slots are recycled, so a replay allocates no flow per message.
#[derive(Clone, Copy, Debug)]
struct Flow {
    /// Bytes left at `last`, transferred at `rate` since.
    remaining: f64,
    rate: f64,
    last: f64,
    /// Max-min sharing penalty (CM02: the route's latency).
    penalty: f64,
    /// `1 / penalty`, its weight in a link's usage (the same bits the solver computes).
    inv_pen: f64,
    /// The most the flow can get alone: the route's narrowest bandwidth, or less under a
    /// TCP window bound. In a max-min problem this is the variable's bound and stands in
    /// for every link that cannot bind (see [`Sim::slack`]).
    cap: f64,
    /// Narrowest bandwidth on the route (the flow's share of its links' demand).
    min_bw: f64,
    /// The route's links: `Sim::route_links[links..links + nlinks]`.
    links: u32,
    nlinks: u32,
    /// How many of them bind (are not [`Sim::slack`]) while the flow is active: 0 means
    /// it is alone, 1 that a single link joins it to others.
    nbind: u32,
    send: u32,
    recv: u32,
}

/// A link as the max-min model sees it.
#[derive(Clone, Copy, Debug)]
struct LinkState {
    bandwidth: f64,
    /// Sum over the link's active flows of their route's narrowest bandwidth.
    demand: f64,
    /// Component stamp of the last search that reached the link.
    mark: u64,
    /// Its constraint in the problem being built, or `NO_CNST`.
    cnst: u32,
    fatpipe: bool,
    /// Not [`Sim::slack`]: the link joins its flows into one sharing problem. Kept up to
    /// date as flows start and end, with each flow's `nbind`.
    binding: bool,
    /// Touched (a flow started or ended on it) since the last solve.
    dirty: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum State {
    Running,
    /// Blocked on requests (`count` outstanding).
    Waiting,
    /// Computing or sleeping until an event.
    Busy,
    /// Finished its trace (maybe waiting for final requests when `finishing`).
    Done,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum BusyKind {
    Compute,
    Sleep,
}

type Key = (u32, u32, i32);

struct Rank {
    host: HostId,
    state: State,
    ops: VecDeque<Op>,
    slots: Vec<u32>,
    /// Pending trace-level requests in posting order with their (src, dst, tag) key, as
    /// SMPI's replay stores them; `None` marks a request a `test` found complete. A flat
    /// list: ranks rarely have more than a handful pending, and a map of queues allocated
    /// per message showed up in profiles.
    storage: Vec<(Key, Option<u32>)>,
    /// Pending `irecv`/`isend` requests by recency (dPerf's `wait`): (req, serial).
    recent_recv: Vec<(u32, u64)>,
    recent_send: Vec<(u32, u64)>,
    count: u32,
    awaited: Vec<u32>,
    block_start: f64,
    busy_kind: BusyKind,
    /// After an `MPI_Test` injection: the request tested and its storage key.
    pending_test: Option<(Key, u32)>,
    finishing: bool,
    cur: Option<Located>,
    compute_s: f64,
    sleep_s: f64,
    comm_s: f64,
    wait_s: f64,
    finish_s: f64,
    actions: u64,
    /// Work left of the execution on a shared host.
    exec_left: f64,
}

struct HostCpu {
    speed: f64,
    cores: u32,
    /// Ranks deployed on it (a host with no more ranks than cores never shares).
    shared: bool,
    running: Vec<u32>,
    last: f64,
    version: u32,
}

struct Mailbox {
    sends: VecDeque<u32>,
    recvs: VecDeque<u32>,
}

struct Sim<'a> {
    platform: &'a Platform,
    config: &'a Config,
    reader: TraceReader,
    files: Vec<String>,
    n: u32,
    now: f64,
    seq: u64,
    heap: BinaryHeap<Reverse<Scheduled>>,
    /// Completion times of flows, updated in place when rates change.
    flow_queue: FlowQueue,
    ranks: Vec<Rank>,
    cpus: Vec<HostCpu>,
    ready: VecDeque<u32>,
    reqs: Vec<Req>,
    free_reqs: Vec<u32>,
    serial: u64,
    flows: Vec<Flow>,
    free_flows: Vec<u32>,
    mailboxes: Vec<Mailbox>,
    routes: FxMap<(HostId, HostId), Route>,
    /// The links of every route in `routes`, one after the other.
    route_links: Vec<u32>,
    route_buf: Vec<u32>,
    // max-min state
    link_state: Vec<LinkState>,
    /// Active flows of each link, in the order they started (swap-removed when they end).
    link_flows: Vec<Vec<u32>>,
    dirty: Vec<u32>,
    seeds: Vec<u32>,
    component: u64,
    flow_mark: Vec<u64>,
    epoch: u64,
    solver: Solver,
    values: Vec<f64>,
    comp_links: Vec<u32>,
    comp_flows: Vec<u32>,
    /// A flow's constraints while the problem is built.
    cnst_buf: Vec<u32>,
    // counters
    actions: u64,
    messages: u64,
    events: u64,
    op_buf: Vec<Op>,
    scratch: Vec<u32>,
    solves: u64,
    solved_flows: u64,
    /// `PERFCOMPOSE_SIM_DEBUG` set: log flow events on stderr (for comparing with SimGrid's
    /// `--log=res_network.thres:debug`).
    debug: bool,
}

impl<'a> Sim<'a> {
    fn new(
        platform: &'a Platform,
        traces: &TraceSet,
        reader: TraceReader,
        slots: &[HostId],
        config: &'a Config,
    ) -> Sim<'a> {
        let n = traces.ranks();
        let mut per_host = vec![0u32; platform.hosts().len()];
        let ranks: Vec<Rank> = (0..n)
            .map(|r| {
                let host = slots[r as usize % slots.len()];
                per_host[host as usize] += 1;
                Rank {
                    host,
                    state: State::Running,
                    ops: VecDeque::new(),
                    slots: Vec::new(),
                    storage: Vec::new(),
                    recent_recv: Vec::new(),
                    recent_send: Vec::new(),
                    count: 0,
                    awaited: Vec::new(),
                    block_start: 0.0,
                    busy_kind: BusyKind::Compute,
                    pending_test: None,
                    finishing: false,
                    cur: None,
                    compute_s: 0.0,
                    sleep_s: 0.0,
                    comm_s: 0.0,
                    wait_s: 0.0,
                    finish_s: 0.0,
                    actions: 0,
                    exec_left: 0.0,
                }
            })
            .collect();
        let cpus = platform
            .hosts()
            .iter()
            .enumerate()
            .map(|(i, h)| HostCpu {
                speed: h.speed,
                cores: h.cores,
                shared: per_host[i] > h.cores,
                running: Vec::new(),
                last: 0.0,
                version: 0,
            })
            .collect();
        let nl = platform.links().len();
        Sim {
            platform,
            config,
            files: reader.files().to_vec(),
            reader,
            n,
            now: 0.0,
            seq: 0,
            heap: BinaryHeap::new(),
            flow_queue: FlowQueue::default(),
            ranks,
            cpus,
            ready: (0..n).collect(),
            reqs: Vec::new(),
            free_reqs: Vec::new(),
            serial: 0,
            flows: Vec::new(),
            free_flows: Vec::new(),
            mailboxes: (0..n)
                .map(|_| Mailbox {
                    sends: VecDeque::new(),
                    recvs: VecDeque::new(),
                })
                .collect(),
            routes: FxMap::default(),
            route_links: Vec::new(),
            route_buf: Vec::new(),
            link_state: platform
                .links()
                .iter()
                .map(|l| {
                    let mut ls = LinkState {
                        bandwidth: l.bandwidth,
                        demand: 0.0,
                        mark: 0,
                        cnst: NO_CNST,
                        fatpipe: l.sharing == Sharing::Fatpipe,
                        binding: false,
                        dirty: false,
                    };
                    ls.binding = !Self::slack(&ls);
                    ls
                })
                .collect(),
            link_flows: vec![Vec::new(); nl],
            dirty: Vec::new(),
            seeds: Vec::new(),
            component: 0,
            flow_mark: Vec::new(),
            epoch: 0,
            solver: Solver::default(),
            values: Vec::new(),
            comp_links: Vec::new(),
            comp_flows: Vec::new(),
            cnst_buf: Vec::new(),
            actions: 0,
            messages: 0,
            events: 0,
            op_buf: Vec::new(),
            scratch: Vec::new(),
            debug: std::env::var_os("PERFCOMPOSE_SIM_DEBUG").is_some(),
            solves: 0,
            solved_flows: 0,
        }
    }

    fn push(&mut self, t: f64, ev: Ev) {
        self.seq += 1;
        self.heap.push(Reverse(Scheduled {
            key: order_key(t, self.seq),
            time: t,
            ev,
        }));
    }

    fn run(&mut self, progress: &mut dyn FnMut(Progress)) -> Result<(), SimError> {
        let mut next_progress = PROGRESS_EVERY;
        loop {
            while let Some(r) = self.ready.pop_front() {
                self.run_rank(r)?;
                if self.actions >= next_progress {
                    next_progress = self.actions + PROGRESS_EVERY;
                    progress(Progress {
                        bytes_read: self.reader.bytes_read(),
                        actions: self.actions,
                        simulated_time: self.now,
                    });
                }
            }
            // Share bandwidth once all events of this instant have been handled.
            if !self.dirty.is_empty() {
                let later = self.next_time().is_none_or(|t| t > self.now);
                if later {
                    self.reshare();
                }
            }
            let Some((t, ev)) = self.pop_event() else {
                break;
            };
            self.events += 1;
            self.now = t;
            self.handle(ev);
        }
        if self.debug {
            eprintln!(
                "solves {} (flows {}), reqs {} (free {}), flows {} (free {}), heap {}, flow queue {}",
                self.solves,
                self.solved_flows,
                self.reqs.len(),
                self.free_reqs.len(),
                self.flows.len(),
                self.free_flows.len(),
                self.heap.len(),
                self.flow_queue.heap.len()
            );
        }
        if self.ranks.iter().any(|r| r.state != State::Done) {
            return Err(self.deadlock());
        }
        Ok(())
    }

    fn next_time(&self) -> Option<f64> {
        let a = self.heap.peek().map(|Reverse(e)| e.time);
        let b = self.flow_queue.peek().map(|(t, _, _)| t);
        match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The earliest event of the heap and the flow queue, ties broken by sequence number.
    fn pop_event(&mut self) -> Option<(f64, Ev)> {
        let a = self.heap.peek().map(|Reverse(e)| e.key);
        let b = self.flow_queue.peek_key();
        let take_flow = match (a, b) {
            (None, None) => return None,
            (None, Some(_)) => true,
            (Some(_), None) => false,
            (Some(ka), Some(kb)) => kb < ka,
        };
        if take_flow {
            let (t, _, f) = self.flow_queue.pop().expect("peeked");
            Some((t, Ev::FlowDone(f)))
        } else {
            let Reverse(e) = self.heap.pop().expect("peeked");
            Some((e.time, e.ev))
        }
    }

    fn handle(&mut self, ev: Ev) {
        match ev {
            Ev::Resume(r) => self.end_busy(r),
            Ev::FlowLatency(f) => self.activate(f),
            Ev::FlowDone(f) => self.finish_flow(f),
            Ev::Cpu(h, v) => {
                if self.cpus[h as usize].version == v {
                    self.cpu_advance(h);
                }
            }
        }
    }

    // ---------------------------------------------------------------- ranks

    fn run_rank(&mut self, r: u32) -> Result<(), SimError> {
        loop {
            let st = self.ranks[r as usize].state;
            if st != State::Running {
                return Ok(());
            }
            if let Some(op) = self.ranks[r as usize].ops.pop_front() {
                self.exec_op(r, op)?;
                continue;
            }
            match self.reader.next(r)? {
                None => {
                    self.finish_trace(r);
                    return Ok(());
                }
                Some(loc) => {
                    self.actions += 1;
                    let action = loc.action.clone();
                    let rank = &mut self.ranks[r as usize];
                    rank.actions += 1;
                    rank.cur = Some(loc);
                    self.exec_action(r, action)?;
                }
            }
        }
    }

    fn exec_action(&mut self, r: u32, a: Action) -> Result<(), SimError> {
        match a {
            Action::Init | Action::Finalize | Action::NoOp => {}
            Action::Compute { flops } => self.compute(r, flops),
            Action::Sleep { seconds } => self.sleep(r, seconds, BusyKind::Sleep),
            Action::Send { dst, tag, bytes } => {
                let q = self.post_send(r, dst, tag, bytes)?;
                self.block_on_one(r, q);
            }
            Action::Isend { dst, tag, bytes } => {
                let q = self.post_send(r, dst, tag, bytes)?;
                self.store(r, (r, dst, tag), q, true);
            }
            Action::Recv { src, tag, bytes } => {
                let q = self.post_recv(r, src, tag, bytes)?;
                self.block_on_one(r, q);
            }
            Action::Irecv { src, tag, bytes } => {
                let q = self.post_recv(r, src, tag, bytes)?;
                self.store(r, (src, r, tag), q, false);
            }
            Action::Wait { src, dst, tag } => {
                if self.ranks[r as usize].storage.is_empty() {
                    return Err(self.action_error(
                        r,
                        "wait is not preceded by any irecv or isend".into(),
                        Some("SimGrid stops on this too; check the trace".into()),
                    ));
                }
                if let Some(Some(q)) = self.pop_storage(r, (src, dst, tag)) {
                    self.block_on(r, &[q]);
                }
            }
            Action::Test { src, dst, tag } => {
                if let Some(Some(q)) = self.pop_storage(r, (src, dst, tag)) {
                    self.ranks[r as usize].pending_test = Some(((src, dst, tag), q));
                    self.sleep(r, TEST_SLEEP, BusyKind::Sleep);
                }
            }
            Action::WaitAll => {
                let rank = &mut self.ranks[r as usize];
                rank.recent_recv.clear();
                rank.recent_send.clear();
                let mut reqs = std::mem::take(&mut self.scratch);
                reqs.clear();
                reqs.extend(rank.storage.drain(..).filter_map(|(_, q)| q));
                if !reqs.is_empty() {
                    self.block_on(r, &reqs);
                }
                self.scratch = reqs;
            }
            Action::WaitLast => {
                let q = self.pop_recent(r);
                if let Some(q) = q {
                    self.block_on(r, &[q]);
                }
            }
            Action::SendRecv {
                send_bytes,
                dst,
                src,
                recv_bytes,
            } => {
                if !(dst == r && src == r) {
                    let s = self.post_send(r, dst, 0, send_bytes)?;
                    let v = self.post_recv(r, src, 0, recv_bytes)?;
                    self.block_on(r, &[s, v]);
                }
            }
            Action::Barrier => self.collective(r, Call::Barrier, 0.0)?,
            Action::Bcast { bytes, root } => {
                self.collective(r, Call::Bcast { bytes, root }, 0.0)?
            }
            Action::Reduce {
                bytes,
                flops,
                root,
                dt,
            } => {
                let count = if dt > 0.0 {
                    (bytes / dt).round()
                } else {
                    bytes
                };
                self.collective(r, Call::Reduce { count, dt, root }, flops)?
            }
            Action::AllReduce { bytes, flops, dt } => {
                let count = if dt > 0.0 {
                    (bytes / dt).round()
                } else {
                    bytes
                };
                self.collective(r, Call::AllReduce { count, dt }, flops)?
            }
            Action::AllToAll { send_bytes, .. } => {
                self.collective(r, Call::AllToAll { send_bytes }, 0.0)?
            }
            Action::Gather {
                send_bytes, root, ..
            } => self.collective(r, Call::Gather { send_bytes, root }, 0.0)?,
            Action::AllGather { send_bytes, .. } => {
                self.collective(r, Call::AllGather { send_bytes }, 0.0)?
            }
            Action::Scatter {
                send_bytes, root, ..
            } => self.collective(r, Call::Scatter { send_bytes, root }, 0.0)?,
        }
        Ok(())
    }

    fn collective(&mut self, r: u32, call: Call, flops: f64) -> Result<(), SimError> {
        let root = match call {
            Call::Bcast { root, .. }
            | Call::Reduce { root, .. }
            | Call::Gather { root, .. }
            | Call::Scatter { root, .. } => Some(root),
            _ => None,
        };
        if let Some(root) = root {
            if root >= self.n {
                return Err(self.action_error(
                    r,
                    format!("root {root} is not a rank (the trace has {} ranks)", self.n),
                    None,
                ));
            }
        }
        let mut ops = std::mem::take(&mut self.op_buf);
        ops.clear();
        if let Err(m) = coll::expand(call, r, self.n, &self.config.coll, &mut ops) {
            self.op_buf = ops;
            return Err(self.action_error(
                r,
                m,
                Some("choose another algorithm with --coll".into()),
            ));
        }
        if flops > 0.0 {
            ops.push(Op::Compute { flops });
        }
        let rank = &mut self.ranks[r as usize];
        rank.ops.extend(ops.iter().copied());
        self.op_buf = ops;
        Ok(())
    }

    fn exec_op(&mut self, r: u32, op: Op) -> Result<(), SimError> {
        match op {
            Op::Send { peer, tag, bytes } => {
                let q = self.post_send(r, peer, tag, bytes)?;
                self.block_on_one(r, q);
            }
            Op::Recv { peer, tag } => {
                let q = self.post_recv(r, peer, tag, -1.0)?;
                self.block_on_one(r, q);
            }
            Op::Isend { peer, tag, bytes } => {
                let q = self.post_send(r, peer, tag, bytes)?;
                self.ranks[r as usize].slots.push(q);
            }
            Op::Irecv { peer, tag } => {
                let q = self.post_recv(r, peer, tag, -1.0)?;
                self.ranks[r as usize].slots.push(q);
            }
            Op::WaitAll => {
                let slots = std::mem::take(&mut self.ranks[r as usize].slots);
                self.block_on(r, &slots);
                let mut slots = slots;
                slots.clear();
                self.ranks[r as usize].slots = slots;
            }
            Op::Compute { flops } => self.compute(r, flops),
        }
        Ok(())
    }

    /// End of a rank's trace: SMPI waits for the last request of each storage key.
    fn finish_trace(&mut self, r: u32) {
        let storage = std::mem::take(&mut self.ranks[r as usize].storage);
        let mut last_of: FxMap<Key, u32> = FxMap::default();
        for (key, q) in storage {
            if let Some(q) = q {
                if let Some(prev) = last_of.insert(key, q) {
                    self.release(prev);
                }
            }
        }
        let mut last: Vec<u32> = last_of.into_values().collect();
        last.sort_unstable();
        let rank = &mut self.ranks[r as usize];
        rank.finishing = true;
        rank.cur = None;
        if last.is_empty() {
            self.done(r);
        } else {
            self.block_on(r, &last);
            if self.ranks[r as usize].state == State::Running {
                self.done(r);
            }
        }
    }

    fn done(&mut self, r: u32) {
        let rank = &mut self.ranks[r as usize];
        rank.state = State::Done;
        rank.finish_s = self.now;
    }

    fn store(&mut self, r: u32, key: Key, q: u32, send: bool) {
        let serial = self.reqs[q as usize].serial;
        let rank = &mut self.ranks[r as usize];
        rank.storage.push((key, Some(q)));
        let stack = if send {
            &mut rank.recent_send
        } else {
            &mut rank.recent_recv
        };
        stack.push((q, serial));
        // The recency stacks serve dPerf's `wait`; requests waited through other actions
        // leave stale entries behind. Drop them once in a while so memory stays flat.
        if stack.len() >= RECENT_COMPACT && stack.len().is_power_of_two() {
            let reqs = &self.reqs;
            stack.retain(|&(q, s)| {
                let req = &reqs[q as usize];
                req.serial == s && req.held
            });
        }
    }

    fn pop_storage(&mut self, r: u32, key: Key) -> Option<Option<u32>> {
        let rank = &mut self.ranks[r as usize];
        let pos = rank.storage.iter().position(|(k, _)| *k == key)?;
        Some(rank.storage.remove(pos).1)
    }

    /// dPerf's `wait`: the most recent pending irecv, else isend.
    fn pop_recent(&mut self, r: u32) -> Option<u32> {
        loop {
            let rank = &mut self.ranks[r as usize];
            let (q, serial) = match rank.recent_recv.pop() {
                Some(x) => x,
                None => rank.recent_send.pop()?,
            };
            let req = &self.reqs[q as usize];
            if req.serial != serial || !req.held {
                continue; // already waited through another action
            }
            let key = if req.send {
                (r, req.peer, req.tag)
            } else {
                (req.peer, r, req.tag)
            };
            if let Some(pos) = rank.storage.iter().position(|e| *e == (key, Some(q))) {
                rank.storage.remove(pos);
            }
            return Some(q);
        }
    }

    fn compute(&mut self, r: u32, flops: f64) {
        if flops <= 0.0 {
            return;
        }
        let h = self.ranks[r as usize].host;
        let cpu = &self.cpus[h as usize];
        let rank = &mut self.ranks[r as usize];
        rank.state = State::Busy;
        rank.busy_kind = BusyKind::Compute;
        rank.block_start = self.now;
        if !cpu.shared {
            let t = self.now + flops / cpu.speed;
            self.push(t, Ev::Resume(r));
        } else {
            self.cpu_update(h);
            self.ranks[r as usize].exec_left = flops;
            self.cpus[h as usize].running.push(r);
            self.cpu_reschedule(h);
        }
    }

    fn sleep(&mut self, r: u32, seconds: f64, kind: BusyKind) {
        let rank = &mut self.ranks[r as usize];
        rank.state = State::Busy;
        rank.busy_kind = kind;
        rank.block_start = self.now;
        let t = self.now + seconds.max(0.0);
        self.push(t, Ev::Resume(r));
    }

    fn end_busy(&mut self, r: u32) {
        let now = self.now;
        let rank = &mut self.ranks[r as usize];
        let d = now - rank.block_start;
        match rank.busy_kind {
            BusyKind::Compute => rank.compute_s += d,
            BusyKind::Sleep => rank.sleep_s += d,
        }
        rank.state = State::Running;
        if let Some((key, q)) = rank.pending_test.take() {
            let req = &self.reqs[q as usize];
            let complete = req.done || (req.send && req.detached);
            let rank = &mut self.ranks[r as usize];
            if complete {
                rank.storage.push((key, None));
                self.release(q);
            } else {
                rank.storage.push((key, Some(q)));
            }
        }
        self.ready.push_back(r);
    }

    // ------------------------------------------------------------- shared CPUs

    fn cpu_rate(&self, h: u32) -> f64 {
        let c = &self.cpus[h as usize];
        let n = c.running.len().max(1) as f64;
        c.speed * (c.cores as f64 / n).min(1.0)
    }

    fn cpu_update(&mut self, h: u32) {
        let rate = self.cpu_rate(h);
        let dt = self.now - self.cpus[h as usize].last;
        for i in 0..self.cpus[h as usize].running.len() {
            let r = self.cpus[h as usize].running[i];
            self.ranks[r as usize].exec_left -= rate * dt;
        }
        self.cpus[h as usize].last = self.now;
    }

    fn cpu_reschedule(&mut self, h: u32) {
        let rate = self.cpu_rate(h);
        let c = &mut self.cpus[h as usize];
        c.version += 1;
        let mut min_left = f64::INFINITY;
        for &r in &c.running {
            min_left = min_left.min(self.ranks[r as usize].exec_left);
        }
        if min_left.is_finite() {
            let v = c.version;
            let t = self.now + (min_left / rate).max(0.0);
            self.push(t, Ev::Cpu(h, v));
        }
    }

    fn cpu_advance(&mut self, h: u32) {
        self.cpu_update(h);
        let rate = self.cpu_rate(h);
        let running = std::mem::take(&mut self.cpus[h as usize].running);
        let mut keep = Vec::with_capacity(running.len());
        for r in running {
            if self.ranks[r as usize].exec_left <= rate * TIME_PRECISION {
                self.end_busy(r);
            } else {
                keep.push(r);
            }
        }
        self.cpus[h as usize].running = keep;
        self.cpu_reschedule(h);
    }

    // ---------------------------------------------------------------- requests

    fn new_req(&mut self, r: u32, peer: u32, tag: i32, bytes: f64, send: bool) -> u32 {
        self.serial += 1;
        let req = Req {
            owner: r,
            peer,
            tag,
            bytes,
            send,
            detached: send && bytes < self.config.detached_threshold,
            matched: false,
            done: false,
            held: true,
            waiter: false,
            match_time: 0.0,
            serial: self.serial,
        };
        if let Some(q) = self.free_reqs.pop() {
            self.reqs[q as usize] = req;
            q
        } else {
            self.reqs.push(req);
            (self.reqs.len() - 1) as u32
        }
    }

    /// The owner no longer refers to the request.
    fn release(&mut self, q: u32) {
        let req = &mut self.reqs[q as usize];
        req.held = false;
        req.waiter = false;
        if req.done {
            self.free_reqs.push(q);
        }
    }

    fn post_send(&mut self, r: u32, dst: u32, tag: i32, bytes: f64) -> Result<u32, SimError> {
        let q = self.new_req(r, dst, tag, bytes, true);
        let mb = &mut self.mailboxes[dst as usize];
        let pos = mb.recvs.iter().position(|&v| {
            let rv = &self.reqs[v as usize];
            rv.peer == r && rv.tag == tag
        });
        match pos {
            Some(p) => {
                let v = mb.recvs.remove(p).expect("position is valid");
                self.start_flow(q, v)?;
            }
            None => mb.sends.push_back(q),
        }
        Ok(q)
    }

    /// Post a receive of at most `bytes` (negative: any size, as SMPI's probe).
    fn post_recv(&mut self, r: u32, src: u32, tag: i32, bytes: f64) -> Result<u32, SimError> {
        let q = self.new_req(r, src, tag, bytes, false);
        let mb = &mut self.mailboxes[r as usize];
        let pos = mb.sends.iter().position(|&s| {
            let sr = &self.reqs[s as usize];
            sr.owner == src && sr.tag == tag
        });
        match pos {
            Some(p) => {
                let s = mb.sends.remove(p).expect("position is valid");
                self.start_flow(s, q)?;
            }
            None => mb.recvs.push_back(q),
        }
        Ok(q)
    }

    /// A blocking send or receive: wait for it unless it is a detached send.
    fn block_on_one(&mut self, r: u32, q: u32) {
        let req = &self.reqs[q as usize];
        if req.send && req.detached {
            self.release(q);
        } else {
            self.block_on(r, &[q]);
        }
    }

    /// Block `r` until every request in `qs` completes (detached sends count as complete);
    /// the requests are released when it resumes.
    fn block_on(&mut self, r: u32, qs: &[u32]) {
        let mut count = 0;
        for &q in qs {
            let req = &mut self.reqs[q as usize];
            if !(req.done || req.send && req.detached) {
                req.waiter = true;
                count += 1;
            }
        }
        let rank = &mut self.ranks[r as usize];
        rank.awaited.clear();
        rank.awaited.extend_from_slice(qs);
        rank.block_start = self.now;
        if count == 0 {
            self.resume(r, false);
        } else {
            rank.count = count;
            rank.state = State::Waiting;
        }
    }

    /// Requests `r` waited for are all complete.
    fn resume(&mut self, r: u32, queue: bool) {
        let now = self.now;
        let awaited = std::mem::take(&mut self.ranks[r as usize].awaited);
        let start = self.ranks[r as usize].block_start;
        let mut matched_at = start;
        for &q in &awaited {
            let req = &self.reqs[q as usize];
            if !(req.send && req.detached) && req.matched {
                matched_at = matched_at.max(req.match_time);
            }
        }
        for &q in &awaited {
            self.release(q);
        }
        let rank = &mut self.ranks[r as usize];
        rank.awaited = awaited;
        rank.awaited.clear();
        rank.wait_s += (matched_at - start).max(0.0);
        rank.comm_s += (now - matched_at).max(0.0);
        rank.count = 0;
        if rank.finishing {
            rank.state = State::Done;
            rank.finish_s = now;
        } else {
            rank.state = State::Running;
            if queue {
                self.ready.push_back(r);
            }
        }
    }

    fn complete_req(&mut self, q: u32) {
        let req = &mut self.reqs[q as usize];
        req.done = true;
        let owner = req.owner;
        if req.waiter {
            req.waiter = false;
            let rank = &mut self.ranks[owner as usize];
            rank.count -= 1;
            if rank.count == 0 && rank.state == State::Waiting {
                self.resume(owner, true);
            }
        } else if !req.held {
            self.free_reqs.push(q);
        }
    }

    // ---------------------------------------------------------------- network

    fn route(&mut self, src: HostId, dst: HostId) -> Option<Route> {
        if let Some(r) = self.routes.get(&(src, dst)) {
            return Some(*r);
        }
        let latency = self.platform.route_into(src, dst, &mut self.route_buf)?;
        let min_bw = self
            .route_buf
            .iter()
            .map(|&l| self.platform.link(l).bandwidth)
            .fold(f64::INFINITY, f64::min);
        let route = Route {
            start: self.route_links.len() as u32,
            len: self.route_buf.len() as u32,
            latency,
            min_bw,
        };
        self.route_links.extend_from_slice(&self.route_buf);
        self.routes.insert((src, dst), route);
        Some(route)
    }

    fn start_flow(&mut self, s: u32, v: u32) -> Result<(), SimError> {
        let now = self.now;
        let (src_rank, dst_rank, bytes, capacity) = {
            let sr = &self.reqs[s as usize];
            let rv = &self.reqs[v as usize];
            (sr.owner, rv.owner, sr.bytes, rv.bytes)
        };
        if capacity >= 0.0 && bytes > capacity {
            // SMPI fails the receive with MPI_ERR_TRUNCATE.
            let r = if self.ready_is(dst_rank) {
                dst_rank
            } else {
                src_rank
            };
            return Err(self.action_error(
                r,
                format!("message truncated: rank {src_rank} sends {bytes} bytes but rank {dst_rank} receives at most {capacity}"),
                Some("the receive's count must cover the message (SimGrid aborts with MPI_ERR_TRUNCATE)".into()),
            ));
        }
        for q in [s, v] {
            let req = &mut self.reqs[q as usize];
            req.matched = true;
            req.match_time = now;
        }
        let hs = self.ranks[src_rank as usize].host;
        let hd = self.ranks[dst_rank as usize].host;
        let Some(route) = self.route(hs, hd) else {
            // Blame whichever side posted last (the one executing now).
            let r = if self.ranks[dst_rank as usize].cur.is_some() && self.ready_is(dst_rank) {
                dst_rank
            } else {
                src_rank
            };
            let (a, b) = (
                self.platform.host(hs).name.clone(),
                self.platform.host(hd).name.clone(),
            );
            return Err(self.action_error(
                r,
                format!("no route from host '{a}' (rank {src_rank}) to host '{b}' (rank {dst_rank}) in {}", self.platform.origin()),
                Some("add a <route> between these hosts, or deploy the ranks on connected hosts".into()),
            ));
        };
        let (lat, min_bw) = (route.latency, route.min_bw);
        self.messages += 1;
        let size = bytes + self.config.envelope_bytes;
        let latency = lat * self.config.latency_factor;
        let penalty = if latency > 0.0 { lat } else { 1.0 };
        let gamma_bound = if self.config.tcp_gamma > 0.0 && lat > 0.0 {
            self.config.tcp_gamma / (2.0 * lat)
        } else {
            -1.0
        };
        let bound = if gamma_bound > 0.0 {
            min_bw.min(gamma_bound)
        } else {
            -1.0
        };
        let flow = Flow {
            remaining: size,
            rate: 0.0,
            last: now,
            penalty,
            inv_pen: 1.0 / penalty,
            cap: if bound > 0.0 {
                min_bw.min(bound)
            } else {
                min_bw
            },
            min_bw,
            links: route.start,
            nlinks: route.len,
            nbind: 0,
            send: s,
            recv: v,
        };
        let f = if let Some(f) = self.free_flows.pop() {
            self.flows[f as usize] = flow;
            f
        } else {
            self.flows.push(flow);
            self.flow_mark.push(0);
            (self.flows.len() - 1) as u32
        };
        match self.config.network {
            NetworkModel::LatencyBandwidth => {
                let mut rate = min_bw * self.config.bandwidth_factor;
                if bound > 0.0 {
                    rate = rate.min(bound * self.config.bandwidth_factor);
                }
                self.flows[f as usize].rate = rate;
                self.seq += 1;
                self.flow_queue
                    .set(f, now + latency + size / rate, self.seq);
            }
            NetworkModel::MaxMin => {
                if latency > 0.0 {
                    self.push(now + latency, Ev::FlowLatency(f));
                } else {
                    self.activate(f);
                }
            }
        }
        Ok(())
    }

    fn ready_is(&self, r: u32) -> bool {
        self.ranks[r as usize].state == State::Running
    }

    /// The flow starts sharing bandwidth (max-min).
    fn activate(&mut self, f: u32) {
        if self.debug {
            let fl = &self.flows[f as usize];
            eprintln!(
                "[{:.6}] latency paid {}->{} tag {}",
                self.now,
                self.reqs[fl.send as usize].owner,
                self.reqs[fl.recv as usize].owner,
                self.reqs[fl.send as usize].tag
            );
        }
        let fl = &mut self.flows[f as usize];
        fl.last = self.now;
        fl.rate = 0.0;
        fl.nbind = 0;
        let (demand, links) = (fl.min_bw, Self::links_of(&self.route_links, fl));
        for &l in links {
            let ls = &mut self.link_state[l as usize];
            ls.demand += demand;
            Self::update_binding(ls, &self.link_flows[l as usize], &mut self.flows);
            if ls.binding {
                self.flows[f as usize].nbind += 1;
            }
            self.link_flows[l as usize].push(f);
            if !ls.dirty {
                ls.dirty = true;
                self.dirty.push(l);
            }
        }
    }

    /// After a change of the link's demand: whether it binds, and, when that changed, the
    /// count of binding links of each of its `flows`.
    fn update_binding(ls: &mut LinkState, flows_of_link: &[u32], flows: &mut [Flow]) {
        let binding = !Self::slack(ls);
        if binding != ls.binding {
            ls.binding = binding;
            for &g in flows_of_link {
                let n = &mut flows[g as usize].nbind;
                *n = if binding { *n + 1 } else { *n - 1 };
            }
        }
    }

    /// A flow's links (a free function of the fields, so the caller can update others).
    fn links_of<'r>(route_links: &'r [u32], fl: &Flow) -> &'r [u32] {
        &route_links[fl.links as usize..(fl.links + fl.nlinks) as usize]
    }

    fn finish_flow(&mut self, f: u32) {
        if self.debug {
            let fl = &self.flows[f as usize];
            eprintln!(
                "[{:.6}] finished {}->{} tag {}",
                self.now,
                self.reqs[fl.send as usize].owner,
                self.reqs[fl.recv as usize].owner,
                self.reqs[fl.send as usize].tag
            );
        }
        let fl = &mut self.flows[f as usize];
        fl.remaining = 0.0;
        let (s, v, demand) = (fl.send, fl.recv, fl.min_bw);
        if self.config.network == NetworkModel::MaxMin {
            for &l in Self::links_of(&self.route_links, fl) {
                let lf = &mut self.link_flows[l as usize];
                if let Some(p) = lf.iter().position(|&x| x == f) {
                    lf.swap_remove(p);
                }
                let ls = &mut self.link_state[l as usize];
                ls.demand -= demand;
                if lf.is_empty() {
                    ls.demand = 0.0; // no drift once the link is idle
                }
                Self::update_binding(ls, lf, &mut self.flows);
                if !ls.dirty {
                    ls.dirty = true;
                    self.dirty.push(l);
                }
            }
        }
        self.free_flows.push(f);
        self.complete_req(s);
        self.complete_req(v);
    }

    /// Whether a link can never limit its flows as a group: a shared link at least as wide
    /// as the sum of its flows' narrowest route bandwidths. Its constraint (sum of rates ≤
    /// bandwidth) is implied by the per-flow bounds `rate ≤ cap ≤ min_bw`, so it is left
    /// out of the max-min problem and each flow's `cap` is its variable bound instead: the
    /// feasible set — hence the max-min solution — is the same, exactly. Left out, it
    /// neither joins its flows into one sharing problem (components stay small on
    /// well-provisioned backbones) nor costs a constraint in each solve (a cluster's private
    /// links, one or two flows each, would otherwise outnumber the binding backbone 70 to
    /// 1 in the 64-rank ring).
    fn slack(ls: &LinkState) -> bool {
        !ls.fatpipe && ls.bandwidth >= ls.demand
    }

    /// Recompute the max-min shares of every component touched since the last solve.
    ///
    /// Only the flows that can have changed are visited (SimGrid's selective update): those
    /// joined through binding links to a link where a flow started or ended, and all flows
    /// of a link that became slack (their component may have split).
    fn reshare(&mut self) {
        let dirty = std::mem::take(&mut self.dirty);
        self.epoch += 1;
        let epoch = self.epoch;
        let mut seeds = std::mem::take(&mut self.seeds);
        seeds.clear();
        for &l in &dirty {
            let ls = &mut self.link_state[l as usize];
            ls.dirty = false;
            debug_assert_eq!(ls.binding, !Self::slack(ls));
            if !ls.binding {
                seeds.extend_from_slice(&self.link_flows[l as usize]);
            } else if let Some(&f) = self.link_flows[l as usize].first() {
                seeds.push(f);
            }
        }
        let bwf = self.config.bandwidth_factor;
        for &seed in &seeds {
            if self.flow_mark[seed as usize] == epoch {
                continue;
            }
            self.flow_mark[seed as usize] = epoch;
            let fl = &self.flows[seed as usize];
            debug_assert_eq!(
                fl.nbind as usize,
                Self::links_of(&self.route_links, fl)
                    .iter()
                    .filter(|&&l| self.link_state[l as usize].binding)
                    .count()
            );
            if fl.nbind == 0 {
                // Alone (every link slack): its rate is its cap. A flow of a slack link
                // that was alone before too keeps its rate, and is done with here without
                // a search (on a wide backbone every flow start or end seeds all its flows).
                if fl.cap * bwf != fl.rate {
                    self.comp_flows.clear();
                    self.comp_flows.push(seed);
                    self.solves += 1;
                    self.solved_flows += 1;
                    self.values.clear();
                    self.values.push(fl.cap);
                    self.apply_rates(Rates::Values);
                }
                continue;
            }
            self.comp_links.clear();
            self.comp_flows.clear();
            self.comp_flows.push(seed);
            if fl.nbind == 1 && self.single_link_component(seed, epoch) {
                self.solve_component(false);
                continue;
            }
            // Component of flows joined by links that can bind, searched breadth first;
            // the max-min problem is built on the way (constraints in the order links are
            // reached, variables in the order flows are), ready if it must be solved.
            self.component += 1;
            let comp = self.component;
            self.solver.clear();
            let mut cnsts = std::mem::take(&mut self.cnst_buf);
            let mut i = 0;
            while i < self.comp_flows.len() {
                let f = self.comp_flows[i];
                i += 1;
                cnsts.clear();
                let fl = &self.flows[f as usize];
                for &l in Self::links_of(&self.route_links, fl) {
                    let ls = &mut self.link_state[l as usize];
                    if !ls.binding {
                        continue;
                    }
                    if ls.mark != comp {
                        ls.mark = comp;
                        ls.cnst = self.solver.add_constraint(ls.bandwidth, ls.fatpipe);
                        self.comp_links.push(l);
                        for &g in &self.link_flows[l as usize] {
                            let m = &mut self.flow_mark[g as usize];
                            if *m != epoch {
                                *m = epoch;
                                self.comp_flows.push(g);
                            }
                        }
                    }
                    cnsts.push(ls.cnst);
                }
                self.solver
                    .add_variable(fl.penalty, fl.cap, cnsts.iter().copied());
            }
            self.cnst_buf = cnsts;
            for &l in &self.comp_links {
                self.link_state[l as usize].cnst = NO_CNST;
            }
            self.solve_component(true);
        }
        self.seeds = seeds;
        let mut d = dirty;
        d.clear();
        if self.dirty.is_empty() {
            self.dirty = d;
        }
    }

    /// The component of `seed` (bound by one link) when that link binds nothing else: the
    /// seed then its link's other flows, in the order the search would find them. False
    /// (nothing marked, the component lists as given) when some flow of the link is bound
    /// elsewhere too, and the search must run.
    fn single_link_component(&mut self, seed: u32, epoch: u64) -> bool {
        let fl = &self.flows[seed as usize];
        let Some(&l) = Self::links_of(&self.route_links, fl)
            .iter()
            .find(|&&l| self.link_state[l as usize].binding)
        else {
            return false;
        };
        let on_link = &self.link_flows[l as usize];
        if on_link.iter().any(|&g| self.flows[g as usize].nbind != 1) {
            return false;
        }
        self.comp_links.push(l);
        for &g in on_link {
            let m = &mut self.flow_mark[g as usize];
            if *m != epoch {
                *m = epoch;
                self.comp_flows.push(g);
            }
        }
        true
    }

    /// Solve the component in `comp_flows`/`comp_links` (its problem already in the
    /// solver when `built`) and apply the rates.
    fn solve_component(&mut self, built: bool) {
        self.solves += 1;
        self.solved_flows += self.comp_flows.len() as u64;
        if self.comp_flows.len() == 1 {
            // One flow alone: max-min gives it its narrowest link (or its bound).
            let f = self.comp_flows[0];
            self.values.clear();
            self.values.push(self.flows[f as usize].cap);
            self.apply_rates(Rates::Values);
            return;
        }
        if self.comp_links.len() == 1 {
            if let Some(level) = self.one_link_level(self.comp_links[0]) {
                self.apply_rates(Rates::Level(level));
                return;
            }
        }
        if !built {
            self.build();
        }
        self.solver.run();
        self.apply_rates(Rates::Solver);
    }

    /// The component's flows share one binding link (a saturated backbone or NIC, the
    /// common case): the level of [`single_constraint_level`] (each flow's rate is
    /// `level / penalty`), or None when the general solver must run.
    fn one_link_level(&self, l: u32) -> Option<f64> {
        let ls = &self.link_state[l as usize];
        if ls.fatpipe {
            return None;
        }
        let vars = self.comp_flows.iter().map(|&f| {
            let fl = &self.flows[f as usize];
            (fl.penalty, fl.inv_pen, fl.cap)
        });
        single_constraint_level(ls.bandwidth, vars)
    }

    /// The max-min problem of the component in `comp_flows`/`comp_links`, in the solver.
    fn build(&mut self) {
        self.solver.clear();
        for &l in &self.comp_links {
            let ls = &mut self.link_state[l as usize];
            ls.cnst = self.solver.add_constraint(ls.bandwidth, ls.fatpipe);
        }
        for &f in &self.comp_flows {
            let fl = &self.flows[f as usize];
            let cs = Self::links_of(&self.route_links, fl)
                .iter()
                .map(|&l| self.link_state[l as usize].cnst)
                .filter(|&c| c != NO_CNST);
            self.solver.add_variable(fl.penalty, fl.cap, cs);
        }
        for &l in &self.comp_links {
            self.link_state[l as usize].cnst = NO_CNST;
        }
    }

    /// Give the flows of `comp_flows` their new rates and move their completion times.
    fn apply_rates(&mut self, rates: Rates) {
        let now = self.now;
        let bwf = self.config.bandwidth_factor;
        // Moving a large share of the queue: write the new times, then rebuild the heap once.
        let batch = self.comp_flows.len() * BATCH_SHARE >= self.flow_queue.heap.len();
        for (i, &f) in self.comp_flows.iter().enumerate() {
            let fl = &mut self.flows[f as usize];
            let rate = match rates {
                Rates::Values => self.values[i],
                Rates::Solver => self.solver.rates()[i],
                Rates::Level(level) => level / fl.penalty,
            } * bwf;
            if rate == fl.rate {
                continue;
            }
            fl.remaining -= fl.rate * (now - fl.last);
            if fl.remaining < 0.0 {
                fl.remaining = 0.0;
            }
            fl.last = now;
            fl.rate = rate;
            if self.debug {
                eprintln!(
                    "[{:.6}] rate {}->{} tag {} = {} remaining {}",
                    now,
                    self.reqs[fl.send as usize].owner,
                    self.reqs[fl.recv as usize].owner,
                    self.reqs[fl.send as usize].tag,
                    rate,
                    fl.remaining
                );
            }
            let remaining = fl.remaining;
            if rate > 0.0 {
                self.seq += 1;
                if batch {
                    self.flow_queue
                        .batch_set(f, now + remaining / rate, self.seq);
                } else {
                    self.flow_queue.set(f, now + remaining / rate, self.seq);
                }
            } else if batch {
                self.flow_queue.batch_remove(f);
            } else {
                self.flow_queue.remove(f);
            }
        }
        if batch {
            self.flow_queue.end_batch();
        }
    }

    // ---------------------------------------------------------------- reports

    fn action_text(&self, a: &Action, r: u32) -> String {
        let mut buf = Vec::new();
        let _ = write_action(&mut buf, r, a);
        String::from_utf8_lossy(&buf).trim_end().to_string()
    }

    fn action_error(&self, r: u32, message: String, hint: Option<String>) -> SimError {
        let (file, line, action) = match &self.ranks[r as usize].cur {
            Some(loc) => (
                self.files[loc.file as usize].clone(),
                loc.line,
                self.action_text(&loc.action, r),
            ),
            None => (
                self.files.first().cloned().unwrap_or_default(),
                0,
                String::from("(end of trace)"),
            ),
        };
        SimError::Action {
            file,
            line,
            rank: r,
            action,
            message,
            hint,
        }
    }

    fn describe_req(&self, q: u32) -> String {
        let req = &self.reqs[q as usize];
        let what = if req.send {
            format!(
                "its send of {} bytes to rank {} (tag {}) to be received",
                req.bytes, req.peer, req.tag
            )
        } else {
            format!("a message from rank {} with tag {}", req.peer, req.tag)
        };
        let state = if req.matched {
            "(matched, in transfer)"
        } else if req.send {
            "(no matching receive posted)"
        } else {
            "(no matching send posted)"
        };
        format!("{what} {state}")
    }

    fn deadlock(&self) -> SimError {
        let mut blocked = Vec::new();
        for (r, rank) in self.ranks.iter().enumerate() {
            if rank.state == State::Done {
                continue;
            }
            let (file, line, action) = match &rank.cur {
                Some(loc) => (
                    self.files[loc.file as usize].clone(),
                    loc.line,
                    self.action_text(&loc.action, r as u32),
                ),
                None => (
                    self.files
                        .get(r)
                        .or(self.files.first())
                        .cloned()
                        .unwrap_or_default(),
                    0,
                    "(end of trace: waiting for its pending requests)".to_string(),
                ),
            };
            let waits = rank
                .awaited
                .iter()
                .filter(|&&q| {
                    let req = &self.reqs[q as usize];
                    !(req.done || req.send && req.detached)
                })
                .map(|&q| self.describe_req(q))
                .collect();
            blocked.push(BlockedRank {
                rank: r as u32,
                file,
                line,
                action,
                waits,
            });
        }
        SimError::Deadlock {
            time: self.now,
            blocked,
        }
    }

    fn report(&self, traces: &TraceSet) -> Report {
        let ranks: Vec<RankReport> = self
            .ranks
            .iter()
            .enumerate()
            .map(|(i, r)| RankReport {
                rank: i as u32,
                host: self.platform.host(r.host).name.clone(),
                compute_s: r.compute_s,
                sleep_s: r.sleep_s,
                communication_s: r.comm_s,
                waiting_s: r.wait_s,
                finish_s: r.finish_s,
                actions: r.actions,
            })
            .collect();
        let simulated = ranks.iter().map(|r| r.finish_s).fold(0.0, f64::max);
        let mut notes = traces.notes.clone();
        let unreceived: usize = self.mailboxes.iter().map(|m| m.sends.len()).sum();
        if unreceived > 0 {
            notes.push(format!(
                "{unreceived} message(s) were sent but never received"
            ));
        }
        if self.reader.ignored_lines() > 0 {
            notes.push(format!(
                "{} line(s) of per-rank trace files named another rank and were ignored (as SimGrid does)",
                self.reader.ignored_lines()
            ));
        }
        Report {
            simulated_time_s: simulated,
            ranks,
            actions: self.actions,
            messages: self.messages,
            events: self.events,
            network: self.config.network,
            notes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn any_time() -> impl Strategy<Value = f64> {
        prop_oneof![
            Just(0.0),
            Just(-0.0),
            Just(f64::INFINITY),
            Just(f64::MIN_POSITIVE),
            0.0f64..1e3,
            any::<f64>(),
        ]
    }

    proptest! {
        /// The integer key orders as (time by `total_cmp`, then sequence number), and gives
        /// both back.
        #[test]
        fn order_key_is_total_cmp_then_seq(a in any_time(), b in any_time(), sa in 0u64..4, sb in 0u64..4) {
            let expected = a.total_cmp(&b).then(sa.cmp(&sb));
            prop_assert_eq!(order_key(a, sa).cmp(&order_key(b, sb)), expected);
            let (t, s) = from_order_key(order_key(a, sa));
            prop_assert_eq!((t.to_bits(), s), (a.to_bits(), sa));
        }

        /// The flow queue pops what a sorted set of its entries would, whatever mix of
        /// single updates, removals and batches (heap rebuilt once) reached it.
        #[test]
        fn flow_queue_pops_in_key_order(
            ops in proptest::collection::vec((0u8..5, 0u32..40, 0.0f64..10.0, any::<bool>()), 1..300),
        ) {
            let mut q = FlowQueue::default();
            let mut reference: std::collections::BTreeMap<u32, (u128, f64, u64)> = Default::default();
            let mut seq = 0u64;
            let mut batch = false;
            for (op, f, t, flag) in ops {
                seq += 1;
                match op {
                    0 | 1 => {
                        if batch {
                            q.batch_set(f, t, seq);
                        } else {
                            q.set(f, t, seq);
                        }
                        reference.insert(f, (order_key(t, seq), t, seq));
                    }
                    2 => {
                        if batch {
                            q.batch_remove(f);
                        } else {
                            q.remove(f);
                        }
                        reference.remove(&f);
                    }
                    3 => {
                        if batch {
                            q.end_batch();
                        }
                        batch = flag;
                    }
                    _ => {
                        if batch {
                            q.end_batch();
                            batch = false;
                        }
                        let want = reference
                            .iter()
                            .min_by_key(|(_, (k, _, _))| *k)
                            .map(|(&f, &(_, t, s))| (t, s, f));
                        prop_assert_eq!(q.pop(), want);
                        if let Some((_, _, f)) = want {
                            reference.remove(&f);
                        }
                    }
                }
            }
            if batch {
                q.end_batch();
            }
            while let Some((_, _, f)) = reference
                .iter()
                .min_by_key(|(_, (k, _, _))| *k)
                .map(|(&f, &(_, t, s))| (t, s, f))
            {
                let (t, s) = (reference[&f].1, reference[&f].2);
                prop_assert_eq!(q.pop(), Some((t, s, f)));
                reference.remove(&f);
            }
            prop_assert_eq!(q.pop(), None);
        }
    }
}
