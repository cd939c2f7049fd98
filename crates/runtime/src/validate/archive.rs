//! A saved validation run: one folder, written while the run goes (so that a run stopped
//! part way keeps every row it finished) and read back by `validate --from` without
//! running anything. [`Archive`] writes it and [`SavedRun::open`] reads it; both sides
//! live here, so the layout has one definition.
//!
//! | file | what |
//! |---|---|
//! | `run.json` | [`Manifest`]: the format's version, the suite's configurations, the machine's caches, the statistic |
//! | `blocks*.txt`, `programs*.txt` | every measurement, Extra-P text (one file per sweep): each round's blocks as `ID [round R]->KEY` and program as `ID [round R]`; pooled over the rounds, blocks as `ID->KEY`, programs as `ID`, the program of the rounds that timed it before its blocks as `ID [before blocks]` and after them as `ID [after blocks]` |
//! | `phases.json` | what the stage tests recorded besides their times ([`Phases`]) |
//! | `overhead-calibration.json` | the calibration the run composed with |
//! | `rows.jsonl` | each row as it finished (the `--json` row schema) |
//! | `report.json` | the final report (the `--json` schema) |
//! | `points.json` | per row: every point with its prediction, the block models, the fit's worst miss |

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use perfcompose_core::diag::Diagnostic;
use serde::{Deserialize, Serialize};

use super::analyze::{phases_of, Phases};
use super::report::{JsonRow, Report, Row};
use super::suite::{Case, Suite};
use super::verdict::Budget;
use crate::bench::{self, PointStats, Series, SeriesKind};
use crate::data::ImageSize;
use crate::error::{Error, FileAction};
use crate::overhead::Calibration;

/// The version of the saved-run layout this build writes: 2 saves every round
/// (`ID [round R]`, `ID [round R]->KEY`) and the budget. Version 1 (no rounds) is read
/// too.
pub const ARCHIVE_VERSION: u32 = 2;

/// The layout versions this build reads.
const READS: [u64; 2] = [1, 2];

/// What names the format in `run.json`.
const FORMAT: &str = "perfcompose validate run";

const MANIFEST: &str = "run.json";
const PHASES: &str = "phases.json";
const CALIBRATION: &str = "overhead-calibration.json";
const ROWS: &str = "rows.jsonl";
const REPORT: &str = "report.json";
const POINTS: &str = "points.json";

/// `run.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub format: String,
    pub version: u32,
    pub suite: String,
    pub cases: Vec<SavedCase>,
    /// The statistic the run's rows were fitted on.
    pub measure: String,
    pub cores: usize,
    /// The caches of the machine the run measured on, bytes per level.
    pub caches_bytes: Vec<u64>,
    /// The rounds' budget (absent in layout 1, which had no rounds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<Budget>,
    /// A run of the user's own program (`validate -- CMD --save`): its design and the
    /// models it was composed from; `cases` is then empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<SavedProgram>,
}

/// The user's own program in a saved run: the term and each component's model as
/// composed (fitted components as their fitted model).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SavedProgram {
    pub term: String,
    pub components: BTreeMap<String, String>,
    /// The program's sizes.
    pub sizes: Vec<u64>,
}

/// A configuration of a saved suite.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SavedCase {
    pub group: String,
    pub term: String,
    pub sizes: Vec<usize>,
    pub image: String,
}

/// `phases.json`: calls per window, and per block key and size the stage test's phases.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct PhasesFile {
    window: usize,
    series: Phases,
}

/// Write `series` as measurement files: JSON for a `.json` path, else Extra-P text.
/// Series with different sweeps cannot share an Extra-P text file; the first sweep goes to
/// `path`, every other one to `STEM-NAME.EXT` named after its first series. Each file is
/// written beside its place and renamed over it, so a run stopped while it writes leaves
/// the old file whole. Returns the files written.
pub fn write_measurements(path: &Path, series: &[Series]) -> Result<Vec<PathBuf>, Error> {
    if path.extension().is_some_and(|e| e == "json") {
        replace(path, &json(path, series)?)?;
        return Ok(vec![path.to_path_buf()]);
    }
    let mut written = Vec::new();
    for (i, (name, group)) in bench::group_by_sweep(series).into_iter().enumerate() {
        let p = if i == 0 {
            path.to_path_buf()
        } else {
            let stem = path
                .file_stem()
                .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
            let safe: String = name
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '_' {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            let ext = path
                .extension()
                .map_or_else(|| "txt".into(), |e| e.to_string_lossy().into_owned());
            path.with_file_name(format!("{stem}-{safe}.{ext}"))
        };
        replace(&p, &bench::extrap_text(&bench::to_experiment(&group))?)?;
        written.push(p);
    }
    Ok(written)
}

/// Write `text` to `path` through a file beside it renamed over it.
fn replace(path: &Path, text: &str) -> Result<(), Error> {
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let tmp = path.with_file_name(format!(".{name}.partial"));
    std::fs::write(&tmp, text).map_err(Error::file(FileAction::Write, &tmp))?;
    std::fs::rename(&tmp, path).map_err(Error::file(FileAction::Write, path))
}

/// `v` as pretty JSON with a final newline, for the file `path`.
fn json<T: Serialize + ?Sized>(path: &Path, v: &T) -> Result<String, Error> {
    serde_json::to_string_pretty(v)
        .map(|t| t + "\n")
        .map_err(|source| Error::Json {
            path: path.to_path_buf(),
            source,
        })
}

/// A run being saved into a folder.
pub struct Archive {
    dir: PathBuf,
    rows: std::fs::File,
}

impl Archive {
    /// Start saving a run of `suite` into `dir` (created; a previous run's `rows.jsonl`
    /// there is replaced): the manifest and the calibration at once.
    pub fn create(
        dir: &Path,
        suite: &Suite,
        calibration: Option<&Calibration>,
        opts: &super::Options,
    ) -> Result<Archive, Error> {
        let manifest = Manifest {
            format: FORMAT.into(),
            version: ARCHIVE_VERSION,
            suite: suite.name.clone(),
            cases: suite
                .cases
                .iter()
                .map(|c| SavedCase {
                    group: c.group.clone(),
                    term: c.term.clone(),
                    sizes: c.sizes.clone(),
                    image: c.image.name().into(),
                })
                .collect(),
            measure: opts.measure.name().into(),
            cores: opts.cores,
            caches_bytes: opts.caches.clone(),
            budget: Some(suite.budget),
            program: None,
        };
        if let Some(c) = calibration {
            std::fs::create_dir_all(dir).map_err(Error::file(FileAction::Create, dir))?;
            c.save(&dir.join(CALIBRATION))?;
        }
        Archive::start(dir, &manifest)
    }

    /// Start saving a run of the user's own program `program` into `dir`, measured
    /// under `budget`.
    pub fn create_program(
        dir: &Path,
        program: SavedProgram,
        budget: Budget,
        opts: &super::Options,
    ) -> Result<Archive, Error> {
        let manifest = Manifest {
            format: FORMAT.into(),
            version: ARCHIVE_VERSION,
            suite: super::OWN_PROGRAM.into(),
            cases: Vec::new(),
            measure: opts.measure.name().into(),
            cores: opts.cores,
            caches_bytes: opts.caches.clone(),
            budget: Some(budget),
            program: Some(program),
        };
        Archive::start(dir, &manifest)
    }

    /// The folder made, the manifest written, `rows.jsonl` started.
    fn start(dir: &Path, manifest: &Manifest) -> Result<Archive, Error> {
        std::fs::create_dir_all(dir).map_err(Error::file(FileAction::Create, dir))?;
        let path = dir.join(MANIFEST);
        replace(&path, &json(&path, manifest)?)?;
        let p = dir.join(ROWS);
        let rows = std::fs::File::create(&p).map_err(Error::file(FileAction::Create, &p))?;
        Ok(Archive {
            dir: dir.to_path_buf(),
            rows,
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// A row is done: write every measurement so far (each file replaced whole), then
    /// append the row to `rows.jsonl`.
    pub fn row(&mut self, row: &Row, measured: &[Series]) -> Result<(), Error> {
        self.measurements(measured)?;
        let path = self.dir.join(ROWS);
        let line = serde_json::to_string(&JsonRow::of(row)).map_err(|source| Error::Json {
            path: path.clone(),
            source,
        })?;
        writeln!(self.rows, "{line}")
            .and_then(|()| self.rows.flush())
            .map_err(Error::file(FileAction::Write, &path))
    }

    /// The measurements: blocks (series of kind kernel) to `blocks*.txt`, programs to
    /// `programs*.txt`, the stage tests' phases to `phases.json` (each file replaced
    /// whole).
    pub fn measurements(&self, series: &[Series]) -> Result<(), Error> {
        let (blocks, programs): (Vec<Series>, Vec<Series>) = series
            .iter()
            .cloned()
            .partition(|s| s.kind == SeriesKind::Kernel);
        let phases = phases_of(&blocks);
        write_measurements(&self.dir.join("blocks.txt"), &blocks)?;
        write_measurements(&self.dir.join("programs.txt"), &programs)?;
        if !phases.is_empty() {
            let file = PhasesFile {
                window: bench::PHASE_WINDOW,
                series: phases,
            };
            let path = self.dir.join(PHASES);
            replace(&path, &json(&path, &file)?)?;
        }
        Ok(())
    }

    /// The run ended: every measurement, the report and the per-point detail.
    pub fn finish(self, report: &Report, measured: &[Series]) -> Result<(), Error> {
        self.measurements(measured)?;
        let path = self.dir.join(REPORT);
        replace(&path, &json(&path, &report.to_json())?)?;
        let points: Vec<_> = report
            .rows
            .iter()
            .map(|r| {
                serde_json::json!({
                    "configuration": r.configuration,
                    "overhead_ns": r.overhead_ns,
                    "components": r
                        .components
                        .iter()
                        .map(|(k, m)| (k.clone(), m.to_string()))
                        .collect::<BTreeMap<_, _>>(),
                    "points": r.points,
                    "rounds": r.rounds,
                    "block_fit_miss": r.fit_floor,
                    "time_error_from_measured_blocks": r.error_from_measured_blocks,
                    "repeat_error": r.repeat_error,
                })
            })
            .collect();
        let path = self.dir.join(POINTS);
        replace(&path, &json(&path, &points)?)
    }
}

/// A saved run read back ([`SavedRun::open`]).
#[derive(Clone, Debug)]
pub struct SavedRun {
    pub dir: PathBuf,
    pub manifest: Manifest,
    /// Every measurement, by saved name (phases attached to their points).
    pub series: Vec<Series>,
}

impl SavedRun {
    /// Read the run saved in `dir`. A folder without `run.json`, or one written by
    /// another version of the layout, is an error that says so.
    pub fn open(dir: &Path) -> Result<SavedRun, Error> {
        let path = dir.join(MANIFEST);
        let text = std::fs::read_to_string(&path).map_err(|source| Error::NotSaved {
            dir: dir.to_path_buf(),
            path: path.clone(),
            source,
        })?;
        let origin = path.display().to_string();
        let value: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| located(&origin, &text, e.line(), e.column(), e.to_string()))?;
        let version = value.get("version").and_then(serde_json::Value::as_u64);
        if value.get("format").and_then(serde_json::Value::as_str) != Some(FORMAT)
            || !version.is_some_and(|v| READS.contains(&v))
        {
            return Err(Error::Input(Box::new(
                Diagnostic::whole(
                    &origin,
                    format!(
                        "a saved run of layout version {}, this build reads versions 1 and {ARCHIVE_VERSION}",
                        version.map_or_else(|| "(none)".to_string(), |v| v.to_string())
                    ),
                )
                .with_hint("validate it with the perfcompose that saved it, or measure it again"),
            )));
        }
        let manifest: Manifest = serde_json::from_str(&text)
            .map_err(|e| located(&origin, &text, e.line(), e.column(), e.to_string()))?;
        let mut series = read_series(dir)?;
        read_phases(dir, &mut series)?;
        Ok(SavedRun {
            dir: dir.to_path_buf(),
            manifest,
            series,
        })
    }

    /// The overhead calibration the run composed with, if it had one (read when asked
    /// for: a run is validated again without it too).
    pub fn calibration(&self) -> Result<Option<Calibration>, Error> {
        match self.dir.join(CALIBRATION) {
            p if p.is_file() => Ok(Calibration::load(&p)?),
            _ => Ok(None),
        }
    }

    /// The suite the run measured (for validating it again: its configurations only).
    pub fn suite(&self) -> Result<Suite, Error> {
        let mut suite = Suite::of_term("inc", vec![1], ImageSize::Small);
        suite.name = self.manifest.suite.clone();
        if let Some(b) = self.manifest.budget {
            suite.budget = b;
        }
        // The designs of your own program are not saved: the saved run is its cases.
        suite.programs = Vec::new();
        suite.cases = self
            .manifest
            .cases
            .iter()
            .map(|c| {
                Ok(Case {
                    group: c.group.clone(),
                    term: c.term.clone(),
                    sizes: c.sizes.clone(),
                    image: ImageSize::parse(&c.image).ok_or_else(|| {
                        Diagnostic::whole(
                            self.dir.join(MANIFEST).display().to_string(),
                            format!("unknown image `{}`", c.image),
                        )
                    })?,
                })
            })
            .collect::<Result<_, Error>>()?;
        Ok(suite)
    }
}

fn located(origin: &str, source: &str, line: usize, column: usize, message: String) -> Error {
    let offset = source
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum::<usize>()
        + column.saturating_sub(1);
    let at = offset.min(source.len().saturating_sub(1));
    Error::Input(Box::new(Diagnostic::new(
        origin,
        source,
        perfcompose_core::diag::Span::at(at),
        message,
    )))
}

/// Every measurement of `dir`'s `blocks*.txt` and `programs*.txt`: callpaths with `->`
/// are blocks, the others programs. The files do not record whether a point reached its
/// confidence target; every point counts as converged.
fn read_series(dir: &Path) -> Result<Vec<Series>, Error> {
    let entries = std::fs::read_dir(dir).map_err(Error::file(FileAction::Read, dir))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            (name.starts_with("blocks") || name.starts_with("programs"))
                && name.ends_with(".txt")
                && p.is_file()
        })
        .collect();
    files.sort();
    let mut series = Vec::new();
    for f in files {
        let exp = perfcompose_core::measure::read_path(&f)?;
        for (key, points) in &exp.series {
            let stats = points
                .iter()
                .map(|p| {
                    let x = p.coordinate.first().copied().unwrap_or(0.0);
                    let mut s = PointStats::of(x.round().max(0.0) as u64, p.values.clone());
                    s.converged = true;
                    s
                })
                .collect();
            series.push(if key.callpath.contains("->") {
                Series::kernel(key.callpath.clone(), stats)
            } else {
                Series::program(key.callpath.clone(), stats)
            });
        }
    }
    Ok(series)
}

/// Attach `dir`'s `phases.json`, when there is one, to the saved `series` of the same
/// names and sizes.
fn read_phases(dir: &Path, series: &mut [Series]) -> Result<(), Error> {
    let path = dir.join(PHASES);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::file(FileAction::Read, &path)(e)),
    };
    let origin = path.display().to_string();
    let file: PhasesFile = serde_json::from_str(&text)
        .map_err(|e| located(&origin, &text, e.line(), e.column(), e.to_string()))?;
    for s in series.iter_mut() {
        let Some(points) = file.series.get(&s.name) else {
            continue;
        };
        for at in points {
            if let Some(point) = s.points.iter_mut().find(|q| q.x == at.x) {
                point.phases = at
                    .phases
                    .iter()
                    .copied()
                    .filter(|v| v.is_finite())
                    .collect();
            }
        }
    }
    Ok(())
}
