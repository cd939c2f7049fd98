//! How a point is sampled: the repetitions it takes ([`Sampling`]), the thing repeated
//! ([`Repeated`]: a kernel's unit test or a whole program at one size), and the adaptive
//! stop rule — repeat until the 95% confidence interval of the median is within the
//! target, or the repetition or time budget is spent ([`sample`], [`sample_point`]).

use std::time::{Duration, Instant};

use super::series::{PointStats, PHASE_QUANTILES};
use super::stats;
use crate::error::Error;

/// How many repetitions to take per point.
#[derive(Clone, Debug, PartialEq)]
pub struct Sampling {
    /// Untimed repetitions before sampling.
    pub warmup: u32,
    pub min_reps: u32,
    pub max_reps: u32,
    /// Adaptive stop: relative half-width of the median's 95% CI to reach. `None` takes
    /// exactly `min_reps` repetitions... up to `max_reps` (always `max_reps` when
    /// `min_reps == max_reps`).
    pub target: Option<f64>,
    /// A sample lasts at least this long (short calls are batched).
    pub min_sample: Duration,
    /// Stop repeating a point after this long even if the target is not reached (the
    /// point is still reported, with its CI).
    pub max_point_time: Duration,
}

impl Sampling {
    /// Fast defaults: about a minute for all built-in kernels.
    pub fn quick() -> Sampling {
        Sampling {
            warmup: 1,
            min_reps: 7,
            max_reps: 40,
            target: Some(0.02),
            min_sample: Duration::from_micros(200),
            max_point_time: Duration::from_millis(1500),
        }
    }

    /// The paper's protocol: 256 repetitions per point, no early stop.
    pub fn full() -> Sampling {
        Sampling {
            warmup: 3,
            min_reps: 256,
            max_reps: 256,
            target: None,
            min_sample: Duration::from_micros(200),
            max_point_time: Duration::from_secs(3600),
        }
    }
}

/// One thing timed repeatedly at one size: a kernel under its conditions
/// (`KernelSampler`) or a whole program on a stream (`ProgramSampler`).
pub trait Repeated {
    /// The size measured.
    fn x(&self) -> usize;
    /// Calls (kernels) or elements (programs) per repetition.
    fn batch(&self) -> u64;
    /// One repetition: ns per call or per element.
    fn one(&mut self) -> Result<f64, Error>;
    /// The phases recorded over the repetitions so far ([`PointStats::phases`], not yet
    /// summarised), taken away: a pipeline stage's unit test has them, nothing else.
    fn take_phases(&mut self) -> Vec<f64> {
        Vec::new()
    }
}

/// Progress reports for a progress bar.
#[derive(Clone, Debug)]
pub struct Progress<'a> {
    pub label: &'a str,
    pub x: u64,
    pub done: usize,
    pub total: usize,
}

/// Repeat `one` (returns ns per call of one repetition) according to `spec`.
pub fn sample<E>(
    spec: &Sampling,
    mut one: impl FnMut() -> Result<f64, E>,
) -> Result<(Vec<f64>, bool), E> {
    for _ in 0..spec.warmup {
        one()?;
    }
    let start = Instant::now();
    let mut values = Vec::new();
    loop {
        values.push(one()?);
        let n = values.len() as u32;
        if n < spec.min_reps {
            continue;
        }
        let converged = match spec.target {
            None => true,
            Some(t) => stats::relative_ci_half_width(&values).is_some_and(|w| w <= t),
        };
        if (spec.target.is_some() && converged) || n >= spec.max_reps {
            return Ok((values, converged));
        }
        if start.elapsed() >= spec.max_point_time {
            return Ok((values, false));
        }
    }
}

/// Repeat one measurement according to `spec` (see [`sample`]) and summarise it.
pub fn sample_point(spec: &Sampling, item: &mut dyn Repeated) -> Result<PointStats, Error> {
    let (values, converged) = sample(spec, || item.one())?;
    let mut p = PointStats::summarise(item.x() as u64, values, item.batch(), converged);
    p.phases = stats::quantiles(&item.take_phases(), PHASE_QUANTILES);
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A measurement that returns the values of `script` in turn, cycling, and counts
    /// its repetitions.
    struct Scripted {
        script: Vec<f64>,
        calls: usize,
    }

    impl Repeated for Scripted {
        fn x(&self) -> usize {
            64
        }
        fn batch(&self) -> u64 {
            7
        }
        fn one(&mut self) -> Result<f64, Error> {
            let v = self.script[self.calls % self.script.len()];
            self.calls += 1;
            Ok(v)
        }
    }

    fn spec(warmup: u32, min_reps: u32, max_reps: u32, target: Option<f64>) -> Sampling {
        Sampling {
            warmup,
            min_reps,
            max_reps,
            target,
            min_sample: Duration::ZERO,
            max_point_time: Duration::from_secs(3600),
        }
    }

    fn run(spec: &Sampling, script: &[f64]) -> (PointStats, usize) {
        let mut item = Scripted {
            script: script.to_vec(),
            calls: 0,
        };
        let p = sample_point(spec, &mut item).unwrap();
        (p, item.calls)
    }

    #[test]
    fn steady_repetitions_stop_at_the_minimum_once_the_target_is_met() {
        let (p, calls) = run(&spec(2, 9, 40, Some(0.01)), &[5.0]);
        // Two untimed warm-ups, then the nine the minimum asks for.
        assert_eq!(calls, 2 + 9);
        assert_eq!(p.values, vec![5.0; 9]);
        assert!(p.converged);
        assert_eq!((p.x, p.batch, p.median), (64, 7, 5.0));
        assert!(p.phases.is_empty());
        // The median's interval needs six repetitions: a lower minimum takes six.
        assert_eq!(run(&spec(0, 3, 40, Some(0.01)), &[5.0]).1, 6);
    }

    #[test]
    fn noisy_repetitions_run_to_the_maximum_unconverged() {
        // Values far apart never bring the median's interval within 1%.
        let (p, calls) = run(&spec(1, 4, 12, Some(0.01)), &[1.0, 100.0, 3.0, 50.0]);
        assert_eq!(calls, 1 + 12);
        assert_eq!(p.values.len(), 12);
        assert!(!p.converged);
    }

    #[test]
    fn without_a_target_the_maximum_is_taken_and_counts_as_converged() {
        let (p, calls) = run(&spec(0, 3, 5, None), &[1.0, 100.0]);
        assert_eq!(calls, 5);
        assert!(p.converged);
        // `full`: exactly its 256 repetitions.
        let full = Sampling {
            warmup: 0,
            ..Sampling::full()
        };
        assert_eq!(run(&full, &[2.0]).1, 256);
    }

    #[test]
    fn the_time_budget_ends_a_point_after_its_minimum_unconverged() {
        let spent = Sampling {
            max_point_time: Duration::ZERO,
            ..spec(0, 6, 40, Some(0.01))
        };
        let (p, calls) = run(&spent, &[1.0, 100.0]);
        assert_eq!(calls, 6);
        assert!(!p.converged);
        // Steady values meet the target first: converged all the same.
        let (p, _) = run(&spent, &[3.0]);
        assert!(p.converged);
    }
}
