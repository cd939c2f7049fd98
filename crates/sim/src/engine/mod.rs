//! The replay engine: a deterministic discrete-event simulation of MPI ranks replaying
//! their traces on a platform.
//!
//! Semantics follow SMPI (SimGrid 3.32) as `smpirun -replay` runs it, because that is what
//! users will check us against:
//!
//! - **Messages** rendezvous in the receiver's mailbox, matched in posting order by source
//!   and tag. The transfer starts when both sides have posted (SMPI's default
//!   `smpi/async-small-thresh` is 0, so there is no true eager push); it carries the payload
//!   plus a 16-byte envelope.
//! - **Detached sends**: a send below `smpi/send-is-detached-thresh` (65,536 bytes) returns
//!   at once, and waiting on it returns at once; at or above it a send completes only when
//!   the data is delivered (rendezvous). Receives always wait for the data.
//! - **Transfer time**: the route's latency (× latency factor) is paid first, then the
//!   payload flows at the rate the network model gives — the route's narrowest link
//!   (latency-bandwidth model), or a weighted max-min share of every link on the route
//!   recomputed whenever a flow starts or ends (CM02: weight = 1 / route latency, no TCP
//!   window bound when `TCP-gamma` is 0, no cross traffic).
//! - **Compute** takes flops / host speed; ranks sharing a host beyond its core count share
//!   it equally.
//! - **End of trace**: as SMPI, a rank waits for the last pending request of each
//!   (source, destination, tag) before it finishes. The simulated time is when the last
//!   rank finishes.
//!
//! Events live in a `BinaryHeap` ordered by (time, sequence number), so runs are
//! deterministic. When no event remains but ranks still wait, the trace deadlocks: the
//! error says which ranks wait on what, with the trace file and line of their action.
//!
//! The files, each importing only those above it in this list:
//!
//! - `config`: the options ([`Config`], [`NetworkModel`]) and SMPI's defaults.
//! - `report`: what a replay gives back: [`Report`], [`SimError`], [`Progress`].
//! - `fxhash`: the small hasher of the engine's integer-keyed maps.
//! - `queue`: time order of events: the main heap's entries and the flow queue.
//! - `state`: the state of ranks, requests, flows, links and hosts.
//! - `sim`: the simulator's state and its event loop; [`simulate`].
//! - `ranks`, `cpu`, `requests`, `network`, `maxmin`, `diagnose`: the simulator's
//!   methods: replaying actions, shared hosts, matching messages, transfers, bandwidth
//!   sharing, and the report and errors.

mod config;
mod cpu;
mod diagnose;
mod fxhash;
mod maxmin;
mod network;
mod queue;
mod ranks;
mod report;
mod requests;
mod sim;
mod state;

pub use config::{Config, NetworkModel, DETACHED_THRESHOLD, ENVELOPE_BYTES, TEST_SLEEP};
pub use report::{BlockedRank, Progress, RankReport, Report, SimError};
pub use sim::{simulate, simulate_with_timeline};
