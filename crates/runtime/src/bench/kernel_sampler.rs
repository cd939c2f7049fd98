//! The unit performance test of one block at one size ([`KernelSampler`]), under its
//! [`Conditions`]: alone or next to siblings, a pipeline stage among the other stages
//! (`stage.rs`), a block of a pool's `seq` among the others (`replica.rs`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use crossbeam_channel::Receiver;

use super::clock::clock_read_ns;
use super::conditions::{Conditions, InputState, Replica, Stage};
use super::gather::{Gather, GATHER_KEYS};
use super::replica;
use super::rig::{sequential_blocks, Rig};
use super::sampling::{sample_point, Repeated, Sampling};
use super::series::PointStats;
use super::siblings::{gathering_sibling, sibling, Tally};
use super::stage;
use super::stream::{copies, evict_unless_cold, not_copyable, stream_len, templates};
use super::threads::{on_core, LOAD_THREAD_NAME, TIMED_THREAD_NAME};
use crate::data::Data;
use crate::error::{Error, KernelError, LostThread, UnitTestError};
use crate::host::cache_bytes;
use crate::kernel::{unit_call, Inputs, Kernel, Op, Registry};

/// Most calls batched into one sample (bounds the inputs prepared in advance).
const MAX_BATCH: u64 = 100_000;

/// Time one kernel at one size (unit performance test), inputs cold.
pub fn time_kernel(
    kernel: &dyn Kernel,
    x: usize,
    inputs: &Inputs,
    spec: &Sampling,
    memory_limit: u128,
) -> Result<PointStats, Error> {
    time_kernel_in(kernel, x, inputs, spec, memory_limit, InputState::Cold)
}

/// Time one kernel at one size under `how` (an [`InputState`] or [`Conditions`]).
pub fn time_kernel_in(
    kernel: &dyn Kernel,
    x: usize,
    inputs: &Inputs,
    spec: &Sampling,
    memory_limit: u128,
    how: impl Into<Conditions>,
) -> Result<PointStats, Error> {
    sample_point(
        spec,
        &mut KernelSampler::new(kernel, x, inputs, spec, memory_limit, how)?,
    )
}

/// A unit performance test of one kernel at one size, ready to repeat: distinct inputs
/// made (the templates every repetition copies its inputs from) and the batch sized from
/// a probe.
pub struct KernelSampler<'a> {
    kernel: &'a dyn Kernel,
    op: Op,
    x: usize,
    state: InputState,
    siblings: usize,
    templates: Arc<Vec<Data>>,
    next: usize,
    batch: u64,
    outputs: Vec<Data>,
    /// The pipeline around a stage's unit test ([`Stage`]).
    rig: Option<Rig>,
    /// The `seq` a pool's workers run around the timed block ([`Replica`]).
    replica: Option<Rig>,
    /// A warm per-key reduction: the map outputs it gathers each key's values from.
    gather: Option<Gather>,
    /// A stage's phases over the repetitions so far ([`PointStats::phases`]).
    phases: Vec<f64>,
}

impl<'a> KernelSampler<'a> {
    /// The unit test of the block `name` of `registry` under `how`: [`KernelSampler::staged`]
    /// for a pipeline stage, [`KernelSampler::replicated`] for a block of a pool's `seq`,
    /// [`KernelSampler::new`] otherwise.
    pub fn for_block(
        registry: &'a Registry,
        name: &str,
        x: usize,
        inputs: &Inputs,
        spec: &Sampling,
        memory_limit: u128,
        how: Conditions,
    ) -> Result<KernelSampler<'a>, Error> {
        if how.stage.is_some() {
            return KernelSampler::staged(registry, x, inputs, spec, memory_limit, how);
        }
        if how.replica.is_some() {
            return KernelSampler::replicated(registry, x, inputs, spec, memory_limit, how);
        }
        let kernel = registry.get(name)?.as_ref();
        KernelSampler::new(kernel, x, inputs, spec, memory_limit, how)
    }

    /// A unit test of `kernel` under `how`. A pipeline stage's test (`how.stage`) needs its
    /// neighbours' blocks: [`KernelSampler::staged`]; a block of a pool's `seq`
    /// (`how.replica`) the other blocks of the `seq`: [`KernelSampler::replicated`].
    pub fn new(
        kernel: &'a dyn Kernel,
        x: usize,
        inputs: &Inputs,
        spec: &Sampling,
        memory_limit: u128,
        how: impl Into<Conditions>,
    ) -> Result<KernelSampler<'a>, Error> {
        let Conditions {
            input: state,
            siblings,
            stage,
            replica,
        } = how.into();
        if let Some(stage) = stage {
            return Err(UnitTestError::NeedsStaged {
                kernel: kernel.name().to_string(),
                index: stage.index,
                kernels: stage.kernels,
            }
            .into());
        }
        if let Some(replica) = replica {
            return Err(UnitTestError::NeedsReplicated {
                kernel: kernel.name().to_string(),
                index: replica.index,
                kernels: replica.kernels,
            }
            .into());
        }
        let bytes = kernel.input_bytes(x, inputs);
        // Each sibling holds a stream of its own.
        if bytes.saturating_mul(2 * (1 + siblings as u128)) > memory_limit {
            return Err(KernelError::TooLarge {
                what: format!("an input of size x={x} for `{}`", kernel.name()),
                needed_bytes: bytes.saturating_mul(2 * (1 + siblings as u128)),
                limit_bytes: memory_limit,
            }
            .into());
        }
        let templates = templates(kernel, x, inputs, memory_limit)?;
        let mut s = KernelSampler {
            kernel,
            op: kernel.op(),
            x,
            state,
            siblings,
            templates,
            next: 0,
            batch: 1,
            outputs: Vec::new(),
            rig: None,
            replica: None,
            gather: None,
            phases: Vec::new(),
        };
        // Probe (twice: the first call pays for cold caches and page faults) to size the
        // batch.
        let mut probe = f64::INFINITY;
        for _ in 0..2 {
            let input = s.copy(0)?;
            let t0 = Instant::now();
            let out = s.call(input)?;
            probe = probe.min(t0.elapsed().as_secs_f64().max(1e-9));
            drop(out);
        }
        // A warm per-key reduction runs on what its thread just gathered from the job's
        // map outputs: timed that way (`gather`), probed over one pass of the keys.
        if let (InputState::Warm, Op::ReducePerKey(f)) = (state, &s.op) {
            let mut g = Gather::new(kernel, f.clone(), x, inputs, memory_limit / 2)?;
            let keys = GATHER_KEYS;
            g.time(keys, kernel.name())?;
            probe = g.time(keys, kernel.name())? * 1e-9;
            s.gather = Some(g);
        }
        let batch = match state {
            // A stream as long as a program's repetition (`MIN_RUN`).
            InputState::Cold | InputState::Remote => {
                stream_len(probe, bytes, memory_limit / (1 + siblings as u128)) as u64
            }
            // As many calls as one sample needs, within half the level-2 cache.
            InputState::Warm => {
                let by_memory =
                    (memory_limit / (1 + siblings as u128) / bytes.max(1)).max(1) as u64;
                let by_time = (spec.min_sample.as_secs_f64() / probe).ceil() as u64;
                let by_cache =
                    (cache_bytes(2).unwrap_or(1 << 20) as u128 / 2 / bytes.max(1)).max(1);
                by_time
                    .clamp(1, MAX_BATCH)
                    .min(by_memory)
                    .min(by_cache as u64)
            }
        };
        s.batch = batch;
        s.outputs = Vec::with_capacity(batch as usize);
        Ok(s)
    }

    /// The unit test of a pipeline stage: `how.stage` names the stages' blocks (looked
    /// up in `registry`) and which one is timed. The repetition's stream is as long as
    /// the slowest stage makes a program's repetition ([`stream_len`]), within
    /// `memory_limit`.
    pub fn staged(
        registry: &'a Registry,
        x: usize,
        inputs: &Inputs,
        spec: &Sampling,
        memory_limit: u128,
        how: Conditions,
    ) -> Result<KernelSampler<'a>, Error> {
        let Some(Stage { index, kernels }) = how.stage.clone() else {
            return Err(UnitTestError::NoPipeline.into());
        };
        let (blocks, ops) = sequential_blocks(registry, index, &kernels, ("stage", "pipeline"))?;
        let mut s = KernelSampler::new(blocks[index], x, inputs, spec, memory_limit, how.alone())?;
        let rig = Rig::new(
            &s.templates,
            &blocks,
            (index, kernels, ops),
            (x, inputs, memory_limit),
        )?;
        let slowest = stage::slowest_call(&rig)?;
        let bytes = blocks[0].input_bytes(x, inputs);
        s.batch = stream_len(slowest, bytes, memory_limit / 2) as u64;
        s.rig = Some(rig);
        Ok(s)
    }

    /// The unit test of a block of a task pool's `seq`: `how.replica` names the blocks of
    /// the `seq` (looked up in `registry`) and which one is timed, `how.siblings` the other
    /// workers. A repetition's stream is as long as a program's repetition at the speed of
    /// the whole `seq` ([`stream_len`]) per thread, within `memory_limit`.
    pub fn replicated(
        registry: &'a Registry,
        x: usize,
        inputs: &Inputs,
        spec: &Sampling,
        memory_limit: u128,
        how: Conditions,
    ) -> Result<KernelSampler<'a>, Error> {
        let Some(Replica { index, kernels }) = how.replica.clone() else {
            return Err(UnitTestError::NoSeq.into());
        };
        let (blocks, ops) = sequential_blocks(registry, index, &kernels, ("block", "seq"))?;
        let alone = Conditions {
            replica: None,
            ..how.clone()
        };
        let mut s = KernelSampler::new(blocks[index], x, inputs, spec, memory_limit, alone)?;
        let chain = Rig::new(
            &s.templates,
            &blocks,
            (index, kernels, ops),
            (x, inputs, memory_limit),
        )?;
        let probe = replica::time_per_element(&chain)?;
        let bytes = blocks[0].input_bytes(x, inputs);
        let share = memory_limit / (1 + how.siblings as u128);
        s.batch = stream_len(probe, bytes, share) as u64;
        s.outputs = Vec::with_capacity(s.batch as usize);
        s.replica = Some(chain);
        Ok(s)
    }

    fn copy(&self, i: usize) -> Result<Data, Error> {
        self.templates[i]
            .try_clone()
            .ok_or_else(|| self.not_copyable())
    }

    fn not_copyable(&self) -> Error {
        not_copyable(self.kernel.name())
    }

    fn call(&self, input: Data) -> Result<Data, Error> {
        crate::unwind::catch(|| unit_call(&self.op, input)).map_err(|message| Error::Panicked {
            kernel: self.kernel.name().to_string(),
            message,
        })
    }

    /// The next input template (distinct inputs, cycled).
    fn next_copy(&mut self) -> Result<Data, Error> {
        self.next = (self.next + 1) % self.templates.len();
        self.copy(self.next)
    }
}

impl Repeated for KernelSampler<'_> {
    fn x(&self) -> usize {
        self.x
    }

    fn batch(&self) -> u64 {
        self.batch
    }

    fn take_phases(&mut self) -> Vec<f64> {
        std::mem::take(&mut self.phases)
    }

    fn one(&mut self) -> Result<f64, Error> {
        if let Some(rig) = &self.rig {
            let (ns, phases) = stage::repetition(rig, self.batch as usize)?;
            self.phases.extend(phases);
            return Ok(ns);
        }
        if self.siblings == 0 && self.replica.is_none() {
            return self.one_alone();
        }
        let stop = AtomicBool::new(false);
        let started = Barrier::new(self.siblings + 1);
        let len = self.batch as usize;
        // What every thread runs on an element, and the inputs its streams are made of:
        // the block, or a pool's whole `seq` and the inputs of its first block.
        let (chain, templates) = match &self.replica {
            Some(r) => (r.ops.clone(), Arc::clone(&r.first)),
            None => (vec![self.op.clone()], Arc::clone(&self.templates)),
        };
        // Cold (and a pool's `seq`, which starts on a stream element): one stream made for
        // all, in one queue that every thread takes from, as the workers of a task pool
        // take the elements of one stream.
        let mut queue: Option<Receiver<Data>> = None;
        if self.state == InputState::Cold || self.replica.is_some() {
            queue = Some(self.queued_stream(&templates, len * (self.siblings + 1))?);
        }
        // Which block of what every thread runs is timed.
        let timed_block = self.replica.as_ref().map_or(0, |r| r.index);
        let name = self.kernel.name().to_string();
        let ran = match &self.replica {
            Some(chain) => format!("a block of seq({})", chain.names.join(", ")),
            None => format!("kernel `{name}`"),
        };
        // A warm per-key reduction's siblings gather and reduce keys of their own from the
        // same map outputs, as the other threads of a job do.
        let mut gathers: Vec<Option<Gather>> = (0..self.siblings)
            .map(|i| {
                self.gather
                    .as_ref()
                    .map(|g| g.sibling(i + 1, self.siblings + 1))
            })
            .collect();
        std::thread::scope(|scope| {
            let workers: Vec<_> = (0..self.siblings)
                .map(|i| {
                    let (templates, chain, stop, started) =
                        (Arc::clone(&templates), &chain, &stop, &started);
                    let first = queue.clone();
                    let gather = gathers[i].take();
                    on_core(scope, LOAD_THREAD_NAME, i + 1, move || match gather {
                        Some(g) => gathering_sibling(g, len, stop, started),
                        None => {
                            let run = (chain.as_slice(), timed_block);
                            sibling(&templates, run, len, i, first, stop, started)
                        }
                    })
                })
                .collect();
            let (stop, started) = (&stop, &started);
            let mine = queue.take();
            let timed = on_core(scope, TIMED_THREAD_NAME, 0, move || {
                started.wait();
                let timed = match mine {
                    Some(queue) => self.time_queued(&queue),
                    None => self.one_alone().map(|ns| (ns, Tally::default())),
                };
                stop.store(true, Ordering::Release);
                timed
            })
            .join();
            // However the timed thread ended, the siblings stop.
            stop.store(true, Ordering::Release);
            let mut theirs = Tally::default();
            for w in workers {
                match w.join() {
                    Ok(t) => theirs = theirs.and(t),
                    Err(_) => return Err(LostThread::Sibling { ran }.into()),
                }
            }
            let (ns, mine) = timed.map_err(|_| LostThread::Timed { kernel: name })??;
            // The timed thread took none of the shared stream (it timed one of its own
            // afterwards): its figure alone, as the siblings did not run next to it.
            if mine.calls == 0 {
                return Ok(ns);
            }
            Ok(mine.and(theirs).per_call(clock_read_ns()))
        })
    }
}

impl KernelSampler<'_> {
    /// One repetition on this thread alone (see [`Repeated::one`]).
    fn one_alone(&mut self) -> Result<f64, Error> {
        let batch = self.batch as usize;
        if let Some(g) = &mut self.gather {
            return g.time(batch, self.kernel.name());
        }
        let prepared: Vec<Data> = match self.state {
            InputState::Cold => self.fresh_stream(batch)?,
            InputState::Remote => {
                let stream = self.fresh_stream(batch)?;
                return self.time_handed_over(stream);
            }
            InputState::Warm => (0..batch)
                .map(|_| self.next_copy())
                .collect::<Result<Vec<_>, _>>()?,
        };
        self.time_calls(prepared)
    }

    /// Take elements from `queue` until it is empty (sibling threads take from it too)
    /// and time each call on its own: ns per call, less what reading the clock costs
    /// ([`clock_read_ns`]), and the calls themselves. A block of a pool's `seq` gets each
    /// element from the blocks before it and hands what it returns to the blocks after
    /// it, on this thread, untimed. Falls back to timing a stream of its own if the
    /// siblings took everything (no calls then: none ran next to the siblings).
    fn time_queued(&mut self, queue: &Receiver<Data>) -> Result<(f64, Tally), Error> {
        let mut outputs = std::mem::take(&mut self.outputs);
        outputs.clear();
        let mut tally = Tally::default();
        while let Ok(input) = queue.try_recv() {
            let out = match &self.replica {
                Some(chain) => replica::run_timed(chain, input, &mut tally.ns),
                None => {
                    let t = Instant::now();
                    let out = self.call(input);
                    tally.ns += t.elapsed().as_nanos();
                    out
                }
            };
            outputs.push(out?);
            tally.calls += 1;
        }
        outputs.clear();
        self.outputs = outputs;
        if tally.calls == 0 {
            let alone = match &self.replica {
                Some(chain) => {
                    let own = self.queued_stream(&chain.first, self.batch.max(1) as usize)?;
                    self.time_queued(&own)?.0
                }
                None => self.one_alone()?,
            };
            return Ok((alone, Tally::default()));
        }
        Ok((tally.per_call(clock_read_ns()), tally))
    }

    /// Time the calls on `prepared`, in order: ns per call.
    fn time_calls(&mut self, prepared: Vec<Data>) -> Result<f64, Error> {
        let batch = prepared.len().max(1);
        let mut outputs = std::mem::take(&mut self.outputs);
        outputs.clear();
        let t = Instant::now();
        for input in prepared {
            outputs.push(self.call(input)?);
        }
        let ns = t.elapsed().as_nanos() as f64 / batch as f64;
        outputs.clear();
        self.outputs = outputs;
        Ok(ns)
    }
}

impl KernelSampler<'_> {
    /// `len` inputs made like a program's stream (`plan::stream_inputs`: the distinct
    /// inputs cycled, each a fresh copy), and out of the caches as a program's stream is
    /// when its run starts (see `ProgramSampler::one`).
    fn fresh_stream(&self, len: usize) -> Result<Vec<Data>, Error> {
        self.cold_copies(&self.templates, len)
    }

    /// `len` fresh copies of `templates`, cycled, out of the caches.
    fn cold_copies(&self, templates: &[Data], len: usize) -> Result<Vec<Data>, Error> {
        let stream = copies(templates, 0, len).ok_or_else(|| self.not_copyable())?;
        evict_unless_cold(&stream);
        Ok(stream)
    }

    /// A cold stream of `len` copies of `templates`, made as [`KernelSampler::fresh_stream`]
    /// makes one, in a queue that holds all of it.
    fn queued_stream(&self, templates: &[Data], len: usize) -> Result<Receiver<Data>, Error> {
        let stream = self.cold_copies(templates, len)?;
        let (tx, rx) = crossbeam_channel::bounded::<Data>(stream.len().max(1));
        for d in stream {
            // Cannot fail: the queue holds the whole stream and `rx` lives.
            let _ = tx.send(d);
        }
        Ok(rx)
    }

    /// One repetition of a [`InputState::Remote`] test: a helper thread writes each
    /// element of `stream` and queues it; this thread takes what is waiting (at most a
    /// quarter of its level-2 cache at a time), times the calls on it, and goes on. Time
    /// spent waiting for the helper is not counted: the cost of the hand-off itself is
    /// the pattern's overhead, calibrated on its own.
    fn time_handed_over(&mut self, stream: Vec<Data>) -> Result<f64, Error> {
        let n = stream.len().max(1);
        let bytes = stream.first().map_or(1, Data::bytes).max(1);
        let group = (cache_bytes(2).unwrap_or(1 << 20) / 4 / bytes).max(1) as usize;
        let (tx, rx) = crossbeam_channel::bounded::<Data>(crate::ctx::DEFAULT_CAPACITY);
        let mut outputs = std::mem::take(&mut self.outputs);
        outputs.clear();
        let timed = std::thread::scope(|scope| {
            scope.spawn(move || {
                for mut d in stream {
                    d.touch();
                    if tx.send(d).is_err() {
                        break;
                    }
                }
            });
            let mut total = Duration::ZERO;
            let mut taken = Vec::with_capacity(group);
            while let Ok(first) = rx.recv() {
                taken.push(first);
                while taken.len() < group {
                    match rx.try_recv() {
                        Ok(d) => taken.push(d),
                        Err(_) => break,
                    }
                }
                let t = Instant::now();
                for input in taken.drain(..) {
                    outputs.push(self.call(input)?);
                }
                total += t.elapsed();
            }
            Ok::<Duration, Error>(total)
        });
        outputs.clear();
        self.outputs = outputs;
        Ok(timed?.as_nanos() as f64 / n as f64)
    }
}
