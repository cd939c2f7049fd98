//! The models page (`report --fit FILE`): each series' measured points (the statistic of
//! its repetitions the model was fitted to, with their range) against the fitted model
//! on log–log axes, and the model and its fit statistics beside the plot, as Extra-P's
//! users judge a model.

use perfcompose_core::fit::{FitOptions, Measure, Modeler};
use perfcompose_core::measure::{Experiment, Point, SeriesKey};
use perfcompose_core::Diagnostic;

use crate::page::{esc, Figure, Page};
use crate::plot::{Curve, LogLog};
use crate::{Error, MAX_FIGURES};

/// Size of one series' plot.
const SIZE: (u32, u32) = (560, 360);
/// Points on a model curve.
const CURVE_POINTS: usize = 120;

/// A measurements file read by the caller, with the name to show for it.
pub struct Input<'a> {
    pub origin: String,
    pub experiment: &'a Experiment,
}

/// (lowest, `measure`, highest) of a point's repetitions, or of the statistics a format
/// stored: the dot is the value the model was fitted to.
fn spread(p: &Point, measure: Measure) -> Option<[f64; 3]> {
    p.summary().map(|s| [s.minimum, s.get(measure), s.maximum])
}

fn key_name(k: &SeriesKey) -> String {
    let cp = if k.callpath.is_empty() {
        "<empty>"
    } else {
        &k.callpath
    };
    format!("{cp} / {}", k.metric)
}

/// The page for every series of `inputs`, fitted with `modeler`.
pub fn page(
    inputs: &[Input<'_>],
    modeler: &dyn Modeler,
    options: &FitOptions,
) -> Result<Page, Error> {
    let mut page = Page::new("perfcompose: fitted models");
    let total: usize = inputs.iter().map(|i| i.experiment.series.len()).sum();
    let measure = options.measure_for(modeler);
    page.para(&format!(
        "{total} series from {}; modeler {}; the repetitions at each point reduced by the {measure} for fitting. \
         Each plot shows that {measure} of the repetitions (dot) with their range (bar) and the model (line), on log-log axes; \
         y is the series' metric in the file's unit (ns in the files perfcompose measure and bench write).",
        {
            // A file of several parameter sets is several inputs of one origin.
            let mut origins: Vec<&str> = inputs.iter().map(|i| i.origin.as_str()).collect();
            origins.dedup();
            origins.join(", ")
        },
        modeler.name(),
    ));
    if total > MAX_FIGURES {
        page.note(&format!(
            "{total} series: the first {MAX_FIGURES} are drawn, and the table at the end lists every series' model and statistics."
        ));
    }
    let mut rows = Vec::new();
    let mut drawn = 0usize;
    for input in inputs {
        let exp = input.experiment;
        for (key, points) in &exp.series {
            let fit = modeler.fit(&exp.parameters, points, options).map_err(|e| {
                Diagnostic::whole(
                    input.origin.clone(),
                    format!("series {}: {e}", key_name(key)),
                )
            })?;
            // Coefficients to 4 significant digits: what a reader compares (the full
            // precision is in `fit --json`).
            let model = fit.model.rounded(4);
            let s = &fit.stats;
            rows.push(vec![
                input.origin.clone(),
                key_name(key),
                model.clone(),
                format!("{:.3}%", s.smape),
                format!("{:.4}", s.ar2),
                s.points.to_string(),
            ]);
            if drawn >= MAX_FIGURES {
                continue;
            }
            drawn += 1;
            let name = format!("model-{drawn:03}");
            let mut side = format!(
                "<p><b>{}</b><br>{}</p><p>model: <code>{}</code></p><p>SMAPE {:.3}%, R² {:.5}, adjusted R² {:.5}, RSS {:.4e}, {} points</p>",
                esc(&key_name(key)),
                esc(&input.origin),
                esc(&model),
                s.smape,
                s.r2,
                s.ar2,
                s.rss,
                s.points
            );
            if !s.coefficients.is_empty() {
                side.push_str(
                    "<table><tr><th>term</th><th>coefficient</th><th>± std. error</th></tr>",
                );
                for c in &s.coefficients {
                    side.push_str(&format!(
                        "<tr><td><code>{}</code></td><td>{}</td><td>{}</td></tr>",
                        esc(&c.term),
                        perfcompose_core::model::format_significant(c.value, 4),
                        c.std_error.map_or("–".into(), |e| {
                            perfcompose_core::model::format_significant(e, 2)
                        })
                    ));
                }
                side.push_str("</table>");
            }
            for w in &fit.warnings {
                side.push_str(&format!("<p class=\"miss\">{}</p>", esc(w)));
            }
            if exp.parameters.len() != 1 {
                side.push_str(&format!(
                    "<p>{} parameters ({}): plotted against the first, the points at every value of the others.</p>",
                    exp.parameters.len(),
                    esc(&exp.parameters.join(", "))
                ));
            }
            let chart = chart_of(exp, points, measure, &key.metric, &fit.model, &model);
            page.card(
                Figure {
                    name,
                    svg: chart.svg(SIZE)?,
                },
                &key_name(key),
                &side,
            );
        }
    }
    page.heading("All series");
    page.table(
        &["file", "series", "model", "SMAPE", "adj. R²", "points"],
        &rows,
    );
    Ok(page)
}

/// The plot of one series: points against the first parameter; the model drawn where
/// it has one parameter (with more, the points alone say how it varies).
fn chart_of(
    exp: &Experiment,
    points: &[Point],
    measure: Measure,
    metric: &str,
    model: &perfcompose_core::model::Expr,
    model_text: &str,
) -> LogLog {
    let first = exp
        .parameters
        .first()
        .cloned()
        .unwrap_or_else(|| "x".into());
    let measured: Vec<(f64, [f64; 3])> = points
        .iter()
        .filter_map(|p| Some((*p.coordinate.first()?, spread(p, measure)?)))
        .collect();
    let mut line = Vec::new();
    if exp.parameters.len() == 1 {
        let xs = measured.iter().map(|p| p.0).filter(|x| *x > 0.0);
        let lo = xs.clone().fold(f64::INFINITY, f64::min);
        let hi = xs.fold(0.0, f64::max);
        if lo.is_finite() && hi > 0.0 {
            let (a, b) = if hi > lo {
                (lo, hi)
            } else {
                (lo / 2.0, hi * 2.0)
            };
            for x in perfcompose_core::compose::grid::log_spaced(a, b, CURVE_POINTS) {
                if let Ok(y) = model.eval_at(&[(first.as_str(), x)]) {
                    line.push((x, y));
                }
            }
        }
    }
    let short = if model_text.len() > 60 {
        "model".to_string()
    } else {
        format!("model {model_text}")
    };
    LogLog {
        x_label: first,
        y_label: format!("{metric} ({measure}), the file's unit"),
        curves: vec![
            Curve {
                label: short,
                color: 0,
                line,
                width: 2,
                ..Curve::default()
            },
            Curve {
                label: format!("measured ({measure}, range)"),
                color: 1,
                points: measured,
                ..Curve::default()
            },
        ],
        ..LogLog::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dot_is_the_statistic_fitted_and_the_bar_the_range() {
        let p = Point::new(vec![8.0], vec![30.0, 10.0, 20.0, 60.0]);
        assert_eq!(spread(&p, Measure::Minimum), Some([10.0, 10.0, 60.0]));
        assert_eq!(spread(&p, Measure::Median), Some([10.0, 25.0, 60.0]));
        assert_eq!(spread(&p, Measure::Mean), Some([10.0, 30.0, 60.0]));
        assert_eq!(
            spread(&Point::new(vec![8.0], Vec::new()), Measure::Mean),
            None
        );
    }
}
