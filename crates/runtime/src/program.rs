//! A checked, runnable pattern and the driver that feeds it a stream of elements.
//!
//! A feeder thread takes elements from the input iterator and puts them into the first
//! queue; the calling thread drains the last queue and puts the outputs back in input
//! order. This is the same shape as a hand-written producer/consumer program (the
//! baseline of `perfcompose bench --overhead`): an earlier version let the calling thread
//! feed and drain at once through `Select`, which woke it for every element and cost up to
//! 9x the baseline through `tpool(4, nop)`. Worker threads are scoped to the run: they
//! start before the clock of [`Program::run_measured`] starts and are joined before it
//! returns.

use std::time::{Duration, Instant};

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Barrier;

use crossbeam_channel::bounded;

use crate::ctx::{Config, Ctx};
use crate::error::{BuildError, RunError};
use crate::pattern::{start, Envelope, Pattern};
use crate::unwind::WORKER_THREAD_NAME;

/// The shortest and the longest pause of [`Program::run_stream`]'s collector between two
/// looks at its last queue (see [`await_outputs`]).
const MIN_POLL: Duration = Duration::from_micros(20);
const MAX_POLL: Duration = Duration::from_millis(5);

/// A pattern that passed its checks, with its run configuration.
#[derive(Clone, Debug)]
pub struct Program<I, O> {
    pattern: Pattern<I, O>,
    config: Config,
}

/// Outputs of a run with its wall-clock time.
#[derive(Debug)]
pub struct Measured<O> {
    /// Outputs in input order.
    pub outputs: Vec<O>,
    /// From the first element fed to the last element received (thread start-up excluded).
    pub elapsed: Duration,
}

impl<I: Send + 'static, O: Send + 'static> Program<I, O> {
    /// Check the pattern (thread counts, nesting) and build a program with the default
    /// configuration.
    pub fn new(pattern: Pattern<I, O>) -> Result<Program<I, O>, BuildError> {
        Program::with_config(pattern, Config::default())
    }

    pub fn with_config(
        pattern: Pattern<I, O>,
        config: Config,
    ) -> Result<Program<I, O>, BuildError> {
        pattern.check()?;
        Ok(Program { pattern, config })
    }

    pub fn pattern(&self) -> &Pattern<I, O> {
        &self.pattern
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Run every element of `inputs` through the program; outputs in input order.
    pub fn run<It>(&self, inputs: It) -> Result<Vec<O>, RunError<O>>
    where
        It: IntoIterator<Item = I>,
        It::IntoIter: Send,
    {
        self.run_measured(inputs).map(|m| m.outputs)
    }

    /// Time a stream already held in memory: the measurement driver of `perfcompose
    /// bench`, `validate` and the overhead calibration.
    ///
    /// What is timed is the design's own work and hand-offs, not the driver's. The
    /// elements are in memory already, so the outer queues hold the whole stream at no
    /// extra memory (the elements only move), and:
    /// - the worker threads start and wait at a gate, the calling thread puts every
    ///   element in the first queue, and the clock starts when the gate opens (starting
    ///   and pinning a thread took about 200 µs on the Intel guest: 50 ns per element
    ///   over a stream of 4,096 `inc`s of 1,024 ints, 4%);
    /// - while the stream flows, the calling thread only checks now and then how many
    ///   outputs the last queue holds ([`await_outputs`]), and takes them out after the
    ///   clock stops. Feeding and taking the outputs as they came ran inside the clock,
    ///   and on a machine with as many cores as the design has threads that CPU time is
    ///   taken from the design (`examples/pool_gaps.rs`; docs/runtime.md, "The stream
    ///   driver's own costs, and the pool's calls").
    ///
    /// A failed element stops nothing here: the whole stream is in the first queue
    /// already, so the workers go on with the rest, and every element is either delivered
    /// or reported as failed ([`RunError`]).
    ///
    /// [`Program::run_measured`] instead feeds from a thread through a bounded queue and
    /// drains with a blocking receive, as a producer/consumer program would.
    pub fn run_stream(&self, inputs: Vec<I>) -> Result<Measured<O>, RunError<O>> {
        let node = &*self.pattern.node;
        let ctx = Ctx::gated(&self.config, node.threads());
        let n = inputs.len();
        let mut delivered: Vec<Option<O>> = Vec::with_capacity(n);
        delivered.resize_with(n, || None);
        let mut fed = 0u64;
        let mut elapsed = Duration::ZERO;

        std::thread::scope(|scope| {
            let (in_tx, in_rx) = bounded::<Envelope<I>>(n.max(1));
            let (out_tx, out_rx) = bounded::<Envelope<O>>(n.max(1));
            start(node, scope, in_rx, out_tx, &ctx);
            for (seq, item) in inputs.into_iter().enumerate() {
                // Cannot block (the queue holds the whole stream); fails only if every
                // worker is gone, which a gated worker cannot be before the gate opens.
                if in_tx
                    .send(Envelope {
                        seq: seq as u64,
                        item,
                    })
                    .is_err()
                {
                    break;
                }
                fed += 1;
            }
            // Dropping `in_tx` ends the stream: every stage drains and exits.
            drop(in_tx);
            let _slack = TimerSlack::fine();
            let t0 = ctx.open_gate();
            if await_outputs(|| out_rx.len(), fed as usize, &|| ctx.stopped()) {
                elapsed = t0.elapsed();
            }
            // Every output is in (or the run failed): collect, off the clock.
            for env in out_rx.iter() {
                let i = env.seq as usize;
                debug_assert!(delivered[i].is_none(), "element {i} delivered twice");
                delivered[i] = Some(env.item);
            }
            if elapsed.is_zero() {
                elapsed = t0.elapsed();
            }
        });
        self.finish(ctx, delivered, fed, elapsed)
    }

    fn finish(
        &self,
        ctx: Ctx,
        delivered: Vec<Option<O>>,
        fed: u64,
        elapsed: Duration,
    ) -> Result<Measured<O>, RunError<O>> {
        let faults = ctx.take_faults();
        if faults.is_empty() {
            let outputs: Vec<O> = delivered.into_iter().flatten().collect();
            debug_assert_eq!(outputs.len() as u64, fed);
            Ok(Measured { outputs, elapsed })
        } else {
            let delivered = delivered
                .into_iter()
                .enumerate()
                .filter_map(|(i, o)| o.map(|o| (i as u64, o)))
                .collect();
            Err(RunError {
                faults,
                delivered,
                fed,
            })
        }
    }

    /// Like [`Program::run`], and time the stream.
    pub fn run_measured<It>(&self, inputs: It) -> Result<Measured<O>, RunError<O>>
    where
        It: IntoIterator<Item = I>,
        It::IntoIter: Send,
    {
        let node = &*self.pattern.node;
        let ctx = Ctx::new(&self.config, node.threads());
        let inputs = inputs.into_iter();
        let mut delivered: Vec<Option<O>> = Vec::new();
        let fed = AtomicU64::new(0);
        // The feeder waits at the gate so that thread start-up stays outside the clock.
        let gate = Barrier::new(2);
        let mut elapsed = Duration::ZERO;

        std::thread::scope(|scope| {
            let (in_tx, in_rx) = bounded::<Envelope<I>>(ctx.capacity);
            let (out_tx, out_rx) = bounded::<Envelope<O>>(ctx.capacity);
            start(node, scope, in_rx, out_tx, &ctx);
            let (gate_ref, ctx_ref, fed_ref) = (&gate, &ctx, &fed);
            std::thread::Builder::new()
                .name(WORKER_THREAD_NAME.into())
                .spawn_scoped(scope, move || {
                    gate_ref.wait();
                    let mut seq = 0u64;
                    for item in inputs {
                        // A fault stops the feeding; the element just read is dropped
                        // without reaching a block (the one-element look-ahead).
                        if ctx_ref.stopped() {
                            break;
                        }
                        if in_tx.send(Envelope { seq, item }).is_err() {
                            break;
                        }
                        seq += 1;
                        fed_ref.store(seq, Ordering::Release);
                        if ctx_ref.stopped() {
                            break;
                        }
                    }
                    // Dropping `in_tx` here ends the stream: every stage drains and exits.
                })
                .expect("the OS refused to start the feeder thread");
            let t0 = Instant::now();
            gate.wait();
            for env in out_rx.iter() {
                let i = env.seq as usize;
                if delivered.len() <= i {
                    delivered.resize_with(i + 1, || None);
                }
                debug_assert!(delivered[i].is_none(), "element {i} delivered twice");
                delivered[i] = Some(env.item);
            }
            elapsed = t0.elapsed();
        });
        let fed = fed.into_inner();
        self.finish(ctx, delivered, fed, elapsed)
    }
}

/// Wait until the last queue of [`Program::run_stream`] holds all `n` outputs (`len()`
/// says how many it holds), checking now and then without taking any. Returns `true`
/// then, `false` as soon as `stop()` says the run failed (some outputs will never come).
///
/// Every check wakes the calling thread, and on a machine with as many cores as the
/// design has threads that takes a core from the design for a moment: a collector
/// checking every 100 µs put `pipe(inc, inc)` on 2 cores at 1,100–1,700 ns per element at
/// x = 1,024, against 630 ns when nothing preempted its stages
/// (`examples/collector_wakeups.rs`). So the pause ([`pause`]) grows with the stream: a
/// quarter of the time the outstanding outputs need at the rate seen since the first
/// arrival, between [`MIN_POLL`] and [`MAX_POLL`] — a few dozen checks per stream. A
/// quarter, so that the stream would have to speed up fourfold for a check to come later
/// than a quarter of the remaining time after its end; near the end the checks come every
/// [`MIN_POLL`], so the clock stops at most that much (and a wake-up) late.
pub(crate) fn await_outputs(len: impl Fn() -> usize, n: usize, stop: &dyn Fn() -> bool) -> bool {
    let start = Instant::now();
    // When outputs were first seen, and how many there were.
    let mut first: Option<(Instant, usize)> = None;
    loop {
        let have = len();
        if have >= n {
            return true;
        }
        if stop() {
            return false;
        }
        let now = Instant::now();
        if first.is_none() && have > 0 {
            first = Some((now, have));
        }
        std::thread::sleep(pause(start, first, have, n, now));
    }
}

/// The next pause of [`await_outputs`]: `have` of the `n` outputs are in at `now`, the
/// first ones (`first`) since a time and count, the wait started at `start`. Before any
/// output, a quarter of the time waited so far (the first output can take long: a
/// pipeline fills, a `qsort` of 262,144 ints takes 20 ms).
fn pause(
    start: Instant,
    first: Option<(Instant, usize)>,
    have: usize,
    n: usize,
    now: Instant,
) -> Duration {
    let quarter = match first {
        Some((t, g)) if have > g && now > t => {
            let per_item = (now - t).as_secs_f64() / (have - g) as f64;
            Duration::from_secs_f64(per_item * n.saturating_sub(have) as f64 / 4.0)
        }
        Some(_) => MIN_POLL,
        None => now.saturating_duration_since(start) / 4,
    };
    quarter.clamp(MIN_POLL, MAX_POLL)
}

/// While it lives, the calling thread's sleeps end within a microsecond of their time
/// instead of Linux's default 50 µs of timer slack (`prctl(PR_SET_TIMERSLACK)`), so that
/// [`await_outputs`] can check often near the end of a stream and still stop the clock
/// on time. Elsewhere than on Linux, nothing.
pub(crate) struct TimerSlack {
    #[cfg(target_os = "linux")]
    previous: Option<libc::c_ulong>,
}

impl TimerSlack {
    pub(crate) fn fine() -> TimerSlack {
        #[cfg(target_os = "linux")]
        {
            // SAFETY: PR_GET/SET_TIMERSLACK take plain integers and only touch the
            // calling thread's timer slack.
            let previous = unsafe { libc::prctl(libc::PR_GET_TIMERSLACK, 0, 0, 0, 0) };
            let set =
                unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1_000 as libc::c_ulong, 0, 0, 0) };
            TimerSlack {
                previous: (previous > 0 && set == 0).then_some(previous as libc::c_ulong),
            }
        }
        #[cfg(not(target_os = "linux"))]
        TimerSlack {}
    }
}

impl Drop for TimerSlack {
    fn drop(&mut self) {
        #[cfg(target_os = "linux")]
        if let Some(p) = self.previous {
            // SAFETY: as in `fine`.
            unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, p, 0, 0, 0) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_collector_pauses_a_quarter_of_the_time_the_outstanding_outputs_need() {
        let t = Instant::now();
        let ms = Duration::from_millis;
        // Nothing seen yet: a quarter of the time waited, at least the shortest pause.
        assert_eq!(pause(t, None, 0, 1000, t), MIN_POLL);
        assert_eq!(pause(t, None, 0, 1000, t + ms(4)), ms(1));
        assert_eq!(pause(t, None, 0, 1000, t + ms(100)), MAX_POLL);
        // Nothing more since the first arrival: the shortest pause.
        assert_eq!(pause(t, Some((t, 10)), 10, 1000, t + MAX_POLL), MIN_POLL);
        // 100 outputs in 1 ms, 400 to go: 4 ms at that rate, pause 1 ms.
        let p = pause(t, Some((t, 100)), 200, 600, t + ms(1));
        assert!((p.as_secs_f64() - 1e-3).abs() < 1e-9, "{p:?}");
        // Long streams are capped, the last outputs get the shortest pause.
        assert_eq!(pause(t, Some((t, 1)), 2, 1_000_000, t + ms(1)), MAX_POLL);
        assert_eq!(pause(t, Some((t, 1)), 999, 1000, t + ms(1)), MIN_POLL);
        assert_eq!(pause(t, Some((t, 1)), 1200, 1000, t + MAX_POLL), MIN_POLL);
    }

    #[test]
    fn the_collector_waits_for_every_output_or_a_failure() {
        use std::sync::atomic::AtomicUsize;
        // Outputs arrive on another thread; the wait ends once all are in.
        let have = AtomicUsize::new(0);
        let done = std::thread::scope(|s| {
            s.spawn(|| {
                for _ in 0..50 {
                    std::thread::sleep(Duration::from_micros(50));
                    have.fetch_add(1, Ordering::SeqCst);
                }
            });
            await_outputs(|| have.load(Ordering::SeqCst), 50, &|| false)
        });
        assert!(done);
        assert_eq!(have.load(Ordering::SeqCst), 50);
        // A failed run never delivers everything: the wait ends on `stop`.
        assert!(!await_outputs(|| 3, 50, &|| true));
    }

    #[test]
    fn a_gated_run_delivers_streams_of_any_length() {
        use std::sync::atomic::AtomicUsize;
        use std::sync::Arc;
        // Empty streams, and fewer elements than workers, pass the gate too.
        let seen = Arc::new(AtomicUsize::new(0));
        let s2 = Arc::clone(&seen);
        let p = Program::new(crate::tpool(
            2,
            crate::block("id", move |v: u64| {
                s2.fetch_add(1, Ordering::SeqCst);
                v
            }),
        ))
        .unwrap();
        for n in [0u64, 1, 7, 500] {
            let m = p.run_stream((0..n).collect()).unwrap();
            assert_eq!(m.outputs, (0..n).collect::<Vec<_>>());
        }
        assert_eq!(seen.load(Ordering::SeqCst), 508);
    }

    #[test]
    fn a_stream_longer_than_the_collector_pauses_arrives_whole_and_in_order() {
        let p = Program::new(crate::pipe(
            crate::block("slow", |v: u64| {
                let t = Instant::now();
                while t.elapsed() < Duration::from_micros(5) {
                    std::hint::spin_loop();
                }
                v
            }),
            crate::block("double", |v: u64| 2 * v),
        ))
        .unwrap();
        let n = 3000u64;
        let m = p.run_stream((0..n).collect()).unwrap();
        assert_eq!(m.outputs, (0..n).map(|v| 2 * v).collect::<Vec<_>>());
    }
}
