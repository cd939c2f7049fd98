//! Replaying a rank's trace: actions, the point-to-point operations collectives expand
//! to, the request storage SMPI's replay keeps, compute and sleep.

use super::config::TEST_SLEEP;
use super::fxhash::FxMap;
use super::queue::Ev;
use super::report::SimError;
use super::sim::Sim;
use super::state::{BusyKind, Key, State};
use crate::coll::{self, Call, Op};
use crate::timeline::{blocking_activity, Activity, Span};
use crate::trace::Action;

/// Recency stacks of pending requests are compacted when they reach a power of two at
/// least this long.
const RECENT_COMPACT: usize = 256;

impl Sim<'_> {
    pub(super) fn run_rank(&mut self, r: u32) -> Result<(), SimError> {
        loop {
            let st = self.ranks[r as usize].state;
            if st != State::Running {
                return Ok(());
            }
            if let Some(op) = self.ranks[r as usize].ops.pop_front() {
                self.exec_op(r, op)?;
                continue;
            }
            match self.reader.next(r)? {
                None => {
                    self.finish_trace(r);
                    return Ok(());
                }
                Some(loc) => {
                    self.actions += 1;
                    let action = loc.action.clone();
                    let rank = &mut self.ranks[r as usize];
                    rank.actions += 1;
                    rank.cur = Some(loc);
                    self.exec_action(r, action)?;
                }
            }
        }
    }

    fn exec_action(&mut self, r: u32, a: Action) -> Result<(), SimError> {
        match a {
            Action::Init | Action::Finalize | Action::NoOp => {}
            Action::Compute { flops } => self.compute(r, flops),
            Action::Sleep { seconds } => self.sleep(r, seconds, BusyKind::Sleep),
            Action::Send { dst, tag, bytes } => {
                let q = self.post_send(r, dst, tag, bytes)?;
                self.block_on_one(r, q);
            }
            Action::Isend { dst, tag, bytes } => {
                let q = self.post_send(r, dst, tag, bytes)?;
                self.store(r, (r, dst, tag), q, true);
            }
            Action::Recv { src, tag, bytes } => {
                let q = self.post_recv(r, src, tag, bytes)?;
                self.block_on_one(r, q);
            }
            Action::Irecv { src, tag, bytes } => {
                let q = self.post_recv(r, src, tag, bytes)?;
                self.store(r, (src, r, tag), q, false);
            }
            Action::Wait { src, dst, tag } => {
                if self.ranks[r as usize].storage.is_empty() {
                    return Err(self.action_error(
                        r,
                        "wait is not preceded by any irecv or isend".into(),
                        Some("SimGrid stops on this too; check the trace".into()),
                    ));
                }
                if let Some(Some(q)) = self.pop_storage(r, (src, dst, tag)) {
                    self.block_on(r, &[q]);
                }
            }
            Action::Test { src, dst, tag } => {
                if let Some(Some(q)) = self.pop_storage(r, (src, dst, tag)) {
                    self.ranks[r as usize].pending_test = Some(((src, dst, tag), q));
                    self.sleep(r, TEST_SLEEP, BusyKind::Sleep);
                }
            }
            Action::WaitAll => {
                let rank = &mut self.ranks[r as usize];
                rank.recent_recv.clear();
                rank.recent_send.clear();
                let mut reqs = std::mem::take(&mut self.scratch);
                reqs.clear();
                reqs.extend(rank.storage.drain(..).filter_map(|(_, q)| q));
                if !reqs.is_empty() {
                    self.block_on(r, &reqs);
                }
                self.scratch = reqs;
            }
            Action::WaitLast => {
                let q = self.pop_recent(r);
                if let Some(q) = q {
                    self.block_on(r, &[q]);
                }
            }
            Action::SendRecv {
                send_bytes,
                dst,
                src,
                recv_bytes,
            } => {
                if !(dst == r && src == r) {
                    let s = self.post_send(r, dst, 0, send_bytes)?;
                    let v = self.post_recv(r, src, 0, recv_bytes)?;
                    self.block_on(r, &[s, v]);
                }
            }
            Action::Barrier => self.collective(r, Call::Barrier, 0.0)?,
            Action::Bcast { bytes, root } => {
                self.collective(r, Call::Bcast { bytes, root }, 0.0)?
            }
            Action::Reduce {
                bytes,
                flops,
                root,
                dt,
            } => {
                let count = if dt > 0.0 {
                    (bytes / dt).round()
                } else {
                    bytes
                };
                self.collective(r, Call::Reduce { count, dt, root }, flops)?
            }
            Action::AllReduce { bytes, flops, dt } => {
                let count = if dt > 0.0 {
                    (bytes / dt).round()
                } else {
                    bytes
                };
                self.collective(r, Call::AllReduce { count, dt }, flops)?
            }
            Action::AllToAll { send_bytes, .. } => {
                self.collective(r, Call::AllToAll { send_bytes }, 0.0)?
            }
            Action::Gather {
                send_bytes, root, ..
            } => self.collective(r, Call::Gather { send_bytes, root }, 0.0)?,
            Action::AllGather { send_bytes, .. } => {
                self.collective(r, Call::AllGather { send_bytes }, 0.0)?
            }
            Action::Scatter {
                send_bytes, root, ..
            } => self.collective(r, Call::Scatter { send_bytes, root }, 0.0)?,
        }
        Ok(())
    }

    fn collective(&mut self, r: u32, call: Call, flops: f64) -> Result<(), SimError> {
        let root = match call {
            Call::Bcast { root, .. }
            | Call::Reduce { root, .. }
            | Call::Gather { root, .. }
            | Call::Scatter { root, .. } => Some(root),
            _ => None,
        };
        if let Some(root) = root {
            if root >= self.n {
                return Err(self.action_error(
                    r,
                    format!("root {root} is not a rank (the trace has {} ranks)", self.n),
                    None,
                ));
            }
        }
        let mut ops = std::mem::take(&mut self.op_buf);
        ops.clear();
        if let Err(m) = coll::expand(call, r, self.n, &self.config.coll, &mut ops) {
            self.op_buf = ops;
            return Err(self.action_error(
                r,
                m,
                Some("choose another algorithm with --coll".into()),
            ));
        }
        if flops > 0.0 {
            ops.push(Op::Compute { flops });
        }
        let rank = &mut self.ranks[r as usize];
        rank.ops.extend(ops.iter().copied());
        self.op_buf = ops;
        Ok(())
    }

    fn exec_op(&mut self, r: u32, op: Op) -> Result<(), SimError> {
        match op {
            Op::Send { peer, tag, bytes } => {
                let q = self.post_send(r, peer, tag, bytes)?;
                self.block_on_one(r, q);
            }
            Op::Recv { peer, tag } => {
                let q = self.post_recv(r, peer, tag, -1.0)?;
                self.block_on_one(r, q);
            }
            Op::Isend { peer, tag, bytes } => {
                let q = self.post_send(r, peer, tag, bytes)?;
                self.ranks[r as usize].slots.push(q);
            }
            Op::Irecv { peer, tag } => {
                let q = self.post_recv(r, peer, tag, -1.0)?;
                self.ranks[r as usize].slots.push(q);
            }
            Op::WaitAll => {
                let slots = std::mem::take(&mut self.ranks[r as usize].slots);
                self.block_on(r, &slots);
                let mut slots = slots;
                slots.clear();
                self.ranks[r as usize].slots = slots;
            }
            Op::Compute { flops } => self.compute(r, flops),
        }
        Ok(())
    }

    /// End of a rank's trace: SMPI waits for the last request of each storage key.
    fn finish_trace(&mut self, r: u32) {
        let storage = std::mem::take(&mut self.ranks[r as usize].storage);
        let mut last_of: FxMap<Key, u32> = FxMap::default();
        for (key, q) in storage {
            if let Some(q) = q {
                if let Some(prev) = last_of.insert(key, q) {
                    self.release(prev);
                }
            }
        }
        let mut last: Vec<u32> = last_of.into_values().collect();
        last.sort_unstable();
        let rank = &mut self.ranks[r as usize];
        rank.finishing = true;
        rank.cur = None;
        if last.is_empty() {
            self.done(r);
        } else {
            self.block_on(r, &last);
            if self.ranks[r as usize].state == State::Running {
                self.done(r);
            }
        }
    }

    fn done(&mut self, r: u32) {
        let rank = &mut self.ranks[r as usize];
        rank.state = State::Done;
        rank.finish_s = self.now;
    }

    fn store(&mut self, r: u32, key: Key, q: u32, send: bool) {
        let serial = self.reqs[q as usize].serial;
        let rank = &mut self.ranks[r as usize];
        rank.storage.push((key, Some(q)));
        let stack = if send {
            &mut rank.recent_send
        } else {
            &mut rank.recent_recv
        };
        stack.push((q, serial));
        // The recency stacks serve dPerf's `wait`; requests waited through other actions
        // leave stale entries behind. Drop them once in a while so memory stays flat.
        if stack.len() >= RECENT_COMPACT && stack.len().is_power_of_two() {
            let reqs = &self.reqs;
            stack.retain(|&(q, s)| {
                let req = &reqs[q as usize];
                req.serial == s && req.held
            });
        }
    }

    fn pop_storage(&mut self, r: u32, key: Key) -> Option<Option<u32>> {
        let rank = &mut self.ranks[r as usize];
        let pos = rank.storage.iter().position(|(k, _)| *k == key)?;
        Some(rank.storage.remove(pos).1)
    }

    /// dPerf's `wait`: the most recent pending irecv, else isend.
    fn pop_recent(&mut self, r: u32) -> Option<u32> {
        loop {
            let rank = &mut self.ranks[r as usize];
            let (q, serial) = match rank.recent_recv.pop() {
                Some(x) => x,
                None => rank.recent_send.pop()?,
            };
            let req = &self.reqs[q as usize];
            if req.serial != serial || !req.held {
                continue; // already waited through another action
            }
            let key = if req.send {
                (r, req.peer, req.tag)
            } else {
                (req.peer, r, req.tag)
            };
            if let Some(pos) = rank.storage.iter().position(|e| *e == (key, Some(q))) {
                rank.storage.remove(pos);
            }
            return Some(q);
        }
    }

    fn compute(&mut self, r: u32, flops: f64) {
        if flops <= 0.0 {
            return;
        }
        let h = self.ranks[r as usize].host;
        let cpu = &self.cpus[h as usize];
        let rank = &mut self.ranks[r as usize];
        rank.state = State::Busy;
        rank.busy_kind = BusyKind::Compute;
        rank.block_start = self.now;
        if !cpu.shared {
            let t = self.now + flops / cpu.speed;
            self.push(t, Ev::Resume(r));
        } else {
            self.cpu_update(h);
            self.ranks[r as usize].exec_left = flops;
            self.cpus[h as usize].running.push(r);
            self.cpu_reschedule(h);
        }
    }

    fn sleep(&mut self, r: u32, seconds: f64, kind: BusyKind) {
        let rank = &mut self.ranks[r as usize];
        rank.state = State::Busy;
        rank.busy_kind = kind;
        rank.block_start = self.now;
        let t = self.now + seconds.max(0.0);
        self.push(t, Ev::Resume(r));
    }

    pub(super) fn end_busy(&mut self, r: u32) {
        let now = self.now;
        let rank = &mut self.ranks[r as usize];
        let d = now - rank.block_start;
        match rank.busy_kind {
            BusyKind::Compute => rank.compute_s += d,
            BusyKind::Sleep => rank.sleep_s += d,
        }
        if let (Some(t), true) = (&mut self.timeline, d > 0.0) {
            let (action, _) = blocking_activity(rank.cur.as_ref().map(|l| &l.action));
            t.push(Span {
                rank: r,
                activity: match rank.busy_kind {
                    BusyKind::Compute => Activity::Compute,
                    BusyKind::Sleep => Activity::Sleep,
                },
                action,
                start: rank.block_start,
                end: now,
            });
        }
        rank.state = State::Running;
        if let Some((key, q)) = rank.pending_test.take() {
            let req = &self.reqs[q as usize];
            let complete = req.done || (req.send && req.detached);
            let rank = &mut self.ranks[r as usize];
            if complete {
                rank.storage.push((key, None));
                self.release(q);
            } else {
                rank.storage.push((key, Some(q)));
            }
        }
        self.ready.push_back(r);
    }
}
