/* The Fortran entry points the recorder covers (`mpif.h` and `use mpi`; see fortran.h).
 * Handles are converted with MPI_Comm_f2c, MPI_Type_f2c and MPI_Request_f2c for the
 * recorder's bookkeeping; the call itself goes to the library's Fortran routine. */
#define _GNU_SOURCE
#include "fortran.h"

#include <ctype.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *pc_f_resolve(const char *lower_and_upper) {
    const char *lower = lower_and_upper;
    const char *upper = lower + strlen(lower) + 1;
    char name[96];
    const char *forms[] = {"pmpi_%s_", "pmpi_%s__", "pmpi_%s"};
    for (size_t i = 0; i < sizeof forms / sizeof *forms; i++) {
        snprintf(name, sizeof name, forms[i], lower);
        void *f = dlsym(RTLD_NEXT, name);
        if (f)
            return f;
    }
    snprintf(name, sizeof name, "P%s", upper);
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "perfcompose record: the MPI library has no Fortran routine pmpi_%s_\n",
                lower);
        abort();
    }
    return f;
}

/* ---- Fortran's sentinels ----------------------------------------------------------------- */

/* Addresses of a Fortran sentinel (a common block) under each name mangling. */
struct sentinel {
    int looked_up;
    void *at[4];
};

static void sentinel_lookup(struct sentinel *s, const char *lower) {
    char name[96];
    const char *forms[] = {"%s_", "%s__", "%s"};
    for (int i = 0; i < 3; i++) {
        snprintf(name, sizeof name, forms[i], lower);
        s->at[i] = dlsym(RTLD_DEFAULT, name);
    }
    size_t n = strlen(lower);
    if (n < sizeof name) {
        for (size_t i = 0; i <= n; i++)
            name[i] = (char)toupper((unsigned char)lower[i]);
        s->at[3] = dlsym(RTLD_DEFAULT, name);
    }
    s->looked_up = 1;
}

static int is_sentinel(struct sentinel *s, const char *lower, const void *p) {
    if (!s->looked_up)
        sentinel_lookup(s, lower);
    for (int i = 0; i < 4; i++)
        if (s->at[i] && s->at[i] == p)
            return 1;
    return 0;
}

static struct sentinel status_ignore, statuses_ignore, in_place;

static int f_status_ignored(const void *p) {
    return is_sentinel(&status_ignore, "mpi_fortran_status_ignore", p);
}
static int f_statuses_ignored(const void *p) {
    return is_sentinel(&statuses_ignore, "mpi_fortran_statuses_ignore", p);
}
static int f_in_place(const void *p) { return is_sentinel(&in_place, "mpi_fortran_in_place", p); }

/* A Fortran status is MPI_Status's bytes as INTEGERs (MPI_STATUS_SIZE of them). */
#define PC_F_STATUS_SIZE ((int)(sizeof(MPI_Status) / sizeof(MPI_Fint)))

static MPI_Comm comm_c(const MPI_Fint *f) { return PC_REAL(PMPI_Comm_f2c)(*f); }
static MPI_Datatype type_c(const MPI_Fint *f) { return PC_REAL(PMPI_Type_f2c)(*f); }

static void status_c(MPI_Fint *f, MPI_Status *c) { PC_REAL(PMPI_Status_f2c)(f, c); }

/* Run the real Fortran routine with the C entry points muted. */
#define PC_F_CALL(CALL)                                                                       \
    do {                                                                                      \
        pc_in_fortran++;                                                                      \
        CALL;                                                                                 \
        pc_in_fortran--;                                                                      \
    } while (0)

typedef MPI_Fint F; /* an INTEGER argument */

/* ---- start and stop ---------------------------------------------------------------------- */

typedef void f_init_t(F *ierr);
static void *real_init;
static void f_init(F *ierr) {
    PC_F_CALL(PC_F_REAL(f_init_t *, real_init, "init", "MPI_INIT")(ierr));
    if (*ierr == MPI_SUCCESS)
        pc_start(-1);
}
PC_F_NAMES(f_init, mpi_init, MPI_INIT)

typedef void f_init_thread_t(F *required, F *provided, F *ierr);
static void *real_init_thread;
static void f_init_thread(F *required, F *provided, F *ierr) {
    PC_F_CALL(PC_F_REAL(f_init_thread_t *, real_init_thread, "init_thread",
                        "MPI_INIT_THREAD")(required, provided, ierr));
    if (*ierr == MPI_SUCCESS)
        pc_start(*provided);
}
PC_F_NAMES(f_init_thread, mpi_init_thread, MPI_INIT_THREAD)

typedef void f_finalize_t(F *ierr);
static void *real_finalize;
static void f_finalize(F *ierr) {
    pc_stop();
    PC_F_CALL(PC_F_REAL(f_finalize_t *, real_finalize, "finalize", "MPI_FINALIZE")(ierr));
}
PC_F_NAMES(f_finalize, mpi_finalize, MPI_FINALIZE)

typedef void f_comm_free_t(F *comm, F *ierr);
static void *real_comm_free;
static void f_comm_free(F *comm, F *ierr) {
    if (pc_active)
        pc_forget_comm(comm_c(comm));
    PC_F_CALL(PC_F_REAL(f_comm_free_t *, real_comm_free, "comm_free", "MPI_COMM_FREE")(comm, ierr));
}
PC_F_NAMES(f_comm_free, mpi_comm_free, MPI_COMM_FREE)

/* ---- point to point ---------------------------------------------------------------------- */

typedef void f_send_t(void *buf, F *count, F *type, F *dest, F *tag, F *comm, F *ierr);

#define PC_F_SEND(name, lower, upper, MODE)                                                   \
    static void *real_##name;                                                                 \
    static void f_##name(void *buf, F *count, F *type, F *dest, F *tag, F *comm, F *ierr) {   \
        f_send_t *real = PC_F_REAL(f_send_t *, real_##name, #name, #upper);                   \
        if (!pc_on()) {                                                                       \
            real(buf, count, type, dest, tag, comm, ierr);                                    \
            return;                                                                           \
        }                                                                                     \
        uint64_t t0 = pc_now();                                                               \
        PC_F_CALL(real(buf, count, type, dest, tag, comm, ierr));                             \
        uint64_t t1 = pc_now();                                                               \
        if (*ierr == MPI_SUCCESS)                                                             \
            pc_send(MODE, comm_c(comm), *dest, *tag, *count, type_c(type), t0, t1);           \
    }                                                                                         \
    PC_F_NAMES(f_##name, lower, upper)

PC_F_SEND(send, mpi_send, MPI_SEND, PC_MODE_STANDARD)
PC_F_SEND(ssend, mpi_ssend, MPI_SSEND, PC_MODE_SYNCHRONOUS)
PC_F_SEND(bsend, mpi_bsend, MPI_BSEND, PC_MODE_BUFFERED)
PC_F_SEND(rsend, mpi_rsend, MPI_RSEND, PC_MODE_READY)

typedef void f_isend_t(void *buf, F *count, F *type, F *dest, F *tag, F *comm, F *request,
                       F *ierr);

#define PC_F_ISEND(name, lower, upper, MODE)                                                  \
    static void *real_##name;                                                                 \
    static void f_##name(void *buf, F *count, F *type, F *dest, F *tag, F *comm, F *request,  \
                         F *ierr) {                                                           \
        f_isend_t *real = PC_F_REAL(f_isend_t *, real_##name, #name, #upper);                 \
        if (!pc_on()) {                                                                       \
            real(buf, count, type, dest, tag, comm, request, ierr);                           \
            return;                                                                           \
        }                                                                                     \
        uint64_t t0 = pc_now();                                                               \
        PC_F_CALL(real(buf, count, type, dest, tag, comm, request, ierr));                    \
        uint64_t t1 = pc_now();                                                               \
        if (*ierr == MPI_SUCCESS)                                                             \
            pc_isend(MODE, comm_c(comm), *dest, *tag, *count, type_c(type),                   \
                     PC_REAL(PMPI_Request_f2c)(*request), t0, t1);                            \
    }                                                                                         \
    PC_F_NAMES(f_##name, lower, upper)

PC_F_ISEND(isend, mpi_isend, MPI_ISEND, PC_MODE_STANDARD)
PC_F_ISEND(issend, mpi_issend, MPI_ISSEND, PC_MODE_SYNCHRONOUS)
PC_F_ISEND(ibsend, mpi_ibsend, MPI_IBSEND, PC_MODE_BUFFERED)
PC_F_ISEND(irsend, mpi_irsend, MPI_IRSEND, PC_MODE_READY)

typedef void f_recv_t(void *buf, F *count, F *type, F *source, F *tag, F *comm, F *status,
                      F *ierr);
static void *real_recv;
static void f_recv(void *buf, F *count, F *type, F *source, F *tag, F *comm, F *status, F *ierr) {
    f_recv_t *real = PC_F_REAL(f_recv_t *, real_recv, "recv", "MPI_RECV");
    if (!pc_on()) {
        real(buf, count, type, source, tag, comm, status, ierr);
        return;
    }
    F own[PC_F_STATUS_SIZE];
    F *st = f_status_ignored(status) ? own : status;
    uint64_t t0 = pc_now();
    PC_F_CALL(real(buf, count, type, source, tag, comm, st, ierr));
    uint64_t t1 = pc_now();
    if (*ierr == MPI_SUCCESS) {
        MPI_Status cs;
        status_c(st, &cs);
        pc_recv(comm_c(comm), *source, *count, type_c(type), &cs, t0, t1);
    }
}
PC_F_NAMES(f_recv, mpi_recv, MPI_RECV)

typedef void f_irecv_t(void *buf, F *count, F *type, F *source, F *tag, F *comm, F *request,
                       F *ierr);
static void *real_irecv;
static void f_irecv(void *buf, F *count, F *type, F *source, F *tag, F *comm, F *request,
                    F *ierr) {
    f_irecv_t *real = PC_F_REAL(f_irecv_t *, real_irecv, "irecv", "MPI_IRECV");
    if (!pc_on()) {
        real(buf, count, type, source, tag, comm, request, ierr);
        return;
    }
    uint64_t t0 = pc_now();
    PC_F_CALL(real(buf, count, type, source, tag, comm, request, ierr));
    uint64_t t1 = pc_now();
    if (*ierr == MPI_SUCCESS)
        pc_irecv(comm_c(comm), *source, *tag, *count, type_c(type),
                 PC_REAL(PMPI_Request_f2c)(*request), t0, t1);
}
PC_F_NAMES(f_irecv, mpi_irecv, MPI_IRECV)

typedef void f_sendrecv_t(void *sendbuf, F *sendcount, F *sendtype, F *dest, F *sendtag,
                          void *recvbuf, F *recvcount, F *recvtype, F *source, F *recvtag,
                          F *comm, F *status, F *ierr);
static void *real_sendrecv;
static void f_sendrecv(void *sendbuf, F *sendcount, F *sendtype, F *dest, F *sendtag,
                       void *recvbuf, F *recvcount, F *recvtype, F *source, F *recvtag, F *comm,
                       F *status, F *ierr) {
    f_sendrecv_t *real = PC_F_REAL(f_sendrecv_t *, real_sendrecv, "sendrecv", "MPI_SENDRECV");
    if (!pc_on()) {
        real(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
             recvtag, comm, status, ierr);
        return;
    }
    F own[PC_F_STATUS_SIZE];
    F *st = f_status_ignored(status) ? own : status;
    uint64_t t0 = pc_now();
    PC_F_CALL(real(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                   source, recvtag, comm, st, ierr));
    uint64_t t1 = pc_now();
    if (*ierr == MPI_SUCCESS) {
        MPI_Status cs;
        status_c(st, &cs);
        pc_sendrecv(comm_c(comm), *dest, *sendtag, *sendcount, type_c(sendtype), *source,
                    *recvcount, type_c(recvtype), &cs, t0, t1);
    }
}
PC_F_NAMES(f_sendrecv, mpi_sendrecv, MPI_SENDRECV)

typedef void f_sendrecv_replace_t(void *buf, F *count, F *type, F *dest, F *sendtag, F *source,
                                  F *recvtag, F *comm, F *status, F *ierr);
static void *real_sendrecv_replace;
static void f_sendrecv_replace(void *buf, F *count, F *type, F *dest, F *sendtag, F *source,
                               F *recvtag, F *comm, F *status, F *ierr) {
    f_sendrecv_replace_t *real = PC_F_REAL(f_sendrecv_replace_t *, real_sendrecv_replace,
                                           "sendrecv_replace", "MPI_SENDRECV_REPLACE");
    if (!pc_on()) {
        real(buf, count, type, dest, sendtag, source, recvtag, comm, status, ierr);
        return;
    }
    F own[PC_F_STATUS_SIZE];
    F *st = f_status_ignored(status) ? own : status;
    uint64_t t0 = pc_now();
    PC_F_CALL(real(buf, count, type, dest, sendtag, source, recvtag, comm, st, ierr));
    uint64_t t1 = pc_now();
    if (*ierr == MPI_SUCCESS) {
        MPI_Status cs;
        status_c(st, &cs);
        MPI_Datatype t = type_c(type);
        pc_sendrecv(comm_c(comm), *dest, *sendtag, *count, t, *source, *count, t, &cs, t0, t1);
    }
}
PC_F_NAMES(f_sendrecv_replace, mpi_sendrecv_replace, MPI_SENDRECV_REPLACE)

/* ---- completion -------------------------------------------------------------------------- */

/* The C handles of `n` Fortran requests (before the call completes them). */
#define PC_F_STACK 64
static MPI_Request *requests_c(const F *f, int n, MPI_Request *stack) {
    MPI_Request *c = n <= PC_F_STACK ? stack : malloc((size_t)n * sizeof(MPI_Request));
    if (c)
        for (int i = 0; i < n; i++)
            c[i] = PC_REAL(PMPI_Request_f2c)(f[i]);
    return c;
}

static void release(void *p, void *stack) {
    if (p != stack)
        free(p);
}

/* Fortran statuses the real call can fill: the caller's, or ours when it passed
 * MPI_STATUSES_IGNORE. */
static F *statuses_f(F *given, int n, F *stack) {
    if (!f_statuses_ignored(given))
        return given;
    if (n <= PC_F_STACK)
        return stack;
    return malloc((size_t)n * PC_F_STATUS_SIZE * sizeof(F));
}

/* Requests `before[which[j]]` completed with the Fortran statuses `fst` (status j at
 * `fst + j * MPI_STATUS_SIZE`), j < k. */
static void done_f(int call, const MPI_Request *before, F *fst, const int *which, int k,
                   uint64_t t0, uint64_t t1) {
    MPI_Status stack[PC_F_STACK];
    MPI_Status *cs = k <= PC_F_STACK ? stack : malloc((size_t)k * sizeof(MPI_Status));
    if (!cs)
        return;
    memset(cs, 0, (size_t)k * sizeof(MPI_Status));
    for (int j = 0; j < k; j++)
        status_c(fst + (size_t)j * PC_F_STATUS_SIZE, &cs[j]);
    pc_done(call, before, cs, which, k, t0, t1);
    release(cs, stack);
}

typedef void f_wait_t(F *request, F *status, F *ierr);
static void *real_wait;
static void f_wait(F *request, F *status, F *ierr) {
    f_wait_t *real = PC_F_REAL(f_wait_t *, real_wait, "wait", "MPI_WAIT");
    MPI_Request before = pc_on() ? PC_REAL(PMPI_Request_f2c)(*request) : MPI_REQUEST_NULL;
    if (!pc_on() || !pc_tracks_any(&before, 1)) {
        real(request, status, ierr);
        return;
    }
    F own[PC_F_STATUS_SIZE];
    F *st = f_status_ignored(status) ? own : status;
    uint64_t t0 = pc_now();
    PC_F_CALL(real(request, st, ierr));
    uint64_t t1 = pc_now();
    if (*ierr == MPI_SUCCESS)
        done_f(PC_DONE_WAIT, &before, st, NULL, 1, t0, t1);
}
PC_F_NAMES(f_wait, mpi_wait, MPI_WAIT)

typedef void f_test_t(F *request, F *flag, F *status, F *ierr);
static void *real_test;
static void f_test(F *request, F *flag, F *status, F *ierr) {
    f_test_t *real = PC_F_REAL(f_test_t *, real_test, "test", "MPI_TEST");
    MPI_Request before = pc_on() ? PC_REAL(PMPI_Request_f2c)(*request) : MPI_REQUEST_NULL;
    if (!pc_on() || !pc_tracks_any(&before, 1)) {
        real(request, flag, status, ierr);
        return;
    }
    F own[PC_F_STATUS_SIZE];
    F *st = f_status_ignored(status) ? own : status;
    uint64_t t0 = pc_now();
    PC_F_CALL(real(request, flag, st, ierr));
    uint64_t t1 = pc_now();
    if (*ierr == MPI_SUCCESS && *flag)
        done_f(PC_DONE_TEST, &before, st, NULL, 1, t0, t1);
}
PC_F_NAMES(f_test, mpi_test, MPI_TEST)

typedef void f_waitall_t(F *count, F *requests, F *statuses, F *ierr);
static void *real_waitall;
static void f_waitall(F *count, F *requests, F *statuses, F *ierr) {
    f_waitall_t *real = PC_F_REAL(f_waitall_t *, real_waitall, "waitall", "MPI_WAITALL");
    if (!pc_on() || *count <= 0) {
        real(count, requests, statuses, ierr);
        return;
    }
    int n = *count;
    MPI_Request rstack[PC_F_STACK];
    F sstack[PC_F_STACK * PC_F_STATUS_SIZE];
    MPI_Request *before = requests_c(requests, n, rstack);
    F *st = before && pc_tracks_any(before, n) ? statuses_f(statuses, n, sstack) : NULL;
    if (!st) {
        if (before)
            release(before, rstack);
        real(count, requests, statuses, ierr);
        return;
    }
    uint64_t t0 = pc_now();
    PC_F_CALL(real(count, requests, st, ierr));
    uint64_t t1 = pc_now();
    if (*ierr == MPI_SUCCESS)
        done_f(PC_DONE_WAITALL, before, st, NULL, n, t0, t1);
    if (st != statuses)
        release(st, sstack);
    release(before, rstack);
}
PC_F_NAMES(f_waitall, mpi_waitall, MPI_WAITALL)

typedef void f_testall_t(F *count, F *requests, F *flag, F *statuses, F *ierr);
static void *real_testall;
static void f_testall(F *count, F *requests, F *flag, F *statuses, F *ierr) {
    f_testall_t *real = PC_F_REAL(f_testall_t *, real_testall, "testall", "MPI_TESTALL");
    if (!pc_on() || *count <= 0) {
        real(count, requests, flag, statuses, ierr);
        return;
    }
    int n = *count;
    MPI_Request rstack[PC_F_STACK];
    F sstack[PC_F_STACK * PC_F_STATUS_SIZE];
    MPI_Request *before = requests_c(requests, n, rstack);
    F *st = before && pc_tracks_any(before, n) ? statuses_f(statuses, n, sstack) : NULL;
    if (!st) {
        if (before)
            release(before, rstack);
        real(count, requests, flag, statuses, ierr);
        return;
    }
    uint64_t t0 = pc_now();
    PC_F_CALL(real(count, requests, flag, st, ierr));
    uint64_t t1 = pc_now();
    if (*ierr == MPI_SUCCESS && *flag)
        done_f(PC_DONE_TESTALL, before, st, NULL, n, t0, t1);
    if (st != statuses)
        release(st, sstack);
    release(before, rstack);
}
PC_F_NAMES(f_testall, mpi_testall, MPI_TESTALL)

typedef void f_waitany_t(F *count, F *requests, F *index, F *status, F *ierr);
static void *real_waitany;
static void f_waitany(F *count, F *requests, F *index, F *status, F *ierr) {
    f_waitany_t *real = PC_F_REAL(f_waitany_t *, real_waitany, "waitany", "MPI_WAITANY");
    if (!pc_on() || *count <= 0) {
        real(count, requests, index, status, ierr);
        return;
    }
    int n = *count;
    MPI_Request rstack[PC_F_STACK];
    MPI_Request *before = requests_c(requests, n, rstack);
    if (!before || !pc_tracks_any(before, n)) {
        if (before)
            release(before, rstack);
        real(count, requests, index, status, ierr);
        return;
    }
    F own[PC_F_STATUS_SIZE];
    F *st = f_status_ignored(status) ? own : status;
    uint64_t t0 = pc_now();
    PC_F_CALL(real(count, requests, index, st, ierr));
    uint64_t t1 = pc_now();
    /* Fortran's index counts from 1. */
    if (*ierr == MPI_SUCCESS && *index != MPI_UNDEFINED && *index >= 1 && *index <= n)
        done_f(PC_DONE_WAITANY, &before[*index - 1], st, NULL, 1, t0, t1);
    release(before, rstack);
}
PC_F_NAMES(f_waitany, mpi_waitany, MPI_WAITANY)

typedef void f_testany_t(F *count, F *requests, F *index, F *flag, F *status, F *ierr);
static void *real_testany;
static void f_testany(F *count, F *requests, F *index, F *flag, F *status, F *ierr) {
    f_testany_t *real = PC_F_REAL(f_testany_t *, real_testany, "testany", "MPI_TESTANY");
    if (!pc_on() || *count <= 0) {
        real(count, requests, index, flag, status, ierr);
        return;
    }
    int n = *count;
    MPI_Request rstack[PC_F_STACK];
    MPI_Request *before = requests_c(requests, n, rstack);
    if (!before || !pc_tracks_any(before, n)) {
        if (before)
            release(before, rstack);
        real(count, requests, index, flag, status, ierr);
        return;
    }
    F own[PC_F_STATUS_SIZE];
    F *st = f_status_ignored(status) ? own : status;
    uint64_t t0 = pc_now();
    PC_F_CALL(real(count, requests, index, flag, st, ierr));
    uint64_t t1 = pc_now();
    if (*ierr == MPI_SUCCESS && *flag && *index != MPI_UNDEFINED && *index >= 1 && *index <= n)
        done_f(PC_DONE_TESTANY, &before[*index - 1], st, NULL, 1, t0, t1);
    release(before, rstack);
}
PC_F_NAMES(f_testany, mpi_testany, MPI_TESTANY)

typedef void f_some_t(F *incount, F *requests, F *outcount, F *indices, F *statuses, F *ierr);

/* Waitsome and Testsome: Fortran's indices count from 1, its statuses are packed. */
static void some_f(int call, f_some_t *real, F *incount, F *requests, F *outcount, F *indices,
                   F *statuses, F *ierr) {
    if (!pc_on() || *incount <= 0) {
        real(incount, requests, outcount, indices, statuses, ierr);
        return;
    }
    int n = *incount;
    MPI_Request rstack[PC_F_STACK];
    F sstack[PC_F_STACK * PC_F_STATUS_SIZE];
    MPI_Request *before = requests_c(requests, n, rstack);
    F *st = before && pc_tracks_any(before, n) ? statuses_f(statuses, n, sstack) : NULL;
    if (!st) {
        if (before)
            release(before, rstack);
        real(incount, requests, outcount, indices, statuses, ierr);
        return;
    }
    uint64_t t0 = pc_now();
    PC_F_CALL(real(incount, requests, outcount, indices, st, ierr));
    uint64_t t1 = pc_now();
    int k = *outcount;
    if (*ierr == MPI_SUCCESS && k != MPI_UNDEFINED && k > 0 && k <= n) {
        int wstack[PC_F_STACK];
        int *which = k <= PC_F_STACK ? wstack : malloc((size_t)k * sizeof(int));
        if (which) {
            for (int j = 0; j < k; j++)
                which[j] = indices[j] - 1;
            done_f(call, before, st, which, k, t0, t1);
            release(which, wstack);
        }
    }
    if (st != statuses)
        release(st, sstack);
    release(before, rstack);
}

static void *real_waitsome;
static void f_waitsome(F *incount, F *requests, F *outcount, F *indices, F *statuses, F *ierr) {
    some_f(PC_DONE_WAITSOME, PC_F_REAL(f_some_t *, real_waitsome, "waitsome", "MPI_WAITSOME"),
           incount, requests, outcount, indices, statuses, ierr);
}
PC_F_NAMES(f_waitsome, mpi_waitsome, MPI_WAITSOME)

static void *real_testsome;
static void f_testsome(F *incount, F *requests, F *outcount, F *indices, F *statuses, F *ierr) {
    some_f(PC_DONE_TESTSOME, PC_F_REAL(f_some_t *, real_testsome, "testsome", "MPI_TESTSOME"),
           incount, requests, outcount, indices, statuses, ierr);
}
PC_F_NAMES(f_testsome, mpi_testsome, MPI_TESTSOME)

typedef void f_request_free_t(F *request, F *ierr);
static void *real_request_free;
static void f_request_free(F *request, F *ierr) {
    if (pc_on())
        pc_forget_request(PC_REAL(PMPI_Request_f2c)(*request));
    PC_F_CALL(PC_F_REAL(f_request_free_t *, real_request_free, "request_free",
                        "MPI_REQUEST_FREE")(request, ierr));
}
PC_F_NAMES(f_request_free, mpi_request_free, MPI_REQUEST_FREE)

/* ---- collectives ------------------------------------------------------------------------- */

#define PC_F_TIMED(CALL, ARGS)                                                                \
    do {                                                                                      \
        if (!pc_on()) {                                                                       \
            CALL;                                                                             \
            return;                                                                           \
        }                                                                                     \
        uint64_t t0 = pc_now();                                                               \
        PC_F_CALL(CALL);                                                                      \
        uint64_t t1 = pc_now();                                                               \
        if (*ierr == MPI_SUCCESS)                                                             \
            pc_coll(ARGS, t0, t1);                                                            \
    } while (0)

typedef void f_barrier_t(F *comm, F *ierr);
static void *real_barrier;
static void f_barrier(F *comm, F *ierr) {
    f_barrier_t *real = PC_F_REAL(f_barrier_t *, real_barrier, "barrier", "MPI_BARRIER");
    struct pc_coll_args a = {.op = PC_BARRIER, .root = -1};
    if (pc_on())
        a.comm = comm_c(comm);
    PC_F_TIMED(real(comm, ierr), &a);
}
PC_F_NAMES(f_barrier, mpi_barrier, MPI_BARRIER)

typedef void f_bcast_t(void *buf, F *count, F *type, F *root, F *comm, F *ierr);
static void *real_bcast;
static void f_bcast(void *buf, F *count, F *type, F *root, F *comm, F *ierr) {
    f_bcast_t *real = PC_F_REAL(f_bcast_t *, real_bcast, "bcast", "MPI_BCAST");
    struct pc_coll_args a = {.op = PC_BCAST, .root = *root, .sendcount = *count};
    if (pc_on()) {
        a.comm = comm_c(comm);
        a.sendtype = type_c(type);
    }
    PC_F_TIMED(real(buf, count, type, root, comm, ierr), &a);
}
PC_F_NAMES(f_bcast, mpi_bcast, MPI_BCAST)

typedef void f_reduce_t(void *sendbuf, void *recvbuf, F *count, F *type, F *op, F *root, F *comm,
                        F *ierr);
static void *real_reduce;
static void f_reduce(void *sendbuf, void *recvbuf, F *count, F *type, F *op, F *root, F *comm,
                     F *ierr) {
    f_reduce_t *real = PC_F_REAL(f_reduce_t *, real_reduce, "reduce", "MPI_REDUCE");
    struct pc_coll_args a = {.op = PC_REDUCE, .root = *root, .sendcount = *count};
    if (pc_on()) {
        a.comm = comm_c(comm);
        a.sendtype = type_c(type);
    }
    PC_F_TIMED(real(sendbuf, recvbuf, count, type, op, root, comm, ierr), &a);
}
PC_F_NAMES(f_reduce, mpi_reduce, MPI_REDUCE)

typedef void f_allreduce_t(void *sendbuf, void *recvbuf, F *count, F *type, F *op, F *comm,
                           F *ierr);
static void *real_allreduce;
static void f_allreduce(void *sendbuf, void *recvbuf, F *count, F *type, F *op, F *comm,
                        F *ierr) {
    f_allreduce_t *real = PC_F_REAL(f_allreduce_t *, real_allreduce, "allreduce", "MPI_ALLREDUCE");
    struct pc_coll_args a = {.op = PC_ALLREDUCE, .root = -1, .sendcount = *count};
    if (pc_on()) {
        a.comm = comm_c(comm);
        a.sendtype = type_c(type);
    }
    PC_F_TIMED(real(sendbuf, recvbuf, count, type, op, comm, ierr), &a);
}
PC_F_NAMES(f_allreduce, mpi_allreduce, MPI_ALLREDUCE)

typedef void f_reduce_scatter_t(void *sendbuf, void *recvbuf, F *recvcounts, F *type, F *op,
                                F *comm, F *ierr);
static void *real_reduce_scatter;
static void f_reduce_scatter(void *sendbuf, void *recvbuf, F *recvcounts, F *type, F *op,
                             F *comm, F *ierr) {
    f_reduce_scatter_t *real = PC_F_REAL(f_reduce_scatter_t *, real_reduce_scatter,
                                         "reduce_scatter", "MPI_REDUCE_SCATTER");
    struct pc_coll_args a = {.op = PC_REDUCE_SCATTER, .root = -1, .recvcounts = recvcounts};
    if (pc_on()) {
        a.comm = comm_c(comm);
        a.sendtype = type_c(type);
    }
    PC_F_TIMED(real(sendbuf, recvbuf, recvcounts, type, op, comm, ierr), &a);
}
PC_F_NAMES(f_reduce_scatter, mpi_reduce_scatter, MPI_REDUCE_SCATTER)

/* alltoall, allgather: (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm) */
typedef void f_all_t(void *sendbuf, F *sendcount, F *sendtype, void *recvbuf, F *recvcount,
                     F *recvtype, F *comm, F *ierr);

#define PC_F_ALL(name, lower, upper, OP)                                                      \
    static void *real_##name;                                                                 \
    static void f_##name(void *sendbuf, F *sendcount, F *sendtype, void *recvbuf,             \
                         F *recvcount, F *recvtype, F *comm, F *ierr) {                       \
        f_all_t *real = PC_F_REAL(f_all_t *, real_##name, #name, #upper);                     \
        struct pc_coll_args a = {.op = OP, .root = -1};                                       \
        if (pc_on()) {                                                                        \
            a.comm = comm_c(comm);                                                            \
            a.send_in_place = f_in_place(sendbuf);                                            \
            a.sendcount = *sendcount;                                                         \
            if (!a.send_in_place)                                                             \
                a.sendtype = type_c(sendtype);                                                \
            a.recvcount = *recvcount;                                                         \
            a.recvtype = type_c(recvtype);                                                    \
        }                                                                                     \
        PC_F_TIMED(real(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,     \
                        ierr),                                                                \
                   &a);                                                                       \
    }                                                                                         \
    PC_F_NAMES(f_##name, lower, upper)

PC_F_ALL(alltoall, mpi_alltoall, MPI_ALLTOALL, PC_ALLTOALL)
PC_F_ALL(allgather, mpi_allgather, MPI_ALLGATHER, PC_ALLGATHER)

typedef void f_alltoallv_t(void *sendbuf, F *sendcounts, F *sdispls, F *sendtype, void *recvbuf,
                           F *recvcounts, F *rdispls, F *recvtype, F *comm, F *ierr);
static void *real_alltoallv;
static void f_alltoallv(void *sendbuf, F *sendcounts, F *sdispls, F *sendtype, void *recvbuf,
                        F *recvcounts, F *rdispls, F *recvtype, F *comm, F *ierr) {
    f_alltoallv_t *real = PC_F_REAL(f_alltoallv_t *, real_alltoallv, "alltoallv", "MPI_ALLTOALLV");
    struct pc_coll_args a = {.op = PC_ALLTOALLV, .root = -1};
    if (pc_on()) {
        a.comm = comm_c(comm);
        a.send_in_place = f_in_place(sendbuf);
        if (!a.send_in_place) {
            a.sendcounts = sendcounts;
            a.sendtype = type_c(sendtype);
        }
        a.recvcounts = recvcounts;
        a.recvtype = type_c(recvtype);
    }
    PC_F_TIMED(real(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                    comm, ierr),
               &a);
}
PC_F_NAMES(f_alltoallv, mpi_alltoallv, MPI_ALLTOALLV)

typedef void f_allgatherv_t(void *sendbuf, F *sendcount, F *sendtype, void *recvbuf,
                            F *recvcounts, F *displs, F *recvtype, F *comm, F *ierr);
static void *real_allgatherv;
static void f_allgatherv(void *sendbuf, F *sendcount, F *sendtype, void *recvbuf, F *recvcounts,
                         F *displs, F *recvtype, F *comm, F *ierr) {
    f_allgatherv_t *real =
        PC_F_REAL(f_allgatherv_t *, real_allgatherv, "allgatherv", "MPI_ALLGATHERV");
    struct pc_coll_args a = {.op = PC_ALLGATHERV, .root = -1};
    if (pc_on()) {
        a.comm = comm_c(comm);
        a.send_in_place = f_in_place(sendbuf);
        a.sendcount = *sendcount;
        if (!a.send_in_place)
            a.sendtype = type_c(sendtype);
        a.recvcounts = recvcounts;
        a.recvtype = type_c(recvtype);
    }
    PC_F_TIMED(real(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                    ierr),
               &a);
}
PC_F_NAMES(f_allgatherv, mpi_allgatherv, MPI_ALLGATHERV)

/* The root's rank in `comm`, and whether it is this process. */
static int is_root(F *comm, F *root) {
    int me = -1;
    PC_REAL(PMPI_Comm_rank)(comm_c(comm), &me);
    return me == *root;
}

typedef void f_gather_t(void *sendbuf, F *sendcount, F *sendtype, void *recvbuf, F *recvcount,
                        F *recvtype, F *root, F *comm, F *ierr);
static void *real_gather;
static void f_gather(void *sendbuf, F *sendcount, F *sendtype, void *recvbuf, F *recvcount,
                     F *recvtype, F *root, F *comm, F *ierr) {
    f_gather_t *real = PC_F_REAL(f_gather_t *, real_gather, "gather", "MPI_GATHER");
    struct pc_coll_args a = {.op = PC_GATHER, .root = *root};
    if (pc_on()) {
        a.comm = comm_c(comm);
        int here = is_root(comm, root);
        a.send_in_place = here && f_in_place(sendbuf);
        a.sendcount = *sendcount;
        if (!a.send_in_place)
            a.sendtype = type_c(sendtype);
        if (here) {
            a.recvcount = *recvcount;
            a.recvtype = type_c(recvtype);
        }
    }
    PC_F_TIMED(real(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, ierr),
               &a);
}
PC_F_NAMES(f_gather, mpi_gather, MPI_GATHER)

typedef void f_gatherv_t(void *sendbuf, F *sendcount, F *sendtype, void *recvbuf, F *recvcounts,
                         F *displs, F *recvtype, F *root, F *comm, F *ierr);
static void *real_gatherv;
static void f_gatherv(void *sendbuf, F *sendcount, F *sendtype, void *recvbuf, F *recvcounts,
                      F *displs, F *recvtype, F *root, F *comm, F *ierr) {
    f_gatherv_t *real = PC_F_REAL(f_gatherv_t *, real_gatherv, "gatherv", "MPI_GATHERV");
    struct pc_coll_args a = {.op = PC_GATHERV, .root = *root};
    if (pc_on()) {
        a.comm = comm_c(comm);
        int here = is_root(comm, root);
        a.send_in_place = here && f_in_place(sendbuf);
        a.sendcount = *sendcount;
        if (!a.send_in_place)
            a.sendtype = type_c(sendtype);
        if (here) {
            a.recvcounts = recvcounts;
            a.recvtype = type_c(recvtype);
        }
    }
    PC_F_TIMED(real(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root,
                    comm, ierr),
               &a);
}
PC_F_NAMES(f_gatherv, mpi_gatherv, MPI_GATHERV)

typedef void f_scatter_t(void *sendbuf, F *sendcount, F *sendtype, void *recvbuf, F *recvcount,
                         F *recvtype, F *root, F *comm, F *ierr);
static void *real_scatter;
static void f_scatter(void *sendbuf, F *sendcount, F *sendtype, void *recvbuf, F *recvcount,
                      F *recvtype, F *root, F *comm, F *ierr) {
    f_scatter_t *real = PC_F_REAL(f_scatter_t *, real_scatter, "scatter", "MPI_SCATTER");
    struct pc_coll_args a = {.op = PC_SCATTER, .root = *root};
    if (pc_on()) {
        a.comm = comm_c(comm);
        int here = is_root(comm, root);
        a.recv_in_place = here && f_in_place(recvbuf);
        if (here) {
            a.sendcount = *sendcount;
            a.sendtype = type_c(sendtype);
        }
        a.recvcount = *recvcount;
        if (!a.recv_in_place)
            a.recvtype = type_c(recvtype);
    }
    PC_F_TIMED(real(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, ierr),
               &a);
}
PC_F_NAMES(f_scatter, mpi_scatter, MPI_SCATTER)

typedef void f_scatterv_t(void *sendbuf, F *sendcounts, F *displs, F *sendtype, void *recvbuf,
                          F *recvcount, F *recvtype, F *root, F *comm, F *ierr);
static void *real_scatterv;
static void f_scatterv(void *sendbuf, F *sendcounts, F *displs, F *sendtype, void *recvbuf,
                       F *recvcount, F *recvtype, F *root, F *comm, F *ierr) {
    f_scatterv_t *real = PC_F_REAL(f_scatterv_t *, real_scatterv, "scatterv", "MPI_SCATTERV");
    struct pc_coll_args a = {.op = PC_SCATTERV, .root = *root};
    if (pc_on()) {
        a.comm = comm_c(comm);
        int here = is_root(comm, root);
        a.recv_in_place = here && f_in_place(recvbuf);
        if (here) {
            a.sendcounts = sendcounts;
            a.sendtype = type_c(sendtype);
        }
        a.recvcount = *recvcount;
        if (!a.recv_in_place)
            a.recvtype = type_c(recvtype);
    }
    PC_F_TIMED(real(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
                    comm, ierr),
               &a);
}
PC_F_NAMES(f_scatterv, mpi_scatterv, MPI_SCATTERV)
