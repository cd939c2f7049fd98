//! The replay's report, and errors that point at the trace: a bad action, a deadlock.

use super::report::{BlockedRank, RankReport, Report, SimError};
use super::sim::Sim;
use super::state::State;
use crate::trace::{write_action, Action, TraceSet};

impl Sim<'_> {
    fn action_text(&self, a: &Action, r: u32) -> String {
        let mut buf = Vec::new();
        let _ = write_action(&mut buf, r, a);
        String::from_utf8_lossy(&buf).trim_end().to_string()
    }

    pub(super) fn action_error(&self, r: u32, message: String, hint: Option<String>) -> SimError {
        let (file, line, action) = match &self.ranks[r as usize].cur {
            Some(loc) => (
                self.files[loc.file as usize].clone(),
                loc.line,
                self.action_text(&loc.action, r),
            ),
            None => (
                self.files.first().cloned().unwrap_or_default(),
                0,
                String::from("(end of trace)"),
            ),
        };
        SimError::Action {
            file,
            line,
            rank: r,
            action,
            message,
            hint,
        }
    }

    fn describe_req(&self, q: u32) -> String {
        let req = &self.reqs[q as usize];
        let what = if req.send {
            format!(
                "its send of {} bytes to rank {} (tag {}) to be received",
                req.bytes, req.peer, req.tag
            )
        } else {
            format!("a message from rank {} with tag {}", req.peer, req.tag)
        };
        let state = if req.matched {
            "(matched, in transfer)"
        } else if req.send {
            "(no matching receive posted)"
        } else {
            "(no matching send posted)"
        };
        format!("{what} {state}")
    }

    pub(super) fn deadlock(&self) -> SimError {
        let mut blocked = Vec::new();
        for (r, rank) in self.ranks.iter().enumerate() {
            if rank.state == State::Done {
                continue;
            }
            let (file, line, action) = match &rank.cur {
                Some(loc) => (
                    self.files[loc.file as usize].clone(),
                    loc.line,
                    self.action_text(&loc.action, r as u32),
                ),
                None => (
                    self.files
                        .get(r)
                        .or(self.files.first())
                        .cloned()
                        .unwrap_or_default(),
                    0,
                    "(end of trace: waiting for its pending requests)".to_string(),
                ),
            };
            let waits = rank
                .awaited
                .iter()
                .filter(|&&q| {
                    let req = &self.reqs[q as usize];
                    !(req.done || req.send && req.detached)
                })
                .map(|&q| self.describe_req(q))
                .collect();
            blocked.push(BlockedRank {
                rank: r as u32,
                file,
                line,
                action,
                waits,
            });
        }
        SimError::Deadlock {
            time: self.now,
            blocked,
        }
    }

    pub(super) fn report(&self, traces: &TraceSet) -> Report {
        let ranks: Vec<RankReport> = self
            .ranks
            .iter()
            .enumerate()
            .map(|(i, r)| RankReport {
                rank: i as u32,
                host: self.platform.host(r.host).name.clone(),
                compute_s: r.compute_s,
                sleep_s: r.sleep_s,
                communication_s: r.comm_s,
                waiting_s: r.wait_s,
                finish_s: r.finish_s,
                actions: r.actions,
            })
            .collect();
        let simulated = ranks.iter().map(|r| r.finish_s).fold(0.0, f64::max);
        let mut notes = traces.notes.clone();
        let unreceived: usize = self.mailboxes.iter().map(|m| m.sends.len()).sum();
        if unreceived > 0 {
            notes.push(format!(
                "{unreceived} message(s) were sent but never received"
            ));
        }
        if self.reader.ignored_lines() > 0 {
            notes.push(format!(
                "{} line(s) of per-rank trace files named another rank and were ignored (as SimGrid does)",
                self.reader.ignored_lines()
            ));
        }
        Report {
            simulated_time_s: simulated,
            ranks,
            actions: self.actions,
            messages: self.messages,
            events: self.events,
            network: self.config.network,
            notes,
        }
    }
}
