// SPDX-License-Identifier: BSD-3-Clause
/* bfo_engine_api.h - the public entry points: send, receive, queries, cancel,
 * probe, leave, progress.
 *
 * Part of bfo_engine.h, level 11 of its parts (docs/engine-design.md, "The
 * parts"): include bfo_engine.h, not this.  It includes bfo_engine_relay.h,
 * bfo_engine_revoke.h (and so every part below); a call to a part above
 * goes through a prototype in bfo_engine_hooks.h (none from here).
 *
 * Sections (grep '>>name'): >>api_post, >>api_query, >>cancel, >>probe,
 * >>leave, >>progress.
 */
#ifndef BFO_ENGINE_API_H
#define BFO_ENGINE_API_H

#include "bfo_engine_relay.h"
#include "bfo_engine_revoke.h"

#ifdef __cplusplus
extern "C" {
#endif

/* >>api_post - sends and receives posted ---------------------------------- */

/* A new request to a peer that is gone: it fails at once; its status
 * (bfo__gone_status) is what the call returns. */
static BFO__COLD int bfo__gone_feed(bfo_engine *e, bfo_request *r)
{
    bfo__req_gone(e, r);
    return r->complete ? r->status : BFO_ERR_PEER_UNREACHABLE;
}

/* An ANY_SOURCE receive while a process failure is not acknowledged
 * (bfo_failure_ack): it completes at once, BFO_ERR_PROC_FAILED_PENDING. */
static BFO__COLD int bfo__pending_feed(bfo_engine *e, bfo_request *r)
{
    r->status = BFO_ERR_PROC_FAILED_PENDING;
    bfo__req_feed(e, r, BFO_EV_PEER_UNREACHABLE, NULL);
    return r->complete ? r->status : BFO_ERR_PROC_FAILED_PENDING;
}

/* A new request on a revoked context: it completes at once,
 * BFO_ERR_REVOKED, before it takes a sequence number or a message. */
static BFO__COLD int bfo__revoked_feed(bfo_engine *e, bfo_request *r)
{
    r->status = BFO_ERR_REVOKED;
    bfo__req_feed(e, r, BFO_EV_PEER_UNREACHABLE, NULL);
    return r->complete ? r->status : BFO_ERR_REVOKED;
}

/* bfo_isend_env and bfo_isend_data_env: data is NULL for a buffer, else a
 * description that is not one buffer. */
static BFO__HOT int bfo__isend(bfo_engine *e, bfo_request *r, const void *buf, size_t len,
                               const bfo_data *data, const bfo_envelope *env, uint64_t now)
{
    int peer;
    if (!r || !env || !bfo__in_range(env->peer, e->cfg.nranks) || env->src < 0 ||
        env->tag < 0 || (env->flags & ~BFO_SEND_SYNC) || (len && !buf && !data))
        return BFO_ERR_INVALID;
    peer = env->peer;
    if (now > e->now)
        e->now = now;
    bfo__req_init(r, BFO_REQ_SEND, (void *)(uintptr_t)buf, len, env);
    r->lane = 0;
    if (data) { /* described: no buffer (bfo__send_described) */
        r->data = data;
        r->dpos.seg = 0;
        r->dpos.start = 0;
    }
    r->cs = bfo_send_machine.start;
    r->self = bfo__handle_alloc(e, r);
    if (bfo_handle_is_null(r->self))
        return BFO_ERR_NO_MEMORY;
    if (BFO__UNLIKELY(e->nrevoked) && bfo__ctx_revoked(e, env->ctx))
        return bfo__revoked_feed(e, r); /* first: revoked whatever its peer */
    if (e->peers[peer].unreachable)
        return bfo__gone_feed(e, r);
    bfo__peer_work(e, peer); /* a probe first if it was quiet (bfo_engine_detect.h, >>work) */
    r->seq = ++e->peers[peer].send_seq;
    /* a synchronous send goes by rendezvous, whatever its size: the
     * receiver's answer (ACK, PUT, FIN) is the proof that it matched; so
     * does an eager one that the peer's window has no room for */
    if (BFO__LIKELY(len <= e->cfg.eager_limit && !(env->flags & BFO_SEND_SYNC))) {
        if (BFO__LIKELY(bfo__credit_take(e, peer, len))) {
            bfo__send_eager(e, r);
            bfo__run_failed(e);
            return BFO_OK;
        }
        e->stats.credit_rndv++;
    }
    {
        const int ev = bfo__send_choose(e, r);
        if (ev == BFO_EV_RNDV_CHOSEN) { /* its first bytes, if the window has room */
            r->first = bfo__rndv_first(e, len);
            if (!bfo__credit_take(e, peer, r->first))
                r->first = 0;
        }
        bfo__send_feed(e, r, ev, NULL);
    }
    bfo__run_failed(e);
    return BFO_OK;
}

/* bfo_isend: see THE API in bfo_engine.h. */
static inline int bfo_isend(bfo_engine *e, bfo_request *r, const void *buf, size_t len, int peer,
                            uint32_t ctx, int tag, uint64_t now)
{
    bfo_envelope env;
    env.peer = peer;
    env.ctx = ctx;
    env.src = e->cfg.rank;
    env.tag = tag;
    env.flags = 0;
    return bfo__isend(e, r, buf, len, NULL, &env, now);
}

/* bfo_isend_env: see THE API in bfo_engine.h. */
static inline int bfo_isend_env(bfo_engine *e, bfo_request *r, const void *buf, size_t len,
                                const bfo_envelope *env, uint64_t now)
{
    return bfo__isend(e, r, buf, len, NULL, env, now);
}

/* bfo_irecv_env and bfo_irecv_data_env: data as for bfo__isend. */
static BFO__HOT int bfo__irecv(bfo_engine *e, bfo_request *r, void *buf, size_t cap,
                               const bfo_data *data, const bfo_envelope *env, uint64_t now)
{
    bfo_request *rr = r;
    int peer;
    if (!r || !env || (unsigned)env->peer + 1u > (unsigned)e->cfg.nranks || /* -1: ANY */
        env->src < BFO_ANY_SOURCE || env->tag < BFO_ANY_TAG || env->flags || (cap && !buf && !data))
        return BFO_ERR_INVALID;
    peer = env->peer;
    if (now > e->now)
        e->now = now;
    bfo__req_init(r, BFO_REQ_RECV, buf, cap, env);
    if (data) { /* described: no buffer (bfo__data_in) */
        r->data = data;
        r->dpos.seg = 0;
        r->dpos.start = 0;
    }
    r->cs = bfo_recv_machine.start;
    /* a slot of its own from now on, its handle once it needs one
     * (bfo__self): a rendezvous it matches is answered with it (ACK, PUT),
     * and every request that posts operations holds one, which is what
     * keeps max_ops enough (bfo__min_ops) */
    r->self = bfo__null_handle();
    if (!bfo__slot_reserve(e))
        return BFO_ERR_NO_MEMORY;
    if (BFO__UNLIKELY(e->nrevoked) && bfo__ctx_revoked(e, env->ctx))
        return bfo__revoked_feed(e, r);
    if (peer >= 0) /* it waits on that peer (bfo_engine_detect.h, >>work) */
        bfo__peer_work(e, peer);
    {
        const int i = e->ux_head >= 0 ? bfo__ux_match(e, r) : -1;
        if (i >= 0) {
            bfo_uxm *u = bfo__ux_at(e, i);
            bfo__ux_unlink(e, i);
            bfo__recv_take(e, r, u->peer, &u->f);
            bfo__credit_return(e, u->peer, &u->f);
            bfo__uxm_put(e, i);
            bfo__run_failed(e);
            return BFO_OK;
        }
    }
    if ((peer >= 0 ? e->peers[peer].unreachable : bfo__all_unreachable(e)) &&
        !bfo__still_coming(e, peer))
        return bfo__gone_feed(e, r);
    if (BFO__UNLIKELY(peer < 0 && e->acked_n != e->failed_n)) /* a failure not acknowledged */
        return bfo__pending_feed(e, r);
    bfo__posted_add(e, rr);
    return BFO_OK;
}

/* bfo_irecv is always inlined: the attribute goes on a declaration before
 * the definition, here; not on bfo_engine.h's prototype, which a part
 * compiled before the rest of bfo_engine.h (make check-headers) sees after
 * the definition, where clang refuses it. */
static inline int bfo_irecv(bfo_engine *e, bfo_request *r, void *buf, size_t cap, int peer,
                            uint32_t ctx, int tag, uint64_t now) BFO__ALWAYS_INLINE;

/* bfo_irecv: see THE API in bfo_engine.h. */
static inline int bfo_irecv(bfo_engine *e, bfo_request *r, void *buf, size_t cap, int peer,
                            uint32_t ctx, int tag, uint64_t now)
{
    bfo_envelope env;
    env.peer = peer;
    env.ctx = ctx;
    env.src = peer;
    env.tag = tag;
    env.flags = 0;
    return bfo__irecv(e, r, buf, cap, NULL, &env, now);
}

/* bfo_irecv_env: see THE API in bfo_engine.h. */
static inline int bfo_irecv_env(bfo_engine *e, bfo_request *r, void *buf, size_t cap,
                                const bfo_envelope *env, uint64_t now)
{
    return bfo__irecv(e, r, buf, cap, NULL, env, now);
}

/* One buffer, however it was described: an iovec of one segment (empty
 * ones aside) is one.  *buf gets it. */
static inline int bfo__data_flat(const bfo_data *d, void **buf)
{
    int seen = 0;
    if (d->kind == BFO_DATA_CONTIG) {
        *buf = d->buf;
        return 1;
    }
    if (d->kind != BFO_DATA_IOV)
        return 0;
    *buf = NULL;
    for (int i = 0; i < d->nsegs; i++)
        if (d->segs[i].len) {
            if (seen++)
                return 0;
            *buf = d->segs[i].base;
        }
    return 1;
}

/* bfo_isend_data_env: see THE API in bfo_engine.h. */
static inline int bfo_isend_data_env(bfo_engine *e, bfo_request *r, const bfo_data *d,
                                     const bfo_envelope *env, uint64_t now)
{
    void *buf;
    if (!bfo_data_valid(d, 1))
        return BFO_ERR_INVALID;
    if (bfo__data_flat(d, &buf)) /* the contiguous path */
        return bfo__isend(e, r, buf, d->len, NULL, env, now);
    return bfo__isend(e, r, NULL, d->len, d, env, now);
}

/* bfo_irecv_data_env: see THE API in bfo_engine.h. */
static inline int bfo_irecv_data_env(bfo_engine *e, bfo_request *r, const bfo_data *d,
                                     const bfo_envelope *env, uint64_t now)
{
    void *buf;
    if (!bfo_data_valid(d, 0))
        return BFO_ERR_INVALID;
    if (bfo__data_flat(d, &buf))
        return bfo__irecv(e, r, buf, d->len, NULL, env, now);
    return bfo__irecv(e, r, NULL, d->len, d, env, now);
}

/* bfo_isend_data: see THE API in bfo_engine.h. */
static inline int bfo_isend_data(bfo_engine *e, bfo_request *r, const bfo_data *d, int peer,
                                 uint32_t ctx, int tag, uint64_t now)
{
    bfo_envelope env;
    env.peer = peer;
    env.ctx = ctx;
    env.src = e->cfg.rank;
    env.tag = tag;
    env.flags = 0;
    return bfo_isend_data_env(e, r, d, &env, now);
}

/* bfo_irecv_data: see THE API in bfo_engine.h. */
static inline int bfo_irecv_data(bfo_engine *e, bfo_request *r, const bfo_data *d, int peer,
                                 uint32_t ctx, int tag, uint64_t now)
{
    bfo_envelope env;
    env.peer = peer;
    env.ctx = ctx;
    env.src = peer;
    env.tag = tag;
    env.flags = 0;
    return bfo_irecv_data_env(e, r, d, &env, now);
}

/* >>api_query - what a layer asks ----------------------------------------- */

/* bfo_test: see THE API in bfo_engine.h. */
static inline int bfo_test(const bfo_request *r) { return r->complete; }

/* bfo_rail_state: see THE API in bfo_engine.h. */
static inline int bfo_rail_state(const bfo_engine *e, int peer, int rail)
{
    if (!bfo__in_range(peer, e->cfg.nranks) || peer == e->cfg.rank || !bfo__in_range(rail, e->cfg.nrails))
        return 0;
    return e->peers[peer].rail[rail].fsm.cs;
}

/* bfo_rail_rate: see THE API in bfo_engine.h. */
static inline uint64_t bfo_rail_rate(const bfo_engine *e, int peer, int rail)
{
    if (!bfo__in_range(peer, e->cfg.nranks) || peer == e->cfg.rank || !bfo__in_range(rail, e->cfg.nrails))
        return 0;
    return e->peers[peer].rail[rail].rate.rate * 1000;
}

/* bfo_rail_best_other_rate: see THE API in bfo_engine.h. */
static inline uint64_t bfo_rail_best_other_rate(const bfo_engine *e, int peer, int rail)
{
    if (!bfo__in_range(peer, e->cfg.nranks) || peer == e->cfg.rank || !bfo__in_range(rail, e->cfg.nrails))
        return 0;
    return bfo__best_rate(e, peer, rail) * 1000;
}

/* bfo_rail_probe_timeout: see THE API in bfo_engine.h. */
static inline uint64_t bfo_rail_probe_timeout(const bfo_engine *e, int peer, int rail)
{
    if (!bfo__in_range(peer, e->cfg.nranks) || peer == e->cfg.rank || !bfo__in_range(rail, e->cfg.nrails))
        return 0;
    return bfo__probe_timeout(e, &e->peers[peer].rail[rail]);
}

/* bfo_rail_rtt: see THE API in bfo_engine.h. */
static inline uint64_t bfo_rail_rtt(const bfo_engine *e, int peer, int rail)
{
    if (!bfo__in_range(peer, e->cfg.nranks) || peer == e->cfg.rank || !bfo__in_range(rail, e->cfg.nrails))
        return 0;
    return e->peers[peer].rail[rail].det.srtt;
}

/* bfo_engine_unexpected_count: see THE API in bfo_engine.h. */
static inline int bfo_engine_unexpected_count(const bfo_engine *e)
{
    int n = 0;
    for (int i = e->ux_head; i >= 0; i = bfo__ux_at(e, i)->an)
        n++;
    return n;
}

/* bfo_engine_out_of_order_count: see THE API in bfo_engine.h. */
static inline int bfo_engine_out_of_order_count(const bfo_engine *e) { return bfo__ooo_count(e); }

/* bfo_engine_unposted_count: see THE API in bfo_engine.h. */
static inline int bfo_engine_unposted_count(const bfo_engine *e)
{
    int n = 0;
    for (int i = e->fail_head; i >= 0; i = bfo__op_at(e, i)->next)
        n++;
    return n;
}

/* bfo_peer_waiting_count: see THE API in bfo_engine.h. */
static inline int bfo_peer_waiting_count(const bfo_engine *e, int peer)
{
    int n = 0;
    if (!bfo__in_range(peer, e->cfg.nranks))
        return 0;
    for (int i = e->peers[peer].pend_head; i >= 0; i = bfo__op_at(e, i)->next)
        n++;
    return n;
}

/* bfo_peer_reachable: see THE API in bfo_engine.h. */
static inline int bfo_peer_reachable(const bfo_engine *e, int peer)
{
    return bfo__in_range(peer, e->cfg.nranks) &&
           (!e->peers[peer].unreachable || bfo__still_coming(e, peer));
}

/* bfo_peer_left: see THE API in bfo_engine.h. */
static inline int bfo_peer_left(const bfo_engine *e, int peer)
{
    return bfo__in_range(peer, e->cfg.nranks) && e->peers[peer].left != 0;
}

/* bfo_done_pop: see THE API in bfo_engine.h. */
static inline bfo_request *bfo_done_pop(bfo_engine *e)
{
    bfo_request *r = e->done_head;
    if (r && !(e->done_head = r->done_next))
        e->done_tail = NULL;
    return r;
}

/* >>cancel - a request cancelled ------------------------------------------ */

/* bfo_cancel: see THE API in bfo_engine.h. */
static inline int bfo_cancel(bfo_engine *e, bfo_request *r, uint64_t now)
{
    if (!r || r->complete)
        return r ? BFO_ERR_TOO_LATE : BFO_ERR_INVALID;
    if (bfo_handle_is_null(r->self)) { /* a posted receive holds none: in its bin, or not ours */
        if (r->kind != BFO_REQ_RECV || r->cs != BFO_RECV_ST_POSTED || !bfo__unpost(e, r))
            return BFO_ERR_INVALID;
    } else if (bfo__handle_get(e, r->self) != r) {
        return BFO_ERR_INVALID;
    } else if (r->kind == BFO_REQ_RECV) { /* matched, or a matched probe holds it */
        return BFO_ERR_TOO_LATE;
    } else if (r->answered || r->outstanding != 1 || r->peer == e->cfg.rank ||
               !bfo_send_accepts(r->cs, BFO_EV_CANCEL_REQUESTED) || !bfo__first_waits(e, r)) {
        return BFO_ERR_TOO_LATE;
    }
    if (now > e->now)
        e->now = now;
    bfo__req_feed(e, r, BFO_EV_CANCEL_REQUESTED, NULL);
    bfo__run_failed(e);
    return BFO_OK;
}

/* >>probe - unexpected messages probed, taken, received ------------------- */

/* The oldest unexpected message a receive with envelope env would take,
 * or -1. */
static inline int bfo__ux_find(const bfo_engine *e, const bfo_envelope *env)
{
    bfo_request probe;
    probe.peer = env->peer;
    probe.ctx = env->ctx;
    probe.src = env->src;
    probe.want_tag = env->tag;
    return bfo__ux_match(e, &probe);
}

static inline int bfo__probe_args_ok(const bfo_engine *e, const bfo_envelope *env,
                                     const bfo_status *st)
{
    return env && st && (unsigned)env->peer + 1u <= (unsigned)e->cfg.nranks &&
           env->src >= BFO_ANY_SOURCE && env->tag >= BFO_ANY_TAG && !env->flags;
}

static inline void bfo__status_of(const bfo_uxm *u, bfo_status *st)
{
    st->source = (int)bfo__frame_src(&u->f);
    st->tag = bfo__frame_tag(&u->f);
    st->peer = u->peer;
    st->length = bfo__frame_len(&u->f);
}

/* bfo_iprobe: see THE API in bfo_engine.h. */
static inline int bfo_iprobe(bfo_engine *e, const bfo_envelope *env, bfo_status *st,
                             uint64_t now)
{
    int i;
    if (!bfo__probe_args_ok(e, env, st))
        return BFO_ERR_INVALID;
    if (now > e->now)
        e->now = now;
    i = bfo__ux_find(e, env);
    if (i < 0)
        return 0;
    bfo__status_of(bfo__ux_at(e, i), st);
    return 1;
}

/* bfo_improbe: see THE API in bfo_engine.h. */
static inline int bfo_improbe(bfo_engine *e, bfo_request *msg, const bfo_envelope *env,
                              bfo_status *st, uint64_t now)
{
    int i;
    if (!msg || !bfo__probe_args_ok(e, env, st))
        return BFO_ERR_INVALID;
    if (now > e->now)
        e->now = now;
    i = bfo__ux_find(e, env);
    if (i < 0)
        return 0;
    bfo__req_init(msg, BFO_REQ_RECV, NULL, 0, env);
    msg->data = NULL; /* bfo_imrecv_data sets it */
    msg->cs = bfo_recv_machine.start;
    msg->self = bfo__handle_alloc(e, msg);
    if (bfo_handle_is_null(msg->self))
        return BFO_ERR_NO_MEMORY;
    bfo__ux_unlink(e, i);
    msg->held = i;
    bfo__status_of(bfo__ux_at(e, i), st);
    {
        const bfo__input in = { &bfo__ux_at(e, i)->f, bfo__ux_at(e, i)->peer, 0, 0, 0 };
        bfo__recv_feed(e, msg, BFO_EV_PROBE_MATCHED, &in);
    }
    return 1;
}

/* bfo_imrecv: see THE API in bfo_engine.h. */
static inline int bfo_imrecv(bfo_engine *e, bfo_request *msg, void *buf, size_t cap,
                             uint64_t now)
{
    int i;
    if (!msg || (cap && !buf && !msg->data) || msg->kind != BFO_REQ_RECV || msg->complete ||
        msg->cs != BFO_RECV_ST_CLAIMED || msg->held < 0 || bfo__handle_get(e, msg->self) != msg)
        return BFO_ERR_INVALID;
    if (now > e->now)
        e->now = now;
    i = msg->held;
    msg->held = -1;
    msg->buf = (char *)buf;
    msg->cap = cap;
    bfo__recv_take(e, msg, bfo__ux_at(e, i)->peer, &bfo__ux_at(e, i)->f);
    bfo__credit_return(e, bfo__ux_at(e, i)->peer, &bfo__ux_at(e, i)->f);
    bfo__uxm_put(e, i);
    bfo__run_failed(e);
    return BFO_OK;
}

/* bfo_imrecv_data: see THE API in bfo_engine.h. */
static inline int bfo_imrecv_data(bfo_engine *e, bfo_request *msg, const bfo_data *d,
                                  uint64_t now)
{
    void *buf;
    int rc;
    if (!bfo_data_valid(d, 0))
        return BFO_ERR_INVALID;
    if (bfo__data_flat(d, &buf))
        return bfo_imrecv(e, msg, buf, d->len, now);
    if (!msg || msg->cs != BFO_RECV_ST_CLAIMED)
        return BFO_ERR_INVALID;
    msg->data = d; /* bfo_imrecv keeps it: no buffer, cap d->len */
    msg->dpos.seg = 0;
    msg->dpos.start = 0;
    rc = bfo_imrecv(e, msg, NULL, d->len, now);
    return rc;
}

/* >>leave - this rank leaves ---------------------------------------------- */

/* bfo_engine_leave: see THE API in bfo_engine.h. */
static inline int bfo_engine_leave(bfo_engine *e, uint64_t now)
{
    const bfo_config *c = &e->cfg;
    if (now > e->now)
        e->now = now;
    if (e->left)
        return BFO_OK;
    e->left = 1;
    /* a peer reached through a relay: a BYE through it, first (the
     * relay's rails part next) */
    for (int i = 0; i < c->nranks; i++)
        if (e->peers[i].fsm.cs == BFO_PEER_ST_RELAYED)
            bfo__relay_bye(e, i);
    /* a BYE on every UP or PROBING rail of every peer that did not leave
     * (its rails are LEFT already), every connection parted */
    for (int i = 0; i < c->nranks; i++)
        for (int k = 0; i != c->rank && k < c->nrails; k++)
            if (bfo_rail_accepts(e->peers[i].rail[k].fsm.cs, BFO_EV_LEAVE_REQUESTED))
                bfo__rail_step(e, i, k, BFO_EV_LEAVE_REQUESTED, NULL);
    for (int i = 0; i < c->nranks; i++) /* this rank itself too: nothing new goes out */
        bfo__peer_step(e, i, BFO_PEER_EV_LEAVE_REQUESTED);
    /* every request fails: the posted receives (they hold no handle)
     * leave their bins first, then every request with a handle */
    {
        bfo_request *gone = NULL;
        for (int k = 0; k <= e->bin_mask && e->posted_count; k++)
            for (int any = 0; any < 2; any++) {
                bfo__rbin *b = any ? &e->rbin_any[k] : &e->rbin_src[k];
                for (bfo_request *r = b->head, *next; r; r = next) {
                    next = r->next;
                    r->next = gone;
                    gone = r;
                }
                b->head = b->tail = NULL;
            }
        e->posted_count = e->posted_any = 0;
        for (bfo_request *r = gone, *next; r; r = next) {
            next = r->next;
            r->next = NULL;
            bfo__req_gone(e, r);
        }
    }
    for (int i = 0; i < e->slotp.n; i++) {
        bfo_request *r = bfo__slot_at(e, i)->req;
        if (r && !r->complete)
            bfo__req_gone(e, r);
    }
    /* nobody receives what waits unexpected, or out of order */
    while (e->ux_head >= 0) {
        const int u = e->ux_head;
        bfo__ux_unlink(e, u);
        bfo__uxm_put(e, u);
    }
    for (int i = 0; i < c->nranks; i++) {
        bfo_peer *p = &e->peers[i];
        for (int k = p->ooo_head, nk; k >= 0; k = nk) {
            nk = bfo__ux_at(e, k)->next;
            bfo__uxm_put(e, k);
        }
        p->ooo_head = p->ooo_tail = -1;
        for (int k = p->pend_head, nk; k >= 0; k = nk) { /* waiting for a rail: fail */
            nk = bfo__op_at(e, k)->next;
            bfo__op_fail_later(e, bfo__op_at(e, k));
        }
        p->pend_head = p->pend_tail = -1;
    }
    for (int k = e->self_head, nk; k >= 0; k = nk) { /* to itself, not taken yet: fail */
        nk = bfo__op_at(e, k)->next;
        bfo__op_fail_later(e, bfo__op_at(e, k));
    }
    e->self_head = e->self_tail = -1;
    bfo__deferred_note(e);
    bfo__run_failed(e);
    return BFO_OK;
}

/* bfo_engine_left: see THE API in bfo_engine.h. */
static inline int bfo_engine_left(const bfo_engine *e) { return e->left && !e->byes_out; }

/* >>progress - timers: heartbeats, timeouts, back-off, rates, relay ------- */

/* Which peers have work (bfo_engine_detect.h, >>work): every request not
 * complete marks its peer, every receive posted naming one (an ANY_SOURCE
 * one: every peer connected; a peer never needed that a receive has named
 * for a heartbeat is needed), every peer
 * with an op waiting for a rail, the relay of a relayed peer with work
 * (its frames go through it); then a peer with none for a heartbeat is
 * quiet, and one found with work after a quiet spell is woken (its work
 * began without a post: a message of its matched an ANY_SOURCE receive).
 * Every quarter heartbeat: a scan of the request slots and the bins. */
static BFO__COLD void bfo__work_sweep(bfo_engine *e)
{
    const bfo_config *c = &e->cfg;
    int any_left = 0; /* with an ANY_SOURCE receive posted: a peer needed, not gone */
    for (int i = 0; i < e->slotp.n; i++) {
        const bfo_request *r = bfo__slot_at(e, i)->req;
        if (r && !r->complete && bfo__in_range(r->peer, c->nranks))
            bfo__detect_work(e, &e->peers[r->peer]);
    }
    for (int k = 0; k <= e->bin_mask && e->posted_count; k++)
        for (const bfo_request *r = e->rbin_src[k].head; r; r = r->next)
            if (bfo__in_range(r->peer, c->nranks)) {
                bfo__detect_work(e, &e->peers[r->peer]);
                e->peers[r->peer].awaited |= 1;
            }
    for (int i = 0; i < c->nranks; i++) {
        if (i == c->rank)
            continue;
        if (e->peers[i].pend_head >= 0)
            bfo__detect_work(e, &e->peers[i]);
        /* a receive naming a peer never needed waits for it to connect
         * (its first message does); one that has waited a heartbeat
         * needs it: whether the peer is still there only a connection
         * tells, so the receive ends PEER_UNREACHABLE if it is gone
         * rather than waiting for good (every rail down before it ever
         * connected, or the peer dead before its first word) */
        if ((e->peers[i].awaited & 1) && bfo__peer_fresh(e, i)) {
            int sweeps = (e->peers[i].awaited >> 1) + 1;
            e->peers[i].awaited = sweeps << 1;
            if (sweeps > 4) { /* sweeps come every quarter heartbeat */
                e->peers[i].awaited = 0;
                bfo__peer_need(e, i);
            }
        } else
            e->peers[i].awaited = 0;
        /* an ANY_SOURCE receive waits on every peer it may hear from: it
         * ends PEER_UNREACHABLE only once none is left, which only a
         * watched peer can tell (one never needed: below) */
        if (e->posted_any && !e->peers[i].unreachable && !bfo__peer_fresh(e, i)) {
            bfo__detect_work(e, &e->peers[i]);
            any_left = 1;
        }
        /* messages of a peer never needed wait for an earlier one (they
         * came without a connection of its: through a relay, or a
         * transport's frame ahead of its word): it is in use, and only a
         * connection tells whether the earlier one may still come */
        if (e->peers[i].ooo_head >= 0 && bfo__peer_fresh(e, i))
            bfo__peer_need(e, i);
        /* an op given to the backend and not back (a PROBEACK, a CREDIT
         * into a rail gone silent) is work: detection must fail that rail
         * so that the op completes */
        for (int k = 0; k < c->nrails; k++)
            if (e->peers[i].rail[k].rate.inflight > 0)
                bfo__detect_work(e, &e->peers[i]);
    }
    /* an ANY_SOURCE receive posted, and every peer ever needed gone: the
     * peers never needed are all it may still hear from, and whether they
     * are left only a connection tells (connections on first use); each is
     * needed, so the receive waits on them, or ends once they are gone too */
    for (int i = 0; i < c->nranks && e->posted_any && !any_left; i++)
        if (bfo__peer_fresh(e, i))
            bfo__peer_need(e, i);
    for (int i = 0; i < c->nranks; i++) /* a relayed peer's work is its relay's too */
        if (i != c->rank && bfo__in_range(e->peers[i].relay.via, c->nranks) &&
            !bfo__detect_quiet(e, &e->peers[i]))
            bfo__detect_work(e, &e->peers[e->peers[i].relay.via]);
    for (int i = 0; i < c->nranks; i++) {
        bfo_peer *p = &e->peers[i];
        if (i == c->rank)
            continue;
        if (!bfo__detect_quiet(e, p) && p->quiet)
            bfo__peer_wake(e, i);
        else
            p->quiet = bfo__detect_quiet(e, p);
    }
}

/* bfo_engine_progress: see THE API in bfo_engine.h. */
static inline void bfo_engine_progress(bfo_engine *e, uint64_t now)
{
    const bfo_config *c = &e->cfg;
    if (now > e->now)
        e->now = now;
    if (e->stage_wait_head >= 0) /* described data waiting for a staging buffer */
        bfo__stage_kick(e);
    if (BFO__UNLIKELY(e->revoke_sweep)) /* messages on a revoked context */
        bfo__revoke_sweep(e);
    /* not called for longer than a heartbeat: that time is no evidence */
    if (e->timers_at && e->now > e->timers_at + c->heartbeat_ns)
        bfo__detect_on_gap(e, e->now - e->timers_at);
    e->timers_at = e->now;
    if (e->now - e->work_at >= c->heartbeat_ns / 4) {
        e->work_at = e->now;
        bfo__work_sweep(e);
    }
    for (int i = 0; i < c->nranks; i++) {
        bfo_peer *p = &e->peers[i];
        uint64_t proc_rx, answered; /* the peer's process last heard, on any rail; its latest probe answered */
        if (i == c->rank || p->unreachable) {
            /* a peer that said BYE, whose messages sent before it never all came */
            if (p->left == BFO__LEFT_OWED && !e->left &&
                e->now - p->left_at >= c->unreachable_grace_ns)
                bfo__peer_step(e, i, BFO_PEER_EV_GRACE_EXPIRED); /* close_out */
            continue;
        }
        proc_rx = bfo__detect_proc_rx(e, p, &answered);
        int dormant = 0, suspect = 0; /* one rail first: bfo__rails_suspect */
        for (int k = 0; k < c->nrails; k++) {
            bfo_rail_link *rs = &p->rail[k];
            int ev = -1;
            switch (rs->fsm.cs) {
            case BFO_RAIL_ST_DORMANT: dormant = 1; break;
            case BFO_RAIL_ST_CONNECTING: suspect |= bfo__rail_suspect(e, rs); break;
            case BFO_RAIL_ST_UP:
            case BFO_RAIL_ST_DEMOTED:
                bfo__rate_on_progress(e, i, k, proc_rx); /* a lag sample */
                ev = bfo__detect_due(e, rs, proc_rx, answered, p->quiet);
                if (ev < 0)
                    suspect |= bfo__rail_suspect(e, rs);
                break;
            case BFO_RAIL_ST_PROBING: ev = bfo__detect_due(e, rs, proc_rx, answered, 0); break;
            case BFO_RAIL_ST_FAILED: /* its back-off over: reconnect, or no more */
                if (e->now >= rs->deadline)
                    ev = rs->attempts > c->max_reconnects ? BFO_EV_RETRIES_EXHAUSTED : BFO_EV_BACKOFF_EXPIRED;
                break;
            default: break;
            }
            if (ev >= 0)
                bfo__rail_step(e, i, k, ev, NULL);
        }
        if (BFO__UNLIKELY(dormant && suspect))
            bfo__peer_need_rest(e, i);
        if (c->nrails > 1 && p->fsm.cs == BFO_PEER_ST_REACHABLE)
            bfo__rails_review(e, i);
        if (p->fsm.cs == BFO_PEER_ST_DOWN && p->down_since && e->now - p->down_since >= c->unreachable_grace_ns)
            bfo__peer_unreachable(e, i);
    }
    if (c->relay && !e->left)
        bfo__relay_progress(e);
    bfo__run_failed(e);
}

#ifdef __cplusplus
}
#endif
#endif /* BFO_ENGINE_API_H */
