// SPDX-License-Identifier: BSD-3-Clause
/* test_verbs_ud.c - the verbs rails' card and the connection exchange over
 * unreliable datagrams (backends/verbs/bfo_verbs_ud.h), without a device.
 *
 * The card and the control message byte by byte (the version 1 card and
 * the message are what the TCP exchange has published and sent since
 * before the UD exchange: their bytes must not move), what a datagram does
 * in each conn state, the repeat schedule, and then the exchange itself:
 * two ends, each a bfo_link run by the conn machine (backends/bfo_link.h)
 * with the same decisions bfo_verbs.c takes on a datagram (bfo_vu_classify)
 * and on its timer (bfo_vu_due, bfo_vu_waits, the first frame standing for
 * a lost RTU), over a wire that loses, repeats, delays and reorders
 * datagrams.  Both ends must come up once each, towards each other's
 * current queue pair, or the attempt must fail at the connect timeout:
 * never one end up alone. */
#include "bfo_test.h"
#include "bfo_link.h"
#include "bfo_verbs_ud.h"

#define JOB 0x1234567890abcdefull
#define TIMEOUT_NS 2000000000ull
#define MS 1000000ull

/* ---------------------------------------------------------------- card */

static void test_card_v2_round_trip(void **state)
{
    bfo_vu_card c, d;
    uint8_t b[64];
    char why[160];
    (void)state;
    memset(&c, 0, sizeof c);
    c.version = 2;
    c.flags = BFO_VU_CARD_UD;
    c.mtu = 3;
    c.lid = 0x1234;
    c.qpn = 0x00abcdef;
    c.qkey = BFO_VU_QKEY;
    for (int i = 0; i < 16; i++)
        c.gid[i] = (uint8_t)(0xf0 + i);
    assert_int_equal(bfo_vu_card_write(&c, b, sizeof b), BFO_VU_CARD_LEN);
    assert_true(BFO_VU_CARD_LEN <= BFO_ADDR_MAX); /* it fits what a transport publishes */
    assert_int_equal(b[0], 'V');
    assert_int_equal(b[1], 2);
    assert_int_equal(bfo_vu_card_read(b, BFO_VU_CARD_LEN, &d, why, sizeof why), 0);
    assert_int_equal(d.version, 2);
    assert_int_equal(d.flags, BFO_VU_CARD_UD);
    assert_int_equal(d.mtu, 3);
    assert_int_equal(d.lid, 0x1234);
    assert_int_equal(d.qpn, 0x00abcdef);
    assert_int_equal(d.qkey, BFO_VU_QKEY);
    assert_memory_equal(d.gid, c.gid, 16);
    assert_int_equal(bfo_vu_card_write(&c, b, BFO_VU_CARD_LEN - 1), 0); /* no room: no card */
}

/* Version 1 is the 8 bytes bfo_verbs_address published for the TCP
 * exchange: u8 4, u8 0, the port and the IPv4 address in network order. */
static void test_card_v1_is_the_old_bytes(void **state)
{
    static const uint8_t old[8] = { 4, 0, 0x1b, 0xcd, 10, 0, 1, 2 }; /* 10.0.1.2:7117 */
    bfo_vu_card c;
    uint8_t b[8];
    char why[160];
    (void)state;
    assert_int_equal(bfo_vu_card_read(old, sizeof old, &c, why, sizeof why), 0);
    assert_int_equal(c.version, 1);
    assert_int_equal(c.tcp_port, 7117);
    assert_int_equal(c.ip, 0x0a000102u);
    assert_int_equal(c.flags & BFO_VU_CARD_UD, 0);
    assert_int_equal(bfo_vu_card_write(&c, b, sizeof b), 8);
    assert_memory_equal(b, old, 8);
}

static void test_card_refused_clearly(void **state)
{
    bfo_vu_card c, d;
    uint8_t b[64], x[64];
    char why[160];
    (void)state;
    memset(&c, 0, sizeof c);
    c.version = 2;
    c.flags = BFO_VU_CARD_UD;
    c.mtu = 3;
    c.qpn = 77;
    bfo_vu_card_write(&c, b, sizeof b);
    /* a newer version: named, with what to do */
    memcpy(x, b, sizeof x);
    x[1] = 3;
    assert_int_equal(bfo_vu_card_read(x, BFO_VU_CARD_LEN, &d, why, sizeof why), -1);
    assert_non_null(strstr(why, "version 3"));
    /* lengths */
    assert_int_equal(bfo_vu_card_read(b, BFO_VU_CARD_LEN - 1, &d, why, sizeof why), -1);
    assert_non_null(strstr(why, "bytes"));
    assert_int_equal(bfo_vu_card_read(b, BFO_VU_CARD_LEN + 1, &d, why, sizeof why), -1);
    assert_int_equal(bfo_vu_card_read(b, 0, &d, why, sizeof why), -1);
    /* not a verbs card at all (a TCP rail's, say) */
    memcpy(x, b, sizeof x);
    x[0] = 6;
    assert_int_equal(bfo_vu_card_read(x, BFO_VU_CARD_LEN, &d, why, sizeof why), -1);
    assert_non_null(strstr(why, "not a verbs card"));
    x[0] = 4; /* 8 bytes starting with 4 but not 4, 0 */
    x[1] = 1;
    assert_int_equal(bfo_vu_card_read(x, 8, &d, why, sizeof why), -1);
    /* a UD card without a queue pair */
    c.qpn = 0;
    bfo_vu_card_write(&c, b, sizeof b);
    assert_int_equal(bfo_vu_card_read(b, BFO_VU_CARD_LEN, &d, why, sizeof why), -1);
    assert_non_null(strstr(why, "queue pair number 0"));
}

/* ------------------------------------------------------------- message */

static bfo_vu_msg msg(int kind, uint32_t rank, int rail, uint32_t qpn, uint32_t attempt)
{
    bfo_vu_msg s;
    memset(&s, 0, sizeof s);
    s.kind = kind;
    s.rail = rail;
    s.rank = rank;
    s.nranks = 2;
    s.job = JOB;
    s.qpn = qpn;
    s.psn = 0x00c0ffee & 0xffffff;
    s.lid = 7;
    s.mtu = 3;
    s.gid[15] = 9;
    s.attempt = attempt;
    return s;
}

/* The bytes the TCP exchange has sent since version 2 (bfo_verbs.h). */
static void test_msg_layout(void **state)
{
    uint8_t m[BFO_VERBS_CTL_SIZE];
    bfo_vu_msg s = msg(BFO_VERBS_K_REQ, 0, 1, 0x123456, 0xdeadbeef), d;
    char why[128];
    (void)state;
    bfo_vu_msg_encode(&s, m);
    assert_int_equal(bfo_get32(m), BFO_VERBS_MAGIC);
    assert_int_equal(m[4], BFO_VERBS_K_REQ);
    assert_int_equal(m[5], 2);
    assert_int_equal(bfo_get16(m + 6), 1);
    assert_int_equal(bfo_get32(m + 8), 0);
    assert_int_equal(bfo_get32(m + 12), 2);
    assert_true(bfo_get64(m + 16) == JOB);
    assert_int_equal(bfo_get32(m + 24), 0x123456);
    assert_int_equal(bfo_get16(m + 32), 7);
    assert_int_equal(m[34], 3);
    assert_int_equal(m[51], 9);
    assert_int_equal(bfo_get32(m + 52), 0xdeadbeef);
    assert_int_equal(bfo_vu_msg_decode(m, sizeof m, 0, 1, 2, JOB, 1, &d, why, sizeof why), 0);
    assert_int_equal(d.kind, BFO_VERBS_K_REQ);
    assert_int_equal(d.qpn, 0x123456);
    assert_int_equal(d.psn, s.psn);
    assert_int_equal(d.attempt, 0xdeadbeef);
    assert_memory_equal(d.gid, s.gid, 16);
}

static void test_msg_refused(void **state)
{
    uint8_t m[BFO_VERBS_CTL_SIZE], x[BFO_VERBS_CTL_SIZE];
    bfo_vu_msg s = msg(BFO_VERBS_K_REP, 1, 0, 55, 3), d;
    char why[128];
    (void)state;
    bfo_vu_msg_encode(&s, m);
    assert_int_equal(bfo_vu_msg_decode(m, sizeof m, 0, 0, 2, JOB, 0, &d, why, sizeof why), 0);
    assert_int_equal(bfo_vu_msg_decode(m, sizeof m - 1, 0, 0, 2, JOB, 0, &d, why, sizeof why), -1); /* short */
    assert_int_equal(bfo_vu_msg_decode(m, sizeof m, BFO_VERBS_K_REQ, 0, 2, JOB, 0, &d, why, sizeof why), -1);
    assert_int_equal(bfo_vu_msg_decode(m, sizeof m, 0, 0, 2, JOB + 1, 0, &d, why, sizeof why), -1); /* job */
    assert_int_equal(bfo_vu_msg_decode(m, sizeof m, 0, 0, 3, JOB, 0, &d, why, sizeof why), -1);     /* size */
    assert_int_equal(bfo_vu_msg_decode(m, sizeof m, 0, 1, 2, JOB, 0, &d, why, sizeof why), -1);     /* from me */
    assert_int_equal(bfo_vu_msg_decode(m, sizeof m, 0, 0, 2, JOB, 1, &d, why, sizeof why), -1);     /* rail */
    memcpy(x, m, sizeof x);
    x[0] ^= 1; /* magic */
    assert_int_equal(bfo_vu_msg_decode(x, sizeof x, 0, 0, 2, JOB, 0, &d, why, sizeof why), -1);
    memcpy(x, m, sizeof x);
    x[5] = 1; /* version */
    assert_int_equal(bfo_vu_msg_decode(x, sizeof x, 0, 0, 2, JOB, 0, &d, why, sizeof why), -1);
    memcpy(x, m, sizeof x);
    x[4] = 4; /* kind */
    assert_int_equal(bfo_vu_msg_decode(x, sizeof x, 0, 0, 2, JOB, 0, &d, why, sizeof why), -1);
    memcpy(x, m, sizeof x);
    x[34] = 6; /* MTU */
    assert_int_equal(bfo_vu_msg_decode(x, sizeof x, 0, 0, 2, JOB, 0, &d, why, sizeof why), -1);
    s = msg(BFO_VERBS_K_REP, 1, 0, 0, 3); /* no queue pair in a REP */
    bfo_vu_msg_encode(&s, x);
    assert_int_equal(bfo_vu_msg_decode(x, sizeof x, 0, 0, 2, JOB, 0, &d, why, sizeof why), -1);
    s = msg(BFO_VERBS_K_RTU, 1, 0, 0, 3); /* an RTU names none */
    s.mtu = 0;
    bfo_vu_msg_encode(&s, x);
    assert_int_equal(bfo_vu_msg_decode(x, sizeof x, 0, 0, 2, JOB, 0, &d, why, sizeof why), 0);
}

/* --------------------------------------------------------------- verdicts */

static void test_classify(void **state)
{
    (void)state;
    /* a REQ: the machine's (new, stale, or at the dialer: refused there) */
    assert_int_equal(bfo_vu_classify(BFO_VERBS_K_REQ, BFO_CONN_ST_DOWN, 0, 0, 1, 10, 0, 0), BFO_VU_HELLO);
    assert_int_equal(bfo_vu_classify(BFO_VERBS_K_REQ, BFO_CONN_ST_AWAITING_HELLO, 0, 3, 4, 10, 0, 0), BFO_VU_HELLO);
    assert_int_equal(bfo_vu_classify(BFO_VERBS_K_REQ, BFO_CONN_ST_REPLY_SENT, 0, 3, 4, 11, 1, 10), BFO_VU_HELLO);
    assert_int_equal(bfo_vu_classify(BFO_VERBS_K_REQ, BFO_CONN_ST_REPLY_SENT, 0, 3, 2, 9, 1, 10), BFO_VU_HELLO);
    assert_int_equal(bfo_vu_classify(BFO_VERBS_K_REQ, BFO_CONN_ST_UP, 1, 3, 3, 10, 1, 10), BFO_VU_HELLO);
    /* ... but the one taken, its REP lost: the REP again */
    assert_int_equal(bfo_vu_classify(BFO_VERBS_K_REQ, BFO_CONN_ST_REPLY_SENT, 0, 3, 3, 10, 1, 10), BFO_VU_REP_AGAIN);
    assert_int_equal(bfo_vu_classify(BFO_VERBS_K_REQ, BFO_CONN_ST_REPLY_SENT_ASKED, 0, 3, 3, 10, 1, 10),
                     BFO_VU_REP_AGAIN);
    assert_int_equal(bfo_vu_classify(BFO_VERBS_K_REQ, BFO_CONN_ST_UP, 0, 3, 3, 10, 1, 10), BFO_VU_REP_AGAIN);
    /* the same attempt, its queue pair gone (closed since): the machine's (stale) */
    assert_int_equal(bfo_vu_classify(BFO_VERBS_K_REQ, BFO_CONN_ST_DOWN, 0, 3, 3, 10, 0, 10), BFO_VU_HELLO);
    /* the attempt's low 32 bits: 0x1_00000003 and 3 are the same attempt */
    assert_int_equal(bfo_vu_classify(BFO_VERBS_K_REQ, BFO_CONN_ST_REPLY_SENT, 0, 0x100000003ull, 3, 10, 1, 10),
                     BFO_VU_REP_AGAIN);
    /* a REP */
    assert_int_equal(bfo_vu_classify(BFO_VERBS_K_REP, BFO_CONN_ST_HELLO_SENT, 1, 5, 5, 20, 1, 0), BFO_VU_TAKE_REP);
    assert_int_equal(bfo_vu_classify(BFO_VERBS_K_REP, BFO_CONN_ST_HELLO_SENT, 1, 5, 4, 20, 1, 0), BFO_VU_DROP);
    assert_int_equal(bfo_vu_classify(BFO_VERBS_K_REP, BFO_CONN_ST_UP, 1, 5, 5, 20, 1, 20), BFO_VU_RTU_AGAIN);
    assert_int_equal(bfo_vu_classify(BFO_VERBS_K_REP, BFO_CONN_ST_UP, 1, 5, 5, 21, 1, 20), BFO_VU_DROP);
    assert_int_equal(bfo_vu_classify(BFO_VERBS_K_REP, BFO_CONN_ST_DOWN, 0, 5, 5, 20, 0, 20), BFO_VU_DROP);
    assert_int_equal(bfo_vu_classify(BFO_VERBS_K_REP, BFO_CONN_ST_DIALING, 1, 5, 5, 20, 1, 0), BFO_VU_DROP);
    /* an RTU */
    assert_int_equal(bfo_vu_classify(BFO_VERBS_K_RTU, BFO_CONN_ST_REPLY_SENT, 0, 5, 5, 0, 1, 20), BFO_VU_TAKE_RTU);
    assert_int_equal(bfo_vu_classify(BFO_VERBS_K_RTU, BFO_CONN_ST_REPLY_SENT_ASKED, 0, 5, 5, 0, 1, 20),
                     BFO_VU_TAKE_RTU);
    assert_int_equal(bfo_vu_classify(BFO_VERBS_K_RTU, BFO_CONN_ST_REPLY_SENT, 0, 5, 4, 0, 1, 20), BFO_VU_DROP);
    assert_int_equal(bfo_vu_classify(BFO_VERBS_K_RTU, BFO_CONN_ST_UP, 0, 5, 5, 0, 1, 20), BFO_VU_DROP);
    /* nothing taken yet: attempt 0 matches nothing */
    assert_int_equal(bfo_vu_classify(BFO_VERBS_K_RTU, BFO_CONN_ST_REPLY_SENT, 0, 0, 0, 0, 1, 20), BFO_VU_DROP);
}

static void test_resend_schedule(void **state)
{
    bfo_vu_resend r;
    uint64_t t, last = 0;
    unsigned n = 1;
    static const uint64_t at[] = { 50, 150, 350, 750, 1250, 1750 }; /* ms after the first */
    (void)state;
    memset(&r, 0, sizeof r);
    assert_int_equal(bfo_vu_due(&r, 5 * TIMEOUT_NS), 0); /* nothing armed */
    bfo_vu_arm(&r, BFO_VU_SEND_REQ, 0);
    for (t = 0; t < TIMEOUT_NS; t += MS)
        if (bfo_vu_due(&r, t)) {
            assert_true(n - 1 < sizeof at / sizeof at[0]);
            assert_true(t == at[n - 1] * MS);
            n++;
            last = t;
        }
    assert_int_equal(n, 7); /* 7 REQs within the default connect timeout */
    assert_int_equal(r.sent, 7);
    assert_true(last == 1750 * MS);
    assert_true(bfo_vu_waits(BFO_VU_SEND_REQ, BFO_CONN_ST_HELLO_SENT));
    assert_false(bfo_vu_waits(BFO_VU_SEND_REQ, BFO_CONN_ST_UP));
    assert_false(bfo_vu_waits(BFO_VU_SEND_REQ, BFO_CONN_ST_DOWN));
    assert_true(bfo_vu_waits(BFO_VU_SEND_REP, BFO_CONN_ST_REPLY_SENT));
    assert_true(bfo_vu_waits(BFO_VU_SEND_REP, BFO_CONN_ST_REPLY_SENT_ASKED));
    assert_false(bfo_vu_waits(BFO_VU_SEND_REP, BFO_CONN_ST_UP));
    assert_false(bfo_vu_waits(BFO_VU_NONE, BFO_CONN_ST_HELLO_SENT));
}

/* ------------------------------------------- the exchange over a bad wire */

/* One end: a (peer, rail) of rank 0 (the dialer) or rank 1 (the acceptor),
 * as bfo_verbs.c keeps it, with a queue pair number per attempt. */
typedef struct ex_end {
    bfo_link_binding b;
    bfo_link l;
    int rank;
    int have_qp;
    uint32_t qpn, peer_qpn;
    int held; /* a frame came before CONNECTED (the acceptor) */
    bfo_vu_resend rs;
    int ups, failed, errors, refused, dups, resends;
    struct ex_net *net;
} ex_end;

typedef struct ex_dg {
    int to;         /* rank */
    int frame;      /* 1: a frame on the RC queue pair (reliable), else a datagram */
    uint64_t at;    /* arrives then */
    uint8_t m[BFO_VERBS_CTL_SIZE];
} ex_dg;

#define EX_MAX 4096
typedef struct ex_net {
    ex_end e[2];
    ex_dg q[EX_MAX];
    int n;
    uint64_t now;
    unsigned sent;     /* datagrams sent */
    uint64_t drop;     /* bit k: the k-th datagram (k < 64) is lost */
    int drop_all, dup_all;
    unsigned lose_pct; /* random loss, percent */
    unsigned max_delay_ms;
    int no_frame; /* the dialer's engine sends nothing at once: a lost RTU waits for the REP again */
    int only;     /* 1 + the rank whose engine alone asks (0: both ask) */
    uint32_t rng;
} ex_net;

static uint32_t ex_rand(ex_net *n)
{
    n->rng = n->rng * 1103515245u + 12345u;
    return n->rng >> 8;
}

static void ex_put(ex_net *n, int to, int frame, const uint8_t *m)
{
    uint64_t delay = MS + (n->max_delay_ms ? (uint64_t)(ex_rand(n) % n->max_delay_ms) * MS : 0);
    assert_true(n->n < EX_MAX);
    n->q[n->n].to = to;
    n->q[n->n].frame = frame;
    n->q[n->n].at = n->now + delay;
    if (m)
        memcpy(n->q[n->n].m, m, BFO_VERBS_CTL_SIZE);
    n->n++;
}

static void ex_send(ex_end *e, int kind)
{
    ex_net *n = e->net;
    uint8_t m[BFO_VERBS_CTL_SIZE];
    bfo_vu_msg s = msg(kind, (uint32_t)e->rank, 0, kind == BFO_VERBS_K_RTU ? 0 : e->qpn, (uint32_t)e->l.attempt);
    unsigned k = n->sent++;
    s.dialed = (uint32_t)e->l.dialed;
    bfo_vu_msg_encode(&s, m);
    if (n->drop_all || (k < 64 && (n->drop >> k) & 1) || (n->lose_pct && ex_rand(n) % 100 < n->lose_pct))
        return;
    ex_put(n, 1 - e->rank, 0, m);
    if (n->dup_all)
        ex_put(n, 1 - e->rank, 0, m);
}

/* The conn machine's actions, as bfo_verbs.c carries them out over UD. */
static int ex_act(bfo_link_binding *b, bfo_link *l, int action, const bfo_step *st, void *arg)
{
    ex_end *e = (ex_end *)b->ctx;
    (void)l;
    (void)st;
    switch (action) {
    case BFO_CONN_ACT_DIAL:
        e->have_qp = 1;
        e->qpn = 1000 + (uint32_t)e->l.attempt;
        return BFO_CONN_EV_DIAL_CONNECTED;
    case BFO_CONN_ACT_SEND_HELLO:
        ex_send(e, BFO_VERBS_K_REQ);
        bfo_vu_arm(&e->rs, BFO_VU_SEND_REQ, e->net->now);
        return 0;
    case BFO_CONN_ACT_TAKE:
        e->have_qp = 1;
        e->qpn = 2000 + (uint32_t)e->l.attempt;
        e->peer_qpn = ((const bfo_vu_msg *)arg)->qpn;
        return 0;
    case BFO_CONN_ACT_SEND_REPLY:
        ex_send(e, BFO_VERBS_K_REP);
        bfo_vu_arm(&e->rs, BFO_VU_SEND_REP, e->net->now);
        return 0;
    case BFO_CONN_ACT_REFUSE:
        e->refused++;
        return 0;
    case BFO_CONN_ACT_REPORT_UP:
        e->ups++;
        e->held = 0;
        if (e->rank == 0 && !e->net->no_frame) /* the engine's PROBE on the new queue pair: reliable */
            ex_put(e->net, 1, 1, NULL);
        return 0;
    case BFO_CONN_ACT_REPORT_FAILED:
        e->failed++;
        return 0;
    case BFO_CONN_ACT_REPORT_ERROR:
        e->errors++;
        return 0;
    case BFO_CONN_ACT_CLOSE:
        e->have_qp = 0;
        e->held = 0;
        e->rs.what = BFO_VU_NONE;
        return 0;
    }
    return 0;
}

/* A datagram at end e, as ud_datagram takes it. */
static void ex_datagram(ex_end *e, const uint8_t *m)
{
    bfo_vu_msg s;
    char why[128];
    uint64_t now = e->net->now;
    assert_int_equal(bfo_vu_msg_decode(m, BFO_VERBS_CTL_SIZE, 0, e->rank, 2, JOB, 0, &s, why, sizeof why), 0);
    switch (bfo_vu_classify(s.kind, e->l.fsm.cs, bfo_link_is_dialer(&e->l), e->l.attempt, s.attempt, s.qpn, e->have_qp,
                            e->peer_qpn)) {
    case BFO_VU_HELLO:
        bfo_link_hello(&e->b, &e->l, s.attempt, &s, now); /* attempts stay far below 2^32 here */
        break;
    case BFO_VU_REP_AGAIN:
        e->dups++;
        ex_send(e, BFO_VERBS_K_REP);
        break;
    case BFO_VU_TAKE_REP:
        e->peer_qpn = s.qpn;
        e->rs.what = BFO_VU_NONE;
        ex_send(e, BFO_VERBS_K_RTU);
        bfo_link_reply(&e->b, &e->l, s.dialed, now);
        break;
    case BFO_VU_RTU_AGAIN:
        e->dups++;
        ex_send(e, BFO_VERBS_K_RTU);
        break;
    case BFO_VU_TAKE_RTU:
        e->rs.what = BFO_VU_NONE;
        bfo_link_feed(&e->b, &e->l, BFO_CONN_EV_PEER_READY, NULL, now);
        break;
    default:
        break;
    }
}

/* ud_timers and the conn machine's timeout, at end e. */
static void ex_timers(ex_end *e)
{
    uint64_t now = e->net->now;
    switch (bfo_vu_timer(0, e->l.fsm.cs, e->held, &e->rs, now)) {
    case BFO_VU_T_READY: /* a frame before the RTU */
        bfo_link_feed(&e->b, &e->l, BFO_CONN_EV_PEER_READY, NULL, now);
        break;
    case BFO_VU_T_AGAIN:
        e->resends++;
        ex_send(e, e->rs.what == BFO_VU_SEND_REQ ? BFO_VERBS_K_REQ : BFO_VERBS_K_REP);
        break;
    }
    bfo_link_timeout(&e->b, &e->l, now);
}

static void ex_init(ex_net *n)
{
    memset(n, 0, sizeof *n);
    n->rng = 1;
    for (int r = 0; r < 2; r++) {
        ex_end *e = &n->e[r];
        e->rank = r;
        e->net = n;
        bfo_link_bind(&e->b, e, ex_act, TIMEOUT_NS);
        bfo_link_init(&e->b, &e->l, r, 1 - r, 0);
    }
}

/* Both engines ask for the connection at `now`; the wire runs until until_ns. */
static void ex_run(ex_net *n, uint64_t until_ns)
{
    for (int r = 0; r < 2; r++) {
        if (n->only && n->only != r + 1)
            continue;
        bfo_link_ask(&n->e[r].b, &n->e[r].l);
        bfo_link_asked(&n->e[r].b, &n->e[r].l, n->now);
    }
    for (; n->now < until_ns; n->now += MS / 4) {
        for (int k = 0; k < n->n;) {
            if (n->q[k].at > n->now) {
                k++;
                continue;
            }
            ex_dg d = n->q[k];
            n->q[k] = n->q[--n->n]; /* any order: the wire reorders */
            if (d.frame) {
                if (!bfo_link_up(&n->e[d.to].l))
                    n->e[d.to].held = 1;
            } else {
                ex_datagram(&n->e[d.to], d.m);
            }
        }
        for (int r = 0; r < 2; r++)
            ex_timers(&n->e[r]);
    }
}

/* Both up, once each, towards each other's queue pair; or neither (the
 * attempt failed at the timeout). */
static int ex_agree(const ex_net *n)
{
    const ex_end *d = &n->e[0], *a = &n->e[1];
    int dup = bfo_link_up(&d->l), aup = bfo_link_up(&a->l);
    assert_int_equal(dup, aup);
    if (dup) {
        assert_int_equal(d->peer_qpn, a->qpn);
        assert_int_equal(a->peer_qpn, d->qpn);
        assert_true(d->l.attempt == a->l.attempt);
    }
    assert_int_equal(d->errors + a->errors, 0);
    return dup;
}

static void test_exchange_clean(void **state)
{
    ex_net n;
    (void)state;
    ex_init(&n);
    ex_run(&n, 10 * MS);
    assert_true(ex_agree(&n));
    assert_int_equal(n.e[0].ups, 1);
    assert_int_equal(n.e[1].ups, 1);
    assert_int_equal(n.sent, 4); /* both dial: a REQ each way, the REP to rank 0's (the lower rank's wins), RTU */
    assert_int_equal(n.e[0].resends + n.e[1].resends, 0);
    assert_int_equal(n.e[0].failed + n.e[1].failed, 0);
}

/* Only one engine asks (first use: one rank sends, the other never did):
 * either rank dials, the other takes its REQ; REQ, REP, RTU. */
static void test_exchange_one_side_asks(void **state)
{
    (void)state;
    for (int only = 1; only <= 2; only++) {
        ex_net n;
        ex_init(&n);
        n.only = only;
        ex_run(&n, 10 * MS);
        assert_true(ex_agree(&n));
        assert_int_equal(n.e[0].ups, 1);
        assert_int_equal(n.e[1].ups, 1);
        assert_int_equal(n.sent, 3);
        assert_true(bfo_link_is_dialer(&n.e[only - 1].l));
    }
}

/* Each of the first 8 datagrams lost in turn, and pairs of them: up
 * within the timeout, once each; with the dialer's first frame standing
 * for a lost RTU, and without (the REP comes again, the RTU with it). */
static void test_exchange_each_loss(void **state)
{
    (void)state;
    for (int i = 0; i < 16; i++)
        for (int j = i % 8; j < 8; j++) {
            ex_net n;
            ex_init(&n);
            n.no_frame = i >= 8;
            n.drop = (1ull << (i % 8)) | (1ull << j);
            ex_run(&n, TIMEOUT_NS - MS);
            assert_true(ex_agree(&n));
            assert_int_equal(n.e[0].ups, 1);
            assert_int_equal(n.e[1].ups, 1);
            assert_int_equal(n.e[0].failed + n.e[1].failed, 0);
        }
}

/* Every datagram twice: up once each; the second REQ and REP answered
 * again, not taken as new ones (nor refused as stale). */
static void test_exchange_duplicates(void **state)
{
    ex_net n;
    (void)state;
    ex_init(&n);
    n.dup_all = 1;
    ex_run(&n, 100 * MS);
    assert_true(ex_agree(&n));
    assert_int_equal(n.e[0].ups, 1);
    assert_int_equal(n.e[1].ups, 1);
    assert_true(n.e[0].dups + n.e[1].dups > 0);
    assert_int_equal(n.e[1].refused, 0);
}

/* Nothing gets through: 7 REQs from each side, then CONNECT_FAILED at the connect
 * timeout on both ends (each engine asked), nobody up. */
static void test_exchange_nothing_through(void **state)
{
    ex_net n;
    (void)state;
    ex_init(&n);
    n.drop_all = 1;
    ex_run(&n, TIMEOUT_NS + 10 * MS);
    assert_false(ex_agree(&n));
    assert_int_equal(n.sent, 14); /* 7 REQs from each side: both dial */
    assert_int_equal(n.e[0].failed, 1);
    assert_int_equal(n.e[1].failed, 1);
    assert_int_equal(n.e[0].l.fsm.cs, BFO_CONN_ST_DOWN);
    assert_int_equal(n.e[1].l.fsm.cs, BFO_CONN_ST_DOWN);
}

/* Random loss, delays up to 300 ms (datagrams of an attempt given up
 * arrive during the next), duplicates: whatever happens, both ends agree
 * at every retry, and the engines' next connect() brings the rail up. */
static void test_exchange_random(void **state)
{
    int up_first = 0, runs = 0;
    (void)state;
    for (uint32_t seed = 1; seed <= 300; seed++) {
        ex_net n;
        ex_init(&n);
        n.rng = seed;
        n.lose_pct = 10 + seed % 50;
        n.max_delay_ms = seed % 3 == 0 ? 300 : 20;
        n.dup_all = seed % 5 == 0;
        for (int t = 0; t < 8; t++) {
            ex_run(&n, n.now + TIMEOUT_NS + 400 * MS);
            if (ex_agree(&n))
                break;
        }
        assert_true(bfo_link_up(&n.e[0].l));
        assert_int_equal(n.e[0].ups, 1);
        assert_int_equal(n.e[1].ups, 1);
        up_first += n.e[0].failed == 0;
        runs++;
    }
    print_message("random loss: %d of %d runs up at the first attempt\n", up_first, runs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_card_v2_round_trip),
        cmocka_unit_test(test_card_v1_is_the_old_bytes),
        cmocka_unit_test(test_card_refused_clearly),
        cmocka_unit_test(test_msg_layout),
        cmocka_unit_test(test_msg_refused),
        cmocka_unit_test(test_classify),
        cmocka_unit_test(test_resend_schedule),
        cmocka_unit_test(test_exchange_clean),
        cmocka_unit_test(test_exchange_one_side_asks),
        cmocka_unit_test(test_exchange_each_loss),
        cmocka_unit_test(test_exchange_duplicates),
        cmocka_unit_test(test_exchange_nothing_through),
        cmocka_unit_test(test_exchange_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
