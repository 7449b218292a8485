// SPDX-License-Identifier: BSD-3-Clause
/* bfo_engine_frame.h - frame arrival: the sequence window, one function per
 * fragment type, the entry points for frames.
 *
 * Part of bfo_engine.h, level 9 of its parts (docs/engine-design.md, "The
 * parts"): include bfo_engine.h, not this.  It includes
 * bfo_engine_machines.h (and so every part below); a call to a part above
 * goes through a prototype in bfo_engine_hooks.h (none from here).
 *
 * Sections (grep '>>name'): >>in_order, >>rcvd, >>dispatch, >>frame_entry.
 */
#ifndef BFO_ENGINE_FRAME_H
#define BFO_ENGINE_FRAME_H

#include "bfo_engine_machines.h"

#ifdef __cplusplus
extern "C" {
#endif

/* >>in_order - MATCH, first RNDV: sequence window, in order --------------- */

/* 1 when the message's source may come from peer (bfo_config.source_ok).
 * A relayed frame is taken as from its origin (bfo__relay_take dispatches
 * it with the RELAY's src as peer): its source must be the origin, not the
 * relay. */
static BFO__HOT int bfo__source_ok(const bfo_engine *e, int peer, const bfo_frame *f)
{
    const uint32_t src = bfo__frame_src(f);
    return e->cfg.source_ok ? e->cfg.source_ok(e->cfg.source_ctx, bfo__frame_ctx(f), src, peer)
                            : src == (uint32_t)peer;
}

/* The message is next in its (context, peer) order: match it or queue it.
 * `held` is the buffer that already holds it (it waited in the out-of-order
 * list): it moves to the unexpected queue as it is, so that delivery never
 * needs a second buffer and cannot fail.  A frame just arrived (held < 0)
 * needs a free buffer when no receive matches: BFO_ERR_AGAIN without one. */
static BFO__HOT int bfo__deliver_in_order(bfo_engine *e, int peer, const bfo_frame *f, int held)
{
    if (f->flags & BFO_FLAG_CANCEL) { /* a cancelled send: its sequence, nothing to match */
        if (held >= 0)
            bfo__uxm_put(e, held);
        return BFO_OK;
    }
    if (BFO__UNLIKELY(!bfo__source_ok(e, peer, f))) { /* another rank's source: dropped, the
                                                         * sequence moves on (nothing waits) */
        e->stats.protocol_violations++;
        bfo__credit_return(e, peer, f);
        if (held >= 0)
            bfo__uxm_put(e, held);
        return BFO_OK;
    }
    bfo_request *r = e->posted_count ? bfo__posted_take(e, peer, f) : NULL;
    if (r) {
        bfo__recv_take(e, r, peer, f);
        bfo__credit_return(e, peer, f);
        if (held >= 0)
            bfo__uxm_put(e, held);
        return BFO_OK;
    }
    int i = held;
    if (i < 0) {
        i = bfo__uxm_take(e);
        if (i < 0 || !bfo__uxm_fill(e, i, peer, f))
            return BFO_ERR_AGAIN;
    }
    bfo__ux_link(e, i);
    return BFO_OK;
}

/* Messages waiting in the peers' out-of-order lists (bfo_net_dump, tests). */
static inline int bfo__ooo_count(const bfo_engine *e)
{
    int n = 0;
    for (int k = 0; k < e->cfg.nranks; k++)
        for (int i = e->peers[k].ooo_head; i >= 0; i = bfo__ux_at(e, i)->next)
            n++;
    return n;
}

/* MATCH or first RNDV: the sequence window, then in-order delivery.  The
 * peer's out-of-order list is sorted by sequence: a frame ahead joins it at
 * its place (at the tail, in O(1), whenever it is the newest: always with
 * two rails, each of them in order), and the messages it held go out from
 * its head, in O(1) each.  (One list of every peer, newest first, scanned
 * whole for each frame and each message let out: 100,000 messages ahead
 * on one of two rails took 12 s in one progress call, and the peer's
 * probes waited behind them.) */
static BFO__HOT int bfo__on_message(bfo_engine *e, int peer, const bfo_frame *f)
{
    bfo_peer *p = &e->peers[peer];
    const uint64_t seq = bfo__frame_seq(f);
    /* a peer's eager limit may be larger than ours (bfo_net's default follows
     * the rails of each rank): we take what our transports carry, the larger
     * of eager_limit and frag_size; its credits bound what it holds here */
    if (f->payload_len > (f->type == BFO_FRAG_RGET ? 4 * BFO_MAX_RAILS : e->msg_max) || seq == 0)
        return BFO_ERR_PROTOCOL;
    if (seq < p->recv_seq) {
        e->stats.duplicates_dropped++;
        return BFO_OK;
    }
    if (seq > p->recv_seq) { /* ahead: wait in the out-of-order list (once) */
        int prev = -1, at = -1;
        if (p->ooo_tail >= 0 && bfo__frame_seq(&bfo__ux_at(e, p->ooo_tail)->f) < seq)
            prev = p->ooo_tail; /* the newest: at the tail */
        else
            for (at = p->ooo_head; at >= 0; prev = at, at = bfo__ux_at(e, at)->next) {
                const uint64_t s = bfo__frame_seq(&bfo__ux_at(e, at)->f);
                if (s == seq) {
                    e->stats.duplicates_dropped++;
                    return BFO_OK;
                }
                if (s > seq)
                    break;
            }
        int i = bfo__uxm_take(e);
        if (i < 0 || !bfo__uxm_fill(e, i, peer, f))
            return BFO_ERR_AGAIN;
        bfo__ux_at(e, i)->next = at;
        if (prev >= 0)
            bfo__ux_at(e, prev)->next = i;
        else
            p->ooo_head = i;
        if (at < 0)
            p->ooo_tail = i;
        return BFO_OK;
    }
    int rc = bfo__deliver_in_order(e, peer, f, -1);
    if (rc != BFO_OK)
        return rc;
    p->recv_seq++;
    while (p->ooo_head >= 0) { /* the out-of-order list may go on */
        const int i = p->ooo_head;
        bfo_uxm *u = bfo__ux_at(e, i);
        if (bfo__frame_seq(&u->f) != p->recv_seq)
            break;
        p->ooo_head = u->next; /* out of the list first: the buffer moves on as it is */
        if (p->ooo_head < 0)
            p->ooo_tail = -1;
        bfo__deliver_in_order(e, peer, &u->f, i); /* cannot fail with its own buffer */
        p->recv_seq++;
    }
    return BFO_OK;
}

/* >>rcvd - one function per fragment type --------------------------------- */

/* The live request of kind `want` that a handle names, checked against its
 * restart sequence.  With newer_is_new (NOTIFY, restarted RNDV) a newer rseq
 * is a new message and an equal one a duplicate; otherwise (replies and
 * data) only an equal rseq is current.  Sets *evk to BFO_EVK_RCVD or
 * BFO_EVK_DUP_RCVD; returns NULL when the message is stale. */
static inline bfo_request *bfo__lookup(bfo_engine *e, int peer, bfo_handle h, int want,
                                       uint16_t rseq, int newer_is_new, int *evk)
{
    bfo_request *r = bfo__handle_named(e, h);
    int d;
    if (!r || r->kind != want || r->peer != peer)
        return NULL;
    d = bfo_rseq_cmp(rseq, r->rseq);
    if (newer_is_new ? d < 0 : d != 0)
        return NULL;
    *evk = d > 0 || !newer_is_new ? BFO_EVK_RCVD : BFO_EVK_DUP_RCVD;
    return r;
}

/* A restarted RNDV or RGET describes the message its receive took first:
 * the same source, context, tag, sequence, length and sender's request (a
 * restart sends the same message again; only the protocol may change). */
static inline int bfo__same_message(const bfo_request *r, int peer, const bfo_frame *f)
{
    const int rget = f->type == BFO_FRAG_RGET;
    return peer == r->peer && bfo__frame_src(f) == (uint32_t)r->source &&
           bfo__frame_ctx(f) == r->ctx && bfo__frame_tag(f) == r->tag &&
           bfo__frame_seq(f) == r->seq &&
           (rget ? f->h.rget.msg_len : f->h.rndv.msg_len) == (uint64_t)r->length &&
           bfo_handle_eq(rget ? f->h.rget.sreq : f->h.rndv.sreq, r->remote);
}

/* Answers a NOTIFY for a request that is gone; BFO_ERR_AGAIN when the
 * control budget is spent (the transport offers the NOTIFY again later). */
static inline int bfo__nack_from(bfo_engine *e, int peer, const bfo_frame *f)
{
    bfo_hdr_restart h = f->h.restart;
    bfo_op *op = bfo__ctl_alloc(e, BFO_FRAG_RESTARTNACK, peer);
    if (!op)
        return BFO_ERR_AGAIN;
    h.type = BFO_FRAG_RESTARTNACK; /* the rest echoes the NOTIFY */
    op->hdr_len = bfo_hdr_restart_encode(&h, op->hdr, sizeof op->hdr);
    bfo__post(e, op);
    return BFO_ERR_STALE;
}

/* One function per fragment type: bfo__rcvd_<TYPE>(e, peer, rail, f, kind),
 * a frame of that type arrived from peer on rail and parsed.  It finds what
 * the frame is for, drops what is stale (BFO_ERR_STALE), refuses what breaks
 * the protocol (BFO_ERR_PROTOCOL), tells a duplicate apart (*kind =
 * BFO_EVK_DUP_RCVD) and feeds the machine; BFO_OK when taken.
 * bfo_engine_frame calls them through BFO_FRAGMENTS, so a fragment type of
 * spec/alphabet.tab without its function here does not build ("implicit
 * declaration of function 'bfo__rcvd_NEWTYPE'"). */

static BFO__HOT int bfo__rcvd_MATCH(bfo_engine *e, int peer, int rail, const bfo_frame *f,
                                    int *kind)
{
    (void)rail;
    (void)kind;
    return bfo__on_message(e, peer, f);
}

/* RNDV or RGET: a first one is a message to match; a restarted one names
 * its receive and describes the message that receive took. */
static inline int bfo__rcvd_rzv(bfo_engine *e, int peer, const bfo_frame *f, int *kind)
{
    const int rget = f->type == BFO_FRAG_RGET;
    const uint64_t msg_len = rget ? f->h.rget.msg_len : f->h.rndv.msg_len;
    bfo_request *r;
    if (rget ? !msg_len : msg_len < f->payload_len)
        return BFO_ERR_PROTOCOL;
    if (msg_len > (uint64_t)BFO__LEN_MAX) /* would be truncated to a size_t (32-bit builds) */
        return BFO_ERR_PROTOCOL;
    if (!(f->flags & BFO_FLAG_RESTART))
        return bfo__on_message(e, peer, f);
    r = bfo__lookup(e, peer, rget ? f->h.rget.dreq : f->h.rndv.dreq, BFO_REQ_RECV,
                    rget ? f->h.rget.rseq : f->h.rndv.rseq, 1, kind);
    if (!r)
        return BFO_ERR_STALE;
    if (!bfo__same_message(r, peer, f))
        return BFO_ERR_PROTOCOL;
    bfo__feed_frame(e, r, bfo_frag_event(f->type, *kind), f, peer);
    bfo__recv_chosen(e, r);
    return BFO_OK;
}

static inline int bfo__rcvd_RNDV(bfo_engine *e, int peer, int rail, const bfo_frame *f, int *kind)
{
    (void)rail;
    return bfo__rcvd_rzv(e, peer, f, kind);
}

static inline int bfo__rcvd_RGET(bfo_engine *e, int peer, int rail, const bfo_frame *f, int *kind)
{
    (void)rail;
    return bfo__rcvd_rzv(e, peer, f, kind);
}

/* The receiver asks: write this range there. */
static inline int bfo__rcvd_PUT(bfo_engine *e, int peer, int rail, const bfo_frame *f, int *kind)
{
    bfo_request *r = bfo__lookup(e, peer, f->h.put.sreq, BFO_REQ_SEND, f->h.put.rseq, 0, kind);
    (void)rail;
    if (!r)
        return BFO_ERR_STALE;
    if (!r->reg || !f->h.put.length || f->h.put.offset > r->cap ||
        f->h.put.length > r->cap - f->h.put.offset)
        return BFO_ERR_PROTOCOL;
    bfo__req_take_keys(r, f->payload, f->payload_len); /* the receiver's, per rail */
    if (r->cs == BFO_SEND_ST_RNDV_SENT) { /* the first PUT: the RNDV arrived */
        r->remote = f->h.put.dreq;
        r->done_bytes = r->first;
        r->counting = 1;
    }
    bfo__feed_frame(e, r, BFO_EV_PUT_RCVD, f, peer);
    return BFO_OK;
}

/* A sender's FIN after a write (PUT: one slot is written), or a receiver's
 * after its reads (GET: the whole message). */
static inline int bfo__rcvd_FIN(bfo_engine *e, int peer, int rail, const bfo_frame *f, int *kind)
{
    bfo_request *r = bfo__handle_named(e, f->h.fin.dreq);
    (void)rail;
    if (!r || r->peer != peer || bfo_rseq_cmp(f->h.fin.rseq, r->rseq) != 0)
        return BFO_ERR_STALE;
    if (r->kind == BFO_REQ_SEND) { /* GET: the receiver read it all */
        if (f->h.fin.offset != 0 || f->h.fin.length != r->cap)
            return BFO_ERR_PROTOCOL;
        *kind = r->counting && r->done_bytes >= r->cap ? BFO_EVK_DUP_RCVD : BFO_EVK_RCVD;
    } else { /* PUT: one slot is written */
        uint64_t off, len;
        uint32_t s = f->h.fin.slot;
        if (s >= r->slot_next)
            return BFO_ERR_PROTOCOL;
        bfo__slot_range(e, r, s, &off, &len);
        if (f->h.fin.offset != off || f->h.fin.length != len)
            return BFO_ERR_PROTOCOL;
        *kind = s < r->slot_base || ((r->slot_mask >> (s - r->slot_base)) & 1) ? BFO_EVK_DUP_RCVD
                                                                              : BFO_EVK_RCVD;
    }
    bfo__feed_frame(e, r, bfo_frag_event(f->type, *kind), f, peer);
    return BFO_OK;
}

static inline int bfo__rcvd_ACK(bfo_engine *e, int peer, int rail, const bfo_frame *f, int *kind)
{
    bfo_request *r = bfo__lookup(e, peer, f->h.ack.sreq, BFO_REQ_SEND, f->h.ack.rseq, 0, kind);
    (void)rail;
    if (!r)
        return BFO_ERR_STALE;
    if (f->h.ack.offset > r->cap)
        return BFO_ERR_PROTOCOL;
    if (r->cs == BFO_SEND_ST_RNDV_SENT || r->cs == BFO_SEND_ST_RGET_SENT) {
        r->remote = f->h.ack.dreq;
        r->next_off = (size_t)f->h.ack.offset;
        r->done_bytes = (size_t)f->h.ack.offset;
        r->counting = 1;
    }
    bfo__feed_frame(e, r, BFO_EV_ACK_RCVD, f, peer);
    return BFO_OK;
}

static inline int bfo__rcvd_FRAG(bfo_engine *e, int peer, int rail, const bfo_frame *f, int *kind)
{
    bfo_request *r = bfo__lookup(e, peer, f->h.frag.dreq, BFO_REQ_RECV, f->h.frag.rseq, 0, kind);
    (void)rail;
    if (!r)
        return BFO_ERR_STALE;
    if (f->h.frag.offset + f->payload_len > r->length)
        return BFO_ERR_PROTOCOL;
    if (r->cs == BFO_RECV_ST_ACK_SENT || r->cs == BFO_RECV_ST_RECVERR_SENT) { /* it takes FRAGs */
        const uint64_t off = f->h.frag.offset, end = off + f->payload_len;
        const int placed = r->buf && f->payload == (const uint8_t *)r->buf + off; /* bfo_engine_place */
        int at;
        if (!bfo__frag_fits(r, off, end, placed ? 0 : e->cfg.nrails, &at)) {
            if (!placed && bfo__frag_where(r, off, end, &at) != BFO__FRAG_OVERLAP)
                return BFO_ERR_AGAIN; /* no run free: after the lowest missing FRAG */
            e->stats.protocol_violations++; /* bytes taken already: never counted twice */
            return BFO_OK;
        }
        bfo__frag_take(r, off, end, at);
    }
    bfo__feed_frame(e, r, BFO_EV_FRAG_RCVD, f, peer);
    return BFO_OK;
}

static inline int bfo__rcvd_NOTIFY(bfo_engine *e, int peer, int rail, const bfo_frame *f, int *kind)
{
    bfo_request *r = bfo__handle_named(e, f->h.restart.dreq);
    (void)rail;
    if (!r || r->kind != BFO_REQ_RECV) /* complete and gone: NACK */
        return bfo__nack_from(e, peer, f);
    r = bfo__lookup(e, peer, f->h.restart.dreq, BFO_REQ_RECV, f->h.restart.rseq, 1, kind);
    if (!r)
        return BFO_ERR_STALE;
    bfo__feed_frame(e, r, bfo_frag_event(f->type, *kind), f, peer);
    return BFO_OK;
}

/* RESTARTACK, RESTARTNACK, RECVERRNOTIFY: the receiver answers the sender. */
static inline int bfo__rcvd_reply(bfo_engine *e, int peer, const bfo_frame *f, int *kind)
{
    bfo_request *r = bfo__handle_named(e, f->h.restart.sreq);
    if (!r || r->kind != BFO_REQ_SEND || r->peer != peer)
        return BFO_ERR_STALE;
    if (f->type == BFO_FRAG_RECVERRNOTIFY) { /* the receiver's rseq: not older */
        if (bfo_rseq_cmp(f->h.restart.rseq, r->rseq) < 0)
            return BFO_ERR_STALE;
    } else if (!bfo__lookup(e, peer, f->h.restart.sreq, BFO_REQ_SEND, f->h.restart.rseq, 0, kind)) {
        return BFO_ERR_STALE;
    }
    if (f->type == BFO_FRAG_RECVERRNOTIFY && bfo_handle_is_null(r->remote))
        r->remote = f->h.restart.dreq;
    bfo__feed_frame(e, r, bfo_frag_event(f->type, BFO_EVK_RCVD), f, peer);
    return BFO_OK;
}

static inline int bfo__rcvd_RESTARTACK(bfo_engine *e, int peer, int rail, const bfo_frame *f,
                                       int *kind)
{
    (void)rail;
    return bfo__rcvd_reply(e, peer, f, kind);
}

static inline int bfo__rcvd_RESTARTNACK(bfo_engine *e, int peer, int rail, const bfo_frame *f,
                                        int *kind)
{
    (void)rail;
    return bfo__rcvd_reply(e, peer, f, kind);
}

static inline int bfo__rcvd_RECVERRNOTIFY(bfo_engine *e, int peer, int rail, const bfo_frame *f,
                                          int *kind)
{
    (void)rail;
    return bfo__rcvd_reply(e, peer, f, kind);
}

/* BROKEN, PROBE, PROBEACK: to the rail machine, of the rail the BROKEN
 * names or of the rail the probe came on. */
static inline int bfo__rcvd_railctl(bfo_engine *e, int peer, int rail, const bfo_frame *f)
{
    int about = f->h.railctl.rail;
    if (about >= e->cfg.nrails)
        return BFO_ERR_PROTOCOL;
    if (f->type == BFO_FRAG_BROKEN &&
        (int32_t)(f->h.railctl.epoch - e->peers[peer].rail[about].epoch) < 0)
        return BFO_ERR_STALE; /* about an earlier life of the rail */
    bfo__rail_step(e, peer, f->type == BFO_FRAG_BROKEN ? about : rail,
                   bfo_frag_event(f->type, BFO_EVK_RCVD), f);
    if (f->type == BFO_FRAG_PROBEACK && f->h.railctl.nonce == e->peers[peer].rail[rail].det.probe_nonce)
        bfo__probe_answered(e, &e->peers[peer].rail[rail]);
    else if (f->type == BFO_FRAG_PROBEACK && e->peers[peer].rail[rail].rate.meas_sent &&
             (f->h.railctl.nonce | 1) == e->peers[peer].rail[rail].rate.meas_nonce)
        bfo__measured(e, peer, rail, f->h.railctl.nonce);
    return BFO_OK;
}

static inline int bfo__rcvd_BROKEN(bfo_engine *e, int peer, int rail, const bfo_frame *f, int *kind)
{
    (void)kind;
    return bfo__rcvd_railctl(e, peer, rail, f);
}

static inline int bfo__rcvd_PROBE(bfo_engine *e, int peer, int rail, const bfo_frame *f, int *kind)
{
    (void)kind;
    return bfo__rcvd_railctl(e, peer, rail, f);
}

/* RELAY, RELAYACK, REACH: to the rail machine of the rail they came on
 * (take_relay, take_relayack, take_reach: bfo__relay_take ...).  A frame
 * passed on to this rank returns what its own dispatch did (BFO_ERR_AGAIN:
 * the transport offers the RELAY again later, as any frame). */
static inline int bfo__rcvd_RELAY(bfo_engine *e, int peer, int rail, const bfo_frame *f, int *kind)
{
    (void)kind;
    e->relay_rc = BFO_ERR_PROTOCOL;
    bfo__rail_step(e, peer, rail, BFO_EV_RELAY_RCVD, f);
    return e->relay_rc;
}
static inline int bfo__rcvd_RELAYACK(bfo_engine *e, int peer, int rail, const bfo_frame *f, int *kind)
{
    (void)kind;
    bfo__rail_step(e, peer, rail, BFO_EV_RELAYACK_RCVD, f);
    return BFO_OK;
}
static inline int bfo__rcvd_REACH(bfo_engine *e, int peer, int rail, const bfo_frame *f, int *kind)
{
    (void)kind;
    bfo__rail_step(e, peer, rail, BFO_EV_REACH_RCVD, f);
    return BFO_OK;
}

/* CREDIT: to the rail machine of the rail it came on (take_credit). */
static inline int bfo__rcvd_CREDIT(bfo_engine *e, int peer, int rail, const bfo_frame *f, int *kind)
{
    (void)kind;
    bfo__rail_step(e, peer, rail, BFO_EV_CREDIT_RCVD, f);
    return BFO_OK;
}

static inline int bfo__rcvd_PROBEACK(bfo_engine *e, int peer, int rail, const bfo_frame *f,
                                     int *kind)
{
    (void)kind;
    return bfo__rcvd_railctl(e, peer, rail, f);
}

/* BYE: the peer leaves.  About the peer, not the rail it came on: its first
 * BYE takes every rail of it to LEFT (BYE_RCVD: part), makes it gone for
 * the hot paths (BFO__PARTED) and fails what it no longer answers (sends to
 * it, receives it matched: their operations in flight complete first);
 * receives naming it wait for what it sent before the BYE (left_seq) and
 * fail once that came (the peer machine's OWED_RCVD: close_out), or
 * unreachable_grace later (GRACE_EXPIRED, in
 * bfo_engine_progress).  The BYE of its other rails is a duplicate. */
static BFO__COLD int bfo__rcvd_BYE(bfo_engine *e, int peer, int rail, const bfo_frame *f, int *kind)
{
    bfo_peer *p = &e->peers[peer];
    (void)rail;
    if (peer == e->cfg.rank) /* never sent to itself */
        return BFO_ERR_PROTOCOL;
    if (p->left) {
        *kind = BFO_EVK_DUP_RCVD;
        return BFO_OK;
    }
    p->left_seq = f->h.bye.seq;
    p->left_at = e->now ? e->now : 1;
    bfo__peer_step(e, peer, BFO_PEER_EV_BYE_RCVD); /* part */
    if (p->recv_seq > p->left_seq)
        bfo__peer_step(e, peer, BFO_PEER_EV_OWED_RCVD); /* close_out */
    return BFO_OK;
}

/* >>dispatch - a frame to its function; frames to itself ------------------ */

/* A parsed frame to the bfo__rcvd_<TYPE> of its type. */
static inline int bfo__dispatch(bfo_engine *e, int peer, int rail, const bfo_frame *f, int *kind)
{
    switch (f->type) { /* one case per fragment type, each calling its bfo__rcvd_<TYPE> */
#define BFO__RCVD(name, code, layout, payload, dedup) \
    case BFO_FRAG_##name: return bfo__rcvd_##name(e, peer, rail, f, kind);
        BFO_FRAGMENTS(BFO__RCVD)
#undef BFO__RCVD
    default: /* bfo_frame_parse takes no other type */
        return BFO_ERR_PROTOCOL;
    }
}

/* Messages of this rank to itself: each is taken as a frame from peer
 * `rank` (matching, ordering, rendezvous as for any peer; no rail), then
 * completes as delivered.  One that finds no buffer (BFO_ERR_AGAIN: the
 * unexpected store is full) waits, first in line, for the next entry
 * point. */
static inline void bfo__run_self(bfo_engine *e)
{
    e->self_busy = 1;
    while (e->self_head >= 0) {
        bfo_op *op = bfo__op_at(e, e->self_head);
        bfo_frame f;
        int kind = BFO_EVK_RCVD, rc = bfo_frame_decode(&f, op->hdr, op->hdr_len);
        if (rc == BFO_OK) {
            f.payload = (const uint8_t *)op->payload;
            f.payload_len = op->payload_len;
            rc = bfo_frame_validate(&f);
        }
        if (rc == BFO_OK)
            rc = bfo__dispatch(e, e->cfg.rank, 0, &f, &kind);
        if (rc == BFO_ERR_AGAIN)
            break;
        e->self_head = op->next;
        if (e->self_head < 0)
            e->self_tail = -1;
        bfo__deferred_note(e);
        bfo__op_done(e, op, 1);
        if (e->fail_head >= 0)
            bfo__run_failed_list(e);
    }
    e->self_busy = 0;
}

/* 1 for a message that takes a sequence number: MATCH, a first RNDV or RGET. */
static inline int bfo__frame_is_message(const bfo_frame *f)
{
    return f->type == BFO_FRAG_MATCH ||
           ((f->type == BFO_FRAG_RNDV || f->type == BFO_FRAG_RGET) && !(f->flags & BFO_FLAG_RESTART));
}

/* After a frame was dispatched: the failed list run, the drop counted. */
static inline int bfo__frame_done(bfo_engine *e, int rc, int kind)
{
    bfo__run_failed(e);
    if (rc == BFO_OK && kind == BFO_EVK_DUP_RCVD)
        e->stats.duplicates_dropped++;
    if (rc == BFO_ERR_STALE)
        e->stats.stale_dropped++;
    else if (rc == BFO_ERR_PROTOCOL)
        e->stats.protocol_violations++;
    return rc;
}

/* bfo_engine_frame for a peer that is gone.  Given up: refused (see
 * bfo__peer_unreachable).  It said BYE, or this side left (BFO__PARTED):  Rail control, CREDIT and BYE go to the rail machine
 * (LEFT: a PROBE is answered).  Once this side left, nothing else is taken
 * (stale).  From a peer that left: a message beyond its BYE's sequence is
 * a protocol violation, one up to it was sent before the BYE (rails
 * reorder) and is taken, unless the peer was closed out meanwhile (stale);
 * anything else is taken as from any peer (its request may be gone:
 * stale). */
static BFO__COLD int bfo__frame_gone(bfo_engine *e, int peer, int rail, bfo_frame *fp, const uint8_t *buf,
                                     size_t len)
{
    bfo_peer *p = &e->peers[peer];
    bfo_frame f;
    int kind = BFO_EVK_RCVD, rc;
    if (p->unreachable == BFO__GIVEN_UP) { /* for good: see bfo__peer_unreachable */
        e->stats.unreachable_frames++;
        return BFO_ERR_PEER_UNREACHABLE;
    }
    if (fp) /* parsed already (bfo_engine_frame_placed) */
        f = *fp;
    else if ((rc = bfo_frame_parse(&f, buf, len)) != BFO_OK) {
        e->stats.malformed_frames++;
        return rc;
    }
    bfo__detect_on_heard(e, &p->rail[rail]);
    if (f.type == BFO_FRAG_PROBE || f.type == BFO_FRAG_PROBEACK || f.type == BFO_FRAG_BROKEN ||
        f.type == BFO_FRAG_CREDIT || f.type == BFO_FRAG_BYE)
        rc = BFO_OK;
    else if (e->left)
        rc = BFO_ERR_STALE;
    else if (bfo__frame_is_message(&f))
        rc = bfo__frame_seq(&f) > p->left_seq                                        ? BFO_ERR_PROTOCOL
             : p->left == BFO__LEFT_DONE && bfo__frame_seq(&f) >= p->recv_seq ? BFO_ERR_STALE
                                                                              : BFO_OK;
    if (rc == BFO_OK)
        rc = bfo__dispatch(e, peer, rail, &f, &kind);
    if (p->left == BFO__LEFT_OWED && p->recv_seq > p->left_seq && !e->left)
        bfo__peer_step(e, peer, BFO_PEER_EV_OWED_RCVD); /* the last of what it sent before its BYE came */
    return bfo__frame_done(e, rc, kind);
}

/* >>frame_entry - what the backend hands in: frames, and frames placed ---- */

/* bfo_engine_frame: see THE API in bfo_engine.h. */
static inline int bfo_engine_frame(bfo_engine *e, int peer, int rail, const uint8_t *buf,
                                   size_t len, uint64_t now)
{
    bfo_frame f;
    int rc = BFO_OK, kind = BFO_EVK_RCVD;
    if (!bfo__in_range(peer, e->cfg.nranks) || peer == e->cfg.rank ||
        !bfo__in_range(rail, e->cfg.nrails))
        return BFO_ERR_INVALID;
    if (now > e->now)
        e->now = now;
    if (e->peers[peer].unreachable) /* given up, or it said BYE, or this side left */
        return bfo__frame_gone(e, peer, rail, NULL, buf, len);
    bfo__rate_on_in(&e->peers[peer].rail[rail], len);
    if (BFO__LIKELY(bfo__parse_plain_match(&f, buf, len))) { /* the eager message */
        bfo__detect_on_heard(e, &e->peers[peer].rail[rail]);
        return bfo__frame_done(e, bfo__rcvd_MATCH(e, peer, rail, &f, &kind), kind);
    }
    rc = bfo_frame_parse(&f, buf, len);
    if (rc != BFO_OK) {
        e->stats.malformed_frames++;
        return rc;
    }
    bfo__detect_on_heard(e, &e->peers[peer].rail[rail]);
    rc = bfo__dispatch(e, peer, rail, &f, &kind);
    return bfo__frame_done(e, rc, kind);
}

/* The receive a placement names, while it takes FRAGs into a contiguous
 * buffer (bfo_engine_place), else NULL. */
static inline bfo_request *bfo__placed_req(const bfo_engine *e, bfo_handle h, uint16_t rseq)
{
    bfo_request *r = bfo__handle_named(e, h);
    if (!r || r->kind != BFO_REQ_RECV || r->complete || !r->buf || bfo_rseq_cmp(rseq, r->rseq) != 0 ||
        (r->cs != BFO_RECV_ST_ACK_SENT && r->cs != BFO_RECV_ST_RECVERR_SENT))
        return NULL;
    return r;
}

/* bfo_engine_place: see THE API in bfo_engine.h. */
static inline uint8_t *bfo_engine_place(const bfo_engine *e, int peer, const uint8_t *hdr, size_t have,
                                        size_t frame_len, size_t *hdr_len, bfo_place_ticket *ticket)
{
    bfo_frame f;
    bfo_request *r;
    int at;
    if (!bfo__in_range(peer, e->cfg.nranks) || peer == e->cfg.rank || e->peers[peer].unreachable ||
        have < BFO_HDR_FRAG_SIZE || hdr[0] != BFO_FRAG_FRAG || frame_len <= BFO_HDR_FRAG_SIZE ||
        bfo_frame_decode(&f, hdr, BFO_HDR_FRAG_SIZE) != BFO_OK)
        return NULL;
    f.payload = hdr; /* any non-null pointer: validated for its length only */
    f.payload_len = frame_len - BFO_HDR_FRAG_SIZE;
    if (bfo_frame_validate(&f) != BFO_OK)
        return NULL;
    r = bfo__placed_req(e, f.h.frag.dreq, f.h.frag.rseq);
    if (!r || r->peer != peer || f.h.frag.offset > r->cap || f.payload_len > r->cap - f.h.frag.offset ||
        f.h.frag.offset + f.payload_len > r->length ||
        !bfo__frag_fits(r, f.h.frag.offset, f.h.frag.offset + f.payload_len, e->cfg.nrails, &at))
        return NULL; /* read whole: bfo_engine_frame refuses an overlap, or it waits */
    *hdr_len = BFO_HDR_FRAG_SIZE;
    ticket->req = f.h.frag.dreq;
    ticket->rseq = f.h.frag.rseq;
    return (uint8_t *)r->buf + f.h.frag.offset;
}

/* bfo_engine_place_ok: see THE API in bfo_engine.h. */
static inline int bfo_engine_place_ok(const bfo_engine *e, bfo_place_ticket ticket)
{
    return bfo__placed_req(e, ticket.req, ticket.rseq) != NULL;
}

/* bfo_engine_frame_placed: see THE API in bfo_engine.h. */
static inline int bfo_engine_frame_placed(bfo_engine *e, int peer, int rail, const uint8_t *hdr,
                                          size_t hdr_len, const uint8_t *payload, size_t payload_len,
                                          uint64_t now)
{
    bfo_frame f;
    int rc, kind = BFO_EVK_RCVD;
    if (!bfo__in_range(peer, e->cfg.nranks) || peer == e->cfg.rank || !bfo__in_range(rail, e->cfg.nrails) ||
        hdr_len != BFO_HDR_FRAG_SIZE || hdr[0] != BFO_FRAG_FRAG || !payload)
        return BFO_ERR_INVALID;
    if (now > e->now)
        e->now = now;
    rc = bfo_frame_decode(&f, hdr, hdr_len);
    if (rc == BFO_OK) {
        f.payload = payload;
        f.payload_len = payload_len;
        rc = bfo_frame_validate(&f);
    }
    if (rc != BFO_OK) {
        e->stats.malformed_frames++;
        return rc;
    }
    if (e->peers[peer].unreachable) /* placed before its BYE (or its loss) was taken */
        return bfo__frame_gone(e, peer, rail, &f, NULL, 0);
    bfo__detect_on_heard(e, &e->peers[peer].rail[rail]);
    bfo__rate_on_in(&e->peers[peer].rail[rail], hdr_len + payload_len);
    rc = bfo__dispatch(e, peer, rail, &f, &kind);
    return bfo__frame_done(e, rc, kind);
}

#ifdef __cplusplus
}
#endif
#endif /* BFO_ENGINE_FRAME_H */
