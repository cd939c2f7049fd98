//! Where a calibration lives and its file: this machine's path
//! ([`Calibration::default_path`]), and the JSON that [`Calibration::save`] writes and
//! [`Calibration::load`] reads, with its version ([`CALIBRATION_VERSION`]). Only this
//! module reads and writes calibration files; the CLI chooses the paths.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::calibration::Calibration;

/// The version of the calibration file this build writes and reads
/// ([`Calibration::load`]). A change to what a calibration stores, or to what a stored
/// figure means, raises it; a file of another version is refused with a request to
/// recalibrate.
pub const CALIBRATION_VERSION: u32 = 1;

impl Calibration {
    /// This machine's calibration: [`Calibration::path_in`] `$XDG_CONFIG_HOME`, else in
    /// `~/.config`; `None` without either.
    pub fn default_path() -> Option<PathBuf> {
        crate::host::config_home().map(|base| Calibration::path_in(&base))
    }

    /// Where this machine's calibration lives under the configuration directory
    /// `config`: `config/perfcompose/overhead-HOST.json` ([`crate::host::machine_file`]).
    pub fn path_in(config: &Path) -> PathBuf {
        crate::host::machine_file(config, "overhead")
    }

    /// Write the calibration to `path` as pretty JSON, creating its folder.
    pub fn save(&self, path: &Path) -> Result<(), FileError> {
        let fail = |e: std::io::Error| FileError::new(path, FileErrorKind::Write(e));
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(fail)?;
        }
        let text = serde_json::to_string_pretty(self).map_err(|e| fail(e.into()))?;
        std::fs::write(path, text + "\n").map_err(fail)
    }

    /// Read a calibration that [`Calibration::save`] wrote; `Ok(None)` when the file does
    /// not exist. A file of another [`CALIBRATION_VERSION`], or without one, is an error
    /// that says which version it has; a malformed one an error at its line and column.
    pub fn load(path: &Path) -> Result<Option<Calibration>, FileError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(FileError::new(path, FileErrorKind::Read(e))),
        };
        let malformed = |e: serde_json::Error| {
            FileError::new(
                path,
                FileErrorKind::Malformed {
                    line: e.line(),
                    column: e.column(),
                    message: e.to_string(),
                },
            )
        };
        // The version first: a file of another version need not parse as this one.
        let stored: Versioned = serde_json::from_str(&text).map_err(malformed)?;
        if stored.version != Some(CALIBRATION_VERSION) {
            return Err(FileError::new(path, FileErrorKind::Version(stored.version)));
        }
        serde_json::from_str(&text).map(Some).map_err(malformed)
    }
}

/// Just the version of a stored calibration, read before the rest.
#[derive(Deserialize)]
#[serde(expecting = "an overhead calibration (a JSON object)")]
struct Versioned {
    version: Option<u32>,
}

/// A calibration file that cannot be read or written.
#[derive(Debug)]
pub struct FileError {
    pub path: PathBuf,
    pub kind: FileErrorKind,
}

/// What is wrong with a calibration file ([`FileError`]).
#[derive(Debug)]
pub enum FileErrorKind {
    Read(std::io::Error),
    Write(std::io::Error),
    /// Not JSON, or not a calibration: where serde stopped.
    Malformed {
        line: usize,
        column: usize,
        message: String,
    },
    /// Another version than [`CALIBRATION_VERSION`] (`None`: none at all).
    Version(Option<u32>),
}

impl FileError {
    fn new(path: &Path, kind: FileErrorKind) -> FileError {
        FileError {
            path: path.to_path_buf(),
            kind,
        }
    }
}

impl std::fmt::Display for FileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let path = self.path.display();
        let again = "recalibrate with `perfcompose calibrate overhead`";
        match &self.kind {
            FileErrorKind::Read(_) => write!(f, "cannot read {path}"),
            FileErrorKind::Write(_) => write!(f, "cannot write {path}"),
            FileErrorKind::Malformed {
                line,
                column,
                message,
            } => write!(
                f,
                "{path}:{line}:{column}: not a perfcompose overhead calibration: {message}"
            ),
            FileErrorKind::Version(None) => write!(
                f,
                "{path}: an overhead calibration without a version (written by an older perfcompose); this one reads version {CALIBRATION_VERSION}: {again}"
            ),
            FileErrorKind::Version(Some(v)) if *v < CALIBRATION_VERSION => write!(
                f,
                "{path}: an overhead calibration of version {v}, older than this perfcompose reads (version {CALIBRATION_VERSION}): {again}"
            ),
            FileErrorKind::Version(Some(v)) => write!(
                f,
                "{path}: an overhead calibration of version {v}, unknown to this perfcompose (it reads version {CALIBRATION_VERSION}): {again}, or use the perfcompose that wrote it"
            ),
        }
    }
}

impl std::error::Error for FileError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            FileErrorKind::Read(e) | FileErrorKind::Write(e) => Some(e),
            FileErrorKind::Malformed { .. } | FileErrorKind::Version(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::overhead::calibration::{BlockCall, JobCost, JobPoint};
    use crate::overhead::fit::{job_busy_of, pool_busy_of};
    use crate::overhead::testing::{cal, fit_wake, handoff, wake_points};
    use crate::overhead::BLOCK_CALL_X;

    /// A fresh scratch folder for `name`.
    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("pc-overhead-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// A calibration with every part filled in.
    fn full() -> Calibration {
        let mut c = cal();
        let extras = [
            0.0, 0.0, 0.0, 1000.0, 1200.0, 2000.0, 3000.0, 3500.0, 4000.0,
        ];
        c.pipe_wake = fit_wake(wake_points(&extras), 0.0);
        c.pipe_handoff = handoff();
        c.mapreduce = vec![JobCost {
            reduce: "pairwise".into(),
            threads: 1,
            ns_per_job: 5000.0,
        }];
        let point = JobPoint {
            spin_ns: 1000.0,
            ideal_ns: 8000.0,
            job_ns: 17000.0,
        };
        c.mapreduce_busy = vec![job_busy_of("pairwise", 1, vec![point], &c.mapreduce)];
        c.pool_busy = vec![pool_busy_of(2, vec![(1000.0, 750.0, 1100.0)])];
        c.pinned = true;
        c.spin_us = 1000;
        c.block_call = BlockCall {
            x: BLOCK_CALL_X,
            ns: 40.0,
            min_ns: 37.0,
        };
        c
    }

    #[test]
    fn a_saved_calibration_loads_as_it_was_saved() {
        let dir = scratch("round-trip");
        let path = dir.join("sub").join("o.json");
        let c = full();
        assert!(!c.pipe_wake.knots.is_empty() && c.mapreduce_busy[0].cap_ns > 0.0);
        c.save(&path).unwrap();
        assert_eq!(Calibration::load(&path).unwrap(), Some(c));
        // Fitted values are stored as fitted when calibrating, not fitted again on loading.
        let mut json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(json["version"], CALIBRATION_VERSION);
        json["pipe_wake"]["knots"] = serde_json::json!([[0.0, 0.0], [1.0, 2.0]]);
        std::fs::write(&path, json.to_string()).unwrap();
        let back = Calibration::load(&path).unwrap().unwrap();
        assert_eq!(back.pipe_wake.knots, [(0.0, 0.0), (1.0, 2.0)]);
        // No file: no calibration.
        assert_eq!(Calibration::load(&dir.join("missing.json")).unwrap(), None);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_calibration_of_another_version_is_refused_with_a_request_to_recalibrate() {
        let dir = scratch("versions");
        let path = dir.join("o.json");
        let load = |json: &serde_json::Value| {
            std::fs::write(&path, serde_json::to_string_pretty(json).unwrap()).unwrap();
            Calibration::load(&path)
        };
        let mut json = serde_json::to_value(full()).unwrap();
        // None: written before calibrations had versions.
        json.as_object_mut().unwrap().remove("version");
        let err = load(&json).unwrap_err();
        assert!(matches!(err.kind, FileErrorKind::Version(None)), "{err:?}");
        let text = err.to_string();
        for needle in [
            "o.json: ",
            "without a version",
            &format!("reads version {CALIBRATION_VERSION}"),
            "recalibrate with `perfcompose calibrate overhead`",
        ] {
            assert!(text.contains(needle), "{needle}: {text}");
        }
        // The version comes first: a file of the shape of older builds (optional parts
        // missing, fitted lines this one does not store) is told its version, not its
        // shape.
        let old = serde_json::json!({
            "host": "h",
            "cores": 2,
            "patterns": [],
            "pipe_wake": {"points": [], "slope": 0.0, "cap_ns": 0.0},
            "pinned": true,
        });
        let err = load(&old).unwrap_err();
        assert!(matches!(err.kind, FileErrorKind::Version(None)), "{err:?}");
        // An older and an unknown (newer) version.
        for (v, says) in [
            (CALIBRATION_VERSION - 1, "older than this perfcompose reads"),
            (CALIBRATION_VERSION + 1, "unknown to this perfcompose"),
        ] {
            json["version"] = v.into();
            let err = load(&json).unwrap_err();
            assert!(
                matches!(err.kind, FileErrorKind::Version(Some(got)) if got == v),
                "{err:?}"
            );
            let text = err.to_string();
            for needle in [
                format!("version {v}, {says}"),
                format!("version {CALIBRATION_VERSION}"),
                "perfcompose calibrate overhead".to_string(),
            ] {
                assert!(text.contains(&needle), "{needle}: {text}");
            }
        }
        // The current version loads.
        json["version"] = CALIBRATION_VERSION.into();
        assert_eq!(load(&json).unwrap(), Some(full()));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_malformed_calibration_is_an_error_at_its_file_line_and_column() {
        let dir = scratch("malformed");
        let path = dir.join("o.json");
        let error = |text: &str| {
            std::fs::write(&path, text).unwrap();
            let err = Calibration::load(&path).unwrap_err();
            assert!(
                matches!(err.kind, FileErrorKind::Malformed { .. }),
                "{err:?}"
            );
            err.to_string()
        };
        let err = error("{ not json");
        assert!(
            err.contains("o.json:1:3: not a perfcompose overhead calibration"),
            "{err}"
        );
        let err = error("5");
        assert!(
            err.contains("an overhead calibration (a JSON object)"),
            "{err}"
        );
        // The current version with a field missing, one it does not know, one of the
        // wrong type (on line 2 of the file).
        let mut json = serde_json::to_value(full()).unwrap();
        json.as_object_mut().unwrap().remove("block_call");
        let err = error(&json.to_string());
        assert!(err.contains("missing field `block_call`"), "{err}");
        let mut json = serde_json::to_value(full()).unwrap();
        json["block_calls"] = 1.into();
        let err = error(&json.to_string());
        assert!(err.contains("unknown field `block_calls`"), "{err}");
        let text = format!("{{\"version\": {CALIBRATION_VERSION},\n  \"host\": 7}}");
        let err = error(&text);
        assert!(err.contains("o.json:2:"), "{err}");
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn an_unreadable_calibration_keeps_the_system_error_as_its_source() {
        // A folder where the file should be: it exists, and reading it fails.
        let dir = scratch("unreadable");
        let err = Calibration::load(&dir).unwrap_err();
        assert!(matches!(err.kind, FileErrorKind::Read(_)), "{err:?}");
        assert_eq!(err.to_string(), format!("cannot read {}", dir.display()));
        let source = std::error::Error::source(&err).expect("the io::Error");
        assert!(
            source.downcast_ref::<std::io::Error>().is_some(),
            "{source}"
        );
        // Through the runtime's error, as the CLI sees it.
        let err = crate::Error::from(err);
        assert!(matches!(err, crate::Error::Calibration(_)), "{err:?}");
        assert!(std::error::Error::source(&err).is_some());
        let _ = std::fs::remove_dir_all(dir);
    }
}
