//! Unit tests of pipeline stages ([`Stage`]): the block timed while the other stages of
//! its pipeline run on threads of their own, on the same stream.
//!
//! [`Stage`]: super::conditions::Stage

use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};

use super::clock::clock_read_ns;
use super::rig::{call, Rig};
use super::series::PHASE_WINDOW;
use super::stream::{copies, evict_unless_cold, not_copyable};
use super::threads::{on_core, LOAD_THREAD_NAME, TIMED_THREAD_NAME};
use crate::data::Data;
use crate::error::{Error, LostThread, UnitTestError};

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

/// The longest call of any stage of `rig` on what the stages before it return, seconds:
/// what sizes the stream of a stage's unit test. Each stage is called twice on the same
/// element where it can be copied (the first call pays for cold caches, the second is
/// kept).
pub(super) fn slowest_call(rig: &Rig) -> Result<f64, Error> {
    let mut slowest = 1e-9_f64;
    let mut element = rig.first[0]
        .try_clone()
        .ok_or_else(|| not_copyable(&rig.names[0]))?;
    for (op, name) in rig.ops.iter().zip(&rig.names) {
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
    Ok(slowest)
}

/// One repetition of a stage's unit test: a fresh stream of `len` elements through the
/// whole pipeline of `rig`, every stage on a thread of its own pinned to a core (stage j
/// on core j); ns per call of the timed stage, and its phases
/// ([`PointStats::phases`](super::series::PointStats::phases), not yet summarised). Every
/// stage runs the same timed loop ([`time_stage`]), so that the timed stage's neighbours
/// run at the pace it does.
pub(super) fn repetition(rig: &Rig, len: usize) -> Result<(f64, Vec<f64>), Error> {
    let n = rig.ops.len();
    let stream = copies(&rig.first, 0, len.max(1)).ok_or_else(|| not_copyable(rig.timed_name()))?;
    evict_unless_cold(&stream);
    // The stages wait as a pinned program's workers do, by the program's own rule
    // (spin before sleeping when every stage has a core of its own).
    let pinned = crate::ctx::Config {
        pin: true,
        ..crate::ctx::Config::default()
    };
    let spin = crate::ctx::Ctx::gated(&pinned, n).spin;
    let clock = clock_read_ns();
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
            .map(|t| t.join().unwrap_or_else(|_| Err(LostThread::Stage.into())))
            .collect()
    });
    // The first stage that failed, in pipeline order: the ones after it failed (or
    // saw nothing) because of it.
    let timed = timed.into_iter().collect::<Result<Vec<Timed>, Error>>()?;
    let Timed { mean, phases } = timed
        .into_iter()
        .nth(rig.index)
        .expect("the timed stage ran");
    Ok((mean, phases))
}

/// What [`time_stage`] measured of one stage in one repetition.
struct Timed {
    /// ns per call.
    mean: f64,
    /// The phases ([`PointStats::phases`](super::series::PointStats::phases)).
    phases: Vec<f64>,
}

/// Take the elements of `input` one at a time, time the call of `block` (named `name`)
/// on each, and hand what it returns on to `output` at once (the last stage keeps it
/// until the stream ends, as a program's last queue does), waiting as a pinned program's
/// worker does (`spin`, [`crate::ctx::take`] and [`crate::ctx::put`]): ns per call less
/// one clock reading (`clock`), and the phases
/// ([`PointStats::phases`](super::series::PointStats::phases)): the mean
/// call of each run of at least [`PHASE_WINDOW`] consecutive calls over the mean of all.
///
/// One element at a time, as the program runs its stages. A rig that timed a stage on
/// groups of what was waiting and handed each group on when its calls were done ran the
/// first stage of `pipe(inc, inc)` at x = 4,096 in 3.2 µs per call where the program's
/// took 3.9 µs, repetition by repetition in turn with the program; handing on every
/// element as soon as its call returns, the rig's took 3.6–4.0 µs (docs/runtime.md, "Stage tests").
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
        return Err(UnitTestError::Starved {
            stage: name.to_string(),
        }
        .into());
    }
    Ok(done(total, calls, windows))
}
