//! Raw logs into SimGrid traces: one pass over each process's log, writing its trace file.
//!
//! - Computation is the time between two recorded calls — from leaving one to entering the
//!   next — written as `compute` at the given speed (flop/s), so that a host of that speed
//!   replays it in the time it took. Time inside calls that write no line (the calls the
//!   recorder does not cover, a failed `MPI_Test`, a wait on requests it does not track)
//!   is part of it.
//! - Point to point: `send`/`recv`/`isend`/`irecv` with world ranks, tags and bytes (a
//!   receive's actual size, source and tag, read from its status). An `irecv` is held back
//!   until its completion says who sent it (`MPI_ANY_SOURCE`, `MPI_ANY_TAG`) and how much,
//!   or that `MPI_Cancel` cancelled it (then it is left out: a replay would wait for it
//!   forever), and written in its place; the lines after it wait in memory meanwhile. Each
//!   completed request (wait, waitall, waitany, waitsome, test and friends) becomes one
//!   `wait SRC DST TAG` (SimGrid's `waitall` would wait for every pending request, not the
//!   ones the program named). `MPI_Sendrecv` becomes `isend`, `irecv` and two `wait`s with
//!   its own tags (SimGrid's `sendRecv` uses tag 0). Synchronous, buffered and ready sends
//!   are written as `send`/`isend`.
//! - Collectives: see [`crate::expand`].

use std::collections::{HashMap, VecDeque};
use std::io::Write;
use std::path::Path;

use perfcompose_sim::trace::{write_action, Action};

use crate::error::{Error, RawError};
use crate::expand::{self, Expander, Group};
use crate::raw::{Coll, Kind, RawReader, Record};

/// What one process's log says about it (from its start record).
#[derive(Clone, Debug)]
pub struct Process {
    pub path: std::path::PathBuf,
    pub rank: u32,
    pub size: u32,
    pub host: String,
    pub pid: u32,
    /// `MPI_Init_thread`'s level provided (`None`: `MPI_Init`).
    pub thread_level: Option<i64>,
}

/// Read a log's start record.
pub fn read_process(path: &Path) -> Result<Process, Error> {
    let mut rd = RawReader::open(path)?;
    let start = rd.next_record()?;
    let Some(r) = start.filter(|r| r.kind == Kind::Start) else {
        return Err(Error::Raw {
            path: path.to_path_buf(),
            offset: 8,
            kind: RawError::NoStart,
        });
    };
    process_of(&r, path)
}

fn process_of(r: &Record, path: &Path) -> Result<Process, Error> {
    let (rank, size) = (r.a[0], r.a[1]);
    if size <= 0 || size > i64::from(perfcompose_sim::trace::MAX_RANKS) || rank < 0 || rank >= size
    {
        return Err(Error::Raw {
            path: path.to_path_buf(),
            offset: 8,
            kind: RawError::BadRank { rank, size },
        });
    }
    Ok(Process {
        path: path.to_path_buf(),
        rank: rank as u32,
        size: size as u32,
        host: r.text(r.a[5]),
        pid: r.a[4] as u32,
        thread_level: (r.a[3] >= 0).then_some(r.a[3]),
    })
}

/// What converting one process's log found.
#[derive(Clone, Debug, Default)]
pub struct RankSummary {
    pub rank: u32,
    /// `CLOCK_REALTIME` when MPI_Init returned (ns since the epoch).
    pub start_realtime_ns: u64,
    /// From leaving MPI_Init to entering MPI_Finalize.
    pub seconds: f64,
    /// Time written as computation.
    pub compute_s: f64,
    /// Time inside the calls written to the trace.
    pub recorded_call_s: f64,
    /// Calls written to the trace.
    pub recorded_calls: u64,
    /// Lines of the trace.
    pub actions: u64,
    /// Calls the recorder does not cover, by name, with their counts.
    pub uncovered: Vec<(String, u64)>,
    /// Whether the log reached MPI_Finalize.
    pub finished: bool,
}

/// A communicator from its log record.
struct Comm {
    members: Vec<u32>,
    me: usize,
    /// Every world rank is a member (in any order).
    whole_world: bool,
}

/// A request posted and not completed yet.
struct Pending {
    /// (source, destination, tag) as SimGrid's `wait` names it.
    key: (u32, u32, i32),
    /// Position of its held-back `irecv` line.
    held: Option<u64>,
    bytes: f64,
}

enum Slot {
    Ready(Action),
    /// An `irecv` until its completion: as posted, or nothing for one from any source or
    /// with any tag.
    Held(Option<Action>),
    /// A cancelled `irecv`.
    Dropped,
}

/// The trace lines of one rank, written in order; a held line stops the writing until it
/// is resolved.
struct Lines<W: Write> {
    w: W,
    rank: u32,
    queue: VecDeque<Slot>,
    /// Position of `queue[0]` among all lines.
    first: u64,
    written: u64,
    /// Most lines held in memory behind unresolved receives (see `push`).
    hold_limit: usize,
}

/// Most trace lines kept in memory behind receives that have not completed yet.
pub const HOLD_LIMIT: usize = 1 << 20;

impl<W: Write> Lines<W> {
    fn io(e: std::io::Error, path: &Path) -> Error {
        Error::Write {
            path: path.to_path_buf(),
            source: e,
        }
    }

    fn push(&mut self, a: Action, path: &Path) -> Result<(), Error> {
        if self.queue.is_empty() {
            self.written += 1;
            self.first += 1;
            return write_action(&mut self.w, self.rank, &a).map_err(|e| Self::io(e, path));
        }
        self.queue.push_back(Slot::Ready(a));
        if self.queue.len() > self.hold_limit {
            // Memory stays bounded: receives from a named source are written as posted
            // (a cancel that comes later can no longer take them out).
            for slot in self.queue.iter_mut() {
                if let Slot::Held(Some(_)) = slot {
                    let Slot::Held(Some(a)) = std::mem::replace(slot, Slot::Dropped) else {
                        unreachable!()
                    };
                    *slot = Slot::Ready(a);
                }
            }
            self.flush_ready(path)?;
        }
        Ok(())
    }

    fn hold(&mut self, posted: Option<Action>) -> u64 {
        self.queue.push_back(Slot::Held(posted));
        self.first + self.queue.len() as u64 - 1
    }

    /// The held line at `at` becomes `a` (`None`: nothing).
    fn resolve(&mut self, at: u64, a: Option<Action>, path: &Path) -> Result<(), Error> {
        // A line before `first` was written already (see `push`).
        let slot = at
            .checked_sub(self.first)
            .and_then(|i| self.queue.get_mut(i as usize));
        if let Some(slot @ Slot::Held(_)) = slot {
            *slot = a.map_or(Slot::Dropped, Slot::Ready);
        }
        self.flush_ready(path)
    }

    fn flush_ready(&mut self, path: &Path) -> Result<(), Error> {
        while matches!(self.queue.front(), Some(Slot::Ready(_) | Slot::Dropped)) {
            let slot = self.queue.pop_front();
            self.first += 1;
            if let Some(Slot::Ready(a)) = slot {
                self.written += 1;
                write_action(&mut self.w, self.rank, &a).map_err(|e| Self::io(e, path))?;
            }
        }
        Ok(())
    }

    /// Write what is left: a receive never completed as posted, or (from any source or
    /// with any tag) not at all. Returns how many were left out and how many written.
    fn finish(mut self, path: &Path) -> Result<(u64, u64, W), Error> {
        let mut dropped = 0;
        while let Some(slot) = self.queue.pop_front() {
            match slot {
                Slot::Ready(a) | Slot::Held(Some(a)) => {
                    self.written += 1;
                    write_action(&mut self.w, self.rank, &a).map_err(|e| Self::io(e, path))?;
                }
                Slot::Held(None) => dropped += 1,
                Slot::Dropped => {}
            }
        }
        self.w.flush().map_err(|e| Self::io(e, path))?;
        Ok((dropped, self.written, self.w))
    }
}

/// The name under which held receives that never completed are reported.
pub const UNRESOLVED_ANY_SOURCE: &str =
    "MPI_Irecv from MPI_ANY_SOURCE or with MPI_ANY_TAG that no wait or test completed";
/// The name under which cancelled requests are reported.
pub const CANCELLED: &str = "request cancelled by MPI_Cancel (left out of the trace)";

/// Convert the log at `path` into `out` (the rank's trace file), computation at
/// `flops_per_s`.
pub fn convert_rank<W: Write>(
    path: &Path,
    flops_per_s: f64,
    out: W,
) -> Result<(RankSummary, W), Error> {
    convert_rank_holding(path, flops_per_s, out, HOLD_LIMIT)
}

/// [`convert_rank`] holding at most `hold_limit` lines behind receives from a named source
/// that have not completed (those from any source are held however long it takes).
pub fn convert_rank_holding<W: Write>(
    path: &Path,
    flops_per_s: f64,
    out: W,
    hold_limit: usize,
) -> Result<(RankSummary, W), Error> {
    let mut rd = RawReader::open(path)?;
    let start = match rd.next_record()? {
        Some(r) if r.kind == Kind::Start => r,
        _ => {
            return Err(Error::Raw {
                path: path.to_path_buf(),
                offset: 8,
                kind: RawError::NoStart,
            })
        }
    };
    let process = process_of(&start, path)?;
    let (me, size) = (process.rank, process.size);
    let mut lines = Lines {
        w: out,
        rank: me,
        queue: VecDeque::new(),
        first: 0,
        written: 0,
        hold_limit,
    };
    let mut summary = RankSummary {
        rank: me,
        start_realtime_ns: start.a[2] as u64,
        ..Default::default()
    };
    lines.push(Action::Init, path)?;
    let mut comms: HashMap<i64, Comm> = HashMap::new();
    let mut pending: HashMap<i64, Pending> = HashMap::new();
    let mut last = start.t1;
    let mut acts: Vec<Action> = Vec::new();
    let mut cancelled = 0u64;
    let ns = |t: u64| t as f64 * 1e-9;
    loop {
        let offset = rd.offset();
        let Some(r) = rd.next_record()? else { break };
        let fail = |kind: RawError| Error::Raw {
            path: path.to_path_buf(),
            offset,
            kind,
        };
        let rank_of = |v: i64| -> Result<u32, Error> {
            if (0..i64::from(size)).contains(&v) {
                Ok(v as u32)
            } else {
                Err(fail(RawError::BadRank {
                    rank: v,
                    size: i64::from(size),
                }))
            }
        };
        let tag_of = |v: i64| -> Result<i32, Error> {
            i32::try_from(v).map_err(|_| fail(RawError::Malformed(r.kind)))
        };
        acts.clear();
        // Lines resolved out of order (held receives) are written through `resolved`.
        let mut resolved: Vec<(u64, Option<Action>)> = Vec::new();
        match r.kind {
            Kind::Start => return Err(fail(RawError::Malformed(Kind::Start))),
            Kind::End => {
                push_compute(&mut lines, &mut summary, last, r.t0, flops_per_s, path)?;
                summary.seconds = ns(r.t0.saturating_sub(start.t1));
                summary.finished = true;
                lines.push(Action::Finalize, path)?;
                break;
            }
            Kind::Comm => {
                let n = usize::try_from(r.a[1]).map_err(|_| fail(RawError::Malformed(r.kind)))?;
                if r.extra.len() != n || n == 0 {
                    return Err(fail(RawError::Malformed(r.kind)));
                }
                let members = r
                    .extra
                    .iter()
                    .map(|&v| rank_of(v))
                    .collect::<Result<Vec<u32>, Error>>()?;
                let me_in = usize::try_from(r.a[2])
                    .ok()
                    .filter(|&i| i < n)
                    .ok_or_else(|| {
                        fail(RawError::BadCommRank {
                            rank: r.a[2],
                            size: n,
                        })
                    })?;
                let mut sorted = members.clone();
                sorted.sort_unstable();
                let whole_world =
                    n == size as usize && sorted.iter().enumerate().all(|(i, &m)| m == i as u32);
                comms.insert(
                    r.a[0],
                    Comm {
                        members,
                        me: me_in,
                        whole_world,
                    },
                );
                continue;
            }
            Kind::Uncovered => {
                summary
                    .uncovered
                    .push((r.text(r.a[1]), r.a[0].max(0) as u64));
                continue;
            }
            Kind::Send => acts.push(Action::Send {
                dst: rank_of(r.a[1])?,
                tag: tag_of(r.a[2])?,
                bytes: r.a[3] as f64,
            }),
            Kind::Recv => acts.push(Action::Recv {
                src: rank_of(r.a[0])?,
                tag: tag_of(r.a[1])?,
                bytes: r.a[2] as f64,
            }),
            Kind::Isend => {
                let (dst, tag) = (rank_of(r.a[1])?, tag_of(r.a[2])?);
                let bytes = r.a[3] as f64;
                acts.push(Action::Isend { dst, tag, bytes });
                pending.insert(
                    r.a[4],
                    Pending {
                        key: (me, dst, tag),
                        held: None,
                        bytes,
                    },
                );
            }
            Kind::Irecv => {
                // Held until its completion names the source, tag and size, or says it was
                // cancelled.
                let bytes = r.a[2] as f64;
                let posted = if r.a[0] >= 0 && r.a[1] >= 0 {
                    let (src, tag) = (rank_of(r.a[0])?, tag_of(r.a[1])?);
                    Some(Action::Irecv { src, tag, bytes })
                } else {
                    None
                };
                push_compute(&mut lines, &mut summary, last, r.t0, flops_per_s, path)?;
                last = r.t1;
                let key = match &posted {
                    Some(Action::Irecv { src, tag, .. }) => (*src, me, *tag),
                    _ => (0, me, 0),
                };
                let at = lines.hold(posted);
                pending.insert(
                    r.a[3],
                    Pending {
                        key,
                        held: Some(at),
                        bytes,
                    },
                );
                summary.recorded_calls += 1;
                summary.recorded_call_s += ns(r.t1.saturating_sub(r.t0));
                continue;
            }
            Kind::Done => {
                if r.extra.len() % 4 != 0 {
                    return Err(fail(RawError::Malformed(r.kind)));
                }
                for c in r.extra.chunks_exact(4) {
                    let Some(p) = pending.remove(&c[0]) else {
                        continue;
                    };
                    if c[1] == -2 {
                        // Cancelled: a held receive is left out; a send, already written,
                        // stays (counted).
                        if let Some(at) = p.held {
                            resolved.push((at, None));
                        }
                        cancelled += 1;
                        continue;
                    }
                    let key = match p.held {
                        Some(at) => {
                            let (src, tag) = (rank_of(c[1])?, tag_of(c[2])?);
                            let bytes = if c[3] >= 0 { c[3] as f64 } else { p.bytes };
                            resolved.push((at, Some(Action::Irecv { src, tag, bytes })));
                            (src, me, tag)
                        }
                        None => p.key,
                    };
                    acts.push(Action::Wait {
                        src: key.0,
                        dst: key.1,
                        tag: key.2,
                    });
                }
            }
            Kind::SendRecv => {
                let send = (r.a[0] >= 0)
                    .then(|| Ok::<_, Error>((rank_of(r.a[0])?, tag_of(r.a[1])?)))
                    .transpose()?;
                let recv = (r.a[3] >= 0)
                    .then(|| Ok::<_, Error>((rank_of(r.a[3])?, tag_of(r.a[4])?)))
                    .transpose()?;
                let (sb, rb) = (r.a[2] as f64, r.a[5] as f64);
                match (send, recv) {
                    (Some((dst, st)), Some((src, rt))) => {
                        acts.push(Action::Isend {
                            dst,
                            tag: st,
                            bytes: sb,
                        });
                        acts.push(Action::Irecv {
                            src,
                            tag: rt,
                            bytes: rb,
                        });
                        acts.push(Action::Wait {
                            src: me,
                            dst,
                            tag: st,
                        });
                        acts.push(Action::Wait {
                            src,
                            dst: me,
                            tag: rt,
                        });
                    }
                    (Some((dst, tag)), None) => acts.push(Action::Send {
                        dst,
                        tag,
                        bytes: sb,
                    }),
                    (None, Some((src, tag))) => acts.push(Action::Recv {
                        src,
                        tag,
                        bytes: rb,
                    }),
                    (None, None) => {}
                }
            }
            Kind::Coll => {
                let op =
                    Coll::from_code(r.a[0]).ok_or_else(|| fail(RawError::UnknownColl(r.a[0])))?;
                let comm = comms
                    .get(&r.a[1])
                    .ok_or_else(|| fail(RawError::UnknownComm(r.a[1])))?;
                collective(op, &r, comm, &mut acts).map_err(fail)?;
            }
        }
        // A call that writes nothing (a wait that only found cancelled requests) stays
        // part of the computation around it.
        if !acts.is_empty() || resolved.iter().any(|(_, a)| a.is_some()) {
            push_compute(&mut lines, &mut summary, last, r.t0, flops_per_s, path)?;
            last = r.t1;
            summary.recorded_calls += 1;
            summary.recorded_call_s += ns(r.t1.saturating_sub(r.t0));
        }
        for (at, a) in resolved {
            lines.resolve(at, a, path)?;
        }
        for a in acts.drain(..) {
            lines.push(a, path)?;
        }
    }
    let (dropped, written, out) = lines.finish(path)?;
    summary.actions = written;
    if dropped > 0 {
        summary
            .uncovered
            .push((UNRESOLVED_ANY_SOURCE.to_string(), dropped));
    }
    if cancelled > 0 {
        summary.uncovered.push((CANCELLED.to_string(), cancelled));
    }
    Ok((summary, out))
}

fn push_compute<W: Write>(
    lines: &mut Lines<W>,
    summary: &mut RankSummary,
    from: u64,
    to: u64,
    flops_per_s: f64,
    path: &Path,
) -> Result<(), Error> {
    let gap = to.saturating_sub(from);
    if gap == 0 {
        return Ok(());
    }
    let seconds = gap as f64 * 1e-9;
    summary.compute_s += seconds;
    lines.push(
        Action::Compute {
            flops: (seconds * flops_per_s).round(),
        },
        path,
    )
}

/// The actions of a collective record on `comm`.
fn collective(op: Coll, r: &Record, comm: &Comm, out: &mut Vec<Action>) -> Result<(), RawError> {
    let n = comm.members.len();
    if n <= 1 {
        return Ok(());
    }
    let root_of = |v: i64| -> Result<usize, RawError> {
        usize::try_from(v)
            .ok()
            .filter(|&i| i < n)
            .ok_or(RawError::BadCommRank { rank: v, size: n })
    };
    let (sent, received) = (r.a[3].max(0) as f64, r.a[4].max(0) as f64);
    let elem = if r.a[5] > 0 { r.a[5] as f64 } else { 1.0 };
    let counts = |k: usize| -> Result<&[i64], RawError> {
        if r.extra.len() == k * n {
            Ok(&r.extra)
        } else {
            Err(RawError::BadCounts {
                size: n,
                got: r.extra.len(),
            })
        }
    };
    let me = comm.me;
    let native = comm.whole_world;
    let world_root = |v: i64| -> Result<u32, RawError> { Ok(comm.members[root_of(v)?]) };
    match op {
        Coll::Barrier if native => out.push(Action::Barrier),
        Coll::Bcast if native => out.push(Action::Bcast {
            bytes: sent,
            root: world_root(r.a[2])?,
        }),
        Coll::Reduce if native => out.push(Action::Reduce {
            bytes: sent,
            flops: 0.0,
            root: world_root(r.a[2])?,
            dt: elem,
        }),
        Coll::Allreduce if native => out.push(Action::AllReduce {
            bytes: sent,
            flops: 0.0,
            dt: elem,
        }),
        Coll::Alltoall if native => out.push(Action::AllToAll {
            send_bytes: sent,
            recv_bytes: received,
        }),
        Coll::Allgather if native => out.push(Action::AllGather {
            send_bytes: sent,
            recv_bytes: received,
        }),
        Coll::Gather if native => {
            let root = root_of(r.a[2])?;
            let recv = if me == root { received } else { sent };
            out.push(Action::Gather {
                send_bytes: sent,
                recv_bytes: recv,
                root: comm.members[root],
            })
        }
        Coll::Scatter if native => {
            let root = root_of(r.a[2])?;
            let send = if me == root { sent } else { received };
            out.push(Action::Scatter {
                send_bytes: send,
                recv_bytes: received,
                root: comm.members[root],
            })
        }
        _ => {
            let group = Group {
                members: &comm.members,
                me,
            };
            let mut e = Expander { group: &group, out };
            match op {
                Coll::Barrier => e.barrier(),
                Coll::Bcast => e.bcast(root_of(r.a[2])?, sent, expand::tag::BCAST),
                Coll::Reduce => e.reduce(root_of(r.a[2])?, sent, expand::tag::REDUCE),
                Coll::Allreduce => {
                    e.reduce(0, sent, expand::tag::REDUCE);
                    e.bcast(0, sent, expand::tag::BCAST);
                }
                Coll::Alltoall => e.alltoallv(&|_| sent, &|_| received),
                Coll::Alltoallv => {
                    let c = counts(2)?;
                    let v = |j: usize| c[j].max(0) as f64;
                    let w = |j: usize| c[n + j].max(0) as f64;
                    e.alltoallv(&v, &w);
                }
                Coll::Allgather => {
                    e.gatherv(0, &|_| sent);
                    e.bcast(0, received * n as f64, expand::tag::BCAST);
                }
                Coll::Allgatherv => {
                    let c = counts(1)?;
                    let total: f64 = c.iter().map(|&v| v.max(0) as f64).sum();
                    e.gatherv(0, &|j| c[j].max(0) as f64);
                    e.bcast(0, total, expand::tag::BCAST);
                }
                Coll::Gather => {
                    let root = root_of(r.a[2])?;
                    let per = if me == root { received } else { sent };
                    e.gatherv(root, &|_| per);
                }
                Coll::Gatherv => {
                    let root = root_of(r.a[2])?;
                    if me == root {
                        let c = counts(1)?;
                        e.gatherv(root, &|j| c[j].max(0) as f64);
                    } else {
                        e.gatherv(root, &|_| sent);
                    }
                }
                Coll::Scatter => {
                    let root = root_of(r.a[2])?;
                    let per = if me == root { sent } else { received };
                    e.scatterv(root, &|_| per);
                }
                Coll::Scatterv => {
                    let root = root_of(r.a[2])?;
                    if me == root {
                        let c = counts(1)?;
                        e.scatterv(root, &|j| c[j].max(0) as f64);
                    } else {
                        e.scatterv(root, &|_| received);
                    }
                }
                Coll::ReduceScatter => {
                    let c = counts(1)?;
                    let total: f64 = c.iter().map(|&v| v.max(0) as f64).sum();
                    e.reduce(0, total, expand::tag::REDUCE);
                    e.scatterv(0, &|j| c[j].max(0) as f64);
                }
            }
        }
    }
    Ok(())
}
