//! Evaluating one model at many points: the analyses of a prediction scan each stage
//! model of a pipeline at hundreds of values of `x`, and walking the tree — looking up
//! every parameter by name, following a pointer per node — cost more than the
//! arithmetic.
//!
//! [`Expr::compile`] turns the model once into a flat program (children before parents)
//! whose parameters are numbered slots. [`Compiled::eval`] computes exactly
//! [`Expr::eval`]'s value — the same operations on the same numbers in the same order —
//! and is `None` exactly where [`Expr::eval`] is an error (call it for the error's
//! message). Sums and segmented models keep their bodies and pieces as sub-programs, so
//! that only the piece selected, and the terms of the range, are evaluated, as the tree
//! evaluation does.

use std::collections::HashMap;

use num_traits::{Signed, ToPrimitive, Zero};

use super::eval::Env;
use super::tree::Expr;
use crate::model::number::Q;
use crate::model::pmnf::q_to_f64;

/// `x^q` as [`crate::model::pow_q`] computes it, its choice of method made once.
#[derive(Clone, Copy, Debug)]
enum Power {
    One,
    Int(i32),
    Real(f64),
}

impl Power {
    fn of(q: Q) -> Power {
        if q.is_zero() {
            return Power::One;
        }
        if q.is_integer() {
            if let Some(i) = q.to_integer().to_i32() {
                return Power::Int(i);
            }
        }
        Power::Real(q_to_f64(q))
    }

    fn apply(self, x: f64) -> f64 {
        match self {
            Power::One => 1.0,
            Power::Int(i) => x.powi(i),
            Power::Real(r) => x.powf(r),
        }
    }
}

/// A rational exponent with the facts its domain checks need.
#[derive(Clone, Copy, Debug)]
struct Exponent {
    power: Power,
    negative: bool,
    integer: bool,
}

impl Exponent {
    fn of(q: Q) -> Exponent {
        Exponent {
            power: Power::of(q),
            negative: q.is_negative(),
            integer: q.is_integer(),
        }
    }
}

/// `p^exp · log2(p)^log` of one PMNF term; a zero exponent is `None`.
#[derive(Clone, Debug)]
enum Factor {
    /// Of a parameter: its powers are entries of [`Compiled`]'s table, computed once per
    /// evaluation (a large model raises `x` to the same few exponents many times).
    Table {
        exp: Option<usize>,
        log: Option<usize>,
    },
    /// Of a summation variable, computed where it is used.
    Direct {
        slot: usize,
        exp: Option<Exponent>,
        log: Option<Exponent>,
    },
}

/// An entry of the table of powers: `p^e`, or `log2(p)^e` when `log`.
#[derive(Clone, Debug)]
struct TablePower {
    slot: usize,
    e: Exponent,
    log: bool,
}

impl TablePower {
    /// The power at `x` (`None`: unbound), or `None` where [`Expr::eval`] reports a
    /// domain error for the factor.
    fn value(&self, x: Option<f64>) -> Option<f64> {
        let x = x?;
        let e = self.e;
        if self.log {
            if x <= 0.0 {
                return None;
            }
            let lx = x.log2();
            if (lx == 0.0 && e.negative) || (lx < 0.0 && !e.integer) {
                return None;
            }
            Some(e.power.apply(lx))
        } else {
            if (x == 0.0 && e.negative) || (x < 0.0 && !e.integer) {
                return None;
            }
            Some(e.power.apply(x))
        }
    }
}

/// A term `c · Π table[i]` of a PMNF over parameters. Its first two table indices are
/// `first` ([`NO_FACTOR`] where it has fewer), any others
/// `indices[start..start + len]` of its [`Program`].
#[derive(Clone, Copy, Debug)]
struct TableTerm {
    c: f64,
    first: [u32; 2],
    start: u32,
    len: u32,
}

/// No factor in [`TableTerm::first`].
const NO_FACTOR: u32 = u32::MAX;

#[derive(Clone, Debug)]
enum Op {
    /// A PMNF over parameters only (the common case): its terms are
    /// `terms[start..start + len]` of the [`Program`], their factors powers from the
    /// table.
    PolyTable {
        start: u32,
        len: u32,
    },
    /// A PMNF with a summation variable: terms `c · Π factor`.
    Poly(Vec<(f64, Vec<Factor>)>),
    /// Sums, products, maxima and minima of the top `n` entries.
    Add(usize),
    Mul(usize),
    Max(usize),
    Min(usize),
    Div,
    Pow(Exponent),
    PowE,
    Log2,
    Ceil,
    Floor,
    /// The sum of `body` with `slot` between the top two entries.
    Sum {
        slot: usize,
        body: Box<Program>,
    },
    /// The top entry selects one of `pieces`.
    Piecewise(Box<(Vec<f64>, Vec<Program>)>),
}

/// Ops in evaluation order; the last leaves the result.
#[derive(Clone, Debug, Default)]
struct Program {
    ops: Vec<Op>,
    /// The terms of [`Op::PolyTable`]s.
    terms: Vec<TableTerm>,
    /// The table indices of those terms' factors.
    indices: Vec<u32>,
}

/// A model compiled for evaluation at many points ([`Expr::compile`]).
#[derive(Clone, Debug)]
pub struct Compiled {
    program: Program,
    /// The free parameters: slot `i` of [`Compiled::eval`]'s values is `params[i]`.
    params: Vec<String>,
    /// Slots in all: the parameters, then one per summation variable.
    slots: usize,
    /// The distinct powers of parameters the model's terms use.
    table: Vec<TablePower>,
    /// The deepest stack the program needs.
    depth: usize,
}

struct Compiler {
    params: Vec<String>,
    /// Summation variables in scope, innermost last, with their slots.
    bound: Vec<(String, usize)>,
    /// Slots of summation variables handed out so far.
    sum_slots: usize,
    table: Vec<TablePower>,
    /// Where `(parameter slot, exponent, log)` is in `table`.
    table_index: HashMap<(usize, Q, bool), usize>,
}

/// A summation variable's slot before the parameters are all known: counted from the
/// top of the slot range, renumbered once compilation is over.
const SUM_SLOT_BASE: usize = usize::MAX / 2;

impl Compiler {
    fn slot(&mut self, name: &str) -> usize {
        if let Some((_, s)) = self.bound.iter().rev().find(|(n, _)| n == name) {
            return *s;
        }
        if let Some(i) = self.params.iter().position(|p| p == name) {
            return i;
        }
        self.params.push(name.to_string());
        self.params.len() - 1
    }

    /// The table entry of `p^q` (`log`: `log2(p)^q`) for parameter slot `slot`.
    fn table_entry(&mut self, slot: usize, q: Q, log: bool) -> usize {
        let table = &mut self.table;
        *self.table_index.entry((slot, q, log)).or_insert_with(|| {
            table.push(TablePower {
                slot,
                e: Exponent::of(q),
                log,
            });
            table.len() - 1
        })
    }

    fn factor(&mut self, name: &str, exp: Q, log: Q) -> Factor {
        let slot = self.slot(name);
        if slot >= SUM_SLOT_BASE {
            return Factor::Direct {
                slot,
                exp: (!exp.is_zero()).then(|| Exponent::of(exp)),
                log: (!log.is_zero()).then(|| Exponent::of(log)),
            };
        }
        Factor::Table {
            exp: (!exp.is_zero()).then(|| self.table_entry(slot, exp, false)),
            log: (!log.is_zero()).then(|| self.table_entry(slot, log, true)),
        }
    }

    fn compile(&mut self, e: &Expr, p: &mut Program) {
        let op = match e {
            Expr::Poly(poly) => {
                let terms: Vec<(f64, Vec<Factor>)> = poly
                    .terms()
                    .map(|(c, m)| {
                        let factors = m
                            .factors()
                            .map(|(name, pw)| self.factor(name, pw.exp, pw.log))
                            .collect();
                        (c, factors)
                    })
                    .collect();
                let direct = terms
                    .iter()
                    .any(|(_, f)| f.iter().any(|f| matches!(f, Factor::Direct { .. })));
                if direct {
                    Op::Poly(terms)
                } else {
                    let first = p.terms.len();
                    for (c, factors) in terms {
                        // The exponent's factor before the log's, as `eval` multiplies.
                        let all: Vec<u32> = factors
                            .iter()
                            .flat_map(|f| match f {
                                Factor::Table { exp, log } => {
                                    exp.iter().chain(log).map(|&i| i as u32).collect()
                                }
                                Factor::Direct { .. } => Vec::new(),
                            })
                            .collect();
                        let mut first = [NO_FACTOR; 2];
                        for (slot, i) in first.iter_mut().zip(&all) {
                            *slot = *i;
                        }
                        let start = p.indices.len();
                        p.indices.extend(all.iter().skip(2));
                        p.terms.push(TableTerm {
                            c,
                            first,
                            start: start as u32,
                            len: (p.indices.len() - start) as u32,
                        });
                    }
                    Op::PolyTable {
                        start: first as u32,
                        len: (p.terms.len() - first) as u32,
                    }
                }
            }
            Expr::Add(v) => {
                v.iter().for_each(|a| self.compile(a, p));
                Op::Add(v.len())
            }
            Expr::Mul(v) => {
                v.iter().for_each(|a| self.compile(a, p));
                Op::Mul(v.len())
            }
            Expr::Max(v) => {
                v.iter().for_each(|a| self.compile(a, p));
                Op::Max(v.len())
            }
            Expr::Min(v) => {
                v.iter().for_each(|a| self.compile(a, p));
                Op::Min(v.len())
            }
            Expr::Div(a, b) => {
                self.compile(a, p);
                self.compile(b, p);
                Op::Div
            }
            Expr::PowE(a, b) => {
                self.compile(a, p);
                self.compile(b, p);
                Op::PowE
            }
            Expr::Pow(a, q) => {
                self.compile(a, p);
                Op::Pow(Exponent::of(*q))
            }
            Expr::Log2(a) => {
                self.compile(a, p);
                Op::Log2
            }
            Expr::Ceil(a) => {
                self.compile(a, p);
                Op::Ceil
            }
            Expr::Floor(a) => {
                self.compile(a, p);
                Op::Floor
            }
            Expr::Sum {
                var,
                from,
                to,
                body,
            } => {
                self.compile(from, p);
                self.compile(to, p);
                let slot = SUM_SLOT_BASE + self.sum_slots;
                self.sum_slots += 1;
                self.bound.push((var.clone(), slot));
                let mut inner = Program::default();
                self.compile(body, &mut inner);
                self.bound.pop();
                Op::Sum {
                    slot,
                    body: Box::new(inner),
                }
            }
            Expr::Piecewise { on, breaks, pieces } => {
                self.compile(on, p);
                let pieces = pieces
                    .iter()
                    .map(|piece| {
                        let mut inner = Program::default();
                        self.compile(piece, &mut inner);
                        inner
                    })
                    .collect();
                Op::Piecewise(Box::new((breaks.clone(), pieces)))
            }
        };
        p.ops.push(op);
    }
}

impl Program {
    /// The most entries running the program puts on the stack at once.
    fn depth(&self) -> usize {
        let (mut now, mut most) = (0usize, 0usize);
        for op in &self.ops {
            let (inner, after) = match op {
                Op::PolyTable { .. } | Op::Poly(_) => (0, now + 1),
                Op::Add(n) | Op::Mul(n) | Op::Max(n) | Op::Min(n) => (0, now + 1 - n),
                Op::Div | Op::PowE => (0, now - 1),
                Op::Pow(_) | Op::Log2 | Op::Ceil | Op::Floor => (0, now),
                Op::Sum { body, .. } => (now - 2 + body.depth(), now - 1),
                Op::Piecewise(b) => (
                    now - 1 + b.1.iter().map(Program::depth).max().unwrap_or(0),
                    now,
                ),
            };
            now = after;
            most = most.max(now).max(inner);
        }
        most
    }

    /// Give summation variables the slots after the `params` parameters.
    fn renumber(&mut self, params: usize) {
        let fix = |s: &mut usize| {
            if *s >= SUM_SLOT_BASE {
                *s = params + (*s - SUM_SLOT_BASE);
            }
        };
        for op in &mut self.ops {
            match op {
                Op::Poly(terms) => terms
                    .iter_mut()
                    .flat_map(|(_, f)| f.iter_mut())
                    .for_each(|f| {
                        if let Factor::Direct { slot, .. } = f {
                            fix(slot);
                        }
                    }),
                Op::Sum { slot, body } => {
                    fix(slot);
                    body.renumber(params);
                }
                Op::Piecewise(b) => b.1.iter_mut().for_each(|p| p.renumber(params)),
                _ => {}
            }
        }
    }

    /// Run the program, pushing its result on `stack`; `None` where [`Expr::eval`]
    /// reports a domain error (the checks of `eval_inner` and `eval_pmnf`, in kind).
    /// `table` holds the values of [`Compiled`]'s table of powers at this point, and
    /// `valid` whether each is inside its domain; `CHECK`: some is not (else the checks
    /// are left out).
    fn run<const CHECK: bool>(
        &self,
        slots: &mut [Option<f64>],
        table: &[f64],
        valid: &[bool],
        stack: &mut Vec<f64>,
    ) -> Option<()> {
        for op in &self.ops {
            match op {
                Op::PolyTable { start, len } => {
                    let mut sum = 0.0;
                    let (start, len) = (*start as usize, *len as usize);
                    for t in &self.terms[start..start + len] {
                        let mut v = t.c;
                        for i in t.first {
                            if i == NO_FACTOR {
                                break;
                            }
                            if CHECK && !valid[i as usize] {
                                return None;
                            }
                            v *= table[i as usize];
                        }
                        if t.len > 0 {
                            let start = t.start as usize;
                            for &i in &self.indices[start..start + t.len as usize] {
                                if CHECK && !valid[i as usize] {
                                    return None;
                                }
                                v *= table[i as usize];
                            }
                        }
                        sum += v;
                    }
                    stack.push(sum);
                }
                Op::Poly(terms) => {
                    let mut sum = 0.0;
                    for (c, factors) in terms {
                        let mut v = *c;
                        for f in factors {
                            match f {
                                Factor::Table { exp, log } => {
                                    for &i in exp.iter().chain(log) {
                                        if CHECK && !valid[i] {
                                            return None;
                                        }
                                        v *= table[i];
                                    }
                                }
                                Factor::Direct { slot, exp, log } => {
                                    let x = slots[*slot];
                                    if let Some(e) = exp {
                                        let p = TablePower {
                                            slot: *slot,
                                            e: *e,
                                            log: false,
                                        };
                                        v *= p.value(x)?;
                                    }
                                    if let Some(e) = log {
                                        let p = TablePower {
                                            slot: *slot,
                                            e: *e,
                                            log: true,
                                        };
                                        v *= p.value(x)?;
                                    }
                                }
                            }
                        }
                        sum += v;
                    }
                    stack.push(sum);
                }
                Op::Add(n) => fold(stack, *n, 0.0, |a, x| a + x),
                Op::Mul(n) => fold(stack, *n, 1.0, |a, x| a * x),
                Op::Max(n) => fold(stack, *n, f64::NEG_INFINITY, f64::max),
                Op::Min(n) => fold(stack, *n, f64::INFINITY, f64::min),
                Op::Div => {
                    let d = stack.pop()?;
                    let a = stack.pop()?;
                    if d == 0.0 {
                        return None;
                    }
                    stack.push(a / d);
                }
                Op::Pow(e) => {
                    let x = stack.pop()?;
                    if (x < 0.0 && !e.integer) || (x == 0.0 && e.negative) {
                        return None;
                    }
                    stack.push(e.power.apply(x));
                }
                Op::PowE => {
                    let y = stack.pop()?;
                    let x = stack.pop()?;
                    if (x < 0.0 && y.fract() != 0.0) || (x == 0.0 && y < 0.0) {
                        return None;
                    }
                    stack.push(x.powf(y));
                }
                Op::Log2 => {
                    let x = stack.pop()?;
                    if x <= 0.0 {
                        return None;
                    }
                    stack.push(x.log2());
                }
                Op::Ceil => {
                    let x = stack.pop()?;
                    stack.push(x.ceil());
                }
                Op::Floor => {
                    let x = stack.pop()?;
                    stack.push(x.floor());
                }
                Op::Sum { slot, body } => {
                    let t = stack.pop()?.floor();
                    let f = stack.pop()?.ceil();
                    if !(f.is_finite() && t.is_finite()) || t - f > 1e7 {
                        return None;
                    }
                    let mut acc = 0.0;
                    let mut k = f;
                    while k <= t {
                        slots[*slot] = Some(k);
                        body.run::<CHECK>(slots, table, valid, stack)?;
                        acc += stack.pop()?;
                        k += 1.0;
                    }
                    stack.push(acc);
                }
                Op::Piecewise(b) => {
                    let (breaks, pieces) = &**b;
                    let v = stack.pop()?;
                    if v.is_nan() {
                        return None;
                    }
                    pieces[breaks.iter().take_while(|&&b| b <= v).count()]
                        .run::<CHECK>(slots, table, valid, stack)?;
                }
            }
        }
        Some(())
    }
}

/// Replace the top `n` entries by their fold from `init`, in order.
fn fold(stack: &mut Vec<f64>, n: usize, init: f64, f: impl Fn(f64, f64) -> f64) {
    if n == 0 {
        stack.push(init);
        return;
    }
    let base = stack.len() - n;
    let v = stack[base..].iter().fold(init, |a, x| f(a, *x));
    stack.truncate(base + 1);
    stack[base] = v;
}

impl Expr {
    /// Compile for evaluation at many points ([`Compiled::eval`]).
    ///
    /// ```
    /// use perfcompose_core::model::parse_model;
    /// let m = parse_model("max(536.185 * x, 1034.17 * log2(x))").unwrap();
    /// let c = m.compile();
    /// assert_eq!(c.params(), ["x"]);
    /// assert_eq!(c.eval(&[Some(8.0)]), m.eval_at(&[("x", 8.0)]).ok());
    /// assert_eq!(c.eval(&[Some(0.0)]), None); // log2(0)
    /// ```
    pub fn compile(&self) -> Compiled {
        let mut c = Compiler {
            params: Vec::new(),
            bound: Vec::new(),
            sum_slots: 0,
            table: Vec::new(),
            table_index: HashMap::new(),
        };
        let mut program = Program::default();
        c.compile(self, &mut program);
        program.renumber(c.params.len());
        Compiled {
            depth: program.depth(),
            program,
            slots: c.params.len() + c.sum_slots,
            params: c.params,
            table: c.table,
        }
    }
}

impl Compiled {
    /// The model's free parameters, in the order [`Compiled::eval`] takes their values.
    pub fn params(&self) -> &[String] {
        &self.params
    }

    /// The value where parameter `i` is `values[i]` (`None`: unbound): exactly
    /// [`Expr::eval`]'s value, and `None` exactly where that is an error.
    pub fn eval(&self, values: &[Option<f64>]) -> Option<f64> {
        let mut slots = vec![None; self.slots];
        for (s, v) in slots.iter_mut().zip(values) {
            *s = *v;
        }
        self.run(slots)
    }

    /// [`Compiled::eval`] with the parameters' values from `env`.
    pub fn eval_env(&self, env: &dyn Env) -> Option<f64> {
        let mut slots = vec![None; self.slots];
        for (s, p) in slots.iter_mut().zip(&self.params) {
            *s = env.get(p);
        }
        self.run(slots)
    }

    fn run(&self, mut slots: Vec<Option<f64>>) -> Option<f64> {
        // A power whose factor is outside its domain here is `None`, and fails the
        // evaluation only where a term evaluated uses it (as the tree evaluation would).
        let mut table = Vec::with_capacity(self.table.len());
        let mut valid = Vec::with_capacity(self.table.len());
        for p in &self.table {
            let v = p.value(slots[p.slot]);
            table.push(v.unwrap_or(f64::NAN));
            valid.push(v.is_some());
        }
        let mut stack = Vec::with_capacity(self.depth);
        if valid.iter().all(|v| *v) {
            self.program
                .run::<false>(&mut slots, &table, &valid, &mut stack)?;
        } else {
            self.program
                .run::<true>(&mut slots, &table, &valid, &mut stack)?;
        }
        stack.pop().filter(|v| v.is_finite())
    }
}
