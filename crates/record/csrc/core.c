/* The recorder's state: the raw log of one process, the requests and communicators it
 * tracks, and what each covered call writes. The wrappers (c_api.c, fortran.c) time the
 * real call and hand its arguments here. */
#define _GNU_SOURCE
#include "record.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct pc_real_table pc_real;
int pc_active;
int pc_in_fortran;

void *pc_resolve(const char *name) {
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "perfcompose record: the MPI library has no %s (%s)\n", name, dlerror());
        abort();
    }
    return f;
}

uint64_t pc_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t realtime_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- the log: records buffered, written with write(2) when the buffer fills ----------- */

#define PC_BUFFER (1u << 20)
static char log_buffer[PC_BUFFER];
static size_t log_used;
static int log_fd = -1;
static pid_t log_pid;
static int log_failed;

static void log_flush(void) {
    /* A child forked after MPI_Init inherits the buffer; only the recording process writes. */
    if (log_fd < 0 || getpid() != log_pid)
        return;
    size_t off = 0;
    while (off < log_used) {
        ssize_t w = write(log_fd, log_buffer + off, log_used - off);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (!log_failed)
                fprintf(stderr, "perfcompose record: writing the raw log failed: %s\n",
                        strerror(errno));
            log_failed = 1;
            break;
        }
        off += (size_t)w;
    }
    log_used = 0;
}

static void log_bytes(const void *p, size_t n) {
    if (log_used + n > PC_BUFFER)
        log_flush();
    if (n > PC_BUFFER) {
        /* Larger than the buffer (a huge communicator): straight through. */
        const char *c = p;
        while (n > 0 && log_fd >= 0) {
            ssize_t w = write(log_fd, c, n);
            if (w < 0) {
                if (errno == EINTR)
                    continue;
                log_failed = 1;
                return;
            }
            c += w;
            n -= (size_t)w;
        }
        return;
    }
    memcpy(log_buffer + log_used, p, n);
    log_used += n;
}

static void log_record(uint32_t kind, uint64_t t0, uint64_t t1, const int64_t a[6],
                       const int64_t *extra, uint32_t nextra) {
    pc_rec r;
    r.kind = kind;
    r.nextra = nextra;
    r.t0 = t0;
    r.t1 = t1;
    memcpy(r.a, a, sizeof r.a);
    log_bytes(&r, sizeof r);
    if (nextra)
        log_bytes(extra, (size_t)nextra * sizeof(int64_t));
}

/* A string as 8-byte values (zero padded); returns how many. */
static uint32_t pack_string(const char *s, size_t len, int64_t *out, uint32_t max) {
    uint32_t n = (uint32_t)((len + 7) / 8);
    if (n > max)
        n = max;
    memset(out, 0, (size_t)n * 8);
    memcpy(out, s, len < (size_t)n * 8 ? len : (size_t)n * 8);
    return n;
}

static void at_exit_flush(void) { log_flush(); }

/* ---- open addressing tables keyed by handle ------------------------------------------- */

/* Linear probing with backward-shift deletion; keys are non-zero handles. */
struct slot {
    uintptr_t key;
    void *value;
};

struct table {
    struct slot *slots;
    size_t cap; /* a power of two, or 0 */
    size_t len;
};

static size_t hash_key(uintptr_t k) {
    uint64_t x = (uint64_t)k;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)x;
}

static void *table_get(const struct table *t, uintptr_t key) {
    if (t->cap == 0)
        return NULL;
    size_t m = t->cap - 1;
    for (size_t i = hash_key(key) & m;; i = (i + 1) & m) {
        if (t->slots[i].key == key)
            return t->slots[i].value;
        if (t->slots[i].key == 0)
            return NULL;
    }
}

static void table_put(struct table *t, uintptr_t key, void *value);

static void table_grow(struct table *t) {
    struct table bigger = {0};
    bigger.cap = t->cap ? t->cap * 2 : 64;
    bigger.slots = calloc(bigger.cap, sizeof(struct slot));
    if (!bigger.slots) {
        fprintf(stderr, "perfcompose record: out of memory\n");
        abort();
    }
    for (size_t i = 0; i < t->cap; i++)
        if (t->slots[i].key)
            table_put(&bigger, t->slots[i].key, t->slots[i].value);
    free(t->slots);
    *t = bigger;
}

static void table_put(struct table *t, uintptr_t key, void *value) {
    if ((t->len + 1) * 2 > t->cap)
        table_grow(t);
    size_t m = t->cap - 1;
    for (size_t i = hash_key(key) & m;; i = (i + 1) & m) {
        if (t->slots[i].key == key) {
            t->slots[i].value = value;
            return;
        }
        if (t->slots[i].key == 0) {
            t->slots[i].key = key;
            t->slots[i].value = value;
            t->len++;
            return;
        }
    }
}

/* Remove `key`; returns its value. */
static void *table_take(struct table *t, uintptr_t key) {
    if (t->cap == 0)
        return NULL;
    size_t m = t->cap - 1;
    size_t i = hash_key(key) & m;
    while (t->slots[i].key != key) {
        if (t->slots[i].key == 0)
            return NULL;
        i = (i + 1) & m;
    }
    void *value = t->slots[i].value;
    t->slots[i].key = 0;
    t->len--;
    /* Shift back the entries of the same run that probed past the hole. */
    for (size_t j = (i + 1) & m; t->slots[j].key != 0; j = (j + 1) & m) {
        size_t home = hash_key(t->slots[j].key) & m;
        /* Move j into the hole i unless its home lies cyclically in (i, j]. */
        int in_range = (i <= j) ? (home > i && home <= j) : (home > i || home <= j);
        if (!in_range) {
            t->slots[i] = t->slots[j];
            t->slots[j].key = 0;
            i = j;
        }
    }
    return value;
}

/* ---- communicators: members as world ranks -------------------------------------------- */

struct comm_info {
    int64_t id;
    int refs; /* the table's entry and each tracked request on it */
    int size;
    int rank;
    int identity; /* the members are the world ranks 0..size-1 in order */
    int *world;   /* world rank of each member (NULL when identity) */
};

static struct table comms;
static struct comm_info world_info;
static MPI_Group world_group;
static int64_t next_comm_id;
static int world_rank, world_size;

static int to_world(const struct comm_info *c, int r) {
    if (r < 0 || r >= c->size)
        return -1;
    return c->identity ? r : c->world[r];
}

static void log_comm(const struct comm_info *c) {
    int64_t a[6] = {c->id, c->size, c->rank, 0, 0, 0};
    int64_t stack[64];
    int64_t *members = c->size <= 64 ? stack : malloc((size_t)c->size * sizeof(int64_t));
    if (!members)
        return;
    for (int i = 0; i < c->size; i++)
        members[i] = to_world(c, i);
    uint64_t t = pc_now();
    log_record(PC_K_COMM, t, t, a, members, (uint32_t)c->size);
    if (members != stack)
        free(members);
}

/* The communicator's members, looked up once per communicator (NULL: an
 * intercommunicator, which the recorder does not cover). */
static struct comm_info *comm_of(MPI_Comm comm) {
    if (comm == MPI_COMM_WORLD)
        return &world_info;
    struct comm_info *c = table_get(&comms, (uintptr_t)comm);
    if (c)
        return c;
    int inter = 0;
    if (PC_REAL(PMPI_Comm_test_inter)(comm, &inter) != MPI_SUCCESS || inter)
        return NULL;
    c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    PC_REAL(PMPI_Comm_size)(comm, &c->size);
    PC_REAL(PMPI_Comm_rank)(comm, &c->rank);
    c->world = malloc((size_t)c->size * sizeof(int));
    int *ranks = malloc((size_t)c->size * sizeof(int));
    MPI_Group group;
    if (!c->world || !ranks || PC_REAL(PMPI_Comm_group)(comm, &group) != MPI_SUCCESS) {
        free(ranks);
        free(c->world);
        free(c);
        return NULL;
    }
    for (int i = 0; i < c->size; i++)
        ranks[i] = i;
    PC_REAL(PMPI_Group_translate_ranks)(group, c->size, ranks, world_group, c->world);
    PC_REAL(PMPI_Group_free)(&group);
    free(ranks);
    c->identity = c->size <= world_size;
    for (int i = 0; i < c->size && c->identity; i++)
        c->identity = c->world[i] == i;
    if (c->identity) {
        free(c->world);
        c->world = NULL;
    }
    c->id = next_comm_id++;
    c->refs = 1;
    table_put(&comms, (uintptr_t)comm, c);
    log_comm(c);
    return c;
}

static void comm_release(struct comm_info *c) {
    if (c && c != &world_info && --c->refs == 0) {
        free(c->world);
        free(c);
    }
}

/* Requests pending on a freed communicator keep its members until they complete. */
void pc_forget_comm(MPI_Comm comm) {
    if (!pc_active || comm == MPI_COMM_WORLD)
        return;
    comm_release(table_take(&comms, (uintptr_t)comm));
}

/* ---- the calls not covered ------------------------------------------------------------ */

static uint64_t *uncovered_counts;

void pc_uncovered(int which) {
    if (!pc_active || which < 0 || which >= pc_uncovered_count)
        return;
    uncovered_counts[which]++;
}

/* Calls on intercommunicators, which the recorder does not cover either. */
static uint64_t intercomm_p2p, intercomm_coll;

/* ---- start and stop ------------------------------------------------------------------- */

void pc_start(int thread_level) {
    const char *dir = getenv("PERFCOMPOSE_RECORD_DIR");
    if (!dir || !*dir)
        return;
    MPI_Comm world = MPI_COMM_WORLD;
    PC_REAL(PMPI_Comm_rank)(world, &world_rank);
    PC_REAL(PMPI_Comm_size)(world, &world_size);
    PC_REAL(PMPI_Comm_group)(world, &world_group);
    char path[PATH_MAX];
    log_pid = getpid();
    int n = snprintf(path, sizeof path, "%s/%ld.bin", dir, (long)log_pid);
    if (n < 0 || (size_t)n >= sizeof path) {
        fprintf(stderr, "perfcompose record: the directory name is too long: %s\n", dir);
        return;
    }
    log_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (log_fd < 0) {
        fprintf(stderr, "perfcompose record: rank %d cannot write %s: %s\n", world_rank, path,
                strerror(errno));
        return;
    }
    uncovered_counts = calloc((size_t)pc_uncovered_count, sizeof(uint64_t));
    if (!uncovered_counts) {
        close(log_fd);
        log_fd = -1;
        return;
    }
    log_bytes(PC_MAGIC, 8);
    world_info.id = 0;
    world_info.size = world_size;
    world_info.rank = world_rank;
    world_info.identity = 1;
    next_comm_id = 1;
    atexit(at_exit_flush);

    char host[256] = {0};
    gethostname(host, sizeof host - 1);
    int64_t name[32];
    size_t len = strlen(host);
    uint32_t nname = pack_string(host, len, name, 32);
    uint64_t t = pc_now();
    int64_t a[6] = {world_rank, world_size, (int64_t)realtime_ns(), thread_level, (int64_t)log_pid,
                    (int64_t)len};
    log_record(PC_K_START, t, t, a, name, nname);
    log_comm(&world_info);
    pc_active = 1;
}

static void log_uncovered(const char *name, uint64_t count) {
    int64_t packed[16];
    size_t len = strlen(name);
    uint32_t n = pack_string(name, len, packed, 16);
    int64_t a[6] = {(int64_t)count, (int64_t)len, 0, 0, 0, 0};
    uint64_t t = pc_now();
    log_record(PC_K_UNCOVERED, t, t, a, packed, n);
}

void pc_stop(void) {
    if (!pc_active)
        return;
    uint64_t t = pc_now();
    for (int i = 0; i < pc_uncovered_count; i++)
        if (uncovered_counts[i])
            log_uncovered(pc_uncovered_names[i], uncovered_counts[i]);
    if (intercomm_p2p)
        log_uncovered("point-to-point on an intercommunicator", intercomm_p2p);
    if (intercomm_coll)
        log_uncovered("collective on an intercommunicator", intercomm_coll);
    int64_t a[6] = {(int64_t)realtime_ns(), 0, 0, 0, 0, 0};
    log_record(PC_K_END, t, t, a, NULL, 0);
    log_flush();
    close(log_fd);
    log_fd = -1;
    pc_active = 0;
}

/* ---- point to point ------------------------------------------------------------------- */

static int64_t bytes_of(int count, MPI_Datatype type) {
    int size = 0;
    if (count <= 0 || PC_REAL(PMPI_Type_size)(type, &size) != MPI_SUCCESS)
        return 0;
    return (int64_t)count * size;
}

/* Bytes a status says were received (counted in MPI_BYTE, so that the receive's datatype,
 * which may be freed by now, is not needed), else the `posted` bytes. */
static int64_t received_bytes(const MPI_Status *st, int64_t posted) {
    int got = 0;
    if (PC_REAL(PMPI_Get_count)(st, MPI_BYTE, &got) == MPI_SUCCESS && got != MPI_UNDEFINED)
        return got;
    return posted;
}

void pc_send(int mode, MPI_Comm comm, int dest, int tag, int count, MPI_Datatype type,
             uint64_t t0, uint64_t t1) {
    if (dest == MPI_PROC_NULL)
        return;
    struct comm_info *c = comm_of(comm);
    if (!c) {
        intercomm_p2p++;
        return;
    }
    int64_t a[6] = {mode, to_world(c, dest), tag, bytes_of(count, type), 0, 0};
    log_record(PC_K_SEND, t0, t1, a, NULL, 0);
}

void pc_recv(MPI_Comm comm, int source, int count, MPI_Datatype type, const MPI_Status *st,
             uint64_t t0, uint64_t t1) {
    if (source == MPI_PROC_NULL || st->MPI_SOURCE == MPI_PROC_NULL)
        return;
    struct comm_info *c = comm_of(comm);
    if (!c) {
        intercomm_p2p++;
        return;
    }
    int64_t a[6] = {to_world(c, st->MPI_SOURCE), st->MPI_TAG, received_bytes(st, bytes_of(count, type)),
                    0, 0, 0};
    log_record(PC_K_RECV, t0, t1, a, NULL, 0);
}

/* A tracked request: enough to write its completion. */
struct request_info {
    int64_t id;
    int is_recv;
    int64_t posted; /* bytes */
    struct comm_info *comm;
};

static struct table requests;
static int64_t next_request_id = 1;

static void request_release(struct request_info *r) {
    if (r) {
        comm_release(r->comm);
        free(r);
    }
}

static void track(MPI_Request request, int is_recv, int64_t posted, struct comm_info *c,
                  int64_t id) {
    struct request_info *r = malloc(sizeof *r);
    if (!r)
        return;
    r->id = id;
    r->is_recv = is_recv;
    r->posted = posted;
    r->comm = c;
    if (c != &world_info)
        c->refs++;
    /* A handle the MPI library reuses for a request the recorder never saw complete. */
    request_release(table_take(&requests, (uintptr_t)request));
    table_put(&requests, (uintptr_t)request, r);
}

void pc_isend(int mode, MPI_Comm comm, int dest, int tag, int count, MPI_Datatype type,
              MPI_Request request, uint64_t t0, uint64_t t1) {
    if (dest == MPI_PROC_NULL || request == MPI_REQUEST_NULL)
        return;
    struct comm_info *c = comm_of(comm);
    if (!c) {
        intercomm_p2p++;
        return;
    }
    int64_t id = next_request_id++;
    int64_t bytes = bytes_of(count, type);
    int64_t a[6] = {mode, to_world(c, dest), tag, bytes, id, 0};
    log_record(PC_K_ISEND, t0, t1, a, NULL, 0);
    track(request, 0, bytes, c, id);
}

void pc_irecv(MPI_Comm comm, int source, int tag, int count, MPI_Datatype type,
              MPI_Request request, uint64_t t0, uint64_t t1) {
    if (source == MPI_PROC_NULL || request == MPI_REQUEST_NULL)
        return;
    struct comm_info *c = comm_of(comm);
    if (!c) {
        intercomm_p2p++;
        return;
    }
    int64_t id = next_request_id++;
    int64_t src = source == MPI_ANY_SOURCE ? -1 : to_world(c, source);
    int64_t bytes = bytes_of(count, type);
    int64_t a[6] = {src, tag == MPI_ANY_TAG ? -1 : tag, bytes, id, 0, 0};
    log_record(PC_K_IRECV, t0, t1, a, NULL, 0);
    track(request, 1, bytes, c, id);
}

void pc_sendrecv(MPI_Comm comm, int dest, int sendtag, int sendcount, MPI_Datatype sendtype,
                 int source, int recvcount, MPI_Datatype recvtype, const MPI_Status *st,
                 uint64_t t0, uint64_t t1) {
    int got = source != MPI_PROC_NULL && st->MPI_SOURCE != MPI_PROC_NULL;
    if (dest == MPI_PROC_NULL && !got)
        return;
    struct comm_info *c = comm_of(comm);
    if (!c) {
        intercomm_p2p++;
        return;
    }
    int64_t a[6] = {-1, sendtag, 0, -1, 0, 0};
    if (dest != MPI_PROC_NULL) {
        a[0] = to_world(c, dest);
        a[2] = bytes_of(sendcount, sendtype);
    }
    if (got) {
        a[3] = to_world(c, st->MPI_SOURCE);
        a[4] = st->MPI_TAG;
        a[5] = received_bytes(st, bytes_of(recvcount, recvtype));
    }
    log_record(PC_K_SENDRECV, t0, t1, a, NULL, 0);
}

int pc_tracks_any(const MPI_Request *reqs, int n) {
    if (requests.len == 0)
        return 0;
    for (int i = 0; i < n; i++)
        if (reqs[i] != MPI_REQUEST_NULL && table_get(&requests, (uintptr_t)reqs[i]))
            return 1;
    return 0;
}

void pc_done(int call, const MPI_Request *reqs, const MPI_Status *statuses, const int *which,
             int n, uint64_t t0, uint64_t t1) {
    if (requests.len == 0 || n <= 0)
        return;
    int64_t stack[4 * 16];
    int64_t *extra = n <= 16 ? stack : malloc((size_t)n * 4 * sizeof(int64_t));
    if (!extra)
        return;
    uint32_t k = 0;
    for (int j = 0; j < n; j++) {
        int i = which ? which[j] : j;
        if (reqs[i] == MPI_REQUEST_NULL)
            continue;
        struct request_info *r = table_take(&requests, (uintptr_t)reqs[i]);
        if (!r)
            continue;
        extra[4 * k] = r->id;
        int cancelled = 0;
        if (statuses)
            PC_REAL(PMPI_Test_cancelled)(&statuses[j], &cancelled);
        if (cancelled) {
            extra[4 * k + 1] = -2;
            extra[4 * k + 2] = 0;
            extra[4 * k + 3] = 0;
        } else if (r->is_recv && statuses) {
            const MPI_Status *st = &statuses[j];
            extra[4 * k + 1] = to_world(r->comm, st->MPI_SOURCE);
            extra[4 * k + 2] = st->MPI_TAG;
            extra[4 * k + 3] = received_bytes(st, r->posted);
        } else {
            extra[4 * k + 1] = -1;
            extra[4 * k + 2] = 0;
            extra[4 * k + 3] = 0;
        }
        k++;
        request_release(r);
    }
    if (k > 0) {
        int64_t a[6] = {call, 0, 0, 0, 0, 0};
        log_record(PC_K_DONE, t0, t1, a, extra, 4 * k);
    }
    if (extra != stack)
        free(extra);
}

void pc_forget_request(MPI_Request request) {
    if (!pc_active || request == MPI_REQUEST_NULL)
        return;
    request_release(table_take(&requests, (uintptr_t)request));
}

/* ---- collectives ---------------------------------------------------------------------- */

/* Per-member byte counts of a v-collective into `out` (from `counts` of `type`). */
static void v_bytes(const int *counts, MPI_Datatype type, int n, int64_t *out) {
    int size = 0;
    PC_REAL(PMPI_Type_size)(type, &size);
    for (int i = 0; i < n; i++)
        out[i] = (int64_t)counts[i] * size;
}

void pc_coll(const struct pc_coll_args *x, uint64_t t0, uint64_t t1) {
    struct comm_info *c = comm_of(x->comm);
    if (!c) {
        intercomm_coll++;
        return;
    }
    int n = c->size;
    int root_here = x->root == c->rank;
    int64_t sent = 0, received = 0, elem = 0;
    int64_t stack[2 * 64];
    int64_t *extra = NULL;
    uint32_t nextra = 0;
    int needs_v = x->op == PC_ALLTOALLV || x->op == PC_ALLGATHERV || x->op == PC_REDUCE_SCATTER ||
                  (x->op == PC_GATHERV && root_here) || (x->op == PC_SCATTERV && root_here);
    if (needs_v) {
        nextra = (uint32_t)(x->op == PC_ALLTOALLV ? 2 * n : n);
        extra = nextra <= 128 ? stack : malloc((size_t)nextra * sizeof(int64_t));
        if (!extra)
            return;
    }
    switch (x->op) {
    case PC_BARRIER:
        break;
    case PC_BCAST:
        sent = received = bytes_of(x->sendcount, x->sendtype);
        break;
    case PC_REDUCE:
    case PC_ALLREDUCE:
        sent = received = bytes_of(x->sendcount, x->sendtype);
        elem = bytes_of(1, x->sendtype);
        break;
    case PC_ALLTOALL:
    case PC_ALLGATHER:
        received = bytes_of(x->recvcount, x->recvtype);
        sent = x->send_in_place ? received : bytes_of(x->sendcount, x->sendtype);
        break;
    case PC_ALLTOALLV:
        v_bytes(x->recvcounts, x->recvtype, n, extra + n);
        if (x->send_in_place)
            memcpy(extra, extra + n, (size_t)n * sizeof(int64_t));
        else
            v_bytes(x->sendcounts, x->sendtype, n, extra);
        break;
    case PC_ALLGATHERV:
        v_bytes(x->recvcounts, x->recvtype, n, extra);
        sent = x->send_in_place ? extra[c->rank] : bytes_of(x->sendcount, x->sendtype);
        break;
    case PC_GATHER:
        if (root_here) {
            received = bytes_of(x->recvcount, x->recvtype);
            sent = x->send_in_place ? received : bytes_of(x->sendcount, x->sendtype);
        } else {
            sent = received = bytes_of(x->sendcount, x->sendtype);
        }
        break;
    case PC_GATHERV:
        if (root_here) {
            v_bytes(x->recvcounts, x->recvtype, n, extra);
            sent = x->send_in_place ? extra[c->rank] : bytes_of(x->sendcount, x->sendtype);
        } else {
            sent = bytes_of(x->sendcount, x->sendtype);
        }
        break;
    case PC_SCATTER:
        if (root_here) {
            sent = bytes_of(x->sendcount, x->sendtype);
            received = x->recv_in_place ? sent : bytes_of(x->recvcount, x->recvtype);
        } else {
            sent = received = bytes_of(x->recvcount, x->recvtype);
        }
        break;
    case PC_SCATTERV:
        if (root_here) {
            v_bytes(x->sendcounts, x->sendtype, n, extra);
            received = x->recv_in_place ? extra[c->rank] : bytes_of(x->recvcount, x->recvtype);
        } else {
            received = bytes_of(x->recvcount, x->recvtype);
        }
        break;
    case PC_REDUCE_SCATTER:
        v_bytes(x->recvcounts, x->sendtype, n, extra);
        elem = bytes_of(1, x->sendtype);
        break;
    }
    int64_t a[6] = {x->op, c->id, x->root, sent, received, elem};
    log_record(PC_K_COLL, t0, t1, a, extra, nextra);
    if (extra && extra != stack)
        free(extra);
}
