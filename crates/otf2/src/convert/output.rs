//! After every rank's records: the collectives' tables, each rank's text, and the notes.
#![forbid(unsafe_code)]

use std::collections::HashMap;

use perfcompose_sim::trace::write_action;

use super::{Context, Conversion, Counts, RankState, Slot};
use crate::collective::{self, CollCall, CollOp, MissingMember};
use crate::error::{CollectiveError, Error};

/// The (sent, received) of each member's record of the collectives that need them, by
/// communicator and instance.
#[derive(Default)]
pub(super) struct Table {
    entries: HashMap<(u32, u64), Entry>,
}

struct Entry {
    op: CollOp,
    first_rank: u32,
    members: Vec<Option<(f64, f64)>>,
}

impl Table {
    pub(super) fn insert(
        &mut self,
        ctx: &Context,
        call: &CollCall,
        n: usize,
        me: u32,
    ) -> Result<(), Error> {
        let e = self
            .entries
            .entry((call.comm, call.instance))
            .or_insert_with(|| Entry {
                op: call.op,
                first_rank: me,
                members: vec![None; n],
            });
        if e.op != call.op {
            return Err(Error::Collective {
                path: ctx.path.clone(),
                comm: call.comm,
                name: ctx.world.comms[&call.comm].name.clone(),
                instance: call.instance,
                kind: CollectiveError::Mismatch {
                    rank_a: e.first_rank,
                    op_a: e.op.mpi_name(),
                    rank_b: me,
                    op_b: call.op.mpi_name(),
                },
            });
        }
        e.members[call.me] = Some((call.sent, call.received));
        Ok(())
    }

    fn get(&self, comm: u32, instance: u64, member: usize) -> Option<(f64, f64)> {
        self.entries
            .get(&(comm, instance))
            .and_then(|e| e.members.get(member).copied().flatten())
    }
}

pub(super) fn write_texts(
    ctx: &Context,
    ranks: Vec<RankState>,
    table: &Table,
    events: u64,
) -> Result<Conversion, Error> {
    let file = ctx.path.file_name().map_or_else(
        || ctx.path.display().to_string(),
        |f| f.to_string_lossy().into_owned(),
    );
    let mut texts = Vec::with_capacity(ranks.len());
    let mut names = Vec::with_capacity(ranks.len());
    let mut actions = 0u64;
    let mut dropped = 0u64;
    let mut totals = Counts::default();
    let mut no_finalize = Vec::new();
    let mut buf = Vec::new();
    for rank in ranks {
        let mut text = Vec::new();
        for slot in rank.slots {
            buf.clear();
            match slot {
                Slot::Ready(a) | Slot::Irecv(Some(a)) => buf.push(a),
                Slot::Irecv(None) => dropped += 1,
                Slot::Coll(call) => {
                    let info = &ctx.world.comms[&call.comm];
                    let members = &info.members;
                    let others = |j| table.get(call.comm, call.instance, j);
                    collective::actions(&call, members, info.whole_world, &others, &mut buf)
                        .map_err(|MissingMember(j)| Error::Collective {
                            path: ctx.path.clone(),
                            comm: call.comm,
                            name: info.name.clone(),
                            instance: call.instance,
                            kind: CollectiveError::Missing {
                                rank: members[j],
                                op: call.op.mpi_name(),
                            },
                        })?;
                }
            }
            for a in &buf {
                // Writing into memory cannot fail.
                let _ = write_action(&mut text, rank.me, a);
                actions += 1;
            }
        }
        texts.push(text);
        names.push(format!("{file}[rank {}]", rank.me));
        totals.cancelled += rank.counts.cancelled;
        totals.unknown_requests += rank.counts.unknown_requests;
        for (k, v) in rank.counts.not_replayed {
            *totals.not_replayed.entry(k).or_insert(0) += v;
        }
        if rank.counts.no_finalize {
            no_finalize.push(rank.me);
        }
    }
    let mut notes = Vec::new();
    if ctx.world.other_locations > 0 {
        notes.push(format!(
            "{} location(s) of {file} that are not MPI ranks (other threads) were not read: their work is not replayed",
            ctx.world.other_locations
        ));
    }
    if dropped > 0 {
        notes.push(format!(
            "{dropped} MPI_Irecv never completed or cancelled in {file}: left out (a replay would wait for them)"
        ));
    }
    if totals.cancelled > 0 {
        notes.push(format!("{} request(s) cancelled", totals.cancelled));
    }
    if totals.unknown_requests > 0 {
        notes.push(format!(
            "{} completion(s) of requests {file} never posted: a receive is taken as posted at its completion, a send's completion is ignored",
            totals.unknown_requests
        ));
    }
    if !totals.not_replayed.is_empty() {
        let list: Vec<String> = totals
            .not_replayed
            .iter()
            .map(|(k, v)| format!("{k} x{v}"))
            .collect();
        notes.push(format!(
            "not replayed, their time counted as computation: {}",
            list.join(", ")
        ));
    }
    if !no_finalize.is_empty() {
        notes.push(format!(
            "{} rank(s) never enter MPI_Finalize (first: rank {}): their traces end at their last event",
            no_finalize.len(),
            no_finalize[0]
        ));
    }
    Ok(Conversion {
        names,
        texts,
        notes,
        events,
        actions,
    })
}
