//! Paje traces (Vite opens them; SimGrid writes its replays' timelines in this format):
//! a header of `%EventDef` blocks, then one event per line in time order. Each rank is a
//! container whose state is set to the activity of each span, and back to `idle` between
//! spans.

use std::io::{self, Write};

use super::{nanos, Activity, Span};
use crate::engine::Report;

/// An event definition's fields: (name, type).
pub type Fields = &'static [(&'static str, &'static str)];

/// The event definitions: (id, name, fields).
pub const EVENT_DEFS: [(u32, &str, Fields); 6] = [
    (
        0,
        "PajeDefineContainerType",
        &[("Alias", "string"), ("Type", "string"), ("Name", "string")],
    ),
    (
        1,
        "PajeDefineStateType",
        &[("Alias", "string"), ("Type", "string"), ("Name", "string")],
    ),
    (
        2,
        "PajeDefineEntityValue",
        &[
            ("Alias", "string"),
            ("Type", "string"),
            ("Name", "string"),
            ("Color", "color"),
        ],
    ),
    (
        3,
        "PajeCreateContainer",
        &[
            ("Time", "date"),
            ("Alias", "string"),
            ("Type", "string"),
            ("Container", "string"),
            ("Name", "string"),
        ],
    ),
    (
        4,
        "PajeDestroyContainer",
        &[("Time", "date"), ("Type", "string"), ("Name", "string")],
    ),
    (
        5,
        "PajeSetState",
        &[
            ("Time", "date"),
            ("Type", "string"),
            ("Container", "string"),
            ("Value", "string"),
        ],
    ),
];

/// Colours of the states (red green blue in 0..1, as Paje writes them).
fn rgb(a: Activity) -> &'static str {
    match a {
        Activity::Compute => "0.12 0.47 0.71",
        Activity::Sleep => "0.5 0.5 0.5",
        Activity::Send => "1.0 0.5 0.05",
        Activity::Recv => "0.17 0.63 0.17",
        Activity::Wait => "0.58 0.4 0.74",
        Activity::Collective => "0.84 0.15 0.16",
        Activity::Late => "0.74 0.74 0.13",
    }
}

fn date(ns: u64) -> String {
    format!("{}.{:09}", ns / 1_000_000_000, ns % 1_000_000_000)
}

/// Write `spans` and the ranks of `report` as a Paje trace.
pub fn write(out: &mut dyn Write, spans: &[Span], report: &Report) -> io::Result<()> {
    for (id, name, fields) in EVENT_DEFS {
        writeln!(out, "%EventDef {name} {id}")?;
        for (f, t) in fields {
            writeln!(out, "%       {f} {t}")?;
        }
        writeln!(out, "%EndEventDef")?;
    }
    writeln!(out, "0 ROOT 0 \"replay\"")?;
    writeln!(out, "0 RANK ROOT \"rank\"")?;
    writeln!(out, "1 STATE RANK \"MPI state\"")?;
    for a in Activity::ALL {
        writeln!(out, "2 {} STATE \"{}\" \"{}\"", a.name(), a.name(), rgb(a))?;
    }
    writeln!(out, "2 idle STATE \"idle\" \"1 1 1\"")?;
    writeln!(out, "3 {} root ROOT 0 \"replay\"", date(0))?;
    for r in &report.ranks {
        writeln!(
            out,
            "3 {} r{} RANK root \"rank {} ({})\"",
            date(0),
            r.rank,
            r.rank,
            r.host.replace('"', "'")
        )?;
    }
    // Paje wants events in time order: each rank's state changes, merged.
    let mut events: Vec<(u64, u32, &'static str)> = Vec::with_capacity(spans.len() * 2);
    let mut per_rank: Vec<Vec<&Span>> = vec![Vec::new(); report.ranks.len()];
    for s in spans {
        if let Some(v) = per_rank.get_mut(s.rank as usize) {
            v.push(s);
        }
    }
    for (r, list) in per_rank.iter_mut().enumerate() {
        list.retain(|s| nanos(s.end) > nanos(s.start));
        list.sort_by_key(|s| nanos(s.start));
        for (i, s) in list.iter().enumerate() {
            let (a, b) = (nanos(s.start), nanos(s.end));
            events.push((a, r as u32, s.activity.name()));
            let next_start = list.get(i + 1).map(|n| nanos(n.start));
            if next_start != Some(b) {
                events.push((b, r as u32, "idle"));
            }
        }
    }
    events.sort_by_key(|e| (e.0, e.1));
    for (t, r, v) in &events {
        writeln!(out, "5 {} STATE r{r} {v}", date(*t))?;
    }
    let end = nanos(report.simulated_time_s).max(events.last().map_or(0, |e| e.0));
    for r in &report.ranks {
        writeln!(out, "4 {} RANK r{}", date(end), r.rank)?;
    }
    writeln!(out, "4 {} ROOT root", date(end))?;
    Ok(())
}
