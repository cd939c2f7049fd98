//! Inputs shared by `predict`, `check` (and later commands): the components file, the
//! term, the evaluation grid, and table/number formatting for people.

use std::path::{Path, PathBuf};

use anyhow::Context;
use comfy_table::{presets, Table};
use perfcompose_core::components::{seed_table1, Components, LoadOptions};
use perfcompose_core::compose::grid::Grid;
use perfcompose_core::model::format_significant;
use perfcompose_core::skeleton::StandardLibrary;
use perfcompose_core::term::{parse_term_with, Term};
use perfcompose_core::Diagnostic;

/// Significant digits of numbers shown to people.
pub const DIGITS: usize = 6;

/// How components files are read: the place where the function library (communication
/// models) and the fitter (`measurements = "file"`) get plugged in.
pub fn load_options() -> LoadOptions<'static> {
    LoadOptions::standard()
}

/// The components of `--components FILE`, or the pattern-composition paper's Table 1 blocks without one.
pub fn components(path: Option<&Path>) -> Result<Components, Diagnostic> {
    match path {
        Some(p) => Components::load(p, load_options()),
        None => Ok(seed_table1()),
    }
}

/// The term from the command line or from `--term-file`.
pub fn term(arg: Option<&str>, file: Option<&Path>) -> anyhow::Result<Term> {
    match (arg, file) {
        (Some(t), None) => Ok(parse_term_with("<term>", t, &StandardLibrary)?),
        (None, Some(f)) => {
            let text = std::fs::read_to_string(f)
                .with_context(|| format!("cannot read the term file {}", f.display()))?;
            Ok(parse_term_with(
                &f.display().to_string(),
                &text,
                &StandardLibrary,
            )?)
        }
        _ => anyhow::bail!("give the term as an argument or with --term-file FILE, not both"),
    }
}

/// The most cores `--cores` takes, in every command.
pub const MAX_CORES: u64 = 65536;

/// `--cores`: a whole number from 1 to [`MAX_CORES`], the same in every command.
pub fn cores() -> clap::builder::RangedU64ValueParser<u64> {
    clap::value_parser!(u64).range(1..=MAX_CORES)
}

pub fn grid(at: &[String]) -> Result<Grid, Diagnostic> {
    Grid::parse(at)
}

/// Refuse `--at NAME=...` for a name the components file's `[machine]` table already
/// fixed: the value would be silently ignored.
pub fn check_machine(components: &Components, grid: &Grid) -> anyhow::Result<()> {
    Ok(components.check_grid(grid.names())?)
}

/// A number for people.
/// `[k=v, ...] ` for the values of the other parameters a line is about ("" for none).
pub fn given(g: &std::collections::BTreeMap<String, f64>) -> String {
    if g.is_empty() {
        String::new()
    } else {
        let parts: Vec<String> = g.iter().map(|(k, v)| format!("{k}={}", num(*v))).collect();
        format!("[{}] ", parts.join(", "))
    }
}

/// A confidence level: a number strictly between 0 and 1.
pub fn level(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(v) if v > 0.0 && v < 1.0 => Ok(v),
        _ => Err(format!(
            "`{text}` is not a confidence level: give a number between 0 and 1, e.g. 0.95"
        )),
    }
}

pub fn num(v: f64) -> String {
    format_significant(v, DIGITS)
}

/// A table in the house style (plain ASCII, no wrapping: output is stable across
/// terminals, which the golden tests rely on).
pub fn table(header: Vec<String>) -> Table {
    let mut t = Table::new();
    t.load_preset(presets::ASCII_BORDERS_ONLY_CONDENSED);
    t.set_header(header);
    t
}

/// The overhead calibration `perfcompose calibrate overhead` stored for this machine (or
/// the file given), with its path; `None` when the machine was never calibrated. A file
/// named explicitly must exist.
pub fn calibration(
    explicit: Option<&Path>,
) -> anyhow::Result<Option<(perfcompose_runtime::overhead::Calibration, PathBuf)>> {
    Ok(perfcompose_runtime::overhead::find_calibration(explicit)?)
}
