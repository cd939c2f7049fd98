//! Verdicts that the machine's noise cannot flip: the statistics of paired rounds.
//!
//! A configuration is measured in rounds ([`super::rounds`]): each round times the blocks
//! the prediction needs and the whole program back to back, so that the round's
//! prediction error `(predicted − measured) / measured` at each size is taken under one
//! state of the machine. Over the rounds each size's error gets its median and a
//! distribution-free confidence interval (the sign test's order statistics,
//! [`median_interval`]: no assumption on how the machine's noise is shaped, at least
//! [`MIN_ROUNDS`] rounds for 95%). A row is decided ([`decide`]):
//!
//! - `within` when every size's interval lies within ±target;
//! - `miss` when some size's interval lies entirely beyond it;
//! - otherwise it stays open, and is `undecided` once its [`Budget`] is spent.
//!
//! The same rounds decide between alternative designs ([`design_choices`]) and count
//! how many of the program's runs fall inside the predicted one-run interval
//! ([`one_run_interval`], [`Coverage`]).

use serde::{Deserialize, Serialize};

/// The confidence of every interval over rounds.
pub const CONFIDENCE: f64 = 0.95;
/// The fewest rounds whose sign-test interval reaches [`CONFIDENCE`] (`[min, max]` of
/// six values holds the median with probability `1 − 2/2⁶ ≈ 0.969`).
pub const MIN_ROUNDS: usize = 6;
/// Two designs whose predictions are within this share of each other are too close to
/// call: the prediction names no faster one ([`design_choices`]).
pub const TOO_CLOSE: f64 = 0.02;

/// How long a configuration may be measured: at most `rounds` rounds or `seconds` of
/// measurement, whichever comes first, and never fewer than [`MIN_ROUNDS`] rounds. The
/// same for every row of a run, and printed with it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Budget {
    pub rounds: usize,
    pub seconds: f64,
}

impl Budget {
    /// Whether a configuration measured for `rounds` rounds and `seconds` seconds may
    /// have another round while it is still `open`: always below [`MIN_ROUNDS`], then
    /// while open and within both limits.
    pub fn another(&self, rounds: usize, seconds: f64, open: bool) -> bool {
        rounds < MIN_ROUNDS || (open && rounds < self.rounds && seconds < self.seconds)
    }
}

impl std::fmt::Display for Budget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "at most {} rounds or {} s per configuration, at least {MIN_ROUNDS} rounds",
            self.rounds, self.seconds
        )
    }
}

/// `P(B ≤ k)` for `B ~ Binomial(n, 1/2)`.
fn binomial_half_cdf(n: usize, k: usize) -> f64 {
    // Sum of C(n, i) / 2^n, with the binomial coefficients built up in floating point
    // (n is a count of rounds: tens, far from overflow).
    let mut c = 1.0_f64;
    let mut sum = 0.0;
    for i in 0..=k.min(n) {
        if i > 0 {
            c = c * (n - i + 1) as f64 / i as f64;
        }
        sum += c;
    }
    sum / 2f64.powi(n as i32)
}

/// The sign test's confidence interval for the median of `values`: the `k`-th smallest
/// and the `k`-th largest value, `k` as large as keeps the coverage
/// `1 − 2·P(B ≤ k − 1)`, `B ~ Binomial(n, 1/2)`, at least `level`. Returns `(low, high,
/// coverage)`; `None` with too few finite values to reach `level` (fewer than
/// [`MIN_ROUNDS`] at 0.95).
pub fn median_interval(values: &[f64], level: f64) -> Option<(f64, f64, f64)> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    let n = v.len();
    if n == 0 {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let coverage = |k: usize| 1.0 - 2.0 * binomial_half_cdf(n, k - 1);
    if coverage(1) < level {
        return None;
    }
    let mut k = 1;
    while 2 * (k + 1) <= n && coverage(k + 1) >= level {
        k += 1;
    }
    Some((v[k - 1], v[n - k], coverage(k)))
}

/// The median of the finite `values` (`NaN` without any).
pub fn median(values: &[f64]) -> f64 {
    let v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        f64::NAN
    } else {
        perfcompose_core::measure::median(&v)
    }
}

/// One size's prediction error over the rounds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ErrorAt {
    pub x: u64,
    /// The signed error `(predicted − measured) / measured` of each round, in round order.
    pub errors: Vec<f64>,
    /// The program's measured statistic in each round, in round order.
    pub measured: Vec<f64>,
}

/// The median and the [`CONFIDENCE`] interval of one size's errors.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ErrorInterval {
    pub x: u64,
    pub median: f64,
    /// `None` with fewer than [`MIN_ROUNDS`] rounds.
    pub low: Option<f64>,
    pub high: Option<f64>,
}

impl ErrorAt {
    pub fn interval(&self) -> ErrorInterval {
        let ci = median_interval(&self.errors, CONFIDENCE);
        ErrorInterval {
            x: self.x,
            median: median(&self.errors),
            low: ci.map(|c| c.0),
            high: ci.map(|c| c.1),
        }
    }
}

/// Where the rounds left a row against its target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Every size's interval within ±target.
    Within,
    /// Some size's interval entirely beyond ±target.
    Miss,
    /// Neither (yet): more rounds may decide it.
    Open,
}

/// Decide a row from its sizes' intervals against `target` (module docs). A size
/// without an interval (too few rounds) keeps the row open.
pub fn decide(at: &[ErrorInterval], target: f64) -> Decision {
    let beyond = at.iter().any(|e| match (e.low, e.high) {
        (Some(lo), Some(hi)) => lo > target || hi < -target,
        _ => false,
    });
    if beyond {
        return Decision::Miss;
    }
    let inside = !at.is_empty()
        && at.iter().all(|e| match (e.low, e.high) {
            (Some(lo), Some(hi)) => lo >= -target && hi <= target,
            _ => false,
        });
    if inside {
        Decision::Within
    } else {
        Decision::Open
    }
}

/// The interval of the size with the largest median error (by magnitude): the row's
/// `error_interval`.
pub fn worst_interval(at: &[ErrorInterval]) -> Option<ErrorInterval> {
    at.iter()
        .filter(|e| e.median.is_finite())
        .max_by(|a, b| a.median.abs().total_cmp(&b.median.abs()))
        .copied()
}

/// A row's rounds: per size each round's error, and the budget they were measured under.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rounds {
    pub count: usize,
    pub at: Vec<ErrorAt>,
    /// `None` for rounds that were not measured adaptively (a saved run of another
    /// layout, read back with its two program halves as rounds).
    pub budget: Option<Budget>,
}

impl Rounds {
    /// Rounds from `(x, predicted, measured)` per size and round: `per_round[r]` holds
    /// round `r`'s sizes.
    pub fn of(per_round: &[Vec<(u64, f64, f64)>], budget: Option<Budget>) -> Rounds {
        let mut at: Vec<ErrorAt> = Vec::new();
        for round in per_round {
            for &(x, predicted, measured) in round {
                let e = (predicted - measured) / measured;
                match at.iter_mut().find(|a| a.x == x) {
                    Some(a) => {
                        a.errors.push(e);
                        a.measured.push(measured);
                    }
                    None => at.push(ErrorAt {
                        x,
                        errors: vec![e],
                        measured: vec![measured],
                    }),
                }
            }
        }
        at.sort_by_key(|a| a.x);
        Rounds {
            count: per_round.len(),
            at,
            budget,
        }
    }

    pub fn intervals(&self) -> Vec<ErrorInterval> {
        self.at.iter().map(ErrorAt::interval).collect()
    }

    pub fn decision(&self, target: f64) -> Decision {
        decide(&self.intervals(), target)
    }

    /// The row's `error_interval`: [`worst_interval`] of its sizes.
    pub fn worst(&self) -> Option<ErrorInterval> {
        worst_interval(&self.intervals())
    }
}

/// How many of a program's measured runs fall inside their predicted one-run interval.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Coverage {
    pub inside: usize,
    pub runs: usize,
}

impl Coverage {
    /// The runs `samples` against the interval `[low, high]`.
    pub fn of(samples: &[f64], low: f64, high: f64) -> Coverage {
        let runs: Vec<f64> = samples.iter().copied().filter(|v| v.is_finite()).collect();
        Coverage {
            inside: runs.iter().filter(|&&v| low <= v && v <= high).count(),
            runs: runs.len(),
        }
    }
}

impl std::ops::Add for Coverage {
    type Output = Coverage;

    fn add(self, other: Coverage) -> Coverage {
        Coverage {
            inside: self.inside + other.inside,
            runs: self.runs + other.runs,
        }
    }
}

/// A predicted interval for one run at `level` ([`one_run_interval`]).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunInterval {
    pub level: f64,
    pub low: f64,
    pub high: f64,
}

/// The `q`-quantile of sorted `v` (linear between neighbours).
fn quantile(v: &[f64], q: f64) -> f64 {
    let pos = q.clamp(0.0, 1.0) * (v.len() - 1) as f64;
    let (i, f) = (pos.floor() as usize, pos.fract());
    if i + 1 < v.len() {
        v[i] * (1.0 - f) + v[i + 1] * f
    } else {
        v[i]
    }
}

/// How many products [`one_run_interval`] forms at most.
const MAX_PRODUCTS: usize = 200_000;

/// The interval one run of a program falls in with probability `level`, predicted from
/// its blocks: the composed prediction's draws under the blocks' fit uncertainty
/// (`predictions`; one value, the point prediction, when the blocks have none), each
/// times a run-to-run factor of the blocks (`run_factors`: each block repetition over
/// the statistic its model is fitted to); the central `level` share of all products.
/// `None` without a finite prediction or factor.
pub fn one_run_interval(
    predictions: &[f64],
    run_factors: &[f64],
    level: f64,
) -> Option<RunInterval> {
    let p: Vec<f64> = predictions
        .iter()
        .copied()
        .filter(|v| v.is_finite())
        .collect();
    let f: Vec<f64> = run_factors
        .iter()
        .copied()
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect();
    if p.is_empty() || f.is_empty() {
        return None;
    }
    // Every pair while there are few; beyond, each draw with a stride through the factors
    // (deterministic, so the interval is reproducible).
    let per = (MAX_PRODUCTS / p.len()).clamp(1, f.len());
    let mut products = Vec::with_capacity(p.len() * per);
    for (i, a) in p.iter().enumerate() {
        for j in 0..per {
            let k = (i + j * f.len() / per) % f.len();
            products.push(a * f[k]);
        }
    }
    products.sort_by(f64::total_cmp);
    let tail = (1.0 - level) / 2.0;
    Some(RunInterval {
        level,
        low: quantile(&products, tail),
        high: quantile(&products, 1.0 - tail),
    })
}

/// A configuration as an alternative design ([`design_choices`]).
#[derive(Clone, Debug, PartialEq)]
pub struct DesignRow {
    pub configuration: String,
    /// The multiset of its kernel names, sorted: designs with the same one are
    /// alternatives of one program.
    pub kernels: Vec<String>,
    /// Whether the row is judged (reported-only rows take no part).
    pub judged: bool,
    /// Per size: the prediction, and the measured statistic of each round.
    pub at: Vec<(u64, f64, Vec<f64>)>,
}

/// A pair of designs at one size whose measured order the rounds decided and whose
/// prediction named the other one faster.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WrongChoice {
    pub x: u64,
    /// The design measured faster, and its prediction there.
    pub faster: String,
    pub faster_predicted: f64,
    /// The design measured slower, predicted faster.
    pub slower: String,
    pub slower_predicted: f64,
    /// The median over rounds of `ln(slower / faster)`, measured.
    pub measured_log_ratio: f64,
}

/// How well the predictions chose between alternative designs.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DesignChoices {
    /// Pairs of designs at a shared size whose measured difference's 95% interval
    /// excludes zero and whose predictions are more than [`TOO_CLOSE`] apart.
    pub decided_pairs: usize,
    /// Of those, the pairs whose prediction names the measured faster design.
    pub right: usize,
    /// Pairs at a shared size whose predictions are within [`TOO_CLOSE`] of each other,
    /// whatever was measured: counted apart, not among the decided.
    pub too_close: usize,
    /// Every decided pair the prediction got wrong.
    pub wrong: Vec<WrongChoice>,
}

/// Compare every two judged rows over the same kernels at every size they share
/// (module docs): the rounds pair their measurements, round `r` of one with round `r` of
/// the other, over the rounds both have.
pub fn design_choices(rows: &[DesignRow]) -> DesignChoices {
    let mut out = DesignChoices::default();
    for (i, a) in rows.iter().enumerate() {
        for b in &rows[i + 1..] {
            if !(a.judged && b.judged) || a.kernels != b.kernels {
                continue;
            }
            for (x, pa, ma) in &a.at {
                let Some((_, pb, mb)) = b.at.iter().find(|(y, ..)| y == x) else {
                    continue;
                };
                if !(pa.is_finite() && pb.is_finite()) {
                    continue;
                }
                if (pa - pb).abs() <= TOO_CLOSE * pa.min(*pb) {
                    out.too_close += 1;
                    continue;
                }
                // ln(a / b) per round: below zero where `a` ran faster.
                let d: Vec<f64> = ma.iter().zip(mb).map(|(u, v)| (u / v).ln()).collect();
                let Some((lo, hi, _)) = median_interval(&d, CONFIDENCE) else {
                    continue;
                };
                if lo <= 0.0 && hi >= 0.0 {
                    continue;
                }
                out.decided_pairs += 1;
                let a_faster = hi < 0.0;
                if a_faster == (pa < pb) {
                    out.right += 1;
                } else {
                    let (fast, slow, pf, ps) = if a_faster {
                        (a, b, *pa, *pb)
                    } else {
                        (b, a, *pb, *pa)
                    };
                    let m = median(&d);
                    out.wrong.push(WrongChoice {
                        x: *x,
                        faster: fast.configuration.clone(),
                        faster_predicted: pf,
                        slower: slow.configuration.clone(),
                        slower_predicted: ps,
                        measured_log_ratio: if a_faster { -m } else { m },
                    });
                }
            }
        }
    }
    out
}

/// The key of [`DesignRow::kernels`] for design `plan` run on `image`: its kernel names,
/// sorted, and for a design with a MapReduce the image too (the same job on another
/// picture is another input, not another design).
pub fn design_kernels(plan: &crate::plan::Plan, image: crate::data::ImageSize) -> Vec<String> {
    let mut k = plan.kernels();
    k.sort();
    if plan.has_mapreduce() {
        k.push(format!("@{}", image.name()));
    }
    k
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scripted sampler: round `r` of a row measures `truth(x) · (1 + noise[r])` and
    /// predicts `truth(x) · (1 + bias)`; the deterministic "noise" cycles through a fixed
    /// sequence scaled to `spread`.
    struct Scripted {
        bias: f64,
        spread: f64,
        sizes: Vec<u64>,
    }

    /// Zero-mean values in [−1, 1], one per round, neither sorted nor symmetric in
    /// order (a fixed pseudo-random sequence).
    const NOISE: [f64; 16] = [
        0.31, -0.74, 0.05, 0.92, -0.18, -0.55, 0.67, -0.02, -0.89, 0.43, 0.12, -0.36, 0.78, -0.61,
        0.24, -0.17,
    ];

    impl Scripted {
        fn round(&self, r: usize) -> Vec<(u64, f64, f64)> {
            self.sizes
                .iter()
                .enumerate()
                .map(|(i, &x)| {
                    let truth = 1000.0 * x as f64;
                    let noise = NOISE[(r + 3 * i) % NOISE.len()] * self.spread;
                    (x, truth * (1.0 + self.bias), truth * (1.0 + noise))
                })
                .collect()
        }
    }

    /// Rounds of `row` under `budget` as the suites run them: another round while the
    /// budget allows and the row is open; each round takes `seconds`.
    fn run(row: &Scripted, budget: Budget, target: f64, seconds: f64) -> Rounds {
        let mut per_round = Vec::new();
        loop {
            let so_far = Rounds::of(&per_round, Some(budget));
            let open = so_far.decision(target) == Decision::Open;
            if !budget.another(per_round.len(), seconds * per_round.len() as f64, open) {
                return so_far;
            }
            per_round.push(row.round(per_round.len()));
        }
    }

    const BUDGET: Budget = Budget {
        rounds: 12,
        seconds: 1e9,
    };

    #[test]
    fn the_sign_test_interval_needs_six_rounds_for_95_percent() {
        assert_eq!(median_interval(&[1.0, 2.0, 3.0, 4.0, 5.0], 0.95), None);
        let (lo, hi, c) = median_interval(&[6.0, 1.0, 5.0, 2.0, 4.0, 3.0], 0.95).unwrap();
        assert_eq!((lo, hi), (1.0, 6.0));
        assert!((c - (1.0 - 2.0 / 64.0)).abs() < 1e-12, "{c}");
        // Twelve values: the 3rd smallest and 3rd largest (coverage 0.961; the 4th would
        // give 0.854).
        let v: Vec<f64> = (1..=12).map(f64::from).collect();
        let (lo, hi, c) = median_interval(&v, 0.95).unwrap();
        assert_eq!((lo, hi), (3.0, 10.0));
        assert!((c - 0.961_425_781_25).abs() < 1e-9, "{c}");
        assert_eq!(median_interval(&[], 0.95), None);
    }

    #[test]
    fn a_row_with_a_20_percent_bias_is_decided_a_miss() {
        let row = Scripted {
            bias: 0.20,
            spread: 0.03,
            sizes: vec![1024, 4096, 16384],
        };
        let r = run(&row, BUDGET, 0.10, 1.0);
        assert_eq!(r.decision(0.10), Decision::Miss);
        // Decided as soon as the interval exists.
        assert_eq!(r.count, MIN_ROUNDS);
        let worst = worst_interval(&r.intervals()).unwrap();
        assert!(worst.low.unwrap() > 0.10, "{worst:?}");
    }

    #[test]
    fn an_unbiased_row_with_5_percent_noise_is_decided_within() {
        let row = Scripted {
            bias: 0.0,
            spread: 0.05,
            sizes: vec![1024, 4096, 16384],
        };
        let r = run(&row, BUDGET, 0.10, 1.0);
        assert_eq!(r.decision(0.10), Decision::Within);
        assert!(
            r.count >= MIN_ROUNDS && r.count <= BUDGET.rounds,
            "{}",
            r.count
        );
    }

    #[test]
    fn noise_beyond_the_budget_ends_undecided_with_the_rounds_interval() {
        // 30% noise around a 5% bias: neither inside ±10% nor beyond it in 8 rounds.
        let row = Scripted {
            bias: 0.05,
            spread: 0.30,
            sizes: vec![4096],
        };
        let budget = Budget {
            rounds: 8,
            seconds: 1e9,
        };
        let r = run(&row, budget, 0.10, 1.0);
        assert_eq!(r.count, 8);
        assert_eq!(r.decision(0.10), Decision::Open);
        // The interval is the sign test's over exactly those 8 errors: with n = 8 the
        // 2nd smallest and 2nd largest (coverage 1 − 2·9/256 = 0.93 < 0.95 would be
        // the 2nd; so the 1st: 0.992).
        let mut errors: Vec<f64> = (0..8)
            .map(|k| {
                let (_, p, m) = row.round(k)[0];
                (p - m) / m
            })
            .collect();
        errors.sort_by(f64::total_cmp);
        let worst = worst_interval(&r.intervals()).unwrap();
        assert_eq!(worst.low, Some(errors[0]));
        assert_eq!(worst.high, Some(errors[7]));
        // The seconds end it as well: 2 s a round, 13 s allowed, 7 rounds.
        let by_time = run(
            &row,
            Budget {
                rounds: 100,
                seconds: 13.0,
            },
            0.10,
            2.0,
        );
        assert_eq!(by_time.count, 7);
    }

    #[test]
    fn fewer_rounds_than_six_decide_nothing() {
        let row = Scripted {
            bias: 0.5,
            spread: 0.0,
            sizes: vec![1, 2],
        };
        let per: Vec<_> = (0..5).map(|r| row.round(r)).collect();
        let r = Rounds::of(&per, None);
        assert_eq!(r.decision(0.10), Decision::Open);
        let per: Vec<_> = (0..6).map(|r| row.round(r)).collect();
        assert_eq!(Rounds::of(&per, None).decision(0.10), Decision::Miss);
    }

    fn design(name: &str, judged: bool, at: Vec<(u64, f64, Vec<f64>)>) -> DesignRow {
        DesignRow {
            configuration: name.into(),
            kernels: vec!["inc".into(), "nop".into()],
            judged,
            at,
        }
    }

    #[test]
    fn design_choices_count_decided_right_and_too_close_pairs() {
        let six = |v: f64| vec![v, v * 1.01, v * 0.99, v * 1.02, v, v * 0.98];
        let a = design(
            "seq(inc, nop)",
            true,
            vec![
                (1, 100.0, six(100.0)), // decided, right (a faster, predicted faster)
                (2, 200.0, six(300.0)), // decided, wrong (a slower, predicted faster)
                (3, 100.0, six(100.0)), // predictions within 2%: too close
                (4, 100.0, six(100.0)), // measured within noise: not decided
            ],
        );
        let b = design(
            "pipe(inc, nop)",
            true,
            vec![
                (1, 150.0, six(150.0)),
                (2, 250.0, six(250.0)),
                (3, 101.5, six(150.0)),
                (4, 150.0, vec![90.0, 110.0, 95.0, 105.0, 100.0, 101.0]),
                (5, 1.0, six(1.0)), // no partner size
            ],
        );
        let c = design("tpool(4, seq(inc, nop))", false, vec![(1, 1.0, six(9.0))]);
        let mut other = design("seq(inc, qsort)", true, vec![(1, 1.0, six(9.0))]);
        other.kernels = vec!["inc".into(), "qsort".into()];
        let d = design_choices(&[a, b, c, other]);
        assert_eq!((d.decided_pairs, d.right, d.too_close), (2, 1, 1));
        assert_eq!(d.wrong.len(), 1);
        let w = &d.wrong[0];
        assert_eq!(
            (w.x, w.faster.as_str(), w.slower.as_str()),
            (2, "pipe(inc, nop)", "seq(inc, nop)")
        );
        assert!((w.measured_log_ratio - (300.0f64 / 250.0).ln()).abs() < 1e-9);
    }

    #[test]
    fn coverage_counts_the_runs_inside_the_interval() {
        let c = Coverage::of(&[1.0, 2.0, 3.0, f64::NAN, 10.0], 1.5, 3.0);
        assert_eq!(c, Coverage { inside: 2, runs: 4 });
        assert_eq!(
            c + Coverage { inside: 1, runs: 1 },
            Coverage { inside: 3, runs: 5 }
        );
        // A point prediction of 100 and runs 0–10% above the statistic: [100.5, 109.5]
        // at 90% of 101 factors 1.00, 1.001, ..., 1.10.
        let factors: Vec<f64> = (0..=100).map(|i| 1.0 + f64::from(i) / 1000.0).collect();
        let i = one_run_interval(&[100.0], &factors, 0.90).unwrap();
        assert!(
            (i.low - 100.5).abs() < 1e-9 && (i.high - 109.5).abs() < 1e-9,
            "{i:?}"
        );
        // Fit uncertainty widens it.
        let wide = one_run_interval(&[90.0, 100.0, 110.0], &factors, 0.90).unwrap();
        assert!(wide.low < i.low && wide.high > i.high, "{wide:?}");
        assert_eq!(one_run_interval(&[f64::NAN], &factors, 0.9), None);
    }
}
