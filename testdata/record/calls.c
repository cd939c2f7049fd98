/* The recorder's cost per call, in instructions (valgrind's callgrind counts them the same
 * on a busy machine): N rounds of MPI_Isend to itself, MPI_Recv and MPI_Wait on one process,
 * three recorded calls each. docs/mpi.md has the commands and the figure.
 *
 *     mpicc -O2 -o calls calls.c && mpirun -np 1 ./calls 100000 */
#include <mpi.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int n = argc > 1 ? atoi(argv[1]) : 100000, me, x = 1, y;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    for (int i = 0; i < n; i++) {
        MPI_Request q;
        MPI_Isend(&x, 1, MPI_INT, me, 0, MPI_COMM_WORLD, &q);
        MPI_Recv(&y, 1, MPI_INT, me, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return 0;
}
