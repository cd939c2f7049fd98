//! The overhead model: what each pattern itself costs per element, measured with `nop`
//! blocks, next to a hand-written crossbeam-channel program doing the same hand-offs.
//!
//! Seed 000 attributes most of its prediction error to unmodelled overhead and
//! contention. Calibration runs `nop`, `seq(nop, nop)`, `pipe(nop, nop)` and
//! `tpool(n, nop)` on this machine and stores the per-element times per host
//! ([`Calibration::default_path`]). Composition then adds [`Calibration::overhead_ns`] of
//! the term: the single-stage cost plus, for every pattern node, its extra cost over a
//! single stage. The constant lands where it matters — small elements, where hand-offs
//! are a visible share of the time — and vanishes against large work.

use std::path::{Path, PathBuf};
use std::time::Instant;

use crossbeam_channel::bounded;
use serde::{Deserialize, Serialize};

use crate::bench::stats;
use crate::ctx::Config;
use crate::data::Data;
use crate::error::Error;
use crate::kernel::Registry;
use crate::plan::Plan;

/// One calibrated pattern.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct PatternCost {
    /// The term measured, e.g. `pipe(nop, nop)`.
    pub term: String,
    /// Median time per element through the runtime, ns.
    pub ns_per_element: f64,
    /// Median time per element of the hand-written crossbeam-channel program, ns.
    pub baseline_ns_per_element: f64,
    /// Coefficients of variation of the repetitions (runtime, baseline).
    pub cv: f64,
    pub baseline_cv: f64,
}

/// A machine's calibration.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Calibration {
    pub host: String,
    pub cores: usize,
    /// Elements per repetition and repetitions per pattern.
    pub elements: usize,
    pub repetitions: usize,
    pub patterns: Vec<PatternCost>,
}

/// Elements streamed per repetition of a calibration run.
pub const DEFAULT_ELEMENTS: usize = 20_000;
/// Repetitions per pattern (runtime and baseline alternate).
pub const DEFAULT_REPETITIONS: usize = 21;

/// The patterns calibrated on a machine with `cores` cores: up to 2·cores workers, so
/// over-subscribed task pools have a measured cost too.
pub fn calibration_terms(cores: usize) -> Vec<Plan> {
    let nop = || Plan::Kernel("nop".into());
    let mut terms = vec![
        nop(),
        Plan::Seq(vec![nop(), nop()]),
        Plan::Pipe(vec![nop(), nop()]),
    ];
    let mut n = 1;
    while n <= (2 * cores).max(2) {
        terms.push(Plan::TPool(n, Box::new(nop())));
        n *= 2;
    }
    terms
}

/// The same hand-offs written directly with crossbeam channels: a producer thread, the
/// workers of the shape (one stage, a chain of two, or `n` sharing a queue) calling
/// `black_box`, and the calling thread collecting. Returns ns per element.
fn baseline(plan: &Plan, elements: Vec<Data>, capacity: usize) -> f64 {
    let n_el = elements.len();
    let (src_tx, src_rx) = bounded::<Data>(capacity);
    let (out_tx, out_rx) = bounded::<Data>(capacity);
    let t0 = Instant::now();
    std::thread::scope(|s| {
        s.spawn(move || {
            for e in elements {
                let _ = src_tx.send(e);
            }
        });
        match plan {
            Plan::Pipe(_) => {
                let (mid_tx, mid_rx) = bounded::<Data>(capacity);
                s.spawn(move || {
                    for e in src_rx.iter() {
                        let _ = mid_tx.send(std::hint::black_box(e));
                    }
                });
                s.spawn(move || {
                    for e in mid_rx.iter() {
                        let _ = out_tx.send(std::hint::black_box(e));
                    }
                });
            }
            Plan::TPool(n, _) => {
                for _ in 0..*n {
                    let (rx, tx) = (src_rx.clone(), out_tx.clone());
                    s.spawn(move || {
                        for e in rx.iter() {
                            let _ = tx.send(std::hint::black_box(e));
                        }
                    });
                }
                drop(out_tx);
            }
            Plan::Seq(_) => {
                s.spawn(move || {
                    for e in src_rx.iter() {
                        let e = std::hint::black_box(std::hint::black_box(e));
                        let _ = out_tx.send(e);
                    }
                });
            }
            _ => {
                s.spawn(move || {
                    for e in src_rx.iter() {
                        let _ = out_tx.send(std::hint::black_box(e));
                    }
                });
            }
        }
        let mut got = 0usize;
        for e in out_rx.iter() {
            drop(e);
            got += 1;
        }
        debug_assert_eq!(got, n_el);
    });
    t0.elapsed().as_nanos() as f64 / n_el as f64
}

fn nop_elements(count: usize) -> Vec<Data> {
    // Small arrays: the hand-off moves the 32-byte element, not its contents.
    (0..count).map(|i| Data::Ints(vec![i as i32; 16])).collect()
}

/// Measure every calibration term side by side with its baseline (runtime and baseline
/// alternate, so both see the same background load).
pub fn calibrate(
    elements: usize,
    repetitions: usize,
    config: &Config,
    progress: &mut dyn FnMut(&str, usize, usize),
) -> Result<Calibration, Error> {
    let cores = available_cores();
    let registry = Registry::builtin();
    let terms = calibration_terms(cores);
    // One untimed pass over every pattern first: the first patterns measured in a cold
    // process came out up to 3x slower than in later passes (page faults, allocator and
    // CPU frequency warm-up).
    for plan in &terms {
        let built = plan.build(&registry, config.clone())?;
        built.program.run_measured(nop_elements(elements / 4 + 1))?;
        baseline(plan, nop_elements(elements / 4 + 1), config.capacity);
    }
    let mut patterns = Vec::new();
    for (i, plan) in terms.iter().enumerate() {
        let name = plan.to_string();
        progress(&name, i, terms.len());
        let built = plan.build(&registry, config.clone())?;
        let (mut ours, mut theirs) = (Vec::new(), Vec::new());
        // One untimed warm-up of each.
        built
            .program
            .run_measured(nop_elements(elements / 10 + 1))?;
        baseline(plan, nop_elements(elements / 10 + 1), config.capacity);
        for _ in 0..repetitions {
            let m = built.program.run_measured(nop_elements(elements))?;
            ours.push(m.elapsed.as_nanos() as f64 / elements as f64);
            theirs.push(baseline(plan, nop_elements(elements), config.capacity));
        }
        patterns.push(PatternCost {
            term: name,
            ns_per_element: stats::median(&ours),
            baseline_ns_per_element: stats::median(&theirs),
            cv: stats::cv(&ours),
            baseline_cv: stats::cv(&theirs),
        });
    }
    Ok(Calibration {
        host: hostname(),
        cores,
        elements,
        repetitions,
        patterns,
    })
}

/// Cores the OS lets this process use.
pub fn available_cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// This machine's name (`/etc/hostname`, `$HOSTNAME`, or `unknown-host`).
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "unknown-host".into())
}

impl Calibration {
    /// `$XDG_CONFIG_HOME/perfcompose/overhead-HOST.json`, else
    /// `~/.config/perfcompose/overhead-HOST.json`.
    pub fn default_path() -> Option<PathBuf> {
        let base = std::env::var_os("XDG_CONFIG_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
        let host: String = hostname()
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        Some(
            base.join("perfcompose")
                .join(format!("overhead-{host}.json")),
        )
    }

    pub fn save(&self, path: &Path) -> Result<(), Error> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| Error::Io(format!("cannot create {}: {e}", dir.display())))?;
        }
        let text = serde_json::to_string_pretty(self).map_err(|e| Error::Io(e.to_string()))?;
        std::fs::write(path, text + "\n")
            .map_err(|e| Error::Io(format!("cannot write {}: {e}", path.display())))
    }

    /// Load a calibration; `Ok(None)` when the file does not exist.
    pub fn load(path: &Path) -> Result<Option<Calibration>, Error> {
        match std::fs::read_to_string(path) {
            Ok(text) => serde_json::from_str(&text).map(Some).map_err(|e| {
                Error::Io(format!(
                    "{}:{}:{}: not a perfcompose overhead calibration: {e}",
                    path.display(),
                    e.line(),
                    e.column()
                ))
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::Io(format!("cannot read {}: {e}", path.display()))),
        }
    }

    fn cost(&self, term: &str) -> Option<f64> {
        self.patterns
            .iter()
            .find(|p| p.term == term)
            .map(|p| p.ns_per_element)
    }

    /// Per-element cost of one stage on its own thread (the `nop` program).
    pub fn stage_ns(&self) -> f64 {
        self.cost("nop").unwrap_or(0.0)
    }

    /// Extra cost of a task pool of `n` over a single stage: measured for the calibrated
    /// `n`, the nearest calibrated `n` otherwise.
    fn tpool_extra(&self, n: usize) -> f64 {
        let calibrated = self.patterns.iter().filter_map(|p| {
            let rest = p.term.strip_prefix("tpool(")?;
            let k: usize = rest.split(',').next()?.trim().parse().ok()?;
            Some((k, p.ns_per_element))
        });
        calibrated
            .min_by_key(|(k, _)| k.abs_diff(n))
            .map_or(0.0, |(_, ns)| ns - self.stage_ns())
    }

    /// The per-element overhead of a design: the cost of one stage, plus each pattern
    /// node's extra cost over one stage (`seq(nop, nop)`, `pipe(nop, nop)`,
    /// `tpool(n, nop)` minus `nop`). Exact for the calibrated shapes; an additive estimate
    /// for deeper nestings. MapReduce jobs are not element hand-offs and add nothing.
    pub fn overhead_ns(&self, plan: &Plan) -> f64 {
        match plan {
            Plan::MapReduce { .. } => 0.0,
            _ => (self.stage_ns() + self.extra(plan)).max(0.0),
        }
    }

    /// The hook for composition: `model + overhead_ns(term)`, for a parsed term. Terms the
    /// runtime cannot run (symbolic thread counts, `dc`) get no overhead (`model` as is).
    ///
    /// `perfcompose predict` and `validate` call this when a calibration is stored for the
    /// machine (`Calibration::load(&Calibration::default_path()?)`), unless told not to.
    pub fn add_to(
        &self,
        model: perfcompose_core::Expr,
        term: &perfcompose_core::term::Term,
    ) -> perfcompose_core::Expr {
        match crate::validate::plan_from_term(term) {
            Ok(plan) if self.overhead_ns(&plan) > 0.0 => perfcompose_core::Expr::add(
                model,
                perfcompose_core::Expr::constant(self.overhead_ns(&plan)),
            ),
            _ => model,
        }
    }

    fn extra(&self, plan: &Plan) -> f64 {
        let stage = self.stage_ns();
        match plan {
            Plan::Kernel(_) | Plan::Unsupported { .. } | Plan::MapReduce { .. } => 0.0,
            Plan::Seq(parts) => {
                let per = self.cost("seq(nop, nop)").map_or(0.0, |c| c - stage);
                per * parts.len().saturating_sub(1) as f64
                    + parts.iter().map(|p| self.extra(p)).sum::<f64>()
            }
            Plan::Pipe(parts) => {
                let per = self.cost("pipe(nop, nop)").map_or(0.0, |c| c - stage);
                per * parts.len().saturating_sub(1) as f64
                    + parts.iter().map(|p| self.extra(p)).fold(0.0, f64::max)
            }
            Plan::TPool(n, inner) => self.tpool_extra(*n) + self.extra(inner) / *n as f64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cal() -> Calibration {
        let p = |term: &str, ns: f64| PatternCost {
            term: term.into(),
            ns_per_element: ns,
            baseline_ns_per_element: ns,
            cv: 0.0,
            baseline_cv: 0.0,
        };
        Calibration {
            host: "h".into(),
            cores: 2,
            elements: 10,
            repetitions: 1,
            patterns: vec![
                p("nop", 100.0),
                p("seq(nop, nop)", 105.0),
                p("pipe(nop, nop)", 180.0),
                p("tpool(1, nop)", 110.0),
                p("tpool(2, nop)", 90.0),
            ],
        }
    }

    /// Sums of a few binary fractions: exact in f64 up to rounding of the last bit.
    const TOL: f64 = 1e-9;

    #[test]
    fn calibrated_shapes_get_their_measured_cost() {
        let c = cal();
        let k = |s: &str| Plan::Kernel(s.into());
        assert!((c.overhead_ns(&k("qsort")) - 100.0).abs() < TOL);
        assert!((c.overhead_ns(&Plan::Pipe(vec![k("a"), k("b")])) - 180.0).abs() < TOL);
        assert!((c.overhead_ns(&Plan::Seq(vec![k("a"), k("b")])) - 105.0).abs() < TOL);
        assert!((c.overhead_ns(&Plan::TPool(2, Box::new(k("a")))) - 90.0).abs() < TOL);
        // Nearest calibrated n for an uncalibrated one.
        assert!((c.overhead_ns(&Plan::TPool(3, Box::new(k("a")))) - 90.0).abs() < TOL);
        // Nesting adds: a 3-stage pipe pays two hand-offs.
        assert!((c.overhead_ns(&Plan::Pipe(vec![k("a"), k("b"), k("c")])) - 260.0).abs() < TOL);
    }

    #[test]
    fn saves_and_loads() {
        let dir = std::env::temp_dir().join(format!("pc-overhead-{}", std::process::id()));
        let path = dir.join("sub").join("o.json");
        let c = cal();
        c.save(&path).unwrap();
        assert_eq!(Calibration::load(&path).unwrap(), Some(c));
        assert_eq!(Calibration::load(&dir.join("missing.json")).unwrap(), None);
        std::fs::write(&path, "{ not json").unwrap();
        let err = Calibration::load(&path).unwrap_err().to_string();
        assert!(err.contains("o.json:1:"), "{err}");
        let _ = std::fs::remove_dir_all(dir);
    }
}
