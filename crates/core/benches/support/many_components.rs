//! A large components file for the loading benchmark: `count` components `b1`, `b2`,
//! ... whose models are random sums of 2–5 PMNF terms in `x` (Extra-P's exponents
//! `i ∈ {0, 1/4, …, 3}`, `j ∈ {0, 1, 2}`), each model string at most
//! [`MAX_MODEL_CHARS`] characters. The same seed gives the same file; 10,000 models
//! make about 870 kB.
//!
//! Shared by `benches/components.rs` and `examples/many_components.rs` (which writes
//! the file for `perfcompose predict --components`).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Longest model string written.
pub const MAX_MODEL_CHARS: usize = 200;

/// Extra-P's polynomial exponents, as they print.
const EXPONENTS: [&str; 13] = [
    "1/4", "1/3", "1/2", "2/3", "3/4", "1", "5/4", "4/3", "3/2", "5/3", "7/4", "2", "3",
];

/// The text of a components file of `count` random models.
pub fn many_components(count: usize, seed: u64) -> String {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = String::with_capacity(count * 90);
    out.push_str("# Generated: random sums of 2-5 PMNF terms in x.\n");
    for i in 1..=count {
        let model = random_model(&mut rng);
        out.push_str(&format!("[components.b{i}]\nmodel = \"{model}\"\n"));
    }
    out
}

/// One random model of 2–5 terms, at most [`MAX_MODEL_CHARS`] characters.
fn random_model(rng: &mut ChaCha8Rng) -> String {
    let terms = rng.gen_range(2..=4);
    let mut text = String::new();
    for k in 0..terms {
        let term = random_term(rng, k == 0);
        let candidate = if text.is_empty() {
            term
        } else {
            format!("{text} + {term}")
        };
        if candidate.len() > MAX_MODEL_CHARS {
            break;
        }
        text = candidate;
    }
    text
}

/// A coefficient of 2–4 significant digits, alone (a constant, only as the first term)
/// or times `x^(i)` (half of the terms), `log2(x)^(j)` or both.
fn random_term(rng: &mut ChaCha8Rng, may_be_constant: bool) -> String {
    let digits: i32 = rng.gen_range(2..=4);
    let c = 10f64.powf(rng.gen_range(-2.0..4.0));
    let decimals = (digits - 1 - c.log10().floor() as i32).max(0) as usize;
    let c = format!("{c:.decimals$}");
    let c = if c.contains('.') {
        c.trim_end_matches('0').trim_end_matches('.')
    } else {
        &c
    };
    if may_be_constant && rng.gen_bool(0.5) {
        return c.to_string();
    }
    let exp = EXPONENTS[rng.gen_range(0..EXPONENTS.len())];
    match rng.gen_range(0..4) {
        0 | 1 => format!("{c} * x^({exp})"),
        2 => format!("{c} * log2(x)^({})", rng.gen_range(1..=2)),
        _ => format!("{c} * x^({exp}) * log2(x)^({})", rng.gen_range(1..=2)),
    }
}
