//! What a measurement yields: the statistics of each measured point ([`PointStats`]),
//! series of points over a sweep of sizes ([`Series`]), and their conversion to the
//! measurement files of the core crate (Extra-P's text format).

use perfcompose_core::measure::{Experiment, SeriesKey};
use serde::{Deserialize, Serialize};

use super::stats;
use crate::error::Error;

/// Metric name written to measurement files.
pub const METRIC: &str = "time";
/// Parameter name written to measurement files.
pub const PARAMETER: &str = "x";

/// Statistics of one measured point.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PointStats {
    pub x: u64,
    /// Time per call (kernels) or per element (programs) of each repetition, ns.
    pub values: Vec<f64>,
    pub median: f64,
    /// Coefficient of variation of `values`.
    pub cv: f64,
    /// 95% confidence interval of the median (equal to the median below 6 repetitions).
    pub ci_low: f64,
    pub ci_high: f64,
    /// Calls (kernels) or elements (programs) per repetition.
    pub batch: u64,
    /// Whether the adaptive target was reached (always true without a target).
    pub converged: bool,
    /// A pipeline stage's unit test ([`Stage`]): the mean call time of each window of
    /// [`PHASE_WINDOW`] consecutive calls over its repetition's mean, every repetition
    /// pooled, as [`PHASE_QUANTILES`] quantiles in ascending order (empty for other
    /// measurements): how the stage's slow and fast phases spread, for the stochastic
    /// `max` of a pipeline (`bench::tandem::phase_hinges`).
    ///
    /// [`Stage`]: super::conditions::Stage
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<f64>,
}

/// Calls per window of a stage's phases ([`PointStats::phases`]): the runtime's queue
/// capacity, as a queue absorbs the swings of shorter stretches.
pub const PHASE_WINDOW: usize = crate::ctx::DEFAULT_CAPACITY;
/// Quantiles kept of a stage's phases ([`PointStats::phases`]).
pub const PHASE_QUANTILES: usize = 64;

/// What a series measured: a kernel's unit test or a whole program.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SeriesKind {
    /// A kernel's unit performance test: ns per call.
    Kernel,
    /// A whole program's measurement: ns per element.
    Program,
}

impl SeriesKind {
    /// The name written for this kind (`kernel`, `program`), as serde writes it.
    pub fn name(self) -> &'static str {
        match self {
            SeriesKind::Kernel => "kernel",
            SeriesKind::Program => "program",
        }
    }
}

/// A measured series: one kernel or one program over the sweep.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Series {
    /// Kernel name or term.
    pub name: String,
    pub kind: SeriesKind,
    pub unit: &'static str,
    pub parameter: &'static str,
    pub points: Vec<PointStats>,
}

impl Series {
    /// A kernel's unit performance test (ns per call over `x`).
    pub fn kernel(name: impl Into<String>, points: Vec<PointStats>) -> Series {
        Series {
            name: name.into(),
            kind: SeriesKind::Kernel,
            unit: "ns",
            parameter: PARAMETER,
            points,
        }
    }

    /// A whole program's measurement (ns per element over `x`).
    pub fn program(name: impl Into<String>, points: Vec<PointStats>) -> Series {
        Series {
            kind: SeriesKind::Program,
            ..Series::kernel(name, points)
        }
    }
}

impl PointStats {
    /// Statistics of repetitions pooled from several measurements (batch unknown: 0; the
    /// confidence target not checked: `converged` false).
    pub fn of(x: u64, values: Vec<f64>) -> PointStats {
        PointStats::summarise(x, values, 0, false)
    }

    /// The statistics of the repetitions `values` at size `x`, taken `batch` calls or
    /// elements at a time; `converged` says whether the adaptive target was reached.
    pub fn summarise(x: u64, values: Vec<f64>, batch: u64, converged: bool) -> PointStats {
        let median = stats::median(&values);
        let (ci_low, ci_high) = stats::median_ci(&values).unwrap_or((median, median));
        PointStats {
            x,
            cv: stats::cv(&values),
            median,
            ci_low,
            ci_high,
            values,
            batch,
            converged,
            phases: Vec::new(),
        }
    }
}

/// The series as measurements: parameter `x`, metric `time` (ns), one callpath per series
/// (the kernel name or the term), one value per repetition.
pub fn to_experiment(series: &[Series]) -> Experiment {
    let mut e = Experiment::new(vec![PARAMETER.to_string()]);
    for s in series {
        let key = SeriesKey {
            callpath: s.name.clone(),
            metric: METRIC.to_string(),
        };
        for p in &s.points {
            e.push(key.clone(), vec![p.x as f64], p.values.clone());
        }
    }
    e
}

/// Series grouped by their sweep: Extra-P's text format needs every series of a file at
/// the same points, so series measured over different sizes go to different files. Each
/// group is named after its first series.
pub fn group_by_sweep(series: &[Series]) -> Vec<(String, Vec<Series>)> {
    let mut groups: Vec<(Vec<u64>, String, Vec<Series>)> = Vec::new();
    for s in series {
        let mut xs: Vec<u64> = s.points.iter().map(|p| p.x).collect();
        xs.sort_unstable();
        match groups.iter_mut().find(|g| g.0 == xs) {
            Some(g) => g.2.push(s.clone()),
            None => groups.push((xs, s.name.clone(), vec![s.clone()])),
        }
    }
    groups.into_iter().map(|(_, n, s)| (n, s)).collect()
}

/// Extra-P's text format for an experiment (the writer of `perfcompose_core::measure`;
/// every series must share the same points, see [`group_by_sweep`]).
pub fn extrap_text(e: &Experiment) -> Result<String, Error> {
    perfcompose_core::measure::text::write(e).map_err(Error::ExtrapText)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_series_kind_is_written_by_its_name() {
        for kind in [SeriesKind::Kernel, SeriesKind::Program] {
            let json = serde_json::to_string(&kind).unwrap();
            assert_eq!(json, format!("\"{}\"", kind.name()));
            assert_eq!(serde_json::from_str::<SeriesKind>(&json).unwrap(), kind);
        }
        assert_eq!(Series::kernel("inc", Vec::new()).kind, SeriesKind::Kernel);
        assert_eq!(Series::program("inc", Vec::new()).kind, SeriesKind::Program);
    }
}
