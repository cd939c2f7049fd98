//! A checked, runnable pattern and the driver that feeds it a stream of elements.
//!
//! The calling thread is the driver: it both feeds the first queue and drains the last
//! one, selecting whichever is ready (crossbeam's `Select`), so a run needs no extra
//! feeder or collector thread and can never deadlock on its own queues. Worker threads are
//! scoped to the run: they start before the clock of [`Program::run_measured`] starts and
//! are joined before it returns.

use std::time::{Duration, Instant};

use crossbeam_channel::{bounded, Select, TrySendError};

use crate::ctx::{Config, Ctx};
use crate::error::{BuildError, RunError};
use crate::pattern::{start, Envelope, Pattern};

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
    {
        self.run_measured(inputs).map(|m| m.outputs)
    }

    /// Like [`Program::run`], and time the stream.
    pub fn run_measured<It>(&self, inputs: It) -> Result<Measured<O>, RunError<O>>
    where
        It: IntoIterator<Item = I>,
    {
        let ctx = Ctx::new(&self.config);
        let mut inputs = inputs.into_iter();
        let node = &*self.pattern.node;
        let mut delivered: Vec<Option<O>> = Vec::new();
        let mut fed: u64 = 0;
        let mut elapsed = Duration::ZERO;

        std::thread::scope(|scope| {
            let (in_tx, in_rx) = bounded::<Envelope<I>>(ctx.capacity);
            let (out_tx, out_rx) = bounded::<Envelope<O>>(ctx.capacity);
            start(node, scope, in_rx, out_tx, &ctx);

            let t0 = Instant::now();
            let mut pending = inputs.next();
            let mut in_tx = Some(in_tx);
            let mut store = |env: Envelope<O>| {
                let i = env.seq as usize;
                if delivered.len() <= i {
                    delivered.resize_with(i + 1, || None);
                }
                debug_assert!(delivered[i].is_none(), "element {i} delivered twice");
                delivered[i] = Some(env.item);
            };
            // Feed and drain at once until the input is exhausted (or a fault stops it).
            // Fast path: non-blocking send and receive; only when neither can proceed does
            // the driver sleep in a select on both queues (never spins).
            while let Some(tx) = &in_tx {
                let Some(item) = pending.take() else {
                    in_tx = None;
                    break;
                };
                if ctx.stopped() {
                    // Not fed: the element is dropped here, never seen by a block, and the
                    // input is not read further.
                    drop(item);
                    in_tx = None;
                    break;
                }
                let env = match tx.try_send(Envelope { seq: fed, item }) {
                    Ok(()) => {
                        fed += 1;
                        // Look ahead only while the run goes on, so a stopped run reads
                        // (at most) one element it does not feed.
                        pending = if ctx.stopped() { None } else { inputs.next() };
                        continue;
                    }
                    Err(TrySendError::Full(env)) => env,
                    // Every worker of the first stage is gone (only after a fault).
                    Err(TrySendError::Disconnected(_)) => {
                        in_tx = None;
                        break;
                    }
                };
                let mut drained = false;
                while let Ok(out) = out_rx.try_recv() {
                    store(out);
                    drained = true;
                }
                if drained {
                    pending = Some(env.item);
                    continue;
                }
                let mut sel = Select::new();
                let send_op = sel.send(tx);
                let recv_op = sel.recv(&out_rx);
                let op = sel.select();
                if op.index() == send_op {
                    if op.send(tx, env).is_err() {
                        in_tx = None;
                        break;
                    }
                    fed += 1;
                    pending = if ctx.stopped() { None } else { inputs.next() };
                } else {
                    debug_assert_eq!(op.index(), recv_op);
                    pending = Some(env.item);
                    match op.recv(&out_rx) {
                        Ok(out) => store(out),
                        Err(_) => {
                            in_tx = None;
                            break;
                        }
                    }
                }
            }
            drop(in_tx);
            // Drain: the workers finish what is in flight, then drop their senders.
            for env in out_rx.iter() {
                store(env);
            }
            elapsed = t0.elapsed();
        });

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
}
