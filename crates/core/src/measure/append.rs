//! Adding one series' measurements to a file point by point, as they are taken
//! (`perfcompose measure -o FILE`): several blocks and several runs share a file, every
//! repetition is kept, and a run stopped part way keeps the points it finished.
//!
//! The file is Extra-P's text format, or JSON Lines when its name ends in `.jsonl` (an
//! existing file keeps its format); both are read back by [`super::read_path`]. After
//! each point the whole file is written again, to a temporary file renamed over the old
//! one, so the file on disk is always complete and readable. Repetitions measured again
//! at a point the file holds are added to that point.
//!
//! The readers want every series of a file at the same points and over the same
//! parameters (Extra-P's rule). So a series whose points would end up other than the
//! file's other series' is refused before anything is measured; and while a series that
//! shares the file with others still misses some of their points, its finished points
//! go to a file of their own beside it (`.blocks.txt.NAME.partial`, same format), which
//! is merged into the file and removed when the last point is done: a run stopped part
//! way leaves that file, readable by `perfcompose fit`, and the next run of the same
//! series starts from its points.

use std::path::{Path, PathBuf};

use super::builder::key_of;
use super::{read_path, Experiment, Format, SeriesKey, WriteError};
use crate::diag::Diagnostic;

/// The format measurements are appended in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AppendFormat {
    Text,
    JsonLines,
}

/// One series being added to a file ([`Appender::add`] after each point).
#[derive(Debug)]
pub struct Appender {
    path: PathBuf,
    format: AppendFormat,
    key: SeriesKey,
    /// Everything the file holds plus what was added (text); what was added (JSON Lines).
    exp: Experiment,
    /// Text only: the points every other series of the file has (`None`: no other series).
    others: Option<Vec<Vec<f64>>>,
}

impl Appender {
    /// Prepare to add series `key` over `parameters` at `points` to `path` (created if
    /// missing). Refuses, before anything is measured, a file in another format, with
    /// other parameters, or (text) whose other series are at other points.
    pub fn open(
        path: &Path,
        parameters: &[String],
        key: SeriesKey,
        points: &[Vec<f64>],
    ) -> Result<Appender, Diagnostic> {
        let origin = path.display().to_string();
        let exists = std::fs::metadata(path).is_ok_and(|m| m.len() > 0);
        let by_name = match path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            Some("jsonl" | "ndjson") => AppendFormat::JsonLines,
            _ => AppendFormat::Text,
        };
        let (format, existing) = if exists {
            let head = std::fs::read(path)
                .map(|b| b[..b.len().min(4096)].to_vec())
                .unwrap_or_default();
            let format = match Format::detect(path, &head) {
                Format::Text => AppendFormat::Text,
                Format::JsonLines => AppendFormat::JsonLines,
                other => {
                    return Err(Diagnostic::whole(
                        &origin,
                        format!("measurements are added to Extra-P text or JSON Lines files; this file is {other}"),
                    )
                    .with_hint("write to a new file, e.g. -o blocks.txt"))
                }
            };
            (format, Some(read_path(path)?))
        } else {
            (by_name, None)
        };
        let mut exp = match &existing {
            Some(e) => {
                if e.parameters != parameters {
                    return Err(Diagnostic::whole(
                        &origin,
                        format!(
                            "the file's measurements are over ({}), these are over ({})",
                            e.parameters.join(", "),
                            parameters.join(", ")
                        ),
                    )
                    .with_hint("the series of one file share its parameters, in the same order: give --at in the file's order, or write to another file"));
                }
                e.clone()
            }
            None => Experiment::new(parameters.to_vec()),
        };
        exp.source = None;
        // The finished points of an earlier run of this series that stopped part way.
        let partial = partial_path_of(path, &key);
        if partial.exists() {
            let earlier = read_path(&partial)?;
            if earlier.parameters == exp.parameters {
                for p in earlier.series.get(&key).into_iter().flatten() {
                    exp.push(key.clone(), p.coordinate.clone(), p.values.clone());
                }
            }
        }
        let mut others = None;
        {
            let other: Vec<&SeriesKey> = exp.series.keys().filter(|k| **k != key).collect();
            if let Some(first) = other.first() {
                let theirs = point_set(exp.series[*first].iter().map(|p| &p.coordinate));
                let mut mine = point_set(points.iter());
                if let Some(own) = exp.series.get(&key) {
                    mine.extend(point_set(own.iter().map(|p| &p.coordinate)));
                    mine.sort();
                    mine.dedup();
                }
                if mine != theirs {
                    return Err(Diagnostic::whole(
                        &origin,
                        format!(
                            "the series of a file share their points, and the file's series (e.g. `{}`) are at {} points other than this grid's",
                            first.callpath,
                            theirs.len()
                        ),
                    )
                    .with_hint("measure at the file's points, or write to another file"));
                }
                others = Some(
                    exp.series[*first]
                        .iter()
                        .map(|p| p.coordinate.clone())
                        .collect(),
                );
            }
        }
        Ok(Appender {
            path: path.to_path_buf(),
            format,
            key,
            exp,
            others,
        })
    }

    pub fn format(&self) -> AppendFormat {
        self.format
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where the finished points of a series that shares the file with others go until
    /// its last point is done (see the module's docs).
    pub fn partial_path(&self) -> PathBuf {
        let name = self.path.file_name().map_or_else(
            || "measurements".into(),
            |n| n.to_string_lossy().into_owned(),
        );
        let safe: String = self
            .key
            .callpath
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        self.path.with_file_name(format!(".{name}.{safe}.partial"))
    }

    /// Add the repetitions `values` measured at `coordinate`, and write them.
    pub fn add(&mut self, coordinate: Vec<f64>, values: Vec<f64>) -> Result<(), WriteError> {
        self.exp.push(self.key.clone(), coordinate, values);
        let partial = self.partial_path();
        if let Some(others) = &self.others {
            let mine = point_set(self.exp.series[&self.key].iter().map(|p| &p.coordinate));
            if mine != point_set(others.iter()) {
                let mut alone = Experiment::new(self.exp.parameters.clone());
                alone
                    .series
                    .insert(self.key.clone(), self.exp.series[&self.key].clone());
                return write_atomically(&partial, self.format, &alone);
            }
        }
        write_atomically(&self.path, self.format, &self.exp)?;
        if partial.exists() {
            std::fs::remove_file(&partial)
                .map_err(|e| WriteError(format!("cannot remove {}: {e}", partial.display())))?;
        }
        Ok(())
    }
}

/// [`Appender::partial_path`] of series `key` of `path`.
fn partial_path_of(path: &Path, key: &SeriesKey) -> PathBuf {
    let name = path.file_name().map_or_else(
        || "measurements".into(),
        |n| n.to_string_lossy().into_owned(),
    );
    let safe: String = key
        .callpath
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    path.with_file_name(format!(".{name}.{safe}.partial"))
}

/// Write `exp` to `path` in `format` through a temporary file renamed over it.
fn write_atomically(path: &Path, format: AppendFormat, exp: &Experiment) -> Result<(), WriteError> {
    let err = |e: std::io::Error| WriteError(format!("cannot write {}: {e}", path.display()));
    let text = match format {
        AppendFormat::Text => super::text::write(exp)?,
        AppendFormat::JsonLines => super::jsonl::write(exp)?,
    };
    let name = path.file_name().map_or_else(
        || "measurements".into(),
        |n| n.to_string_lossy().into_owned(),
    );
    let tmp = path.with_file_name(format!(".{name}.perfcompose-tmp"));
    std::fs::write(&tmp, text).map_err(err)?;
    std::fs::rename(&tmp, path).map_err(err)
}

/// The distinct points of `coords`, in a fixed order.
fn point_set<'a>(coords: impl Iterator<Item = &'a Vec<f64>>) -> Vec<Vec<u64>> {
    let mut v: Vec<Vec<u64>> = coords.map(|c| key_of(c)).collect();
    v.sort();
    v.dedup();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir() -> PathBuf {
        static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let d =
            std::env::temp_dir().join(format!("perfcompose-append-{}-{call}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn x() -> Vec<String> {
        vec!["x".to_string()]
    }

    fn key(name: &str) -> SeriesKey {
        SeriesKey::new(name, "time")
    }

    fn values(exp: &Experiment, name: &str) -> Vec<(f64, Vec<f64>)> {
        exp.series[&key(name)]
            .iter()
            .map(|p| (p.coordinate[0], p.values.clone()))
            .collect()
    }

    #[test]
    fn the_file_is_complete_after_every_point_and_runs_add_repetitions() {
        let path = dir().join("blocks.txt");
        let grid = vec![vec![1.0], vec![2.0]];
        let mut a = Appender::open(&path, &x(), key("sort"), &grid).unwrap();
        assert_eq!(a.format(), AppendFormat::Text);
        a.add(vec![1.0], vec![10.0, 11.0]).unwrap();
        // One point finished: the file holds it.
        assert_eq!(
            values(&read_path(&path).unwrap(), "sort"),
            [(1.0, vec![10.0, 11.0])]
        );
        a.add(vec![2.0], vec![20.0]).unwrap();
        // A second run adds repetitions to the same points.
        let mut b = Appender::open(&path, &x(), key("sort"), &grid).unwrap();
        b.add(vec![2.0], vec![21.0]).unwrap();
        assert_eq!(
            values(&read_path(&path).unwrap(), "sort"),
            [(1.0, vec![10.0, 11.0]), (2.0, vec![20.0, 21.0])]
        );
    }

    #[test]
    fn a_series_sharing_the_file_keeps_its_points_beside_it_until_complete() {
        for name in ["blocks.txt", "blocks.jsonl"] {
            let path = dir().join(name);
            let grid = vec![vec![1.0], vec![2.0]];
            let mut a = Appender::open(&path, &x(), key("sort"), &grid).unwrap();
            a.add(vec![1.0], vec![10.0]).unwrap();
            a.add(vec![2.0], vec![20.0]).unwrap();
            let mut c = Appender::open(&path, &x(), key("sum"), &grid).unwrap();
            c.add(vec![1.0], vec![5.0]).unwrap();
            // The file stays readable without the unfinished series; its point is kept.
            assert_eq!(read_path(&path).unwrap().series.len(), 1, "{name}");
            let partial = read_path(c.partial_path()).unwrap();
            assert_eq!(values(&partial, "sum"), [(1.0, vec![5.0])]);
            c.add(vec![2.0], vec![6.0]).unwrap();
            let exp = read_path(&path).unwrap();
            assert_eq!(values(&exp, "sum"), [(1.0, vec![5.0]), (2.0, vec![6.0])]);
            assert_eq!(values(&exp, "sort"), [(1.0, vec![10.0]), (2.0, vec![20.0])]);
            assert!(!c.partial_path().exists());
        }
    }

    #[test]
    fn a_run_stopped_part_way_is_taken_up_by_the_next() {
        let path = dir().join("blocks.txt");
        let grid = vec![vec![1.0], vec![2.0]];
        let mut a = Appender::open(&path, &x(), key("sort"), &grid).unwrap();
        a.add(vec![1.0], vec![10.0]).unwrap();
        a.add(vec![2.0], vec![20.0]).unwrap();
        let mut stopped = Appender::open(&path, &x(), key("sum"), &grid).unwrap();
        stopped.add(vec![1.0], vec![5.0]).unwrap();
        drop(stopped);
        // The next run measures only x = 2 and completes the series.
        let mut next = Appender::open(&path, &x(), key("sum"), &grid[1..]).unwrap();
        next.add(vec![2.0], vec![6.0]).unwrap();
        let exp = read_path(&path).unwrap();
        assert_eq!(values(&exp, "sum"), [(1.0, vec![5.0]), (2.0, vec![6.0])]);
        assert!(!next.partial_path().exists());
    }

    #[test]
    fn series_at_other_points_and_other_parameters_are_refused() {
        let path = dir().join("blocks.txt");
        let mut a = Appender::open(&path, &x(), key("sort"), &[vec![1.0], vec![2.0]]).unwrap();
        a.add(vec![1.0], vec![1.0]).unwrap();
        a.add(vec![2.0], vec![1.0]).unwrap();
        let e = Appender::open(&path, &x(), key("sum"), &[vec![4.0]]).unwrap_err();
        assert!(e.message.contains("share their points"), "{}", e.message);
        // The same series may grow by new points: it is the file's only one.
        Appender::open(&path, &x(), key("sort"), &[vec![4.0]]).unwrap();
        let e = Appender::open(&path, &["p".to_string()], key("halo"), &[vec![2.0]]).unwrap_err();
        assert!(
            e.message.contains("over (x), these are over (p)"),
            "{}",
            e.message
        );
        assert!(e.origin.ends_with("blocks.txt"));
    }

    #[test]
    fn json_lines_files_are_written_as_json_lines() {
        let path = dir().join("blocks.jsonl");
        let mut a = Appender::open(&path, &x(), key("sort"), &[vec![1.0]]).unwrap();
        assert_eq!(a.format(), AppendFormat::JsonLines);
        a.add(vec![1.0], vec![10.0, 11.0]).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 2);
        assert!(text.starts_with("{\"params\":{\"x\":1"), "{text}");
    }

    #[test]
    fn files_of_other_formats_or_broken_files_are_refused() {
        let d = dir();
        let csv = d.join("m.csv");
        std::fs::write(&csv, "x,time\n1,2\n").unwrap();
        let e = Appender::open(&csv, &x(), key("a"), &[vec![1.0]]).unwrap_err();
        assert!(e.message.contains("this file is csv"), "{}", e.message);
        let bad = d.join("bad.txt");
        std::fs::write(
            &bad,
            "PARAMETER x\nPOINTS ( 1 )\nREGION r\nMETRIC time\nDATA z\n",
        )
        .unwrap();
        let e = Appender::open(&bad, &x(), key("a"), &[vec![1.0]]).unwrap_err();
        assert_eq!(e.line_col().0, 5);
    }
}
