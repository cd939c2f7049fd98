//! A calibration → the core's [`Overhead`] of a design: the per-element constant (one
//! stage, each pattern node's extra over it, less the block calls composition counts
//! twice) and the saturating terms on a pipeline's slack, a busy pool's or a busy job's
//! time. [`Calibration::for_statistic`] chooses the statistic (fastest repetitions or
//! medians), [`Composer::overhead`] composes.

use perfcompose_core::compose::predict::{Overhead, Saturating};
use perfcompose_core::measure::Measure;

use super::calibrate::POOL_SPINS;
#[cfg(doc)]
use super::calibration::{BlockCall, HandoffCalibration, JobCost, PoolBusy, WakeCalibration};
use super::calibration::{Calibration, JobBusy, PatternCost};
use super::fit::wake_segments;
use crate::kernel::Registry;
use crate::plan::Plan;

/// Share of a pipeline's slowest stage time within which its slack counts as none for
/// the rise of the busy hand-off ([`HandoffCalibration::ramp_knots`], composed on `slack −
/// 0.1 · slowest`). The calibrated rise is a step (full by 250 ns), but a design's slack
/// is the difference of two stage models: the first and the `_remote` second stage of
/// `pipe(inc, inc)`, the same kernel, were modelled 4–6% apart at x = 1,024–4,096 while the
/// program ran as fast as one `inc` stage; on the full rise it was predicted 12.8% too
/// slow at x = 1,024.
///
pub const HANDOFF_SLACK_RESOLUTION: f64 = 0.1;

impl Calibration {
    /// Compose with the statistic the measurements are reduced with: with
    /// [`Measure::Minimum`] the patterns' and the block call's fastest repetitions, else
    /// their medians. Other work on a shared machine only slows a calibration's
    /// repetitions down, as it does a block's. The wake-up, busy-pool, job and hand-off
    /// rise calibrations stay as they were fitted.
    pub fn for_statistic(&self, measure: Measure) -> Composer<'_> {
        Composer {
            calibration: self,
            minimum: measure == Measure::Minimum,
        }
    }

    /// The calibrated cost of one MapReduce job ([`JobCost`]) with the reduction style of
    /// the kernel `reduce` (per key for built-in per-key kernels, pairwise otherwise) and
    /// the nearest calibrated thread count; 0 when none is calibrated.
    pub fn job_ns(&self, reduce: &str, threads: usize) -> f64 {
        let style = job_style(reduce);
        self.mapreduce
            .iter()
            .filter(|j| j.reduce == style)
            .min_by_key(|j| j.threads.abs_diff(threads))
            .map_or(0.0, |j| j.ns_per_job)
    }

    /// The busy-job calibration ([`JobBusy`]) for the kernel `reduce`'s style and the
    /// nearest calibrated thread count.
    pub fn job_busy(&self, reduce: &str, threads: usize) -> Option<&JobBusy> {
        let style = job_style(reduce);
        self.mapreduce_busy
            .iter()
            .filter(|j| j.reduce == style)
            .min_by_key(|j| j.threads.abs_diff(threads))
    }
}

/// A calibration read with the statistic composition uses ([`Calibration::for_statistic`]):
/// what it adds to a design.
#[derive(Clone, Copy, Debug)]
pub struct Composer<'a> {
    calibration: &'a Calibration,
    /// The patterns' and the block call's fastest repetitions instead of their medians.
    minimum: bool,
}

impl Composer<'_> {
    /// What composition adds for a calibrated term under the stream driver of `validate`.
    fn cost(&self, term: &str) -> Option<f64> {
        pattern_ns(&self.calibration.patterns, term, self.minimum)
    }

    /// Per-element cost of one stage on its own thread (the `nop` program).
    pub fn stage_ns(&self) -> f64 {
        self.cost("nop").unwrap_or(0.0)
    }

    /// Extra cost of a task pool of `n` over a single stage: measured for the calibrated
    /// `n`, the nearest calibrated `n` otherwise.
    fn tpool_extra(&self, n: usize) -> f64 {
        let calibrated = self.calibration.patterns.iter().filter_map(|p| {
            let rest = p.term.strip_prefix("tpool(")?;
            let k: usize = rest.split(',').next()?.trim().parse().ok()?;
            Some((k, p.composition_ns(self.minimum)))
        });
        calibrated
            .min_by_key(|(k, _)| k.abs_diff(n))
            .map_or(0.0, |(_, ns)| ns - self.stage_ns())
    }

    /// The per-element overhead of a design: the cost of one stage, plus each pattern
    /// node's extra cost over one stage (`seq(nop, nop)`, `pipe(nop, nop)`,
    /// `tpool(n, nop)` minus `nop`), less one [`BlockCall`] per block as the design
    /// composes its blocks. Exact for the calibrated shapes; an additive estimate
    /// for deeper nestings. A MapReduce job (one element) adds its calibrated job cost
    /// ([`JobCost`]); its map and reduce calls are in that cost's ideal and keep theirs.
    pub fn overhead_ns(&self, plan: &Plan) -> f64 {
        (self.stage_ns() + self.extra(plan)).max(0.0)
    }

    /// The whole overhead of a design, for composition: the constant
    /// [`Composer::overhead_ns`] plus, for every pipeline, the rise of the busy
    /// hand-off with the slack ([`HandoffCalibration`]) and the saturating wake-up cost
    /// ([`WakeCalibration`]), scaled by the task pools around the pipeline
    /// (thread counts capped at the calibrated cores, as composition caps them).
    pub fn overhead(&self, plan: &Plan, source: &str) -> Overhead {
        let mut saturating = Vec::new();
        self.slack_terms(plan, &mut saturating);
        self.busy_pools(plan, 1.0, &mut saturating);
        self.busy_jobs(plan, 1.0, &mut saturating);
        Overhead {
            ns_per_element: self.overhead_ns(plan),
            source: source.to_string(),
            saturating,
            phases: Vec::new(),
        }
    }

    /// What each hand-off of a pipeline of busy stages costs at no slack: the spinning
    /// stages' ([`HandoffCalibration::equal_ns`]), or `pipe(nop, nop)`'s extra over `nop`
    /// when the hand-off calibration has no point at no slack.
    fn busy_handoff_ns(&self) -> f64 {
        match self.calibration.pipe_handoff.equal_ns(self.minimum) {
            Some(equal) => equal,
            None => self
                .cost("pipe(nop, nop)")
                .map_or(0.0, |c| c - self.stage_ns()),
        }
    }

    /// For every task pool of `n` ≤ cores workers with a [`PoolBusy`] calibration: the
    /// cost busy workers add over the `tpool(n, nop)` figure already in
    /// [`Composer::overhead_ns`], `Δ = extra + stage/n − (stage + tpool(n, nop) extra)`,
    /// reached once a worker's task takes the shortest calibrated spin (1 µs): the
    /// saturating term `min(Δ, Δ/1 µs · T)` at the time `T` a worker spends per element.
    fn busy_pools(&self, plan: &Plan, scale: f64, out: &mut Vec<Saturating>) {
        match plan {
            Plan::TPool(n, inner) => {
                let k = (*n).min(self.calibration.cores.max(1));
                if let Some(b) = self.calibration.pool_busy.iter().find(|b| b.threads == *n) {
                    let stage = self.stage_ns();
                    let delta = b.extra_ns + stage / k as f64 - (stage + self.tpool_extra(k));
                    if delta > 0.0 && delta.is_finite() {
                        out.push(Saturating {
                            what: format!("busy workers' hand-off in {plan}"),
                            scale: scale * k as f64,
                            slope: delta / POOL_SPINS[0] as f64,
                            cap_ns: delta,
                            threshold_ns: 0.0,
                            pipeline_slack: None,
                            relative_threshold: 0.0,
                        });
                    }
                }
                self.busy_pools(inner, scale * k as f64, out);
            }
            Plan::Seq(parts) | Plan::Pipe(parts) => {
                parts.iter().for_each(|p| self.busy_pools(p, scale, out))
            }
            Plan::Kernel(_) | Plan::MapReduce { .. } | Plan::Unsupported { .. } => {}
        }
    }

    /// For every MapReduce with a [`JobBusy`] calibration: the saturating cost of waking
    /// its workers for every phase of a job, at the job's time (scaled by the task pools
    /// around it, like [`Composer::busy_pools`]).
    fn busy_jobs(&self, plan: &Plan, scale: f64, out: &mut Vec<Saturating>) {
        match plan {
            Plan::MapReduce {
                reduce, threads, ..
            } => {
                if let Some(b) = self.calibration.job_busy(reduce, *threads) {
                    if b.slope > 0.0 && b.cap_ns > 0.0 {
                        out.push(Saturating {
                            what: format!(
                                "waking the sleeping workers of {plan} for every phase of a job"
                            ),
                            scale,
                            slope: b.slope,
                            cap_ns: b.cap_ns,
                            threshold_ns: 0.0,
                            pipeline_slack: None,
                            relative_threshold: 0.0,
                        });
                    }
                }
            }
            Plan::TPool(n, inner) => {
                let k = (*n).min(self.calibration.cores.max(1));
                self.busy_jobs(inner, scale * k as f64, out)
            }
            Plan::Seq(parts) | Plan::Pipe(parts) => {
                parts.iter().for_each(|p| self.busy_jobs(p, scale, out))
            }
            Plan::Kernel(_) | Plan::Unsupported { .. } => {}
        }
    }

    /// The slack-dependent terms of `plan`'s pipelines, each naming the pipeline whose
    /// slack it depends on: the busy hand-off's rise over its no-slack figure
    /// ([`HandoffCalibration::ramp_knots`]) and the wake-up ([`WakeCalibration`]). The
    /// slowest stage pays them per element to the neighbours that wait for it; one of
    /// each per chain, on the wait of the next slowest stage (two when the slowest sits
    /// in the middle, which this leaves out).
    fn slack_terms(&self, plan: &Plan, out: &mut Vec<Saturating>) {
        let ramp = wake_segments(&self.calibration.pipe_handoff.ramp_knots(self.minimum));
        let wake = wake_segments(&self.calibration.pipe_wake.knots);
        each_pipeline(
            plan,
            self.calibration.cores,
            &mut |pipe, index, scale, stages| {
                if stages.len() < 2 {
                    return;
                }
                curve_terms(
                    format!("busy stages' hand-off at the slack of {pipe}"),
                    &ramp,
                    (index, scale),
                    HANDOFF_SLACK_RESOLUTION,
                    out,
                );
                curve_terms(
                    format!("wake-up cost of the slowest stage's hand-off in {pipe}"),
                    &wake,
                    (index, scale),
                    0.0,
                    out,
                );
            },
        );
    }

    /// ns per block call counted twice by composition ([`BlockCall`]).
    pub fn block_call_ns(&self) -> f64 {
        self.calibration.block_call.ns(self.minimum).max(0.0)
    }

    fn extra(&self, plan: &Plan) -> f64 {
        let stage = self.stage_ns();
        match plan {
            // Its unit test counted the call the calibrated patterns count too.
            Plan::Kernel(_) => -self.block_call_ns(),
            Plan::Unsupported { .. } => 0.0,
            // Measured through one stage of the stream driver, like `nop`.
            Plan::MapReduce {
                reduce, threads, ..
            } => (self.calibration.job_ns(reduce, *threads) - stage).max(0.0),
            Plan::Seq(parts) => {
                let per = self.cost("seq(nop, nop)").map_or(0.0, |c| c - stage);
                per * parts.len().saturating_sub(1) as f64
                    + parts.iter().map(|p| self.extra(p)).sum::<f64>()
            }
            Plan::Pipe(parts) => {
                let per = self.busy_handoff_ns();
                // The slowest stage's (a stage's extra may be negative: its calls).
                per * parts.len().saturating_sub(1) as f64
                    + parts
                        .iter()
                        .map(|p| self.extra(p))
                        .reduce(f64::max)
                        .unwrap_or(0.0)
            }
            // Over the workers that run at once, as composition caps them at the cores.
            Plan::TPool(n, inner) => {
                self.tpool_extra(*n)
                    + self.extra(inner) / (*n).min(self.calibration.cores.max(1)) as f64
            }
        }
    }
}

/// What composition adds for calibrated `term` ([`PatternCost::composition_ns`]).
fn pattern_ns(patterns: &[PatternCost], term: &str, minimum: bool) -> Option<f64> {
    patterns
        .iter()
        .find(|p| p.term == term)
        .map(|p| p.composition_ns(minimum))
}

/// The calibrated reduction style of the kernel `reduce`: per key for built-in per-key
/// kernels, pairwise otherwise.
fn job_style(reduce: &str) -> &'static str {
    let per_key = Registry::builtin()
        .get(reduce)
        .is_ok_and(|k| matches!(k.op(), crate::Op::ReducePerKey(_)));
    if per_key {
        "per_key"
    } else {
        "pairwise"
    }
}

/// The stages of a pipeline with nested pipelines flattened: `pipe(pipe(a, b), c)` →
/// `a, b, c`.
fn chain<'a>(plan: &'a Plan, out: &mut Vec<&'a Plan>) {
    match plan {
        Plan::Pipe(parts) => parts.iter().for_each(|p| chain(p, out)),
        other => out.push(other),
    }
}

/// What [`each_pipeline`] calls: `(pipe, index, scale, stages)`.
pub(crate) type OnPipeline<'a> = dyn FnMut(&Plan, usize, f64, &[&Plan]) + 'a;

/// Call `f(pipe, index, scale, stages)` for every pipeline of `plan`: nested pipes are
/// one chain of `stages`; `index` counts the pipelines met so far in the order
/// composition lists them (outermost first, directly nested pipes one pipeline:
/// [`perfcompose_core::compose::Composition::pipelines`]), so that a term can name the
/// pipeline it depends on; `scale` is the task pools' around it (thread counts capped at
/// `cores`).
pub(crate) fn each_pipeline(plan: &Plan, cores: usize, f: &mut OnPipeline<'_>) {
    fn walk(plan: &Plan, cores: usize, scale: f64, pipeline: &mut usize, f: &mut OnPipeline<'_>) {
        match plan {
            Plan::Pipe(_) => {
                let mut stages = Vec::new();
                chain(plan, &mut stages);
                let index = *pipeline;
                *pipeline += 1;
                f(plan, index, scale, &stages);
                stages
                    .into_iter()
                    .for_each(|p| walk(p, cores, scale, pipeline, f));
            }
            Plan::Seq(parts) => parts
                .iter()
                .for_each(|p| walk(p, cores, scale, pipeline, f)),
            Plan::TPool(n, inner) => {
                let n = (*n).min(cores.max(1)) as f64;
                walk(inner, cores, scale * n, pipeline, f)
            }
            Plan::Kernel(_) | Plan::MapReduce { .. } | Plan::Unsupported { .. } => {}
        }
    }
    walk(plan, cores, 1.0, &mut 0, f)
}

/// A calibrated curve's segments ([`wake_segments`]) as saturating terms named `what` on
/// the slack of one pipeline: `(index, scale)` its index in the composition and the scale
/// of the task pools around it.
fn curve_terms(
    what: String,
    segments: &[(f64, f64, f64)],
    (index, scale): (usize, f64),
    relative_threshold: f64,
    out: &mut Vec<Saturating>,
) {
    let k = segments.len();
    for (i, &(from, slope, rise)) in segments.iter().enumerate() {
        out.push(Saturating {
            what: format!("{what} (part {} of {k} of the calibrated curve)", i + 1),
            scale,
            slope,
            cap_ns: rise,
            threshold_ns: from,
            pipeline_slack: Some(index),
            relative_threshold,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::overhead::calibrate::BLOCK_CALL_X;
    use crate::overhead::calibration::{BlockCall, JobCost};
    use crate::overhead::fit::pool_busy_of;
    use crate::overhead::testing::{cal, fit_wake, handoff, segments_at, wake_points, TOL};

    /// Composition with the medians, as `predict` composes (test shorthands).
    impl Calibration {
        fn overhead_ns(&self, plan: &Plan) -> f64 {
            self.for_statistic(Measure::Median).overhead_ns(plan)
        }

        fn overhead(&self, plan: &Plan, source: &str) -> Overhead {
            self.for_statistic(Measure::Median).overhead(plan, source)
        }
    }

    #[test]
    fn with_the_minimum_composition_adds_the_fastest_repetitions() {
        let mut c = cal();
        // Stream medians 100 / 180 for nop / pipe(nop, nop), fastest repetitions 90 / 130;
        // seq(nop, nop)'s fastest is its median, 105.
        for p in &mut c.patterns {
            p.stream_min_ns_per_element = match p.term.as_str() {
                "nop" => 90.0,
                "pipe(nop, nop)" => 130.0,
                _ => p.stream_ns_per_element,
            };
        }
        let pipe = Plan::Pipe(vec![Plan::Kernel("a".into()), Plan::Kernel("b".into())]);
        let seq = Plan::Seq(vec![Plan::Kernel("a".into()), Plan::Kernel("b".into())]);
        assert!((c.overhead_ns(&pipe) - 180.0).abs() < TOL);
        let fastest = c.for_statistic(Measure::Minimum);
        assert!((fastest.overhead_ns(&pipe) - 130.0).abs() < TOL);
        // 90 + (105 − 90).
        assert!((fastest.overhead_ns(&seq) - 105.0).abs() < TOL);
        // Every statistic other than the minimum composes with the medians.
        for m in [Measure::Median, Measure::Mean, Measure::Maximum] {
            assert!((c.for_statistic(m).overhead_ns(&pipe) - 180.0).abs() < TOL);
        }
    }

    #[test]
    fn calibrated_shapes_get_their_measured_cost() {
        let c = cal();
        let k = |s: &str| Plan::Kernel(s.into());
        assert!((c.overhead_ns(&k("qsort")) - 100.0).abs() < TOL);
        assert!((c.overhead_ns(&Plan::Pipe(vec![k("a"), k("b")])) - 180.0).abs() < TOL);
        assert!((c.overhead_ns(&Plan::Seq(vec![k("a"), k("b")])) - 105.0).abs() < TOL);
        assert!((c.overhead_ns(&Plan::TPool(2, Box::new(k("a")))) - 90.0).abs() < TOL);
        // Nearest calibrated n for an uncalibrated one.
        assert!((c.overhead_ns(&Plan::TPool(3, Box::new(k("a")))) - 90.0).abs() < TOL);
        // Nesting adds: a 3-stage pipe pays two hand-offs.
        assert!((c.overhead_ns(&Plan::Pipe(vec![k("a"), k("b"), k("c")])) - 260.0).abs() < TOL);
    }

    #[test]
    fn each_block_call_is_taken_out_once_as_the_design_composes_its_blocks() {
        let k = |n: &str| Plan::Kernel(n.into());
        let seq = |a: Plan, b: Plan| Plan::Seq(vec![a, b]);
        let pool = |n: usize, p: Plan| Plan::TPool(n, Box::new(p));
        let mut c = cal();
        let without: Vec<f64> = [
            seq(k("a"), k("b")),
            Plan::Pipe(vec![k("a"), k("b")]),
            pool(2, seq(k("a"), k("b"))),
            Plan::Pipe(vec![seq(k("a"), k("b")), k("c")]),
            pool(4, k("a")),
        ]
        .iter()
        .map(|p| c.overhead_ns(p))
        .collect();
        // cal(): nop 100, seq(nop, nop) 105, pipe(nop, nop) 180, tpool(2, nop) 90.
        assert!((without[0] - 105.0).abs() < TOL);
        c.block_call = BlockCall {
            x: BLOCK_CALL_X,
            ns: 20.0,
            min_ns: 10.0,
        };
        let with = |c: &Calibration, p: &Plan| c.overhead_ns(p);
        // Two calls in a seq, each counted by its block's unit test.
        assert!((with(&c, &seq(k("a"), k("b"))) - (without[0] - 40.0)).abs() < TOL);
        // A pipeline's slowest stage: one call.
        let pipe = Plan::Pipe(vec![k("a"), k("b")]);
        assert!((with(&c, &pipe) - (without[1] - 20.0)).abs() < TOL);
        // A pool's seq: its two calls shared by two workers.
        let pooled = pool(2, seq(k("a"), k("b")));
        assert!((with(&c, &pooled) - (without[2] - 20.0)).abs() < TOL);
        // A pipeline whose first stage is a seq: the stage with the largest extra, the
        // lone block (one call), not the seq (5 − 40).
        let mixed = Plan::Pipe(vec![seq(k("a"), k("b")), k("c")]);
        assert!((without[3] - 185.0).abs() < TOL);
        assert!((with(&c, &mixed) - 160.0).abs() < TOL);
        // Four workers on two cores: the call over the two that run at once.
        assert!((with(&c, &pool(4, k("a"))) - (without[4] - 10.0)).abs() < TOL);
        // With the minimum, the fastest repetition.
        let m = c.for_statistic(Measure::Minimum);
        assert!((m.block_call_ns() - 10.0).abs() < TOL);
        // Never below nothing.
        c.block_call.ns = 1e6;
        assert_eq!(c.overhead_ns(&seq(k("a"), k("b"))), 0.0);
    }

    #[test]
    fn array_calibrations_compose_their_wake_up_through_the_points() {
        let mut c = cal();
        // Waits of T − 100, extras of the given ones + 20 (`fit`'s test of the same).
        let extras = [
            0.0, 0.0, 0.0, 1000.0, 1200.0, 2000.0, 3000.0, 3500.0, 4000.0,
        ];
        c.pipe_wake = fit_wake(wake_points(&extras), 0.0);
        assert_eq!(c.pipe_wake.knots[0], (4000.0, 0.0));
        let k = |s: &str| Plan::Kernel(s.into());
        let o = c.overhead(&Plan::Pipe(vec![k("a"), k("b")]), "test");
        assert_eq!(o.saturating.len(), 6, "{:?}", o.saturating);
        assert!(o.saturating.iter().all(|s| s.pipeline_slack == Some(0)));
        assert!(
            o.saturating[0].what.contains("part 1 of 6"),
            "{}",
            o.saturating[0].what
        );
        let segs: Vec<(f64, f64, f64)> = o
            .saturating
            .iter()
            .map(|s| (s.threshold_ns, s.slope, s.cap_ns))
            .collect();
        assert!((segments_at(&segs, 5000.0) - 500.0).abs() < 1e-6);
        assert!((segments_at(&segs, 20000.0) - 3250.0).abs() < 1e-6);
        assert!((segments_at(&segs, 50000.0) - 4000.0).abs() < 1e-6);
    }

    #[test]
    fn wake_up_terms_name_their_pipelines_in_the_order_composition_lists_them() {
        use perfcompose_core::components::Components;
        use perfcompose_core::compose::{compose, ComposeOptions};
        let mut c = cal();
        // Half a nanosecond per ns of slack, up to a second.
        c.pipe_wake.knots = vec![(0.0, 0.0), (2e9, 1e9)];
        let text = "seq(pipe(a, b), tpool(2, pipe(c, pipe(d, e))), pipe(tpool(2, pipe(a, c)), e))";
        let term = perfcompose_core::term::parse_term("t", text).unwrap();
        let plan = crate::plan::plan_from_term(&term).unwrap();
        let o = c.overhead(&plan, "test");
        let opts = ComposeOptions { cores: Some(2) };
        let comps = Components::from_models(
            "t",
            &[
                ("a", "10"),
                ("b", "4"),
                ("c", "30"),
                ("d", "1"),
                ("e", "20"),
            ],
        )
        .unwrap();
        let comp = compose(&term, &comps, opts).unwrap();
        let spans: Vec<&str> = comp
            .pipelines
            .iter()
            .map(|p| &text[p.span.start..p.span.end])
            .collect();
        assert_eq!(
            spans,
            [
                "pipe(a, b)",
                "pipe(c, pipe(d, e))",
                "pipe(tpool(2, pipe(a, c)), e)",
                "pipe(a, c)"
            ]
        );
        let named: Vec<(Option<usize>, String)> = o
            .saturating
            .iter()
            .map(|s| (s.pipeline_slack, s.what.clone()))
            .collect();
        for (i, span) in spans.iter().enumerate() {
            assert!(
                named
                    .iter()
                    .any(|(p, what)| *p == Some(i) && what.contains(&format!("in {span} ("))),
                "{i} {span}: {named:?}"
            );
        }
        // Slacks 10 − 4, 30 − 20 (tpool(2, ...) halves the stages to 15 and 10, `scale`
        // restores them), 20 − 15 and 30 − 10, at half a nanosecond each.
        let total = o.apply_composed(&comp, &term, &comps, opts);
        let model = comp.model.eval_at(&[]).unwrap();
        let v = total.eval_at(&[]).unwrap();
        let wakes = 0.5 * (6.0 + 10.0 + 5.0 + 20.0);
        assert!((v - (model + o.ns_per_element + wakes)).abs() < 1e-9, "{v}");
    }

    #[test]
    fn busy_pipelines_add_the_no_slack_hand_off_and_its_rise_at_the_pipeline_slack() {
        use perfcompose_core::components::Components;
        use perfcompose_core::compose::{compose, ComposeOptions};
        let mut c = cal();
        c.pipe_handoff = handoff();
        let k = |s: &str| Plan::Kernel(s.into());
        let pipe = Plan::Pipe(vec![k("a"), k("b")]);
        // The constant: one stage (`nop`, 100) and the hand-off at no slack (median 60),
        // instead of `pipe(nop, nop)`'s 80; per hand-off.
        assert!((c.overhead_ns(&pipe) - 160.0).abs() < TOL);
        let pipe3 = Plan::Pipe(vec![k("a"), k("b"), k("c")]);
        assert!((c.overhead_ns(&pipe3) - 220.0).abs() < TOL);
        // The fastest repetitions with the minimum.
        let m = c.for_statistic(Measure::Minimum);
        assert!((m.overhead_ns(&pipe) - 150.0).abs() < TOL);
        // The rise over it: 140 at 250, then the last two pooled (never falling): 147.5
        // with the medians, 155 with the fastest repetitions; nothing at no slack.
        let h = handoff();
        assert_eq!(
            h.ramp_knots(false),
            [(0.0, 0.0), (250.0, 140.0), (500.0, 147.5), (2000.0, 147.5)]
        );
        assert_eq!(
            h.ramp_knots(true),
            [(0.0, 0.0), (250.0, 140.0), (500.0, 155.0), (2000.0, 155.0)]
        );
        // Composed on the slack of the pipeline less a tenth of its slowest stage
        // (HANDOFF_SLACK_RESOLUTION, 100 ns here): equal stages pay the constant only,
        // and so does a slack of 100; 125 pays a tenth of the first rise, 500 (400 on
        // the curve) most of the second, 1,000 all of it.
        let o = c.overhead(&pipe, "test");
        assert!(o
            .saturating
            .iter()
            .all(|s| s.pipeline_slack == Some(0) && s.what.contains("busy stages' hand-off")));
        let term = perfcompose_core::term::parse_term("t", "pipe(a, b)").unwrap();
        let opts = ComposeOptions { cores: Some(2) };
        for (b, rise) in [
            (1000.0, 0.0),
            (900.0, 0.0),
            (875.0, 14.0),
            (500.0, 144.5),
            (0.0, 147.5),
        ] {
            let comps =
                Components::from_models("t", &[("a", "1000"), ("b", &b.to_string())]).unwrap();
            let comp = compose(&term, &comps, opts).unwrap();
            let v = o
                .apply_composed(&comp, &term, &comps, opts)
                .eval_at(&[])
                .unwrap();
            assert!((v - (1000.0 + 160.0 + rise)).abs() < 1e-9, "b = {b}: {v}");
        }
        // Without points at no slack, the pipeline keeps `pipe(nop, nop)`'s hand-off and
        // gets no rise.
        let mut none = handoff();
        none.points.retain(|p| p.slack_ns > 0.0);
        c.pipe_handoff = none;
        assert!((c.overhead_ns(&pipe) - 180.0).abs() < TOL);
        assert!(c.overhead(&pipe, "test").saturating.is_empty());
    }

    #[test]
    fn pipelines_get_a_saturating_wake_up_term_scaled_by_the_pools_around_them() {
        let mut c = cal();
        // A quarter of a nanosecond per ns of slack, up to 2 µs.
        c.pipe_wake.knots = vec![(0.0, 0.0), (8000.0, 2000.0)];
        let k = |s: &str| Plan::Kernel(s.into());
        let pipe3 = Plan::Pipe(vec![k("a"), k("b"), k("c")]);
        let o = c.overhead(&pipe3, "test");
        assert!((o.ns_per_element - 260.0).abs() < TOL);
        assert_eq!(o.saturating.len(), 1);
        // One wake-up per chain (the slowest stage's hand-off), however many stages.
        assert!((o.saturating[0].slope - 0.25).abs() < TOL);
        assert!((o.saturating[0].cap_ns - 2000.0).abs() < TOL);
        assert!((o.saturating[0].scale - 1.0).abs() < TOL);
        assert_eq!(o.saturating[0].pipeline_slack, Some(0));
        let nested = Plan::Pipe(vec![Plan::Pipe(vec![k("a"), k("b")]), k("c")]);
        assert_eq!(c.overhead(&nested, "test").saturating.len(), 1);
        // A pipeline inside a stage of another is still part of the one chain; one in a
        // task pool inside a stage is a chain of its own.
        let inner = Plan::Pipe(vec![
            k("a"),
            Plan::TPool(2, Box::new(Plan::Pipe(vec![k("b"), k("c")]))),
        ]);
        let o = c.overhead(&inner, "test");
        assert_eq!(o.saturating.len(), 2);
        assert!((o.saturating[1].scale - 2.0).abs() < TOL);
        assert_eq!(o.saturating[1].pipeline_slack, Some(1));
        // Inside tpool(4, ...) on 2 calibrated cores: each pipeline sees every 2nd element.
        let pooled = Plan::TPool(4, Box::new(Plan::Pipe(vec![k("a"), k("b")])));
        let o = c.overhead(&pooled, "test");
        assert!((o.saturating[0].scale - 2.0).abs() < TOL);
        // apply(): model + c + min(cap, slope·scale·model), evaluated.
        let model = perfcompose_core::model::parse_model("10 * x").unwrap();
        let total = o.apply(&model);
        let at = |x: f64| total.eval_at(&[("x", x)]).unwrap();
        let c0 = o.ns_per_element;
        assert!((at(10.0) - (100.0 + c0 + 0.25 * 2.0 * 100.0)).abs() < 1e-6);
        assert!((at(1e4) - (1e5 + c0 + 2000.0)).abs() < 1e-6);
        // No pipeline, no wake-up term.
        assert!(c.overhead(&k("a"), "test").saturating.is_empty());
    }

    #[test]
    fn mapreduce_jobs_add_their_calibrated_cost_by_style_and_nearest_threads() {
        let mut c = cal();
        c.mapreduce = vec![
            JobCost {
                reduce: "pairwise".into(),
                threads: 1,
                ns_per_job: 5000.0,
            },
            JobCost {
                reduce: "per_key".into(),
                threads: 2,
                ns_per_job: 12000.0,
            },
        ];
        let mr = |reduce: &str, threads| Plan::MapReduce {
            map: "map".into(),
            reduce: reduce.into(),
            nodes: 1,
            threads,
            reduction: None,
        };
        // Measured through one stage: the total is the job cost itself.
        assert!((c.overhead_ns(&mr("reduce_pairwise", 4)) - 5000.0).abs() < TOL);
        assert!((c.overhead_ns(&mr("reduce_per_key", 1)) - 12000.0).abs() < TOL);
        // An unknown (user) reduce kernel counts as pairwise.
        assert!((c.overhead_ns(&mr("mine", 2)) - 5000.0).abs() < TOL);
    }

    #[test]
    fn mapreduce_jobs_get_a_saturating_wake_up_term_by_style_and_nearest_threads() {
        let mut c = cal();
        let busy = |reduce: &str, threads, cap_ns| JobBusy {
            reduce: reduce.into(),
            threads,
            points: Vec::new(),
            slope: 0.5,
            cap_ns,
        };
        c.mapreduce_busy = vec![
            busy("pairwise", 1, 10_000.0),
            busy("pairwise", 2, 40_000.0),
            busy("per_key", 2, 70_000.0),
        ];
        let mr = |reduce: &str, threads| Plan::MapReduce {
            map: "map".into(),
            reduce: reduce.into(),
            nodes: 1,
            threads,
            reduction: None,
        };
        let o = c.overhead(&mr("reduce_pairwise", 2), "test");
        assert_eq!(o.saturating.len(), 1);
        assert!((o.saturating[0].cap_ns - 40_000.0).abs() < TOL);
        assert!((o.saturating[0].scale - 1.0).abs() < TOL);
        // Nearest calibrated thread count; per-key kernels get the per-key figure.
        let o = c.overhead(&mr("reduce_per_key", 4), "test");
        assert!((o.saturating[0].cap_ns - 70_000.0).abs() < TOL);
        let o = c.overhead(&mr("reduce_pairwise", 1), "test");
        assert!((o.saturating[0].cap_ns - 10_000.0).abs() < TOL);
        // Inside a task pool of 2 (2 calibrated cores), each job sees every 2nd element.
        let pooled = Plan::TPool(2, Box::new(mr("reduce_pairwise", 2)));
        assert!((c.overhead(&pooled, "test").saturating[0].scale - 2.0).abs() < TOL);
        // apply(): the job model plus min(cap, slope·model).
        let model = perfcompose_core::model::parse_model("75000 * x").unwrap();
        let total = c.overhead(&mr("reduce_pairwise", 2), "test").apply(&model);
        let at = |x: f64| total.eval_at(&[("x", x)]).unwrap();
        let c0 = c.overhead_ns(&mr("reduce_pairwise", 2));
        assert!((at(4.0) - (300_000.0 + c0 + 40_000.0)).abs() < 1e-6);
        // Nothing calibrated: no term; no MapReduce: no term.
        c.mapreduce_busy.clear();
        assert!(c
            .overhead(&mr("reduce_pairwise", 2), "test")
            .saturating
            .is_empty());
    }

    #[test]
    fn busy_pools_add_what_busy_workers_lose_beyond_the_nop_figure() {
        let mut c = cal();
        let k = |s: &str| Plan::Kernel(s.into());
        let pool = Plan::TPool(2, Box::new(k("a")));
        // Without a busy-pool calibration: nothing saturating.
        assert!(c.overhead(&pool, "t").saturating.is_empty());
        // Two busy workers: pool = single/2 + 200 at every spin time.
        let points = vec![
            (1000.0, 750.0, 1100.0),
            (2000.0, 1250.0, 2100.0),
            (4000.0, 2250.0, 4100.0),
        ];
        c.pool_busy = vec![pool_busy_of(2, points)];
        assert!((c.pool_busy[0].extra_ns - 200.0).abs() < TOL);
        let o = c.overhead(&pool, "t");
        assert_eq!(o.saturating.len(), 1);
        let s = &o.saturating[0];
        // (T + 100)/2 + 200 per element against the nop figure's T/2 + 90: Δ = 160 more.
        assert!((s.cap_ns - 160.0).abs() < TOL, "{s:?}");
        assert!(
            (s.slope - 0.16).abs() < TOL && (s.scale - 2.0).abs() < TOL,
            "{s:?}"
        );
        // Applied to a block of 800 ns per task (400 per element): 0.16 · 800 = 128 ns.
        let model = o.apply(&perfcompose_core::Expr::constant(400.0));
        let v = model.eval_at(&[]).unwrap();
        assert!((v - (400.0 + 90.0 + 128.0)).abs() < 1e-6, "{v}");
        // Oversubscribed pools and pools of other sizes: no busy term.
        assert!(c
            .overhead(&Plan::TPool(4, Box::new(k("a"))), "t")
            .saturating
            .is_empty());
        // Inside a pipeline, and a pool of pools scales the worker's time.
        let nested = Plan::Pipe(vec![k("b"), pool.clone()]);
        assert_eq!(c.overhead(&nested, "t").saturating.len(), 1);
    }
}
