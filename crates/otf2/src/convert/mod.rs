//! OTF2 event records into SimGrid's time-independent trace, rank by rank, the way
//! `perfcompose record` writes its traces:
//!
//! - **Calls.** An MPI call is an `Enter`/`Leave` pair of a region of the MPI paradigm
//!   (Score-P's regions `MPI_Send`, `MPI_Allreduce`, ...; outermost only). The records
//!   between them say what it did.
//! - **Computation** is the time from leaving one call that writes a line to entering the
//!   next that does, written as `compute` at the rank's speed (flop/s) so that a host of
//!   that speed replays it in the time it took. Calls that write nothing (`MPI_Comm_rank`,
//!   a test that found nothing, what the conversion does not replay) are part of it. A
//!   rank's trace starts when it leaves `MPI_Init` (else at its first event) and ends when
//!   it enters `MPI_Finalize` (else at its last event).
//! - **Point to point**: `MpiSend`/`MpiRecv` are `send`/`recv` (both in one call, as
//!   `MPI_Sendrecv` records them: `isend`, `irecv` and two `wait`s); `MpiIsend` is `isend`
//!   and its `MpiIsendComplete` a `wait`; `MpiIrecvRequest` holds an `irecv` in its place
//!   until its completion (`MpiIrecv`) names the source, tag and size, then a `wait`. An
//!   `irecv` never completed or cancelled is left out (a replay would wait for it forever).
//!   Ranks in records are translated to world ranks through the communicator.
//! - **Collectives**: see [`crate::collective`].
//!
//! The conversion holds the converted trace in memory (its text, about 20 bytes per line)
//! before the replay reads it.
#![forbid(unsafe_code)]

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use perfcompose_sim::trace::Action;

use crate::archive::Archive;
use crate::collective::{CollCall, CollOp};

use crate::defs::{CommInfo, Definitions, World, PARADIGM_MPI};
use crate::error::{Error, EventError};
use crate::event::{Event, Record, UNDEFINED_U32};
use output::{write_texts, Table};

/// An archive converted: one time-independent trace text per rank.
#[derive(Clone, Debug)]
pub struct Conversion {
    /// Display names of the ranks' traces (`traces.otf2[rank 3]`), for errors.
    pub names: Vec<String>,
    /// Each rank's trace in SimGrid's current form.
    pub texts: Vec<Vec<u8>>,
    /// What was left out or assumed, for the user.
    pub notes: Vec<String>,
    /// Event records read (of the ranks' locations).
    pub events: u64,
    /// Lines written.
    pub actions: u64,
}

/// Convert the archive whose anchor file is `path`, computation written at `speed(rank)`
/// flop/s.
pub fn convert(path: &Path, speed: &dyn Fn(u32) -> f64) -> Result<Conversion, Error> {
    let mut archive = Archive::open(path)?;
    let defs = archive.definitions()?;
    let world = World::from_definitions(&defs).map_err(|kind| Error::Definitions {
        path: path.to_path_buf(),
        kind,
    })?;
    let mut conv = Converter::new(path, &defs, &world, speed);
    archive.read_events(&world.ranks, &mut |i, rec| conv.record(i, rec))?;
    conv.finish()
}

/// The conversion of an archive's records, fed rank by rank (`index` into the world's
/// ranks), each rank's in order.
pub(crate) struct Converter<'a> {
    ctx: Context<'a>,
    ranks: Vec<RankState>,
    table: Table,
    events: u64,
}

impl<'a> Converter<'a> {
    pub(crate) fn new(
        path: &Path,
        defs: &'a Definitions,
        world: &'a World,
        speed: &dyn Fn(u32) -> f64,
    ) -> Converter<'a> {
        let ranks = world
            .ranks
            .iter()
            .enumerate()
            .map(|(r, &loc)| RankState::new(r as u32, loc, speed(r as u32) * world.tick))
            .collect();
        Converter {
            ctx: Context {
                path: path.to_path_buf(),
                defs,
                world,
                offset: defs.clock.map_or(0, |c| c.offset),
            },
            ranks,
            table: Table::default(),
            events: 0,
        }
    }

    pub(crate) fn record(&mut self, rank: usize, rec: Record) -> Result<(), Error> {
        self.events += 1;
        self.ranks[rank].event(&self.ctx, &mut self.table, rec)
    }

    pub(crate) fn finish(mut self) -> Result<Conversion, Error> {
        for r in &mut self.ranks {
            r.finish();
        }
        write_texts(&self.ctx, self.ranks, &self.table, self.events)
    }
}

/// What every rank's conversion reads.
struct Context<'a> {
    path: PathBuf,
    defs: &'a Definitions,
    world: &'a World,
    offset: u64,
}

impl Context<'_> {
    fn event_error(&self, rank: &RankState, rec: &Record, kind: EventError) -> Error {
        Error::Event {
            path: self.path.clone(),
            rank: rank.me,
            location: rank.location,
            position: rec.position,
            time_s: rec.time.saturating_sub(self.offset) as f64 * self.world.tick,
            kind,
        }
    }

    /// The communicator a record names, checked.
    fn comm(&self, id: u32) -> Result<&CommInfo, EventError> {
        self.world
            .comms
            .get(&id)
            .ok_or(if self.defs.inter_comms.contains(&id) {
                EventError::InterComm(id)
            } else {
                EventError::UndefinedComm(id)
            })
    }

    /// The world rank a record names as `r` in communicator `comm`.
    fn peer(&self, comm: u32, r: u32, me: u32) -> Result<u32, EventError> {
        let c = self.comm(comm)?;
        c.world_rank(r, me)
            .ok_or_else(|| EventError::RankOutOfRange {
                rank: r,
                comm,
                name: c.name.clone(),
                size: c.size(),
            })
    }
}

/// A rank's trace line, or one decided later.
enum Slot {
    Ready(Action),
    /// An `irecv` held until its completion (`None`: never completed, or cancelled).
    Irecv(Option<Action>),
    /// A collective, written once every rank has been read.
    Coll(CollCall),
}

enum Pending {
    Send { dst: u32, tag: i32 },
    Recv { slot: usize },
}

/// The outermost MPI call in progress.
struct Call {
    enter: u64,
    /// It has written a line (its computation gap is written).
    wrote: bool,
    /// Blocking sends and receives, written at its end (both: a sendrecv).
    sends: Vec<(u32, i32, f64)>,
    recvs: Vec<(u32, i32, f64)>,
}

#[derive(Default)]
struct Counts {
    cancelled: u64,
    unknown_requests: u64,
    not_replayed: BTreeMap<&'static str, u64>,
    no_finalize: bool,
}

struct RankState {
    me: u32,
    location: u64,
    /// Flops per tick.
    flops_per_tick: f64,
    slots: Vec<Slot>,
    pending: HashMap<u64, Pending>,
    /// Leaving the last call that wrote a line (the start of the next computation).
    last: Option<u64>,
    last_time: u64,
    depth: u32,
    call: Option<Call>,
    finished: bool,
    /// Collectives seen per communicator.
    instances: HashMap<u32, u64>,
    counts: Counts,
}

impl RankState {
    fn new(me: u32, location: u64, flops_per_tick: f64) -> RankState {
        RankState {
            me,
            location,
            flops_per_tick,
            slots: vec![Slot::Ready(Action::Init)],
            pending: HashMap::new(),
            last: None,
            last_time: 0,
            depth: 0,
            call: None,
            finished: false,
            instances: HashMap::new(),
            counts: Counts::default(),
        }
    }

    fn compute(&mut self, until: u64) {
        if let Some(from) = self.last {
            let flops = (until.saturating_sub(from) as f64 * self.flops_per_tick).round();
            if flops > 0.0 {
                self.slots.push(Slot::Ready(Action::Compute { flops }));
            }
        }
    }

    /// Before the current call's first line: its computation gap. Outside any call, the
    /// record is a call of its own at `time`.
    fn begin_writing(&mut self, time: u64) {
        match &mut self.call {
            Some(c) if c.wrote => {}
            Some(c) => {
                c.wrote = true;
                let enter = c.enter;
                self.compute(enter);
            }
            None => {
                self.compute(time);
                self.last = Some(time);
            }
        }
    }

    fn push(&mut self, time: u64, slot: Slot) -> usize {
        self.begin_writing(time);
        self.slots.push(slot);
        self.slots.len() - 1
    }

    fn event(&mut self, ctx: &Context, table: &mut Table, rec: Record) -> Result<(), Error> {
        if self.finished {
            return Ok(());
        }
        if self.last.is_none() {
            self.last = Some(rec.time);
        }
        self.last_time = rec.time;
        let time = rec.time;
        let me = self.me;
        let fail = |s: &RankState, kind| Err(ctx.event_error(s, &rec, kind));
        match rec.event {
            Event::Enter { region } | Event::Leave { region } => {
                let Some(reg) = ctx.defs.regions.get(&region) else {
                    return fail(self, EventError::UndefinedRegion(region));
                };
                let name = ctx
                    .defs
                    .strings
                    .get(&reg.canonical_name)
                    .map(String::as_str);
                let is_mpi =
                    reg.paradigm == PARADIGM_MPI || name.is_some_and(|n| n.starts_with("MPI_"));
                if !is_mpi {
                    return Ok(());
                }
                if matches!(rec.event, Event::Enter { .. }) {
                    self.depth += 1;
                    if self.depth == 1 {
                        if name == Some("MPI_Finalize") {
                            self.compute(time);
                            self.slots.push(Slot::Ready(Action::Finalize));
                            self.finished = true;
                            return Ok(());
                        }
                        self.call = Some(Call {
                            enter: time,
                            wrote: false,
                            sends: Vec::new(),
                            recvs: Vec::new(),
                        });
                    }
                } else if self.depth > 0 {
                    self.depth -= 1;
                    if self.depth == 0 {
                        if matches!(name, Some("MPI_Init" | "MPI_Init_thread")) {
                            self.call = None;
                            self.last = Some(time);
                        } else {
                            self.end_call(time);
                        }
                    }
                }
            }
            Event::MpiSend {
                receiver,
                comm,
                tag,
                bytes,
            } => {
                let dst = match ctx.peer(comm, receiver, me) {
                    Ok(d) => d,
                    Err(k) => return fail(self, k),
                };
                let entry = (dst, tag as i32, bytes as f64);
                match &mut self.call {
                    Some(c) => c.sends.push(entry),
                    None => self.write_blocking(time, vec![entry], Vec::new()),
                }
            }
            Event::MpiRecv {
                sender,
                comm,
                tag,
                bytes,
            } => {
                let src = match ctx.peer(comm, sender, me) {
                    Ok(s) => s,
                    Err(k) => return fail(self, k),
                };
                let entry = (src, tag as i32, bytes as f64);
                match &mut self.call {
                    Some(c) => c.recvs.push(entry),
                    None => self.write_blocking(time, Vec::new(), vec![entry]),
                }
            }
            Event::MpiIsend {
                receiver,
                comm,
                tag,
                bytes,
                request,
            } => {
                let dst = match ctx.peer(comm, receiver, me) {
                    Ok(d) => d,
                    Err(k) => return fail(self, k),
                };
                let tag = tag as i32;
                self.push(
                    time,
                    Slot::Ready(Action::Isend {
                        dst,
                        tag,
                        bytes: bytes as f64,
                    }),
                );
                self.pending.insert(request, Pending::Send { dst, tag });
            }
            Event::MpiIsendComplete { request } => match self.pending.remove(&request) {
                Some(Pending::Send { dst, tag }) => {
                    self.push(time, Slot::Ready(Action::Wait { src: me, dst, tag }));
                }
                Some(p @ Pending::Recv { .. }) => {
                    self.pending.insert(request, p);
                    self.counts.unknown_requests += 1;
                }
                None => self.counts.unknown_requests += 1,
            },
            Event::MpiIrecvRequest { request } => {
                let slot = self.push(time, Slot::Irecv(None));
                self.pending.insert(request, Pending::Recv { slot });
            }
            Event::MpiIrecv {
                sender,
                comm,
                tag,
                bytes,
                request,
            } => {
                let src = match ctx.peer(comm, sender, me) {
                    Ok(s) => s,
                    Err(k) => return fail(self, k),
                };
                let tag = tag as i32;
                let irecv = Action::Irecv {
                    src,
                    tag,
                    bytes: bytes as f64,
                };
                match self.pending.remove(&request) {
                    Some(Pending::Recv { slot }) => self.slots[slot] = Slot::Irecv(Some(irecv)),
                    other => {
                        // A completion whose posting the trace does not have: the receive
                        // is taken as posted here.
                        if let Some(p) = other {
                            self.pending.insert(request, p);
                        }
                        self.counts.unknown_requests += 1;
                        self.push(time, Slot::Ready(irecv));
                    }
                }
                self.push(time, Slot::Ready(Action::Wait { src, dst: me, tag }));
            }
            Event::MpiRequestTest { .. } | Event::MpiCollectiveBegin => {}
            Event::MpiRequestCancelled { request } => {
                if self.pending.remove(&request).is_some() {
                    self.counts.cancelled += 1;
                }
            }
            Event::MpiCollectiveEnd {
                op,
                comm,
                root,
                sent,
                received,
            } => {
                let Some(op) = CollOp::from_code(op) else {
                    return fail(self, EventError::UnknownCollective(op));
                };
                let info = match ctx.comm(comm) {
                    Ok(c) => c,
                    Err(k) => return fail(self, k),
                };
                let Some(me_idx) = info.index_of(me) else {
                    let kind = EventError::NotMember {
                        comm,
                        name: info.name.clone(),
                    };
                    return fail(self, kind);
                };
                if info.size() <= 1 || op == CollOp::Handle {
                    return Ok(());
                }
                let instance = {
                    let k = self.instances.entry(comm).or_insert(0);
                    *k += 1;
                    *k
                };
                if !op.replayed() {
                    *self.counts.not_replayed.entry(op.mpi_name()).or_insert(0) += 1;
                    return Ok(());
                }
                let root = if op.rooted() {
                    match (root != UNDEFINED_U32)
                        .then(|| info.member_index(root, me))
                        .flatten()
                    {
                        Some(r) => Some(r),
                        None => {
                            let kind = EventError::BadRoot {
                                op: op.mpi_name(),
                                comm,
                                name: info.name.clone(),
                                root,
                                size: info.size(),
                            };
                            return fail(self, kind);
                        }
                    }
                } else {
                    None
                };
                let call = CollCall {
                    op,
                    comm,
                    instance,
                    root,
                    me: me_idx,
                    sent: sent as f64,
                    received: received as f64,
                };
                if op.needs_others() {
                    table.insert(ctx, &call, info.size(), me)?;
                }
                self.push(time, Slot::Coll(call));
            }
            Event::NotReplayed { what } => {
                *self.counts.not_replayed.entry(what).or_insert(0) += 1;
            }
        }
        Ok(())
    }

    /// Blocking sends and receives of one call: both (a sendrecv) as `isend`s and
    /// `irecv`s then their `wait`s, so that two ranks exchanging do not both block.
    fn write_blocking(
        &mut self,
        time: u64,
        sends: Vec<(u32, i32, f64)>,
        recvs: Vec<(u32, i32, f64)>,
    ) {
        if sends.is_empty() && recvs.is_empty() {
            return;
        }
        let me = self.me;
        if !sends.is_empty() && !recvs.is_empty() {
            for &(dst, tag, bytes) in &sends {
                self.push(time, Slot::Ready(Action::Isend { dst, tag, bytes }));
            }
            for &(src, tag, bytes) in &recvs {
                self.push(time, Slot::Ready(Action::Irecv { src, tag, bytes }));
            }
            for &(dst, tag, _) in &sends {
                self.push(time, Slot::Ready(Action::Wait { src: me, dst, tag }));
            }
            for &(src, tag, _) in &recvs {
                self.push(time, Slot::Ready(Action::Wait { src, dst: me, tag }));
            }
        } else {
            for (dst, tag, bytes) in sends {
                self.push(time, Slot::Ready(Action::Send { dst, tag, bytes }));
            }
            for (src, tag, bytes) in recvs {
                self.push(time, Slot::Ready(Action::Recv { src, tag, bytes }));
            }
        }
    }

    /// Leaving the outermost MPI call at `time`.
    fn end_call(&mut self, time: u64) {
        let Some(c) = self.call.as_mut() else {
            return;
        };
        let sends = std::mem::take(&mut c.sends);
        let recvs = std::mem::take(&mut c.recvs);
        self.write_blocking(time, sends, recvs);
        if self.call.take().is_some_and(|c| c.wrote) {
            self.last = Some(time);
        }
    }

    /// After the last record: a call still open ends there, then the computation up to
    /// it and `finalize`.
    fn finish(&mut self) {
        if self.finished {
            return;
        }
        if self.call.is_some() {
            self.end_call(self.last_time);
        }
        self.compute(self.last_time);
        self.slots.push(Slot::Ready(Action::Finalize));
        self.counts.no_finalize = true;
        self.finished = true;
    }
}

mod output;
#[cfg(test)]
mod tests;
