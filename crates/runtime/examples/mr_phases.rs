//! Diagnostic: where a MapReduce job of the histogram spends its time, on one and two
//! threads. Logs the start and end of every map call and prints, per job: the time per
//! job of the stream, the ideal `x · map / threads`, the map phase's span (first map start
//! to last map end), how long after the first thread the second one starts, how many
//! jobs split their images unevenly between the threads (counts more than one apart),
//! and how much of the span the busiest thread was not mapping.
//! Figures and what they say: docs/validation.md ("Small pairwise MapReduce, two threads").
//!
//!     cargo run --release -p perfcompose-runtime --example mr_phases
//!
//! `IMAGE=small|medium|large` picks the image (default small), `REDUCE=pairwise|per_key`
//! the reduction (default pairwise), `SIZES=4,8,64` the images per job (default 8,16,64),
//! `PIN=1` pins the threads (`Config { pin: true }`, as `validate` runs designs that fit
//! the cores), `SPIN=T` replaces the histogram by a map that spins for `T` µs and emits as
//! many keys (768, or `KEYS=k`), to tell the pattern's cost from the histogram's.
use std::sync::{Arc, Mutex};
use std::time::Instant;

use perfcompose_runtime::data::ImageSize;
use perfcompose_runtime::kernel::histogram;
use perfcompose_runtime::{mapreduce, Config, Program, Reduce};

fn main() {
    let env = |k: &str| std::env::var(k).unwrap_or_default();
    let img = match env("IMAGE").as_str() {
        "medium" => ImageSize::Medium,
        "large" => ImageSize::Large,
        _ => ImageSize::Small,
    }
    .image();
    let per_key = env("REDUCE") == "per_key";
    let sizes: Vec<usize> = env("SIZES")
        .split(',')
        .filter_map(|v| v.trim().parse().ok())
        .collect();
    let sizes = if sizes.is_empty() {
        vec![8, 16, 64]
    } else {
        sizes
    };
    let spin_us: Option<f64> = env("SPIN").parse().ok();
    let spin_keys: usize = env("KEYS").parse().unwrap_or(768);
    for threads in [1usize, 2] {
        for &x in &sizes {
            let log: Arc<Mutex<Vec<(std::thread::ThreadId, f64, f64)>>> = Arc::default();
            let t0 = Instant::now();
            let l = Arc::clone(&log);
            let mr = mapreduce(
                threads,
                "map",
                move |i: &Arc<perfcompose_runtime::data::Image>| {
                    let s = t0.elapsed().as_secs_f64() * 1e6;
                    let h = match spin_us {
                        // A map that only spins, with the histogram's 768 keys of output.
                        Some(us) => {
                            while t0.elapsed().as_secs_f64() * 1e6 - s < us {
                                std::hint::spin_loop();
                            }
                            vec![1u64; spin_keys]
                        }
                        None => histogram(i),
                    };
                    let e = t0.elapsed().as_secs_f64() * 1e6;
                    l.lock().unwrap().push((std::thread::current().id(), s, e));
                    h
                },
                if per_key {
                    Reduce::per_key("sum", |_k, v: &[u64]| v.iter().sum())
                } else {
                    Reduce::pairwise("add", |a: &mut [u64], b: &[u64]| {
                        a.iter_mut().zip(b).for_each(|(a, b)| *a += b)
                    })
                },
            );
            let config = Config {
                pin: std::env::var("PIN").is_ok_and(|v| v == "1"),
                ..Config::default()
            };
            let p = Program::with_config(mr, config).unwrap();
            let jobs = 200 / x.max(1) + 20;
            let input: Vec<Vec<_>> = (0..jobs).map(|_| vec![Arc::clone(&img); x]).collect();
            let m = p.run_stream(input).unwrap();
            let per_job = m.elapsed.as_secs_f64() * 1e6 / jobs as f64;
            let log = log.lock().unwrap();
            let map_total: f64 = log.iter().map(|(_, s, e)| e - s).sum();
            let per_map = map_total / log.len() as f64;
            // Spread of the calls, robust to the host's preemptions: the middle 80% of
            // the call times, (90th − 10th percentile) / median.
            let mut calls: Vec<f64> = log.iter().map(|(_, s, e)| e - s).collect();
            calls.sort_by(f64::total_cmp);
            let at = |q: f64| calls[((calls.len() - 1) as f64 * q) as usize];
            let map_spread = (at(0.9) - at(0.1)) / at(0.5);
            // Per job: first map start to last map end, and the spread of start times.
            let mut spans = Vec::new();
            // From one job's last map end to the next job's first map start.
            let mut between = Vec::new();
            let mut prev_last: Option<f64> = None;
            // From one job's first map start to the next one's: a job's steady-state
            // time, without the stream's start and end.
            let mut period = Vec::new();
            let mut prev_first: Option<f64> = None;
            let mut skews = Vec::new();
            let mut idle_in_span = Vec::new();
            let mut uneven = 0;
            let mut alone = 0;
            // Two threads: jobs whose second thread starts more than LATE us after the
            // first (or not at all), and how long each thread had slept before the job
            // (the job's first start minus the thread's last map end before it).
            const LATE: f64 = 300.0;
            let mut ids: Vec<std::thread::ThreadId> = Vec::new();
            for r in log.iter() {
                if !ids.contains(&r.0) {
                    ids.push(r.0);
                }
            }
            let mut last_end: Vec<Option<f64>> = vec![None; ids.len()];
            let (mut late_jobs, mut late_slept_longer) = (0, 0);
            let (mut late_slept, mut prompt_slept) = (Vec::new(), Vec::new());
            for j in log.chunks(x) {
                let first = j.iter().map(|r| r.1).fold(f64::INFINITY, f64::min);
                let last = j.iter().map(|r| r.2).fold(0.0, f64::max);
                spans.push(last - first);
                if let Some(p) = prev_last {
                    between.push(first - p);
                }
                prev_last = Some(last);
                if let Some(p) = prev_first {
                    period.push(first - p);
                }
                prev_first = Some(first);
                if threads == 2 && ids.len() == 2 {
                    let start_of = |id| {
                        j.iter()
                            .filter(|r| r.0 == id)
                            .map(|r| r.1)
                            .fold(f64::INFINITY, f64::min)
                    };
                    let (s0, s1) = (start_of(ids[0]), start_of(ids[1]));
                    let (late, prompt) = if s0 > s1 { (0, 1) } else { (1, 0) };
                    if s0.max(s1) - first > LATE {
                        if let (Some(el), Some(ep)) = (last_end[late], last_end[prompt]) {
                            late_jobs += 1;
                            late_slept.push(first - el);
                            prompt_slept.push(first - ep);
                            if el < ep {
                                late_slept_longer += 1;
                            }
                        }
                    }
                }
                for r in j {
                    if let Some(i) = ids.iter().position(|id| *id == r.0) {
                        last_end[i] = Some(last_end[i].map_or(r.2, |e: f64| e.max(r.2)));
                    }
                }
                // Each thread's first start (the log is in order of the calls' ends).
                let mut starts: Vec<(std::thread::ThreadId, f64)> = Vec::new();
                for r in j {
                    match starts.iter_mut().find(|s| s.0 == r.0) {
                        Some(s) => s.1 = s.1.min(r.1),
                        None => starts.push((r.0, r.1)),
                    }
                }
                starts.sort_by(|a, b| a.1.total_cmp(&b.1));
                if starts.len() > 1 {
                    skews.push(starts[1].1 - starts[0].1);
                } else if threads > 1 {
                    alone += 1;
                }
                // Per thread: images mapped and time spent mapping.
                let per: Vec<(usize, f64)> = starts
                    .iter()
                    .map(|(id, _)| {
                        let mine = j.iter().filter(|r| r.0 == *id);
                        (mine.clone().count(), mine.map(|r| r.2 - r.1).sum())
                    })
                    .collect();
                let most = per.iter().map(|p| p.0).max().unwrap_or(0);
                let least = if per.len() < threads {
                    0
                } else {
                    per.iter().map(|p| p.0).min().unwrap_or(0)
                };
                if most - least > 1 {
                    uneven += 1;
                }
                let busiest = per.iter().map(|p| p.1).fold(0.0, f64::max);
                idle_in_span.push(last - first - busiest);
            }
            idle_in_span.sort_by(f64::total_cmp);
            spans.sort_by(f64::total_cmp);
            skews.sort_by(f64::total_cmp);
            between.sort_by(f64::total_cmp);
            period.sort_by(f64::total_cmp);
            let med = |v: &Vec<f64>| {
                if v.is_empty() {
                    f64::NAN
                } else {
                    v[v.len() / 2]
                }
            };
            let p90 = |v: &Vec<f64>| {
                if v.is_empty() {
                    f64::NAN
                } else {
                    v[(v.len() * 9 / 10).min(v.len() - 1)]
                }
            };
            println!(
                "threads={threads} x={x}: per job {per_job:.0} us (steady: median {:.0} us from one job's first map to the next's), ideal {:.0}, map {per_map:.1} us/call (10th to 90th percentile {:.1}% of the median), map-phase span median {:.0} us, second thread starts {:.1} us after the first (median; 90th percentile {:.1} us); {uneven} of {} jobs split unevenly, {alone} mapped by one thread alone; span minus the busiest thread's mapping: median {:.1} us; between jobs (last map end to the next first map start): median {:.1} us, 90th percentile {:.1} us",
                med(&period),
                per_map * x as f64 / threads as f64,
                map_spread * 100.0,
                med(&spans),
                med(&skews),
                p90(&skews),
                spans.len(),
                med(&idle_in_span),
                med(&between),
                p90(&between)
            );
            if threads == 2 {
                late_slept.sort_by(f64::total_cmp);
                prompt_slept.sort_by(f64::total_cmp);
                println!(
                    "  {late_jobs} jobs with the second thread more than {LATE:.0} us late or absent; in {late_slept_longer} of them the late thread had slept longer; slept before the job: late thread median {:.0} us, the other {:.0} us",
                    med(&late_slept),
                    med(&prompt_slept)
                );
            }
        }
    }
}
