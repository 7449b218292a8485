// SPDX-License-Identifier: BSD-3-Clause
/* bfo_engine_recv.h - receiving: a message taken, the PUT and GET protocols'
 * receiving side, the receive machine's actions.
 *
 * Part of bfo_engine.h, level 7 of its parts (docs/engine-design.md, "The
 * parts"): include bfo_engine.h, not this.  It includes bfo_engine_request.h
 * (and so every part below); a call to a part above goes through a
 * prototype in bfo_engine_hooks.h (none from here).
 *
 * Sections (grep '>>name'): >>recv_protocols, >>frag_ranges, >>recv_machine,
 * >>recv_take.
 */
#ifndef BFO_ENGINE_RECV_H
#define BFO_ENGINE_RECV_H

#include "bfo_engine_request.h"

#ifdef __cplusplus
extern "C" {
#endif

/* >>recv_protocols - PUTs and reads of a receive, a rendezvous accepted --- */

/* The range of PUT slot s of a receive: the message after its first bytes,
 * cut into rdma_frag_size pieces. */
static inline void bfo__slot_range(const bfo_engine *e, const bfo_request *r, uint32_t s,
                                   uint64_t *off, uint64_t *len)
{
    uint64_t o = (uint64_t)r->first + (uint64_t)s * e->cfg.rdma_frag_size;
    uint64_t n = o < r->length ? r->length - o : 0;
    *off = o;
    *len = n < e->cfg.rdma_frag_size ? n : e->cfg.rdma_frag_size;
}

/* PUT receive: PUTs for the next ranges, up to frag_pipeline not FINned. */
static inline void bfo__post_puts(bfo_engine *e, bfo_request *r)
{
    while (r->next_off < r->length && r->frags_inflight < e->cfg.frag_pipeline) {
        bfo_hdr_put h;
        uint64_t off, len;
        bfo_op *op = bfo__req_op(e, r, BFO_FRAG_PUT);
        if (!op)
            return;
        bfo__slot_range(e, r, r->slot_next, &off, &len);
        h.type = BFO_FRAG_PUT;
        h.flags = 0;
        h.rseq = r->rseq;
        h.slot = r->slot_next++;
        h.sreq = r->remote;
        h.dreq = r->self;
        h.offset = off;
        h.length = len;
        h.raddr = r->my_raddr + off;
        op->hdr_len = bfo_hdr_put_encode(&h, op->hdr, sizeof op->hdr);
        op->payload = r->my_keys;
        op->payload_len = 4 * (size_t)e->cfg.nrails;
        r->next_off = (size_t)(off + len);
        r->frags_inflight++;
        bfo__post(e, op);
    }
}

/* GET receive: reads of the next ranges, up to frag_pipeline in flight. */
static inline void bfo__post_reads(bfo_engine *e, bfo_request *r)
{
    while (r->next_off < r->length && r->frags_inflight < e->cfg.frag_pipeline) {
        size_t n = r->length - r->next_off;
        int rail;
        bfo_op *op = bfo__req_op(e, r, BFO__OP_READ);
        if (!op)
            return;
        if (n > e->cfg.rdma_frag_size)
            n = e->cfg.rdma_frag_size;
        rail = bfo__piece(e, r->peer, &n, 1);
        op->local = r->buf + r->next_off;
        op->off = r->next_off;
        op->len = n;
        op->raddr = r->raddr + r->next_off;
        r->next_off += n;
        r->frags_inflight++;
        bfo__post_on(e, op, rail);
    }
}

/* A matched RNDV or RGET: the receive takes its description. */
static inline void bfo__accept_rzv(bfo_engine *e, bfo_request *r, const bfo_frame *f, int peer)
{
    const int rget = f->type == BFO_FRAG_RGET;
    const size_t first = rget ? 0 : f->payload_len; /* RGET's payload: keys, not data */
    size_t n = first < r->cap ? first : r->cap;
    (void)e;
    if (n && BFO__UNLIKELY(!r->buf))
        bfo__data_in(r, 0, f->payload, n);
    else if (n)
        memcpy(r->buf, f->payload, n);
    if (rget)
        bfo__req_take_keys(r, f->payload, f->payload_len);
    else
        r->nkeys = 0;
    r->source = (int)(rget ? f->h.rget.src : f->h.rndv.src);
    r->peer = peer;
    r->tag = (int)(rget ? f->h.rget.tag : f->h.rndv.tag);
    r->length = (size_t)(rget ? f->h.rget.msg_len : f->h.rndv.msg_len);
    r->remote = rget ? f->h.rget.sreq : f->h.rndv.sreq;
    r->rseq = rget ? f->h.rget.rseq : f->h.rndv.rseq;
    r->seq = rget ? f->h.rget.seq : f->h.rndv.seq;
    r->raddr = rget ? f->h.rget.raddr : 0;
    r->pin = !rget && (f->flags & BFO_FLAG_PIN);
    r->first = r->done_bytes = first;
    r->next_off = r->first;
    r->frags_inflight = 0;
    r->slot_next = r->slot_base = 0;
    r->slot_mask = 0;
    r->frag_runs = -1; /* no FRAG of this restart sequence before its ACK */
    r->counting = 1;
    bfo__self(e, r); /* its handle: the answer (ACK, PUT, RECVERRNOTIFY) names it */
}

/* >>frag_ranges - the FRAG bytes a copy receive took, by range ----------- */

/* Counting FRAG bytes alone let a duplicate or overlapping FRAG count
 * twice and complete a receive with holes.  So a receive keeps what it
 * took since its ACK (bfo_request.frag_lo, frag_run): a FRAG counts only if
 * none of its bytes was taken. */
enum {
    BFO__FRAG_JOINS,   /* touches what was taken: no run of its own */
    BFO__FRAG_NEW,     /* apart from all of it: a run of its own */
    BFO__FRAG_OVERLAP, /* some of it was taken (or no ACK of this restart sequence) */
    BFO__FRAG_FAR      /* a run of its own 4 GiB or more above the lowest missing byte */
};

/* Where [off, end) falls among what r took; *at: the first run that
 * starts at or after off. */
static inline int bfo__frag_where(const bfo_request *r, uint64_t off, uint64_t end, int *at)
{
    const int n = r->frag_runs;
    const uint64_t lo = r->frag_lo;
    int i = 0;
    uint32_t o, x;
    *at = 0;
    if (n < 0 || off < lo)
        return BFO__FRAG_OVERLAP;
    if (off == lo) /* the lowest missing bytes */
        return n && (uint64_t)r->frag_run[0][0] < end - lo ? BFO__FRAG_OVERLAP : BFO__FRAG_JOINS;
    if (end - lo > UINT32_MAX)
        return BFO__FRAG_FAR;
    o = (uint32_t)(off - lo);
    x = (uint32_t)(end - lo);
    while (i < n && r->frag_run[i][0] < o)
        i++;
    *at = i;
    if ((i > 0 && r->frag_run[i - 1][1] > o) || (i < n && r->frag_run[i][0] < x))
        return BFO__FRAG_OVERLAP;
    return (i > 0 && r->frag_run[i - 1][1] == o) || (i < n && r->frag_run[i][0] == x) ? BFO__FRAG_JOINS
                                                                                       : BFO__FRAG_NEW;
}

/* 1 when [off, end) may be taken now: it overlaps nothing taken and, if it
 * needs a run of its own, one is free, keeping `keep` of them (a frame read
 * whole keeps nrails for the frames being read in place meanwhile, at most
 * one per rail: bfo_engine_place asks the same, so that a frame placed
 * always finds its run). */
static inline int bfo__frag_fits(const bfo_request *r, uint64_t off, uint64_t end, int keep, int *at)
{
    const int w = bfo__frag_where(r, off, end, at);
    return w == BFO__FRAG_JOINS || (w == BFO__FRAG_NEW && r->frag_runs < BFO__FRAG_RUNS - keep);
}

/* Takes [off, end) (bfo__frag_fits said so, with *at). */
static inline void bfo__frag_take(bfo_request *r, uint64_t off, uint64_t end, int at)
{
    int n = r->frag_runs;
    if (off == r->frag_lo) { /* the lowest missing bytes: lo moves up, the runs with it */
        uint64_t d = end - off;
        if (n && r->frag_run[0][0] == d) { /* it closed the gap below the first run */
            d = r->frag_run[0][1];
            memmove(r->frag_run[0], r->frag_run[1], sizeof r->frag_run[0] * (size_t)(n - 1));
            n--;
        }
        for (int i = 0; i < n; i++) { /* each starts above d (< 4 GiB) */
            r->frag_run[i][0] -= (uint32_t)d;
            r->frag_run[i][1] -= (uint32_t)d;
        }
        r->frag_lo += d;
        r->frag_runs = n;
        return;
    }
    {
        const uint32_t o = (uint32_t)(off - r->frag_lo), x = (uint32_t)(end - r->frag_lo);
        const int left = at > 0 && r->frag_run[at - 1][1] == o, right = at < n && r->frag_run[at][0] == x;
        if (left && right) {
            r->frag_run[at - 1][1] = r->frag_run[at][1];
            memmove(r->frag_run[at], r->frag_run[at + 1], sizeof r->frag_run[0] * (size_t)(n - at - 1));
            n--;
        } else if (left) {
            r->frag_run[at - 1][1] = x;
        } else if (right) {
            r->frag_run[at][0] = o;
        } else {
            memmove(r->frag_run[at + 1], r->frag_run[at], sizeof r->frag_run[0] * (size_t)(n - at));
            r->frag_run[at][0] = o;
            r->frag_run[at][1] = x;
            n++;
        }
        r->frag_runs = n;
    }
}

/* >>recv_machine - the receive machine's actions and feed ----------------- */

/* 1 when the event came with a frame of this type (the actions that take
 * a frame's contents are fed with one; else a protocol violation). */
static inline int bfo__in_frame(const bfo__input *in, int type)
{
    return in && in->f && in->f->type == type;
}

/* The receive's action deliver_match, with its MATCH (bfo__recv_action,
 * and the fast path of bfo__recv_take). */
static BFO__HOT void bfo__act_deliver_match(bfo_engine *e, bfo_request *r, const bfo_frame *f)
{
    size_t n = f->payload_len < r->cap ? f->payload_len : r->cap;
    if (n) {
        if (BFO__UNLIKELY(!r->buf))
            bfo__data_in(r, 0, f->payload, n);
        else
            memcpy(r->buf, f->payload, n);
    }
    r->source = (int)f->h.match.src;
    r->tag = (int)f->h.match.tag;
    r->length = f->payload_len;
    e->stats.messages_received++;
    e->stats.eagers++;
    bfo__finish(e, r, r->length > r->cap ? BFO_ERR_TRUNCATE : BFO_OK);
}

static inline void bfo__recv_action(bfo_engine *e, bfo_request *r, int act, const bfo__input *in)
{
    const bfo_frame *f = in ? in->f : NULL;
    switch ((enum bfo_recv_action)act) { /* every action, no default: -Wswitch names one left out */
    case BFO_RECV_ACT_DELIVER_MATCH:
        if (!bfo__in_frame(in, BFO_FRAG_MATCH))
            break;
        bfo__act_deliver_match(e, r, f);
        return;
    case BFO_RECV_ACT_ACCEPT_RNDV:
    case BFO_RECV_ACT_ACCEPT_RGET:
        if (!bfo__in_frame(in, act == BFO_RECV_ACT_ACCEPT_RGET ? BFO_FRAG_RGET : BFO_FRAG_RNDV))
            break;
        bfo__accept_rzv(e, r, f, in->peer);
        return;
    case BFO_RECV_ACT_POST_ACK: {
        bfo_hdr_ack h;
        bfo_op *op = bfo__req_op(e, r, BFO_FRAG_ACK);
        r->frag_lo = r->done_bytes; /* the FRAGs come from the ACK's offset on */
        r->frag_runs = 0;
        if (!op)
            return;
        h.type = BFO_FRAG_ACK;
        h.flags = 0;
        h.rseq = r->rseq;
        h.sreq = r->remote;
        h.dreq = r->self;
        h.offset = r->done_bytes;
        op->hdr_len = bfo_hdr_ack_encode(&h, op->hdr, sizeof op->hdr);
        bfo__post(e, op);
        return;
    }
    case BFO_RECV_ACT_ACCEPT_FRAG: {
        uint64_t off;
        if (!bfo__in_frame(in, BFO_FRAG_FRAG))
            break;
        off = f->h.frag.offset;
        if (off < r->cap) {
            size_t n = r->cap - (size_t)off;
            if (n > f->payload_len)
                n = f->payload_len;
            if (BFO__UNLIKELY(!r->buf))
                bfo__data_in(r, (size_t)off, f->payload, n);
            else if ((const uint8_t *)(r->buf + off) != f->payload) /* not read in place (bfo_engine_place) */
                memcpy(r->buf + off, f->payload, n);
        }
        r->done_bytes += f->payload_len;
        return;
    }
    case BFO_RECV_ACT_POST_PUTS: bfo__post_puts(e, r); return;
    case BFO_RECV_ACT_ACCEPT_FIN: { /* a PUT slot is written (checked by the engine) */
        uint32_t bit;
        if (!bfo__in_frame(in, BFO_FRAG_FIN))
            break;
        bit = f->h.fin.slot - r->slot_base;
        r->slot_mask |= (uint64_t)1 << bit;
        while (r->slot_mask & 1) {
            r->slot_mask >>= 1;
            r->slot_base++;
        }
        r->done_bytes += (size_t)f->h.fin.length;
        r->frags_inflight--;
        return;
    }
    case BFO_RECV_ACT_POST_READS: bfo__post_reads(e, r); return;
    case BFO_RECV_ACT_ACCOUNT_READ: return; /* bytes are counted as each read completes */
    case BFO_RECV_ACT_POST_FIN:
        bfo__post_fin(e, r, 0, 0, r->length);
        return;
    case BFO_RECV_ACT_POST_RECVERRNOTIFY:
        bfo__post_restart_msg(e, r, BFO_FRAG_RECVERRNOTIFY, r->remote, bfo__self(e, r));
        return;
    case BFO_RECV_ACT_ACCEPT_NOTIFY:
        if (!bfo__in_frame(in, BFO_FRAG_NOTIFY))
            break;
        r->rseq = f->h.restart.rseq;
        return;
    case BFO_RECV_ACT_POST_RESTARTACK:
        bfo__post_restart_msg(e, r, BFO_FRAG_RESTARTACK, r->remote, bfo__self(e, r));
        return;
    case BFO_RECV_ACT_RESET: r->done_bytes = 0; return;
    case BFO_RECV_ACT_COMPLETE:
        e->stats.messages_received++;
        bfo__finish(e, r, r->length > r->cap ? BFO_ERR_TRUNCATE : BFO_OK);
        return;
    case BFO_RECV_ACT_FAIL_UNREACHABLE: /* the reason: r->status (bfo__req_gone) */
        bfo__count_gone(e, r->status);
        bfo__finish(e, r, r->status);
        return;
    case BFO_RECV_ACT_DROP: return;
    case BFO_RECV_ACT_CLAIM: /* the status a matched probe reports */
        if (!f || (f->type != BFO_FRAG_MATCH && f->type != BFO_FRAG_RNDV && f->type != BFO_FRAG_RGET))
            break;
        r->peer = in->peer;
        r->source = (int)bfo__frame_src(f);
        r->tag = bfo__frame_tag(f);
        r->length = bfo__frame_len(f);
        return;
    case BFO_RECV_ACT_COMPLETE_CANCELLED:
        e->stats.revoked_errors += r->revoked;
        bfo__finish(e, r, r->revoked ? BFO_ERR_REVOKED : BFO_ERR_CANCELLED);
        return;
    case BFO_RECV_ACT_POST_RESTARTNACK: /* the engine NACKs for released requests */
        break;
    }
    e->stats.protocol_violations++; /* POST_RESTARTNACK, fed without its frame, or not an action */
}

static inline void bfo__recv_feed(bfo_engine *e, bfo_request *r, int ev, const bfo__input *in)
{
    for (; ev && !r->complete; in = NULL) { /* the input is the first event's */
        bfo_step st;
        st.trace = e->trace;
        st.obj = r;
        if (bfo_fsm_step(&bfo_recv_machine, &r->cs, ev, &st) != BFO_OK) {
            e->stats.protocol_violations++;
            return;
        }
        for (unsigned i = 0; i < st.n_actions && i < BFO_RECV_MAX_ACTIONS; i++)
            bfo__recv_action(e, r, st.actions[i], in);
        ev = bfo__fact(r, bfo_recv_machine.waits, r->length);
    }
}

/* >>recv_take - a posted receive takes a message -------------------------- */

/* After an RNDV or RGET matched: the receiver's choice of protocol.  One
 * that waited in the unexpected queue while its sender was given up fails:
 * the rest of the message never comes (and nothing would fail it later). */
static inline void bfo__recv_chosen(bfo_engine *e, bfo_request *r)
{
    if (!r->complete && (r->cs == BFO_RECV_ST_RNDV_MATCHED || r->cs == BFO_RECV_ST_RGET_MATCHED)) {
        bfo__req_feed(e, r, e->peers[r->peer].unreachable ? bfo__gone_event(e, r)
                                                           : bfo__recv_choose(e, r),
                      NULL);
    }
}

/* A posted receive takes a message: the first event of its machine. */
static BFO__HOT void bfo__recv_take(bfo_engine *e, bfo_request *r, int peer, const bfo_frame *f)
{
    r->peer = peer;
    r->ctx = bfo__frame_ctx(f);
#ifndef BFO_NO_FAST_PATH
    /* An eager message: POSTED --MATCH_RCVD--> COMPLETE / deliver_match, a
     * fast path (docs/engine-design.md, "Fast paths"); complete, the
     * request takes no fact and chooses no protocol. */
    if (BFO__LIKELY(f->type == BFO_FRAG_MATCH && r->cs == BFO_RECV_ST_POSTED)) {
        bfo__fsm_shortcut(&bfo_recv_machine, &r->cs, BFO_RECV_ST_POSTED, BFO_EV_MATCH_RCVD,
                          BFO_RECV_ST_COMPLETE, BFO_RECV_ACT_DELIVER_MATCH, e->trace, r);
        bfo__act_deliver_match(e, r, f);
        return;
    }
#endif
    const bfo__input in = { f, peer, 0, 0, 0 };
    bfo__recv_feed(e, r, f->type == BFO_FRAG_MATCH  ? BFO_EV_MATCH_RCVD
                        : f->type == BFO_FRAG_RNDV ? BFO_EV_RNDV_RCVD
                                                   : BFO_EV_RGET_RCVD,
                   &in);
    bfo__recv_chosen(e, r);
}

#ifdef __cplusplus
}
#endif
#endif /* BFO_ENGINE_RECV_H */
