//! Communication models: Hockney, LogGP and collective algorithms, as model expressions.
//!
//! Seeds 002, 003 and 004 predict message-passing programs; this module gives them (and
//! any components file) the communication side of a model:
//!
//! | item | what it is |
//! |---|---|
//! | [`PointToPoint`] | one message under Hockney (`α + β·n`) or LogGP (`L, o, g, G`), with symbolic machine parameters |
//! | [`Algorithm`] | collective algorithms (broadcast, scatter, gather, reduce, allreduce, allgather, alltoall, reduce-scatter, barrier) and their cost formulas, for any process count |
//! | [`CommLibrary`] | the same as functions a model string can call: `bcast_binomial(p, bytes)`, `allreduce_ring(p, bytes)`, `hockney(bytes)`, `exchange(K)` |
//! | [`fit_hockney`] | calibration of `α`, `β` from ping-pong measurements |
//!
//! Every cost is an [`crate::model::Expr`], so it composes with computation models,
//! prints, parses back, evaluates, and stays symbolic in the machine parameters until a
//! point (`--at alpha=...`) or a calibration supplies them. `docs/communication.md` is the
//! user-facing reference.

mod calibrate;
mod collective;
mod library;
mod p2p;

pub use calibrate::{
    fit_hockney, fit_hockney_piecewise, fit_hockney_series, fit_line, CalibrationError, HockneyFit,
    HockneyPiece, LineFit, PiecewiseHockney, Timing, Weighting,
};
pub use collective::{
    lg_ceil, lg_floor, not_pow2, optimal_segment_size, optimal_segments, pow2_floor, Algorithm,
    Shape,
};
pub use library::{exchange, CommLibrary, FunctionDoc, LOGGP_SUFFIX};
pub use p2p::{names, PointToPoint};
