//! Hypercube divide and conquer over the processes of an MPI job (the divide-and-conquer paper):
//! `dc(divide, combine, leaf, procs=P, exchange=E, size=K)` with `P` the job's processes,
//! a power of two.
//!
//! One job is one problem of size `x`, which every process makes itself (nothing is
//! scattered). At level `j = 0 … log2 P − 1` every process divides its problem in two and
//! keeps the half bit `j` of its rank names, so that after `log2 P` levels each holds its
//! own `1/P` share; it solves that share with `leaf`; then, level by level back up, it
//! exchanges its result with its partner across dimension `j` (rank `r XOR 2^j`; both send
//! and receive) and combines the two. Every process ends with the whole answer; rank 0's
//! counts. This is the paper's cost structure: `Σ_j [Div(S/2^j) + Comb + Ex(K_j)] +
//! Seq(S/P)` with one exchange of the result (`K` words) per level.

use std::cell::Cell;

use mpi::traits::*;
use perfcompose_runtime::kernel::BlockFn;
use perfcompose_runtime::{BuildError, Data, Op, Registry};
use perfcompose_sim::trace::Action;

use crate::error::{DesignError, Error, RunFault};
use crate::job::Job;
use crate::trace::Recording;

/// Message tag of the exchanges.
const TAG_EXCHANGE: i32 = 31;

/// A hypercube divide and conquer built for the processes of a job.
pub struct DistributedDc {
    name: String,
    kernels: [String; 3],
    divide: BlockFn,
    combine: BlockFn,
    leaf: BlockFn,
    rank: usize,
    processes: usize,
    levels: u32,
    sent: Cell<u64>,
    recording: Recording,
}

fn block(registry: &Registry, name: &str, role: &str) -> Result<BlockFn, Error> {
    let kernel = registry.get(name).map_err(DesignError::from)?;
    match kernel.op() {
        Op::Block { f, .. } => Ok(f),
        other => Err(DesignError::from(BuildError::WrongRole {
            name: name.to_string(),
            role: other.role().to_string(),
            used_as: format!("the {role} of a dc"),
        })
        .into()),
    }
}

impl DistributedDc {
    /// Build `dc(divide, combine, leaf, procs=P)` for `job` (`P` its processes, a power
    /// of two).
    pub fn new(
        job: &Job,
        registry: &Registry,
        divide: &str,
        combine: &str,
        leaf: &str,
    ) -> Result<DistributedDc, Error> {
        let p = job.size();
        if !p.is_power_of_two() {
            return Err(DesignError::NotPowerOfTwo { processes: p }.into());
        }
        Ok(DistributedDc {
            name: format!("dc({divide}, {combine}, {leaf}, procs={p})"),
            kernels: [divide.to_string(), combine.to_string(), leaf.to_string()],
            divide: block(registry, divide, "divide")?,
            combine: block(registry, combine, "combine")?,
            leaf: block(registry, leaf, "leaf")?,
            rank: job.rank(),
            processes: p,
            levels: p.trailing_zeros(),
            sent: Cell::new(0),
            recording: Recording::default(),
        })
    }

    /// The design as a term, for messages.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The divide, combine and leaf kernels.
    pub fn kernels(&self) -> &[String; 3] {
        &self.kernels
    }

    /// Processes of the job.
    pub fn processes(&self) -> usize {
        self.processes
    }

    /// Payload bytes this process has sent so far.
    pub fn bytes_sent(&self) -> u64 {
        self.sent.get()
    }

    /// Record the runs from now on as a trace, computation at `flops_per_s`.
    pub fn record(&self, flops_per_s: f64) {
        self.recording.start(flops_per_s);
    }

    /// Stop recording; the actions since [`DistributedDc::record`].
    pub fn take_recording(&self) -> Option<Vec<Action>> {
        self.recording.take()
    }

    /// Run jobs; every process of `job` calls this with the same problems. Rank 0 gets
    /// each job's answer, the others `None`.
    pub fn run(&self, job: &Job, problems: Vec<Data>) -> Result<Option<Vec<Data>>, Error> {
        let mut answers = Vec::with_capacity(problems.len());
        for problem in problems {
            let mut share = problem;
            for j in 0..self.levels {
                let Data::Batch(mut halves) = (self.divide)(share) else {
                    return Err(RunFault::NotSplit {
                        kernel: self.kernels[0].clone(),
                    }
                    .into());
                };
                if halves.len() != 2 {
                    return Err(RunFault::Parts {
                        kernel: self.kernels[0].clone(),
                        parts: halves.len(),
                    }
                    .into());
                }
                let second = halves.pop().expect("two halves");
                let first = halves.pop().expect("two halves");
                share = if (self.rank >> j) & 1 == 0 {
                    first
                } else {
                    second
                };
            }
            let mut result = (self.leaf)(share);
            for j in (0..self.levels).rev() {
                let partner = self.rank ^ (1 << j);
                let theirs = self.exchange(job, partner, &result)?;
                result = (self.combine)(Data::Batch(vec![result, theirs]));
            }
            answers.push(result);
        }
        Ok((self.rank == 0).then_some(answers))
    }

    /// Send `mine` to `partner` and receive its result (integer results only).
    fn exchange(&self, job: &Job, partner: usize, mine: &Data) -> Result<Data, Error> {
        let Data::Ints(words) = mine else {
            return Err(RunFault::NotIntegers {
                design: self.name.clone(),
                got: mine.kind(),
            }
            .into());
        };
        let peer = job.world().process_at_rank(partner as i32);
        let bytes = (words.len() * 4) as u64;
        self.recording.before();
        let theirs = mpi::request::scope(|scope| {
            let send = peer.immediate_send_with_tag(scope, &words[..], TAG_EXCHANGE);
            self.recording.after(Action::Isend {
                dst: partner as u32,
                tag: TAG_EXCHANGE,
                bytes: bytes as f64,
            });
            self.recording.before();
            let (theirs, _) = peer.receive_vec_with_tag::<i32>(TAG_EXCHANGE);
            self.recording.after(Action::Recv {
                src: partner as u32,
                tag: TAG_EXCHANGE,
                bytes: (theirs.len() * 4) as f64,
            });
            self.recording.before();
            send.wait();
            self.recording.after(Action::Wait {
                src: self.rank as u32,
                dst: partner as u32,
                tag: TAG_EXCHANGE,
            });
            theirs
        });
        self.sent.set(self.sent.get() + bytes);
        Ok(Data::Ints(theirs))
    }
}
