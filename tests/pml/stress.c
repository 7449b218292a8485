// SPDX-License-Identifier: BSD-3-Clause
/* stress.c - load on the PML's queues and progress:
 *   unexpected   100,000 eager 8 B sends before any receive is posted
 *   outstanding  100,000 receives posted before any matching send; 5,000
 *                more with distinct tags, matched in reverse order
 *   compute      a rank computes PMLT_COMPUTE_SECS (default 60) without an
 *                MPI call while its peer has Isends (8 B .. 32 MiB)
 *                outstanding to it, and it has Isends and Irecvs posted
 *                itself; everything must complete and check.
 *   cold         right after MPI_Init, before any message, the last rank
 *                computes PMLT_COLD_SECS (default 15: longer than
 *                pml_bfo_peer_timeout_ms) without an MPI call, while every
 *                other rank sends it its first messages (8 B, 64 KiB+1,
 *                1 MiB) and talks to its neighbours (first use, both
 *                directions); nobody is given up, everything checks.
 * PMLT_STRESS_N sets the 100,000. */
#include "common.h"

static void case_unexpected(void)
{
    int n = env_int("PMLT_STRESS_N", 100000);
    int to = (me + 1) % np, from = (me + np - 1) % np;
    unsigned char b[16];
    double t0 = now();
    for (int i = 0; i < n; i++) {
        fill(b, 8, me, i);
        CHK(MPI_Send(b, 8, MPI_BYTE, to, i % 5, MPI_COMM_WORLD));
    }
    double ts = now() - t0;
    CHK(MPI_Barrier(MPI_COMM_WORLD));
    /* all unexpected now; received in order, by tag wildcard half the time */
    t0 = now();
    for (int i = 0; i < n; i++) {
        MPI_Status st;
        CHK(MPI_Recv(b, 16, MPI_BYTE, i & 1 ? MPI_ANY_SOURCE : from, i & 2 ? MPI_ANY_TAG : i % 5, MPI_COMM_WORLD, &st));
        expect_status(&st, from, i % 5, MPI_BYTE, 8, "unexpected message #%d of %d", i, n);
        expect_bytes(b, 8, from, i, "unexpected message #%d of %d", i, n);
    }
    if (me == 0)
        printf("NOTE: %d unexpected 8 B messages: sent in %.2f s, received in %.2f s\n", n, ts, now() - t0);
    /* and the other way: a rank that sleeps while the sends pile up */
    CHK(MPI_Barrier(MPI_COMM_WORLD));
    if (me % 2) msleep(500);
    for (int i = 0; i < n / 10; i++) {
        fill(b, 8, me, -i);
        CHK(MPI_Send(b, 8, MPI_BYTE, to, 7, MPI_COMM_WORLD));
    }
    if (me % 2 == 0) msleep(500);
    for (int i = 0; i < n / 10; i++) {
        MPI_Status st;
        CHK(MPI_Recv(b, 16, MPI_BYTE, from, 7, MPI_COMM_WORLD, &st));
        expect_status(&st, from, 7, MPI_BYTE, 8, "after a sleep: message #%d", i);
        expect_bytes(b, 8, from, -i, "after a sleep: message #%d", i);
    }
}

static void case_outstanding(void)
{
    int n = env_int("PMLT_STRESS_N", 100000);
    int to = (me + 1) % np, from = (me + np - 1) % np;
    unsigned char *rb = xmalloc((size_t)n * 8);
    MPI_Request *rq = xmalloc(sizeof(*rq) * n);
    MPI_Status *st = xmalloc(sizeof(*st) * n);
    unsigned char b[8];
    memset(rb, SENTINEL, (size_t)n * 8);
    double t0 = now();
    for (int i = 0; i < n; i++)
        CHK(MPI_Irecv(rb + (size_t)i * 8, 8, MPI_BYTE, from, 3, MPI_COMM_WORLD, &rq[i]));
    CHK(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < n; i++) {
        fill(b, 8, me, i);
        CHK(MPI_Send(b, 8, MPI_BYTE, to, 3, MPI_COMM_WORLD));
    }
    CHK(MPI_Waitall(n, rq, st));
    for (int i = 0; i < n; i++) {
        expect_status(&st[i], from, 3, MPI_BYTE, 8, "preposted receive #%d of %d", i, n);
        expect_bytes(rb + (size_t)i * 8, 8, from, i, "preposted receive #%d of %d", i, n);
    }
    if (me == 0) printf("NOTE: %d preposted receives matched in %.2f s\n", n, now() - t0);
    /* distinct tags, posted in reverse, sent in order (ANY_SOURCE on odd) */
    int m = n / 20;
    CHK(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = m - 1; i >= 0; i--)
        CHK(MPI_Irecv(rb + (size_t)i * 8, 8, MPI_BYTE, i & 1 ? MPI_ANY_SOURCE : from, 100 + i, MPI_COMM_WORLD, &rq[i]));
    CHK(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < m; i++) {
        fill(b, 8, me, i + 7);
        CHK(MPI_Send(b, 8, MPI_BYTE, to, 100 + i, MPI_COMM_WORLD));
    }
    CHK(MPI_Waitall(m, rq, st));
    for (int i = 0; i < m; i++) {
        expect_status(&st[i], from, 100 + i, MPI_BYTE, 8, "receive with tag %d of %d", 100 + i, m);
        expect_bytes(rb + (size_t)i * 8, 8, from, i + 7, "receive with tag %d", 100 + i);
    }
    free(rb);
    free(rq);
    free(st);
}

/* messages of the compute case */
#define NC 1013
static size_t csz(int i)
{
    if (i == 1000) return 32u << 20;
    if (i > 1000) return i % 2 ? 4u << 20 : 65537;
    return 8;
}

static void case_compute(void)
{
    int secs = env_int("PMLT_COMPUTE_SECS", 60);
    int peer = me ^ 1, computing = me & 1;
    if (peer >= np) { /* odd rank count: the last one watches */
        CHK(MPI_Barrier(MPI_COMM_WORLD));
        return;
    }
    size_t off[NC + 1];
    off[0] = 0;
    for (int i = 0; i < NC; i++) off[i + 1] = off[i] + csz(i);
    unsigned char *sb = xmalloc(off[NC]), *rb = xmalloc(off[NC]);
    MPI_Request *srq = xmalloc(sizeof(*srq) * NC), *rrq = xmalloc(sizeof(*rrq) * NC);
    MPI_Status *st = xmalloc(sizeof(*st) * NC);
    for (int i = 0; i < NC; i++) fill(sb + off[i], csz(i), me, i);
    memset(rb, SENTINEL, off[NC]);
    /* both: Isend everything (even messages on tag 9, odd on tag 10); the
     * computing rank preposts the even receives only and posts the odd
     * ones after computing, the other rank preposts all */
    for (int i = 0; i < NC; i++)
        if (!computing || i % 2 == 0)
            CHK(MPI_Irecv(rb + off[i], (int)csz(i), MPI_BYTE, peer, 9 + i % 2, MPI_COMM_WORLD, &rrq[i]));
    for (int i = 0; i < NC; i++) CHK(MPI_Isend(sb + off[i], (int)csz(i), MPI_BYTE, peer, 9 + i % 2, MPI_COMM_WORLD, &srq[i]));
    CHK(MPI_Barrier(MPI_COMM_WORLD));
    double t0 = now(), tback = 0;
    if (computing) {
        volatile double x = 1.0;
        while (now() - t0 < secs)
            for (int k = 0; k < 100000; k++) x = x * 1.0000001 + 1e-9;
        tback = now();
        for (int i = 0; i < NC; i++)
            if (i % 2) CHK(MPI_Irecv(rb + off[i], (int)csz(i), MPI_BYTE, peer, 9 + i % 2, MPI_COMM_WORLD, &rrq[i]));
    }
    CHK(MPI_Waitall(NC, srq, MPI_STATUSES_IGNORE));
    CHK(MPI_Waitall(NC, rrq, st));
    for (int i = 0; i < NC; i++) {
        expect_status(&st[i], peer, 9 + i % 2, MPI_BYTE, csz(i), "message #%d (%zu B) %s a %d s computation", i, csz(i),
                      computing ? "received after" : "received from a rank in", secs);
        expect_bytes(rb + off[i], csz(i), peer, i, "message #%d (%zu B) around a %d s computation", i, csz(i), secs);
    }
    if (computing && me == 1)
        printf("NOTE: after %d s of computing without MPI calls, all %d messages each way completed %.2f s "
               "later\n", secs, NC, now() - tback);
    free(sb);
    free(rb);
    free(srq);
    free(rrq);
    free(st);
}

/* messages of the cold case: 8 B, 64 KiB+1 and 1 MiB */
#define NCOLD 3
static size_t cold_sz(int i) { return i == 0 ? 8 : i == 1 ? 65537 : 1u << 20; }

static void case_cold(void)
{
    int secs = env_int("PMLT_COLD_SECS", 15), last = np - 1;
    size_t max = cold_sz(NCOLD - 1);
    /* per peer: one buffer per message, each way */
    unsigned char *sb = xmalloc((size_t)np * NCOLD * max), *rb = xmalloc((size_t)np * NCOLD * max);
    MPI_Request *rq = xmalloc(sizeof(*rq) * (size_t)np * NCOLD * 2);
    MPI_Status *st = xmalloc(sizeof(*st) * (size_t)np * NCOLD * 2);
    int n = 0, nr;
    int right = (me + 1) % np, left = (me + np - 1) % np;
    memset(rb, SENTINEL, (size_t)np * NCOLD * max);
#define COLD_BUF(b, peer, i) ((b) + ((size_t)(peer) * NCOLD + (size_t)(i)) * max)
    if (me == last) { /* no MPI call at all between MPI_Init and the end of the computation */
        double t0 = now();
        volatile double x = 1.0;
        while (now() - t0 < secs)
            for (int k = 0; k < 100000; k++) x = x * 1.0000001 + 1e-9;
    }
    /* receives first: from every peer that sends to this rank */
    for (int p = 0; p < np; p++) {
        int from = me == last ? p != me : p == last || p == left;
        if (!from || p == me) continue;
        for (int i = 0; i < NCOLD; i++)
            CHK(MPI_Irecv(COLD_BUF(rb, p, i), (int)cold_sz(i), MPI_BYTE, p, 30 + i, MPI_COMM_WORLD, &rq[n++]));
    }
    nr = n;
    for (int p = 0; p < np; p++) {
        int to = me == last ? p != me : p == last || p == right;
        if (!to || p == me) continue;
        for (int i = 0; i < NCOLD; i++) {
            fill(COLD_BUF(sb, p, i), cold_sz(i), me, 30 + i);
            CHK(MPI_Isend(COLD_BUF(sb, p, i), (int)cold_sz(i), MPI_BYTE, p, 30 + i, MPI_COMM_WORLD, &rq[n++]));
        }
    }
    CHK(MPI_Waitall(n, rq, st));
    for (int k = 0; k < nr; k++) {
        int p = st[k].MPI_SOURCE, i = st[k].MPI_TAG - 30;
        if (p < 0 || p >= np || i < 0 || i >= NCOLD)
            FAIL("receive #%d: source %d tag %d is not one of the cold case's", k, p, st[k].MPI_TAG);
        expect_status(&st[k], p, 30 + i, MPI_BYTE, cold_sz(i), "first message #%d from rank %d", i, p);
        expect_bytes(COLD_BUF(rb, p, i), cold_sz(i), p, 30 + i, "first message #%d from rank %d", i, p);
    }
#undef COLD_BUF
    CHK(MPI_Barrier(MPI_COMM_WORLD));
    if (me == last)
        printf("NOTE: rank %d computed %d s right after MPI_Init; its first messages from %d ranks all came\n",
               last, secs, np - 1);
    free(sb);
    free(rb);
    free(rq);
    free(st);
}

int main(int argc, char **argv)
{
    static const struct tcase cases[] = {{"unexpected", case_unexpected},
                                         {"outstanding", case_outstanding},
                                         {"compute", case_compute},
                                         {"cold", case_cold},
                                         {NULL, NULL}};
    init(&argc, &argv);
    if (np < 2) FAIL("needs at least 2 ranks");
    return run_cases(argc, argv, cases);
}
