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
mod number;
mod parse;
mod pmnf;
mod print;

pub use asymptotic::{compare_growth, compare_pmnf, Growth};
pub use expr::{Batch, Compiled, Env, EvalError, Expr, Model, Pairs, LANES, ROUND_TRIP_NODES};
pub use number::{format_number, format_q, format_significant, Q};
pub use parse::{
    parse_model, parse_model_in, parse_model_with, parse_rational, Functions, NoFunctions,
    MAX_DEPTH,
};
pub use pmnf::{is_extrap_monomial, pow_q, q_to_f64, Monomial, Pmnf, Power};

#[cfg(test)]
mod tests;
