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
