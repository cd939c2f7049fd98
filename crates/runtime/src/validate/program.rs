//! Validating the user's own program (`perfcompose validate --components FILE --term
//! TERM -- CMD`): the program's measured points against the prediction composed from
//! the components file, as one [`Row`] of a [`Report`] — the same rows, summary and
//! `--json` schema as the designs perfcompose runs itself.
//!
//! The blocks' models come from the components file (fitted on load from what
//! `perfcompose measure` wrote); the program is measured by the caller
//! ([`crate::command`]) and fitted here ("monolithic"). There is no pattern overhead
//! to add (the program is not run by perfcompose's runtime) and no second measurement
//! of the program to compare it with itself.

use std::collections::BTreeMap;

use perfcompose_core::components::Components;
use perfcompose_core::compose::{compose, ComposeOptions};
use perfcompose_core::term::Term;

use super::analyze::{coefficient_error, compare, fit_series, miss_reasons};
use super::notes::Note;
use super::options::{Options, TARGET_PATTERNS};
use super::report::{Report, Row, Rule};
use crate::bench::Series;
use crate::error::Error;

/// The suite name of a report on the user's own program.
pub const OWN_PROGRAM: &str = "your program";

/// The rule a report on one program is judged by: its row within the target of a
/// design of patterns ([`TARGET_PATTERNS`]).
pub const OWN_PROGRAM_RULE: Rule = Rule {
    median_error: TARGET_PATTERNS,
    share_within: 1.0,
};

/// Compose `term` from `components` (thread counts capped at `opts.cores`), fit
/// `program` (its points at the sizes `x`), and compare.
pub fn validate_program(
    term: &Term,
    components: &Components,
    program: &Series,
    opts: &Options,
) -> Result<Report, Error> {
    let composed = compose(
        term,
        components,
        ComposeOptions {
            cores: Some(opts.cores as u64),
        },
    )?;
    let modular = composed.model.clone();
    let monolithic = fit_series(program, opts, &[])?;
    let (points, time_error) = compare(program, &modular, opts.measure);
    let xs: Vec<f64> = program.points.iter().map(|p| p.x as f64).collect();
    let x_min = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let x_max = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let coefficient_error = coefficient_error(&modular, &monolithic, x_min, x_max);
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
    let used: BTreeMap<String, perfcompose_core::model::Expr> = term
        .root
        .component_refs()
        .into_iter()
        .filter_map(|n| Some((n.name.clone(), components.get(&n.name)?.model.clone())))
        .collect();
    let mut row = Row {
        group: OWN_PROGRAM.to_string(),
        configuration: term.root.to_string(),
        threads,
        within_cores,
        modular,
        monolithic,
        coefficient_error,
        time_error,
        overhead_ns: 0.0,
        target: within_cores.then_some(TARGET_PATTERNS),
        notes,
        points,
        components: used.clone(),
        fit_floor: None,
        error_from_measured_blocks: None,
        repeat_error: None,
        host: None,
    };
    if row.passed() == Some(false) || coefficient_error.is_nan() {
        let reasons = miss_reasons(&row, program, opts);
        row.notes.extend(reasons);
    }
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

    /// A program whose time per element is `f(x)` at every size, three repetitions.
    fn program(f: impl Fn(f64) -> f64) -> Series {
        let points = [1000u64, 2000, 4000, 8000, 16000]
            .iter()
            .map(|&x| {
                let v = f(x as f64);
                PointStats::summarise(x, vec![v * 0.99, v, v * 1.01], 1, true)
            })
            .collect();
        Series::program("pipe(sort, sum)", points)
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
            &options(2),
        )
        .unwrap();
        let row = &r.rows[0];
        assert_eq!((row.threads, row.target), (2, Some(TARGET_PATTERNS)));
        assert!(
            (row.time_error - 0.02 / 1.02).abs() < 1e-3,
            "{}",
            row.time_error
        );
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
        let r = validate_program(&term, &comps, &program(|x| 3.0 * x), &options(1)).unwrap();
        assert_eq!(r.rows[0].target, None);
        assert_eq!(r.summary().judged, 0);
    }

    #[test]
    fn an_unknown_component_is_an_error() {
        let comps = Components::from_models("t", &[("sort", "x")]).unwrap();
        let term = parse_term("<term>", "pipe(sort, sum)").unwrap();
        let e = validate_program(&term, &comps, &program(|x| x), &options(2)).unwrap_err();
        assert!(e.to_string().contains("sum"), "{e}");
    }
}
