//! The flags of a measured command, shared by `measure` and `validate -- CMD`: how it
//! is started, what is timed, and how many repetitions each point takes.

use std::time::Duration;

use anyhow::bail;
use perfcompose_runtime::bench::Sampling;
use perfcompose_runtime::command::{CommandLine, Measured, Measurement, TimeFrom};

/// Fewest repetitions per point by default: the median's confidence interval needs six.
pub const DEFAULT_REPS: u32 = 7;
/// Most repetitions per point by default.
pub const DEFAULT_MAX_REPS: u32 = 30;
/// The confidence target by default: `bench`'s.
pub const DEFAULT_TARGET: f64 = 0.02;
/// The seed of `--shuffle` by default.
pub const DEFAULT_SEED: u64 = 1;

/// How a command is started, timed and repeated.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct TimingArgs {
    /// Run the command through `sh -c` (pipes, redirections, variables) instead of
    /// starting it directly.
    #[arg(long, requires = "command")]
    pub shell: bool,
    /// Take the time the program prints instead of its wall time: REGEX's first group
    /// is the number, an optional second group its unit (ns, us, µs, ms, s; seconds
    /// without). Searched in the standard output, then in the standard error.
    #[arg(long, value_name = "REGEX", requires = "command")]
    pub time_from: Option<String>,
    /// Run CMD through `sh -c` before every repetition, untimed (placeholders are
    /// replaced in it too), e.g. to generate an input.
    #[arg(long, value_name = "CMD", requires = "command")]
    pub prepare: Option<String>,
    /// Untimed runs at each point before its repetitions [default: 1].
    #[arg(long, value_name = "N", requires = "command")]
    pub warmup: Option<u32>,
    /// Fewest repetitions per point [default: 7].
    #[arg(long, value_name = "N", requires = "command")]
    pub reps: Option<u32>,
    /// Most repetitions per point (equal to --reps: exactly that many) [default: 30].
    #[arg(long, value_name = "N", requires = "command")]
    pub max_reps: Option<u32>,
    /// Repeat a point until the 95% confidence interval of its median is within this
    /// fraction of it, as `bench` does [default: 0.02].
    #[arg(long, value_name = "FRACTION", requires = "command")]
    pub target: Option<f64>,
    /// Spend at most about this long on the whole grid: each point stops repeating
    /// after its share, once it has --reps repetitions.
    #[arg(long, value_name = "SECONDS", requires = "command", value_parser = super::seconds::seconds)]
    pub budget: Option<Duration>,
    /// Measure the points in a random order (fixed by --seed), so that a drift of the
    /// machine does not line up with a parameter.
    #[arg(long, requires = "command")]
    pub shuffle: bool,
    /// Seed of --shuffle [default: 1].
    #[arg(long, value_name = "N", requires = "shuffle")]
    pub seed: Option<u64>,
}

impl TimingArgs {
    /// The repetitions of a point, checked.
    pub fn sampling(&self, points: usize) -> anyhow::Result<Sampling> {
        let reps = self.reps.unwrap_or(DEFAULT_REPS);
        let max_reps = self.max_reps.unwrap_or(DEFAULT_MAX_REPS.max(reps));
        let target = self.target.unwrap_or(DEFAULT_TARGET);
        if reps == 0 {
            bail!("--reps must be at least 1");
        }
        if max_reps < reps {
            bail!("--max-reps {max_reps} is below --reps {reps}");
        }
        if !(target > 0.0 && target < 1.0) {
            bail!("--target {target}: give a fraction between 0 and 1, e.g. 0.02 for 2%");
        }
        let max_point_time = match self.budget {
            None => Duration::from_secs(24 * 3600),
            Some(b) => b.div_f64(points.max(1) as f64),
        };
        Ok(Sampling {
            warmup: self.warmup.unwrap_or(1),
            min_reps: reps,
            max_reps,
            target: Some(target),
            min_sample: Duration::ZERO,
            max_point_time,
        })
    }

    /// How to measure `command` over a grid of `parameters` with `points` points; each
    /// of the `varying` parameters (more than one value) must reach the command.
    pub fn measurement(
        &self,
        command: &[String],
        parameters: &[String],
        varying: &[String],
        points: usize,
    ) -> anyhow::Result<Measurement> {
        let command = CommandLine::new(command.to_vec(), self.shell, parameters)?;
        let prepare = self
            .prepare
            .as_deref()
            .map(|p| CommandLine::script(p, parameters))
            .transpose()?;
        CommandLine::check_used(varying, &command, prepare.as_ref())?;
        Ok(Measurement {
            command,
            prepare,
            time_from: self.time_from.as_deref().map(TimeFrom::new).transpose()?,
            sampling: self.sampling(points)?,
        })
    }

    /// The order of the points (shuffled with --shuffle).
    pub fn order(&self, points: usize) -> Vec<usize> {
        perfcompose_runtime::command::order(
            points,
            self.shuffle.then(|| self.seed.unwrap_or(DEFAULT_SEED)),
        )
    }

    /// What is timed, for people and JSON: `wall` or `printed`.
    pub fn timed(&self) -> &'static str {
        if self.time_from.is_some() {
            "printed"
        } else {
            "wall"
        }
    }
}

/// Says once per run that the program printed a unit right after its time, outside the
/// `--time-from` pattern's groups (the time was read as seconds), with the fix.
#[derive(Debug, Default)]
pub struct UnitWarning {
    said: bool,
}

impl UnitWarning {
    pub fn check(&mut self, m: &Measured, bar: &indicatif::ProgressBar) {
        if let (false, Some(w)) = (self.said, &m.unit_outside) {
            self.said = true;
            bar.suspend(|| perfcompose_core::stderr_line!("warning: {w}"));
        }
    }
}

/// A duration in ns for people: `812 ns`, `12.35 µs`, `3.204 ms`, `1.5 s`.
pub fn duration(ns: f64) -> String {
    use perfcompose_core::model::format_significant;
    let (v, unit) = if !ns.is_finite() || ns.abs() < 1e3 {
        (ns, "ns")
    } else if ns.abs() < 1e6 {
        (ns / 1e3, "µs")
    } else if ns.abs() < 1e9 {
        (ns / 1e6, "ms")
    } else {
        (ns / 1e9, "s")
    };
    format!("{} {unit}", format_significant(v, 4))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_pick_a_unit() {
        assert_eq!(duration(812.0), "812 ns");
        assert_eq!(duration(12_345.0), "12.35 µs");
        assert_eq!(duration(3.2041e6), "3.204 ms");
        assert_eq!(duration(1.5e9), "1.5 s");
    }

    #[test]
    fn repetitions_are_checked() {
        let a = |reps, max_reps, target, budget| TimingArgs {
            reps,
            max_reps,
            target,
            budget,
            ..TimingArgs::default()
        };
        let s = a(None, None, None, None).sampling(4).unwrap();
        assert_eq!((s.min_reps, s.max_reps, s.target), (7, 30, Some(0.02)));
        assert_eq!(
            a(Some(40), None, None, None).sampling(1).unwrap().max_reps,
            40
        );
        let s = a(None, None, None, Some(Duration::from_secs(8)))
            .sampling(4)
            .unwrap();
        assert_eq!(s.max_point_time, Duration::from_secs(2));
        for (bad, msg) in [
            (a(Some(0), None, None, None), "at least 1"),
            (a(Some(5), Some(3), None, None), "below --reps"),
            (a(None, None, Some(1.5), None), "between 0 and 1"),
        ] {
            let e = bad.sampling(2).unwrap_err().to_string();
            assert!(e.contains(msg), "{e}");
        }
    }
}
