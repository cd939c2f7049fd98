//! Replaying the calls of a pipeline's stages through a line of bounded queues: how long
//! a pipeline takes per element given what each stage took on each element.
//!
//! The calls of every stage, recorded inside a running pipeline, are replayed here in
//! their order, shuffled call by call, and shuffled by windows of consecutive calls. Where the replay in order is the slower, the stages' slow phases do
//! not coincide, and the pipeline loses time that the larger of the stages' mean times
//! does not show (docs/validation.md, "Known limits").

use rand::seq::SliceRandom;
use rand::SeedableRng;

/// ns per element of a pipeline whose stage `j` takes `stages[j][k]` ns on element `k`,
/// with queues of `capacity` elements between stages and the first stage never waiting
/// for input: the tandem line with blocking after service. Stage `j` starts element `k`
/// once it has handed element `k − 1` on and element `k` has left stage `j − 1`; it hands
/// `k` on once done and the next stage has taken element `k − capacity` out of the queue
/// between them. Over the elements every stage has a time for; NaN without any.
pub fn line(stages: &[&[u64]], capacity: usize) -> f64 {
    let n = stages.iter().map(|s| s.len()).min().unwrap_or(0);
    if n == 0 {
        return f64::NAN;
    }
    let capacity = capacity.max(1);
    let m = stages.len();
    // start[j][k], left[j][k]: when stage j took element k, and when it handed it on.
    let mut start = vec![vec![0u64; n]; m];
    let mut left = vec![vec![0u64; n]; m];
    for k in 0..n {
        for j in 0..m {
            let free = if k > 0 { left[j][k - 1] } else { 0 };
            let ready = if j > 0 { left[j - 1][k] } else { 0 };
            start[j][k] = free.max(ready);
            let done = start[j][k] + stages[j][k];
            left[j][k] = if j + 1 < m && k >= capacity {
                // Element k − capacity leaves the queue when stage j + 1 starts it,
                // known since iteration k − capacity.
                done.max(start[j + 1][k - capacity])
            } else {
                done
            };
        }
    }
    left[m - 1][n - 1] as f64 / n as f64
}

/// `times` cut into windows of `window` consecutive calls (the last one shorter), the
/// windows in an order shuffled with `seed`: what a burst does within a window is kept,
/// when it happened is not. A window of 1 shuffles call by call.
pub fn shuffle_windows(times: &[u64], window: usize, seed: u64) -> Vec<u64> {
    let mut windows: Vec<&[u64]> = times.chunks(window.max(1)).collect();
    windows.shuffle(&mut rand_chacha::ChaCha8Rng::seed_from_u64(seed));
    windows.concat()
}

/// The larger of the stages' mean call times, ns: what the line runs at when no stage
/// ever waits for another.
pub fn slowest_mean(stages: &[&[u64]]) -> f64 {
    stages
        .iter()
        .filter(|s| !s.is_empty())
        .map(|s| s.iter().sum::<u64>() as f64 / s.len() as f64)
        .fold(0.0, f64::max)
}

/// Mean time of each window of `window` consecutive calls of `times` (a last, shorter
/// window left out unless it is the only one).
pub fn window_means(times: &[u64], window: usize) -> Vec<f64> {
    let window = window.max(1);
    let whole = times.chunks_exact(window);
    let means: Vec<f64> = whole
        .map(|w| w.iter().sum::<u64>() as f64 / window as f64)
        .collect();
    if means.is_empty() && !times.is_empty() {
        return vec![times.iter().sum::<u64>() as f64 / times.len() as f64];
    }
    means
}

/// The expected largest of one value drawn from each of `samples` independently (each
/// sample an empirical distribution, every value equally likely), for non-negative
/// values: `∫ P(max > t) dt = Σ (t_i − t_{i−1}) · (1 − Π_j F_j(t_{i−1}))` over the sorted
/// values. The stages of a pipeline whose phases are independent run at this over their
/// window means, not at the largest mean. NaN when a sample is empty.
pub fn expected_max(samples: &[&[f64]]) -> f64 {
    if samples.is_empty() || samples.iter().any(|s| s.is_empty()) {
        return f64::NAN;
    }
    let mut sorted: Vec<Vec<f64>> = samples.iter().map(|s| s.to_vec()).collect();
    for s in &mut sorted {
        s.sort_by(f64::total_cmp);
    }
    let mut all: Vec<f64> = sorted.iter().flatten().copied().collect();
    all.sort_by(f64::total_cmp);
    all.dedup();
    // below[j]: how many values of sample j are at most the current t.
    let mut below = vec![0usize; sorted.len()];
    let (mut total, mut prev) = (0.0, 0.0_f64);
    for &t in &all {
        let all_below: f64 = sorted
            .iter()
            .zip(&below)
            .map(|(s, &b)| b as f64 / s.len() as f64)
            .product();
        total += (t - prev) * (1.0 - all_below);
        prev = t;
        for (s, b) in sorted.iter().zip(&mut below) {
            while *b < s.len() && s[*b] <= t {
                *b += 1;
            }
        }
    }
    total
}

/// The ratios of a pipeline's second slowest stage to its slowest at which the loss to
/// the stages' phases is tabulated ([`phase_hinges`]).
pub const PHASE_KNOTS: [f64; 7] = [0.0, 0.5, 0.7, 0.8, 0.9, 0.95, 1.0];

/// What a pipeline of stages with these `phases` (each stage's window means over its
/// mean, [`PointStats::phases`]) loses to them, as a share of its slowest stage's time,
/// when the next slowest takes `ratio` of the slowest's: `E[max(S_a, ratio·S_b)] −
/// E[S_a]`, averaged over the ordered pairs of distinct stages (`a` the slowest, `b` the
/// next). The pipeline runs at the larger of what the two stages take in a window of
/// calls, not at the larger of their means; a queue absorbs shorter swings
/// ([`PHASE_WINDOW`]). Increasing and convex in `ratio`, 0 at 0. NaN with fewer than two
/// stages or an empty one.
///
/// [`PointStats::phases`]: super::series::PointStats::phases
/// [`PHASE_WINDOW`]: super::series::PHASE_WINDOW
pub fn phase_loss_at(phases: &[&[f64]], ratio: f64) -> f64 {
    if phases.len() < 2 || phases.iter().any(|p| p.is_empty()) {
        return f64::NAN;
    }
    let mut sum = 0.0;
    let mut pairs = 0;
    for (a, sa) in phases.iter().enumerate() {
        let mean = sa.iter().sum::<f64>() / sa.len() as f64;
        for (b, sb) in phases.iter().enumerate() {
            if a != b {
                let scaled: Vec<f64> = sb.iter().map(|v| v * ratio).collect();
                sum += expected_max(&[sa, &scaled]) - mean;
                pairs += 1;
            }
        }
    }
    sum / pairs as f64
}

/// [`phase_loss_at`] as hinges `(r_i, w_i)`: the loss of a pipeline whose slowest stage
/// takes `slowest` and next slowest `second` is `Σ w_i · max(0, second − r_i · slowest)`,
/// the curve interpolated linearly between the [`PHASE_KNOTS`] (exact at them). Empty
/// when the curve cannot be computed (fewer than two stages, an empty one).
pub fn phase_hinges(phases: &[&[f64]]) -> Vec<(f64, f64)> {
    let curve: Vec<f64> = PHASE_KNOTS
        .iter()
        .map(|&r| phase_loss_at(phases, r))
        .collect();
    if curve.iter().any(|v| !v.is_finite()) {
        return Vec::new();
    }
    let mut hinges = Vec::with_capacity(PHASE_KNOTS.len() - 1);
    let mut before = 0.0;
    for i in 0..PHASE_KNOTS.len() - 1 {
        let slope = (curve[i + 1] - curve[i]) / (PHASE_KNOTS[i + 1] - PHASE_KNOTS[i]);
        hinges.push((PHASE_KNOTS[i], slope - before));
        before = slope;
    }
    hinges
}

/// The loss ([`phase_hinges`]) of a pipeline whose stages take `times` on average with
/// these `phases`, ns: what to add to the slowest stage's time. 0 with fewer than two
/// stages.
pub fn phase_loss(phases: &[&[f64]], times: &[f64]) -> f64 {
    let mut sorted: Vec<f64> = times.to_vec();
    sorted.sort_by(|a, b| b.total_cmp(a));
    let [slowest, second, ..] = sorted[..] else {
        return 0.0;
    };
    phase_hinges(phases)
        .iter()
        .map(|&(r, w)| w * (second - r * slowest).max(0.0))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_expected_largest_of_independent_draws() {
        assert_eq!(expected_max(&[&[2.0, 4.0]]), 3.0);
        // max of two fair draws from {1, 3}: 1 with probability 1/4, else 3.
        assert!((expected_max(&[&[1.0, 3.0], &[1.0, 3.0]]) - 2.5).abs() < 1e-12);
        // A constant stage slower than every value of the other: the constant.
        assert!((expected_max(&[&[5.0], &[1.0, 2.0, 3.0]]) - 5.0).abs() < 1e-12);
        assert!(expected_max(&[&[1.0], &[]]).is_nan());
        assert_eq!(window_means(&[1, 3, 5, 7, 9], 2), [2.0, 6.0]);
        assert_eq!(window_means(&[1, 3], 4), [2.0]);
        assert!(window_means(&[], 4).is_empty());
    }

    #[test]
    fn the_loss_to_phases_is_the_expected_larger_phase_at_every_knot() {
        // Two stages whose windows take 0.8 or 1.2 of their mean, equally often.
        let s = [0.8, 1.2];
        let phases: [&[f64]; 2] = [&s, &s];
        // Equal stages: E[max] = 0.8/4 + 1.2 · 3/4 = 1.1, a loss of a tenth.
        assert!((phase_loss_at(&phases, 1.0) - 0.1).abs() < 1e-12);
        assert_eq!(phase_loss_at(&phases, 0.0), 0.0);
        // A next slowest at most 0.8/1.2 of the slowest never overtakes it.
        assert!(phase_loss_at(&phases, 0.6).abs() < 1e-12);
        let hinges = phase_hinges(&phases);
        assert_eq!(hinges.len(), PHASE_KNOTS.len() - 1);
        for &r in &PHASE_KNOTS {
            let exact = 1000.0 * phase_loss_at(&phases, r);
            let hinged = phase_loss(&phases, &[1000.0, r * 1000.0]);
            assert!((exact - hinged).abs() < 1e-9, "at {r}: {exact} vs {hinged}");
        }
        // Steady stages (every window at the mean) lose nothing, nor does a lone stage.
        let steady = [1.0; 8];
        assert_eq!(phase_loss(&[&steady, &steady], &[500.0, 500.0]), 0.0);
        assert_eq!(phase_loss(&[&s], &[500.0]), 0.0);
        assert!(phase_hinges(&[&s, &[]]).is_empty());
    }

    #[test]
    fn a_line_of_steady_stages_runs_at_its_slowest_stage() {
        let a = vec![100u64; 1000];
        let b = vec![300u64; 1000];
        // The first element fills the line (100 + 300), then one leaves every 300 ns.
        let per = line(&[&a, &b], 4);
        assert!(
            (per - (100.0 + 300.0 * 1000.0) / 1000.0).abs() < 1e-9,
            "{per}"
        );
        assert_eq!(slowest_mean(&[&a, &b]), 300.0);
        // One stage: the sum of its calls.
        assert_eq!(line(&[&b], 4), 300.0);
        assert!(line(&[&a, &[]], 4).is_nan());
    }

    #[test]
    fn stages_slow_in_turn_lose_what_the_queue_cannot_absorb() {
        // Two stages of equal mean (150 ns) that take turns being slow for 200 calls:
        // the line runs at the slower of each phase (200 ns) once the queue is full.
        let phases = |first_slow: bool| -> Vec<u64> {
            (0..4000)
                .map(|k| {
                    let slow = ((k / 200) % 2 == 0) == first_slow;
                    if slow {
                        200
                    } else {
                        100
                    }
                })
                .collect()
        };
        let (a, b) = (phases(true), phases(false));
        assert_eq!(slowest_mean(&[&a, &b]), 150.0);
        let small = line(&[&a, &b], 8);
        assert!(small > 195.0 && small <= 200.1, "{small}");
        // A queue longer than a phase absorbs most of it.
        let large = line(&[&a, &b], 400);
        assert!(large < 160.0, "{large}");
        // Shuffled call by call, the same times run near the mean again.
        let (sa, sb) = (shuffle_windows(&a, 1, 1), shuffle_windows(&b, 1, 2));
        let mixed = line(&[&sa, &sb], 8);
        assert!(mixed < 160.0, "{mixed}");
        // In windows as long as a phase, the phases stay whole: most of the loss stays.
        let (wa, wb) = (shuffle_windows(&a, 200, 1), shuffle_windows(&b, 200, 2));
        let windows = line(&[&wa, &wb], 8);
        assert!(windows > mixed && windows > 170.0, "{windows} vs {mixed}");
    }

    #[test]
    fn shuffling_windows_keeps_every_call_and_each_window_whole() {
        let v: Vec<u64> = (0..10).collect();
        let s = shuffle_windows(&v, 3, 7);
        let mut sorted = s.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, v);
        // Windows [0,1,2] [3,4,5] [6,7,8] [9] stay in one piece.
        for w in [[0u64, 1, 2], [3, 4, 5], [6, 7, 8]] {
            assert!(s.windows(3).any(|x| x == w), "{s:?}");
        }
        assert_eq!(shuffle_windows(&v, 3, 7), s, "seeded");
        assert!(shuffle_windows(&[], 3, 7).is_empty());
    }
}
