//! Evaluating a model over many draws of some of its parameters at once: the
//! propagation of uncertainty evaluates a composed model at every grid point for
//! thousands of draws of its components' coefficients.
//!
//! [`Expr::batch`] compiles the model once into a flat program (children before parents)
//! whose parameters are either *scalars* — the same in every draw, given per point — or
//! *lanes* — one value per draw, given as columns. [`Batch::eval`] runs the program over
//! blocks of [`LANES`] draws: parts of the model that mention no lane parameter are
//! computed once per block as numbers, the rest element by element. No domain checks:
//! a draw where the model is not a finite real number comes out NaN or infinite (the
//! caller leaves it out); the point evaluation ([`Expr::eval`]) reports domain errors.

use num_traits::Zero;

use super::tree::Expr;
use crate::model::number::Q;
use crate::model::pmnf::pow_q;

use super::eval::{Env, EvalError};

/// Draws evaluated together.
pub const LANES: usize = 128;

type Block = [f64; LANES];

/// Where a parameter's value comes from.
#[derive(Clone, Copy, Debug)]
enum Src {
    /// The point's `i`-th parameter.
    Point(usize),
    /// The `i`-th summation variable (outermost first).
    Bound(usize),
    /// Column `i` of the draws.
    Lane(usize),
}

/// A term of a PMNF: its coefficient and its factors `(parameter, exponent, log exponent)`.
type Term = (f64, Vec<(Src, Q, Q)>);

#[derive(Clone, Debug)]
enum Op {
    /// Terms `c · Π factor` of a PMNF.
    Poly(Vec<Term>),
    /// Sums, products, maxima and minima of the top `n` entries.
    Add(usize),
    Mul(usize),
    Max(usize),
    Min(usize),
    Div,
    Pow(Q),
    PowE,
    Log2,
    Ceil,
    Floor,
    /// The sum of `body` with the variable at `depth` between the top two entries.
    Sum {
        depth: usize,
        body: Box<Program>,
    },
    /// The entry below the pieces selects one of the `pieces` top entries.
    Piecewise {
        breaks: Vec<f64>,
        pieces: usize,
    },
}

/// Ops in evaluation order; the last is the result.
#[derive(Clone, Debug, Default)]
struct Program {
    ops: Vec<Op>,
    /// Whether op `i` depends on a lane parameter.
    varies: Vec<bool>,
}

/// A model compiled for evaluation over draws ([`Expr::batch`]).
#[derive(Clone, Debug)]
pub struct Batch {
    program: Program,
    /// The parameters given per point.
    point: Vec<String>,
    /// Deepest nesting of sums.
    depth: usize,
    lanes: usize,
}

struct Compiler<'a> {
    lanes: &'a [String],
    point: Vec<String>,
    /// Summation variables in scope, outermost first.
    bound: Vec<String>,
    depth: usize,
}

impl Compiler<'_> {
    fn src(&mut self, name: &str) -> Src {
        if let Some(d) = self.bound.iter().rposition(|n| n == name) {
            return Src::Bound(d);
        }
        if let Some(i) = self.lanes.iter().position(|l| l == name) {
            return Src::Lane(i);
        }
        if let Some(i) = self.point.iter().position(|p| p == name) {
            return Src::Point(i);
        }
        self.point.push(name.to_string());
        Src::Point(self.point.len() - 1)
    }

    fn compile(&mut self, e: &Expr, p: &mut Program) -> usize {
        let many = |c: &mut Self, v: &[Expr], p: &mut Program| -> Vec<usize> {
            v.iter().map(|a| c.compile(a, p)).collect()
        };
        let (op, varies) = match e {
            Expr::Poly(poly) => {
                let terms: Vec<Term> = poly
                    .terms()
                    .map(|(c, m)| {
                        let f = m
                            .factors()
                            .map(|(n, pw)| (self.src(n), pw.exp, pw.log))
                            .collect();
                        (c, f)
                    })
                    .collect();
                let varies = terms
                    .iter()
                    .any(|(_, f)| f.iter().any(|(s, _, _)| matches!(s, Src::Lane(_))));
                (Op::Poly(terms), varies)
            }
            Expr::Add(v) => {
                let a = many(self, v, p);
                let varies = a.iter().any(|&i| p.varies[i]);
                (Op::Add(a.len()), varies)
            }
            Expr::Mul(v) => {
                let a = many(self, v, p);
                let varies = a.iter().any(|&i| p.varies[i]);
                (Op::Mul(a.len()), varies)
            }
            Expr::Max(v) => {
                let a = many(self, v, p);
                let varies = a.iter().any(|&i| p.varies[i]);
                (Op::Max(a.len()), varies)
            }
            Expr::Min(v) => {
                let a = many(self, v, p);
                let varies = a.iter().any(|&i| p.varies[i]);
                (Op::Min(a.len()), varies)
            }
            Expr::Div(a, b) => {
                let (a, b) = (self.compile(a, p), self.compile(b, p));
                (Op::Div, p.varies[a] || p.varies[b])
            }
            Expr::PowE(a, b) => {
                let (a, b) = (self.compile(a, p), self.compile(b, p));
                (Op::PowE, p.varies[a] || p.varies[b])
            }
            Expr::Pow(a, q) => {
                let a = self.compile(a, p);
                (Op::Pow(*q), p.varies[a])
            }
            Expr::Log2(a) => {
                let a = self.compile(a, p);
                (Op::Log2, p.varies[a])
            }
            Expr::Ceil(a) => {
                let a = self.compile(a, p);
                (Op::Ceil, p.varies[a])
            }
            Expr::Floor(a) => {
                let a = self.compile(a, p);
                (Op::Floor, p.varies[a])
            }
            Expr::Sum {
                var,
                from,
                to,
                body,
            } => {
                let (from, to) = (self.compile(from, p), self.compile(to, p));
                let depth = self.bound.len();
                self.bound.push(var.clone());
                self.depth = self.depth.max(self.bound.len());
                let mut inner = Program::default();
                self.compile(body, &mut inner);
                self.bound.pop();
                let varies = p.varies[from] || p.varies[to] || inner.result_varies();
                (
                    Op::Sum {
                        depth,
                        body: Box::new(inner),
                    },
                    varies,
                )
            }
            Expr::Piecewise { on, breaks, pieces } => {
                let on = self.compile(on, p);
                let pieces = many(self, pieces, p);
                let varies = p.varies[on] || pieces.iter().any(|&i| p.varies[i]);
                (
                    Op::Piecewise {
                        breaks: breaks.clone(),
                        pieces: pieces.len(),
                    },
                    varies,
                )
            }
        };
        p.ops.push(op);
        p.varies.push(varies);
        p.ops.len() - 1
    }
}

impl Program {
    fn result_varies(&self) -> bool {
        self.varies.last().copied().unwrap_or(false)
    }
}

impl Expr {
    /// Compile for evaluation over draws of the parameters `lanes`; every other
    /// parameter is given per point ([`Batch::eval`]).
    pub fn batch(&self, lanes: &[String]) -> Batch {
        let mut c = Compiler {
            lanes,
            point: Vec::new(),
            bound: Vec::new(),
            depth: 0,
        };
        let mut program = Program::default();
        c.compile(self, &mut program);
        Batch {
            program,
            point: c.point,
            depth: c.depth,
            lanes: lanes.len(),
        }
    }
}

/// The values of the ops evaluated so far whose parents have not consumed them: ops
/// come in post-order (the model is a tree), so an op's arguments are the top entries.
/// An entry is a number when it does not vary between draws, else a block.
struct Stack {
    blocks: Vec<Block>,
    scalars: Vec<f64>,
    varies: Vec<bool>,
    len: usize,
}

impl Stack {
    fn new() -> Stack {
        Stack {
            blocks: Vec::new(),
            scalars: Vec::new(),
            varies: Vec::new(),
            len: 0,
        }
    }

    /// Make room for one more entry and return its index.
    fn grow(&mut self) -> usize {
        if self.len == self.blocks.len() {
            self.blocks.push([0.0; LANES]);
            self.scalars.push(0.0);
            self.varies.push(false);
        }
        self.len += 1;
        self.len - 1
    }

    fn push_scalar(&mut self, v: f64) {
        let i = self.grow();
        self.scalars[i] = v;
        self.varies[i] = false;
    }

    /// Entry `i`'s values as a block.
    fn block(&self, i: usize) -> Block {
        if self.varies[i] {
            self.blocks[i]
        } else {
            [self.scalars[i]; LANES]
        }
    }

    /// Replace the top `k` entries by the block `b`.
    fn replace_block(&mut self, k: usize, b: Block) {
        self.len -= k;
        let i = self.grow();
        self.blocks[i] = b;
        self.varies[i] = true;
    }

    /// Replace the top `k` entries by the number `v`.
    fn replace_scalar(&mut self, k: usize, v: f64) {
        self.len -= k;
        self.push_scalar(v);
    }

    /// Fold the top `k` entries with `f` from `init` into one.
    fn fold(&mut self, k: usize, init: f64, f: impl Fn(f64, f64) -> f64) {
        let base = self.len - k;
        if !self.varies[base..self.len].iter().any(|v| *v) {
            let v = self.scalars[base..self.len]
                .iter()
                .fold(init, |a, x| f(a, *x));
            self.replace_scalar(k, v);
            return;
        }
        // Accumulate in place into the first entry.
        if !self.varies[base] {
            let v = f(init, self.scalars[base]);
            self.blocks[base] = [v; LANES];
            self.varies[base] = true;
        }
        let (first, rest) = self.blocks.split_at_mut(base + 1);
        let acc = &mut first[base];
        for (j, i) in (base + 1..self.len).enumerate() {
            if self.varies[i] {
                for (o, x) in acc.iter_mut().zip(&rest[j]) {
                    *o = f(*o, *x);
                }
            } else {
                let x = self.scalars[i];
                for o in acc.iter_mut() {
                    *o = f(*o, x);
                }
            }
        }
        self.len = base + 1;
    }

    /// Apply `f` to the top entry.
    fn unary(&mut self, f: impl Fn(f64) -> f64) {
        let i = self.len - 1;
        if self.varies[i] {
            for x in self.blocks[i].iter_mut() {
                *x = f(*x);
            }
        } else {
            self.scalars[i] = f(self.scalars[i]);
        }
    }

    /// Replace the top two entries `a, b` by `f(a, b)`.
    fn binary(&mut self, f: impl Fn(f64, f64) -> f64) {
        let (a, b) = (self.len - 2, self.len - 1);
        if !self.varies[a] && !self.varies[b] {
            let v = f(self.scalars[a], self.scalars[b]);
            self.replace_scalar(2, v);
            return;
        }
        if !self.varies[a] {
            self.blocks[a] = [self.scalars[a]; LANES];
            self.varies[a] = true;
        }
        let (first, rest) = self.blocks.split_at_mut(b);
        let x = &mut first[a];
        if self.varies[b] {
            for (o, y) in x.iter_mut().zip(&rest[0]) {
                *o = f(*o, *y);
            }
        } else {
            let y = self.scalars[b];
            for o in x.iter_mut() {
                *o = f(*o, y);
            }
        }
        self.len = b;
    }
}

fn factor(x: f64, exp: Q, log: Q) -> f64 {
    let mut v = 1.0;
    if !exp.is_zero() {
        v *= pow_q(x, exp);
    }
    if !log.is_zero() {
        v *= pow_q(x.log2(), log);
    }
    v
}

fn pow_real(x: f64, q: Q) -> f64 {
    if x < 0.0 && !q.is_integer() {
        f64::NAN
    } else {
        pow_q(x, q)
    }
}

fn pow_e(x: f64, y: f64) -> f64 {
    if x < 0.0 && y.fract() != 0.0 {
        f64::NAN
    } else {
        x.powf(y)
    }
}

fn log2_real(x: f64) -> f64 {
    if x <= 0.0 {
        f64::NAN
    } else {
        x.log2()
    }
}

fn piece(breaks: &[f64], on: f64) -> Option<usize> {
    (!on.is_nan()).then(|| breaks.iter().take_while(|&&b| b <= on).count())
}

/// The bounds of a sum: `None` where they are not finite or the sum is too long.
fn sum_range(from: f64, to: f64) -> Option<(f64, f64)> {
    let (f, t) = (from.ceil(), to.floor());
    (f.is_finite() && t.is_finite() && t - f <= 1e7).then_some((f, t))
}

/// What one block of draws is evaluated with.
struct Ctx<'a> {
    point: &'a [f64],
    columns: &'a [&'a [f64]],
    /// The first draw of the block and how many draws it has.
    start: usize,
    len: usize,
}

impl Program {
    /// Evaluate every op for one block of draws, leaving the result on top of `stack`.
    fn run(&self, ctx: &Ctx<'_>, bound: &mut [f64], stack: &mut Stack) {
        for op in &self.ops {
            match op {
                Op::Poly(terms) => poly(terms, ctx, bound, stack),
                Op::Add(n) => stack.fold(*n, 0.0, |a, x| a + x),
                Op::Mul(n) => stack.fold(*n, 1.0, |a, x| a * x),
                Op::Max(n) => stack.fold(*n, f64::NEG_INFINITY, f64::max),
                Op::Min(n) => stack.fold(*n, f64::INFINITY, f64::min),
                Op::Div => stack.binary(|x, y| x / y),
                Op::PowE => stack.binary(pow_e),
                Op::Pow(q) => stack.unary(|x| pow_real(x, *q)),
                Op::Log2 => stack.unary(log2_real),
                Op::Ceil => stack.unary(f64::ceil),
                Op::Floor => stack.unary(f64::floor),
                Op::Sum { depth, body, .. } => sum(*depth, body, ctx, bound, stack),
                Op::Piecewise { breaks, pieces } => {
                    let k = pieces + 1;
                    let base = stack.len - k;
                    if !stack.varies[base..stack.len].iter().any(|v| *v) {
                        let v = piece(breaks, stack.scalars[base])
                            .map_or(f64::NAN, |p| stack.scalars[base + 1 + p]);
                        stack.replace_scalar(k, v);
                    } else {
                        let on = stack.block(base);
                        let mut out = [f64::NAN; LANES];
                        for (j, o) in out.iter_mut().enumerate() {
                            if let Some(p) = piece(breaks, on[j]) {
                                let i = base + 1 + p;
                                *o = if stack.varies[i] {
                                    stack.blocks[i][j]
                                } else {
                                    stack.scalars[i]
                                };
                            }
                        }
                        stack.replace_block(k, out);
                    }
                }
            }
        }
    }
}

/// Push the value of a PMNF's terms.
fn poly(terms: &[Term], ctx: &Ctx<'_>, bound: &[f64], stack: &mut Stack) {
    let top = stack.grow();
    let mut fixed_sum = 0.0;
    let mut lanes = false;
    let one = Q::from_integer(1);
    for (c, f) in terms {
        let mut fixed = *c;
        let mut column = None;
        let mut others = false;
        for (src, e, l) in f {
            match src {
                Src::Point(i) => fixed *= factor(ctx.point[*i], *e, *l),
                Src::Bound(d) => fixed *= factor(bound[*d], *e, *l),
                Src::Lane(col) if column.is_none() && *e == one && l.is_zero() => {
                    column = Some(&ctx.columns[*col][ctx.start..ctx.start + ctx.len]);
                }
                Src::Lane(_) => others = true,
            }
        }
        if column.is_none() && !others {
            fixed_sum += fixed;
            continue;
        }
        let out = &mut stack.blocks[top];
        if !lanes {
            *out = [0.0; LANES];
            lanes = true;
        }
        if !others {
            // The common term: a coefficient times numbers.
            if let Some(col) = column {
                for (o, x) in out.iter_mut().zip(col) {
                    *o += fixed * x;
                }
            }
            continue;
        }
        let mut v = [fixed; LANES];
        let mut first = true;
        for (src, e, l) in f {
            let Src::Lane(col) = src else { continue };
            let col = &ctx.columns[*col][ctx.start..ctx.start + ctx.len];
            if first && column.is_some() && *e == one && l.is_zero() {
                first = false;
                for (o, x) in v.iter_mut().zip(col) {
                    *o *= x;
                }
            } else {
                for (o, x) in v.iter_mut().zip(col) {
                    *o *= factor(*x, *e, *l);
                }
            }
        }
        for (o, x) in out.iter_mut().zip(&v) {
            *o += x;
        }
    }
    if lanes {
        for o in stack.blocks[top].iter_mut() {
            *o += fixed_sum;
        }
        stack.varies[top] = true;
    } else {
        stack.scalars[top] = fixed_sum;
        stack.varies[top] = false;
    }
}

/// Replace the bounds on top of `stack` by the sum of `body` over them.
fn sum(depth: usize, body: &Program, ctx: &Ctx<'_>, bound: &mut [f64], stack: &mut Stack) {
    let (from, to) = (stack.len - 2, stack.len - 1);
    // Bounds that vary between draws are not a sum of the seeds' shapes.
    let range = (!stack.varies[from] && !stack.varies[to])
        .then(|| sum_range(stack.scalars[from], stack.scalars[to]))
        .flatten();
    let Some((f, t)) = range else {
        stack.replace_scalar(2, f64::NAN);
        return;
    };
    let mut inner = Stack::new();
    let mut acc = [0.0; LANES];
    let mut scalar = 0.0;
    let mut lanes = false;
    let mut k = f;
    while k <= t {
        bound[depth] = k;
        inner.len = 0;
        body.run(ctx, bound, &mut inner);
        if inner.varies[0] {
            lanes = true;
            for (a, x) in acc.iter_mut().zip(&inner.blocks[0]) {
                *a += x;
            }
        } else {
            scalar += inner.scalars[0];
        }
        k += 1.0;
    }
    if lanes {
        for a in acc.iter_mut() {
            *a += scalar;
        }
        stack.replace_block(2, acc);
    } else {
        stack.replace_scalar(2, scalar);
    }
}

impl Batch {
    /// The parameters each point must give a value for.
    pub fn point_parameters(&self) -> &[String] {
        &self.point
    }

    /// Whether the value depends on the draws at all.
    pub fn varies(&self) -> bool {
        self.program.result_varies()
    }

    /// The model's value at `point` in each of `draws` draws, appended to `out`:
    /// `columns[i][k]` is the `i`-th lane parameter's value in draw `k` (each column at
    /// least `draws` long). Draws where the model is not a finite real number give a
    /// value that is not finite. Errors: a point parameter without a value.
    pub fn eval(
        &self,
        point: &dyn Env,
        columns: &[&[f64]],
        draws: usize,
        out: &mut Vec<f64>,
    ) -> Result<(), EvalError> {
        assert_eq!(columns.len(), self.lanes, "one column per lane parameter");
        let values: Vec<f64> = self
            .point
            .iter()
            .map(|n| point.get(n).ok_or_else(|| EvalError::Unbound(n.clone())))
            .collect::<Result<_, _>>()?;
        let mut bound = vec![0.0; self.depth];
        let mut stack = Stack::new();
        let mut start = 0;
        while start < draws {
            let len = LANES.min(draws - start);
            let ctx = Ctx {
                point: &values,
                columns,
                start,
                len,
            };
            stack.len = 0;
            self.program.run(&ctx, &mut bound, &mut stack);
            let v = stack.block(0);
            out.extend_from_slice(&v[..len]);
            start += len;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::model::{parse_model, Expr};

    /// The batch's value in every draw is the point evaluation with the draw's values.
    fn agrees(text: &str, lanes: &[&str], point: &[(&str, f64)]) {
        let e = parse_model(text).unwrap();
        let lane_names: Vec<String> = lanes.iter().map(|s| s.to_string()).collect();
        let b = e.batch(&lane_names);
        let draws = 150;
        let columns: Vec<Vec<f64>> = (0..lanes.len())
            .map(|i| {
                (0..draws)
                    .map(|k| 1.0 + 0.37 * ((k * (i + 3)) % 17) as f64)
                    .collect()
            })
            .collect();
        let refs: Vec<&[f64]> = columns.iter().map(Vec::as_slice).collect();
        let mut out = Vec::new();
        b.eval(&crate::model::Pairs(point), &refs, draws, &mut out)
            .unwrap();
        assert_eq!(out.len(), draws);
        for (k, v) in out.iter().enumerate() {
            let mut env: Vec<(&str, f64)> = point.to_vec();
            env.extend(lanes.iter().zip(&columns).map(|(n, c)| (*n, c[k])));
            let want = e.eval_at(&env).unwrap();
            assert!(
                (v - want).abs() <= 1e-12 * want.abs().max(1.0),
                "{text} draw {k}: {v} vs {want}"
            );
        }
    }

    #[test]
    fn a_batch_agrees_with_the_point_evaluation() {
        let p = [("x", 1000.0), ("n", 4.0), ("P", 8.0)];
        agrees("a + b * x * log2(x)", &["a", "b"], &p);
        agrees("max(a * x, b * x^2 / n, 3 * x)", &["a", "b"], &p);
        agrees(
            "min(a * x, 4 * x) + ceil(b) * floor(x / 3)",
            &["a", "b"],
            &p,
        );
        agrees("(a * x + 1) / (b + n)", &["a", "b"], &p);
        agrees("log2(a + x) * (b + x)^(1/2) + 2^(a / 4)", &["a", "b"], &p);
        agrees("a^2 * x^(3/2) * log2(x)^2 / b", &["a", "b"], &p);
        // No lane at all: one value repeated.
        agrees("3 * x + n", &[], &p);
    }

    #[test]
    fn sums_and_segments_are_evaluated_per_draw() {
        let p = [("x", 4096.0), ("P", 16.0), ("Q", 32.0)];
        let sum = Expr::sum_over(
            "j",
            Expr::zero(),
            Expr::sub(Expr::log2(Expr::param("P")), Expr::one()),
            parse_model("a * x / 2^j + b * j").unwrap(),
        );
        let text = sum.to_string();
        assert!(text.contains("sum"), "{text}");
        agrees(&text, &["a", "b"], &p);
        let nested = Expr::sum_over(
            "i",
            Expr::one(),
            Expr::log2(Expr::param("Q")),
            Expr::mul(Expr::param("i"), sum),
        );
        agrees(&nested.to_string(), &["a", "b"], &p);
        let seg = Expr::piecewise(
            parse_model("a * x").unwrap(),
            vec![3000.0, 9000.0],
            vec![
                parse_model("b").unwrap(),
                parse_model("2 * b * x").unwrap(),
                parse_model("x").unwrap(),
            ],
        )
        .unwrap();
        agrees(&seg.to_string(), &["a", "b"], &p);
    }

    #[test]
    fn a_missing_point_value_is_an_error() {
        let b = parse_model("a * x + y").unwrap().batch(&["a".into()]);
        let mut out = Vec::new();
        let e = b
            .eval(&crate::model::Pairs(&[("x", 1.0)]), &[&[1.0]], 1, &mut out)
            .unwrap_err();
        assert_eq!(e, crate::model::EvalError::Unbound("y".into()));
    }
}
