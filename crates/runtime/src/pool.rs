//! Persistent helper threads that run boxed jobs: the threads a MapReduce node adds to
//! the thread that calls it. The pool starts empty and grows on demand ([`Pool::grow_to`])
//! to as many helpers as its concurrent callers need; it never shrinks while it lives.
//! Jobs catch their own panics (they report them through their result channel), so a
//! helper never dies while the pool lives. Dropping the pool closes the job queue and
//! joins every helper (orderly shutdown).

use std::sync::Mutex;
use std::thread::JoinHandle;

use crossbeam_channel::{unbounded, Receiver, Sender};

use crate::ctx::Ctx;
use crate::unwind::WORKER_THREAD_NAME;

type Job = Box<dyn FnOnce() + Send + 'static>;

pub(crate) struct Pool {
    jobs: Option<Sender<Job>>,
    queue: Receiver<Job>,
    workers: Mutex<Vec<JoinHandle<()>>>,
}

impl Pool {
    /// A pool without helpers.
    pub(crate) fn new() -> Pool {
        // Unbounded is safe here: a MapReduce call submits at most `threads - 1` jobs per
        // phase and does not start the next phase before every job a helper took has
        // reported; a job nobody took in time is run by the caller and stays queued only
        // as an empty shell until a helper pops it.
        let (tx, rx) = unbounded::<Job>();
        Pool {
            jobs: Some(tx),
            queue: rx,
            workers: Mutex::new(Vec::new()),
        }
    }

    /// Start helpers until there are `n`; each new one takes the next core of `ctx`'s
    /// round robin when the run pins its threads. Returns how many helpers there are
    /// (fewer than `n` only when the OS refused a thread).
    pub(crate) fn grow_to(&self, n: usize, ctx: &Ctx) -> usize {
        let mut workers = self.workers.lock().unwrap_or_else(|e| e.into_inner());
        while workers.len() < n {
            let rx = self.queue.clone();
            let core = ctx.take_core();
            let spawned = std::thread::Builder::new()
                .name(WORKER_THREAD_NAME.into())
                .spawn(move || {
                    if let Some(core) = core {
                        let _ = core_affinity::set_for_current(core);
                    }
                    for job in rx.iter() {
                        job();
                    }
                });
            match spawned {
                Ok(handle) => workers.push(handle),
                // Out of threads: the caller then maps too and runs every job nobody
                // takes (see the MapReduce phase), so fewer helpers only cost parallelism.
                Err(_) => break,
            }
        }
        workers.len()
    }

    /// How many helpers are running.
    #[cfg(test)]
    pub(crate) fn helpers(&self) -> usize {
        self.workers.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    pub(crate) fn submit(&self, job: impl FnOnce() + Send + 'static) {
        if let Some(tx) = &self.jobs {
            // Cannot fail: the pool itself holds a receiver until it is dropped.
            let _ = tx.send(Box::new(job));
        }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.jobs = None;
        let workers = std::mem::take(self.workers.get_mut().unwrap_or_else(|e| e.into_inner()));
        for w in workers {
            let _ = w.join();
        }
    }
}
