//! Model expressions: PMNF where possible, an expression tree where not.
//!
//! Composition leaves PMNF in a few well-defined ways — the pointwise `max` of a
//! pipeline, division by a sum, `log2` of a sum, substitution of a non-monomial `d(x)` —
//! so a model is an [`Expr`] whose leaves are [`Pmnf`]s. Every constructor simplifies
//! (the "smart constructors" [`Expr::add`], [`Expr::mul`], ...), which keeps one
//! invariant: *whatever can be PMNF is PMNF*, and the rest is in a canonical shape
//! (flattened, sorted, like terms merged) so that printing is canonical and
//! `print → parse → print` is a fixed point.
//!
//! Parameters are assumed positive (sizes, counts, rates): that is what licenses
//! `c·m · max(a, b) = max(c·m·a, c·m·b)` for `c > 0`, and it is how every model in the
//! seeds reads.
//!
//! The files, each importing only those above it in this list:
//!
//! - `tree`: the [`Expr`] node types, leaves, and queries on the structure (parameters,
//!   size, approximate equality).
//! - `order`: the canonical order of the arguments of sums, products, max and min.
//! - `arith`: the smart constructors of sums, products and quotients (like terms merged,
//!   scalars distributed), and the operators `+ - * /` and unary `-`.
//! - `functions`: powers, `log2`, max and min, ceil and floor, integer sums, and
//!   segmented (piecewise) models.
//! - `subst`: substituting a model for a parameter.
//! - `eval`: evaluation at a point ([`Env`], [`EvalError`]).
//! - `batch`: evaluation over many draws of some parameters at once ([`Batch`]).
//! - `compiled`: evaluation of one model at many points, exactly as `eval` ([`Compiled`]).
//!
//! [`Pmnf`]: crate::model::Pmnf

mod arith;
mod batch;
mod compiled;
mod eval;
mod functions;
mod order;
mod subst;
mod tree;

pub use batch::{Batch, LANES};
pub use compiled::Compiled;
pub use eval::{Env, EvalError, Pairs};
pub use tree::{Expr, Model, ROUND_TRIP_NODES};
