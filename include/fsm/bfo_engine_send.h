// SPDX-License-Identifier: BSD-3-Clause
/* bfo_engine_send.h - the send protocols (MATCH, RNDV, RGET, FRAGs, PUT's
 * writes) and the send machine's actions, restarts included.
 *
 * Part of bfo_engine.h, level 7 of its parts (docs/engine-design.md, "The
 * parts"): include bfo_engine.h, not this.  It includes bfo_engine_request.h
 * (and so every part below); a call to a part above goes through a
 * prototype in bfo_engine_hooks.h (none from here).
 *
 * Sections (grep '>>name'): >>send_protocols, >>send_machine.
 */
#ifndef BFO_ENGINE_SEND_H
#define BFO_ENGINE_SEND_H

#include "bfo_engine_request.h"

#ifdef __cplusplus
extern "C" {
#endif

/* >>send_protocols - the frames a send posts ------------------------------ */

/* The fields RNDV and RGET share: matching, length, restart, handles. */
#define BFO__RZV_FILL(h, e, r)                                                  \
    do {                                                                        \
        (h).flags = (r)->restarted ? BFO_FLAG_RESTART : 0;                      \
        (void)(e);                                                              \
        (h).ctx = (r)->ctx;                                                     \
        (h).src = (uint32_t)(r)->src;                                           \
        (h).tag = (uint32_t)(r)->want_tag;                                      \
        (h).seq = (r)->seq;                                                     \
        (h).rseq = (r)->rseq;                                                   \
        (h).msg_len = (r)->cap;                                                 \
        (h).sreq = (r)->self;                                                   \
        (h).dreq = (r)->restarted ? (r)->remote : bfo__null_handle();           \
    } while (0)

/* The bytes a RNDV of cap bytes carries (bfo_config.rndv_first): all of a
 * message of eager size (synchronous, or past its window: the receiver's
 * answer then completes it), else rndv_first. */
static inline size_t bfo__rndv_first(const bfo_engine *e, size_t cap)
{
    return cap <= e->cfg.eager_limit ? cap : e->cfg.rndv_first;
}

static inline void bfo__send_rndv(bfo_engine *e, bfo_request *r)
{
    bfo_hdr_rndv h;
    bfo_op *op = bfo__req_op(e, r, BFO_FRAG_RNDV);
    /* a restart's first bytes go to its matched receive; a first RNDV's
     * are what bfo__isend charged to the peer's window */
    size_t first = r->restarted ? bfo__rndv_first(e, r->cap) : r->first;
    if (!op)
        return;
    h.type = BFO_FRAG_RNDV;
    BFO__RZV_FILL(h, e, r);
    if (r->reg && e->cfg.rdma != BFO_RDMA_OFF && e->cfg.rdma != BFO_RDMA_GET &&
        r->cap >= e->cfg.rdma_min && bfo__rdma_ok(e, r->peer, 0))
        h.flags |= BFO_FLAG_PIN;
    op->hdr_len = bfo_hdr_rndv_encode(&h, op->hdr, sizeof op->hdr);
    r->first = first;
    if (BFO__UNLIKELY(!r->buf) && first) { /* no buffer and no bytes: nothing described */
        bfo__send_described(e, r, op, 0, first, -1);
        return;
    }
    op->payload = r->buf;
    op->payload_len = first;
    bfo__post(e, op);
}

static inline void bfo__send_rget(bfo_engine *e, bfo_request *r)
{
    bfo_hdr_rget h;
    bfo_op *op = bfo__req_op(e, r, BFO_FRAG_RGET);
    if (!op)
        return;
    h.type = BFO_FRAG_RGET;
    BFO__RZV_FILL(h, e, r);
    h.raddr = r->my_raddr;
    op->hdr_len = bfo_hdr_rget_encode(&h, op->hdr, sizeof op->hdr);
    op->payload = r->my_keys;
    op->payload_len = 4 * (size_t)e->cfg.nrails;
    r->first = 0;
    bfo__post(e, op);
}

static inline void bfo__send_frags(bfo_engine *e, bfo_request *r)
{
    while (r->next_off < r->cap && r->frags_inflight < e->cfg.frag_pipeline) {
        bfo_hdr_frag h;
        size_t n = r->cap - r->next_off;
        int rail;
        bfo_op *op = bfo__req_op(e, r, BFO_FRAG_FRAG);
        if (!op)
            return;
        if (n > e->cfg.frag_size)
            n = e->cfg.frag_size;
        rail = bfo__piece(e, r->peer, &n, 0);
        h.type = BFO_FRAG_FRAG;
        h.flags = 0;
        h.rseq = r->rseq;
        h.dreq = r->remote;
        h.offset = r->next_off;
        op->hdr_len = bfo_hdr_frag_encode(&h, op->hdr, sizeof op->hdr);
        op->off = r->next_off;
        op->len = n;
        r->next_off += n;
        r->frags_inflight++;
        if (BFO__UNLIKELY(!r->buf)) {
            bfo__send_described(e, r, op, (size_t)op->off, n, rail);
            continue;
        }
        op->payload = r->buf + op->off;
        op->payload_len = n;
        bfo__post_on(e, op, rail);
    }
}

/* A MATCH's header and payload into op: the message, or for a cancelled
 * send an empty MATCH with the CANCEL flag that only fills its sequence. */
static inline void bfo__match_hdr(bfo_engine *e, const bfo_request *r, bfo_op *op)
{
    bfo_hdr_match h;
    (void)e;
    h.type = BFO_FRAG_MATCH;
    h.flags = r->cancelled ? BFO_FLAG_CANCEL : 0;
    h.ctx = r->ctx;
    h.src = (uint32_t)r->src;
    h.tag = (uint32_t)r->want_tag;
    h.seq = r->seq;
    op->hdr_len = bfo_hdr_match_encode(&h, op->hdr, sizeof op->hdr);
    op->payload = r->cancelled ? NULL : r->buf;
    op->payload_len = r->cancelled ? 0 : r->cap;
}

/* The send's action post_match: its MATCH out (bfo__send_action, and the
 * eager fast path of bfo__isend). */
static BFO__NOINLINE void bfo__act_post_match(bfo_engine *e, bfo_request *r)
{
    bfo_op *op = bfo__req_op(e, r, BFO_FRAG_MATCH);
    if (!op)
        return;
    bfo__match_hdr(e, r, op);
    if (BFO__UNLIKELY(!r->buf) && r->cap && !r->cancelled) {
        bfo__send_described(e, r, op, 0, r->cap, -1);
        return;
    }
    bfo__post_msg(e, op);
}

/* The send's action complete (bfo__send_action, and the fast path of
 * bfo__op_done). */
static BFO__HOT void bfo__act_send_complete(bfo_engine *e, bfo_request *r)
{
    e->stats.messages_sent++;
    bfo__finish(e, r, BFO_OK);
}

/* >>send_machine - the send machine's actions and feed -------------------- */

/* Carries out one action of a send; returns the event it asks the machine
 * for next (RESTART: the protocol for the rails left), or 0. */
static inline int bfo__send_action(bfo_engine *e, bfo_request *r, int act, const bfo__input *in)
{
    switch ((enum bfo_send_action)act) { /* every action, no default: -Wswitch names one left out */
    case BFO_SEND_ACT_POST_MATCH:
        bfo__act_post_match(e, r);
        return 0;
    case BFO_SEND_ACT_WITHDRAW: { /* its first message, still waiting for a rail */
        bfo_peer *p = &e->peers[r->peer];
        r->cancelled = 1;
        for (int i = p->pend_head; i >= 0; i = bfo__op_at(e, i)->next) {
            bfo_op *op = bfo__op_at(e, i);
            if (bfo_handle_eq(op->owner, r->self)) {
                if (r->peer != e->cfg.rank && op->type != BFO_FRAG_RGET) /* its eager bytes */
                    bfo__credit_untake(e, r->peer, op->type == BFO_FRAG_RNDV ? r->first : r->cap);
                op->type = BFO_FRAG_MATCH;
                op->len = 0;
                bfo__match_hdr(e, r, op);
                return 0;
            }
        }
        break; /* fed with nothing waiting: bfo_cancel checks that first */
    }
    case BFO_SEND_ACT_COMPLETE_CANCELLED:
        e->stats.revoked_errors += r->revoked;
        bfo__finish(e, r, r->revoked ? BFO_ERR_REVOKED : BFO_ERR_CANCELLED);
        return 0;
    case BFO_SEND_ACT_POST_RNDV: bfo__send_rndv(e, r); return 0;
    case BFO_SEND_ACT_POST_RGET: bfo__send_rget(e, r); return 0;
    case BFO_SEND_ACT_SEND_FRAGS: bfo__send_frags(e, r); return 0;
    case BFO_SEND_ACT_POST_WRITE: { /* the PUT being taken */
        const bfo_hdr_put *p;
        bfo_op *op;
        if (!in || !in->f || in->f->type != BFO_FRAG_PUT)
            break; /* fed without its PUT */
        p = &in->f->h.put;
        op = bfo__req_op(e, r, BFO__OP_WRITE);
        if (!op)
            return 0;
        op->local = r->buf + p->offset;
        op->off = p->offset;
        op->len = p->length;
        op->raddr = p->raddr;
        op->slot = p->slot;
        bfo__post(e, op);
        return 0;
    }
    case BFO_SEND_ACT_POST_FIN: /* the write that completed, or the FIN that failed */
        if (!in || in->f)
            break; /* fed without the op's range */
        bfo__post_fin(e, r, in->slot, in->off, in->len);
        return 0;
    case BFO_SEND_ACT_NOTE_FIN: /* the receiver read everything */
        r->done_bytes = r->cap;
        r->counting = 1;
        return 0;
    case BFO_SEND_ACT_POST_NOTIFY:
        e->stats.notifies++;
        r->rseq++;
        bfo__post_restart_msg(e, r, BFO_FRAG_NOTIFY, r->self, r->remote);
        return 0;
    case BFO_SEND_ACT_REPOST_NOTIFY:
        bfo__post_restart_msg(e, r, BFO_FRAG_NOTIFY, r->self, r->remote);
        return 0;
    case BFO_SEND_ACT_RESTART:
        r->rseq++;
        r->restarted = 1;
        r->done_bytes = r->next_off = 0;
        r->frags_inflight = 0;
        r->counting = 0;
        e->stats.restarts++;
        return bfo__send_choose(e, r); /* for the rails left */
    case BFO_SEND_ACT_COMPLETE:
        bfo__act_send_complete(e, r);
        return 0;
    case BFO_SEND_ACT_FAIL_UNREACHABLE: /* the reason: r->status (bfo__req_gone) */
        bfo__count_gone(e, r->status);
        bfo__finish(e, r, r->status);
        return 0;
    case BFO_SEND_ACT_NOTE_ERROR:
    case BFO_SEND_ACT_DROP:
        return 0;
    }
    e->stats.protocol_violations++; /* not an action of the send machine */
    return 0;
}

/* Feeds one event to a request, carries out the actions, then the facts
 * (ALL_DELIVERED, DRAINED) and any event an action asked for.  One feed per
 * machine: bfo_fsm_step then sees a constant machine, and its exec is
 * inlined instead of called through m->exec. */
static inline void bfo__send_feed(bfo_engine *e, bfo_request *r, int ev, const bfo__input *in)
{
    for (; ev && !r->complete; in = NULL) { /* the input is the first event's */
        bfo_step st; /* bfo_fsm_step fills the rest */
        int asked = 0;
        st.trace = e->trace;
        st.obj = r;
        if (bfo_fsm_step(&bfo_send_machine, &r->cs, ev, &st) != BFO_OK) {
            e->stats.protocol_violations++;
            return;
        }
        /* no transition emits more than the generator's bound: the loop unrolls */
        for (unsigned i = 0; i < st.n_actions && i < BFO_SEND_MAX_ACTIONS; i++) {
            int a = bfo__send_action(e, r, st.actions[i], in);
            if (a)
                asked = a;
        }
        ev = asked ? asked : bfo__fact(r, bfo_send_machine.waits, r->cap);
    }
}

/* An eager send's first transition, IDLE --EAGER_CHOSEN--> MATCH_SENT /
 * post_match: a fast path (docs/engine-design.md, "Fast paths") that sets
 * the state through bfo__fsm_shortcut and posts the MATCH, then feeds the
 * fact the machine waits for, if any, as bfo__send_feed would (none in
 * MATCH_SENT: that costs a test).  BFO_NO_FAST_PATH: the machine's step. */
static BFO__HOT void bfo__send_eager(bfo_engine *e, bfo_request *r)
{
#ifndef BFO_NO_FAST_PATH
    int ev;
    bfo__fsm_shortcut(&bfo_send_machine, &r->cs, BFO_SEND_ST_IDLE, BFO_EV_EAGER_CHOSEN,
                      BFO_SEND_ST_MATCH_SENT, BFO_SEND_ACT_POST_MATCH, e->trace, r);
    if (!bfo__lane_post(e, r))
        bfo__act_post_match(e, r);
    ev = bfo__fact(r, bfo_send_machine.waits, r->cap);
    if (BFO__UNLIKELY(ev != 0))
        bfo__send_feed(e, r, ev, NULL);
#else
    bfo__send_feed(e, r, BFO_EV_EAGER_CHOSEN, NULL);
#endif
}

#ifdef __cplusplus
}
#endif
#endif /* BFO_ENGINE_SEND_H */
