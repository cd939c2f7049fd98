//! Unit tests of the blocks of a task pool's `seq`: every thread runs the whole `seq`,
//! one block is timed, and a panic anywhere is an error instead of a hang.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;

use crate::bench::conditions::{Conditions, Replica};
use crate::bench::kernel_sampler::KernelSampler;
use crate::bench::sampling::{Repeated, Sampling};
use crate::bench::threads::{LOAD_THREAD_NAME, TIMED_THREAD_NAME};
use crate::data::Data;
use crate::kernel::{Inputs, Registry};

fn block_of(index: usize, kernels: &[&str], siblings: usize) -> Conditions {
    Conditions {
        siblings,
        replica: Some(Replica {
            index,
            kernels: kernels.iter().map(|k| k.to_string()).collect(),
        }),
        ..Conditions::default()
    }
}

/// What each call of the blocks saw: block, thread, whether on the timed thread, and
/// the element's first value on entry.
type Calls = Arc<Mutex<Vec<(&'static str, ThreadId, bool, i32)>>>;

/// `first` writes 7 into the element, `second` triples it, `third` checks it is 21;
/// each logs its call. `fail` makes the block of that name panic.
fn logging_seq(fail: Arc<Mutex<Option<&'static str>>>) -> (Registry, Calls) {
    let calls: Calls = Arc::default();
    let mut reg = Registry::empty();
    for name in ["first", "second", "third"] {
        let (calls, fail) = (Arc::clone(&calls), Arc::clone(&fail));
        reg.register_block(name, "a logging block", move |mut d| {
            if *fail.lock().unwrap() == Some(name) {
                panic!("{name} fails");
            }
            let Data::Ints(v) = &mut d else {
                panic!("the test blocks take integer arrays");
            };
            let timed = std::thread::current().name() == Some(TIMED_THREAD_NAME);
            calls
                .lock()
                .unwrap()
                .push((name, std::thread::current().id(), timed, v[0]));
            // The timed thread's calls wait (10 s at most) until an untimed call of
            // `third` is logged — a sibling's, once the log is cleared after the
            // sampler's probe — so that the siblings are not stopped before they ran.
            let t = std::time::Instant::now();
            while timed
                && t.elapsed() < std::time::Duration::from_secs(10)
                && !calls.lock().unwrap().iter().any(|c| c.0 == "third" && !c.2)
            {
                std::thread::yield_now();
            }
            match name {
                "first" => v[0] = 7,
                "second" => v[0] = v[0].wrapping_mul(3),
                _ => {}
            }
            d
        });
    }
    (reg, calls)
}

#[test]
fn every_thread_runs_the_whole_seq_on_one_stream_and_one_block_is_timed() {
    let (reg, calls) = logging_seq(Arc::default());
    let spec = Sampling::quick();
    let how = block_of(1, &["first", "second", "third"], 1);
    let mut s =
        KernelSampler::for_block(&reg, "second", 64, &Inputs::default(), &spec, 1 << 30, how)
            .unwrap();
    calls.lock().unwrap().clear();
    let ns = s.one().unwrap();
    assert!(ns.is_finite() && ns >= 0.0, "{ns}");
    let calls = calls.lock().unwrap();
    let here = std::thread::current().id();
    // Every block ran on what the block before it returned, on the same thread.
    assert!(calls.iter().filter(|c| c.0 == "second").all(|c| c.3 == 7));
    assert!(calls.iter().filter(|c| c.0 == "third").all(|c| c.3 == 21));
    let threads = |timed: bool| -> HashSet<ThreadId> {
        calls.iter().filter(|c| c.2 == timed).map(|c| c.1).collect()
    };
    let (timed, load) = (threads(true), threads(false));
    assert_eq!(timed.len(), 1);
    assert!(!timed.contains(&here) && !load.contains(&here));
    assert!(timed.is_disjoint(&load));
    // The timed thread ran all three blocks on each element it took, in order.
    let mine: Vec<&str> = calls.iter().filter(|c| c.2).map(|c| c.0).collect();
    assert!(!mine.is_empty() && mine.len() % 3 == 0, "{mine:?}");
    assert!(mine.chunks(3).all(|c| c == ["first", "second", "third"]));
    // The sibling ran the whole seq too (on the shared stream and, once it ran out, on
    // fresh copies).
    let theirs: Vec<&str> = calls.iter().filter(|c| !c.2).map(|c| c.0).collect();
    for b in ["first", "second", "third"] {
        assert!(theirs.contains(&b), "{theirs:?}");
    }
}

#[test]
fn a_block_that_panics_anywhere_in_the_replica_is_an_error_not_a_hang() {
    for (timed, failing) in [(0, "third"), (1, "first"), (1, "second"), (2, "first")] {
        let fail = Arc::new(Mutex::new(None));
        let (reg, _) = logging_seq(Arc::clone(&fail));
        let spec = Sampling::quick();
        let how = block_of(timed, &["first", "second", "third"], 1);
        let mut s =
            KernelSampler::replicated(&reg, 64, &Inputs::default(), &spec, 1 << 30, how).unwrap();
        *fail.lock().unwrap() = Some(failing);
        let err = s.one().unwrap_err().to_string();
        assert!(err.contains("panicked"), "{err}");
    }
}

#[test]
fn a_sibling_that_panics_in_the_replica_is_an_error_too() {
    let (armed, fired) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicBool::new(false)),
    );
    let mut reg = Registry::empty();
    let (a, f) = (Arc::clone(&armed), Arc::clone(&fired));
    reg.register_block("boom", "panics on a sibling once armed", move |d| {
        if a.load(Ordering::Acquire) && std::thread::current().name() == Some(LOAD_THREAD_NAME) {
            f.store(true, Ordering::Release);
            panic!("sibling boom");
        }
        d
    });
    // Once armed, the timed calls wait (10 s at most) for the sibling to have panicked,
    // so that it is not stopped before its first call.
    let (a, f) = (Arc::clone(&armed), Arc::clone(&fired));
    reg.register_block("calm", "passes its element on", move |d| {
        let t = std::time::Instant::now();
        while std::thread::current().name() == Some(TIMED_THREAD_NAME)
            && a.load(Ordering::Acquire)
            && !f.load(Ordering::Acquire)
            && t.elapsed() < std::time::Duration::from_secs(10)
        {
            std::thread::yield_now();
        }
        d
    });
    let spec = Sampling::quick();
    let how = block_of(1, &["boom", "calm"], 1);
    let mut s =
        KernelSampler::replicated(&reg, 64, &Inputs::default(), &spec, 1 << 30, how).unwrap();
    armed.store(true, Ordering::Release);
    let err = s.one().unwrap_err().to_string();
    assert!(
        err.contains("a block of seq(boom, calm) panicked on a sibling thread"),
        "{err}"
    );
}

#[test]
fn a_replica_test_needs_a_seq_of_known_sequential_blocks() {
    let reg = Registry::builtin();
    let spec = Sampling::quick();
    let inputs = Inputs::default();
    let inc = reg.get("inc").unwrap().as_ref();
    let err = KernelSampler::new(
        inc,
        64,
        &inputs,
        &spec,
        1 << 30,
        block_of(0, &["inc", "inc"], 1),
    )
    .err()
    .unwrap()
    .to_string();
    assert!(err.contains("KernelSampler::replicated"), "{err}");
    for (kernels, says) in [
        (&["inc", "nosuch"][..], "nosuch"),
        (
            &["inc", "map"][..],
            "is a map kernel and cannot be used as a block",
        ),
    ] {
        let err =
            KernelSampler::replicated(&reg, 64, &inputs, &spec, 1 << 30, block_of(0, kernels, 1))
                .err()
                .unwrap()
                .to_string();
        assert!(err.contains(says), "{err}");
    }
    let alone = KernelSampler::replicated(&reg, 64, &inputs, &spec, 1 << 30, Conditions::default());
    assert!(alone.is_err());
}
