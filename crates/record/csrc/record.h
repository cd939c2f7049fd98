/* The recorder shared by the C and the Fortran entry points: the raw log, the request and
 * communicator tables, and the real MPI functions looked up by name.
 *
 * Every MPI function the recorder calls goes through `PC_REAL(PMPI_X)`: a pointer looked up
 * with dlsym(RTLD_NEXT) on first use. The library never links against libmpi, so it loads
 * into processes that have no MPI at all (`mpirun` itself, shell wrappers) and does
 * nothing there; only a process that calls MPI_Init with PERFCOMPOSE_RECORD_DIR set
 * records.
 *
 * The raw log (one file per process, `DIR/PID.bin`) is read by `crates/record/src/raw.rs`,
 * which converts it into SimGrid traces; the record kinds and fields below must match the
 * `Kind` enum there. */
#ifndef PERFCOMPOSE_RECORD_H
#define PERFCOMPOSE_RECORD_H

#include <mpi.h>
#include <stdint.h>

#ifdef OPEN_MPI
/* Open MPI's predefined handles are addresses of objects in libmpi. Weak references leave
 * the library loadable where libmpi is not; they are only followed after MPI_Init. */
#pragma weak ompi_mpi_comm_world
#pragma weak ompi_request_null
#pragma weak ompi_mpi_byte
#endif

#define PC_EXPORT __attribute__((visibility("default")))
#define PC_HIDDEN __attribute__((visibility("hidden")))

/* ---- the raw log ---------------------------------------------------------------------- */

#define PC_MAGIC "PCREC01\n"

/* One record: 72 bytes, then `nextra` 8-byte values. Times are CLOCK_MONOTONIC ns. */
typedef struct {
    uint32_t kind;
    uint32_t nextra;
    uint64_t t0; /* entering the MPI call */
    uint64_t t1; /* leaving it */
    int64_t a[6];
} pc_rec;

enum pc_kind {
    /* a0 world rank, a1 world size, a2 CLOCK_REALTIME ns at t1, a3 thread level provided
     * (-1: MPI_Init), a4 pid; extra: the host name, 8 bytes per value, a5 its length */
    PC_K_START = 1,
    /* t0 = t1 entering MPI_Finalize; a0 CLOCK_REALTIME ns then */
    PC_K_END = 2,
    /* a communicator seen for the first time: a0 id, a1 size, a2 this rank in it;
     * extra: the world rank of each member */
    PC_K_COMM = 3,
    /* a0 mode (enum pc_mode), a1 destination world rank, a2 tag, a3 bytes */
    PC_K_SEND = 4,
    /* a0 source world rank, a1 tag, a2 bytes (all as received) */
    PC_K_RECV = 5,
    /* a0 mode, a1 destination world rank, a2 tag, a3 bytes, a4 request id */
    PC_K_ISEND = 6,
    /* a0 source world rank (-1: any), a1 tag (-1: any), a2 bytes posted, a3 request id */
    PC_K_IRECV = 7,
    /* requests completed by one call: a0 the call (enum pc_done); extra: 4 values per
     * completed request: id, source world rank (receives; -1 for sends; -2 for a request
     * MPI_Cancel cancelled), tag, bytes */
    PC_K_DONE = 8,
    /* a0 destination world rank (-1: MPI_PROC_NULL), a1 send tag, a2 bytes sent,
     * a3 source world rank (-1: MPI_PROC_NULL), a4 tag received, a5 bytes received */
    PC_K_SENDRECV = 9,
    /* a0 the collective (enum pc_coll), a1 communicator id, a2 root (rank in the
     * communicator; -1 none), a3 bytes sent (per peer), a4 bytes received (per peer),
     * a5 size of one element (reductions); extra: per-member byte counts of the
     * v-collectives (alltoallv: send counts then receive counts) */
    PC_K_COLL = 10,
    /* a call the recorder does not cover: a0 count, a1 name length; extra: the name */
    PC_K_UNCOVERED = 11,
};

enum pc_mode { PC_MODE_STANDARD = 0, PC_MODE_SYNCHRONOUS = 1, PC_MODE_BUFFERED = 2, PC_MODE_READY = 3 };

enum pc_done {
    PC_DONE_WAIT = 0,
    PC_DONE_WAITALL = 1,
    PC_DONE_WAITANY = 2,
    PC_DONE_WAITSOME = 3,
    PC_DONE_TEST = 4,
    PC_DONE_TESTALL = 5,
    PC_DONE_TESTANY = 6,
    PC_DONE_TESTSOME = 7,
};

enum pc_coll {
    PC_BARRIER = 0,
    PC_BCAST = 1,
    PC_REDUCE = 2,
    PC_ALLREDUCE = 3,
    PC_ALLTOALL = 4,
    PC_ALLTOALLV = 5,
    PC_ALLGATHER = 6,
    PC_ALLGATHERV = 7,
    PC_GATHER = 8,
    PC_GATHERV = 9,
    PC_SCATTER = 10,
    PC_SCATTERV = 11,
    PC_REDUCE_SCATTER = 12,
};

/* ---- the real MPI functions ------------------------------------------------------------ */

/* Typed pointers to the PMPI functions the recorder calls, each looked up once. */
#define PC_REAL_FUNCTIONS(X)                                                                   \
    X(PMPI_Init) X(PMPI_Init_thread) X(PMPI_Finalize) X(PMPI_Comm_rank) X(PMPI_Comm_size) X(PMPI_Test_cancelled) \
    X(PMPI_Comm_group) X(PMPI_Group_translate_ranks) X(PMPI_Group_free) X(PMPI_Comm_test_inter) \
    X(PMPI_Comm_free) X(PMPI_Comm_disconnect) X(PMPI_Type_size) X(PMPI_Get_count)              \
    X(PMPI_Comm_f2c) X(PMPI_Type_f2c) X(PMPI_Request_f2c) X(PMPI_Status_f2c)                   \
    X(PMPI_Send) X(PMPI_Ssend) X(PMPI_Bsend) X(PMPI_Rsend) X(PMPI_Isend) X(PMPI_Issend)        \
    X(PMPI_Ibsend) X(PMPI_Irsend) X(PMPI_Recv) X(PMPI_Irecv) X(PMPI_Sendrecv)                  \
    X(PMPI_Sendrecv_replace) X(PMPI_Wait) X(PMPI_Waitall) X(PMPI_Waitany) X(PMPI_Waitsome)     \
    X(PMPI_Test) X(PMPI_Testall) X(PMPI_Testany) X(PMPI_Testsome) X(PMPI_Request_free)         \
    X(PMPI_Barrier) X(PMPI_Bcast) X(PMPI_Reduce) X(PMPI_Allreduce) X(PMPI_Alltoall)            \
    X(PMPI_Alltoallv) X(PMPI_Allgather) X(PMPI_Allgatherv) X(PMPI_Gather) X(PMPI_Gatherv)      \
    X(PMPI_Scatter) X(PMPI_Scatterv) X(PMPI_Reduce_scatter)

struct pc_real_table {
#define PC_DECLARE_REAL(name) __typeof__(name) *name;
    PC_REAL_FUNCTIONS(PC_DECLARE_REAL)
#undef PC_DECLARE_REAL
};

PC_HIDDEN extern struct pc_real_table pc_real;
/* dlsym(RTLD_NEXT, name), or the end of the process with a message naming it. */
PC_HIDDEN void *pc_resolve(const char *name);

/* The function in `*slot`, looked up by `name` the first time. */
static inline void *pc_lookup(void **slot, void *(*resolve)(const char *), const char *name) {
    void *f = *slot;
    if (__builtin_expect(f == 0, 0))
        *slot = f = resolve(name);
    return f;
}

#define PC_REAL(name) \
    ((__typeof__(pc_real.name))pc_lookup((void **)&pc_real.name, pc_resolve, #name))

/* ---- the recorder ---------------------------------------------------------------------- */

/* 1 from a successful MPI_Init with PERFCOMPOSE_RECORD_DIR set until MPI_Finalize. */
PC_HIDDEN extern int pc_active;
/* Set while a Fortran wrapper runs its real function, so that a C entry point it might go
 * through is not recorded twice. */
PC_HIDDEN extern int pc_in_fortran;

static inline int pc_on(void) { return pc_active && !pc_in_fortran; }

PC_HIDDEN uint64_t pc_now(void);

/* After a successful real MPI_Init(_thread): start recording if asked to. */
PC_HIDDEN void pc_start(int thread_level);
/* Before the real MPI_Finalize: the end record, the counts, and the file closed. */
PC_HIDDEN void pc_stop(void);

/* A call the recorder does not cover, counted by name. */
PC_HIDDEN void pc_uncovered(int which);

PC_HIDDEN void pc_send(int mode, MPI_Comm comm, int dest, int tag, int count, MPI_Datatype type,
                       uint64_t t0, uint64_t t1);
PC_HIDDEN void pc_recv(MPI_Comm comm, int source, int count, MPI_Datatype type,
                       const MPI_Status *status, uint64_t t0, uint64_t t1);
PC_HIDDEN void pc_isend(int mode, MPI_Comm comm, int dest, int tag, int count, MPI_Datatype type,
                        MPI_Request request, uint64_t t0, uint64_t t1);
PC_HIDDEN void pc_irecv(MPI_Comm comm, int source, int tag, int count, MPI_Datatype type,
                        MPI_Request request, uint64_t t0, uint64_t t1);
PC_HIDDEN void pc_sendrecv(MPI_Comm comm, int dest, int sendtag, int sendcount,
                           MPI_Datatype sendtype, int source, int recvcount, MPI_Datatype recvtype,
                           const MPI_Status *status, uint64_t t0, uint64_t t1);

/* Whether any of `n` requests (their handles before the call) is one the recorder tracks:
 * only then are statuses needed. */
PC_HIDDEN int pc_tracks_any(const MPI_Request *requests, int n);
/* Requests completed by one call: `requests[which[j]]` (the handle before the call) with
 * the status `statuses[j]`, for j < n (`which` NULL: requests 0..n-1). */
PC_HIDDEN void pc_done(int call, const MPI_Request *requests, const MPI_Status *statuses,
                       const int *which, int n, uint64_t t0, uint64_t t1);
/* A request released without completion (MPI_Request_free): no longer tracked. */
PC_HIDDEN void pc_forget_request(MPI_Request request);
/* A communicator about to be freed: forgotten, so that a new one at its address is not
 * taken for it. */
PC_HIDDEN void pc_forget_comm(MPI_Comm comm);

/* A collective's arguments as the caller gave them; which of them count depends on the
 * operation and on whether this rank is the root (MPI ignores the others, and they may be
 * garbage, so they are never looked at). */
struct pc_coll_args {
    int op;
    MPI_Comm comm;
    int root;
    int send_in_place; /* sendbuf was MPI_IN_PLACE */
    int recv_in_place; /* recvbuf was MPI_IN_PLACE (MPI_Scatter at the root) */
    int sendcount;
    MPI_Datatype sendtype;
    const int *sendcounts;
    int recvcount;
    MPI_Datatype recvtype;
    const int *recvcounts;
};
PC_HIDDEN void pc_coll(const struct pc_coll_args *a, uint64_t t0, uint64_t t1);

/* The calls counted as not covered (uncovered.c names them). */
PC_HIDDEN extern const char *const pc_uncovered_names[];
PC_HIDDEN extern const int pc_uncovered_count;

#endif
