// SPDX-License-Identifier: BSD-3-Clause
/* test_engine_machines.c - the tests of include/fsm/bfo_engine_machines.h:
 * the rail and peer machines: rails down and back, unreachable peers,
 * leaving (the BYE and LEFT), actions without their input.
 * What the engine's tests share is in engine_test.h. */
#include "engine_test.h"

static void test_rail_down_mid_stream_then_back(void **state)
{
    (void)state;
    sr_scenario sc = make(mixed, NMIXED, 2, 2, 40);
    add_fault(&sc, SN_FAULT_RAIL_DOWN, 0, 0, 15, 0);
    add_fault(&sc, SN_FAULT_RAIL_UP, 0, 0, 60, 0);
    sr_world *w = run(&sc);
    all_ok(w);
    assert_true(STAT(w, mapouts) >= 1);
    sr_del(w);
}

static void test_rail_down_at_every_operation(void **state)
{
    static const msgspec m[] = { { 0, 1, 8 }, { 0, 1, 150000 }, { 1, 0, 5000 }, { 1, 0, 64 } };
    (void)state;
    for (uint64_t op = 1; op <= 80; op++)
        for (int rail = 0; rail < 2; rail++) {
            sr_scenario sc = make(m, 4, 2, 2, 200 + op);
            add_fault(&sc, SN_FAULT_RAIL_DOWN, 0, rail, op, 0);
            sr_world *w = run(&sc);
            all_ok(w);
            sr_del(w);
        }
}

static void test_rail_readmitted_and_used_again(void **state)
{
    (void)state;
    sr_scenario sc = make(mixed, NMIXED, 2, 2, 41);
    sc.connect_at_init = 1; /* both rails UP before the fault: about readmission */
    add_fault(&sc, SN_FAULT_RAIL_DOWN, 0, 1, 10, 0);
    add_fault(&sc, SN_FAULT_RAIL_UP, 0, 1, 11, 0);
    sr_world *w = run(&sc); /* it settles: back-off, reconnect, probe */
    all_ok(w);
    assert_int_equal(w->e[0].peers[1].rail[1].fsm.cs, BFO_RAIL_ST_UP);
    assert_int_equal(w->e[1].peers[0].rail[1].fsm.cs, BFO_RAIL_ST_UP);
    assert_true(STAT(w, readmissions) >= 1);
    /* and carries traffic again (GET: the reads are the receiver's) */
    uint64_t before = w->e[1].stats.rail_bytes[1];
    bfo_request s, r;
    static uint8_t out[300000], in[300000];
    bfo_irecv(&w->e[1], &r, in, sizeof in, 0, 0, 77, w->sn.now);
    bfo_isend(&w->e[0], &s, out, sizeof out, 1, 0, 77, w->sn.now);
    sr_advance(w, 100000000);
    assert_true(bfo_test(&s) && bfo_test(&r));
    assert_int_equal(r.status, BFO_OK);
    assert_true(w->e[1].stats.rail_bytes[1] > before);
    sr_del(w);
}

/* Every rail dies: every pending request ends with the unreachable error
 * in bounded time, and a later send fails at once. */
static void test_all_rails_down_unreachable_no_hang(void **state)
{
    bfo_request late;
    uint8_t x = 1;
    (void)state;
    sr_scenario sc = make(mixed, NMIXED, 2, 2, 42);
    add_fault(&sc, SN_FAULT_RAIL_DOWN, 0, 0, 12, 0);
    add_fault(&sc, SN_FAULT_RAIL_DOWN, 0, 1, 12, 0);
    sr_world *w = run(&sc); /* the judge allows the unreachable error: no rail is left */
    int unreachable = 0;
    for (int i = 0; i < w->sc->nmsgs; i++) {
        assert_true(w->sreq[i].status == BFO_OK || w->sreq[i].status == BFO_ERR_PEER_UNREACHABLE);
        unreachable += w->sreq[i].status != BFO_OK;
    }
    assert_true(unreachable > 0);
    assert_true(w->e[0].peers[1].unreachable && w->e[1].peers[0].unreachable);
    assert_false(bfo_peer_reachable(&w->e[0], 1));
    assert_false(bfo_peer_reachable(&w->e[1], 0));
    assert_true(bfo_peer_reachable(&w->e[0], 0)); /* itself */
    assert_false(bfo_peer_reachable(&w->e[0], 2));
    assert_false(bfo_peer_reachable(&w->e[0], -1));
    assert_int_equal(bfo_isend(&w->e[0], &late, &x, 1, 1, 0, 99, w->sn.now),
                     BFO_ERR_PEER_UNREACHABLE);
    assert_true(bfo_test(&late));
    assert_int_equal(late.status, BFO_ERR_PEER_UNREACHABLE);
    sr_del(w);
}

/* A peer given up is given up for good: rails that come back later do not
 * bring it back (its sequence space is gone), new requests fail at once. */
static void test_unreachable_is_for_good_after_rails_return(void **state)
{
    bfo_request s, r;
    uint8_t x = 7, y = 0;
    (void)state;
    sr_scenario sc = make(NULL, 0, 2, 2, 48);
    sc.connect_at_init = 1; /* about rails UP from the start, not their setup */
    sr_world *w = sr_new(&sc);
    sr_advance(w, 1000000);
    bfo_request wait[2]; /* the ranks wait on each other: work, the rails are
                          * probed and found out (an idle peer is not) */
    uint8_t b[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(bfo_irecv(&w->e[i], &wait[i], &b[i], 1, 1 - i, 0, 99, w->sn.now), BFO_OK);
    sn_rail_fails(&w->sn, 0);
    sn_rail_fails(&w->sn, 1);
    sr_advance(w, 5000000000ull);
    for (int i = 0; i < 2; i++)
        assert_true(bfo_test(&wait[i]) && wait[i].status == BFO_ERR_PEER_UNREACHABLE);
    assert_true(w->e[0].peers[1].unreachable && w->e[1].peers[0].unreachable);
    w->sn.rail_down[0] = w->sn.rail_down[1] = 0; /* the cables are back */
    sr_advance(w, 3000000000ull);
    assert_int_equal(bfo_isend(&w->e[0], &s, &x, 1, 1, 0, 1, w->sn.now), BFO_ERR_PEER_UNREACHABLE);
    assert_int_equal(bfo_irecv(&w->e[1], &r, &y, 1, 0, 0, 1, w->sn.now), BFO_ERR_PEER_UNREACHABLE);
    assert_int_equal(w->e[0].peers[1].rail[0].fsm.cs == BFO_RAIL_ST_UP, 0);
    sr_go(w);
    sr_del(w);
}

/* Only one side gave the other up: the other's new message is not lost in
 * silence.  The frames are refused, its rails fail, and its request ends
 * with the unreachable error in bounded time. */
static void test_one_sided_unreachable_fails_the_other_side_too(void **state)
{
    bfo_request s;
    uint8_t x = 7;
    (void)state;
    sr_scenario sc = make(NULL, 0, 2, 2, 49);
    sr_world *w = sr_new(&sc);
    sr_advance(w, 1000000);
    give_up(&w->e[0], 1); /* rank 0 alone gives rank 1 up */
    assert_int_equal(bfo_isend(&w->e[1], &s, &x, 1, 0, 0, 1, w->sn.now), BFO_OK);
    sr_advance(w, 10000000000ull);
    assert_true(bfo_test(&s));
    assert_int_equal(s.status, BFO_ERR_PEER_UNREACHABLE);
    assert_true(w->e[1].peers[0].unreachable);
    assert_true(w->e[0].stats.unreachable_frames > 0);
    assert_int_equal(w->e[0].stats.messages_received, 0);
    sr_go(w);
    sr_del(w);
}

/* Actions take their inputs as arguments: one that needs the event's frame
 * (or the completed op's range) and is fed without it refuses, counted as
 * a protocol violation, and leaves the request as it was. */
static void test_actions_fed_without_their_input_are_refused(void **state)
{
    static uint8_t buf[64];
    sr_scenario sc = make(NULL, 0, 2, 1, 67);
    bfo_request rr, sr;
    bfo_frame put;
    (void)state;
    sr_world *w = sr_new(&sc);
    sr_advance(w, 1000000);
    bfo_engine *e = &w->e[0];
    assert_int_equal(bfo_irecv(e, &rr, buf, sizeof buf, 1, 0, 5, w->sn.now), BFO_OK);
    static const int recv_acts[] = { BFO_RECV_ACT_DELIVER_MATCH, BFO_RECV_ACT_ACCEPT_RNDV,
                                     BFO_RECV_ACT_ACCEPT_RGET, BFO_RECV_ACT_ACCEPT_FRAG,
                                     BFO_RECV_ACT_ACCEPT_FIN, BFO_RECV_ACT_ACCEPT_NOTIFY };
    for (size_t i = 0; i < sizeof recv_acts / sizeof recv_acts[0]; i++) {
        uint64_t v = e->stats.protocol_violations;
        size_t done = rr.done_bytes;
        bfo__recv_action(e, &rr, recv_acts[i], NULL);
        if (e->stats.protocol_violations != v + 1)
            fail_msg("%s without a frame: not refused", bfo_recv_action_name(recv_acts[i]));
        assert_false(rr.complete);
        assert_int_equal(rr.done_bytes, done);
    }
    memset(&put, 0, sizeof put); /* a frame of another type than the action's */
    put.type = BFO_FRAG_ACK;
    {
        const bfo__input in = { &put, 1, 0, 0, 0 };
        uint64_t v = e->stats.protocol_violations;
        bfo__recv_action(e, &rr, BFO_RECV_ACT_DELIVER_MATCH, &in);
        assert_int_equal(e->stats.protocol_violations, v + 1);
        assert_false(rr.complete);
    }
    assert_int_equal(bfo_isend(e, &sr, buf, sizeof buf, 1, 0, 5, w->sn.now), BFO_OK);
    {
        uint64_t v = e->stats.protocol_violations, posted = e->stats.ops_posted;
        bfo__send_action(e, &sr, BFO_SEND_ACT_POST_WRITE, NULL); /* no PUT */
        bfo__send_action(e, &sr, BFO_SEND_ACT_POST_FIN, NULL);   /* no range */
        assert_int_equal(e->stats.protocol_violations, v + 2);
        assert_int_equal(e->stats.ops_posted, posted);
    }
    sr_go(w);
    sr_del(w);
}

static size_t forged_match(uint8_t *buf, size_t cap, int src, uint64_t seq)
{
    bfo_hdr_match h;
    memset(&h, 0, sizeof h);
    h.type = BFO_FRAG_MATCH;
    h.src = (uint32_t)src;
    h.tag = 77;
    h.seq = seq;
    return bfo_hdr_match_encode(&h, buf, cap);
}

/* UP --LEAVE_REQUESTED--> LEFT / send_bye, part: a BYE on every rail, every
 * connection parted; bfo_engine_left once both BYEs completed; at the
 * peer, UP --BYE_RCVD--> LEFT / part on every rail (the second BYE is a
 * duplicate), and the leaver's connections closing are no failure: no
 * map-out, no reconnect, the peer not given up, 5 s later. */
static void test_leave_UP_LEAVE_REQUESTED_to_LEFT_a_bye_on_every_rail_then_no_failure(void **state)
{
    (void)state;
    sr_world *w = leave_world(2, 2, 60);
    assert_false(bfo_engine_left(&w->e[0]));
    assert_int_equal(bfo_engine_leave(&w->e[0], w->sn.now), BFO_OK);
    assert_int_equal(w->e[0].stats.byes_sent, 2);
    assert_false(bfo_engine_left(&w->e[0])); /* the BYEs are on the wire */
    for (int k = 0; k < 2; k++) {
        assert_int_equal(w->e[0].peers[1].rail[k].fsm.cs, BFO_RAIL_ST_LEFT);
        assert_int_equal(parts[0][1][k], 1);
    }
    STEP_UNTIL(w, bfo_engine_left(&w->e[0]));
    assert_true(bfo_engine_left(&w->e[0]));
    assert_true(bfo_peer_left(&w->e[1], 0));
    assert_false(bfo_peer_left(&w->e[0], 1));
    assert_int_equal(w->e[1].stats.peers_left, 1);
    for (int k = 0; k < 2; k++) {
        assert_int_equal(w->e[1].peers[0].rail[k].fsm.cs, BFO_RAIL_ST_LEFT);
        assert_int_equal(parts[1][0][k], 1);
    }
    STEP_UNTIL(w, w->e[1].stats.duplicates_dropped == 1); /* the other rail's BYE */
    assert_int_equal(w->e[1].stats.duplicates_dropped, 1);
    sn_rank_exits(&w->sn, 0);
    sr_advance(w, 5000000000ull);
    assert_int_equal(w->e[1].stats.mapouts, 0);
    assert_int_equal(w->e[1].stats.readmissions, 0);
    assert_int_equal(w->e[1].peers[0].unreachable, BFO__PARTED); /* not given up */
    for (int k = 0; k < 2; k++) {
        assert_int_equal(w->e[1].peers[0].rail[k].fsm.cs, BFO_RAIL_ST_LEFT);
        assert_int_equal(w->e[1].peers[0].rail[k].attempts, 0);
    }
    assert_int_equal(bfo_engine_leave(&w->e[0], w->sn.now), BFO_OK); /* again: nothing */
    assert_int_equal(w->e[0].stats.byes_sent, 2);
    assert_int_equal(w->e[0].ops_in_use + w->e[1].ops_in_use, 0);
    sr_del(w);
}

/* After BYE_RCVD a send to the peer, a receive naming it and one from
 * ANY_SOURCE (it was the only peer) complete at once with BFO_ERR_PEER_LEFT;
 * the peer is no longer reachable. */
static void test_BYE_RCVD_new_requests_to_the_peer_fail_at_once_PEER_LEFT(void **state)
{
    bfo_request s, r, a;
    uint8_t x = 1, y = 0;
    (void)state;
    sr_world *w = leave_world(2, 2, 61);
    leave_and_exit(w, 0);
    assert_int_equal(bfo_isend(&w->e[1], &s, &x, 1, 0, 0, 1, w->sn.now), BFO_ERR_PEER_LEFT);
    assert_true(bfo_test(&s));
    assert_int_equal(s.status, BFO_ERR_PEER_LEFT);
    assert_int_equal(bfo_irecv(&w->e[1], &r, &y, 1, 0, 0, 1, w->sn.now), BFO_ERR_PEER_LEFT);
    assert_int_equal(r.status, BFO_ERR_PEER_LEFT);
    assert_int_equal(bfo_irecv(&w->e[1], &a, &y, 1, BFO_ANY_SOURCE, 0, 1, w->sn.now), BFO_ERR_PEER_LEFT);
    assert_int_equal(a.status, BFO_ERR_PEER_LEFT);
    assert_false(bfo_peer_reachable(&w->e[1], 0));
    assert_int_equal(w->e[1].stats.left_errors, 3);
    assert_int_equal(w->e[1].stats.unreachable_errors, 0);
    sr_go(w);
    sr_del(w);
}

/* The BYE overtakes the leaver's last message on another rail (rail 0
 * holds its frames): the receive posted for it waits, still reachable;
 * the message, its sequence up to the BYE's, is taken when it comes, and
 * its send, failed at leave, completes BFO_OK since it was delivered.  A
 * message beyond the BYE's sequence is a protocol violation. */
static void test_BYE_RCVD_before_the_last_message_the_receive_still_gets_it(void **state)
{
    bfo_request s, r;
    uint8_t out[8] = "goodbye", in[8] = { 0 }, f[64];
    (void)state;
    sr_world *w = leave_world(2, 2, 62);
    assert_int_equal(bfo_irecv(&w->e[1], &r, in, sizeof in, 0, 0, 1, w->sn.now), BFO_OK);
    sn_set_path(&w->sn, 0, 1, 0, SN_PATH_HOLD);
    assert_int_equal(bfo_isend(&w->e[0], &s, out, sizeof out, 1, 0, 1, w->sn.now), BFO_OK);
    assert_int_equal(w->sn.q[w->sn.qlen - 1].rail, 0); /* the MATCH, held */
    assert_int_equal(bfo_engine_leave(&w->e[0], w->sn.now), BFO_OK);
    STEP_UNTIL(w, bfo_peer_left(&w->e[1], 0));
    assert_true(bfo_peer_left(&w->e[1], 0));
    assert_int_equal(w->e[1].peers[0].left_seq, 1);
    assert_false(bfo_test(&r));
    assert_true(bfo_peer_reachable(&w->e[1], 0)); /* its message may still come */
    size_t n = forged_match(f, sizeof f, 0, 2);
    assert_int_equal(bfo_engine_frame(&w->e[1], 0, 1, f, n, w->sn.now), BFO_ERR_PROTOCOL);
    sn_set_path(&w->sn, 0, 1, 0, SN_PATH_OPEN);
    STEP_UNTIL(w, bfo_test(&r) && bfo_test(&s) && bfo_engine_left(&w->e[0]));
    assert_true(bfo_test(&r) && bfo_test(&s));
    assert_int_equal(r.status, BFO_OK);
    assert_memory_equal(in, out, sizeof out);
    assert_int_equal(s.status, BFO_OK);
    assert_int_equal(w->e[1].peers[0].left, BFO__LEFT_DONE);
    assert_false(bfo_peer_reachable(&w->e[1], 0));
    assert_int_equal(w->e[1].stats.protocol_violations, 1);
    sn_rank_exits(&w->sn, 0);
    sr_go(w);
    sr_del(w);
}

/* BYE_RCVD with a third rank alive: a receive posted for the peer that
 * left fails (BFO_ERR_PEER_LEFT), an ANY_SOURCE one waits for the other
 * rank and gets its message, and a message of the peer that came before
 * its BYE is still received after it. */
static void test_BYE_RCVD_posted_receive_fails_any_source_waits_for_the_others(void **state)
{
    bfo_request r0, any, s0, s2, late;
    uint8_t a = 'a', b = 'b', in0 = 0, inany = 0, inlate = 0;
    (void)state;
    sr_world *w = leave_world(3, 1, 63);
    assert_int_equal(bfo_irecv(&w->e[1], &r0, &in0, 1, 0, 0, 1, w->sn.now), BFO_OK);
    assert_int_equal(bfo_irecv(&w->e[1], &any, &inany, 1, BFO_ANY_SOURCE, 0, 2, w->sn.now), BFO_OK);
    assert_int_equal(bfo_isend(&w->e[0], &s0, &a, 1, 1, 0, 3, w->sn.now), BFO_OK); /* unexpected */
    STEP_UNTIL(w, bfo_test(&s0));
    assert_int_equal(s0.status, BFO_OK);
    leave_and_exit(w, 0);
    assert_true(bfo_test(&r0));
    assert_int_equal(r0.status, BFO_ERR_PEER_LEFT);
    assert_false(bfo_test(&any)); /* rank 2 may still send */
    assert_int_equal(bfo_irecv(&w->e[1], &late, &inlate, 1, 0, 0, 3, w->sn.now), BFO_OK);
    assert_true(bfo_test(&late));
    assert_int_equal(late.status, BFO_OK);
    assert_int_equal(inlate, 'a');
    assert_int_equal(bfo_isend(&w->e[2], &s2, &b, 1, 1, 0, 2, w->sn.now), BFO_OK);
    STEP_UNTIL(w, bfo_test(&any) && bfo_test(&s2));
    assert_int_equal(any.status, BFO_OK);
    assert_int_equal(any.source, 2);
    sr_advance(w, 3000000000ull);
    for (int i = 1; i < 3; i++) {
        assert_int_equal(w->e[i].stats.mapouts, 0);
        assert_true(bfo_peer_left(&w->e[i], 0));
        assert_true(bfo_peer_reachable(&w->e[i], 3 - i)); /* 1 and 2 still talk */
    }
    sr_go(w);
    sr_del(w);
}

/* A BYE lost (one rail, BYE#1 lost): the peer takes the leaver's closing
 * as a failure, as before goodbyes existed: mapped out, the peer given up
 * within unreachable_grace; nothing hangs. */
static void test_BYE_FAILED_the_peer_falls_back_to_a_failure_bounded(void **state)
{
    (void)state;
    sr_scenario sc = make(NULL, 0, 2, 1, 64);
    add_fault(&sc, SN_FAULT_TYPE, BFO_FRAG_BYE, 0, 1, SN_LOSE);
    sc.connect_at_init = 1; /* about rails UP from the start, not their setup */
    sr_world *w = sr_new(&sc);
    sr_advance(w, 1000000);
    leave_and_exit(w, 0); /* left: its BYE failed */
    assert_false(bfo_peer_left(&w->e[1], 0));
    sr_advance(w, 5000000000ull);
    assert_true(w->e[1].stats.mapouts >= 1);
    assert_int_equal(w->e[1].peers[0].unreachable, BFO__GIVEN_UP);
    sr_go(w);
    assert_int_equal(w->e[0].ops_in_use + w->e[1].ops_in_use, 0);
    sr_del(w);
}

/* bfo_engine_leave with requests pending: the receives fail at once with
 * BFO_ERR_LEFT, a rendezvous waiting for its ACK too (its RNDV is
 * delivered); an unexpected message is dropped; new requests (to a peer,
 * to itself) fail at once.  At the peer, the RNDV that waited unexpected
 * fails the receive that takes it (its data never comes). */
static void test_leave_fails_pending_requests_LEFT_and_new_ones_at_once(void **state)
{
    static uint8_t big[200000], got[200000];
    bfo_request r1, rany, sbig, s9, n1, n2, n3, rbig;
    uint8_t x = 9, y = 0;
    (void)state;
    sr_world *w = leave_world(2, 2, 65);
    assert_int_equal(bfo_irecv(&w->e[0], &r1, &y, 1, 1, 0, 1, w->sn.now), BFO_OK);
    assert_int_equal(bfo_irecv(&w->e[0], &rany, &y, 1, BFO_ANY_SOURCE, 0, 2, w->sn.now), BFO_OK);
    assert_int_equal(bfo_isend(&w->e[0], &sbig, big, sizeof big, 1, 0, 3, w->sn.now), BFO_OK);
    assert_int_equal(bfo_isend(&w->e[1], &s9, &x, 1, 0, 0, 9, w->sn.now), BFO_OK);
    STEP_UNTIL(w, bfo_test(&s9) && w->e[1].uxm_in_use == 1 && sbig.outstanding == 0);
    assert_int_equal(w->e[0].uxm_in_use, 1); /* tag 9, never received */
    assert_int_equal(bfo_engine_leave(&w->e[0], w->sn.now), BFO_OK);
    assert_true(bfo_test(&r1) && bfo_test(&rany) && bfo_test(&sbig));
    assert_int_equal(r1.status, BFO_ERR_LEFT);
    assert_int_equal(rany.status, BFO_ERR_LEFT);
    assert_int_equal(sbig.status, BFO_ERR_LEFT);
    assert_int_equal(w->e[0].uxm_in_use, 0);
    assert_int_equal(w->e[0].posted_count, 0);
    assert_int_equal(bfo_isend(&w->e[0], &n1, &x, 1, 1, 0, 4, w->sn.now), BFO_ERR_LEFT);
    assert_int_equal(bfo_irecv(&w->e[0], &n2, &y, 1, BFO_ANY_SOURCE, 0, 4, w->sn.now), BFO_ERR_LEFT);
    assert_int_equal(bfo_isend(&w->e[0], &n3, &x, 1, 0, 0, 4, w->sn.now), BFO_ERR_LEFT); /* itself */
    assert_int_equal(w->e[0].stats.left_errors, 6);
    assert_false(bfo_peer_reachable(&w->e[0], 1));
    assert_false(bfo_peer_reachable(&w->e[0], 0));
    STEP_UNTIL(w, bfo_engine_left(&w->e[0]));
    sn_rank_exits(&w->sn, 0);
    assert_true(bfo_peer_left(&w->e[1], 0));
    assert_int_equal(bfo_irecv(&w->e[1], &rbig, got, sizeof got, 0, 0, 3, w->sn.now), BFO_OK);
    STEP_UNTIL(w, bfo_test(&rbig));
    assert_true(bfo_test(&rbig));
    assert_int_equal(rbig.status, BFO_ERR_PEER_LEFT);
    sr_go(w);
    assert_int_equal(w->e[0].ops_in_use + w->e[1].ops_in_use + w->e[1].slots_in_use, 0);
    assert_int_equal(w->e[0].slots_in_use, 0);
    sr_del(w);
}

/* Once this side left, a frame of a request is stale (acknowledged,
 * dropped), LEFT --PROBE_RCVD--> LEFT / send_probeack answers a PROBE,
 * LEFT --CONNECTED--> LEFT probes nothing, and no heartbeat goes out. */
static void test_LEFT_frames_after_leave_stale_a_probe_answered_nothing_probed(void **state)
{
    uint8_t f[64];
    bfo_hdr_railctl pr;
    (void)state;
    sr_world *w = leave_world(2, 1, 66);
    assert_int_equal(bfo_engine_leave(&w->e[0], w->sn.now), BFO_OK);
    size_t n = forged_match(f, sizeof f, 1, w->e[0].peers[1].recv_seq);
    assert_int_equal(bfo_engine_frame(&w->e[0], 1, 0, f, n, w->sn.now), BFO_ERR_STALE);
    assert_int_equal(w->e[0].uxm_in_use, 0);
    memset(&pr, 0, sizeof pr);
    pr.type = BFO_FRAG_PROBE;
    pr.nonce = 12345;
    n = bfo_hdr_railctl_encode(&pr, f, sizeof f);
    const uint64_t posted = w->e[0].stats.ops_posted;
    assert_int_equal(bfo_engine_frame(&w->e[0], 1, 0, f, n, w->sn.now), BFO_OK);
    assert_int_equal(w->e[0].stats.ops_posted, posted + 1); /* its PROBEACK */
    assert_int_equal(w->sn.q[w->sn.qlen - 1].type, BFO_FRAG_PROBEACK);
    bfo_engine_rail_event(&w->e[0], 1, 0, BFO_EV_CONNECTED, w->sn.now);
    assert_int_equal(w->e[0].peers[1].rail[0].fsm.cs, BFO_RAIL_ST_LEFT);
    assert_int_equal(w->e[0].stats.ops_posted, posted + 1);
    STEP_UNTIL(w, bfo_engine_left(&w->e[0]));
    const uint64_t before = w->e[0].stats.ops_posted;
    for (int k = 0; k < 50; k++) /* 1 s of its timers: nothing goes out */
        bfo_engine_progress(&w->e[0], w->sn.now += 20000000);
    assert_int_equal(w->e[0].stats.ops_posted, before);
    sn_rank_exits(&w->sn, 0);
    sr_go(w);
    sr_del(w);
}

/* Up at the handshake (spec/rail.rl): the test plays the transport.  It
 * logs every frame each rank posts (its type, in order) and takes the
 * engine's connects itself (counted, never made by the simulated wire), so
 * the only reports are the ones the test gives. */
#define HS_LOG 64
static int hs_types[SN_TEST_RANKS][HS_LOG], hs_n[SN_TEST_RANKS], hs_connects[SN_TEST_RANKS];
static int hs_post_send(void *ctx, int peer, int rail, const bfo_iov *iov, int iovcnt, uint64_t token)
{
    const int r = ((sn_endpoint *)ctx)->rank;
    if (hs_n[r] < HS_LOG)
        hs_types[r][hs_n[r]++] = ((const uint8_t *)iov[0].base)[0];
    return sn_post_send(ctx, peer, rail, iov, iovcnt, token);
}
static int hs_connect(void *ctx, int peer, int rail)
{
    (void)peer, (void)rail;
    hs_connects[((sn_endpoint *)ctx)->rank]++;
    return 0;
}
static void hs_attach(sr_world *w, void *arg)
{
    (void)arg;
    memset(hs_n, 0, sizeof hs_n);
    memset(hs_connects, 0, sizeof hs_connects);
    for (int i = 0; i < w->sn.n; i++) {
        w->sn.be[i].post_send = hs_post_send;
        w->sn.be[i].post_send_data = NULL; /* every frame through post_send: logged */
        w->sn.be[i].connect = hs_connect;
    }
}
/* The PROBEs rank posted before its first MATCH (-1: no MATCH). */
static int hs_probes_before_data(int rank)
{
    int k = 0;
    for (int i = 0; i < hs_n[rank]; i++) {
        if (hs_types[rank][i] == BFO_FRAG_MATCH)
            return k;
        k += hs_types[rank][i] == BFO_FRAG_PROBE;
    }
    return -1;
}
static int hs_count(int rank, int type)
{
    int k = 0;
    for (int i = 0; i < hs_n[rank]; i++)
        k += hs_types[rank][i] == type;
    return k;
}

/* Rank 0 sends to rank 1 over DORMANT rails; the transport reports the
 * connection as ev on both sides (the dialer first, as TCP and shm do:
 * its CONFIRM goes before the acceptor's report).  Returns the world with
 * the send and the receive posted. */
static sr_world *hs_world(int ev, bfo_request *s, bfo_request *r, uint8_t *out, uint8_t *in)
{
    sr_scenario sc = make(NULL, 0, 2, 1, 71);
    sc.attach = hs_attach;
    sr_world *w = sr_new(&sc);
    assert_int_equal(w->e[0].peers[1].rail[0].fsm.cs, BFO_RAIL_ST_DORMANT);
    assert_int_equal(bfo_irecv(&w->e[1], r, in, 8, 0, 0, 5, w->sn.now), BFO_OK);
    assert_int_equal(bfo_isend(&w->e[0], s, out, 8, 1, 0, 5, w->sn.now), BFO_OK);
    assert_int_equal(hs_connects[0], 1); /* one rail first: the dial */
    assert_int_equal(w->e[0].peers[1].rail[0].fsm.cs, BFO_RAIL_ST_CONNECTING);
    assert_int_equal(hs_n[0], 0); /* nothing goes before the connection */
    bfo_engine_rail_event(&w->e[0], 1, 0, ev, w->sn.now);
    return w;
}

/* CONNECTING --CONNECTED_PROVEN--> UP / admit, and DORMANT (the acceptor)
 * too: a connection whose handshake proved the peer both ways is admitted
 * at once; the message that waited for it is the first frame either side
 * sends, no PROBE before it (before: PROBE, PROBEACK, then the data, a
 * round trip later). */
static void test_CONNECTED_PROVEN_admits_at_once_no_probe_before_data(void **state)
{
    bfo_request s, r;
    uint8_t out[8] = "proven", in[8] = { 0 };
    (void)state;
    sr_world *w = hs_world(BFO_EV_CONNECTED_PROVEN, &s, &r, out, in);
    assert_int_equal(w->e[0].peers[1].rail[0].fsm.cs, BFO_RAIL_ST_UP);
    assert_int_equal(hs_probes_before_data(0), 0); /* the data at the report (after the admission's CREDIT) */
    bfo_engine_rail_event(&w->e[1], 0, 0, BFO_EV_CONNECTED_PROVEN, w->sn.now);
    assert_int_equal(w->e[1].peers[0].rail[0].fsm.cs, BFO_RAIL_ST_UP);
    assert_int_equal(w->e[0].peers[1].rail[0].epoch, w->e[1].peers[0].rail[0].epoch); /* in step */
    STEP_UNTIL(w, bfo_test(&s) && bfo_test(&r));
    assert_true(bfo_test(&s) && bfo_test(&r));
    assert_int_equal(r.status, BFO_OK);
    assert_memory_equal(in, out, 8);
    assert_int_equal(hs_count(0, BFO_FRAG_PROBE) + hs_count(1, BFO_FRAG_PROBE), 0);
    assert_int_equal(hs_connects[1], 0); /* the acceptor never dialed */
    sr_del(w);
}

/* The same over a connection that is not proven (verbs; TCP and shm
 * without a bfo_auth): CONNECTED probes first, the data waits for the
 * PROBEACK.  What the test above tells apart. */
static void test_CONNECTED_unproven_probes_before_data(void **state)
{
    bfo_request s, r;
    uint8_t out[8] = "probed", in[8] = { 0 };
    (void)state;
    sr_world *w = hs_world(BFO_EV_CONNECTED, &s, &r, out, in);
    assert_int_equal(w->e[0].peers[1].rail[0].fsm.cs, BFO_RAIL_ST_PROBING);
    assert_int_equal(hs_n[0], 1);
    assert_int_equal(hs_types[0][0], BFO_FRAG_PROBE);
    bfo_engine_rail_event(&w->e[1], 0, 0, BFO_EV_CONNECTED, w->sn.now);
    STEP_UNTIL(w, bfo_test(&s) && bfo_test(&r));
    assert_int_equal(r.status, BFO_OK);
    assert_int_equal(hs_count(0, BFO_FRAG_MATCH), 1);
    assert_int_equal(hs_probes_before_data(0), 1);
    sr_del(w);
}

/* The dialer's data may reach the acceptor's engine before the
 * acceptor's transport reports the connection (bfo_net's progress thread
 * defers the report, not rail control): the frame is taken on the DORMANT
 * rail (bfo_engine_frame takes a message whatever the rail's state), the
 * receive completes, and the late CONNECTED_PROVEN admits the rail then,
 * with no probe and no dial of the acceptor's own. */
static void test_CONNECTED_PROVEN_data_before_the_report_is_taken(void **state)
{
    bfo_request s, r;
    uint8_t out[8] = "early", in[8] = { 0 };
    (void)state;
    sr_world *w = hs_world(BFO_EV_CONNECTED_PROVEN, &s, &r, out, in);
    STEP_UNTIL(w, bfo_test(&r));
    assert_true(bfo_test(&r));
    assert_int_equal(r.status, BFO_OK);
    assert_memory_equal(in, out, 8);
    assert_int_equal(w->e[1].peers[0].rail[0].fsm.cs, BFO_RAIL_ST_DORMANT);
    bfo_engine_rail_event(&w->e[1], 0, 0, BFO_EV_CONNECTED_PROVEN, w->sn.now);
    assert_int_equal(w->e[1].peers[0].rail[0].fsm.cs, BFO_RAIL_ST_UP);
    STEP_UNTIL(w, bfo_test(&s));
    assert_int_equal(s.status, BFO_OK);
    assert_int_equal(hs_count(0, BFO_FRAG_PROBE) + hs_count(1, BFO_FRAG_PROBE), 0);
    assert_int_equal(hs_connects[1], 0);
    assert_int_equal(w->e[0].stats.protocol_violations + w->e[1].stats.protocol_violations, 0);
    sr_del(w);
}

/* A peer's BYE names more messages than ever come (a forged sequence, or
 * messages lost with a sender that gave up): the receive posted for it
 * waits, then fails with BFO_ERR_PEER_LEFT unreachable_grace after the
 * BYE (the peer is closed out), not before. */
static void test_BYE_RCVD_messages_owed_never_come_closed_out_after_the_grace(void **state)
{
    bfo_request r;
    uint8_t y = 0, f[64];
    bfo_hdr_bye b;
    (void)state;
    sr_world *w = leave_world(2, 1, 67);
    assert_int_equal(bfo_irecv(&w->e[1], &r, &y, 1, 0, 0, 1, w->sn.now), BFO_OK);
    memset(&b, 0, sizeof b);
    b.type = BFO_FRAG_BYE;
    b.seq = 3; /* three messages, none sent */
    size_t n = bfo_hdr_bye_encode(&b, f, sizeof f);
    assert_int_equal(bfo_engine_frame(&w->e[1], 0, 0, f, n, w->sn.now), BFO_OK);
    assert_true(bfo_peer_left(&w->e[1], 0));
    assert_int_equal(w->e[1].peers[0].rail[0].fsm.cs, BFO_RAIL_ST_LEFT);
    sr_advance(w, w->e[1].cfg.unreachable_grace_ns - 100000000ull);
    assert_false(bfo_test(&r));
    sr_advance(w, 200000000ull);
    assert_true(bfo_test(&r));
    assert_int_equal(r.status, BFO_ERR_PEER_LEFT);
    assert_int_equal(w->e[1].peers[0].left, BFO__LEFT_DONE);
    /* a BYE from a rank that never sent anything (seq 0) closes at once */
    sr_world *v = leave_world(3, 1, 68);
    assert_int_equal(bfo_irecv(&v->e[1], &r, &y, 1, 2, 0, 1, v->sn.now), BFO_OK);
    b.seq = 0;
    n = bfo_hdr_bye_encode(&b, f, sizeof f);
    assert_int_equal(bfo_engine_frame(&v->e[1], 2, 0, f, n, v->sn.now), BFO_OK);
    assert_true(bfo_test(&r));
    assert_int_equal(r.status, BFO_ERR_PEER_LEFT);
    sr_del(w);
    sr_del(v);
}

/* The peer machine follows the rails: DOWN at start, REACHABLE once a rail
 * is admitted, DOWN when the last goes, UNREACHABLE after the grace; this
 * rank's own entry is SELF. */
static void test_peer_DOWN_RAIL_ADMITTED_REACHABLE_LAST_RAIL_LOST_DOWN_GRACE_EXPIRED_UNREACHABLE(void **state)
{
    (void)state;
    sr_scenario sc = make(NULL, 0, 2, 2, 71);
    sc.connect_at_init = 1; /* about rails UP from the start, not their setup */
    sr_world *w = sr_new(&sc);
    assert_int_equal(bfo_peer_state(&w->e[0], 1), BFO_PEER_ST_DOWN);
    assert_int_equal(bfo_peer_state(&w->e[0], 0), BFO_PEER_ST_SELF);
    assert_int_equal(bfo_peer_state(&w->e[0], 2), 0);
    assert_int_equal(bfo_peer_state(&w->e[0], -1), 0);
    sr_advance(w, 1000000);
    assert_int_equal(bfo_peer_state(&w->e[0], 1), BFO_PEER_ST_REACHABLE);
    bfo_request wait[2]; /* the ranks wait on each other: work (an idle peer is not probed) */
    uint8_t b[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(bfo_irecv(&w->e[i], &wait[i], &b[i], 1, 1 - i, 0, 99, w->sn.now), BFO_OK);
    sn_rail_fails(&w->sn, 0);
    sn_rail_fails(&w->sn, 1);
    STEP_UNTIL(w, bfo_peer_state(&w->e[0], 1) != BFO_PEER_ST_REACHABLE);
    assert_int_equal(bfo_peer_state(&w->e[0], 1), BFO_PEER_ST_DOWN);
    assert_true(bfo_peer_reachable(&w->e[0], 1)); /* the grace runs */
    sr_advance(w, w->e[0].cfg.unreachable_grace_ns + 500000000ull);
    assert_int_equal(bfo_peer_state(&w->e[0], 1), BFO_PEER_ST_UNREACHABLE);
    assert_int_equal(bfo_peer_state(&w->e[1], 0), BFO_PEER_ST_UNREACHABLE);
    assert_int_equal(STAT(w, protocol_violations), 0);
    sr_del(w);
}

/* ------------------------------------ connections on first use (issue 37) */

static int connects[SN_TEST_RANKS][SN_TEST_RANKS][BFO_MAX_RAILS]; /* bfo_backend.connect calls */
static int count_connect(void *ctx, int peer, int rail)
{
    connects[((sn_endpoint *)ctx)->rank][peer][rail]++;
    return sn_connect(ctx, peer, rail);
}
static void attach_connect(sr_world *w, void *arg)
{
    (void)arg;
    memset(connects, 0, sizeof connects);
    for (int i = 0; i < w->sn.n; i++)
        w->sn.be[i].connect = count_connect;
}
static int connects_of(int rank, int peer)
{
    int n = 0;
    for (int k = 0; k < BFO_MAX_RAILS; k++)
        n += connects[rank][peer][k];
    return n;
}

/* A scenario of ranks on rails (seed: its own) whose connects are counted
 * (connects[][][]); the caller may change it before sr_new. */
static sr_scenario counted(int ranks, int rails, uint64_t seed)
{
    sr_scenario sc = make(NULL, 0, ranks, rails, seed);
    sc.attach = attach_connect;
    return sc;
}

/* The same, made: the world. */
static sr_world *counted_world(int ranks, int rails, uint64_t seed)
{
    sr_scenario sc = counted(ranks, rails, seed);
    return sr_new(&sc);
}

/* Rank 0 sends rank 1 the byte *x with tag, into *y; the world steps
 * until both ends complete (or STEP_UNTIL's limit: the caller checks). */
static void byte_sent(sr_world *w, int tag, uint8_t *x, uint8_t *y, bfo_request *s, bfo_request *r)
{
    assert_int_equal(bfo_irecv(&w->e[1], r, y, 1, 0, 0, tag, w->sn.now), BFO_OK);
    assert_int_equal(bfo_isend(&w->e[0], s, x, 1, 1, 0, tag, w->sn.now), BFO_OK);
    STEP_UNTIL(w, bfo_test(s) && bfo_test(r));
}

/* The pair talks over rail 0 alone: the first message (tag 1, the byte
 * 7), rank 0 to rank 1, arrives over it; rail 1 stays DORMANT. */
static void talks_over_rail_0_alone(sr_world *w)
{
    bfo_request s, r;
    uint8_t x = 7, y = 0;
    byte_sent(w, 1, &x, &y, &s, &r);
    assert_int_equal(y, 7);
    assert_int_equal(bfo_rail_state(&w->e[0], 1, 0), BFO_RAIL_ST_UP);
    assert_int_equal(bfo_rail_state(&w->e[0], 1, 1), BFO_RAIL_ST_DORMANT);
}

/* Init connects nothing: every rail DORMANT, no connect call, no frame.  A
 * peer never needed is never given up (no grace runs for it, however long
 * the job lasts), and nothing is probed. */
static void test_init_connects_nothing_a_peer_never_needed_is_never_unreachable(void **state)
{
    (void)state;
    sr_world *w = counted_world(3, 2, 81);
    sr_advance(w, 3 * w->e[0].cfg.unreachable_grace_ns);
    for (int i = 0; i < 3; i++)
        for (int p = 0; p < 3; p++) {
            if (p == i)
                continue;
            assert_int_equal(connects_of(i, p), 0);
            assert_int_equal(bfo_peer_state(&w->e[i], p), BFO_PEER_ST_DOWN);
            assert_true(bfo_peer_reachable(&w->e[i], p));
            for (int k = 0; k < 2; k++)
                assert_int_equal(bfo_rail_state(&w->e[i], p, k), BFO_RAIL_ST_DORMANT);
        }
    assert_int_equal(STAT(w, ops_posted), 0);
    assert_int_equal(STAT(w, protocol_violations), 0);
    sr_del(w);
}

/* The first small send connects one rail of that peer, and of no other
 * peer (one rail first, docs/engine-design.md): rank 0 calls connect for
 * (1, 0) once, the rails tie on bandwidth so the lowest-numbered is
 * preferred; rank 1, dialed, admits it by the incoming CONNECTED (DORMANT
 * --CONNECTED--> PROBING) without a connect of its own; rail 1 stays
 * DORMANT on both sides, and the rails to rank 2 too. */
static void test_first_small_send_connects_one_rail_of_that_peer_only(void **state)
{
    bfo_request s, r;
    uint8_t x = 7, y = 0;
    (void)state;
    sr_world *w = counted_world(3, 2, 82);
    sr_advance(w, 10000000);
    assert_int_equal(bfo_irecv(&w->e[1], &r, &y, 1, 0, 0, 1, w->sn.now), BFO_OK);
    assert_int_equal(bfo_isend(&w->e[0], &s, &x, 1, 1, 0, 1, w->sn.now), BFO_OK);
    /* asked at once, the frame waits for it */
    assert_int_equal(bfo_rail_state(&w->e[0], 1, 0), BFO_RAIL_ST_CONNECTING);
    assert_int_equal(bfo_rail_state(&w->e[0], 1, 1), BFO_RAIL_ST_DORMANT);
    assert_int_equal(bfo_peer_waiting_count(&w->e[0], 1), 1);
    sr_advance(w, 10000000);
    assert_true(bfo_test(&s) && bfo_test(&r));
    assert_int_equal(s.status, BFO_OK);
    assert_int_equal(y, 7);
    assert_int_equal(connects[0][1][0], 1);
    assert_int_equal(connects[0][1][1], 0);
    assert_int_equal(bfo_rail_state(&w->e[0], 1, 0), BFO_RAIL_ST_UP);
    assert_int_equal(bfo_rail_state(&w->e[1], 0, 0), BFO_RAIL_ST_UP); /* admitted */
    assert_int_equal(bfo_rail_state(&w->e[0], 1, 1), BFO_RAIL_ST_DORMANT);
    assert_int_equal(bfo_rail_state(&w->e[1], 0, 1), BFO_RAIL_ST_DORMANT);
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < 2; i++)
            assert_int_equal(bfo_rail_state(&w->e[i], 2, k), BFO_RAIL_ST_DORMANT);
        assert_int_equal(bfo_rail_state(&w->e[2], 0, k), BFO_RAIL_ST_DORMANT);
    }
    assert_int_equal(connects_of(1, 0), 0); /* dialed, never dialing */
    assert_int_equal(connects_of(0, 2) + connects_of(1, 2) + connects_of(2, 0) + connects_of(2, 1), 0);
    assert_int_equal(STAT(w, protocol_violations), 0);
    sr_del(w);
}

/* The preferred rail is the one of the highest bandwidth
 * (bfo_backend.rail_bandwidth), not the lowest-numbered: rail 1 rated ten
 * times rail 0 is the one connected. */
static void test_first_send_prefers_the_rail_of_the_highest_bandwidth(void **state)
{
    bfo_request s;
    uint8_t x = 7;
    (void)state;
    sr_scenario sc = counted(2, 2, 85);
    sc.rail_bw[0] = 100;
    sc.rail_bw[1] = 1000;
    sr_world *w = sr_new(&sc);
    assert_int_equal(bfo_isend(&w->e[0], &s, &x, 1, 1, 0, 1, w->sn.now), BFO_OK);
    assert_int_equal(bfo_rail_state(&w->e[0], 1, 1), BFO_RAIL_ST_CONNECTING);
    assert_int_equal(bfo_rail_state(&w->e[0], 1, 0), BFO_RAIL_ST_DORMANT);
    assert_int_equal(connects[0][1][0], 0);
    sr_del(w);
}

/* The transport says the preferred rail does not reach the peer
 * (RAIL_ABSENT after its connect: a shared-memory rail and a peer on
 * another host): the next rail connects at once, and only it. */
static void test_RAIL_ABSENT_of_the_first_rail_connects_the_next(void **state)
{
    bfo_request s;
    uint8_t x = 7;
    (void)state;
    sr_world *w = counted_world(2, 3, 86);
    bfo_engine *e = &w->e[0];
    assert_int_equal(bfo_isend(e, &s, &x, 1, 1, 0, 1, w->sn.now), BFO_OK);
    assert_int_equal(bfo_rail_state(e, 1, 0), BFO_RAIL_ST_CONNECTING);
    bfo_engine_rail_event(e, 1, 0, BFO_EV_RAIL_ABSENT, w->sn.now);
    assert_int_equal(bfo_rail_state(e, 1, 0), BFO_RAIL_ST_ABSENT);
    assert_int_equal(bfo_rail_state(e, 1, 1), BFO_RAIL_ST_CONNECTING);
    assert_int_equal(bfo_rail_state(e, 1, 2), BFO_RAIL_ST_DORMANT);
    assert_int_equal(connects[0][1][1], 1);
    assert_int_equal(connects[0][1][2], 0);
    sr_del(w);
}

/* Striping pays: a message whose data goes in pieces of BFO__STRIPE_MIN
 * or more (a rendezvous) connects the rails still DORMANT; the message
 * arrives whole, and both rails of the pair end UP. */
static void test_large_send_connects_the_rest_of_the_rails(void **state)
{
    bfo_request s, r;
    static uint8_t out[300000], in[300000];
    (void)state;
    for (size_t i = 0; i < sizeof out; i++)
        out[i] = (uint8_t)(i * 7 + 1);
    memset(in, 0, sizeof in);
    sr_world *w = counted_world(2, 2, 87);
    assert_int_equal(bfo_irecv(&w->e[1], &r, in, sizeof in, 0, 0, 5, w->sn.now), BFO_OK);
    assert_int_equal(bfo_isend(&w->e[0], &s, out, sizeof out, 1, 0, 5, w->sn.now), BFO_OK);
    assert_int_equal(bfo_rail_state(&w->e[0], 1, 1), BFO_RAIL_ST_DORMANT); /* the RNDV: one rail */
    STEP_UNTIL(w, bfo_test(&s) && bfo_test(&r));
    assert_true(bfo_test(&s) && bfo_test(&r));
    assert_int_equal(s.status, BFO_OK);
    assert_int_equal(r.status, BFO_OK);
    assert_memory_equal(in, out, sizeof out);
    assert_int_equal(connects_of(0, 1) + connects_of(1, 0), 2);
    sr_advance(w, 10000000);
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 2; k++)
            assert_int_equal(bfo_rail_state(&w->e[i], 1 - i, k), BFO_RAIL_ST_UP);
    assert_int_equal(STAT(w, protocol_violations), 0);
    sr_del(w);
}

/* The failover tests' second message (tag 2, the byte 9), rank 0 to rank
 * 1, once the rail it went on is silent: it arrives over the other. */
static void second_message_arrives(sr_world *w)
{
    bfo_request s2, r2;
    uint8_t x2 = 9, y2 = 0;
    byte_sent(w, 2, &x2, &y2, &s2, &r2);
    assert_true(bfo_test(&s2) && bfo_test(&r2));
    assert_int_equal(s2.status, BFO_OK);
    assert_int_equal(y2, 9);
}

/* Failover with the rest DORMANT: the first rail silent both ways from the
 * start (a blackhole: its connection made, its probes lost), a small send
 * still arrives, over rail 1, which connects once rail 0 fails its probe.
 * Then rail 1 goes silent while UP and rail 0 heals: a second message
 * arrives too, over rail 0's reconnect. */
static void test_first_rail_blackholed_the_rest_connect_and_the_message_arrives(void **state)
{
    bfo_request s, r;
    uint8_t x = 7, y = 0;
    (void)state;
    sr_world *w = counted_world(2, 2, 88);
    sn_set_path(&w->sn, 0, 1, 0, SN_PATH_SILENT);
    sn_set_path(&w->sn, 1, 0, 0, SN_PATH_SILENT);
    assert_int_equal(bfo_irecv(&w->e[1], &r, &y, 1, 0, 0, 1, w->sn.now), BFO_OK);
    assert_int_equal(bfo_isend(&w->e[0], &s, &x, 1, 1, 0, 1, w->sn.now), BFO_OK);
    assert_int_equal(bfo_rail_state(&w->e[0], 1, 1), BFO_RAIL_ST_DORMANT);
    STEP_UNTIL(w, bfo_test(&s) && bfo_test(&r));
    assert_true(bfo_test(&s) && bfo_test(&r));
    assert_int_equal(s.status, BFO_OK);
    assert_int_equal(y, 7);
    assert_int_equal(connects[0][1][1], 1);
    assert_int_equal(bfo_rail_state(&w->e[0], 1, 1), BFO_RAIL_ST_UP);
    assert_true(bfo_rail_state(&w->e[0], 1, 0) != BFO_RAIL_ST_UP);
    /* rail 1 now dies while UP, rail 0 heals: the next message waits
     * for rail 0's reconnect and arrives */
    sn_set_path(&w->sn, 0, 1, 0, SN_PATH_OPEN);
    sn_set_path(&w->sn, 1, 0, 0, SN_PATH_OPEN);
    sn_set_path(&w->sn, 0, 1, 1, SN_PATH_SILENT);
    sn_set_path(&w->sn, 1, 0, 1, SN_PATH_SILENT);
    second_message_arrives(w);
    assert_int_equal(STAT(w, protocol_violations), 0);
    sr_del(w);
}

/* Failover from an UP first rail: the pair talks over rail 0 alone (rail
 * 1 DORMANT); rail 0 then drops everything while a message is on its
 * way: it is mapped out, rail 1 connects, and the message arrives over
 * it. */
static void test_first_rail_dies_while_UP_the_rest_connect_and_the_message_arrives(void **state)
{
    (void)state;
    sr_world *w = counted_world(2, 2, 89);
    talks_over_rail_0_alone(w);
    sn_set_path(&w->sn, 0, 1, 0, SN_PATH_SILENT);
    sn_set_path(&w->sn, 1, 0, 0, SN_PATH_SILENT);
    second_message_arrives(w);
    assert_int_equal(bfo_rail_state(&w->e[0], 1, 1), BFO_RAIL_ST_UP);
    assert_int_equal(STAT(w, protocol_violations), 0);
    sr_del(w);
}

/* A busy peer is not a suspected rail: the pair talks over rail 0 alone
 * (rail 1 DORMANT); rank 1 then reads nothing for 2 s (both ways of both
 * rails held: computing, or oversubscribed and not scheduled) while rank
 * 0 has a message for it, and each side's transport hears the other's
 * host on rail 0 (bfo_engine_host_heard: a TCP peer's kernel, a shm
 * peer's pidfd).  Rank 0's heartbeat probe goes unanswered, and rail 1
 * is not connected for it (before: suspected at half the probe timeout,
 * rail 1 dialed, though the process would read it no sooner); rail 0 is
 * not mapped out, and the message arrives once rank 1 reads again. */
static void test_a_busy_peer_is_not_suspected_its_other_rails_stay_DORMANT(void **state)
{
    bfo_request s2, r2;
    uint8_t x2 = 9, y2 = 0;
    (void)state;
    sr_world *w = counted_world(2, 2, 90);
    talks_over_rail_0_alone(w);
    for (int k = 0; k < 2; k++) {
        sn_set_path(&w->sn, 0, 1, k, SN_PATH_HOLD);
        sn_set_path(&w->sn, 1, 0, k, SN_PATH_HOLD);
    }
    assert_int_equal(bfo_irecv(&w->e[1], &r2, &y2, 1, 0, 0, 2, w->sn.now), BFO_OK);
    assert_int_equal(bfo_isend(&w->e[0], &s2, &x2, 1, 1, 0, 2, w->sn.now), BFO_OK);
    int probed = 0;
    for (int ms = 0; ms < 2000; ms++) {
        bfo_engine_host_heard(&w->e[0], 1, 0, w->sn.now);
        bfo_engine_host_heard(&w->e[1], 0, 0, w->sn.now); /* (rank 1's engine runs in the sim) */
        sr_advance(w, 1000000);
        probed |= w->e[0].peers[1].rail[0].det.probe_out;
    }
    assert_true(probed); /* the heartbeat went out, unanswered */
    assert_int_equal(connects[0][1][1] + connects[1][0][1], 0);
    assert_int_equal(bfo_rail_state(&w->e[0], 1, 1), BFO_RAIL_ST_DORMANT);
    assert_int_equal(bfo_rail_state(&w->e[1], 0, 1), BFO_RAIL_ST_DORMANT);
    assert_int_equal(bfo_rail_state(&w->e[0], 1, 0), BFO_RAIL_ST_UP);
    for (int k = 0; k < 2; k++) {
        sn_set_path(&w->sn, 0, 1, k, SN_PATH_OPEN);
        sn_set_path(&w->sn, 1, 0, k, SN_PATH_OPEN);
    }
    STEP_UNTIL(w, bfo_test(&s2) && bfo_test(&r2));
    assert_int_equal(s2.status, BFO_OK);
    assert_int_equal(y2, 9);
    assert_int_equal(STAT(w, protocol_violations), 0);
    sr_del(w);
}

/* bfo_config.connect_at_init: every rail of every peer asked at init, as
 * before issue 37; the grace runs from init. */
static void test_connect_at_init_connects_every_rail_of_every_peer(void **state)
{
    (void)state;
    sr_scenario sc = counted(3, 2, 83);
    sc.connect_at_init = 1;
    sr_world *w = sr_new(&sc);
    for (int i = 0; i < 3; i++)
        for (int p = 0; p < 3; p++)
            for (int k = 0; p != i && k < 2; k++) {
                assert_int_equal(connects[i][p][k], 1);
                assert_int_equal(bfo_rail_state(&w->e[i], p, k), BFO_RAIL_ST_CONNECTING);
                assert_true(w->e[i].peers[p].down_since != 0); /* the grace runs */
            }
    sr_advance(w, 10000000);
    for (int k = 0; k < 2; k++)
        assert_int_equal(bfo_rail_state(&w->e[2], 1, k), BFO_RAIL_ST_UP);
    sr_del(w);
}

/* A rank that computes right after init: its host's transport answers
 * (the connection is made, the hello waits for the process), which the
 * transport says with bfo_engine_rail_heard on the CONNECTING rail.  Each
 * word pushes the grace back: three graces on, the peer is still DOWN,
 * not given up.  Once its host falls silent too, the grace runs out as
 * before and the send fails.  (The network is never stepped here: the
 * connect stays pending, the rail CONNECTING.) */
static void test_rail_heard_on_CONNECTING_pushes_the_grace_back(void **state)
{
    bfo_request s;
    uint8_t x = 1;
    (void)state;
    sr_scenario sc = make(NULL, 0, 2, 1, 84);
    sr_world *w = sr_new(&sc);
    bfo_engine *e = &w->e[0];
    const uint64_t grace = e->cfg.unreachable_grace_ns, t0 = w->sn.now;
    uint64_t t = t0;
    assert_int_equal(bfo_isend(e, &s, &x, 1, 1, 0, 1, t), BFO_OK);
    assert_int_equal(bfo_rail_state(e, 1, 0), BFO_RAIL_ST_CONNECTING);
    assert_int_equal(e->peers[1].down_since, t0); /* needed: the grace starts */
    for (; t < t0 + 3 * grace; t += 10000000) {
        if ((t - t0) % 100000000 == 0)
            bfo_engine_rail_heard(e, 1, 0, t);
        bfo_engine_progress(e, t);
    }
    assert_int_equal(bfo_peer_state(e, 1), BFO_PEER_ST_DOWN);
    assert_false(bfo_test(&s));
    assert_int_equal(bfo_rail_state(e, 1, 0), BFO_RAIL_ST_CONNECTING);
    const uint64_t last = t - 10000000 - (t - 10000000 - t0) % 100000000;
    for (; t < last + 2 * grace && bfo_peer_state(e, 1) == BFO_PEER_ST_DOWN; t += 10000000)
        bfo_engine_progress(e, t);
    assert_int_equal(bfo_peer_state(e, 1), BFO_PEER_ST_UNREACHABLE);
    assert_true(t - last >= grace && t - last <= grace + 20000000);
    assert_true(bfo_test(&s));
    assert_int_equal(s.status, BFO_ERR_PEER_UNREACHABLE);
    sr_del(w);
}

/* 128 ranks on 2 cores (bench-scale): a rank waits seconds for its turn
 * on a core, and its first alltoall's dials (127 segments made in one
 * call) take seconds more; its peers' hellos and replies wait unread
 * meanwhile.  The grace does not hold that time against the peer: a gap
 * between calls longer than a heartbeat counts one heartbeat, as the
 * rails' clocks skip it.  A peer needed, whose connection is pending, is
 * still DOWN, not given up, after three graces of calls 2 s apart (the old
 * engine gave it up a grace after the need: bench-scale's 128-rank runs
 * lost peers 21-23 s after MPI_Init).  A caller that only ever calls every
 * 250 ms still gives it up (no hang): a heartbeat counted per call, the
 * grace is over after grace / heartbeat calls. */
static void test_grace_counts_no_time_this_rank_was_not_called(void **state)
{
    bfo_request s;
    uint8_t x = 1;
    (void)state;
    sr_scenario sc = make(NULL, 0, 2, 1, 85);
    sr_world *w = sr_new(&sc);
    bfo_engine *e = &w->e[0];
    const uint64_t grace = e->cfg.unreachable_grace_ns, hb = e->cfg.heartbeat_ns, t0 = w->sn.now;
    uint64_t t = t0;
    assert_true(grace >= 10 * hb);
    assert_int_equal(bfo_isend(e, &s, &x, 1, 1, 0, 1, t), BFO_OK);
    assert_int_equal(bfo_rail_state(e, 1, 0), BFO_RAIL_ST_CONNECTING);
    assert_int_equal(e->peers[1].down_since, t0); /* needed: the grace starts */
    bfo_engine_progress(e, t);
    for (t += 2000000000ull; t < t0 + 3 * grace; t += 2000000000ull) { /* its turn every 2 s */
        bfo_engine_progress(e, t);
        bfo_engine_progress(e, t + 1000000); /* two calls 1 ms apart */
    }
    assert_int_equal(bfo_peer_state(e, 1), BFO_PEER_ST_DOWN);
    assert_false(bfo_test(&s));
    const uint64_t counted = (t - t0) / 2000000000ull * (hb + 1000000); /* at most */
    const uint64_t from = t;
    int calls = 0;
    for (; calls < 1000 && bfo_peer_state(e, 1) == BFO_PEER_ST_DOWN; t += 250000000ull, calls++)
        bfo_engine_progress(e, t);
    assert_int_equal(bfo_peer_state(e, 1), BFO_PEER_ST_UNREACHABLE);
    print_message("given up after %d calls 250 ms apart (%llu ms)\n", calls,
                  (unsigned long long)((t - from) / 1000000));
    assert_true((uint64_t)calls * hb + counted >= grace && (uint64_t)calls <= grace / hb + 2);
    assert_true(bfo_test(&s));
    assert_int_equal(s.status, BFO_ERR_PEER_UNREACHABLE);
    sr_del(w);
}

/* The tests of machines, in the order they run (engine_test_main: a pattern,
 * --shard). */
int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_actions_fed_without_their_input_are_refused),
        cmocka_unit_test(test_rail_down_mid_stream_then_back),
        cmocka_unit_test(test_rail_down_at_every_operation),
        cmocka_unit_test(test_rail_readmitted_and_used_again),
        cmocka_unit_test(test_CONNECTED_PROVEN_admits_at_once_no_probe_before_data),
        cmocka_unit_test(test_CONNECTED_unproven_probes_before_data),
        cmocka_unit_test(test_CONNECTED_PROVEN_data_before_the_report_is_taken),
        cmocka_unit_test(test_all_rails_down_unreachable_no_hang),
        cmocka_unit_test(test_unreachable_is_for_good_after_rails_return),
        cmocka_unit_test(test_leave_UP_LEAVE_REQUESTED_to_LEFT_a_bye_on_every_rail_then_no_failure),
        cmocka_unit_test(test_BYE_RCVD_new_requests_to_the_peer_fail_at_once_PEER_LEFT),
        cmocka_unit_test(test_BYE_RCVD_before_the_last_message_the_receive_still_gets_it),
        cmocka_unit_test(test_BYE_RCVD_posted_receive_fails_any_source_waits_for_the_others),
        cmocka_unit_test(test_BYE_FAILED_the_peer_falls_back_to_a_failure_bounded),
        cmocka_unit_test(test_leave_fails_pending_requests_LEFT_and_new_ones_at_once),
        cmocka_unit_test(test_LEFT_frames_after_leave_stale_a_probe_answered_nothing_probed),
        cmocka_unit_test(test_BYE_RCVD_messages_owed_never_come_closed_out_after_the_grace),
        cmocka_unit_test(test_peer_DOWN_RAIL_ADMITTED_REACHABLE_LAST_RAIL_LOST_DOWN_GRACE_EXPIRED_UNREACHABLE),
        cmocka_unit_test(test_one_sided_unreachable_fails_the_other_side_too),
        cmocka_unit_test(test_init_connects_nothing_a_peer_never_needed_is_never_unreachable),
        cmocka_unit_test(test_first_small_send_connects_one_rail_of_that_peer_only),
        cmocka_unit_test(test_first_send_prefers_the_rail_of_the_highest_bandwidth),
        cmocka_unit_test(test_RAIL_ABSENT_of_the_first_rail_connects_the_next),
        cmocka_unit_test(test_large_send_connects_the_rest_of_the_rails),
        cmocka_unit_test(test_first_rail_blackholed_the_rest_connect_and_the_message_arrives),
        cmocka_unit_test(test_first_rail_dies_while_UP_the_rest_connect_and_the_message_arrives),
        cmocka_unit_test(test_a_busy_peer_is_not_suspected_its_other_rails_stay_DORMANT),
        cmocka_unit_test(test_connect_at_init_connects_every_rail_of_every_peer),
        cmocka_unit_test(test_rail_heard_on_CONNECTING_pushes_the_grace_back),
        cmocka_unit_test(test_grace_counts_no_time_this_rank_was_not_called),
    };
    return engine_test_main(argc, argv, "engine_machines", tests, sizeof tests / sizeof tests[0]);
}
