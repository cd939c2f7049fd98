//! The term parser never panics; accepted terms print canonically, read back to the same
//! text, and compose against the seed's components (or fail with a located error).
#![no_main]

use libfuzzer_sys::fuzz_target;
use perfcompose_core::components::seed_table1;
use perfcompose_core::compose::{compose, ComposeOptions};
use perfcompose_core::term::parse_term;

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    match parse_term("<fuzz>", src) {
        Ok(t) => {
            let printed = t.to_string();
            let again = parse_term("<fuzz>", &printed).expect("a printed term parses");
            assert_eq!(again.to_string(), printed, "print -> parse -> print is a fixed point");
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
});
