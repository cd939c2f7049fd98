//! A checked, runnable pattern and the driver that feeds it a stream of elements.
//!
//! A feeder thread takes elements from the input iterator and puts them into the first
//! queue; the calling thread drains the last queue and puts the outputs back in input
//! order. This is the same shape as a hand-written producer/consumer program (the
//! baseline of `perfcompose calibrate overhead`): an earlier version let the calling thread
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
    /// - while the stream flows, the calling thread sleeps until the workers of the last
    ///   queue, each adding what it put there as it ends, have counted every output
    ///   ([`crate::ctx::StreamEnd`]), and takes the outputs out after the clock stops.
    ///   Feeding and taking the outputs as they came ran inside the clock, and on a
    ///   machine with as many cores as the design has threads that CPU time is taken from
    ///   the design (docs/runtime.md, "The drivers"); so did checking the last queue now
    ///   and then (docs/runtime.md, "How the stream driver learns that a stream has
    ///   ended").
    ///
    /// A failed element stops nothing here: the whole stream is in the first queue
    /// already, so the workers go on with the rest, and every element is either delivered
    /// or reported as failed ([`RunError`]).
    ///
    /// [`Program::run_measured`] instead feeds from a thread through a bounded queue and
    /// drains with a blocking receive, as a producer/consumer program would.
    pub fn run_stream(&self, inputs: Vec<I>) -> Result<Measured<O>, RunError<O>> {
        let node = &*self.pattern.node;
        let n = inputs.len();
        let (in_tx, in_rx) = bounded::<Envelope<I>>(n.max(1));
        let (out_tx, out_rx) = bounded::<Envelope<O>>(n.max(1));
        let ctx = Ctx::gated(&self.config, node.threads()).ending(n, out_tx.clone());
        let mut delivered: Vec<Option<O>> = Vec::with_capacity(n);
        delivered.resize_with(n, || None);
        let mut fed = 0u64;
        let mut elapsed = Duration::ZERO;

        std::thread::scope(|scope| {
            start(node, scope, in_rx, out_tx, &ctx);
            ctx.started();
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
            let t0 = ctx.open_gate();
            if ctx.await_end(&|| out_rx.len()) {
                elapsed = t0.elapsed();
                // Every worker that puts into the last queue counted what it put.
                debug_assert!(ctx.end_counted() >= n, "a worker did not count its outputs");
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn a_long_stream_through_a_pipeline_arrives_whole_and_in_order() {
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
