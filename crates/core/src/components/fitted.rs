//! Components fitted from measurements (`measurements = "file"`): the model, the range
//! of each parameter the measurements cover (for extrapolation warnings), and the
//! model's uncertainty (bootstrap refits, [`crate::uncertainty::fitted`]).

use std::collections::BTreeMap;
use std::path::Path;

use super::{Fitted, Fitter};
use crate::diag::Diagnostic;
use crate::fit::{fit_series, FitOptions, Measure, Modeler, REFINED};
use crate::measure::Point;
use crate::uncertainty::{self, DEFAULT_REPLICATES, DEFAULT_SEED};

/// The fitter components files use for `measurements = "file"`: a modeler and its
/// options, plugged into [`super::LoadOptions::fitter`].
pub struct ComponentFitter {
    pub modeler: &'static dyn Modeler,
    pub options: FitOptions,
    /// Bootstrap refits for the model's uncertainty (0: none).
    pub replicates: usize,
}

/// The default modeler on its default statistic ([`Measure::default`], the minimum of
/// the repetitions): what `perfcompose predict` fits components with.
pub static DEFAULT_FITTER: ComponentFitter = ComponentFitter {
    modeler: &REFINED,
    options: FitOptions {
        measure: None,
        allow_negative: false,
        breaks: Vec::new(),
    },
    replicates: DEFAULT_REPLICATES,
};

/// The smallest and largest value of each parameter over `points`.
pub fn measured_ranges(parameters: &[String], points: &[Point]) -> BTreeMap<String, [f64; 2]> {
    parameters
        .iter()
        .enumerate()
        .filter_map(|(i, name)| {
            let values = points.iter().filter_map(|p| p.coordinate.get(i).copied());
            let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                (lo.min(v), hi.max(v))
            });
            (lo <= hi).then(|| (name.clone(), [lo, hi]))
        })
        .collect()
}

impl Fitter for ComponentFitter {
    fn fit(
        &self,
        component: &str,
        path: &Path,
        callpath: Option<&str>,
        measure: Option<Measure>,
    ) -> Result<Fitted, Diagnostic> {
        let options = FitOptions {
            measure: Some(measure.unwrap_or_else(|| self.options.measure_for(self.modeler))),
            ..self.options.clone()
        };
        let (fit, points) = fit_series(component, path, callpath, self.modeler, &options)?;
        let uncertainty = (self.replicates > 0)
            .then(|| {
                uncertainty::fitted(
                    component,
                    &fit,
                    self.modeler,
                    &points,
                    &options,
                    self.replicates,
                    DEFAULT_SEED,
                )
            })
            .flatten();
        Ok(Fitted {
            measured: measured_ranges(&fit.parameters, &points),
            model: fit.model,
            uncertainty,
            measure: options.measure_for(self.modeler),
        })
    }
}
