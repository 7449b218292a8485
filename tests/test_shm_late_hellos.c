// SPDX-License-Identifier: BSD-3-Clause
/* test_shm_late_hellos.c - an accepted shm connection whose hello came in
 * time is read, however late its acceptor looks.  At 128 ranks on 2 cores
 * (bench-scale) an acceptor starved of CPU accepted its peers' dials, then
 * looked again more than connect_timeout later: one epoll_wait returns 64
 * sockets at most, and the accepted connections past those were dropped
 * as "no hello in time" with their hellos waiting unread (3,431 drops in
 * one 128-rank run; every dialer redialled into the same, until peers were
 * given up).  Here: 70 ranks of one host in this process, driven through
 * the transport's row (no engine): ranks 1..69 dial rank 0 and send their
 * hellos; rank 0 accepts them all, then progresses once 2 s later (its
 * clock skewed: a rank not scheduled for 2 s), with 69 hellos waiting.
 * Then the same gap (3 s) for an authenticated acceptor whose dialers'
 * proofs came meanwhile, and for a dialer whose replies did: time a rank
 * did not run moves its connect deadlines on (bfo_link_gap). */
#define _GNU_SOURCE
#define TR_RANKS 70 /* the ranks (bfo_test_ranks.h: book): more dialers than one epoll_wait returns (64) */
#include "bfo_test.h"
#include "bfo_test_ranks.h"

#include "bfo_auth.h"
#include "bfo_shm.h"
#include "bfo_transport.h"

#include <time.h>
#include <unistd.h>

#define N TR_RANKS
#define JOB 0x5e5e1a7eull

static const bfo_transport_ops *const OPS = &bfo_shm_transport;

typedef struct rk {
    void *t;
    bfo_backend be;
    int up[N];
    uint64_t skew; /* added to this rank's clock */
    int failed;    /* events other than CONNECTED(_PROVEN), about any peer */
} rk;

static rk R[N];
static bfo_auth *A[N]; /* authenticated ranks' key state (open_auth) */
static const uint8_t membership[BFO_AUTH_KEY_LEN] = { 0x5e, 0x1a, 0x7e, 0x70 };

static uint64_t now_of(int i)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec + R[i].skew;
}

static void s_event(void *ctx, int peer, int rail, int ev, uint64_t now)
{
    rk *k = (rk *)ctx;
    (void)rail, (void)now;
    k->up[peer] = ev == BFO_EV_CONNECTED || ev == BFO_EV_CONNECTED_PROVEN;
    k->failed += !k->up[peer];
}

/* Every rank opened and started; authenticated with a[i] when a is given. */
static void open_with(bfo_auth **a)
{
    const tr_job j = { OPS, N, "shm", NULL, -1 };
    bfo_shm_options o;
    memset(&o, 0, sizeof o);
    for (int i = 0; i < N; i++) {
        bfo_sink sink = { &R[i], tr_no_completion, tr_frame_taken, s_event, NULL, tr_lookup, NULL, NULL, NULL, NULL };
        memset(&R[i], 0, sizeof R[i]);
        o.auth = a ? a[i] : NULL;
        tr_open(&j, i, &sink, &o, &R[i].t, &R[i].be, &book[i]);
    }
    for (int i = 0; i < N; i++)
        assert_int_equal(OPS->start(R[i].t, JOB), BFO_OK);
}

static void open_all(void) { open_with(NULL); }

static uint64_t rejected(int i) { return tr_rejected(OPS, R[i].t); }

/* Every dialer's hello waits at rank 0 when rank 0 next looks, 2 s after
 * it accepted them (connect_timeout is 1 s): every one is read and taken,
 * none dropped; the 69 connections come up at both ends. */
static void test_hellos_waiting_past_their_deadline_are_read_not_dropped(void **state)
{
    uint64_t end;
    int all;
    (void)state;
    open_all();
    for (int p = 1; p < N; p++)
        R[p].be.connect(R[p].be.ctx, 0, 0);
    for (int k = 0; k < 3; k++) /* the dials and their hellos; rank 0 does not look */
        for (int p = 1; p < N; p++)
            OPS->progress(R[p].t, now_of(p));
    OPS->progress(R[0].t, now_of(0)); /* accepts every one: their hellos due in 1 s */
    R[0].skew = 2000000000ull;        /* ... and looks again 2 s later */
    OPS->progress(R[0].t, now_of(0));
    end = now_of(0) + 5000000000ull;
    do {
        all = 1;
        for (int i = 0; i < N; i++)
            OPS->progress(R[i].t, now_of(i));
        for (int p = 1; p < N; p++)
            all &= R[0].up[p] && R[p].up[0];
    } while (!all && now_of(0) < end);
    assert_int_equal(rejected(0), 0);
    for (int p = 1; p < N; p++) {
        if (!R[0].up[p] || !R[p].up[0])
            print_message("rank %d: not connected to rank 0\n", p);
        assert_true(R[0].up[p] && R[p].up[0]);
    }
    for (int i = 0; i < N; i++)
        OPS->fini(R[i].t);
}

/* Authenticated: ranks 1..69 dial rank 0; rank 0 reads their hellos
 * (claims), challenges each, and its engine asks for every one of those
 * connections (REPLY_SENT_ASKED: the connect deadline armed, 1 s).  The
 * dialers answer with their CONFIRMs while rank 0 does not run for 3 s
 * (its clock skewed).  When it runs again all 69 proofs wait (64 per
 * epoll_wait): every connection comes up, and no connect is failed, the
 * gap having moved the deadlines on (bfo_link_gap, bfo_link_skip).  On
 * the bfo_shm.c of before, the deadline scan after the first epoll_wait
 * failed the 5 connections whose proofs were not read yet. */
static void test_proofs_that_came_while_the_acceptor_did_not_run_are_taken_not_timed_out(void **state)
{
    uint8_t pk[N][BFO_AUTH_PUB_LEN];
    uint64_t end;
    int all;
    (void)state;
    assert_int_equal(tr_keys_make(A, pk, membership, N, JOB), 0);
    open_with(A);
    for (int p = 1; p < N; p++)
        R[p].be.connect(R[p].be.ctx, 0, 0);
    for (int k = 0; k < 3; k++) /* the dials and their hellos */
        for (int p = 1; p < N; p++)
            OPS->progress(R[p].t, now_of(p));
    for (int k = 0; k < 4; k++) /* rank 0 accepts, reads the claims, challenges each */
        OPS->progress(R[0].t, now_of(0));
    for (int p = 1; p < N; p++)
        R[0].be.connect(R[0].be.ctx, p, 0); /* its engine waits for each */
    OPS->progress(R[0].t, now_of(0));
    for (int k = 0; k < 3; k++) /* the dialers read their challenges and prove */
        for (int p = 1; p < N; p++)
            OPS->progress(R[p].t, now_of(p));
    R[0].skew = 3000000000ull; /* rank 0 looks again 3 s later (3 connect timeouts) */
    OPS->progress(R[0].t, now_of(0));
    assert_int_equal(R[0].failed, 0);
    end = now_of(0) + 5000000000ull;
    do {
        all = 1;
        for (int i = 0; i < N; i++)
            OPS->progress(R[i].t, now_of(i));
        for (int p = 1; p < N; p++)
            all &= R[0].up[p] && R[p].up[0];
    } while (!all && now_of(0) < end);
    for (int p = 1; p < N; p++) {
        if (!R[0].up[p] || !R[p].up[0])
            print_message("rank %d: not connected to rank 0\n", p);
        assert_true(R[0].up[p] && R[p].up[0]);
    }
    for (int i = 0; i < N; i++)
        assert_int_equal(R[i].failed, 0);
    for (int i = 0; i < N; i++)
        OPS->fini(R[i].t);
    tr_keys_free(A, N);
}

/* Rank 0 dials ranks 1..69; they take the hellos and reply while rank 0
 * does not run for 3 s (3 connect timeouts, its clock skewed): when it
 * runs again, all 69 replies wait, and every connection comes up, none
 * failed.  (It passes on the bfo_shm.c of before too: a shm dial that
 * sent its hello waits for the reply with no deadline, the peer's process
 * holding its end; kept so that the dialer's side of a gap stays
 * covered.) */
static void test_replies_that_came_while_the_dialer_did_not_run_are_taken(void **state)
{
    uint64_t end;
    int all;
    (void)state;
    open_all();
    for (int p = 1; p < N; p++)
        R[0].be.connect(R[0].be.ctx, p, 0);
    OPS->progress(R[0].t, now_of(0)); /* the dials and their hellos */
    for (int k = 0; k < 3; k++)       /* the peers take them and reply */
        for (int p = 1; p < N; p++)
            OPS->progress(R[p].t, now_of(p));
    R[0].skew = 3000000000ull;
    OPS->progress(R[0].t, now_of(0));
    assert_int_equal(R[0].failed, 0);
    end = now_of(0) + 5000000000ull;
    do {
        all = 1;
        for (int i = 0; i < N; i++)
            OPS->progress(R[i].t, now_of(i));
        for (int p = 1; p < N; p++)
            all &= R[0].up[p] && R[p].up[0];
    } while (!all && now_of(0) < end);
    assert_true(all);
    for (int i = 0; i < N; i++)
        assert_int_equal(R[i].failed, 0);
    for (int i = 0; i < N; i++)
        OPS->fini(R[i].t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hellos_waiting_past_their_deadline_are_read_not_dropped),
        cmocka_unit_test(test_proofs_that_came_while_the_acceptor_did_not_run_are_taken_not_timed_out),
        cmocka_unit_test(test_replies_that_came_while_the_dialer_did_not_run_are_taken),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
