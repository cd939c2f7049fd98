//! The simulator: its state, construction, and the event loop that runs ranks until they
//! block and handles events in time order.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use super::config::Config;
use super::fxhash::FxMap;
use super::queue::{order_key, Ev, FlowQueue, Scheduled};
use super::report::{Progress, Report, SimError};
use super::state::{BusyKind, Flow, HostCpu, LinkState, Mailbox, Rank, Req, Route, State, NO_CNST};
use crate::coll::Op;
use crate::lmm::Solver;
use crate::platform::{HostId, Platform, Sharing};
use crate::timeline::Span;
use crate::trace::{TraceReader, TraceSet};

/// How often (in actions) the progress callback runs.
const PROGRESS_EVERY: u64 = 1 << 16;

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

/// [`simulate`], also recording what each rank did when (for `--timeline`, `--paje` and
/// the replay report). The spans take memory in proportion to the actions replayed.
pub fn simulate_with_timeline(
    platform: &Platform,
    traces: &TraceSet,
    slots: &[HostId],
    config: &Config,
    progress: &mut dyn FnMut(Progress),
) -> Result<(Report, Vec<Span>), SimError> {
    if slots.is_empty() {
        return Err(SimError::Setup("no host to deploy the ranks on".into()));
    }
    let reader = traces.reader(config.reader)?;
    let mut sim = Sim::new(platform, traces, reader, slots, config);
    sim.timeline = Some(Vec::new());
    sim.run(progress)?;
    let report = sim.report(traces);
    Ok((report, sim.timeline.take().unwrap_or_default()))
}

pub(super) struct Sim<'a> {
    pub(super) platform: &'a Platform,
    pub(super) config: &'a Config,
    pub(super) reader: TraceReader,
    pub(super) files: Vec<String>,
    pub(super) n: u32,
    pub(super) now: f64,
    pub(super) seq: u64,
    pub(super) heap: BinaryHeap<Reverse<Scheduled>>,
    /// Completion times of flows, updated in place when rates change.
    pub(super) flow_queue: FlowQueue,
    pub(super) ranks: Vec<Rank>,
    pub(super) cpus: Vec<HostCpu>,
    pub(super) ready: VecDeque<u32>,
    pub(super) reqs: Vec<Req>,
    pub(super) free_reqs: Vec<u32>,
    pub(super) serial: u64,
    pub(super) flows: Vec<Flow>,
    pub(super) free_flows: Vec<u32>,
    pub(super) mailboxes: Vec<Mailbox>,
    pub(super) routes: FxMap<(HostId, HostId), Route>,
    /// The links of every route in `routes`, one after the other.
    pub(super) route_links: Vec<u32>,
    pub(super) route_buf: Vec<u32>,
    // max-min state
    pub(super) link_state: Vec<LinkState>,
    /// Active flows of each link, in the order they started (swap-removed when they end).
    pub(super) link_flows: Vec<Vec<u32>>,
    pub(super) dirty: Vec<u32>,
    pub(super) seeds: Vec<u32>,
    pub(super) component: u64,
    pub(super) flow_mark: Vec<u64>,
    pub(super) epoch: u64,
    pub(super) solver: Solver,
    pub(super) values: Vec<f64>,
    pub(super) comp_links: Vec<u32>,
    pub(super) comp_flows: Vec<u32>,
    /// A flow's constraints while the problem is built.
    pub(super) cnst_buf: Vec<u32>,
    // counters
    pub(super) actions: u64,
    pub(super) messages: u64,
    pub(super) events: u64,
    pub(super) op_buf: Vec<Op>,
    pub(super) scratch: Vec<u32>,
    pub(super) solves: u64,
    pub(super) solved_flows: u64,
    /// `PERFCOMPOSE_SIM_DEBUG` set: log flow events on stderr (for comparing with SimGrid's
    /// `--log=res_network.thres:debug`).
    pub(super) debug: bool,
    /// The spans recorded, when a timeline was asked for.
    pub(super) timeline: Option<Vec<Span>>,
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
            timeline: None,
            solves: 0,
            solved_flows: 0,
        }
    }

    pub(super) fn push(&mut self, t: f64, ev: Ev) {
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
            perfcompose_core::stderr_line!(
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
}
