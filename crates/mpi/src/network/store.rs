//! Where a machine's network calibration is kept, and reading it back.
//!
//! `calibrate network` stores its result as JSON in
//! `$XDG_CONFIG_HOME/perfcompose/network-HOST.json` (or `~/.config/perfcompose/…`), next to
//! the overhead calibration, so that later distributed runs on the same machine find it.
//! The file carries [`NETWORK_VERSION`]; a file of another version is an error that says so.

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
        serde_json::from_str(&text).map_err(malformed)
    }
}

/// Just the version, read before the rest.
#[derive(Deserialize)]
#[serde(expecting = "a network calibration (a JSON object)")]
struct Versioned {
    version: Option<u32>,
}
