//! Evaluation grids: `--at x=1024,262144 --at n=1,2,4` is the cartesian product of the
//! values of each name (the first name varies slowest).
//!
//! A value is a constant model expression (`1024`, `2^18`, `1.5e6`), so errors inside a
//! value are located like any other model error, in the `--at` argument.

use crate::diag::{Diagnostic, Span};
use crate::model::parse_model_in;

/// The origin named in errors about `--at` arguments.
pub const AT_ORIGIN: &str = "--at";
/// Largest number of points a grid may have.
pub const MAX_GRID_POINTS: usize = 1_000_000;

/// One `--at name=v1,v2,...` argument.
#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    pub name: String,
    pub values: Vec<f64>,
    /// The argument as written, and the span of each value in it.
    pub text: String,
    pub spans: Vec<Span>,
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
    let mut values = Vec::new();
    let mut spans = Vec::new();
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
        let e =
            parse_model_in(AT_ORIGIN, v_text).map_err(|d| d.embed(AT_ORIGIN, text, span.start))?;
        let Some(v) = e.as_constant() else {
            return Err(err(span, &format!("`{v_text}` is not a number"))
                .with_hint("values are numbers or constant expressions such as 2^18"));
        };
        if !v.is_finite() {
            return Err(err(span, &format!("`{v_text}` is not finite")));
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
    })
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
}
