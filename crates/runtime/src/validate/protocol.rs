//! How one configuration is measured: in rounds. A round visits every size of the
//! sweep and times there the whole program and the block points the prediction needs
//! there back to back — the program first in even rounds, the blocks first in odd ones
//! — so that the round's prediction and its program are measured under one state of the
//! machine, seconds apart ([`measure_round`]). Each round is compared on its own
//! ([`super::verdict`]); the rounds pooled make the row's models.
//!
//! How far the program measured before its blocks (even rounds) is from the program
//! measured after them (odd rounds) is how well the machine reproduces the program
//! over the seconds its blocks take ([`repeat_error`]).

use std::time::Instant;

use perfcompose_core::fit::Measure;
use perfcompose_core::measure::Summary;

use super::blocks::BlockKey;
use super::suite::{Case, Suite};
use crate::bench::{PointStats, Progress, Sampling, Series};
use crate::error::Error;
use crate::kernel::{Op, Registry};

/// Suffixes of the program pooled over the rounds that timed it before its blocks and
/// over those that timed it after them (`ID [before blocks]`, `ID [after blocks]`); the
/// program, every round pooled, is saved as `ID`.
pub const HALVES: [&str; 2] = [" [before blocks]", " [after blocks]"];

/// The name round `r` (from 1) of configuration `id` is saved under: `ID [round R]` for
/// its program, `ID [round R]->KEY` for its blocks.
pub fn round_id(id: &str, r: usize) -> String {
    format!("{id} [round {r}]")
}

/// The statistic `measure` of a point's repetitions (`NaN` without any).
pub fn point_stat(p: &PointStats, measure: Measure) -> f64 {
    Summary::of(&p.values).map_or(f64::NAN, |s| s.get(measure))
}

/// How well a program reproduces: the largest relative difference, over the sizes both
/// measured, between two measurements of it (`|a − b| / ((a + b) / 2)` of the statistic
/// `measure`). A prediction that equals one of them is off by about this much against
/// the other, so a time error below it cannot be told from the machine's own variation.
/// `None` without a common size.
pub fn repeat_error(a: &Series, b: &Series, measure: Measure) -> Option<f64> {
    let stat = |p: &PointStats| point_stat(p, measure);
    a.points
        .iter()
        .filter_map(|p| {
            let q = b.points.iter().find(|q| q.x == p.x)?;
            let (u, v) = (stat(p), stat(q));
            Some((u - v).abs() / ((u + v) / 2.0))
        })
        .reduce(|m, e| if e > m || e.is_nan() { e } else { m })
}

/// The sampling of one half of a program's repetitions, and of every point of a round:
/// half the repetitions and half the time of `spec`, at least two repetitions.
pub fn half(spec: &Sampling) -> Sampling {
    let halve = |n: u32| n.div_ceil(2).max(2);
    Sampling {
        min_reps: halve(spec.min_reps),
        max_reps: halve(spec.max_reps).max(halve(spec.min_reps)),
        max_point_time: spec.max_point_time / 2,
        ..spec.clone()
    }
}

/// The sizes block `key` is measured at for configuration `c`: the suite's sweep for its
/// kernel where it has one, the program's sizes for a sequential block, the kernel's own
/// sweep otherwise (a map over images, a reduction over values).
pub fn block_sizes(
    suite: &Suite,
    registry: &Registry,
    c: &Case,
    key: &BlockKey,
) -> Result<Vec<usize>, Error> {
    if let Some(s) = suite.kernel_sizes.get(&key.kernel) {
        return Ok(s.clone());
    }
    let k = registry.get(&key.kernel)?;
    Ok(match k.op() {
        Op::Block { .. } => c.sizes.clone(),
        _ => k.default_sizes(false),
    })
}

/// The block points measured with the `i`-th program point: `(block, point)` pairs. A
/// block swept over the program's sizes is measured at the same size; the points of one
/// swept over other sizes are spread round-robin over the program's points, so every
/// block point is measured once, next to some program point.
pub fn slots_at(i: usize, program: &[usize], blocks: &[Vec<usize>]) -> Vec<(usize, usize)> {
    let p = program.len().max(1);
    blocks
        .iter()
        .enumerate()
        .flat_map(|(k, s)| {
            let js: Vec<usize> = if s == program {
                vec![i]
            } else {
                (0..s.len()).filter(|j| j % p == i).collect()
            };
            js.into_iter().map(move |j| (k, j))
        })
        .collect()
}

/// One round of one configuration.
#[derive(Clone, Debug)]
pub struct Round {
    /// The program's point at each of its sizes, in sweep order.
    pub program: Vec<PointStats>,
    /// Per block (in the order of the configuration's needs), its points in sweep order.
    pub blocks: Vec<Vec<PointStats>>,
    /// Whether the program was timed before its blocks at every size.
    pub program_first: bool,
    /// How long the round took, s.
    pub seconds: f64,
}

impl Round {
    /// The round's program as a series named `name`.
    pub fn program_series(&self, name: &str) -> Series {
        Series::program(name.to_string(), self.program.clone())
    }

    /// The round's blocks as series named by their keys.
    pub fn block_series(&self, needs: &[BlockKey]) -> Vec<(BlockKey, Series)> {
        needs
            .iter()
            .zip(&self.blocks)
            .map(|(k, points)| (k.clone(), Series::kernel(k.to_string(), points.clone())))
            .collect()
    }
}

/// Measure round `r` of configuration `c` (named `id`), whose blocks are swept over
/// `sizes` (one sweep per block): per program size `x`, `program(x)` and, for each
/// `(block, point)` of [`slots_at`], `block(block, size)` — the program first in even
/// rounds, the blocks first in odd ones. The samplers are the runtime's, or scripts in
/// tests.
pub fn measure_round(
    c: &Case,
    id: &str,
    r: usize,
    sizes: &[Vec<usize>],
    program: &mut dyn FnMut(usize) -> Result<PointStats, Error>,
    block: &mut dyn FnMut(usize, usize) -> Result<PointStats, Error>,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<Round, Error> {
    let start = Instant::now();
    let program_first = r % 2 == 0;
    let label = format!("{id} (round {})", r + 1);
    let mut program_points = Vec::with_capacity(c.sizes.len());
    let mut block_points: Vec<Vec<Option<PointStats>>> =
        sizes.iter().map(|s| vec![None; s.len()]).collect();
    for (i, &x) in c.sizes.iter().enumerate() {
        progress(Progress {
            label: &label,
            x: x as u64,
            done: i,
            total: c.sizes.len(),
        });
        if program_first {
            program_points.push(program(x)?);
        }
        for (k, j) in slots_at(i, &c.sizes, sizes) {
            block_points[k][j] = Some(block(k, sizes[k][j])?);
        }
        if !program_first {
            program_points.push(program(x)?);
        }
    }
    Ok(Round {
        program: program_points,
        blocks: block_points
            .into_iter()
            .map(|points| points.into_iter().flatten().collect())
            .collect(),
        program_first,
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// Every repetition of `points` (one size's points of several rounds) as one point; the
/// phases of the first that has them.
pub fn pool_points<'a>(points: impl IntoIterator<Item = &'a PointStats>) -> Option<PointStats> {
    let points: Vec<&PointStats> = points.into_iter().collect();
    let first = points.first()?;
    let values: Vec<f64> = points.iter().flat_map(|p| p.values.clone()).collect();
    let mut pooled = PointStats::of(first.x, values);
    pooled.batch = first.batch;
    pooled.converged = points.iter().all(|p| p.converged);
    pooled.phases = points
        .iter()
        .find(|p| !p.phases.is_empty())
        .map(|p| p.phases.clone())
        .unwrap_or_default();
    Some(pooled)
}

/// Series `parts` (one measurement over several rounds) pooled point by point into one
/// named `name` of the first's kind; sizes in the first's order.
pub fn pool_series(name: &str, parts: &[&Series]) -> Series {
    let Some(first) = parts.first() else {
        return Series::program(name.to_string(), Vec::new());
    };
    let points = first
        .points
        .iter()
        .filter_map(|p| {
            pool_points(
                parts
                    .iter()
                    .filter_map(|s| s.points.iter().find(|q| q.x == p.x)),
            )
        })
        .collect();
    Series {
        name: name.to_string(),
        points,
        ..(*first).clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_block_point_is_measured_once_next_to_a_program_point() {
        let program = [8, 16, 32];
        let blocks = vec![vec![8, 16, 32], vec![1, 2, 3, 4, 6, 8, 12]];
        let mut seen: Vec<(usize, usize)> = (0..3)
            .flat_map(|i| slots_at(i, &program, &blocks))
            .collect();
        seen.sort_unstable();
        let mut all: Vec<(usize, usize)> = (0..3)
            .map(|j| (0, j))
            .chain((0..7).map(|j| (1, j)))
            .collect();
        all.sort_unstable();
        assert_eq!(seen, all);
        assert_eq!(slots_at(1, &program, &blocks), [(0, 1), (1, 1), (1, 4)]);
    }

    #[test]
    fn repeat_error_is_the_largest_relative_gap_between_two_measurements() {
        let s = |v: &[f64]| {
            Series::program(
                "p",
                v.iter()
                    .enumerate()
                    .map(|(i, &y)| PointStats::of(1 << (i + 10), vec![y]))
                    .collect(),
            )
        };
        let e = repeat_error(&s(&[100.0, 200.0]), &s(&[110.0, 200.0]), Measure::Minimum);
        assert!((e.unwrap() - 10.0 / 105.0).abs() < 1e-12);
        assert_eq!(repeat_error(&s(&[]), &s(&[1.0]), Measure::Minimum), None);
    }

    #[test]
    fn a_half_takes_half_the_repetitions_and_time() {
        let spec = Suite::paper().sampling;
        let h = half(&spec);
        assert_eq!((h.min_reps, h.max_reps), (5, 21));
        assert_eq!(h.max_point_time, spec.max_point_time / 2);
        assert_eq!(h.target, spec.target);
        let tiny = Sampling {
            min_reps: 1,
            max_reps: 1,
            ..spec
        };
        assert_eq!((half(&tiny).min_reps, half(&tiny).max_reps), (2, 2));
    }
}
