//! Units of time.
//!
//! Every time perfcompose composes is in one internal unit, [`TimeUnit::INTERNAL`]
//! (nanoseconds, the unit of every block model `measure`, `bench` and `fit` produce).
//! Files that give times in another unit say so (`unit = "s"` in a components file or a
//! `[machine]` table), and their values are converted as they are read, so that a model
//! in seconds and one in nanoseconds are never added as they stand.
//!
//! ```
//! use perfcompose_core::units::TimeUnit;
//! let us: TimeUnit = "us".parse().unwrap();
//! assert_eq!(us.to_internal(2.5), 2500.0);
//! assert_eq!(TimeUnit::S.name(), "s");
//! ```

use std::fmt;
use std::str::FromStr;

/// A unit of time a file may state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TimeUnit {
    /// Seconds.
    S,
    /// Milliseconds.
    Ms,
    /// Microseconds (`us` or `µs`).
    Us,
    /// Nanoseconds.
    Ns,
}

/// A unit name that is not one of `s`, `ms`, `us` (`µs`), `ns`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a unit of time (s, ms, us or ns)")]
pub struct UnknownUnit(pub String);

impl TimeUnit {
    /// The unit every composed model is in: nanoseconds.
    pub const INTERNAL: TimeUnit = TimeUnit::Ns;

    /// Every unit, largest first.
    pub const ALL: [TimeUnit; 4] = [TimeUnit::S, TimeUnit::Ms, TimeUnit::Us, TimeUnit::Ns];

    /// How it is written in files: `s`, `ms`, `us`, `ns`.
    pub fn name(self) -> &'static str {
        match self {
            TimeUnit::S => "s",
            TimeUnit::Ms => "ms",
            TimeUnit::Us => "us",
            TimeUnit::Ns => "ns",
        }
    }

    /// Nanoseconds in one of this unit.
    pub fn nanoseconds(self) -> f64 {
        match self {
            TimeUnit::S => 1e9,
            TimeUnit::Ms => 1e6,
            TimeUnit::Us => 1e3,
            TimeUnit::Ns => 1.0,
        }
    }

    /// `value` of this unit in the internal unit (nanoseconds).
    pub fn to_internal(self, value: f64) -> f64 {
        value * self.nanoseconds()
    }

    /// `ns` nanoseconds in this unit.
    pub fn from_internal(self, ns: f64) -> f64 {
        ns / self.nanoseconds()
    }
}

impl FromStr for TimeUnit {
    type Err = UnknownUnit;

    fn from_str(s: &str) -> Result<TimeUnit, UnknownUnit> {
        match s {
            "s" => Ok(TimeUnit::S),
            "ms" => Ok(TimeUnit::Ms),
            "us" | "µs" | "μs" => Ok(TimeUnit::Us),
            "ns" => Ok(TimeUnit::Ns),
            other => Err(UnknownUnit(other.to_string())),
        }
    }
}

impl fmt::Display for TimeUnit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back_and_convert_to_nanoseconds() {
        for u in TimeUnit::ALL {
            assert_eq!(u.name().parse::<TimeUnit>(), Ok(u));
            assert_eq!(u.from_internal(u.to_internal(3.0)), 3.0);
        }
        assert_eq!("µs".parse::<TimeUnit>(), Ok(TimeUnit::Us));
        assert_eq!(TimeUnit::S.to_internal(2.8e-6), 2.8e-6 * 1e9);
        assert_eq!(TimeUnit::Ms.to_internal(1.0), 1e6);
        let e = "sec".parse::<TimeUnit>().unwrap_err();
        assert_eq!(
            e.to_string(),
            "`sec` is not a unit of time (s, ms, us or ns)"
        );
    }
}
