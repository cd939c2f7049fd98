//! Calibrations and points the tests of the overhead modules share.

use super::calibrate::{BLOCK_CALL_X, WAKE_SPINS};
use super::calibration::{
    BlockCall, Calibration, HandoffCalibration, HandoffPoint, PatternCost, WakeCalibration,
    WakePoint,
};
use super::store::CALIBRATION_VERSION;

/// Sums of a few binary fractions: exact in f64 up to rounding of the last bit.
pub(crate) const TOL: f64 = 1e-9;

/// A calibration of 2 cores: `nop` 100 ns, `seq(nop, nop)` 105, `pipe(nop, nop)` 180,
/// `tpool(1, nop)` 110, `tpool(2, nop)` 90 (medians and fastest repetitions alike); no
/// wake-up, no busy hand-off (pipelines add `pipe(nop, nop)`'s), no block call.
pub(crate) fn cal() -> Calibration {
    let p = |term: &str, ns: f64| PatternCost {
        term: term.into(),
        ns_per_element: ns,
        baseline_ns_per_element: ns,
        cv: 0.0,
        baseline_cv: 0.0,
        stream_ns_per_element: ns,
        stream_baseline_ns_per_element: ns,
        stream_min_ns_per_element: ns,
    };
    Calibration {
        version: CALIBRATION_VERSION,
        host: "h".into(),
        cores: 2,
        elements: 10,
        repetitions: 1,
        pipe_wake: WakeCalibration {
            points: Vec::new(),
            knots: Vec::new(),
        },
        pipe_handoff: HandoffCalibration { points: Vec::new() },
        mapreduce: Vec::new(),
        mapreduce_busy: Vec::new(),
        pool_busy: Vec::new(),
        pinned: false,
        spin_us: 0,
        block_call: BlockCall {
            x: BLOCK_CALL_X,
            ns: 0.0,
            min_ns: 0.0,
        },
        patterns: vec![
            p("nop", 100.0),
            p("seq(nop, nop)", 105.0),
            p("pipe(nop, nop)", 180.0),
            p("tpool(1, nop)", 110.0),
            p("tpool(2, nop)", 90.0),
        ],
    }
}

/// A wake-up point of a stage of `stage` ns whose pipeline adds 100 + `extra` ns.
pub(crate) fn wake_point(stage: f64, extra: f64) -> WakePoint {
    WakePoint {
        spin_ns: stage,
        stage_ns: stage,
        pipe_ns: stage + 100.0 + extra,
    }
}

/// Wake-up points at [`WAKE_SPINS`] with the given extras over the busy baseline
/// (with `cal()`'s `nop` stage of 100 ns and `wake_point`'s 100: waits of T, stages
/// of T + 100).
pub(crate) fn wake_points(extras: &[f64]) -> Vec<WakePoint> {
    WAKE_SPINS
        .iter()
        .zip(extras)
        .map(|(&t, e)| wake_point(t as f64 + 100.0, e - 20.0))
        .collect()
}

/// [`WakeCalibration::fit`] over `cal()`'s baseline: `pipe(nop, nop)` 80 ns over a `nop`
/// stage of 100.
pub(crate) fn fit_wake(points: Vec<WakePoint>, spin_ns: f64) -> WakeCalibration {
    WakeCalibration::fit(points, 80.0, 100.0, spin_ns)
}

/// The sum of `segments` at wait `w`, as composition adds them.
pub(crate) fn segments_at(segments: &[(f64, f64, f64)], w: f64) -> f64 {
    segments
        .iter()
        .map(|&(from, slope, rise)| rise.min((slope * (w - from)).max(0.0)))
        .sum()
}

/// A hand-off calibration whose pipelines add, over one stage, 60 ns (fastest
/// repetitions 50) with no slack, 200 (190) at 250 ns, 210 (210) at 500 and 205
/// (200) with a `nop` neighbour.
pub(crate) fn handoff() -> HandoffCalibration {
    let p = |slack_ns: f64, pipe_ns: f64, pipe_min_ns: f64| HandoffPoint {
        spin_ns: 2000.0,
        slack_ns,
        stage_ns: 2000.0,
        stage_min_ns: 1990.0,
        pipe_ns,
        pipe_min_ns,
    };
    HandoffCalibration {
        points: vec![
            p(0.0, 2060.0, 2040.0),
            p(250.0, 2200.0, 2180.0),
            p(500.0, 2210.0, 2200.0),
            p(2000.0, 2205.0, 2190.0),
        ],
    }
}
