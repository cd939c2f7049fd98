/* Calls the recorder does not write into the trace, intercepted only to be counted by name
 * (C and Fortran entry points), so that `record` can say what the trace leaves out. The
 * time spent in them falls between two recorded calls and is written as computation.
 *
 * Each entry: the C name without `MPI_`, its parameters and arguments as mpi.h declares
 * them (the compiler checks the prototype), the Fortran name in lower and upper case, and
 * the number of Fortran arguments (all by reference, `ierror` last). */
#include "fortran.h"

#define PC_UNCOVERED(X)                                                                       \
    X(Probe, (int source, int tag, MPI_Comm comm, MPI_Status *status),                        \
      (source, tag, comm, status), probe, PROBE, 5)                                           \
    X(Iprobe, (int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status),            \
      (source, tag, comm, flag, status), iprobe, IPROBE, 6)                                   \
    X(Mprobe, (int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status), \
      (source, tag, comm, message, status), mprobe, MPROBE, 6)                                \
    X(Improbe,                                                                                \
      (int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,                   \
       MPI_Status *status),                                                                   \
      (source, tag, comm, flag, message, status), improbe, IMPROBE, 7)                        \
    X(Mrecv,                                                                                  \
      (void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Status *status),    \
      (buf, count, type, message, status), mrecv, MRECV, 6)                                   \
    X(Imrecv,                                                                                 \
      (void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Request *request),  \
      (buf, count, type, message, request), imrecv, IMRECV, 6)                                \
    X(Scan,                                                                                   \
      (const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,           \
       MPI_Comm comm),                                                                        \
      (sendbuf, recvbuf, count, type, op, comm), scan, SCAN, 7)                               \
    X(Exscan,                                                                                 \
      (const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,           \
       MPI_Comm comm),                                                                        \
      (sendbuf, recvbuf, count, type, op, comm), exscan, EXSCAN, 7)                           \
    X(Reduce_scatter_block,                                                                   \
      (const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype type, MPI_Op op,       \
       MPI_Comm comm),                                                                        \
      (sendbuf, recvbuf, recvcount, type, op, comm), reduce_scatter_block,                    \
      REDUCE_SCATTER_BLOCK, 7)                                                                \
    X(Alltoallw,                                                                              \
      (const void *sendbuf, const int sendcounts[], const int sdispls[],                      \
       const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],                 \
       const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm),                   \
      (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,      \
       comm),                                                                                 \
      alltoallw, ALLTOALLW, 10)                                                               \
    X(Ibarrier, (MPI_Comm comm, MPI_Request *request), (comm, request), ibarrier, IBARRIER, 3) \
    X(Ibcast,                                                                                 \
      (void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm,                      \
       MPI_Request *request),                                                                 \
      (buf, count, type, root, comm, request), ibcast, IBCAST, 7)                             \
    X(Ireduce,                                                                                \
      (const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, int root, \
       MPI_Comm comm, MPI_Request *request),                                                  \
      (sendbuf, recvbuf, count, type, op, root, comm, request), ireduce, IREDUCE, 9)          \
    X(Iallreduce,                                                                             \
      (const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,           \
       MPI_Comm comm, MPI_Request *request),                                                  \
      (sendbuf, recvbuf, count, type, op, comm, request), iallreduce, IALLREDUCE, 8)          \
    X(Ialltoall,                                                                              \
      (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,              \
       int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request),            \
      (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request), ialltoall, \
      IALLTOALL, 9)                                                                           \
    X(Iallgather,                                                                             \
      (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,              \
       int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request),            \
      (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request),            \
      iallgather, IALLGATHER, 9)                                                              \
    X(Send_init,                                                                              \
      (const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,       \
       MPI_Request *request),                                                                 \
      (buf, count, type, dest, tag, comm, request), send_init, SEND_INIT, 8)                  \
    X(Recv_init,                                                                              \
      (void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,           \
       MPI_Request *request),                                                                 \
      (buf, count, type, source, tag, comm, request), recv_init, RECV_INIT, 8)                \
    X(Start, (MPI_Request * request), (request), start, START, 2)                             \
    X(Startall, (int count, MPI_Request requests[]), (count, requests), startall, STARTALL, 3) \
    X(Cancel, (MPI_Request * request), (request), cancel, CANCEL, 2)                          \
    X(Put,                                                                                    \
      (const void *origin, int origin_count, MPI_Datatype origin_type, int target,            \
       MPI_Aint target_disp, int target_count, MPI_Datatype target_type, MPI_Win win),        \
      (origin, origin_count, origin_type, target, target_disp, target_count, target_type,     \
       win),                                                                                  \
      put, PUT, 9)                                                                            \
    X(Get,                                                                                    \
      (void *origin, int origin_count, MPI_Datatype origin_type, int target,                  \
       MPI_Aint target_disp, int target_count, MPI_Datatype target_type, MPI_Win win),        \
      (origin, origin_count, origin_type, target, target_disp, target_count, target_type,     \
       win),                                                                                  \
      get, GET, 9)                                                                            \
    X(Accumulate,                                                                             \
      (const void *origin, int origin_count, MPI_Datatype origin_type, int target,            \
       MPI_Aint target_disp, int target_count, MPI_Datatype target_type, MPI_Op op,           \
       MPI_Win win),                                                                          \
      (origin, origin_count, origin_type, target, target_disp, target_count, target_type, op, \
       win),                                                                                  \
      accumulate, ACCUMULATE, 10)                                                             \
    X(Win_fence, (int assert, MPI_Win win), (assert, win), win_fence, WIN_FENCE, 3)           \
    X(Win_lock, (int lock_type, int rank, int assert, MPI_Win win),                           \
      (lock_type, rank, assert, win), win_lock, WIN_LOCK, 5)                                  \
    X(Win_unlock, (int rank, MPI_Win win), (rank, win), win_unlock, WIN_UNLOCK, 3)            \
    X(Win_create,                                                                             \
      (void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win), \
      (base, size, disp_unit, info, comm, win), win_create, WIN_CREATE, 7)                    \
    X(Neighbor_alltoall,                                                                      \
      (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,              \
       int recvcount, MPI_Datatype recvtype, MPI_Comm comm),                                  \
      (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm), neighbor_alltoall,  \
      NEIGHBOR_ALLTOALL, 8)                                                                   \
    X(Neighbor_allgather,                                                                     \
      (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,              \
       int recvcount, MPI_Datatype recvtype, MPI_Comm comm),                                  \
      (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm),                     \
      neighbor_allgather, NEIGHBOR_ALLGATHER, 8)

enum {
#define PC_INDEX(name, params, args, lower, upper, nf) PC_U_##name,
    PC_UNCOVERED(PC_INDEX)
#undef PC_INDEX
        PC_U_COUNT
};

const char *const pc_uncovered_names[] = {
#define PC_NAME(name, params, args, lower, upper, nf) "MPI_" #name,
    PC_UNCOVERED(PC_NAME)
#undef PC_NAME
};
const int pc_uncovered_count = PC_U_COUNT;

/* C: count, then the real function. */
#define PC_C_WRAPPER(name, params, args, lower, upper, nf)                                    \
    PC_EXPORT int MPI_##name params {                                                         \
        static void *slot;                                                                    \
        __typeof__(PMPI_##name) *real = pc_lookup(&slot, pc_resolve, "PMPI_" #name);          \
        if (pc_on())                                                                          \
            pc_uncovered(PC_U_##name);                                                        \
        return real args;                                                                     \
    }
PC_UNCOVERED(PC_C_WRAPPER)

/* Fortran: `nf` pointers in, the same pointers out. */
#define PC_P1 void *a1
#define PC_P2 PC_P1, void *a2
#define PC_P3 PC_P2, void *a3
#define PC_P4 PC_P3, void *a4
#define PC_P5 PC_P4, void *a5
#define PC_P6 PC_P5, void *a6
#define PC_P7 PC_P6, void *a7
#define PC_P8 PC_P7, void *a8
#define PC_P9 PC_P8, void *a9
#define PC_P10 PC_P9, void *a10
#define PC_A1 a1
#define PC_A2 PC_A1, a2
#define PC_A3 PC_A2, a3
#define PC_A4 PC_A3, a4
#define PC_A5 PC_A4, a5
#define PC_A6 PC_A5, a6
#define PC_A7 PC_A6, a7
#define PC_A8 PC_A7, a8
#define PC_A9 PC_A8, a9
#define PC_A10 PC_A9, a10

#define PC_F_WRAPPER(name, params, args, lower, upper, nf)                                    \
    typedef void f_##lower##_t(PC_P##nf);                                                     \
    static void *real_f_##lower;                                                              \
    static void f_##lower(PC_P##nf) {                                                         \
        f_##lower##_t *real = PC_F_REAL(f_##lower##_t *, real_f_##lower, #lower, "MPI_" #upper); \
        if (pc_on())                                                                          \
            pc_uncovered(PC_U_##name);                                                        \
        pc_in_fortran++;                                                                      \
        real(PC_A##nf);                                                                       \
        pc_in_fortran--;                                                                      \
    }                                                                                         \
    PC_F_NAMES(f_##lower, mpi_##lower, MPI_##upper)
PC_UNCOVERED(PC_F_WRAPPER)
