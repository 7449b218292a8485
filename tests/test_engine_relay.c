// SPDX-License-Identifier: BSD-3-Clause
/* test_engine_relay.c - the tests of include/fsm/bfo_engine_relay.h:
 * relay through a third rank (docs/engine-design.md, "Relay").
 * What the engine's tests share is in engine_test.h. */
#include "engine_test.h"

/* ------------------------------------------------------------- relay */

/* Three ranks, two rails, relay on; ranks 0 and 1 cut apart (every rail
 * silent both ways) once their rails are up: returns when rank 0 reaches
 * rank 1 through rank 2 (RELAYED), within 2 s. */
static sr_world *relay_world(uint64_t seed, bfo_config *c)
{
    memset(c, 0, sizeof *c);
    c->relay = 1;
    c->max_requests = 64;
    c->max_unexpected = 64;
    sr_scenario sc = make(NULL, 0, 3, 2, seed);
    sc.cfg = c;
    sc.connect_at_init = 1; /* about rails UP from the start, not their setup */
    sr_world *w = sr_new(&sc);
    sr_advance(w, 5000000);
    /* ranks 0 and 1 wait on each other while their rails go silent: work,
     * so the rails are probed and found out (an idle peer is not probed:
     * bfo_engine_detect.h, >>work) */
    static bfo_request wait[2];
    static uint8_t b[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(bfo_irecv(&w->e[i], &wait[i], &b[i], 1, 1 - i, 0, 999, w->sn.now), BFO_OK);
    for (int k = 0; k < 2; k++)
        rail_path(w, 0, 1, k, SN_PATH_SILENT);
    for (int t = 0; t < 2000 && (bfo_peer_state(&w->e[0], 1) != BFO_PEER_ST_RELAYED ||
                                 bfo_peer_state(&w->e[1], 0) != BFO_PEER_ST_RELAYED); t++)
        sr_advance(w, 1000000);
    for (int i = 0; i < 2; i++)
        assert_int_equal(bfo_cancel(&w->e[i], &wait[i], w->sn.now), BFO_OK);
    assert_int_equal(bfo_peer_state(&w->e[0], 1), BFO_PEER_ST_RELAYED);
    assert_int_equal(bfo_peer_state(&w->e[1], 0), BFO_PEER_ST_RELAYED);
    assert_int_equal(w->e[0].peers[1].relay.via, 2);
    return w;
}

/* DOWN --ROUTE_FOUND--> RELAYED / take_route: a message goes through the
 * third rank, arrives whole, and the peer is not given up however long
 * its rails stay cut (the grace does not run while a route is left). */
static void test_ROUTE_FOUND_sends_through_a_third_rank_and_gives_nothing_up(void **state)
{
    bfo_config c;
    bfo_request s, r, s2, r2;
    static uint8_t big[200000], got[200000];
    uint8_t x[100], y[100];
    (void)state;
    sr_world *w = relay_world(91, &c);
    for (size_t i = 0; i < sizeof x; i++)
        x[i] = (uint8_t)(i * 7);
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = (uint8_t)(i * 13 + 5);
    assert_int_equal(bfo_irecv(&w->e[1], &r, y, sizeof y, 0, 1, 1, w->sn.now), BFO_OK);
    assert_int_equal(bfo_isend(&w->e[0], &s, x, sizeof x, 1, 1, 1, w->sn.now), BFO_OK);
    /* a rendezvous the other way: by copy (no RDMA through a relay) */
    assert_int_equal(bfo_irecv(&w->e[0], &r2, got, sizeof got, 1, 1, 2, w->sn.now), BFO_OK);
    assert_int_equal(bfo_isend(&w->e[1], &s2, big, sizeof big, 0, 1, 2, w->sn.now), BFO_OK);
    sr_advance(w, 4000000000ull); /* twice the grace */
    assert_true(bfo_test(&s) && bfo_test(&r) && bfo_test(&s2) && bfo_test(&r2));
    assert_int_equal(s.status, BFO_OK);
    assert_int_equal(r.status, BFO_OK);
    assert_memory_equal(x, y, sizeof x);
    assert_int_equal(s2.status, BFO_OK);
    assert_int_equal(r2.status, BFO_OK);
    assert_memory_equal(big, got, sizeof big);
    assert_int_equal(bfo_peer_state(&w->e[0], 1), BFO_PEER_ST_RELAYED);
    assert_true(w->e[0].stats.relayed_frames > 0 && w->e[1].stats.relayed_frames > 0);
    assert_true(w->e[2].stats.relay_passed > 0);
    assert_true(w->e[1].stats.relay_received > 0);
    assert_int_equal(STAT(w, rdma_reads) + STAT(w, rdma_writes), 0);
    assert_int_equal(STAT(w, unreachable_errors), 0);
    assert_int_equal(STAT(w, protocol_violations), 0);
    assert_int_equal(w->e[0].stats.routes_found, 1);
    sr_del(w);
}

/* A relayed frame completes on the relay's RELAYACK, which says how its
 * post to the destination completed: while the relay's way to rank 1 is
 * held, rank 0's send stays pending though the relay has the frame. */
static void test_RELAYACK_completes_a_relayed_send_once_the_destination_has_it(void **state)
{
    bfo_config c;
    bfo_request s, r;
    uint8_t x = 42, y = 0;
    (void)state;
    sr_world *w = relay_world(92, &c);
    for (int k = 0; k < 2; k++)
        sn_set_path(&w->sn, 2, 1, k, SN_PATH_HOLD);
    assert_int_equal(bfo_irecv(&w->e[1], &r, &y, 1, 0, 1, 1, w->sn.now), BFO_OK);
    assert_int_equal(bfo_isend(&w->e[0], &s, &x, 1, 1, 1, 1, w->sn.now), BFO_OK);
    sr_advance(w, 10000000);
    assert_int_equal(w->e[2].stats.relay_passed, 1); /* the relay has it, and passed it on */
    assert_false(bfo_test(&s));                       /* but rank 1 has not */
    assert_false(bfo_test(&r));
    for (int k = 0; k < 2; k++)
        sn_set_path(&w->sn, 2, 1, k, SN_PATH_OPEN);
    sr_advance(w, 10000000);
    assert_true(bfo_test(&s) && bfo_test(&r));
    assert_int_equal(s.status, BFO_OK);
    assert_int_equal(y, 42);
    assert_int_equal(STAT(w, protocol_violations), 0);
    sr_del(w);
}

/* RELAYED --ROUTE_LOST--> DOWN / report_route_lost: rank 0 loses its rails
 * to the relay as well; no route is left, the grace starts from then, and
 * runs out: what waits for rank 1 fails BFO_ERR_PEER_UNREACHABLE. */
static void test_ROUTE_LOST_starts_the_grace(void **state)
{
    bfo_config c;
    bfo_request s;
    uint8_t x = 1;
    (void)state;
    sr_world *w = relay_world(93, &c);
    bfo_request wait; /* rank 0 waits on rank 1, so on its relay: work (>>work) */
    uint8_t b;
    assert_int_equal(bfo_irecv(&w->e[0], &wait, &b, 1, 1, 0, 99, w->sn.now), BFO_OK);
    for (int k = 0; k < 2; k++)
        rail_path(w, 0, 2, k, SN_PATH_SILENT);
    for (int t = 0; t < 2000 && bfo_peer_state(&w->e[0], 1) == BFO_PEER_ST_RELAYED; t++)
        sr_advance(w, 1000000);
    assert_int_equal(bfo_peer_state(&w->e[0], 1), BFO_PEER_ST_DOWN);
    assert_int_equal(w->e[0].stats.routes_lost, 1);
    assert_int_equal(w->e[0].peers[1].relay.via, -1);
    assert_int_equal(bfo_isend(&w->e[0], &s, &x, 1, 1, 1, 1, w->sn.now), BFO_OK);
    sr_advance(w, 2500000000ull);
    assert_true(bfo_test(&s));
    assert_int_equal(s.status, BFO_ERR_PEER_UNREACHABLE);
    assert_true(bfo_test(&wait));
    assert_int_equal(wait.status, BFO_ERR_PEER_UNREACHABLE);
    assert_int_equal(bfo_peer_state(&w->e[0], 1), BFO_PEER_ST_UNREACHABLE);
    sr_del(w);
}

/* RELAYED --RAIL_ADMITTED--> REACHABLE: the cut healed, a rail of rank 1
 * is admitted again and its messages go direct. */
static void test_RAIL_ADMITTED_takes_a_relayed_peer_back_to_its_rails(void **state)
{
    bfo_config c;
    bfo_request s, r;
    uint8_t x = 9, y = 0;
    (void)state;
    sr_world *w = relay_world(94, &c);
    for (int k = 0; k < 2; k++)
        rail_path(w, 0, 1, k, SN_PATH_OPEN);
    for (int t = 0; t < 3000 && bfo_peer_state(&w->e[0], 1) != BFO_PEER_ST_REACHABLE; t++)
        sr_advance(w, 1000000);
    assert_int_equal(bfo_peer_state(&w->e[0], 1), BFO_PEER_ST_REACHABLE);
    const uint64_t relayed = w->e[0].stats.relayed_frames;
    assert_int_equal(bfo_irecv(&w->e[1], &r, &y, 1, 0, 1, 1, w->sn.now), BFO_OK);
    assert_int_equal(bfo_isend(&w->e[0], &s, &x, 1, 1, 1, 1, w->sn.now), BFO_OK);
    sr_advance(w, 10000000);
    assert_true(bfo_test(&s) && bfo_test(&r));
    assert_int_equal(y, 9);
    assert_int_equal(w->e[0].stats.relayed_frames, relayed);
    sr_del(w);
}

/* A rank that leaves while it reaches a peer only through a relay says BYE
 * through it: the peer takes the leaving (LEAVING, then LEFT), not a
 * failure, and a send to it then fails BFO_ERR_PEER_LEFT, not
 * PEER_UNREACHABLE after the grace. */
static void test_LEAVE_REQUESTED_says_BYE_through_the_relay(void **state)
{
    bfo_config c;
    bfo_request s;
    uint8_t x = 1;
    (void)state;
    sr_world *w = relay_world(96, &c);
    assert_int_equal(bfo_engine_leave(&w->e[0], w->sn.now), BFO_OK);
    sr_advance(w, 50000000);
    assert_true(bfo_engine_left(&w->e[0])); /* its BYEs are out, the relayed one too */
    assert_true(bfo_peer_left(&w->e[1], 0));
    assert_int_equal(bfo_peer_state(&w->e[1], 0), BFO_PEER_ST_LEFT);
    assert_int_equal(bfo_isend(&w->e[1], &s, &x, 1, 0, 1, 1, w->sn.now), BFO_ERR_PEER_LEFT);
    assert_int_equal(STAT(w, protocol_violations), 0);
    sr_del(w);
}

/* What a relay refuses, as a protocol violation: a frame whose sender is
 * not the peer it came from (a second hop), rail control inside a RELAY,
 * and any RELAY at a rank whose relay is off. */
static void test_RELAY_RCVD_refuses_a_second_hop_rail_control_and_relay_off(void **state)
{
    bfo_config c;
    uint8_t f[BFO_HDR_RELAY_SIZE + BFO_MAX_HDR_SIZE];
    bfo_hdr_relay h;
    bfo_hdr_railctl p;
    bfo_hdr_credit cr;
    size_t n;
    (void)state;
    sr_world *w = relay_world(95, &c);
    memset(&h, 0, sizeof h);
    h.type = BFO_FRAG_RELAY;
    h.dst = 1;
    h.src = 1; /* from rank 0, claiming rank 1's frame: a second hop */
    h.token = 5;
    memset(&cr, 0, sizeof cr);
    cr.type = BFO_FRAG_CREDIT;
    cr.limit = 1;
    n = bfo_hdr_relay_encode(&h, f, sizeof f);
    n += bfo_hdr_credit_encode(&cr, f + n, sizeof f - n);
    h.src = 0;
    h.dst = 0;
    assert_int_equal(bfo_engine_frame(&w->e[2], 0, 0, f, n, w->sn.now), BFO_ERR_PROTOCOL);
    h.dst = 1; /* rail control inside */
    memset(&p, 0, sizeof p);
    p.type = BFO_FRAG_PROBE;
    n = bfo_hdr_relay_encode(&h, f, sizeof f);
    n += bfo_hdr_railctl_encode(&p, f + n, sizeof f - n);
    assert_int_equal(bfo_engine_frame(&w->e[2], 0, 0, f, n, w->sn.now), BFO_ERR_PROTOCOL);
    w->e[2].cfg.relay = 0; /* relay off at the relay */
    n = bfo_hdr_relay_encode(&h, f, sizeof f);
    n += bfo_hdr_credit_encode(&cr, f + n, sizeof f - n);
    assert_int_equal(bfo_engine_frame(&w->e[2], 0, 0, f, n, w->sn.now), BFO_ERR_PROTOCOL);
    w->e[2].cfg.relay = 1;
    assert_int_equal(w->e[2].stats.relay_passed, 0);
    sr_del(w);
}

/* Connections on first use (no connect_at_init): three ranks, two rails,
 * relay on or off, ranks 0 and 1 cut apart from the start; nothing
 * connected. */
static sr_world *first_use_world(uint64_t seed, bfo_config *c, int relay)
{
    memset(c, 0, sizeof *c);
    c->relay = relay;
    c->max_requests = 64;
    c->max_unexpected = 64;
    sr_scenario sc = make(NULL, 0, 3, 2, seed);
    sc.cfg = c;
    sr_world *w = sr_new(&sc);
    for (int k = 0; k < 2; k++)
        rail_path(w, 0, 1, k, SN_PATH_SILENT);
    for (int i = 0; i < 3; i++)
        for (int p = 0; p < 3; p++)
            for (int k = 0; k < 2 && p != i; k++)
                assert_int_equal(bfo_rail_state(&w->e[i], p, k), BFO_RAIL_ST_DORMANT);
    return w;
}

/* First use: rank 0's rails to rank 1 fail on their first connection, and
 * rank 2, the only relay, was never needed by anyone.  The route search
 * needs it (PEER_NEEDED: rank 0 connects to rank 2), rank 2's REACH lists
 * rank 1 though it never tried it (a peer never needed may be reached),
 * and rank 2, asked to pass a frame on to rank 1, connects to it and holds
 * the frame until that first connection is up: the message arrives, none
 * is refused, nothing is given up. */
static void test_first_use_the_route_search_connects_the_relay_and_the_relay_its_destination(void **state)
{
    bfo_config c;
    bfo_request s, r;
    uint8_t x[100], y[100];
    (void)state;
    sr_world *w = first_use_world(97, &c, 1);
    for (size_t i = 0; i < sizeof x; i++)
        x[i] = (uint8_t)(i * 3 + 1);
    assert_int_equal(bfo_irecv(&w->e[1], &r, y, sizeof y, 0, 1, 1, w->sn.now), BFO_OK);
    assert_int_equal(bfo_isend(&w->e[0], &s, x, sizeof x, 1, 1, 1, w->sn.now), BFO_OK);
    for (int t = 0; t < 3000 && !(bfo_test(&s) && bfo_test(&r)); t++)
        sr_advance(w, 1000000);
    assert_true(bfo_test(&s) && bfo_test(&r));
    assert_int_equal(s.status, BFO_OK);
    assert_int_equal(r.status, BFO_OK);
    assert_memory_equal(x, y, sizeof x);
    assert_int_equal(bfo_peer_state(&w->e[0], 1), BFO_PEER_ST_RELAYED);
    assert_int_equal(w->e[0].peers[1].relay.via, 2);
    assert_int_equal(bfo_peer_state(&w->e[0], 2), BFO_PEER_ST_REACHABLE); /* needed by the search */
    assert_int_equal(bfo_peer_state(&w->e[2], 1), BFO_PEER_ST_REACHABLE); /* needed by the relay */
    assert_true(w->e[2].stats.relay_passed > 0);
    assert_int_equal(w->e[2].stats.relay_refused, 0);
    assert_int_equal(STAT(w, unreachable_errors), 0);
    assert_int_equal(STAT(w, protocol_violations), 0);
    sr_del(w);
}

/* First use, and the relay cannot reach the destination either (rank 2 cut
 * from rank 1 too): the relay's first connection to rank 1 fails, the
 * frames it held for it fail back to their sender (RELAYACK ok 0), its
 * REACH stops listing rank 1, rank 0 has no route left and gives rank 1 up
 * after the grace (BFO_ERR_PEER_UNREACHABLE); every relay slot and
 * operation is back at the relay. */
static void test_first_use_a_relay_whose_first_connection_fails_gives_back_what_it_held(void **state)
{
    bfo_config c;
    bfo_request s;
    uint8_t x = 5;
    (void)state;
    sr_world *w = first_use_world(98, &c, 1);
    for (int k = 0; k < 2; k++)
        rail_path(w, 2, 1, k, SN_PATH_SILENT);
    assert_int_equal(bfo_isend(&w->e[0], &s, &x, 1, 1, 1, 1, w->sn.now), BFO_OK);
    for (int t = 0; t < 6000 && !bfo_test(&s); t++)
        sr_advance(w, 1000000);
    assert_true(bfo_test(&s));
    assert_int_equal(s.status, BFO_ERR_PEER_UNREACHABLE);
    assert_int_equal(bfo_peer_state(&w->e[0], 2), BFO_PEER_ST_REACHABLE);
    assert_int_not_equal(bfo_peer_state(&w->e[2], 1), BFO_PEER_ST_REACHABLE);
    for (int k = 0; k < w->e[2].cfg.relay_slots; k++)
        assert_int_equal(w->e[2].relay_used[k], 0);
    assert_int_equal(w->e[2].peers[1].pend_head, -1);
    assert_int_equal(STAT(w, protocol_violations), 0);
    sr_del(w);
}

/* First use: an ANY_SOURCE receive waits on every peer that may send.  Once
 * every peer ever needed is gone (rank 1's rails to rank 0 fail for good),
 * the peers never needed are needed (PEER_NEEDED), so that whether they are
 * left is known: rank 2, reachable, is connected and the receive keeps
 * waiting, and takes rank 2's message; with rank 2 cut off too, it would
 * end BFO_ERR_PEER_UNREACHABLE (check-sim's --kill random scenarios) rather
 * than hang on a peer never tried. */
static void test_first_use_ANY_SOURCE_with_every_needed_peer_gone_needs_the_others(void **state)
{
    bfo_config c;
    bfo_request s0, r, s2;
    uint8_t x = 3, z = 4, y = 0;
    (void)state;
    sr_world *w = first_use_world(99, &c, 0);
    assert_int_equal(bfo_isend(&w->e[1], &s0, &x, 1, 0, 1, 1, w->sn.now), BFO_OK); /* needs rank 0 */
    assert_int_equal(bfo_irecv(&w->e[1], &r, &y, 1, BFO_ANY_SOURCE, 1, 2, w->sn.now), BFO_OK);
    for (int t = 0; t < 6000 && !bfo_test(&s0); t++)
        sr_advance(w, 1000000);
    assert_true(bfo_test(&s0));
    assert_int_equal(s0.status, BFO_ERR_PEER_UNREACHABLE);
    sr_advance(w, 100000000);
    assert_false(bfo_test(&r)); /* rank 2 may still send */
    /* one rail first: a connection tells, the other rail is not needed */
    assert_int_equal(bfo_rail_state(&w->e[1], 2, 0), BFO_RAIL_ST_UP);
    assert_int_equal(bfo_rail_state(&w->e[1], 2, 1), BFO_RAIL_ST_DORMANT);
    assert_int_equal(bfo_peer_state(&w->e[1], 2), BFO_PEER_ST_REACHABLE);
    assert_int_equal(bfo_isend(&w->e[2], &s2, &z, 1, 1, 1, 2, w->sn.now), BFO_OK);
    sr_advance(w, 10000000);
    assert_true(bfo_test(&r) && bfo_test(&s2));
    assert_int_equal(r.status, BFO_OK);
    assert_int_equal(y, 4);
    assert_int_equal(STAT(w, protocol_violations), 0);
    sr_del(w);
}

/* Issue 38, item 7: a relayed message is taken as from its origin (the
 * RELAY's src), so its source must be the origin, not the relay: rank 2
 * passing on rank 0's MATCH that names rank 2 as its source is a protocol
 * violation (dropped, counted, rank 0's sequence moves on); the next one,
 * naming rank 0, is taken, reported from rank 0. */
static void test_relayed_match_whose_source_is_not_its_origin_is_dropped(void **state)
{
    bfo_config c;
    uint8_t f[BFO_HDR_RELAY_SIZE + BFO_MAX_HDR_SIZE + 8], in[8] = { 0 };
    bfo_hdr_relay h;
    bfo_hdr_match m;
    bfo_request q;
    (void)state;
    sr_world *w = relay_world(98, &c);
    w->e[1].cfg.source_ok = NULL; /* the engine's own rule: its ranks are the sources */
    assert_int_equal(bfo_irecv(&w->e[1], &q, in, sizeof in, BFO_ANY_SOURCE, 0, 4, w->sn.now), BFO_OK);
    const uint64_t seq = w->e[1].peers[0].recv_seq, v = w->e[1].stats.protocol_violations;
    w->e[0].peers[1].send_seq += 2; /* rank 0's sequence: the two below are its own */
    memset(&h, 0, sizeof h);
    h.type = BFO_FRAG_RELAY;
    h.dst = 1;
    h.src = 0;
    h.token = 5;
    memset(&m, 0, sizeof m);
    m.type = BFO_FRAG_MATCH;
    m.tag = 4;
    for (int origin = 0; origin < 2; origin++) {
        m.src = origin ? 0 : 2; /* the relay's rank, then the origin's */
        m.seq = seq + (uint64_t)origin;
        size_t n = bfo_hdr_relay_encode(&h, f, sizeof f);
        n += bfo_hdr_match_encode(&m, f + n, sizeof f - n);
        memcpy(f + n, origin ? "good" : "evil", 5);
        assert_int_equal(bfo_engine_frame(&w->e[1], 2, 0, f, n + 5, w->sn.now), BFO_OK);
        assert_int_equal(w->e[1].peers[0].recv_seq, seq + 1 + (uint64_t)origin);
        assert_int_equal(bfo_test(&q), origin);
    }
    assert_int_equal(w->e[1].stats.protocol_violations, v + 1);
    assert_int_equal(q.status, BFO_OK);
    assert_int_equal(q.source, 0);
    assert_int_equal(q.peer, 0);
    assert_string_equal((char *)in, "good");
    sr_del(w);
}

/* The tests of relay, in the order they run (engine_test_main: a pattern,
 * --shard). */
int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ROUTE_FOUND_sends_through_a_third_rank_and_gives_nothing_up),
        cmocka_unit_test(test_RELAYACK_completes_a_relayed_send_once_the_destination_has_it),
        cmocka_unit_test(test_ROUTE_LOST_starts_the_grace),
        cmocka_unit_test(test_RAIL_ADMITTED_takes_a_relayed_peer_back_to_its_rails),
        cmocka_unit_test(test_RELAY_RCVD_refuses_a_second_hop_rail_control_and_relay_off),
        cmocka_unit_test(test_relayed_match_whose_source_is_not_its_origin_is_dropped),
        cmocka_unit_test(test_LEAVE_REQUESTED_says_BYE_through_the_relay),
        cmocka_unit_test(test_first_use_the_route_search_connects_the_relay_and_the_relay_its_destination),
        cmocka_unit_test(test_first_use_a_relay_whose_first_connection_fails_gives_back_what_it_held),
        cmocka_unit_test(test_first_use_ANY_SOURCE_with_every_needed_peer_gone_needs_the_others),
    };
    return engine_test_main(argc, argv, "engine_relay", tests, sizeof tests / sizeof tests[0]);
}
