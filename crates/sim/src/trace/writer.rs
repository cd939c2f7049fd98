//! Writing traces in SimGrid's current form: one file per rank and an index.

use std::fmt;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use super::action::{datatype_id, Action};

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
    use crate::trace::options::ReaderOptions;
    use crate::trace::set::TraceSet;

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
}
