//! `perfcompose._native`: the compiled half of the Python package `perfcompose`.
//!
//! Glue only, like the command: every function reads its inputs with the same library
//! calls as the command's subcommand, runs the same library function, and returns the
//! same JSON the command prints with `--json`, as text (the Python half, in
//! `python/perfcompose/`, turns it into dicts with `json.loads`, normalises the
//! arguments and holds the docstrings). [`model`] is the one class: a model expression
//! evaluated over numpy arrays by the compiled batch evaluator.
//!
//! Every error of the input becomes `perfcompose.InputError` (a `ValueError`): the
//! located ones ([`Diagnostic`]) with their origin, line, column and the caret text.
#![forbid(unsafe_code)]

mod commands;
mod model;

use std::path::{Path, PathBuf};

use perfcompose_core::components::{seed_table1, Components, LoadOptions};
use perfcompose_core::compose::grid::Grid;
use perfcompose_core::Diagnostic;
use pyo3::prelude::*;

/// An error of the input, before it becomes a Python exception ([`Failure::into_py`]).
#[derive(Debug)]
pub(crate) enum Failure {
    /// Located in a source: rendered with a caret.
    Located(Diagnostic),
    /// Located by a reader with its own rendering (a trace): the text as it renders.
    Placed {
        text: String,
        source: String,
        line: Option<u64>,
        column: Option<usize>,
    },
    /// Anything else: its message and causes.
    Plain(String),
}

impl From<perfcompose_sim::trace::TraceError> for Failure {
    fn from(e: perfcompose_sim::trace::TraceError) -> Failure {
        Failure::Placed {
            text: format!("error: {e}"),
            line: (e.line > 0).then_some(e.line),
            column: (e.line > 0 && e.col > 0).then_some(e.col),
            source: e.file,
        }
    }
}

impl From<Diagnostic> for Failure {
    fn from(d: Diagnostic) -> Failure {
        Failure::Located(d)
    }
}

impl Failure {
    /// The message of an error and of each of its causes, as the command prints them.
    pub(crate) fn chain(e: &dyn std::error::Error) -> Failure {
        let mut text = e.to_string();
        let mut cause = e.source();
        while let Some(c) = cause {
            text.push_str(&format!("\n  caused by: {c}"));
            cause = c.source();
        }
        Failure::Plain(text)
    }

    /// `perfcompose.InputError(text, source, line, column)`: for a diagnostic about a
    /// whole input (no source text), the origin without a line and column.
    fn into_py(self, py: Python<'_>) -> PyErr {
        let (text, source, line, column) = match self {
            Failure::Located(d) if d.source.is_empty() => {
                let text = d.render().trim_end().to_string();
                (text, Some(d.origin), None, None)
            }
            Failure::Located(d) => {
                let (line, column) = d.line_col();
                let text = d.render().trim_end().to_string();
                (text, Some(d.origin), Some(line), Some(column))
            }
            Failure::Placed {
                text,
                source,
                line,
                column,
            } => (text, Some(source), line.map(|l| l as usize), column),
            Failure::Plain(text) => (format!("error: {text}"), None, None, None),
        };
        let made = py
            .import("perfcompose._errors")
            .and_then(|m| m.getattr("InputError"))
            .and_then(|class| class.call1((text, source, line, column)));
        match made {
            Ok(e) => PyErr::from_value(e),
            Err(e) => e,
        }
    }
}

/// Run `f` without the GIL (the libraries hold no Python object) and turn its failure
/// into `InputError`.
pub(crate) fn run<T: Send>(
    py: Python<'_>,
    f: impl FnOnce() -> Result<T, Failure> + Send,
) -> PyResult<T> {
    py.detach(f).map_err(|e| e.into_py(py))
}

/// The components: a file, a table (the TOML of a components file, as JSON text: the
/// Python half builds it from a dict), or the pattern-composition paper's Table 1 blocks.
/// A table's relative measurement paths are read from the working directory.
pub(crate) fn components(path: Option<&Path>, table: Option<&str>) -> Result<Components, Failure> {
    match (path, table) {
        (Some(p), _) => Ok(Components::load(p, LoadOptions::standard())?),
        (None, Some(json)) => {
            const ORIGIN: &str = "<components>";
            let value: toml::Value = serde_json::from_str(json)
                .map_err(|e| Failure::Plain(format!("{ORIGIN}: not a components table: {e}")))?;
            let text = toml::to_string(&value)
                .map_err(|e| Failure::Plain(format!("{ORIGIN}: not a components table: {e}")))?;
            Ok(Components::parse(
                ORIGIN,
                &text,
                Path::new("."),
                LoadOptions::standard(),
            )?)
        }
        (None, None) => Ok(seed_table1()),
    }
}

/// The grid of the command's `--at` texts, checked against the components' `[machine]`
/// table.
pub(crate) fn grid(at: &[String], components: &Components) -> Result<Grid, Failure> {
    let grid = Grid::parse(at)?;
    components
        .check_grid(grid.names())
        .map_err(|e| Failure::chain(&e))?;
    Ok(grid)
}

/// A path argument (`str` or `os.PathLike`).
pub(crate) type PathArg = Option<PathBuf>;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<model::Model>()?;
    m.add_function(wrap_pyfunction!(commands::predict, m)?)?;
    m.add_function(wrap_pyfunction!(commands::check, m)?)?;
    m.add_function(wrap_pyfunction!(commands::optimize, m)?)?;
    m.add_function(wrap_pyfunction!(commands::fit, m)?)?;
    m.add_function(wrap_pyfunction!(commands::simulate, m)?)?;
    m.add_function(wrap_pyfunction!(commands::modelers, m)?)?;
    Ok(())
}
