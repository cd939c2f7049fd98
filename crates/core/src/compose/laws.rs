//! Comparing designs, and the pattern-composition paper's relational theory (§5) checked on models.
//!
//! [`compare_terms`] decides whether two designs have the same model — symbolically
//! (identical canonical forms after simplification), or numerically over a grid within
//! [`EQUAL_REL_TOL`] — and otherwise which one is smaller where (per grid point,
//! asymptotically, and the crossovers along `x`).
//!
//! [`check_laws`] instantiates the four relations over the given components:
//!
//! * (i)   `pipe(a, pipe(b, c)) = pipe(pipe(a, b), c)`
//! * (ii)  `pipe(a, b) = pipe(b, a)`
//! * (iii) `pipe(tpool(n, a), tpool(n, b)) = tpool(n, pipe(a, b))`
//! * (iv)  `pipe(a, b) >= tpool(2, seq(a, b))`
//!
//! (i)–(iii) hold by construction of the operators (max is associative and commutative,
//! and division by a positive count distributes over it); checking them on the models
//! guards the algebra. (iv) is where designs gain: with `--cores 1` it fails, because the
//! task pool cannot divide.

use std::collections::BTreeMap;

use serde::Serialize;

use super::crossover;
use super::grid::{Grid, Point};
use super::interval::{composed_template, templated, IntervalOptions, Sampler};
use super::predict::{eval_error, free_parameter};
use super::{compose, ComposeOptions, AXIS};
use crate::components::Components;
use crate::diag::Diagnostic;
use crate::model::{compare_growth, Expr, Growth};
use crate::term::{parse_term, Term};
use crate::uncertainty::interval_of;

/// Two values this close (relatively) are equal.
pub const EQUAL_REL_TOL: f64 = 1e-9;
/// Most instances of one law that are checked.
pub const MAX_LAW_INSTANCES: usize = 5000;
/// Thread counts law (iii) is instantiated with.
pub const LAW_III_THREADS: &[u64] = &[2, 4, 8];

/// The outcome of comparing two models.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Identical after simplification.
    EqualSymbolic,
    /// Equal within [`EQUAL_REL_TOL`] at every grid point.
    EqualNumeric,
    /// The first is smaller or equal everywhere on the grid (and smaller somewhere).
    FirstSmaller,
    SecondSmaller,
    /// Each is smaller somewhere.
    Mixed,
}

/// Values of both designs at one point.
#[derive(Clone, Debug, Serialize)]
pub struct PointComparison {
    pub point: BTreeMap<String, f64>,
    pub first: f64,
    pub second: f64,
    /// The share of draws of the components' uncertainty in which the first is smaller
    /// (when a component of either design has an uncertainty).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub probability_first_smaller: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_interval: Option<crate::uncertainty::Interval>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub second_interval: Option<crate::uncertainty::Interval>,
}

/// Where the smaller design changes, along `x`.
#[derive(Clone, Debug, Serialize)]
pub struct Switch {
    pub given: BTreeMap<String, f64>,
    pub x: f64,
    /// `first` or `second`: the smaller one for `x` just above the switch.
    pub smaller_after: String,
}

/// The comparison of two designs (`perfcompose check A B`; also its JSON schema).
#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    pub first: String,
    pub second: String,
    pub first_model: String,
    pub second_model: String,
    pub verdict: Verdict,
    /// Relative tolerance of numeric equality.
    pub tolerance: f64,
    /// How the first grows against the second: `slower`, `same`, `faster`,
    /// `incomparable` or `unknown`.
    pub asymptotic: String,
    /// For `same`: the ratio of leading coefficients (first / second), if one.
    pub asymptotic_ratio: Option<f64>,
    /// Whether the grid was given (`false`: x = 2^0..2^30).
    pub grid_given: bool,
    pub points: Vec<PointComparison>,
    /// Changes of the smaller design along `x >= 1`.
    pub switches: Vec<Switch>,
    /// Where either design wins with the chosen confidence (when a component has an
    /// uncertainty; [`crate::compose::interval::attach_confidence`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confidence: Option<Confidence>,
    #[serde(skip)]
    pub first_expr: Expr,
    #[serde(skip)]
    pub second_expr: Expr,
}

/// Compare two designs built from the same components.
pub fn compare_terms(
    first: &Term,
    second: &Term,
    components: &Components,
    opts: ComposeOptions,
    grid: &Grid,
) -> Result<Comparison, Diagnostic> {
    let a = compose(first, components, opts)?.model;
    let b = compose(second, components, opts)?.model;
    let grid_given = !grid.is_empty();
    let grid = if grid_given {
        grid.clone()
    } else {
        Grid::default_sizes()
    };
    let names = grid.names();
    for (t, m) in [(first, &a), (second, &b)] {
        if let Some(p) = m.params().iter().find(|p| !names.contains(&p.as_str())) {
            return Err(free_parameter(t, components, p, &names));
        }
    }
    let mut points = Vec::new();
    for pt in grid.points() {
        super::mesh::check_meshes(first, &pt)?;
        super::mesh::check_meshes(second, &pt)?;
        let va = a
            .eval(&pt)
            .map_err(|e| eval_error(first, components, opts, &pt, e))?;
        let vb = b
            .eval(&pt)
            .map_err(|e| eval_error(second, components, opts, &pt, e))?;
        points.push(PointComparison {
            point: pt.iter().cloned().collect(),
            first: va,
            second: vb,
            probability_first_smaller: None,
            first_interval: None,
            second_interval: None,
        });
    }
    let verdict = if a.to_string() == b.to_string() {
        Verdict::EqualSymbolic
    } else {
        numeric_verdict(points.iter().map(|p| (p.first, p.second)))
    };
    let (asymptotic, asymptotic_ratio) = growth_words(compare_growth(&a, &b));
    let mut switches = Vec::new();
    if !matches!(verdict, Verdict::EqualSymbolic | Verdict::EqualNumeric) {
        let xs = grid
            .values_of(AXIS)
            .map(<[f64]>::to_vec)
            .unwrap_or_default();
        for given in grid.others(AXIS) {
            let fixed = |m: &Expr| {
                given
                    .iter()
                    .fold(m.clone(), |e, (n, v)| e.subst(n, &Expr::constant(*v)))
            };
            let pair = [fixed(&a), fixed(&b)];
            for c in crossover::crossovers(&pair, AXIS, 1.0, crossover::SCAN_MAX_X, &xs, &given) {
                switches.push(Switch {
                    given: given.iter().cloned().collect(),
                    x: c.x,
                    // The larger one after the switch is `to`; the smaller is the other.
                    smaller_after: if c.to == 0 { "second" } else { "first" }.to_string(),
                });
            }
        }
    }
    Ok(Comparison {
        first: first.root.to_string(),
        second: second.root.to_string(),
        first_model: a.to_string(),
        second_model: b.to_string(),
        verdict,
        tolerance: EQUAL_REL_TOL,
        asymptotic,
        asymptotic_ratio,
        grid_given,
        points,
        switches,
        confidence: None,
        first_expr: a,
        second_expr: b,
    })
}

fn growth_words(g: Growth) -> (String, Option<f64>) {
    match g {
        Growth::Slower => ("slower".into(), None),
        Growth::Same { ratio } => ("same".into(), ratio),
        Growth::Faster => ("faster".into(), None),
        Growth::Incomparable => ("incomparable".into(), None),
        Growth::Unknown => ("unknown".into(), None),
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= EQUAL_REL_TOL * a.abs().max(b.abs())
}

fn numeric_verdict(pairs: impl Iterator<Item = (f64, f64)>) -> Verdict {
    let (mut first_less, mut second_less) = (false, false);
    for (a, b) in pairs {
        if close(a, b) {
            continue;
        }
        if a < b {
            first_less = true;
        } else {
            second_less = true;
        }
    }
    match (first_less, second_less) {
        (false, false) => Verdict::EqualNumeric,
        (true, false) => Verdict::FirstSmaller,
        (false, true) => Verdict::SecondSmaller,
        (true, true) => Verdict::Mixed,
    }
}

/// The check of one relation over all its instances.
#[derive(Clone, Debug, Serialize)]
pub struct LawReport {
    /// `i`, `ii`, `iii` or `iv`.
    pub law: String,
    pub statement: String,
    /// Instances checked.
    pub instances: usize,
    /// Instances whose two sides simplified to the same model.
    pub symbolic: usize,
    /// Instances that held numerically on the grid (and not symbolically).
    pub numeric: usize,
    pub failures: Vec<LawFailure>,
    /// Components left out because they need parameters the grid does not give.
    pub skipped_components: Vec<String>,
    /// `holds`, `fails` or `not checked`.
    pub verdict: String,
    /// For (iv): the largest gain of the task pool over the pipeline seen.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_gain: Option<f64>,
}

/// An instance where a law does not hold.
#[derive(Clone, Debug, Serialize)]
pub struct LawFailure {
    pub left: String,
    pub right: String,
    pub point: BTreeMap<String, f64>,
    pub left_value: f64,
    pub right_value: f64,
}

/// Check relations (i)–(iv) of the pattern-composition paper over the components (each law over all ordered
/// choices of components, up to [`MAX_LAW_INSTANCES`]).
pub fn check_laws(components: &Components, opts: ComposeOptions, grid: &Grid) -> Vec<LawReport> {
    let grid = if grid.is_empty() {
        Grid::default_sizes()
    } else {
        grid.clone()
    };
    let names = grid.names();
    let points = grid.points();
    let (usable, skipped): (Vec<&str>, Vec<&str>) = components.names().partition(|c| {
        let m = &components.get(c).expect("listed").model;
        m.params().iter().all(|p| names.contains(&p.as_str()))
            && points.iter().all(|pt| m.eval(pt).is_ok())
    });
    let skipped: Vec<String> = skipped.into_iter().map(String::from).collect();

    let pairs = || {
        usable
            .iter()
            .flat_map(|a| usable.iter().map(move |b| (*a, *b)))
    };
    let mut reports = Vec::new();

    let mut law = Law::new("i", "pipe(a, pipe(b, c)) = pipe(pipe(a, b), c)", &skipped);
    'i: for (a, b) in pairs() {
        for c in &usable {
            if law.report.instances >= MAX_LAW_INSTANCES {
                break 'i;
            }
            law.equal(
                &format!("pipe({a}, pipe({b}, {c}))"),
                &format!("pipe(pipe({a}, {b}), {c})"),
                components,
                opts,
                &points,
            );
        }
    }
    reports.push(law.finish());

    let mut law = Law::new("ii", "pipe(a, b) = pipe(b, a)", &skipped);
    for (a, b) in pairs().take(MAX_LAW_INSTANCES) {
        law.equal(
            &format!("pipe({a}, {b})"),
            &format!("pipe({b}, {a})"),
            components,
            opts,
            &points,
        );
    }
    reports.push(law.finish());

    let mut law = Law::new(
        "iii",
        "pipe(tpool(n, a), tpool(n, b)) = tpool(n, pipe(a, b))",
        &skipped,
    );
    'iii: for n in LAW_III_THREADS {
        for (a, b) in pairs() {
            if law.report.instances >= MAX_LAW_INSTANCES {
                break 'iii;
            }
            law.equal(
                &format!("pipe(tpool({n}, {a}), tpool({n}, {b}))"),
                &format!("tpool({n}, pipe({a}, {b}))"),
                components,
                opts,
                &points,
            );
        }
    }
    reports.push(law.finish());

    let mut law = Law::new("iv", "pipe(a, b) >= tpool(2, seq(a, b))", &skipped);
    for (a, b) in pairs().take(MAX_LAW_INSTANCES) {
        law.at_least(
            &format!("pipe({a}, {b})"),
            &format!("tpool(2, seq({a}, {b}))"),
            components,
            opts,
            &points,
        );
    }
    reports.push(law.finish());
    reports
}

struct Law {
    report: LawReport,
}

impl Law {
    fn new(law: &str, statement: &str, skipped: &[String]) -> Law {
        Law {
            report: LawReport {
                law: law.into(),
                statement: statement.into(),
                instances: 0,
                symbolic: 0,
                numeric: 0,
                failures: Vec::new(),
                skipped_components: skipped.to_vec(),
                verdict: String::new(),
                max_gain: None,
            },
        }
    }

    fn models(
        left: &str,
        right: &str,
        components: &Components,
        opts: ComposeOptions,
    ) -> Option<(Expr, Expr)> {
        let l = compose(&parse_term("<law>", left).ok()?, components, opts).ok()?;
        let r = compose(&parse_term("<law>", right).ok()?, components, opts).ok()?;
        Some((l.model, r.model))
    }

    fn equal(
        &mut self,
        left: &str,
        right: &str,
        components: &Components,
        opts: ComposeOptions,
        points: &[Point],
    ) {
        let Some((l, r)) = Law::models(left, right, components, opts) else {
            return;
        };
        self.report.instances += 1;
        if l.to_string() == r.to_string() {
            self.report.symbolic += 1;
            return;
        }
        for pt in points {
            let (Ok(a), Ok(b)) = (l.eval(pt), r.eval(pt)) else {
                continue;
            };
            if !close(a, b) {
                self.fail(left, right, pt, a, b);
                return;
            }
        }
        self.report.numeric += 1;
    }

    fn at_least(
        &mut self,
        left: &str,
        right: &str,
        components: &Components,
        opts: ComposeOptions,
        points: &[Point],
    ) {
        let Some((l, r)) = Law::models(left, right, components, opts) else {
            return;
        };
        self.report.instances += 1;
        for pt in points {
            let (Ok(a), Ok(b)) = (l.eval(pt), r.eval(pt)) else {
                continue;
            };
            if a < b && !close(a, b) {
                self.fail(left, right, pt, a, b);
                return;
            }
            if b > 0.0 {
                let gain = a / b;
                self.report.max_gain =
                    Some(self.report.max_gain.map_or(gain, |g: f64| g.max(gain)));
            }
        }
        self.report.numeric += 1;
    }

    fn fail(&mut self, left: &str, right: &str, pt: &Point, a: f64, b: f64) {
        self.report.failures.push(LawFailure {
            left: left.into(),
            right: right.into(),
            point: pt.iter().cloned().collect(),
            left_value: a,
            right_value: b,
        });
    }

    fn finish(mut self) -> LawReport {
        self.report.verdict = if self.report.instances == 0 {
            "not checked"
        } else if self.report.failures.is_empty() {
            "holds"
        } else {
            "fails"
        }
        .into();
        self.report
    }
}

/// Where either of two designs is faster with at least a confidence level, along `x`.
#[derive(Clone, Debug, Serialize)]
pub struct Confidence {
    pub level: f64,
    pub ranges: Vec<WinRange>,
}

/// A run of consecutive grid values of `x` (the other parameters fixed at `given`)
/// with one verdict: `first` or `second` (faster with probability ≥ the level), or
/// `too close to call`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WinRange {
    pub given: BTreeMap<String, f64>,
    pub from_x: f64,
    pub to_x: f64,
    pub winner: String,
}

/// The verdict at one point from the probability that the first is smaller.
fn winner(p: f64, level: f64) -> &'static str {
    if p >= level {
        "first"
    } else if p <= 1.0 - level {
        "second"
    } else {
        "too close to call"
    }
}

/// Add to `c` each point's probability that the first design is faster and both
/// intervals, and the ranges of `x` where either wins with `options.level`, when a
/// component of either design has an uncertainty. Both designs are evaluated on the
/// same draws: a component they share is the same model in both.
pub fn attach_confidence(
    c: &mut Comparison,
    first: &Term,
    second: &Term,
    components: &Components,
    opts: ComposeOptions,
    options: IntervalOptions,
) -> Result<(), Diagnostic> {
    if !components.iter().any(|k| k.uncertainty.is_some()) {
        return Ok(());
    }
    let templates = templated(components);
    let a = composed_template(first, &templates, opts, None)?;
    let b = composed_template(second, &templates, opts, None)?;
    let Some(sampler) = Sampler::new(&[&a, &b], components, options) else {
        return Ok(());
    };
    let (ba, bb) = (sampler.batch(&a), sampler.batch(&b));
    for p in &mut c.points {
        let point: Vec<(String, f64)> = p.point.iter().map(|(k, v)| (k.clone(), *v)).collect();
        let (Ok(va), Ok(vb)) = (sampler.values(&ba, &point), sampler.values(&bb, &point)) else {
            continue;
        };
        p.probability_first_smaller = crate::uncertainty::probability_smaller(&va, &vb);
        p.first_interval = interval_of(va, options.level);
        p.second_interval = interval_of(vb, options.level);
    }
    // Runs along x, per combination of the other parameters (in the grid's order).
    let mut ranges: Vec<WinRange> = Vec::new();
    for p in &c.points {
        let (Some(&x), Some(prob)) = (p.point.get(AXIS), p.probability_first_smaller) else {
            continue;
        };
        let given: BTreeMap<String, f64> = p
            .point
            .iter()
            .filter(|(k, _)| k.as_str() != AXIS)
            .map(|(k, v)| (k.clone(), *v))
            .collect();
        let w = winner(prob, options.level);
        match ranges.iter_mut().rev().find(|r| r.given == given) {
            Some(r) if r.winner == w => {
                r.from_x = r.from_x.min(x);
                r.to_x = r.to_x.max(x);
            }
            _ => ranges.push(WinRange {
                given,
                from_x: x,
                to_x: x,
                winner: w.to_string(),
            }),
        }
    }
    c.confidence = Some(Confidence {
        level: options.level,
        ranges,
    });
    Ok(())
}
