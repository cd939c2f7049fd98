//! What `perfcompose simulate --json` prints: a replay's [`Report`] with the run's facts
//! (the files replayed, the wall time of the replay, the notes) and, given the traced
//! program's measured run time, dPerf's cost metrics. The command and the Python package
//! both build it here, so that the JSON has one shape (`docs/simulation.md`).

use std::path::Path;

use serde_json::{json, Value};

use crate::{Platform, Report};

/// What a replay's JSON says besides the [`Report`].
pub struct Run<'a> {
    /// The platform and trace files as the user named them.
    pub platform: &'a Path,
    pub trace: &'a Path,
    /// The replay's wall time (seconds).
    pub wall_s: f64,
    /// Everything the user should know ([`notes`]).
    pub notes: &'a [String],
    /// The traced program's measured run time (seconds), for dPerf's metrics.
    pub measured_time_s: Option<f64>,
}

/// dPerf's cost metrics (the dPerf paper's eq. 5): slowdown = prediction time / (measured
/// run time × processes), gain = 1 / slowdown. The prediction time is the replay's wall
/// time (the traces are taken as given).
pub fn dperf_metrics(measured: f64, wall: f64, ranks: usize) -> (f64, f64) {
    let slowdown = wall / (measured * ranks as f64);
    (slowdown, 1.0 / slowdown)
}

/// The notes of a replay, in the order they are printed: the platform's, the speed
/// scale's (when not 1), those of reading the traces (`trace_notes`), the replay's own.
pub fn notes(
    platform: &Platform,
    speed_scale: f64,
    trace_notes: Vec<String>,
    report: &Report,
) -> Vec<String> {
    let mut notes: Vec<String> = platform.notes().to_vec();
    if speed_scale != 1.0 {
        notes.push(format!(
            "every host computes {speed_scale}× as fast as the platform says (--speed-scale {speed_scale})"
        ));
    }
    notes.extend(trace_notes);
    notes.extend(report.notes.iter().cloned());
    notes
}

/// The JSON document of a replay.
pub fn report_json(r: &Report, run: &Run<'_>) -> Value {
    let wall = run.wall_s;
    let mut v = json!({
        "simulated_time_s": r.simulated_time_s,
        "ranks": r.ranks,
        "actions": r.actions,
        "wall_time_s": wall,
        "actions_per_s": if wall > 0.0 { r.actions as f64 / wall } else { 0.0 },
        "messages": r.messages,
        "events": r.events,
        "network": r.network.name(),
        "platform": run.platform.display().to_string(),
        "trace": run.trace.display().to_string(),
        "notes": run.notes,
    });
    if let Some(m) = run.measured_time_s {
        let (s, g) = dperf_metrics(m, wall, r.ranks.len());
        v["measured_time_s"] = json!(m);
        v["slowdown"] = json!(s);
        v["gain"] = json!(g);
    }
    v
}
