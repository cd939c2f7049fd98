//! The binary readers (Extra-P 3 experiments, `.extra-p` zip archives, one `.cubex`
//! profile) on arbitrary bytes: errors, never panics. The first byte picks the reader.
#![no_main]

use libfuzzer_sys::fuzz_target;
use perfcompose_core::measure::{archive, cube, extrap3, ReadOptions};

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    let opts = ReadOptions::default();
    match which % 3 {
        0 => drop(extrap3::read_bytes("fuzz", rest, &opts)),
        1 => drop(archive::read_bytes("fuzz", rest, &opts)),
        _ => drop(cube::check_profile(rest)),
    }
});
