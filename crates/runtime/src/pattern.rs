//! Patterns as composable values: the typed API (closures as blocks) on which the
//! term-driven path is built.
//!
//! A [`Pattern<I, O>`] turns a stream of `I` into a stream of `O`. Patterns nest exactly as
//! terms nest:
//!
//! | constructor | term | how it runs |
//! |---|---|---|
//! | [`block`] | `NAME` | the closure, called once per element |
//! | [`seq`] | `seq(a, b)` | `a` then `b` on the same thread, per element |
//! | [`pipe`] | `pipe(a, b)` | `a` and `b` on their own threads, joined by a bounded queue |
//! | [`tpool`] | `tpool(n, t)` | `n` replicas of `t` sharing one input and one output queue |
//! | [`crate::mapreduce`] | `mapreduce(map, reduce, threads=n)` | one element = one job of many inputs; map, shuffle by key and reduce on `n` threads |
//!
//! A pattern is *callable* when one element can be processed on the calling thread
//! (blocks, `seq` of callables, MapReduce, whose parallelism is inside one element).
//! `pipe` and `tpool` get their parallelism from overlapping *different* elements, so
//! they are stream networks and are never called element by element. `seq` runs its parts
//! one after the other on one thread; a `pipe` or `tpool` inside a `seq` therefore has no
//! faithful implementation and is rejected when the program is built (write
//! `pipe(...)` to connect parallel stages, or `tpool(n, seq(...))` to replicate a sequence).
//!
//! Element order: a task pool completes elements in whatever order its workers finish,
//! so order is not kept *between* stages; [`crate::Program::run`] restores the input order
//! at the end (every element carries its input position).

use std::sync::Arc;
use std::thread::Scope;

use crossbeam_channel::{bounded, Receiver, Sender};

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
    /// its stages for a pipeline, `n` times its replica for a task pool.
    fn in_flight(&self) -> usize {
        if self.callable() {
            1
        } else {
            self.threads()
        }
    }
    /// Reject what cannot run (zero threads, `pipe` inside `seq`), recursively.
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

    /// Elements of a stream it works on at the same time: 1 for `seq(qsort, inc)` or a
    /// MapReduce job, 2 for `pipe(qsort, inc)` and `tpool(2, qsort)`, 4 for
    /// `tpool(2, pipe(qsort, inc))`.
    pub fn in_flight(&self) -> usize {
        self.node.in_flight()
    }

    /// Check that the pattern can run (no zero thread counts, no `pipe`/`tpool` inside
    /// `seq`).
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
            ctx.start_thread();
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
        self.a.node.threads().max(self.b.node.threads())
    }
    fn check(&self) -> Result<(), BuildError> {
        self.a.node.check()?;
        self.b.node.check()?;
        for part in [self.a.node.callable(), self.b.node.callable()]
            .iter()
            .zip([self.a.describe(), self.b.describe()])
        {
            if !*part.0 {
                return Err(BuildError::Unsupported {
                    what: format!("`{}` inside `{}`", part.1, self.describe()),
                    why: "seq runs its parts one after the other on one thread, so a \
                          pipeline or task pool inside it would run element by element"
                        .into(),
                });
            }
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
        // `check` rejects non-callable parts, so a seq always runs as one worker.
        spawn_worker(self, scope, input, output, ctx);
    }
}

/// Sequential concatenation: `a` then `b`, per element, on one thread.
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
