//! The patterns themselves: `nop`, `seq(nop, nop)`, `pipe(nop, nop)` and `tpool(n, nop)`
//! ([`PatternCost`]), each next to the same hand-offs written directly with crossbeam
//! channels, with both drivers.

use std::time::Instant;

use crossbeam_channel::bounded;

use crate::bench::stats;
use crate::ctx::Config;
use crate::data::Data;
use crate::error::Error;
use crate::kernel::Registry;
use crate::overhead::calibration::PatternCost;
use crate::plan::Plan;

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

/// How a stream is fed to a design and collected from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Driver {
    /// A producer thread feeds a bounded queue; the calling thread blocks on the last
    /// queue ([`crate::Program::run_measured`]): a whole producer/consumer program.
    ProducerConsumer,
    /// Stream-sized outer queues filled by the calling thread before the clock starts,
    /// drained after it stops; the workers of the last queue wake the caller once they
    /// have counted every output
    /// ([`crate::Program::run_stream`]): the driver of `bench --term` and `validate`.
    Stream,
}

/// The same hand-offs written directly with crossbeam channels: the workers of the shape
/// (one stage, a chain of two, or `n` sharing a queue) calling `black_box`, fed and
/// drained as `driver` says. Returns ns per element.
fn baseline(plan: &Plan, elements: Vec<Data>, capacity: usize, driver: Driver) -> f64 {
    let n_el = elements.len();
    let outer = match driver {
        Driver::ProducerConsumer => capacity,
        Driver::Stream => n_el.max(1),
    };
    let (src_tx, src_rx) = bounded::<Data>(outer);
    let (out_tx, out_rx) = bounded::<Data>(outer);
    let workers = match plan {
        Plan::Pipe(_) => 2,
        Plan::TPool(n, _) => *n,
        _ => 1,
    };
    // Stream: the threads wait at a gate until the stream is fed, as the gated workers of
    // `Program::run_stream` do.
    let gate = crate::ctx::Gate::default();
    if driver == Driver::Stream {
        for _ in 0..workers {
            gate.expect();
        }
    }
    let gate = &gate;
    let stream = driver == Driver::Stream;
    let wait = move || {
        if stream {
            gate.arrive();
        }
    };
    // Stream: the workers of the last queue add what they put there when they end, and
    // the last of them wakes the caller, as in `run_stream`.
    let end = crate::ctx::StreamEnd::new(n_el);
    let end = &end;
    let counted = move |n: usize| {
        if stream {
            end.add(n);
        }
    };
    std::thread::scope(|s| {
        match plan {
            Plan::Pipe(_) => {
                let (mid_tx, mid_rx) = bounded::<Data>(capacity);
                s.spawn(move || {
                    wait();
                    for e in src_rx.iter() {
                        let _ = mid_tx.send(std::hint::black_box(e));
                    }
                });
                s.spawn(move || {
                    wait();
                    let mut put = 0;
                    for e in mid_rx.iter() {
                        let _ = out_tx.send(std::hint::black_box(e));
                        put += 1;
                    }
                    counted(put);
                });
            }
            Plan::TPool(n, _) => {
                for _ in 0..*n {
                    let (rx, tx) = (src_rx.clone(), out_tx.clone());
                    s.spawn(move || {
                        wait();
                        let mut put = 0;
                        for e in rx.iter() {
                            let _ = tx.send(std::hint::black_box(e));
                            put += 1;
                        }
                        counted(put);
                    });
                }
                drop(out_tx);
            }
            Plan::Seq(_) => {
                s.spawn(move || {
                    wait();
                    let mut put = 0;
                    for e in src_rx.iter() {
                        let e = std::hint::black_box(std::hint::black_box(e));
                        let _ = out_tx.send(e);
                        put += 1;
                    }
                    counted(put);
                });
            }
            _ => {
                s.spawn(move || {
                    wait();
                    let mut put = 0;
                    for e in src_rx.iter() {
                        let _ = out_tx.send(std::hint::black_box(e));
                        put += 1;
                    }
                    counted(put);
                });
            }
        }
        let mut got = 0usize;
        let elapsed = match driver {
            Driver::ProducerConsumer => {
                let t0 = Instant::now();
                s.spawn(move || {
                    for e in elements {
                        let _ = src_tx.send(e);
                    }
                });
                for e in out_rx.iter() {
                    drop(e);
                    got += 1;
                }
                t0.elapsed()
            }
            Driver::Stream => {
                for e in elements {
                    let _ = src_tx.send(e);
                }
                drop(src_tx);
                let t0 = gate.open();
                end.wait(&|| out_rx.len(), &|| false);
                let elapsed = t0.elapsed();
                for e in out_rx.iter() {
                    drop(e);
                    got += 1;
                }
                elapsed
            }
        };
        debug_assert_eq!(got, n_el);
        elapsed.as_nanos() as f64 / n_el as f64
    })
}

/// `count` stream elements for the `nop` patterns: small arrays, as the hand-off moves
/// the 32-byte element, not its contents.
fn nop_elements(count: usize) -> Vec<Data> {
    (0..count).map(|i| Data::Ints(vec![i as i32; 16])).collect()
}

/// Measure every term of [`calibration_terms`] on a machine of `cores` cores side by side
/// with its baseline, `repetitions` times `elements` elements with each driver (runtime
/// and baseline alternate, so both see the same background load). `progress(term, done,
/// total)` before each term.
pub(crate) fn calibrate_patterns(
    elements: usize,
    repetitions: usize,
    cores: usize,
    config: &Config,
    progress: &mut dyn FnMut(&str, usize, usize),
) -> Result<Vec<PatternCost>, Error> {
    let registry = Registry::builtin();
    let terms = calibration_terms(cores);
    let run = |built: &crate::plan::Built, driver: Driver, count: usize| -> Result<f64, Error> {
        let m = match driver {
            Driver::ProducerConsumer => built.program.run_measured(nop_elements(count))?,
            Driver::Stream => built.program.run_stream(nop_elements(count))?,
        };
        Ok(m.elapsed.as_nanos() as f64 / count as f64)
    };
    const DRIVERS: [Driver; 2] = [Driver::ProducerConsumer, Driver::Stream];
    // One untimed pass over every pattern first: the first patterns measured in a cold
    // process came out up to 3x slower than in later passes (page faults, allocator and
    // CPU frequency warm-up).
    for plan in &terms {
        let built = plan.build(&registry, config.clone())?;
        for d in DRIVERS {
            run(&built, d, elements / 4 + 1)?;
            baseline(plan, nop_elements(elements / 4 + 1), config.capacity, d);
        }
    }
    let mut patterns = Vec::new();
    for (i, plan) in terms.iter().enumerate() {
        let name = plan.to_string();
        progress(&name, i, terms.len());
        let built = plan.build(&registry, config.clone())?;
        // [driver][runtime, baseline]: the four alternate, so all see the same load.
        let mut samples = [[Vec::new(), Vec::new()], [Vec::new(), Vec::new()]];
        for _ in 0..repetitions {
            for (d, driver) in DRIVERS.iter().enumerate() {
                samples[d][0].push(run(&built, *driver, elements)?);
                samples[d][1].push(baseline(
                    plan,
                    nop_elements(elements),
                    config.capacity,
                    *driver,
                ));
            }
        }
        patterns.push(PatternCost {
            term: name,
            ns_per_element: stats::median(&samples[0][0]),
            baseline_ns_per_element: stats::median(&samples[0][1]),
            cv: stats::cv(&samples[0][0]),
            baseline_cv: stats::cv(&samples[0][1]),
            stream_ns_per_element: stats::median(&samples[1][0]),
            stream_baseline_ns_per_element: stats::median(&samples[1][1]),
            stream_min_ns_per_element: samples[1][0].iter().copied().fold(f64::INFINITY, f64::min),
        });
    }
    Ok(patterns)
}
