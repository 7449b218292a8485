// SPDX-License-Identifier: BSD-3-Clause
/* examples.c - small programs of the kind every MPI ships as its first
 * examples (written here, not copied):
 *   hello         every rank reports rank, size, host and library; rank 0
 *                 gathers and checks them
 *   ring          a token goes round the ring 10 times, decremented by rank
 *                 0 at each lap; every rank counts what it passed on
 *   connectivity  every pair of ranks exchanges, both ways, blocking, one
 *                 pair at a time, checked (8 B and 64 KiB + 1) */
#include "common.h"

static void case_hello(void)
{
    char name[MPI_MAX_PROCESSOR_NAME], lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len, ver, sub;
    CHK(MPI_Get_processor_name(name, &len));
    CHK(MPI_Get_library_version(lib, &len));
    CHK(MPI_Get_version(&ver, &sub));
    EXPECT(ver >= 3, "MPI version %d.%d", ver, sub);
    int info[2] = {me, np}, *all = xmalloc(sizeof(int) * 2 * np);
    CHK(MPI_Gather(info, 2, MPI_INT, all, 2, MPI_INT, 0, MPI_COMM_WORLD));
    if (me == 0) {
        for (int r = 0; r < np; r++)
            EXPECT(all[2 * r] == r && all[2 * r + 1] == np, "hello from rank %d says %d of %d", r, all[2 * r],
                   all[2 * r + 1]);
        char *nl = strchr(lib, '\n');
        if (nl) *nl = 0;
        printf("NOTE: hello, world: %d ranks answered on %s (MPI %d.%d, %.60s)\n", np, name, ver, sub, lib);
    }
    free(all);
}

static void case_ring(void)
{
    int next = (me + 1) % np, prev = (me + np - 1) % np, token = 0, passed = 0;
    MPI_Status st;
    if (me == 0) {
        token = 10;
        CHK(MPI_Send(&token, 1, MPI_INT, next, 201, MPI_COMM_WORLD));
    }
    for (;;) {
        CHK(MPI_Recv(&token, 1, MPI_INT, prev, 201, MPI_COMM_WORLD, &st));
        EXPECT(st.MPI_SOURCE == prev && st.MPI_TAG == 201, "ring: status %d/%d", st.MPI_SOURCE, st.MPI_TAG);
        if (me == 0) token--;
        EXPECT(token == 10 - passed - (me == 0), "ring: token %d at lap %d", token, passed);
        CHK(MPI_Send(&token, 1, MPI_INT, next, 201, MPI_COMM_WORLD));
        passed++;
        if (token == 0) break;
    }
    /* rank 0 takes the last 0 back */
    if (me == 0) CHK(MPI_Recv(&token, 1, MPI_INT, prev, 201, MPI_COMM_WORLD, &st));
    EXPECT(passed == (me == 0 ? 10 : 11), "ring: passed the token on %d times, expected %d", passed,
           me == 0 ? 10 : 11);
    int all;
    CHK(MPI_Allreduce(&passed, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    EXPECT(all == 10 + 11 * (np - 1), "ring: %d passes in all, expected %d", all, 10 + 11 * (np - 1));
}

static void case_connectivity(void)
{
    static const size_t ns[] = {8, 65537};
    unsigned char *sb = xmalloc(65537), *rb = xmalloc(65537 + 16);
    int pairs = 0;
    for (int i = 0; i < np; i++)
        for (int j = i + 1; j < np; j++) {
            for (int k = 0; k < 2; k++) {
                size_t n = ns[k];
                MPI_Status st;
                if (me == i) {
                    fill(sb, n, me, j * 2 + k);
                    CHK(MPI_Send(sb, (int)n, MPI_BYTE, j, 301, MPI_COMM_WORLD));
                    CHK(MPI_Recv(rb, (int)n + 16, MPI_BYTE, j, 301, MPI_COMM_WORLD, &st));
                    expect_status(&st, j, 301, MPI_BYTE, n, "connectivity %d <-> %d", i, j);
                    expect_bytes(rb, n, j, i * 2 + k, "connectivity %d <- %d", i, j);
                } else if (me == j) {
                    CHK(MPI_Recv(rb, (int)n + 16, MPI_BYTE, i, 301, MPI_COMM_WORLD, &st));
                    expect_status(&st, i, 301, MPI_BYTE, n, "connectivity %d <-> %d", i, j);
                    expect_bytes(rb, n, i, j * 2 + k, "connectivity %d -> %d", i, j);
                    fill(sb, n, me, i * 2 + k);
                    CHK(MPI_Send(sb, (int)n, MPI_BYTE, i, 301, MPI_COMM_WORLD));
                }
            }
            pairs++;
        }
    CHK(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0) printf("NOTE: connectivity: all %d pairs of %d ranks talk\n", pairs, np);
    free(sb);
    free(rb);
}

int main(int argc, char **argv)
{
    static const struct tcase cases[] = {{"hello", case_hello}, {"ring", case_ring},
                                         {"connectivity", case_connectivity}, {NULL, NULL}};
    init(&argc, &argv);
    return run_cases(argc, argv, cases);
}
