//! SimGrid's unit suffixes for platform attributes.
//!
//! SimGrid reads `speed="1Gf"`, `bandwidth="125MBps"`, `latency="50us"` with fixed suffix
//! tables (`xbt_parse_units.cpp`): decimal prefixes `k M G T P E Z Y` (note the lower-case
//! `k`), binary prefixes `Ki Mi Gi ...` for sizes and bandwidths, bits (`b`, `bps`) worth an
//! eighth of a byte, and long forms for speeds (`kiloflops`, `megaflops`, ...). A bare
//! number takes the default unit (flop/s, byte/s, second). We accept exactly those tables so
//! that a file SimGrid reads means the same here, and reject anything else with the list of
//! valid suffixes.

/// Which quantity an attribute holds; selects the suffix table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quantity {
    /// flop/s (`f`, `kf`, `Mf`, `Gf`, ..., `flops`, `kiloflops`, ...).
    Speed,
    /// byte/s (`Bps`, `kBps`, `MBps`, `KiBps`, ..., `bps`, `kbps`, `Mbps`, `Kibps`, ...).
    Bandwidth,
    /// seconds (`w`, `d`, `h`, `m`, `s`, `ms`, `us`, `ns`, `ps`).
    Time,
    /// bytes (`B`, `kB`, `KiB`, ..., `b`, `kb`, `Kib`, ...).
    Size,
}

impl Quantity {
    fn name(self) -> &'static str {
        match self {
            Quantity::Speed => "speed",
            Quantity::Bandwidth => "bandwidth",
            Quantity::Time => "time",
            Quantity::Size => "size",
        }
    }

    fn valid_suffixes(self) -> &'static str {
        match self {
            Quantity::Speed => "f, kf, Mf, Gf, Tf, Pf, Ef, Zf, Yf, flops, kiloflops, megaflops, ...",
            Quantity::Bandwidth => {
                "Bps, kBps, MBps, GBps, TBps, KiBps, MiBps, GiBps, bps, kbps, Mbps, Gbps, Kibps, Mibps, ..."
            }
            Quantity::Time => "w, d, h, m, s, ms, us, ns, ps",
            Quantity::Size => "B, kB, MB, GB, KiB, MiB, GiB, b, kb, Mb, Kib, ...",
        }
    }
}

const DEC_ABBREV: [&str; 8] = ["k", "M", "G", "T", "P", "E", "Z", "Y"];
const BIN_ABBREV: [&str; 8] = ["Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "Zi", "Yi"];
const DEC_LONG: [&str; 8] = [
    "kilo", "mega", "giga", "tera", "peta", "exa", "zeta", "yotta",
];

/// Multiplier of `prefix` in `prefixes` (1000 or 1024 per step), or None.
fn prefix_scale(prefix: &str, prefixes: &[&str; 8], step: f64) -> Option<f64> {
    if prefix.is_empty() {
        return Some(1.0);
    }
    let mut value = 1.0;
    for p in prefixes {
        value *= step;
        if *p == prefix {
            return Some(value);
        }
    }
    None
}

/// The factor a suffix stands for, or None when the suffix is not in SimGrid's table.
fn suffix_scale(q: Quantity, suffix: &str) -> Option<f64> {
    // For each base unit, try decimal and binary abbreviated prefixes (and long forms for
    // speeds), exactly as `unit_scale` builds its map.
    let with_units = |units: &[(&str, f64, bool)]| -> Option<f64> {
        for &(unit, value, binary) in units {
            if let Some(prefix) = suffix.strip_suffix(unit) {
                if let Some(s) = prefix_scale(prefix, &DEC_ABBREV, 1000.0) {
                    return Some(value * s);
                }
                if binary {
                    if let Some(s) = prefix_scale(prefix, &BIN_ABBREV, 1024.0) {
                        return Some(value * s);
                    }
                }
            }
        }
        None
    };
    match q {
        Quantity::Speed => {
            if let Some(prefix) = suffix.strip_suffix("flops") {
                return prefix_scale(prefix, &DEC_LONG, 1000.0);
            }
            with_units(&[("f", 1.0, false)])
        }
        Quantity::Bandwidth => with_units(&[("Bps", 1.0, true), ("bps", 0.125, true)]),
        Quantity::Size => with_units(&[("B", 1.0, true), ("b", 0.125, true)]),
        Quantity::Time => match suffix {
            "w" => Some(7.0 * 24.0 * 3600.0),
            "d" => Some(24.0 * 3600.0),
            "h" => Some(3600.0),
            "m" => Some(60.0),
            "s" => Some(1.0),
            "ms" => Some(1e-3),
            "us" => Some(1e-6),
            "ns" => Some(1e-9),
            "ps" => Some(1e-12),
            _ => None,
        },
    }
}

/// Why a value with a unit did not parse; `offset` is the byte offset of the problem
/// inside the value text (0 for the number, the suffix start for a bad unit).
#[derive(Clone, Debug, PartialEq)]
pub struct UnitError {
    pub offset: usize,
    pub message: String,
    pub hint: Option<String>,
}

/// Parse `text` as a quantity with an optional SimGrid unit suffix.
///
/// ```
/// use perfcompose_sim::units::{parse_quantity, Quantity};
/// assert_eq!(parse_quantity("1Gf", Quantity::Speed).unwrap(), 1e9);
/// assert_eq!(parse_quantity("125MBps", Quantity::Bandwidth).unwrap(), 125e6);
/// assert_eq!(parse_quantity("1Gbps", Quantity::Bandwidth).unwrap(), 125e6);
/// assert!((parse_quantity("50us", Quantity::Time).unwrap() - 50e-6).abs() < 1e-18);
/// ```
pub fn parse_quantity(text: &str, q: Quantity) -> Result<f64, UnitError> {
    let t = text.trim();
    let lead = text.len() - text.trim_start().len();
    // Longest prefix that parses as a number (like strtod).
    let bytes = t.as_bytes();
    let mut end = 0;
    let mut i = 0;
    if i < bytes.len() && (bytes[i] == b'+' || bytes[i] == b'-') {
        i += 1;
    }
    let digits_start = i;
    while i < bytes.len() && bytes[i].is_ascii_digit() {
        i += 1;
    }
    if i < bytes.len() && bytes[i] == b'.' {
        i += 1;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
    }
    if i > digits_start && !(i == digits_start + 1 && bytes[digits_start] == b'.') {
        end = i;
        // exponent, only if followed by digits
        if i < bytes.len() && (bytes[i] == b'e' || bytes[i] == b'E') {
            let mut j = i + 1;
            if j < bytes.len() && (bytes[j] == b'+' || bytes[j] == b'-') {
                j += 1;
            }
            let ds = j;
            while j < bytes.len() && bytes[j].is_ascii_digit() {
                j += 1;
            }
            if j > ds {
                end = j;
            }
        }
    }
    if end == 0 {
        return Err(UnitError {
            offset: lead,
            message: format!("cannot parse {} '{}' as a number", q.name(), text),
            hint: Some(format!("write a number with a unit, e.g. {}", example(q))),
        });
    }
    let value: f64 = t[..end].parse().map_err(|_| UnitError {
        offset: lead,
        message: format!("cannot parse {} '{}' as a number", q.name(), text),
        hint: None,
    })?;
    if !value.is_finite() {
        return Err(UnitError {
            offset: lead,
            message: format!("{} '{}' is out of range", q.name(), text),
            hint: None,
        });
    }
    let suffix = &t[end..];
    if suffix.is_empty() {
        return Ok(value);
    }
    match suffix_scale(q, suffix) {
        Some(s) if (value * s).is_finite() => Ok(value * s),
        Some(_) => Err(UnitError {
            offset: lead,
            message: format!("{} '{}' is out of range", q.name(), text),
            hint: None,
        }),
        None => Err(UnitError {
            offset: lead + end,
            message: format!("unknown {} unit '{}'", q.name(), suffix),
            hint: Some(format!("valid units: {}", q.valid_suffixes())),
        }),
    }
}

fn example(q: Quantity) -> &'static str {
    match q {
        Quantity::Speed => "1Gf",
        Quantity::Bandwidth => "125MBps",
        Quantity::Time => "50us",
        Quantity::Size => "4KiB",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const REL: f64 = 1e-12;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= REL * b.abs().max(1e-300)
    }

    #[test]
    fn speeds() {
        assert!(close(parse_quantity("1f", Quantity::Speed).unwrap(), 1.0));
        assert!(close(parse_quantity("2kf", Quantity::Speed).unwrap(), 2e3));
        assert!(close(
            parse_quantity("1.5Gf", Quantity::Speed).unwrap(),
            1.5e9
        ));
        assert!(close(
            parse_quantity("3megaflops", Quantity::Speed).unwrap(),
            3e6
        ));
        assert!(close(parse_quantity("1e9", Quantity::Speed).unwrap(), 1e9));
        assert!(parse_quantity("1Kf", Quantity::Speed).is_err());
        assert!(parse_quantity("1Gif", Quantity::Speed).is_err());
    }

    #[test]
    fn bandwidths() {
        assert!(close(
            parse_quantity("1Bps", Quantity::Bandwidth).unwrap(),
            1.0
        ));
        assert!(close(
            parse_quantity("1kBps", Quantity::Bandwidth).unwrap(),
            1e3
        ));
        assert!(close(
            parse_quantity("125MBps", Quantity::Bandwidth).unwrap(),
            125e6
        ));
        assert!(close(
            parse_quantity("1GBps", Quantity::Bandwidth).unwrap(),
            1e9
        ));
        assert!(close(
            parse_quantity("1KiBps", Quantity::Bandwidth).unwrap(),
            1024.0
        ));
        assert!(close(
            parse_quantity("1MiBps", Quantity::Bandwidth).unwrap(),
            1048576.0
        ));
        assert!(close(
            parse_quantity("8bps", Quantity::Bandwidth).unwrap(),
            1.0
        ));
        assert!(close(
            parse_quantity("1Gbps", Quantity::Bandwidth).unwrap(),
            125e6
        ));
        assert!(close(
            parse_quantity("10Mbps", Quantity::Bandwidth).unwrap(),
            1.25e6
        ));
        assert!(close(
            parse_quantity("1Kibps", Quantity::Bandwidth).unwrap(),
            128.0
        ));
        let e = parse_quantity("1KBps", Quantity::Bandwidth).unwrap_err();
        assert_eq!(e.offset, 1);
        assert!(e.message.contains("unknown bandwidth unit 'KBps'"));
    }

    #[test]
    fn times() {
        assert!(close(
            parse_quantity("50us", Quantity::Time).unwrap(),
            50e-6
        ));
        assert!(close(parse_quantity("1ms", Quantity::Time).unwrap(), 1e-3));
        assert!(close(parse_quantity("2ns", Quantity::Time).unwrap(), 2e-9));
        assert!(close(parse_quantity("0", Quantity::Time).unwrap(), 0.0));
        assert!(close(parse_quantity("1m", Quantity::Time).unwrap(), 60.0));
        assert!(parse_quantity("1sec", Quantity::Time).is_err());
        assert!(parse_quantity("", Quantity::Time).is_err());
        assert!(parse_quantity("us", Quantity::Time).is_err());
    }

    #[test]
    fn sizes() {
        assert!(close(
            parse_quantity("4KiB", Quantity::Size).unwrap(),
            4096.0
        ));
        assert!(close(
            parse_quantity("1kB", Quantity::Size).unwrap(),
            1000.0
        ));
        assert!(close(parse_quantity("8b", Quantity::Size).unwrap(), 1.0));
    }

    #[test]
    fn values_out_of_range_once_scaled_are_an_error() {
        // An infinite latency used to be read, and a transfer over it simulated as taking
        // no time at all.
        for (text, q) in [
            ("1e308w", Quantity::Time),
            ("1e308Yf", Quantity::Speed),
            ("1e300YiBps", Quantity::Bandwidth),
            ("2e306kB", Quantity::Size),
        ] {
            let e = parse_quantity(text, q).unwrap_err();
            assert!(e.message.contains("out of range"), "{text}: {}", e.message);
            assert_eq!(e.offset, 0);
        }
        assert!(close(
            parse_quantity("1e300kf", Quantity::Speed).unwrap(),
            1e303
        ));
    }

    proptest::proptest! {
        #[test]
        fn never_panics(s in "\\PC{0,12}") {
            for q in [Quantity::Speed, Quantity::Bandwidth, Quantity::Time, Quantity::Size] {
                let _ = parse_quantity(&s, q);
            }
        }
    }
}
