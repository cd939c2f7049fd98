//! Chrome's trace-event format (the JSON Object form, which Perfetto and chrome://tracing
//! open): one complete event (`"ph": "X"`) per span, one track (`tid`) per rank named
//! after it, times in microseconds of simulated time. The replay's report rides along in
//! `otherData.replay`, so that `perfcompose report --simulate` needs only this file.

use std::io::{self, Write};

use super::{nanos, Span};
use crate::engine::Report;

/// Microseconds with nanosecond precision, written exactly (`12.345`).
fn micros(ns: u64) -> String {
    format!("{}.{:03}", ns / 1000, ns % 1000)
}

/// Write `spans` and `report` as a Chrome trace. Spans of zero length are left out.
pub fn write(out: &mut dyn Write, spans: &[Span], report: &Report) -> io::Result<()> {
    let other =
        serde_json::json!({ "replay": report, "generator": "perfcompose simulate --timeline" });
    writeln!(
        out,
        "{{\"displayTimeUnit\":\"ns\",\"otherData\":{other},\"traceEvents\":["
    )?;
    write!(
        out,
        "{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":0,\"tid\":0,\"args\":{{\"name\":\"replay\"}}}}"
    )?;
    for r in &report.ranks {
        let name = serde_json::to_string(&format!("rank {} ({})", r.rank, r.host))?;
        write!(
            out,
            ",\n{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":{},\"args\":{{\"name\":{name}}}}}",
            r.rank
        )?;
        write!(
            out,
            ",\n{{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":0,\"tid\":{},\"args\":{{\"sort_index\":{}}}}}",
            r.rank, r.rank
        )?;
    }
    for s in spans {
        let (a, b) = (nanos(s.start), nanos(s.end));
        if b <= a {
            continue;
        }
        write!(
            out,
            ",\n{{\"name\":\"{}\",\"cat\":\"{}\",\"ph\":\"X\",\"ts\":{},\"dur\":{},\"pid\":0,\"tid\":{}}}",
            s.action,
            s.activity.name(),
            micros(a),
            micros(b - a),
            s.rank
        )?;
    }
    writeln!(out, "\n]}}")?;
    Ok(())
}
