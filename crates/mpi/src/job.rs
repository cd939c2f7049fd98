//! One MPI job: what every command started under `mpirun` shares.
//!
//! A [`Job`] initialises MPI (threads allowed, MPI called from the main thread only),
//! knows its rank and the number of processes, and guards against the two ways a
//! distributed run goes wrong without an answer:
//!
//! - **a hang** (a lost message, a rank that never arrives): a watchdog thread ends the
//!   process with status 2 once the job's time limit has passed, naming the rank and
//!   the block it was in. `mpirun` then ends the other ranks. Rank 0 reports at once;
//!   the others wait a moment first so that the job prints one message, not one per rank.
//! - **a panic in a block**: [`Job::block`] catches it, prints the rank, the block and
//!   the panic message, and aborts the whole communicator (`MPI_Abort`, status 2), so the
//!   other ranks do not wait forever for a message that will never come.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use mpi::environment::Universe;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use mpi::Threading;

use crate::error::Error;

/// How long ranks other than 0 wait after their time limit before they report it
/// themselves, so that rank 0's message is the one a user reads.
const REPORT_GRACE: Duration = Duration::from_secs(2);

/// A running MPI job (this process's part of it).
pub struct Job {
    world: SimpleCommunicator,
    rank: usize,
    size: usize,
    /// The block this rank is in, for the watchdog's message.
    block: Arc<Mutex<String>>,
    /// Whether an MPI launcher (`mpirun`) started this process, as its environment said
    /// before MPI was initialised (a process initialised alone gets a launcher's
    /// variables too).
    launched: bool,
    watchdog: Watchdog,
    /// Dropped last: finalises MPI.
    _universe: Universe,
}

impl Job {
    /// Initialise MPI and start the watchdog: the job ends with status 2 when it runs
    /// longer than `time_limit`.
    pub fn start(time_limit: Duration) -> Result<Job, Error> {
        if Instant::now().checked_add(time_limit).is_none() {
            return Err(Error::TimeLimit {
                seconds: time_limit.as_secs_f64(),
            });
        }
        let launched = perfcompose_runtime::host::launcher_rank().is_some();
        let (universe, _threading) =
            mpi::initialize_with_threading(Threading::Funneled).ok_or(Error::AlreadyStarted)?;
        let world = universe.world();
        let rank = usize::try_from(world.rank()).unwrap_or(0);
        let size = usize::try_from(world.size()).unwrap_or(1);
        let block = Arc::new(Mutex::new("start-up".to_string()));
        let watchdog = Watchdog::start(time_limit, rank, Arc::clone(&block));
        Ok(Job {
            world,
            rank,
            size,
            block,
            launched,
            watchdog,
            _universe: universe,
        })
    }

    /// This process's rank in the job.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// Number of processes in the job.
    pub fn size(&self) -> usize {
        self.size
    }

    /// Whether this is rank 0, the one that prints.
    pub fn is_root(&self) -> bool {
        self.rank == 0
    }

    /// The communicator of all processes.
    pub fn world(&self) -> &SimpleCommunicator {
        &self.world
    }

    /// The time limit the job was started with.
    pub fn time_limit(&self) -> Duration {
        self.watchdog.limit
    }

    /// An error unless the job has at least `need` processes: what every command that
    /// needs several processes checks first (`calibrate network`, `validate --suite
    /// mpi`), so that one started without `mpirun` says so instead of running alone.
    pub fn require(&self, what: &'static str, need: usize) -> Result<(), Error> {
        if self.size < need {
            return Err(Error::TooFewProcesses {
                what,
                need,
                have: self.size,
                launched: self.launched,
            });
        }
        Ok(())
    }

    /// Run `f` as the block `name` of this rank. A panic inside ends the whole job: the
    /// rank, the block and the message go to stderr, then `MPI_Abort` with status 2.
    pub fn block<T>(&self, name: &str, f: impl FnOnce() -> T) -> T {
        self.enter(name);
        match catch_unwind(AssertUnwindSafe(f)) {
            Ok(v) => v,
            Err(payload) => {
                let message = perfcompose_runtime::panic_message(&*payload);
                perfcompose_core::stderr_line!(
                    "error: rank {} of {}: block `{name}` panicked: {message}; ending the job",
                    self.rank,
                    self.size
                );
                self.world.abort(2)
            }
        }
    }

    /// End the whole job from this rank: `message` to stderr with the rank, then
    /// `MPI_Abort` with status 2 (the other ranks may be waiting for this one).
    pub fn fail(&self, message: &str) -> ! {
        perfcompose_core::stderr_line!(
            "error: rank {} of {}: {message}; ending the job",
            self.rank,
            self.size
        );
        self.world.abort(2)
    }

    /// How many processes of the job run on this process's host (by processor name).
    pub fn processes_on_this_host(&self) -> usize {
        use std::hash::{Hash, Hasher};
        let name = mpi::environment::processor_name().unwrap_or_default();
        let mut h = std::collections::hash_map::DefaultHasher::new();
        name.hash(&mut h);
        let mine = h.finish();
        let mut all = vec![0u64; self.size];
        self.world.all_gather_into(&mine, &mut all[..]);
        all.iter().filter(|&&o| o == mine).count().max(1)
    }

    /// Record that this rank is now in block `name` (for the watchdog's message).
    pub fn enter(&self, name: &str) {
        if let Ok(mut b) = self.block.lock() {
            name.clone_into(&mut b);
        }
    }

    /// Wait until every rank arrives.
    pub fn barrier(&self) {
        self.world.barrier();
    }
}

/// The online cores of this host (not only those `mpirun` bound this process to).
pub fn host_cores() -> usize {
    // SAFETY: `sysconf` reads a system value.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    usize::try_from(n).unwrap_or(1).max(1)
}

/// While alive, this process may run on every online core of its host; dropped, it is
/// bound as before. `mpirun` binds each process to its own core(s), and perfcompose
/// keeps that binding, except while rank 0 times blocks alone (the other processes
/// sleep): a block timed next to a sibling thread needs a core of its own for each.
pub struct EveryCore {
    saved: Option<libc::cpu_set_t>,
}

impl EveryCore {
    pub fn new() -> EveryCore {
        // SAFETY: plain libc calls on `cpu_set_t`s owned here; a failure leaves the
        // binding as it was.
        unsafe {
            let size = std::mem::size_of::<libc::cpu_set_t>();
            let mut saved: libc::cpu_set_t = std::mem::zeroed();
            if libc::sched_getaffinity(0, size, &mut saved) != 0 {
                return EveryCore { saved: None };
            }
            let mut all: libc::cpu_set_t = std::mem::zeroed();
            for cpu in 0..host_cores().min(libc::CPU_SETSIZE as usize) {
                libc::CPU_SET(cpu, &mut all);
            }
            if libc::sched_setaffinity(0, size, &all) != 0 {
                return EveryCore { saved: None };
            }
            EveryCore { saved: Some(saved) }
        }
    }
}

impl Default for EveryCore {
    fn default() -> EveryCore {
        EveryCore::new()
    }
}

impl Drop for EveryCore {
    fn drop(&mut self) {
        if let Some(saved) = &self.saved {
            // SAFETY: restores the mask read in `new`.
            unsafe {
                libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), saved);
            }
        }
    }
}

/// The MPI library's name and version (what it says of itself up to the first comma:
/// `Open MPI v4.1.4`).
pub fn library_version() -> String {
    mpi::environment::library_version()
        .ok()
        .and_then(|s| s.split([',', '\n']).next().map(|l| l.trim().to_string()))
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "an unknown MPI library".to_string())
}

/// The thread that ends a job that runs past its time limit.
struct Watchdog {
    limit: Duration,
    done: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Watchdog {
    fn start(limit: Duration, rank: usize, block: Arc<Mutex<String>>) -> Watchdog {
        let done = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&done);
        let thread = std::thread::Builder::new()
            .name("perfcompose-watchdog".into())
            .spawn(move || {
                // `Job::start` checked that the deadline exists; a clock that moved
                // since then leaves the job without a watchdog rather than panicking.
                let Some(deadline) = Instant::now().checked_add(limit) else {
                    return;
                };
                let report_at = if rank == 0 {
                    deadline
                } else {
                    deadline.checked_add(REPORT_GRACE).unwrap_or(deadline)
                };
                loop {
                    if flag.load(Ordering::Acquire) {
                        return;
                    }
                    let now = Instant::now();
                    if now >= report_at {
                        break;
                    }
                    std::thread::park_timeout(report_at - now);
                }
                let block = block.lock().map(|b| b.clone()).unwrap_or_default();
                perfcompose_core::stderr_line!(
                    "error: rank {rank}: the job ran past its time limit of {} s in block `{block}` (a lost message or a rank that never arrived?); ending the job",
                    limit.as_secs_f64()
                );
                // SAFETY: `_exit` ends the process at once; it touches no Rust state. MPI
                // is left without finalising on purpose: the other ranks may be blocked
                // in it, and `mpirun` ends them when this process is gone.
                unsafe { libc::_exit(2) }
            })
            .ok();
        Watchdog {
            limit,
            done,
            thread,
        }
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            let _ = t.join();
        }
    }
}
