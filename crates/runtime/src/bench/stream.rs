//! The stream of inputs one repetition works through: how long it is ([`stream_len`] for
//! a unit test, [`tail_floor`] and the bounds below for a whole program), which distinct
//! inputs it cycles through ([`templates`]), and how it is made: fresh copies, out of the
//! caches as a program's stream is when its run starts.

use std::sync::Arc;
use std::time::Duration;

use super::memory::evict_caches;
use crate::data::Data;
use crate::error::{Error, KernelError};
use crate::host::last_level_cache_bytes;
use crate::kernel::{input_pool_size, Inputs, Kernel};

/// How long one repetition of a whole-program measurement should at least stream, so that
/// filling and draining the pipeline is a small part of it.
pub const MIN_RUN: Duration = Duration::from_millis(20);
/// Bounds on the stream length of one repetition.
pub const MIN_ELEMENTS: usize = 16;
pub const MAX_ELEMENTS: usize = 4096;
/// Elements a repetition streams at least per core, beyond the first, that a design keeps
/// busy ([`tail_floor`]).
pub const TAIL_ELEMENTS: usize = 64;

/// The shortest stream of a design working on `in_flight` elements at once
/// ([`crate::Pattern::in_flight`]) on `cores` cores, so that the end of the stream
/// weighs little: the last elements leave up to `min(in_flight, cores) − 1` cores idle for
/// part of an element each (a pool's workers finish unevenly, a pipeline drains), about
/// `(k − 1) / 2n` of a stream of `n` elements on `k` busy cores, and the fill of a
/// pipeline costs as much at the start. `tpool(2, qsort)` at x = 32,768 streamed 16
/// elements (20 ms of calls), and its workers sat idle for 2.6–6.6% of the run; with 64
/// elements 0.3–2.1%.
pub fn tail_floor(in_flight: usize, cores: usize) -> usize {
    TAIL_ELEMENTS * (in_flight.min(cores).max(1) - 1)
}

/// Inputs in one repetition of a cold unit test: as many as a whole-program repetition
/// streams at that speed (at least [`MIN_RUN`] of calls, at most [`MAX_ELEMENTS`]),
/// within the memory limit; `probe` is the time of one call, seconds.
pub fn stream_len(probe: f64, input_bytes: u128, memory_limit: u128) -> usize {
    let wanted = (MIN_RUN.as_secs_f64() / probe.max(1e-9)).ceil();
    let by_memory = (memory_limit / input_bytes.max(1)).max(1);
    (wanted.clamp(1.0, MAX_ELEMENTS as f64) as u128).min(by_memory) as usize
}

/// Evict the caches when `stream` is too small to push itself out of them: a stream
/// smaller than twice the last-level cache would still be in it when the run starts, and
/// stream elements (of programs and of cold unit tests alike) are to be cold.
pub(super) fn evict_unless_cold(stream: &[Data]) {
    let total: u128 = stream.iter().map(|d| d.bytes() as u128).sum();
    if total < 2 * last_level_cache_bytes() as u128 {
        evict_caches();
    }
}

/// The error of a unit test whose block `kernel`'s input cannot be copied.
pub(super) fn not_copyable(kernel: &str) -> Error {
    KernelError::BadInput {
        kernel: kernel.to_string(),
        message: "its input cannot be copied for repetitions".into(),
    }
    .into()
}

/// The distinct inputs of `kernel` at size `x` that the repetitions of its unit test copy
/// their inputs from, as many as [`input_pool_size`] within half of `memory_limit`.
pub(super) fn templates(
    kernel: &dyn Kernel,
    x: usize,
    inputs: &Inputs,
    memory_limit: u128,
) -> Result<Arc<Vec<Data>>, Error> {
    let bytes = kernel.input_bytes(x, inputs);
    let pool = input_pool_size(x).min((memory_limit / 2 / bytes.max(1)).max(1) as usize);
    Ok(Arc::new(
        (0..pool)
            .map(|v| kernel.input(x, &inputs.variant(v as u64)))
            .collect::<Result<Vec<_>, _>>()?,
    ))
}

/// `len` fresh copies of the distinct inputs, cycled from the `offset`-th: a stream made the
/// way a program's is (`plan::stream_inputs`). `None` if an input cannot be copied.
pub(super) fn copies(templates: &[Data], offset: usize, len: usize) -> Option<Vec<Data>> {
    (0..len)
        .map(|i| templates[(offset + i) % templates.len()].try_clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cold_streams_last_a_program_repetition_within_the_memory_limit() {
        // 1 µs per call: 20 ms of calls, at most MAX_ELEMENTS.
        assert_eq!(stream_len(1e-6, 4096, u128::MAX), 20_000.min(MAX_ELEMENTS));
        assert_eq!(stream_len(1e-4, 4096, u128::MAX), 200);
        // A call longer than a repetition: one input.
        assert_eq!(stream_len(0.5, 4096, u128::MAX), 1);
        // Memory-bound: 10 inputs of 1000 bytes fit in 10,000.
        assert_eq!(stream_len(1e-6, 1000, 10_000), 10);
        assert_eq!(stream_len(1e-6, 1 << 40, 1000), 1);
    }

    #[test]
    fn the_tail_floor_counts_busy_cores_beyond_the_first() {
        assert_eq!(tail_floor(1, 2), 0);
        assert_eq!(tail_floor(2, 2), TAIL_ELEMENTS);
        // Elements beyond the cores wait in the queue: no more cores idle at the end.
        assert_eq!(tail_floor(24, 2), TAIL_ELEMENTS);
        assert_eq!(tail_floor(4, 8), 3 * TAIL_ELEMENTS);
        assert_eq!(tail_floor(0, 0), 0);
    }
}
