//! `DIR/measured.json`: what a recording measured (the time of every rank and of the whole
//! run), the speed its computation was written at, and the calls it did not cover.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::Error;

/// The version of `measured.json` this crate writes and reads.
pub const MEASURED_VERSION: u32 = 1;

/// `DIR/measured.json`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Measured {
    pub version: u32,
    /// The command recorded, word by word.
    pub command: Vec<String>,
    pub processes: u32,
    /// The hosts the ranks ran on, without repeats, in rank order.
    pub hosts: Vec<String>,
    /// The speed computation was written at (flop/s): a host of this speed replays each
    /// `compute` in the time it took.
    pub flops_per_s: f64,
    /// Where that speed came from.
    pub speed_source: String,
    /// Latest entry into MPI_Finalize less earliest return from MPI_Init (s): the span a
    /// replay of the trace predicts.
    pub measured_time_s: f64,
    /// The whole command, launcher start-up and MPI_Init included (s).
    pub run_wall_s: f64,
    pub ranks: Vec<RankTime>,
    /// Calls written to the trace, over all ranks.
    pub recorded_calls: u64,
    /// Calls the recorder saw but does not cover, over all ranks.
    pub uncovered_calls: u64,
    pub uncovered: Vec<Uncovered>,
    /// The index of the traces, relative to the directory.
    pub trace: String,
    /// The platform suggested for replaying the traces here, relative to the directory.
    pub platform: String,
    /// The hostfile placing rank `r` on host `r` of that platform.
    pub hostfile: String,
    pub notes: Vec<String>,
}

/// One rank's times.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RankTime {
    pub rank: u32,
    pub host: String,
    pub pid: u32,
    /// From MPI_Init's return to MPI_Finalize's entry (s).
    pub seconds: f64,
    /// Written as computation (s).
    pub compute_s: f64,
    /// Inside the calls written to the trace (s).
    pub recorded_call_s: f64,
    pub recorded_calls: u64,
    pub actions: u64,
}

/// A call the recorder does not cover.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Uncovered {
    pub call: String,
    pub count: u64,
    /// The ranks that made it.
    pub ranks: Vec<u32>,
}

impl Measured {
    /// Write as pretty JSON (newline-terminated).
    pub fn write(&self, path: &Path) -> Result<(), Error> {
        let text = serde_json::to_string_pretty(self).map_err(|e| Error::Write {
            path: path.to_path_buf(),
            source: e.into(),
        })?;
        std::fs::write(path, text + "\n").map_err(|source| Error::Write {
            path: path.to_path_buf(),
            source,
        })
    }

    /// Read what [`Measured::write`] wrote, checking its version.
    pub fn read(path: &Path) -> Result<Measured, Error> {
        let text = std::fs::read_to_string(path).map_err(|source| Error::Read {
            path: path.to_path_buf(),
            source,
        })?;
        #[derive(Deserialize)]
        struct Versioned {
            version: Option<u32>,
        }
        let malformed = |e: serde_json::Error| Error::Json {
            path: path.to_path_buf(),
            line: e.line(),
            column: e.column(),
            source: e,
        };
        let v: Versioned = serde_json::from_str(&text).map_err(malformed)?;
        if v.version != Some(MEASURED_VERSION) {
            return Err(Error::Version {
                path: path.to_path_buf(),
                found: v.version,
                expected: MEASURED_VERSION,
            });
        }
        serde_json::from_str(&text).map_err(malformed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Measured {
        Measured {
            version: MEASURED_VERSION,
            command: vec!["mpirun".into(), "./a".into()],
            processes: 1,
            hosts: vec!["vm".into()],
            flops_per_s: 1e9,
            speed_source: "given".into(),
            measured_time_s: 1.5,
            run_wall_s: 2.0,
            ranks: vec![RankTime {
                rank: 0,
                host: "vm".into(),
                pid: 7,
                seconds: 1.5,
                compute_s: 1.0,
                recorded_call_s: 0.5,
                recorded_calls: 3,
                actions: 9,
            }],
            recorded_calls: 3,
            uncovered_calls: 1,
            uncovered: vec![Uncovered {
                call: "MPI_Scan".into(),
                count: 1,
                ranks: vec![0],
            }],
            trace: "trace.txt".into(),
            platform: "platform.xml".into(),
            hostfile: "hostfile".into(),
            notes: vec![],
        }
    }

    #[test]
    fn written_then_read_back_and_other_versions_refused() {
        let dir = std::env::temp_dir().join(format!("pc-measured-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("measured.json");
        sample().write(&p).unwrap();
        assert_eq!(Measured::read(&p).unwrap(), sample());
        let text = std::fs::read_to_string(&p)
            .unwrap()
            .replace("\"version\": 1", "\"version\": 9");
        std::fs::write(&p, text).unwrap();
        let e = Measured::read(&p).unwrap_err().to_string();
        assert!(e.contains("version 9") && e.contains("version 1"), "{e}");
        std::fs::write(&p, "{\"version\": 1,\n \"command\": 3}").unwrap();
        let e = Measured::read(&p).unwrap_err().to_string();
        assert!(e.contains(":2:"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
