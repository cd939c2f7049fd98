//! The OTF2 library's C API as bindgen generates it from the system headers.
#![allow(
    non_camel_case_types,
    non_snake_case,
    non_upper_case_globals,
    dead_code
)]
#![allow(clippy::all, clippy::undocumented_unsafe_blocks)]
include!(concat!(env!("OUT_DIR"), "/otf2.rs"));
