// SPDX-License-Identifier: BSD-3-Clause
/* test_link.c - backends/bfo_link.h: the conn machine as the transports run it.
 *
 * test_transitions.c checks every (state, event) pair of the conn machine
 * alone.  This checks what the module adds around it, with a binding that
 * records the actions: every step passes through bfo_link_feed and the
 * trace hook; an illegal event is refused by name and changes nothing; a
 * dial's attempt number and a hello's are compared (a stale hello refused,
 * a newer one taken, classed by its sender's rank); a connect() not fed yet
 * is fed where the connection being made answers it; the events an action
 * returns are fed after it; the connect deadline, and where it is disarmed
 * (a dial that connected to a host that answers).
 *
 * Then two ends back to back (a "wire" that carries hellos, replies and
 * tie answers, delivered in the order a test chooses): either side may
 * dial; both dialing at once gives one connection whatever the order of
 * arrival; the loser's hello read late never replaces it.
 *
 * And an authenticating transport's claims and proofs: a claim changes
 * nothing (not the last attempt taken either, whatever it names), a bad
 * proof closes only its own connection, a proof takes, replaces, closes
 * this side's dial, answers a connect() not fed yet.
 */
#include "bfo_test.h"

#include "bfo_link.h"

typedef struct rec {
    char log[512];
    int dial_result;  /* what dial returns (0: the transport says later) */
    int reply_result; /* what send_reply returns */
    int traced;
    struct wire *w;   /* two ends back to back: the messages go there */
    int side;
} rec;

/* ------------------------------------------------------------ the wire */

enum { M_HELLO = 1, M_REPLY, M_TIE_LOST };

typedef struct msg {
    int kind, to;
    uint64_t attempt; /* the hello's; a reply's or tie answer's: the attempt it answers */
    uint64_t dialed;  /* a reply: the last attempt its sender dialed */
    int gone;
} msg;

typedef struct wire {
    bfo_link_binding b[2];
    rec r[2];
    bfo_tracer t[2];
    bfo_link l[2];
    msg m[16];
    int n;
    uint64_t now;
} wire;

static void post(wire *w, int kind, int to, uint64_t attempt, uint64_t dialed)
{
    assert_true(w->n < 16);
    w->m[w->n++] = (msg){ kind, to, attempt, dialed, 0 };
}

static int act(bfo_link_binding *b, bfo_link *l, int action, const bfo_step *st, void *arg)
{
    rec *r = (rec *)b->ctx;
    size_t n = strlen(r->log);
    (void)st;
    (void)arg;
    snprintf(r->log + n, sizeof r->log - n, "%s%s", n ? " " : "", bfo_conn_action_name(action));
    if (r->w) {
        int to = 1 - r->side;
        if (action == BFO_CONN_ACT_SEND_HELLO)
            post(r->w, M_HELLO, to, l->attempt, 0);
        else if (action == BFO_CONN_ACT_SEND_REPLY)
            post(r->w, M_REPLY, to, l->attempt, l->dialed);
        else if (action == BFO_CONN_ACT_REFUSE_TIE)
            post(r->w, M_TIE_LOST, to, l->offered, 0);
    }
    if (action == BFO_CONN_ACT_DIAL)
        return r->dial_result;
    if (action == BFO_CONN_ACT_SEND_REPLY)
        return r->reply_result;
    return 0;
}

static void on_trace(void *user, const bfo_machine *m, const bfo_step *st)
{
    rec *r = (rec *)user;
    assert_int_equal(m->id, BFO_MACHINE_CONN);
    (void)st;
    r->traced++;
}

static void setup(bfo_link_binding *b, rec *r, bfo_tracer *tr)
{
    memset(b, 0, sizeof *b);
    memset(r, 0, sizeof *r);
    tr->fn = on_trace;
    tr->user = r;
    b->ctx = r;
    b->act = act;
    b->timeout_ns = 1000;
    b->trace = tr;
}

static const char *took(rec *r)
{
    static char out[512];
    memcpy(out, r->log, sizeof out);
    r->log[0] = 0;
    return out;
}

/* Ranks 0 (side 0, the lower) and 1 (side 1): TCP-like ends, a dial
 * connects at once and a reply leaves the acceptor ready. */
static void wire_init(wire *w, int host_answers)
{
    memset(w, 0, sizeof *w);
    for (int i = 0; i < 2; i++) {
        setup(&w->b[i], &w->r[i], &w->t[i]);
        w->b[i].host_answers = host_answers;
        w->r[i].w = w;
        w->r[i].side = i;
        w->r[i].dial_result = BFO_CONN_EV_DIAL_CONNECTED;
        w->r[i].reply_result = BFO_CONN_EV_PEER_READY;
        bfo_link_init(&w->b[i], &w->l[i], i, 1 - i, 0);
    }
}

/* The engine of side i asks, and its transport feeds it. */
static void ask(wire *w, int i)
{
    bfo_link_ask(&w->b[i], &w->l[i]);
    bfo_link_asked(&w->b[i], &w->l[i], w->now);
}

/* Delivers message k as the transport would: a hello to the machine; a
 * reply or tie answer only on the connection it answers (this side's dial
 * of that attempt, still waiting), else it went with a closed connection. */
static void deliver(wire *w, int k)
{
    msg *m = &w->m[k];
    bfo_link_binding *b = &w->b[m->to];
    bfo_link *l = &w->l[m->to];
    assert_false(m->gone);
    m->gone = 1;
    if (m->kind == M_HELLO) {
        assert_int_equal(bfo_link_hello(b, l, m->attempt, m, w->now), BFO_OK);
        return;
    }
    if (l->fsm.cs != BFO_CONN_ST_HELLO_SENT || m->attempt != l->attempt)
        return; /* its connection is closed */
    if (m->kind == M_REPLY)
        assert_int_equal(bfo_link_reply(b, l, m->dialed, w->now), BFO_OK);
    else
        assert_int_equal(bfo_link_tie_lost(b, l, w->now), BFO_OK);
}

/* Index of the first undelivered message of this kind to side `to`. */
static int find(wire *w, int kind, int to)
{
    for (int k = 0; k < w->n; k++)
        if (!w->m[k].gone && w->m[k].kind == kind && w->m[k].to == to)
            return k;
    fail_msg("no message of kind %d to side %d", kind, to);
    return -1;
}

static void deliver_rest(wire *w)
{
    for (int k = 0; k < w->n; k++)
        if (!w->m[k].gone)
            deliver(w, k);
}

/* ------------------------------------------------------------- one end */

static void test_every_link_starts_down_a_link_to_itself_takes_nothing(void **state)
{
    bfo_link_binding b;
    rec r;
    bfo_tracer tr;
    bfo_link lo, hi, self;
    (void)state;
    setup(&b, &r, &tr);
    bfo_link_init(&b, &lo, 0, 1, 0); /* rank 0's link to rank 1 */
    bfo_link_init(&b, &hi, 1, 0, 0); /* rank 1's link to rank 0 */
    bfo_link_init(&b, &self, 1, 1, 0);
    assert_int_equal(lo.fsm.cs, BFO_CONN_ST_DOWN);
    assert_int_equal(hi.fsm.cs, BFO_CONN_ST_DOWN);
    assert_int_equal(self.fsm.cs, BFO_CONN_ST_NEW);
    assert_true(lo.lower);
    assert_false(hi.lower);
    assert_int_equal(r.traced, 2);
    assert_int_equal(bfo_link_feed(&b, &self, BFO_CONN_EV_CONNECT_ASKED, NULL, 0), BFO_ERR_ILLEGAL_EVENT);
    assert_int_equal(self.fsm.cs, BFO_CONN_ST_NEW);
}

static void test_an_illegal_event_is_refused_by_name_and_changes_nothing(void **state)
{
    bfo_link_binding b;
    rec r;
    bfo_tracer tr;
    bfo_link l;
    (void)state;
    setup(&b, &r, &tr);
    bfo_link_init(&b, &l, 0, 1, 0);
    r.traced = 0;
    assert_int_equal(bfo_link_feed(&b, &l, BFO_CONN_EV_REPLY_RCVD, NULL, 5), BFO_ERR_ILLEGAL_EVENT);
    assert_int_equal(l.fsm.cs, BFO_CONN_ST_DOWN);
    assert_string_equal(took(&r), "");
    assert_int_equal(r.traced, 1); /* the hook sees the refused step */
    assert_int_equal(b.refused, 1);
    assert_int_equal(bfo_link_feed(&b, &l, 0, NULL, 5), BFO_ERR_BAD_EVENT);
    assert_int_equal(bfo_link_feed(&b, &l, BFO_CONN_EV_COUNT, NULL, 5), BFO_ERR_BAD_EVENT);
    assert_int_equal(l.fsm.cs, BFO_CONN_ST_DOWN);
    /* BROKEN and TIMED_OUT only where the machine takes them */
    assert_int_equal(bfo_link_broken(&b, &l, "why", 5), 0);
    assert_int_equal(bfo_link_timeout(&b, &l, 5000), 0);
    assert_string_equal(took(&r), "");
}

static void test_dialer_dial_hello_reply_up_and_the_deadline(void **state)
{
    bfo_link_binding b;
    rec r;
    bfo_tracer tr;
    bfo_link l;
    (void)state;
    setup(&b, &r, &tr);
    bfo_link_init(&b, &l, 1, 0, 0); /* the higher rank dials too */
    assert_int_equal(bfo_link_ask(&b, &l), 1);
    assert_int_equal(bfo_link_ask(&b, &l), 0);
    assert_int_equal(b.asked, 1);
    assert_int_equal(bfo_link_asked(&b, &l, 100), BFO_OK);
    assert_int_equal(b.asked, 0);
    assert_string_equal(took(&r), "dial");
    assert_int_equal(l.attempt, 1);
    assert_int_equal(l.dialed, 1);
    assert_true(bfo_link_is_dialer(&l));
    assert_int_equal(l.deadline, 1100);
    assert_int_equal(bfo_link_timeout(&b, &l, 1099), 0);
    assert_int_equal(bfo_link_feed(&b, &l, BFO_CONN_EV_DIAL_CONNECTED, NULL, 200), BFO_OK);
    assert_string_equal(took(&r), "send_hello");
    assert_int_equal(l.deadline, 1100); /* host_answers 0: the timeout runs on */
    /* a connect() that comes meanwhile is answered by this connection */
    bfo_link_ask(&b, &l);
    assert_int_equal(bfo_link_reply(&b, &l, 0, 300), BFO_OK);
    assert_string_equal(took(&r), "report_up");
    assert_int_equal(l.connect_req, 0);
    assert_int_equal(b.asked, 0);
    assert_true(bfo_link_up(&l));
    assert_true(bfo_link_is_dialer(&l));
    /* the engine gives it up: closed in silence, dialed again (attempt 2) */
    bfo_link_ask(&b, &l);
    bfo_link_asked(&b, &l, 400);
    assert_string_equal(took(&r), "close dial");
    assert_int_equal(l.attempt, 2);
    /* no connection within the timeout */
    assert_int_equal(bfo_link_timeout(&b, &l, 1400), 1);
    assert_string_equal(took(&r), "report_failed close");
    assert_int_equal(l.fsm.cs, BFO_CONN_ST_DOWN);
}

static void test_a_dial_that_fails_at_once_is_fed_after_the_step(void **state)
{
    bfo_link_binding b;
    rec r;
    bfo_tracer tr;
    bfo_link l;
    (void)state;
    setup(&b, &r, &tr);
    bfo_link_init(&b, &l, 0, 1, 0);
    r.dial_result = BFO_CONN_EV_DIAL_FAILED;
    bfo_link_ask(&b, &l);
    assert_int_equal(bfo_link_asked(&b, &l, 0), BFO_OK);
    assert_string_equal(took(&r), "dial report_failed close");
    assert_int_equal(l.fsm.cs, BFO_CONN_ST_DOWN);
    r.dial_result = BFO_CONN_EV_DIAL_CONNECTED; /* shm: the dial is made at once */
    bfo_link_ask(&b, &l);
    bfo_link_asked(&b, &l, 0);
    assert_string_equal(took(&r), "dial send_hello");
    assert_int_equal(l.fsm.cs, BFO_CONN_ST_HELLO_SENT);
}

static void test_stale_hellos_are_refused_newer_ones_replace_the_connection(void **state)
{
    bfo_link_binding b;
    rec r;
    bfo_tracer tr;
    bfo_link l;
    (void)state;
    setup(&b, &r, &tr);
    bfo_link_init(&b, &l, 1, 0, 0);
    r.reply_result = BFO_CONN_EV_PEER_READY; /* TCP, shm */
    assert_int_equal(bfo_link_hello(&b, &l, 3, NULL, 0), BFO_OK);
    assert_string_equal(took(&r), "take send_reply report_up");
    assert_int_equal(l.attempt, 3);
    assert_int_equal(l.taken, 3);
    assert_false(bfo_link_is_dialer(&l));
    assert_int_equal(l.fsm.cs, BFO_CONN_ST_UP);
    assert_int_equal(bfo_link_hello(&b, &l, 3, NULL, 0), BFO_OK);
    assert_string_equal(took(&r), "refuse");
    assert_int_equal(bfo_link_hello(&b, &l, 2, NULL, 0), BFO_OK);
    assert_string_equal(took(&r), "refuse");
    assert_int_equal(l.fsm.cs, BFO_CONN_ST_UP);
    assert_int_equal(bfo_link_hello(&b, &l, 4, NULL, 0), BFO_OK); /* the peer gave ours up */
    assert_string_equal(took(&r), "report_error close take send_reply report_up");
    assert_int_equal(l.attempt, 4);
    /* a connect() not fed yet is fed first: the old connection closes in
     * silence (the engine gave it up); the peer's dial wins the tie with
     * this side's new one, whose hello never went */
    bfo_link_ask(&b, &l);
    assert_int_equal(bfo_link_hello(&b, &l, 5, NULL, 0), BFO_OK);
    assert_string_equal(took(&r), "close dial close take send_reply report_up");
    assert_int_equal(b.asked, 0);
    assert_int_equal(l.attempt, 5);
    assert_int_equal(l.dialed, 1); /* numbered all the same */
    /* a stale hello is refused while this side dials too */
    bfo_link_ask(&b, &l);
    bfo_link_asked(&b, &l, 0);
    assert_string_equal(took(&r), "close dial");
    assert_int_equal(bfo_link_hello(&b, &l, 5, NULL, 0), BFO_OK);
    assert_string_equal(took(&r), "refuse");
    assert_int_equal(l.fsm.cs, BFO_CONN_ST_DIALING);
}

static void test_a_hello_in_down_answers_a_connect_not_fed_yet_without_a_dial(void **state)
{
    bfo_link_binding b;
    rec r;
    bfo_tracer tr;
    bfo_link l;
    (void)state;
    setup(&b, &r, &tr);
    bfo_link_init(&b, &l, 0, 1, 0);
    r.reply_result = BFO_CONN_EV_PEER_READY;
    bfo_link_ask(&b, &l);
    assert_int_equal(bfo_link_hello(&b, &l, 1, NULL, 0), BFO_OK);
    assert_string_equal(took(&r), "take send_reply report_up"); /* no dial, no close */
    assert_int_equal(b.asked, 0);
    assert_int_equal(l.connect_req, 0);
    assert_int_equal(l.dialed, 0);
    assert_true(bfo_link_up(&l));
}

static void test_acceptor_with_a_third_leg_verbs(void **state)
{
    bfo_link_binding b;
    rec r;
    bfo_tracer tr;
    bfo_link l;
    (void)state;
    setup(&b, &r, &tr);
    bfo_link_init(&b, &l, 1, 0, 0);
    bfo_link_hello(&b, &l, 1, NULL, 10);
    assert_string_equal(took(&r), "take send_reply");
    assert_int_equal(l.fsm.cs, BFO_CONN_ST_REPLY_SENT);
    assert_int_equal(l.deadline, 1010);
    bfo_link_ask(&b, &l);
    bfo_link_asked(&b, &l, 20); /* the connection being wired answers it */
    assert_string_equal(took(&r), "");
    assert_int_equal(l.fsm.cs, BFO_CONN_ST_REPLY_SENT_ASKED);
    assert_int_equal(bfo_link_broken(&b, &l, "RTU: from the wrong rank", 30), 1);
    assert_string_equal(took(&r), "report_failed close"); /* the engine backs off, asks again */
    assert_int_equal(l.fsm.cs, BFO_CONN_ST_DOWN);
}

/* A dialer connected to a host that answers (TCP: its kernel accepted;
 * shm: its process holds the socket) waits for the reply longer than the
 * connect timeout: the peer computes.  Only the connection failing ends
 * the wait.  Without host_answers (verbs) the timeout runs on. */
static void test_a_dialer_waiting_for_a_computing_peer_is_not_failed(void **state)
{
    bfo_link_binding b;
    rec r;
    bfo_tracer tr;
    bfo_link l;
    (void)state;
    setup(&b, &r, &tr);
    b.host_answers = 1;
    bfo_link_init(&b, &l, 0, 1, 0);
    r.dial_result = BFO_CONN_EV_DIAL_CONNECTED;
    bfo_link_ask(&b, &l);
    bfo_link_asked(&b, &l, 0);
    assert_string_equal(took(&r), "dial send_hello");
    assert_true(bfo_link_waits_on_host(&b, &l));
    assert_int_equal(bfo_link_timeout(&b, &l, 1000), 0);
    assert_int_equal(bfo_link_timeout(&b, &l, 1000000000ull), 0); /* a million timeouts later */
    assert_string_equal(took(&r), "");
    assert_int_equal(bfo_link_reply(&b, &l, 0, 1000000001ull), BFO_OK);
    assert_string_equal(took(&r), "report_up");
    /* the same wait, the connection broken: the engine hears it failed */
    bfo_link_ask(&b, &l);
    bfo_link_asked(&b, &l, 2000000000ull);
    assert_string_equal(took(&r), "close dial send_hello");
    assert_int_equal(bfo_link_broken(&b, &l, "closed by the peer", 3000000000ull), 1);
    assert_string_equal(took(&r), "report_failed close");
    assert_false(bfo_link_waits_on_host(&b, &l));
    /* verbs: no proof from the transport, the timeout runs on */
    b.host_answers = 0;
    bfo_link_ask(&b, &l);
    bfo_link_asked(&b, &l, 0);
    assert_string_equal(took(&r), "dial send_hello");
    assert_false(bfo_link_waits_on_host(&b, &l));
    assert_int_equal(bfo_link_timeout(&b, &l, 1000), 1);
    assert_string_equal(took(&r), "report_failed close");
}

/* A dead host: the dial never connects (no answer) or is refused; it fails
 * within the connect timeout even where a connected dial would wait. */
static void test_a_dead_host_still_fails_within_the_connect_timeout(void **state)
{
    bfo_link_binding b;
    rec r;
    bfo_tracer tr;
    bfo_link l;
    (void)state;
    setup(&b, &r, &tr);
    b.host_answers = 1;
    bfo_link_init(&b, &l, 1, 0, 0);
    bfo_link_ask(&b, &l);
    bfo_link_asked(&b, &l, 500); /* no answer: the dial stays DIALING */
    assert_string_equal(took(&r), "dial");
    assert_false(bfo_link_waits_on_host(&b, &l));
    assert_int_equal(bfo_link_timeout(&b, &l, 1499), 0);
    assert_int_equal(bfo_link_timeout(&b, &l, 1500), 1);
    assert_string_equal(took(&r), "report_failed close");
    bfo_link_ask(&b, &l);
    bfo_link_asked(&b, &l, 2000);
    assert_int_equal(bfo_link_feed(&b, &l, BFO_CONN_EV_DIAL_FAILED, (void *)"connect: refused", 2001), BFO_OK);
    assert_string_equal(took(&r), "dial report_failed close");
}

/* bfo_link_gap: the time since the last progress, less a quarter of the
 * connect timeout (1000 here), when it was longer than that quarter; 0
 * at the first call, for a short gap, and for a clock behind the last. */
static void test_the_gap_skips_the_time_since_the_last_progress_less_a_quarter_timeout(void **state)
{
    bfo_link_binding b;
    rec r;
    bfo_tracer tr;
    (void)state;
    setup(&b, &r, &tr);
    assert_int_equal(bfo_link_gap(&b, 100), 0);  /* the first progress: nothing to compare */
    assert_int_equal(bfo_link_gap(&b, 350), 0);  /* 250: a quarter, counted */
    assert_int_equal(bfo_link_gap(&b, 601), 1);  /* 251: 1 skipped */
    assert_int_equal(bfo_link_gap(&b, 3601), 2750);
    assert_int_equal(bfo_link_gap(&b, 3000), 0); /* a clock behind: no gap, last kept */
    assert_int_equal(b.last_now, 3601);
    assert_int_equal(bfo_link_gap(&b, 3700), 0);
}

/* bfo_link_skip: an armed deadline moves on by the skip, never past now +
 * the timeout; UINT64_MAX (unarmed) stays; one passed before the gap began
 * still passes (TIMED_OUT now); one beyond now + timeout is not pulled in. */
static void test_a_deadline_moves_on_by_the_skip_never_past_now_plus_the_timeout(void **state)
{
    bfo_link_binding b;
    rec r;
    bfo_tracer tr;
    bfo_link l;
    uint64_t skip;
    (void)state;
    setup(&b, &r, &tr);
    bfo_link_init(&b, &l, 1, 0, 0);
    bfo_link_gap(&b, 500);
    bfo_link_ask(&b, &l);
    bfo_link_asked(&b, &l, 500); /* DIALING, due at 1500 */
    took(&r);
    skip = bfo_link_gap(&b, 3500); /* not run for 3 timeouts */
    assert_int_equal(skip, 2750);
    bfo_link_skip(&b, &l, skip, 3500);
    assert_int_equal(l.deadline, 4250);
    assert_int_equal(bfo_link_timeout(&b, &l, 3500), 0); /* what came meanwhile is read first */
    assert_int_equal(bfo_link_feed(&b, &l, BFO_CONN_EV_DIAL_CONNECTED, NULL, 3500), BFO_OK);
    assert_string_equal(took(&r), "send_hello");
    l.deadline = UINT64_MAX; /* unarmed */
    bfo_link_skip(&b, &l, skip, 3500);
    assert_true(l.deadline == UINT64_MAX);
    l.deadline = 700; /* passed before the gap began (at 750) */
    bfo_link_skip(&b, &l, skip, 3500);
    assert_true(l.deadline <= 3500);
    l.deadline = 2000; /* 2000 + 2750 is past 3500 + 1000: held there */
    bfo_link_skip(&b, &l, skip, 3500);
    assert_int_equal(l.deadline, 4500);
    l.deadline = 9000; /* beyond now + timeout already: not pulled in */
    bfo_link_skip(&b, &l, skip, 3500);
    assert_int_equal(l.deadline, 9000);
    l.deadline = 2000;
    bfo_link_skip(&b, &l, 0, 3500); /* no gap */
    assert_int_equal(l.deadline, 2000);
    assert_true(bfo_link_skip_deadline(UINT64_MAX - 10, 100, UINT64_MAX - 1) == UINT64_MAX - 1); /* no overflow */
}

/* A dead host's dial still fails for a caller that only ever runs the
 * transport every two connect timeouts: each progress counts a quarter
 * timeout of its gap, so the deadline comes nearer each time (no hang). */
static void test_a_dead_dial_still_fails_when_progress_runs_rarely(void **state)
{
    bfo_link_binding b;
    rec r;
    bfo_tracer tr;
    bfo_link l;
    uint64_t now = 500;
    int calls = 0;
    (void)state;
    setup(&b, &r, &tr);
    b.host_answers = 1;
    bfo_link_init(&b, &l, 1, 0, 0);
    bfo_link_gap(&b, now);
    bfo_link_ask(&b, &l);
    bfo_link_asked(&b, &l, now); /* no answer: DIALING, due at 1500 */
    took(&r);
    do {
        now += 2000;
        calls++;
        bfo_link_skip(&b, &l, bfo_link_gap(&b, now), now);
    } while (!bfo_link_timeout(&b, &l, now) && calls < 10);
    assert_int_equal(calls, 4); /* 1000 left, then 750, 500, 250, 0 */
    assert_string_equal(took(&r), "report_failed close");
}

/* A tie answer from the higher rank: it may not say so (malformed). */
static void test_a_tie_lost_answer_from_the_higher_rank_is_refused(void **state)
{
    bfo_link_binding b;
    rec r;
    bfo_tracer tr;
    bfo_link l;
    (void)state;
    setup(&b, &r, &tr);
    bfo_link_init(&b, &l, 0, 1, 0);
    r.dial_result = BFO_CONN_EV_DIAL_CONNECTED;
    bfo_link_ask(&b, &l);
    bfo_link_asked(&b, &l, 0);
    assert_string_equal(took(&r), "dial send_hello");
    assert_int_equal(bfo_link_tie_lost(&b, &l, 0), BFO_ERR_ILLEGAL_EVENT);
    assert_int_equal(l.fsm.cs, BFO_CONN_ST_HELLO_SENT);
    assert_string_equal(took(&r), "");
}

/* ---------------------------------------------------- two ends, one wire */

static void both_up_on(wire *w, uint64_t attempt, int dialer_side)
{
    assert_true(bfo_link_up(&w->l[0]));
    assert_true(bfo_link_up(&w->l[1]));
    assert_int_equal(w->l[0].attempt, attempt);
    assert_int_equal(w->l[1].attempt, attempt);
    assert_true(bfo_link_is_dialer(&w->l[dialer_side]));
    assert_false(bfo_link_is_dialer(&w->l[1 - dialer_side]));
}

static void test_only_the_higher_rank_asks_connected(void **state)
{
    wire w;
    (void)state;
    wire_init(&w, 1);
    ask(&w, 1); /* rank 1 sends to rank 0, which never sent to it */
    deliver_rest(&w);
    both_up_on(&w, 1, 1);
    assert_string_equal(took(&w.r[1]), "dial send_hello report_up");
    assert_string_equal(took(&w.r[0]), "take send_reply report_up"); /* its engine hears CONNECTED */
}

static void test_only_the_lower_rank_asks_connected(void **state)
{
    wire w;
    (void)state;
    wire_init(&w, 1);
    ask(&w, 0);
    deliver_rest(&w);
    both_up_on(&w, 1, 0);
    assert_string_equal(took(&w.r[0]), "dial send_hello report_up");
    assert_string_equal(took(&w.r[1]), "take send_reply report_up");
}

/* Both dial; the lower rank's hello reaches the higher rank first: it
 * closes its own dial and takes it.  Its own hello, read late by the lower
 * rank, is refused by the tie, the tie answer goes with a closed
 * connection.  One connection, no failure reported. */
static void test_simultaneous_dial_winners_hello_first(void **state)
{
    wire w;
    (void)state;
    wire_init(&w, 1);
    ask(&w, 0);
    ask(&w, 1);
    deliver(&w, find(&w, M_HELLO, 1));
    assert_string_equal(took(&w.r[1]), "dial send_hello close take send_reply report_up");
    deliver(&w, find(&w, M_HELLO, 0)); /* the lower rank still waits for its reply */
    assert_string_equal(took(&w.r[0]), "dial send_hello refuse_tie");
    deliver_rest(&w);
    assert_string_equal(took(&w.r[0]), "report_up");
    assert_string_equal(took(&w.r[1]), "");
    both_up_on(&w, 1, 0);
}

/* Both dial; the tie answer reaches the higher rank first: it closes its
 * dial, waits, then takes the winner's hello.  One connection, no failure. */
static void test_simultaneous_dial_tie_answer_first(void **state)
{
    wire w;
    (void)state;
    wire_init(&w, 1);
    ask(&w, 1); /* in the other order of asking, too */
    ask(&w, 0);
    deliver(&w, find(&w, M_HELLO, 0));
    assert_string_equal(took(&w.r[0]), "dial send_hello refuse_tie");
    deliver(&w, find(&w, M_TIE_LOST, 1));
    assert_string_equal(took(&w.r[1]), "dial send_hello close wait");
    assert_int_equal(w.l[1].fsm.cs, BFO_CONN_ST_AWAITING_HELLO);
    assert_int_equal(bfo_link_timeout(&w.b[1], &w.l[1], w.now + 999), 0);
    deliver(&w, find(&w, M_HELLO, 1));
    assert_string_equal(took(&w.r[1]), "take send_reply report_up");
    deliver_rest(&w);
    assert_string_equal(took(&w.r[0]), "report_up");
    both_up_on(&w, 1, 0);
}

/* The higher rank's hello is read by the lower rank only after the
 * connection is up: the reply named it as given up, so it is stale. */
static void test_simultaneous_dial_losers_hello_read_late_is_stale(void **state)
{
    wire w;
    (void)state;
    wire_init(&w, 1);
    ask(&w, 0);
    ask(&w, 1);
    deliver(&w, find(&w, M_HELLO, 1));
    deliver(&w, find(&w, M_REPLY, 0));
    both_up_on(&w, 1, 0);
    took(&w.r[0]);
    deliver(&w, find(&w, M_HELLO, 0));
    assert_string_equal(took(&w.r[0]), "refuse");
    both_up_on(&w, 1, 0);
    /* the higher rank's next dial (its connection broke) is newer */
    took(&w.r[1]);
    bfo_link_broken(&w.b[1], &w.l[1], "closed", 0);
    ask(&w, 1);
    deliver(&w, find(&w, M_HELLO, 0));
    assert_string_equal(took(&w.r[0]), "report_error close take send_reply report_up");
    deliver_rest(&w);
    both_up_on(&w, 2, 1);
}

/* The winner's hello never comes: the loser's wait ends at the timeout. */
static void test_a_lost_tie_whose_winner_never_dials_fails_at_the_timeout(void **state)
{
    wire w;
    (void)state;
    wire_init(&w, 1);
    ask(&w, 0);
    ask(&w, 1);
    deliver(&w, find(&w, M_HELLO, 0));
    deliver(&w, find(&w, M_TIE_LOST, 1));
    took(&w.r[1]);
    assert_int_equal(bfo_link_timeout(&w.b[1], &w.l[1], w.now + 1000), 1);
    assert_string_equal(took(&w.r[1]), "report_failed");
    assert_int_equal(w.l[1].fsm.cs, BFO_CONN_ST_DOWN);
}


/* ------------------------------------------- claims and proofs (auth) */

/* An authenticating transport: a claim changes nothing, whatever attempt
 * it names, not even the last attempt taken; only a proof takes. */
static void test_a_claim_changes_nothing_only_a_proof_takes(void **state)
{
    bfo_link_binding b;
    rec r;
    bfo_tracer tr;
    bfo_link l;
    (void)state;
    setup(&b, &r, &tr);
    bfo_link_init(&b, &l, 1, 0, 0);
    assert_int_equal(bfo_link_claim(&b, &l, 1, NULL, 0), BFO_OK);
    assert_string_equal(took(&r), "send_reply");
    assert_int_equal(l.fsm.cs, BFO_CONN_ST_REPLY_SENT); /* the wait for its proof */
    assert_int_equal(l.taken, 0);
    assert_int_equal(l.deadline, b.timeout_ns);
    assert_int_equal(bfo_link_proof(&b, &l, 1, 1, NULL, 0), BFO_OK);
    assert_string_equal(took(&r), "close take report_up");
    assert_true(bfo_link_up(&l));
    assert_int_equal(l.taken, 1);
    /* a forged claim with the highest attempt: answered, nothing else */
    assert_int_equal(bfo_link_claim(&b, &l, UINT64_MAX, NULL, 0), BFO_OK);
    assert_string_equal(took(&r), "send_reply");
    assert_int_equal(l.taken, 1);
    assert_int_equal(l.attempt, 1);
    assert_true(bfo_link_up(&l));
    /* ... and its proof is bad: only its own connection goes */
    assert_int_equal(bfo_link_proof(&b, &l, 0, UINT64_MAX, NULL, 0), BFO_OK);
    assert_string_equal(took(&r), "refuse");
    assert_true(bfo_link_up(&l));
    assert_int_equal(l.taken, 1);
    /* a stale claim is refused at once; so is a proof for an attempt not
     * above the last taken (two proven dials: the newer one holds) */
    assert_int_equal(bfo_link_claim(&b, &l, 1, NULL, 0), BFO_OK);
    assert_string_equal(took(&r), "refuse");
    assert_int_equal(bfo_link_claim(&b, &l, 2, NULL, 0), BFO_OK);
    assert_int_equal(bfo_link_claim(&b, &l, 3, NULL, 0), BFO_OK);
    assert_string_equal(took(&r), "send_reply send_reply");
    assert_int_equal(bfo_link_proof(&b, &l, 1, 3, NULL, 0), BFO_OK);
    assert_string_equal(took(&r), "report_error close take report_up"); /* the peer gave it up, proven */
    assert_int_equal(bfo_link_proof(&b, &l, 1, 2, NULL, 0), BFO_OK);
    assert_string_equal(took(&r), "refuse");
    assert_int_equal(l.attempt, 3);
    assert_int_equal(l.taken, 3);
}

/* A connect() while a claim waits for its proof: no dial across it, the
 * proof answers it; a bad proof leaves it to the deadline (CONNECT_FAILED,
 * the engine dials after its back-off); in DIALING the proof closes this
 * side's dial. */
static void test_a_proof_answers_a_connect_and_closes_this_sides_dial(void **state)
{
    bfo_link_binding b;
    rec r;
    bfo_tracer tr;
    bfo_link l;
    (void)state;
    setup(&b, &r, &tr);
    bfo_link_init(&b, &l, 1, 0, 0); /* this side: the higher rank */
    assert_int_equal(bfo_link_claim(&b, &l, 1, NULL, 0), BFO_OK);
    assert_string_equal(took(&r), "send_reply");
    bfo_link_ask(&b, &l);
    bfo_link_asked(&b, &l, 0);
    assert_string_equal(took(&r), ""); /* waits for the proof: no dial */
    assert_int_equal(l.fsm.cs, BFO_CONN_ST_REPLY_SENT_ASKED);
    assert_int_equal(bfo_link_proof(&b, &l, 0, 1, NULL, 0), BFO_OK);
    assert_string_equal(took(&r), "refuse");
    assert_int_equal(bfo_link_timeout(&b, &l, b.timeout_ns), 1);
    assert_string_equal(took(&r), "report_failed close");
    assert_int_equal(l.fsm.cs, BFO_CONN_ST_DOWN);
    assert_int_equal(l.taken, 0);
    /* asked before the claim: a proof in DOWN answers it */
    bfo_link_ask(&b, &l);
    assert_int_equal(bfo_link_proof(&b, &l, 1, 1, NULL, 0), BFO_OK);
    assert_string_equal(took(&r), "take report_up");
    assert_int_equal(b.asked, 0);
    assert_int_equal(l.connect_req, 0);
    assert_int_equal(l.dialed, 0);
    /* the engine gives it up and dials; the lower rank dials too: its
     * claim is challenged, this side's dial stays until the proof */
    bfo_link_ask(&b, &l);
    bfo_link_asked(&b, &l, 0);
    assert_string_equal(took(&r), "close dial");
    assert_int_equal(bfo_link_claim(&b, &l, 2, NULL, 0), BFO_OK);
    assert_string_equal(took(&r), "send_reply");
    assert_int_equal(l.fsm.cs, BFO_CONN_ST_DIALING);
    assert_int_equal(bfo_link_proof(&b, &l, 0, 2, NULL, 0), BFO_OK); /* a bad proof: the dial stays */
    assert_string_equal(took(&r), "refuse");
    assert_int_equal(l.fsm.cs, BFO_CONN_ST_DIALING);
    assert_int_equal(bfo_link_claim(&b, &l, 3, NULL, 0), BFO_OK);
    assert_int_equal(bfo_link_proof(&b, &l, 1, 3, NULL, 0), BFO_OK);
    assert_string_equal(took(&r), "send_reply close take report_up");
    assert_true(bfo_link_up(&l));
    assert_false(bfo_link_is_dialer(&l));
    /* the lower rank, dialing, tells a claim of the higher's "dialing you" */
    setup(&b, &r, &tr);
    bfo_link_init(&b, &l, 0, 1, 0);
    bfo_link_ask(&b, &l);
    bfo_link_asked(&b, &l, 0);
    assert_string_equal(took(&r), "dial");
    assert_int_equal(bfo_link_claim(&b, &l, 1, NULL, 0), BFO_OK);
    assert_string_equal(took(&r), "refuse_tie");
    assert_int_equal(l.taken, 0);
    /* ... and up on its dial (read the reply before the higher's claim):
     * the same, its connection holds */
    assert_int_equal(bfo_link_feed(&b, &l, BFO_CONN_EV_DIAL_CONNECTED, NULL, 0), BFO_OK);
    assert_int_equal(bfo_link_reply(&b, &l, 0, 0), BFO_OK);
    assert_string_equal(took(&r), "send_hello report_up");
    assert_int_equal(bfo_link_claim(&b, &l, 2, NULL, 0), BFO_OK);
    assert_string_equal(took(&r), "refuse_tie");
    assert_true(bfo_link_up(&l));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_link_starts_down_a_link_to_itself_takes_nothing),
        cmocka_unit_test(test_an_illegal_event_is_refused_by_name_and_changes_nothing),
        cmocka_unit_test(test_dialer_dial_hello_reply_up_and_the_deadline),
        cmocka_unit_test(test_a_dial_that_fails_at_once_is_fed_after_the_step),
        cmocka_unit_test(test_stale_hellos_are_refused_newer_ones_replace_the_connection),
        cmocka_unit_test(test_a_hello_in_down_answers_a_connect_not_fed_yet_without_a_dial),
        cmocka_unit_test(test_acceptor_with_a_third_leg_verbs),
        cmocka_unit_test(test_a_dialer_waiting_for_a_computing_peer_is_not_failed),
        cmocka_unit_test(test_a_dead_host_still_fails_within_the_connect_timeout),
        cmocka_unit_test(test_the_gap_skips_the_time_since_the_last_progress_less_a_quarter_timeout),
        cmocka_unit_test(test_a_deadline_moves_on_by_the_skip_never_past_now_plus_the_timeout),
        cmocka_unit_test(test_a_dead_dial_still_fails_when_progress_runs_rarely),
        cmocka_unit_test(test_a_tie_lost_answer_from_the_higher_rank_is_refused),
        cmocka_unit_test(test_only_the_higher_rank_asks_connected),
        cmocka_unit_test(test_only_the_lower_rank_asks_connected),
        cmocka_unit_test(test_simultaneous_dial_winners_hello_first),
        cmocka_unit_test(test_simultaneous_dial_tie_answer_first),
        cmocka_unit_test(test_simultaneous_dial_losers_hello_read_late_is_stale),
        cmocka_unit_test(test_a_lost_tie_whose_winner_never_dials_fails_at_the_timeout),
        cmocka_unit_test(test_a_claim_changes_nothing_only_a_proof_takes),
        cmocka_unit_test(test_a_proof_answers_a_connect_and_closes_this_sides_dial),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
