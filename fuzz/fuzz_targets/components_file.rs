//! Reading a components file never panics, and errors point into the file.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use perfcompose_core::components::{Components, LoadOptions};

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    if let Err(d) = Components::parse("fuzz.toml", src, Path::new("."), LoadOptions::default()) {
        assert!(d.span.start <= src.len());
        let _ = d.render();
    }
});
