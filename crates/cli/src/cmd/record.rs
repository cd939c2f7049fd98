//! `perfcompose record -o DIR -- mpirun -np P PROGRAM ARGS…`: run an MPI program under the
//! interposition library and turn what it logged into SimGrid traces (builds with the `mpi`
//! feature, which builds the library).
//!
//! Glue only: flags, the speed computation is written at (given, or measured here with the
//! network calibration's loop), the launch with the library preloaded, then
//! `perfcompose_record` converts the logs; this module writes `measured.json`, a platform
//! of this machine at that speed (the network from its calibration) and a hostfile, and
//! prints a summary, the calls not covered (on stderr) and the command that replays it.

use std::path::PathBuf;

/// Flags of `perfcompose record`.
#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:
  perfcompose record -o ring -- mpirun -np 4 ./ring
  perfcompose record -o ring --speed 2.5Gf -- mpirun -np 2 --mca btl self,vader ./ring 100
  perfcompose simulate --platform ring/platform.xml --hostfile ring/hostfile --trace ring/trace.txt

Needs a perfcompose built with MPI: cargo build --release --features mpi
(Open MPI and libclang first: bash scripts/install-mpi).")]
pub struct Args {
    /// Directory for the traces (trace.txt and trace_R.txt), measured.json, platform.xml
    /// and hostfile; created if needed, an earlier recording in it replaced.
    #[arg(short = 'o', long = "out", value_name = "DIR", required = true)]
    pub out: PathBuf,
    /// Speed to write computation at (flop/s, SimGrid units: `2.5Gf`). Default: one
    /// core's speed measured here before the run (`y = a·x + y`, as `calibrate network`).
    #[arg(long, value_name = "SPEED")]
    pub speed: Option<String>,
    /// Network calibration (`calibrate network -o FILE`) for DIR/platform.xml. Default:
    /// the one stored for this machine, if any.
    #[arg(long, value_name = "FILE")]
    pub network: Option<PathBuf>,
    /// Print measured.json instead of the summary.
    #[arg(long)]
    pub json: bool,
    /// The launcher and the program, after `--`.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

#[cfg(not(feature = "mpi"))]
pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("this perfcompose was built without MPI, so without the recorder library; build it with `cargo build --release --features mpi` (after `bash scripts/install-mpi`)")
}

#[cfg(feature = "mpi")]
pub fn run(args: Args) -> anyhow::Result<()> {
    imp::run(args)
}

#[cfg(feature = "mpi")]
mod imp {
    use std::collections::BTreeMap;
    use std::fmt::Write as _;
    use std::path::{Path, PathBuf};
    use std::time::Instant;

    use anyhow::{bail, Context};
    use perfcompose_mpi::network::{flops_per_second, NetworkCalibration};
    use perfcompose_record::{Conversion, Measured, RankTime, RecordDir, Uncovered};
    use perfcompose_sim::units::{parse_quantity, Quantity};
    use perfcompose_sim::Platform;

    use super::Args;

    pub fn run(args: Args) -> anyhow::Result<()> {
        let (flops_per_s, speed_source) = match &args.speed {
            Some(s) => {
                let v = parse_quantity(s, Quantity::Speed)
                    .map_err(|e| anyhow::anyhow!("--speed '{s}': {}", e.message))?;
                if !(v.is_finite() && v > 0.0) {
                    bail!("--speed must be a positive speed, e.g. 2.5Gf");
                }
                (v, format!("given: --speed {s}"))
            }
            None => (
                flops_per_second(),
                "measured here before the run: one core on y = a·x + y over 4096 doubles"
                    .to_string(),
            ),
        };
        let network = network(&args)?;
        let dir = RecordDir::prepare(&args.out)?;
        let library = dir.install_library(perfcompose_record::LIBRARY)?;
        let started = Instant::now();
        let status = std::process::Command::new(&args.command[0])
            .args(&args.command[1..])
            .envs(dir.environment(&library))
            .status()
            .with_context(|| format!("cannot start `{}`", command_line(&args.command)))?;
        let run_wall_s = started.elapsed().as_secs_f64();
        if !status.success() {
            let how = match status.code() {
                Some(c) => format!("exited with status {c}"),
                None => format!("was ended by a signal ({status})"),
            };
            bail!(
                "the program failed: `{}` {how}; nothing was converted (its processes' logs are in {})",
                command_line(&args.command),
                dir.raw_dir().display()
            );
        }
        let conversion = dir.convert(flops_per_s)?;
        let processes = conversion.processes.len() as u32;
        let mut notes = Vec::new();
        let (platform_xml, eager) = platform(&network, processes, flops_per_s, &mut notes);
        std::fs::write(dir.platform(), &platform_xml)
            .with_context(|| format!("cannot write {}", dir.platform().display()))?;
        let platform = Platform::parse(&dir.platform().display().to_string(), &platform_xml)?;
        let hostfile: String = platform
            .hosts()
            .iter()
            .take(processes as usize)
            .map(|h| format!("{}\n", h.name))
            .collect();
        std::fs::write(dir.hostfile(), hostfile)
            .with_context(|| format!("cannot write {}", dir.hostfile().display()))?;
        if conversion
            .processes
            .iter()
            .any(|p| p.thread_level.is_some_and(|l| l >= 3))
        {
            notes.push("the program asked for MPI_THREAD_MULTIPLE: calls made from several threads at once are not recorded reliably".into());
        }
        let measured = measured(
            &args,
            &conversion,
            flops_per_s,
            speed_source,
            run_wall_s,
            notes,
        );
        measured.write(&dir.measured())?;
        crate::version::record(&args.out)?;
        let json = serde_json::to_string_pretty(&measured)? + "\n";
        dir.remove_raw()
            .with_context(|| format!("cannot remove {}", dir.raw_dir().display()))?;
        let out = if args.json {
            json
        } else {
            summary(&dir, &measured, eager)
        };
        use std::io::Write;
        crate::report::stdout().write_all(out.as_bytes())?;
        if !measured.uncovered.is_empty() {
            perfcompose_core::stderr_line!("{}", uncovered_text(&measured.uncovered).trim_end());
        }
        Ok(())
    }

    fn network(args: &Args) -> anyhow::Result<Option<(PathBuf, NetworkCalibration)>> {
        let path = match &args.network {
            Some(p) => p.clone(),
            None => match NetworkCalibration::default_path() {
                Some(p) if p.exists() => p,
                _ => return Ok(None),
            },
        };
        let cal = NetworkCalibration::load(&path)?;
        Ok(Some((path, cal)))
    }

    /// The platform's XML and the eager threshold to replay with.
    fn platform(
        network: &Option<(PathBuf, NetworkCalibration)>,
        processes: u32,
        flops_per_s: f64,
        notes: &mut Vec<String>,
    ) -> (String, Option<u64>) {
        match network {
            Some((path, cal)) => {
                let mut cal = cal.clone();
                cal.flops_per_s = flops_per_s;
                notes.push(format!(
                    "platform.xml: {processes} hosts at the recorded speed, the network of {}",
                    path.display()
                ));
                (
                    cal.platform_xml(processes as usize),
                    Some(cal.eager_limit_bytes + 1),
                )
            }
            None => {
                notes.push("platform.xml: no network calibration for this machine, so its network (1 µs, 10 GBps) is a placeholder; run `mpirun -np 2 perfcompose calibrate network` with the program's transport and record again, or pass --network FILE".into());
                let xml = perfcompose_record::platform::cluster_xml(
                    processes,
                    flops_per_s,
                    1e-6,
                    1e10,
                    "hosts at the speed `perfcompose record` wrote computation at; the network is a placeholder (no calibration)",
                );
                (xml, None)
            }
        }
    }

    fn measured(
        args: &Args,
        c: &Conversion,
        flops_per_s: f64,
        speed_source: String,
        run_wall_s: f64,
        notes: Vec<String>,
    ) -> Measured {
        let mut hosts: Vec<String> = Vec::new();
        for p in &c.processes {
            if !hosts.contains(&p.host) {
                hosts.push(p.host.clone());
            }
        }
        let ranks: Vec<RankTime> = c
            .processes
            .iter()
            .zip(&c.ranks)
            .map(|(p, s)| RankTime {
                rank: p.rank,
                host: p.host.clone(),
                pid: p.pid,
                seconds: s.seconds,
                compute_s: s.compute_s,
                recorded_call_s: s.recorded_call_s,
                recorded_calls: s.recorded_calls,
                actions: s.actions,
            })
            .collect();
        let start = c
            .ranks
            .iter()
            .map(|s| s.start_realtime_ns as f64 * 1e-9)
            .fold(f64::INFINITY, f64::min);
        let end = c
            .ranks
            .iter()
            .map(|s| s.start_realtime_ns as f64 * 1e-9 + s.seconds)
            .fold(f64::NEG_INFINITY, f64::max);
        let mut uncovered: BTreeMap<String, (u64, Vec<u32>)> = BTreeMap::new();
        for s in &c.ranks {
            for (call, n) in &s.uncovered {
                let e = uncovered.entry(call.clone()).or_default();
                e.0 += n;
                e.1.push(s.rank);
            }
        }
        let uncovered: Vec<Uncovered> = uncovered
            .into_iter()
            .map(|(call, (count, ranks))| Uncovered { call, count, ranks })
            .collect();
        Measured {
            version: perfcompose_record::MEASURED_VERSION,
            command: args.command.clone(),
            processes: c.processes.len() as u32,
            hosts,
            flops_per_s,
            speed_source,
            measured_time_s: (end - start).max(0.0),
            run_wall_s,
            recorded_calls: c.ranks.iter().map(|s| s.recorded_calls).sum(),
            uncovered_calls: uncovered.iter().map(|u| u.count).sum(),
            ranks,
            uncovered,
            trace: file_name(&c.index),
            platform: "platform.xml".into(),
            hostfile: "hostfile".into(),
            notes,
        }
    }

    fn file_name(p: &Path) -> String {
        p.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    fn summary(dir: &RecordDir, m: &Measured, eager: Option<u64>) -> String {
        let mut o = String::new();
        let _ = writeln!(
            o,
            "recorded {} processes of `{}`: {:.6} s from MPI_Init to MPI_Finalize ({:.3} s the whole command)",
            m.processes,
            command_line(&m.command),
            m.measured_time_s,
            m.run_wall_s
        );
        let _ = writeln!(
            o,
            "computation written at {:.4e} flop/s ({})",
            m.flops_per_s, m.speed_source
        );
        let mut table = comfy_table::Table::new();
        table.load_preset(comfy_table::presets::NOTHING);
        table.set_header(vec![
            "rank",
            "host",
            "time (s)",
            "compute (s)",
            "in calls (s)",
            "calls",
            "actions",
        ]);
        for r in &m.ranks {
            table.add_row(vec![
                r.rank.to_string(),
                r.host.clone(),
                format!("{:.6}", r.seconds),
                format!("{:.6}", r.compute_s),
                format!("{:.6}", r.recorded_call_s),
                r.recorded_calls.to_string(),
                r.actions.to_string(),
            ]);
        }
        let _ = writeln!(o, "{table}");
        let root = dir.root().display();
        let _ = writeln!(
            o,
            "wrote {root}/{} (and one file per rank), measured.json, platform.xml, hostfile",
            m.trace
        );
        for n in &m.notes {
            let _ = writeln!(o, "note: {n}");
        }
        let eager = eager
            .map(|e| format!(" --eager-threshold {e}"))
            .unwrap_or_default();
        let _ = writeln!(
            o,
            "replay: perfcompose simulate --platform {root}/platform.xml --hostfile {root}/hostfile --trace {root}/{}{eager} --measured-time {:.6}",
            m.trace, m.measured_time_s
        );
        o
    }

    fn uncovered_text(u: &[Uncovered]) -> String {
        let mut o = String::from(
            "calls not covered (counted in measured.json; their time is written as computation):\n",
        );
        for x in u {
            let ranks: Vec<String> = x.ranks.iter().map(|r| r.to_string()).collect();
            let _ = writeln!(
                o,
                "  {} × {} (rank{} {})",
                x.call,
                x.count,
                if x.ranks.len() == 1 { "" } else { "s" },
                ranks.join(", ")
            );
        }
        o
    }

    /// The command as one line (words with spaces quoted), for messages.
    fn command_line(words: &[String]) -> String {
        words
            .iter()
            .map(|w| {
                if w.is_empty() || w.contains(char::is_whitespace) {
                    format!("'{w}'")
                } else {
                    w.clone()
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}
