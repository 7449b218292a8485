// SPDX-License-Identifier: BSD-3-Clause
/* ob1_eager.c - the eager pair of bench_engine.c through Open MPI: one rank
 * posts a receive from itself, sends itself 8 bytes and waits for both,
 * N times.  Run by bench/bench_engine.sh under callgrind with
 * `--mca pml ob1 --mca btl self` (the self BTL stands where bench_engine's
 * null transport does) and --toggle-collect=ob1_pairs, so that only the
 * pairs are counted (MPI_Init and MPI_Finalize are not).
 *
 *   mpicc -O2 bench/ob1_eager.c -o ob1_eager
 *   mpirun -n 1 --mca pml ob1 --mca btl self ./ob1_eager N
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) void ob1_pairs(int n, int rank);
__attribute__((noinline)) void ob1_pairs(int n, int rank)
{
    char sbuf[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, rbuf[8];
    MPI_Request rq[2];
    for (int i = 0; i < n; i++) {
        MPI_Irecv(rbuf, 8, MPI_BYTE, rank, 1, MPI_COMM_WORLD, &rq[0]);
        MPI_Isend(sbuf, 8, MPI_BYTE, rank, 1, MPI_COMM_WORLD, &rq[1]);
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        if (rbuf[7] != 8)
            MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

int main(int argc, char **argv)
{
    int rank, n = argc > 1 ? atoi(argv[1]) : 1000;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    ob1_pairs(n, rank);
    printf("%d 8-byte eager pairs through ob1\n", n);
    MPI_Finalize();
    return 0;
}
