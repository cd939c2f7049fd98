//! What a row says besides its numbers: how it was composed and measured, and why it
//! missed, as far as the measurements tell. Notes are typed (saved as JSON with a `kind`)
//! and rendered to sentences by [`std::fmt::Display`].

use std::fmt;

use serde::Serialize;

use crate::host::neighbour::{NEIGHBOUR_TOLERANCE, SPEED_TOLERANCE};

/// One note of a row.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Note {
    /// Said by composition (thread counts capped at the cores, ...).
    Composition { text: String },
    /// The design was composed from blocks timed under conditions its printed name says.
    ComposedAs { term: String },
    /// A MapReduce's reduction was timed warm, as a job's thread runs it.
    ReductionWarm {
        reduction: String,
        key: String,
        per_key: bool,
        loaded: bool,
    },
    /// The design runs more threads than the machine has cores.
    Oversubscribed { threads: usize, cores: usize },
    /// A block measured in two rows at two speeds.
    BlockDrift {
        block: String,
        x: u64,
        here_ns: f64,
        there_ns: f64,
        other: String,
    },
    /// The host check's blocks alone, right after the row over right before it.
    HostSpeed { change: f64 },
    /// A busy core's slowdown of a block on the other, at both ends of the row.
    Neighbour {
        threads: usize,
        before: f64,
        after: f64,
    },
    /// The cores' speed states at both ends of the row: each core's share of windows in
    /// its fast state, and the share with every core fast at once.
    CoreStates {
        threads: usize,
        each_before: Vec<f64>,
        each_after: Vec<f64>,
        every_before: f64,
        every_after: f64,
    },
    /// The leading coefficients cannot be compared.
    NotComparable,
    /// The program's points vary from repetition to repetition by up to this CV.
    Noisy { cv: f64 },
    /// Some points did not reach the sampling's confidence target.
    NotConverged,
    /// The whole-program model has another leading term than the composed one.
    LeadingTerm { monolithic: String, modular: String },
    /// Composed from the blocks' measured statistics instead of their models.
    FromMeasuredBlocks { error: f64, measure: String },
    /// The program measured before and after its blocks differs by this much.
    RepeatVariation { error: f64, target: Option<f64> },
    /// A block model misses its own measurement.
    FitFloor {
        block: String,
        x: u64,
        relative: f64,
        share: f64,
    },
    /// Where the time error is largest.
    WorstPoint {
        x: u64,
        under: bool,
        overhead_missing: bool,
    },
}

/// A time in ns as the unit that reads best.
pub fn duration(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.1} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

fn pct(v: f64) -> String {
    format!("{:.1}%", 100.0 * v)
}

fn shares(v: &[f64]) -> String {
    v.iter()
        .map(|p| format!("{:.0}%", p * 100.0))
        .collect::<Vec<_>>()
        .join(" and ")
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Note::Composition { text } => f.write_str(text),
            Note::ComposedAs { term } => write!(
                f,
                "composed as `{term}`: a `_warm` block was timed with its input in its core's \
                 cache (as it runs after another block on the same thread), a `_remote` one \
                 with its input just written by another thread (as it runs after another \
                 stage), a `_parN` one while N - 1 other threads ran it too (as the workers \
                 of a task pool or a MapReduce do), a `_stageI_of_A_then_B…` one as the I-th \
                 stage of a pipeline of those blocks, the others running next to it, a \
                 `_seqI_of_A_then_B…` one as the I-th block of a pool's seq of those blocks, \
                 every thread running the whole seq"
            ),
            Note::ReductionWarm {
                reduction,
                key,
                per_key,
                loaded,
            } => write!(
                f,
                "the reduction `{reduction}` was timed warm (`{key}`): {}{}",
                if *per_key {
                    "gathering each key's values from x map outputs into one reused vector and \
                     reducing them, key after key, as a job's thread does"
                } else {
                    "in a job it runs on what its thread just produced"
                },
                if *loaded {
                    "; `_parN`: with N - 1 other threads running it, as the job's threads do"
                } else {
                    ""
                }
            ),
            Note::Oversubscribed { threads, cores } => write!(
                f,
                "runs {threads} threads on {cores} cores: measured as written, predicted with thread counts capped at the cores"
            ),
            Note::BlockDrift {
                block,
                x,
                here_ns,
                there_ns,
                other,
            } => write!(
                f,
                "block `{block}` timed {} at x = {x} here and {} in `{other}` ({:.2}x apart): the machine's speed changed between the two measurements of the same block, so this row's error may be the host's rather than the model's",
                duration(*here_ns),
                duration(*there_ns),
                here_ns.max(*there_ns) / here_ns.min(*there_ns),
            ),
            Note::HostSpeed { change } => {
                if change.ln().abs() > SPEED_TOLERANCE.ln() {
                    write!(
                        f,
                        "the host's speed moved across this configuration: the check's blocks alone took {change:.2}x as long right after it as right before (over {SPEED_TOLERANCE:.2}x either way): the blocks and the program of one size, measured one after the other, may have met different speeds"
                    )
                } else {
                    write!(
                        f,
                        "the host's speed held across this configuration ({change:.2}x from right before to right after it, tolerance {SPEED_TOLERANCE:.2}x)"
                    )
                }
            }
            Note::Neighbour {
                threads,
                before,
                after,
            } => {
                if before.max(*after) > NEIGHBOUR_TOLERANCE {
                    write!(
                        f,
                        "in the host check a busy core slowed a block on the other by up to {before:.2}x right before this configuration and {after:.2}x right after it (over {NEIGHBOUR_TOLERANCE:.2}x, the time of a design of {threads} threads depends on the minute it runs: its unit tests met such a neighbour only while they ran)"
                    )
                } else {
                    write!(
                        f,
                        "the host check read quiet right before this configuration ({before:.2}x) and right after it ({after:.2}x, tolerance {NEIGHBOUR_TOLERANCE:.2}x): the miss is not a busy neighbour present at either end"
                    )
                }
            }
            Note::CoreStates {
                threads,
                each_before,
                each_after,
                every_before,
                every_after,
            } => {
                if *threads < 2 {
                    write!(
                        f,
                        "the cores' speed states: each core in its fast state in {} of the windows right before this configuration and {} right after",
                        shares(each_before),
                        shares(each_after)
                    )
                } else {
                    write!(
                        f,
                        "the cores' speed states: every core in its fast state at once in {:.0}% of the windows right before this configuration and {:.0}% right after (each core {} before, {} after): under the minimum a block timed on one thread finds its core's fast state, a program of {threads} threads only when every core is fast at once",
                        every_before * 100.0,
                        every_after * 100.0,
                        shares(each_before),
                        shares(each_after)
                    )
                }
            }
            Note::NotComparable => f.write_str(
                "the leading coefficients cannot be compared (the models do not grow over the measured sizes)",
            ),
            Note::Noisy { cv } => write!(
                f,
                "noisy measurements: CV up to {:.0}% (other work on the machine, or a design whose speed varies from run to run)",
                100.0 * cv
            ),
            Note::NotConverged => f.write_str("some points did not reach the confidence target"),
            Note::LeadingTerm {
                monolithic,
                modular,
            } => write!(
                f,
                "the fitted whole-program model has another leading term ({monolithic}) than the composed one ({modular})"
            ),
            Note::FromMeasuredBlocks { error, measure } => write!(
                f,
                "composed from the blocks' measurements ({measure}) instead of their models, the prediction is {} off at worst",
                pct(*error)
            ),
            Note::RepeatVariation { error, target } => write!(
                f,
                "the program measured right before and right after its blocks differs by up to {}{}",
                pct(*error),
                if target.is_some_and(|t| *error > t) {
                    ": more than the target, so this machine does not reproduce the program closely enough to check the prediction to the target"
                } else {
                    ""
                }
            ),
            Note::FitFloor {
                block,
                x,
                relative,
                share,
            } => write!(
                f,
                "the fit of block `{block}` misses its own measurement at x={x} by {} ({} of the prediction there)",
                pct(*relative),
                pct(*share)
            ),
            Note::WorstPoint {
                x,
                under,
                overhead_missing,
            } => write!(
                f,
                "largest time error at x={x} (prediction {} than measured{})",
                if *under { "lower" } else { "higher" },
                if *overhead_missing {
                    "; pattern overhead is not calibrated: `perfcompose calibrate overhead`"
                } else {
                    ""
                }
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_render_as_sentences_and_save_with_their_kind() {
        let n = Note::RepeatVariation {
            error: 0.2,
            target: Some(0.1),
        };
        assert!(n
            .to_string()
            .contains("differs by up to 20.0%: more than the target"));
        assert_eq!(
            serde_json::to_value(&n).unwrap()["kind"],
            "repeat_variation"
        );
    }
}
