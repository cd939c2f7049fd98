//! The hypothesis space: which `x^i · log2(x)^j` factors a modeler may use.
//!
//! The default is Extra-P 4.2.5's: 42 (i, j) pairs with i from {0, 1/4, 1/3, 1/2, 2/3, 3/4,
//! 4/5, 1, 5/4, 4/3, 3/2, 5/3, 7/4, 2, 9/4, 7/3, 5/2, 8/3, 11/4, 3} and j from {0, 1, 2}, not
//! every combination (the list below is Extra-P's, in its order, which matters for ties).
//! Exponents are exact rationals, so a fitted model prints `x^(5/4)`, never `x^1.25`, and
//! products of fitted terms keep exact exponents.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::OnceLock;

use num_traits::Zero;

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
    blocks().to_vec()
}

/// [`extrap_blocks`], built once: `Q::new` reduces by a gcd, and the modelers ask for
/// the blocks several times per region.
fn blocks() -> &'static [Power] {
    static BLOCKS_ONCE: OnceLock<Vec<Power>> = OnceLock::new();
    BLOCKS_ONCE.get_or_init(|| {
        EXTRAP_BLOCKS
            .iter()
            .map(|&(n, d, l)| Power::new(Q::new(n, d), Q::from_integer(l)))
            .collect()
    })
}

/// Extra-P's blocks usable for the given parameter values: without log factors when any
/// value is below 1 (log2 would be negative or undefined there), as Extra-P does.
pub fn usable_blocks(values: impl IntoIterator<Item = f64>) -> Vec<Power> {
    let log_ok = values.into_iter().all(|v| v >= 1.0);
    blocks()
        .iter()
        .filter(|p| log_ok || p.log.is_zero())
        .copied()
        .collect()
}

/// `x^i · log2(x)^j`.
pub fn eval_power(p: &Power, x: f64) -> f64 {
    pow_q(x, p.exp) * pow_q(x.log2(), p.log)
}

/// Number of Extra-P's building blocks.
pub const BLOCKS: usize = EXTRAP_BLOCKS.len();

/// The position of `p` in [`extrap_blocks`], `None` for any other power. Compares the
/// reduced numerators and denominators directly (`Ratio`'s own comparison divides).
pub fn block_index(p: &Power) -> Option<usize> {
    let key = (
        *p.exp.numer(),
        *p.exp.denom(),
        *p.log.numer(),
        *p.log.denom(),
    );
    EXTRAP_BLOCKS
        .iter()
        .position(|&(n, d, l)| key == (n, d, l, 1))
}

/// Distinct parameter values whose block values a thread keeps (a few experiments'
/// worth of coordinates); past that the memo starts over.
const MEMO_VALUES: usize = 4096;

thread_local! {
    static BLOCK_MEMO: RefCell<HashMap<u64, Box<[f64; BLOCKS]>>> = RefCell::new(HashMap::new());
}

/// Every building block at `x`, in [`extrap_blocks`]' order, exactly as [`eval_power`]
/// gives them. Each block costs one or two `powf` calls; the regions of an experiment
/// share their coordinates, so the values are computed once per distinct `x` and
/// thread, not once per region and block (in a profile of the three-parameter
/// benchmark this evaluation was a tenth of all instructions).
pub fn block_values_at(x: f64, out: &mut [f64; BLOCKS]) {
    BLOCK_MEMO.with(|memo| {
        let mut memo = memo.borrow_mut();
        if let Some(v) = memo.get(&x.to_bits()) {
            *out = **v;
            return;
        }
        for (o, &(n, d, l)) in out.iter_mut().zip(&EXTRAP_BLOCKS) {
            *o = eval_power(&Power::new(Q::new(n, d), Q::from_integer(l)), x);
        }
        if memo.len() >= MEMO_VALUES {
            memo.clear();
        }
        memo.insert(x.to_bits(), Box::new(*out));
    })
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
    fn block_values_are_eval_power_bit_for_bit() {
        let blocks = extrap_blocks();
        for x in [0.5, 1.0, 2.0, 20.0, 1e6, 3.7] {
            let mut v = [0.0; BLOCKS];
            // Twice: computed, then from the memo.
            for _ in 0..2 {
                block_values_at(x, &mut v);
                for (b, got) in blocks.iter().zip(v) {
                    assert_eq!(got.to_bits(), eval_power(b, x).to_bits(), "{b:?} at {x}");
                }
            }
        }
        for (i, b) in blocks.iter().enumerate() {
            assert_eq!(block_index(b), Some(i));
        }
        assert_eq!(
            block_index(&Power::new(Q::new(1, 5), Q::from_integer(0))),
            None
        );
    }

    #[test]
    fn logs_are_dropped_below_one() {
        assert_eq!(usable_blocks([0.5, 2.0]).len(), 19);
        assert_eq!(usable_blocks([1.0, 2.0]).len(), 42);
    }
}
