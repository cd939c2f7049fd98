//! Diagnostic: how long each block takes *inside* a running design, next to its unit
//! performance test under the conditions `validate` composes it with.
//!
//! `cargo run --release -p perfcompose-runtime --example in_situ -- TERM X,...`
//!
//! Every block occurrence of `TERM` (`inc`, `nop`, `qsort`, user blocks) is renamed
//! `NAME_1`, `NAME_2`, ... and replaced by a wrapper that adds the time of each call to a
//! counter. Per size the design runs as `validate` measures it (`ProgramSampler`, workers pinned, quick
//! sampling), then each occurrence is unit-tested as `validate` would compose it (cold,
//! `_warm`, `_remote`, `_parN`, `_stageI_of_…`, `_seqI_of_…`: `validate::input_plan`). Printed per occurrence: ns per
//! call inside the program, ns per call in its unit test, and their ratio; and the
//! program's ns per element. Where a design misses its prediction while the blocks'
//! measured medians also miss (docs/validation.md, run L), this says whether a block
//! itself runs slower in the program than in its unit test, or the time goes elsewhere
//! (hand-offs, waiting), and the spread of the in-program calls says whether all calls
//! are slower or some were interrupted. The wrapper's two clock reads (~25 ns) are inside
//! the in-program figure. For a pipeline of single blocks, the stages' recorded calls
//! are also replayed through a line of queues of the runtime's capacity (`bench::tandem`):
//! in their order, shuffled call by call, and shuffled by windows of consecutive calls;
//! where the replay in order is slower than the shuffled ones, the stages' slow phases
//! do not coincide and the pipeline loses time the larger stage mean does not show
//! (docs/validation.md, "`pipe(inc, inc)`: the equal stages take turns"); and the
//! expected larger of the stages' window means drawn independently
//! (`bench::tandem::expected_max`), what a stochastic `max` of the stages would predict.
//! Each stage's unit test records its phases too (`bench::PointStats::phases`): printed
//! next to the program's, with what composition adds for them (`bench::tandem::phase_loss`).
//! With validate's statistic: each occurrence's minimum over repetitions of its mean call
//! in the program next to its unit test's minimum; and per repetition, the program's time
//! per element over the slower of its stages' mean calls in that same repetition (above 1:
//! time spent between the calls), and the program's fastest repetition next to the
//! fastest repetition of that slower-stage mean (what a composition that takes the larger
//! stage per repetition would start from, instead of the larger of the stages' own minima).
//! Exits with status 2 on bad arguments.

#[path = "common/timed.rs"]
mod timed;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use perfcompose_runtime::bench::{
    self, tandem, Conditions, KernelSampler, ProgramSampler, Sampling,
};
use perfcompose_runtime::kernel::{Inputs, Op, Registry};
use perfcompose_runtime::Config;

/// Time and count of the calls of one block occurrence.
#[derive(Default)]
struct Counter {
    ns: AtomicU64,
    calls: AtomicU64,
    /// Every call's time, in order (ns).
    each: std::sync::Mutex<Vec<u64>>,
}

/// Workers pinned, as `validate` runs designs; `SPIN_US=N` sets how long a worker checks
/// its queues before it sleeps (the default: [`Config::default`]'s).
fn config() -> Config {
    let mut c = Config {
        pin: true,
        ..Config::default()
    };
    if let Ok(v) = std::env::var("SPIN_US") {
        let us: u64 = v
            .parse()
            .unwrap_or_else(|_| fail(&format!("SPIN_US={v:?}: microseconds, an integer")));
        c.spin = std::time::Duration::from_micros(us);
    }
    c
}

/// Where the calls' times lie: percentiles, and how many took over 1.5× the median (a
/// call that something took the core from: the stream driver's checks of its last queue
/// made the calls they interrupted take 2.8× as long, docs/runtime.md, "How the stream
/// driver learns that a stream has ended").
fn spread(times: &[u64]) -> String {
    if times.is_empty() {
        return "no calls".into();
    }
    let mut v = times.to_vec();
    v.sort_unstable();
    let q = |f: f64| v[((v.len() - 1) as f64 * f).round() as usize];
    let slow = times.iter().filter(|&&t| t > q(0.5) * 3 / 2).count();
    format!(
        "ns per call: p10 {} p50 {} p90 {} p99 {}; {slow} of {} calls over 1.5x the median",
        q(0.1),
        q(0.5),
        q(0.9),
        q(0.99),
        v.len()
    )
}

/// A program's measurement that notes, after each repetition, how many calls every
/// counter holds: where each repetition's calls end.
struct Marked<'a, 'b> {
    inner: ProgramSampler<'b>,
    counters: &'a BTreeMap<String, Arc<Counter>>,
    ends: BTreeMap<String, Vec<usize>>,
    /// The program's ns per element in every repetition, warm-up included (as `ends`).
    program: Vec<f64>,
}

impl bench::Repeated for Marked<'_, '_> {
    fn x(&self) -> usize {
        self.inner.x()
    }
    fn batch(&self) -> u64 {
        self.inner.batch()
    }
    fn one(&mut self) -> Result<f64, perfcompose_runtime::Error> {
        let v = self.inner.one()?;
        self.program.push(v);
        for (name, c) in self.counters {
            let n = c.each.lock().unwrap().len();
            self.ends.entry(name.clone()).or_default().push(n);
        }
        Ok(v)
    }
}

/// The calls of each repetition, from the calls in order and where each repetition's
/// calls end (a repetition without calls is left out).
fn repetitions<'a>(each: &'a [u64], ends: Option<&'a Vec<usize>>) -> Vec<&'a [u64]> {
    let mut from = 0;
    let mut reps = Vec::new();
    for &end in ends.map_or(&[][..], Vec::as_slice) {
        if end > from {
            reps.push(&each[from..end]);
        }
        from = end;
    }
    reps
}

/// The mean call of each repetition ([`repetitions`]).
fn rep_means(each: &[u64], ends: Option<&Vec<usize>>) -> Vec<f64> {
    repetitions(each, ends)
        .into_iter()
        .map(|r| r.iter().sum::<u64>() as f64 / r.len() as f64)
        .collect()
}

/// p10, p50 and p90 of `v`.
fn deciles(v: &[f64]) -> String {
    if v.is_empty() {
        return "none".into();
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let q = |f: f64| s[((s.len() - 1) as f64 * f).round() as usize];
    format!(
        "p10 {:.3} p50 {:.3} p90 {:.3} ({} values)",
        q(0.1),
        q(0.5),
        q(0.9),
        v.len()
    )
}

fn fail(msg: &str) -> ! {
    eprintln!("in_situ: {msg}");
    std::process::exit(2);
}

/// `TERM` with every block kernel renamed by occurrence (`inc` → `inc_1`, `inc_2`), and
/// the original kernel of each new name.
fn rename(term: &str, reg: &Registry) -> (String, Vec<(String, String)>) {
    let mut out = String::new();
    let mut renamed = Vec::new();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut word = String::new();
    let mut flush = |word: &mut String, out: &mut String| {
        let is_block = reg
            .get(word)
            .is_ok_and(|k| matches!(k.op(), Op::Block { .. }));
        if is_block {
            let n = seen.entry(word.clone()).or_insert(0);
            *n += 1;
            let new = format!("{word}_{n}");
            renamed.push((new.clone(), word.clone()));
            out.push_str(&new);
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    for ch in term.chars() {
        if ch.is_alphanumeric() || ch == '_' {
            word.push(ch);
        } else {
            flush(&mut word, &mut out);
            out.push(ch);
        }
    }
    flush(&mut word, &mut out);
    (out, renamed)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 3 {
        fail("usage: in_situ TERM X,...");
    }
    let sizes: Vec<usize> = args[2]
        .split(',')
        .map(|s| s.trim().parse().ok().filter(|&x| x > 0))
        .collect::<Option<_>>()
        .unwrap_or_else(|| {
            fail(&format!(
                "sizes {:?}: positive integers, comma separated",
                args[2]
            ))
        });
    let builtin = Registry::builtin();
    let (term, occurrences) = rename(&args[1], &builtin);
    if occurrences.is_empty() {
        fail(&format!("`{}` has no block kernel to time", args[1]));
    }
    let mut reg = builtin.clone();
    let mut counters = BTreeMap::new();
    for (name, kernel) in &occurrences {
        let counter = Arc::new(Counter::default());
        let inner = builtin
            .get(kernel)
            .unwrap_or_else(|e| fail(&e.to_string()))
            .clone();
        let c = counter.clone();
        reg.register(Arc::new(timed::Timed {
            name: name.clone(),
            inner,
            record: Arc::new(move |ns| {
                c.ns.fetch_add(ns, Ordering::Relaxed);
                c.calls.fetch_add(1, Ordering::Relaxed);
                c.each.lock().unwrap().push(ns);
            }),
        }));
        counters.insert(name.clone(), counter);
    }
    let plan = match perfcompose_runtime::validate::parse_plan("<term>", &term) {
        Ok((_, plan)) => plan,
        Err(e) => fail(&e.render()),
    };
    let cores = perfcompose_runtime::overhead::available_cores();
    // How validate composes each occurrence: NAME_k, NAME_k_warm, NAME_k_par2, ...
    let as_composed = perfcompose_runtime::validate::input_plan(&plan, &reg, cores);
    let composed: Vec<String> = as_composed.kernels();
    let built = plan
        .build(&reg, config())
        .unwrap_or_else(|e| fail(&e.to_string()));
    let sampling = Sampling::quick();
    let inputs = Inputs::default();
    println!("{} as composed: {as_composed} ({cores} cores)", args[1]);
    for &x in &sizes {
        for c in counters.values() {
            c.ns.store(0, Ordering::Relaxed);
            c.calls.store(0, Ordering::Relaxed);
            c.each.lock().unwrap().clear();
        }
        let program = ProgramSampler::new(&built, &reg, x, &inputs, u128::MAX)
            .unwrap_or_else(|e| fail(&e.to_string()));
        // Where each repetition's calls end in every counter, to take the program's
        // phases over each repetition's mean as the unit tests do.
        let mut marked = Marked {
            inner: program,
            counters: &counters,
            ends: BTreeMap::new(),
            program: Vec::new(),
        };
        let p =
            bench::sample_point(&sampling, &mut marked).unwrap_or_else(|e| fail(&e.to_string()));
        let (ends, program_reps) = (marked.ends, marked.program);
        println!(
            "x = {x}: program {:.0} ns per element (CV {:.1}%)",
            p.median,
            100.0 * p.cv
        );
        // The unit tests of a pipeline's stages, for the stochastic max below.
        let mut stage_units: Vec<bench::PointStats> = Vec::new();
        for name in &composed {
            let (base, mut how): (&str, Conditions) = Conditions::parse(name);
            let Some(counter) = counters.get(base) else {
                continue;
            };
            let calls = counter.calls.load(Ordering::Relaxed).max(1);
            let in_program = counter.ns.load(Ordering::Relaxed) as f64 / calls as f64;
            let original = |occurrence: &str| -> String {
                occurrences
                    .iter()
                    .find(|(n, _)| n == occurrence)
                    .map_or(occurrence, |(_, k)| k.as_str())
                    .to_string()
            };
            // A stage's neighbours, and the other blocks of a pool's seq, run as the
            // built-in blocks, uncounted.
            let group = how
                .stage
                .as_mut()
                .map(|s| &mut s.kernels)
                .or(how.replica.as_mut().map(|r| &mut r.kernels));
            for k in group.into_iter().flatten() {
                *k = original(k);
            }
            let mut unit = KernelSampler::for_block(
                &builtin,
                &original(base),
                x,
                &inputs,
                &sampling,
                u128::MAX,
                how,
            )
            .unwrap_or_else(|e| fail(&e.to_string()));
            let u =
                bench::sample_point(&sampling, &mut unit).unwrap_or_else(|e| fail(&e.to_string()));
            println!(
                "  {name:<16} in the program {in_program:>10.0} ns per call ({calls} calls)   unit test {:>10.0} ns (CV {:.1}%)   ratio {:.2}",
                u.median,
                100.0 * u.cv,
                in_program / u.median
            );
            println!(
                "    in the program, {}",
                spread(&counter.each.lock().unwrap())
            );
            let reps = rep_means(&counter.each.lock().unwrap(), ends.get(base));
            let unit_min = u.values.iter().copied().fold(f64::INFINITY, f64::min);
            if let Some(fastest) = reps.iter().copied().reduce(f64::min) {
                println!(
                    "    the minimum over repetitions (validate's statistic): in the program {fastest:.0} ns per call ({} repetitions), unit test {unit_min:.0} ns ({} repetitions), ratio {:.3}",
                    reps.len(),
                    u.values.len(),
                    fastest / unit_min
                );
            }
            if !u.phases.is_empty() {
                let each = counter.each.lock().unwrap();
                let over = |calls: &[u64]| -> Vec<f64> {
                    let mean = calls.iter().sum::<u64>() as f64 / calls.len().max(1) as f64;
                    tandem::window_means(calls, bench::PHASE_WINDOW)
                        .into_iter()
                        .map(|w| w / mean)
                        .collect()
                };
                let pooled = over(&each);
                // Per repetition (a window needs 64 calls of one repetition).
                let per_rep: Vec<f64> = repetitions(&each, ends.get(base))
                    .into_iter()
                    .filter(|r| r.len() >= bench::PHASE_WINDOW)
                    .flat_map(over)
                    .collect();
                println!(
                    "    phases (window means of {} calls; the unit test's over each repetition's mean, as its summary's quantiles): unit test {}; in the program over each repetition's mean {}, over the mean of all repetitions {}",
                    bench::PHASE_WINDOW,
                    deciles(&u.phases),
                    deciles(&per_rep),
                    deciles(&pooled)
                );
                stage_units.push(u);
            }
        }
        if stage_units.len() >= 2 && stage_units.len() == composed.len() {
            let scaled: Vec<Vec<f64>> = stage_units
                .iter()
                .map(|u| u.phases.iter().map(|r| r * u.median).collect())
                .collect();
            let r: Vec<&[f64]> = scaled.iter().map(Vec::as_slice).collect();
            let medians: Vec<f64> = stage_units.iter().map(|u| u.median).collect();
            let slowest = medians.iter().copied().fold(0.0, f64::max);
            let hinged = tandem::phase_loss(
                &stage_units
                    .iter()
                    .map(|u| &u.phases[..])
                    .collect::<Vec<_>>(),
                &medians,
            );
            println!(
                "  from the unit tests: the larger stage median {slowest:.0} ns; the expected larger of their phases {:.0} ns ({:.3}x); as composed (hinges) {:.0} ns; the program over these: {:.3}x, {:.3}x",
                tandem::expected_max(&r),
                tandem::expected_max(&r) / slowest,
                slowest + hinged,
                p.median / slowest,
                p.median / (slowest + hinged),
            );
        }
        // Per repetition: the program against the slower of its stages' mean calls in
        // that same repetition. Near 1, the program runs at its slower stage and any gap
        // to the unit tests is in the calls; above 1, time goes between the calls
        // (hand-offs, a stage waiting for the other).
        let stage_reps: Vec<Vec<f64>> = composed
            .iter()
            .filter(|name| Conditions::parse(name).1.stage.is_some())
            .filter_map(|name| {
                let base = Conditions::parse(name).0;
                counters
                    .get(base)
                    .map(|c| rep_means(&c.each.lock().unwrap(), ends.get(base)))
            })
            .collect();
        if stage_reps.len() >= 2
            && !program_reps.is_empty()
            && stage_reps.iter().all(|r| r.len() == program_reps.len())
        {
            let slower: Vec<f64> = (0..program_reps.len())
                .map(|i| stage_reps.iter().map(|r| r[i]).fold(0.0, f64::max))
                .collect();
            let mut over: Vec<f64> = program_reps
                .iter()
                .zip(&slower)
                .map(|(p, s)| p / s)
                .collect();
            over.sort_by(f64::total_cmp);
            let min = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
            println!(
                "  per repetition ({}): the program over its slower stage's mean call in that repetition: min {:.3} median {:.3} max {:.3}; the program's fastest repetition {:.0} ns per element, the fastest slower-stage mean {:.0} ns",
                over.len(),
                over[0],
                over[over.len() / 2],
                over[over.len() - 1],
                min(&program_reps),
                min(&slower),
            );
        }
        // A pipeline of single blocks: replay its stages' recorded calls through a
        // tandem line (queues of the runtime's capacity), in their order and shuffled.
        let stages: Vec<Vec<u64>> = composed
            .iter()
            .filter(|name| Conditions::parse(name).1.stage.is_some())
            .filter_map(|name| counters.get(Conditions::parse(name).0))
            .map(|c| c.each.lock().unwrap().clone())
            .collect();
        if stages.len() >= 2 && stages.len() == composed.len() {
            let capacity = config().capacity;
            let replay = |window: usize| {
                let w: Vec<Vec<u64>> = stages
                    .iter()
                    .enumerate()
                    .map(|(j, s)| tandem::shuffle_windows(s, window, 0x51_7cc1 + j as u64))
                    .collect();
                tandem::line(&w.iter().map(Vec::as_slice).collect::<Vec<_>>(), capacity)
            };
            let refs: Vec<&[u64]> = stages.iter().map(Vec::as_slice).collect();
            let by_windows = [16, capacity, 4 * capacity, 16 * capacity]
                .iter()
                .map(|&len| format!("{len}: {:.0}", replay(len)))
                .collect::<Vec<_>>()
                .join(", ");
            println!(
                "  the stages' recorded calls through a line of queues of {capacity} (every repetition, warm-up included): {:.0} ns per element in their order, {:.0} shuffled call by call, windows of calls shuffled ({by_windows}); the slower stage's mean call {:.0} ns",
                tandem::line(&refs, capacity),
                replay(1),
                tandem::slowest_mean(&refs),
            );
            // The same stages taken as independent draws of their window means: what a
            // composition from each stage's spread over windows would predict.
            let drawn = [capacity, 4 * capacity, 16 * capacity]
                .iter()
                .map(|&len| {
                    let means: Vec<Vec<f64>> =
                        refs.iter().map(|s| tandem::window_means(s, len)).collect();
                    let r: Vec<&[f64]> = means.iter().map(Vec::as_slice).collect();
                    format!("{len}: {:.0}", tandem::expected_max(&r))
                })
                .collect::<Vec<_>>()
                .join(", ");
            println!(
                "  the expected larger of the stages' window means, drawn independently (window {drawn}) ns"
            );
        }
    }
}
