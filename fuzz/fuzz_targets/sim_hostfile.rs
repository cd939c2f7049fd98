//! The hostfile reader never panics: errors point into the input, and what it accepts
//! is a non-empty list of the platform's hosts. Every input is read against a Full zone
//! (hosts `a`, `b`) and a cluster (hosts `node-0` to `node-3`).
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use perfcompose_sim::platform::{read_hostfile, Platform};

const FULL: &str = r#"<platform version="4.1"><zone id="AS0" routing="Full">
  <host id="a" speed="1Gf"/><host id="b" speed="2Gf" core="2"/>
  <link id="l" bandwidth="125MBps" latency="50us"/>
  <route src="a" dst="b"><link_ctn id="l"/></route>
</zone></platform>"#;

const CLUSTER: &str = r#"<platform version="4.1"><cluster id="c" prefix="node-" radical="0-3"
  suffix="" speed="1Gf" bw="125MBps" lat="50us" bb_bw="1GBps" bb_lat="500us"/></platform>"#;

fn platforms() -> &'static [Platform; 2] {
    static P: OnceLock<[Platform; 2]> = OnceLock::new();
    P.get_or_init(|| {
        [
            Platform::parse("full.xml", FULL).expect("the Full zone parses"),
            Platform::parse("cluster.xml", CLUSTER).expect("the cluster parses"),
        ]
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    for p in platforms() {
        match read_hostfile("hostfile", src, p) {
            Ok(slots) => {
                assert!(!slots.is_empty());
                assert!(slots.iter().all(|&h| (h as usize) < p.hosts().len()));
            }
            Err(d) => {
                assert!(d.span.start <= src.len());
                let _ = d.render();
            }
        }
    }
});
