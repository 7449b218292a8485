// SPDX-License-Identifier: BSD-3-Clause
/* test_engine_frame.c - the tests of include/fsm/bfo_engine_frame.h:
 * frame arrival: the sequence window, frames placed, hostile and forged
 * frames, a restarted rendezvous that changes the message, out-of-order
 * messages.
 * What the engine's tests share is in engine_test.h. */
/* Plays a 32-bit build's size_t for the lengths a receive takes (the
 * engine refuses a wire length above BFO__LEN_MAX): no message of these
 * tests comes near 4 GiB. */
#define BFO__LEN_MAX 0xFFFFFFFFu
#include "engine_test.h"

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
    sc.connect_at_init = 1; /* about rails UP from the start, not their setup */
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
    stream_send_only(&st, 40);
    pass_time(w, 20 * MS);
    assert_int_equal(bfo__ooo_count(&w->e[1]), 8); /* every buffer holds a message that came too early */
    assert_int_equal(bfo_engine_out_of_order_count(&w->e[1]), 8);
    assert_int_equal(bfo_engine_unexpected_count(&w->e[1]), 0);
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

/* Issue 38, item 7: a MATCH whose source (what the receive reports, the
 * PML's MPI_SOURCE) is not the peer that sent it: rank 0 claiming rank
 * 2's.  A protocol violation: counted, dropped, its sequence moves on,
 * the rail stays UP; rank 0's next message, with its own source, is the
 * one the ANY_SOURCE receive takes. */
static void test_match_claiming_another_ranks_source_is_dropped_and_counted(void **state)
{
    uint8_t buf[64], in[16] = { 0 }, x[8] = "real";
    bfo_request q, s;
    bfo_hdr_match h;
    (void)state;
    sr_scenario sc = make(NULL, 0, 3, 1, 91);
    sc.connect_at_init = 1;
    sr_world *w = sr_new(&sc);
    w->e[1].cfg.source_ok = NULL; /* the engine's own rule: its ranks are the sources */
    sr_advance(w, 5000000);
    assert_int_equal(bfo_rail_state(&w->e[1], 0, 0), BFO_RAIL_ST_UP);
    assert_int_equal(bfo_irecv(&w->e[1], &q, in, sizeof in, BFO_ANY_SOURCE, 0, 7, w->sn.now), BFO_OK);
    const uint64_t seq = w->e[1].peers[0].recv_seq, v = w->e[1].stats.protocol_violations;
    memset(&h, 0, sizeof h);
    h.type = BFO_FRAG_MATCH;
    h.src = 2;
    h.tag = 7;
    h.seq = seq;
    size_t n = bfo_hdr_match_encode(&h, buf, sizeof buf);
    memcpy(buf + n, "forged", 6);
    w->e[0].peers[1].send_seq++; /* the forger's own sequence: rank 0 sent it */
    assert_int_equal(bfo_engine_frame(&w->e[1], 0, 0, buf, n + 6, w->sn.now), BFO_OK);
    assert_false(bfo_test(&q));
    assert_int_equal(w->e[1].stats.protocol_violations, v + 1);
    assert_int_equal(w->e[1].peers[0].recv_seq, seq + 1);
    assert_int_equal(w->e[1].uxm_in_use, 0);
    assert_int_equal(bfo_isend(&w->e[0], &s, x, 5, 1, 0, 7, w->sn.now), BFO_OK);
    for (int t = 0; t < 200 && !(bfo_test(&q) && bfo_test(&s)); t++)
        sr_advance(w, 1000000);
    assert_true(bfo_test(&q) && bfo_test(&s));
    assert_int_equal(q.status, BFO_OK);
    assert_int_equal(q.source, 0);
    assert_int_equal(q.peer, 0);
    assert_string_equal((char *)in, "real");
    assert_int_equal(bfo_rail_state(&w->e[1], 0, 0), BFO_RAIL_ST_UP);
    assert_int_equal(w->e[1].stats.protocol_violations, v + 1);
    sr_del(w);
}

/* Issue 38, item 7: a rendezvous whose 64-bit length a receive's size_t
 * cannot hold (BFO__LEN_MAX above plays a 32-bit build: 4 GiB + 10 would be
 * taken as 10 bytes, the FRAGs checked against that) is refused before it
 * matches, RNDV and RGET alike. */
static void test_rendezvous_longer_than_size_t_is_refused_before_it_matches(void **state)
{
    uint8_t buf[64], in[64];
    bfo_request q;
    (void)state;
    sr_scenario sc = make(NULL, 0, 2, 1, 92);
    sc.connect_at_init = 1;
    sr_world *w = sr_new(&sc);
    sr_advance(w, 5000000);
    assert_int_equal(bfo_irecv(&w->e[1], &q, in, sizeof in, 0, 0, 3, w->sn.now), BFO_OK);
    const uint64_t seq = w->e[1].peers[0].recv_seq, v = w->e[1].stats.protocol_violations;
    for (int rget = 0; rget < 2; rget++) {
        size_t n;
        if (rget) {
            bfo_hdr_rget h;
            memset(&h, 0, sizeof h);
            h.type = BFO_FRAG_RGET;
            h.tag = 3;
            h.seq = seq;
            h.msg_len = 0x10000000Aull;
            h.sreq.index = 1;
            h.sreq.gen = 1;
            n = bfo_hdr_rget_encode(&h, buf, sizeof buf);
            memset(buf + n, 0, 4); /* one rail's key */
            n += 4;
        } else {
            bfo_hdr_rndv h;
            memset(&h, 0, sizeof h);
            h.type = BFO_FRAG_RNDV;
            h.tag = 3;
            h.seq = seq;
            h.msg_len = 0x10000000Aull;
            h.sreq.index = 1;
            h.sreq.gen = 1;
            n = bfo_hdr_rndv_encode(&h, buf, sizeof buf);
            memcpy(buf + n, "0123456789", 10);
            n += 10;
        }
        assert_int_equal(bfo_engine_frame(&w->e[1], 0, 0, buf, n, w->sn.now), BFO_ERR_PROTOCOL);
        assert_false(bfo_test(&q));
        assert_int_equal(q.cs, BFO_RECV_ST_POSTED);
    }
    assert_int_equal(w->e[1].stats.protocol_violations, v + 2);
    assert_int_equal(w->e[1].peers[0].recv_seq, seq);
    assert_int_equal(bfo_cancel(&w->e[1], &q, w->sn.now), BFO_OK);
    sr_del(w);
}

/* Issue 38, item 7: FRAGs were counted in bytes, so a peer sending one
 * FRAG three times completed a 100 KB receive with holes.  Now a FRAG
 * whose bytes were taken already (a duplicate, an overlap) is a protocol
 * violation: counted, dropped, the rail kept.  Ranges apart are taken and
 * joined (one ahead, then the gap below it); the receive completes once,
 * and only once, every byte came. */
static void test_duplicate_or_overlapping_frags_never_count_twice(void **state)
{
    enum { BIG = 100000 };
    static uint8_t out[BIG], in[BIG], pay[BIG];
    bfo_request s, r;
    uint8_t buf[BFO_HDR_FRAG_SIZE + BIG];
    bfo_hdr_frag h;
    (void)state;
    sr_scenario sc = make(NULL, 0, 2, 1, 93);
    sc.rdma = BFO_RDMA_OFF;
    sc.connect_at_init = 1;
    sr_world *w = sr_new(&sc);
    sr_advance(w, 5000000);
    for (int k = 0; k < BIG; k++) {
        out[k] = sr_pattern(3, (size_t)k);
        pay[k] = (uint8_t)(k * 13 + 5);
    }
    assert_int_equal(bfo_irecv(&w->e[1], &r, in, BIG, 0, 0, 2, w->sn.now), BFO_OK);
    assert_int_equal(bfo_isend(&w->e[0], &s, out, BIG, 1, 0, 2, w->sn.now), BFO_OK);
    for (int k = 0; k < 500 && r.cs != BFO_RECV_ST_ACK_SENT; k++)
        sn_step(&w->sn);
    assert_int_equal(r.cs, BFO_RECV_ST_ACK_SENT); /* the real FRAGs are not out yet */
    const uint64_t a = r.done_bytes, v = w->e[1].stats.protocol_violations;
    assert_true(a > 0 && a < 10000); /* the RNDV's first bytes */
    static const struct { uint64_t off, len; int dropped; } fr[] = {
        { 0, 40000, 0 },     /* taken */
        { 0, 40000, 1 },     /* the same again */
        { 0, 40000, 1 },     /* and again: with bytes counted, 3 x 40000 completed it */
        { 20000, 40000, 1 }, /* overlaps the first */
        { 60000, 10000, 0 }, /* apart, ahead */
        { 65000, 1000, 1 },  /* inside that one */
        { 40000, 20000, 0 }, /* the gap between: joins both */
        { 50000, 1, 1 },     /* inside what is now whole */
    };
    uint64_t taken = a;
    for (size_t i = 0; i < sizeof fr / sizeof fr[0]; i++) {
        memset(&h, 0, sizeof h);
        h.type = BFO_FRAG_FRAG;
        h.rseq = r.rseq;
        h.dreq = r.self;
        h.offset = a + fr[i].off;
        size_t n = bfo_hdr_frag_encode(&h, buf, sizeof buf);
        memcpy(buf + n, pay + h.offset, (size_t)fr[i].len);
        assert_int_equal(bfo_engine_frame(&w->e[1], 0, 0, buf, n + (size_t)fr[i].len, w->sn.now), BFO_OK);
        taken += fr[i].dropped ? 0 : fr[i].len;
        assert_int_equal(r.done_bytes, taken);
        assert_false(bfo_test(&r));
    }
    assert_int_equal(w->e[1].stats.protocol_violations, v + 5);
    assert_int_equal(r.frag_runs, 0); /* one range from the ACK's offset on */
    assert_int_equal(r.frag_lo, a + 70000);
    /* the rest: the receive completes, every byte what came for its place */
    memset(&h, 0, sizeof h);
    h.type = BFO_FRAG_FRAG;
    h.rseq = r.rseq;
    h.dreq = r.self;
    h.offset = a + 70000;
    size_t n = bfo_hdr_frag_encode(&h, buf, sizeof buf);
    memcpy(buf + n, pay + h.offset, (size_t)(BIG - h.offset));
    assert_int_equal(bfo_engine_frame(&w->e[1], 0, 0, buf, n + (size_t)(BIG - h.offset), w->sn.now), BFO_OK);
    assert_int_equal(r.done_bytes, BIG);
    for (int k = 0; k < 100 && !bfo_test(&r); k++)
        sn_step(&w->sn); /* once its ACK's completion is in */
    assert_true(bfo_test(&r));
    assert_int_equal(r.status, BFO_OK);
    assert_memory_equal(in, out, (size_t)a);
    assert_memory_equal(in + a, pay + a, (size_t)(BIG - a));
    assert_int_equal(bfo_rail_state(&w->e[1], 0, 0), BFO_RAIL_ST_UP);
    sr_del(w);
}

/* A FRAG apart from everything taken needs a run of its own; with none
 * free (BFO__FRAG_RUNS, BFO_MAX_RAILS of them kept for frames read in
 * place) it waits (BFO_ERR_AGAIN, nothing counted, not placed) until the
 * lowest missing FRAG comes, which always fits and frees a run.  Every
 * other piece first, then the rest: the receive completes, every byte in
 * its place. */
static void test_frag_with_no_run_free_waits_for_the_lowest_missing_one(void **state)
{
    enum { PIECE = 1000, PIECES = 40 };
    static uint8_t out[4096 + PIECES * PIECE], in[sizeof out];
    const size_t big = sizeof out;
    bfo_request s, r;
    uint8_t buf[BFO_HDR_FRAG_SIZE + PIECE];
    bfo_hdr_frag h;
    bfo_place_ticket tk;
    size_t hs;
    (void)state;
    sr_scenario sc = make(NULL, 0, 2, 1, 94);
    sc.rdma = BFO_RDMA_OFF;
    sc.connect_at_init = 1;
    sr_world *w = sr_new(&sc);
    sr_advance(w, 5000000);
    for (size_t k = 0; k < big; k++)
        out[k] = sr_pattern(5, k);
    assert_int_equal(bfo_irecv(&w->e[1], &r, in, big, 0, 0, 2, w->sn.now), BFO_OK);
    assert_int_equal(bfo_isend(&w->e[0], &s, out, big, 1, 0, 2, w->sn.now), BFO_OK);
    for (int k = 0; k < 500 && r.cs != BFO_RECV_ST_ACK_SENT; k++)
        sn_step(&w->sn);
    assert_int_equal(r.cs, BFO_RECV_ST_ACK_SENT);
    const uint64_t a = r.done_bytes;
    const int room = BFO__FRAG_RUNS - 1; /* one rail: one run kept */
    assert_int_equal(a + PIECES * PIECE, big);
    memset(&h, 0, sizeof h);
    h.type = BFO_FRAG_FRAG;
    h.rseq = r.rseq;
    h.dreq = r.self;
#define PIECE_FRAME(i) (h.offset = a + (uint64_t)(i) * PIECE, \
                        memcpy(buf + bfo_hdr_frag_encode(&h, buf, sizeof buf), out + h.offset, PIECE), \
                        bfo_engine_frame(&w->e[1], 0, 0, buf, BFO_HDR_FRAG_SIZE + PIECE, w->sn.now))
    int i = 1;
    for (; r.frag_runs < room; i += 2)
        assert_int_equal(PIECE_FRAME(i), BFO_OK);
    const size_t done = r.done_bytes;
    assert_int_equal(PIECE_FRAME(i), BFO_ERR_AGAIN); /* apart, no run free */
    assert_int_equal(r.done_bytes, done);
    h.offset = a + (uint64_t)(i + 2) * PIECE;
    bfo_hdr_frag_encode(&h, buf, sizeof buf);
    assert_null(bfo_engine_place(&w->e[1], 0, buf, BFO_HDR_FRAG_SIZE, BFO_HDR_FRAG_SIZE + PIECE, &hs, &tk));
    assert_int_equal(PIECE_FRAME(0), BFO_OK); /* the lowest missing one: fits, joins the first run */
    assert_int_equal(r.frag_runs, room - 1);
    assert_int_equal(PIECE_FRAME(i), BFO_OK); /* now it fits */
    for (int k = 2; k < PIECES; k += 2)
        assert_int_equal(PIECE_FRAME(k), BFO_OK);
    for (int k = i + 2; k < PIECES; k += 2)
        assert_int_equal(PIECE_FRAME(k), BFO_OK);
#undef PIECE_FRAME
    assert_int_equal(r.done_bytes, big);
    assert_int_equal(r.frag_runs, 0);
    assert_int_equal(w->e[1].stats.protocol_violations, 0);
    for (int k = 0; k < 100 && !bfo_test(&r); k++)
        sn_step(&w->sn);
    assert_true(bfo_test(&r));
    assert_int_equal(r.status, BFO_OK);
    assert_memory_equal(in, out, big);
    sr_del(w);
}

/* The tests of frame, in the order they run (engine_test_main: a pattern,
 * --shard). */
int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sequences_past_the_16_and_32_bit_wraps_drop_resent_messages),
        cmocka_unit_test(test_place_refuses_what_is_not_a_frag_of_a_live_receive),
        cmocka_unit_test(test_hostile_frames_are_counted_not_fatal),
        cmocka_unit_test(test_forged_put_and_fin_are_refused),
        cmocka_unit_test(test_restarted_rndv_changing_the_message_is_a_protocol_violation),
        cmocka_unit_test(test_out_of_order_messages_move_on_in_their_own_buffers),
        cmocka_unit_test(test_match_claiming_another_ranks_source_is_dropped_and_counted),
        cmocka_unit_test(test_rendezvous_longer_than_size_t_is_refused_before_it_matches),
        cmocka_unit_test(test_duplicate_or_overlapping_frags_never_count_twice),
        cmocka_unit_test(test_frag_with_no_run_free_waits_for_the_lowest_missing_one),
    };
    return engine_test_main(argc, argv, "engine_frame", tests, sizeof tests / sizeof tests[0]);
}
