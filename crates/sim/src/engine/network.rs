//! Transfers: routes, starting a flow when a send and a receive match, and its latency and
//! completion events.

use super::config::NetworkModel;
use super::queue::Ev;
use super::report::SimError;
use super::sim::Sim;
use super::state::{Flow, LinkState, Route, State};
use crate::platform::HostId;

impl Sim<'_> {
    fn route(&mut self, src: HostId, dst: HostId) -> Option<Route> {
        if let Some(r) = self.routes.get(&(src, dst)) {
            return Some(*r);
        }
        let latency = self.platform.route_into(src, dst, &mut self.route_buf)?;
        let min_bw = self
            .route_buf
            .iter()
            .map(|&l| self.platform.link(l).bandwidth)
            .fold(f64::INFINITY, f64::min);
        let route = Route {
            start: self.route_links.len() as u32,
            len: self.route_buf.len() as u32,
            latency,
            min_bw,
        };
        self.route_links.extend_from_slice(&self.route_buf);
        self.routes.insert((src, dst), route);
        Some(route)
    }

    pub(super) fn start_flow(&mut self, s: u32, v: u32) -> Result<(), SimError> {
        let now = self.now;
        let (src_rank, dst_rank, bytes, capacity) = {
            let sr = &self.reqs[s as usize];
            let rv = &self.reqs[v as usize];
            (sr.owner, rv.owner, sr.bytes, rv.bytes)
        };
        if capacity >= 0.0 && bytes > capacity {
            // SMPI fails the receive with MPI_ERR_TRUNCATE.
            let r = if self.ready_is(dst_rank) {
                dst_rank
            } else {
                src_rank
            };
            return Err(self.action_error(
                r,
                format!("message truncated: rank {src_rank} sends {bytes} bytes but rank {dst_rank} receives at most {capacity}"),
                Some("the receive's count must cover the message (SimGrid aborts with MPI_ERR_TRUNCATE)".into()),
            ));
        }
        for q in [s, v] {
            let req = &mut self.reqs[q as usize];
            req.matched = true;
            req.match_time = now;
        }
        let hs = self.ranks[src_rank as usize].host;
        let hd = self.ranks[dst_rank as usize].host;
        let Some(route) = self.route(hs, hd) else {
            // Blame whichever side posted last (the one executing now).
            let r = if self.ranks[dst_rank as usize].cur.is_some() && self.ready_is(dst_rank) {
                dst_rank
            } else {
                src_rank
            };
            let (a, b) = (
                self.platform.host(hs).name.clone(),
                self.platform.host(hd).name.clone(),
            );
            return Err(self.action_error(
                r,
                format!("no route from host '{a}' (rank {src_rank}) to host '{b}' (rank {dst_rank}) in {}", self.platform.origin()),
                Some("add a <route> between these hosts, or deploy the ranks on connected hosts".into()),
            ));
        };
        let (lat, min_bw) = (route.latency, route.min_bw);
        self.messages += 1;
        let size = bytes + self.config.envelope_bytes;
        let latency = lat * self.config.latency_factor;
        let penalty = if latency > 0.0 { lat } else { 1.0 };
        let gamma_bound = if self.config.tcp_gamma > 0.0 && lat > 0.0 {
            self.config.tcp_gamma / (2.0 * lat)
        } else {
            -1.0
        };
        let bound = if gamma_bound > 0.0 {
            min_bw.min(gamma_bound)
        } else {
            -1.0
        };
        let flow = Flow {
            remaining: size,
            rate: 0.0,
            last: now,
            penalty,
            inv_pen: 1.0 / penalty,
            cap: if bound > 0.0 {
                min_bw.min(bound)
            } else {
                min_bw
            },
            min_bw,
            links: route.start,
            nlinks: route.len,
            nbind: 0,
            send: s,
            recv: v,
        };
        let f = if let Some(f) = self.free_flows.pop() {
            self.flows[f as usize] = flow;
            f
        } else {
            self.flows.push(flow);
            self.flow_mark.push(0);
            (self.flows.len() - 1) as u32
        };
        match self.config.network {
            NetworkModel::LatencyBandwidth => {
                let mut rate = min_bw * self.config.bandwidth_factor;
                if bound > 0.0 {
                    rate = rate.min(bound * self.config.bandwidth_factor);
                }
                self.flows[f as usize].rate = rate;
                self.seq += 1;
                self.flow_queue
                    .set(f, now + latency + size / rate, self.seq);
            }
            NetworkModel::MaxMin => {
                if latency > 0.0 {
                    self.push(now + latency, Ev::FlowLatency(f));
                } else {
                    self.activate(f);
                }
            }
        }
        Ok(())
    }

    fn ready_is(&self, r: u32) -> bool {
        self.ranks[r as usize].state == State::Running
    }

    /// The flow starts sharing bandwidth (max-min).
    pub(super) fn activate(&mut self, f: u32) {
        if self.debug {
            let fl = &self.flows[f as usize];
            perfcompose_core::stderr_line!(
                "[{:.6}] latency paid {}->{} tag {}",
                self.now,
                self.reqs[fl.send as usize].owner,
                self.reqs[fl.recv as usize].owner,
                self.reqs[fl.send as usize].tag
            );
        }
        let fl = &mut self.flows[f as usize];
        fl.last = self.now;
        fl.rate = 0.0;
        fl.nbind = 0;
        let (demand, links) = (fl.min_bw, Self::links_of(&self.route_links, fl));
        for &l in links {
            let ls = &mut self.link_state[l as usize];
            ls.demand += demand;
            Self::update_binding(ls, &self.link_flows[l as usize], &mut self.flows);
            if ls.binding {
                self.flows[f as usize].nbind += 1;
            }
            self.link_flows[l as usize].push(f);
            if !ls.dirty {
                ls.dirty = true;
                self.dirty.push(l);
            }
        }
    }

    /// After a change of the link's demand: whether it binds, and, when that changed, the
    /// count of binding links of each of its `flows`.
    fn update_binding(ls: &mut LinkState, flows_of_link: &[u32], flows: &mut [Flow]) {
        let binding = !Self::slack(ls);
        if binding != ls.binding {
            ls.binding = binding;
            for &g in flows_of_link {
                let n = &mut flows[g as usize].nbind;
                *n = if binding { *n + 1 } else { *n - 1 };
            }
        }
    }

    /// A flow's links (a free function of the fields, so the caller can update others).
    pub(super) fn links_of<'r>(route_links: &'r [u32], fl: &Flow) -> &'r [u32] {
        &route_links[fl.links as usize..(fl.links + fl.nlinks) as usize]
    }

    pub(super) fn finish_flow(&mut self, f: u32) {
        if self.debug {
            let fl = &self.flows[f as usize];
            perfcompose_core::stderr_line!(
                "[{:.6}] finished {}->{} tag {}",
                self.now,
                self.reqs[fl.send as usize].owner,
                self.reqs[fl.recv as usize].owner,
                self.reqs[fl.send as usize].tag
            );
        }
        let fl = &mut self.flows[f as usize];
        fl.remaining = 0.0;
        let (s, v, demand) = (fl.send, fl.recv, fl.min_bw);
        if self.config.network == NetworkModel::MaxMin {
            for &l in Self::links_of(&self.route_links, fl) {
                let lf = &mut self.link_flows[l as usize];
                if let Some(p) = lf.iter().position(|&x| x == f) {
                    lf.swap_remove(p);
                }
                let ls = &mut self.link_state[l as usize];
                ls.demand -= demand;
                if lf.is_empty() {
                    ls.demand = 0.0; // no drift once the link is idle
                }
                Self::update_binding(ls, lf, &mut self.flows);
                if !ls.dirty {
                    ls.dirty = true;
                    self.dirty.push(l);
                }
            }
        }
        self.free_flows.push(f);
        self.complete_req(s);
        self.complete_req(v);
    }
}
