//! Shared state of one run: the fault list, the stop flag, queue capacity and pinning.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::error::Fault;

/// Default capacity of the queues between stages.
pub const DEFAULT_CAPACITY: usize = 64;

/// How a run is configured. Built by [`crate::Program::with_config`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// Capacity of every queue between stages (elements). Bounds the memory a fast
    /// producer can fill: at most `capacity` elements wait in each queue.
    pub capacity: usize,
    /// Pin each worker thread to a core (round robin over the cores the OS reports),
    /// when the design has no more worker threads than cores; a design with more is left
    /// to the OS.
    pub pin: bool,
}

impl Default for Config {
    fn default() -> Config {
        // Deep enough that a fast stage hands over bursts instead of waking its
        // neighbour for every element (a futex wake costs microseconds on a loaded
        // machine), shallow enough that 1 MB elements keep the in-flight data modest.
        Config {
            capacity: DEFAULT_CAPACITY,
            pin: false,
        }
    }
}

/// Per-run shared state handed to every node when it spawns its threads.
pub(crate) struct Ctx {
    pub(crate) capacity: usize,
    faults: Mutex<Vec<Fault>>,
    stop: AtomicBool,
    cores: Option<Vec<core_affinity::CoreId>>,
    next_core: AtomicUsize,
}

impl Ctx {
    /// The state of a run of a design with `threads` worker threads. Pinning applies
    /// only when every worker can have a core of its own: with more threads than cores,
    /// round-robin pinning put two `qsort` stages of `tpool(2, pipe(qsort, inc))` on one
    /// core in some runs (1.45× slower than unpinned in one round of two, 2026-11-24),
    /// where the OS balances them.
    pub(crate) fn new(config: &Config, threads: usize) -> Ctx {
        let cores = if config.pin {
            core_affinity::get_core_ids().filter(|c| !c.is_empty() && threads <= c.len())
        } else {
            None
        };
        Ctx {
            capacity: config.capacity.max(1),
            faults: Mutex::new(Vec::new()),
            stop: AtomicBool::new(false),
            cores,
            next_core: AtomicUsize::new(0),
        }
    }

    /// Record a failed element and ask the feeder to stop.
    pub(crate) fn fault(&self, fault: Fault) {
        self.faults
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(fault);
        self.stop.store(true, Ordering::Release);
    }

    pub(crate) fn stopped(&self) -> bool {
        self.stop.load(Ordering::Acquire)
    }

    pub(crate) fn take_faults(&self) -> Vec<Fault> {
        let mut f = std::mem::take(&mut *self.faults.lock().unwrap_or_else(|e| e.into_inner()));
        f.sort_by_key(|f| f.seq);
        f
    }

    /// Pin the calling thread to the next core, if pinning is on. Failure to pin is not
    /// an error (some containers forbid it); the run just goes on unpinned.
    pub(crate) fn pin_current(&self) {
        if let Some(core) = self.take_core() {
            let _ = core_affinity::set_for_current(core);
        }
    }

    /// Whether the run pins its threads.
    pub(crate) fn pins(&self) -> bool {
        self.cores.is_some()
    }

    /// The core the next thread of the run is pinned to (round robin), or `None` when
    /// the run does not pin.
    pub(crate) fn take_core(&self) -> Option<core_affinity::CoreId> {
        let cores = self.cores.as_ref()?;
        let i = self.next_core.fetch_add(1, Ordering::Relaxed);
        Some(cores[i % cores.len()])
    }

    #[cfg(test)]
    pub(crate) fn pinning(&self) -> Option<&[core_affinity::CoreId]> {
        self.cores.as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workers_are_pinned_only_when_each_can_have_a_core() {
        let pin = Config {
            pin: true,
            ..Config::default()
        };
        let cores = core_affinity::get_core_ids().map_or(0, |c| c.len());
        if cores > 0 {
            assert_eq!(Ctx::new(&pin, cores).pinning().map(<[_]>::len), Some(cores));
        }
        assert!(Ctx::new(&pin, cores + 1).pinning().is_none());
        assert!(Ctx::new(&Config::default(), 1).pinning().is_none());
    }
}
