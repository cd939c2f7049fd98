//! MapReduce on one node with `n` threads: map, shuffle by key, reduce.
//!
//! One element of a MapReduce pattern is one *job*: a list of inputs (`Vec<I>`). The
//! output is one value per key. Keys are dense integers `0..k` (the seed's assumption:
//! "keys continuous in the integers, which allows the results to be stored in a vector"),
//! so a map output is a `Vec<V>` indexed by key.
//!
//! Two reduction styles, as in seed 000 §4.1.2:
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

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
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
    pool: OnceLock<Pool>,
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
            pool: OnceLock::new(),
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
    fn pool(&self, ctx: &Ctx) -> &Pool {
        self.pool.get_or_init(|| {
            let cores = ctx.pinning().map(|c| c.to_vec());
            let next = Arc::new(AtomicUsize::new(0));
            Pool::new(self.threads, move || {
                if let Some(cores) = &cores {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let _ = core_affinity::set_for_current(cores[i % cores.len()]);
                }
            })
        })
    }

    /// Run `task(t)` for `t in 0..threads` on the pool and collect every result. Waits
    /// for all tasks even when one fails, so no task outlives the call.
    fn phase<T: Send + 'static>(
        &self,
        ctx: &Ctx,
        task: impl Fn(usize) -> TaskResult<T> + Send + Sync + 'static,
    ) -> Result<Vec<T>, StageFailure> {
        let task = Arc::new(task);
        let (tx, rx): (Sender<TaskResult<T>>, Receiver<TaskResult<T>>) = bounded(self.threads);
        for t in 0..self.threads {
            let task = Arc::clone(&task);
            let tx = tx.clone();
            self.pool(ctx).submit(move || {
                let _ = tx.send(task(t));
            });
        }
        drop(tx);
        let mut out = Vec::with_capacity(self.threads);
        let mut failure = None;
        for r in rx.iter() {
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

    fn run_job(&self, job: Vec<I>, ctx: &Ctx) -> Result<Vec<V>, StageFailure> {
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
                let partials = self.phase(ctx, move |_| {
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
                let mapped = self.phase(ctx, move |_| {
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
                let reduced = self.phase(ctx, move |_| {
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
        self.run_job(input, ctx)
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
