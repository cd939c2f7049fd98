//! The raw log the interposition library writes, one file per MPI process
//! (`csrc/record.h` defines it; the two must agree): an 8-byte magic, then records of a
//! 72-byte head (kind, count of extra values, entry and exit times of the call in
//! `CLOCK_MONOTONIC` nanoseconds, six fields) followed by that many 8-byte values, all in
//! the machine's byte order.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use crate::error::{Error, RawError};

/// The first 8 bytes of a raw log.
pub const MAGIC: &[u8; 8] = b"PCREC01\n";

const HEAD_BYTES: usize = 72;
/// Extra values one record may carry (a communicator of this many members at most).
const MAX_EXTRA: u32 = 1 << 24;

/// What a record is; the values are `enum pc_kind` in `csrc/record.h`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Start,
    End,
    Comm,
    Send,
    Recv,
    Isend,
    Irecv,
    Done,
    SendRecv,
    Coll,
    Uncovered,
}

impl Kind {
    fn from_u32(k: u32) -> Option<Kind> {
        Some(match k {
            1 => Kind::Start,
            2 => Kind::End,
            3 => Kind::Comm,
            4 => Kind::Send,
            5 => Kind::Recv,
            6 => Kind::Isend,
            7 => Kind::Irecv,
            8 => Kind::Done,
            9 => Kind::SendRecv,
            10 => Kind::Coll,
            11 => Kind::Uncovered,
            _ => return None,
        })
    }

    /// The value `csrc/record.h` gives this kind.
    pub fn code(self) -> u32 {
        match self {
            Kind::Start => 1,
            Kind::End => 2,
            Kind::Comm => 3,
            Kind::Send => 4,
            Kind::Recv => 5,
            Kind::Isend => 6,
            Kind::Irecv => 7,
            Kind::Done => 8,
            Kind::SendRecv => 9,
            Kind::Coll => 10,
            Kind::Uncovered => 11,
        }
    }
}

/// The collectives, as `enum pc_coll` in `csrc/record.h` numbers them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Coll {
    Barrier,
    Bcast,
    Reduce,
    Allreduce,
    Alltoall,
    Alltoallv,
    Allgather,
    Allgatherv,
    Gather,
    Gatherv,
    Scatter,
    Scatterv,
    ReduceScatter,
}

impl Coll {
    /// All of them, in the order of their codes.
    pub const ALL: [Coll; 13] = [
        Coll::Barrier,
        Coll::Bcast,
        Coll::Reduce,
        Coll::Allreduce,
        Coll::Alltoall,
        Coll::Alltoallv,
        Coll::Allgather,
        Coll::Allgatherv,
        Coll::Gather,
        Coll::Gatherv,
        Coll::Scatter,
        Coll::Scatterv,
        Coll::ReduceScatter,
    ];

    pub fn from_code(c: i64) -> Option<Coll> {
        usize::try_from(c)
            .ok()
            .and_then(|i| Coll::ALL.get(i).copied())
    }

    pub fn code(self) -> i64 {
        Coll::ALL.iter().position(|&c| c == self).unwrap_or(0) as i64
    }

    /// The MPI name, for messages.
    pub fn mpi_name(self) -> &'static str {
        match self {
            Coll::Barrier => "MPI_Barrier",
            Coll::Bcast => "MPI_Bcast",
            Coll::Reduce => "MPI_Reduce",
            Coll::Allreduce => "MPI_Allreduce",
            Coll::Alltoall => "MPI_Alltoall",
            Coll::Alltoallv => "MPI_Alltoallv",
            Coll::Allgather => "MPI_Allgather",
            Coll::Allgatherv => "MPI_Allgatherv",
            Coll::Gather => "MPI_Gather",
            Coll::Gatherv => "MPI_Gatherv",
            Coll::Scatter => "MPI_Scatter",
            Coll::Scatterv => "MPI_Scatterv",
            Coll::ReduceScatter => "MPI_Reduce_scatter",
        }
    }
}

/// One record of a raw log.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    pub kind: Kind,
    /// Entering and leaving the call (monotonic nanoseconds).
    pub t0: u64,
    pub t1: u64,
    pub a: [i64; 6],
    pub extra: Vec<i64>,
}

impl Record {
    /// The record's bytes as the library writes them (for tests and tools).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(HEAD_BYTES + 8 * self.extra.len());
        b.extend_from_slice(&self.kind.code().to_ne_bytes());
        b.extend_from_slice(&(self.extra.len() as u32).to_ne_bytes());
        b.extend_from_slice(&self.t0.to_ne_bytes());
        b.extend_from_slice(&self.t1.to_ne_bytes());
        for v in self.a.iter().chain(&self.extra) {
            b.extend_from_slice(&v.to_ne_bytes());
        }
        b
    }

    /// The text packed into the extra values (`len` bytes of them).
    pub fn text(&self, len: i64) -> String {
        let bytes: Vec<u8> = self.extra.iter().flat_map(|v| v.to_ne_bytes()).collect();
        let len = usize::try_from(len).unwrap_or(0).min(bytes.len());
        String::from_utf8_lossy(&bytes[..len]).into_owned()
    }
}

/// Pack `s` into extra values as the library does (8 bytes each, zero padded).
pub fn pack_text(s: &str) -> Vec<i64> {
    s.as_bytes()
        .chunks(8)
        .map(|c| {
            let mut b = [0u8; 8];
            b[..c.len()].copy_from_slice(c);
            i64::from_ne_bytes(b)
        })
        .collect()
}

/// Reads the records of one raw log in order.
pub struct RawReader<R> {
    input: R,
    path: PathBuf,
    offset: u64,
}

impl RawReader<BufReader<File>> {
    /// Open a raw log and check its magic.
    pub fn open(path: &Path) -> Result<Self, Error> {
        let file = File::open(path).map_err(|e| Error::Read {
            path: path.to_path_buf(),
            source: e,
        })?;
        RawReader::new(BufReader::with_capacity(1 << 16, file), path)
    }
}

impl<R: Read> RawReader<R> {
    /// Read from `input` (named `path` in errors), checking the magic.
    pub fn new(mut input: R, path: &Path) -> Result<Self, Error> {
        let mut magic = [0u8; 8];
        let got = read_full(&mut input, &mut magic).map_err(|e| Error::Read {
            path: path.to_path_buf(),
            source: e,
        })?;
        if got < 8 || &magic != MAGIC {
            return Err(Error::Raw {
                path: path.to_path_buf(),
                offset: 0,
                kind: RawError::BadMagic,
            });
        }
        Ok(RawReader {
            input,
            path: path.to_path_buf(),
            offset: 8,
        })
    }

    fn fail(&self, kind: RawError) -> Error {
        Error::Raw {
            path: self.path.clone(),
            offset: self.offset,
            kind,
        }
    }

    /// The next record, `None` at the end of the file.
    pub fn next_record(&mut self) -> Result<Option<Record>, Error> {
        let mut head = [0u8; HEAD_BYTES];
        let got = read_full(&mut self.input, &mut head).map_err(|e| Error::Read {
            path: self.path.clone(),
            source: e,
        })?;
        if got == 0 {
            return Ok(None);
        }
        if got < HEAD_BYTES {
            return Err(self.fail(RawError::Truncated));
        }
        let u32_at = |i: usize| u32::from_ne_bytes(head[i..i + 4].try_into().unwrap());
        let u64_at = |i: usize| u64::from_ne_bytes(head[i..i + 8].try_into().unwrap());
        let code = u32_at(0);
        let kind = Kind::from_u32(code).ok_or_else(|| self.fail(RawError::UnknownKind(code)))?;
        let nextra = u32_at(4);
        if nextra > MAX_EXTRA {
            return Err(self.fail(RawError::TooLarge(nextra)));
        }
        let mut a = [0i64; 6];
        for (k, v) in a.iter_mut().enumerate() {
            *v = u64_at(24 + 8 * k) as i64;
        }
        let mut bytes = vec![0u8; nextra as usize * 8];
        let got = read_full(&mut self.input, &mut bytes).map_err(|e| Error::Read {
            path: self.path.clone(),
            source: e,
        })?;
        if got < bytes.len() {
            return Err(self.fail(RawError::Truncated));
        }
        let extra = bytes
            .chunks_exact(8)
            .map(|c| i64::from_ne_bytes(c.try_into().unwrap()))
            .collect();
        self.offset += (HEAD_BYTES + bytes.len()) as u64;
        Ok(Some(Record {
            kind,
            t0: u64_at(8),
            t1: u64_at(16),
            a,
            extra,
        }))
    }

    /// Where the reader is in the file (bytes).
    pub fn offset(&self) -> u64 {
        self.offset
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Read until `buf` is full or the input ends; returns the bytes read.
fn read_full(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_through_bytes() {
        let recs = [
            Record {
                kind: Kind::Start,
                t0: 5,
                t1: 6,
                a: [1, 4, 7, -1, 99, 2],
                extra: pack_text("vm"),
            },
            Record {
                kind: Kind::Coll,
                t0: 10,
                t1: 20,
                a: [Coll::Gatherv.code(), 1, 0, 8, 0, 0],
                extra: vec![8, 16, 24],
            },
        ];
        let mut bytes = MAGIC.to_vec();
        for r in &recs {
            bytes.extend(r.to_bytes());
        }
        let mut rd = RawReader::new(&bytes[..], Path::new("x.bin")).unwrap();
        for r in &recs {
            assert_eq!(&rd.next_record().unwrap().unwrap(), r);
        }
        assert!(rd.next_record().unwrap().is_none());
        assert_eq!(recs[0].text(2), "vm");
    }

    #[test]
    fn a_truncated_or_foreign_file_is_an_error() {
        let e = RawReader::new(&b"hello"[..], Path::new("x.bin"))
            .err()
            .unwrap();
        assert!(e.to_string().contains("not a raw log"), "{e}");
        let mut bytes = MAGIC.to_vec();
        bytes.extend(
            &Record {
                kind: Kind::End,
                t0: 1,
                t1: 1,
                a: [0; 6],
                extra: vec![],
            }
            .to_bytes()[..40],
        );
        let mut rd = RawReader::new(&bytes[..], Path::new("x.bin")).unwrap();
        let e = rd.next_record().unwrap_err();
        assert!(
            e.to_string().contains("ends in the middle of a record"),
            "{e}"
        );
        let mut bytes = MAGIC.to_vec();
        bytes.extend(99u32.to_ne_bytes());
        bytes.extend([0u8; 68]);
        let mut rd = RawReader::new(&bytes[..], Path::new("x.bin")).unwrap();
        let e = rd.next_record().unwrap_err();
        assert!(e.to_string().contains("unknown record kind 99"), "{e}");
    }
}
