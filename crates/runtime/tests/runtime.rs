//! Correctness of the pattern runtime: every element exactly once in every pattern and
//! nesting, panics surface with full accounting, backpressure bounds the elements in
//! flight, orderly shutdown, and the term-driven path. No test depends on timing.

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use perfcompose_runtime::data::ImageSize;
use perfcompose_runtime::kernel::{histogram, Inputs};
use perfcompose_runtime::plan::stream_inputs;
use perfcompose_runtime::{
    block, mapreduce, pipe, seq, tpool, BuildError, Config, Data, Pattern, Plan, Program, Reduce,
    Registry,
};
use proptest::prelude::*;

/// A block that adds `add` and records which elements it saw (to prove exactly-once).
fn counted(name: &str, add: u64, seen: &Arc<Mutex<Vec<u64>>>) -> Pattern<(u64, u64), (u64, u64)> {
    let seen = Arc::clone(seen);
    block(name.to_string(), move |(id, v): (u64, u64)| {
        seen.lock().unwrap().push(id);
        (id, v + add)
    })
}

fn assert_each_once(seen: &Arc<Mutex<Vec<u64>>>, n: u64) {
    let mut s = seen.lock().unwrap().clone();
    s.sort_unstable();
    assert_eq!(s, (0..n).collect::<Vec<_>>(), "each element exactly once");
}

/// The shapes every pattern test runs over: (description, builder taking three stages).
type Stage = Pattern<(u64, u64), (u64, u64)>;
type Shaper = Box<dyn Fn(Stage, Stage, Stage) -> Stage>;
fn shapes() -> Vec<(&'static str, Shaper)> {
    vec![
        ("block", Box::new(|a, _, _| a)),
        ("seq", Box::new(|a, b, c| seq(seq(a, b), c))),
        ("pipe", Box::new(|a, b, c| pipe(a, pipe(b, c)))),
        ("tpool", Box::new(|a, b, c| tpool(3, seq(a, seq(b, c))))),
        (
            "pipe of tpools",
            Box::new(|a, b, c| pipe(tpool(2, a), pipe(tpool(3, b), c))),
        ),
        (
            "tpool of pipes",
            Box::new(|a, b, c| tpool(2, pipe(a, pipe(b, c)))),
        ),
        (
            "tpool of tpool",
            Box::new(|a, b, c| tpool(2, pipe(tpool(2, seq(a, b)), c))),
        ),
    ]
}

#[test]
fn every_element_exactly_once_in_order_in_every_shape() {
    const N: u64 = 500;
    for (name, shape) in shapes() {
        let seen: Vec<_> = (0..3).map(|_| Arc::new(Mutex::new(Vec::new()))).collect();
        let p = shape(
            counted("a", 1, &seen[0]),
            counted("b", 10, &seen[1]),
            counted("c", 100, &seen[2]),
        );
        let uses = [true, name != "block", name != "block"];
        let program = Program::new(p).unwrap();
        let out = program.run((0..N).map(|i| (i, i))).unwrap();
        let add = if name == "block" { 1 } else { 111 };
        assert_eq!(
            out,
            (0..N).map(|i| (i, i + add)).collect::<Vec<_>>(),
            "{name}: outputs in input order"
        );
        for (s, used) in seen.iter().zip(uses) {
            if used {
                assert_each_once(s, N);
            }
        }
    }
}

#[test]
fn empty_input_gives_empty_output() {
    let p = Program::new(pipe(tpool(2, block("a", |v: u8| v)), block("b", |v: u8| v))).unwrap();
    assert!(p.run(Vec::<u8>::new()).unwrap().is_empty());
}

#[test]
fn pinned_workers_compute_the_same() {
    let cfg = Config {
        capacity: 2,
        pin: true,
        ..Config::default()
    };
    let p = Program::with_config(tpool(3, block("sq", |v: u64| v * v)), cfg.clone()).unwrap();
    assert_eq!(
        p.run(0..100u64).unwrap(),
        (0..100u64).map(|v| v * v).collect::<Vec<_>>()
    );
    // A design that fits two cores: under the stream driver its pinned workers spin on
    // their queues before sleeping, and a stage that waits long (the sleep) still gets
    // every element once, delivered in input order.
    let slow = block("slow", |v: u64| {
        if v % 10 == 0 {
            std::thread::sleep(std::time::Duration::from_millis(3));
        }
        v + 1
    });
    let p = Program::with_config(pipe(block("sq", |v: u64| v * v), slow), cfg).unwrap();
    let out = p.run_stream((0..50u64).collect()).unwrap().outputs;
    assert_eq!(out, (0..50u64).map(|v| v * v + 1).collect::<Vec<_>>());
}

/// A random nesting of the stream patterns around a few blocks.
#[derive(Clone, Debug)]
enum Shape {
    Block(u64),
    Seq(Box<Shape>, Box<Shape>),
    Pipe(Box<Shape>, Box<Shape>),
    TPool(usize, Box<Shape>),
}

impl Shape {
    fn total(&self) -> u64 {
        match self {
            Shape::Block(k) => *k,
            Shape::Seq(a, b) | Shape::Pipe(a, b) => a.total() + b.total(),
            Shape::TPool(_, t) => t.total(),
        }
    }
    fn build(&self, calls: &Arc<AtomicUsize>) -> Pattern<u64, u64> {
        match self {
            Shape::Block(k) => {
                let (k, calls) = (*k, Arc::clone(calls));
                block(format!("add{k}"), move |v: u64| {
                    calls.fetch_add(1, Ordering::Relaxed);
                    v + k
                })
            }
            Shape::Seq(a, b) => seq(a.build(calls), b.build(calls)),
            Shape::Pipe(a, b) => pipe(a.build(calls), b.build(calls)),
            Shape::TPool(n, t) => tpool(*n, t.build(calls)),
        }
    }
    fn blocks(&self) -> usize {
        match self {
            Shape::Block(_) => 1,
            Shape::Seq(a, b) | Shape::Pipe(a, b) => a.blocks() + b.blocks(),
            Shape::TPool(_, t) => t.blocks(),
        }
    }
}

fn shape_strategy() -> impl Strategy<Value = Shape> {
    let leaf = (1u64..5).prop_map(Shape::Block);
    leaf.prop_recursive(3, 8, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Shape::Seq(Box::new(a), Box::new(b))),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Shape::Pipe(Box::new(a), Box::new(b))),
            (1usize..4, inner).prop_map(|(n, t)| Shape::TPool(n, Box::new(t))),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Any nesting runs every element through every block exactly once and restores the
    /// input order, under both drivers; a seq around a parallel pattern runs in phases.
    #[test]
    fn random_nestings_process_each_element_once(shape in shape_strategy(), n in 0u64..120, cap in 1usize..4) {
        let calls = Arc::new(AtomicUsize::new(0));
        let cfg = Config { capacity: cap, pin: false, ..Config::default() };
        let program = Program::with_config(shape.build(&calls), cfg).unwrap();
        let add = shape.total();
        let out = program.run(0..n).unwrap();
        prop_assert_eq!(out, (0..n).map(|v| v + add).collect::<Vec<_>>());
        let out = program.run_stream((0..n).collect()).unwrap().outputs;
        prop_assert_eq!(out, (0..n).map(|v| v + add).collect::<Vec<_>>());
        prop_assert_eq!(calls.load(Ordering::Relaxed), 2 * n as usize * shape.blocks());
    }
}

/// An input iterator that counts how many elements were taken from it.
struct Counting<I> {
    inner: I,
    taken: Arc<AtomicUsize>,
}

impl<I: Iterator> Iterator for Counting<I> {
    type Item = I::Item;
    fn next(&mut self) -> Option<I::Item> {
        let v = self.inner.next();
        if v.is_some() {
            self.taken.fetch_add(1, Ordering::SeqCst);
        }
        v
    }
}

/// The shape with a block that panics on element `bad` as its middle stage (the "block"
/// shape keeps only its first stage: the faulty block goes there).
fn with_faulty_block(name: &str, shape: &Shaper, bad: u64) -> Program<(u64, u64), (u64, u64)> {
    let faulty = block("faulty", move |(id, v): (u64, u64)| {
        if id == bad {
            panic!("element {id} is cursed");
        }
        (id, v)
    });
    let id = || block("id", |e: (u64, u64)| e);
    if name == "block" {
        Program::new(faulty).unwrap()
    } else {
        Program::new(shape(id(), faulty, id())).unwrap()
    }
}

#[test]
fn a_panicking_block_surfaces_with_every_element_accounted_for() {
    const BAD: u64 = 137;
    for (name, shape) in shapes() {
        let program = with_faulty_block(name, &shape, BAD);
        let taken = Arc::new(AtomicUsize::new(0));
        // An endless input: the run can only end because the fault stops the feeding.
        // (How many elements get in before the stop is a race with the panicking thread,
        // which may spend milliseconds printing a backtrace; so no bound is asserted
        // beyond the look-ahead.) A run that never stopped would hang: the watchdog turns
        // that into a failure.
        let input = Counting {
            inner: (0..).map(|i| (i, i)),
            taken: Arc::clone(&taken),
        };
        let err = within_minutes(2, name, move || program.run(input)).expect_err(name);
        assert_eq!(err.faults.len(), 1, "{name}");
        assert_eq!(err.faults[0].seq, BAD);
        assert_eq!(err.faults[0].stage, "faulty");
        assert!(err.faults[0].message.contains("cursed"));
        assert!(err.to_string().contains("panicked on element 137"), "{err}");
        // Accounting: delivered + failed == fed, no duplicates.
        assert_eq!(err.delivered.len() as u64 + 1, err.fed, "{name}");
        let ids: HashSet<u64> = err.delivered.iter().map(|(s, _)| *s).collect();
        assert_eq!(ids.len(), err.delivered.len(), "{name}: no duplicates");
        assert!(!ids.contains(&BAD));
        assert!(ids.iter().all(|&s| s < err.fed));
        for (s, (id, _)) in &err.delivered {
            assert_eq!(s, id, "delivered element carries its own position");
        }
        assert!(err.fed > BAD);
        // At most the driver's one-element look-ahead is read but not fed.
        let taken = taken.load(Ordering::SeqCst) as u64;
        assert!(
            taken == err.fed || taken == err.fed + 1,
            "{name}: {taken} vs {}",
            err.fed
        );
    }
}

/// Run `f` on its own thread and fail the test if it has not returned within `minutes`
/// (a hang detector with a margin no load makes a correct run reach, not a timing check).
fn within_minutes<T: Send + 'static>(
    minutes: u64,
    what: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(std::time::Duration::from_secs(60 * minutes))
        .unwrap_or_else(|e| panic!("{what}: no answer within {minutes} min ({e})"))
}

#[test]
fn every_element_panicking_still_returns() {
    let p = Program::new(tpool(2, block("boom", |_: u32| -> u32 { panic!("boom") }))).unwrap();
    let err = p.run(0..50u32).unwrap_err();
    assert!(!err.faults.is_empty());
    assert_eq!(
        err.faults.len() as u64 + err.delivered.len() as u64,
        err.fed
    );
}

#[test]
fn backpressure_bounds_the_elements_in_flight() {
    // A fast producer (a lazy iterator) and a slow last stage: with bounded queues the
    // number of elements generated but not yet finished stays under a bound set by the
    // queue capacities, whatever the speeds.
    const N: usize = 400;
    let capacity = 3;
    let generated = Arc::new(AtomicUsize::new(0));
    let finished = Arc::new(AtomicUsize::new(0));
    let max_in_flight = Arc::new(AtomicUsize::new(0));
    let (g, f, m) = (
        Arc::clone(&generated),
        Arc::clone(&finished),
        Arc::clone(&max_in_flight),
    );
    let slow = block("slow", move |v: Vec<u8>| {
        let in_flight = g.load(Ordering::SeqCst) - f.load(Ordering::SeqCst);
        m.fetch_max(in_flight, Ordering::SeqCst);
        // Makes the consumer slower than the producer so an unbounded queue would fill up;
        // correctness does not depend on it.
        std::thread::sleep(std::time::Duration::from_micros(200));
        f.fetch_add(1, Ordering::SeqCst);
        v.len()
    });
    let p = Program::with_config(
        pipe(tpool(2, block("fast", |v: Vec<u8>| v)), slow),
        Config {
            capacity,
            pin: false,
            ..Config::default()
        },
    )
    .unwrap();
    let g2 = Arc::clone(&generated);
    let input = (0..N).map(move |_| {
        g2.fetch_add(1, Ordering::SeqCst);
        vec![0u8; 1024]
    });
    let out = p.run(input).unwrap();
    assert_eq!(out.len(), N);
    // Queues: input, between stages, output (3 × capacity); threads holding one element
    // each: 2 fast workers + the slow one; one element pending in the driver.
    let bound = 3 * capacity + 3 + 1;
    let seen = max_in_flight.load(Ordering::SeqCst);
    assert!(seen <= bound, "in flight {seen} > bound {bound}");
}

#[test]
fn elements_in_flight_count_stream_parallelism_not_threads() {
    let b = || block("b", |v: u8| v);
    assert_eq!(b().in_flight(), 1);
    assert_eq!(seq(b(), b()).in_flight(), 1);
    assert_eq!(pipe(b(), b()).in_flight(), 2);
    assert_eq!(tpool(2, b()).in_flight(), 2);
    assert_eq!(tpool(2, pipe(b(), b())).in_flight(), 4);
    assert_eq!(pipe(tpool(3, b()), b()).in_flight(), 4);
    // A MapReduce job works on one element with all its threads.
    let mr = || {
        mapreduce(
            3,
            "m",
            |v: &u8| vec![*v as u64],
            Reduce::per_key("r", |_, v: &[u64]| v.iter().sum()),
        )
    };
    assert_eq!((mr().threads(), mr().in_flight()), (3, 1));
    assert_eq!(tpool(2, mr()).in_flight(), 2);
}

#[test]
fn zero_threads_are_rejected() {
    let b = || block("b", |v: u8| v);
    assert!(matches!(
        Program::new(tpool(0, b())),
        Err(BuildError::ZeroThreads { .. })
    ));
    assert!(matches!(
        Program::new(pipe(b(), tpool(0, b()))),
        Err(BuildError::ZeroThreads { .. })
    ));
    assert!(matches!(
        Program::new(seq(b(), tpool(0, b()))),
        Err(BuildError::ZeroThreads { .. })
    ));
    let mr = mapreduce(
        0,
        "m",
        |v: &u8| vec![*v as u64],
        Reduce::per_key("r", |_, v: &[u64]| v.iter().sum()),
    );
    assert!(matches!(
        Program::new(mr),
        Err(BuildError::ZeroThreads { .. })
    ));
}

#[test]
fn mapreduce_both_styles_agree_with_a_sequential_count() {
    let inputs: Vec<Vec<u32>> = vec![(0..1000).collect(), (0..7).collect(), vec![]];
    let map = |v: &u32| {
        let mut h = vec![0u64; 10];
        h[(*v % 10) as usize] += 1;
        h
    };
    for threads in [1, 2, 5] {
        let pw = mapreduce(
            threads,
            "digit",
            map,
            Reduce::pairwise("add", |a: &mut [u64], b: &[u64]| {
                a.iter_mut().zip(b).for_each(|(x, y)| *x += y)
            }),
        );
        let pk = mapreduce(
            threads,
            "digit",
            map,
            Reduce::per_key("sum", |_, v: &[u64]| v.iter().sum()),
        );
        for p in [pw, pk] {
            let program = Program::new(tpool(2, p)).unwrap();
            let out = program.run(inputs.clone()).unwrap();
            assert_eq!(out[0], vec![100u64; 10]);
            let mut seven = vec![0u64; 10];
            seven[..7].iter_mut().for_each(|v| *v = 1);
            assert_eq!(out[1], seven);
            assert!(out[2].iter().all(|&v| v == 0));
        }
    }
}

#[test]
fn mapreduce_panic_in_map_or_reduce_is_an_error() {
    let bad_map = mapreduce(
        2,
        "badmap",
        |v: &u32| {
            if *v == 5 {
                panic!("bad pixel");
            }
            vec![1u64]
        },
        Reduce::per_key("sum", |_, v: &[u64]| v.iter().sum()),
    );
    let err = Program::new(bad_map)
        .unwrap()
        .run(vec![vec![1, 2, 3], (0..10).collect(), vec![4]])
        .unwrap_err();
    assert_eq!(err.faults[0].stage, "badmap");
    assert_eq!(err.faults[0].seq, 1);
    assert_eq!(err.delivered.len() + err.faults.len(), err.fed as usize);

    let bad_reduce = mapreduce(
        3,
        "m",
        |_: &u32| vec![1u64, 2],
        Reduce::pairwise("badadd", |_: &mut [u64], _: &[u64]| panic!("overflow")),
    );
    let err = Program::new(bad_reduce)
        .unwrap()
        .run(vec![(0..100).collect::<Vec<u32>>()])
        .unwrap_err();
    assert_eq!(err.faults[0].stage, "badadd");
}

#[test]
fn dropping_a_program_shuts_its_mapreduce_threads_down() {
    let token = Arc::new(());
    let t = Arc::clone(&token);
    let mr = mapreduce(
        3,
        "m",
        move |v: &u32| {
            let _keep = &t;
            vec![*v as u64]
        },
        Reduce::per_key("sum", |_, v: &[u64]| v.iter().sum()),
    );
    let program = Program::new(mr).unwrap();
    assert_eq!(program.run(vec![vec![1, 2, 3]]).unwrap(), vec![vec![6]]);
    assert_eq!(Arc::strong_count(&token), 2);
    drop(program);
    // The pool joined its workers and dropped every job, so only our handle is left.
    assert_eq!(Arc::strong_count(&token), 1);
}

/// Wait (up to a generous deadline, reached only on failure) until `n` callers are
/// inside at once; returns whether they were. Every caller leaves only once all `n` have
/// seen each other, so no fixed pause is involved.
fn meet_n(active: &AtomicUsize, seen: &AtomicUsize, n: usize) -> bool {
    use std::time::{Duration, Instant};
    active.fetch_add(1, Ordering::SeqCst);
    let deadline = Instant::now() + Duration::from_secs(20);
    while active.load(Ordering::SeqCst) < n && Instant::now() < deadline {
        std::thread::yield_now();
    }
    let met = active.load(Ordering::SeqCst) >= n;
    if met {
        seen.fetch_add(1, Ordering::SeqCst);
    }
    while seen.load(Ordering::SeqCst) < n && Instant::now() < deadline {
        std::thread::yield_now();
    }
    met
}

#[test]
fn every_mapreduce_job_runs_on_as_many_threads_as_its_term_says() {
    // mapreduce(3): the three maps of one job are inside at once. tpool(2, mapreduce(2)):
    // both jobs at once, each on two threads: four maps at once, so the helpers are per
    // caller, not shared. Pinned mapreduce(2) (the caller maps too, with one helper): two.
    let cores = core_affinity::get_core_ids().map_or(0, |c| c.len());
    let mut cases = vec![(1usize, 3usize, false), (2, 2, false)];
    if cores >= 2 {
        cases.push((1, 2, true));
    }
    for (pool, threads, pin) in cases {
        let active = Arc::new(AtomicUsize::new(0));
        let seen = Arc::new(AtomicUsize::new(0));
        let ids = Arc::new(Mutex::new(Vec::new()));
        let (a, s, i) = (Arc::clone(&active), Arc::clone(&seen), Arc::clone(&ids));
        let all = pool * threads;
        let mr = mapreduce(
            threads,
            "meet",
            move |v: &u32| {
                i.lock().unwrap().push(std::thread::current().id());
                vec![u64::from(meet_n(&a, &s, all)), u64::from(*v)]
            },
            Reduce::per_key("sum", |_, v: &[u64]| v.iter().sum()),
        );
        let jobs: Vec<Vec<u32>> = (0..pool).map(|_| (0..threads as u32).collect()).collect();
        let sum = (0..threads as u64).sum::<u64>();
        let config = Config {
            pin,
            ..Config::default()
        };
        let program = Program::with_config(tpool(pool, mr), config).unwrap();
        let out = program.run(jobs).unwrap();
        assert_eq!(
            out,
            vec![vec![threads as u64, sum]; pool],
            "{pool} x {threads}"
        );
        let mut ids = ids.lock().unwrap().clone();
        ids.sort_by_key(|id| format!("{id:?}"));
        ids.dedup();
        assert_eq!(ids.len(), all);
    }
    // mapreduce(1): every input of every job is mapped by the one thread running the node.
    let ids = Arc::new(Mutex::new(Vec::new()));
    let i = Arc::clone(&ids);
    let mr = mapreduce(
        1,
        "who",
        move |v: &u32| {
            i.lock().unwrap().push(std::thread::current().id());
            vec![u64::from(*v)]
        },
        Reduce::pairwise("add", |a: &mut [u64], b: &[u64]| a[0] += b[0]),
    );
    let out = Program::new(mr)
        .unwrap()
        .run(vec![vec![1, 2, 3], vec![4, 5]])
        .unwrap();
    assert_eq!(out, vec![vec![6], vec![9]]);
    let ids = ids.lock().unwrap();
    assert_eq!(ids.len(), 5);
    assert!(ids.iter().all(|id| *id == ids[0]));
}

// ---------------------------------------------------------------------------------------
// term-driven path

fn k(name: &str) -> Plan {
    Plan::Kernel(name.into())
}

fn ints(d: &Data) -> &Vec<i32> {
    match d {
        Data::Ints(v) => v,
        other => panic!("{other:?}"),
    }
}

#[test]
fn plans_run_the_seed_kernels() {
    let reg = Registry::builtin();
    let cfg = Inputs::default();
    let plan = Plan::TPool(2, Box::new(Plan::Seq(vec![k("qsort"), k("inc")])));
    let built = plan.build(&reg, Config::default()).unwrap();
    assert_eq!(built.source_kernel, "qsort");
    let input = stream_inputs(&reg, "qsort", 500, 6, &cfg, u128::MAX).unwrap();
    // The stream cycles through distinct inputs (no two alike).
    assert_ne!(ints(&input[0]), ints(&input[1]));
    let expected: Vec<Vec<i32>> = input
        .iter()
        .map(|d| {
            let mut e = ints(d).clone();
            e.sort();
            e.iter_mut().for_each(|v| *v += 10);
            e
        })
        .collect();
    let out = built.program.run(input).unwrap();
    assert_eq!(out.len(), 6);
    for (o, e) in out.iter().zip(&expected) {
        assert_eq!(ints(o), e);
    }
    let pipe3 = Plan::Pipe(vec![k("inc"), k("nop"), k("qsort")]);
    assert_eq!(pipe3.to_string(), "pipe(inc, nop, qsort)");
    assert_eq!(pipe3.threads(), 3);
    let out = pipe3
        .build(&reg, Config::default())
        .unwrap()
        .program
        .run(stream_inputs(&reg, "inc", 300, 3, &cfg, u128::MAX).unwrap())
        .unwrap();
    assert!(ints(&out[2]).windows(2).all(|w| w[0] <= w[1]));
}

#[test]
fn mapreduce_plans_count_the_image_histogram_both_ways() {
    let reg = Registry::builtin();
    let cfg = Inputs::with_image(ImageSize::Small);
    let one = histogram(&ImageSize::Small.image());
    for reduce in ["reduce_pairwise", "reduce_per_key"] {
        let plan = Plan::MapReduce {
            map: "map".into(),
            reduce: reduce.into(),
            nodes: 1,
            threads: 2,
            reduction: None,
        };
        let built = plan.build(&reg, Config::default()).unwrap();
        let jobs = stream_inputs(&reg, &built.source_kernel, 5, 2, &cfg, u128::MAX).unwrap();
        let out = built.program.run(jobs).unwrap();
        for o in out {
            let Data::Counts(h) = o else { panic!() };
            assert_eq!(h, one.iter().map(|v| v * 5).collect::<Vec<_>>(), "{reduce}");
        }
    }
}

#[test]
fn a_reduction_variant_must_fit_the_reduce_kernel() {
    use perfcompose_core::term::Reduction;
    let reg = Registry::builtin();
    let mr = |reduce: &str, reduction| Plan::MapReduce {
        map: "map".into(),
        reduce: reduce.into(),
        nodes: 1,
        threads: 1,
        reduction: Some(reduction),
    };
    assert!(mr("reduce_pairwise", Reduction::Pairwise)
        .build(&reg, Config::default())
        .is_ok());
    for r in [Reduction::Local, Reduction::Global] {
        assert!(mr("reduce_per_key", r)
            .build(&reg, Config::default())
            .is_ok());
        let e = mr("reduce_pairwise", r)
            .build(&reg, Config::default())
            .err()
            .expect("rejected");
        assert!(e.to_string().contains("use reduction=pairwise"), "{e}");
    }
    let e = mr("reduce_per_key", Reduction::Pairwise)
        .build(&reg, Config::default())
        .err()
        .expect("rejected");
    assert!(e.to_string().contains("reduces per key"), "{e}");
    assert_eq!(
        mr("reduce_per_key", Reduction::Global).to_string(),
        "mapreduce(map, reduce_per_key, nodes=1, threads=1, reduction=global)"
    );
}

#[test]
fn bad_plans_are_rejected_with_reasons() {
    let reg = Registry::builtin();
    let build = |p: Plan| p.build(&reg, Config::default()).err().expect("rejected");
    let e = build(k("qsrot"));
    assert!(matches!(e, BuildError::UnknownKernel { .. }));
    assert!(e.hint().unwrap().contains("qsort"));
    assert!(matches!(build(k("map")), BuildError::WrongRole { .. }));
    assert!(matches!(
        build(Plan::TPool(0, Box::new(k("inc")))),
        BuildError::ZeroThreads { .. }
    ));
    let mr = |nodes, reduce: &str| Plan::MapReduce {
        map: "map".into(),
        reduce: reduce.into(),
        nodes,
        threads: 2,
        reduction: None,
    };
    assert!(matches!(
        build(mr(2, "reduce_per_key")),
        BuildError::Unsupported { .. }
    ));
    assert!(matches!(build(mr(1, "inc")), BuildError::WrongRole { .. }));
    let e = build(Plan::Pipe(vec![mr(1, "reduce_pairwise"), k("inc")]));
    assert!(matches!(e, BuildError::TypeMismatch { .. }), "{e}");
    assert!(matches!(
        build(Plan::Unsupported {
            what: "dc(a, b, c, procs=4, exchange=e)".into(),
            why: "runs on processes".into()
        }),
        BuildError::Unsupported { .. }
    ));
    let e = build(Plan::Seq(vec![
        Plan::Pipe(vec![k("inc"), k("nop")]),
        Plan::TPool(0, Box::new(k("inc"))),
    ]));
    assert!(matches!(e, BuildError::ZeroThreads { .. }), "{e}");
}

#[test]
fn user_kernels_join_the_registry() {
    let mut reg = Registry::builtin();
    reg.register_block("negate", "negate every element", |d| match d {
        Data::Ints(mut v) => {
            v.iter_mut().for_each(|e| *e = -*e);
            Data::Ints(v)
        }
        other => other,
    });
    let plan = Plan::Pipe(vec![k("negate"), k("qsort")]);
    let built = plan.build(&reg, Config::default()).unwrap();
    let out = built.program.run(vec![Data::Ints(vec![3, 1, 2])]).unwrap();
    assert_eq!(ints(&out[0]), &vec![-3, -2, -1]);
}

#[test]
fn stream_inputs_refuse_sizes_beyond_the_memory_limit() {
    let reg = Registry::builtin();
    let err = stream_inputs(&reg, "qsort", 1 << 40, 16, &Inputs::default(), 1 << 30).unwrap_err();
    assert!(err.to_string().contains("more than"), "{err}");
}

#[test]
fn task_pool_workers_and_pipeline_stages_really_run_at_once() {
    // Each element waits (up to a generous deadline, only reached on failure) until
    // another element is inside a block at the same time. A serialised pool or pipeline
    // would never see two at once.
    use std::time::{Duration, Instant};
    fn meet(active: &AtomicUsize, seen: &AtomicUsize) {
        active.fetch_add(1, Ordering::SeqCst);
        let deadline = Instant::now() + Duration::from_secs(20);
        while active.load(Ordering::SeqCst) < 2 && Instant::now() < deadline {
            std::thread::yield_now();
        }
        if active.load(Ordering::SeqCst) >= 2 {
            seen.fetch_add(1, Ordering::SeqCst);
        }
        // Leave only once the partner has seen us too (a fixed pause here would fail
        // whenever the partner was descheduled for longer than the pause).
        while seen.load(Ordering::SeqCst) < 2 && Instant::now() < deadline {
            std::thread::yield_now();
        }
        active.fetch_sub(1, Ordering::SeqCst);
    }
    let active = Arc::new(AtomicUsize::new(0));
    let seen = Arc::new(AtomicUsize::new(0));
    let (a, s) = (Arc::clone(&active), Arc::clone(&seen));
    let pool = Program::new(tpool(
        2,
        block("meet", move |v: u32| {
            meet(&a, &s);
            v
        }),
    ))
    .unwrap();
    assert_eq!(pool.run(0..2u32).unwrap(), vec![0, 1]);
    assert_eq!(
        seen.load(Ordering::SeqCst),
        2,
        "both workers were busy at once"
    );

    let active = Arc::new(AtomicUsize::new(0));
    let seen = Arc::new(AtomicUsize::new(0));
    let second = block("second", {
        let (a, s) = (Arc::clone(&active), Arc::clone(&seen));
        move |v: u32| {
            if v == 0 {
                meet(&a, &s);
            }
            v
        }
    });
    // Element 0 waits in the second stage until element 1 is in the first.
    let p = Program::new(pipe(
        block("first", {
            let (a, s) = (Arc::clone(&active), Arc::clone(&seen));
            move |v: u32| {
                if v == 1 {
                    meet(&a, &s);
                }
                v
            }
        }),
        second,
    ))
    .unwrap();
    assert_eq!(p.run(0..2u32).unwrap(), vec![0, 1]);
    assert_eq!(
        seen.load(Ordering::SeqCst),
        2,
        "both stages were busy at once"
    );
}

#[test]
fn the_stream_driver_delivers_every_element_once_in_order_in_every_shape() {
    // `run_stream` (the measurement driver: stream-sized outer queues, a caller woken by
    // the workers of the last queue once they have put every output there) must give
    // exactly what `run` gives, for long and for tiny streams. In debug builds it asserts
    // that those workers counted every output, so this checks that every shape counts.
    for n in [0u64, 1, 3, 700] {
        for (name, shape) in shapes() {
            let seen: Vec<_> = (0..3).map(|_| Arc::new(Mutex::new(Vec::new()))).collect();
            let p = shape(
                counted("a", 1, &seen[0]),
                counted("b", 10, &seen[1]),
                counted("c", 100, &seen[2]),
            );
            let program = Program::new(p).unwrap();
            let m = program
                .run_stream((0..n).map(|i| (i, i)).collect())
                .unwrap();
            let add = if name == "block" { 1 } else { 111 };
            assert_eq!(
                m.outputs,
                (0..n).map(|i| (i, i + add)).collect::<Vec<_>>(),
                "{name}, {n} elements"
            );
            assert_each_once(&seen[0], n);
        }
    }
}

#[test]
fn the_stream_driver_reports_a_panicking_block_with_every_element_accounted_for() {
    const N: u64 = 500;
    const BAD: u64 = 77;
    for (name, shape) in shapes() {
        let program = with_faulty_block(name, &shape, BAD);
        let err = program
            .run_stream((0..N).map(|i| (i, i)).collect())
            .expect_err(name);
        assert_eq!(err.faults.len(), 1, "{name}");
        assert_eq!(err.faults[0].seq, BAD);
        assert_eq!(err.delivered.len() as u64 + 1, err.fed, "{name}");
        let ids: HashSet<u64> = err.delivered.iter().map(|(s, _)| *s).collect();
        assert_eq!(ids.len(), err.delivered.len(), "{name}: no duplicates");
        assert!(!ids.contains(&BAD));
    }
}

// ---------------------------------------------------------------------------------------
// seq of stream networks: phases

/// Nestings with a `seq` around a stream network (it runs in phases), over three stages;
/// every one adds the three stages' increments.
fn phased_shapes() -> Vec<(&'static str, Shaper)> {
    vec![
        ("seq(pipe(a, b), c)", Box::new(|a, b, c| seq(pipe(a, b), c))),
        (
            "seq(tpool(2, a), seq(b, c))",
            Box::new(|a, b, c| seq(tpool(2, a), seq(b, c))),
        ),
        ("seq(a, pipe(b, c))", Box::new(|a, b, c| seq(a, pipe(b, c)))),
        (
            "tpool(2, seq(pipe(a, b), c))",
            Box::new(|a, b, c| tpool(2, seq(pipe(a, b), c))),
        ),
        (
            "pipe(seq(tpool(2, a), b), c)",
            Box::new(|a, b, c| pipe(seq(tpool(2, a), b), c)),
        ),
        (
            "seq(seq(tpool(2, a), b), tpool(3, c))",
            Box::new(|a, b, c| seq(seq(tpool(2, a), b), tpool(3, c))),
        ),
        (
            "pipe(a, tpool(2, seq(tpool(2, b), c)))",
            Box::new(|a, b, c| pipe(a, tpool(2, seq(tpool(2, b), c)))),
        ),
    ]
}

/// Threads busy at once and elements in flight of [`phased_shapes`], in order.
const PHASED_THREADS: [(usize, usize); 7] =
    [(2, 2), (2, 2), (2, 2), (4, 4), (3, 3), (3, 3), (5, 5)];

#[test]
fn a_seq_of_stream_networks_runs_and_counts_its_threads_phase_by_phase() {
    let b = || block("b", |v: u8| v);
    for ((name, shape), (threads, in_flight)) in phased_shapes().into_iter().zip(PHASED_THREADS) {
        let id = || block("id", |e: (u64, u64)| e);
        let p = shape(id(), id(), id());
        assert!(!p.callable(), "{name}");
        assert_eq!((p.threads(), p.in_flight()), (threads, in_flight), "{name}");
        assert!(Program::new(p).is_ok(), "{name}");
    }
    // A seq of callable parts stays callable: one thread, one element at a time.
    assert!(seq(b(), seq(b(), b())).callable());
    assert_eq!(seq(b(), b()).threads(), 1);
    assert_eq!(seq(pipe(b(), b()), tpool(3, b())).threads(), 3);
    assert_eq!(
        seq(pipe(b(), b()), tpool(3, b())).describe(),
        "seq(pipe(b, b), tpool(3, b))"
    );
}

#[test]
fn phased_seqs_deliver_every_element_once_in_order_under_both_drivers() {
    for n in [0u64, 1, 3, 500] {
        for (name, shape) in phased_shapes() {
            for stream in [false, true] {
                let seen: Vec<_> = (0..3).map(|_| Arc::new(Mutex::new(Vec::new()))).collect();
                let p = shape(
                    counted("a", 1, &seen[0]),
                    counted("b", 10, &seen[1]),
                    counted("c", 100, &seen[2]),
                );
                let cfg = Config {
                    capacity: 3,
                    ..Config::default()
                };
                let program = Program::with_config(p, cfg).unwrap();
                let input = (0..n).map(|i| (i, i));
                let out = within_minutes(2, name, move || {
                    if stream {
                        program.run_stream(input.collect()).map(|m| m.outputs)
                    } else {
                        program.run(input)
                    }
                })
                .unwrap();
                assert_eq!(
                    out,
                    (0..n).map(|i| (i, i + 111)).collect::<Vec<_>>(),
                    "{name}, {n} elements, stream driver: {stream}"
                );
                for s in &seen {
                    assert_each_once(s, n);
                }
            }
        }
    }
}

#[test]
fn a_phase_starts_only_once_the_phase_before_it_has_seen_the_whole_stream() {
    // Every call logs (stage, element); in a phased seq at the top, every call of the
    // first phase comes before every call of the next one.
    const N: u64 = 300;
    let log = Arc::new(Mutex::new(Vec::<(char, u64)>::new()));
    let logged = |stage: char, add: u64| {
        let log = Arc::clone(&log);
        block(stage.to_string(), move |v: u64| {
            log.lock().unwrap().push((stage, v));
            v + add
        })
    };
    let p = seq(
        pipe(tpool(2, logged('a', 1)), logged('b', 10)),
        seq(tpool(3, logged('c', 100)), logged('d', 1000)),
    );
    assert_eq!(p.threads(), 3);
    let program = Program::new(p).unwrap();
    for stream in [false, true] {
        log.lock().unwrap().clear();
        let out = if stream {
            program.run_stream((0..N).collect()).unwrap().outputs
        } else {
            program.run(0..N).unwrap()
        };
        assert_eq!(out, (0..N).map(|v| v + 1111).collect::<Vec<_>>());
        let log = log.lock().unwrap();
        assert_eq!(log.len() as u64, 4 * N);
        let phase = |s: char| {
            if s == 'a' || s == 'b' {
                0
            } else if s == 'c' {
                1
            } else {
                2
            }
        };
        assert!(
            log.windows(2).all(|w| phase(w[0].0) <= phase(w[1].0)),
            "stream driver: {stream}: a call of an earlier phase after one of a later phase"
        );
    }
}

#[test]
fn a_panicking_block_in_any_phase_surfaces_with_every_element_accounted_for() {
    const N: u64 = 400;
    const BAD: u64 = 137;
    for (name, shape) in phased_shapes() {
        // The faulty block in each of the three places.
        for place in 0..3 {
            let faulty = block("faulty", move |(id, v): (u64, u64)| {
                if id == BAD {
                    panic!("element {id} is cursed");
                }
                (id, v)
            });
            let id = || block("id", |e: (u64, u64)| e);
            let p = match place {
                0 => shape(faulty, id(), id()),
                1 => shape(id(), faulty, id()),
                _ => shape(id(), id(), faulty),
            };
            let program = Program::new(p).unwrap();
            for stream in [false, true] {
                let program = program.clone();
                let err = within_minutes(2, name, move || {
                    let input = (0..N).map(|i| (i, i));
                    if stream {
                        program.run_stream(input.collect()).map(|m| m.outputs)
                    } else {
                        program.run(input)
                    }
                })
                .expect_err(name);
                let what = format!("{name}, faulty block {place}, stream driver: {stream}");
                assert_eq!(err.faults.len(), 1, "{what}");
                assert_eq!(err.faults[0].seq, BAD, "{what}");
                assert_eq!(err.faults[0].stage, "faulty", "{what}");
                assert!(err.to_string().contains("panicked on element 137"), "{err}");
                assert_eq!(err.delivered.len() as u64 + 1, err.fed, "{what}");
                let ids: HashSet<u64> = err.delivered.iter().map(|(s, _)| *s).collect();
                assert_eq!(ids.len(), err.delivered.len(), "{what}: no duplicates");
                assert!(!ids.contains(&BAD), "{what}");
                for (s, (id, _)) in &err.delivered {
                    assert_eq!(s, id, "{what}: delivered element carries its own position");
                }
            }
        }
    }
}

#[test]
fn pinned_phased_seqs_compute_the_same() {
    let cfg = Config {
        capacity: 2,
        pin: true,
        ..Config::default()
    };
    for (name, shape) in phased_shapes() {
        let add = |k: u64| block(format!("add{k}"), move |(i, v): (u64, u64)| (i, v + k));
        let program = Program::with_config(shape(add(1), add(10), add(100)), cfg.clone()).unwrap();
        for stream in [false, true] {
            let input = (0..200u64).map(|i| (i, 2 * i));
            let out = if stream {
                program.run_stream(input.collect()).unwrap().outputs
            } else {
                program.run(input).unwrap()
            };
            assert_eq!(
                out,
                (0..200u64).map(|i| (i, 2 * i + 111)).collect::<Vec<_>>(),
                "{name}, stream driver: {stream}"
            );
        }
    }
}

#[test]
fn a_mapreduce_and_a_pipeline_run_as_phases_of_one_seq() {
    let count = || {
        mapreduce(
            2,
            "digit",
            |v: &u32| {
                let mut h = vec![0u64; 10];
                h[(*v % 10) as usize] += 1;
                h
            },
            Reduce::per_key("sum", |_, vals: &[u64]| vals.iter().sum()),
        )
    };
    let total = || block("total", |h: Vec<u64>| h.iter().sum::<u64>());
    let double = || block("double", |v: u64| 2 * v);
    let jobs: Vec<Vec<u32>> = (0..20).map(|j| (0..j * 7).collect()).collect();
    let expected: Vec<u64> = jobs.iter().map(|j| 2 * j.len() as u64).collect();
    for p in [
        seq(count(), pipe(total(), double())),
        seq(tpool(2, count()), seq(total(), double())),
        pipe(
            seq(count(), pipe(total(), block("id", |v: u64| v))),
            double(),
        ),
    ] {
        let name = p.describe();
        assert!(!p.callable(), "{name}");
        let program = Program::new(p).unwrap();
        assert_eq!(program.run(jobs.clone()).unwrap(), expected, "{name}");
        assert_eq!(
            program.run_stream(jobs.clone()).unwrap().outputs,
            expected,
            "{name}"
        );
    }
}

#[test]
fn plans_with_a_seq_of_stream_networks_run_in_phases() {
    let reg = Registry::builtin();
    let cfg = Inputs::default();
    let pipe2 = || Plan::Pipe(vec![k("inc"), k("nop")]);
    let cases = [
        // (plan, threads, the pattern it builds)
        (
            Plan::Seq(vec![pipe2(), k("qsort")]),
            2,
            "seq(pipe(inc, nop), qsort)",
        ),
        (
            Plan::Seq(vec![Plan::TPool(2, Box::new(k("qsort"))), k("inc")]),
            2,
            "seq(tpool(2, qsort), inc)",
        ),
        (
            Plan::TPool(2, Box::new(Plan::Seq(vec![pipe2(), k("inc")]))),
            4,
            "tpool(2, seq(pipe(inc, nop), inc))",
        ),
        (
            Plan::Pipe(vec![
                Plan::Seq(vec![Plan::TPool(2, Box::new(k("inc"))), k("nop")]),
                k("inc"),
            ]),
            3,
            "pipe(seq(tpool(2, inc), nop), inc)",
        ),
        // Consecutive callable parts of an n-ary seq share one phase.
        (
            Plan::Seq(vec![k("inc"), k("qsort"), pipe2(), k("inc"), k("nop")]),
            2,
            "seq(seq(seq(inc, qsort), pipe(inc, nop)), seq(inc, nop))",
        ),
    ];
    for (plan, threads, built_as) in cases {
        assert!(!plan.callable(), "{plan}");
        assert_eq!(plan.threads(), threads, "{plan}");
        let built = plan.build(&reg, Config::default()).unwrap();
        assert_eq!(built.program.pattern().describe(), built_as);
        assert_eq!(built.program.pattern().threads(), threads, "{plan}");
        // `inc` adds 10 (wrapping); sorting and adding commute here.
        let incs = 10 * plan.kernels().iter().filter(|k| *k == "inc").count() as i32;
        let sorts = plan.kernels().iter().any(|k| k == "qsort");
        // Deterministic: two calls give the same stream.
        let input = || stream_inputs(&reg, &built.source_kernel, 300, 9, &cfg, u128::MAX).unwrap();
        let expected: Vec<Vec<i32>> = input()
            .iter()
            .map(|d| {
                let mut e = ints(d).clone();
                if sorts {
                    e.sort();
                }
                e.iter_mut().for_each(|v| *v = v.wrapping_add(incs));
                e
            })
            .collect();
        let out = built.program.run(input()).unwrap();
        assert!(
            out.iter().map(ints).eq(&expected),
            "{plan}: producer/consumer"
        );
        let out = built.program.run_stream(input()).unwrap().outputs;
        assert!(out.iter().map(ints).eq(&expected), "{plan}: stream driver");
    }
    // A seq of callable parts is built as before.
    let callable = Plan::Seq(vec![k("inc"), k("nop"), k("qsort")]);
    assert!(callable.callable());
    let built = callable.build(&reg, Config::default()).unwrap();
    assert_eq!(
        built.program.pattern().describe(),
        "seq(seq(inc, nop), qsort)"
    );
    assert!(built.program.pattern().callable());
    // Where the phase boundaries are.
    let parts = [k("inc"), k("qsort"), pipe2(), k("inc"), k("nop")];
    let boundaries: Vec<bool> = (0..parts.len())
        .map(|i| Plan::phase_boundary(&parts, i))
        .collect();
    assert_eq!(boundaries, vec![false, false, true, true, false]);
}

#[test]
fn a_mapreduce_plan_runs_as_a_phase_before_a_pipeline() {
    let reg = Registry::builtin();
    let cfg = Inputs::with_image(ImageSize::Small);
    let one = histogram(&ImageSize::Small.image());
    let plan = Plan::Seq(vec![
        Plan::MapReduce {
            map: "map".into(),
            reduce: "reduce_per_key".into(),
            nodes: 1,
            threads: 2,
            reduction: None,
        },
        Plan::Pipe(vec![k("nop"), k("nop")]),
    ]);
    assert_eq!(plan.threads(), 2);
    let built = plan.build(&reg, Config::default()).unwrap();
    let jobs = || stream_inputs(&reg, &built.source_kernel, 3, 4, &cfg, u128::MAX).unwrap();
    for out in [
        built.program.run(jobs()).unwrap(),
        built.program.run_stream(jobs()).unwrap().outputs,
    ] {
        assert_eq!(out.len(), 4);
        for o in out {
            let Data::Counts(h) = o else { panic!() };
            assert_eq!(h, one.iter().map(|v| v * 3).collect::<Vec<_>>());
        }
    }
}
