//! `perfcompose record`: any MPI program's communication, recorded once as SimGrid
//! time-independent traces (the dPerf paper's workflow for programs that already exist).
//!
//! Two halves:
//!
//! - **The interposition library** (`csrc/`, C, built with the `library` feature and
//!   embedded as [`LIBRARY`]). `record` preloads it (`LD_PRELOAD`) into the launcher; each
//!   MPI process that calls `MPI_Init` with `PERFCOMPOSE_RECORD_DIR` set logs, per covered
//!   call, the entry and exit times and its arguments in world ranks and bytes. It is C
//!   rather than a Rust `cdylib` because it is a thin shim over MPI's C ABI: compiled
//!   against the installed `mpi.h`, every wrapper's prototype is checked against the MPI
//!   library's and every handle and constant (`MPI_STATUS_IGNORE`, `MPI_ANY_SOURCE`) is
//!   the library's own, with no bindings to generate; and it brings no Rust runtime or
//!   panics across FFI into every process of the job, `mpirun` included. It never links
//!   against libmpi: every MPI function is looked up by name on first use, so in processes
//!   without MPI it does nothing. Fortran's `mpif.h` and `use mpi` call `PMPI_*` below the
//!   C entry points, so the library also defines the Fortran names (`mpi_send_`,
//!   `mpi_send__`, `mpi_send`, `MPI_SEND`) and calls the MPI library's Fortran routines.
//! - **The converter** (this crate, no MPI needed): [`raw`] reads the logs, [`convert`]
//!   turns each into a trace file ([`expand`], shared with the OTF2 converter in
//!   `perfcompose_sim::trace`, writes collectives), [`recording`] owns the
//!   directory layout and checks that the logs form one job, [`measured`] is the
//!   `measured.json` schema.
#![forbid(unsafe_code)]

pub mod convert;
pub mod error;
pub use perfcompose_sim::trace::expand;
pub mod measured;
pub mod platform;
pub mod raw;
pub mod recording;

pub use convert::{Process, RankSummary};
pub use error::{Error, RawError, SetError};
pub use measured::{Measured, RankTime, Uncovered, MEASURED_VERSION};
pub use recording::{Conversion, DirError, RecordDir};

/// The interposition library (a shared object for this machine's MPI).
#[cfg(feature = "library")]
pub const LIBRARY: &[u8] = include_bytes!(env!("PERFCOMPOSE_RECORD_LIBRARY"));
