//! The canonical order of the arguments of commutative nodes (sums, products, max, min),
//! which makes printing canonical.

use super::tree::Expr;

/// Sort arguments of commutative nodes into the canonical order: PMNF arguments first,
/// in the order of their printed form, then the other arguments by a structural order
/// ([`cmp_structure`]).
///
/// Printing every argument to sort it made composition quadratic in the depth of a
/// model (a task pool rescales, and so re-sorts, every level below it); the structural
/// order decides almost every comparison at the first node.
pub(super) fn sort_canonical(v: &mut [Expr]) {
    if v.len() < 2 {
        return;
    }
    let polys = v.iter().filter(|e| matches!(e, Expr::Poly(_))).count();
    if polys < 2 {
        v.sort_by(cmp_structure);
        return;
    }
    // Sort a permutation, then move the arguments into place (no clones: the
    // arguments can be large).
    let keys: Vec<Option<String>> = v
        .iter()
        .map(|e| matches!(e, Expr::Poly(_)).then(|| e.to_string()))
        .collect();
    let mut order: Vec<usize> = (0..v.len()).collect();
    order.sort_by(|&a, &b| match (&keys[a], &keys[b]) {
        (Some(x), Some(y)) => x.cmp(y),
        _ => cmp_structure(&v[a], &v[b]),
    });
    let mut taken: Vec<Option<Expr>> = v
        .iter_mut()
        .map(|e| Some(std::mem::replace(e, Expr::zero())))
        .collect();
    for (slot, i) in v.iter_mut().zip(order) {
        *slot = taken[i].take().unwrap_or_else(Expr::zero);
    }
}

/// A total order on models: by kind (PMNF first), then by parts, left to right.
/// Coefficients compare with `f64::total_cmp`, so the order is total.
pub(super) fn cmp_structure(a: &Expr, b: &Expr) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    fn rank(e: &Expr) -> u8 {
        match e {
            Expr::Poly(_) => 0,
            Expr::Add(_) => 1,
            Expr::Mul(_) => 2,
            Expr::Div(_, _) => 3,
            Expr::Pow(_, _) => 4,
            Expr::PowE(_, _) => 5,
            Expr::Log2(_) => 6,
            Expr::Max(_) => 7,
            Expr::Min(_) => 8,
            Expr::Ceil(_) => 9,
            Expr::Floor(_) => 10,
            Expr::Sum { .. } => 11,
            Expr::Piecewise { .. } => 12,
        }
    }
    fn slices(x: &[Expr], y: &[Expr]) -> Ordering {
        for (p, q) in x.iter().zip(y) {
            let o = cmp_structure(p, q);
            if o != Ordering::Equal {
                return o;
            }
        }
        x.len().cmp(&y.len())
    }
    rank(a).cmp(&rank(b)).then_with(|| match (a, b) {
        (Expr::Poly(p), Expr::Poly(q)) => {
            for ((cp, mp), (cq, mq)) in p.terms().zip(q.terms()) {
                let o = mp.cmp(mq).then(cp.total_cmp(&cq));
                if o != Ordering::Equal {
                    return o;
                }
            }
            p.len().cmp(&q.len())
        }
        (Expr::Add(x), Expr::Add(y))
        | (Expr::Mul(x), Expr::Mul(y))
        | (Expr::Max(x), Expr::Max(y))
        | (Expr::Min(x), Expr::Min(y)) => slices(x, y),
        (Expr::Div(a1, b1), Expr::Div(a2, b2)) | (Expr::PowE(a1, b1), Expr::PowE(a2, b2)) => {
            cmp_structure(a1, a2).then_with(|| cmp_structure(b1, b2))
        }
        (Expr::Pow(x, q), Expr::Pow(y, r)) => cmp_structure(x, y).then(q.cmp(r)),
        (Expr::Log2(x), Expr::Log2(y))
        | (Expr::Ceil(x), Expr::Ceil(y))
        | (Expr::Floor(x), Expr::Floor(y)) => cmp_structure(x, y),
        (
            Expr::Sum {
                var: v1,
                from: f1,
                to: t1,
                body: b1,
            },
            Expr::Sum {
                var: v2,
                from: f2,
                to: t2,
                body: b2,
            },
        ) => v1
            .cmp(v2)
            .then_with(|| cmp_structure(f1, f2))
            .then_with(|| cmp_structure(t1, t2))
            .then_with(|| cmp_structure(b1, b2)),
        (
            Expr::Piecewise {
                on: o1,
                breaks: b1,
                pieces: p1,
            },
            Expr::Piecewise {
                on: o2,
                breaks: b2,
                pieces: p2,
            },
        ) => cmp_structure(o1, o2)
            .then_with(|| {
                b1.iter()
                    .zip(b2)
                    .map(|(x, y)| x.total_cmp(y))
                    .find(|o| *o != Ordering::Equal)
                    .unwrap_or_else(|| b1.len().cmp(&b2.len()))
            })
            .then_with(|| slices(p1, p2)),
        _ => Ordering::Equal,
    })
}
