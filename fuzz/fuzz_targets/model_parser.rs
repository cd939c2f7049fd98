//! The model parser never panics: errors point into the input, and what it accepts
//! prints, reads its printed form back without panicking, and evaluates (or reports why
//! not). The stricter fixed-point property is `model_roundtrip`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use perfcompose_core::model::parse_model;

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    match parse_model(src) {
        Ok(e) => {
            let _ = parse_model(&e.to_string());
            let _ = e.eval_at(&[("x", 1024.0), ("p", 8.0), ("n", 4.0), ("m", 2.0)]);
            let _ = e.leading();
            let _ = e.extrap();
        }
        Err(d) => {
            assert!(d.span.start <= src.len());
            let _ = d.render();
        }
    }
});
