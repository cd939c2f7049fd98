//! Evaluation grids: `--at x=1024,262144 --at n=1,2,4` is the cartesian product of the
//! values of each name (the first name varies slowest).
//!
//! A value is a constant model expression (`1024`, `2^18`, `1.5e6`), so errors inside a
//! value are located like any other model error, in the `--at` argument. `A..B` is a
//! range: [`RANGE_POINTS`] log-spaced points from A to B (`A..B:N` for N points), so
//! `--at x=2^10..2^20` covers six decades without listing them; a point whose exact value
//! is round (2048 in `2^10..2^12:3`) is exactly that ([`log_spaced`]). Commands that run
//! at whole sizes round the other values with [`WholeSizes`], which says what it did.

use crate::diag::{Diagnostic, Span};
use crate::model::parse_model_in;

/// The origin named in errors about `--at` arguments.
pub const AT_ORIGIN: &str = "--at";
/// Largest number of points a grid may have.
pub const MAX_GRID_POINTS: usize = 1_000_000;
/// Points of a range `A..B` without an explicit count.
pub const RANGE_POINTS: usize = 11;
/// Most points a single range may ask for (`A..B:N`).
pub const MAX_RANGE_POINTS: usize = 10_000;

/// One `--at name=v1,v2,...` argument.
#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    pub name: String,
    pub values: Vec<f64>,
    /// The argument as written, and the span of each value in it.
    pub text: String,
    pub spans: Vec<Span>,
    /// `Some((a, b))` when the values were given as the range `a..b` (a < b), for
    /// pictures that sample the range more finely than `values`.
    pub range: Option<(f64, f64)>,
}

/// A point: a value per name.
pub type Point = Vec<(String, f64)>;

/// Parse `name=v1,v2,...`.
///
/// ```
/// use perfcompose_core::compose::grid::parse_at;
/// let a = parse_at("x=1024, 2^18").unwrap();
/// assert_eq!(a.values, [1024.0, 262144.0]);
/// ```
pub fn parse_at(text: &str) -> Result<Axis, Diagnostic> {
    let err = |span: Span, msg: &str| Diagnostic::new(AT_ORIGIN, text, span, msg);
    let Some(eq) = text.find('=') else {
        return Err(err(Span::new(0, text.len()), "expected NAME=VALUES")
            .with_hint("write e.g. --at x=1024,262144"));
    };
    let name = text[..eq].trim();
    let name_start = text[..eq].find(name).unwrap_or(0);
    let ok = matches!(name.chars().next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !ok {
        return Err(err(
            Span::new(name_start, name_start + name.len().max(1)),
            &format!("`{name}` is not a parameter name"),
        )
        .with_hint("write e.g. --at x=1024,262144"));
    }
    let rest = &text[eq + 1..];
    if let Some(dots) = rest.find("..") {
        return parse_range(text, name, eq + 1, dots);
    }
    let mut values = Vec::new();
    let mut spans: Vec<Span> = Vec::new();
    let mut start = eq + 1;
    for piece in text[eq + 1..].split(',') {
        let lead = piece.len() - piece.trim_start().len();
        let v_text = piece.trim();
        let span = Span::new(start + lead, start + lead + v_text.len());
        if v_text.is_empty() {
            return Err(err(
                Span::new(span.start.min(text.len().saturating_sub(1)), span.start + 1),
                "missing value",
            )
            .with_hint(format!("write e.g. --at {name}=1024,262144")));
        }
        let v = constant(text, v_text, span)?;
        if let Some(i) = values.iter().position(|&w| w == v) {
            let first = &text[spans[i].start..spans[i].end];
            return Err(
                err(span, &format!("{name}={v_text} is given twice")).with_hint(
                    if first == v_text {
                        format!("list each value once (the first {name}={first} is enough)")
                    } else {
                        format!("list each value once: {first} is the same value")
                    },
                ),
            );
        }
        values.push(v);
        spans.push(span);
        start += piece.len() + 1;
    }
    Ok(Axis {
        name: name.to_string(),
        values,
        text: text.to_string(),
        spans,
        range: None,
    })
}

/// A constant value at `span` of the `--at` argument `text`.
fn constant(text: &str, v_text: &str, span: Span) -> Result<f64, Diagnostic> {
    let e = parse_model_in(AT_ORIGIN, v_text).map_err(|d| d.embed(AT_ORIGIN, text, span.start))?;
    let Some(v) = e.as_constant() else {
        return Err(
            Diagnostic::new(AT_ORIGIN, text, span, format!("`{v_text}` is not a number"))
                .with_hint("values are numbers or constant expressions such as 2^18"),
        );
    };
    if !v.is_finite() {
        return Err(Diagnostic::new(
            AT_ORIGIN,
            text,
            span,
            format!("`{v_text}` is not finite"),
        ));
    }
    Ok(v)
}

/// `NAME=A..B[:N]`, the values starting at byte `from` of `text` and `..` at `dots` after it.
fn parse_range(text: &str, name: &str, from: usize, dots: usize) -> Result<Axis, Diagnostic> {
    let err = |span: Span, msg: &str| {
        Diagnostic::new(AT_ORIGIN, text, span, msg).with_hint(format!(
            "write e.g. --at {name}=2^10..2^20 or {name}=2^10..2^20:21"
        ))
    };
    let piece = |start: usize, end: usize| -> Result<(f64, Span), Diagnostic> {
        let raw = &text[start..end];
        let lead = raw.len() - raw.trim_start().len();
        let v_text = raw.trim();
        let span = Span::new(start + lead, start + lead + v_text.len());
        if v_text.is_empty() {
            let at = start.min(text.len().saturating_sub(1));
            return Err(err(Span::new(at, at + 1), "missing value in the range"));
        }
        if v_text.contains(',') {
            return Err(err(span, "a range takes two ends, not a list"));
        }
        Ok((constant(text, v_text, span)?, span))
    };
    let a_end = from + dots;
    let b_start = a_end + 2;
    let (b_end, count) = match text[b_start..].find(':') {
        Some(c) => (b_start + c, Some(b_start + c + 1)),
        None => (text.len(), None),
    };
    let (a, a_span) = piece(from, a_end)?;
    let (b, b_span) = piece(b_start, b_end)?;
    if a <= 0.0 || b <= a {
        return Err(err(
            Span::new(a_span.start, b_span.end),
            &format!(
                "the range {a}..{b} must go up from a positive start (its points are log-spaced)"
            ),
        ));
    }
    let n = match count {
        None => RANGE_POINTS,
        Some(c) => {
            let c_text = text[c..].trim();
            let span = Span::new(c, text.len().max(c + 1));
            match c_text.parse::<usize>() {
                Ok(n) if (2..=MAX_RANGE_POINTS).contains(&n) => n,
                _ => {
                    return Err(err(
                        span,
                        &format!(
                            "`{c_text}` is not a number of points from 2 to {MAX_RANGE_POINTS}"
                        ),
                    ))
                }
            }
        }
    };
    let values = log_spaced(a, b, n);
    Ok(Axis {
        name: name.to_string(),
        spans: vec![Span::new(a_span.start, b_span.end); values.len()],
        values,
        text: text.to_string(),
        range: Some((a, b)),
    })
}

/// Relative distance within which a computed range point is taken to be the round number
/// it approximates. The log-domain computation is off by a few ulps times the logarithm of
/// the range's ratio (below 1e-13 relative for any finite range); a point that truly is not
/// round lands this close to a round number with a probability of about 1e-6.
const SNAP: f64 = 1e-12;

/// `n` ≥ 2 points from `a` to `b` (both > 0), evenly spaced in log scale; the ends exact.
///
/// A point whose exact value is a round number is that number, not a neighbour a few ulps
/// off: powers of two between powers of two are computed exactly, and a point within
/// relative 1e-12 of an integer, or of a decimal of at most six significant digits, is
/// that number (see [`snap`] for the limits above 1e13). Every command that evaluates,
/// runs or prints a range gets its points from here, so they all see the same values.
///
/// ```
/// use perfcompose_core::compose::grid::log_spaced;
/// assert_eq!(log_spaced(1024.0, 4096.0, 3), [1024.0, 2048.0, 4096.0]);
/// assert_eq!(log_spaced(1.0, 1e6, 4), [1.0, 100.0, 1e4, 1e6]);
/// ```
pub fn log_spaced(a: f64, b: f64, n: usize) -> Vec<f64> {
    let (la, lb) = (a.ln(), b.ln());
    let steps = (n - 1) as f64;
    let exact_twos = power_of_two(a).zip(power_of_two(b));
    (0..n)
        .map(|i| match i {
            0 => a,
            i if i == n - 1 => b,
            i => {
                if let Some((p, q)) = exact_twos {
                    let k = (q - p) * i as i64;
                    if k % (n as i64 - 1) == 0 {
                        return exp2(p + k / (n as i64 - 1));
                    }
                }
                snap((la + (lb - la) * i as f64 / steps).exp())
            }
        })
        .collect()
}

/// `Some(k)` when `v` is exactly 2^k (a normal number).
fn power_of_two(v: f64) -> Option<i64> {
    if !(v.is_normal() && v > 0.0) {
        return None;
    }
    let bits = v.to_bits();
    let mantissa = bits & ((1u64 << 52) - 1);
    (mantissa == 0).then(|| ((bits >> 52) & 0x7ff) as i64 - 1023)
}

/// 2^k, exactly, for `k` between the exponents of two normal numbers.
fn exp2(k: i64) -> f64 {
    f64::from_bits(((k + 1023) as u64) << 52)
}

/// `v` (> 0), or the round number it is within relative [`SNAP`] of: the nearest decimal
/// of six significant digits (`0.01`, `3.5e-7`, `1e15`), else the nearest integer.
///
/// The decimal comes first because above about 1e13 the computed value can be an integer
/// or more away from the exact one, so its nearest integer is not necessarily the exact
/// value; a six-digit decimal (every power of ten among them) still is. Integers there
/// that are neither powers of two nor six-digit decimals may come out one off.
fn snap(v: f64) -> f64 {
    let near = |r: f64| r != 0.0 && ((v - r) / v).abs() <= SNAP;
    // Rust formats and parses decimals correctly rounded: this is the f64 a user typing
    // the six digits would get.
    if let Ok(d) = format!("{v:.5e}").parse::<f64>() {
        if near(d) {
            return d;
        }
    }
    let whole = v.round();
    if near(whole) {
        whole
    } else {
        v
    }
}

/// The points to evaluate at.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Grid {
    pub axes: Vec<Axis>,
}

impl Grid {
    /// A grid from `--at` arguments: each name once, at most [`MAX_GRID_POINTS`] points.
    pub fn new(axes: Vec<Axis>) -> Result<Grid, Diagnostic> {
        for (i, a) in axes.iter().enumerate() {
            if axes[..i].iter().any(|b| b.name == a.name) {
                return Err(Diagnostic::new(
                    AT_ORIGIN,
                    &a.text,
                    Span::new(0, a.name.len()),
                    format!("`{}` is given twice", a.name),
                )
                .with_hint(format!("list all values once: --at {}=v1,v2,...", a.name)));
            }
        }
        let mut n: usize = 1;
        for a in &axes {
            n = n.saturating_mul(a.values.len());
        }
        if !axes.is_empty() && n > MAX_GRID_POINTS {
            let a = &axes[axes.len() - 1];
            return Err(Diagnostic::new(
                AT_ORIGIN,
                &a.text,
                Span::new(0, a.text.len()),
                format!("the grid has {n} points, more than {MAX_GRID_POINTS}"),
            )
            .with_hint("evaluate fewer combinations"));
        }
        Ok(Grid { axes })
    }

    /// Parse several `--at` arguments.
    pub fn parse(args: &[String]) -> Result<Grid, Diagnostic> {
        Grid::new(args.iter().map(|a| parse_at(a)).collect::<Result<_, _>>()?)
    }

    /// The grid used when none is given: `x` = 1, 2, 4, ..., 2^30.
    pub fn default_sizes() -> Grid {
        let values: Vec<f64> = (0..=30).map(|i| f64::powi(2.0, i)).collect();
        Grid {
            axes: vec![Axis {
                name: "x".into(),
                spans: vec![Span::new(0, 0); values.len()],
                values,
                text: "x=2^0,2^1,...,2^30".into(),
                range: None,
            }],
        }
    }

    pub fn is_empty(&self) -> bool {
        self.axes.is_empty()
    }

    pub fn names(&self) -> Vec<&str> {
        self.axes.iter().map(|a| a.name.as_str()).collect()
    }

    pub fn values_of(&self, name: &str) -> Option<&[f64]> {
        self.axes
            .iter()
            .find(|a| a.name == name)
            .map(|a| a.values.as_slice())
    }

    /// Every point, the first axis varying slowest; none for an empty grid.
    pub fn points(&self) -> Vec<Point> {
        product(&self.axes.iter().collect::<Vec<_>>())
    }

    /// Every combination of the values of the names other than `axis` (one empty point
    /// when there are none).
    pub fn others(&self, axis: &str) -> Vec<Point> {
        let rest: Vec<&Axis> = self.axes.iter().filter(|a| a.name != axis).collect();
        if rest.is_empty() {
            return vec![Vec::new()];
        }
        product(&rest)
    }
}

fn product(axes: &[&Axis]) -> Vec<Point> {
    if axes.is_empty() {
        return Vec::new();
    }
    let mut out: Vec<Point> = vec![Vec::new()];
    for a in axes {
        let mut next = Vec::with_capacity(out.len() * a.values.len());
        for p in &out {
            for v in &a.values {
                let mut q = p.clone();
                q.push((a.name.clone(), *v));
                next.push(q);
            }
        }
        out = next;
    }
    out
}

/// A value that cannot be a size: below zero, or too large for a whole number of elements.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
#[error("{} is not a size (a whole number, 0 or more)", crate::model::format_number(*.0))]
pub struct NotASize(pub f64);

/// Sizes for a command that runs at whole numbers of elements, from grid values: each value
/// rounded to the nearest whole number, duplicates after rounding dropped (the first kept).
#[derive(Clone, Debug, PartialEq)]
pub struct WholeSizes {
    /// The sizes, in the order of the values they came from.
    pub sizes: Vec<u64>,
    /// The values that were not whole numbers, with the size each became.
    pub rounded: Vec<(f64, u64)>,
    /// How many values were dropped because an earlier one rounded to the same size.
    pub dropped: usize,
}

/// Largest size accepted: integers above 2^53 are not all representable as `f64`.
const MAX_SIZE: f64 = 9_007_199_254_740_992.0;

impl WholeSizes {
    /// Round `values` to sizes.
    ///
    /// ```
    /// use perfcompose_core::compose::grid::{log_spaced, WholeSizes};
    /// let w = WholeSizes::new(&log_spaced(1000.0, 1e6, 7)).unwrap();
    /// assert_eq!(w.sizes, [1000, 3162, 10000, 31623, 100000, 316228, 1000000]);
    /// assert_eq!(w.rounded.len(), 3);
    /// ```
    pub fn new(values: &[f64]) -> Result<WholeSizes, NotASize> {
        let mut out = WholeSizes {
            sizes: Vec::with_capacity(values.len()),
            rounded: Vec::new(),
            dropped: 0,
        };
        let mut seen = std::collections::HashSet::with_capacity(values.len());
        for &v in values {
            if !(v >= 0.0 && v.round() <= MAX_SIZE) {
                return Err(NotASize(v));
            }
            let size = v.round() as u64;
            if v.fract() != 0.0 {
                out.rounded.push((v, size));
            }
            if seen.insert(size) {
                out.sizes.push(size);
            } else {
                out.dropped += 1;
            }
        }
        Ok(out)
    }

    /// One line saying what rounding did to the values of `flag` (`--at x`, `--sizes`;
    /// `None` when every value was a whole number already): the first few roundings and the
    /// duplicates dropped.
    pub fn note(&self, flag: &str) -> Option<String> {
        if self.rounded.is_empty() {
            return None;
        }
        const SHOWN: usize = 3;
        let n = self.rounded.len();
        let mut examples: Vec<String> = self
            .rounded
            .iter()
            .take(SHOWN)
            .map(|(v, s)| format!("{} to {s}", crate::model::format_significant(*v, 9)))
            .collect();
        if n > SHOWN {
            examples.push("...".into());
        }
        let mut line = format!(
            "note: {flag}: rounded {n} value{} to whole sizes ({})",
            if n == 1 { "" } else { "s" },
            examples.join(", ")
        );
        if self.dropped > 0 {
            line.push_str(&format!(
                " and dropped {} duplicate{}",
                self.dropped,
                if self.dropped == 1 { "" } else { "s" }
            ));
        }
        Some(line)
    }
}

/// `x=1024, n=4` for messages.
pub fn format_point(p: &[(String, f64)]) -> String {
    p.iter()
        .map(|(n, v)| format!("{n}={}", crate::model::format_number(*v)))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_grid_is_the_product_of_its_axes() {
        let g = Grid::parse(&["x=1,2".to_string(), "n=4, 8 ,16".to_string()]).unwrap();
        let pts = g.points();
        assert_eq!(pts.len(), 6);
        assert_eq!(pts[0], vec![("x".to_string(), 1.0), ("n".to_string(), 4.0)]);
        assert_eq!(
            pts[5],
            vec![("x".to_string(), 2.0), ("n".to_string(), 16.0)]
        );
        assert_eq!(g.others("x").len(), 3);
        assert_eq!(g.others("y").len(), 6);
        assert_eq!(Grid::default().others("x"), vec![Vec::new()]);
        assert!(Grid::default().points().is_empty());
    }

    #[test]
    fn bad_values_are_located() {
        let d = parse_at("x=1024,,3").unwrap_err();
        assert_eq!(d.message, "missing value");
        assert_eq!(d.span.start, 7);
        let d = parse_at("x=1024,2^y").unwrap_err();
        assert!(d.message.contains("not a number"), "{}", d.message);
        assert_eq!(&d.source[d.span.start..d.span.end], "2^y");
        let d = parse_at("x=1024,(3").unwrap_err();
        assert_eq!(d.origin, "--at");
        assert!(d.span.start >= 7, "{d:?}");
        let d = parse_at("1x=3").unwrap_err();
        assert!(d.message.contains("not a parameter name"));
        let d = parse_at("x").unwrap_err();
        assert!(d.message.contains("NAME=VALUES"));
        let d = Grid::parse(&["x=1".to_string(), "x=2".to_string()]).unwrap_err();
        assert!(d.message.contains("twice"));
    }

    #[test]
    fn a_range_is_log_spaced_between_its_ends() {
        let a = parse_at("x=2^10..2^20").unwrap();
        assert_eq!(a.range, Some((1024.0, 1048576.0)));
        assert_eq!(a.values.len(), RANGE_POINTS);
        assert_eq!(a.values[0], 1024.0);
        assert_eq!(a.values[10], 1048576.0);
        // Eleven points over ten doublings: every power of two.
        for (i, v) in a.values.iter().enumerate() {
            assert_eq!(*v, f64::powi(2.0, 10 + i as i32));
        }
        let a = parse_at("n = 1 .. 100 : 3").unwrap();
        assert_eq!(a.name, "n");
        assert_eq!(a.values, [1.0, 10.0, 100.0]);
    }

    #[test]
    fn range_points_whose_exact_value_is_round_are_that_value() {
        assert_eq!(
            parse_at("x=2^10..2^12:3").unwrap().values,
            [1024.0, 2048.0, 4096.0]
        );
        // Powers of two between powers of two, also below 1 and on long ranges.
        for (p, q) in [(0, 40), (-20, 0), (-30, 60), (10, 20), (3, 63)] {
            for steps in 1..=(q - p) as usize {
                if (q - p) as usize % steps != 0 {
                    continue;
                }
                let v = log_spaced(2f64.powi(p), 2f64.powi(q), steps + 1);
                let by = (q - p) / steps as i32;
                for (i, x) in v.iter().enumerate() {
                    assert_eq!(*x, 2f64.powi(p + by * i as i32), "{p} {q} {steps}");
                }
            }
        }
        // Integer ratios that are not powers of two: 3^k, 10^k, and the integer points of
        // ranges whose other points are not integers.
        let threes = log_spaced(3.0, 3f64.powi(20), 20);
        for (i, x) in threes.iter().enumerate() {
            assert_eq!(*x, 3f64.powi(i as i32 + 1));
        }
        for n in [2, 3, 4, 7, 10, 13, 19] {
            let v = log_spaced(1.0, 1e18, n);
            for (i, x) in v.iter().enumerate() {
                let e = 18.0 * i as f64 / (n - 1) as f64;
                if e.fract() == 0.0 {
                    assert_eq!(*x, 10f64.powi(e as i32), "{n}: {v:?}");
                }
            }
        }
        let v = log_spaced(1000.0, 1e6, 7);
        assert_eq!([v[0], v[2], v[4], v[6]], [1000.0, 1e4, 1e5, 1e6]);
        assert!((v[1] - 1e3 * 10f64.sqrt()).abs() < 1e-9, "{v:?}");
        // Round decimals below one: what typing them gives.
        assert_eq!(log_spaced(0.001, 0.1, 3), [0.001, 0.01, 0.1]);
        assert_eq!(log_spaced(1e-9, 1e-3, 4), [1e-9, 1e-7, 1e-5, 1e-3]);
    }

    #[test]
    fn points_that_are_not_round_stay_within_rounding_of_the_exact_value() {
        for (a, b, n) in [
            (1.0, 2.0, 7),
            (1000.0, 1e6, 7),
            (0.3, 7e9, 23),
            (1.5, 1e300, 9),
        ] {
            let v = log_spaced(a, b, n);
            for (i, x) in v.iter().enumerate() {
                let t = i as f64 / (n - 1) as f64;
                let want = (a.ln() + (b.ln() - a.ln()) * t).exp();
                assert!(((x - want) / want).abs() < 1e-12, "{x} vs {want}");
            }
            assert!(v.windows(2).all(|w| w[0] < w[1]), "{v:?}");
        }
    }

    #[test]
    fn a_value_given_twice_is_refused_where_it_repeats() {
        let d = parse_at("x=1,1").unwrap_err();
        assert_eq!(d.message, "x=1 is given twice");
        assert_eq!(d.line_col(), (1, 5), "{}", d.render());
        let d = parse_at("x=1024, 2, 2^10").unwrap_err();
        assert_eq!(d.message, "x=2^10 is given twice");
        assert!(d.hint.unwrap().contains("1024 is the same value"));
    }

    #[test]
    fn whole_sizes_round_drop_duplicates_and_say_so() {
        let w = WholeSizes::new(&[1024.0, 2048.0, 4096.0]).unwrap();
        assert_eq!(w.sizes, [1024, 2048, 4096]);
        assert_eq!(w.note("--at x"), None);
        let w = WholeSizes::new(&log_spaced(1.0, 3.0, 5)).unwrap();
        assert_eq!(w.sizes, [1, 2, 3]);
        assert_eq!(w.dropped, 2);
        assert_eq!(
            w.note("--at x").unwrap(),
            "note: --at x: rounded 3 values to whole sizes (1.31607401 to 1, 1.73205081 to 2, \
             2.27950706 to 2) and dropped 2 duplicates"
        );
        let w = WholeSizes::new(&log_spaced(1000.0, 1e6, 9)).unwrap();
        assert!(w.note("--sizes").unwrap().contains("7 values"), "{w:?}");
        assert!(w.note("--sizes").unwrap().ends_with("...)"), "{w:?}");
        assert_eq!(WholeSizes::new(&[0.5]).unwrap().sizes, [1]);
        let e = WholeSizes::new(&[2.0, -1.0]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "-1 is not a size (a whole number, 0 or more)"
        );
        assert!(WholeSizes::new(&[f64::NAN]).is_err());
        assert!(WholeSizes::new(&[1e30]).is_err());
    }

    #[test]
    fn bad_ranges_are_located() {
        let d = parse_at("x=10..1").unwrap_err();
        assert!(d.message.contains("must go up"), "{}", d.message);
        assert_eq!(&d.source[d.span.start..d.span.end], "10..1");
        let d = parse_at("x=0..8").unwrap_err();
        assert!(d.message.contains("positive"), "{}", d.message);
        let d = parse_at("x=1..").unwrap_err();
        assert!(d.message.contains("missing value"), "{}", d.message);
        let d = parse_at("x=1..2^y").unwrap_err();
        assert_eq!(&d.source[d.span.start..d.span.end], "2^y");
        let d = parse_at("x=1..8:1").unwrap_err();
        assert!(d.message.contains("number of points"), "{}", d.message);
        let d = parse_at("x=1..8:many").unwrap_err();
        assert_eq!(&d.source[d.span.start..d.span.end], "many");
        let d = parse_at("x=1,2..8").unwrap_err();
        assert!(d.message.contains("not a list"), "{}", d.message);
    }
}
