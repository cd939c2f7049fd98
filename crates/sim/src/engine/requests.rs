//! Requests: posting sends and receives, matching them in the receiver's mailbox, blocking
//! a rank on them and resuming it when they complete.

use super::report::SimError;
use super::sim::Sim;
use super::state::{Req, State};
use crate::timeline::{blocking_activity, Activity, Span};

impl Sim<'_> {
    fn new_req(&mut self, r: u32, peer: u32, tag: i32, bytes: f64, send: bool) -> u32 {
        self.serial += 1;
        let req = Req {
            owner: r,
            peer,
            tag,
            bytes,
            send,
            detached: send && bytes < self.config.detached_threshold,
            matched: false,
            done: false,
            held: true,
            waiter: false,
            match_time: 0.0,
            serial: self.serial,
        };
        if let Some(q) = self.free_reqs.pop() {
            self.reqs[q as usize] = req;
            q
        } else {
            self.reqs.push(req);
            (self.reqs.len() - 1) as u32
        }
    }

    /// The owner no longer refers to the request.
    pub(super) fn release(&mut self, q: u32) {
        let req = &mut self.reqs[q as usize];
        req.held = false;
        req.waiter = false;
        if req.done {
            self.free_reqs.push(q);
        }
    }

    pub(super) fn post_send(
        &mut self,
        r: u32,
        dst: u32,
        tag: i32,
        bytes: f64,
    ) -> Result<u32, SimError> {
        let q = self.new_req(r, dst, tag, bytes, true);
        let mb = &mut self.mailboxes[dst as usize];
        let pos = mb.recvs.iter().position(|&v| {
            let rv = &self.reqs[v as usize];
            rv.peer == r && rv.tag == tag
        });
        match pos {
            Some(p) => {
                let v = mb.recvs.remove(p).expect("position is valid");
                self.start_flow(q, v)?;
            }
            None => mb.sends.push_back(q),
        }
        Ok(q)
    }

    /// Post a receive of at most `bytes` (negative: any size, as SMPI's probe).
    pub(super) fn post_recv(
        &mut self,
        r: u32,
        src: u32,
        tag: i32,
        bytes: f64,
    ) -> Result<u32, SimError> {
        let q = self.new_req(r, src, tag, bytes, false);
        let mb = &mut self.mailboxes[r as usize];
        let pos = mb.sends.iter().position(|&s| {
            let sr = &self.reqs[s as usize];
            sr.owner == src && sr.tag == tag
        });
        match pos {
            Some(p) => {
                let s = mb.sends.remove(p).expect("position is valid");
                self.start_flow(s, q)?;
            }
            None => mb.recvs.push_back(q),
        }
        Ok(q)
    }

    /// A blocking send or receive: wait for it unless it is a detached send.
    pub(super) fn block_on_one(&mut self, r: u32, q: u32) {
        let req = &self.reqs[q as usize];
        if req.send && req.detached {
            self.release(q);
        } else {
            self.block_on(r, &[q]);
        }
    }

    /// Block `r` until every request in `qs` completes (detached sends count as complete);
    /// the requests are released when it resumes.
    pub(super) fn block_on(&mut self, r: u32, qs: &[u32]) {
        let mut count = 0;
        for &q in qs {
            let req = &mut self.reqs[q as usize];
            if !(req.done || req.send && req.detached) {
                req.waiter = true;
                count += 1;
            }
        }
        let rank = &mut self.ranks[r as usize];
        rank.awaited.clear();
        rank.awaited.extend_from_slice(qs);
        rank.block_start = self.now;
        if count == 0 {
            self.resume(r, false);
        } else {
            rank.count = count;
            rank.state = State::Waiting;
        }
    }

    /// Requests `r` waited for are all complete.
    fn resume(&mut self, r: u32, queue: bool) {
        let now = self.now;
        let awaited = std::mem::take(&mut self.ranks[r as usize].awaited);
        let start = self.ranks[r as usize].block_start;
        let mut matched_at = start;
        for &q in &awaited {
            let req = &self.reqs[q as usize];
            if !(req.send && req.detached) && req.matched {
                matched_at = matched_at.max(req.match_time);
            }
        }
        for &q in &awaited {
            self.release(q);
        }
        let rank = &mut self.ranks[r as usize];
        rank.awaited = awaited;
        rank.awaited.clear();
        rank.wait_s += (matched_at - start).max(0.0);
        rank.comm_s += (now - matched_at).max(0.0);
        if let Some(t) = &mut self.timeline {
            let (action, activity) = blocking_activity(rank.cur.as_ref().map(|l| &l.action));
            let late = matched_at.clamp(start, now);
            for (activity, start, end) in [(Activity::Late, start, late), (activity, late, now)] {
                if end > start {
                    t.push(Span {
                        rank: r,
                        activity,
                        action,
                        start,
                        end,
                    });
                }
            }
        }
        rank.count = 0;
        if rank.finishing {
            rank.state = State::Done;
            rank.finish_s = now;
        } else {
            rank.state = State::Running;
            if queue {
                self.ready.push_back(r);
            }
        }
    }

    pub(super) fn complete_req(&mut self, q: u32) {
        let req = &mut self.reqs[q as usize];
        req.done = true;
        let owner = req.owner;
        if req.waiter {
            req.waiter = false;
            let rank = &mut self.ranks[owner as usize];
            rank.count -= 1;
            if rank.count == 0 && rank.state == State::Waiting {
                self.resume(owner, true);
            }
        } else if !req.held {
            self.free_reqs.push(q);
        }
    }
}
