//! Unit tests of pipeline stages ([`Stage`]): the block timed while the other stages of
//! its pipeline run on threads of their own, on the same stream.

use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};

use super::{
    copies, evict_unless_cold, not_copyable, on_core, stream_len, templates, Conditions,
    KernelSampler, Sampling, Stage, LOAD_THREAD_NAME, PHASE_WINDOW, TIMED_THREAD_NAME,
};
use crate::data::Data;
use crate::error::Error;
use crate::kernel::{unit_call, Inputs, Kernel, Op, Registry};

/// The blocks around a unit test timed among others (a pipeline's stages, a pool's `seq`):
/// every block, which one is timed, and the inputs of the first block, which the stream is
/// made of.
pub(super) struct Rig {
    pub(super) index: usize,
    pub(super) names: Vec<String>,
    pub(super) ops: Vec<Op>,
    pub(super) first: std::sync::Arc<Vec<Data>>,
}

impl Rig {
    /// The rig of `sampler`, the unit test of block `index` of `blocks` (named `names`,
    /// their operations `ops`): the first block's inputs are the sampler's own when it is
    /// the first block.
    pub(super) fn new(
        sampler: &KernelSampler<'_>,
        blocks: &[&dyn Kernel],
        (index, names, ops): (usize, Vec<String>, Vec<Op>),
        (x, inputs, memory_limit): (usize, &Inputs, u128),
    ) -> Result<Rig, Error> {
        let first = if index == 0 {
            std::sync::Arc::clone(&sampler.templates)
        } else {
            templates(blocks[0], x, inputs, memory_limit)?
        };
        Ok(Rig {
            index,
            names,
            ops,
            first,
        })
    }
}

/// Where a stage takes its elements from: the stream (the first stage) or the queue from
/// the stage before it.
enum Source {
    Stream(std::vec::IntoIter<Data>),
    Queue(Receiver<Data>),
}

impl Source {
    /// The next element, waiting for it as a pinned program's worker waits (checking the
    /// queue for up to `spin`, then sleeping on it); `None` at the end of the stream.
    fn next(&mut self, spin: Duration) -> Option<Data> {
        match self {
            Source::Stream(it) => it.next(),
            Source::Queue(rx) => crate::ctx::take(rx, spin),
        }
    }
}

impl<'a> KernelSampler<'a> {
    /// The unit test of a pipeline stage: `how.stage` names the stages' blocks (looked
    /// up in `registry`) and which one is timed. The repetition's stream is as long as
    /// the slowest stage makes a program's repetition ([`stream_len`]), within
    /// `memory_limit`.
    pub fn staged(
        registry: &'a Registry,
        x: usize,
        inputs: &Inputs,
        spec: &Sampling,
        memory_limit: u128,
        how: Conditions,
    ) -> Result<KernelSampler<'a>, Error> {
        let Some(Stage { index, kernels }) = how.stage.clone() else {
            return Err(Error::Run(
                "a stage's unit test needs the pipeline it is a stage of".into(),
            ));
        };
        let (blocks, ops) = sequential_blocks(registry, index, &kernels, ("stage", "pipeline"))?;
        let mut s = KernelSampler::new(blocks[index], x, inputs, spec, memory_limit, how.alone())?;
        let rig = Rig::new(
            &s,
            &blocks,
            (index, kernels, ops),
            (x, inputs, memory_limit),
        )?;
        let (first, ops, kernels) = (&rig.first, &rig.ops, &rig.names);
        // Probe every stage on what the stages before it return (twice: the first call
        // pays for cold caches, the second is kept): the stream is sized by the slowest.
        let copy = || {
            first[0]
                .try_clone()
                .ok_or_else(|| not_copyable(blocks[0].name()))
        };
        let mut slowest = 1e-9_f64;
        let mut element = copy()?;
        for (op, name) in ops.iter().zip(kernels) {
            let spare = element.try_clone();
            let t0 = Instant::now();
            let mut out = call(op, name, element)?;
            let mut took = t0.elapsed();
            if let Some(again) = spare {
                let t0 = Instant::now();
                out = call(op, name, again)?;
                took = t0.elapsed();
            }
            slowest = slowest.max(took.as_secs_f64());
            element = out;
        }
        let bytes = blocks[0].input_bytes(x, inputs);
        s.batch = stream_len(slowest, bytes, memory_limit / 2) as u64;
        s.rig = Some(rig);
        Ok(s)
    }

    /// One repetition of a stage's unit test: a fresh stream through the whole pipeline,
    /// every stage on a thread of its own pinned to a core (stage j on core j); ns per call
    /// of the timed stage, whose phases are kept. Every stage runs the same timed loop
    /// ([`time_stage`]), so that the timed stage's neighbours run at the pace it does.
    pub(super) fn one_in_pipeline(&mut self) -> Result<f64, Error> {
        let rig = self.rig.as_ref().expect("a stage's test has its pipeline");
        let n = rig.ops.len();
        let stream =
            copies(&rig.first, 0, self.batch.max(1) as usize).ok_or_else(|| self.not_copyable())?;
        evict_unless_cold(&stream);
        // The stages wait as a pinned program's workers do, by the program's own rule
        // (spin before sleeping when every stage has a core of its own).
        let pinned = crate::ctx::Config {
            pin: true,
            ..crate::ctx::Config::default()
        };
        let spin = crate::ctx::Ctx::gated(&pinned, n).spin;
        let clock = super::clock_read_ns();
        // Queue j carries what stage j returns to stage j + 1.
        let mut senders: Vec<Option<Sender<Data>>> = Vec::with_capacity(n);
        let mut receivers: Vec<Option<Receiver<Data>>> = vec![None];
        for _ in 1..n {
            let (tx, rx) = crossbeam_channel::bounded(crate::ctx::DEFAULT_CAPACITY);
            senders.push(Some(tx));
            receivers.push(Some(rx));
        }
        senders.push(None);
        let mut stream = Some(stream);
        let mut source = |j: usize, receivers: &mut Vec<Option<Receiver<Data>>>| match j {
            0 => Source::Stream(stream.take().unwrap_or_default().into_iter()),
            _ => Source::Queue(receivers[j].take().expect("each queue has one reader")),
        };
        // Stage j on core j (modulo the cores), as a pinned program places its stages.
        let timed: Vec<Result<Timed, Error>> = std::thread::scope(|scope| {
            let threads: Vec<_> = (0..n)
                .map(|j| {
                    let (input, output) = (source(j, &mut receivers), senders[j].take());
                    let (op, name) = (&rig.ops[j], rig.names[j].as_str());
                    let thread = if j == rig.index {
                        TIMED_THREAD_NAME
                    } else {
                        LOAD_THREAD_NAME
                    };
                    on_core(scope, thread, j, move || {
                        time_stage(input, output, (spin, clock), name, |d| call(op, name, d))
                    })
                })
                .collect();
            threads
                .into_iter()
                .map(|t| {
                    t.join().unwrap_or_else(|_| {
                        Err(Error::Run("a thread of a stage's unit test failed".into()))
                    })
                })
                .collect()
        });
        // The first stage that failed, in pipeline order: the ones after it failed (or
        // saw nothing) because of it.
        let timed = timed.into_iter().collect::<Result<Vec<Timed>, Error>>()?;
        let index = rig.index;
        let Timed { mean, phases } = timed.into_iter().nth(index).expect("the timed stage ran");
        self.phases.extend(phases);
        Ok(mean)
    }
}

/// What [`time_stage`] measured of one stage in one repetition.
struct Timed {
    /// ns per call.
    mean: f64,
    /// The phases ([`super::PointStats::phases`]).
    phases: Vec<f64>,
}

/// Take the elements of `input` one at a time, time the call of `block` (named `name`)
/// on each, and hand what it returns on to `output` at once (the last stage keeps it
/// until the stream ends, as a program's last queue does), waiting as a pinned program's
/// worker does (`spin`, [`crate::ctx::take`] and [`crate::ctx::put`]): ns per call less
/// one clock reading (`clock`), and the phases ([`super::PointStats::phases`]): the mean
/// call of each run of at least [`PHASE_WINDOW`] consecutive calls over the mean of all.
///
/// One element at a time, as the program runs its stages. A rig that timed a stage on
/// groups of what was waiting and handed each group on when its calls were done ran the
/// first stage of `pipe(inc, inc)` at x = 4,096 in 3.2 µs per call where the program's
/// took 3.9 µs, repetition by repetition in turn with the program; handing on every
/// element as soon as its call returns, the rig's took 3.6–4.0 µs
/// (`examples/rig_vs_program`; docs/validation.md, "The stage rig hands on one element
/// at a time").
fn time_stage(
    mut input: Source,
    output: Option<Sender<Data>>,
    (spin, clock): (Duration, f64),
    name: &str,
    mut block: impl FnMut(Data) -> Result<Data, Error>,
) -> Result<Timed, Error> {
    let mut total = 0.0_f64;
    let mut calls = 0_usize;
    let mut kept = Vec::new();
    // Windows so far (ns, calls), and the one being filled.
    let mut windows: Vec<(f64, usize)> = Vec::new();
    let mut window = (0.0_f64, 0_usize);
    let done = |total: f64, calls: usize, windows: Vec<(f64, usize)>| {
        let mean = total / calls as f64;
        let phases = windows
            .into_iter()
            .map(|(t, k)| t / k as f64 / mean)
            .collect();
        Timed { mean, phases }
    };
    while let Some(d) = input.next(spin) {
        let t = Instant::now();
        let out = block(d)?;
        let took = (t.elapsed().as_nanos() as f64 - clock).max(0.0);
        total += took;
        calls += 1;
        window = (window.0 + took, window.1 + 1);
        if window.1 >= PHASE_WINDOW {
            windows.push(std::mem::take(&mut window));
        }
        match &output {
            // The stage after this one stopped: it reports why.
            Some(tx) => {
                if crate::ctx::put(tx, out, spin).is_err() {
                    return Ok(done(total, calls, windows));
                }
            }
            None => kept.push(out),
        }
    }
    if calls == 0 {
        return Err(Error::Run(format!(
            "no element reached `{name}` in its pipeline"
        )));
    }
    Ok(done(total, calls, windows))
}

/// The blocks named `kernels` in `registry` and their operations, for the unit test of the
/// `index`-th of them as one `part` of a `whole` (`("stage", "pipeline")`): every one a
/// sequential block, `index` one of them.
pub(super) fn sequential_blocks<'r>(
    registry: &'r Registry,
    index: usize,
    kernels: &[String],
    (part, whole): (&str, &str),
) -> Result<(Vec<&'r dyn Kernel>, Vec<Op>), Error> {
    if index >= kernels.len() {
        return Err(Error::Run(format!(
            "{part} {} of a {whole} of {} {part}s",
            index + 1,
            kernels.len()
        )));
    }
    let blocks = kernels
        .iter()
        .map(|k| registry.get(k).map(|k| k.as_ref()))
        .collect::<Result<Vec<_>, _>>()?;
    let ops: Vec<Op> = blocks.iter().map(|k| k.op()).collect();
    if let Some(k) = blocks
        .iter()
        .zip(&ops)
        .find_map(|(k, op)| (!matches!(op, Op::Block { .. })).then_some(k))
    {
        return Err(Error::Run(format!(
            "`{}` is not a sequential block and cannot be a {part} of a {whole}",
            k.name()
        )));
    }
    Ok((blocks, ops))
}

pub(super) fn call(op: &Op, name: &str, input: Data) -> Result<Data, Error> {
    crate::unwind::catch(|| unit_call(op, input))
        .map_err(|m| Error::Run(format!("kernel `{name}` panicked: {m}")))
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};
    use std::thread::ThreadId;

    use super::*;
    use crate::bench::{InputState, Repeated};
    use crate::kernel::Registry;

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

    #[test]
    fn stage_conditions_name_the_pipeline_and_read_back() {
        let how = Conditions {
            input: InputState::Remote,
            ..stage_of(1, &["qsort", "inc"])
        };
        assert_eq!(how.suffix(), "_remote_stage2_of_qsort_then_inc");
        assert_eq!(
            Conditions::parse("inc_remote_stage2_of_qsort_then_inc"),
            ("inc", how.clone())
        );
        assert_eq!(how.alone(), Conditions::from(InputState::Remote));
        assert_eq!(
            Conditions::parse("my_block_stage3_of_a_then_my_block_then_c"),
            ("my_block", stage_of(2, &["a", "my_block", "c"]))
        );
        // Only the form `suffix` writes is read as a stage; anything else is a name.
        for name in [
            "my_stage",
            "x_stage0_of_a_then_b",
            "x_stage3_of_a_then_b",
            "x_stage1_of_a",
            "x_stage01_of_a_then_b",
            "x_stage1_of_a_then_",
            "x_stagex_of_a_then_b",
        ] {
            assert_eq!(Conditions::parse(name), (name, Conditions::default()));
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
                if std::thread::current().name() == Some(crate::bench::TIMED_THREAD_NAME) {
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
        let mut s =
            KernelSampler::staged(&reg, 1024, &Inputs::default(), &spec, 1 << 30, how).unwrap();
        let p = crate::bench::sample_point(&spec, &mut s).unwrap();
        // A repetition streams thousands of calls of `inc` at x = 1024: many windows,
        // summarised as quantiles, ascending, around the repetition's mean (1). The
        // window means of a repetition average to about its mean, whatever the machine.
        assert_eq!(p.phases.len(), crate::bench::PHASE_QUANTILES, "{p:?}");
        assert!(p.phases.windows(2).all(|w| w[0] <= w[1]), "{:?}", p.phases);
        assert!(p.phases.iter().all(|r| *r > 0.0 && r.is_finite()));
        let mean = p.phases.iter().sum::<f64>() / p.phases.len() as f64;
        assert!((0.5..2.0).contains(&mean), "{:?}", p.phases);
        assert!(p.phases[0] <= 1.05 && *p.phases.last().unwrap() >= 0.95);
        assert!(s.take_phases().is_empty(), "taken by the summary");
        // A block timed alone has none.
        let inc = reg.get("inc").unwrap().as_ref();
        let alone = crate::bench::time_kernel(inc, 1024, &Inputs::default(), &spec, 1 << 30);
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
            name.as_deref() == Some(crate::bench::TIMED_THREAD_NAME)
                || name.as_deref() == Some(crate::bench::LOAD_THREAD_NAME)
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
            (&["qsort", "map"][..], "not a sequential block"),
        ] {
            let err =
                KernelSampler::staged(&reg, 64, &inputs, &spec, 1 << 30, stage_of(0, kernels))
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
        let mut s =
            KernelSampler::staged(&reg, 64, &Inputs::default(), &spec, 1 << 30, how).unwrap();
        armed.store(true, Ordering::Release);
        let err = s.one().unwrap_err().to_string();
        assert!(err.contains("timed boom"), "{err}");
    }
}
