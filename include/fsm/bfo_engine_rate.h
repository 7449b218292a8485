// SPDX-License-Identifier: BSD-3-Clause
/* bfo_engine_rate.h - striping by measured rate, demotion and promotion of
 * slow rails.
 *
 * Part of bfo_engine.h, level 3 of its parts (docs/engine-design.md, "The
 * parts"): include bfo_engine.h, not this.  It includes bfo_engine_pools.h
 * (and so every part below); a call to a part above goes through a
 * prototype in bfo_engine_hooks.h: here bfo__rail_ctl_pad, bfo__rail_step,
 * bfo__peer_need_rest, bfo__relay_unqueued.
 *
 * It owns bfo_rail_link.rate (bfo__rail_rate): only its functions write it.
 *
 * Sections (grep '>>name'): >>striping, >>rate_samples, >>measure,
 * >>review, >>rate_state.
 */
#ifndef BFO_ENGINE_RATE_H
#define BFO_ENGINE_RATE_H

#include "bfo_engine_pools.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Defined below in this part, called before their definition. */
static BFO__NOINLINE void bfo__rate_op(bfo_engine *e, int peer, int rail, uint64_t bytes, uint64_t dt,
                                       uint64_t since);

/* >>striping - which rail a piece of data goes on ------------------------- */

/* Striping of data (FRAG, WRITE, READ) by measured rate: an op goes to the
 * eligible UP rail (RDMA rails only, for RDMA) where it is expected to be
 * delivered first: the bytes already queued on it (q_bytes: posted, not
 * completed) and its own, at the rail's measured rate.  Bytes thus split in
 * proportion to what each rail delivers, and a rail that slows down is
 * given less as its queue stops draining, before any sample says so.  A
 * DEMOTED rail (slow, or standby) gets none; a rail on probation (less
 * than BFO_PROBATION_BYTES delivered since its admission or promotion: its
 * rate is a guess, or what a few pieces said) gets
 * one piece of BFO__STRIPE_MIN or more at a time, so a rail that is slow
 * from the start holds up one piece, not a share (the only eligible rail
 * takes everything: there is no choice to make); and it gets the next one
 * as soon as the last is back, whatever its estimate, so that its
 * probation ends on pieces, not on a guess (a lone piece reads its round
 * trip: a readmitted loopback rail read at a thirtieth of the other on
 * its first was expected to finish last for every later piece, and was
 * given none).  When every eligible
 * rail, two or more, is on probation with its piece out (the first pieces
 * to a peer), BFO__PICK_WAIT: the op waits in the peer's pending list for the first
 * sample (bfo__gate_kick), a round trip of the fastest rail.  A
 * FRAG shorter than
 * BFO__STRIPE_MIN is not striped: it goes as a small message does
 * (bfo__pick_rail), so the tail of a message just past the eager limit
 * follows its RNDV on an idle peer's rail instead of waking a second
 * connection and its acknowledgement, which costs more than the piece
 * (docs/engine-design.md, "Protocols and striping"). */
#define BFO__STRIPE_MIN 16384
#define BFO__PICK_WAIT (-2) /* every UP rail on probation holds a piece: wait for a sample */
static inline int bfo__pick_weighted(bfo_engine *e, int peer, uint64_t len, int rdma)
{
    bfo_peer *p = &e->peers[peer];
    int best = -1, gated = -1, ngated = 0;
    uint64_t best_t = 0;
    for (int r = 0; r < e->cfg.nrails; r++) {
        const bfo_rail_link *rl = &p->rail[r];
        if (rdma ? !bfo__rail_rdma(e, peer, r) : !bfo__rail_up(e, peer, r))
            continue;
        if (BFO__UNLIKELY(!rl->rate.measured) && len >= BFO__STRIPE_MIN) {
            if (rl->rate.q_bytes < BFO__STRIPE_MIN)
                return r; /* on probation, its piece back: the next one, whatever its estimate */
            gated = r; /* on probation, its piece out: no more until it is back */
            ngated++;
            continue;
        }
        uint64_t t = ((rl->rate.q_bytes + len) << 10) / (rl->rate.rate ? rl->rate.rate : 1);
        if (best < 0 || t < best_t) {
            best = r;
            best_t = t;
        }
    }
    if (BFO__UNLIKELY(best < 0) && ngated) /* the only rail is no choice: no probation */
        return ngated == 1 ? gated : BFO__PICK_WAIT;
    return best;
}

/* A piece of data for the peer (a FRAG, or an RDMA read if rdma), *n bytes
 * long (frag_size or less): the rail it goes on (bfo__pick_weighted; -1 to
 * leave the choice to bfo__post: a piece not striped, or one rail), and its
 * length: a rail on probation (bfo_rail_link.rate.measured) is given at most
 * BFO_PROBATION_PIECE while another rail is UP and measured (at the start,
 * with none measured, pieces are whole), so that a rail slow from the
 * start, or promoted on a measurement that a burst fooled, holds up that
 * much of one message at a time until its samples say what it is worth. */
static inline int bfo__piece(bfo_engine *e, int peer, size_t *n, int rdma)
{
    int rail;
    if ((!rdma && *n < BFO__STRIPE_MIN) || peer == e->cfg.rank || e->cfg.nrails < 2)
        return -1;
    /* striping pays from here on: the rails of the peer still DORMANT (one
     * rail first, bfo__peer_need) connect now and join as they are admitted */
    for (int k = 0; k < e->cfg.nrails; k++)
        if (BFO__UNLIKELY(e->peers[peer].rail[k].fsm.cs == BFO_RAIL_ST_DORMANT)) {
            bfo__peer_need_rest(e, peer);
            break;
        }
    rail = bfo__pick_weighted(e, peer, *n, rdma);
    if (rail >= 0 && !e->peers[peer].rail[rail].rate.measured && *n > BFO_PROBATION_PIECE)
        for (int k = 0; k < e->cfg.nrails; k++)
            if (k != rail && e->peers[peer].rail[k].rate.measured && bfo__rail_up(e, peer, k)) {
                *n = BFO_PROBATION_PIECE;
                break;
            }
    return rail;
}

/* Eager and control messages, and a RNDV with its first bytes (len: the
 * frame's): as a piece of data, the UP rail where it is expected to be
 * delivered first, the lowest-numbered on a tie.  An idle peer's small
 * messages therefore keep to its fastest rail (the receiver finds them
 * where it last did); a stream of them spreads over every rail as bytes
 * queue up; and a rail that is slow, before it is demoted, is given no
 * frame that it would hold up (an ACK waiting behind a slow rail's queue
 * stalls its whole message). */
static inline int bfo__pick_rail(bfo_engine *e, int peer, uint64_t len)
{
    if (e->cfg.nrails == 1) /* no choice: the same answer, without its divisions */
        return bfo__rail_up(e, peer, 0) ? 0 : -1;
    return bfo__pick_weighted(e, peer, len, 0);
}

/* >>rate_samples - what a rail delivered, and the estimate ---------------- */

/* Work goes on a rail (n bytes): a rail that had none starts a fresh lag
 * window (time it sat idle is no measure of it). */
static BFO__HOT void bfo__rail_took(bfo_engine *e, bfo_rail_link *rl, uint64_t n)
{
    if (!rl->rate.q_bytes) {
        rl->rate.win_start = e->now;
        rl->rate.win_bytes = 0;
        rl->rate.work_at = e->now;
    }
    rl->rate.q_bytes += n;
    rl->rate.inflight++;
    rl->rate.last_tx = e->now;
}

/* ... for an op, which notes what was queued ahead of it, when, and since
 * when that has been coming back (its delivery is then a sample of the
 * rail's rate).  The rail's half is bfo__rail_took, which the lane's
 * MATCH takes alone. */
static BFO__HOT void bfo__rail_queued(bfo_engine *e, bfo_rail_link *rl, bfo_op *op, uint64_t n)
{
    op->q_at = rl->rate.q_bytes;
    op->post_at = e->now;
    bfo__rail_took(e, rl, n);
    if (BFO__UNLIKELY(n >= BFO__STRIPE_MIN)) /* a sample to be (bfo__rail_unqueued) */
        op->since = rl->rate.done_at > rl->rate.work_at ? rl->rate.done_at : rl->rate.work_at;
}

/* n bytes of the rail's came back (ok: delivered).  A piece of data
 * delivered (BFO__STRIPE_MIN or more) is a sample: it and what was queued
 * ahead of it came back since op->since, the rail's last completion before
 * its post (none came between: they come in order), or its post when the
 * rail was idle.  Not since its post: completions come in batches (a TCG
 * guest's, a peer's acknowledgements), and bytes queued ahead of it that
 * had arrived but were not reported yet make a sample far above the
 * rail's rate, against which an equal rail looks slow (docs/engine-design.md,
 * "Striping by measured rate").  Small messages and control are no sample
 * (their round trips, not the rail's rate). */
static BFO__HOT void bfo__rail_gave(bfo_engine *e, int peer, int rail, uint64_t n, int ok,
                                    const bfo_op *sample)
{
    bfo_peer *p = &e->peers[peer];
    bfo_rail_link *rl = &p->rail[rail];
    rl->rate.inflight--;
    rl->rate.q_bytes -= n;
    rl->rate.win_bytes += n;
    if (BFO__UNLIKELY(sample != NULL)) { /* after the window counted it: a sample may reset it */
        const uint64_t dt = e->now - sample->post_at;
        rl->rate.lat = rl->rate.lat ? rl->rate.lat - rl->rate.lat / 8 + dt / 8 : dt;
        bfo__rate_op(e, peer, rail, sample->q_at + n, dt, sample->since);
    }
    if (ok)
        rl->rate.done_at = e->now;
    if (BFO__UNLIKELY(p->pend_head >= 0)) /* ops that wait may go now (bfo__gate_kick) */
        bfo__gate_note(e, peer);
}

/* ... for an op: the rail's half (bfo__rail_gave, which the lane's MATCH
 * takes alone), with the op as the sample when it is one. */
static BFO__HOT void bfo__rail_unqueued(bfo_engine *e, const bfo_op *op, uint64_t n, int ok)
{
    if (BFO__UNLIKELY(op->rail == BFO__RELAY_RAIL)) { /* its relay's RELAYACK came, or it failed */
        bfo__relay_unqueued(e, op, ok);
        return;
    }
    bfo__rail_gave(e, op->peer, op->rail, n, ok,
                   BFO__UNLIKELY(n >= BFO__STRIPE_MIN) && ok && op->type != BFO_FRAG_PROBE /* (not a measurement) */
                       ? op
                       : NULL);
}

/* The peer's UP rail but one with the best measured rate (-1: none).  A
 * rail never sampled (its rate the transport's guess: a TCP rail that
 * carries only control while verbs rails read) is no measure of the
 * others: slow against a guess is not slow. */
static inline int bfo__best_rail(const bfo_engine *e, int peer, int but)
{
    int best = -1;
    for (int r = 0; r < e->cfg.nrails; r++) {
        const bfo_rail_link *rl = &e->peers[peer].rail[r];
        if (r != but && bfo__rail_up(e, peer, r) && (rl->rate.measured || rl->rate.prob_bytes) &&
            (best < 0 || rl->rate.rate > e->peers[peer].rail[best].rate.rate))
            best = r;
    }
    return best;
}

/* ... its rate (0: none). */
static inline uint64_t bfo__best_rate(const bfo_engine *e, int peer, int but)
{
    int b = bfo__best_rail(e, peer, but);
    return b < 0 ? 0 : e->peers[peer].rail[b].rate.rate;
}

/* The estimate takes a sample x (bytes per ms) that took dt: a quarter of
 * the way (EWMA), or all the way (BFO__SAMPLE_HARD).  An UP rail under
 * 1/BFO_DEMOTE_RATIO of the best other UP rail counts a slow sample
 * (bfo__rails_review demotes it after BFO_DEMOTE_SAMPLES over
 * BFO_DEMOTE_NS), unless the sample took no longer than a piece takes on
 * that best rail (its lat): a piece that came back as soon as the best
 * rail's do is no evidence that its rail is slow.  A piece sent alone (on
 * probation, or to a rail whose low estimate keeps its queue short)
 * measures the rail's round trip more than its rate, and with an equal
 * rail's acknowledgements waiting in a shaper's queue behind the other
 * direction's data, or a slow guest's completions, a lone piece reads a
 * small fraction of the rail's rate: equal rails were demoted on it again
 * and again (docs/engine-design.md, "Striping by measured rate"). */
#define BFO__SAMPLE_HARD 1 /* the estimate takes the sample all the way */
#define BFO__SAMPLE_SEEN 2 /* a slow sample adds nothing to the streak (evidence counted) */
static inline void bfo__rate_take(bfo_engine *e, int peer, int rail, uint64_t x, int flags, uint64_t dt)
{
    bfo_rail_link *rl = &e->peers[peer].rail[rail];
    rl->rate.rate = (flags & BFO__SAMPLE_HARD) ? x : rl->rate.rate - rl->rate.rate / 4 + x / 4;
    if (!rl->rate.rate)
        rl->rate.rate = 1;
    if (rl->fsm.cs == BFO_RAIL_ST_UP) {
        int b = bfo__best_rail(e, peer, rail);
        if (b >= 0 && rl->rate.rate * BFO_DEMOTE_RATIO < e->peers[peer].rail[b].rate.rate &&
            dt > e->peers[peer].rail[b].rate.lat) {
            if (!rl->rate.slow && !(flags & BFO__SAMPLE_SEEN))
                rl->rate.slow_since = e->now;
            if (rl->rate.slow < 255 && !(flags & BFO__SAMPLE_SEEN))
                rl->rate.slow++;
        } else {
            rl->rate.slow = 0;
        }
    }
    rl->rate.sampled_at = e->now;
    rl->rate.win_start = e->now;
    rl->rate.win_bytes = 0;
}

/* A piece of data delivered: `bytes` (it and what was queued ahead of it
 * on the rail, which goes first) came back over `span`; the piece took dt.  A piece sent alone
 * on an idle rail counts its round trip against the rail: large pieces
 * only (bfo__rail_unqueued). */
static BFO__NOINLINE void bfo__rate_op(bfo_engine *e, int peer, int rail, uint64_t bytes, uint64_t dt,
                                       uint64_t since)
{
    bfo_rail_link *rl = &e->peers[peer].rail[rail];
    uint64_t span = e->now - since;
    int b = bfo__best_rail(e, peer, rail), flags = 0;
    /* no sample above twice the higher of its estimate and the best other
     * rail's: a piece's completion taken in the same instant as its post
     * (the clock read once for both, or acknowledgements held, then sent
     * at once) made a rail read a hundred times its rate, and its equal
     * pair slow beside it, demoted again and again (engine-design.md) */
    uint64_t top = b >= 0 && e->peers[peer].rail[b].rate.rate > rl->rate.rate ? e->peers[peer].rail[b].rate.rate : rl->rate.rate;
    if (span < 1000)
        span = 1000;
    if (!rl->rate.measured) { /* on probation: all it delivered, over all its pieces' times */
        rl->rate.prob_bytes += bytes;
        rl->rate.prob_ns += span;
        rl->rate.measured = rl->rate.prob_bytes >= BFO_PROBATION_BYTES;
        /* not grown when back sooner than the best rail's pieces (as a
         * measured rail's is, below): a rail on probation is given its
         * next piece once the last is back whatever its estimate
         * (bfo__pick_weighted), and a slow rail's lone pieces beside a
         * loaded best rail always come back sooner: doubled on each, a
         * rail a hundredth of its pair's left probation far above its
         * rate, was handed megabytes, and held the stream's end for
         * seconds (engine-design.md) */
        uint64_t x = rl->rate.prob_bytes * 1000000u / rl->rate.prob_ns;
        /* and, until its probation ends, no evidence of a slow rail: its
         * pieces go one at a time, each given once the last is back, so
         * it reads its round trip (on a rail whose acknowledgements wait
         * behind the other direction's data, a small fraction of its
         * rate), and it is never left
         * without a sample to come; pieces that do not come back are
         * judged by lag samples.  The last, over all its pieces, is. */
        bfo__rate_take(e, peer, rail, x < 2 * top ? x : 2 * top,
                       BFO__SAMPLE_HARD | (rl->rate.measured ? 0 : BFO__SAMPLE_SEEN), dt);
        return;
    }
    if (BFO__UNLIKELY(rl->rate.stall_to > since)) {
        /* it began before a stall that lag samples judged: the stall is
         * left out of its span (counted once, by them), and the sample
         * is no new evidence of a slow rail (the first pieces back after
         * a stall read its tail, since the last lag sample: a burst of
         * samples far below the rail's rate demoted it).  What
         * came back at once when the rail moved again is no measure of a
         * rate above the best rail's. */
        uint64_t from = rl->rate.stall_from > since ? rl->rate.stall_from : since;
        if (span - 1000 > rl->rate.stall_to - from)
            span -= rl->rate.stall_to - from;
        else
            span = 1000;
        flags = BFO__SAMPLE_SEEN;
    }
    uint64_t x = bytes * 1000000u / span;
    if (flags && b >= 0 && x > e->peers[peer].rail[b].rate.rate)
        x = e->peers[peer].rail[b].rate.rate;
    else if (x > 2 * top)
        x = 2 * top;
    /* back sooner than a piece on the best other rail: it could carry
     * more than it was given (the scheduler fills rails to equal expected
     * finish, and a rail given little reads its round trip, not its rate:
     * the other rank's data on it made a rail read a few percent of its
     * pair's rate for seconds).  Its estimate grows
     * by a quarter at least (never past the best rail's), until its pieces
     * take as long as the best rail's do. */
    if (b >= 0 && dt < e->peers[peer].rail[b].rate.lat && rl->rate.rate < e->peers[peer].rail[b].rate.rate) {
        uint64_t up = 2 * rl->rate.rate < e->peers[peer].rail[b].rate.rate ? 2 * rl->rate.rate : e->peers[peer].rail[b].rate.rate;
        if (x < up)
            x = up;
    }
    bfo__rate_take(e, peer, rail, x, flags, dt);
}

/* Another UP rail of the peer's delivered data since `since`: a sample
 * taken, or bytes back in a window begun since.  A rail that lags while
 * every rail does is no slower than the others: the peer takes nothing (it
 * computes, its progress thread answers probes but nobody receives).
 * bfo__rate_lag asks about the second half of the rail's silence: rails
 * that stopped together stopped within a completion time or so of each
 * other (docs/engine-design.md, "Striping by measured rate"). */
static inline int bfo__others_delivered(const bfo_engine *e, int peer, int rail, uint64_t since)
{
    for (int r = 0; r < e->cfg.nrails; r++) {
        const bfo_rail_link *o = &e->peers[peer].rail[r];
        if (r != rail && bfo__rail_up(e, peer, r) &&
            (o->rate.sampled_at > since || (o->rate.win_start >= since && o->rate.win_bytes)))
            return 1;
    }
    return 0;
}

/* From bfo_engine_progress: work waits on the rail and nothing came back
 * for BFO_RATE_LAG_NS.  With four fragments' worth queued (a piece or two
 * waiting for an acknowledgement are no measure of a rail) and another
 * rail delivering meanwhile (bfo__others_delivered), the estimate
 * drops at once to what the rail can at most have done: what came back and
 * one fragment more, over the time (no averaging: a rail that just slowed
 * down a hundredfold is given nothing more at once). */
static BFO__NOINLINE void bfo__rate_lag(bfo_engine *e, int peer, int rail)
{
    bfo_rail_link *rl = &e->peers[peer].rail[rail];
    uint64_t dt = e->now - rl->rate.win_start;
    uint64_t bound = dt ? (rl->rate.win_bytes + e->cfg.frag_size) * 1000000u / dt : rl->rate.rate;
    const uint64_t from = rl->rate.stall_to == rl->rate.win_start ? rl->rate.stall_from : rl->rate.win_start;
    if (!rl->rate.measured && rl->rate.q_bytes >= BFO__STRIPE_MIN) {
        /* on probation, its piece not back: at most the bound.  With ops
         * waiting for a sample (BFO__PICK_WAIT: every rail on probation),
         * the probation ends on it and they go; completions correct it (a
         * peer that acknowledges late, or not at all while it computes,
         * holds nothing up for longer than this) */
        bfo__rate_take(e, peer, rail, bound < rl->rate.rate ? bound : rl->rate.rate, BFO__SAMPLE_HARD, dt);
        rl->rate.stall_from = from;
        rl->rate.stall_to = e->now;
        if (e->peers[peer].pend_head >= 0) {
            rl->rate.measured = 1;
            bfo__gate_note(e, peer);
        }
    } else if (rl->rate.q_bytes >= 4 * (uint64_t)e->cfg.frag_size && bound < rl->rate.rate &&
               bfo__others_delivered(e, peer, rail, rl->rate.win_start + dt / 2)) {
        bfo__rate_take(e, peer, rail, bound, BFO__SAMPLE_HARD, dt);
        rl->rate.stall_from = from;
        rl->rate.stall_to = e->now;
    } else {
        rl->rate.win_start = e->now;
        rl->rate.win_bytes = 0;
    }
}

/* >>measure - a demoted rail measured by a pair of probes ----------------- */

/* A demoted rail is measured by a pair of probes sent back to back: a
 * plain one, then one padded with zeros (at most BFO_MEASURE_BYTES,
 * frag_size, and what the rail moved in BFO_MEASURE_TIME_NS at the rate
 * it was demoted at; at least 4 KiB).  The padding goes through the rail's
 * narrowest point after the plain probe, so the time between their two
 * PROBEACKs is the padding's time on the rail (packet-pair dispersion):
 * the delays both share (the peer's progress loop, queues) cancel out,
 * where one probe's round trip would measure them instead.  Their nonces
 * have the top bit set (a heartbeat's never has): the padded one's is odd,
 * the plain one's one less.  At 1/BFO_PROMOTE_RATIO of the best UP rail or
 * better a measurement counts good (bfo__rails_review promotes after
 * BFO_PROMOTE_SAMPLES in a row); the estimate moves halfway to it. */
static BFO__NOINLINE void bfo__measured(bfo_engine *e, int peer, int rail, uint64_t nonce)
{
    bfo_rail_link *rl = &e->peers[peer].rail[rail];
    uint64_t dt, x, best;
    if (nonce == rl->rate.meas_nonce - 1) { /* the plain one */
        rl->rate.meas_first = e->now ? e->now : 1;
        return;
    }
    /* the padded one: from the plain one's answer (without it, from the
     * pair's sending: its round trip counts against it) */
    dt = rl->rate.meas_first ? e->now - rl->rate.meas_first : e->now - rl->rate.meas_sent;
    rl->rate.meas_sent = rl->rate.meas_first = 0;
    if (rl->fsm.cs != BFO_RAIL_ST_DEMOTED)
        return;
    x = (uint64_t)rl->rate.meas_len * 1000000u / (dt > 1000 ? dt : 1000);
    best = bfo__best_rate(e, peer, rail);
    if (best && x > best)
        x = best; /* both answers in one read: "fast", no more is known */
    rl->rate.rate = rl->rate.rate / 2 + x / 2;
    if (!rl->rate.rate)
        rl->rate.rate = 1;
    if (!best || x * BFO_PROMOTE_RATIO >= best) {
        if (rl->rate.meas_good < 255)
            rl->rate.meas_good++;
    } else {
        rl->rate.meas_good = 0;
    }
}

/* Sends the measuring pair (see bfo__measured): the plain probe, then
 * the padding: 20 ms of the rail at the rate it was demoted at, times
 * 2^flaps, in at most BFO__TRAIN padded probes of at most
 * BFO_MEASURE_BYTES back to back (a train: those before the last carry
 * the plain one's nonce less one, which nothing waits for).  A rail behind
 * a token-bucket shaper (tc's tbf, a switch's policer) lets a padding that
 * its bucket covers through at once and measures fast; promoted on that,
 * it is demoted again on probation (a flap), and each flap doubles the
 * padding until the bucket no longer covers it (docs/engine-design.md,
 * "Striping by measured rate", has the runs that showed it).
 * Measured half as often per flap (bfo__rails_review), a demoted rail's
 * bytes per second stay within the budget: 20 ms of it every 100 ms,
 * BFO_MEASURE_BYTES at most (more only once it flapped, and then no more
 * than BFO__TRAIN of them per period). */
#define BFO__TRAIN 8
static BFO__NOINLINE void bfo__measure(bfo_engine *e, int peer, int rail)
{
    bfo_rail_link *rl = &e->peers[peer].rail[rail];
    /* from the rate it was demoted at, not from what a measurement said
     * (a burst can fool one): the budget holds */
    uint64_t len = rl->rate.base_rate * (BFO_MEASURE_TIME_NS / 1000000u);
    const uint64_t nonce = ((uint64_t)1 << 63) | (e->now << 1) | 1;
    uint64_t cap = bfo__stage_bytes(&e->cfg);
    int train;
    rl->rate.meas_at = e->now;
    if (len < 4096)
        len = 4096;
    if (len > BFO_MEASURE_BYTES)
        len = BFO_MEASURE_BYTES;
    len <<= rl->rate.flaps;
    if (cap > BFO_MEASURE_BYTES)
        cap = BFO_MEASURE_BYTES;
    train = (int)((len + cap - 1) / cap);
    if (train > BFO__TRAIN)
        train = BFO__TRAIN;
    len = len / (uint64_t)train < cap ? len / (uint64_t)train : cap; /* each probe's */
    if (!e->pad_mem || e->ctl_in_use + 1 + train > bfo__ctl_budget(&e->cfg))
        return;
    if (BFO__UNLIKELY(!e->pad_zeroed)) {
        memset(e->pad_mem, 0, BFO_MEASURE_BYTES);
        e->pad_zeroed = 1;
    }
    rl->rate.meas_nonce = nonce;
    rl->rate.meas_sent = e->now ? e->now : 1;
    rl->rate.meas_first = 0;
    rl->rate.meas_len = (uint32_t)(len * (uint64_t)train);
    e->stats.measures++;
    if (!bfo__rail_ctl_pad(e, peer, rail, BFO_FRAG_PROBE, rail, nonce - 1, 0)) {
        rl->rate.meas_sent = 0;
        return;
    }
    for (int k = 1; k <= train; k++)
        if (!bfo__rail_ctl_pad(e, peer, rail, BFO_FRAG_PROBE, rail, k < train ? nonce - 2 : nonce, (size_t)len)) {
            rl->rate.meas_sent = 0;
            return;
        }
}

/* >>review - demotion and promotion --------------------------------------- */

/* The peer's rails reviewed (bfo_engine_progress, two rails or more):
 * demotion and promotion (spec/rail.rl, "Slow is not dead"), and the
 * demoted rails' measurements. */
static BFO__NOINLINE void bfo__rails_review(bfo_engine *e, int peer)
{
    bfo_peer *p = &e->peers[peer];
    const unsigned sb = e->cfg.standby_rails;
    int up = 0, active = 0;
    for (int r = 0; r < e->cfg.nrails; r++)
        if (p->rail[r].fsm.cs == BFO_RAIL_ST_UP) {
            up++;
            active += !((sb >> r) & 1u);
        }
    for (int r = 0; r < e->cfg.nrails; r++) {
        bfo_rail_link *rl = &p->rail[r];
        const int standby = (sb >> r) & 1u;
        if (e->now - rl->rate.in_mark_at >= BFO_DEMOTE_NS) { /* the peer's direction's rate */
            rl->rate.in_rate = (rl->rate.in_bytes - rl->rate.in_mark) * 1000000u / (e->now - rl->rate.in_mark_at);
            rl->rate.in_mark = rl->rate.in_bytes;
            rl->rate.in_mark_at = e->now;
        }
        if (rl->fsm.cs == BFO_RAIL_ST_UP) {
            /* slow one way and fast the other (the peer's data comes in on
             * it at 1/BFO_DEMOTE_RATIO of the best rail or more): its
             * pieces' acknowledgements came back behind that data, no
             * evidence of a slow rail; the streak waits */
            const int in_fast = rl->rate.slow && rl->rate.in_rate &&
                                rl->rate.in_rate * BFO_DEMOTE_RATIO >= bfo__best_rate(e, peer, r);
            if (standby ? active > 0
                        : (up > 1 && rl->rate.slow && !in_fast && e->now - rl->rate.slow_since >= BFO_DEMOTE_NS &&
                           (rl->rate.slow >= BFO_DEMOTE_SAMPLES ||
                            (e->now - rl->rate.sampled_at >= BFO_DEMOTE_NS &&
                             rl->rate.q_bytes < 4 * (uint64_t)e->cfg.frag_size)))) {
                bfo__rail_step(e, peer, r, BFO_EV_DEMOTION_DUE, NULL);
                up--;
                active -= !standby;
            }
        } else if (rl->fsm.cs == BFO_RAIL_ST_DEMOTED) {
            if (!up || (standby ? !active : rl->rate.meas_good >= BFO_PROMOTE_SAMPLES)) {
                bfo__rail_step(e, peer, r, BFO_EV_PROMOTION_DUE, NULL);
                up++;
                active += !standby;
            } else if (!standby) {
                if (rl->rate.meas_sent && e->now - rl->rate.meas_sent >= 10 * BFO_MEASURE_PERIOD_NS) {
                    rl->rate.meas_sent = 0; /* lost with its connection, or very slow */
                    rl->rate.meas_good = 0;
                }
                if (!rl->rate.meas_sent && e->now - rl->rate.meas_at >= (uint64_t)BFO_MEASURE_PERIOD_NS << rl->rate.flaps)
                    bfo__measure(e, peer, r);
            }
        }
    }
}

/* >>rate_state - the rate's state: set up, reset, the rail machine's events */

/* At init: nothing measured, the transport's figure (bw set) as its rate. */
static inline void bfo__rate_init(bfo_rail_link *rl)
{
    memset(&rl->rate, 0, sizeof rl->rate);
    rl->rate.rate = bfo__rate_guess(rl);
}

/* The rail admitted (ADMIT): measured afresh, on probation; what it
 * carried before does not count (its queue drained when it went down). */
static inline void bfo__rate_reset(bfo_engine *e, bfo_rail_link *rl)
{
    rl->rate.last_tx = e->now;
    rl->rate.rate = bfo__rate_guess(rl);
    rl->rate.measured = 0;
    rl->rate.prob_bytes = rl->rate.prob_ns = 0;
    rl->rate.lat = 0;
    rl->rate.slow = rl->rate.meas_good = 0;
    rl->rate.meas_sent = 0;
}

/* Frames of len bytes handed in on the rail (the peer's direction). */
static inline void bfo__rate_on_in(bfo_rail_link *rl, uint64_t len) { rl->rate.in_bytes += len; }

/* DEMOTE: new data goes elsewhere, what is in flight completes here; its
 * measurements (bfo__measure) start from the rate it was demoted at. */
static inline void bfo__rate_on_demote(bfo_engine *e, bfo_rail_link *rl)
{
    e->stats.demotions++;
    /* demoted again within BFO_FLAP_NS of a promotion: a rail that
     * measures well in short bursts (a token-bucket shaper) and not
     * under load; measured half as often each time (flap damping) */
    if (rl->rate.promoted_at && e->now - rl->rate.promoted_at < BFO_FLAP_NS) {
        rl->rate.flaps = rl->rate.flaps < 6 ? rl->rate.flaps + 1 : 6;
        /* the rate on probation had the burst in it: the measuring
         * budget stays at the rate of the first demotion, or less
         * (else each flap's higher rate on probation would shrink the
         * padding that must outlast the bucket) */
        if (!rl->rate.base_rate || rl->rate.rate < rl->rate.base_rate)
            rl->rate.base_rate = rl->rate.rate;
    } else {
        rl->rate.flaps = 0;
        rl->rate.base_rate = rl->rate.rate;
    }
    rl->rate.meas_good = 0;
    rl->rate.meas_sent = 0;
    rl->rate.meas_at = e->now;
}

/* PROMOTE: data again, back on probation at the promotion threshold, so
 * that a rail that measured well in a burst is not handed much at once;
 * its completions raise the estimate as fast as it delivers. */
static inline void bfo__rate_on_promote(bfo_engine *e, int peer, int rail)
{
    bfo_rail_link *rl = &e->peers[peer].rail[rail];
    const uint64_t best = bfo__best_rate(e, peer, rail) / BFO_PROMOTE_RATIO;
    e->stats.promotions++;
    rl->rate.slow = 0;
    if (best && rl->rate.rate > best)
        rl->rate.rate = best;
    rl->rate.promoted_at = e->now ? e->now : 1;
    rl->rate.meas_sent = 0;
    rl->rate.measured = 0; /* probation: one small piece at a time, BFO_PROBATION_BYTES */
    rl->rate.prob_bytes = rl->rate.prob_ns = 0;
}

/* From bfo_engine_progress, for an UP or DEMOTED rail: work waits on it,
 * nothing delivered for a while, and the peer's process talks (heard on
 * any rail at proc_rx: a peer that computes is slow on every rail, no
 * measure of this one), or the rail is on probation and ops wait for it:
 * a lag sample (bfo__rate_lag). */
static inline void bfo__rate_on_progress(bfo_engine *e, int peer, int rail, uint64_t proc_rx)
{
    const bfo_rail_link *rl = &e->peers[peer].rail[rail];
    if (rl->rate.q_bytes && e->now - rl->rate.win_start >= BFO_RATE_LAG_NS &&
        e->now - rl->rate.win_start >= 4 * rl->rate.lat &&
        (e->now - proc_rx < BFO_RATE_LAG_NS || (!rl->rate.measured && e->peers[peer].pend_head >= 0)))
        bfo__rate_lag(e, peer, rail);
}

#ifdef __cplusplus
}
#endif
#endif /* BFO_ENGINE_RATE_H */
