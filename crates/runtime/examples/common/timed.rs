//! Shared by the diagnostic examples: a registered block wrapped so that the time of each
//! of its calls (ns, two clock readings around the call) goes to a callback; everything
//! else is the inner kernel's.

use std::sync::Arc;
use std::time::Instant;

use perfcompose_runtime::kernel::{Inputs, Kernel, Op};
use perfcompose_runtime::{Data, KernelError};

pub struct Timed {
    pub name: String,
    pub inner: Arc<dyn Kernel>,
    /// Called after every call with its time in ns.
    pub record: Arc<dyn Fn(u64) + Send + Sync>,
}

impl Kernel for Timed {
    fn name(&self) -> &str {
        &self.name
    }
    fn summary(&self) -> &str {
        self.inner.summary()
    }
    fn op(&self) -> Op {
        match self.inner.op() {
            Op::Block { input, output, f } => {
                let record = self.record.clone();
                Op::Block {
                    input,
                    output,
                    f: Arc::new(move |d: Data| {
                        let t0 = Instant::now();
                        let out = f(d);
                        record(t0.elapsed().as_nanos() as u64);
                        out
                    }),
                }
            }
            other => other,
        }
    }
    fn size_meaning(&self) -> &str {
        self.inner.size_meaning()
    }
    fn input(&self, x: usize, inputs: &Inputs) -> Result<Data, KernelError> {
        self.inner.input(x, inputs)
    }
    fn input_bytes(&self, x: usize, inputs: &Inputs) -> u128 {
        self.inner.input_bytes(x, inputs)
    }
    fn writes(&self) -> bool {
        self.inner.writes()
    }
}
