// SPDX-License-Identifier: BSD-3-Clause
/* test_engine_revoke.c - the tests of include/fsm/bfo_engine_revoke.h:
 * process failure reported and acknowledged, contexts revoked.
 * What the engine's tests share is in engine_test.h. */
#include "engine_test.h"

/* ------------------------------------------------- process failure */

/* Counts the peer machine's steps the tracer sees (bfo__peer_step). */
typedef struct peer_trace {
    int steps, to_failed;
} peer_trace;
static void count_peer_steps(void *user, const bfo_machine *m, const bfo_step *st)
{
    peer_trace *t = (peer_trace *)user;
    if (m->id != BFO_MACHINE_PEER)
        return;
    t->steps++;
    t->to_failed += st->from != BFO_PEER_ST_FAILED && st->to == BFO_PEER_ST_FAILED && st->result == BFO_OK;
}

/* A process killed mid-message, then reported dead (DEATH_REPORTED: give_up
 * fence): what waits on it fails BFO_ERR_PROC_FAILED, later requests at
 * once; it is fenced; the survivors still talk. */
static void test_DEATH_REPORTED_pending_requests_fail_PROC_FAILED_later_ones_at_once(void **state)
{
    bfo_request r2, s2, big, late_s, late_r, s0, r0;
    static uint8_t buf[200000];
    uint8_t y = 0, x = 5, in0 = 0;
    peer_trace pt = { 0, 0 };
    bfo_tracer tr = { count_peer_steps, &pt };
    (void)state;
    sr_scenario sc = make(NULL, 0, 3, 2, 72);
    sr_world *w = sr_new(&sc);
    sr_advance(w, 1000000);
    w->e[1].trace = &tr;
    assert_int_equal(bfo_irecv(&w->e[1], &r2, &y, 1, 2, 0, 1, w->sn.now), BFO_OK);
    assert_int_equal(bfo_isend(&w->e[1], &s2, &x, 1, 2, 0, 2, w->sn.now), BFO_OK);
    assert_int_equal(bfo_isend(&w->e[1], &big, buf, sizeof buf, 2, 0, 3, w->sn.now), BFO_OK);
    STEP_UNTIL(w, bfo_test(&s2)); /* delivered; the rendezvous waits for a receive */
    assert_int_equal(s2.status, BFO_OK);
    assert_false(bfo_test(&big));
    sn_rank_killed(&w->sn, 2); /* SIGKILL: no BYE */
    sr_advance(w, 10000000);
    assert_int_equal(bfo_peer_failed(&w->e[1], 2, w->sn.now), BFO_OK);
    assert_int_equal(bfo_peer_state(&w->e[1], 2), BFO_PEER_ST_FAILED);
    STEP_UNTIL(w, bfo_test(&r2) && bfo_test(&big));
    assert_int_equal(r2.status, BFO_ERR_PROC_FAILED);
    assert_int_equal(big.status, BFO_ERR_PROC_FAILED);
    assert_int_equal(bfo_isend(&w->e[1], &late_s, &x, 1, 2, 0, 4, w->sn.now), BFO_ERR_PROC_FAILED);
    assert_int_equal(late_s.status, BFO_ERR_PROC_FAILED);
    assert_int_equal(bfo_irecv(&w->e[1], &late_r, &y, 1, 2, 0, 4, w->sn.now), BFO_ERR_PROC_FAILED);
    assert_int_equal(late_r.status, BFO_ERR_PROC_FAILED);
    assert_false(bfo_peer_reachable(&w->e[1], 2));
    assert_int_equal(w->e[1].stats.procs_failed, 1);
    assert_int_equal(w->e[1].stats.failed_errors, 4);
    assert_int_equal(w->e[1].stats.unreachable_errors, 0);
    assert_int_equal(pt.to_failed, 1);
    assert_true(pt.steps >= 1);
    /* reported again: nothing more */
    assert_int_equal(bfo_peer_failed(&w->e[1], 2, w->sn.now), BFO_OK);
    assert_int_equal(w->e[1].stats.procs_failed, 1);
    assert_int_equal(pt.to_failed, 1);
    /* not a peer: refused */
    assert_int_equal(bfo_peer_failed(&w->e[1], 1, w->sn.now), BFO_ERR_INVALID);
    assert_int_equal(bfo_peer_failed(&w->e[1], 3, w->sn.now), BFO_ERR_INVALID);
    assert_int_equal(bfo_peer_failed(&w->e[1], -1, w->sn.now), BFO_ERR_INVALID);
    /* the survivors */
    assert_int_equal(bfo_irecv(&w->e[1], &r0, &in0, 1, 0, 0, 9, w->sn.now), BFO_OK);
    assert_int_equal(bfo_isend(&w->e[0], &s0, &x, 1, 1, 0, 9, w->sn.now), BFO_OK);
    STEP_UNTIL(w, bfo_test(&r0) && bfo_test(&s0));
    assert_int_equal(r0.status, BFO_OK);
    assert_int_equal(in0, 5);
    assert_int_equal(STAT(w, protocol_violations), 0);
    w->e[1].trace = NULL;
    sr_del(w);
}

/* A failure not acknowledged: a posted ANY_SOURCE receive ends
 * BFO_ERR_PROC_FAILED_PENDING, and so does a new one that nothing here
 * matches (one that a message here matches takes it); after
 * bfo_failure_ack, ANY_SOURCE receives work again. */
static void test_DEATH_REPORTED_any_source_receive_PROC_FAILED_PENDING_until_acked(void **state)
{
    bfo_request any, any2, any3, any4, s0, s0b;
    uint8_t y = 0, y3 = 0, y4 = 0, a = 'a', b = 'b';
    int ranks[4] = { -1, -1, -1, -1 };
    (void)state;
    sr_scenario sc = make(NULL, 0, 3, 1, 73);
    sr_world *w = sr_new(&sc);
    sr_advance(w, 1000000);
    assert_int_equal(bfo_irecv(&w->e[1], &any, &y, 1, BFO_ANY_SOURCE, 0, 1, w->sn.now), BFO_OK);
    assert_int_equal(bfo_isend(&w->e[0], &s0, &a, 1, 1, 0, 2, w->sn.now), BFO_OK); /* unexpected */
    STEP_UNTIL(w, bfo_test(&s0));
    assert_int_equal(bfo_failure_get_acked(&w->e[1], ranks, 4), 0);
    sn_rank_killed(&w->sn, 2);
    assert_int_equal(bfo_peer_failed(&w->e[1], 2, w->sn.now), BFO_OK);
    assert_true(bfo_test(&any));
    assert_int_equal(any.status, BFO_ERR_PROC_FAILED_PENDING);
    assert_int_equal(bfo_irecv(&w->e[1], &any2, &y, 1, BFO_ANY_SOURCE, 0, 1, w->sn.now),
                     BFO_ERR_PROC_FAILED_PENDING);
    assert_int_equal(any2.status, BFO_ERR_PROC_FAILED_PENDING);
    /* the message of rank 0 here matches: taken */
    assert_int_equal(bfo_irecv(&w->e[1], &any3, &y3, 1, BFO_ANY_SOURCE, 0, 2, w->sn.now), BFO_OK);
    assert_true(bfo_test(&any3));
    assert_int_equal(any3.status, BFO_OK);
    assert_int_equal(y3, 'a');
    assert_int_equal(bfo_failure_get_acked(&w->e[1], ranks, 4), 0); /* not acknowledged yet */
    assert_int_equal(bfo_failure_ack(&w->e[1]), 1);
    assert_int_equal(bfo_failure_get_acked(&w->e[1], ranks, 4), 1);
    assert_int_equal(ranks[0], 2);
    assert_int_equal(bfo_irecv(&w->e[1], &any4, &y4, 1, BFO_ANY_SOURCE, 0, 3, w->sn.now), BFO_OK);
    assert_false(bfo_test(&any4));
    assert_int_equal(bfo_isend(&w->e[0], &s0b, &b, 1, 1, 0, 3, w->sn.now), BFO_OK);
    STEP_UNTIL(w, bfo_test(&any4) && bfo_test(&s0b));
    assert_int_equal(any4.status, BFO_OK);
    assert_int_equal(any4.source, 0);
    assert_int_equal(y4, 'b');
    assert_int_equal(w->e[1].stats.failed_errors, 2);
    assert_int_equal(STAT(w, protocol_violations), 0);
    sr_del(w);
}

/* bfo_failure_get_acked: the order failures were reported in, the
 * acknowledged ones only, as many as there is room for. */
static void test_failure_get_acked_in_the_order_reported(void **state)
{
    int ranks[4] = { -1, -1, -1, -1 };
    (void)state;
    sr_scenario sc = make(NULL, 0, 4, 1, 74);
    sr_world *w = sr_new(&sc);
    sr_advance(w, 1000000);
    bfo_engine *e = &w->e[0];
    assert_int_equal(bfo_peer_failed(e, 3, w->sn.now), BFO_OK);
    assert_int_equal(bfo_peer_failed(e, 1, w->sn.now), BFO_OK);
    assert_int_equal(bfo_failure_ack(e), 2);
    assert_int_equal(bfo_peer_failed(e, 2, w->sn.now), BFO_OK);
    assert_int_equal(bfo_failure_get_acked(e, ranks, 4), 2);
    assert_int_equal(ranks[0], 3);
    assert_int_equal(ranks[1], 1);
    assert_int_equal(ranks[2], -1);
    ranks[0] = ranks[1] = -1;
    assert_int_equal(bfo_failure_get_acked(e, ranks, 1), 2); /* room for one */
    assert_int_equal(ranks[0], 3);
    assert_int_equal(ranks[1], -1);
    assert_int_equal(bfo_failure_get_acked(e, NULL, 0), 2);
    assert_int_equal(bfo_failure_ack(e), 3);
    assert_int_equal(bfo_failure_get_acked(e, ranks, 4), 3);
    assert_int_equal(ranks[2], 2);
    for (int i = 1; i < 4; i++)
        assert_int_equal(bfo_peer_state(e, i), BFO_PEER_ST_FAILED);
    assert_int_equal(e->stats.procs_failed, 3);
    sr_del(w);
}

/* A peer that left in good order, then exits: its death reported is no
 * failure (LEAVING, LEFT: DEATH_REPORTED changes nothing). */
static void test_DEATH_REPORTED_after_BYE_RCVD_is_no_failure(void **state)
{
    bfo_request r, any;
    uint8_t y = 0;
    (void)state;
    sr_world *w = leave_world(3, 1, 75);
    leave_and_exit(w, 0);
    assert_int_equal(bfo_peer_state(&w->e[1], 0), BFO_PEER_ST_LEFT);
    assert_int_equal(bfo_peer_failed(&w->e[1], 0, w->sn.now), BFO_OK);
    assert_int_equal(bfo_peer_state(&w->e[1], 0), BFO_PEER_ST_LEFT);
    assert_int_equal(bfo_irecv(&w->e[1], &r, &y, 1, 0, 0, 1, w->sn.now), BFO_ERR_PEER_LEFT);
    assert_int_equal(bfo_irecv(&w->e[1], &any, &y, 1, BFO_ANY_SOURCE, 0, 1, w->sn.now), BFO_OK);
    assert_false(bfo_test(&any)); /* rank 2 may still send: no failure pending */
    assert_int_equal(w->e[1].stats.procs_failed, 0);
    assert_int_equal(bfo_failure_ack(&w->e[1]), 0);
    /* and after this rank left, a report changes nothing either */
    assert_int_equal(bfo_engine_leave(&w->e[1], w->sn.now), BFO_OK);
    assert_int_equal(bfo_peer_state(&w->e[1], 2), BFO_PEER_ST_PARTED);
    assert_int_equal(bfo_peer_state(&w->e[1], 1), BFO_PEER_ST_PARTED); /* itself */
    assert_int_equal(bfo_peer_failed(&w->e[1], 2, w->sn.now), BFO_OK);
    assert_int_equal(bfo_peer_state(&w->e[1], 2), BFO_PEER_ST_PARTED);
    assert_int_equal(w->e[1].stats.procs_failed, 0);
    assert_int_equal(STAT(w, protocol_violations), 0);
    sr_del(w);
}

/* Given up first (UNREACHABLE: its requests failed PEER_UNREACHABLE), then
 * reported dead: FAILED, later requests fail PROC_FAILED. */
static void test_UNREACHABLE_DEATH_REPORTED_FAILED_later_requests_PROC_FAILED(void **state)
{
    bfo_request r, late;
    uint8_t y = 0, x = 1;
    (void)state;
    sr_scenario sc = make(NULL, 0, 2, 1, 76);
    sc.connect_at_init = 1; /* about rails UP from the start, not their setup */
    sr_world *w = sr_new(&sc);
    sr_advance(w, 1000000);
    assert_int_equal(bfo_irecv(&w->e[0], &r, &y, 1, 1, 0, 1, w->sn.now), BFO_OK);
    sn_rank_killed(&w->sn, 1);
    sr_advance(w, w->e[0].cfg.unreachable_grace_ns + 1000000000ull);
    assert_int_equal(bfo_peer_state(&w->e[0], 1), BFO_PEER_ST_UNREACHABLE);
    assert_true(bfo_test(&r));
    assert_int_equal(r.status, BFO_ERR_PEER_UNREACHABLE);
    assert_int_equal(bfo_peer_failed(&w->e[0], 1, w->sn.now), BFO_OK);
    assert_int_equal(bfo_peer_state(&w->e[0], 1), BFO_PEER_ST_FAILED);
    assert_int_equal(bfo_isend(&w->e[0], &late, &x, 1, 1, 0, 1, w->sn.now), BFO_ERR_PROC_FAILED);
    assert_int_equal(w->e[0].stats.procs_failed, 1);
    assert_int_equal(w->e[0].stats.protocol_violations, 0);
    sr_del(w);
}

/* A process reported dead that is in fact alive (a false suspicion) is
 * fenced: its frames are refused, its connections dropped, so its own
 * requests to this rank fail in bounded time, and nothing of it is taken. */
static void test_DEATH_REPORTED_of_a_live_process_fences_it(void **state)
{
    bfo_request s;
    uint8_t x = 7;
    (void)state;
    sr_scenario sc = make(NULL, 0, 2, 2, 77);
    sr_world *w = sr_new(&sc);
    sr_advance(w, 1000000);
    assert_int_equal(bfo_peer_failed(&w->e[0], 1, w->sn.now), BFO_OK);
    assert_int_equal(bfo_isend(&w->e[1], &s, &x, 1, 0, 0, 1, w->sn.now), BFO_OK);
    sr_advance(w, 10000000000ull);
    assert_true(bfo_test(&s));
    assert_int_equal(s.status, BFO_ERR_PEER_UNREACHABLE);
    assert_int_equal(bfo_peer_state(&w->e[1], 0), BFO_PEER_ST_UNREACHABLE);
    assert_int_equal(bfo_peer_state(&w->e[0], 1), BFO_PEER_ST_FAILED);
    assert_int_equal(w->e[0].stats.messages_received, 0);
    for (int k = 0; k < 2; k++) /* given up with it, for good */
        assert_int_equal(w->e[0].peers[1].rail[k].fsm.cs, BFO_RAIL_ST_RETIRED);
    sr_del(w);
}

/* bfo_revoke: a receive posted on the context and not matched ends
 * BFO_ERR_REVOKED; later requests on it end so at once, and take no
 * sequence number (the peer's next message on another context still
 * arrives); other contexts are untouched. */
static void test_revoke_ends_posted_receives_and_refuses_later_requests(void **state)
{
    bfo_request r, other, late_s, late_r, next_s, next_r;
    uint8_t y = 0, x = 3, z = 0;
    (void)state;
    sr_scenario sc = make(NULL, 0, 2, 2, 81);
    sr_world *w = sr_new(&sc);
    sr_advance(w, 1000000);
    assert_int_equal(bfo_irecv(&w->e[0], &r, &y, 1, 1, 5, 1, w->sn.now), BFO_OK);
    assert_int_equal(bfo_irecv(&w->e[0], &other, &z, 1, 1, 6, 1, w->sn.now), BFO_OK);
    assert_int_equal(bfo_revoke(&w->e[0], 5, w->sn.now), BFO_OK);
    assert_true(bfo_revoked(&w->e[0], 5));
    assert_false(bfo_revoked(&w->e[0], 6));
    assert_true(bfo_test(&r));
    assert_int_equal(r.status, BFO_ERR_REVOKED);
    assert_false(bfo_test(&other));
    assert_int_equal(bfo_isend(&w->e[0], &late_s, &x, 1, 1, 5, 1, w->sn.now), BFO_ERR_REVOKED);
    assert_true(bfo_test(&late_s));
    assert_int_equal(bfo_irecv(&w->e[0], &late_r, &y, 1, 1, 5, 1, w->sn.now), BFO_ERR_REVOKED);
    assert_true(bfo_test(&late_r));
    assert_int_equal(bfo_revoke(&w->e[0], 5, w->sn.now), BFO_OK); /* again: nothing more */
    assert_int_equal(w->e[0].stats.revokes, 1);
    /* the other context works, both ways (no sequence number was lost) */
    assert_int_equal(bfo_isend(&w->e[1], &next_s, &x, 1, 0, 6, 1, w->sn.now), BFO_OK);
    assert_int_equal(bfo_isend(&w->e[0], &next_r, &x, 1, 1, 6, 2, w->sn.now), BFO_OK);
    sr_advance(w, 100000000);
    assert_true(bfo_test(&other));
    assert_int_equal(other.status, BFO_OK);
    assert_int_equal(z, 3);
    assert_true(bfo_test(&next_s));
    assert_true(bfo_test(&next_r));
    assert_int_equal(w->e[0].stats.revoked_errors, 3);
    assert_int_equal(STAT(w, protocol_violations), 0);
    sr_del(w);
}

/* Messages on a revoked context are discarded: an eager one waiting
 * unexpected, and one that comes later, are dropped; a rendezvous is taken
 * by a discard receive, so that its sender's request completes BFO_OK; the
 * discard receives never reach the done queue. */
static void test_revoke_discards_unexpected_and_later_messages_so_senders_complete(void **state)
{
    static uint8_t big[100000], bigger[60000];
    bfo_request se, sr, se2, sr2, keep;
    uint8_t x[64] = { 1 }, y = 0;
    bfo_config c;
    (void)state;
    memset(&c, 0, sizeof c);
    c.done_queue = 1;
    c.max_requests = 64;
    c.max_unexpected = 64;
    sr_scenario sc = make(NULL, 0, 2, 2, 82);
    sc.cfg = &c;
    sr_world *w = sr_new(&sc);
    sr_advance(w, 1000000);
    assert_int_equal(bfo_isend(&w->e[1], &se, x, sizeof x, 0, 5, 1, w->sn.now), BFO_OK);
    assert_int_equal(bfo_isend(&w->e[1], &sr, big, sizeof big, 0, 5, 2, w->sn.now), BFO_OK);
    sr_advance(w, 50000000); /* both wait unexpected at rank 0 */
    assert_true(bfo_test(&se));
    assert_false(bfo_test(&sr));
    assert_int_equal(bfo_revoke(&w->e[0], 5, w->sn.now), BFO_OK);
    assert_int_equal(bfo_isend(&w->e[1], &se2, x, sizeof x, 0, 5, 3, w->sn.now), BFO_OK);
    assert_int_equal(bfo_isend(&w->e[1], &sr2, bigger, sizeof bigger, 0, 5, 4, w->sn.now), BFO_OK);
    assert_int_equal(bfo_irecv(&w->e[0], &keep, &y, 1, 1, 6, 1, w->sn.now), BFO_OK);
    sr_advance(w, 200000000);
    assert_true(bfo_test(&sr));
    assert_int_equal(sr.status, BFO_OK);
    assert_true(bfo_test(&se2));
    assert_true(bfo_test(&sr2));
    assert_int_equal(sr2.status, BFO_OK);
    assert_int_equal(w->e[0].stats.revoke_discards, 4);
    assert_int_equal(w->e[0].ux_head, -1); /* nothing kept */
    for (bfo_request *d; (d = bfo_done_pop(&w->e[0])) != NULL;)
        fail_msg("rank 0's done queue has a request (status %d): the discards are the engine's", d->status);
    assert_false(bfo_test(&keep));
    assert_int_equal(STAT(w, protocol_violations), 0);
    sr_del(w);
}

/* A send on a revoked context whose message has not left (no rail to its
 * peer yet) is withdrawn, as bfo_cancel does, and ends BFO_ERR_REVOKED;
 * the peer takes its sequence number, so the next message still comes. */
static void test_revoke_withdraws_a_send_not_yet_out(void **state)
{
    bfo_request s, next, r;
    uint8_t x = 9, y = 0;
    (void)state;
    sr_scenario sc = make(NULL, 0, 2, 1, 83);
    sr_world *w = sr_new(&sc); /* no step yet: no rail is up, the MATCH waits */
    assert_int_equal(bfo_isend(&w->e[0], &s, &x, 1, 1, 5, 1, w->sn.now), BFO_OK);
    assert_int_equal(bfo_revoke(&w->e[0], 5, w->sn.now), BFO_OK);
    assert_int_equal(bfo_isend(&w->e[0], &next, &x, 1, 1, 6, 1, w->sn.now), BFO_OK);
    assert_int_equal(bfo_irecv(&w->e[1], &r, &y, 1, 0, 6, 1, w->sn.now), BFO_OK);
    sr_advance(w, 200000000);
    assert_true(bfo_test(&s));
    assert_int_equal(s.status, BFO_ERR_REVOKED);
    assert_true(bfo_test(&r));
    assert_int_equal(r.status, BFO_OK);
    assert_int_equal(y, 9);
    assert_int_equal(STAT(w, protocol_violations), 0);
    sr_del(w);
}

/* The tests of revoke, in the order they run (engine_test_main: a pattern,
 * --shard). */
int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_DEATH_REPORTED_pending_requests_fail_PROC_FAILED_later_ones_at_once),
        cmocka_unit_test(test_DEATH_REPORTED_any_source_receive_PROC_FAILED_PENDING_until_acked),
        cmocka_unit_test(test_failure_get_acked_in_the_order_reported),
        cmocka_unit_test(test_DEATH_REPORTED_after_BYE_RCVD_is_no_failure),
        cmocka_unit_test(test_UNREACHABLE_DEATH_REPORTED_FAILED_later_requests_PROC_FAILED),
        cmocka_unit_test(test_DEATH_REPORTED_of_a_live_process_fences_it),
        cmocka_unit_test(test_revoke_ends_posted_receives_and_refuses_later_requests),
        cmocka_unit_test(test_revoke_discards_unexpected_and_later_messages_so_senders_complete),
        cmocka_unit_test(test_revoke_withdraws_a_send_not_yet_out),
    };
    return engine_test_main(argc, argv, "engine_revoke", tests, sizeof tests / sizeof tests[0]);
}
