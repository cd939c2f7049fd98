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
//!
//! The replay solves hundreds of thousands of problems per trace, so the common ones are
//! short-cut — one shared constraint ([`single_constraint_level`]), or a first round that
//! fixes every variable — with the general algorithm's own operations in its order: the
//! rates are the same bits (property tests compare them, and compare [`Solver`] with the
//! straightforward implementation it replaced).

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

/// Progressive filling on a problem with one shared constraint of bound `bound`, when no
/// variable bound binds: one round, every variable fixed at `level / penalty` with
/// `level = bound / Σ 1/penalty`. `vars` gives (penalty, 1/penalty, bound <= 0 for none) in
/// variable order. The level is computed with [`Solver`]'s operations in its order, so the
/// rates are bit for bit the solver's; `None` when the solver would go further (a variable
/// bound binds first, or the constraint has no capacity) and must run instead.
///
/// This is the replay's common case — flows sharing one saturated backbone or NIC, their
/// own links wide enough — and it needs no problem to be built.
pub fn single_constraint_level(
    bound: f64,
    vars: impl Iterator<Item = (f64, f64, f64)> + Clone,
) -> Option<f64> {
    let usage = vars.clone().fold(0.0f64, |u, (_, inv_pen, _)| u + inv_pen);
    // The solver's test for a constraint to share: capacity left, and flows to share it.
    let light = bound > bound * MAXMIN_PRECISION && usage > 0.0;
    if !light {
        return None;
    }
    let level = bound / usage;
    let binds = |(penalty, _, b): (f64, f64, f64)| b > 0.0 && b * penalty < level;
    if vars.clone().any(binds) {
        return None;
    }
    Some(level)
}

/// Per-constraint state of a solve, kept together so the hot loops touch one cache line
/// per constraint instead of one per array.
#[derive(Clone, Copy, Debug, Default)]
struct CnstState {
    bound: f64,
    remaining: f64,
    /// Σ 1/penalty (max for a fatpipe) over the unfixed variables; summed in variable
    /// order as variables are added, which is the order a solve from scratch sums in.
    usage: f64,
    /// `bound × MAXMIN_PRECISION`: remaining capacity below it counts as none.
    prec: f64,
    /// The constraint's variables are `cnst_var[start..end]`, in variable order (`end`
    /// counts the variables while the problem is built).
    start: u32,
    end: u32,
    /// Position in the light list, or `NOT_LIGHT`.
    light_pos: u32,
    /// `remaining / usage`, the level at which it saturates (see [`Solver::one_round`]).
    level: f64,
    fatpipe: bool,
    /// Among the first to saturate (see [`Solver::one_round`]).
    first: bool,
}

/// Per-variable state of a solve.
#[derive(Clone, Copy, Debug, Default)]
struct VarState {
    penalty: f64,
    /// `1 / penalty`, the variable's weight in a constraint's usage (computed once: the
    /// division gives the same bits every time, so caching it changes no result).
    inv_pen: f64,
    /// Rate bound, <= 0 for none.
    bound: f64,
    /// The variable's constraints are `var_cnst[start..end]`.
    start: u32,
    end: u32,
    fixed: bool,
    in_sat: bool,
}

/// SimGrid's progressive filling on a problem built in place ([`Solver::clear`],
/// [`Solver::add_constraint`], [`Solver::add_variable`], then [`Solver::run`]), or on a
/// [`Problem`] ([`Solver::solve`]). Buffers are reused, so a solve allocates nothing once
/// they have grown to the largest problem seen: the replay re-solves at every instant a
/// flow starts or ends, hundreds of thousands of times per trace.
#[derive(Default, Debug)]
pub struct Solver {
    cnst: Vec<CnstState>,
    vars: Vec<VarState>,
    var_cnst: Vec<u32>,
    cnst_var: Vec<u32>,
    values: Vec<f64>,
    light: Vec<u32>,
    saturated: Vec<u32>,
    sat_vars: Vec<u32>,
}

const NOT_LIGHT: u32 = u32::MAX;

impl Solver {
    /// Start a new problem.
    pub fn clear(&mut self) {
        self.cnst.clear();
        self.vars.clear();
        self.var_cnst.clear();
    }

    /// Add a constraint (a link): its variables' rates sum to at most `bound`, or, for a
    /// fatpipe, each is at most `bound`.
    pub fn add_constraint(&mut self, bound: f64, fatpipe: bool) -> u32 {
        self.cnst.push(CnstState {
            bound,
            remaining: bound,
            usage: 0.0,
            prec: bound * MAXMIN_PRECISION,
            start: 0,
            end: 0,
            light_pos: NOT_LIGHT,
            level: 0.0,
            fatpipe,
            first: false,
        });
        (self.cnst.len() - 1) as u32
    }

    /// Add a variable (a flow) with its sharing penalty (> 0), rate bound (<= 0 for none)
    /// and constraints (each with weight 1, added before).
    pub fn add_variable(
        &mut self,
        penalty: f64,
        bound: f64,
        cnsts: impl IntoIterator<Item = u32>,
    ) -> u32 {
        let inv_pen = 1.0 / penalty;
        let start = self.var_cnst.len() as u32;
        for c in cnsts {
            self.var_cnst.push(c);
            let cs = &mut self.cnst[c as usize];
            cs.end += 1;
            if cs.fatpipe {
                cs.usage = cs.usage.max(inv_pen);
            } else {
                cs.usage += inv_pen;
            }
        }
        self.vars.push(VarState {
            penalty,
            inv_pen,
            bound,
            start,
            end: self.var_cnst.len() as u32,
            fixed: false,
            in_sat: false,
        });
        (self.vars.len() - 1) as u32
    }

    /// Solve a [`Problem`]; `values[v]` receives variable `v`'s rate.
    pub fn solve(&mut self, p: &Problem, values: &mut Vec<f64>) {
        self.clear();
        for (&b, &fatpipe) in p.bound.iter().zip(&p.fatpipe) {
            self.add_constraint(b, fatpipe);
        }
        for v in 0..p.n_vars() {
            self.add_variable(p.penalty[v], p.var_bound[v], p.cnsts_of(v).iter().copied());
        }
        values.clear();
        values.extend_from_slice(self.run());
    }

    /// The rates found by the last [`Solver::run`], in the order variables were added.
    pub fn rates(&self) -> &[f64] {
        &self.values
    }

    /// Solve the problem built since [`Solver::clear`]: the rate of each variable, in the
    /// order they were added.
    pub fn run(&mut self) -> &[f64] {
        let nc = self.cnst.len();
        let nv = self.vars.len();
        self.values.clear();
        self.values.resize(nv, 0.0);
        if self.one_round() {
            return &self.values;
        }
        // constraint -> variables (CSR), in variable order: prefix sums of the counts, fill.
        let mut acc = 0u32;
        for c in self.cnst.iter_mut() {
            c.start = acc;
            acc += c.end;
            c.end = c.start;
        }
        self.cnst_var.clear();
        self.cnst_var.resize(self.var_cnst.len(), 0);
        for (v, var) in self.vars.iter().enumerate() {
            for &c in &self.var_cnst[var.start as usize..var.end as usize] {
                let cs = &mut self.cnst[c as usize];
                self.cnst_var[cs.end as usize] = v as u32;
                cs.end += 1;
            }
        }
        self.light.clear();
        for (c, cs) in self.cnst.iter_mut().enumerate() {
            if cs.remaining > cs.prec {
                if cs.usage > 0.0 {
                    cs.light_pos = self.light.len() as u32;
                    self.light.push(c as u32);
                }
            } else {
                cs.usage = 0.0;
            }
        }
        let mut unfixed = nv;
        let mut min_usage = self.find_saturated();
        self.collect_sat_vars();
        // Each round fixes at least one variable, so nv + nc rounds always suffice; the cap
        // only guards against a rounding pathology turning into a hang.
        let mut rounds = 0usize;
        while !self.light.is_empty() && rounds <= nv + nc + 1 {
            rounds += 1;
            let mut min_bound = -1.0f64;
            for &v in &self.sat_vars {
                let var = &self.vars[v as usize];
                if var.bound > 0.0 && var.bound * var.penalty < min_usage {
                    let x = var.bound * var.penalty;
                    min_bound = if min_bound < 0.0 { x } else { min_bound.min(x) };
                }
            }
            for k in 0..self.sat_vars.len() {
                let v = self.sat_vars[k] as usize;
                let var = &mut self.vars[v];
                var.in_sat = false;
                let value = if min_bound < 0.0 {
                    min_usage / var.penalty
                } else if (min_bound - var.bound * var.penalty).abs() < MAXMIN_PRECISION {
                    var.bound
                } else {
                    continue;
                };
                var.fixed = true;
                unfixed -= 1;
                self.values[v] = value;
                let (inv_pen, start, end) = (var.inv_pen, var.start, var.end);
                for i in start..end {
                    let c = self.var_cnst[i as usize] as usize;
                    let cs = &mut self.cnst[c];
                    if !cs.fatpipe {
                        cs.remaining -= value;
                        if cs.remaining < cs.prec {
                            cs.remaining = 0.0;
                        }
                        cs.usage -= inv_pen;
                        if cs.usage < MAXMIN_PRECISION {
                            cs.usage = 0.0;
                        }
                    } else {
                        let mut u = 0.0f64;
                        for &w in &self.cnst_var[cs.start as usize..cs.end as usize] {
                            let w = &self.vars[w as usize];
                            if !w.fixed {
                                u = u.max(w.inv_pen);
                            }
                        }
                        cs.usage = u;
                    }
                    if cs.usage <= MAXMIN_PRECISION || cs.remaining <= cs.prec {
                        self.drop_light(c);
                    }
                }
            }
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
        if unfixed > 0 {
            for (v, var) in self.vars.iter().enumerate() {
                if !var.fixed {
                    let mut best = f64::INFINITY;
                    for &c in &self.var_cnst[var.start as usize..var.end as usize] {
                        best = best.min(self.cnst[c as usize].bound);
                    }
                    self.values[v] = if best.is_finite() { best } else { 0.0 };
                }
            }
        }
        &self.values
    }

    /// The first round of progressive filling when it is the only one: the constraints
    /// that saturate first (lowest `remaining / usage`) hold every variable and no variable
    /// bound is below that level, so every variable is fixed at `level / penalty` — a
    /// component whose flows all cross one saturated backbone. Checked and computed with
    /// the operations of the full algorithm (same sums, same division, same comparisons),
    /// so the rates are bit for bit the same, without building the constraint-to-variable
    /// lists; false (nothing written) when more rounds are needed.
    fn one_round(&mut self) -> bool {
        let mut min_usage = -1.0f64;
        for cs in self.cnst.iter_mut() {
            if cs.remaining > cs.prec && cs.usage > 0.0 {
                cs.level = cs.remaining / cs.usage;
                if min_usage < 0.0 || min_usage > cs.level {
                    min_usage = cs.level;
                }
            } else {
                cs.level = -1.0;
            }
        }
        if min_usage < 0.0 {
            return false;
        }
        for cs in self.cnst.iter_mut() {
            cs.first = cs.level == min_usage;
        }
        for var in &self.vars {
            let bound_binds = var.bound > 0.0 && var.bound * var.penalty < min_usage;
            let saturated = self.var_cnst[var.start as usize..var.end as usize]
                .iter()
                .any(|&c| self.cnst[c as usize].first);
            if bound_binds || !saturated {
                return false;
            }
        }
        for (value, var) in self.values.iter_mut().zip(&self.vars) {
            *value = min_usage / var.penalty;
        }
        true
    }

    fn drop_light(&mut self, c: usize) {
        let pos = self.cnst[c].light_pos;
        if pos == NOT_LIGHT {
            return;
        }
        let last = *self.light.last().expect("light list holds c");
        self.light.swap_remove(pos as usize);
        if last as usize != c {
            self.cnst[last as usize].light_pos = pos;
        }
        self.cnst[c].light_pos = NOT_LIGHT;
    }

    /// Smallest `remaining / usage` over light constraints, and the constraints at it.
    fn find_saturated(&mut self) -> f64 {
        self.saturated.clear();
        let mut min_usage = -1.0f64;
        for &c in &self.light {
            let cs = &self.cnst[c as usize];
            let rou = cs.remaining / cs.usage;
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

    /// The unfixed variables of the saturated constraints, each once.
    fn collect_sat_vars(&mut self) {
        self.sat_vars.clear();
        for &c in &self.saturated {
            let cs = &self.cnst[c as usize];
            for &v in &self.cnst_var[cs.start as usize..cs.end as usize] {
                let var = &mut self.vars[v as usize];
                if !var.fixed && !var.in_sat {
                    var.in_sat = true;
                    self.sat_vars.push(v);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The straightforward solver this module started with (one array per quantity, the
    /// transpose rebuilt in place): kept as the reference the optimised [`Solver`] must match
    /// bit for bit.
    #[derive(Default, Debug)]
    struct ReferenceSolver {
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

    impl ReferenceSolver {
        /// Solve; `values[v]` receives variable `v`'s rate.
        fn solve(&mut self, p: &Problem, values: &mut Vec<f64>) {
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
                let vars =
                    &self.cnst_var[self.cnst_start[c] as usize..self.cnst_start[c + 1] as usize];
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
                    } else if (min_bound - p.var_bound[vi] * p.penalty[vi]).abs() < MAXMIN_PRECISION
                    {
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
                for &v in
                    &self.cnst_var[self.cnst_start[c] as usize..self.cnst_start[c + 1] as usize]
                {
                    let vi = v as usize;
                    if !self.fixed[vi] && !self.in_sat[vi] {
                        self.in_sat[vi] = true;
                        self.sat_vars.push(v);
                    }
                }
            }
        }
    }

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

    /// A random problem: bounds and penalties drawn from small sets so that ties (several
    /// constraints saturating at once, equal shares) are common, some fatpipes, some
    /// variable bounds.
    fn arb_problem() -> impl proptest::strategy::Strategy<Value = Problem> {
        use proptest::prelude::*;
        let cnst = (
            prop_oneof![Just(1e8), Just(1.25e8), Just(1e9), 1.0f64..1e9],
            any::<bool>(),
            0u8..4,
        );
        let var = (
            prop_oneof![Just(5e-5), Just(1.1e-3), 1e-6f64..1e-2],
            prop_oneof![Just(-1.0), Just(0.0), Just(3e7), 1e6f64..1e9],
            proptest::collection::vec(0usize..8, 1..4),
        );
        (
            proptest::collection::vec(cnst, 1..8),
            proptest::collection::vec(var, 1..16),
        )
            .prop_map(|(cs, vs)| {
                let mut p = Problem::default();
                p.clear();
                for (b, fat, k) in &cs {
                    // a quarter of the constraints are fatpipes
                    p.add_constraint(*b, *fat && *k == 0);
                }
                for (pen, bound, links) in &vs {
                    let mut links: Vec<u32> = links.iter().map(|c| (c % cs.len()) as u32).collect();
                    links.sort();
                    links.dedup();
                    p.add_variable(*pen, *bound, links);
                }
                p
            })
    }

    proptest::proptest! {
        /// The optimised solver gives exactly (bit for bit) the reference's rates, also
        /// when one solver is reused across problems of different sizes.
        #[test]
        fn same_bits_as_reference(problems in proptest::collection::vec(arb_problem(), 1..4)) {
            let mut fast = Solver::default();
            let mut reference = ReferenceSolver::default();
            for p in &problems {
                let (mut a, mut b) = (Vec::new(), Vec::new());
                fast.solve(p, &mut a);
                reference.solve(p, &mut b);
                let a: Vec<u64> = a.iter().map(|x| x.to_bits()).collect();
                let b: Vec<u64> = b.iter().map(|x| x.to_bits()).collect();
                proptest::prop_assert_eq!(a, b);
            }
        }
    }

    proptest::proptest! {
        /// On one shared constraint, the closed form gives the solver's rates bit for bit
        /// whenever it answers (and it answers when no variable bound is below the level).
        #[test]
        fn single_constraint_level_is_the_solver(
            bound in proptest::prop_oneof![proptest::prelude::Just(1e9), 1.0f64..1e10],
            vars in proptest::collection::vec((
                proptest::prop_oneof![proptest::prelude::Just(5.5e-4), 1e-6f64..1e-2],
                proptest::prop_oneof![proptest::prelude::Just(-1.0), proptest::prelude::Just(1.25e8), 1e3f64..1e10],
            ), 1..40),
        ) {
            let mut solver = Solver::default();
            solver.clear();
            let c = solver.add_constraint(bound, false);
            for &(pen, b) in &vars {
                solver.add_variable(pen, b, [c]);
            }
            let rates = solver.run().to_vec();
            let level = single_constraint_level(bound, vars.iter().map(|&(p, b)| (p, 1.0 / p, b)));
            let any_binds = {
                let usage: f64 = vars.iter().map(|&(p, _)| 1.0 / p).sum();
                vars.iter().any(|&(p, b)| b > 0.0 && b * p < bound / usage)
            };
            proptest::prop_assert_eq!(level.is_some(), !any_binds);
            if let Some(level) = level {
                for (&(pen, _), rate) in vars.iter().zip(&rates) {
                    proptest::prop_assert_eq!((level / pen).to_bits(), rate.to_bits());
                }
            }
        }
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
