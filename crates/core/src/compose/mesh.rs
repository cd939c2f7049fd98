//! The sizes a `matmul(...)` can be evaluated at.
//!
//! Fox's algorithm splits matrices of order `x` into `√P × √P` blocks of order `x/√P`,
//! one per process: `P` must be a perfect square and `x` a multiple of `√P`. The term's
//! parser checks a constant `procs=`; a `procs=P` given with `--at`, and the order `x`,
//! are known at a point only, so they are checked there, before the model is
//! evaluated: a block of 63.5 rows has no time.

use crate::compose::grid::format_point;
use crate::diag::Diagnostic;
use crate::term::{CountValue, Matmul, Node, NodeKind, Term};

/// Refuse a point at which a `matmul` of `term` would split its matrices into blocks
/// that are not whole (located at the `matmul`). The order is checked where the
/// `matmul`'s `x` is the term's own (inside `seq`, `pipe` and `tpool`); a `procs=`
/// parameter wherever the `matmul` is.
pub(crate) fn check_meshes(term: &Term, point: &[(String, f64)]) -> Result<(), Diagnostic> {
    Meshes::of(term).check(point)
}

/// The `matmul`s of a term, found once for checking many points ([`check_meshes`]):
/// walking a term of a thousand patterns at each of a thousand points cost more than
/// evaluating its model there.
pub(crate) struct Meshes<'a> {
    term: &'a Term,
    /// Each `matmul` with whether its `x` is the term's own, in the order they are
    /// checked.
    found: Vec<(&'a Node, &'a Matmul, bool)>,
}

impl<'a> Meshes<'a> {
    pub(crate) fn of(term: &'a Term) -> Meshes<'a> {
        let mut found = Vec::new();
        let mut stack: Vec<(&Node, bool)> = vec![(&term.root, true)];
        while let Some((node, outer_x)) = stack.pop() {
            match &node.kind {
                NodeKind::Matmul(mm) => {
                    found.push((node, &**mm, outer_x));
                    stack.push((&mm.multiply, false));
                }
                NodeKind::Seq(_) | NodeKind::Pipe(_) | NodeKind::Tpool { .. } => {
                    stack.extend(node.children().into_iter().map(|c| (c, outer_x)));
                }
                _ => stack.extend(node.children().into_iter().map(|c| (c, false))),
            }
        }
        Meshes { term, found }
    }

    /// The first `matmul` (in the term's walk) that `point` does not split evenly.
    pub(crate) fn check(&self, point: &[(String, f64)]) -> Result<(), Diagnostic> {
        self.found
            .iter()
            .try_for_each(|&(node, mm, outer_x)| check_one(self.term, node, mm, point, outer_x))
    }
}

fn check_one(
    term: &Term,
    node: &Node,
    mm: &Matmul,
    point: &[(String, f64)],
    outer_x: bool,
) -> Result<(), Diagnostic> {
    let value = |name: &str| point.iter().find(|(n, _)| n == name).map(|(_, v)| *v);
    let written = term.text(node.span);
    let what = if written.len() <= 60 {
        format!("`{written}`")
    } else {
        let (_, col) = crate::diag::line_col(&term.source, node.span.start);
        format!("the matmul at column {col}")
    };
    let error = |msg: String, hint: String| {
        Diagnostic::new(&term.origin, &term.source, node.span, msg).with_hint(hint)
    };
    let (procs, name) = match &mm.procs.value {
        CountValue::Int(k) => (*k as f64, None),
        CountValue::Param(p) => match value(p) {
            Some(v) => (v, Some(p.as_str())),
            None => return Ok(()),
        },
    };
    let side = procs.sqrt().round();
    if !(procs >= 1.0 && side * side == procs) {
        let p = name.unwrap_or("P");
        return Err(error(
            format!(
                "{what} at {}: {p} = {} processes do not form a square mesh",
                format_point(point),
                crate::model::format_number(procs)
            ),
            format!("Fox's algorithm runs on √{p} × √{p} processes: give {p} = 1, 4, 9, 16, ..."),
        ));
    }
    let Some(x) = value("x").filter(|_| outer_x) else {
        return Ok(());
    };
    let blocks = x / side;
    if !(x >= 1.0 && blocks.fract() == 0.0) {
        let mesh = crate::model::format_number(side);
        return Err(error(
            format!(
                "{what} at {}: matrices of order x = {} do not split into {mesh} × {mesh} blocks (x must be a multiple of √P = {mesh})",
                format_point(point),
                crate::model::format_number(x)
            ),
            format!(
                "each process holds a block of x/√P rows and columns; evaluate at multiples of {mesh}, e.g. --at x={}",
                crate::model::format_number((x / side).ceil().max(1.0) * side)
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::term::parse_term;

    fn at(x: f64, p: f64) -> Vec<(String, f64)> {
        vec![("P".to_string(), p), ("x".to_string(), x)]
    }

    #[test]
    fn orders_that_do_not_split_into_whole_blocks_are_refused_at_the_matmul() {
        let t = parse_term(
            "<term>",
            "seq(a, matmul(m, procs=4, message=e, bcast=flat))",
        )
        .unwrap();
        let x = |v: f64| vec![("x".to_string(), v)];
        assert!(check_meshes(&t, &x(128.0)).is_ok());
        let d = check_meshes(&t, &x(127.0)).unwrap_err();
        assert_eq!(
            d.message,
            "`matmul(m, procs=4, message=e, bcast=flat)` at x=127: matrices of order x = 127 do not split into 2 × 2 blocks (x must be a multiple of √P = 2)"
        );
        assert_eq!(d.span.start, 7);
        assert!(d.hint.unwrap().contains("--at x=128"));
        // A procs= parameter must be a square at the point.
        let t = parse_term("<term>", "matmul(m, procs=P, message=e, bcast=binomial)").unwrap();
        assert!(check_meshes(&t, &at(96.0, 9.0)).is_ok());
        let d = check_meshes(&t, &at(96.0, 8.0)).unwrap_err();
        assert!(
            d.message
                .contains("P = 8 processes do not form a square mesh"),
            "{}",
            d.message
        );
        let d = check_meshes(&t, &at(100.0, 9.0)).unwrap_err();
        assert!(d.message.contains("multiple of √P = 3"), "{}", d.message);
        // Where the matmul's x is not the term's (a dc level's subproblem), only P is checked.
        let t = parse_term(
            "<term>",
            "dc(d, matmul(m, procs=4, message=e, bcast=flat), l, procs=2, exchange=e)",
        )
        .unwrap();
        assert!(check_meshes(&t, &at(127.0, 0.0)).is_ok());
    }
}
