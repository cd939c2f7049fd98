//! Platforms read from XML (zones, clusters, routes, errors) and hostfiles.

use perfcompose_core::diag::Diagnostic;

use super::hostfile::read_hostfile;
use super::model::{Platform, Sharing};
use crate::trace::MAX_RANKS;

const EPS: f64 = 1e-12;

const FULL: &str = r#"<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="AS0" routing="Full">
    <host id="a" speed="1Gf"/>
    <host id="b" speed="2Gf" core="2"><prop id="x" value="y"/></host>
    <link id="l1" bandwidth="125MBps" latency="50us"/>
    <link id="l2" bandwidth="1GBps" latency="10us" sharing_policy="FATPIPE"/>
    <link id="sd" bandwidth="1Gbps" latency="1ms" sharing_policy="SPLITDUPLEX"/>
    <route src="a" dst="b"><link_ctn id="l1"/><link_ctn id="sd" direction="UP"/><link_ctn id="l2"/></route>
  </zone>
</platform>"#;

#[test]
fn full_zone() {
    let p = Platform::parse("t.xml", FULL).unwrap();
    assert_eq!(p.hosts().len(), 2);
    assert!((p.host(1).speed - 2e9).abs() < EPS);
    assert_eq!(p.host(1).cores, 2);
    let r = p.route(0, 1).unwrap();
    let names: Vec<&str> = r.links.iter().map(|&l| p.link(l).name.as_str()).collect();
    assert_eq!(names, ["l1", "sd_UP", "l2"]);
    assert!((r.latency - (50e-6 + 1e-3 + 10e-6)).abs() < EPS);
    let back = p.route(1, 0).unwrap();
    let names: Vec<&str> = back
        .links
        .iter()
        .map(|&l| p.link(l).name.as_str())
        .collect();
    assert_eq!(names, ["l2", "sd_DOWN", "l1"]);
    let lo = p.route(0, 0).unwrap();
    assert_eq!(p.link(lo.links[0]).name, "__loopback__");
    assert_eq!(p.link(lo.links[0]).sharing, Sharing::Fatpipe);
    assert!(p.notes().iter().any(|n| n.contains("<prop>")));
}

#[test]
fn cluster_routes() {
    let x = r#"<platform version="4.1"><cluster id="c" prefix="n-" suffix=".x" radical="0-3"
            speed="1Gf" bw="125MBps" lat="50us" bb_bw="2.25GBps" bb_lat="500us"/></platform>"#;
    let p = Platform::parse("c.xml", x).unwrap();
    assert_eq!(p.hosts().len(), 4);
    assert_eq!(p.host(2).name, "n-2.x");
    let r = p.route(0, 3).unwrap();
    let names: Vec<&str> = r.links.iter().map(|&l| p.link(l).name.as_str()).collect();
    assert_eq!(names, ["c_link_0_UP", "c_backbone", "c_link_3_DOWN"]);
    assert!((r.latency - 600e-6).abs() < EPS);
    // same host without loopback: up then down through the backbone once
    let s = p.route(1, 1).unwrap();
    let names: Vec<&str> = s.links.iter().map(|&l| p.link(l).name.as_str()).collect();
    assert_eq!(names, ["c_link_1_UP", "c_backbone", "c_link_1_DOWN"]);
}

#[test]
fn shared_cluster_self_route_counts_link_once() {
    let x = r#"<platform version="4.1"><zone id="z" routing="Full"><cluster id="c" prefix="h" suffix="" radical="0-1"
            speed="1Gf" bw="1GBps" lat="1us" sharing_policy="SHARED"/></zone></platform>"#;
    let p = Platform::parse("c.xml", x).unwrap();
    assert_eq!(p.route(0, 0).unwrap().links.len(), 1);
    assert_eq!(p.route(0, 1).unwrap().links.len(), 2);
}

fn err(x: &str) -> Diagnostic {
    Platform::parse("bad.xml", x).unwrap_err()
}

#[test]
fn errors_name_element_and_position() {
    let d = err("<platform version=\"4.1\">\n<zone id=\"z\" routing=\"Full\">\n  <router id=\"r\"/>\n</zone></platform>");
    assert!(
        d.message.contains("unsupported element <router>"),
        "{}",
        d.message
    );
    assert_eq!(d.line_col(), (3, 4));
    let d = err("<platform version=\"4.1\"><zone id=\"z\" routing=\"Floyd\"></zone></platform>");
    assert!(d.message.contains("routing 'Floyd'"));
    let d = err("<platform version=\"4.1\"><zone id=\"z\" routing=\"Full\"><host id=\"a\" speed=\"1Gz\"/></zone></platform>");
    assert!(
        d.message.contains("unknown speed unit 'Gz'"),
        "{}",
        d.message
    );
    let d = err("<platform version=\"4.1\"><zone id=\"z\" routing=\"Full\"><host id=\"a\" speed=\"1Gf\"/><route src=\"a\" dst=\"b\"><link_ctn id=\"l\"/></route></zone></platform>");
    assert!(d.message.contains("'b' is not a declared host"));
    let d = err("<platform version=\"4.1\"><zone");
    assert!(d.message.contains("malformed XML"));
    let d = err("<platform version=\"3\"></platform>");
    assert!(d.message.contains("version"));
}

#[test]
fn hostfile() {
    let p = Platform::parse("t.xml", FULL).unwrap();
    let h = read_hostfile("h", "a\n\nb:2\n", &p).unwrap();
    assert_eq!(h, vec![0, 1, 1]);
    let e = read_hostfile("h", "a\nzz\n", &p).unwrap_err();
    assert_eq!(e.line_col(), (2, 1));
    assert!(e.message.contains("'zz'"));
}

#[test]
fn hostfile_slots_beyond_max_ranks_are_an_error_not_an_allocation() {
    // Found by fuzzing: `b:444444444` unrolled into 444 million slots.
    let p = Platform::parse("t.xml", FULL).unwrap();
    let e = read_hostfile("h", "a\nb:444444444\n", &p).unwrap_err();
    assert_eq!(e.line_col(), (2, 3));
    assert!(e.message.contains("process slots"), "{}", e.message);
    let full = format!("a:{MAX_RANKS}\n");
    assert_eq!(
        read_hostfile("h", &full, &p).unwrap().len(),
        MAX_RANKS as usize
    );
    let e = read_hostfile("h", &format!("{full}b\n"), &p).unwrap_err();
    assert_eq!(e.line_col(), (2, 1));
}

proptest::proptest! {
    #[test]
    fn parser_never_panics(s in "\\PC{0,200}") {
        let _ = Platform::parse("fuzz.xml", &s);
        let x = format!("<platform version=\"4.1\"><zone id=\"z\" routing=\"Full\">{s}</zone></platform>");
        let _ = Platform::parse("fuzz.xml", &x);
    }
}
