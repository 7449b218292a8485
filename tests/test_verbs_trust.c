// SPDX-License-Identifier: BSD-3-Clause
/* test_verbs_trust.c - who may take a verbs rail (issue 37: connections
 * authenticated in the conn machine, as test_tcp_trust.c and
 * test_shm_trust.c for TCP and shm), without a device.
 *
 * Ranks 0 and 1 of a job of 3, each a bfo_link for the (peer, rail 0) run
 * by the conn machine, taking bfo_verbs.c's own decisions on the UD
 * exchange: what a datagram is (bfo_vu_route), what a REQ does to the
 * claims held (bfo_va_req_verdict), which claim an RTU proves
 * (bfo_va_rtu_proves, bfo_va_rtu_again), a claim's timer
 * (bfo_va_claim_timer), the link's (bfo_vu_timer), what the device does
 * for each conn machine action (bfo_va_op), and what REQ, REP and RTU
 * carry and how they are checked (bfo_va_*_make, bfo_va_*_check), all in
 * bfo_verbs_auth.h and bfo_verbs_ud.h; the model carries out only the
 * device's part (a queue pair is a number, a datagram goes on the wire
 * below).  A REQ is a claim, challenged from a queue pair held aside,
 * taken only at an RTU that proves its dialer; a dialer takes only a REP
 * that proves its peer: a wrong decision there fails these tests.  Each rank has its bfo_auth made from
 * the job's membership key (a test key) and the others' public keys.  The
 * wire delivers every datagram to the rank it is sent to (a REP or RTU to
 * the rank named, as bfo_verbs.c sends to the card's UD queue pair), and
 * the attacker sees all of them (the log) and sends its own:
 *   (a) an outsider (the job id, the ranks' public keys, another
 *       membership key) claims rank 0 with attempt 2^32-1 before any rail
 *       is up, then answers the challenge it saw as best it can: nothing
 *       is taken, the attempt taken stays 0, and rank 0 then connects;
 *   (b) the same against a live rail: it stays, towards the same queue
 *       pair, and the engine hears nothing;
 *   (c) a real exchange of rank 0's, recorded (REQ and RTU), replayed to
 *       rank 1 restarted: refused;
 *   (d) a job member (rank 2, the real membership key) poses as rank 0,
 *       with its own pair key over the right transcript: refused;
 *   (e) a forged REP to rank 0's dial (rank 1 posing, with the outsider's
 *       keys, first on the wire) is dropped and the dial goes on to the
 *       real one: rank 0 connects to rank 1's queue pair, not the forger's;
 *   (f) a copy of rank 0's REQ with another queue pair number in it (whoever
 *       sees a datagram on the fabric), ahead of the real one: the copy is
 *       challenged but never proven (the REP's and RTU's BIND cover the
 *       control fields), and rank 1 connects to rank 0's queue pair;
 * and the exchange itself, authenticated: one side asks, both at once, no
 * datagram more than before (REQ, REP, RTU); a claim never proven dropped
 * at its deadline, a flood of claims that drops the oldest, not the real
 * one, and a REQ sent again (its REP lost) answered with the same REP.
 *
 * BFO_TEST_NOAUTH=1 runs the same with no bfo_auth (the exchange of
 * before: every REQ taken at its word, the attacks sent as the 64-byte
 * messages of that exchange): (a) to (f) fail there. */
#include "bfo_test.h"
#include "bfo_auth.h"
#include "bfo_link.h"
#include "bfo_verbs_auth.h"
#include "bfo_verbs_ud.h"

#include <stdlib.h>

#define JOB 0x1234567890abcdefull
#define TIMEOUT_NS 2000000000ull
#define MS 1000000ull
#define SIZE 3
#define NCLAIMS BFO_VA_CLAIMS

static int noauth;
static bfo_auth *A[SIZE]; /* the members' keys */
static bfo_auth *OUT;     /* an outsider's: rank 0's identity, another membership key */

/* --------------------------------------------------------------- model */

typedef struct claim {
    bfo_va_held h; /* first: bfo_verbs_auth.h's decisions see it */
    uint32_t qpn, peer_qpn; /* its queue pair held aside, and the claimant's */
} claim;

typedef struct end {
    bfo_link_binding b;
    bfo_link l;
    int rank, peer;
    bfo_auth *a;
    bfo_va_dial dial;
    int have_dial, have_qp;
    uint32_t qpn, peer_qpn, next_qpn;
    bfo_vu_resend rs;
    claim pool[NCLAIMS];       /* slot k's claim is pool[k] ... */
    bfo_va_held *cl[NCLAIMS];  /* ... while cl[k] points at it (bfo_verbs.c: vqp.cl) */
    int ups, failed, errors, rejected;
    struct net *net;
} end;

typedef struct dg {
    int to;
    uint64_t at;
    size_t len;
    uint8_t m[BFO_VA_MAX_LEN];
} dg;

#define NQ 1024
typedef struct net {
    end e[2];     /* rank 0's link to rank 1, rank 1's to rank 0 */
    dg q[NQ];     /* in flight */
    int n;
    dg log[NQ];   /* every datagram the ranks sent (the attacker sees them) */
    int nlog;
    uint64_t now;
} net;

static void put(net *n, int to, const uint8_t *m, size_t len)
{
    assert_true(n->n < NQ && n->nlog < NQ && len <= BFO_VA_MAX_LEN);
    n->q[n->n].to = to;
    n->q[n->n].at = n->now + MS;
    n->q[n->n].len = len;
    memcpy(n->q[n->n].m, m, len);
    n->n++;
}

static void send_own(end *e, const uint8_t *m, size_t len)
{
    net *n = e->net;
    n->log[n->nlog].to = e->peer;
    n->log[n->nlog].len = len;
    memcpy(n->log[n->nlog].m, m, len);
    n->nlog++;
    put(n, e->peer, m, len);
}

static void ctl(const end *e, int kind, uint32_t qpn, uint64_t attempt, uint8_t *m)
{
    bfo_vu_msg s;
    memset(&s, 0, sizeof s);
    s.kind = kind;
    s.rank = (uint32_t)e->rank;
    s.nranks = SIZE;
    s.job = JOB;
    s.qpn = qpn;
    s.psn = 7;
    s.lid = 1;
    s.mtu = 3;
    s.attempt = (uint32_t)attempt;
    s.dialed = (uint32_t)e->l.dialed;
    bfo_vu_msg_encode(&s, m);
}

static void send_ctl(end *e, int kind, uint32_t qpn, uint64_t attempt)
{
    uint8_t m[BFO_VERBS_CTL_SIZE];
    ctl(e, kind, qpn, attempt, m);
    send_own(e, m, sizeof m);
}

/* A claim's slot, -1 when not held (bfo_verbs.c: claim_slot). */
static int slot_of(const end *e, const claim *c)
{
    for (int k = 0; k < NCLAIMS; k++)
        if (e->cl[k] == &c->h)
            return k;
    return -1;
}

/* claim_drop: its slot free */
static void drop(end *e, claim *c)
{
    int k = slot_of(e, c);
    if (k >= 0)
        e->cl[k] = NULL;
}

/* claim_challenge: a queue pair of the claim's own, the REP */
static void challenge(end *e, claim *c)
{
    uint8_t m[BFO_VERBS_CTL_SIZE];
    c->qpn = e->next_qpn++;
    ctl(e, BFO_VERBS_K_REP, c->qpn, c->h.attempt, m);
    assert_int_equal(bfo_va_rep_make(e->a, &c->h.a, m), BFO_OK);
    c->h.challenged = 1;
    c->h.deadline = e->net->now + TIMEOUT_NS;
    send_own(e, c->h.a.rep, sizeof c->h.a.rep);
    bfo_vu_arm(&c->h.rs, BFO_VU_SEND_REP, e->net->now);
}

/* The conn machine's actions: the device's part as bfo_verbs.c's g_conn
 * decides it over UD (bfo_va_op), the reports as the glue's. */
static int act(bfo_link_binding *b, bfo_link *l, int action, const bfo_step *st, void *arg)
{
    end *e = (end *)b->ctx;
    (void)l;
    (void)st;
    switch (action) {
    case BFO_CONN_ACT_REPORT_UP:
        e->ups++;
        return 0;
    case BFO_CONN_ACT_REPORT_FAILED:
        e->failed++;
        return 0;
    case BFO_CONN_ACT_REPORT_ERROR:
        e->errors++;
        return 0;
    case BFO_CONN_ACT_CLOSE:
        e->have_qp = 0;
        e->have_dial = 0;
        e->rs.what = BFO_VU_NONE;
        return 0;
    case BFO_CONN_ACT_WAIT:
        return 0;
    }
    switch (bfo_va_op(!noauth, action, arg)) {
    case BFO_VA_OP_DIAL:
        e->have_qp = 1;
        e->qpn = e->next_qpn++;
        return BFO_CONN_EV_DIAL_CONNECTED;
    case BFO_VA_OP_REQ:
        if (noauth) {
            send_ctl(e, BFO_VERBS_K_REQ, e->qpn, e->l.attempt);
        } else { /* auth_hello */
            uint8_t m[BFO_VERBS_CTL_SIZE];
            ctl(e, BFO_VERBS_K_REQ, e->qpn, e->l.attempt, m);
            assert_int_equal(bfo_va_req_make(e->a, &e->dial, m, e->peer, 0, (uint32_t)e->l.attempt), BFO_OK);
            e->have_dial = 1;
            send_own(e, e->dial.req, sizeof e->dial.req);
        }
        bfo_vu_arm(&e->rs, BFO_VU_SEND_REQ, e->net->now);
        return 0;
    case BFO_VA_OP_TAKE_REQ: /* ud_take */
        e->have_qp = 1;
        e->qpn = e->next_qpn++;
        e->peer_qpn = ((const bfo_vu_msg *)arg)->qpn;
        return 0;
    case BFO_VA_OP_REP:
        send_ctl(e, BFO_VERBS_K_REP, e->qpn, e->l.attempt);
        bfo_vu_arm(&e->rs, BFO_VU_SEND_REP, e->net->now);
        return 0;
    case BFO_VA_OP_TAKE_CLAIM: { /* claim_take */
        claim *c = (claim *)arg;
        e->have_qp = 1;
        e->qpn = c->qpn;
        e->peer_qpn = c->peer_qpn;
        e->rs.what = BFO_VU_NONE;
        drop(e, c);
        return 0;
    }
    case BFO_VA_OP_CHALLENGE:
        challenge(e, (claim *)arg);
        return 0;
    case BFO_VA_OP_DROP_CLAIM:
        drop(e, (claim *)arg);
        return 0;
    }
    return 0;
}

/* auth_req */
static void auth_req(end *e, const uint8_t *m, size_t len, const bfo_vu_msg *s)
{
    claim *c;
    int k, evict;
    switch (bfo_va_req_verdict(e->cl, NCLAIMS, m, len, &k, &evict)) {
    case BFO_VA_REQ_AGAIN:
        send_own(e, e->cl[k]->a.rep, sizeof e->cl[k]->a.rep);
        return;
    case BFO_VA_REQ_UNAUTHENTICATED:
        e->rejected++;
        return;
    }
    if (evict) {
        c = (claim *)e->cl[k];
        bfo_link_proof(&e->b, &e->l, 0, c->h.attempt, c, e->net->now);
        drop(e, c);
    }
    c = &e->pool[k];
    memset(c, 0, sizeof *c);
    if (bfo_va_req_check(e->a, &c->h.a, m, len, s->rank, 0, s->attempt) != BFO_OK) {
        e->rejected++;
        return;
    }
    c->peer_qpn = s->qpn;
    c->h.attempt = s->attempt; /* attempts stay far below 2^32 here (bfo_vg_attempt: the same) */
    e->cl[k] = &c->h;
    bfo_link_claim(&e->b, &e->l, c->h.attempt, c, e->net->now);
    if (slot_of(e, c) >= 0 && !c->h.challenged)
        drop(e, c);
}

/* auth_rtu */
static void auth_rtu(end *e, const uint8_t *m, size_t len, uint32_t gen)
{
    int k = bfo_va_rtu_proves(e->a, e->cl, NCLAIMS, m, len, gen);
    if (k >= 0) {
        claim *c = (claim *)e->cl[k];
        bfo_link_proof(&e->b, &e->l, 1, c->h.attempt, c, e->net->now);
        drop(e, c);
    } else if (!bfo_va_rtu_again(e->l.fsm.cs, e->l.attempt, gen)) {
        e->rejected++;
    }
}

/* ud_datagram */
static void datagram(end *e, const uint8_t *m, size_t len)
{
    bfo_vu_msg s;
    char why[128];
    uint64_t now = e->net->now;
    int verdict;
    if (bfo_vu_msg_decode(m, len, 0, e->rank, SIZE, JOB, 0, &s, why, sizeof why) != 0 || (int)s.rank != e->peer) {
        e->rejected++;
        return;
    }
    verdict = bfo_vu_route(!noauth, s.kind, e->l.fsm.cs, bfo_link_is_dialer(&e->l), e->l.attempt, s.attempt, s.qpn,
                           e->have_qp, e->peer_qpn);
    if (!noauth && verdict == BFO_VU_TAKE_REP) { /* auth_rep */
        uint8_t rtu[BFO_VERBS_CTL_SIZE];
        ctl(e, BFO_VERBS_K_RTU, 0, e->l.attempt, rtu);
        if (!e->have_dial || bfo_va_rep_check(e->a, &e->dial, m, len, rtu) != BFO_OK) {
            e->rejected++;
            return;
        }
    }
    switch (verdict) {
    case BFO_VU_CLAIM:
        auth_req(e, m, len, &s);
        break;
    case BFO_VU_PROOF:
        auth_rtu(e, m, len, s.attempt);
        break;
    case BFO_VU_HELLO:
        bfo_link_hello(&e->b, &e->l, s.attempt, &s, now);
        break;
    case BFO_VU_REP_AGAIN:
        send_ctl(e, BFO_VERBS_K_REP, e->qpn, e->l.attempt);
        break;
    case BFO_VU_TAKE_REP:
        e->peer_qpn = s.qpn;
        e->rs.what = BFO_VU_NONE;
        if (noauth)
            send_ctl(e, BFO_VERBS_K_RTU, 0, e->l.attempt);
        else
            send_own(e, e->dial.rtu, sizeof e->dial.rtu);
        bfo_link_reply(&e->b, &e->l, s.dialed, now);
        break;
    case BFO_VU_RTU_AGAIN:
        if (noauth)
            send_ctl(e, BFO_VERBS_K_RTU, 0, e->l.attempt);
        else if (e->have_dial && e->dial.proven)
            send_own(e, e->dial.rtu, sizeof e->dial.rtu);
        break;
    case BFO_VU_TAKE_RTU:
        e->rs.what = BFO_VU_NONE;
        bfo_link_feed(&e->b, &e->l, BFO_CONN_EV_PEER_READY, NULL, now);
        break;
    default:
        break;
    }
}

/* ud_timers, auth_timers and the conn machine's timeout */
static void timers(end *e)
{
    uint64_t now = e->net->now;
    for (int k = 0; !noauth && k < NCLAIMS; k++) {
        claim *c = (claim *)e->cl[k];
        if (!c)
            continue;
        switch (bfo_va_claim_timer(&c->h, now)) {
        case BFO_VA_CLAIM_EXPIRED:
            e->rejected++;
            bfo_link_proof(&e->b, &e->l, 0, c->h.attempt, c, now);
            drop(e, c);
            break;
        case BFO_VA_CLAIM_REP_DUE:
            send_own(e, c->h.a.rep, sizeof c->h.a.rep);
            break;
        }
    }
    if (bfo_vu_timer(!noauth, e->l.fsm.cs, 0, &e->rs, now) == BFO_VU_T_AGAIN) {
        if (e->rs.what == BFO_VU_SEND_REQ && !noauth)
            send_own(e, e->dial.req, sizeof e->dial.req);
        else
            send_ctl(e, e->rs.what == BFO_VU_SEND_REQ ? BFO_VERBS_K_REQ : BFO_VERBS_K_REP, e->qpn, e->l.attempt);
    }
    bfo_link_timeout(&e->b, &e->l, now);
}

/* Rank r's end, fresh (a restarted transport: its attempts forgotten). */
static void end_init(net *n, int r)
{
    end *e = &n->e[r];
    memset(e, 0, sizeof *e);
    e->rank = r;
    e->peer = 1 - r;
    e->a = A[r];
    e->net = n;
    e->next_qpn = 100 * (uint32_t)(r + 1);
    bfo_link_bind(&e->b, e, act, TIMEOUT_NS);
    bfo_link_init(&e->b, &e->l, r, e->peer, 0);
}

static void net_init(net *n)
{
    memset(n, 0, sizeof *n);
    n->now = MS;
    end_init(n, 0);
    end_init(n, 1);
}

static void ask(net *n, int r)
{
    bfo_link_ask(&n->e[r].b, &n->e[r].l);
    bfo_link_asked(&n->e[r].b, &n->e[r].l, n->now);
}

/* The wire for `ns` of simulated time: every datagram delivered 1 ms after
 * it went, in order. */
static void run(net *n, uint64_t ns)
{
    uint64_t until = n->now + ns;
    for (; n->now < until; n->now += MS / 4) {
        while (n->n > 0 && n->q[0].at <= n->now) {
            dg d = n->q[0];
            memmove(&n->q[0], &n->q[1], (size_t)(n->n - 1) * sizeof n->q[0]);
            n->n--;
            datagram(&n->e[d.to], d.m, d.len);
        }
        timers(&n->e[0]);
        timers(&n->e[1]);
    }
}

/* Both up once, towards each other's queue pair. */
static void agree(const net *n)
{
    const end *d = &n->e[0], *a = &n->e[1];
    assert_true(bfo_link_up(&d->l));
    assert_true(bfo_link_up(&a->l));
    assert_int_equal(d->peer_qpn, a->qpn);
    assert_int_equal(a->peer_qpn, d->qpn);
    assert_int_equal(d->errors + a->errors, 0);
}

/* The last datagram of `kind` the ranks sent to rank `to`. */
static const dg *logged(const net *n, int to, int kind)
{
    for (int k = n->nlog - 1; k >= 0; k--)
        if (n->log[k].to == to && n->log[k].m[4] == kind)
            return &n->log[k];
    return NULL;
}

/* --------------------------------------------------------- the attacker */

/* A REQ claiming rank `as` to rank 1 with attempt `attempt` and queue
 * pair qpn, its HELLO made with keys `a` (rank `as` patched in: a member
 * posing as another).  Its handshake state in *d. */
static void forged_req(net *n, bfo_auth *a, bfo_va_dial *d, int as, uint64_t attempt, uint32_t qpn)
{
    bfo_vu_msg s;
    uint8_t m[BFO_VERBS_CTL_SIZE];
    memset(&s, 0, sizeof s);
    s.kind = BFO_VERBS_K_REQ;
    s.rank = (uint32_t)as;
    s.nranks = SIZE;
    s.job = JOB;
    s.qpn = qpn;
    s.mtu = 3;
    s.attempt = (uint32_t)attempt;
    s.dialed = (uint32_t)attempt;
    bfo_vu_msg_encode(&s, m);
    if (noauth) {
        put(n, 1, m, sizeof m);
        return;
    }
    assert_int_equal(bfo_va_req_make(a, d, m, 1, 0, (uint32_t)attempt), BFO_OK);
    bfo_put32(d->req + BFO_VERBS_CTL_SIZE + 4, (uint32_t)as); /* the HELLO's rank */
    memcpy(d->hs.transcript, d->req + BFO_VERBS_CTL_SIZE, BFO_AUTH_HELLO_LEN);
    put(n, 1, d->req, sizeof d->req);
}

/* The RTU the attacker answers the REP it saw with, as best it can: the
 * CONFIRM and BIND under its own keys, over the right transcript. */
static void forged_rtu(net *n, bfo_auth *a, bfo_va_dial *d, int as, uint64_t attempt)
{
    const dg *rep = logged(n, 0, BFO_VERBS_K_REP);
    uint8_t m[BFO_VA_RTU_LEN];
    bfo_vu_msg s;
    memset(&s, 0, sizeof s);
    s.kind = BFO_VERBS_K_RTU;
    s.rank = (uint32_t)as;
    s.nranks = SIZE;
    s.job = JOB;
    s.attempt = (uint32_t)attempt;
    bfo_vu_msg_encode(&s, m);
    if (noauth) {
        put(n, 1, m, BFO_VERBS_CTL_SIZE);
        return;
    }
    assert_non_null(rep); /* the challenge went to the real rank 0: the attacker saw it */
    {
        bfo_auth_hs hs = d->hs;
        bfo_auth_part bind[3] = { { d->req, BFO_VA_REQ_LEN }, { rep->m, BFO_VA_REP_BOUND },
                                  { m, BFO_VERBS_CTL_SIZE + BFO_AUTH_CONFIRM_LEN } };
        memcpy(hs.transcript + BFO_AUTH_HELLO_LEN, rep->m + BFO_VERBS_CTL_SIZE, BFO_AUTH_REPLY_LEN);
        hs.step = 2;
        assert_int_equal(bfo_auth_hs_confirm(a, &hs, m + BFO_VERBS_CTL_SIZE), BFO_OK);
        assert_int_equal(bfo_auth_macv(a, 1, BFO_VA_RTU_LABEL, bind, 3, m + BFO_VERBS_CTL_SIZE + BFO_AUTH_CONFIRM_LEN),
                         BFO_OK);
    }
    put(n, 1, m, sizeof m);
}

/* ---------------------------------------------------------------- keys */

static int setup(void **state)
{
    uint8_t key[BFO_AUTH_KEY_LEN], other[BFO_AUTH_KEY_LEN], pk[SIZE][BFO_AUTH_PUB_LEN];
    (void)state;
    noauth = getenv("BFO_TEST_NOAUTH") && !strcmp(getenv("BFO_TEST_NOAUTH"), "1");
    memset(key, 0x5a, sizeof key);
    memset(other, 0xa5, sizeof other);
    for (int r = 0; r < SIZE; r++) {
        assert_int_equal(bfo_auth_init(&A[r], key, r, SIZE, JOB), BFO_OK);
        bfo_auth_public(A[r], pk[r]);
    }
    assert_int_equal(bfo_auth_init(&OUT, other, 0, SIZE, JOB), BFO_OK); /* rank 0's identity, not the job's key */
    for (int r = 0; r < SIZE; r++)
        for (int p = 0; p < SIZE; p++)
            if (p != r)
                assert_int_equal(bfo_auth_set_peer(A[r], p, pk[p]), BFO_OK);
    for (int p = 1; p < SIZE; p++)
        assert_int_equal(bfo_auth_set_peer(OUT, p, pk[p]), BFO_OK); /* the public keys are in the cards */
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    for (int r = 0; r < SIZE; r++)
        bfo_auth_free(A[r]);
    bfo_auth_free(OUT);
    return 0;
}

/* -------------------------------------------------------------- the tests */

static net N; /* large: not on the stack */

static void test_authenticated_one_side_asks_three_datagrams(void **state)
{
    (void)state;
    net_init(&N);
    ask(&N, 0);
    run(&N, 10 * MS);
    agree(&N);
    assert_int_equal(N.e[0].ups + N.e[1].ups, 2);
    assert_int_equal(N.nlog, 3); /* REQ, REP, RTU: no datagram more than before */
    if (!noauth) {
        assert_int_equal(N.log[0].len, BFO_VA_REQ_LEN);
        assert_int_equal(N.log[1].len, BFO_VA_REP_LEN);
        assert_int_equal(N.log[2].len, BFO_VA_RTU_LEN);
    }
}

static void test_authenticated_both_ask_at_once(void **state)
{
    (void)state;
    net_init(&N);
    ask(&N, 0);
    ask(&N, 1);
    run(&N, 10 * MS);
    agree(&N);
    assert_int_equal(N.e[0].ups + N.e[1].ups, 2);
    assert_int_equal(N.e[0].failed + N.e[1].failed, 0);
}

/* (a) */
static void test_a_forged_request_first_takes_nothing_and_locks_no_one_out(void **state)
{
    bfo_va_dial d;
    (void)state;
    net_init(&N);
    forged_req(&N, OUT, &d, 0, 0xffffffffu, 0x666);
    run(&N, 5 * MS);
    forged_rtu(&N, OUT, &d, 0, 0xffffffffu);
    run(&N, 5 * MS);
    assert_false(bfo_link_up(&N.e[1].l));
    assert_int_equal(N.e[1].ups, 0);
    assert_true(N.e[1].l.taken == 0); /* the forged attempt made nothing stale */
    assert_true(N.e[1].peer_qpn != 0x666);
    /* the real rank 0 */
    ask(&N, 0);
    run(&N, 100 * MS);
    agree(&N);
    assert_true(N.e[1].rejected >= 1);
}

/* (b) */
static void test_a_forged_request_does_not_take_a_live_rail(void **state)
{
    bfo_va_dial d;
    uint32_t qpn;
    (void)state;
    net_init(&N);
    ask(&N, 0);
    run(&N, 10 * MS);
    agree(&N);
    qpn = N.e[1].peer_qpn;
    forged_req(&N, OUT, &d, 0, 0xffffffffu, 0x666);
    run(&N, 5 * MS);
    forged_rtu(&N, OUT, &d, 0, 0xffffffffu);
    run(&N, 2 * TIMEOUT_NS); /* and the challenge's deadline */
    assert_true(bfo_link_up(&N.e[1].l));
    assert_int_equal(N.e[1].peer_qpn, qpn);
    assert_int_equal(N.e[1].ups, 1);
    assert_int_equal(N.e[1].errors, 0);
    agree(&N);
}

/* (c) */
static void test_a_replayed_request_and_rtu_are_refused(void **state)
{
    dg req, rtu;
    (void)state;
    net_init(&N);
    ask(&N, 0);
    run(&N, 10 * MS);
    agree(&N);
    req = *logged(&N, 1, BFO_VERBS_K_REQ);
    rtu = *logged(&N, 1, BFO_VERBS_K_RTU);
    end_init(&N, 1); /* rank 1's transport again: its attempts forgotten */
    put(&N, 1, req.m, req.len);
    run(&N, 5 * MS);
    put(&N, 1, rtu.m, rtu.len);
    run(&N, 5 * MS);
    assert_false(bfo_link_up(&N.e[1].l));
    assert_int_equal(N.e[1].ups, 0);
    if (!noauth)
        assert_true(N.e[1].rejected >= 1);
}

/* (d) */
static void test_a_job_member_posing_as_another_rank_is_refused(void **state)
{
    bfo_va_dial d;
    (void)state;
    net_init(&N);
    forged_req(&N, A[2], &d, 0, 5, 0x777);
    run(&N, 5 * MS);
    forged_rtu(&N, A[2], &d, 0, 5);
    run(&N, 5 * MS);
    assert_false(bfo_link_up(&N.e[1].l));
    assert_int_equal(N.e[1].ups, 0);
    assert_true(N.e[1].l.taken == 0);
    ask(&N, 0); /* the real rank 0 still connects */
    run(&N, 100 * MS);
    agree(&N);
}

/* (e) */
static void test_a_forged_reply_does_not_turn_the_dial(void **state)
{
    bfo_vu_msg s;
    uint8_t m[BFO_VA_REP_LEN];
    (void)state;
    net_init(&N);
    ask(&N, 0);
    /* before rank 1's REP (1 ms on the wire): the outsider's, as rank 1 */
    memset(&s, 0, sizeof s);
    s.kind = BFO_VERBS_K_REP;
    s.rank = 1;
    s.nranks = SIZE;
    s.job = JOB;
    s.qpn = 0x999;
    s.mtu = 3;
    s.attempt = 1;
    bfo_vu_msg_encode(&s, m);
    memset(m + BFO_VERBS_CTL_SIZE, 0, sizeof m - BFO_VERBS_CTL_SIZE);
    if (!noauth) { /* its REPLY over the REQ it saw, under the outsider's keys */
        const dg *req = logged(&N, 1, BFO_VERBS_K_REQ);
        bfo_auth_hs hs;
        int hp, hr;
        uint32_t ha;
        uint8_t hello[BFO_AUTH_HELLO_LEN];
        memcpy(hello, req->m + BFO_VERBS_CTL_SIZE, sizeof hello);
        bfo_put32(hello + 4, 1); /* read as if it came from rank 1 to the outsider's "rank 0" */
        assert_int_equal(bfo_auth_hs_read_hello(OUT, &hs, hello, sizeof hello, &hp, &hr, &ha), BFO_OK);
        assert_int_equal(bfo_auth_hs_reply(OUT, &hs, m + BFO_VERBS_CTL_SIZE), BFO_OK);
    }
    put(&N, 0, m, noauth ? BFO_VERBS_CTL_SIZE : sizeof m);
    run(&N, 10 * MS);
    agree(&N); /* towards rank 1's queue pair, not 0x999 */
    assert_true(N.e[0].peer_qpn != 0x999);
    if (!noauth)
        assert_int_equal(N.e[0].rejected, 1);
}

/* (f) */
static void test_a_copy_of_a_real_request_with_another_queue_pair_is_not_taken(void **state)
{
    dg copy;
    (void)state;
    net_init(&N);
    ask(&N, 0);
    /* rank 0's REQ, seen on the wire and sent again ahead of it with the
     * copier's queue pair (its HELLO as it is) */
    copy = *logged(&N, 1, BFO_VERBS_K_REQ);
    bfo_put32(copy.m + 24, 0x555);
    memmove(&N.q[1], &N.q[0], (size_t)N.n * sizeof N.q[0]);
    N.q[0] = copy;
    N.q[0].at = N.now;
    N.n++;
    run(&N, 20 * MS);
    agree(&N); /* rank 1's queue pair towards rank 0's, not 0x555 */
    assert_true(N.e[1].peer_qpn != 0x555);
}

/* A claim never proven is refused at its deadline (the connect timeout):
 * its queue pair held aside goes, its REP stops (bfo_va_claim_timer). */
static void test_a_claim_never_proven_is_dropped_at_its_deadline(void **state)
{
    bfo_va_dial d;
    int reps;
    (void)state;
    if (noauth)
        skip();
    net_init(&N);
    forged_req(&N, OUT, &d, 0, 0xfffffff0u, 0x661);
    run(&N, TIMEOUT_NS / 2);
    assert_non_null(N.e[1].cl[0]); /* held, challenged: its REP goes again */
    run(&N, TIMEOUT_NS);
    assert_null(N.e[1].cl[0]);
    assert_null(N.e[1].cl[1]);
    assert_true(N.e[1].rejected >= 1);
    reps = N.nlog;
    run(&N, 2 * TIMEOUT_NS);
    assert_int_equal(N.nlog, reps); /* nothing sent for it any more */
    assert_int_equal(N.e[1].ups, 0);
}

/* Forged claims around the real one, every slot held: a new claim drops
 * the oldest (bfo_va_req_verdict), so the real REQ, newer than the
 * forgeries before it, outlives the one after it and its RTU proves it. */
static void test_a_flood_of_claims_drops_the_oldest_not_the_real_one(void **state)
{
    bfo_va_dial d;
    (void)state;
    if (noauth)
        skip();
    net_init(&N);
    forged_req(&N, OUT, &d, 0, 0xfffffff0u, 0x661);
    run(&N, MS / 2);
    forged_req(&N, OUT, &d, 0, 0xfffffff1u, 0x662);
    run(&N, MS / 2);
    ask(&N, 0); /* the real REQ, at rank 1 in 1 ms: it drops the first forgery */
    run(&N, 3 * MS / 4);
    forged_req(&N, OUT, &d, 0, 0xfffffff2u, 0x663); /* before the real RTU: drops the second */
    run(&N, 10 * MS);
    agree(&N);
    assert_int_equal(N.e[0].ups + N.e[1].ups, 2);
    assert_true((N.e[1].cl[0] != NULL) + (N.e[1].cl[1] != NULL) == 1); /* the last forgery, waiting for its deadline */
}

/* A REP lost: the dialer's REQ comes again, byte for byte, and the claim
 * that holds it answers with the same REP (bfo_va_req_verdict AGAIN): no
 * second claim, no second queue pair held aside. */
static void test_a_request_sent_again_gets_the_same_reply(void **state)
{
    dg rep;
    int k, reps = 0;
    (void)state;
    if (noauth)
        skip();
    net_init(&N);
    ask(&N, 0);
    run(&N, MS + MS / 2); /* the REQ read, the REP on the wire */
    for (k = 0; k < N.n && !(N.q[k].to == 0 && N.q[k].m[4] == BFO_VERBS_K_REP); k++)
        ;
    assert_true(k < N.n);
    rep = N.q[k];
    memmove(&N.q[k], &N.q[k + 1], (size_t)(N.n - k - 1) * sizeof N.q[0]); /* lost */
    N.n--;
    run(&N, 100 * MS); /* the REQ again at 50 ms */
    agree(&N);
    for (k = 0; k < N.nlog; k++)
        if (N.log[k].to == 0 && N.log[k].m[4] == BFO_VERBS_K_REP) {
            assert_int_equal(N.log[k].len, rep.len);
            assert_memory_equal(N.log[k].m, rep.m, rep.len); /* the same REP, the same queue pair */
            reps++;
        }
    assert_true(reps >= 2); /* and its own timer's, the same bytes too */
    assert_null(N.e[1].cl[0]);
    assert_null(N.e[1].cl[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_authenticated_one_side_asks_three_datagrams),
        cmocka_unit_test(test_authenticated_both_ask_at_once),
        cmocka_unit_test(test_a_forged_request_first_takes_nothing_and_locks_no_one_out),
        cmocka_unit_test(test_a_forged_request_does_not_take_a_live_rail),
        cmocka_unit_test(test_a_replayed_request_and_rtu_are_refused),
        cmocka_unit_test(test_a_job_member_posing_as_another_rank_is_refused),
        cmocka_unit_test(test_a_forged_reply_does_not_turn_the_dial),
        cmocka_unit_test(test_a_copy_of_a_real_request_with_another_queue_pair_is_not_taken),
        cmocka_unit_test(test_a_claim_never_proven_is_dropped_at_its_deadline),
        cmocka_unit_test(test_a_flood_of_claims_drops_the_oldest_not_the_real_one),
        cmocka_unit_test(test_a_request_sent_again_gets_the_same_reply),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
