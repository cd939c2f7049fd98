//! Patterns as composable values: the typed API (closures as blocks) on which the
//! term-driven path is built.
//!
//! A [`Pattern<I, O>`] turns a stream of `I` into a stream of `O`. Patterns nest exactly as
//! terms nest:
//!
//! | constructor | term | how it runs |
//! |---|---|---|
//! | [`block`] | `NAME` | the closure, called once per element |
//! | [`seq`] | `seq(a, b)` | `a` then `b` on the same thread, per element; in phases if `a` or `b` is a stream network (below) |
//! | [`pipe`] | `pipe(a, b)` | `a` and `b` on their own threads, joined by a bounded queue |
//! | [`tpool`] | `tpool(n, t)` | `n` replicas of `t` sharing one input and one output queue |
//! | [`crate::mapreduce`] | `mapreduce(map, reduce, threads=n)` | one element = one job of many inputs; map, shuffle by key and reduce on `n` threads |
//!
//! A pattern is *callable* when one element can be processed on the calling thread
//! (blocks, `seq` of callables, MapReduce, whose parallelism is inside one element).
//! `pipe` and `tpool` get their parallelism from overlapping *different* elements, so
//! they are stream networks and are never called element by element.
//!
//! A `seq` of callable parts runs its parts one after the other on one thread, element
//! by element. A `seq` with a stream network among its parts (a `pipe`, a `tpool`, or a
//! `seq` that runs in phases itself) runs its parts as *phases*: the whole stream this
//! node receives (all of it at the top, a replica's share inside a `tpool`) goes through
//! `a`, its outputs are collected, and then they go through `b` — what the composed model
//! `M[seq(a, b)] = M[a] + M[b]` (time per element) describes. A boundary thread, which
//! sleeps while the phases run, starts the threads of `a`, waits until they have all
//! ended, and then starts the threads of `b` on `a`'s outputs; at most
//! `max(threads(a), threads(b))` threads are busy at once, and the threads of `b` take
//! the cores the threads of `a` gave back when the run pins its threads. Memory: a phase
//! boundary holds every element of the (sub)stream at once, in an unbounded queue
//! between the phases, and `b` produces nothing before `a` has seen the end of its
//! input (so a phased `seq` needs a finite input). The term-driven path
//! ([`crate::Plan`]) runs consecutive callable parts of an n-ary `seq` as one phase
//! (`seq(pipe(a, b), c, d)`: the pipeline, then `seq(c, d)` element by element); the
//! typed [`seq`] is binary and nests as written.
//!
//! Element order: a task pool completes elements in whatever order its workers finish,
//! so order is not kept *between* stages; [`crate::Program::run`] restores the input order
//! at the end (every element carries its input position).

use std::sync::Arc;
use std::thread::Scope;

use crossbeam_channel::{bounded, unbounded, Receiver, Sender};

use crate::ctx::{put, take, Ctx};
use crate::error::{BuildError, Fault};
use crate::unwind::{catch, WORKER_THREAD_NAME};

/// An element in flight, with its position in the input stream.
pub(crate) struct Envelope<T> {
    pub(crate) seq: u64,
    pub(crate) item: T,
}

/// A block that failed on one element (its panic message).
#[derive(Debug, Clone)]
pub(crate) struct StageFailure {
    pub(crate) stage: String,
    pub(crate) message: String,
}

/// The runtime's view of one node of a pattern tree.
pub(crate) trait Node<I, O>: Send + Sync {
    /// The node as a term, e.g. `pipe(tpool(2, qsort), inc)`.
    fn describe(&self) -> String;
    /// Whether one element can be processed on the calling thread (see module docs).
    fn callable(&self) -> bool;
    /// Process one element on the calling thread. Only called when `callable()`.
    fn call(&self, input: I, ctx: &Ctx) -> Result<O, StageFailure>;
    /// Threads busy at the same time when the node runs (for the cores cap).
    fn threads(&self) -> usize;
    /// Elements of a stream the node works on at the same time: one for a callable node
    /// (a block, `seq`, a MapReduce job, however many threads it uses inside), the sum of
    /// its stages for a pipeline, `n` times its replica for a task pool, the larger of
    /// its phases' for a phased `seq`.
    fn in_flight(&self) -> usize {
        if self.callable() {
            1
        } else {
            self.threads()
        }
    }
    /// Reject what cannot run (zero threads), recursively.
    fn check(&self) -> Result<(), BuildError>;
    /// Start the threads of a non-callable node (a stream network). The threads end when
    /// `input` is disconnected and drained; they drop their `output` senders on exit so
    /// the end of the stream propagates downstream.
    fn spawn_network<'scope>(
        &'scope self,
        scope: &'scope Scope<'scope, '_>,
        input: Receiver<Envelope<I>>,
        output: Sender<Envelope<O>>,
        ctx: &'scope Ctx,
    );
}

/// A pattern from `I` to `O`. Cheap to clone (shared, immutable).
pub struct Pattern<I, O> {
    pub(crate) node: Arc<dyn Node<I, O>>,
}

impl<I, O> Clone for Pattern<I, O> {
    fn clone(&self) -> Self {
        Pattern {
            node: Arc::clone(&self.node),
        }
    }
}

impl<I, O> std::fmt::Debug for Pattern<I, O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Pattern({})", self.node.describe())
    }
}

impl<I: Send + 'static, O: Send + 'static> Pattern<I, O> {
    /// The pattern as a term.
    pub fn describe(&self) -> String {
        self.node.describe()
    }

    /// Threads busy at the same time while it runs.
    pub fn threads(&self) -> usize {
        self.node.threads()
    }

    /// Whether one element can be processed on one thread (a block, a `seq` of callable
    /// parts, MapReduce); `pipe`, `tpool` and a `seq` with one of them inside are stream
    /// networks (see the module docs).
    pub fn callable(&self) -> bool {
        self.node.callable()
    }

    /// Elements of a stream it works on at the same time: 1 for `seq(qsort, inc)` or a
    /// MapReduce job, 2 for `pipe(qsort, inc)` and `tpool(2, qsort)`, 4 for
    /// `tpool(2, pipe(qsort, inc))`, 2 for `seq(pipe(qsort, inc), nop)` (its phases one
    /// after the other).
    pub fn in_flight(&self) -> usize {
        self.node.in_flight()
    }

    /// Check that the pattern can run (no zero thread counts).
    pub fn check(&self) -> Result<(), BuildError> {
        self.node.check()
    }
}

/// Start any node as one stage between `input` and `output`: a callable node gets one
/// worker thread; a network starts its own threads.
pub(crate) fn start<'scope, I: Send + 'static, O: Send + 'static>(
    node: &'scope dyn Node<I, O>,
    scope: &'scope Scope<'scope, '_>,
    input: Receiver<Envelope<I>>,
    output: Sender<Envelope<O>>,
    ctx: &'scope Ctx,
) {
    if node.callable() {
        spawn_worker(node, scope, input, output, ctx);
    } else {
        node.spawn_network(scope, input, output, ctx);
    }
}

/// One worker thread: take an element, call the node, pass the result on. Ends when the
/// input is disconnected and empty.
fn spawn_worker<'scope, I: Send + 'static, O: Send + 'static>(
    node: &'scope dyn Node<I, O>,
    scope: &'scope Scope<'scope, '_>,
    input: Receiver<Envelope<I>>,
    output: Sender<Envelope<O>>,
    ctx: &'scope Ctx,
) {
    ctx.expect_thread();
    // Whether this worker puts into the run's last queue: it then counts what it put
    // there, and adds the count to the stream's end when it ends (one shared write per
    // worker and stream, not one per element).
    let end = ctx.end_of(&output);
    std::thread::Builder::new()
        .name(WORKER_THREAD_NAME.into())
        .spawn_scoped(scope, move || {
            let core = ctx.start_thread();
            let mut delivered = 0usize;
            while let Some(env) = take(&input, ctx.spin) {
                match node.call(env.item, ctx) {
                    Ok(item) => {
                        // The receiving side only disappears if the run is being torn
                        // down; nothing is left to deliver to.
                        if put(&output, Envelope { seq: env.seq, item }, ctx.spin).is_err() {
                            break;
                        }
                        delivered += 1;
                    }
                    Err(f) => ctx.fault(Fault {
                        seq: env.seq,
                        stage: f.stage,
                        message: f.message,
                    }),
                }
            }
            if let Some(end) = end {
                end.add(delivered);
            }
            ctx.release_core(core);
        })
        .expect("the OS refused to start a worker thread");
}

// ---------------------------------------------------------------------------------------
// block

struct Block<I, O> {
    name: String,
    f: Arc<dyn Fn(I) -> O + Send + Sync>,
}

impl<I: Send + 'static, O: Send + 'static> Node<I, O> for Block<I, O> {
    fn describe(&self) -> String {
        self.name.clone()
    }
    fn callable(&self) -> bool {
        true
    }
    fn call(&self, input: I, _ctx: &Ctx) -> Result<O, StageFailure> {
        catch(|| (self.f)(input)).map_err(|message| StageFailure {
            stage: self.name.clone(),
            message,
        })
    }
    fn threads(&self) -> usize {
        1
    }
    fn check(&self) -> Result<(), BuildError> {
        Ok(())
    }
    fn spawn_network<'scope>(
        &'scope self,
        scope: &'scope Scope<'scope, '_>,
        input: Receiver<Envelope<I>>,
        output: Sender<Envelope<O>>,
        ctx: &'scope Ctx,
    ) {
        spawn_worker(self, scope, input, output, ctx);
    }
}

/// A sequential block: `f` is called once per element. A panic in `f` fails that element
/// (see [`crate::RunError`]).
///
/// ```
/// use perfcompose_runtime::{block, pipe, tpool, Program};
/// let double = block("double", |v: u64| v * 2);
/// let inc = block("inc", |v: u64| v + 1);
/// let program = Program::new(pipe(tpool(2, double), inc)).unwrap();
/// assert_eq!(program.run(0..4u64).unwrap(), vec![1, 3, 5, 7]);
/// ```
pub fn block<I, O, F>(name: impl Into<String>, f: F) -> Pattern<I, O>
where
    I: Send + 'static,
    O: Send + 'static,
    F: Fn(I) -> O + Send + Sync + 'static,
{
    Pattern {
        node: Arc::new(Block {
            name: name.into(),
            f: Arc::new(f),
        }),
    }
}

/// A block from a shared function, without another closure around it (the term-driven
/// path builds its blocks from the registry's `Arc`s: one indirect call per element, not
/// two).
pub(crate) fn shared_block<I, O>(
    name: impl Into<String>,
    f: Arc<dyn Fn(I) -> O + Send + Sync>,
) -> Pattern<I, O>
where
    I: Send + 'static,
    O: Send + 'static,
{
    Pattern {
        node: Arc::new(Block {
            name: name.into(),
            f,
        }),
    }
}

// ---------------------------------------------------------------------------------------
// seq

struct Seq<I, M, O> {
    a: Pattern<I, M>,
    b: Pattern<M, O>,
}

impl<I: Send + 'static, M: Send + 'static, O: Send + 'static> Node<I, O> for Seq<I, M, O> {
    fn describe(&self) -> String {
        format!("seq({}, {})", self.a.describe(), self.b.describe())
    }
    fn callable(&self) -> bool {
        self.a.node.callable() && self.b.node.callable()
    }
    fn call(&self, input: I, ctx: &Ctx) -> Result<O, StageFailure> {
        let mid = self.a.node.call(input, ctx)?;
        self.b.node.call(mid, ctx)
    }
    fn threads(&self) -> usize {
        // Callable: both parts on one thread. Phased: one phase at a time.
        self.a.node.threads().max(self.b.node.threads())
    }
    fn in_flight(&self) -> usize {
        if self.callable() {
            1
        } else {
            self.a.node.in_flight().max(self.b.node.in_flight())
        }
    }
    fn check(&self) -> Result<(), BuildError> {
        self.a.node.check()?;
        self.b.node.check()
    }
    fn spawn_network<'scope>(
        &'scope self,
        scope: &'scope Scope<'scope, '_>,
        input: Receiver<Envelope<I>>,
        output: Sender<Envelope<O>>,
        ctx: &'scope Ctx,
    ) {
        if self.callable() {
            spawn_worker(self, scope, input, output, ctx);
        } else {
            self.spawn_phases(scope, input, output, ctx);
        }
    }
}

impl<I: Send + 'static, M: Send + 'static, O: Send + 'static> Seq<I, M, O> {
    /// Run `a` on the whole stream, then `b` on `a`'s outputs (module docs). A boundary
    /// thread starts the threads of `a` in a scope of its own and joins them: it sleeps
    /// until the last one has ended, with no wake-up per element; `a`'s outputs wait in
    /// an unbounded queue, which their end has closed. Then it starts the threads of `b`
    /// on that queue, and ends.
    fn spawn_phases<'scope>(
        &'scope self,
        scope: &'scope Scope<'scope, '_>,
        input: Receiver<Envelope<I>>,
        output: Sender<Envelope<O>>,
        ctx: &'scope Ctx,
    ) {
        // `b`'s workers start after the driver has started its own: they still have to
        // learn whether `output` is the run's last queue ([`Ctx::end_of`]).
        let hold = ctx.hold_last_queue();
        // The boundary thread waits at the run's gate (without a core) once the workers
        // of `a` are announced, so that a gated driver opens it only when they wait
        // there too.
        ctx.expect_thread();
        std::thread::Builder::new()
            .name(WORKER_THREAD_NAME.into())
            .spawn_scoped(scope, move || {
                let (mid_tx, mid_rx) = unbounded::<Envelope<M>>();
                std::thread::scope(|phase| {
                    start(&*self.a.node, phase, input, mid_tx, ctx);
                    ctx.arrive();
                });
                // Every thread of `a` has ended (and given its core back): `mid_rx`
                // holds all of its outputs and is closed.
                start(&*self.b.node, scope, mid_rx, output, ctx);
                drop(hold);
            })
            .expect("the OS refused to start a phase boundary thread");
    }
}

/// Sequential concatenation: `a` then `b`, per element, on one thread when both are
/// callable; otherwise in phases, `a` on the whole stream and then `b` on its outputs
/// (see the module docs: a phase boundary holds the whole stream).
///
/// ```
/// use perfcompose_runtime::{block, pipe, seq, Program};
/// let inc = || block("inc", |v: u64| v + 1);
/// let double = block("double", |v: u64| v * 2);
/// // The pipeline runs on the whole stream, then `double` on its outputs.
/// let program = Program::new(seq(pipe(inc(), inc()), double)).unwrap();
/// assert_eq!(program.run(0..4u64).unwrap(), vec![4, 6, 8, 10]);
/// ```
pub fn seq<I, M, O>(a: Pattern<I, M>, b: Pattern<M, O>) -> Pattern<I, O>
where
    I: Send + 'static,
    M: Send + 'static,
    O: Send + 'static,
{
    Pattern {
        node: Arc::new(Seq { a, b }),
    }
}

// ---------------------------------------------------------------------------------------
// pipe

struct Pipe<I, M, O> {
    a: Pattern<I, M>,
    b: Pattern<M, O>,
}

impl<I: Send + 'static, M: Send + 'static, O: Send + 'static> Node<I, O> for Pipe<I, M, O> {
    fn describe(&self) -> String {
        format!("pipe({}, {})", self.a.describe(), self.b.describe())
    }
    fn callable(&self) -> bool {
        false
    }
    fn call(&self, _input: I, _ctx: &Ctx) -> Result<O, StageFailure> {
        Err(not_callable(&self.describe()))
    }
    fn threads(&self) -> usize {
        self.a.node.threads() + self.b.node.threads()
    }
    fn in_flight(&self) -> usize {
        self.a.node.in_flight() + self.b.node.in_flight()
    }
    fn check(&self) -> Result<(), BuildError> {
        self.a.node.check()?;
        self.b.node.check()
    }
    fn spawn_network<'scope>(
        &'scope self,
        scope: &'scope Scope<'scope, '_>,
        input: Receiver<Envelope<I>>,
        output: Sender<Envelope<O>>,
        ctx: &'scope Ctx,
    ) {
        let (tx, rx) = bounded(ctx.capacity);
        start(&*self.a.node, scope, input, tx, ctx);
        start(&*self.b.node, scope, rx, output, ctx);
    }
}

/// A two-stage pipeline: `a` and `b` run concurrently on different elements, joined by a
/// bounded queue (backpressure: a fast `a` blocks once the queue is full).
pub fn pipe<I, M, O>(a: Pattern<I, M>, b: Pattern<M, O>) -> Pattern<I, O>
where
    I: Send + 'static,
    M: Send + 'static,
    O: Send + 'static,
{
    Pattern {
        node: Arc::new(Pipe { a, b }),
    }
}

// ---------------------------------------------------------------------------------------
// tpool

struct TPool<I, O> {
    n: usize,
    inner: Pattern<I, O>,
}

impl<I: Send + 'static, O: Send + 'static> Node<I, O> for TPool<I, O> {
    fn describe(&self) -> String {
        format!("tpool({}, {})", self.n, self.inner.describe())
    }
    fn callable(&self) -> bool {
        false
    }
    fn call(&self, _input: I, _ctx: &Ctx) -> Result<O, StageFailure> {
        Err(not_callable(&self.describe()))
    }
    fn threads(&self) -> usize {
        self.n * self.inner.node.threads()
    }
    fn in_flight(&self) -> usize {
        self.n * self.inner.node.in_flight()
    }
    fn check(&self) -> Result<(), BuildError> {
        if self.n == 0 {
            return Err(BuildError::ZeroThreads {
                pattern: self.describe(),
            });
        }
        self.inner.node.check()
    }
    fn spawn_network<'scope>(
        &'scope self,
        scope: &'scope Scope<'scope, '_>,
        input: Receiver<Envelope<I>>,
        output: Sender<Envelope<O>>,
        ctx: &'scope Ctx,
    ) {
        // The queues are multi-producer multi-consumer: n replicas (workers, or whole
        // sub-networks such as pipelines) take from one queue and put into one queue,
        // so a free replica always takes the next element (dynamic load balancing).
        for _ in 0..self.n {
            start(&*self.inner.node, scope, input.clone(), output.clone(), ctx);
        }
    }
}

/// A task pool of `n` replicas of `inner`. With a callable `inner` these are `n` worker
/// threads; with a pipeline inside, `n` pipelines. Completes elements out of order.
pub fn tpool<I, O>(n: usize, inner: Pattern<I, O>) -> Pattern<I, O>
where
    I: Send + 'static,
    O: Send + 'static,
{
    Pattern {
        node: Arc::new(TPool { n, inner }),
    }
}

fn not_callable(what: &str) -> StageFailure {
    StageFailure {
        stage: what.to_string(),
        message: "a stream pattern cannot be called on a single element".into(),
    }
}

// ---------------------------------------------------------------------------------------
// adapt: change the element type around a callable pattern (used by the term-driven path
// to unwrap `Data::Batch` into a MapReduce job and wrap its result); invisible in
// `describe`.

struct Adapt<I, J, P, O> {
    pre: Box<dyn Fn(I) -> J + Send + Sync>,
    inner: Pattern<J, P>,
    post: Box<dyn Fn(P) -> O + Send + Sync>,
}

impl<I, J, P, O> Node<I, O> for Adapt<I, J, P, O>
where
    I: Send + 'static,
    J: Send + 'static,
    P: Send + 'static,
    O: Send + 'static,
{
    fn describe(&self) -> String {
        self.inner.describe()
    }
    fn callable(&self) -> bool {
        true
    }
    fn call(&self, input: I, ctx: &Ctx) -> Result<O, StageFailure> {
        let j = (self.pre)(input);
        self.inner.node.call(j, ctx).map(&self.post)
    }
    fn threads(&self) -> usize {
        self.inner.node.threads()
    }
    fn check(&self) -> Result<(), BuildError> {
        self.inner.node.check()?;
        if !self.inner.node.callable() {
            return Err(BuildError::Unsupported {
                what: self.describe(),
                why: "only callable patterns can be adapted".into(),
            });
        }
        Ok(())
    }
    fn spawn_network<'scope>(
        &'scope self,
        scope: &'scope Scope<'scope, '_>,
        input: Receiver<Envelope<I>>,
        output: Sender<Envelope<O>>,
        ctx: &'scope Ctx,
    ) {
        spawn_worker(self, scope, input, output, ctx);
    }
}

pub(crate) fn adapt<I, J, P, O>(
    pre: impl Fn(I) -> J + Send + Sync + 'static,
    inner: Pattern<J, P>,
    post: impl Fn(P) -> O + Send + Sync + 'static,
) -> Pattern<I, O>
where
    I: Send + 'static,
    J: Send + 'static,
    P: Send + 'static,
    O: Send + 'static,
{
    Pattern {
        node: Arc::new(Adapt {
            pre: Box::new(pre),
            inner,
            post: Box::new(post),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ctx::Config;

    fn add(k: u64) -> Pattern<u64, u64> {
        block(format!("add{k}"), move |v: u64| v + k)
    }

    /// Run `p` as the stream driver does ([`crate::Program::run_stream`]), and return
    /// its outputs in input order with how many outputs the workers of the last queue
    /// counted into the stream's end (in release builds the driver does not check it).
    fn run_ending(p: &Pattern<u64, u64>, n: u64, config: &Config) -> (Vec<u64>, usize) {
        let node = &*p.node;
        let (in_tx, in_rx) = bounded::<Envelope<u64>>((n as usize).max(1));
        let (out_tx, out_rx) = bounded::<Envelope<u64>>((n as usize).max(1));
        let ctx = Ctx::gated(config, node.threads()).ending(n as usize, out_tx.clone());
        let mut out = Vec::new();
        std::thread::scope(|scope| {
            start(node, scope, in_rx, out_tx, &ctx);
            ctx.started();
            for seq in 0..n {
                in_tx.send(Envelope { seq, item: seq }).unwrap();
            }
            drop(in_tx);
            ctx.open_gate();
            assert!(ctx.await_end(&|| out_rx.len()));
            // The queue ends with its last worker: the whole stream, and nothing more.
            out = out_rx.iter().map(|e| (e.seq, e.item)).collect::<Vec<_>>();
        });
        out.sort_unstable();
        assert!(out.iter().map(|e| e.0).eq(0..n));
        (out.into_iter().map(|e| e.1).collect(), ctx.end_counted())
    }

    #[test]
    fn the_workers_of_later_phases_count_their_outputs_into_the_stream_end() {
        let shapes = [
            seq(pipe(add(1), add(10)), add(100)),
            seq(add(1), pipe(add(10), add(100))),
            tpool(2, seq(pipe(add(1), add(10)), add(100))),
            seq(seq(tpool(2, add(1)), add(10)), tpool(3, add(100))),
            seq(add(1), seq(pipe(add(10), add(100)), add(0))),
            pipe(add(1), tpool(2, seq(tpool(2, add(10)), add(100)))),
        ];
        let pinned = Config {
            pin: true,
            ..Config::default()
        };
        for p in shapes {
            for config in [Config::default(), pinned.clone()] {
                for n in [0u64, 1, 5, 300] {
                    let (out, counted) = run_ending(&p, n, &config);
                    assert!(out.iter().copied().eq((0..n).map(|v| v + 111)), "{p:?}");
                    assert_eq!(counted, n as usize, "{p:?}, {n} elements");
                }
            }
        }
    }
}
