//! Unit tests of the blocks of a task pool's `seq` ([`Replica`]): every thread runs the
//! whole `seq` on the elements of one cold stream, and the calls of the timed block on
//! every thread, on that stream, are counted, pooled (`bench::Conditions`).

use std::sync::Arc;
use std::time::Instant;

use super::stage::Rig;
use super::{not_copyable, stage, stream_len, Conditions, KernelSampler, Replica, Sampling};
use crate::data::Data;
use crate::error::Error;
use crate::kernel::{Inputs, Op, Registry};

/// The `seq` around a replica block's unit test: every block, and the inputs of the first
/// one, which the stream is made of (the same parts as a pipeline stage's rig).
pub(super) type Chain = Rig;

impl Chain {
    /// The blocks of the `seq`, in order.
    pub(super) fn ops(&self) -> Vec<Op> {
        self.ops.clone()
    }

    /// The registry names of the blocks, in order.
    pub(super) fn names(&self) -> &[String] {
        &self.names
    }

    /// The inputs of the first block.
    pub(super) fn first(&self) -> Arc<Vec<Data>> {
        Arc::clone(&self.first)
    }

    /// Run the whole `seq` on `input` on this thread and add the time of the timed block's
    /// call to `total` (ns); what the last block returns.
    pub(super) fn run_timed(
        &self,
        sampler: &KernelSampler<'_>,
        input: Data,
        total: &mut u128,
    ) -> Result<Data, Error> {
        let mut d = input;
        for (j, (op, name)) in self.ops.iter().zip(&self.names).enumerate() {
            if j == self.index {
                let t = Instant::now();
                let out = sampler.call(d);
                *total += t.elapsed().as_nanos();
                d = out?;
            } else {
                d = stage::call(op, name, d)?;
            }
        }
        Ok(d)
    }
}

impl<'a> KernelSampler<'a> {
    /// The unit test of a block of a task pool's `seq`: `how.replica` names the blocks of
    /// the `seq` (looked up in `registry`) and which one is timed, `how.siblings` the other
    /// workers. A repetition's stream is as long as a program's repetition at the speed of
    /// the whole `seq` ([`stream_len`]) per thread, within `memory_limit`.
    pub fn replicated(
        registry: &'a Registry,
        x: usize,
        inputs: &Inputs,
        spec: &Sampling,
        memory_limit: u128,
        how: Conditions,
    ) -> Result<KernelSampler<'a>, Error> {
        let Some(Replica { index, kernels }) = how.replica.clone() else {
            return Err(Error::Run(
                "a replica block's unit test needs the seq it is a block of".into(),
            ));
        };
        let (blocks, ops) = stage::sequential_blocks(registry, index, &kernels, ("block", "seq"))?;
        let alone = Conditions {
            replica: None,
            ..how.clone()
        };
        let mut s = KernelSampler::new(blocks[index], x, inputs, spec, memory_limit, alone)?;
        let chain = Rig::new(
            &s,
            &blocks,
            (index, kernels, ops),
            (x, inputs, memory_limit),
        )?;
        let (first, ops, kernels) = (&chain.first, &chain.ops, &chain.names);
        // Probe the whole seq (twice: the first run pays for cold caches, the second is
        // kept): the stream is sized by its time per element.
        let mut probe = f64::INFINITY;
        for _ in 0..2 {
            let mut d = first[0]
                .try_clone()
                .ok_or_else(|| not_copyable(blocks[0].name()))?;
            let t0 = Instant::now();
            for (op, name) in ops.iter().zip(kernels) {
                d = stage::call(op, name, d)?;
            }
            probe = probe.min(t0.elapsed().as_secs_f64().max(1e-9));
        }
        let bytes = blocks[0].input_bytes(x, inputs);
        let share = memory_limit / (1 + how.siblings as u128);
        s.batch = stream_len(probe, bytes, share) as u64;
        s.outputs = Vec::with_capacity(s.batch as usize);
        s.replica = Some(chain);
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};
    use std::thread::ThreadId;

    use super::*;
    use crate::bench::{InputState, Repeated, LOAD_THREAD_NAME, TIMED_THREAD_NAME};

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

    #[test]
    fn replica_conditions_name_the_seq_and_read_back() {
        let how = Conditions {
            input: InputState::Warm,
            ..block_of(1, &["inc", "inc"], 1)
        };
        assert_eq!(how.suffix(), "_warm_par2_seq2_of_inc_then_inc");
        assert_eq!(
            Conditions::parse("inc_warm_par2_seq2_of_inc_then_inc"),
            ("inc", how.clone())
        );
        assert_eq!(how.alone(), Conditions::from(InputState::Warm));
        assert_eq!(
            Conditions::parse("my_seq_par3_seq1_of_my_seq_then_nop"),
            ("my_seq", block_of(0, &["my_seq", "nop"], 2))
        );
        // Only the form `suffix` writes is read as a replica; anything else is a name.
        for name in [
            "my_seq",
            "x_seq0_of_a_then_b",
            "x_seq3_of_a_then_b",
            "x_seq1_of_a",
            "x_seq01_of_a_then_b",
            "x_seq1_of_a_then_",
        ] {
            assert_eq!(Conditions::parse(name), (name, Conditions::default()));
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
                KernelSampler::replicated(&reg, 64, &Inputs::default(), &spec, 1 << 30, how)
                    .unwrap();
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
            if a.load(Ordering::Acquire) && std::thread::current().name() == Some(LOAD_THREAD_NAME)
            {
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
            (&["inc", "map"][..], "not a sequential block"),
        ] {
            let err = KernelSampler::replicated(
                &reg,
                64,
                &inputs,
                &spec,
                1 << 30,
                block_of(0, kernels, 1),
            )
            .err()
            .unwrap()
            .to_string();
            assert!(err.contains(says), "{err}");
        }
        let alone =
            KernelSampler::replicated(&reg, 64, &inputs, &spec, 1 << 30, Conditions::default());
        assert!(alone.is_err());
    }
}
