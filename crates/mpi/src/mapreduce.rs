//! MapReduce over the processes of an MPI job, each with its own threads (the pattern-composition paper
//! §4.2.5): `mapreduce(map, reduce, nodes=m, threads=n, ..., reduction=R)` with `m` the
//! job's processes.
//!
//! One job maps `x` inputs: process `r` maps inputs `r, r + m, r + 2m, …` (each process
//! makes its own inputs; nothing is scattered). A map output is a dense keyed collection
//! (`keys` values, the value of key `k` at index `k`). The three reductions:
//!
//! - [`Reduction::Pairwise`]: each process runs the thread runtime's MapReduce with a
//!   pairwise reduce on its inputs, leaving one collection; every other process sends its
//!   collection to rank 0 as key–value pairs (`16·keys` bytes: an 8-byte key and an 8-byte
//!   value each, as the paper counts them), and rank 0 folds them in pairwise.
//! - [`Reduction::Local`]: the same with a per-key reduce, locally and at rank 0 (rank 0
//!   reduces each key over the `m` collections).
//! - [`Reduction::Global`]: process `r` owns a contiguous share of the keys. Each maps its
//!   inputs on `n` threads and keeps every map output; the values of each key go to its
//!   owner (process `r` sends `x_r · |K_s|` 8-byte values to each other process `s`), each
//!   reduces its own keys over all `x` values on `n` threads, and rank 0 gathers the
//!   results as key–value pairs (`16·|K_r|` bytes from each other process).
//!
//! [`bytes_per_job`] states what a job sends in total; the runtime counts what it
//! actually sends ([`DistributedMapReduce::bytes_sent`]) and the tests hold the two equal.

use std::cell::Cell;
use std::sync::Arc;

use mpi::traits::*;
use perfcompose_core::term::Reduction;
use perfcompose_runtime::kernel::{MapFn, PairwiseFn, PerKeyFn};
use perfcompose_runtime::plan::check_reduction;
use perfcompose_runtime::{BuildError, Config, Data, Op, Plan, Program, Registry};
use perfcompose_sim::trace::Action;

use crate::error::{DesignError, Error, RunFault};
use crate::job::Job;
use crate::trace::Recording;

/// Bytes of one key and of one value on the wire.
pub const KEY_BYTES: u64 = 8;
pub const VALUE_BYTES: u64 = 8;

/// The inputs process `rank` of `processes` maps in a job of `x` inputs.
pub fn share(x: usize, rank: usize, processes: usize) -> usize {
    if rank >= x {
        0
    } else {
        (x - rank).div_ceil(processes)
    }
}

/// The keys process `rank` of `processes` owns under [`Reduction::Global`]: a contiguous
/// range, the first `keys mod processes` ranges one key longer.
pub fn owned_keys(keys: usize, rank: usize, processes: usize) -> std::ops::Range<usize> {
    let base = keys / processes;
    let extra = keys % processes;
    let start = rank * base + rank.min(extra);
    let len = base + usize::from(rank < extra);
    start..start + len
}

/// The bytes one job of `x` inputs sends between `processes` processes, all processes
/// together, for collections of `keys` keys (module docs).
pub fn bytes_per_job(reduction: Reduction, processes: usize, x: usize, keys: usize) -> u64 {
    let m = processes;
    let pair = KEY_BYTES + VALUE_BYTES;
    match reduction {
        Reduction::Pairwise | Reduction::Local => (m as u64 - 1) * pair * keys as u64,
        Reduction::Global => {
            let mut total = 0u64;
            for r in 0..m {
                let mine = share(x, r, m) as u64;
                for s in (0..m).filter(|&s| s != r) {
                    total += mine * owned_keys(keys, s, m).len() as u64 * VALUE_BYTES;
                }
                if r != 0 {
                    total += owned_keys(keys, r, m).len() as u64 * pair;
                }
            }
            total
        }
    }
}

/// A MapReduce design built for the processes of a job.
pub struct DistributedMapReduce {
    /// `mapreduce(map, reduce, nodes=P, threads=n, reduction=R)`, for messages.
    name: String,
    map_kernel: String,
    reduce_kernel: String,
    reduction: Reduction,
    threads: usize,
    map: MapFn,
    reduce: ReduceFn,
    /// The thread runtime's MapReduce of one process (pairwise and local reductions).
    local: Option<Program<Data, Data>>,
    rank: usize,
    processes: usize,
    sent: Cell<u64>,
    /// The trace being recorded, if one is.
    recording: Recording,
}

enum ReduceFn {
    Pairwise(PairwiseFn),
    PerKey(PerKeyFn),
}

/// Message tags of the phases.
const TAG_RESULT: i32 = 11;
const TAG_SHUFFLE: i32 = 12;

impl DistributedMapReduce {
    /// Build `mapreduce(map, reduce, nodes=P, threads, reduction)` for `job` (its `P`
    /// processes); `reduction` `None` takes the reduce kernel's own style.
    pub fn new(
        job: &Job,
        registry: &Registry,
        map: &str,
        reduce: &str,
        threads: usize,
        reduction: Option<Reduction>,
        config: Config,
    ) -> Result<DistributedMapReduce, Error> {
        let plan = Plan::MapReduce {
            map: map.to_string(),
            reduce: reduce.to_string(),
            nodes: 1,
            threads,
            reduction,
        };
        let wrong = |name: &str, op: &Op, used_as: &str| {
            Error::from(DesignError::from(BuildError::WrongRole {
                name: name.to_string(),
                role: op.role().to_string(),
                used_as: used_as.to_string(),
            }))
        };
        let map_f = match registry.get(map).map_err(DesignError::from)?.op() {
            Op::Map { f, .. } => f,
            other => return Err(wrong(map, &other, "the map of a mapreduce")),
        };
        let op = registry.get(reduce).map_err(DesignError::from)?.op();
        check_reduction(&plan, reduce, &op, reduction).map_err(DesignError::from)?;
        let (reduce_f, default) = match op {
            Op::ReducePairwise(f) => (ReduceFn::Pairwise(f), Reduction::Pairwise),
            Op::ReducePerKey(f) => (ReduceFn::PerKey(f), Reduction::Local),
            other => return Err(wrong(reduce, &other, "the reduce of a mapreduce")),
        };
        let reduction = reduction.unwrap_or(default);
        // The thread runtime pins worker `i` to core `i` in every process alike, which
        // would stack the processes of a host on the same cores: each process's threads
        // stay within the cores `mpirun` bound it to, placed there by the OS.
        let config = Config {
            pin: false,
            ..config
        };
        let local = match reduction {
            Reduction::Global => None,
            _ => Some(
                plan.build(registry, config)
                    .map_err(DesignError::from)?
                    .program,
            ),
        };
        Ok(DistributedMapReduce {
            name: format!(
                "mapreduce({map}, {reduce}, nodes={}, threads={threads}, reduction={})",
                job.size(),
                reduction.name()
            ),
            map_kernel: map.to_string(),
            reduce_kernel: reduce.to_string(),
            reduction,
            threads: threads.max(1),
            map: map_f,
            reduce: reduce_f,
            local,
            rank: job.rank(),
            processes: job.size(),
            sent: Cell::new(0),
            recording: Recording::default(),
        })
    }

    /// The design as a term, for messages.
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn map_kernel(&self) -> &str {
        &self.map_kernel
    }

    pub fn reduce_kernel(&self) -> &str {
        &self.reduce_kernel
    }

    /// Threads per process.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Processes of the job.
    pub fn processes(&self) -> usize {
        self.processes
    }

    /// The keys of the map's output for `input`.
    pub fn map_keys(&self, input: &Data) -> usize {
        (self.map)(input).len()
    }

    /// The single-node MapReduce whose blocks stand for this design's when `here`
    /// processes share a host: `here × n` threads map and reduce at once.
    pub fn local_plan(&self, here: usize) -> Plan {
        Plan::MapReduce {
            map: self.map_kernel.clone(),
            reduce: self.reduce_kernel.clone(),
            nodes: 1,
            threads: here.max(1) * self.threads,
            reduction: Some(match self.reduction {
                Reduction::Pairwise => Reduction::Pairwise,
                _ => Reduction::Local,
            }),
        }
    }

    /// The reduction this design runs.
    pub fn reduction(&self) -> Reduction {
        self.reduction
    }

    /// Payload bytes this process has sent so far.
    pub fn bytes_sent(&self) -> u64 {
        self.sent.get()
    }

    /// Run jobs; every process of `job` calls this with its own share of each job's inputs
    /// (`jobs[j]` is a [`Data::Batch`] of [`share`] inputs). Rank 0 gets each job's result,
    /// the others `None`.
    pub fn run(&self, job: &Job, jobs: Vec<Data>) -> Result<Option<Vec<Vec<u64>>>, Error> {
        match self.reduction {
            Reduction::Pairwise | Reduction::Local => self.run_local_then_root(job, jobs),
            Reduction::Global => self.run_global(job, jobs),
        }
    }

    fn count(&self, bytes: u64) {
        self.sent.set(self.sent.get() + bytes);
    }

    /// Send `pairs` (a collection as key–value pairs) to rank 0.
    fn send_to_root(&self, job: &Job, pairs: &[u64]) {
        self.recording.before();
        job.world()
            .process_at_rank(0)
            .send_with_tag(pairs, TAG_RESULT);
        let bytes = pairs.len() as u64 * 8;
        self.recording.after(Action::Send {
            dst: 0,
            tag: TAG_RESULT,
            bytes: bytes as f64,
        });
        self.count(bytes);
    }

    /// Rank 0: the key–value pairs rank `r` sends.
    fn receive_from(&self, job: &Job, r: usize) -> Vec<u64> {
        self.recording.before();
        let (pairs, _) = job
            .world()
            .process_at_rank(r as i32)
            .receive_vec_with_tag::<u64>(TAG_RESULT);
        self.recording.after(Action::Recv {
            src: r as u32,
            tag: TAG_RESULT,
            bytes: (pairs.len() * 8) as f64,
        });
        pairs
    }

    /// Record the runs from now on as a trace, computation at `flops_per_s`.
    pub fn record(&self, flops_per_s: f64) {
        self.recording.start(flops_per_s);
    }

    /// Stop recording; the actions since [`DistributedMapReduce::record`].
    pub fn take_recording(&self) -> Option<Vec<Action>> {
        self.recording.take()
    }

    /// Pairwise and local: the thread runtime reduces each process's inputs, rank 0 the
    /// processes' collections.
    fn run_local_then_root(
        &self,
        job: &Job,
        jobs: Vec<Data>,
    ) -> Result<Option<Vec<Vec<u64>>>, Error> {
        let program = self.local.as_ref().expect("built for local reductions");
        let outputs = program
            .run_stream(jobs)
            .map_err(|e| RunFault::Local(e.into()))?
            .outputs;
        let mut results = Vec::with_capacity(outputs.len());
        for out in outputs {
            let Data::Counts(mine) = out else {
                return Err(RunFault::NoCollection.into());
            };
            if self.rank != 0 {
                let pairs = to_pairs(&mine, 0);
                self.send_to_root(job, &pairs);
                continue;
            }
            let mut collections = vec![mine];
            for r in 1..self.processes {
                let pairs = self.receive_from(job, r);
                collections.push(from_pairs(&pairs, collections[0].len(), r)?);
            }
            results.push(self.reduce_collections(collections));
        }
        Ok((self.rank == 0).then_some(results))
    }

    /// Rank 0's reduction of one collection per process.
    fn reduce_collections(&self, mut collections: Vec<Vec<u64>>) -> Vec<u64> {
        match &self.reduce {
            ReduceFn::Pairwise(f) => {
                let mut acc = collections.remove(0);
                for c in &collections {
                    f(&mut acc, c);
                }
                acc
            }
            ReduceFn::PerKey(f) => {
                let keys = collections[0].len();
                let mut values = Vec::with_capacity(collections.len());
                (0..keys)
                    .map(|k| {
                        values.clear();
                        values.extend(collections.iter().map(|c| c[k]));
                        f(k, &values)
                    })
                    .collect()
            }
        }
    }

    /// Global: map on threads, values to the keys' owners, each owner reduces its keys
    /// on threads, rank 0 gathers.
    fn run_global(&self, job: &Job, jobs: Vec<Data>) -> Result<Option<Vec<Vec<u64>>>, Error> {
        let ReduceFn::PerKey(per_key) = &self.reduce else {
            unreachable!("checked when built: global reductions are per key");
        };
        let world = job.world();
        let (m, me) = (self.processes, self.rank);
        let mut results = Vec::new();
        // The map's keys, agreed by every process on the first job (the same map gives
        // every input the same keys).
        let mut agreed: Option<usize> = None;
        for inputs in jobs {
            let Data::Batch(items) = inputs else {
                return Err(RunFault::NotABatch.into());
            };
            let outputs = map_on_threads(&self.map, &items, self.threads);
            let keys =
                *agreed.get_or_insert_with(|| agree_keys(job, outputs.first().map_or(0, Vec::len)));
            if outputs.iter().any(|o| o.len() != keys) {
                return Err(RunFault::UnevenMap { keys }.into());
            }
            // To each other process, the values of the keys it owns, input by input.
            let mut received: Vec<Vec<u64>> = vec![Vec::new(); m];
            let outgoing: Vec<Vec<u64>> = (0..m)
                .map(|s| {
                    let range = owned_keys(keys, s, m);
                    let mut buf = Vec::with_capacity(outputs.len() * range.len());
                    for o in &outputs {
                        buf.extend_from_slice(&o[range.clone()]);
                    }
                    buf
                })
                .collect();
            mpi::request::scope(|scope| {
                let mut sends = Vec::new();
                for (s, buf) in outgoing.iter().enumerate().filter(|(s, _)| *s != me) {
                    self.recording.before();
                    sends.push((
                        s,
                        world.process_at_rank(s as i32).immediate_send_with_tag(
                            scope,
                            &buf[..],
                            TAG_SHUFFLE,
                        ),
                    ));
                    let bytes = buf.len() as u64 * VALUE_BYTES;
                    self.recording.after(Action::Isend {
                        dst: s as u32,
                        tag: TAG_SHUFFLE,
                        bytes: bytes as f64,
                    });
                    self.count(bytes);
                }
                for (s, slot) in received.iter_mut().enumerate().filter(|(s, _)| *s != me) {
                    self.recording.before();
                    let (v, _) = world
                        .process_at_rank(s as i32)
                        .receive_vec_with_tag::<u64>(TAG_SHUFFLE);
                    self.recording.after(Action::Recv {
                        src: s as u32,
                        tag: TAG_SHUFFLE,
                        bytes: (v.len() as u64 * VALUE_BYTES) as f64,
                    });
                    *slot = v;
                }
                for (s, req) in sends {
                    self.recording.before();
                    req.wait();
                    self.recording.after(Action::Wait {
                        src: me as u32,
                        dst: s as u32,
                        tag: TAG_SHUFFLE,
                    });
                }
            });
            received[me] = outgoing[me].clone();
            // Reduce the keys this process owns over every input's value.
            let mine = owned_keys(keys, me, m);
            let reduced = reduce_owned(per_key, mine.clone(), &received, self.threads);
            if me != 0 {
                let pairs = to_pairs(&reduced, mine.start);
                self.send_to_root(job, &pairs);
                continue;
            }
            let mut all = vec![0u64; keys];
            all[mine.clone()].copy_from_slice(&reduced);
            for r in 1..m {
                let pairs = self.receive_from(job, r);
                for kv in pairs.chunks_exact(2) {
                    let k = kv[0] as usize;
                    if k >= keys {
                        return Err(RunFault::ForeignKey {
                            rank: r,
                            key: k,
                            keys,
                        }
                        .into());
                    }
                    all[k] = kv[1];
                }
            }
            results.push(all);
        }
        Ok((me == 0).then_some(results))
    }
}

/// The number of keys, the same on every process (rank 0's; a process without inputs
/// has none of its own).
fn agree_keys(job: &Job, mine: usize) -> usize {
    let mut k = mine as u64;
    job.world().all_reduce_into(
        &(mine as u64),
        &mut k,
        mpi::collective::SystemOperation::max(),
    );
    k as usize
}

/// Map every input on `threads` threads (inputs dealt out in contiguous chunks).
fn map_on_threads(map: &MapFn, items: &[Data], threads: usize) -> Vec<Vec<u64>> {
    if threads <= 1 || items.len() <= 1 {
        return items.iter().map(|d| map(d)).collect();
    }
    let chunk = items.len().div_ceil(threads);
    std::thread::scope(|s| {
        let handles: Vec<_> = items
            .chunks(chunk)
            .map(|part| s.spawn(move || part.iter().map(|d| map(d)).collect::<Vec<_>>()))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    })
}

/// Reduce keys `range` over the values every process sent (`from[s]` holds, input by
/// input, the values of the keys in `range`), on `threads` threads.
fn reduce_owned(
    per_key: &PerKeyFn,
    range: std::ops::Range<usize>,
    from: &[Vec<u64>],
    threads: usize,
) -> Vec<u64> {
    let width = range.len();
    let reduce_key = |i: usize, values: &mut Vec<u64>| {
        values.clear();
        for buf in from {
            values.extend(buf.iter().skip(i).step_by(width.max(1)));
        }
        per_key(range.start + i, values)
    };
    if width == 0 {
        return Vec::new();
    }
    let threads = threads.clamp(1, width);
    if threads == 1 {
        let mut values = Vec::new();
        return (0..width).map(|i| reduce_key(i, &mut values)).collect();
    }
    let chunk = width.div_ceil(threads);
    let parts: Vec<Vec<u64>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..width)
            .step_by(chunk)
            .map(|lo| {
                let hi = (lo + chunk).min(width);
                s.spawn(move || {
                    let mut values = Vec::new();
                    (lo..hi)
                        .map(|i| reduce_key(i, &mut values))
                        .collect::<Vec<u64>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    parts.concat()
}

/// A dense collection as key–value pairs, keys from `first`.
fn to_pairs(values: &[u64], first: usize) -> Vec<u64> {
    let mut out = Vec::with_capacity(2 * values.len());
    for (i, v) in values.iter().enumerate() {
        out.push((first + i) as u64);
        out.push(*v);
    }
    out
}

/// Key–value pairs that rank `rank` sent, as a dense collection of `keys` keys.
fn from_pairs(pairs: &[u64], keys: usize, rank: usize) -> Result<Vec<u64>, Error> {
    let mut out = vec![0u64; keys];
    for kv in pairs.chunks_exact(2) {
        let k = kv[0] as usize;
        if k >= keys {
            return Err(RunFault::ForeignKey { rank, key: k, keys }.into());
        }
        out[k] = kv[1];
    }
    Ok(out)
}

/// The inputs of process `rank` for `jobs` jobs of `x` images each (one shared image).
pub fn image_jobs(
    image: &Arc<perfcompose_runtime::data::Image>,
    x: usize,
    jobs: usize,
    rank: usize,
    processes: usize,
) -> Vec<Data> {
    let n = share(x, rank, processes);
    (0..jobs)
        .map(|_| Data::Batch((0..n).map(|_| Data::Image(Arc::clone(image))).collect()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_and_keys_are_shared_out_completely() {
        for m in 1..6 {
            for x in 0..20 {
                let total: usize = (0..m).map(|r| share(x, r, m)).sum();
                assert_eq!(total, x, "x={x} m={m}");
            }
            for keys in [0, 1, 7, 768] {
                let mut next = 0;
                for r in 0..m {
                    let k = owned_keys(keys, r, m);
                    assert_eq!(k.start, next);
                    next = k.end;
                }
                assert_eq!(next, keys);
            }
        }
    }

    #[test]
    fn bytes_per_job_follow_the_seeds_counts() {
        // One collection of 768 key-value pairs from each process but rank 0.
        assert_eq!(bytes_per_job(Reduction::Pairwise, 2, 10, 768), 12288);
        assert_eq!(bytes_per_job(Reduction::Local, 4, 10, 768), 3 * 12288);
        assert_eq!(bytes_per_job(Reduction::Pairwise, 1, 10, 768), 0);
        // Global on 2 processes, 8 inputs: each sends 4 inputs × 384 values to the
        // other, then rank 1 sends its 384 reduced keys as pairs.
        assert_eq!(
            bytes_per_job(Reduction::Global, 2, 8, 768),
            2 * 4 * 384 * 8 + 384 * 16
        );
    }

    #[test]
    fn pairs_round_trip_and_bad_keys_are_errors() {
        let v = vec![5, 0, 7];
        assert_eq!(to_pairs(&v, 10), vec![10, 5, 11, 0, 12, 7]);
        assert_eq!(from_pairs(&to_pairs(&v, 0), 3, 1).unwrap(), v);
        let e = from_pairs(&[3, 1], 3, 1).unwrap_err();
        assert!(
            matches!(
                e,
                Error::Run(RunFault::ForeignKey {
                    rank: 1,
                    key: 3,
                    keys: 3
                })
            ),
            "{e:?}"
        );
        assert_eq!(
            std::error::Error::source(&e).map(ToString::to_string),
            Some("rank 1 sent key 3 of 3".to_string())
        );
    }

    #[test]
    fn owned_keys_reduce_over_every_process_and_input() {
        let sum: PerKeyFn = Arc::new(|_, v: &[u64]| v.iter().sum());
        // Keys 2..5 (width 3); two processes sent 2 and 1 inputs.
        let from = vec![vec![1, 2, 3, 10, 20, 30], vec![100, 200, 300]];
        for threads in 1..4 {
            assert_eq!(
                reduce_owned(&sum, 2..5, &from, threads),
                vec![111, 222, 333]
            );
        }
        let items: Vec<Data> = (0..5).map(|i| Data::Counts(vec![i, 2 * i])).collect();
        let map: MapFn = Arc::new(|d: &Data| match d {
            Data::Counts(c) => c.clone(),
            _ => Vec::new(),
        });
        for threads in 1..4 {
            let out = map_on_threads(&map, &items, threads);
            assert_eq!(out.len(), 5);
            assert_eq!(out[4], vec![4, 8]);
        }
    }
}
