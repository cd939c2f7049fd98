//! perfcompose-core: the pure, single-threaded heart of perfcompose.
//!
//! | module | what lives there |
//! |---|---|
//! | [`model`] | performance models: expressions that simplify to Extra-P's PMNF, evaluate, print, parse, and know their asymptotics |
//! | [`term`] | the pattern term language (`pipe(tpool(4, qsort), inc)`): AST with spans, parser |
//! | [`components`] | the components file (TOML): a model or a measurements file per building block |
//! | [`compose`] | composition operators (seq, tpool, pipe, mapreduce, dc, matmul), crossovers, the relational laws |
//! | [`measure`] | measurements (coordinates → repetitions per callpath/metric) and their file formats |
//! | [`fit`] | empirical modelers (Extra-P compatible and our own), fit statistics |
//! | [`comm`] | communication models: Hockney, LogGP, collective algorithms |
//! | [`skeleton`] | analytic skeleton models: matrix multiplication (the matrix-multiplication paper), hypercube D&C (the divide-and-conquer paper) |
//! | [`diag`] | spans and located diagnostics shared by every parser |
//! | [`units`] | units of time: what files state, and the one unit (ns) models are composed in |
//!
//! No threads and no `unsafe` live here; the simulator, the runtime and the binary build
//! on top.
#![forbid(unsafe_code)]
#![cfg_attr(not(test), deny(clippy::print_stdout, clippy::print_stderr))]

/// `eprintln!` that cannot panic: a closed or full standard error (`2>/dev/full`, a reader
/// that went away) loses the message instead of ending the process with a panic. Every
/// crate of the workspace writes its diagnostics to stderr through this macro; clippy's
/// `print_stderr` lint keeps `eprintln!` out of non-test code.
#[macro_export]
macro_rules! stderr_line {
    ($($arg:tt)*) => {{
        use ::std::io::Write as _;
        let _ = ::std::writeln!(::std::io::stderr(), $($arg)*);
    }};
}

pub mod comm;
pub mod components;
pub mod compose;
pub mod diag;
pub mod fit;
pub mod measure;
pub mod model;
pub mod optimize;
pub mod provenance;
pub mod skeleton;
pub mod term;
pub mod uncertainty;
pub mod units;

pub use diag::{Diagnostic, Span};
pub use model::{Expr, Model, Monomial, Pmnf, Power, Q};
