//! A recording's directory: what `record` writes where, the environment that makes the
//! launched processes record, and the conversion of their logs into one trace set.
//!
//! ```text
//! DIR/trace.txt          the index (one file per rank, relative to DIR)
//! DIR/trace_R.txt        rank R's actions in SimGrid's time-independent form
//! DIR/measured.json      the measured times, the speed, the calls not covered
//! DIR/platform.xml       a platform of this machine at that speed
//! DIR/hostfile           rank r on host r of it
//! DIR/raw/               while recording: the library and one log per process
//! ```

use std::ffi::OsString;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use crate::convert::{convert_rank, read_process, Process, RankSummary};
use crate::error::{Error, SetError};

/// The environment variable that tells the library where to write its logs.
pub const DIR_VARIABLE: &str = "PERFCOMPOSE_RECORD_DIR";

/// The trace index's stem: `trace.txt` and `trace_R.txt`.
pub const TRACE_STEM: &str = "trace";

/// A recording's directory.
#[derive(Clone, Debug)]
pub struct RecordDir {
    root: PathBuf,
}

/// Why a directory cannot hold a recording.
#[derive(Debug, thiserror::Error)]
pub enum DirError {
    #[error("cannot use {} as the recording's directory", dir.display())]
    Unwritable {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the recording's directory {} has a space, tab, newline or ':' in its path, which LD_PRELOAD cannot carry; choose another -o", dir.display())]
    UnsafePath { dir: PathBuf },
}

/// The outcome of converting a recording's logs.
#[derive(Clone, Debug)]
pub struct Conversion {
    /// One per rank, in rank order.
    pub processes: Vec<Process>,
    pub ranks: Vec<RankSummary>,
    pub index: PathBuf,
}

impl RecordDir {
    /// Make `dir` (absolute) ready for a recording: created, writable, with the outputs and
    /// logs of an earlier recording removed.
    pub fn prepare(dir: &Path) -> Result<RecordDir, DirError> {
        let fail = |source| DirError::Unwritable {
            dir: dir.to_path_buf(),
            source,
        };
        std::fs::create_dir_all(dir).map_err(fail)?;
        let root = std::fs::canonicalize(dir).map_err(fail)?;
        if root.to_string_lossy().contains([' ', '\t', '\n', ':']) {
            return Err(DirError::UnsafePath { dir: root });
        }
        let d = RecordDir { root };
        d.clear().map_err(fail)?;
        std::fs::create_dir_all(d.raw_dir()).map_err(fail)?;
        // Fail now, not after the program ran.
        let probe = d.raw_dir().join(".writable");
        File::create(&probe).map_err(fail)?;
        std::fs::remove_file(&probe).map_err(fail)?;
        Ok(d)
    }

    /// The directory of an existing recording.
    pub fn open(dir: &Path) -> RecordDir {
        RecordDir {
            root: dir.to_path_buf(),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }
    pub fn raw_dir(&self) -> PathBuf {
        self.root.join("raw")
    }
    pub fn index(&self) -> PathBuf {
        self.root.join(format!("{TRACE_STEM}.txt"))
    }
    pub fn rank_trace(&self, rank: u32) -> PathBuf {
        self.root.join(format!("{TRACE_STEM}_{rank}.txt"))
    }
    pub fn measured(&self) -> PathBuf {
        self.root.join("measured.json")
    }
    pub fn platform(&self) -> PathBuf {
        self.root.join("platform.xml")
    }
    pub fn hostfile(&self) -> PathBuf {
        self.root.join("hostfile")
    }
    pub fn library(&self) -> PathBuf {
        self.raw_dir().join("libperfcompose-record.so")
    }

    /// Remove what an earlier recording left here (only the names this module writes).
    fn clear(&self) -> std::io::Result<()> {
        for p in [
            self.index(),
            self.measured(),
            self.platform(),
            self.hostfile(),
        ] {
            remove_if_present(&p)?;
        }
        for entry in std::fs::read_dir(&self.root)? {
            let name = entry?.file_name();
            let name = name.to_string_lossy();
            if let Some(rest) = name
                .strip_prefix(&format!("{TRACE_STEM}_"))
                .and_then(|r| r.strip_suffix(".txt"))
            {
                if !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()) {
                    remove_if_present(&self.root.join(&*name))?;
                }
            }
        }
        match std::fs::remove_dir_all(self.raw_dir()) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }

    /// Write the interposition library into the raw directory; returns its path.
    pub fn install_library(&self, bytes: &[u8]) -> Result<PathBuf, Error> {
        let path = self.library();
        std::fs::write(&path, bytes).map_err(|source| Error::Write {
            path: path.clone(),
            source,
        })?;
        Ok(path)
    }

    /// The variables to set for the launched command: the library preloaded (before any
    /// already in `LD_PRELOAD`), the log directory, and Open MPI told to pass both on to
    /// processes it starts on other hosts.
    pub fn environment(&self, library: &Path) -> Vec<(String, OsString)> {
        let mut preload = library.as_os_str().to_owned();
        if let Some(old) = std::env::var_os("LD_PRELOAD").filter(|v| !v.is_empty()) {
            preload.push(":");
            preload.push(old);
        }
        let forward = "LD_PRELOAD;PERFCOMPOSE_RECORD_DIR";
        let env_list = match std::env::var("OMPI_MCA_mca_base_env_list") {
            Ok(old) if !old.is_empty() => format!("{old};{forward}"),
            _ => forward.to_string(),
        };
        vec![
            ("LD_PRELOAD".to_string(), preload),
            (DIR_VARIABLE.to_string(), self.raw_dir().into_os_string()),
            ("OMPI_MCA_mca_base_env_list".to_string(), env_list.into()),
        ]
    }

    /// The logs the processes left, one per rank, checked to form one MPI job.
    pub fn processes(&self) -> Result<Vec<Process>, Error> {
        let raw = self.raw_dir();
        let mut logs = Vec::new();
        let entries = std::fs::read_dir(&raw).map_err(|source| Error::Read {
            path: raw.clone(),
            source,
        })?;
        for entry in entries {
            let entry = entry.map_err(|source| Error::Read {
                path: raw.clone(),
                source,
            })?;
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "bin") {
                logs.push(read_process(&path)?);
            }
        }
        one_job(logs, &raw)
    }

    /// Convert every rank's log into its trace file and write the index, computation at
    /// `flops_per_s`.
    pub fn convert(&self, flops_per_s: f64) -> Result<Conversion, Error> {
        let processes = self.processes()?;
        let mut ranks = Vec::with_capacity(processes.len());
        for p in &processes {
            let out = self.rank_trace(p.rank);
            let file = File::create(&out).map_err(|source| Error::Write {
                path: out.clone(),
                source,
            })?;
            let (summary, _) = convert_rank(&p.path, flops_per_s, BufWriter::new(file))?;
            if !summary.finished {
                return Err(SetError::Unfinished {
                    rank: p.rank,
                    path: p.path.clone(),
                }
                .into());
            }
            ranks.push(summary);
        }
        let index = self.index();
        let text: String = processes
            .iter()
            .map(|p| format!("{TRACE_STEM}_{}.txt\n", p.rank))
            .collect();
        std::fs::write(&index, text).map_err(|source| Error::Write {
            path: index.clone(),
            source,
        })?;
        Ok(Conversion {
            processes,
            ranks,
            index,
        })
    }

    /// Remove the raw logs and the library once the traces are written.
    pub fn remove_raw(&self) -> std::io::Result<()> {
        std::fs::remove_dir_all(self.raw_dir())
    }
}

fn remove_if_present(p: &Path) -> std::io::Result<()> {
    match std::fs::remove_file(p) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// The processes of one MPI job, in rank order: each rank once, all of them.
fn one_job(mut logs: Vec<Process>, dir: &Path) -> Result<Vec<Process>, Error> {
    let Some(first) = logs.first() else {
        return Err(SetError::NoProcesses {
            dir: dir.to_path_buf(),
        }
        .into());
    };
    let size = first.size;
    if let Some(other) = logs.iter().find(|p| p.size != size) {
        return Err(SetError::SizeMismatch {
            first: size,
            second: other.size,
        }
        .into());
    }
    logs.sort_by(|a, b| a.rank.cmp(&b.rank).then_with(|| a.path.cmp(&b.path)));
    for w in logs.windows(2) {
        if w[0].rank == w[1].rank {
            return Err(SetError::DuplicateRank {
                rank: w[0].rank,
                first: w[0].path.clone(),
                second: w[1].path.clone(),
            }
            .into());
        }
    }
    if logs.len() != size as usize {
        let have: std::collections::HashSet<u32> = logs.iter().map(|p| p.rank).collect();
        let missing = (0..size).filter(|r| !have.contains(r)).collect();
        return Err(SetError::MissingRanks { missing, size }.into());
    }
    Ok(logs)
}
