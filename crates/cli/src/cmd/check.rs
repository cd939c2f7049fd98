//! `perfcompose check`: compare two designs, or check the pattern-composition paper's relational laws on the
//! components.

use std::io::Write as _;
use std::path::PathBuf;

use perfcompose_core::compose::grid::Grid;
use perfcompose_core::compose::interval::IntervalOptions;
use perfcompose_core::compose::laws::{
    attach_confidence, check_laws, compare_terms, Comparison, LawReport, Verdict,
};
use perfcompose_core::compose::ComposeOptions;
use perfcompose_core::model::format_significant;
use perfcompose_core::term::parse_term;

use super::input::{self, given, num};

/// Flags of `perfcompose check`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Two designs to compare, e.g. 'pipe(qsort, inc)' 'tpool(2, seq(qsort, inc))'.
    #[arg(
        value_name = "TERM",
        num_args = 2,
        required_unless_present = "laws",
        conflicts_with = "laws"
    )]
    pub terms: Vec<String>,
    /// Check relations (i)-(iv) of the pattern-composition paper's relational theory on the components.
    #[arg(long)]
    pub laws: bool,
    /// Components file (TOML) [default: the pattern-composition paper's Table 1 blocks, built in].
    #[arg(long, value_name = "FILE")]
    pub components: Option<PathBuf>,
    /// Compare at NAME=V1,V2,... (repeatable) [default: x = 2^0, 2^1, ..., 2^30].
    #[arg(long = "at", value_name = "NAME=V1,V2,...")]
    pub at: Vec<String>,
    /// Cores per node: thread counts above C do not divide further [default: unlimited].
    #[arg(long, value_name = "C", value_parser = crate::cmd::input::cores())]
    pub cores: Option<u64>,
    /// Print JSON (schema in docs/composition.md).
    #[arg(long)]
    pub json: bool,
    /// Confidence a design must reach to be called faster (components with an
    /// uncertainty: the probability that one design is faster is printed per point).
    #[arg(long, value_name = "L", default_value = "0.95", value_parser = input::level)]
    pub level: f64,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let components = input::components(args.components.as_deref())?;
    let grid = input::grid(&args.at)?;
    input::check_machine(&components, &grid)?;
    let opts = ComposeOptions { cores: args.cores };
    let mut out = crate::report::stdout();
    if args.laws {
        let reports = check_laws(&components, opts, &grid);
        if args.json {
            writeln!(out, "{}", serde_json::to_string_pretty(&reports)?)?;
        } else {
            write!(
                out,
                "{}",
                human_laws(&reports, &components.origin, &grid, components.len())
            )?;
        }
        return Ok(());
    }
    let [a, b] = &args.terms[..] else {
        anyhow::bail!("give two terms to compare, or --laws");
    };
    let first = parse_term("<first term>", a)?;
    let second = parse_term("<second term>", b)?;
    let mut c = compare_terms(&first, &second, &components, opts, &grid)?;
    let how = IntervalOptions {
        level: args.level,
        ..IntervalOptions::default()
    };
    attach_confidence(&mut c, &first, &second, &components, opts, how)?;
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&c)?)?;
    } else {
        write!(out, "{}", human_comparison(&c, &grid))?;
    }
    Ok(())
}

fn grid_text(grid: &Grid, points: usize) -> String {
    if grid.is_empty() {
        format!("x = 2^0, 2^1, ..., 2^30 ({points} points)")
    } else {
        let axes: Vec<String> = grid.axes.iter().map(|a| a.text.clone()).collect();
        let unit = if points == 1 { "point" } else { "points" };
        format!("{} ({points} {unit})", axes.join(" x "))
    }
}

fn human_comparison(c: &Comparison, grid: &Grid) -> String {
    let mut out = String::new();
    out.push_str(&format!("first:   {}\n", c.first));
    out.push_str(&format!(
        "  model: {}\n",
        c.first_expr.rounded(input::DIGITS)
    ));
    out.push_str(&format!("second:  {}\n", c.second));
    out.push_str(&format!(
        "  model: {}\n",
        c.second_expr.rounded(input::DIGITS)
    ));
    let over = grid_text(grid, c.points.len());
    let verdict = match c.verdict {
        Verdict::EqualSymbolic => "equal: both simplify to the same model".to_string(),
        Verdict::EqualNumeric => format!(
            "equal within a relative tolerance of {:e} at every point of {over} (the simplified forms differ)",
            c.tolerance
        ),
        Verdict::FirstSmaller => format!("the first is smaller (or equal) at every point of {over}"),
        Verdict::SecondSmaller => format!("the second is smaller (or equal) at every point of {over}"),
        Verdict::Mixed => format!("each is smaller somewhere on {over}"),
    };
    out.push_str(&format!("verdict: {verdict}\n"));
    let asym = match (c.asymptotic.as_str(), c.asymptotic_ratio) {
        ("same", Some(r)) => format!(
            "same order of growth; the first is {}x the second",
            format_significant(r, 4)
        ),
        ("same", None) => "same order of growth".to_string(),
        ("slower", _) => "the first grows more slowly".to_string(),
        ("faster", _) => "the first grows faster".to_string(),
        ("incomparable", _) => "neither dominates (they grow in different parameters)".to_string(),
        _ => "cannot be decided symbolically".to_string(),
    };
    out.push_str(&format!("asymptotically: {asym}\n"));
    if !matches!(c.verdict, Verdict::EqualSymbolic | Verdict::EqualNumeric) {
        if c.switches.is_empty() {
            out.push_str("switches: none for x >= 1\n");
        } else {
            out.push_str("switches (along x >= 1):\n");
            for s in &c.switches {
                let given = given(&s.given);
                out.push_str(&format!(
                    "  {given}from x = {} on, the {} is smaller\n",
                    format_significant(s.x, 6),
                    s.smaller_after
                ));
            }
        }
    }
    if let Some(conf) = &c.confidence {
        let pct = format_significant(100.0 * conf.level, 3);
        out.push_str(&format!(
            "with {pct}% confidence (the components' uncertainty, by sampling):\n"
        ));
        for r in &conf.ranges {
            let given = given(&r.given);
            let range = if r.from_x == r.to_x {
                format!("x = {}", num(r.from_x))
            } else {
                format!("x = {} .. {}", num(r.from_x), num(r.to_x))
            };
            let verdict = match r.winner.as_str() {
                "first" => "the first is faster".to_string(),
                "second" => "the second is faster".to_string(),
                other => other.to_string(),
            };
            out.push_str(&format!("  {given}{range}: {verdict}\n"));
        }
    }
    if c.grid_given && !c.points.is_empty() {
        let names: Vec<String> = c.points[0].point.keys().cloned().collect();
        let mut header = names.clone();
        header.extend(["first".into(), "second".into(), "first/second".into()]);
        let probabilities = c
            .points
            .iter()
            .any(|p| p.probability_first_smaller.is_some());
        if probabilities {
            header.push("P(first faster)".into());
        }
        let mut t = input::table(header);
        for p in &c.points {
            let mut row: Vec<String> = names.iter().map(|n| num(p.point[n])).collect();
            row.push(num(p.first));
            row.push(num(p.second));
            row.push(if p.second != 0.0 {
                format_significant(p.first / p.second, 4)
            } else {
                "-".into()
            });
            if probabilities {
                row.push(
                    p.probability_first_smaller
                        .map_or_else(String::new, |v| format!("{v:.3}")),
                );
            }
            t.add_row(row);
        }
        out.push('\n');
        out.push_str(&t.to_string());
        out.push('\n');
    }
    out
}

fn human_laws(reports: &[LawReport], origin: &str, grid: &Grid, count: usize) -> String {
    let points = if grid.is_empty() {
        31
    } else {
        grid.points().len()
    };
    let mut out = format!(
        "relational laws of the pattern-composition paper (section 5) over {count} components ({origin}), on {}\n\n",
        grid_text(grid, points)
    );
    let mut t = input::table(vec![
        "law".into(),
        "statement".into(),
        "verdict".into(),
        "instances".into(),
        "how".into(),
    ]);
    for r in reports {
        let how = if r.law == "iv" {
            match r.max_gain {
                Some(g) if r.failures.is_empty() && format_significant(g, 3) != "1" => {
                    format!("task pool up to {}x faster", format_significant(g, 3))
                }
                Some(_) if r.failures.is_empty() => "task pool as fast (a tie)".to_string(),
                _ => String::new(),
            }
        } else {
            format!("{} symbolically, {} numerically", r.symbolic, r.numeric)
        };
        t.add_row(vec![
            format!("({})", r.law),
            r.statement.clone(),
            r.verdict.clone(),
            r.instances.to_string(),
            how,
        ]);
    }
    out.push_str(&t.to_string());
    out.push('\n');
    if reports.iter().any(|r| r.law == "iii") {
        out.push_str("(iii) is checked with n = 2, 4 and 8.\n");
    }
    for r in reports.iter().filter(|r| !r.failures.is_empty()) {
        out.push_str(&format!(
            "\n({}) fails in {} of {} instances, e.g.:\n",
            r.law,
            r.failures.len(),
            r.instances
        ));
        for f in r.failures.iter().take(3) {
            let at: Vec<String> = f
                .point
                .iter()
                .map(|(k, v)| format!("{k}={}", num(*v)))
                .collect();
            out.push_str(&format!(
                "  at {}: {} = {}, {} = {}\n",
                at.join(", "),
                f.left,
                num(f.left_value),
                f.right,
                num(f.right_value)
            ));
        }
    }
    if let Some(r) = reports.first() {
        if !r.skipped_components.is_empty() {
            out.push_str(&format!(
                "\nleft out (they need parameters the grid does not give, or fail to evaluate on it): {}\n",
                r.skipped_components.join(", ")
            ));
        }
    }
    out
}
