//! A platform to replay a recording on when no network calibration says better.

use std::fmt::Write as _;

/// A SimGrid platform (version 4.1): a flat cluster of `hosts` hosts named `node-0`,
/// `node-1`, ... computing at `flops_per_s`, whose route between two hosts has
/// `latency_s` (half on each host's link, as a cluster route crosses two) and
/// `bandwidth` bytes/s; `comment` goes in an XML comment on top.
pub fn cluster_xml(
    hosts: u32,
    flops_per_s: f64,
    latency_s: f64,
    bandwidth: f64,
    comment: &str,
) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "<?xml version='1.0'?>");
    let _ = writeln!(
        s,
        "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">"
    );
    let _ = writeln!(s, "<!-- {} -->", comment.replace("--", "- -"));
    let _ = writeln!(s, "<platform version=\"4.1\">");
    let _ = writeln!(
        s,
        "  <cluster id=\"recorded\" prefix=\"node-\" radical=\"0-{}\" suffix=\"\" speed=\"{:e}f\" bw=\"{:e}Bps\" lat=\"{:e}s\"/>",
        hosts.max(1) - 1,
        flops_per_s,
        bandwidth,
        latency_s / 2.0
    );
    let _ = writeln!(s, "</platform>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use perfcompose_sim::Platform;

    #[test]
    fn the_cluster_parses_with_its_hosts_and_speed() {
        let xml = cluster_xml(3, 2.5e9, 2e-6, 1e10, "a -- test");
        let p = Platform::parse("t.xml", &xml).unwrap();
        assert_eq!(p.hosts().len(), 3);
        assert!(p.hosts().iter().all(|h| h.speed == 2.5e9), "{xml}");
        assert!(xml.contains("a - - test"));
    }
}
