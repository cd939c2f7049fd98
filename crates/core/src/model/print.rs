//! Printing models.
//!
//! Two syntaxes, both accepted by [`super::parse`]:
//!
//! * the canonical one (`Display`): `5422.97 + 536.185 * x`, `x^(3/2) * log2(x)^2`,
//!   `max(...)`. Coefficients are printed with the shortest representation that reads
//!   back to the same `f64`, so print → parse → print is a fixed point.
//! * Extra-P's (`Expr::extrap`): every factor with its exponent in parentheses,
//!   `2.81 + 0.48 * p^(5/4) * log2(p)^(1)`, as Extra-P's `--print` writes models.
//!
//! [`Expr::rounded`] prints with a fixed number of significant digits for humans.

use std::fmt::{self, Write};

use num_traits::{One, Signed, Zero};

use super::expr::Expr;
use super::number::{format_number, format_q, format_significant, Q};
use super::pmnf::{Monomial, Pmnf, Power};

/// How coefficients and exponents are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    Canonical,
    ExtraP,
    /// Canonical layout with coefficients rounded to this many significant digits.
    Rounded(usize),
}

fn format_coefficient(v: f64, style: Style) -> String {
    match style {
        Style::Rounded(d) => format_significant(v, d),
        _ => format_number(v),
    }
}

fn write_exponent(out: &mut String, q: Q, style: Style) {
    if style == Style::ExtraP {
        let _ = write!(out, "^({})", format_q(q));
    } else if q.is_one() {
    } else if q.is_integer() && q.is_positive() {
        let _ = write!(out, "^{}", q.to_integer());
    } else {
        let _ = write!(out, "^({})", format_q(q));
    }
}

fn write_power(out: &mut String, name: &str, pw: &Power, style: Style) {
    let mut first = true;
    if !pw.exp.is_zero() {
        out.push_str(name);
        write_exponent(out, pw.exp, style);
        first = false;
    }
    if !pw.log.is_zero() {
        if !first {
            out.push_str(" * ");
        }
        let _ = write!(out, "log2({name})");
        write_exponent(out, pw.log, style);
    }
}

fn write_monomial(out: &mut String, m: &Monomial, style: Style) {
    let mut first = true;
    for (name, pw) in m.factors() {
        if !first {
            out.push_str(" * ");
        }
        write_power(out, name, pw, style);
        first = false;
    }
}

/// One term `c * factors`, with its sign handled by the caller when `unsigned`.
fn write_term(out: &mut String, c: f64, m: &Monomial, style: Style) {
    if m.is_constant() {
        out.push_str(&format_coefficient(c, style));
        return;
    }
    if c == -1.0 && style != Style::ExtraP {
        out.push('-');
    } else if c != 1.0 || style == Style::ExtraP {
        out.push_str(&format_coefficient(c, style));
        out.push_str(" * ");
    }
    write_monomial(out, m, style);
}

fn write_pmnf(out: &mut String, p: &Pmnf, style: Style) {
    if p.is_zero() {
        out.push('0');
        return;
    }
    for (i, (c, m)) in p.terms().enumerate() {
        if i == 0 {
            write_term(out, c, m, style);
        } else if c < 0.0 {
            out.push_str(" - ");
            write_term(out, -c, m, style);
        } else {
            out.push_str(" + ");
            write_term(out, c, m, style);
        }
    }
}

// Precedence levels for parenthesisation.
const ADD: u8 = 1;
const MUL: u8 = 2;
const POW: u8 = 3;
const ATOM: u8 = 4;

fn precedence(e: &Expr) -> u8 {
    match e {
        Expr::Poly(p) => match p.as_single_term() {
            None => {
                if p.is_zero() {
                    ATOM
                } else {
                    ADD
                }
            }
            Some((c, m)) => {
                if c < 0.0 {
                    ADD
                } else if m.is_constant() {
                    ATOM
                } else if c == 1.0 && m.factors().count() == 1 {
                    let (_, pw) = m.factors().next().expect("one factor");
                    if pw.exp.is_zero() || pw.log.is_zero() {
                        POW
                    } else {
                        MUL
                    }
                } else {
                    MUL
                }
            }
        },
        Expr::Add(_) => ADD,
        Expr::Mul(_) | Expr::Div(_, _) => MUL,
        Expr::Pow(_, _) | Expr::PowE(_, _) => POW,
        _ => ATOM,
    }
}

fn write_child(out: &mut String, e: &Expr, min_prec: u8, style: Style) {
    if precedence(e) < min_prec {
        out.push('(');
        write_expr(out, e, style);
        out.push(')');
    } else {
        write_expr(out, e, style);
    }
}

fn write_list(out: &mut String, name: &str, args: &[Expr], style: Style) {
    out.push_str(name);
    out.push('(');
    for (i, a) in args.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_expr(out, a, style);
    }
    out.push(')');
}

pub(crate) fn write_expr(out: &mut String, e: &Expr, style: Style) {
    match e {
        Expr::Poly(p) => write_pmnf(out, p, style),
        Expr::Add(args) => {
            for (i, a) in args.iter().enumerate() {
                let mut s = String::new();
                write_expr(&mut s, a, style);
                if i == 0 {
                    out.push_str(&s);
                } else if let Some(rest) = s.strip_prefix('-') {
                    out.push_str(" - ");
                    out.push_str(rest);
                } else {
                    out.push_str(" + ");
                    out.push_str(&s);
                }
            }
        }
        Expr::Mul(args) => {
            // `-1 * f * g` reads as `-f * g` (the unary minus binds to the first factor).
            let args = match args.split_first() {
                Some((Expr::Poly(p), rest))
                    if p.as_constant() == Some(-1.0) && !rest.is_empty() =>
                {
                    out.push('-');
                    rest
                }
                _ => &args[..],
            };
            for (i, a) in args.iter().enumerate() {
                if i > 0 {
                    out.push_str(" * ");
                }
                // A leading negative single term reads fine unparenthesised: -2 * x * max(..)
                if i == 0 && matches!(a, Expr::Poly(p) if p.as_single_term().is_some()) {
                    write_expr(out, a, style);
                } else {
                    write_child(out, a, MUL, style);
                }
            }
        }
        Expr::Div(a, b) => {
            write_child(out, a, MUL, style);
            out.push_str(" / ");
            write_child(out, b, POW, style);
        }
        Expr::Pow(a, q) => {
            write_child(out, a, ATOM, style);
            write_exponent(out, *q, Style::Canonical);
        }
        Expr::PowE(a, b) => {
            write_child(out, a, ATOM, style);
            out.push('^');
            write_child(out, b, ATOM, style);
        }
        Expr::Log2(a) => write_list(out, "log2", std::slice::from_ref(a), style),
        Expr::Max(args) => write_list(out, "max", args, style),
        Expr::Min(args) => write_list(out, "min", args, style),
        Expr::Ceil(a) => write_list(out, "ceil", std::slice::from_ref(a), style),
        Expr::Floor(a) => write_list(out, "floor", std::slice::from_ref(a), style),
        Expr::Sum {
            var,
            from,
            to,
            body,
        } => {
            let _ = write!(out, "sum({var}, ");
            write_expr(out, from, style);
            out.push_str(", ");
            write_expr(out, to, style);
            out.push_str(", ");
            write_expr(out, body, style);
            out.push(')');
        }
        Expr::Piecewise { on, breaks, pieces } => {
            // piecewise(x, f0, b0, f1, b1, f2): the breaks print exactly in every style.
            // The condition is a size, not a fitted term: canonical in every style.
            out.push_str("piecewise(");
            write_expr(out, on, Style::Canonical);
            for (i, piece) in pieces.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                    out.push_str(&format_number(breaks[i - 1]));
                }
                out.push_str(", ");
                write_expr(out, piece, style);
            }
            out.push(')');
        }
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        write_expr(&mut s, self, Style::Canonical);
        f.write_str(&s)
    }
}

impl fmt::Display for Pmnf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        write_pmnf(&mut s, self, Style::Canonical);
        f.write_str(&s)
    }
}

impl Expr {
    /// Print in Extra-P's syntax: `c0 + c1 * p^(5/4) * log2(p)^(1)`.
    pub fn extrap(&self) -> String {
        let mut s = String::new();
        write_expr(&mut s, self, Style::ExtraP);
        s
    }

    /// Print canonically but with coefficients rounded to `digits` significant digits
    /// (for tables meant for people; not a round-trip format).
    pub fn rounded(&self, digits: usize) -> String {
        let mut s = String::new();
        write_expr(&mut s, self, Style::Rounded(digits));
        s
    }
}

impl Pmnf {
    /// Print in Extra-P's syntax.
    pub fn extrap(&self) -> String {
        let mut s = String::new();
        write_pmnf(&mut s, self, Style::ExtraP);
        s
    }

    pub fn rounded(&self, digits: usize) -> String {
        let mut s = String::new();
        write_pmnf(&mut s, self, Style::Rounded(digits));
        s
    }
}

impl Monomial {
    /// `x * log2(x)`, `x^(3/2)`; `1` for the constant monomial.
    pub fn to_canonical_string(&self) -> String {
        if self.is_constant() {
            return "1".to_string();
        }
        let mut s = String::new();
        write_monomial(&mut s, self, Style::Canonical);
        s
    }
}
