//! Empirical modelers: measurements → models with fit statistics.
