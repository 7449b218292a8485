// SPDX-License-Identifier: BSD-3-Clause
/* test_sim.c - the simulator itself (sim/) at more ranks than a test's own
 * tables hold (SN_TEST_RANKS): its tables per rank, per link and per
 * message are the run's size, so a run of 64 ranks delivers every message,
 * gives every pool entry back and ends with both ends of every rail
 * agreeing (sr_judge), as one of 2 does.  `bfo sim --ranks 1024` is the
 * same code (make bench-scale); make check-sim runs 64 ranks through the
 * tool. */
#include "bfo_test.h"

#include "bfo_simrun.h"

/* A ring: rank r sends to r + 1, every eighth message by rendezvous. */
static void ring(sr_scenario *sc, int ranks)
{
    memset(sc, 0, sizeof *sc);
    sc->ranks = ranks;
    sc->rails = 2;
    sc->seed = 5;
    sc->nmsgs = ranks;
    for (int r = 0; r < ranks; r++) {
        sc->msgs[r].src = r;
        sc->msgs[r].dst = (r + 1) % ranks;
        sc->msgs[r].tag = r;
        sc->msgs[r].size = r % 8 ? 1000 : 100000;
    }
}

static void assert_all_delivered(const sr_result *res, uint64_t n)
{
    if (!res->passed)
        fail_msg("the run failed: %s", res->why);
    assert_int_equal(res->delivered, n);
    assert_int_equal(res->hung, 0);
    assert_int_equal(res->errored, 0);
    assert_int_equal(res->leaked, 0);
}

/* every engine's timers after every step, as every run of 8 ranks or fewer */
static void test_sim_ring_of_64_ranks_every_message_delivered(void **state)
{
    sr_scenario sc;
    sr_result res;
    (void)state;
    ring(&sc, 64);
    sr_run(&sc, &res);
    assert_all_delivered(&res, 64);
    assert_true(res.gets > 0); /* the rendezvous ones went by GET (rails that can RDMA) */
}

/* An exchange (bfo sim --exchange): every rank to 6 peers, rank + 1, + 2, ...
 * + 32; the engines' timers every 10 ms of simulated time (bfo sim's beyond
 * 8 ranks), their pools growing as pml/bfo's do. */
static void test_sim_exchange_of_64_ranks_every_message_delivered(void **state)
{
    sr_scenario sc;
    sr_result res;
    (void)state;
    memset(&sc, 0, sizeof sc);
    sc.ranks = 64;
    sc.rails = 2;
    sc.seed = 9;
    sc.exchange = sr_exchange_max(64);
    sc.exchange_size = 1024;
    sc.progress_ns = 10000000;
    sc.grow = 1;
    assert_int_equal(sc.exchange, 6);
    sr_world *w = sr_new(&sc);
    assert_int_equal(w->nmsgs, 64 * 6);
    for (int i = 0; i < w->nmsgs; i++) { /* rank r to r + 2^j, j < 6: 6 peers, none itself */
        assert_int_equal(w->msg[i].src, i / 6);
        assert_int_equal(w->msg[i].dst, (i / 6 + (1 << (i % 6))) % 64);
    }
    sr_go(w);
    sr_judge(w, &res);
    /* what a peer more costs the engine: pml/bfo's 848 B on 2 rails (its
     * pools grow: no control operations kept per peer) */
    assert_true(res.mem_per_peer > 0 && res.mem_per_peer < 1024);
    assert_int_equal(res.mem_bytes, w->mem_bytes);
    sr_del(w);
    assert_all_delivered(&res, 64 * 6);
}

/* Rail 0 fails for every pair at once, mid-run (at the 2,000th of some
 * 3,300 operations, messages on it): every message still arrives, over
 * rail 1. */
static void test_sim_rail_down_under_64_ranks_every_message_delivered(void **state)
{
    sr_scenario sc;
    sr_result res;
    (void)state;
    memset(&sc, 0, sizeof sc);
    sc.ranks = 64;
    sc.rails = 2;
    sc.seed = 11;
    sc.exchange = 4;
    sc.exchange_size = 2000;
    sc.progress_ns = 10000000;
    sc.nfaults = 1;
    sc.faults[0].what = SN_FAULT_RAIL_DOWN;
    sc.faults[0].rail = 0;
    sc.faults[0].n = 2000;
    sr_run(&sc, &res);
    assert_all_delivered(&res, 64 * 4);
    assert_true(res.rail_bytes[0] > 0); /* messages went on rail 0 before it failed */
    assert_true(res.mapouts > 0);       /* and the ranks found out */
}

/* Every rail down before any rank connected: a ring of 3 (0 > 1 > 2 > 0),
 * so each rank's receive names a peer that never reaches it.  The sender
 * learns it at its connect; the receiver, whose receive named a peer never
 * needed, needs it after a heartbeat (bfo__work_sweep) and learns it too:
 * every receive and send ends PEER_UNREACHABLE, none hangs (before, the 2
 * receives whose sender's connect failed first waited for good). */
static void test_sim_receive_from_a_peer_never_connected_ends_when_every_rail_is_down(void **state)
{
    sr_scenario sc;
    sr_result res;
    (void)state;
    memset(&sc, 0, sizeof sc);
    sc.ranks = 3;
    sc.rails = 2;
    sc.seed = 1;
    sc.nmsgs = 3;
    for (int r = 0; r < 3; r++) {
        sc.msgs[r].src = r;
        sc.msgs[r].dst = (r + 1) % 3;
        sc.msgs[r].tag = r;
        sc.msgs[r].size = 5120;
    }
    sc.nfaults = 2;
    for (int k = 0; k < 2; k++) {
        sc.faults[k].what = SN_FAULT_RAIL_DOWN;
        sc.faults[k].rail = k;
        sc.faults[k].n = 1;
    }
    sr_run(&sc, &res);
    if (!res.passed)
        fail_msg("the run failed: %s", res.why);
    assert_int_equal(res.hung, 0);
    assert_int_equal(res.leaked, 0);
    assert_int_equal(res.delivered, 0);
    assert_int_equal(res.errored, 3);
    assert_int_equal(res.unreachable_errors, 6); /* each message's send and receive */
}

/* The ranks leave at the end: every BYE taken, no rail of a peer that
 * said BYE fails afterwards (the BYE table is ranks x ranks). */
static void test_sim_leave_of_16_ranks_every_bye_taken(void **state)
{
    sr_scenario sc;
    sr_result res;
    (void)state;
    ring(&sc, 16);
    sc.leave = 1;
    sc.leave_gap_ns = 3000000;
    sr_run(&sc, &res);
    assert_all_delivered(&res, 16);
    assert_int_equal(res.left_failures, 0);
    assert_int_equal(res.leave_timeouts, 0);
    assert_true(res.byes_taken >= 16); /* each rank's two neighbours at least */
}

/* The tables per link: one direction of one rail between two ranks of 40
 * turned silent is that entry alone. */
static void test_sim_path_fault_between_two_of_40_ranks_is_theirs_alone(void **state)
{
    simnet sn;
    (void)state;
    sn_init(&sn, 40, 3, 1);
    assert_int_equal(sn_rail_faulty(&sn, 2), 0);
    sn_set_path(&sn, 37, 38, 2, SN_PATH_SILENT);
    assert_int_equal(sn.path[sn_link(&sn, 37, 38, 2)], SN_PATH_SILENT);
    assert_int_equal(sn.path[sn_link(&sn, 38, 37, 2)], SN_PATH_OPEN);
    assert_int_equal(sn.path[sn_link(&sn, 37, 38, 1)], SN_PATH_OPEN);
    assert_int_equal(sn.path[sn_link(&sn, 37, 39, 0)], SN_PATH_OPEN);
    assert_int_equal(sn_rail_faulty(&sn, 2), 1);
    assert_int_equal(sn_rail_faulty(&sn, 1), 0);
    assert_int_equal(sn_rail_faulty(&sn, 0), 0);
    for (int a = 0; a < 40; a++) /* every entry its own */
        for (int b = 0; b < 40; b++)
            for (int r = 0; r < 3; r++)
                assert_int_equal(sn_link(&sn, a, b, r), ((size_t)a * 40 + (size_t)b) * 3 + (size_t)r);
    sn_free(&sn);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sim_ring_of_64_ranks_every_message_delivered),
        cmocka_unit_test(test_sim_exchange_of_64_ranks_every_message_delivered),
        cmocka_unit_test(test_sim_rail_down_under_64_ranks_every_message_delivered),
        cmocka_unit_test(test_sim_receive_from_a_peer_never_connected_ends_when_every_rail_is_down),
        cmocka_unit_test(test_sim_leave_of_16_ranks_every_bye_taken),
        cmocka_unit_test(test_sim_path_fault_between_two_of_40_ranks_is_theirs_alone),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
