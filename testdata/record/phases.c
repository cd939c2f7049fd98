/* A small MPI program for `perfcompose record`'s tests: a ring, a halo exchange, an
 * allreduce, a communicator split, receives from MPI_ANY_SOURCE, every collective the
 * recorder covers, a cancelled receive, and two calls it does not cover (MPI_Iprobe,
 * MPI_Scan). It checks its own
 * results and exits with status 1 on a wrong one, so that a recorder that changed what the
 * program computes fails the test. Runs on any number of processes; `phases fail` exits
 * with status 3 instead (a program that fails).
 *
 *     mpicc -O1 -o phases phases.c && mpirun -np 4 ./phases */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

#define CHECK(cond)                                                                           \
    do {                                                                                      \
        if (!(cond)) {                                                                        \
            fprintf(stderr, "rank %d: check failed at line %d: %s\n", rank, __LINE__, #cond); \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                     \
        }                                                                                     \
    } while (0)

/* Some computation between the messages (about `n` multiply-adds). */
static double work(long n) {
    volatile double x = 1.0;
    for (long i = 0; i < n; i++)
        x = x * 1.0000001 + 1e-9;
    return x;
}

static void ring(void) {
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int token = rank, got = -1;
    for (int it = 0; it < 3; it++) {
        MPI_Request r[2];
        MPI_Irecv(&got, 1, MPI_INT, prev, 10 + it, MPI_COMM_WORLD, &r[0]);
        MPI_Isend(&token, 1, MPI_INT, next, 10 + it, MPI_COMM_WORLD, &r[1]);
        work(200000);
        MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        CHECK(got == ((rank - it - 1) % size + size) % size);
        token = got;
    }
    /* A blocking ring with MPI_Send / MPI_Recv: even ranks send first. */
    double big[4096] = {0}, in[4096];
    big[0] = rank;
    if (rank % 2 == 0) {
        MPI_Send(big, 4096, MPI_DOUBLE, next, 20, MPI_COMM_WORLD);
        MPI_Recv(in, 4096, MPI_DOUBLE, prev, 20, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(in, 4096, MPI_DOUBLE, prev, 20, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(big, 4096, MPI_DOUBLE, next, 20, MPI_COMM_WORLD);
    }
    CHECK(in[0] == prev);
}

/* A 1-D halo exchange, not periodic: the ends talk to MPI_PROC_NULL. */
static void halo(void) {
    enum { N = 1000 };
    double u[N + 2];
    for (int i = 0; i < N + 2; i++)
        u[i] = rank;
    int left = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    int right = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
    for (int step = 0; step < 4; step++) {
        MPI_Status st;
        MPI_Sendrecv(&u[N], 1, MPI_DOUBLE, right, 30, &u[0], 1, MPI_DOUBLE, left, 30,
                     MPI_COMM_WORLD, &st);
        MPI_Sendrecv(&u[1], 1, MPI_DOUBLE, left, 31, &u[N + 1], 1, MPI_DOUBLE, right, 31,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (left != MPI_PROC_NULL)
            CHECK(u[0] == left);
        work(100000);
    }
    /* The same with non-blocking calls and MPI_Waitany / MPI_Waitsome / MPI_Test. */
    MPI_Request r[4];
    int n = 0;
    double l = -1, rr = -1;
    if (left != MPI_PROC_NULL) {
        MPI_Irecv(&l, 1, MPI_DOUBLE, left, 32, MPI_COMM_WORLD, &r[n++]);
        MPI_Issend(&u[1], 1, MPI_DOUBLE, left, 33, MPI_COMM_WORLD, &r[n++]);
    }
    if (right != MPI_PROC_NULL) {
        MPI_Irecv(&rr, 1, MPI_DOUBLE, right, 33, MPI_COMM_WORLD, &r[n++]);
        MPI_Isend(&u[N], 1, MPI_DOUBLE, right, 32, MPI_COMM_WORLD, &r[n++]);
    }
    if (n > 0) {
        int idx;
        MPI_Waitany(n, r, &idx, MPI_STATUS_IGNORE);
        int out, indices[4];
        MPI_Waitsome(n, r, &out, indices, MPI_STATUSES_IGNORE);
        int flag = 0;
        while (!flag)
            MPI_Testall(n, r, &flag, MPI_STATUSES_IGNORE);
    }
    if (left != MPI_PROC_NULL)
        CHECK(l == left);
    if (right != MPI_PROC_NULL)
        CHECK(rr == right);
}

static void collectives(MPI_Comm comm) {
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    double x = me + 1, sum = 0;
    MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, comm);
    CHECK(sum == n * (n + 1) / 2.0);
    MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_DOUBLE, MPI_SUM, comm);
    CHECK(x == sum);
    int b = me == 0 ? 42 : 0;
    MPI_Bcast(&b, 1, MPI_INT, 0, comm);
    CHECK(b == 42);
    double r = 0;
    MPI_Reduce(&sum, &r, 1, MPI_DOUBLE, MPI_MAX, n - 1, comm);
    if (me == n - 1)
        CHECK(r == sum);
    MPI_Barrier(comm);
    int *all = malloc((size_t)n * sizeof(int)), *back = malloc((size_t)n * sizeof(int));
    int *counts = malloc((size_t)n * sizeof(int)), *displs = malloc((size_t)n * sizeof(int));
    for (int i = 0; i < n; i++) {
        all[i] = me * 100 + i;
        counts[i] = 1;
        displs[i] = i;
    }
    MPI_Alltoall(all, 1, MPI_INT, back, 1, MPI_INT, comm);
    for (int i = 0; i < n; i++)
        CHECK(back[i] == i * 100 + me);
    MPI_Alltoallv(all, counts, displs, MPI_INT, back, counts, displs, MPI_INT, comm);
    MPI_Allgather(&me, 1, MPI_INT, back, 1, MPI_INT, comm);
    for (int i = 0; i < n; i++)
        CHECK(back[i] == i);
    MPI_Allgatherv(&me, 1, MPI_INT, back, counts, displs, MPI_INT, comm);
    MPI_Gather(&me, 1, MPI_INT, back, 1, MPI_INT, 0, comm);
    MPI_Gatherv(&me, 1, MPI_INT, back, counts, displs, MPI_INT, 0, comm);
    if (me == 0)
        for (int i = 0; i < n; i++)
            CHECK(back[i] == i);
    int one = -1;
    MPI_Scatter(all, 1, MPI_INT, &one, 1, MPI_INT, 0, comm);
    MPI_Scatterv(all, counts, displs, MPI_INT, &one, 1, MPI_INT, 0, comm);
    int red = -1;
    MPI_Reduce_scatter(all, &red, counts, MPI_INT, MPI_SUM, comm);
    free(all);
    free(back);
    free(counts);
    free(displs);
}

/* Rank 0 takes one message from every other rank, in whatever order they arrive. */
static void any_source(void) {
    if (rank == 0) {
        int seen = 0;
        for (int i = 1; i < size; i++) {
            int v;
            MPI_Status st;
            MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 40, MPI_COMM_WORLD, &st);
            CHECK(v == st.MPI_SOURCE);
            seen += v;
        }
        CHECK(seen == size * (size - 1) / 2);
        for (int i = 1; i < size; i++) {
            int v;
            MPI_Request q;
            MPI_Irecv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &q);
            /* Iprobe is not covered: counted, not traced. */
            int flag = 0;
            MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            MPI_Status st;
            int done = 0;
            while (!done)
                MPI_Test(&q, &done, &st);
            CHECK(v == st.MPI_SOURCE && st.MPI_TAG == 41 + v);
        }
    } else {
        work(50000 * rank);
        MPI_Send(&rank, 1, MPI_INT, 0, 40, MPI_COMM_WORLD);
        MPI_Send(&rank, 1, MPI_INT, 0, 41 + rank, MPI_COMM_WORLD);
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1 && strcmp(argv[1], "fail") == 0) {
        MPI_Finalize();
        return 3;
    }
    work(500000);
    ring();
    halo();
    collectives(MPI_COMM_WORLD);
    /* Even and odd ranks, numbered backwards inside each half. */
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &half);
    collectives(half);
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    collectives(dup);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&half);
    any_source();
    /* A receive nobody sends to, cancelled: left out of the trace. */
    MPI_Request never;
    int nothing;
    MPI_Irecv(&nothing, 1, MPI_INT, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &never);
    MPI_Cancel(&never);
    MPI_Status cancelled;
    MPI_Wait(&never, &cancelled);
    int flag = 0;
    MPI_Test_cancelled(&cancelled, &flag);
    CHECK(flag);
    /* Scan is not covered: counted, not traced. */
    int s = 1, prefix = 0;
    MPI_Scan(&s, &prefix, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(prefix == rank + 1);
    work(300000);
    MPI_Finalize();
    return 0;
}
