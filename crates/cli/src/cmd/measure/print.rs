//! What `perfcompose measure` prints: a table of the points (grid order) and where they
//! went, or JSON. Each point shows first the statistic `fit`, `predict` and `validate`
//! reduce its repetitions to ([`Measure::default`]), then the median and its confidence
//! interval, which decide when a point has repetitions enough.

use std::io::Write as _;
use std::path::Path;

use perfcompose_core::compose::grid::Grid;
use perfcompose_core::measure::stats::MIN_SAMPLES_FOR_CI;
use perfcompose_core::measure::{Measure, Summary};
use perfcompose_runtime::command::{format_value, Measured};
use serde::Serialize;

use super::args::Args;
use crate::cmd::input::table;
use crate::cmd::timing_args::duration;

/// `perfcompose measure --json` (fields are only ever added).
#[derive(Serialize)]
struct Json<'a> {
    name: &'a str,
    metric: &'static str,
    unit: &'static str,
    output: String,
    format: &'a str,
    command: String,
    shell: bool,
    timed: &'static str,
    parameters: Vec<&'a str>,
    /// The statistic of the repetitions the commands fit (each point's `value`).
    measure: &'static str,
    points: Vec<JsonPoint>,
}

#[derive(Serialize)]
struct JsonPoint {
    point: serde_json::Map<String, serde_json::Value>,
    values: Vec<f64>,
    value: f64,
    median: f64,
    cv: f64,
    /// The 95% confidence interval of the median; `null` with too few repetitions for one.
    ci: Option<[f64; 2]>,
    converged: bool,
}

/// The default statistic of a point's repetitions (NaN without any).
fn statistic(m: &Measured) -> f64 {
    Summary::of(&m.values).map_or(f64::NAN, |s| s.get(Measure::default()))
}

pub fn print(
    args: &Args,
    grid: &Grid,
    mut done: Vec<Measured>,
    format: &str,
    output: &Path,
) -> anyhow::Result<()> {
    // Grid order, whatever order the points were measured in.
    let points = grid.points();
    let rank = |m: &Measured| {
        points
            .iter()
            .position(|p| *p == m.point)
            .unwrap_or(usize::MAX)
    };
    done.sort_by_key(rank);
    let mut out = crate::report::stdout();
    if args.json {
        let json = Json {
            name: &args.name,
            metric: perfcompose_runtime::bench::METRIC,
            unit: "ns",
            output: output.display().to_string(),
            format,
            command: args.command.join(" "),
            shell: args.timing.shell,
            timed: args.timing.timed(),
            parameters: grid.names(),
            measure: Measure::default().name(),
            points: done
                .iter()
                .map(|m| JsonPoint {
                    point: m
                        .point
                        .iter()
                        .map(|(n, v)| (n.clone(), serde_json::json!(v)))
                        .collect(),
                    values: m.values.clone(),
                    value: statistic(m),
                    median: m.median(),
                    cv: m.cv(),
                    ci: m.ci().map(|(lo, hi)| [lo, hi]),
                    converged: m.converged,
                })
                .collect(),
        };
        writeln!(out, "{}", serde_json::to_string_pretty(&json)?)?;
        return Ok(());
    }
    let fitted = Measure::default();
    let mut header: Vec<String> = grid.names().iter().map(|s| s.to_string()).collect();
    if fitted != Measure::Median {
        header.push(fitted.to_string());
    }
    header.extend([
        "median".into(),
        "CV".into(),
        "95% CI of median".into(),
        "reps".into(),
    ]);
    let mut t = table(header);
    for m in &done {
        let mut row: Vec<String> = m.point.iter().map(|(_, v)| format_value(*v)).collect();
        if fitted != Measure::Median {
            row.push(duration(statistic(m)));
        }
        row.push(duration(m.median()));
        row.push(format!("{:.1}%", 100.0 * m.cv()));
        row.push(ci_cell(m.ci(), m.converged, m.values.len(), duration));
        row.push(m.values.len().to_string());
        t.add_row(row);
    }
    writeln!(out, "{t}")?;
    writeln!(
        out,
        "{} of `{}` ({}): {} points, {} repetitions added to {} ({format})",
        if args.timing.time_from.is_some() {
            "times printed by the program"
        } else {
            "wall times"
        },
        args.name,
        shown_command(args),
        done.len(),
        done.iter().map(|m| m.values.len()).sum::<usize>(),
        output.display(),
    )?;
    Ok(())
}

/// The confidence interval column: `lo .. hi`, marked when the target was not reached;
/// with too few repetitions for an interval, says so (and no target can be judged).
pub fn ci_cell(
    ci: Option<(f64, f64)>,
    converged: bool,
    reps: usize,
    show: impl Fn(f64) -> String,
) -> String {
    match ci {
        Some((lo, hi)) => format!(
            "{} .. {}{}",
            show(lo),
            show(hi),
            if converged {
                ""
            } else {
                " (target not reached)"
            }
        ),
        None => format!(
            "none ({reps} rep{}; an interval needs {MIN_SAMPLES_FOR_CI})",
            if reps == 1 { "" } else { "s" }
        ),
    }
}

fn shown_command(args: &Args) -> String {
    let words = args.command.join(" ");
    if args.timing.shell {
        format!("sh -c '{words}'")
    } else {
        words
    }
}
