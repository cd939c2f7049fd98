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
//! - **dPerf's older form** (SimGrid MSG's action files, seed 003): `p0 compute 5385`,
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
//! A shared trace already in memory is read with [`TraceSet::from_bytes`].
//!
//! [`TraceWriter`] writes the current form, one file per rank plus an index.

use std::collections::VecDeque;
use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Cursor, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One replayable action of a rank. Sizes are in bytes (count × datatype size).
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    Init,
    Finalize,
    /// `count` flops, or a duration for dPerf traces read as nanoseconds.
    Compute {
        flops: f64,
    },
    /// A fixed duration (seconds), regardless of host speed.
    Sleep {
        seconds: f64,
    },
    Send {
        dst: u32,
        tag: i32,
        bytes: f64,
    },
    Isend {
        dst: u32,
        tag: i32,
        bytes: f64,
    },
    /// `bytes` < 0 when the trace does not know the size (it comes from the sender).
    Recv {
        src: u32,
        tag: i32,
        bytes: f64,
    },
    Irecv {
        src: u32,
        tag: i32,
        bytes: f64,
    },
    Wait {
        src: u32,
        dst: u32,
        tag: i32,
    },
    Test {
        src: u32,
        dst: u32,
        tag: i32,
    },
    WaitAll,
    /// dPerf's `wait`: the most recent pending `Irecv`, else `Isend`.
    WaitLast,
    SendRecv {
        send_bytes: f64,
        dst: u32,
        recv_bytes: f64,
        src: u32,
    },
    Barrier,
    Bcast {
        bytes: f64,
        root: u32,
    },
    /// `dt` is the datatype size (algorithms split by element count).
    Reduce {
        bytes: f64,
        flops: f64,
        root: u32,
        dt: f64,
    },
    AllReduce {
        bytes: f64,
        flops: f64,
        dt: f64,
    },
    AllToAll {
        send_bytes: f64,
        recv_bytes: f64,
    },
    Gather {
        send_bytes: f64,
        recv_bytes: f64,
        root: u32,
    },
    AllGather {
        send_bytes: f64,
        recv_bytes: f64,
    },
    Scatter {
        send_bytes: f64,
        recv_bytes: f64,
        root: u32,
    },
    /// `comm_size`, `comm_split`, `comm_dup`, `location`: no simulated effect.
    NoOp,
}

impl Action {
    /// Whether the action is a collective operation (involves every rank).
    pub fn is_collective(&self) -> bool {
        matches!(
            self,
            Action::Barrier
                | Action::Bcast { .. }
                | Action::Reduce { .. }
                | Action::AllReduce { .. }
                | Action::AllToAll { .. }
                | Action::Gather { .. }
                | Action::AllGather { .. }
                | Action::Scatter { .. }
        )
    }
}

/// How compute amounts of dPerf's older form are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum LegacyCompute {
    /// As SimGrid MSG's action replay reads them: flops, divided by the host speed.
    #[default]
    Flops,
    /// As dPerf measured them: nanoseconds of the reference machine, whatever the host.
    Nanoseconds,
}

/// A trace problem located in its file.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceError {
    pub file: String,
    /// 1-based; 0 when the problem is about the whole file.
    pub line: u64,
    /// 1-based column of the offending token (0 when unknown).
    pub col: usize,
    pub rank: Option<u32>,
    pub message: String,
    pub line_text: String,
    pub hint: Option<String>,
}

impl TraceError {
    fn whole(file: &str, message: impl Into<String>) -> TraceError {
        TraceError {
            file: file.to_string(),
            line: 0,
            col: 0,
            rank: None,
            message: message.into(),
            line_text: String::new(),
            hint: None,
        }
    }
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.message)?;
        write!(f, "  --> {}", self.file)?;
        if self.line > 0 {
            write!(f, ":{}", self.line)?;
            if self.col > 0 {
                write!(f, ":{}", self.col)?;
            }
        }
        if let Some(r) = self.rank {
            write!(f, " (rank {r})")?;
        }
        if !self.line_text.is_empty() {
            let g = self.line.to_string();
            let pad = " ".repeat(g.len());
            write!(f, "\n{pad} |\n{g} | {}", self.line_text)?;
            if self.col > 0 {
                write!(f, "\n{pad} | {}^", " ".repeat(self.col - 1))?;
            }
        }
        if let Some(h) = &self.hint {
            write!(f, "\n  = hint: {h}")?;
        }
        Ok(())
    }
}

impl std::error::Error for TraceError {}

/// An action with where it came from (for errors and deadlock reports).
#[derive(Clone, Debug, PartialEq)]
pub struct Located {
    pub action: Action,
    /// Index into [`TraceSet::files`].
    pub file: u32,
    pub line: u64,
}

/// Options of trace reading.
#[derive(Clone, Copy, Debug)]
pub struct ReaderOptions {
    /// Most actions buffered for ranks that are behind when reading a shared trace.
    pub window: usize,
    pub legacy_compute: LegacyCompute,
}

impl Default for ReaderOptions {
    fn default() -> Self {
        ReaderOptions {
            window: DEFAULT_WINDOW,
            legacy_compute: LegacyCompute::Flops,
        }
    }
}

/// Default bound on actions buffered ahead from a shared trace file.
pub const DEFAULT_WINDOW: usize = 1 << 20;

/// Most ranks a trace may have. Reading and replaying keep state for every rank, so a
/// rank id is bounded before it sizes anything (a per-rank trace also holds a file open
/// per rank, far fewer than this).
pub const MAX_RANKS: u32 = 1 << 20;

/// `np` as asked for, when it is at most [`MAX_RANKS`].
fn requested_ranks(name: &str, np: u32) -> Result<u32, TraceError> {
    if np > MAX_RANKS {
        return Err(TraceError::whole(
            name,
            format!("{np} ranks requested; at most {MAX_RANKS} are supported"),
        ));
    }
    Ok(np)
}

/// Size in bytes of SimGrid's datatype ids (`Datatype::encode`), `None` for unknown ids.
pub fn datatype_size(id: &str) -> Option<f64> {
    let n: usize = id.parse().ok()?;
    // 0 DOUBLE, 1 INT, 2 CHAR, 3 SHORT, 4 LONG, 5 FLOAT, 6 BYTE, 7 LONG_LONG, 8 SIGNED_CHAR,
    // 9 UNSIGNED_CHAR, 10 UNSIGNED_SHORT, 11 UNSIGNED, 12 UNSIGNED_LONG,
    // 13 UNSIGNED_LONG_LONG, 14 LONG_DOUBLE, 15 WCHAR, 16 C_BOOL, 17-20 INT8..64,
    // 21-24 UINT8..64, 25 C_FLOAT_COMPLEX, 26 C_DOUBLE_COMPLEX, 27 C_LONG_DOUBLE_COMPLEX,
    // 28 AINT, 29 OFFSET, 30 FLOAT_INT, 31 LONG_INT, 32 DOUBLE_INT, 33 SHORT_INT, 34 2INT,
    // 35 2FLOAT, 36 2DOUBLE, 37 2LONG, 38 REAL, 39 REAL4, 40 REAL8, 41 REAL16, 42 COMPLEX8,
    // 43 COMPLEX16, 44 COMPLEX32, 45 INTEGER1, 46 INTEGER2, 47 INTEGER4, 48 INTEGER8,
    // 49 INTEGER16, 50 LONG_DOUBLE_INT, 51 CXX_BOOL, 52-54 CXX complexes, 57 PACKED, 58 PTR,
    // 59 COUNT (x86-64 sizes).
    const SIZES: [u8; 60] = [
        8, 4, 1, 2, 8, 4, 1, 8, 1, 1, 2, 4, 8, 8, 16, 4, 1, 1, 2, 4, 8, 1, 2, 4, 8, 8, 16, 32, 8,
        8, 8, 16, 16, 8, 8, 8, 16, 16, 4, 4, 8, 16, 8, 16, 16, 4, 2, 4, 8, 16, 32, 1, 8, 16, 32, 0,
        0, 1, 8, 8,
    ];
    SIZES.get(n).copied().filter(|&s| s > 0).map(f64::from)
}

/// A SimGrid datatype id of the given size, for writing element counts.
fn datatype_id(size: f64) -> Option<&'static str> {
    match size as u32 {
        1 => Some("6"),
        2 => Some("3"),
        4 => Some("1"),
        8 => Some("0"),
        16 => Some("14"),
        _ => None,
    }
}

/// Where a trace's text is: a file, or bytes in memory.
#[derive(Clone)]
enum Input {
    Path(PathBuf),
    Bytes(Arc<[u8]>),
}

impl fmt::Debug for Input {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Input::Path(p) => f.debug_tuple("Path").field(p).finish(),
            Input::Bytes(b) => write!(f, "Bytes({} bytes)", b.len()),
        }
    }
}

/// An open [`Input`].
enum Stream {
    File(File),
    Bytes(Cursor<Arc<[u8]>>),
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Stream::File(f) => f.read(buf),
            Stream::Bytes(c) => c.read(buf),
        }
    }
}

fn open_file(path: &Path, name: &str) -> Result<File, TraceError> {
    File::open(path).map_err(|e| TraceError::whole(name, format!("cannot open trace: {e}")))
}

/// The trace inputs: files and how ranks map onto them.
#[derive(Clone, Debug)]
pub struct TraceSet {
    /// Display names of the files (as resolved).
    pub files: Vec<String>,
    inputs: Vec<Input>,
    /// One file per rank, or one shared file.
    shared: bool,
    ranks: u32,
    /// Total bytes of the trace files (for progress).
    pub total_bytes: u64,
    /// Things the caller may want to show (e.g. which index resolution was used).
    pub notes: Vec<String>,
}

impl TraceSet {
    /// Open `path`: an index file (one trace path per line) or a trace file itself.
    /// `np` gives the number of ranks for a shared trace (otherwise found by a first pass).
    pub fn open(path: &Path, np: Option<u32>) -> Result<TraceSet, TraceError> {
        let name = path.display().to_string();
        let mut reader = BufReader::new(open_file(path, &name)?);
        // Decide: trace or index, from the first meaningful line.
        let mut first = String::new();
        let mut lines = Vec::new();
        let mut is_trace = false;
        loop {
            first.clear();
            let n = reader
                .read_line(&mut first)
                .map_err(|e| TraceError::whole(&name, format!("cannot read: {e}")))?;
            if n == 0 {
                break;
            }
            let t = first.trim();
            if t.is_empty() || t.starts_with('#') {
                continue;
            }
            let mut toks = t.split_ascii_whitespace();
            let a = toks.next().unwrap_or("");
            let b = toks.next();
            if b.is_some() && parse_rank_token(a).is_some() {
                is_trace = true;
                break;
            }
            lines.push(t.to_string());
            if lines.len() > 1 {
                break;
            }
        }
        if is_trace {
            let ranks = match np {
                Some(n) => requested_ranks(&name, n)?,
                None => scan_ranks(BufReader::new(open_file(path, &name)?), &name)?,
            };
            let total = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
            return Ok(TraceSet {
                files: vec![name],
                inputs: vec![Input::Path(path.to_path_buf())],
                shared: true,
                ranks,
                total_bytes: total,
                notes: Vec::new(),
            });
        }
        // An index: read all of it (one short line per rank).
        let text = std::fs::read_to_string(path)
            .map_err(|e| TraceError::whole(&name, format!("cannot read index: {e}")))?;
        let base = path.parent().unwrap_or(Path::new(""));
        let mut files = Vec::new();
        let mut paths = Vec::new();
        let mut notes = Vec::new();
        let mut total = 0;
        let mut cwd_used = 0;
        for (i, line) in text.lines().enumerate() {
            let t = line.trim();
            if t.is_empty() {
                continue;
            }
            let p = Path::new(t);
            let relative_to_index = base.join(p);
            let resolved = if p.is_absolute() || relative_to_index.is_file() {
                relative_to_index
            } else if p.is_file() {
                cwd_used += 1;
                p.to_path_buf()
            } else {
                return Err(TraceError {
                    file: name.clone(),
                    line: i as u64 + 1,
                    col: line.len() - line.trim_start().len() + 1,
                    rank: Some(files.len() as u32),
                    message: format!("trace file '{t}' not found"),
                    line_text: line.to_string(),
                    hint: Some(format!(
                        "looked for {} (relative to the index) and {} (relative to the working directory)",
                        base.join(p).display(),
                        p.display()
                    )),
                });
            };
            total += std::fs::metadata(&resolved).map(|m| m.len()).unwrap_or(0);
            files.push(resolved.display().to_string());
            paths.push(resolved);
        }
        if cwd_used > 0 {
            notes.push(format!(
                "{cwd_used} trace path(s) of {name} resolved relative to the working directory"
            ));
        }
        if files.is_empty() {
            return Err(TraceError::whole(&name, "the index lists no trace file"));
        }
        if files.len() == 1 {
            // SimGrid: an index with one line names a shared trace.
            let ranks = match np {
                Some(n) => requested_ranks(&name, n)?,
                None => scan_ranks(BufReader::new(open_file(&paths[0], &files[0])?), &files[0])?,
            };
            return Ok(TraceSet {
                files,
                inputs: paths.into_iter().map(Input::Path).collect(),
                shared: true,
                ranks,
                total_bytes: total,
                notes,
            });
        }
        let ranks = requested_ranks(&name, u32::try_from(files.len()).unwrap_or(u32::MAX))?;
        if let Some(n) = np {
            if n > ranks {
                return Err(TraceError::whole(
                    &name,
                    format!("{n} ranks requested but the index lists only {ranks} trace files"),
                ));
            }
        }
        Ok(TraceSet {
            ranks: np.unwrap_or(ranks),
            files,
            inputs: paths.into_iter().map(Input::Path).collect(),
            shared: false,
            total_bytes: total,
            notes,
        })
    }

    /// A shared trace (every rank's actions in one text) held in memory, read as
    /// [`open`](Self::open) reads a trace file; `name` names it in errors. Unlike `open`,
    /// the text is never taken for an index. `np` as for `open`.
    pub fn from_bytes(
        name: &str,
        bytes: impl Into<Arc<[u8]>>,
        np: Option<u32>,
    ) -> Result<TraceSet, TraceError> {
        let bytes: Arc<[u8]> = bytes.into();
        let ranks = match np {
            Some(n) => requested_ranks(name, n)?,
            None => scan_ranks(&bytes[..], name)?,
        };
        Ok(TraceSet {
            files: vec![name.to_string()],
            total_bytes: bytes.len() as u64,
            inputs: vec![Input::Bytes(bytes)],
            shared: true,
            ranks,
            notes: Vec::new(),
        })
    }

    pub fn ranks(&self) -> u32 {
        self.ranks
    }

    pub fn is_shared(&self) -> bool {
        self.shared
    }

    /// Start streaming the actions.
    pub fn reader(&self, opts: ReaderOptions) -> Result<TraceReader, TraceError> {
        let mut sources = Vec::new();
        for (i, input) in self.inputs.iter().enumerate() {
            let stream = match input {
                Input::Path(p) => Stream::File(open_file(p, &self.files[i])?),
                Input::Bytes(b) => Stream::Bytes(Cursor::new(b.clone())),
            };
            sources.push(LineSource {
                reader: BufReader::with_capacity(64 * 1024, stream),
                line_no: 0,
                buf: String::new(),
                file: i as u32,
                done: false,
            });
        }
        if !self.shared {
            sources.truncate(self.ranks as usize);
        }
        Ok(TraceReader {
            files: self.files.clone(),
            sources,
            shared: self.shared,
            queues: if self.shared {
                (0..self.ranks).map(|_| VecDeque::new()).collect()
            } else {
                Vec::new()
            },
            buffered: 0,
            opts,
            ranks: self.ranks,
            defaults: vec![1.0; self.ranks as usize],
            bytes_read: 0,
            ignored: 0,
        })
    }
}

/// The largest rank id in a shared trace, plus one (a first, streaming pass).
fn scan_ranks(mut r: impl BufRead, name: &str) -> Result<u32, TraceError> {
    let mut line = String::new();
    let mut max: Option<u32> = None;
    let mut no = 0u64;
    loop {
        line.clear();
        let n = r
            .read_line(&mut line)
            .map_err(|e| TraceError::whole(name, format!("cannot read: {e}")))?;
        if n == 0 {
            break;
        }
        no += 1;
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let tok = t.split_ascii_whitespace().next().unwrap_or("");
        let rank = parse_rank_token(tok).ok_or_else(|| TraceError {
            file: name.to_string(),
            line: no,
            col: 1,
            rank: None,
            message: format!("'{tok}' is not a rank id"),
            line_text: t.to_string(),
            hint: Some(
                "each line starts with the rank: `0 compute 1e9` or `p0 compute 5385`".into(),
            ),
        })?;
        if rank >= MAX_RANKS {
            return Err(TraceError {
                file: name.to_string(),
                line: no,
                col: 1,
                rank: None,
                message: format!("rank {rank} is beyond the {MAX_RANKS} ranks supported"),
                line_text: t.to_string(),
                hint: Some("rank ids run from 0 to the number of ranks minus one".into()),
            });
        }
        max = Some(max.map_or(rank, |m: u32| m.max(rank)));
    }
    max.map(|m| m + 1)
        .ok_or_else(|| TraceError::whole(name, "the trace has no action"))
}

/// `0`, `12` (SimGrid) or `p0`, `p12` (dPerf / MSG).
fn parse_rank_token(tok: &str) -> Option<u32> {
    let digits = tok.strip_prefix('p').unwrap_or(tok);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) || digits.len() > 9 {
        return None;
    }
    digits.parse().ok()
}

struct LineSource {
    reader: BufReader<Stream>,
    line_no: u64,
    buf: String,
    file: u32,
    done: bool,
}

/// Streams actions rank by rank.
pub struct TraceReader {
    files: Vec<String>,
    sources: Vec<LineSource>,
    shared: bool,
    queues: Vec<VecDeque<Located>>,
    buffered: usize,
    opts: ReaderOptions,
    ranks: u32,
    /// Default datatype size per rank (1 = MPI_BYTE; 8 after `init` with an argument).
    defaults: Vec<f64>,
    bytes_read: u64,
    ignored: u64,
}

impl TraceReader {
    /// File display names (index as in [`Located::file`]).
    pub fn files(&self) -> &[String] {
        &self.files
    }

    /// Bytes consumed so far (for progress).
    pub fn bytes_read(&self) -> u64 {
        self.bytes_read
    }

    /// Lines of per-rank files that named another rank and were skipped (as SimGrid does).
    pub fn ignored_lines(&self) -> u64 {
        self.ignored
    }

    /// The next action of `rank`, or None at the end of its trace.
    pub fn next(&mut self, rank: u32) -> Result<Option<Located>, TraceError> {
        if !self.shared {
            loop {
                let src = &mut self.sources[rank as usize];
                let Some((r, loc)) = read_action(
                    src,
                    &self.files,
                    self.opts,
                    &mut self.defaults,
                    &mut self.bytes_read,
                    self.ranks,
                )?
                else {
                    return Ok(None);
                };
                if r == rank {
                    return Ok(Some(loc));
                }
                // SimGrid warns and ignores lines for another rank in a per-rank file.
                self.ignored += 1;
            }
        }
        if let Some(a) = self.queues[rank as usize].pop_front() {
            self.buffered -= 1;
            return Ok(Some(a));
        }
        loop {
            let src = &mut self.sources[0];
            let Some((r, loc)) = read_action(
                src,
                &self.files,
                self.opts,
                &mut self.defaults,
                &mut self.bytes_read,
                self.ranks,
            )?
            else {
                return Ok(None);
            };
            if r == rank {
                return Ok(Some(loc));
            }
            if self.buffered >= self.opts.window {
                return Err(TraceError {
                    file: self.files[0].clone(),
                    line: loc.line,
                    col: 0,
                    rank: Some(rank),
                    message: format!(
                        "more than {} actions had to be buffered while looking for rank {rank}'s next action",
                        self.opts.window
                    ),
                    line_text: String::new(),
                    hint: Some(
                        "the shared trace interleaves ranks too unevenly for the memory bound; split it into one file per rank, or raise --window".into(),
                    ),
                });
            }
            self.queues[r as usize].push_back(loc);
            self.buffered += 1;
        }
    }
}

/// Read and parse the next action line of a source: (rank, action).
fn read_action(
    src: &mut LineSource,
    files: &[String],
    opts: ReaderOptions,
    defaults: &mut [f64],
    bytes_read: &mut u64,
    ranks: u32,
) -> Result<Option<(u32, Located)>, TraceError> {
    if src.done {
        return Ok(None);
    }
    loop {
        // Fast path: a whole line already in the reader's buffer, in the common shape,
        // parsed in place (no copy, no UTF-8 pass). Anything else takes the general path.
        let avail = src.reader.fill_buf().map_err(|e| {
            TraceError::whole(&files[src.file as usize], format!("cannot read trace: {e}"))
        })?;
        if let Some((len, rank, action)) = parse_fast(avail, defaults, ranks) {
            src.reader.consume(len);
            *bytes_read += len as u64;
            src.line_no += 1;
            return Ok(Some((
                rank,
                Located {
                    action,
                    file: src.file,
                    line: src.line_no,
                },
            )));
        }
        src.buf.clear();
        let n = src.reader.read_line(&mut src.buf).map_err(|e| {
            TraceError::whole(&files[src.file as usize], format!("cannot read trace: {e}"))
        })?;
        if n == 0 {
            src.done = true;
            return Ok(None);
        }
        *bytes_read += n as u64;
        src.line_no += 1;
        let t = src.buf.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let file = &files[src.file as usize];
        let (rank, action) =
            parse_line(&src.buf, opts, defaults, ranks).map_err(|(col, msg, hint)| TraceError {
                file: file.clone(),
                line: src.line_no,
                col,
                rank: parse_rank_token(t.split_ascii_whitespace().next().unwrap_or("")),
                message: msg,
                line_text: src.buf.trim_end().to_string(),
                hint,
            })?;
        return Ok(Some((
            rank,
            Located {
                action,
                file: src.file,
                line: src.line_no,
            },
        )));
    }
}

type ParseFail = (usize, String, Option<String>);

/// Most tokens [`parse_fast`] handles (`R isend DST TAG COUNT DT`).
const FAST_FIELDS: usize = 6;
/// Longest all-digit token read as an integer (exact in an f64, fits an i32/u32 at 9).
const FAST_DIGITS: usize = 15;

/// The common lines of SimGrid's current form — `compute`, `send`/`isend`,
/// `recv`/`irecv`, `wait`/`test`, `waitall`, `barrier`, `sleep`, `init`, `finalize` — parsed
/// straight from the read buffer `buf`, in one pass: `(line length with its newline, rank,
/// action)`. `None` means "not sure" (no whole line in `buf`, another action, a token that
/// is not plain, a value out of range): the caller then reads the line and runs
/// [`parse_line`], which has the last word on every line and gives the errors. Whenever
/// this returns an action, it is the one `parse_line` returns (a property test checks it):
/// reading was half of the replay time on traces whose network sharing is cheap.
fn parse_fast(buf: &[u8], defaults: &mut [f64], ranks: u32) -> Option<(usize, u32, Action)> {
    if !buf.first()?.is_ascii_digit() {
        return None; // blank, comment, dPerf form, leading space: general path
    }
    // Tokens as (start, end), split on the separators `parse_line` splits on; a control
    // or non-ASCII byte anywhere sends the line to the general path.
    let mut toks = [(0u32, 0u32); FAST_FIELDS];
    let mut n = 0;
    let mut i = 0;
    let len = loop {
        while i < buf.len() && matches!(buf[i], b' ' | b'\t' | b'\r') {
            i += 1;
        }
        match buf.get(i) {
            None => return None, // the line goes on past the buffer
            Some(b'\n') => break i + 1,
            Some(_) => {}
        }
        let start = i;
        while i < buf.len() && buf[i] > b' ' && buf[i] < 0x7f {
            i += 1;
        }
        if i < buf.len() && !matches!(buf[i], b' ' | b'\t' | b'\r' | b'\n') {
            return None;
        }
        if n == FAST_FIELDS {
            return None;
        }
        toks[n] = (start as u32, i as u32);
        n += 1;
    };
    let tok = |k: usize| -> &[u8] { &buf[toks[k].0 as usize..toks[k].1 as usize] };
    let digits = |t: &[u8], max: usize| -> Option<u64> {
        if t.len() > max {
            return None;
        }
        let mut v = 0u64;
        for &b in t {
            let d = b.wrapping_sub(b'0');
            if d > 9 {
                return None;
            }
            v = v * 10 + u64::from(d);
        }
        Some(v)
    };
    let rank_of = |t: &[u8]| -> Option<u32> {
        let r = digits(t, 9)? as u32;
        (r < ranks).then_some(r)
    };
    let tag_of = |t: &[u8]| -> Option<i32> { Some(digits(t, 9)? as i32) };
    // A non-negative number: integers exactly (an integer below 2^53 is what `str::parse`
    // gives too), anything else through `str::parse` as `parse_line` does.
    let nonneg = |t: &[u8]| -> Option<f64> {
        let v = match digits(t, FAST_DIGITS) {
            Some(v) => v as f64,
            None => std::str::from_utf8(t).ok()?.parse::<f64>().ok()?,
        };
        (v.is_finite() && v >= 0.0).then_some(v)
    };
    if n < 2 {
        return None;
    }
    let rank = rank_of(tok(0))?;
    let d = defaults[rank as usize];
    let dt = |k: usize| -> Option<f64> {
        if k < n {
            datatype_size(std::str::from_utf8(tok(k)).ok()?)
        } else {
            Some(d)
        }
    };
    let name = tok(1);
    let action = match (name, n) {
        (b"compute", 3) => Action::Compute {
            flops: nonneg(tok(2))?,
        },
        (b"isend" | b"send", 5 | 6) => {
            let dst = rank_of(tok(2))?;
            let tag = tag_of(tok(3))?;
            let bytes = Some(nonneg(tok(4))?.trunc() * dt(5)?).filter(|b| b.is_finite())?;
            if name == b"send" {
                Action::Send { dst, tag, bytes }
            } else {
                Action::Isend { dst, tag, bytes }
            }
        }
        (b"irecv" | b"recv", 5 | 6) => {
            let src = rank_of(tok(2))?;
            let tag = tag_of(tok(3))?;
            let bytes = Some(nonneg(tok(4))?.trunc() * dt(5)?).filter(|b| b.is_finite())?;
            if name == b"recv" {
                Action::Recv { src, tag, bytes }
            } else {
                Action::Irecv { src, tag, bytes }
            }
        }
        (b"waitall", 2) => Action::WaitAll,
        (b"wait" | b"test", 5) => {
            let src = rank_of(tok(2))?;
            let dst = rank_of(tok(3))?;
            let tag = tag_of(tok(4))?;
            if name == b"wait" {
                Action::Wait { src, dst, tag }
            } else {
                Action::Test { src, dst, tag }
            }
        }
        (b"sleep", 3) => Action::Sleep {
            seconds: nonneg(tok(2))?,
        },
        (b"barrier", 2) => Action::Barrier,
        (b"finalize", 2) => Action::Finalize,
        (b"init", 2) => {
            defaults[rank as usize] = 1.0;
            Action::Init
        }
        _ => return None,
    };
    Some((len, rank, action))
}

/// Most fields on one action line (the longest supported action has 8).
const MAX_FIELDS: usize = 16;

/// Parse one trace line. Errors carry the 1-based column of the offending token.
pub fn parse_line(
    line: &str,
    opts: ReaderOptions,
    defaults: &mut [f64],
    ranks: u32,
) -> Result<(u32, Action), ParseFail> {
    // Tokens with their columns, on the stack: a line is parsed per action, so an
    // allocation here showed up in profiles.
    let mut buf: [(usize, &str); MAX_FIELDS] = [(0, ""); MAX_FIELDS];
    let mut ntok = 0;
    let mut i = 0;
    let b = line.as_bytes();
    let is_space = |c: u8| c == b' ' || c == b'\t' || c == b'\r' || c == b'\n';
    while i < b.len() {
        while i < b.len() && is_space(b[i]) {
            i += 1;
        }
        let s = i;
        while i < b.len() && !is_space(b[i]) {
            i += 1;
        }
        if i > s {
            if ntok == MAX_FIELDS {
                return Err((
                    s + 1,
                    format!("more than {MAX_FIELDS} fields on one line"),
                    None,
                ));
            }
            buf[ntok] = (s + 1, &line[s..i]);
            ntok += 1;
        }
    }
    let toks = &buf[..ntok];
    let line_end = line.trim_end().len() + 1;
    let Some(&(rcol, rtok)) = toks.first() else {
        return Err((1, "empty action line".into(), None));
    };
    let legacy = rtok.starts_with('p');
    let rank = parse_rank_token(rtok).ok_or_else(|| {
        (
            rcol,
            format!("'{rtok}' is not a rank id"),
            Some(
                "each line starts with the rank: `0 compute 1e9` or `p0 compute 5385`".to_string(),
            ),
        )
    })?;
    if rank >= ranks {
        return Err((
            rcol,
            format!("rank {rank} is out of range (the trace has {ranks} ranks)"),
            None,
        ));
    }
    let Some(&(acol, name)) = toks.get(1) else {
        return Err((line_end, "missing action name after the rank".into(), None));
    };
    let args = &toks[2..];
    let need = |n: usize, usage: &str| -> Result<(), ParseFail> {
        if args.len() < n {
            let col = args
                .last()
                .map_or(acol + name.len() + 1, |(c, t)| c + t.len() + 1);
            Err((
                col,
                format!("'{name}' needs {n} argument(s), got {}", args.len()),
                Some(format!("usage: {usage}")),
            ))
        } else {
            Ok(())
        }
    };
    let num = |k: usize| -> Result<f64, ParseFail> {
        let (c, t) = args[k];
        match t.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(v),
            _ => Err((c, format!("'{t}' is not a number"), None)),
        }
    };
    let nonneg = |k: usize| -> Result<f64, ParseFail> {
        let v = num(k)?;
        if v < 0.0 {
            Err((
                args[k].0,
                format!("'{}' must not be negative", args[k].1),
                None,
            ))
        } else {
            Ok(v)
        }
    };
    let peer = |k: usize| -> Result<u32, ParseFail> {
        let (c, t) = args[k];
        let r = if legacy {
            parse_rank_token(t)
        } else {
            t.parse::<u32>().ok()
        };
        match r {
            Some(r) if r < ranks => Ok(r),
            Some(r) => Err((
                c,
                format!("rank {r} is out of range (the trace has {ranks} ranks)"),
                None,
            )),
            None => Err((c, format!("'{t}' is not a rank"), None)),
        }
    };
    let int = |k: usize| -> Result<i32, ParseFail> {
        let (c, t) = args[k];
        t.parse::<i32>()
            .map_err(|_| (c, format!("'{t}' is not a whole number"), None))
    };
    let dt = |k: usize, default: f64| -> Result<f64, ParseFail> {
        match args.get(k) {
            None => Ok(default),
            Some(&(c, t)) => datatype_size(t).ok_or_else(|| {
                (
                    c,
                    format!("unknown datatype id '{t}'"),
                    Some("SimGrid's ids: 0 double, 1 int, 2 char, 6 byte, ...".into()),
                )
            }),
        }
    };
    // A size in bytes from the element count in argument `k`: finite (a huge count of
    // 16-byte elements is not).
    let sized = |k: usize, bytes: f64| -> Result<f64, ParseFail> {
        if bytes.is_finite() {
            Ok(bytes)
        } else {
            Err((
                args[k].0,
                format!("{} elements are too many bytes", args[k].1),
                None,
            ))
        }
    };
    let root = |k: usize| -> Result<u32, ParseFail> {
        if args.len() > k {
            peer(k)
        } else {
            Ok(0)
        }
    };
    let d = defaults[rank as usize];
    if legacy {
        let action = match name {
            "init" => Action::Init,
            "finalize" => Action::Finalize,
            "compute" => {
                need(1, "pN compute AMOUNT")?;
                let v = nonneg(0)?;
                match opts.legacy_compute {
                    LegacyCompute::Flops => Action::Compute { flops: v },
                    LegacyCompute::Nanoseconds => Action::Sleep { seconds: v * 1e-9 },
                }
            }
            "sleep" => {
                need(1, "pN sleep SECONDS")?;
                Action::Sleep { seconds: nonneg(0)? }
            }
            "send" | "Isend" | "isend" => {
                need(2, "pN send pM BYTES")?;
                let dst = peer(0)?;
                let bytes = nonneg(1)?;
                if name == "send" {
                    Action::Send { dst, tag: 0, bytes }
                } else {
                    Action::Isend { dst, tag: 0, bytes }
                }
            }
            "recv" | "Recv" | "Irecv" | "irecv" => {
                need(1, "pN recv pM")?;
                let src = peer(0)?;
                let bytes = if args.len() > 1 { nonneg(1)? } else { -1.0 };
                if name.eq_ignore_ascii_case("recv") {
                    Action::Recv { src, tag: 0, bytes }
                } else {
                    Action::Irecv { src, tag: 0, bytes }
                }
            }
            "wait" => Action::WaitLast,
            "barrier" => Action::Barrier,
            "bcast" => {
                need(1, "pN bcast BYTES")?;
                Action::Bcast { bytes: nonneg(0)?, root: 0 }
            }
            "reduce" => {
                need(2, "pN reduce BYTES FLOPS")?;
                Action::Reduce { bytes: nonneg(0)?, flops: nonneg(1)?, root: 0, dt: 1.0 }
            }
            "allReduce" | "allreduce" => {
                need(2, "pN allReduce BYTES FLOPS")?;
                Action::AllReduce { bytes: nonneg(0)?, flops: nonneg(1)?, dt: 1.0 }
            }
            "comm_size" | "comm_split" | "comm_dup" => Action::NoOp,
            other => {
                return Err((
                    acol,
                    format!("unknown action '{other}' in dPerf form"),
                    Some("dPerf/MSG actions: init, finalize, compute, sleep, send, Isend, recv, Irecv, wait, barrier, bcast, reduce, allReduce, comm_size".into()),
                ))
            }
        };
        return Ok((rank, action));
    }
    let action = match name {
        "init" => {
            // SimGrid: `init` with an extra argument means MPE traces, counted in doubles.
            defaults[rank as usize] = if args.is_empty() { 1.0 } else { 8.0 };
            Action::Init
        }
        "finalize" => Action::Finalize,
        "comm_size" | "comm_split" | "comm_dup" | "location" => Action::NoOp,
        "compute" => {
            need(1, "R compute FLOPS")?;
            Action::Compute { flops: nonneg(0)? }
        }
        "sleep" => {
            need(1, "R sleep SECONDS")?;
            Action::Sleep { seconds: nonneg(0)? }
        }
        "send" | "isend" => {
            need(3, "R send DST TAG COUNT [DATATYPE]")?;
            let dst = peer(0)?;
            let tag = int(1)?;
            let bytes = sized(2, nonneg(2)?.trunc() * dt(3, d)?)?;
            if name == "send" {
                Action::Send { dst, tag, bytes }
            } else {
                Action::Isend { dst, tag, bytes }
            }
        }
        "recv" | "irecv" => {
            need(3, "R recv SRC TAG COUNT [DATATYPE]")?;
            let src = peer(0)?;
            let tag = int(1)?;
            let count = num(2)?.trunc();
            let bytes = if count < 0.0 { -1.0 } else { sized(2, count * dt(3, d)?)? };
            if name == "recv" {
                Action::Recv { src, tag, bytes }
            } else {
                Action::Irecv { src, tag, bytes }
            }
        }
        "wait" | "test" => {
            need(3, "R wait SRC DST TAG")?;
            let src = peer(0)?;
            let dst = peer(1)?;
            let tag = int(2)?;
            if name == "wait" {
                Action::Wait { src, dst, tag }
            } else {
                Action::Test { src, dst, tag }
            }
        }
        "waitall" => Action::WaitAll,
        "sendRecv" => {
            need(4, "R sendRecv SENDCOUNT DST RECVCOUNT SRC [DT DT]")?;
            let s = nonneg(0)?.trunc();
            let dst = peer(1)?;
            let r = nonneg(2)?.trunc();
            let src = peer(3)?;
            Action::SendRecv { send_bytes: sized(0, s * dt(4, d)?)?, dst, recv_bytes: sized(2, r * dt(5, d)?)?, src }
        }
        "barrier" => Action::Barrier,
        "bcast" => {
            need(1, "R bcast COUNT [ROOT [DATATYPE]]")?;
            let c = nonneg(0)?.trunc();
            Action::Bcast { bytes: sized(0, c * dt(2, d)?)?, root: root(1)? }
        }
        "reduce" => {
            need(2, "R reduce COUNT FLOPS [ROOT [DATATYPE]]")?;
            let c = nonneg(0)?.trunc();
            let t = dt(3, d)?;
            Action::Reduce { bytes: sized(0, c * t)?, flops: nonneg(1)?, root: root(2)?, dt: t }
        }
        "allreduce" => {
            need(2, "R allreduce COUNT FLOPS [DATATYPE]")?;
            let c = nonneg(0)?.trunc();
            let t = dt(2, d)?;
            Action::AllReduce { bytes: sized(0, c * t)?, flops: nonneg(1)?, dt: t }
        }
        "alltoall" => {
            need(2, "R alltoall SENDCOUNT RECVCOUNT [DT DT]")?;
            let s = nonneg(0)?.trunc();
            let r = nonneg(1)?.trunc();
            Action::AllToAll { send_bytes: sized(0, s * dt(2, d)?)?, recv_bytes: sized(1, r * dt(3, d)?)? }
        }
        "gather" | "scatter" => {
            need(2, "R gather SENDCOUNT RECVCOUNT [ROOT [DT DT]]")?;
            let s = nonneg(0)?.trunc();
            let r = nonneg(1)?.trunc();
            let root = root(2)?;
            let (sb, rb) = (sized(0, s * dt(3, d)?)?, sized(1, r * dt(4, d)?)?);
            if name == "gather" {
                Action::Gather { send_bytes: sb, recv_bytes: rb, root }
            } else {
                Action::Scatter { send_bytes: sb, recv_bytes: rb, root }
            }
        }
        "allgather" => {
            need(2, "R allgather SENDCOUNT RECVCOUNT [DT DT]")?;
            let s = nonneg(0)?.trunc();
            let r = nonneg(1)?.trunc();
            Action::AllGather { send_bytes: sized(0, s * dt(2, d)?)?, recv_bytes: sized(1, r * dt(3, d)?)? }
        }
        "gatherv" | "scatterv" | "allgatherv" | "alltoallv" | "reducescatter" | "scan" | "exscan" => {
            return Err((
                acol,
                format!("action '{name}' is not supported yet"),
                Some("supported collectives: barrier, bcast, reduce, allreduce, alltoall, gather, allgather, scatter".into()),
            ))
        }
        other => {
            return Err((
                acol,
                format!("unknown action '{other}'"),
                Some("SimGrid actions: init, finalize, compute, sleep, send, isend, recv, irecv, wait, waitall, test, sendRecv, barrier, bcast, reduce, allreduce, alltoall, gather, allgather, scatter".into()),
            ))
        }
    };
    Ok((rank, action))
}

/// Writes traces in SimGrid's current form: one file per rank and an index.
pub struct TraceWriter {
    dir: PathBuf,
    stem: String,
    files: Vec<BufWriter<File>>,
}

impl TraceWriter {
    /// Create `dir/STEM_R.txt` for each rank and (on [`finish`](Self::finish)) `dir/STEM.txt`
    /// listing them (paths relative to `dir`).
    pub fn create(dir: &Path, stem: &str, ranks: u32) -> std::io::Result<TraceWriter> {
        std::fs::create_dir_all(dir)?;
        let mut files = Vec::with_capacity(ranks as usize);
        for r in 0..ranks {
            let f = File::create(dir.join(format!("{stem}_{r}.txt")))?;
            files.push(BufWriter::new(f));
        }
        Ok(TraceWriter {
            dir: dir.to_path_buf(),
            stem: stem.to_string(),
            files,
        })
    }

    /// Append an action of `rank` (sizes written as byte counts of `MPI_BYTE`).
    pub fn write(&mut self, rank: u32, action: &Action) -> std::io::Result<()> {
        let w = &mut self.files[rank as usize];
        write_action(w, rank, action)
    }

    /// Flush the rank files and write the index; returns the index path.
    pub fn finish(self) -> std::io::Result<PathBuf> {
        let n = self.files.len();
        for mut f in self.files {
            f.flush()?;
        }
        let index = self.dir.join(format!("{}.txt", self.stem));
        let mut w = BufWriter::new(File::create(&index)?);
        for r in 0..n {
            writeln!(w, "{}_{r}.txt", self.stem)?;
        }
        w.flush()?;
        Ok(index)
    }
}

/// Write one action line in SimGrid's current form (always newline-terminated: SimGrid
/// drops a last line without one).
pub fn write_action(w: &mut impl Write, rank: u32, a: &Action) -> std::io::Result<()> {
    let n = |x: f64| Num(x);
    match a {
        Action::Init => writeln!(w, "{rank} init"),
        Action::Finalize => writeln!(w, "{rank} finalize"),
        Action::Compute { flops } => writeln!(w, "{rank} compute {}", n(*flops)),
        Action::Sleep { seconds } => writeln!(w, "{rank} sleep {}", n(*seconds)),
        Action::Send { dst, tag, bytes } => writeln!(w, "{rank} send {dst} {tag} {}", n(*bytes)),
        Action::Isend { dst, tag, bytes } => writeln!(w, "{rank} isend {dst} {tag} {}", n(*bytes)),
        Action::Recv { src, tag, bytes } => writeln!(w, "{rank} recv {src} {tag} {}", n(*bytes)),
        Action::Irecv { src, tag, bytes } => writeln!(w, "{rank} irecv {src} {tag} {}", n(*bytes)),
        Action::Wait { src, dst, tag } => writeln!(w, "{rank} wait {src} {dst} {tag}"),
        Action::Test { src, dst, tag } => writeln!(w, "{rank} test {src} {dst} {tag}"),
        Action::WaitAll | Action::WaitLast => writeln!(w, "{rank} waitall"),
        Action::SendRecv {
            send_bytes,
            dst,
            recv_bytes,
            src,
        } => writeln!(
            w,
            "{rank} sendRecv {} {dst} {} {src} 6 6",
            n(*send_bytes),
            n(*recv_bytes)
        ),
        Action::Barrier => writeln!(w, "{rank} barrier"),
        Action::Bcast { bytes, root } => writeln!(w, "{rank} bcast {} {root}", n(*bytes)),
        Action::Reduce {
            bytes,
            flops,
            root,
            dt,
        } => match datatype_id(*dt) {
            Some(id) if *dt != 1.0 => writeln!(
                w,
                "{rank} reduce {} {} {root} {id}",
                n(bytes / dt),
                n(*flops)
            ),
            _ => writeln!(w, "{rank} reduce {} {} {root}", n(*bytes), n(*flops)),
        },
        Action::AllReduce { bytes, flops, dt } => match datatype_id(*dt) {
            Some(id) if *dt != 1.0 => {
                writeln!(w, "{rank} allreduce {} {} {id}", n(bytes / dt), n(*flops))
            }
            _ => writeln!(w, "{rank} allreduce {} {}", n(*bytes), n(*flops)),
        },
        Action::AllToAll {
            send_bytes,
            recv_bytes,
        } => {
            writeln!(w, "{rank} alltoall {} {}", n(*send_bytes), n(*recv_bytes))
        }
        Action::Gather {
            send_bytes,
            recv_bytes,
            root,
        } => {
            writeln!(
                w,
                "{rank} gather {} {} {root}",
                n(*send_bytes),
                n(*recv_bytes)
            )
        }
        Action::AllGather {
            send_bytes,
            recv_bytes,
        } => {
            writeln!(w, "{rank} allgather {} {}", n(*send_bytes), n(*recv_bytes))
        }
        Action::Scatter {
            send_bytes,
            recv_bytes,
            root,
        } => {
            writeln!(
                w,
                "{rank} scatter {} {} {root}",
                n(*send_bytes),
                n(*recv_bytes)
            )
        }
        Action::NoOp => writeln!(w, "{rank} comm_dup"),
    }
}

/// Prints whole numbers without a fraction and others in the shortest round-trip form.
struct Num(f64);

impl fmt::Display for Num {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let x = self.0;
        if x.fract() == 0.0 && x.abs() < 1e15 {
            write!(f, "{}", x as i64)
        } else {
            write!(f, "{x:e}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(l: &str) -> Result<(u32, Action), ParseFail> {
        let mut d = vec![1.0; 8];
        parse_line(l, ReaderOptions::default(), &mut d, 8)
    }

    #[test]
    fn current_form_field_orders() {
        assert_eq!(
            parse("0 send 1 7 1e6").unwrap(),
            (
                0,
                Action::Send {
                    dst: 1,
                    tag: 7,
                    bytes: 1e6
                }
            )
        );
        assert_eq!(
            parse("1 irecv 0 7 10 0").unwrap(),
            (
                1,
                Action::Irecv {
                    src: 0,
                    tag: 7,
                    bytes: 80.0
                }
            )
        );
        assert_eq!(
            parse("1 recv 0 0 -1").unwrap(),
            (
                1,
                Action::Recv {
                    src: 0,
                    tag: 0,
                    bytes: -1.0
                }
            )
        );
        assert_eq!(
            parse("2 wait 0 2 5").unwrap(),
            (
                2,
                Action::Wait {
                    src: 0,
                    dst: 2,
                    tag: 5
                }
            )
        );
        assert_eq!(
            parse("3 sendRecv 10 4 20 2").unwrap(),
            (
                3,
                Action::SendRecv {
                    send_bytes: 10.0,
                    dst: 4,
                    recv_bytes: 20.0,
                    src: 2
                }
            )
        );
        assert_eq!(
            parse("0 bcast 100").unwrap(),
            (
                0,
                Action::Bcast {
                    bytes: 100.0,
                    root: 0
                }
            )
        );
        assert_eq!(
            parse("0 bcast 100 3 1").unwrap(),
            (
                0,
                Action::Bcast {
                    bytes: 400.0,
                    root: 3
                }
            )
        );
        assert_eq!(
            parse("0 reduce 10 1e6 2").unwrap(),
            (
                0,
                Action::Reduce {
                    bytes: 10.0,
                    flops: 1e6,
                    root: 2,
                    dt: 1.0
                }
            )
        );
        assert_eq!(
            parse("0 allreduce 10 1e6 0").unwrap(),
            (
                0,
                Action::AllReduce {
                    bytes: 80.0,
                    flops: 1e6,
                    dt: 8.0
                }
            )
        );
        assert_eq!(
            parse("0 gather 68 68 0 0 0").unwrap(),
            (
                0,
                Action::Gather {
                    send_bytes: 544.0,
                    recv_bytes: 544.0,
                    root: 0
                }
            )
        );
        assert_eq!(
            parse("0 alltoall 5 5").unwrap(),
            (
                0,
                Action::AllToAll {
                    send_bytes: 5.0,
                    recv_bytes: 5.0
                }
            )
        );
        assert_eq!(
            parse("0 compute 1e9").unwrap(),
            (0, Action::Compute { flops: 1e9 })
        );
    }

    #[test]
    fn init_with_argument_switches_default_to_double() {
        let mut d = vec![1.0; 2];
        let o = ReaderOptions::default();
        parse_line("0 init 1", o, &mut d, 2).unwrap();
        assert_eq!(
            parse_line("0 send 1 0 10", o, &mut d, 2).unwrap().1,
            Action::Send {
                dst: 1,
                tag: 0,
                bytes: 80.0
            }
        );
        assert_eq!(
            parse_line("1 send 0 0 10", o, &mut d, 2).unwrap().1,
            Action::Send {
                dst: 0,
                tag: 0,
                bytes: 10.0
            }
        );
    }

    #[test]
    fn dperf_form() {
        assert_eq!(
            parse("p0 compute 5385").unwrap(),
            (0, Action::Compute { flops: 5385.0 })
        );
        assert_eq!(
            parse("p0 Isend p1 8429748").unwrap(),
            (
                0,
                Action::Isend {
                    dst: 1,
                    tag: 0,
                    bytes: 8429748.0
                }
            )
        );
        assert_eq!(
            parse("p1 recv p0").unwrap(),
            (
                1,
                Action::Recv {
                    src: 0,
                    tag: 0,
                    bytes: -1.0
                }
            )
        );
        assert_eq!(parse("p1 wait").unwrap(), (1, Action::WaitLast));
        let mut d = vec![1.0; 2];
        let o = ReaderOptions {
            legacy_compute: LegacyCompute::Nanoseconds,
            ..Default::default()
        };
        assert_eq!(
            parse_line("p0 compute 5385", o, &mut d, 2).unwrap().1,
            Action::Sleep { seconds: 5385e-9 }
        );
    }

    #[test]
    fn errors_point_at_the_token() {
        let e = parse("0 send 1 0 abc").unwrap_err();
        assert_eq!(e.0, 12);
        assert!(e.1.contains("'abc' is not a number"));
        let e = parse("0 send 9 0 1").unwrap_err();
        assert!(e.1.contains("out of range"), "{}", e.1);
        let e = parse("0 frobnicate").unwrap_err();
        assert_eq!(e.0, 3);
        let e = parse("0 send 1").unwrap_err();
        assert!(e.1.contains("needs 3"));
        let e = parse("x compute 1").unwrap_err();
        assert_eq!(e.0, 1);
    }

    #[test]
    fn write_then_read_round_trips() {
        let dir = std::env::temp_dir().join(format!("pc-trace-rt-{}", std::process::id()));
        let actions = [
            Action::Init,
            Action::Compute { flops: 1.5e9 },
            Action::Isend {
                dst: 1,
                tag: 3,
                bytes: 1000.0,
            },
            Action::Wait {
                src: 0,
                dst: 1,
                tag: 3,
            },
            Action::AllReduce {
                bytes: 64.0,
                flops: 0.0,
                dt: 8.0,
            },
            Action::Finalize,
        ];
        let mut w = TraceWriter::create(&dir, "rt", 2).unwrap();
        for a in &actions {
            w.write(0, a).unwrap();
        }
        w.write(1, &Action::Init).unwrap();
        let index = w.finish().unwrap();
        let set = TraceSet::open(&index, None).unwrap();
        assert_eq!(set.ranks(), 2);
        let mut r = set.reader(ReaderOptions::default()).unwrap();
        for a in &actions {
            assert_eq!(&r.next(0).unwrap().unwrap().action, a);
        }
        assert!(r.next(0).unwrap().is_none());
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn shared_file_with_bounded_window() {
        let dir = std::env::temp_dir().join(format!("pc-trace-sh-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("shared.txt");
        let mut text = String::new();
        for _ in 0..10 {
            text.push_str("0 compute 1\n");
        }
        text.push_str("1 compute 2\n");
        std::fs::write(&p, &text).unwrap();
        let set = TraceSet::open(&p, None).unwrap();
        assert!(set.is_shared());
        assert_eq!(set.ranks(), 2);
        let mut r = set
            .reader(ReaderOptions {
                window: 100,
                ..Default::default()
            })
            .unwrap();
        assert_eq!(
            r.next(1).unwrap().unwrap().action,
            Action::Compute { flops: 2.0 }
        );
        let mut r = set
            .reader(ReaderOptions {
                window: 5,
                ..Default::default()
            })
            .unwrap();
        let e = r.next(1).unwrap_err();
        assert!(e.message.contains("buffered"));
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn shared_trace_in_memory_reads_like_a_file() {
        let text = "p0 init\np1 init\np0 compute 1e9\np0 Isend p1 1e6\np1 Irecv p0\np1 wait\n";
        let dir = std::env::temp_dir().join(format!("pc-trace-mem-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("shared.txt");
        std::fs::write(&p, text).unwrap();
        let from_file = TraceSet::open(&p, None).unwrap();
        let in_memory = TraceSet::from_bytes("mem", text.as_bytes(), None).unwrap();
        assert!(in_memory.is_shared());
        assert_eq!(in_memory.ranks(), 2);
        assert_eq!(in_memory.total_bytes, text.len() as u64);
        let mut a = from_file.reader(ReaderOptions::default()).unwrap();
        let mut b = in_memory.reader(ReaderOptions::default()).unwrap();
        for rank in [1, 0] {
            loop {
                let (x, y) = (a.next(rank).unwrap(), b.next(rank).unwrap());
                assert_eq!(x, y);
                if x.is_none() {
                    break;
                }
            }
        }
        assert_eq!(a.bytes_read(), b.bytes_read());
        let e = TraceSet::from_bytes("mem", &b"0 compute 1\nx compute 2\n"[..], None).unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("mem", 2));
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn message_sizes_out_of_range_are_an_error() {
        // 1e308 elements of 16 bytes used to make a message of infinite size.
        for l in [
            "0 send 1 0 1e308 14",
            "0 irecv 1 0 1e308 14",
            "0 sendRecv 1 1 1e308 1 6 14",
            "0 bcast 1e308 0 14",
            "0 reduce 1e308 0 0 14",
            "0 allreduce 1e308 0 14",
            "0 alltoall 1 1e308 6 14",
            "0 gather 1e308 1 0 14 6",
            "0 allgather 1 1e308 6 14",
        ] {
            let e = parse(l).unwrap_err();
            assert!(e.1.contains("too many bytes"), "{l}: {}", e.1);
            assert_eq!(&l[e.0 - 1..e.0 + 4], "1e308", "{l}");
        }
        // the fast path leaves such a line to `parse_line`
        let mut d = vec![1.0; 2];
        assert!(parse_fast(b"0 send 1 0 1e308 14\n", &mut d, 2).is_none());
        assert!(parse_fast(b"0 send 1 0 1e300 14\n", &mut d, 2).is_some());
    }

    #[test]
    fn rank_ids_beyond_max_ranks_are_an_error_not_an_allocation() {
        // Found by fuzzing: one line of rank 50001500 sized the reader's per-rank state
        // for 50 million ranks.
        let e =
            TraceSet::from_bytes("mem", &b"0 init\n50001500 compute 1\n"[..], None).unwrap_err();
        assert_eq!((e.line, e.col), (2, 1));
        assert!(e.message.contains("beyond"), "{}", e.message);
        let top = format!("{} compute 1\n", MAX_RANKS - 1);
        let set = TraceSet::from_bytes("mem", top.as_bytes(), None).unwrap();
        assert_eq!(set.ranks(), MAX_RANKS);
        let e = TraceSet::from_bytes("mem", &b"0 init\n"[..], Some(MAX_RANKS + 1)).unwrap_err();
        assert!(e.message.contains("at most"), "{}", e.message);
    }

    proptest::proptest! {
        // Many cases: a line must draw a valid shape to exercise the fast path at all.
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(8192))]
        /// Whenever the fast parser answers, it answers what `parse_line` does (same
        /// action, same datatype default afterwards); lines drawn near the accepted shapes.
        #[test]
        fn fast_parse_agrees_with_parse_line(
            rank in "[0-9]{1,2}|0[0-9]|p1| 1",
            name in "compute|sleep|send|isend|recv|irecv|wait|test|waitall|barrier|finalize|init|bcast|Send",
            args in proptest::collection::vec(proptest::prop_oneof![
                6 => "[0-3]",
                2 => "[0-9]{1,3}|2\\.5|1e6|3\\.75",
                1 => "[0-9]{9,17}|-1|-0|\\+2|0x1|[a-z]{1,2}|[0-9]{1,2}\\.|0[0-9]|6[01]",
            ], 0..7),
            seps in proptest::collection::vec(" |  |\t", 8),
            end in "|\n|\r\n| \n",
            before in 1.0f64..9.0,
        ) {
            let mut line = format!("{rank}{}{name}", seps[0]);
            for (i, a) in args.iter().enumerate() {
                line.push_str(&seps[i + 1]);
                line.push_str(a);
            }
            line.push_str(&end);
            let mut d_fast = vec![before; 4];
            let mut d_slow = vec![before; 4];
            // the read buffer holds this line and the start of the next one
            let buf = format!("{line}0 compute 1");
            if let Some((len, rank, action)) = parse_fast(buf.as_bytes(), &mut d_fast, 4) {
                proptest::prop_assert_eq!(len, line.len(), "line {:?}", line);
                let slow = parse_line(&line, ReaderOptions::default(), &mut d_slow, 4);
                proptest::prop_assert_eq!(Ok((rank, action)), slow.map_err(|e| e.1), "line {:?}", line);
                proptest::prop_assert_eq!(d_fast, d_slow);
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn parse_never_panics(s in "[0-9p ]{1,3}[a-zA-Z]{0,10}( [-0-9a-z.e]{0,6}){0,6}") {
            if !s.trim().is_empty() {
                let mut d = vec![1.0; 4];
                let _ = parse_line(&s, ReaderOptions::default(), &mut d, 4);
            }
        }
    }
}
