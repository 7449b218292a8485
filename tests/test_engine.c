// SPDX-License-Identifier: BSD-3-Clause
/* test_engine.c - the engine over the simulated network, with faults.
 *
 * Each test is a scenario (sim/bfo_simrun.h, the runner `bfo sim` uses):
 * messages between ranks, faults to inject, a seed.  It passes when every
 * message arrives exactly once with the right bytes (or, only when no rail
 * is left, fails with the unreachable error), nothing waits past the
 * simulated time limit, every pool entry and memory registration is back,
 * and both ends agree on the rails.  Tests then check what the scenario is
 * about in the engines' statistics.
 */
#include "bfo_test.h"

#include "bfo_engine.h"
#include "bfo_simrun.h"
#include "bfo_nullnet.h"

/* ------------------------------------------------------------- helpers */

typedef struct msgspec {
    int src, dst;
    size_t size;
} msgspec;

/* A scenario: message i has tag i. */
static sr_scenario make(const msgspec *m, int nm, int ranks, int rails, uint64_t seed)
{
    sr_scenario sc;
    memset(&sc, 0, sizeof sc);
    sc.ranks = ranks;
    sc.rails = rails;
    sc.seed = seed;
    sc.nmsgs = nm;
    for (int i = 0; i < nm; i++) {
        sc.msgs[i].src = m[i].src;
        sc.msgs[i].dst = m[i].dst;
        sc.msgs[i].size = m[i].size;
        sc.msgs[i].tag = i;
    }
    return sc;
}

static void add_fault(sr_scenario *sc, int what, int type, int rail, uint64_t n, int kind)
{
    sn_fault *f = &sc->faults[sc->nfaults++];
    memset(f, 0, sizeof *f);
    f->what = what;
    f->type = type;
    f->rail = rail;
    f->n = n;
    f->kind = kind;
}

/* Runs a scenario to the end and judges it; the world stays for the test
 * to look at (sr_del it). */
static sr_world *run(const sr_scenario *sc)
{
    sr_result res;
    sr_world *w = sr_new(sc);
    sr_go(w);
    if (!sr_judge(w, &res)) {
        for (int i = 0; i < sc->nmsgs; i++)
            if (!bfo_test(&w->sreq[i]) || !bfo_test(&w->rreq[i]))
                print_error("message %d: send in %s, receive in %s\n", i,
                            bfo_send_state_name(w->sreq[i].cs), bfo_recv_state_name(w->rreq[i].cs));
        fail_msg("scenario failed: %s (seed %llu)", res.why, (unsigned long long)sc->seed);
    }
    return w;
}

static uint64_t sum_stat(sr_world *w, size_t off)
{
    uint64_t s = 0;
    for (int i = 0; i < w->sc->ranks; i++)
        s += *(const uint64_t *)((const char *)&w->e[i].stats + off);
    return s;
}
#define STAT(w, field) sum_stat(w, offsetof(bfo_stats, field))

/* Every message arrived with BFO_OK (no unreachable error allowed). */
static void all_ok(sr_world *w)
{
    for (int i = 0; i < w->sc->nmsgs; i++)
        if (w->sreq[i].status != BFO_OK || w->rreq[i].status != BFO_OK)
            fail_msg("message %d: send %s, receive %s", i, bfo_errname(w->sreq[i].status),
                     bfo_errname(w->rreq[i].status));
}

/* ------------------------------------------------------------- tests */

static const msgspec mixed[] = {
    { 0, 1, 8 },      { 0, 1, 4096 },   { 1, 0, 100 },   { 0, 1, 200000 }, { 1, 0, 70000 },
    { 0, 1, 0 },      { 0, 1, 4097 },   { 1, 0, 1 << 20 }, { 0, 1, 64 },   { 0, 1, 300000 },
};
#define NMIXED ((int)(sizeof mixed / sizeof mixed[0]))

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

/* bfo_config.done_queue: each request is popped once, in the order it
 * completed (sends, receives, one completed at once with an error), and
 * nothing is queued without the option. */
static void test_done_queue_pops_each_completion_once_in_order(void **state)
{
    uint8_t a[8] = "abc", big[20000], r1[8], r2[20000];
    bfo_request s1, s2, q1, q2, late;
    bfo_config c;
    (void)state;
    memset(&c, 0, sizeof c);
    c.max_requests = 16;
    c.done_queue = 1;
    sr_scenario sc = make(NULL, 0, 2, 2, 11);
    sc.cfg = &c;
    sr_world *w = sr_new(&sc);
    memset(big, 7, sizeof big);
    assert_null(bfo_done_pop(&w->e[0]));
    assert_true(bfo_peer_reachable(&w->e[0], 1));
    assert_int_equal(bfo_rail_state(&w->e[0], 0, 0), 0); /* itself */
    assert_int_equal(bfo_rail_state(&w->e[0], 1, 2), 0);
    assert_int_equal(bfo_rail_state(&w->e[0], 2, 0), 0);
    for (int k = 0; k < 200 && bfo_rail_state(&w->e[0], 1, 1) != BFO_RAIL_ST_UP; k++)
        sn_step(&w->sn);
    assert_int_equal(bfo_rail_state(&w->e[0], 1, 0), BFO_RAIL_ST_UP);
    assert_int_equal(bfo_rail_state(&w->e[0], 1, 1), BFO_RAIL_ST_UP);
    assert_int_equal(bfo_irecv(&w->e[1], &q1, r1, sizeof r1, 0, 0, 1, w->sn.now), BFO_OK);
    assert_int_equal(bfo_irecv(&w->e[1], &q2, r2, sizeof r2, 0, 0, 2, w->sn.now), BFO_OK);
    assert_int_equal(bfo_isend(&w->e[0], &s2, big, sizeof big, 1, 0, 2, w->sn.now), BFO_OK);
    assert_int_equal(bfo_isend(&w->e[0], &s1, a, 4, 1, 0, 1, w->sn.now), BFO_OK);
    for (int k = 0; k < 2000 && !(bfo_test(&s1) && bfo_test(&s2) && bfo_test(&q1) && bfo_test(&q2)); k++)
        sn_step(&w->sn);
    assert_true(bfo_test(&s1) && bfo_test(&s2) && bfo_test(&q1) && bfo_test(&q2));
    /* the eager message completes at the receiver before the rendezvous */
    assert_ptr_equal(bfo_done_pop(&w->e[1]), &q1);
    assert_ptr_equal(bfo_done_pop(&w->e[1]), &q2);
    assert_null(bfo_done_pop(&w->e[1]));
    {
        bfo_request *x = bfo_done_pop(&w->e[0]), *y = bfo_done_pop(&w->e[0]);
        assert_true((x == &s1 && y == &s2) || (x == &s2 && y == &s1));
        assert_null(bfo_done_pop(&w->e[0]));
    }
    assert_memory_equal(r2, big, sizeof big);
    /* a request completed at once is queued too */
    w->e[0].peers[1].unreachable = 1;
    assert_int_equal(bfo_isend(&w->e[0], &late, a, 1, 1, 0, 3, w->sn.now), BFO_ERR_PEER_UNREACHABLE);
    assert_ptr_equal(bfo_done_pop(&w->e[0]), &late);
    assert_int_equal(late.status, BFO_ERR_PEER_UNREACHABLE);
    assert_null(bfo_done_pop(&w->e[0]));
    sr_del(w);
    /* without the option nothing is queued */
    c.done_queue = 0;
    w = sr_new(&sc);
    assert_int_equal(bfo_isend(&w->e[0], &s1, a, 4, 1, 0, 1, w->sn.now), BFO_OK);
    assert_int_equal(bfo_irecv(&w->e[1], &q1, r1, sizeof r1, 0, 0, 1, w->sn.now), BFO_OK);
    for (int k = 0; k < 500 && !(bfo_test(&s1) && bfo_test(&q1)); k++)
        sn_step(&w->sn);
    assert_true(bfo_test(&s1) && bfo_test(&q1));
    assert_null(bfo_done_pop(&w->e[0]));
    assert_null(bfo_done_pop(&w->e[1]));
    sr_del(w);
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

/* One fault of a kind on the n-th operation of a type, under a protocol. */
static sr_world *fault_case(int type, uint64_t nth, int kind, int rdma, uint64_t seed)
{
    sr_scenario sc = make(mixed, NMIXED, 2, 2, seed);
    sc.rdma = rdma;
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

/* Bytes of a large message split in proportion to the rails' bandwidth,
 * by copy and by RDMA read. */
static void test_striping_follows_bandwidth(void **state)
{
    static const msgspec m[] = { { 0, 1, 8 << 20 } };
    (void)state;
    for (int rdma = 0; rdma < 2; rdma++) {
        sr_scenario sc = make(m, 1, 2, 2, 38);
        sc.start_ns = 1000000; /* both rails up before the message starts */
        sc.rail_bw[0] = 3000;
        sc.rail_bw[1] = 1000;
        sc.rdma = rdma ? BFO_RDMA_GET : BFO_RDMA_OFF;
        sr_world *w = run(&sc);
        all_ok(w);
        int data_rank = rdma ? 1 : 0; /* the reader, or the sender of FRAGs */
        double b0 = (double)w->e[data_rank].stats.rail_bytes[0];
        double b1 = (double)w->e[data_rank].stats.rail_bytes[1];
        print_message("%s: rail 0 %.0f B, rail 1 %.0f B, ratio %.3f (want 3)\n",
                      rdma ? "GET reads" : "copy FRAGs", b0, b1, b0 / b1);
        assert_true(b0 / b1 > 2.7 && b0 / b1 < 3.3);
        sr_del(w);
    }
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

/* bfo_engine_place says where a FRAG goes only for a live receive with a
 * contiguous buffer, inside it; anything else is read whole. */
static void test_place_refuses_what_is_not_a_frag_of_a_live_receive(void **state)
{
    static uint8_t src[150000], dst[150000];
    uint8_t hdr[BFO_MAX_HDR_SIZE];
    bfo_request s, q;
    bfo_place_ticket tk;
    size_t hs = 0;
    bfo_hdr_frag fh;
    (void)state;
    sr_scenario sc = make(NULL, 0, 2, 1, 3);
    sc.rdma = BFO_RDMA_OFF;
    sr_world *w = sr_new(&sc);
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = (uint8_t)(i * 7 + 1);
    for (int k = 0; k < 200 && bfo_rail_state(&w->e[0], 1, 0) != BFO_RAIL_ST_UP; k++)
        sn_step(&w->sn);
    assert_int_equal(bfo_irecv(&w->e[1], &q, dst, sizeof dst, 0, 0, 1, w->sn.now), BFO_OK);
    assert_int_equal(bfo_isend(&w->e[0], &s, src, sizeof src, 1, 0, 1, w->sn.now), BFO_OK);
    for (int k = 0; k < 500 && q.cs != BFO_RECV_ST_ACK_SENT; k++)
        sn_step(&w->sn);
    assert_int_equal(q.cs, BFO_RECV_ST_ACK_SENT);
    memset(&fh, 0, sizeof fh);
    fh.type = BFO_FRAG_FRAG;
    fh.rseq = q.rseq;
    fh.dreq = q.self;
    fh.offset = 65536;
    assert_int_equal(bfo_hdr_frag_encode(&fh, hdr, sizeof hdr), BFO_HDR_FRAG_SIZE);
    /* a FRAG of the live receive: its place in the buffer */
    assert_ptr_equal(bfo_engine_place(&w->e[1], 0, hdr, BFO_HDR_FRAG_SIZE, BFO_HDR_FRAG_SIZE + 1000, &hs, &tk),
                     dst + 65536);
    assert_int_equal(hs, BFO_HDR_FRAG_SIZE);
    assert_true(bfo_engine_place_ok(&w->e[1], tk));
    /* the header not all there yet; from another peer; past the buffer */
    assert_null(bfo_engine_place(&w->e[1], 0, hdr, BFO_HDR_FRAG_SIZE - 1, BFO_HDR_FRAG_SIZE + 1000, &hs, &tk));
    assert_null(bfo_engine_place(&w->e[1], 1, hdr, BFO_HDR_FRAG_SIZE, BFO_HDR_FRAG_SIZE + 1000, &hs, &tk));
    assert_null(bfo_engine_place(&w->e[1], 0, hdr, BFO_HDR_FRAG_SIZE, BFO_HDR_FRAG_SIZE + 150000 - 65536 + 1,
                                 &hs, &tk));
    /* an older restart sequence; another request; not a FRAG */
    fh.rseq = (uint16_t)(q.rseq + 1);
    bfo_hdr_frag_encode(&fh, hdr, sizeof hdr);
    assert_null(bfo_engine_place(&w->e[1], 0, hdr, BFO_HDR_FRAG_SIZE, BFO_HDR_FRAG_SIZE + 1000, &hs, &tk));
    fh.rseq = q.rseq;
    fh.dreq.gen++;
    bfo_hdr_frag_encode(&fh, hdr, sizeof hdr);
    assert_null(bfo_engine_place(&w->e[1], 0, hdr, BFO_HDR_FRAG_SIZE, BFO_HDR_FRAG_SIZE + 1000, &hs, &tk));
    fh.dreq = q.self;
    bfo_hdr_frag_encode(&fh, hdr, sizeof hdr);
    hdr[0] = BFO_FRAG_MATCH;
    assert_null(bfo_engine_place(&w->e[1], 0, hdr, BFO_HDR_FRAG_SIZE, BFO_HDR_FRAG_SIZE + 1000, &hs, &tk));
    assert_int_equal(bfo_engine_frame_placed(&w->e[1], 0, 0, hdr, BFO_HDR_FRAG_SIZE, dst, 1000, w->sn.now),
                     BFO_ERR_INVALID);
    /* the message completes: the placement is no longer good */
    w->sn.place = 1;
    for (int k = 0; k < 2000 && !(bfo_test(&s) && bfo_test(&q)); k++)
        sn_step(&w->sn);
    assert_true(bfo_test(&s) && bfo_test(&q));
    assert_true(w->sn.placed > 0);
    assert_memory_equal(dst, src, sizeof src);
    assert_false(bfo_engine_place_ok(&w->e[1], tk));
    sr_del(w);
}

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
    sr_world *w = sr_new(&sc);
    sr_advance(w, 1000000);
    sn_rail_fails(&w->sn, 0);
    sn_rail_fails(&w->sn, 1);
    sr_advance(w, 5000000000ull);
    assert_true(w->e[0].peers[1].unreachable && w->e[1].peers[0].unreachable);
    w->sn.rail_down[0] = w->sn.rail_down[1] = 0; /* the cables are back */
    sr_advance(w, 3000000000ull);
    assert_int_equal(bfo_isend(&w->e[0], &s, &x, 1, 1, 0, 1, w->sn.now), BFO_ERR_PEER_UNREACHABLE);
    assert_int_equal(bfo_irecv(&w->e[1], &r, &y, 1, 0, 0, 1, w->sn.now), BFO_ERR_PEER_UNREACHABLE);
    assert_int_equal(w->e[0].peers[1].rail[0].fsm.cs == BFO_RAIL_ST_UP, 0);
    sr_go(w);
    sr_del(w);
}

/* The engine gives the peer up here and now, its rails UP as they are: the
 * peer machine told its last rail went, then that the grace ran out. */
static void give_up(bfo_engine *e, int peer)
{
    if (e->peers[peer].fsm.cs == BFO_PEER_ST_REACHABLE)
        bfo__peer_step(e, peer, BFO_PEER_EV_LAST_RAIL_LOST);
    bfo__peer_step(e, peer, BFO_PEER_EV_GRACE_EXPIRED);
    assert_int_equal(e->peers[peer].fsm.cs, BFO_PEER_ST_UNREACHABLE);
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

static void test_hostile_frames_are_counted_not_fatal(void **state)
{
    uint8_t junk[64];
    bfo_hdr_frag fr = { BFO_FRAG_FRAG, 0, 0, { 3, 77 }, 0 };
    bfo_hdr_restart nt = { .type = BFO_FRAG_NOTIFY, .flags = 0, .rseq = 5, .ctx = 0, .seq = 1, .src = 1, .sreq = { 1, 1 }, .dreq = { 9, 9 } };
    (void)state;
    sr_scenario sc = make(NULL, 0, 2, 2, 43);
    sr_world *w = sr_new(&sc);
    memset(junk, 0xee, sizeof junk);
    assert_int_equal(bfo_engine_frame(&w->e[1], 0, 0, junk, sizeof junk, w->sn.now), BFO_ERR_BAD_TYPE);
    size_t n = bfo_hdr_frag_encode(&fr, junk, sizeof junk);
    junk[n] = 'z';
    assert_int_equal(bfo_engine_frame(&w->e[1], 0, 0, junk, n + 1, w->sn.now), BFO_ERR_STALE);
    n = bfo_hdr_restart_encode(&nt, junk, sizeof junk); /* NOTIFY for nothing: NACK */
    assert_int_equal(bfo_engine_frame(&w->e[1], 0, 0, junk, n, w->sn.now), BFO_ERR_STALE);
    assert_int_equal(w->e[1].stats.malformed_frames, 1);
    assert_int_equal(w->e[1].stats.stale_dropped, 2);
    sr_go(w);
    sr_del(w);
    /* and the engine still works */
    sr_scenario sc2 = make(mixed, NMIXED, 2, 2, 44);
    sr_del(run(&sc2));
}

/* A peer's PUT or FIN naming a live request but a range it never asked
 * for is a protocol violation, not a write into memory. */
static void test_forged_put_and_fin_are_refused(void **state)
{
    static uint8_t out[200000], in[200000];
    bfo_request s, r;
    uint8_t buf[64];
    (void)state;
    sr_scenario sc = make(NULL, 0, 2, 2, 45);
    sc.rdma = BFO_RDMA_PUT;
    sr_world *w = sr_new(&sc);
    sr_advance(w, 1000000); /* rails up */
    bfo_isend(&w->e[0], &s, out, sizeof out, 1, 0, 1, w->sn.now);
    bfo_hdr_put p;
    memset(&p, 0, sizeof p);
    p.type = BFO_FRAG_PUT;
    p.sreq = s.self;
    p.dreq = s.self;
    p.offset = sizeof out - 10;
    p.length = 11; /* one byte past the end */
    p.raddr = 0x1000;
    size_t n = bfo_hdr_put_encode(&p, buf, sizeof buf);
    assert_int_equal(bfo_engine_frame(&w->e[0], 1, 0, buf, n, w->sn.now), BFO_ERR_PROTOCOL);
    p.length = 0; /* the wire check refuses it */
    n = bfo_hdr_put_encode(&p, buf, sizeof buf);
    assert_int_equal(bfo_engine_frame(&w->e[0], 1, 0, buf, n, w->sn.now), BFO_ERR_BAD_FIELD);
    p.length = 8; /* in range, but this buffer was never registered */
    p.offset = 0;
    n = bfo_hdr_put_encode(&p, buf, sizeof buf);
    /* the receiver: a FIN for a slot never issued */
    bfo_irecv(&w->e[1], &r, in, sizeof in, 0, 0, 1, w->sn.now);
    for (int k = 0; k < 4; k++) /* the RNDV arrives, PUTs go out */
        sn_step(&w->sn);
    assert_int_equal(r.cs, BFO_RECV_ST_PUTS_SENT);
    bfo_hdr_fin fin;
    memset(&fin, 0, sizeof fin);
    fin.type = BFO_FRAG_FIN;
    fin.rseq = r.rseq;
    fin.slot = 1000;
    fin.length = 1;
    fin.dreq = r.self;
    n = bfo_hdr_fin_encode(&fin, buf, sizeof buf);
    assert_int_equal(bfo_engine_frame(&w->e[1], 0, 0, buf, n, w->sn.now), BFO_ERR_PROTOCOL);
    fin.slot = 0; /* issued, but the wrong range */
    fin.offset = 1;
    fin.length = 5;
    n = bfo_hdr_fin_encode(&fin, buf, sizeof buf);
    assert_int_equal(bfo_engine_frame(&w->e[1], 0, 0, buf, n, w->sn.now), BFO_ERR_PROTOCOL);
    assert_int_equal(w->e[0].stats.protocol_violations + w->e[1].stats.protocol_violations, 3);
    assert_int_equal(w->e[0].stats.malformed_frames, 1);
    sr_advance(w, 100000000);
    assert_true(bfo_test(&s) && bfo_test(&r));
    assert_int_equal(r.status, BFO_OK);
    assert_int_equal(memcmp(in, out, sizeof in), 0);
    sr_del(w);
}

/* A completion whose token names no operation the transport holds (one
 * waiting for a rail, or one never used, whose generation a post would
 * have) is ignored: found by tests/fuzz/fuzz_engine (the engine completed
 * the free op, or the MATCH still waiting, as if delivered). */
static void test_completion_of_an_op_the_transport_does_not_hold_is_ignored(void **state)
{
    static const msgspec m[] = { { 0, 1, 64 } };
    sr_result res;
    (void)state;
    sr_scenario sc = make(m, 1, 2, 2, 81);
    sr_world *w = sr_new(&sc); /* no rail is up yet: the MATCH waits for one */
    bfo_engine *e = &w->e[0];
    int pend = e->peers[1].pend_head, fresh = e->op_free;
    assert_true(pend >= 0 && fresh >= 0);
    int in_use = e->ops_in_use;
    bfo_engine_completion(e, ((uint64_t)bfo__op_at(e, pend)->gen << 32) | (uint32_t)pend, 1);
    bfo_engine_completion(e, ((uint64_t)bfo__op_at(e, fresh)->gen << 32) | (uint32_t)fresh, 0);
    assert_int_equal(e->ops_in_use, in_use);
    assert_int_equal(e->op_free, fresh);
    assert_int_equal(e->peers[1].pend_head, pend);
    assert_false(bfo_test(&w->sreq[0]));
    sr_go(w);
    assert_true(sr_judge(w, &res)); /* delivered once, every pool entry back */
    assert_int_equal(w->sreq[0].status, BFO_OK);
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

/* A restarted RNDV sends the same message again: one that changes its tag,
 * length, context, sequence or sender's request is a protocol violation,
 * and the receive keeps what it took (found by tests/fuzz/fuzz_engine: a
 * receive of tag 0 completed with the tag of a forged restart). */
static void test_restarted_rndv_changing_the_message_is_a_protocol_violation(void **state)
{
    enum { BIG = 100000 };
    static uint8_t out[BIG], in[BIG];
    bfo_request s, r;
    uint8_t buf[64];
    (void)state;
    sr_scenario sc = make(NULL, 0, 2, 2, 84);
    sc.rdma = BFO_RDMA_OFF;
    sr_world *w = sr_new(&sc);
    sr_advance(w, 1000000);
    for (int k = 0; k < BIG; k++)
        out[k] = sr_pattern(7, (size_t)k);
    assert_int_equal(bfo_irecv(&w->e[1], &r, in, BIG, 0, 0, 5, w->sn.now), BFO_OK);
    assert_int_equal(bfo_isend(&w->e[0], &s, out, BIG, 1, 0, 5, w->sn.now), BFO_OK);
    for (int k = 0; k < 200 && r.cs != BFO_RECV_ST_ACK_SENT; k++)
        sn_step(&w->sn); /* the RNDV arrives, the ACK goes out */
    assert_int_equal(r.cs, BFO_RECV_ST_ACK_SENT);
    bfo_hdr_rndv h;
    memset(&h, 0, sizeof h);
    h.type = BFO_FRAG_RNDV;
    h.flags = BFO_FLAG_RESTART;
    h.ctx = 0;
    h.src = 0;
    h.tag = 5;
    h.seq = r.seq;
    h.rseq = (uint16_t)(r.rseq + 1);
    h.msg_len = BIG;
    h.sreq = r.remote;
    h.dreq = r.self;
    for (int what = 0; what < 5; what++) {
        bfo_hdr_rndv x = h;
        if (what == 0)
            x.tag = 6;
        else if (what == 1)
            x.msg_len = BIG + 1;
        else if (what == 2)
            x.ctx = 1;
        else if (what == 3)
            x.seq = (uint16_t)(r.seq + 1);
        else
            x.sreq.gen++;
        size_t n = bfo_hdr_rndv_encode(&x, buf, sizeof buf);
        assert_int_equal(bfo_engine_frame(&w->e[1], 0, 0, buf, n, w->sn.now), BFO_ERR_PROTOCOL);
    }
    assert_int_equal(r.cs, BFO_RECV_ST_ACK_SENT);
    sr_advance(w, 50000000);
    assert_true(bfo_test(&s) && bfo_test(&r));
    assert_int_equal(r.status, BFO_OK);
    assert_int_equal(r.tag, 5);
    assert_int_equal(r.length, BIG);
    assert_memory_equal(in, out, BIG);
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

/* ------------------------------------------- failure detection: helpers */

#define MS 1000000ull

/* Simulated time passes with timers checked at least every millisecond
 * (the runner's idle step is 5 ms): detection times are measured to 1 ms. */
static void pass_time(sr_world *w, uint64_t ns)
{
    for (uint64_t end = w->sn.now + ns; w->sn.now < end;) {
        if (!sn_step(&w->sn))
            w->sn.now = w->sn.now + MS < end ? w->sn.now + MS : end;
        for (int i = 0; i < w->sc->ranks; i++)
            bfo_engine_progress(&w->e[i], w->sn.now);
    }
}

/* When each rank first mapped each (peer, rail) out (UP -> FAILED), and by
 * which event; mapouts counts them all. */
typedef struct mapout_watch {
    sr_world *w;
    int rank;
    uint64_t at[SN_MAX_RANKS][BFO_MAX_RAILS];
    int ev[SN_MAX_RANKS][BFO_MAX_RAILS];
    int mapouts;
    bfo_tracer tracer;
} mapout_watch;

static void on_rail_step(void *user, const bfo_machine *m, const bfo_step *st)
{
    mapout_watch *x = (mapout_watch *)user;
    if (m != &bfo_rail_machine || st->result != BFO_OK ||
        (st->from != BFO_RAIL_ST_UP && st->from != BFO_RAIL_ST_DEMOTED) || st->to != BFO_RAIL_ST_FAILED)
        return;
    x->mapouts++;
    for (int p = 0; p < x->w->sc->ranks; p++)
        for (int k = 0; k < x->w->sc->rails; k++)
            if (st->obj == &x->w->e[x->rank].peers[p].rail[k] && !x->at[p][k]) {
                x->at[p][k] = x->w->e[x->rank].now;
                x->ev[p][k] = st->event;
            }
}

static void watch_mapouts(sr_world *w, mapout_watch *x)
{
    for (int i = 0; i < w->sc->ranks; i++) {
        memset(&x[i], 0, sizeof x[i]);
        x[i].w = w;
        x[i].rank = i;
        x[i].tracer.fn = on_rail_step;
        x[i].tracer.user = &x[i];
        w->e[i].trace = &x[i].tracer;
    }
}

static int rail_up(sr_world *w, int rank, int peer, int rail)
{
    return w->e[rank].peers[peer].rail[rail].fsm.cs == BFO_RAIL_ST_UP;
}

/* Not failed: UP, or DEMOTED (working, slow: it carries no new data). */
static int rail_live(sr_world *w, int rank, int peer, int rail)
{
    return rail_up(w, rank, peer, rail) ||
           w->e[rank].peers[peer].rail[rail].fsm.cs == BFO_RAIL_ST_DEMOTED;
}

/* Both directions of a rail between ranks a and b. */
static void rail_path(sr_world *w, int a, int b, int rail, int mode)
{
    sn_set_path(&w->sn, a, b, rail, mode);
    sn_set_path(&w->sn, b, a, rail, mode);
}

/* A stream of small (eager) messages posted as time goes by, each checked
 * at the end: delivered once, its bytes, source and tag. */
#define STREAM_MAX 1024
#define STREAM_LEN 200
typedef struct stream {
    sr_world *w;
    int n;
    int src[STREAM_MAX], dst[STREAM_MAX];
    bfo_request s[STREAM_MAX], r[STREAM_MAX];
    uint8_t out[STREAM_MAX][STREAM_LEN], in[STREAM_MAX][STREAM_LEN];
} stream;

static void stream_post(stream *st, int src, int dst)
{
    sr_world *w = st->w;
    int i = st->n++;
    assert_true(i < STREAM_MAX);
    st->src[i] = src;
    st->dst[i] = dst;
    for (int k = 0; k < STREAM_LEN; k++)
        st->out[i][k] = sr_pattern(i, (size_t)k);
    assert_int_equal(bfo_irecv(&w->e[dst], &st->r[i], st->in[i], STREAM_LEN, src, 1, i, w->sn.now),
                     BFO_OK);
    assert_int_equal(bfo_isend(&w->e[src], &st->s[i], st->out[i], STREAM_LEN, dst, 1, i, w->sn.now),
                     BFO_OK);
}

/* Posts one message every `every` ns for `ns` (0->1, or both ways in turn). */
static void stream_for(stream *st, uint64_t ns, uint64_t every, int both_ways)
{
    for (uint64_t t = 0; t < ns; t += every) {
        int back = both_ways && (st->n & 1);
        stream_post(st, back, !back);
        pass_time(st->w, every);
    }
}

/* Lets the world settle (sr_go), then: every message arrived exactly once
 * with its bytes, every pool entry is back, the ends agree on the rails. */
static void stream_check(stream *st)
{
    sr_result res;
    sr_world *w = st->w;
    sr_go(w);
    for (int i = 0; i < st->n; i++) {
        if (!bfo_test(&st->s[i]) || !bfo_test(&st->r[i]))
            fail_msg("message %d: send in %s, receive in %s", i, bfo_send_state_name(st->s[i].cs),
                     bfo_recv_state_name(st->r[i].cs));
        assert_int_equal(st->s[i].status, BFO_OK);
        assert_int_equal(st->r[i].status, BFO_OK);
        assert_int_equal(st->r[i].source, st->src[i]);
        assert_int_equal(st->r[i].tag, i);
        assert_int_equal(st->r[i].length, STREAM_LEN);
        assert_memory_equal(st->in[i], st->out[i], STREAM_LEN);
    }
    if (!sr_judge(w, &res)) /* pools, unexpected leftovers (duplicates), rails */
        fail_msg("after the stream: %s", res.why);
}

/* A world of 2 ranks and 2 rails with these timers (NULL: the defaults),
 * rails up. */
static sr_world *detect_world_cfg(uint64_t seed, int transport_heard, mapout_watch *x,
                                  const bfo_config *cfg)
{
    static const bfo_config defaults; /* zero: every default */
    sr_scenario sc = make(NULL, 0, 2, 2, seed);
    sc.cfg = cfg ? cfg : &defaults;
    sr_world *w = sr_new(&sc);
    w->sn.transport_heard = transport_heard;
    if (!cfg) {
        assert_int_equal(w->e[0].cfg.heartbeat_ns, 100 * MS);
        assert_int_equal(w->e[0].cfg.probe_timeout_ns, 40 * MS);
        assert_int_equal(w->e[0].cfg.silence_ns, 1000 * MS);
    }
    watch_mapouts(w, x);
    pass_time(w, 5 * MS);
    for (int k = 0; k < 2; k++)
        assert_true(rail_up(w, 0, 1, k) && rail_up(w, 1, 0, k));
    return w;
}

static sr_world *detect_world(uint64_t seed, int transport_heard, mapout_watch *x)
{
    return detect_world_cfg(seed, transport_heard, x, NULL);
}

/* A stream (st, cleared) over a detect_world. */
static sr_world *stream_world(stream *st, uint64_t seed, int transport_heard, mapout_watch *x)
{
    memset(st, 0, sizeof *st);
    return st->w = detect_world(seed, transport_heard, x);
}

/* The bound: heartbeat + probe timeout, plus 1 ms timer resolution twice. */
#define DETECT_BOUND (100 * MS + 40 * MS + 2 * MS)

static const char *ev_name(int ev) { return ev ? bfo_event_name(ev) : "(none)"; }

/* Rail 0 between ranks 0 and 1 is mapped out on both sides, each within
 * `bound` of `since`; returns the later of the two. */
static uint64_t mapped_out_within(const mapout_watch *x, uint64_t since, uint64_t bound,
                                  const char *what)
{
    uint64_t d0 = x[0].at[1][0] - since, d1 = x[1].at[0][0] - since;
    print_message("%s: rank 0 mapped rail 0 out after %llu ns (%s), rank 1 after %llu ns (%s)\n",
                  what, (unsigned long long)d0, ev_name(x[0].ev[1][0]), (unsigned long long)d1,
                  ev_name(x[1].ev[0][0]));
    assert_true(x[0].at[1][0] >= since && x[1].at[0][0] >= since);
    assert_true(d0 <= bound);
    assert_true(d1 <= bound);
    assert_true(x[0].ev[1][0] != BFO_EV_SILENCE_DETECTED && x[1].ev[0][0] != BFO_EV_SILENCE_DETECTED);
    return d0 > d1 ? d0 : d1;
}

static uint64_t both_mapped_out_within(const mapout_watch *x, uint64_t since, const char *what)
{
    return mapped_out_within(x, since, DETECT_BOUND, what);
}

/* ----------------------------------------------- failure detection: tests */

/* Rank 0 streams eager messages to rank 1 over both rails: its rails are
 * never idle, and rank 1 sends nothing but rail control.  Rail 0 turns
 * silent both ways.  The busy sender probes because it hears nothing; the
 * probe times out: both sides map the rail out within heartbeat + probe
 * timeout (the old silence timer took 1 s), and every message arrives once.
 * Run with the transport's acknowledgements reaching the engine (as over
 * TCP) and without (the sender then hears nothing at engine level). */
static void test_silent_loss_busy_rail_mapped_out_within_heartbeat_plus_probe_timeout(void **state)
{
    (void)state;
    for (int heard = 0; heard < 2; heard++) {
        static stream st;
        mapout_watch x[2];
        memset(&st, 0, sizeof st);
        st.w = detect_world(61 + (uint64_t)heard, heard, x);
        stream_for(&st, 300 * MS, MS, 0); /* heartbeats come and go: nothing fails */
        assert_int_equal(x[0].mapouts + x[1].mapouts, 0);
        uint64_t t = st.w->sn.now;
        rail_path(st.w, 0, 1, 0, SN_PATH_SILENT);
        stream_for(&st, DETECT_BOUND + 60 * MS, MS, 0);
        print_message("transport acknowledgements %s the engine\n", heard ? "reach" : "do not reach");
        both_mapped_out_within(x, t, "busy rail, silent both ways");
        /* the first to notice was a probe timing out */
        int first = x[0].at[1][0] <= x[1].at[0][0] ? x[0].ev[1][0] : x[1].ev[0][0];
        assert_int_equal(first, BFO_EV_PROBE_TIMED_OUT);
        rail_path(st.w, 0, 1, 0, SN_PATH_OPEN);
        stream_check(&st);
        assert_true(rail_up(st.w, 0, 1, 0) && rail_up(st.w, 1, 0, 0)); /* back after probing */
        sr_del(st.w);
    }
}

/* No traffic at all; rail 0 turns silent both ways: the heartbeat probe
 * finds it out within heartbeat + probe timeout; messages sent afterwards
 * arrive over rail 1. */
static void test_silent_loss_idle_rail_mapped_out_within_heartbeat_plus_probe_timeout(void **state)
{
    static stream st;
    mapout_watch x[2];
    (void)state;
    memset(&st, 0, sizeof st);
    st.w = detect_world(63, 1, x);
    pass_time(st.w, 300 * MS);
    assert_int_equal(x[0].mapouts + x[1].mapouts, 0);
    uint64_t t = st.w->sn.now;
    rail_path(st.w, 0, 1, 0, SN_PATH_SILENT);
    pass_time(st.w, DETECT_BOUND + 10 * MS);
    both_mapped_out_within(x, t, "idle rail, silent both ways");
    stream_for(&st, 20 * MS, MS, 1);
    rail_path(st.w, 0, 1, 0, SN_PATH_OPEN);
    stream_check(&st);
    sr_del(st.w);
}

/* Only 0->1 on rail 0 drops, silently, with traffic both ways.  Rank 0
 * keeps hearing rank 1 on rail 0 and cannot tell; rank 1 hears nothing from
 * rank 0 there, its probe times out, and its notice (over rail 1) maps the
 * rail out on rank 0.  The frames 1->0 that arrived but whose
 * acknowledgements were lost are sent again and dropped as duplicates. */
static void test_one_directional_loss_probe_timeout_on_one_side_broken_on_the_other(void **state)
{
    static stream st;
    mapout_watch x[2];
    (void)state;
    memset(&st, 0, sizeof st);
    st.w = detect_world(64, 1, x);
    stream_for(&st, 300 * MS, MS, 1);
    assert_int_equal(x[0].mapouts + x[1].mapouts, 0);
    uint64_t t = st.w->sn.now;
    sn_set_path(&st.w->sn, 0, 1, 0, SN_PATH_SILENT);
    stream_for(&st, DETECT_BOUND + 20 * MS, MS, 1);
    both_mapped_out_within(x, t, "0->1 silent on rail 0");
    assert_int_equal(x[1].ev[0][0], BFO_EV_PROBE_TIMED_OUT); /* it heard nothing */
    assert_int_equal(x[0].ev[1][0], BFO_EV_BROKEN_RCVD);     /* it heard rank 1 all along */
    sn_set_path(&st.w->sn, 0, 1, 0, SN_PATH_OPEN);
    stream_check(&st);
    assert_true(STAT(st.w, duplicates_dropped) > 0);
    sr_del(st.w);
}

/* As above, but rail 1 is down on both sides when rank 1 maps rail 0 out:
 * its notice has no rail UP to go on.  It goes out on rail 1 the moment
 * rail 1 is admitted again, and rank 0 (which keeps hearing nothing wrong
 * from its side) maps rail 0 out by it: long before its own heartbeat
 * probe could time out (heartbeat + probe timeout after rank 1 fell
 * quiet). */
static void test_broken_notice_owed_with_no_rail_up_goes_out_on_the_next_rail_admitted(void **state)
{
    static stream st;
    mapout_watch x[2];
    bfo_config cfg;
    (void)state;
    memset(&st, 0, sizeof st);
    memset(&cfg, 0, sizeof cfg);
    cfg.backoff_max_ns = 10 * MS; /* rail 1 back within a few ms of its path */
    st.w = detect_world_cfg(66, 1, x, &cfg);
    stream_for(&st, 300 * MS, MS, 1);
    rail_path(st.w, 0, 1, 1, SN_PATH_SILENT);
    stream_for(&st, DETECT_BOUND + 20 * MS, MS, 1);
    assert_false(rail_up(st.w, 0, 1, 1) || rail_up(st.w, 1, 0, 1));
    sn_set_path(&st.w->sn, 0, 1, 0, SN_PATH_SILENT);
    for (int i = 0; i < 400 && rail_up(st.w, 1, 0, 0); i++)
        stream_for(&st, MS, MS, 1);
    assert_int_equal(x[1].ev[0][0], BFO_EV_PROBE_TIMED_OUT);
    assert_true(rail_up(st.w, 0, 1, 0)); /* rank 0 cannot tell */
    assert_int_equal(st.w->e[1].peers[0].rail[0].broken_owed, 1);
    uint64_t t = st.w->sn.now;
    rail_path(st.w, 0, 1, 1, SN_PATH_OPEN);
    for (int i = 0; i < 400 && rail_up(st.w, 0, 1, 0); i++)
        stream_for(&st, MS, MS, 1);
    print_message("rail 1 open again: rank 0 mapped rail 0 out after %llu ns (%s)\n",
                  (unsigned long long)(x[0].at[1][0] - t), ev_name(x[0].ev[1][0]));
    assert_int_equal(x[0].ev[1][0], BFO_EV_BROKEN_RCVD);
    assert_true(x[0].at[1][0] - t <= 40 * MS);
    assert_int_equal(st.w->e[1].peers[0].rail[0].broken_owed, 0);
    sn_set_path(&st.w->sn, 0, 1, 0, SN_PATH_OPEN);
    stream_check(&st);
    sr_del(st.w);
}

/* The backend's disconnect(): which (rank, peer, rail) the engine asked to
 * drop, how often, and at what engine time (the simulator has none: the
 * test puts this one in each engine's backend). */
static struct {
    int calls[SN_MAX_RANKS][SN_MAX_RANKS][BFO_MAX_RAILS];
    uint64_t at[SN_MAX_RANKS][SN_MAX_RANKS][BFO_MAX_RAILS];
    sr_world *w;
} disc;

static void rec_disconnect(void *ctx, int peer, int rail)
{
    const sn_endpoint *ep = (const sn_endpoint *)ctx;
    assert_true(peer >= 0 && peer < SN_MAX_RANKS && rail >= 0 && rail < BFO_MAX_RAILS);
    if (!disc.calls[ep->rank][peer][rail]++)
        disc.at[ep->rank][peer][rail] = disc.w->e[ep->rank].now;
}

/* A map-out tells the transport to drop the rail's connection (so that what
 * is in flight on it fails over at once, not at the reconnect): the side
 * whose probe timed out and the side the notice reached each call
 * disconnect(peer, rail) once, when the rail leaves UP; never for the rail
 * that stays up, never while nothing fails; the stream arrives whole. */
static void test_map_out_tells_the_transport_to_disconnect(void **state)
{
    static stream st;
    mapout_watch x[2];
    (void)state;
    memset(&st, 0, sizeof st);
    memset(&disc, 0, sizeof disc);
    st.w = detect_world(65, 1, x);
    disc.w = st.w;
    for (int i = 0; i < 2; i++)
        st.w->e[i].be.disconnect = rec_disconnect;
    stream_for(&st, 300 * MS, MS, 1);
    assert_int_equal(x[0].mapouts + x[1].mapouts, 0);
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 2; k++)
            assert_int_equal(disc.calls[i][1 - i][k], 0);
    uint64_t t = st.w->sn.now;
    sn_set_path(&st.w->sn, 0, 1, 0, SN_PATH_SILENT);
    stream_for(&st, DETECT_BOUND + 20 * MS, MS, 1);
    both_mapped_out_within(x, t, "0->1 silent on rail 0");
    assert_int_equal(x[1].ev[0][0], BFO_EV_PROBE_TIMED_OUT);
    assert_int_equal(x[0].ev[1][0], BFO_EV_BROKEN_RCVD);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(disc.calls[i][1 - i][0], 1);
        assert_int_equal(disc.at[i][1 - i][0], x[i].at[1 - i][0]); /* at the map-out itself */
        assert_int_equal(disc.calls[i][1 - i][1], 0);
    }
    sn_set_path(&st.w->sn, 0, 1, 0, SN_PATH_OPEN);
    stream_check(&st);
    sr_del(st.w);
}

/* Rank 0 streams to rank 1; only the way back (1->0) on rail 0 turns
 * silent.  Rank 0 must find out by itself, by probing because it hears
 * nothing.  Rank 1 may hear rank 0's frames on rail 0 until the end (then
 * rank 0's notice maps the rail out there), or rank 0's messages move to
 * rail 1 first (rail 0's operations are not acknowledged any more, so it
 * has the most in flight) and rank 1's own probe times out: either way
 * within the bound. */
static void test_silent_way_back_busy_sender_probes_and_times_out(void **state)
{
    static stream st;
    mapout_watch x[2];
    (void)state;
    for (int heard = 0; heard < 2; heard++) {
        memset(&st, 0, sizeof st);
        st.w = detect_world(67 + (uint64_t)heard, heard, x);
        stream_for(&st, 300 * MS, MS, 0);
        assert_int_equal(x[0].mapouts + x[1].mapouts, 0);
        uint64_t t = st.w->sn.now;
        sn_set_path(&st.w->sn, 1, 0, 0, SN_PATH_SILENT);
        stream_for(&st, DETECT_BOUND + 20 * MS, MS, 0);
        both_mapped_out_within(x, t, "1->0 silent on rail 0, 0 streams to 1");
        assert_int_equal(x[0].ev[1][0], BFO_EV_PROBE_TIMED_OUT);
        assert_true(x[1].ev[0][0] == BFO_EV_BROKEN_RCVD || x[1].ev[0][0] == BFO_EV_PROBE_TIMED_OUT);
        sn_set_path(&st.w->sn, 1, 0, 0, SN_PATH_OPEN);
        stream_check(&st);
        sr_del(st.w);
    }
}

/* Over the control budget a heartbeat probe cannot go out: it is not
 * marked outstanding (so it cannot time out), and it goes out at a later
 * progress once the budget allows.  Rank 1 is kept from probing. */
static void test_heartbeat_over_control_budget_not_outstanding_sent_later(void **state)
{
    mapout_watch x[2];
    (void)state;
    sr_world *w = detect_world(69, 1, x);
    bfo_engine *e = &w->e[0];
    const int budget = bfo__ctl_budget(&e->cfg);
    w->e[1].cfg.heartbeat_ns = 10000 * MS;
    e->ctl_in_use += budget;
    pass_time(w, 200 * MS); /* the heartbeat was due at 100 ms */
    for (int k = 0; k < 2; k++) {
        assert_false(e->peers[1].rail[k].det.probe_out);
        assert_true(rail_up(w, 0, 1, k) && rail_up(w, 1, 0, k));
    }
    assert_int_equal(x[0].mapouts + x[1].mapouts, 0);
    uint64_t t = w->sn.now;
    e->ctl_in_use -= budget;
    pass_time(w, 2 * MS);
    for (int k = 0; k < 2; k++) /* sent, answered */
        assert_true(e->peers[1].rail[k].det.probe_sent >= t && e->peers[1].rail[k].det.last_rx >= t);
    assert_int_equal(x[0].mapouts + x[1].mapouts, 0);
    w->e[1].cfg.heartbeat_ns = 100 * MS;
    sr_go(w);
    sr_del(w);
}

/* A heartbeat probe out across a gap between progress calls (longer than a
 * heartbeat: the rail's clocks are shifted past it) is still answered by
 * its PROBEACK: the nonce it echoes is kept apart from the shifted clock. */
static void test_probe_out_across_a_progress_gap_is_answered_by_its_probeack(void **state)
{
    mapout_watch x[2];
    uint8_t buf[64];
    bfo_hdr_railctl h;
    (void)state;
    sr_world *w = detect_world(71, 1, x);
    bfo_engine *e = &w->e[0];
    bfo_rail_link *rs = &e->peers[1].rail[0];
    pass_time(w, 20 * MS);
    sn_set_path(&w->sn, 1, 0, 0, SN_PATH_HOLD); /* rank 0 hears nothing on rail 0 */
    for (int k = 0; k < 200 && !rs->det.probe_out; k++)
        pass_time(w, MS);
    assert_true(rs->det.probe_out);
    const uint64_t nonce = rs->det.probe_nonce, later = w->sn.now + 300 * MS;
    bfo_engine_progress(e, later); /* a gap of 300 ms: the clocks move past it */
    assert_true(rs->det.probe_out);
    assert_true(rs->det.probe_sent > nonce);
    memset(&h, 0, sizeof h);
    h.type = BFO_FRAG_PROBEACK;
    h.rail = 0;
    h.epoch = rs->epoch;
    h.nonce = nonce;
    size_t n = bfo_hdr_railctl_encode(&h, buf, sizeof buf);
    assert_int_equal(bfo_engine_frame(e, 1, 0, buf, n, later), BFO_OK);
    assert_false(rs->det.probe_out); /* answered */
    assert_int_equal(x[0].mapouts, 0);
    sr_del(w);
}

/* The timers set low: heartbeat 20 ms, probe timeout 30 ms.  A busy rail
 * that turns silent is mapped out within ~50 ms; a second of streaming
 * before it maps nothing out. */
static void test_short_timers_silent_rail_mapped_out_within_50_ms(void **state)
{
    static stream st;
    static bfo_config cfg;
    mapout_watch x[2];
    (void)state;
    memset(&cfg, 0, sizeof cfg);
    cfg.heartbeat_ns = 20 * MS;
    cfg.probe_timeout_ns = 30 * MS;
    for (int heard = 0; heard < 2; heard++) {
        memset(&st, 0, sizeof st);
        st.w = detect_world_cfg(70 + (uint64_t)heard, heard, x, &cfg);
        stream_for(&st, 1000 * MS, 2 * MS, 1);
        assert_int_equal(x[0].mapouts + x[1].mapouts, 0);
        uint64_t t = st.w->sn.now;
        rail_path(st.w, 0, 1, 0, SN_PATH_SILENT);
        stream_for(&st, 100 * MS, 2 * MS, 1);
        mapped_out_within(x, t, 50 * MS + 2 * MS, "heartbeat 20 ms, probe timeout 30 ms");
        rail_path(st.w, 0, 1, 0, SN_PATH_OPEN);
        stream_check(&st);
        sr_del(st.w);
    }
}

/* A stalled stream: frames 1->0 on rail 0 are held (rank 0 does not read
 * them), so rank 0's heartbeat probe gets no PROBEACK.  As over TCP, each
 * side still hears the other every 10 ms (the test calls
 * bfo_engine_rail_heard on both): rank 0 offers its stalled frame again,
 * and its keepalives reach rank 1.  No map-out for 10 heartbeat intervals,
 * rank 0's probe outstanding throughout; once the calls stop, the probe
 * times out within probe_timeout of the last one, and rank 1 maps the rail
 * out by rank 0's notice or its own probe, at the same moment. */
static void test_stalled_peer_heard_is_not_failed_until_it_falls_silent(void **state)
{
    static stream st;
    mapout_watch x[2];
    uint64_t last_heard = 0;
    (void)state;
    sr_world *w = stream_world(&st, 65, 1, x);
    sn_set_path(&w->sn, 1, 0, 0, SN_PATH_HOLD);
    /* rank 0, idle on rail 0, sends its heartbeat probe; it is not answered */
    while (!w->e[0].peers[1].rail[0].det.probe_out) {
        assert_true(w->sn.now < 200 * MS);
        pass_time(w, MS);
    }
    for (int ms = 0; ms < 1000; ms++) { /* the stall lasts 10 heartbeat intervals */
        if (ms % 10 == 0) {
            bfo_engine_rail_heard(&w->e[0], 1, 0, w->sn.now);
            bfo_engine_rail_heard(&w->e[1], 0, 0, w->sn.now);
            last_heard = w->sn.now;
        }
        if (ms % 2 == 0)
            stream_post(&st, 0, 1);
        pass_time(w, MS);
        assert_true(w->e[0].peers[1].rail[0].det.probe_out);
    }
    assert_int_equal(x[0].mapouts + x[1].mapouts, 0);
    /* not failed; demoted, maybe: it delivered nothing for a second while
     * rail 1 did (slow is not dead) */
    assert_true(rail_live(w, 0, 1, 0) && rail_live(w, 1, 0, 0));
    for (int ms = 0; ms < 100 && !x[0].at[1][0]; ms++) { /* rank 1 falls silent */
        if (ms % 2 == 0)
            stream_post(&st, 0, 1);
        pass_time(w, MS);
    }
    pass_time(w, 2 * MS); /* rank 0's notice reaches rank 1 over rail 1 */
    uint64_t d = x[0].at[1][0] - last_heard;
    print_message("stalled peer: no map-out for 1 s while heard; mapped out %llu ns after the "
                  "last heard (%s), rank 1 by %s\n",
                  (unsigned long long)d, ev_name(x[0].ev[1][0]), ev_name(x[1].ev[0][0]));
    assert_int_equal(x[0].ev[1][0], BFO_EV_PROBE_TIMED_OUT);
    assert_true(d >= 40 * MS && d <= 40 * MS + 2 * MS);
    assert_true(x[1].ev[0][0] == BFO_EV_BROKEN_RCVD || x[1].ev[0][0] == BFO_EV_PROBE_TIMED_OUT);
    assert_true(x[1].at[0][0] <= x[0].at[1][0] + 2 * MS && x[0].at[1][0] <= x[1].at[0][0] + 2 * MS);
    sn_set_path(&w->sn, 1, 0, 0, SN_PATH_OPEN);
    stream_check(&st);
    sr_del(w);
}

/* A busy peer (docs/engine-design.md, "The failure detector"): rank 1
 * computes and calls nothing for 5 s (both ways of both rails held: none of
 * its frames come, none of rank 0's are read) while rank 0 sends to it.  Its
 * host still answers (each side's transport reports the other's kernel
 * every 100 ms: bfo_engine_host_heard), so no rail is mapped out, though no
 * probe is answered; once it calls again, every message arrives and the
 * probe answered after the spell gives no round-trip sample.  Then the host
 * falls silent too (a dead host, a rail cut while the peer computes): the
 * rails are mapped out within host_timeout + probe_timeout of the last
 * answer. */
static void test_busy_peer_host_heard_is_not_failed(void **state)
{
    static stream st;
    mapout_watch x[2];
    uint64_t last = 0;
    (void)state;
    sr_world *w = stream_world(&st, 66, 0, x);
    for (int k = 0; k < 2; k++)
        rail_path(w, 0, 1, k, SN_PATH_HOLD);
    for (int ms = 0; ms < 5000; ms++) {
        if (ms % 100 == 0) {
            for (int k = 0; k < 2; k++) {
                bfo_engine_host_heard(&w->e[0], 1, k, w->sn.now);
                bfo_engine_host_heard(&w->e[1], 0, k, w->sn.now);
            }
        }
        if (ms % 50 == 0 && ms < 1000)
            stream_post(&st, 0, 1);
        pass_time(w, MS);
    }
    assert_int_equal(x[0].mapouts + x[1].mapouts, 0);
    assert_true(w->e[0].peers[1].rail[0].det.probe_out || w->e[0].peers[1].rail[1].det.probe_out);
    for (int k = 0; k < 2; k++)
        rail_path(w, 0, 1, k, SN_PATH_OPEN);
    stream_check(&st);
    assert_int_equal(x[0].mapouts + x[1].mapouts, 0);
    for (int k = 0; k < 2; k++) /* 5 s of computing is not a round trip */
        assert_true(w->e[0].peers[1].rail[k].det.srtt < 10 * MS);
    print_message("busy peer: 5 s without a call, its host heard every 100 ms: no map-out\n");

    /* the host falls silent as well */
    for (int k = 0; k < 2; k++)
        rail_path(w, 0, 1, k, SN_PATH_HOLD);
    for (int ms = 0; ms < 2000 && !(x[0].at[1][0] && x[0].at[1][1]); ms++) {
        if (ms % 100 == 0 && ms < 300) {
            for (int k = 0; k < 2; k++) {
                bfo_engine_host_heard(&w->e[0], 1, k, w->sn.now);
                bfo_engine_host_heard(&w->e[1], 0, k, w->sn.now);
            }
            last = w->sn.now;
        }
        pass_time(w, MS);
    }
    for (int k = 0; k < 2; k++) {
        uint64_t d = x[0].at[1][k] - last;
        print_message("rail %d: mapped out %llu ms after the host was last heard (%s)\n", k,
                      (unsigned long long)(d / MS), ev_name(x[0].ev[1][k]));
        assert_true(x[0].at[1][k] > last);
        assert_true(d <= 500 * MS + 40 * MS + 2 * MS);
    }
    for (int k = 0; k < 2; k++)
        rail_path(w, 0, 1, k, SN_PATH_OPEN);
    sr_del(w);
}

/* The race t14 found (shm and TCP rails, a rank that starts computing):
 * rank 0 probes rail 0; rank 1's last act before it computes is heard on
 * rail 1 just after that probe went out (the shm transport hears the peer
 * take its ring, a frame read late comes in); then rank 1 is silent
 * everywhere, its host heard on both rails every millisecond.  What came
 * once just after the probe was no process that talks: it fell silent, so
 * its host excuses rail 0 as it would have before.  No rail is mapped out
 * in 2 s, and everything arrives when rank 1 calls again. */
static void test_busy_peer_heard_once_after_the_probe_then_silent_is_not_failed(void **state)
{
    static stream st;
    mapout_watch x[2];
    (void)state;
    sr_world *w = stream_world(&st, 69, 0, x);
    bfo_rail_link *rs = &w->e[0].peers[1].rail[0];
    for (int ms = 0; ms < 1000 && !rs->det.probe_out; ms++) {
        if (ms % 10 == 0)
            stream_post(&st, 0, 1);
        pass_time(w, MS);
    }
    assert_true(rs->det.probe_out);
    for (int k = 0; k < 2; k++)
        rail_path(w, 0, 1, k, SN_PATH_HOLD);
    pass_time(w, MS);
    bfo_engine_rail_heard(&w->e[0], 1, 1, w->sn.now); /* after the probe */
    assert_true(w->e[0].peers[1].rail[1].det.last_rx > rs->det.probe_sent);
    for (int ms = 0; ms < 2000; ms++) {
        for (int k = 0; k < 2; k++) {
            bfo_engine_host_heard(&w->e[0], 1, k, w->sn.now);
            bfo_engine_host_heard(&w->e[1], 0, k, w->sn.now);
        }
        if (ms % 50 == 0 && ms < 500)
            stream_post(&st, 0, 1);
        pass_time(w, MS);
    }
    assert_int_equal(x[0].mapouts + x[1].mapouts, 0);
    for (int k = 0; k < 2; k++)
        rail_path(w, 0, 1, k, SN_PATH_OPEN);
    stream_check(&st);
    assert_int_equal(x[0].mapouts + x[1].mapouts, 0);
    print_message("heard once just after the probe, then silent 2 s, its host heard: no map-out\n");
    sr_del(w);
}

/* Busy is a fact about a process: rank 1's process keeps talking on rail 1
 * while rail 0 turns silent both ways, its host still heard there (as a
 * kernel that acknowledges over a path that loses only the process's
 * frames would be: large segments lost, small ones through).  Its host
 * heard since the probe, rail 0 waits half host_timeout_ns (a TCP
 * retransmission or two), not a probe timeout: mapped out within
 * heartbeat + host_timeout_ns / 2 all the same. */
static void test_host_heard_excuses_a_rail_a_retransmission_long_when_the_process_talks_elsewhere(void **state)
{
    static stream st;
    mapout_watch x[2];
    (void)state;
    sr_world *w = stream_world(&st, 67, 0, x);
    const uint64_t bound = 100 * MS + w->e[0].cfg.host_timeout_ns / 2 + 2 * MS;
    uint64_t t = w->sn.now;
    rail_path(w, 0, 1, 0, SN_PATH_SILENT);
    for (int ms = 0; ms < (int)((bound + 60 * MS) / MS); ms++) {
        bfo_engine_host_heard(&w->e[0], 1, 0, w->sn.now);
        bfo_engine_host_heard(&w->e[1], 0, 0, w->sn.now);
        if (ms % 2 == 0)
            stream_post(&st, 0, 1);
        pass_time(w, MS);
    }
    mapped_out_within(x, t, bound, "silent rail, host heard, the process heard on the other rail");
    rail_path(w, 0, 1, 0, SN_PATH_OPEN);
    stream_check(&st);
    sr_del(w);
}

/* A segment lost in a shaper's overflowing queue: rail 0's frames from
 * rank 1 are held 150 ms (a retransmission timeout and then some) while
 * rank 1's process talks on rail 1 and its host keeps acknowledging on
 * rail 0.  Rail 0 is not mapped out (it was at the probe timeout, 40 ms
 * after its heartbeat, before host_heard excused it), and everything
 * arrives. */
static void test_rail_whose_frames_wait_for_a_retransmission_is_not_failed(void **state)
{
    static stream st;
    mapout_watch x[2];
    (void)state;
    sr_world *w = stream_world(&st, 69, 0, x);
    rail_path(w, 1, 0, 0, SN_PATH_HOLD);
    for (int ms = 0; ms < 150; ms++) { /* each kernel hears the other's acknowledgements */
        bfo_engine_host_heard(&w->e[0], 1, 0, w->sn.now);
        bfo_engine_host_heard(&w->e[1], 0, 0, w->sn.now);
        if (ms % 2 == 0)
            stream_post(&st, 1, 0);
        pass_time(w, MS);
    }
    rail_path(w, 1, 0, 0, SN_PATH_OPEN);
    pass_time(w, 200 * MS);
    assert_int_equal(x[0].mapouts + x[1].mapouts, 0);
    stream_check(&st);
    assert_int_equal(x[0].mapouts + x[1].mapouts, 0);
    sr_del(w);
}

/* Every rank computes at once (an MPI program's compute phase): for 5 s
 * nobody calls the engine nor the network.  Nobody heard anything, but
 * nobody listened either: a gap longer than a heartbeat moves the rails'
 * clocks on, so nothing is mapped out when the calls resume, and the
 * messages posted before the phase arrive. */
static void test_every_rank_computing_at_once_is_not_silence(void **state)
{
    static stream st;
    mapout_watch x[2];
    (void)state;
    sr_world *w = stream_world(&st, 68, 1, x);
    for (int ms = 0; ms < 150; ms++) { /* a heartbeat probe or two go out */
        if (ms % 10 == 0)
            stream_post(&st, 0, 1);
        pass_time(w, MS);
    }
    w->sn.now += 5000 * MS; /* the compute phase: no step, no progress */
    pass_time(w, 300 * MS);
    assert_int_equal(x[0].mapouts + x[1].mapouts, 0);
    stream_check(&st);
    assert_int_equal(x[0].mapouts + x[1].mapouts, 0);
    sr_del(w);
}

/* Back-pressure in one direction: rank 1 posts no receive for 1 s while
 * rank 0 sends 40 eager messages; its 8 unexpected buffers fill, it refuses
 * the rest (BFO_ERR_AGAIN) and the frames wait on both rails, rank 0's
 * heartbeat probes behind them.  The stalled receiver is fed by the frames
 * offered again, the sender by the receiver's keepalives (the simulated
 * transport, as TCP does, passes them to bfo_engine_rail_heard): no rail is
 * mapped out for 10 heartbeat intervals, and everything arrives once the
 * receives are posted.  Without the keepalives the same stall looks like
 * two dead rails (and still nothing is lost). */
static void test_back_pressure_keepalives_keep_the_rails_up(void **state)
{
    static stream st;
    static bfo_config cfg;
    mapout_watch x[2];
    (void)state;
    memset(&cfg, 0, sizeof cfg);
    cfg.max_unexpected = 8;
    for (int keepalive = 1; keepalive >= 0; keepalive--) {
        memset(&st, 0, sizeof st);
        sr_world *w = st.w = detect_world_cfg(72 + (uint64_t)keepalive, 1, x, &cfg);
        bfo_request *r = st.r;
        for (int i = 0; i < 40; i++) { /* sends only: the receives come later */
            for (int k = 0; k < STREAM_LEN; k++)
                st.out[i][k] = sr_pattern(i, (size_t)k);
            st.src[i] = 0;
            st.dst[i] = 1;
            assert_int_equal(bfo_isend(&w->e[0], &st.s[i], st.out[i], STREAM_LEN, 1, 1, i, w->sn.now),
                             BFO_OK);
        }
        st.n = 40;
        w->sn.transport_heard = keepalive; /* acknowledgements and keepalives */
        pass_time(w, 1000 * MS);
        assert_int_equal(w->e[1].uxm_in_use, 8); /* it did push back */
        if (keepalive) {
            assert_int_equal(x[0].mapouts + x[1].mapouts, 0);
            for (int k = 0; k < 2; k++) {
                assert_true(rail_up(w, 0, 1, k) && rail_up(w, 1, 0, k));
                assert_true(w->e[0].peers[1].rail[k].det.probe_out); /* behind the stalled frames */
            }
        } else {
            assert_true(x[0].ev[1][0] == BFO_EV_PROBE_TIMED_OUT &&
                        x[0].ev[1][1] == BFO_EV_PROBE_TIMED_OUT);
        }
        print_message("1 s of back-pressure %s keepalives: %d map-outs\n",
                      keepalive ? "with" : "without", x[0].mapouts + x[1].mapouts);
        w->sn.transport_heard = 1;
        for (int i = 0; i < 40; i++)
            assert_int_equal(bfo_irecv(&w->e[1], &r[i], st.in[i], STREAM_LEN, 0, 1, i, w->sn.now),
                             BFO_OK);
        stream_check(&st);
        sr_del(w);
    }
}

/* A heartbeat probe belongs to one stay in UP: a rail that leaves UP with
 * its probe out does not carry the mark into its next admission. */
static void test_probe_out_cleared_when_the_rail_leaves_up(void **state)
{
    mapout_watch x[2];
    (void)state;
    sr_world *w = detect_world(74, 1, x);
    sn_set_path(&w->sn, 1, 0, 0, SN_PATH_HOLD);
    while (!w->e[0].peers[1].rail[0].det.probe_out) {
        assert_true(w->sn.now < 200 * MS);
        pass_time(w, MS);
    }
    bfo_engine_rail_event(&w->e[0], 1, 0, BFO_EV_RAIL_ERROR, w->sn.now);
    assert_int_equal(w->e[0].peers[1].rail[0].fsm.cs, BFO_RAIL_ST_FAILED);
    assert_false(w->e[0].peers[1].rail[0].det.probe_out);
    sn_set_path(&w->sn, 1, 0, 0, SN_PATH_OPEN);
    sr_go(w);
    assert_true(rail_up(w, 0, 1, 0) && !w->e[0].peers[1].rail[0].det.probe_out);
    sr_del(w);
}

/* A peer that answers late, not a dead one: the way back (1->0) on rail 0
 * is held for 150 ms out of every 200 (a loaded peer, a congested path).
 * Rank 0 hears nothing for the heartbeat interval (100 ms), probes, and the
 * answer comes 50 ms later: past the 40 ms probe timeout.  The first probe
 * caught like that times out and the rail is mapped out; after that its
 * timeout is doubled and the round trips measured raise it, so for the next
 * 3 s the rail stays up and carries traffic.  With a fixed 40 ms timeout
 * it would be mapped out at every hold. */
static void test_slow_answers_raise_the_probe_timeout_instead_of_failing_again(void **state)
{
    static stream st;
    mapout_watch x[2];
    (void)state;
    sr_world *w = stream_world(&st, 71, 1, x);
    bfo_rail_link *rl = &w->e[0].peers[1].rail[0];
    pass_time(w, 300 * MS);
    assert_int_equal(x[0].mapouts + x[1].mapouts, 0);
    uint64_t settled = 0;
    int first = 0;
    for (int cycle = 0; cycle < 20; cycle++) {
        sn_set_path(&w->sn, 1, 0, 0, SN_PATH_HOLD);
        for (int ms = 0; ms < 150; ms += 10) {
            stream_post(&st, 0, 1);
            pass_time(w, 10 * MS);
        }
        sn_set_path(&w->sn, 1, 0, 0, SN_PATH_OPEN);
        for (int ms = 0; ms < 50; ms += 10) {
            stream_post(&st, 0, 1);
            pass_time(w, 10 * MS);
        }
        if (cycle == 4) { /* one second in: whatever was mapped out is back */
            first = x[0].mapouts + x[1].mapouts;
            settled = w->sn.now;
        }
    }
    int later = x[0].mapouts + x[1].mapouts - first;
    print_message("slow answers: %d map-outs in the first second, %d in the next 3 s; rail 0 "
                  "probe timeout now %llu ms (srtt %llu ms, rttvar %llu ms, doubled %d times)\n",
                  first, later, (unsigned long long)(bfo__probe_timeout(&w->e[0], rl) / MS),
                  (unsigned long long)(rl->det.srtt / MS), (unsigned long long)(rl->det.rttvar / MS),
                  rl->det.pt_shift);
    assert_true(settled > 0);
    assert_true(first <= 4);
    assert_int_equal(later, 0);
    assert_true(bfo__probe_timeout(&w->e[0], rl) > 50 * MS);
    assert_true(rail_live(w, 0, 1, 0) && rail_live(w, 1, 0, 0)); /* maybe demoted: slow */
    stream_check(&st);
    sr_del(w);
}

/* ------------------------------------------- striping by measured rate -- */

/* A stream of 256 KiB messages from rank 0 to rank 1, four in flight, on
 * simulated rails with speeds (simnet.rail_mbps), every byte checked as
 * each completes. */
#define BIG_SLOTS 4
#define BIG_LEN (256 << 10)
typedef struct bigstream {
    sr_world *w;
    bfo_request s[BIG_SLOTS], r[BIG_SLOTS];
    int live[BIG_SLOTS];
    uint8_t *out[BIG_SLOTS], *in[BIG_SLOTS];
    int n, done;
} bigstream;

static void big_start(bigstream *b, sr_world *w)
{
    memset(b, 0, sizeof *b);
    b->w = w;
    for (int i = 0; i < BIG_SLOTS; i++) {
        b->out[i] = calloc(1, BIG_LEN); /* every byte defined (memcheck) */
        b->in[i] = calloc(1, BIG_LEN);
        assert_non_null(b->out[i]);
        assert_non_null(b->in[i]);
    }
}

/* Checks every message that completed, and frees its slot. */
static void big_reap(bigstream *b)
{
    for (int i = 0; i < BIG_SLOTS; i++)
        if (b->live[i] && bfo_test(&b->s[i]) && bfo_test(&b->r[i])) {
            assert_int_equal(b->s[i].status, BFO_OK);
            assert_int_equal(b->r[i].status, BFO_OK);
            assert_int_equal(b->r[i].length, BIG_LEN);
            assert_memory_equal(b->in[i], b->out[i], BIG_LEN);
            b->live[i] = 0;
            b->done++;
        }
}

/* Runs the stream for ns of simulated time. */
static void big_run(bigstream *b, uint64_t ns)
{
    sr_world *w = b->w;
    for (uint64_t end = w->sn.now + ns; w->sn.now < end;) {
        big_reap(b);
        for (int i = 0; i < BIG_SLOTS; i++) {
            if (!b->live[i]) {
                int tag = b->n++;
                for (int k = 0; k < BIG_LEN; k += 512)
                    b->out[i][k] = sr_pattern(tag, (size_t)k);
                assert_int_equal(bfo_irecv(&w->e[1], &b->r[i], b->in[i], BIG_LEN, 0, 1, tag, w->sn.now), BFO_OK);
                assert_int_equal(bfo_isend(&w->e[0], &b->s[i], b->out[i], BIG_LEN, 1, 1, tag, w->sn.now), BFO_OK);
                b->live[i] = 1;
            }
        }
        pass_time(w, 100000); /* 0.1 ms */
    }
}

static void big_end(bigstream *b)
{
    sr_world *w = b->w;
    for (int k = 0; k < 20000 && (b->live[0] || b->live[1] || b->live[2] || b->live[3]); k++) {
        big_reap(b);
        pass_time(w, 100000);
    }
    for (int i = 0; i < BIG_SLOTS; i++) {
        assert_false(b->live[i]);
        free(b->out[i]);
        free(b->in[i]);
    }
}

static int rail_cs(sr_world *w, int rank, int peer, int rail) { return w->e[rank].peers[peer].rail[rail].fsm.cs; }

/* Runs the stream until rank 0's rail 1 to rank 1 is in state cs, for
 * limit_ms at most, and checks that it is; returns the time that took. */
static uint64_t big_until_rail1(bigstream *b, int cs, uint64_t limit_ms)
{
    sr_world *w = b->w;
    uint64_t t0 = w->sn.now;
    while (rail_cs(w, 0, 1, 1) != cs && w->sn.now - t0 < limit_ms * MS)
        big_run(b, MS);
    assert_int_equal(rail_cs(w, 0, 1, 1), cs);
    return w->sn.now - t0;
}

/* Slow is not dead (spec/rail.rl): rail 1 slowed to 1/100 of rail 0 in
 * the middle of a stream is demoted, never failed, and carries next to
 * nothing while slow; back at speed, its measurements promote it and it
 * carries its share again.  Every message intact, no map-out. */
static void test_slow_rail_is_demoted_not_failed_and_promoted_when_it_recovers(void **state)
{
    mapout_watch x[2];
    bigstream b;
    bfo_config cfg;
    (void)state;
    memset(&cfg, 0, sizeof cfg);
    cfg.rdma = BFO_RDMA_OFF; /* FRAGs by rank 0, as over TCP */
    sr_world *w = detect_world_cfg(71, 1, x, &cfg);
    w->sn.rail_mbps[0] = w->sn.rail_mbps[1] = 1000;
    big_start(&b, w);
    big_run(&b, 200 * MS);
    uint64_t b0 = w->e[0].stats.rail_bytes[0], b1 = w->e[0].stats.rail_bytes[1];
    assert_true(b0 > 0 && b1 > 0);
    print_message("both at 1000 MB/s: rail 0 %llu B, rail 1 %llu B, measured %llu and %llu MB/s\n",
                  (unsigned long long)b0, (unsigned long long)b1,
                  (unsigned long long)(bfo_rail_rate(&w->e[0], 1, 0) / 1000000),
                  (unsigned long long)(bfo_rail_rate(&w->e[0], 1, 1) / 1000000));
    assert_true(b0 / 2 < b1 && b1 / 2 < b0); /* about even */
    w->sn.rail_mbps[1] = 10;
    uint64_t t0 = w->sn.now;
    while (rail_cs(w, 0, 1, 1) != BFO_RAIL_ST_DEMOTED && w->sn.now - t0 < 2000 * MS)
        big_run(&b, MS);
    uint64_t took = w->sn.now - t0;
    assert_int_equal(rail_cs(w, 0, 1, 1), BFO_RAIL_ST_DEMOTED);
    big_run(&b, 300 * MS); /* what it had in flight drains */
    b0 = w->e[0].stats.rail_bytes[0];
    b1 = w->e[0].stats.rail_bytes[1];
    int before = b.done;
    big_run(&b, 500 * MS);
    uint64_t d0 = w->e[0].stats.rail_bytes[0] - b0, d1 = w->e[0].stats.rail_bytes[1] - b1;
    print_message("rail 1 at 10 MB/s: demoted after %llu ms; then in 500 ms rail 0 %llu B, rail 1 %llu B "
                  "(its measuring probes), %d messages; rates %llu and %llu MB/s\n",
                  (unsigned long long)(took / MS), (unsigned long long)d0, (unsigned long long)d1,
                  b.done - before, (unsigned long long)(bfo_rail_rate(&w->e[0], 1, 0) / 1000000),
                  (unsigned long long)(bfo_rail_rate(&w->e[0], 1, 1) / 1000000));
    assert_true(d1 * 100 < d0);
    assert_int_equal(rail_cs(w, 0, 1, 1), BFO_RAIL_ST_DEMOTED); /* no flapping while slow */
    w->sn.rail_mbps[1] = 1000;
    t0 = w->sn.now;
    while (rail_cs(w, 0, 1, 1) != BFO_RAIL_ST_UP && w->sn.now - t0 < 5000 * MS)
        big_run(&b, MS);
    took = w->sn.now - t0;
    assert_int_equal(rail_cs(w, 0, 1, 1), BFO_RAIL_ST_UP);
    b1 = w->e[0].stats.rail_bytes[1];
    big_run(&b, 200 * MS);
    print_message("back at 1000 MB/s: promoted after %llu ms, then carried %llu B in 200 ms; "
                  "%llu demotions, %llu promotions, %llu measurements\n", (unsigned long long)(took / MS),
                  (unsigned long long)(w->e[0].stats.rail_bytes[1] - b1),
                  (unsigned long long)w->e[0].stats.demotions, (unsigned long long)w->e[0].stats.promotions,
                  (unsigned long long)w->e[0].stats.measures);
    assert_true(took <= 2000 * MS);
    assert_true(w->e[0].stats.rail_bytes[1] - b1 > 10 * BIG_LEN);
    big_end(&b);
    assert_int_equal(x[0].mapouts + x[1].mapouts, 0);
    assert_int_equal(w->e[0].stats.demotions, 1);
    assert_int_equal(w->e[0].stats.promotions, 1);
    sr_del(w);
}

/* A rail slow from the first byte of data (1/100 of the other): on
 * probation it is given one piece at a time (the first pieces of the
 * stream wait for a sample when both rails hold one: BFO__PICK_WAIT), its
 * rate is what it delivered over its pieces' times, and it is demoted, not
 * failed.  The stream over both rails moves at least 97/100 of what rail 0
 * alone moves (its rail 1 failed before the first byte); every message
 * intact. */
static void test_rail_slow_from_the_start_is_given_one_piece_at_a_time_and_demoted(void **state)
{
    int done[2];
    uint64_t b0 = 0, b1 = 0;
    (void)state;
    for (int alone = 0; alone < 2; alone++) {
        mapout_watch x[2];
        bigstream b;
        bfo_config cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.rdma = BFO_RDMA_OFF;
        sr_world *w = detect_world_cfg(73, 1, x, &cfg);
        w->sn.rail_mbps[0] = 1000;
        w->sn.rail_mbps[1] = 10;
        if (alone)
            sn_rail_fails(&w->sn, 1);
        big_start(&b, w);
        big_run(&b, 1000 * MS);
        done[alone] = b.done;
        if (!alone) {
            b0 = w->e[0].stats.rail_bytes[0];
            b1 = w->e[0].stats.rail_bytes[1];
            assert_int_equal(rail_cs(w, 0, 1, 1), BFO_RAIL_ST_DEMOTED);
            assert_int_equal(x[0].mapouts + x[1].mapouts, 0);
            assert_int_equal(w->e[0].stats.promotions, 0);
        }
        big_end(&b);
        sr_del(w);
    }
    print_message("1 s, rails at 1000 and 10 MB/s: %d messages of 256 KiB (rail 0 %llu B, rail 1 %llu B); "
                  "rail 0 alone: %d\n", done[0], (unsigned long long)b0, (unsigned long long)b1, done[1]);
    assert_true(done[0] * 100 >= done[1] * 97); /* (0.94 before probation: 3585 and 3812) */
    assert_true(b1 * 100 < b0);
}

/* A world of two ranks whose data goes in FRAGs (no RDMA), as over TCP. */
static sr_world *frags_world(uint64_t seed, mapout_watch *x)
{
    static bfo_config cfg; /* the world keeps the pointer */
    memset(&cfg, 0, sizeof cfg);
    cfg.rdma = BFO_RDMA_OFF;
    return detect_world_cfg(seed, 1, x, &cfg);
}

/* One message at a time over two rails of unequal speed, neither demoted
 * (the slower at 1/1 to 1/8 of the faster, rails 1000 MB/s and 1000 to
 * 125): each message of 1 or 4 MiB completes within 15% of the time its
 * bytes take at the two rails' summed rate.  Pieces go whole
 * (frag_size) where each is expected to be delivered first
 * (bfo__pick_weighted); what a rail's last piece holds up at the end of a
 * message is what is left over.  Measured (mean of 30 messages, against
 * the sum): 1.01 to 1.09 for 1 MiB, 1.00 to 1.02 for 4 MiB; rates
 * ignored (pieces alternating), 125 MB/s would carry half of them, 4.5
 * times the sum's time.  Smaller pieces for the slower rail (in
 * proportion to its rate) or at a message's tail were tried: -4% to +10%
 * (docs/engine-design.md, "Where data goes"), not taken. */
static void test_message_over_rails_of_unequal_speed_completes_near_their_summed_rate(void **state)
{
    static const unsigned slow[] = { 1000, 500, 250, 125 };
    (void)state;
    for (int c = 0; c < 4; c++)
        for (int big = 0; big < 2; big++) {
            const size_t len = big ? (size_t)4 << 20 : (size_t)1 << 20;
            mapout_watch x[2];
            bfo_request s, r;
            uint64_t total = 0, worst = 0;
            sr_world *w = frags_world(74, x);
            uint8_t *out = calloc(1, len), *in = calloc(1, len);
            double ideal = (double)len / (double)((1000 + slow[c]) * 1000000ull) * 1e9, mean;
            assert_non_null(out);
            assert_non_null(in);
            w->sn.rail_mbps[0] = 1000;
            w->sn.rail_mbps[1] = slow[c];
            for (int i = 0; i < 40; i++) {
                const uint64_t t0 = w->sn.now;
                for (size_t k = 0; k < len; k += 4096)
                    out[k] = sr_pattern(i, k);
                assert_int_equal(bfo_irecv(&w->e[1], &r, in, len, 0, 1, i, w->sn.now), BFO_OK);
                assert_int_equal(bfo_isend(&w->e[0], &s, out, len, 1, 1, i, w->sn.now), BFO_OK);
                while (!(bfo_test(&s) && bfo_test(&r)))
                    pass_time(w, 1000); /* 1 us */
                assert_int_equal(s.status, BFO_OK);
                assert_int_equal(r.status, BFO_OK);
                assert_memory_equal(in, out, len);
                if (i >= 10) { /* the rates measured by then */
                    const uint64_t d = w->sn.now - t0;
                    total += d;
                    worst = d > worst ? d : worst;
                }
            }
            mean = (double)total / 30;
            print_message("rails 1000 and %u MB/s, %zu MiB a message: %.1f us (worst %.1f), %.3f of "
                          "the summed rate's %.1f; rail 1 carried %.1f%% of the bytes\n",
                          slow[c], len >> 20, mean / 1e3, (double)worst / 1e3, mean / ideal, ideal / 1e3,
                          100.0 * (double)w->e[0].stats.rail_bytes[1] /
                              (double)(w->e[0].stats.rail_bytes[0] + w->e[0].stats.rail_bytes[1]));
            assert_true(mean <= 1.15 * ideal);
            assert_int_equal(w->e[0].stats.demotions + w->e[1].stats.demotions, 0);
            assert_int_equal(x[0].mapouts + x[1].mapouts, 0);
            free(out);
            free(in);
            sr_del(w);
        }
}

/* Two rails at 1000 MB/s, no RDMA, a stream of 256 KiB messages started
 * (big_start) and run for `ms`. */
static sr_world *two_fast_rails(uint64_t seed, mapout_watch *x, bigstream *b, uint64_t ms)
{
    sr_world *w = frags_world(seed, x);
    w->sn.rail_mbps[0] = w->sn.rail_mbps[1] = 1000;
    big_start(b, w);
    big_run(b, ms * MS);
    return w;
}

/* The last rail UP is never demoted, however slow: with rail 0 failed,
 * rail 1 at 1/100 of its old speed carries everything. */
static void test_last_rail_up_is_never_demoted(void **state)
{
    mapout_watch x[2];
    bigstream b;
    (void)state;
    sr_world *w = two_fast_rails(72, x, &b, 100);
    sn_rail_fails(&w->sn, 0);
    w->sn.rail_mbps[1] = 10;
    big_run(&b, 1000 * MS);
    assert_int_equal(rail_cs(w, 0, 1, 1), BFO_RAIL_ST_UP);
    assert_int_equal(w->e[0].stats.demotions, 0);
    w->sn.rail_down[0] = 0;
    w->sn.rail_mbps[1] = 1000;
    big_end(&b);
    sr_del(w);
}

/* A rail stalled, not slow: on two measured rails at 1000 MB/s whose
 * pieces take 30 ms (a 15 ms path), rail 1 holds both ways for 200 ms
 * with data queued on it (a TCP connection
 * waiting out a retransmission timeout behind a shaper that dropped from a
 * full queue) while rail 0 delivers and each rank hears the other's
 * process on both rails (beacons).  Its lag samples give it nothing more
 * meanwhile, but it is not demoted: one lag sample and 50 ms of silence
 * demoted it before, with 0.7 MB queued (two rails at 400 Mbit/s between
 * namespaces: 4 to 6 demotions in 3 s).  Every message arrives; no
 * map-out; afterwards both rails carry data again. */
static void test_rail_stalled_with_data_queued_is_not_demoted_on_one_lag_sample(void **state)
{
    mapout_watch x[2];
    bigstream b;
    enum { N = 400 };
    static bfo_request es[N][2], er[N][2];
    static uint8_t eout[N][1024], ein[N][2][1024];
    int n = 0;
    (void)state;
    sr_world *w = frags_world(79, x);
    for (int k = 0; k < 2; k++) {
        w->sn.rail_mbps[k] = 1000;
        w->sn.rail_delay_ns[k] = 15 * MS; /* pieces take 30 ms and more: a lag period of 120 ms */
    }
    big_start(&b, w);
    big_run(&b, 300 * MS);
    assert_true(w->e[0].peers[1].rail[0].rate.measured && w->e[0].peers[1].rail[1].rate.measured);
    rail_path(w, 0, 1, 1, SN_PATH_HOLD);
    rail_path(w, 1, 0, 1, SN_PATH_HOLD);
    /* small messages both ways meanwhile: rail 0 delivers, and each rank
     * hears the other's process */
    for (uint64_t t0 = w->sn.now; w->sn.now - t0 < 200 * MS && n < N; n++) {
        for (int k = 0; k < 2; k++) {
            bfo_engine_rail_heard(&w->e[0], 1, k, w->sn.now);
            bfo_engine_rail_heard(&w->e[1], 0, k, w->sn.now);
        }
        memset(eout[n], n & 0xff, sizeof eout[n]);
        for (int d = 0; d < 2; d++) {
            assert_int_equal(bfo_irecv(&w->e[1 - d], &er[n][d], ein[n][d], sizeof ein[n][d], d, 2, n, w->sn.now),
                             BFO_OK);
            assert_int_equal(bfo_isend(&w->e[d], &es[n][d], eout[n], sizeof eout[n], 1 - d, 2, n, w->sn.now),
                             BFO_OK);
        }
        big_run(&b, MS);
    }
    uint64_t queued = w->e[0].peers[1].rail[1].rate.q_bytes;
    int slow = w->e[0].peers[1].rail[1].rate.slow;
    assert_true(queued >= 4 * (uint64_t)w->e[0].cfg.frag_size);
    assert_true(slow > 0); /* its lag samples said so: it was given nothing more */
    assert_int_equal(w->e[0].stats.demotions, 0);
    rail_path(w, 0, 1, 1, SN_PATH_OPEN);
    rail_path(w, 1, 0, 1, SN_PATH_OPEN);
    uint64_t b1 = w->e[0].stats.rail_bytes[1];
    big_run(&b, 300 * MS);
    b1 = w->e[0].stats.rail_bytes[1] - b1;
    big_end(&b);
    for (int m = 0; m < n; m++)
        for (int d = 0; d < 2; d++) {
            assert_true(bfo_test(&es[m][d]) && bfo_test(&er[m][d]));
            assert_int_equal(er[m][d].status, BFO_OK);
            assert_memory_equal(ein[m][d], eout[m], sizeof eout[m]);
        }
    print_message("rail 1 held 200 ms with %llu bytes queued, %d slow samples: %llu demotions; %llu bytes on it "
                  "in the 300 ms after; %d messages and %d small ones each way\n", (unsigned long long)queued, slow,
                  (unsigned long long)w->e[0].stats.demotions, (unsigned long long)b1, b.done, n);
    assert_int_equal(w->e[0].stats.demotions, 0);
    assert_true(b1 > 0);
    assert_int_equal(x[0].mapouts + x[1].mapouts, 0);
    sr_del(w);
}

/* A piece whose completion is taken in the instant of its post (its
 * span at the 1 us floor: acknowledgements held, then sent at once, or
 * the clock read once for both) reads 65,584 MB/s for 64 KiB: the
 * estimate moves up a quarter at most, to 1.25 times the higher of its
 * own and the best other rail's.  Before, a 400 Mbit/s rail was read at
 * 16,473 MB/s after averaging and its equal pair demoted beside it. */
static void test_piece_back_in_the_instant_of_its_post_raises_the_estimate_a_quarter_at_most(void **state)
{
    mapout_watch x[2];
    bigstream b;
    (void)state;
    sr_world *w = two_fast_rails(83, x, &b, 300);
    bfo_engine *e = &w->e[0];
    bfo_rail_link *r1 = &e->peers[1].rail[1];
    assert_true(e->peers[1].rail[0].rate.measured && r1->rate.measured);
    uint64_t top = e->peers[1].rail[0].rate.rate > r1->rate.rate ? e->peers[1].rail[0].rate.rate : r1->rate.rate;
    bfo__rate_op(e, 1, 1, 65584, 0, e->now);
    print_message("rail 1: 64 KiB back in the instant of its post: estimate %llu B/ms, the higher before %llu\n",
                  (unsigned long long)r1->rate.rate, (unsigned long long)top);
    assert_true(r1->rate.rate <= top + top / 4);
    assert_int_equal(r1->rate.slow, 0);
    big_end(&b);
    assert_int_equal(x[0].mapouts + x[1].mapouts, 0);
    sr_del(w);
}

/* A rail on probation is given one piece at a time, so its samples read
 * its round trip: 32 KiB over 30 ms (1.1 MB/s) beside a rail measured at
 * 1000 MB/s whose pieces take 5 ms is no slow sample, and the streak
 * stays empty (an equal rail at 400 Mbit/s, promoted, was demoted on one
 * such sample and 50 ms without another); the sample that ends the
 * probation, over all its pieces, is one. */
static void test_rail_on_probation_lone_piece_is_no_slow_sample_until_its_last(void **state)
{
    mapout_watch x[2];
    bigstream b;
    (void)state;
    sr_world *w = two_fast_rails(85, x, &b, 300);
    bfo_engine *e = &w->e[0];
    bfo_rail_link *r0 = &e->peers[1].rail[0], *r1 = &e->peers[1].rail[1];
    r0->rate.rate = 1000000; /* 1000 MB/s */
    r0->rate.lat = 5 * MS;
    r1->rate.measured = 0; /* on probation again, as after a promotion */
    r1->rate.prob_bytes = r1->rate.prob_ns = 0;
    r1->rate.slow = 0;
    bfo__rate_op(e, 1, 1, 32768, 30 * MS, e->now - 30 * MS);
    assert_false(r1->rate.measured);
    assert_true(r1->rate.rate * BFO_DEMOTE_RATIO < r0->rate.rate); /* it reads slow... */
    assert_int_equal(r1->rate.slow, 0);                        /* ...and is no evidence */
    bfo__rate_op(e, 1, 1, BFO_PROBATION_BYTES - 32768, 30 * MS, e->now - 30 * MS);
    assert_true(r1->rate.measured);
    print_message("on probation: 32 KiB in 30 ms, then the rest of 256 KiB: estimate %llu B/ms, "
                  "%d slow sample(s)\n", (unsigned long long)r1->rate.rate, r1->rate.slow);
    assert_int_equal(r1->rate.slow, 1);
    r1->rate.slow = 0;
    r1->rate.rate = r0->rate.rate; /* as it was: the stream goes on over both */
    big_end(&b);
    assert_int_equal(x[0].mapouts + x[1].mapouts, 0);
    sr_del(w);
}

/* The peer takes nothing (it computes while its progress thread answers
 * for it: t14 with BFO_PROGRESS_THREAD=1): on two measured rails at
 * 1000 MB/s, both directions of both rails hold for 1 s while each rank
 * hears the other's process on both every millisecond (keepalives).
 * Every rail lags, so none is slower than another: no demotion (one rail was demoted as soon as its lag
 * came due first), no map-out, and every message arrives after. */
static void test_rails_lagging_together_are_not_demoted(void **state)
{
    mapout_watch x[2];
    bigstream b;
    (void)state;
    sr_world *w = two_fast_rails(74, x, &b, 200);
    assert_true(w->e[0].peers[1].rail[0].rate.measured && w->e[0].peers[1].rail[1].rate.measured);
    for (int k = 0; k < 2; k++)
        rail_path(w, 0, 1, k, SN_PATH_HOLD);
    for (int ms = 0; ms < 1000; ms++) {
        for (int k = 0; k < 2; k++) {
            bfo_engine_rail_heard(&w->e[0], 1, k, w->sn.now);
            bfo_engine_rail_heard(&w->e[1], 0, k, w->sn.now);
        }
        big_run(&b, MS);
    }
    assert_int_equal(w->e[0].stats.demotions, 0);
    assert_int_equal(x[0].mapouts + x[1].mapouts, 0);
    for (int k = 0; k < 2; k++)
        rail_path(w, 0, 1, k, SN_PATH_OPEN);
    big_run(&b, 100 * MS);
    big_end(&b);
    assert_int_equal(w->e[0].stats.demotions, 0);
    assert_int_equal(x[0].mapouts + x[1].mapouts, 0);
    print_message("both rails held 1 s, the process heard: %d messages, no demotion\n", b.done);
    sr_del(w);
}

/* Two equal rails with a round trip of 2 ms (1000 MB/s, every message
 * 2 ms on its way: acknowledgements waiting in a queue, as behind the
 * other direction's data on two rails shaped to 400 Mbit/s, or a TCG
 * guest's completions).  Rail 1 slows down, is demoted, recovers and is
 * promoted: on probation it is given one piece at a time, whose sample
 * reads the round trip (32 KiB over 2 ms, under 1/8 of rail 0's deep
 * queue), but each came back sooner than rail 0's pieces do, which is no
 * evidence of a slow rail.  It stays UP (it was demoted again at once,
 * 3 times in 1 s) and carries a quarter of the bytes or more (44%: a
 * lone piece's sample is its round trip's, and its estimate grows while
 * its pieces come back sooner than rail 0's; 1% while samples counted
 * from each piece's post, not from the rail's last completion before it,
 * 19% before the estimate grew); every message intact, no map-out. */
static void test_promoted_rail_on_probation_back_as_soon_as_the_best_rails_is_not_slow(void **state)
{
    mapout_watch x[2];
    bigstream b;
    (void)state;
    sr_world *w = frags_world(75, x);
    for (int k = 0; k < 2; k++) {
        w->sn.rail_mbps[k] = 1000;
        w->sn.rail_delay_ns[k] = 2 * MS;
    }
    big_start(&b, w);
    big_run(&b, 200 * MS);
    w->sn.rail_mbps[1] = 10;
    uint64_t t0 = w->sn.now;
    while (rail_cs(w, 0, 1, 1) != BFO_RAIL_ST_DEMOTED && w->sn.now - t0 < 2000 * MS)
        big_run(&b, MS);
    assert_int_equal(rail_cs(w, 0, 1, 1), BFO_RAIL_ST_DEMOTED);
    w->sn.rail_mbps[1] = 1000;
    t0 = w->sn.now;
    while (rail_cs(w, 0, 1, 1) != BFO_RAIL_ST_UP && w->sn.now - t0 < 5000 * MS)
        big_run(&b, MS);
    assert_int_equal(rail_cs(w, 0, 1, 1), BFO_RAIL_ST_UP);
    uint64_t b0 = w->e[0].stats.rail_bytes[0], b1 = w->e[0].stats.rail_bytes[1];
    big_run(&b, 1000 * MS);
    b0 = w->e[0].stats.rail_bytes[0] - b0;
    b1 = w->e[0].stats.rail_bytes[1] - b1;
    print_message("promoted after %llu ms; in the next 1 s rail 0 %llu B, rail 1 %llu B, rates %llu and "
                  "%llu MB/s; %llu demotions, %llu promotions\n", (unsigned long long)((w->sn.now - t0) / MS - 1000),
                  (unsigned long long)b0, (unsigned long long)b1,
                  (unsigned long long)(bfo_rail_rate(&w->e[0], 1, 0) / 1000000),
                  (unsigned long long)(bfo_rail_rate(&w->e[0], 1, 1) / 1000000),
                  (unsigned long long)w->e[0].stats.demotions, (unsigned long long)w->e[0].stats.promotions);
    assert_int_equal(w->e[0].stats.demotions, 1);
    assert_int_equal(w->e[0].stats.promotions, 1);
    assert_int_equal(rail_cs(w, 0, 1, 1), BFO_RAIL_ST_UP);
    assert_true(b1 * 4 > b0 + b1);
    big_end(&b);
    assert_int_equal(x[0].mapouts + x[1].mapouts, 0);
    sr_del(w);
}

/* A rail slow from the start (4 MB/s) beside a loaded one (200 MB/s,
 * every message 15 ms on its way): on probation its lone pieces come back
 * sooner than rail 0's do, yet at its own rate.  It leaves probation at
 * its own rate (under 6 MB/s; 4.0), where doubling its estimate on such
 * pieces took it out at twice that (8.0) here, and over real rails (8 Mbit/s
 * beside 800, bench-netns 1/100) at the fast rail's: it was handed 5 MB,
 * 3 s of its time, at the stream's end.  Every message intact, no
 * map-out. */
static void test_rail_on_probation_back_sooner_than_a_loaded_rail_keeps_its_own_rate(void **state)
{
    mapout_watch x[2];
    bigstream b;
    (void)state;
    sr_world *w = frags_world(78, x);
    const bfo_rail_link *rl = &w->e[0].peers[1].rail[1];
    w->sn.rail_mbps[0] = 200;
    w->sn.rail_delay_ns[0] = 15 * MS;
    w->sn.rail_mbps[1] = 4;
    big_start(&b, w);
    uint64_t left_at = 0;
    for (int t = 0; t < 3000 && rl->rate.prob_bytes < BFO_PROBATION_BYTES; t++)
        big_run(&b, MS);
    assert_true(rl->rate.measured);
    left_at = bfo_rail_rate(&w->e[0], 1, 1);
    print_message("rail 1 (4 MB/s) left probation at %llu KB/s (%llu B over %llu us), rail 0 at %llu KB/s, its "
                  "pieces %llu us\n", (unsigned long long)(left_at / 1000), (unsigned long long)rl->rate.prob_bytes,
                  (unsigned long long)(rl->rate.prob_ns / 1000), (unsigned long long)(bfo_rail_rate(&w->e[0], 1, 0) / 1000),
                  (unsigned long long)(w->e[0].peers[1].rail[0].rate.lat / 1000));
    assert_true(left_at < 6000000);
    w->sn.rail_mbps[1] = 200;
    big_end(&b);
    assert_int_equal(x[0].mapouts + x[1].mapouts, 0);
    sr_del(w);
}

/* A rail behind a token-bucket shaper (simnet.rail_burst, as tc's tbf:
 * 10 MB/s with a 64 KiB burst, next to a rail of 200 MB/s) measures fast
 * in short bursts: a measuring pair whose padding fits the bucket goes
 * through at once.  It is promoted on that at most once: demoted again on
 * probation (a flap), it is measured by a train of padded probes twice as
 * long per flap, which the bucket no longer covers.  Over 6 s it is
 * demoted twice at most (5 times in 6 s without the longer train, checked
 * again 2026-11-28), carries next to nothing, and once the
 * shaping is gone it is promoted again within 5 s; every message intact,
 * no map-out. */
static void test_rail_behind_a_token_bucket_is_not_promoted_again_and_again_on_its_bursts(void **state)
{
    mapout_watch x[2];
    bigstream b;
    (void)state;
    sr_world *w = two_fast_rails(77, x, &b, 200);
    w->sn.rail_mbps[0] = 200; /* 20 times the shaped rail: plenty to demote it, 5 times fewer bytes to move */
    w->sn.rail_mbps[1] = 10;
    w->sn.rail_burst[1] = 64 << 10;
    big_until_rail1(&b, BFO_RAIL_ST_DEMOTED, 2000);
    uint64_t b0 = w->e[0].stats.rail_bytes[0], b1 = w->e[0].stats.rail_bytes[1];
    big_run(&b, 6000 * MS);
    b0 = w->e[0].stats.rail_bytes[0] - b0;
    b1 = w->e[0].stats.rail_bytes[1] - b1;
    print_message("10 MB/s behind a 64 KiB bucket, 6 s: %llu demotions, %llu promotions, %llu measurements; "
                  "rail 0 %llu B, rail 1 %llu B\n", (unsigned long long)w->e[0].stats.demotions,
                  (unsigned long long)w->e[0].stats.promotions, (unsigned long long)w->e[0].stats.measures,
                  (unsigned long long)b0, (unsigned long long)b1);
    assert_true(w->e[0].stats.demotions <= 2);
    assert_int_equal(rail_cs(w, 0, 1, 1), BFO_RAIL_ST_DEMOTED);
    assert_true(b1 * 100 < b0);
    w->sn.rail_mbps[1] = 1000;
    w->sn.rail_burst[1] = 0;
    uint64_t took = big_until_rail1(&b, BFO_RAIL_ST_UP, 5000);
    print_message("unshaped: promoted after %llu ms\n", (unsigned long long)(took / MS));
    big_end(&b);
    assert_int_equal(x[0].mapouts + x[1].mapouts, 0);
    sr_del(w);
}

/* A rail whose pieces come back slowly while the peer's data comes in on
 * it at full speed is not demoted: its acknowledgements waited behind that
 * data.  Between two namespaces (a stream both ways, bench-netns's
 * degrade-and-recover run) each rank demoted, in turn, the rail the other
 * loaded: a rank that demotes rail 1 sends everything on rail 0, the other
 * rank's pieces on rail 0 complete behind it and look slow.  Here rank 0's
 * pieces on rail 1 slow down to 10 MB/s while 64 KiB frames come in on
 * rail 1 every 0.1 ms (650 MB/s: padded PROBEs, which the engine counts as
 * any frame): rail 1 stays UP for 300 ms, its slow streak held.  Once
 * nothing comes in, the streak demotes it. */
static void test_rail_slow_one_way_while_the_peers_data_comes_in_fast_is_not_demoted(void **state)
{
    mapout_watch x[2];
    bigstream b;
    bfo_hdr_railctl pr;
    static uint8_t f[BFO_HDR_RAILCTL_SIZE + (64 << 10)];
    (void)state;
    sr_world *w = two_fast_rails(78, x, &b, 200);
    memset(&pr, 0, sizeof pr);
    pr.type = BFO_FRAG_PROBE;
    pr.rail = 1;
    pr.epoch = w->e[0].peers[1].rail[1].epoch;
    assert_int_equal(bfo_hdr_railctl_encode(&pr, f, sizeof f), BFO_HDR_RAILCTL_SIZE);
    w->sn.rail_mbps[1] = 10;
    for (uint64_t t0 = w->sn.now; w->sn.now - t0 < 300 * MS;) {
        pr.nonce++;
        bfo_hdr_railctl_encode(&pr, f, sizeof f);
        assert_int_equal(bfo_engine_frame(&w->e[0], 1, 1, f, sizeof f, w->sn.now), BFO_OK);
        big_run(&b, 100000);
    }
    print_message("fast in, slow out, 300 ms: rail 1 %s, %d slow samples held, in %llu MB/s\n",
                  bfo_rail_state_name(rail_cs(w, 0, 1, 1)), w->e[0].peers[1].rail[1].rate.slow,
                  (unsigned long long)(w->e[0].peers[1].rail[1].rate.in_rate / 1000));
    assert_int_equal(rail_cs(w, 0, 1, 1), BFO_RAIL_ST_UP);
    assert_int_equal(w->e[0].stats.demotions, 0);
    assert_true(w->e[0].peers[1].rail[1].rate.slow > 0);
    uint64_t took = big_until_rail1(&b, BFO_RAIL_ST_DEMOTED, 1000);
    print_message("nothing in: demoted after %llu ms\n", (unsigned long long)(took / MS));
    assert_true(took < 200 * MS);
    w->sn.rail_mbps[1] = 1000;
    big_end(&b);
    assert_int_equal(x[0].mapouts + x[1].mapouts, 0);
    sr_del(w);
}

/* Active-standby (bfo_config.standby_rails): rail 1 carries probes only
 * while rail 0 is UP; when rail 0 fails it is promoted and carries the
 * stream; when rail 0 is back, rail 1 is demoted again. */
static void test_standby_rail_carries_data_only_while_no_active_rail_is_up(void **state)
{
    bigstream b;
    bfo_config cfg;
    (void)state;
    memset(&cfg, 0, sizeof cfg);
    cfg.standby_rails = 1u << 1;
    cfg.rdma = BFO_RDMA_OFF;
    sr_scenario sc = make(NULL, 0, 2, 2, 73);
    sc.cfg = &cfg;
    sr_world *w = sr_new(&sc);
    w->sn.rail_mbps[0] = w->sn.rail_mbps[1] = 1000;
    pass_time(w, 10 * MS);
    assert_int_equal(rail_cs(w, 0, 1, 0), BFO_RAIL_ST_UP);
    assert_int_equal(rail_cs(w, 0, 1, 1), BFO_RAIL_ST_DEMOTED);
    assert_int_equal(rail_cs(w, 1, 0, 1), BFO_RAIL_ST_DEMOTED);
    big_start(&b, w);
    big_run(&b, 200 * MS);
    uint64_t b1 = w->e[0].stats.rail_bytes[1];
    print_message("standby: rail 0 %llu B, rail 1 %llu B while rail 0 is UP\n",
                  (unsigned long long)w->e[0].stats.rail_bytes[0], (unsigned long long)b1);
    assert_int_equal(b1, 0); /* no data, no measurements: a standby rail is not measured */
    sn_rail_fails(&w->sn, 0);
    uint64_t took = big_until_rail1(&b, BFO_RAIL_ST_UP, 1000);
    print_message("rail 0 down: rail 1 promoted after %llu ms\n", (unsigned long long)(took / MS));
    big_run(&b, 200 * MS);
    assert_true(w->e[0].stats.rail_bytes[1] > b1 + 10 * BIG_LEN);
    w->sn.rail_down[0] = 0;
    uint64_t t0 = w->sn.now;
    while ((rail_cs(w, 0, 1, 0) != BFO_RAIL_ST_UP || rail_cs(w, 0, 1, 1) != BFO_RAIL_ST_DEMOTED) &&
           w->sn.now - t0 < 3000 * MS)
        big_run(&b, MS);
    assert_int_equal(rail_cs(w, 0, 1, 0), BFO_RAIL_ST_UP);
    assert_int_equal(rail_cs(w, 0, 1, 1), BFO_RAIL_ST_DEMOTED);
    big_end(&b);
    sr_del(w);
}

/* Out of order, then the pool runs dry.  Rank 0's messages on rail 0 wait
 * (0->1 held) while those on rail 1 arrive ahead of them and fill rank 1's
 * 8 buffers (the out-of-order list); once rail 0 opens, the next message in
 * order finds no buffer (back-pressure).  Rank 1 then receives one message
 * at a time, each receive posted after the last completed.  Every message
 * waiting out of order must move on to the unexpected queue in the buffer
 * it already has: if it needed a second one it would stay behind, the
 * frames on the rails would keep asking for buffers, and nothing would move
 * again (a deadlock seen over TCP under back-pressure). */
static void test_out_of_order_messages_move_on_in_their_own_buffers(void **state)
{
    static stream st;
    static bfo_config cfg;
    mapout_watch x[2];
    (void)state;
    memset(&cfg, 0, sizeof cfg);
    memset(&st, 0, sizeof st);
    cfg.max_unexpected = 8;
    sr_world *w = st.w = detect_world_cfg(74, 1, x, &cfg);
    bfo_request *r = st.r;
    sn_set_path(&w->sn, 0, 1, 0, SN_PATH_HOLD);
    for (int i = 0; i < 40; i++) {
        for (int k = 0; k < STREAM_LEN; k++)
            st.out[i][k] = sr_pattern(i, (size_t)k);
        st.src[i] = 0;
        st.dst[i] = 1;
        assert_int_equal(bfo_isend(&w->e[0], &st.s[i], st.out[i], STREAM_LEN, 1, 1, i, w->sn.now),
                         BFO_OK);
    }
    st.n = 40;
    pass_time(w, 20 * MS);
    assert_int_equal(bfo__ooo_count(&w->e[1]), 8); /* every buffer holds a message that came too early */
    sn_set_path(&w->sn, 0, 1, 0, SN_PATH_OPEN);
    pass_time(w, 20 * MS);
    for (int i = 0; i < 40; i++) {
        assert_int_equal(bfo_irecv(&w->e[1], &r[i], st.in[i], STREAM_LEN, 0, 1, i, w->sn.now), BFO_OK);
        for (int ms = 0; ms < 200 && !bfo_test(&r[i]); ms++)
            pass_time(w, MS);
        assert_true(bfo_test(&r[i]));
        assert_int_equal(r[i].status, BFO_OK);
        assert_memory_equal(st.in[i], st.out[i], STREAM_LEN);
    }
    for (int ms = 0; ms < 200; ms++)
        pass_time(w, MS);
    for (int i = 0; i < 40; i++)
        assert_true(bfo_test(&st.s[i]) && st.s[i].status == BFO_OK);
    assert_int_equal(x[0].mapouts + x[1].mapouts, 0);
    assert_int_equal(w->e[1].uxm_in_use, 0);
    sr_del(w);
}

/* bfo_engine_rail_heard ignores what it cannot be about, and feeds the
 * rail's timers whatever the rail's state. */
static void test_rail_heard_ignores_bad_arguments(void **state)
{
    sr_scenario sc = make(NULL, 0, 3, 2, 66);
    (void)state;
    sr_world *w = sr_new(&sc);
    sr_advance(w, 1000000);
    bfo_engine *e = &w->e[0];
    uint64_t before = e->peers[1].rail[0].det.last_rx, later = w->sn.now + 7;
    bfo_engine_rail_heard(e, -1, 0, later);
    bfo_engine_rail_heard(e, 3, 0, later);
    bfo_engine_rail_heard(e, 0, 0, later); /* itself */
    bfo_engine_rail_heard(e, 1, -1, later);
    bfo_engine_rail_heard(e, 1, 2, later);
    assert_int_equal(e->peers[1].rail[0].det.last_rx, before);
    assert_int_equal(e->peers[0].rail[0].det.last_rx, 0);
    e->peers[2].unreachable = 1;
    bfo_engine_rail_heard(e, 2, 0, later);
    assert_true(e->peers[2].rail[0].det.last_rx < later);
    e->peers[2].unreachable = 0;
    bfo_engine_rail_heard(e, 1, 1, later);
    assert_int_equal(e->peers[1].rail[1].det.last_rx, later);
    assert_int_equal(e->now, later);
    bfo_engine_rail_heard(e, 1, 1, later - 5); /* time does not go back */
    assert_int_equal(e->peers[1].rail[1].det.last_rx, later);
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

/* ------------------------------------------------ MPI's envelope (issue 16) */

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

/* Sequences past the 16- and 32-bit wraps: a MATCH and an RNDV reported
 * failed that did arrive are sent again and dropped as duplicates. */
static void test_sequences_past_the_16_and_32_bit_wraps_drop_resent_messages(void **state)
{
    static const uint64_t starts[] = { 65530, 4294967290ull };
    (void)state;
    for (int i = 0; i < 2; i++) {
        sr_scenario sc = make(mixed, NMIXED, 2, 2, 34);
        sc.seq_start = starts[i];
        add_fault(&sc, SN_FAULT_TYPE, BFO_FRAG_MATCH, 0, 4, SN_DELIVER_ERROR);
        add_fault(&sc, SN_FAULT_TYPE, BFO_FRAG_RGET, 0, 1, SN_DELIVER_ERROR);
        sr_world *w = run(&sc);
        all_ok(w);
        assert_true(STAT(w, duplicates_dropped) >= 2);
        assert_true(w->e[1].peers[0].recv_seq > starts[i] + 6);
        sr_del(w);
    }
}

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

/* ------------------------------------------- probes and cancel (issue 16) */

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

/* A posted receive cancelled: complete at once as cancelled, and the
 * message goes to the next receive; a matched one: too late. */
static void test_cancel_posted_receive_and_too_late_once_matched(void **state)
{
    uint8_t a[4] = "abc", r1[4], r2[4];
    bfo_request s, q1, q2;
    (void)state;
    sr_scenario sc = make(NULL, 0, 2, 2, 54);
    sr_world *w = sr_new(&sc);
    assert_int_equal(bfo_irecv(&w->e[1], &q1, r1, 4, 0, 0, 1, w->sn.now), BFO_OK);
    assert_int_equal(bfo_irecv(&w->e[1], &q2, r2, 4, 0, 0, 1, w->sn.now), BFO_OK);
    assert_int_equal(bfo_cancel(&w->e[1], &q1, w->sn.now), BFO_OK);
    assert_true(bfo_test(&q1));
    assert_int_equal(q1.status, BFO_ERR_CANCELLED);
    assert_int_equal(bfo_cancel(&w->e[1], &q1, w->sn.now), BFO_ERR_TOO_LATE);
    bfo_isend(&w->e[0], &s, a, 4, 1, 0, 1, w->sn.now);
    sr_advance(w, 50000000);
    assert_true(bfo_test(&q2) && bfo_test(&s));
    assert_int_equal(q2.status, BFO_OK);
    assert_string_equal((char *)r2, "abc");
    assert_int_equal(bfo_cancel(&w->e[1], &q2, w->sn.now), BFO_ERR_TOO_LATE);
    assert_int_equal(bfo_cancel(&w->e[0], &s, w->sn.now), BFO_ERR_TOO_LATE);
    sr_del(w);
}

/* Sends posted before any rail is up: the first cancelled (its MATCH waits
 * for a rail), the others go on in order; the cancelled one's receive
 * never matches anything; once a send has left, cancel is too late. */
static void test_cancel_send_before_it_left_keeps_the_sequence_whole(void **state)
{
    uint8_t a[4] = "one", b[4] = "two", c[4] = "thr", r[3][4];
    bfo_request s[3], q[3];
    (void)state;
    sr_scenario sc = make(NULL, 0, 2, 2, 55);
    sr_world *w = sr_new(&sc); /* no time has passed: no rail is up */
    for (int i = 0; i < 3; i++)
        bfo_irecv(&w->e[1], &q[i], r[i], 4, 0, 0, 1, w->sn.now);
    bfo_isend(&w->e[0], &s[0], a, 4, 1, 0, 1, w->sn.now);
    bfo_isend(&w->e[0], &s[1], b, 4, 1, 0, 1, w->sn.now);
    bfo_isend(&w->e[0], &s[2], c, 4, 1, 0, 1, w->sn.now);
    assert_int_equal(bfo_cancel(&w->e[0], &s[0], w->sn.now), BFO_OK);
    assert_int_equal(bfo_cancel(&w->e[0], &s[0], w->sn.now), BFO_ERR_TOO_LATE);
    assert_false(bfo_test(&s[0])); /* until its empty MATCH is delivered */
    sr_advance(w, 100000000);
    assert_true(bfo_test(&s[0]) && bfo_test(&s[1]) && bfo_test(&s[2]));
    assert_int_equal(s[0].status, BFO_ERR_CANCELLED);
    assert_int_equal(s[1].status, BFO_OK);
    assert_true(bfo_test(&q[0]) && bfo_test(&q[1]));
    assert_string_equal((char *)r[0], "two");
    assert_string_equal((char *)r[1], "thr");
    assert_false(bfo_test(&q[2]));
    assert_int_equal(bfo_cancel(&w->e[1], &q[2], w->sn.now), BFO_OK);
    assert_int_equal(w->e[1].peers[0].recv_seq, 4);
    assert_int_equal(w->e[1].uxm_in_use, 0);
    sr_del(w);
}

/* Cancel of a request this engine does not hold. */
static void test_cancel_of_no_request_is_invalid(void **state)
{
    bfo_request r;
    (void)state;
    sr_scenario sc = make(NULL, 0, 2, 1, 56);
    sr_world *w = sr_new(&sc);
    uint8_t y = 0;
    memset(&r, 0, sizeof r);
    assert_int_equal(bfo_cancel(&w->e[0], NULL, 0), BFO_ERR_INVALID);
    assert_int_equal(bfo_cancel(&w->e[0], &r, 0), BFO_ERR_INVALID);
    /* a receive posted on the other engine (it holds no handle: not in
     * this engine's bins either) */
    assert_int_equal(bfo_irecv(&w->e[1], &r, &y, 1, 0, 0, 1, w->sn.now), BFO_OK);
    assert_int_equal(bfo_cancel(&w->e[0], &r, 0), BFO_ERR_INVALID);
    assert_false(bfo_test(&r));
    assert_int_equal(bfo_cancel(&w->e[1], &r, 0), BFO_OK);
    assert_true(bfo_test(&r));
    assert_int_equal(r.status, BFO_ERR_CANCELLED);
    assert_int_equal(bfo_cancel(&w->e[1], &r, 0), BFO_ERR_TOO_LATE);
    assert_int_equal(w->e[1].slots_in_use, 0);
    sr_del(w);
}

/* ------------------------------------------- the lane: an eager MATCH without an op */

/* Two engines over the null transport (sim/bfo_nullnet.h), one rail, up. */
typedef struct lane_world {
    bfo_engine e[2];
    nullnet nn;
    void *mem[2], *ring;
} lane_world;

static lane_world *lane_new(void)
{
    lane_world *w = (lane_world *)calloc(1, sizeof *w);
    w->ring = malloc(nn_mem_size(64, 65536 + 128));
    nn_init(&w->nn, 1, 64, 65536 + 128, w->ring);
    for (int i = 0; i < 2; i++) {
        bfo_config c;
        memset(&c, 0, sizeof c);
        c.rank = i;
        c.nranks = 2;
        c.nrails = 1;
        c.eager_limit = 65536;
        size_t need = bfo_engine_mem_size(&c);
        w->mem[i] = malloc(need);
        w->nn.eng[i] = &w->e[i];
        assert_int_equal(bfo_engine_init(&w->e[i], &c, &w->nn.be[i], w->mem[i], need, w->nn.now), BFO_OK);
    }
    while (nn_pump(&w->nn)) /* connect and probe */
        ;
    return w;
}

static void lane_del(lane_world *w)
{
    free(w->mem[0]);
    free(w->mem[1]);
    free(w->ring);
    free(w);
}

/* The token of the newest frame in the null transport's ring. */
static uint64_t lane_last_token(const lane_world *w)
{
    return w->nn.ring[(w->nn.head + w->nn.count - 1) % w->nn.cap].token;
}

/* MATCH_SENT --MATCH_DELIVERED--> COMPLETE through the lane: the send's
 * MATCH holds no op, its token names the request; a second completion of
 * that token, or one naming a live request that is not on the lane, is
 * ignored. */
static void test_lane_MATCH_DELIVERED_completes_a_send_that_held_no_op(void **state)
{
    lane_world *w = lane_new();
    bfo_request s, r, big, rbig;
    static uint8_t out[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, in[8], bigout[100000], bigin[100000];
    uint64_t tok;
    (void)state;
    assert_int_equal(bfo_irecv(&w->e[1], &r, in, sizeof in, 0, 0, 5, w->nn.now), BFO_OK);
    assert_int_equal(bfo_isend(&w->e[0], &s, out, sizeof out, 1, 0, 5, w->nn.now), BFO_OK);
    assert_int_equal(s.lane, 1);
    assert_int_equal(w->e[0].ops_in_use - w->e[0].ctl_in_use, 0);
    assert_int_equal(w->e[0].peers[1].rail[0].rate.inflight, 1);
    tok = lane_last_token(w);
    assert_true((uint32_t)tok & BFO__LANE_BIT);
    while (nn_pump(&w->nn))
        ;
    assert_true(bfo_test(&s) && bfo_test(&r));
    assert_int_equal(s.status, BFO_OK);
    assert_int_equal(r.status, BFO_OK);
    assert_memory_equal(in, out, sizeof out);
    assert_int_equal(s.lane, 0);
    assert_int_equal(w->e[0].peers[1].rail[0].rate.inflight, 0);
    assert_int_equal(w->e[0].peers[1].rail[0].rate.q_bytes, 0);
    /* the same token again, delivered or failed: the slot moved on */
    bfo_engine_completion(&w->e[0], tok, 1);
    bfo_engine_completion(&w->e[0], tok, 0);
    assert_int_equal(w->e[0].stats.messages_sent, 1);
    assert_int_equal(w->e[0].peers[1].rail[0].rate.inflight, 0);
    assert_int_equal(w->e[0].slots_in_use, 0);
    /* a lane token naming a live send that went by an op (a rendezvous) */
    assert_int_equal(bfo_isend(&w->e[0], &big, bigout, sizeof bigout, 1, 0, 6, w->nn.now), BFO_OK);
    assert_int_equal(big.lane, 0);
    bfo_engine_completion(&w->e[0], ((uint64_t)big.self.gen << 32) | (BFO__LANE_BIT | big.self.index), 1);
    assert_false(bfo_test(&big));
    assert_int_equal(bfo_irecv(&w->e[1], &rbig, bigin, sizeof bigin, 0, 0, 6, w->nn.now), BFO_OK);
    while (nn_pump(&w->nn))
        ;
    assert_true(bfo_test(&big) && bfo_test(&rbig));
    assert_int_equal(big.status, BFO_OK);
    assert_int_equal(rbig.status, BFO_OK);
    for (int k = 0; k < 2; k++) {
        assert_int_equal(w->e[k].ops_in_use - w->e[k].ctl_in_use, 0);
        assert_int_equal(w->e[k].slots_in_use, 0);
    }
    lane_del(w);
}

/* MATCH_SENT --MATCH_FAILED--> MATCH_SENT / post_match for the lane: the
 * hard case, a MATCH reported failed that did arrive.  The lane's MATCH
 * becomes an op, is sent again (by an op), and the receiver drops the
 * copy; the send completes once, the receive once, with the bytes. */
static void test_lane_MATCH_FAILED_after_it_arrived_is_sent_again_and_the_copy_dropped(void **state)
{
    lane_world *w = lane_new();
    bfo_request s, r;
    static uint8_t out[8] = { 9, 8, 7, 6, 5, 4, 3, 2 }, in[8];
    uint64_t posted;
    (void)state;
    assert_int_equal(bfo_irecv(&w->e[1], &r, in, sizeof in, 0, 0, 5, w->nn.now), BFO_OK);
    posted = w->e[0].stats.ops_posted;
    w->nn.fail_every = w->nn.ops + 1; /* the next post: delivered, completed failed */
    assert_int_equal(bfo_isend(&w->e[0], &s, out, sizeof out, 1, 0, 5, w->nn.now), BFO_OK);
    w->nn.fail_every = 0;
    assert_int_equal(s.lane, 1);
    while (nn_pump(&w->nn))
        ;
    assert_true(bfo_test(&s) && bfo_test(&r));
    assert_int_equal(s.status, BFO_OK);
    assert_int_equal(r.status, BFO_OK);
    assert_memory_equal(in, out, sizeof out);
    assert_int_equal(w->e[0].stats.ops_posted - posted, 2);
    assert_int_equal(w->e[1].stats.duplicates_dropped, 1);
    assert_int_equal(w->e[1].stats.messages_received, 1);
    assert_int_equal(w->e[0].peers[1].rail[0].rate.inflight, 0);
    for (int k = 0; k < 2; k++) {
        assert_int_equal(w->e[k].ops_in_use - w->e[k].ctl_in_use, 0);
        assert_int_equal(w->e[k].slots_in_use, 0);
    }
    lane_del(w);
}

/* What the lane leaves to an op: a frame that is a rate sample
 * (BFO__STRIPE_MIN bytes or more with its header), described data, a send
 * to itself. */
static void test_lane_not_taken_by_a_frame_that_is_a_rate_sample(void **state)
{
    lane_world *w = lane_new();
    bfo_request s, r;
    static uint8_t out[BFO__STRIPE_MIN], in[BFO__STRIPE_MIN];
    (void)state;
    for (size_t k = 0; k < sizeof out; k++)
        out[k] = (uint8_t)(k * 13 + 1);
    assert_int_equal(bfo_irecv(&w->e[1], &r, in, sizeof in, 0, 0, 5, w->nn.now), BFO_OK);
    assert_int_equal(bfo_isend(&w->e[0], &s, out, BFO__STRIPE_MIN - BFO_HDR_MATCH_SIZE, 1, 0, 5, w->nn.now),
                     BFO_OK);
    assert_int_equal(s.lane, 0);
    assert_int_equal(w->e[0].ops_in_use - w->e[0].ctl_in_use, 1);
    while (nn_pump(&w->nn))
        ;
    assert_true(bfo_test(&s) && bfo_test(&r));
    assert_int_equal(r.status, BFO_OK);
    assert_int_equal(r.length, BFO__STRIPE_MIN - BFO_HDR_MATCH_SIZE);
    assert_memory_equal(in, out, BFO__STRIPE_MIN - BFO_HDR_MATCH_SIZE);
    assert_int_equal(bfo_irecv(&w->e[1], &r, in, sizeof in, 0, 0, 6, w->nn.now), BFO_OK);
    assert_int_equal(bfo_isend(&w->e[0], &s, out, BFO__STRIPE_MIN - BFO_HDR_MATCH_SIZE - 1, 1, 0, 6, w->nn.now),
                     BFO_OK);
    assert_int_equal(s.lane, 1);
    while (nn_pump(&w->nn))
        ;
    assert_true(bfo_test(&s) && bfo_test(&r));
    assert_int_equal(r.status, BFO_OK);
    lane_del(w);
}

/* IDLE --RNDV_CHOSEN--> RNDV_SENT / post_rndv: the RNDV of a message above
 * eager_limit (64 KiB here) carries its first rndv_first bytes (4 KiB, the
 * default), the rest goes in FRAGs once the receiver answers; a
 * synchronous send of eager size carries all of its bytes, and the
 * receiver's answer completes it (no FRAG). */
static void test_post_rndv_carries_rndv_first_bytes_or_all_of_an_eager_sized_send(void **state)
{
    lane_world *w = lane_new();
    static uint8_t out[100000], in[100000];
    static const size_t len[] = { 100000, 8192 };
    (void)state;
    assert_int_equal(w->e[0].cfg.rndv_first, 4096);
    for (size_t k = 0; k < sizeof out; k++)
        out[k] = (uint8_t)(k * 7 + 3);
    for (int sync = 0; sync < 2; sync++) {
        bfo_request s, r;
        bfo_envelope env = { 1, 0, 0, 7 + sync, sync ? BFO_SEND_SYNC : 0 };
        const uint64_t posted = w->e[0].stats.ops_posted;
        memset(in, 0, sizeof in);
        assert_int_equal(bfo_irecv(&w->e[1], &r, in, sizeof in, 0, 0, 7 + sync, w->nn.now), BFO_OK);
        assert_int_equal(bfo_isend_env(&w->e[0], &s, out, len[sync], &env, w->nn.now), BFO_OK);
        assert_int_equal(s.first, sync ? 8192 : 4096);
        while (nn_pump(&w->nn))
            ;
        assert_true(bfo_test(&s) && bfo_test(&r));
        assert_int_equal(s.status, BFO_OK);
        assert_int_equal(r.status, BFO_OK);
        assert_int_equal(r.length, len[sync]);
        assert_memory_equal(in, out, len[sync]);
        assert_int_equal(r.first, sync ? 8192 : 4096); /* what the RNDV carried */
        /* the RNDV, then (100,000 - 4,096 bytes in 64 KiB FRAGs) two FRAGs */
        assert_int_equal(w->e[0].stats.ops_posted - posted, sync ? 1 : 3);
    }
    assert_int_equal(w->e[0].stats.copies + w->e[1].stats.copies, 2);
    lane_del(w);
}

/* ------------------------------------------------ pools that grow (issue 16) */

typedef struct grow_log {
    size_t bytes;
    int calls;
    void *blocks[8192];
} grow_log;

static void *test_grow(void *ctx, size_t bytes)
{
    grow_log *g = (grow_log *)ctx;
    void *m;
    if (g->calls == (int)(sizeof g->blocks / sizeof g->blocks[0]))
        return NULL;
    m = aligned_alloc(16, (bytes + 15) & ~(size_t)15);
    g->blocks[g->calls++] = m;
    g->bytes += bytes;
    return m;
}

static void grow_free(grow_log *g)
{
    for (int i = 0; i < g->calls; i++)
        free(g->blocks[i]);
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

/* ------------------------------------------------ described data (bfo_data.h) */

/* The mixed set (eager, at the limit, copy, GET-sized) with every message
 * described: iovec lists (gaps between the segments, sender and receiver
 * cutting differently), pack/unpack, and one side packing while the other
 * takes an iovec.  Rail 0's transport reads the descriptions in place
 * (post_send_data), rail 1 leaves them to the engine's staging buffers.
 * Nothing goes by RDMA: a described message is never registered. */
static void test_described_data_iov_pack_mixed_eager_and_rendezvous(void **state)
{
    (void)state;
    for (int mode = SR_DATA_IOV; mode <= SR_DATA_MIXED; mode++) {
        sr_scenario sc = make(mixed, NMIXED, 2, 2, 80 + (uint64_t)mode);
        sc.data = mode;
        sc.data_rails = 1;
        sr_world *w = run(&sc);
        all_ok(w);
        assert_int_equal(STAT(w, protocol_violations), 0);
        assert_int_equal(STAT(w, eagers), 5);
        assert_int_equal(STAT(w, copies), 5); /* the 4 GET-sized ones too */
        assert_int_equal(STAT(w, gets) + STAT(w, puts), 0);
        assert_int_equal(w->sn.regs_live + w->sn.nregs, 0);
        assert_true(w->sn.data_posts > 0); /* rail 0 read some in place */
        assert_true(w->e[0].stats.rail_bytes[1] + w->e[1].stats.rail_bytes[1] > 0); /* staged */
        if (mode != SR_DATA_IOV) {
            uint64_t calls = 0;
            for (int i = 0; i < NMIXED; i++)
                calls += w->spack[i].calls + w->rpack[i].calls;
            assert_true(calls > 0);
        }
        sr_del(w);
    }
}

/* A transport without post_send_data (no rail reads in place): every
 * described byte goes through the engine's staging buffers, only one of
 * them here, so frames wait for it and still all arrive. */
static void test_described_data_one_staging_buffer_frames_wait_for_it(void **state)
{
    static const msgspec m[] = { { 0, 1, 300000 }, { 0, 1, 5000 }, { 1, 0, 200000 },
                                 { 0, 1, 100 }, { 1, 0, 70000 } };
    bfo_config c;
    (void)state;
    memset(&c, 0, sizeof c);
    c.max_requests = 2 * SR_MAX_MSGS + 8;
    c.max_unexpected = 2 * SR_MAX_MSGS;
    c.data_stages = 1;
    c.frag_size = 16384;
    for (int mode = SR_DATA_IOV; mode <= SR_DATA_MIXED; mode++) {
        sr_scenario sc = make(m, 5, 2, 2, 90 + (uint64_t)mode);
        sc.cfg = &c;
        sc.data = mode;
        sc.data_rails = 0;
        sr_world *w = run(&sc);
        all_ok(w);
        assert_int_equal(w->sn.data_posts, 0);
        assert_int_equal(w->e[0].cfg.data_stages, 1);
        assert_int_equal(bfo__stages_in_use(&w->e[0]) + bfo__stages_in_use(&w->e[1]), 0);
        sr_del(w);
    }
}

/* A FRAG of a described message fails: the restart reads the message
 * again from the description, in place (the pack callback is asked for the
 * same bytes again), whether the transport or the engine packs it. */
static void test_described_frag_lost_restart_rereads_in_place(void **state)
{
    static const msgspec m[] = { { 0, 1, 300000 } };
    (void)state;
    for (int staged = 0; staged < 2; staged++) {
        sr_scenario sc = make(m, 1, 2, 2, 100 + (uint64_t)staged);
        sc.data = SR_DATA_PACK;
        sc.data_rails = staged ? 0 : 3;
        sc.rdma = BFO_RDMA_OFF;
        add_fault(&sc, SN_FAULT_TYPE, BFO_FRAG_FRAG, 0, 3, SN_LOSE);
        sr_world *w = run(&sc);
        all_ok(w);
        assert_int_equal(STAT(w, restarts), 1);
        /* read more than once: the first bytes, every FRAG, then again */
        assert_true(w->spack[0].calls > 1 + (300000 - 4096) / 65536 + 1);
        assert_int_equal(w->spack[0].bad + w->rpack[0].bad, 0);
        sr_del(w);
    }
}

/* The same fault under the iovec description, over every FRAG that a
 * 1 MiB message sends: each restart re-reads its segments in place. */
static void test_described_iov_every_frag_fault(void **state)
{
    static const msgspec m[] = { { 0, 1, 1 << 20 }, { 1, 0, 150000 } };
    (void)state;
    for (uint64_t n = 1; n <= 20; n++)
        for (int kind = SN_LOSE; kind <= SN_DELIVER_ERROR; kind++) {
            sr_scenario sc = make(m, 2, 2, 2, 110 + n);
            sc.data = n % 2 ? SR_DATA_IOV : SR_DATA_MIXED;
            sc.data_rails = n % 3 == 0 ? 0 : 1;
            add_fault(&sc, SN_FAULT_TYPE, BFO_FRAG_FRAG, 0, n, kind);
            sr_world *w = run(&sc);
            all_ok(w);
            sr_del(w);
        }
}

/* A strided vector: every other double of an array, sent as an iovec of
 * one-double segments, received as packed bytes into a plain array by an
 * unpack callback (and the other way round): the same bytes, two
 * descriptions.  Eager (16 doubles) and rendezvous (40,000), posted before
 * and after the message arrives (unexpected, copied out of the engine's
 * buffer into the description). */
typedef struct vec_ctx {
    double *dst;
    size_t calls;
} vec_ctx;
static void vec_unpack(void *ctx, size_t off, const void *src, size_t n)
{
    vec_ctx *v = (vec_ctx *)ctx;
    v->calls++;
    memcpy((char *)v->dst + off, src, n);
}
static void vec_pack(void *ctx, size_t off, void *dst, size_t n)
{
    /* the strided source: byte off of the message is byte off % 8 of double 2 * (off / 8) */
    const double *a = ((vec_ctx *)ctx)->dst;
    ((vec_ctx *)ctx)->calls++;
    for (size_t i = 0; i < n; i++) {
        size_t o = off + i;
        ((uint8_t *)dst)[i] = ((const uint8_t *)&a[2 * (o / 8)])[o % 8];
    }
}

static void test_described_strided_vector_iov_to_pack_and_back(void **state)
{
    (void)state;
    for (int late = 0; late < 2; late++)
        for (size_t count = 16; count <= 40000; count += 40000 - 16) {
            double *a = (double *)malloc(2 * count * sizeof(double));
            double *out = (double *)calloc(count, sizeof(double));
            double *back = (double *)calloc(2 * count, sizeof(double));
            bfo_data_seg *segs = (bfo_data_seg *)malloc(count * sizeof *segs);
            bfo_data sd, rd, sd2, rd2;
            vec_ctx uc = { out, 0 }, pc = { a, 0 };
            bfo_request s, r, s2, r2;
            assert_non_null(a && out && back && segs);
            for (size_t i = 0; i < 2 * count; i++)
                a[i] = (double)i * 1.5;
            for (size_t i = 0; i < count; i++) {
                segs[i].base = &a[2 * i];
                segs[i].len = sizeof(double);
            }
            memset(&sd, 0, sizeof sd);
            sd.kind = BFO_DATA_IOV;
            sd.len = count * sizeof(double);
            sd.segs = segs;
            sd.nsegs = (int)count;
            memset(&rd, 0, sizeof rd);
            rd.kind = BFO_DATA_PACK;
            rd.len = count * sizeof(double);
            rd.unpack = vec_unpack;
            rd.ctx = &uc;
            sr_scenario sc = make(NULL, 0, 2, 2, 120 + count);
            sc.data_rails = 1; /* the simulated transport reads rail 0's in place */
            sr_world *w = sr_new(&sc);
            w->sn.data_mask = 1;
            sr_advance(w, 1000000);
            if (!late)
                assert_int_equal(bfo_irecv_data(&w->e[1], &r, &rd, 0, 0, 7, w->sn.now), BFO_OK);
            assert_int_equal(bfo_isend_data(&w->e[0], &s, &sd, 1, 0, 7, w->sn.now), BFO_OK);
            if (late) {
                sr_advance(w, 5000000);
                assert_int_equal(bfo_irecv_data(&w->e[1], &r, &rd, 0, 0, 7, w->sn.now), BFO_OK);
            }
            sr_advance(w, 200000000);
            assert_true(bfo_test(&s) && bfo_test(&r));
            assert_int_equal(s.status, BFO_OK);
            assert_int_equal(r.status, BFO_OK);
            assert_int_equal(r.length, count * sizeof(double));
            for (size_t i = 0; i < count; i++)
                if (out[i] != a[2 * i])
                    fail_msg("element %zu: %g, not %g", i, out[i], a[2 * i]);
            assert_true(uc.calls > 0);
            /* and back: packed from the strided array, received into every other double */
            for (size_t i = 0; i < count; i++)
                segs[i].base = &back[2 * i];
            sd2 = rd;
            sd2.unpack = NULL;
            sd2.pack = vec_pack;
            sd2.ctx = &pc;
            rd2 = sd;
            assert_int_equal(bfo_irecv_data(&w->e[0], &r2, &rd2, 1, 0, 8, w->sn.now), BFO_OK);
            assert_int_equal(bfo_isend_data(&w->e[1], &s2, &sd2, 0, 0, 8, w->sn.now), BFO_OK);
            sr_advance(w, 200000000);
            assert_true(bfo_test(&s2) && bfo_test(&r2));
            assert_int_equal(r2.status, BFO_OK);
            for (size_t i = 0; i < count; i++)
                if (back[2 * i] != a[2 * i] || back[2 * i + 1] != 0.0)
                    fail_msg("back: element %zu", i);
            assert_true(pc.calls > 0);
            assert_int_equal(w->e[0].stats.gets + w->e[1].stats.gets + w->e[0].stats.puts +
                                 w->e[1].stats.puts, 0);
            sr_go(w);
            sr_del(w);
            free(a);
            free(out);
            free(back);
            free(segs);
        }
}

/* Truncation into a description: eager and rendezvous, an iovec with gaps
 * and an unpack callback; the description gets the first bytes that fit,
 * nothing around it is touched, the status says TRUNCATE and the length
 * the message's. */
static void test_described_truncation(void **state)
{
    static uint8_t big[200000];
    (void)state;
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = (uint8_t)(i * 13 + 1);
    for (size_t len = 100; len <= sizeof big; len += sizeof big - 100)
        for (int pack = 0; pack < 2; pack++) {
            bfo_request s, r;
            bfo_data rd;
            bfo_data_seg *segs = NULL;
            uint8_t *backing = NULL, got[50];
            sr_packed rp = { got, sizeof got, 0, 0 };
            sr_scenario sc = make(NULL, 0, 2, 2, 130 + len);
            sr_world *w = sr_new(&sc);
            memset(got, 0, sizeof got);
            if (pack) {
                memset(&rd, 0, sizeof rd);
                rd.kind = BFO_DATA_PACK;
                rd.len = sizeof got;
                rd.unpack = sr_unpack;
                rd.ctx = &rp;
            } else {
                sr_iov_make(&rd, sizeof got, 3, &backing, &segs);
            }
            assert_int_equal(bfo_irecv_data(&w->e[1], &r, &rd, 0, 0, 1, w->sn.now), BFO_OK);
            bfo_isend(&w->e[0], &s, big, len, 1, 0, 1, w->sn.now);
            sr_advance(w, 100000000);
            assert_true(bfo_test(&r) && bfo_test(&s));
            assert_int_equal(r.status, BFO_ERR_TRUNCATE);
            assert_int_equal(r.length, len);
            assert_int_equal(s.status, BFO_OK);
            if (!pack) {
                bfo_data_pos p = { 0, 0 };
                assert_true(sr_iov_gaps_intact(&rd));
                bfo_data_read(&rd, &p, 0, got, sizeof got);
            }
            assert_int_equal(rp.bad, 0);
            assert_memory_equal(got, big, sizeof got);
            sr_go(w);
            sr_del(w);
            free(backing);
            free(segs);
        }
}

/* Descriptions the engine refuses, and the ones it takes as one buffer. */
static void test_described_data_invalid_and_flat(void **state)
{
    static uint8_t buf[64];
    bfo_data_seg segs[3] = { { buf, 10 }, { NULL, 0 }, { buf + 10, 20 } };
    bfo_data d;
    bfo_request r;
    (void)state;
    sr_scenario sc = make(NULL, 0, 2, 1, 140);
    sr_world *w = sr_new(&sc);
    bfo_engine *e = &w->e[0];
    assert_int_equal(bfo_isend_data(e, &r, NULL, 1, 0, 1, 0), BFO_ERR_INVALID);
    memset(&d, 0, sizeof d);
    d.kind = 9;
    assert_int_equal(bfo_isend_data(e, &r, &d, 1, 0, 1, 0), BFO_ERR_INVALID);
    d.kind = BFO_DATA_PACK; /* no pack */
    d.len = 10;
    assert_int_equal(bfo_isend_data(e, &r, &d, 1, 0, 1, 0), BFO_ERR_INVALID);
    d.unpack = sr_unpack; /* a receive's callback only */
    assert_int_equal(bfo_isend_data(e, &r, &d, 1, 0, 1, 0), BFO_ERR_INVALID);
    d.kind = BFO_DATA_IOV;
    d.segs = segs;
    d.nsegs = 3;
    d.len = 31; /* the segments hold 30 */
    assert_int_equal(bfo_isend_data(e, &r, &d, 1, 0, 1, 0), BFO_ERR_INVALID);
    assert_int_equal(bfo_irecv_data(e, &r, &d, 1, 0, 1, 0), BFO_ERR_INVALID);
    d.kind = BFO_DATA_CONTIG;
    d.buf = NULL;
    assert_int_equal(bfo_irecv_data(e, &r, &d, 1, 0, 1, 0), BFO_ERR_INVALID);
    assert_int_equal(e->slots_in_use, 0);
    /* one non-empty segment is one buffer: the contiguous path */
    segs[0].len = 0;
    d.kind = BFO_DATA_IOV;
    d.len = 20;
    assert_int_equal(bfo_isend_data(e, &r, &d, 1, 0, 1, w->sn.now), BFO_OK);
    assert_ptr_equal(r.buf, buf + 10);
    assert_int_equal(r.cap, 20);
    sr_go(w);
    sr_del(w);
}

/* The cursor and the span helpers over an iovec with empty segments:
 * seeks forward and back, gathers cut by max, a span inside one segment. */
static void test_data_helpers(void **state)
{
    uint8_t m[100];
    bfo_data_seg segs[5] = { { m, 10 }, { m + 10, 0 }, { m + 10, 40 }, { m + 50, 0 }, { m + 50, 50 } };
    bfo_data d;
    bfo_data_pos p = { 0, 0 };
    bfo_data_seg out[4];
    uint8_t buf[100];
    size_t bytes;
    (void)state;
    for (int i = 0; i < 100; i++)
        m[i] = (uint8_t)i;
    memset(&d, 0, sizeof d);
    d.kind = BFO_DATA_IOV;
    d.segs = segs;
    d.nsegs = 5;
    d.len = 100;
    assert_true(bfo_data_valid(&d, 1));
    bfo_data_seek(&d, &p, 75);
    assert_int_equal(p.seg, 4);
    assert_int_equal(p.start, 50);
    bfo_data_seek(&d, &p, 5);
    assert_int_equal(p.seg, 0);
    bfo_data_seek(&d, &p, 10);
    assert_int_equal(p.seg, 2);
    bfo_data_read(&d, &p, 5, buf, 90);
    for (int i = 0; i < 90; i++)
        assert_int_equal(buf[i], i + 5);
    bfo_data_span sp = { &d, 5, 90, { 0, 0 } };
    assert_int_equal(bfo_data_span_gather(&sp, 0, out, 4, &bytes), 3);
    assert_int_equal(bytes, 90);
    assert_int_equal(bfo_data_span_gather(&sp, 10, out, 1, &bytes), 1);
    assert_ptr_equal(out[0].base, m + 15);
    assert_int_equal(bytes, 35);
    const void *base;
    assert_false(bfo_data_span_flat(&sp, &base));
    bfo_data_span in_one = { &d, 12, 30, { 0, 0 } };
    assert_true(bfo_data_span_flat(&in_one, &base));
    assert_ptr_equal(base, m + 12);
    memset(buf, 0, sizeof buf);
    bfo_data_span_copy(&sp, 40, buf, 50);
    for (int i = 0; i < 50; i++)
        assert_int_equal(buf[i], i + 45);
}


/* ------------------------------------------------------------- leaving
 *
 * bfo_engine_leave, the BYE and the rail's LEFT state: each test is named
 * after the transition (or the C rule) it shows. */

static int parts[SN_MAX_RANKS][SN_MAX_RANKS][BFO_MAX_RAILS]; /* bfo_backend.part calls */
static void count_part(void *ctx, int peer, int rail) { parts[((sn_endpoint *)ctx)->rank][peer][rail]++; }
static void attach_part(sr_world *w, void *arg)
{
    (void)arg;
    memset(parts, 0, sizeof parts);
    for (int i = 0; i < w->sn.n; i++)
        w->sn.be[i].part = count_part;
}

/* ranks and rails, every rail up; part counted */
static sr_world *leave_world(int ranks, int rails, uint64_t seed)
{
    sr_scenario sc = make(NULL, 0, ranks, rails, seed);
    sc.attach = attach_part;
    sr_world *w = sr_new(&sc);
    sr_advance(w, 1000000);
    for (int i = 0; i < ranks; i++)
        for (int p = 0; p < ranks; p++)
            for (int k = 0; p != i && k < rails; k++)
                assert_int_equal(w->e[i].peers[p].rail[k].fsm.cs, BFO_RAIL_ST_UP);
    return w;
}

/* The network moves until done(), at most n steps. */
#define STEP_UNTIL(w, cond)                                          \
    do {                                                             \
        for (int k_ = 0; k_ < 20000 && !(cond); k_++)                \
            if (!sn_step(&(w)->sn))                                  \
                sr_advance((w), 1000000);                            \
    } while (0)

/* Rank r leaves; once its BYEs are out its process ends. */
static void leave_and_exit(sr_world *w, int r)
{
    assert_int_equal(bfo_engine_leave(&w->e[r], w->sn.now), BFO_OK);
    STEP_UNTIL(w, bfo_engine_left(&w->e[r]));
    assert_true(bfo_engine_left(&w->e[r]));
    sn_rank_exits(&w->sn, r);
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

/* ------------------------------------------------- process failure */

/* Counts the peer machine's steps the tracer sees (bfo__peer_step). */
typedef struct peer_trace {
    int steps, to_failed;
} peer_trace;
static void count_peer_steps(void *user, const bfo_machine *m, const bfo_step *st)
{
    peer_trace *t = (peer_trace *)user;
    if (m->id != BFO_MACHINE_PEER)
        return;
    t->steps++;
    t->to_failed += st->from != BFO_PEER_ST_FAILED && st->to == BFO_PEER_ST_FAILED && st->result == BFO_OK;
}

/* The peer machine follows the rails: DOWN at start, REACHABLE once a rail
 * is admitted, DOWN when the last goes, UNREACHABLE after the grace; this
 * rank's own entry is SELF. */
static void test_peer_DOWN_RAIL_ADMITTED_REACHABLE_LAST_RAIL_LOST_DOWN_GRACE_EXPIRED_UNREACHABLE(void **state)
{
    (void)state;
    sr_scenario sc = make(NULL, 0, 2, 2, 71);
    sr_world *w = sr_new(&sc);
    assert_int_equal(bfo_peer_state(&w->e[0], 1), BFO_PEER_ST_DOWN);
    assert_int_equal(bfo_peer_state(&w->e[0], 0), BFO_PEER_ST_SELF);
    assert_int_equal(bfo_peer_state(&w->e[0], 2), 0);
    assert_int_equal(bfo_peer_state(&w->e[0], -1), 0);
    sr_advance(w, 1000000);
    assert_int_equal(bfo_peer_state(&w->e[0], 1), BFO_PEER_ST_REACHABLE);
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

/* A process killed mid-message, then reported dead (DEATH_REPORTED: give_up
 * fence): what waits on it fails BFO_ERR_PROC_FAILED, later requests at
 * once; it is fenced; the survivors still talk. */
static void test_DEATH_REPORTED_pending_requests_fail_PROC_FAILED_later_ones_at_once(void **state)
{
    bfo_request r2, s2, big, late_s, late_r, s0, r0;
    static uint8_t buf[200000];
    uint8_t y = 0, x = 5, in0 = 0;
    peer_trace pt = { 0, 0 };
    bfo_tracer tr = { count_peer_steps, &pt };
    (void)state;
    sr_scenario sc = make(NULL, 0, 3, 2, 72);
    sr_world *w = sr_new(&sc);
    sr_advance(w, 1000000);
    w->e[1].trace = &tr;
    assert_int_equal(bfo_irecv(&w->e[1], &r2, &y, 1, 2, 0, 1, w->sn.now), BFO_OK);
    assert_int_equal(bfo_isend(&w->e[1], &s2, &x, 1, 2, 0, 2, w->sn.now), BFO_OK);
    assert_int_equal(bfo_isend(&w->e[1], &big, buf, sizeof buf, 2, 0, 3, w->sn.now), BFO_OK);
    STEP_UNTIL(w, bfo_test(&s2)); /* delivered; the rendezvous waits for a receive */
    assert_int_equal(s2.status, BFO_OK);
    assert_false(bfo_test(&big));
    sn_rank_killed(&w->sn, 2); /* SIGKILL: no BYE */
    sr_advance(w, 10000000);
    assert_int_equal(bfo_peer_failed(&w->e[1], 2, w->sn.now), BFO_OK);
    assert_int_equal(bfo_peer_state(&w->e[1], 2), BFO_PEER_ST_FAILED);
    STEP_UNTIL(w, bfo_test(&r2) && bfo_test(&big));
    assert_int_equal(r2.status, BFO_ERR_PROC_FAILED);
    assert_int_equal(big.status, BFO_ERR_PROC_FAILED);
    assert_int_equal(bfo_isend(&w->e[1], &late_s, &x, 1, 2, 0, 4, w->sn.now), BFO_ERR_PROC_FAILED);
    assert_int_equal(late_s.status, BFO_ERR_PROC_FAILED);
    assert_int_equal(bfo_irecv(&w->e[1], &late_r, &y, 1, 2, 0, 4, w->sn.now), BFO_ERR_PROC_FAILED);
    assert_int_equal(late_r.status, BFO_ERR_PROC_FAILED);
    assert_false(bfo_peer_reachable(&w->e[1], 2));
    assert_int_equal(w->e[1].stats.procs_failed, 1);
    assert_int_equal(w->e[1].stats.failed_errors, 4);
    assert_int_equal(w->e[1].stats.unreachable_errors, 0);
    assert_int_equal(pt.to_failed, 1);
    assert_true(pt.steps >= 1);
    /* reported again: nothing more */
    assert_int_equal(bfo_peer_failed(&w->e[1], 2, w->sn.now), BFO_OK);
    assert_int_equal(w->e[1].stats.procs_failed, 1);
    assert_int_equal(pt.to_failed, 1);
    /* not a peer: refused */
    assert_int_equal(bfo_peer_failed(&w->e[1], 1, w->sn.now), BFO_ERR_INVALID);
    assert_int_equal(bfo_peer_failed(&w->e[1], 3, w->sn.now), BFO_ERR_INVALID);
    assert_int_equal(bfo_peer_failed(&w->e[1], -1, w->sn.now), BFO_ERR_INVALID);
    /* the survivors */
    assert_int_equal(bfo_irecv(&w->e[1], &r0, &in0, 1, 0, 0, 9, w->sn.now), BFO_OK);
    assert_int_equal(bfo_isend(&w->e[0], &s0, &x, 1, 1, 0, 9, w->sn.now), BFO_OK);
    STEP_UNTIL(w, bfo_test(&r0) && bfo_test(&s0));
    assert_int_equal(r0.status, BFO_OK);
    assert_int_equal(in0, 5);
    assert_int_equal(STAT(w, protocol_violations), 0);
    w->e[1].trace = NULL;
    sr_del(w);
}

/* A failure not acknowledged: a posted ANY_SOURCE receive ends
 * BFO_ERR_PROC_FAILED_PENDING, and so does a new one that nothing here
 * matches (one that a message here matches takes it); after
 * bfo_failure_ack, ANY_SOURCE receives work again. */
static void test_DEATH_REPORTED_any_source_receive_PROC_FAILED_PENDING_until_acked(void **state)
{
    bfo_request any, any2, any3, any4, s0, s0b;
    uint8_t y = 0, y3 = 0, y4 = 0, a = 'a', b = 'b';
    int ranks[4] = { -1, -1, -1, -1 };
    (void)state;
    sr_scenario sc = make(NULL, 0, 3, 1, 73);
    sr_world *w = sr_new(&sc);
    sr_advance(w, 1000000);
    assert_int_equal(bfo_irecv(&w->e[1], &any, &y, 1, BFO_ANY_SOURCE, 0, 1, w->sn.now), BFO_OK);
    assert_int_equal(bfo_isend(&w->e[0], &s0, &a, 1, 1, 0, 2, w->sn.now), BFO_OK); /* unexpected */
    STEP_UNTIL(w, bfo_test(&s0));
    assert_int_equal(bfo_failure_get_acked(&w->e[1], ranks, 4), 0);
    sn_rank_killed(&w->sn, 2);
    assert_int_equal(bfo_peer_failed(&w->e[1], 2, w->sn.now), BFO_OK);
    assert_true(bfo_test(&any));
    assert_int_equal(any.status, BFO_ERR_PROC_FAILED_PENDING);
    assert_int_equal(bfo_irecv(&w->e[1], &any2, &y, 1, BFO_ANY_SOURCE, 0, 1, w->sn.now),
                     BFO_ERR_PROC_FAILED_PENDING);
    assert_int_equal(any2.status, BFO_ERR_PROC_FAILED_PENDING);
    /* the message of rank 0 here matches: taken */
    assert_int_equal(bfo_irecv(&w->e[1], &any3, &y3, 1, BFO_ANY_SOURCE, 0, 2, w->sn.now), BFO_OK);
    assert_true(bfo_test(&any3));
    assert_int_equal(any3.status, BFO_OK);
    assert_int_equal(y3, 'a');
    assert_int_equal(bfo_failure_get_acked(&w->e[1], ranks, 4), 0); /* not acknowledged yet */
    assert_int_equal(bfo_failure_ack(&w->e[1]), 1);
    assert_int_equal(bfo_failure_get_acked(&w->e[1], ranks, 4), 1);
    assert_int_equal(ranks[0], 2);
    assert_int_equal(bfo_irecv(&w->e[1], &any4, &y4, 1, BFO_ANY_SOURCE, 0, 3, w->sn.now), BFO_OK);
    assert_false(bfo_test(&any4));
    assert_int_equal(bfo_isend(&w->e[0], &s0b, &b, 1, 1, 0, 3, w->sn.now), BFO_OK);
    STEP_UNTIL(w, bfo_test(&any4) && bfo_test(&s0b));
    assert_int_equal(any4.status, BFO_OK);
    assert_int_equal(any4.source, 0);
    assert_int_equal(y4, 'b');
    assert_int_equal(w->e[1].stats.failed_errors, 2);
    assert_int_equal(STAT(w, protocol_violations), 0);
    sr_del(w);
}

/* bfo_failure_get_acked: the order failures were reported in, the
 * acknowledged ones only, as many as there is room for. */
static void test_failure_get_acked_in_the_order_reported(void **state)
{
    int ranks[4] = { -1, -1, -1, -1 };
    (void)state;
    sr_scenario sc = make(NULL, 0, 4, 1, 74);
    sr_world *w = sr_new(&sc);
    sr_advance(w, 1000000);
    bfo_engine *e = &w->e[0];
    assert_int_equal(bfo_peer_failed(e, 3, w->sn.now), BFO_OK);
    assert_int_equal(bfo_peer_failed(e, 1, w->sn.now), BFO_OK);
    assert_int_equal(bfo_failure_ack(e), 2);
    assert_int_equal(bfo_peer_failed(e, 2, w->sn.now), BFO_OK);
    assert_int_equal(bfo_failure_get_acked(e, ranks, 4), 2);
    assert_int_equal(ranks[0], 3);
    assert_int_equal(ranks[1], 1);
    assert_int_equal(ranks[2], -1);
    ranks[0] = ranks[1] = -1;
    assert_int_equal(bfo_failure_get_acked(e, ranks, 1), 2); /* room for one */
    assert_int_equal(ranks[0], 3);
    assert_int_equal(ranks[1], -1);
    assert_int_equal(bfo_failure_get_acked(e, NULL, 0), 2);
    assert_int_equal(bfo_failure_ack(e), 3);
    assert_int_equal(bfo_failure_get_acked(e, ranks, 4), 3);
    assert_int_equal(ranks[2], 2);
    for (int i = 1; i < 4; i++)
        assert_int_equal(bfo_peer_state(e, i), BFO_PEER_ST_FAILED);
    assert_int_equal(e->stats.procs_failed, 3);
    sr_del(w);
}

/* A peer that left in good order, then exits: its death reported is no
 * failure (LEAVING, LEFT: DEATH_REPORTED changes nothing). */
static void test_DEATH_REPORTED_after_BYE_RCVD_is_no_failure(void **state)
{
    bfo_request r, any;
    uint8_t y = 0;
    (void)state;
    sr_world *w = leave_world(3, 1, 75);
    leave_and_exit(w, 0);
    assert_int_equal(bfo_peer_state(&w->e[1], 0), BFO_PEER_ST_LEFT);
    assert_int_equal(bfo_peer_failed(&w->e[1], 0, w->sn.now), BFO_OK);
    assert_int_equal(bfo_peer_state(&w->e[1], 0), BFO_PEER_ST_LEFT);
    assert_int_equal(bfo_irecv(&w->e[1], &r, &y, 1, 0, 0, 1, w->sn.now), BFO_ERR_PEER_LEFT);
    assert_int_equal(bfo_irecv(&w->e[1], &any, &y, 1, BFO_ANY_SOURCE, 0, 1, w->sn.now), BFO_OK);
    assert_false(bfo_test(&any)); /* rank 2 may still send: no failure pending */
    assert_int_equal(w->e[1].stats.procs_failed, 0);
    assert_int_equal(bfo_failure_ack(&w->e[1]), 0);
    /* and after this rank left, a report changes nothing either */
    assert_int_equal(bfo_engine_leave(&w->e[1], w->sn.now), BFO_OK);
    assert_int_equal(bfo_peer_state(&w->e[1], 2), BFO_PEER_ST_PARTED);
    assert_int_equal(bfo_peer_state(&w->e[1], 1), BFO_PEER_ST_PARTED); /* itself */
    assert_int_equal(bfo_peer_failed(&w->e[1], 2, w->sn.now), BFO_OK);
    assert_int_equal(bfo_peer_state(&w->e[1], 2), BFO_PEER_ST_PARTED);
    assert_int_equal(w->e[1].stats.procs_failed, 0);
    assert_int_equal(STAT(w, protocol_violations), 0);
    sr_del(w);
}

/* Given up first (UNREACHABLE: its requests failed PEER_UNREACHABLE), then
 * reported dead: FAILED, later requests fail PROC_FAILED. */
static void test_UNREACHABLE_DEATH_REPORTED_FAILED_later_requests_PROC_FAILED(void **state)
{
    bfo_request r, late;
    uint8_t y = 0, x = 1;
    (void)state;
    sr_scenario sc = make(NULL, 0, 2, 1, 76);
    sr_world *w = sr_new(&sc);
    sr_advance(w, 1000000);
    assert_int_equal(bfo_irecv(&w->e[0], &r, &y, 1, 1, 0, 1, w->sn.now), BFO_OK);
    sn_rank_killed(&w->sn, 1);
    sr_advance(w, w->e[0].cfg.unreachable_grace_ns + 1000000000ull);
    assert_int_equal(bfo_peer_state(&w->e[0], 1), BFO_PEER_ST_UNREACHABLE);
    assert_true(bfo_test(&r));
    assert_int_equal(r.status, BFO_ERR_PEER_UNREACHABLE);
    assert_int_equal(bfo_peer_failed(&w->e[0], 1, w->sn.now), BFO_OK);
    assert_int_equal(bfo_peer_state(&w->e[0], 1), BFO_PEER_ST_FAILED);
    assert_int_equal(bfo_isend(&w->e[0], &late, &x, 1, 1, 0, 1, w->sn.now), BFO_ERR_PROC_FAILED);
    assert_int_equal(w->e[0].stats.procs_failed, 1);
    assert_int_equal(w->e[0].stats.protocol_violations, 0);
    sr_del(w);
}

/* A process reported dead that is in fact alive (a false suspicion) is
 * fenced: its frames are refused, its connections dropped, so its own
 * requests to this rank fail in bounded time, and nothing of it is taken. */
static void test_DEATH_REPORTED_of_a_live_process_fences_it(void **state)
{
    bfo_request s;
    uint8_t x = 7;
    (void)state;
    sr_scenario sc = make(NULL, 0, 2, 2, 77);
    sr_world *w = sr_new(&sc);
    sr_advance(w, 1000000);
    assert_int_equal(bfo_peer_failed(&w->e[0], 1, w->sn.now), BFO_OK);
    assert_int_equal(bfo_isend(&w->e[1], &s, &x, 1, 0, 0, 1, w->sn.now), BFO_OK);
    sr_advance(w, 10000000000ull);
    assert_true(bfo_test(&s));
    assert_int_equal(s.status, BFO_ERR_PEER_UNREACHABLE);
    assert_int_equal(bfo_peer_state(&w->e[1], 0), BFO_PEER_ST_UNREACHABLE);
    assert_int_equal(bfo_peer_state(&w->e[0], 1), BFO_PEER_ST_FAILED);
    assert_int_equal(w->e[0].stats.messages_received, 0);
    for (int k = 0; k < 2; k++) /* given up with it, for good */
        assert_int_equal(w->e[0].peers[1].rail[k].fsm.cs, BFO_RAIL_ST_RETIRED);
    sr_del(w);
}

/* bfo_revoke: a receive posted on the context and not matched ends
 * BFO_ERR_REVOKED; later requests on it end so at once, and take no
 * sequence number (the peer's next message on another context still
 * arrives); other contexts are untouched. */
static void test_revoke_ends_posted_receives_and_refuses_later_requests(void **state)
{
    bfo_request r, other, late_s, late_r, next_s, next_r;
    uint8_t y = 0, x = 3, z = 0;
    (void)state;
    sr_scenario sc = make(NULL, 0, 2, 2, 81);
    sr_world *w = sr_new(&sc);
    sr_advance(w, 1000000);
    assert_int_equal(bfo_irecv(&w->e[0], &r, &y, 1, 1, 5, 1, w->sn.now), BFO_OK);
    assert_int_equal(bfo_irecv(&w->e[0], &other, &z, 1, 1, 6, 1, w->sn.now), BFO_OK);
    assert_int_equal(bfo_revoke(&w->e[0], 5, w->sn.now), BFO_OK);
    assert_true(bfo_revoked(&w->e[0], 5));
    assert_false(bfo_revoked(&w->e[0], 6));
    assert_true(bfo_test(&r));
    assert_int_equal(r.status, BFO_ERR_REVOKED);
    assert_false(bfo_test(&other));
    assert_int_equal(bfo_isend(&w->e[0], &late_s, &x, 1, 1, 5, 1, w->sn.now), BFO_ERR_REVOKED);
    assert_true(bfo_test(&late_s));
    assert_int_equal(bfo_irecv(&w->e[0], &late_r, &y, 1, 1, 5, 1, w->sn.now), BFO_ERR_REVOKED);
    assert_true(bfo_test(&late_r));
    assert_int_equal(bfo_revoke(&w->e[0], 5, w->sn.now), BFO_OK); /* again: nothing more */
    assert_int_equal(w->e[0].stats.revokes, 1);
    /* the other context works, both ways (no sequence number was lost) */
    assert_int_equal(bfo_isend(&w->e[1], &next_s, &x, 1, 0, 6, 1, w->sn.now), BFO_OK);
    assert_int_equal(bfo_isend(&w->e[0], &next_r, &x, 1, 1, 6, 2, w->sn.now), BFO_OK);
    sr_advance(w, 100000000);
    assert_true(bfo_test(&other));
    assert_int_equal(other.status, BFO_OK);
    assert_int_equal(z, 3);
    assert_true(bfo_test(&next_s));
    assert_true(bfo_test(&next_r));
    assert_int_equal(w->e[0].stats.revoked_errors, 3);
    assert_int_equal(STAT(w, protocol_violations), 0);
    sr_del(w);
}

/* Messages on a revoked context are discarded: an eager one waiting
 * unexpected, and one that comes later, are dropped; a rendezvous is taken
 * by a discard receive, so that its sender's request completes BFO_OK; the
 * discard receives never reach the done queue. */
static void test_revoke_discards_unexpected_and_later_messages_so_senders_complete(void **state)
{
    static uint8_t big[100000], bigger[60000];
    bfo_request se, sr, se2, sr2, keep;
    uint8_t x[64] = { 1 }, y = 0;
    bfo_config c;
    (void)state;
    memset(&c, 0, sizeof c);
    c.done_queue = 1;
    c.max_requests = 64;
    c.max_unexpected = 64;
    sr_scenario sc = make(NULL, 0, 2, 2, 82);
    sc.cfg = &c;
    sr_world *w = sr_new(&sc);
    sr_advance(w, 1000000);
    assert_int_equal(bfo_isend(&w->e[1], &se, x, sizeof x, 0, 5, 1, w->sn.now), BFO_OK);
    assert_int_equal(bfo_isend(&w->e[1], &sr, big, sizeof big, 0, 5, 2, w->sn.now), BFO_OK);
    sr_advance(w, 50000000); /* both wait unexpected at rank 0 */
    assert_true(bfo_test(&se));
    assert_false(bfo_test(&sr));
    assert_int_equal(bfo_revoke(&w->e[0], 5, w->sn.now), BFO_OK);
    assert_int_equal(bfo_isend(&w->e[1], &se2, x, sizeof x, 0, 5, 3, w->sn.now), BFO_OK);
    assert_int_equal(bfo_isend(&w->e[1], &sr2, bigger, sizeof bigger, 0, 5, 4, w->sn.now), BFO_OK);
    assert_int_equal(bfo_irecv(&w->e[0], &keep, &y, 1, 1, 6, 1, w->sn.now), BFO_OK);
    sr_advance(w, 200000000);
    assert_true(bfo_test(&sr));
    assert_int_equal(sr.status, BFO_OK);
    assert_true(bfo_test(&se2));
    assert_true(bfo_test(&sr2));
    assert_int_equal(sr2.status, BFO_OK);
    assert_int_equal(w->e[0].stats.revoke_discards, 4);
    assert_int_equal(w->e[0].ux_head, -1); /* nothing kept */
    for (bfo_request *d; (d = bfo_done_pop(&w->e[0])) != NULL;)
        fail_msg("rank 0's done queue has a request (status %d): the discards are the engine's", d->status);
    assert_false(bfo_test(&keep));
    assert_int_equal(STAT(w, protocol_violations), 0);
    sr_del(w);
}

/* A send on a revoked context whose message has not left (no rail to its
 * peer yet) is withdrawn, as bfo_cancel does, and ends BFO_ERR_REVOKED;
 * the peer takes its sequence number, so the next message still comes. */
static void test_revoke_withdraws_a_send_not_yet_out(void **state)
{
    bfo_request s, next, r;
    uint8_t x = 9, y = 0;
    (void)state;
    sr_scenario sc = make(NULL, 0, 2, 1, 83);
    sr_world *w = sr_new(&sc); /* no step yet: no rail is up, the MATCH waits */
    assert_int_equal(bfo_isend(&w->e[0], &s, &x, 1, 1, 5, 1, w->sn.now), BFO_OK);
    assert_int_equal(bfo_revoke(&w->e[0], 5, w->sn.now), BFO_OK);
    assert_int_equal(bfo_isend(&w->e[0], &next, &x, 1, 1, 6, 1, w->sn.now), BFO_OK);
    assert_int_equal(bfo_irecv(&w->e[1], &r, &y, 1, 0, 6, 1, w->sn.now), BFO_OK);
    sr_advance(w, 200000000);
    assert_true(bfo_test(&s));
    assert_int_equal(s.status, BFO_ERR_REVOKED);
    assert_true(bfo_test(&r));
    assert_int_equal(r.status, BFO_OK);
    assert_int_equal(y, 9);
    assert_int_equal(STAT(w, protocol_violations), 0);
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
    sr_world *w = sr_new(&sc);
    sr_advance(w, 5000000);
    for (int k = 0; k < 2; k++)
        rail_path(w, 0, 1, k, SN_PATH_SILENT);
    for (int t = 0; t < 2000 && (bfo_peer_state(&w->e[0], 1) != BFO_PEER_ST_RELAYED ||
                                 bfo_peer_state(&w->e[1], 0) != BFO_PEER_ST_RELAYED); t++)
        sr_advance(w, 1000000);
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

/* test_engine [PATTERN] [--shard K/N]: only the tests that match PATTERN
 * (e.g. "*four_rails*"); of those, with --shard, the K-th of every N in
 * the table's order (K from 0): make check and check-valgrind run the
 * shards side by side, one per core. */
int main(int argc, char **argv)
{
    unsigned shard = 0, nshards = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--shard") && i + 1 < argc) {
            if (sscanf(argv[++i], "%u/%u", &shard, &nshards) != 2 || nshards == 0 || shard >= nshards) {
                fprintf(stderr, "test_engine: --shard K/N, 0 <= K < N\n");
                return 2;
            }
        } else {
            cmocka_set_test_filter(argv[i]);
        }
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_engine_init_errors),
        cmocka_unit_test(test_data_helpers),
        cmocka_unit_test(test_described_data_invalid_and_flat),
        cmocka_unit_test(test_described_data_iov_pack_mixed_eager_and_rendezvous),
        cmocka_unit_test(test_described_data_one_staging_buffer_frames_wait_for_it),
        cmocka_unit_test(test_described_frag_lost_restart_rereads_in_place),
        cmocka_unit_test(test_described_iov_every_frag_fault),
        cmocka_unit_test(test_described_strided_vector_iov_to_pack_and_back),
        cmocka_unit_test(test_described_truncation),
        cmocka_unit_test(test_unknown_context_waits_unexpected_then_matches_its_rank_in_context),
        cmocka_unit_test(test_sync_send_completes_only_after_its_late_receive_matched),
        cmocka_unit_test(test_sync_send_under_faults_completes_once_after_the_match),
        cmocka_unit_test(test_send_to_self_matches_in_order_without_a_rail),
        cmocka_unit_test(test_one_rank_any_source_receive_waits_for_itself),
        cmocka_unit_test(test_sequences_past_the_16_and_32_bit_wraps_drop_resent_messages),
        cmocka_unit_test(test_bad_envelopes_are_invalid),
        cmocka_unit_test(test_iprobe_reports_without_receiving),
        cmocka_unit_test(test_improbe_holds_a_rendezvous_across_a_rail_failure),
        cmocka_unit_test(test_imrecv_after_the_peer_is_gone_eager_completes_rendezvous_fails),
        cmocka_unit_test(test_cancel_posted_receive_and_too_late_once_matched),
        cmocka_unit_test(test_cancel_send_before_it_left_keeps_the_sequence_whole),
        cmocka_unit_test(test_cancel_of_no_request_is_invalid),
        cmocka_unit_test(test_lane_MATCH_DELIVERED_completes_a_send_that_held_no_op),
        cmocka_unit_test(test_lane_MATCH_FAILED_after_it_arrived_is_sent_again_and_the_copy_dropped),
        cmocka_unit_test(test_lane_not_taken_by_a_frame_that_is_a_rate_sample),
        cmocka_unit_test(test_post_rndv_carries_rndv_first_bytes_or_all_of_an_eager_sized_send),
        cmocka_unit_test(test_hundred_thousand_eager_sends_before_their_receives),
        cmocka_unit_test(test_full_pools_make_frames_wait_never_lose_them),
        cmocka_unit_test(test_credit_past_window_sends_go_by_rendezvous_then_eager_again),
        cmocka_unit_test(test_credit_cancelled_send_gives_its_bytes_back),
        cmocka_unit_test(test_eager_limits_that_differ_between_ranks_still_talk),
        cmocka_unit_test(test_credit_older_limit_changes_nothing),
        cmocka_unit_test(test_actions_fed_without_their_input_are_refused),
        cmocka_unit_test(test_mixed_messages_every_protocol_no_fault),
        cmocka_unit_test(test_put_protocol_no_fault),
        cmocka_unit_test(test_one_rail),
        cmocka_unit_test(test_three_ranks_three_rails),
        cmocka_unit_test(test_many_seeds_reorder_across_rails),
        cmocka_unit_test(test_unexpected_any_source_any_tag),
        cmocka_unit_test(test_done_queue_pops_each_completion_once_in_order),
        cmocka_unit_test(test_sync_send_of_zero_bytes_without_a_buffer),
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
        cmocka_unit_test(test_rget_failed_but_arrived),
        cmocka_unit_test(test_get_fin_failed_but_arrived),
        cmocka_unit_test(test_read_failed_restart_dance),
        cmocka_unit_test(test_put_lost_restart_dance),
        cmocka_unit_test(test_put_fin_failed_but_arrived),
        cmocka_unit_test(test_write_failed_but_arrived),
        cmocka_unit_test(test_rdma_rail_lost_message_goes_on_by_copy),
        cmocka_unit_test(test_striping_follows_bandwidth),
        cmocka_unit_test(test_get_and_put_over_four_rails_use_each_rails_own_key),
        cmocka_unit_test(test_simulated_rdma_refuses_another_rails_key),
        cmocka_unit_test(test_every_single_fault_small),
        cmocka_unit_test(test_frag_read_in_place_under_every_single_fault),
        cmocka_unit_test(test_place_refuses_what_is_not_a_frag_of_a_live_receive),
        cmocka_unit_test(test_rail_down_mid_stream_then_back),
        cmocka_unit_test(test_rail_down_at_every_operation),
        cmocka_unit_test(test_rail_readmitted_and_used_again),
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
        cmocka_unit_test(test_DEATH_REPORTED_pending_requests_fail_PROC_FAILED_later_ones_at_once),
        cmocka_unit_test(test_DEATH_REPORTED_any_source_receive_PROC_FAILED_PENDING_until_acked),
        cmocka_unit_test(test_failure_get_acked_in_the_order_reported),
        cmocka_unit_test(test_DEATH_REPORTED_after_BYE_RCVD_is_no_failure),
        cmocka_unit_test(test_UNREACHABLE_DEATH_REPORTED_FAILED_later_requests_PROC_FAILED),
        cmocka_unit_test(test_DEATH_REPORTED_of_a_live_process_fences_it),
        cmocka_unit_test(test_revoke_ends_posted_receives_and_refuses_later_requests),
        cmocka_unit_test(test_revoke_discards_unexpected_and_later_messages_so_senders_complete),
        cmocka_unit_test(test_revoke_withdraws_a_send_not_yet_out),
        cmocka_unit_test(test_ROUTE_FOUND_sends_through_a_third_rank_and_gives_nothing_up),
        cmocka_unit_test(test_RELAYACK_completes_a_relayed_send_once_the_destination_has_it),
        cmocka_unit_test(test_ROUTE_LOST_starts_the_grace),
        cmocka_unit_test(test_RAIL_ADMITTED_takes_a_relayed_peer_back_to_its_rails),
        cmocka_unit_test(test_RELAY_RCVD_refuses_a_second_hop_rail_control_and_relay_off),
        cmocka_unit_test(test_LEAVE_REQUESTED_says_BYE_through_the_relay),
        cmocka_unit_test(test_one_sided_unreachable_fails_the_other_side_too),
        cmocka_unit_test(test_hostile_frames_are_counted_not_fatal),
        cmocka_unit_test(test_forged_put_and_fin_are_refused),
        cmocka_unit_test(test_control_budget_back_pressure),
        cmocka_unit_test(test_completion_of_an_op_the_transport_does_not_hold_is_ignored),
        cmocka_unit_test(test_receive_reserves_a_slot_from_post_takes_its_handle_at_a_rendezvous_no_memory_when_none_is_left),
        cmocka_unit_test(test_unexpected_rendezvous_of_a_peer_given_up_fails_its_receive),
        cmocka_unit_test(test_restarted_rndv_changing_the_message_is_a_protocol_violation),
        cmocka_unit_test(test_silent_loss_busy_rail_mapped_out_within_heartbeat_plus_probe_timeout),
        cmocka_unit_test(test_silent_loss_idle_rail_mapped_out_within_heartbeat_plus_probe_timeout),
        cmocka_unit_test(test_one_directional_loss_probe_timeout_on_one_side_broken_on_the_other),
        cmocka_unit_test(test_broken_notice_owed_with_no_rail_up_goes_out_on_the_next_rail_admitted),
        cmocka_unit_test(test_map_out_tells_the_transport_to_disconnect),
        cmocka_unit_test(test_silent_way_back_busy_sender_probes_and_times_out),
        cmocka_unit_test(test_short_timers_silent_rail_mapped_out_within_50_ms),
        cmocka_unit_test(test_stalled_peer_heard_is_not_failed_until_it_falls_silent),
        cmocka_unit_test(test_heartbeat_over_control_budget_not_outstanding_sent_later),
        cmocka_unit_test(test_probe_out_across_a_progress_gap_is_answered_by_its_probeack),
        cmocka_unit_test(test_back_pressure_keepalives_keep_the_rails_up),
        cmocka_unit_test(test_probe_out_cleared_when_the_rail_leaves_up),
        cmocka_unit_test(test_slow_answers_raise_the_probe_timeout_instead_of_failing_again),
        cmocka_unit_test(test_out_of_order_messages_move_on_in_their_own_buffers),
        cmocka_unit_test(test_rail_heard_ignores_bad_arguments),
        cmocka_unit_test(test_busy_peer_host_heard_is_not_failed),
        cmocka_unit_test(test_slow_rail_is_demoted_not_failed_and_promoted_when_it_recovers),
        cmocka_unit_test(test_rail_slow_from_the_start_is_given_one_piece_at_a_time_and_demoted),
        cmocka_unit_test(test_message_over_rails_of_unequal_speed_completes_near_their_summed_rate),
        cmocka_unit_test(test_last_rail_up_is_never_demoted),
        cmocka_unit_test(test_rails_lagging_together_are_not_demoted),
        cmocka_unit_test(test_rail_stalled_with_data_queued_is_not_demoted_on_one_lag_sample),
        cmocka_unit_test(test_piece_back_in_the_instant_of_its_post_raises_the_estimate_a_quarter_at_most),
        cmocka_unit_test(test_rail_on_probation_lone_piece_is_no_slow_sample_until_its_last),
        cmocka_unit_test(test_promoted_rail_on_probation_back_as_soon_as_the_best_rails_is_not_slow),
        cmocka_unit_test(test_rail_on_probation_back_sooner_than_a_loaded_rail_keeps_its_own_rate),
        cmocka_unit_test(test_rail_behind_a_token_bucket_is_not_promoted_again_and_again_on_its_bursts),
        cmocka_unit_test(test_rail_slow_one_way_while_the_peers_data_comes_in_fast_is_not_demoted),
        cmocka_unit_test(test_standby_rail_carries_data_only_while_no_active_rail_is_up),
        cmocka_unit_test(test_busy_peer_heard_once_after_the_probe_then_silent_is_not_failed),
        cmocka_unit_test(test_host_heard_excuses_a_rail_a_retransmission_long_when_the_process_talks_elsewhere),
        cmocka_unit_test(test_rail_whose_frames_wait_for_a_retransmission_is_not_failed),
        cmocka_unit_test(test_every_rank_computing_at_once_is_not_silence),
    };
    struct CMUnitTest mine[sizeof tests / sizeof tests[0]];
    size_t n = 0;
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++)
        if (i % nshards == shard)
            mine[n++] = tests[i];
    return _cmocka_run_group_tests("engine", mine, n, NULL, NULL);
}
