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

/// The shortest and the longest pause of [`Program::run_stream`]'s collector when no
/// output is ready (see [`drain`]).
const POLL: Duration = Duration::from_micros(100);
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
    /// [`Program::run_measured`] feeds from a thread through a bounded queue and drains
    /// with a blocking receive, as a producer/consumer program would. When the design's
    /// first stage is slow, that driver's own threads park, and every element then costs
    /// the stage two wake-ups (the feeder's and the collector's): on this VM a futex wake
    /// of a parked thread on the other core costs about a microsecond, the same order as
    /// the blocks being measured. The elements here are in memory already, so the
    /// outer queues can hold the whole stream at no extra memory (the elements only move):
    /// the calling thread puts every element in the first queue without ever blocking,
    /// then collects from a last queue the design never blocks on, polling while most of
    /// the stream is still in flight and blocking only for the last elements (so the
    /// clock stops when the last element arrives, not at the end of a poll interval).
    /// What is measured is the design's own hand-offs, not the driver's.
    pub fn run_stream(&self, inputs: Vec<I>) -> Result<Measured<O>, RunError<O>> {
        let node = &*self.pattern.node;
        let ctx = Ctx::new(&self.config, node.threads());
        let n = inputs.len();
        let mut delivered: Vec<Option<O>> = Vec::with_capacity(n);
        delivered.resize_with(n, || None);
        let mut fed = 0u64;
        let mut elapsed = Duration::ZERO;
        // The last elements are awaited with a blocking receive: enough that every
        // worker can hold one in flight.
        let tail = 2 * node.threads().max(1) + 2;

        std::thread::scope(|scope| {
            let (in_tx, in_rx) = bounded::<Envelope<I>>(n.max(1));
            let (out_tx, out_rx) = bounded::<Envelope<O>>(n.max(1));
            start(node, scope, in_rx, out_tx, &ctx);
            let t0 = Instant::now();
            for (seq, item) in inputs.into_iter().enumerate() {
                if ctx.stopped()
                    || in_tx
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
            drain(&out_rx, n, tail, &|| ctx.stopped(), |env| {
                let i = env.seq as usize;
                debug_assert!(delivered[i].is_none(), "element {i} delivered twice");
                delivered[i] = Some(env.item);
            });
            elapsed = t0.elapsed();
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

/// The collector of a stream-sized last queue (see [`Program::run_stream`]): take `n`
/// items, polling while more than `tail` are outstanding and blocking for the last ones
/// (or once `stop()` says the run failed). Ends early when every sender is gone.
///
/// Every wake-up of the collector takes a core from the design for a moment, and on a
/// machine with as many cores as the design has threads that is not free: a collector
/// polling every 100 µs put `pipe(inc, inc)` on 2 cores at 1,100–1,700 ns per element at
/// x = 1,024 (threads waiting for a core 5–14% of the time), against 630 ns when nothing
/// preempted its stages (`examples/collector_wakeups.rs`). So the pause grows with the
/// stream: a quarter of the time the outstanding elements (less the tail) need at the rate
/// seen since the first arrival, between [`POLL`] and [`MAX_POLL`]: a few dozen wake-ups
/// per stream instead of one every 100 µs. A quarter, so that the stream would have to
/// speed up fourfold for the collector to sleep past its end (which would stop the clock
/// late); the tail is awaited with a blocking receive, so the clock stops when the last
/// element arrives.
pub(crate) fn drain<T>(
    rx: &crossbeam_channel::Receiver<T>,
    n: usize,
    tail: usize,
    stop: &dyn Fn() -> bool,
    mut take: impl FnMut(T),
) {
    let mut got = 0usize;
    // When items were first seen, and how many had been taken by then.
    let mut first: Option<(Instant, usize)> = None;
    loop {
        let item = if got + tail >= n || stop() {
            match rx.recv() {
                Ok(item) => item,
                Err(_) => return,
            }
        } else {
            match rx.try_recv() {
                Ok(item) => item,
                Err(crossbeam_channel::TryRecvError::Empty) => {
                    std::thread::sleep(pause(first, got, n - tail, Instant::now()));
                    continue;
                }
                Err(crossbeam_channel::TryRecvError::Disconnected) => return,
            }
        };
        take(item);
        got += 1;
        first.get_or_insert((Instant::now(), got));
    }
}

/// The collector's next pause (see [`drain`]): `got` of the `until` items before the tail
/// are in, the first ones at `first`.
fn pause(first: Option<(Instant, usize)>, got: usize, until: usize, now: Instant) -> Duration {
    let Some((t, g)) = first else {
        return POLL;
    };
    if got <= g || now <= t {
        return POLL;
    }
    let per_item = (now - t).as_secs_f64() / (got - g) as f64;
    let left = until.saturating_sub(got) as f64;
    Duration::from_secs_f64(per_item * left / 4.0).clamp(POLL, MAX_POLL)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_collector_pauses_a_quarter_of_the_time_the_outstanding_items_need() {
        let t = Instant::now();
        // Nothing seen yet, or nothing since the first arrival: the shortest pause.
        assert_eq!(pause(None, 0, 1000, t), POLL);
        assert_eq!(pause(Some((t, 10)), 10, 1000, t + MAX_POLL), POLL);
        // 100 items in 1 ms, 400 to go before the tail: 4 ms at that rate, pause 1 ms.
        let p = pause(Some((t, 100)), 200, 600, t + Duration::from_millis(1));
        assert!((p.as_secs_f64() - 1e-3).abs() < 1e-9, "{p:?}");
        // Long streams are capped, the last items before the tail get the shortest pause.
        assert_eq!(
            pause(Some((t, 1)), 2, 1_000_000, t + Duration::from_millis(1)),
            MAX_POLL
        );
        assert_eq!(
            pause(Some((t, 1)), 999, 1000, t + Duration::from_millis(1)),
            POLL
        );
        assert_eq!(pause(Some((t, 1)), 1200, 1000, t + MAX_POLL), POLL);
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
