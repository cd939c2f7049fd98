//! `perfcompose calibrate`: measure what this machine adds to a design's building blocks,
//! as a job of its own: `overhead` times the pattern runtime's own cost and stores it for
//! `validate` and `predict --overhead`; `network` (under `mpirun`, builds with the `mpi`
//! feature) measures the message-passing costs between processes.

pub mod network;
pub mod overhead;

/// Flags of `perfcompose calibrate`.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    pub what: What,
}

/// What to calibrate.
#[derive(clap::Subcommand, Debug)]
pub enum What {
    /// The per-element overhead of the patterns (nop through seq, pipe, tpool, MapReduce)
    /// next to a hand-written crossbeam-channel baseline, stored for this machine.
    #[command(after_help = "Examples:
  perfcompose calibrate overhead             measure and store for this machine (a few minutes)
  perfcompose calibrate overhead -o cal.json --elements 2000 --reps 2   a quick one, into cal.json
  perfcompose calibrate overhead --no-save --json")]
    Overhead(overhead::OverheadArgs),
    /// The network between MPI processes (run under `mpirun -np 2` or more): Hockney's
    /// α and β for eager and rendezvous messages, LogGP, the divide-and-conquer paper's l and g, stored for
    /// this machine; also as a components file's [machine] table and a SimGrid platform.
    #[command(after_help = "Examples:
  mpirun -np 2 perfcompose calibrate network                   measure and store for this machine
  mpirun -np 2 perfcompose calibrate network --machine-out net.toml --platform-out net.xml
  mpirun -np 2 perfcompose calibrate network --max-bytes 65536 --reps 5 --no-save --json

Needs a perfcompose built with MPI: cargo build --release --features mpi
(Open MPI and libclang first: bash scripts/install-mpi).")]
    Network(network::NetworkArgs),
}

pub fn run(args: Args) -> anyhow::Result<()> {
    match args.what {
        What::Overhead(a) => overhead::run(&a),
        What::Network(a) => network::run(&a),
    }
}
