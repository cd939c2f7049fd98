//! Measuring a command: one repetition ([`Measurement::once`]: the untimed `--prepare`
//! script, then the timed command), a point under the adaptive stop rule
//! ([`Measurement::point`]), and a grid in a given order ([`Measurement::grid`]).

use rand::seq::SliceRandom;
use rand::SeedableRng;

use super::error::{last_lines, CommandError};
use super::exec::{Executor, Outcome};
use super::line::{format_point, CommandLine};
use super::time_from::{Found, TimeFrom, UnitOutside};
use crate::bench::{sample, stats, Sampling};

/// How to measure a command at each point.
#[derive(Clone, Debug)]
pub struct Measurement {
    pub command: CommandLine,
    /// Run before every repetition (warm-ups included), untimed.
    pub prepare: Option<CommandLine>,
    /// Time from the program's output instead of its wall time.
    pub time_from: Option<TimeFrom>,
    pub sampling: Sampling,
}

/// One point's repetitions.
#[derive(Clone, Debug, PartialEq)]
pub struct Measured {
    /// The parameters' values, in the grid's order.
    pub point: Vec<(String, f64)>,
    /// One time per repetition, ns.
    pub values: Vec<f64>,
    /// Whether the confidence target was reached (always true without one).
    pub converged: bool,
    /// A unit the program printed right after its time, outside the `--time-from`
    /// pattern's groups (the time was read as seconds): to warn about.
    pub unit_outside: Option<UnitOutside>,
}

impl Measured {
    pub fn median(&self) -> f64 {
        stats::median(&self.values)
    }

    pub fn cv(&self) -> f64 {
        stats::cv(&self.values)
    }

    /// The 95% confidence interval of the median; `None` with fewer repetitions than
    /// one needs ([`stats::MIN_SAMPLES_FOR_CI`]).
    pub fn ci(&self) -> Option<(f64, f64)> {
        stats::median_ci(&self.values)
    }
}

/// The order to measure `n` points in: as given, or shuffled with `seed` (so that a
/// drift of the machine does not line up with a parameter).
pub fn order(n: usize, shuffle: Option<u64>) -> Vec<usize> {
    let mut v: Vec<usize> = (0..n).collect();
    if let Some(seed) = shuffle {
        v.shuffle(&mut rand_chacha::ChaCha8Rng::seed_from_u64(seed));
    }
    v
}

impl Measurement {
    fn start(
        &self,
        exec: &mut dyn Executor,
        line: &CommandLine,
        point: &[(String, f64)],
        capture: bool,
    ) -> Result<Outcome, CommandError> {
        let o = exec
            .run(&line.argv(point), capture)
            .map_err(|source| CommandError::Spawn {
                command: line.display(point),
                point: format_point(point),
                source,
            })?;
        if !o.status.success() {
            return Err(CommandError::Failed {
                command: line.display(point),
                point: format_point(point),
                status: o.status,
                stderr: last_lines(&o.stderr),
            });
        }
        Ok(o)
    }

    /// One repetition at `point`: its time, ns.
    pub fn once(
        &self,
        exec: &mut dyn Executor,
        point: &[(String, f64)],
    ) -> Result<f64, CommandError> {
        self.once_checked(exec, point).map(|(ns, _)| ns)
    }

    /// [`Self::once`], with a unit printed outside the `--time-from` pattern's groups.
    fn once_checked(
        &self,
        exec: &mut dyn Executor,
        point: &[(String, f64)],
    ) -> Result<(f64, Option<UnitOutside>), CommandError> {
        if let Some(p) = &self.prepare {
            self.start(exec, p, point, false)?;
        }
        let o = self.start(exec, &self.command, point, self.time_from.is_some())?;
        let Some(t) = &self.time_from else {
            return Ok((o.wall_ns, None));
        };
        match t.find(&o.stdout, &o.stderr) {
            Some(Found::Ns(ns)) => Ok((ns, t.unit_outside(&o.stdout, &o.stderr))),
            Some(Found::NotATime { text, why }) => Err(CommandError::BadTime {
                command: self.command.display(point),
                point: format_point(point),
                text,
                why,
            }),
            None => Err(CommandError::NoTime {
                command: self.command.display(point),
                point: format_point(point),
                pattern: t.pattern().to_string(),
                output: last_lines(if o.stdout.trim().is_empty() {
                    &o.stderr
                } else {
                    &o.stdout
                }),
            }),
        }
    }

    /// The repetitions of one point under the adaptive stop rule ([`sample`]).
    pub fn point(
        &self,
        exec: &mut dyn Executor,
        point: &[(String, f64)],
    ) -> Result<Measured, CommandError> {
        let mut unit_outside = None;
        let (values, converged) = sample(&self.sampling, || {
            let (ns, unit) = self.once_checked(exec, point)?;
            unit_outside = unit_outside.take().or(unit);
            Ok::<f64, CommandError>(ns)
        })?;
        Ok(Measured {
            point: point.to_vec(),
            values,
            converged,
            unit_outside,
        })
    }

    /// Every point of `points` in the order `order` (indices into `points`): `starting`
    /// is told before each point (its index in `points` and how many are done), `done`
    /// gets each finished point at once (to write it). Stops at the first error.
    pub fn grid<E: From<CommandError>>(
        &self,
        exec: &mut dyn Executor,
        points: &[Vec<(String, f64)>],
        order: &[usize],
        mut starting: impl FnMut(usize, usize),
        mut done: impl FnMut(Measured) -> Result<(), E>,
    ) -> Result<(), E> {
        for (n, &i) in order.iter().enumerate() {
            starting(i, n);
            let m = self.point(exec, &points[i])?;
            done(m)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::io;
    use std::time::Duration;

    use super::*;

    /// Outcomes in turn, recording every command line it was given.
    struct Script {
        outcomes: VecDeque<io::Result<Outcome>>,
        ran: Vec<(Vec<String>, bool)>,
    }

    /// A process's exit with `code`.
    fn exit(code: i32) -> std::process::ExitStatus {
        std::os::unix::process::ExitStatusExt::from_raw(code << 8)
    }

    fn ok(wall_ns: f64, stdout: &str) -> io::Result<Outcome> {
        Ok(Outcome {
            wall_ns,
            status: exit(0),
            stdout: stdout.into(),
            stderr: String::new(),
        })
    }

    impl Executor for Script {
        fn run(&mut self, argv: &[String], capture: bool) -> io::Result<Outcome> {
            self.ran.push((argv.to_vec(), capture));
            self.outcomes.pop_front().unwrap_or_else(|| ok(1.0, ""))
        }
    }

    fn script(outcomes: Vec<io::Result<Outcome>>) -> Script {
        Script {
            outcomes: outcomes.into(),
            ran: Vec::new(),
        }
    }

    fn params() -> Vec<String> {
        vec!["x".into()]
    }

    fn measurement(reps: u32, time_from: Option<&str>, prepare: Option<&str>) -> Measurement {
        Measurement {
            command: CommandLine::new(vec!["./block".into(), "{x}".into()], false, &params())
                .unwrap(),
            prepare: prepare.map(|p| CommandLine::script(p, &params()).unwrap()),
            time_from: time_from.map(|t| TimeFrom::new(t).unwrap()),
            sampling: Sampling {
                warmup: 1,
                min_reps: reps,
                max_reps: reps,
                target: None,
                min_sample: Duration::ZERO,
                max_point_time: Duration::from_secs(3600),
            },
        }
    }

    fn at(x: f64) -> Vec<(String, f64)> {
        vec![("x".into(), x)]
    }

    #[test]
    fn wall_times_after_a_warm_up_with_the_prepare_script_before_each() {
        let m = measurement(2, None, Some("rm -f cache.{x}"));
        let mut s = script(vec![
            ok(0.0, ""),
            ok(9.0, ""),
            ok(0.0, ""),
            ok(5.0, ""),
            ok(0.0, ""),
            ok(7.0, ""),
        ]);
        let p = m.point(&mut s, &at(8.0)).unwrap();
        // The warm-up's 9 ns is not kept.
        assert_eq!(p.values, [5.0, 7.0]);
        assert!(p.converged);
        assert_eq!(s.ran.len(), 6);
        assert_eq!(s.ran[0].0, ["sh", "-c", "rm -f cache.8"]);
        assert_eq!(
            s.ran[1],
            (vec!["./block".to_string(), "8".to_string()], false)
        );
    }

    #[test]
    fn printed_times_replace_the_wall_time() {
        let m = measurement(2, Some(r"took (\d+) (ms)"), None);
        let mut s = script(vec![
            ok(1.0, "took 1 ms"),
            ok(1.0, "took 2 ms"),
            ok(1.0, "x\ntook 3 ms\n"),
        ]);
        let p = m.point(&mut s, &at(1.0)).unwrap();
        assert_eq!(p.values, [2e6, 3e6]);
        assert!(s.ran.iter().all(|(_, capture)| *capture));
    }

    #[test]
    fn failures_name_the_command_the_point_and_what_went_wrong() {
        let m = measurement(3, Some(r"took (\d+) (ms)"), None);
        let failed = Ok(Outcome {
            status: exit(4),
            stderr: "reading input\nout of memory\n".into(),
            ..ok(1.0, "").unwrap()
        });
        let e = m
            .point(&mut script(vec![ok(1.0, "took 1 ms"), failed]), &at(64.0))
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "`./block 64` failed at x=64 (exit status: 4); the last lines of its standard error:\n  | reading input\n  | out of memory"
        );
        let e = m
            .point(&mut script(vec![ok(1.0, "done")]), &at(2.0))
            .unwrap_err();
        assert!(matches!(e, CommandError::NoTime { .. }), "{e}");
        assert!(
            e.to_string().contains("matched nothing") && e.to_string().contains("| done"),
            "{e}"
        );
        let missing = Err(io::Error::new(io::ErrorKind::NotFound, "no such file"));
        let e = m.point(&mut script(vec![missing]), &at(2.0)).unwrap_err();
        assert_eq!(e.to_string(), "cannot start `./block 2` at x=2");
        // Why it did not start is the error's source, kind and all.
        let source = std::error::Error::source(&e).expect("the start's error");
        assert_eq!(
            source.downcast_ref::<io::Error>().map(io::Error::kind),
            Some(io::ErrorKind::NotFound)
        );
        assert_eq!(source.to_string(), "no such file");
    }

    #[test]
    fn a_grid_reports_each_point_as_it_finishes_and_stops_at_the_first_error() {
        let m = measurement(1, None, None);
        let points = vec![at(1.0), at(2.0), at(3.0)];
        let mut seen = Vec::new();
        let mut started = Vec::new();
        let failed = Ok(Outcome {
            status: exit(1),
            ..ok(1.0, "").unwrap()
        });
        // Warm-up and one repetition per point; the third point's warm-up fails.
        let mut s = script(vec![
            ok(0.0, ""),
            ok(10.0, ""),
            ok(0.0, ""),
            ok(20.0, ""),
            failed,
        ]);
        let r: Result<(), CommandError> = m.grid(
            &mut s,
            &points,
            &[1, 0, 2],
            |i, n| started.push((i, n)),
            |p| {
                seen.push((p.point[0].1, p.values.clone()));
                Ok(())
            },
        );
        assert!(r.is_err());
        assert_eq!(started, [(1, 0), (0, 1), (2, 2)]);
        assert_eq!(seen, [(2.0, vec![10.0]), (1.0, vec![20.0])]);
    }

    #[test]
    fn shuffled_orders_are_permutations_fixed_by_their_seed() {
        assert_eq!(order(4, None), [0, 1, 2, 3]);
        let a = order(20, Some(7));
        assert_eq!(a, order(20, Some(7)));
        assert_ne!(a, order(20, None));
        let mut sorted = a.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, order(20, None));
    }
}
