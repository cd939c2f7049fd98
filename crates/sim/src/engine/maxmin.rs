//! Max-min bandwidth sharing (CM02): which links bind, the components of flows they join,
//! solving each and moving the flows' completion times.

use super::sim::Sim;
use super::state::{LinkState, NO_CNST};
use crate::lmm::single_constraint_level;

/// A re-solve touching at least 1/BATCH_SHARE of the queued flows rebuilds the flow queue
/// once instead of moving each flow (n log n sifts against one O(n) build).
const BATCH_SHARE: usize = 4;

/// Where [`Sim::apply_rates`] finds the solved rates (before the bandwidth factor).
#[derive(Clone, Copy, Debug)]
enum Rates {
    /// `Sim::values[i]` for the i-th flow of the component.
    Values,
    /// The solver's last solution, in the same order.
    Solver,
    /// `level / penalty` (one binding link).
    Level(f64),
}

impl Sim<'_> {
    /// Whether a link can never limit its flows as a group: a shared link at least as wide
    /// as the sum of its flows' narrowest route bandwidths. Its constraint (sum of rates ≤
    /// bandwidth) is implied by the per-flow bounds `rate ≤ cap ≤ min_bw`, so it is left
    /// out of the max-min problem and each flow's `cap` is its variable bound instead: the
    /// feasible set — hence the max-min solution — is the same, exactly. Left out, it
    /// neither joins its flows into one sharing problem (components stay small on
    /// well-provisioned backbones) nor costs a constraint in each solve (a cluster's private
    /// links, one or two flows each, would otherwise outnumber the binding backbone 70 to
    /// 1 in the 64-rank ring).
    pub(super) fn slack(ls: &LinkState) -> bool {
        !ls.fatpipe && ls.bandwidth >= ls.demand
    }

    /// Recompute the max-min shares of every component touched since the last solve.
    ///
    /// Only the flows that can have changed are visited (SimGrid's selective update): those
    /// joined through binding links to a link where a flow started or ended, and all flows
    /// of a link that became slack (their component may have split).
    pub(super) fn reshare(&mut self) {
        let dirty = std::mem::take(&mut self.dirty);
        self.epoch += 1;
        let epoch = self.epoch;
        let mut seeds = std::mem::take(&mut self.seeds);
        seeds.clear();
        for &l in &dirty {
            let ls = &mut self.link_state[l as usize];
            ls.dirty = false;
            debug_assert_eq!(ls.binding, !Self::slack(ls));
            if !ls.binding {
                seeds.extend_from_slice(&self.link_flows[l as usize]);
            } else if let Some(&f) = self.link_flows[l as usize].first() {
                seeds.push(f);
            }
        }
        let bwf = self.config.bandwidth_factor;
        for &seed in &seeds {
            if self.flow_mark[seed as usize] == epoch {
                continue;
            }
            self.flow_mark[seed as usize] = epoch;
            let fl = &self.flows[seed as usize];
            debug_assert_eq!(
                fl.nbind as usize,
                Self::links_of(&self.route_links, fl)
                    .iter()
                    .filter(|&&l| self.link_state[l as usize].binding)
                    .count()
            );
            if fl.nbind == 0 {
                // Alone (every link slack): its rate is its cap. A flow of a slack link
                // that was alone before too keeps its rate, and is done with here without
                // a search (on a wide backbone every flow start or end seeds all its flows).
                if fl.cap * bwf != fl.rate {
                    self.comp_flows.clear();
                    self.comp_flows.push(seed);
                    self.solves += 1;
                    self.solved_flows += 1;
                    self.values.clear();
                    self.values.push(fl.cap);
                    self.apply_rates(Rates::Values);
                }
                continue;
            }
            self.comp_links.clear();
            self.comp_flows.clear();
            self.comp_flows.push(seed);
            if fl.nbind == 1 && self.single_link_component(seed, epoch) {
                self.solve_component(false);
                continue;
            }
            // Component of flows joined by links that can bind, searched breadth first;
            // the max-min problem is built on the way (constraints in the order links are
            // reached, variables in the order flows are), ready if it must be solved.
            self.component += 1;
            let comp = self.component;
            self.solver.clear();
            let mut cnsts = std::mem::take(&mut self.cnst_buf);
            let mut i = 0;
            while i < self.comp_flows.len() {
                let f = self.comp_flows[i];
                i += 1;
                cnsts.clear();
                let fl = &self.flows[f as usize];
                for &l in Self::links_of(&self.route_links, fl) {
                    let ls = &mut self.link_state[l as usize];
                    if !ls.binding {
                        continue;
                    }
                    if ls.mark != comp {
                        ls.mark = comp;
                        ls.cnst = self.solver.add_constraint(ls.bandwidth, ls.fatpipe);
                        self.comp_links.push(l);
                        for &g in &self.link_flows[l as usize] {
                            let m = &mut self.flow_mark[g as usize];
                            if *m != epoch {
                                *m = epoch;
                                self.comp_flows.push(g);
                            }
                        }
                    }
                    cnsts.push(ls.cnst);
                }
                self.solver
                    .add_variable(fl.penalty, fl.cap, cnsts.iter().copied());
            }
            self.cnst_buf = cnsts;
            for &l in &self.comp_links {
                self.link_state[l as usize].cnst = NO_CNST;
            }
            self.solve_component(true);
        }
        self.seeds = seeds;
        let mut d = dirty;
        d.clear();
        if self.dirty.is_empty() {
            self.dirty = d;
        }
    }

    /// The component of `seed` (bound by one link) when that link binds nothing else: the
    /// seed then its link's other flows, in the order the search would find them. False
    /// (nothing marked, the component lists as given) when some flow of the link is bound
    /// elsewhere too, and the search must run.
    fn single_link_component(&mut self, seed: u32, epoch: u64) -> bool {
        let fl = &self.flows[seed as usize];
        let Some(&l) = Self::links_of(&self.route_links, fl)
            .iter()
            .find(|&&l| self.link_state[l as usize].binding)
        else {
            return false;
        };
        let on_link = &self.link_flows[l as usize];
        if on_link.iter().any(|&g| self.flows[g as usize].nbind != 1) {
            return false;
        }
        self.comp_links.push(l);
        for &g in on_link {
            let m = &mut self.flow_mark[g as usize];
            if *m != epoch {
                *m = epoch;
                self.comp_flows.push(g);
            }
        }
        true
    }

    /// Solve the component in `comp_flows`/`comp_links` (its problem already in the
    /// solver when `built`) and apply the rates.
    fn solve_component(&mut self, built: bool) {
        self.solves += 1;
        self.solved_flows += self.comp_flows.len() as u64;
        if self.comp_flows.len() == 1 {
            // One flow alone: max-min gives it its narrowest link (or its bound).
            let f = self.comp_flows[0];
            self.values.clear();
            self.values.push(self.flows[f as usize].cap);
            self.apply_rates(Rates::Values);
            return;
        }
        if self.comp_links.len() == 1 {
            if let Some(level) = self.one_link_level(self.comp_links[0]) {
                self.apply_rates(Rates::Level(level));
                return;
            }
        }
        if !built {
            self.build();
        }
        self.solver.run();
        self.apply_rates(Rates::Solver);
    }

    /// The component's flows share one binding link (a saturated backbone or NIC, the
    /// common case): the level of [`single_constraint_level`] (each flow's rate is
    /// `level / penalty`), or None when the general solver must run.
    fn one_link_level(&self, l: u32) -> Option<f64> {
        let ls = &self.link_state[l as usize];
        if ls.fatpipe {
            return None;
        }
        let vars = self.comp_flows.iter().map(|&f| {
            let fl = &self.flows[f as usize];
            (fl.penalty, fl.inv_pen, fl.cap)
        });
        single_constraint_level(ls.bandwidth, vars)
    }

    /// The max-min problem of the component in `comp_flows`/`comp_links`, in the solver.
    fn build(&mut self) {
        self.solver.clear();
        for &l in &self.comp_links {
            let ls = &mut self.link_state[l as usize];
            ls.cnst = self.solver.add_constraint(ls.bandwidth, ls.fatpipe);
        }
        for &f in &self.comp_flows {
            let fl = &self.flows[f as usize];
            let cs = Self::links_of(&self.route_links, fl)
                .iter()
                .map(|&l| self.link_state[l as usize].cnst)
                .filter(|&c| c != NO_CNST);
            self.solver.add_variable(fl.penalty, fl.cap, cs);
        }
        for &l in &self.comp_links {
            self.link_state[l as usize].cnst = NO_CNST;
        }
    }

    /// Give the flows of `comp_flows` their new rates and move their completion times.
    fn apply_rates(&mut self, rates: Rates) {
        let now = self.now;
        let bwf = self.config.bandwidth_factor;
        // Moving a large share of the queue: write the new times, then rebuild the heap once.
        let batch = self.comp_flows.len() * BATCH_SHARE >= self.flow_queue.heap.len();
        for (i, &f) in self.comp_flows.iter().enumerate() {
            let fl = &mut self.flows[f as usize];
            let rate = match rates {
                Rates::Values => self.values[i],
                Rates::Solver => self.solver.rates()[i],
                Rates::Level(level) => level / fl.penalty,
            } * bwf;
            if rate == fl.rate {
                continue;
            }
            fl.remaining -= fl.rate * (now - fl.last);
            if fl.remaining < 0.0 {
                fl.remaining = 0.0;
            }
            fl.last = now;
            fl.rate = rate;
            if self.debug {
                perfcompose_core::stderr_line!(
                    "[{:.6}] rate {}->{} tag {} = {} remaining {}",
                    now,
                    self.reqs[fl.send as usize].owner,
                    self.reqs[fl.recv as usize].owner,
                    self.reqs[fl.send as usize].tag,
                    rate,
                    fl.remaining
                );
            }
            let remaining = fl.remaining;
            if rate > 0.0 {
                self.seq += 1;
                if batch {
                    self.flow_queue
                        .batch_set(f, now + remaining / rate, self.seq);
                } else {
                    self.flow_queue.set(f, now + remaining / rate, self.seq);
                }
            } else if batch {
                self.flow_queue.batch_remove(f);
            } else {
                self.flow_queue.remove(f);
            }
        }
        if batch {
            self.flow_queue.end_batch();
        }
    }
}
