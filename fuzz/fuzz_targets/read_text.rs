//! Every text reader on arbitrary input: a located error or an experiment, never a panic,
//! and an error's span inside the source. The first byte picks the format.
#![no_main]

use libfuzzer_sys::fuzz_target;
use perfcompose_core::measure::{read_str, Format, ReadOptions};

const FORMATS: [Format; 5] = [
    Format::Text,
    Format::JsonLines,
    Format::Talpas,
    Format::Json,
    Format::Csv,
];

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    let Ok(src) = std::str::from_utf8(rest) else {
        return;
    };
    let format = FORMATS[which as usize % FORMATS.len()];
    if let Err(d) = read_str(format, "fuzz", src, &ReadOptions::default()) {
        assert!(d.span.start <= src.len());
        let _ = d.render();
    }
});
