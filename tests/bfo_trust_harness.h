// SPDX-License-Identifier: BSD-3-Clause
/* bfo_trust_harness.h - what the tests of a transport's connections share
 * (test_tcp_conn.c, test_tcp_trust.c, test_shm_trust.c): ranks 0 and 1 of
 * a job opened in this process through the transport's row, each on one
 * rail, with a sink that counts what the engine would hear, no engine.
 *   - E[r], table[r]: rank r's transport, backend, counts and address;
 *   - th_keys_make, th_keys_free: the job's ranks' key state (A, PK) from
 *     a membership key, and noauth (BFO_TEST_NOAUTH=1, or the transport of
 *     before, which has no bfo_auth); th_outsider, the key state of one
 *     who is not in the job;
 *   - th_open: rank r opened with the caller's options (tr_open of
 *     bfo_test_ranks.h, then started); open_two,
 *     close_rank, close_two, ask, pump, connect_pair.
 * The including test defines open_rank(r) (its transport's options, then
 * th_open) and TRUST_NAP_US if its pump should sleep other than 200 us
 * between rounds; its attacks and its checks stay its own. */
#ifndef BFO_TRUST_HARNESS_H
#define BFO_TRUST_HARNESS_H

#include "bfo_test.h"
#include "bfo_test_ranks.h"
#include "bfo_auth.h"
#include "bfo_tp_os.h"
#include "bfo_transport.h"

#include <stdlib.h>
#include <unistd.h>

#ifndef TRUST_NAP_US
#define TRUST_NAP_US 200
#endif
#define TH_MAX_RANKS 3 /* the job's ranks with key state: 0 and 1 opened, 2 a member that attacks */

static inline uint64_t now_ns(void) { return bfo_tp_now(); }

typedef struct end {
    void *tv;
    bfo_backend be;
    unsigned connected, failed, errors, heard, frames, completed;
    unsigned proven; /* of connected: reported CONNECTED_PROVEN */
} end;

static end E[2];
static bfo_addr table[2];
static const bfo_transport_ops *th_ops;
static bfo_auth *A[TH_MAX_RANKS]; /* the job's ranks' key state; A[2]: the member that attacks */
static uint8_t PK[TH_MAX_RANKS][BFO_AUTH_PUB_LEN];
static int noauth;

static inline void s_completion(void *ctx, uint64_t token, int ok)
{
    (void)token;
    if (ok)
        ((end *)ctx)->completed++;
}
static inline int s_frame(void *ctx, int peer, int rail, const uint8_t *buf, size_t len, uint64_t now)
{
    (void)peer, (void)rail, (void)buf, (void)len, (void)now;
    ((end *)ctx)->frames++;
    return BFO_OK;
}
static inline void s_event(void *ctx, int peer, int rail, int ev, uint64_t now)
{
    end *e = (end *)ctx;
    (void)peer, (void)rail, (void)now;
    if (ev == BFO_EV_CONNECTED || ev == BFO_EV_CONNECTED_PROVEN) {
        e->connected++;
        e->proven += ev == BFO_EV_CONNECTED_PROVEN;
    } else if (ev == BFO_EV_CONNECT_FAILED)
        e->failed++;
    else
        e->errors++;
}
static inline void s_heard(void *ctx, int peer, int rail, uint64_t now)
{
    (void)peer, (void)rail, (void)now;
    ((end *)ctx)->heard++;
}
static inline int s_lookup(void *ctx, int peer, int rail, bfo_addr *out)
{
    (void)ctx;
    if (peer < 0 || peer > 1 || rail != 0)
        return BFO_ERR_INVALID;
    *out = table[peer];
    return BFO_OK;
}

/* The key state of ranks 0..size-1 of job `job`, each knowing the others'
 * public keys; noauth when BFO_TEST_NOAUTH=1 or old (the transport of
 * before: no bfo_auth in its options).  0, or -1 (a cmocka group setup). */
static inline int th_keys_make(const uint8_t *membership, int size, uint64_t job, int old)
{
    noauth = old || tr_noauth();
    return tr_keys_make(A, PK, membership, size, job);
}

static inline int th_keys_free(void **state)
{
    (void)state;
    tr_keys_free(A, TH_MAX_RANKS);
    return 0;
}

/* Rank r of a job of `size` opened through ops on one rail named rail,
 * with the transport's options opt (the caller's) and cfg's eager limit
 * and fragment size; its address in table[r], started for job. */
static inline void th_open(const bfo_transport_ops *ops, int r, int size, const char *rail, void *opt, const bfo_config *base,
                    int log_level, uint64_t job)
{
    const tr_job j = { ops, size, rail, base, log_level };
    bfo_sink sink = { &E[r], s_completion, s_frame, s_event, s_heard, s_lookup, NULL, NULL, NULL, NULL };
    th_ops = ops;
    memset(&E[r], 0, sizeof E[r]);
    tr_open(&j, r, &sink, opt, &E[r].tv, &E[r].be, &table[r]);
    assert_int_equal(ops->start(E[r].tv, job), BFO_OK);
}

/* An outsider of the job (size ranks, job): it knows the job id and rank
 * 1's public key, not the membership key (its own: key, then zeros); it
 * will pose as rank 0 to rank 1.  The caller frees it. */
static inline bfo_auth *th_outsider(uint8_t key, int size, uint64_t job)
{
    uint8_t other_key[BFO_AUTH_KEY_LEN] = { 0 };
    bfo_auth *evil = NULL;
    other_key[0] = key;
    assert_int_equal(bfo_auth_init(&evil, other_key, 0, size, job), BFO_OK);
    assert_int_equal(bfo_auth_set_peer(evil, 1, PK[1]), BFO_OK);
    return evil;
}

/* The including test's: rank r opened with its transport's options. */
static void open_rank(int r);

static inline void open_two(void)
{
    open_rank(0);
    open_rank(1);
}

/* Rank r's transport closed, and forgotten (pump passes it by). */
static inline void close_rank(int r)
{
    if (E[r].tv)
        th_ops->fini(E[r].tv);
    E[r].tv = NULL;
}

static inline void close_two(void)
{
    for (int r = 0; r < 2; r++)
        close_rank(r);
}

/* The engine of rank r asks for its connection to the other rank. */
static inline void ask(int r) { assert_int_equal(E[r].be.connect(E[r].be.ctx, 1 - r, 0), 0); }

/* Progress of the open ranks in mask (bit r: rank r; first: the one that
 * goes first each round) for ms, or until cond() holds. */
static inline void th_pump(int mask, int first, unsigned ms, int (*cond)(void))
{
    uint64_t end_at = now_ns() + (uint64_t)ms * 1000000ull;
    while (now_ns() < end_at) {
        for (int k = 0; k < 2; k++) {
            int r = k ? 1 - first : first;
            if ((mask & (1 << r)) && E[r].tv)
                th_ops->progress(E[r].tv, now_ns());
        }
        if (cond && cond())
            return;
        usleep(TRUST_NAP_US);
    }
}

/* Progress of the ranks in mask, rank 0 first, for ms, or until cond(). */
static inline void pump(int mask, unsigned ms, int (*cond)(void)) { th_pump(mask, 0, ms, cond); }

static unsigned want_up = 1;
static inline int both_up(void) { return E[0].connected >= want_up && E[1].connected >= want_up; }
static inline int one_up(void) { return E[1].connected >= want_up; }

/* Rank 0 dials rank 1: both hear CONNECTED (the want_up-th time), nothing
 * else; authenticated, as CONNECTED_PROVEN on both sides (the dialer at the
 * verified reply, the acceptor at the verified CONFIRM: the engine admits
 * the rail with no probe), else plain CONNECTED (the engine probes). */
static inline void connect_pair(unsigned n)
{
    want_up = n;
    ask(0);
    pump(3, 3000, both_up);
    assert_int_equal(E[0].connected, n);
    assert_int_equal(E[1].connected, n);
    assert_int_equal(E[0].proven, noauth ? 0 : n);
    assert_int_equal(E[1].proven, noauth ? 0 : n);
    assert_int_equal(E[0].failed + E[1].failed, 0);
}

/* Both ranks heard CONNECTED once, and neither a failure nor an error. */
static inline void th_up_once_clean(void)
{
    assert_int_equal(E[0].connected, 1);
    assert_int_equal(E[1].connected, 1);
    assert_int_equal(E[0].failed + E[1].failed + E[0].errors + E[1].errors, 0);
}

/* A fresh pair, only rank r asks: both connected, nothing else; then
 * then() (NULL: nothing more), and closed. */
static inline void th_one_side_asks(int r, void (*then)(void))
{
    open_two();
    want_up = 1;
    ask(r);
    pump(3, 3000, both_up);
    th_up_once_clean();
    if (then)
        then();
    close_two();
}

/* A fresh pair, both ask before either makes progress (rank `first`
 * first): one connection, no failure; then then(), and closed. */
static inline void th_both_ask_at_once(int first, void (*then)(void))
{
    open_two();
    want_up = 1;
    ask(first);
    ask(1 - first);
    pump(3, 3000, both_up);
    pump(3, 50, NULL); /* anything late */
    th_up_once_clean();
    if (then)
        then();
    close_two();
}

/* A fresh pair: the higher rank dials first; the lower rank, having
 * challenged its hello (each step given step_ms) and not seen the proof
 * yet, is asked too: it waits for that proof rather than dial across it
 * (two dials proven in crossing order took each other's connection and
 * closed their own: both broke).  Then then(), and closed. */
static inline void th_challenged_hello_answers_the_other_sides_ask(unsigned step_ms, unsigned late_ms,
                                                                    void (*then)(void))
{
    open_two();
    want_up = 1;
    ask(1);
    pump(2, step_ms, NULL); /* rank 1 dials, its hello goes */
    pump(1, step_ms, NULL); /* rank 0 challenges it */
    if (!noauth) /* the proof has not come: rank 0 has not heard CONNECTED */
        assert_int_equal(E[0].connected, 0);
    if (!E[0].connected) /* as an engine: it asks for what it has not got */
        ask(0);
    pump(1, step_ms, NULL); /* rank 0 asked: no dial of its own across it */
    pump(3, 3000, both_up);
    pump(3, late_ms, NULL);
    th_up_once_clean();
    if (then)
        then();
    close_two();
}

/* The connections themselves, authenticated, as every transport's trust
 * test runs them (in its own table of tests): th_then after each
 * connection made (the transport's check that it carries frames, or
 * NULL), th_step_ms for each step of the challenged hello and th_late_ms
 * for anything late after it (the including test's, for its transport). */
static void (*th_then)(void);
static unsigned th_step_ms = 20, th_late_ms = 100;

static inline void test_authenticated_only_one_side_asks(void **state)
{
    (void)state;
    for (int r = 0; r < 2; r++)
        th_one_side_asks(r, th_then);
}

/* Both ask at once: the lower rank's dial wins (its "dialing you" carries
 * a MAC the higher rank checks), one connection, no failure. */
static inline void test_authenticated_both_ask_at_once(void **state)
{
    (void)state;
    for (int i = 0; i < 6; i++)
        th_both_ask_at_once(i & 1, th_then);
}

static inline void test_authenticated_a_challenged_hello_answers_the_other_sides_ask(void **state)
{
    (void)state;
    for (int i = 0; i < 4; i++)
        th_challenged_hello_answers_the_other_sides_ask(th_step_ms, th_late_ms, th_then);
}

#endif /* BFO_TRUST_HARNESS_H */
