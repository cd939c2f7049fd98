//! Trace-based simulation of message-passing programs (the dPerf paper, dPerf; SimGrid's SMPI
//! replay as the reference).
//!
//! - [`units`]: SimGrid's unit suffixes (`1Gf`, `125MBps`, `50us`).
//! - [`platform`]: hosts, links and routes read from SimGrid's platform XML; hostfiles.
//! - [`trace`]: time-independent traces (SimGrid's current form and dPerf's older form),
//!   streamed with a bounded window, and a writer.
//! - [`coll`]: collective operations decomposed into point-to-point messages, with
//!   SimGrid's algorithm names.
//! - [`timeline`]: what each rank did when, written for Perfetto (Chrome's trace
//!   events) and Vite (Paje).
//! - [`output`]: what a replay reports as JSON (`perfcompose simulate --json`).
//! - [`engine`]: the discrete-event replay with SMPI's point-to-point semantics over a
//!   latency-bandwidth or a max-min (CM02) network model.
#![forbid(unsafe_code)]
#![cfg_attr(not(test), deny(clippy::print_stdout, clippy::print_stderr))]

pub mod coll;
pub mod engine;
pub mod gen;
pub mod lmm;
pub mod output;
pub mod platform;
pub mod timeline;
pub mod trace;
pub mod units;

pub use engine::{
    simulate, simulate_with_timeline, Config, NetworkModel, RankReport, Report, SimError,
};
pub use platform::{Host, HostId, Link, LinkId, Platform, Sharing};
