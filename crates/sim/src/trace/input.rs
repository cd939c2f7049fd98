//! Where a trace's text is — a file or bytes in memory — and the stream that reads it.

use std::fmt;
use std::fs::File;
use std::io::{Cursor, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::error::TraceError;

/// Where a trace's text is: a file, or bytes in memory.
#[derive(Clone)]
pub(super) enum Input {
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
pub(super) enum Stream {
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

pub(super) fn open_file(path: &Path, name: &str) -> Result<File, TraceError> {
    File::open(path).map_err(|e| TraceError::whole(name, format!("cannot open trace: {e}")))
}
