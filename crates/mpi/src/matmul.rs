//! Matrix multiplication over the processes of an MPI job, after the matrix-multiplication paper: Fox's
//! broadcast–multiply–roll algorithm on a `q × q` mesh (`q = √P`),
//! `matmul(multiply, procs=P, message=E, bcast=flat|binomial|pipeline[, segments=k])`.
//!
//! Matrices of order `x` are split into blocks of order `m = x/q`; process `(i, j)`
//! (rank `i·q + j`) holds `A_ij`, `B_ij` and computes `C_ij`. At iteration `k = 0 … q−1`
//! the process of column `(i + k) mod q` broadcasts its block of A along row `i`, every
//! process adds the product of that block and its block of B to its block of C
//! ([`crate::matrix`]'s `mm_block`), then the blocks of B move one step up their column.
//! The broadcast is written out with point-to-point messages so that its algorithm is
//! the one the term names:
//!
//! - `flat`: the root sends the block to each other process of the row in turn;
//! - `binomial`: a binomial tree over the row, `⌈log2 q⌉` rounds;
//! - `pipeline`: a chain from the root along the row, the block cut in `segments` pieces
//!   that each process forwards as soon as it has received them.
//!
//! The roll sends and receives at once (a non-blocking send, then the receive). A
//! `1 × 1` mesh sends nothing.

use std::cell::Cell;
use std::ops::Range;

use mpi::traits::*;
use perfcompose_core::term::Broadcast;
use perfcompose_runtime::kernel::BlockFn;
use perfcompose_runtime::{BuildError, Data, Op, Registry};
use perfcompose_sim::trace::Action;

use crate::error::{DesignError, Error, RunFault};
use crate::job::Job;
use crate::matrix::random_block;
use crate::trace::Recording;

/// Message tag of the broadcasts.
const TAG_BCAST: i32 = 41;
/// Message tag of the rolls.
const TAG_ROLL: i32 = 42;

/// Fox's algorithm built for the processes of a job.
pub struct DistributedMatmul {
    name: String,
    kernel: String,
    multiply: BlockFn,
    bcast: Broadcast,
    segments: usize,
    rank: usize,
    /// The mesh side `q`.
    side: usize,
    sent: Cell<u64>,
    recording: Recording,
}

impl DistributedMatmul {
    /// Build `matmul(multiply, procs=P, bcast=...)` for `job` (`P` its processes, a
    /// perfect square); `segments` is used by the pipelined broadcast.
    pub fn new(
        job: &Job,
        registry: &Registry,
        multiply: &str,
        bcast: Broadcast,
        segments: usize,
    ) -> Result<DistributedMatmul, Error> {
        let p = job.size();
        let side = (p as f64).sqrt().round() as usize;
        if side * side != p {
            return Err(DesignError::NotSquare { processes: p }.into());
        }
        let kernel = registry.get(multiply).map_err(DesignError::from)?;
        let Op::Block { f, .. } = kernel.op() else {
            return Err(DesignError::from(BuildError::WrongRole {
                name: multiply.to_string(),
                role: kernel.op().role().to_string(),
                used_as: "the block product of a matmul".into(),
            })
            .into());
        };
        let segments = if bcast == Broadcast::Pipeline {
            segments.max(1)
        } else {
            1
        };
        let mut name = format!("matmul({multiply}, procs={p}, bcast={}", bcast.name());
        if bcast == Broadcast::Pipeline {
            name.push_str(&format!(", segments={segments}"));
        }
        name.push(')');
        Ok(DistributedMatmul {
            name,
            kernel: multiply.to_string(),
            multiply: f,
            bcast,
            segments,
            rank: job.rank(),
            side,
            sent: Cell::new(0),
            recording: Recording::default(),
        })
    }

    /// The design as a term, for messages.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The block product's kernel.
    pub fn kernel(&self) -> &str {
        &self.kernel
    }

    /// Processes of the job.
    pub fn processes(&self) -> usize {
        self.side * self.side
    }

    /// The mesh side `q`.
    pub fn side(&self) -> usize {
        self.side
    }

    /// Payload bytes this process has sent so far.
    pub fn bytes_sent(&self) -> u64 {
        self.sent.get()
    }

    /// Record the runs from now on as a trace, computation at `flops_per_s`.
    pub fn record(&self, flops_per_s: f64) {
        self.recording.start(flops_per_s);
    }

    /// Stop recording; the actions since [`DistributedMatmul::record`].
    pub fn take_recording(&self) -> Option<Vec<Action>> {
        self.recording.take()
    }

    /// The block order of matrices of order `x`, or an error when the mesh does not
    /// divide it.
    pub fn block_order(&self, x: usize) -> Result<usize, Error> {
        if x == 0 || x % self.side != 0 {
            return Err(DesignError::BlockOrder {
                order: x,
                side: self.side,
            }
            .into());
        }
        Ok(x / self.side)
    }

    /// This process's blocks `[A_ij, B_ij]` of `jobs` multiplications of order `x`
    /// (job `t`'s matrices are the same on every process: block `(i, j)` of job `t` is
    /// drawn from a seed of `t`, the matrix and the block's place).
    pub fn inputs(&self, x: usize, jobs: u64) -> Result<Vec<Data>, Error> {
        let m = self.block_order(x)?;
        Ok((0..jobs)
            .map(|t| {
                let (a, b) = self.blocks_of(x, m, t, self.rank / self.side, self.rank % self.side);
                Data::Batch(vec![Data::Floats(a), Data::Floats(b)])
            })
            .collect())
    }

    /// Blocks `(i, j)` of job `t`'s A and B.
    fn blocks_of(&self, x: usize, m: usize, t: u64, i: usize, j: usize) -> (Vec<f64>, Vec<f64>) {
        block_pair(x, self.side, m, t, i, j)
    }

    /// Run jobs; every process of `job` calls this with its own blocks. Every process
    /// ends with its block of each product; rank 0 gets its blocks `C_00`, the others
    /// `None`.
    pub fn run(&self, job: &Job, problems: Vec<Data>) -> Result<Option<Vec<Data>>, Error> {
        let mut answers = Vec::with_capacity(problems.len());
        for problem in problems {
            let c = self.multiply(job, problem)?;
            answers.push(Data::Floats(c));
        }
        Ok((self.rank == 0).then_some(answers))
    }

    /// Every process's block of C for one problem.
    pub fn multiply(&self, job: &Job, problem: Data) -> Result<Vec<f64>, Error> {
        let (a, mut b) = match problem {
            Data::Batch(mut parts) if parts.len() == 2 => {
                match (parts.remove(0), parts.remove(0)) {
                    (Data::Floats(a), Data::Floats(b)) if a.len() == b.len() => (a, b),
                    _ => return Err(self.bad_problem()),
                }
            }
            _ => return Err(self.bad_problem()),
        };
        let q = self.side;
        let (i, j) = (self.rank / q, self.rank % q);
        let mut c = vec![0.0; a.len()];
        let mut received = vec![0.0; a.len()];
        let mut incoming = vec![0.0; b.len()];
        let mut own = Some(a);
        for k in 0..q {
            let root = (i + k) % q;
            // The block of A this iteration multiplies with: this process's own when it
            // is the root (it moves into the product and comes back), else the received one.
            let a_k = if j == root {
                let mut a = own.take().expect("a process is the root once");
                self.broadcast(job, i, root, &mut a);
                a
            } else {
                self.broadcast(job, i, root, &mut received);
                std::mem::take(&mut received)
            };
            let out = (self.multiply)(Data::Batch(vec![
                Data::Floats(a_k),
                Data::Floats(b),
                Data::Floats(c),
            ]));
            let Data::Batch(mut parts) = out else {
                return Err(self.no_blocks_back());
            };
            let (Some(Data::Floats(new_c)), Some(Data::Floats(new_b)), Some(Data::Floats(a_back))) =
                (parts.pop(), parts.pop(), parts.pop())
            else {
                return Err(self.no_blocks_back());
            };
            c = new_c;
            b = new_b;
            if j == root {
                own = Some(a_back);
            } else {
                received = a_back;
            }
            if q > 1 {
                self.roll(job, i, j, &b, &mut incoming);
                std::mem::swap(&mut b, &mut incoming);
            }
        }
        Ok(c)
    }

    fn bad_problem(&self) -> Error {
        RunFault::NotTwoBlocks {
            design: self.name.clone(),
        }
        .into()
    }

    fn no_blocks_back(&self) -> Error {
        RunFault::NoBlocksBack {
            kernel: self.kernel.clone(),
        }
        .into()
    }
}

impl DistributedMatmul {
    /// Broadcast `block` from column `root` along row `row`: the root's `block` is sent,
    /// the others' is overwritten with it.
    fn broadcast(&self, job: &Job, row: usize, root: usize, block: &mut [f64]) {
        let q = self.side;
        if q == 1 {
            return;
        }
        let j = self.rank % q;
        let rel = (j + q - root) % q;
        // The world rank of the process `r` places after the root along the row.
        let at = |r: usize| row * q + (root + r) % q;
        match self.bcast {
            Broadcast::Flat => {
                if rel == 0 {
                    for r in 1..q {
                        self.send(job, at(r), TAG_BCAST, block);
                    }
                } else {
                    self.receive(job, at(0), TAG_BCAST, block);
                }
            }
            Broadcast::Binomial => {
                // Receive from the parent (`rel` minus its lowest set bit), then send to
                // the children `rel + 2^k` for every `2^k` below that bit.
                let mut mask = 1;
                while mask < q {
                    if rel & mask != 0 {
                        self.receive(job, at(rel - mask), TAG_BCAST, block);
                        break;
                    }
                    mask <<= 1;
                }
                mask >>= 1;
                while mask > 0 {
                    if rel + mask < q {
                        self.send(job, at(rel + mask), TAG_BCAST, block);
                    }
                    mask >>= 1;
                }
            }
            Broadcast::Pipeline => {
                for piece in segments(block.len(), self.segments) {
                    if rel > 0 {
                        self.receive(job, at(rel - 1), TAG_BCAST, &mut block[piece.clone()]);
                    }
                    if rel + 1 < q {
                        self.send(job, at(rel + 1), TAG_BCAST, &block[piece]);
                    }
                }
            }
        }
    }

    /// Move this process's block of B one step up its column: send `b` to the process
    /// above (row `i − 1`), receive the block of the one below into `incoming`.
    fn roll(&self, job: &Job, i: usize, j: usize, b: &[f64], incoming: &mut [f64]) {
        let q = self.side;
        let up = ((i + q - 1) % q) * q + j;
        let down = ((i + 1) % q) * q + j;
        let world = job.world();
        let bytes = (b.len() * 8) as f64;
        self.recording.before();
        mpi::request::scope(|scope| {
            let send = world
                .process_at_rank(up as i32)
                .immediate_send_with_tag(scope, b, TAG_ROLL);
            self.recording.after(Action::Isend {
                dst: up as u32,
                tag: TAG_ROLL,
                bytes,
            });
            self.recording.before();
            world
                .process_at_rank(down as i32)
                .receive_into_with_tag(incoming, TAG_ROLL);
            self.recording.after(Action::Recv {
                src: down as u32,
                tag: TAG_ROLL,
                bytes,
            });
            self.recording.before();
            send.wait();
            self.recording.after(Action::Wait {
                src: self.rank as u32,
                dst: up as u32,
                tag: TAG_ROLL,
            });
        });
        self.sent.set(self.sent.get() + b.len() as u64 * 8);
    }

    fn send(&self, job: &Job, to: usize, tag: i32, data: &[f64]) {
        let bytes = (data.len() * 8) as f64;
        self.recording.before();
        job.world()
            .process_at_rank(to as i32)
            .send_with_tag(data, tag);
        self.recording.after(Action::Send {
            dst: to as u32,
            tag,
            bytes,
        });
        self.sent.set(self.sent.get() + data.len() as u64 * 8);
    }

    fn receive(&self, job: &Job, from: usize, tag: i32, into: &mut [f64]) {
        let bytes = (into.len() * 8) as f64;
        self.recording.before();
        job.world()
            .process_at_rank(from as i32)
            .receive_into_with_tag(into, tag);
        self.recording.after(Action::Recv {
            src: from as u32,
            tag,
            bytes,
        });
    }
}

/// `len` values cut into `k` contiguous pieces whose lengths differ by at most one
/// (empty pieces left out).
fn segments(len: usize, k: usize) -> Vec<Range<usize>> {
    let k = k.clamp(1, len.max(1));
    (0..k)
        .map(|s| (s * len / k)..((s + 1) * len / k))
        .filter(|r| !r.is_empty())
        .collect()
}

/// Blocks `(i, j)` of job `t`'s matrices A and B of order `x` on a `q × q` mesh (blocks of
/// order `m`).
pub fn block_pair(
    x: usize,
    q: usize,
    m: usize,
    t: u64,
    i: usize,
    j: usize,
) -> (Vec<f64>, Vec<f64>) {
    let place = ((x as u64) << 40) ^ ((q as u64) << 32) ^ ((i * q + j) as u64);
    let seed = t.wrapping_mul(0x1_0000_0001) ^ place;
    (random_block(m, 2 * seed), random_block(m, 2 * seed + 1))
}

/// The whole matrices A and B of job `t` (order `x`, on a `q × q` mesh), assembled from
/// their blocks, row by row: for checking a distributed product.
pub fn whole_matrices(x: usize, q: usize, t: u64) -> (Vec<f64>, Vec<f64>) {
    let m = x / q;
    let mut a = vec![0.0; x * x];
    let mut b = vec![0.0; x * x];
    for i in 0..q {
        for j in 0..q {
            let (ab, bb) = block_pair(x, q, m, t, i, j);
            for r in 0..m {
                let row = (i * m + r) * x + j * m;
                a[row..row + m].copy_from_slice(&ab[r * m..(r + 1) * m]);
                b[row..row + m].copy_from_slice(&bb[r * m..(r + 1) * m]);
            }
        }
    }
    (a, b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_cover_the_block_in_order() {
        let s = segments(10, 3);
        assert_eq!(s, vec![0..3, 3..6, 6..10]);
        assert_eq!(segments(2, 5), vec![0..1, 1..2]);
        assert_eq!(segments(7, 1), vec![0..7]);
    }

    #[test]
    fn blocks_assemble_into_the_whole_matrices() {
        let (a, _) = whole_matrices(6, 3, 1);
        let (a01, _) = block_pair(6, 3, 2, 1, 0, 1);
        // Block (0, 1) sits in rows 0..2, columns 2..4.
        assert_eq!(&a[2..4], &a01[0..2]);
        assert_eq!(&a[6 + 2..6 + 4], &a01[2..4]);
    }
}
