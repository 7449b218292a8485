// SPDX-License-Identifier: BSD-3-Clause
/* bfo_engine_request.h - a request's life: its ops, finishing and failing, the
 * machines fed, op completion.
 *
 * Part of bfo_engine.h, level 6 of its parts (docs/engine-design.md, "The
 * parts"): include bfo_engine.h, not this.  It includes bfo_engine_match.h
 * (and so every part below); a call to a part above goes through a
 * prototype in bfo_engine_hooks.h: here bfo__recv_feed,
 * bfo__act_send_complete, bfo__send_feed, bfo__rail_step, bfo__run_self,
 * bfo__relay_done.
 *
 * Sections (grep '>>name'): >>request, >>protocol_choice, >>request_ops,
 * >>feed, >>completion.
 */
#ifndef BFO_ENGINE_REQUEST_H
#define BFO_ENGINE_REQUEST_H

#include "bfo_engine_match.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Defined below in this part, called before their definition. */
static BFO__HOT void bfo__op_done(bfo_engine *e, bfo_op *op, int ok);
static inline void bfo__req_feed(bfo_engine *e, bfo_request *r, int ev, const bfo__input *in);
static inline bfo_op *bfo__op_of_token(const bfo_engine *e, uint64_t token);

/* >>request - a request set up, finished, failed for its peer's sake ------ */

/* Field by field rather than a memset of the whole request: an eager message
 * never touches the rendezvous fields at the end, and a receive sets them
 * when it takes a rendezvous (bfo__accept_rzv), a send when it registers
 * its buffer (bfo__req_register, then reg says they are valid). */
static inline void bfo__req_init(bfo_request *r, int kind, void *buf, size_t cap,
                                 const bfo_envelope *env)
{
    r->status = BFO_OK;
    r->source = 0;
    r->tag = 0;
    r->length = 0;
    r->kind = kind;
    r->peer = env->peer;
    r->ctx = env->ctx;
    r->src = env->src;
    r->want_tag = env->tag;
    r->held = -1;
    r->buf = (char *)buf;
    r->cap = cap;
    /* complete, counts, rseq, flags, seq, offsets, remote (the null
     * handle: 0, 0) and next: zero, in a few wide stores */
    memset(&r->complete, 0, offsetof(bfo_request, pseq) - offsetof(bfo_request, complete));
}

/* A request failed for its peer's sake (fail_unreachable), counted by why. */
static inline void bfo__count_gone(bfo_engine *e, int status)
{
    e->stats.unreachable_errors += status == BFO_ERR_PEER_UNREACHABLE;
    e->stats.left_errors += status == BFO_ERR_PEER_LEFT || status == BFO_ERR_LEFT;
    e->stats.failed_errors += status == BFO_ERR_PROC_FAILED || status == BFO_ERR_PROC_FAILED_PENDING;
    e->stats.revoked_errors += status == BFO_ERR_REVOKED;
}

/* bfo__finish's rarer half: the done queue, the registration. */
static BFO__NOINLINE void bfo__finish_more(bfo_engine *e, bfo_request *r)
{
    if (e->cfg.done_queue && !r->sink) { /* a discard receive is the engine's own */
        r->done_next = NULL;
        if (e->done_tail)
            e->done_tail->done_next = r;
        else
            e->done_head = r;
        e->done_tail = r;
    }
    if (r->reg) { /* after this, a peer's RDMA into or out of buf fails */
        r->reg = 0;
        if (e->be.dereg_mem)
            e->be.dereg_mem(e->be.ctx, r->my_reg);
    }
}

static BFO__HOT void bfo__finish(bfo_engine *e, bfo_request *r, int status)
{
    r->status = status;
    r->complete = 1;
    if (BFO__UNLIKELY(e->cfg.done_queue | r->reg))
        bfo__finish_more(e, r);
    bfo__handle_release(e, r);
}

/* The status of a request that fails because nothing more will come from
 * its peer: BFO_ERR_LEFT when this side left, BFO_ERR_PEER_LEFT when the
 * peer said goodbye (for an ANY_SOURCE receive: when every other peer
 * did), else BFO_ERR_PEER_UNREACHABLE. */
static inline int bfo__gone_status(const bfo_engine *e, const bfo_request *r)
{
    int st = BFO_ERR_PEER_LEFT;
    if (e->left)
        st = BFO_ERR_LEFT;
    else if (r->peer >= 0)
        st = e->peers[r->peer].fsm.cs == BFO_PEER_ST_FAILED ? BFO_ERR_PROC_FAILED
             : e->peers[r->peer].left                     ? BFO_ERR_PEER_LEFT
                                                          : BFO_ERR_PEER_UNREACHABLE;
    else
        for (int i = 0; i < e->cfg.nranks; i++)
            if (i != e->cfg.rank && !e->peers[i].left)
                st = st == BFO_ERR_PROC_FAILED || e->peers[i].fsm.cs == BFO_PEER_ST_FAILED
                         ? BFO_ERR_PROC_FAILED
                         : BFO_ERR_PEER_UNREACHABLE;
    return st;
}

/* PEER_UNREACHABLE for a request (the machines take the three reasons
 * alike), and feeding it: the reason waits in r->status (not read before
 * the request completes) for fail_unreachable, which may come later, once
 * the request's operations in flight are back. */
static BFO__COLD int bfo__gone_event(bfo_engine *e, bfo_request *r)
{
    r->status = bfo__gone_status(e, r);
    return BFO_EV_PEER_UNREACHABLE;
}
static BFO__COLD void bfo__req_gone(bfo_engine *e, bfo_request *r)
{
    bfo__req_feed(e, r, bfo__gone_event(e, r), NULL);
}

/* 1 when an op of the send waits in its peer's pending list. */
static inline int bfo__first_waits(const bfo_engine *e, const bfo_request *r)
{
    for (int i = e->peers[r->peer].pend_head; i >= 0; i = bfo__op_at(e, i)->next)
        if (bfo_handle_eq(bfo__op_at(e, i)->owner, r->self))
            return 1;
    return 0;
}

/* >>protocol_choice - registration, and the choice of protocol ------------ */

/* Registers the request's buffer for its role (access: bfo_mem_access);
 * 1 when it is registered so.  Once per request: a restarted message that
 * needs another role (a receive that was to GET and is now a PUT's
 * target) registers again for both, and the old registration is given
 * back (none of its operations is in flight: a restart waits for them).
 * Its keys, one per rail, are kept as RGET and PUT carry them. */
static inline int bfo__req_register(bfo_engine *e, bfo_request *r, unsigned access)
{
    uint32_t keys[BFO_MAX_RAILS];
    uint64_t raddr, handle;
    if (r->reg && (r->reg_access & access) == access)
        return 1;
    if (!r->cap || !r->buf || !e->be.reg_mem) /* no buffer: described, by copy */
        return 0;
    if (r->reg)
        access |= r->reg_access;
    memset(keys, 0, sizeof keys);
    if (e->be.reg_mem(e->be.ctx, r->buf, r->cap, access, &raddr, keys, &handle) != 0)
        return 0;
    if (r->reg && e->be.dereg_mem)
        e->be.dereg_mem(e->be.ctx, r->my_reg);
    r->my_raddr = raddr;
    r->my_reg = handle;
    for (int i = 0; i < e->cfg.nrails; i++)
        bfo_put32(r->my_keys + 4 * i, keys[i]);
    r->reg = 1;
    r->reg_access = (uint8_t)access;
    return 1;
}

/* The peer's keys (RGET's or PUT's payload), one per rail: those of rails
 * beyond this engine's are of no use here. */
static inline void bfo__req_take_keys(bfo_request *r, const uint8_t *p, size_t len)
{
    uint32_t n = (uint32_t)(len / 4);
    if (n > BFO_MAX_RAILS)
        n = BFO_MAX_RAILS;
    for (uint32_t i = 0; i < n; i++)
        r->keys[i] = bfo_get32(p + 4 * i);
    r->nkeys = n;
}

/* The sender's choice for a message above eager_limit (and after a
 * restart): GET, or RNDV (with PIN when the receiver may PUT). */
static inline int bfo__send_choose(bfo_engine *e, bfo_request *r)
{
    const int mode = e->cfg.rdma;
    if (mode == BFO_RDMA_OFF || r->cap < e->cfg.rdma_min || !bfo__rdma_ok(e, r->peer, 0) ||
        !bfo__req_register(e, r, mode == BFO_RDMA_PUT ? 0u : (unsigned)BFO_MEM_REMOTE_READ))
        return BFO_EV_RNDV_CHOSEN;
    return mode == BFO_RDMA_PUT ? BFO_EV_RNDV_CHOSEN : BFO_EV_RGET_CHOSEN;
}

/* The receiver's choice once an RNDV or RGET matched: PUT (RNDV with PIN),
 * GET (RGET), else copy.  A message larger than the buffer (truncation)
 * goes by copy. */
static inline int bfo__recv_choose(bfo_engine *e, bfo_request *r)
{
    const int mode = e->cfg.rdma, rget = r->cs == BFO_RECV_ST_RGET_MATCHED;
    if (mode == BFO_RDMA_OFF || r->length > r->cap || !bfo__rdma_ok(e, r->peer, 1) ||
        (rget ? mode == BFO_RDMA_PUT : (mode == BFO_RDMA_GET || !r->pin ||
                                        r->length < e->cfg.rdma_min)) ||
        /* GET: this side reads into it; PUT: the sender writes into it */
        !bfo__req_register(e, r, rget ? (unsigned)BFO_MEM_LOCAL_WRITE : (unsigned)BFO_MEM_REMOTE_WRITE)) {
        e->stats.copies++;
        return BFO_EV_COPY_CHOSEN;
    }
    if (rget) {
        e->stats.gets++;
        return BFO_EV_GET_CHOSEN;
    }
    e->stats.puts++;
    return BFO_EV_PUT_CHOSEN;
}

/* >>request_ops - a request's ops: restart messages, FIN ------------------ */

static inline bfo_op *bfo__req_op(bfo_engine *e, bfo_request *r, int type)
{
    bfo_op *op = bfo__op_alloc(e, type, r->peer);
    if (op) {
        op->owner = bfo__self(e, r);
        op->rseq = r->rseq;
        r->outstanding++;
    }
    return op;
}

/* The restart header of NOTIFY, RESTARTACK, RESTARTNACK, RECVERRNOTIFY. */
static inline void bfo__post_restart_msg(bfo_engine *e, bfo_request *r, int type,
                                         bfo_handle sreq, bfo_handle dreq)
{
    bfo_hdr_restart h;
    bfo_op *op = bfo__req_op(e, r, type);
    if (!op)
        return; /* cannot happen: max_ops covers every request (bfo__min_ops) */
    h.type = (uint8_t)type;
    h.flags = 0;
    h.rseq = r->rseq;
    h.ctx = r->ctx;
    h.seq = r->seq;
    h.src = (uint32_t)(r->kind == BFO_REQ_SEND ? r->src : r->source);
    h.sreq = sreq;
    h.dreq = dreq;
    op->hdr_len = bfo_hdr_restart_encode(&h, op->hdr, sizeof op->hdr);
    bfo__post(e, op);
}

/* FIN: the sender's after a write (PUT slot), or the receiver's after every
 * read (the whole message, slot 0). */
static inline void bfo__post_fin(bfo_engine *e, bfo_request *r, uint32_t slot, uint64_t off,
                                 uint64_t len)
{
    bfo_hdr_fin h;
    bfo_op *op = bfo__req_op(e, r, BFO_FRAG_FIN);
    if (!op)
        return;
    h.type = BFO_FRAG_FIN;
    h.flags = 0;
    h.rseq = r->rseq;
    h.slot = slot;
    h.dreq = r->remote;
    h.offset = off;
    h.length = len;
    op->hdr_len = bfo_hdr_fin_encode(&h, op->hdr, sizeof op->hdr);
    op->slot = slot;
    op->off = off;
    op->len = len;
    bfo__post(e, op);
}

/* >>feed - facts, and events fed to a request's machine ------------------- */

/* The fact a request waits for, if it is true now: ALL_DELIVERED (the data
 * phase began, every byte is delivered, nothing is outstanding) or DRAINED
 * (nothing is outstanding); 0 when neither applies.  waits_of is its
 * machine's table, total its bytes (a send's cap, a receive's length). */
static inline int bfo__fact(const bfo_request *r, const unsigned char *waits_of, size_t total)
{
    unsigned waits;
    if (r->complete || r->outstanding != 0)
        return 0;
    waits = waits_of[r->cs];
    if ((waits & BFO_WAITS_ALL_DELIVERED) && r->counting && r->done_bytes >= total)
        return BFO_EV_ALL_DELIVERED;
    return waits & BFO_WAITS_DRAINED ? BFO_EV_DRAINED : 0;
}

static inline int bfo__req_fact(const bfo_request *r)
{
    return r->kind == BFO_REQ_SEND ? bfo__fact(r, bfo_send_machine.waits, r->cap)
                                   : bfo__fact(r, bfo_recv_machine.waits, r->length);
}

static inline void bfo__req_feed(bfo_engine *e, bfo_request *r, int ev, const bfo__input *in)
{
    if (r->kind == BFO_REQ_SEND)
        bfo__send_feed(e, r, ev, in);
    else
        bfo__recv_feed(e, r, ev, in);
}

/* Feeds the event a frame from peer caused: the frame is the actions' input. */
static inline void bfo__feed_frame(bfo_engine *e, bfo_request *r, int ev, const bfo_frame *f, int peer)
{
    const bfo__input in = { f, peer, 0, 0, 0 };
    bfo__req_feed(e, r, ev, &in);
}

/* >>completion - an op back from the backend, routed to its owner --------- */

/* Completes, with an error, the ops that could not be posted (those there
 * now: an op failing again waits for the next entry point, so a backend that
 * refuses every post cannot make this loop forever). */
static BFO__NOINLINE void bfo__run_failed_list(bfo_engine *e)
{
    int i = e->fail_head, last = e->fail_tail;
    e->fail_head = e->fail_tail = -1;
    bfo__deferred_note(e);
    for (;;) {
        int next = bfo__op_at(e, i)->next, was_last = i == last;
        bfo__op_done(e, bfo__op_at(e, i), 0);
        if (was_last)
            break;
        i = next;
    }
}

/* A peer's op completed while others wait in its pending list: those that
 * waited for a rail on probation to be sampled (BFO__PICK_WAIT) go if they
 * now can (a sample came, or the piece failed and the rail takes another);
 * with no rail UP they wait on (a peer with none UP is flushed when one is
 * admitted). */
static BFO__NOINLINE void bfo__gate_kick(bfo_engine *e)
{
    const int k = e->gate_kick;
    e->gate_kick = -1;
    bfo__deferred_note(e);
    if (e->gate_busy)
        return;
    e->gate_busy = 1;
    for (int peer = k == 0x7fffffff ? 0 : k; peer < e->cfg.nranks && (k == 0x7fffffff || peer == k); peer++)
        if (e->peers[peer].pend_head >= 0 && bfo__pick_rail(e, peer, 0) >= 0)
            bfo__flush_pending(e, peer);
    e->gate_busy = 0;
}

/* Every entry point ends here; the lists are nearly always empty, so only
 * the tests are inlined. */
static inline void bfo__run_failed(bfo_engine *e)
{
    if (BFO__LIKELY(!e->deferred))
        return; /* the lists empty, no kick: one test */
    if (e->gate_kick >= 0)
        bfo__gate_kick(e);
    if (e->fail_head >= 0)
        bfo__run_failed_list(e);
    if (e->self_head >= 0 && !e->self_busy)
        bfo__run_self(e);
}

/* The event of an op's completion. */
static inline int bfo__op_event(int type, int ok)
{
    if (type == BFO__OP_WRITE)
        return ok ? BFO_EV_WRITE_COMPLETED : BFO_EV_WRITE_FAILED;
    if (type == BFO__OP_READ)
        return ok ? BFO_EV_READ_COMPLETED : BFO_EV_READ_FAILED;
    return bfo_frag_event(type, ok ? BFO_EVK_DELIVERED : BFO_EVK_FAILED);
}

/* An eager send's MATCH delivered: MATCH_SENT --MATCH_DELIVERED--> COMPLETE
 * / complete, a fast path (docs/engine-design.md, "Fast paths").  It looks
 * first and changes nothing unless it applies: the op a MATCH (so neither
 * rail control nor engine-owned), delivered, its request alive, a send, in
 * MATCH_SENT.  Then what bfo__op_done_slow does for it, in its order: the
 * op back and freed, the request's counts, the step, its action; complete,
 * the request takes no fact.  Returns 1 when it took the completion. */
static BFO__HOT int bfo__op_done_fast(bfo_engine *e, bfo_op *op, int ok)
{
#ifndef BFO_NO_FAST_PATH
    bfo_request *r;
    const bfo_slot *s;
    /* a MATCH is a request's (never rail control: about_rail is -1) */
    if (op->type != BFO_FRAG_MATCH || !ok)
        return 0;
    /* bfo__handle_get without its range test: the owner's index was a
     * live slot's, and the pool never shrinks; a slot of the generation is
     * live (its req set) */
    s = bfo__slot_at(e, (int)op->owner.index);
    if (s->gen != op->owner.gen)
        return 0;
    r = s->req;
    if (r->cs != BFO_SEND_ST_MATCH_SENT || r->kind != BFO_REQ_SEND)
        return 0;
    /* bfo__op_unpost(e, op, 1) (delivered: its bytes count to its rail's
     * rate) and bfo__op_free, for a frame of a request */
    if (BFO__LIKELY(op->posted)) { /* not when to itself (bfo__run_self) */
        op->posted = 0;
        bfo__rail_unqueued(e, op, op->hdr_len + op->payload_len, 1);
    }
    op->gen += 2; /* as bfo__op_free */
    op->next = e->op_free;
    e->op_free = op->idx;
    e->ops_in_use--;
    r->outstanding--;
    r->answered = 1;
    bfo__fsm_shortcut(&bfo_send_machine, &r->cs, BFO_SEND_ST_MATCH_SENT, BFO_EV_MATCH_DELIVERED,
                      BFO_SEND_ST_COMPLETE, BFO_SEND_ACT_COMPLETE, e->trace, r);
    bfo__act_send_complete(e, r);
    return 1;
#else
    (void)e, (void)op, (void)ok;
    return 0;
#endif
}

/* A completion for an op: route it to its owner. */
static BFO__NOINLINE void bfo__op_done_slow(bfo_engine *e, bfo_op *op, int ok)
{
    const int type = op->type, peer = op->peer, about = op->about_rail;
    const bfo_handle owner = op->owner;
    const uint16_t rseq = op->rseq;
    const uint64_t len = op->len;
    bfo__input in = { NULL, peer, op->slot, op->off, op->len }; /* for POST_FIN */
    bfo_request *r;

    bfo__op_unpost(e, op, ok);
    if (about >= 0) { /* rail control: the rail machine it concerns */
        if (type == BFO_FRAG_BYE)
            e->byes_out--; /* delivered or not: it is not sent again (bfo_engine_left) */
        bfo__op_free(e, op);
        bfo__rail_step(e, peer, about, bfo_frag_event(type, ok ? BFO_EVK_DELIVERED : BFO_EVK_FAILED),
                       NULL);
        return;
    }
    if (BFO__UNLIKELY(type == BFO_FRAG_RELAY || type == BFO_FRAG_REACH)) { /* relay: its own */
        bfo__relay_done(e, op, ok);
        return;
    }
    if (BFO__UNLIKELY(type == BFO_FRAG_BYE)) { /* through a relay (bfo__relay_bye): not sent again */
        e->byes_out--;
        bfo__op_free(e, op);
        return;
    }
    if (bfo_handle_is_null(owner)) { /* an engine-owned NACK or CREDIT: until delivered */
        if (type == BFO_FRAG_CREDIT) { /* again with the newest limit */
            bfo__op_free(e, op);
            if (!ok && !e->peers[peer].unreachable)
                bfo__credit_tell(e, peer);
            return;
        }
        if (!ok && !e->peers[peer].unreachable) {
            bfo_op *again;
            uint8_t hdr[BFO_MAX_HDR_SIZE];
            size_t hdr_len = op->hdr_len;
            memcpy(hdr, op->hdr, hdr_len);
            bfo__op_free(e, op);
            again = bfo__ctl_alloc(e, type, peer);
            if (again) {
                memcpy(again->hdr, hdr, hdr_len);
                again->hdr_len = hdr_len;
                bfo__post(e, again);
            }
            return;
        }
        bfo__op_free(e, op);
        return;
    }
    bfo__op_free(e, op);
    r = bfo__handle_get(e, owner);
    if (!r)
        return; /* the request is gone: nothing waits for this */
    r->outstanding--;
    r->answered = 1;
    if (rseq == r->rseq) { /* bytes delivered: by copy, by read, or PUT slots FINned */
        if (type == BFO_FRAG_FRAG || type == BFO__OP_READ) {
            r->frags_inflight--;
            if (ok)
                r->done_bytes += (size_t)len;
            if (BFO__UNLIKELY(e->stage_wait_head >= 0)) /* a staging buffer may be free */
                bfo__stage_kick(e);
        } else if (type == BFO_FRAG_FIN && ok && r->kind == BFO_REQ_SEND) {
            r->done_bytes += (size_t)len;
        }
    }
    if (rseq != r->rseq && r->kind == BFO_REQ_RECV) {
        /* posted under an older restart: only the count matters */
        bfo__req_feed(e, r, bfo__req_fact(r), NULL);
        return;
    }
    bfo__req_feed(e, r, bfo__op_event(type, ok), &in);
}

static BFO__HOT void bfo__op_done(bfo_engine *e, bfo_op *op, int ok)
{
    if (!bfo__op_done_fast(e, op, ok))
        bfo__op_done_slow(e, op, ok);
}

/* bfo_engine_completion_probe: see THE API in bfo_engine.h.  Its rail's
 * machine takes PROBE_DELIVERED or PROBEACK_DELIVERED (no action in any
 * state, spec/rail.rl); the op goes back to the control budget. */
static inline int bfo_engine_completion_probe(bfo_engine *e, uint64_t token, int ok)
{
    bfo_op *op = ok ? bfo__op_of_token(e, token) : NULL;
    if (!op || (op->type != BFO_FRAG_PROBE && op->type != BFO_FRAG_PROBEACK) || op->about_rail < 0)
        return 0;
    bfo__op_done_slow(e, op, 1);
    return 1;
}

/* The op a backend's token names and holds (posted, of the token's
 * generation), or NULL. */
static inline bfo_op *bfo__op_of_token(const bfo_engine *e, uint64_t token)
{
    uint32_t idx = (uint32_t)token, gen = (uint32_t)(token >> 32);
    bfo_op *op;
    if (idx < (uint32_t)e->opp.live && (op = bfo__op_at(e, (int)idx))->gen == gen && op->posted)
        return op;
    return NULL;
}

/* A completion of the lane's (bfo__lane_post): MATCH_SENT --MATCH_DELIVERED-->
 * COMPLETE / complete, as bfo__op_done_fast takes it for an op; anything
 * else as an op's. */
static BFO__HOT void bfo__lane_done(bfo_engine *e, uint64_t token, int ok)
{
    const uint32_t idx = (uint32_t)token & ~BFO__LANE_BIT, gen = (uint32_t)(token >> 32);
    const bfo_slot *s;
    bfo_request *r;
    bfo_op *op;
    if (idx >= (uint32_t)e->slotp.n || (s = bfo__slot_at(e, (int)idx))->gen != gen || !(r = s->req) ||
        !r->lane)
        return; /* not a lane's MATCH the backend holds */
#ifndef BFO_NO_FAST_PATH
    if (BFO__LIKELY(ok) && BFO__LIKELY(r->cs == BFO_SEND_ST_MATCH_SENT)) {
        bfo__lane_unqueued(e, r, 1);
        r->lane = 0;
        r->outstanding--;
        r->answered = 1;
        bfo__fsm_shortcut(&bfo_send_machine, &r->cs, BFO_SEND_ST_MATCH_SENT, BFO_EV_MATCH_DELIVERED,
                          BFO_SEND_ST_COMPLETE, BFO_SEND_ACT_COMPLETE, e->trace, r);
        bfo__act_send_complete(e, r);
        return;
    }
#endif
    op = bfo__lane_op(e, r, 1);
    if (op)
        bfo__op_done_slow(e, op, ok);
}

/* bfo_engine_completion: see THE API in bfo_engine.h. */
static inline void bfo_engine_completion(bfo_engine *e, uint64_t token, int ok)
{
    if ((uint32_t)token & BFO__LANE_BIT) {
        bfo__lane_done(e, token, ok);
    } else {
        bfo_op *op = bfo__op_of_token(e, token);
        if (op)
            bfo__op_done(e, op, ok);
    }
    bfo__run_failed(e);
}

#ifdef __cplusplus
}
#endif
#endif /* BFO_ENGINE_REQUEST_H */
