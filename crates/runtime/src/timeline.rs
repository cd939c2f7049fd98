//! A timeline of one run of a design: which thread ran which block when, written as
//! Chrome trace events (Perfetto, chrome://tracing: one track per thread).
//!
//! [`Plan::build_traced`](crate::Plan::build_traced) wraps every block of the design in a
//! closure that records each call with a [`Recorder`]; a program built the ordinary way
//! has no such wrapper, so measured runs pay nothing for this. The recorder takes a lock
//! per call: a traced run shows the order of work, not timings to quote (measure with
//! `bench`). Blocks only: MapReduce's map and reduce kernels run inside one element and
//! are not broken down.

use std::io::{self, Write};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::ThreadId;
use std::time::Instant;

use crate::kernel::BlockFn;

/// One call of a block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    /// The thread, numbered from 0 in the order threads first called a block.
    pub thread: usize,
    pub block: Arc<str>,
    /// Nanoseconds since the recorder was made.
    pub start_ns: u64,
    pub end_ns: u64,
}

#[derive(Default)]
struct Calls {
    threads: Vec<(ThreadId, String)>,
    calls: Vec<Call>,
}

/// Collects the calls of the blocks of one traced program.
pub struct Recorder {
    origin: Instant,
    inner: Mutex<Calls>,
}

impl Recorder {
    pub fn new() -> Arc<Recorder> {
        Arc::new(Recorder {
            origin: Instant::now(),
            inner: Mutex::new(Calls::default()),
        })
    }

    /// `f`, recording each call as a call of `block`.
    pub(crate) fn wrap(self: &Arc<Self>, block: &str, f: BlockFn) -> BlockFn {
        let rec = Arc::clone(self);
        let name: Arc<str> = block.into();
        Arc::new(move |x| {
            let start = rec.origin.elapsed().as_nanos() as u64;
            let y = f(x);
            let end = rec.origin.elapsed().as_nanos() as u64;
            rec.record(&name, start, end.max(start));
            y
        })
    }

    fn record(&self, block: &Arc<str>, start_ns: u64, end_ns: u64) {
        let me = std::thread::current();
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let thread = match inner.threads.iter().position(|(id, _)| *id == me.id()) {
            Some(i) => i,
            None => {
                let name = me.name().unwrap_or("thread").to_string();
                inner.threads.push((me.id(), name));
                inner.threads.len() - 1
            }
        };
        inner.calls.push(Call {
            thread,
            block: Arc::clone(block),
            start_ns,
            end_ns,
        });
    }

    /// The calls recorded so far, in the order they ended.
    pub fn calls(&self) -> Vec<Call> {
        let inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        inner.calls.clone()
    }

    /// Threads that called a block.
    pub fn threads(&self) -> usize {
        let inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        inner.threads.len()
    }

    /// The calls as a Chrome trace (JSON Object form): process `design`, one named track
    /// per thread, one complete event per call with `ts`/`dur` in microseconds.
    pub fn write_chrome(&self, out: &mut dyn Write, design: &str) -> io::Result<()> {
        let inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let quote = |s: &str| serde_json::to_string(s).unwrap_or_else(|_| "\"?\"".into());
        let micros = |ns: u64| format!("{}.{:03}", ns / 1000, ns % 1000);
        write!(
            out,
            "{{\"displayTimeUnit\":\"ns\",\"otherData\":{{\"design\":{}}},\"traceEvents\":[\n{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":0,\"tid\":0,\"args\":{{\"name\":{}}}}}",
            quote(design),
            quote(design)
        )?;
        for (i, (_, name)) in inner.threads.iter().enumerate() {
            write!(
                out,
                ",\n{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":{i},\"args\":{{\"name\":{}}}}}",
                quote(&format!("thread {i} ({name})"))
            )?;
        }
        for c in &inner.calls {
            write!(
                out,
                ",\n{{\"name\":{},\"cat\":\"block\",\"ph\":\"X\",\"ts\":{},\"dur\":{},\"pid\":0,\"tid\":{}}}",
                quote(&c.block),
                micros(c.start_ns),
                micros(c.end_ns - c.start_ns),
                c.thread
            )?;
        }
        writeln!(out, "\n]}}")
    }
}
