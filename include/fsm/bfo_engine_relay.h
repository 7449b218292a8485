// SPDX-License-Identifier: BSD-3-Clause
/* bfo_engine_relay.h - relay through a third rank.
 *
 * Part of bfo_engine.h, level 10 of its parts (docs/engine-design.md, "The
 * parts"): include bfo_engine.h, not this.  It includes bfo_engine_frame.h
 * (and so every part below); a call to a part above goes through a
 * prototype in bfo_engine_hooks.h (none from here).  It owns bfo_peer.relay
 * (bfo__peer_relay): only its functions write it.
 *
 * Sections (grep '>>name'): >>relay.
 */
#ifndef BFO_ENGINE_RELAY_H
#define BFO_ENGINE_RELAY_H

#include "bfo_engine_frame.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Defined below in this part, called before their definition. */
static BFO__COLD int bfo__relay_post(bfo_engine *e, bfo_op *op);

/* >>relay - through a third rank ------------------------------------------ */

/* Relay (bfo_config.relay; docs/engine-design.md, "Relay").  A peer B that
 * no rail reaches, while a rank C that this rank reaches reports a live
 * rail to B (its REACH), is RELAYED (the peer machine): B's frames go to C
 * inside a RELAY {dst B, src this rank, token}, C passes them on, and the
 * frame completes when C's RELAYACK says how C's post to B completed:
 * B's transport acknowledged it, or it may not have arrived.  One hop: C
 * passes on only what its sender sent itself, never relays a frame it
 * passes on, and a frame passed on waits for no rail.  Ordering and
 * duplicates are B's as for any frame (sequence numbers are end to end);
 * RDMA never goes through a relay; rail control (PROBE, PROBEACK, BROKEN)
 * and BYE are never relayed. */

/* Frames that may go through a relay: a request's, CREDIT, and the BYE of
 * a rank that leaves while it reaches the peer only so (bfo__relay_bye). */
static inline int bfo__relayable(int type)
{
    return type >= BFO_FRAG_MATCH && type <= BFO_FRAG_RECVERRNOTIFY ? 1
                                                                    : type == BFO_FRAG_CREDIT || type == BFO_FRAG_BYE;
}

/* bfo_engine_leave, for a peer RELAYED: its BYE through the relay (about
 * no rail; not sent again), so that it takes this rank's leaving as no
 * failure, as over a rail of its own. */
static BFO__COLD void bfo__relay_bye(bfo_engine *e, int peer)
{
    bfo_hdr_bye h;
    bfo_op *op = bfo__ctl_alloc(e, BFO_FRAG_BYE, peer);
    if (!op)
        return; /* the peer finds the route gone, then gives this rank up */
    h.type = BFO_FRAG_BYE;
    h.flags = 0;
    h.seq = e->peers[peer].send_seq;
    op->hdr_len = bfo_hdr_bye_encode(&h, op->hdr, sizeof op->hdr);
    if (!bfo__relay_post(e, op)) { /* no room at the relay, or no rail to it UP */
        bfo__op_free(e, op);
        return;
    }
    e->byes_out++;
    e->stats.byes_sent++;
}

/* A RELAYACK to `to`: how the post of its frame (token) to dst completed. */
static BFO__COLD void bfo__relay_ack(bfo_engine *e, int to, int dst, uint64_t token, int ok)
{
    bfo_hdr_relayack h;
    bfo_op *op = bfo__ctl_alloc(e, BFO_FRAG_RELAYACK, to);
    if (!op) /* over the control budget: its sender's frame ages out (bfo__relay_progress) */
        return;
    h.type = BFO_FRAG_RELAYACK;
    h.flags = 0;
    h.ok = (uint16_t)(ok != 0);
    h.dst = (uint32_t)dst;
    h.token = token;
    op->hdr_len = bfo_hdr_relayack_encode(&h, op->hdr, sizeof op->hdr);
    bfo__post(e, op);
}

/* op, for a RELAYED peer, to its relay: 1 when sent (or waiting for a
 * staging buffer, or failed: RDMA), 0 when it waits in the peer's pending
 * list (the relay's window is full, or the relay is not reachable now). */
static BFO__COLD int bfo__relay_post(bfo_engine *e, bfo_op *op)
{
    const int via = e->peers[op->peer].relay.via;
    const void *payload = op->payload;
    bfo_hdr_relay h;
    bfo_peer *v;
    bfo_op *leg;
    if (bfo__op_rdma(op->type)) { /* never through a relay: the request goes on by copy */
        bfo__op_fail_later(e, op);
        return 1;
    }
    if (!e->cfg.relay || via < 0 || op->hdr_len > BFO_MAX_HDR_SIZE || !bfo__relayable(op->type) ||
        op->about_rail >= 0)
        return 0; /* rail control waits for a rail of its own */
    v = &e->peers[via];
    if (v->fsm.cs != BFO_PEER_ST_REACHABLE || v->relay.out >= e->relay_window ||
        bfo__pick_rail(e, via, op->hdr_len + op->payload_len) < 0)
        return 0; /* until its RELAYACKs make room, a rail to it is UP (not only DEMOTED),
                   * or the next route (bfo__relay_progress tries again) */
    if (bfo__op_described(op) && !bfo_data_span_flat(&op->span, &payload)) {
        int k = bfo__stage_take(e, op);
        if (k < 0) {
            bfo__stage_wait(e, op);
            return 1;
        }
        payload = e->stage_mem + (size_t)k * e->stage_size;
        bfo_data_span_copy(&op->span, 0, (void *)(uintptr_t)payload, op->span.len);
    }
    leg = bfo__ctl_alloc(e, BFO_FRAG_RELAY, via);
    if (!leg)
        return 0;
    h.type = BFO_FRAG_RELAY;
    h.flags = 0;
    h.dst = (uint32_t)op->peer;
    h.src = (uint32_t)e->cfg.rank;
    h.token = bfo__token(op);
    leg->hdr_len = bfo_hdr_relay_encode(&h, leg->hdr, sizeof leg->hdr);
    memcpy(leg->hdr + leg->hdr_len, op->hdr, op->hdr_len);
    leg->hdr_len += op->hdr_len;
    leg->payload = payload;
    leg->payload_len = op->payload_len;
    leg->slot = UINT32_MAX; /* this rank's own (not a slot of a frame passed on) */
    op->rail = BFO__RELAY_RAIL;
    op->via = via;
    op->posted = 1;
    op->post_at = e->now;
    v->relay.out++;
    e->stats.ops_posted++;
    e->stats.relayed_frames++;
    e->stats.relayed_bytes += op->hdr_len + op->payload_len;
    bfo__post(e, leg);
    return 1;
}

/* A frame sent through a relay is back (its RELAYACK, its leg's failure,
 * its relay lost, or it aged out): room in the relay's window. */
static BFO__COLD void bfo__relay_unqueued(bfo_engine *e, const bfo_op *op, int ok)
{
    e->peers[op->via].relay.out--;
    if (!ok)
        e->stats.relay_failed++;
    if (e->peers[op->peer].pend_head >= 0)
        bfo__gate_note(e, op->peer);
}

/* A RELAY or REACH of this rank's completed.  A REACH that failed: the
 * report goes again (all of it, newer).  A RELAY of its own frame that
 * failed: the frame may not have arrived (it completes so); delivered, it
 * waits for the RELAYACK.  A frame it passed on: its sender is told. */
static BFO__COLD void bfo__relay_done(bfo_engine *e, bfo_op *op, int ok)
{
    bfo_hdr_relay h;
    uint32_t slot = op->slot;
    if (op->type == BFO_FRAG_REACH) {
        bfo__op_free(e, op);
        if (!ok)
            e->reach_dirty = 1;
        return;
    }
    if (bfo_hdr_relay_decode(&h, op->hdr, op->hdr_len) != BFO_OK) { /* never: encoded here */
        bfo__op_free(e, op);
        return;
    }
    bfo__op_free(e, op);
    if (slot == UINT32_MAX) {
        bfo_op *orig;
        if (!ok && (orig = bfo__op_of_token(e, h.token)) && orig->rail == BFO__RELAY_RAIL)
            bfo__op_done(e, orig, 0);
        return;
    }
    e->relay_used[slot] = 0;
    bfo__relay_ack(e, (int)h.src, (int)h.dst, h.token, ok);
}

/* take_relay: a RELAY from peer.  For this rank: its frame, taken as from
 * its sender (e->relay_rc: what that did).  For another: passed on, if
 * its sender is the peer it came from (one hop), its destination has a
 * live rail, and a slot is free; else refused (RELAYACK ok 0). */
static BFO__COLD void bfo__relay_take(bfo_engine *e, int peer, const bfo_frame *f)
{
    const bfo_hdr_relay *h = &f->h.relay;
    const uint32_t n = (uint32_t)e->cfg.nranks, me = (uint32_t)e->cfg.rank;
    bfo_op *op;
    int slot = -1;
    e->relay_rc = BFO_ERR_PROTOCOL;
    if (!f || f->type != BFO_FRAG_RELAY || !e->cfg.relay || !f->payload || f->payload_len < 2 ||
        !bfo__relayable(f->payload[0]) || h->src >= n || h->dst >= n || h->src == h->dst ||
        h->src == me)
        return;
    if (h->dst == me) {
        const int src = (int)h->src;
        int kind = BFO_EVK_RCVD, rc;
        bfo_frame g;
        if (src == peer) /* it would have come on a rail of its own */
            return;
        rc = bfo_frame_parse(&g, f->payload, f->payload_len);
        if (rc != BFO_OK) {
            e->stats.malformed_frames++;
            e->relay_rc = rc;
            return;
        }
        if (e->peers[src].unreachable) {
            e->relay_rc = bfo__frame_gone(e, src, 0, &g, NULL, 0);
            return;
        }
        rc = bfo__dispatch(e, src, 0, &g, &kind);
        if (rc != BFO_ERR_AGAIN)
            e->stats.relay_received++;
        if (rc == BFO_OK && kind == BFO_EVK_DUP_RCVD)
            e->stats.duplicates_dropped++;
        e->relay_rc = rc;
        return;
    }
    if (h->src != (uint32_t)peer || h->dst == (uint32_t)peer || f->payload_len > e->relay_size)
        return;
    e->relay_rc = BFO_OK;
    for (int k = 0; k < e->cfg.relay_slots && slot < 0; k++)
        if (!e->relay_used[k])
            slot = k;
    /* a destination reached, or one this rank never tried (connections on
     * first use: its REACH offered it): the post connects it
     * (bfo__post_no_rail: PEER_NEEDED), and the frame waits in its pending
     * list for its first connection, which failing fails it
     * (bfo__relay_unpend); a destination whose rails failed is refused */
    if (slot < 0 || !bfo__peer_may_reach(e, (int)h->dst) ||
        !(op = bfo__ctl_alloc(e, BFO_FRAG_RELAY, (int)h->dst))) {
        e->stats.relay_refused++;
        bfo__relay_ack(e, peer, (int)h->dst, h->token, 0);
        return;
    }
    e->relay_used[slot] = 1;
    memcpy(e->relay_mem + (size_t)slot * e->relay_size, f->payload, f->payload_len);
    op->hdr_len = bfo_hdr_relay_encode(h, op->hdr, sizeof op->hdr);
    op->payload = e->relay_mem + (size_t)slot * e->relay_size;
    op->payload_len = f->payload_len;
    op->slot = (uint32_t)slot;
    e->stats.relay_passed++;
    e->stats.relay_passed_bytes += f->payload_len;
    bfo__post(e, op);
}

/* The first connection to peer failed (bfo__rail_step: it is no longer one
 * this rank may reach): the frames of others waiting for it in its pending
 * list fail, and their senders hear so (bfo__relay_done: RELAYACK ok 0). */
static BFO__COLD void bfo__relay_unpend(bfo_engine *e, int peer)
{
    bfo_peer *p = &e->peers[peer];
    int i = p->pend_head, prev = -1;
    while (i >= 0) {
        bfo_op *op = bfo__op_at(e, i);
        const int next = op->next;
        if (op->type == BFO_FRAG_RELAY) {
            if (prev >= 0)
                bfo__op_at(e, prev)->next = next;
            else
                p->pend_head = next;
            if (p->pend_tail == i)
                p->pend_tail = prev;
            bfo__op_fail_later(e, op);
        } else {
            prev = i;
        }
        i = next;
    }
}

/* take_relayack: the relay's word on a frame of this rank's it passed on. */
static BFO__COLD void bfo__relayack_take(bfo_engine *e, int peer, const bfo_frame *f)
{
    bfo_op *op;
    if (!f || f->type != BFO_FRAG_RELAYACK || f->h.relayack.ok > 1) {
        e->stats.protocol_violations++;
        return;
    }
    op = bfo__op_of_token(e, f->h.relayack.token);
    if (!op || op->rail != BFO__RELAY_RAIL || op->via != peer || op->peer != (int)f->h.relayack.dst) {
        e->stats.stale_dropped++; /* completed already (its leg failed, it aged out) */
        return;
    }
    bfo__op_done(e, op, f->h.relayack.ok);
}

/* take_reach: the ranks the peer has a live rail to; an older report than
 * the one taken (rails reorder) is ignored. */
static BFO__COLD void bfo__reach_take(bfo_engine *e, int peer, const bfo_frame *f)
{
    if (!f || f->type != BFO_FRAG_REACH || !e->cfg.relay)
        return; /* relay off here: nothing to route */
    if (f->h.reach.count != (uint32_t)e->cfg.nranks || f->payload_len != (size_t)e->reach_bytes ||
        !f->payload) {
        e->stats.protocol_violations++;
        return;
    }
    if (f->h.reach.gen <= e->reach_gen[peer])
        return;
    e->reach_gen[peer] = f->h.reach.gen;
    memcpy(e->reach_of + (size_t)peer * (size_t)e->reach_bytes, f->payload, (size_t)e->reach_bytes);
}

/* The frames sent through `via` whose RELAYACK has not come: via is not
 * reachable any more, so they may not have arrived. */
static BFO__COLD void bfo__relay_fail_via(bfo_engine *e, int via)
{
    for (int i = 0; i < e->opp.live && e->peers[via].relay.out; i++) {
        bfo_op *op = bfo__op_at(e, i);
        if (op->posted && op->rail == BFO__RELAY_RAIL && op->via == via)
            bfo__op_done(e, op, 0);
    }
}

/* At init: no relay, nothing sent through the peer. */
static inline void bfo__relay_init(bfo_peer *p)
{
    p->relay.via = -1;
    p->relay.out = 0;
}

/* The peer machine took a step (bfo__peer_step): out of RELAYED, no rank
 * relays to it; reachable or not any more, this rank tells its peers
 * (relay on), and what it sent through the peer may not have arrived. */
static BFO__COLD void bfo__relay_on_peer_step(bfo_engine *e, int peer, int was_reachable)
{
    bfo_peer *p = &e->peers[peer];
    if (p->fsm.cs != BFO_PEER_ST_RELAYED)
        p->relay.via = -1;
    if (e->cfg.relay && was_reachable != (p->fsm.cs == BFO_PEER_ST_REACHABLE)) {
        e->reach_dirty = 1; /* who this rank reaches changed: it tells its peers */
        if (was_reachable && p->relay.out)
            bfo__relay_fail_via(e, peer);
    }
}

/* 1 while a rail of peer b makes its first connection, or is connected
 * and probed: no route is taken meanwhile (at the start, every peer is
 * DOWN until its first rail is admitted, a few round trips). */
static inline int bfo__rails_trying(const bfo_engine *e, int b)
{
    for (int k = 0; k < e->cfg.nrails; k++) {
        const int cs = e->peers[b].rail[k].fsm.cs;
        if (cs == BFO_RAIL_ST_CONNECTING || cs == BFO_RAIL_ST_PROBING)
            return 1;
    }
    return 0;
}

/* 1 when rank v may relay to peer b: reachable here, and it reports b. */
static inline int bfo__route_ok(const bfo_engine *e, int v, int b)
{
    return v >= 0 && v != e->cfg.rank && v != b && e->peers[v].fsm.cs == BFO_PEER_ST_REACHABLE &&
           ((e->reach_of[(size_t)v * (size_t)e->reach_bytes + (size_t)b / 8] >> (b % 8)) & 1);
}

/* Ranks asked at once, at most, to become relays (bfo__relay_ask). */
#define BFO__RELAY_ASK 2

/* No rank this rank reaches reports peer b (connections on first use: the
 * ranks that could relay may never have been needed): the next candidates
 * are needed (bfo__peer_need: PEER_NEEDED for each DORMANT rail), at most
 * BFO__RELAY_ASK at a time counting those still connecting or whose first
 * REACH has not come, in rank order.  Once one is REACHABLE its REACH
 * says whether it reaches b (or may: it never tried, and a frame passed
 * on to b makes it try); with none left to ask, the grace runs out. */
static BFO__COLD void bfo__relay_ask(bfo_engine *e, int b)
{
    int asked = 0;
    for (int v = 0; v < e->cfg.nranks; v++) {
        const bfo_peer *q = &e->peers[v];
        if (v == b || v == e->cfg.rank)
            continue;
        if ((q->fsm.cs == BFO_PEER_ST_DOWN && bfo__rails_trying(e, v)) ||
            (q->fsm.cs == BFO_PEER_ST_REACHABLE && !e->reach_gen[v]))
            asked++;
    }
    for (int v = 0; v < e->cfg.nranks && asked < BFO__RELAY_ASK; v++)
        if (v != b && bfo__peer_fresh(e, v)) {
            bfo__peer_need(e, v);
            asked++;
        }
}

/* Relay, at every progress: this rank's report to its peers when it
 * changed; each peer no rail reaches gets a route (ROUTE_FOUND) or loses
 * it (ROUTE_LOST); what waits for room at a relay is tried again; and a
 * frame whose RELAYACK has not come in silence_ns completes with an error
 * (the protocol sends it again; the receiver drops a duplicate). */
static BFO__COLD void bfo__relay_progress(bfo_engine *e)
{
    const bfo_config *c = &e->cfg;
    if (e->reach_dirty) {
        bfo_hdr_reach h;
        e->reach_dirty = 0;
        memset(e->reach_mine, 0, (size_t)e->reach_bytes);
        for (int i = 0; i < c->nranks; i++)
            if (bfo__peer_may_reach(e, i)) /* a live rail, or none tried yet */
                e->reach_mine[i / 8] |= (uint8_t)(1u << (i % 8));
        h.type = BFO_FRAG_REACH;
        h.flags = 0;
        h.count = (uint32_t)c->nranks;
        h.gen = ++e->reach_gen_mine;
        for (int i = 0; i < c->nranks; i++) {
            bfo_op *op;
            if (e->peers[i].fsm.cs != BFO_PEER_ST_REACHABLE)
                continue;
            if (!(op = bfo__ctl_alloc(e, BFO_FRAG_REACH, i))) {
                e->reach_dirty = 1; /* over the control budget: at the next progress */
                continue;
            }
            op->hdr_len = bfo_hdr_reach_encode(&h, op->hdr, sizeof op->hdr);
            op->payload = e->reach_mine;
            op->payload_len = (size_t)e->reach_bytes;
            e->stats.reach_sent++;
            bfo__post(e, op);
        }
    }
    for (int b = 0; b < c->nranks; b++) {
        bfo_peer *p = &e->peers[b];
        int v = -1;
        if (p->fsm.cs != BFO_PEER_ST_DOWN && p->fsm.cs != BFO_PEER_ST_RELAYED)
            continue;
        if (p->fsm.cs == BFO_PEER_ST_DOWN && (bfo__rails_trying(e, b) || bfo__peer_fresh(e, b)))
            continue; /* a first connection, or a probe out: the direct rails first;
                       * a peer never needed needs no route */
        if (bfo__route_ok(e, p->relay.via, b))
            v = p->relay.via;
        for (int k = 0; k < c->nranks && v < 0; k++)
            if (bfo__route_ok(e, k, b))
                v = k;
        if (v < 0) /* as the search above: a scan of the ranks per peer with no route */
            bfo__relay_ask(e, b);
        if (v >= 0 && v != p->relay.via) {
            p->relay.via = v;
            bfo__peer_step(e, b, BFO_PEER_EV_ROUTE_FOUND); /* take_route, or another relay */
            if (p->pend_head >= 0)
                bfo__flush_pending(e, b);
        } else if (v < 0 && p->fsm.cs == BFO_PEER_ST_RELAYED) {
            bfo__peer_step(e, b, BFO_PEER_EV_ROUTE_LOST); /* report_route_lost */
        } else if (v >= 0 && p->pend_head >= 0 && e->peers[v].relay.out < e->relay_window) {
            bfo__flush_pending(e, b);
        }
    }
    if (e->now - e->relay_scan_at >= c->heartbeat_ns) {
        int out = 0;
        e->relay_scan_at = e->now;
        for (int i = 0; i < c->nranks; i++)
            out += e->peers[i].relay.out;
        for (int i = 0; i < e->opp.live && out; i++) {
            bfo_op *op = bfo__op_at(e, i);
            if (op->posted && op->rail == BFO__RELAY_RAIL && e->now - op->post_at >= c->silence_ns) {
                out--;
                bfo__op_done(e, op, 0);
            }
        }
    }
}

#ifdef __cplusplus
}
#endif
#endif /* BFO_ENGINE_RELAY_H */
