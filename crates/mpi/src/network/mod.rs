//! `calibrate network`: this machine's message-passing costs, measured under MPI.
//!
//! The files, each importing only those above it:
//!
//! - `measure`: the ping-pong, send-call, burst, all-to-all and compute-speed
//!   measurements every rank takes part in ([`measure()`], [`Plan`], [`Raw`]).
//! - `calibration`: the parameters fitted to them ([`NetworkCalibration`]): Hockney in the
//!   eager and the rendezvous range, LogGP, the divide-and-conquer paper's `l` and `g`.
//! - `store`: where a machine's calibration is kept, and reading it back.
//! - `export`: the calibration as a machine file for components files (ns, versioned)
//!   and as a SimGrid platform (SI units).

mod calibration;
mod export;
mod measure;
mod store;

pub use calibration::{
    AlltoallPoint, Exchange, FitQuality, Hockney, LogGp, NetworkCalibration, Point, NETWORK_VERSION,
};
pub use measure::{
    flops_per_second, measure, Plan, Raw, BURST_MESSAGES, DEFAULT_BATCHES, DEFAULT_MAX_BYTES,
    SMALL_MESSAGE, WORD_BYTES,
};

#[cfg(test)]
mod tests;
