//! The validation page (`report --validate DIR`, a run `validate --save DIR` kept): per
//! configuration, the measured time per element against the composed prediction and
//! its one-run interval at each size, and the error per point over the rounds (median
//! and 95% interval) against the row's own target, with each row's verdict.

use std::path::Path;

use perfcompose_runtime::validate::verdict::{ErrorInterval, MIN_ROUNDS};
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
    let defaults = Options::default();
    let opts = Options {
        cores: run.manifest.cores,
        overhead: run.calibration()?,
        measure: run.manifest.measure.parse().unwrap_or(defaults.measure),
        caches: run.manifest.caches_bytes.clone(),
        ..defaults
    };
    if run.manifest.program.is_some() {
        return Ok((
            validate::program::reanalyze_program(&run, &opts)?,
            Vec::new(),
        ));
    }
    let suite = run.suite()?;
    let registry = perfcompose_runtime::Registry::builtin();
    let again = validate::reanalyze(&suite, &run, &registry, &opts)?;
    Ok((again.report, again.missing))
}

fn verdict(v: Verdict) -> (&'static str, &'static str) {
    match v {
        Verdict::Within => ("within target", "ok"),
        Verdict::Miss => ("missed", "miss"),
        Verdict::Undecided => ("undecided", ""),
        Verdict::ReportedOnly => ("reported only", ""),
    }
}

/// Signed error of the prediction at a point, in percent of the measured value.
fn error_percent(measured: f64, predicted: f64) -> f64 {
    (predicted - measured) / measured * 100.0
}

/// The rows drawn one figure each, at most `max`: every missed row, then the others in
/// the report's order; and the configurations left out.
pub fn drawn(rows: &[Row], max: usize) -> (Vec<&Row>, Vec<&str>) {
    let missed = rows.iter().filter(|r| r.verdict() == Verdict::Miss).count();
    let mut room = max.saturating_sub(missed);
    let mut shown = Vec::new();
    let mut left = Vec::new();
    for r in rows {
        if r.verdict() == Verdict::Miss {
            shown.push(r);
        } else if room > 0 {
            room -= 1;
            shown.push(r);
        } else {
            left.push(r.configuration.as_str());
        }
    }
    (shown, left)
}

/// A row's error interval, as text.
fn interval_text(r: &Row) -> String {
    match r.rounds.as_ref().and_then(|x| x.worst()) {
        Some(ErrorInterval {
            x,
            median,
            low: Some(lo),
            high: Some(hi),
        }) => format!(
            "{:+.1}% [{:+.1}%, {:+.1}%] at x = {x}",
            median * 100.0,
            lo * 100.0,
            hi * 100.0
        ),
        _ => "–".to_string(),
    }
}

/// The page of a validation report; `source` names the saved run.
pub fn page(report: &Report, source: &str) -> Result<Page, Error> {
    let mut page = Page::new("perfcompose: validation");
    let summary = Summary::under(&report.rows, report.rule);
    let dc = &summary.design_choices;
    page.para(&format!(
        "Saved run {source}: suite {}, {} configurations on {} cores, statistic {}. \
         Of {} judged rows, {} within target, {} missed, {} undecided; rule: at most {:.0}% missed and {:.0}% undecided ({}). \
         Rounds: {}. One-run {:.0}% intervals held {} of {} runs. \
         Design choices: {} right of {} decided pairs ({} too close to call).",
        report.suite,
        report.rows.len(),
        report.cores,
        format!("{:?}", report.measure).to_lowercase(),
        summary.judged,
        summary.within_target,
        summary.misses,
        summary.undecided,
        report.rule.misses * 100.0,
        report.rule.undecided * 100.0,
        if summary.meets_target { "met" } else { "not met" },
        summary.budget.map_or_else(
            || format!("fewer than {MIN_ROUNDS}, decided nothing (a run saved before rounds)"),
            |b| b.to_string()
        ),
        report
            .rows
            .iter()
            .flat_map(|r| r.points.iter().filter_map(|p| p.interval))
            .map(|i| i.level)
            .next()
            .unwrap_or(validate::DEFAULT_LEVEL)
            * 100.0,
        summary.coverage.inside,
        summary.coverage.runs,
        dc.right,
        dc.decided_pairs,
        dc.too_close,
    ));
    for w in &dc.wrong {
        page.note(&format!(
            "wrong choice at x = {}: predicted {} faster than {}, measured {:.1}% slower",
            w.x,
            w.slower,
            w.faster,
            (w.measured_log_ratio.exp() - 1.0) * 100.0
        ));
    }
    let mut table = Vec::new();
    for r in &report.rows {
        table.push(vec![
            r.configuration.clone(),
            r.threads.to_string(),
            format!("{:.1}%", r.time_error * 100.0),
            interval_text(r),
            r.rounds.as_ref().map_or(1, |x| x.count).to_string(),
            format!("{} of {}", r.coverage.inside, r.coverage.runs),
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
            "error, median [95% interval] over rounds",
            "rounds",
            "runs in one-run interval",
            "target",
            "verdict",
        ],
        &table,
    );
    page.heading("Error per point");
    page.card(
        Figure {
            name: "validation-errors".into(),
            svg: errors_chart(&report.rows).svg((760, 400))?,
        },
        "(predicted − measured) / measured at each size: median over the rounds and its 95% interval; dashed: ± each target",
        "<p>Each line is a configuration; a point above zero means the prediction is slower than the measured program.</p>",
    );
    let (shown, left) = drawn(&report.rows, MAX_FIGURES);
    if !left.is_empty() {
        page.note(&format!(
            "{} configurations: {} are drawn below (every missed one among them); left out: {}. The table above lists all.",
            report.rows.len(),
            shown.len(),
            left.join("; ")
        ));
    }
    page.heading("Measured and predicted, per configuration");
    for (i, r) in shown.into_iter().enumerate() {
        let (text, class) = verdict(r.verdict());
        let mut side = format!(
            "<p><b><code>{}</code></b> ({}), {} threads: <span class=\"{class}\">{text}</span></p>\
             <p>error over {} rounds {}; time error {:.1}%, coefficient error {:.1}%{}</p><p>modular model: <code>{}</code></p><p>monolithic model: <code>{}</code></p>",
            esc(&r.configuration),
            esc(&r.group),
            r.threads,
            r.rounds.as_ref().map_or(1, |x| x.count),
            esc(&interval_text(r)),
            r.time_error * 100.0,
            r.coefficient_error * 100.0,
            r.repeat_error
                .map_or(String::new(), |e| format!(", program vs itself {:.1}%", e * 100.0)),
            esc(&r.modular.rounded(4)),
            esc(&r.monolithic.rounded(4)),
        );
        side.push_str(
            "<table><tr><th>x</th><th>measured</th><th>predicted</th><th>one run</th><th>error</th></tr>",
        );
        for p in &r.points {
            side.push_str(&format!(
                "<tr><td>{}</td><td>{:.4}</td><td>{:.4}</td><td>{}</td><td>{:+.1}%</td></tr>",
                p.x,
                p.measured,
                p.predicted,
                p.interval.map_or("–".to_string(), |i| format!(
                    "{:.4} – {:.4}",
                    i.low, i.high
                )),
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
    let band: Vec<(f64, f64, f64)> = r
        .points
        .iter()
        .filter_map(|p| Some((p.x as f64, p.interval?.low, p.interval?.high)))
        .collect();
    LogLog {
        x_label: "x".into(),
        y_label: "time per element [ns]".into(),
        curves: vec![
            Curve {
                label: if band.is_empty() {
                    "predicted".into()
                } else {
                    "predicted, and one run's interval".into()
                },
                color: 0,
                line: predicted,
                width: 2,
                band: (!band.is_empty()).then_some(band),
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

/// The error per point of each row, in percent: the median over its rounds with the
/// 95% interval as its bar (the pooled point's error without rounds), with each target
/// of the judged rows drawn.
fn errors_chart(rows: &[Row]) -> LogLog {
    let curves = rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let intervals = r.rounds.as_ref().map(|x| x.intervals()).unwrap_or_default();
            let points: Vec<(f64, [f64; 3])> = r
                .points
                .iter()
                .map(|p| {
                    let pooled = error_percent(p.measured, p.predicted);
                    match intervals.iter().find(|e| e.x == p.x) {
                        Some(e) => {
                            let m = e.median * 100.0;
                            [
                                e.low.map_or(m, |v| v * 100.0),
                                m,
                                e.high.map_or(m, |v| v * 100.0),
                            ]
                        }
                        None => [pooled, pooled, pooled],
                    }
                })
                .zip(&r.points)
                .map(|(v, p)| (p.x as f64, v))
                .collect();
            Curve {
                label: format!("{} ({})", r.configuration, verdict(r.verdict()).0),
                color: i,
                line: points.iter().map(|&(x, v)| (x, v[1])).collect(),
                points,
                width: 1,
                ..Curve::default()
            }
        })
        .collect();
    LogLog {
        x_label: "x".into(),
        y_label: "prediction error [%]".into(),
        curves,
        linear_y: true,
        hlines: target_lines(rows),
        ..LogLog::default()
    }
}

/// The lines of the judged rows' own targets: ± each distinct target once.
fn target_lines(rows: &[Row]) -> Vec<(f64, String)> {
    let mut targets: Vec<f64> = rows.iter().filter_map(|r| r.target).collect();
    targets.sort_by(f64::total_cmp);
    targets.dedup();
    targets
        .into_iter()
        .flat_map(|t| {
            [
                (t * 100.0, format!("target ±{:.0}%", t * 100.0)),
                (-t * 100.0, String::new()),
            ]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    use perfcompose_core::model::Expr;
    use perfcompose_runtime::validate::Rounds;

    /// A row of `target` whose six rounds all read error `e` at x = 1024.
    fn row(name: &str, e: f64, target: Option<f64>) -> Row {
        let per: Vec<Vec<(u64, f64, f64)>> = (0..6)
            .map(|_| vec![(1024, 100.0 * (1.0 + e), 100.0)])
            .collect();
        Row {
            group: "g".into(),
            configuration: name.into(),
            kernels: Vec::new(),
            threads: 1,
            within_cores: true,
            modular: Expr::constant(1.0),
            monolithic: Expr::constant(1.0),
            coefficient_error: 0.0,
            time_error: e.abs(),
            overhead_ns: 0.0,
            target,
            notes: Vec::new(),
            points: Vec::new(),
            components: Default::default(),
            fit_floor: None,
            error_from_measured_blocks: None,
            repeat_error: None,
            host: None,
            rounds: Some(Rounds::of(&per, None)),
            coverage: Default::default(),
        }
    }

    #[test]
    fn every_missed_row_is_drawn_and_the_rest_left_out_by_name() {
        let rows = vec![
            row("a", 0.0, Some(0.1)),
            row("b", 0.0, Some(0.1)),
            row("c", 0.5, Some(0.1)),
            row("d", 0.0, Some(0.1)),
            row("e", 0.5, Some(0.1)),
        ];
        let (shown, left) = drawn(&rows, 3);
        let names: Vec<&str> = shown.iter().map(|r| r.configuration.as_str()).collect();
        assert_eq!(names, ["a", "c", "e"]);
        assert_eq!(left, ["b", "d"]);
        let (shown, left) = drawn(&rows, 100);
        assert_eq!((shown.len(), left.len()), (5, 0));
    }

    #[test]
    fn the_target_lines_are_the_rows_own_targets() {
        let rows = vec![
            row("a", 0.0, Some(0.1)),
            row("b", 0.0, Some(0.1)),
            row("mr", 0.0, Some(0.15)),
            row("over", 0.0, None),
        ];
        let lines: Vec<f64> = target_lines(&rows).iter().map(|l| l.0).collect();
        assert_eq!(lines, [10.0, -10.0, 15.0, -15.0]);
        assert_eq!(target_lines(&rows[..2])[0].1, "target ±10%");
    }

    #[test]
    fn the_error_is_signed_relative_to_the_measurement() {
        assert_eq!(error_percent(100.0, 110.0), 10.0);
        assert_eq!(error_percent(100.0, 95.0), -5.0);
    }
}
