//! `perfcompose calibrate overhead`: glue over `perfcompose_runtime::overhead`: the
//! library measures, fits and writes the file; this module chooses the path and prints
//! the result.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{bail, Context};
use comfy_table::{presets::UTF8_FULL_CONDENSED, Table};
use perfcompose_runtime::overhead::{self, Calibration};
use perfcompose_runtime::Config;

use crate::cmd::runtime_args::bar;

/// Flags of `perfcompose calibrate overhead`.
#[derive(clap::Args, Debug)]
pub struct OverheadArgs {
    /// Where to store the calibration [default: this machine's,
    /// $XDG_CONFIG_HOME/perfcompose/overhead-HOST.json or ~/.config/perfcompose/...].
    #[arg(long, short, value_name = "FILE", conflicts_with = "no_save")]
    pub output: Option<PathBuf>,
    /// Calibrate without storing the result.
    #[arg(long)]
    pub no_save: bool,
    /// Elements streamed per repetition of each pattern.
    #[arg(long, value_name = "N", default_value_t = overhead::DEFAULT_ELEMENTS)]
    pub elements: usize,
    /// Repetitions per pattern (the other measurements take at most this many).
    #[arg(long, value_name = "N", default_value_t = overhead::DEFAULT_REPETITIONS)]
    pub reps: usize,
    /// Print the patterns' figures as JSON (schema in docs/runtime.md) instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Let the OS place the worker threads instead of pinning each to a core of its own,
    /// as `validate --no-pin` runs them (the calibration records which).
    #[arg(long)]
    pub no_pin: bool,
}

pub fn run(args: &OverheadArgs) -> anyhow::Result<()> {
    let config = Config {
        pin: !args.no_pin,
        ..Config::default()
    };
    if args.elements == 0 {
        bail!("--elements must be at least 1");
    }
    if args.reps == 0 {
        bail!("--reps must be at least 1");
    }
    let terms = overhead::calibration_terms(perfcompose_runtime::host::available_cores()).len();
    let bar = bar(terms as u64, args.json);
    let cal = overhead::calibrate(args.elements, args.reps, &config, &mut |term, done, _| {
        bar.set_position(done as u64);
        bar.set_message(term.to_string());
    })
    .map_err(anyhow::Error::from)?;
    bar.finish_and_clear();
    if !args.no_save {
        let path = args
            .output
            .clone()
            .or_else(Calibration::default_path)
            .context("cannot find a configuration directory; pass -o FILE")?;
        cal.save(&path).map_err(anyhow::Error::from)?;
        crate::version::record(&path)?;
        if !args.json {
            perfcompose_core::stderr_line!(
                "stored the calibration for {} in {}",
                cal.host,
                path.display()
            );
        }
    }
    report(&mut crate::report::stdout(), &cal, args.json)
}

/// The calibration for people (a table of the patterns, a line per other measurement),
/// or the patterns' figures as JSON.
fn report(out: &mut impl Write, cal: &Calibration, json: bool) -> anyhow::Result<()> {
    if json {
        let patterns: Vec<_> = cal
            .patterns
            .iter()
            .map(|p| {
                serde_json::json!({
                    "term": p.term,
                    "ns_per_element": p.ns_per_element,
                    "baseline_ns_per_element": p.baseline_ns_per_element,
                    "stream_ns_per_element": p.stream_ns_per_element,
                    "stream_baseline_ns_per_element": p.stream_baseline_ns_per_element,
                    "stream_min_ns_per_element": p.stream_min_ns_per_element,
                })
            })
            .collect();
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({ "patterns": patterns }))?
        )?;
        return Ok(());
    }
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    t.set_header(vec![
        "pattern",
        "runtime [ns/element]",
        "crossbeam baseline [ns/element]",
        "ratio",
        "CV runtime / baseline",
        "stream driver: runtime / baseline [ns]",
        "stream driver: fastest runtime [ns]",
    ]);
    for p in &cal.patterns {
        t.add_row(vec![
            p.term.clone(),
            format!("{:.0}", p.ns_per_element),
            format!("{:.0}", p.baseline_ns_per_element),
            format!("{:.2}", p.ns_per_element / p.baseline_ns_per_element),
            format!("{:.1}% / {:.1}%", 100.0 * p.cv, 100.0 * p.baseline_cv),
            format!(
                "{:.0} / {:.0}",
                p.stream_ns_per_element, p.stream_baseline_ns_per_element
            ),
            format!("{:.0}", p.stream_min_ns_per_element),
        ]);
    }
    writeln!(out, "{t}")?;
    writeln!(
        out,
        "{} cores, {} elements x {} repetitions per pattern (medians); producer/consumer \
         driver (a feeder thread, a blocking collector) in the first columns, the stream \
         driver of `validate` in the last two (what composition adds: the median, or the \
         fastest repetition when `validate` reduces with the minimum, its default)",
        cal.cores, cal.elements, cal.repetitions
    )?;
    let w = &cal.pipe_wake;
    if w.knots.is_empty() {
        let (from, to) = w.points.iter().fold((f64::INFINITY, 0.0_f64), |(a, b), p| {
            (a.min(p.spin_ns), b.max(p.spin_ns))
        });
        writeln!(
            out,
            "pipeline wake-up (pipe(spin(T), nop) against spin(T), T from {:.1} to {:.1} us): none added; no calibrated wait beyond the workers' spin of {} us cost extra",
            from / 1000.0,
            to / 1000.0,
            cal.spin_us
        )?;
    } else {
        let knots: Vec<String> = w
            .knots
            .iter()
            .map(|(wait, extra)| format!("{:.1} us: {extra:.0} ns", wait / 1000.0))
            .collect();
        writeln!(
            out,
            "pipeline wake-up (pipe(spin(T), nop) against spin(T), elements of {} bytes per ns of T): straight lines through {}, nothing before, flat after; W the time the waiting stage waits per element",
            overhead::WAKE_BYTES_PER_NS,
            knots.join(", ")
        )?;
    }
    let h = &cal.pipe_handoff;
    let points: Vec<String> = h
        .points
        .iter()
        .map(|p| {
            format!(
                "T {:.1} us slack {:.2} us: {:.0} ns (median {:.0})",
                p.spin_ns / 1000.0,
                p.slack_ns / 1000.0,
                p.extra_ns(true),
                p.extra_ns(false)
            )
        })
        .collect();
    writeln!(
        out,
        "busy pipeline hand-off (pipe(spin(T), spin(T - slack)) against spin(T); the last point's second stage nop), fastest repetitions: {}",
        points.join(", ")
    )?;
    for b in &cal.pool_busy {
        let points: Vec<String> = b
            .points
            .iter()
            .map(|(t, pool, single)| format!("T = {t:.0}: {pool:.0} vs {single:.0}"))
            .collect();
        writeln!(
            out,
            "busy task pool of {} (tpool({}, spin(T)) against spin(T), ns per element: {}): {:.0} ns per element beyond single / {}",
            b.threads,
            b.threads,
            points.join(", "),
            b.extra_ns,
            b.threads
        )?;
    }
    for j in &cal.mapreduce {
        let busy = cal
            .mapreduce_busy
            .iter()
            .find(|b| b.reduce == j.reduce && b.threads == j.threads);
        let busy = busy.map_or(String::new(), |b| {
            let points: Vec<String> = b
                .points
                .iter()
                .map(|p| format!("{:.0} -> {:.1}", p.ideal_ns / 1e3, p.job_ns / 1e3))
                .collect();
            format!(
                "; busy map (ideal -> measured us per job: {}): + min({:.1} us, {:.3} x ideal)",
                points.join(", "),
                b.cap_ns / 1e3,
                b.slope
            )
        });
        writeln!(
            out,
            "MapReduce job, {} reduction, {} thread(s), {} inputs: {:.1} us with a trivial map{busy}",
            j.reduce,
            j.threads,
            overhead::JOB_INPUTS,
            j.ns_per_job / 1e3
        )?;
    }
    let b = &cal.block_call;
    writeln!(
        out,
        "block call (the nop unit test, input warm, x = {}): {:.1} ns (median {:.1}), taken out once per block as a design composes its blocks: its unit test and the patterns above both count it",
        b.x, b.min_ns, b.ns
    )?;
    Ok(())
}
