//! The measurements behind `calibrate network`, taken by every rank of the job together.
//!
//! - **Ping-pong** between ranks 0 and 1 over message sizes from 8 B up to the largest
//!   (16 MiB by default), doubling: a batch of round trips is timed at rank 0 and halved
//!   into a one-way time per message; each size gets the same number of batches, and a
//!   batch holds as many round trips as fill about a millisecond, so that the timer's
//!   resolution does not matter for small messages.
//! - **The send call** of a small message, timed alone with the network idle (rank 1
//!   answers each one before the next): LogGP's overhead `o`.
//! - **A burst** of small messages sent back to back, then one answer: the time between
//!   consecutive injections, LogGP's gap `g`.
//! - **All-to-all under load** (the divide-and-conquer paper's `l` and `g`): every rank sends `K` 4-byte words
//!   to every other rank, `K` from 1 word up, quadrupling; the slowest rank's time per
//!   operation counts.
//! - **Compute speed**: the flop rate of one core on a multiply-add loop over cache-resident
//!   data, so that a trace can state computation as flops at this machine's speed.
//!
//! Ranks other than 0 and 1 take part in the all-to-all and wait during the rest. Every
//! rank runs the same loops, so the iteration counts rank 0 chooses are broadcast first.

use std::hint::black_box;
use std::time::{Duration, Instant};

use mpi::collective::SystemOperation;
use mpi::traits::*;

use crate::job::Job;

/// Bytes of the small message that LogGP's `o` and `g` are measured with.
pub const SMALL_MESSAGE: u64 = 8;
/// Bytes of one word of the divide-and-conquer paper's exchange (a 32-bit integer, as the paper measures).
pub const WORD_BYTES: u64 = 4;
/// Messages in one burst.
pub const BURST_MESSAGES: usize = 256;
/// Largest message the calibration sends by default (16 MiB).
pub const DEFAULT_MAX_BYTES: u64 = 16 << 20;
/// Timed batches per message size by default.
pub const DEFAULT_BATCHES: usize = 15;

/// How much to measure.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Largest ping-pong message (and largest all-to-all message per pair), bytes.
    pub max_bytes: u64,
    /// Timed batches per size (and of the send call, the burst, each all-to-all).
    pub batches: usize,
    /// Time a batch should take, so that it is well above the timer's resolution.
    pub batch_seconds: f64,
}

impl Default for Plan {
    fn default() -> Plan {
        Plan {
            max_bytes: DEFAULT_MAX_BYTES,
            batches: DEFAULT_BATCHES,
            batch_seconds: 1e-3,
        }
    }
}

impl Plan {
    /// The ping-pong sizes: 8 B doubling up to `max_bytes` (included when it is not a
    /// power of two).
    pub fn message_sizes(&self) -> Vec<u64> {
        let mut sizes = Vec::new();
        let mut b = SMALL_MESSAGE;
        while b <= self.max_bytes {
            sizes.push(b);
            b *= 2;
        }
        if sizes.last().is_some_and(|&l| l < self.max_bytes) {
            sizes.push(self.max_bytes);
        }
        sizes
    }

    /// The all-to-all sizes, in words per pair: 1 quadrupling while a pair's message
    /// stays within `max_bytes`.
    pub fn alltoall_words(&self) -> Vec<u64> {
        let mut words = Vec::new();
        let mut k = 1;
        while k * WORD_BYTES <= self.max_bytes {
            words.push(k);
            k *= 4;
        }
        words
    }

    /// Steps the progress callback counts.
    pub fn steps(&self) -> usize {
        self.message_sizes().len() + 3 + self.alltoall_words().len()
    }
}

/// What rank 0 measured; the other ranks return it empty.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Raw {
    /// Per message size: the one-way time of one message, one value per batch.
    pub pingpong: Vec<(u64, Vec<f64>)>,
    /// The time of the send call of one small message, one value per batch.
    pub send_call: Vec<f64>,
    /// Messages per burst, and the time of one burst (sends, then one answer) per batch.
    pub burst_messages: usize,
    pub burst: Vec<f64>,
    /// Per words per pair: the slowest rank's time of one all-to-all, one value per batch.
    pub alltoall: Vec<(u64, Vec<f64>)>,
    /// flop/s of one core.
    pub flops_per_s: f64,
}

/// Measure everything [`Plan`] asks for. Every rank of `job` calls this; `progress` is
/// told `(step, done, total)` on rank 0.
pub fn measure(job: &Job, plan: &Plan, progress: &mut dyn FnMut(&str, usize, usize)) -> Raw {
    let total = plan.steps();
    let mut done = 0;
    let mut step = |name: &str, done: &mut usize| {
        *done += 1;
        if job.is_root() {
            progress(name, *done, total);
        }
    };
    let mut raw = Raw {
        burst_messages: BURST_MESSAGES,
        ..Raw::default()
    };
    for bytes in plan.message_sizes() {
        let name = format!("ping-pong, {bytes} B");
        let times = job.block(&name, || pingpong_size(job, plan, bytes));
        if job.is_root() {
            raw.pingpong.push((bytes, times));
        }
        step(&name, &mut done);
    }
    raw.send_call = job.block("send call", || send_call(job, plan));
    step("send call", &mut done);
    raw.burst = job.block("burst of small messages", || burst(job, plan));
    step("burst", &mut done);
    for words in plan.alltoall_words() {
        let name = format!("all-to-all, {words} words per pair");
        let times = job.block(&name, || alltoall(job, plan, words));
        if job.is_root() {
            raw.alltoall.push((words, times));
        }
        step(&name, &mut done);
    }
    raw.flops_per_s = job.block("compute speed", || {
        if job.is_root() {
            flops_per_second()
        } else {
            0.0
        }
    });
    job.barrier();
    step("compute speed", &mut done);
    if !job.is_root() {
        return Raw::default();
    }
    raw
}

/// Rank 0's choice of a count, known to every rank afterwards.
fn agree(job: &Job, mine: u64) -> u64 {
    let mut v = mine;
    job.world().process_at_rank(0).broadcast_into(&mut v);
    v
}

/// Repetitions of an operation that take `seconds` when one takes `once`.
fn iterations(once: f64, seconds: f64) -> u64 {
    if !(once.is_finite() && once > 0.0) {
        return 1;
    }
    ((seconds / once).ceil() as u64).clamp(1, 100_000)
}

/// `iters` round trips of `buf` between ranks 0 and 1; rank 0 returns the time of one.
fn round_trips(job: &Job, buf: &mut [u8], iters: u64) -> f64 {
    let world = job.world();
    match job.rank() {
        0 => {
            let peer = world.process_at_rank(1);
            let t0 = mpi::time();
            for _ in 0..iters {
                peer.send(&buf[..]);
                peer.receive_into(&mut buf[..]);
            }
            (mpi::time() - t0) / iters as f64
        }
        1 => {
            let peer = world.process_at_rank(0);
            for _ in 0..iters {
                peer.receive_into(&mut buf[..]);
                peer.send(&buf[..]);
            }
            0.0
        }
        _ => 0.0,
    }
}

/// One-way times of a message of `bytes`, one per batch (rank 0's; empty elsewhere).
fn pingpong_size(job: &Job, plan: &Plan, bytes: u64) -> Vec<f64> {
    let mut buf = vec![0u8; bytes as usize];
    round_trips(job, &mut buf, 2);
    let once = round_trips(job, &mut buf, 1);
    let iters = agree(job, iterations(once, plan.batch_seconds));
    let mut times = Vec::with_capacity(plan.batches);
    for _ in 0..plan.batches {
        let rtt = round_trips(job, &mut buf, iters);
        if job.is_root() {
            times.push(rtt / 2.0);
        }
    }
    times
}

/// The send call of a small message with the network idle, one median per batch.
fn send_call(job: &Job, plan: &Plan) -> Vec<f64> {
    const PER_BATCH: usize = 64;
    let world = job.world();
    let mut msg = [0u8; SMALL_MESSAGE as usize];
    let mut out = Vec::new();
    for batch in 0..=plan.batches {
        let mut calls = Vec::with_capacity(PER_BATCH);
        for _ in 0..PER_BATCH {
            match job.rank() {
                0 => {
                    let peer = world.process_at_rank(1);
                    let t0 = mpi::time();
                    peer.send(&msg[..]);
                    calls.push(mpi::time() - t0);
                    peer.receive_into(&mut msg[..]);
                }
                1 => {
                    let peer = world.process_at_rank(0);
                    peer.receive_into(&mut msg[..]);
                    peer.send(&msg[..]);
                }
                _ => {}
            }
        }
        // The first batch warms up.
        if batch > 0 && job.is_root() {
            out.push(median(&mut calls));
        }
    }
    out
}

/// Bursts of small messages from rank 0 to rank 1, each answered once; one burst per batch.
fn burst(job: &Job, plan: &Plan) -> Vec<f64> {
    let world = job.world();
    let mut msg = [0u8; SMALL_MESSAGE as usize];
    let mut out = Vec::new();
    for batch in 0..=plan.batches {
        match job.rank() {
            0 => {
                let peer = world.process_at_rank(1);
                let t0 = mpi::time();
                for _ in 0..BURST_MESSAGES {
                    peer.send(&msg[..]);
                }
                peer.receive_into(&mut msg[..]);
                if batch > 0 {
                    out.push(mpi::time() - t0);
                }
            }
            1 => {
                let peer = world.process_at_rank(0);
                for _ in 0..BURST_MESSAGES {
                    peer.receive_into(&mut msg[..]);
                }
                peer.send(&msg[..]);
            }
            _ => {}
        }
    }
    out
}

/// The slowest rank's time of one all-to-all of `words` words per pair, one per batch.
fn alltoall(job: &Job, plan: &Plan, words: u64) -> Vec<f64> {
    let world = job.world();
    let n = words as usize * job.size();
    let send: Vec<u32> = vec![job.rank() as u32; n];
    let mut recv = vec![0u32; n];
    let timed = |iters: u64, recv: &mut [u32]| -> f64 {
        world.barrier();
        let t0 = mpi::time();
        for _ in 0..iters {
            world.all_to_all_into(&send[..], &mut *recv);
        }
        let mine = (mpi::time() - t0) / iters as f64;
        let mut slowest = 0.0f64;
        world.all_reduce_into(&mine, &mut slowest, SystemOperation::max());
        slowest
    };
    timed(2, &mut recv);
    let once = timed(1, &mut recv);
    let iters = agree(job, iterations(once, plan.batch_seconds));
    let mut out = Vec::with_capacity(plan.batches);
    for _ in 0..plan.batches {
        let t = timed(iters, &mut recv);
        if job.is_root() {
            out.push(t);
        }
    }
    out
}

/// The flop rate of one core on `y = a·x + y` over 4096 doubles (two flops per element),
/// the median of five runs of 20 ms each.
pub fn flops_per_second() -> f64 {
    const N: usize = 4096;
    let x = vec![1.0f64; N];
    let mut y = vec![0.5f64; N];
    let a = black_box(1.000_000_1f64);
    let mut rates = Vec::new();
    for _ in 0..5 {
        let start = Instant::now();
        let mut sweeps = 0u64;
        while start.elapsed() < Duration::from_millis(20) {
            for (yi, xi) in y.iter_mut().zip(&x) {
                *yi += a * xi;
            }
            black_box(&mut y);
            sweeps += 1;
        }
        rates.push(2.0 * N as f64 * sweeps as f64 / start.elapsed().as_secs_f64());
    }
    median(&mut rates)
}

/// The median of `v` (the mean of the two middle values for an even count; NaN if empty).
pub fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_double_from_eight_bytes_and_end_at_the_largest() {
        let plan = Plan {
            max_bytes: 100,
            ..Plan::default()
        };
        assert_eq!(plan.message_sizes(), vec![8, 16, 32, 64, 100]);
        let full = Plan::default().message_sizes();
        assert_eq!(full.first(), Some(&8));
        assert_eq!(full.last(), Some(&(16 << 20)));
        assert_eq!(full.len(), 22);
        assert_eq!(
            Plan {
                max_bytes: 64,
                ..Plan::default()
            }
            .alltoall_words(),
            vec![1, 4, 16]
        );
    }

    #[test]
    fn iteration_counts_fill_a_batch_and_stay_bounded() {
        assert_eq!(iterations(1.0 / 1048576.0, 1.0 / 1024.0), 1024);
        assert_eq!(iterations(5e-3, 1e-3), 1);
        assert_eq!(iterations(0.0, 1e-3), 1);
        assert_eq!(iterations(1e-12, 1e-3), 100_000);
    }

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&mut []).is_nan());
    }
}
