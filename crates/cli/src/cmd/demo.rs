//! `perfcompose demo`: the whole idea in one command, on built-in defaults.
//!
//! The pattern-composition paper's Table 1 component models are built in; the demo composes the designs of
//! its Table 2 (seq, tpool, pipe), Table 3 / eq. 6 (MapReduce on GrPPI) and Table 7
//! (relation iv) and prints them next to the numbers the paper reports.

use std::io::Write as _;

use perfcompose_core::components::{seed_table1, Components, SEED000_TABLE1};
use perfcompose_core::compose::predict::predict;
use perfcompose_core::compose::{compose, grid::Grid, ComposeOptions};
use perfcompose_core::model::{parse_model, Expr};
use perfcompose_core::term::parse_term;
use serde::Serialize;

use super::input::{self, num};

/// Flags of `perfcompose demo`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Print the rows as JSON instead of tables.
    #[arg(long)]
    pub json: bool,
}

/// The pattern-composition paper, Table 2: design, modular model, monolithic model, relative error [%], and
/// whether the paper divided by the modular coefficient for that error.
const TABLE2: &[(&str, &str, &str, f64, bool)] = &[
    (
        "seq(qsort, nop)",
        "1034.17 * x * log2(x) + 5422.97",
        "1037.42 * x * log2(x)",
        0.31,
        false,
    ),
    (
        "seq(qsort, inc)",
        "1034.17 * x * log2(x) + 536.185 * x",
        "1063.25 * x * log2(x)",
        2.74,
        false,
    ),
    (
        "seq(inc, qsort)",
        "1034.17 * x * log2(x) + 536.185 * x",
        "1070.71 * x * log2(x)",
        3.41,
        false,
    ),
    ("seq(inc, inc)", "1072.37 * x", "1030.44 * x", 4.07, false),
    (
        "seq(inc, nop)",
        "536.185 * x + 5422.97",
        "540.897 * x",
        0.87,
        false,
    ),
    (
        "tpool(1, qsort)",
        "1034.17 * x * log2(x)",
        "1072.01 * x * log2(x)",
        3.53,
        false,
    ),
    (
        "tpool(2, qsort)",
        "517.09 * x * log2(x)",
        "553.72 * x * log2(x)",
        6.62,
        false,
    ),
    (
        "tpool(4, qsort)",
        "258.54 * x * log2(x)",
        "291.46 * x * log2(x)",
        11.29,
        false,
    ),
    (
        "tpool(8, qsort)",
        "129.27 * x * log2(x)",
        "151.31 * x * log2(x)",
        14.56,
        false,
    ),
    (
        "tpool(12, qsort)",
        "86.18 * x * log2(x)",
        "108.34 * x * log2(x)",
        25.71,
        true,
    ),
    (
        "tpool(24, qsort)",
        "43.09 * x * log2(x)",
        "70.25 * x * log2(x)",
        63.03,
        true,
    ),
    (
        "pipe(qsort, nop)",
        "1034.17 * x * log2(x)",
        "1086.11 * x * log2(x)",
        4.78,
        false,
    ),
    (
        "pipe(qsort, inc)",
        "1034.17 * x * log2(x)",
        "1105.29 * x * log2(x)",
        6.43,
        false,
    ),
    (
        "pipe(inc, qsort)",
        "1034.17 * x * log2(x)",
        "1076.89 * x * log2(x)",
        3.97,
        false,
    ),
    ("pipe(inc, inc)", "536.185 * x", "677.05 * x", 20.81, false),
    ("pipe(inc, nop)", "536.185 * x", "670.32 * x", 20.01, false),
];

/// The pattern-composition paper, Table 3: threads, modular and monolithic coefficient of x [ns], error [%].
const TABLE3: &[(u64, f64, f64, f64)] = &[
    (1, 2.186e7, 2.177e7, 0.41),
    (2, 1.093e7, 1.108e7, 1.35),
    (4, 5.465e6, 5.705e6, 4.21),
    (8, 2.733e6, 3.067e6, 10.89),
    (12, 1.822e6, 2.066e6, 11.81),
    (24, 0.911e6, 1.065e6, 14.46),
];

/// The pattern-composition paper, Table 7: the task pool of the sequence, its monolithic model, and the
/// monolithic model of the pipeline it replaces.
const TABLE7: &[(&str, &str, &str)] = &[
    (
        "tpool(2, seq(qsort, nop))",
        "546.40 * x * log2(x)",
        "1086.11 * x * log2(x)",
    ),
    (
        "tpool(2, seq(qsort, inc))",
        "561.84 * x * log2(x)",
        "1105.29 * x * log2(x)",
    ),
    (
        "tpool(2, seq(inc, qsort))",
        "564.59 * x * log2(x)",
        "1076.89 * x * log2(x)",
    ),
    ("tpool(2, seq(inc, inc))", "607.06 * x", "677.05 * x"),
    ("tpool(2, seq(inc, nop))", "355.67 * x", "670.32 * x"),
];

const GRPPI: &str = "mapreduce(map_grppi, reduce_grppi, nodes=1, threads=n, keys=x, per_key=768)";
const CROSSOVER: &str = "pipe(tpool(4, qsort), seq(inc, nop))";

#[derive(Serialize)]
struct Row {
    table: &'static str,
    design: String,
    model: String,
    paper_modular: Option<String>,
    paper_monolithic: String,
    error_percent: f64,
    paper_error_percent: Option<f64>,
}

fn model_of(term: &str, c: &Components) -> anyhow::Result<Expr> {
    Ok(compose(&parse_term("<demo>", term)?, c, ComposeOptions::default())?.model)
}

/// The coefficient of the leading term (the paper compares these).
fn leading_coefficient(e: &Expr) -> f64 {
    e.leading()
        .and_then(|p| p.terms().last().map(|(c, _)| c))
        .unwrap_or(f64::NAN)
}

fn error_percent(ours: f64, measured: f64) -> f64 {
    (ours - measured).abs() / measured * 100.0
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let c = seed_table1();
    let mut rows = Vec::new();
    for (design, modular, mono, err, _) in TABLE2 {
        let m = model_of(design, &c)?;
        let mono_e = parse_model(mono)?;
        rows.push(Row {
            table: "2",
            design: design.to_string(),
            model: m.to_string(),
            paper_modular: Some(modular.to_string()),
            paper_monolithic: mono.to_string(),
            error_percent: error_percent(leading_coefficient(&m), leading_coefficient(&mono_e)),
            paper_error_percent: Some(*err),
        });
    }
    let grppi = model_of(GRPPI, &c)?;
    for (n, modular, mono, err) in TABLE3 {
        let m = grppi.subst("n", &Expr::constant(*n as f64));
        rows.push(Row {
            table: "3",
            design: GRPPI.replace("threads=n", &format!("threads={n}")),
            model: m.to_string(),
            paper_modular: Some(format!("{modular:e} * x")),
            paper_monolithic: format!("{mono:e} * x"),
            error_percent: error_percent(leading_coefficient(&m), *mono),
            paper_error_percent: Some(*err),
        });
    }
    for (design, mono, _) in TABLE7 {
        let m = model_of(design, &c)?;
        rows.push(Row {
            table: "7",
            design: design.to_string(),
            model: m.to_string(),
            paper_modular: None,
            paper_monolithic: mono.to_string(),
            error_percent: error_percent(
                leading_coefficient(&m),
                leading_coefficient(&parse_model(mono)?),
            ),
            paper_error_percent: None,
        });
    }
    if args.json {
        let json = serde_json::to_string_pretty(&rows)?;
        writeln!(crate::report::stdout(), "{json}")?;
        return Ok(());
    }

    let mut out = String::new();
    out.push_str(
        "perfcompose demo: the block models of the pattern-composition paper's Table 1 (in ns),\n",
    );
    out.push_str("composed into the designs of its evaluation, next to what the paper reports.\n");
    out.push_str("modular = composed from the components; monolithic = fitted by the authors to\n");
    out.push_str(
        "measurements of the whole program; error = |modular - monolithic| / monolithic\n",
    );
    out.push_str("of the leading coefficients.\n\n");

    out.push_str("Table 1: built-in components (your own: --components FILE)\n");
    let mut t = input::table(vec!["component".into(), "model [ns]".into(), "what".into()]);
    for (name, model, what) in SEED000_TABLE1 {
        t.add_row(vec![name.to_string(), model.to_string(), what.to_string()]);
    }
    out.push_str(&format!("{t}\n\n"));

    out.push_str("Table 2: sequences, task pools, pipelines\n");
    let mut t = input::table(
        [
            "design",
            "modular (perfcompose)",
            "modular (paper)",
            "monolithic (paper)",
            "error %",
            "paper %",
        ]
        .map(String::from)
        .to_vec(),
    );
    for (row, (_, _, _, _, modular_basis)) in rows.iter().filter(|r| r.table == "2").zip(TABLE2) {
        let m = parse_model(&row.model)?;
        t.add_row(vec![
            row.design.clone(),
            m.rounded(input::DIGITS),
            row.paper_modular.clone().unwrap_or_default(),
            row.paper_monolithic.clone(),
            format!("{:.2}", row.error_percent),
            format!(
                "{:.2}{}",
                row.paper_error_percent.unwrap_or(f64::NAN),
                if *modular_basis { " *" } else { "" }
            ),
        ]);
    }
    out.push_str(&format!("{t}\n"));
    out.push_str(
        "Pipelines: the paper keeps the asymptotically larger stage; perfcompose keeps the\n",
    );
    out.push_str("pointwise maximum (and reports where the bottleneck changes).\n");
    out.push_str(
        "* the paper divides by the modular coefficient in these rows (e.g. 22.16/86.18).\n\n",
    );

    out.push_str("Table 3 and eq. 6: MapReduce on GrPPI, one node, n threads\n");
    out.push_str(&format!(
        "  {GRPPI}\n  = {}\n",
        grppi.rounded(input::DIGITS)
    ));
    out.push_str(
        "  (x * (M[map](1) + M[reduce](768)) / n; the paper rounds 2.1859e7 to 2.186e7)\n",
    );
    let mut t = input::table(
        [
            "n",
            "modular (perfcompose)",
            "modular (paper)",
            "monolithic (paper)",
            "error %",
            "paper %",
        ]
        .map(String::from)
        .to_vec(),
    );
    for (row, (n, ..)) in rows.iter().filter(|r| r.table == "3").zip(TABLE3) {
        t.add_row(vec![
            n.to_string(),
            parse_model(&row.model)?.rounded(input::DIGITS),
            row.paper_modular.clone().unwrap_or_default(),
            row.paper_monolithic.clone(),
            format!("{:.2}", row.error_percent),
            format!("{:.2}", row.paper_error_percent.unwrap_or(f64::NAN)),
        ]);
    }
    out.push_str(&format!("{t}\n\n"));

    out.push_str(
        "Table 7 and relation (iv): a task pool of the sequence instead of the pipeline\n",
    );
    out.push_str("(the same two threads, no stage waiting for the other)\n");
    let mut t = input::table(
        [
            "design",
            "modular (perfcompose)",
            "monolithic (paper)",
            "error %",
            "pipeline, monolithic (paper)",
        ]
        .map(String::from)
        .to_vec(),
    );
    for (row, (_, _, pipe)) in rows.iter().filter(|r| r.table == "7").zip(TABLE7) {
        t.add_row(vec![
            row.design.clone(),
            parse_model(&row.model)?.rounded(input::DIGITS),
            row.paper_monolithic.clone(),
            format!("{:.2}", row.error_percent),
            pipe.to_string(),
        ]);
    }
    out.push_str(&format!("{t}\n\n"));

    out.push_str("Where the paper's asymptotic choice is not the whole story:\n");
    let p = predict(
        &parse_term("<demo>", CROSSOVER)?,
        &c,
        ComposeOptions::default(),
        &Grid::default(),
    )?;
    out.push_str(&format!(
        "  {CROSSOVER}\n  = {}\n",
        p.expr.rounded(input::DIGITS)
    ));
    for x in &p.crossovers {
        out.push_str(&format!(
            "  the bottleneck is {} below x = {} and {} above\n",
            x.from,
            num(x.x),
            x.to
        ));
    }
    out.push_str("\nNext:\n");
    out.push_str(&format!(
        "  perfcompose predict '{CROSSOVER}' --at x=4,1024,262144\n"
    ));
    out.push_str("  perfcompose check 'pipe(qsort, inc)' 'tpool(2, seq(qsort, inc))'\n");
    out.push_str("  perfcompose check --laws\n");
    crate::report::stdout().write_all(out.as_bytes())?;
    Ok(())
}
