// SPDX-License-Identifier: BSD-3-Clause
/* test_shm_backlog.c - more dialers than a listen backlog of 128 (the
 * old one): a rank of a 128-rank host, not scheduled while its whole host
 * dials it, must find every dial waiting in its listener's backlog
 * (BFO_TP_BACKLOG, bfo_tp_os.h), none failed with EAGAIN (a failed shm
 * dial makes the engine connect another rail: more connections, more
 * churn).  Here: 200 ranks of one host in this process, driven through the
 * transport's row (no engine): ranks 1..199 dial rank 0, which does not
 * look until every one has dialled.  200 ranks in one process hold about
 * 1,400 descriptors: the soft limit is raised. */
#define _GNU_SOURCE
#define TR_RANKS 200 /* the ranks (bfo_test_ranks.h: book): more dialers than a backlog of 128 */
#include "bfo_test.h"
#include "bfo_test_ranks.h"

#include "bfo_shm.h"
#include "bfo_tp_os.h"
#include "bfo_transport.h"

#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define N TR_RANKS
#define JOB 0x5e5e1a7eull

static const bfo_transport_ops *const OPS = &bfo_shm_transport;

typedef struct rk {
    void *t;
    bfo_backend be;
    int up[N];
    int failed0;   /* a connect to rank 0 failed */
} rk;

static rk R[N];

static uint64_t now_of(int i)
{
    (void)i; /* every rank runs on this process's clock */
    return bfo_tp_now();
}

static void s_event(void *ctx, int peer, int rail, int ev, uint64_t now)
{
    (void)rail, (void)now;
    ((rk *)ctx)->up[peer] = ev == BFO_EV_CONNECTED;
    if (peer == 0 && ev == BFO_EV_CONNECT_FAILED)
        ((rk *)ctx)->failed0 = 1;
}

static void open_all(void)
{
    const tr_job j = { OPS, N, "shm", NULL, -1 };
    bfo_shm_options o;
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 4096 && rl.rlim_max >= 4096) {
        rl.rlim_cur = 4096;
        (void)setrlimit(RLIMIT_NOFILE, &rl);
    }
    memset(&o, 0, sizeof o);
    for (int i = 0; i < N; i++) {
        bfo_sink sink = { &R[i], tr_no_completion, tr_frame_taken, s_event, NULL, tr_lookup, NULL, NULL, NULL, NULL };
        memset(&R[i], 0, sizeof R[i]);
        tr_open(&j, i, &sink, &o, &R[i].t, &R[i].be, &book[i]);
    }
    for (int i = 0; i < N; i++)
        assert_int_equal(OPS->start(R[i].t, JOB), BFO_OK);
}

static uint64_t rejected(int i) { return tr_rejected(OPS, R[i].t); }

/* 199 ranks dial rank 0, which does not look until every one has (a rank
 * not scheduled while its whole host dials it): each dial waits in the
 * listener's backlog, none fails; then rank 0 takes every one.  With a
 * backlog of 128 the dials past it failed at once (connect(): EAGAIN). */
static void test_more_dials_than_128_wait_in_a_starved_acceptors_backlog(void **state)
{
    uint64_t end;
    int all, failed = 0;
    (void)state;
    open_all();
    for (int p = 1; p < N; p++)
        R[p].be.connect(R[p].be.ctx, 0, 0);
    for (int k = 0; k < 3; k++) /* the dials; rank 0 does not look */
        for (int p = 1; p < N; p++)
            OPS->progress(R[p].t, now_of(p));
    for (int p = 1; p < N; p++)
        failed += R[p].failed0;
    end = now_of(0) + 10000000000ull;
    do {
        all = 1;
        for (int i = 0; i < N; i++)
            OPS->progress(R[i].t, now_of(i));
        for (int p = 1; p < N; p++)
            all &= R[0].up[p] && R[p].up[0];
    } while (!all && now_of(0) < end);
    if (failed)
        print_message("%d dials failed before rank 0 looked\n", failed);
    assert_int_equal(failed, 0);
    assert_int_equal(rejected(0), 0);
    for (int p = 1; p < N; p++)
        assert_true(R[0].up[p] && R[p].up[0]);
    for (int i = 0; i < N; i++)
        OPS->fini(R[i].t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_more_dials_than_128_wait_in_a_starved_acceptors_backlog),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
