//! Which stage of a pipeline is the bottleneck, and where that changes.
//!
//! The seed picks the asymptotically larger stage model; for the sizes a designer cares
//! about the pointwise maximum can be another stage. Along the input size `x` (the other
//! parameters fixed), we sample the leading stage on a logarithmic grid, and refine every
//! change of leader by bisection in `log x` until the bracket is relatively
//! [`CROSSOVER_REL_TOL`] wide. A change in which a third stage briefly leads splits into
//! two crossovers. Stages that cannot be evaluated at a sample (e.g. `log2(x)` in a
//! divisor at `x = 1`) leave that sample out. The scans evaluate the stage models
//! compiled ([`Expr::compile`]: the same values as [`Expr::eval`], without walking the
//! tree at every sample).

use crate::model::{compare_growth, Compiled, Env, Expr, Growth};

/// Relative width of the bracket at which bisection stops.
pub const CROSSOVER_REL_TOL: f64 = 1e-10;
/// Two stage values closer than this (relatively) are a tie; the earlier stage keeps
/// the lead, so identical stages never produce spurious crossovers.
pub const TIE_REL_TOL: f64 = 1e-12;
/// Samples per decade of `x` before refinement.
pub const SAMPLES_PER_DECADE: usize = 16;
/// Upper end of the scan behind "stage S for all x >= X"; beyond it the asymptotic
/// comparison speaks.
pub const SCAN_MAX_X: f64 = 1e30;

/// A point where the leading stage changes from `from` to `to` (indices into the stages).
#[derive(Clone, Debug, PartialEq)]
pub struct Crossover {
    pub x: f64,
    pub from: usize,
    pub to: usize,
}

/// `env` with the axis bound to a value.
struct At<'a> {
    env: &'a dyn Env,
    axis: &'a str,
    value: f64,
}

impl Env for At<'_> {
    fn get(&self, name: &str) -> Option<f64> {
        if name == self.axis {
            Some(self.value)
        } else {
            self.env.get(name)
        }
    }
}

/// Index of the largest model at `axis = v` (ties go to the earlier one); `None` when
/// some model cannot be evaluated there.
pub fn leader(models: &[Expr], axis: &str, v: f64, env: &dyn Env) -> Option<usize> {
    let at = At {
        env,
        axis,
        value: v,
    };
    largest(models.iter().map(|m| m.eval(&at).ok()))
}

/// [`leader`] of models compiled once ([`Expr::compile`]), for many values of the axis.
pub fn leader_compiled(models: &[Compiled], axis: &str, v: f64, env: &dyn Env) -> Option<usize> {
    let at = At {
        env,
        axis,
        value: v,
    };
    largest(models.iter().map(|m| m.eval_env(&at)))
}

/// Index of the largest value (ties to the earlier one); `None` when one is missing.
fn largest(values: impl Iterator<Item = Option<f64>>) -> Option<usize> {
    let mut best: Option<(usize, f64)> = None;
    for (i, y) in values.enumerate() {
        let y = y?;
        match best {
            None => best = Some((i, y)),
            Some((_, b)) if y - b > TIE_REL_TOL * y.abs().max(b.abs()) => best = Some((i, y)),
            _ => {}
        }
    }
    best.map(|(i, _)| i)
}

/// Index of the smallest model (ties to the earlier one).
pub fn follower(models: &[Expr], axis: &str, v: f64, env: &dyn Env) -> Option<usize> {
    let negated: Vec<Expr> = models.iter().map(|m| Expr::neg(m.clone())).collect();
    leader(&negated, axis, v, env)
}

/// Every change of the leading model for `axis` in `[lo, hi]`, in increasing order.
/// `extra` are points that must be sampled too (the grid the user evaluates).
pub fn crossovers(
    models: &[Expr],
    axis: &str,
    lo: f64,
    hi: f64,
    extra: &[f64],
    env: &dyn Env,
) -> Vec<Crossover> {
    if models.len() < 2 || !(lo > 0.0 && hi >= lo) || !models.iter().any(|m| m.mentions(axis)) {
        return Vec::new();
    }
    let compiled: Vec<Compiled> = models.iter().map(Expr::compile).collect();
    crossovers_compiled(&compiled, axis, lo, hi, extra, env)
}

/// [`crossovers`] of compiled models (at least two, one mentioning the axis).
fn crossovers_compiled(
    models: &[Compiled],
    axis: &str,
    lo: f64,
    hi: f64,
    extra: &[f64],
    env: &dyn Env,
) -> Vec<Crossover> {
    let mut xs = log_samples(lo, hi);
    xs.extend(extra.iter().copied().filter(|v| *v >= lo && *v <= hi));
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    let mut out = Vec::new();
    let mut prev: Option<(f64, usize)> = None;
    for x in xs {
        let Some(l) = leader_compiled(models, axis, x, env) else {
            continue;
        };
        if let Some((px, pl)) = prev {
            if pl != l {
                refine(models, axis, env, px, x, pl, l, &mut out, 0);
            }
        }
        prev = Some((x, l));
    }
    out
}

fn log_samples(lo: f64, hi: f64) -> Vec<f64> {
    if hi <= lo {
        return vec![lo];
    }
    let decades = (hi / lo).log10();
    let n = ((decades * SAMPLES_PER_DECADE as f64).ceil() as usize).clamp(1, 100_000);
    let (a, b) = (lo.ln(), hi.ln());
    (0..=n)
        .map(|i| (a + (b - a) * i as f64 / n as f64).exp())
        .map(|v| v.clamp(lo, hi))
        .collect()
}

#[allow(clippy::too_many_arguments)]
fn refine(
    models: &[Compiled],
    axis: &str,
    env: &dyn Env,
    mut lo: f64,
    mut hi: f64,
    a: usize,
    b: usize,
    out: &mut Vec<Crossover>,
    depth: usize,
) {
    while hi / lo - 1.0 > CROSSOVER_REL_TOL {
        let mid = (lo * hi).sqrt();
        if !(mid > lo && mid < hi) {
            break;
        }
        match leader_compiled(models, axis, mid, env) {
            Some(l) if l == a => lo = mid,
            Some(l) if l == b => hi = mid,
            Some(c) if depth < 16 => {
                refine(models, axis, env, lo, mid, a, c, out, depth + 1);
                refine(models, axis, env, mid, hi, c, b, out, depth + 1);
                return;
            }
            _ => break,
        }
    }
    out.push(Crossover {
        x: (lo * hi).sqrt(),
        from: a,
        to: b,
    });
}

/// Which stage leads for large inputs, and from where on.
#[derive(Clone, Debug, PartialEq)]
pub struct Settling {
    /// The stage that leads at the top of the scan.
    pub stage: usize,
    /// It leads for all `x >= from` (the last crossover, or 1 without any).
    pub from: f64,
    /// Every crossover on `[1, SCAN_MAX_X]`.
    pub crossovers: Vec<Crossover>,
    /// The asymptotically dominant stage when symbolic comparison decides it.
    pub asymptotic: Option<usize>,
}

/// The stage leading for all `x >= X` over `x ≥ 1`, with `X` the last crossover.
/// `None` when no sample could be evaluated.
pub fn settling(models: &[Expr], axis: &str, extra: &[f64], env: &dyn Env) -> Option<Settling> {
    settling_with(models, axis, extra, env, dominant_stage(models))
}

/// [`settling`] where the caller knows [`dominant_stage`] of `models` (a symbolic
/// comparison that costs as much as the scan on large models).
pub(crate) fn settling_with(
    models: &[Expr],
    axis: &str,
    extra: &[f64],
    env: &dyn Env,
    dominant: Option<usize>,
) -> Option<Settling> {
    let compiled: Vec<Compiled> = models.iter().map(Expr::compile).collect();
    let crossings = if models.len() < 2 || !models.iter().any(|m| m.mentions(axis)) {
        Vec::new()
    } else {
        crossovers_compiled(&compiled, axis, 1.0, SCAN_MAX_X, extra, env)
    };
    // The leader at the top of the scan (skip samples that cannot be evaluated).
    let top = log_samples(1.0, SCAN_MAX_X)
        .into_iter()
        .rev()
        .find_map(|x| leader_compiled(&compiled, axis, x, env))?;
    let from = crossings.last().map_or(1.0, |c| c.x);
    Some(Settling {
        stage: top,
        from,
        crossovers: crossings,
        asymptotic: dominant,
    })
}

/// The stage whose model grows fastest (the paper's choice), when symbolic comparison
/// decides it: strictly faster than every other, or of the same order with the largest
/// leading coefficient.
pub fn dominant_stage(models: &[Expr]) -> Option<usize> {
    let mut best = 0;
    for i in 1..models.len() {
        match compare_growth(&models[i], &models[best]) {
            Growth::Faster => best = i,
            Growth::Same { ratio: Some(r) } if r > 1.0 + TIE_REL_TOL => best = i,
            Growth::Same { .. } | Growth::Slower => {}
            Growth::Incomparable | Growth::Unknown => return None,
        }
    }
    // `best` must dominate everyone, not only those it was compared with last.
    for (i, m) in models.iter().enumerate() {
        if i != best
            && matches!(
                compare_growth(&models[best], m),
                Growth::Slower | Growth::Incomparable | Growth::Unknown
            )
        {
            return None;
        }
    }
    Some(best)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::parse_model;

    fn m(s: &str) -> Expr {
        parse_model(s).unwrap()
    }

    const NO_ENV: [(&str, f64); 0] = [];

    #[test]
    fn qsort_overtakes_inc_and_nop() {
        // tpool(4, qsort) against seq(inc, nop): 258.5425 x log2 x = 536.185 x + 5422.97.
        let stages = [m("258.5425 * x * log2(x)"), m("536.185 * x + 5422.97")];
        let s = settling(&stages, "x", &[], &NO_ENV).unwrap();
        assert_eq!(s.stage, 0);
        assert_eq!(s.asymptotic, Some(0));
        assert_eq!(s.crossovers.len(), 1);
        let c = &s.crossovers[0];
        assert_eq!((c.from, c.to), (1, 0));
        let lhs = 258.5425 * c.x * c.x.log2();
        let rhs = 536.185 * c.x + 5422.97;
        assert!((lhs - rhs).abs() <= 1e-8 * rhs, "{lhs} vs {rhs} at {}", c.x);
        assert_eq!(s.from, c.x);
    }

    #[test]
    fn a_third_stage_leading_briefly_gives_two_crossovers() {
        // a leads early, then c (a bump) for 100 < x < 1000, then b.
        let stages = [m("1000"), m("x"), m("max(1000, min(x * 2, 2000))")];
        let cs = crossovers(&stages, "x", 1.0, 1e6, &[], &NO_ENV);
        let pairs: Vec<(usize, usize)> = cs.iter().map(|c| (c.from, c.to)).collect();
        assert_eq!(pairs, [(0, 2), (2, 1)]);
        assert!((cs[0].x - 500.0).abs() < 1e-6, "{}", cs[0].x);
        assert!((cs[1].x - 2000.0).abs() < 1e-6, "{}", cs[1].x);
    }

    #[test]
    fn identical_stages_never_cross() {
        let stages = [m("536.185 * x"), m("536.185 * x")];
        assert!(crossovers(&stages, "x", 1.0, 1e12, &[], &NO_ENV).is_empty());
        assert_eq!(leader(&stages, "x", 10.0, &NO_ENV), Some(0));
    }

    #[test]
    fn other_parameters_come_from_the_environment() {
        let stages = [m("1034.17 * x * log2(x) / n"), m("536.185 * x")];
        let env = [("n", 4.0)];
        // 1034.17/4 * log2(x) = 536.185  ->  log2(x) = 2.0739
        let cs = crossovers(&stages, "x", 1.0, 1e6, &[], &env);
        assert_eq!(cs.len(), 1);
        assert!((cs[0].x.log2() - 4.0 * 536.185 / 1034.17).abs() < 1e-8);
        assert_eq!(leader(&stages, "x", 1e3, &NO_ENV), None, "n is unbound");
    }

    #[test]
    fn dominance_needs_a_decision() {
        assert_eq!(dominant_stage(&[m("x"), m("2 * x"), m("5")]), Some(1));
        assert_eq!(dominant_stage(&[m("x^2"), m("y^2")]), None);
        assert_eq!(dominant_stage(&[m("x"), m("x")]), Some(0));
    }
}
