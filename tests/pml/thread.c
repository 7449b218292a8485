// SPDX-License-Identifier: BSD-3-Clause
/* thread.c - MPI_THREAD_MULTIPLE: 4 threads per rank. Threads 0-2 each
 * exchange with every other rank on their own tag (sizes from 8 B to
 * 1 MiB, blocking and nonblocking, both directions at once); thread 3 works
 * on its own duplicate communicator, sending messages with many tags and
 * receiving them through Iprobe/Improbe(ANY_SOURCE, ANY_TAG) + Mrecv. All
 * payloads and statuses are checked. */
#include "common.h"
#include <pthread.h>

#define ITERS 200
#define NT 4
static MPI_Comm tcomm;   /* thread 3's */

static size_t tsz(int t, int it)
{
    if (it % 50 == 49) return 1u << 20;
    if (it % 10 == 9) return 65537;
    return 8 + (size_t)((it * 7 + t) % 300);
}

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    unsigned char *sb = xmalloc((1u << 20) + 16), *rb = xmalloc(((1u << 20) + 16) * np);
    MPI_Request *rq = xmalloc(sizeof(*rq) * 2 * np);
    MPI_Status *st = xmalloc(sizeof(*st) * 2 * np);
    for (int it = 0; it < ITERS; it++) {
        size_t n = tsz(t, it);
        int key = t * 100000 + it;
        fill(sb, n, me, key);
        if (it % 2) {
            /* nonblocking with every other rank at once */
            int k = 0;
            for (int p = 0; p < np; p++)
                if (p != me) CHK(MPI_Irecv(rb + ((1u << 20) + 16) * p, (int)n + 16, MPI_BYTE, p, t, MPI_COMM_WORLD, &rq[k++]));
            for (int p = 0; p < np; p++)
                if (p != me) CHK(MPI_Isend(sb, (int)n, MPI_BYTE, p, t, MPI_COMM_WORLD, &rq[k++]));
            CHK(MPI_Waitall(k, rq, st));
            k = 0;
            for (int p = 0; p < np; p++)
                if (p != me) {
                    expect_status(&st[k], p, t, MPI_BYTE, n, "thread %d iteration %d from %d", t, it, p);
                    expect_bytes(rb + ((1u << 20) + 16) * p, n, p, key, "thread %d iteration %d from %d", t, it, p);
                    k++;
                }
        } else {
            /* blocking Sendrecv around shifts */
            for (int s = 1; s < np; s++) {
                int to = (me + s) % np, from = (me + np - s) % np;
                MPI_Status s1;
                CHK(MPI_Sendrecv(sb, (int)n, MPI_BYTE, to, t, rb, (int)n + 16, MPI_BYTE, from, t, MPI_COMM_WORLD, &s1));
                expect_status(&s1, from, t, MPI_BYTE, n, "thread %d iteration %d shift %d", t, it, s);
                expect_bytes(rb, n, from, key, "thread %d iteration %d shift %d", t, it, s);
            }
        }
    }
    free(sb);
    free(rb);
    free(rq);
    free(st);
    return NULL;
}

#define PM 150   /* probed messages from each peer */
static void *prober(void *arg)
{
    (void)arg;
    unsigned char *sb = xmalloc(70000), *rb = xmalloc(70000);
    MPI_Request *rq = xmalloc(sizeof(*rq) * PM * np);
    int ns = 0, *got = xmalloc(sizeof(int) * np);
    fill(sb, 70000, me, 4242);
    for (int p = 0; p < np; p++) {
        got[p] = 0;
        if (p == me) continue;
        for (int k = 0; k < PM; k++)
            CHK(MPI_Isend(sb, k % 25 == 24 ? 65537 : k % 100, MPI_BYTE, p, 1000 + k, tcomm, &rq[ns++]));
    }
    for (int i = 0; i < PM * (np - 1); i++) {
        MPI_Status st;
        MPI_Message m;
        int flag = 0;
        if (i % 3 == 0) {  /* Iprobe, then receive exactly that envelope */
            while (!flag) CHK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, tcomm, &flag, &st));
            CHK(MPI_Recv(rb, 70000, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, tcomm, &st));
        } else if (i % 3 == 1) {
            while (!flag) CHK(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, tcomm, &flag, &m, &st));
            CHK(MPI_Mrecv(rb, 70000, MPI_BYTE, &m, &st));
        } else {
            CHK(MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, tcomm, &m, &st));
            CHK(MPI_Mrecv(rb, 70000, MPI_BYTE, &m, &st));
        }
        int p = st.MPI_SOURCE;
        EXPECT(p >= 0 && p < np && p != me, "prober: source %d", p);
        int k = got[p]++;
        EXPECT(k < PM, "prober: too many from %d", p);
        expect_status(&st, p, 1000 + k, MPI_BYTE, k % 25 == 24 ? 65537 : k % 100, "prober: #%d from %d", k, p);
        expect_bytes(rb, k % 25 == 24 ? 65537 : k % 100, p, 4242, "prober: #%d from %d", k, p);
    }
    CHK(MPI_Waitall(ns, rq, MPI_STATUSES_IGNORE));
    free(sb);
    free(rb);
    free(rq);
    free(got);
    return NULL;
}

static void case_multiple(void)
{
    pthread_t th[NT];
    CHK(MPI_Comm_dup(MPI_COMM_WORLD, &tcomm));
    for (int t = 0; t < NT - 1; t++) pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
    pthread_create(&th[NT - 1], NULL, prober, NULL);
    for (int t = 0; t < NT; t++) pthread_join(th[t], NULL);
    CHK(MPI_Comm_free(&tcomm));
}

int main(int argc, char **argv)
{
    static const struct tcase cases[] = {{"multiple", case_multiple}, {NULL, NULL}};
    int provided;
    CHK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (provided != MPI_THREAD_MULTIPLE) FAIL("MPI_Init_thread: provided %d, not MPI_THREAD_MULTIPLE", provided);
    return run_cases(argc, argv, cases);
}
