//! Validating the user's own program (`perfcompose validate --components FILE --term
//! TERM -- CMD`): the program's measured points against the prediction composed from
//! the components file, as one [`Row`] of a [`Report`] — the same rows, summary and
//! `--json` schema as the designs perfcompose runs itself.
//!
//! The blocks' models come from the components file (fitted on load from what
//! `perfcompose measure` wrote); the program is measured by the caller
//! ([`crate::command`]) in rounds ([`program_rounds`]), each round a sweep of its sizes,
//! and fitted here ("monolithic"). The blocks were measured before and are not timed
//! again, so the rounds' errors carry the program's variation, not the blocks'. There
//! is no pattern overhead to add (the program is not run by perfcompose's runtime).

use std::collections::BTreeMap;

use perfcompose_core::components::Components;
use perfcompose_core::compose::interval::{self, IntervalOptions, Sampler};
use perfcompose_core::compose::{compose, ComposeOptions};
use perfcompose_core::model::Expr;
use perfcompose_core::term::Term;

use super::analyze::{coefficient_error, compare, explain, fit_series, row_coverage};
use super::archive::SavedRun;
use super::notes::Note;
use super::options::{Options, TARGET_PATTERNS};
use super::protocol::{point_stat, pool_series, repeat_error, round_id};
use super::report::{Report, Row, Rule};
use super::verdict::{one_run_interval, Budget, Decision, Rounds};
use crate::bench::{self, Series};
use crate::error::Error;

/// The suite name of a report on the user's own program.
pub const OWN_PROGRAM: &str = "your program";

/// The rule a report on one program is judged by: the thread runtime's.
pub const OWN_PROGRAM_RULE: Rule = Rule::THREADS;

/// The user's program and its prediction.
pub struct OwnProgram {
    pub term: Term,
    pub components: Components,
    /// The composed prediction.
    pub modular: Expr,
    pub threads: usize,
    /// [`TARGET_PATTERNS`] within the cores, `None` beyond (reported only).
    pub target: Option<f64>,
    notes: Vec<Note>,
}

impl OwnProgram {
    /// Compose `term` from `components`, thread counts capped at `opts.cores`.
    pub fn new(term: &Term, components: &Components, opts: &Options) -> Result<OwnProgram, Error> {
        let composed = compose(
            term,
            components,
            ComposeOptions {
                cores: Some(opts.cores as u64),
            },
        )?;
        let threads = crate::plan::plan_from_term(term).map_or(1, |p| p.threads());
        let within_cores = threads <= opts.cores;
        let mut notes: Vec<Note> = composed
            .notes
            .iter()
            .map(|n| Note::Composition {
                text: n.text.clone(),
            })
            .collect();
        if !within_cores {
            notes.push(Note::Oversubscribed {
                threads,
                cores: opts.cores,
            });
        }
        Ok(OwnProgram {
            term: term.clone(),
            components: components.clone(),
            modular: composed.model,
            threads,
            target: within_cores.then_some(TARGET_PATTERNS),
            notes,
        })
    }

    /// One round's error at each of its sizes: `(x, predicted, measured)`.
    pub fn round_errors(&self, round: &Series, opts: &Options) -> Vec<(u64, f64, f64)> {
        round
            .points
            .iter()
            .map(|p| {
                let predicted = self
                    .modular
                    .eval_at(&[(bench::PARAMETER, p.x as f64)])
                    .unwrap_or(f64::NAN);
                (p.x, predicted, point_stat(p, opts.measure))
            })
            .collect()
    }

    /// Whether rounds `rounds` leave the row open (a judged row neither within nor
    /// missed).
    pub fn open(&self, rounds: &[Series], opts: &Options) -> bool {
        let errors: Vec<_> = rounds.iter().map(|r| self.round_errors(r, opts)).collect();
        self.target
            .is_some_and(|t| Rounds::of(&errors, None).decision(t) == Decision::Open)
    }

    /// The report of the program measured in `rounds` (one series per round, named
    /// after the term) under `budget`.
    pub fn report(
        &self,
        rounds: &[Series],
        budget: Option<Budget>,
        opts: &Options,
    ) -> Result<Report, Error> {
        let name = self.term.root.to_string();
        let parts: Vec<&Series> = rounds.iter().collect();
        let program = pool_series(&name, &parts);
        let monolithic = fit_series(&program, opts, &[])?;
        let (mut points, time_error) = compare(&program, &self.modular, opts.measure);
        self.intervals(&mut points, opts);
        let xs: Vec<f64> = program.points.iter().map(|p| p.x as f64).collect();
        let x_min = xs.iter().copied().fold(f64::INFINITY, f64::min);
        let x_max = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let coefficient_error = coefficient_error(&self.modular, &monolithic, x_min, x_max);
        let used: BTreeMap<String, Expr> = self
            .term
            .root
            .component_refs()
            .into_iter()
            .filter_map(|n| Some((n.name.clone(), self.components.get(&n.name)?.model.clone())))
            .collect();
        let mut kernels: Vec<String> = self
            .term
            .root
            .component_refs()
            .into_iter()
            .map(|n| n.name.clone())
            .collect();
        kernels.sort();
        let errors: Vec<_> = rounds.iter().map(|r| self.round_errors(r, opts)).collect();
        let half = |first: bool| {
            let parts: Vec<&Series> = rounds
                .iter()
                .enumerate()
                .filter(|(i, _)| (i % 2 == 0) == first)
                .map(|(_, s)| s)
                .collect();
            pool_series(&name, &parts)
        };
        let repeat = (rounds.len() >= 2)
            .then(|| repeat_error(&half(true), &half(false), opts.measure))
            .flatten();
        let mut row = Row {
            group: OWN_PROGRAM.to_string(),
            configuration: name,
            kernels,
            threads: self.threads,
            within_cores: self.target.is_some(),
            modular: self.modular.clone(),
            monolithic,
            coefficient_error,
            time_error,
            overhead_ns: 0.0,
            target: self.target,
            notes: self.notes.clone(),
            coverage: row_coverage(&points, &program),
            points,
            components: used.clone(),
            fit_floor: None,
            error_from_measured_blocks: None,
            repeat_error: repeat,
            host: None,
            rounds: Some(Rounds::of(&errors, budget)),
        };
        explain(&mut row, &program, opts);
        Ok(Report {
            suite: OWN_PROGRAM.to_string(),
            cores: opts.cores,
            overhead_calibrated: false,
            components: used,
            rows: vec![row],
            load: None,
            host_check: None,
            measure: opts.measure,
            rule: OWN_PROGRAM_RULE,
        })
    }

    /// The one-run intervals of `points`: the prediction drawn under the components'
    /// uncertainty (fitted components carry one), no run-to-run factor (the blocks'
    /// repetitions are not in the components file).
    fn intervals(&self, points: &mut [super::report::Compared], opts: &Options) {
        let options = IntervalOptions {
            level: opts.level,
            ..IntervalOptions::default()
        };
        let templates = interval::templated(&self.components);
        let draws = interval::composed_template(
            &self.term,
            &templates,
            ComposeOptions {
                cores: Some(opts.cores as u64),
            },
            None,
        )
        .ok()
        .and_then(|t| {
            let s = Sampler::new(&[&t], &self.components, options)?;
            let b = s.batch(&t);
            Some((s, b))
        });
        for p in points.iter_mut() {
            let values = draws
                .as_ref()
                .and_then(|(s, b)| {
                    s.values(b, &vec![(bench::PARAMETER.to_string(), p.x as f64)])
                        .ok()
                })
                .unwrap_or_else(|| vec![p.predicted]);
            p.interval = one_run_interval(&values, &[1.0], opts.level);
        }
    }
}

/// Measure the program in rounds while its row is open and `budget` allows
/// ([`Budget::another`]): `round(r)` measures round `r` (a sweep of its sizes) and
/// returns it with the seconds it took.
pub fn program_rounds<E>(
    own: &OwnProgram,
    budget: Budget,
    opts: &Options,
    mut round: impl FnMut(usize) -> Result<(Series, f64), E>,
) -> Result<Vec<Series>, E> {
    let mut rounds = Vec::new();
    let mut seconds = 0.0;
    while budget.another(rounds.len(), seconds, own.open(&rounds, opts)) {
        let (s, t) = round(rounds.len())?;
        seconds += t;
        rounds.push(s);
    }
    Ok(rounds)
}

/// The saved rounds of a program run named `name`: `NAME [round R]` from 1 on.
pub fn saved_rounds(saved: &SavedRun, name: &str) -> Vec<Series> {
    let mut out = Vec::new();
    while let Some(s) = saved
        .series
        .iter()
        .find(|s| s.name == round_id(name, out.len() + 1))
    {
        out.push(s.clone());
    }
    out
}

/// Validate again the user's program saved in `saved` (`validate -- CMD --save`): its
/// rounds against the prediction composed from the saved models (fitted components as
/// their fitted models, so without their uncertainty: the one-run intervals are the
/// prediction alone).
pub fn reanalyze_program(saved: &SavedRun, opts: &Options) -> Result<Report, Error> {
    let origin = saved.dir.join("run.json").display().to_string();
    let Some(p) = &saved.manifest.program else {
        return Err(Error::Input(Box::new(
            perfcompose_core::diag::Diagnostic::whole(
                &origin,
                "not a saved run of your own program",
            ),
        )));
    };
    let term = perfcompose_core::term::parse_term_with(
        &origin,
        &p.term,
        &perfcompose_core::skeleton::StandardLibrary,
    )?;
    let pairs: Vec<(&str, &str)> = p
        .components
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let components = Components::from_models(&origin, &pairs)?;
    let rounds = saved_rounds(saved, &term.root.to_string());
    validate_program(&term, &components, &rounds, saved.manifest.budget, opts)
}

/// Compose `term` from `components` and compare with the program measured in `rounds`.
pub fn validate_program(
    term: &Term,
    components: &Components,
    rounds: &[Series],
    budget: Option<Budget>,
    opts: &Options,
) -> Result<Report, Error> {
    OwnProgram::new(term, components, opts)?.report(rounds, budget, opts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::PointStats;
    use perfcompose_core::components::Components;
    use perfcompose_core::fit::Measure;
    use perfcompose_core::term::parse_term;

    fn options(cores: usize) -> Options {
        Options {
            cores,
            measure: Measure::Median,
            modeler: "perfcompose".into(),
            caches: Vec::new(),
            ..Options::default()
        }
    }

    /// A program whose time per element is `f(x)` at every size, three repetitions, in
    /// six rounds that differ by up to ±1%.
    fn program(f: impl Fn(f64) -> f64) -> Vec<Series> {
        (0..6)
            .map(|r| {
                let wobble = 1.0 + 0.004 * (f64::from(r) - 2.5);
                let points = [1000u64, 2000, 4000, 8000, 16000]
                    .iter()
                    .map(|&x| {
                        let v = f(x as f64) * wobble;
                        PointStats::summarise(x, vec![v * 0.99, v, v * 1.01], 1, true)
                    })
                    .collect();
                Series::program("pipe(sort, sum)", points)
            })
            .collect()
    }

    #[test]
    fn a_program_that_runs_as_composed_is_within_its_target() {
        let comps = Components::from_models("t", &[("sort", "20 * x * log2(x)"), ("sum", "3 * x")])
            .unwrap();
        let term = parse_term("<term>", "pipe(sort, sum)").unwrap();
        // The pipeline runs at the speed of its slower stage, plus 2%.
        let r = validate_program(
            &term,
            &comps,
            &program(|x| 1.02 * 20.0 * x * x.log2()),
            None,
            &options(2),
        )
        .unwrap();
        let row = &r.rows[0];
        assert_eq!((row.threads, row.target), (2, Some(TARGET_PATTERNS)));
        assert!(row.time_error < 0.04, "{}", row.time_error);
        assert_eq!(row.rounds.as_ref().map(|r| r.count), Some(6));
        assert!(row.coefficient_error < 0.05, "{}", row.coefficient_error);
        assert_eq!(row.verdict(), super::super::Verdict::Within);
        assert_eq!(row.components.len(), 2);
        assert_eq!(r.summary().judged, 1);
        assert!(r.summary().meets_target);
        assert_eq!(r.to_json().rows[0].configuration, "pipe(sort, sum)");
    }

    #[test]
    fn a_program_far_from_its_prediction_misses_and_says_why() {
        let comps = Components::from_models("t", &[("sort", "20 * x * log2(x)"), ("sum", "3 * x")])
            .unwrap();
        let term = parse_term("<term>", "pipe(sort, sum)").unwrap();
        // Run sequentially instead: the sum of the stages, not their max.
        let r = validate_program(
            &term,
            &comps,
            &program(|x| 20.0 * x * x.log2() + 3.0 * x + 5e4),
            None,
            &options(2),
        )
        .unwrap();
        let row = &r.rows[0];
        assert_eq!(row.verdict(), super::super::Verdict::Miss);
        assert!(row.time_error > 0.10, "{}", row.time_error);
        assert!(row
            .notes
            .iter()
            .any(|n| matches!(n, Note::WorstPoint { .. })));
        // More threads than cores: reported, not judged.
        let r = validate_program(&term, &comps, &program(|x| 3.0 * x), None, &options(1)).unwrap();
        assert_eq!(r.rows[0].target, None);
        assert_eq!(r.summary().judged, 0);
    }

    #[test]
    fn an_unknown_component_is_an_error() {
        let comps = Components::from_models("t", &[("sort", "x")]).unwrap();
        let term = parse_term("<term>", "pipe(sort, sum)").unwrap();
        let e = validate_program(&term, &comps, &program(|x| x), None, &options(2)).unwrap_err();
        assert!(e.to_string().contains("sum"), "{e}");
    }
}
