// SPDX-License-Identifier: BSD-3-Clause
/* test_tcp_late_hellos.c - an accepted TCP connection whose hello (or,
 * authenticated, whose CONFIRM) came in time is read, however late its
 * acceptor looks.  At 128 ranks on 2 cores an acceptor starved of CPU
 * accepted its peers' dials, then looked again more than connect_timeout
 * later: one epoll_wait returns 64 sockets at most, and the accepted
 * connections past those were closed by the deadline scan with their
 * hellos waiting unread (the same as shm's, test_shm_late_hellos.c;
 * docs/mpi.md).  Here: 70 ranks of one job in this process on one
 * loopback rail (127.0.0.1, ports the kernel's), driven through the
 * transport's row (no engine, so a dialer whose connection was dropped
 * is not asked again: it stays down).  Ranks 1..69 dial rank 0 and send
 * their hellos; rank 0 accepts them all, then sleeps twice its
 * connect_timeout (a rank not scheduled) and looks again, 69 hellos
 * waiting.  The clock is not skewed as in the shm test: TCP reads it
 * again after each epoll_wait, so rank 0 really sleeps, with a
 * connect_timeout of 200 ms; the dialers wait 10 s for the reply, so
 * only the acceptor's deadline is in play.  70 ranks: more than one
 * epoll_wait returns (64), so the deadline scan meets 5 not read yet.
 * Each rank holds a listener, its epoll set and its end of each
 * connection: a few hundred descriptors (the soft limit is raised to
 * 1024 if below).  Authenticated (options.auth), or with
 * BFO_TEST_NOAUTH=1 not; it fails either way on the bfo_tcp.c of
 * before (the scan closed a pend past its deadline with nothing read,
 * whatever waited on it: 5 dialers never connected).
 * A CONFIRM waiting past a challenged connection's deadline is read the
 * same way, but is not tested here: its wait goes on while the dialer's
 * kernel acknowledged the challenge, up to PROOF_WAIT_MAX_NS (60 s).
 * Then the dialer's side: dials that connected while their dialer did
 * not run for 3 connect timeouts are not timed out (bfo_link_gap), and
 * bfo_tp_pends_skip as data. */
#define _GNU_SOURCE
#define TR_RANKS 70 /* the ranks (bfo_test_ranks.h: book): more dialers than one epoll_wait returns (64) */
#include "bfo_test.h"
#include "bfo_test_ranks.h"

#include "bfo_auth.h"
#include "bfo_tcp.h"
#include "bfo_tp_os.h"
#include "bfo_transport.h"

#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#define N TR_RANKS
#define JOB 0x7c91a7eull
#define TMO_NS 200000000ull        /* rank 0's connect_timeout */
#define DIAL_TMO_NS 10000000000ull /* the dialers' */

static const bfo_transport_ops *const OPS = &bfo_tcp_transport;
static const uint8_t membership[BFO_AUTH_KEY_LEN] = { 0x5a, 0x7e, 0x11, 0x70 };

typedef struct rk {
    void *t;
    bfo_backend be;
    int up[N];      /* the last event about the peer was CONNECTED(_PROVEN) */
    int failed;     /* CONNECT_FAILED or a rail error, about any peer */
} rk;

static rk R[N];
static bfo_auth *A[N];
static int noauth;

static uint64_t now_of(int i)
{
    (void)i;
    return bfo_tp_now();
}

static void s_event(void *ctx, int peer, int rail, int ev, uint64_t now)
{
    rk *k = (rk *)ctx;
    (void)rail, (void)now;
    k->up[peer] = ev == BFO_EV_CONNECTED || ev == BFO_EV_CONNECTED_PROVEN;
    k->failed += !k->up[peer];
}

/* Every rank's key state, each knowing the others' public keys
 * (tr_keys_make, for N ranks); noauth: BFO_TEST_NOAUTH=1. */
static int setup(void **state)
{
    uint8_t pk[N][BFO_AUTH_PUB_LEN];
    struct rlimit rl;
    (void)state;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 1024 && rl.rlim_max > rl.rlim_cur) {
        rl.rlim_cur = rl.rlim_max < 1024 ? rl.rlim_max : 1024;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    noauth = tr_noauth();
    return tr_keys_make(A, pk, membership, N, JOB);
}

static int teardown(void **state)
{
    (void)state;
    tr_keys_free(A, N);
    return 0;
}

static void open_all(void)
{
    const tr_job j = { OPS, N, "127.0.0.1", NULL, tr_tcp_log_level() };
    bfo_tcp_options o;
    for (int i = 0; i < N; i++) {
        bfo_sink sink = { &R[i], tr_no_completion, tr_frame_taken, s_event, NULL, tr_lookup, NULL, NULL, NULL, NULL };
        memset(&R[i], 0, sizeof R[i]);
        tr_tcp_options(&o, i ? DIAL_TMO_NS : TMO_NS);
        o.auth = noauth ? NULL : A[i];
        tr_open(&j, i, &sink, &o, &R[i].t, &R[i].be, &book[i]);
    }
    for (int i = 0; i < N; i++)
        assert_int_equal(OPS->start(R[i].t, JOB), BFO_OK);
}

static void close_all(void)
{
    for (int i = 0; i < N; i++)
        OPS->fini(R[i].t);
}

static uint64_t rejected(int i) { return bfo_tcp_get_stats((bfo_tcp *)R[i].t)->hellos_rejected; }

/* Ranks 1..69 progress `rounds` times (rank 0 does not look), napping so
 * that the loopback carries what they wrote. */
static void dialers(int rounds)
{
    for (int k = 0; k < rounds; k++) {
        for (int p = 1; p < N; p++)
            OPS->progress(R[p].t, now_of(p));
        usleep(1000);
    }
}

/* Every rank progresses until all 69 connections are up at both ends, or
 * for 5 s; then none was dropped or failed on either side. */
static void all_come_up(void)
{
    uint64_t end = bfo_tp_now() + 5000000000ull;
    int all;
    do {
        all = 1;
        for (int i = 0; i < N; i++)
            OPS->progress(R[i].t, now_of(i));
        for (int p = 1; p < N; p++)
            all &= R[0].up[p] && R[p].up[0];
    } while (!all && bfo_tp_now() < end);
    for (int p = 1; p < N; p++)
        if (!R[0].up[p] || !R[p].up[0])
            print_message("rank %d: not connected to rank 0 (%s)\n", p, R[p].failed ? "its dial failed" : "");
    assert_true(all);
    assert_int_equal(rejected(0), 0);
    for (int i = 0; i < N; i++)
        assert_int_equal(R[i].failed, 0);
}

/* Every dialer's hello waits at rank 0 when rank 0 next looks, 400 ms
 * after it accepted them (its connect_timeout: 200 ms): every one is read,
 * none dropped; the 69 connections come up at both ends. */
static void test_hellos_waiting_past_their_deadline_are_read_not_dropped(void **state)
{
    (void)state;
    open_all();
    for (int p = 1; p < N; p++)
        R[p].be.connect(R[p].be.ctx, 0, 0);
    dialers(3); /* the dials and their hellos */
    OPS->progress(R[0].t, now_of(0)); /* accepts every one: their hellos due in 200 ms */
    usleep(2 * TMO_NS / 1000);        /* ... and looks again 400 ms later */
    OPS->progress(R[0].t, now_of(0));
    all_come_up();
    close_all();
}

/* Rank 0 dials ranks 1..69, then does not run for three times its
 * connect_timeout (600 ms) while their kernels accept the dials: when it
 * runs again, 69 connected dials wait to be seen (64 per epoll_wait).
 * None is timed out: the gap moved every connect deadline on
 * (bfo_link_gap, bfo_link_skip).  On the bfo_tcp.c of before, the
 * deadline scan after the first epoll_wait failed the 5 dials not seen
 * yet ("no connection within the connect timeout"). */
static void test_dials_that_connected_while_the_dialer_did_not_run_are_not_timed_out(void **state)
{
    uint64_t end;
    (void)state;
    open_all();
    for (int p = 1; p < N; p++)
        R[0].be.connect(R[0].be.ctx, p, 0);
    OPS->progress(R[0].t, now_of(0)); /* the dials: due in 200 ms */
    end = bfo_tp_now() + 3 * TMO_NS;  /* rank 0 does not run for 600 ms; its peers do */
    while (bfo_tp_now() < end)
        dialers(1);
    OPS->progress(R[0].t, now_of(0));
    assert_int_equal(R[0].failed, 0);
    all_come_up();
    close_all();
}

/* bfo_tp_pends_skip as data: an accepted connection's deadline moves on
 * by the skip, never past now + timeout_ns; a free slot's is not touched;
 * one that had passed when the gap began still passes now. */
static void test_pends_skip_moves_accepted_deadlines_on_by_the_gap(void **state)
{
    bfo_tp_pends pt;
    const uint64_t now = 10000, skip = 2750; /* a gap of 3000 ns, timeout 1000: 250 counted */
    (void)state;
    memset(&pt, 0, sizeof pt);
    pt.ep = -1;
    pt.timeout_ns = 1000;
    assert_int_equal(bfo_tp_pends_init(&pt, sizeof(bfo_tp_pend), 1, 1), 0);
    assert_true(pt.n >= 4);
    bfo_tp_pend_at(&pt, 0)->fd = 100; /* accepted at 7000, before the gap: due at 8000 */
    bfo_tp_pend_at(&pt, 0)->deadline = 8000;
    bfo_tp_pend_at(&pt, 1)->fd = 101; /* due at 6900: passed before the gap began (7000) */
    bfo_tp_pend_at(&pt, 1)->deadline = 6900;
    bfo_tp_pend_at(&pt, 2)->fd = 102; /* due far (re-armed): past now + timeout already */
    bfo_tp_pend_at(&pt, 2)->deadline = 20000;
    bfo_tp_pend_at(&pt, 3)->deadline = 8000; /* a free slot (fd -1) */
    bfo_tp_pends_skip(&pt, 0, now); /* no gap: nothing moves */
    assert_int_equal(bfo_tp_pend_at(&pt, 0)->deadline, 8000);
    bfo_tp_pends_skip(&pt, skip, now);
    assert_int_equal(bfo_tp_pend_at(&pt, 0)->deadline, 10750);
    assert_true(bfo_tp_pend_at(&pt, 1)->deadline <= now);
    assert_int_equal(bfo_tp_pend_at(&pt, 2)->deadline, 20000);
    assert_int_equal(bfo_tp_pend_at(&pt, 3)->deadline, 8000);
    bfo_tp_pend_at(&pt, 0)->deadline = 9900; /* 9900 + 2750 is past now + 1000: held there */
    bfo_tp_pends_skip(&pt, skip, now);
    assert_int_equal(bfo_tp_pend_at(&pt, 0)->deadline, now + 1000);
    for (int k = 0; k < 3; k++)
        bfo_tp_pend_at(&pt, k)->fd = -1; /* not real descriptors: fini closes none */
    bfo_tp_pends_fini(&pt);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pends_skip_moves_accepted_deadlines_on_by_the_gap),
        cmocka_unit_test(test_hellos_waiting_past_their_deadline_are_read_not_dropped),
        cmocka_unit_test(test_dials_that_connected_while_the_dialer_did_not_run_are_not_timed_out),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
