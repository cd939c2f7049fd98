//! Loading a large components file: 10,000 models (random sums of 2–5 PMNF terms, model
//! strings of up to 200 characters, about 840 kB), then one prediction from two of them.
//!
//! ```sh
//! cargo bench -p perfcompose-core --bench components
//! ```
//!
//! `load_and_predict` is what `perfcompose predict --components many.toml 'seq(b1, b2)'
//! --at x=1000` does with the file (`examples/many_components.rs` writes it). Results
//! and the machine are in `docs/composition.md`.

use std::path::Path;

use divan::{black_box, Bencher};
use perfcompose_core::components::{Components, LoadOptions};
use perfcompose_core::compose::grid::{parse_at, Grid};
use perfcompose_core::compose::predict::predict;
use perfcompose_core::compose::ComposeOptions;
use perfcompose_core::term::parse_term;

#[path = "support/many_components.rs"]
mod many;

/// Number of models in the file.
const MODELS: usize = 10_000;

fn main() {
    divan::main();
}

/// Parse the file (TOML, every model string) into components.
#[divan::bench(sample_count = 10)]
fn load(bencher: Bencher) {
    let text = many::many_components(MODELS, 1);
    bencher.bench(|| {
        Components::parse(
            "many.toml",
            black_box(&text),
            Path::new("."),
            LoadOptions::default(),
        )
        .unwrap()
    });
}

/// Load the file and predict `seq(b1, b2)` at x = 1000.
#[divan::bench(sample_count = 10)]
fn load_and_predict(bencher: Bencher) {
    let text = many::many_components(MODELS, 1);
    let grid = Grid::new(vec![parse_at("x=1000").unwrap()]).unwrap();
    bencher.bench(|| {
        let c = Components::parse(
            "many.toml",
            black_box(&text),
            Path::new("."),
            LoadOptions::default(),
        )
        .unwrap();
        let t = parse_term("<term>", "seq(b1, b2)").unwrap();
        predict(&t, &c, ComposeOptions::default(), &grid).unwrap()
    });
}
