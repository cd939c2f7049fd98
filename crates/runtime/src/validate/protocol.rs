//! How one configuration is measured: per size of its sweep, half of the program's
//! repetitions, then each of its blocks' unit tests, then the other half of the program
//! (an A–B–A design). The prediction is compared with both halves pooled; how far the
//! halves are apart is how well the machine reproduces the program over the seconds its
//! blocks take — a prediction cannot be checked more closely than that
//! ([`repeat_error`]). A drift of the machine's speed moves the blocks and the program
//! of one size together, since they are measured seconds apart.
//!
//! Then the points that stand out from their neighbouring sizes are measured again
//! ([`super::revisit`]): a program point with its blocks, then block points weighed by
//! their share of the prediction, each with its program and the other blocks of its size.

use perfcompose_core::fit::Measure;
use perfcompose_core::measure::Summary;

use super::blocks::BlockKey;
use super::notes::{Note, Revisit};
use super::revisit::{revisit_sweep, Keep};
use super::suite::{Case, Suite};
use crate::bench::{self, PointStats, Progress, Sampling, Series};
use crate::error::Error;
use crate::kernel::{Inputs, Op, Registry};
use crate::plan::Plan;

/// Suffixes of the two halves of a program's repetitions (`ID [before blocks]`,
/// `ID [after blocks]`); the program itself, both pooled, is saved as `ID`.
pub const HALVES: [&str; 2] = [" [before blocks]", " [after blocks]"];

/// What [`measure_case`] measured for one configuration.
pub struct Measured {
    /// Block series, one per key of `needs`, named by the printed key.
    pub blocks: Vec<Series>,
    /// The program, both halves pooled, named by the configuration's id.
    pub program: Series,
    /// The program's halves, named with [`HALVES`].
    pub halves: [Series; 2],
    /// A note per point measured again.
    pub revisits: Vec<Note>,
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

/// The sampling of one half of a program's repetitions: half the repetitions and half the
/// time of `spec`, at least two repetitions.
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

/// One visit of a program point: the program, its halves, and the block points measured
/// with it.
#[derive(Clone, Debug)]
pub struct Visit {
    pub program: PointStats,
    pub halves: [PointStats; 2],
    /// `(block, point)` and its measurement.
    pub blocks: Vec<((usize, usize), PointStats)>,
}

/// Fold `second`, a whole visit measured again for one of its blocks, into `first`:
/// under [`Keep::Faster`] every measurement (the program with its halves, each block)
/// keeps its faster visit by `stat`; under [`Keep::Closer`] the second visit replaces the
/// first as a whole when the revisit kept its block (`kept_second`), so a program stays
/// with the blocks measured with it. Returns the program's two values and whether the
/// later one was kept, for the row's note.
pub fn merge_visit(
    first: &mut Visit,
    second: Visit,
    kept_second: bool,
    keep: Keep,
    stat: impl Fn(&PointStats) -> f64,
) -> (f64, f64, bool) {
    let (a, b) = (stat(&first.program), stat(&second.program));
    let program_second = match keep {
        Keep::Faster => b < a,
        Keep::Closer => kept_second,
    };
    match keep {
        Keep::Closer => {
            if kept_second {
                *first = second;
            }
        }
        Keep::Faster => {
            if program_second {
                first.program = second.program;
                first.halves = second.halves;
            }
            for (kept, (slot, again)) in first.blocks.iter_mut().zip(second.blocks) {
                debug_assert_eq!(kept.0, slot, "a visit measures its blocks in one order");
                if stat(&again) < stat(&kept.1) {
                    kept.1 = again;
                }
            }
        }
    }
    (a, b, program_second)
}

/// Everything [`measure_case`] needs besides the configuration.
pub struct Setup<'a> {
    pub suite: &'a Suite,
    pub registry: &'a Registry,
    pub config: crate::Config,
    pub memory_limit: u128,
    pub measure: Measure,
    /// The row's target: a point is measured again beyond `target ×
    /// suite.revisit_share` off its neighbours.
    pub target: f64,
}

/// Measure configuration `c` (its design `plan`, named `id`) and the blocks `needs`
/// (module docs).
pub fn measure_case(
    c: &Case,
    plan: &Plan,
    id: &str,
    needs: &[BlockKey],
    setup: &Setup<'_>,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<Measured, Error> {
    let Setup {
        suite, registry, ..
    } = *setup;
    let built = plan.build(registry, setup.config.clone())?;
    let inputs = Inputs::with_image(c.image);
    let sizes: Vec<Vec<usize>> = needs
        .iter()
        .map(|k| block_sizes(suite, registry, c, k))
        .collect::<Result<_, _>>()?;
    let halved = half(&suite.sampling);
    let sample_program = |x: usize| -> Result<PointStats, Error> {
        let mut program =
            bench::ProgramSampler::new(&built, registry, x, &inputs, setup.memory_limit)?;
        bench::sample_point(&halved, &mut program)
    };
    // One visit of program point `i`: half the program, its blocks, the other half.
    let visit = |i: usize, x: usize| -> Result<Visit, Error> {
        let before = sample_program(x)?;
        // Each block to the end of its repetitions: each measurement starts with the
        // machine in the state its own warm-up leaves (a repetition right after another
        // measurement's stream of fresh inputs runs up to 15% slower).
        let mut blocks = Vec::new();
        for (k, j) in slots_at(i, &c.sizes, &sizes) {
            let mut b = bench::KernelSampler::for_block(
                registry,
                &needs[k].kernel,
                sizes[k][j],
                &inputs,
                &suite.sampling,
                setup.memory_limit,
                needs[k].conditions.clone(),
            )?;
            blocks.push(((k, j), bench::sample_point(&suite.sampling, &mut b)?));
        }
        let after = sample_program(x)?;
        let mut values = before.values.clone();
        values.extend_from_slice(&after.values);
        let mut both = PointStats::of(before.x, values);
        both.batch = before.batch;
        both.converged = before.converged && after.converged;
        Ok(Visit {
            program: both,
            halves: [before, after],
            blocks,
        })
    };
    measure_visits(c, id, needs, &sizes, setup, &visit, progress)
}

/// [`measure_case`] with the visit of a program point given: `visit(i, x)` measures the
/// `i`-th point, size `x`, the program's halves and the blocks of [`slots_at`] — the
/// runtime's samplers, or a script in tests. Visits every point, measures again those
/// that stand out, and assembles the series.
pub fn measure_visits(
    c: &Case,
    id: &str,
    needs: &[BlockKey],
    sizes: &[Vec<usize>],
    setup: &Setup<'_>,
    visit: &dyn Fn(usize, usize) -> Result<Visit, Error>,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<Measured, Error> {
    let mut visits = Vec::with_capacity(c.sizes.len());
    for (i, &x) in c.sizes.iter().enumerate() {
        progress(Progress {
            label: id,
            x: x as u64,
            done: i,
            total: c.sizes.len(),
        });
        visits.push(visit(i, x)?);
    }
    let revisits = match setup.suite.revisit_share {
        Some(share) => revisit_case(
            c,
            id,
            needs,
            sizes,
            &mut visits,
            setup,
            share,
            visit,
            progress,
        )?,
        None => Vec::new(),
    };
    let mut program_points = Vec::with_capacity(visits.len());
    let mut halves: [Vec<PointStats>; 2] = [Vec::new(), Vec::new()];
    let mut block_points: Vec<Vec<Option<PointStats>>> =
        sizes.iter().map(|s| vec![None; s.len()]).collect();
    for v in visits {
        program_points.push(v.program);
        let [a, b] = v.halves;
        halves[0].push(a);
        halves[1].push(b);
        for ((k, j), p) in v.blocks {
            block_points[k][j] = Some(p);
        }
    }
    let blocks = needs
        .iter()
        .zip(block_points)
        .map(|(key, points)| {
            Series::kernel(key.to_string(), points.into_iter().flatten().collect())
        })
        .collect();
    let [a, b] = halves;
    Ok(Measured {
        blocks,
        program: Series::program(id.to_string(), program_points),
        halves: [
            Series::program(format!("{id}{}", HALVES[0]), a),
            Series::program(format!("{id}{}", HALVES[1]), b),
        ],
        revisits,
    })
}

/// Measure again the points of configuration `c` that stand out from their neighbouring
/// sizes: first the program's sweep (a point measured again is a whole visit), then each
/// block's sweep over the visits kept, a block point with its program and the other
/// blocks at that size, if it can move the prediction by the target (weighed by its share
/// of the blocks measured at its size; blocks swept over other sizes than the program,
/// a MapReduce's, weigh 1).
#[allow(clippy::too_many_arguments)]
fn revisit_case(
    c: &Case,
    id: &str,
    needs: &[BlockKey],
    sizes: &[Vec<usize>],
    visits: &mut [Visit],
    setup: &Setup<'_>,
    share: f64,
    visit: &dyn Fn(usize, usize) -> Result<Visit, Error>,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<Vec<Note>, Error> {
    let target = setup.target * share;
    let stat = |p: &PointStats| point_stat(p, setup.measure);
    let keep = Keep::for_measure(setup.measure);
    let faster = keep == Keep::Faster;
    let mut notes = Vec::new();
    let xs: Vec<f64> = c.sizes.iter().map(|&x| x as f64).collect();
    let mut ys: Vec<f64> = visits.iter().map(|v| stat(&v.program)).collect();
    // Every later visit, in the order measured (a point may have two).
    let mut later: Vec<Visit> = Vec::new();
    let again = format!("{id} (measured again)");
    let done = revisit_sweep(&xs, &mut ys, &[], target, keep, |i| {
        let x = c.sizes[i];
        progress(Progress {
            label: &again,
            x: x as u64,
            done: 0,
            total: c.sizes.len(),
        });
        let second = visit(i, x)?;
        let y = stat(&second.program);
        later.push(second);
        Ok::<f64, Error>(y)
    })?;
    for (r, second) in done.into_iter().zip(later) {
        notes.push(Note::Revisit(Revisit {
            block: None,
            x: c.sizes[r.index] as u64,
            visit: r.visit,
            before_ns: r.first,
            again_ns: r.second,
            reference_ns: r.reference,
            kept_later: r.kept_second,
            faster,
            program: None,
        }));
        if r.kept_second {
            visits[r.index] = second;
        }
    }
    let same_sizes = sizes.iter().all(|s| s[..] == c.sizes[..]);
    for (k, key) in needs.iter().enumerate() {
        // Block `k`'s points in size order: (point, visit, position in the visit).
        let mut at: Vec<(usize, usize, usize)> = Vec::new();
        for (i, v) in visits.iter().enumerate() {
            for (pos, &((b, j), _)) in v.blocks.iter().enumerate() {
                if b == k {
                    at.push((j, i, pos));
                }
            }
        }
        at.sort_unstable();
        let xs: Vec<f64> = at.iter().map(|&(j, ..)| sizes[k][j] as f64).collect();
        let mut ys: Vec<f64> = at
            .iter()
            .map(|&(_, i, pos)| stat(&visits[i].blocks[pos].1))
            .collect();
        let weights: Vec<f64> = at
            .iter()
            .map(|&(_, i, pos)| {
                let total: f64 = visits[i].blocks.iter().map(|(_, p)| stat(p)).sum();
                let share = stat(&visits[i].blocks[pos].1) / total;
                if same_sizes && share.is_finite() {
                    share
                } else {
                    1.0
                }
            })
            .collect();
        let mut later: Vec<Visit> = Vec::new();
        let label = format!("{id} (block {key} measured again)");
        let done = revisit_sweep(&xs, &mut ys, &weights, target, keep, |m| {
            let (j, i, pos) = at[m];
            progress(Progress {
                label: &label,
                x: sizes[k][j] as u64,
                done: 0,
                total: at.len(),
            });
            let second = visit(i, c.sizes[i])?;
            let y = stat(&second.blocks[pos].1);
            later.push(second);
            Ok::<f64, Error>(y)
        })?;
        for (r, second) in done.into_iter().zip(later) {
            let (j, i, _) = at[r.index];
            let program = merge_visit(&mut visits[i], second, r.kept_second, keep, stat);
            notes.push(Note::Revisit(Revisit {
                block: Some(key.to_string()),
                x: sizes[k][j] as u64,
                visit: r.visit,
                before_ns: r.first,
                again_ns: r.second,
                reference_ns: r.reference,
                kept_later: r.kept_second,
                faster,
                program: Some(program),
            }));
        }
    }
    Ok(notes)
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

    #[test]
    fn a_block_point_measured_again_with_its_program_keeps_the_pair_together() {
        let point = |v: &[f64]| PointStats::of(4096, v.to_vec());
        // The first visit slow for the stage and the program alike, the second fast for
        // the stage.
        let visit = |program: &[f64], b0: &[f64], b1: &[f64]| Visit {
            program: point(program),
            halves: [point(&program[..1]), point(&program[1..])],
            blocks: vec![((0, 3), point(b0)), ((1, 3), point(b1))],
        };
        let min = |p: &PointStats| point_stat(p, Measure::Minimum);
        let second = visit(&[96.0, 99.0], &[93.0, 95.0], &[62.0, 66.0]);
        // Under the minimum each measurement keeps its faster visit: the program follows
        // its block down, the other block keeps its faster first visit.
        let mut kept = visit(&[124.0, 130.0], &[124.0, 128.0], &[60.0, 61.0]);
        let program = merge_visit(&mut kept, second, true, Keep::Faster, min);
        assert_eq!(program, (124.0, 96.0, true));
        assert_eq!(min(&kept.program), 96.0);
        assert_eq!(min(&kept.halves[0]), 96.0);
        assert_eq!(min(&kept.blocks[0].1), 93.0);
        assert_eq!(min(&kept.blocks[1].1), 60.0);
        // A program slower the second time keeps its first visit, whatever its block did.
        let slower = visit(&[140.0, 150.0], &[93.0, 95.0], &[62.0, 66.0]);
        let mut kept = visit(&[124.0, 130.0], &[124.0, 128.0], &[60.0, 61.0]);
        let program = merge_visit(&mut kept, slower, true, Keep::Faster, min);
        assert_eq!(program, (124.0, 140.0, false));
        assert_eq!(min(&kept.program), 124.0);
        assert_eq!(min(&kept.blocks[0].1), 93.0);
        // Under the median the visit whose block was kept stays whole, or not at all.
        let med = |p: &PointStats| point_stat(p, Measure::Median);
        let again = || visit(&[140.0, 150.0], &[93.0, 95.0], &[62.0, 66.0]);
        let mut kept = visit(&[124.0, 130.0], &[124.0, 128.0], &[60.0, 61.0]);
        merge_visit(&mut kept, again(), true, Keep::Closer, med);
        assert_eq!(med(&kept.program), 145.0);
        assert_eq!(med(&kept.blocks[1].1), 64.0);
        let mut kept = visit(&[124.0, 130.0], &[124.0, 128.0], &[60.0, 61.0]);
        merge_visit(&mut kept, again(), false, Keep::Closer, med);
        assert_eq!(med(&kept.program), 127.0);
        assert_eq!(med(&kept.blocks[0].1), 126.0);
    }

    #[test]
    fn a_sweep_measures_again_the_program_and_block_points_that_stand_out() {
        use std::cell::RefCell;
        // A program of one block, both linear in x; the program's point 10 and the
        // block's point 3 are slow in their first visit only (a burst of other work).
        let suite = Suite {
            revisit_share: Some(0.5),
            ..Suite::paper()
        };
        let c = suite.cases[3].clone(); // seq(inc, inc) over the paper grid
        let key = BlockKey {
            kernel: "inc".into(),
            image: None,
            conditions: Default::default(),
        };
        let sizes = vec![c.sizes.clone()];
        let visits = RefCell::new(vec![0usize; c.sizes.len()]);
        let visit = |i: usize, x: usize| -> Result<Visit, Error> {
            let nth = {
                let mut v = visits.borrow_mut();
                v[i] += 1;
                v[i]
            };
            let slow = |on: bool| if on && nth == 1 { 1.3 } else { 1.0 };
            let program = 2.0 * x as f64 * slow(i == 10);
            let block = x as f64 * slow(i == 3);
            let p = |v: f64| PointStats::of(x as u64, vec![v, v * 1.01]);
            Ok(Visit {
                program: p(program),
                halves: [p(program), p(program)],
                blocks: vec![((0, i), p(block))],
            })
        };
        let registry = Registry::builtin();
        let setup = Setup {
            suite: &suite,
            registry: &registry,
            config: crate::Config::default(),
            memory_limit: 1 << 30,
            measure: Measure::Minimum,
            target: 0.10,
        };
        let m = measure_visits(&c, "id", &[key], &sizes, &setup, &visit, &mut |_| {}).unwrap();
        assert_eq!(visits.borrow()[10], 2, "the slow program point once more");
        assert_eq!(
            visits.borrow()[3],
            2,
            "the slow block point, with its program"
        );
        let stat = |s: &Series, i: usize| point_stat(&s.points[i], Measure::Minimum);
        assert_eq!(stat(&m.program, 10), 2.0 * c.sizes[10] as f64);
        assert_eq!(stat(&m.blocks[0], 3), c.sizes[3] as f64);
        assert_eq!(m.halves[0].name, "id [before blocks]");
        assert_eq!(m.halves[1].points.len(), c.sizes.len());
        let notes: Vec<String> = m.revisits.iter().map(ToString::to_string).collect();
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(
            notes[0].starts_with(&format!(
                "measured x={} again, blocks and program",
                c.sizes[10]
            )),
            "{notes:?}"
        );
        assert!(
            notes[1].starts_with(&format!(
                "measured block `inc` at x={} again with its program",
                c.sizes[3]
            )),
            "{notes:?}"
        );
        assert!(
            notes[1].contains("kept the second visit, the faster; the program took"),
            "{notes:?}"
        );
        // Without revisits every point is visited once.
        let once = Suite {
            revisit_share: None,
            ..suite.clone()
        };
        visits.borrow_mut().iter_mut().for_each(|v| *v = 0);
        let setup = Setup {
            suite: &once,
            ..setup
        };
        measure_visits(
            &c,
            "id",
            &[BlockKey {
                kernel: "inc".into(),
                image: None,
                conditions: Default::default(),
            }],
            &sizes,
            &setup,
            &visit,
            &mut |_| {},
        )
        .unwrap();
        assert!(visits.borrow().iter().all(|&v| v == 1));
    }
}
