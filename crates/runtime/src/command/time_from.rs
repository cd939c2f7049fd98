//! `--time-from REGEX`: a time the program prints itself, for programs that time their
//! own block and leave out their start-up.
//!
//! The pattern's first group is the number, an optional second group its unit (`ns`,
//! `us`, `µs`, `ms`, `s`; seconds when the group is absent or matched nothing). The first
//! match in the standard output counts; without one, the first in the standard error.

use regex::Regex;

use super::error::CommandError;

/// A compiled `--time-from` pattern.
#[derive(Clone, Debug)]
pub struct TimeFrom {
    regex: Regex,
}

/// What a match gave: a time in ns, or why the matched text is none.
#[derive(Clone, Debug, PartialEq)]
pub enum Found {
    Ns(f64),
    NotATime { text: String, why: String },
}

/// A unit written right after the number but outside the pattern's groups (`5 ms` read by
/// `([0-9.]+) ms`): the number was taken as seconds, which is most likely wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnitOutside {
    /// The pattern as given.
    pub pattern: String,
    /// The number the first group took.
    pub number: String,
    /// The unit that follows it in the output.
    pub unit: String,
    /// The pattern with the unit captured as the second group, when it can be written.
    pub fix: Option<String>,
}

impl std::fmt::Display for UnitOutside {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "--time-from `{}` took `{}` as seconds, and the output has `{}` right after it, outside the pattern's groups: ",
            self.pattern, self.number, self.unit
        )?;
        match &self.fix {
            Some(fix) => write!(
                f,
                "capture the unit as the second group: --time-from '{fix}'"
            ),
            None => write!(
                f,
                "capture the unit as the second group, e.g. '([0-9.]+) ?(ns|us|µs|ms|s)'"
            ),
        }
    }
}

/// Units other than seconds that a program may print after a time, longest first.
const OTHER_UNITS: &[&str] = &[
    "nanoseconds",
    "microseconds",
    "milliseconds",
    "nsec",
    "usec",
    "msec",
    "ns",
    "us",
    "µs",
    "μs",
    "ms",
];

impl TimeFrom {
    pub fn new(pattern: &str) -> Result<TimeFrom, CommandError> {
        let err = |message: String| CommandError::Pattern {
            pattern: pattern.to_string(),
            message,
        };
        let regex = Regex::new(pattern).map_err(|e| err(e.to_string()))?;
        if regex.captures_len() < 2 {
            return Err(err(
                "it has no group: put the number in parentheses".to_string()
            ));
        }
        Ok(TimeFrom { regex })
    }

    pub fn pattern(&self) -> &str {
        self.regex.as_str()
    }

    /// A unit other than seconds written right after the number of the match that
    /// [`Self::find`] takes, when the pattern leaves it outside its groups (the number is
    /// then taken as seconds).
    pub fn unit_outside(&self, stdout: &str, stderr: &str) -> Option<UnitOutside> {
        let (caps, text) = match self.regex.captures(stdout) {
            Some(c) => (c, stdout),
            None => (self.regex.captures(stderr)?, stderr),
        };
        if caps.get(2).is_some() {
            return None;
        }
        let number = caps.get(1)?;
        let after = text[number.end()..].trim_start_matches([' ', '\t']);
        let unit = OTHER_UNITS.iter().find(|u| {
            after
                .strip_prefix(**u)
                .is_some_and(|rest| !rest.starts_with(|c: char| c.is_alphanumeric()))
        })?;
        let pattern = self.regex.as_str();
        // `([0-9.]+) ms` → `([0-9.]+) (ms)`: the unit written literally after the group.
        let fix = [format!(") {unit}"), format!("){unit}")]
            .into_iter()
            .find(|lit| pattern.matches(lit.as_str()).count() == 1)
            .map(|lit| pattern.replacen(&lit, &lit.replacen(unit, &format!("({unit})"), 1), 1))
            .or_else(|| {
                (self.regex.captures_len() == 2 && pattern.ends_with(')'))
                    .then(|| format!("{pattern} ?(ns|us|µs|ms|s)"))
            });
        Some(UnitOutside {
            pattern: pattern.to_string(),
            number: number.as_str().to_string(),
            unit: unit.to_string(),
            fix,
        })
    }

    /// The time in `stdout`, else in `stderr`; `None` when the pattern matches neither.
    pub fn find(&self, stdout: &str, stderr: &str) -> Option<Found> {
        let caps = self
            .regex
            .captures(stdout)
            .or_else(|| self.regex.captures(stderr))?;
        let Some(number) = caps.get(1) else {
            return Some(Found::NotATime {
                text: caps[0].to_string(),
                why: "the first group matched nothing".into(),
            });
        };
        let text = number.as_str().trim();
        let value: f64 = match text.parse() {
            Ok(v) => v,
            Err(_) => {
                return Some(Found::NotATime {
                    text: text.to_string(),
                    why: "the first group is not a number".into(),
                })
            }
        };
        let unit = caps.get(2).map_or("s", |u| u.as_str().trim());
        let scale = match unit {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e3 * 1e3,
            "s" | "" => 1e9,
            other => {
                return Some(Found::NotATime {
                    text: caps[0].to_string(),
                    why: format!("unknown unit `{other}` (ns, us, µs, ms or s)"),
                })
            }
        };
        if !(value * scale).is_finite() || value < 0.0 {
            return Some(Found::NotATime {
                text: text.to_string(),
                why: "a time is a finite number, not negative".into(),
            });
        }
        Some(Found::Ns(value * scale))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_number_and_its_unit_become_nanoseconds() {
        let t = TimeFrom::new(r"took ([0-9.e+-]+) ?(ns|us|µs|ms|s)?").unwrap();
        assert_eq!(t.find("took 12.5 ms\n", ""), Some(Found::Ns(12.5e6)));
        assert_eq!(t.find("took 3 µs", ""), Some(Found::Ns(3e3)));
        assert_eq!(t.find("took 3us", ""), Some(Found::Ns(3e3)));
        assert_eq!(t.find("took 7ns", ""), Some(Found::Ns(7.0)));
        assert_eq!(t.find("took 2", ""), Some(Found::Ns(2e9)));
        assert_eq!(t.find("took 1.5e-3 s", ""), Some(Found::Ns(1.5e6)));
        // Standard output first, then standard error.
        assert_eq!(t.find("took 1 s", "took 2 s"), Some(Found::Ns(1e9)));
        assert_eq!(t.find("nothing", "took 2 s"), Some(Found::Ns(2e9)));
        assert_eq!(t.find("nothing", ""), None);
    }

    #[test]
    fn matches_that_are_no_time_say_why() {
        let t = TimeFrom::new(r"took (\S+) (\S+)").unwrap();
        match t.find("took fast ms", "") {
            Some(Found::NotATime { why, .. }) => assert!(why.contains("not a number")),
            other => panic!("{other:?}"),
        }
        match t.find("took 3 hours", "") {
            Some(Found::NotATime { why, .. }) => assert!(why.contains("unknown unit `hours`")),
            other => panic!("{other:?}"),
        }
        match t.find("took 1e300 s", "") {
            Some(Found::NotATime { why, .. }) => assert!(why.contains("finite")),
            other => panic!("{other:?}"),
        }
        match t.find("took -3 s", "") {
            Some(Found::NotATime { why, .. }) => assert!(why.contains("not negative")),
            other => panic!("{other:?}"),
        }
        let t = TimeFrom::new(r"took (\d+)?x").unwrap();
        assert!(matches!(t.find("took x", ""), Some(Found::NotATime { .. })));
    }

    #[test]
    fn a_unit_outside_the_groups_is_found_with_its_fix() {
        let t = TimeFrom::new(r"([0-9.]+) ms").unwrap();
        // The number is taken as seconds ...
        assert_eq!(t.find("5 ms\n", ""), Some(Found::Ns(5e9)));
        // ... and the unit right after it is said, with the pattern that captures it.
        let w = t.unit_outside("5 ms\n", "").unwrap();
        assert_eq!((w.number.as_str(), w.unit.as_str()), ("5", "ms"));
        assert_eq!(w.fix.as_deref(), Some("([0-9.]+) (ms)"));
        let fixed = TimeFrom::new(w.fix.as_deref().unwrap()).unwrap();
        assert_eq!(fixed.find("5 ms\n", ""), Some(Found::Ns(5e6)));
        assert_eq!(fixed.unit_outside("5 ms\n", ""), None);
        assert!(
            w.to_string().contains("--time-from '([0-9.]+) (ms)'"),
            "{w}"
        );
        // A group that ends the pattern: the unit group is appended.
        let t = TimeFrom::new(r"took ([0-9.]+)").unwrap();
        let w = t.unit_outside("", "took 12us total").unwrap();
        assert_eq!(w.unit, "us");
        assert_eq!(w.fix.as_deref(), Some("took ([0-9.]+) ?(ns|us|µs|ms|s)"));
        // Seconds, no unit, a word that merely starts like one, a captured unit: nothing.
        for (pattern, out) in [
            (r"([0-9.]+)", "5 s"),
            (r"([0-9.]+)", "5 seconds"),
            (r"([0-9.]+)", "5\n"),
            (r"([0-9.]+)", "5 msgs"),
            (r"([0-9.]+) (ms)", "5 ms"),
        ] {
            let t = TimeFrom::new(pattern).unwrap();
            assert_eq!(t.unit_outside(out, ""), None, "{pattern} on {out:?}");
        }
    }

    #[test]
    fn bad_patterns_are_refused() {
        let e = TimeFrom::new("took (").unwrap_err();
        assert!(e.to_string().starts_with("--time-from `took (`:"), "{e}");
        let e = TimeFrom::new(r"took \d+").unwrap_err();
        assert!(e.to_string().contains("no group"), "{e}");
        assert!(e.hint().is_some());
    }
}

#[cfg(test)]
mod properties {
    use super::*;

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 256, rng_seed: proptest::test_runner::RngSeed::Fixed(6), ..Default::default() })]

        /// Any pattern and any output: a time, a reason, or no match; never a panic, and
        /// a time is finite and not negative.
        #[test]
        fn any_output_gives_a_time_or_a_reason(pattern in "[a-z() .?|+*0-9\\\\sdS]{0,14}", out in "[a-z0-9 .e+-µ\\n]{0,40}") {
            if let Ok(t) = TimeFrom::new(&pattern) {
                if let Some(Found::Ns(ns)) = t.find(&out, &out) {
                    proptest::prop_assert!(ns.is_finite() && ns >= 0.0);
                }
            }
        }
    }
}
