//! The term parser never panics: errors point into the input, and accepted terms print,
//! read their printed form back, and compose against the paper's components (or fail with
//! a located error) without panicking; as a design with `?` counts, it optimizes under a
//! small budget or fails with a located error. The fixed-point property is
//! `term_roundtrip`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use perfcompose_core::components::seed_table1;
use perfcompose_core::compose::{compose, ComposeOptions};
use perfcompose_core::optimize::{optimize, Request};
use perfcompose_core::term::parse_term;

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    match parse_term("<fuzz>", src) {
        Ok(t) => {
            let _ = parse_term("<fuzz>", &t.to_string());
            let c = seed_table1();
            for cores in [None, Some(2)] {
                match compose(&t, &c, ComposeOptions { cores }) {
                    Ok(r) => {
                        let _ = r.model.eval_at(&[("x", 1024.0), ("n", 4.0), ("m", 2.0)]);
                    }
                    Err(d) => {
                        assert!(d.span.end <= src.len());
                        let _ = d.render();
                    }
                }
            }
        }
        Err(d) => {
            assert!(d.span.end <= src.len());
            let _ = d.render();
        }
    }
    let c = seed_table1();
    let req = Request {
        design: src,
        components: &c,
        cores: 4,
        point: vec![("x".to_string(), 1024.0)],
        rewrites: true,
    };
    if let Err(d) = optimize(&req) {
        assert!(d.span.end <= src.len());
        let _ = d.render();
    }
});
