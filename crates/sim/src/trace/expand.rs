//! A collective on a group of ranks written as point-to-point trace actions.
//!
//! SimGrid's time-independent traces name no communicator: a collective action is one over
//! all the ranks of the trace (`MPI_COMM_WORLD`). A converter that meets a collective on a
//! communicator with fewer ranks (or one SimGrid's format has no action for, such as the
//! v-collectives and `reduce_scatter`) writes it instead as the point-to-point messages of a
//! fixed algorithm between the members' world ranks, with tags of their own (negative, so
//! that no program's tag and no tag SimGrid's collectives use internally can match them):
//! a binomial tree for bcast and reduce (MPICH's), reduce then bcast for allreduce and
//! barrier (0 bytes), linear gather(v)/scatter(v) through the root, gather then bcast for
//! allgather(v), every pair at once (non-blocking) for alltoall(v), reduce then scatterv
//! for reduce_scatter. Every member computes the same messages from what it knows locally
//! (the root knows every count; the others their own), so the two ends agree.
//!
//! Messages of an expanded collective replay with point-to-point semantics on every tool;
//! its algorithm is not the MPI library's, which is the price of a format without
//! communicators. The OTF2 converter (`perfcompose-otf2`) writes collectives this way, as
//! `perfcompose record` does.

use super::action::Action;

/// Tags of the expanded collectives.
pub mod tag {
    pub const BARRIER: i32 = -7001;
    pub const BCAST: i32 = -7002;
    pub const REDUCE: i32 = -7003;
    pub const GATHER: i32 = -7004;
    pub const SCATTER: i32 = -7005;
    pub const ALLTOALL: i32 = -7006;
}

/// A communicator as the trace sees it: its members' world ranks, and this rank's index.
pub struct Group<'a> {
    pub members: &'a [u32],
    pub me: usize,
}

impl Group<'_> {
    fn n(&self) -> usize {
        self.members.len()
    }
}

/// Appends the actions of an expanded collective.
pub struct Expander<'a, 'b> {
    pub group: &'a Group<'a>,
    pub out: &'b mut Vec<Action>,
}

impl Expander<'_, '_> {
    fn world(&self, i: usize) -> u32 {
        self.group.members[i]
    }
    fn me_world(&self) -> u32 {
        self.world(self.group.me)
    }
    fn send(&mut self, to: usize, tag: i32, bytes: f64) {
        let dst = self.world(to);
        self.out.push(Action::Send { dst, tag, bytes });
    }
    fn recv(&mut self, from: usize, tag: i32, bytes: f64) {
        let src = self.world(from);
        self.out.push(Action::Recv { src, tag, bytes });
    }
    fn isend(&mut self, to: usize, tag: i32, bytes: f64) {
        let dst = self.world(to);
        self.out.push(Action::Isend { dst, tag, bytes });
    }
    fn irecv(&mut self, from: usize, tag: i32, bytes: f64) {
        let src = self.world(from);
        self.out.push(Action::Irecv { src, tag, bytes });
    }
    fn wait_send(&mut self, to: usize, tag: i32) {
        let (src, dst) = (self.me_world(), self.world(to));
        self.out.push(Action::Wait { src, dst, tag });
    }
    fn wait_recv(&mut self, from: usize, tag: i32) {
        let (src, dst) = (self.world(from), self.me_world());
        self.out.push(Action::Wait { src, dst, tag });
    }

    /// MPICH's binomial broadcast of `bytes` from `root`.
    pub fn bcast(&mut self, root: usize, bytes: f64, tag: i32) {
        let n = self.group.n();
        let vr = (self.group.me + n - root) % n;
        let mut mask = 1;
        while mask < n {
            if vr & mask != 0 {
                self.recv((vr - mask + root) % n, tag, bytes);
                break;
            }
            mask <<= 1;
        }
        mask >>= 1;
        while mask > 0 {
            if vr + mask < n {
                self.send((vr + mask + root) % n, tag, bytes);
            }
            mask >>= 1;
        }
    }

    /// MPICH's binomial reduction of `bytes` to `root` (a commutative operation).
    pub fn reduce(&mut self, root: usize, bytes: f64, tag: i32) {
        let n = self.group.n();
        let vr = (self.group.me + n - root) % n;
        let mut mask = 1;
        while mask < n {
            if vr & mask == 0 {
                let src = vr | mask;
                if src < n {
                    self.recv((src + root) % n, tag, bytes);
                }
            } else {
                self.send(((vr & !mask) + root) % n, tag, bytes);
                break;
            }
            mask <<= 1;
        }
    }

    /// Every member's `bytes[i]` to `root`, which posts all its receives, then waits.
    /// `bytes` is only read at the root for the others, and at `me` for itself.
    pub fn gatherv(&mut self, root: usize, bytes: &dyn Fn(usize) -> f64) {
        let (n, me) = (self.group.n(), self.group.me);
        if me == root {
            let from: Vec<usize> = (0..n).filter(|&i| i != root && bytes(i) > 0.0).collect();
            for &i in &from {
                self.irecv(i, tag::GATHER, bytes(i));
            }
            for &i in &from {
                self.wait_recv(i, tag::GATHER);
            }
        } else if bytes(me) > 0.0 {
            self.send(root, tag::GATHER, bytes(me));
        }
    }

    /// `bytes[i]` from `root` to every member (the root posts all its sends, then waits).
    pub fn scatterv(&mut self, root: usize, bytes: &dyn Fn(usize) -> f64) {
        let (n, me) = (self.group.n(), self.group.me);
        if me == root {
            let to: Vec<usize> = (0..n).filter(|&i| i != root && bytes(i) > 0.0).collect();
            for &i in &to {
                self.isend(i, tag::SCATTER, bytes(i));
            }
            for &i in &to {
                self.wait_send(i, tag::SCATTER);
            }
        } else if bytes(me) > 0.0 {
            self.recv(root, tag::SCATTER, bytes(me));
        }
    }

    /// Every pair at once: `send[j]` to and `recv[j]` from each other member.
    pub fn alltoallv(&mut self, send: &dyn Fn(usize) -> f64, recv: &dyn Fn(usize) -> f64) {
        let (n, me) = (self.group.n(), self.group.me);
        let from: Vec<usize> = (1..n)
            .map(|k| (me + n - k) % n)
            .filter(|&j| recv(j) > 0.0)
            .collect();
        let to: Vec<usize> = (1..n)
            .map(|k| (me + k) % n)
            .filter(|&j| send(j) > 0.0)
            .collect();
        for &j in &from {
            self.irecv(j, tag::ALLTOALL, recv(j));
        }
        for &j in &to {
            self.isend(j, tag::ALLTOALL, send(j));
        }
        for &j in &from {
            self.wait_recv(j, tag::ALLTOALL);
        }
        for &j in &to {
            self.wait_send(j, tag::ALLTOALL);
        }
    }

    /// A barrier: a 0-byte reduction to member 0, then a 0-byte broadcast from it.
    pub fn barrier(&mut self) {
        self.reduce(0, 0.0, tag::BARRIER);
        self.bcast(0, 0.0, tag::BARRIER);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// Each member's actions for `f`, and a check that every message sent is received
    /// with the same size, in order, per (source, destination, tag).
    fn expand_all(members: &[u32], f: impl Fn(&mut Expander)) -> Vec<Vec<Action>> {
        let all: Vec<Vec<Action>> = (0..members.len())
            .map(|me| {
                let g = Group { members, me };
                let mut out = Vec::new();
                f(&mut Expander {
                    group: &g,
                    out: &mut out,
                });
                out
            })
            .collect();
        let mut sent: HashMap<(u32, u32, i32), Vec<f64>> = HashMap::new();
        let mut got: HashMap<(u32, u32, i32), Vec<f64>> = HashMap::new();
        for (i, acts) in all.iter().enumerate() {
            let me = members[i];
            for a in acts {
                match *a {
                    Action::Send { dst, tag, bytes } | Action::Isend { dst, tag, bytes } => {
                        sent.entry((me, dst, tag)).or_default().push(bytes)
                    }
                    Action::Recv { src, tag, bytes } | Action::Irecv { src, tag, bytes } => {
                        got.entry((src, me, tag)).or_default().push(bytes)
                    }
                    _ => {}
                }
            }
        }
        assert_eq!(sent, got, "{all:?}");
        all
    }

    #[test]
    fn every_message_sent_is_received_for_each_algorithm_and_size() {
        for n in 1..=9usize {
            // Members are scattered world ranks, as in a split.
            let members: Vec<u32> = (0..n as u32).map(|i| 3 * i + 1).collect();
            for root in 0..n {
                expand_all(&members, |e| e.bcast(root, 8.0, tag::BCAST));
                expand_all(&members, |e| e.reduce(root, 8.0, tag::REDUCE));
                expand_all(&members, |e| e.gatherv(root, &|i| (i + 1) as f64));
                expand_all(&members, |e| e.scatterv(root, &|i| (i % 2) as f64 * 4.0));
            }
            expand_all(&members, |e| e.barrier());
            let me_of = |e: &Expander| e.group.me;
            expand_all(&members, |e| {
                let me = me_of(e);
                e.alltoallv(&|j| (me * 10 + j) as f64, &|j| (j * 10 + me) as f64)
            });
        }
    }

    #[test]
    fn a_binomial_broadcast_reaches_everyone_once_in_log_rounds() {
        let members: Vec<u32> = (0..8).collect();
        let all = expand_all(&members, |e| e.bcast(3, 1.0, tag::BCAST));
        for (i, acts) in all.iter().enumerate() {
            let recvs = acts
                .iter()
                .filter(|a| matches!(a, Action::Recv { .. }))
                .count();
            assert_eq!(recvs, usize::from(i != 3));
        }
        let root_sends = all[3]
            .iter()
            .filter(|a| matches!(a, Action::Send { .. }))
            .count();
        assert_eq!(root_sends, 3);
    }
}
