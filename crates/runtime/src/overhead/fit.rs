//! Measured points → the fits a calibration stores, done once, when calibrating: the
//! wake-up's straight lines through its points ([`WakeCalibration::fit`]), the busy
//! hand-off's rise over its no-slack figure ([`HandoffCalibration::ramp_knots`]), the busy
//! jobs' saturating line ([`job_busy_of`]) and the busy pools' figure ([`pool_busy_of`]);
//! and the straight lines as the saturating terms composition adds ([`wake_segments`]).

use crate::bench::stats;

use super::calibration::{
    HandoffCalibration, JobBusy, JobCost, JobPoint, PoolBusy, WakeCalibration, WakePoint,
};

/// Share of the wake-up cap under which a point's extra counts as noise (`knots`). A
/// twentieth: the busy points' extras spread by about 80 ns, and on a host whose cap is
/// 9 µs a fifth zeroed the 1.6 µs that a wait of 4 µs costs, so `pipe(inc, nop)` at
/// x = 4,096 (a wait of 3.8 µs) was predicted 30–40% fast.
pub const WAKE_FLOOR: f64 = 0.05;

/// Busy times of the wake-up calibration short enough that the waiting stage never
/// sleeps: their `pipe − stage` is the baseline of the wake-up fit, ns.
pub const WAKE_BASELINE_NS: f64 = 2_000.0;

impl WakeCalibration {
    /// The wake-up calibration of measured `points`: its knots fitted on the points
    /// whose waiting stage could have slept with workers that spin `spin_ns` before
    /// sleeping (`slept_points`), over the baseline of `pipe(nop, nop)`'s extra over
    /// `nop` and the `nop` stage (`fit_wake_knots`).
    pub fn fit(
        points: Vec<WakePoint>,
        pipe_nop_extra_ns: f64,
        nop_stage_ns: f64,
        spin_ns: f64,
    ) -> WakeCalibration {
        let slept = slept_points(&points, nop_stage_ns, spin_ns);
        WakeCalibration {
            knots: fit_wake_knots(&slept, pipe_nop_extra_ns, nop_stage_ns),
            points,
        }
    }
}

/// The wake-up cost through the calibrated points: `(wait, extra)` knots with straight
/// lines between them ([`wake_segments`]). The extra of a point is `pipe − stage` less
/// that of the busy pipelines that wait too briefly to sleep — the median over the points
/// of at most [`WAKE_BASELINE_NS`] (`pipe_nop_extra`, `pipe(nop, nop)`'s extra over
/// `nop`, without such points), whose own extras count as none: measured on the same
/// streams, it is the hand-off a busy pipeline pays anyway (composition adds it
/// separately, [`HandoffCalibration`]), where `pipe(nop, nop)`'s own median moves with the
/// host (258–601 ns from one calibration to another). The wait is `stage − nop_stage`.
/// Extras under [`WAKE_FLOOR`] of the cap (the median of the two longest waits' extras)
/// count as none — noise, not a wake-up; the rest is made non-decreasing (adjacent
/// violators pooled: a longer wait does not cost less). The knots start at the last wait
/// that costs nothing. Empty when nothing costs extra.
pub(crate) fn fit_wake_knots(
    points: &[WakePoint],
    pipe_nop_extra_ns: f64,
    nop_stage_ns: f64,
) -> Vec<(f64, f64)> {
    let busy: Vec<f64> = points
        .iter()
        .filter(|p| p.spin_ns <= WAKE_BASELINE_NS)
        .map(|p| p.pipe_ns - p.stage_ns)
        .collect();
    if busy.is_empty() {
        return knots(&wake_extras(points, pipe_nop_extra_ns, nop_stage_ns));
    }
    // The busy points are the baseline: what one of them has over their median is
    // noise, not a wake-up (counted, it raised every longer wait's cost by half the busy
    // points' spread, 18–45 ns).
    let extras: Vec<(f64, f64)> = wake_extras(points, stats::median(&busy), nop_stage_ns)
        .into_iter()
        .zip(points)
        .map(|((wait, extra), p)| {
            (
                wait,
                if p.spin_ns <= WAKE_BASELINE_NS {
                    0.0
                } else {
                    extra
                },
            )
        })
        .collect();
    knots(&extras)
}

/// The wake-up points a fit may use when the workers spin `spin_ns` before they sleep:
/// the busy ones of the baseline (at most [`WAKE_BASELINE_NS`]) and those whose `nop`
/// stage waits (`stage − nop_stage`) longer than the spin. A shorter wait is spun
/// through: the waiting stage is awake when its element comes, and whatever the point
/// read is the host's. With a spin of 1 ms, a calibration read 0–88 ns at waits of
/// 6–24 µs and 6,962 ns at 35 µs, where `spin(32 µs)` alone had run 9% slow: composed,
/// that point added 5.4 µs to every pipeline of `qsort` at x = 1,024 (15–16% too slow).
/// All the points without a spin.
pub(crate) fn slept_points(
    points: &[WakePoint],
    nop_stage_ns: f64,
    spin_ns: f64,
) -> Vec<WakePoint> {
    points
        .iter()
        .filter(|p| p.spin_ns <= WAKE_BASELINE_NS || p.stage_ns - nop_stage_ns > spin_ns)
        .cloned()
        .collect()
}

/// `(wait, extra)` of each wake-up point: the wait `stage − nop_stage` of its `nop`
/// stage, the extra `pipe − stage − baseline`.
fn wake_extras(points: &[WakePoint], baseline_ns: f64, nop_stage_ns: f64) -> Vec<(f64, f64)> {
    points
        .iter()
        .map(|p| {
            (
                (p.stage_ns - nop_stage_ns).max(0.0),
                p.pipe_ns - p.stage_ns - baseline_ns,
            )
        })
        .collect()
}

/// Non-decreasing straight lines through `(x, extra)` points, as knots: negative extras
/// and extras under [`WAKE_FLOOR`] of the cap (the median of the two largest `x`'s
/// extras) count as none, adjacent violators are pooled, and the knots start at the last
/// point that costs nothing (at `(0, 0)` when even the first costs). Empty when nothing
/// costs extra.
pub(crate) fn knots(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut sorted: Vec<(f64, f64)> = points
        .iter()
        .filter(|p| p.0.is_finite() && p.1.is_finite())
        .map(|&(t, e)| (t, e.max(0.0)))
        .collect();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    let top: Vec<f64> = sorted.iter().rev().take(2).map(|p| p.1).collect();
    let cap = stats::median(&top);
    if cap.is_nan() || cap <= 0.0 {
        return Vec::new();
    }
    let floor = WAKE_FLOOR * cap;
    // Pool adjacent violators: blocks of (mean, count), non-decreasing.
    let mut blocks: Vec<(f64, usize)> = Vec::new();
    for &(_, e) in &sorted {
        blocks.push((if e < floor { 0.0 } else { e }, 1));
        while blocks.len() > 1 && blocks[blocks.len() - 2].0 > blocks[blocks.len() - 1].0 {
            let (b, nb) = blocks.pop().unwrap_or((0.0, 0));
            let (a, na) = blocks.pop().unwrap_or((0.0, 0));
            blocks.push(((a * na as f64 + b * nb as f64) / (na + nb) as f64, na + nb));
        }
    }
    let values = blocks.iter().flat_map(|&(v, n)| std::iter::repeat_n(v, n));
    let curve: Vec<(f64, f64)> = sorted.iter().map(|p| p.0).zip(values).collect();
    match curve.iter().rposition(|p| p.1 <= 0.0) {
        Some(last_free) => curve[last_free..].to_vec(),
        // Even the shortest wait costs: the line starts at no wait, no cost.
        None => std::iter::once((0.0, 0.0)).chain(curve).collect(),
    }
}

/// Knots ([`knots`]) as a sum of saturating terms, `(from, slope, rise)`: each adds
/// `min(rise, max(0, slope · (W − from)))`, so the sum is the straight lines between the
/// knots, flat beyond the last. Segments that do not rise are left out.
pub(crate) fn wake_segments(knots: &[(f64, f64)]) -> Vec<(f64, f64, f64)> {
    knots
        .windows(2)
        .filter_map(|w| {
            let ((w0, v0), (w1, v1)) = (w[0], w[1]);
            let (run, rise) = (w1 - w0, v1 - v0);
            (run > 0.0 && rise > 0.0 && (rise / run).is_finite()).then(|| (w0, rise / run, rise))
        })
        .collect()
}

impl HandoffCalibration {
    /// What a slack adds over [`HandoffCalibration::equal_ns`]: `(slack, extra − equal)`
    /// knots through the points (`knots`: non-decreasing, rises under a twentieth of the
    /// largest count as none), none before the first, the last one's beyond it. Empty
    /// when no slack costs more, or without points at no slack.
    pub fn ramp_knots(&self, minimum: bool) -> Vec<(f64, f64)> {
        let Some(equal) = self.equal_ns(minimum) else {
            return Vec::new();
        };
        let points: Vec<(f64, f64)> = self
            .points
            .iter()
            .map(|p| (p.slack_ns.max(0.0), p.extra_ns(minimum) - equal))
            .collect();
        knots(&points)
    }
}

/// Fit `min(cap, slope · T)` to measured extra costs `(T, extra)`, negative extras
/// counting as none: the cap is the median of the two slowest points; the slope is the
/// least squares line through the origin of the points below 80% of the cap (the
/// smallest point when none is). `(0, 0)` when nothing costs extra.
pub(crate) fn fit_saturating(points: &[(f64, f64)]) -> (f64, f64) {
    let extra: Vec<(f64, f64)> = points.iter().map(|&(t, e)| (t, e.max(0.0))).collect();
    if extra.is_empty() {
        return (0.0, 0.0);
    }
    let mut sorted = extra;
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    let top: Vec<f64> = sorted.iter().rev().take(2).map(|p| p.1).collect();
    let cap = stats::median(&top);
    if cap <= 0.0 {
        return (0.0, 0.0);
    }
    let mut below: Vec<(f64, f64)> = sorted.iter().copied().filter(|p| p.1 < 0.8 * cap).collect();
    if below.is_empty() {
        below.push(sorted[0]);
    }
    let (num, den) = below
        .iter()
        .fold((0.0, 0.0), |(n, d), (t, w)| (n + t * w, d + t * t));
    let slope = if den > 0.0 { num / den } else { 0.0 };
    (slope, cap)
}

/// [`JobBusy`] from its measured points: the extra of a point is
/// `job − ideal − trivial job` (the trivial job of the same style and thread count, 0
/// when none was measured), fitted with [`fit_saturating`] against the ideal time.
pub(crate) fn job_busy_of(
    style: &str,
    threads: usize,
    points: Vec<JobPoint>,
    trivial: &[JobCost],
) -> JobBusy {
    let base = trivial
        .iter()
        .find(|j| j.reduce == style && j.threads == threads)
        .map_or(0.0, |j| j.ns_per_job);
    let extra: Vec<(f64, f64)> = points
        .iter()
        .map(|p| (p.ideal_ns, p.job_ns - p.ideal_ns - base))
        .collect();
    let (slope, cap_ns) = fit_saturating(&extra);
    JobBusy {
        reduce: style.into(),
        threads,
        points,
        slope,
        cap_ns,
    }
}

/// [`PoolBusy`] from its measured points: the extra of each point is
/// `pool − single/n` (the spin alone through one stage is `T + stage`); the median over
/// the points.
pub(crate) fn pool_busy_of(threads: usize, points: Vec<(f64, f64, f64)>) -> PoolBusy {
    let extras: Vec<f64> = points
        .iter()
        .map(|&(_, pool, single)| pool - single / threads as f64)
        .collect();
    PoolBusy {
        threads,
        extra_ns: if extras.is_empty() {
            0.0
        } else {
            stats::median(&extras)
        },
        points,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::overhead::calibrate::JOB_SPINS;
    use crate::overhead::testing::{fit_wake, segments_at, wake_point, wake_points, TOL};

    #[test]
    fn the_busy_wake_points_are_the_baseline_and_cost_nothing_themselves() {
        // Busy points 200 ns apart around their median (the baseline): the one above it
        // is noise (over the floor, a twentieth of the 1,500 ns cap), so the cost rises
        // from nothing, not from 100 ns at the shortest wait.
        let pts = [
            wake_point(1000.0, 100.0),
            wake_point(2000.0, -100.0),
            wake_point(6000.0, 1000.0),
            wake_point(8000.0, 2000.0),
        ];
        // `wake_point` adds 100 ns, the busy median 100 ns too: extras 0, 0, 1000, 2000
        // at waits of stage − 100.
        let k = fit_wake_knots(&pts, 80.0, 100.0);
        assert_eq!(k, [(1900.0, 0.0), (5900.0, 1000.0), (7900.0, 2000.0)]);
        // Without busy points the baseline is `pipe(nop, nop)`'s extra, and a point's
        // extra over it counts.
        let k = fit_wake_knots(&pts[2..], 80.0, 100.0);
        assert_eq!(k, [(0.0, 0.0), (5900.0, 1020.0), (7900.0, 2020.0)]);
        // Counted as they are, the busy point above the median would keep its 100 ns.
        let counted = knots(&wake_extras(&pts, 100.0, 100.0));
        assert_ne!(
            counted[..2],
            [(1900.0, 0.0), (5900.0, 1000.0)],
            "{counted:?}"
        );
    }

    #[test]
    fn wake_knots_go_through_the_points_from_the_last_wait_that_costs_nothing() {
        // A calibration's `spin(T)` on arrays (extras over pipe(nop, nop), ns): nothing up
        // to 4 µs, then 0.86, 0.98, 1.64, 3.36 and 4.25 µs; a dip at 24 µs is pooled with
        // its neighbour (a longer wait does not cost less).
        let pts = [
            (1000.0, 40.0),
            (2000.0, -10.0),
            (4000.0, 70.0),
            (6000.0, 860.0),
            (8000.0, 980.0),
            (12000.0, 1640.0),
            (16000.0, 3360.0),
            (24000.0, 3000.0),
            (32000.0, 4250.0),
        ];
        let k = knots(&pts);
        // 70 ns is under a twentieth of the cap (median of 3000 and 4250): no cost at
        // 4 µs.
        assert_eq!(k[0], (4000.0, 0.0));
        assert_eq!(
            &k[1..4],
            &[(6000.0, 860.0), (8000.0, 980.0), (12000.0, 1640.0)]
        );
        // 3360 and 3000 pooled to their mean.
        assert!(
            (k[4].1 - 3180.0).abs() < TOL && (k[5].1 - 3180.0).abs() < TOL,
            "{k:?}"
        );
        assert_eq!(k[6], (32000.0, 4250.0));
        let segs = wake_segments(&k);
        // The flat pooled stretch adds no term.
        assert_eq!(segs.len(), 5, "{segs:?}");
        // The terms sum to the straight lines between the knots, flat beyond the last.
        for (w, want) in [
            (0.0, 0.0),
            (4000.0, 0.0),
            (5000.0, 430.0),
            (7000.0, 920.0),
            (10000.0, 1310.0),
            (20000.0, 3180.0),
            (28000.0, 3715.0),
            (32000.0, 4250.0),
            (1e6, 4250.0),
        ] {
            let got = segments_at(&segs, w);
            assert!((got - want).abs() < 1e-6, "at {w}: {got} against {want}");
        }
        // A calibration on an Intel host (extras over the busy points, ns): the cap is
        // 9 µs, and the 1.6 µs that a wait of 4 µs costs is a wake-up, not noise.
        let intel = [
            (1080.0, 40.0),
            (2100.0, -40.0),
            (4140.0, 1621.0),
            (6180.0, 2158.0),
            (8260.0, 2912.0),
            (12320.0, 4433.0),
            (16400.0, 7579.0),
            (24580.0, 7689.0),
            (32560.0, 10396.0),
        ];
        let k = knots(&intel);
        assert_eq!(&k[..2], &[(2100.0, 0.0), (4140.0, 1621.0)], "{k:?}");
        // Costs from the shortest wait: the lines start at no wait, no cost.
        let k = knots(&[(1000.0, 500.0), (2000.0, 1000.0)]);
        assert_eq!(k, vec![(0.0, 0.0), (1000.0, 500.0), (2000.0, 1000.0)]);
        // Nothing costs extra, or nothing usable: no knots, no terms.
        assert!(knots(&[(1000.0, -5.0), (2000.0, 0.0)]).is_empty());
        assert!(knots(&[]).is_empty());
        assert!(knots(&[(f64::NAN, 1.0)]).is_empty());
        assert!(wake_segments(&[]).is_empty());
    }

    #[test]
    fn waits_the_workers_spin_through_pay_no_wake_up() {
        // Next to nothing up to 24 µs, then one disturbed point at 32 µs.
        let points = wake_points(&[0.0, 0.0, 0.0, 0.0, 88.0, 88.0, 88.0, 88.0, 6962.0]);
        let free = fit_wake(points.clone(), 0.0);
        assert_eq!(
            free.knots.last().map(|k| k.1),
            Some(6962.0),
            "without a spin every point counts"
        );
        // Spinning 1 ms, every calibrated wait is spun through: no knots, and the points
        // are kept as measured.
        let spun = fit_wake(points.clone(), 1e6);
        assert!(spun.knots.is_empty(), "{:?}", spun.knots);
        assert_eq!(spun.points, points);
        // Extras of 129 down to -405 ns, all spun through: no knots either.
        let noise = wake_points(&[129.0, 81.0, 84.0, 94.0, 70.0, 60.0, -32.0, -9.0, -405.0]);
        assert!(fit_wake(noise, 1e6).knots.is_empty());
        // A spin of 10 µs: the waits beyond it still count, the busy baseline too.
        let kept = slept_points(&points, 100.0, 10_000.0);
        let spins: Vec<f64> = kept.iter().map(|p| p.spin_ns).collect();
        assert_eq!(spins, [1100.0, 12100.0, 16100.0, 24100.0, 32100.0]);
        assert_eq!(slept_points(&points, 100.0, 0.0), points);
    }

    #[test]
    fn the_wake_up_baseline_is_the_busy_pipelines_own_hand_off() {
        // `wake_point` adds 100 ns; the baseline's pipe(nop, nop) extra is 80 and its
        // `nop` stage 100: waits of T − 100, extras of the given ones + 20.
        let extras = [
            0.0, 0.0, 0.0, 1000.0, 1200.0, 2000.0, 3000.0, 3500.0, 4000.0,
        ];
        let points = wake_points(&extras);
        let w = fit_wake(points.clone(), 0.0);
        assert_eq!(w.knots, fit_wake_knots(&points, 80.0, 100.0));
        assert_eq!(w.knots[0], (4000.0, 0.0));
        // The baseline is the busy pipelines' own hand-off at 1–2 µs, not pipe(nop, nop)'s:
        // every point 220 ns slower, or a disturbed pipe(nop, nop), leaves the knots.
        let slower: Vec<WakePoint> = points
            .iter()
            .map(|p| WakePoint {
                pipe_ns: p.pipe_ns + 220.0,
                ..p.clone()
            })
            .collect();
        assert_eq!(fit_wake_knots(&slower, 80.0, 100.0), w.knots);
        assert_eq!(fit_wake_knots(&points, 500.0, 100.0), w.knots);
    }

    #[test]
    fn busy_jobs_fit_the_extra_over_the_ideal_and_the_trivial_job() {
        let trivial = [JobCost {
            reduce: "pairwise".into(),
            threads: 2,
            ns_per_job: 2_000.0,
        }];
        // Two threads, 8 inputs: ideal = 4·T. Extra over ideal + trivial: 0.5·ideal up
        // to 30 µs.
        let points: Vec<JobPoint> = JOB_SPINS
            .iter()
            .map(|&t| {
                let ideal = 4.0 * t as f64;
                JobPoint {
                    spin_ns: t as f64,
                    ideal_ns: ideal,
                    job_ns: ideal + 2_000.0 + (0.5 * ideal).min(30_000.0),
                }
            })
            .collect();
        let b = job_busy_of("pairwise", 2, points.clone(), &trivial);
        assert!((b.cap_ns - 30_000.0).abs() < 1e-6, "{}", b.cap_ns);
        assert!((b.slope - 0.5).abs() < 1e-9, "{}", b.slope);
        // No trivial job of that style and count measured: nothing is subtracted.
        let b = job_busy_of("per_key", 2, points.clone(), &trivial);
        assert!((b.cap_ns - 32_000.0).abs() < 1e-6, "{}", b.cap_ns);
        // Jobs no slower than ideal + trivial: no busy cost at all.
        let flat: Vec<JobPoint> = points
            .iter()
            .map(|p| JobPoint {
                job_ns: p.ideal_ns + 1_000.0,
                ..p.clone()
            })
            .collect();
        let b = job_busy_of("pairwise", 2, flat, &trivial);
        assert_eq!((b.slope, b.cap_ns), (0.0, 0.0));
    }
}
