// SPDX-License-Identifier: BSD-3-Clause
/* test_engine_request.c - the tests of include/fsm/bfo_engine_request.h:
 * a request's life: completions in order, an op the transport does not
 * hold, cancel.
 * What the engine's tests share is in engine_test.h. */
#include "engine_test.h"

/* bfo_config.done_queue: each request is popped once, in the order it
 * completed (sends, receives, one completed at once with an error), and
 * nothing is queued without the option. */
static void test_done_queue_pops_each_completion_once_in_order(void **state)
{
    uint8_t a[8] = "abc", big[20000], r1[8], r2[20000];
    bfo_request s1, s2, q1, q2, late;
    bfo_config c;
    (void)state;
    memset(&c, 0, sizeof c);
    c.max_requests = 16;
    c.done_queue = 1;
    sr_scenario sc = make(NULL, 0, 2, 2, 11);
    sc.cfg = &c;
    sc.connect_at_init = 1; /* about rails UP from the start, not their setup */
    sr_world *w = sr_new(&sc);
    memset(big, 7, sizeof big);
    assert_null(bfo_done_pop(&w->e[0]));
    assert_true(bfo_peer_reachable(&w->e[0], 1));
    assert_int_equal(bfo_rail_state(&w->e[0], 0, 0), 0); /* itself */
    assert_int_equal(bfo_rail_state(&w->e[0], 1, 2), 0);
    assert_int_equal(bfo_rail_state(&w->e[0], 2, 0), 0);
    assert_int_equal(bfo_rail_probe_timeout(&w->e[0], 0, 0), 0); /* itself */
    assert_int_equal(bfo_rail_rtt(&w->e[0], 1, 2), 0);
    assert_int_equal(bfo_rail_best_other_rate(&w->e[0], 2, 0), 0);
    {
        /* the public defaults are the engine's (sr_new: rank 0 of 2, 2 rails) */
        bfo_config d = c;
        d.rank = 0, d.nranks = 2, d.nrails = 2;
        bfo_config_defaults(&d);
        bfo_config_defaults(NULL);
        assert_int_equal(d.max_requests, 16); /* set: kept */
        assert_int_equal(d.max_ops, w->e[0].cfg.max_ops);
        assert_int_equal(d.eager_limit, w->e[0].cfg.eager_limit);
        assert_int_equal(d.probe_timeout_ns, w->e[0].cfg.probe_timeout_ns);
        assert_true(d.max_ops > 0 && d.eager_limit > 0 && d.frag_size > 0);
    }
    for (int k = 0; k < 200 && bfo_rail_state(&w->e[0], 1, 1) != BFO_RAIL_ST_UP; k++)
        sn_step(&w->sn);
    assert_true(bfo_rail_probe_timeout(&w->e[0], 1, 0) >= w->e[0].cfg.probe_timeout_ns);
    assert_true(bfo_rail_probe_timeout(&w->e[0], 1, 0) <= w->e[0].cfg.silence_ns);
    assert_int_equal(bfo_rail_state(&w->e[0], 1, 0), BFO_RAIL_ST_UP);
    assert_int_equal(bfo_rail_state(&w->e[0], 1, 1), BFO_RAIL_ST_UP);
    assert_int_equal(bfo_irecv(&w->e[1], &q1, r1, sizeof r1, 0, 0, 1, w->sn.now), BFO_OK);
    assert_int_equal(bfo_irecv(&w->e[1], &q2, r2, sizeof r2, 0, 0, 2, w->sn.now), BFO_OK);
    assert_int_equal(bfo_isend(&w->e[0], &s2, big, sizeof big, 1, 0, 2, w->sn.now), BFO_OK);
    assert_int_equal(bfo_isend(&w->e[0], &s1, a, 4, 1, 0, 1, w->sn.now), BFO_OK);
    for (int k = 0; k < 2000 && !(bfo_test(&s1) && bfo_test(&s2) && bfo_test(&q1) && bfo_test(&q2)); k++)
        sn_step(&w->sn);
    assert_true(bfo_test(&s1) && bfo_test(&s2) && bfo_test(&q1) && bfo_test(&q2));
    /* the eager message completes at the receiver before the rendezvous */
    assert_ptr_equal(bfo_done_pop(&w->e[1]), &q1);
    assert_ptr_equal(bfo_done_pop(&w->e[1]), &q2);
    assert_null(bfo_done_pop(&w->e[1]));
    {
        bfo_request *x = bfo_done_pop(&w->e[0]), *y = bfo_done_pop(&w->e[0]);
        assert_true((x == &s1 && y == &s2) || (x == &s2 && y == &s1));
        assert_null(bfo_done_pop(&w->e[0]));
    }
    assert_memory_equal(r2, big, sizeof big);
    /* a request completed at once is queued too */
    w->e[0].peers[1].unreachable = 1;
    assert_int_equal(bfo_isend(&w->e[0], &late, a, 1, 1, 0, 3, w->sn.now), BFO_ERR_PEER_UNREACHABLE);
    assert_ptr_equal(bfo_done_pop(&w->e[0]), &late);
    assert_int_equal(late.status, BFO_ERR_PEER_UNREACHABLE);
    assert_null(bfo_done_pop(&w->e[0]));
    sr_del(w);
    /* without the option nothing is queued */
    c.done_queue = 0;
    w = sr_new(&sc);
    assert_int_equal(bfo_isend(&w->e[0], &s1, a, 4, 1, 0, 1, w->sn.now), BFO_OK);
    assert_int_equal(bfo_irecv(&w->e[1], &q1, r1, sizeof r1, 0, 0, 1, w->sn.now), BFO_OK);
    for (int k = 0; k < 500 && !(bfo_test(&s1) && bfo_test(&q1)); k++)
        sn_step(&w->sn);
    assert_true(bfo_test(&s1) && bfo_test(&q1));
    assert_null(bfo_done_pop(&w->e[0]));
    assert_null(bfo_done_pop(&w->e[1]));
    sr_del(w);
}

/* A completion whose token names no operation the transport holds (one
 * waiting for a rail, or one never used, whose generation a post would
 * have) is ignored: found by tests/fuzz/fuzz_engine (the engine completed
 * the free op, or the MATCH still waiting, as if delivered). */
static void test_completion_of_an_op_the_transport_does_not_hold_is_ignored(void **state)
{
    static const msgspec m[] = { { 0, 1, 64 } };
    sr_result res;
    (void)state;
    sr_scenario sc = make(m, 1, 2, 2, 81);
    sr_world *w = sr_new(&sc); /* no rail is up yet: the MATCH waits for one */
    bfo_engine *e = &w->e[0];
    int pend = e->peers[1].pend_head, fresh = e->op_free;
    assert_true(pend >= 0 && fresh >= 0);
    assert_int_equal(bfo_peer_waiting_count(e, 1), 1); /* the public count of that list */
    assert_int_equal(bfo_peer_waiting_count(e, 2), 0); /* out of range */
    int in_use = e->ops_in_use;
    bfo_engine_completion(e, ((uint64_t)bfo__op_at(e, pend)->gen << 32) | (uint32_t)pend, 1);
    bfo_engine_completion(e, ((uint64_t)bfo__op_at(e, fresh)->gen << 32) | (uint32_t)fresh, 0);
    assert_int_equal(e->ops_in_use, in_use);
    assert_int_equal(e->op_free, fresh);
    assert_int_equal(e->peers[1].pend_head, pend);
    assert_false(bfo_test(&w->sreq[0]));
    sr_go(w);
    assert_true(sr_judge(w, &res)); /* delivered once, every pool entry back */
    assert_int_equal(w->sreq[0].status, BFO_OK);
    sr_del(w);
}

/* A posted receive cancelled: complete at once as cancelled, and the
 * message goes to the next receive; a matched one: too late. */
static void test_cancel_posted_receive_and_too_late_once_matched(void **state)
{
    uint8_t a[4] = "abc", r1[4], r2[4];
    bfo_request s, q1, q2;
    (void)state;
    sr_scenario sc = make(NULL, 0, 2, 2, 54);
    sr_world *w = sr_new(&sc);
    assert_int_equal(bfo_irecv(&w->e[1], &q1, r1, 4, 0, 0, 1, w->sn.now), BFO_OK);
    assert_int_equal(bfo_irecv(&w->e[1], &q2, r2, 4, 0, 0, 1, w->sn.now), BFO_OK);
    assert_int_equal(bfo_cancel(&w->e[1], &q1, w->sn.now), BFO_OK);
    assert_true(bfo_test(&q1));
    assert_int_equal(q1.status, BFO_ERR_CANCELLED);
    assert_int_equal(bfo_cancel(&w->e[1], &q1, w->sn.now), BFO_ERR_TOO_LATE);
    bfo_isend(&w->e[0], &s, a, 4, 1, 0, 1, w->sn.now);
    sr_advance(w, 50000000);
    assert_true(bfo_test(&q2) && bfo_test(&s));
    assert_int_equal(q2.status, BFO_OK);
    assert_string_equal((char *)r2, "abc");
    assert_int_equal(bfo_cancel(&w->e[1], &q2, w->sn.now), BFO_ERR_TOO_LATE);
    assert_int_equal(bfo_cancel(&w->e[0], &s, w->sn.now), BFO_ERR_TOO_LATE);
    sr_del(w);
}

/* Sends posted before any rail is up: the first cancelled (its MATCH waits
 * for a rail), the others go on in order; the cancelled one's receive
 * never matches anything; once a send has left, cancel is too late. */
static void test_cancel_send_before_it_left_keeps_the_sequence_whole(void **state)
{
    uint8_t a[4] = "one", b[4] = "two", c[4] = "thr", r[3][4];
    bfo_request s[3], q[3];
    (void)state;
    sr_scenario sc = make(NULL, 0, 2, 2, 55);
    sr_world *w = sr_new(&sc); /* no time has passed: no rail is up */
    for (int i = 0; i < 3; i++)
        bfo_irecv(&w->e[1], &q[i], r[i], 4, 0, 0, 1, w->sn.now);
    bfo_isend(&w->e[0], &s[0], a, 4, 1, 0, 1, w->sn.now);
    bfo_isend(&w->e[0], &s[1], b, 4, 1, 0, 1, w->sn.now);
    bfo_isend(&w->e[0], &s[2], c, 4, 1, 0, 1, w->sn.now);
    assert_int_equal(bfo_cancel(&w->e[0], &s[0], w->sn.now), BFO_OK);
    assert_int_equal(bfo_cancel(&w->e[0], &s[0], w->sn.now), BFO_ERR_TOO_LATE);
    assert_false(bfo_test(&s[0])); /* until its empty MATCH is delivered */
    sr_advance(w, 100000000);
    assert_true(bfo_test(&s[0]) && bfo_test(&s[1]) && bfo_test(&s[2]));
    assert_int_equal(s[0].status, BFO_ERR_CANCELLED);
    assert_int_equal(s[1].status, BFO_OK);
    assert_true(bfo_test(&q[0]) && bfo_test(&q[1]));
    assert_string_equal((char *)r[0], "two");
    assert_string_equal((char *)r[1], "thr");
    assert_false(bfo_test(&q[2]));
    assert_int_equal(bfo_cancel(&w->e[1], &q[2], w->sn.now), BFO_OK);
    assert_int_equal(w->e[1].peers[0].recv_seq, 4);
    assert_int_equal(w->e[1].uxm_in_use, 0);
    sr_del(w);
}

/* Cancel of a request this engine does not hold. */
static void test_cancel_of_no_request_is_invalid(void **state)
{
    bfo_request r;
    (void)state;
    sr_scenario sc = make(NULL, 0, 2, 1, 56);
    sr_world *w = sr_new(&sc);
    uint8_t y = 0;
    memset(&r, 0, sizeof r);
    assert_int_equal(bfo_cancel(&w->e[0], NULL, 0), BFO_ERR_INVALID);
    assert_int_equal(bfo_cancel(&w->e[0], &r, 0), BFO_ERR_INVALID);
    /* a receive posted on the other engine (it holds no handle: not in
     * this engine's bins either) */
    assert_int_equal(bfo_irecv(&w->e[1], &r, &y, 1, 0, 0, 1, w->sn.now), BFO_OK);
    assert_int_equal(bfo_cancel(&w->e[0], &r, 0), BFO_ERR_INVALID);
    assert_false(bfo_test(&r));
    assert_int_equal(bfo_cancel(&w->e[1], &r, 0), BFO_OK);
    assert_true(bfo_test(&r));
    assert_int_equal(r.status, BFO_ERR_CANCELLED);
    assert_int_equal(bfo_cancel(&w->e[1], &r, 0), BFO_ERR_TOO_LATE);
    assert_int_equal(w->e[1].slots_in_use, 0);
    sr_del(w);
}

/* The tests of request, in the order they run (engine_test_main: a pattern,
 * --shard). */
int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cancel_posted_receive_and_too_late_once_matched),
        cmocka_unit_test(test_cancel_send_before_it_left_keeps_the_sequence_whole),
        cmocka_unit_test(test_cancel_of_no_request_is_invalid),
        cmocka_unit_test(test_done_queue_pops_each_completion_once_in_order),
        cmocka_unit_test(test_completion_of_an_op_the_transport_does_not_hold_is_ignored),
    };
    return engine_test_main(argc, argv, "engine_request", tests, sizeof tests / sizeof tests[0]);
}
