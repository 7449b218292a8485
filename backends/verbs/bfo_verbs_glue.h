// SPDX-License-Identifier: BSD-3-Clause
/* bfo_verbs_glue.h - what the verbs backend tells the engine, without libibverbs.
 *
 * Part of the verbs backend (bfo_verbs.h).  bfo_verbs_map.h says what one
 * work completion or asynchronous event means; this is what the backend then
 * does about it, with the engine behind a bfo_sink:
 *   - the table of each queue pair's outstanding operations (posted to the
 *     device, or waiting in its backlog) and the descriptor pool;
 *   - a completion: ok=1 at once, or ok=0 once the rail error is reported;
 *   - the rail error: BFO_EV_RAIL_ERROR for (peer, rail), the device's flush
 *     (WR_FLUSH_ERR) of the rest, every other operation of the queue pair
 *     completed with ok=0, received frames still offered to the engine;
 *   - receive completions and the frames, in order, with back-pressure;
 *   - asynchronous events by scope (queue pair, completion queue, port,
 *     device), disconnect();
 *   - the connection lifecycle: each queue pair's bfo_link, run by the conn
 *     machine (spec/conn.rl, backends/bfo_link.h) like TCP's and shm's
 *     connections, and the machine's actions that are not the device's
 *     (the reports to the engine, the teardown);
 *   - the peer's host as a witness (bfo_vg_keepalive): host probes, zero-byte
 *     RDMA WRITEs the peer's adapter answers without its process, and
 *     what the engine hears of them (bfo_engine_host_heard).
 * bfo_verbs.c runs it over real devices through a few callbacks
 * (bfo_vg_hw); tests/test_verbs_scenarios.c runs the same code over the
 * simulator, with every fault expressed as a work completion status or an
 * asynchronous event.  No allocation (the caller gives the memory, sized by
 * bfo_vg_mem_size), no I/O.
 *
 * Calls into the sink (the engine) happen only from bfo_vg_settle,
 * bfo_vg_deliver, bfo_vg_timeouts, bfo_vg_keepalive, the completions
 * (bfo_vg_op_wc) and the conn machine's feeds
 * (bfo_vg_connects, bfo_vg_hello, bfo_vg_reply, bfo_vg_ready): the
 * backend's progress.  Everything reachable from inside an engine call
 * (posts, connect, disconnect) or from the device's completion handling
 * only marks.
 *
 * CONNECTIONS.  The conn machine decides, as for TCP and shm (the lower
 * rank dials; who dials, a connect() while a connection is being made or
 * is up, a stale REQ, teardown and what the engine hears: spec/conn.rl).
 * The verbs handshake is REQ (the dialer's hello), REP (the reply; the
 * acceptor's queue pair is ready to receive) and RTU (the dialer is ready:
 * PEER_READY): bfo_verbs.h.  The glue binds the machine's actions: the
 * reports (CONNECTED, CONNECT_FAILED, RAIL_ERROR), close (bfo_vg_close:
 * the device's flush, then every operation fails), a dial or a wait with
 * the port down (DIAL_FAILED, TIMED_OUT: the engine hears CONNECT_FAILED at
 * once), a refused REQ's log; the device's side (make a queue pair, dial,
 * send the REQ, take an accepted control connection, send the REP, close a
 * refused one) goes to bfo_vg_hw.conn.  A REQ carries the low 32 bits of
 * the dialer's attempt number; bfo_vg_hello widens it against the last
 * one taken (serial-number arithmetic: wraps around) before the machine
 * compares.
 */
#ifndef BFO_VERBS_GLUE_H
#define BFO_VERBS_GLUE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "bfo_link.h"
#include "bfo_list.h"
#include "bfo_tp.h"
#include "bfo_verbs.h"
#include "bfo_verbs_map.h"

#ifdef __cplusplus
extern "C" {
#endif

enum bfo_vg_kind { BFO_VG_SEND = 1, BFO_VG_WRITE = 2, BFO_VG_READ = 3 };

typedef bfo_list bfo_vg_list; /* threaded through the descriptors' next (bfo_list.h) */

/* A descriptor: one operation the engine posted, from post to completion. */
typedef struct bfo_vg_ent {
    uint64_t token;
    int kind;  /* enum bfo_vg_kind */
    int qp;    /* the (peer, rail) index */
    int next;
    uint32_t imm; /* a send with credit (g->share): the credits it returns (set by the kick) */
    int probe; /* the engine's PROBE (set by the caller before bfo_vg_post: the
                * frame's first byte is BFO_FRAG_PROBE): its answer is awaited */
} bfo_vg_ent;

typedef struct bfo_vg_qp {
    bfo_link link;   /* the conn machine: state, attempt numbers, deadline,
                      * connect() not fed yet (bfo_link.h); first member */
    int peer, rail;
    int hw;          /* a queue pair exists on the device */
    int sq_used;       /* work requests on the device's send queue */
    int rposted;       /* receives posted */
    bfo_vg_list posted, backlog;
    /* receive buffers (caller's memory, rstride bytes each): free ones, and
     * filled ones waiting for the engine, in order */
    uint8_t *rbuf;
    size_t rstride;
    int *rfree, nrfree;
    int *rxq, rx_head, rx_n;
    int rx_held;      /* the last rx_held of them came before CONNECTED was reported */
    uint32_t *rxlen;
    /* the peer's host as a witness (bfo_vg_keepalive) */
    uint64_t probe_at;  /* the engine's last PROBE posted on it */
    int awaiting;       /* a PROBE posted, no PROBEACK received since: the connection
                         * waits on the peer's process */
    uint64_t host_at;   /* the peer's adapter last answered: an operation or a host probe
                         * completed successfully */
    uint64_t host_told; /* the host_at the engine was last told */
    uint64_t hp_at;     /* the last host probe posted */
    int hp_out;         /* a host probe is on the send queue (at most one) */
    int parted;         /* the peer said goodbye, or this side leaves (bfo_vg_part): the
                         * queue pair's end is no failure; for good */
    /* credit (docs/verbs.md, "Shared receive queue"): the sending side */
    int credits;        /* sends the peer still lets this side make (its grant, less the
                         * frames sent, plus what it gave back); -1: no limit (it granted 0) */
    /* the receiving side (g->share > 0) */
    int owed;           /* frames of the peer the engine took since the credit was last
                         * given back (with a send, or a credit message) */
    int cm_out;         /* a credit message is on the send queue (at most one) */
    int rx_old;         /* the first rx_old frames waiting came on a queue pair closed
                         * since: taking them gives the peer no credit */
} bfo_vg_qp;

/* The device under the glue (ctx passed back; qi = a queue pair's index). */
typedef struct bfo_vg_hw {
    void *ctx;
    /* Moves the queue pair to the error state and collects what the device
     * flushes (bfo_vg_op_wc / bfo_vg_recv_wc for each, WR_FLUSH_ERR or
     * whatever status it has), bounded; destroys the queue pair and the
     * control connection; releases the device resources of operations
     * still in posted (the glue completes them with ok=0 next).  Called
     * for every close, with or without a queue pair. */
    void (*flush)(void *ctx, int qi);
    /* Posts operation i: 0 posted, 1 no room now (it stays in the backlog),
     * -1 failed (the caller marked the queue pair broken). */
    int (*post)(void *ctx, int qi, int i);
    /* Posts receive buffer b: 0 done. */
    int (*post_recv)(void *ctx, int qi, int b);
    /* A log line at level (1 errors, 2 connections, 3 debug); may be NULL. */
    void (*log)(void *ctx, int level, const char *line);
    /* The device's part of a conn machine action on queue pair qi (the
     * glue has done its own: the port checked for DIAL, the log of
     * REFUSE): DIAL (a queue pair, the control connection to the peer;
     * the attempt is the link's), SEND_HELLO (the REQ), TAKE (the accepted
     * control connection `arg` becomes qi's, its queue pair connected to
     * the peer's), SEND_REPLY (the REP; not called when TAKE marked the
     * queue pair broken), REFUSE (close `arg`).  Returns 0, or an event
     * (bfo_link_act_fn): DIAL_CONNECTED, DIAL_FAILED.  Failures later on
     * mark the queue pair broken (bfo_vg_broken). */
    int (*conn)(void *ctx, int qi, int action, void *arg);
    /* Posts a host probe on queue pair qi: a signalled zero-byte RDMA WRITE
     * (no memory, no key: a zero-length access is not checked), completed
     * through bfo_vg_probe_wc.  0 posted, 1 no room now, -1 failed (the
     * queue pair is marked broken).  NULL: no host probes. */
    int (*host_probe)(void *ctx, int qi);
    /* Posts a credit message on queue pair qi (g->share > 0): a signalled
     * zero-byte send with immediate data BFO_VG_IMM_CREDIT | n (n credits
     * given back), completed through bfo_vg_credit_wc.  0 posted, 1 no room
     * now, -1 failed (the queue pair is marked broken).  NULL: none. */
    int (*credit)(void *ctx, int qi, uint32_t n);
} bfo_vg_hw;

/* A send's immediate data, with credit (g->share > 0): the credits given
 * back in its low 16 bits; BFO_VG_IMM_CREDIT set: a credit message, no
 * frame (its buffer goes straight back, the engine never sees it). */
#define BFO_VG_IMM_CREDIT 0x80000000u
#define BFO_VG_IMM_N 0xffffu

typedef struct bfo_vg {
    int rank, size, nrails, recv_depth, sq_depth, log_level;
    /* receives from a shared receive queue (bfo_vg_use_srq): receive buffer
     * numbers are the device's pool's (0..nrbuf-1), reposted to it as
     * soon as the engine took a frame whatever became of the queue pair;
     * recv_depth is then only the depth of each queue pair's queue of
     * frames waiting for the engine.  share: the credit each peer gets (0:
     * no limit; the per-queue-pair receives). */
    int srq, nrbuf, share;
    uint64_t credit_msgs, credit_late; /* credit messages sent; frames beyond a peer's credit */
    bfo_vg_qp *qps; /* size * nrails, rank-major */
    bfo_vg_ent *ents;
    int nents, ent_free;
    bfo_vg_list failed; /* operations to complete with ok=0 at the next settle */
    int port_up[BFO_MAX_RAILS];
    int rail_dead[BFO_MAX_RAILS]; /* DEVICE_FATAL: never again */
    uint64_t now;
    uint64_t ka_ns; /* keepalive interval of the host probes (0: none; bfo_verbs.c:
                     * probe_timeout / 4, at most 10 ms, as TCP's nudges) */
    bfo_link_binding lb; /* the conn machine's binding: bfo_vg_act; lb.timeout_ns
                          * is the connect timeout, lb.asked the connect()s not fed */
    bfo_sink sink;
    bfo_vg_hw hw;
    bfo_verbs_rail_stats st[BFO_MAX_RAILS];
} bfo_vg;

/* Bytes of memory bfo_vg_init carves (queue pairs, descriptors, receive rings). */
static inline size_t bfo_vg_mem_size(int size, int nrails, int nents, int recv_depth)
{
    size_t nq = (size_t)size * (size_t)nrails;
    return nq * sizeof(bfo_vg_qp) + (size_t)nents * sizeof(bfo_vg_ent) +
           nq * (size_t)recv_depth * (2 * sizeof(int) + sizeof(uint32_t));
}

static inline int bfo_vg_act(bfo_link_binding *b, bfo_link *l, int action, const bfo_step *st,
                             void *arg);

/* mem: bfo_vg_mem_size bytes, suitably aligned (malloc's).  Every port up,
 * every queue pair without a connection (its link told which side it is),
 * every receive buffer free, a connect timeout of 2 s (g->lb.timeout_ns);
 * the caller sets each queue pair's rbuf and rstride. */
static inline void bfo_vg_init(bfo_vg *g, void *mem, int rank, int size, int nrails, int nents,
                               int recv_depth, int sq_depth, const bfo_sink *sink,
                               const bfo_vg_hw *hw)
{
    size_t nq = (size_t)size * (size_t)nrails;
    uint8_t *p = (uint8_t *)mem;
    memset(g, 0, sizeof *g);
    g->rank = rank;
    g->size = size;
    g->nrails = nrails;
    g->nents = nents;
    g->recv_depth = recv_depth;
    g->sq_depth = sq_depth;
    g->log_level = 1;
    bfo_link_bind(&g->lb, g, bfo_vg_act, 2000000000ull);
    g->sink = *sink;
    g->hw = *hw;
    g->qps = (bfo_vg_qp *)(void *)p;
    p += nq * sizeof(bfo_vg_qp);
    g->ents = (bfo_vg_ent *)(void *)p;
    p += (size_t)nents * sizeof(bfo_vg_ent);
    memset(g->qps, 0, nq * sizeof(bfo_vg_qp));
    for (int i = 0; i < nents; i++)
        g->ents[i].next = i + 1 < nents ? i + 1 : -1;
    g->ent_free = nents > 0 ? 0 : -1;
    g->failed.head = g->failed.tail = -1;
    for (int r = 0; r < BFO_MAX_RAILS; r++)
        g->port_up[r] = 1;
    for (size_t i = 0; i < nq; i++) {
        bfo_vg_qp *q = &g->qps[i];
        q->peer = (int)(i / (size_t)nrails);
        q->rail = (int)(i % (size_t)nrails);
        bfo_link_init(&g->lb, &q->link, rank, q->peer, q->rail); /* either side dials; the lower wins a tie */
        q->posted.head = q->posted.tail = q->backlog.head = q->backlog.tail = -1;
        q->rfree = (int *)(void *)p;
        p += (size_t)recv_depth * sizeof(int);
        q->rxq = (int *)(void *)p;
        p += (size_t)recv_depth * sizeof(int);
        q->rxlen = (uint32_t *)(void *)p;
        p += (size_t)recv_depth * sizeof(uint32_t);
        for (int b = 0; b < recv_depth; b++)
            q->rfree[b] = b;
        q->nrfree = q->peer == rank ? 0 : recv_depth;
        q->credits = -1;
    }
}

static inline int bfo_vg_qi(const bfo_vg *g, int peer, int rail) { return peer * g->nrails + rail; }

static inline void bfo_vg_log(const bfo_vg *g, int level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static inline void bfo_vg_log(const bfo_vg *g, int level, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    if (!g->hw.log || g->log_level < level)
        return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    g->hw.log(g->hw.ctx, level, line);
}

/* Marks a queue pair failed (the first reason stays); it closes at the
 * next settle.  Safe from anywhere. */
static inline void bfo_vg_broken(bfo_vg *g, int qi, int malformed, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static inline void bfo_vg_broken(bfo_vg *g, int qi, int malformed, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    bfo_link_vbreak(&g->lb, &g->qps[qi].link, malformed, fmt, ap);
    va_end(ap);
}

/* Receives from a shared receive queue of nrbuf buffers; each peer gets
 * `share` frames of credit (at most recv_depth / 2 - 1: the queue of
 * frames waiting holds a closed queue pair's and the next one's).  After
 * bfo_vg_init; every queue pair's rbuf is the pool's. */
static inline void bfo_vg_use_srq(bfo_vg *g, int nrbuf, int share)
{
    g->srq = 1;
    g->nrbuf = nrbuf;
    g->share = share;
    for (int i = 0; i < g->size * g->nrails; i++)
        g->qps[i].nrfree = 0;
}

/* A receive buffer goes back: to the shared receive queue (it lives
 * whatever became of the queue pair), or to the queue pair it came from
 * if it lives, else to its free ones. */
static inline void bfo_vg_recv_back(bfo_vg *g, int qi, int b)
{
    bfo_vg_qp *q = &g->qps[qi];
    if (g->srq) {
        if (g->hw.post_recv(g->hw.ctx, qi, b) != 0)
            bfo_vg_log(g, 1, "receive buffer %d: the shared receive queue refused it (lost)", b);
        return;
    }
    if (q->hw && !q->link.broken && g->hw.post_recv(g->hw.ctx, qi, b) == 0) {
        q->rposted++;
        return;
    }
    q->rfree[q->nrfree++] = b;
}

/* The credit a new connection starts with: the peer's grant (its REQ or
 * REP; 0: no limit).  The device side calls it when its queue pair goes
 * to RTS, before either side can send on it. */
static inline void bfo_vg_granted(bfo_vg *g, int qi, uint32_t grant)
{
    bfo_vg_qp *q = &g->qps[qi];
    q->credits = grant ? (int)grant : -1;
    q->owed = 0;
}

/* ---------------------------------------------------------------- lists */

static inline void bfo_vg_push(bfo_vg *g, bfo_vg_list *L, int i)
{
    bfo_list_push(&g->ents->next, sizeof *g->ents, L, i);
}

static inline int bfo_vg_pop(bfo_vg *g, bfo_vg_list *L) { return bfo_list_pop(&g->ents->next, sizeof *g->ents, L); }

static inline void bfo_vg_append(bfo_vg *g, bfo_vg_list *dst, bfo_vg_list *src)
{
    bfo_list_append(&g->ents->next, sizeof *g->ents, dst, src);
}

/* Takes i out of L wherever it is; 0 when it was not there. */
static inline int bfo_vg_unlink(bfo_vg *g, bfo_vg_list *L, int i)
{
    int prev = -1, k = L->head;
    while (k >= 0 && k != i) {
        prev = k;
        k = g->ents[k].next;
    }
    if (k < 0)
        return 0;
    if (prev < 0)
        L->head = g->ents[i].next;
    else
        g->ents[prev].next = g->ents[i].next;
    if (L->tail == i)
        L->tail = prev;
    return 1;
}

static inline int bfo_vg_count(const bfo_vg *g, const bfo_vg_list *L)
{
    int n = 0;
    for (int k = L->head; k >= 0 && n <= g->nents; k = g->ents[k].next)
        n++;
    return n;
}

/* ------------------------------------------------------------ reporting */

/* Completes a descriptor: frees it first (the engine may post from inside). */
static inline void bfo_vg_complete(bfo_vg *g, int i, int ok)
{
    bfo_verbs_rail_stats *rs = &g->st[g->qps[g->ents[i].qp].rail];
    bfo_tp_complete(&g->sink, &g->ents->next, sizeof *g->ents, &g->ent_free, i, g->ents[i].token, ok,
                    &rs->completed_ok, &rs->completed_failed);
}

/* The glue's log as the transports' (bfo_tp.h): its lines go to hw.log. */
static inline bfo_tp_log bfo_vg_tplog(const bfo_vg *g)
{
    bfo_tp_log lg = { "verbs", g->rank, g->hw.log ? g->log_level : -1, g->hw.log, g->hw.ctx };
    return lg;
}

static inline void bfo_vg_emit(bfo_vg *g, int qi, int ev)
{
    bfo_tp_log lg = bfo_vg_tplog(g);
    bfo_tp_emit(&lg, &g->sink, g->qps[qi].peer, g->qps[qi].rail, ev, g->now);
}

/* The conn machine's REPORT_FAILED and REPORT_ERROR (bfo_tp.h). */
static inline int bfo_vg_report_down(bfo_vg *g, const bfo_link *l, int action, const bfo_step *st,
                                     const void *arg)
{
    bfo_tp_log lg = bfo_vg_tplog(g);
    return bfo_tp_report_down(&lg, &g->sink, l, action, st, arg, g->now);
}

/* ------------------------------------------------------------- posting */

/* A descriptor for an operation to (peer, rail), or -1 (bad peer or rail,
 * none free).  The caller fills token (and its own per-descriptor data)
 * and calls bfo_vg_post. */
static inline int bfo_vg_alloc(bfo_vg *g, int peer, int rail, int kind)
{
    int i = g->ent_free;
    if (!bfo_tp_pair_ok(g->rank, g->size, g->nrails, peer, rail) || i < 0)
        return -1;
    g->ent_free = g->ents[i].next;
    g->ents[i].token = 0;
    g->ents[i].kind = kind;
    g->ents[i].qp = bfo_vg_qi(g, peer, rail);
    g->ents[i].next = -1;
    g->ents[i].probe = 0;
    return i;
}

/* Posts what the queue pair has room for, in order. */
static inline void bfo_vg_kick(bfo_vg *g, int qi)
{
    bfo_vg_qp *q = &g->qps[qi];
    while (q->backlog.head >= 0 && q->hw && bfo_link_up(&q->link) && !q->link.broken &&
           q->sq_used < g->sq_depth) {
        int i = q->backlog.head;
        const int send = g->ents[i].kind == BFO_VG_SEND;
        int rc;
        if (send && q->credits == 0)
            return; /* the peer's credit is used up: it waits, in order, for some back */
        g->ents[i].imm = send && g->share > 0 ? (uint32_t)(q->owed < (int)BFO_VG_IMM_N ? q->owed : (int)BFO_VG_IMM_N) : 0;
        rc = g->hw.post(g->hw.ctx, qi, i);
        if (rc != 0) {
            if (rc < 0)
                bfo_vg_broken(g, qi, 0, "the device refused a post");
            return;
        }
        if (send) {
            q->owed -= (int)g->ents[i].imm;
            if (q->credits > 0)
                q->credits--;
        }
        bfo_vg_pop(g, &q->backlog);
        bfo_vg_push(g, &q->posted, i);
        q->sq_used++;
    }
}

/* The engine posted i: on the queue pair if it is up, else it fails at the
 * next settle (never inside the post). */
static inline void bfo_vg_post(bfo_vg *g, int i)
{
    int qi = g->ents[i].qp;
    bfo_vg_qp *q = &g->qps[qi];
    if (!bfo_link_up(&q->link) || q->link.broken || !q->hw) {
        bfo_vg_push(g, &g->failed, i);
        return;
    }
    if (g->ents[i].probe) {
        q->probe_at = g->now;
        q->awaiting = 1;
    }
    bfo_vg_push(g, &q->backlog, i);
    bfo_vg_kick(g, qi);
}

/* Posts every free receive buffer of a new queue pair; -1 when the device
 * refused one. */
static inline int bfo_vg_post_receives(bfo_vg *g, int qi)
{
    bfo_vg_qp *q = &g->qps[qi];
    while (q->nrfree > 0) {
        if (g->hw.post_recv(g->hw.ctx, qi, q->rfree[q->nrfree - 1]) != 0)
            return -1;
        q->nrfree--;
        q->rposted++;
    }
    return 0;
}

/* -------------------------------------------------------- completions */

/* A flush the glue did not cause (the queue pair is up): the device moved it
 * to the error state behind the glue's back (an async event not read yet).
 * Treated as the error it proves, so that nothing keeps posting to it. */
static inline void bfo_vg_wc_error(bfo_vg *g, int qi, int status, int is_recv, bfo_verbs_wc_action a)
{
    bfo_vg_qp *q = &g->qps[qi];
    bfo_verbs_rail_stats *st = &g->st[q->rail];
    if (status == BFO_VWC_WR_FLUSH_ERR)
        st->flushed++;
    else if (status > 0 && (unsigned)status < sizeof st->wc_errors / sizeof st->wc_errors[0])
        st->wc_errors[status]++;
    if (a.qp_failed)
        bfo_vg_broken(g, qi, a.malformed, "%s (%s) on %s", bfo_verbs_wc_name(status),
                      bfo_verbs_cause_name(a.cause), is_recv ? "a receive" : "an operation");
    else if (status == BFO_VWC_WR_FLUSH_ERR && bfo_link_up(&q->link))
        bfo_vg_broken(g, qi, 0, "WR_FLUSH_ERR on %s: the queue pair is in error",
                      is_recv ? "a receive" : "an operation");
    if (a.malformed)
        st->malformed++;
}

/* A work completion of operation i on queue pair qi (status: its
 * ibv_wc_status).  The caller released its own resources of i (a send
 * buffer) and counted what it counts on success.  ok: completed now;
 * otherwise it completes with ok=0 at the next settle, after the rail error
 * (the queue pair is in error on any status but SUCCESS). */
static inline bfo_verbs_wc_action bfo_vg_op_wc(bfo_vg *g, int qi, int i, int status)
{
    bfo_verbs_wc_action a = bfo_verbs_map_wc(status, 0);
    bfo_vg_qp *q = &g->qps[qi];
    if (status != BFO_VWC_SUCCESS)
        bfo_vg_wc_error(g, qi, status, 0, a);
    if (i < 0 || i >= g->nents)
        return a;
    q->sq_used--;
    if (!bfo_vg_unlink(g, &q->posted, i))
        return a;
    if (a.ok) {
        q->host_at = g->now; /* the peer's adapter answered */
        bfo_vg_complete(g, i, 1);
    } else {
        bfo_vg_push(g, &g->failed, i);
    }
    return a;
}

/* A work completion of receive buffer b (len bytes on SUCCESS): the frame
 * waits, in order, for bfo_vg_deliver; the buffer of a failed receive is
 * free again. */
static inline bfo_verbs_wc_action bfo_vg_recv_wc_imm(bfo_vg *g, int qi, int b, int status, uint32_t len,
                                                     int has_imm, uint32_t imm)
{
    bfo_verbs_wc_action a = bfo_verbs_map_wc(status, 1);
    bfo_vg_qp *q = &g->qps[qi];
    if (status != BFO_VWC_SUCCESS)
        bfo_vg_wc_error(g, qi, status, 1, a);
    if (b < 0 || b >= (g->srq ? g->nrbuf : g->recv_depth))
        return a;
    if (!g->srq)
        q->rposted--;
    if (a.ok && has_imm) { /* credit given back: with a frame, or alone */
        if (q->credits >= 0)
            q->credits += (int)(imm & BFO_VG_IMM_N);
        if (imm & BFO_VG_IMM_CREDIT) {
            bfo_vg_recv_back(g, qi, b);
            return a;
        }
    }
    if (a.ok && g->srq && (q->rx_n >= g->recv_depth || (g->share > 0 && q->rx_n - q->rx_old >= g->share))) {
        /* beyond the credit this side gave: the peer does not keep to it */
        g->credit_late++;
        bfo_vg_broken(g, qi, 1, "a frame beyond the peer's credit (%d waiting, credit %d)", q->rx_n - q->rx_old,
                      g->share);
        bfo_vg_recv_back(g, qi, b);
        return a;
    }
    if (a.ok) {
        int at = (q->rx_head + q->rx_n) % g->recv_depth;
        if (len > 0 && q->rbuf && q->rbuf[(size_t)b * q->rstride] == BFO_FRAG_PROBEACK)
            q->awaiting = 0; /* answered */
        q->rxq[at] = b;
        q->rxlen[at] = len;
        q->rx_n++;
        q->rx_held += !bfo_link_up(&q->link);
    } else if (g->srq) {
        bfo_vg_recv_back(g, qi, b);
    } else {
        q->rfree[q->nrfree++] = b;
    }
    return a;
}

static inline bfo_verbs_wc_action bfo_vg_recv_wc(bfo_vg *g, int qi, int b, int status, uint32_t len)
{
    return bfo_vg_recv_wc_imm(g, qi, b, status, len, 0, 0);
}

/* The completion of queue pair qi's credit message (status: its
 * ibv_wc_status): an error is the queue pair's, as on any operation. */
static inline bfo_verbs_wc_action bfo_vg_credit_wc(bfo_vg *g, int qi, int status)
{
    bfo_verbs_wc_action a = bfo_verbs_map_wc(status, 0);
    bfo_vg_qp *q = &g->qps[qi];
    if (status != BFO_VWC_SUCCESS)
        bfo_vg_wc_error(g, qi, status, 0, a);
    if (!q->cm_out)
        return a; /* its queue pair was closed before */
    q->cm_out = 0;
    q->sq_used--;
    return a;
}

/* Credit given back on its own (g->share > 0): a queue pair that owes
 * the peer half its share or more, or any while the engine leaves frames
 * of it waiting (the peer may have nothing left: what the engine took is
 * all it can get back until the engine takes more, which may wait on the
 * peer's next frames), and no send that would carry it (none waiting, or
 * they wait for the peer's credit: both sides could wait on each other),
 * sends a credit message.  At most one on the send queue.
 * Called at the backend's progress, after bfo_vg_deliver; returns the
 * credit messages posted. */
static inline int bfo_vg_credit(bfo_vg *g)
{
    int n = 0, half = g->share / 2 > 0 ? g->share / 2 : 1;
    if (g->share <= 0 || !g->hw.credit)
        return 0;
    for (int qi = 0; qi < g->size * g->nrails; qi++) {
        bfo_vg_qp *q = &g->qps[qi];
        uint32_t give;
        int rc;
        if (q->owed <= 0 || (q->owed < half && q->rx_n <= q->rx_old) || q->cm_out || !q->hw || q->link.broken || !bfo_link_up(&q->link) ||
            q->sq_used >= g->sq_depth || (q->backlog.head >= 0 && q->credits != 0))
            continue;
        give = (uint32_t)(q->owed < (int)BFO_VG_IMM_N ? q->owed : (int)BFO_VG_IMM_N);
        rc = g->hw.credit(g->hw.ctx, qi, give);
        if (rc < 0)
            bfo_vg_broken(g, qi, 0, "the device refused a credit message");
        if (rc != 0)
            continue;
        q->owed -= (int)give;
        q->cm_out = 1;
        q->sq_used++;
        g->credit_msgs++;
        n++;
    }
    return n;
}

/* The completion of queue pair qi's host probe (status: its ibv_wc_status):
 * SUCCESS is the peer's host heard now (told by bfo_vg_keepalive); an error
 * is the queue pair's, as on any operation. */
static inline bfo_verbs_wc_action bfo_vg_probe_wc(bfo_vg *g, int qi, int status)
{
    bfo_verbs_wc_action a = bfo_verbs_map_wc(status, 0);
    bfo_vg_qp *q = &g->qps[qi];
    if (status != BFO_VWC_SUCCESS)
        bfo_vg_wc_error(g, qi, status, 0, a);
    if (!q->hp_out)
        return a; /* its queue pair was closed before */
    q->hp_out = 0;
    q->sq_used--;
    if (a.ok)
        q->host_at = g->now;
    return a;
}

/* The peer's host as a witness (docs/engine-design.md, "The failure
 * detector").  A connection whose PROBE waits (the engine's heartbeat: no
 * PROBEACK received since it was posted): the peer's process may be
 * computing, not calling into bfo, but its adapter answers RDMA without
 * it.  So, while it waits:
 *   - a successful completion on the queue pair after the PROBE (the
 *     PROBE's own send, any operation, a host probe) goes to the engine as
 *     the peer's host heard on the rail (bfo_engine_host_heard): while the
 *     peer's process is silent on every rail, that keeps the engine's probe
 *     waiting, up to host_timeout after it;
 *   - to keep that evidence fresh, a host probe once the PROBE has waited a
 *     keepalive interval (ka_ns): a signalled zero-byte RDMA WRITE (no
 *     memory and no key: a zero-length access is not checked, IB spec
 *     C9-88), at most one on the send queue and one per keepalive interval
 *     (100 a second per waiting queue pair at 10 ms; none otherwise);
 *   - a dead peer, port or path: the host probe ends in an error completion
 *     (RETRY_EXC_ERR once the adapter's retries ran out), the queue pair's
 *     error as any other (RAIL_ERROR); with no host heard meanwhile the
 *     engine's probe times out as before.
 * A host probe waits behind what is on the send queue before it (RC
 * completes in order): behind a send that the peer's adapter refuses for
 * want of receive buffers (receiver not ready: the peer's process is not
 * reposting them), it waits as long, and the evidence with it.  Called at
 * the backend's progress; returns the host probes posted. */
static inline int bfo_vg_keepalive(bfo_vg *g)
{
    int n = 0;
    for (int qi = 0; qi < g->size * g->nrails; qi++) {
        bfo_vg_qp *q = &g->qps[qi];
        int rc;
        if (!q->awaiting || !q->hw || q->link.broken || !bfo_link_up(&q->link) || !g->sink.host_heard)
            continue;
        if (q->host_at > q->host_told && q->host_at >= q->probe_at) {
            q->host_told = q->host_at;
            g->st[q->rail].host_heard++;
            g->sink.host_heard(g->sink.ctx, q->peer, q->rail, q->host_at);
        }
        if (!g->ka_ns || !g->hw.host_probe || q->hp_out || g->now - q->probe_at < g->ka_ns ||
            g->now - q->hp_at < g->ka_ns || q->sq_used >= g->sq_depth)
            continue;
        rc = g->hw.host_probe(g->hw.ctx, qi);
        if (rc < 0)
            bfo_vg_broken(g, qi, 0, "the device refused a host probe");
        if (rc != 0)
            continue;
        q->hp_out = 1;
        q->hp_at = g->now;
        q->sq_used++;
        g->st[q->rail].host_probes++;
        n++;
    }
    return n;
}

/* Received frames, in order per (peer, rail), until the engine says wait
 * (BFO_ERR_AGAIN: the frame and those behind it keep their buffers, which
 * are not reposted: the sender's adapter sees receiver-not-ready).  A frame
 * that arrived before the queue pair failed still goes to the engine.  A
 * frame that came before the engine was told CONNECTED (the dialer's PROBE
 * overtaking the RTU: the acceptor's queue pair can receive from the REP
 * on) waits for it: taken earlier, it made the engine answer on a rail it
 * had no connection for, the answer failed, and the dialer's probe timed
 * out and reconnected, again and again.  Returns the frames taken. */
static inline int bfo_vg_deliver(bfo_vg *g)
{
    int n = 0;
    for (int qi = 0; qi < g->size * g->nrails; qi++) {
        bfo_vg_qp *q = &g->qps[qi];
        while (q->rx_n > q->rx_held) {
            int b = q->rxq[q->rx_head];
            uint32_t len = q->rxlen[q->rx_head];
            int rc = g->sink.frame(g->sink.ctx, q->peer, q->rail, q->rbuf + (size_t)b * q->rstride,
                                   len, g->now);
            if (rc == BFO_ERR_AGAIN) {
                g->st[q->rail].backpressure++;
                break;
            }
            q->rx_head = (q->rx_head + 1) % g->recv_depth;
            q->rx_n--;
            if (q->rx_old > 0)
                q->rx_old--; /* its queue pair is gone: no credit to give back */
            else if (g->share > 0)
                q->owed++;
            n++;
            g->st[q->rail].frames_rx++;
            g->st[q->rail].bytes_rx += len;
            if (rc != BFO_OK && rc != BFO_ERR_STALE) {
                bfo_vg_broken(g, qi, 1, "the engine rejected a frame: %s", bfo_errname(rc));
                g->st[q->rail].malformed++;
            }
            bfo_vg_recv_back(g, qi, b);
        }
    }
    return n;
}

/* --------------------------------------------------------------- closing */

/* A queue pair closed while attached to a shared receive queue is not
 * destroyed at once: the device may still be consuming receives of the
 * queue for it, whose completions would go to a completion queue
 * destroyed with it (their buffers lost to the queue for good).  It waits
 * for the device's IBV_EVENT_QP_LAST_WQE_REACHED (no more receives of the
 * queue for it), then its completion queue is read a last time; a device
 * that never says so is given `limit` (then the backend logs it).  What
 * to do with one that has waited `waited` ns: */
enum bfo_vg_drain { BFO_VG_DRAIN_WAIT = 0, BFO_VG_DRAIN_NOW = 1, BFO_VG_DRAIN_TIMED_OUT = 2 };
static inline int bfo_vg_drain_decide(int last_wqe, uint64_t waited, uint64_t limit, int force)
{
    if (last_wqe || force) /* force: the backend ends, the queue goes with it */
        return BFO_VG_DRAIN_NOW;
    return waited >= limit ? BFO_VG_DRAIN_TIMED_OUT : BFO_VG_DRAIN_WAIT;
}

/* The conn machine's close (step st): a (peer, rail) torn down, the
 * device's flush, then every operation not completed fails (what the
 * engine hears, RAIL_ERROR or CONNECT_FAILED, the machine reported first;
 * the link is no longer up: posts from here on fail).  Only at safe
 * points. */
static inline void bfo_vg_close(bfo_vg *g, int qi, const bfo_step *st, const char *why)
{
    bfo_vg_qp *q = &g->qps[qi];
    bfo_vg_list dead = { -1, -1 };
    int was_up = bfo_link_state_up(st->from);
    if (q->link.malformed)
        g->st[q->rail].malformed++;
    if (was_up && !q->parted)
        g->st[q->rail].qp_errors++;
    if (q->hw || st->event != BFO_CONN_EV_DIAL_FAILED)
        bfo_vg_log(g, was_up && !q->parted && st->event != BFO_CONN_EV_CONNECT_ASKED ? 1 : 2,
                   "peer %d rail %d: queue pair closed%s: %s", q->peer, q->rail,
                   q->parted ? ", parted" : "", why);
    g->hw.flush(g->hw.ctx, qi);
    q->hw = 0;
    while (q->rx_held > 0) { /* frames of a connection the engine never had: dropped */
        q->rx_n--;
        q->rx_held--;
        if (g->srq)
            bfo_vg_recv_back(g, qi, q->rxq[(q->rx_head + q->rx_n) % g->recv_depth]);
        else
            q->rfree[q->nrfree++] = q->rxq[(q->rx_head + q->rx_n) % g->recv_depth];
    }
    /* the credit was this connection's: the next one starts from the grant */
    q->rx_old = q->rx_n;
    q->owed = 0;
    q->credits = -1;
    q->cm_out = 0; /* a credit message not given back: gone with the queue pair */
    if (q->rposted > 0) {
        /* receives the device never gave back: every buffer not waiting for
         * the engine is free again (the queue pair is gone) */
        q->nrfree = 0;
        for (int b = 0; b < g->recv_depth; b++) {
            int busy = 0;
            for (int k = 0; k < q->rx_n && !busy; k++)
                busy = q->rxq[(q->rx_head + k) % g->recv_depth] == b;
            if (!busy)
                q->rfree[q->nrfree++] = b;
        }
        q->rposted = 0;
    }
    q->sq_used = 0;
    q->hp_out = 0; /* a host probe not given back: gone with the queue pair */
    bfo_vg_append(g, &dead, &q->posted);
    bfo_vg_append(g, &dead, &q->backlog);
    q->link.broken = q->link.malformed = 0;
    for (int i = bfo_vg_pop(g, &dead); i >= 0; i = bfo_vg_pop(g, &dead))
        bfo_vg_complete(g, i, 0);
}

/* Broken queue pairs go to the conn machine (BROKEN: it closes them and
 * says what the engine hears), failed operations complete, until nothing
 * is left. */
static inline void bfo_vg_fail(void *ctx, int i) { bfo_vg_complete((bfo_vg *)ctx, i, 0); }

static inline void bfo_vg_settle(bfo_vg *g)
{
    bfo_tp_settle(&g->lb, &g->qps->link, sizeof *g->qps, g->size * g->nrails, &g->failed, &g->ents->next,
                  sizeof *g->ents, bfo_vg_fail, g->now);
}

/* The engine mapped the rail out by itself (its probe timed out, the peer's
 * BROKEN notice): the queue pair it was told about goes down at the next
 * settle as after an error completion, not at the reconnect after the
 * back-off.  From inside engine calls: only marks.  A connection the engine
 * has not been told about (a newer one, being wired) is left alone.
 * Returns 1 when it marked one. */
static inline int bfo_vg_disconnect(bfo_vg *g, int peer, int rail)
{
    int qi;
    if (!bfo_tp_pair_ok(g->rank, g->size, g->nrails, peer, rail))
        return 0;
    qi = bfo_vg_qi(g, peer, rail);
    if (!bfo_link_up(&g->qps[qi].link) || g->qps[qi].link.broken)
        return 0;
    bfo_vg_log(g, 2, "peer %d rail %d: the engine mapped the rail out: the queue pair goes down",
               peer, rail);
    g->st[rail].disconnects++;
    bfo_vg_broken(g, qi, 0, "the engine mapped the rail out");
    return 1;
}

/* The engine's part(): the peer said goodbye, or this side leaves.  The
 * queue pair stays (a BYE may be on it), sends no more host probes (nobody
 * waits on the peer's process now), and its end, when it comes, is logged
 * at level 2 only and not counted as an error.  From inside engine calls:
 * only marks. */
static inline void bfo_vg_part(bfo_vg *g, int peer, int rail)
{
    bfo_vg_qp *q;
    if (!bfo_tp_pair_ok(g->rank, g->size, g->nrails, peer, rail))
        return;
    q = &g->qps[bfo_vg_qi(g, peer, rail)];
    q->parted = 1;
    q->awaiting = 0;
}

/* An asynchronous event (its ibv_event_type).  rails: the rails it covers
 * (bit per rail: the port's for a port event, the device's otherwise); qi:
 * the queue pair it names (QP and CQ events, else -1).  Only marks. */
static inline bfo_verbs_async_action bfo_vg_async(bfo_vg *g, int event, unsigned rails, int qi)
{
    bfo_verbs_async_action a = bfo_verbs_map_async(event);
    for (int r = 0; r < g->nrails; r++) {
        if (!((rails >> r) & 1))
            continue;
        if (a.port_state < 0) {
            g->port_up[r] = 0;
            g->st[r].port_errors++;
        } else if (a.port_state > 0 && !g->rail_dead[r]) {
            g->port_up[r] = 1;
        }
        if (a.permanent)
            g->rail_dead[r] = 1;
        if (a.scope == BFO_VSCOPE_PORT || a.scope == BFO_VSCOPE_DEVICE)
            for (int p = 0; p < g->size; p++) {
                const bfo_vg_qp *q = &g->qps[bfo_vg_qi(g, p, r)];
                if (p != g->rank && (q->hw || bfo_conn_accepts(q->link.fsm.cs, BFO_CONN_EV_BROKEN)))
                    bfo_vg_broken(g, bfo_vg_qi(g, p, r), 0, "%s", bfo_verbs_event_name(event));
            }
    }
    if ((a.scope == BFO_VSCOPE_QP || a.scope == BFO_VSCOPE_CQ) && qi >= 0 &&
        qi < g->size * g->nrails)
        bfo_vg_broken(g, qi, 0, "%s", bfo_verbs_event_name(event));
    return a;
}

/* Connections past their deadline: the conn machine's TIMED_OUT (a dial,
 * a REQ answered but no RTU, an acceptor that waited in vain for the
 * peer's REQ). */
static inline void bfo_vg_timeouts(bfo_vg *g)
{
    for (int qi = 0; qi < g->size * g->nrails; qi++)
        if (!g->qps[qi].link.broken) /* it closes at the settle */
            bfo_link_timeout(&g->lb, &g->qps[qi].link, g->now);
}

/* ------------------------------------------------------------ connecting */

/* The engine's connect(): only marks (fed at the next progress,
 * bfo_vg_connects).  -1 for a bad peer or rail. */
static inline int bfo_vg_connect(bfo_vg *g, int peer, int rail)
{
    if (!bfo_tp_pair_ok(g->rank, g->size, g->nrails, peer, rail))
        return -1;
    bfo_link_ask(&g->lb, &g->qps[bfo_vg_qi(g, peer, rail)].link);
    return 0;
}

/* At the backend's progress (the ports' state up to date): the connect()s
 * not fed yet go to the conn machine.  Returns how many. */
static inline int bfo_vg_connects(bfo_vg *g)
{
    return bfo_link_asked_all(&g->lb, &g->qps->link, sizeof *g->qps, g->size * g->nrails, g->now);
}

/* A REQ's attempt number (the low 32 bits of the dialer's) as the 64-bit
 * number the conn machine compares: the one nearest the last taken
 * (serial-number arithmetic, RFC 1982), so that it wraps around.  Not above
 * the last taken: stale. */
static inline uint64_t bfo_vg_attempt(const bfo_vg_qp *q, uint32_t gen)
{
    uint64_t last = q->link.taken;
    int32_t d = (int32_t)(gen - (uint32_t)last);
    if (d < 0 && (uint64_t)-(int64_t)d > last)
        return 0;
    return last + (uint64_t)(int64_t)d;
}

/* A checked REQ from the peer of qi (attempt number gen, the control
 * connection `in`, which the conn machine takes or refuses: bfo_vg_hw.conn
 * gets it). */
static inline int bfo_vg_hello(bfo_vg *g, int qi, uint32_t gen, void *in)
{
    bfo_vg_qp *q = &g->qps[qi];
    return bfo_link_hello(&g->lb, &q->link, bfo_vg_attempt(q, gen), in, g->now);
}

/* Authenticated (bfo_verbs.h, AUTHENTICATION): a checked REQ is only a
 * claim (bfo_link_claim: challenged with a REP from a queue pair held
 * aside, `in` the device's claim, or left unanswered where this side's
 * dial wins the tie, or refused as stale); its attempt number widened as
 * for bfo_vg_hello, returned in *attempt for the proof. */
static inline int bfo_vg_claim(bfo_vg *g, int qi, uint32_t gen, void *in, uint64_t *attempt)
{
    bfo_vg_qp *q = &g->qps[qi];
    *attempt = bfo_vg_attempt(q, gen);
    return bfo_link_claim(&g->lb, &q->link, *attempt, in, g->now);
}

/* Authenticated: the answer to claim `in` (attempt as bfo_vg_claim gave
 * it): ok, an RTU whose CONFIRM verified: the machine takes the claim's
 * queue pair (PROOF_RCVD: take, closing this side's dial or the live queue
 * pair); not ok (no proof within the connect timeout): refused, whatever
 * the link holds stays. */
static inline int bfo_vg_proof(bfo_vg *g, int qi, int ok, uint64_t attempt, void *in)
{
    return bfo_link_proof(&g->lb, &g->qps[qi].link, ok, attempt, in, g->now);
}

/* The dialer: its control connection is made (the machine sends the REQ). */
static inline int bfo_vg_dialed(bfo_vg *g, int qi)
{
    return bfo_link_feed(&g->lb, &g->qps[qi].link, BFO_CONN_EV_DIAL_CONNECTED, (void *)0, g->now);
}

/* The dialer: the REP to its current attempt arrived, its queue pair is
 * ready and its RTU sent: the connection is up.  dialed: the low 32 bits
 * of the replier's last dial, as its REP names it (0: none): its REQs up
 * to that one are stale from now on. */
static inline int bfo_vg_reply(bfo_vg *g, int qi, uint32_t dialed)
{
    bfo_vg_qp *q = &g->qps[qi];
    return bfo_link_reply(&g->lb, &q->link, dialed ? bfo_vg_attempt(q, dialed) : 0, g->now);
}

/* The acceptor: the dialer's RTU arrived: the connection is up. */
static inline int bfo_vg_ready(bfo_vg *g, int qi)
{
    return bfo_link_feed(&g->lb, &g->qps[qi].link, BFO_CONN_EV_PEER_READY, (void *)0, g->now);
}

/* 1 when the rail's port can carry a connection now. */
static inline int bfo_vg_port_ok(const bfo_vg *g, int rail)
{
    return g->port_up[rail] && !g->rail_dead[rail];
}

/* The conn machine's actions (bfo_link.h) on queue pair l. */
static inline int bfo_vg_act(bfo_link_binding *b, bfo_link *l, int action, const bfo_step *st,
                             void *arg)
{
    bfo_vg *g = (bfo_vg *)b->ctx;
    bfo_vg_qp *q = (bfo_vg_qp *)(void *)l; /* l is its first member */
    int qi = (int)(q - g->qps);
    switch ((enum bfo_conn_action)action) {
    case BFO_CONN_ACT_DIAL:
        if (!bfo_vg_port_ok(g, q->rail)) {
            bfo_vg_log(g, 2, "peer %d rail %d: the port is down: no dial", q->peer, q->rail);
            return BFO_CONN_EV_DIAL_FAILED;
        }
        return g->hw.conn(g->hw.ctx, qi, action, arg);
    case BFO_CONN_ACT_WAIT:
        if (!bfo_vg_port_ok(g, q->rail)) { /* the peer cannot reach this side: it fails now */
            bfo_vg_log(g, 2, "peer %d rail %d: the port is down: the peer cannot connect", q->peer,
                       q->rail);
            return BFO_CONN_EV_TIMED_OUT;
        }
        return 0;
    case BFO_CONN_ACT_SEND_HELLO:
    case BFO_CONN_ACT_TAKE:
        return g->hw.conn(g->hw.ctx, qi, action, arg);
    case BFO_CONN_ACT_SEND_REPLY:
        /* a claim's challenge is the claim's own queue pair: whatever the
         * link holds, broken or not, stays out of it */
        if (st->event == BFO_CONN_EV_LOWER_CLAIM_RCVD || st->event == BFO_CONN_EV_HIGHER_CLAIM_RCVD)
            return g->hw.conn(g->hw.ctx, qi, action, arg);
        return q->link.broken ? 0 : g->hw.conn(g->hw.ctx, qi, action, arg);
    case BFO_CONN_ACT_REFUSE:
        /* the dialer gave this attempt up (read late, behind a newer
         * one): closing its control connection is all it needs; or a
         * claim never proven (authenticated): its queue pair goes */
        if (st->event == BFO_CONN_EV_PROOF_BAD_RCVD)
            bfo_vg_log(g, 2, "peer %d rail %d: a request whose dialer did not prove it is the peer refused", q->peer,
                       q->rail);
        else
            bfo_vg_log(g, 2, "peer %d rail %d: a stale request (attempt %llu, %llu accepted) refused",
                       q->peer, q->rail, (unsigned long long)l->offered, (unsigned long long)l->taken);
        g->hw.conn(g->hw.ctx, qi, action, arg);
        return 0;
    case BFO_CONN_ACT_REFUSE_TIE:
        /* both dial, this side's (the lower rank's) wins.  Verbs has no
         * "dialing you" answer: the peer's REQ goes unanswered (over UD;
         * a TCP control connection is closed), and the peer gives its dial
         * up when this side's REQ reaches it (it takes that one).  Should
         * this side's REQ not reach it, the peer's dial fails (its control
         * connection closed, or its connect timeout) and its engine tries
         * again after the back-off: a failure reported where TCP and shm
         * report none. */
        bfo_vg_log(g, 3, "peer %d rail %d: both dial: this side's dial wins (its request %llu unanswered)",
                   q->peer, q->rail, (unsigned long long)l->offered);
        g->hw.conn(g->hw.ctx, qi, action, arg);
        return 0;
    case BFO_CONN_ACT_REPORT_UP:
        q->rx_held = 0; /* frames that came first go to the engine now */
        q->probe_at = q->host_at = q->host_told = q->hp_at = 0;
        q->awaiting = 0;
        g->st[q->rail].connects++;
        bfo_vg_emit(g, qi, BFO_EV_CONNECTED);
        bfo_vg_kick(g, qi);
        return 0;
    case BFO_CONN_ACT_REPORT_FAILED:
    case BFO_CONN_ACT_REPORT_ERROR:
        g->st[q->rail].connect_failures += (uint64_t)bfo_vg_report_down(g, l, action, st, arg); /* a failed connect counted */
        return 0;
    case BFO_CONN_ACT_CLOSE:
        bfo_vg_close(g, qi, st, bfo_link_why(st, arg));
        return 0;
    }
    return 0;
}

#ifdef __cplusplus
}
#endif
#endif /* BFO_VERBS_GLUE_H */
