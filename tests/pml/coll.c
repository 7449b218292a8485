// SPDX-License-Identifier: BSD-3-Clause
/* coll.c - the collectives Open MPI builds on the PML (coll tuned/basic
 * over point-to-point, libnbc for the nonblocking ones), every result
 * checked: Barrier, Bcast, Reduce, Allreduce, Gather(v), Scatter(v),
 * Allgather(v), Alltoall(v), Reduce_scatter(_block), Scan, Exscan,
 * Ibarrier, Ibcast, Iallreduce, Ialltoall; at 7 ints and at 1 MiB per
 * block. */
#include "common.h"

/* element i of the block rank r contributes (for Alltoall: r*np + dest) */
static int v(int r, long i) { return (int)((i * 31 + r * 17) % 100003) + r; }

#define CHECKV(cond, what, i, got, exp)                                        \
    EXPECT(cond, "%s, count %d: element %ld is %d, expected %d", what, count, (long)(i), (got), (exp))

static void run(int count)
{
    size_t bs = (size_t)count * sizeof(int);
    int *a = xmalloc(bs * np), *b = xmalloc(bs * np + 64), *c = xmalloc(bs * np + 64);
    int *cnt = xmalloc(sizeof(int) * np), *dsp = xmalloc(sizeof(int) * np);
    int *cnt2 = xmalloc(sizeof(int) * np), *dsp2 = xmalloc(sizeof(int) * np);
    long i;

    for (int k = 0; k < 3; k++) CHK(MPI_Barrier(MPI_COMM_WORLD));
    for (int root = 0; root < np; root++) {
        /* Bcast */
        for (i = 0; i < count; i++) a[i] = me == root ? v(root, i) : -1;
        CHK(MPI_Bcast(a, count, MPI_INT, root, MPI_COMM_WORLD));
        for (i = 0; i < count; i++) CHECKV(a[i] == v(root, i), "Bcast", i, a[i], v(root, i));
        /* Reduce: sum and max */
        for (i = 0; i < count; i++) a[i] = v(me, i);
        memset(b, 0, bs);
        CHK(MPI_Reduce(a, b, count, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD));
        if (me == root)
            for (i = 0; i < count; i++) {
                int e = 0;
                for (int r = 0; r < np; r++) e += v(r, i);
                CHECKV(b[i] == e, "Reduce(SUM)", i, b[i], e);
            }
        CHK(MPI_Reduce(a, b, count, MPI_INT, MPI_MAX, root, MPI_COMM_WORLD));
        if (me == root)
            for (i = 0; i < count; i++) {
                int e = v(0, i);
                for (int r = 1; r < np; r++) e = v(r, i) > e ? v(r, i) : e;
                CHECKV(b[i] == e, "Reduce(MAX)", i, b[i], e);
            }
        /* Gather */
        memset(b, 0xff, bs * np);
        CHK(MPI_Gather(a, count, MPI_INT, b, count, MPI_INT, root, MPI_COMM_WORLD));
        if (me == root)
            for (int r = 0; r < np; r++)
                for (i = 0; i < count; i++)
                    CHECKV(b[r * count + i] == v(r, i), "Gather", r * count + i, b[r * count + i], v(r, i));
        /* Gatherv: rank r gives count - r elements, placed with gaps */
        for (int r = 0, off = 0; r < np; r++) {
            cnt[r] = count > np ? count - r : count;
            dsp[r] = off;
            off += cnt[r] + 1;
        }
        for (i = 0; i < (long)count * np + 16; i++) b[i] = -7;
        CHK(MPI_Gatherv(a, cnt[me], MPI_INT, b, cnt, dsp, MPI_INT, root, MPI_COMM_WORLD));
        if (me == root)
            for (int r = 0; r < np; r++) {
                for (i = 0; i < cnt[r]; i++)
                    CHECKV(b[dsp[r] + i] == v(r, i), "Gatherv", dsp[r] + i, b[dsp[r] + i], v(r, i));
                CHECKV(b[dsp[r] + cnt[r]] == -7, "Gatherv (gap)", dsp[r] + cnt[r], b[dsp[r] + cnt[r]], -7);
            }
        /* Scatter: block r of the root's buffer goes to r */
        if (me == root)
            for (int r = 0; r < np; r++)
                for (i = 0; i < count; i++) b[r * count + i] = v(r + 100, i);
        memset(c, 0, bs);
        CHK(MPI_Scatter(b, count, MPI_INT, c, count, MPI_INT, root, MPI_COMM_WORLD));
        for (i = 0; i < count; i++) CHECKV(c[i] == v(me + 100, i), "Scatter", i, c[i], v(me + 100, i));
        /* Scatterv with the Gatherv layout */
        if (me == root)
            for (int r = 0; r < np; r++)
                for (i = 0; i < cnt[r]; i++) b[dsp[r] + i] = v(r + 200, i);
        for (i = 0; i < count + 1; i++) c[i] = -9;
        CHK(MPI_Scatterv(b, cnt, dsp, MPI_INT, c, cnt[me], MPI_INT, root, MPI_COMM_WORLD));
        for (i = 0; i < cnt[me]; i++) CHECKV(c[i] == v(me + 200, i), "Scatterv", i, c[i], v(me + 200, i));
        CHECKV(c[cnt[me]] == -9, "Scatterv (past the end)", (long)cnt[me], c[cnt[me]], -9);
    }
    /* Allreduce: sum, and bitwise xor */
    for (i = 0; i < count; i++) a[i] = v(me, i);
    CHK(MPI_Allreduce(a, b, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    for (i = 0; i < count; i++) {
        int e = 0;
        for (int r = 0; r < np; r++) e += v(r, i);
        CHECKV(b[i] == e, "Allreduce(SUM)", i, b[i], e);
    }
    memcpy(b, a, bs);
    CHK(MPI_Allreduce(MPI_IN_PLACE, b, count, MPI_INT, MPI_BXOR, MPI_COMM_WORLD));
    for (i = 0; i < count; i++) {
        int e = 0;
        for (int r = 0; r < np; r++) e ^= v(r, i);
        CHECKV(b[i] == e, "Allreduce(BXOR, in place)", i, b[i], e);
    }
    /* Allgather, Allgatherv */
    CHK(MPI_Allgather(a, count, MPI_INT, b, count, MPI_INT, MPI_COMM_WORLD));
    for (int r = 0; r < np; r++)
        for (i = 0; i < count; i++)
            CHECKV(b[r * count + i] == v(r, i), "Allgather", r * count + i, b[r * count + i], v(r, i));
    for (int r = 0, off = 0; r < np; r++) {
        cnt[r] = count > np ? count - r : count;
        dsp[r] = off;
        off += cnt[r] + 1;
    }
    for (i = 0; i < (long)count * np + 16; i++) b[i] = -7;
    CHK(MPI_Allgatherv(a, cnt[me], MPI_INT, b, cnt, dsp, MPI_INT, MPI_COMM_WORLD));
    for (int r = 0; r < np; r++) {
        for (i = 0; i < cnt[r]; i++) CHECKV(b[dsp[r] + i] == v(r, i), "Allgatherv", dsp[r] + i, b[dsp[r] + i], v(r, i));
        CHECKV(b[dsp[r] + cnt[r]] == -7, "Allgatherv (gap)", dsp[r] + cnt[r], b[dsp[r] + cnt[r]], -7);
    }
    /* Alltoall: block p of rank r is v(r*np + p, .) */
    for (int p = 0; p < np; p++)
        for (i = 0; i < count; i++) a[p * count + i] = v(me * np + p, i);
    CHK(MPI_Alltoall(a, count, MPI_INT, b, count, MPI_INT, MPI_COMM_WORLD));
    for (int r = 0; r < np; r++)
        for (i = 0; i < count; i++)
            CHECKV(b[r * count + i] == v(r * np + me, i), "Alltoall", r * count + i, b[r * count + i],
                   v(r * np + me, i));
    /* Alltoallv: rank r sends (count - p) - r... counts that differ per pair */
    {
        int sd = 0, rd = 0;
        for (int p = 0; p < np; p++) {
            cnt[p] = count > 2 * np ? count - (me + 2 * p) % np : count;   /* to p */
            dsp[p] = sd;
            sd += cnt[p];
            cnt2[p] = count > 2 * np ? count - (p + 2 * me) % np : count;  /* from p */
            dsp2[p] = rd;
            rd += cnt2[p] + 1;
        }
        for (int p = 0; p < np; p++)
            for (i = 0; i < cnt[p]; i++) a[dsp[p] + i] = v(me * np + p + 50, i);
        for (i = 0; i < (long)count * np + 16; i++) b[i] = -5;
        CHK(MPI_Alltoallv(a, cnt, dsp, MPI_INT, b, cnt2, dsp2, MPI_INT, MPI_COMM_WORLD));
        for (int p = 0; p < np; p++) {
            for (i = 0; i < cnt2[p]; i++)
                CHECKV(b[dsp2[p] + i] == v(p * np + me + 50, i), "Alltoallv", dsp2[p] + i, b[dsp2[p] + i],
                       v(p * np + me + 50, i));
            CHECKV(b[dsp2[p] + cnt2[p]] == -5, "Alltoallv (gap)", dsp2[p] + cnt2[p], b[dsp2[p] + cnt2[p]], -5);
        }
    }
    /* Reduce_scatter: rank r gets cnt[r] sums; Reduce_scatter_block */
    {
        int tot = 0;
        for (int r = 0; r < np; r++) {
            cnt[r] = count > np ? count - r : count;
            dsp[r] = tot;
            tot += cnt[r];
        }
        for (i = 0; i < tot; i++) a[i] = v(me, i);
        CHK(MPI_Reduce_scatter(a, c, cnt, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        for (i = 0; i < cnt[me]; i++) {
            int e = 0;
            for (int r = 0; r < np; r++) e += v(r, dsp[me] + i);
            CHECKV(c[i] == e, "Reduce_scatter", i, c[i], e);
        }
        for (i = 0; i < (long)count * np; i++) a[i] = v(me, i);
        CHK(MPI_Reduce_scatter_block(a, c, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        for (i = 0; i < count; i++) {
            int e = 0;
            for (int r = 0; r < np; r++) e += v(r, (long)me * count + i);
            CHECKV(c[i] == e, "Reduce_scatter_block", i, c[i], e);
        }
    }
    /* Scan, Exscan */
    for (i = 0; i < count; i++) a[i] = v(me, i);
    CHK(MPI_Scan(a, b, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    for (i = 0; i < count; i++) {
        int e = 0;
        for (int r = 0; r <= me; r++) e += v(r, i);
        CHECKV(b[i] == e, "Scan", i, b[i], e);
    }
    CHK(MPI_Exscan(a, b, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    for (i = 0; i < count && me > 0; i++) {
        int e = 0;
        for (int r = 0; r < me; r++) e += v(r, i);
        CHECKV(b[i] == e, "Exscan", i, b[i], e);
    }
    /* nonblocking collectives, two in flight at once */
    {
        MPI_Request rq[3];
        for (i = 0; i < count; i++) {
            a[i] = v(me, i);
            c[i] = me == np - 1 ? v(np - 1 + 300, i) : -1;
        }
        CHK(MPI_Ibarrier(MPI_COMM_WORLD, &rq[0]));
        CHK(MPI_Iallreduce(a, b, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[1]));
        CHK(MPI_Ibcast(c, count, MPI_INT, np - 1, MPI_COMM_WORLD, &rq[2]));
        CHK(MPI_Waitall(3, rq, MPI_STATUSES_IGNORE));
        for (i = 0; i < count; i++) {
            int e = 0;
            for (int r = 0; r < np; r++) e += v(r, i);
            CHECKV(b[i] == e, "Iallreduce", i, b[i], e);
            CHECKV(c[i] == v(np - 1 + 300, i), "Ibcast", i, c[i], v(np - 1 + 300, i));
        }
        for (int p = 0; p < np; p++)
            for (i = 0; i < count; i++) a[p * count + i] = v(me * np + p + 400, i);
        CHK(MPI_Ialltoall(a, count, MPI_INT, b, count, MPI_INT, MPI_COMM_WORLD, &rq[0]));
        int flag = 0;
        while (!flag) CHK(MPI_Test(&rq[0], &flag, MPI_STATUS_IGNORE));
        for (int r = 0; r < np; r++)
            for (i = 0; i < count; i++)
                CHECKV(b[r * count + i] == v(r * np + me + 400, i), "Ialltoall", r * count + i, b[r * count + i],
                       v(r * np + me + 400, i));
    }
    free(a);
    free(b);
    free(c);
    free(cnt);
    free(dsp);
    free(cnt2);
    free(dsp2);
}

static void case_small(void)
{
    run(1);
    run(7);
    run(1000);
}

static void case_large(void) { run(1 << 18); /* 1 MiB of ints per block */ }

int main(int argc, char **argv)
{
    static const struct tcase cases[] = {{"small", case_small}, {"large", case_large}, {NULL, NULL}};
    init(&argc, &argv);
    return run_cases(argc, argv, cases);
}
