//! The replay's timeline as Chrome trace events and as Paje, checked against each
//! format's rules by readers written here (not the writers' own code), and against the
//! replay's per-rank breakdown, which the spans must add up to.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use perfcompose_sim::gen::Scenario;
use perfcompose_sim::platform::{read_hostfile, Platform};
use perfcompose_sim::timeline::{chrome, paje, Span};
use perfcompose_sim::trace::TraceSet;
use perfcompose_sim::{simulate_with_timeline, Config, Report};

/// Relative tolerance of sums of spans against the breakdown (the files round to ns).
const SUM_TOLERANCE: f64 = 1e-6;

fn replay(spec: &str) -> (Report, Vec<Span>) {
    let dir: PathBuf = std::env::temp_dir().join(format!(
        "pc-timeline-{}-{}",
        spec.replace(':', "_"),
        std::process::id()
    ));
    let g = Scenario::parse(spec).unwrap().write(&dir).unwrap();
    let platform = Platform::from_file(&g.platform).unwrap();
    let hf = std::fs::read_to_string(&g.hostfile).unwrap();
    let slots = read_hostfile("hostfile", &hf, &platform).unwrap();
    let traces = TraceSet::open(&g.index, None).unwrap();
    let out = simulate_with_timeline(&platform, &traces, &slots, &Config::default(), &mut |_| {})
        .unwrap();
    std::fs::remove_dir_all(&dir).ok();
    out
}

/// Check a Chrome trace (JSON Object form): the fields every event needs, complete events
/// with a non-negative duration, and on each track spans that nest or follow each other.
/// Returns the seconds of each (tid, cat).
fn check_chrome(text: &str) -> BTreeMap<(u64, String), f64> {
    let v: serde_json::Value = serde_json::from_str(text).expect("valid JSON");
    let events = v["traceEvents"].as_array().expect("traceEvents array");
    let mut tracks: BTreeMap<u64, Vec<(f64, f64)>> = BTreeMap::new();
    let mut sums = BTreeMap::new();
    let mut named = BTreeSet::new();
    for e in events {
        let ph = e["ph"].as_str().expect("ph");
        assert!(e["name"].is_string(), "name: {e}");
        assert!(e["pid"].is_u64() && e["tid"].is_u64(), "pid/tid: {e}");
        let tid = e["tid"].as_u64().unwrap();
        match ph {
            "M" => {
                if e["name"] == "thread_name" {
                    assert!(e["args"]["name"].is_string());
                    named.insert(tid);
                }
            }
            "X" => {
                let ts = e["ts"].as_f64().expect("ts");
                let dur = e["dur"].as_f64().expect("dur");
                assert!(ts >= 0.0 && dur > 0.0, "{e}");
                let cat = e["cat"].as_str().expect("cat").to_string();
                tracks.entry(tid).or_default().push((ts, ts + dur));
                *sums.entry((tid, cat)).or_insert(0.0) += dur * 1e-6;
            }
            other => panic!("unexpected phase {other}"),
        }
    }
    for (tid, mut spans) in tracks {
        assert!(named.contains(&tid), "track {tid} has no thread_name");
        spans.sort_by(|a, b| a.0.total_cmp(&b.0).then(b.1.total_cmp(&a.1)));
        // A stack of open spans: each new one must start after the top ends (then the top
        // closes) or end within it (nested).
        let mut open: Vec<(f64, f64)> = Vec::new();
        for s in spans {
            while open.last().is_some_and(|top| s.0 >= top.1 - 1e-9) {
                open.pop();
            }
            if let Some(top) = open.last() {
                assert!(s.1 <= top.1 + 1e-9, "track {tid}: {s:?} overlaps {top:?}");
            }
            open.push(s);
        }
    }
    sums
}

/// Split a Paje line into fields: words, or strings in double quotes.
fn fields(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = line.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c == ' ' || c == '\t' {
            chars.next();
        } else if c == '"' {
            chars.next();
            let s: String = chars.by_ref().take_while(|&c| c != '"').collect();
            out.push(s);
        } else {
            let mut s = String::new();
            while let Some(&c) = chars.peek() {
                if c == ' ' || c == '\t' {
                    break;
                }
                s.push(c);
                chars.next();
            }
            out.push(s);
        }
    }
    out
}

/// Check a Paje trace: `%EventDef NAME ID` blocks of `% FIELD TYPE` lines closed by
/// `%EndEventDef`, then events whose first field is a defined id with as many fields as
/// its definition, dates that never go back, containers created before use, and states
/// set only to defined values. Returns the number of state changes.
fn check_paje(text: &str) -> usize {
    let mut defs: BTreeMap<String, (String, Vec<String>)> = BTreeMap::new();
    let mut lines = text.lines().peekable();
    while let Some(l) = lines.peek() {
        if !l.starts_with('%') {
            break;
        }
        let l = lines.next().unwrap();
        let head = fields(l.trim_start_matches('%'));
        assert_eq!(head.len(), 3, "{l}");
        assert_eq!(head[0], "EventDef", "{l}");
        let mut types = Vec::new();
        loop {
            let f = lines.next().expect("unclosed %EventDef");
            if f.trim() == "%EndEventDef" {
                break;
            }
            let ft = fields(f.trim_start_matches('%'));
            assert_eq!(ft.len(), 2, "field line {f}");
            assert!(["string", "date", "color", "double", "int", "hex"].contains(&ft[1].as_str()));
            types.push(ft[1].clone());
        }
        defs.insert(head[2].clone(), (head[1].clone(), types));
    }
    assert!(!defs.is_empty(), "no header");
    let mut last = 0.0;
    let mut containers = BTreeSet::from(["0".to_string()]);
    let mut values = BTreeSet::new();
    let mut states = 0;
    for l in lines {
        let f = fields(l);
        let (name, types) = defs
            .get(&f[0])
            .unwrap_or_else(|| panic!("undefined event: {l}"));
        assert_eq!(f.len() - 1, types.len(), "{l}");
        for (v, t) in f[1..].iter().zip(types) {
            if t == "date" {
                let d: f64 = v.parse().expect("date");
                assert!(d >= last, "time goes back: {l}");
                last = d;
            }
        }
        match name.as_str() {
            "PajeDefineEntityValue" => {
                values.insert(f[1].clone());
            }
            "PajeCreateContainer" => {
                assert!(containers.contains(&f[4]) || f[4] == "0", "parent: {l}");
                containers.insert(f[2].clone());
            }
            "PajeSetState" => {
                assert!(containers.contains(&f[3]), "container: {l}");
                assert!(values.contains(&f[4]), "value: {l}");
                states += 1;
            }
            "PajeDestroyContainer" => {
                assert!(containers.remove(&f[3]), "destroys unknown: {l}");
            }
            _ => {}
        }
    }
    states
}

fn check(spec: &str) {
    let (report, spans) = replay(spec);
    assert!(!spans.is_empty());
    let mut c = Vec::new();
    chrome::write(&mut c, &spans, &report).unwrap();
    let sums = check_chrome(std::str::from_utf8(&c).unwrap());
    let sum = |r: u32, cats: &[&str]| -> f64 {
        cats.iter()
            .map(|k| sums.get(&(r as u64, k.to_string())).copied().unwrap_or(0.0))
            .sum()
    };
    for k in &report.ranks {
        let close = |a: f64, b: f64| (a - b).abs() <= SUM_TOLERANCE * b.abs().max(1e-3);
        assert!(
            close(sum(k.rank, &["compute"]), k.compute_s),
            "rank {} compute",
            k.rank
        );
        assert!(
            close(sum(k.rank, &["late"]), k.waiting_s),
            "rank {} late",
            k.rank
        );
        let comm = sum(k.rank, &["send", "recv", "wait", "collective"]);
        assert!(
            close(comm, k.communication_s),
            "rank {} comm {comm} vs {}",
            k.rank,
            k.communication_s
        );
    }
    let mut p = Vec::new();
    paje::write(&mut p, &spans, &report).unwrap();
    let states = check_paje(std::str::from_utf8(&p).unwrap());
    assert!(states >= report.ranks.len(), "{states} state changes");
}

#[test]
fn point_to_point_timelines_are_well_formed_and_add_up() {
    check("ring:8:3:1e6");
    check("blocking:4:3");
}

#[test]
fn collective_timelines_are_well_formed_and_add_up() {
    check("coll:8:2:1e5");
    let (_, spans) = replay("coll:8:2:1e5");
    assert!(spans
        .iter()
        .any(|s| s.activity == perfcompose_sim::timeline::Activity::Collective));
}
