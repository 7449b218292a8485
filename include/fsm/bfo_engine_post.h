// SPDX-License-Identifier: BSD-3-Clause
/* bfo_engine_post.h - posting: an operation onto a rail, described data and
 * its staging, the lane.
 *
 * Part of bfo_engine.h, level 4 of its parts (docs/engine-design.md, "The
 * parts"): include bfo_engine.h, not this.  It includes bfo_engine_rate.h,
 * bfo_engine_detect.h (and so every part below); a call to a part above
 * goes through a prototype in bfo_engine_hooks.h: here bfo__relay_post,
 * bfo__peer_need, bfo__peer_may_reach.
 *
 * Sections (grep '>>name'): >>posting, >>described, >>lane.
 */
#ifndef BFO_ENGINE_POST_H
#define BFO_ENGINE_POST_H

#include "bfo_engine_rate.h"
#include "bfo_engine_detect.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Defined below in this part, called before their definition. */
static BFO__NOINLINE void bfo__post_described_on(bfo_engine *e, bfo_op *op, int rail);
static inline void bfo__post_on(bfo_engine *e, bfo_op *op, int rail);

/* >>posting - an op onto a rail, or waiting for one ----------------------- */

/* An op with no rail to go on: it waits for one, or fails (the peer is gone,
 * or an RDMA op with rails UP but none that can RDMA).  Waiting, it needs
 * the peer: its DORMANT rails connect (bfo__peer_need; connections on
 * first use), before a relay is tried, so that a peer a third rank reaches
 * is still connected to directly. */
static BFO__COLD void bfo__post_no_rail(bfo_engine *e, bfo_op *op)
{
    bfo_peer *p = &e->peers[op->peer];
    if (p->unreachable || (bfo__op_rdma(op->type) && bfo__pick_rail(e, op->peer, 0) >= 0)) {
        bfo__op_fail_later(e, op);
        return;
    }
    bfo__peer_need(e, op->peer); /* connecting gives nothing up: still not unreachable */
    if (BFO__UNLIKELY(op->type == BFO_FRAG_RELAY)) {
        if (op->slot != UINT32_MAX && p->fsm.cs == BFO_PEER_ST_DOWN && bfo__peer_may_reach(e, op->peer))
            bfo__pend(e, p, op); /* a frame of another passed on to a peer whose first
                                  * connection is under way: it waits for it (its
                                  * failure fails it, bfo__relay_unpend) */
        else
            bfo__op_fail_later(e, op); /* a relay frame (a frame of another passed on, or
                                        * one of this rank's to its relay) finds no rail:
                                        * one hop, never waits for a rail that failed;
                                        * its failure says so (bfo__relay_done) */
    } else if (p->fsm.cs == BFO_PEER_ST_RELAYED && bfo__relay_post(e, op))
        ; /* through the relay, or waiting for room there */
    else
        bfo__pend(e, p, op);
}

/* A WRITE or READ on its rail: the backend's answer. */
static BFO__NOINLINE int bfo__post_rdma(bfo_engine *e, bfo_op *op, int rail)
{
    const bfo_request *r = bfo__handle_get(e, op->owner);
    uint32_t key;
    if (!r || (uint32_t)rail >= r->nkeys) /* the peer gave no key for this rail */
        return -1;
    key = r->keys[rail];
    e->stats.rail_bytes[rail] += op->len;
    if (op->type == BFO__OP_WRITE) {
        e->stats.rdma_writes++;
        return e->be.post_write(e->be.ctx, op->peer, rail, op->local, (size_t)op->len, op->raddr,
                                key, bfo__token(op));
    }
    e->stats.rdma_reads++;
    return e->be.post_read(e->be.ctx, op->peer, rail, op->local, (size_t)op->len, op->raddr, key,
                           bfo__token(op));
}

/* >>described - described data: a message that is not one buffer ---------- */

/* A message given by bfo_isend_data or bfo_irecv_data (bfo_data.h) that is
 * not one buffer: its request has no buffer (r->buf NULL, r->cap > 0) and
 * r->data describes it; the contiguous path never reads r->data.  Its ops
 * carry a span (op->span: the descriptor and the range the frame holds;
 * op->payload NULL, op->payload_len > 0) and are posted by
 * bfo__post_described.  Once the rail is chosen the bytes reach the
 * transport one of three ways:
 *   - the rail's transport reads the description itself (post_send_data,
 *     BFO_CAP_SEND_IOV / BFO_CAP_SEND_PACK): TCP gathers segments into its
 *     writev, shared memory and verbs copy (or pack) straight into their
 *     ring or send buffer, the simulator into its frame;
 *   - the range lies in one segment: post_send with that pointer;
 *   - else the engine packs the range into one of its staging buffers
 *     (bfo_config.data_stages, max(frag_size, eager_limit) bytes each),
 *     which the op holds until it is freed (a staging buffer whose op's
 *     generation moved on is free again).  With none free the op waits,
 *     unposted, and is posted again at the next completion of a FRAG, the
 *     next described post or the next bfo_engine_progress.
 * A FRAG sent again after a failover is a new op: the bytes are read again
 * from the description, from offset 0 or from the ACK's.  Received bytes
 * are written in place (bfo__data_in) at the frame's offset, as far as the
 * description has room (truncation).  RDMA needs one registered region: a
 * described message is never registered, so it goes by copy. */

static inline void bfo__post_described(bfo_engine *e, bfo_op *op) { bfo__post_described_on(e, op, -1); }

static inline void bfo__post(bfo_engine *e, bfo_op *op) { bfo__post_on(e, op, -1); }

/* 1 for an op that carries described data. */
static inline int bfo__op_described(const bfo_op *op) { return !op->payload && op->payload_len; }

static inline unsigned bfo__data_cap(int kind)
{
    return kind == BFO_DATA_PACK ? BFO_CAP_SEND_PACK : BFO_CAP_SEND_IOV;
}

/* Received bytes to their place in the request's description. */
static BFO__NOINLINE void bfo__data_in(bfo_request *r, size_t off, const void *src, size_t n)
{
    bfo_data_write(r->data, &r->dpos, off, src, n);
}

static inline void bfo__stage_wait(bfo_engine *e, bfo_op *op)
{
    op->next = -1;
    if (e->stage_wait_tail >= 0)
        bfo__op_at(e, e->stage_wait_tail)->next = op->idx;
    else
        e->stage_wait_head = op->idx;
    e->stage_wait_tail = op->idx;
}

/* A free staging buffer, now held by op; -1 when none is free. */
static inline int bfo__stage_take(bfo_engine *e, const bfo_op *op)
{
    for (int k = 0; k < e->cfg.data_stages; k++) {
        uint64_t t = e->stage_tok[k];
        if (!t || bfo__op_at(e, (uint32_t)t)->gen != (uint32_t)(t >> 32)) {
            e->stage_tok[k] = bfo__token(op);
            return k;
        }
    }
    return -1;
}

/* Staging buffers held by live ops (a test's check that they come back). */
static inline int bfo__stages_in_use(const bfo_engine *e)
{
    int n = 0;
    for (int k = 0; k < e->cfg.data_stages; k++) {
        uint64_t t = e->stage_tok[k];
        n += t && bfo__op_at(e, (uint32_t)t)->gen == (uint32_t)(t >> 32);
    }
    return n;
}

/* The ops that waited for a staging buffer are posted again, in their
 * order, while a staging buffer is unused (the others wait on, in order). */
static BFO__NOINLINE void bfo__stage_kick(bfo_engine *e)
{
    int i = e->stage_wait_head, last = e->stage_wait_tail;
    e->stage_wait_head = e->stage_wait_tail = -1;
    while (i >= 0) {
        int next = bfo__op_at(e, i)->next, was_last = i == last;
        if (bfo__stages_in_use(e) < e->cfg.data_stages)
            bfo__post_described(e, bfo__op_at(e, i));
        else
            bfo__stage_wait(e, bfo__op_at(e, i));
        if (was_last)
            break;
        i = next;
    }
}

/* A described op on its rail: 0 posted, -1 refused, 1 when it must wait
 * for a staging buffer. */
static inline int bfo__post_data(bfo_engine *e, bfo_op *op, int rail)
{
    const bfo_data_span *s = &op->span;
    bfo_iov iov[2];
    int rc;
    iov[0].base = op->hdr;
    iov[0].len = op->hdr_len;
    if (e->be.post_send_data && (e->peers[op->peer].rail[rail].caps & bfo__data_cap(s->d->kind))) {
        rc = e->be.post_send_data(e->be.ctx, op->peer, rail, &iov[0], s, bfo__token(op));
    } else {
        if (!bfo_data_span_flat(s, &iov[1].base)) {
            int k = bfo__stage_take(e, op);
            if (k < 0)
                return 1;
            iov[1].base = e->stage_mem + (size_t)k * e->stage_size;
            bfo_data_span_copy(s, 0, (void *)(uintptr_t)iov[1].base, s->len);
        }
        iov[1].len = s->len;
        rc = e->be.post_send(e->be.ctx, op->peer, rail, iov, 2, bfo__token(op));
    }
    if (rc == 0)
        e->stats.rail_bytes[rail] += s->len;
    return rc ? -1 : 0;
}

/* bfo__post for a described op: its rail (given, or chosen if -1), then
 * its bytes (bfo__post_data). */
static BFO__NOINLINE void bfo__post_described_on(bfo_engine *e, bfo_op *op, int rail)
{
    bfo_peer *p = &e->peers[op->peer];
    if (op->peer == e->cfg.rank) { /* to itself: one piece, else staged, then as any op */
        const void *flat;
        if (!bfo_data_span_flat(&op->span, &flat)) {
            int k = bfo__stage_take(e, op);
            uint8_t *stage;
            if (k < 0) {
                bfo__stage_wait(e, op);
                return;
            }
            stage = e->stage_mem + (size_t)k * e->stage_size;
            bfo_data_span_copy(&op->span, 0, stage, op->span.len);
            flat = stage;
        }
        op->payload = flat;
        bfo__post(e, op);
        return;
    }
    int rc;
    if (rail == -1)
        rail = op->type == BFO_FRAG_FRAG && op->len >= BFO__STRIPE_MIN ? bfo__pick_weighted(e, op->peer, op->len, 0)
                                                                       : bfo__pick_rail(e, op->peer, op->hdr_len + op->payload_len);
    if (rail < 0) {
        if (rail == BFO__PICK_WAIT)
            bfo__pend(e, p, op); /* until a rail on probation is sampled */
        else
            bfo__post_no_rail(e, op);
        return;
    }
    op->rail = rail;
    op->posted = 1;
    bfo__rail_queued(e, &p->rail[rail], op, op->hdr_len + op->payload_len);
    e->stats.ops_posted++;
    rc = bfo__post_data(e, op, rail);
    if (rc == 0)
        return;
    bfo__op_unpost(e, op, 0);
    if (rc > 0) { /* no staging buffer free: it waits for one, unposted */
        e->stats.ops_posted--;
        bfo__stage_wait(e, op);
    } else {
        bfo__op_fail_later(e, op);
    }
}

/* The op's frame carries bytes [off, off+len) (len > 0) of the request's
 * description: posted. */
static BFO__NOINLINE void bfo__send_described(bfo_engine *e, bfo_request *r, bfo_op *op,
                                              size_t off, size_t len, int rail)
{
    op->span.d = r->data;
    op->span.off = off;
    op->span.len = len;
    if (r->data->kind == BFO_DATA_IOV)
        bfo_data_seek(r->data, &r->dpos, off);
    op->span.pos = r->dpos;
    op->payload = NULL;
    op->payload_len = len;
    if (e->stage_wait_head >= 0) /* those waiting first */
        bfo__stage_kick(e);
    bfo__post_described_on(e, op, rail);
}

/* Posts op on `rail` (an UP rail chosen by the caller: a piece sized for
 * it, bfo__piece), or if -1 on its fixed rail or an UP rail; with no UP
 * rail it waits in the peer's pending list (moved to a surviving or
 * re-admitted rail later).  An RDMA op with rails UP but none that can RDMA
 * fails (the request then runs the restart dance and goes on by copy). */
static inline void bfo__post_on(bfo_engine *e, bfo_op *op, int rail)
{
    bfo_peer *p = &e->peers[op->peer];
    const int rdma = bfo__op_rdma(op->type);
    int rc;
    if (op->peer == e->cfg.rank) { /* to itself: no rail, delivered by bfo__run_self */
        op->next = -1;
        if (e->self_tail >= 0)
            bfo__op_at(e, e->self_tail)->next = op->idx;
        else
            e->self_head = op->idx;
        e->self_tail = op->idx;
        e->deferred = 1;
        return;
    }
    if (rail != -1)
        ; /* chosen with the piece's size */
    else if (op->fixed_rail >= 0)
        rail = op->fixed_rail;
    else if (rdma || (op->type == BFO_FRAG_FRAG && op->len >= BFO__STRIPE_MIN))
        rail = bfo__pick_weighted(e, op->peer, op->len, rdma);
    else
        rail = bfo__pick_rail(e, op->peer, bfo__op_qbytes(op));
    if (rail < 0) {
        if (rail == BFO__PICK_WAIT)
            bfo__pend(e, p, op); /* until a rail on probation is sampled */
        else
            bfo__post_no_rail(e, op);
        return;
    }
    op->rail = rail;
    op->posted = 1; /* before the call: a backend may complete at once */
    bfo__rail_queued(e, &p->rail[rail], op, bfo__op_qbytes(op));
    e->stats.ops_posted++;
    if (rdma) {
        rc = bfo__post_rdma(e, op, rail);
    } else {
        bfo_iov iov[2];
        iov[0].base = op->hdr;
        iov[0].len = op->hdr_len;
        iov[1].base = op->payload;
        iov[1].len = op->payload_len;
        e->stats.rail_bytes[rail] += op->payload_len;
        rc = e->be.post_send(e->be.ctx, op->peer, rail, iov, op->payload_len ? 2 : 1,
                             bfo__token(op));
    }
    if (rc != 0) {
        bfo__op_unpost(e, op, 0);
        bfo__op_fail_later(e, op);
    }
}

/* bfo__post for a message of a request (MATCH) on any UP rail (no fixed
 * rail, no RDMA, not striped): the same, with what the op's type already
 * says left out; to itself, or with no rail UP, it is bfo__post's. */
static BFO__HOT void bfo__post_msg(bfo_engine *e, bfo_op *op)
{
    const int peer = op->peer;
    int rail, rc;
    bfo_iov iov[2];
    if (BFO__UNLIKELY(peer == e->cfg.rank) || BFO__UNLIKELY((rail = bfo__pick_rail(e, peer, op->hdr_len + op->payload_len)) < 0)) {
        bfo__post(e, op);
        return;
    }
    op->rail = rail;
    op->posted = 1; /* before the call: a backend may complete at once */
    bfo__rail_queued(e, &e->peers[peer].rail[rail], op, op->hdr_len + op->payload_len);
    e->stats.ops_posted++;
    iov[0].base = op->hdr;
    iov[0].len = op->hdr_len;
    iov[1].base = op->payload;
    iov[1].len = op->payload_len;
    e->stats.rail_bytes[rail] += op->payload_len;
    rc = e->be.post_send(e->be.ctx, peer, rail, iov, op->payload_len ? 2 : 1, bfo__token(op));
    if (BFO__UNLIKELY(rc != 0)) {
        bfo__op_unpost(e, op, 0);
        bfo__op_fail_later(e, op);
    }
}

/* Posts the ops waiting for a rail of this peer. */
static inline void bfo__flush_pending(bfo_engine *e, int peer)
{
    bfo_peer *p = &e->peers[peer];
    int i = p->pend_head;
    p->pend_head = p->pend_tail = -1;
    while (i >= 0) {
        int next = bfo__op_at(e, i)->next;
        if (bfo__op_described(bfo__op_at(e, i)))
            bfo__post_described(e, bfo__op_at(e, i));
        else
            bfo__post(e, bfo__op_at(e, i));
        i = next;
    }
}

/* >>lane - an eager send's MATCH posted without an op --------------------- */

/* The lane: an eager send's MATCH posted without an op.  Its token names
 * the request itself (its handle, with BFO__LANE_BIT in the index half),
 * its header waits in the request (lane_hdr), and what an op would hold
 * of the post is the rail (lane_rail).  Taken by bfo__send_eager only
 * where bfo__post_msg would post at once, for a frame that is no rate
 * sample (shorter than BFO__STRIPE_MIN: the op's q_at, post_at and since
 * would never be read).  A completion it does not take to COMPLETE
 * (failed, or the request drains in another state) and a refused post
 * become an op of the request, posted on lane_rail (bfo__lane_op), and go
 * the general way from there: the lane changes the operation's storage,
 * never a transition (docs/engine-design.md, "Fast paths"). */
#define BFO__LANE_BIT 0x80000000u

static inline uint64_t bfo__lane_token(const bfo_request *r)
{
    return ((uint64_t)r->self.gen << 32) | (BFO__LANE_BIT | r->self.index);
}

/* bfo__rail_unqueued for the lane's MATCH (no sample: shorter than
 * BFO__STRIPE_MIN). */
static BFO__HOT void bfo__lane_unqueued(bfo_engine *e, const bfo_request *r, int ok)
{
    bfo__rail_gave(e, r->peer, r->lane_rail, BFO_HDR_MATCH_SIZE + r->cap, ok, NULL);
}

/* The op the lane's MATCH becomes: posted on its rail (counted in the
 * request's outstanding as the lane was), or with posted 0 (the lane's
 * bytes are off its rail already). */
static BFO__COLD bfo_op *bfo__lane_op(bfo_engine *e, bfo_request *r, int posted)
{
    bfo_op *op = bfo__op_alloc(e, BFO_FRAG_MATCH, r->peer);
    r->lane = 0;
    if (!op)
        return NULL; /* cannot happen: max_ops covers every request (bfo__min_ops) */
    op->owner = r->self;
    op->rseq = r->rseq;
    memcpy(op->hdr, r->lane_hdr, BFO_HDR_MATCH_SIZE);
    op->hdr_len = BFO_HDR_MATCH_SIZE;
    op->payload = r->buf;
    op->payload_len = r->cap;
    op->rail = r->lane_rail;
    op->posted = posted;
    op->q_at = op->since = 0;
    op->post_at = 0;
    return op;
}

/* The transport refused the lane's MATCH: as bfo__post_msg's op, it is
 * tried again later (bfo__op_fail_later). */
static BFO__COLD void bfo__lane_refused(bfo_engine *e, bfo_request *r)
{
    bfo_op *op;
    bfo__lane_unqueued(e, r, 0);
    op = bfo__lane_op(e, r, 0);
    if (op)
        bfo__op_fail_later(e, op);
}

/* Posts r's MATCH by the lane; 0 when it does not apply (bfo__act_post_match
 * posts it then). */
static BFO__HOT int bfo__lane_post(bfo_engine *e, bfo_request *r)
{
    const int peer = r->peer;
    const uint64_t n = BFO_HDR_MATCH_SIZE + r->cap;
    bfo_hdr_match h;
    bfo_iov iov[2];
    int rail, rc;
    if (BFO__UNLIKELY(peer == e->cfg.rank) || BFO__UNLIKELY(!r->buf && r->cap) || n >= BFO__STRIPE_MIN ||
        BFO__UNLIKELY((rail = bfo__pick_rail(e, peer, n)) < 0))
        return 0;
    h.type = BFO_FRAG_MATCH;
    h.flags = 0;
    h.ctx = r->ctx;
    h.src = (uint32_t)r->src;
    h.tag = (uint32_t)r->want_tag;
    h.seq = r->seq;
    bfo_hdr_match_encode(&h, r->lane_hdr, sizeof r->lane_hdr);
    r->outstanding++;
    r->lane = 1;
    r->lane_rail = rail;
    bfo__rail_took(e, &e->peers[peer].rail[rail], n); /* no sample: no op fields */
    e->stats.ops_posted++;
    iov[0].base = r->lane_hdr;
    iov[0].len = BFO_HDR_MATCH_SIZE;
    iov[1].base = r->buf;
    iov[1].len = r->cap;
    e->stats.rail_bytes[rail] += r->cap;
    rc = e->be.post_send(e->be.ctx, peer, rail, iov, r->cap ? 2 : 1, bfo__lane_token(r));
    if (BFO__UNLIKELY(rc != 0))
        bfo__lane_refused(e, r);
    return 1;
}

#ifdef __cplusplus
}
#endif
#endif /* BFO_ENGINE_POST_H */
