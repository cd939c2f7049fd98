//! The host check: how fast the host runs a block right now, and how much a busy core
//! slows it down on another core.
//!
//! A design of two threads runs two blocks at once; their unit tests run one (or, for
//! `_parN` and the stages of a pipeline, next to the others while they are timed). On a
//! virtual machine whose two virtual CPUs are the two hardware threads of one physical
//! core, or share a memory bus with another tenant, a busy neighbour slows a block by
//! 0–60%, and by how much changes from one minute to the next (docs/validation.md,
//! "Known limits"). A unit test cannot know which a program will
//! meet, so `validate` measures it right before and right after each such design and
//! says so. The blocks' times alone ([`check_idle`] for designs of one thread) are the
//! host's speed: a design's blocks and its program are measured minutes apart, and on a
//! shared guest that speed moves ([`SPEED_TOLERANCE`]).
//!
//! Pinned to the first core, a timed thread runs a fixed piece of work while the second
//! core is idle, spins on arithmetic in registers ([`Load::Alu`]), or streams through
//! twice the last-level cache ([`Load::Mem`]); the loads take turns, their order rotating
//! every round so that a drift of the host reaches all of them; medians per load.

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::error::Error;
use crate::kernel::{unit_call, Inputs, Registry};

/// What the other core does while the timed work runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Load {
    Idle,
    /// Arithmetic in registers ([`alu`]).
    Alu,
    /// A walk through twice the last-level cache, writing ([`mem`]).
    Mem,
}

/// The loads of a round, in their first order.
pub const LOADS: [Load; 3] = [Load::Idle, Load::Alu, Load::Mem];

/// `steps` rounds of a xorshift chain: arithmetic that touches no memory.
pub fn alu(steps: u64) -> u64 {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..steps {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    x
}

/// `passes` walks over `buf`, one write per cache line.
pub fn mem(buf: &mut [u64], passes: usize) -> u64 {
    let mut s = 0u64;
    for _ in 0..passes {
        for v in buf.iter_mut().step_by(8) {
            *v = v.wrapping_add(1);
            s = s.wrapping_add(*v);
        }
    }
    s
}

/// One timed piece of work and its medians next to each load.
#[derive(Clone, Debug, PartialEq)]
pub struct Neighbour {
    pub work: String,
    /// Median ms with the other core idle.
    pub idle_ms: f64,
    /// Median ms next to [`Load::Alu`] and next to [`Load::Mem`], over `idle_ms`.
    pub alu: f64,
    pub mem: f64,
}

/// The host check: every piece of work timed next to every load.
#[derive(Clone, Debug, PartialEq)]
pub struct NeighbourCheck {
    pub rounds: usize,
    pub works: Vec<Neighbour>,
}

/// A busy neighbour that slows a block by more than this (a ratio of medians) makes the
/// time of a design of two threads depend on the minute it runs: `validate` says so.
pub const NEIGHBOUR_TOLERANCE: f64 = 1.10;

/// A host that runs the check's works alone more than this much slower than its usual
/// speed in the suite so far ([`typical`]), or whose speed moved by more than this across
/// a configuration, is not the host its blocks were measured on (`validate` notes it
/// and says so on a row that misses). On the shared AMD guest
/// `inc`'s unit test read 22–42% apart a minute apart.
pub const SPEED_TOLERANCE: f64 = 1.10;

impl NeighbourCheck {
    /// The largest slowdown a busy neighbour caused (1.0 without any work).
    pub fn worst(&self) -> f64 {
        self.works
            .iter()
            .flat_map(|w| [w.alu, w.mem])
            .filter(|r| r.is_finite())
            .fold(1.0, f64::max)
    }

    /// Whether a busy neighbour slowed some work by more than [`NEIGHBOUR_TOLERANCE`].
    pub fn disturbing(&self) -> bool {
        self.worst() > NEIGHBOUR_TOLERANCE
    }

    /// Whether the check timed the works next to busy loads (not [`check_idle`]'s).
    pub fn has_neighbours(&self) -> bool {
        self.works
            .iter()
            .any(|w| w.alu.is_finite() || w.mem.is_finite())
    }

    /// How much slower the host ran the works alone than in `reference`: the largest
    /// ratio of idle medians over the works both timed (1.0 without any).
    pub fn slowdown(&self, reference: &NeighbourCheck) -> f64 {
        self.idle_ratios(reference).fold(1.0, f64::max)
    }

    /// The ratio of idle medians, `self` over `earlier`, of the work whose time moved the
    /// most either way (1.0 without any): 1.25 a quarter slower now, 0.80 as much faster.
    pub fn speed_change(&self, earlier: &NeighbourCheck) -> f64 {
        self.idle_ratios(earlier).fold(1.0, |worst, r| {
            if r.ln().abs() > worst.ln().abs() {
                r
            } else {
                worst
            }
        })
    }

    fn idle_ratios<'a>(&'a self, other: &'a NeighbourCheck) -> impl Iterator<Item = f64> + 'a {
        self.works.iter().filter_map(move |w| {
            let o = other.works.iter().find(|o| o.work == w.work)?;
            let r = w.idle_ms / o.idle_ms;
            (r.is_finite() && r > 0.0).then_some(r)
        })
    }

    /// "`inc` x=65536 1.43x next to arithmetic, 1.61x next to a memory stream; …".
    pub fn describe(&self) -> String {
        self.works
            .iter()
            .map(|w| {
                format!(
                    "{} {:.2}x next to arithmetic, {:.2}x next to a memory stream",
                    w.work, w.alu, w.mem
                )
            })
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// A piece of work for [`check_with`]: its name and a closure that runs it once.
pub type Work<'a> = (&'a str, &'a (dyn Fn() + Sync));

/// Time each of `works` on the first core next to each [`Load`] on the second, `rounds`
/// rounds after one more that is not kept (each work run once untimed before its timed
/// run, so that caches and page tables are as the timed run finds them). `None` on a machine that grants fewer than
/// two cores. The calling thread is not pinned: the timed thread is a thread of its own.
pub fn check_with(works: &[Work<'_>], rounds: usize) -> Option<NeighbourCheck> {
    check_next_to(works, rounds, &LOADS)
}

/// [`check_with`] next to `loads` only (in that order, rotating); a ratio of a load not
/// run is NaN, and without [`Load::Idle`] every ratio is.
pub fn check_next_to(works: &[Work<'_>], rounds: usize, loads: &[Load]) -> Option<NeighbourCheck> {
    let cores = core_affinity::get_core_ids().unwrap_or_default();
    if cores.len() < 2 || works.is_empty() || loads.is_empty() {
        return None;
    }
    let llc = super::caches::last_level_cache_bytes() as usize;
    let (first, second) = (cores[0], cores[1]);
    // times[work][load]: ms of each round.
    let mut times = vec![vec![Vec::new(); LOADS.len()]; works.len()];
    // Round 0 warms the caches, the page tables and the clock frequency up: not kept.
    for round in 0..=rounds.max(1) {
        for k in 0..loads.len() {
            let load = loads[(k + round) % loads.len()];
            let li = LOADS.iter().position(|&l| l == load).unwrap_or(0);
            let stop = AtomicBool::new(false);
            let timed = std::thread::scope(|s| {
                let stop = &stop;
                if load != Load::Idle {
                    s.spawn(move || {
                        let _ = core_affinity::set_for_current(second);
                        let mut buf = vec![1u64; 2 * llc / 8];
                        while !stop.load(Ordering::Relaxed) {
                            match load {
                                Load::Alu => {
                                    black_box(alu(100_000));
                                }
                                Load::Mem => {
                                    black_box(mem(&mut buf, 1));
                                }
                                Load::Idle => {}
                            }
                        }
                    });
                    // Let the neighbour start.
                    std::thread::sleep(Duration::from_millis(2));
                }
                let timed = s
                    .spawn(move || {
                        let _ = core_affinity::set_for_current(first);
                        works
                            .iter()
                            .map(|(_, work)| {
                                work();
                                let t = Instant::now();
                                work();
                                t.elapsed().as_secs_f64() * 1e3
                            })
                            .collect::<Vec<f64>>()
                    })
                    .join();
                stop.store(true, Ordering::Relaxed);
                timed
            });
            // A panicking work is a bug of the caller's closure: no check then.
            let Ok(ms) = timed else {
                return None;
            };
            if round > 0 {
                for (wi, t) in ms.into_iter().enumerate() {
                    times[wi][li].push(t);
                }
            }
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    };
    let works = works
        .iter()
        .zip(&mut times)
        .map(|((name, _), t)| {
            let m: Vec<f64> = t.iter_mut().map(median).collect();
            Neighbour {
                work: (*name).to_string(),
                idle_ms: m[0],
                alu: m[1] / m[0],
                mem: m[2] / m[0],
            }
        })
        .collect();
    Some(NeighbourCheck {
        rounds: rounds.max(1),
        works,
    })
}

/// Each work's median idle time over `checks` (the host's usual speed so far), as a
/// check without neighbours; `None` without checks. A work missing from some checks has
/// the median of those that timed it.
pub fn typical(checks: &[NeighbourCheck]) -> Option<NeighbourCheck> {
    let first = checks.first()?;
    let mut names: Vec<&str> = Vec::new();
    for w in checks.iter().flat_map(|c| &c.works) {
        if !names.contains(&w.work.as_str()) {
            names.push(&w.work);
        }
    }
    let works = names
        .into_iter()
        .map(|name| {
            let idle: Vec<f64> = checks
                .iter()
                .flat_map(|c| c.works.iter().filter(|w| w.work == name))
                .map(|w| w.idle_ms)
                .filter(|t| t.is_finite())
                .collect();
            Neighbour {
                work: name.to_string(),
                idle_ms: perfcompose_core::measure::stats::median(&idle),
                alu: f64::NAN,
                mem: f64::NAN,
            }
        })
        .collect();
    Some(NeighbourCheck {
        rounds: first.rounds,
        works,
    })
}

/// Rounds of the check `validate` runs before and after a suite (under a second each on
/// the AMD guest).
pub const VALIDATE_ROUNDS: usize = 5;

/// The check `validate` runs: the registry's `inc` (100 calls) and `qsort` (4 calls) on
/// copies of one input of 65,536 elements, the blocks whose designs of two threads it
/// judges. `None` with fewer than two cores, or without both kernels in `registry`.
pub fn check(registry: &Registry, rounds: usize) -> Result<Option<NeighbourCheck>, Error> {
    check_kernels(registry, rounds, &LOADS)
}

/// [`check`] with the other core idle only: the host's speed, not its neighbours (a
/// third of the time), for the rows of one thread.
pub fn check_idle(registry: &Registry, rounds: usize) -> Result<Option<NeighbourCheck>, Error> {
    check_kernels(registry, rounds, &[Load::Idle])
}

/// [`check`] next to `loads`.
fn check_kernels(
    registry: &Registry,
    rounds: usize,
    loads: &[Load],
) -> Result<Option<NeighbourCheck>, Error> {
    let (Ok(inc), Ok(qsort)) = (registry.get("inc"), registry.get("qsort")) else {
        return Ok(None);
    };
    let inputs = Inputs::default();
    let inc_input = inc.input(65_536, &inputs)?;
    let qsort_input = qsort.input(65_536, &inputs)?;
    let (inc, qsort) = (inc.op(), qsort.op());
    let run = |op: &crate::kernel::Op, input: &crate::data::Data, calls: usize| {
        for _ in 0..calls {
            if let Some(d) = input.try_clone() {
                drop(black_box(unit_call(op, d)));
            }
        }
    };
    let inc_work = || run(&inc, &inc_input, 100);
    let qsort_work = || run(&qsort, &qsort_input, 4);
    Ok(check_next_to(
        &[
            ("`inc` x=65536 (x100)", &inc_work),
            ("`qsort` x=65536 (x4)", &qsort_work),
        ],
        rounds,
        loads,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checked(ratios: &[(f64, f64)]) -> NeighbourCheck {
        NeighbourCheck {
            rounds: 3,
            works: ratios
                .iter()
                .enumerate()
                .map(|(i, &(alu, mem))| Neighbour {
                    work: format!("w{i}"),
                    idle_ms: 10.0,
                    alu,
                    mem,
                })
                .collect(),
        }
    }

    #[test]
    fn the_worst_neighbour_decides_whether_the_host_disturbs_two_thread_designs() {
        let quiet = checked(&[(1.00, 1.04), (0.98, 1.09)]);
        assert_eq!(quiet.worst(), 1.09);
        assert!(!quiet.disturbing());
        let busy = checked(&[(1.43, 1.61), (1.13, 1.11)]);
        assert_eq!(busy.worst(), 1.61);
        assert!(busy.disturbing());
        assert_eq!(
            busy.describe(),
            "w0 1.43x next to arithmetic, 1.61x next to a memory stream; \
             w1 1.13x next to arithmetic, 1.11x next to a memory stream"
        );
        // Nothing timed, or a NaN ratio: no slowdown claimed.
        assert_eq!(checked(&[]).worst(), 1.0);
        assert_eq!(checked(&[(f64::NAN, 1.02)]).worst(), 1.02);
    }

    #[test]
    fn every_work_is_timed_next_to_every_load() {
        let calls = std::sync::atomic::AtomicUsize::new(0);
        let work = || {
            calls.fetch_add(1, Ordering::Relaxed);
            black_box(alu(10_000));
        };
        match check_with(&[("alu", &work)], 2) {
            // Two cores or more: 1 + 2 rounds x 3 loads x (untimed + timed) runs.
            Some(c) => {
                assert_eq!(c.rounds, 2);
                assert_eq!(c.works.len(), 1);
                assert_eq!(c.works[0].work, "alu");
                assert!(c.works[0].idle_ms > 0.0);
                assert!(c.works[0].alu > 0.0 && c.works[0].mem > 0.0);
                assert_eq!(calls.load(Ordering::Relaxed), 18);
            }
            None => assert!(core_affinity::get_core_ids().unwrap_or_default().len() < 2),
        }
    }

    #[test]
    fn the_kernels_check_needs_both_kernels() {
        let empty = Registry::empty();
        assert_eq!(check(&empty, 1).unwrap(), None);
        assert_eq!(check_idle(&empty, 1).unwrap(), None);
    }

    fn timed(idle: &[(&str, f64)]) -> NeighbourCheck {
        NeighbourCheck {
            rounds: 5,
            works: idle
                .iter()
                .map(|&(work, idle_ms)| Neighbour {
                    work: work.into(),
                    idle_ms,
                    alu: f64::NAN,
                    mem: f64::NAN,
                })
                .collect(),
        }
    }

    #[test]
    fn the_hosts_speed_is_the_works_alone_against_an_earlier_check() {
        let fast = timed(&[("inc", 10.0), ("qsort", 20.0)]);
        let slow = timed(&[("inc", 12.5), ("qsort", 19.0)]);
        assert_eq!(slow.slowdown(&fast), 1.25);
        assert_eq!(fast.slowdown(&slow), 20.0 / 19.0);
        assert_eq!(slow.speed_change(&fast), 1.25);
        assert_eq!(fast.speed_change(&slow), 0.8);
        // Each work's median over the checks, whichever timed it.
        let checks = [
            fast.clone(),
            slow.clone(),
            timed(&[("inc", 30.0), ("nop", 1.0)]),
        ];
        let usual = typical(&checks).unwrap();
        let idle: Vec<(&str, f64)> = usual
            .works
            .iter()
            .map(|w| (w.work.as_str(), w.idle_ms))
            .collect();
        assert_eq!(idle, [("inc", 12.5), ("qsort", 19.5), ("nop", 1.0)]);
        assert!(!usual.has_neighbours());
        assert!(checked(&[(1.0, 1.1)]).has_neighbours());
        assert_eq!(typical(&[]), None);
        // Works only one check timed are compared with nothing.
        let other = timed(&[("nop", 1.0)]);
        assert_eq!(fast.slowdown(&other), 1.0);
        assert_eq!(fast.speed_change(&other), 1.0);
        // An idle-only check claims no neighbour.
        assert_eq!(slow.worst(), 1.0);
        assert!(!slow.disturbing());
    }

    #[test]
    fn an_idle_check_times_every_work_alone_only() {
        let calls = std::sync::atomic::AtomicUsize::new(0);
        let work = || {
            calls.fetch_add(1, Ordering::Relaxed);
            black_box(alu(10_000));
        };
        match check_next_to(&[("alu", &work)], 2, &[Load::Idle]) {
            // 1 + 2 rounds x 1 load x (untimed + timed) runs.
            Some(c) => {
                assert!(c.works[0].idle_ms > 0.0);
                assert!(c.works[0].alu.is_nan() && c.works[0].mem.is_nan());
                assert!(!c.has_neighbours());
                assert_eq!(calls.load(Ordering::Relaxed), 6);
            }
            None => assert!(core_affinity::get_core_ids().unwrap_or_default().len() < 2),
        }
        assert_eq!(check_next_to(&[("alu", &work)], 2, &[]), None);
    }
}
