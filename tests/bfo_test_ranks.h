// SPDX-License-Identifier: BSD-3-Clause
/* bfo_test_ranks.h - ranks of one job opened in this process through a
 * transport's row, each on one rail, no engine: what the transports' tests
 * that drive ranks themselves share (test_shm_res.c, test_shm_late_hellos.c,
 * test_shm_backlog.c, test_tcp_late_hellos.c, and the trust harness,
 * bfo_trust_harness.h).
 *   - tr_open: one rank opened with the caller's sink and options, its
 *     address on its rail and its backend read; not started (the callers
 *     start a job's ranks once every address is known);
 *   - tr_keys_make, tr_keys_free: the key state of a job's ranks, each
 *     knowing the others' public keys;
 *   - tr_no_completion, tr_frame_taken: sink entries for tests that count
 *     neither;
 *   - tr_rejected: the hellos a rank's transport refused on its rail;
 *   - tr_tcp_options: TCP's options as these tests set them;
 *   - with TR_RANKS defined (the job's ranks) before the include: book,
 *     each rank's address, and tr_lookup, the sinks' lookup in it.
 * The rank's state (its transport, backend, what its sink heard) stays the
 * including test's. */
#ifndef BFO_TEST_RANKS_H
#define BFO_TEST_RANKS_H

#include "bfo_test.h"
#include "bfo_auth.h"
#include "bfo_tcp.h"
#include "bfo_transport.h"

#include <stdlib.h>
#include <string.h>

/* What the ranks of a job opened here share. */
typedef struct tr_job {
    const bfo_transport_ops *ops;
    int size;               /* the job's ranks */
    const char *rail;       /* the name of each rank's one rail */
    const bfo_config *base; /* eager_limit and frag_size from here; NULL: 0 (the transport's) */
    int log_level;
} tr_job;

/* Rank `rank` of job j opened with sink and opt: the transport in *t,
 * its backend in *be, its address on the rail in *addr.  Its config is
 * zero but for its rank, the job's size, one rail and base's sizes. */
static inline void tr_open(const tr_job *j, int rank, const bfo_sink *sink, const void *opt, void **t, bfo_backend *be,
                           bfo_addr *addr)
{
    const char *names[1];
    bfo_config cfg;
    bfo_transport_args a;
    names[0] = j->rail;
    memset(&cfg, 0, sizeof cfg);
    if (j->base) {
        cfg.eager_limit = j->base->eager_limit;
        cfg.frag_size = j->base->frag_size;
    }
    cfg.rank = rank;
    cfg.nranks = j->size;
    cfg.nrails = 1;
    memset(&a, 0, sizeof a);
    a.rank = rank;
    a.size = j->size;
    a.nrails = 1;
    a.rails = names;
    a.cfg = &cfg;
    a.sink = sink;
    a.opt = opt;
    a.log_level = j->log_level;
    assert_int_equal(j->ops->open(t, &a), BFO_OK);
    assert_int_equal(j->ops->address(*t, 0, addr), BFO_OK);
    j->ops->backend(*t, be);
}

/* The key state of ranks 0..size-1 of job `job` made from the membership
 * key into a[0..size-1], each knowing the others' public keys (pk: room
 * for size of them).  0, or -1 (a cmocka group setup's failure). */
static inline int tr_keys_make(bfo_auth **a, uint8_t (*pk)[BFO_AUTH_PUB_LEN], const uint8_t *membership, int size,
                               uint64_t job)
{
    for (int r = 0; r < size; r++) {
        if (bfo_auth_init(&a[r], membership, r, size, job) != BFO_OK)
            return -1;
        bfo_auth_public(a[r], pk[r]);
    }
    for (int r = 0; r < size; r++)
        for (int p = 0; p < size; p++)
            if (p != r && bfo_auth_set_peer(a[r], p, pk[p]) != BFO_OK)
                return -1;
    return 0;
}

static inline void tr_keys_free(bfo_auth **a, int n)
{
    for (int r = 0; r < n; r++) {
        bfo_auth_free(a[r]);
        a[r] = NULL;
    }
}

/* BFO_TEST_NOAUTH=1: the tests run with no bfo_auth (the hellos of before). */
/* The hellos transport t (of row ops) refused on rail 0: hellos_rejected. */
static inline uint64_t tr_rejected(const bfo_transport_ops *ops, void *t)
{
    bfo_rail_stats st;
    memset(&st, 0, sizeof st);
    ops->stats(t, 0, &st);
    return st.hellos_rejected;
}

static inline int tr_noauth(void) { return getenv("BFO_TEST_NOAUTH") && atoi(getenv("BFO_TEST_NOAUTH")); }

static inline void tr_no_completion(void *ctx, uint64_t token, int ok) { (void)ctx, (void)token, (void)ok; }
static inline int tr_frame_taken(void *ctx, int peer, int rail, const uint8_t *buf, size_t len, uint64_t now)
{
    (void)ctx, (void)peer, (void)rail, (void)buf, (void)len, (void)now;
    return BFO_OK;
}

#ifdef TR_RANKS
static bfo_addr book[TR_RANKS]; /* rank r's address on its rail (tr_open's *addr) */

static inline int tr_lookup(void *ctx, int peer, int rail, bfo_addr *out)
{
    (void)ctx;
    if (peer < 0 || peer >= TR_RANKS || rail != 0)
        return BFO_ERR_INVALID;
    *out = book[peer];
    return BFO_OK;
}
#endif

/* BFO_TCP_LOG, or -1: quiet. */
static inline int tr_tcp_log_level(void) { return getenv("BFO_TCP_LOG") ? atoi(getenv("BFO_TCP_LOG")) : -1; }

/* TCP's options for a rank of these tests: connect_timeout_ns, no beacons
 * (nothing here listens for them), quiet unless BFO_TCP_LOG says; no
 * bfo_auth (the caller's). */
static inline void tr_tcp_options(bfo_tcp_options *o, uint64_t connect_timeout_ns)
{
    memset(o, 0, sizeof *o);
    o->connect_timeout_ns = connect_timeout_ns;
    o->beacon_interval_ns = -1;
    o->log_level = tr_tcp_log_level();
}

#endif /* BFO_TEST_RANKS_H */
