//! The two ways to a [`Report`]: [`run_suite`] measures every configuration of a suite on
//! this machine in paired rounds ([`super::protocol`]), alternative designs of one
//! program interleaved in the same rounds, and [`reanalyze`] validates a saved run again
//! without running anything (another modeler, statistic or calibration on identical
//! data).

use std::collections::BTreeMap;

use perfcompose_core::model::Expr;
use perfcompose_core::term::Term;

use super::analyze::{
    analyze_case, block_breaks, block_drift_notes, explain, fit_block, fit_misses, fit_series,
    phases_of, pooled, predict, BlockFit, CaseData, Phases,
};
use super::archive::{Archive, SavedRun};
use super::blocks::{place, BlockKey, Placement};
use super::designs::run_designs;
use super::notes::Note;
use super::options::{row_target, Options};
use super::protocol::{
    block_sizes, half, measure_round, point_stat, pool_series, repeat_error, round_id, Round,
    HALVES,
};
use super::report::{HostAtRow, PointMiss, Report, Row, Rule};
use super::suite::{Case, Suite};
use super::verdict::{design_kernels, Budget, Decision, Rounds};
use crate::bench::{self, Progress, Series};
use crate::error::Error;
use crate::host::neighbour::{self, NeighbourCheck};
use crate::host::states::{self, CoreStates};
use crate::kernel::{Inputs, Registry};
use crate::plan::{parse_plan, Plan};

/// Steps of a suite, for a progress bar: one per program point of every round its
/// budget allows (rows decided sooner take fewer).
pub fn steps(suite: &Suite) -> usize {
    suite.cases.iter().map(|c| c.sizes.len()).sum::<usize>() * suite.budget.rounds
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
fn parse_cases(suite: &Suite, registry: &Registry, cores: usize) -> Result<Vec<Parsed>, Error> {
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
            Ok(Parsed {
                term,
                plan,
                placement,
            })
        })
        .collect()
}

/// A configuration parsed and placed.
struct Parsed {
    term: Term,
    plan: Plan,
    placement: Placement,
}

/// The row of configuration `c` from its blocks and its program, each pooled over its
/// rounds: fit every block (with its uncertainty and run-to-run factors, recording each
/// model's misses and breaks), compose and compare; the repeat error from `halves`.
#[allow(clippy::too_many_arguments)]
fn pooled_row(
    c: &Case,
    p: &Parsed,
    blocks: &[(BlockKey, Series)],
    program: &Series,
    halves: Option<[&Series; 2]>,
    registry: &Registry,
    opts: &Options,
    misses: &mut BTreeMap<BlockKey, Vec<PointMiss>>,
    breaks: &mut BTreeMap<String, Vec<f64>>,
) -> Result<Row, Error> {
    let mut fits: BTreeMap<BlockKey, BlockFit> = BTreeMap::new();
    let mut phases = Phases::new();
    for (key, b) in blocks {
        let at = block_breaks(registry, &key.kernel, c.image, b, &opts.caches);
        let fit = fit_block(b, opts, &at)?;
        breaks.insert(b.name.clone(), at);
        misses.insert(key.clone(), fit_misses(&fit.model, b, opts));
        fits.insert(key.clone(), fit);
        phases.extend(phases_of(std::slice::from_ref(b)));
    }
    let repeat = halves.and_then(|[a, b]| repeat_error(a, b, opts.measure));
    analyze_case(
        &CaseData {
            case: c,
            plan: &p.plan,
            term: &p.term,
            placement: &p.placement,
            blocks: fits,
            block_misses: misses,
            phases: &phases,
            program,
            repeat_error: repeat,
        },
        registry,
        opts,
    )
}

/// One round's prediction error at each size: the round's blocks fitted and composed
/// ([`predict`]), against the round's program — `(x, predicted, measured)`.
fn round_errors(
    c: &Case,
    p: &Parsed,
    needs: &[BlockKey],
    round: &Round,
    registry: &Registry,
    opts: &Options,
) -> Result<Vec<(u64, f64, f64)>, Error> {
    let mut models: BTreeMap<BlockKey, Expr> = BTreeMap::new();
    let mut series = Vec::new();
    for (key, s) in round.block_series(needs) {
        let at = block_breaks(registry, &key.kernel, c.image, &s, &opts.caches);
        models.insert(key, fit_series(&s, opts, &at)?);
        series.push(s);
    }
    let prediction = predict(
        &p.plan,
        &p.term,
        &p.placement,
        &models,
        &phases_of(&series),
        opts,
    )?;
    Ok(round
        .program
        .iter()
        .map(|pt| (pt.x, prediction.at(pt.x), point_stat(pt, opts.measure)))
        .collect())
}

/// A configuration's rounds so far.
#[derive(Default)]
struct Measuring {
    rounds: Vec<Round>,
    errors: Vec<Vec<(u64, f64, f64)>>,
    seconds: f64,
}

/// A configuration's row from its rounds ([`finish_rounds`]).
struct Finished {
    row: Row,
    /// Its blocks pooled over the rounds, by measurement.
    blocks: Vec<(BlockKey, Series)>,
    /// Every series to save: each round's, the pooled ones and the halves.
    saved: Vec<Series>,
}

/// The row of a configuration measured in `rounds` (their errors `errors`), with the
/// series to save.
#[allow(clippy::too_many_arguments)]
fn finish_rounds(
    c: &Case,
    p: &Parsed,
    id: &str,
    rounds: &[Round],
    errors: &[Vec<(u64, f64, f64)>],
    budget: Option<Budget>,
    registry: &Registry,
    opts: &Options,
    misses: &mut BTreeMap<BlockKey, Vec<PointMiss>>,
    breaks: &mut BTreeMap<String, Vec<f64>>,
) -> Result<Finished, Error> {
    let needs = p.placement.needs();
    let per_round: Vec<Vec<(BlockKey, Series)>> =
        rounds.iter().map(|r| r.block_series(&needs)).collect();
    let blocks: Vec<(BlockKey, Series)> = needs
        .iter()
        .enumerate()
        .map(|(k, key)| {
            let parts: Vec<&Series> = per_round.iter().map(|r| &r[k].1).collect();
            (key.clone(), pool_series(&key.to_string(), &parts))
        })
        .collect();
    let programs: Vec<Series> = rounds.iter().map(|r| r.program_series(id)).collect();
    let all: Vec<&Series> = programs.iter().collect();
    let program = pool_series(id, &all);
    let half_of = |first: bool, suffix: &str| {
        let parts: Vec<&Series> = rounds
            .iter()
            .zip(&programs)
            .filter(|(r, _)| r.program_first == first)
            .map(|(_, s)| s)
            .collect();
        pool_series(&format!("{id}{suffix}"), &parts)
    };
    let halves = [half_of(true, HALVES[0]), half_of(false, HALVES[1])];
    let both = (!halves[0].points.is_empty() && !halves[1].points.is_empty())
        .then(|| [&halves[0], &halves[1]]);
    let mut row = pooled_row(
        c, p, &blocks, &program, both, registry, opts, misses, breaks,
    )?;
    row.rounds = Some(Rounds::of(errors, budget));
    explain(&mut row, &program, opts);
    let mut saved = Vec::new();
    for (r, (round, blocks)) in rounds.iter().zip(per_round).enumerate() {
        let name = round_id(id, r + 1);
        saved.push(round.program_series(&name));
        for (key, s) in blocks {
            saved.push(Series {
                name: format!("{name}->{key}"),
                ..s
            });
        }
    }
    for (key, s) in &blocks {
        saved.push(Series {
            name: format!("{id}->{key}"),
            ..s.clone()
        });
    }
    saved.push(program);
    let [a, b] = halves;
    saved.extend([a, b].into_iter().filter(|h| !h.points.is_empty()));
    Ok(Finished { row, blocks, saved })
}

/// The suite's configurations by design: those over the same multiset of kernel names
/// are alternatives of one program ([`design_kernels`]), measured in the same rounds. In
/// the suite's order.
fn design_groups(suite: &Suite, parsed: &[Parsed]) -> Vec<Vec<usize>> {
    let mut groups: Vec<(Vec<String>, Vec<usize>)> = Vec::new();
    for (i, p) in parsed.iter().enumerate() {
        let key = design_kernels(&p.plan, suite.cases[i].image);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, g)) => g.push(i),
            None => groups.push((key, vec![i])),
        }
    }
    groups.into_iter().map(|(_, g)| g).collect()
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

/// Run a suite: the configurations by design group ([`design_groups`]), each group in
/// rounds ([`super::protocol`]) — every configuration of the group once per round, in an
/// order that rotates from round to round — while a judged row of the group is still
/// open and the suite's budget allows ([`Budget::another`]); then each row from its
/// rounds. With `archive`, every finished group's rows and the measurements so far are
/// saved at once, so a run stopped part way keeps what it measured; the report at the
/// end.
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
    let mut built = Vec::with_capacity(parsed.len());
    for p in &parsed {
        built.push(p.plan.build(registry, opts.config.clone())?);
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
    let sampling = half(&suite.sampling);
    let mut misses: BTreeMap<BlockKey, Vec<PointMiss>> = BTreeMap::new();
    let mut breaks: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    // Every configuration's block measurements by row, for the drift notes and the
    // report's pooled models; every measurement under its saved name.
    // Rows by their configuration's place in the suite (a group's rows are finished
    // together, the report lists them in the suite's order).
    let mut drift: Vec<(usize, Series)> = Vec::new();
    let mut saved: Vec<Series> = Vec::new();
    let mut finished: Vec<Option<(String, Row)>> = vec![None; suite.cases.len()];
    for group in design_groups(suite, &parsed) {
        // The host check around the group, for the design of the most threads within
        // the cores.
        let lead = group
            .iter()
            .map(|&i| &parsed[i].plan)
            .filter(|p| p.threads() <= opts.cores)
            .max_by_key(|p| p.threads());
        let around = match lead {
            Some(plan) if suite.host_check => host.before(plan)?,
            _ => None,
        };
        host.fresh = None;
        host.fresh_states = None;
        let sizes: Vec<Vec<Vec<usize>>> = group
            .iter()
            .map(|&i| {
                parsed[i]
                    .placement
                    .needs()
                    .iter()
                    .map(|k| block_sizes(suite, registry, &suite.cases[i], k))
                    .collect()
            })
            .collect::<Result<_, _>>()?;
        let mut state: Vec<Measuring> = group.iter().map(|_| Measuring::default()).collect();
        let mut r = 0;
        loop {
            let open = group.iter().zip(&state).any(|(&i, m)| {
                parsed[i].plan.threads() <= opts.cores
                    && Rounds::of(&m.errors, None).decision(row_target(&parsed[i].plan))
                        == Decision::Open
            });
            let seconds = state.iter().map(|m| m.seconds).sum::<f64>() / group.len() as f64;
            if !suite.budget.another(r, seconds, open) {
                break;
            }
            for j in 0..group.len() {
                let k = (j + r) % group.len();
                let i = group[k];
                let (c, p) = (&suite.cases[i], &parsed[i]);
                let needs = p.placement.needs();
                let inputs = Inputs::with_image(c.image);
                let mut program = |x: usize| {
                    let mut s = bench::ProgramSampler::new(
                        &built[i],
                        registry,
                        x,
                        &inputs,
                        opts.memory_limit,
                    )?;
                    bench::sample_point(&sampling, &mut s)
                };
                let mut block = |b: usize, x: usize| {
                    let mut s = bench::KernelSampler::for_block(
                        registry,
                        &needs[b].kernel,
                        x,
                        &inputs,
                        &sampling,
                        opts.memory_limit,
                        needs[b].conditions.clone(),
                    )?;
                    bench::sample_point(&sampling, &mut s)
                };
                let round = measure_round(
                    c,
                    &c.id(&p.plan),
                    r,
                    &sizes[k],
                    &mut program,
                    &mut block,
                    progress,
                )?;
                let e = round_errors(c, p, &needs, &round, registry, opts)?;
                let m = &mut state[k];
                m.seconds += round.seconds;
                m.errors.push(e);
                m.rounds.push(round);
            }
            r += 1;
        }
        let after = match (lead, around) {
            (Some(plan), Some(before)) => host.after(plan, before)?,
            _ => None,
        };
        for (k, m) in group.iter().zip(state) {
            let (c, p) = (&suite.cases[*k], &parsed[*k]);
            let id = c.id(&p.plan);
            let Finished {
                mut row,
                blocks,
                saved: series,
            } = finish_rounds(
                c,
                p,
                &id,
                &m.rounds,
                &m.errors,
                Some(suite.budget),
                registry,
                opts,
                &mut misses,
                &mut breaks,
            )?;
            if p.plan.threads() <= opts.cores {
                row.host.clone_from(&after);
                note_host(&mut row);
            }
            for (_, b) in blocks {
                drift.push((*k, b));
            }
            saved.extend(series);
            if let Some(a) = archive.as_mut() {
                a.row(&row, &saved)?;
            }
            finished[*k] = Some((id, row));
        }
    }
    let (ids, mut rows): (Vec<String>, Vec<Row>) = finished.into_iter().flatten().unzip();
    add_drift_notes(&mut rows, &ids, &drift);
    add_state_notes(&mut rows, &host.fastest);
    if !suite.programs.is_empty() {
        let designs = run_designs(
            &suite.programs,
            suite.budget,
            &suite.sampling,
            opts,
            &mut crate::command::System,
            progress,
        )?;
        for row in designs {
            if let Some(a) = archive.as_mut() {
                a.row(&row, &saved)?;
            }
            rows.push(row);
        }
    }
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
/// `opts.measure`, composed and compared as in [`run_suite`], round by round where the
/// run saved its rounds. A run of the layout before rounds is read with its program's
/// two halves as two rounds, or its program as one (too few to decide a row: every
/// judged row is undecided).
/// Configurations whose program is not in `saved` are skipped and listed (a run stopped
/// part way); one whose program is there but a block is not is an error.
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
    let block = |prefix: &str, id: &str, key: &BlockKey| -> Result<Series, Error> {
        let name = format!("{prefix}->{key}");
        let b = by_name
            .get(name.as_str())
            .ok_or_else(|| Error::MissingBlock {
                dir: saved.dir.clone(),
                configuration: id.to_string(),
                block: key.to_string(),
                callpath: name.clone(),
            })?;
        Ok(Series {
            name: key.to_string(),
            ..(*b).clone()
        })
    };
    for (c, p) in suite.cases.iter().zip(&parsed) {
        let id = c.id(&p.plan);
        let needs = p.placement.needs();
        let mut rounds = Vec::new();
        while let Some(program) = by_name.get(round_id(&id, rounds.len() + 1).as_str()) {
            let name = round_id(&id, rounds.len() + 1);
            let blocks = needs
                .iter()
                .map(|k| Ok(block(&name, &id, k)?.points))
                .collect::<Result<Vec<_>, Error>>()?;
            rounds.push(Round {
                program: program.points.clone(),
                blocks,
                program_first: rounds.len() % 2 == 0,
                seconds: 0.0,
            });
        }
        let (row, blocks) = if rounds.is_empty() {
            let Some(program) = by_name.get(id.as_str()) else {
                missing.push(id);
                continue;
            };
            let blocks = needs
                .iter()
                .map(|k| Ok((k.clone(), block(&id, &id, k)?)))
                .collect::<Result<Vec<_>, Error>>()?;
            let halves = HALVES.map(|h| by_name.get(format!("{id}{h}").as_str()).copied());
            let both = match halves {
                [Some(a), Some(b)] => Some([a, b]),
                _ => None,
            };
            let mut row = pooled_row(
                c,
                p,
                &blocks,
                program,
                both,
                registry,
                opts,
                &mut misses,
                &mut breaks,
            )?;
            // The halves as two rounds; a run saved without them, its program as one.
            let parts: Vec<&Series> = match both {
                Some(h) => h.to_vec(),
                None => vec![program],
            };
            let per_half: Vec<Vec<(u64, f64, f64)>> = parts
                .iter()
                .map(|h| {
                    h.points
                        .iter()
                        .filter_map(|pt| {
                            let predicted = row.points.iter().find(|q| q.x == pt.x)?.predicted;
                            Some((pt.x, predicted, point_stat(pt, opts.measure)))
                        })
                        .collect()
                })
                .collect();
            row.rounds = Some(Rounds::of(&per_half, None));
            explain(&mut row, program, opts);
            (row, blocks)
        } else {
            let errors = rounds
                .iter()
                .map(|r| round_errors(c, p, &needs, r, registry, opts))
                .collect::<Result<Vec<_>, Error>>()?;
            let Finished { row, blocks, .. } = finish_rounds(
                c,
                p,
                &id,
                &rounds,
                &errors,
                saved.manifest.budget,
                registry,
                opts,
                &mut misses,
                &mut breaks,
            )?;
            (row, blocks)
        };
        for (_, b) in blocks {
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
