/* An independent ping-pong between ranks 0 and 1, for comparing with
 * `perfcompose calibrate network` (scripts/bench-network). For each size from 8 B
 * doubling to MAX_BYTES: two warm-up round trips, then REPS batches of round trips,
 * each batch as many round trips as fill about a millisecond; prints one JSON line per
 * batch on rank 0: {"bytes": N, "seconds": one-way time}.
 * Usage: mpirun -np 2 ./pingpong MAX_BYTES REPS */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static double trips(int rank, char *buf, int bytes, long iters) {
    double t0 = MPI_Wtime();
    for (long i = 0; i < iters; i++) {
        if (rank == 0) {
            MPI_Send(buf, bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(buf, bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(buf, bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
        }
    }
    return (MPI_Wtime() - t0) / (double)iters;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    long max_bytes = argc > 1 ? atol(argv[1]) : 16L << 20;
    int reps = argc > 2 ? atoi(argv[2]) : 15;
    char *buf = calloc((size_t)max_bytes, 1);
    for (long bytes = 8; bytes <= max_bytes; bytes *= 2) {
        trips(rank, buf, (int)bytes, 2);
        double once = trips(rank, buf, (int)bytes, 1);
        long iters = once > 0 ? (long)(1e-3 / once) + 1 : 1;
        if (iters > 100000) iters = 100000;
        MPI_Bcast(&iters, 1, MPI_LONG, 0, MPI_COMM_WORLD);
        for (int r = 0; r < reps; r++) {
            double rtt = trips(rank, buf, (int)bytes, iters);
            if (rank == 0) printf("{\"bytes\": %ld, \"seconds\": %.9e}\n", bytes, rtt / 2);
        }
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
