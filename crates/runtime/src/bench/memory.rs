//! The memory a measurement may use and the state it leaves behind: the limit on the
//! inputs it prepares ([`default_memory_limit`]), the caches emptied before a cold
//! stream ([`evict_caches`]), and the allocator told to keep what the streams free
//! ([`keep_freed_memory`]).

use std::sync::Mutex;

use crate::host::{available_memory, last_level_cache_bytes};

/// Memory a benchmark may use for inputs: half of what the OS reports available (Linux
/// `MemAvailable`), or 4 GiB where that cannot be read.
pub fn default_memory_limit() -> u128 {
    available_memory().map_or(4 << 30, |bytes| bytes / 2)
}

/// The buffer [`evict_caches`] writes, kept from call to call.
static KEPT: Mutex<Vec<u8>> = Mutex::new(Vec::new());

/// Write (and read back) a buffer twice the size of the last-level cache, so that data
/// touched before the call is in memory, not in a cache, afterwards.
///
/// The buffer is kept from call to call: a fresh one of 64 MiB (on a 32 MiB L3) is a
/// fresh mapping whose 16,384 pages fault and are zeroed on every call, several times
/// the cost of writing it. A call that finds it in use by another thread writes one of
/// its own.
pub fn evict_caches() {
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

/// Allocations below this many bytes come from the heap once [`keep_freed_memory`] ran;
/// glibc maps larger ones on their own and unmaps them when they are freed.
#[cfg_attr(not(all(target_os = "linux", target_env = "gnu")), allow(dead_code))]
const MMAP_THRESHOLD: i32 = 32 << 20;

/// Keep memory freed by this process for its next allocations (glibc: no trimming of
/// the heap, no separate mapping below [`MMAP_THRESHOLD`]) instead of handing it back to
/// the OS.
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
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
        libc::mallopt(libc::M_TRIM_THRESHOLD, i32::MAX);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc::{self, RecvTimeoutError};
    use std::time::Duration;

    use super::*;
    use crate::data::ImageSize;
    use crate::kernel::{Inputs, Registry};

    /// Run `f` on a thread of its own and wait for it for a minute at most, so that a
    /// call that deadlocks fails the test (naming `what`) instead of hanging it. The
    /// bound is no timing claim: each call here takes milliseconds.
    fn returns(what: &str, f: impl FnOnce() + Send + 'static) {
        let (done, finished) = mpsc::channel();
        std::thread::spawn(move || {
            f();
            let _ = done.send(());
        });
        match finished.recv_timeout(Duration::from_secs(60)) {
            Ok(()) => {}
            Err(RecvTimeoutError::Timeout) => panic!("{what}: no return within a minute"),
            Err(RecvTimeoutError::Disconnected) => panic!("{what}: panicked"),
        }
    }

    #[test]
    fn evicting_the_caches_keeps_one_buffer_and_never_waits_for_it() {
        // Several threads at once: one gets the kept buffer, the others write their own.
        returns("four threads evicting the caches at once", || {
            std::thread::scope(|s| {
                for _ in 0..3 {
                    s.spawn(|| {
                        for _ in 0..2 {
                            evict_caches();
                        }
                    });
                }
                evict_caches();
            });
        });
        // Whichever call got the buffer left it twice the last-level cache, for the next.
        let len = KEPT.lock().unwrap().len();
        assert_eq!(len, 2 * last_level_cache_bytes() as usize);
        // A call that finds the buffer in use writes one of its own instead of waiting.
        let held = KEPT.lock().unwrap();
        returns("a call while the kept buffer is in use", evict_caches);
        drop(held);
    }

    #[test]
    fn every_input_of_the_built_in_sweeps_comes_from_the_heap() {
        // What `keep_freed_memory` keeps is the heap: an input at or over the threshold
        // would be a mapping of its own, unmapped when freed whatever the settings.
        let registry = Registry::builtin();
        for kernel in registry.iter() {
            for image in ImageSize::ALL {
                for x in kernel.default_sizes(true) {
                    let bytes = kernel.input_bytes(x, &Inputs::with_image(image));
                    assert!(
                        bytes < MMAP_THRESHOLD as u128,
                        "`{}` at x = {x} ({} images): {bytes} bytes",
                        kernel.name(),
                        image.name()
                    );
                }
            }
        }
    }
}
