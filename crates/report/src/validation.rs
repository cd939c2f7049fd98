//! The validation page (`report --validate DIR`, a run `validate --save DIR` kept): per
//! configuration, the measured time per element against the composed prediction at each
//! size, and the error per point against the row's target.

use std::path::Path;

use perfcompose_runtime::validate::{self, Options, Report, Row, SavedRun, Summary, Verdict};

use crate::page::{esc, Figure, Page};
use crate::plot::{Curve, LogLog};
use crate::{Error, MAX_FIGURES};

const SIZE: (u32, u32) = (520, 340);

/// The report of a saved run, analysed again as `validate --from DIR` does with its
/// defaults (the run's cores, caches, statistic and calibration), and the configurations
/// the run has no measurements of.
pub fn reanalyze_saved(dir: &Path) -> Result<(Report, Vec<String>), perfcompose_runtime::Error> {
    let run = SavedRun::open(dir)?;
    let suite = run.suite()?;
    let defaults = Options::default();
    let opts = Options {
        cores: run.manifest.cores,
        overhead: run.calibration()?,
        measure: run.manifest.measure.parse().unwrap_or(defaults.measure),
        caches: run.manifest.caches_bytes.clone(),
        ..defaults
    };
    let registry = perfcompose_runtime::Registry::builtin();
    let again = validate::reanalyze(&suite, &run, &registry, &opts)?;
    Ok((again.report, again.missing))
}

fn verdict(v: Verdict) -> (&'static str, &'static str) {
    match v {
        Verdict::Within => ("within target", "ok"),
        Verdict::Miss => ("missed", "miss"),
        Verdict::MissWithinRepeat => ("missed, within the program's own variation", "miss"),
        Verdict::ReportedOnly => ("reported only (more threads than cores)", ""),
    }
}

/// Signed error of the prediction at a point, in percent of the measured value.
fn error_percent(measured: f64, predicted: f64) -> f64 {
    (predicted - measured) / measured * 100.0
}

/// The page of a validation report; `source` names the saved run.
pub fn page(report: &Report, source: &str) -> Result<Page, Error> {
    let mut page = Page::new("perfcompose: validation");
    let summary = Summary::under(&report.rows, report.rule);
    page.para(&format!(
        "Saved run {source}: suite {}, {} configurations on {} cores, statistic {}. \
         {} of {} judged rows within target; median time error {}; rule: median ≤ {:.0}% and ≥ {:.0}% of rows within target ({}).",
        report.suite,
        report.rows.len(),
        report.cores,
        format!("{:?}", report.measure).to_lowercase(),
        summary.within_target,
        summary.judged,
        summary
            .median_error
            .map_or("–".to_string(), |m| format!("{:.1}%", m * 100.0)),
        report.rule.median_error * 100.0,
        report.rule.share_within * 100.0,
        if summary.meets_target { "met" } else { "not met" },
    ));
    let mut table = Vec::new();
    for r in &report.rows {
        table.push(vec![
            r.configuration.clone(),
            r.threads.to_string(),
            format!("{:.1}%", r.time_error * 100.0),
            r.target
                .map_or("–".to_string(), |t| format!("{:.0}%", t * 100.0)),
            verdict(r.verdict()).0.to_string(),
        ]);
    }
    page.table(
        &[
            "configuration",
            "threads",
            "time error",
            "target",
            "verdict",
        ],
        &table,
    );
    page.heading("Error per point");
    page.card(
        Figure {
            name: "validation-errors".into(),
            svg: errors_chart(&report.rows[..report.rows.len().min(10)]).svg((760, 400))?,
        },
        "(predicted − measured) / measured at each size; dashed: ± the target",
        "<p>Each line is a configuration (the first ten); a point above zero means the prediction is slower than the measured program.</p>",
    );
    if report.rows.len() > MAX_FIGURES {
        page.note(&format!(
            "{} configurations: the first {MAX_FIGURES} are drawn; the table above lists all.",
            report.rows.len()
        ));
    }
    page.heading("Measured and predicted, per configuration");
    for (i, r) in report.rows.iter().take(MAX_FIGURES).enumerate() {
        let (text, class) = verdict(r.verdict());
        let mut side = format!(
            "<p><b><code>{}</code></b> ({}), {} threads: <span class=\"{class}\">{text}</span></p>\
             <p>time error {:.1}%, coefficient error {:.1}%{}</p><p>modular model: <code>{}</code></p><p>monolithic model: <code>{}</code></p>",
            esc(&r.configuration),
            esc(&r.group),
            r.threads,
            r.time_error * 100.0,
            r.coefficient_error * 100.0,
            r.repeat_error
                .map_or(String::new(), |e| format!(", program vs itself {:.1}%", e * 100.0)),
            esc(&r.modular.rounded(4)),
            esc(&r.monolithic.rounded(4)),
        );
        side.push_str(
            "<table><tr><th>x</th><th>measured</th><th>predicted</th><th>error</th></tr>",
        );
        for p in &r.points {
            side.push_str(&format!(
                "<tr><td>{}</td><td>{:.4}</td><td>{:.4}</td><td>{:+.1}%</td></tr>",
                p.x,
                p.measured,
                p.predicted,
                error_percent(p.measured, p.predicted)
            ));
        }
        side.push_str("</table>");
        page.card(
            Figure {
                name: format!("validation-{:03}", i + 1),
                svg: row_chart(r).svg(SIZE)?,
            },
            &r.configuration,
            &side,
        );
    }
    Ok(page)
}

/// Measured points (with the CV as their spread) and the predicted line of one row.
fn row_chart(r: &Row) -> LogLog {
    let measured = r
        .points
        .iter()
        .map(|p| {
            let d = p.measured * p.cv;
            (p.x as f64, [p.measured - d, p.measured, p.measured + d])
        })
        .collect();
    let predicted = r.points.iter().map(|p| (p.x as f64, p.predicted)).collect();
    LogLog {
        x_label: "x".into(),
        y_label: "time per element [ns]".into(),
        curves: vec![
            Curve {
                label: "predicted".into(),
                color: 0,
                line: predicted,
                width: 2,
                ..Curve::default()
            },
            Curve {
                label: "measured (± CV)".into(),
                color: 1,
                points: measured,
                ..Curve::default()
            },
        ],
        ..LogLog::default()
    }
}

/// The error per point of each row, in percent, with the target drawn.
fn errors_chart(rows: &[Row]) -> LogLog {
    let curves = rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let line: Vec<(f64, f64)> = r
                .points
                .iter()
                .map(|p| (p.x as f64, error_percent(p.measured, p.predicted)))
                .collect();
            Curve {
                label: r.configuration.clone(),
                color: i,
                points: line.iter().map(|&(x, y)| (x, [y, y, y])).collect(),
                line,
                width: 1,
                ..Curve::default()
            }
        })
        .collect();
    let target = rows.iter().filter_map(|r| r.target).fold(0.0, f64::max);
    let hlines = if target > 0.0 {
        vec![
            (target * 100.0, format!("target ±{:.0}%", target * 100.0)),
            (-target * 100.0, String::new()),
        ]
    } else {
        Vec::new()
    };
    LogLog {
        x_label: "x".into(),
        y_label: "prediction error [%]".into(),
        curves,
        linear_y: true,
        hlines,
        ..LogLog::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_error_is_signed_relative_to_the_measurement() {
        assert_eq!(error_percent(100.0, 110.0), 10.0);
        assert_eq!(error_percent(100.0, 95.0), -5.0);
    }
}
