//! Unit tests of pipeline stages: the stream through every stage on threads of their
//! own, the timed stage's phases, one element handed on at a time, and errors instead of
//! hangs.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;
use std::time::Duration;

use crate::bench::conditions::{Conditions, Stage};
use crate::bench::kernel_sampler::{time_kernel, KernelSampler};
use crate::bench::sampling::{sample_point, Repeated, Sampling};
use crate::bench::series::PHASE_QUANTILES;
use crate::bench::threads::{LOAD_THREAD_NAME, TIMED_THREAD_NAME};
use crate::data::Data;
use crate::kernel::{Inputs, Registry};

fn stage_of(index: usize, kernels: &[&str]) -> Conditions {
    Conditions {
        stage: Some(Stage {
            index,
            kernels: kernels.iter().map(|k| k.to_string()).collect(),
        }),
        ..Conditions::default()
    }
}

fn ints(d: &mut Data) -> &mut Vec<i32> {
    match d {
        Data::Ints(v) => v,
        _ => panic!("the test blocks take integer arrays"),
    }
}

/// `first` writes 7 into the element, `middle` triples it, `last` records it; each
/// logs the thread it ran on. `fail` makes the block of that name panic.
fn logging_pipeline(fail: Arc<Mutex<Option<&'static str>>>) -> (Registry, Arc<Log>) {
    let log = Arc::new(Log::default());
    let mut reg = Registry::empty();
    for name in ["first", "middle", "last"] {
        let (log, fail) = (Arc::clone(&log), Arc::clone(&fail));
        reg.register_block(name, "a logging stage", move |mut d| {
            if *fail.lock().unwrap() == Some(name) {
                panic!("{name} fails");
            }
            log.threads
                .lock()
                .unwrap()
                .push((name, std::thread::current().id()));
            if std::thread::current().name() == Some(TIMED_THREAD_NAME) {
                log.timed.lock().unwrap().push(name);
            }
            let v = ints(&mut d);
            match name {
                "first" => v[0] = 7,
                "middle" => v[0] = v[0].wrapping_mul(3),
                _ => log.seen.lock().unwrap().push(v[0]),
            }
            d
        });
    }
    (reg, log)
}

#[derive(Default)]
struct Log {
    threads: Mutex<Vec<(&'static str, ThreadId)>>,
    timed: Mutex<Vec<&'static str>>,
    seen: Mutex<Vec<i32>>,
}

#[test]
fn a_stage_is_timed_while_the_other_stages_run_the_same_stream_on_their_own_threads() {
    let (reg, log) = logging_pipeline(Arc::default());
    let spec = Sampling::quick();
    let how = stage_of(1, &["first", "middle", "last"]);
    let mut s =
        KernelSampler::for_block(&reg, "middle", 64, &Inputs::default(), &spec, 1 << 30, how)
            .unwrap();
    log.threads.lock().unwrap().clear();
    log.timed.lock().unwrap().clear();
    log.seen.lock().unwrap().clear();
    let ns = s.one().unwrap();
    assert!(ns.is_finite() && ns >= 0.0, "{ns}");
    let batch = s.batch() as usize;
    assert!(batch >= 1);
    // Every element went through the three stages, in order.
    assert_eq!(*log.seen.lock().unwrap(), vec![21; batch]);
    // Each stage ran on a thread of its own, none on the caller's.
    let here = std::thread::current().id();
    let threads = log.threads.lock().unwrap();
    let on = |stage: &str| -> std::collections::HashSet<ThreadId> {
        threads
            .iter()
            .filter(|(n, _)| *n == stage)
            .map(|(_, t)| *t)
            .collect()
    };
    let (first, middle, last) = (on("first"), on("middle"), on("last"));
    assert_eq!((first.len(), middle.len(), last.len()), (1, 1, 1));
    let all: std::collections::HashSet<_> = first.iter().chain(&middle).chain(&last).collect();
    assert_eq!(all.len(), 3);
    assert!(!all.contains(&here));
    // The timed one is the middle stage.
    assert!(log.timed.lock().unwrap().iter().all(|n| *n == "middle"));
    assert_eq!(threads.len(), 3 * batch);
}

#[test]
fn a_stage_that_panics_anywhere_in_the_pipeline_is_an_error_not_a_hang() {
    for (timed, failing) in [(0, "last"), (1, "first"), (1, "last"), (1, "middle")] {
        let fail = Arc::new(Mutex::new(None));
        let (reg, _) = logging_pipeline(Arc::clone(&fail));
        let spec = Sampling::quick();
        let kernels = ["first", "middle", "last"];
        let how = stage_of(timed, &kernels);
        let mut s =
            KernelSampler::staged(&reg, 64, &Inputs::default(), &spec, 1 << 30, how).unwrap();
        *fail.lock().unwrap() = Some(failing);
        let err = s.one().unwrap_err().to_string();
        assert!(err.contains(&format!("`{failing}` panicked")), "{err}");
    }
}

#[test]
fn a_stage_test_records_its_phases_over_windows_of_calls() {
    let reg = Registry::builtin();
    let spec = Sampling::quick();
    let how = stage_of(1, &["inc", "inc"]);
    let mut s = KernelSampler::staged(&reg, 1024, &Inputs::default(), &spec, 1 << 30, how).unwrap();
    let p = sample_point(&spec, &mut s).unwrap();
    // A repetition streams thousands of calls of `inc` at x = 1024: many windows,
    // summarised as quantiles, ascending, around the repetition's mean (1). The
    // window means of a repetition average to about its mean, whatever the machine.
    assert_eq!(p.phases.len(), PHASE_QUANTILES, "{p:?}");
    assert!(p.phases.windows(2).all(|w| w[0] <= w[1]), "{:?}", p.phases);
    assert!(p.phases.iter().all(|r| *r > 0.0 && r.is_finite()));
    let mean = p.phases.iter().sum::<f64>() / p.phases.len() as f64;
    assert!((0.5..2.0).contains(&mean), "{:?}", p.phases);
    assert!(p.phases[0] <= 1.05 && *p.phases.last().unwrap() >= 0.95);
    assert!(s.take_phases().is_empty(), "taken by the summary");
    // A block timed alone has none.
    let inc = reg.get("inc").unwrap().as_ref();
    let alone = time_kernel(inc, 1024, &Inputs::default(), &spec, 1 << 30);
    let alone = alone.unwrap();
    assert!(alone.phases.is_empty());
}

#[test]
fn a_stage_hands_each_element_on_as_soon_as_its_call_returns() {
    // In the rig (not in the probe that sizes its stream, on the calling thread),
    // `first`'s k-th call waits until `last` has been called k times: a rig that
    // called `first` on several elements before handing them on would wait here
    // for ever (a bounded wait turns that into a panic, which fails the test).
    let in_rig = || {
        let name = std::thread::current().name().map(str::to_string);
        name.as_deref() == Some(TIMED_THREAD_NAME) || name.as_deref() == Some(LOAD_THREAD_NAME)
    };
    let seen = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let called = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut reg = Registry::empty();
    {
        let (seen, called) = (Arc::clone(&seen), Arc::clone(&called));
        reg.register_block("first", "waits for the stage after it", move |d| {
            if !in_rig() {
                return d;
            }
            let k = called.fetch_add(1, Ordering::SeqCst);
            let t = std::time::Instant::now();
            while seen.load(Ordering::SeqCst) < k {
                assert!(
                    t.elapsed() < Duration::from_secs(20),
                    "element {k} was not handed on before the next call"
                );
                std::thread::yield_now();
            }
            d
        });
    }
    {
        let seen = Arc::clone(&seen);
        reg.register_block("last", "counts what reaches it", move |d| {
            if in_rig() {
                seen.fetch_add(1, Ordering::SeqCst);
            }
            d
        });
    }
    for index in [0, 1] {
        seen.store(0, Ordering::SeqCst);
        called.store(0, Ordering::SeqCst);
        let spec = Sampling::quick();
        let how = stage_of(index, &["first", "last"]);
        let name = ["first", "last"][index];
        let mut s =
            KernelSampler::for_block(&reg, name, 16, &Inputs::default(), &spec, 1 << 30, how)
                .unwrap();
        let ns = s.one().unwrap();
        assert!(ns.is_finite() && ns >= 0.0, "{ns}");
        let n = called.load(Ordering::SeqCst);
        assert!(n > 1, "a stream of one element proves nothing: {n}");
        assert_eq!(
            seen.load(Ordering::SeqCst),
            n,
            "every element reached `last`"
        );
    }
}

#[test]
fn a_stage_test_needs_a_pipeline_of_known_sequential_blocks() {
    let reg = Registry::builtin();
    let spec = Sampling::quick();
    let inputs = Inputs::default();
    let qsort = reg.get("qsort").unwrap().as_ref();
    let how = stage_of(0, &["qsort", "inc"]);
    let err = KernelSampler::new(qsort, 64, &inputs, &spec, 1 << 30, how)
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("KernelSampler::staged"), "{err}");
    for (kernels, says) in [
        (&["qsort", "nosuch"][..], "nosuch"),
        (
            &["qsort", "map"][..],
            "is a map kernel and cannot be used as a block",
        ),
    ] {
        let err = KernelSampler::staged(&reg, 64, &inputs, &spec, 1 << 30, stage_of(0, kernels))
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains(says), "{err}");
    }
    let alone = KernelSampler::staged(&reg, 64, &inputs, &spec, 1 << 30, Conditions::default());
    assert!(alone.is_err());
}

#[test]
fn a_panicking_timed_stage_is_an_error_too() {
    let armed = Arc::new(AtomicBool::new(false));
    let mut reg = Registry::empty();
    let a = Arc::clone(&armed);
    reg.register_block("boom", "panics once armed", move |d| {
        if a.load(Ordering::Acquire) {
            panic!("timed boom");
        }
        d
    });
    reg.register_block("calm", "passes its element on", |d| d);
    let spec = Sampling::quick();
    let how = stage_of(0, &["boom", "calm"]);
    let mut s = KernelSampler::staged(&reg, 64, &Inputs::default(), &spec, 1 << 30, how).unwrap();
    armed.store(true, Ordering::Release);
    let err = s.one().unwrap_err().to_string();
    assert!(err.contains("timed boom"), "{err}");
}
