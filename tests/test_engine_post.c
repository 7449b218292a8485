// SPDX-License-Identifier: BSD-3-Clause
/* test_engine_post.c - the tests of include/fsm/bfo_engine_post.h:
 * posting: described data (bfo_data.h) and its staging buffers, the lane
 * (an eager MATCH posted without an op), what a rendezvous carries.
 * What the engine's tests share is in engine_test.h. */
#include "engine_test.h"

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
        bfo_config c = nn_config(&w->nn, i);
        c.eager_limit = 65536;
        c.connect_at_init = 1; /* the lane needs its rail UP before the first send */
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

/* The tests of post, in the order they run (engine_test_main: a pattern,
 * --shard). */
int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_data_helpers),
        cmocka_unit_test(test_described_data_invalid_and_flat),
        cmocka_unit_test(test_described_data_iov_pack_mixed_eager_and_rendezvous),
        cmocka_unit_test(test_described_data_one_staging_buffer_frames_wait_for_it),
        cmocka_unit_test(test_described_frag_lost_restart_rereads_in_place),
        cmocka_unit_test(test_described_iov_every_frag_fault),
        cmocka_unit_test(test_described_strided_vector_iov_to_pack_and_back),
        cmocka_unit_test(test_described_truncation),
        cmocka_unit_test(test_lane_MATCH_DELIVERED_completes_a_send_that_held_no_op),
        cmocka_unit_test(test_lane_MATCH_FAILED_after_it_arrived_is_sent_again_and_the_copy_dropped),
        cmocka_unit_test(test_lane_not_taken_by_a_frame_that_is_a_rate_sample),
        cmocka_unit_test(test_post_rndv_carries_rndv_first_bytes_or_all_of_an_eager_sized_send),
    };
    return engine_test_main(argc, argv, "engine_post", tests, sizeof tests / sizeof tests[0]);
}
