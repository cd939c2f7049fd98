//! `perfcompose predict`: compose a design's model from its components and evaluate it.

use std::io::Write as _;
use std::path::PathBuf;

use perfcompose_core::compose::interval::IntervalOptions;
use perfcompose_core::compose::predict::{
    predict_with, PredictOptions, Prediction, PredictionJson,
};
use perfcompose_core::compose::ComposeOptions;
use perfcompose_core::model::format_significant;
use perfcompose_core::uncertainty::Source;
use perfcompose_runtime::overhead::{overhead_for, Added};

use super::input::{self, given, num};

/// Flags of `perfcompose predict`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The design, e.g. 'pipe(tpool(4, qsort), seq(inc, nop))'.
    #[arg(value_name = "TERM", required_unless_present = "term_file")]
    pub term: Option<String>,
    /// Read the term from a file instead.
    #[arg(long, value_name = "FILE", conflicts_with = "term")]
    pub term_file: Option<PathBuf>,
    /// Components file (TOML) [default: the pattern-composition paper's Table 1 blocks, built in].
    #[arg(long, value_name = "FILE")]
    pub components: Option<PathBuf>,
    /// Evaluate at NAME=V1,V2,..., or NAME=A..B for 11 log-spaced points from A to B
    /// (NAME=A..B:N for N points); repeat for a grid over several names.
    #[arg(long = "at", value_name = "NAME=V1,V2,...|A..B")]
    pub at: Vec<String>,
    /// Cores per node: thread counts above C do not divide further [default: unlimited].
    #[arg(long, value_name = "C", value_parser = crate::cmd::input::cores())]
    pub cores: Option<u64>,
    /// Print JSON (schema in docs/composition.md).
    #[arg(long)]
    pub json: bool,
    /// Add the pattern runtime's own per-element cost, as `perfcompose calibrate
    /// overhead` stored it for this machine, to a design of the runtime's kernels (whose
    /// models, from --components, are in ns); the output says which file it added.
    #[arg(long)]
    pub overhead: bool,
    /// Add the overhead calibration in FILE instead (implies --overhead).
    #[arg(long, value_name = "FILE")]
    pub calibration: Option<PathBuf>,
    /// Confidence level of the prediction intervals (components with an uncertainty:
    /// fitted from measurements, or stated in the components file).
    #[arg(long, value_name = "L", default_value = "0.95", value_parser = input::level)]
    pub level: f64,
    /// Say which component's uncertainty widens the interval most, and where measuring
    /// it again would narrow it.
    #[arg(long)]
    pub advise: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let components = input::components(args.components.as_deref())?;
    let term = input::term(args.term.as_deref(), args.term_file.as_deref())?;
    let grid = input::grid(&args.at)?;
    input::check_machine(&components, &grid)?;
    let opts = ComposeOptions { cores: args.cores };
    let added = if args.overhead || args.calibration.is_some() {
        Some(overhead_for(
            &term,
            args.components.is_some(),
            args.calibration.as_deref(),
        )?)
    } else {
        None
    };
    let overhead = added.as_ref().map(|a| &a.overhead);
    let how = PredictOptions {
        intervals: IntervalOptions {
            level: args.level,
            ..IntervalOptions::default()
        },
        advise: args.advise,
    };
    let p = predict_with(&term, &components, opts, &grid, overhead, how)?;
    let mut out = crate::report::stdout();
    if args.json {
        let json = PredictionJson {
            prediction: &p,
            calibration: added.as_ref().map(|a| a.path.as_path()),
        };
        writeln!(out, "{}", serde_json::to_string_pretty(&json)?)?;
    } else {
        write!(out, "{}", human(&p, &components.origin, added.as_ref()))?;
    }
    Ok(())
}

/// `for all x >= 7.37` / `for all x >= 1`.
fn from_x(x: f64) -> String {
    format!("for all x >= {}", format_significant(x, 4))
}

fn human(p: &Prediction, origin: &str, added: Option<&Added>) -> String {
    let mut out = String::new();
    out.push_str(&format!("term:        {}\n", p.term));
    out.push_str(&format!("components:  {origin}\n"));
    if let Some(a) = added {
        out.push_str(&format!(
            "overhead:    added from {} (calibrated on {}; the notes say what)\n",
            a.path.display(),
            a.host
        ));
    }
    if let Some(c) = p.cores {
        out.push_str(&format!("cores:       {c}\n"));
    }
    out.push_str(&format!("model:       {}\n", p.expr.rounded(input::DIGITS)));
    let root = p.root_pipeline.map(|i| &p.pipelines[i]);
    let dominant = p.dominant_expr.as_ref().map_or_else(
        || "(cannot be determined symbolically)".to_string(),
        |d| d.rounded(input::DIGITS),
    );
    match root.and_then(|r| (r.settles.len() == 1).then(|| &r.settles[0])) {
        Some(s) => out.push_str(&format!(
            "dominant:    {dominant}   (stage {} {})\n",
            s.stage,
            from_x(s.from_x)
        )),
        None => out.push_str(&format!("dominant:    {dominant}\n")),
    }
    if !p.parameters.is_empty() && p.values.is_empty() {
        out.push_str(&format!(
            "parameters:  {} (evaluate with --at {}=...)\n",
            p.parameters.join(", "),
            p.parameters[0]
        ));
    }

    if !p.values.is_empty() {
        let names = &p.grid;
        let with_bottleneck = p.values.iter().any(|v| v.bottleneck.is_some());
        let level = p.values.iter().find_map(|v| v.interval).map(|i| i.level);
        let mut header = names.clone();
        header.push("value".into());
        if let Some(l) = level {
            header.push(format!("{}% interval", format_significant(100.0 * l, 3)));
        }
        if with_bottleneck {
            header.push("bottleneck".into());
        }
        let mut t = input::table(header);
        for v in &p.values {
            let mut row: Vec<String> = names.iter().map(|n| num(v.point[n])).collect();
            row.push(num(v.value));
            if level.is_some() {
                row.push(v.interval.map_or_else(String::new, |i| {
                    format!("{} .. {}", num(i.low), num(i.high))
                }));
            }
            if with_bottleneck {
                row.push(v.bottleneck.clone().unwrap_or_default());
            }
            t.add_row(row);
        }
        out.push('\n');
        out.push_str(&t.to_string());
        out.push('\n');
    }

    // Pipelines other than the root one, or the root one when it depends on parameters.
    let listed: Vec<_> = p
        .pipelines
        .iter()
        .filter(|r| root.is_none_or(|root| r.term != root.term) || r.settles.len() > 1)
        .collect();
    if !listed.is_empty() {
        out.push_str("\npipelines:\n");
        for r in listed {
            out.push_str(&format!("  {}\n", r.term));
            if !r.missing.is_empty() {
                out.push_str(&format!(
                    "    bottleneck depends on {} (give values with --at)\n",
                    r.missing.join(", ")
                ));
                if let Some(a) = &r.asymptotic_stage {
                    out.push_str(&format!("    asymptotically: {a}\n"));
                }
            }
            for s in &r.settles {
                let given = given(&s.given);
                out.push_str(&format!(
                    "    {given}bottleneck {} {}\n",
                    s.stage,
                    from_x(s.from_x)
                ));
            }
        }
    }

    if !p.crossovers.is_empty() {
        out.push_str("\ncrossovers (where the bottleneck stage changes):\n");
        for c in &p.crossovers {
            let range = if p.values.is_empty() {
                ""
            } else if c.in_range {
                "  (within the evaluated range)"
            } else {
                "  (outside the evaluated range)"
            };
            out.push_str(&format!(
                "  {}{}: {} -> {} at x = {}{range}\n",
                given(&c.given),
                c.pipeline,
                c.from,
                c.to,
                format_significant(c.x, 6)
            ));
        }
    }
    for s in p.pipelines.iter().flat_map(|r| r.settles.iter()) {
        if let Some(a) = &s.asymptotic_stage {
            out.push_str(&format!(
                "  note: {a} dominates asymptotically, but only beyond x = 1e30\n"
            ));
        }
    }
    if !p.uncertain.is_empty() {
        let what: Vec<String> = p
            .uncertain
            .iter()
            .map(|u| match u.source {
                Source::Bootstrap => format!("{} ({} bootstrap refits)", u.component, u.replicates),
                Source::FitCovariance => format!("{} (the fit's covariance)", u.component),
                Source::Stated => format!("{} (stated)", u.component),
            })
            .collect();
        out.push_str(&format!(
            "\nintervals carry the uncertainty of: {}\n",
            what.join(", ")
        ));
    }
    let extrapolated = extrapolated(p);
    if !extrapolated.is_empty() {
        out.push_str(
            "\nextrapolation (components evaluated outside the range they were measured on):\n",
        );
        for line in extrapolated {
            out.push_str(&format!("  - {line}\n"));
        }
    }
    if !p.advice.is_empty() {
        out.push_str(&format!(
            "\nadvice (shares of the variance at {}):\n",
            given(&p.advice[0].at).trim_end()
        ));
        for a in &p.advice {
            let mut line = format!("  - {}: {:.0}%", a.component, 100.0 * a.share);
            if let (Some(m), Some(r)) = (a.measure_at.first(), a.reduction.first()) {
                line.push_str(&format!(
                    "; measuring it at {} would remove {:.0}% of its own variance there",
                    given(m).trim_end(),
                    100.0 * r
                ));
            }
            out.push_str(&line);
            out.push('\n');
        }
    }
    if !p.notes.is_empty() {
        out.push_str("\nnotes:\n");
        for n in &p.notes {
            out.push_str(&format!("  - {n}\n"));
        }
    }
    if !p.suggestions.is_empty() {
        out.push_str("\nsuggestions:\n");
        for s in &p.suggestions {
            out.push_str(&format!("  - {}\n", s.text));
        }
    }
    out
}

/// One line per extrapolated component: for each of its parameters outside the measured
/// range, the farthest value over the grid; and at how many points.
fn extrapolated(p: &Prediction) -> Vec<String> {
    type Far = std::collections::BTreeMap<String, (f64, [f64; 2])>;
    let mut by: std::collections::BTreeMap<String, (Far, usize)> =
        std::collections::BTreeMap::new();
    for v in &p.values {
        let mut seen: Vec<&str> = Vec::new();
        for e in &v.extrapolation {
            let far = |x: f64| (e.measured[0] / x).max(x / e.measured[1]);
            let (params, points) = by.entry(e.component.clone()).or_default();
            let entry = params
                .entry(e.parameter.clone())
                .or_insert((e.value, e.measured));
            if far(e.value) > far(entry.0) {
                entry.0 = e.value;
            }
            if !seen.contains(&e.component.as_str()) {
                seen.push(&e.component);
                *points += 1;
            }
        }
    }
    by.into_iter()
        .map(|(c, (params, n))| {
            let what: Vec<String> = params
                .into_iter()
                .map(|(param, (v, [lo, hi]))| {
                    format!("{param} = {} (measured {}..{})", num(v), num(lo), num(hi))
                })
                .collect();
            format!(
                "{c}: {}, at {n} of {} points",
                what.join(", "),
                p.values.len()
            )
        })
        .collect()
}
