//! Empirical modelers: measurements → models with fit statistics (Extra-P's job).
//!
//! A [`Modeler`] turns the points of one series (coordinates with repeated measurements)
//! into a [`Fit`]: a model in PMNF with exact rational exponents plus its statistics (RSS,
//! SMAPE, adjusted R², coefficient standard errors, and the coefficient of variation of the
//! repetitions at every point). Modelers are an open set behind one trait with a registry
//! ([`modelers`], [`modeler`]) that the CLI lists by name:
//!
//! | name | what it does |
//! |---|---|
//! | `perfcompose` (default) | weighted (relative-error) fits, noise estimated from the repetitions, term significance against that noise, two terms where one parameter acts alone and the data supports them, multi-parameter exponents chosen from all lines at once, Extra-P's choice where the evidence is a tie ([`refined`]) |
//! | `extrap` | Extra-P 4.2.5's default modeler reproduced: 42 single-term hypotheses, leave-one-out SMAPE, line-based multi-parameter combination ([`extrap`]) |
//! | `segmented` | one parameter: the default modeler, or two of its models joined at a break where the measurements step (a cache level) and no single model follows them ([`segmented`]) |
//!
//! Besides the modelers, [`basis::fit_basis`] fits user-given basis functions (`1, N, M`)
//! by linear least squares, as the divide-and-conquer paper fits its per-block cost functions, and
//! [`synth`] generates seeded synthetic measurements with known true models for tests and
//! the benchmark (`crates/core/examples/fit_bench.rs`, results in `docs/fitting.md`).
//!
//! ```
//! use perfcompose_core::fit::{modeler, FitOptions};
//! use perfcompose_core::measure::Point;
//! let points: Vec<Point> = [8.0, 16.0, 32.0, 64.0, 128.0]
//!     .iter()
//!     .map(|&x: &f64| Point::new(vec![x], vec![3.0 + 0.5 * x * x.log2()]))
//!     .collect();
//! let fit = modeler("perfcompose").unwrap()
//!     .fit(&["x".to_string()], &points, &FitOptions::default())
//!     .unwrap();
//! assert_eq!(fit.model.rounded(3), "3 + 0.5 * x * log2(x)");
//! ```

pub mod basis;
pub mod data;
pub mod extrap;
pub mod file;
pub mod lsq;
pub mod output;
pub mod refined;
pub mod segmented;
pub mod space;
pub mod synth;

pub use crate::measure::Measure;
use crate::measure::Point;
use crate::model::{Expr, Monomial, Pmnf};

pub use basis::{fit_basis, parse_basis, BasisFit};
pub use data::Prepared;
pub use file::{fit_component, fit_series};

/// Options every modeler understands.
#[derive(Clone, Debug, Default)]
pub struct FitOptions {
    /// The statistic of each point's repetitions the model is fitted to; `None`: the
    /// modeler's own ([`Modeler::default_measure`]: [`Measure::default`], the minimum,
    /// for every modeler but Extra-P's, which fits the mean).
    pub measure: Option<Measure>,
    /// Accept negative values (a metric that can be negative); by default a negative
    /// value is an error, as it is for the readers.
    pub allow_negative: bool,
    /// Values of the (single) parameter at which the data fills a cache level: the
    /// measurements may step between half such a value and the value. Given any, the
    /// segmented modeler breaks only there, with fewer sizes on a side
    /// ([`segmented::HINTED_MIN_SEGMENT`]); the other modelers ignore them.
    pub breaks: Vec<f64>,
}

impl FitOptions {
    /// The statistic `modeler` fits with these options.
    pub fn measure_for(&self, modeler: &dyn Modeler) -> Measure {
        self.measure.unwrap_or_else(|| modeler.default_measure())
    }
}

/// Why a series could not be fitted. Messages are lower-case and name the coordinate; the
/// caller adds the file and series.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum FitError {
    #[error("no points to fit")]
    NoPoints,
    #[error("point {coordinate} has no values")]
    EmptyPoint { coordinate: String },
    #[error("point {coordinate} has {got} coordinates, the experiment has {expected} parameters")]
    Dimension {
        coordinate: String,
        got: usize,
        expected: usize,
    },
    #[error(
        "parameter `{parameter}` has the value {value}; parameters must be finite and non-negative"
    )]
    BadCoordinate { parameter: String, value: f64 },
    #[error("value {value} at point {coordinate} is not a finite number")]
    NonFinite { coordinate: String, value: f64 },
    #[error(
        "value {value} at point {coordinate} is negative; measured costs must be non-negative"
    )]
    Negative { coordinate: String, value: f64 },
    #[error("{0}")]
    Basis(String),
    #[error("too few points: {got} distinct coordinates, {what} needs at least {need}")]
    TooFewPoints {
        got: usize,
        need: usize,
        what: String,
    },
}

/// One fitted coefficient with its standard error.
#[derive(Clone, Debug, PartialEq)]
pub struct Coefficient {
    /// The term it multiplies, in Extra-P syntax (`1` for the constant, `x^(3/2)`, or the
    /// basis function as the user wrote it).
    pub term: String,
    pub value: f64,
    /// `None` when there are no residual degrees of freedom to estimate it.
    pub std_error: Option<f64>,
}

/// Statistics of a fitted model over the points it was fitted to (in-sample; on the
/// selected measure of each point).
#[derive(Clone, Debug, PartialEq)]
pub struct FitStats {
    /// Residual sum of squares.
    pub rss: f64,
    /// Symmetric mean absolute percentage error, in percent (Extra-P's definition:
    /// mean of `2|p − a| / (|a| + |p|)`, points with `a = p = 0` count as 0).
    pub smape: f64,
    /// Coefficient of determination.
    pub r2: f64,
    /// Adjusted R²: `1 − (RSS/(n − k)) / (TSS/(n − 1))` with `k` coefficients; 1 for a
    /// perfect fit, `NaN` when `n ≤ k`.
    pub ar2: f64,
    /// The coefficients, constant first, with standard errors.
    pub coefficients: Vec<Coefficient>,
    /// The covariance matrix of the coefficients, in their order (`s²·(AᵀWA)⁻¹` with
    /// `s²` the residual variance); `None` without residual degrees of freedom. The
    /// standard errors are the square roots of its diagonal. A segmented model's pieces
    /// are fitted apart: its matrix is block-diagonal.
    pub covariance: Option<Vec<Vec<f64>>>,
    /// Number of distinct coordinates.
    pub points: usize,
}

/// Per-point facts a user checks a fit against (the divide-and-conquer paper's Table 1 lists the coefficient
/// of variation of the repetitions).
#[derive(Clone, Debug, PartialEq)]
pub struct PointStats {
    pub coordinate: Vec<f64>,
    pub value: f64,
    pub predicted: f64,
    /// Sample standard deviation over mean of the repetitions; `None` with one repetition.
    pub cv: Option<f64>,
}

/// A fitted model with its statistics.
#[derive(Clone, Debug, PartialEq)]
pub struct Fit {
    pub parameters: Vec<String>,
    pub model: Expr,
    pub stats: FitStats,
    pub points: Vec<PointStats>,
    /// Fallbacks taken (too few points for more than a constant, ...).
    pub warnings: Vec<String>,
}

impl Fit {
    /// The model as PMNF (every modeler's model is, except a segmented one; a basis fit
    /// may not be).
    pub fn pmnf(&self) -> Option<&Pmnf> {
        self.model.as_pmnf()
    }
}

/// An empirical modeler: the points of one series → a model.
pub trait Modeler: Sync {
    /// The name the CLI selects it by (`--modeler NAME`).
    fn name(&self) -> &'static str;
    /// One line for `perfcompose fit --list-modelers`.
    fn description(&self) -> &'static str;
    /// The statistic it fits when [`FitOptions::measure`] names none.
    fn default_measure(&self) -> Measure {
        Measure::default()
    }
    /// Fit one series. `parameters` names the coordinates of every point.
    fn fit(
        &self,
        parameters: &[String],
        points: &[Point],
        options: &FitOptions,
    ) -> Result<Fit, FitError>;
}

/// The modeler used when none is named.
pub const DEFAULT_MODELER: &str = "perfcompose";

pub(crate) static REFINED: refined::Refined = refined::Refined::DEFAULT;
static EXTRAP: extrap::ExtraP = extrap::ExtraP;
static SEGMENTED: segmented::Segmented = segmented::Segmented::DEFAULT;

/// Every registered modeler, the default first.
pub fn modelers() -> Vec<&'static dyn Modeler> {
    vec![&REFINED, &EXTRAP, &SEGMENTED]
}

/// The modeler called `name`.
pub fn modeler(name: &str) -> Option<&'static dyn Modeler> {
    modelers().into_iter().find(|m| m.name() == name)
}

/// The value of monomial `m` at a coordinate (in `parameters` order).
pub(crate) fn eval_monomial(m: &Monomial, parameters: &[String], coordinate: &[f64]) -> f64 {
    let mut v = 1.0;
    for (name, pw) in m.factors() {
        let l = parameters
            .iter()
            .position(|p| p == name)
            .expect("fitted monomials only use the series' parameters");
        v *= space::eval_power(pw, coordinate[l]);
    }
    v
}

/// Statistics for a model `Σ coef_j · columns_j` over `data` (weights are those the
/// coefficients were fitted with; standard errors come from the weighted problem).
pub(crate) fn statistics(
    data: &Prepared,
    labels: Vec<String>,
    columns: &[Vec<f64>],
    coef: &[f64],
    weights: Option<&[f64]>,
) -> (FitStats, Vec<f64>) {
    let n = data.len();
    let k = coef.len();
    let predicted: Vec<f64> = (0..n)
        .map(|i| columns.iter().zip(coef).map(|(c, b)| c[i] * b).sum())
        .collect();
    let mut rss = 0.0;
    let mut smape = 0.0;
    let mut wrss = 0.0;
    for i in 0..n {
        let d = predicted[i] - data.y[i];
        rss += d * d;
        wrss += weights.map_or(1.0, |w| w[i]) * d * d;
        let s = data.y[i].abs() + predicted[i].abs();
        if s != 0.0 {
            smape += 2.0 * d.abs() / s;
        }
    }
    smape = smape / n as f64 * 100.0;
    let mean = data.y.iter().sum::<f64>() / n as f64;
    let tss: f64 = data.y.iter().map(|v| (v - mean) * (v - mean)).sum();
    let r2 = if tss > 0.0 {
        1.0 - rss / tss
    } else if rss == 0.0 {
        1.0
    } else {
        0.0
    };
    let ar2 = if n > k && tss > 0.0 {
        1.0 - (rss / (n - k) as f64) / (tss / (n - 1) as f64)
    } else if n > k && rss == 0.0 {
        1.0
    } else {
        f64::NAN
    };
    let cols: Vec<&[f64]> = columns.iter().map(|c| c.as_slice()).collect();
    let cov = lsq::lstsq(&cols, &data.y, weights, true)
        .ok()
        .and_then(|s| s.cov);
    let s2 = (n > k).then(|| wrss / (n - k) as f64);
    let covariance = match (&cov, s2) {
        (Some(c), Some(s2)) => Some(
            c.iter()
                .map(|row| row.iter().map(|v| v * s2).collect())
                .collect(),
        ),
        _ => None,
    };
    let coefficients = labels
        .into_iter()
        .zip(coef)
        .enumerate()
        .map(|(j, (term, &value))| Coefficient {
            term,
            value,
            std_error: match (&cov, s2) {
                (Some(c), Some(s2)) => Some((c[j][j] * s2).max(0.0).sqrt()),
                _ => None,
            },
        })
        .collect();
    (
        FitStats {
            rss,
            smape,
            r2,
            ar2,
            coefficients,
            covariance,
            points: n,
        },
        predicted,
    )
}

/// Assemble a [`Fit`] for a PMNF model whose coefficients are already fitted.
pub(crate) fn finish_pmnf(
    parameters: &[String],
    data: &Prepared,
    model: Pmnf,
    weights: Option<&[f64]>,
    warnings: Vec<String>,
) -> Fit {
    let mut labels = Vec::new();
    let mut columns = Vec::new();
    let mut coef = Vec::new();
    for (c, m) in model.terms() {
        labels.push(if m.is_constant() {
            "1".to_string()
        } else {
            Pmnf::term(1.0, m.clone())
                .extrap()
                .trim_start_matches("1 * ")
                .to_string()
        });
        columns.push(
            data.coords
                .iter()
                .map(|x| eval_monomial(m, parameters, x))
                .collect(),
        );
        coef.push(c);
    }
    let (stats, predicted) = statistics(data, labels, &columns, &coef, weights);
    Fit {
        parameters: parameters.to_vec(),
        model: Expr::poly(model),
        stats,
        points: point_stats(data, &predicted),
        warnings,
    }
}

pub(crate) fn point_stats(data: &Prepared, predicted: &[f64]) -> Vec<PointStats> {
    (0..data.len())
        .map(|i| PointStats {
            coordinate: data.coords[i].clone(),
            value: data.y[i],
            predicted: predicted[i],
            cv: data.cv[i],
        })
        .collect()
}

#[cfg(test)]
mod tests;
