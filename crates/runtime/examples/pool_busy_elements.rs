//! Diagnostic: what busy workers of a task pool lose per element, on the elements the
//! calibration uses and on elements like a design's.
//!
//! `perfcompose bench --overhead` calibrates the busy pool (`overhead::calibrate_pool_busy`)
//! as `tpool(2, spin(T)) − spin(T) / 2` on streams of `u64`s. A design's stream carries
//! arrays (`inc` at x = 1,024: 4 KiB each), and the wake-up calibration paid up to twice
//! as much on `u64`s as on arrays (docs/validation.md, "What a wake-up costs depends on
//! the stream"). This times the same spin block, pinned, under the stream driver,
//! alternating, on three kinds of element: `u64`s; `Vec<u64>` of `T · 10 / 8` values
//! (the wake-up calibration's arrays, `overhead::WAKE_BYTES_PER_NS`); and the term-driven
//! path's `Data` arrays of `inc` at `X` ints (fresh copies, caches evicted, as `validate`
//! makes them). Printed per kind and `T`: the median ns per element of `spin(T)` and of
//! `tpool(2, spin(T))`, and the pool's extra, `pool − alone / 2`.
//!
//! `cargo run --release -p perfcompose-runtime --example pool_busy_elements -- [X [REPS]]`
//! Exits with status 2 on bad arguments.

use std::time::Instant;

use perfcompose_core::measure::median;
use perfcompose_runtime::kernel::{Inputs, Registry};
use perfcompose_runtime::plan::stream_inputs;
use perfcompose_runtime::{block, tpool, Config, Data, Pattern, Program};

/// Busy for `ns` of wall-clock time without touching memory.
fn spin(ns: u64) {
    let t = Instant::now();
    while (t.elapsed().as_nanos() as u64) < ns {
        std::hint::spin_loop();
    }
}

fn spin_block<E: Send + 'static>(ns: u64) -> Pattern<E, E> {
    block(format!("spin{ns}"), move |v: E| {
        spin(ns);
        v
    })
}

/// Median ns per element of `spin(T)` alone and in `tpool(2, ·)`, alternating, each run
/// on a fresh stream from `stream`.
fn alone_and_pool<E: Send + std::fmt::Debug + 'static>(
    ns: u64,
    reps: usize,
    stream: impl Fn() -> Vec<E>,
) -> (f64, f64) {
    let config = Config {
        pin: true,
        ..Config::default()
    };
    let alone = Program::with_config(spin_block::<E>(ns), config.clone()).unwrap();
    let pool = Program::with_config(tpool(2, spin_block::<E>(ns)), config).unwrap();
    let time = |p: &Program<E, E>| {
        let s = stream();
        let n = s.len().max(1) as f64;
        perfcompose_runtime::bench::evict_caches();
        p.run_stream(s).unwrap().elapsed.as_nanos() as f64 / n
    };
    time(&alone);
    time(&pool);
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..reps {
        a.push(time(&alone));
        b.push(time(&pool));
    }
    (median(&a), median(&b))
}

/// Bytes a stream of arrays may take (`stream_inputs` refuses more).
const MEMORY_LIMIT: u128 = 8 << 30;

/// Print `message` and exit with status 2 (bad arguments).
fn fail(message: &str) -> ! {
    eprintln!("pool_busy_elements: {message}");
    std::process::exit(2)
}

/// Argument `i` as a positive integer, `default` when absent.
fn positive(args: &[String], i: usize, what: &str, default: usize) -> usize {
    match args.get(i) {
        None => default,
        Some(a) => match a.parse::<usize>() {
            Ok(v) if v > 0 => v,
            _ => fail(&format!("argument {i} ({what}) {a:?}: a positive integer")),
        },
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() > 3 {
        fail("usage: pool_busy_elements [X [REPS]]");
    }
    let x = positive(&args, 1, "X, ints per array", 1024);
    let reps = positive(&args, 2, "REPS, repetitions", 7);
    let registry = Registry::builtin();
    let inputs = Inputs::default();
    // Check the arrays can be made before timing anything.
    if let Err(e) = stream_inputs(&registry, "inc", x, 1, &inputs, MEMORY_LIMIT) {
        fail(&format!("arrays of `inc` at x = {x}: {e}"));
    }
    println!(
        "tpool(2, spin(T)) against spin(T), pinned, stream driver, {reps} alternating runs of about 20 ms each"
    );
    println!(
        "elements | T [ns] | alone [ns/elem] | tpool(2) [ns/elem] | extra = pool - alone/2 [ns]"
    );
    for &ns in &[1_000u64, 2_000, 4_000] {
        let count = (20_000_000 / ns as usize).max(64);
        let len = (ns * 10 / 8) as usize;
        let rows: [(String, (f64, f64)); 3] = [
            (
                "u64".into(),
                alone_and_pool(ns, reps, || (0..count as u64).collect::<Vec<u64>>()),
            ),
            (
                format!("Vec<u64> of {len}"),
                alone_and_pool(ns, reps, || {
                    (0..count as u64)
                        .map(|i| vec![i; len])
                        .collect::<Vec<Vec<u64>>>()
                }),
            ),
            (
                format!("Data, inc x={x}"),
                alone_and_pool(ns, reps, || -> Vec<Data> {
                    stream_inputs(&registry, "inc", x, count, &inputs, MEMORY_LIMIT)
                        .unwrap_or_else(|e| fail(&format!("a stream of `inc` at x = {x}: {e}")))
                }),
            ),
        ];
        for (kind, (alone, pool)) in rows {
            println!(
                "{kind:>20} | {ns:>6} | {alone:>15.0} | {pool:>18.0} | {:>8.0}",
                pool - alone / 2.0
            );
        }
    }
}
