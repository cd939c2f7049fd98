//! Durations given on the command line in seconds (`--time-limit`, `--budget`), parsed by
//! clap into a [`Duration`]: a number no `Duration` holds, or one no deadline can be set
//! at, is a flag error with the flag's name, never a panic later on.

use std::time::Duration;

/// The longest duration a flag accepts: a year, in seconds. Longer limits are no limit
/// in practice, and a deadline that far ahead still fits every clock.
pub const MAX_SECONDS: f64 = 365.0 * 24.0 * 3600.0;

/// Why a number of seconds is refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SecondsError {
    #[error("`{text}` is not a number of seconds")]
    NotANumber {
        text: String,
        #[source]
        source: std::num::ParseFloatError,
    },
    #[error("give a positive number of seconds, not {text}")]
    NotPositive { text: String, seconds: f64 },
    #[error("{text} s is longer than a year ({MAX_SECONDS} s), the most this accepts")]
    TooLong { text: String, seconds: f64 },
}

/// A positive, finite number of seconds of at most [`MAX_SECONDS`] (clap value parser).
pub fn seconds(text: &str) -> Result<Duration, SecondsError> {
    let seconds: f64 = text
        .trim()
        .parse()
        .map_err(|source| SecondsError::NotANumber {
            text: text.to_string(),
            source,
        })?;
    if seconds.is_nan() || seconds <= 0.0 {
        return Err(SecondsError::NotPositive {
            text: text.trim().to_string(),
            seconds,
        });
    }
    if seconds > MAX_SECONDS {
        return Err(SecondsError::TooLong {
            text: text.trim().to_string(),
            seconds,
        });
    }
    Ok(Duration::from_secs_f64(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_no_duration_holds_are_refused() {
        assert_eq!(seconds("600"), Ok(Duration::from_secs(600)));
        assert_eq!(seconds("0.25"), Ok(Duration::from_millis(250)));
        assert_eq!(seconds("31536000"), Ok(Duration::from_secs(31_536_000)));
        for (text, want) in [
            (
                "1e20",
                "1e20 s is longer than a year (31536000 s), the most this accepts",
            ),
            (
                "1e19",
                "1e19 s is longer than a year (31536000 s), the most this accepts",
            ),
            (
                "inf",
                "inf s is longer than a year (31536000 s), the most this accepts",
            ),
            ("0", "give a positive number of seconds, not 0"),
            ("-3", "give a positive number of seconds, not -3"),
            ("NaN", "give a positive number of seconds, not NaN"),
            ("ten", "`ten` is not a number of seconds"),
        ] {
            assert_eq!(seconds(text).unwrap_err().to_string(), want, "{text}");
        }
    }
}
