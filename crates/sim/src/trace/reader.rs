//! Streaming actions rank by rank: one line in memory per rank's file, or, for a shared
//! trace, the actions read ahead for ranks that are behind, up to a bound.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader};

use super::action::Action;
use super::error::TraceError;
use super::fast::parse_fast;
use super::input::Stream;
use super::options::ReaderOptions;
use super::parse::{parse_line, parse_rank_token};

/// An action with where it came from (for errors and deadlock reports).
#[derive(Clone, Debug, PartialEq)]
pub struct Located {
    pub action: Action,
    /// Index into [`TraceSet::files`](crate::trace::TraceSet::files).
    pub file: u32,
    pub line: u64,
}

pub(super) struct LineSource {
    pub(super) reader: BufReader<Stream>,
    pub(super) line_no: u64,
    pub(super) buf: String,
    pub(super) file: u32,
    pub(super) done: bool,
}

/// Streams actions rank by rank.
pub struct TraceReader {
    pub(super) files: Vec<String>,
    pub(super) sources: Vec<LineSource>,
    pub(super) shared: bool,
    pub(super) queues: Vec<VecDeque<Located>>,
    pub(super) buffered: usize,
    pub(super) opts: ReaderOptions,
    pub(super) ranks: u32,
    /// Default datatype size per rank (1 = MPI_BYTE; 8 after `init` with an argument).
    pub(super) defaults: Vec<f64>,
    pub(super) bytes_read: u64,
    pub(super) ignored: u64,
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
