//! Where a machine's network calibration is kept, and reading it back.
//!
//! `calibrate network` stores its result as JSON in
//! `$XDG_CONFIG_HOME/perfcompose/network-HOST.json` (or `~/.config/perfcompose/…`), next to
//! the overhead calibration, so that later distributed runs on the same machine find it.
//! The file carries [`NETWORK_VERSION`]; a file of another version is an error that says so.
//! Its times are in seconds (the `_s` of every field name), as SimGrid's are; a parameter
//! no network has (a negative or infinite time, edited in by hand) is refused at its line.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::calibration::{NetworkCalibration, NETWORK_VERSION};
use crate::error::Error;

impl NetworkCalibration {
    /// This machine's calibration file, if there is a configuration directory.
    pub fn default_path() -> Option<PathBuf> {
        perfcompose_runtime::host::config_home().map(|base| NetworkCalibration::path_in(&base))
    }

    /// `config/perfcompose/network-HOST.json` (`perfcompose_runtime::host::machine_file`).
    pub fn path_in(config: &Path) -> PathBuf {
        perfcompose_runtime::host::machine_file(config, "network")
    }

    /// Write as pretty JSON, creating the folder.
    pub fn save(&self, path: &Path) -> Result<(), Error> {
        let fail = |source: std::io::Error| Error::Write {
            path: path.to_path_buf(),
            source,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(fail)?;
        }
        let text = serde_json::to_string_pretty(self).map_err(|e| fail(e.into()))?;
        std::fs::write(path, text + "\n").map_err(fail)
    }

    /// Read a calibration [`NetworkCalibration::save`] wrote.
    pub fn load(path: &Path) -> Result<NetworkCalibration, Error> {
        let text = std::fs::read_to_string(path).map_err(|source| Error::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let malformed = |e: serde_json::Error| Error::Malformed {
            path: path.to_path_buf(),
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        };
        let stored: Versioned = serde_json::from_str(&text).map_err(malformed)?;
        if stored.version != Some(NETWORK_VERSION) {
            return Err(Error::Version {
                path: path.to_path_buf(),
                found: stored
                    .version
                    .map_or("no version".to_string(), |v| format!("version {v}")),
                expected: NETWORK_VERSION,
            });
        }
        let cal: NetworkCalibration = serde_json::from_str(&text).map_err(malformed)?;
        cal.check(path, &text)?;
        Ok(cal)
    }

    /// Refuse parameters no network has (a hand-edited file): times that are negative
    /// or not finite, a flop rate that is not positive. The bulk line's start-up alone may
    /// be negative (it holds above the eager limit only).
    fn check(&self, path: &Path, text: &str) -> Result<(), Error> {
        let times: [(&'static str, &'static str, f64); 8] = [
            ("hockney_eager", "alpha_s", self.hockney_eager.alpha_s),
            (
                "hockney_eager",
                "beta_s_per_byte",
                self.hockney_eager.beta_s_per_byte,
            ),
            ("hockney", "beta_s_per_byte", self.hockney.beta_s_per_byte),
            ("loggp", "L_s", self.loggp.latency_s),
            ("loggp", "o_s", self.loggp.o_s),
            ("loggp", "g_s", self.loggp.g_s),
            ("exchange", "l_s", self.exchange.l_s),
            ("exchange", "g_s_per_word", self.exchange.g_s_per_word),
        ];
        let bad = |table: &'static str, field: &'static str, value: f64, rule: &'static str| {
            let (line, column) = locate(text, table, field);
            Error::BadParameter {
                path: path.to_path_buf(),
                line,
                column,
                table,
                field,
                value,
                rule,
            }
        };
        for (table, field, value) in times {
            if !(value.is_finite() && value >= 0.0) {
                return Err(bad(table, field, value, "a finite time ≥ 0"));
            }
        }
        if !self.hockney.alpha_s.is_finite() {
            return Err(bad("hockney", "alpha_s", self.hockney.alpha_s, "finite"));
        }
        if !(self.flops_per_s.is_finite() && self.flops_per_s > 0.0) {
            return Err(bad(
                "",
                "flops_per_s",
                self.flops_per_s,
                "a finite rate > 0",
            ));
        }
        Ok(())
    }
}

/// The line and column of `"field"` inside the object `"table"` of a calibration's JSON
/// (the top level for an empty `table`), 1-based; `(1, 1)` when it cannot be found.
fn locate(text: &str, table: &str, field: &str) -> (usize, usize) {
    let from = if table.is_empty() {
        Some(0)
    } else {
        text.find(&format!("\"{table}\""))
    };
    let at = from.and_then(|f| text[f..].find(&format!("\"{field}\"")).map(|i| f + i));
    let Some(at) = at else {
        return (1, 1);
    };
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    (line, column)
}

/// Just the version, read before the rest.
#[derive(Deserialize)]
#[serde(expecting = "a network calibration (a JSON object)")]
struct Versioned {
    version: Option<u32>,
}
