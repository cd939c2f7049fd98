//! Diagnostic: how steady a design's time per element is under the stream driver, and how
//! much of the time its threads waited for a core.
//!
//! `cargo run --release -p perfcompose-runtime --example collector_wakeups -- TERM X,... [stream|feeder]`
//!
//! Per size it runs eleven streams of about 20 ms of `inc`-sized arrays through `TERM`
//! (`Program::run_stream`, or with `feeder` `Program::run_measured`, whose collector
//! blocks on every element) and prints min / median / max ns per element, then every
//! repetition with the run-queue wait of this process's threads during it
//! (`/proc/self/task/*/schedstat`: time ready to run while another thread had the core).
//! `PIN=1` pins the workers. On a machine with as many cores as the design has threads,
//! a collector that wakes often takes a core from the design: this is how that was found
//! (docs/runtime.md, "The collector's wake-ups").

use perfcompose_runtime::kernel::{Inputs, Registry};
use perfcompose_runtime::plan::stream_inputs;
use perfcompose_runtime::Config;

#[path = "common/schedstat.rs"]
mod schedstat;
use schedstat::rq_wait_ns;

const REPS: usize = 11;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: collector_wakeups TERM X,... [stream|feeder]");
        std::process::exit(2);
    }
    let term = &args[1];
    let sizes: Vec<usize> = match args[2].split(',').map(str::parse).collect() {
        Ok(v) => v,
        Err(e) => {
            eprintln!("sizes {:?}: {e}", args[2]);
            std::process::exit(2);
        }
    };
    let feeder = args.get(3).is_some_and(|m| m == "feeder");
    let reg = Registry::builtin();
    let plan = match perfcompose_runtime::validate::parse_plan("<term>", term) {
        Ok((_, plan)) => plan,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let inputs = Inputs::default();
    for &x in &sizes {
        let config = Config {
            pin: std::env::var_os("PIN").is_some(),
            ..Config::default()
        };
        let built = plan.build(&reg, config).expect("the design builds");
        // About 20 ms per stream at inc's 0.6 ns per array element.
        let count = ((20_000_000.0 / (0.6 * x as f64)).ceil() as usize).clamp(16, 20_000);
        let mut runs = Vec::new();
        for _ in 0..REPS {
            let stream =
                stream_inputs(&reg, "inc", x, count, &inputs, u128::MAX).expect("inputs fit");
            let w0 = rq_wait_ns();
            let elapsed = if feeder {
                built.program.run_measured(stream).expect("runs").elapsed
            } else {
                built.program.run_stream(stream).expect("runs").elapsed
            };
            let ns = elapsed.as_nanos() as f64;
            runs.push((ns / count as f64, (rq_wait_ns() - w0) as f64 / ns));
        }
        let mut sorted: Vec<f64> = runs.iter().map(|r| r.0).collect();
        sorted.sort_by(f64::total_cmp);
        println!(
            "{term} x={x}: min {:.0} median {:.0} max {:.0} ns | {}",
            sorted[0],
            sorted[REPS / 2],
            sorted[REPS - 1],
            runs.iter()
                .map(|r| format!("{:.0} ({:.0}%)", r.0, 100.0 * r.1))
                .collect::<Vec<_>>()
                .join(" ")
        );
    }
}
