//! Unit tests of one block alone and next to siblings: the calls counted, the threads
//! they run on, and errors instead of hangs.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::bench::clock::clock_read_ns;
use crate::bench::conditions::{Conditions, InputState, Replica};
use crate::bench::gather;
use crate::bench::kernel_sampler::KernelSampler;
use crate::bench::sampling::{Repeated, Sampling};
use crate::bench::threads::{LOAD_THREAD_NAME, TIMED_THREAD_NAME};
use crate::data::Data;
use crate::error::KernelError;
use crate::kernel::{Inputs, Kernel};

#[test]
fn handed_over_inputs_are_each_called_once_on_the_timing_thread() {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::{Arc, Mutex};
    let calls = Arc::new(AtomicU64::new(0));
    let threads = Arc::new(Mutex::new(std::collections::HashSet::new()));
    let mut reg = crate::kernel::Registry::empty();
    let (c, t) = (Arc::clone(&calls), Arc::clone(&threads));
    reg.register_block("count", "counts its calls", move |d| {
        c.fetch_add(1, Ordering::Relaxed);
        t.lock().unwrap().insert(std::thread::current().id());
        d
    });
    let kernel = reg.get("count").unwrap().as_ref();
    let spec = Sampling::quick();
    let mut s = KernelSampler::new(
        kernel,
        1024,
        &Inputs::default(),
        &spec,
        1 << 30,
        InputState::Remote,
    )
    .unwrap();
    // Sizing the batch called the kernel here: only the repetition's calls count.
    let before = calls.load(Ordering::Relaxed);
    threads.lock().unwrap().clear();
    let ns = s.one().unwrap();
    assert!(ns.is_finite() && ns >= 0.0, "{ns}");
    assert_eq!(calls.load(Ordering::Relaxed) - before, s.batch());
    // The helper thread only writes the inputs; the kernel runs on this thread.
    let seen = threads.lock().unwrap();
    assert_eq!(*seen, [std::thread::current().id()].into_iter().collect());
}

#[test]
fn loaded_unit_tests_run_the_block_on_siblings_while_one_thread_is_timed() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Mutex;
    use std::thread::ThreadId;
    let timed = || std::thread::current().name() == Some(TIMED_THREAD_NAME);
    // (thread, timed?) of every call.
    let log: Arc<Mutex<Vec<(ThreadId, bool)>>> = Arc::default();
    let armed = Arc::new(AtomicBool::new(false));
    let mut reg = crate::kernel::Registry::empty();
    let (l, a) = (Arc::clone(&log), Arc::clone(&armed));
    reg.register_block("log", "logs its thread", move |d| {
        l.lock()
            .unwrap()
            .push((std::thread::current().id(), timed()));
        // Once armed, the timed calls wait (10 s at most) until both siblings have
        // called the block: they run while the timed thread is timed.
        let t = Instant::now();
        while timed() && a.load(Ordering::Acquire) && t.elapsed() < Duration::from_secs(10) {
            let others: std::collections::HashSet<ThreadId> = l
                .lock()
                .unwrap()
                .iter()
                .filter(|c| !c.1)
                .map(|c| c.0)
                .collect();
            if others.len() == 2 {
                a.store(false, Ordering::Release);
                break;
            }
            std::thread::yield_now();
        }
        d
    });
    let kernel = reg.get("log").unwrap().as_ref();
    let spec = Sampling::quick();
    let how = Conditions {
        input: InputState::Cold,
        siblings: 2,
        ..Default::default()
    };
    let mut s = KernelSampler::new(kernel, 1024, &Inputs::default(), &spec, 1 << 30, how).unwrap();
    log.lock().unwrap().clear();
    armed.store(true, Ordering::Release);
    let ns = s.one().unwrap();
    assert!(ns.is_finite() && ns >= 0.0, "{ns}");
    let log = log.lock().unwrap();
    // Every timed call ran on one thread (not this one), the siblings' on two others.
    let here = std::thread::current().id();
    let on = |is_timed: bool| -> std::collections::HashSet<ThreadId> {
        log.iter()
            .filter(|c| c.1 == is_timed)
            .map(|c| c.0)
            .collect()
    };
    // The three threads take from one stream of 3 batches: the timed one took some
    // of it (all of it if it outran both siblings).
    let timed_calls = log.iter().filter(|c| c.1).count() as u64;
    assert!(
        (1..=3 * s.batch()).contains(&timed_calls),
        "{timed_calls} of {}",
        3 * s.batch()
    );
    assert_eq!(on(true).len(), 1);
    assert_eq!(on(false).len(), 2);
    assert!(!on(true).contains(&here) && !on(false).contains(&here));
    assert!(on(true).is_disjoint(&on(false)));
}

#[test]
fn cold_loaded_unit_tests_pool_the_calls_of_every_thread_on_the_shared_stream() {
    use std::sync::atomic::{AtomicBool, Ordering};
    // A sibling's call takes at least 10 ms; the timed thread's first call waits until
    // a sibling has started one (so at least one ran on the shared stream), its others
    // return at once.
    let started = Arc::new(AtomicBool::new(false));
    let mut reg = crate::kernel::Registry::empty();
    let s0 = Arc::clone(&started);
    reg.register_block("skewed", "slow on the siblings", move |d| {
        let t = Instant::now();
        match std::thread::current().name() {
            Some(LOAD_THREAD_NAME) => {
                s0.store(true, Ordering::Release);
                while t.elapsed() < Duration::from_millis(10) {
                    std::hint::spin_loop();
                }
            }
            Some(TIMED_THREAD_NAME) => {
                while !s0.load(Ordering::Acquire) && t.elapsed() < Duration::from_secs(10) {
                    std::thread::yield_now();
                }
            }
            _ => {}
        }
        d
    });
    reg.register_block("pass", "passes its element on", |d| d);
    let alone = Conditions {
        input: InputState::Cold,
        siblings: 1,
        ..Default::default()
    };
    let in_seq = Conditions {
        siblings: 1,
        replica: Some(Replica {
            index: 0,
            kernels: vec!["skewed".into(), "pass".into()],
        }),
        ..Default::default()
    };
    for how in [alone, in_seq] {
        started.store(false, Ordering::Release);
        // 64 ints per element within 64 KiB: streams of at most 128 elements a thread.
        let spec = Sampling::quick();
        let mut s = KernelSampler::for_block(
            &reg,
            "skewed",
            64,
            &Inputs::default(),
            &spec,
            64 << 10,
            how.clone(),
        )
        .unwrap();
        let ns = s.one().unwrap();
        // One call of 10 ms among at most two streams' worth: timed alone, the
        // thread's calls would be about as long as its wait for the sibling.
        let floor = 1e7 / (2 * s.batch()) as f64 - clock_read_ns();
        assert!(s.batch() <= 128, "{}", s.batch());
        assert!(ns >= floor, "{how:?}: {ns} ns per call, below {floor}");
    }
}

#[test]
fn a_block_that_panics_on_a_sibling_is_an_error_not_a_hang() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let mut reg = crate::kernel::Registry::empty();
    // Once armed, the timed calls wait (10 s at most) for a sibling to have panicked,
    // so that the siblings are not stopped before their first call.
    let (armed, fired) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicBool::new(false)),
    );
    let (a, f) = (Arc::clone(&armed), Arc::clone(&fired));
    reg.register_block("boom", "panics on the siblings' threads", move |d| {
        if std::thread::current().name() == Some(LOAD_THREAD_NAME) {
            f.store(true, Ordering::Release);
            panic!("sibling boom");
        }
        let t = Instant::now();
        while a.load(Ordering::Acquire)
            && !f.load(Ordering::Acquire)
            && t.elapsed() < Duration::from_secs(10)
        {
            std::thread::yield_now();
        }
        d
    });
    let kernel = reg.get("boom").unwrap().as_ref();
    let how = Conditions {
        input: InputState::Warm,
        siblings: 1,
        ..Default::default()
    };
    let spec = Sampling::quick();
    let mut s = KernelSampler::new(kernel, 256, &Inputs::default(), &spec, 1 << 30, how).unwrap();
    armed.store(true, Ordering::Release);
    let err = s.one().unwrap_err().to_string();
    assert!(err.contains("sibling"), "{err}");
}

#[test]
fn a_warm_per_key_reduction_is_timed_on_each_key_gathered_from_x_map_outputs() {
    use std::sync::{Arc, Mutex};
    // A per-key reduction that logs the key and how many values it got.
    struct Logged(Arc<Mutex<Vec<(usize, usize)>>>);
    impl Kernel for Logged {
        fn name(&self) -> &str {
            "logged_per_key"
        }
        fn summary(&self) -> &str {
            "sums one key's values, logging each call"
        }
        fn op(&self) -> crate::kernel::Op {
            let log = Arc::clone(&self.0);
            crate::kernel::Op::ReducePerKey(Arc::new(move |key, values| {
                log.lock().unwrap().push((key, values.len()));
                values.iter().sum()
            }))
        }
        fn size_meaning(&self) -> &str {
            "values of the key"
        }
        fn input(&self, x: usize, inputs: &Inputs) -> Result<Data, KernelError> {
            crate::kernel::ReducePerKey.input(x, inputs)
        }
        fn input_bytes(&self, x: usize, _: &Inputs) -> u128 {
            8 * x as u128
        }
    }
    let log = Arc::new(Mutex::new(Vec::new()));
    let kernel = Logged(Arc::clone(&log));
    let spec = Sampling::quick();
    let x = 6;
    let mut warm = KernelSampler::new(
        &kernel,
        x,
        &Inputs::default(),
        &spec,
        1 << 30,
        InputState::Warm,
    )
    .unwrap();
    log.lock().unwrap().clear();
    let ns = warm.one().unwrap();
    assert!(ns.is_finite() && ns >= 0.0, "{ns}");
    let calls = std::mem::take(&mut *log.lock().unwrap());
    // One call per key, keys in turn (cycling over the map outputs' keys), each on the
    // x values gathered from the x map outputs.
    assert_eq!(calls.len() as u64, warm.batch());
    assert!(calls.len() > 1, "a batch of calls");
    for w in calls.windows(2) {
        assert_eq!(w[1].0, (w[0].0 + 1) % gather::GATHER_KEYS, "{w:?}");
    }
    assert!(calls.iter().all(|&(_, n)| n == x), "{calls:?}");
    // With a sibling (as `_par2`), the sibling gathers keys too, as a job's other
    // thread does, at least one batch of them: not one call per template as key 0.
    let mut loaded = KernelSampler::new(
        &kernel,
        x,
        &Inputs::default(),
        &spec,
        1 << 30,
        Conditions {
            input: InputState::Warm,
            siblings: 1,
            ..Default::default()
        },
    )
    .unwrap();
    log.lock().unwrap().clear();
    let ns = loaded.one().unwrap();
    assert!(ns.is_finite() && ns >= 0.0, "{ns}");
    let calls = std::mem::take(&mut *log.lock().unwrap());
    let batch = loaded.batch() as usize;
    assert!(
        calls.len() >= 2 * batch,
        "{} calls, batch {batch}",
        calls.len()
    );
    assert!(calls.iter().all(|&(_, n)| n == x));
    let key_0 = calls.iter().filter(|&&(k, _)| k == 0).count();
    let passes = calls.len() / gather::GATHER_KEYS + 2;
    assert!(key_0 <= passes, "{key_0} calls on key 0 of {}", calls.len());
    // Cold, the test calls it on a stream of vectors of x values of its own, as key 0.
    let mut cold = KernelSampler::new(
        &kernel,
        x,
        &Inputs::default(),
        &spec,
        1 << 30,
        InputState::Cold,
    )
    .unwrap();
    log.lock().unwrap().clear();
    cold.one().unwrap();
    let calls = std::mem::take(&mut *log.lock().unwrap());
    assert_eq!(calls.len() as u64, cold.batch());
    assert!(calls.iter().all(|&c| c == (0, x)), "{:?}", &calls[..3]);
}
