//! Time order of events: the integer order key, the main heap's entries, and the indexed
//! queue of flow completions that a rate change updates in place.

use std::cmp::Ordering;

/// An event's place in time order as one integer: the time's bits made monotone in
/// `f64::total_cmp`'s order, then the sequence number that breaks ties (unique, so the
/// order is total and runs are deterministic). Comparing one integer is cheaper than a
/// float then an integer, and the queues compare a lot.
pub(super) fn order_key(t: f64, seq: u64) -> u128 {
    let b = t.to_bits();
    let monotone = if b >> 63 == 0 { b | 1 << 63 } else { !b };
    (u128::from(monotone) << 64) | u128::from(seq)
}

/// The (time, seq) an [`order_key`] was made of.
fn from_order_key(k: u128) -> (f64, u64) {
    let m = (k >> 64) as u64;
    let bits = if m >> 63 == 1 { m & !(1 << 63) } else { !m };
    (f64::from_bits(bits), k as u64)
}

/// A scheduled event, ordered by its key alone.
#[derive(Clone, Copy, Debug)]
pub(super) struct Scheduled {
    pub(super) key: u128,
    pub(super) time: f64,
    pub(super) ev: Ev,
}

impl PartialEq for Scheduled {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl Eq for Scheduled {}
impl PartialOrd for Scheduled {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Scheduled {
    fn cmp(&self, other: &Self) -> Ordering {
        self.key.cmp(&other.key)
    }
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub(super) enum Ev {
    /// A rank's compute, sleep or test injection ends.
    Resume(u32),
    /// A flow's latency is paid (max-min: it starts taking bandwidth).
    FlowLatency(u32),
    /// A flow completes (popped from the flow queue, never stored in the heap).
    FlowDone(u32),
    /// Some execution on a shared host may complete, if the host's version matches.
    Cpu(u32, u32),
}

/// An indexed binary min-heap of flow completion times: a rate change moves the flow's
/// entry instead of leaving a stale event behind (which made the main heap grow).
#[derive(Default)]
pub(super) struct FlowQueue {
    /// (order key of (time, seq), flow): the key is computed once per entry, not at each
    /// comparison.
    pub(super) heap: Vec<(u128, u32)>,
    /// Position of each flow in `heap`, or u32::MAX.
    pos: Vec<u32>,
}

impl FlowQueue {
    fn less(a: &(u128, u32), b: &(u128, u32)) -> bool {
        a.0 < b.0
    }

    /// The earliest entry: (time, seq, flow).
    pub(super) fn peek(&self) -> Option<(f64, u64, u32)> {
        self.heap.first().map(|&(k, f)| {
            let (t, seq) = from_order_key(k);
            (t, seq, f)
        })
    }

    /// The earliest entry's order key.
    pub(super) fn peek_key(&self) -> Option<u128> {
        self.heap.first().map(|e| e.0)
    }

    pub(super) fn set(&mut self, f: u32, t: f64, seq: u64) {
        if self.pos.len() <= f as usize {
            self.pos.resize(f as usize + 1, u32::MAX);
        }
        let p = self.pos[f as usize];
        if p == u32::MAX {
            self.heap.push((order_key(t, seq), f));
            let i = self.heap.len() - 1;
            self.pos[f as usize] = i as u32;
            self.up(i);
        } else {
            let i = p as usize;
            let old = self.heap[i];
            self.heap[i] = (order_key(t, seq), f);
            if Self::less(&self.heap[i], &old) {
                self.up(i);
            } else {
                self.down(i);
            }
        }
    }

    pub(super) fn remove(&mut self, f: u32) {
        let Some(&p) = self.pos.get(f as usize) else {
            return;
        };
        if p == u32::MAX {
            return;
        }
        let i = p as usize;
        let last = self.heap.len() - 1;
        self.heap.swap(i, last);
        self.heap.pop();
        self.pos[f as usize] = u32::MAX;
        if i < self.heap.len() {
            self.pos[self.heap[i].1 as usize] = i as u32;
            self.up(i);
            self.down(i);
        }
    }

    pub(super) fn pop(&mut self) -> Option<(f64, u64, u32)> {
        let top = self.peek()?;
        self.remove(top.2);
        Some(top)
    }

    /// Like [`FlowQueue::set`] inside a batch: the entry is written in place (or appended)
    /// and heap order is restored only by [`FlowQueue::end_batch`]. A re-solve that moves
    /// most of the queue's flows is cheaper as one O(n) rebuild than as n sifts of
    /// O(log n); the order entries pop in is the same, since (time, seq) keys are unique.
    pub(super) fn batch_set(&mut self, f: u32, t: f64, seq: u64) {
        if self.pos.len() <= f as usize {
            self.pos.resize(f as usize + 1, u32::MAX);
        }
        let p = self.pos[f as usize];
        if p == u32::MAX {
            self.pos[f as usize] = self.heap.len() as u32;
            self.heap.push((order_key(t, seq), f));
        } else {
            self.heap[p as usize] = (order_key(t, seq), f);
        }
    }

    /// Like [`FlowQueue::remove`] inside a batch.
    pub(super) fn batch_remove(&mut self, f: u32) {
        let Some(&p) = self.pos.get(f as usize) else {
            return;
        };
        if p == u32::MAX {
            return;
        }
        self.heap.swap_remove(p as usize);
        self.pos[f as usize] = u32::MAX;
        if let Some(&(_, g)) = self.heap.get(p as usize) {
            self.pos[g as usize] = p;
        }
    }

    /// Restore heap order after `batch_set`/`batch_remove` (Floyd's bottom-up build), then
    /// the positions in one pass.
    pub(super) fn end_batch(&mut self) {
        let n = self.heap.len();
        for i in (0..n / 2).rev() {
            let mut i = i;
            loop {
                let l = 2 * i + 1;
                if l >= n {
                    break;
                }
                let r = l + 1;
                let m = if r < n && Self::less(&self.heap[r], &self.heap[l]) {
                    r
                } else {
                    l
                };
                if !Self::less(&self.heap[m], &self.heap[i]) {
                    break;
                }
                self.heap.swap(i, m);
                i = m;
            }
        }
        for (i, &(_, f)) in self.heap.iter().enumerate() {
            self.pos[f as usize] = i as u32;
        }
    }

    fn up(&mut self, mut i: usize) {
        while i > 0 {
            let parent = (i - 1) / 2;
            if Self::less(&self.heap[i], &self.heap[parent]) {
                self.swap(i, parent);
                i = parent;
            } else {
                break;
            }
        }
    }

    fn down(&mut self, mut i: usize) {
        loop {
            let l = 2 * i + 1;
            let r = l + 1;
            let mut m = i;
            if l < self.heap.len() && Self::less(&self.heap[l], &self.heap[m]) {
                m = l;
            }
            if r < self.heap.len() && Self::less(&self.heap[r], &self.heap[m]) {
                m = r;
            }
            if m == i {
                break;
            }
            self.swap(i, m);
            i = m;
        }
    }

    fn swap(&mut self, a: usize, b: usize) {
        self.heap.swap(a, b);
        self.pos[self.heap[a].1 as usize] = a as u32;
        self.pos[self.heap[b].1 as usize] = b as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn any_time() -> impl Strategy<Value = f64> {
        prop_oneof![
            Just(0.0),
            Just(-0.0),
            Just(f64::INFINITY),
            Just(f64::MIN_POSITIVE),
            0.0f64..1e3,
            any::<f64>(),
        ]
    }

    proptest! {
        /// The integer key orders as (time by `total_cmp`, then sequence number), and gives
        /// both back.
        #[test]
        fn order_key_is_total_cmp_then_seq(a in any_time(), b in any_time(), sa in 0u64..4, sb in 0u64..4) {
            let expected = a.total_cmp(&b).then(sa.cmp(&sb));
            prop_assert_eq!(order_key(a, sa).cmp(&order_key(b, sb)), expected);
            let (t, s) = from_order_key(order_key(a, sa));
            prop_assert_eq!((t.to_bits(), s), (a.to_bits(), sa));
        }

        /// The flow queue pops what a sorted set of its entries would, whatever mix of
        /// single updates, removals and batches (heap rebuilt once) reached it.
        #[test]
        fn flow_queue_pops_in_key_order(
            ops in proptest::collection::vec((0u8..5, 0u32..40, 0.0f64..10.0, any::<bool>()), 1..300),
        ) {
            let mut q = FlowQueue::default();
            let mut reference: std::collections::BTreeMap<u32, (u128, f64, u64)> = Default::default();
            let mut seq = 0u64;
            let mut batch = false;
            for (op, f, t, flag) in ops {
                seq += 1;
                match op {
                    0 | 1 => {
                        if batch {
                            q.batch_set(f, t, seq);
                        } else {
                            q.set(f, t, seq);
                        }
                        reference.insert(f, (order_key(t, seq), t, seq));
                    }
                    2 => {
                        if batch {
                            q.batch_remove(f);
                        } else {
                            q.remove(f);
                        }
                        reference.remove(&f);
                    }
                    3 => {
                        if batch {
                            q.end_batch();
                        }
                        batch = flag;
                    }
                    _ => {
                        if batch {
                            q.end_batch();
                            batch = false;
                        }
                        let want = reference
                            .iter()
                            .min_by_key(|(_, (k, _, _))| *k)
                            .map(|(&f, &(_, t, s))| (t, s, f));
                        prop_assert_eq!(q.pop(), want);
                        if let Some((_, _, f)) = want {
                            reference.remove(&f);
                        }
                    }
                }
            }
            if batch {
                q.end_batch();
            }
            while let Some((_, _, f)) = reference
                .iter()
                .min_by_key(|(_, (k, _, _))| *k)
                .map(|(&f, &(_, t, s))| (t, s, f))
            {
                let (t, s) = (reference[&f].1, reference[&f].2);
                prop_assert_eq!(q.pop(), Some((t, s, f)));
                reference.remove(&f);
            }
            prop_assert_eq!(q.pop(), None);
        }
    }
}
