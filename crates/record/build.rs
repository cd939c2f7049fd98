//! With the `library` feature: compile the interposition library in `csrc/` against the
//! system's `mpi.h` (found through `mpicc`, else `pkg-config`, else the directories in
//! `PERFCOMPOSE_MPI_INCLUDE`) with the `cc` crate, and link the objects into a shared object
//! in `OUT_DIR`, whose path the crate embeds (`PERFCOMPOSE_RECORD_LIBRARY`).

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    #[cfg(feature = "library")]
    library::build();
}

#[cfg(feature = "library")]
mod library {
    use std::path::PathBuf;
    use std::process::Command;

    const SOURCES: [&str; 4] = ["core.c", "c_api.c", "fortran.c", "uncovered.c"];

    pub fn build() {
        println!("cargo:rerun-if-env-changed=PERFCOMPOSE_MPI_INCLUDE");
        println!("cargo:rerun-if-env-changed=MPICC");
        println!("cargo:rerun-if-changed=csrc");
        let includes = mpi_include_dirs();
        let mut build = cc::Build::new();
        for s in SOURCES {
            build.file(format!("csrc/{s}"));
        }
        build
            .includes(&includes)
            .pic(true)
            .opt_level(2)
            .warnings(true)
            .extra_warnings(true)
            // Only the MPI and Fortran entry points leave the library.
            .flag("-fvisibility=hidden")
            .flag_if_supported("-Wno-unused-parameter")
            .flag_if_supported("-Wno-missing-field-initializers");
        let objects = build.compile_intermediates();
        let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
        let library = out.join("libperfcompose-record.so");
        let mut link = build.get_compiler().to_command();
        link.arg("-shared")
            .arg("-Wl,-soname,libperfcompose-record.so")
            .arg("-o")
            .arg(&library)
            .args(&objects)
            .arg("-ldl");
        let status = link
            .status()
            .unwrap_or_else(|e| panic!("cannot run the C compiler to link the recorder: {e}"));
        assert!(
            status.success(),
            "linking the recorder library failed ({status})"
        );
        println!(
            "cargo:rustc-env=PERFCOMPOSE_RECORD_LIBRARY={}",
            library.display()
        );
    }

    /// The directories holding `mpi.h`.
    fn mpi_include_dirs() -> Vec<PathBuf> {
        if let Some(dirs) = std::env::var_os("PERFCOMPOSE_MPI_INCLUDE") {
            return std::env::split_paths(&dirs).collect();
        }
        let mpicc = std::env::var("MPICC").unwrap_or_else(|_| "mpicc".to_string());
        // Open MPI.
        if let Some(out) = run(&mpicc, &["--showme:incdirs"]) {
            let dirs: Vec<PathBuf> = out.split_whitespace().map(PathBuf::from).collect();
            if !dirs.is_empty() {
                return dirs;
            }
        }
        // MPICH and its derivatives print the whole compile line.
        if let Some(out) = run(&mpicc, &["-show"]) {
            let dirs = include_flags(&out);
            if !dirs.is_empty() {
                return dirs;
            }
        }
        for package in ["ompi-c", "ompi", "mpich"] {
            if let Some(out) = run("pkg-config", &["--cflags-only-I", package]) {
                let dirs = include_flags(&out);
                if !dirs.is_empty() {
                    return dirs;
                }
            }
        }
        panic!(
            "cannot find mpi.h for the recorder library: install MPI (`bash scripts/install-mpi`), \
             or set PERFCOMPOSE_MPI_INCLUDE to the directories that hold it"
        );
    }

    fn run(program: &str, args: &[&str]) -> Option<String> {
        let out = Command::new(program).args(args).output().ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    }

    fn include_flags(line: &str) -> Vec<PathBuf> {
        line.split_whitespace()
            .filter_map(|w| w.strip_prefix("-I"))
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .collect()
    }
}
