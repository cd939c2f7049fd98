//! The hypothesis space: which `x^i · log2(x)^j` factors a modeler may use.
//!
//! The default is Extra-P 4.2.5's: 42 (i, j) pairs with i from {0, 1/4, 1/3, 1/2, 2/3, 3/4,
//! 4/5, 1, 5/4, 4/3, 3/2, 5/3, 7/4, 2, 9/4, 7/3, 5/2, 8/3, 11/4, 3} and j from {0, 1, 2}, not
//! every combination (the list below is Extra-P's, in its order, which matters for ties).
//! Exponents are exact rationals, so a fitted model prints `x^(5/4)`, never `x^1.25`, and
//! products of fitted terms keep exact exponents.

use crate::model::{pow_q, Power, Q};

/// Extra-P's default single-parameter building blocks as `(numerator, denominator, log)`,
/// in Extra-P's order (`create_default_building_blocks` with log terms allowed).
const EXTRAP_BLOCKS: [(i64, i64, i64); 42] = [
    (0, 1, 1),
    (0, 1, 2),
    (1, 4, 0),
    (1, 3, 0),
    (1, 4, 1),
    (1, 3, 1),
    (1, 4, 2),
    (1, 3, 2),
    (1, 2, 0),
    (1, 2, 1),
    (1, 2, 2),
    (2, 3, 0),
    (3, 4, 0),
    (2, 3, 1),
    (3, 4, 1),
    (4, 5, 0),
    (2, 3, 2),
    (3, 4, 2),
    (1, 1, 0),
    (1, 1, 1),
    (1, 1, 2),
    (5, 4, 0),
    (5, 4, 1),
    (4, 3, 0),
    (4, 3, 1),
    (3, 2, 0),
    (3, 2, 1),
    (3, 2, 2),
    (5, 3, 0),
    (7, 4, 0),
    (2, 1, 0),
    (2, 1, 1),
    (2, 1, 2),
    (9, 4, 0),
    (7, 3, 0),
    (5, 2, 0),
    (5, 2, 1),
    (5, 2, 2),
    (8, 3, 0),
    (11, 4, 0),
    (3, 1, 0),
    (3, 1, 1),
];

/// Extra-P's 42 building blocks, in Extra-P's order.
pub fn extrap_blocks() -> Vec<Power> {
    EXTRAP_BLOCKS
        .iter()
        .map(|&(n, d, l)| Power::new(Q::new(n, d), Q::from_integer(l)))
        .collect()
}

/// Extra-P's blocks usable for the given parameter values: without log factors when any
/// value is below 1 (log2 would be negative or undefined there), as Extra-P does.
pub fn usable_blocks(values: impl IntoIterator<Item = f64>) -> Vec<Power> {
    let log_ok = values.into_iter().all(|v| v >= 1.0);
    extrap_blocks()
        .into_iter()
        .filter(|p| log_ok || p.log == Q::from_integer(0))
        .collect()
}

/// `x^i · log2(x)^j`.
pub fn eval_power(p: &Power, x: f64) -> f64 {
    pow_q(x, p.exp) * pow_q(x.log2(), p.log)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extrap_space_has_42_distinct_blocks_over_20_exponents() {
        let blocks = extrap_blocks();
        assert_eq!(blocks.len(), 42);
        let mut exps: Vec<Q> = blocks.iter().map(|b| b.exp).collect();
        exps.sort();
        exps.dedup();
        assert_eq!(exps.len(), 20);
        for (i, a) in blocks.iter().enumerate() {
            for b in &blocks[i + 1..] {
                assert_ne!(a, b);
            }
        }
    }

    #[test]
    fn logs_are_dropped_below_one() {
        assert_eq!(usable_blocks([0.5, 2.0]).len(), 19);
        assert_eq!(usable_blocks([1.0, 2.0]).len(), 42);
    }
}
