// SPDX-License-Identifier: BSD-3-Clause
/* test_engine_match.c - the tests of include/fsm/bfo_engine_match.h:
 * matching and credits: contexts, sends to self, wildcards, the credit
 * window and eager limits that differ.
 * What the engine's tests share is in engine_test.h. */
#include "engine_test.h"

/* Rails come up; both messages arrive before any receive is posted. */
static void test_unexpected_any_source_any_tag(void **state)
{
    uint8_t a[16] = "from one", b[16] = "from two", r1[16], r2[16];
    bfo_request s1, s2, q1, q2;
    (void)state;
    sr_scenario sc = make(NULL, 0, 3, 2, 7);
    sr_world *w = sr_new(&sc);
    assert_int_equal(bfo_isend(&w->e[1], &s1, a, 9, 0, 0, 5, w->sn.now), BFO_OK);
    assert_int_equal(bfo_isend(&w->e[2], &s2, b, 9, 0, 0, 6, w->sn.now), BFO_OK);
    for (int k = 0; k < 200; k++)
        sn_step(&w->sn);
    assert_int_equal(w->e[0].uxm_in_use, 2);
    /* tag 6 first: it must skip the other queued message if that came first */
    assert_int_equal(bfo_irecv(&w->e[0], &q2, r2, sizeof r2, BFO_ANY_SOURCE, 0, 6, w->sn.now),
                     BFO_OK);
    assert_int_equal(bfo_irecv(&w->e[0], &q1, r1, sizeof r1, BFO_ANY_SOURCE, 0, BFO_ANY_TAG,
                               w->sn.now), BFO_OK);
    assert_true(bfo_test(&q1) && bfo_test(&q2));
    assert_int_equal(q2.source, 2);
    assert_string_equal((char *)r2, "from two");
    assert_int_equal(q1.source, 1);
    assert_int_equal(q1.tag, 5);
    assert_string_equal((char *)r1, "from one");
    sr_del(w);
}

/* ------------------------------------------------ MPI's envelope (issue 16) */

/* The layer's ranks of that test: rank 41 of its context is engine peer 0. */
static int rank_41_is_peer_0(void *arg, uint32_t ctx, uint32_t src, int peer)
{
    (void)arg;
    (void)ctx;
    return src == 41 ? peer == 0 : src == (uint32_t)peer;
}

/* A context no receive has named yet: its message waits, unexpected, and
 * matches once a receive names it; the ranks of the context are not the
 * engine's (the receive names the sender's rank in the context). */
static void test_unknown_context_waits_unexpected_then_matches_its_rank_in_context(void **state)
{
    uint8_t a[8] = "ctx", r[8] = { 0 };
    bfo_request s, q, other;
    bfo_envelope se = { 1, 0xFFFFFFF0u, 41, 9, 0 }, re = { 0, 0xFFFFFFF0u, 41, 9, 0 };
    (void)state;
    sr_scenario sc = make(NULL, 0, 2, 2, 31);
    sr_world *w = sr_new(&sc);
    w->e[1].cfg.source_ok = rank_41_is_peer_0; /* the layer's ranks */
    assert_int_equal(bfo_isend_env(&w->e[0], &s, a, 4, &se, w->sn.now), BFO_OK);
    sr_advance(w, 50000000);
    assert_true(bfo_test(&s));
    assert_int_equal(w->e[1].uxm_in_use, 1);
    /* another context, and the same context with the engine's rank: no match */
    assert_int_equal(bfo_irecv(&w->e[1], &other, r, sizeof r, 0, 0xFFFFFFF1u, 9, w->sn.now), BFO_OK);
    re.src = 0;
    assert_int_equal(bfo_irecv_env(&w->e[1], &q, r, sizeof r, &re, w->sn.now), BFO_OK);
    assert_false(bfo_test(&q));
    assert_int_equal(w->e[1].uxm_in_use, 1);
    bfo_request q2;
    re.src = 41;
    assert_int_equal(bfo_irecv_env(&w->e[1], &q2, r, sizeof r, &re, w->sn.now), BFO_OK);
    assert_true(bfo_test(&q2));
    assert_int_equal(q2.status, BFO_OK);
    assert_int_equal(q2.source, 41);
    assert_int_equal(q2.peer, 0);
    assert_int_equal(q2.tag, 9);
    assert_string_equal((char *)r, "ctx");
    assert_int_equal(w->e[1].uxm_in_use, 0);
    sr_del(w);
}

/* Messages to itself: eager and rendezvous, in order with ANY_SOURCE
 * receives, unexpected ones too, and no rail touched. */
static void test_send_to_self_matches_in_order_without_a_rail(void **state)
{
    static uint8_t big[100000], rbig[100000];
    uint8_t a[4] = "one", b[4] = "two", r1[4], r2[4];
    bfo_request s1, s2, s3, q1, q2, q3;
    (void)state;
    memset(big, 'y', sizeof big);
    sr_scenario sc = make(NULL, 0, 2, 2, 33);
    sr_world *w = sr_new(&sc);
    bfo_engine *e = &w->e[1];
    uint64_t ops = e->stats.ops_posted;
    assert_int_equal(bfo_isend(e, &s1, a, 4, 1, 3, 7, w->sn.now), BFO_OK);
    assert_int_equal(bfo_isend(e, &s2, b, 4, 1, 3, 7, w->sn.now), BFO_OK);
    assert_true(bfo_test(&s1) && bfo_test(&s2)); /* eager: taken at once, unexpected */
    assert_int_equal(e->uxm_in_use, 2);
    assert_int_equal(bfo_irecv(e, &q1, r1, 4, BFO_ANY_SOURCE, 3, BFO_ANY_TAG, w->sn.now), BFO_OK);
    assert_int_equal(bfo_irecv(e, &q2, r2, 4, 1, 3, 7, w->sn.now), BFO_OK);
    assert_true(bfo_test(&q1) && bfo_test(&q2));
    assert_string_equal((char *)r1, "one");
    assert_string_equal((char *)r2, "two");
    assert_int_equal(q1.source, 1);
    /* rendezvous, receive first and then send first */
    assert_int_equal(bfo_irecv(e, &q3, rbig, sizeof rbig, 1, 3, 8, w->sn.now), BFO_OK);
    assert_int_equal(bfo_isend(e, &s3, big, sizeof big, 1, 3, 8, w->sn.now), BFO_OK);
    assert_true(bfo_test(&s3) && bfo_test(&q3));
    assert_memory_equal(big, rbig, sizeof big);
    memset(rbig, 0, sizeof rbig);
    assert_int_equal(bfo_isend(e, &s3, big, sizeof big, 1, 3, 8, w->sn.now), BFO_OK);
    assert_false(bfo_test(&s3)); /* waits for its receive: the data is still here */
    assert_int_equal(bfo_irecv(e, &q3, rbig, sizeof rbig, 1, 3, 8, w->sn.now), BFO_OK);
    assert_true(bfo_test(&s3) && bfo_test(&q3));
    assert_int_equal(q3.status, BFO_OK);
    assert_memory_equal(big, rbig, sizeof big);
    assert_int_equal(e->stats.ops_posted, ops); /* nothing given to a backend */
    assert_int_equal(e->uxm_in_use + e->ops_in_use + e->slots_in_use, 0);
    sr_del(w);
}

/* A job of one rank: an ANY_SOURCE receive waits for the rank itself. */
static void test_one_rank_any_source_receive_waits_for_itself(void **state)
{
    uint8_t *mem, a[3] = "me", r[3];
    bfo_engine e;
    bfo_backend be;
    bfo_config c;
    bfo_request s, q;
    (void)state;
    memset(&c, 0, sizeof c);
    memset(&be, 0, sizeof be);
    c.nranks = 1;
    c.nrails = 1;
    c.max_requests = 4;
    c.max_unexpected = 4;
    c.eager_limit = 64;
    simnet sn; /* a backend to give the engine: it never posts to it */
    sn_init(&sn, 2, 1, 1);
    be = sn.be[0];
    mem = malloc(bfo_engine_mem_size(&c));
    assert_non_null(mem);
    assert_int_equal(bfo_engine_init(&e, &c, &be, mem, bfo_engine_mem_size(&c), 1), BFO_OK);
    assert_int_equal(bfo_irecv(&e, &q, r, sizeof r, BFO_ANY_SOURCE, 0, BFO_ANY_TAG, 1), BFO_OK);
    assert_false(bfo_test(&q));
    assert_int_equal(bfo_isend(&e, &s, a, 3, 0, 0, 1, 1), BFO_OK);
    assert_true(bfo_test(&s) && bfo_test(&q));
    assert_string_equal((char *)r, "me");
    sn_free(&sn);
    free(mem);
}

/* Credits: 600 eager-sized sends (1000 B, 1 KiB of buffer each) before
 * any receive, to a receiver whose unexpected_budget is 32 KiB, so the
 * window is 32 KiB: 32 go eager, the 568 others by rendezvous without
 * first bytes, and the receiver never holds more than the window.  Taking
 * them frees the window, the receiver tells the sender (CREDIT), and a
 * second round of 600 goes eager again up to the new limit.  A third
 * round, with rail 0 failing under it and a CREDIT lost (the receiver
 * tells the newest limit again), ends the same: every message once, the
 * whole window back. */
static void test_credit_past_window_sends_go_by_rendezvous_then_eager_again(void **state)
{
    enum { N = 600 };
    static grow_log g;
    static bfo_request s[N], r[N];
    static uint8_t out[N][1000], in[N][1000];
    bfo_config cfg;
    (void)state;
    memset(&cfg, 0, sizeof cfg);
    memset(&g, 0, sizeof g);
    cfg.grow = test_grow;
    cfg.grow_ctx = &g;
    cfg.unexpected_budget = 32 * 1024;
    sr_scenario sc = make(NULL, 0, 2, 2, 63);
    sc.cfg = &cfg;
    sr_world *w = sr_new(&sc);
    for (int round = 0; round < 3; round++) {
        const uint64_t rndv0 = w->e[0].stats.credit_rndv, eager0 = w->e[1].stats.eagers;
        if (round == 2) { /* its next CREDIT is lost, and reported so */
            sn_fault f;
            memset(&f, 0, sizeof f);
            f.what = SN_FAULT_TYPE;
            f.type = BFO_FRAG_CREDIT;
            f.n = w->sn.type_count[BFO_FRAG_CREDIT] + 1;
            f.kind = SN_LOSE;
            sn_add_fault(&w->sn, &f);
        }
        for (int i = 0; i < N; i++) {
            if (round == 2 && i == N / 2) { /* rail 0 fails under half the round */
                sr_advance(w, 100000);
                sn_rail_fails(&w->sn, 0);
            }
            memset(out[i], i + round, sizeof out[i]);
            assert_int_equal(bfo_isend(&w->e[0], &s[i], out[i], sizeof out[i], 1, 0, i,
                                       w->sn.now),
                             BFO_OK);
        }
        sr_advance(w, 200000000);
        /* the window holds: 32 KiB of buffers, whatever else waits */
        assert_true(w->e[1].ux_bytes_in_use <= 32 * 1024);
        if (round < 2) {
            assert_int_equal(w->e[0].stats.credit_rndv - rndv0, N - 32);
            assert_int_equal(w->e[1].ux_bytes_in_use, 32 * 1024);
        }
        for (int i = 0; i < N; i++)
            assert_int_equal(bfo_irecv(&w->e[1], &r[i], in[i], sizeof in[i], 0, 0, i, w->sn.now),
                             BFO_OK);
        for (int k = 0; k < 400 && !(bfo_test(&r[N - 1]) && bfo_test(&s[N - 1])); k++)
            sr_advance(w, 10000000);
        for (int i = 0; i < N; i++) {
            assert_true(bfo_test(&r[i]) && bfo_test(&s[i]));
            assert_int_equal(r[i].status, BFO_OK);
            assert_int_equal(s[i].status, BFO_OK);
            assert_int_equal(r[i].length, sizeof out[i]);
            assert_memory_equal(in[i], out[i], sizeof out[i]);
        }
        if (round < 2)
            assert_int_equal(w->e[1].stats.eagers - eager0, 32);
        /* all taken: the sender heard of it and has its whole window again */
        assert_int_equal(w->e[1].ux_bytes_in_use, 0);
        assert_int_equal(w->e[0].peers[1].credit.limit - w->e[0].peers[1].credit.used, 32 * 1024);
    }
    assert_true(w->e[1].stats.credits_sent >= 3);
    assert_int_equal(w->sn.nfaults, 1);
    assert_true(w->sn.faults[0].fired); /* the CREDIT was lost */
    assert_true(w->e[0].stats.mapouts > 0);
    assert_int_equal(STAT(w, protocol_violations), 0);
    sr_del(w);
    grow_free(&g);
}

/* Ranks whose eager limits differ (bfo_net's default is 64 KiB over TCP
 * alone, 4 KiB with shm or verbs rails): rank 0 sends 60 KiB eagerly to
 * rank 1, whose own limit is 4 KiB; rank 1 takes it, unexpected first and
 * posted later, and answers in kind by rendezvous. */
static void test_eager_limits_that_differ_between_ranks_still_talk(void **state)
{
    static uint8_t out[2][60 * 1024], in[2][60 * 1024];
    bfo_request s[2], r[2];
    (void)state;
    sr_scenario sc = make(NULL, 0, 2, 2, 66);
    sr_world *w = sr_new(&sc);
    w->e[0].cfg.eager_limit = 64 * 1024; /* rank 1 keeps its 4 KiB */
    assert_true(w->e[1].cfg.eager_limit < sizeof out[0]);
    for (int i = 0; i < 2; i++)
        memset(out[i], 0x30 + i, sizeof out[i]);
    assert_int_equal(bfo_isend(&w->e[0], &s[0], out[0], sizeof out[0], 1, 0, 1, w->sn.now), BFO_OK);
    assert_int_equal(bfo_isend(&w->e[1], &s[1], out[1], sizeof out[1], 0, 0, 2, w->sn.now), BFO_OK);
    sr_advance(w, 50000000);
    assert_int_equal(bfo_irecv(&w->e[1], &r[0], in[0], sizeof in[0], 0, 0, 1, w->sn.now), BFO_OK);
    assert_int_equal(bfo_irecv(&w->e[0], &r[1], in[1], sizeof in[1], 1, 0, 2, w->sn.now), BFO_OK);
    for (int k = 0; k < 100 && !(bfo_test(&r[0]) && bfo_test(&r[1])); k++)
        sr_advance(w, 10000000);
    for (int i = 0; i < 2; i++) {
        assert_true(bfo_test(&s[i]) && bfo_test(&r[i]));
        assert_int_equal(r[i].status, BFO_OK);
        assert_int_equal(r[i].length, sizeof out[i]);
        assert_memory_equal(in[i], out[i], sizeof out[i]);
    }
    assert_int_equal(w->e[1].stats.eagers, 1);  /* rank 0's, eager */
    assert_int_equal(w->e[0].stats.eagers, 0);  /* rank 1's, by rendezvous */
    assert_int_equal(STAT(w, protocol_violations), 0);
    sr_del(w);
}

/* A cancelled eager send gives its bytes back to the window: the peer
 * takes only its sequence (an empty MATCH), so it would never free them. */
static void test_credit_cancelled_send_gives_its_bytes_back(void **state)
{
    static uint8_t buf[1000];
    bfo_request s, r;
    bfo_config cfg;
    (void)state;
    memset(&cfg, 0, sizeof cfg);
    cfg.unexpected_budget = 32 * 1024;
    sr_scenario sc = make(NULL, 0, 2, 1, 64);
    sc.cfg = &cfg;
    sr_world *w = sr_new(&sc); /* not connected yet: the MATCH waits for a rail */
    assert_int_equal(bfo_isend(&w->e[0], &s, buf, sizeof buf, 1, 0, 5, w->sn.now), BFO_OK);
    assert_int_equal(w->e[0].peers[1].credit.used, 1024);
    assert_int_equal(bfo_cancel(&w->e[0], &s, w->sn.now), BFO_OK);
    assert_int_equal(w->e[0].peers[1].credit.used, 0);
    sr_advance(w, 100000000);
    assert_true(bfo_test(&s));
    assert_int_equal(s.status, BFO_ERR_CANCELLED);
    assert_int_equal(bfo_isend(&w->e[0], &s, buf, sizeof buf, 1, 0, 6, w->sn.now), BFO_OK);
    assert_int_equal(bfo_irecv(&w->e[1], &r, buf, sizeof buf, 0, 0, 6, w->sn.now), BFO_OK);
    sr_advance(w, 100000000);
    assert_true(bfo_test(&s) && bfo_test(&r));
    assert_int_equal(r.status, BFO_OK);
    assert_int_equal(w->e[1].stats.eagers, 1);
    sr_del(w);
}

/* A CREDIT names a limit, the newest the largest: a smaller one (an older
 * CREDIT overtaken on another rail) changes nothing, on any rail state. */
static void test_credit_older_limit_changes_nothing(void **state)
{
    uint8_t buf[64];
    bfo_hdr_credit h;
    size_t n;
    (void)state;
    sr_scenario sc = make(NULL, 0, 2, 2, 65);
    sr_world *w = sr_new(&sc);
    memset(&h, 0, sizeof h);
    h.type = BFO_FRAG_CREDIT;
    h.limit = (uint64_t)1 << 40;
    n = bfo_hdr_credit_encode(&h, buf, sizeof buf);
    assert_int_equal(n, BFO_HDR_CREDIT_SIZE);
    assert_int_equal(bfo_engine_frame(&w->e[0], 1, 1, buf, n, w->sn.now), BFO_OK);
    assert_int_equal(w->e[0].peers[1].credit.limit, (uint64_t)1 << 40);
    h.limit = 4096;
    n = bfo_hdr_credit_encode(&h, buf, sizeof buf);
    assert_int_equal(bfo_engine_frame(&w->e[0], 1, 0, buf, n, w->sn.now), BFO_OK);
    assert_int_equal(w->e[0].peers[1].credit.limit, (uint64_t)1 << 40);
    assert_int_equal(w->e[0].stats.protocol_violations, 0);
    sr_del(w);
}

/* The tests of match, in the order they run (engine_test_main: a pattern,
 * --shard). */
int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unknown_context_waits_unexpected_then_matches_its_rank_in_context),
        cmocka_unit_test(test_send_to_self_matches_in_order_without_a_rail),
        cmocka_unit_test(test_one_rank_any_source_receive_waits_for_itself),
        cmocka_unit_test(test_credit_past_window_sends_go_by_rendezvous_then_eager_again),
        cmocka_unit_test(test_credit_cancelled_send_gives_its_bytes_back),
        cmocka_unit_test(test_eager_limits_that_differ_between_ranks_still_talk),
        cmocka_unit_test(test_credit_older_limit_changes_nothing),
        cmocka_unit_test(test_unexpected_any_source_any_tag),
    };
    return engine_test_main(argc, argv, "engine_match", tests, sizeof tests / sizeof tests[0]);
}
