//! Performance models.
//!
//! A model is an [`Expr`]: a function of named positive parameters that is a PMNF
//! polynomial ([`Pmnf`]) wherever composition allows, and an expression tree otherwise.
//!
//! ```
//! use perfcompose_core::model::{parse_model, Expr};
//! let qsort = parse_model("1034.17 * x * log2(x)").unwrap();
//! let tpool4 = Expr::div(qsort, Expr::constant(4.0));
//! assert_eq!(tpool4.to_string(), "258.5425 * x * log2(x)");
//! assert_eq!(tpool4.eval_at(&[("x", 1024.0)]).unwrap(), 258.5425 * 1024.0 * 10.0);
//! ```

mod asymptotic;
mod expr;
mod parse;
mod pmnf;
mod print;

/// Models up to this many nodes ([`Expr::node_count`]) whose products were all expanded
/// print canonically: print → parse → print is a fixed point ([`Expr::is_canonical_size`]).
/// Larger models still parse, print and evaluate, but a product of sums beyond the
/// expansion cap (`MAX_PRODUCT_TERMS` term pairs) may come back grouped differently (an
/// equivalent model), since how far it expands depends on the order it was built in.
pub const ROUND_TRIP_NODES: usize = 2_000;

/// Exact rational exponents.
pub type Q = num_rational::Ratio<i64>;

pub use asymptotic::{compare_growth, compare_pmnf, Growth};
pub use expr::{Env, EvalError, Expr, Model, Pairs};
pub use parse::{
    parse_model, parse_model_in, parse_model_with, parse_rational, Functions, NoFunctions,
    MAX_DEPTH,
};
pub use pmnf::{is_extrap_monomial, pow_q, q_to_f64, Monomial, Pmnf, Power};
pub use print::{format_number, format_q, format_significant};

#[cfg(test)]
mod tests;
