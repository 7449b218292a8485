// SPDX-License-Identifier: BSD-3-Clause
/* test_engine_api.c - the tests of include/fsm/bfo_engine_api.h:
 * the entry points' checks: init errors, bad envelopes, the probes
 * (iprobe, improbe, imrecv).
 * What the engine's tests share is in engine_test.h. */
#include "engine_test.h"

/* Bad envelopes are refused, touching nothing. */
static void test_bad_envelopes_are_invalid(void **state)
{
    uint8_t b[4];
    bfo_request r;
    (void)state;
    sr_scenario sc = make(NULL, 0, 2, 1, 35);
    sr_world *w = sr_new(&sc);
    bfo_engine *e = &w->e[0];
    const bfo_envelope bad_send[] = {
        { 2, 0, 0, 0, 0 }, { -1, 0, 0, 0, 0 }, { 1, 0, -1, 0, 0 }, { 1, 0, 0, -1, 0 },
        { 1, 0, 0, 0, 0x80 },
    };
    const bfo_envelope bad_recv[] = {
        { 2, 0, 0, 0, 0 }, { -2, 0, 0, 0, 0 }, { 1, 0, -2, 0, 0 }, { 1, 0, 0, -2, 0 },
        { 1, 0, 0, 0, BFO_SEND_SYNC },
    };
    for (size_t i = 0; i < sizeof bad_send / sizeof bad_send[0]; i++)
        assert_int_equal(bfo_isend_env(e, &r, b, 4, &bad_send[i], 0), BFO_ERR_INVALID);
    for (size_t i = 0; i < sizeof bad_recv / sizeof bad_recv[0]; i++)
        assert_int_equal(bfo_irecv_env(e, &r, b, 4, &bad_recv[i], 0), BFO_ERR_INVALID);
    assert_int_equal(bfo_isend_env(e, &r, b, 4, NULL, 0), BFO_ERR_INVALID);
    assert_int_equal(bfo_irecv_env(e, &r, b, 4, NULL, 0), BFO_ERR_INVALID);
    assert_int_equal(e->slots_in_use, 0);
    sr_del(w);
}

/* ------------------------------------------- probes (issue 16) ---------- */

static bfo_envelope env_of(int peer, uint32_t ctx, int src, int tag)
{
    bfo_envelope v = { peer, ctx, src, tag, 0 };
    return v;
}

/* bfo_iprobe reports the message it would take (source, tag, length, also
 * of a rendezvous whose data is at the sender) and leaves it there. */
static void test_iprobe_reports_without_receiving(void **state)
{
    static uint8_t big[50000], rbig[50000];
    uint8_t a[5] = "four", r[5];
    bfo_request s1, s2, q1, q2;
    bfo_status st;
    (void)state;
    memset(big, 'z', sizeof big);
    sr_scenario sc = make(NULL, 0, 2, 2, 51);
    sr_world *w = sr_new(&sc);
    bfo_envelope any = env_of(BFO_ANY_SOURCE, 2, BFO_ANY_SOURCE, BFO_ANY_TAG);
    assert_int_equal(bfo_iprobe(&w->e[1], &any, &st, w->sn.now), 0);
    assert_int_equal(bfo_isend(&w->e[0], &s1, big, sizeof big, 1, 2, 3, w->sn.now), BFO_OK);
    assert_int_equal(bfo_isend(&w->e[0], &s2, a, 5, 1, 2, 4, w->sn.now), BFO_OK);
    sr_advance(w, 50000000);
    assert_int_equal(bfo_iprobe(&w->e[1], &any, &st, w->sn.now), 1);
    assert_int_equal(st.source, 0);
    assert_int_equal(st.peer, 0);
    assert_int_equal(st.tag, 3);
    assert_int_equal(st.length, sizeof big);
    bfo_envelope t4 = env_of(0, 2, 0, 4);
    assert_int_equal(bfo_iprobe(&w->e[1], &t4, &st, w->sn.now), 1);
    assert_int_equal(st.length, 5);
    assert_int_equal(bfo_iprobe(&w->e[1], &t4, &st, w->sn.now), 1); /* still there */
    assert_int_equal(w->e[1].uxm_in_use, 2);
    assert_int_equal(bfo_irecv(&w->e[1], &q2, r, 5, 0, 2, 4, w->sn.now), BFO_OK);
    assert_int_equal(bfo_irecv(&w->e[1], &q1, rbig, sizeof rbig, 0, 2, 3, w->sn.now), BFO_OK);
    sr_advance(w, 50000000);
    assert_true(bfo_test(&q1) && bfo_test(&q2) && bfo_test(&s1));
    assert_memory_equal(rbig, big, sizeof big);
    assert_string_equal((char *)r, "four");
    assert_int_equal(bfo_iprobe(&w->e[1], &any, &st, w->sn.now), 0);
    bfo_envelope bad = env_of(0, 2, 0, -5);
    assert_int_equal(bfo_iprobe(&w->e[1], &bad, &st, w->sn.now), BFO_ERR_INVALID);
    assert_int_equal(bfo_iprobe(&w->e[1], &any, NULL, w->sn.now), BFO_ERR_INVALID);
    sr_del(w);
}

/* bfo_improbe takes a rendezvous out of matching (no receive or probe sees
 * it again); a rail dies before bfo_imrecv; the message still arrives. */
static void test_improbe_holds_a_rendezvous_across_a_rail_failure(void **state)
{
    static uint8_t big[300000], rbig[300000], other[8];
    bfo_request s, m, q;
    bfo_status st;
    (void)state;
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = (uint8_t)(i * 13);
    sr_scenario sc = make(NULL, 0, 2, 2, 52);
    sc.rdma = BFO_RDMA_OFF;
    sr_world *w = sr_new(&sc);
    bfo_envelope e3 = env_of(0, 0, 0, 3);
    assert_int_equal(bfo_isend(&w->e[0], &s, big, sizeof big, 1, 0, 3, w->sn.now), BFO_OK);
    sr_advance(w, 50000000);
    assert_int_equal(bfo_improbe(&w->e[1], &m, &e3, &st, w->sn.now), 1);
    assert_int_equal(m.cs, BFO_RECV_ST_CLAIMED);
    assert_int_equal(st.length, sizeof big);
    assert_int_equal(bfo_iprobe(&w->e[1], &e3, &st, w->sn.now), 0);
    assert_int_equal(bfo_irecv(&w->e[1], &q, other, sizeof other, 0, 0, 3, w->sn.now), BFO_OK);
    assert_int_equal(bfo_cancel(&w->e[1], &m, w->sn.now), BFO_ERR_TOO_LATE);
    sn_rail_fails(&w->sn, 0);
    sr_advance(w, 300000000);
    assert_false(bfo_test(&s)); /* its data waits at the sender */
    assert_int_equal(bfo_imrecv(&w->e[1], &m, rbig, sizeof rbig, w->sn.now), BFO_OK);
    assert_int_equal(bfo_imrecv(&w->e[1], &m, rbig, sizeof rbig, w->sn.now), BFO_ERR_INVALID);
    sr_advance(w, 500000000);
    assert_true(bfo_test(&m) && bfo_test(&s));
    assert_int_equal(m.status, BFO_OK);
    assert_int_equal(m.length, sizeof big);
    assert_memory_equal(rbig, big, sizeof big);
    assert_false(bfo_test(&q)); /* the other receive never saw it */
    assert_int_equal(bfo_cancel(&w->e[1], &q, w->sn.now), BFO_OK);
    assert_int_equal(q.status, BFO_ERR_CANCELLED);
    assert_int_equal(w->e[1].uxm_in_use + w->e[1].slots_in_use, 0);
    sr_del(w);
}

/* A held eager message completes even after its peer was given up; a held
 * rendezvous fails then (its rest never comes). */
static void test_imrecv_after_the_peer_is_gone_eager_completes_rendezvous_fails(void **state)
{
    static uint8_t big[20000], rbig[20000];
    uint8_t a[6] = "small", r[6];
    bfo_request s1, s2, m1, m2;
    bfo_status st;
    (void)state;
    sr_scenario sc = make(NULL, 0, 2, 1, 53);
    sc.rdma = BFO_RDMA_OFF;
    sr_world *w = sr_new(&sc);
    bfo_envelope e1 = env_of(0, 0, 0, 1), e2 = env_of(0, 0, 0, 2);
    bfo_isend(&w->e[0], &s1, a, 6, 1, 0, 1, w->sn.now);
    bfo_isend(&w->e[0], &s2, big, sizeof big, 1, 0, 2, w->sn.now);
    sr_advance(w, 50000000);
    assert_int_equal(bfo_improbe(&w->e[1], &m1, &e1, &st, w->sn.now), 1);
    assert_int_equal(bfo_improbe(&w->e[1], &m2, &e2, &st, w->sn.now), 1);
    sn_rail_fails(&w->sn, 0);
    sr_advance(w, 3000000000ull); /* past the grace: peer 0 is given up */
    assert_true(w->e[1].peers[0].unreachable);
    assert_int_equal(m1.cs, BFO_RECV_ST_CLAIMED);
    assert_int_equal(bfo_imrecv(&w->e[1], &m1, r, 6, w->sn.now), BFO_OK);
    assert_int_equal(bfo_imrecv(&w->e[1], &m2, rbig, sizeof rbig, w->sn.now), BFO_OK);
    assert_true(bfo_test(&m1) && bfo_test(&m2));
    assert_int_equal(m1.status, BFO_OK);
    assert_string_equal((char *)r, "small");
    assert_int_equal(m2.status, BFO_ERR_PEER_UNREACHABLE);
    assert_int_equal(w->e[1].uxm_in_use + w->e[1].slots_in_use, 0);
    sr_del(w);
}

static void test_engine_init_errors(void **state)
{
    bfo_config c;
    bfo_engine e;
    bfo_backend be;
    char mem[64];
    (void)state;
    memset(&c, 0, sizeof c);
    memset(&be, 0, sizeof be);
    be.post_send = sn_post_send;
    c.rank = 0;
    c.nranks = 2;
    c.nrails = 0;
    assert_int_equal(bfo_engine_init(&e, &c, &be, mem, sizeof mem, 0), BFO_ERR_INVALID);
    c.nrails = BFO_MAX_RAILS + 1;
    assert_int_equal(bfo_engine_init(&e, &c, &be, mem, sizeof mem, 0), BFO_ERR_INVALID);
    c.nrails = 2;
    c.rdma = 7;
    assert_int_equal(bfo_engine_init(&e, &c, &be, mem, sizeof mem, 0), BFO_ERR_INVALID);
    c.rdma = 0;
    c.data_stages = -1;
    assert_int_equal(bfo_engine_init(&e, &c, &be, mem, sizeof mem, 0), BFO_ERR_INVALID);
    c.data_stages = 0;
    c.max_ops = 10; /* fewer than the requests can need */
    assert_int_equal(bfo_engine_init(&e, &c, &be, mem, sizeof mem, 0), BFO_ERR_INVALID);
    c.max_ops = 0;
    assert_int_equal(bfo_engine_init(&e, &c, &be, mem, sizeof mem, 0), BFO_ERR_NO_MEMORY);
}

/* The tests of api, in the order they run (engine_test_main: a pattern,
 * --shard). */
int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_engine_init_errors),
        cmocka_unit_test(test_bad_envelopes_are_invalid),
        cmocka_unit_test(test_iprobe_reports_without_receiving),
        cmocka_unit_test(test_improbe_holds_a_rendezvous_across_a_rail_failure),
        cmocka_unit_test(test_imrecv_after_the_peer_is_gone_eager_completes_rendezvous_fails),
    };
    return engine_test_main(argc, argv, "engine_api", tests, sizeof tests / sizeof tests[0]);
}
