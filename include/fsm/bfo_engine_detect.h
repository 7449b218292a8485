// SPDX-License-Identifier: BSD-3-Clause
/* bfo_engine_detect.h - the failure detector: probe round trips and timeouts,
 * what the transport heard.
 *
 * Part of bfo_engine.h, level 3 of its parts (docs/engine-design.md, "The
 * parts"): include bfo_engine.h, not this.  It includes bfo_engine_pools.h
 * (and so every part below); a call to a part above goes through a
 * prototype in bfo_engine_hooks.h: here bfo__rail_ctl_pad (its probe).
 * It owns bfo_rail_link.det (bfo__rail_detect): only its functions write it.
 *
 * Sections (grep '>>name'): >>probe_rtt, >>evidence, >>detect_state,
 * >>work, >>detect_rules.
 */
#ifndef BFO_ENGINE_DETECT_H
#define BFO_ENGINE_DETECT_H

#include "bfo_engine_pools.h"

#ifdef __cplusplus
extern "C" {
#endif

/* >>probe_rtt - a rail's probe timeout, from its round trips -------------- */

/* How long after a frame a transport's word on the peer's host may come
 * when the peer's process does not read: a TCP peer's kernel acknowledges
 * such a segment when its delayed-ACK timer fires, from 40 ms
 * (TCP_DELACK_MIN, the probe timeout's floor) up to 200 ms
 * (TCP_DELACK_MAX) later.  A probe with no other witness waits this much
 * more (bfo__detect_due). */
#define BFO__HOST_ACK_DELAY_NS 200000000ull

/* The probe timeout of one rail: probe_timeout_ns, or more when probes come
 * back slowly (srtt + 4 rttvar), or twice a piece's time from its post to
 * its completion (lat) while data is in flight on it, doubled after each
 * recent probe timeout in UP; never above silence_ns.  A loaded peer that
 * answers late is thus not failed again and again, while a quiet, healthy
 * rail keeps the floor.  A probe waits behind the rail's data as a piece
 * does, and its answer behind the other direction's: behind a shaper's
 * queue a loaded rail goes unheard for many times the round trip measured
 * before the load, and was failed over for it (docs/engine-design.md,
 * "Striping by measured rate"). */
static inline uint64_t bfo__probe_timeout(const bfo_engine *e, const bfo_rail_link *rs)
{
    uint64_t t = e->cfg.probe_timeout_ns, est = rs->det.srtt + 4 * rs->det.rttvar;
    if (est > t)
        t = est;
    if (rs->rate.q_bytes && 2 * rs->rate.lat > t)
        t = 2 * rs->rate.lat;
    t <<= rs->det.pt_shift;
    /* a demoted rail is known to be slow: its probes and the peer's beacons
     * wait in a full queue (a shaper's drops them), twice as long */
    if (rs->fsm.cs == BFO_RAIL_ST_DEMOTED)
        t *= 2;
    return t < e->cfg.silence_ns ? t : e->cfg.silence_ns;
}

/* The PROBEACK of the last probe: one round trip measured (RFC 6298's
 * gains, 1/8 and 1/4); in UP the heartbeat is answered. */
static inline void bfo__probe_answered(bfo_engine *e, bfo_rail_link *rs)
{
    uint64_t rtt = e->now - rs->det.probe_sent;
    if (rs->det.busy_at > rs->det.probe_sent) {
        /* held open by a busy peer: its computing, not a round trip */
    } else if (!rs->det.srtt && !rs->det.rttvar) {
        rs->det.srtt = rtt;
        rs->det.rttvar = rtt / 2;
    } else {
        uint64_t d = rtt > rs->det.srtt ? rtt - rs->det.srtt : rs->det.srtt - rtt;
        rs->det.rttvar = rs->det.rttvar - rs->det.rttvar / 4 + d / 4;
        rs->det.srtt = rs->det.srtt - rs->det.srtt / 8 + rtt / 8;
    }
    if (!bfo__live(rs->fsm.cs))
        return;
    rs->det.probe_out = 0;
    if (rs->det.pt_shift && ++rs->det.pt_good >= 8) {
        rs->det.pt_shift--;
        rs->det.pt_good = 0;
    }
}

/* >>evidence - the transport heard the peer, or its host ------------------ */

/* A frame of the peer's came in on the rail (bfo_engine_frame, _placed,
 * and what bfo__on_message takes), or the transport heard it. */
static inline void bfo__detect_on_heard(bfo_engine *e, bfo_rail_link *rs) { rs->det.last_rx = e->now; }

/* bfo_engine_rail_heard: see THE API in bfo_engine.h.  On a rail being
 * connected (CONNECTING, RECONNECTING) it is the transport's word that the
 * peer's host answers (its connection is made, the hello waits for a
 * process that computes): a peer with no live rail is not given up while
 * that goes on, its grace starts over (down_since: now). */
static inline void bfo_engine_rail_heard(bfo_engine *e, int peer, int rail, uint64_t now)
{
    bfo_peer *p;
    int cs;
    if (peer < 0 || peer >= e->cfg.nranks || peer == e->cfg.rank || rail < 0 ||
        rail >= e->cfg.nrails || e->peers[peer].unreachable)
        return;
    if (now > e->now)
        e->now = now;
    p = &e->peers[peer];
    bfo__detect_on_heard(e, &p->rail[rail]);
    cs = p->rail[rail].fsm.cs;
    if ((cs == BFO_RAIL_ST_CONNECTING || cs == BFO_RAIL_ST_RECONNECTING) &&
        p->fsm.cs == BFO_PEER_ST_DOWN && p->down_since)
        p->down_since = e->now ? e->now : 1;
}

/* bfo_engine_host_heard: see THE API in bfo_engine.h. */
static inline void bfo_engine_host_heard(bfo_engine *e, int peer, int rail, uint64_t at)
{
    bfo_rail_link *rs;
    if (peer < 0 || peer >= e->cfg.nranks || peer == e->cfg.rank || rail < 0 ||
        rail >= e->cfg.nrails || e->peers[peer].unreachable)
        return;
    if (at > e->now)
        e->now = at;
    rs = &e->peers[peer].rail[rail];
    if (at > rs->det.host_rx)
        rs->det.host_rx = at;
}

/* >>detect_state - the detector's state: set up, reset, the rail machine's events */

/* At init: nothing heard, no probe, no round trip. */
static inline void bfo__detect_init(bfo_rail_link *rs) { memset(&rs->det, 0, sizeof rs->det); }

/* The rail admitted (ADMIT): heard now, no probe out (the round trips and
 * the timeout's doublings stay: they are the path's, and the peer's). */
static inline void bfo__detect_reset(bfo_engine *e, bfo_rail_link *rs)
{
    rs->det.last_rx = e->now;
    rs->det.probe_out = 0;
}

/* SEND_PROBE: a probe goes out (PROBING: to see whether the rail works; UP
 * or DEMOTED: a heartbeat).  PROBING times out from the attempt, sent or
 * not (over the control budget); a heartbeat that went out waits for its
 * PROBEACK. */
static inline void bfo__detect_send_probe(bfo_engine *e, int peer, int rail)
{
    bfo_rail_link *rs = &e->peers[peer].rail[rail];
    rs->det.probe_sent = e->now;
    rs->det.probe_nonce = e->now;
    if (bfo__rail_ctl_pad(e, peer, rail, BFO_FRAG_PROBE, rail, e->now, 0) && bfo__live(rs->fsm.cs))
        rs->det.probe_out = 1;
}

/* The rail left UP/DEMOTED: a heartbeat probe belongs to one stay there. */
static inline void bfo__detect_on_down(bfo_rail_link *rs) { rs->det.probe_out = 0; }

/* t moved on by the gap skipped, never past now */
static inline uint64_t bfo__detect_skip(uint64_t t, uint64_t by, uint64_t now) { return t + by < now ? t + by : now; }

/* This engine was not called for gap, longer than a heartbeat (its caller
 * computed, or the process was not scheduled: 128 ranks on 2 cores wait
 * seconds for their turn): it heard nothing because it did not listen, so
 * that time is no evidence.  Every UP or DEMOTED rail's clocks move on by
 * the gap (never past now): its probe and silence count from before the
 * gap, and what the transports read at this progress (queued meanwhile) is
 * heard.  A DOWN peer's grace (down_since) moves on by the gap less a
 * heartbeat: its connections' hellos and replies waited unread too, so
 * that time is not held against the peer; yet each call counts up to a
 * heartbeat of it, so that a caller that only ever calls less often (every
 * 250 ms) still gives a dead peer up, later (no hang). */

static inline void bfo__detect_on_gap(bfo_engine *e, uint64_t gap)
{
    const bfo_config *c = &e->cfg;
    const uint64_t held = gap - c->heartbeat_ns; /* gap > heartbeat: the caller checks */
    for (int i = 0; i < c->nranks; i++) {
        bfo_peer *p = &e->peers[i];
        if (i == c->rank)
            continue;
        if (!p->unreachable && p->fsm.cs == BFO_PEER_ST_DOWN && p->down_since)
            p->down_since = bfo__detect_skip(p->down_since, held, e->now);
        for (int k = 0; k < c->nrails; k++) {
            bfo__rail_detect *d = &p->rail[k].det;
            if (!bfo__live(p->rail[k].fsm.cs))
                continue;
            d->last_rx = bfo__detect_skip(d->last_rx, gap, e->now);
            d->probe_sent = bfo__detect_skip(d->probe_sent, gap, e->now);
            if (d->host_rx)
                d->host_rx = bfo__detect_skip(d->host_rx, gap, e->now);
            if (d->busy_at)
                d->busy_at = bfo__detect_skip(d->busy_at, gap, e->now);
            if (d->woke_at)
                d->woke_at = bfo__detect_skip(d->woke_at, gap, e->now);
        }
    }
}

/* >>work - liveness follows the work -------------------------------------- */

/* A peer with no work, and none for a heartbeat interval, is quiet: its
 * rails get no heartbeat probe and are never failed for silence (an idle
 * peer simply has nothing to say; probing it costs every idle pair of
 * ranks a frame each way per heartbeat).  Work, for a peer: a request
 * posted to or for it (bfo_isend, bfo_irecv naming it, an ANY_SOURCE
 * receive posted while it is connected), one of its
 * requests not complete (a send, a receive naming it or that matched its
 * message), an op waiting for a rail to it or given to the backend on
 * one of its rails and not completed.  bfo_engine_progress looks
 * for work every quarter heartbeat (bfo__work_sweep); a post marks it at
 * once.  The first work after a quiet spell probes every live rail of the
 * peer at once (bfo__peer_wake), so that a rail that died while nobody
 * looked is found within a probe timeout of the first send.  A probe
 * already out still times out, quiet or not. */

/* The peer has work now (bfo__peer_work, bfo__work_sweep). */
static inline void bfo__detect_work(bfo_engine *e, bfo_peer *p) { p->work_at = e->now ? e->now : 1; }

/* The peer's quiet spell ended: the rail's silence counts from now. */
static inline void bfo__detect_wake(bfo_engine *e, bfo_rail_link *rs) { rs->det.woke_at = e->now; }

/* 1 when the peer had no work for a heartbeat interval. */
static inline int bfo__detect_quiet(const bfo_engine *e, const bfo_peer *p)
{
    return e->now - p->work_at >= e->cfg.heartbeat_ns;
}

/* >>detect_rules - when a rail is silent, its probe late, a heartbeat due */

/* The peer's process last heard, on any of its rails; *answered: when the
 * latest probe it answered went out (a live rail's heartbeat, no probe out
 * now), 0 for none. */
static inline uint64_t bfo__detect_proc_rx(const bfo_engine *e, const bfo_peer *p, uint64_t *answered)
{
    uint64_t proc_rx = 0;
    *answered = 0;
    for (int k = 0; k < e->cfg.nrails; k++) {
        const bfo_rail_link *rs = &p->rail[k];
        if (rs->det.last_rx > proc_rx)
            proc_rx = rs->det.last_rx;
        if (bfo__live(rs->fsm.cs) && !rs->det.probe_out && rs->det.last_rx >= rs->det.probe_sent &&
            rs->det.probe_sent > *answered)
            *answered = rs->det.probe_sent;
    }
    return proc_rx;
}

/* The failure detector's rules for one rail of a peer (bfo_engine_progress;
 * proc_rx: the peer's process last heard, and answered: its latest probe
 * answered went out, bfo__detect_proc_rx; quiet: the
 * peer's, bfo_peer.quiet): the event the rail machine takes now
 * (SILENCE_DETECTED, PROBE_TIMED_OUT, HEARTBEAT_DUE), or -1.  PROBING: its
 * probe's timeout.  UP or DEMOTED (docs/engine-design.md, "The failure
 * detector"): silent for silence_ns, its heartbeat unanswered within the
 * probe timeout, or a heartbeat due; a busy peer (its host heard since the
 * probe, its process not) is none of these, and a quiet one (>>work) only
 * times out a probe already out. */
static inline int bfo__detect_due(bfo_engine *e, bfo_rail_link *rs, uint64_t proc_rx, uint64_t answered,
                                  int quiet_peer)
{
    const bfo_config *c = &e->cfg;
    if (rs->fsm.cs == BFO_RAIL_ST_PROBING)
        return e->now - rs->det.probe_sent >= bfo__probe_timeout(e, rs) ? BFO_EV_PROBE_TIMED_OUT : -1;
    /* the probe waits from when it went out, or from the last thing
     * heard, or a heartbeat past the end of a busy spell (the peer's
     * process was heard again, maybe on another rail first, and has
     * a backlog to read before it answers here) */
    uint64_t since = rs->det.last_rx > rs->det.probe_sent ? rs->det.last_rx : rs->det.probe_sent;
    uint64_t quiet = rs->det.last_rx;
    /* busy: the process silent everywhere since the probe (or
     * for half a probe timeout: what was heard once just after
     * it was sent before, and read late, by a process that
     * then fell silent), its host heard here.  A process that
     * talks elsewhere does not make this rail busy (below: a
     * retransmission's time at most; docs/engine-design.md, "The failure
     * detector") */
    const int host_heard = rs->det.probe_out && rs->det.host_rx > rs->det.probe_sent &&
                           e->now - rs->det.host_rx < c->host_timeout_ns; /* since the probe */
    uint64_t pt = bfo__probe_timeout(e, rs);
    const int proc_silent = proc_rx <= rs->det.probe_sent || e->now - proc_rx >= pt / 2;
    if (host_heard && proc_silent) {
        rs->det.busy_at = e->now;
        return -1;
    }
    if (rs->det.busy_at && rs->det.busy_at + c->heartbeat_ns > since)
        since = rs->det.busy_at + c->heartbeat_ns; /* may lie ahead of now */
    if (rs->det.busy_at > quiet)
        quiet = rs->det.busy_at;
    if (rs->det.woke_at > quiet) /* silence counts from the end of a quiet spell */
        quiet = rs->det.woke_at;
    /* the process talks elsewhere, and this rail's host has
     * answered since the probe went out: its path carries
     * packets both ways, and the frames wait for a lost
     * segment's retransmission (a shaper's queue overflowing:
     * the rail silent longer than a probe timeout while its
     * host was heard just before), so the probe waits at
     * least half host_timeout_ns, a retransmission timeout or
     * two; a path that passes the kernel's acknowledgements
     * and never the frames is mapped out then
     * (docs/engine-design.md, "The failure detector") */
    if (host_heard && pt < c->host_timeout_ns / 2)
        pt = c->host_timeout_ns / 2;
    /* an idle rail (nothing posted on it since its probe), the process
     * silent as above and answering no probe of ours sent since this
     * one, and this rail's host not heard since the probe went out: the
     * one witness the probe may have is the peer kernel's
     * acknowledgement of the probe itself, which comes when its
     * delayed-ACK timer fires (its process does not read), 40 ms and more
     * after the probe: the probe timeout's floor.  So the probe waits
     * BFO__HOST_ACK_DELAY_NS more for it: the acknowledgement makes the
     * peer busy (above); a process heard again, or answering another
     * rail's later probe, ends the wait (it reads, and not this rail: the
     * rail fails at once then); a rail dead with its peer's whole host is
     * found that much later, when no other rail would be read sooner
     * anyway.  A busy rail keeps its bound (data posted since the probe).
     * Why: with TCP idle beside shm (small messages keep to shm), the
     * first heartbeat on TCP of a peer that started computing raced that
     * ACK, and t14 mapped the rail out (docs/engine-design.md, "The
     * failure detector") */
    if (rs->det.probe_out && rs->det.host_rx <= rs->det.probe_sent && proc_silent &&
        answered < rs->det.probe_sent && rs->rate.last_tx <= rs->det.probe_sent)
        pt += BFO__HOST_ACK_DELAY_NS;
    if (!quiet_peer && e->now - quiet >= c->silence_ns)
        return BFO_EV_SILENCE_DETECTED;
    if (rs->det.probe_out && e->now >= since + pt) {
        if (rs->det.pt_shift < 3)
            rs->det.pt_shift++;
        rs->det.pt_good = 0;
        return BFO_EV_PROBE_TIMED_OUT;
    }
    if (!rs->det.probe_out && !quiet_peer && (e->now - rs->det.last_rx >= c->heartbeat_ns ||
                               e->now - rs->rate.last_tx >= c->heartbeat_ns))
        return BFO_EV_HEARTBEAT_DUE;
    return -1;
}

/* 1 when the rail is suspected, before it is found dead: its heartbeat
 * probe out and nothing heard on it for half its probe timeout (UP,
 * DEMOTED), or its first connection (CONNECTING, since rs->deadline) with
 * no word for silence_ns.  A peer with a rail suspected has its DORMANT
 * rails connect (one rail first, bfo__peer_need_rest: bfo_engine_progress),
 * so that they are on their way when the detector maps the rail out.  A
 * rail found busy since its probe went out (bfo__detect_due: its host
 * heard, the peer's process silent everywhere) is not suspected: the
 * process is alive and does not read, computing or, oversubscribed, not
 * scheduled, and would read another rail no sooner; connecting one then
 * only costs both sides a connection (64 ranks on 2 cores: a TCP rail to
 * almost every local peer beside shm). */
static inline int bfo__rail_suspect(const bfo_engine *e, const bfo_rail_link *rs)
{
    if (rs->fsm.cs == BFO_RAIL_ST_CONNECTING)
        return e->now - rs->deadline >= e->cfg.silence_ns;
    if (!rs->det.probe_out || rs->det.busy_at > rs->det.probe_sent)
        return 0;
    const uint64_t since = rs->det.last_rx > rs->det.probe_sent ? rs->det.last_rx : rs->det.probe_sent;
    return e->now - since >= bfo__probe_timeout(e, rs) / 2;
}

#ifdef __cplusplus
}
#endif
#endif /* BFO_ENGINE_DETECT_H */
