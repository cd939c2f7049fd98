//! Shared state of one run: the fault list, the stop flag, queue capacity and pinning.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, SendError, Sender, TryRecvError, TrySendError};

use crate::error::Fault;

/// Default capacity of the queues between stages.
pub const DEFAULT_CAPACITY: usize = 64;

/// How a run is configured. Built by [`crate::Program::with_config`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// Capacity of every queue between stages (elements). Bounds the memory a fast
    /// producer can fill: at most `capacity` elements wait in each queue.
    pub capacity: usize,
    /// Pin each worker thread to a core (round robin over the cores the OS reports),
    /// when the design has no more worker threads than cores; a design with more is left
    /// to the OS. On by default: unpinned, Linux at times kept both stages of a pipeline
    /// on one of two cores, which then took the sum of its stages per element.
    pub pin: bool,
    /// How long a pinned worker keeps checking its queues before it sleeps on them
    /// ([`DEFAULT_SPIN`]; only when every thread of the run has a core of its own — the
    /// workers of a pinned run, and the feeder and collector of the producer/consumer
    /// driver, [`crate::Program::run`] — so that a spin takes a core from no one).
    /// Zero: sleep at once.
    pub spin: Duration,
}

/// How long a pinned worker whose queue is empty (or, downstream, full) checks it again
/// before it sleeps. A worker that sleeps between elements costs the stage that hands it
/// the next one a futex wake of a thread on another core, on every element: on the Intel
/// guest `pipe(inc, nop)` took 1.6–2.2 ns per int at x = 4,096–32,768 where `seq(inc, nop)`
/// took 1.0–1.4, and with a spin of 100 µs 1.0–1.3 (docs/runtime.md, "Spinning before
/// sleeping"). A millisecond covers every wait of the paper suite's pipelines of `inc`
/// (up to 0.3 ms at x = 262,144); a wake after a longer wait costs under 1% of it. An
/// idle program still sleeps after it; a design with more threads than cores, an
/// unpinned one, and the producer/consumer driver on a machine without two cores to
/// spare for its feeder and collector never spin.
pub const DEFAULT_SPIN: Duration = Duration::from_millis(1);

impl Default for Config {
    fn default() -> Config {
        // Deep enough that a fast stage hands over bursts instead of waking its
        // neighbour for every element (a futex wake costs microseconds on a loaded
        // machine), shallow enough that 1 MB elements keep the in-flight data modest.
        Config {
            capacity: DEFAULT_CAPACITY,
            pin: true,
            spin: DEFAULT_SPIN,
        }
    }
}

/// Per-run shared state handed to every node when it spawns its threads.
pub(crate) struct Ctx {
    pub(crate) capacity: usize,
    /// How long a worker checks its queues before it sleeps on them: the configured spin
    /// if the run pins its workers, zero otherwise.
    pub(crate) spin: Duration,
    faults: Mutex<Vec<Fault>>,
    stop: AtomicBool,
    cores: Option<Vec<core_affinity::CoreId>>,
    /// The run's threads pinned to each of `cores`, and where the round robin goes on.
    load: Mutex<CoreLoad>,
    /// Where the run's worker threads wait before their first element, if the run
    /// starts its clock only once they all have started ([`Ctx::gated`]).
    gate: Option<Gate>,
    /// The end of a stream held in memory ([`Ctx::ending`]): the workers that put into
    /// the run's last queue count what they put, and the last of them to end wakes the
    /// caller.
    end: Option<StreamEnd>,
    /// The run's last queue (a `Sender`, type-erased) while the run starts its workers,
    /// so that each can tell whether it puts into it ([`Ctx::end_of`]); dropped once they
    /// have started ([`Ctx::started`]) and every phase boundary that starts workers later
    /// has started them ([`Ctx::hold_last_queue`]), so that the queue ends with its last
    /// worker.
    last_queue: Mutex<LastQueue>,
}

/// The run's last queue while workers that may put into it are still to start: the
/// driver holds it until it has started its workers, and so does each phase boundary of
/// a phased `seq` until it has started the workers of its later phase.
#[derive(Default)]
struct LastQueue {
    sender: Option<Box<dyn std::any::Any + Send>>,
    holds: usize,
}

impl LastQueue {
    fn release(&mut self) {
        self.holds = self.holds.saturating_sub(1);
        if self.holds == 0 {
            self.sender = None;
        }
    }
}

/// A phase boundary's hold on the run's last queue ([`Ctx::hold_last_queue`]), let go
/// when dropped.
pub(crate) struct LastQueueHold<'a> {
    ctx: &'a Ctx,
    held: bool,
}

impl Drop for LastQueueHold<'_> {
    fn drop(&mut self) {
        if self.held {
            self.ctx
                .last_queue
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .release();
        }
    }
}

/// How many of a run's threads are pinned to each core ([`Ctx::take_core`]).
struct CoreLoad {
    busy: Vec<usize>,
    next: usize,
}

impl Ctx {
    /// The state of a run of a design with `threads` worker threads. Pinning applies
    /// only when every worker can have a core of its own: with more threads than cores,
    /// round-robin pinning put two `qsort` stages of `tpool(2, pipe(qsort, inc))` on one
    /// core in some runs (1.45× slower than unpinned in one round of two), where the OS
    /// balances them.
    ///
    /// This is the run of the producer/consumer driver ([`crate::Program::run`]), whose
    /// feeder thread and collecting caller need cores too: its workers spin
    /// ([`Config::spin`]) only if they and those two all have a core of their own.
    /// Spinning pinned workers on both cores of two starved the feeder and the
    /// collector: `pipe(nop, nop)` took 16 µs per element instead of 0.4.
    pub(crate) fn new(config: &Config, threads: usize) -> Ctx {
        Ctx::with_driver(config, threads, PRODUCER_CONSUMER_THREADS)
    }

    fn with_driver(config: &Config, threads: usize, driver_threads: usize) -> Ctx {
        let cores = if config.pin {
            core_affinity::get_core_ids().filter(|c| !c.is_empty() && threads <= c.len())
        } else {
            None
        };
        let spin = match &cores {
            Some(c) if threads + driver_threads <= c.len() => config.spin,
            _ => Duration::ZERO,
        };
        Ctx {
            capacity: config.capacity.max(1),
            spin,
            faults: Mutex::new(Vec::new()),
            stop: AtomicBool::new(false),
            load: Mutex::new(CoreLoad {
                busy: vec![0; cores.as_ref().map_or(0, Vec::len)],
                next: 0,
            }),
            cores,
            gate: None,
            end: None,
            last_queue: Mutex::new(LastQueue::default()),
        }
    }

    /// This run's stream is `n` elements long, and its outputs stay in `last_queue`
    /// until the caller takes them after the clock stops: the workers that put there
    /// wake the caller once all `n` are in ([`Ctx::await_end`]).
    pub(crate) fn ending<T: Send + 'static>(mut self, n: usize, last_queue: Sender<T>) -> Ctx {
        self.end = Some(StreamEnd::new(n));
        self.last_queue = Mutex::new(LastQueue {
            sender: Some(Box::new(last_queue)),
            holds: 1,
        });
        self
    }

    /// What a worker that puts into `output` counts its outputs on: the stream's end if
    /// `output` is the run's last queue ([`Ctx::ending`]). Asked before the worker
    /// starts.
    pub(crate) fn end_of<T: Send + 'static>(&self, output: &Sender<T>) -> Option<&StreamEnd> {
        let end = self.end.as_ref()?;
        let last = self.last_queue.lock().unwrap_or_else(|e| e.into_inner());
        let last = last.sender.as_ref()?.downcast_ref::<Sender<T>>()?;
        last.same_channel(output).then_some(end)
    }

    /// Every worker the driver starts has started: let go of the last queue, so that it
    /// ends with them (once no phase boundary holds it any more).
    pub(crate) fn started(&self) {
        self.last_queue
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .release();
    }

    /// Keep the run's last queue within reach of workers that start after the driver
    /// has started its own (the later phases of a phased `seq`), until the hold is
    /// dropped. Taken before the driver's [`Ctx::started`], or by a thread that holds
    /// such a hold itself; a no-op once the queue is let go (nothing started later puts
    /// into it then) and for runs without an end ([`Ctx::ending`]).
    pub(crate) fn hold_last_queue(&self) -> LastQueueHold<'_> {
        let mut q = self.last_queue.lock().unwrap_or_else(|e| e.into_inner());
        let held = q.sender.is_some();
        if held {
            q.holds += 1;
        }
        LastQueueHold { ctx: self, held }
    }

    /// Sleep until every output of the stream is in the last queue (`true`), or an
    /// element failed (`false`: some outputs will never come). `have` says how many the
    /// last queue holds (a safety net: [`StreamEnd::wait`]). At once for a run without an
    /// end ([`Ctx::ending`]).
    pub(crate) fn await_end(&self, have: &dyn Fn() -> usize) -> bool {
        match &self.end {
            Some(end) => end.wait(have, &|| self.stopped()),
            None => true,
        }
    }

    /// How many outputs the workers counted into the stream's end.
    pub(crate) fn end_counted(&self) -> usize {
        self.end
            .as_ref()
            .map_or(0, |e| e.put.load(Ordering::Acquire))
    }

    /// Like [`Ctx::new`], for a run whose worker threads wait at a gate once started (and
    /// pinned) until the driver opens it ([`Ctx::open_gate`]): the driver of
    /// [`crate::Program::run_stream`] starts its clock only then, so that starting threads
    /// (about 200 µs for one worker on the Intel guest, against the 1.2 µs an `inc` of
    /// 1,024 ints takes) is not spread over the elements of a stream. The stream is fed
    /// before the clock starts and the caller sleeps while it flows, so pinned workers
    /// spin whenever the design fits the cores.
    pub(crate) fn gated(config: &Config, threads: usize) -> Ctx {
        Ctx {
            gate: Some(Gate::default()),
            ..Ctx::with_driver(config, threads, 0)
        }
    }

    /// A worker thread of the run is about to start (called before spawning it).
    pub(crate) fn expect_thread(&self) {
        if let Some(g) = &self.gate {
            g.expect();
        }
    }

    /// A worker thread of the run has started: pin it, and wait at the gate if the run
    /// has one. The core it was pinned to, to give back when it ends
    /// ([`Ctx::release_core`]).
    pub(crate) fn start_thread(&self) -> Option<core_affinity::CoreId> {
        let core = self.pin_current();
        self.arrive();
        core
    }

    /// Wait at the gate, if the run has one, without taking a core: the boundary thread
    /// of a phased `seq`, once the workers of its first phase are announced.
    pub(crate) fn arrive(&self) {
        if let Some(g) = &self.gate {
            g.arrive();
        }
    }

    /// Wait until every expected worker thread waits at the gate, then open it; the
    /// instant it opened. At once for a run without a gate.
    pub(crate) fn open_gate(&self) -> Instant {
        match &self.gate {
            Some(g) => g.open(),
            None => Instant::now(),
        }
    }

    /// Record a failed element and ask the feeder to stop.
    pub(crate) fn fault(&self, fault: Fault) {
        self.faults
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(fault);
        self.stop.store(true, Ordering::Release);
        if let Some(end) = &self.end {
            end.wake();
        }
    }

    pub(crate) fn stopped(&self) -> bool {
        self.stop.load(Ordering::Acquire)
    }

    pub(crate) fn take_faults(&self) -> Vec<Fault> {
        let mut f = std::mem::take(&mut *self.faults.lock().unwrap_or_else(|e| e.into_inner()));
        f.sort_by_key(|f| f.seq);
        f
    }

    /// Pin the calling thread to the next core, if pinning is on; the core. Failure to
    /// pin is not an error (some containers forbid it); the run just goes on unpinned.
    pub(crate) fn pin_current(&self) -> Option<core_affinity::CoreId> {
        let core = self.take_core()?;
        let _ = core_affinity::set_for_current(core);
        Some(core)
    }

    /// Whether the run pins its threads.
    pub(crate) fn pins(&self) -> bool {
        self.cores.is_some()
    }

    /// The core the next thread of the run is pinned to, or `None` when the run does not
    /// pin: round robin over the cores with the fewest of the run's threads on them.
    /// While no thread has given its core back ([`Ctx::release_core`]) that is plain
    /// round robin; a worker gives its core back when it ends, so the threads of a later
    /// phase of a phased `seq` take the cores the earlier phase left, not cores still
    /// busy with other stages.
    pub(crate) fn take_core(&self) -> Option<core_affinity::CoreId> {
        let cores = self.cores.as_ref()?;
        let mut load = self.load.lock().unwrap_or_else(|e| e.into_inner());
        let n = cores.len();
        let i = (0..n)
            .map(|k| (load.next + k) % n)
            .min_by_key(|&i| load.busy[i])?;
        load.busy[i] += 1;
        load.next = i + 1;
        Some(cores[i])
    }

    /// A thread pinned to `core` by [`Ctx::take_core`] ends.
    pub(crate) fn release_core(&self, core: Option<core_affinity::CoreId>) {
        let (Some(core), Some(cores)) = (core, self.cores.as_ref()) else {
            return;
        };
        if let Some(i) = cores.iter().position(|c| *c == core) {
            let mut load = self.load.lock().unwrap_or_else(|e| e.into_inner());
            load.busy[i] = load.busy[i].saturating_sub(1);
        }
    }

    #[cfg(test)]
    fn arrived(&self) -> usize {
        self.gate
            .as_ref()
            .map_or(0, |g| g.state.lock().unwrap().arrived)
    }

    #[cfg(test)]
    pub(crate) fn pinning(&self) -> Option<&[core_affinity::CoreId]> {
        self.cores.as_deref()
    }
}

/// Where threads wait until a driver lets them go ([`Ctx::gated`]): each is announced
/// ([`Gate::expect`]) before it starts, waits once started ([`Gate::arrive`]), and
/// [`Gate::open`] waits until all have arrived before letting them go.
#[derive(Default)]
pub(crate) struct Gate {
    state: Mutex<GateState>,
    cv: Condvar,
}

impl Gate {
    /// One more thread will arrive.
    pub(crate) fn expect(&self) {
        self.state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .expected += 1;
    }

    /// Arrive, and wait until the gate opens.
    pub(crate) fn arrive(&self) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        s.arrived += 1;
        self.cv.notify_all();
        while !s.open {
            s = self.cv.wait(s).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Wait until every expected thread has arrived, open, and return the instant the
    /// gate opened: taken before the waiting threads are woken, since a woken thread
    /// pinned to the caller's core can preempt the caller for a millisecond (a clock
    /// started after `open` returned then missed most of a short stream).
    pub(crate) fn open(&self) -> Instant {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        while s.arrived < s.expected {
            s = self.cv.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        s.open = true;
        let t0 = Instant::now();
        self.cv.notify_all();
        t0
    }
}

/// The end of a stream that is held in memory and whose outputs stay in the last queue
/// until the clock stops ([`crate::Program::run_stream`], and the hand-written baseline
/// of the overhead calibration): each worker that puts into the last queue counts what
/// it put on its own and adds that to the end when it ends ([`StreamEnd::add`]; a worker
/// ends as soon as its input is empty and closed, which at the end of a stream is right
/// after its last output), and the addition that completes the stream wakes the caller
/// sleeping in [`StreamEnd::wait`] — one wake-up per stream, and no shared write per
/// element.
///
/// The caller used to check the queue now and then instead, a few dozen times per
/// stream. On a machine with as many cores as the design has threads every check took
/// a core from a stage: in `pipe(inc, inc)` at x = 16,384 on the 2-core Intel guest, the
/// call of the first stage that a check interrupted took about 54 µs instead of 19, and
/// the checks, which come closer together towards the end of a stream, made the stage's
/// mean call 1.04–1.14× its unit test's (docs/runtime.md, "How the stream driver learns
/// that a stream has ended").
pub(crate) struct StreamEnd {
    expected: usize,
    put: AtomicUsize,
    lock: Mutex<()>,
    cv: Condvar,
}

/// How long [`StreamEnd::wait`] sleeps at most before it looks again on its own: a safety
/// net only, since the last output and every fault wake it (a rare look costs the
/// design nothing measurable: one per 100 ms).
const END_CHECK: Duration = Duration::from_millis(100);

impl StreamEnd {
    /// The end of a stream of `expected` outputs.
    pub(crate) fn new(expected: usize) -> StreamEnd {
        StreamEnd {
            expected,
            put: AtomicUsize::new(0),
            lock: Mutex::new(()),
            cv: Condvar::new(),
        }
    }

    /// `n` more outputs are in the last queue (a worker that put them has ended); the
    /// addition that completes the stream wakes the caller.
    pub(crate) fn add(&self, n: usize) {
        let before = self.put.fetch_add(n, Ordering::AcqRel);
        if before < self.expected && before + n >= self.expected {
            self.wake();
        }
    }

    /// Wake the caller to look again (the last output is in, or an element failed).
    pub(crate) fn wake(&self) {
        // Taken so that the wake cannot fall between the caller's look and its sleep.
        let _seen = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        self.cv.notify_all();
    }

    /// Sleep until every expected output is in (`true`), or `stop()` (`false`). Besides
    /// the count, `have()` (what the last queue holds) is looked at on every wake: should
    /// something put outputs into the last queue without counting them, the wait still
    /// ends, [`END_CHECK`] late at most.
    pub(crate) fn wait(&self, have: &dyn Fn() -> usize, stop: &dyn Fn() -> bool) -> bool {
        let mut guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if self.put.load(Ordering::Acquire) >= self.expected || have() >= self.expected {
                return true;
            }
            if stop() {
                return false;
            }
            guard = self
                .cv
                .wait_timeout(guard, END_CHECK)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

#[derive(Default)]
struct GateState {
    expected: usize,
    arrived: usize,
    open: bool,
}

/// Threads of the producer/consumer driver besides the design's: the feeder and the
/// caller collecting the outputs.
const PRODUCER_CONSUMER_THREADS: usize = 2;

/// Clock readings a spinning wait skips between two (each costs about 25 ns).
///
/// `take` and `put` each write their first attempt and their spin out in full: one spin
/// loop shared through a closure (`Option<Option<T>>` answers) made `nop` cost 95–101 ns
/// per element under the stream driver instead of 78 (three calibrations against one).
const SPIN_CHECKS: u32 = 32;

/// Take the next element from `rx`: check it for up to `spin`, then sleep until an
/// element comes. `None` once `rx` is disconnected and empty. The clock is read only
/// once the queue was found empty: reading it on every call cost `nop` 50 ns per element
/// of the 130 it took (with `put`), against 78 without.
pub(crate) fn take<T>(rx: &Receiver<T>, spin: Duration) -> Option<T> {
    match rx.try_recv() {
        Ok(v) => return Some(v),
        Err(TryRecvError::Disconnected) => return None,
        Err(TryRecvError::Empty) => {}
    }
    if !spin.is_zero() {
        let start = Instant::now();
        let mut checks = 0u32;
        loop {
            match rx.try_recv() {
                Ok(v) => return Some(v),
                Err(TryRecvError::Disconnected) => return None,
                Err(TryRecvError::Empty) => {}
            }
            std::hint::spin_loop();
            checks += 1;
            if checks % SPIN_CHECKS == 0 && start.elapsed() >= spin {
                break;
            }
        }
    }
    rx.recv().ok()
}

/// Put `v` into `tx`: while it is full, try again for up to `spin`, then sleep until
/// there is room. The element comes back if `tx` is disconnected.
pub(crate) fn put<T>(tx: &Sender<T>, v: T, spin: Duration) -> Result<(), SendError<T>> {
    let mut v = match tx.try_send(v) {
        Ok(()) => return Ok(()),
        Err(TrySendError::Disconnected(back)) => return Err(SendError(back)),
        Err(TrySendError::Full(back)) => back,
    };
    if !spin.is_zero() {
        let start = Instant::now();
        let mut checks = 0u32;
        loop {
            match tx.try_send(v) {
                Ok(()) => return Ok(()),
                Err(TrySendError::Disconnected(back)) => return Err(SendError(back)),
                Err(TrySendError::Full(back)) => v = back,
            }
            std::hint::spin_loop();
            checks += 1;
            if checks % SPIN_CHECKS == 0 && start.elapsed() >= spin {
                break;
            }
        }
    }
    tx.send(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workers_are_pinned_and_spin_only_when_each_can_have_a_core() {
        let pin = Config {
            pin: true,
            ..Config::default()
        };
        let cores = core_affinity::get_core_ids().map_or(0, |c| c.len());
        if cores > 0 {
            assert_eq!(Ctx::new(&pin, cores).pinning().map(<[_]>::len), Some(cores));
        }
        assert!(Ctx::new(&pin, cores + 1).pinning().is_none());
        let free = Config {
            pin: false,
            ..Config::default()
        };
        assert!(Ctx::new(&free, 1).pinning().is_none());
        if cores > 0 {
            // The stream driver's caller sleeps: a design that fits the cores spins.
            assert_eq!(Ctx::gated(&pin, cores).spin, DEFAULT_SPIN);
            // The producer/consumer driver's feeder and collector need two more cores.
            assert_eq!(Ctx::new(&pin, cores).spin, Duration::ZERO);
        }
        if cores > 2 {
            assert_eq!(Ctx::new(&pin, cores - 2).spin, DEFAULT_SPIN);
        }
        assert_eq!(Ctx::gated(&pin, cores + 1).spin, Duration::ZERO);
        assert_eq!(Ctx::gated(&free, 1).spin, Duration::ZERO);
    }

    #[test]
    fn cores_go_round_robin_and_a_core_given_back_is_taken_first() {
        let pin = Config {
            pin: true,
            ..Config::default()
        };
        let Some(all) = core_affinity::get_core_ids().filter(|c| !c.is_empty()) else {
            return;
        };
        let n = all.len();
        let ctx = Ctx::new(&pin, n);
        // While no thread gives its core back: plain round robin, twice over.
        let taken: Vec<_> = (0..2 * n).map(|_| ctx.take_core().unwrap()).collect();
        let round_robin: Vec<_> = (0..2 * n).map(|i| all[i % n]).collect();
        assert_eq!(taken, round_robin);
        // Two threads end on the last core: the next two threads go there, since every
        // other core still has two.
        ctx.release_core(Some(all[n - 1]));
        ctx.release_core(Some(all[n - 1]));
        assert_eq!(ctx.take_core(), Some(all[n - 1]));
        assert_eq!(ctx.take_core(), Some(all[n - 1]));
        // A run that does not pin has no cores to take or give back.
        let plain = Ctx::new(
            &Config {
                pin: false,
                ..Config::default()
            },
            1,
        );
        assert_eq!(plain.take_core(), None);
        plain.release_core(Some(all[0]));
    }

    #[test]
    fn a_hold_keeps_the_last_queue_past_the_drivers_start_until_it_is_dropped() {
        let (last_tx, last_rx) = crossbeam_channel::bounded::<u32>(4);
        let ctx = Ctx::gated(&Config::default(), 1).ending(1, last_tx.clone());
        let hold = ctx.hold_last_queue();
        ctx.started();
        // A worker started now (a later phase) still learns that it puts there.
        assert!(ctx.end_of(&last_tx).is_some());
        let nested = ctx.hold_last_queue();
        drop(hold);
        assert!(ctx.end_of(&last_tx).is_some());
        drop(nested);
        assert!(ctx.end_of(&last_tx).is_none());
        // Let go: the queue ends with its last own sender.
        drop(last_tx);
        assert!(last_rx.recv().is_err());
        // A hold taken once the queue is let go, or in a run without an end, holds
        // nothing.
        drop(ctx.hold_last_queue());
        let plain = Ctx::new(
            &Config {
                pin: false,
                ..Config::default()
            },
            1,
        );
        drop(plain.hold_last_queue());
        plain.started();
    }

    #[test]
    fn take_and_put_deliver_in_order_and_end_with_the_queue() {
        for spin in [Duration::ZERO, Duration::from_micros(50)] {
            let (tx, rx) = crossbeam_channel::bounded::<u32>(2);
            std::thread::scope(|s| {
                // More elements than the queue holds: `put` waits for room, spinning first
                // and then sleeping, while the other side takes slowly.
                s.spawn(|| {
                    for v in 0..20 {
                        put(&tx, v, spin).unwrap();
                    }
                });
                let mut got = Vec::new();
                while got.len() < 20 {
                    if got.len() % 5 == 0 {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    got.push(take(&rx, spin).unwrap());
                }
                assert_eq!(got, (0..20).collect::<Vec<_>>());
            });
            // An empty queue whose sender is gone ends the stream, spinning or not.
            drop(tx);
            assert_eq!(take(&rx, spin), None);
            // A queue whose receiver is gone gives the element back.
            let (tx, rx) = crossbeam_channel::bounded::<u32>(1);
            drop(rx);
            assert_eq!(put(&tx, 7, spin).unwrap_err().0, 7);
        }
    }

    #[test]
    fn a_spinning_take_sleeps_after_its_spin_and_still_gets_late_elements() {
        let (tx, rx) = crossbeam_channel::bounded::<u32>(1);
        std::thread::scope(|s| {
            s.spawn(|| {
                // Well after the spin: the taker is asleep in `recv` by then.
                std::thread::sleep(Duration::from_millis(20));
                tx.send(3).unwrap();
            });
            assert_eq!(take(&rx, Duration::from_micros(100)), Some(3));
        });
    }

    #[test]
    fn the_stream_end_wakes_its_waiter_once_the_last_output_is_counted() {
        let end = StreamEnd::new(50);
        let never = || 0;
        let done = std::thread::scope(|s| {
            s.spawn(|| {
                for _ in 0..10 {
                    std::thread::sleep(Duration::from_micros(50));
                    end.add(5);
                }
            });
            end.wait(&never, &|| false)
        });
        assert!(done);
        assert_eq!(end.put.load(Ordering::SeqCst), 50);
        // An empty stream has ended before it starts.
        assert!(StreamEnd::new(0).wait(&never, &|| false));
    }

    #[test]
    fn a_failure_wakes_the_stream_end_and_the_wait_says_so() {
        let ctx =
            Ctx::gated(&Config::default(), 1).ending(10, crossbeam_channel::bounded::<u8>(1).0);
        std::thread::scope(|s| {
            s.spawn(|| {
                std::thread::sleep(Duration::from_millis(5));
                ctx.fault(Fault {
                    seq: 3,
                    stage: "f".into(),
                    message: "boom".into(),
                });
            });
            assert!(!ctx.await_end(&|| 0));
        });
    }

    #[test]
    fn outputs_put_without_being_counted_still_end_the_wait() {
        // The safety net: what the last queue holds ends the wait, at the next look.
        let end = StreamEnd::new(3);
        assert!(end.wait(&|| 3, &|| false));
    }

    #[test]
    fn only_the_workers_of_the_last_queue_count_and_the_queue_ends_with_them() {
        let (last_tx, last_rx) = crossbeam_channel::bounded::<u32>(4);
        let (other_tx, _other_rx) = crossbeam_channel::bounded::<u32>(4);
        let ctx = Ctx::gated(&Config::default(), 2).ending(2, last_tx.clone());
        assert!(ctx.end_of(&last_tx).is_some());
        assert!(ctx.end_of(&last_tx.clone()).is_some());
        assert!(ctx.end_of(&other_tx).is_none());
        // A queue of another type is not the last one either.
        assert!(ctx
            .end_of(&crossbeam_channel::bounded::<u64>(1).0)
            .is_none());
        // Once the workers have started, the run lets go of the queue: it ends with
        // the last of its own senders.
        ctx.started();
        assert!(ctx.end_of(&last_tx).is_none());
        last_tx.send(1).unwrap();
        drop(last_tx);
        assert_eq!(last_rx.iter().collect::<Vec<_>>(), vec![1]);
        // A run without an end has nothing to wait for.
        assert!(Ctx::new(&Config::default(), 1).await_end(&|| 0));
    }

    #[test]
    fn gated_threads_wait_until_the_gate_opens() {
        let ctx = Ctx::gated(&Config::default(), 2);
        let passed = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..2 {
                ctx.expect_thread();
                s.spawn(|| {
                    ctx.start_thread();
                    passed.fetch_add(1, Ordering::SeqCst);
                });
            }
            while ctx.arrived() < 2 {
                std::thread::yield_now();
            }
            // Both wait at the gate.
            assert_eq!(passed.load(Ordering::SeqCst), 0);
            ctx.open_gate();
        });
        assert_eq!(passed.load(Ordering::SeqCst), 2);
        // Without a gate, nothing waits.
        let plain = Ctx::new(
            &Config {
                pin: false,
                ..Config::default()
            },
            1,
        );
        plain.expect_thread();
        plain.start_thread();
        plain.open_gate();
    }
}
