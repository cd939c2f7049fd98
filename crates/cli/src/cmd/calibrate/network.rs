//! `perfcompose calibrate network`, under `mpirun` in builds with the `mpi` feature: glue
//! over `perfcompose_mpi::network`. Every rank measures; rank 0 fits, stores, writes the
//! files and prints. An error is printed once, by rank 0; the other ranks exit with
//! status 2 silently. Without the feature the command says how to get it.

use std::path::PathBuf;

#[cfg(feature = "mpi")]
pub use on_mpi::run;

/// Flags of `perfcompose calibrate network`.
#[derive(clap::Args, Debug)]
pub struct NetworkArgs {
    /// Where to store the calibration [default: this machine's,
    /// $XDG_CONFIG_HOME/perfcompose/network-HOST.json or ~/.config/perfcompose/...].
    #[arg(long, short, value_name = "FILE", conflicts_with = "no_save")]
    pub output: Option<PathBuf>,
    /// Calibrate without storing the result.
    #[arg(long)]
    pub no_save: bool,
    /// Also write the parameters as a machine file (a [machine] table in nanoseconds,
    /// versioned); a components file takes it with `machine_file = "FILE"` at its top.
    #[arg(long, value_name = "FILE")]
    pub machine_out: Option<PathBuf>,
    /// Also write a SimGrid platform of this machine (one host per process of the job,
    /// or `--platform-hosts`) for `perfcompose simulate` and `smpirun`.
    #[arg(long, value_name = "FILE")]
    pub platform_out: Option<PathBuf>,
    /// Hosts of the platform `--platform-out` writes, for replaying traces of more
    /// processes than the calibration ran (default: the job's processes).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=65536))]
    pub platform_hosts: Option<u32>,
    /// Largest ping-pong message, bytes (at least 64; sizes double from 8 B).
    #[arg(long, value_name = "BYTES", default_value_t = 16 << 20)]
    pub max_bytes: u64,
    /// Timed batches per message size.
    #[arg(long, value_name = "N", default_value_t = 15)]
    pub reps: usize,
    /// End the job with status 2 when it runs longer than this, so that a lost message
    /// cannot hang it.
    #[arg(long, value_name = "SECONDS", default_value = "600", value_parser = crate::cmd::seconds::seconds)]
    pub time_limit: std::time::Duration,
    /// Print the calibration as JSON (schema in docs/mpi.md) instead of tables.
    #[arg(long)]
    pub json: bool,
}

#[cfg(not(feature = "mpi"))]
pub fn run(_: &NetworkArgs) -> anyhow::Result<()> {
    Err(crate::report::once_per_job(anyhow::anyhow!("this perfcompose was built without MPI; build it with `cargo build --release --features mpi` (after `bash scripts/install-mpi`) and start it as `mpirun -np 2 perfcompose calibrate network`")))
}

#[cfg(feature = "mpi")]
mod on_mpi {
    use std::io::Write;

    use anyhow::{bail, Context};
    use comfy_table::{presets::UTF8_FULL_CONDENSED, Table};
    use perfcompose_mpi::network::{measure, NetworkCalibration, Plan};
    use perfcompose_mpi::Job;

    use super::NetworkArgs;
    use crate::cmd::runtime_args::bar;
    use crate::report::ReportedElsewhere;

    pub fn run(args: &NetworkArgs) -> anyhow::Result<()> {
        let job = Job::start(args.time_limit).map_err(crate::report::once_per_job)?;
        let root = job.is_root();
        let result = measure_and_report(&job, args);
        drop(job);
        match result {
            Err(_) if !root => Err(ReportedElsewhere.into()),
            r => r,
        }
    }

    fn measure_and_report(job: &Job, args: &NetworkArgs) -> anyhow::Result<()> {
        job.require("calibrate network", 2)?;
        if args.max_bytes < 64 {
            bail!(
            "--max-bytes must be at least 64 (the eager and the rendezvous range need two sizes each), got {}",
            args.max_bytes
        );
        }
        if args.reps == 0 {
            bail!("--reps must be at least 1");
        }
        let plan = Plan {
            max_bytes: args.max_bytes,
            batches: args.reps,
            ..Plan::default()
        };
        let bar = bar(plan.steps() as u64, args.json || !job.is_root());
        let raw = measure(job, &plan, &mut |step, done, _| {
            bar.set_position(done as u64);
            bar.set_message(step.to_string());
        });
        bar.finish_and_clear();
        if !job.is_root() {
            return Ok(());
        }
        let library = perfcompose_mpi::job::library_version();
        let cal = NetworkCalibration::from_measurements(
            &raw,
            perfcompose_runtime::host::hostname(),
            job.size(),
            library,
        )?;
        if !args.no_save {
            let path = args
                .output
                .clone()
                .or_else(NetworkCalibration::default_path)
                .context("cannot find a configuration directory; pass -o FILE")?;
            cal.save(&path)?;
            crate::version::record(&path)?;
            if !args.json {
                perfcompose_core::stderr_line!(
                    "stored the network calibration for {} in {}",
                    cal.host,
                    path.display()
                );
            }
        }
        if let Some(path) = &args.machine_out {
            std::fs::write(path, cal.machine_table())
                .with_context(|| format!("cannot write {}", path.display()))?;
            crate::version::record(path)?;
            if !args.json {
                perfcompose_core::stderr_line!(
                "wrote the [machine] table (ns) to {0}; a components file takes it with machine_file = \"{0}\"",
                path.display()
            );
            }
        }
        if let Some(path) = &args.platform_out {
            let hosts = args.platform_hosts.map_or(job.size(), |h| h as usize);
            std::fs::write(path, cal.platform_xml(hosts))
                .with_context(|| format!("cannot write {}", path.display()))?;
            crate::version::record(path)?;
            if !args.json {
                perfcompose_core::stderr_line!(
                    "wrote a SimGrid platform of {} hosts to {} (replay with --eager-threshold {})",
                    job.size(),
                    path.display(),
                    cal.eager_limit_bytes + 1
                );
            }
        }
        report(&mut crate::report::stdout(), &cal, args)
    }

    fn report(
        out: &mut impl Write,
        cal: &NetworkCalibration,
        args: &NetworkArgs,
    ) -> anyhow::Result<()> {
        if args.json {
            serde_json::to_writer_pretty(&mut *out, cal)?;
            writeln!(out)?;
            return Ok(());
        }
        let first = cal.points.first().map_or(0, |p| p.bytes);
        let last = cal.points.last().map_or(0, |p| p.bytes);
        writeln!(
            out,
            "network of {}: {} processes, {}; {} sizes from {} to {}, {} batches each",
            cal.host,
            cal.processes,
            cal.mpi_library,
            cal.points.len(),
            bytes(first),
            bytes(last),
            args.reps
        )?;
        let mut t = Table::new();
        t.load_preset(UTF8_FULL_CONDENSED);
        t.set_header(["Hockney", "α", "β", "bandwidth", "largest deviation"]);
        let limit = cal.eager_limit_bytes;
        let rows = [
            (
                format!("eager (≤ {})", bytes(limit)),
                cal.hockney_eager,
                cal.fit.eager_max_relative_error,
            ),
            (
                format!("rendezvous (> {})", bytes(limit)),
                cal.hockney,
                cal.fit.rendezvous_max_relative_error,
            ),
            (
                "[machine] line".to_string(),
                cal.machine_hockney(),
                cal.fit.machine_max_relative_error,
            ),
        ];
        for (name, h, err) in rows {
            t.add_row([
                name,
                seconds(h.alpha_s),
                format!("{} /B", seconds(h.beta_s_per_byte)),
                rate(h.beta_s_per_byte),
                format!("{:.1}%", 100.0 * err),
            ]);
        }
        writeln!(out, "{t}")?;
        writeln!(
            out,
            "LogGP: L = {}, o = {}, g = {}, G = {} /B",
            seconds(cal.loggp.latency_s),
            seconds(cal.loggp.o_s),
            seconds(cal.loggp.g_s),
            seconds(cal.loggp.gap_per_byte_s)
        )?;
        writeln!(
        out,
        "the divide-and-conquer paper's exchange (all-to-all of {}-byte words under load): l = {}, g = {} per word (largest deviation {:.1}%)",
        cal.exchange.word_bytes,
        seconds(cal.exchange.l_s),
        seconds(cal.exchange.g_s_per_word),
        100.0 * cal.fit.exchange_max_relative_error
    )?;
        writeln!(
            out,
            "compute speed: {:.2} Gflop/s per core",
            cal.flops_per_s / 1e9
        )?;
        let mut p = Table::new();
        p.load_preset(UTF8_FULL_CONDENSED);
        p.set_header(["message", "one way (median)", "spread", "fit", "deviation"]);
        for pt in &cal.points {
            let line = if pt.bytes <= limit {
                cal.hockney_eager
            } else {
                cal.hockney
            };
            let fit = line.time(pt.bytes as f64);
            let lo = pt.samples.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = pt.samples.iter().copied().fold(0.0, f64::max);
            p.add_row([
                bytes(pt.bytes),
                seconds(pt.seconds),
                format!("{:.1}%", 100.0 * (hi - lo) / pt.seconds),
                seconds(fit),
                format!("{:+.1}%", 100.0 * (fit - pt.seconds) / pt.seconds),
            ]);
        }
        writeln!(out, "{p}")?;
        for note in &cal.notes {
            writeln!(out, "note: {note}")?;
        }
        Ok(())
    }

    /// `8 B`, `4 KiB`, `16 MiB`.
    fn bytes(b: u64) -> String {
        if b >= 1 << 20 && b % (1 << 20) == 0 {
            format!("{} MiB", b >> 20)
        } else if b >= 1 << 10 && b % (1 << 10) == 0 {
            format!("{} KiB", b >> 10)
        } else {
            format!("{b} B")
        }
    }

    /// A time with a unit people read: `412 ns`, `2.03 µs`, `1.61 ms`; sub-nanosecond values
    /// (times per byte) in picoseconds.
    fn seconds(s: f64) -> String {
        let a = s.abs();
        if a == 0.0 {
            "0 s".to_string()
        } else if a < 1e-9 {
            format!("{:.3} ps", s * 1e12)
        } else if a < 1e-6 {
            format!("{:.1} ns", s * 1e9)
        } else if a < 1e-3 {
            format!("{:.2} µs", s * 1e6)
        } else if a < 1.0 {
            format!("{:.2} ms", s * 1e3)
        } else {
            format!("{s:.3} s")
        }
    }

    /// Bytes per second of a time per byte: `9.8 GB/s`.
    fn rate(beta: f64) -> String {
        if beta > 0.0 {
            format!("{:.2} GB/s", 1e-9 / beta)
        } else {
            "-".to_string()
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn sizes_and_times_read_like_a_person_writes_them() {
            assert_eq!(bytes(8), "8 B");
            assert_eq!(bytes(4096), "4 KiB");
            assert_eq!(bytes(16 << 20), "16 MiB");
            assert_eq!(bytes(100), "100 B");
            assert_eq!(seconds(4.12e-7), "412.0 ns");
            assert_eq!(seconds(2.034e-6), "2.03 µs");
            assert_eq!(seconds(1e-10), "100.000 ps");
            assert_eq!(rate(1e-10), "10.00 GB/s");
        }
    }
}
