//! Diagnostic: what a pipeline's slower stage pays for handing its elements to a stage that
//! waits for them, for stages of the same time that differ in what they do and carry.
//!
//! `cargo run --release -p perfcompose-runtime --example wake_blocks -- X,... [REPS]`
//!
//! Per size `x`, `T` is the fastest of three streams of `inc` on `x`-element arrays; then
//! four stages `B` are timed alone and as `pipe(B, nop)`, all eight streams (about 20 ms
//! each, the stream driver of `validate`) alternating, `REPS` (default 15) repetitions:
//! `inc` on the registry's arrays; `spin(T)` on `u64` elements (the wake-up calibration's
//! stage); `spin(T)` on one-element `Vec`s; `spin(T)` on `x`-element `Vec`s. It prints the
//! fastest and median time per element of each stage and the extra of the pipeline
//! (`+fastest/median`). `ARRAY_X=N` gives the large `Vec`s `N` elements instead of `x`;
//! `SETTLE_MS=N` pauses `N` ms between building a `spin` stream and timing it. What it
//! found: docs/validation.md, "What a wake-up costs depends on the stream".

#[path = "common/args.rs"]
mod args;

use perfcompose_runtime::kernel::{Inputs, Registry};
use perfcompose_runtime::plan::stream_inputs;
use perfcompose_runtime::{block, pipe, Config, Program};
use std::time::Instant;

fn spin(ns: u64) {
    let t = Instant::now();
    while (t.elapsed().as_nanos() as u64) < ns {
        std::hint::spin_loop();
    }
}

fn min_med(v: &[f64]) -> (f64, f64) {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    (s[0], s[s.len() / 2])
}

/// `spin(t)` alone and as `pipe(spin(t), nop)` on elements of type `E`.
fn spins<E: Send + std::fmt::Debug + 'static>(t: u64) -> (Program<E, E>, Program<E, E>) {
    let stage = move || {
        block("spin", move |v: E| {
            spin(t);
            v
        })
    };
    let single = Program::with_config(stage(), Config::default()).expect("builds");
    let piped = Program::with_config(
        pipe(stage(), block("nop", std::hint::black_box::<E>)),
        Config::default(),
    )
    .expect("builds");
    (single, piped)
}

fn time<E: Send + std::fmt::Debug + 'static>(p: &Program<E, E>, stream: Vec<E>) -> f64 {
    let n = stream.len();
    // `SETTLE_MS`: a pause between building the stream and timing it.
    if let Some(ms) = std::env::var("SETTLE_MS").ok().and_then(|v| v.parse().ok()) {
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
    p.run_stream(stream).expect("runs").elapsed.as_nanos() as f64 / n as f64
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (sizes, reps) = args::list_and_reps::<usize>(&args, "wake_blocks X,... [REPS]");
    let reg = Registry::builtin();
    let inputs = Inputs::default();
    let plan = |t: &str| match perfcompose_runtime::validate::parse_plan("<term>", t) {
        Ok((_, p)) => p.build(&reg, Config::default()).expect("builds"),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let (inc, piped_inc) = (plan("inc"), plan("pipe(inc, nop)"));
    for &x in &sizes {
        let count = ((20_000_000.0 / (0.6 * x as f64)).ceil() as usize).clamp(16, 20_000);
        let arrays = || stream_inputs(&reg, "inc", x, count, &inputs, u128::MAX).expect("fits");
        let time_inc = |p: &perfcompose_runtime::plan::Built| {
            p.program
                .run_stream(arrays())
                .expect("runs")
                .elapsed
                .as_nanos() as f64
                / count as f64
        };
        time_inc(&inc);
        let t = (0..3).map(|_| time_inc(&inc)).fold(f64::INFINITY, f64::min) as u64;
        let n = (20_000_000 / t.max(1)).max(64) as usize;
        let (s_u64, p_u64) = spins::<u64>(t);
        let (s_one, p_one) = spins::<Vec<u64>>(t);
        let (s_arr, p_arr) = spins::<Vec<u64>>(t);
        // `ARRAY_X` overrides the length of the large `Vec`s.
        let len = std::env::var("ARRAY_X")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(x);
        let mut m = vec![Vec::new(); 8];
        for _ in 0..reps {
            m[0].push(time_inc(&inc));
            m[1].push(time_inc(&piped_inc));
            m[2].push(time(&s_u64, (0..n as u64).collect()));
            m[3].push(time(&p_u64, (0..n as u64).collect()));
            m[4].push(time(&s_one, (0..n as u64).map(|i| vec![i]).collect()));
            m[5].push(time(&p_one, (0..n as u64).map(|i| vec![i]).collect()));
            m[6].push(time(&s_arr, (0..n as u64).map(|i| vec![i; len]).collect()));
            m[7].push(time(&p_arr, (0..n as u64).map(|i| vec![i; len]).collect()));
        }
        let names = ["inc", "spin u64", "spin Vec[1]", "spin Vec[x]"];
        let cells: Vec<String> = names
            .iter()
            .enumerate()
            .map(|(i, name)| {
                let (a, b) = (min_med(&m[2 * i]), min_med(&m[2 * i + 1]));
                format!(
                    "{name} {:.0}/{:.0} +{:.0}/{:.0}",
                    a.0,
                    a.1,
                    b.0 - a.0,
                    b.1 - a.1
                )
            })
            .collect();
        println!("x={x} T={t} len={len} | {}", cells.join(" | "));
    }
}
