//! Parsing model expressions.
//!
//! One recursive-descent parser reads both what a user writes (`1034.17 * x * log2(x)`,
//! `(m*n - 1) / (m*n) * 12288 * x / 0.125`, `max(a, b)`, `x^(3/2)`, `1.241e7`) and what
//! Extra-P prints (`2.81 + 0.48 * p^(5/4) * log2(p)^(1)`). The result is built with the
//! simplifying constructors of [`Expr`], so a parsed model is already in canonical form.
//!
//! Grammar:
//!
//! ```text
//! expr     := product (('+' | '-') product)*
//! product  := unary (('*' | '/') unary)*
//! unary    := ('-' | '+') unary | power
//! power    := atom ('^' exponent)?
//! exponent := '-'? NUMBER | '(' rational ')'      -- exact rational, e.g. (5/4), (-1)
//! atom     := NUMBER | NAME | FUNC '(' args ')' | '(' expr ')'
//! FUNC     := log2 | max | min | ceil | floor | sqrt | sum
//! ```

use num_traits::{CheckedAdd, CheckedDiv, CheckedMul, CheckedSub, Zero};

use super::expr::Expr;
use super::number::{decimal_text_to_q, MAX_EXPONENT_PART, Q};
use crate::diag::{Diagnostic, Span};

/// Deepest nesting of parentheses and function calls accepted.
pub const MAX_DEPTH: usize = 200;

const FUNCTIONS: &[&str] = &[
    "log2",
    "max",
    "min",
    "ceil",
    "floor",
    "sqrt",
    "sum",
    "piecewise",
];

/// Extra functions a model may call, expanded into models at parse time (the
/// communication library provides `bcast_binomial(p, bytes)` and friends this way).
pub trait Functions {
    /// Expand `name(args)`; `None` when the library has no such function, `Some(Err)`
    /// with a lower-case message when the arguments are wrong.
    fn call(&self, name: &str, args: Vec<Expr>) -> Option<Result<Expr, String>>;
    /// Names offered in hints for unknown functions.
    fn names(&self) -> Vec<String>;
}

/// The empty library: only the built-in functions.
pub struct NoFunctions;

impl Functions for NoFunctions {
    fn call(&self, _name: &str, _args: Vec<Expr>) -> Option<Result<Expr, String>> {
        None
    }
    fn names(&self) -> Vec<String> {
        Vec::new()
    }
}

/// Parse a model expression; errors are located in `source` and name `<model>`.
pub fn parse_model(source: &str) -> Result<Expr, Diagnostic> {
    parse_model_in("<model>", source)
}

/// Parse a model expression, naming the input `origin` in errors.
pub fn parse_model_in(origin: &str, source: &str) -> Result<Expr, Diagnostic> {
    parse_model_with(origin, source, &NoFunctions)
}

/// Parse a model expression that may call the functions of `library`.
pub fn parse_model_with(
    origin: &str,
    source: &str,
    library: &dyn Functions,
) -> Result<Expr, Diagnostic> {
    let tokens = lex(source).map_err(|(span, msg, hint)| {
        let d = Diagnostic::new(origin, source, span, msg);
        match hint {
            Some(h) => d.with_hint(h),
            None => d,
        }
    })?;
    let mut p = Parser {
        origin,
        source,
        tokens,
        pos: 0,
        depth: 0,
        library,
    };
    let e = p.expr()?;
    if !e.coefficients_finite() {
        return Err(p
            .error(
                Span::new(0, source.len()),
                "the model overflows: a coefficient is not finite",
            )
            .with_hint("constants must stay within about 1e308"));
    }
    if let Some(tok) = p.peek() {
        let span = tok.span;
        return Err(p
            .error(
                span,
                format!(
                    "unexpected {} after the end of the model",
                    tok.kind.describe()
                ),
            )
            .with_hint("an operator (+ - * / ^) or a closing parenthesis may be missing"));
    }
    Ok(e)
}

#[derive(Clone, Debug, PartialEq)]
enum Kind {
    Number(f64),
    Name(String),
    Plus,
    Minus,
    Star,
    Slash,
    Caret,
    LParen,
    RParen,
    Comma,
}

impl Kind {
    fn describe(&self) -> String {
        match self {
            Kind::Number(_) => "number".into(),
            Kind::Name(n) => format!("name `{n}`"),
            Kind::Plus => "`+`".into(),
            Kind::Minus => "`-`".into(),
            Kind::Star => "`*`".into(),
            Kind::Slash => "`/`".into(),
            Kind::Caret => "`^`".into(),
            Kind::LParen => "`(`".into(),
            Kind::RParen => "`)`".into(),
            Kind::Comma => "`,`".into(),
        }
    }
}

#[derive(Clone, Debug)]
struct Token {
    kind: Kind,
    span: Span,
    text: String,
}

type LexError = (Span, String, Option<String>);

fn lex(src: &str) -> Result<Vec<Token>, LexError> {
    let bytes = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let start = i;
        let single = |k: Kind| Token {
            kind: k,
            span: Span::new(start, start + 1),
            text: (c as char).to_string(),
        };
        match c {
            b' ' | b'\t' | b'\n' | b'\r' => {
                i += 1;
                continue;
            }
            b'+' => out.push(single(Kind::Plus)),
            b'-' => out.push(single(Kind::Minus)),
            b'*' => {
                if bytes.get(i + 1) == Some(&b'*') {
                    // Accept Python's `**` as `^`.
                    out.push(Token {
                        kind: Kind::Caret,
                        span: Span::new(i, i + 2),
                        text: "**".into(),
                    });
                    i += 2;
                    continue;
                }
                out.push(single(Kind::Star))
            }
            b'/' => out.push(single(Kind::Slash)),
            b'^' => out.push(single(Kind::Caret)),
            b'(' => out.push(single(Kind::LParen)),
            b')' => out.push(single(Kind::RParen)),
            b',' => out.push(single(Kind::Comma)),
            b'0'..=b'9' | b'.' => {
                let mut j = i;
                while j < bytes.len() && (bytes[j].is_ascii_digit() || bytes[j] == b'.') {
                    j += 1;
                }
                if j < bytes.len() && (bytes[j] == b'e' || bytes[j] == b'E') {
                    let mut k = j + 1;
                    if k < bytes.len() && (bytes[k] == b'+' || bytes[k] == b'-') {
                        k += 1;
                    }
                    if k < bytes.len() && bytes[k].is_ascii_digit() {
                        while k < bytes.len() && bytes[k].is_ascii_digit() {
                            k += 1;
                        }
                        j = k;
                    }
                }
                let text = &src[i..j];
                let v: f64 = text.parse().map_err(|_| {
                    (
                        Span::new(i, j),
                        format!("`{text}` is not a number"),
                        Some("write numbers like 12, 0.5 or 1.241e7".to_string()),
                    )
                })?;
                if !v.is_finite() {
                    return Err((Span::new(i, j), format!("`{text}` is out of range"), None));
                }
                out.push(Token {
                    kind: Kind::Number(v),
                    span: Span::new(i, j),
                    text: text.to_string(),
                });
                i = j;
                continue;
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let mut j = i;
                while j < bytes.len() && (bytes[j].is_ascii_alphanumeric() || bytes[j] == b'_') {
                    j += 1;
                }
                let text = &src[i..j];
                out.push(Token {
                    kind: Kind::Name(text.to_string()),
                    span: Span::new(i, j),
                    text: text.to_string(),
                });
                i = j;
                continue;
            }
            _ => {
                let ch = src[i..].chars().next().unwrap_or('?');
                return Err((
                    Span::new(i, i + ch.len_utf8()),
                    format!("unexpected character `{ch}`"),
                    Some("models use numbers, parameter names, + - * / ^, parentheses and log2/max/min/ceil/floor/sqrt/sum".to_string()),
                ));
            }
        }
        i += 1;
    }
    Ok(out)
}

struct Parser<'a> {
    origin: &'a str,
    source: &'a str,
    tokens: Vec<Token>,
    pos: usize,
    depth: usize,
    library: &'a dyn Functions,
}

impl<'a> Parser<'a> {
    fn error(&self, span: Span, msg: impl Into<String>) -> Diagnostic {
        Diagnostic::new(self.origin, self.source, span, msg)
    }

    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos)
    }

    fn peek_kind(&self) -> Option<&Kind> {
        self.peek().map(|t| &t.kind)
    }

    fn bump(&mut self) -> Option<Token> {
        let t = self.tokens.get(self.pos).cloned();
        if t.is_some() {
            self.pos += 1;
        }
        t
    }

    /// Span pointing at the end of input (the last character, so a caret is visible).
    fn eof_span(&self) -> Span {
        let n = self.source.len();
        if n == 0 {
            Span::new(0, 0)
        } else {
            let last = self.source[..n].chars().last().map_or(1, char::len_utf8);
            Span::new(n - last, n)
        }
    }

    fn expect(&mut self, kind: Kind, what: &str) -> Result<Token, Diagnostic> {
        match self.peek() {
            Some(t) if t.kind == kind => Ok(self.bump().expect("peeked")),
            Some(t) => {
                let span = t.span;
                let desc = t.kind.describe();
                Err(self.error(span, format!("expected {what}, found {desc}")))
            }
            None => Err(self.error(
                self.eof_span(),
                format!("expected {what}, found the end of the model"),
            )),
        }
    }

    fn enter(&mut self, span: Span) -> Result<(), Diagnostic> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error(
                span,
                format!("model nested more than {MAX_DEPTH} levels deep"),
            ));
        }
        Ok(())
    }

    /// Constant arithmetic can overflow (`1e300 * 1e300`, `10^400`): an infinite
    /// coefficient would print as `inf`, which reads back as a parameter.
    fn finite(&self, e: Expr, op: Span) -> Result<Expr, Diagnostic> {
        let ok = match &e {
            Expr::Poly(p) => p.terms().all(|(c, _)| c.is_finite()),
            _ => true,
        };
        if ok {
            Ok(e)
        } else {
            Err(self
                .error(op, "the model overflows here: a coefficient is not finite")
                .with_hint("constants must stay within about 1e308"))
        }
    }

    fn expr(&mut self) -> Result<Expr, Diagnostic> {
        // Collect the whole chain `a + b - c ...` and simplify it once: folding it
        // pairwise re-simplified the growing sum at every step (quadratic in its length).
        let mut terms = vec![self.product()?];
        let mut ops = Vec::new();
        loop {
            match self.peek_kind() {
                Some(Kind::Plus) => {
                    ops.push(self.bump().expect("peeked").span);
                    terms.push(self.product()?);
                }
                Some(Kind::Minus) => {
                    ops.push(self.bump().expect("peeked").span);
                    let rhs = self.product()?;
                    terms.push(Expr::neg(rhs));
                }
                _ => break,
            }
        }
        if terms.len() == 1 {
            return Ok(terms.pop().expect("one term"));
        }
        let sum = Expr::sum_of(terms.clone());
        if sum
            .as_pmnf()
            .is_none_or(|p| p.terms().all(|(c, _)| c.is_finite()))
        {
            return Ok(sum);
        }
        // An overflow: add pairwise to find the operator where it happens.
        let mut it = terms.into_iter();
        let mut acc = it.next().expect("two or more terms");
        for (t, op) in it.zip(ops) {
            acc = self.finite(Expr::add(acc, t), op)?;
        }
        Ok(acc)
    }

    fn product(&mut self) -> Result<Expr, Diagnostic> {
        let mut acc = self.unary()?;
        loop {
            match self.peek_kind() {
                Some(Kind::Star) => {
                    let op = self.bump().expect("peeked").span;
                    let rhs = self.unary()?;
                    acc = self.finite(Expr::mul(acc, rhs), op)?;
                }
                Some(Kind::Slash) => {
                    let op = self.bump().expect("peeked").span;
                    let rhs = self.unary()?;
                    acc = self.finite(Expr::div(acc, rhs), op)?;
                }
                _ => return Ok(acc),
            }
        }
    }

    fn unary(&mut self) -> Result<Expr, Diagnostic> {
        match self.peek_kind() {
            Some(Kind::Minus) => {
                let span = self.bump().expect("peeked").span;
                self.enter(span)?;
                let e = self.unary()?;
                self.depth -= 1;
                Ok(Expr::neg(e))
            }
            Some(Kind::Plus) => {
                let span = self.bump().expect("peeked").span;
                self.enter(span)?;
                let e = self.unary();
                self.depth -= 1;
                e
            }
            _ => self.power(),
        }
    }

    fn power(&mut self) -> Result<Expr, Diagnostic> {
        let base = self.atom()?;
        if matches!(self.peek_kind(), Some(Kind::Caret)) {
            let caret = self.bump().expect("peeked");
            // An exact rational exponent first. If that fails, read the exponent as a
            // general expression: one that mentions a name (`2^j`) makes a general
            // power, and so does a constant no exact small rational can hold
            // (`x^1.2e73`, `x^9.1e18`: that is how such powers print). Any other
            // failure is the rational parser's error.
            let save = (self.pos, self.depth);
            match self.exponent() {
                Ok(q) => return self.finite(Expr::pow(base, q), caret.span),
                Err(e) => {
                    let unrepresentable = e.message.contains("cannot be represented")
                        || e.message.contains("too large")
                        || e.message.contains("overflows");
                    (self.pos, self.depth) = save;
                    self.enter(caret.span)?;
                    let Ok(exp) = self.unary() else {
                        return Err(e);
                    };
                    self.depth -= 1;
                    let constant = exp.params().is_empty();
                    if constant && !(unrepresentable && exp.as_constant().is_some()) {
                        return Err(e);
                    }
                    return self.finite(Expr::pow_expr(base, exp), caret.span);
                }
            }
        }
        Ok(base)
    }

    /// An exact rational exponent: `2`, `-1`, `0.5`, `(5/4)`, `(-1)`, `(1/2 + 1)`.
    fn exponent(&mut self) -> Result<Q, Diagnostic> {
        let start = self
            .peek()
            .map(|t| t.span)
            .unwrap_or_else(|| self.eof_span());
        let q = match self.peek_kind() {
            Some(Kind::Minus) => {
                let t = self.bump().expect("peeked");
                let q = self.exponent()?;
                return Q::zero()
                    .checked_sub(&q)
                    .ok_or_else(|| self.error(t.span, "exponent overflows"));
            }
            Some(Kind::Number(_)) => {
                let t = self.bump().expect("peeked");
                self.decimal_to_q(&t)?
            }
            Some(Kind::LParen) => {
                let t = self.bump().expect("peeked");
                self.enter(t.span)?;
                let q = self.rational_sum()?;
                self.expect(Kind::RParen, "`)` closing the exponent")?;
                self.depth -= 1;
                q
            }
            Some(_) | None => {
                return Err(self
                    .error(start, "an exponent must be a constant rational number")
                    .with_hint("write e.g. x^2, x^(3/2) or x^(-1)"))
            }
        };
        if q.numer().unsigned_abs() > MAX_EXPONENT_PART as u64 || *q.denom() > MAX_EXPONENT_PART {
            return Err(self.error(start, "exponent is too large or too finely divided"));
        }
        Ok(q)
    }

    fn rational_sum(&mut self) -> Result<Q, Diagnostic> {
        let mut acc = self.rational_product()?;
        loop {
            let op = match self.peek_kind() {
                Some(Kind::Plus) => true,
                Some(Kind::Minus) => false,
                _ => return Ok(acc),
            };
            let span = self.bump().expect("peeked").span;
            let rhs = self.rational_product()?;
            acc = if op {
                acc.checked_add(&rhs)
            } else {
                acc.checked_sub(&rhs)
            }
            .ok_or_else(|| self.error(span, "exponent overflows"))?;
        }
    }

    fn rational_product(&mut self) -> Result<Q, Diagnostic> {
        let mut acc = self.rational_atom()?;
        loop {
            let op = match self.peek_kind() {
                Some(Kind::Star) => true,
                Some(Kind::Slash) => false,
                _ => return Ok(acc),
            };
            let span = self.bump().expect("peeked").span;
            let rhs = self.rational_atom()?;
            if !op && rhs.is_zero() {
                return Err(self.error(span, "division by zero in an exponent"));
            }
            acc = if op {
                acc.checked_mul(&rhs)
            } else {
                acc.checked_div(&rhs)
            }
            .ok_or_else(|| self.error(span, "exponent overflows"))?;
        }
    }

    fn rational_atom(&mut self) -> Result<Q, Diagnostic> {
        match self.peek().cloned() {
            Some(Token {
                kind: Kind::Minus, ..
            }) => {
                let t = self.bump().expect("peeked");
                let q = self.rational_atom()?;
                Q::zero()
                    .checked_sub(&q)
                    .ok_or_else(|| self.error(t.span, "exponent overflows"))
            }
            Some(
                t @ Token {
                    kind: Kind::Number(_),
                    ..
                },
            ) => {
                self.bump();
                self.decimal_to_q(&t)
            }
            Some(Token {
                kind: Kind::LParen,
                span,
                ..
            }) => {
                self.bump();
                self.enter(span)?;
                let q = self.rational_sum()?;
                self.expect(Kind::RParen, "`)`")?;
                self.depth -= 1;
                Ok(q)
            }
            Some(t) => Err(self
                .error(
                    t.span,
                    format!("{} cannot appear in an exponent", t.kind.describe()),
                )
                .with_hint("exponents are constant fractions such as (5/4)")),
            None => Err(self.error(self.eof_span(), "the exponent is incomplete")),
        }
    }

    /// Exact rational value of a decimal literal (`0.25` → 1/4, `1e3` → 1000).
    fn decimal_to_q(&self, t: &Token) -> Result<Q, Diagnostic> {
        decimal_text_to_q(&t.text).ok_or_else(|| {
            self.error(
                t.span,
                format!("exponent `{}` cannot be represented exactly", t.text),
            )
        })
    }

    fn atom(&mut self) -> Result<Expr, Diagnostic> {
        let Some(tok) = self.bump() else {
            return Err(self
                .error(
                    self.eof_span(),
                    "expected a number, a parameter or `(`, found the end of the model",
                )
                .with_hint("the model ends in the middle of an expression"));
        };
        match tok.kind {
            Kind::Number(v) => Ok(Expr::constant(v)),
            Kind::LParen => {
                self.enter(tok.span)?;
                let e = self.expr()?;
                self.expect(Kind::RParen, "`)`")?;
                self.depth -= 1;
                Ok(e)
            }
            Kind::Name(name) => {
                if matches!(self.peek_kind(), Some(Kind::LParen)) {
                    self.call(&name, tok.span)
                } else if FUNCTIONS.contains(&name.as_str()) {
                    Err(self
                        .error(
                            tok.span,
                            format!("`{name}` is a function and needs arguments"),
                        )
                        .with_hint(format!("write {name}(...)")))
                } else {
                    Ok(Expr::param(&name))
                }
            }
            other => Err(self.error(
                tok.span,
                format!(
                    "expected a number, a parameter or `(`, found {}",
                    other.describe()
                ),
            )),
        }
    }

    fn call(&mut self, name: &str, name_span: Span) -> Result<Expr, Diagnostic> {
        let open = self.expect(Kind::LParen, "`(`")?;
        self.enter(open.span)?;
        if name == "sum" {
            let e = self.sum_call(name_span)?;
            self.depth -= 1;
            return Ok(e);
        }
        let mut args = Vec::new();
        if !matches!(self.peek_kind(), Some(Kind::RParen)) {
            loop {
                args.push(self.expr()?);
                match self.peek_kind() {
                    Some(Kind::Comma) => {
                        self.bump();
                    }
                    _ => break,
                }
            }
        }
        let close = self.expect(Kind::RParen, "`,` or `)`")?;
        self.depth -= 1;
        let span = name_span.join(close.span);
        let arity = |want: &str| -> Diagnostic {
            self.error(span, format!("`{name}` takes {want}, got {}", args.len()))
        };
        match name {
            "log2" | "ceil" | "floor" | "sqrt" => {
                if args.len() != 1 {
                    return Err(arity("one argument"));
                }
                let a = args.pop().expect("one argument");
                Ok(match name {
                    "log2" => Expr::log2(a),
                    "ceil" => Expr::ceil(a),
                    "floor" => Expr::floor(a),
                    _ => Expr::pow(a, Q::new(1, 2)),
                })
            }
            "max" | "min" => {
                if args.is_empty() {
                    return Err(arity("at least one argument"));
                }
                Ok(if name == "max" {
                    Expr::max_of(args)
                } else {
                    Expr::min_of(args)
                })
            }
            "piecewise" => {
                // piecewise(ON, F0, B0, F1, ..., Bk, Fk+1): Fi where B(i-1) <= ON < Bi.
                if args.len() < 4 || args.len() % 2 == 1 {
                    return Err(arity("a condition, then pieces and breaks alternating (4, 6, 8, ... arguments)")
                        .with_hint("write piecewise(x, 2 * x, 1024, 3 * x): 2 * x below x = 1024, 3 * x from there on"));
                }
                let mut args = args.into_iter();
                let on = args.next().expect("three arguments or more");
                let mut pieces = Vec::new();
                let mut breaks = Vec::new();
                for (i, a) in args.enumerate() {
                    if i % 2 == 0 {
                        pieces.push(a);
                    } else {
                        match a.as_constant() {
                            Some(b) if b.is_finite() => breaks.push(b),
                            _ => {
                                return Err(self.error(
                                    span,
                                    format!(
                                        "`piecewise`: break {} (`{a}`) is not a number",
                                        i / 2 + 1
                                    ),
                                ))
                            }
                        }
                    }
                }
                if let Some(w) = breaks.windows(2).find(|w| w[0] >= w[1]) {
                    return Err(self
                        .error(
                            span,
                            format!(
                                "`piecewise`: breaks must increase ({} is followed by {})",
                                w[0], w[1]
                            ),
                        )
                        .with_hint(
                            "list the pieces from the smallest values of the condition up",
                        ));
                }
                Ok(Expr::piecewise(on, breaks, pieces).expect("shape checked above"))
            }
            _ => {
                if let Some(result) = self.library.call(name, args) {
                    return result.map_err(|msg| self.error(span, msg));
                }
                let hint = if name == "log" || name == "ln" || name == "log10" {
                    "Extra-P models use log2(...); convert other bases with a constant factor"
                        .to_string()
                } else {
                    let mut known: Vec<String> = FUNCTIONS.iter().map(|s| s.to_string()).collect();
                    known.extend(self.library.names());
                    format!("known functions: {}", known.join(", "))
                };
                Err(self
                    .error(name_span, format!("unknown function `{name}`"))
                    .with_hint(hint))
            }
        }
    }

    /// `sum(VAR, FROM, TO, BODY)`.
    fn sum_call(&mut self, name_span: Span) -> Result<Expr, Diagnostic> {
        let var = match self.bump() {
            Some(Token {
                kind: Kind::Name(v),
                ..
            }) => v,
            Some(t) => {
                return Err(self
                    .error(t.span, "`sum` needs a variable name first")
                    .with_hint("write sum(j, 0, log2(P) - 1, body)"))
            }
            None => return Err(self.error(name_span, "`sum` is incomplete")),
        };
        self.expect(Kind::Comma, "`,` after the sum variable")?;
        let from = self.expr()?;
        self.expect(Kind::Comma, "`,` after the lower bound")?;
        let to = self.expr()?;
        self.expect(Kind::Comma, "`,` after the upper bound")?;
        let body = self.expr()?;
        self.expect(Kind::RParen, "`)` closing `sum`")?;
        Ok(Expr::sum_over(&var, from, to, body))
    }
}

/// Parse an exact rational such as `3/2`, `-1` or `0.25` (used for exponents in
/// JSON files).
pub fn parse_rational(text: &str) -> Result<Q, Diagnostic> {
    let wrapped = format!("x^({text})");
    let e = parse_model_in("<exponent>", &wrapped)
        .map_err(|d| Diagnostic::new("<exponent>", text, Span::new(0, text.len()), d.message))?;
    match e.as_pmnf().and_then(|p| p.as_single_term()) {
        Some((1.0, m)) => Ok(m.get("x").exp),
        _ if text.trim() == "0" => Ok(Q::zero()),
        _ => Err(Diagnostic::new(
            "<exponent>",
            text,
            Span::new(0, text.len()),
            "not a rational number",
        )),
    }
}
