//! Adding one series' measurements to a file point by point, as they are taken
//! (`perfcompose measure -o FILE`): several blocks and several runs share a file, every
//! repetition is kept, and a run stopped part way keeps the points it finished.
//!
//! The file is Extra-P's text format, or JSON Lines when its name ends in `.jsonl` (an
//! existing file keeps its format); both are read back by [`super::read_experiments`].
//! After each point the whole file is written again, to a temporary file renamed over the
//! old one, so the file on disk is always complete and readable. Repetitions measured
//! again at a point the file holds are added to that point.
//!
//! A file holds one experiment per set of parameters (`docs/formats.md`: a section each
//! in the text format): a series over parameters the file does not have yet starts a new
//! experiment at the end of the file. A series is over one set of parameters: the same
//! callpath and metric over other parameters is refused before anything is measured, and
//! so are the same parameters in another order.
//!
//! In JSON Lines every line names its own point, so a series goes to any points, whatever
//! the other series' (one block's grid grows alone). In Extra-P's text format the series
//! of a section share its `POINTS`: while a series that shares its experiment with others
//! still misses some of their points, its finished points go to a file of their own
//! beside it (`.blocks.txt.NAME.partial`, same format), which is merged into the file and
//! removed when the last point is done: a run stopped part way leaves that file,
//! readable by `perfcompose fit`, and the next run of the same series starts from its
//! points. A series whose points would end up other than its section's other series'
//! cannot be written as text: the file's measurements are converted to JSON Lines beside
//! it (`blocks.jsonl`, [`Appender::converted_from`] says so) and the series goes there;
//! when that file exists already, it is refused before anything is measured.

use std::path::{Path, PathBuf};

use super::builder::key_of;
use super::{read_experiments, read_path, same_names, Experiment, Format, SeriesKey, WriteError};
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
    /// Every experiment of the file (one per set of parameters), with what was added.
    sets: Vec<Experiment>,
    /// The series' experiment in `sets`.
    set: usize,
    /// The points every other series of its experiment has (`None`: no other series,
    /// or a JSON Lines file, where a series may be at any points).
    others: Option<Vec<Vec<f64>>>,
    /// The text file whose measurements were converted into `path` (JSON Lines) to hold
    /// this series' points.
    converted_from: Option<PathBuf>,
}

impl Appender {
    /// Prepare to add series `key` over `parameters` at `points` to `path` (created if
    /// missing). Refuses, before anything is measured, a file in another format, one
    /// that holds the series over other parameters (or these in another order), and one
    /// whose other series over these parameters are at other points; the errors point
    /// into the file.
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
        let (format, mut sets) = if exists {
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
            (format, read_experiments(path)?)
        } else {
            (by_name, Vec::new())
        };
        if format == AppendFormat::Text && parameters.len() > super::text::MAX_PARAMETERS {
            return Err(Diagnostic::whole(
                &origin,
                format!(
                    "Extra-P's text format holds at most {} parameters, these measurements are over {}",
                    super::text::MAX_PARAMETERS,
                    parameters.len()
                ),
            )
            .with_hint("write JSON Lines: a file name ending in .jsonl"));
        }
        let over = |p: &[String]| format!("({})", p.join(", "));
        if let Some(e) = sets
            .iter()
            .find(|e| e.parameters != parameters && e.series.contains_key(&key))
        {
            return Err(e
                .diagnostic(
                    e.series_span(&key),
                    format!(
                        "`{key}` is in the file over {}, these measurements are over {}",
                        over(&e.parameters),
                        over(parameters)
                    ),
                )
                .with_hint(format!(
                    "a series is measured over one set of parameters: measure `{}` over {} (--at in that order), give this block another --name, or write to another file",
                    key.callpath,
                    over(&e.parameters)
                )));
        }
        let set = match sets.iter().position(|e| e.parameters == parameters) {
            Some(i) => i,
            None => {
                if let Some(e) = sets.iter().find(|e| same_names(&e.parameters, parameters)) {
                    return Err(e
                        .diagnostic(
                            e.span(),
                            format!(
                                "the file's measurements are over {}, these are over {}",
                                over(&e.parameters),
                                over(parameters)
                            ),
                        )
                        .with_hint("the series over the same parameters share them in the same order: give --at in the file's order"));
                }
                // Parameters the file does not have: a new experiment at its end.
                sets.push(Experiment::new(parameters.to_vec()));
                sets.len() - 1
            }
        };
        // The finished points of an earlier run of this series that stopped part way
        // (unless the file holds the series: then that run finished, and was stopped
        // before it removed the partial file).
        let partial = partial_path_of(path, &key);
        if partial.exists() && !sets[set].series.contains_key(&key) {
            let earlier = read_path(&partial)?;
            if earlier.parameters == parameters {
                for p in earlier.series.get(&key).into_iter().flatten() {
                    sets[set].push(key.clone(), p.coordinate.clone(), p.values.clone());
                }
            }
        }
        let exp = &sets[set];
        let mut others = None;
        let mut converted_from = None;
        let mut path = path.to_path_buf();
        let mut format = format;
        let first_other = exp.series.keys().find(|k| **k != key);
        if let (AppendFormat::Text, Some(first)) = (format, first_other) {
            let theirs = point_set(exp.series[first].iter().map(|p| &p.coordinate));
            let mut mine = point_set(points.iter());
            if let Some(own) = exp.series.get(&key) {
                mine.extend(point_set(own.iter().map(|p| &p.coordinate)));
                mine.sort();
                mine.dedup();
            }
            if mine == theirs {
                others = Some(
                    exp.series[first]
                        .iter()
                        .map(|p| p.coordinate.clone())
                        .collect(),
                );
            } else {
                // Extra-P's text format cannot hold it: the file's measurements go to
                // JSON Lines beside it, which holds any points per series.
                let jsonl = path.with_extension("jsonl");
                if jsonl.exists() {
                    return Err(exp
                        .diagnostic(
                            exp.series_span(first),
                            format!(
                                "Extra-P's text format keeps the series over {} at the same points, and the file's (e.g. `{}`) are at {} points other than this grid's",
                                over(&exp.parameters),
                                first.callpath,
                                theirs.len()
                            ),
                        )
                        .with_hint(format!(
                            "JSON Lines holds any points per block, and {} exists: measure into it (-o {})",
                            jsonl.display(),
                            jsonl.display()
                        )));
                }
                for e in &mut sets {
                    e.source = None;
                }
                write_atomically(&jsonl, AppendFormat::JsonLines, &sets)
                    .map_err(|e| Diagnostic::whole(jsonl.display().to_string(), e.to_string()))?;
                // Its points are in the converted file now.
                if partial.exists() {
                    let _ = std::fs::remove_file(&partial);
                }
                converted_from = Some(path);
                path = jsonl;
                format = AppendFormat::JsonLines;
            }
        }
        for e in &mut sets {
            e.source = None;
        }
        Ok(Appender {
            path,
            format,
            key,
            sets,
            set,
            others,
            converted_from,
        })
    }

    /// The Extra-P text file whose measurements were converted into [`Self::path`] (JSON
    /// Lines beside it) because its format cannot hold this series' points.
    pub fn converted_from(&self) -> Option<&Path> {
        self.converted_from.as_deref()
    }

    pub fn format(&self) -> AppendFormat {
        self.format
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where the finished points of a series that shares its experiment with others go
    /// until its last point is done (see the module's docs).
    pub fn partial_path(&self) -> PathBuf {
        partial_path_of(&self.path, &self.key)
    }

    /// Add the repetitions `values` measured at `coordinate`, and write them.
    pub fn add(&mut self, coordinate: Vec<f64>, values: Vec<f64>) -> Result<(), WriteError> {
        let exp = &mut self.sets[self.set];
        exp.push(self.key.clone(), coordinate, values);
        let partial = self.partial_path();
        let exp = &self.sets[self.set];
        if let Some(others) = &self.others {
            let mine = point_set(exp.series[&self.key].iter().map(|p| &p.coordinate));
            if mine != point_set(others.iter()) {
                let mut alone = Experiment::new(exp.parameters.clone());
                alone
                    .series
                    .insert(self.key.clone(), exp.series[&self.key].clone());
                return write_atomically(&partial, self.format, &[alone]);
            }
        }
        write_atomically(&self.path, self.format, &self.sets)?;
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

/// Write `sets` to `path` in `format` through a temporary file renamed over it.
fn write_atomically(
    path: &Path,
    format: AppendFormat,
    sets: &[Experiment],
) -> Result<(), WriteError> {
    let err = |e: std::io::Error| WriteError(format!("cannot write {}: {e}", path.display()));
    let text = match format {
        AppendFormat::Text => super::text::write_all(sets)?,
        AppendFormat::JsonLines => super::jsonl::write_all(sets)?,
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
    fn a_series_sharing_a_text_file_keeps_its_points_beside_it_until_complete() {
        let path = dir().join("blocks.txt");
        let grid = vec![vec![1.0], vec![2.0]];
        let mut a = Appender::open(&path, &x(), key("sort"), &grid).unwrap();
        a.add(vec![1.0], vec![10.0]).unwrap();
        a.add(vec![2.0], vec![20.0]).unwrap();
        let mut c = Appender::open(&path, &x(), key("sum"), &grid).unwrap();
        c.add(vec![1.0], vec![5.0]).unwrap();
        // The file stays readable without the unfinished series; its point is kept.
        assert_eq!(read_path(&path).unwrap().series.len(), 1);
        let partial = read_path(c.partial_path()).unwrap();
        assert_eq!(values(&partial, "sum"), [(1.0, vec![5.0])]);
        c.add(vec![2.0], vec![6.0]).unwrap();
        let exp = read_path(&path).unwrap();
        assert_eq!(values(&exp, "sum"), [(1.0, vec![5.0]), (2.0, vec![6.0])]);
        assert_eq!(values(&exp, "sort"), [(1.0, vec![10.0]), (2.0, vec![20.0])]);
        assert!(!c.partial_path().exists());
    }

    #[test]
    fn a_series_in_json_lines_goes_to_any_points_at_once() {
        let path = dir().join("blocks.jsonl");
        let grid = vec![vec![1.0], vec![2.0]];
        let mut a = Appender::open(&path, &x(), key("sort"), &grid).unwrap();
        a.add(vec![1.0], vec![10.0]).unwrap();
        a.add(vec![2.0], vec![20.0]).unwrap();
        let mut c = Appender::open(&path, &x(), key("sum"), &grid).unwrap();
        c.add(vec![1.0], vec![5.0]).unwrap();
        assert_eq!(
            values(&read_path(&path).unwrap(), "sum"),
            [(1.0, vec![5.0])]
        );
        assert!(!c.partial_path().exists());
        // One block's grid grows alone (the issue's `measure --at x=32000`).
        let mut s = Appender::open(&path, &x(), key("sort"), &[vec![32000.0]]).unwrap();
        s.add(vec![32000.0], vec![70.0]).unwrap();
        let exp = read_path(&path).unwrap();
        assert_eq!(values(&exp, "sort").len(), 3);
        assert_eq!(values(&exp, "sum"), [(1.0, vec![5.0])]);
        assert_eq!(s.converted_from(), None);
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
    fn a_text_file_that_cannot_hold_the_points_is_converted_to_json_lines() {
        let d = dir();
        let path = d.join("blocks.txt");
        let mut a = Appender::open(&path, &x(), key("sort"), &[vec![1.0], vec![2.0]]).unwrap();
        a.add(vec![1.0], vec![1.0]).unwrap();
        a.add(vec![2.0], vec![1.0]).unwrap();
        let mut b = Appender::open(&path, &x(), key("sum"), &[vec![1.0], vec![2.0]]).unwrap();
        b.add(vec![1.0], vec![3.0]).unwrap();
        b.add(vec![2.0], vec![4.0]).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        // `sort` alone at x = 4: the text's section cannot hold it.
        let mut c = Appender::open(&path, &x(), key("sort"), &[vec![4.0]]).unwrap();
        assert_eq!(c.converted_from(), Some(path.as_path()));
        assert_eq!(c.path(), d.join("blocks.jsonl"));
        assert_eq!(c.format(), AppendFormat::JsonLines);
        c.add(vec![4.0], vec![9.0]).unwrap();
        let exp = read_path(d.join("blocks.jsonl")).unwrap();
        assert_eq!(values(&exp, "sort").len(), 3);
        assert_eq!(values(&exp, "sum"), [(1.0, vec![3.0]), (2.0, vec![4.0])]);
        // The text file is left as it was.
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
        // Once the JSON Lines file exists, the text file is not converted over it.
        let e = Appender::open(&path, &x(), key("sum"), &[vec![8.0]]).unwrap_err();
        assert!(e.message.contains("at the same points"), "{}", e.message);
        assert!(
            e.hint.as_deref().unwrap_or("").contains("-o "),
            "{:?}",
            e.hint
        );
        // At the first DATA line of the series whose points differ.
        assert_eq!(e.line_col(), (7, 1), "{}", e.render());
        // The same series may grow by new points in a text file where it is alone.
        let solo = d.join("solo.txt");
        let mut s = Appender::open(&solo, &x(), key("sort"), &[vec![1.0]]).unwrap();
        s.add(vec![1.0], vec![1.0]).unwrap();
        let s = Appender::open(&solo, &x(), key("sort"), &[vec![4.0]]).unwrap();
        assert_eq!(s.converted_from(), None);
    }

    fn pn() -> Vec<String> {
        vec!["p".to_string(), "n".to_string()]
    }

    /// The example: `sort` over x, then `halo` over p and n, into one file.
    fn sort_then_halo(name: &str) -> PathBuf {
        let path = dir().join(name);
        let mut a = Appender::open(&path, &x(), key("sort"), &[vec![1.0], vec![2.0]]).unwrap();
        a.add(vec![1.0], vec![10.0]).unwrap();
        a.add(vec![2.0], vec![20.0]).unwrap();
        let grid = vec![vec![2.0, 1024.0], vec![4.0, 1024.0]];
        let mut h = Appender::open(&path, &pn(), key("halo"), &grid).unwrap();
        h.add(vec![2.0, 1024.0], vec![3.0]).unwrap();
        h.add(vec![4.0, 1024.0], vec![5.0]).unwrap();
        path
    }

    #[test]
    fn series_over_other_parameters_are_another_experiment_of_the_file() {
        for name in ["blocks.txt", "blocks.jsonl"] {
            let path = sort_then_halo(name);
            let before = std::fs::read_to_string(&path).unwrap();
            let sets = read_experiments(&path).unwrap();
            assert_eq!(sets.len(), 2, "{name}");
            assert_eq!(
                values(&sets[0], "sort"),
                [(1.0, vec![10.0]), (2.0, vec![20.0])]
            );
            assert_eq!(sets[1].parameters, pn());
            assert_eq!(sets[1].series[&key("halo")][1].values, vec![5.0]);
            // The file of `sort` alone is the start of it, unchanged.
            let mut alone = sets[0].clone();
            alone.source = None;
            let first = match name {
                "blocks.txt" => super::super::text::write(&alone).unwrap(),
                _ => super::super::jsonl::write(&alone).unwrap(),
            };
            assert!(before.starts_with(&first), "{name}: {before}");
            // Repetitions and a new point added to either series, in place.
            let mut h = Appender::open(&path, &pn(), key("halo"), &[vec![8.0, 1024.0]]).unwrap();
            h.add(vec![8.0, 1024.0], vec![9.0]).unwrap();
            let mut s = Appender::open(&path, &x(), key("sort"), &[vec![1.0]]).unwrap();
            s.add(vec![1.0], vec![11.0]).unwrap();
            let sets = read_experiments(&path).unwrap();
            assert_eq!(sets.len(), 2, "{name}");
            assert_eq!(values(&sets[0], "sort")[0], (1.0, vec![10.0, 11.0]));
            assert_eq!(sets[1].series[&key("halo")].len(), 3, "{name}");
            // A second series over p and n shares halo's points, in a text file by way
            // of its partial file.
            let text = name.ends_with(".txt");
            let grid = vec![vec![2.0, 1024.0], vec![4.0, 1024.0], vec![8.0, 1024.0]];
            let mut g = Appender::open(&path, &pn(), key("gather"), &grid).unwrap();
            g.add(vec![2.0, 1024.0], vec![1.0]).unwrap();
            assert_eq!(g.partial_path().exists(), text, "{name}");
            let series = if text { 1 } else { 2 };
            assert_eq!(read_experiments(&path).unwrap()[1].series.len(), series);
            drop(g);
            let mut g = Appender::open(&path, &pn(), key("gather"), &grid[1..]).unwrap();
            g.add(vec![4.0, 1024.0], vec![2.0]).unwrap();
            g.add(vec![8.0, 1024.0], vec![3.0]).unwrap();
            assert!(!g.partial_path().exists());
            let sets = read_experiments(&path).unwrap();
            assert_eq!(sets[1].series[&key("gather")].len(), 3, "{name}");
            assert_eq!(sets[1].series[&key("gather")][0].values, vec![1.0]);
        }
    }

    #[test]
    fn a_series_over_other_parameters_or_order_is_refused_at_its_place_in_the_file() {
        let path = sort_then_halo("blocks.txt");
        let before = std::fs::read_to_string(&path).unwrap();
        // `sort` is over x: not over p.
        let e = Appender::open(&path, &["p".to_string()], key("sort"), &[vec![2.0]]).unwrap_err();
        assert_eq!(
            e.message,
            "`sort / time` is in the file over (x), these measurements are over (p)"
        );
        assert_eq!(e.line_col(), (7, 1), "{}", e.render());
        // p and n are the file's in this order.
        let np = vec!["n".to_string(), "p".to_string()];
        let e = Appender::open(&path, &np, key("gather"), &[vec![1024.0, 2.0]]).unwrap_err();
        assert!(
            e.message
                .contains("the file's measurements are over (p, n), these are over (n, p)"),
            "{}",
            e.message
        );
        assert_eq!(e.line_col().0, 17, "{}", e.render());
        // Nothing was written.
        assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
        // The text format holds at most four parameters: refused before anything runs.
        let five: Vec<String> = ["a", "b", "c", "d", "e"].map(String::from).to_vec();
        let e = Appender::open(&path, &five, key("wide"), &[vec![1.0; 5]]).unwrap_err();
        assert!(e.message.contains("at most 4 parameters"), "{}", e.message);
        Appender::open(
            &dir().join("wide.jsonl"),
            &five,
            key("wide"),
            &[vec![1.0; 5]],
        )
        .unwrap();
    }

    #[test]
    fn a_partial_file_left_after_its_series_was_merged_adds_nothing() {
        let path = dir().join("blocks.txt");
        let grid = vec![vec![1.0], vec![2.0]];
        let mut a = Appender::open(&path, &x(), key("sort"), &grid).unwrap();
        a.add(vec![1.0], vec![10.0]).unwrap();
        a.add(vec![2.0], vec![20.0]).unwrap();
        let mut c = Appender::open(&path, &x(), key("sum"), &grid).unwrap();
        c.add(vec![1.0], vec![5.0]).unwrap();
        let partial = std::fs::read(c.partial_path()).unwrap();
        c.add(vec![2.0], vec![6.0]).unwrap();
        // As if the run was stopped between writing the file and removing the partial.
        std::fs::write(c.partial_path(), partial).unwrap();
        let mut again = Appender::open(&path, &x(), key("sum"), &grid[1..]).unwrap();
        again.add(vec![2.0], vec![7.0]).unwrap();
        let exp = read_path(&path).unwrap();
        assert_eq!(
            values(&exp, "sum"),
            [(1.0, vec![5.0]), (2.0, vec![6.0, 7.0])]
        );
        assert!(!again.partial_path().exists());
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
