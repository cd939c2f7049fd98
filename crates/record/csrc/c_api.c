/* The C entry points the recorder covers. Each times the real (PMPI) call and, when it
 * succeeded, hands its arguments to core.c. Outside a recording (before MPI_Init, in a
 * process started without PERFCOMPOSE_RECORD_DIR, inside a Fortran wrapper) each is a
 * plain call of the real function. The prototypes are mpi.h's, so the compiler checks
 * every signature. */
#include "record.h"

#include <stdlib.h>
#include <string.h>

/* Statuses the real call can fill when the caller passed MPI_STATUS(ES)_IGNORE: sources,
 * tags and sizes of completed receives are read from them. */
#define PC_STATUS_STACK 64

static MPI_Status *statuses_for(MPI_Status *given, int n, MPI_Status *stack) {
    if (given != MPI_STATUSES_IGNORE)
        return given;
    if (n <= PC_STATUS_STACK)
        return stack;
    return malloc((size_t)n * sizeof(MPI_Status));
}

static void statuses_done(MPI_Status *used, MPI_Status *given, MPI_Status *stack) {
    if (used != given && used != stack)
        free(used);
}

/* ---- start and stop ------------------------------------------------------------------- */

PC_EXPORT int MPI_Init(int *argc, char ***argv) {
    int rc = PC_REAL(PMPI_Init)(argc, argv);
    if (rc == MPI_SUCCESS)
        pc_start(-1);
    return rc;
}

PC_EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
    int rc = PC_REAL(PMPI_Init_thread)(argc, argv, required, provided);
    if (rc == MPI_SUCCESS)
        pc_start(*provided);
    return rc;
}

PC_EXPORT int MPI_Finalize(void) {
    pc_stop();
    return PC_REAL(PMPI_Finalize)();
}

PC_EXPORT int MPI_Comm_free(MPI_Comm *comm) {
    pc_forget_comm(*comm);
    return PC_REAL(PMPI_Comm_free)(comm);
}

PC_EXPORT int MPI_Comm_disconnect(MPI_Comm *comm) {
    pc_forget_comm(*comm);
    return PC_REAL(PMPI_Comm_disconnect)(comm);
}

/* ---- point to point ------------------------------------------------------------------- */

#define PC_SEND_WRAPPER(NAME, REAL, MODE)                                                     \
    PC_EXPORT int NAME(const void *buf, int count, MPI_Datatype type, int dest, int tag,       \
                       MPI_Comm comm) {                                                       \
        if (!pc_on())                                                                         \
            return PC_REAL(REAL)(buf, count, type, dest, tag, comm);                          \
        uint64_t t0 = pc_now();                                                               \
        int rc = PC_REAL(REAL)(buf, count, type, dest, tag, comm);                            \
        uint64_t t1 = pc_now();                                                               \
        if (rc == MPI_SUCCESS)                                                                \
            pc_send(MODE, comm, dest, tag, count, type, t0, t1);                              \
        return rc;                                                                            \
    }

PC_SEND_WRAPPER(MPI_Send, PMPI_Send, PC_MODE_STANDARD)
PC_SEND_WRAPPER(MPI_Ssend, PMPI_Ssend, PC_MODE_SYNCHRONOUS)
PC_SEND_WRAPPER(MPI_Bsend, PMPI_Bsend, PC_MODE_BUFFERED)
PC_SEND_WRAPPER(MPI_Rsend, PMPI_Rsend, PC_MODE_READY)

#define PC_ISEND_WRAPPER(NAME, REAL, MODE)                                                    \
    PC_EXPORT int NAME(const void *buf, int count, MPI_Datatype type, int dest, int tag,       \
                       MPI_Comm comm, MPI_Request *request) {                                 \
        if (!pc_on())                                                                         \
            return PC_REAL(REAL)(buf, count, type, dest, tag, comm, request);                 \
        uint64_t t0 = pc_now();                                                               \
        int rc = PC_REAL(REAL)(buf, count, type, dest, tag, comm, request);                   \
        uint64_t t1 = pc_now();                                                               \
        if (rc == MPI_SUCCESS)                                                                \
            pc_isend(MODE, comm, dest, tag, count, type, *request, t0, t1);                   \
        return rc;                                                                            \
    }

PC_ISEND_WRAPPER(MPI_Isend, PMPI_Isend, PC_MODE_STANDARD)
PC_ISEND_WRAPPER(MPI_Issend, PMPI_Issend, PC_MODE_SYNCHRONOUS)
PC_ISEND_WRAPPER(MPI_Ibsend, PMPI_Ibsend, PC_MODE_BUFFERED)
PC_ISEND_WRAPPER(MPI_Irsend, PMPI_Irsend, PC_MODE_READY)

PC_EXPORT int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag,
                       MPI_Comm comm, MPI_Status *status) {
    if (!pc_on())
        return PC_REAL(PMPI_Recv)(buf, count, type, source, tag, comm, status);
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    uint64_t t0 = pc_now();
    int rc = PC_REAL(PMPI_Recv)(buf, count, type, source, tag, comm, st);
    uint64_t t1 = pc_now();
    if (rc == MPI_SUCCESS)
        pc_recv(comm, source, count, type, st, t0, t1);
    return rc;
}

PC_EXPORT int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag,
                        MPI_Comm comm, MPI_Request *request) {
    if (!pc_on())
        return PC_REAL(PMPI_Irecv)(buf, count, type, source, tag, comm, request);
    uint64_t t0 = pc_now();
    int rc = PC_REAL(PMPI_Irecv)(buf, count, type, source, tag, comm, request);
    uint64_t t1 = pc_now();
    if (rc == MPI_SUCCESS)
        pc_irecv(comm, source, tag, count, type, *request, t0, t1);
    return rc;
}

PC_EXPORT int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                           int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                           int source, int recvtag, MPI_Comm comm, MPI_Status *status) {
    if (!pc_on())
        return PC_REAL(PMPI_Sendrecv)(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,
                                      recvcount, recvtype, source, recvtag, comm, status);
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    uint64_t t0 = pc_now();
    int rc = PC_REAL(PMPI_Sendrecv)(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,
                                    recvcount, recvtype, source, recvtag, comm, st);
    uint64_t t1 = pc_now();
    if (rc == MPI_SUCCESS)
        pc_sendrecv(comm, dest, sendtag, sendcount, sendtype, source, recvcount, recvtype, st, t0,
                    t1);
    return rc;
}

PC_EXPORT int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype type, int dest,
                                   int sendtag, int source, int recvtag, MPI_Comm comm,
                                   MPI_Status *status) {
    if (!pc_on())
        return PC_REAL(PMPI_Sendrecv_replace)(buf, count, type, dest, sendtag, source, recvtag,
                                              comm, status);
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    uint64_t t0 = pc_now();
    int rc = PC_REAL(PMPI_Sendrecv_replace)(buf, count, type, dest, sendtag, source, recvtag,
                                            comm, st);
    uint64_t t1 = pc_now();
    if (rc == MPI_SUCCESS)
        pc_sendrecv(comm, dest, sendtag, count, type, source, count, type, st, t0, t1);
    return rc;
}

/* ---- completion ----------------------------------------------------------------------- */

PC_EXPORT int MPI_Wait(MPI_Request *request, MPI_Status *status) {
    if (!pc_on() || !pc_tracks_any(request, 1))
        return PC_REAL(PMPI_Wait)(request, status);
    MPI_Request before = *request;
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    uint64_t t0 = pc_now();
    int rc = PC_REAL(PMPI_Wait)(request, st);
    uint64_t t1 = pc_now();
    if (rc == MPI_SUCCESS)
        pc_done(PC_DONE_WAIT, &before, st, NULL, 1, t0, t1);
    return rc;
}

PC_EXPORT int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status) {
    if (!pc_on() || !pc_tracks_any(request, 1))
        return PC_REAL(PMPI_Test)(request, flag, status);
    MPI_Request before = *request;
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    uint64_t t0 = pc_now();
    int rc = PC_REAL(PMPI_Test)(request, flag, st);
    uint64_t t1 = pc_now();
    if (rc == MPI_SUCCESS && *flag)
        pc_done(PC_DONE_TEST, &before, st, NULL, 1, t0, t1);
    return rc;
}

/* Copies of the handles before a call that sets completed ones to MPI_REQUEST_NULL. */
#define PC_REQUEST_STACK 64
static MPI_Request *copy_requests(const MPI_Request *reqs, int n, MPI_Request *stack) {
    MPI_Request *copy = n <= PC_REQUEST_STACK ? stack : malloc((size_t)n * sizeof(MPI_Request));
    if (copy)
        memcpy(copy, reqs, (size_t)n * sizeof(MPI_Request));
    return copy;
}

static void free_requests(MPI_Request *copy, MPI_Request *stack) {
    if (copy != stack)
        free(copy);
}

PC_EXPORT int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
    if (!pc_on() || !pc_tracks_any(requests, count))
        return PC_REAL(PMPI_Waitall)(count, requests, statuses);
    MPI_Request rstack[PC_REQUEST_STACK];
    MPI_Status sstack[PC_STATUS_STACK];
    MPI_Request *before = copy_requests(requests, count, rstack);
    MPI_Status *st = statuses_for(statuses, count, sstack);
    if (!before || !st) {
        if (before)
            free_requests(before, rstack);
        return PC_REAL(PMPI_Waitall)(count, requests, statuses);
    }
    uint64_t t0 = pc_now();
    int rc = PC_REAL(PMPI_Waitall)(count, requests, st);
    uint64_t t1 = pc_now();
    if (rc == MPI_SUCCESS)
        pc_done(PC_DONE_WAITALL, before, st, NULL, count, t0, t1);
    statuses_done(st, statuses, sstack);
    free_requests(before, rstack);
    return rc;
}

PC_EXPORT int MPI_Testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[]) {
    if (!pc_on() || !pc_tracks_any(requests, count))
        return PC_REAL(PMPI_Testall)(count, requests, flag, statuses);
    MPI_Request rstack[PC_REQUEST_STACK];
    MPI_Status sstack[PC_STATUS_STACK];
    MPI_Request *before = copy_requests(requests, count, rstack);
    MPI_Status *st = statuses_for(statuses, count, sstack);
    if (!before || !st) {
        if (before)
            free_requests(before, rstack);
        return PC_REAL(PMPI_Testall)(count, requests, flag, statuses);
    }
    uint64_t t0 = pc_now();
    int rc = PC_REAL(PMPI_Testall)(count, requests, flag, st);
    uint64_t t1 = pc_now();
    if (rc == MPI_SUCCESS && *flag)
        pc_done(PC_DONE_TESTALL, before, st, NULL, count, t0, t1);
    statuses_done(st, statuses, sstack);
    free_requests(before, rstack);
    return rc;
}

PC_EXPORT int MPI_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status) {
    if (!pc_on() || !pc_tracks_any(requests, count))
        return PC_REAL(PMPI_Waitany)(count, requests, index, status);
    MPI_Request rstack[PC_REQUEST_STACK];
    MPI_Request *before = copy_requests(requests, count, rstack);
    if (!before)
        return PC_REAL(PMPI_Waitany)(count, requests, index, status);
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    uint64_t t0 = pc_now();
    int rc = PC_REAL(PMPI_Waitany)(count, requests, index, st);
    uint64_t t1 = pc_now();
    if (rc == MPI_SUCCESS && *index != MPI_UNDEFINED)
        pc_done(PC_DONE_WAITANY, &before[*index], st, NULL, 1, t0, t1);
    free_requests(before, rstack);
    return rc;
}

PC_EXPORT int MPI_Testany(int count, MPI_Request requests[], int *index, int *flag,
                          MPI_Status *status) {
    if (!pc_on() || !pc_tracks_any(requests, count))
        return PC_REAL(PMPI_Testany)(count, requests, index, flag, status);
    MPI_Request rstack[PC_REQUEST_STACK];
    MPI_Request *before = copy_requests(requests, count, rstack);
    if (!before)
        return PC_REAL(PMPI_Testany)(count, requests, index, flag, status);
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    uint64_t t0 = pc_now();
    int rc = PC_REAL(PMPI_Testany)(count, requests, index, flag, st);
    uint64_t t1 = pc_now();
    if (rc == MPI_SUCCESS && *flag && *index != MPI_UNDEFINED)
        pc_done(PC_DONE_TESTANY, &before[*index], st, NULL, 1, t0, t1);
    free_requests(before, rstack);
    return rc;
}

/* Waitsome and Testsome: `statuses[j]` is the status of `requests[indices[j]]`. */
static void some_done(int call, const MPI_Request *before, const MPI_Status *st,
                      const int *indices, int outcount, uint64_t t0, uint64_t t1) {
    if (outcount != MPI_UNDEFINED && outcount > 0)
        pc_done(call, before, st, indices, outcount, t0, t1);
}

PC_EXPORT int MPI_Waitsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                           MPI_Status statuses[]) {
    if (!pc_on() || !pc_tracks_any(requests, incount))
        return PC_REAL(PMPI_Waitsome)(incount, requests, outcount, indices, statuses);
    MPI_Request rstack[PC_REQUEST_STACK];
    MPI_Status sstack[PC_STATUS_STACK];
    MPI_Request *before = copy_requests(requests, incount, rstack);
    MPI_Status *st = statuses_for(statuses, incount, sstack);
    if (!before || !st) {
        if (before)
            free_requests(before, rstack);
        return PC_REAL(PMPI_Waitsome)(incount, requests, outcount, indices, statuses);
    }
    uint64_t t0 = pc_now();
    int rc = PC_REAL(PMPI_Waitsome)(incount, requests, outcount, indices, st);
    uint64_t t1 = pc_now();
    if (rc == MPI_SUCCESS)
        some_done(PC_DONE_WAITSOME, before, st, indices, *outcount, t0, t1);
    statuses_done(st, statuses, sstack);
    free_requests(before, rstack);
    return rc;
}

PC_EXPORT int MPI_Testsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                           MPI_Status statuses[]) {
    if (!pc_on() || !pc_tracks_any(requests, incount))
        return PC_REAL(PMPI_Testsome)(incount, requests, outcount, indices, statuses);
    MPI_Request rstack[PC_REQUEST_STACK];
    MPI_Status sstack[PC_STATUS_STACK];
    MPI_Request *before = copy_requests(requests, incount, rstack);
    MPI_Status *st = statuses_for(statuses, incount, sstack);
    if (!before || !st) {
        if (before)
            free_requests(before, rstack);
        return PC_REAL(PMPI_Testsome)(incount, requests, outcount, indices, statuses);
    }
    uint64_t t0 = pc_now();
    int rc = PC_REAL(PMPI_Testsome)(incount, requests, outcount, indices, st);
    uint64_t t1 = pc_now();
    if (rc == MPI_SUCCESS)
        some_done(PC_DONE_TESTSOME, before, st, indices, *outcount, t0, t1);
    statuses_done(st, statuses, sstack);
    free_requests(before, rstack);
    return rc;
}

PC_EXPORT int MPI_Request_free(MPI_Request *request) {
    if (pc_on())
        pc_forget_request(*request);
    return PC_REAL(PMPI_Request_free)(request);
}

/* ---- collectives ---------------------------------------------------------------------- */

#define PC_TIMED_COLL(CALL, ARGS)                                                             \
    do {                                                                                      \
        if (!pc_on())                                                                         \
            return CALL;                                                                      \
        uint64_t t0 = pc_now();                                                               \
        int rc = CALL;                                                                        \
        uint64_t t1 = pc_now();                                                               \
        if (rc == MPI_SUCCESS)                                                                \
            pc_coll(ARGS, t0, t1);                                                            \
        return rc;                                                                            \
    } while (0)

PC_EXPORT int MPI_Barrier(MPI_Comm comm) {
    struct pc_coll_args a = {.op = PC_BARRIER, .comm = comm, .root = -1};
    PC_TIMED_COLL(PC_REAL(PMPI_Barrier)(comm), &a);
}

PC_EXPORT int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
    struct pc_coll_args a = {
        .op = PC_BCAST, .comm = comm, .root = root, .sendcount = count, .sendtype = type};
    PC_TIMED_COLL(PC_REAL(PMPI_Bcast)(buf, count, type, root, comm), &a);
}

PC_EXPORT int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type,
                         MPI_Op op, int root, MPI_Comm comm) {
    struct pc_coll_args a = {
        .op = PC_REDUCE, .comm = comm, .root = root, .sendcount = count, .sendtype = type};
    PC_TIMED_COLL(PC_REAL(PMPI_Reduce)(sendbuf, recvbuf, count, type, op, root, comm), &a);
}

PC_EXPORT int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type,
                            MPI_Op op, MPI_Comm comm) {
    struct pc_coll_args a = {
        .op = PC_ALLREDUCE, .comm = comm, .root = -1, .sendcount = count, .sendtype = type};
    PC_TIMED_COLL(PC_REAL(PMPI_Allreduce)(sendbuf, recvbuf, count, type, op, comm), &a);
}

PC_EXPORT int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                                 MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
    struct pc_coll_args a = {.op = PC_REDUCE_SCATTER,
                             .comm = comm,
                             .root = -1,
                             .sendtype = type,
                             .recvcounts = recvcounts};
    PC_TIMED_COLL(PC_REAL(PMPI_Reduce_scatter)(sendbuf, recvbuf, recvcounts, type, op, comm), &a);
}

PC_EXPORT int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                           void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
    struct pc_coll_args a = {.op = PC_ALLTOALL,
                             .comm = comm,
                             .root = -1,
                             .send_in_place = sendbuf == MPI_IN_PLACE,
                             .sendcount = sendcount,
                             .sendtype = sendtype,
                             .recvcount = recvcount,
                             .recvtype = recvtype};
    PC_TIMED_COLL(PC_REAL(PMPI_Alltoall)(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                         recvtype, comm),
                  &a);
}

PC_EXPORT int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
    struct pc_coll_args a = {.op = PC_ALLTOALLV,
                             .comm = comm,
                             .root = -1,
                             .send_in_place = sendbuf == MPI_IN_PLACE,
                             .sendtype = sendtype,
                             .sendcounts = sendcounts,
                             .recvtype = recvtype,
                             .recvcounts = recvcounts};
    PC_TIMED_COLL(PC_REAL(PMPI_Alltoallv)(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                          recvcounts, rdispls, recvtype, comm),
                  &a);
}

PC_EXPORT int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
    struct pc_coll_args a = {.op = PC_ALLGATHER,
                             .comm = comm,
                             .root = -1,
                             .send_in_place = sendbuf == MPI_IN_PLACE,
                             .sendcount = sendcount,
                             .sendtype = sendtype,
                             .recvcount = recvcount,
                             .recvtype = recvtype};
    PC_TIMED_COLL(PC_REAL(PMPI_Allgather)(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                          recvtype, comm),
                  &a);
}

PC_EXPORT int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, MPI_Comm comm) {
    struct pc_coll_args a = {.op = PC_ALLGATHERV,
                             .comm = comm,
                             .root = -1,
                             .send_in_place = sendbuf == MPI_IN_PLACE,
                             .sendcount = sendcount,
                             .sendtype = sendtype,
                             .recvtype = recvtype,
                             .recvcounts = recvcounts};
    PC_TIMED_COLL(PC_REAL(PMPI_Allgatherv)(sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                                           displs, recvtype, comm),
                  &a);
}

PC_EXPORT int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                         int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
    struct pc_coll_args a = {.op = PC_GATHER,
                             .comm = comm,
                             .root = root,
                             .send_in_place = sendbuf == MPI_IN_PLACE,
                             .sendcount = sendcount,
                             .sendtype = sendtype,
                             .recvcount = recvcount,
                             .recvtype = recvtype};
    PC_TIMED_COLL(PC_REAL(PMPI_Gather)(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                       root, comm),
                  &a);
}

PC_EXPORT int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                          void *recvbuf, const int recvcounts[], const int displs[],
                          MPI_Datatype recvtype, int root, MPI_Comm comm) {
    struct pc_coll_args a = {.op = PC_GATHERV,
                             .comm = comm,
                             .root = root,
                             .send_in_place = sendbuf == MPI_IN_PLACE,
                             .sendcount = sendcount,
                             .sendtype = sendtype,
                             .recvtype = recvtype,
                             .recvcounts = recvcounts};
    PC_TIMED_COLL(PC_REAL(PMPI_Gatherv)(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                        recvtype, root, comm),
                  &a);
}

PC_EXPORT int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                          void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                          MPI_Comm comm) {
    struct pc_coll_args a = {.op = PC_SCATTER,
                             .comm = comm,
                             .root = root,
                             .recv_in_place = recvbuf == MPI_IN_PLACE,
                             .sendcount = sendcount,
                             .sendtype = sendtype,
                             .recvcount = recvcount,
                             .recvtype = recvtype};
    PC_TIMED_COLL(PC_REAL(PMPI_Scatter)(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                        recvtype, root, comm),
                  &a);
}

PC_EXPORT int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                           MPI_Datatype sendtype, void *recvbuf, int recvcount,
                           MPI_Datatype recvtype, int root, MPI_Comm comm) {
    struct pc_coll_args a = {.op = PC_SCATTERV,
                             .comm = comm,
                             .root = root,
                             .recv_in_place = recvbuf == MPI_IN_PLACE,
                             .sendtype = sendtype,
                             .sendcounts = sendcounts,
                             .recvcount = recvcount,
                             .recvtype = recvtype};
    PC_TIMED_COLL(PC_REAL(PMPI_Scatterv)(sendbuf, sendcounts, displs, sendtype, recvbuf,
                                         recvcount, recvtype, root, comm),
                  &a);
}
