//! Unit tests of a per-key reduction as a MapReduce job runs it ([`Gather`]): the values
//! of one key are gathered from every map output into one reused vector, and reduced.
//!
//! A job of `x` inputs keeps its `x` map outputs (one vector of `k` values each) and, key
//! after key, copies that key's `x` values into a vector its thread reuses and reduces
//! them (`mapreduce.rs`, the per-key phase). Timed one call per key on a fresh vector of
//! `x` values instead, the call would allocate its result and free its input inside the
//! timed region and read nothing scattered: `reduce_per_key` read 71–78 ns per key at
//! 4–16 values that way where the jobs spent about 35 ns per key at 4
//! (docs/validation.md).

use std::time::Instant;

use crate::data::Data;
use crate::error::{Error, KernelError, UnitTestError};
use crate::kernel::{Inputs, Kernel, PerKeyFn, HISTOGRAM_KEYS};

/// Keys of the map outputs a gathered test reduces: the histogram's, the keys of every
/// per-key job of the suites.
pub(super) const GATHER_KEYS: usize = HISTOGRAM_KEYS;

/// The `x` map outputs of a job and the reduction, with the thread's reused vectors.
pub(super) struct Gather {
    /// The map outputs, shared with the test's siblings (a job's threads read the same).
    rows: std::sync::Arc<Vec<Vec<u64>>>,
    f: PerKeyFn,
    values: Vec<u64>,
    reduced: Vec<(usize, u64)>,
    next_key: usize,
}

impl Gather {
    /// The test of `kernel` (its reduction `f`) on `x` values per key: `x` map outputs of
    /// [`GATHER_KEYS`] values, each made as the kernel makes its own inputs (so distinct),
    /// within `memory_limit`.
    pub(super) fn new(
        kernel: &dyn Kernel,
        f: PerKeyFn,
        x: usize,
        inputs: &Inputs,
        memory_limit: u128,
    ) -> Result<Gather, Error> {
        let bytes = (x as u128)
            .saturating_mul(GATHER_KEYS as u128)
            .saturating_mul(8);
        if bytes > memory_limit {
            return Err(KernelError::TooLarge {
                what: format!(
                    "{x} map outputs of {GATHER_KEYS} keys for `{}`",
                    kernel.name()
                ),
                needed_bytes: bytes,
                limit_bytes: memory_limit,
            }
            .into());
        }
        let rows = (0..x.max(1))
            .map(
                |i| match kernel.input(GATHER_KEYS, &inputs.variant(i as u64))? {
                    Data::Counts(v) if v.len() == GATHER_KEYS => Ok(v),
                    other => Err(UnitTestError::NotCounts {
                        kernel: kernel.name().to_string(),
                        made: other.kind(),
                        keys: GATHER_KEYS,
                    }
                    .into()),
                },
            )
            .collect::<Result<Vec<_>, Error>>()?;
        Ok(Gather {
            rows: std::sync::Arc::new(rows),
            f,
            values: Vec::with_capacity(x.max(1)),
            reduced: Vec::new(),
            next_key: 0,
        })
    }

    /// Gather and reduce the next `calls` keys (cycling over the keys), as a job's thread
    /// does: ns per key. A panicking reduction is an error naming `kernel`.
    pub(super) fn time(&mut self, calls: usize, kernel: &str) -> Result<f64, Error> {
        let calls = calls.max(1);
        self.reduced.clear();
        self.reduced.reserve(calls);
        let Gather {
            rows,
            f,
            values,
            reduced,
            next_key,
        } = self;
        let t = Instant::now();
        for _ in 0..calls {
            let key = *next_key;
            *next_key = (key + 1) % GATHER_KEYS;
            values.clear();
            values.extend(rows.iter().map(|r| r[key]));
            let v = crate::unwind::catch(|| f(key, values)).map_err(|message| Error::Panicked {
                kernel: kernel.to_string(),
                message,
            })?;
            reduced.push((key, v));
        }
        let ns = t.elapsed().as_nanos() as f64 / calls as f64;
        std::hint::black_box(&self.reduced);
        Ok(ns)
    }

    /// The same map outputs (shared, not copied: at x = 8,192 they are 50 MiB) and
    /// reduction for sibling `index` of `threads`, starting at its share of the keys, as a
    /// job splits them among its threads.
    pub(super) fn sibling(&self, index: usize, threads: usize) -> Gather {
        Gather {
            rows: std::sync::Arc::clone(&self.rows),
            f: self.f.clone(),
            values: Vec::with_capacity(self.values.capacity()),
            reduced: Vec::new(),
            next_key: index * GATHER_KEYS / threads.max(1) % GATHER_KEYS,
        }
    }

    /// Where the next [`Gather::time`] starts.
    #[cfg(test)]
    pub(super) fn next_key(&self) -> usize {
        self.next_key
    }

    /// What the last [`Gather::time`] reduced: (key, value), in order.
    #[cfg(test)]
    pub(super) fn reduced(&self) -> &[(usize, u64)] {
        &self.reduced
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::{Op, Registry};
    use std::sync::Arc;

    fn per_key(reg: &Registry) -> (&dyn Kernel, PerKeyFn) {
        let k = reg.get("reduce_per_key").unwrap().as_ref();
        let Op::ReducePerKey(f) = k.op() else {
            panic!("reduce_per_key is a per-key reduction")
        };
        (k, f)
    }

    #[test]
    fn each_key_is_reduced_over_the_values_of_every_map_output() {
        let reg = Registry::builtin();
        let (k, f) = per_key(&reg);
        let x = 5;
        let mut g = Gather::new(k, f, x, &Inputs::default(), u128::MAX).unwrap();
        // Two passes over the keys and a bit: keys cycle.
        g.time(2 * GATHER_KEYS + 3, "reduce_per_key").unwrap();
        let rows: Vec<Vec<u64>> = (0..x)
            .map(
                |i| match k.input(GATHER_KEYS, &Inputs::default().variant(i as u64)) {
                    Ok(Data::Counts(v)) => v,
                    _ => unreachable!(),
                },
            )
            .collect();
        let r = g.reduced();
        assert_eq!(r.len(), 2 * GATHER_KEYS + 3);
        for (i, &(key, v)) in r.iter().enumerate() {
            assert_eq!(key, i % GATHER_KEYS);
            assert_eq!(v, rows.iter().map(|row| row[key]).sum::<u64>(), "key {key}");
        }
        // The map outputs are distinct, as a job's are.
        assert_ne!(rows[0], rows[1]);
    }

    #[test]
    fn a_sibling_reduces_the_same_map_outputs_from_its_share_of_the_keys() {
        let reg = Registry::builtin();
        let (k, f) = per_key(&reg);
        let g = Gather::new(k, f, 3, &Inputs::default(), u128::MAX).unwrap();
        let mut s = g.sibling(1, 2);
        assert_eq!(s.next_key(), GATHER_KEYS / 2);
        assert_eq!(g.sibling(0, 2).next_key(), 0);
        s.time(2, "reduce_per_key").unwrap();
        let key = GATHER_KEYS / 2;
        let sum: u64 = g.rows.iter().map(|r| r[key]).sum();
        assert_eq!(s.reduced()[0], (key, sum));
        assert_eq!(s.reduced()[1].0, key + 1);
    }

    #[test]
    fn a_panicking_reduction_is_an_error_naming_the_kernel() {
        let reg = Registry::builtin();
        let (k, _) = per_key(&reg);
        let boom: PerKeyFn = Arc::new(|key, _| {
            assert!(key < 3, "no key 3");
            0
        });
        let mut g = Gather::new(k, boom, 4, &Inputs::default(), u128::MAX).unwrap();
        let e = g.time(10, "reduce_per_key").unwrap_err().to_string();
        assert!(
            e.contains("`reduce_per_key` panicked") && e.contains("no key 3"),
            "{e}"
        );
    }

    #[test]
    fn map_outputs_beyond_the_memory_limit_are_refused() {
        let reg = Registry::builtin();
        let (k, f) = per_key(&reg);
        let e = Gather::new(k, f, 1 << 20, &Inputs::default(), 1 << 20)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("map outputs"), "{e}");
    }
}
