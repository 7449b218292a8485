// SPDX-License-Identifier: BSD-3-Clause
/* bfo_engine_revoke.h - process failure reported and acknowledged; contexts
 * revoked.
 *
 * Part of bfo_engine.h, level 10 of its parts (docs/engine-design.md, "The
 * parts"): include bfo_engine.h, not this.  It includes bfo_engine_frame.h
 * (and so every part below); a call to a part above goes through a
 * prototype in bfo_engine_hooks.h (none from here).
 *
 * Sections (grep '>>name'): >>failure, >>revoke.
 */
#ifndef BFO_ENGINE_REVOKE_H
#define BFO_ENGINE_REVOKE_H

#include "bfo_engine_frame.h"

#ifdef __cplusplus
extern "C" {
#endif

/* >>failure - a peer's process reported dead, failures acknowledged ------- */

/* bfo_peer_failed: see THE API in bfo_engine.h. */
static inline int bfo_peer_failed(bfo_engine *e, int peer, uint64_t now)
{
    if (!bfo__in_range(peer, e->cfg.nranks) || peer == e->cfg.rank)
        return BFO_ERR_INVALID;
    if (now > e->now)
        e->now = now;
    bfo__peer_step(e, peer, BFO_PEER_EV_DEATH_REPORTED);
    bfo__run_failed(e);
    return BFO_OK;
}

/* bfo_peer_state: see THE API in bfo_engine.h. */
static inline int bfo_peer_state(const bfo_engine *e, int peer)
{
    return bfo__in_range(peer, e->cfg.nranks) ? e->peers[peer].fsm.cs : 0;
}

/* bfo_failure_ack: see THE API in bfo_engine.h. */
static inline int bfo_failure_ack(bfo_engine *e)
{
    e->acked_n = e->failed_n;
    return (int)e->acked_n;
}

/* bfo_failure_get_acked: see THE API in bfo_engine.h. */
static inline int bfo_failure_get_acked(const bfo_engine *e, int *ranks, int max)
{
    for (int i = 0; i < e->cfg.nranks && ranks && max > 0; i++) {
        const uint32_t o = e->peers[i].failed_order;
        if (o && o <= e->acked_n && o <= (uint32_t)max)
            ranks[o - 1] = i;
    }
    return (int)e->acked_n;
}

/* >>revoke - contexts revoked --------------------------------------------- */

/* 1 when ctx was revoked (bfo_revoke). */
static inline int bfo__ctx_revoked(const bfo_engine *e, uint32_t ctx)
{
    for (int i = 0; i < e->nrevoked; i++)
        if (e->revoked[i] == ctx)
            return 1;
    return 0;
}

/* Messages on revoked contexts that no receive will ever take: an eager
 * one is dropped (its credit returned to its sender); a rendezvous is
 * taken by a free discard receive (cap 0: the copy protocol, every byte
 * dropped, so that its sender's request completes), or waits for one, for
 * a later progress (revoke_sweep). */
static BFO__COLD void bfo__revoke_sweep(bfo_engine *e)
{
    e->revoke_sweep = 0;
    for (int i = e->ux_head, next; i >= 0; i = next) {
        bfo_uxm *u = bfo__ux_at(e, i);
        bfo_request *r = NULL;
        bfo_envelope env;
        next = u->an;
        if (!bfo__ctx_revoked(e, bfo__frame_ctx(&u->f)))
            continue;
        if (u->f.type != BFO_FRAG_MATCH) {
            for (int k = 0; k < BFO__SINKS && !r; k++)
                if (e->sink[k].complete)
                    r = &e->sink[k];
            if (!r) {
                e->revoke_sweep = 1; /* all busy: at a later progress */
                continue;
            }
            env.peer = u->peer;
            env.ctx = bfo__frame_ctx(&u->f);
            env.src = BFO_ANY_SOURCE;
            env.tag = BFO_ANY_TAG;
            env.flags = 0;
            bfo__req_init(r, BFO_REQ_RECV, NULL, 0, &env);
            r->cs = bfo_recv_machine.start;
            r->self = bfo__handle_alloc(e, r);
            if (bfo_handle_is_null(r->self)) { /* every handle in use: later */
                r->complete = 1;
                e->revoke_sweep = 1;
                continue;
            }
            r->sink = 1;
        }
        e->stats.revoke_discards++;
        bfo__ux_unlink(e, i);
        if (r)
            bfo__recv_take(e, r, u->peer, &u->f);
        bfo__credit_return(e, u->peer, &u->f);
        bfo__uxm_put(e, i);
    }
}

/* bfo_revoke: see THE API in bfo_engine.h. */
static inline int bfo_revoke(bfo_engine *e, uint32_t ctx, uint64_t now)
{
    if (!e)
        return BFO_ERR_INVALID;
    if (now > e->now)
        e->now = now;
    if (bfo__ctx_revoked(e, ctx))
        return BFO_OK;
    if (e->nrevoked == BFO__MAX_REVOKED)
        return BFO_ERR_NO_MEMORY;
    e->revoked[e->nrevoked++] = ctx;
    e->stats.revokes++;
    /* the receives posted on it (in their bins; they hold no handle) */
    for (int k = 0; k <= e->bin_mask && e->posted_count; k++)
        for (int any = 0; any < 2; any++) {
            bfo__rbin *b = any ? &e->rbin_any[k] : &e->rbin_src[k];
            for (bfo_request *r = b->head, *prev = NULL, *next; r; r = next) {
                next = r->next;
                if (r->ctx != ctx || r->sink) {
                    prev = r;
                    continue;
                }
                bfo__rbin_unlink(e, b, prev, r, any);
                r->revoked = 1;
                bfo__req_feed(e, r, BFO_EV_CANCEL_REQUESTED, NULL);
            }
        }
    /* the sends whose message has not left (a receive that matched
     * completes as it would) */
    for (int i = 0; i < e->slotp.n; i++) {
        bfo_request *r = bfo__slot_at(e, i)->req;
        if (!r || r->complete || r->ctx != ctx || r->kind != BFO_REQ_SEND)
            continue;
        if (r->answered || r->outstanding != 1 || r->peer == e->cfg.rank ||
            !bfo_send_accepts(r->cs, BFO_EV_CANCEL_REQUESTED) || !bfo__first_waits(e, r))
            continue; /* its message left: the peer takes or discards it, and answers */
        r->revoked = 1;
        bfo__req_feed(e, r, BFO_EV_CANCEL_REQUESTED, NULL);
    }
    bfo__revoke_sweep(e);
    bfo__run_failed(e);
    return BFO_OK;
}

/* bfo_revoked: see THE API in bfo_engine.h. */
static inline int bfo_revoked(const bfo_engine *e, uint32_t ctx)
{
    return e && bfo__ctx_revoked(e, ctx);
}

#ifdef __cplusplus
}
#endif
#endif /* BFO_ENGINE_REVOKE_H */
