//! The build (version and git commit, fixed by `build.rs`) and the provenance of the
//! results this run saves (`perfcompose_core::provenance`).

use std::path::Path;

use perfcompose_core::provenance::{Build, Provenance};

/// The git commit of this build (`unknown` outside a git checkout).
pub const COMMIT: &str = env!("PERFCOMPOSE_COMMIT");

/// `--version`: the package version and the commit.
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (",
    env!("PERFCOMPOSE_COMMIT"),
    ")"
);

/// This build.
pub fn build() -> Build {
    Build {
        version: env!("CARGO_PKG_VERSION").to_string(),
        commit: COMMIT.to_string(),
    }
}

/// The provenance of a result saved now by this run.
pub fn provenance() -> Provenance {
    Provenance::now(
        perfcompose_runtime::host::hostname(),
        perfcompose_runtime::host::available_cores(),
        build(),
        std::env::args().collect(),
    )
}

/// Record this run's provenance beside `result` (a file or a directory it saved).
pub fn record(result: &Path) -> anyhow::Result<()> {
    provenance().record_for(result)?;
    Ok(())
}
