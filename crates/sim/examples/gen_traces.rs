//! Generate a synthetic replay case (platform, hostfile, per-rank traces and index).
//!
//! `cargo run --release -p perfcompose-sim --example gen_traces -- SPEC OUTDIR`, where SPEC
//! is e.g. `ring:64:100:1e6` (see `perfcompose_sim::gen::Scenario::describe`). Prints the
//! generated paths and the action count as one JSON object.

use perfcompose_sim::gen::Scenario;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() != 2 {
        eprintln!(
            "usage: gen_traces SPEC OUTDIR\nSPEC: {}",
            Scenario::describe()
        );
        std::process::exit(2);
    }
    let scenario = match Scenario::parse(&args[0]) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    match scenario.write(std::path::Path::new(&args[1])) {
        Ok(g) => println!(
            "{{\"platform\": {:?}, \"hostfile\": {:?}, \"index\": {:?}, \"ranks\": {}, \"actions\": {}}}",
            g.platform.display().to_string(),
            g.hostfile.display().to_string(),
            g.index.display().to_string(),
            g.ranks,
            g.actions
        ),
        Err(e) => {
            eprintln!("error: cannot write {}: {e}", args[1]);
            std::process::exit(2);
        }
    }
}
