// SPDX-License-Identifier: BSD-3-Clause
/* test_engine_detect.c - the tests of include/fsm/bfo_engine_detect.h:
 * the failure detector: silence mapped out within heartbeat plus probe
 * timeout, probes and their timeout, the transport's evidence (rail_heard,
 * host_heard) that keeps a busy peer alive.
 * What the engine's tests share is in engine_test.h. */
#include "engine_test.h"

/* Not failed: UP, or DEMOTED (working, slow: it carries no new data). */
static int rail_live(sr_world *w, int rank, int peer, int rail)
{
    return rail_up(w, rank, peer, rail) ||
           w->e[rank].peers[peer].rail[rail].fsm.cs == BFO_RAIL_ST_DEMOTED;
}

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

/* Liveness follows the work (bfo_engine_detect.h, >>work).  No traffic at
 * all: neither rank has work for the other, so over twenty heartbeats (and
 * twice the silence timeout) no probe goes out on either rail and nothing
 * is failed, though rail 0 turns silent both ways halfway through (nobody
 * needs it: nobody looks).  Then rank 0 sends: its first frame after the
 * quiet spell probes both rails at once (before any progress), so the dead
 * rail is mapped out on both sides within a probe timeout of the send
 * (rank 1 probes too: its receive waits on rank 0), and the message goes
 * over rail 1.  Before issue 37 the heartbeat probed both rails every
 * 100 ms whatever the work (and the idle rail was mapped out within
 * heartbeat + probe timeout of going silent). */
static void test_idle_peer_not_probed_then_first_send_probes_at_once(void **state)
{
    static stream st;
    mapout_watch x[2];
    uint64_t sent[2][2];
    (void)state;
    memset(&st, 0, sizeof st);
    st.w = detect_world(63, 1, x);
    pass_time(st.w, 300 * MS); /* the admission's round trips are over */
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 2; k++)
            sent[i][k] = st.w->e[i].peers[1 - i].rail[k].det.probe_nonce;
    pass_time(st.w, 1000 * MS);
    rail_path(st.w, 0, 1, 0, SN_PATH_SILENT);
    pass_time(st.w, 1000 * MS);
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 2; k++) {
            assert_int_equal(st.w->e[i].peers[1 - i].rail[k].det.probe_nonce, sent[i][k]); /* no probe */
            assert_true(rail_up(st.w, i, 1 - i, k));
            assert_true(st.w->e[i].peers[1 - i].quiet);
        }
    assert_int_equal(x[0].mapouts + x[1].mapouts, 0); /* no silence either */
    print_message("idle: no probe in 2000 ms (20 heartbeats), rail 0 silent for the last 1000 ms\n");
    uint64_t t = st.w->sn.now;
    stream_post(&st, 0, 1);
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 2; k++) { /* at once, both ends (rank 1's receive waits on rank 0) */
            assert_int_equal(st.w->e[i].peers[1 - i].rail[k].det.probe_sent, t);
            assert_true(st.w->e[i].peers[1 - i].rail[k].det.probe_out);
        }
    pass_time(st.w, 60 * MS);
    mapped_out_within(x, t, 40 * MS + 2 * MS, "idle rail, silent both ways, then a send");
    assert_int_equal(x[0].ev[1][0], BFO_EV_PROBE_TIMED_OUT);
    rail_path(st.w, 0, 1, 0, SN_PATH_OPEN);
    stream_check(&st);
    sr_del(st.w);
}

/* An idle peer is never failed for silence: two ranks that have nothing
 * to say to each other for ten silence timeouts keep their rails UP and
 * send no frame at all (before: a heartbeat each way every 100 ms). */
static void test_idle_peer_never_silence_no_frames(void **state)
{
    mapout_watch x[2];
    (void)state;
    sr_world *w = detect_world(65, 1, x);
    pass_time(w, 300 * MS);
    const uint64_t posted0 = w->e[0].stats.ops_posted, posted1 = w->e[1].stats.ops_posted;
    pass_time(w, 10 * w->e[0].cfg.silence_ns);
    assert_int_equal(w->e[0].stats.ops_posted, posted0);
    assert_int_equal(w->e[1].stats.ops_posted, posted1);
    assert_int_equal(x[0].mapouts + x[1].mapouts, 0);
    for (int k = 0; k < 2; k++)
        assert_true(rail_up(w, 0, 1, k) && rail_up(w, 1, 0, k));
    sr_go(w);
    sr_del(w);
}

/* An ANY_SOURCE receive waits on every peer it may hear from, so every
 * connected peer has work while it is posted: the engine keeps watching
 * them (heartbeats, silence), and once no rail to any of them is left the
 * receive ends BFO_ERR_PEER_UNREACHABLE.  Rank 1 posts an ANY_SOURCE
 * receive after a quiet spell and both rails to rank 0 turn silent: both
 * are mapped out within a quarter heartbeat (the sweep that finds the
 * work) plus heartbeat and probe timeout, and the receive ends once the
 * grace is over (plus the delayed ACK that each idle rail's probe waits
 * for: nothing answers on either).  Before (an ANY_SOURCE receive made no peer busy) the
 * rails stayed UP and the receive waited for ever: check-sim's killed-rank
 * scenarios whose kill never came hung there. */
static void test_any_source_receive_watches_every_connected_peer(void **state)
{
    mapout_watch x[2];
    bfo_request r;
    char buf[64];
    (void)state;
    sr_world *w = detect_world(67, 1, x);
    pass_time(w, 300 * MS + w->e[0].cfg.heartbeat_ns); /* quiet now */
    assert_true(w->e[1].peers[0].quiet);
    for (int k = 0; k < 2; k++)
        rail_path(w, 0, 1, k, SN_PATH_SILENT);
    uint64_t t = w->sn.now;
    assert_int_equal(bfo_irecv(&w->e[1], &r, buf, sizeof buf, BFO_ANY_SOURCE, 1, 5, t), BFO_OK);
    for (int i = 0; i < 400 && (rail_live(w, 1, 0, 0) || rail_live(w, 1, 0, 1)); i++)
        pass_time(w, MS);
    assert_false(rail_live(w, 1, 0, 0) || rail_live(w, 1, 0, 1));
    print_message("ANY_SOURCE receive, both rails silent: mapped out after %llu ms\n",
                  (unsigned long long)((w->sn.now - t) / MS));
    /* neither rail carries anything but its probe, and no host answers:
     * each probe waits for a delayed ACK too (BFO__HOST_ACK_DELAY_NS) */
    assert_true(w->sn.now - t <= w->e[1].cfg.heartbeat_ns / 4 + DETECT_BOUND + BFO__HOST_ACK_DELAY_NS + 2 * MS);
    pass_time(w, w->e[1].cfg.unreachable_grace_ns + 100 * MS);
    assert_true(bfo_test(&r));
    assert_int_equal(r.status, BFO_ERR_PEER_UNREACHABLE);
    sr_del(w);
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
    int calls[SN_TEST_RANKS][SN_TEST_RANKS][BFO_MAX_RAILS];
    uint64_t at[SN_TEST_RANKS][SN_TEST_RANKS][BFO_MAX_RAILS];
    sr_world *w;
} disc;

static void rec_disconnect(void *ctx, int peer, int rail)
{
    const sn_endpoint *ep = (const sn_endpoint *)ctx;
    assert_true(peer >= 0 && peer < SN_TEST_RANKS && rail >= 0 && rail < BFO_MAX_RAILS);
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
    bfo_request wait;
    uint8_t b;
    /* rank 0 waits on rank 1 (work: its heartbeats run, >>work) */
    assert_int_equal(bfo_irecv(e, &wait, &b, 1, 1, 0, 99, w->sn.now), BFO_OK);
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
    assert_int_equal(bfo_cancel(e, &wait, w->sn.now), BFO_OK);
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
    bfo_request wait; /* rank 0 waits on rank 1: work, its heartbeats run (>>work) */
    uint8_t b;
    assert_int_equal(bfo_irecv(&w->e[0], &wait, &b, 1, 1, 0, 99, w->sn.now), BFO_OK);

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
    bfo_request wait; /* rank 0 waits on rank 1: work, its heartbeats run (>>work) */
    uint8_t b;
    assert_int_equal(bfo_irecv(&w->e[0], &wait, &b, 1, 1, 0, 99, w->sn.now), BFO_OK);
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
    assert_int_equal(bfo_cancel(&w->e[0], &wait, w->sn.now), BFO_OK);
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
 * answer, and a heartbeat (the probe waits one past the end of a busy
 * spell).  That the host was heard at the very time the probe went out
 * says nothing of the probe: it waits for the next word (the idle rail's
 * delayed ACK, bfo__detect_due), as a kernel's acknowledgement of it. */
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

    /* the host falls silent as well, while rank 0 waits on rank 1 (work:
     * an idle peer is not probed at all, >>work) */
    bfo_request wait;
    uint8_t b;
    assert_int_equal(bfo_irecv(&w->e[0], &wait, &b, 1, 1, 0, 99, w->sn.now), BFO_OK);
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
        assert_true(d <= 500 * MS + 100 * MS + 40 * MS + 2 * MS);
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

/* The peer kernel's delayed ACK as the one witness (t14's shm and TCP
 * case, small messages on shm): rank 0 waits on rank 1 (a receive), which
 * starts computing: no frame either way on either rail.  Rail 0 is shared
 * memory: its transport hears rank 1's host every 10 ms (its pidfd).  Rail
 * 1 is TCP with nothing in flight but rank 0's heartbeat probe: the one
 * thing rank 1's kernel can acknowledge, which it does when its
 * delayed-ACK timer fires, 44 ms later (TCP_DELACK_MIN, 40 ms, and a tick),
 * and then every 44 ms the nudge that follows (bfo_tcp.c,
 * kernel_evidence).  The probe waits for that acknowledgement: no rail is
 * mapped out in 2 s, and everything arrives when rank 1 calls again.
 * Before, the probe timed out at its floor (40 ms), just before the ACK
 * came, and rail 1 was mapped out.  Then the same with rail 1 dead (no ACK
 * comes): mapped out within probe timeout + BFO__HOST_ACK_DELAY_NS of its
 * probe, rail 0 staying UP. */
static void test_idle_rail_probe_waits_for_the_peer_kernels_delayed_ack(void **state)
{
    (void)state;
    for (int dead = 0; dead < 2; dead++) {
        static stream st;
        mapout_watch x[2];
        sr_world *w = stream_world(&st, 70 + (uint64_t)dead, 0, x);
        bfo_rail_link *tcp = &w->e[0].peers[1].rail[1];
        uint64_t acked = 0, ack_at = 0, first_probe = 0;
        pass_time(w, 300 * MS); /* the admission's round trips are over; both quiet */
        for (int k = 0; k < 2; k++)
            rail_path(w, 0, 1, k, SN_PATH_HOLD); /* rank 1 computes */
        stream_post(&st, 1, 0); /* rank 0's receive waits on rank 1: work, heartbeats */
        for (int ms = 0; ms < 2000 && !x[0].at[1][1]; ms++) {
            if (tcp->det.probe_out && tcp->det.probe_nonce != acked) { /* a new probe on TCP */
                acked = tcp->det.probe_nonce;
                ack_at = w->sn.now + 44 * MS;
                if (!first_probe)
                    first_probe = tcp->det.probe_sent;
            }
            if (!dead && ack_at && w->sn.now >= ack_at) { /* the delayed ACK, then a nudge's */
                bfo_engine_host_heard(&w->e[0], 1, 1, w->sn.now);
                ack_at = w->sn.now + 44 * MS;
            }
            if (ms % 10 == 0) { /* shared memory: the peer's pidfd */
                bfo_engine_host_heard(&w->e[0], 1, 0, w->sn.now);
                for (int k = 0; k < 2; k++) /* (rank 1's engine runs in the sim) */
                    bfo_engine_host_heard(&w->e[1], 0, k, w->sn.now);
            }
            pass_time(w, MS);
        }
        assert_true(first_probe != 0);
        if (!dead) {
            print_message("idle TCP rail, its probe acknowledged 44 ms late: %d map-outs in 2 s\n",
                          x[0].mapouts + x[1].mapouts);
            assert_int_equal(x[0].mapouts + x[1].mapouts, 0);
        } else {
            uint64_t d = x[0].at[1][1] - first_probe;
            print_message("idle TCP rail dead, the peer computing: mapped out %llu ms after its probe (%s)\n",
                          (unsigned long long)(d / MS), ev_name(x[0].ev[1][1]));
            assert_int_equal(x[0].ev[1][1], BFO_EV_PROBE_TIMED_OUT);
            assert_true(d >= 40 * MS + BFO__HOST_ACK_DELAY_NS);
            assert_true(d <= 40 * MS + BFO__HOST_ACK_DELAY_NS + 2 * MS);
            assert_int_equal(x[0].at[1][0], 0); /* shared memory, its host heard: UP */
        }
        for (int k = 0; k < 2; k++)
            rail_path(w, 0, 1, k, SN_PATH_OPEN);
        stream_check(&st);
        sr_del(w);
    }
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
        stream_send_only(&st, 40); /* sends only: the receives come later */
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
    bfo_request wait; /* rank 0 waits on rank 1: work, its heartbeats run (>>work) */
    uint8_t b;
    assert_int_equal(bfo_irecv(&w->e[0], &wait, &b, 1, 1, 0, 99, w->sn.now), BFO_OK);
    sn_set_path(&w->sn, 1, 0, 0, SN_PATH_HOLD);
    while (!w->e[0].peers[1].rail[0].det.probe_out) {
        assert_true(w->sn.now < 200 * MS);
        pass_time(w, MS);
    }
    bfo_engine_rail_event(&w->e[0], 1, 0, BFO_EV_RAIL_ERROR, w->sn.now);
    assert_int_equal(w->e[0].peers[1].rail[0].fsm.cs, BFO_RAIL_ST_FAILED);
    assert_false(w->e[0].peers[1].rail[0].det.probe_out);
    sn_set_path(&w->sn, 1, 0, 0, SN_PATH_OPEN);
    assert_int_equal(bfo_cancel(&w->e[0], &wait, w->sn.now), BFO_OK);
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
    assert_int_equal(bfo_rail_probe_timeout(&w->e[0], 1, 0), bfo__probe_timeout(&w->e[0], rl));
    assert_true(rl->det.srtt > 0);
    assert_int_equal(bfo_rail_rtt(&w->e[0], 1, 0), rl->det.srtt);
    assert_true(rail_live(w, 0, 1, 0) && rail_live(w, 1, 0, 0)); /* maybe demoted: slow */
    stream_check(&st);
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

/* The tests of detect, in the order they run (engine_test_main: a pattern,
 * --shard). */
int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_silent_loss_busy_rail_mapped_out_within_heartbeat_plus_probe_timeout),
        cmocka_unit_test(test_idle_peer_not_probed_then_first_send_probes_at_once),
        cmocka_unit_test(test_idle_peer_never_silence_no_frames),
        cmocka_unit_test(test_any_source_receive_watches_every_connected_peer),
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
        cmocka_unit_test(test_rail_heard_ignores_bad_arguments),
        cmocka_unit_test(test_busy_peer_host_heard_is_not_failed),
        cmocka_unit_test(test_busy_peer_heard_once_after_the_probe_then_silent_is_not_failed),
        cmocka_unit_test(test_idle_rail_probe_waits_for_the_peer_kernels_delayed_ack),
        cmocka_unit_test(test_host_heard_excuses_a_rail_a_retransmission_long_when_the_process_talks_elsewhere),
        cmocka_unit_test(test_rail_whose_frames_wait_for_a_retransmission_is_not_failed),
        cmocka_unit_test(test_every_rank_computing_at_once_is_not_silence),
    };
    return engine_test_main(argc, argv, "engine_detect", tests, sizeof tests / sizeof tests[0]);
}
