//! Numbers as text, and exact rational exponents.
//!
//! How a number is written (the shortest text that reads back to the same `f64`, or
//! rounded to significant digits for people), how a rational exponent is written (`3/2`),
//! and which exact rational a decimal literal or a constant exponent stands for. The
//! parser, the printer and the expression constructors share these; this module uses
//! none of them.

/// Exact rational exponents.
pub type Q = num_rational::Ratio<i64>;

/// Largest numerator or denominator accepted in an exponent.
pub const MAX_EXPONENT_PART: i64 = 1_000_000;

/// Shortest text that parses back to exactly `v`; exponent notation outside
/// `[1e-5, 1e16)`.
pub fn format_number(v: f64) -> String {
    if v == 0.0 {
        return "0".to_string();
    }
    let a = v.abs();
    if !(1e-5..1e16).contains(&a) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// `v` rounded to `digits` significant digits, without trailing zeros.
pub fn format_significant(v: f64, digits: usize) -> String {
    if v == 0.0 || !v.is_finite() {
        return format_number(v);
    }
    let digits = digits.max(1);
    let a = v.abs();
    if !(1e-4..1e15).contains(&a) {
        let s = format!("{:.*e}", digits - 1, v);
        // Trim zeros in the mantissa: 1.2000e7 -> 1.2e7.
        if let Some((mant, exp)) = s.split_once('e') {
            let mant = if mant.contains('.') {
                mant.trim_end_matches('0').trim_end_matches('.')
            } else {
                mant
            };
            return format!("{mant}e{exp}");
        }
        return s;
    }
    let magnitude = a.log10().floor() as i32;
    let decimals = (digits as i32 - 1 - magnitude).max(0) as usize;
    let s = format!("{:.*}", decimals, v);
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// `3/2`, `-1`, `2`.
pub fn format_q(q: Q) -> String {
    if q.is_integer() {
        q.to_integer().to_string()
    } else {
        format!("{}/{}", q.numer(), q.denom())
    }
}

/// Exact rational value of a decimal literal (`0.25` → 1/4, `1e3` → 1000, `2222.2` →
/// 11111/5), or `None` when it has more than 15 significant digits or does not fit.
pub(crate) fn decimal_text_to_q(text: &str) -> Option<Q> {
    let text = text.to_ascii_lowercase();
    let (mant, exp) = match text.split_once('e') {
        Some((m, e)) => (m.to_string(), e.parse::<i32>().ok()?),
        None => (text.clone(), 0),
    };
    let (sign, mant) = match mant.strip_prefix('-') {
        Some(rest) => (-1, rest.to_string()),
        None => (1, mant),
    };
    let (int_part, frac_part) = mant.split_once('.').unwrap_or((&mant, ""));
    if !int_part
        .bytes()
        .chain(frac_part.bytes())
        .all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let digits = format!("{int_part}{frac_part}");
    let digits = digits.trim_start_matches('0');
    let scale = exp.checked_sub(i32::try_from(frac_part.len()).ok()?)?;
    if digits.len() > 15 || scale.abs() > 15 {
        return None;
    }
    let n: i64 = if digits.is_empty() {
        0
    } else {
        digits.parse().ok()?
    };
    let p = 10i64.pow(scale.unsigned_abs());
    let q = if scale >= 0 {
        Q::from_integer(n.checked_mul(p)?)
    } else {
        Q::new(n, p)
    };
    Some(q * Q::from_integer(sign))
}

/// The exact rational a constant exponent stands for, when its shortest decimal form
/// is exact and within the exponent limits (so `x^2222.2` is `x^(11111/5)` however it
/// was written).
pub(crate) fn exponent_as_q(k: f64) -> Option<Q> {
    if !k.is_finite() {
        return None;
    }
    let q = decimal_text_to_q(&format_number(k))?;
    (q.numer().unsigned_abs() <= MAX_EXPONENT_PART as u64 && *q.denom() <= MAX_EXPONENT_PART)
        .then_some(q)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_print_shortest_and_round_trip() {
        for v in [
            1034.17, 1.241e7, 0.125, 5422.97, 1e-7, 3.0e20, -2.5, 258.5425,
        ] {
            let s = format_number(v);
            assert_eq!(s.parse::<f64>().unwrap(), v, "{s}");
        }
        assert_eq!(format_number(1.241e7), "12410000");
        assert_eq!(format_number(1e-7), "1e-7");
    }

    #[test]
    fn significant_digits() {
        assert_eq!(format_significant(1034.17 / 3.0, 6), "344.723");
        assert_eq!(format_significant(2.186e7, 4), "21860000");
        assert_eq!(format_significant(1.0e-6, 3), "1e-6");
    }
}
