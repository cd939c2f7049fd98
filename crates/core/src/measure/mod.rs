//! Measurements: per (callpath, metric), a list of coordinates (one value per parameter)
//! with repeated measured values.
//!
//! This is the data the modelers fit and the benchmark harness writes. The file formats
//! (Extra-P text, JSON Lines, Extra-P JSON, CSV) live in submodules and all produce an
//! [`Experiment`].

use std::collections::BTreeMap;

/// One measured point: parameter values (in the experiment's parameter order) and the
/// repetitions measured there.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    pub coordinate: Vec<f64>,
    pub values: Vec<f64>,
}

impl Point {
    pub fn new(coordinate: Vec<f64>, values: Vec<f64>) -> Point {
        Point { coordinate, values }
    }
}

/// The identity of one modelled series.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SeriesKey {
    /// Callpath, with `->` separating nesting levels (Extra-P's convention).
    pub callpath: String,
    pub metric: String,
}

/// All measurements of one experiment.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Experiment {
    /// Parameter names, in coordinate order.
    pub parameters: Vec<String>,
    /// Points per series, in the order they were read.
    pub series: BTreeMap<SeriesKey, Vec<Point>>,
}

impl Experiment {
    pub fn new(parameters: Vec<String>) -> Experiment {
        Experiment {
            parameters,
            series: BTreeMap::new(),
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
}
