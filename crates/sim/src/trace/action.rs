//! What a trace line says: the replayable actions, and the sizes of SimGrid's datatype ids
//! that element counts are multiplied by.

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
pub(super) fn datatype_id(size: f64) -> Option<&'static str> {
    match size as u32 {
        1 => Some("6"),
        2 => Some("3"),
        4 => Some("1"),
        8 => Some("0"),
        16 => Some("14"),
        _ => None,
    }
}
