//! The two ways to a [`Report`]: [`run_suite`] measures every configuration of a suite on
//! this machine, and [`reanalyze`] validates a saved run again without running anything
//! (another modeler, statistic or calibration on identical data).

use std::collections::BTreeMap;

use perfcompose_core::model::Expr;
use perfcompose_core::term::Term;

use super::analyze::{
    analyze_case, block_breaks, block_drift_notes, fit_misses, fit_series, phases_of, pooled,
    CaseData, Phases,
};
use super::archive::{Archive, SavedRun};
use super::blocks::{place, Placement};
use super::notes::Note;
use super::options::{row_target, Options};
use super::protocol::{measure_case, repeat_error, Setup, HALVES};
use super::report::{HostAtRow, PointMiss, Report, Row, Rule};
use super::suite::{Case, Suite};
use crate::bench::{Progress, Series};
use crate::error::Error;
use crate::host::neighbour::{self, NeighbourCheck};
use crate::host::states::{self, CoreStates};
use crate::kernel::Registry;
use crate::plan::{parse_plan, Plan};

/// Steps of a suite, for a progress bar: one per program point.
pub fn steps(suite: &Suite) -> usize {
    suite.cases.iter().map(|c| c.sizes.len()).sum()
}

/// The 1-minute load average (Linux `/proc/loadavg`).
pub fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Every configuration of `suite` parsed (errors point into the term) and placed.
fn parse_cases(
    suite: &Suite,
    registry: &Registry,
    cores: usize,
) -> Result<Vec<(Term, Plan, Placement)>, Error> {
    suite
        .cases
        .iter()
        .map(|c| {
            let (term, plan) = parse_plan("<term>", &c.term)?;
            // A construct the runtime cannot run says so first; a name that is no
            // kernel is located in the term.
            if plan.runs() {
                registry.check_term(&term)?;
            }
            let placement = place(&plan, registry, cores, c.image);
            Ok((term, plan, placement))
        })
        .collect()
}

/// Fitted block models of one configuration, with their misses, phases and series.
#[derive(Default)]
struct Fitted {
    models: BTreeMap<String, Expr>,
    phases: Phases,
}

/// Fit every block series of a configuration (named by key; the blocks of `placement`),
/// recording each model's misses and breaks.
fn fit_blocks(
    c: &Case,
    placement: &Placement,
    blocks: &[Series],
    registry: &Registry,
    opts: &Options,
    misses: &mut BTreeMap<String, Vec<PointMiss>>,
    breaks: &mut BTreeMap<String, Vec<f64>>,
) -> Result<Fitted, Error> {
    let mut fitted = Fitted::default();
    for b in blocks {
        let kernel = placement
            .blocks
            .values()
            .find(|k| k.to_string() == b.name)
            .map_or(b.name.as_str(), |k| k.kernel.as_str());
        let at = block_breaks(registry, kernel, c.image, b, &opts.caches);
        let model = fit_series(b, opts, &at)?;
        breaks.insert(b.name.clone(), at);
        misses.insert(b.name.clone(), fit_misses(&model, b, opts));
        fitted.models.insert(b.name.clone(), model);
        fitted.phases.extend(phases_of(std::slice::from_ref(b)));
    }
    Ok(fitted)
}

/// The notes of a row on the host check around it: on a row within the cores that
/// misses its target, whether the host's speed moved across it and, for two threads or
/// more, whether a busy core slowed a block on the other at either end.
fn note_host(row: &mut Row) {
    let Some(host) = &row.host else {
        return;
    };
    if !row.within_cores || row.passed() != Some(false) {
        return;
    }
    let mut notes = vec![Note::HostSpeed {
        change: host.speed_change(),
    }];
    if row.threads >= 2 && host.before.has_neighbours() {
        notes.push(Note::Neighbour {
            threads: row.threads,
            before: host.before.worst(),
            after: host.after.worst(),
        });
    }
    row.notes.extend(notes);
}

/// Judge every row's cores' speed states against `fastest`, each core's fastest window
/// over the whole suite, and note them on a row within the cores that misses.
fn add_state_notes(rows: &mut [Row], fastest: &[f64]) {
    for row in rows.iter_mut() {
        let missed = row.within_cores && row.passed() == Some(false);
        let threads = row.threads;
        let Some(host) = &mut row.host else {
            continue;
        };
        host.fastest = fastest.to_vec();
        if let Some([before, after]) = host.state_shares().filter(|_| missed) {
            row.notes.push(Note::CoreStates {
                threads,
                each_before: before.each,
                each_after: after.each,
                every_before: before.every,
                every_after: after.every,
            });
        }
    }
}

/// Append [`block_drift_notes`] to the rows.
fn add_drift_notes(rows: &mut [Row], ids: &[String], blocks: &[(usize, Series)]) {
    let targets: Vec<Option<f64>> = rows.iter().map(|r| r.target).collect();
    for (row, notes) in rows
        .iter_mut()
        .zip(block_drift_notes(ids, &targets, blocks))
    {
        row.notes.extend(notes);
    }
}

/// A block measured for configuration `id`, under its saved name `ID->KEY`.
fn saved_block(id: &str, s: &Series) -> Series {
    Series {
        name: format!("{id}->{}", s.name),
        ..s.clone()
    }
}

/// The host check on this machine: the checks so far, the last one while nothing has
/// run since, and the same for the cores' speed states.
struct HostCheck<'a> {
    registry: &'a Registry,
    sample: std::time::Duration,
    fresh: Option<NeighbourCheck>,
    speeds: Vec<NeighbourCheck>,
    fresh_states: Option<CoreStates>,
    fastest: Vec<f64>,
    first: Option<NeighbourCheck>,
    last: Option<NeighbourCheck>,
}

impl HostCheck<'_> {
    fn check(&self, plan: &Plan) -> Result<Option<NeighbourCheck>, Error> {
        if plan.threads() >= 2 {
            neighbour::check(self.registry, neighbour::VALIDATE_ROUNDS)
        } else {
            neighbour::check_idle(self.registry, neighbour::VALIDATE_ROUNDS)
        }
    }

    fn states(&mut self) -> Result<Option<CoreStates>, Error> {
        let s = states::validate_sample(self.registry, self.sample)?;
        if let Some(s) = &s {
            states::keep_fastest(&mut self.fastest, s);
        }
        Ok(s)
    }

    /// Right before a configuration: a check taken right after the last one serves
    /// (one without neighbours only a design of one thread).
    fn before(&mut self, plan: &Plan) -> Result<Option<HostAtRow>, Error> {
        let fresh = self
            .fresh
            .take()
            .filter(|c| c.has_neighbours() || plan.threads() < 2);
        let Some(before) = (match fresh {
            Some(c) => Some(c),
            None => self.check(plan)?,
        }) else {
            return Ok(None);
        };
        if before.has_neighbours() {
            self.first = self.first.take().or_else(|| Some(before.clone()));
        }
        let usual = neighbour::typical(&self.speeds);
        self.speeds.push(before.clone());
        let states = match self.fresh_states.take() {
            Some(s) => Some(s),
            None => self.states()?,
        };
        Ok(Some(HostAtRow {
            after: before.clone(),
            before,
            usual,
            states: [states, None],
            fastest: Vec::new(),
        }))
    }

    /// Right after a configuration.
    fn after(&mut self, plan: &Plan, mut host: HostAtRow) -> Result<Option<HostAtRow>, Error> {
        let Some(after) = self.check(plan)? else {
            return Ok(None);
        };
        let states = self.states()?;
        self.fresh_states.clone_from(&states);
        host.states[1] = states;
        host.fastest.clone_from(&self.fastest);
        host.after = after.clone();
        self.speeds.push(after.clone());
        if after.has_neighbours() {
            self.last = Some(after.clone());
        }
        self.fresh = Some(after);
        Ok(Some(host))
    }
}

/// Run a suite (module docs of [`super::protocol`]): per configuration, measure it and
/// its blocks, fit, compose and compare. With `archive`, every finished row and the
/// measurements so far are saved at once, so a run stopped part way keeps what it
/// measured; the report at the end.
pub fn run_suite(
    suite: &Suite,
    registry: &Registry,
    opts: &Options,
    progress: &mut dyn FnMut(Progress<'_>),
    mut archive: Option<Archive>,
) -> Result<Report, Error> {
    let load_before = load_average();
    // Check every configuration before measuring anything: a typo should fail in
    // milliseconds, not after the block measurements.
    let parsed = parse_cases(suite, registry, opts.cores)?;
    for (_, plan, _) in &parsed {
        plan.build(registry, opts.config.clone())?;
    }
    let mut host = HostCheck {
        registry,
        sample: suite.state_sample,
        fresh: None,
        speeds: Vec::new(),
        fresh_states: None,
        fastest: Vec::new(),
        first: None,
        last: None,
    };
    let mut misses: BTreeMap<String, Vec<PointMiss>> = BTreeMap::new();
    let mut breaks: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    // Every configuration's block measurements by row, for the drift notes and the
    // report's pooled models; every measurement under its saved name.
    let mut drift: Vec<(usize, Series)> = Vec::new();
    let mut saved: Vec<Series> = Vec::new();
    let mut ids: Vec<String> = Vec::new();
    let mut rows = Vec::new();
    for (c, (term, plan, placement)) in suite.cases.iter().zip(&parsed) {
        let gated = suite.host_check && plan.threads() <= opts.cores;
        let around = if gated { host.before(plan)? } else { None };
        host.fresh = None;
        host.fresh_states = None;
        let id = c.id(plan);
        let needs = placement.needs();
        let setup = Setup {
            suite,
            registry,
            config: opts.config.clone(),
            memory_limit: opts.memory_limit,
            measure: opts.measure,
            target: row_target(plan),
        };
        let got = measure_case(c, plan, &id, &needs, &setup, progress)?;
        let fitted = fit_blocks(
            c,
            placement,
            &got.blocks,
            registry,
            opts,
            &mut misses,
            &mut breaks,
        )?;
        let repeat = repeat_error(&got.halves[0], &got.halves[1], opts.measure);
        let mut row = analyze_case(
            &CaseData {
                case: c,
                plan,
                term,
                placement,
                block_models: fitted.models,
                block_misses: &misses,
                phases: &fitted.phases,
                program: &got.program,
                repeat_error: repeat,
            },
            registry,
            opts,
        )?;
        row.notes.extend(got.revisits);
        if let Some(before) = around {
            row.host = host.after(plan, before)?;
            note_host(&mut row);
        }
        for b in &got.blocks {
            drift.push((rows.len(), b.clone()));
            saved.push(saved_block(&id, b));
        }
        saved.push(got.program);
        saved.extend(got.halves);
        if let Some(a) = archive.as_mut() {
            a.row(&row, &saved)?;
        }
        ids.push(id);
        rows.push(row);
    }
    add_drift_notes(&mut rows, &ids, &drift);
    add_state_notes(&mut rows, &host.fastest);
    let blocks: Vec<Series> = drift.into_iter().map(|(_, s)| s).collect();
    let mut components = BTreeMap::new();
    for s in pooled(&blocks) {
        let at = breaks.get(&s.name).cloned().unwrap_or_default();
        components.insert(s.name.clone(), fit_series(&s, opts, &at)?);
    }
    let report = Report {
        suite: suite.name.clone(),
        cores: opts.cores,
        overhead_calibrated: opts.overhead.is_some(),
        components,
        rows,
        load: load_before.zip(load_average()),
        host_check: host.first.zip(host.last).map(|(a, b)| [a, b]),
        measure: opts.measure,
        rule: Rule::THREADS,
    };
    if let Some(a) = archive {
        a.finish(&report, &saved)?;
    }
    Ok(report)
}

/// What [`reanalyze`] found in a saved run.
#[derive(Debug)]
pub struct Reanalysis {
    pub report: Report,
    /// Configurations of the suite with no saved program measurement (their ids).
    pub missing: Vec<String>,
}

/// Validate `suite` again from the measurements of a saved run, without running
/// anything: the blocks and programs are fitted with `opts.modeler` under
/// `opts.measure`, composed and compared as in [`run_suite`]. Configurations whose
/// program is not in `saved` are skipped and listed (a run stopped part way); one whose
/// program is there but a block is not is an error.
pub fn reanalyze(
    suite: &Suite,
    saved: &SavedRun,
    registry: &Registry,
    opts: &Options,
) -> Result<Reanalysis, Error> {
    let by_name: BTreeMap<&str, &Series> =
        saved.series.iter().map(|s| (s.name.as_str(), s)).collect();
    let parsed = parse_cases(suite, registry, opts.cores)?;
    let mut misses = BTreeMap::new();
    let mut breaks = BTreeMap::new();
    let mut rows = Vec::new();
    let mut missing = Vec::new();
    let mut drift: Vec<(usize, Series)> = Vec::new();
    let mut ids: Vec<String> = Vec::new();
    for (c, (term, plan, placement)) in suite.cases.iter().zip(&parsed) {
        let id = c.id(plan);
        let Some(program) = by_name.get(id.as_str()) else {
            missing.push(id);
            continue;
        };
        let mut blocks = Vec::new();
        for key in placement.needs() {
            let name = format!("{id}->{key}");
            let b = by_name
                .get(name.as_str())
                .ok_or_else(|| Error::MissingBlock {
                    dir: saved.dir.clone(),
                    configuration: id.clone(),
                    block: key.to_string(),
                    callpath: name.clone(),
                })?;
            blocks.push(Series {
                name: key.to_string(),
                ..(*b).clone()
            });
        }
        let fitted = fit_blocks(
            c,
            placement,
            &blocks,
            registry,
            opts,
            &mut misses,
            &mut breaks,
        )?;
        let halves = HALVES.map(|h| by_name.get(format!("{id}{h}").as_str()).copied());
        let repeat = match halves {
            [Some(a), Some(b)] => repeat_error(a, b, opts.measure),
            _ => None,
        };
        let row = analyze_case(
            &CaseData {
                case: c,
                plan,
                term,
                placement,
                block_models: fitted.models,
                block_misses: &misses,
                phases: &fitted.phases,
                program,
                repeat_error: repeat,
            },
            registry,
            opts,
        )?;
        for b in blocks {
            drift.push((rows.len(), b));
        }
        ids.push(id);
        rows.push(row);
    }
    if rows.is_empty() {
        return Err(Error::NoConfiguration {
            dir: saved.dir.clone(),
            count: suite.cases.len(),
            suite: suite.name.clone(),
        });
    }
    add_drift_notes(&mut rows, &ids, &drift);
    let blocks: Vec<Series> = drift.into_iter().map(|(_, s)| s).collect();
    let mut components = BTreeMap::new();
    for s in pooled(&blocks) {
        let at = breaks.get(&s.name).cloned().unwrap_or_default();
        components.insert(s.name.clone(), fit_series(&s, opts, &at)?);
    }
    Ok(Reanalysis {
        report: Report {
            suite: suite.name.clone(),
            cores: opts.cores,
            overhead_calibrated: opts.overhead.is_some(),
            components,
            rows,
            load: None,
            host_check: None,
            measure: opts.measure,
            rule: Rule::THREADS,
        },
        missing,
    })
}
