//! `perfcompose fit FILE...`: fit performance models to measurements (Extra-P's job).
//!
//! Reads each file (Extra-P text, JSON Lines, Extra-P JSON, CSV, Extra-P experiments;
//! see `docs/formats.md`), fits every
//! callpath/metric series with the chosen modeler (or with user-given basis functions),
//! and prints one line per series — the model in Extra-P's syntax and its SMAPE — or,
//! with `--json`, the documented schema of `docs/fitting.md`. A file that holds series
//! over several sets of parameters has each fitted over its own, and each line says which.
//! A basis is fitted to the series whose parameters it uses.

use std::io::{self, Write};
use std::path::PathBuf;

use anyhow::Context as _;
use indicatif::{ProgressBar, ProgressStyle};
use perfcompose_core::fit::output::{fit_experiments, models_json, show_key, Fitted, Plan};
use perfcompose_core::fit::{self, FitOptions, Measure, DEFAULT_MODELER};
use perfcompose_core::measure::csv::CsvOptions;
use perfcompose_core::measure::{read_experiments_with, Format, ReadOptions};
use perfcompose_core::model::Expr;
use perfcompose_core::Diagnostic;

/// Files with at least this many series get a progress bar (on a terminal).
const PROGRESS_MIN_SERIES: usize = 50;

/// Flags of `perfcompose fit`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Measurement files: Extra-P text, JSON Lines, Extra-P JSON, CSV, ... (docs/formats.md).
    #[arg(required_unless_present = "list_modelers")]
    pub files: Vec<PathBuf>,
    /// How the repetitions at a point are reduced: mean, median, minimum or maximum
    /// [default: minimum; mean with --modeler extrap, as Extra-P]
    #[arg(long, value_parser = parse_measure)]
    pub measure: Option<Measure>,
    /// The modeler (`--list-modelers` shows them).
    #[arg(long, default_value = DEFAULT_MODELER)]
    pub modeler: String,
    /// Fit these basis functions by least squares instead of searching a model, e.g.
    /// "1, N, M" (the divide-and-conquer paper's block costs). Repeat to compare coefficient sets.
    #[arg(long)]
    pub basis: Vec<String>,
    /// Print JSON (schema in docs/fitting.md).
    #[arg(long)]
    pub json: bool,
    /// Also print RSS, adjusted R², coefficient standard errors and, per point, the
    /// coefficient of variation of the repetitions.
    #[arg(long)]
    pub stats: bool,
    /// List the modelers and exit.
    #[arg(long)]
    pub list_modelers: bool,
    /// Read this format instead of detecting it (text, jsonl, json, csv, talpas,
    /// extra-p, extrap3, cube).
    #[arg(long)]
    pub format: Option<String>,
    /// Accept negative values (a metric that can be negative).
    #[arg(long)]
    pub allow_negative: bool,
    /// Values of the parameter at which the data fills a cache level, comma-separated
    /// (e.g. 12288: 48 KiB of i32s): the segmented modeler then breaks only between half
    /// such a value and the value, with four sizes a side or more (docs/fitting.md).
    #[arg(long, value_delimiter = ',', value_name = "X,...")]
    pub breaks: Vec<f64>,
    /// CSV: the parameter columns, comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub csv_parameters: Vec<String>,
    /// CSV: the value column(s), comma-separated (repetitions).
    #[arg(long, value_delimiter = ',')]
    pub csv_values: Vec<String>,
    /// CSV: the callpath column(s), comma-separated (joined with `->`).
    #[arg(long, value_delimiter = ',')]
    pub csv_callpath: Vec<String>,
    /// CSV: the metric column.
    #[arg(long)]
    pub csv_metric: Option<String>,
}

fn parse_measure(s: &str) -> Result<Measure, String> {
    s.parse()
}

pub fn run(mut args: Args) -> anyhow::Result<()> {
    if args.list_modelers {
        let mut out = crate::report::stdout();
        for m in fit::modelers() {
            let default = if m.name() == DEFAULT_MODELER {
                " (default)"
            } else {
                ""
            };
            writeln!(out, "{}{default}: {}", m.name(), m.description())?;
        }
        return Ok(());
    }
    let modeler = fit::modeler(&args.modeler).ok_or_else(|| {
        let names: Vec<&str> = fit::modelers().iter().map(|m| m.name()).collect();
        anyhow::anyhow!(
            "unknown modeler `{}` (known: {})",
            args.modeler,
            names.join(", ")
        )
    })?;
    let bases = args
        .basis
        .iter()
        .map(|b| fit::parse_basis(b))
        .collect::<Result<Vec<_>, Diagnostic>>()?;
    if let Some(b) = args.breaks.iter().find(|b| !b.is_finite() || **b < 0.0) {
        anyhow::bail!("--breaks: {b} is not a parameter value (finite, non-negative)");
    }
    // The statistic, resolved once: the modeler's own unless given (what JSON reports).
    let measure = args.measure.unwrap_or_else(|| modeler.default_measure());
    args.measure = Some(measure);
    let options = FitOptions {
        measure: Some(measure),
        allow_negative: args.allow_negative,
        breaks: args.breaks.clone(),
    };
    let read = ReadOptions {
        format: args
            .format
            .as_deref()
            .map(str::parse::<Format>)
            .transpose()
            .map_err(|e| anyhow::anyhow!("--format: {e}"))?,
        allow_negative: args.allow_negative,
        csv: CsvOptions {
            parameters: args.csv_parameters.clone(),
            values: args.csv_values.clone(),
            callpath: args.csv_callpath.clone(),
            metric: args.csv_metric.clone(),
            ..CsvOptions::default()
        },
        ..ReadOptions::default()
    };
    let based: Vec<(String, Vec<(String, Expr)>)> = args.basis.iter().cloned().zip(bases).collect();
    let plan = Plan {
        modeler,
        bases: &based,
        options: &options,
    };
    let mut rows = Vec::new();
    // Whether each basis was fitted to some series.
    let mut fitted = vec![false; based.len()];
    for path in &args.files {
        let origin = path.display().to_string();
        let sets = read_experiments_with(path, &read)?;
        let total = sets.iter().map(|e| e.series.len()).sum::<usize>() * based.len().max(1);
        let bar = if total >= PROGRESS_MIN_SERIES {
            let bar = ProgressBar::new(total as u64);
            bar.set_style(
                ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} series")
                    .expect("static template")
                    .progress_chars("=> "),
            );
            bar.set_message(origin.clone());
            bar
        } else {
            ProgressBar::hidden()
        };
        rows.extend(fit_experiments(
            &origin,
            &sets,
            &plan,
            &mut fitted,
            &mut || bar.inc(1),
        )?);
        bar.finish_and_clear();
    }
    if let Some(i) = fitted.iter().position(|f| !f) {
        anyhow::bail!(
            "--basis `{}`: no series is over the parameters it uses",
            args.basis[i]
        );
    }
    let mut out = crate::report::stdout();
    if args.json {
        let models = models_json(&rows, &args.modeler, measure);
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&models).context("serialising the models")?
        )?;
    } else {
        for r in &rows {
            print_human(&mut out, r, &args)?;
        }
    }
    Ok(())
}

/// One series for people; the warnings go to stderr, after the series' line.
fn print_human(out: &mut impl Write, r: &Fitted, args: &Args) -> io::Result<()> {
    let model = r.fit.model.extrap();
    let s = &r.fit.stats;
    let over = r
        .over
        .as_ref()
        .map_or_else(String::new, |o| format!("; over ({o})"));
    match &r.basis {
        None => writeln!(
            out,
            "{}; {}; {}; SMAPE {:.3}%{over}",
            r.key.callpath, r.key.metric, model, s.smape
        )?,
        Some(b) => writeln!(
            out,
            "{}; {}; {}; R² {:.6}; SMAPE {:.3}%{over}  [basis {b}]",
            r.key.callpath, r.key.metric, model, s.r2, s.smape
        )?,
    }
    for w in &r.fit.warnings {
        perfcompose_core::stderr_line!("warning: {}: series {}: {w}", r.file, show_key(&r.key));
    }
    if args.stats {
        writeln!(
            out,
            "    RSS {:.6e}  R² {:.6}  adjusted R² {:.6}  points {}",
            s.rss, s.r2, s.ar2, s.points
        )?;
        for c in &s.coefficients {
            let se = c.std_error.map_or("–".to_string(), |e| format!("{e:.4e}"));
            writeln!(out, "    {:>24}  {:>14.6e} ± {se}", c.term, c.value)?;
        }
        for p in &r.fit.points {
            let coord: Vec<String> = p.coordinate.iter().map(|v| format!("{v}")).collect();
            let cv =
                p.cv.map_or("–".to_string(), |cv| format!("{:.2}%", cv * 100.0));
            writeln!(
                out,
                "    at ({}): measured {:.6e}, model {:.6e}, CV {cv}",
                coord.join(", "),
                p.value,
                p.predicted
            )?;
        }
    }
    Ok(())
}
