//! Time-independent traces: the actions each MPI rank performed, without timestamps.
//!
//! Two textual forms are read, one action per line, `#` comments and blank lines skipped:
//!
//! - **SimGrid's current form** (SMPI, `smpirun -trace-ti`, read by `smpirun -replay`).
//!   Field orders follow SimGrid 3.32's `smpi_replay.cpp`; `count`s are in elements of the
//!   datatype (optional trailing datatype ids, default `MPI_BYTE`, or `MPI_DOUBLE` after
//!   `init` with an argument):
//!   `R init [x]`, `R finalize`, `R compute FLOPS`, `R sleep SECONDS`,
//!   `R send|isend DST TAG COUNT [dt]`, `R recv|irecv SRC TAG COUNT [dt]` (COUNT may be -1),
//!   `R wait SRC DST TAG`, `R test SRC DST TAG`, `R waitall`,
//!   `R sendRecv SENDCOUNT DST RECVCOUNT SRC [dt dt]` (SimGrid 3.32 requires both datatypes;
//!   we accept them missing and always write them), `R barrier`,
//!   `R bcast COUNT [ROOT [dt]]`, `R reduce COUNT FLOPS [ROOT [dt]]`,
//!   `R allreduce COUNT FLOPS [dt]`, `R alltoall SENDCOUNT RECVCOUNT [dt dt]`,
//!   `R gather SENDCOUNT RECVCOUNT [ROOT [dt dt]]`, `R allgather SENDCOUNT RECVCOUNT [dt dt]`,
//!   `R scatter SENDCOUNT RECVCOUNT [ROOT [dt dt]]`, `R comm_size N`, `R comm_split`,
//!   `R comm_dup`, `R location FILE LINE` (the last four change nothing).
//! - **dPerf's older form** (SimGrid MSG's action files, the dPerf paper): `p0 compute 5385`,
//!   `p0 Isend p1 8429748`, `p0 send p1 1e6`, `p1 recv p0`, `p1 Irecv p0`, `p1 wait`,
//!   `p0 barrier`, `p0 bcast 1e6`, `p0 reduce 1e6 1e3`, `p0 allReduce 1e6 1e3`,
//!   `p0 sleep 1`, `p0 init`, `p0 finalize`. Compute amounts are flops as MSG reads them,
//!   or nanoseconds as dPerf measured them (see [`LegacyCompute`]). `wait` waits for the
//!   most recent pending `Irecv` (else `Isend`), as MSG's action replay did.
//!
//! Input is an *index* file listing one trace file per rank (paths relative to the index
//! file's folder, or to the working directory as `smpirun` reads them), or a single trace
//! file holding every rank's actions (SimGrid's shared trace). Reading is streamed: each
//! rank's reader keeps one line in memory; for a shared file, actions read ahead for ranks
//! that are behind are buffered up to a bound ([`ReaderOptions::window`]) — memory does not
//! grow with the trace length.
//!
//! A shared trace already in memory is read with [`TraceSet::from_bytes`], one text per
//! rank (a converted OTF2 archive) with [`TraceSet::from_rank_bytes`].
//!
//! [`TraceWriter`] writes the current form, one file per rank plus an index.
//!
//! The files, each importing only those above it in this list:
//!
//! - `action`: what a trace line says ([`Action`]) and SimGrid's datatype sizes.
//! - `options`: how traces are read ([`ReaderOptions`], [`LegacyCompute`]).
//! - `error`: [`TraceError`], located in its file.
//! - `parse`: one line, either form ([`parse_line`]).
//! - `fast`: the common lines of the current form parsed straight from the read buffer.
//! - `input`: where a trace's text is (a file or bytes in memory).
//! - `reader`: streaming actions rank by rank ([`TraceReader`]).
//! - `set`: the trace's files and ranks, from an index, a trace file or bytes ([`TraceSet`]).
//! - `writer`: the current form written out ([`TraceWriter`], [`write_action`]).
//! - `expand`: a collective on a group of ranks written as point-to-point actions, for
//!   converters whose source names communicators ([`expand::Expander`]).

mod action;
mod error;
pub mod expand;
mod fast;
mod input;
mod options;
mod parse;
mod reader;
mod set;
mod writer;

pub use action::{datatype_size, Action};
pub use error::TraceError;
pub use options::{LegacyCompute, ReaderOptions, DEFAULT_WINDOW};
pub use parse::parse_line;
pub use reader::{Located, TraceReader};
pub use set::{TraceSet, MAX_RANKS};
pub use writer::{write_action, TraceWriter};
