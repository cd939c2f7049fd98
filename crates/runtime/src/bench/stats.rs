//! Summary statistics of repeated measurements — the core crate's (`median`, `cv`, the
//! distribution-free confidence interval of the median, and `quantiles`), re-exported
//! where the benchmarks use them.

pub use perfcompose_core::measure::stats::{
    cv, median, median_ci, quantiles, relative_ci_half_width, MIN_SAMPLES_FOR_CI, Z95,
};
