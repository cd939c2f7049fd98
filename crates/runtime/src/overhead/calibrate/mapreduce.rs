//! The MapReduce jobs: the trivial job ([`JobCost`]) and the job whose map keeps the
//! workers busy ([`JobBusy`]).

use super::rig::spin;
use crate::bench::stats;
use crate::ctx::Config;
use crate::error::Error;
use crate::overhead::calibration::{JobBusy, JobCost, JobPoint};
use crate::overhead::fit::job_busy_of;

/// Inputs per job of the MapReduce calibration.
pub const JOB_INPUTS: usize = 8;

/// Busy times of one map call in the busy-job calibration, ns.
pub const JOB_SPINS: [u64; 4] = [1_000, 4_000, 16_000, 64_000];

/// How long the calls of a busy job's map spin, as fractions of the mean (±15%, summing
/// to [`JOB_INPUTS`], so a job's total work is exactly `JOB_INPUTS · T` and no job can
/// beat its ideal). Job `j` starts the pattern at `3j mod 8`, so the calls the threads
/// claim differ from job to job.
///
/// Maps of equal length finish in lock step, so the thread that waits for the last
/// result still spins on its queue when the result comes and the helper is still awake
/// when the next job does; real maps vary from call to call, and then both sleep. Pinned,
/// on two threads, jobs of 8 inputs: equal spins of 64 µs started the helper 0.7–1.3 µs
/// after the caller and left 1.6–2.4 µs between jobs, the small-image histogram (76 µs;
/// the middle 80% of its calls spread over 16–40% of the median) 9.7–10.4 µs and
/// 23–24 µs.
pub const JOB_SPIN_SPREAD: [f64; JOB_INPUTS] = [1.15, 0.9, 1.0, 0.85, 1.1, 0.95, 1.05, 1.0];

/// The share of call `i` (job `i / 8`, call `i mod 8` of it): [`JOB_SPIN_SPREAD`]
/// rotated by `3 · job`.
pub(crate) fn spin_share(i: usize) -> f64 {
    let (job, call) = (i / JOB_INPUTS, i % JOB_INPUTS);
    JOB_SPIN_SPREAD[(call + 3 * job) % JOB_INPUTS]
}

/// A map busy for `ns` times the call's share of [`JOB_SPIN_SPREAD`] without touching
/// memory, emitting one key. Calls are counted over the program's life; every job makes
/// exactly [`JOB_INPUTS`] of them, one after the other job's.
fn spin_map(ns: u64) -> impl Fn(&u64) -> Vec<u64> + Send + Sync + 'static {
    let calls = std::sync::atomic::AtomicUsize::new(0);
    move |v: &u64| {
        let i = calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        spin((ns as f64 * spin_share(i)) as u64);
        vec![*v]
    }
}

/// The reduction of the MapReduce calibrations: add the one key.
fn job_reduce(style: &str) -> crate::Reduce<u64> {
    if style == "pairwise" {
        crate::Reduce::pairwise("add", |a: &mut [u64], b: &[u64]| a[0] += b[0])
    } else {
        crate::Reduce::per_key("sum", |_k, v: &[u64]| v.iter().sum())
    }
}

/// One timed stream of a MapReduce calibration: ns per job over `count` jobs of
/// [`JOB_INPUTS`] inputs each.
fn time_jobs(program: &crate::Program<Vec<u64>, Vec<u64>>, count: usize) -> Result<f64, Error> {
    let jobs: Vec<Vec<u64>> = (0..count)
        .map(|_| (0..JOB_INPUTS as u64).collect())
        .collect();
    let m = program.run_stream(jobs)?;
    Ok(m.elapsed.as_nanos() as f64 / count as f64)
}

/// Measure a MapReduce job whose map emits one key and whose reduction adds, for both
/// reduction styles and `threads` from 1 to 2·cores (powers of two).
pub(crate) fn calibrate_mapreduce(
    cores: usize,
    repetitions: usize,
    config: &Config,
) -> Result<Vec<JobCost>, Error> {
    let mut out = Vec::new();
    let mut n = 1;
    while n <= (2 * cores).max(2) {
        for style in ["pairwise", "per_key"] {
            let mr = crate::mapreduce(n, "one", |v: &u64| vec![*v], job_reduce(style));
            let program = crate::Program::with_config(mr, config.clone())?;
            let time = |count: usize| time_jobs(&program, count);
            let probe = time(64)?;
            let count = ((20e6 / probe.max(1.0)) as usize).clamp(64, 100_000);
            let samples = (0..repetitions.max(1))
                .map(|_| time(count))
                .collect::<Result<Vec<_>, _>>()?;
            out.push(JobCost {
                reduce: style.into(),
                threads: n,
                ns_per_job: stats::median(&samples),
            });
        }
        n *= 2;
    }
    Ok(out)
}

/// Measure `mapreduce(n, spin(T))` for both reduction styles, `n` = 1, 2, 4, … up to
/// `cores` (a map that spins for a wall-clock time cannot stand for work on
/// oversubscribed cores; more threads use the nearest calibrated count) and each `T` of
/// [`JOB_SPINS`] (streams of about 20 ms, one untimed first), and fit each against the
/// trivial jobs `trivial` ([`job_busy_of`]).
pub(crate) fn calibrate_mapreduce_busy(
    cores: usize,
    repetitions: usize,
    config: &Config,
    trivial: &[JobCost],
) -> Result<Vec<JobBusy>, Error> {
    let mut out = Vec::new();
    let mut n = 1;
    while n <= cores.max(1) {
        for style in ["pairwise", "per_key"] {
            let mut points = Vec::new();
            for &ns in &JOB_SPINS {
                let mr = crate::mapreduce(n, "spin", spin_map(ns), job_reduce(style));
                let program = crate::Program::with_config(mr, config.clone())?;
                let ideal = (JOB_INPUTS as u64 * ns) as f64 / n as f64;
                let count = ((20e6 / ideal) as usize).clamp(16, 10_000);
                let time = || time_jobs(&program, count);
                time()?;
                let samples = (0..repetitions.max(1))
                    .map(|_| time())
                    .collect::<Result<Vec<_>, _>>()?;
                points.push(JobPoint {
                    spin_ns: ns as f64,
                    ideal_ns: ideal,
                    job_ns: stats::median(&samples),
                });
            }
            out.push(job_busy_of(style, n, points, trivial));
        }
        n *= 2;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_job_spins_vary_by_call_but_every_job_does_the_same_work() {
        for job in 0..16 {
            let shares: Vec<f64> = (0..JOB_INPUTS)
                .map(|c| spin_share(job * JOB_INPUTS + c))
                .collect();
            assert!((shares.iter().sum::<f64>() - JOB_INPUTS as f64).abs() < 1e-9);
            assert!(shares.iter().all(|s| (0.85..=1.15).contains(s)));
            let next: Vec<f64> = (0..JOB_INPUTS)
                .map(|c| spin_share((job + 1) * JOB_INPUTS + c))
                .collect();
            assert_ne!(shares, next, "consecutive jobs claim different patterns");
        }
    }
}
