//! Bootstrap refits: the same modeler fitted again to the points with each point's
//! repetitions drawn again with replacement (moved by the statistic's bootstrap bias,
//! so that the refits of a minimum or a median centre on the fit). The refits carry
//! what a single fit's covariance cannot: that noise may have made the modeler choose
//! other terms.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::{Design, Source, Uncertain, Uncertainty};
use crate::fit::{Fit, FitOptions, Modeler};
use crate::measure::stats::resampled_bias;
use crate::measure::Point;

/// `replicates` refits of `modeler` to `points` resampled from `seed`, each with its
/// coefficients' covariance (refits that fail or have none are left out). Refit `k`
/// draws from a stream of its own, so the result does not depend on how many threads
/// share the work.
pub fn bootstrap(
    name: &str,
    modeler: &dyn Modeler,
    parameters: &[String],
    points: &[Point],
    options: &FitOptions,
    replicates: usize,
    seed: u64,
) -> Vec<Uncertain> {
    // Each point's resampled repetitions are moved by the statistic's bootstrap bias, so
    // that the refits centre on the fit: the resampled minimum is never below the
    // minimum, and uncorrected every refit of a minimum would lie above it (the mean's
    // bias is 0, and its repetitions stay as they are).
    let measure = options.measure_for(modeler);
    let bias: Vec<f64> = points
        .iter()
        .map(|p| resampled_bias(&p.values, measure).unwrap_or(0.0))
        .collect();
    let refit = |k: usize| -> Option<Uncertain> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed.wrapping_add(k as u64));
        let resampled: Vec<Point> = points
            .iter()
            .zip(&bias)
            .map(|(p, b)| {
                let n = p.values.len();
                let values = (0..n)
                    .map(|_| p.values[rng.gen_range(0..n)] - b)
                    .map(|v| if *b != 0.0 { v.max(0.0) } else { v })
                    .collect();
                Point::new(p.coordinate.clone(), values)
            })
            .collect();
        let fit = modeler.fit(parameters, &resampled, options).ok()?;
        Uncertain::from_fit(name, &fit)
    };
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, replicates.max(1));
    let chunk = replicates.div_ceil(threads.max(1)).max(1);
    let parts: Vec<Vec<Option<Uncertain>>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..replicates)
            .step_by(chunk)
            .map(|from| {
                let refit = &refit;
                s.spawn(move || (from..(from + chunk).min(replicates)).map(refit).collect())
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    });
    parts.into_iter().flatten().flatten().collect()
}

/// The uncertainty of a component fitted as `fit` from `points`: bootstrap refits when
/// the points have repetitions to resample, else the fit's own covariance; `None` for a
/// fit without a covariance (no residual degrees of freedom, a segmented model).
pub fn fitted(
    name: &str,
    fit: &Fit,
    modeler: &dyn Modeler,
    points: &[Point],
    options: &FitOptions,
    replicates: usize,
    seed: u64,
) -> Option<Uncertainty> {
    let center = Uncertain::from_fit(name, fit)?;
    let resample = points.iter().any(|p| p.values.len() >= 2);
    let refits = if resample {
        bootstrap(
            name,
            modeler,
            &fit.parameters,
            points,
            options,
            replicates,
            seed,
        )
    } else {
        Vec::new()
    };
    let mut u = Uncertainty::mixture(&center, &refits);
    if refits.is_empty() {
        u.source = Source::FitCovariance;
    }
    u.design = Design::from_fit(&center, fit, points);
    Some(u)
}
