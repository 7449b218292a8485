/* bfo_engine.h - the point-to-point engine: matching, protocols, striping
 * and failover, bound to the generated machines.  Design: docs/engine-design.md.
 *
 * Part of bfo (see bfo.h).  Header-only; no allocation after init (every
 * pool is carved out of the memory given to bfo_engine_init); no I/O (a
 * bfo_backend does it); time is an argument (`now`, nanoseconds).
 *
 * STATUS: eager and rendezvous-by-copy protocols, matching, the restart
 * dance, rails (probe, heartbeat, back-off, re-admission) and the peer
 * unreachable fact.  RDMA PUT and GET are not bound yet: the engine never
 * chooses them, and a PUT, RGET or FIN from a peer counts as a protocol
 * violation.
 *
 * USE
 *   bfo_config cfg = {0};  cfg.rank = r; cfg.nranks = n; cfg.nrails = 2;
 *   size_t need = bfo_engine_mem_size(&cfg);      // then give that much
 *   bfo_engine_init(&e, &cfg, &backend, mem, need, now);
 *   bfo_isend(&e, &req, buf, len, peer, ctx, tag, now);
 *   bfo_irecv(&e, &req, buf, cap, BFO_ANY_SOURCE, ctx, BFO_ANY_TAG, now);
 *   while (!bfo_test(&req)) { backend_progress(); bfo_engine_progress(&e, now); }
 *   req.status: BFO_OK, BFO_ERR_TRUNCATE, BFO_ERR_PEER_UNREACHABLE
 *
 * NOT RE-ENTRANT: a backend must not call bfo_engine_* from inside a post.
 */
#ifndef BFO_ENGINE_H
#define BFO_ENGINE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "bfo_backend.h"
#include "bfo_core.h"
#include "bfo_rail.h"
#include "bfo_recv.h"
#include "bfo_send.h"
#include "bfo_wire.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifndef BFO_MAX_RAILS
#define BFO_MAX_RAILS 8 /* rails per peer (compile-time option) */
#endif

#define BFO_ANY_SOURCE (-1)
#define BFO_ANY_TAG (-1)

/* Configuration: zero means the default given here. */
typedef struct bfo_config {
    int rank, nranks;      /* this process, and how many (required) */
    int nrails;            /* rails per peer, 1..BFO_MAX_RAILS (required) */
    int max_requests;      /* requests alive at once (default 1024) */
    int max_ops;           /* operations in flight (default 4096) */
    int max_unexpected;    /* unexpected or out-of-order messages (default 256) */
    int max_contexts;      /* context ids 0..max_contexts-1 (default 16) */
    size_t eager_limit;    /* largest eager payload, and RNDV's first bytes (default 4096) */
    size_t frag_size;      /* bytes per FRAG (default 65536) */
    int frag_pipeline;     /* FRAGs in flight per request (default 8) */
    uint64_t heartbeat_ns;        /* probe an idle rail after (default 100 ms) */
    uint64_t silence_ns;          /* rail failed when nothing heard for (default 1 s) */
    uint64_t probe_timeout_ns;    /* a probe unanswered for (default 100 ms) */
    uint64_t backoff_min_ns;      /* first reconnect delay (default 10 ms) */
    uint64_t backoff_max_ns;      /* doubling up to (default 500 ms) */
    int max_reconnects;           /* then the rail is retired (default 100) */
    uint64_t unreachable_grace_ns;/* no rail UP for this long: peer unreachable (default 2 s;
                                   * keep it above probe_timeout + backoff_max, so that a
                                   * rail that works gets a full probe cycle first) */
} bfo_config;

enum bfo_req_kind { BFO_REQ_SEND = 1, BFO_REQ_RECV = 2 };

/* A request: caller memory, valid from bfo_isend/bfo_irecv until bfo_test
 * returns 1.  Read the public part; leave the rest alone. */
typedef struct bfo_request {
    /* public, valid once complete */
    int status;     /* BFO_OK or BFO_ERR_* */
    int source;     /* receive: the sender's rank */
    int tag;        /* receive: the message's tag */
    size_t length;  /* receive: the message's length (may exceed the buffer) */
    /* private */
    int complete, kind, cs, peer, ctx, want_tag;
    uint16_t seq, rseq;
    uint8_t restarted;
    uint8_t counting;  /* the data phase began: done_bytes means something */
    char *buf;
    size_t cap, done_bytes, next_off;
    int outstanding, frags_inflight, next_event;
    bfo_handle self, remote;
    struct bfo_request *next;
} bfo_request;

/* One operation posted to the backend. */
typedef struct bfo_op {
    uint32_t gen;
    int next;            /* free list or pending list */
    int type;            /* BFO_FRAG_* */
    int peer, rail;      /* rail chosen at post; about_rail for rail control */
    int fixed_rail;      /* -1: any UP rail; else this rail only */
    int about_rail;      /* rail control: the rail it concerns */
    bfo_handle owner;    /* the request, or null for engine-owned messages */
    uint16_t rseq;       /* the owner's rseq when posted */
    uint64_t off, len;   /* data range (FRAG) */
    const void *payload;
    size_t payload_len, hdr_len;
    uint8_t hdr[BFO_MAX_HDR_SIZE];
} bfo_op;

/* An unexpected (arrived before its receive) or out-of-order message. */
typedef struct bfo_uxm {
    int next, used, peer;
    bfo_frame f;         /* decoded header; f.payload points into data */
    uint8_t *data;       /* eager_limit bytes */
} bfo_uxm;

typedef struct bfo_rail_link {
    bfo_rail_fsm fsm;
    uint32_t epoch;
    unsigned caps, bw;
    uint64_t last_rx, last_tx, probe_sent, deadline, backoff;
    int attempts, ever_up;
} bfo_rail_link;

typedef struct bfo_peer {
    bfo_rail_link rail[BFO_MAX_RAILS];
    uint16_t *send_seq, *recv_seq; /* [max_contexts]: last sent, next expected */
    int rr;                        /* round-robin cursor */
    int unreachable;
    uint64_t down_since;           /* when the last UP rail went (0: some rail is UP) */
    int pend_head, pend_tail;      /* ops waiting for an UP rail */
} bfo_peer;

typedef struct bfo_stats {
    uint64_t messages_sent, messages_received, duplicates_dropped, stale_dropped,
        protocol_violations, malformed_frames, mapouts, readmissions, restarts, notifies,
        unreachable_errors, ops_posted;
} bfo_stats;

typedef struct bfo_engine {
    bfo_config cfg;
    bfo_backend be;
    uint64_t now;
    bfo_peer *peers;
    bfo_op *ops;
    int op_free, ops_in_use;
    bfo_request **slot_req;
    uint32_t *slot_gen;
    int *slot_next;
    int slot_free, slots_in_use;
    bfo_uxm *uxm;
    int uxm_free, ux_head, ux_tail, ooo_head, uxm_in_use;
    bfo_request *posted_head, *posted_tail;
    const bfo_frame *in;      /* the frame being processed, for actions */
    const uint8_t *in_payload;
    size_t in_payload_len;
    int in_peer, in_rail;
    bfo_tracer *trace;        /* optional: every transition (set after init) */
    bfo_stats stats;
} bfo_engine;

/* ------------------------------------------------------------------ init */

static inline void bfo__config_defaults(bfo_config *c)
{
#define BFO__DEF(f, v) if (!c->f) c->f = v
    BFO__DEF(max_requests, 1024);
    BFO__DEF(max_ops, 4096);
    BFO__DEF(max_unexpected, 256);
    BFO__DEF(max_contexts, 16);
    BFO__DEF(eager_limit, 4096);
    BFO__DEF(frag_size, 65536);
    BFO__DEF(frag_pipeline, 8);
    BFO__DEF(heartbeat_ns, 100000000ull);
    BFO__DEF(silence_ns, 1000000000ull);
    BFO__DEF(probe_timeout_ns, 100000000ull);
    BFO__DEF(backoff_min_ns, 10000000ull);
    BFO__DEF(backoff_max_ns, 500000000ull);
    BFO__DEF(max_reconnects, 100);
    BFO__DEF(unreachable_grace_ns, 2000000000ull);
#undef BFO__DEF
}

static inline size_t bfo__align(size_t n) { return (n + 15) & ~(size_t)15; }

/* Bytes of memory bfo_engine_init needs for this configuration. */
static inline size_t bfo_engine_mem_size(const bfo_config *cfg_in)
{
    bfo_config c = *cfg_in;
    bfo__config_defaults(&c);
    return bfo__align(sizeof(bfo_peer) * (size_t)c.nranks) +
           bfo__align(sizeof(uint16_t) * 2 * (size_t)c.max_contexts * (size_t)c.nranks) +
           bfo__align(sizeof(bfo_op) * (size_t)c.max_ops) +
           bfo__align(sizeof(bfo_request *) * (size_t)c.max_requests) +
           bfo__align(sizeof(uint32_t) * (size_t)c.max_requests) +
           bfo__align(sizeof(int) * (size_t)c.max_requests) +
           bfo__align(sizeof(bfo_uxm) * (size_t)c.max_unexpected) +
           bfo__align(c.eager_limit * (size_t)c.max_unexpected) + 16;
}

static inline void *bfo__carve(char **p, size_t n)
{
    void *r = *p;
    *p += bfo__align(n);
    return r;
}

static inline void bfo__rail_step(bfo_engine *e, int peer, int rail, int ev);

/* Sets up the engine in mem (at least bfo_engine_mem_size bytes) and starts
 * connecting every rail to every peer.  Returns BFO_OK, BFO_ERR_INVALID or
 * BFO_ERR_NO_MEMORY. */
static inline int bfo_engine_init(bfo_engine *e, const bfo_config *cfg, const bfo_backend *be,
                                  void *mem, size_t mem_len, uint64_t now)
{
    char *p = (char *)(((uintptr_t)mem + 15) & ~(uintptr_t)15);
    memset(e, 0, sizeof *e);
    if (!cfg || !be || !be->post_send || cfg->nranks <= 0 || cfg->rank < 0 ||
        cfg->rank >= cfg->nranks || cfg->nrails <= 0 || cfg->nrails > BFO_MAX_RAILS)
        return BFO_ERR_INVALID;
    e->cfg = *cfg;
    bfo__config_defaults(&e->cfg);
    if (!mem || mem_len < bfo_engine_mem_size(cfg))
        return BFO_ERR_NO_MEMORY;
    e->be = *be;
    e->now = now;
    const bfo_config *c = &e->cfg;
    e->peers = (bfo_peer *)bfo__carve(&p, sizeof(bfo_peer) * (size_t)c->nranks);
    uint16_t *seqs = (uint16_t *)bfo__carve(&p, sizeof(uint16_t) * 2 * (size_t)c->max_contexts *
                                                   (size_t)c->nranks);
    e->ops = (bfo_op *)bfo__carve(&p, sizeof(bfo_op) * (size_t)c->max_ops);
    e->slot_req = (bfo_request **)bfo__carve(&p, sizeof(bfo_request *) * (size_t)c->max_requests);
    e->slot_gen = (uint32_t *)bfo__carve(&p, sizeof(uint32_t) * (size_t)c->max_requests);
    e->slot_next = (int *)bfo__carve(&p, sizeof(int) * (size_t)c->max_requests);
    e->uxm = (bfo_uxm *)bfo__carve(&p, sizeof(bfo_uxm) * (size_t)c->max_unexpected);
    uint8_t *ubuf = (uint8_t *)bfo__carve(&p, c->eager_limit * (size_t)c->max_unexpected);

    memset(seqs, 0, sizeof(uint16_t) * 2 * (size_t)c->max_contexts * (size_t)c->nranks);
    for (int i = 0; i < c->nranks; i++) {
        bfo_peer *pe = &e->peers[i];
        memset(pe, 0, sizeof *pe);
        pe->send_seq = seqs + (size_t)i * 2 * (size_t)c->max_contexts;
        pe->recv_seq = pe->send_seq + c->max_contexts;
        for (int k = 0; k < c->max_contexts; k++)
            pe->recv_seq[k] = 1;
        pe->pend_head = pe->pend_tail = -1;
        pe->down_since = now ? now : 1;
        for (int r = 0; r < c->nrails; r++) {
            bfo_rail_init(&pe->rail[r].fsm);
            pe->rail[r].backoff = c->backoff_min_ns;
            pe->rail[r].caps = be->rail_caps ? be->rail_caps(be->ctx, r) : 0;
            pe->rail[r].bw = be->rail_bandwidth ? be->rail_bandwidth(be->ctx, r) : 0;
            if (!pe->rail[r].bw)
                pe->rail[r].bw = 1;
        }
    }
    for (int i = 0; i < c->max_ops; i++) {
        e->ops[i].next = i + 1 < c->max_ops ? i + 1 : -1;
        e->ops[i].gen = 1;
    }
    e->op_free = 0;
    for (int i = 0; i < c->max_requests; i++) {
        e->slot_req[i] = NULL;
        e->slot_gen[i] = 1;
        e->slot_next[i] = i + 1 < c->max_requests ? i + 1 : -1;
    }
    e->slot_free = 0;
    for (int i = 0; i < c->max_unexpected; i++) {
        e->uxm[i].next = i + 1 < c->max_unexpected ? i + 1 : -1;
        e->uxm[i].used = 0;
        e->uxm[i].data = ubuf + (size_t)i * c->eager_limit;
    }
    e->uxm_free = 0;
    e->ux_head = e->ux_tail = e->ooo_head = -1;
    for (int i = 0; i < c->nranks; i++)
        if (i != c->rank)
            for (int r = 0; r < c->nrails; r++)
                if (be->connect && be->connect(be->ctx, i, r) != 0)
                    bfo__rail_step(e, i, r, BFO_EV_CONNECT_FAILED);
    return BFO_OK;
}

/* --------------------------------------------------------------- handles */

static inline bfo_handle bfo__null_handle(void)
{
    bfo_handle h;
    h.index = 0;
    h.gen = 0;
    return h;
}

static inline bfo_handle bfo__handle_alloc(bfo_engine *e, bfo_request *r)
{
    bfo_handle h = bfo__null_handle();
    int i = e->slot_free;
    if (i < 0)
        return h;
    e->slot_free = e->slot_next[i];
    e->slot_req[i] = r;
    e->slots_in_use++;
    h.index = (uint32_t)i;
    h.gen = e->slot_gen[i];
    return h;
}

static inline void bfo__handle_release(bfo_engine *e, bfo_handle h)
{
    if (bfo_handle_is_null(h) || h.index >= (uint32_t)e->cfg.max_requests ||
        e->slot_gen[h.index] != h.gen)
        return;
    e->slot_req[h.index] = NULL;
    if (++e->slot_gen[h.index] == 0)
        e->slot_gen[h.index] = 1;
    e->slot_next[h.index] = e->slot_free;
    e->slot_free = (int)h.index;
    e->slots_in_use--;
}

/* The live request a handle names, or NULL (null, out of range, recycled). */
static inline bfo_request *bfo__handle_get(const bfo_engine *e, bfo_handle h)
{
    if (bfo_handle_is_null(h) || h.index >= (uint32_t)e->cfg.max_requests ||
        e->slot_gen[h.index] != h.gen)
        return NULL;
    return e->slot_req[h.index];
}

/* ------------------------------------------------------------------- ops */

static inline bfo_op *bfo__op_alloc(bfo_engine *e, int type, int peer)
{
    int i = e->op_free;
    bfo_op *op;
    if (i < 0)
        return NULL;
    op = &e->ops[i];
    e->op_free = op->next;
    e->ops_in_use++;
    op->next = -1;
    op->type = type;
    op->peer = peer;
    op->rail = -1;
    op->fixed_rail = -1;
    op->about_rail = -1;
    op->owner = bfo__null_handle();
    op->rseq = 0;
    op->off = op->len = 0;
    op->payload = NULL;
    op->payload_len = op->hdr_len = 0;
    return op;
}

static inline void bfo__op_free(bfo_engine *e, bfo_op *op)
{
    int i = (int)(op - e->ops);
    if (++op->gen == 0)
        op->gen = 1;
    op->next = e->op_free;
    e->op_free = i;
    e->ops_in_use--;
}

static inline uint64_t bfo__token(const bfo_engine *e, const bfo_op *op)
{
    return ((uint64_t)op->gen << 32) | (uint64_t)(op - e->ops);
}

static inline int bfo__rail_up(const bfo_engine *e, int peer, int rail)
{
    return e->peers[peer].rail[rail].fsm.cs == BFO_RAIL_ST_UP;
}

static inline int bfo__pick_rail(bfo_engine *e, int peer)
{
    bfo_peer *p = &e->peers[peer];
    for (int k = 0; k < e->cfg.nrails; k++) {
        int r = (p->rr + k) % e->cfg.nrails;
        if (bfo__rail_up(e, peer, r)) {
            p->rr = (r + 1) % e->cfg.nrails;
            return r;
        }
    }
    return -1;
}

static inline void bfo__op_fail_now(bfo_engine *e, bfo_op *op);

/* Posts op on its fixed rail or an UP rail; with no UP rail it waits in the
 * peer's pending list (moved to a surviving or re-admitted rail later). */
static inline void bfo__post(bfo_engine *e, bfo_op *op)
{
    bfo_peer *p = &e->peers[op->peer];
    int rail = op->fixed_rail >= 0 ? op->fixed_rail : bfo__pick_rail(e, op->peer);
    bfo_iov iov[2];
    if (rail < 0) {
        if (p->unreachable) {
            bfo__op_fail_now(e, op);
            return;
        }
        op->next = -1;
        if (p->pend_tail >= 0)
            e->ops[p->pend_tail].next = (int)(op - e->ops);
        else
            p->pend_head = (int)(op - e->ops);
        p->pend_tail = (int)(op - e->ops);
        return;
    }
    op->rail = rail;
    iov[0].base = op->hdr;
    iov[0].len = op->hdr_len;
    iov[1].base = op->payload;
    iov[1].len = op->payload_len;
    p->rail[rail].last_tx = e->now;
    e->stats.ops_posted++;
    if (e->be.post_send(e->be.ctx, op->peer, rail, iov, op->payload_len ? 2 : 1,
                        bfo__token(e, op)) != 0)
        bfo__op_fail_now(e, op);
}

/* Posts the ops waiting for a rail of this peer. */
static inline void bfo__flush_pending(bfo_engine *e, int peer)
{
    bfo_peer *p = &e->peers[peer];
    int i = p->pend_head;
    p->pend_head = p->pend_tail = -1;
    while (i >= 0) {
        int next = e->ops[i].next;
        bfo__post(e, &e->ops[i]);
        i = next;
    }
}

/* ------------------------------------------------------------ requests */

static inline void bfo__req_feed(bfo_engine *e, bfo_request *r, int ev);
static inline void bfo__op_done(bfo_engine *e, bfo_op *op, int ok);

/* An op that could not be posted completes with an error, now. */
static inline void bfo__op_fail_now(bfo_engine *e, bfo_op *op) { bfo__op_done(e, op, 0); }

static inline void bfo__finish(bfo_engine *e, bfo_request *r, int status)
{
    r->status = status;
    r->complete = 1;
    bfo__handle_release(e, r->self);
}

static inline bfo_op *bfo__req_op(bfo_engine *e, bfo_request *r, int type)
{
    bfo_op *op = bfo__op_alloc(e, type, r->peer);
    if (op) {
        op->owner = r->self;
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
        return; /* pool exhausted: the engine is sized too small; counted */
    h.type = (uint8_t)type;
    h.flags = 0;
    h.rseq = r->rseq;
    h.ctx = (uint16_t)r->ctx;
    h.seq = r->seq;
    h.src = (uint32_t)e->cfg.rank;
    h.sreq = sreq;
    h.dreq = dreq;
    op->hdr_len = bfo_hdr_restart_encode(&h, op->hdr, sizeof op->hdr);
    bfo__post(e, op);
}

static inline void bfo__send_rndv(bfo_engine *e, bfo_request *r)
{
    bfo_hdr_rndv h;
    bfo_op *op = bfo__req_op(e, r, BFO_FRAG_RNDV);
    size_t first = r->cap < e->cfg.eager_limit ? r->cap : e->cfg.eager_limit;
    if (!op)
        return;
    h.type = BFO_FRAG_RNDV;
    h.flags = r->restarted ? BFO_FLAG_RESTART : 0;
    h.ctx = (uint16_t)r->ctx;
    h.src = (uint32_t)e->cfg.rank;
    h.tag = (uint32_t)r->want_tag;
    h.seq = r->seq;
    h.rseq = r->rseq;
    h.msg_len = r->cap;
    h.sreq = r->self;
    h.dreq = r->restarted ? r->remote : bfo__null_handle();
    op->hdr_len = bfo_hdr_rndv_encode(&h, op->hdr, sizeof op->hdr);
    op->payload = r->buf;
    op->payload_len = first;
    bfo__post(e, op);
}

static inline void bfo__send_frags(bfo_engine *e, bfo_request *r)
{
    while (r->next_off < r->cap && r->frags_inflight < e->cfg.frag_pipeline) {
        bfo_hdr_frag h;
        size_t n = r->cap - r->next_off;
        bfo_op *op = bfo__req_op(e, r, BFO_FRAG_FRAG);
        if (!op)
            return;
        if (n > e->cfg.frag_size)
            n = e->cfg.frag_size;
        h.type = BFO_FRAG_FRAG;
        h.flags = 0;
        h.rseq = r->rseq;
        h.dreq = r->remote;
        h.offset = r->next_off;
        op->hdr_len = bfo_hdr_frag_encode(&h, op->hdr, sizeof op->hdr);
        op->payload = r->buf + r->next_off;
        op->payload_len = n;
        op->off = r->next_off;
        op->len = n;
        r->next_off += n;
        r->frags_inflight++;
        bfo__post(e, op);
    }
}

static inline void bfo__send_action(bfo_engine *e, bfo_request *r, int act)
{
    switch (act) {
    case BFO_SEND_ACT_POST_MATCH: {
        bfo_hdr_match h;
        bfo_op *op = bfo__req_op(e, r, BFO_FRAG_MATCH);
        if (!op)
            return;
        h.type = BFO_FRAG_MATCH;
        h.flags = 0;
        h.ctx = (uint16_t)r->ctx;
        h.src = (uint32_t)e->cfg.rank;
        h.tag = (uint32_t)r->want_tag;
        h.seq = r->seq;
        op->hdr_len = bfo_hdr_match_encode(&h, op->hdr, sizeof op->hdr);
        op->payload = r->buf;
        op->payload_len = r->cap;
        bfo__post(e, op);
        break;
    }
    case BFO_SEND_ACT_POST_RNDV: bfo__send_rndv(e, r); break;
    case BFO_SEND_ACT_SEND_FRAGS: bfo__send_frags(e, r); break;
    case BFO_SEND_ACT_POST_NOTIFY:
        e->stats.notifies++;
        r->rseq++;
        bfo__post_restart_msg(e, r, BFO_FRAG_NOTIFY, r->self, r->remote);
        break;
    case BFO_SEND_ACT_REPOST_NOTIFY:
        bfo__post_restart_msg(e, r, BFO_FRAG_NOTIFY, r->self, r->remote);
        break;
    case BFO_SEND_ACT_RESTART:
        r->rseq++;
        r->restarted = 1;
        r->done_bytes = r->next_off = 0;
        r->frags_inflight = 0;
        r->counting = 0;
        e->stats.restarts++;
        r->next_event = BFO_EV_RNDV_CHOSEN; /* copy: the protocol every rail has */
        break;
    case BFO_SEND_ACT_COMPLETE:
        e->stats.messages_sent++;
        bfo__finish(e, r, BFO_OK);
        break;
    case BFO_SEND_ACT_FAIL_UNREACHABLE:
        e->stats.unreachable_errors++;
        bfo__finish(e, r, BFO_ERR_PEER_UNREACHABLE);
        break;
    case BFO_SEND_ACT_NOTE_ERROR:
    case BFO_SEND_ACT_DROP:
        break;
    default: /* POST_RGET, POST_WRITE, POST_FIN, NOTE_FIN: not bound yet */
        e->stats.protocol_violations++;
        break;
    }
}

static inline void bfo__recv_action(bfo_engine *e, bfo_request *r, int act)
{
    const bfo_frame *f = e->in;
    switch (act) {
    case BFO_RECV_ACT_DELIVER_MATCH:
    case BFO_RECV_ACT_ACCEPT_RNDV: {
        size_t n = e->in_payload_len < r->cap ? e->in_payload_len : r->cap;
        if (n)
            memcpy(r->buf, e->in_payload, n);
        r->source = e->in_peer;
        if (act == BFO_RECV_ACT_DELIVER_MATCH) {
            r->tag = (int)f->h.match.tag;
            r->length = e->in_payload_len;
            e->stats.messages_received++;
            bfo__finish(e, r, r->length > r->cap ? BFO_ERR_TRUNCATE : BFO_OK);
        } else {
            r->tag = (int)f->h.rndv.tag;
            r->length = (size_t)f->h.rndv.msg_len;
            r->remote = f->h.rndv.sreq;
            r->rseq = f->h.rndv.rseq;
            r->seq = f->h.rndv.seq;
            r->done_bytes = e->in_payload_len;
            r->counting = 1;
            if (bfo_handle_is_null(r->self))
                r->self = bfo__handle_alloc(e, r);
        }
        break;
    }
    case BFO_RECV_ACT_POST_ACK: {
        bfo_hdr_ack h;
        bfo_op *op = bfo__req_op(e, r, BFO_FRAG_ACK);
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
        break;
    }
    case BFO_RECV_ACT_ACCEPT_FRAG: {
        uint64_t off = f->h.frag.offset;
        if (off < r->cap) {
            size_t n = r->cap - (size_t)off;
            if (n > e->in_payload_len)
                n = e->in_payload_len;
            memcpy(r->buf + off, e->in_payload, n);
        }
        r->done_bytes += e->in_payload_len;
        break;
    }
    case BFO_RECV_ACT_POST_RECVERRNOTIFY:
        bfo__post_restart_msg(e, r, BFO_FRAG_RECVERRNOTIFY, r->remote, r->self);
        break;
    case BFO_RECV_ACT_ACCEPT_NOTIFY: r->rseq = f->h.restart.rseq; break;
    case BFO_RECV_ACT_POST_RESTARTACK:
        bfo__post_restart_msg(e, r, BFO_FRAG_RESTARTACK, r->remote, r->self);
        break;
    case BFO_RECV_ACT_RESET: r->done_bytes = 0; break;
    case BFO_RECV_ACT_COMPLETE:
        e->stats.messages_received++;
        bfo__finish(e, r, r->length > r->cap ? BFO_ERR_TRUNCATE : BFO_OK);
        break;
    case BFO_RECV_ACT_FAIL_UNREACHABLE:
        e->stats.unreachable_errors++;
        bfo__finish(e, r, BFO_ERR_PEER_UNREACHABLE);
        break;
    case BFO_RECV_ACT_DROP: break;
    default: /* ACCEPT_RGET, POST_PUTS, POST_READS, ACCOUNT_READ, ACCEPT_FIN,
              * POST_FIN, POST_RESTARTNACK (the engine NACKs for released
              * requests): not bound yet */
        e->stats.protocol_violations++;
        break;
    }
}

/* The fact a request waits for, if it is true now: ALL_DELIVERED (the data
 * phase began, every byte is delivered, nothing is outstanding) or DRAINED
 * (nothing is outstanding); 0 when neither applies. */
static inline int bfo__req_fact(const bfo_request *r)
{
    const bfo_machine *m = r->kind == BFO_REQ_SEND ? &bfo_send_machine : &bfo_recv_machine;
    size_t total = r->kind == BFO_REQ_SEND ? r->cap : r->length;
    if (r->complete || r->outstanding != 0)
        return 0;
    if (r->counting && r->done_bytes >= total && bfo_fsm_accepts(m, r->cs, BFO_EV_ALL_DELIVERED))
        return BFO_EV_ALL_DELIVERED;
    if (bfo_fsm_accepts(m, r->cs, BFO_EV_DRAINED))
        return BFO_EV_DRAINED;
    return 0;
}

/* Feeds one event to a request, carries out the actions, then the facts
 * (ALL_DELIVERED, DRAINED) and any event an action asked for. */
static inline void bfo__req_feed(bfo_engine *e, bfo_request *r, int ev)
{
    while (ev && !r->complete) {
        const bfo_machine *m = r->kind == BFO_REQ_SEND ? &bfo_send_machine : &bfo_recv_machine;
        bfo_step st;
        memset(&st, 0, sizeof st);
        st.trace = e->trace;
        st.obj = r;
        r->next_event = 0;
        if (bfo_fsm_step(m, &r->cs, ev, &st) != BFO_OK) {
            e->stats.protocol_violations++;
            return;
        }
        for (unsigned i = 0; i < st.n_actions; i++) {
            if (r->kind == BFO_REQ_SEND)
                bfo__send_action(e, r, st.actions[i]);
            else
                bfo__recv_action(e, r, st.actions[i]);
        }
        ev = r->next_event ? r->next_event : bfo__req_fact(r);
    }
}

/* A completion for an op: route it to its owner. */
static inline void bfo__op_done(bfo_engine *e, bfo_op *op, int ok)
{
    const int type = op->type, peer = op->peer, about = op->about_rail;
    const bfo_handle owner = op->owner;
    const uint16_t rseq = op->rseq;
    const uint64_t len = op->len;
    bfo_request *r;

    if (about >= 0) { /* rail control: the rail machine it concerns */
        bfo__op_free(e, op);
        bfo__rail_step(e, peer, about, bfo_frag_event(type, ok ? BFO_EVK_DELIVERED : BFO_EVK_FAILED));
        return;
    }
    if (bfo_handle_is_null(owner)) { /* an engine-owned NACK: until delivered */
        if (!ok && !e->peers[peer].unreachable) {
            bfo_op *again = bfo__op_alloc(e, type, peer);
            if (again) {
                memcpy(again->hdr, op->hdr, op->hdr_len);
                again->hdr_len = op->hdr_len;
                bfo__op_free(e, op);
                bfo__post(e, again);
                return;
            }
        }
        bfo__op_free(e, op);
        return;
    }
    bfo__op_free(e, op);
    r = bfo__handle_get(e, owner);
    if (!r)
        return; /* the request is gone: nothing waits for this */
    r->outstanding--;
    if (type == BFO_FRAG_FRAG) {
        r->frags_inflight--;
        if (ok && rseq == r->rseq)
            r->done_bytes += (size_t)len;
    }
    if (rseq != r->rseq && r->kind == BFO_REQ_RECV) {
        /* posted under an older restart: only the count matters */
        bfo__req_feed(e, r, bfo__req_fact(r));
        return;
    }
    bfo__req_feed(e, r, bfo_frag_event(type, ok ? BFO_EVK_DELIVERED : BFO_EVK_FAILED));
}

/* Called by the backend once per posted operation. */
static inline void bfo_engine_completion(bfo_engine *e, uint64_t token, int ok)
{
    uint32_t idx = (uint32_t)token, gen = (uint32_t)(token >> 32);
    if (idx >= (uint32_t)e->cfg.max_ops || e->ops[idx].gen != gen)
        return; /* not ours, or already completed */
    bfo__op_done(e, &e->ops[idx], ok);
}

/* --------------------------------------------------------------- rails */

static inline void bfo__rail_ctl(bfo_engine *e, int peer, int rail, int type, int on_rail,
                                 uint64_t nonce)
{
    bfo_hdr_railctl h;
    bfo_op *op = bfo__op_alloc(e, type, peer);
    if (!op)
        return;
    op->about_rail = rail;
    op->fixed_rail = on_rail;
    h.type = (uint8_t)type;
    h.flags = 0;
    h.rail = (uint16_t)rail;
    h.epoch = e->peers[peer].rail[rail].epoch;
    h.nonce = nonce;
    op->hdr_len = bfo_hdr_railctl_encode(&h, op->hdr, sizeof op->hdr);
    bfo__post(e, op);
}

static inline void bfo__peer_unreachable(bfo_engine *e, int peer);
static inline int bfo__all_unreachable(const bfo_engine *e);

static inline void bfo__rail_action(bfo_engine *e, int peer, int rail, int act)
{
    bfo_peer *p = &e->peers[peer];
    bfo_rail_link *rs = &p->rail[rail];
    switch (act) {
    case BFO_RAIL_ACT_SEND_PROBE:
        rs->probe_sent = e->now;
        bfo__rail_ctl(e, peer, rail, BFO_FRAG_PROBE, rail, e->now);
        break;
    case BFO_RAIL_ACT_SEND_PROBEACK:
        bfo__rail_ctl(e, peer, rail, BFO_FRAG_PROBEACK, rail,
                      e->in ? e->in->h.railctl.nonce : 0);
        break;
    case BFO_RAIL_ACT_ADMIT:
        if (rs->ever_up)
            e->stats.readmissions++;
        rs->ever_up = 1;
        rs->epoch++;
        rs->attempts = 0;
        rs->backoff = e->cfg.backoff_min_ns;
        rs->last_rx = rs->last_tx = e->now;
        p->down_since = 0;
        p->unreachable = 0;
        break;
    case BFO_RAIL_ACT_MAP_OUT: {
        int up = 0;
        e->stats.mapouts++;
        for (int k = 0; k < e->cfg.nrails; k++)
            up += k != rail && bfo__rail_up(e, peer, k);
        if (!up && !p->down_since)
            p->down_since = e->now ? e->now : 1;
        break;
    }
    case BFO_RAIL_ACT_SEND_BROKEN: {
        int other = -1;
        for (int k = 0; k < e->cfg.nrails && other < 0; k++)
            if (k != rail && bfo__rail_up(e, peer, k))
                other = k;
        if (other >= 0)
            bfo__rail_ctl(e, peer, rail, BFO_FRAG_BROKEN, other, 0);
        break;
    }
    case BFO_RAIL_ACT_SCHEDULE_RECONNECT:
        rs->deadline = e->now + rs->backoff;
        rs->backoff = rs->backoff * 2 > e->cfg.backoff_max_ns ? e->cfg.backoff_max_ns
                                                               : rs->backoff * 2;
        rs->attempts++;
        break;
    case BFO_RAIL_ACT_RECONNECT:
        if (!e->be.connect || e->be.connect(e->be.ctx, peer, rail) != 0)
            rs->deadline = e->now; /* the next progress reports the failure */
        break;
    case BFO_RAIL_ACT_RETIRE: break;
    default: break;
    }
}

static inline void bfo__rail_step(bfo_engine *e, int peer, int rail, int ev)
{
    bfo_peer *p = &e->peers[peer];
    bfo_step st;
    int was_up = bfo__rail_up(e, peer, rail);
    memset(&st, 0, sizeof st);
    st.trace = e->trace;
    st.obj = &p->rail[rail];
    if (bfo_rail_step(&p->rail[rail].fsm, ev, &st) != BFO_OK) {
        e->stats.protocol_violations++;
        return;
    }
    for (unsigned i = 0; i < st.n_actions; i++)
        bfo__rail_action(e, peer, rail, st.actions[i]);
    if (!was_up && bfo__rail_up(e, peer, rail))
        bfo__flush_pending(e, peer);
}

/* Called by the backend: BFO_EV_CONNECTED, BFO_EV_CONNECT_FAILED or
 * BFO_EV_RAIL_ERROR for one peer, or every peer (BFO_ALL_PEERS). */
static inline void bfo_engine_rail_event(bfo_engine *e, int peer, int rail, int ev, uint64_t now)
{
    if (rail < 0 || rail >= e->cfg.nrails)
        return;
    if (now > e->now)
        e->now = now;
    if (peer == BFO_ALL_PEERS) {
        for (int i = 0; i < e->cfg.nranks; i++)
            if (i != e->cfg.rank)
                bfo__rail_step(e, i, rail, ev);
        return;
    }
    if (peer >= 0 && peer < e->cfg.nranks && peer != e->cfg.rank)
        bfo__rail_step(e, peer, rail, ev);
}

/* ------------------------------------------------------------ matching */

static inline int bfo__uxm_take(bfo_engine *e)
{
    int i = e->uxm_free;
    if (i >= 0) {
        e->uxm_free = e->uxm[i].next;
        e->uxm[i].used = 1;
        e->uxm[i].next = -1;
        e->uxm_in_use++;
    }
    return i;
}

static inline void bfo__uxm_put(bfo_engine *e, int i)
{
    e->uxm[i].used = 0;
    e->uxm[i].next = e->uxm_free;
    e->uxm_free = i;
    e->uxm_in_use--;
}

static inline void bfo__uxm_fill(bfo_engine *e, int i, int peer, const bfo_frame *f)
{
    bfo_uxm *u = &e->uxm[i];
    u->peer = peer;
    u->f = *f;
    if (f->payload_len)
        memcpy(u->data, f->payload, f->payload_len);
    u->f.payload = u->data;
}

static inline int bfo__frame_ctx(const bfo_frame *f) { return f->h.match.ctx; }
static inline int bfo__frame_tag(const bfo_frame *f)
{
    return (int)(f->type == BFO_FRAG_MATCH ? f->h.match.tag : f->h.rndv.tag);
}

static inline int bfo__matches(const bfo_request *r, int peer, const bfo_frame *f)
{
    return r->ctx == bfo__frame_ctx(f) && (r->peer == BFO_ANY_SOURCE || r->peer == peer) &&
           (r->want_tag == BFO_ANY_TAG || r->want_tag == bfo__frame_tag(f));
}

/* A posted receive takes a message: the first event of its machine. */
static inline void bfo__recv_take(bfo_engine *e, bfo_request *r, int peer, const bfo_frame *f)
{
    e->in = f;
    e->in_payload = f->payload;
    e->in_payload_len = f->payload_len;
    e->in_peer = peer;
    r->peer = peer;
    r->ctx = bfo__frame_ctx(f);
    bfo__req_feed(e, r, f->type == BFO_FRAG_MATCH ? BFO_EV_MATCH_RCVD : BFO_EV_RNDV_RCVD);
    if (!r->complete && r->cs == BFO_RECV_ST_RNDV_MATCHED)
        bfo__req_feed(e, r, BFO_EV_COPY_CHOSEN);
    e->in = NULL;
}

/* The message is next in its (context, peer) order: match it or queue it.
 * Returns BFO_ERR_AGAIN when it must wait for an unexpected buffer. */
static inline int bfo__deliver_in_order(bfo_engine *e, int peer, const bfo_frame *f)
{
    bfo_request *prev = NULL;
    for (bfo_request *r = e->posted_head; r; prev = r, r = r->next) {
        if (!bfo__matches(r, peer, f))
            continue;
        if (prev)
            prev->next = r->next;
        else
            e->posted_head = r->next;
        if (e->posted_tail == r)
            e->posted_tail = prev;
        r->next = NULL;
        bfo__recv_take(e, r, peer, f);
        return BFO_OK;
    }
    int i = bfo__uxm_take(e);
    if (i < 0)
        return BFO_ERR_AGAIN;
    bfo__uxm_fill(e, i, peer, f);
    if (e->ux_tail >= 0)
        e->uxm[e->ux_tail].next = i;
    else
        e->ux_head = i;
    e->ux_tail = i;
    return BFO_OK;
}

static inline int bfo__frame_seq(const bfo_frame *f)
{
    return f->type == BFO_FRAG_MATCH ? f->h.match.seq : f->h.rndv.seq;
}

/* MATCH or first RNDV: the sequence window, then in-order delivery. */
static inline int bfo__on_message(bfo_engine *e, int peer, const bfo_frame *f)
{
    bfo_peer *p = &e->peers[peer];
    int ctx = bfo__frame_ctx(f);
    uint16_t seq = (uint16_t)bfo__frame_seq(f);
    int d;
    if (ctx >= e->cfg.max_contexts || f->payload_len > e->cfg.eager_limit ||
        (f->type == BFO_FRAG_MATCH ? f->h.match.src : f->h.rndv.src) != (uint32_t)peer)
        return BFO_ERR_PROTOCOL;
    d = bfo_rseq_cmp(seq, p->recv_seq[ctx]);
    if (d < 0) {
        e->stats.duplicates_dropped++;
        return BFO_OK;
    }
    if (d > 0) { /* ahead: wait in the out-of-order list (once) */
        for (int i = e->ooo_head; i >= 0; i = e->uxm[i].next)
            if (e->uxm[i].peer == peer && bfo__frame_ctx(&e->uxm[i].f) == ctx &&
                bfo__frame_seq(&e->uxm[i].f) == seq) {
                e->stats.duplicates_dropped++;
                return BFO_OK;
            }
        int i = bfo__uxm_take(e);
        if (i < 0)
            return BFO_ERR_AGAIN;
        bfo__uxm_fill(e, i, peer, f);
        e->uxm[i].next = e->ooo_head;
        e->ooo_head = i;
        return BFO_OK;
    }
    int rc = bfo__deliver_in_order(e, peer, f);
    if (rc != BFO_OK)
        return rc;
    p->recv_seq[ctx]++;
    for (int progress = 1; progress;) { /* the out-of-order list may go on */
        progress = 0;
        for (int i = e->ooo_head, prev = -1; i >= 0; prev = i, i = e->uxm[i].next) {
            bfo_uxm *u = &e->uxm[i];
            if (u->peer != peer || bfo__frame_ctx(&u->f) != ctx ||
                bfo__frame_seq(&u->f) != p->recv_seq[ctx])
                continue;
            if (bfo__deliver_in_order(e, peer, &u->f) != BFO_OK)
                return BFO_OK; /* it waits in the list; retried on the next frame */
            if (prev >= 0)
                e->uxm[prev].next = u->next;
            else
                e->ooo_head = u->next;
            bfo__uxm_put(e, i);
            p->recv_seq[ctx]++;
            progress = 1;
            break;
        }
    }
    return BFO_OK;
}

/* --------------------------------------------------------------- frames */

/* The live request of kind `want` that a handle names, checked against its
 * restart sequence.  With newer_is_new (NOTIFY, restarted RNDV) a newer rseq
 * is a new message and an equal one a duplicate; otherwise (replies and
 * data) only an equal rseq is current.  Sets *evk to BFO_EVK_RCVD or
 * BFO_EVK_DUP_RCVD; returns NULL when the message is stale. */
static inline bfo_request *bfo__lookup(bfo_engine *e, bfo_handle h, int want, uint16_t rseq,
                                       int newer_is_new, int *evk)
{
    bfo_request *r = bfo__handle_get(e, h);
    int d;
    if (!r || r->kind != want)
        return NULL;
    d = bfo_rseq_cmp(rseq, r->rseq);
    if (newer_is_new ? d < 0 : d != 0)
        return NULL;
    *evk = d > 0 || !newer_is_new ? BFO_EVK_RCVD : BFO_EVK_DUP_RCVD;
    return r;
}

static inline void bfo__nack_from(bfo_engine *e, int peer, const bfo_frame *f)
{
    bfo_hdr_restart h = f->h.restart;
    bfo_op *op = bfo__op_alloc(e, BFO_FRAG_RESTARTNACK, peer);
    if (!op)
        return;
    h.type = BFO_FRAG_RESTARTNACK;
    h.src = (uint32_t)e->cfg.rank;
    op->hdr_len = bfo_hdr_restart_encode(&h, op->hdr, sizeof op->hdr);
    bfo__post(e, op);
}

/* Called by the backend for each frame that arrives.  Returns BFO_OK (taken
 * or dropped as duplicate), BFO_ERR_AGAIN (no buffer: offer it again
 * later), BFO_ERR_STALE (dropped: names a finished request or an older
 * restart), BFO_ERR_PROTOCOL or a bfo_frame_parse error (dropped, counted;
 * the transport may drop the connection). */
static inline int bfo_engine_frame(bfo_engine *e, int peer, int rail, const uint8_t *buf,
                                   size_t len, uint64_t now)
{
    bfo_frame f;
    int rc = BFO_OK, kind;
    bfo_request *r;
    if (peer < 0 || peer >= e->cfg.nranks || peer == e->cfg.rank || rail < 0 ||
        rail >= e->cfg.nrails)
        return BFO_ERR_INVALID;
    if (now > e->now)
        e->now = now;
    rc = bfo_frame_parse(&f, buf, len);
    if (rc != BFO_OK) {
        e->stats.malformed_frames++;
        return rc;
    }
    e->peers[peer].rail[rail].last_rx = e->now;
    e->in = &f;
    e->in_payload = f.payload;
    e->in_payload_len = f.payload_len;
    e->in_peer = peer;
    e->in_rail = rail;
    switch (f.type) {
    case BFO_FRAG_MATCH:
        rc = bfo__on_message(e, peer, &f);
        break;
    case BFO_FRAG_RNDV:
        if (!(f.flags & BFO_FLAG_RESTART)) {
            rc = bfo__on_message(e, peer, &f);
            break;
        }
        r = bfo__lookup(e, f.h.rndv.dreq, BFO_REQ_RECV, f.h.rndv.rseq, 1, &kind);
        if (!r) {
            rc = BFO_ERR_STALE;
            break;
        }
        bfo__req_feed(e, r, bfo_frag_event(f.type, kind));
        if (!r->complete && r->cs == BFO_RECV_ST_RNDV_MATCHED)
            bfo__req_feed(e, r, BFO_EV_COPY_CHOSEN);
        break;
    case BFO_FRAG_ACK:
        r = bfo__lookup(e, f.h.ack.sreq, BFO_REQ_SEND, f.h.ack.rseq, 0, &kind);
        if (!r) {
            rc = BFO_ERR_STALE;
            break;
        }
        if (f.h.ack.offset > r->cap) {
            rc = BFO_ERR_PROTOCOL;
            break;
        }
        if (r->cs == BFO_SEND_ST_RNDV_SENT || r->cs == BFO_SEND_ST_RGET_SENT) {
            r->remote = f.h.ack.dreq;
            r->next_off = (size_t)f.h.ack.offset;
            r->done_bytes = (size_t)f.h.ack.offset;
            r->counting = 1;
        }
        bfo__req_feed(e, r, BFO_EV_ACK_RCVD);
        break;
    case BFO_FRAG_FRAG:
        r = bfo__lookup(e, f.h.frag.dreq, BFO_REQ_RECV, f.h.frag.rseq, 0, &kind);
        if (!r) {
            rc = BFO_ERR_STALE;
            break;
        }
        if (f.h.frag.offset + f.payload_len > r->length) {
            rc = BFO_ERR_PROTOCOL;
            break;
        }
        bfo__req_feed(e, r, BFO_EV_FRAG_RCVD);
        break;
    case BFO_FRAG_NOTIFY:
        r = bfo__handle_get(e, f.h.restart.dreq);
        if (!r || r->kind != BFO_REQ_RECV) { /* complete and gone: NACK */
            bfo__nack_from(e, peer, &f);
            rc = BFO_ERR_STALE;
            break;
        }
        r = bfo__lookup(e, f.h.restart.dreq, BFO_REQ_RECV, f.h.restart.rseq, 1, &kind);
        if (!r) {
            rc = BFO_ERR_STALE;
            break;
        }
        bfo__req_feed(e, r, bfo_frag_event(f.type, kind));
        break;
    case BFO_FRAG_RESTARTACK:
    case BFO_FRAG_RESTARTNACK:
    case BFO_FRAG_RECVERRNOTIFY:
        r = bfo__handle_get(e, f.h.restart.sreq);
        if (!r || r->kind != BFO_REQ_SEND) {
            rc = BFO_ERR_STALE;
            break;
        }
        if (f.type == BFO_FRAG_RECVERRNOTIFY) { /* the receiver's rseq: not older */
            if (bfo_rseq_cmp(f.h.restart.rseq, r->rseq) < 0) {
                rc = BFO_ERR_STALE;
                break;
            }
        } else if (!bfo__lookup(e, f.h.restart.sreq, BFO_REQ_SEND, f.h.restart.rseq, 0, &kind)) {
            rc = BFO_ERR_STALE;
            break;
        }
        if (f.type == BFO_FRAG_RECVERRNOTIFY && bfo_handle_is_null(r->remote))
            r->remote = f.h.restart.dreq;
        bfo__req_feed(e, r, bfo_frag_event(f.type, BFO_EVK_RCVD));
        break;
    case BFO_FRAG_BROKEN:
    case BFO_FRAG_PROBE:
    case BFO_FRAG_PROBEACK: {
        int about = f.h.railctl.rail;
        if (about >= e->cfg.nrails) {
            rc = BFO_ERR_PROTOCOL;
            break;
        }
        if (f.type == BFO_FRAG_BROKEN &&
            (int32_t)(f.h.railctl.epoch - e->peers[peer].rail[about].epoch) < 0) {
            rc = BFO_ERR_STALE; /* about an earlier life of the rail */
            break;
        }
        bfo__rail_step(e, peer, f.type == BFO_FRAG_BROKEN ? about : rail,
                       bfo_frag_event(f.type, BFO_EVK_RCVD));
        break;
    }
    default: /* RGET, PUT, FIN: not bound yet */
        rc = BFO_ERR_PROTOCOL;
        break;
    }
    e->in = NULL;
    if (rc == BFO_ERR_STALE)
        e->stats.stale_dropped++;
    else if (rc == BFO_ERR_PROTOCOL)
        e->stats.protocol_violations++;
    return rc;
}

/* ------------------------------------------------------------------ API */

static inline void bfo__req_init(bfo_request *r, int kind, void *buf, size_t cap, int peer,
                                 int ctx, int tag)
{
    memset(r, 0, sizeof *r);
    r->kind = kind;
    r->buf = (char *)buf;
    r->cap = cap;
    r->peer = peer;
    r->ctx = ctx;
    r->want_tag = tag;
    r->status = BFO_OK;
}

/* Starts sending len bytes of buf to peer.  Returns BFO_OK (then poll
 * bfo_test), BFO_ERR_INVALID, BFO_ERR_PEER_UNREACHABLE (completed at once)
 * or BFO_ERR_NO_MEMORY (no request slot left: complete some first). */
static inline int bfo_isend(bfo_engine *e, bfo_request *r, const void *buf, size_t len, int peer,
                            int ctx, int tag, uint64_t now)
{
    if (!r || peer < 0 || peer >= e->cfg.nranks || peer == e->cfg.rank || ctx < 0 ||
        ctx >= e->cfg.max_contexts || tag < 0 || (len && !buf))
        return BFO_ERR_INVALID;
    if (now > e->now)
        e->now = now;
    bfo__req_init(r, BFO_REQ_SEND, (void *)(uintptr_t)buf, len, peer, ctx, tag);
    r->cs = bfo_send_machine.start;
    r->self = bfo__handle_alloc(e, r);
    if (bfo_handle_is_null(r->self))
        return BFO_ERR_NO_MEMORY;
    if (e->peers[peer].unreachable) {
        bfo__req_feed(e, r, BFO_EV_PEER_UNREACHABLE);
        return BFO_ERR_PEER_UNREACHABLE;
    }
    r->seq = ++e->peers[peer].send_seq[ctx];
    bfo__req_feed(e, r, len <= e->cfg.eager_limit ? BFO_EV_EAGER_CHOSEN : BFO_EV_RNDV_CHOSEN);
    return BFO_OK;
}

/* Posts a receive of at most cap bytes from peer (or BFO_ANY_SOURCE) with
 * tag (or BFO_ANY_TAG) in context ctx.  Returns BFO_OK, BFO_ERR_INVALID or
 * BFO_ERR_PEER_UNREACHABLE (completed at once). */
static inline int bfo_irecv(bfo_engine *e, bfo_request *r, void *buf, size_t cap, int peer,
                            int ctx, int tag, uint64_t now)
{
    bfo_request *rr = r;
    if (!r || peer < BFO_ANY_SOURCE || peer >= e->cfg.nranks || ctx < 0 ||
        ctx >= e->cfg.max_contexts || tag < BFO_ANY_TAG || (cap && !buf))
        return BFO_ERR_INVALID;
    if (now > e->now)
        e->now = now;
    bfo__req_init(r, BFO_REQ_RECV, buf, cap, peer, ctx, tag);
    r->cs = bfo_recv_machine.start;
    for (int i = e->ux_head, prev = -1; i >= 0; prev = i, i = e->uxm[i].next) {
        bfo_uxm *u = &e->uxm[i];
        if (!bfo__matches(r, u->peer, &u->f))
            continue;
        if (prev >= 0)
            e->uxm[prev].next = u->next;
        else
            e->ux_head = u->next;
        if (e->ux_tail == i)
            e->ux_tail = prev;
        bfo__recv_take(e, r, u->peer, &u->f);
        bfo__uxm_put(e, i);
        return BFO_OK;
    }
    if (peer >= 0 ? e->peers[peer].unreachable : bfo__all_unreachable(e)) {
        bfo__req_feed(e, r, BFO_EV_PEER_UNREACHABLE);
        return BFO_ERR_PEER_UNREACHABLE;
    }
    if (e->posted_tail)
        e->posted_tail->next = rr;
    else
        e->posted_head = rr;
    e->posted_tail = rr;
    return BFO_OK;
}

/* 1 when the request is complete (read r->status), else 0. */
static inline int bfo_test(const bfo_request *r) { return r->complete; }

/* 1 when no other rank is reachable: an ANY_SOURCE receive never can be. */
static inline int bfo__all_unreachable(const bfo_engine *e)
{
    for (int i = 0; i < e->cfg.nranks; i++)
        if (i != e->cfg.rank && !e->peers[i].unreachable)
            return 0;
    return 1;
}

/* No rail of the peer came back in time: every request of it fails, and
 * ANY_SOURCE receives too once no peer at all is left. */
static inline void bfo__peer_unreachable(bfo_engine *e, int peer)
{
    bfo_peer *p = &e->peers[peer];
    bfo_request *prev = NULL, *r, *next;
    int none_left;
    p->unreachable = 1;
    none_left = bfo__all_unreachable(e);
    for (int i = 0; i < e->cfg.max_requests; i++) {
        r = e->slot_req[i];
        if (r && r->peer == peer && !r->complete)
            bfo__req_feed(e, r, BFO_EV_PEER_UNREACHABLE);
    }
    for (r = e->posted_head; r; r = next) { /* receives naming this peer */
        next = r->next;
        if (r->peer != peer && !(r->peer == BFO_ANY_SOURCE && none_left)) {
            prev = r;
            continue;
        }
        if (prev)
            prev->next = next;
        else
            e->posted_head = next;
        if (e->posted_tail == r)
            e->posted_tail = prev;
        r->next = NULL;
        bfo__req_feed(e, r, BFO_EV_PEER_UNREACHABLE);
    }
    /* messages waiting for an earlier one that will never come */
    for (int k = e->ooo_head, prevk = -1, nk; k >= 0; k = nk) {
        nk = e->uxm[k].next;
        if (e->uxm[k].peer != peer) {
            prevk = k;
            continue;
        }
        if (prevk >= 0)
            e->uxm[prevk].next = nk;
        else
            e->ooo_head = nk;
        bfo__uxm_put(e, k);
    }
    int i = p->pend_head; /* operations waiting for a rail: they fail */
    p->pend_head = p->pend_tail = -1;
    while (i >= 0) {
        int n = e->ops[i].next;
        bfo__op_done(e, &e->ops[i], 0);
        i = n;
    }
}

/* Timers: heartbeats, silence, probe timeouts, back-off, unreachable peers.
 * Call it often (every few milliseconds of `now` at least). */
static inline void bfo_engine_progress(bfo_engine *e, uint64_t now)
{
    const bfo_config *c = &e->cfg;
    if (now > e->now)
        e->now = now;
    for (int i = 0; i < c->nranks; i++) {
        bfo_peer *p = &e->peers[i];
        if (i == c->rank)
            continue;
        for (int k = 0; k < c->nrails; k++) {
            bfo_rail_link *rs = &p->rail[k];
            switch (rs->fsm.cs) {
            case BFO_RAIL_ST_UP:
                if (e->now - rs->last_rx >= c->silence_ns)
                    bfo__rail_step(e, i, k, BFO_EV_SILENCE_DETECTED);
                else if (e->now - rs->last_tx >= c->heartbeat_ns)
                    bfo__rail_step(e, i, k, BFO_EV_HEARTBEAT_DUE);
                break;
            case BFO_RAIL_ST_PROBING:
                if (e->now - rs->probe_sent >= c->probe_timeout_ns)
                    bfo__rail_step(e, i, k, BFO_EV_PROBE_TIMED_OUT);
                break;
            case BFO_RAIL_ST_FAILED:
                if (e->now >= rs->deadline)
                    bfo__rail_step(e, i, k, rs->attempts > c->max_reconnects
                                                ? BFO_EV_RETRIES_EXHAUSTED
                                                : BFO_EV_BACKOFF_EXPIRED);
                break;
            default: break;
            }
        }
        if (!p->unreachable && p->down_since && e->now - p->down_since >= c->unreachable_grace_ns)
            bfo__peer_unreachable(e, i);
    }
}

#ifdef __cplusplus
}
#endif
#endif /* BFO_ENGINE_H */
