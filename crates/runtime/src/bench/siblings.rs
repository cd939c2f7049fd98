//! The other threads of a loaded unit test ([`Conditions::siblings`]): each runs the
//! block (or a pool's whole `seq`) next to the timed thread, and the calls it makes on
//! the shared cold stream are timed and pooled with the timed thread's ([`Tally`]).
//!
//! [`Conditions::siblings`]: super::conditions::Conditions::siblings

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Barrier;
use std::time::Instant;

use crossbeam_channel::Receiver;

use super::gather::Gather;
use super::stream::copies;
use crate::data::Data;
use crate::kernel::{unit_call, Op};

/// Calls timed on one thread of a loaded unit test: their summed time and their number.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Tally {
    pub(super) ns: u128,
    pub(super) calls: u64,
}

impl Tally {
    /// One more call that took `ns`.
    pub(super) fn add(&mut self, ns: u128) {
        self.ns += ns;
        self.calls += 1;
    }

    /// The calls of both.
    pub(super) fn and(self, other: Tally) -> Tally {
        Tally {
            ns: self.ns + other.ns,
            calls: self.calls + other.calls,
        }
    }

    /// ns per call, less what reading the clock costs (`clock`); 0 without calls.
    pub(super) fn per_call(self, clock: f64) -> f64 {
        if self.calls == 0 {
            return 0.0;
        }
        (self.ns as f64 / self.calls as f64 - clock).max(0.0)
    }
}

/// A sibling of a loaded unit test: run `chain` (the block, or
/// the blocks of a pool's `seq` one after the other) on what it takes from `first` (the
/// queue of a cold stream that the timed thread takes from too), then on fresh copies of
/// the inputs (streams of `len`, starting at another input than the timed thread) until
/// `stop`; it signals `started` once it is ready. The calls of block `timed` of `chain`
/// on the shared stream are timed, each on its own, and returned (those on its own
/// streams, which the timed thread does not share, are not). A panicking block ends the
/// sibling (the caller reports it).
pub(super) fn sibling(
    templates: &[Data],
    (chain, timed): (&[Op], usize),
    len: usize,
    index: usize,
    first: Option<Receiver<Data>>,
    stop: &AtomicBool,
    started: &Barrier,
) -> Tally {
    let make = |offset: usize| copies(templates, offset, len.max(1)).unwrap_or_default();
    let mut offset = 7 * (index + 1);
    let mut stream = if first.is_some() {
        Vec::new()
    } else {
        make(offset)
    };
    started.wait();
    let run = |input: Data| chain.iter().fold(input, |d, op| unit_call(op, d));
    let mut tally = Tally::default();
    if let Some(queue) = first {
        while let Ok(input) = queue.try_recv() {
            if stop.load(Ordering::Acquire) {
                return tally;
            }
            let mut d = input;
            for (j, op) in chain.iter().enumerate() {
                if j == timed {
                    let t = Instant::now();
                    d = unit_call(op, d);
                    tally.add(t.elapsed().as_nanos());
                } else {
                    d = unit_call(op, d);
                }
            }
            drop(std::hint::black_box(d));
        }
    }
    while !stop.load(Ordering::Acquire) {
        for input in std::mem::take(&mut stream) {
            if stop.load(Ordering::Acquire) {
                return tally;
            }
            drop(std::hint::black_box(run(input)));
        }
        offset += len;
        stream = make(offset);
    }
    tally
}

/// A sibling of a warm per-key reduction's test: gathers and reduces `len` keys at a time
/// from its own map outputs until `stop`, as another thread of the job does (not timed).
pub(super) fn gathering_sibling(
    mut g: Gather,
    len: usize,
    stop: &AtomicBool,
    started: &Barrier,
) -> Tally {
    started.wait();
    // At least one pass (`len` keys), then until the timed thread is done. A panic here
    // was already met by the probe on the timed thread.
    while g.time(len, "sibling").is_ok() && !stop.load(Ordering::Acquire) {}
    Tally::default()
}
