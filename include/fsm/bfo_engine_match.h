// SPDX-License-Identifier: BSD-3-Clause
/* bfo_engine_match.h - credits (flow control) and matching (posted receives,
 * unexpected messages).
 *
 * Part of bfo_engine.h, level 5 of its parts (docs/engine-design.md, "The
 * parts"): include bfo_engine.h, not this.  It includes bfo_engine_post.h
 * (and so every part below); a call to a part above goes through a
 * prototype in bfo_engine_hooks.h (none from here).  It owns bfo_peer.credit
 * (bfo__peer_credit): only the bfo__credit_* functions write it.
 *
 * Sections (grep '>>name'): >>credits, >>matching.
 */
#ifndef BFO_ENGINE_MATCH_H
#define BFO_ENGINE_MATCH_H

#include "bfo_engine_post.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Defined below in this part, called before their definition. */
static inline int bfo__matches(const bfo_request *r, int peer, const bfo_frame *f);

/* >>credits - flow control ------------------------------------------------ */

/* Flow control (docs/engine-design.md, "Credits"): each receiver gives each
 * peer a window of unexpected_budget / (nranks - 1) bytes of payload
 * buffers.  A sender charges an eager payload (a MATCH's, the first bytes
 * of an RNDV) to its window, and sends by rendezvous without first bytes
 * when it does not fit; the receiver counts what it took (matched) and
 * tells the sender a new limit (CREDIT, cumulative: freed + window) once a
 * quarter of the window came free.  So no peer holds more than its window
 * of a receiver's memory, and a sender is never stopped: past its window
 * it only goes by rendezvous.  Sends to this rank itself are not counted. */

/* As sender: charges n bytes of eager payload to peer's window; 0 when
 * they do not fit (nothing is charged). */
static BFO__HOT int bfo__credit_take(bfo_engine *e, int peer, size_t n)
{
    bfo_peer *p = &e->peers[peer];
    const uint64_t c = bfo__credit_cost(n);
    if (peer == e->cfg.rank || !c)
        return 1;
    if (p->credit.used + c > p->credit.limit)
        return 0;
    p->credit.used += c;
    return 1;
}

/* As sender: n bytes charged (bfo__credit_take) that will not go after
 * all (a send withdrawn before its first message went). */
static inline void bfo__credit_untake(bfo_engine *e, int peer, size_t n)
{
    e->peers[peer].credit.used -= bfo__credit_cost(n);
}

/* At init: nothing charged or taken; as sender, this side's own window
 * as the limit (a guess, until the peer's CREDIT comes). */
static inline void bfo__credit_init(bfo_engine *e, bfo_peer *p)
{
    memset(&p->credit, 0, sizeof p->credit);
    p->credit.limit = e->credit_window;
}

/* As sender: the peer's CREDIT (TAKE_CREDIT).  The first replaces the
 * guess (the peer's budget may be smaller than ours); after it, the
 * largest limit is the newest. */
static inline void bfo__credit_heard(bfo_engine *e, int peer, const bfo_frame *f)
{
    bfo_peer *p = &e->peers[peer];
    if (f && f->type == BFO_FRAG_CREDIT && (!p->credit.heard || f->h.credit.limit > p->credit.limit)) {
        p->credit.limit = f->h.credit.limit;
        p->credit.heard = 1;
    }
}

/* As receiver: tells peer its new limit.  Over the control budget, nothing
 * goes and credit.told stays: the next message taken tries again. */
static inline void bfo__credit_tell(bfo_engine *e, int peer)
{
    bfo_peer *p = &e->peers[peer];
    const uint64_t w = e->credit_window;
    bfo_hdr_credit h;
    bfo_op *op;
    if (p->unreachable) /* gone: it sends nothing more (a CREDIT would fail, and again) */
        return;
    op = bfo__ctl_alloc(e, BFO_FRAG_CREDIT, peer);
    if (!op)
        return;
    h.type = BFO_FRAG_CREDIT;
    h.flags = 0;
    h.limit = p->credit.freed + w < w ? UINT64_MAX : p->credit.freed + w;
    op->hdr_len = bfo_hdr_credit_encode(&h, op->hdr, sizeof op->hdr);
    p->credit.told = p->credit.freed;
    e->stats.credits_sent++;
    bfo__post(e, op);
}

/* As receiver: a MATCH or first RNDV of peer was taken by a receive (or
 * was a cancelled send's): its buffer bytes are free again. */
static BFO__HOT void bfo__credit_return(bfo_engine *e, int peer, const bfo_frame *f)
{
    bfo_peer *p = &e->peers[peer];
    if (peer == e->cfg.rank || f->type == BFO_FRAG_RGET)
        return;
    p->credit.freed += bfo__credit_cost(f->payload_len);
    /* a quarter of the window was taken since the last CREDIT (so some
     * was: credit.freed never falls behind credit.told) */
    if (BFO__UNLIKELY(p->credit.freed - p->credit.told >= e->credit_quarter))
        bfo__credit_tell(e, peer);
}

/* >>matching - posted receives and unexpected messages, in bins ----------- */

/* A bin's index before the mask: a multiplier that is odd spreads the
 * contexts over every bin (a bijection modulo any power of two), and the
 * ranks of one context then take consecutive bins. */
static inline unsigned bfo__hash(uint32_t ctx, int src)
{
    return ctx * 0x9E3779B1u + (uint32_t)src;
}
static inline bfo__rbin *bfo__rbin_of(const bfo_engine *e, uint32_t ctx, int src)
{
    return src == BFO_ANY_SOURCE ? &e->rbin_any[bfo__hash(ctx, -7) & (unsigned)e->bin_mask]
                                 : &e->rbin_src[bfo__hash(ctx, src) & (unsigned)e->bin_mask];
}

/* A receive joins the posted ones (its bin, in post order). */
static inline void bfo__posted_add(bfo_engine *e, bfo_request *r)
{
    bfo__rbin *b = bfo__rbin_of(e, r->ctx, r->src);
    r->pseq = ++e->post_seq;
    r->next = NULL;
    if (b->tail)
        b->tail->next = r;
    else
        b->head = r;
    b->tail = r;
    e->posted_count++;
    e->posted_any += r->src == BFO_ANY_SOURCE;
}

/* Out of its bin (prev: its predecessor there, or NULL; any: the bin is
 * an ANY_SOURCE one). */
static inline void bfo__rbin_unlink(bfo_engine *e, bfo__rbin *b, bfo_request *prev, bfo_request *r,
                                    int any)
{
    if (prev)
        prev->next = r->next;
    else
        b->head = r->next;
    if (b->tail == r)
        b->tail = prev;
    r->next = NULL;
    e->posted_count--;
    e->posted_any -= any; /* b is an ANY_SOURCE bin (rbin_any) */
}

/* Whether posted receive r takes a message of (ctx, src, tag) from peer. */
static BFO__HOT int bfo__matches_env(const bfo_request *r, int peer, uint32_t ctx, uint32_t src, int tag)
{
    return r->ctx == ctx && (r->peer == BFO_ANY_SOURCE || r->peer == peer) &&
           (r->src == BFO_ANY_SOURCE || (uint32_t)r->src == src) &&
           (r->want_tag == BFO_ANY_TAG || r->want_tag == tag);
}

/* The first posted receive (in post order) that a frame from peer matches,
 * taken out of the posted ones; NULL when none.  Two bins are looked at:
 * the frame's (ctx, src) and its ctx's ANY_SOURCE receives (when there is
 * one at all). */
static BFO__HOT bfo_request *bfo__posted_take(bfo_engine *e, int peer, const bfo_frame *f)
{
    const uint32_t ctx = bfo__frame_ctx(f), src = bfo__frame_src(f);
    const int tag = bfo__frame_tag(f);
    bfo__rbin *bs = bfo__rbin_of(e, ctx, (int)src), *ba;
    bfo_request *rs = NULL, *ps = NULL, *ra = NULL, *pa = NULL, *prev = NULL;
    for (bfo_request *r = bs->head; r; prev = r, r = r->next)
        if (bfo__matches_env(r, peer, ctx, src, tag)) {
            rs = r;
            ps = prev;
            break;
        }
    if (BFO__UNLIKELY(e->posted_any)) {
        ba = bfo__rbin_of(e, ctx, -1);
        prev = NULL;
        for (bfo_request *r = ba->head; r && (!rs || r->pseq < rs->pseq); prev = r, r = r->next)
            if (bfo__matches_env(r, peer, ctx, src, tag)) {
                ra = r;
                pa = prev;
                break;
            }
        if (ra) {
            bfo__rbin_unlink(e, ba, pa, ra, 1);
            return ra;
        }
    }
    if (rs)
        bfo__rbin_unlink(e, bs, ps, rs, 0);
    return rs;
}

/* Appends unexpected message i to its three lists. */
static inline void bfo__ux_push(bfo_engine *e, int i, int *head, int *tail, int which)
{
    bfo_uxm *u = bfo__ux_at(e, i);
    int *nx = which == 0 ? &u->an : which == 1 ? &u->sn : &u->cn;
    int *pv = which == 0 ? &u->ap : which == 1 ? &u->sp : &u->cp;
    *nx = -1;
    *pv = *tail;
    if (*tail >= 0) {
        bfo_uxm *t = bfo__ux_at(e, *tail);
        *(which == 0 ? &t->an : which == 1 ? &t->sn : &t->cn) = i;
    } else {
        *head = i;
    }
    *tail = i;
}
static inline void bfo__ux_pull(bfo_engine *e, int i, int *head, int *tail, int which)
{
    bfo_uxm *u = bfo__ux_at(e, i);
    const int nx = which == 0 ? u->an : which == 1 ? u->sn : u->cn;
    const int pv = which == 0 ? u->ap : which == 1 ? u->sp : u->cp;
    if (pv >= 0) {
        bfo_uxm *p = bfo__ux_at(e, pv);
        *(which == 0 ? &p->an : which == 1 ? &p->sn : &p->cn) = nx;
    } else {
        *head = nx;
    }
    if (nx >= 0) {
        bfo_uxm *n = bfo__ux_at(e, nx);
        *(which == 0 ? &n->ap : which == 1 ? &n->sp : &n->cp) = pv;
    } else {
        *tail = pv;
    }
}
static inline bfo__ubin *bfo__ubin_src(const bfo_engine *e, uint32_t ctx, int src)
{
    return &e->ubin_src[bfo__hash(ctx, src) & (unsigned)e->bin_mask];
}
static inline bfo__ubin *bfo__ubin_ctx(const bfo_engine *e, uint32_t ctx)
{
    return &e->ubin_ctx[bfo__hash(ctx, -7) & (unsigned)e->bin_mask];
}

/* Unexpected message i joins the queue: all, its (ctx, src) bin, its ctx bin. */
static inline void bfo__ux_link(bfo_engine *e, int i)
{
    const bfo_frame *f = &bfo__ux_at(e, i)->f;
    bfo__ubin *bs = bfo__ubin_src(e, bfo__frame_ctx(f), (int)bfo__frame_src(f));
    bfo__ubin *bc = bfo__ubin_ctx(e, bfo__frame_ctx(f));
    bfo__ux_push(e, i, &e->ux_head, &e->ux_tail, 0);
    bfo__ux_push(e, i, &bs->head, &bs->tail, 1);
    bfo__ux_push(e, i, &bc->head, &bc->tail, 2);
    if (BFO__UNLIKELY(e->nrevoked)) /* it may be on one: the next progress sees */
        e->revoke_sweep = 1;
}

/* ... and leaves it. */
static inline void bfo__ux_unlink(bfo_engine *e, int i)
{
    const bfo_frame *f = &bfo__ux_at(e, i)->f;
    bfo__ubin *bs = bfo__ubin_src(e, bfo__frame_ctx(f), (int)bfo__frame_src(f));
    bfo__ubin *bc = bfo__ubin_ctx(e, bfo__frame_ctx(f));
    bfo__ux_pull(e, i, &e->ux_head, &e->ux_tail, 0);
    bfo__ux_pull(e, i, &bs->head, &bs->tail, 1);
    bfo__ux_pull(e, i, &bc->head, &bc->tail, 2);
}

/* The oldest unexpected message that receive r (or a probe shaped as one)
 * would take, or -1: a scan of its (ctx, src) bin, or of its ctx's bin for
 * BFO_ANY_SOURCE. */
static inline int bfo__ux_match(const bfo_engine *e, const bfo_request *r)
{
    if (r->src == BFO_ANY_SOURCE) {
        for (int i = bfo__ubin_ctx(e, r->ctx)->head; i >= 0; i = bfo__ux_at(e, i)->cn)
            if (bfo__matches(r, bfo__ux_at(e, i)->peer, &bfo__ux_at(e, i)->f))
                return i;
    } else {
        for (int i = bfo__ubin_src(e, r->ctx, r->src)->head; i >= 0; i = bfo__ux_at(e, i)->sn)
            if (bfo__matches(r, bfo__ux_at(e, i)->peer, &bfo__ux_at(e, i)->f))
                return i;
    }
    return -1;
}

static inline int bfo__matches(const bfo_request *r, int peer, const bfo_frame *f)
{
    return bfo__matches_env(r, peer, bfo__frame_ctx(f), bfo__frame_src(f), bfo__frame_tag(f));
}

/* Takes r out of the list of posted receives; 0 when it is not there. */
static inline int bfo__unpost(bfo_engine *e, bfo_request *r)
{
    bfo__rbin *b = bfo__rbin_of(e, r->ctx, r->src);
    for (bfo_request *q = b->head, *prev = NULL; q; prev = q, q = q->next)
        if (q == r) {
            bfo__rbin_unlink(e, b, prev, q, q->src == BFO_ANY_SOURCE);
            return 1;
        }
    return 0;
}

#ifdef __cplusplus
}
#endif
#endif /* BFO_ENGINE_MATCH_H */
