//! Analytic skeleton models: parallel matrix multiplication (the matrix-multiplication paper) and hypercube
//! divide and conquer (the divide-and-conquer paper).
//!
//! | item | what it is |
//! |---|---|
//! | [`Matmul`] | Fox's broadcast–multiply–roll on a `√N × √N` mesh: the paper's eqs. 5 and 9 for Dryad and MPI, the same derivation for any broadcast algorithm, parallel efficiency and overhead |
//! | [`FoxBlocks`] | the same algorithm composed from a block product's and a message's models (the `matmul(...)` term) |
//! | [`Hypercube`] | the HDC recursion `Σ_j [Div(S/2^j) + Comb(S/2^j) + Ex(K_j)] + Seq(S/P)` over block models |
//! | [`StandardLibrary`] | every function of the model language (these skeletons and [`crate::comm`]'s communication models), for components files |
//!
//! Models come back as [`crate::model::Expr`]s: they print, compose with other models
//! and evaluate once their machine parameters are known.

mod dc;
mod fox;
mod library;
mod matmul;

pub use dc::{exchange_words, DcError, Hypercube, LEVEL};
pub use fox::{double_block_bytes, FoxBlocks};
pub use library::{SkeletonLibrary, StandardLibrary};
pub use matmul::{names as matmul_names, Matmul};
