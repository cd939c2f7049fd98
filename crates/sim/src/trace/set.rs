//! A trace's files and how ranks map onto them: opened from an index or a trace file (the
//! number of ranks found by a first pass), or from bytes in memory.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Cursor};
use std::path::Path;
use std::sync::Arc;

use super::error::TraceError;
use super::input::{open_file, Input, Stream};
use super::options::ReaderOptions;
use super::parse::parse_rank_token;
use super::reader::{LineSource, TraceReader};

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

    /// One trace text per rank held in memory (rank `r` reads `texts[r]`, named `names[r]`
    /// in errors), read as an index of per-rank files is: lines naming another rank are
    /// skipped. For traces converted in memory from another format.
    pub fn from_rank_bytes(
        names: Vec<String>,
        texts: Vec<Arc<[u8]>>,
    ) -> Result<TraceSet, TraceError> {
        let first = names.first().cloned().unwrap_or_default();
        if names.len() != texts.len() {
            return Err(TraceError::whole(
                &first,
                format!("{} names for {} rank texts", names.len(), texts.len()),
            ));
        }
        if texts.is_empty() {
            return Err(TraceError::whole(&first, "the trace has no rank"));
        }
        let ranks = requested_ranks(&first, u32::try_from(texts.len()).unwrap_or(u32::MAX))?;
        Ok(TraceSet {
            files: names,
            total_bytes: texts.iter().map(|t| t.len() as u64).sum(),
            inputs: texts.into_iter().map(Input::Bytes).collect(),
            shared: false,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::action::Action;

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
    fn per_rank_texts_in_memory_read_like_an_index() {
        let texts: Vec<Arc<[u8]>> = vec![
            Arc::from(&b"0 init\n0 compute 5\n1 compute 9\n"[..]),
            Arc::from(&b"1 init\n1 recv 0 0 8\n"[..]),
        ];
        let set = TraceSet::from_rank_bytes(vec!["a[0]".into(), "a[1]".into()], texts).unwrap();
        assert!(!set.is_shared());
        assert_eq!(set.ranks(), 2);
        let mut r = set.reader(ReaderOptions::default()).unwrap();
        let a = r.next(1).unwrap().unwrap();
        assert_eq!((a.file, a.line, a.action), (1, 1, Action::Init));
        assert_eq!(r.next(0).unwrap().unwrap().action, Action::Init);
        assert_eq!(
            r.next(0).unwrap().unwrap().action,
            Action::Compute { flops: 5.0 }
        );
        // The line of rank 1 in rank 0's text is skipped, as in a per-rank file.
        assert_eq!(r.next(0).unwrap(), None);
        assert_eq!(r.ignored_lines(), 1);
        assert_eq!(r.files()[1], "a[1]");
        let e = TraceSet::from_rank_bytes(vec!["x".into()], Vec::new()).unwrap_err();
        assert!(e.message.contains("names"), "{}", e.message);
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
}
