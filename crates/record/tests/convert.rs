//! Raw logs made by hand (as the library writes them) converted into traces: computation
//! between calls, point to point with the sources of MPI_ANY_SOURCE, collectives on the
//! world and on sub-communicators, the calls not covered, and logs that are wrong.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use perfcompose_record::convert::{
    convert_rank, convert_rank_holding, CANCELLED, UNRESOLVED_ANY_SOURCE,
};
use perfcompose_record::expand::tag;
use perfcompose_record::raw::{pack_text, Coll, Kind, Record, MAGIC};
use perfcompose_record::{RecordDir, SetError};
use perfcompose_sim::trace::{ReaderOptions, TraceSet};

/// A fresh directory of its own for each call (tests run in parallel).
fn scratch(name: &str) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let k = NEXT.fetch_add(1, Ordering::Relaxed);
    let d = std::env::temp_dir().join(format!("pc-record-{}-{k}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn rec(kind: Kind, t0: u64, t1: u64, a: [i64; 6], extra: Vec<i64>) -> Record {
    Record {
        kind,
        t0,
        t1,
        a,
        extra,
    }
}

/// A rank's start record (and its world communicator) at t = 1000 ns.
fn start(rank: i64, size: i64) -> Vec<Record> {
    vec![
        rec(
            Kind::Start,
            1000,
            1000,
            [rank, size, 5_000_000_000, -1, 4242, 2],
            pack_text("vm"),
        ),
        rec(
            Kind::Comm,
            1000,
            1000,
            [0, size, rank, 0, 0, 0],
            (0..size).collect(),
        ),
    ]
}

fn end(t: u64) -> Record {
    rec(Kind::End, t, t, [0; 6], vec![])
}

fn write_log(path: &Path, records: &[Record]) {
    let mut bytes = MAGIC.to_vec();
    for r in records {
        bytes.extend(r.to_bytes());
    }
    std::fs::write(path, bytes).unwrap();
}

/// The trace lines of one log, at 1e9 flop/s (1 flop per ns).
fn lines(records: &[Record]) -> (Vec<String>, perfcompose_record::RankSummary) {
    let d = scratch("lines");
    let p = d.join("1.bin");
    write_log(&p, records);
    let (summary, out) = convert_rank(&p, 1e9, Vec::new()).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.ends_with('\n'), "every line ends with a newline");
    (text.lines().map(str::to_string).collect(), summary)
}

#[test]
fn computation_is_the_time_between_calls_at_the_given_speed() {
    let mut r = start(0, 2);
    // 4000 ns of computation, a 64-byte send to rank 1 (mode: standard), 500 ns more, a
    // receive, then 2500 ns before MPI_Finalize.
    r.push(rec(Kind::Send, 5000, 6000, [0, 1, 7, 64, 0, 0], vec![]));
    r.push(rec(Kind::Recv, 6500, 9000, [1, 8, 32, 0, 0, 0], vec![]));
    r.push(end(11_500));
    let (l, s) = lines(&r);
    assert_eq!(
        l,
        [
            "0 init",
            "0 compute 4000",
            "0 send 1 7 64",
            "0 compute 500",
            "0 recv 1 8 32",
            "0 compute 2500",
            "0 finalize"
        ]
    );
    assert!(s.finished);
    assert!((s.seconds - 10.5e-6).abs() < 1e-15);
    assert!((s.compute_s - 7e-6).abs() < 1e-15);
    assert!((s.recorded_call_s - 3.5e-6).abs() < 1e-15);
    assert_eq!(s.recorded_calls, 2);
    assert_eq!(s.actions, 7);
}

#[test]
fn an_irecv_from_any_source_is_written_with_the_source_its_completion_names() {
    let mut r = start(0, 3);
    // irecv from MPI_ANY_SOURCE with MPI_ANY_TAG (request 1), an isend (request 2), then a
    // waitall completing both: the message came from rank 2 with tag 5, 24 bytes.
    r.push(rec(Kind::Irecv, 2000, 2100, [-1, -1, 800, 1, 0, 0], vec![]));
    r.push(rec(Kind::Isend, 2200, 2300, [0, 1, 9, 16, 2, 0], vec![]));
    r.push(rec(
        Kind::Done,
        3000,
        4000,
        [1, 0, 0, 0, 0, 0],
        vec![1, 2, 5, 24, 2, -1, 0, 0],
    ));
    r.push(end(4000));
    let (l, _) = lines(&r);
    assert_eq!(
        l,
        [
            "0 init",
            "0 compute 1000",
            "0 irecv 2 5 24",
            "0 compute 100",
            "0 isend 1 9 16",
            "0 compute 700",
            "0 wait 2 0 5",
            "0 wait 0 1 9",
            "0 finalize"
        ]
    );
}

#[test]
fn an_any_source_receive_that_never_completes_is_dropped_and_named() {
    let mut r = start(1, 2);
    r.push(rec(Kind::Irecv, 2000, 2000, [-1, 3, 8, 1, 0, 0], vec![]));
    r.push(rec(Kind::Send, 3000, 3000, [0, 0, 1, 8, 0, 0], vec![]));
    r.push(end(3000));
    let (l, s) = lines(&r);
    assert_eq!(
        l,
        [
            "1 init",
            "1 compute 1000",
            "1 compute 1000",
            "1 send 0 1 8",
            "1 finalize"
        ]
    );
    assert_eq!(s.uncovered, [(UNRESOLVED_ANY_SOURCE.to_string(), 1)]);
}

#[test]
fn a_cancelled_receive_is_left_out_and_one_never_completed_is_written_as_posted() {
    let mut r = start(0, 2);
    // Request 1 from any source, cancelled; its wait writes nothing, so its time stays
    // computation. Request 2 from rank 1, tag 4, never completed: written as posted.
    r.push(rec(Kind::Irecv, 2000, 2000, [-1, -1, 8, 1, 0, 0], vec![]));
    r.push(rec(Kind::Irecv, 2500, 2500, [1, 4, 16, 2, 0, 0], vec![]));
    r.push(rec(Kind::Done, 3000, 3500, [0; 6], vec![1, -2, 0, 0]));
    r.push(rec(Kind::Send, 4000, 4000, [0, 1, 1, 8, 0, 0], vec![]));
    r.push(end(4000));
    let (l, s) = lines(&r);
    assert_eq!(
        l,
        [
            "0 init",
            "0 compute 1000",
            "0 compute 500",
            "0 irecv 1 4 16",
            "0 compute 1500",
            "0 send 1 1 8",
            "0 finalize"
        ]
    );
    assert_eq!(s.uncovered, [(CANCELLED.to_string(), 1)]);
}

#[test]
fn lines_held_behind_a_receive_from_a_named_source_are_bounded() {
    // A receive from rank 1 posted first and completed last, 10 sends between: with room
    // for 4 held lines, it is written as posted once the queue passes 4, and its late
    // completion still gives its wait.
    let mut r = start(0, 2);
    r.push(rec(Kind::Irecv, 1000, 1000, [1, 4, 16, 1, 0, 0], vec![]));
    for _ in 0..10 {
        r.push(rec(Kind::Send, 1000, 1000, [0, 1, 1, 8, 0, 0], vec![]));
    }
    r.push(rec(Kind::Done, 1000, 1000, [0; 6], vec![1, 1, 4, 16]));
    r.push(end(1000));
    let d = scratch("bounded");
    let p = d.join("1.bin");
    write_log(&p, &r);
    let (_, out) = convert_rank_holding(&p, 1e9, Vec::new(), 4).unwrap();
    let text = String::from_utf8(out).unwrap();
    let l: Vec<&str> = text.lines().collect();
    assert_eq!(l[1], "0 irecv 1 4 16");
    assert_eq!(l.iter().filter(|x| x.contains(" send ")).count(), 10);
    assert_eq!(l[l.len() - 2], "0 wait 1 0 4");
    assert_eq!(l.len(), 1 + 1 + 10 + 1 + 1);
}

#[test]
fn sendrecv_keeps_its_tags_and_drops_the_halves_to_mpi_proc_null() {
    let mut r = start(1, 3);
    r.push(rec(
        Kind::SendRecv,
        1000,
        1000,
        [2, 30, 8, 0, 31, 8],
        vec![],
    ));
    r.push(rec(
        Kind::SendRecv,
        1000,
        1000,
        [-1, 30, 0, 0, 31, 8],
        vec![],
    ));
    r.push(rec(
        Kind::SendRecv,
        1000,
        1000,
        [2, 30, 8, -1, 0, 0],
        vec![],
    ));
    r.push(end(1000));
    let (l, _) = lines(&r);
    assert_eq!(
        l,
        [
            "1 init",
            "1 isend 2 30 8",
            "1 irecv 0 31 8",
            "1 wait 1 2 30",
            "1 wait 0 1 31",
            "1 recv 0 31 8",
            "1 send 2 30 8",
            "1 finalize"
        ]
    );
}

#[test]
fn collectives_over_every_rank_are_simgrid_actions_with_the_root_in_world_ranks() {
    let mut r = start(1, 3);
    // A communicator holding every rank backwards: its rank 0 is world rank 2.
    r.push(rec(
        Kind::Comm,
        1000,
        1000,
        [1, 3, 1, 0, 0, 0],
        vec![2, 1, 0],
    ));
    let coll = |op: Coll, comm: i64, root: i64, s: i64, rv: i64, e: i64, extra: Vec<i64>| {
        rec(
            Kind::Coll,
            1000,
            1000,
            [op.code(), comm, root, s, rv, e],
            extra,
        )
    };
    r.push(coll(Coll::Bcast, 1, 0, 40, 40, 0, vec![]));
    r.push(coll(Coll::Allreduce, 0, -1, 80, 80, 8, vec![]));
    r.push(coll(Coll::Reduce, 1, 2, 16, 16, 8, vec![]));
    r.push(coll(Coll::Gather, 0, 0, 4, 0, 0, vec![]));
    r.push(coll(Coll::Scatter, 0, 0, 0, 4, 0, vec![]));
    r.push(coll(Coll::Alltoall, 0, -1, 8, 8, 0, vec![]));
    r.push(coll(Coll::Allgather, 0, -1, 4, 4, 0, vec![]));
    r.push(coll(Coll::Barrier, 0, -1, 0, 0, 0, vec![]));
    r.push(end(1000));
    let (l, _) = lines(&r);
    assert_eq!(
        l,
        [
            "1 init",
            "1 bcast 40 2",
            "1 allreduce 10 0 0",
            "1 reduce 2 0 0 0",
            "1 gather 4 4 0",
            "1 scatter 4 4 0",
            "1 alltoall 8 8",
            "1 allgather 4 4",
            "1 barrier",
            "1 finalize"
        ]
    );
}

#[test]
fn collectives_on_a_sub_communicator_and_v_collectives_are_messages_between_world_ranks() {
    // World rank 3 of 4, member 1 of the communicator {1, 3}.
    let mut r = start(3, 4);
    r.push(rec(Kind::Comm, 1000, 1000, [1, 2, 1, 0, 0, 0], vec![1, 3]));
    r.push(rec(
        Kind::Coll,
        1000,
        1000,
        [Coll::Bcast.code(), 1, 0, 100, 100, 0],
        vec![],
    ));
    r.push(rec(
        Kind::Coll,
        1000,
        1000,
        [Coll::Allreduce.code(), 1, -1, 8, 8, 8],
        vec![],
    ));
    // A gatherv over the world to root 0: this rank sends 12 bytes.
    r.push(rec(
        Kind::Coll,
        1000,
        1000,
        [Coll::Gatherv.code(), 0, 0, 12, 0, 0],
        vec![],
    ));
    r.push(end(1000));
    let (l, _) = lines(&r);
    let t = |x: i32| x.to_string();
    assert_eq!(
        l,
        [
            "3 init".to_string(),
            format!("3 recv 1 {} 100", t(tag::BCAST)),
            format!("3 send 1 {} 8", t(tag::REDUCE)),
            format!("3 recv 1 {} 8", t(tag::BCAST)),
            format!("3 send 0 {} 12", t(tag::GATHER)),
            "3 finalize".to_string()
        ]
    );
}

#[test]
fn calls_not_covered_are_counted_by_name() {
    let mut r = start(0, 1);
    let name = "MPI_Scan";
    r.push(rec(
        Kind::Uncovered,
        1000,
        1000,
        [4, name.len() as i64, 0, 0, 0, 0],
        pack_text(name),
    ));
    r.push(end(1000));
    let (_, s) = lines(&r);
    assert_eq!(s.uncovered, [("MPI_Scan".to_string(), 4)]);
}

#[test]
fn a_rank_outside_the_job_is_an_error_at_its_record() {
    let mut r = start(0, 2);
    r.push(rec(Kind::Send, 1000, 1000, [0, 5, 0, 8, 0, 0], vec![]));
    r.push(end(1000));
    let d = scratch("bad-rank");
    let p = d.join("1.bin");
    write_log(&p, &r);
    let e = convert_rank(&p, 1e9, Vec::new()).unwrap_err().to_string();
    // After the magic, the start record (with the host name, one value) and the world's
    // members (two values).
    let offset = 8 + (72 + 8) + (72 + 16);
    assert!(
        e.contains(&format!("(byte {offset})")) && e.contains("world rank 5 of 2"),
        "{e}"
    );
    let mut r = start(0, 2);
    r.push(rec(
        Kind::Coll,
        1000,
        1000,
        [Coll::Barrier.code(), 7, -1, 0, 0, 0],
        vec![],
    ));
    write_log(&p, &r);
    let e = convert_rank(&p, 1e9, Vec::new()).unwrap_err().to_string();
    assert!(e.contains("communicator 7 is used before"), "{e}");
}

/// A recording directory whose raw logs are `logs` (one per process).
fn recording(name: &str, logs: &[Vec<Record>]) -> RecordDir {
    let d = scratch(name);
    let dir = RecordDir::prepare(&d).unwrap();
    for (i, log) in logs.iter().enumerate() {
        write_log(&dir.raw_dir().join(format!("{}.bin", 100 + i)), log);
    }
    dir
}

#[test]
fn a_recording_converts_into_traces_the_simulator_reads() {
    let mut r0 = start(0, 2);
    r0.push(rec(Kind::Send, 2000, 2000, [0, 1, 0, 1000, 0, 0], vec![]));
    r0.push(end(3000));
    let mut r1 = start(1, 2);
    r1.push(rec(Kind::Recv, 2000, 2500, [0, 0, 1000, 0, 0, 0], vec![]));
    r1.push(end(3000));
    // Rank 1's log comes first on disk: ranks follow the start records, not file names.
    let dir = recording("set", &[r1, r0]);
    let c = dir.convert(1e9).unwrap();
    assert_eq!(c.processes.len(), 2);
    assert_eq!(c.processes[0].rank, 0);
    assert_eq!(c.processes[0].host, "vm");
    assert_eq!(
        std::fs::read_to_string(&c.index).unwrap(),
        "trace_0.txt\ntrace_1.txt\n"
    );
    let set = TraceSet::open(&c.index, None).unwrap();
    assert_eq!(set.ranks(), 2);
    let mut rd = set.reader(ReaderOptions::default()).unwrap();
    let mut n = 0;
    while rd.next(1).unwrap().is_some() {
        n += 1;
    }
    assert_eq!(n, 5, "init, compute, recv, compute, finalize");
    // A second recording in the same directory starts clean.
    let again = RecordDir::prepare(dir.root()).unwrap();
    assert!(!again.index().exists());
    assert!(!again.rank_trace(1).exists());
    assert!(std::fs::read_dir(again.raw_dir()).unwrap().next().is_none());
}

#[test]
fn logs_that_are_not_one_finished_job_are_errors() {
    let dir = recording("none", &[]);
    let e = dir.convert(1e9).unwrap_err().to_string();
    assert!(e.contains("no process called MPI_Init"), "{e}");

    let dir = recording("missing", &[[start(0, 3), vec![end(2000)]].concat()]);
    match dir.convert(1e9).unwrap_err() {
        perfcompose_record::Error::Set(SetError::MissingRanks { missing, size }) => {
            assert_eq!((missing, size), (vec![1, 2], 3))
        }
        e => panic!("{e}"),
    }

    let one = [start(0, 1), vec![end(2000)]].concat();
    let dir = recording("twice", &[one.clone(), one]);
    let e = dir.convert(1e9).unwrap_err().to_string();
    assert!(e.contains("more than one MPI job"), "{e}");

    let dir = recording("unfinished", &[start(0, 1)]);
    let e = dir.convert(1e9).unwrap_err().to_string();
    assert!(e.contains("rank 0 did not reach MPI_Finalize"), "{e}");
}

#[test]
fn a_directory_with_a_space_cannot_be_preloaded_from() {
    let d = scratch("with space").join("a b");
    let e = RecordDir::prepare(&d).unwrap_err().to_string();
    assert!(e.contains("LD_PRELOAD cannot carry"), "{e}");
}
