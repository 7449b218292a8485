// SPDX-License-Identifier: BSD-3-Clause
/* test_engine_init.c - the tests of include/fsm/bfo_engine_init.h: the
 * memory bfo_engine_mem_size asks for and bfo_engine_init carves, what a
 * peer costs in it (docs/engine-design.md, "What an idle peer costs"), and
 * that a peer's rails are the job's nrails, no more.
 * What the engine's tests share is in engine_test.h. */
/* a poisoned gap after each peer's rails in an ASan build (make SAN=1
 * check): a read of rail[nrails] in what these tests run is reported */
#define BFO_RAIL_GAPS 1
#include "engine_test.h"

#if defined(BFO__ASAN)
int __asan_address_is_poisoned(void const volatile *addr);
#endif

static void *no_grow(void *ctx, size_t bytes)
{
    (void)ctx;
    (void)bytes;
    return NULL;
}

/* The configuration pml/bfo gives the engine (mca_pml_bfo_init, its MCA
 * parameters at their defaults), with a grow function as bfo_net sets one. */
static bfo_config pml_config(int nranks, int nrails, int grow)
{
    bfo_config c;
    memset(&c, 0, sizeof c);
    c.nranks = nranks;
    c.nrails = nrails;
    c.done_queue = 1;
    c.max_requests = 4096;
    c.max_unexpected = 1024;
    if (grow)
        c.grow = no_grow;
    return c;
}

/* What one more peer adds to bfo_engine_mem_size, from n to n + k ranks. */
static size_t per_peer(int n, int k, int nrails, int grow)
{
    bfo_config a = pml_config(n, nrails, grow), b = pml_config(n + k, nrails, grow);
    size_t sa = bfo_engine_mem_size(&a), sb = bfo_engine_mem_size(&b);
    assert_true(sb > sa);
    return (sb - sa + (size_t)k - 1) / (size_t)k;
}

/* Issue 37: an idle peer costs the engine under 2 KiB on 2 rails.  It was
 * 5,128 B: a bfo_peer of BFO_MAX_RAILS (8) rails, 2,952 B whatever the
 * job's rails, and 4 control operations per (peer, rail) of 272 B each
 * kept in the op pool even where the pool grows (bfo_net's). */
static void test_an_idle_peer_costs_under_2_KiB_of_engine_memory_on_two_rails(void **state)
{
    (void)state;
    for (int r = 1; r <= 4; r *= 2)
        print_message("engine memory per peer, %d rail%s: %zu B (pools that grow, as bfo_net's), "
                      "%zu B (fixed pools); sizeof(bfo_peer) %zu, bfo_rail_link %zu\n",
                      r, r > 1 ? "s" : "", per_peer(64, 64, r, 1), per_peer(64, 64, r, 0), sizeof(bfo_peer),
                      sizeof(bfo_rail_link));
    assert_true(per_peer(64, 64, 2, 1) < 2048);
    assert_true(per_peer(1024, 1024, 2, 1) < 2048);
    assert_true(per_peer(2, 1, 2, 1) < 2048);
    /* the rails the job has, not BFO_MAX_RAILS: one rail more costs one
     * bfo_rail_link more (and, with fixed pools, its control budget) */
    assert_int_equal(per_peer(64, 64, 2, 1) - per_peer(64, 64, 1, 1), sizeof(bfo_rail_link));
    assert_int_equal(per_peer(64, 64, 4, 1) - per_peer(64, 64, 2, 1), 2 * sizeof(bfo_rail_link));
    assert_int_equal(per_peer(64, 64, 2, 0) - per_peer(64, 64, 2, 1), 4 * 2 * sizeof(bfo_op));
}

/* Each peer's rails are its own nrails entries of the engine's memory:
 * apart from one another, from the peers and from the block's other
 * pools, and (ASan) with a poisoned gap after them, so that a read of
 * rail[nrails] anywhere in the engine is reported.  bfo__rail_at, the
 * tracers' way from a rail step to its peer, finds each one and nothing
 * else. */
static void test_a_peers_rails_are_its_nrails_and_no_more(void **state)
{
    (void)state;
    for (int nrails = 1; nrails <= 3; nrails++) {
        bfo_config c;
        bfo_engine e;
        bfo_backend be;
        memset(&c, 0, sizeof c);
        memset(&be, 0, sizeof be);
        be.post_send = sn_post_send;
        c.rank = 1;
        c.nranks = 5;
        c.nrails = nrails;
        size_t need = bfo_engine_mem_size(&c);
        char *mem = (char *)malloc(need);
        assert_non_null(mem);
        assert_int_equal(bfo_engine_init(&e, &c, &be, mem, need, 1), BFO_OK);
        for (int p = 0; p < c.nranks; p++) {
            const char *lo = (const char *)e.peers[p].rail, *hi = lo + sizeof(bfo_rail_link) * (size_t)nrails;
            assert_true(lo >= mem && hi <= mem + need);
            assert_true(hi <= (const char *)e.peers || lo >= (const char *)(e.peers + c.nranks));
            assert_true(hi <= (const char *)bfo__op_at(&e, 0) || lo >= (const char *)bfo__op_at(&e, c.max_ops));
            for (int q = 0; q < c.nranks; q++) {
                const char *qlo = (const char *)e.peers[q].rail;
                assert_true(q == p || hi <= qlo || lo >= qlo + sizeof(bfo_rail_link) * (size_t)nrails);
            }
            for (int k = 0; k < nrails; k++) {
                int rail = -1;
                assert_int_equal(e.peers[p].rail[k].fsm.cs, BFO_RAIL_ST_DORMANT);
                assert_int_equal(bfo__rail_at(&e, &e.peers[p].rail[k], &rail), p);
                assert_int_equal(rail, k);
                assert_int_equal(bfo__rail_at(&e, &e.peers[p].rail[k].det, NULL), -1);
            }
            assert_int_equal(bfo__rail_at(&e, &e.peers[p], NULL), -1);
#if defined(BFO__ASAN)
            assert_true(__asan_address_is_poisoned(&e.peers[p].rail[nrails]));
#endif
        }
        free(mem);
    }
}

/* A block given to bfo_engine_init again (a fuzzer's, an embedder's
 * restart) with more rails: what were the gaps after the rails of the
 * first are rails now, written without a word from ASan. */
static void test_a_block_taken_again_with_more_rails_is_the_engines_again(void **state)
{
    bfo_config c;
    bfo_engine e;
    bfo_backend be;
    (void)state;
    memset(&c, 0, sizeof c);
    memset(&be, 0, sizeof be);
    be.post_send = sn_post_send;
    c.nranks = 4;
    c.nrails = 4;
    size_t need = bfo_engine_mem_size(&c);
    char *mem = (char *)malloc(need);
    assert_non_null(mem);
    c.nrails = 1;
    assert_true(bfo_engine_mem_size(&c) < need);
    assert_int_equal(bfo_engine_init(&e, &c, &be, mem, need, 1), BFO_OK);
    c.nrails = 4;
    assert_int_equal(bfo_engine_init(&e, &c, &be, mem, need, 1), BFO_OK);
    for (int p = 0; p < c.nranks; p++)
        for (int k = 0; k < c.nrails; k++)
            assert_int_equal(e.peers[p].rail[k].fsm.cs, BFO_RAIL_ST_DORMANT);
    free(mem);
}

/* Messages both ways between three ranks, each way eager, rendezvous and
 * RDMA, over 1 and over 3 rails: every peer's rails in use, first use
 * included (make check-san runs it, as every engine test, with the gaps
 * poisoned). */
static void test_messages_over_one_and_three_rails_with_rails_sized_by_the_job(void **state)
{
    (void)state;
    for (int rails = 1; rails <= 3; rails += 2) {
        msgspec m[6] = { { 0, 1, 10 }, { 1, 0, 5000 }, { 2, 0, 200000 },
                         { 0, 2, 70000 }, { 1, 2, 100 }, { 2, 1, 300000 } };
        sr_scenario sc = make(m, 6, 3, rails, 37 + (uint64_t)rails);
        sr_result res;
        assert_int_equal(sr_run(&sc, &res), 1);
        assert_int_equal(res.delivered, 6);
        assert_int_equal(res.hung + res.lost + res.corrupt + res.leaked, 0);
    }
}

/* The tests of init, in the order they run (engine_test_main: a pattern,
 * --shard). */
int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_an_idle_peer_costs_under_2_KiB_of_engine_memory_on_two_rails),
        cmocka_unit_test(test_a_peers_rails_are_its_nrails_and_no_more),
        cmocka_unit_test(test_a_block_taken_again_with_more_rails_is_the_engines_again),
        cmocka_unit_test(test_messages_over_one_and_three_rails_with_rails_sized_by_the_job),
    };
    return engine_test_main(argc, argv, "engine_init", tests, sizeof tests / sizeof tests[0]);
}
