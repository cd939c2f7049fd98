//! CUBE profile sets (placeholder while the reader is written).
use std::path::Path;

use super::{Experiment, ReadOptions};
use crate::diag::Diagnostic;

/// Options of the CUBE reader.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CubeOptions {}

pub fn read_dir(path: &Path, _opts: &ReadOptions) -> Result<Experiment, Diagnostic> {
    Err(Diagnostic::whole(path.display().to_string(), "cube: todo"))
}
