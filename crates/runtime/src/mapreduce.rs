//! MapReduce on one node with `n` threads: map, shuffle by key, reduce.
//!
//! One element of a MapReduce pattern is one *job*: a list of inputs (`Vec<I>`). The
//! output is one value per key. Keys are dense integers `0..k` (the paper's assumption:
//! "keys continuous in the integers, which allows the results to be stored in a vector"),
//! so a map output is a `Vec<V>` indexed by key.
//!
//! Two reduction styles, as in the pattern-composition paper (§4.1.2):
//! - [`Reduce::Pairwise`] (GrPPI): the collections emitted by the map are combined two at
//!   a time; `k(x) = x` reductions of `d = k` values each. Every thread folds the outputs
//!   of the inputs it maps into a running collection, then the `n` partial collections are
//!   combined.
//! - [`Reduce::PerKey`] (Phoenix, Hadoop): the map outputs are kept, the shuffle gathers
//!   the values of one key from every map output into one contiguous vector, and the
//!   reduce folds that vector; `k` reductions of `d(x) = x` values. Keys are handed to the
//!   threads in small chunks.
//!
//! Phases run one after the other (no overlap between the map of one job and the reduce
//! of another), matching the composition operator. Inputs are handed out one at a time
//! from a shared counter, so a thread slowed down by another process does not hold up
//! the job (dynamic load balancing).
//!
//! The `n` threads of a job: when the run pins its threads (and always on one thread),
//! the thread that calls the node maps too, with `n - 1` helpers, and takes over any task
//! of a phase that no helper has started by the time its own is done, so a helper that
//! wakes late (a blocked thread can take tens to hundreds of microseconds to run again on
//! a busy host) finds the inputs claimed instead of holding the job up, and a one-thread
//! MapReduce runs on its caller with no hand-off at all. Unpinned, the caller hands all
//! `n` tasks to `n` helpers and waits: the OS tends to wake a helper on the core of the
//! thread that woke it, where it would wait behind a mapping caller. Helpers are per
//! concurrent caller, so `tpool(2, mapreduce(.., threads=2))` runs each job on two
//! threads.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::Scope;

use crossbeam_channel::{bounded, Receiver, Sender};

use crate::ctx::Ctx;
use crate::error::BuildError;
use crate::pattern::{Envelope, Node, Pattern, StageFailure};
use crate::pool::Pool;
use crate::unwind::catch;

type MapFn<I, V> = dyn Fn(&I) -> Vec<V> + Send + Sync;
type PairwiseFn<V> = dyn Fn(&mut [V], &[V]) + Send + Sync;
type PerKeyFn<V> = dyn Fn(usize, &[V]) -> V + Send + Sync;

/// How the values of the map phase are reduced.
pub enum Reduce<V> {
    /// Combine two whole collections: `f(acc, other)` adds `other` into `acc`.
    Pairwise { name: String, f: Arc<PairwiseFn<V>> },
    /// Reduce all values of one key: `f(key, values)`.
    PerKey { name: String, f: Arc<PerKeyFn<V>> },
}

impl<V> Reduce<V> {
    pub fn pairwise(
        name: impl Into<String>,
        f: impl Fn(&mut [V], &[V]) + Send + Sync + 'static,
    ) -> Reduce<V> {
        Reduce::Pairwise {
            name: name.into(),
            f: Arc::new(f),
        }
    }

    pub fn per_key(
        name: impl Into<String>,
        f: impl Fn(usize, &[V]) -> V + Send + Sync + 'static,
    ) -> Reduce<V> {
        Reduce::PerKey {
            name: name.into(),
            f: Arc::new(f),
        }
    }

    fn name(&self) -> &str {
        match self {
            Reduce::Pairwise { name, .. } | Reduce::PerKey { name, .. } => name,
        }
    }
}

/// Keys per task in the per-key phase: large enough that taking a chunk is cheap, small
/// enough that 768 keys spread over a few threads.
const KEYS_PER_CHUNK: usize = 16;

struct MapReduce<I, V> {
    threads: usize,
    map_name: String,
    map: Arc<MapFn<I, V>>,
    reduce: Reduce<V>,
    /// Helpers; the threads that call the node are the others.
    pool: Pool,
    /// Threads inside `call` right now.
    callers: AtomicUsize,
}

/// A MapReduce pattern on one node with `threads` threads. One element is a job (a list
/// of inputs); its output is one value per key.
///
/// ```
/// use perfcompose_runtime::{mapreduce, Program, Reduce};
/// // Count even and odd numbers (key 0 = even, key 1 = odd).
/// let mr = mapreduce(
///     2,
///     "parity",
///     |v: &u64| if v % 2 == 0 { vec![1u64, 0] } else { vec![0, 1] },
///     Reduce::per_key("sum", |_key, vals: &[u64]| vals.iter().sum()),
/// );
/// let program = Program::new(mr).unwrap();
/// assert_eq!(program.run(vec![(0..7u64).collect::<Vec<_>>()]).unwrap(), vec![vec![4, 3]]);
/// ```
pub fn mapreduce<I, V>(
    threads: usize,
    map_name: impl Into<String>,
    map: impl Fn(&I) -> Vec<V> + Send + Sync + 'static,
    reduce: Reduce<V>,
) -> Pattern<Vec<I>, Vec<V>>
where
    I: Send + Sync + 'static,
    V: Clone + Send + Sync + 'static,
{
    Pattern {
        node: Arc::new(MapReduce {
            threads,
            map_name: map_name.into(),
            map: Arc::new(map),
            reduce,
            pool: Pool::new(),
            callers: AtomicUsize::new(0),
        }),
    }
}

/// What one task of a phase sends back.
type TaskResult<T> = Result<T, StageFailure>;

impl<I, V> MapReduce<I, V>
where
    I: Send + Sync + 'static,
    V: Clone + Send + Sync + 'static,
{
    /// Run `task(t)` for `t in 0..threads` and collect every result; each task runs
    /// exactly once and none outlives the call. When `caller_maps`, the calling thread
    /// runs task 0 itself and offers the others to the helpers; once its own task is
    /// done it runs every task no helper has started yet, then waits only for the tasks
    /// helpers did start (a task the caller took stays queued as an empty shell). Tasks
    /// share their work through counters, so a helper that starts late finds less to do
    /// instead of holding the job up. Otherwise every task goes to a helper and the caller
    /// waits for all of them.
    fn phase<T: Send + 'static>(
        &self,
        caller_maps: bool,
        task: impl Fn(usize) -> TaskResult<T> + Send + Sync + 'static,
    ) -> Result<Vec<T>, StageFailure> {
        let n = self.threads;
        let first = usize::from(caller_maps);
        let task = Arc::new(task);
        let taken: Arc<[AtomicBool]> = (0..n).map(|_| AtomicBool::new(false)).collect();
        let (tx, rx): (Sender<TaskResult<T>>, Receiver<TaskResult<T>>) = bounded(n);
        for t in first..n {
            let (task, taken, tx) = (Arc::clone(&task), Arc::clone(&taken), tx.clone());
            self.pool.submit(move || {
                if !taken[t].swap(true, Ordering::AcqRel) {
                    let _ = tx.send(run_task(&*task, t));
                }
            });
        }
        let mut results = Vec::with_capacity(n);
        let mut helped = n - first;
        if caller_maps {
            results.push(run_task(&*task, 0));
            for t in 1..n {
                if !taken[t].swap(true, Ordering::AcqRel) {
                    helped -= 1;
                    results.push(run_task(&*task, t));
                }
            }
        }
        // A helper that took a task always sends its result (`run_task` catches panics).
        results.extend(rx.iter().take(helped));
        let mut out = Vec::with_capacity(n);
        let mut failure = None;
        for r in results {
            match r {
                Ok(v) => out.push(v),
                Err(f) => failure = failure.or(Some(f)),
            }
        }
        match failure {
            Some(f) => Err(f),
            None => Ok(out),
        }
    }

    fn run_job(&self, job: Vec<I>, caller_maps: bool) -> Result<Vec<V>, StageFailure> {
        let job = Arc::new(job);
        let next = Arc::new(AtomicUsize::new(0));
        let map_name = self.map_name.clone();
        let fail = |stage: &str, message: String| StageFailure {
            stage: stage.to_string(),
            message,
        };
        match &self.reduce {
            Reduce::Pairwise { name, f } => {
                let (map, reduce) = (Arc::clone(&self.map), Arc::clone(f));
                let (job2, reduce_name) = (Arc::clone(&job), name.clone());
                let partials = self.phase(caller_maps, move |_| {
                    let mut acc: Option<Vec<V>> = None;
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= job2.len() {
                            return Ok(acc);
                        }
                        let out = catch(|| map(&job2[i])).map_err(|m| fail(&map_name, m))?;
                        acc = Some(match acc {
                            None => out,
                            Some(mut a) => {
                                check_keys(&a, &out, &map_name)?;
                                catch(|| reduce(&mut a, &out))
                                    .map_err(|m| fail(&reduce_name, m))?;
                                a
                            }
                        });
                    }
                })?;
                let mut total: Option<Vec<V>> = None;
                for p in partials.into_iter().flatten() {
                    total = Some(match total {
                        None => p,
                        Some(mut a) => {
                            check_keys(&a, &p, &self.map_name)?;
                            catch(|| f(&mut a, &p)).map_err(|m| fail(name, m))?;
                            a
                        }
                    });
                }
                Ok(total.unwrap_or_default())
            }
            Reduce::PerKey { name, f } => {
                // Map phase: keep every output, indexed by input position.
                let map = Arc::clone(&self.map);
                let job2 = Arc::clone(&job);
                let mapped = self.phase(caller_maps, move |_| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= job2.len() {
                            return Ok(mine);
                        }
                        let out = catch(|| map(&job2[i])).map_err(|m| fail(&map_name, m))?;
                        mine.push((i, out));
                    }
                })?;
                let mut outputs: Vec<Vec<V>> = vec![Vec::new(); job.len()];
                for (i, out) in mapped.into_iter().flatten() {
                    outputs[i] = out;
                }
                let keys = outputs.first().map_or(0, Vec::len);
                for o in &outputs {
                    if o.len() != keys {
                        return Err(fail(
                            &self.map_name,
                            format!(
                                "map outputs have different key counts ({} and {})",
                                keys,
                                o.len()
                            ),
                        ));
                    }
                }
                // Shuffle and reduce phase: a thread takes a chunk of keys, gathers each
                // key's values from all map outputs into one vector and reduces it.
                let outputs = Arc::new(outputs);
                let next_key = Arc::new(AtomicUsize::new(0));
                let (reduce, reduce_name) = (Arc::clone(f), name.clone());
                let reduced = self.phase(caller_maps, move |_| {
                    let mut mine = Vec::new();
                    let mut values: Vec<V> = Vec::with_capacity(outputs.len());
                    loop {
                        let lo = next_key.fetch_add(KEYS_PER_CHUNK, Ordering::Relaxed);
                        if lo >= keys {
                            return Ok(mine);
                        }
                        for key in lo..(lo + KEYS_PER_CHUNK).min(keys) {
                            values.clear();
                            values.extend(outputs.iter().map(|o| o[key].clone()));
                            let v = catch(|| reduce(key, &values))
                                .map_err(|m| fail(&reduce_name, m))?;
                            mine.push((key, v));
                        }
                    }
                })?;
                let mut result: Vec<Option<V>> = vec![None; keys];
                for (k, v) in reduced.into_iter().flatten() {
                    result[k] = Some(v);
                }
                Ok(result.into_iter().flatten().collect())
            }
        }
    }
}

/// Run one task of a phase; a panic outside the user's blocks (which are caught where
/// they are called, with their names) is reported as a failure of the MapReduce itself.
fn run_task<T, F: Fn(usize) -> TaskResult<T>>(task: &F, t: usize) -> TaskResult<T> {
    catch(|| task(t)).unwrap_or_else(|message| {
        Err(StageFailure {
            stage: "mapreduce".to_string(),
            message,
        })
    })
}

/// Whether the caller maps: by choice (pinned, or one thread), or because it is short of
/// helpers (the OS refused a thread) — then it runs every task nobody takes, so a job
/// finishes with whatever threads there are instead of waiting for helpers that do not
/// exist.
fn caller_must_map(by_choice: bool, helpers: usize, wanted: usize) -> bool {
    by_choice || helpers < wanted
}

/// Counts the threads inside one MapReduce node's `call` while it lives.
struct Caller<'a>(&'a AtomicUsize);

impl<'a> Caller<'a> {
    /// Enter; returns the guard and how many callers are inside now, this one included.
    fn enter(count: &'a AtomicUsize) -> (Caller<'a>, usize) {
        let now = count.fetch_add(1, Ordering::AcqRel) + 1;
        (Caller(count), now)
    }
}

impl Drop for Caller<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

fn check_keys<V>(a: &[V], b: &[V], map_name: &str) -> Result<(), StageFailure> {
    if a.len() == b.len() {
        Ok(())
    } else {
        Err(StageFailure {
            stage: map_name.to_string(),
            message: format!(
                "map outputs have different key counts ({} and {})",
                a.len(),
                b.len()
            ),
        })
    }
}

impl<I, V> Node<Vec<I>, Vec<V>> for MapReduce<I, V>
where
    I: Send + Sync + 'static,
    V: Clone + Send + Sync + 'static,
{
    fn describe(&self) -> String {
        format!(
            "mapreduce({}, {}, threads={})",
            self.map_name,
            self.reduce.name(),
            self.threads
        )
    }
    fn callable(&self) -> bool {
        true
    }
    fn call(&self, input: Vec<I>, ctx: &Ctx) -> Result<Vec<V>, StageFailure> {
        // The caller maps too when the run pins its threads (each has a core of its
        // own) and on one thread; unpinned, the OS tends to wake a helper on the core of
        // the caller that woke it, where it waits behind the mapping caller (small
        // images, two threads: 1.5-1.8x the ideal job instead of 1.1-1.6x with the
        // caller waiting, docs/validation.md), so there the helpers do all the mapping.
        let caller_maps = self.threads == 1 || ctx.pins();
        // Every concurrent caller (a task pool around this node) gets helpers of its
        // own, so each job runs on `threads` threads as the term says.
        let per_caller = self.threads.saturating_sub(usize::from(caller_maps));
        let (_inside, callers) = Caller::enter(&self.callers);
        let wanted = callers * per_caller;
        let helpers = self.pool.grow_to(wanted, ctx);
        self.run_job(input, caller_must_map(caller_maps, helpers, wanted))
    }
    fn threads(&self) -> usize {
        self.threads
    }
    fn check(&self) -> Result<(), BuildError> {
        if self.threads == 0 {
            return Err(BuildError::ZeroThreads {
                pattern: self.describe(),
            });
        }
        Ok(())
    }
    fn spawn_network<'scope>(
        &'scope self,
        scope: &'scope Scope<'scope, '_>,
        input: Receiver<Envelope<Vec<I>>>,
        output: Sender<Envelope<Vec<V>>>,
        ctx: &'scope Ctx,
    ) {
        crate::pattern::start(self, scope, input, output, ctx);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ctx::Config;
    use std::sync::Mutex;

    fn node(threads: usize) -> MapReduce<u32, u64> {
        MapReduce {
            threads,
            map_name: "m".into(),
            map: Arc::new(|v: &u32| vec![*v as u64]),
            reduce: Reduce::per_key("sum", |_, v: &[u64]| v.iter().sum()),
            pool: Pool::new(),
            callers: AtomicUsize::new(0),
        }
    }

    #[test]
    fn a_phase_without_helpers_runs_every_task_once_on_the_caller() {
        // No helper was ever started: every task is the caller's to run.
        let mr = node(4);
        let runs = Arc::new(Mutex::new(Vec::new()));
        let r = Arc::clone(&runs);
        let me = std::thread::current().id();
        let out = mr
            .phase(true, move |t| {
                assert_eq!(std::thread::current().id(), me);
                r.lock().unwrap().push(t);
                Ok(t * 10)
            })
            .unwrap();
        assert_eq!(out, vec![0, 10, 20, 30]);
        assert_eq!(*runs.lock().unwrap(), vec![0, 1, 2, 3]);
        // The offered shells stay queued; dropping the node drops them.
        drop(mr);
    }

    #[test]
    fn with_helpers_every_task_still_runs_exactly_once_and_failures_surface() {
        let mr = node(3);
        let ctx = Ctx::new(&Config::default(), 3);
        mr.pool.grow_to(3, &ctx);
        for round in 0..200 {
            let runs: Arc<Vec<AtomicUsize>> =
                Arc::new((0..3).map(|_| AtomicUsize::new(0)).collect());
            let r = Arc::clone(&runs);
            let out = mr.phase(round % 2 == 0, move |t| {
                r[t].fetch_add(1, Ordering::SeqCst);
                if round % 7 == 0 && t == 2 {
                    panic!("task {t} broke");
                }
                Ok(t)
            });
            assert!(runs.iter().all(|c| c.load(Ordering::SeqCst) == 1));
            match out {
                Ok(mut v) => {
                    assert!(round % 7 != 0);
                    v.sort();
                    assert_eq!(v, vec![0, 1, 2]);
                }
                Err(f) => {
                    assert_eq!(round % 7, 0);
                    assert_eq!(f.stage, "mapreduce");
                    assert!(f.message.contains("task 2 broke"), "{}", f.message);
                }
            }
        }
    }

    #[test]
    fn a_caller_short_of_helpers_maps_instead_of_waiting() {
        assert!(caller_must_map(true, 5, 1));
        assert!(!caller_must_map(false, 2, 2));
        assert!(!caller_must_map(false, 4, 2));
        assert!(caller_must_map(false, 1, 2));
        assert!(caller_must_map(false, 0, 2));
        // With no helper at all, a phase the caller maps still runs every task.
        let mr = node(2);
        assert_eq!(
            mr.phase(caller_must_map(false, 0, 2), Ok).unwrap(),
            vec![0, 1]
        );
    }

    #[test]
    fn each_concurrent_caller_gets_its_own_helpers() {
        let mr = node(3);
        let ctx = Ctx::new(&Config::default(), 6);
        let (_a, one) = Caller::enter(&mr.callers);
        assert_eq!(one, 1);
        {
            let (_b, two) = Caller::enter(&mr.callers);
            assert_eq!(two, 2);
            assert_eq!(mr.pool.grow_to(two * 2, &ctx), 4);
        }
        assert_eq!(mr.callers.load(Ordering::SeqCst), 1);
        assert_eq!(mr.pool.helpers(), 4);
        // Growing to fewer never shrinks.
        assert_eq!(mr.pool.grow_to(2, &ctx), 4);
        assert_eq!(mr.pool.helpers(), 4);
    }
}
