// SPDX-License-Identifier: BSD-3-Clause
/* bfo_engine_pools.h - memory: pools that grow, request handles, operations
 * and their lists, the buffers of unexpected messages.
 *
 * Part of bfo_engine.h, level 2 of its parts (docs/engine-design.md, "The
 * parts"): include bfo_engine.h, not this.  It includes bfo_engine_hooks.h
 * (and so every part below); a call to a part above goes through a
 * prototype in bfo_engine_hooks.h: here bfo__rail_unqueued.
 *
 * Sections (grep '>>name'): >>pools, >>handles, >>ops, >>op_lists,
 * >>ux_buffers.
 */
#ifndef BFO_ENGINE_POOLS_H
#define BFO_ENGINE_POOLS_H

#include "bfo_engine_hooks.h"

#ifdef __cplusplus
extern "C" {
#endif

/* >>pools - pools that grow in chunks ------------------------------------- */

/* The entry i of a pool of elements of size sz. */
static inline void *bfo__pool_at(const bfo__pool *p, int i, size_t sz)
{
    if (BFO__LIKELY(i < p->n0))
        return p->base + (size_t)i * sz;
    i -= p->n0;
    return p->chunk[i >> p->shift] + (size_t)(i & ((1 << p->shift) - 1)) * sz;
}
static inline bfo_op *bfo__op_at(const bfo_engine *e, int i)
{
    return (bfo_op *)bfo__pool_at(&e->opp, i, sizeof(bfo_op));
}
static inline bfo_slot *bfo__slot_at(const bfo_engine *e, int i)
{
    return (bfo_slot *)bfo__pool_at(&e->slotp, i, sizeof(bfo_slot));
}
static inline bfo_uxm *bfo__ux_at(const bfo_engine *e, int i)
{
    return (bfo_uxm *)bfo__pool_at(&e->uxp, i, sizeof(bfo_uxm));
}

/* One more chunk for a pool (sz bytes an entry); the index of its first
 * entry, or -1 (no grow, BFO_MAX_CHUNKS reached, or grow refused). */
static inline int bfo__pool_grow(bfo_engine *e, bfo__pool *p, size_t sz)
{
    void *m;
    const int per = 1 << p->shift;
    if (!e->cfg.grow || p->chunks == BFO_MAX_CHUNKS || p->n > 0x7fffffff - per)
        return -1;
    e->grow_calls++;
    m = e->cfg.grow(e->cfg.grow_ctx, sz * (size_t)per);
    if (!m) {
        e->grow_failures++;
        return -1;
    }
    p->chunk[p->chunks++] = (char *)m;
    p->n += per;
    return p->n - per;
}

static inline void *bfo__carve(char **p, size_t n)
{
    void *r = *p;
    *p += bfo__align(n);
    return r;
}

/* A pool's first block, n entries of sz bytes, and its chunk table, carved
 * from the engine's memory; chunks grown later have a power of two of
 * entries, at least n (at least 256). */
static inline void bfo__pool_init(bfo__pool *pl, char **p, int n, size_t sz)
{
    pl->base = (char *)bfo__carve(p, sz * (size_t)n);
    pl->chunk = (char **)bfo__carve(p, sizeof(char *) * BFO_MAX_CHUNKS);
    pl->n0 = pl->n = n;
    pl->chunks = 0;
    pl->live = 0;
    for (pl->shift = 8; (1 << pl->shift) < n && pl->shift < 20; pl->shift++)
        ;
}

/* New entries [from, to) onto the free lists (in order: the lowest first). */
static inline void bfo__ops_free_range(bfo_engine *e, int from, int to)
{
    for (int i = to - 1; i >= from; i--) {
        bfo_op *op = bfo__op_at(e, i);
        op->idx = i;
        op->gen = 1;
        op->posted = 0;
        op->next = i + 1 < to ? i + 1 : e->op_free;
    }
    if (from < to)
        e->op_free = from;
}
static inline void bfo__slots_free_range(bfo_engine *e, int from, int to)
{
    for (int i = to - 1; i >= from; i--) {
        bfo_slot *s = bfo__slot_at(e, i);
        s->req = NULL;
        s->gen = 1;
        s->next = i + 1 < to ? i + 1 : e->slot_free;
    }
    if (from < to)
        e->slot_free = from;
}
static inline void bfo__ux_free_range(bfo_engine *e, int from, int to)
{
    for (int i = to - 1; i >= from; i--) {
        bfo_uxm *u = bfo__ux_at(e, i);
        u->used = 0;
        u->data = NULL;
        u->next = i + 1 < to ? i + 1 : e->uxm_free;
    }
    if (from < to)
        e->uxm_free = from;
}

/* >>handles - request handles: slots with a generation -------------------- */

static inline bfo_handle bfo__null_handle(void)
{
    bfo_handle h;
    h.index = 0;
    h.gen = 0;
    return h;
}

/* The slot pool is empty: one more chunk of it (bfo_config.grow), the
 * index of a free slot, or -1. */
static BFO__COLD int bfo__slot_grow(bfo_engine *e)
{
    int i = bfo__pool_grow(e, &e->slotp, sizeof(bfo_slot));
    if (i >= 0)
        bfo__slots_free_range(e, i, e->slotp.n);
    return i;
}

/* Slots are counted, not only listed: slots_in_use is the handles taken
 * plus the receives posted without one (a reservation: bfo__slot_reserve),
 * so the free list always holds a slot for each reservation, and a
 * receive that matches a rendezvous takes its handle then (bfo__self)
 * without a way to fail.  An eager receive never takes one: nothing
 * names it (docs/engine-design.md, "Handles"). */
static inline int bfo__slot_reserve(bfo_engine *e)
{
    if (BFO__UNLIKELY(e->slots_in_use >= e->slotp.n) && bfo__slot_grow(e) < 0)
        return 0;
    e->slots_in_use++;
    return 1;
}

/* The free list's first slot, for r: counted already. */
static BFO__HOT bfo_handle bfo__handle_take(bfo_engine *e, bfo_request *r)
{
    bfo_handle h;
    const int i = e->slot_free;
    bfo_slot *s = bfo__slot_at(e, i);
    e->slot_free = s->next;
    s->req = r;
    h.index = (uint32_t)i;
    h.gen = s->gen;
    return h;
}

static BFO__HOT bfo_handle bfo__handle_alloc(bfo_engine *e, bfo_request *r)
{
    if (!bfo__slot_reserve(e))
        return bfo__null_handle();
    return bfo__handle_take(e, r);
}

/* A request's handle: a receive posted with a reservation takes it the
 * first time it is asked for (to answer a rendezvous, to post an op). */
static BFO__COLD void bfo__self_take(bfo_engine *e, bfo_request *r)
{
    if (e->slot_free >= 0) /* always: reserved */
        r->self = bfo__handle_take(e, r);
}
static inline bfo_handle bfo__self(bfo_engine *e, bfo_request *r)
{
    if (BFO__UNLIKELY(bfo_handle_is_null(r->self)))
        bfo__self_take(e, r);
    return r->self;
}

/* A finishing request gives its own handle back (or its reservation):
 * live and current by construction (taken at bfo_isend, bfo_irecv or
 * bfo__self, released once, here), so unlike a handle a peer names it
 * needs no check. */
static inline void bfo__handle_release(bfo_engine *e, const bfo_request *r)
{
    bfo_slot *s;
    e->slots_in_use--;
    if (bfo_handle_is_null(r->self))
        return;
    s = bfo__slot_at(e, r->self.index);
    s->req = NULL;
    s->gen += 2; /* odd from 1 on: never 0, the null handle's */
    s->next = e->slot_free;
    e->slot_free = (int)r->self.index;
}

/* The live request a handle names, or NULL (null, out of range, recycled).
 * The null handle has generation 0, which no slot ever has. */
static inline bfo_request *bfo__handle_get(const bfo_engine *e, bfo_handle h)
{
    if (h.index >= (uint32_t)e->slotp.n || bfo__slot_at(e, h.index)->gen != h.gen)
        return NULL;
    return bfo__slot_at(e, h.index)->req;
}

/* The request a peer's frame may name, or NULL: a receive takes its handle
 * when a rendezvous matched it (bfo__self), and the peer learns it from
 * the answer (ACK, PUT, RECVERRNOTIFY); a frame naming a receive still
 * posted is forged. */
static inline bfo_request *bfo__handle_named(const bfo_engine *e, bfo_handle h)
{
    bfo_request *r = bfo__handle_get(e, h);
    return r && !(r->kind == BFO_REQ_RECV && r->cs == BFO_RECV_ST_POSTED) ? r : NULL;
}

/* >>ops - operations posted to the backend -------------------------------- */

/* Ops are set up a batch at a time, when the free list runs out: the
 * pool is sized for the worst case (bfo__min_ops: every request's ops on
 * every rail), which a job rarely reaches, and setting it all up at init
 * made every page of it resident (12 MiB of pml/bfo's 21 MiB PSS). */
#define BFO__OPS_BATCH 64

/* The op free list is empty: the next batch of entries never used set up
 * (one more chunk first when every entry is), the index of a free op, or
 * -1. */
static BFO__COLD int bfo__op_more(bfo_engine *e)
{
    bfo__pool *p = &e->opp;
    if (p->live == p->n && bfo__pool_grow(e, p, sizeof(bfo_op)) < 0)
        return -1;
    const int to = p->n - p->live > BFO__OPS_BATCH ? p->live + BFO__OPS_BATCH : p->n;
    bfo__ops_free_range(e, p->live, to);
    p->live = to;
    return e->op_free;
}

static BFO__HOT bfo_op *bfo__op_alloc(bfo_engine *e, int type, int peer)
{
    int i = e->op_free;
    bfo_op *op;
    if (BFO__UNLIKELY(i < 0) && (i = bfo__op_more(e)) < 0)
        return NULL;
    op = bfo__op_at(e, i);
    e->op_free = op->next;
    e->ops_in_use++;
    op->next = -1;
    op->type = type;
    op->peer = peer;
    op->rail = -1;
    op->posted = 0;
    op->fixed_rail = -1;
    op->about_rail = -1;
    op->owner = bfo__null_handle();
    op->rseq = 0;
    op->off = op->len = 0;
    op->payload = NULL;
    op->payload_len = op->hdr_len = 0;
    return op;
}

/* An engine-owned control op, within the control budget; NULL beyond it. */
static inline bfo_op *bfo__ctl_alloc(bfo_engine *e, int type, int peer)
{
    bfo_op *op;
    if (e->ctl_in_use >= bfo__ctl_budget(&e->cfg) || !(op = bfo__op_alloc(e, type, peer)))
        return NULL;
    e->ctl_in_use++;
    return op;
}

/* The bytes an op puts on its rail (q_bytes): a frame's, or an RDMA range. */
static inline uint64_t bfo__op_qbytes(const bfo_op *op)
{
    return bfo__op_rdma(op->type) ? op->len : op->hdr_len + op->payload_len;
}

/* The op is back from the backend (completed: ok says how; or never taken). */
static inline void bfo__op_unpost(bfo_engine *e, bfo_op *op, int ok)
{
    if (op->posted) {
        op->posted = 0;
        bfo__rail_unqueued(e, op, bfo__op_qbytes(op), ok);
    }
}

static inline void bfo__op_free(bfo_engine *e, bfo_op *op)
{
    int i = op->idx;
    bfo__op_unpost(e, op, 0);
    if (bfo_handle_is_null(op->owner))
        e->ctl_in_use--;
    op->gen += 2; /* odd from 1 on: a token is never 0 */
    op->next = e->op_free;
    e->op_free = i;
    e->ops_in_use--;
}

static inline uint64_t bfo__token(const bfo_op *op)
{
    return ((uint64_t)op->gen << 32) | (uint32_t)op->idx;
}

/* >>op_lists - the deferred lists: failed, pending, kicked ---------------- */

/* deferred follows the three lists it sums up: called where any of them
 * changes. */
static inline void bfo__deferred_note(bfo_engine *e)
{
    e->deferred = e->fail_head >= 0 || e->self_head >= 0 || e->gate_kick >= 0;
}

/* The peer's ops waiting in its pending list may go now: bfo__gate_kick,
 * at the end of the entry point, looks at that peer (or at every peer,
 * when two or more were noted). */
static inline void bfo__gate_note(bfo_engine *e, int peer)
{
    e->gate_kick = e->gate_kick < 0 || e->gate_kick == peer ? peer : 0x7fffffff;
    e->deferred = 1;
}

/* An op that could not be posted completes with an error, but not inside
 * the action that posted it: it waits in the failed list, which every entry
 * point runs before it returns. */
static inline void bfo__op_fail_later(bfo_engine *e, bfo_op *op)
{
    int i = op->idx;
    op->next = -1;
    if (e->fail_tail >= 0)
        bfo__op_at(e, e->fail_tail)->next = i;
    else
        e->fail_head = i;
    e->fail_tail = i;
    e->deferred = 1;
}

static inline void bfo__pend(bfo_engine *e, bfo_peer *p, bfo_op *op)
{
    op->next = -1;
    if (p->pend_tail >= 0)
        bfo__op_at(e, p->pend_tail)->next = op->idx;
    else
        p->pend_head = op->idx;
    p->pend_tail = op->idx;
}

/* >>ux_buffers - unexpected messages and their payload buffers ------------ */

/* A buffer for len bytes of an unexpected message's payload: a freed one
 * of its class, or carved from the arena (a new arena from grow when it is
 * spent).  0 when over unexpected_budget or out of memory: the frame waits
 * (BFO_ERR_AGAIN). */
static inline int bfo__ux_buf_get(bfo_engine *e, bfo_uxm *u, size_t len)
{
    const int k = bfo__ux_class(len);
    const size_t sz = (size_t)64 << k;
    void *b = e->ux_buf_free[k];
    if (e->ux_bytes_in_use + sz > e->cfg.unexpected_budget)
        return 0;
    if (b) {
        memcpy(&e->ux_buf_free[k], b, sizeof(void *));
    } else {
        if (e->ux_arena_left < sz) {
            size_t want = sz > ((size_t)1 << 20) ? sz : ((size_t)1 << 20);
            uint8_t *m;
            if (!e->cfg.grow)
                return 0;
            e->grow_calls++;
            m = (uint8_t *)e->cfg.grow(e->cfg.grow_ctx, want);
            if (!m) {
                e->grow_failures++;
                return 0;
            }
            e->ux_arena = m;
            e->ux_arena_left = want;
        }
        b = e->ux_arena;
        e->ux_arena += sz;
        e->ux_arena_left -= sz;
    }
    u->data = (uint8_t *)b;
    u->cls = (uint8_t)k;
    e->ux_bytes_in_use += sz;
    return 1;
}

static inline void bfo__ux_buf_put(bfo_engine *e, bfo_uxm *u)
{
    if (!u->data)
        return;
    memcpy(u->data, &e->ux_buf_free[u->cls], sizeof(void *));
    e->ux_buf_free[u->cls] = u->data;
    e->ux_bytes_in_use -= (size_t)64 << u->cls;
    u->data = NULL;
}

/* Unexpected-message entries are set up a batch at a time, as ops are
 * (bfo__op_more): setting all of max_unexpected up at init made every
 * page of them resident (136 KiB of every pml/bfo rank's PSS). */
static BFO__COLD int bfo__uxm_more(bfo_engine *e)
{
    bfo__pool *p = &e->uxp;
    if (p->live == p->n && bfo__pool_grow(e, p, sizeof(bfo_uxm)) < 0)
        return -1;
    const int to = p->n - p->live > BFO__OPS_BATCH ? p->live + BFO__OPS_BATCH : p->n;
    bfo__ux_free_range(e, p->live, to);
    p->live = to;
    return e->uxm_free;
}

static inline int bfo__uxm_take(bfo_engine *e)
{
    int i = e->uxm_free;
    if (BFO__UNLIKELY(i < 0))
        i = bfo__uxm_more(e);
    if (i >= 0) {
        e->uxm_free = bfo__ux_at(e, i)->next;
        bfo__ux_at(e, i)->used = 1;
        bfo__ux_at(e, i)->next = -1;
        e->uxm_in_use++;
    }
    return i;
}

static inline void bfo__uxm_put(bfo_engine *e, int i)
{
    bfo__ux_buf_put(e, bfo__ux_at(e, i));
    bfo__ux_at(e, i)->used = 0;
    bfo__ux_at(e, i)->next = e->uxm_free;
    e->uxm_free = i;
    e->uxm_in_use--;
}

/* Keeps a frame in entry i: its header, and its payload in a buffer of
 * its own.  0 when no buffer is to be had (the entry is given back). */
static inline int bfo__uxm_fill(bfo_engine *e, int i, int peer, const bfo_frame *f)
{
    bfo_uxm *u = bfo__ux_at(e, i);
    u->peer = peer;
    u->f = *f;
    u->data = NULL;
    if (f->payload_len) {
        if (!bfo__ux_buf_get(e, u, f->payload_len)) {
            if (peer != e->cfg.rank &&
                e->ux_bytes_in_use + bfo__credit_cost(f->payload_len) > e->cfg.unexpected_budget)
                e->over_window++;
            bfo__uxm_put(e, i);
            return 0;
        }
        memcpy(u->data, f->payload, f->payload_len);
    }
    u->f.payload = u->data;
    return 1;
}

#ifdef __cplusplus
}
#endif
#endif /* BFO_ENGINE_POOLS_H */
