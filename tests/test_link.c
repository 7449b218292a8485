// SPDX-License-Identifier: BSD-3-Clause
/* test_link.c - backends/bfo_link.h: the conn machine as the transports run it.
 *
 * test_transitions.c checks every (state, event) pair of the conn machine
 * alone.  This checks what the module adds around it, with a binding that
 * records the actions: the lower rank dials; every step passes through
 * bfo_link_feed and the trace hook; an illegal event is refused by name and
 * changes nothing; a dial's attempt number and a hello's are compared
 * (a stale hello refused, a newer one taken); a connect() not fed yet is fed
 * first when the hello or the reply that answers it arrives; the events an
 * action returns are fed after it; the connect deadline.  Both ends of a
 * pair, connected back to back, make one connection when they ask at once,
 * in either order.
 */
#include "bfo_test.h"

#include "bfo_link.h"

typedef struct rec {
    char log[512];
    int dial_result;  /* what dial returns (0: the transport says later) */
    int reply_result; /* what send_reply returns */
    int traced;
} rec;

static int act(bfo_link_binding *b, bfo_link *l, int action, const bfo_step *st, void *arg)
{
    rec *r = (rec *)b->ctx;
    size_t n = strlen(r->log);
    (void)l;
    (void)st;
    (void)arg;
    snprintf(r->log + n, sizeof r->log - n, "%s%s", n ? " " : "", bfo_conn_action_name(action));
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

static void test_the_lower_rank_dials(void **state)
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
    assert_int_equal(lo.fsm.cs, BFO_CONN_ST_DIALER_DOWN);
    assert_int_equal(hi.fsm.cs, BFO_CONN_ST_ACCEPTOR_DOWN);
    assert_int_equal(self.fsm.cs, BFO_CONN_ST_NEW);
    assert_true(bfo_link_is_dialer(&lo));
    assert_false(bfo_link_is_dialer(&hi));
    assert_int_equal(r.traced, 2);
    /* a link to itself takes nothing */
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
    assert_int_equal(l.fsm.cs, BFO_CONN_ST_DIALER_DOWN);
    assert_string_equal(took(&r), "");
    assert_int_equal(r.traced, 1); /* the hook sees the refused step */
    assert_int_equal(b.refused, 1);
    assert_int_equal(bfo_link_feed(&b, &l, 0, NULL, 5), BFO_ERR_BAD_EVENT);
    assert_int_equal(bfo_link_feed(&b, &l, BFO_CONN_EV_COUNT, NULL, 5), BFO_ERR_BAD_EVENT);
    assert_int_equal(l.fsm.cs, BFO_CONN_ST_DIALER_DOWN);
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
    bfo_link_init(&b, &l, 0, 1, 0);
    assert_int_equal(bfo_link_ask(&b, &l), 1);
    assert_int_equal(bfo_link_ask(&b, &l), 0);
    assert_int_equal(b.asked, 1);
    assert_int_equal(bfo_link_asked(&b, &l, 100), BFO_OK);
    assert_int_equal(b.asked, 0);
    assert_string_equal(took(&r), "dial");
    assert_int_equal(l.attempt, 1);
    assert_int_equal(l.deadline, 1100);
    assert_int_equal(bfo_link_timeout(&b, &l, 1099), 0);
    assert_int_equal(bfo_link_feed(&b, &l, BFO_CONN_EV_DIAL_CONNECTED, NULL, 200), BFO_OK);
    assert_string_equal(took(&r), "send_hello");
    /* a connect() that comes meanwhile is answered by this connection */
    bfo_link_ask(&b, &l);
    assert_int_equal(bfo_link_feed(&b, &l, BFO_CONN_EV_REPLY_RCVD, NULL, 300), BFO_OK);
    assert_string_equal(took(&r), "report_up");
    assert_int_equal(l.connect_req, 0);
    assert_int_equal(b.asked, 0);
    assert_true(bfo_link_up(&l));
    /* the engine gives it up: closed in silence, dialed again (attempt 2) */
    bfo_link_ask(&b, &l);
    bfo_link_asked(&b, &l, 400);
    assert_string_equal(took(&r), "close dial");
    assert_int_equal(l.attempt, 2);
    /* no connection within the timeout */
    assert_int_equal(bfo_link_timeout(&b, &l, 1400), 1);
    assert_string_equal(took(&r), "report_failed close");
    assert_int_equal(l.fsm.cs, BFO_CONN_ST_DIALER_DOWN);
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
    assert_int_equal(l.fsm.cs, BFO_CONN_ST_DIALER_DOWN);
    r.dial_result = BFO_CONN_EV_DIAL_CONNECTED; /* shm: the dial is made at once */
    bfo_link_ask(&b, &l);
    bfo_link_asked(&b, &l, 0);
    assert_string_equal(took(&r), "dial send_hello");
    assert_int_equal(l.fsm.cs, BFO_CONN_ST_HELLO_SENT);
}

static void test_acceptor_takes_newer_hellos_and_refuses_stale_ones(void **state)
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
    assert_int_equal(l.fsm.cs, BFO_CONN_ST_ACCEPTOR_UP);
    assert_int_equal(bfo_link_hello(&b, &l, 3, NULL, 0), BFO_OK);
    assert_string_equal(took(&r), "refuse");
    assert_int_equal(bfo_link_hello(&b, &l, 2, NULL, 0), BFO_OK);
    assert_string_equal(took(&r), "refuse");
    assert_int_equal(l.fsm.cs, BFO_CONN_ST_ACCEPTOR_UP);
    assert_int_equal(bfo_link_hello(&b, &l, 4, NULL, 0), BFO_OK); /* the peer gave ours up */
    assert_string_equal(took(&r), "report_error close take send_reply report_up");
    assert_int_equal(l.attempt, 4);
    /* a connect() not fed yet is fed first: the old connection closes in
     * silence (the engine gave it up), the hello answers the request */
    bfo_link_ask(&b, &l);
    assert_int_equal(bfo_link_hello(&b, &l, 5, NULL, 0), BFO_OK);
    assert_string_equal(took(&r), "close wait take send_reply report_up");
    assert_int_equal(b.asked, 0);
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
    assert_string_equal(took(&r), "close");
    assert_int_equal(l.fsm.cs, BFO_CONN_ST_AWAITING_HELLO); /* the engine keeps waiting */
    assert_int_equal(bfo_link_timeout(&b, &l, 1010), 1);
    assert_string_equal(took(&r), "report_failed");
}

/* Two ends back to back: rank 0 dials, rank 1 accepts; both ask at once. */
static void both_ask(int hello_first)
{
    bfo_link_binding b0, b1;
    rec r0, r1;
    bfo_tracer t0, t1;
    bfo_link a, z;
    setup(&b0, &r0, &t0);
    setup(&b1, &r1, &t1);
    r1.reply_result = BFO_CONN_EV_PEER_READY;
    bfo_link_init(&b0, &a, 0, 1, 0);
    bfo_link_init(&b1, &z, 1, 0, 0);
    bfo_link_ask(&b0, &a);
    bfo_link_ask(&b1, &z);
    bfo_link_asked(&b0, &a, 0);
    bfo_link_feed(&b0, &a, BFO_CONN_EV_DIAL_CONNECTED, NULL, 0);
    assert_string_equal(took(&r0), "dial send_hello");
    if (!hello_first)
        bfo_link_asked(&b1, &z, 0);
    assert_int_equal(bfo_link_hello(&b1, &z, a.attempt, NULL, 0), BFO_OK);
    assert_int_equal(b1.asked, 0);
    bfo_link_asked(&b1, &z, 0); /* nothing left to feed */
    bfo_link_feed(&b0, &a, BFO_CONN_EV_REPLY_RCVD, NULL, 0);
    assert_true(bfo_link_up(&a));
    assert_true(bfo_link_up(&z));
    assert_string_equal(took(&r0), "report_up");
    assert_string_equal(took(&r1), "wait take send_reply report_up");
    assert_int_equal(a.attempt, z.attempt);
}

static void test_both_ask_at_once_hello_after_the_acceptors_connect(void **state)
{
    (void)state;
    both_ask(0);
}

static void test_both_ask_at_once_hello_before_the_acceptors_connect(void **state)
{
    (void)state;
    both_ask(1);
}

static void test_a_hello_at_the_dialer_is_refused_the_peer_dialed_too(void **state)
{
    bfo_link_binding b;
    rec r;
    bfo_tracer tr;
    bfo_link l;
    (void)state;
    setup(&b, &r, &tr);
    bfo_link_init(&b, &l, 0, 1, 0);
    assert_int_equal(bfo_link_hello(&b, &l, 9, NULL, 0), BFO_OK);
    assert_string_equal(took(&r), "refuse");
    assert_int_equal(l.attempt, 0); /* taken from no one */
    assert_int_equal(l.fsm.cs, BFO_CONN_ST_DIALER_DOWN);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_lower_rank_dials),
        cmocka_unit_test(test_an_illegal_event_is_refused_by_name_and_changes_nothing),
        cmocka_unit_test(test_dialer_dial_hello_reply_up_and_the_deadline),
        cmocka_unit_test(test_a_dial_that_fails_at_once_is_fed_after_the_step),
        cmocka_unit_test(test_acceptor_takes_newer_hellos_and_refuses_stale_ones),
        cmocka_unit_test(test_acceptor_with_a_third_leg_verbs),
        cmocka_unit_test(test_both_ask_at_once_hello_after_the_acceptors_connect),
        cmocka_unit_test(test_both_ask_at_once_hello_before_the_acceptors_connect),
        cmocka_unit_test(test_a_hello_at_the_dialer_is_refused_the_peer_dialed_too),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
