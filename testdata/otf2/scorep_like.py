#!/usr/bin/python3
"""Write OTF2 archives as Score-P writes them for MPI programs, together with the
time-independent trace (SimGrid's current form) each is equivalent to.

Score-P is not in Debian, so the tests of `perfcompose simulate --trace X.otf2` read
archives written here with the OTF2 library's own writer (Debian's `python3-otf2`, run by
the system /usr/bin/python3), following Score-P's definitions:

- one location group per rank ("MPI Rank R", a process) under a node of a machine, one
  location per thread ("Master thread" first); the group of type COMM_LOCATIONS of the MPI
  paradigm lists the ranks' master threads in rank order;
- every communicator a Comm definition over a COMM_GROUP group of world ranks
  ("MPI_COMM_WORLD", then those of MPI_Comm_split), MPI_COMM_SELF over the COMM_SELF group;
- regions named after the MPI calls ("MPI_Send", "MPI_Allreduce", ...), paradigm MPI, with
  Score-P's region roles;
- per call: Enter, the communication records (MpiSend, MpiIsend, MpiIrecvRequest, MpiRecv,
  MpiIrecv and MpiIsendComplete at the completion, MpiRequestTest for a test that found
  nothing, MpiCollectiveBegin/End with Score-P's byte counts), Leave.

Usage: scorep_like.py SCENARIO OUT [SPEED]

writes OUT/traces.otf2 (with OUT/traces/ and OUT/traces.def) and, unless the scenario is
malformed, OUT/ti/trace.txt with OUT/ti/trace_R.txt: the same program as SimGrid's
time-independent trace, computation in flops at SPEED flop/s (default 1e9). Scenarios:
p2p, collectives, split (sub-communicators), and the malformed undefined-comm,
undefined-region, rank-out-of-range, no-mpi-ranks.

The time-independent side is the program's natural trace, written as `perfcompose record`
writes it: computation is the time from leaving one call that writes a line to entering
the next one that does (calls that write nothing, like MPI_Comm_rank or a test that found
nothing, count as computation); a collective on a communicator with fewer ranks than the
world is written as point-to-point messages (binomial trees, linear gathers and
scatters, every pair for all-to-all) with the recorder's tags.
"""

import os
import shutil
import sys

import otf2
from otf2.enums import (CollectiveOp, GroupFlag, GroupType, LocationGroupType,
                        LocationType, Paradigm, RegionRole)

RESOLUTION = 1_000_000_000  # ticks per second
CALL_TICKS = 2_000  # time inside each MPI call
UNDEF_ROOT = 0xFFFFFFFF

# The recorder's tags for collectives written as messages.
T_BARRIER, T_BCAST, T_REDUCE, T_GATHER, T_SCATTER, T_ALLTOALL = (
    -7001, -7002, -7003, -7004, -7005, -7006)

ROLES = {
    "MPI_Init": RegionRole.FUNCTION, "MPI_Finalize": RegionRole.FUNCTION,
    "MPI_Comm_rank": RegionRole.FUNCTION, "MPI_Comm_size": RegionRole.FUNCTION,
    "MPI_Comm_split": RegionRole.COLL_ALL2ALL,
    "MPI_Send": RegionRole.POINT2POINT, "MPI_Ssend": RegionRole.POINT2POINT,
    "MPI_Recv": RegionRole.POINT2POINT, "MPI_Isend": RegionRole.POINT2POINT,
    "MPI_Irecv": RegionRole.POINT2POINT, "MPI_Wait": RegionRole.POINT2POINT,
    "MPI_Waitall": RegionRole.POINT2POINT, "MPI_Waitany": RegionRole.POINT2POINT,
    "MPI_Test": RegionRole.POINT2POINT, "MPI_Sendrecv": RegionRole.POINT2POINT,
    "MPI_Barrier": RegionRole.BARRIER, "MPI_Bcast": RegionRole.COLL_ONE2ALL,
    "MPI_Scatter": RegionRole.COLL_ONE2ALL, "MPI_Scatterv": RegionRole.COLL_ONE2ALL,
    "MPI_Reduce": RegionRole.COLL_ALL2ONE, "MPI_Gather": RegionRole.COLL_ALL2ONE,
    "MPI_Gatherv": RegionRole.COLL_ALL2ONE, "MPI_Allreduce": RegionRole.COLL_ALL2ALL,
    "MPI_Alltoall": RegionRole.COLL_ALL2ALL, "MPI_Alltoallv": RegionRole.COLL_ALL2ALL,
    "MPI_Allgather": RegionRole.COLL_ALL2ALL, "MPI_Allgatherv": RegionRole.COLL_ALL2ALL,
    "MPI_Reduce_scatter": RegionRole.COLL_ALL2ALL,
}


class Comm:
    """A communicator: its world ranks in order, and whether event ranks are world ranks
    (OTF2's GLOBAL_MEMBERS flag) or ranks in it."""

    def __init__(self, members, definition, global_members=False):
        self.members = members
        self.definition = definition
        self.global_members = global_members

    def rank_of(self, world):
        """The rank an event record names for world rank `world`."""
        return world if self.global_members else self.members.index(world)

    def n(self):
        return len(self.members)


class Rank:
    """One MPI process: writes its OTF2 events and its time-independent lines."""

    def __init__(self, program, rank, writer):
        self.p = program
        self.rank = rank
        self.w = writer
        self.t = 0
        self.last = None  # leaving the last call that wrote a line
        self.lines = []
        self.requests = {}  # request id -> (kind, peer, tag)

    # -- time-independent side
    def flush_compute(self, at):
        if self.last is not None and at > self.last:
            seconds = (at - self.last) / RESOLUTION
            self.lines.append("compute %d" % round(seconds * self.p.speed))

    def line(self, text):
        self.lines.append(text)

    # -- the program
    def compute(self, ticks):
        self.t += ticks

    def call(self, name, body=None, lines=()):
        """An MPI call: Enter, what `body` writes, Leave. `lines`: what the call writes to
        the time-independent trace, after the computation gap before it (a call that
        writes nothing is part of the computation around it)."""
        region = self.p.region(name)
        enter = self.t
        self.w.enter(self.t, region)
        self.t += CALL_TICKS // 2
        if lines:
            self.flush_compute(enter)
            self.lines.extend(lines)
        if body is not None:
            body()
        self.t += CALL_TICKS // 2
        self.w.leave(self.t, region)
        if lines:
            self.last = self.t

    def init(self, start):
        self.t = start
        region = self.p.region("MPI_Init")
        self.w.enter(self.t, region)
        self.t += 5_000
        self.w.leave(self.t, region)
        self.last = self.t
        self.line("init")

    def finalize(self):
        region = self.p.region("MPI_Finalize")
        self.flush_compute(self.t)
        self.line("finalize")
        self.w.enter(self.t, region)
        self.t += 3_000
        self.w.leave(self.t, region)

    def world(self, comm, r):
        return comm.members[r] if not comm.global_members else r

    # point to point (peers are world ranks; records name them in the communicator)
    def send(self, comm, dst, tag, size, name="MPI_Send"):
        def body():
            self.w.mpi_send(self.t, comm.rank_of(dst), comm.definition, tag, size)
        self.call(name, body, ["send %d %d %d" % (dst, tag, size)])

    def recv(self, comm, src, tag, size):
        def body():
            self.w.mpi_recv(self.t, comm.rank_of(src), comm.definition, tag, size)
        self.call("MPI_Recv", body, ["recv %d %d %d" % (src, tag, size)])

    def isend(self, comm, dst, tag, size, req):
        def body():
            self.w.mpi_isend(self.t, comm.rank_of(dst), comm.definition, tag, size, req)
        self.requests[req] = ("send", dst, tag)
        self.call("MPI_Isend", body, ["isend %d %d %d" % (dst, tag, size)])

    def irecv(self, comm, src, tag, size, req):
        """An MPI_Irecv: its source and tag are known (to OTF2) at its completion."""
        def body():
            self.w.mpi_irecv_request(self.t, req)
        self.requests[req] = ("recv", comm, src, tag, size)
        self.call("MPI_Irecv", body, ["irecv %d %d %d" % (src, tag, size)])

    def complete(self, reqs, name="MPI_Waitall"):
        """A wait completing `reqs` in that order."""
        def body():
            for req in reqs:
                r = self.requests.pop(req)
                if r[0] == "send":
                    self.w.mpi_isend_complete(self.t, req)
                else:
                    _, comm, src, tag, size = r
                    self.w.mpi_irecv(self.t, comm.rank_of(src), comm.definition, tag, size, req)
        lines = []
        for req in reqs:
            r = self.requests[req]
            if r[0] == "send":
                lines.append("wait %d %d %d" % (self.rank, r[1], r[2]))
            else:
                lines.append("wait %d %d %d" % (r[2], self.rank, r[3]))
        self.call(name, body, lines)

    def test_nothing(self, req):
        """An MPI_Test that found `req` not complete: no line, its time is computation."""
        self.call("MPI_Test", lambda: self.w.mpi_request_test(self.t, req))

    def sendrecv(self, comm, dst, stag, ssize, src, rtag, rsize):
        def body():
            self.w.mpi_send(self.t, comm.rank_of(dst), comm.definition, stag, ssize)
            self.w.mpi_recv(self.t, comm.rank_of(src), comm.definition, rtag, rsize)
        self.call("MPI_Sendrecv", body, [
            "isend %d %d %d" % (dst, stag, ssize),
            "irecv %d %d %d" % (src, rtag, rsize),
            "wait %d %d %d" % (self.rank, dst, stag),
            "wait %d %d %d" % (src, self.rank, rtag)])

    def no_line(self, name):
        self.call(name)

    # collectives: the OTF2 side writes Score-P's byte counts; `lines` is the
    # time-independent side.
    def collective(self, name, op, comm, root, sent, received, lines):
        def body():
            self.w.mpi_collective_begin(self.t)
            self.w.mpi_collective_end(self.t, op, comm.definition, root, sent, received)
        self.call(name, body, lines)


class Program:
    def __init__(self, out, ranks, speed, threads_of_rank0=False):
        self.out = out
        self.speed = speed
        archive = os.path.join(out)
        shutil.rmtree(os.path.join(archive, "traces"), ignore_errors=True)
        for f in ("traces.otf2", "traces.def"):
            try:
                os.remove(os.path.join(archive, f))
            except FileNotFoundError:
                pass
        self.trace = otf2.writer.Writer(archive, timer_resolution=RESOLUTION)
        defs = self.trace.definitions
        self.defs = defs
        machine = defs.system_tree_node("Linux", class_name="machine")
        node = defs.system_tree_node("node0", class_name="node", parent=machine)
        self.locations = []
        self.groups = []
        for r in range(ranks):
            g = defs.location_group("MPI Rank %d" % r,
                                    location_group_type=LocationGroupType.PROCESS,
                                    system_tree_parent=node)
            self.groups.append(g)
            self.locations.append(defs.location("Master thread", type=LocationType.CPU_THREAD,
                                                group=g))
        self.extra_thread = None
        if threads_of_rank0:
            self.extra_thread = defs.location("OMP thread 1", type=LocationType.CPU_THREAD,
                                              group=self.groups[0])
        self.comm_locations = defs.group("", group_type=GroupType.COMM_LOCATIONS,
                                         paradigm=Paradigm.MPI, members=self.locations)
        world_group = defs.group("", group_type=GroupType.COMM_GROUP, paradigm=Paradigm.MPI,
                                 members=list(range(ranks)))
        self.self_group = defs.group("", group_type=GroupType.COMM_SELF, paradigm=Paradigm.MPI,
                                     members=[])
        self.world = Comm(list(range(ranks)), defs.comm("MPI_COMM_WORLD", group=world_group))
        self.comm_self = Comm([], defs.comm("MPI_COMM_SELF", group=self.self_group))
        self.regions = {}
        self.ranks = [Rank(self, r, self.trace.event_writer_from_location(self.locations[r]))
                      for r in range(ranks)]

    def region(self, name):
        if name not in self.regions:
            self.regions[name] = self.defs.region(
                name, canonical_name=name, region_role=ROLES.get(name, RegionRole.FUNCTION),
                paradigm=Paradigm.MPI, source_file="MPI")
        return self.regions[name]

    def user_region(self, name):
        key = ("user", name)
        if key not in self.regions:
            self.regions[key] = self.defs.region(name, region_role=RegionRole.FUNCTION,
                                                 paradigm=Paradigm.COMPILER)
        return self.regions[key]

    def split(self, name, members, parent, global_members=False):
        group = self.defs.group("", group_type=GroupType.COMM_GROUP, paradigm=Paradigm.MPI,
                                group_flags=(GroupFlag.GLOBAL_MEMBERS if global_members
                                             else GroupFlag.NONE),
                                members=members)
        return Comm(members, self.defs.comm(name, group=group, parent=parent.definition),
                    global_members)

    def close(self, write_ti=True):
        self.trace.close()
        if not write_ti:
            return
        ti = os.path.join(self.out, "ti")
        os.makedirs(ti, exist_ok=True)
        with open(os.path.join(ti, "trace.txt"), "w") as index:
            for r in self.ranks:
                index.write("trace_%d.txt\n" % r.rank)
                with open(os.path.join(ti, "trace_%d.txt" % r.rank), "w") as f:
                    for l in r.lines:
                        f.write("%d %s\n" % (r.rank, l))


# -- scenarios -------------------------------------------------------------------------

def p2p(out, speed):
    """Four ranks: blocking ring, non-blocking ring completed by MPI_Waitall, a receive
    posted before its source is known, MPI_Sendrecv, MPI_Ssend above the eager limit,
    calls that write nothing, user regions around it all, a thread that is not a rank."""
    p = Program(out, 4, speed, threads_of_rank0=True)
    n = 4
    main = p.user_region("main")
    for me in p.ranks:
        r = me.rank
        w = p.world
        right, left = (r + 1) % n, (r - 1) % n
        me.w.enter(0, main)
        me.init(10_000 + 1_000 * r)
        me.compute(1_000_000 + 100_000 * r)
        me.no_line("MPI_Comm_rank")
        me.no_line("MPI_Comm_size")
        me.compute(50_000)
        # blocking ring: even ranks send first
        if r % 2 == 0:
            me.send(w, right, 1, 1024)
            me.recv(w, left, 1, 1024)
        else:
            me.recv(w, left, 1, 1024)
            me.send(w, right, 1, 1024)
        me.compute(300_000)
        # non-blocking ring of 1 MiB, completed in one MPI_Waitall (receive first)
        me.irecv(w, left, 2, 1 << 20, req=10)
        me.isend(w, right, 2, 1 << 20, req=11)
        me.compute(200_000)
        me.test_nothing(10)
        me.compute(100_000)
        me.complete([10, 11])
        # MPI_Sendrecv both ways along the ring
        me.sendrecv(w, right, 3, 200_000, left, 3, 200_000)
        me.compute(400_000 - 50_000 * r)
        # rank 0 -> rank 3 with MPI_Ssend above the eager limit; rank 3 posts early
        if r == 3:
            me.irecv(w, 0, 4, 100_000, req=20)
            me.compute(250_000)
            me.complete([20], name="MPI_Wait")
        if r == 0:
            me.compute(500_000)
            me.send(w, 3, 4, 100_000, name="MPI_Ssend")
        # isends completed one at a time by MPI_Waitany, in reverse order
        if r in (1, 2):
            peer = 3 - r
            me.isend(w, peer, 5, 4096, req=30)
            me.isend(w, peer, 6, 8192, req=31)
            me.recv(w, peer, 5, 4096)
            me.recv(w, peer, 6, 8192)
            me.complete([31], name="MPI_Waitany")
            me.complete([30], name="MPI_Waitany")
        me.compute(700_000)
        me.finalize()
        me.w.leave(me.t, main)
    # the extra thread of rank 0 computes; it is not an MPI rank
    ew = p.trace.event_writer_from_location(p.extra_thread)
    work = p.user_region("omp_work")
    ew.enter(20_000, work)
    ew.leave(900_000, work)
    p.close()


def world_collectives(me, w, n):
    """Every collective `record` writes as SimGrid's own action, on a communicator holding
    every rank (Score-P's byte counts: the root's share included, as without MPI_IN_PLACE)."""
    r = me.rank
    root_of = lambda world_root: w.rank_of(world_root)
    me.collective("MPI_Barrier", CollectiveOp.BARRIER, w, UNDEF_ROOT, 0, 0, ["barrier"])
    me.compute(100_000)
    b = 4096
    me.collective("MPI_Bcast", CollectiveOp.BCAST, w, root_of(1),
                  n * b if r == 1 else 0, b, ["bcast %d 1" % b])
    me.compute(120_000)
    b = 8000
    me.collective("MPI_Reduce", CollectiveOp.REDUCE, w, root_of(2),
                  b, n * b if r == 2 else 0, ["reduce %d 0 2" % b])
    b = 800
    me.collective("MPI_Allreduce", CollectiveOp.ALLREDUCE, w, UNDEF_ROOT, n * b, n * b,
                  ["allreduce %d 0" % b])
    me.compute(80_000 + 10_000 * r)
    b = 1000
    me.collective("MPI_Alltoall", CollectiveOp.ALLTOALL, w, UNDEF_ROOT, n * b, n * b,
                  ["alltoall %d %d" % (b, b)])
    b = 500
    me.collective("MPI_Allgather", CollectiveOp.ALLGATHER, w, UNDEF_ROOT, n * b, n * b,
                  ["allgather %d %d" % (b, b)])
    b = 300
    me.collective("MPI_Gather", CollectiveOp.GATHER, w, root_of(0),
                  b, n * b if r == 0 else 0, ["gather %d %d 0" % (b, b)])
    me.compute(60_000)
    b = 200
    me.collective("MPI_Scatter", CollectiveOp.SCATTER, w, root_of(3),
                  n * b if r == 3 else 0, b, ["scatter %d %d 3" % (b, b)])


def collectives(out, speed):
    """Four ranks: every collective `record` writes as SimGrid's own action, on
    MPI_COMM_WORLD; one on MPI_COMM_SELF (nothing to replay)."""
    p = Program(out, 4, speed)
    for me in p.ranks:
        me.init(0)
        me.compute(500_000)
        world_collectives(me, p.world, 4)
        me.collective("MPI_Allreduce", CollectiveOp.ALLREDUCE, p.comm_self, UNDEF_ROOT,
                      64, 64, [])
        me.compute(90_000)
        me.finalize()
    p.close()


def split(out, speed):
    """Four ranks split into evens {0, 2} and odds {1, 3} (its records name world ranks:
    OTF2's GLOBAL_MEMBERS flag), and the world reversed {3, 2, 1, 0}: point to point in a
    sub-communicator, every collective `record` covers on the halves (written as messages),
    and rooted collectives on the reversed world (SimGrid's actions, roots translated)."""
    p = Program(out, 4, speed)
    w = p.world
    even = p.split("Comm even", [0, 2], w)
    odd = p.split("Comm odd", [1, 3], w, global_members=True)
    rev = p.split("Comm reversed", [3, 2, 1, 0], w)
    for me in p.ranks:
        r = me.rank
        me.init(0)
        me.compute(200_000 + 30_000 * r)
        me.no_line("MPI_Comm_split")
        mine = even if r % 2 == 0 else odd
        pos = mine.members.index(r)
        other = mine.members[1 - pos]
        # point to point inside the half: member 0 -> member 1
        if pos == 0:
            me.send(mine, other, 5, 100)
        else:
            me.recv(mine, other, 5, 100)
        me.compute(50_000)
        # bcast from member 1 of 512 bytes: member 1 sends, member 0 receives
        b = 512
        root = mine.members[1]
        lines = (["send %d %d %d" % (other, T_BCAST, b)] if pos == 1
                 else ["recv %d %d %d" % (other, T_BCAST, b)])
        me.collective("MPI_Bcast", CollectiveOp.BCAST, mine, mine.rank_of(root),
                      2 * b if pos == 1 else 0, b, lines)
        # allreduce of 64 bytes: reduce to member 0, broadcast from it
        b = 64
        lines = (["recv %d %d %d" % (other, T_REDUCE, b), "send %d %d %d" % (other, T_BCAST, b)]
                 if pos == 0 else
                 ["send %d %d %d" % (other, T_REDUCE, b), "recv %d %d %d" % (other, T_BCAST, b)])
        me.collective("MPI_Allreduce", CollectiveOp.ALLREDUCE, mine, UNDEF_ROOT, 2 * b, 2 * b,
                      lines)
        me.compute(40_000)
        # barrier: zero-byte reduce to member 0 then broadcast
        lines = (["recv %d %d 0" % (other, T_BARRIER), "send %d %d 0" % (other, T_BARRIER)]
                 if pos == 0 else
                 ["send %d %d 0" % (other, T_BARRIER), "recv %d %d 0" % (other, T_BARRIER)])
        me.collective("MPI_Barrier", CollectiveOp.BARRIER, mine, UNDEF_ROOT, 0, 0, lines)
        # gatherv to member 0: member 0 brings 100 bytes, member 1 300
        c = [100, 300]
        if pos == 0:
            lines = ["irecv %d %d %d" % (other, T_GATHER, c[1]),
                     "wait %d %d %d" % (other, r, T_GATHER)]
            sent, received = c[0], sum(c)
        else:
            lines = ["send %d %d %d" % (other, T_GATHER, c[1])]
            sent, received = c[1], 0
        me.collective("MPI_Gatherv", CollectiveOp.GATHERV, mine, mine.rank_of(mine.members[0]),
                      sent, received, lines)
        # scatterv from member 1: 200 bytes to member 0, 50 to itself
        c = [200, 50]
        if pos == 1:
            lines = ["isend %d %d %d" % (other, T_SCATTER, c[0]),
                     "wait %d %d %d" % (r, other, T_SCATTER)]
            sent, received = sum(c), c[1]
        else:
            lines = ["recv %d %d %d" % (other, T_SCATTER, c[0])]
            sent, received = 0, c[0]
        me.collective("MPI_Scatterv", CollectiveOp.SCATTERV, mine,
                      mine.rank_of(mine.members[1]), sent, received, lines)
        me.compute(30_000)
        # allgatherv: member 0 brings 64 bytes, member 1 128; gathered to member 0, then
        # the 192 bytes broadcast
        c = [64, 128]
        if pos == 0:
            lines = ["irecv %d %d %d" % (other, T_GATHER, c[1]),
                     "wait %d %d %d" % (other, r, T_GATHER),
                     "send %d %d %d" % (other, T_BCAST, sum(c))]
        else:
            lines = ["send %d %d %d" % (other, T_GATHER, c[1]),
                     "recv %d %d %d" % (other, T_BCAST, sum(c))]
        me.collective("MPI_Allgatherv", CollectiveOp.ALLGATHERV, mine, UNDEF_ROOT,
                      2 * c[pos], sum(c), lines)
        # alltoallv: member 0 sends 1000 bytes to each, member 1 500 (Score-P counts
        # totals, its own block included)
        per = [1000, 500]
        lines = ["irecv %d %d %d" % (other, T_ALLTOALL, per[1 - pos]),
                 "isend %d %d %d" % (other, T_ALLTOALL, per[pos]),
                 "wait %d %d %d" % (other, r, T_ALLTOALL),
                 "wait %d %d %d" % (r, other, T_ALLTOALL)]
        me.collective("MPI_Alltoallv", CollectiveOp.ALLTOALLV, mine, UNDEF_ROOT,
                      2 * per[pos], per[pos] + per[1 - pos], lines)
        # reduce_scatter: blocks of 80 and 240 bytes; 320 reduced to member 0, scattered
        c = [80, 240]
        if pos == 0:
            lines = ["recv %d %d %d" % (other, T_REDUCE, sum(c)),
                     "isend %d %d %d" % (other, T_SCATTER, c[1]),
                     "wait %d %d %d" % (r, other, T_SCATTER)]
        else:
            lines = ["send %d %d %d" % (other, T_REDUCE, sum(c)),
                     "recv %d %d %d" % (other, T_SCATTER, c[1])]
        me.collective("MPI_Reduce_scatter", CollectiveOp.REDUCE_SCATTER, mine, UNDEF_ROOT,
                      sum(c), 2 * c[pos], lines)
        me.compute(70_000)
        # the reversed world: SimGrid's actions, roots as world ranks
        b = 256
        me.collective("MPI_Bcast", CollectiveOp.BCAST, rev, rev.rank_of(3),
                      4 * b if r == 3 else 0, b, ["bcast %d 3" % b])
        b = 1024
        me.collective("MPI_Reduce", CollectiveOp.REDUCE, rev, rev.rank_of(2),
                      b, 4 * b if r == 2 else 0, ["reduce %d 0 2" % b])
        b = 128
        me.collective("MPI_Gather", CollectiveOp.GATHER, rev, rev.rank_of(1),
                      b, 4 * b if r == 1 else 0, ["gather %d %d 1" % (b, b)])
        me.compute(20_000)
        me.finalize()
    p.close()


class FakeRef:
    """A definition reference that nothing defines."""

    def __init__(self, ref):
        self._ref = ref


def undefined_comm(out, speed):
    """Rank 1 sends on communicator 42, which no definition names."""
    p = Program(out, 2, speed)
    for me in p.ranks:
        me.init(0)
        me.compute(1000)
        if me.rank == 1:
            region = p.region("MPI_Send")
            me.w.enter(me.t, region)
            me.w.mpi_send(me.t + 1, 0, FakeRef(42), 0, 8)
            me.w.leave(me.t + 2, region)
            me.t += 2
        me.finalize()
    p.close(write_ti=False)


def undefined_region(out, speed):
    """Rank 0 enters region 77, which no definition names."""
    p = Program(out, 2, speed)
    for me in p.ranks:
        me.init(0)
        if me.rank == 0:
            me.w.enter(me.t + 10, FakeRef(77))
            me.w.leave(me.t + 20, FakeRef(77))
            me.t += 20
        me.finalize()
    p.close(write_ti=False)


def rank_out_of_range(out, speed):
    """Rank 0 sends to rank 5 of MPI_COMM_WORLD, which has two ranks."""
    p = Program(out, 2, speed)
    for me in p.ranks:
        me.init(0)
        if me.rank == 0:
            region = p.region("MPI_Send")
            me.w.enter(me.t, region)
            me.w.mpi_send(me.t + 1, 5, p.world.definition, 0, 8)
            me.w.leave(me.t + 2, region)
            me.t += 2
        me.finalize()
    p.close(write_ti=False)


def no_mpi_ranks(out, speed):
    """A trace of threads without MPI: no COMM_LOCATIONS group of the MPI paradigm."""
    shutil.rmtree(os.path.join(out, "traces"), ignore_errors=True)
    trace = otf2.writer.Writer(out, timer_resolution=RESOLUTION)
    defs = trace.definitions
    node = defs.system_tree_node("node0", class_name="node")
    g = defs.location_group("Process", system_tree_parent=node)
    loc = defs.location("Master thread", type=LocationType.CPU_THREAD, group=g)
    region = defs.region("main", paradigm=Paradigm.COMPILER)
    ew = trace.event_writer_from_location(loc)
    ew.enter(0, region)
    ew.leave(1000, region)
    trace.close()


SCENARIOS = {
    "p2p": p2p,
    "collectives": collectives,
    "split": split,
    "undefined-comm": undefined_comm,
    "undefined-region": undefined_region,
    "rank-out-of-range": rank_out_of_range,
    "no-mpi-ranks": no_mpi_ranks,
}

if __name__ == "__main__":
    if len(sys.argv) not in (3, 4) or sys.argv[1] not in SCENARIOS:
        sys.exit("usage: scorep_like.py {%s} OUT [SPEED]" % "|".join(SCENARIOS))
    os.makedirs(sys.argv[2], exist_ok=True)
    SCENARIOS[sys.argv[1]](sys.argv[2], float(sys.argv[3]) if len(sys.argv) == 4 else 1e9)
