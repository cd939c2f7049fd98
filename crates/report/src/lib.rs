//! Pictures of what the other commands produce, as one self-contained HTML page (inline
//! SVG and CSS, no script, no network access) and standalone SVG files.
//!
//! One module per page kind, each turning typed results of the lower crates into a
//! [`page::Page`]:
//!
//! - [`models`]: fitted models against their measurements (`report --fit`).
//! - [`design`]: designs' composed models, their stages, bottleneck regions and
//!   crossovers over a parameter range (`report --term`).
//! - [`validation`]: measured against predicted, per configuration and point
//!   (`report --validate`).
//! - [`replay`]: a replayed trace's per-rank timeline and breakdown
//!   (`report --simulate`), read from the timeline `simulate --timeline` writes.
//!
//! [`plot`] draws (with `plotters`), [`page`] assembles HTML; the page modules know
//! nothing about SVG and the drawing knows nothing about models.
#![forbid(unsafe_code)]
#![cfg_attr(not(test), deny(clippy::print_stdout, clippy::print_stderr))]

pub mod design;
pub mod models;
pub mod page;
pub mod plot;
pub mod replay;
pub mod validation;

pub use page::{Figure, Page};

use perfcompose_core::Diagnostic;

/// Most figures one page draws; the rest of a big input is listed in tables (and the
/// page says so), which keeps a report of thousands of series small and quick to open.
pub const MAX_FIGURES: usize = 100;

/// Why a page could not be built.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad input, located in its file.
    #[error("{}", .0.render())]
    Input(Diagnostic),
    /// A saved validation run that cannot be read or analysed.
    #[error(transparent)]
    Runtime(#[from] perfcompose_runtime::Error),
    /// The drawing library failed (a bug, not bad input).
    #[error("drawing failed: {0}")]
    Plot(String),
}

impl From<Diagnostic> for Error {
    fn from(d: Diagnostic) -> Error {
        Error::Input(d)
    }
}
