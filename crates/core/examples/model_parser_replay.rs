//! Runs the `model_parser` fuzz target's body (parse, print and parse again, evaluate,
//! leading term, Extra-P form) on every file of a directory, outside libFuzzer: for
//! profiling the parser on a corpus the fuzzer kept, and to find its slowest inputs.
//!
//! ```sh
//! cargo run --release -p perfcompose-core --example model_parser_replay -- CORPUS
//! ```
use perfcompose_core::model::parse_model;
use std::time::Instant;

fn body(src: &str) {
    match parse_model(src) {
        Ok(e) => {
            let _ = parse_model(&e.to_string());
            let _ = e.eval_at(&[("x", 1024.0), ("p", 8.0), ("n", 4.0), ("m", 2.0)]);
            let _ = e.leading();
            let _ = e.extrap();
        }
        Err(d) => {
            let _ = d.render();
        }
    }
}

fn main() {
    let dir = std::env::args().nth(1).expect("a directory of inputs");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let mut times = vec![];
    let t0 = Instant::now();
    for f in &files {
        let data = std::fs::read(f).unwrap();
        let Ok(src) = std::str::from_utf8(&data) else {
            continue;
        };
        let t = Instant::now();
        body(src);
        times.push((t.elapsed().as_secs_f64(), f.clone()));
    }
    let total = t0.elapsed().as_secs_f64();
    times.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap());
    println!(
        "{} inputs in {:.3} s ({:.0}/s)",
        times.len(),
        total,
        times.len() as f64 / total
    );
    for (t, f) in times.iter().take(15) {
        println!("{:.6} {}", t, f.display());
    }
}
