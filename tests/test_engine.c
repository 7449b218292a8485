/* test_engine.c - the engine over the simulated network, with faults.
 *
 * Each test is a scenario: messages between ranks, faults to inject, a
 * seed.  It passes when every message arrives exactly once with the right
 * bytes (or, only when no rail is left, fails with the unreachable error),
 * nothing waits past the simulated time limit, and every pool entry of
 * every engine is back.
 */
#include "bfo_test.h"

#include "bfo_engine.h"
#include "bfo_simnet.h"

#define MAXR 4
#define MAXM 128

typedef struct msgspec {
    int src, dst;
    size_t size;
} msgspec;

typedef struct world {
    simnet sn;
    bfo_engine e[MAXR];
    void *mem[MAXR];
    int n;
    bfo_request sreq[MAXM], rreq[MAXM];
    uint8_t *sbuf[MAXM], *rbuf[MAXM];
    int nm;
} world;

static void world_init(world *w, int n, int nrails, uint64_t seed, const bfo_config *tmpl)
{
    memset(w, 0, sizeof *w);
    w->n = n;
    sn_init(&w->sn, n, nrails, seed);
    for (int i = 0; i < n; i++) {
        bfo_config c;
        if (tmpl)
            c = *tmpl;
        else
            memset(&c, 0, sizeof c);
        c.rank = i;
        c.nranks = n;
        c.nrails = nrails;
        size_t need = bfo_engine_mem_size(&c);
        w->mem[i] = malloc(need);
        assert_non_null(w->mem[i]);
        w->sn.eng[i] = &w->e[i];
        assert_int_equal(bfo_engine_init(&w->e[i], &c, &w->sn.be[i], w->mem[i], need, w->sn.now),
                         BFO_OK);
    }
}

static void world_free(world *w)
{
    for (int i = 0; i < w->nm; i++) {
        free(w->sbuf[i]);
        free(w->rbuf[i]);
    }
    for (int i = 0; i < w->n; i++)
        free(w->mem[i]);
    sn_free(&w->sn);
}

static int all_done(void *arg)
{
    world *w = (world *)arg;
    for (int i = 0; i < w->nm; i++)
        if (!bfo_test(&w->sreq[i]) || !bfo_test(&w->rreq[i]))
            return 0;
    return 1;
}

static uint8_t pattern(int msg, size_t i) { return (uint8_t)(msg * 31 + i * 7 + (i >> 8)); }

/* Posts every receive (tag = message index), then every send; runs. */
static int world_run(world *w, const msgspec *m, int nm, uint64_t limit_ns)
{
    w->nm = nm;
    for (int i = 0; i < nm; i++) {
        w->sbuf[i] = (uint8_t *)malloc(m[i].size + 1);
        w->rbuf[i] = (uint8_t *)calloc(1, m[i].size + 1);
        for (size_t k = 0; k < m[i].size; k++)
            w->sbuf[i][k] = pattern(i, k);
        bfo_irecv(&w->e[m[i].dst], &w->rreq[i], w->rbuf[i], m[i].size, m[i].src, 0, i, w->sn.now);
    }
    for (int i = 0; i < nm; i++)
        bfo_isend(&w->e[m[i].src], &w->sreq[i], w->sbuf[i], m[i].size, m[i].dst, 0, i, w->sn.now);
    return sn_run(&w->sn, all_done, w, limit_ns);
}

/* Every message arrived once with its bytes; every pool is back. */
static void check_delivered(world *w, const msgspec *m)
{
    for (int i = 0; i < w->nm; i++) {
        if (w->sreq[i].status != BFO_OK || w->rreq[i].status != BFO_OK)
            fail_msg("message %d (%d>%d, %zu B): send %s, receive %s", i, m[i].src, m[i].dst,
                     m[i].size, bfo_errname(w->sreq[i].status), bfo_errname(w->rreq[i].status));
        assert_int_equal(w->rreq[i].length, m[i].size);
        assert_int_equal(w->rreq[i].source, m[i].src);
        assert_int_equal(w->rreq[i].tag, i);
        for (size_t k = 0; k < m[i].size; k++)
            if (w->rbuf[i][k] != pattern(i, k))
                fail_msg("message %d: byte %zu is wrong", i, k);
    }
}

static void check_pools_back(world *w)
{
    for (int i = 0; i < w->n; i++) {
        if (w->e[i].ops_in_use || w->e[i].slots_in_use || w->e[i].uxm_in_use)
            fail_msg("rank %d: %d ops, %d request slots, %d unexpected buffers still in use", i,
                     w->e[i].ops_in_use, w->e[i].slots_in_use, w->e[i].uxm_in_use);
    }
}

static uint64_t sum_stat(world *w, size_t off)
{
    uint64_t s = 0;
    for (int i = 0; i < w->n; i++)
        s += *(const uint64_t *)((const char *)&w->e[i].stats + off);
    return s;
}
#define STAT(w, field) sum_stat(w, offsetof(bfo_stats, field))

/* Runs the messages with the faults; expects full delivery. */
static world *scenario(const msgspec *m, int nm, int nranks, int nrails, const sn_fault *f, int nf,
                       uint64_t seed)
{
    world *w = (world *)calloc(1, sizeof *w);
    assert_non_null(w);
    world_init(w, nranks, nrails, seed, NULL);
    for (int i = 0; i < nf; i++)
        sn_add_fault(&w->sn, &f[i]);
    if (!world_run(w, m, nm, 30000000000ull)) {
        for (int i = 0; i < nm; i++)
            if (!bfo_test(&w->sreq[i]) || !bfo_test(&w->rreq[i]))
                print_error("message %d: send in %s, receive in %s\n", i,
                            bfo_send_state_name(w->sreq[i].cs), bfo_recv_state_name(w->rreq[i].cs));
        fail_msg("hung: not every request completed in 30 s of simulated time");
    }
    check_delivered(w, m);
    /* let the last completions and control messages settle */
    for (int k = 0; k < 1000 && sn_step(&w->sn); k++)
        ;
    check_pools_back(w);
    return w;
}

static void done_world(world *w)
{
    world_free(w);
    free(w);
}

/* ----------------------------------------------------------------- tests */

static const msgspec mixed[] = {
    { 0, 1, 8 },      { 0, 1, 4096 },   { 1, 0, 100 },   { 0, 1, 200000 }, { 1, 0, 70000 },
    { 0, 1, 0 },      { 0, 1, 4097 },   { 1, 0, 1 << 20 }, { 0, 1, 64 },   { 0, 1, 300000 },
};
#define NMIXED ((int)(sizeof mixed / sizeof mixed[0]))

static void test_mixed_messages_no_fault(void **state)
{
    (void)state;
    world *w = scenario(mixed, NMIXED, 2, 2, NULL, 0, 1);
    assert_int_equal(STAT(w, protocol_violations), 0);
    assert_int_equal(STAT(w, restarts), 0);
    done_world(w);
}

static void test_one_rail(void **state)
{
    (void)state;
    done_world(scenario(mixed, NMIXED, 2, 1, NULL, 0, 2));
}

static void test_three_ranks_three_rails(void **state)
{
    static const msgspec m[] = { { 0, 1, 10 }, { 1, 2, 9000 }, { 2, 0, 500000 },
                                 { 0, 2, 4096 }, { 2, 1, 3 }, { 1, 0, 100000 } };
    (void)state;
    done_world(scenario(m, 6, 3, 3, NULL, 0, 3));
}

static void test_many_seeds_reorder_across_rails(void **state)
{
    (void)state;
    for (uint64_t seed = 10; seed < 60; seed++)
        done_world(scenario(mixed, NMIXED, 2, 3, NULL, 0, seed));
}

static void test_unexpected_any_source_any_tag(void **state)
{
    world *w = (world *)calloc(1, sizeof *w);
    uint8_t a[16] = "from one", b[16] = "from two", r1[16], r2[16];
    bfo_request s1, s2, q1, q2;
    (void)state;
    world_init(w, 3, 2, 7, NULL);
    assert_int_equal(bfo_isend(&w->e[1], &s1, a, 9, 0, 0, 5, w->sn.now), BFO_OK);
    assert_int_equal(bfo_isend(&w->e[2], &s2, b, 9, 0, 0, 6, w->sn.now), BFO_OK);
    for (int k = 0; k < 200; k++) /* rails come up; both arrive before any receive */
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
    world_free(w);
    free(w);
}

static void test_truncation(void **state)
{
    world *w = (world *)calloc(1, sizeof *w);
    uint8_t big[100], small[50];
    bfo_request s, r;
    (void)state;
    memset(big, 'x', sizeof big);
    world_init(w, 2, 2, 8, NULL);
    bfo_irecv(&w->e[1], &r, small, sizeof small, 0, 0, 1, w->sn.now);
    bfo_isend(&w->e[0], &s, big, sizeof big, 1, 0, 1, w->sn.now);
    for (int k = 0; k < 200; k++)
        sn_step(&w->sn);
    assert_true(bfo_test(&r) && bfo_test(&s));
    assert_int_equal(r.status, BFO_ERR_TRUNCATE);
    assert_int_equal(r.length, 100);
    assert_int_equal(s.status, BFO_OK);
    world_free(w);
    free(w);
}

/* One fault of a kind on the n-th fragment of a type. */
static void fault_case(int type, uint64_t nth, int kind, uint64_t seed)
{
    sn_fault f;
    memset(&f, 0, sizeof f);
    f.what = SN_FAULT_TYPE;
    f.type = type;
    f.n = nth;
    f.kind = kind;
    world *w = scenario(mixed, NMIXED, 2, 2, &f, 1, seed);
    assert_int_equal(STAT(w, protocol_violations), 0);
    done_world(w);
}

static void test_match_failed_but_arrived(void **state)
{
    (void)state;
    fault_case(BFO_FRAG_MATCH, 1, SN_DELIVER_ERROR, 21);
}
static void test_match_lost(void **state)
{
    (void)state;
    fault_case(BFO_FRAG_MATCH, 2, SN_LOSE, 22);
}
static void test_rndv_failed_but_arrived(void **state)
{
    (void)state;
    fault_case(BFO_FRAG_RNDV, 1, SN_DELIVER_ERROR, 23);
}
static void test_rndv_lost(void **state)
{
    (void)state;
    fault_case(BFO_FRAG_RNDV, 2, SN_LOSE, 24);
}
static void test_ack_failed_but_arrived(void **state)
{
    (void)state;
    fault_case(BFO_FRAG_ACK, 1, SN_DELIVER_ERROR, 25);
}
static void test_ack_lost(void **state)
{
    (void)state;
    fault_case(BFO_FRAG_ACK, 1, SN_LOSE, 26);
}
static void test_frag_lost_restart_dance(void **state)
{
    (void)state;
    fault_case(BFO_FRAG_FRAG, 2, SN_LOSE, 27);
}
static void test_frag_failed_but_arrived(void **state)
{
    (void)state;
    fault_case(BFO_FRAG_FRAG, 4, SN_DELIVER_ERROR, 28);
}
static void test_notify_failed_but_arrived(void **state)
{
    sn_fault f[2];
    (void)state;
    memset(f, 0, sizeof f);
    f[0].what = f[1].what = SN_FAULT_TYPE;
    f[0].type = BFO_FRAG_FRAG;
    f[0].n = 2;
    f[0].kind = SN_LOSE;
    f[1].type = BFO_FRAG_NOTIFY;
    f[1].n = 1;
    f[1].kind = SN_DELIVER_ERROR;
    done_world(scenario(mixed, NMIXED, 2, 2, f, 2, 29));
}
static void test_delay_reorders(void **state)
{
    (void)state;
    fault_case(0, 5, SN_DELAY, 30);
}

/* Every single fault on every operation of a small scenario. */
static void test_every_single_fault_small(void **state)
{
    static const msgspec m[] = { { 0, 1, 8 }, { 0, 1, 150000 }, { 1, 0, 5000 } };
    static const int kinds[] = { SN_LOSE, SN_DELIVER_ERROR, SN_DELAY };
    int runs = 0;
    (void)state;
    for (uint64_t op = 1; op <= 60; op++)
        for (int k = 0; k < 3; k++) {
            sn_fault f;
            memset(&f, 0, sizeof f);
            f.what = SN_FAULT_TYPE;
            f.type = 0;
            f.n = op;
            f.kind = kinds[k];
            done_world(scenario(m, 3, 2, 2, &f, 1, 100 + op));
            runs++;
        }
    print_message("%d single-fault runs\n", runs);
}

static void test_rail_down_mid_stream_then_back(void **state)
{
    sn_fault f[2];
    (void)state;
    memset(f, 0, sizeof f);
    f[0].what = SN_FAULT_RAIL_DOWN;
    f[0].rail = 0;
    f[0].n = 15;
    f[1].what = SN_FAULT_RAIL_UP;
    f[1].rail = 0;
    f[1].n = 60;
    world *w = scenario(mixed, NMIXED, 2, 2, f, 2, 40);
    assert_true(STAT(w, mapouts) >= 1);
    done_world(w);
}

static void test_rail_down_at_every_operation(void **state)
{
    static const msgspec m[] = { { 0, 1, 8 }, { 0, 1, 150000 }, { 1, 0, 5000 }, { 1, 0, 64 } };
    (void)state;
    for (uint64_t op = 1; op <= 80; op++)
        for (int rail = 0; rail < 2; rail++) {
            sn_fault f;
            memset(&f, 0, sizeof f);
            f.what = SN_FAULT_RAIL_DOWN;
            f.rail = rail;
            f.n = op;
            done_world(scenario(m, 4, 2, 2, &f, 1, 200 + op));
        }
}

static void test_rail_readmitted_and_used_again(void **state)
{
    sn_fault f[2];
    world *w = (world *)calloc(1, sizeof *w);
    (void)state;
    memset(f, 0, sizeof f);
    f[0].what = SN_FAULT_RAIL_DOWN;
    f[0].rail = 1;
    f[0].n = 10;
    f[1].what = SN_FAULT_RAIL_UP;
    f[1].rail = 1;
    f[1].n = 11;
    world_init(w, 2, 2, 41, NULL);
    sn_add_fault(&w->sn, &f[0]);
    sn_add_fault(&w->sn, &f[1]);
    assert_true(world_run(w, mixed, NMIXED, 30000000000ull));
    check_delivered(w, mixed);
    /* give back-off and probing time, then both ends have rail 1 up again */
    for (int k = 0; k < 400; k++) {
        if (!sn_step(&w->sn))
            w->sn.now += 5000000;
        for (int i = 0; i < 2; i++)
            bfo_engine_progress(&w->e[i], w->sn.now);
    }
    assert_int_equal(w->e[0].peers[1].rail[1].fsm.cs, BFO_RAIL_ST_UP);
    assert_int_equal(w->e[1].peers[0].rail[1].fsm.cs, BFO_RAIL_ST_UP);
    assert_true(STAT(w, readmissions) >= 1);
    world_free(w);
    free(w);
}

static int sends_done(void *arg)
{
    world *w = (world *)arg;
    for (int i = 0; i < w->nm; i++)
        if (!bfo_test(&w->sreq[i]) || !bfo_test(&w->rreq[i]))
            return 0;
    return 1;
}

/* Every rail dies: every pending request ends with the unreachable error
 * in bounded time, and a later send fails at once. */
static void test_all_rails_down_unreachable_no_hang(void **state)
{
    sn_fault f[2];
    world *w = (world *)calloc(1, sizeof *w);
    bfo_request late;
    uint8_t x = 1;
    (void)state;
    memset(f, 0, sizeof f);
    f[0].what = f[1].what = SN_FAULT_RAIL_DOWN;
    f[0].rail = 0;
    f[1].rail = 1;
    f[0].n = f[1].n = 12;
    world_init(w, 2, 2, 42, NULL);
    sn_add_fault(&w->sn, &f[0]);
    sn_add_fault(&w->sn, &f[1]);
    assert_true(world_run(w, mixed, NMIXED, 10000000000ull) || sends_done(w));
    int unreachable = 0;
    for (int i = 0; i < w->nm; i++) {
        assert_true(bfo_test(&w->sreq[i]) && bfo_test(&w->rreq[i]));
        assert_true(w->sreq[i].status == BFO_OK || w->sreq[i].status == BFO_ERR_PEER_UNREACHABLE);
        assert_true(w->rreq[i].status == BFO_OK || w->rreq[i].status == BFO_ERR_PEER_UNREACHABLE);
        unreachable += w->sreq[i].status != BFO_OK;
        if (w->rreq[i].status == BFO_OK) /* what did arrive is right */
            for (size_t k = 0; k < mixed[i].size; k++)
                assert_int_equal(w->rbuf[i][k], pattern(i, k));
    }
    assert_true(unreachable > 0);
    /* both ends notice (heartbeat + grace) even with nothing in flight */
    for (int k = 0; k < 400; k++) {
        if (!sn_step(&w->sn))
            w->sn.now += 5000000;
        for (int i = 0; i < 2; i++)
            bfo_engine_progress(&w->e[i], w->sn.now);
    }
    assert_true(w->e[0].peers[1].unreachable && w->e[1].peers[0].unreachable);
    assert_int_equal(bfo_isend(&w->e[0], &late, &x, 1, 1, 0, 99, w->sn.now),
                     BFO_ERR_PEER_UNREACHABLE);
    assert_true(bfo_test(&late));
    assert_int_equal(late.status, BFO_ERR_PEER_UNREACHABLE);
    world_free(w);
    free(w);
}

static void test_hostile_frames_are_counted_not_fatal(void **state)
{
    world *w = (world *)calloc(1, sizeof *w);
    uint8_t junk[64];
    bfo_hdr_frag fr = { BFO_FRAG_FRAG, 0, 0, { 3, 77 }, 0 };
    bfo_hdr_restart nt = { BFO_FRAG_NOTIFY, 0, 5, 0, 1, 1, { 1, 1 }, { 9, 9 } };
    (void)state;
    world_init(w, 2, 2, 43, NULL);
    memset(junk, 0xee, sizeof junk);
    assert_int_equal(bfo_engine_frame(&w->e[1], 0, 0, junk, sizeof junk, w->sn.now), BFO_ERR_BAD_TYPE);
    size_t n = bfo_hdr_frag_encode(&fr, junk, sizeof junk);
    junk[n] = 'z';
    assert_int_equal(bfo_engine_frame(&w->e[1], 0, 0, junk, n + 1, w->sn.now), BFO_ERR_STALE);
    n = bfo_hdr_restart_encode(&nt, junk, sizeof junk); /* NOTIFY for nothing: NACK */
    assert_int_equal(bfo_engine_frame(&w->e[1], 0, 0, junk, n, w->sn.now), BFO_ERR_STALE);
    assert_int_equal(w->e[1].stats.malformed_frames, 1);
    assert_int_equal(w->e[1].stats.stale_dropped, 2);
    /* and the engine still works */
    done_world(w);
    done_world(scenario(mixed, NMIXED, 2, 2, NULL, 0, 44));
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
    assert_int_equal(bfo_engine_init(&e, &c, &be, mem, sizeof mem, 0), BFO_ERR_NO_MEMORY);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_engine_init_errors),
        cmocka_unit_test(test_mixed_messages_no_fault),
        cmocka_unit_test(test_one_rail),
        cmocka_unit_test(test_three_ranks_three_rails),
        cmocka_unit_test(test_many_seeds_reorder_across_rails),
        cmocka_unit_test(test_unexpected_any_source_any_tag),
        cmocka_unit_test(test_truncation),
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
        cmocka_unit_test(test_every_single_fault_small),
        cmocka_unit_test(test_rail_down_mid_stream_then_back),
        cmocka_unit_test(test_rail_down_at_every_operation),
        cmocka_unit_test(test_rail_readmitted_and_used_again),
        cmocka_unit_test(test_all_rails_down_unreachable_no_hang),
        cmocka_unit_test(test_hostile_frames_are_counted_not_fatal),
    };
    return cmocka_run_group_tests_name("engine", tests, NULL, NULL);
}
