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
use super::options::{MAX_MISSES, MAX_UNDECIDED};
use super::verdict::{
    design_choices, Budget, Coverage, Decision, DesignChoices, DesignRow, Rounds, RunInterval,
};
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
    /// The interval one run of the program is predicted to fall in
    /// ([`super::verdict::one_run_interval`]; absent where it cannot be drawn).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interval: Option<RunInterval>,
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

/// What became of a row over its rounds ([`super::verdict`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Every size's 95% interval of the error within ±target.
    Within,
    /// Some size's 95% interval of the error entirely beyond ±target.
    Miss,
    /// Neither when its budget was spent (or too few rounds to tell).
    Undecided,
    /// Not judged: more threads than cores, or a design whose calibration is not there
    /// yet (distributed designs).
    ReportedOnly,
}
/// One row of the report.
#[derive(Clone, Debug)]
pub struct Row {
    pub group: String,
    pub configuration: String,
    /// The kernel names of the design, sorted: rows with the same ones are alternative
    /// designs of one program ([`super::verdict::design_kernels`]).
    pub kernels: Vec<String>,
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
    /// The paired rounds the row was measured in (`None`: a single measurement, which
    /// decides nothing).
    pub rounds: Option<Rounds>,
    /// The program's repetitions inside their point's one-run interval.
    pub coverage: Coverage,
}

impl Row {
    /// Whether the row was decided within its target (`None`: reported only; `false`
    /// for a miss and for an undecided row).
    pub fn passed(&self) -> Option<bool> {
        match self.verdict() {
            Verdict::ReportedOnly => None,
            v => Some(v == Verdict::Within),
        }
    }

    /// The verdict of the row's rounds against its target: the time error decides.
    pub fn verdict(&self) -> Verdict {
        let Some(target) = self.target else {
            return Verdict::ReportedOnly;
        };
        match self.rounds.as_ref().map(|r| r.decision(target)) {
            Some(Decision::Within) => Verdict::Within,
            Some(Decision::Miss) => Verdict::Miss,
            Some(Decision::Open) | None => Verdict::Undecided,
        }
    }

    /// The row as an alternative design ([`super::verdict::design_choices`]): its kernels,
    /// and per size the prediction and each round's measured statistic.
    pub fn design(&self) -> Option<DesignRow> {
        let rounds = self.rounds.as_ref()?;
        Some(DesignRow {
            configuration: self.configuration.clone(),
            kernels: self.kernels.clone(),
            judged: self.target.is_some(),
            at: rounds
                .at
                .iter()
                .filter_map(|a| {
                    let p = self.points.iter().find(|p| p.x == a.x)?;
                    Some((a.x, p.predicted, a.measured.clone()))
                })
                .collect(),
        })
    }
}

/// The suite-level acceptance rule: of the judged rows at most `misses` decided misses
/// and at most `undecided` undecided (shares).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Rule {
    pub misses: f64,
    pub undecided: f64,
}

impl Rule {
    /// Designs on the thread runtime and your own program ([`MAX_MISSES`],
    /// [`MAX_UNDECIDED`]).
    pub const THREADS: Rule = Rule {
        misses: MAX_MISSES,
        undecided: MAX_UNDECIDED,
    };
    /// Distributed designs on MPI processes: reported only until the network is
    /// calibrated for them; the same shares once they are judged.
    pub const MPI: Rule = Rule::THREADS;
}

/// The suite under the acceptance rule.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    /// Rows judged (the others are reported only).
    pub judged: usize,
    /// Rows decided within their target.
    pub within_target: usize,
    /// Rows decided a miss.
    pub misses: usize,
    /// Rows left undecided by their budget.
    pub undecided: usize,
    /// The median time error of the judged rows (`None` without any).
    pub median_error: Option<f64>,
    /// Missed rows whose time error is within the program's own repeat variation.
    pub misses_within_repeat: usize,
    /// Whether the suite meets the target under [`Summary::rule`].
    pub meets_target: bool,
    /// The rule judged by.
    pub rule: Rule,
    /// The rounds' budget, the same for every row (`None` without rounds).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<Budget>,
    /// The program's repetitions inside their one-run intervals, over every row.
    pub coverage: Coverage,
    /// How well the predictions chose between alternative designs.
    pub design_choices: DesignChoices,
}

impl Summary {
    /// The rows under the thread runtime's rule ([`Rule::THREADS`]).
    pub fn of(rows: &[Row]) -> Summary {
        Summary::under(rows, Rule::THREADS)
    }

    /// The rows under `rule`.
    pub fn under(rows: &[Row], rule: Rule) -> Summary {
        let judged: Vec<&Row> = rows.iter().filter(|r| r.target.is_some()).collect();
        let count = |v: Verdict| judged.iter().filter(|r| r.verdict() == v).count();
        let (within_target, misses, undecided) = (
            count(Verdict::Within),
            count(Verdict::Miss),
            count(Verdict::Undecided),
        );
        let errors: Vec<f64> = judged.iter().map(|r| r.time_error).collect();
        let median_error = (!errors.is_empty()).then(|| median(&errors));
        let misses_within_repeat = judged
            .iter()
            .filter(|r| {
                r.verdict() == Verdict::Miss && r.repeat_error.is_some_and(|e| r.time_error <= e)
            })
            .count();
        let n = judged.len() as f64;
        let meets_target = !judged.is_empty()
            && misses as f64 <= rule.misses * n
            && undecided as f64 <= rule.undecided * n;
        let designs: Vec<DesignRow> = rows.iter().filter_map(Row::design).collect();
        Summary {
            judged: judged.len(),
            within_target,
            misses,
            undecided,
            median_error,
            misses_within_repeat,
            meets_target,
            rule,
            budget: rows
                .iter()
                .find_map(|r| r.rounds.as_ref().and_then(|r| r.budget)),
            coverage: rows
                .iter()
                .map(|r| r.coverage)
                .fold(Coverage::default(), |a, b| a + b),
            design_choices: design_choices(&designs),
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
    /// The 95% interval over rounds of the error at the size with the largest median
    /// error (absent with fewer than six rounds).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_interval: Option<JsonErrorInterval>,
    /// Rounds measured (1 for a single measurement).
    pub rounds: usize,
    /// The program's repetitions inside their point's one-run interval.
    pub coverage: Coverage,
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
            error_interval: r.rounds.as_ref().and_then(Rounds::worst).and_then(|w| {
                Some(JsonErrorInterval {
                    x: w.x,
                    median: w.median,
                    low: w.low?,
                    high: w.high?,
                })
            }),
            rounds: r.rounds.as_ref().map_or(1, |r| r.count),
            coverage: r.coverage,
            overhead_ns: r.overhead_ns,
            notes: r.notes.iter().map(JsonNote::of).collect(),
            host_check: r.host.as_ref().map(HostAtRow::to_json),
            points: r.points.clone(),
        }
    }
}

/// [`JsonRow::error_interval`].
#[derive(Serialize)]
pub struct JsonErrorInterval {
    /// The size it is at.
    pub x: u64,
    pub median: f64,
    pub low: f64,
    pub high: f64,
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

    /// A row whose six rounds all read `errors` (the same at one size).
    fn row(errors: Option<[f64; 6]>, repeat: Option<f64>, target: Option<f64>) -> Row {
        let time_error = errors.map_or(0.0, |e| e.iter().fold(0.0, |m: f64, v| m.max(v.abs())));
        Row {
            group: "g".into(),
            configuration: "c".into(),
            kernels: vec!["inc".into()],
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
            rounds: errors.map(|e| {
                let per: Vec<Vec<(u64, f64, f64)>> = e
                    .iter()
                    .map(|v| vec![(1024, 100.0 * (1.0 + v), 100.0)])
                    .collect();
                Rounds::of(&per, None)
            }),
            coverage: Coverage::default(),
        }
    }

    const IN: [f64; 6] = [0.01, -0.02, 0.03, 0.0, 0.05, -0.04];
    const OUT: [f64; 6] = [0.21, 0.15, 0.18, 0.30, 0.25, 0.12];
    const OPEN: [f64; 6] = [0.01, 0.15, 0.05, 0.30, 0.0, 0.12];

    #[test]
    fn a_rows_verdict_comes_from_its_rounds() {
        let t = Some(0.10);
        assert_eq!(row(Some(IN), None, t).verdict(), Verdict::Within);
        assert_eq!(row(Some(OUT), None, t).verdict(), Verdict::Miss);
        assert_eq!(row(Some(OPEN), None, t).verdict(), Verdict::Undecided);
        // Without rounds nothing is decided.
        assert_eq!(row(None, None, t).verdict(), Verdict::Undecided);
        assert_eq!(row(Some(OUT), None, None).verdict(), Verdict::ReportedOnly);
        let j = JsonRow::of(&row(Some(OUT), None, t));
        assert_eq!(j.rounds, 6);
        let e = j.error_interval.unwrap();
        assert!((e.low - 0.12).abs() < 1e-12 && (e.high - 0.30).abs() < 1e-12);
    }

    #[test]
    fn the_suite_meets_its_target_on_decided_misses_and_undecided_rows() {
        let t = Some(0.10);
        // Ten judged rows: one miss (10%), two undecided (20%); an oversubscribed row does
        // not count.
        let mut rows: Vec<Row> = (0..7).map(|_| row(Some(IN), None, t)).collect();
        rows.push(row(Some(OUT), Some(0.40), t));
        rows.push(row(Some(OPEN), None, t));
        rows.push(row(Some(OPEN), None, t));
        rows.push(row(Some(OUT), None, None));
        let s = Summary::of(&rows);
        assert_eq!(
            (s.judged, s.within_target, s.misses, s.undecided),
            (10, 7, 1, 2)
        );
        assert_eq!(s.misses_within_repeat, 1);
        assert!(s.meets_target);
        // Two misses of ten: over 10%.
        rows[0] = row(Some(OUT), None, t);
        assert!(!Summary::of(&rows).meets_target);
        // Three undecided of ten: over 25%.
        rows[0] = row(Some(OPEN), None, t);
        rows[7] = row(Some(IN), None, t);
        assert!(!Summary::of(&rows).meets_target);
        assert!(!Summary::of(&[]).meets_target);
    }
}
