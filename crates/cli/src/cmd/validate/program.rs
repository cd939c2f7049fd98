//! `perfcompose validate --components FILE --term TERM --at x=... -- CMD`: the user's own
//! program measured like `perfcompose measure` measures a block, against the prediction
//! composed from its blocks. Glue over `perfcompose_runtime::command` and
//! `perfcompose_runtime::validate::validate_program`.

use anyhow::{anyhow, bail};
use perfcompose_core::components::ComponentFitter;
use perfcompose_core::components::{Components, LoadOptions};
use perfcompose_core::compose::grid::WholeSizes;
use perfcompose_core::fit::FitOptions;
use perfcompose_core::skeleton::StandardLibrary;
use perfcompose_core::term::parse_term_with;
use perfcompose_runtime::bench::{PointStats, Series, PARAMETER};
use perfcompose_runtime::command::{format_point, System};
use perfcompose_runtime::validate::{self, Options};

use super::args::Args;
use super::print::print;
use crate::cmd::input;
use crate::cmd::runtime_args::bar;

/// The sizes of `--at`: one axis, `x`, rounded to whole numbers (said on stderr when that
/// changed a value).
fn sizes(args: &Args) -> anyhow::Result<Vec<u64>> {
    if args.at.is_empty() {
        bail!("give the sizes your program runs at with --at x=V1,V2,... (at least two, to fit its model)");
    }
    let grid = input::grid(&args.at)?;
    if grid.names() != [PARAMETER] {
        bail!(
            "--at {}: validate fits your program's model over one parameter, x (--at x=V1,V2,...)",
            grid.names().join(" --at ")
        );
    }
    let xs = grid.values_of(PARAMETER).unwrap_or_default();
    let whole = WholeSizes::new(xs).map_err(|e| anyhow!("--at x: {e}"))?;
    if let Some(note) = whole.note("--at x") {
        perfcompose_core::stderr_line!("{note}");
    }
    Ok(whole.sizes)
}

pub fn run(args: &Args) -> anyhow::Result<()> {
    for (given, flag) in [
        (args.from.is_some(), "--from"),
        (args.sizes.is_some(), "--sizes"),
        (!args.only.is_empty(), "--only"),
        (args.calibration.is_some(), "--calibration"),
        (args.trace.is_some(), "--trace"),
    ] {
        if given {
            bail!("{flag} is for the designs perfcompose runs itself, not for a program given after --");
        }
    }
    let Some(path) = &args.components else {
        bail!("give your program's blocks with --components FILE (a components file; `perfcompose measure` writes their measurements)");
    };
    let Some(text) = &args.term else {
        bail!("give your program's design with --term, e.g. --term 'pipe(sort, checksum)'");
    };
    let term = parse_term_with("<term>", text, &StandardLibrary)?;
    let xs = sizes(args)?;
    let modeler = perfcompose_core::fit::modeler(&args.modeler)
        .ok_or_else(|| anyhow!("unknown modeler `{}`", args.modeler))?;
    let fitter = ComponentFitter {
        modeler,
        options: FitOptions {
            measure: Some(args.measure.into()),
            allow_negative: false,
            breaks: Vec::new(),
        },
        // The components' uncertainty draws the one-run intervals.
        replicates: validate::analyze::INTERVAL_REPLICATES,
    };
    let components = Components::load(
        path,
        LoadOptions {
            library: &StandardLibrary,
            fitter: Some(&fitter),
        },
    )?;
    let opts = Options {
        cores: args
            .cores
            .unwrap_or_else(perfcompose_runtime::host::available_cores),
        overhead: None,
        measure: args.measure.into(),
        modeler: args.modeler.clone(),
        caches: Vec::new(),
        level: args.level,
        ..Options::default()
    };
    // A term that does not compose fails here, before the program runs.
    let own = validate::OwnProgram::new(&term, &components, &opts)?;
    let budget = super::budget(args, validate::suite::DEFAULT_BUDGET);
    let points: Vec<Vec<(String, f64)>> = xs
        .iter()
        .map(|&x| vec![(PARAMETER.to_string(), x as f64)])
        .collect();
    let x = [PARAMETER.to_string()];
    let varying = if points.len() > 1 { &x[..] } else { &[] };
    let mut measurement = args
        .timing
        .measurement(&args.command, &x, varying, points.len())?;
    // Each round takes half a point's repetitions, as a round of the suites does.
    measurement.sampling = validate::protocol::half(&measurement.sampling);
    let name = term.root.to_string();
    let mut archive = match &args.save {
        Some(dir) => Some(validate::Archive::create_program(
            dir,
            validate::SavedProgram {
                term: name.clone(),
                components: own_models(&own),
                sizes: xs.clone(),
            },
            budget,
            &opts,
        )?),
        None => None,
    };
    let bar = bar((points.len() * budget.rounds) as u64, args.json);
    let mut unit_warning = crate::cmd::timing_args::UnitWarning::default();
    let mut saved: Vec<Series> = Vec::new();
    let rounds = validate::program_rounds(&own, budget, &opts, |r| -> anyhow::Result<_> {
        let start = std::time::Instant::now();
        let mut measured = Vec::new();
        measurement.grid(
            &mut System,
            &points,
            &args.timing.order(points.len()),
            |i, _| {
                bar.set_message(format!(
                    "your program at {}, round {}",
                    format_point(&points[i]),
                    r + 1
                ))
            },
            |m| -> anyhow::Result<()> {
                unit_warning.check(&m, &bar);
                bar.inc(1);
                measured.push(m);
                Ok(())
            },
        )?;
        let mut stats: Vec<PointStats> = measured
            .into_iter()
            .map(|m| {
                let x = m.point[0].1 as u64;
                PointStats::summarise(x, m.values, 1, m.converged)
            })
            .collect();
        stats.sort_by_key(|p| p.x);
        saved.push(Series::program(
            validate::protocol::round_id(&name, r + 1),
            stats.clone(),
        ));
        if let Some(a) = archive.as_mut() {
            a.measurements(&saved)?;
        }
        Ok((
            Series::program(name.clone(), stats),
            start.elapsed().as_secs_f64(),
        ))
    })?;
    bar.finish_and_clear();
    let report = own.report(&rounds, Some(budget), &opts)?;
    if let Some(mut a) = archive {
        a.row(&report.rows[0], &saved)?;
        a.finish(&report, &saved)?;
        if let Some(dir) = &args.save {
            perfcompose_core::stderr_line!("wrote measurements and report to {}", dir.display());
        }
    }
    print(args, &report)
}

/// The models `own` composes its program from, as text, by component.
fn own_models(own: &validate::OwnProgram) -> std::collections::BTreeMap<String, String> {
    own.term
        .root
        .component_refs()
        .into_iter()
        .filter_map(|n| {
            Some((
                n.name.clone(),
                own.components.get(&n.name)?.model.to_string(),
            ))
        })
        .collect()
}

/// `validate --from DIR` on a saved run of your own program: its rounds again, under
/// this command's statistic and level.
pub fn from_saved(args: &Args, run: &validate::SavedRun) -> anyhow::Result<()> {
    let opts = Options {
        cores: args.cores.unwrap_or(run.manifest.cores),
        overhead: None,
        measure: args.measure.into(),
        modeler: args.modeler.clone(),
        caches: Vec::new(),
        level: args.level,
        ..Options::default()
    };
    let report = validate::reanalyze_program(run, &opts)?;
    print(args, &report)
}
