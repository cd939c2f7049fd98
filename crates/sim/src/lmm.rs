//! Weighted max-min fair sharing of link bandwidth, as SimGrid's CM02 model computes it.
//!
//! Each flow is a variable with a *sharing penalty* `p` (SimGrid's CM02 sets it to the sum
//! of the route's latencies once the latency is paid, so long-RTT flows get less — TCP's
//! RTT unfairness); each link is a constraint with a bound (its bandwidth). A `SHARED` link
//! bounds the sum of its flows' rates, a `FATPIPE` link bounds each flow's rate.
//!
//! The solution is SimGrid's progressive filling (`kernel/lmm/maxmin.cpp`): every constraint
//! offers `remaining / usage` per unit of `1/p` (usage = Σ 1/p over its unfixed flows, or the
//! max for a fatpipe); the smallest offer saturates its constraints, fixing each of their
//! flows at `offer / p`; the fixed rates are taken out and the rest repeats. We follow the
//! same order of operations and the same precision thresholds (`maxmin/precision` = 1e-5)
//! so that rates match SimGrid's to rounding, including its handling of fatpipes with flows
//! of different penalties.

/// SimGrid's `maxmin/precision` default.
pub const MAXMIN_PRECISION: f64 = 1e-5;

/// A max-min problem in compressed form, built by the caller and reused between solves.
#[derive(Default, Debug)]
pub struct Problem {
    /// Per constraint: bound (byte/s) and whether it is a fatpipe.
    pub bound: Vec<f64>,
    pub fatpipe: Vec<bool>,
    /// Per variable: sharing penalty (> 0) and bound (<= 0 for none).
    pub penalty: Vec<f64>,
    pub var_bound: Vec<f64>,
    /// Constraints of variable `v`: `var_cnst[var_start[v]..var_start[v + 1]]`.
    pub var_start: Vec<u32>,
    pub var_cnst: Vec<u32>,
}

impl Problem {
    pub fn clear(&mut self) {
        self.bound.clear();
        self.fatpipe.clear();
        self.penalty.clear();
        self.var_bound.clear();
        self.var_start.clear();
        self.var_cnst.clear();
        self.var_start.push(0);
    }

    pub fn add_constraint(&mut self, bound: f64, fatpipe: bool) -> u32 {
        self.bound.push(bound);
        self.fatpipe.push(fatpipe);
        (self.bound.len() - 1) as u32
    }

    /// Add a variable using the given constraints (each with weight 1).
    pub fn add_variable(
        &mut self,
        penalty: f64,
        bound: f64,
        cnsts: impl IntoIterator<Item = u32>,
    ) -> u32 {
        if self.var_start.is_empty() {
            self.var_start.push(0);
        }
        self.penalty.push(penalty);
        self.var_bound.push(bound);
        self.var_cnst.extend(cnsts);
        self.var_start.push(self.var_cnst.len() as u32);
        (self.penalty.len() - 1) as u32
    }

    pub fn n_vars(&self) -> usize {
        self.penalty.len()
    }

    fn cnsts_of(&self, v: usize) -> &[u32] {
        &self.var_cnst[self.var_start[v] as usize..self.var_start[v + 1] as usize]
    }
}

/// Scratch space for [`Solver::solve`], reused between calls.
#[derive(Default, Debug)]
pub struct Solver {
    cnst_start: Vec<u32>,
    cnst_var: Vec<u32>,
    remaining: Vec<f64>,
    usage: Vec<f64>,
    light: Vec<u32>,
    light_pos: Vec<u32>,
    fixed: Vec<bool>,
    in_sat: Vec<bool>,
    saturated: Vec<u32>,
    sat_vars: Vec<u32>,
    fill: Vec<u32>,
}

const NOT_LIGHT: u32 = u32::MAX;

impl Solver {
    /// Solve; `values[v]` receives variable `v`'s rate.
    pub fn solve(&mut self, p: &Problem, values: &mut Vec<f64>) {
        let nc = p.bound.len();
        let nv = p.n_vars();
        values.clear();
        values.resize(nv, 0.0);
        // constraint -> variables (CSR), in variable order
        self.cnst_start.clear();
        self.cnst_start.resize(nc + 1, 0);
        for &c in &p.var_cnst {
            self.cnst_start[c as usize + 1] += 1;
        }
        for i in 0..nc {
            self.cnst_start[i + 1] += self.cnst_start[i];
        }
        self.cnst_var.clear();
        self.cnst_var.resize(p.var_cnst.len(), 0);
        self.fill.clear();
        self.fill.extend_from_slice(&self.cnst_start[..nc]);
        for v in 0..nv {
            for &c in p.cnsts_of(v) {
                let slot = &mut self.fill[c as usize];
                self.cnst_var[*slot as usize] = v as u32;
                *slot += 1;
            }
        }
        self.fixed.clear();
        self.fixed.resize(nv, false);
        self.in_sat.clear();
        self.in_sat.resize(nv, false);
        self.remaining.clear();
        self.usage.clear();
        self.light.clear();
        self.light_pos.clear();
        self.light_pos.resize(nc, NOT_LIGHT);
        for c in 0..nc {
            let bound = p.bound[c];
            self.remaining.push(bound);
            let mut usage = 0.0f64;
            let vars = &self.cnst_var[self.cnst_start[c] as usize..self.cnst_start[c + 1] as usize];
            if bound > bound * MAXMIN_PRECISION {
                for &v in vars {
                    let u = 1.0 / p.penalty[v as usize];
                    if p.fatpipe[c] {
                        usage = usage.max(u);
                    } else {
                        usage += u;
                    }
                }
                if usage > 0.0 {
                    self.light_pos[c] = self.light.len() as u32;
                    self.light.push(c as u32);
                }
            }
            self.usage.push(usage);
        }
        let mut min_usage = self.find_saturated();
        self.collect_sat_vars();
        // Each round fixes at least one variable, so nv + nc rounds always suffice; the cap
        // only guards against a rounding pathology turning into a hang.
        let mut rounds = 0usize;
        while !self.light.is_empty() && rounds <= nv + nc + 1 {
            rounds += 1;
            let mut min_bound = -1.0f64;
            for &v in &self.sat_vars {
                let v = v as usize;
                let b = p.var_bound[v];
                if b > 0.0 && b * p.penalty[v] < min_usage {
                    let x = b * p.penalty[v];
                    min_bound = if min_bound < 0.0 { x } else { min_bound.min(x) };
                }
            }
            let sat_vars = std::mem::take(&mut self.sat_vars);
            for &v in &sat_vars {
                let vi = v as usize;
                self.in_sat[vi] = false;
                let value = if min_bound < 0.0 {
                    min_usage / p.penalty[vi]
                } else if (min_bound - p.var_bound[vi] * p.penalty[vi]).abs() < MAXMIN_PRECISION {
                    p.var_bound[vi]
                } else {
                    continue;
                };
                values[vi] = value;
                self.fixed[vi] = true;
                for &c in p.cnsts_of(vi) {
                    let c = c as usize;
                    let prec = p.bound[c] * MAXMIN_PRECISION;
                    if !p.fatpipe[c] {
                        self.remaining[c] -= value;
                        if self.remaining[c] < prec {
                            self.remaining[c] = 0.0;
                        }
                        self.usage[c] -= 1.0 / p.penalty[vi];
                        if self.usage[c] < MAXMIN_PRECISION {
                            self.usage[c] = 0.0;
                        }
                    } else {
                        let mut u = 0.0f64;
                        for &w in &self.cnst_var
                            [self.cnst_start[c] as usize..self.cnst_start[c + 1] as usize]
                        {
                            if !self.fixed[w as usize] {
                                u = u.max(1.0 / p.penalty[w as usize]);
                            }
                        }
                        self.usage[c] = u;
                    }
                    if self.usage[c] <= MAXMIN_PRECISION || self.remaining[c] <= prec {
                        self.drop_light(c);
                    }
                }
            }
            self.sat_vars = sat_vars;
            self.sat_vars.clear();
            min_usage = self.find_saturated();
            self.collect_sat_vars();
            if self.sat_vars.is_empty() {
                // Saturated constraints whose flows are all fixed (rounding): retire them.
                let sat = std::mem::take(&mut self.saturated);
                for &c in &sat {
                    self.drop_light(c as usize);
                }
                self.saturated = sat;
                min_usage = self.find_saturated();
                self.collect_sat_vars();
            }
        }
        // Anything left unfixed by a rounding pathology gets its fair share on its tightest
        // constraint rather than zero (which would stall the simulation).
        for (v, value) in values.iter_mut().enumerate() {
            if !self.fixed[v] {
                let mut best = f64::INFINITY;
                for &c in p.cnsts_of(v) {
                    best = best.min(p.bound[c as usize]);
                }
                *value = if best.is_finite() { best } else { 0.0 };
            }
        }
    }

    fn drop_light(&mut self, c: usize) {
        let pos = self.light_pos[c];
        if pos == NOT_LIGHT {
            return;
        }
        let last = *self.light.last().expect("light list holds c");
        self.light.swap_remove(pos as usize);
        if last as usize != c {
            self.light_pos[last as usize] = pos;
        }
        self.light_pos[c] = NOT_LIGHT;
    }

    /// Smallest `remaining / usage` over light constraints, and the constraints at it.
    fn find_saturated(&mut self) -> f64 {
        self.saturated.clear();
        let mut min_usage = -1.0f64;
        for &c in &self.light {
            let ci = c as usize;
            let rou = self.remaining[ci] / self.usage[ci];
            if min_usage < 0.0 || min_usage > rou {
                min_usage = rou;
                self.saturated.clear();
                self.saturated.push(c);
            } else if min_usage == rou {
                self.saturated.push(c);
            }
        }
        min_usage
    }

    fn collect_sat_vars(&mut self) {
        self.sat_vars.clear();
        for &c in &self.saturated {
            let c = c as usize;
            for &v in &self.cnst_var[self.cnst_start[c] as usize..self.cnst_start[c + 1] as usize] {
                let vi = v as usize;
                if !self.fixed[vi] && !self.in_sat[vi] {
                    self.in_sat[vi] = true;
                    self.sat_vars.push(v);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EPS: f64 = 1e-9;

    fn solve(p: &Problem) -> Vec<f64> {
        let mut v = Vec::new();
        Solver::default().solve(p, &mut v);
        v
    }

    #[test]
    fn equal_share_on_one_link() {
        let mut p = Problem::default();
        p.clear();
        let l = p.add_constraint(100.0, false);
        p.add_variable(1.0, -1.0, [l]);
        p.add_variable(1.0, -1.0, [l]);
        let v = solve(&p);
        assert!((v[0] - 50.0).abs() < EPS && (v[1] - 50.0).abs() < EPS);
    }

    #[test]
    fn penalty_weights_the_share() {
        // rates proportional to 1/penalty: 2:1
        let mut p = Problem::default();
        p.clear();
        let l = p.add_constraint(90.0, false);
        p.add_variable(1.0, -1.0, [l]);
        p.add_variable(2.0, -1.0, [l]);
        let v = solve(&p);
        assert!(
            (v[0] - 60.0).abs() < EPS && (v[1] - 30.0).abs() < EPS,
            "{v:?}"
        );
    }

    #[test]
    fn max_min_redistributes() {
        // classic: A uses l1 and l2, B uses l1, C uses l2; l1=10, l2=100
        let mut p = Problem::default();
        p.clear();
        let l1 = p.add_constraint(10.0, false);
        let l2 = p.add_constraint(100.0, false);
        p.add_variable(1.0, -1.0, [l1, l2]);
        p.add_variable(1.0, -1.0, [l1]);
        p.add_variable(1.0, -1.0, [l2]);
        let v = solve(&p);
        assert!((v[0] - 5.0).abs() < EPS);
        assert!((v[1] - 5.0).abs() < EPS);
        assert!((v[2] - 95.0).abs() < EPS);
    }

    #[test]
    fn fatpipe_does_not_share() {
        let mut p = Problem::default();
        p.clear();
        let f = p.add_constraint(10.0, true);
        p.add_variable(1.0, -1.0, [f]);
        p.add_variable(1.0, -1.0, [f]);
        let v = solve(&p);
        assert!((v[0] - 10.0).abs() < EPS && (v[1] - 10.0).abs() < EPS);
    }

    #[test]
    fn variable_bound_applies() {
        let mut p = Problem::default();
        p.clear();
        let l = p.add_constraint(100.0, false);
        p.add_variable(1.0, 10.0, [l]);
        p.add_variable(1.0, -1.0, [l]);
        let v = solve(&p);
        assert!(
            (v[0] - 10.0).abs() < EPS && (v[1] - 90.0).abs() < EPS,
            "{v:?}"
        );
    }

    proptest::proptest! {
        #[test]
        fn feasible_and_saturating(
            bounds in proptest::collection::vec(1.0f64..1e9, 1..6),
            vars in proptest::collection::vec((1e-6f64..1e-2, proptest::collection::vec(0usize..6, 1..4)), 1..12),
        ) {
            let mut p = Problem::default();
            p.clear();
            for b in &bounds { p.add_constraint(*b, false); }
            for (pen, cs) in &vars {
                let mut cs: Vec<u32> = cs.iter().map(|c| (c % bounds.len()) as u32).collect();
                cs.sort(); cs.dedup();
                p.add_variable(*pen, -1.0, cs);
            }
            let v = solve(&p);
            // every link's load within its bound (up to precision), every rate positive
            for (c, b) in bounds.iter().enumerate() {
                let load: f64 = (0..p.n_vars()).filter(|&x| p.cnsts_of(x).contains(&(c as u32))).map(|x| v[x]).sum();
                proptest::prop_assert!(load <= b * (1.0 + 1e-6), "link {} load {} > {}", c, load, b);
            }
            for x in &v { proptest::prop_assert!(*x > 0.0); }
        }
    }
}
