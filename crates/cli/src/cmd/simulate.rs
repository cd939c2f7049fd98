//! `perfcompose simulate`: replay time-independent traces on a platform (the dPerf paper),
//! the way `smpirun -replay` does; OTF2 archives are converted first (`trace_input`).
//!
//! Glue only: flags → [`perfcompose_sim::Config`], platform and hostfile reading, a progress
//! bar on stderr for long traces, and the text or JSON report. The JSON schema is documented
//! in `docs/simulation.md`.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context};
use perfcompose_sim::engine::Progress;
use perfcompose_sim::platform::{read_hostfile, Platform};
use perfcompose_sim::trace::{LegacyCompute, ReaderOptions, DEFAULT_WINDOW};
use perfcompose_sim::{output, Config, NetworkModel, Report};

use super::trace_input::{self, Otf2Options};

/// Flags of `perfcompose simulate`.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Collective algorithms (--coll OP=ALGO, SimGrid's names): \
bcast=default|binomial_tree|flattree, barrier=default|ompi_basic_linear|ompi_recursivedoubling, \
reduce=default|binomial|flat_tree, allreduce=default|rdb|lr|redbcast, \
alltoall=default|ompi|basic_linear|pair|bruck|ring, gather=default, allgather=default|ring, scatter=default"
)]
pub struct Args {
    /// SimGrid platform XML (<platform version="4.1">: a Full zone or a cluster).
    #[arg(long)]
    pub platform: PathBuf,
    /// Index file listing one trace per rank, a single (shared) trace file, or an OTF2
    /// archive's anchor file (Score-P's `traces.otf2`; needs the `otf2` feature).
    #[arg(long)]
    pub trace: PathBuf,
    /// OTF2 archives: the traced machine's speed (flop/s, SimGrid units: `2.5Gf`), at which
    /// measured computation is converted to flops. Default: each rank's host speed on
    /// --platform, which then replays computation in the time it took.
    #[arg(long, value_name = "SPEED")]
    pub speed: Option<String>,
    /// OTF2 archives: also write the converted time-independent trace to DIR (`trace.txt`
    /// and `trace_R.txt`), for `smpirun -replay` or later runs.
    #[arg(long, value_name = "DIR")]
    pub write_trace: Option<PathBuf>,
    /// Hosts to deploy ranks on, one per line (`host` or `host:count`); rank r runs on
    /// line r mod len. Default: the platform's hosts sorted by name, as smpirun does.
    #[arg(long)]
    pub hostfile: Option<PathBuf>,
    /// Number of ranks (default: one per trace file; for a shared trace, its largest rank + 1).
    #[arg(long)]
    pub np: Option<u32>,
    /// Network model: `maxmin` (flow-level max-min sharing, SimGrid CM02) or
    /// `latency-bandwidth` (no contention).
    #[arg(long, default_value = "maxmin", value_parser = parse_network)]
    pub network: NetworkModel,
    /// Collective algorithm, OP=ALGO with SimGrid's names (repeatable).
    #[arg(long = "coll", value_name = "OP=ALGO")]
    pub coll: Vec<String>,
    /// Messages below this many bytes are sent detached (eager); at or above, rendezvous
    /// (SimGrid's smpi/send-is-detached-thresh).
    #[arg(long, default_value_t = 65536.0, value_name = "BYTES")]
    pub eager_threshold: f64,
    /// Every host computes this many times faster (2: cores twice as fast); computation
    /// replays in 1/F of its time, communication is unchanged.
    #[arg(long, default_value_t = 1.0, value_name = "F")]
    pub speed_scale: f64,
    /// Multiplies route latencies (SimGrid's network/latency-factor; CM02: 1).
    #[arg(long, default_value_t = 1.0)]
    pub latency_factor: f64,
    /// Multiplies achieved bandwidth (SimGrid's network/bandwidth-factor; CM02: 1).
    #[arg(long, default_value_t = 1.0)]
    pub bandwidth_factor: f64,
    /// TCP window bound gamma / (2 latency) on each flow (SimGrid's network/TCP-gamma; 0: none).
    #[arg(long, default_value_t = 0.0, value_name = "BYTES")]
    pub tcp_gamma: f64,
    /// How compute amounts of dPerf-form traces (`p0 compute 5385`) are read: `flops`
    /// (as SimGrid MSG) or `ns` (as dPerf measured them).
    #[arg(long, default_value = "flops", value_parser = parse_legacy)]
    pub legacy_compute: LegacyCompute,
    /// Most actions buffered ahead when reading a shared trace file (memory bound).
    #[arg(long, default_value_t = DEFAULT_WINDOW)]
    pub window: usize,
    /// Measured run time of the traced program (seconds): reports dPerf's slowdown and gain.
    #[arg(long, value_name = "SECONDS")]
    pub measured_time: Option<f64>,
    /// Print every rank in the text report (default: up to 32, then a summary).
    #[arg(long)]
    pub all_ranks: bool,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Write what each rank did when as a Chrome trace (Perfetto, chrome://tracing; one
    /// track per rank, µs of simulated time); `perfcompose report --simulate FILE` draws it.
    #[arg(long, value_name = "FILE")]
    pub timeline: Option<PathBuf>,
    /// Write the same timeline as a Paje trace (Vite, as SimGrid writes them).
    #[arg(long, value_name = "FILE")]
    pub paje: Option<PathBuf>,
}

fn parse_network(s: &str) -> Result<NetworkModel, String> {
    match s {
        "maxmin" | "max-min" | "cm02" => Ok(NetworkModel::MaxMin),
        "latency-bandwidth" | "lb" | "hockney" => Ok(NetworkModel::LatencyBandwidth),
        _ => Err(format!(
            "unknown network model '{s}'; use maxmin or latency-bandwidth"
        )),
    }
}

fn parse_legacy(s: &str) -> Result<LegacyCompute, String> {
    match s {
        "flops" => Ok(LegacyCompute::Flops),
        "ns" => Ok(LegacyCompute::Nanoseconds),
        _ => Err(format!("'{s}' is not flops or ns")),
    }
}

/// Seconds with a unit a human reads at a glance.
fn secs(x: f64) -> String {
    if x == 0.0 {
        "0 s".into()
    } else if x.abs() >= 1.0 {
        format!("{x:.6} s")
    } else if x.abs() >= 1e-3 {
        format!("{:.6} ms", x * 1e3)
    } else {
        format!("{:.6} us", x * 1e6)
    }
}

pub fn run(args: Args) -> anyhow::Result<()> {
    if args.eager_threshold.is_nan() || args.eager_threshold < 0.0 {
        bail!("--eager-threshold must not be negative");
    }
    let ok = args.latency_factor >= 0.0 && args.bandwidth_factor > 0.0 && args.tcp_gamma >= 0.0;
    if !ok {
        bail!("--latency-factor must be >= 0, --bandwidth-factor > 0, --tcp-gamma >= 0");
    }
    if let Some(m) = args.measured_time {
        if m.is_nan() || m <= 0.0 || m.is_infinite() {
            bail!("--measured-time must be a positive number of seconds");
        }
    }
    if args.window == 0 {
        bail!("--window must be at least 1");
    }
    if !(args.speed_scale.is_finite() && args.speed_scale > 0.0) {
        bail!("--speed-scale must be a positive number (2: cores twice as fast)");
    }
    let as_read = Platform::from_file(&args.platform)?;
    let slots = match &args.hostfile {
        Some(h) => {
            let text = std::fs::read_to_string(h)
                .with_context(|| format!("cannot read hostfile {}", h.display()))?;
            read_hostfile(&h.display().to_string(), &text, &as_read)?
        }
        None => as_read.hosts_sorted_by_name(),
    };
    // An OTF2 archive's computation is converted at the hosts' speeds as the platform
    // gives them, so that --speed-scale scales it as it scales any trace's.
    let opened = trace_input::open(
        &args.trace,
        args.np,
        &Otf2Options {
            speed: args.speed.as_deref(),
            write_trace: args.write_trace.as_deref(),
        },
        &as_read,
        &slots,
    )?;
    let platform = if args.speed_scale != 1.0 {
        as_read.with_speeds_scaled(args.speed_scale)
    } else {
        as_read
    };
    let traces = opened.traces;
    let mut config = Config {
        network: args.network,
        detached_threshold: args.eager_threshold,
        latency_factor: args.latency_factor,
        bandwidth_factor: args.bandwidth_factor,
        tcp_gamma: args.tcp_gamma,
        reader: ReaderOptions {
            window: args.window,
            legacy_compute: args.legacy_compute,
        },
        ..Config::default()
    };
    for spec in &args.coll {
        config.coll.set(spec)?;
    }

    let bar = indicatif::ProgressBar::with_draw_target(
        Some(traces.total_bytes.max(1)),
        indicatif::ProgressDrawTarget::stderr_with_hz(4),
    );
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} replaying {bytes}/{total_bytes} of traces ({msg}) {elapsed}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let started = Instant::now();
    let mut on_progress = |p: Progress| {
        if started.elapsed().as_millis() > 500 {
            bar.set_position(p.bytes_read);
            bar.set_message(format!(
                "{} actions, t = {:.6} s",
                p.actions, p.simulated_time
            ));
        }
    };
    let want_timeline = args.timeline.is_some() || args.paje.is_some();
    let result = if want_timeline {
        perfcompose_sim::simulate_with_timeline(
            &platform,
            &traces,
            &slots,
            &config,
            &mut on_progress,
        )
    } else {
        perfcompose_sim::simulate(&platform, &traces, &slots, &config, &mut on_progress)
            .map(|r| (r, Vec::new()))
    };
    bar.finish_and_clear();
    let (report, spans) = result.map_err(|e| anyhow::anyhow!("{e}"))?;
    let wall = started.elapsed().as_secs_f64();
    if let Some(path) = &args.timeline {
        write_with(path, |w| {
            perfcompose_sim::timeline::chrome::write(w, &spans, &report)
        })?;
    }
    if let Some(path) = &args.paje {
        write_with(path, |w| {
            perfcompose_sim::timeline::paje::write(w, &spans, &report)
        })?;
    }
    let notes = perfcompose_sim::output::notes(&platform, args.speed_scale, opened.notes, &report);
    let out = if args.json {
        render_json(&args, &report, wall, &notes)?
    } else {
        render_text(&args, &report, wall, &notes, &platform)
    };
    // A closed pipe (`| head`) surfaces as an error `main` ends on quietly.
    use std::io::Write;
    crate::report::stdout().write_all(out.as_bytes())?;
    Ok(())
}

/// Write a file through a buffer, naming it in errors, and its provenance beside it.
fn write_with(
    path: &std::path::Path,
    f: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> anyhow::Result<()> {
    let file =
        std::fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut w = std::io::BufWriter::new(file);
    f(&mut w)
        .and_then(|()| std::io::Write::flush(&mut w))
        .with_context(|| format!("cannot write {}", path.display()))?;
    crate::version::record(path)
}

fn render_json(args: &Args, r: &Report, wall: f64, notes: &[String]) -> anyhow::Result<String> {
    let run = output::Run {
        platform: &args.platform,
        trace: &args.trace,
        wall_s: wall,
        notes,
        measured_time_s: args.measured_time,
    };
    Ok(serde_json::to_string_pretty(&output::report_json(r, &run))? + "\n")
}

fn render_text(
    args: &Args,
    r: &Report,
    wall: f64,
    notes: &[String],
    platform: &Platform,
) -> String {
    use std::fmt::Write;
    let mut o = String::new();
    let _ = writeln!(o, "simulated time: {:.9} s", r.simulated_time_s);
    let _ = writeln!(
        o,
        "network: {}  ranks: {}  platform: {} ({} hosts)",
        r.network.name(),
        r.ranks.len(),
        args.platform.display(),
        platform.hosts().len()
    );
    let _ = writeln!(
        o,
        "actions: {}  messages: {}  wall time: {:.3} s  ({:.0} actions/s)",
        r.actions,
        r.messages,
        wall,
        if wall > 0.0 {
            r.actions as f64 / wall
        } else {
            0.0
        }
    );
    if let Some(m) = args.measured_time {
        let (s, g) = output::dperf_metrics(m, wall, r.ranks.len());
        let err = (r.simulated_time_s - m) / m * 100.0;
        let _ = writeln!(o,
            "measured: {m:.6} s  prediction error: {err:+.2}%  slowdown: {s:.3e}  gain: {g:.3e}  (dPerf: wall / (measured x processes))"
        );
    }
    let mut table = comfy_table::Table::new();
    table.load_preset(comfy_table::presets::NOTHING);
    table.set_header(vec![
        "rank",
        "host",
        "compute",
        "sleep",
        "communication",
        "waiting",
        "finish",
        "actions",
    ]);
    let show: Vec<&perfcompose_sim::RankReport> = if args.all_ranks || r.ranks.len() <= 32 {
        r.ranks.iter().collect()
    } else {
        r.ranks.iter().take(16).collect()
    };
    for k in show {
        table.add_row(vec![
            k.rank.to_string(),
            k.host.clone(),
            secs(k.compute_s),
            secs(k.sleep_s),
            secs(k.communication_s),
            secs(k.waiting_s),
            secs(k.finish_s),
            k.actions.to_string(),
        ]);
    }
    let _ = writeln!(o, "{table}");
    if !(args.all_ranks || r.ranks.len() <= 32) {
        let stat = |f: &dyn Fn(&perfcompose_sim::RankReport) -> f64| {
            let v: Vec<f64> = r.ranks.iter().map(f).collect();
            let min = v.iter().copied().fold(f64::INFINITY, f64::min);
            let max = v.iter().copied().fold(0.0, f64::max);
            let mean = v.iter().sum::<f64>() / v.len() as f64;
            format!(
                "min {} / mean {} / max {}",
                secs(min),
                secs(mean),
                secs(max)
            )
        };
        let _ = writeln!(
            o,
            "... {} more ranks (--all-ranks to list them)",
            r.ranks.len() - 16
        );
        let _ = writeln!(o, "compute:       {}", stat(&|k| k.compute_s));
        let _ = writeln!(o, "communication: {}", stat(&|k| k.communication_s));
        let _ = writeln!(o, "waiting:       {}", stat(&|k| k.waiting_s));
    }
    for n in notes {
        let _ = writeln!(o, "note: {n}");
    }
    o
}
