//! A calibration added to a prediction (`perfcompose predict --overhead`, and
//! `overhead=True` from Python): which calibration file is read, and the overhead of the
//! design in it, for a design the runtime runs.
//!
//! The checks say why an overhead cannot be added: the built-in components are another
//! machine's measurements, a design with a symbolic thread count or a `dc` is not one the
//! runtime runs, a block that is not one of the runtime's kernels was never calibrated,
//! and a machine without a calibration has none to add.

use std::path::{Path, PathBuf};

use perfcompose_core::compose::predict::Overhead;
use perfcompose_core::measure::Measure;
use perfcompose_core::term::Term;
use perfcompose_core::Diagnostic;

use super::{Calibration, FileError};
use crate::plan::plan_from_term;
use crate::Registry;

/// The overhead added to a prediction, and the calibration it comes from.
#[derive(Clone, Debug)]
pub struct Added {
    pub overhead: Overhead,
    /// The calibration file, and the host it was calibrated on.
    pub path: PathBuf,
    pub host: String,
}

/// A term the runtime does not run, located in the term by `cause`.
#[derive(Debug, thiserror::Error)]
#[error("--overhead: `{term}` is not a design the runtime runs, so it has no calibrated overhead")]
pub struct NotADesign {
    pub term: String,
    #[source]
    pub cause: Diagnostic,
}

/// Why no overhead can be added (messages name the command's flags).
#[derive(Debug, thiserror::Error)]
pub enum OverheadError {
    #[error("--overhead: the built-in components are the pattern-composition paper's Table 1 blocks, measured on its authors' machine, which this machine's overhead does not belong to; give this machine's block models with --components FILE")]
    BuiltInComponents,
    #[error(transparent)]
    NotADesign(Box<NotADesign>),
    #[error("--overhead: `{0}` is not one of the runtime's kernels, whose designs the overhead calibration is for (`perfcompose bench kernels --list`)")]
    NotAKernel(String),
    #[error("--overhead: no overhead calibration at {0} (make one with `perfcompose calibrate overhead`, or give one with --calibration FILE)")]
    NotCalibrated(String),
    #[error("no overhead calibration at {} (make one with `perfcompose calibrate overhead`)", .0.display())]
    NoFile(PathBuf),
    #[error(transparent)]
    File(#[from] FileError),
}

/// The calibration in `explicit`, or this machine's ([`Calibration::default_path`]), with
/// its path; `None` when this machine was never calibrated. A file named explicitly must
/// exist.
pub fn find_calibration(
    explicit: Option<&Path>,
) -> Result<Option<(Calibration, PathBuf)>, OverheadError> {
    let Some(path) = explicit
        .map(Path::to_path_buf)
        .or_else(Calibration::default_path)
    else {
        return Ok(None);
    };
    match Calibration::load(&path)? {
        Some(c) => Ok(Some((c, path))),
        None if explicit.is_some() => Err(OverheadError::NoFile(path)),
        None => Ok(None),
    }
}

/// The calibrated runtime overhead of the design, from `explicit` or this machine's
/// stored calibration, for a design that perfcompose's runtime runs: components from a
/// file (`with_components`; the built-in ones are the pattern-composition paper's
/// measurements on its own machine), numeric thread counts, no `dc`, and every block one
/// of its kernels (whose models are in nanoseconds, the calibration's unit).
pub fn overhead_for(
    term: &Term,
    with_components: bool,
    explicit: Option<&Path>,
) -> Result<Added, OverheadError> {
    if !with_components {
        return Err(OverheadError::BuiltInComponents);
    }
    let plan = plan_from_term(term).map_err(|cause| {
        OverheadError::NotADesign(Box::new(NotADesign {
            term: term.root.to_string(),
            cause,
        }))
    })?;
    let kernels = Registry::builtin();
    if let Some(n) = term
        .root
        .component_refs()
        .into_iter()
        .find(|n| kernels.get(&n.name).is_err())
    {
        return Err(OverheadError::NotAKernel(n.name.clone()));
    }
    let Some((cal, path)) = find_calibration(explicit)? else {
        let at = Calibration::default_path().map_or_else(
            || "this machine's configuration directory".to_string(),
            |p| p.display().to_string(),
        );
        return Err(OverheadError::NotCalibrated(at));
    };
    let overhead = cal.for_statistic(Measure::default()).overhead(
        &plan,
        &format!("calibrated on {} in {}", cal.host, path.display()),
    );
    Ok(Added {
        overhead,
        path,
        host: cal.host,
    })
}
