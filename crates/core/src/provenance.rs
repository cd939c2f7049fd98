//! Where a saved result came from: the host, its core count and load when the result was
//! made, the build (version and commit) and the command line, so that a figure in a
//! table can be traced to how it was made.
//!
//! Every command that saves a result writes its [`Provenance`] beside it, in one place
//! and one shape: a directory gets `DIR/provenance.json`; a file gets
//! `FILE.provenance.jsonl`, one line per run that wrote to it (`perfcompose measure` adds
//! to a file run after run). The schema is in `docs/formats.md#provenance`.
//!
//! The build's commit is fixed when the binary is built (`perfcompose`'s build script
//! asks git); a build from a source tarball without `.git` says `unknown`.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Version of the provenance record's shape (fields are only ever added).
pub const SCHEMA: u32 = 1;

/// What built the binary that made a result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Build {
    /// The package version, e.g. `0.1.0`.
    pub version: String,
    /// The git commit it was built from, or `unknown` (a build outside a git checkout,
    /// e.g. from a source tarball).
    pub commit: String,
}

/// How and where a saved result was made.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    pub schema: u32,
    /// The machine's name.
    pub host: String,
    /// Cores the process was granted.
    pub cores: usize,
    /// The 1, 5 and 15 minute load averages when the result was saved (`None` where
    /// the system does not say).
    pub load_average: Option<[f64; 3]>,
    pub build: Build,
    /// The command line, program name first.
    pub command_line: Vec<String>,
    /// When the result was saved: seconds since the Unix epoch (UTC).
    pub saved_at: u64,
}

impl Provenance {
    /// The provenance of a result saved now on `host` with `cores` cores, by `build`
    /// run as `command_line`.
    pub fn now(host: String, cores: usize, build: Build, command_line: Vec<String>) -> Provenance {
        Provenance {
            schema: SCHEMA,
            host,
            cores,
            load_average: load_average(),
            build,
            command_line,
            saved_at: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
        }
    }

    /// Where the provenance of `result` goes: `DIR/provenance.json` for a directory,
    /// `FILE.provenance.jsonl` beside a file.
    pub fn path_for(result: &Path) -> PathBuf {
        if result.is_dir() {
            result.join("provenance.json")
        } else {
            let mut name = result.file_name().unwrap_or_default().to_os_string();
            name.push(".provenance.jsonl");
            result.with_file_name(name)
        }
    }

    /// Record this provenance for `result` (a file or a directory that exists): a
    /// directory's file is written anew, a file's gets one more line. Returns the path
    /// written.
    pub fn record_for(&self, result: &Path) -> Result<PathBuf, ProvenanceError> {
        let path = Provenance::path_for(result);
        let err = |source: std::io::Error| ProvenanceError {
            path: path.clone(),
            source,
        };
        if result.is_dir() {
            let text = serde_json::to_string_pretty(self).map_err(std::io::Error::other);
            std::fs::write(&path, text.map_err(err)? + "\n").map_err(err)?;
        } else {
            let line = serde_json::to_string(self).map_err(std::io::Error::other);
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .map_err(err)?;
            writeln!(f, "{}", line.map_err(err)?).map_err(err)?;
        }
        Ok(path)
    }
}

/// A provenance file that could not be written.
#[derive(Debug, thiserror::Error)]
#[error("cannot write the provenance file {}", path.display())]
pub struct ProvenanceError {
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

/// The 1, 5 and 15 minute load averages (`/proc/loadavg`); `None` elsewhere.
pub fn load_average() -> Option<[f64; 3]> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    let mut it = text.split_whitespace().map(str::parse::<f64>);
    Some([it.next()?.ok()?, it.next()?.ok()?, it.next()?.ok()?])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Provenance {
        Provenance::now(
            "node1".into(),
            2,
            Build {
                version: "0.1.0".into(),
                commit: "unknown".into(),
            },
            vec!["perfcompose".into(), "measure".into()],
        )
    }

    #[test]
    fn files_get_a_line_per_run_and_directories_a_file() {
        let d = std::env::temp_dir().join(format!("perfcompose-provenance-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let file = d.join("blocks.txt");
        std::fs::write(&file, "").unwrap();
        let p = sample();
        assert_eq!(
            p.record_for(&file).unwrap(),
            d.join("blocks.txt.provenance.jsonl")
        );
        p.record_for(&file).unwrap();
        let text = std::fs::read_to_string(d.join("blocks.txt.provenance.jsonl")).unwrap();
        assert_eq!(text.lines().count(), 2);
        let back: Provenance = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        assert_eq!(back, p);
        assert_eq!(p.record_for(&d).unwrap(), d.join("provenance.json"));
        let back: Provenance =
            serde_json::from_str(&std::fs::read_to_string(d.join("provenance.json")).unwrap())
                .unwrap();
        assert_eq!(back.command_line, ["perfcompose", "measure"]);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn the_load_average_is_read_where_the_system_says_it() {
        if Path::new("/proc/loadavg").exists() {
            let l = load_average().unwrap();
            assert!(l.iter().all(|v| v.is_finite() && *v >= 0.0), "{l:?}");
        }
    }
}
