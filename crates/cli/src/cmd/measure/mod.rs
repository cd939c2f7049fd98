//! `perfcompose measure`: time any command over a parameter grid and add the
//! measurements to an Extra-P file, point by point. Glue over
//! `perfcompose_runtime::command` (running and timing) and
//! `perfcompose_core::measure::append` (the file).

use anyhow::bail;
use perfcompose_core::measure::append::{AppendFormat, Appender};
use perfcompose_core::measure::SeriesKey;
use perfcompose_runtime::bench::METRIC;
use perfcompose_runtime::command::{format_point, Measured, System};

use crate::cmd::input;
use crate::cmd::runtime_args::bar;
use crate::cmd::timing_args::UnitWarning;

mod args;
mod print;

pub use args::Args;
pub use print::ci_cell;

/// A block name is a callpath of Extra-P's formats: one line, no whitespace.
fn check_name(name: &str) -> anyhow::Result<()> {
    if name.is_empty() || name.contains(char::is_whitespace) {
        bail!(
            "--name `{name}`: a block's name is a callpath, without spaces (e.g. sort, main->sort)"
        );
    }
    Ok(())
}

pub fn run(args: Args) -> anyhow::Result<()> {
    check_name(&args.name)?;
    let grid = input::grid(&args.at)?;
    let names: Vec<String> = grid.names().iter().map(|s| s.to_string()).collect();
    let points = grid.points();
    let varying: Vec<String> = grid
        .axes
        .iter()
        .filter(|a| a.values.len() > 1)
        .map(|a| a.name.clone())
        .collect();
    let measurement = args
        .timing
        .measurement(&args.command, &names, &varying, points.len())?;
    let coordinate = |p: &[(String, f64)]| p.iter().map(|(_, v)| *v).collect::<Vec<f64>>();
    let coords: Vec<Vec<f64>> = points.iter().map(|p| coordinate(p)).collect();
    let mut file = Appender::open(
        &args.output,
        &names,
        SeriesKey::new(&args.name, METRIC),
        &coords,
    )?;
    if let Some(from) = file.converted_from() {
        perfcompose_core::stderr_line!(
            "{} (Extra-P text) keeps the series over ({}) at the same points, and `{}` at these points would not be: its measurements and this run's go to {} (JSON Lines, any points per block), and {} is left as it was; use {} from now on",
            from.display(),
            names.join(", "),
            args.name,
            file.path().display(),
            from.display(),
            file.path().display()
        );
    }
    let order = args.timing.order(points.len());
    let bar = bar(points.len() as u64, args.json);
    let mut done: Vec<Measured> = Vec::new();
    let mut unit_warning = UnitWarning::default();
    let result = measurement.grid(
        &mut System,
        &points,
        &order,
        |i, _| bar.set_message(format!("{} at {}", args.name, format_point(&points[i]))),
        |m: Measured| -> anyhow::Result<()> {
            unit_warning.check(&m, &bar);
            file.add(coordinate(&m.point), m.values.clone())?;
            bar.inc(1);
            done.push(m);
            Ok(())
        },
    );
    bar.finish_and_clear();
    if let Err(e) = result {
        if !done.is_empty() {
            let partial = file.partial_path();
            let kept = if partial.exists() {
                partial
            } else {
                file.path().to_path_buf()
            };
            // The failure is what to report; a provenance that cannot be written is not.
            let _ = crate::version::record(&kept);
            let n = done.len();
            perfcompose_core::stderr_line!(
                "kept the {n} point{} measured before the failure in {}",
                if n == 1 { "" } else { "s" },
                kept.display()
            );
        }
        return Err(e);
    }
    crate::version::record(file.path())?;
    let format = match file.format() {
        AppendFormat::Text => "Extra-P text",
        AppendFormat::JsonLines => "JSON Lines",
    };
    print::print(&args, &grid, done, format, file.path())
}
