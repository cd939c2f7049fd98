//! A fixed set of persistent worker threads that run boxed jobs: the threads inside one
//! MapReduce node. Jobs catch their own panics (they report them through their result
//! channel), so a worker never dies while the pool lives. Dropping the pool closes the
//! job queue and joins every worker (orderly shutdown).

use std::thread::JoinHandle;

use crossbeam_channel::{unbounded, Sender};

use crate::unwind::WORKER_THREAD_NAME;

type Job = Box<dyn FnOnce() + Send + 'static>;

pub(crate) struct Pool {
    jobs: Option<Sender<Job>>,
    workers: Vec<JoinHandle<()>>,
}

impl Pool {
    /// Start `n` workers; `pin` is called first on each new thread.
    pub(crate) fn new(n: usize, pin: impl Fn() + Send + Sync + Clone + 'static) -> Pool {
        // Unbounded is safe here: a MapReduce call submits exactly `n` jobs and waits for
        // their `n` results before submitting more, so at most `n` jobs per caller queue.
        let (tx, rx) = unbounded::<Job>();
        let workers = (0..n)
            .map(|_| {
                let rx = rx.clone();
                let pin = pin.clone();
                std::thread::Builder::new()
                    .name(WORKER_THREAD_NAME.into())
                    .spawn(move || {
                        pin();
                        for job in rx.iter() {
                            job();
                        }
                    })
                    .expect("the OS refused to start a worker thread")
            })
            .collect();
        Pool {
            jobs: Some(tx),
            workers,
        }
    }

    pub(crate) fn submit(&self, job: impl FnOnce() + Send + 'static) {
        if let Some(tx) = &self.jobs {
            // Cannot fail: the workers hold the receiver until the pool is dropped.
            let _ = tx.send(Box::new(job));
        }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.jobs = None;
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}
