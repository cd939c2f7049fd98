//! A traced run (`Plan::build_traced`): every block call recorded once, on the thread
//! that made it, calls of one thread never overlapping, and the Chrome trace well formed.

use std::collections::BTreeMap;

use perfcompose_runtime::kernel::Inputs;
use perfcompose_runtime::plan::{parse_plan, stream_inputs};
use perfcompose_runtime::timeline::{Call, Recorder};
use perfcompose_runtime::{Config, Registry};

const ELEMENTS: usize = 40;

fn traced(design: &str) -> (Vec<Call>, String) {
    let registry = Registry::builtin();
    let (_, plan) = parse_plan("<term>", design).unwrap();
    let rec = Recorder::new();
    let built = plan
        .build_traced(&registry, Config::default(), &rec)
        .unwrap();
    let inputs = stream_inputs(
        &registry,
        &built.source_kernel,
        256,
        ELEMENTS,
        &Inputs::default(),
        1 << 30,
    )
    .unwrap();
    let out = built.program.run(inputs).unwrap();
    assert_eq!(out.len(), ELEMENTS);
    let mut json = Vec::new();
    rec.write_chrome(&mut json, design).unwrap();
    (rec.calls(), String::from_utf8(json).unwrap())
}

/// Calls per block, and the threads each block ran on.
fn by_block(calls: &[Call]) -> BTreeMap<String, (usize, Vec<usize>)> {
    let mut m: BTreeMap<String, (usize, Vec<usize>)> = BTreeMap::new();
    for c in calls {
        let e = m.entry(c.block.to_string()).or_default();
        e.0 += 1;
        if !e.1.contains(&c.thread) {
            e.1.push(c.thread);
        }
    }
    m
}

fn no_overlap_per_thread(calls: &[Call]) {
    let mut per: BTreeMap<usize, Vec<(u64, u64)>> = BTreeMap::new();
    for c in calls {
        assert!(c.end_ns >= c.start_ns);
        per.entry(c.thread)
            .or_default()
            .push((c.start_ns, c.end_ns));
    }
    for (t, mut v) in per {
        v.sort();
        for w in v.windows(2) {
            assert!(
                w[0].1 <= w[1].0,
                "thread {t}: {:?} overlaps {:?}",
                w[0],
                w[1]
            );
        }
    }
}

#[test]
fn a_pipeline_runs_its_stages_on_their_own_threads() {
    let (calls, json) = traced("pipe(inc, nop)");
    let m = by_block(&calls);
    assert_eq!(m["inc"].0, ELEMENTS);
    assert_eq!(m["nop"].0, ELEMENTS);
    assert_eq!(m["inc"].1.len(), 1, "one thread per stage");
    assert_eq!(m["nop"].1.len(), 1);
    assert_ne!(m["inc"].1, m["nop"].1, "the stages' threads differ");
    no_overlap_per_thread(&calls);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let events = v["traceEvents"].as_array().unwrap();
    let complete = events.iter().filter(|e| e["ph"] == "X").count();
    assert_eq!(complete, 2 * ELEMENTS);
    for e in events {
        assert!(
            e["name"].is_string() && e["pid"].is_u64() && e["tid"].is_u64(),
            "{e}"
        );
        if e["ph"] == "X" {
            assert!(e["ts"].as_f64().unwrap() >= 0.0 && e["dur"].as_f64().unwrap() >= 0.0);
        }
    }
    let named = events.iter().filter(|e| e["name"] == "thread_name").count();
    assert_eq!(named, 2);
}

#[test]
fn a_task_pool_shares_the_calls_among_its_workers() {
    let (calls, _) = traced("tpool(2, seq(inc, nop))");
    let m = by_block(&calls);
    assert_eq!(m["inc"].0, ELEMENTS);
    assert_eq!(m["nop"].0, ELEMENTS);
    assert!(m["inc"].1.len() <= 2);
    no_overlap_per_thread(&calls);
}
