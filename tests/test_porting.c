// SPDX-License-Identifier: BSD-3-Clause
/* test_porting.c - the code of docs/porting.md, compiled and run.
 *
 * A toy point-to-point layer ("my layer": links per peer and rail, frames
 * acknowledged by the receiving side, a way to cut a link) embeds the
 * engine the way docs/porting.md says, and the tests drive it through
 * what the guide promises: messages of every size, a rail that fails
 * with an error, a rail that goes silent, a peer that becomes
 * unreachable, a truncated receive, the trace hook.  The blocks between
 * "doc begin: NAME" and "doc end: NAME" are copied into the guide by
 * `make docs-seq`; make check-docs fails when they differ.
 *
 * Both ranks live in this process; the layer allocates (it is not the
 * engine).
 */
#include <stdlib.h>
#include <string.h>

#include "bfo_test.h"
#include "bfo_engine.h"

#define NRANKS 2
#define NRAILS 2
#define MAXQ 4096

/* ------------------------------------------------------- the toy layer */

enum { F_SENT, F_TAKEN, F_GONE }; /* in flight; taken by the receiver (its ack comes back) */

typedef struct my_frame {
    int src, dst, rail, state, conn;
    uint64_t token;
    size_t len;
    uint8_t *data;
} my_frame;

typedef struct my_layer my_layer;
typedef struct my_endpoint {
    my_layer *l;
    int rank;
} my_endpoint;

struct my_layer {
    bfo_engine eng[NRANKS];
    void *mem[NRANKS];
    my_endpoint ep[NRANKS];
    my_frame q[MAXQ];
    int nq;
    uint64_t now;
    int cut[NRAILS];      /* the link errors: both ends see it */
    int silent[NRAILS];   /* frames vanish, no error */
    int conn[NRANKS][NRANKS][NRAILS];    /* connection number: 0 none */
    int want[NRANKS][NRANKS][NRAILS];    /* connect() asked */
    int drop[NRANKS][NRANKS][NRAILS];    /* disconnect() asked */
    int disconnects;
};

static int next_conn = 1;

/* Every frame of src's connection to dst on rail completes with an error
 * (what a transport does when a connection closes or fails). */
static void my_fail_link(my_layer *l, int src, int dst, int rail)
{
    for (int i = 0; i < l->nq; i++) {
        my_frame *f = &l->q[i];
        if (f->state != F_GONE && f->src == src && f->dst == dst && f->rail == rail) {
            f->state = F_GONE;
            free(f->data);
            bfo_engine_completion(&l->eng[src], f->token, 0);
        }
    }
}

/* doc begin: post_send */
/* The engine hands over one frame: a header and, for MATCH, RNDV and FRAG,
 * a piece of the user's buffer.  Both stay valid until the completion, so
 * a zero-copy layer may keep the pointers; this one copies.  Never call
 * the engine from here: report what happens from the layer's progress. */
static int my_post_send(void *ctx, int peer, int rail, const bfo_iov *iov, int iovcnt,
                        uint64_t token)
{
    my_endpoint *ep = (my_endpoint *)ctx;
    my_layer *l = ep->l;
    size_t len = 0;
    if (l->nq == MAXQ || !l->conn[ep->rank][peer][rail])
        return -1; /* cannot post: the engine completes it with an error */
    my_frame *f = &l->q[l->nq++];
    for (int i = 0; i < iovcnt; i++)
        len += iov[i].len;
    f->data = (uint8_t *)malloc(len ? len : 1);
    for (int i = 0, off = 0; i < iovcnt; off += (int)iov[i].len, i++)
        memcpy(f->data + off, iov[i].base, iov[i].len);
    f->src = ep->rank;
    f->dst = peer;
    f->rail = rail;
    f->len = len;
    f->token = token;
    f->conn = l->conn[ep->rank][peer][rail];
    f->state = F_SENT;
    return 0;
}
/* doc end: post_send */

static int my_connect(void *ctx, int peer, int rail)
{
    my_endpoint *ep = (my_endpoint *)ctx;
    ep->l->want[ep->rank][peer][rail] = 1; /* handled at the next progress */
    return 0;
}

/* doc begin: disconnect */
/* The engine mapped the rail out by itself (its probe timed out, or the
 * peer's BROKEN notice came).  Called from inside engine calls: only mark
 * it; the next progress drops the connection, and what was in flight on
 * it completes with an error now instead of after the reconnect. */
static void my_disconnect(void *ctx, int peer, int rail)
{
    my_endpoint *ep = (my_endpoint *)ctx;
    ep->l->drop[ep->rank][peer][rail] = 1;
    ep->l->disconnects++;
}
/* doc end: disconnect */

/* doc begin: backend */
static unsigned my_rail_bandwidth(void *ctx, int rail)
{
    (void)ctx;
    return rail == 0 ? 12000 : 6000; /* MB/s: rail 0 gets two thirds of the data */
}

static void my_backend(my_endpoint *ep, bfo_backend *be)
{
    memset(be, 0, sizeof *be);
    be->ctx = ep;
    be->post_send = my_post_send;        /* required */
    be->connect = my_connect;            /* (re)connect one rail to one peer */
    be->disconnect = my_disconnect;      /* optional: drop a rail the engine mapped out */
    be->rail_bandwidth = my_rail_bandwidth;
    /* no post_write, post_read, reg_mem, rail_caps: no RDMA, the engine
     * uses its copy protocols (eager MATCH, RNDV + ACK + FRAGs) */
}
/* doc end: backend */

/* doc begin: progress */
/* One pass of the layer's progress for one rank: connections, frames that
 * arrived, acknowledgements, failures; then the engine's timers.  Run it
 * more often than heartbeat + probe_timeout (140 ms by default). */
static void my_progress(my_layer *l, int me)
{
    bfo_engine *e = &l->eng[me];
    for (int p = 0; p < NRANKS; p++)
        for (int r = 0; r < NRAILS; r++) {
            if (p == me)
                continue;
            if (l->drop[me][p][r]) { /* disconnect(): as a connection error */
                l->drop[me][p][r] = 0;
                l->conn[me][p][r] = 0;
                bfo_engine_rail_event(e, p, r, BFO_EV_RAIL_ERROR, l->now);
                my_fail_link(l, me, p, r);
            }
            if (l->want[me][p][r]) { /* connect(): a new connection replaces the old */
                l->want[me][p][r] = 0;
                my_fail_link(l, me, p, r);
                if (l->cut[r] || l->silent[r]) {
                    l->conn[me][p][r] = 0;
                    bfo_engine_rail_event(e, p, r, BFO_EV_CONNECT_FAILED, l->now);
                } else {
                    l->conn[me][p][r] = l->conn[p][me][r] = next_conn++;
                    my_fail_link(l, p, me, r);
                    bfo_engine_rail_event(e, p, r, BFO_EV_CONNECTED, l->now);
                    bfo_engine_rail_event(&l->eng[p], me, r, BFO_EV_CONNECTED, l->now);
                }
            }
            if (l->cut[r] && l->conn[me][p][r]) { /* the link reports an error */
                l->conn[me][p][r] = 0;
                bfo_engine_rail_event(e, p, r, BFO_EV_RAIL_ERROR, l->now);
                my_fail_link(l, me, p, r); /* everything in flight on it fails */
            }
        }
    for (int i = 0; i < l->nq; i++) {
        my_frame *f = &l->q[i];
        if (f->state == F_SENT && f->dst == me && !l->silent[f->rail] &&
            f->conn == l->conn[me][f->src][f->rail]) {
            int rc = bfo_engine_frame(e, f->src, f->rail, f->data, f->len, l->now);
            if (rc == BFO_ERR_AGAIN)
                break; /* no buffer: keep it, and what follows, for later */
            if (rc == BFO_ERR_PEER_UNREACHABLE) { /* given up: do not acknowledge */
                l->conn[me][f->src][f->rail] = 0;
                continue;
            }
            f->state = F_TAKEN; /* taken (or dropped as stale): acknowledge it */
        } else if (f->state == F_TAKEN && f->src == me && !l->silent[f->rail]) {
            f->state = F_GONE; /* the acknowledgement: the peer has it */
            free(f->data);
            bfo_engine_rail_heard(e, f->dst, f->rail, l->now);
            bfo_engine_completion(e, f->token, 1);
        }
    }
    bfo_engine_progress(e, l->now);
}
/* doc end: progress */

static void my_compact(my_layer *l)
{
    int k = 0;
    for (int i = 0; i < l->nq; i++)
        if (l->q[i].state != F_GONE)
            l->q[k++] = l->q[i];
    l->nq = k;
}

/* One tick: 100 us of time, every rank progresses. */
static void my_tick(my_layer *l)
{
    l->now += 100000;
    for (int r = 0; r < NRANKS; r++)
        my_progress(l, r);
    my_compact(l);
}

/* doc begin: init */
static int my_init(my_layer *l, int rank)
{
    bfo_config cfg;
    bfo_backend be;
    memset(&cfg, 0, sizeof cfg); /* zero: the documented defaults */
    cfg.rank = rank;
    cfg.nranks = NRANKS;
    cfg.nrails = NRAILS;
    cfg.max_requests = 64;       /* requests alive at once */
    size_t need = bfo_engine_mem_size(&cfg);
    l->mem[rank] = malloc(need); /* the engine allocates nothing itself */
    if (!l->mem[rank])
        return BFO_ERR_NO_MEMORY;
    l->ep[rank].l = l;
    l->ep[rank].rank = rank;
    my_backend(&l->ep[rank], &be);
    return bfo_engine_init(&l->eng[rank], &cfg, &be, l->mem[rank], need, l->now);
}
/* doc end: init */

static my_layer *my_new(void)
{
    my_layer *l = (my_layer *)calloc(1, sizeof *l);
    assert_non_null(l);
    l->now = 1;
    for (int r = 0; r < NRANKS; r++)
        assert_int_equal(my_init(l, r), BFO_OK);
    for (int k = 0; k < 20; k++)
        my_tick(l);
    /* rails connect on first use: a first message each way connects and
     * probes them (the tests are about rails UP); a large one, since a
     * small one connects one rail only (one rail first) */
    static uint8_t b[65536];
    for (int r = 0; r < NRANKS; r++) {
        bfo_request s, q;
        assert_int_equal(bfo_irecv(&l->eng[1 - r], &q, b, sizeof b, r, 0, 99, l->now), BFO_OK);
        assert_int_equal(bfo_isend(&l->eng[r], &s, b, sizeof b, 1 - r, 0, 99, l->now), BFO_OK);
        for (int k = 0; k < 100000 && !(bfo_test(&s) && bfo_test(&q)); k++)
            my_tick(l);
        assert_true(bfo_test(&s) && bfo_test(&q));
    }
    for (int k = 0, up = 0; k < 100000 && !up; k++) {
        my_tick(l);
        up = 1;
        for (int r = 0; r < NRANKS; r++)
            for (int g = 0; g < NRAILS; g++)
                up &= l->eng[r].peers[1 - r].rail[g].fsm.cs == BFO_RAIL_ST_UP;
    }
    return l;
}

static void my_free(my_layer *l)
{
    for (int i = 0; i < l->nq; i++)
        if (l->q[i].state != F_GONE)
            free(l->q[i].data);
    for (int r = 0; r < NRANKS; r++)
        free(l->mem[r]);
    free(l);
}

static uint8_t *pattern(size_t n, int seed)
{
    uint8_t *b = (uint8_t *)malloc(n ? n : 1);
    for (size_t i = 0; i < n; i++)
        b[i] = (uint8_t)(i * 7 + (size_t)seed + (i >> 9));
    return b;
}

/* doc begin: send_recv */
/* A message from rank 0 to rank 1, waited for by polling. */
static int my_send_recv(my_layer *l, const void *sbuf, size_t len, void *rbuf, size_t cap)
{
    bfo_request s, r;
    int rc = bfo_irecv(&l->eng[1], &r, rbuf, cap, 0, /*ctx*/ 0, /*tag*/ 7, l->now);
    if (rc != BFO_OK)
        return rc;
    rc = bfo_isend(&l->eng[0], &s, sbuf, len, 1, 0, 7, l->now);
    if (rc != BFO_OK)
        return rc; /* BFO_ERR_PEER_UNREACHABLE: s is complete already */
    for (int k = 0; k < 100000 && !(bfo_test(&s) && bfo_test(&r)); k++)
        my_tick(l);
    if (!bfo_test(&s) || !bfo_test(&r))
        return -1; /* (the test fails on it) */
    /* the buffers are the caller's again; the status says how it ended */
    if (s.status != BFO_OK)
        return s.status;       /* BFO_ERR_PEER_UNREACHABLE */
    return r.status;           /* BFO_OK, BFO_ERR_TRUNCATE (r.length is the
                                * message's size), BFO_ERR_PEER_UNREACHABLE */
}
/* doc end: send_recv */

/* ----------------------------------------------------------------- tests */

static void check_message(my_layer *l, size_t len)
{
    uint8_t *s = pattern(len, (int)len), *r = (uint8_t *)calloc(1, len + 1);
    assert_int_equal(my_send_recv(l, s, len, r, len), BFO_OK);
    assert_memory_equal(s, r, len);
    free(s);
    free(r);
}

static void test_porting_layer_carries_messages_of_every_size(void **state)
{
    (void)state;
    my_layer *l = my_new();
    for (int r = 0; r < NRAILS; r++)
        assert_int_equal(l->eng[0].peers[1].rail[r].fsm.cs, BFO_RAIL_ST_UP);
    check_message(l, 0);
    check_message(l, 64);
    check_message(l, 4096);      /* the largest eager message */
    check_message(l, 4097);      /* the smallest rendezvous */
    check_message(l, 1 << 20);   /* striped over both rails */
    assert_true(l->eng[0].stats.rail_bytes[0] > 0 && l->eng[0].stats.rail_bytes[1] > 0);
    my_free(l);
}

static void test_porting_rail_error_mid_message_moves_to_the_other_rail(void **state)
{
    (void)state;
    my_layer *l = my_new();
    size_t len = 4 << 20;
    uint8_t *s = pattern(len, 3), *r = (uint8_t *)calloc(1, len);
    bfo_request sr, rr;
    assert_int_equal(bfo_irecv(&l->eng[1], &rr, r, len, 0, 0, 1, l->now), BFO_OK);
    assert_int_equal(bfo_isend(&l->eng[0], &sr, s, len, 1, 0, 1, l->now), BFO_OK);
    for (int k = 0; k < 5; k++)
        my_tick(l);
    l->cut[0] = 1; /* the link reports an error on both sides */
    for (int k = 0; k < 100000 && !(bfo_test(&sr) && bfo_test(&rr)); k++)
        my_tick(l);
    assert_true(bfo_test(&sr) && bfo_test(&rr));
    assert_int_equal(sr.status, BFO_OK);
    assert_int_equal(rr.status, BFO_OK);
    assert_memory_equal(s, r, len);
    assert_true(l->eng[0].stats.mapouts >= 1);
    assert_true(l->eng[0].stats.restarts + l->eng[1].stats.restarts >= 1); /* FRAGs were lost */
    l->cut[0] = 0; /* the rail comes back: re-admitted after probing */
    for (int k = 0; k < 20000 && l->eng[0].peers[1].rail[0].fsm.cs != BFO_RAIL_ST_UP; k++)
        my_tick(l);
    assert_int_equal(l->eng[0].peers[1].rail[0].fsm.cs, BFO_RAIL_ST_UP);
    check_message(l, 100000);
    free(s);
    free(r);
    my_free(l);
}

static void test_porting_silent_rail_is_found_by_the_probe_and_disconnected(void **state)
{
    (void)state;
    my_layer *l = my_new();
    bfo_request wait[NRANKS]; /* each rank waits on the other: work, the rails are
                               * probed (an idle peer is not) */
    uint8_t b[NRANKS];
    for (int r = 0; r < NRANKS; r++)
        assert_int_equal(bfo_irecv(&l->eng[r], &wait[r], &b[r], 1, 1 - r, 0, 98, l->now), BFO_OK);
    uint64_t t0 = l->now;
    l->silent[1] = 1; /* frames and acknowledgements vanish: no error at all */
    int k = 0;
    for (; k < 100000 && (l->eng[0].peers[1].rail[1].fsm.cs == BFO_RAIL_ST_UP ||
                          l->eng[1].peers[0].rail[1].fsm.cs == BFO_RAIL_ST_UP); k++)
        my_tick(l);
    /* heartbeat 100 ms + probe timeout 40 ms, and one tick */
    assert_true(l->now - t0 <= 140000000ull + 100000);
    assert_int_not_equal(l->eng[0].peers[1].rail[1].fsm.cs, BFO_RAIL_ST_UP);
    assert_true(l->disconnects >= 1); /* the side whose probe timed out, at least */
    /* ... and what vanished on the rail (the unanswered probe) failed at the
     * map-out, not 10 ms later at the reconnect */
    my_tick(l);
    for (int i = 0; i < l->nq; i++)
        assert_false(l->q[i].rail == 1 && l->q[i].state != F_GONE);
    check_message(l, 300000); /* over rail 0 alone */
    l->silent[1] = 0;
    for (k = 0; k < 20000 && l->eng[0].peers[1].rail[1].fsm.cs != BFO_RAIL_ST_UP; k++)
        my_tick(l);
    assert_int_equal(l->eng[0].peers[1].rail[1].fsm.cs, BFO_RAIL_ST_UP);
    for (int r = 0; r < NRANKS; r++)
        assert_int_equal(bfo_cancel(&l->eng[r], &wait[r], l->now), BFO_OK);
    my_free(l);
}

static void test_porting_no_rail_left_fails_with_peer_unreachable(void **state)
{
    (void)state;
    my_layer *l = my_new();
    uint8_t sbuf[64] = { 1 }, rbuf[64];
    l->cut[0] = l->cut[1] = 1;
    /* the pending message fails once unreachable_grace (2 s) passes */
    assert_int_equal(my_send_recv(l, sbuf, sizeof sbuf, rbuf, sizeof rbuf), BFO_ERR_PEER_UNREACHABLE);
    /* a peer given up stays given up: new requests fail at once */
    bfo_request s;
    assert_int_equal(bfo_isend(&l->eng[0], &s, sbuf, sizeof sbuf, 1, 0, 0, l->now),
                     BFO_ERR_PEER_UNREACHABLE);
    assert_true(bfo_test(&s));
    my_free(l);
}

static void test_porting_short_receive_buffer_truncates(void **state)
{
    (void)state;
    my_layer *l = my_new();
    uint8_t *s = pattern(10000, 1), r[100];
    assert_int_equal(my_send_recv(l, s, 10000, r, sizeof r), BFO_ERR_TRUNCATE);
    assert_memory_equal(s, r, sizeof r);
    free(s);
    my_free(l);
}

/* doc begin: trace */
/* Every transition of every machine of the engine, as it happens. */
static void my_trace(void *user, const bfo_machine *m, const bfo_step *st)
{
    int *count = (int *)user;
    (*count)++;
    if (getenv("MY_TRACE"))
        printf("%s %s -> %s on %s\n", m->name, bfo_fsm_state_name(m, st->from),
               bfo_fsm_state_name(m, st->to), bfo_event_name(st->event));
}
/* doc end: trace */

static void test_porting_trace_hook_sees_the_transitions(void **state)
{
    (void)state;
    my_layer *l = my_new();
    int count = 0;
    bfo_tracer tr = { my_trace, &count };
    l->eng[0].trace = &tr;
    l->eng[1].trace = &tr;
    check_message(l, 64); /* send IDLE->MATCH_SENT->COMPLETE, recv POSTED->COMPLETE */
    assert_true(count >= 3);
    l->eng[0].trace = l->eng[1].trace = NULL;
    my_free(l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_porting_layer_carries_messages_of_every_size),
        cmocka_unit_test(test_porting_rail_error_mid_message_moves_to_the_other_rail),
        cmocka_unit_test(test_porting_silent_rail_is_found_by_the_probe_and_disconnected),
        cmocka_unit_test(test_porting_no_rail_left_fails_with_peer_unreachable),
        cmocka_unit_test(test_porting_short_receive_buffer_truncates),
        cmocka_unit_test(test_porting_trace_hook_sees_the_transitions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
