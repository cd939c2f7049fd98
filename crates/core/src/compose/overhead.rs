//! The runtime's own cost added to a composed model ([`Overhead`]): a constant per
//! element, terms that saturate with the time between elements or with a pipeline's slack
//! ([`Saturating`]), and what pipelines lose to their stages' phases ([`PhaseLoss`]).
//! `predict` re-exports these; the runtime's overhead calibration builds them.

use super::ComposeOptions;
use crate::components::Components;
use crate::model::Expr;
use crate::term::Term;

/// The measured per-element cost of the pattern runtime itself for a design (the
/// overhead model of `perfcompose calibrate overhead`), added to the composed model.
#[derive(Clone, Debug, PartialEq)]
pub struct Overhead {
    /// Nanoseconds per element (the unit of the paper's component models).
    pub ns_per_element: f64,
    /// Where it comes from, for the notes (e.g. the calibration file).
    pub source: String,
    /// Costs that grow with the time per element and level off: a hand-off to a thread
    /// that went to sleep waiting for it costs a wake-up, which only happens once the
    /// receiver waits long enough to stop spinning. Each adds
    /// `min(cap_ns, max(0, slope · (scale · t − threshold_ns)))`, `t` being the composed
    /// model or a pipeline's slack ([`Saturating::pipeline_slack`]).
    pub saturating: Vec<Saturating>,
    /// What pipelines lose to their stages' slow and fast phases ([`PhaseLoss`]).
    pub phases: Vec<PhaseLoss>,
}

/// The time a pipeline loses because its stages run in slow and fast phases that do not
/// coincide: it runs at the larger of what its stages take over a stretch of calls, whose
/// expectation exceeds the larger of their means once the next slowest stage comes close
/// to the slowest. Adds `Σ weight_i · max(0, second − ratio_i · slowest)` for the
/// pipeline's slowest stage's time `slowest` and the next slowest's `second` (a
/// piecewise-linear curve in `second / slowest`, times `slowest`). Needs the composition
/// ([`Overhead::apply_composed`]); [`Overhead::apply`] leaves it out.
#[derive(Clone, Debug, PartialEq)]
pub struct PhaseLoss {
    /// The pipeline, e.g. `pipe(inc, inc)`.
    pub what: String,
    /// The composition's pipeline ([`crate::compose::Composition::pipelines`]).
    pub pipeline: usize,
    /// `(ratio_i, weight_i)`; a weight is a model too (constant, or piecewise over the
    /// sizes the phases were measured at).
    pub hinges: Vec<(f64, Expr)>,
}

/// One saturating overhead term (see [`Overhead::saturating`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Saturating {
    /// What it is, e.g. `wake-up at pipe(qsort, inc)`.
    pub what: String,
    /// Multiplies the composed model to give the time between elements where the cost
    /// arises (e.g. `n` inside `tpool(n, pipe(..))`, whose pipelines each see every
    /// `n`-th element).
    pub scale: f64,
    /// Cost per ns of time between elements, before it levels off.
    pub slope: f64,
    /// Where it levels off, ns.
    pub cap_ns: f64,
    /// No cost while the time is at most this, ns (0: the cost starts at once).
    pub threshold_ns: f64,
    /// `Some(i)`: the time the cost depends on is the slack of the composition's `i`-th
    /// pipeline ([`crate::compose::Composition::pipelines`]) — its slowest stage's time
    /// less the next slowest stage's, how long the stages that wait for the slowest one
    /// wait per element — instead of the whole composed model. A pipeline of equal stages
    /// waits for nothing and pays no wake-up. Needs the composition
    /// ([`Overhead::apply_composed`]); [`Overhead::apply`] uses the model.
    pub pipeline_slack: Option<usize>,
    /// No cost either while the time is at most this share of the slowest stage's time
    /// (of the pipeline's, with [`Saturating::pipeline_slack`]; of the model otherwise):
    /// the term applies to `t − relative_threshold · slowest`. 0: none. For slacks within
    /// the resolution of the stage models they are computed from.
    pub relative_threshold: f64,
}

/// Most stages a pipeline's slack is built for: the expression of the second slowest of
/// `k` stages has `k²` parts. Longer pipelines use their slowest stage's time.
const MAX_SLACK_STAGES: usize = 8;

/// The slowest of `models` less the next slowest: `max(m) − max_i min(m_i, max_{j≠i} m_j)`
/// ([`second_of`]).
pub fn slack_of(models: &[Expr]) -> Expr {
    let slowest = Expr::max_of(models.to_vec());
    if models.len() < 2 || models.len() > MAX_SLACK_STAGES {
        return slowest;
    }
    Expr::sub(slowest, second_of(models))
}

/// The next slowest of `models`: `max_i min(m_i, max_{j≠i} m_j)`; 0 for fewer than two
/// models or more than [`MAX_SLACK_STAGES`].
pub fn second_of(models: &[Expr]) -> Expr {
    if models.len() < 2 || models.len() > MAX_SLACK_STAGES {
        return Expr::constant(0.0);
    }
    Expr::max_of(
        (0..models.len())
            .map(|i| {
                let others: Vec<Expr> = models
                    .iter()
                    .enumerate()
                    .filter(|&(j, _)| j != i)
                    .map(|(_, m)| m.clone())
                    .collect();
                Expr::min(models[i].clone(), Expr::max_of(others))
            })
            .collect(),
    )
}

impl Overhead {
    /// A constant overhead.
    pub fn constant(ns_per_element: f64, source: impl Into<String>) -> Overhead {
        Overhead {
            ns_per_element,
            source: source.into(),
            saturating: Vec::new(),
            phases: Vec::new(),
        }
    }

    /// `model` plus this overhead: `model + c + Σ min(cap, max(0, slope·(scale·model −
    /// threshold)))` (the `max` only with a threshold). Terms with a non-finite or
    /// non-positive constant, slope or cap are left out. A term on a pipeline's slack
    /// takes the whole model here; [`Overhead::apply_composed`] knows the stages.
    pub fn apply(&self, model: &Expr) -> Expr {
        self.apply_with(model, |_| None)
    }

    /// [`Overhead::apply`] to `comp`'s model, the wake-up terms on a pipeline's slack
    /// ([`Saturating::pipeline_slack`]) built from the stages of that pipeline of `comp`.
    pub fn apply_composed(
        &self,
        comp: &crate::compose::Composition,
        term: &Term,
        components: &Components,
        opts: ComposeOptions,
    ) -> Expr {
        self.apply_with(&comp.model, |i| {
            if i >= comp.pipelines.len() {
                return None;
            }
            let stages = comp.stages(i, term, components, opts).ok()?;
            let models: Vec<Expr> = stages.into_iter().map(|s| s.model).collect();
            Some(PipelineTimes {
                slack: slack_of(&models),
                second: second_of(&models),
                slowest: Expr::max_of(models),
            })
        })
    }

    /// `slack(i)`: the times of pipeline `i`'s stages.
    fn apply_with(&self, model: &Expr, slack: impl Fn(usize) -> Option<PipelineTimes>) -> Expr {
        let mut out = model.clone();
        if self.ns_per_element > 0.0 && self.ns_per_element.is_finite() {
            out = Expr::add(out, Expr::constant(self.ns_per_element));
        }
        for s in &self.saturating {
            let k = s.slope * s.scale;
            if k > 0.0 && k.is_finite() && s.cap_ns > 0.0 && s.cap_ns.is_finite() {
                let (mut t, slowest) = s
                    .pipeline_slack
                    .and_then(&slack)
                    .map(|p| (p.slack, p.slowest))
                    .unwrap_or_else(|| (model.clone(), model.clone()));
                let relative = s.relative_threshold > 0.0 && s.relative_threshold.is_finite();
                if relative {
                    t = Expr::sub(t, Expr::mul(Expr::constant(s.relative_threshold), slowest));
                }
                let mut ramp = Expr::mul(Expr::constant(k), t);
                let threshold = if s.threshold_ns > 0.0 && s.threshold_ns.is_finite() {
                    s.threshold_ns
                } else {
                    0.0
                };
                if relative || threshold > 0.0 {
                    ramp = Expr::max(
                        Expr::constant(0.0),
                        Expr::sub(ramp, Expr::constant(s.slope * threshold)),
                    );
                }
                out = Expr::add(out, Expr::min(Expr::constant(s.cap_ns), ramp));
            }
        }
        for p in &self.phases {
            let Some(times) = slack(p.pipeline) else {
                continue;
            };
            if times.second == Expr::constant(0.0) {
                continue;
            }
            for (ratio, weight) in &p.hinges {
                if !ratio.is_finite() || *weight == Expr::constant(0.0) {
                    continue;
                }
                let gap = Expr::sub(
                    times.second.clone(),
                    Expr::mul(Expr::constant(*ratio), times.slowest.clone()),
                );
                let hinge = if *ratio > 0.0 {
                    Expr::max(Expr::constant(0.0), gap)
                } else {
                    gap
                };
                out = Expr::add(out, Expr::mul(weight.clone(), hinge));
            }
        }
        out
    }
}

/// A pipeline's stage times, as [`Overhead::apply_with`] needs them.
struct PipelineTimes {
    /// [`slack_of`] the stages.
    slack: Expr,
    /// The slowest stage's time.
    slowest: Expr,
    /// The next slowest stage's time ([`second_of`]).
    second: Expr,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compose::compose;
    use crate::term::parse_term;

    fn wake(pipeline: Option<usize>, scale: f64, threshold_ns: f64) -> Overhead {
        Overhead {
            ns_per_element: 100.0,
            source: "test".into(),
            saturating: vec![Saturating {
                what: "wake-up".into(),
                scale,
                slope: 0.5,
                cap_ns: 1000.0,
                threshold_ns,
                pipeline_slack: pipeline,
                relative_threshold: 0.0,
            }],
            phases: Vec::new(),
        }
    }

    fn at(e: &Expr, x: f64) -> f64 {
        e.eval_at(&[("x", x)]).unwrap()
    }

    #[test]
    fn the_slack_is_the_slowest_stage_less_the_next_slowest() {
        let c = |v: f64| Expr::constant(v);
        let v = |e: Expr| e.eval_at(&[]).unwrap();
        assert_eq!(v(slack_of(&[c(5.0), c(2.0)])), 3.0);
        assert_eq!(v(slack_of(&[c(2.0), c(5.0)])), 3.0);
        assert_eq!(v(slack_of(&[c(4.0), c(4.0)])), 0.0);
        assert_eq!(v(slack_of(&[c(1.0), c(9.0), c(6.0)])), 3.0);
        assert_eq!(v(slack_of(&[c(9.0), c(9.0), c(1.0)])), 0.0);
        assert_eq!(v(slack_of(&[c(7.0)])), 7.0);
    }

    #[test]
    fn a_relative_threshold_leaves_out_slacks_within_a_share_of_the_slowest_stage() {
        let comps =
            Components::from_models("t", &[("a", "10 * x"), ("d", "9.5 * x"), ("c", "2 * x")])
                .unwrap();
        let opts = ComposeOptions::default();
        let relative = |threshold_ns: f64, scale: f64| {
            let mut o = wake(Some(0), scale, threshold_ns);
            o.saturating[0].relative_threshold = 0.1;
            o
        };
        // A slack of 0.5x is within a tenth of the slowest stage (10x): no cost.
        let close = parse_term("t", "pipe(a, d)").unwrap();
        let comp = compose(&close, &comps, opts).unwrap();
        let o = relative(0.0, 1.0).apply_composed(&comp, &close, &comps, opts);
        assert_eq!(at(&o, 100.0), 1000.0 + 100.0);
        // A slack of 8x: the cost of 7x, after the absolute threshold too.
        let far = parse_term("t", "pipe(a, c)").unwrap();
        let comp = compose(&far, &comps, opts).unwrap();
        let o = relative(0.0, 1.0).apply_composed(&comp, &far, &comps, opts);
        assert_eq!(at(&o, 100.0), 1000.0 + 100.0 + 0.5 * 700.0);
        let o = relative(400.0, 1.0).apply_composed(&comp, &far, &comps, opts);
        assert_eq!(at(&o, 100.0), 1000.0 + 100.0 + 0.5 * (700.0 - 400.0));
        // In tpool(2, ...) both the slack and the slowest stage are halved; `scale`
        // restores them.
        let pooled = parse_term("t", "tpool(2, pipe(a, c))").unwrap();
        let comp = compose(&pooled, &comps, opts).unwrap();
        let o = relative(0.0, 2.0).apply_composed(&comp, &pooled, &comps, opts);
        assert_eq!(at(&o, 100.0), 500.0 + 100.0 + 0.5 * 2.0 * (400.0 - 50.0));
        // Without the composition, on the model: 0.9 of it.
        let comp = compose(&close, &comps, opts).unwrap();
        let o = relative(0.0, 1.0).apply(&comp.model);
        assert_eq!(at(&o, 100.0), 1000.0 + 100.0 + 0.5 * 900.0);
    }

    #[test]
    fn a_pipeline_loses_to_its_stages_phases_only_when_its_stages_come_close() {
        let comps = Components::from_models(
            "t",
            &[
                ("a", "10 * x"),
                ("b", "10 * x"),
                ("d", "9 * x"),
                ("c", "2 * x"),
            ],
        )
        .unwrap();
        let opts = ComposeOptions::default();
        let mut o = Overhead::constant(0.0, "test");
        o.phases.push(PhaseLoss {
            what: "the pipeline".into(),
            pipeline: 0,
            hinges: vec![(0.8, Expr::constant(0.5)), (0.95, Expr::constant(1.0))],
        });
        let with = |term: &str| {
            let t = parse_term("t", term).unwrap();
            let comp = compose(&t, &comps, opts).unwrap();
            at(&o.apply_composed(&comp, &t, &comps, opts), 100.0)
        };
        // Equal stages (1000 each): 0.5 · (1000 − 800) + 1 · (1000 − 950).
        assert_eq!(with("pipe(a, b)"), 1000.0 + 100.0 + 50.0);
        // The next slowest at 0.9 of the slowest: only the first hinge.
        assert_eq!(with("pipe(d, a)"), 1000.0 + 0.5 * (900.0 - 800.0));
        // Far apart, or one stage: nothing; nor on the model alone.
        assert_eq!(with("pipe(a, c)"), 1000.0);
        assert_eq!(with("pipe(a)"), 1000.0);
        let t = parse_term("t", "pipe(a, b)").unwrap();
        let comp = compose(&t, &comps, opts).unwrap();
        assert_eq!(at(&o.apply(&comp.model), 100.0), 1000.0);
        // In tpool(2, ...) the stages are halved, and so is the loss per element.
        assert_eq!(with("tpool(2, pipe(a, b))"), (1000.0 + 150.0) / 2.0);
    }

    #[test]
    fn a_wake_up_on_a_pipelines_slack_charges_equal_stages_nothing() {
        let comps =
            Components::from_models("t", &[("a", "10 * x"), ("b", "10 * x"), ("c", "2 * x")])
                .unwrap();
        let opts = ComposeOptions::default();
        let equal = parse_term("t", "pipe(a, b)").unwrap();
        let comp = compose(&equal, &comps, opts).unwrap();
        // On the model (apply): 10x + 100 + min(1000, 0.5 · 10x).
        assert_eq!(
            at(&wake(Some(0), 1.0, 0.0).apply(&comp.model), 100.0),
            1600.0
        );
        // On the slack of the pipeline: its stages wait for nothing.
        let o = wake(Some(0), 1.0, 0.0).apply_composed(&comp, &equal, &comps, opts);
        assert_eq!(at(&o, 100.0), 1100.0);
        // Unequal stages: the slack is 8x; no cost up to the threshold, then the ramp.
        let unequal = parse_term("t", "pipe(a, c)").unwrap();
        let comp = compose(&unequal, &comps, opts).unwrap();
        let o = wake(Some(0), 1.0, 400.0).apply_composed(&comp, &unequal, &comps, opts);
        assert_eq!(at(&o, 10.0), 200.0);
        assert_eq!(at(&o, 100.0), 1000.0 + 100.0 + 0.5 * (800.0 - 400.0));
        assert_eq!(at(&o, 1e4), 1e5 + 100.0 + 1000.0);
        // In tpool(2, ...) the stages' models are halved and `scale` restores them.
        let pooled = parse_term("t", "tpool(2, pipe(a, c))").unwrap();
        let comp = compose(&pooled, &comps, opts).unwrap();
        let o = wake(Some(0), 2.0, 400.0).apply_composed(&comp, &pooled, &comps, opts);
        assert_eq!(at(&o, 100.0), 500.0 + 100.0 + 0.5 * (800.0 - 400.0));
        // A pipeline the composition does not have: the whole model, as apply does.
        let o = wake(Some(3), 1.0, 0.0).apply_composed(&comp, &pooled, &comps, opts);
        assert_eq!(at(&o, 100.0), 500.0 + 100.0 + 0.5 * 500.0);
    }
}
