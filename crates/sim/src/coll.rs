//! Collective operations decomposed into point-to-point messages.
//!
//! Each algorithm turns one collective call into the straight-line program of one rank:
//! blocking sends and receives, non-blocking ones collected by a `WaitAll`, and the
//! computation a reduction performs. The programs follow SimGrid 3.32's SMPI implementations
//! message for message (same partners, order, sizes, tags and blocking behaviour), because
//! the point is to predict what `smpirun -replay` predicts; algorithms are named as SimGrid
//! names them (`--cfg=smpi/bcast:binomial_tree` ↔ `--coll bcast=binomial_tree`).
//!
//! `default` is what SimGrid's default selector runs: `bcast` binomial tree, `barrier`
//! Open MPI's basic linear, `reduce`/`gather`/`scatter`/`allgather` the non-blocking linear
//! exchange (all requests posted at once, then waited), `allreduce` reduce-to-0 then
//! binomial broadcast, `alltoall` Open MPI's size-based decision (basic linear, pairwise or
//! Bruck).

use std::fmt;

/// Tags SMPI uses for collectives (`src/smpi/include/private.hpp`).
pub mod tag {
    pub const REDUCE: i32 = -112;
    pub const SCATTER: i32 = -223;
    pub const GATHER: i32 = -445;
    pub const ALLGATHER: i32 = -556;
    pub const BARRIER: i32 = -778;
    pub const ALLTOALL: i32 = -1112;
    pub const BCAST: i32 = -3334;
    pub const ALLREDUCE: i32 = -4445;
}

/// One step of a rank's program.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Op {
    /// `MPI_Send`: returns at once below the detached threshold, else when delivered.
    Send { peer: u32, tag: i32, bytes: f64 },
    /// `MPI_Recv`: returns when the message has arrived.
    Recv { peer: u32, tag: i32 },
    /// `MPI_Isend` into the collective's request list.
    Isend { peer: u32, tag: i32, bytes: f64 },
    /// `MPI_Irecv` into the collective's request list.
    Irecv { peer: u32, tag: i32 },
    /// Wait for every request of the list, then empty it.
    WaitAll,
    /// Execute flops on the rank's host.
    Compute { flops: f64 },
}

/// A collective call as the algorithms see it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Call {
    Barrier,
    Bcast {
        bytes: f64,
        root: u32,
    },
    /// `count` elements of `dt` bytes.
    Reduce {
        count: f64,
        dt: f64,
        root: u32,
    },
    AllReduce {
        count: f64,
        dt: f64,
    },
    AllToAll {
        send_bytes: f64,
    },
    Gather {
        send_bytes: f64,
        root: u32,
    },
    AllGather {
        send_bytes: f64,
    },
    Scatter {
        send_bytes: f64,
        root: u32,
    },
}

macro_rules! algos {
    ($(#[$m:meta])* $name:ident { $($v:ident => $s:literal),* $(,)? }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
        pub enum $name {
            #[default]
            $($v),*
        }
        impl $name {
            pub const NAMES: &'static [&'static str] = &[$($s),*];
            pub fn from_name(s: &str) -> Option<Self> {
                match s { $($s => Some($name::$v),)* _ => None }
            }
            pub fn name(self) -> &'static str {
                match self { $($name::$v => $s),* }
            }
        }
    };
}

algos!(
    /// Broadcast algorithms.
    Bcast { Default => "default", BinomialTree => "binomial_tree", FlatTree => "flattree" }
);
algos!(
    /// Barrier algorithms.
    Barrier { Default => "default", OmpiBasicLinear => "ompi_basic_linear", OmpiRecursiveDoubling => "ompi_recursivedoubling" }
);
algos!(
    /// Reduce algorithms.
    Reduce { Default => "default", Binomial => "binomial", FlatTree => "flat_tree" }
);
algos!(
    /// Allreduce algorithms.
    AllReduce { Default => "default", Rdb => "rdb", Lr => "lr", Redbcast => "redbcast" }
);
algos!(
    /// Alltoall algorithms.
    AllToAll { Default => "default", Ompi => "ompi", BasicLinear => "basic_linear", Pair => "pair", Bruck => "bruck", Ring => "ring" }
);
algos!(
    /// Gather algorithms.
    Gather { Default => "default" }
);
algos!(
    /// Allgather algorithms.
    AllGather { Default => "default", Ring => "ring" }
);
algos!(
    /// Scatter algorithms.
    Scatter { Default => "default" }
);

/// Which algorithm runs each collective (SimGrid's `smpi/<op>` options).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Selection {
    pub bcast: Bcast,
    pub barrier: Barrier,
    pub reduce: Reduce,
    pub allreduce: AllReduce,
    pub alltoall: AllToAll,
    pub gather: Gather,
    pub allgather: AllGather,
    pub scatter: Scatter,
}

/// A bad `--coll` choice.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SelectionError(pub String);

impl fmt::Display for SelectionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SelectionError {}

impl Selection {
    /// The collectives and their algorithm names, for help texts.
    pub fn catalogue() -> Vec<(&'static str, &'static [&'static str])> {
        vec![
            ("bcast", Bcast::NAMES),
            ("barrier", Barrier::NAMES),
            ("reduce", Reduce::NAMES),
            ("allreduce", AllReduce::NAMES),
            ("alltoall", AllToAll::NAMES),
            ("gather", Gather::NAMES),
            ("allgather", AllGather::NAMES),
            ("scatter", Scatter::NAMES),
        ]
    }

    /// Apply `op=algo` (SimGrid's names).
    pub fn set(&mut self, spec: &str) -> Result<(), SelectionError> {
        let (op, algo) = spec.split_once('=').ok_or_else(|| {
            SelectionError(format!(
                "'{spec}' is not OP=ALGO (e.g. bcast=binomial_tree)"
            ))
        })?;
        let (op, algo) = (op.trim(), algo.trim());
        let unknown = |names: &[&str]| {
            SelectionError(format!(
                "unknown {op} algorithm '{algo}'; implemented: {}",
                names.join(", ")
            ))
        };
        match op {
            "bcast" => self.bcast = Bcast::from_name(algo).ok_or_else(|| unknown(Bcast::NAMES))?,
            "barrier" => self.barrier = Barrier::from_name(algo).ok_or_else(|| unknown(Barrier::NAMES))?,
            "reduce" => self.reduce = Reduce::from_name(algo).ok_or_else(|| unknown(Reduce::NAMES))?,
            "allreduce" => {
                self.allreduce = AllReduce::from_name(algo).ok_or_else(|| unknown(AllReduce::NAMES))?
            }
            "alltoall" => {
                self.alltoall = AllToAll::from_name(algo).ok_or_else(|| unknown(AllToAll::NAMES))?
            }
            "gather" => self.gather = Gather::from_name(algo).ok_or_else(|| unknown(Gather::NAMES))?,
            "allgather" => {
                self.allgather = AllGather::from_name(algo).ok_or_else(|| unknown(AllGather::NAMES))?
            }
            "scatter" => self.scatter = Scatter::from_name(algo).ok_or_else(|| unknown(Scatter::NAMES))?,
            _ => {
                return Err(SelectionError(format!(
                    "unknown collective '{op}'; known: bcast, barrier, reduce, allreduce, alltoall, gather, allgather, scatter"
                )))
            }
        }
        Ok(())
    }

    /// SimGrid `--cfg` options selecting the same algorithms (for side-by-side runs).
    pub fn simgrid_cfg(&self) -> Vec<String> {
        let mut v = Vec::new();
        let mut push = |op: &str, name: &str| {
            if name != "default" {
                v.push(format!("--cfg=smpi/{op}:{name}"));
            }
        };
        push("bcast", self.bcast.name());
        push("barrier", self.barrier.name());
        push("reduce", self.reduce.name());
        push("allreduce", self.allreduce.name());
        push("alltoall", self.alltoall.name());
        push("gather", self.gather.name());
        push("allgather", self.allgather.name());
        push("scatter", self.scatter.name());
        v
    }
}

/// Builds rank programs.
struct Gen<'a> {
    me: u32,
    n: u32,
    sel: &'a Selection,
    out: &'a mut Vec<Op>,
}

/// Append rank `me`'s program for `call` among `n` ranks to `out`.
pub fn expand(
    call: Call,
    me: u32,
    n: u32,
    sel: &Selection,
    out: &mut Vec<Op>,
) -> Result<(), String> {
    let mut g = Gen { me, n, sel, out };
    g.call(call)
}

impl Gen<'_> {
    fn call(&mut self, c: Call) -> Result<(), String> {
        match c {
            Call::Barrier => match self.sel.barrier {
                Barrier::Default | Barrier::OmpiBasicLinear => self.barrier_linear(),
                Barrier::OmpiRecursiveDoubling => self.barrier_rd(),
            },
            Call::Bcast { bytes, root } => match self.sel.bcast {
                Bcast::Default | Bcast::BinomialTree => self.bcast_binomial(bytes, root),
                Bcast::FlatTree => self.bcast_flat(bytes, root),
            },
            Call::Reduce { count, dt, root } => match self.sel.reduce {
                Reduce::Default => self.reduce_nbc(count * dt, root),
                Reduce::Binomial => self.reduce_binomial(count, dt, root),
                Reduce::FlatTree => self.reduce_flat(count * dt, root),
            },
            Call::AllReduce { count, dt } => self.allreduce(self.sel.allreduce, count, dt)?,
            Call::AllToAll { send_bytes } => self.alltoall(self.sel.alltoall, send_bytes)?,
            Call::Gather { send_bytes, root } => self.gather_nbc(send_bytes, root),
            Call::AllGather { send_bytes } => match self.sel.allgather {
                AllGather::Default => self.allgather_nbc(send_bytes),
                AllGather::Ring => self.allgather_ring(send_bytes),
            },
            Call::Scatter { send_bytes, root } => self.scatter_nbc(send_bytes, root),
        }
        Ok(())
    }

    fn send(&mut self, peer: u32, tag: i32, bytes: f64) {
        self.out.push(Op::Send { peer, tag, bytes });
    }
    fn recv(&mut self, peer: u32, tag: i32) {
        self.out.push(Op::Recv { peer, tag });
    }
    fn isend(&mut self, peer: u32, tag: i32, bytes: f64) {
        self.out.push(Op::Isend { peer, tag, bytes });
    }
    fn irecv(&mut self, peer: u32, tag: i32) {
        self.out.push(Op::Irecv { peer, tag });
    }
    fn waitall(&mut self) {
        self.out.push(Op::WaitAll);
    }

    /// `Request::sendrecv`: both posted, then both waited; a self exchange is a local copy.
    fn sendrecv(&mut self, dst: u32, stag: i32, bytes: f64, src: u32, rtag: i32) {
        if dst == self.me && src == self.me {
            return;
        }
        self.isend(dst, stag, bytes);
        self.irecv(src, rtag);
        self.waitall();
    }

    fn barrier_linear(&mut self) {
        let t = tag::BARRIER;
        if self.me > 0 {
            self.send(0, t, 0.0);
            self.recv(0, t);
        } else {
            for i in 1..self.n {
                self.irecv(i, t);
            }
            self.waitall();
            for i in 1..self.n {
                self.isend(i, t, 0.0);
            }
            self.waitall();
        }
    }

    fn barrier_rd(&mut self) {
        let t = tag::BARRIER;
        let (me, n) = (self.me, self.n);
        let mut adj = 1u32;
        while adj <= n {
            adj <<= 1;
        }
        adj >>= 1;
        if adj != n {
            if me >= adj {
                self.sendrecv(me - adj, t, 0.0, me - adj, t);
            } else if me < n - adj {
                self.recv(me + adj, t);
            }
        }
        if me < adj {
            let mut mask = 1u32;
            while mask < adj {
                let remote = me ^ mask;
                mask <<= 1;
                if remote >= adj {
                    continue;
                }
                self.sendrecv(remote, t, 0.0, remote, t);
            }
        }
        if adj != n && me < n - adj {
            self.send(me + adj, t, 0.0);
        }
    }

    fn bcast_binomial(&mut self, bytes: f64, root: u32) {
        let t = tag::BCAST;
        let (me, n) = (self.me as i64, self.n as i64);
        let rel = if me >= root as i64 {
            me - root as i64
        } else {
            me - root as i64 + n
        };
        let mut mask = 1i64;
        while mask < n {
            if rel & mask != 0 {
                let mut src = me - mask;
                if src < 0 {
                    src += n;
                }
                self.recv(src as u32, t);
                break;
            }
            mask <<= 1;
        }
        mask >>= 1;
        while mask > 0 {
            if rel + mask < n {
                let mut dst = me + mask;
                if dst >= n {
                    dst -= n;
                }
                self.send(dst as u32, t, bytes);
            }
            mask >>= 1;
        }
    }

    fn bcast_flat(&mut self, bytes: f64, root: u32) {
        let t = tag::BCAST;
        if self.me != root {
            self.recv(root, t);
        } else {
            for i in 0..self.n {
                if i != self.me {
                    self.isend(i, t, bytes);
                }
            }
            self.waitall();
        }
    }

    /// SimGrid's default reduce: `ireduce` (everyone sends to the root, which posts all
    /// receives), then wait.
    fn reduce_nbc(&mut self, bytes: f64, root: u32) {
        let t = tag::REDUCE;
        if self.me != root {
            self.isend(root, t, bytes);
        } else {
            for src in 0..self.n {
                if src != root {
                    self.irecv(src, t);
                }
            }
        }
        self.waitall();
    }

    fn reduce_binomial(&mut self, count: f64, dt: f64, root: u32) {
        if count == 0.0 {
            return;
        }
        let t = tag::REDUCE;
        let bytes = count * dt;
        let n = self.n;
        let rel = (self.me + n - root) % n;
        let mut mask = 1u32;
        while mask < n {
            if mask & rel == 0 {
                let source = rel | mask;
                if source < n {
                    self.recv((source + root) % n, t);
                }
            } else {
                let dst = ((rel & !mask) + root) % n;
                self.send(dst, t, bytes);
                break;
            }
            mask <<= 1;
        }
    }

    fn reduce_flat(&mut self, bytes: f64, root: u32) {
        let t = tag::REDUCE;
        let n = self.n;
        if self.me != root {
            self.send(root, t, bytes);
            return;
        }
        if self.me != n - 1 {
            self.recv(n - 1, t);
        }
        for i in (0..n.saturating_sub(1)).rev() {
            if i != self.me {
                self.recv(i, t);
            }
        }
    }

    fn allreduce(&mut self, alg: AllReduce, count: f64, dt: f64) -> Result<(), String> {
        match alg {
            // allreduce__default calls reduce__default and bcast__default directly,
            // whatever reduce and bcast algorithms are selected.
            AllReduce::Default => {
                self.reduce_nbc(count * dt, 0);
                self.bcast_binomial(count * dt, 0);
            }
            AllReduce::Redbcast => {
                self.call(Call::Reduce { count, dt, root: 0 })?;
                self.call(Call::Bcast {
                    bytes: count * dt,
                    root: 0,
                })?;
            }
            AllReduce::Rdb => self.allreduce_rdb(count * dt),
            AllReduce::Lr => self.allreduce_lr(count, dt)?,
        }
        Ok(())
    }

    fn allreduce_rdb(&mut self, bytes: f64) {
        let t = tag::ALLREDUCE;
        let (me, n) = (self.me, self.n);
        let mut pof2 = 1u32;
        while pof2 <= n {
            pof2 <<= 1;
        }
        pof2 >>= 1;
        let rem = n - pof2;
        let newrank: i64 = if me < 2 * rem {
            if me % 2 == 0 {
                self.send(me + 1, t, bytes);
                -1
            } else {
                self.recv(me - 1, t);
                (me / 2) as i64
            }
        } else {
            (me - rem) as i64
        };
        if newrank != -1 {
            let nr = newrank as u32;
            let mut mask = 1u32;
            while mask < pof2 {
                let newdst = nr ^ mask;
                let dst = if newdst < rem {
                    newdst * 2 + 1
                } else {
                    newdst + rem
                };
                self.sendrecv(dst, t, bytes, dst, t);
                // (dst > me: a local copy through a self sendrecv, which costs nothing)
                mask <<= 1;
            }
        }
        if me < 2 * rem {
            if me % 2 == 1 {
                self.send(me - 1, t, bytes);
            } else {
                self.recv(me + 1, t);
            }
        }
    }

    fn allreduce_lr(&mut self, count: f64, dt: f64) -> Result<(), String> {
        let n = self.n;
        let rcount = count.trunc() as i64;
        if rcount < n as i64 {
            // SimGrid: "communication size smaller than number of process, use default"
            // which is allreduce__redbcast (the selected reduce and bcast).
            return self.allreduce(AllReduce::Redbcast, count, dt);
        }
        let remainder = rcount % n as i64;
        let per = (rcount / n as i64) as f64;
        let bytes = per * dt;
        let me = self.me;
        for i in 0..n - 1 {
            let t = tag::ALLREDUCE + i as i32;
            self.sendrecv((me + 1) % n, t, bytes, (me + n - 1) % n, t);
        }
        for i in 0..n - 1 {
            let t = tag::ALLREDUCE + i as i32;
            self.sendrecv((me + 1) % n, t, bytes, (me + n - 1) % n, t);
        }
        if remainder > 0 {
            // colls::allreduce on the remainder: the selected algorithm again (lr), which
            // falls back to redbcast since remainder < n.
            self.allreduce(self.sel.allreduce, remainder as f64, dt)?;
        }
        Ok(())
    }

    fn alltoall(&mut self, alg: AllToAll, bytes: f64) -> Result<(), String> {
        match alg {
            AllToAll::Default | AllToAll::Ompi => {
                let chosen = ompi_alltoall_decision(self.n, bytes);
                self.alltoall(chosen, bytes)?
            }
            AllToAll::BasicLinear => self.alltoall_linear(bytes),
            AllToAll::Pair => {
                if !self.n.is_power_of_two() {
                    return Err(format!(
                        "alltoall pair needs a power-of-two number of ranks, not {} (SimGrid refuses it too)",
                        self.n
                    ));
                }
                for i in 0..self.n {
                    let p = self.me ^ i;
                    self.sendrecv(p, tag::ALLTOALL, bytes, p, tag::ALLTOALL);
                }
            }
            AllToAll::Ring => {
                let (me, n) = (self.me, self.n);
                for i in 0..n {
                    let src = (me + n - i) % n;
                    let dst = (me + i) % n;
                    self.sendrecv(dst, tag::ALLTOALL, bytes, src, tag::ALLTOALL);
                }
            }
            AllToAll::Bruck => {
                let (me, n) = (self.me, self.n);
                let mut pof2 = 1u32;
                while pof2 < n {
                    let dst = (me + pof2) % n;
                    let src = (me + n - pof2) % n;
                    let blocks = (1..n).filter(|b| b & pof2 != 0).count() as f64;
                    self.sendrecv(dst, tag::ALLTOALL, blocks * bytes, src, tag::ALLTOALL);
                    pof2 *= 2;
                }
            }
        }
        Ok(())
    }

    fn alltoall_linear(&mut self, bytes: f64) {
        let (me, n) = (self.me, self.n);
        if n <= 1 {
            return;
        }
        let t = tag::ALLTOALL;
        let mut i = (me + 1) % n;
        while i != me {
            self.irecv(i, t);
            i = (i + 1) % n;
        }
        let mut i = (me + n - 1) % n;
        while i != me {
            self.isend(i, t, bytes);
            i = (i + n - 1) % n;
        }
        self.waitall();
    }

    fn gather_nbc(&mut self, bytes: f64, root: u32) {
        let t = tag::GATHER;
        if self.me != root {
            self.isend(root, t, bytes);
        } else {
            for src in 0..self.n {
                if src != root {
                    self.irecv(src, t);
                }
            }
        }
        self.waitall();
    }

    fn allgather_nbc(&mut self, bytes: f64) {
        let t = tag::ALLGATHER;
        for other in 0..self.n {
            if other != self.me {
                self.isend(other, t, bytes);
                self.irecv(other, t);
            }
        }
        self.waitall();
    }

    fn allgather_ring(&mut self, bytes: f64) {
        let (me, n) = (self.me, self.n);
        for i in 1..n {
            let src = (me + n - i) % n;
            let dst = (me + i) % n;
            self.sendrecv(dst, tag::ALLGATHER, bytes, src, tag::ALLGATHER);
        }
    }

    fn scatter_nbc(&mut self, bytes: f64, root: u32) {
        let t = tag::SCATTER;
        if self.me != root {
            self.irecv(root, t);
        } else {
            for dst in 0..self.n {
                if dst != root {
                    self.isend(dst, t, bytes);
                }
            }
        }
        self.waitall();
    }
}

/// Open MPI's fixed decision for alltoall as SimGrid 3.32 encodes it (`alltoall__ompi`):
/// 1 linear, 2 pairwise, 3 modified Bruck, 4 linear_sync and 5 two_proc both run as basic
/// linear in SimGrid.
pub fn ompi_alltoall_decision(n: u32, total_dsize: f64) -> AllToAll {
    let s = total_dsize;
    let alg = if n == 2 {
        if s < 2.0 {
            2
        } else if s < 4.0 {
            5
        } else if s < 16.0 {
            2
        } else if s < 64.0 {
            5
        } else if s < 256.0 {
            2
        } else if s < 4096.0 {
            5
        } else if s < 32768.0 {
            2
        } else if s < 262144.0 {
            4
        } else if s < 1048576.0 {
            5
        } else {
            2
        }
    } else if n < 8 {
        if s < 8192.0 {
            4
        } else if s < 16384.0 {
            1
        } else if s < 65536.0 {
            4
        } else if s < 524288.0 {
            1
        } else if s < 1048576.0 {
            2
        } else {
            1
        }
    } else if n < 16 {
        if s < 262144.0 {
            4
        } else {
            1
        }
    } else if n < 32 {
        if s < 4.0 {
            4
        } else if s < 512.0 {
            3
        } else if s < 8192.0 {
            4
        } else if s < 32768.0 {
            1
        } else if s < 262144.0 {
            4
        } else if s < 524288.0 {
            1
        } else {
            4
        }
    } else if n < 64 {
        if s < 512.0 {
            3
        } else if s < 524288.0 {
            1
        } else {
            4
        }
    } else if n < 128 {
        if s < 1024.0 {
            3
        } else if s < 2048.0 {
            1
        } else if s < 4096.0 {
            4
        } else if s < 262144.0 {
            1
        } else {
            2
        }
    } else if n < 256 {
        if s < 1024.0 {
            3
        } else if s < 2048.0 {
            4
        } else if s < 262144.0 {
            1
        } else {
            2
        }
    } else if n < 512 {
        if s < 1024.0 {
            3
        } else if s < 8192.0 {
            4
        } else if s < 32768.0 {
            1
        } else {
            2
        }
    } else if n < 1024 {
        if s < 512.0 {
            3
        } else if s < 8192.0 {
            4
        } else if s < 16384.0 {
            1
        } else if s < 131072.0 {
            4
        } else if s < 262144.0 {
            1
        } else {
            2
        }
    } else if n < 2048 {
        if s < 512.0 {
            3
        } else if s < 1024.0 {
            4
        } else if s < 2048.0 {
            1
        } else if s < 16384.0 {
            4
        } else if s < 262144.0 {
            1
        } else {
            4
        }
    } else if n < 4096 {
        if s < 1024.0 {
            3
        } else if s < 4096.0 {
            4
        } else if s < 8192.0 {
            1
        } else if s < 131072.0 {
            4
        } else {
            1
        }
    } else if s < 2048.0 {
        3
    } else if s < 8192.0 {
        4
    } else if s < 16384.0 {
        1
    } else if s < 32768.0 {
        4
    } else if s < 65536.0 {
        1
    } else {
        4
    };
    match alg {
        2 => AllToAll::Pair,
        3 => AllToAll::Bruck,
        _ => AllToAll::BasicLinear,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every message sent is received by its peer with the same tag, in each algorithm.
    fn balanced(call: Call, n: u32, sel: &Selection) {
        let mut sent = std::collections::HashMap::new();
        for me in 0..n {
            let mut ops = Vec::new();
            expand(call, me, n, sel, &mut ops).unwrap();
            for op in ops {
                match op {
                    Op::Send { peer, tag, .. } | Op::Isend { peer, tag, .. } => {
                        *sent.entry((me, peer, tag)).or_insert(0i64) += 1
                    }
                    Op::Recv { peer, tag } | Op::Irecv { peer, tag } => {
                        *sent.entry((peer, me, tag)).or_insert(0i64) -= 1
                    }
                    _ => {}
                }
            }
        }
        assert!(
            sent.values().all(|&v| v == 0),
            "{call:?} n={n} {sel:?}: {sent:?}"
        );
    }

    #[test]
    fn all_algorithms_balance_messages() {
        for n in [1u32, 2, 3, 5, 8, 13, 16] {
            for (op, names) in Selection::catalogue() {
                for name in names.iter() {
                    let mut sel = Selection::default();
                    sel.set(&format!("{op}={name}")).unwrap();
                    let call = match op {
                        "bcast" => Call::Bcast {
                            bytes: 100.0,
                            root: n / 2,
                        },
                        "barrier" => Call::Barrier,
                        "reduce" => Call::Reduce {
                            count: 100.0,
                            dt: 8.0,
                            root: n - 1,
                        },
                        "allreduce" => Call::AllReduce {
                            count: 100.0 + n as f64 / 2.0,
                            dt: 8.0,
                        },
                        "alltoall" => Call::AllToAll { send_bytes: 1000.0 },
                        "gather" => Call::Gather {
                            send_bytes: 10.0,
                            root: 0,
                        },
                        "allgather" => Call::AllGather { send_bytes: 10.0 },
                        _ => Call::Scatter {
                            send_bytes: 10.0,
                            root: n - 1,
                        },
                    };
                    if *name == "pair" && !n.is_power_of_two() {
                        let mut ops = Vec::new();
                        assert!(expand(call, 0, n, &sel, &mut ops).is_err());
                        continue;
                    }
                    balanced(call, n, &sel);
                }
            }
        }
    }

    #[test]
    fn binomial_bcast_shape() {
        // root 0 among 8 sends to 4, 2, 1 in that order
        let mut ops = Vec::new();
        expand(
            Call::Bcast {
                bytes: 1.0,
                root: 0,
            },
            0,
            8,
            &Selection::default(),
            &mut ops,
        )
        .unwrap();
        let peers: Vec<u32> = ops
            .iter()
            .map(|o| match o {
                Op::Send { peer, .. } => *peer,
                _ => 99,
            })
            .collect();
        assert_eq!(peers, [4, 2, 1]);
    }

    #[test]
    fn selection_errors_list_names() {
        let mut s = Selection::default();
        let e = s.set("bcast=nope").unwrap_err();
        assert!(e.0.contains("binomial_tree"));
        assert!(s.set("frob=x").is_err());
        assert!(s.set("bcast").is_err());
        s.set("allreduce=rdb").unwrap();
        assert_eq!(
            s.simgrid_cfg(),
            vec!["--cfg=smpi/allreduce:rdb".to_string()]
        );
    }
}
