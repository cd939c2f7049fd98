//! The part every reader shares: collecting points by series and coordinate, checking
//! values, and the final validation (every series measured at every coordinate, except
//! in JSON Lines) that turns the collection into an [`Experiment`].

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use super::{Experiment, Point, ReadOptions, SeriesKey, Source, Summary};
use crate::diag::{line_col, Diagnostic, Span};

/// A coordinate as a hashable key (bit patterns, with −0 folded into +0).
pub(crate) fn key_of(coord: &[f64]) -> Vec<u64> {
    coord
        .iter()
        .map(|v| if *v == 0.0 { 0 } else { v.to_bits() })
        .collect()
}

/// `(x=40, y=3)`.
pub(crate) fn show_coordinate(parameters: &[String], coord: &[f64]) -> String {
    let parts: Vec<String> = coord
        .iter()
        .enumerate()
        .map(|(i, v)| match parameters.get(i) {
            Some(p) => format!("{p}={v}"),
            None => v.to_string(),
        })
        .collect();
    format!("({})", parts.join(", "))
}

struct SeriesAcc {
    /// Where the series first appears (its first point, or its REGION line).
    first: Span,
    points: HashMap<usize, Point>,
}

pub(crate) struct Builder<'a> {
    origin: &'a str,
    text: &'a str,
    pub(crate) opts: &'a ReadOptions,
    pub(crate) parameters: Vec<String>,
    coords: Vec<Vec<f64>>,
    coord_span: Vec<Option<Span>>,
    coord_index: HashMap<Vec<u64>, usize>,
    series: BTreeMap<SeriesKey, SeriesAcc>,
    /// Whether a series may miss some of the experiment's coordinates: JSON Lines, where
    /// every line names its own point, so that one block's grid can grow alone
    /// (`perfcompose measure` into a shared `.jsonl` file). Every other format keeps
    /// Extra-P's rule.
    pub(crate) any_points: bool,
}

impl<'a> Builder<'a> {
    pub(crate) fn new(origin: &'a str, text: &'a str, opts: &'a ReadOptions) -> Builder<'a> {
        Builder {
            origin,
            text,
            opts,
            parameters: Vec::new(),
            coords: Vec::new(),
            coord_span: Vec::new(),
            coord_index: HashMap::new(),
            series: BTreeMap::new(),
            any_points: false,
        }
    }

    /// A diagnostic at `span` of this input.
    pub(crate) fn err(&self, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(self.origin, self.text, span, message)
    }

    pub(crate) fn line_of(&self, span: Span) -> usize {
        line_col(self.text, span.start).0
    }

    pub(crate) fn coordinate_count(&self) -> usize {
        self.coords.len()
    }

    pub(crate) fn coordinate_at(&self, index: usize) -> &[f64] {
        &self.coords[index]
    }

    pub(crate) fn show(&self, coord: &[f64]) -> String {
        show_coordinate(&self.parameters, coord)
    }

    /// Check one parameter value of a coordinate.
    pub(crate) fn parameter_value(&self, v: f64, span: Span) -> Result<f64, Diagnostic> {
        if v.is_finite() {
            Ok(v)
        } else {
            Err(self.err(span, format!("parameter value {v} is not a finite number")))
        }
    }

    /// Check one measured value: finite, and not negative unless allowed.
    pub(crate) fn value(&self, v: f64, span: Span) -> Result<f64, Diagnostic> {
        if v.is_nan() {
            Err(self.err(span, "measured value is not a number (NaN)"))
        } else if v.is_infinite() {
            Err(self.err(span, "measured value is infinite"))
        } else if v < 0.0 && !self.opts.allow_negative {
            Err(self
                .err(span, format!("negative measured value {v}"))
                .with_hint(
                "times and counts cannot be negative; use --allow-negative for a metric that can",
            ))
        } else {
            Ok(v)
        }
    }

    /// The index of `coord`, adding it if new (formats where points appear with data).
    pub(crate) fn coordinate(&mut self, coord: Vec<f64>, span: Span) -> Result<usize, Diagnostic> {
        if coord.len() != self.parameters.len() {
            return Err(self.err(
                span,
                format!(
                    "point has {} value(s) but there are {} parameters ({})",
                    coord.len(),
                    self.parameters.len(),
                    self.parameters.join(", ")
                ),
            ));
        }
        let key = key_of(&coord);
        if let Some(&i) = self.coord_index.get(&key) {
            return Ok(i);
        }
        self.coord_index.insert(key, self.coords.len());
        self.coords.push(coord);
        self.coord_span.push(Some(span));
        Ok(self.coords.len() - 1)
    }

    /// Declare a new coordinate (formats that list points before data); a repeated
    /// coordinate is an error.
    pub(crate) fn declare(&mut self, coord: Vec<f64>, span: Span) -> Result<usize, Diagnostic> {
        if let Some(&i) = self.coord_index.get(&key_of(&coord)) {
            let first = self.coord_span[i].map_or(String::new(), |s| {
                format!(" (first on line {})", self.line_of(s))
            });
            return Err(self.err(
                span,
                format!("point {} is listed twice{first}", self.show(&coord)),
            ));
        }
        self.coordinate(coord, span)
    }

    /// Note that a series exists from `span` on, even before it has points.
    pub(crate) fn touch(&mut self, key: &SeriesKey, span: Span) {
        self.series.entry(key.clone()).or_insert_with(|| SeriesAcc {
            first: span,
            points: HashMap::new(),
        });
    }

    /// Add repetitions at coordinate `coord` of series `key`, merging with earlier ones.
    pub(crate) fn add(&mut self, key: SeriesKey, coord: usize, values: Vec<f64>, span: Span) {
        let coords = &self.coords;
        let acc = self.series.entry(key).or_insert_with(|| SeriesAcc {
            first: span,
            points: HashMap::new(),
        });
        match acc.points.entry(coord) {
            std::collections::hash_map::Entry::Occupied(mut o) => {
                o.get_mut().values.extend_from_slice(&values)
            }
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(Point::new(coords[coord].clone(), values).at(span));
            }
        }
    }

    /// Add a point known only by its statistics.
    pub(crate) fn add_summary(&mut self, key: SeriesKey, coord: usize, s: Summary, span: Span) {
        let c = self.coords[coord].clone();
        let acc = self.series.entry(key).or_insert_with(|| SeriesAcc {
            first: span,
            points: HashMap::new(),
        });
        acc.points.insert(coord, Point::from_summary(c, s).at(span));
    }

    /// Validate and build. `no_data` is the message for an input without any point.
    pub(crate) fn finish(self) -> Result<Experiment, Diagnostic> {
        let series: Vec<_> = self
            .series
            .iter()
            .filter(|(_, s)| !s.points.is_empty())
            .collect();
        if series.is_empty() {
            return Err(self.err(
                Span::new(0, self.text.len().min(1)),
                "the input holds no measurements",
            ));
        }
        if self.parameters.is_empty() {
            return Err(self.err(Span::new(0, 0), "the input declares no parameters"));
        }
        // Extra-P's rule: every series is measured at every coordinate of the experiment.
        for (key, acc) in series.iter().filter(|_| !self.any_points) {
            if let Some(missing) = (0..self.coords.len()).find(|i| !acc.points.contains_key(i)) {
                let have = acc.points.len();
                let total = self.coords.len();
                let coord = self.show(&self.coords[missing]);
                let at = self.coord_span[missing]
                    .map(|s| format!(", which line {} introduces", self.line_of(s)))
                    .unwrap_or_default();
                return Err(self
                    .err(
                        acc.first,
                        format!(
                            "series `{key}` has {have} of the experiment's {total} points: none at {coord}{at}"
                        ),
                    )
                    .with_hint("every callpath and metric must be measured at the same points (Extra-P rejects such files too)"));
            }
        }
        let mut exp = Experiment::new(self.parameters.clone());
        for (key, acc) in self.series {
            if acc.points.is_empty() {
                continue;
            }
            let mut pts: Vec<(usize, Point)> = acc.points.into_iter().collect();
            pts.sort_by_key(|(i, _)| *i);
            exp.series
                .insert(key, pts.into_iter().map(|(_, p)| p).collect());
        }
        exp.source = Some(Source {
            origin: self.origin.to_string(),
            text: Arc::from(self.text),
        });
        Ok(exp)
    }
}
