//! The memory a measurement may use and the state it leaves behind: the limit on the
//! inputs it prepares ([`default_memory_limit`]), the caches emptied before a cold
//! stream ([`evict_caches`]), and the allocator told to keep what the streams free
//! ([`keep_freed_memory`]).

use crate::host::{available_memory, last_level_cache_bytes};

/// Memory a benchmark may use for inputs: half of what the OS reports available (Linux
/// `MemAvailable`), or 4 GiB where that cannot be read.
pub fn default_memory_limit() -> u128 {
    available_memory().map_or(4 << 30, |bytes| bytes / 2)
}

/// Write (and read back) a buffer twice the size of the last-level cache, so that data
/// touched before the call is in memory, not in a cache, afterwards.
///
/// The buffer is kept from call to call: a fresh one of 64 MiB (on a 32 MiB L3) is a
/// fresh mapping whose 16,384 pages fault and are zeroed on every call, several times
/// the cost of writing it. A call that finds it in use by another thread writes one of
/// its own.
pub fn evict_caches() {
    static KEPT: std::sync::Mutex<Vec<u8>> = std::sync::Mutex::new(Vec::new());
    let len = 2 * last_level_cache_bytes() as usize;
    let sweep = |buf: &mut Vec<u8>| {
        buf.resize(len, 0);
        for (i, b) in buf.iter_mut().enumerate().step_by(64) {
            *b = i as u8;
        }
        std::hint::black_box(buf.iter().step_by(64).fold(0u8, |a, &b| a ^ b));
    };
    match KEPT.try_lock() {
        Ok(mut buf) => sweep(&mut buf),
        Err(_) => sweep(&mut Vec::new()),
    }
}

/// Keep memory freed by this process for its next allocations (glibc: no trimming of
/// the heap, no separate mapping below 32 MiB) instead of handing it back to the OS.
///
/// A cold unit test or a program's repetition copies a stream of fresh inputs (up to
/// 4,096 of them, tens of MiB) before its clock starts and frees it after; with glibc's
/// defaults each repetition's copies fault in and zero every page again, which made up
/// most of `validate`'s wall time on short kernels (`seq(inc, nop)`: a third of its
/// cycles in the kernel's page-fault and unmapping paths under `perf record`).
/// Timed calls run on inputs already written either way. Call once, before any
/// measurement; elsewhere than glibc it does nothing.
pub fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only changes the allocator's tunables; called before the
    // measurement threads start.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, i32::MAX);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caches_are_evicted_from_several_threads_at_once() {
        // One thread gets the kept buffer, the others write their own; none waits.
        std::thread::scope(|s| {
            for _ in 0..3 {
                s.spawn(|| {
                    for _ in 0..2 {
                        evict_caches();
                    }
                });
            }
        });
        evict_caches();
    }
}
