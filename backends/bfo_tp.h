// SPDX-License-Identifier: BSD-3-Clause
/* bfo_tp.h - what the transports share besides the conn machine.
 *
 * Part of bfo's backends (header-only, like bfo_list.h and bfo_link.h).
 * TCP, shm and verbs each had their own copy of these; one copy each now
 * (bfo_tp_os.h has the ones that need the system: the clock, the epoll
 * set, accepted connections):
 *   - bfo_tp_log: a transport's log line, "bfo-NAME[RANK]: ...";
 *   - bfo_tp_pair_ok: the check of every post, connect, disconnect and
 *     part: (peer, rail) names a connection of this rank;
 *   - bfo_tp_config: the engine's configuration with its defaults, and
 *     what a transport sizes by it (frames, descriptors, keepalives);
 *   - bfo_tp_emit, bfo_tp_report_down: what the engine hears of a
 *     connection (the conn machine's report actions);
 *   - bfo_tp_settle: the safe point after anything that may break a
 *     connection or fail a post.
 */
#ifndef BFO_TP_H
#define BFO_TP_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "bfo_engine.h"
#include "bfo_link.h"
#include "bfo_list.h"
#include "bfo_sink.h"
#include "bfo_transport.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ log */

typedef struct bfo_tp_log {
    const char *name; /* "tcp": lines begin "bfo-tcp[RANK]" */
    int rank;
    int level;        /* -1 silent, 1 errors (default), 2 connections, 3 debug */
    void (*out)(void *ctx, int level, const char *line); /* NULL: stderr, prefixed; else the
                                                          * line goes here as it is (verbs: its
                                                          * own prefix, with the time) */
    void *ctx;
} bfo_tp_log;

/* One line when the log's level reaches `level`. */
static inline void bfo_tp_logf(const bfo_tp_log *lg, int level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static inline void bfo_tp_logf(const bfo_tp_log *lg, int level, const char *fmt, ...)
{
    va_list ap;
    char line[512];
    if (lg->level < level)
        return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (lg->out)
        lg->out(lg->ctx, level, line);
    else
        fprintf(stderr, "bfo-%s[%d]: %s\n", lg->name, lg->rank, line);
}

/* --------------------------------------------------------------- checks */

/* 1 when (peer, rail) names a connection of this rank: another rank of the
 * job, one of the transport's rails.  What a post, connect(), disconnect()
 * or part() is refused (or ignored) without. */
static inline int bfo_tp_pair_ok(int rank, int size, int nrails, int peer, int rail)
{
    return peer >= 0 && peer < size && peer != rank && rail >= 0 && rail < nrails;
}

/* The length of a send post's frame (its one or two pieces, then the
 * described data span, if any), or -1 when the post is refused: (peer,
 * rail) not a connection of this rank, not one or two pieces, or a frame
 * that is empty or above max_frame (logged: the engine never posts one). */
static inline int64_t bfo_tp_send_len(const bfo_tp_log *lg, int size, int nrails, int peer, int rail,
                                      const bfo_iov *iov, int iovcnt, const bfo_data_span *span, size_t max_frame)
{
    size_t len = span ? span->len : 0;
    if (!bfo_tp_pair_ok(lg->rank, size, nrails, peer, rail) || iovcnt < 1 || iovcnt > 2)
        return -1;
    for (int k = 0; k < iovcnt; k++)
        len += iov[k].len;
    if (len == 0 || len > max_frame) {
        bfo_tp_logf(lg, 1, "post refused: %s", len ? "frame too large" : "empty frame");
        return -1;
    }
    return (int64_t)len;
}

/* A descriptor's view of a send's one or two pieces (iov[0..iovcnt)). */
static inline void bfo_tp_pieces(const bfo_iov *iov, int iovcnt, const void *base[2], size_t len[2])
{
    base[0] = iov[0].base;
    len[0] = iov[0].len;
    base[1] = iovcnt > 1 ? iov[1].base : NULL;
    len[1] = iovcnt > 1 ? iov[1].len : 0;
}

/* What a transport sizes by the engine's configuration. */
typedef struct bfo_tp_sizes {
    size_t max_frame; /* the largest frame the engine sends: its headers, a relay header,
                       * and the larger of an eager message and a fragment */
    int nents;        /* descriptors to start with: the engine's operations, and a few
                       * control frames */
    uint64_t ka_ns;   /* keepalives (stalled, or waiting on a silent peer): four per probe
                       * timeout, at most 10 ms apart */
} bfo_tp_sizes;

/* cfg with the engine's defaults filled in (what the engine will use), and
 * the sizes that follow from it. */
static inline bfo_config bfo_tp_config(const bfo_config *cfg, bfo_tp_sizes *out)
{
    bfo_config d = *cfg;
    bfo_config_defaults(&d);
    out->max_frame = BFO_MAX_HDR_SIZE + BFO_HDR_RELAY_SIZE + (d.eager_limit > d.frag_size ? d.eager_limit : d.frag_size);
    out->nents = d.max_ops + 16;
    out->ka_ns = d.probe_timeout_ns / 4;
    if (out->ka_ns > 10000000ull || out->ka_ns == 0)
        out->ka_ns = 10000000ull;
    return d;
}

/* 1 when open()'s arguments can make a transport: a sink with its three
 * required calls, a rank of the job, 1..BFO_MAX_RAILS rails. */
static inline int bfo_tp_args_ok(const bfo_transport_args *a)
{
    return a && a->cfg && a->sink && a->sink->completion && a->sink->frame && a->sink->rail_event &&
           a->size >= 1 && a->rank >= 0 && a->rank < a->size && a->nrails >= 1 && a->nrails <= BFO_MAX_RAILS;
}

/* ---------------------------------------------------- what the engine hears */

static inline const char *bfo_tp_evname(int ev)
{
    return ev == BFO_EV_CONNECTED ? "CONNECTED" : ev == BFO_EV_CONNECTED_PROVEN ? "CONNECTED_PROVEN"
         : ev == BFO_EV_CONNECT_FAILED ? "CONNECT_FAILED" : "RAIL_ERROR";
}

/* The conn machine's REPORT_UP: what the engine hears of the connection
 * (st: the step that reported it).  An authenticating transport (auth)
 * reports it only at a proof both ways (spec/conn.rl: the dialer at a
 * reply whose MAC it verified, its CONFIRM written: REPLY_RCVD; the
 * acceptor at that CONFIRM: PROOF_RCVD), so the engine admits the rail at
 * once, no probe (CONNECTED_PROVEN, spec/rail.rl "Up at the handshake");
 * one that does not reports CONNECTED and the engine probes it. */
static inline int bfo_tp_up_event(int auth, const bfo_step *st)
{
    return auth && (st->event == BFO_CONN_EV_REPLY_RCVD || st->event == BFO_CONN_EV_PROOF_RCVD)
               ? BFO_EV_CONNECTED_PROVEN
               : BFO_EV_CONNECTED;
}

/* A rail event to the engine, now (only from progress, never inside a
 * post), logged at level 2.  The engine behind the sink ignores one its
 * rail machine does not wait for (CONNECT_FAILED while FAILED: it already
 * gave up on the attempt). */
static inline void bfo_tp_emit(const bfo_tp_log *lg, const bfo_sink *sink, int peer, int rail, int ev, uint64_t now)
{
    bfo_tp_logf(lg, 2, "peer %d rail %d: %s", peer, rail, bfo_tp_evname(ev));
    sink->rail_event(sink->ctx, peer, rail, ev, now);
}

/* The conn machine's REPORT_FAILED (CONNECT_FAILED) and REPORT_ERROR
 * (RAIL_ERROR) for link l (arg: what its step was fed with).  A side that
 * lost a tie and whose winner never dialed says why here, at level 2: it
 * has no connection whose close would (a dialer's timeout is logged by the
 * close).  Returns 1
 * for a failed connect (the transport counts those), else 0. */
static inline int bfo_tp_report_down(const bfo_tp_log *lg, const bfo_sink *sink, const bfo_link *l, int action,
                                      const bfo_step *st, const void *arg, uint64_t now)
{
    if (action == BFO_CONN_ACT_REPORT_FAILED && st->event == BFO_CONN_EV_TIMED_OUT &&
        st->from == BFO_CONN_ST_AWAITING_HELLO)
        bfo_tp_logf(lg, 2, "peer %d rail %d: %s", l->peer, l->rail, bfo_link_why(st, arg));
    bfo_tp_emit(lg, sink, l->peer, l->rail,
                action == BFO_CONN_ACT_REPORT_FAILED ? BFO_EV_CONNECT_FAILED : BFO_EV_RAIL_ERROR, now);
    return action == BFO_CONN_ACT_REPORT_FAILED;
}

/* Descriptor i of a transport's pool goes back on the free list (threaded
 * through `next`, next0 the first's, `stride` bytes apart), then its
 * completion is counted (*ok_n or *failed_n) and told to the engine: freed
 * first, since the engine may post from inside. */
static inline void bfo_tp_complete(const bfo_sink *sink, int *next0, size_t stride, int *free_head, int i,
                                   uint64_t token, int ok, uint64_t *ok_n, uint64_t *failed_n)
{
    *bfo_list_next(next0, stride, i) = *free_head;
    *free_head = i;
    ++*(ok ? ok_n : failed_n);
    sink->completion(sink->ctx, token, ok);
}

/* A transport's own error codes and their names, ended by a NULL name. */
typedef struct bfo_tp_err {
    int rc;
    const char *name;
} bfo_tp_err;

/* The name of rc when it is one of the table's, else NULL (bfo_transport_ops.errname). */
static inline const char *bfo_tp_errname(const bfo_tp_err *tab, int rc)
{
    for (; tab->name; tab++)
        if (tab->rc == rc)
            return tab->name;
    return NULL;
}

/* ----------------------------------------------------------------- settle */

/* The transport's safe point, after anything that may break a connection
 * or fail a post: the links marked broken are fed BROKEN (the machine
 * closes them; their descriptors complete with ok=0), the posts on the
 * failed list complete with ok=0 (fail_one(b->ctx, i) each; the list is taken
 * whole first, since a completion may post, and fail, again), until
 * nothing is left.  links: n elements `lstride` bytes apart, whose bfo_link
 * l0 is the first's; the failed list is threaded through descriptors whose
 * `next` next0 is the first's, `estride` bytes apart.  The usual case,
 * nothing to do, is two tests. */
/* The failed list of bfo_tp_settle(_p), taken whole and completed: 1 when
 * it held any. */
static inline int bfo_tp_fail_listed(bfo_link_binding *b, bfo_list *failed, int *next0, size_t estride,
                                     void (*fail_one)(void *ctx, int i))
{
    bfo_list f;
    if (failed->head < 0)
        return 0;
    f = bfo_list_take(failed);
    for (int i = bfo_list_pop(next0, estride, &f); i >= 0; i = bfo_list_pop(next0, estride, &f))
        fail_one(b->ctx, i);
    return 1;
}

static inline void bfo_tp_settle(bfo_link_binding *b, bfo_link *l0, size_t lstride, int n, bfo_list *failed,
                                 int *next0, size_t estride, void (*fail_one)(void *ctx, int i), uint64_t now)
{
    for (int round = 0; round < 1000 && (b->nbroken || failed->head >= 0); round++) {
        int any = bfo_link_breaks(b, l0, lstride, n, now);
        if (!(bfo_tp_fail_listed(b, failed, next0, estride, fail_one) | any))
            return;
    }
}

/* bfo_tp_settle over n links named by pointers (bfo_link_breaks_p). */
static inline void bfo_tp_settle_p(bfo_link_binding *b, bfo_link *const *ls, int n, bfo_list *failed, int *next0,
                                   size_t estride, void (*fail_one)(void *ctx, int i), uint64_t now)
{
    for (int round = 0; round < 1000 && (b->nbroken || failed->head >= 0); round++) {
        int any = bfo_link_breaks_p(b, ls, n, now);
        if (!(bfo_tp_fail_listed(b, failed, next0, estride, fail_one) | any))
            return;
    }
}

#ifdef __cplusplus
}
#endif
#endif /* BFO_TP_H */
