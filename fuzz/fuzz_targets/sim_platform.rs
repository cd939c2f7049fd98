//! The SimGrid platform reader never panics: errors point into the input, and what it
//! accepts has hosts with a positive finite speed and cores, links with a positive finite
//! bandwidth and a finite non-negative latency, and routes made of its own links.
#![no_main]

use libfuzzer_sys::fuzz_target;
use perfcompose_sim::platform::Platform;

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    match Platform::parse("fuzz.xml", src) {
        Ok(p) => {
            assert!(!p.hosts().is_empty());
            for h in p.hosts() {
                assert!(h.speed.is_finite() && h.speed > 0.0, "{h:?}");
                assert!(h.cores > 0, "{h:?}");
                let id = p.host_by_name(&h.name).expect("a host is found by its name");
                assert_eq!(&p.host(id).name, &h.name);
            }
            for l in p.links() {
                assert!(l.bandwidth.is_finite() && l.bandwidth > 0.0, "{l:?}");
                assert!(l.latency.is_finite() && l.latency >= 0.0, "{l:?}");
            }
            let n = p.hosts().len() as u32;
            let mut route = Vec::new();
            for (src, dst) in [(0, 0), (0, n - 1), (n - 1, 0), (n / 2, n - 1)] {
                if let Some(latency) = p.route_into(src, dst, &mut route) {
                    assert!(latency.is_finite() && latency >= 0.0);
                    assert!(route.iter().all(|&l| (l as usize) < p.links().len()));
                }
            }
            let _ = p.hosts_sorted_by_name();
        }
        Err(d) => {
            assert!(d.span.start <= src.len());
            let _ = d.render();
        }
    }
});
