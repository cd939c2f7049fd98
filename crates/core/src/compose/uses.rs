//! Where each component is evaluated: composition records, for every place a component
//! enters the model, the value of each of its parameters as an expression in the whole
//! program's parameters (patterns substitute them: a MapReduce's reduce sees `d(x)`, a
//! divide-and-conquer level `x/2^j`, Fox's block product `x/√P`). Evaluated at a grid
//! point, they say where a component is used outside the range it was measured on.

use serde::Serialize;

use crate::components::Components;
use crate::diag::Span;
use crate::model::{Env, Expr};

/// Values of a recursion variable tried per level at most (a recursion deeper than this
/// is checked at its first levels).
const MAX_LEVELS: i64 = 64;

/// One place a component enters the composed model.
#[derive(Clone, Debug)]
pub struct Use {
    pub component: String,
    pub span: Span,
    /// Each measured parameter of the component and its value there.
    pub args: Vec<(String, Expr)>,
    /// Recursion variables the arguments mention, outermost first: `(var, from, to)`.
    pub levels: Vec<(String, Expr, Expr)>,
}

/// A component evaluated outside the range it was measured on.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Extrapolation {
    pub component: String,
    pub parameter: String,
    /// The value farthest outside the range at this point.
    pub value: f64,
    pub measured: [f64; 2],
}

impl Use {
    /// A use of `component` with its own parameters (before any substitution).
    pub fn new(component: &str, span: Span, components: &Components) -> Option<Use> {
        let c = components.get(component)?;
        if c.measured.is_empty() {
            return None;
        }
        Some(Use {
            component: component.to_string(),
            span,
            args: c
                .measured
                .keys()
                .map(|p| (p.clone(), Expr::param(p)))
                .collect(),
            levels: Vec::new(),
        })
    }

    /// Substitute `bindings` at once in every argument (see [`super::subst_simultaneous`]).
    pub fn subst(&mut self, bindings: &[(&str, Expr)]) {
        for (_, a) in &mut self.args {
            *a = super::subst_simultaneous(a.clone(), bindings);
        }
        for (_, from, to) in &mut self.levels {
            *from = super::subst_simultaneous(from.clone(), bindings);
            *to = super::subst_simultaneous(to.clone(), bindings);
        }
    }

    /// The values of argument `i` at `point`, over every level of the recursions.
    pub fn values(&self, i: usize, point: &dyn Env) -> Vec<f64> {
        let mut out = Vec::new();
        let mut bound: Vec<(String, f64)> = Vec::new();
        self.walk(0, i, point, &mut bound, &mut out);
        out
    }

    fn walk(
        &self,
        depth: usize,
        i: usize,
        point: &dyn Env,
        bound: &mut Vec<(String, f64)>,
        out: &mut Vec<f64>,
    ) {
        struct With<'a> {
            point: &'a dyn Env,
            bound: &'a [(String, f64)],
        }
        impl Env for With<'_> {
            fn get(&self, name: &str) -> Option<f64> {
                self.bound
                    .iter()
                    .rev()
                    .find(|(n, _)| n == name)
                    .map(|(_, v)| *v)
                    .or_else(|| self.point.get(name))
            }
        }
        let env = With { point, bound };
        let Some((var, from, to)) = self.levels.get(depth) else {
            if let Ok(v) = self.args[i].1.eval(&env) {
                out.push(v);
            }
            return;
        };
        let (Ok(f), Ok(t)) = (from.eval(&env), to.eval(&env)) else {
            return;
        };
        let (f, t) = (f.ceil() as i64, t.floor() as i64);
        for j in f..=t.min(f.saturating_add(MAX_LEVELS - 1)) {
            bound.push((var.clone(), j as f64));
            self.walk(depth + 1, i, point, bound, out);
            bound.pop();
        }
    }
}

/// Every component of `uses` evaluated outside its measured range at `point`: one
/// entry per component and parameter, with the value farthest outside.
pub fn extrapolations(
    uses: &[Use],
    components: &Components,
    point: &dyn Env,
) -> Vec<Extrapolation> {
    let mut out: Vec<Extrapolation> = Vec::new();
    for u in uses {
        let Some(c) = components.get(&u.component) else {
            continue;
        };
        for (i, (p, _)) in u.args.iter().enumerate() {
            let Some(&[lo, hi]) = c.measured.get(p) else {
                continue;
            };
            let tol = 1e-9 * lo.abs().max(hi.abs());
            let distance = |v: f64| {
                if v < lo - tol {
                    lo - v
                } else if v > hi + tol {
                    v - hi
                } else {
                    0.0
                }
            };
            for v in u.values(i, point) {
                let d = distance(v);
                if d <= 0.0 {
                    continue;
                }
                match out
                    .iter_mut()
                    .find(|e| e.component == u.component && e.parameter == *p)
                {
                    Some(e) if distance(e.value) >= d => {}
                    Some(e) => e.value = v,
                    None => out.push(Extrapolation {
                        component: u.component.clone(),
                        parameter: p.clone(),
                        value: v,
                        measured: [lo, hi],
                    }),
                }
            }
        }
    }
    out.sort_by(|a, b| (&a.component, &a.parameter).cmp(&(&b.component, &b.parameter)));
    out
}

/// The value of each of `parameters` at which component `component` is evaluated at
/// `point`, the one farthest outside its measured range where it has several (the
/// largest when none lies outside); `None` when a parameter has no value there.
pub fn needed(
    uses: &[Use],
    components: &Components,
    component: &str,
    parameters: &[String],
    point: &dyn Env,
) -> Option<Vec<f64>> {
    let measured = &components.get(component)?.measured;
    parameters
        .iter()
        .map(|p| {
            let values: Vec<f64> = uses
                .iter()
                .filter(|u| u.component == component)
                .flat_map(|u| {
                    u.args
                        .iter()
                        .position(|(n, _)| n == p)
                        .map(|i| u.values(i, point))
                        .unwrap_or_default()
                })
                .collect();
            let outside = |v: f64| {
                measured
                    .get(p)
                    .map_or(0.0, |[lo, hi]| (lo / v).max(v / hi).max(1.0))
            };
            values
                .into_iter()
                .max_by(|a, b| outside(*a).total_cmp(&outside(*b)).then(a.total_cmp(b)))
        })
        .collect()
}
