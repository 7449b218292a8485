// SPDX-License-Identifier: BSD-3-Clause
/* test_engine_recv.c - the tests of include/fsm/bfo_engine_recv.h:
 * the receiving side: truncation, a rendezvous from a peer given up.
 * What the engine's tests share is in engine_test.h. */
#include "engine_test.h"

/* Eager and rendezvous (which then goes by copy, RDMA or not): the buffer
 * gets what fits, the status says TRUNCATE, the length the real size. */
static void test_truncation(void **state)
{
    static uint8_t big[200000], small[50];
    (void)state;
    memset(big, 'x', sizeof big);
    for (size_t len = 100; len <= sizeof big; len += sizeof big - 100) {
        bfo_request s, r;
        sr_scenario sc = make(NULL, 0, 2, 2, 8);
        sr_world *w = sr_new(&sc);
        memset(small, 0, sizeof small);
        bfo_irecv(&w->e[1], &r, small, sizeof small, 0, 0, 1, w->sn.now);
        bfo_isend(&w->e[0], &s, big, len, 1, 0, 1, w->sn.now);
        sr_advance(w, 100000000);
        assert_true(bfo_test(&r) && bfo_test(&s));
        assert_int_equal(r.status, BFO_ERR_TRUNCATE);
        assert_int_equal(r.length, len);
        assert_int_equal(small[49], 'x');
        assert_int_equal(s.status, BFO_OK);
        assert_int_equal(w->sn.regs_live, 0);
        sr_del(w);
    }
}

/* A rendezvous that waited in the unexpected queue while its sender was
 * given up can never finish: the receive that takes it fails with
 * BFO_ERR_PEER_UNREACHABLE (found by tests/fuzz/fuzz_engine: it waited
 * for good, nothing left to fail it). */
static void test_unexpected_rendezvous_of_a_peer_given_up_fails_its_receive(void **state)
{
    enum { BIG = 100000 };
    static uint8_t out[BIG], in[2][BIG];
    bfo_request s, r[2];
    (void)state;
    for (int rdma = BFO_RDMA_AUTO; rdma <= BFO_RDMA_OFF; rdma += BFO_RDMA_OFF) { /* RGET, RNDV */
        sr_scenario sc = make(NULL, 0, 2, 2, 83);
        sc.rdma = rdma;
        sr_world *w = sr_new(&sc);
        sr_advance(w, 1000000);
        assert_int_equal(bfo_isend(&w->e[0], &s, out, BIG, 1, 0, 5, w->sn.now), BFO_OK);
        sr_advance(w, 5000000);
        assert_int_equal(w->e[1].uxm_in_use, 1); /* its first frame waits unexpected */
        give_up(&w->e[1], 0);
        assert_int_equal(bfo_irecv(&w->e[1], &r[0], in[0], BIG, BFO_ANY_SOURCE, 0, BFO_ANY_TAG,
                                   w->sn.now),
                         BFO_OK);
        assert_int_equal(bfo_irecv(&w->e[1], &r[1], in[1], BIG, 0, 0, 5, w->sn.now),
                         BFO_ERR_PEER_UNREACHABLE);
        sr_advance(w, 100000000);
        for (int i = 0; i < 2; i++) {
            assert_true(bfo_test(&r[i]));
            assert_int_equal(r[i].status, BFO_ERR_PEER_UNREACHABLE);
        }
        assert_int_equal(w->e[1].uxm_in_use, 0);
        assert_int_equal(w->e[1].slots_in_use, 0);
        assert_int_equal(w->e[1].ops_in_use - w->e[1].ctl_in_use, 0);
        sr_del(w);
    }
}

/* The tests of recv, in the order they run (engine_test_main: a pattern,
 * --shard). */
int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_truncation),
        cmocka_unit_test(test_unexpected_rendezvous_of_a_peer_given_up_fails_its_receive),
    };
    return engine_test_main(argc, argv, "engine_recv", tests, sizeof tests / sizeof tests[0]);
}
