//! A collective's end record as trace actions, from Score-P's byte counts.
//!
//! OTF2's `MpiCollectiveEnd` gives the operation, the communicator, the root and the bytes
//! this rank sent and received, counted as Score-P counts them (`scorep_mpi_coll_bytes_*`;
//! `n` members, `b` the bytes of one block, without `MPI_IN_PLACE`):
//!
//! | operation | sent | received |
//! |---|---|---|
//! | barrier | 0 | 0 |
//! | bcast | root `n·b`, others 0 | `b` |
//! | reduce, gather | `b` | root `n·b`, others 0 |
//! | gatherv | own block | root Σ blocks, others 0 |
//! | scatter | root `n·b`, others 0 | `b` |
//! | scatterv | root Σ blocks, others 0 | own block |
//! | allreduce, alltoall, allgather | `n·b` | `n·b` |
//! | allgatherv | `n`·own block | Σ blocks |
//! | alltoallv | Σ sent | Σ received |
//! | reduce_scatter | Σ blocks | `n`·own block |
//! | reduce_scatter_block | `n·b` | `n·b` |
//!
//! With `MPI_IN_PLACE` the rank's own share is left out (`n − 1` instead of `n`); a root
//! whose sent count is 0 is read that way, the all-to-all kinds cannot be told apart and
//! are read as not in place. The block sizes every rank derives must agree for the replay
//! to match its messages, so the counts a rank cannot know alone — each member's block of
//! a v-collective, the per-pair sizes of `alltoallv` — are taken from the other members'
//! records of the same collective (the k-th on the communicator). `alltoallv` records only
//! totals: each member is taken to send `sent / n` to every member.
//!
//! On a communicator that holds every rank, the collectives SimGrid's format has an action
//! for (barrier, bcast, reduce, allreduce, alltoall, allgather, gather, scatter) become
//! that action, the root translated to its world rank, element size 1 (`MPI_BYTE`),
//! reductions costing no flops; everything else is written as point-to-point messages
//! ([`perfcompose_sim::trace::expand`]), as `perfcompose record` writes them.
#![forbid(unsafe_code)]

use perfcompose_sim::trace::expand::{tag, Expander, Group};
use perfcompose_sim::trace::Action;

use crate::sys;

/// The collective operations of OTF2 (`OTF2_CollectiveOp`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CollOp {
    Barrier,
    Bcast,
    Gather,
    Gatherv,
    Scatter,
    Scatterv,
    Allgather,
    Allgatherv,
    Alltoall,
    Alltoallv,
    Alltoallw,
    Allreduce,
    Reduce,
    ReduceScatter,
    Scan,
    Exscan,
    ReduceScatterBlock,
    /// Creating, freeing or allocating communicators and windows: nothing to replay.
    Handle,
}

impl CollOp {
    pub fn from_code(code: u8) -> Option<CollOp> {
        use CollOp::*;
        let c = u32::from(code);
        Some(match c {
            sys::OTF2_CollectiveOp_enum_OTF2_COLLECTIVE_OP_BARRIER => Barrier,
            sys::OTF2_CollectiveOp_enum_OTF2_COLLECTIVE_OP_BCAST => Bcast,
            sys::OTF2_CollectiveOp_enum_OTF2_COLLECTIVE_OP_GATHER => Gather,
            sys::OTF2_CollectiveOp_enum_OTF2_COLLECTIVE_OP_GATHERV => Gatherv,
            sys::OTF2_CollectiveOp_enum_OTF2_COLLECTIVE_OP_SCATTER => Scatter,
            sys::OTF2_CollectiveOp_enum_OTF2_COLLECTIVE_OP_SCATTERV => Scatterv,
            sys::OTF2_CollectiveOp_enum_OTF2_COLLECTIVE_OP_ALLGATHER => Allgather,
            sys::OTF2_CollectiveOp_enum_OTF2_COLLECTIVE_OP_ALLGATHERV => Allgatherv,
            sys::OTF2_CollectiveOp_enum_OTF2_COLLECTIVE_OP_ALLTOALL => Alltoall,
            sys::OTF2_CollectiveOp_enum_OTF2_COLLECTIVE_OP_ALLTOALLV => Alltoallv,
            sys::OTF2_CollectiveOp_enum_OTF2_COLLECTIVE_OP_ALLTOALLW => Alltoallw,
            sys::OTF2_CollectiveOp_enum_OTF2_COLLECTIVE_OP_ALLREDUCE => Allreduce,
            sys::OTF2_CollectiveOp_enum_OTF2_COLLECTIVE_OP_REDUCE => Reduce,
            sys::OTF2_CollectiveOp_enum_OTF2_COLLECTIVE_OP_REDUCE_SCATTER => ReduceScatter,
            sys::OTF2_CollectiveOp_enum_OTF2_COLLECTIVE_OP_SCAN => Scan,
            sys::OTF2_CollectiveOp_enum_OTF2_COLLECTIVE_OP_EXSCAN => Exscan,
            sys::OTF2_CollectiveOp_enum_OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK => {
                ReduceScatterBlock
            }
            sys::OTF2_CollectiveOp_enum_OTF2_COLLECTIVE_OP_CREATE_HANDLE
            | sys::OTF2_CollectiveOp_enum_OTF2_COLLECTIVE_OP_DESTROY_HANDLE
            | sys::OTF2_CollectiveOp_enum_OTF2_COLLECTIVE_OP_ALLOCATE
            | sys::OTF2_CollectiveOp_enum_OTF2_COLLECTIVE_OP_DEALLOCATE
            | sys::OTF2_CollectiveOp_enum_OTF2_COLLECTIVE_OP_CREATE_HANDLE_AND_ALLOCATE
            | sys::OTF2_CollectiveOp_enum_OTF2_COLLECTIVE_OP_DESTROY_HANDLE_AND_DEALLOCATE => {
                Handle
            }
            _ => return None,
        })
    }

    /// The MPI name, for messages.
    pub fn mpi_name(self) -> &'static str {
        use CollOp::*;
        match self {
            Barrier => "MPI_Barrier",
            Bcast => "MPI_Bcast",
            Gather => "MPI_Gather",
            Gatherv => "MPI_Gatherv",
            Scatter => "MPI_Scatter",
            Scatterv => "MPI_Scatterv",
            Allgather => "MPI_Allgather",
            Allgatherv => "MPI_Allgatherv",
            Alltoall => "MPI_Alltoall",
            Alltoallv => "MPI_Alltoallv",
            Alltoallw => "MPI_Alltoallw",
            Allreduce => "MPI_Allreduce",
            Reduce => "MPI_Reduce",
            ReduceScatter => "MPI_Reduce_scatter",
            Scan => "MPI_Scan",
            Exscan => "MPI_Exscan",
            ReduceScatterBlock => "MPI_Reduce_scatter_block",
            Handle => "communicator or window management",
        }
    }

    /// Whether it has a root.
    pub fn rooted(self) -> bool {
        use CollOp::*;
        matches!(self, Bcast | Gather | Gatherv | Scatter | Scatterv | Reduce)
    }

    /// Whether the conversion replays it (the others' time counts as computation).
    pub fn replayed(self) -> bool {
        !matches!(
            self,
            CollOp::Alltoallw | CollOp::Scan | CollOp::Exscan | CollOp::Handle
        )
    }

    /// Whether the actions of one member depend on the other members' records.
    pub fn needs_others(self) -> bool {
        use CollOp::*;
        matches!(
            self,
            Gatherv | Scatterv | Allgatherv | Alltoallv | ReduceScatter
        )
    }
}

/// One rank's end record of a collective, on a communicator of more than one rank.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CollCall {
    pub op: CollOp,
    pub comm: u32,
    /// Which collective on the communicator (from 1).
    pub instance: u64,
    /// Root as an index among the members.
    pub root: Option<usize>,
    /// This rank's index among the members.
    pub me: usize,
    pub sent: f64,
    pub received: f64,
}

/// A member whose record of the collective is missing (its index among the members).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MissingMember(pub usize);

/// Append the actions of `call`, on a communicator of `members` (world ranks) that holds
/// every rank when `whole_world`; `others(j)` gives member `j`'s (sent, received) for
/// collectives that [need them](CollOp::needs_others).
pub fn actions(
    call: &CollCall,
    members: &[u32],
    whole_world: bool,
    others: &dyn Fn(usize) -> Option<(f64, f64)>,
    out: &mut Vec<Action>,
) -> Result<(), MissingMember> {
    let n = members.len();
    if n <= 1 || !call.op.replayed() {
        return Ok(());
    }
    let nf = n as f64;
    let (me, sent, received) = (call.me, call.sent, call.received);
    let root = call.root.unwrap_or(0);
    let is_root = me == root;
    // The block of a rooted all-to-one (gather, reduce) and one-to-all (scatter) operation.
    let in_place_share = |total: f64| if n > 1 { total / (nf - 1.0) } else { 0.0 };
    let gather_block = || {
        if !is_root || sent > 0.0 {
            sent
        } else {
            in_place_share(received)
        }
    };
    let scatter_block = || {
        if !is_root || received > 0.0 {
            received
        } else {
            in_place_share(sent)
        }
    };
    let world_root = members[root];
    use CollOp::*;
    if whole_world {
        let native = match call.op {
            Barrier => Some(Action::Barrier),
            Bcast => Some(Action::Bcast {
                bytes: if received > 0.0 { received } else { sent / nf },
                root: world_root,
            }),
            Reduce => Some(Action::Reduce {
                bytes: gather_block(),
                flops: 0.0,
                root: world_root,
                dt: 1.0,
            }),
            Allreduce => Some(Action::AllReduce {
                bytes: sent / nf,
                flops: 0.0,
                dt: 1.0,
            }),
            Alltoall => Some(Action::AllToAll {
                send_bytes: sent / nf,
                recv_bytes: received / nf,
            }),
            Allgather => Some(Action::AllGather {
                send_bytes: sent / nf,
                recv_bytes: received / nf,
            }),
            Gather => {
                let b = gather_block();
                Some(Action::Gather {
                    send_bytes: b,
                    recv_bytes: b,
                    root: world_root,
                })
            }
            Scatter => {
                let b = scatter_block();
                Some(Action::Scatter {
                    send_bytes: b,
                    recv_bytes: b,
                    root: world_root,
                })
            }
            _ => None,
        };
        if let Some(a) = native {
            out.push(a);
            return Ok(());
        }
    }
    // The other members' counts, all read first so that a missing one is an error
    // before anything is written.
    let table: Vec<(f64, f64)> = if call.op.needs_others() {
        (0..n)
            .map(|j| {
                if j == me {
                    Ok((sent, received))
                } else {
                    others(j).ok_or(MissingMember(j))
                }
            })
            .collect::<Result<_, _>>()?
    } else {
        Vec::new()
    };
    let group = Group { members, me };
    let mut e = Expander { group: &group, out };
    match call.op {
        Barrier => e.barrier(),
        Bcast => e.bcast(
            root,
            if received > 0.0 { received } else { sent / nf },
            tag::BCAST,
        ),
        Reduce => e.reduce(root, gather_block(), tag::REDUCE),
        Allreduce => {
            e.reduce(0, sent / nf, tag::REDUCE);
            e.bcast(0, sent / nf, tag::BCAST);
        }
        Alltoall => e.alltoallv(&|_| sent / nf, &|_| received / nf),
        Allgather => {
            e.gatherv(0, &|_| sent / nf);
            e.bcast(0, received, tag::BCAST);
        }
        Gather => {
            let b = gather_block();
            e.gatherv(root, &|_| b);
        }
        Scatter => {
            let b = scatter_block();
            e.scatterv(root, &|_| b);
        }
        Gatherv => e.gatherv(root, &|j| table[j].0),
        Scatterv => e.scatterv(root, &|j| table[j].1),
        Allgatherv => {
            let total: f64 = table.iter().map(|t| t.0 / nf).sum();
            e.gatherv(0, &|j| table[j].0 / nf);
            e.bcast(0, total, tag::BCAST);
        }
        Alltoallv => e.alltoallv(&|_| sent / nf, &|j| table[j].0 / nf),
        ReduceScatter => {
            let total: f64 = table.iter().map(|t| t.1 / nf).sum();
            e.reduce(0, total, tag::REDUCE);
            e.scatterv(0, &|j| table[j].1 / nf);
        }
        ReduceScatterBlock => {
            let block = received / nf;
            e.reduce(0, block * nf, tag::REDUCE);
            e.scatterv(0, &|_| block);
        }
        Alltoallw | Scan | Exscan | Handle => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(op: CollOp, root: Option<usize>, me: usize, sent: f64, received: f64) -> CollCall {
        CollCall {
            op,
            comm: 0,
            instance: 1,
            root,
            me,
            sent,
            received,
        }
    }

    fn run(c: &CollCall, members: &[u32], whole: bool, others: &[(f64, f64)]) -> Vec<Action> {
        let mut out = Vec::new();
        actions(c, members, whole, &|j| others.get(j).copied(), &mut out).unwrap();
        out
    }

    #[test]
    fn scorep_counts_become_simgrid_actions_on_the_whole_world() {
        let w = [0, 1, 2, 3];
        // bcast of 100 bytes from rank 1: the root sent 4 × 100, everyone received 100.
        let a = run(
            &call(CollOp::Bcast, Some(1), 1, 400.0, 100.0),
            &w,
            true,
            &[],
        );
        assert_eq!(
            a,
            vec![Action::Bcast {
                bytes: 100.0,
                root: 1
            }]
        );
        // reduce to rank 2: in place at the root (sent 0, received 3 × 8).
        let a = run(&call(CollOp::Reduce, Some(2), 2, 0.0, 24.0), &w, true, &[]);
        assert_eq!(
            a,
            vec![Action::Reduce {
                bytes: 8.0,
                flops: 0.0,
                root: 2,
                dt: 1.0
            }]
        );
        let a = run(&call(CollOp::Allreduce, None, 0, 32.0, 32.0), &w, true, &[]);
        assert_eq!(
            a,
            vec![Action::AllReduce {
                bytes: 8.0,
                flops: 0.0,
                dt: 1.0
            }]
        );
        // A root given as an index among members is written as its world rank.
        let rev = [3, 2, 1, 0];
        let a = run(
            &call(CollOp::Scatter, Some(0), 2, 0.0, 50.0),
            &rev,
            true,
            &[],
        );
        assert_eq!(
            a,
            vec![Action::Scatter {
                send_bytes: 50.0,
                recv_bytes: 50.0,
                root: 3
            }]
        );
    }

    #[test]
    fn a_v_collective_takes_its_blocks_from_the_other_members() {
        // gatherv to member 0 of [5, 7]: member 1 brought 300 bytes.
        let m = [5, 7];
        let a = run(
            &call(CollOp::Gatherv, Some(0), 0, 100.0, 400.0),
            &m,
            false,
            &[(100.0, 400.0), (300.0, 0.0)],
        );
        assert_eq!(
            a,
            vec![
                Action::Irecv {
                    src: 7,
                    tag: tag::GATHER,
                    bytes: 300.0
                },
                Action::Wait {
                    src: 7,
                    dst: 5,
                    tag: tag::GATHER
                }
            ]
        );
        // A missing member's record is an error, not a guess.
        let mut out = Vec::new();
        let e = actions(
            &call(CollOp::Gatherv, Some(0), 0, 100.0, 400.0),
            &m,
            false,
            &|_| None,
            &mut out,
        )
        .unwrap_err();
        assert_eq!(e, MissingMember(1));
        assert!(out.is_empty());
    }

    #[test]
    fn every_member_derives_matching_messages() {
        use std::collections::HashMap;
        // Four members of a split, each collective from every member's own record.
        let members = [1u32, 4, 6, 9];
        let n = members.len();
        // (operation, root, each member's (sent, received))
        type Case = (CollOp, Option<usize>, Vec<(f64, f64)>);
        let cases: Vec<Case> = vec![
            (CollOp::Barrier, None, vec![(0.0, 0.0); n]),
            (
                CollOp::Bcast,
                Some(2),
                (0..n)
                    .map(|i| (if i == 2 { 40.0 } else { 0.0 }, 10.0))
                    .collect(),
            ),
            (
                CollOp::Reduce,
                Some(1),
                (0..n)
                    .map(|i| (8.0, if i == 1 { 32.0 } else { 0.0 }))
                    .collect(),
            ),
            (CollOp::Allreduce, None, vec![(32.0, 32.0); n]),
            (CollOp::Alltoall, None, vec![(400.0, 400.0); n]),
            (CollOp::Allgather, None, vec![(20.0, 20.0); n]),
            (
                CollOp::Gatherv,
                Some(3),
                vec![(1.0, 0.0), (2.0, 0.0), (3.0, 0.0), (4.0, 10.0)],
            ),
            (
                CollOp::Scatterv,
                Some(0),
                vec![(10.0, 1.0), (0.0, 2.0), (0.0, 3.0), (0.0, 4.0)],
            ),
            (
                CollOp::Allgatherv,
                None,
                vec![(4.0, 10.0), (8.0, 10.0), (12.0, 10.0), (16.0, 10.0)],
            ),
            (
                CollOp::Alltoallv,
                None,
                vec![(4.0, 0.0), (8.0, 0.0), (12.0, 0.0), (16.0, 0.0)],
            ),
            (
                CollOp::ReduceScatter,
                None,
                vec![(10.0, 4.0), (10.0, 8.0), (10.0, 12.0), (10.0, 16.0)],
            ),
            (CollOp::ReduceScatterBlock, None, vec![(16.0, 16.0); n]),
        ];
        for (op, root, counts) in cases {
            let mut sent: HashMap<(u32, u32, i32), Vec<f64>> = HashMap::new();
            let mut got: HashMap<(u32, u32, i32), Vec<f64>> = HashMap::new();
            for me in 0..n {
                let c = call(op, root, me, counts[me].0, counts[me].1);
                for a in run(&c, &members, false, &counts) {
                    match a {
                        Action::Send { dst, tag, bytes } | Action::Isend { dst, tag, bytes } => {
                            sent.entry((members[me], dst, tag)).or_default().push(bytes)
                        }
                        Action::Recv { src, tag, bytes } | Action::Irecv { src, tag, bytes } => {
                            got.entry((src, members[me], tag)).or_default().push(bytes)
                        }
                        _ => {}
                    }
                }
            }
            assert_eq!(sent, got, "{op:?}");
        }
    }

    #[test]
    fn collectives_not_replayed_and_single_member_ones_write_nothing() {
        let w = [0, 1];
        assert!(run(&call(CollOp::Scan, None, 0, 8.0, 8.0), &w, true, &[]).is_empty());
        assert!(run(&call(CollOp::Handle, None, 0, 0.0, 0.0), &w, true, &[]).is_empty());
        assert!(run(
            &call(CollOp::Allreduce, None, 0, 8.0, 8.0),
            &[3],
            false,
            &[]
        )
        .is_empty());
        assert_eq!(CollOp::from_code(250), None);
        assert_eq!(CollOp::from_code(11), Some(CollOp::Allreduce));
    }
}
