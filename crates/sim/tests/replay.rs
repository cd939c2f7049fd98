//! Replay semantics on hand-written traces whose times can be worked out by hand, and the
//! errors bad traces get.

use std::path::PathBuf;

use perfcompose_sim::platform::Platform;
use perfcompose_sim::trace::TraceSet;
use perfcompose_sim::{simulate, Config, NetworkModel, Report, SimError};

/// Times are sums of a few floating-point terms.
const EPS: f64 = 1e-12;

const TWO_HOSTS: &str = r#"<platform version="4.1"><zone id="z" routing="Full">
  <host id="a" speed="1Gf"/><host id="b" speed="2Gf"/>
  <link id="l" bandwidth="100MBps" latency="1ms"/>
  <route src="a" dst="b"><link_ctn id="l"/></route>
</zone></platform>"#;

struct Case {
    dir: PathBuf,
}

impl Case {
    fn new(name: &str, platform: &str, ranks: &[&str]) -> Case {
        let dir = std::env::temp_dir().join(format!("pc-replay-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("p.xml"), platform).unwrap();
        let mut index = String::new();
        for (r, text) in ranks.iter().enumerate() {
            let f = format!("t{r}.txt");
            std::fs::write(dir.join(&f), text).unwrap();
            index.push_str(&f);
            index.push('\n');
        }
        std::fs::write(dir.join("index.txt"), index).unwrap();
        Case { dir }
    }

    fn run_with(&self, config: &Config) -> Result<Report, SimError> {
        let p = Platform::from_file(&self.dir.join("p.xml")).unwrap();
        let t = TraceSet::open(&self.dir.join("index.txt"), None).map_err(SimError::Trace)?;
        let slots = p.hosts_sorted_by_name();
        simulate(&p, &t, &slots, config, &mut |_| {})
    }

    fn run(&self) -> Result<Report, SimError> {
        self.run_with(&Config::default())
    }

    fn path(&self, f: &str) -> PathBuf {
        self.dir.join(f)
    }
}

impl Drop for Case {
    fn drop(&mut self) {
        std::fs::remove_dir_all(&self.dir).ok();
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= EPS * b.abs().max(1.0)
}

#[test]
fn compute_and_rendezvous_send() {
    // 1e9 flops at 1 Gf = 1 s; then 1e6 bytes (+16 envelope) over 1 ms + 100 MBps.
    let c = Case::new(
        "rdv",
        TWO_HOSTS,
        &[
            "0 init\n0 compute 1e9\n0 send 1 0 1e6\n",
            "1 init\n1 recv 0 0 1e6\n",
        ],
    );
    let r = c.run().unwrap();
    let t = 1.0 + 1e-3 + (1e6 + 16.0) / 100e6;
    assert!(close(r.simulated_time_s, t), "{}", r.simulated_time_s);
    assert!(
        close(r.ranks[0].finish_s, t),
        "sender of a large message waits for delivery"
    );
    assert!(
        close(r.ranks[1].waiting_s, 1.0),
        "receiver waited for the sender"
    );
    assert!(close(r.ranks[1].communication_s, t - 1.0));
}

#[test]
fn small_send_is_detached() {
    // Rank 1 computes 1 s (2e9 flops at 2 Gf) before receiving; rank 0's 1000-byte send
    // returns at once.
    let c = Case::new(
        "det",
        TWO_HOSTS,
        &[
            "0 init\n0 send 1 0 1000\n",
            "1 init\n1 compute 2e9\n1 recv 0 0 1000\n",
        ],
    );
    let r = c.run().unwrap();
    assert!(close(r.ranks[0].finish_s, 0.0));
    assert!(close(r.ranks[1].finish_s, 1.0 + 1e-3 + 1016.0 / 100e6));
    // at the threshold the send is a rendezvous
    let c = Case::new(
        "det2",
        TWO_HOSTS,
        &[
            "0 init\n0 send 1 0 65536\n",
            "1 init\n1 compute 2e9\n1 recv 0 0 65536\n",
        ],
    );
    let r = c.run().unwrap();
    assert!(close(r.ranks[0].finish_s, 1.0 + 1e-3 + 65552.0 / 100e6));
    // a lower threshold makes it rendezvous too
    let cfg = Config {
        detached_threshold: 500.0,
        ..Config::default()
    };
    let c = Case::new(
        "det3",
        TWO_HOSTS,
        &[
            "0 init\n0 send 1 0 1000\n",
            "1 init\n1 compute 2e9\n1 recv 0 0 1000\n",
        ],
    );
    assert!(c.run_with(&cfg).unwrap().ranks[0].finish_s > 1.0);
}

const SHARED_LINK: &str = r#"<platform version="4.1"><zone id="z" routing="Full">
  <host id="a" speed="1Gf"/><host id="b" speed="1Gf"/><host id="c" speed="1Gf"/><host id="d" speed="1Gf"/>
  <link id="short" bandwidth="1GBps" latency="1ms"/>
  <link id="long" bandwidth="1GBps" latency="3ms"/>
  <link id="shared" bandwidth="100MBps" latency="0"/>
  <route src="a" dst="c"><link_ctn id="short"/><link_ctn id="shared"/></route>
  <route src="b" dst="d"><link_ctn id="long"/><link_ctn id="shared"/></route>
</zone></platform>"#;

#[test]
fn maxmin_weights_by_latency_and_latency_bandwidth_ignores_contention() {
    // Two 1e6-byte flows through one 100 MBps link. CM02 shares by 1/latency: the 1 ms flow
    // gets 3/4, the 3 ms flow 1/4 while both run.
    let traces = [
        "0 init\n0 send 2 0 999984\n",
        "1 init\n1 send 3 0 999984\n",
        "2 init\n2 recv 0 0 999984\n",
        "3 init\n3 recv 1 0 999984\n",
    ];
    let c = Case::new("mm", SHARED_LINK, &traces);
    let r = c.run().unwrap();
    let size = 1e6; // with the envelope
                    // flow A (lat 1 ms) alone from 1 ms to 3 ms at 100 MBps: 2e5 bytes; then 75 MBps.
    let a_left = size - 2e5;
    let t_a = 3e-3 + a_left / 75e6;
    // flow B from 3 ms at 25 MBps until A ends, then alone at 100 MBps
    let b_done = (t_a - 3e-3) * 25e6;
    let t_b = t_a + (size - b_done) / 100e6;
    assert!(
        close(r.ranks[0].finish_s, t_a),
        "{} vs {t_a}",
        r.ranks[0].finish_s
    );
    assert!(
        close(r.ranks[1].finish_s, t_b),
        "{} vs {t_b}",
        r.ranks[1].finish_s
    );
    let lb = Config {
        network: NetworkModel::LatencyBandwidth,
        ..Config::default()
    };
    let r = c.run_with(&lb).unwrap();
    assert!(close(r.ranks[0].finish_s, 1e-3 + size / 100e6));
    assert!(close(r.ranks[1].finish_s, 3e-3 + size / 100e6));
}

#[test]
fn deadlock_names_ranks_and_lines() {
    let c = Case::new(
        "dl",
        TWO_HOSTS,
        &[
            "0 init\n0 recv 1 0 10\n",
            "1 init\n1 compute 1e6\n1 recv 0 0 10\n",
        ],
    );
    match c.run().unwrap_err() {
        SimError::Deadlock { blocked, .. } => {
            assert_eq!(blocked.len(), 2);
            assert_eq!(blocked[1].rank, 1);
            assert_eq!(blocked[1].line, 3);
            assert!(blocked[1].file.ends_with("t1.txt"));
            assert!(
                blocked[1].waits[0].contains("message from rank 0"),
                "{:?}",
                blocked[1].waits
            );
            let text = SimError::Deadlock { time: 0.0, blocked }.to_string();
            assert!(text.contains("rank 0 at"), "{text}");
        }
        e => panic!("expected a deadlock, got {e}"),
    }
}

#[test]
fn missing_route_is_an_error() {
    let p = r#"<platform version="4.1"><zone id="z" routing="Full">
      <host id="a" speed="1Gf"/><host id="b" speed="1Gf"/></zone></platform>"#;
    let c = Case::new(
        "nr",
        p,
        &["0 init\n0 send 1 0 10\n", "1 init\n1 recv 0 0 10\n"],
    );
    let e = c.run().unwrap_err().to_string();
    assert!(e.contains("no route from host 'a'"), "{e}");
    assert!(e.contains("t1.txt:2") || e.contains("t0.txt:2"), "{e}");
}

#[test]
fn malformed_line_names_file_line_rank() {
    let c = Case::new(
        "bad",
        TWO_HOSTS,
        &["0 init\n0 send 1 zero 10\n", "1 init\n"],
    );
    match c.run().unwrap_err() {
        SimError::Trace(t) => {
            assert!(t.file.ends_with("t0.txt"));
            assert_eq!(t.line, 2);
            assert_eq!(t.rank, Some(0));
            assert!(t.message.contains("'zero'"));
        }
        e => panic!("{e}"),
    }
    let c = Case::new(
        "trunc",
        TWO_HOSTS,
        &["0 init\n0 send 1 0 100\n", "1 init\n1 recv 0 0 10\n"],
    );
    assert!(c.run().unwrap_err().to_string().contains("truncated"));
}

#[test]
fn pending_requests_are_waited_at_the_end() {
    // an isend never waited: the rank still finishes only when its (rendezvous) message is delivered
    let c = Case::new(
        "end",
        TWO_HOSTS,
        &[
            "0 init\n0 isend 1 0 1e6\n",
            "1 init\n1 compute 2e9\n1 recv 0 0 1e6\n",
        ],
    );
    let r = c.run().unwrap();
    assert!(close(
        r.ranks[0].finish_s,
        1.0 + 1e-3 + (1e6 + 16.0) / 100e6
    ));
}

#[test]
fn dperf_form_and_shared_file() {
    let c = Case::new("dperf", TWO_HOSTS, &[]);
    let shared =
        "p0 init\np1 init\np0 compute 1e9\np0 Isend p1 1e6\np1 Irecv p0\np1 wait\np0 wait\n";
    std::fs::write(c.path("shared.txt"), shared).unwrap();
    let p = Platform::from_file(&c.path("p.xml")).unwrap();
    let t = TraceSet::open(&c.path("shared.txt"), None).unwrap();
    assert!(t.is_shared());
    let r = simulate(
        &p,
        &t,
        &p.hosts_sorted_by_name(),
        &Config::default(),
        &mut |_| {},
    )
    .unwrap();
    assert!(
        close(r.simulated_time_s, 1.0 + 1e-3 + (1e6 + 16.0) / 100e6),
        "{}",
        r.simulated_time_s
    );
    assert_eq!(r.actions, 7);
}

#[test]
fn collectives_run_with_every_algorithm() {
    let cluster = r#"<platform version="4.1"><cluster id="c" prefix="n" suffix="" radical="0-5" speed="1Gf" bw="125MBps" lat="50us" bb_bw="1GBps" bb_lat="100us"/></platform>"#;
    let prog = |r: u32| {
        format!(
            "{r} init\n{r} bcast 1000 2\n{r} reduce 100 1e6 1\n{r} allreduce 1000 0\n{r} barrier\n{r} alltoall 500 500\n{r} gather 10 10 3\n{r} allgather 20 20\n{r} scatter 30 30 5\n"
        )
    };
    let ranks: Vec<String> = (0..6).map(prog).collect();
    let refs: Vec<&str> = ranks.iter().map(|s| s.as_str()).collect();
    let c = Case::new("coll", cluster, &refs);
    let base = c.run().unwrap().simulated_time_s;
    assert!(base > 0.0);
    for spec in [
        "bcast=flattree",
        "barrier=ompi_recursivedoubling",
        "allreduce=rdb",
        "allreduce=lr",
        "reduce=binomial",
        "reduce=flat_tree",
        "alltoall=bruck",
        "alltoall=ring",
        "allgather=ring",
    ] {
        let mut cfg = Config::default();
        cfg.coll.set(spec).unwrap();
        let t = c.run_with(&cfg).unwrap().simulated_time_s;
        assert!(t > 0.0 && t.is_finite(), "{spec}");
    }
    // pair refuses 6 ranks, as SimGrid does
    let mut cfg = Config::default();
    cfg.coll.set("alltoall=pair").unwrap();
    assert!(c
        .run_with(&cfg)
        .unwrap_err()
        .to_string()
        .contains("power-of-two"));
}

/// Random traces (well-formed or not, deadlocking or not) end in a report or an error,
/// never a panic or a hang.
mod random_traces {
    use super::*;
    use proptest::prelude::*;

    fn line(rank: u32) -> impl Strategy<Value = String> {
        let peer = 0u32..3;
        let size = prop_oneof![Just(0.0), Just(100.0), Just(70000.0), 1.0f64..1e6];
        prop_oneof![
            (1.0f64..1e8).prop_map(move |f| format!("{rank} compute {f}")),
            (peer.clone(), 0i32..2, size.clone())
                .prop_map(move |(p, t, s)| format!("{rank} send {p} {t} {s}")),
            (peer.clone(), 0i32..2, size.clone())
                .prop_map(move |(p, t, s)| format!("{rank} isend {p} {t} {s}")),
            (peer.clone(), 0i32..2).prop_map(move |(p, t)| format!("{rank} recv {p} {t} -1")),
            (peer.clone(), 0i32..2).prop_map(move |(p, t)| format!("{rank} irecv {p} {t} -1")),
            (peer.clone(), peer.clone(), 0i32..2)
                .prop_map(move |(a, b, t)| format!("{rank} wait {a} {b} {t}")),
            (peer.clone(), peer.clone(), 0i32..2)
                .prop_map(move |(a, b, t)| format!("{rank} test {a} {b} {t}")),
            Just(format!("{rank} waitall")),
            Just(format!("{rank} barrier")),
            (size.clone(), 0u32..3).prop_map(move |(s, r)| format!("{rank} bcast {s} {r}")),
            size.clone()
                .prop_map(move |s| format!("{rank} allreduce {s} 10")),
            size.clone()
                .prop_map(move |s| format!("{rank} alltoall {s} {s}")),
            (peer.clone(), size).prop_map(move |(p, s)| format!("{rank} sendRecv {s} {p} {s} {p}")),
            Just(format!("{rank} sleep 0.001")),
            Just(format!("{rank} bogus 1 2")),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn never_panics(
            a in proptest::collection::vec(line(0), 0..12),
            b in proptest::collection::vec(line(1), 0..12),
            c in proptest::collection::vec(line(2), 0..12),
            lb in any::<bool>(),
        ) {
            let cluster = r#"<platform version="4.1"><cluster id="c" prefix="n" suffix="" radical="0-1" speed="1Gf" bw="125MBps" lat="50us" bb_bw="200MBps" bb_lat="10us"/></platform>"#;
            let t: Vec<String> = [a, b, c].iter().map(|v| v.join("\n") + "\n").collect();
            let case = Case::new("fuzz", cluster, &[&t[0], &t[1], &t[2]]);
            let cfg = Config {
                network: if lb { NetworkModel::LatencyBandwidth } else { NetworkModel::MaxMin },
                ..Config::default()
            };
            match case.run_with(&cfg) {
                Ok(r) => prop_assert!(r.simulated_time_s.is_finite() && r.simulated_time_s >= 0.0),
                Err(e) => prop_assert!(!e.to_string().is_empty()),
            }
        }
    }
}
