//! The busy pipeline hand-off ([`HandoffCalibration`]): `pipe(spin(T), spin(T − d))` and
//! `pipe(spin(T), nop)` against `spin(T)`.

use super::mapreduce::{spin_share, JOB_INPUTS};
use super::rig::{array_program, array_stream, median_min, side_by_side_samples, spin};
use crate::ctx::Config;
use crate::error::Error;
use crate::overhead::calibration::{HandoffCalibration, HandoffPoint};

/// Mean busy time of the slower stage in the hand-off calibration, ns: about the
/// shortest stage times of the paper suite's pipelines (`inc` at x = 1,024 is 1.1 µs), and
/// short enough that the waiting stage still spins on its queue
/// ([`WAKE_BASELINE_NS`](crate::overhead::WAKE_BASELINE_NS)).
pub const HANDOFF_SPIN_NS: u64 = 2_000;

/// Slacks of the hand-off calibration beyond none, ns: the second stage spins
/// `HANDOFF_SPIN_NS − d` (and a last point passes to `nop`).
pub const HANDOFF_SLACKS: [u64; 3] = [250, 500, 1_000];

/// Busy times of the hand-off calibration's pipelines of two equal stages, ns.
pub const HANDOFF_EQUAL_SPINS_NS: [u64; 3] = [1_000, 1_500, 2_000];

/// A block busy for `ns` times its call's share of
/// [`JOB_SPIN_SPREAD`](crate::overhead::JOB_SPIN_SPREAD) (calls counted from `first`)
/// without touching memory, passing its element through.
fn varying_spin_block<E: Send + 'static>(ns: u64, first: usize) -> crate::Pattern<E, E> {
    let calls = std::sync::atomic::AtomicUsize::new(first);
    crate::block(format!("spin{ns}"), move |v: E| {
        let i = calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        spin((ns as f64 * spin_share(i)) as u64);
        v
    })
}

/// Measure the hand-off of busy pipelines ([`HandoffCalibration`]): with no slack at
/// each busy time of [`HANDOFF_EQUAL_SPINS_NS`], for each slack of [`HANDOFF_SLACKS`] and
/// with the `nop` neighbour, the pipeline side by side with its slower stage alone
/// (stream driver, streams of about 20 ms of arrays like the wake-up calibration's,
/// alternating after one untimed stream each).
pub(crate) fn calibrate_handoff(
    repetitions: usize,
    config: &Config,
) -> Result<HandoffCalibration, Error> {
    type Arrays = crate::Pattern<Vec<u64>, Vec<u64>>;
    // The second stage's calls start half a job later, so the two vary differently.
    let second = JOB_INPUTS / 2;
    let nop = || crate::block("nop", std::hint::black_box::<Vec<u64>>);
    // (slower stage's busy time, slack, second stage)
    let mut designs: Vec<(u64, u64, Arrays)> = HANDOFF_EQUAL_SPINS_NS
        .iter()
        .map(|&ns| (ns, 0, varying_spin_block(ns, second)))
        .collect();
    let ns = HANDOFF_SPIN_NS;
    designs.extend(
        HANDOFF_SLACKS
            .iter()
            .map(|&d| (ns, d, varying_spin_block(ns.saturating_sub(d), second))),
    );
    designs.push((ns, ns, nop()));
    let mut points = Vec::new();
    for (ns, slack, second) in designs {
        let single = array_program(varying_spin_block(ns, 0), config)?;
        let piped = array_program(crate::pipe(varying_spin_block(ns, 0), second), config)?;
        let (a, b) = side_by_side_samples(&single, &piped, array_stream(ns), repetitions)?;
        let ((stage_ns, stage_min_ns), (pipe_ns, pipe_min_ns)) = (median_min(&a), median_min(&b));
        points.push(HandoffPoint {
            spin_ns: ns as f64,
            slack_ns: slack as f64,
            stage_ns,
            stage_min_ns,
            pipe_ns,
            pipe_min_ns,
        });
    }
    Ok(HandoffCalibration { points })
}
