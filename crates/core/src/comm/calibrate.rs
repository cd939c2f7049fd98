//! Calibrating communication models from micro-benchmarks.
//!
//! A ping-pong benchmark times messages of several sizes, with repetitions; Hockney's
//! `α` and `β` are the intercept and slope of a straight line through those times (halved
//! first when the benchmark reports round trips). The divide-and-conquer paper obtains its `l` and `g` the
//! same way from an all-to-all benchmark under load.
//!
//! Message sizes span several orders of magnitude (8 B to megabytes), so an ordinary
//! least-squares line is pulled entirely by the largest messages and can leave `α`
//! negative. The default fit therefore minimises *relative* residuals (weights `1/t²`),
//! which is what makes the latency of small messages count; the unweighted fit is
//! available too. With only two unknowns the normal equations are solved in closed form
//! on centred sums, which keeps them well conditioned.

use super::p2p::{names, PointToPoint};
use crate::measure::{Experiment, SeriesKey};
use crate::model::Expr;

/// What one timing measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timing {
    /// One message, sender start to receiver end.
    OneWay,
    /// There and back (a ping-pong's raw time): halved before fitting.
    RoundTrip,
}

/// Which residuals the fit minimises.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Weighting {
    /// `Σ ((t − α − β·n) / t)²`: every size counts alike (the default).
    Relative,
    /// `Σ (t − α − β·n)²`: ordinary least squares.
    Absolute,
}

/// Why a calibration failed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CalibrationError {
    #[error("need times for at least two different message sizes, got {0}")]
    TooFewSizes(usize),
    #[error("sample {index} is not usable: size {bytes}, time {seconds} (sizes must be finite and ≥ 0, times finite and > 0)")]
    BadSample {
        index: usize,
        bytes: f64,
        seconds: f64,
    },
    #[error("the fitted {which} is negative ({value:e}); the data do not follow α + β·n")]
    Negative { which: &'static str, value: f64 },
    #[error("series {0} is not in the experiment")]
    MissingSeries(String),
    #[error("parameter `{0}` is not in the experiment")]
    MissingParameter(String),
}

/// A Hockney fit: `t(n) = alpha + beta·n`, with its uncertainty.
#[derive(Clone, Debug, PartialEq)]
pub struct HockneyFit {
    /// Start-up time, seconds.
    pub alpha: f64,
    /// Time per byte, seconds.
    pub beta: f64,
    /// Standard errors of `alpha` and `beta` (`None` with only two samples).
    pub alpha_stderr: Option<f64>,
    pub beta_stderr: Option<f64>,
    /// Coefficient of determination of the (weighted) fit.
    pub r_squared: f64,
    /// Largest relative deviation of a sample from the line.
    pub max_relative_error: f64,
    /// Samples used (every repetition counts).
    pub samples: usize,
}

impl HockneyFit {
    /// The model with the fitted constants.
    pub fn model(&self) -> PointToPoint {
        PointToPoint::hockney_with(Expr::constant(self.alpha), Expr::constant(self.beta))
    }

    /// Bindings for the free parameters of [`super::CommLibrary`]'s Hockney functions.
    pub fn bindings(&self) -> [(&'static str, f64); 2] {
        [(names::ALPHA, self.alpha), (names::BETA, self.beta)]
    }

    /// The LogGP model with the same message times, given the per-message CPU overhead
    /// `o` and injection gap `g` measured otherwise (a ping-pong sees only `L + 2o` and
    /// `G`): `G = β`, `L = α − 2o + G`.
    ///
    /// ```
    /// use perfcompose_core::comm::{fit_hockney, Timing, Weighting};
    /// use perfcompose_core::model::Expr;
    /// let fit = fit_hockney(&[(1.0, 3e-6), (1e6, 3e-6 + 1e-3)], Timing::OneWay, Weighting::Relative).unwrap();
    /// let n = Expr::constant(4096.0);
    /// let t = fit.loggp(5e-7, 1e-6).message(&n).as_constant().unwrap();
    /// let h = fit.model().message(&n).as_constant().unwrap();
    /// assert!((t - h).abs() < 1e-15);
    /// ```
    pub fn loggp(&self, overhead: f64, gap: f64) -> PointToPoint {
        let [l, o, g, big_g] = self
            .loggp_bindings(overhead, gap)
            .map(|(_, v)| Expr::constant(v));
        PointToPoint::loggp_with(l, o, g, big_g)
    }

    /// Bindings for the free LogGP parameters of [`super::CommLibrary`]'s `*_loggp`
    /// functions, as [`HockneyFit::loggp`] derives them.
    pub fn loggp_bindings(&self, overhead: f64, gap: f64) -> [(&'static str, f64); 4] {
        let big_g = self.beta;
        [
            (names::L, self.alpha - 2.0 * overhead + big_g),
            (names::O, overhead),
            (names::G_SHORT, gap),
            (names::G_LONG, big_g),
        ]
    }

    /// Asymptotic bandwidth, bytes per second.
    pub fn bandwidth(&self) -> f64 {
        1.0 / self.beta
    }

    /// Message size at which start-up and transfer cost the same (`n½ = α/β`).
    pub fn half_performance_size(&self) -> f64 {
        self.alpha / self.beta
    }
}

/// A weighted straight-line fit `y = intercept + slope·x`, with its uncertainty.
#[derive(Clone, Debug, PartialEq)]
pub struct LineFit {
    pub intercept: f64,
    pub slope: f64,
    /// Standard errors (`None` with only two samples).
    pub intercept_stderr: Option<f64>,
    pub slope_stderr: Option<f64>,
    /// Coefficient of determination of the (weighted) fit.
    pub r_squared: f64,
    /// Largest relative deviation of a sample from the line.
    pub max_relative_error: f64,
    pub samples: usize,
}

/// Fit a straight line to `(x, y)` samples (block costs against a size, message times
/// against bytes). `y` must be positive under [`Weighting::Relative`].
pub fn fit_line(samples: &[(f64, f64)], weighting: Weighting) -> Result<LineFit, CalibrationError> {
    for (index, &(x, y)) in samples.iter().enumerate() {
        let y_ok = y.is_finite() && (weighting == Weighting::Absolute || y > 0.0);
        if !(x.is_finite() && y_ok) {
            return Err(CalibrationError::BadSample {
                index,
                bytes: x,
                seconds: y,
            });
        }
    }
    let mut xs: Vec<f64> = samples.iter().map(|s| s.0).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    if xs.len() < 2 {
        return Err(CalibrationError::TooFewSizes(xs.len()));
    }
    let pts: Vec<(f64, f64, f64)> = samples
        .iter()
        .map(|&(x, y)| {
            let w = match weighting {
                Weighting::Relative => 1.0 / (y * y),
                Weighting::Absolute => 1.0,
            };
            (x, y, w)
        })
        .collect();
    // Weighted least squares on sums centred at the weighted means.
    let sw: f64 = pts.iter().map(|p| p.2).sum();
    let xm = pts.iter().map(|p| p.2 * p.0).sum::<f64>() / sw;
    let ym = pts.iter().map(|p| p.2 * p.1).sum::<f64>() / sw;
    let sxx: f64 = pts.iter().map(|p| p.2 * (p.0 - xm).powi(2)).sum();
    let sxy: f64 = pts.iter().map(|p| p.2 * (p.0 - xm) * (p.1 - ym)).sum();
    let syy: f64 = pts.iter().map(|p| p.2 * (p.1 - ym).powi(2)).sum();
    let slope = sxy / sxx;
    let intercept = ym - slope * xm;
    let rss: f64 = pts
        .iter()
        .map(|p| p.2 * (p.1 - intercept - slope * p.0).powi(2))
        .sum();
    let dof = pts.len() as f64 - 2.0;
    let (intercept_stderr, slope_stderr) = if dof > 0.0 {
        let s2 = rss / dof;
        // Var(slope) = s²/Sxx; Var(intercept) = s²(1/Σw + x̄²/Sxx).
        (
            Some((s2 * (1.0 / sw + xm * xm / sxx)).sqrt()),
            Some((s2 / sxx).sqrt()),
        )
    } else {
        (None, None)
    };
    let r_squared = if syy > 0.0 { 1.0 - rss / syy } else { 1.0 };
    let max_relative_error = pts
        .iter()
        .map(|p| ((intercept + slope * p.0 - p.1) / p.1).abs())
        .filter(|e| e.is_finite())
        .fold(0.0, f64::max);
    Ok(LineFit {
        intercept,
        slope,
        intercept_stderr,
        slope_stderr,
        r_squared,
        max_relative_error,
        samples: pts.len(),
    })
}

/// Fit Hockney's `α`, `β` to `(bytes, seconds)` samples.
///
/// ```
/// use perfcompose_core::comm::{fit_hockney, Timing, Weighting};
/// let samples: Vec<(f64, f64)> = [8.0, 1024.0, 65536.0, 1048576.0]
///     .iter().map(|&n| (n, 2.0 * (2e-6 + n * 1e-9))).collect();
/// let fit = fit_hockney(&samples, Timing::RoundTrip, Weighting::Relative).unwrap();
/// assert!((fit.alpha - 2e-6).abs() < 1e-15 && (fit.beta - 1e-9).abs() < 1e-20);
/// ```
pub fn fit_hockney(
    samples: &[(f64, f64)],
    timing: Timing,
    weighting: Weighting,
) -> Result<HockneyFit, CalibrationError> {
    for (index, &(bytes, seconds)) in samples.iter().enumerate() {
        if !(bytes.is_finite() && bytes >= 0.0 && seconds.is_finite() && seconds > 0.0) {
            return Err(CalibrationError::BadSample {
                index,
                bytes,
                seconds,
            });
        }
    }
    let scale = match timing {
        Timing::OneWay => 1.0,
        Timing::RoundTrip => 0.5,
    };
    let scaled: Vec<(f64, f64)> = samples.iter().map(|&(n, t)| (n, t * scale)).collect();
    let line = fit_line(&scaled, weighting)?;
    if line.intercept < 0.0 {
        return Err(CalibrationError::Negative {
            which: "start-up time α",
            value: line.intercept,
        });
    }
    if line.slope < 0.0 {
        return Err(CalibrationError::Negative {
            which: "time per byte β",
            value: line.slope,
        });
    }
    Ok(HockneyFit {
        alpha: line.intercept,
        beta: line.slope,
        alpha_stderr: line.intercept_stderr,
        beta_stderr: line.slope_stderr,
        r_squared: line.r_squared,
        max_relative_error: line.max_relative_error,
        samples: line.samples,
    })
}

/// One size range of a piecewise Hockney model: `α + β·n` for `n ≥ from_bytes` (up to
/// the next piece).
#[derive(Clone, Debug, PartialEq)]
pub struct HockneyPiece {
    pub from_bytes: f64,
    /// The line on this range; its `alpha` is the intercept of the extrapolated line and
    /// may be negative for pieces after the first.
    pub fit: LineFit,
}

/// Hockney's line fitted separately on consecutive message-size ranges — what real
/// networks need where eager/rendezvous protocols or caches bend the line (the divide-and-conquer paper's
/// "linear by pieces").
#[derive(Clone, Debug, PartialEq)]
pub struct PiecewiseHockney {
    /// In increasing `from_bytes`; the first starts at the smallest size measured.
    pub pieces: Vec<HockneyPiece>,
    /// Weighted residual sum of squares of all pieces together.
    pub rss: f64,
}

impl PiecewiseHockney {
    /// The time of one message of `bytes`.
    pub fn eval(&self, bytes: f64) -> f64 {
        let piece = self
            .pieces
            .iter()
            .rev()
            .find(|p| bytes >= p.from_bytes)
            .or(self.pieces.first());
        piece.map_or(f64::NAN, |p| p.fit.intercept + p.fit.slope * bytes)
    }

    /// The model as an expression in `bytes`: the first line plus, for each later piece
    /// starting at `b`, `[bytes ≥ b]·(line − previous line)`, where the step
    /// `[bytes ≥ b] = min(1, floor(bytes / b))` holds for sizes ≥ 0.
    pub fn model(&self, bytes: &Expr) -> Expr {
        let line = |p: &HockneyPiece| {
            Expr::add(
                Expr::constant(p.fit.intercept),
                Expr::mul(Expr::constant(p.fit.slope), bytes.clone()),
            )
        };
        let mut parts = Vec::new();
        let mut prev: Option<&HockneyPiece> = None;
        for p in &self.pieces {
            match prev {
                None => parts.push(line(p)),
                Some(q) => {
                    let step = Expr::min(
                        Expr::one(),
                        Expr::floor(Expr::div(bytes.clone(), Expr::constant(p.from_bytes))),
                    );
                    parts.push(Expr::mul(step, Expr::sub(line(p), line(q))));
                }
            }
            prev = Some(p);
        }
        Expr::sum_of(parts)
    }
}

/// Fit a piecewise Hockney model with `pieces` size ranges, choosing the breakpoints
/// (between measured sizes) that minimise the total weighted residual; every range
/// holds at least two distinct sizes and has a non-negative slope. Times are halved
/// first for round trips.
pub fn fit_hockney_piecewise(
    samples: &[(f64, f64)],
    timing: Timing,
    weighting: Weighting,
    pieces: usize,
) -> Result<PiecewiseHockney, CalibrationError> {
    for (index, &(bytes, seconds)) in samples.iter().enumerate() {
        if !(bytes.is_finite() && bytes >= 0.0 && seconds.is_finite() && seconds > 0.0) {
            return Err(CalibrationError::BadSample {
                index,
                bytes,
                seconds,
            });
        }
    }
    let scale = match timing {
        Timing::OneWay => 1.0,
        Timing::RoundTrip => 0.5,
    };
    let mut sizes: Vec<f64> = samples.iter().map(|s| s.0).collect();
    sizes.sort_by(f64::total_cmp);
    sizes.dedup();
    let pieces = pieces.max(1);
    if sizes.len() < 2 * pieces {
        return Err(CalibrationError::TooFewSizes(sizes.len()));
    }
    // Samples of the size range sizes[a..b].
    let range = |a: usize, b: usize| -> Vec<(f64, f64)> {
        samples
            .iter()
            .filter(|s| s.0 >= sizes[a] && s.0 <= sizes[b - 1])
            .map(|&(n, t)| (n, t * scale))
            .collect()
    };
    let weighted_rss = |f: &LineFit, pts: &[(f64, f64)]| -> f64 {
        pts.iter()
            .map(|&(n, t)| {
                let r = t - f.intercept - f.slope * n;
                match weighting {
                    Weighting::Relative => (r / t).powi(2),
                    Weighting::Absolute => r * r,
                }
            })
            .sum()
    };
    let s = sizes.len();
    // line[a][b]: the fit of one line to sizes[a..b] and its residual; dynamic
    // programming over the first size of each piece.
    let mut line: Vec<Vec<Option<(LineFit, f64)>>> = vec![vec![None; s + 1]; s + 1];
    for (a, row) in line.iter_mut().enumerate().take(s) {
        for (b, slot) in row.iter_mut().enumerate().skip(a + 2) {
            let pts = range(a, b);
            let f = fit_line(&pts, weighting)?;
            // A range whose time falls with size is noise, not a network regime.
            if f.slope >= 0.0 {
                let r = weighted_rss(&f, &pts);
                *slot = Some((f, r));
            }
        }
    }
    // best[k][b]: least total residual of k pieces covering sizes[0..b], with the start
    // of the last piece.
    let mut best: Vec<Vec<Option<(f64, usize)>>> = vec![vec![None; s + 1]; pieces + 1];
    best[0][0] = Some((0.0, 0));
    for k in 1..=pieces {
        for b in 2..=s {
            for a in 0..b.saturating_sub(1) {
                let (Some((prev, _)), Some((_, r))) = (best[k - 1][a], &line[a][b]) else {
                    continue;
                };
                let total = prev + r;
                if best[k][b].is_none_or(|(t, _)| total < t) {
                    best[k][b] = Some((total, a));
                }
            }
        }
    }
    let Some((rss, _)) = best[pieces][s] else {
        return Err(CalibrationError::TooFewSizes(sizes.len()));
    };
    let mut out = Vec::new();
    let (mut k, mut b) = (pieces, s);
    while k > 0 {
        let (_, a) = best[k][b].expect("reachable state");
        let (fit, _) = line[a][b].clone().expect("fitted range");
        out.push(HockneyPiece {
            from_bytes: sizes[a],
            fit,
        });
        b = a;
        k -= 1;
    }
    out.reverse();
    Ok(PiecewiseHockney { pieces: out, rss })
}

/// Fit Hockney's `α`, `β` to one series of an experiment whose parameter `size_param`
/// is the message size in bytes (every repetition is a sample).
pub fn fit_hockney_series(
    experiment: &Experiment,
    key: &SeriesKey,
    size_param: &str,
    timing: Timing,
    weighting: Weighting,
) -> Result<HockneyFit, CalibrationError> {
    let axis = experiment
        .parameters
        .iter()
        .position(|p| p == size_param)
        .ok_or_else(|| CalibrationError::MissingParameter(size_param.to_string()))?;
    let points = experiment.series.get(key).ok_or_else(|| {
        CalibrationError::MissingSeries(format!("{}/{}", key.callpath, key.metric))
    })?;
    let samples: Vec<(f64, f64)> = points
        .iter()
        .flat_map(|p| {
            let n = p.coordinate.get(axis).copied().unwrap_or(f64::NAN);
            p.values.iter().map(move |&t| (n, t))
        })
        .collect();
    fit_hockney(&samples, timing, weighting)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// Exact data must be recovered to rounding.
    const EXACT_TOL: f64 = 1e-9;
    /// Noisy data (±3 % uniform) must be recovered to within this relative error.
    const NOISY_TOL: f64 = 0.05;

    fn sizes() -> Vec<f64> {
        (0..=20).map(|k| 2f64.powi(k)).collect()
    }

    #[test]
    fn recovers_exact_parameters_one_way_and_round_trip() {
        let (a, b) = (1.7e-6, 3.2e-10);
        let one: Vec<(f64, f64)> = sizes().iter().map(|&n| (n, a + b * n)).collect();
        let two: Vec<(f64, f64)> = one.iter().map(|&(n, t)| (n, 2.0 * t)).collect();
        for (s, timing) in [(&one, Timing::OneWay), (&two, Timing::RoundTrip)] {
            for w in [Weighting::Relative, Weighting::Absolute] {
                let f = fit_hockney(s, timing, w).unwrap();
                assert!(((f.alpha - a) / a).abs() < EXACT_TOL, "{w:?}: {}", f.alpha);
                assert!(((f.beta - b) / b).abs() < EXACT_TOL, "{w:?}: {}", f.beta);
                assert!(f.r_squared > 1.0 - EXACT_TOL);
                assert!(f.max_relative_error < EXACT_TOL);
            }
        }
    }

    #[test]
    fn relative_weighting_keeps_the_latency_under_noise() {
        let (a, b) = (2e-6, 1e-9);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let samples: Vec<(f64, f64)> = sizes()
            .iter()
            .flat_map(|&n| (0..5).map(move |_| n))
            .map(|n| (n, (a + b * n) * (1.0 + rng.gen_range(-0.03..0.03))))
            .collect();
        let rel = fit_hockney(&samples, Timing::OneWay, Weighting::Relative).unwrap();
        assert!(
            ((rel.alpha - a) / a).abs() < NOISY_TOL,
            "alpha {}",
            rel.alpha
        );
        assert!(((rel.beta - b) / b).abs() < NOISY_TOL, "beta {}", rel.beta);
        assert_eq!(rel.samples, 105);
        let (ae, be) = (rel.alpha_stderr.unwrap(), rel.beta_stderr.unwrap());
        assert!(ae > 0.0 && ae < a && be > 0.0 && be < b);
        // Ordinary least squares is dominated by megabyte messages: its α is far off
        // (3 % of a 1 ms message is 15× the latency).
        match fit_hockney(&samples, Timing::OneWay, Weighting::Absolute) {
            Ok(abs) => assert!(((abs.alpha - a) / a).abs() > NOISY_TOL),
            Err(CalibrationError::Negative { .. }) => {}
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn fitted_model_plugs_into_the_library_parameters() {
        let samples = [(0.0, 1e-6), (1e6, 1e-6 + 1e-3)];
        let f = fit_hockney(&samples, Timing::OneWay, Weighting::Relative).unwrap();
        assert_eq!(f.alpha_stderr, None);
        let t = f.model().message(&Expr::constant(5e5));
        assert!((t.as_constant().unwrap() - (1e-6 + 5e-4)).abs() < 1e-15);
        let e = crate::comm::CommLibrary;
        let m = crate::model::parse_model_with("<t>", "hockney(5e5)", &e).unwrap();
        let v = m.eval_at(&f.bindings()).unwrap();
        assert!((v - (1e-6 + 5e-4)).abs() < 1e-15);
        assert!((f.bandwidth() - 1e9).abs() < 1.0);
        assert!((f.half_performance_size() - 1000.0).abs() < 1e-6);
    }

    #[test]
    fn rejects_bad_input() {
        assert_eq!(
            fit_hockney(
                &[(8.0, 1e-6), (8.0, 2e-6)],
                Timing::OneWay,
                Weighting::Relative
            ),
            Err(CalibrationError::TooFewSizes(1))
        );
        assert!(matches!(
            fit_hockney(
                &[(8.0, 1e-6), (16.0, f64::NAN)],
                Timing::OneWay,
                Weighting::Relative
            ),
            Err(CalibrationError::BadSample { index: 1, .. })
        ));
        assert!(matches!(
            fit_hockney(
                &[(8.0, 1e-6), (16.0, -1.0)],
                Timing::OneWay,
                Weighting::Relative
            ),
            Err(CalibrationError::BadSample { index: 1, .. })
        ));
        // Time falling with size: negative β.
        assert!(matches!(
            fit_hockney(
                &[(8.0, 2e-6), (1e6, 1e-6)],
                Timing::OneWay,
                Weighting::Relative
            ),
            Err(CalibrationError::Negative { .. })
        ));
    }

    #[test]
    fn fits_a_series_of_an_experiment() {
        let mut exp = Experiment::new(vec!["bytes".into()]);
        let key = SeriesKey {
            callpath: "pingpong".into(),
            metric: "time".into(),
        };
        for n in [8.0, 4096.0, 1048576.0] {
            let t = 2.0 * (5e-6 + n * 2e-10);
            exp.push(key.clone(), vec![n], vec![t, t]);
        }
        let f = fit_hockney_series(&exp, &key, "bytes", Timing::RoundTrip, Weighting::Relative)
            .unwrap();
        assert!(((f.alpha - 5e-6) / 5e-6).abs() < EXACT_TOL);
        assert_eq!(f.samples, 6);
        assert!(matches!(
            fit_hockney_series(&exp, &key, "p", Timing::OneWay, Weighting::Relative),
            Err(CalibrationError::MissingParameter(_))
        ));
    }

    #[test]
    fn piecewise_fit_finds_the_protocol_switch() {
        // Eager below 64 KiB, rendezvous (extra handshake, other bandwidth) above.
        let truth = |n: f64| {
            if n < 65_536.0 {
                2e-6 + 1e-10 * n
            } else {
                1e-5 + 2e-10 * n
            }
        };
        let samples: Vec<(f64, f64)> = sizes().iter().map(|&n| (n, truth(n))).collect();
        let pw = fit_hockney_piecewise(&samples, Timing::OneWay, Weighting::Relative, 2).unwrap();
        assert_eq!(pw.pieces.len(), 2);
        assert_eq!(pw.pieces[1].from_bytes, 65_536.0);
        assert!(pw.rss < EXACT_TOL);
        for &n in &sizes() {
            assert!(
                ((pw.eval(n) - truth(n)) / truth(n)).abs() < EXACT_TOL,
                "{n}"
            );
            let m = pw.model(&Expr::constant(n)).as_constant().unwrap();
            assert!(((m - truth(n)) / truth(n)).abs() < EXACT_TOL, "{n}");
        }
        // Symbolic in the size, and exact at any size.
        let e = pw.model(&Expr::param("n"));
        for n in [1.0, 65_535.0, 65_536.0, 1e6] {
            let v = e.eval_at(&[("n", n)]).unwrap();
            assert!(((v - truth(n)) / truth(n)).abs() < EXACT_TOL, "{n}");
        }
        // One piece is the plain fit; too many pieces for the sizes is an error.
        let one = fit_hockney_piecewise(&samples, Timing::OneWay, Weighting::Relative, 1).unwrap();
        assert!(one.rss > pw.rss);
        assert!(matches!(
            fit_hockney_piecewise(&samples[..5], Timing::OneWay, Weighting::Relative, 3),
            Err(CalibrationError::TooFewSizes(5))
        ));
    }
}
