//! Tests of the fitted parameters, the stored file and the exported files, on synthetic
//! measurements of a network with known parameters.

use std::path::Path;

use perfcompose_core::comm::CalibrationError;

use super::*;

/// Measurements of a network that follows two known lines, switching above 4 KiB,
/// with a LogGP burst and an all-to-all of known `l` and `g`, on `p` processes.
fn synthetic(p: usize) -> Raw {
    let eager = |b: f64| 4e-7 + 2e-10 * b;
    let rendezvous = |b: f64| 2e-6 + 1e-10 * b;
    let mut pingpong = Vec::new();
    let mut b = 8u64;
    while b <= 1 << 20 {
        let t = if b <= 4096 {
            eager(b as f64)
        } else {
            rendezvous(b as f64)
        };
        pingpong.push((b, vec![t; 3]));
        b *= 2;
    }
    let (l, g) = (3e-6, 5e-10);
    let alltoall = [1u64, 4, 16, 64, 256, 1024]
        .iter()
        .map(|&k| {
            let t = 2.0 * (p as f64 - 1.0) * (l + k as f64 * g);
            (k, vec![t, t, t])
        })
        .collect();
    let small = eager(8.0);
    Raw {
        pingpong,
        send_call: vec![1e-7, 1.1e-7, 0.9e-7],
        burst_messages: 101,
        // 100 gaps of 3e-7 s after one round trip.
        burst: vec![2.0 * small + 100.0 * 3e-7; 3],
        alltoall,
        flops_per_s: 2e9,
    }
}

fn close(a: f64, b: f64) -> bool {
    ((a - b) / b).abs() < 1e-6
}

#[test]
fn both_ranges_are_recovered_and_split_at_the_eager_limit() {
    let c =
        NetworkCalibration::from_measurements(&synthetic(2), "h".into(), 2, "MPI".into()).unwrap();
    assert!(
        close(c.hockney_eager.alpha_s, 4e-7),
        "{:?}",
        c.hockney_eager
    );
    assert!(close(c.hockney_eager.beta_s_per_byte, 2e-10));
    assert!(close(c.hockney.alpha_s, 2e-6), "{:?}", c.hockney);
    assert!(close(c.hockney.beta_s_per_byte, 1e-10));
    assert_eq!(c.eager_limit_bytes, 4096);
    assert!(c.fit.eager_max_relative_error < 1e-6);
    assert!(c.fit.rendezvous_max_relative_error < 1e-6);
    // The machine line: eager start-up, bulk slope.
    let m = c.machine_hockney();
    assert_eq!(m.alpha_s, c.hockney_eager.alpha_s);
    assert_eq!(m.beta_s_per_byte, c.hockney.beta_s_per_byte);
    assert!(c.fit.machine_max_relative_error > 0.0);
    assert_eq!(c.points.len(), 18);
    assert!(close(c.points[0].seconds, 4e-7 + 8.0 * 2e-10));
    assert!(c.notes.is_empty(), "{:?}", c.notes);
}

#[test]
fn loggp_comes_from_the_send_call_the_burst_and_the_lines() {
    let c =
        NetworkCalibration::from_measurements(&synthetic(2), "h".into(), 2, "MPI".into()).unwrap();
    assert!(close(c.loggp.o_s, 1e-7));
    assert!(close(c.loggp.g_s, 3e-7), "{:?}", c.loggp);
    assert!(close(c.loggp.latency_s, 4e-7 + 2e-10 - 2e-7));
    assert_eq!(c.loggp.gap_per_byte_s, c.hockney.beta_s_per_byte);
}

#[test]
fn seed_004_l_and_g_come_from_the_all_to_all_per_partner() {
    for p in [2, 4] {
        let c = NetworkCalibration::from_measurements(&synthetic(p), "h".into(), p, "MPI".into())
            .unwrap();
        assert!(close(c.exchange.l_s, 3e-6), "p={p}: {:?}", c.exchange);
        assert!(close(c.exchange.g_s_per_word, 5e-10));
        assert_eq!(c.exchange.word_bytes, 4);
        assert!(c.fit.exchange_max_relative_error < 1e-6);
    }
}

#[test]
fn impossible_figures_are_clamped_with_a_note() {
    let mut raw = synthetic(2);
    // Send calls slower than a message, a burst faster than a round trip.
    raw.send_call = vec![1e-5; 3];
    raw.burst = vec![1e-7; 3];
    let c = NetworkCalibration::from_measurements(&raw, "h".into(), 2, "MPI".into()).unwrap();
    assert_eq!(c.loggp.latency_s, 0.0);
    assert_eq!(c.loggp.g_s, 0.0);
    assert_eq!(c.notes.len(), 2, "{:?}", c.notes);
}

#[test]
fn a_negative_small_message_start_up_is_taken_as_zero_with_a_note() {
    let mut raw = synthetic(2);
    // Small messages whose line crosses zero above 0 bytes: α + β·b with α < 0.
    for (b, ts) in raw.pingpong.iter_mut().filter(|(b, _)| *b <= 4096) {
        *ts = vec![2e-10 * (*b as f64 - 4.0); 3];
    }
    let c = NetworkCalibration::from_measurements(&raw, "h".into(), 2, "MPI".into()).unwrap();
    assert!(c.hockney_eager.alpha_s >= 0.0);
    assert!(
        c.notes.iter().any(|n| n.contains("negative start-up")),
        "{:?}",
        c.notes
    );
}

#[test]
fn too_few_sizes_are_an_error() {
    let mut raw = synthetic(2);
    raw.pingpong.truncate(3);
    let e = NetworkCalibration::from_measurements(&raw, "h".into(), 2, "MPI".into()).unwrap_err();
    assert!(matches!(e, CalibrationError::TooFewSizes(3)), "{e:?}");
}

#[test]
fn the_json_has_the_documented_names() {
    let c =
        NetworkCalibration::from_measurements(&synthetic(2), "h".into(), 2, "MPI".into()).unwrap();
    let v = serde_json::to_value(&c).unwrap();
    for key in ["alpha_s", "beta_s_per_byte"] {
        assert!(v["hockney"][key].is_f64());
        assert!(v["hockney_eager"][key].is_f64());
    }
    for key in ["L_s", "o_s", "g_s", "G_s_per_byte"] {
        assert!(v["loggp"][key].is_f64(), "{key}");
    }
    assert!(v["eager_limit_bytes"].is_u64());
    assert!(v["points"][0]["bytes"].is_u64());
    assert!(v["points"][0]["seconds"].is_f64());
    let back: NetworkCalibration = serde_json::from_value(v).unwrap();
    assert_eq!(back, c);
}

fn calibration() -> NetworkCalibration {
    NetworkCalibration::from_measurements(&synthetic(2), "host".into(), 2, "Open MPI v4.1".into())
        .unwrap()
}

#[test]
fn the_machine_table_is_a_components_files_machine_file() {
    let c = calibration();
    let dir = std::env::temp_dir().join(format!("pc-net-machine-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("net.toml"), c.machine_table()).unwrap();
    let src = "machine_file = \"net.toml\"\n[components.msg]\nmodel = \"hockney(8 * x)\"\n[components.ex]\nmodel = \"exchange(x)\"\n";
    let opts = perfcompose_core::components::LoadOptions {
        library: &perfcompose_core::comm::CommLibrary,
        ..Default::default()
    };
    let comps = perfcompose_core::components::Components::parse("c.toml", src, &dir, opts).unwrap();
    // Every value in nanoseconds, as the block models are.
    let machine = comps.machine();
    let m = c.machine_hockney();
    let ns = |name: &str, seconds: f64| {
        let got = machine[name].ns;
        assert!(
            (got - seconds * 1e9).abs() <= 1e-6 * (seconds * 1e9).abs(),
            "{name}: {got} ns for {seconds} s"
        );
    };
    ns("alpha", m.alpha_s);
    ns("beta", m.beta_s_per_byte);
    ns("L", c.loggp.latency_s);
    ns("o", c.loggp.o_s);
    ns("G", c.loggp.gap_per_byte_s);
    ns("l", c.exchange.l_s);
    ns("g", c.exchange.g_s_per_word);
    // Every model is a number once the table is in.
    for name in ["msg", "ex"] {
        let model = &comps.get(name).unwrap().model;
        let params: Vec<String> = model.params().into_iter().collect();
        assert_eq!(params, vec!["x".to_string()], "{name}: {model}");
    }
    // A message's time in ns, next to block models in ns.
    let msg = comps
        .get("msg")
        .unwrap()
        .model
        .eval_at(&[("x", 1000.0)])
        .unwrap();
    let want = m.time(8000.0) * 1e9;
    assert!((msg - want).abs() < 1e-6 * want, "{msg} ns, want {want} ns");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_platform_reads_back_with_the_calibrated_latency_bandwidth_and_speed() {
    let c = calibration();
    let xml = c.platform_xml(4);
    let p = perfcompose_sim::Platform::parse("calibrated.xml", &xml).unwrap();
    assert_eq!(p.hosts().len(), 4);
    assert!((p.hosts()[0].speed - 2e9).abs() < 1.0);
    let ids = p.hosts_sorted_by_name();
    let route = p.route(ids[0], ids[3]).unwrap();
    let m = c.machine_hockney();
    assert!((route.latency - m.alpha_s).abs() < 1e-15, "{route:?}");
    for link in &route.links {
        let bw = p.link(*link).bandwidth;
        assert!(((bw - 1.0 / m.beta_s_per_byte) * m.beta_s_per_byte).abs() < 1e-9);
    }
}

#[test]
fn a_stored_calibration_reads_back_and_other_versions_are_refused() {
    let c = calibration();
    let dir = std::env::temp_dir().join(format!("pc-net-store-{}", std::process::id()));
    let path = dir.join("sub").join("network.json");
    c.save(&path).unwrap();
    assert_eq!(NetworkCalibration::load(&path).unwrap(), c);
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace("\"version\": 1", "\"version\": 7")).unwrap();
    let e = NetworkCalibration::load(&path).unwrap_err().to_string();
    assert!(
        e.contains("version 7") && e.contains("calibrate network"),
        "{e}"
    );
    std::fs::write(&path, "{\"version\": 1,\n \"host\": 3}").unwrap();
    let e = NetworkCalibration::load(&path).unwrap_err().to_string();
    assert!(e.contains("network.json:2:"), "{e}");
    let e = NetworkCalibration::load(Path::new("/nonexistent/n.json"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("cannot read /nonexistent/n.json"), "{e}");
    assert!(NetworkCalibration::path_in(Path::new("/cfg"))
        .to_string_lossy()
        .starts_with("/cfg/perfcompose/network-"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_hand_edited_calibration_with_a_negative_time_is_refused_at_its_line() {
    let c = calibration();
    let dir = std::env::temp_dir().join(format!("pc-net-negative-{}", std::process::id()));
    let path = dir.join("network.json");
    let mut edited = c.clone();
    edited.hockney_eager.alpha_s = -1.0;
    edited.save(&path).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let e = NetworkCalibration::load(&path).unwrap_err().to_string();
    let line = text
        .lines()
        .position(|l| l.contains("\"alpha_s\": -1"))
        .unwrap()
        + 1;
    assert!(
        e.contains(&format!("network.json:{line}:"))
            && e.contains("`hockney_eager.alpha_s` is -1e0, and it must be a finite time ≥ 0"),
        "{e}"
    );
    // The bulk line's start-up may be negative; a flop rate may not be 0.
    let mut bulk = c.clone();
    bulk.hockney.alpha_s = -1e-7;
    bulk.save(&path).unwrap();
    assert!(NetworkCalibration::load(&path).is_ok());
    let mut flops = c.clone();
    flops.flops_per_s = 0.0;
    flops.save(&path).unwrap();
    let e = NetworkCalibration::load(&path).unwrap_err().to_string();
    assert!(e.contains("`flops_per_s` is 0e0"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}
