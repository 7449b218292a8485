// SPDX-License-Identifier: BSD-3-Clause
/* test_engine_send.c - the tests of include/fsm/bfo_engine_send.h:
 * the send protocols and the restart dance: every protocol without faults,
 * synchronous sends, each fragment type lost or failed after it arrived,
 * every single fault.
 * What the engine's tests share is in engine_test.h. */
#include "engine_test.h"

/* Default options: eager up to 4 KiB, copy up to 64 KiB, GET above. */
static void test_mixed_messages_every_protocol_no_fault(void **state)
{
    (void)state;
    sr_scenario sc = make(mixed, NMIXED, 2, 2, 1);
    sr_world *w = run(&sc);
    all_ok(w);
    assert_int_equal(STAT(w, protocol_violations), 0);
    assert_int_equal(STAT(w, restarts), 0);
    assert_int_equal(STAT(w, eagers), 5);
    assert_int_equal(STAT(w, copies), 1);
    assert_int_equal(STAT(w, gets), 4);
    sr_del(w);
}

static void test_put_protocol_no_fault(void **state)
{
    (void)state;
    sr_scenario sc = make(mixed, NMIXED, 2, 2, 2);
    sc.rdma = BFO_RDMA_PUT;
    sr_world *w = run(&sc);
    all_ok(w);
    assert_int_equal(STAT(w, puts), 4);
    assert_true(STAT(w, rdma_writes) >= 4);
    sr_del(w);
}

static void test_one_rail(void **state)
{
    (void)state;
    sr_scenario sc = make(mixed, NMIXED, 2, 1, 2);
    sr_del(run(&sc));
}

static void test_three_ranks_three_rails(void **state)
{
    static const msgspec m[] = { { 0, 1, 10 }, { 1, 2, 9000 }, { 2, 0, 500000 },
                                 { 0, 2, 4096 }, { 2, 1, 3 }, { 1, 0, 100000 } };
    (void)state;
    sr_scenario sc = make(m, 6, 3, 3, 3);
    sr_del(run(&sc));
}

static void test_many_seeds_reorder_across_rails(void **state)
{
    (void)state;
    for (uint64_t seed = 10; seed < 60; seed++) {
        sr_scenario sc = make(mixed, NMIXED, 2, 3, seed);
        sc.rdma = (int)(seed % 4); /* auto, GET, PUT, off */
        sr_del(run(&sc));
    }
}

/* A synchronous send of zero bytes with no buffer (MPI_Ssend(NULL, 0, ..),
 * Open MPI's barriers) goes by rendezvous with nothing to carry: not taken
 * for described data. */
static void test_sync_send_of_zero_bytes_without_a_buffer(void **state)
{
    bfo_request s, q;
    bfo_envelope env = { 1, 0, 0, 4, BFO_SEND_SYNC };
    (void)state;
    sr_scenario sc = make(NULL, 0, 2, 2, 5);
    sr_world *w = sr_new(&sc);
    assert_int_equal(bfo_isend_env(&w->e[0], &s, NULL, 0, &env, w->sn.now), BFO_OK);
    assert_int_equal(bfo_irecv(&w->e[1], &q, NULL, 0, 0, 0, 4, w->sn.now), BFO_OK);
    for (int k = 0; k < 500 && !(bfo_test(&s) && bfo_test(&q)); k++)
        sn_step(&w->sn);
    assert_true(bfo_test(&s) && bfo_test(&q));
    assert_int_equal(s.status, BFO_OK);
    assert_int_equal(q.status, BFO_OK);
    assert_int_equal(q.length, 0);
    sr_del(w);
}

/* One fault of a kind on the n-th operation of a type, under a protocol. */
static sr_world *fault_case(int type, uint64_t nth, int kind, int rdma, uint64_t seed)
{
    sr_scenario sc = make(mixed, NMIXED, 2, 2, seed);
    sc.rdma = rdma;
    sc.connect_at_init = 1; /* both rails from the start: about a frame's fault, not the set-up */
    add_fault(&sc, SN_FAULT_TYPE, type, 0, nth, kind);
    sr_world *w = run(&sc);
    all_ok(w);
    assert_int_equal(STAT(w, protocol_violations), 0);
    return w;
}

static void test_match_failed_but_arrived(void **state)
{
    (void)state;
    sr_world *w = fault_case(BFO_FRAG_MATCH, 1, SN_DELIVER_ERROR, BFO_RDMA_AUTO, 21);
    assert_true(STAT(w, duplicates_dropped) >= 1); /* the MATCH sent again */
    sr_del(w);
}
static void test_match_lost(void **state)
{
    (void)state;
    sr_del(fault_case(BFO_FRAG_MATCH, 2, SN_LOSE, BFO_RDMA_AUTO, 22));
}
static void test_rndv_failed_but_arrived(void **state)
{
    (void)state;
    sr_del(fault_case(BFO_FRAG_RNDV, 1, SN_DELIVER_ERROR, BFO_RDMA_OFF, 23));
}
static void test_rndv_lost(void **state)
{
    (void)state;
    sr_del(fault_case(BFO_FRAG_RNDV, 2, SN_LOSE, BFO_RDMA_OFF, 24));
}
static void test_ack_failed_but_arrived(void **state)
{
    (void)state;
    sr_del(fault_case(BFO_FRAG_ACK, 1, SN_DELIVER_ERROR, BFO_RDMA_OFF, 25));
}
static void test_ack_lost(void **state)
{
    (void)state;
    sr_del(fault_case(BFO_FRAG_ACK, 1, SN_LOSE, BFO_RDMA_OFF, 26));
}
static void test_frag_lost_restart_dance(void **state)
{
    (void)state;
    sr_world *w = fault_case(BFO_FRAG_FRAG, 2, SN_LOSE, BFO_RDMA_OFF, 27);
    assert_int_equal(STAT(w, restarts), 1);
    sr_del(w);
}
static void test_frag_failed_but_arrived(void **state)
{
    (void)state;
    sr_del(fault_case(BFO_FRAG_FRAG, 4, SN_DELIVER_ERROR, BFO_RDMA_OFF, 28));
}
static void test_notify_failed_but_arrived(void **state)
{
    (void)state;
    sr_scenario sc = make(mixed, NMIXED, 2, 2, 29);
    sc.rdma = BFO_RDMA_OFF;
    add_fault(&sc, SN_FAULT_TYPE, BFO_FRAG_FRAG, 0, 2, SN_LOSE);
    add_fault(&sc, SN_FAULT_TYPE, BFO_FRAG_NOTIFY, 0, 1, SN_DELIVER_ERROR);
    sr_world *w = run(&sc);
    all_ok(w);
    assert_true(STAT(w, duplicates_dropped) >= 1); /* the NOTIFY sent again */
    sr_del(w);
}
static void test_delay_reorders(void **state)
{
    (void)state;
    sr_del(fault_case(0, 5, SN_DELAY, BFO_RDMA_AUTO, 30));
}

/* RDMA: the hard cases of the design, and each RDMA operation failing. */
static void test_rget_failed_but_arrived(void **state)
{
    (void)state;
    sr_world *w = fault_case(BFO_FRAG_RGET, 1, SN_DELIVER_ERROR, BFO_RDMA_GET, 31);
    assert_true(STAT(w, duplicates_dropped) >= 1); /* the RGET sent again, dropped by seq */
    sr_del(w);
}
static void test_get_fin_failed_but_arrived(void **state)
{
    (void)state;
    sr_world *w = fault_case(BFO_FRAG_FIN, 1, SN_DELIVER_ERROR, BFO_RDMA_GET, 32);
    assert_int_equal(STAT(w, restarts), 0);
    sr_del(w);
}
static void test_read_failed_restart_dance(void **state)
{
    (void)state;
    sr_world *w = fault_case(SN_TYPE_READ, 2, SN_LOSE, BFO_RDMA_GET, 33);
    assert_int_equal(STAT(w, restarts), 1);
    sr_del(w);
}
static void test_put_lost_restart_dance(void **state)
{
    (void)state;
    sr_world *w = fault_case(BFO_FRAG_PUT, 1, SN_LOSE, BFO_RDMA_PUT, 34);
    assert_int_equal(STAT(w, restarts), 1);
    sr_del(w);
}
/* The FIN sent again is dropped by its slot while the request lives, or as
 * stale once it has completed (which one depends on the schedule): over ten
 * schedules, every resent FIN is dropped and the slot path is taken. */
static void test_put_fin_failed_but_arrived(void **state)
{
    (void)state;
    uint64_t by_slot = 0;
    for (uint64_t seed = 35; seed < 45; seed++) {
        sr_world *w = fault_case(BFO_FRAG_FIN, 1, SN_DELIVER_ERROR, BFO_RDMA_PUT, seed);
        assert_true(STAT(w, duplicates_dropped) + STAT(w, stale_dropped) >= 1);
        assert_int_equal(STAT(w, restarts), 0);
        by_slot += STAT(w, duplicates_dropped);
        sr_del(w);
    }
    assert_true(by_slot >= 1);
}
static void test_write_failed_but_arrived(void **state)
{
    (void)state;
    sr_world *w = fault_case(SN_TYPE_WRITE, 3, SN_DELIVER_ERROR, BFO_RDMA_PUT, 36);
    assert_int_equal(STAT(w, restarts), 1);
    sr_del(w);
}

/* Rail 1 is the only one that can RDMA; it dies at each operation of a
 * GET in turn: the message always arrives, and where the reads had begun
 * it restarts and goes on by copy over rail 0. */
static void test_rdma_rail_lost_message_goes_on_by_copy(void **state)
{
    static const msgspec m[] = { { 0, 1, 1 << 20 } };
    int by_copy_after_restart = 0;
    (void)state;
    sr_scenario sc = make(m, 1, 2, 2, 37);
    sc.plain_rails = 1;
    sc.connect_at_init = 1; /* rail 1 UP before the GET (one rail first would take rail 0) */
    sc.start_ns = 1000000;
    sr_world *w = run(&sc); /* without a fault: reads, on rail 1 only */
    assert_int_equal(STAT(w, gets), 1);
    assert_int_equal(w->e[1].stats.rail_bytes[0], 0);
    uint64_t ops = w->sn.ops;
    sr_del(w);
    for (uint64_t n = 1; n <= ops; n++) {
        sr_scenario t = sc;
        add_fault(&t, SN_FAULT_RAIL_DOWN, 0, 1, n, 0);
        w = run(&t);
        all_ok(w);
        if (STAT(w, restarts) >= 1 && STAT(w, copies) >= 1 && w->e[0].stats.rail_bytes[0] > 0)
            by_copy_after_restart++;
        sr_del(w);
    }
    print_message("rail 1 down at each of %d operations: %d restarted by copy\n", (int)ops,
                  by_copy_after_restart);
    assert_true(by_copy_after_restart > 0);
}

/* RDMA keys per rail: in the simulator every rail has its own key (as with
 * one device per rail), and an access with another rail's key is an RDMA
 * violation, which fails the scenario.  GET and PUT over four RDMA rails
 * then prove the engine hands each rail the key the peer gave for it: every
 * rail carries RDMA bytes, no access is refused. */
static void test_get_and_put_over_four_rails_use_each_rails_own_key(void **state)
{
    static const msgspec m[] = { { 0, 1, 4 << 20 }, { 1, 0, 3 << 20 } };
    (void)state;
    for (int put = 0; put < 2; put++) {
        sr_scenario sc = make(m, 2, 2, 4, 41);
        sc.connect_at_init = 1;
        sc.start_ns = 1000000; /* every rail up before the messages start */
        sc.limit_ns = 200000000; /* 0.2 s simulated (it takes ~0.01): a wrong key fails soon */
        sc.rdma = put ? BFO_RDMA_PUT : BFO_RDMA_GET;
        sc.rdma_min = 1;
        sr_world *w = run(&sc);
        all_ok(w);
        assert_int_equal(w->sn.rdma_violations, 0);
        assert_int_equal(put ? STAT(w, puts) : STAT(w, gets), 2);
        assert_int_equal(STAT(w, copies), 0);
        for (int r = 0; r < 4; r++) { /* the writer (PUT: the sender), else the reader */
            uint64_t b = w->e[put ? 0 : 1].stats.rail_bytes[r];
            if (b < (1u << 19))
                fail_msg("%s: rail %d carried %llu bytes of message 0", put ? "PUT" : "GET", r,
                         (unsigned long long)b);
        }
        sr_del(w);
    }
}

/* The simulator's side of the above: a key is good on its own rail only. */
static void test_simulated_rdma_refuses_another_rails_key(void **state)
{
    static uint8_t mem[256];
    uint32_t keys[4] = { 0, 0, 0, 0 };
    uint64_t raddr = 0, handle = 0;
    simnet sn;
    (void)state;
    sn_init(&sn, 2, 4, 1);
    assert_int_equal(sn_reg_mem(&sn.ep[1], mem, sizeof mem, BFO_MEM_REMOTE_READ, &raddr, keys, &handle), 0);
    for (int r = 0; r < 4; r++)
        for (int k = 0; k < 4; k++)
            if (k != r)
                assert_int_not_equal(keys[r], keys[k]);
    assert_int_equal(sn_rdma_check(&sn, 1, 2, raddr, keys[2], 16), 1);
    assert_int_equal(sn.rdma_violations, 0);
    assert_int_equal(sn_rdma_check(&sn, 1, 2, raddr, keys[3], 16), 0); /* rail 3's key on rail 2 */
    assert_int_equal(sn.rdma_violations, 1);
    assert_int_equal(sn_rdma_check(&sn, 0, 2, raddr, keys[2], 16), 0); /* another rank's memory */
    assert_int_equal(sn.rdma_violations, 2);
    sn_dereg_mem(&sn.ep[1], handle);
    assert_int_equal(sn_rdma_check(&sn, 1, 2, raddr, keys[2], 16), 0); /* given back: refused */
    assert_int_equal(sn.rdma_refused, 1);
    sn_free(&sn);
}

/* Every single fault on every operation of a small scenario, each protocol. */
static void test_every_single_fault_small(void **state)
{
    static const msgspec m[] = { { 0, 1, 8 }, { 0, 1, 150000 }, { 1, 0, 5000 } };
    static const int kinds[] = { SN_LOSE, SN_DELIVER_ERROR, SN_DELAY };
    int runs = 0;
    (void)state;
    for (int rdma = 0; rdma < 4; rdma++)
        for (uint64_t op = 1; op <= 40; op++)
            for (int k = 0; k < 3; k++) {
                sr_scenario sc = make(m, 3, 2, 2, 100 + op);
                sc.rdma = rdma;
                add_fault(&sc, SN_FAULT_TYPE, 0, 0, op, kinds[k]);
                sr_del(run(&sc));
                runs++;
            }
    print_message("%d single-fault runs\n", runs);
}

/* FRAGs read in place (bfo_engine_place, as the TCP transport reads them:
 * half the payload, other messages, then the rest and
 * bfo_engine_frame_placed), under every single fault of the copy
 * protocol's matrix and a rail down at every operation: every message
 * intact, once.  (A placement whose receive is gone before the end, its
 * rest dropped, is counted too; the test below makes one.) */
static void test_frag_read_in_place_under_every_single_fault(void **state)
{
    static const msgspec m[] = { { 0, 1, 8 }, { 0, 1, 150000 }, { 1, 0, 5000 }, { 1, 0, 300000 } };
    static const int kinds[] = { SN_LOSE, SN_DELIVER_ERROR, SN_DELAY };
    uint64_t placed = 0, dropped = 0, runs = 0;
    (void)state;
    for (uint64_t op = 1; op <= 60; op++) {
        for (int k = 0; k < 3; k++) {
            sr_scenario sc = make(m, 4, 2, 2, 700 + op);
            sc.place = 1;
            sc.rdma = BFO_RDMA_OFF; /* by copy: FRAGs */
            add_fault(&sc, SN_FAULT_TYPE, 0, 0, op, kinds[k]);
            sr_world *w = run(&sc);
            placed += w->sn.placed;
            dropped += w->sn.placed_dropped;
            runs++;
            sr_del(w);
        }
        for (int rail = 0; rail < 2; rail++) {
            sr_scenario sc = make(m, 4, 2, 2, 900 + op);
            sc.place = 1;
            sc.rdma = BFO_RDMA_OFF;
            add_fault(&sc, SN_FAULT_RAIL_DOWN, 0, rail, op, 0);
            sr_world *w = run(&sc);
            all_ok(w);
            placed += w->sn.placed;
            dropped += w->sn.placed_dropped;
            runs++;
            sr_del(w);
        }
    }
    print_message("%llu runs, %llu FRAGs read in place, %llu of them dropped (their receive gone)\n",
                  (unsigned long long)runs, (unsigned long long)placed, (unsigned long long)dropped);
    assert_true(placed > runs); /* several per run: the path is taken */
}

/* A synchronous send of an eager size completes only once its receive,
 * posted late, matched it; a plain one completes at once. */
static void test_sync_send_completes_only_after_its_late_receive_matched(void **state)
{
    sr_scenario sc = make(NULL, 0, 2, 2, 32);
    (void)state;
    sc.nmsgs = 3;
    sc.msgs[0] = (sr_msg){ .src = 0, .dst = 1, .tag = 0, .size = 64, .sync = 1, .late = 1 };
    sc.msgs[1] = (sr_msg){ .src = 0, .dst = 1, .tag = 1, .size = 64, .late = 1 };
    sc.msgs[2] = (sr_msg){ .src = 1, .dst = 0, .tag = 2, .size = 30000, .sync = 1, .late = 1 };
    sr_world *w = sr_new(&sc);
    sr_advance(w, SR_LATE_NS / 2);
    assert_false(bfo_test(&w->sreq[0]));
    assert_true(bfo_test(&w->sreq[1])); /* eager: delivered, not matched */
    assert_false(bfo_test(&w->sreq[2]));
    sr_go(w);
    sr_result res;
    assert_true(sr_judge(w, &res));
    assert_int_equal(res.early_syncs, 0);
    all_ok(w);
    sr_del(w);
}

/* The same under a fault on its RNDV or its ACK (the proof of the match). */
static void test_sync_send_under_faults_completes_once_after_the_match(void **state)
{
    static const int types[] = { BFO_FRAG_RNDV, BFO_FRAG_ACK };
    static const int kinds[] = { SN_LOSE, SN_DELIVER_ERROR };
    (void)state;
    for (int t = 0; t < 2; t++)
        for (int k = 0; k < 2; k++) {
            sr_scenario sc = make(NULL, 0, 2, 2, (uint64_t)(40 + t * 2 + k));
            sc.nmsgs = 2;
            sc.msgs[0] = (sr_msg){ .src = 0, .dst = 1, .tag = 0, .size = 64, .sync = 1, .late = 1 };
            sc.msgs[1] = (sr_msg){ .src = 0, .dst = 1, .tag = 1, .size = 10, .sync = 1 };
            add_fault(&sc, SN_FAULT_TYPE, types[t], 0, 1, kinds[k]);
            sr_world *w = run(&sc);
            all_ok(w);
            assert_int_equal(w->early_syncs, 0);
            assert_int_equal(STAT(w, eagers), 0); /* sync: by rendezvous */
            sr_del(w);
        }
}

/* The tests of send, in the order they run (engine_test_main: a pattern,
 * --shard). */
int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sync_send_completes_only_after_its_late_receive_matched),
        cmocka_unit_test(test_sync_send_under_faults_completes_once_after_the_match),
        cmocka_unit_test(test_mixed_messages_every_protocol_no_fault),
        cmocka_unit_test(test_put_protocol_no_fault),
        cmocka_unit_test(test_one_rail),
        cmocka_unit_test(test_three_ranks_three_rails),
        cmocka_unit_test(test_many_seeds_reorder_across_rails),
        cmocka_unit_test(test_sync_send_of_zero_bytes_without_a_buffer),
        cmocka_unit_test(test_match_failed_but_arrived),
        cmocka_unit_test(test_match_lost),
        cmocka_unit_test(test_rndv_failed_but_arrived),
        cmocka_unit_test(test_rndv_lost),
        cmocka_unit_test(test_ack_failed_but_arrived),
        cmocka_unit_test(test_ack_lost),
        cmocka_unit_test(test_frag_lost_restart_dance),
        cmocka_unit_test(test_frag_failed_but_arrived),
        cmocka_unit_test(test_notify_failed_but_arrived),
        cmocka_unit_test(test_delay_reorders),
        cmocka_unit_test(test_rget_failed_but_arrived),
        cmocka_unit_test(test_get_fin_failed_but_arrived),
        cmocka_unit_test(test_read_failed_restart_dance),
        cmocka_unit_test(test_put_lost_restart_dance),
        cmocka_unit_test(test_put_fin_failed_but_arrived),
        cmocka_unit_test(test_write_failed_but_arrived),
        cmocka_unit_test(test_rdma_rail_lost_message_goes_on_by_copy),
        cmocka_unit_test(test_get_and_put_over_four_rails_use_each_rails_own_key),
        cmocka_unit_test(test_simulated_rdma_refuses_another_rails_key),
        cmocka_unit_test(test_every_single_fault_small),
        cmocka_unit_test(test_frag_read_in_place_under_every_single_fault),
    };
    return engine_test_main(argc, argv, "engine_send", tests, sizeof tests / sizeof tests[0]);
}
