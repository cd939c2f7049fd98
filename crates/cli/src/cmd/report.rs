//! `perfcompose report`: pictures as one self-contained HTML file (and, with `--svg-dir`,
//! one SVG file per picture).
//!
//! Glue only: reads the inputs with the lower crates' readers and hands typed results to
//! `perfcompose-report`, which builds the page.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use perfcompose_core::compose::ComposeOptions;
use perfcompose_core::fit::{self, FitOptions, Measure, DEFAULT_MODELER};
use perfcompose_core::measure::ReadOptions;
use perfcompose_core::skeleton::StandardLibrary;
use perfcompose_core::term::parse_term_with;
use perfcompose_report::{design, models, replay, validation, Page};

use super::input;

/// Flags of `perfcompose report`.
#[derive(clap::Args, Debug)]
#[command(
    group(clap::ArgGroup::new("kind").required(true).args(["fit", "term", "validate", "simulate"])),
    after_help = "Examples:
  perfcompose report --components blocks.toml --term 'pipe(tpool(4, qsort), inc)' --term 'tpool(4, seq(qsort, inc))' --at x=2^10..2^20 -o design.html
  perfcompose report --fit blocks.txt -o models.html
  perfcompose report --validate results/ -o validation.html
  perfcompose simulate --platform p.xml --trace t.txt --timeline run.json && perfcompose report --simulate run.json -o replay.html"
)]
pub struct Args {
    /// Designs page: a design to draw (repeat to compare designs in one plot).
    #[arg(long, value_name = "TERM", conflicts_with_all = ["fit", "validate", "simulate"])]
    pub term: Vec<String>,
    /// Designs page: components file (TOML) [default: the pattern-composition paper's Table 1 blocks, built in].
    #[arg(long, value_name = "FILE", requires = "term")]
    pub components: Option<PathBuf>,
    /// Designs page: the range drawn, NAME=A..B (log-spaced), and single values of the
    /// other parameters (NAME=V) [default: x=1..2^30].
    #[arg(long = "at", value_name = "NAME=A..B", requires = "term")]
    pub at: Vec<String>,
    /// Designs page: cores per node (thread counts above C do not divide further).
    #[arg(long, value_name = "C", requires = "term", value_parser = crate::cmd::input::cores())]
    pub cores: Option<u64>,
    /// Models page: measurement files to fit and draw (the formats `fit` reads).
    #[arg(long, value_name = "FILE", num_args = 1.., conflicts_with_all = ["validate", "simulate"])]
    pub fit: Vec<PathBuf>,
    /// Models page: the modeler.
    #[arg(long, default_value = DEFAULT_MODELER, requires = "fit")]
    pub modeler: String,
    /// Models page: how repetitions are reduced for fitting and drawn (mean, median,
    /// minimum, maximum) [default: minimum; mean with --modeler extrap, as Extra-P]
    #[arg(long, requires = "fit", value_parser = parse_measure)]
    pub measure: Option<Measure>,
    /// Validation page: a run `perfcompose validate --save DIR` kept.
    #[arg(long, value_name = "DIR", conflicts_with = "simulate")]
    pub validate: Option<PathBuf>,
    /// Replay page: the timeline `perfcompose simulate --timeline FILE` wrote (or the
    /// output of `simulate --json`, which has the breakdown but no timeline).
    #[arg(long, value_name = "FILE")]
    pub simulate: Option<PathBuf>,
    /// The HTML file to write.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: PathBuf,
    /// Also write every picture as a standalone SVG file into DIR.
    #[arg(long, value_name = "DIR")]
    pub svg_dir: Option<PathBuf>,
}

fn parse_measure(s: &str) -> Result<Measure, String> {
    s.parse()
}

/// The library's error as the binary reports it: located input errors with their caret.
fn lift(e: perfcompose_report::Error) -> anyhow::Error {
    match e {
        perfcompose_report::Error::Input(d) => d.into(),
        perfcompose_report::Error::Runtime(e) => e.into(),
        e => e.into(),
    }
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let page = if !args.term.is_empty() {
        designs(&args)?
    } else if !args.fit.is_empty() {
        fitted(&args)?
    } else if let Some(dir) = &args.validate {
        let (report, missing) = validation::reanalyze_saved(dir)?;
        if !missing.is_empty() {
            perfcompose_core::stderr_line!(
                "{} has no measurements of {} configuration(s) (left out): {}",
                dir.display(),
                missing.len(),
                missing.join("; ")
            );
        }
        validation::page(&report, &dir.display().to_string()).map_err(lift)?
    } else if let Some(file) = &args.simulate {
        let text = std::fs::read_to_string(file)
            .with_context(|| format!("cannot read {}", file.display()))?;
        let origin = file.display().to_string();
        let r = replay::Replay::parse(&origin, &text)?;
        replay::page(&r, &origin).map_err(lift)?
    } else {
        anyhow::bail!("give --term, --fit, --validate or --simulate");
    };
    write(&page, &args.output, args.svg_dir.as_deref())
}

fn designs(args: &Args) -> anyhow::Result<Page> {
    let components = input::components(args.components.as_deref())?;
    let terms = args
        .term
        .iter()
        .map(|t| parse_term_with("<term>", t, &StandardLibrary))
        .collect::<Result<Vec<_>, _>>()?;
    let grid = input::grid(&args.at)?;
    input::check_machine(&components, &grid)?;
    let range = design::Range::from_grid(&grid)?;
    let opts = ComposeOptions { cores: args.cores };
    design::page(&terms, &components, opts, &range).map_err(lift)
}

fn fitted(args: &Args) -> anyhow::Result<Page> {
    let modeler = fit::modeler(&args.modeler).ok_or_else(|| {
        let names: Vec<&str> = fit::modelers().iter().map(|m| m.name()).collect();
        anyhow::anyhow!(
            "unknown modeler `{}` (known: {})",
            args.modeler,
            names.join(", ")
        )
    })?;
    let options = FitOptions {
        measure: Some(args.measure.unwrap_or_else(|| modeler.default_measure())),
        ..FitOptions::default()
    };
    let mut experiments = Vec::new();
    for path in &args.fit {
        // A file over several sets of parameters: each set's series over its own.
        let sets = perfcompose_core::measure::read_experiments_with(path, &ReadOptions::default())?;
        for exp in sets {
            experiments.push((path.display().to_string(), exp));
        }
    }
    let inputs: Vec<models::Input<'_>> = experiments
        .iter()
        .map(|(origin, exp)| models::Input {
            origin: origin.clone(),
            experiment: exp,
        })
        .collect();
    models::page(&inputs, modeler, &options).map_err(lift)
}

/// Write the page, and each figure into `svg_dir`.
fn write(page: &Page, output: &Path, svg_dir: Option<&Path>) -> anyhow::Result<()> {
    std::fs::write(output, page.html())
        .with_context(|| format!("cannot write {}", output.display()))?;
    if let Some(dir) = svg_dir {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        for f in page.figures() {
            let path = dir.join(format!("{}.svg", f.name));
            std::fs::write(&path, &f.svg)
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
    }
    perfcompose_core::stderr_line!(
        "wrote {} ({} pictures{})",
        output.display(),
        page.figures().len(),
        svg_dir.map_or(String::new(), |d| format!(
            ", also as SVG files in {}",
            d.display()
        ))
    );
    Ok(())
}
