//! Bindings to the system's OTF2 library (Debian `libopen-trace-format2-dev`, 3.x), generated
//! with bindgen against its headers as `mpi-sys` does for MPI. `bash scripts/install-otf2`
//! installs the library and libclang.

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=wrapper.h");
    let lib = pkg_config::Config::new()
        .atleast_version("3.0")
        .probe("otf2")
        .unwrap_or_else(|e| {
            panic!(
                "the OTF2 library (3.0 or later) was not found through pkg-config ({e}); \
                 install it with `bash scripts/install-otf2` (Debian: libopen-trace-format2-dev)"
            )
        });
    let mut builder = bindgen::Builder::default()
        .header("wrapper.h")
        .allowlist_function("OTF2_.*")
        .allowlist_function("vsnprintf")
        .allowlist_type("OTF2_.*")
        .allowlist_var("OTF2_.*")
        .parse_callbacks(Box::new(bindgen::CargoCallbacks::new()));
    for dir in &lib.include_paths {
        builder = builder.clang_arg(format!("-I{}", dir.display()));
    }
    let bindings = builder
        .generate()
        .expect("bindgen could not generate the OTF2 bindings (is libclang installed? bash scripts/install-otf2)");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    bindings
        .write_to_file(out.join("otf2.rs"))
        .expect("write the OTF2 bindings");
}
