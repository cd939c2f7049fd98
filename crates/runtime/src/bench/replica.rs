//! Unit tests of the blocks of a task pool's `seq` ([`Replica`]): every thread runs the
//! whole `seq` on the elements of one cold stream, and the calls of the timed block on
//! every thread, on that stream, are counted, pooled (as a cold loaded test pools them,
//! [`Conditions`]).
//!
//! [`Replica`]: super::conditions::Replica
//! [`Conditions`]: super::conditions::Conditions

use std::time::Instant;

use super::rig::{call, Rig};
use super::stream::not_copyable;
use crate::data::Data;
use crate::error::Error;

/// The time of the whole `seq` of `chain` on one element, seconds: what sizes the stream
/// of a replica block's unit test. Run twice, the first run paying for cold caches; the
/// faster is kept.
pub(super) fn time_per_element(chain: &Rig) -> Result<f64, Error> {
    let mut probe = f64::INFINITY;
    for _ in 0..2 {
        let mut d = chain.first[0]
            .try_clone()
            .ok_or_else(|| not_copyable(&chain.names[0]))?;
        let t0 = Instant::now();
        for (op, name) in chain.ops.iter().zip(&chain.names) {
            d = call(op, name, d)?;
        }
        probe = probe.min(t0.elapsed().as_secs_f64().max(1e-9));
    }
    Ok(probe)
}

/// Run the whole `seq` of `chain` on `input` on this thread and add the time of the timed
/// block's call to `total` (ns); what the last block returns.
pub(super) fn run_timed(chain: &Rig, input: Data, total: &mut u128) -> Result<Data, Error> {
    let mut d = input;
    for (j, (op, name)) in chain.ops.iter().zip(&chain.names).enumerate() {
        if j == chain.index {
            let t = Instant::now();
            let out = call(op, name, d);
            *total += t.elapsed().as_nanos();
            d = out?;
        } else {
            d = call(op, name, d)?;
        }
    }
    Ok(d)
}
