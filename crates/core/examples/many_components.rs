//! Writes a components file of many random models (the loading benchmark's input).
//!
//! ```sh
//! cargo run --release -p perfcompose-core --example many_components -- 10000 > many.toml
//! perfcompose predict --components many.toml 'seq(b1, b2)' --at x=1000
//! ```
//!
//! The optional second argument is the seed (default 1).

#[path = "../benches/support/many_components.rs"]
mod many;

fn main() {
    let mut args = std::env::args().skip(1);
    let count = args
        .next()
        .map_or(10_000, |a| a.parse().expect("a count of models"));
    let seed = args
        .next()
        .map_or(1, |a| a.parse().expect("a seed (an integer)"));
    print!("{}", many::many_components(count, seed));
}
