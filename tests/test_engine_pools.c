// SPDX-License-Identifier: BSD-3-Clause
/* test_engine_pools.c - the tests of include/fsm/bfo_engine_pools.h:
 * memory: pools that grow, full pools that make frames wait, a receive's
 * request slot taken at a rendezvous, the control budget.
 * What the engine's tests share is in engine_test.h. */
#include "engine_test.h"

/* Ops are set up a batch at a time as they are needed, not at init: an
 * engine just initialized has set up none of its max_ops (pml/bfo's
 * 45,584 made 12 MiB resident per rank), and after a thousand messages
 * both ways it has set up a few batches only; a completion naming an op
 * never set up is refused (a forged token), not read.  Before, every op
 * was set up in bfo_engine_init (live would be max_ops). */
static void test_ops_set_up_as_needed_not_at_init(void **state)
{
    enum { N = 1000 };
    static uint8_t out[N][64], in[N][64];
    static bfo_request s[N], r[N];
    (void)state;
    sr_scenario sc = make(NULL, 0, 2, 2, 83);
    sr_world *w = sr_new(&sc);
    for (int i = 0; i < 2; i++) {
        assert_true(w->e[i].cfg.max_ops > 10 * BFO__OPS_BATCH);
        assert_true(w->e[i].opp.live <= BFO__OPS_BATCH); /* the rails' first probes at most */
    }
    sr_advance(w, 1000000); /* rails up */
    for (int i = 0; i < N; i++) {
        const int from = i & 1;
        assert_int_equal(bfo_irecv(&w->e[!from], &r[i], in[i], 64, from, 0, i, w->sn.now), BFO_OK);
        assert_int_equal(bfo_isend(&w->e[from], &s[i], out[i], 64, !from, 0, i, w->sn.now), BFO_OK);
        if (i % 50 == 49)
            sr_advance(w, 100000);
    }
    sr_advance(w, 10000000);
    for (int i = 0; i < N; i++)
        assert_true(bfo_test(&s[i]) && bfo_test(&r[i]) && r[i].status == BFO_OK);
    for (int i = 0; i < 2; i++) {
        print_message("rank %d: %d ops of %d set up after %d messages\n", i, w->e[i].opp.live,
                      w->e[i].cfg.max_ops, N);
        assert_true(w->e[i].opp.live < w->e[i].cfg.max_ops / 4);
        assert_int_equal(w->e[i].opp.live % BFO__OPS_BATCH, 0);
    }
    /* a completion naming an op beyond them: nothing happens */
    const uint64_t posted = w->e[0].stats.ops_posted;
    bfo_engine_completion(&w->e[0], ((uint64_t)1 << 32) | (uint32_t)(w->e[0].opp.live + 5), 1);
    assert_int_equal(w->e[0].stats.ops_posted, posted);
    sr_go(w);
    sr_del(w);
}

/* A receive takes its handle at bfo_irecv, so a rendezvous it matches is
 * always answered with one; with every request slot in use, bfo_irecv says
 * BFO_ERR_NO_MEMORY as bfo_isend does.  Found by tests/fuzz/fuzz_engine:
 * a receive that matched when every handle was taken answered with a null
 * handle (an ACK the peer rejects) and its operations passed for the
 * engine's own control messages. */
static void test_receive_reserves_a_slot_from_post_takes_its_handle_at_a_rendezvous_no_memory_when_none_is_left(void **state)
{
    enum { BIG = 100000 };
    static uint8_t out[4][BIG], in[4][BIG];
    bfo_request s1[3], r1[2], s0, r0[3], extra;
    bfo_config cfg;
    (void)state;
    memset(&cfg, 0, sizeof cfg);
    cfg.max_requests = 4;
    sr_scenario sc = make(NULL, 0, 2, 2, 82);
    sc.cfg = &cfg;
    sr_world *w = sr_new(&sc);
    sr_advance(w, 1000000); /* rails up */
    for (int i = 0; i < 4; i++)
        for (int k = 0; k < BIG; k++)
            out[i][k] = sr_pattern(i, (size_t)k);
    for (int i = 0; i < 3; i++) /* rendezvous nobody receives yet: 3 handles held */
        assert_int_equal(bfo_isend(&w->e[1], &s1[i], out[i], BIG, 0, 0, i, w->sn.now), BFO_OK);
    assert_int_equal(bfo_irecv(&w->e[1], &r1[0], in[3], BIG, BFO_ANY_SOURCE, 0, 9, w->sn.now), BFO_OK);
    assert_int_equal(w->e[1].slots_in_use, 4);
    /* posted, it holds a reservation, not a handle: the slot stays free for it */
    assert_true(bfo_handle_is_null(r1[0].self));
    assert_true(w->e[1].slot_free >= 0);
    assert_int_equal(bfo_irecv(&w->e[1], &r1[1], in[0], BIG, 0, 0, BFO_ANY_TAG, w->sn.now),
                     BFO_ERR_NO_MEMORY);
    assert_int_equal(bfo_isend(&w->e[1], &extra, out[0], 8, 0, 0, 1, w->sn.now), BFO_ERR_NO_MEMORY);
    assert_int_equal(bfo_isend(&w->e[0], &s0, out[3], BIG, 1, 0, 9, w->sn.now), BFO_OK);
    sr_advance(w, 50000000);
    assert_true(bfo_test(&s0) && bfo_test(&r1[0]));
    assert_int_equal(r1[0].status, BFO_OK);
    assert_false(bfo_handle_is_null(r1[0].self)); /* taken when the rendezvous matched */
    assert_memory_equal(in[3], out[3], BIG);
    assert_int_equal(w->e[1].slots_in_use, 3);
    /* an eager message's receive never takes one */
    assert_int_equal(bfo_irecv(&w->e[1], &r1[1], in[0], 8, 0, 0, 7, w->sn.now), BFO_OK);
    assert_int_equal(bfo_isend(&w->e[0], &s0, out[3], 8, 1, 0, 7, w->sn.now), BFO_OK);
    sr_advance(w, 10000000);
    assert_true(bfo_test(&s0) && bfo_test(&r1[1]));
    assert_int_equal(r1[1].status, BFO_OK);
    assert_true(bfo_handle_is_null(r1[1].self));
    assert_int_equal(w->e[1].slots_in_use, 3);
    for (int i = 0; i < 3; i++)
        assert_int_equal(bfo_irecv(&w->e[0], &r0[i], in[i], BIG, 1, 0, i, w->sn.now), BFO_OK);
    sr_advance(w, 50000000);
    for (int i = 0; i < 3; i++) {
        assert_true(bfo_test(&s1[i]) && bfo_test(&r0[i]));
        assert_int_equal(r0[i].status, BFO_OK);
        assert_memory_equal(in[i], out[i], BIG);
    }
    for (int i = 0; i < 2; i++) {
        assert_int_equal(w->e[i].slots_in_use, 0);
        assert_int_equal(w->e[i].ops_in_use - w->e[i].ctl_in_use, 0); /* probes may be out */
        assert_int_equal(w->e[i].stats.protocol_violations + w->e[i].stats.malformed_frames, 0);
    }
    sr_del(w);
}

/* Engine control messages have a budget: past it, a NOTIFY that needs a
 * NACK is refused with BFO_ERR_AGAIN (offered again later), never dropped,
 * never an allocation. */
static void test_control_budget_back_pressure(void **state)
{
    uint8_t buf[64];
    bfo_hdr_restart nt = { .type = BFO_FRAG_NOTIFY, .flags = 0, .rseq = 5, .ctx = 0, .seq = 1, .src = 1, .sreq = { 1, 1 }, .dreq = { 9, 9 } };
    int again = 0, taken = 0;
    (void)state;
    sr_scenario sc = make(NULL, 0, 2, 1, 47);
    sc.connect_at_init = 1; /* about rails UP from the start, not their setup */
    sr_world *w = sr_new(&sc);
    sr_advance(w, 1000000);
    size_t n = bfo_hdr_restart_encode(&nt, buf, sizeof buf);
    for (int k = 0; k < 100; k++) {
        int rc = bfo_engine_frame(&w->e[1], 0, 0, buf, n, w->sn.now);
        again += rc == BFO_ERR_AGAIN;
        taken += rc == BFO_ERR_STALE;
    }
    assert_int_equal(taken, bfo__ctl_budget(&w->e[1].cfg) - w->e[1].ctl_in_use + taken);
    assert_true(again > 0);
    sr_advance(w, 10000000); /* the NACKs complete */
    assert_int_equal(bfo_engine_frame(&w->e[1], 0, 0, buf, n, w->sn.now), BFO_ERR_STALE);
    sr_go(w);
    sr_del(w);
}

#define MANY 100000

/* 100,000 eager sends complete before any receive is posted (they wait,
 * unexpected, at the receiver), then 100,000 receives take them; then
 * 100,000 receives wait before their sends.  The pools grow from the
 * default sizes; a second round of the same allocates nothing. */
static void test_hundred_thousand_eager_sends_before_their_receives(void **state)
{
    static grow_log g;
    bfo_config cfg;
    bfo_request *s = calloc(MANY, sizeof *s), *r = calloc(MANY, sizeof *r);
    uint32_t *in = calloc(MANY, sizeof *in), *out = calloc(MANY, sizeof *out);
    (void)state;
    assert_true(s && r && in && out);
    memset(&g, 0, sizeof g);
    memset(&cfg, 0, sizeof cfg);
    cfg.grow = test_grow;
    cfg.grow_ctx = &g;
    sr_scenario sc = make(NULL, 0, 2, 2, 61);
    sc.cfg = &cfg;
    sr_world *w = sr_new(&sc);
    sr_advance(w, 20000000);
    for (int round = 0; round < 2; round++) {
        int calls_before = g.calls;
        for (int i = 0; i < MANY; i++) {
            out[i] = (uint32_t)(i * 2654435761u);
            assert_int_equal(bfo_isend(&w->e[0], &s[i], &out[i], 4, 1, 5, i, w->sn.now), BFO_OK);
            if (i % 500 == 499) /* the simulator's queue is a list: keep it short */
                sr_advance(w, 1000000);
        }
        for (int k = 0; k < 100 && !bfo_test(&s[MANY - 1]); k++)
            sr_advance(w, 10000000);
        for (int i = 0; i < MANY; i++)
            assert_true(bfo_test(&s[i]) && s[i].status == BFO_OK);
        assert_int_equal(w->e[1].uxm_in_use, MANY);
        for (int i = MANY - 1; i >= 0; i--) /* the last first: each a search */
            if (i % 1000 == 0 || i == MANY - 1)
                assert_int_equal(bfo_irecv(&w->e[1], &r[i], &in[i], 4, 0, 5, i, w->sn.now), BFO_OK);
        for (int i = 0; i < MANY; i++)
            if (!(i % 1000 == 0 || i == MANY - 1))
                assert_int_equal(bfo_irecv(&w->e[1], &r[i], &in[i], 4, 0, 5, i, w->sn.now), BFO_OK);
        for (int i = 0; i < MANY; i++) {
            assert_true(bfo_test(&r[i]));
            assert_int_equal(in[i], out[i]);
        }
        assert_int_equal(w->e[1].uxm_in_use, 0);
        if (round == 1)
            assert_int_equal(g.calls, calls_before); /* the steady state allocates nothing */
    }
    /* receives first */
    for (int i = 0; i < MANY; i++)
        assert_int_equal(bfo_irecv(&w->e[1], &r[i], &in[i], 4, 0, 6, i, w->sn.now), BFO_OK);
    assert_int_equal(w->e[1].slots_in_use, MANY);
    for (int i = 0; i < MANY; i++) {
        assert_int_equal(bfo_isend(&w->e[0], &s[i], &out[i], 4, 1, 6, i, w->sn.now), BFO_OK);
        if (i % 500 == 499)
            sr_advance(w, 1000000);
    }
    for (int k = 0; k < 100 && !bfo_test(&r[MANY - 1]); k++)
        sr_advance(w, 10000000);
    for (int i = 0; i < MANY; i++)
        assert_true(bfo_test(&r[i]) && in[i] == out[i]);
    print_message("   grew %d times, %zu bytes in all\n", g.calls, g.bytes);
    assert_int_equal(w->e[0].grow_failures + w->e[1].grow_failures, 0);
    sr_del(w);
    grow_free(&g);
    free(s);
    free(r);
    free(in);
    free(out);
}

/* Without grow, past the pools' sizes: the frames wait at the receiver
 * (back-pressure), nothing is lost, and once receives come every message
 * arrives. */
static void test_full_pools_make_frames_wait_never_lose_them(void **state)
{
    enum { N = 600 };
    static bfo_request s[N], r[N];
    static uint8_t out[N][1000], in[N][1000];
    bfo_config cfg;
    (void)state;
    memset(&cfg, 0, sizeof cfg);
    cfg.max_unexpected = 16;
    sr_scenario sc = make(NULL, 0, 2, 1, 62);
    sc.cfg = &cfg;
    sr_world *w = sr_new(&sc);
    for (int i = 0; i < N; i++) {
        memset(out[i], i, sizeof out[i]);
        assert_int_equal(bfo_isend(&w->e[0], &s[i], out[i], sizeof out[i], 1, 0, i, w->sn.now),
                         BFO_OK);
    }
    sr_advance(w, 200000000);
    assert_true(w->e[1].uxm_in_use <= 16);
    assert_true(w->e[1].ux_bytes_in_use <= 16 * 1024);
    for (int i = 0; i < N; i++)
        assert_int_equal(bfo_irecv(&w->e[1], &r[i], in[i], sizeof in[i], 0, 0, i, w->sn.now),
                         BFO_OK);
    for (int k = 0; k < 200 && !(bfo_test(&r[N - 1]) && bfo_test(&s[N - 1])); k++)
        sr_advance(w, 10000000);
    for (int i = 0; i < N; i++) {
        assert_true(bfo_test(&r[i]) && bfo_test(&s[i]));
        assert_int_equal(r[i].status, BFO_OK);
        assert_memory_equal(in[i], out[i], sizeof out[i]);
    }
    assert_int_equal(w->e[1].stats.mapouts, 0);
    sr_del(w);
}

/* The tests of pools, in the order they run (engine_test_main: a pattern,
 * --shard). */
int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hundred_thousand_eager_sends_before_their_receives),
        cmocka_unit_test(test_ops_set_up_as_needed_not_at_init),
        cmocka_unit_test(test_full_pools_make_frames_wait_never_lose_them),
        cmocka_unit_test(test_control_budget_back_pressure),
        cmocka_unit_test(test_receive_reserves_a_slot_from_post_takes_its_handle_at_a_rendezvous_no_memory_when_none_is_left),
    };
    return engine_test_main(argc, argv, "engine_pools", tests, sizeof tests / sizeof tests[0]);
}
