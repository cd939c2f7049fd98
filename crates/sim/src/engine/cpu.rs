//! Hosts shared by more ranks than cores: executions progress at an equal share of the
//! host's speed.

use super::queue::Ev;
use super::sim::Sim;

/// Work left below this many seconds at the current rate counts as done (SimGrid's
/// `surf/precision`).
const TIME_PRECISION: f64 = 1e-9;

impl Sim<'_> {
    fn cpu_rate(&self, h: u32) -> f64 {
        let c = &self.cpus[h as usize];
        let n = c.running.len().max(1) as f64;
        c.speed * (c.cores as f64 / n).min(1.0)
    }

    pub(super) fn cpu_update(&mut self, h: u32) {
        let rate = self.cpu_rate(h);
        let dt = self.now - self.cpus[h as usize].last;
        for i in 0..self.cpus[h as usize].running.len() {
            let r = self.cpus[h as usize].running[i];
            self.ranks[r as usize].exec_left -= rate * dt;
        }
        self.cpus[h as usize].last = self.now;
    }

    pub(super) fn cpu_reschedule(&mut self, h: u32) {
        let rate = self.cpu_rate(h);
        let c = &mut self.cpus[h as usize];
        c.version += 1;
        let mut min_left = f64::INFINITY;
        for &r in &c.running {
            min_left = min_left.min(self.ranks[r as usize].exec_left);
        }
        if min_left.is_finite() {
            let v = c.version;
            let t = self.now + (min_left / rate).max(0.0);
            self.push(t, Ev::Cpu(h, v));
        }
    }

    pub(super) fn cpu_advance(&mut self, h: u32) {
        self.cpu_update(h);
        let rate = self.cpu_rate(h);
        let running = std::mem::take(&mut self.cpus[h as usize].running);
        let mut keep = Vec::with_capacity(running.len());
        for r in running {
            if self.ranks[r as usize].exec_left <= rate * TIME_PRECISION {
                self.end_busy(r);
            } else {
                keep.push(r);
            }
        }
        self.cpus[h as usize].running = keep;
        self.cpu_reschedule(h);
    }
}
