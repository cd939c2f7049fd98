//! The outcome of a validation: one [`Row`] per configuration, the suite's [`Summary`]
//! under the acceptance rule, and the stable `--json` schema ([`JsonReport`]).
//!
//! The acceptance rule is one that noise on a shared machine cannot move by luck: over
//! the judged rows (configurations within the cores), the median row's time error and
//! the share of rows within their target — and every miss set against how well the
//! machine reproduced the program itself ([`Row::repeat_error`]).

use std::collections::BTreeMap;

use perfcompose_core::fit::Measure;
use perfcompose_core::measure::median;
use perfcompose_core::model::Expr;
use serde::Serialize;

use super::notes::Note;
use super::options::{TARGET_MEDIAN_ERROR, TARGET_SHARE_WITHIN};
use crate::host::neighbour::{NeighbourCheck, SPEED_TOLERANCE};
use crate::host::states::{CoreStates, Shares};

/// One measured point of a configuration.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Compared {
    pub x: u64,
    /// The measured time per element, reduced with the statistic the models are fitted
    /// to ([`super::Options::measure`]).
    pub measured: f64,
    pub cv: f64,
    pub predicted: f64,
}

/// How far a fitted block model is from one of its own measured points.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PointMiss {
    pub x: u64,
    /// The point's statistic, ns.
    pub value: f64,
    /// `|model − statistic|`, ns.
    pub ns: f64,
    /// `|model − statistic| / statistic`.
    pub relative: f64,
}

/// The worst [`PointMiss`] of a row's blocks, as a share of the row's prediction.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FitFloor {
    pub block: String,
    pub x: u64,
    pub relative: f64,
    /// The miss over the composed prediction at that `x` (the relative miss where the
    /// block is measured at other sizes than the program, as `map` over images).
    pub share: f64,
}

/// The host check at both ends of one configuration's measurement.
#[derive(Clone, Debug, PartialEq)]
pub struct HostAtRow {
    pub before: NeighbourCheck,
    pub after: NeighbourCheck,
    /// Each work's median idle time over the suite's checks before this configuration
    /// (the host's usual speed so far; `None` at the first).
    pub usual: Option<NeighbourCheck>,
    /// The cores' speed states sampled right before and right after the measurement
    /// (`None` where the machine cannot sample them).
    pub states: [Option<CoreStates>; 2],
    /// Each core's fastest window over every sample of the suite: what
    /// [`HostAtRow::states`] are judged against.
    pub fastest: Vec<f64>,
}

impl HostAtRow {
    /// How much slower the host ran the check's works alone when the measurement began
    /// than its usual speed before (1.0 at the first).
    pub fn slowdown(&self) -> f64 {
        self.usual.as_ref().map_or(1.0, |f| self.before.slowdown(f))
    }

    /// The check's works alone right after the measurement over right before it (the
    /// work that moved the most; 1.25: the host a quarter slower at the end).
    pub fn speed_change(&self) -> f64 {
        self.after.speed_change(&self.before)
    }

    /// Whether the host's speed moved across the measurement by more than
    /// [`SPEED_TOLERANCE`] either way.
    pub fn speed_moved(&self) -> bool {
        self.speed_change().ln().abs() > SPEED_TOLERANCE.ln()
    }

    /// The largest slowdown either end read.
    pub fn worst(&self) -> f64 {
        self.before.worst().max(self.after.worst())
    }

    /// The shares of [`HostAtRow::states`] in the fast state, judged against
    /// [`HostAtRow::fastest`]: right before and right after; `None` without both samples.
    pub fn state_shares(&self) -> Option<[Shares; 2]> {
        let [Some(before), Some(after)] = &self.states else {
            return None;
        };
        Some([before.shares(&self.fastest), after.shares(&self.fastest)])
    }

    pub fn to_json(&self) -> JsonHost {
        JsonHost {
            before: self.before.worst(),
            after: self.after.worst(),
            speed_change: self.speed_change(),
            slowdown: self.slowdown(),
            core_states: self.state_shares().map(|[before, after]| JsonCoreStates {
                fastest_ns: self.fastest.clone(),
                before,
                after,
            }),
        }
    }
}

/// What became of a row under the acceptance rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Within its target.
    Within,
    /// Missed, by no more than the program differed from itself: no prediction could be
    /// checked more closely on this machine at the time.
    MissWithinRepeat,
    /// Missed by more than the program's own variation.
    Miss,
    /// More threads than cores: reported, not judged.
    ReportedOnly,
}

/// One row of the report.
#[derive(Clone, Debug)]
pub struct Row {
    pub group: String,
    pub configuration: String,
    pub threads: usize,
    pub within_cores: bool,
    pub modular: Expr,
    pub monolithic: Expr,
    pub coefficient_error: f64,
    pub time_error: f64,
    /// Overhead added to the modular model, ns per element (0 without calibration).
    pub overhead_ns: f64,
    /// Acceptance bound that applies (`None`: oversubscribed, reported only).
    pub target: Option<f64>,
    pub notes: Vec<Note>,
    pub points: Vec<Compared>,
    /// The block models the prediction was composed from (block key → model).
    pub components: BTreeMap<String, Expr>,
    /// The block whose model's miss at its own measurements is the largest share of the
    /// prediction (`None` when unknown).
    pub fit_floor: Option<FitFloor>,
    /// The largest relative error of the prediction composed, size by size, from the
    /// blocks' measured statistics instead of their models (`None` where the blocks are
    /// not all measured at the program's sizes, as in a MapReduce): the composition's
    /// own error, without the fits'.
    pub error_from_measured_blocks: Option<f64>,
    /// The largest relative difference, over the sizes, between the program's repetitions
    /// before and after its blocks: how well the machine reproduced the program.
    pub repeat_error: Option<f64>,
    /// The host check right before and right after this configuration was measured.
    pub host: Option<HostAtRow>,
}

impl Row {
    /// Whether the row met its target, both its time error and its coefficient error
    /// within it (`None`: reported only).
    pub fn passed(&self) -> Option<bool> {
        self.target
            .map(|t| self.coefficient_error <= t && self.time_error <= t)
    }

    pub fn verdict(&self) -> Verdict {
        match self.passed() {
            None => Verdict::ReportedOnly,
            Some(true) => Verdict::Within,
            Some(false) if self.repeat_error.is_some_and(|r| self.time_error <= r) => {
                Verdict::MissWithinRepeat
            }
            Some(false) => Verdict::Miss,
        }
    }
}

/// The suite-level acceptance rule: the median judged row's time error at most
/// `median_error`, and at least `share_within` of the judged rows within their target.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Rule {
    pub median_error: f64,
    pub share_within: f64,
}

impl Rule {
    /// Designs on the thread runtime ([`TARGET_MEDIAN_ERROR`], [`TARGET_SHARE_WITHIN`]).
    pub const THREADS: Rule = Rule {
        median_error: TARGET_MEDIAN_ERROR,
        share_within: TARGET_SHARE_WITHIN,
    };
    /// Distributed designs on MPI processes: median ≤ 10%, ≥ 80% of rows within.
    pub const MPI: Rule = Rule {
        median_error: 0.10,
        share_within: 0.80,
    };
}

/// The suite under the acceptance rule.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    /// Rows within the cores (the others are reported only).
    pub judged: usize,
    pub within_target: usize,
    /// The median time error of the judged rows (`None` without any).
    pub median_error: Option<f64>,
    /// Missed rows whose time error is within the program's own repeat variation.
    pub misses_within_repeat: usize,
    /// Whether the suite meets the target under [`Summary::rule`].
    pub meets_target: bool,
    /// The rule judged by.
    pub rule: Rule,
}

impl Summary {
    /// The rows under the thread runtime's rule ([`Rule::THREADS`]).
    pub fn of(rows: &[Row]) -> Summary {
        Summary::under(rows, Rule::THREADS)
    }

    /// The rows under `rule`.
    pub fn under(rows: &[Row], rule: Rule) -> Summary {
        let judged: Vec<&Row> = rows.iter().filter(|r| r.target.is_some()).collect();
        let within_target = judged.iter().filter(|r| r.passed() == Some(true)).count();
        let errors: Vec<f64> = judged.iter().map(|r| r.time_error).collect();
        let median_error = (!errors.is_empty()).then(|| median(&errors));
        let misses_within_repeat = judged
            .iter()
            .filter(|r| r.verdict() == Verdict::MissWithinRepeat)
            .count();
        let meets_target = !judged.is_empty()
            && median_error.is_some_and(|m| m <= rule.median_error)
            && within_target as f64 >= rule.share_within * judged.len() as f64;
        Summary {
            judged: judged.len(),
            within_target,
            median_error,
            misses_within_repeat,
            meets_target,
            rule,
        }
    }
}

/// The outcome of a suite.
#[derive(Clone, Debug)]
pub struct Report {
    pub suite: String,
    pub cores: usize,
    pub overhead_calibrated: bool,
    /// Fitted block models over every measurement of each block in the suite, by key
    /// (each row composes from its own, [`Row::components`]).
    pub components: BTreeMap<String, Expr>,
    pub rows: Vec<Row>,
    /// 1-minute load average of the machine before and after the run (Linux), to judge
    /// how much other work disturbed the measurements.
    pub load: Option<(f64, f64)>,
    /// The host check before the first and after the last design of two threads or more
    /// (`None` where it did not run).
    pub host_check: Option<[NeighbourCheck; 2]>,
    /// The statistic the rows are fitted and compared on.
    pub measure: Measure,
    /// The suite-level acceptance rule.
    pub rule: Rule,
}

impl Report {
    pub fn summary(&self) -> Summary {
        Summary::under(&self.rows, self.rule)
    }

    pub fn to_json(&self) -> JsonReport {
        JsonReport {
            cores: self.cores as u32,
            rows: self.rows.iter().map(JsonRow::of).collect(),
            measure: self.measure.name(),
            summary: self.summary(),
        }
    }
}

/// The stable `--json` schema (fields are only ever added).
#[derive(Serialize)]
pub struct JsonReport {
    pub cores: u32,
    pub rows: Vec<JsonRow>,
    /// The statistic of the repetitions the rows are fitted and compared on.
    pub measure: &'static str,
    /// The suite under the acceptance rule.
    pub summary: Summary,
}

#[derive(Serialize)]
pub struct JsonRow {
    /// The suite's group of the row (e.g. `MapReduce, small image`).
    pub group: String,
    pub configuration: String,
    pub threads: u32,
    pub within_cores: bool,
    pub modular: String,
    pub monolithic: String,
    pub coefficient_error: f64,
    pub time_error: f64,
    /// The program against itself ([`Row::repeat_error`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repeat_error: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<f64>,
    pub verdict: Verdict,
    pub overhead_ns: f64,
    pub notes: Vec<JsonNote>,
    /// [`Row::host`], present on rows the host check ran around.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_check: Option<JsonHost>,
    /// Each measured point against the prediction there ([`Row::points`]).
    pub points: Vec<Compared>,
}

impl JsonRow {
    pub fn of(r: &Row) -> JsonRow {
        JsonRow {
            group: r.group.clone(),
            configuration: r.configuration.clone(),
            threads: r.threads as u32,
            within_cores: r.within_cores,
            modular: r.modular.to_string(),
            monolithic: r.monolithic.to_string(),
            coefficient_error: r.coefficient_error,
            time_error: r.time_error,
            repeat_error: r.repeat_error,
            target: r.target,
            verdict: r.verdict(),
            overhead_ns: r.overhead_ns,
            notes: r.notes.iter().map(JsonNote::of).collect(),
            host_check: r.host.as_ref().map(HostAtRow::to_json),
            points: r.points.clone(),
        }
    }
}

/// A note with its sentence.
#[derive(Serialize)]
pub struct JsonNote {
    #[serde(flatten)]
    pub note: Note,
    pub text: String,
}

impl JsonNote {
    pub fn of(n: &Note) -> JsonNote {
        JsonNote {
            note: n.clone(),
            text: n.to_string(),
        }
    }
}

/// The host check around a row: the largest slowdown a busy neighbour caused right
/// before and right after its measurement.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct JsonHost {
    pub before: f64,
    pub after: f64,
    /// [`HostAtRow::speed_change`].
    pub speed_change: f64,
    /// [`HostAtRow::slowdown`].
    pub slowdown: f64,
    /// [`HostAtRow::state_shares`], absent without them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub core_states: Option<JsonCoreStates>,
}

/// The cores' speed states around a row ([`HostAtRow::state_shares`]).
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct JsonCoreStates {
    /// Each core's fastest window in the suite, ns per call.
    pub fastest_ns: Vec<f64>,
    pub before: Shares,
    pub after: Shares,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(time_error: f64, repeat: Option<f64>, target: Option<f64>) -> Row {
        Row {
            group: "g".into(),
            configuration: "c".into(),
            threads: 1,
            within_cores: target.is_some(),
            modular: Expr::constant(1.0),
            monolithic: Expr::constant(1.0),
            coefficient_error: 0.0,
            time_error,
            overhead_ns: 0.0,
            target,
            notes: Vec::new(),
            points: Vec::new(),
            components: BTreeMap::new(),
            fit_floor: None,
            error_from_measured_blocks: None,
            repeat_error: repeat,
            host: None,
        }
    }

    #[test]
    fn a_miss_within_the_programs_own_variation_is_told_apart() {
        let t = Some(0.10);
        assert_eq!(row(0.05, None, t).verdict(), Verdict::Within);
        assert_eq!(
            row(0.15, Some(0.20), t).verdict(),
            Verdict::MissWithinRepeat
        );
        assert_eq!(row(0.15, Some(0.05), t).verdict(), Verdict::Miss);
        assert_eq!(row(0.15, None, t).verdict(), Verdict::Miss);
        assert_eq!(row(0.50, None, None).verdict(), Verdict::ReportedOnly);
    }

    #[test]
    fn the_suite_meets_its_target_on_the_median_and_the_share_within() {
        let t = Some(0.10);
        // Ten judged rows: nine within, median 3%; an oversubscribed row does not count.
        let mut rows: Vec<Row> = (0..9).map(|i| row(0.01 * f64::from(i), None, t)).collect();
        rows.push(row(0.30, Some(0.40), t));
        rows.push(row(0.90, None, None));
        let s = Summary::of(&rows);
        assert_eq!(
            (s.judged, s.within_target, s.misses_within_repeat),
            (10, 9, 1)
        );
        assert!((s.median_error.unwrap() - 0.045).abs() < 1e-12);
        assert!(s.meets_target);
        // Two misses of ten: under 90% within.
        rows[0] = row(0.2, None, t);
        assert!(!Summary::of(&rows).meets_target);
        // All within, but the median over 5%; within the MPI rule's 10%.
        let rows: Vec<Row> = (0..4).map(|_| row(0.08, None, t)).collect();
        assert!(!Summary::of(&rows).meets_target);
        assert!(Summary::under(&rows, Rule::MPI).meets_target);
        assert!(!Summary::of(&[]).meets_target);
    }
}
