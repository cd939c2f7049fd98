//! Measurements: per (callpath, metric), a list of coordinates (one value per parameter)
//! with repeated measured values.
//!
//! This is the data the modelers fit and the benchmark harness writes. Every file format
//! produces an [`Experiment`]:
//!
//! | module | format | read | write |
//! |---|---|---|---|
//! | [`text`] | Extra-P's text input (`PARAMETER`, `POINTS`, `REGION`, `METRIC`, `DATA`) | yes | yes |
//! | [`jsonl`] | JSON Lines (`{"params":{..},"callpath":..,"metric":..,"value":..}`) and the Talpas variant | yes | yes |
//! | [`json`] | Extra-P's JSON (id-based and `{"parameters":[..],"measurements":{..}}`) | yes | |
//! | [`csv`] | CSV, one column per parameter plus a value column | yes | |
//! | [`archive`] | Extra-P's saved experiments (`*.extra-p`, a zip holding `experiment.json`) | yes | |
//! | [`extrap3`] | Extra-P 3's binary experiment files | yes | |
//! | [`cube`] | a directory of CUBE profiles (`mm.x10y1.r1/profile.cubex`) | yes | |
//!
//! [`read_path`] picks the format from the extension and the content; [`Format`] names
//! the formats for a `--format` override. `docs/formats.md` is the user-facing reference.
//!
//! A file may hold several experiments, one per set of parameters (what `perfcompose
//! measure` writes for blocks over different parameters): Extra-P text with several
//! sections, JSON Lines whose lines name different parameters. [`read_experiments`]
//! reads those (every other file gives one); [`read_path`] takes files of one.
//!
//! Every reader enforces the same rules, so that the modelers can trust what they get:
//! values are finite and (unless [`ReadOptions::allow_negative`]) not negative, every
//! coordinate has one value per parameter, and every series is measured at every
//! coordinate of its experiment (Extra-P's rule; it is what makes Extra-P reject its own
//! `*_neg*` test files). Problems are [`Diagnostic`]s naming the file, line and column.

pub mod append;
pub mod archive;
mod builder;
pub mod csv;
pub mod cube;
pub mod extrap3;
pub mod json;
pub mod jsonl;
mod raw_json;
pub mod stats;
pub mod text;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_sets;

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;

use crate::diag::{Diagnostic, Span};

pub use stats::{median, Measure, Summary};

/// One measured point: parameter values (in the experiment's parameter order) and the
/// repetitions measured there.
///
/// Most formats carry every repetition in `values`. Extra-P's saved experiments and
/// Extra-P 3 files keep only statistics; such a point has empty `values` and a
/// [`Summary`]. Use [`Point::reduce`] (or `mean`, `median`, ...) rather than reading
/// `values` directly, so both kinds work.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    pub coordinate: Vec<f64>,
    pub values: Vec<f64>,
    /// Statistics stored by a format that does not keep the repetitions.
    pub summary: Option<Summary>,
    /// Where the point was read (a `DATA` line, a JSON Lines line, a CSV row), for
    /// messages about it; `None` for points built in memory.
    pub span: Option<Span>,
}

impl Point {
    pub fn new(coordinate: Vec<f64>, values: Vec<f64>) -> Point {
        Point {
            coordinate,
            values,
            summary: None,
            span: None,
        }
    }

    /// A point known only by its statistics (no individual repetitions).
    pub fn from_summary(coordinate: Vec<f64>, summary: Summary) -> Point {
        Point {
            coordinate,
            values: Vec::new(),
            summary: Some(summary),
            span: None,
        }
    }

    /// The same point, remembering where it was read.
    pub fn at(mut self, span: Span) -> Point {
        self.span = Some(span);
        self
    }

    /// Statistics of the repetitions: computed from `values` when there are any, else the
    /// stored summary. `None` only for a point with neither.
    pub fn summary(&self) -> Option<Summary> {
        if self.values.is_empty() {
            self.summary
        } else {
            Summary::of(&self.values)
        }
    }

    /// Number of repetitions.
    pub fn repetitions(&self) -> usize {
        if self.values.is_empty() {
            self.summary.map_or(0, |s| s.repetitions)
        } else {
            self.values.len()
        }
    }

    /// One value for the point, by `measure` (the `--measure` option). NaN for a point
    /// with no repetitions, which no reader produces.
    pub fn reduce(&self, measure: Measure) -> f64 {
        self.summary().map_or(f64::NAN, |s| s.get(measure))
    }

    pub fn mean(&self) -> f64 {
        self.reduce(Measure::Mean)
    }

    pub fn median(&self) -> f64 {
        self.reduce(Measure::Median)
    }

    pub fn minimum(&self) -> f64 {
        self.reduce(Measure::Minimum)
    }

    pub fn maximum(&self) -> f64 {
        self.reduce(Measure::Maximum)
    }

    /// Sample standard deviation of the repetitions (n − 1 in the denominator); `None`
    /// with fewer than two repetitions.
    pub fn std_dev(&self) -> Option<f64> {
        self.summary().and_then(|s| s.sample_std())
    }

    /// Coefficient of variation of the repetitions: sample standard deviation over the
    /// mean. `None` with fewer than two repetitions or a zero mean.
    pub fn cv(&self) -> Option<f64> {
        self.summary().and_then(|s| s.cv())
    }
}

/// The identity of one modelled series.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SeriesKey {
    /// Callpath, with `->` separating nesting levels (Extra-P's convention).
    pub callpath: String,
    pub metric: String,
}

impl SeriesKey {
    pub fn new(callpath: impl Into<String>, metric: impl Into<String>) -> SeriesKey {
        SeriesKey {
            callpath: callpath.into(),
            metric: metric.into(),
        }
    }
}

impl fmt::Display for SeriesKey {
    /// `callpath / metric`, with `<empty>` standing for an empty name.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let show = |s: &str| {
            if s.is_empty() {
                "<empty>".to_string()
            } else {
                s.to_string()
            }
        };
        write!(f, "{} / {}", show(&self.callpath), show(&self.metric))
    }
}

/// Where an experiment was read from: the name to show in messages and the text that
/// point spans refer to (for binary formats, an empty text).
#[derive(Clone, Debug, PartialEq)]
pub struct Source {
    pub origin: String,
    pub text: Arc<str>,
}

/// All measurements of one experiment.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Experiment {
    /// Parameter names, in coordinate order.
    pub parameters: Vec<String>,
    /// Points per series. Readers order each series' points like the experiment's
    /// coordinates (declaration order in the file, else first appearance).
    pub series: BTreeMap<SeriesKey, Vec<Point>>,
    /// The file this came from, for messages; `None` for experiments built in memory.
    pub source: Option<Source>,
}

impl Experiment {
    pub fn new(parameters: Vec<String>) -> Experiment {
        Experiment {
            parameters,
            series: BTreeMap::new(),
            source: None,
        }
    }

    /// Add repetitions at a coordinate, merging with an existing point of the same
    /// coordinate in the same series.
    pub fn push(&mut self, key: SeriesKey, coordinate: Vec<f64>, values: Vec<f64>) {
        let points = self.series.entry(key).or_default();
        if let Some(p) = points.iter_mut().find(|p| p.coordinate == coordinate) {
            p.values.extend(values);
        } else {
            points.push(Point::new(coordinate, values));
        }
    }

    /// Name of the input, or `<memory>`.
    pub fn origin(&self) -> &str {
        self.source
            .as_ref()
            .map_or("<memory>", |s| s.origin.as_str())
    }

    /// A diagnostic about `span` of the input this experiment was read from (line 1 when
    /// the span is unknown). Modelers use it to report a bad series or point where the
    /// user can find it.
    pub fn diagnostic(&self, span: Option<Span>, message: impl Into<String>) -> Diagnostic {
        match (&self.source, span) {
            (Some(src), Some(span)) => {
                Diagnostic::new(src.origin.clone(), src.text.to_string(), span, message)
            }
            _ => Diagnostic::whole(self.origin(), message),
        }
    }

    /// Where the series `key` starts in the input (its first point), if known.
    pub fn series_span(&self, key: &SeriesKey) -> Option<Span> {
        self.series.get(key)?.iter().find_map(|p| p.span)
    }

    /// Where the experiment starts in the input (its earliest point), if known.
    pub fn span(&self) -> Option<Span> {
        self.series
            .values()
            .flatten()
            .filter_map(|p| p.span)
            .min_by_key(|s| s.start)
    }

    /// Every coordinate of the experiment, in the order of the series' points (each
    /// coordinate once).
    pub fn coordinates(&self) -> Vec<Vec<f64>> {
        let mut seen = std::collections::HashSet::new();
        let mut out: Vec<Vec<f64>> = Vec::new();
        for points in self.series.values() {
            for p in points {
                if seen.insert(builder::key_of(&p.coordinate)) {
                    out.push(p.coordinate.clone());
                }
            }
        }
        out
    }

    /// Number of points over all series.
    pub fn point_count(&self) -> usize {
        self.series.values().map(Vec::len).sum()
    }

    /// Number of repetitions over all points.
    pub fn value_count(&self) -> usize {
        self.series.values().flatten().map(Point::repetitions).sum()
    }

    /// True when both hold the same parameters, series, coordinates and values,
    /// whatever their sources and spans (for round-trip tests and comparisons).
    pub fn same_data(&self, other: &Experiment) -> bool {
        self.parameters == other.parameters
            && self.series.len() == other.series.len()
            && self
                .series
                .iter()
                .zip(&other.series)
                .all(|((ka, a), (kb, b))| {
                    ka == kb
                        && a.len() == b.len()
                        && a.iter().zip(b).all(|(p, q)| {
                            p.coordinate == q.coordinate
                                && p.values == q.values
                                && p.summary == q.summary
                        })
                })
    }
}

/// Why an experiment cannot be written in a format (e.g. more than four parameters for
/// Extra-P's text format).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct WriteError(pub String);

/// The file formats perfcompose reads (a closed set: the `--format` override).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// Extra-P's text input.
    Text,
    /// JSON Lines, one repetition (or a list of them) per line.
    JsonLines,
    /// Extra-P's JSON (both layouts); falls back to JSON Lines like Extra-P does.
    Json,
    /// CSV with a header row.
    Csv,
    /// Talpas: JSON Lines with `;` between fields and `parameters` instead of `params`.
    Talpas,
    /// An Extra-P saved experiment (`*.extra-p`).
    ExtraP,
    /// An Extra-P 3 binary experiment.
    ExtraP3,
    /// A directory of CUBE profiles.
    Cube,
}

impl Format {
    pub const ALL: [Format; 8] = [
        Format::Text,
        Format::JsonLines,
        Format::Json,
        Format::Csv,
        Format::Talpas,
        Format::ExtraP,
        Format::ExtraP3,
        Format::Cube,
    ];

    /// The name used on the command line (`--format NAME`).
    pub fn name(self) -> &'static str {
        match self {
            Format::Text => "text",
            Format::JsonLines => "jsonl",
            Format::Json => "json",
            Format::Csv => "csv",
            Format::Talpas => "talpas",
            Format::ExtraP => "extra-p",
            Format::ExtraP3 => "extrap3",
            Format::Cube => "cube",
        }
    }

    /// One line for `--help` and format listings.
    pub fn description(self) -> &'static str {
        match self {
            Format::Text => "Extra-P text input (PARAMETER, POINTS, REGION, METRIC, DATA)",
            Format::JsonLines => {
                "JSON Lines: {\"params\":{..},\"callpath\":..,\"metric\":..,\"value\":..} per line"
            }
            Format::Json => {
                "Extra-P JSON (id-based, or {\"parameters\":[..],\"measurements\":{..}})"
            }
            Format::Csv => {
                "CSV: one column per parameter, value column(s), optional callpath/metric"
            }
            Format::Talpas => "Talpas: JSON Lines with `;` between fields",
            Format::ExtraP => "Extra-P saved experiment (*.extra-p)",
            Format::ExtraP3 => "Extra-P 3 binary experiment",
            Format::Cube => "directory of CUBE profiles (mm.x10y1.r1/profile.cubex)",
        }
    }

    /// Guess the format of `path` from its extension and, where that is not decisive,
    /// from the first bytes of its content (`head`). Directories are CUBE sets.
    pub fn detect(path: &Path, head: &[u8]) -> Format {
        if path.is_dir() {
            return Format::Cube;
        }
        if head.starts_with(b"PK\x03\x04") {
            return Format::ExtraP;
        }
        if extrap3::looks_like(head) {
            return Format::ExtraP3;
        }
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or("")
            .to_ascii_lowercase();
        match ext.as_str() {
            "jsonl" | "ndjson" => return Format::JsonLines,
            "json" => return Format::Json,
            "csv" | "tsv" => return Format::Csv,
            "extra-p" => return Format::ExtraP,
            "cubex" => return Format::Cube,
            _ => {}
        }
        // Sniff the first meaningful line.
        let text = String::from_utf8_lossy(head);
        let first = text
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty() && !l.starts_with('#'))
            .unwrap_or("");
        if first.starts_with('{') {
            if first.contains("\"parameters\"") && first.contains(';') {
                Format::Talpas
            } else if first.contains("\"params\"") || first.ends_with('}') {
                Format::JsonLines
            } else {
                Format::Json
            }
        } else if text::KEYWORDS
            .iter()
            .any(|k| first.split_whitespace().next() == Some(k))
        {
            Format::Text
        } else if first.contains(',') || first.contains('\t') || first.contains(';') {
            Format::Csv
        } else {
            Format::Text
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Format {
    type Err = String;

    fn from_str(s: &str) -> Result<Format, String> {
        let lower = s.to_ascii_lowercase();
        let alias = match lower.as_str() {
            "txt" | "extrap-text" => "text",
            "jsonlines" | "ndjson" => "jsonl",
            "extrap" | "experiment" => "extra-p",
            "extra-p-3" | "extrap-3" => "extrap3",
            other => other,
        };
        Format::ALL
            .into_iter()
            .find(|f| f.name() == alias)
            .ok_or_else(|| {
                let names: Vec<_> = Format::ALL.iter().map(|f| f.name()).collect();
                format!("unknown format `{s}` (known formats: {})", names.join(", "))
            })
    }
}

/// Options shared by the readers.
#[derive(Clone, Debug, Default)]
pub struct ReadOptions {
    /// Read this format instead of detecting one.
    pub format: Option<Format>,
    /// Accept negative values (for metrics that can be negative). Off by default: a
    /// negative time is a measurement error, and the modelers assume values ≥ 0.
    pub allow_negative: bool,
    /// Column choices for CSV input.
    pub csv: csv::CsvOptions,
    /// Options of the CUBE reader.
    pub cube: cube::CubeOptions,
}

/// Read a measurements file (or a CUBE directory), detecting its format.
///
/// ```no_run
/// let exp = perfcompose_core::measure::read_path("measurements.txt")?;
/// println!("{} series", exp.series.len());
/// # Ok::<(), perfcompose_core::Diagnostic>(())
/// ```
pub fn read_path(path: impl AsRef<Path>) -> Result<Experiment, Diagnostic> {
    read_path_with(path, &ReadOptions::default())
}

/// [`read_path`] with options (a forced format, negative values, CSV columns).
pub fn read_path_with(
    path: impl AsRef<Path>,
    opts: &ReadOptions,
) -> Result<Experiment, Diagnostic> {
    let origin = path.as_ref().display().to_string();
    single(&origin, read_experiments_with(path, opts)?)
}

/// Read a measurements file that may hold several experiments, one per parameter set
/// (Extra-P text with several sections, JSON Lines whose lines name different
/// parameters; see `docs/formats.md`), in the file's order. Every other file gives one.
pub fn read_experiments(path: impl AsRef<Path>) -> Result<Vec<Experiment>, Diagnostic> {
    read_experiments_with(path, &ReadOptions::default())
}

/// [`read_experiments`] with options.
pub fn read_experiments_with(
    path: impl AsRef<Path>,
    opts: &ReadOptions,
) -> Result<Vec<Experiment>, Diagnostic> {
    let path = path.as_ref();
    let origin = path.display().to_string();
    if path.is_dir() {
        return match opts.format {
            None | Some(Format::Cube) => cube::read_dir(path, opts).map(|e| vec![e]),
            Some(f) => Err(Diagnostic::whole(
                origin,
                format!("this is a directory; only the `cube` format reads directories, not `{f}`"),
            )),
        };
    }
    let bytes = std::fs::read(path)
        .map_err(|e| Diagnostic::whole(&origin, format!("cannot read the file: {e}")))?;
    let format = opts
        .format
        .unwrap_or_else(|| Format::detect(path, &bytes[..bytes.len().min(4096)]));
    match format {
        Format::ExtraP => archive::read_bytes(&origin, &bytes, opts).map(|e| vec![e]),
        Format::ExtraP3 => extrap3::read_bytes(&origin, &bytes, opts).map(|e| vec![e]),
        Format::Cube => Err(Diagnostic::whole(
            origin,
            "a CUBE experiment is a directory of profiles, one sub-directory per measured point",
        )
        .with_hint("pass the directory that holds the `*.r1/profile.cubex` folders")),
        _ => {
            let text = String::from_utf8(bytes).map_err(|e| {
                let at = e.utf8_error().valid_up_to();
                let lossy = String::from_utf8_lossy(e.as_bytes()).into_owned();
                Diagnostic::new(
                    &origin,
                    lossy,
                    Span::at(at),
                    "the file is not valid UTF-8 text",
                )
            })?;
            read_str_experiments(format, &origin, &text, opts)
        }
    }
}

/// The one experiment of `sets`, or an error at the start of the second (a file that
/// holds several parameter sets, read by a caller that takes one).
pub(crate) fn single(origin: &str, mut sets: Vec<Experiment>) -> Result<Experiment, Diagnostic> {
    if sets.len() > 1 {
        let second = &sets[1];
        return Err(second
            .diagnostic(
                second.span(),
                format!(
                    "the file holds measurements over several sets of parameters: ({}) and, from here, ({})",
                    sets[0].parameters.join(", "),
                    second.parameters.join(", ")
                ),
            )
            .with_hint("this reads one experiment; `measure::read_experiments` (what `perfcompose fit` and components files use) reads them all"));
    }
    sets.pop()
        .ok_or_else(|| Diagnostic::whole(origin, "the input holds no measurements"))
}

/// The same parameter names, in any order.
pub(crate) fn same_names(a: &[String], b: &[String]) -> bool {
    fn sorted(v: &[String]) -> Vec<&str> {
        let mut v: Vec<&str> = v.iter().map(String::as_str).collect();
        v.sort_unstable();
        v
    }
    sorted(a) == sorted(b)
}

/// What a file of several experiments needs: each over its own parameters, no series in
/// two of them, and at least one.
pub(crate) fn check_sets(exps: &[Experiment]) -> Result<(), WriteError> {
    if exps.is_empty() {
        return Err(WriteError("no measurements to write".to_string()));
    }
    for (i, e) in exps.iter().enumerate() {
        for f in &exps[..i] {
            if same_names(&e.parameters, &f.parameters) {
                return Err(WriteError(format!(
                    "two experiments over the same parameters ({}): a file holds one per set of parameters",
                    e.parameters.join(", ")
                )));
            }
            if let Some(k) = e.series.keys().find(|k| f.series.contains_key(*k)) {
                return Err(WriteError(format!(
                    "series `{k}` is in two experiments, over ({}) and over ({})",
                    f.parameters.join(", "),
                    e.parameters.join(", ")
                )));
            }
        }
    }
    Ok(())
}

/// Write `exp` to `path`: JSON Lines for `.jsonl`/`.ndjson`, Extra-P text otherwise (the
/// two formats perfcompose writes, both readable by Extra-P).
pub fn write_path(path: impl AsRef<Path>, exp: &Experiment) -> Result<(), WriteError> {
    let path = path.as_ref();
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    let out = match ext.as_str() {
        "jsonl" | "ndjson" => jsonl::write(exp)?,
        _ => text::write(exp)?,
    };
    std::fs::write(path, out)
        .map_err(|e| WriteError(format!("cannot write {}: {e}", path.display())))
}

/// Read a text format from memory; `origin` names it in messages. A text with several
/// parameter sets is an error here: [`read_str_experiments`] reads it.
pub fn read_str(
    format: Format,
    origin: &str,
    text: &str,
    opts: &ReadOptions,
) -> Result<Experiment, Diagnostic> {
    single(origin, read_str_experiments(format, origin, text, opts)?)
}

/// Read a text format from memory, one experiment per parameter set (several only in
/// Extra-P text and JSON Lines).
pub fn read_str_experiments(
    format: Format,
    origin: &str,
    text: &str,
    opts: &ReadOptions,
) -> Result<Vec<Experiment>, Diagnostic> {
    let one = match format {
        Format::Text => return text::read_all_str(origin, text, opts),
        Format::JsonLines => return jsonl::read_all_str(origin, text, opts),
        Format::Talpas => jsonl::read_talpas_str(origin, text, opts),
        Format::Json => json::read_str(origin, text, opts),
        Format::Csv => csv::read_str(origin, text, opts),
        Format::ExtraP | Format::ExtraP3 | Format::Cube => Err(Diagnostic::whole(
            origin,
            format!("the `{format}` format is binary; read it from a file"),
        )),
    };
    one.map(|e| vec![e])
}
