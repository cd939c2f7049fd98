//! A calibration written for the other tools: a machine file for components files (in
//! nanoseconds, versioned) and a SimGrid platform of this machine (SI units, as SimGrid
//! reads them).

use std::fmt::Write as _;

use perfcompose_core::components::MACHINE_FILE_VERSION;
use perfcompose_core::units::TimeUnit;

use super::calibration::NetworkCalibration;

impl NetworkCalibration {
    /// A machine file with this network's parameters in nanoseconds (the unit of every
    /// block model), format version [`MACHINE_FILE_VERSION`]: a components file takes it
    /// with `machine_file = "FILE"` (or its `[machine]` table pasted in, `unit` and all).
    ///
    /// It binds `alpha`, `beta` (Hockney: the eager start-up and the bulk time per byte),
    /// `L`, `o`, `G` (LogGP) and the divide-and-conquer paper's `l` and `g`. LogGP's own `g` (the gap between
    /// messages) shares its name with the divide-and-conquer paper's per-word `g`; the table binds the paper's,
    /// which `exchange()` and `dc(...)` use, and states LogGP's in a comment.
    pub fn machine_table(&self) -> String {
        let m = self.machine_hockney();
        // Ten significant digits: far finer than the measurements, and no
        // `4.5000000000000006e2` from the conversion.
        let ns = |seconds: f64| {
            let v = TimeUnit::S.to_internal(seconds);
            format!("{v:.9e}").parse::<f64>().unwrap_or(v)
        };
        let mut s = String::new();
        let _ = writeln!(
            s,
            "# The network of {} measured by `perfcompose calibrate network`: {} processes, {}.",
            self.host,
            self.processes,
            self.mpi_library.lines().next().unwrap_or("").trim()
        );
        let _ = writeln!(
            s,
            "version = {MACHINE_FILE_VERSION}  # of this file's format (docs/formats.md)"
        );
        let _ = writeln!(s, "[machine]");
        let _ = writeln!(s, "unit = \"ns\"  # of every value below");
        let _ = writeln!(
            s,
            "alpha = {:e}  # ns: start-up of a message (eager range, up to {} B)",
            ns(m.alpha_s),
            self.eager_limit_bytes
        );
        let _ = writeln!(
            s,
            "beta = {:e}  # ns per byte: bulk transfers; alpha + beta*bytes is within {:.1}% of every size measured",
            ns(m.beta_s_per_byte),
            100.0 * self.fit.machine_max_relative_error
        );
        let _ = writeln!(s, "L = {:e}  # ns: LogGP latency", ns(self.loggp.latency_s));
        let _ = writeln!(
            s,
            "o = {:e}  # ns: LogGP overhead (the send call of a small message)",
            ns(self.loggp.o_s)
        );
        let _ = writeln!(
            s,
            "G = {:e}  # ns per byte: LogGP gap per byte",
            ns(self.loggp.gap_per_byte_s)
        );
        let _ = writeln!(
            s,
            "l = {:e}  # ns: the divide-and-conquer paper's start-up of an exchange (all-to-all under load)",
            ns(self.exchange.l_s)
        );
        let _ = writeln!(
            s,
            "g = {:e}  # ns per {}-byte word: the divide-and-conquer paper's time per word under load",
            ns(self.exchange.g_s_per_word),
            self.exchange.word_bytes
        );
        let _ = writeln!(
            s,
            "# LogGP's gap between messages is {:e} ns; it is not bound here because `g` is the divide-and-conquer paper's above.",
            ns(self.loggp.g_s)
        );
        s
    }

    /// A SimGrid platform (version 4.1) of `hosts` hosts like this one: a flat cluster
    /// whose route between two hosts has this network's eager start-up as latency (half
    /// on each host's link, as a cluster route crosses two) and its bulk bandwidth, each
    /// host computing at the calibrated flop rate.
    pub fn platform_xml(&self, hosts: usize) -> String {
        let m = self.machine_hockney();
        let hosts = hosts.max(1);
        let bandwidth = if m.beta_s_per_byte > 0.0 {
            1.0 / m.beta_s_per_byte
        } else {
            1e12
        };
        let speed = if self.flops_per_s > 0.0 {
            self.flops_per_s
        } else {
            1e9
        };
        let mut s = String::new();
        let _ = writeln!(s, "<?xml version='1.0'?>");
        let _ = writeln!(
            s,
            "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">"
        );
        let _ = writeln!(
            s,
            "<!-- {hosts} hosts like {}, from `perfcompose calibrate network` ({} processes): \
             latency = eager start-up {:e} s over two links, bandwidth = 1 / bulk beta; \
             messages up to {} B went eagerly: replay with an eager threshold of {} B. -->",
            self.host,
            self.processes,
            m.alpha_s,
            self.eager_limit_bytes,
            self.eager_limit_bytes + 1
        );
        let _ = writeln!(s, "<platform version=\"4.1\">");
        let _ = writeln!(
            s,
            "  <cluster id=\"calibrated\" prefix=\"node-\" radical=\"0-{}\" suffix=\"\" speed=\"{:e}f\" bw=\"{:e}Bps\" lat=\"{:e}s\"/>",
            hosts - 1,
            speed,
            bandwidth,
            m.alpha_s / 2.0
        );
        let _ = writeln!(s, "</platform>");
        s
    }
}
