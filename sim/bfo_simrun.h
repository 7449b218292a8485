// SPDX-License-Identifier: BSD-3-Clause
/* bfo_simrun.h - one simulated scenario, run and judged.
 *
 * A scenario: ranks, rails, messages (from, to, size, tag, any-source
 * receive), faults, a seed.  It passes when every message is delivered
 * exactly once with the right bytes (or, only when no rail to that peer is
 * left, fails with BFO_ERR_PEER_UNREACHABLE), no request waits past the
 * simulated time limit, every pool entry of every engine is back, and both
 * ends agree on which rails are up.  (A rail left down at the end, or with
 * a direction silent or on hold, counts as no rail, and the ends may
 * disagree on it.)  Shared by `bfo sim` and the tests.
 *
 * With sr_scenario.leave, once every request is complete the ranks leave
 * (bfo_engine_leave; rank i leave_gap_ns after rank i-1), each process
 * ending (sn_rank_exits) once its BYEs are out (bfo_engine_left) or
 * SR_LEAVE_NS after it left, whichever comes first.  The run then also
 * fails when a rank that took a peer's BYE fails a rail of that peer
 * afterwards (maps it out, schedules a reconnect, leaves LEFT) or gives
 * the peer up; and, when no fault fired, when anything is mapped out or
 * given up from the moment the first rank leaves, a rank's BYEs are not
 * out within SR_LEAVE_NS, or no BYE was taken.  A BYE lost, failed or
 * delayed like any frame must still end cleanly: the peer falls back to
 * finding the rails closed, bounded.
 * With sr_scenario.kill, one rank's process is killed (sn_rank_exits, no
 * BYE) kill_at_ns after the messages were posted, and the launcher reports
 * its death to every survivor report_ns later (bfo_peer_failed:
 * docs/failure-model.md).  The judge then takes a message to the killed
 * rank as delivered (its send completed BFO_OK) or errored
 * (BFO_ERR_PROC_FAILED), one from it as delivered (every byte right) or
 * errored (its receive ended BFO_ERR_PROC_FAILED, or PROC_FAILED_PENDING
 * for an ANY_SOURCE one), never hung; the killed rank's own requests and
 * pools are not judged.  An ANY_SOURCE receive that ends
 * BFO_ERR_PROC_FAILED_PENDING is acknowledged (bfo_failure_ack) and
 * posted again, as a program does, unless its sender is the killed rank.
 * Messages between survivors must all arrive, as without a kill.
 * A test tool: it allocates.
 */
#ifndef BFO_SIMRUN_H
#define BFO_SIMRUN_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bfo_engine.h"
#include "bfo_simnet.h"

#define SR_MAX_MSGS 64 /* messages a scenario lists (sr_scenario.msgs); sr_scenario.exchange
                        * makes as many as it says */

/* How the scenario's messages are given to the engines (sr_scenario.data):
 * buffers (bfo_isend, bfo_irecv), or described (bfo_isend_data,
 * bfo_irecv_data): iovec lists over memory with a gap after every segment
 * (sender and receiver cut the message at different places; the gaps must
 * stay untouched), pack/unpack callbacks, or mixed: the sender packs and
 * the receiver takes an iovec, then the other way round, message by
 * message. */
enum { SR_DATA_BUFFER, SR_DATA_IOV, SR_DATA_PACK, SR_DATA_MIXED };

/* Packed data of one message: its bytes, and what the callbacks saw. */
typedef struct sr_packed {
    uint8_t *buf;
    size_t size;
    uint64_t calls, bad; /* bad: a call outside the message */
} sr_packed;

static inline void sr_pack(void *ctx, size_t off, void *dst, size_t n)
{
    sr_packed *p = (sr_packed *)ctx;
    p->calls++;
    if (off > p->size || n > p->size - off) {
        p->bad++;
        return;
    }
    memcpy(dst, p->buf + off, n);
}

static inline void sr_unpack(void *ctx, size_t off, const void *src, size_t n)
{
    sr_packed *p = (sr_packed *)ctx;
    p->calls++;
    if (off > p->size || n > p->size - off) {
        p->bad++;
        return;
    }
    memcpy(p->buf + off, src, n);
}

#define SR_GAP 3           /* bytes between two segments of an iovec description */
#define SR_GAP_BYTE 0xa5   /* what they hold, and must still hold at the end */

/* An iovec description of size bytes: segments of 0 to max_seg bytes (cut
 * by seed), each followed by SR_GAP bytes of SR_GAP_BYTE, in *back. */
static inline void sr_iov_make(bfo_data *d, size_t size, uint64_t seed, uint8_t **back,
                               bfo_data_seg **segs)
{
    uint64_t x = seed * 0x9e3779b97f4a7c15ull + 77;
    size_t max_seg = size / 3 > 2000 ? 2000 : size / 3 ? size / 3 : 1;
    size_t n = 0, cap = 16, total = 0;
    bfo_data_seg *g = (bfo_data_seg *)malloc(cap * sizeof *g);
    while (g && total < size) {
        size_t len;
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        len = x % 7 == 0 ? 0 : 1 + (size_t)(x >> 8) % max_seg;
        if (len > size - total)
            len = size - total;
        if (n == cap && !(g = (bfo_data_seg *)realloc(g, (cap *= 2) * sizeof *g)))
            break;
        g[n].len = len;
        total += len;
        n++;
    }
    *back = (uint8_t *)malloc(size + (n + 1) * SR_GAP);
    if (!g || !*back)
        abort();
    memset(*back, SR_GAP_BYTE, size + (n + 1) * SR_GAP);
    for (size_t i = 0, at = SR_GAP; i < n; at += g[i].len + SR_GAP, i++)
        g[i].base = *back + at;
    memset(d, 0, sizeof *d);
    d->kind = BFO_DATA_IOV;
    d->len = size;
    d->segs = g;
    d->nsegs = (int)n;
    *segs = g;
}

/* 1 when every gap of an iovec description still holds SR_GAP_BYTE. */
static inline int sr_iov_gaps_intact(const bfo_data *d)
{
    for (int i = 0; i < d->nsegs; i++)
        for (int k = 0; k < SR_GAP; k++)
            if (((const uint8_t *)d->segs[i].base)[d->segs[i].len + (size_t)k] != SR_GAP_BYTE ||
                ((const uint8_t *)d->segs[i].base)[-1 - k] != SR_GAP_BYTE)
                return 0;
    return 1;
}

struct sr_world;

typedef struct sr_msg {
    int src, dst, tag, any; /* any: the receive is posted for BFO_ANY_SOURCE */
    size_t size;
    /* (zero for the plain case) */
    uint32_t ctx;  /* context id; the sender's rank in it is sr_rank_in(ctx, src) */
    int sync;      /* a synchronous send: it must not complete before its receive matched */
    int late;      /* the receive is posted only SR_LATE_NS after the send */
    int probe;     /* SR_PROBE: the receive is posted once bfo_iprobe sees the message;
                    * SR_MPROBE: bfo_improbe takes it, bfo_imrecv SR_MPROBE_GAP_NS later */
    int cancel;    /* SR_CANCEL_RECV: the receive is cancelled (msg % 5) ms after the send
                    * and, if that worked, posted again; SR_CANCEL_SEND: the send is
                    * cancelled at once (then, if that worked, its receive at the end) */
} sr_msg;

enum { SR_PROBE = 1, SR_MPROBE = 2 };
enum { SR_CANCEL_RECV = 1, SR_CANCEL_SEND = 2 };
#define SR_MPROBE_GAP_NS 30000000ull /* 30 ms between the matched probe and the receive */

#define SR_LATE_NS 200000000ull /* 200 ms: past heartbeats, probes and most faults */

/* A rank's rank in a context: not its engine rank unless ctx is 0, so that
 * a run proves that receives name the context's rank and the engine peer
 * apart (the layer's mapping). */
static inline int sr_rank_in(uint32_t ctx, int rank) { return ctx ? rank + (int)(ctx % 1000) + 1 : rank; }

/* bfo_config.source_ok of the simulated ranks: a message's source is its
 * sender's rank in the context (sr_rank_in), or the engine's rank (the
 * tests' bfo_isend on any context, the groups' messages). */
static inline int sr_source_ok(void *arg, uint32_t ctx, uint32_t src, int peer)
{
    (void)arg;
    return src == (uint32_t)peer || src == (uint32_t)sr_rank_in(ctx, peer);
}

/* A simulated rail's speed when the scenario gives none (MB/s): what the
 * engine's rate measurement sees (simnet.rail_mbps). */
#define SR_RAIL_MBPS 1000

typedef struct sr_scenario {
    int ranks, rails;
    unsigned rail_bw[BFO_MAX_RAILS];
    size_t eager_limit; /* 0: engine default */
    int rdma;           /* bfo_config.rdma (enum bfo_rdma_mode) */
    size_t rdma_min;    /* 0: engine default */
    unsigned plain_rails; /* rails that cannot RDMA (bit per rail; 0: every rail can) */
    int protocol;       /* the driver's name for the above (bfo sim --protocol), for replay */
    int data;           /* how messages are given to the engine: SR_DATA_* (bfo sim --data) */
    unsigned data_rails; /* described data: the rails whose transport reads it in place
                         * (post_send_data; bit per rail); the others: the engine stages it */
    int nmsgs;
    sr_msg msgs[SR_MAX_MSGS];
    /* ... or, exchange > 0, the messages are made (sr_exchange, bfo sim
     * --exchange K:SIZE; nmsgs and msgs[] unused): every rank sends
     * exchange_size bytes to each of `exchange` peers, rank + 1, + 2, + 4,
     * ... (as many messages as ranks * exchange) */
    int exchange;
    size_t exchange_size;
    int nfaults;
    sn_fault faults[SN_MAX_FAULTS];
    uint64_t seed;
    uint64_t limit_ns; /* 0: 30 s of simulated time */
    uint64_t start_ns; /* simulated time before the messages are posted (rails come up) */
    size_t unexpected_budget; /* each engine's (0: the engine's default, 64 MiB): the
                               * credit windows are budget / (ranks - 1) */
    uint64_t seq_start; /* every peer's first message sequence (0: the engine's, 1): a run
                         * past a 16- or 32-bit wrap without 65,536 messages first */
    FILE *trace;       /* every transition and the wire (simnet.trace), or NULL */
    const bfo_config *cfg; /* the engines' configuration (rank, nranks, nrails are set per
                            * engine), or NULL: derived from the fields above */
    /* Called once the network is set up, before the engines are: a transport
     * model may replace w->sn.be[] (what the engines call) and set
     * w->sn.hooks (bfo_simnet.h).  NULL: the engines talk to the wire. */
    void (*attach)(struct sr_world *w, void *arg);
    void *attach_arg;
    int place;             /* frames read in place as TCP reads them (simnet.place) */
    int relay;             /* bfo_config.relay: a peer no rail reaches goes through a third rank */
    int connect_at_init;   /* bfo_config.connect_at_init: every rail connects at init (a test
                            * about rails already UP); 0: on first use, the engine's default */
    int relay_strict;      /* ... and the faults only cut pairs of ranks a third one reaches:
                            * no message may end with an error */
    int leave;             /* the ranks leave at the end (see the top) */
    uint64_t leave_gap_ns; /* ... rank i this long after rank i-1 (0: all at once) */
    uint64_t progress_ns;  /* simnet.progress_ns: 0, every engine's timers after every step */
    int grow;              /* bfo_config.grow: the engines' pools grow (sr_world.grown), as
                            * bfo_net's do (pml/bfo); 0: fixed, the engine's default */
    /* the engines' blocks (bfo_engine_mem_size each): from mem_alloc and
     * back to mem_free when set (bfo sim's measure of what a rank touched),
     * else malloc and free */
    void *(*mem_alloc)(void *ctx, size_t bytes);
    void (*mem_free)(void *ctx, void *mem, size_t bytes);
    void *mem_ctx;
    int kill;              /* a rank is killed (see the top): its rank + 1; 0: none */
    uint64_t kill_at_ns;   /* ... this long after the messages were posted */
    uint64_t kill_op;      /* ... or (when not 0) once the network carried this many
                            * operations (bfo sim --explore kill: at every step) */
    uint64_t report_ns;    /* ... and reported dead to the survivors this long after */
} sr_scenario;

#define SR_LEAVE_NS 500000000ull /* a leaving rank ends at most this long after it left */

typedef struct sr_result {
    int passed;
    /* every message is counted once: delivered (or corrupt), errored (its
     * receive ended with an error: reported to its receiver, and to its
     * sender unless the send had completed), or hung (a request never
     * completed), of which lost: the send completed as delivered and the
     * receive never did (delivered to nobody, reported to nobody) */
    uint64_t delivered, errored, lost, duplicates, corrupt, hung, leaked, unreachable_errors, restarts,
        mapouts, readmissions, ops, eagers, copies, puts, gets, rdma_ops;
    uint64_t early_syncs; /* synchronous sends complete before their receive matched */
    uint64_t probe_errors; /* a probe that reported another source, tag or length */
    uint64_t cancelled;    /* receives cancelled (then posted again), sends cancelled */
    uint64_t cancel_errors; /* a cancel that worked but the message matched anyway, or a
                             * cancelled request that did not complete as cancelled */
    uint64_t rail_bytes[BFO_MAX_RAILS]; /* payload and RDMA bytes posted per rail */
    uint64_t credit_rndv;  /* sends of eager size that went by rendezvous for want of credit */
    uint64_t over_window;  /* frames that found the receiver's budget spent: must be 0 */
    uint64_t byes_sent, byes_taken; /* BYEs posted; peers whose BYE a rank took */
    uint64_t leave_timeouts; /* ranks that ended with a BYE not out after SR_LEAVE_NS */
    uint64_t left_failures;  /* a rail of a peer that said BYE failed afterwards, or the
                              * peer was given up: must be 0 */
    uint64_t kills;          /* ranks killed (sr_scenario.kill) */
    uint64_t ops_to_done;    /* operations the network carried until every request was
                              * complete (ops: until the end, heartbeats of the settling
                              * included) */
    uint64_t failed_errors;  /* requests that ended BFO_ERR_PROC_FAILED or _PENDING */
    uint64_t pending_reposts; /* ANY_SOURCE receives acknowledged and posted again */
    uint64_t relayed_frames, relay_passed, relay_refused; /* relay (sr_scenario.relay): frames
                                                           * sent through a third rank, passed
                                                           * on, refused by the one passing on */
    uint64_t routes_found, routes_lost;
    /* the engines' memory: each one's block (bfo_engine_mem_size), what a
     * peer more adds to it, and what their pools grew (sr_scenario.grow),
     * all of them */
    uint64_t mem_bytes, mem_per_peer, grown_bytes, grow_calls;
    char why[256];
} sr_result;

/* A run: its tables per rank ([ranks]) and per message ([nmsgs]) are
 * allocated by sr_new, for any number of each. */
typedef struct sr_world {
    simnet sn;
    bfo_engine *e;
    void **mem;
    size_t mem_bytes;             /* each engine's block (bfo_engine_mem_size) */
    size_t mem_per_peer;          /* ... and what a rank more would add to it */
    /* the pools' chunks (sr_scenario.grow): a list, freed by sr_del */
    void *grown;
    uint64_t grown_bytes, grow_calls;
    int nmsgs;                    /* the run's messages: sc->msgs[], or those made (exchange) */
    sr_msg *msg;
    int *open, nopen;             /* those sr_all_done still walks, in order */
    bfo_request *sreq, *rreq;
    uint8_t **sbuf, **rbuf;
    int *posted;                  /* the receive is posted */
    int *early;                   /* a synchronous send completed before its match */
    uint64_t *claimed_at;         /* SR_MPROBE: when bfo_improbe took it (posted 2) */
    int *cancel_tried;
    int *send_cancelled;          /* bfo_cancel took the send */
    uint64_t probe_errors, cancelled, cancel_errors;
    uint64_t post_at;             /* when the sends were posted */
    uint64_t early_syncs;         /* see sr_result */
    /* described data (sr_scenario.data): each side's description, and what it points to */
    bfo_data *sdata, *rdata;
    bfo_data_seg **ssegs, **rsegs;
    uint8_t **sback, **rback;
    sr_packed *spack, *rpack;
    const sr_scenario *sc; /* = &scenario */
    sr_scenario scenario;  /* a copy: the world outlives the caller's */
    struct sr_trace_ctx {
        simnet *sn;
        int rank;
        FILE *out;
        const struct sr_world *w;
    } *tctx;
    bfo_tracer *tracer;
    /* sr_scenario.leave: when each rank left and ended (0: not yet), when it
     * took each peer's BYE ([rank * ranks + peer]), and what the judge found */
    uint64_t *left_at, *exit_at;
    uint64_t *bye_at;
    uint64_t leave_from;     /* the first bfo_engine_leave (0: none yet) */
    uint64_t mapouts_at_leave, left_failures, leave_timeouts;
    int first_failure_rank, first_failure_peer;
    /* sr_scenario.kill: when the rank was killed and reported (0: not yet) */
    uint64_t killed_at, reported_at;
    uint64_t pending_reposts;
    uint64_t ops_to_done; /* sn.ops when sr_all_done first said done */
} sr_world;

static inline uint8_t sr_pattern(int msg, size_t i) { return (uint8_t)(msg * 31 + i * 7 + (i >> 8)); }

/* The rank sr_scenario.kill kills (-1: none), and whether it is dead yet. */
static inline int sr_victim(const sr_world *w) { return w->sc->kill - 1; }
static inline int sr_dead(const sr_world *w, int rank) { return w->killed_at && rank == sr_victim(w); }

static inline bfo_envelope sr_recv_env(const sr_msg *m)
{
    bfo_envelope env;
    env.peer = m->any ? BFO_ANY_SOURCE : m->src;
    env.ctx = m->ctx;
    env.src = m->any ? BFO_ANY_SOURCE : sr_rank_in(m->ctx, m->src);
    env.tag = m->tag;
    env.flags = 0;
    return env;
}

static inline void sr_post_recv(sr_world *w, int i)
{
    const sr_msg *m = &w->msg[i];
    bfo_envelope env = sr_recv_env(m);
    w->posted[i] = 1;
    if (w->sc->data)
        bfo_irecv_data_env(&w->e[m->dst], &w->rreq[i], &w->rdata[i], &env, w->sn.now);
    else
        bfo_irecv_env(&w->e[m->dst], &w->rreq[i], w->rbuf[i], m->size, &env, w->sn.now);
}

/* What a probe saw of message i: its source, tag and length, or an error. */
static inline void sr_check_status(sr_world *w, int i, const bfo_status *st)
{
    const sr_msg *m = &w->msg[i];
    if (st->tag == m->tag && (st->source != sr_rank_in(m->ctx, m->src) || st->peer != m->src ||
                              st->length != m->size))
        w->probe_errors++;
}

/* Message i's receive side, as the scenario says: posted, probed first, or
 * taken by a matched probe; cancelled and posted again; cancelled with a
 * cancelled send. */
static inline void sr_drive_recv(sr_world *w, int i)
{
    const sr_msg *m = &w->msg[i];
    bfo_engine *e = &w->e[m->dst];
    const uint64_t now = w->sn.now;
    bfo_envelope env = sr_recv_env(m);
    bfo_status st;
    if (sr_dead(w, m->dst)) /* its process is gone: nothing more of it */
        return;
    if (w->posted[i] == 1 && m->any && bfo_test(&w->rreq[i]) &&
        w->rreq[i].status == BFO_ERR_PROC_FAILED_PENDING && m->src != sr_victim(w)) {
        /* a failure not acknowledged: acknowledged, the receive posted again */
        bfo_failure_ack(e);
        w->pending_reposts++;
        sr_post_recv(w, i);
    }
    if (!w->posted[i] && now >= w->post_at + (m->late ? SR_LATE_NS : 0)) {
        if (m->probe == SR_PROBE) {
            if (bfo_iprobe(e, &env, &st, now) == 1) {
                sr_check_status(w, i, &st);
                sr_post_recv(w, i);
            } else if (!bfo_peer_reachable(e, m->src)) { /* nothing will come: the receive says why */
                sr_post_recv(w, i);
            }
        } else if (m->probe == SR_MPROBE) {
            if (bfo_improbe(e, &w->rreq[i], &env, &st, now) == 1) {
                sr_check_status(w, i, &st);
                w->posted[i] = 2;
                w->claimed_at[i] = now;
            } else if (!bfo_peer_reachable(e, m->src)) {
                sr_post_recv(w, i);
            }
        } else {
            sr_post_recv(w, i);
        }
    }
    if (w->posted[i] == 2 && now >= w->claimed_at[i] + SR_MPROBE_GAP_NS) {
        w->posted[i] = 1;
        if ((w->sc->data ? bfo_imrecv_data(e, &w->rreq[i], &w->rdata[i], now)
                         : bfo_imrecv(e, &w->rreq[i], w->rbuf[i], m->size, now)) != BFO_OK)
            w->probe_errors++;
    }
    if (m->cancel == SR_CANCEL_RECV && w->posted[i] == 1 && !w->cancel_tried[i] &&
        now >= w->post_at + (uint64_t)(i % 5) * 1000000ull) {
        int rc = bfo_cancel(e, &w->rreq[i], now);
        w->cancel_tried[i] = 1;
        if (rc == BFO_OK) {
            if (!bfo_test(&w->rreq[i]) || w->rreq[i].status != BFO_ERR_CANCELLED)
                w->cancel_errors++;
            w->cancelled++;
            sr_post_recv(w, i);
        } else if (rc != BFO_ERR_TOO_LATE) {
            w->cancel_errors++;
        }
    }
    if (w->send_cancelled[i] && w->posted[i] == 1 && !w->cancel_tried[i] &&
        bfo_test(&w->sreq[i])) {
        /* nothing of the message left: nothing can have matched its receive */
        w->cancel_tried[i] = 1;
        if (w->sreq[i].status != BFO_ERR_CANCELLED ||
            bfo_cancel(e, &w->rreq[i], now) != BFO_OK)
            w->cancel_errors++;
    }
}

/* Called before every step of the network (sn_run's `done`): posts the
 * receives whose time has come, watches the synchronous sends, and says
 * whether every request is complete. */
static inline int sr_all_done(void *arg)
{
    sr_world *w = (sr_world *)arg;
    int done = 1;
    const int v = sr_victim(w);
    if (v >= 0 && !w->killed_at &&
        (w->sc->kill_op ? w->sn.ops >= w->sc->kill_op : w->sn.now >= w->post_at + w->sc->kill_at_ns)) {
        sn_rank_killed(&w->sn, v); /* SIGKILL: no BYE */
        w->killed_at = w->sn.now ? w->sn.now : 1;
        for (size_t k = 0; k < w->sn.nregs; k++) /* its memory registrations went with it */
            if (w->sn.regs[k].rank == v)
                sn_reg_end(&w->sn, &w->sn.regs[k]);
    }
    if (w->killed_at && !w->reported_at && w->sn.now >= w->killed_at + w->sc->report_ns) {
        for (int r = 0; r < w->sc->ranks; r++) /* the launcher saw it exit */
            if (r != v)
                bfo_peer_failed(&w->e[r], v, w->sn.now);
        w->reported_at = w->sn.now ? w->sn.now : 1;
    }
    int kept = 0;
    for (int x = 0; x < w->nopen; x++) {
        const int i = w->open[x];
        const sr_msg *m = &w->msg[i];
        sr_drive_recv(w, i);
        /* done, and nothing more can happen to it (no receive to post
         * again, no cancel, no synchronous send to watch, no kill): out
         * of this walk, which every step of the network takes */
        if (!m->any && !m->sync && !m->cancel && !w->sc->kill && w->posted[i] == 1 &&
            bfo_test(&w->sreq[i]) && bfo_test(&w->rreq[i]))
            continue;
        w->open[kept++] = i;
        if (w->killed_at && (m->src == v || m->dst == v)) { /* judged apart (sr_judge) */
            if ((m->src != v && !bfo_test(&w->sreq[i])) ||
                (m->dst != v && (w->posted[i] != 1 || !bfo_test(&w->rreq[i]))))
                done = 0;
            continue;
        }
        if (m->sync && bfo_test(&w->sreq[i]) && w->sreq[i].status == BFO_OK &&
            !w->early[i] &&
            (!w->posted[i] || (!bfo_test(&w->rreq[i]) && w->rreq[i].cs == BFO_RECV_ST_POSTED))) {
            w->early[i] = 1;
            w->early_syncs++;
        }
        if (!bfo_test(&w->sreq[i]) || w->posted[i] != 1 || !bfo_test(&w->rreq[i]))
            done = 0;
    }
    w->nopen = kept;
    if (done && !w->ops_to_done)
        w->ops_to_done = w->sn.ops;
    return done;
}

static inline unsigned sr_rail_bw(void *ctx, int rail)
{
    const sr_scenario *sc = (const sr_scenario *)((sn_endpoint *)ctx)->sn->user;
    return sc->rail_bw[rail];
}

typedef struct sr_trace_ctx sr_trace_ctx;

/* What a step's object is, the same in every run: "msg N" (the scenario's
 * message N) or "peer P rail R". */
static inline void sr_obj_name(const sr_trace_ctx *t, const void *obj, char *buf, size_t cap)
{
    const bfo_engine *e = &t->w->e[t->rank];
    snprintf(buf, cap, "?");
    for (int i = 0; i < t->w->nmsgs; i++)
        if (obj == &t->w->sreq[i] || obj == &t->w->rreq[i])
            snprintf(buf, cap, "msg %d", i);
    for (int p = 0; p < e->cfg.nranks && e->peers; p++)
        for (int r = 0; r < e->cfg.nrails; r++)
            if (obj == &e->peers[p].rail[r])
                snprintf(buf, cap, "peer %d rail %d", p, r);
}

/* simulated time, rank, object, machine: state -> state, event [/ actions] */
static inline void sr_trace(void *user, const bfo_machine *m, const bfo_step *st)
{
    sr_trace_ctx *t = (sr_trace_ctx *)user;
    char obj[48]; /* "peer %d rail %d" with two ints */
    sr_obj_name(t, st->obj, obj, sizeof obj);
    fprintf(t->out, "%12.6f ms  rank %d  %-13s  %-4s %s -> %s  %s", (double)t->sn->now / 1e6,
            t->rank, obj, m->name, bfo_fsm_state_name(m, st->from), bfo_fsm_state_name(m, st->to),
            m->id == BFO_MACHINE_PEER ? bfo_peer_event_name(st->event) /* its own alphabet */
                                      : bfo_event_name(st->event));
    for (unsigned i = 0; i < st->n_actions; i++)
        fprintf(t->out, "%s%s", i ? ", " : " / ", m->action_names[st->actions[i]]);
    if (st->result != BFO_OK)
        fprintf(t->out, "  [%s]", bfo_errname(st->result));
    fputc('\n', t->out);
}

/* sr_scenario.leave: every step of every engine passes here.  A rail of a
 * peer whose BYE the rank took may not fail afterwards: no map-out, no
 * reconnect scheduled or made, no way out of LEFT.  Then on to sr_trace
 * (--trace). */
static inline void sr_watch(void *user, const bfo_machine *m, const bfo_step *st)
{
    sr_trace_ctx *t = (sr_trace_ctx *)user;
    sr_world *w = (sr_world *)(uintptr_t)t->w;
    const bfo_engine *e = &w->e[t->rank];
    const int p = m == &bfo_rail_machine && st->result == BFO_OK ? bfo__rail_at(e, st->obj, NULL) : -1;
    if (p >= 0) {
        int bad = 0;
        uint64_t *bye = &w->bye_at[(size_t)t->rank * (size_t)w->sc->ranks + (size_t)p];
        if (st->event == BFO_EV_BYE_RCVD && !*bye)
            *bye = w->sn.now ? w->sn.now : 1;
        else if (*bye) {
            bad = st->from == BFO_RAIL_ST_LEFT && st->to != BFO_RAIL_ST_LEFT;
            for (unsigned i = 0; i < st->n_actions; i++)
                bad |= st->actions[i] == BFO_RAIL_ACT_MAP_OUT ||
                       st->actions[i] == BFO_RAIL_ACT_SCHEDULE_RECONNECT ||
                       st->actions[i] == BFO_RAIL_ACT_RECONNECT ||
                       st->actions[i] == BFO_RAIL_ACT_SEND_BROKEN;
        }
        if (bad && !w->left_failures++) {
            w->first_failure_rank = t->rank;
            w->first_failure_peer = p;
        }
    }
    if (t->out)
        sr_trace(user, m, st);
}

static inline void sr_note(sr_result *r, const char *fmt, int a, int b)
{
    if (!r->why[0])
        snprintf(r->why, sizeof r->why, fmt, a, b);
}

/* Time passes by: steps the network for `ns` of simulated time, timers
 * firing. */
static inline void sr_advance(sr_world *w, uint64_t ns)
{
    if (!w->sc)
        return;
    for (uint64_t end = w->sn.now + ns; w->sn.now < end;) {
        if (!sn_step(&w->sn))
            w->sn.now += 5000000;
        sn_progress(&w->sn);
    }
}

/* Message i's descriptions (sr_scenario.data): the send's holds its bytes
 * (segments filled from sbuf, or packed from it), the receive's puts them
 * in its segments (copied to rbuf by sr_judge) or unpacks them into rbuf. */
static inline void sr_describe(sr_world *w, int i)
{
    const sr_msg *m = &w->msg[i];
    const int mode = w->sc->data;
    int s_iov = mode == SR_DATA_IOV || (mode == SR_DATA_MIXED && i % 2);
    int r_iov = mode == SR_DATA_IOV || (mode == SR_DATA_MIXED && !(i % 2));
    if (s_iov) {
        bfo_data_pos p = { 0, 0 };
        sr_iov_make(&w->sdata[i], m->size, (uint64_t)i * 2 + 1, &w->sback[i], &w->ssegs[i]);
        bfo_data_write(&w->sdata[i], &p, 0, w->sbuf[i], m->size);
    } else {
        w->spack[i].buf = w->sbuf[i];
        w->spack[i].size = m->size;
        memset(&w->sdata[i], 0, sizeof w->sdata[i]);
        w->sdata[i].kind = BFO_DATA_PACK;
        w->sdata[i].len = m->size;
        w->sdata[i].pack = sr_pack;
        w->sdata[i].ctx = &w->spack[i];
    }
    if (r_iov) {
        sr_iov_make(&w->rdata[i], m->size, (uint64_t)i * 2 + 2, &w->rback[i], &w->rsegs[i]);
    } else {
        w->rpack[i].buf = w->rbuf[i];
        w->rpack[i].size = m->size;
        memset(&w->rdata[i], 0, sizeof w->rdata[i]);
        w->rdata[i].kind = BFO_DATA_PACK;
        w->rdata[i].len = m->size;
        w->rdata[i].unpack = sr_unpack;
        w->rdata[i].ctx = &w->rpack[i];
    }
}

/* The peers rank r sends to in an exchange of k (sr_scenario.exchange):
 * the j-th, j < k, is r + 2^j.  The most an exchange takes at n ranks:
 * every 2^j below n, so that no two are one peer (nor the rank itself). */
static inline int sr_exchange_peer(int r, int j, int n) { return (int)(((int64_t)r + ((int64_t)1 << j)) % n); }
static inline int sr_exchange_max(int n)
{
    int k = 0;
    while (k < 30 && ((int64_t)1 << k) < n)
        k++;
    return k;
}

/* The messages of an exchange (sr_scenario.exchange): message r * k + j
 * goes from rank r to sr_exchange_peer(r, j) with tag j; every receive is
 * posted for its sender, so a rank's k receives name k peers. */
static inline void sr_exchange(const sr_scenario *sc, sr_msg *out)
{
    const int k = sc->exchange;
    for (int r = 0; r < sc->ranks; r++)
        for (int j = 0; j < k; j++) {
            sr_msg *m = &out[r * k + j];
            memset(m, 0, sizeof *m);
            m->src = r;
            m->dst = sr_exchange_peer(r, j, sc->ranks);
            m->tag = j;
            m->size = sc->exchange_size;
        }
}

/* The pools' chunks (sr_scenario.grow), as bfo_net's n_grow: kept on a
 * list, 16-byte aligned, freed after the engines. */
static inline void *sr_grow(void *ctx, size_t bytes)
{
    sr_world *w = (sr_world *)ctx;
    uint8_t *m = (uint8_t *)malloc(16 + bytes);
    if (!m)
        return NULL;
    memcpy(m, &w->grown, sizeof w->grown);
    w->grown = m;
    w->grown_bytes += bytes;
    w->grow_calls++;
    return m + 16;
}

/* A table of n entries of `size` bytes, zeroed; aborts without memory. */
static inline void *sr_table(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p)
        abort();
    return p;
}

/* A scenario's world: engines initialised, every receive posted (in message
 * order), then every send.  Tests may look inside (w->e[i].stats, requests)
 * or drive it by hand before sr_go. */
static inline sr_world *sr_new(const sr_scenario *sc)
{
    sr_world *w = (sr_world *)calloc(1, sizeof *w);
    if (!w)
        abort();
    w->scenario = *sc;
    sc = w->sc = &w->scenario;
    const size_t nr = (size_t)sc->ranks;
    w->nmsgs = sc->exchange > 0 ? sc->ranks * sc->exchange : sc->nmsgs;
    const size_t nm = (size_t)w->nmsgs;
    w->msg = (sr_msg *)sr_table(nm, sizeof *w->msg);
    if (sc->exchange > 0)
        sr_exchange(sc, w->msg);
    else if (nm)
        memcpy(w->msg, sc->msgs, nm * sizeof *w->msg);
    w->e = (bfo_engine *)sr_table(nr, sizeof *w->e);
    w->mem = (void **)sr_table(nr, sizeof *w->mem);
    w->tctx = (struct sr_trace_ctx *)sr_table(nr, sizeof *w->tctx);
    w->tracer = (bfo_tracer *)sr_table(nr, sizeof *w->tracer);
    w->left_at = (uint64_t *)sr_table(nr, sizeof *w->left_at);
    w->exit_at = (uint64_t *)sr_table(nr, sizeof *w->exit_at);
    w->bye_at = (uint64_t *)sr_table(nr * nr, sizeof *w->bye_at);
    w->open = (int *)sr_table(nm, sizeof *w->open);
    for (int i = 0; i < w->nmsgs; i++)
        w->open[w->nopen++] = i;
    w->sreq = (bfo_request *)sr_table(nm, sizeof *w->sreq);
    w->rreq = (bfo_request *)sr_table(nm, sizeof *w->rreq);
    w->sbuf = (uint8_t **)sr_table(nm, sizeof *w->sbuf);
    w->rbuf = (uint8_t **)sr_table(nm, sizeof *w->rbuf);
    w->posted = (int *)sr_table(nm, sizeof *w->posted);
    w->early = (int *)sr_table(nm, sizeof *w->early);
    w->claimed_at = (uint64_t *)sr_table(nm, sizeof *w->claimed_at);
    w->cancel_tried = (int *)sr_table(nm, sizeof *w->cancel_tried);
    w->send_cancelled = (int *)sr_table(nm, sizeof *w->send_cancelled);
    w->sdata = (bfo_data *)sr_table(nm, sizeof *w->sdata);
    w->rdata = (bfo_data *)sr_table(nm, sizeof *w->rdata);
    w->ssegs = (bfo_data_seg **)sr_table(nm, sizeof *w->ssegs);
    w->rsegs = (bfo_data_seg **)sr_table(nm, sizeof *w->rsegs);
    w->sback = (uint8_t **)sr_table(nm, sizeof *w->sback);
    w->rback = (uint8_t **)sr_table(nm, sizeof *w->rback);
    w->spack = (sr_packed *)sr_table(nm, sizeof *w->spack);
    w->rpack = (sr_packed *)sr_table(nm, sizeof *w->rpack);
    /* the requests a rank holds at once: its messages' sends and receives
     * (never fewer than a listed scenario's: SR_MAX_MSGS) */
    int per_rank = SR_MAX_MSGS;
    {
        int *n = (int *)sr_table(nr, sizeof(int));
        for (int i = 0; i < w->nmsgs; i++) {
            n[w->msg[i].src]++;
            n[w->msg[i].dst] += w->msg[i].dst != w->msg[i].src;
        }
        for (size_t r = 0; r < nr; r++)
            per_rank = n[r] > per_rank ? n[r] : per_rank;
        free(n);
    }
    sn_init(&w->sn, sc->ranks, sc->rails, sc->seed);
    w->sn.progress_ns = sc->progress_ns;
    w->sn.user = (void *)sc;
    w->sn.rdma_mask = ~sc->plain_rails;
    w->sn.data_mask = sc->data ? sc->data_rails : 0;
    w->sn.place = sc->place;
    w->sn.trace = sc->trace;
    for (int i = 0; i < sc->nfaults; i++)
        sn_add_fault(&w->sn, &sc->faults[i]);
    if (sc->attach)
        sc->attach(w, sc->attach_arg);
    for (int i = 0; i < sc->ranks; i++) {
        bfo_config c;
        if (sc->cfg)
            c = *sc->cfg;
        else
            memset(&c, 0, sizeof c);
        c.rank = i;
        c.nranks = sc->ranks;
        c.nrails = sc->rails;
        if (sc->relay)
            c.relay = 1;
        if (!c.source_ok)
            c.source_ok = sr_source_ok;
        if (sc->connect_at_init)
            c.connect_at_init = 1;
        if (sc->grow) {
            c.grow = sr_grow;
            c.grow_ctx = w;
        }
        if (!sc->cfg) {
            c.max_requests = 2 * per_rank + 8;
            c.max_unexpected = 2 * per_rank;
            c.eager_limit = sc->eager_limit;
            c.rdma = sc->rdma;
            c.rdma_min = sc->rdma_min;
            c.unexpected_budget = sc->unexpected_budget;
        }
        for (int k = 0; k < sc->rails && k < BFO_MAX_RAILS; k++) /* the links run at the */
            w->sn.rail_mbps[k] = sc->rail_bw[k] ? sc->rail_bw[k] : SR_RAIL_MBPS; /* figures given */
        if (!w->sn.be[i].rail_bandwidth)
            w->sn.be[i].rail_bandwidth = sr_rail_bw;
        size_t need = bfo_engine_mem_size(&c);
        w->mem_bytes = need;
        {
            bfo_config more = c;
            more.nranks++;
            w->mem_per_peer = bfo_engine_mem_size(&more) - need;
        }
        w->mem[i] = sc->mem_alloc ? sc->mem_alloc(sc->mem_ctx, need) : malloc(need);
        w->sn.eng[i] = &w->e[i];
        if (!w->mem[i] || bfo_engine_init(&w->e[i], &c, &w->sn.be[i], w->mem[i], need, w->sn.now))
            abort();
        if (sc->trace || sc->leave) {
            w->tctx[i].sn = &w->sn;
            w->tctx[i].rank = i;
            w->tctx[i].out = sc->trace;
            w->tctx[i].w = w;
            w->tracer[i].fn = sc->leave ? sr_watch : sr_trace;
            w->tracer[i].user = &w->tctx[i];
            w->e[i].trace = &w->tracer[i];
        }
    }
    if (sc->seq_start) /* both ends of every pair, as if that many had gone before */
        for (int i = 0; i < sc->ranks; i++)
            for (int p = 0; p < sc->ranks; p++) {
                w->e[i].peers[p].send_seq = sc->seq_start - 1;
                w->e[i].peers[p].recv_seq = sc->seq_start;
            }
    if (sc->start_ns)
        sr_advance(w, sc->start_ns);
    for (int i = 0; i < w->nmsgs; i++) {
        const sr_msg *m = &w->msg[i];
        w->sbuf[i] = (uint8_t *)malloc(m->size + 1);
        w->rbuf[i] = (uint8_t *)calloc(1, m->size + 1);
        if (!w->sbuf[i] || !w->rbuf[i])
            abort();
        for (size_t k = 0; k < m->size; k++)
            w->sbuf[i][k] = sr_pattern(i, k);
        if (sc->data)
            sr_describe(w, i);
    }
    w->post_at = w->sn.now;
    for (int i = 0; i < w->nmsgs; i++)
        if (!w->msg[i].late && !w->msg[i].probe)
            sr_post_recv(w, i);
    for (int i = 0; i < w->nmsgs; i++) {
        const sr_msg *m = &w->msg[i];
        bfo_envelope env;
        env.peer = m->dst;
        env.ctx = m->ctx;
        env.src = sr_rank_in(m->ctx, m->src);
        env.tag = m->tag;
        env.flags = m->sync ? BFO_SEND_SYNC : 0;
        if (sc->data)
            bfo_isend_data_env(&w->e[m->src], &w->sreq[i], &w->sdata[i], &env, w->sn.now);
        else
            bfo_isend_env(&w->e[m->src], &w->sreq[i], w->sbuf[i], m->size, &env, w->sn.now);
        if (m->cancel == SR_CANCEL_SEND) {
            int rc = bfo_cancel(&w->e[m->src], &w->sreq[i], w->sn.now);
            w->send_cancelled[i] = rc == BFO_OK;
            w->cancelled += rc == BFO_OK;
            if (rc != BFO_OK && rc != BFO_ERR_TOO_LATE)
                w->cancel_errors++;
        }
    }
    return w;
}

/* sr_scenario.leave: the ranks leave, one leave_gap_ns after the other,
 * and each process ends once its BYEs are out (bfo_engine_left) or
 * SR_LEAVE_NS after it left. */
static inline void sr_leave(sr_world *w)
{
    const sr_scenario *sc = w->sc;
    const uint64_t t0 = w->sn.now;
    for (int i = 0; i < sc->ranks; i++)
        w->mapouts_at_leave += w->e[i].stats.mapouts;
    w->leave_from = t0;
    for (;;) {
        int ended = 0;
        for (int i = 0; i < sc->ranks; i++) {
            if (!w->left_at[i] && w->sn.now >= t0 + (uint64_t)i * sc->leave_gap_ns) {
                bfo_engine_leave(&w->e[i], w->sn.now);
                w->left_at[i] = w->sn.now;
            }
            if (w->left_at[i] && !w->exit_at[i] &&
                (bfo_engine_left(&w->e[i]) || w->sn.now >= w->left_at[i] + SR_LEAVE_NS)) {
                w->leave_timeouts += !bfo_engine_left(&w->e[i]);
                sn_rank_exits(&w->sn, i);
                w->exit_at[i] = w->sn.now;
            }
            ended += w->exit_at[i] != 0;
        }
        if (ended == sc->ranks)
            return;
        if (!sn_step(&w->sn))
            w->sn.now += 1000000; /* idle: 1 ms, for the gaps and the bound */
        sn_progress(&w->sn);
    }
}

/* Runs until every request is complete or the time limit, then settles:
 * 3 s of simulated time after the end and after the last fault
 * (completions, heartbeats, back-off, probing: so that both ends can agree
 * on the rails), then drains what is in flight without firing new timers;
 * again if a fault fired while draining.  Returns 1 if every request
 * completed within the limit. */
static inline int sr_go(sr_world *w)
{
    const sr_scenario *sc = w->sc;
    int done = sn_run(&w->sn, sr_all_done, w, sc->limit_ns ? sc->limit_ns : 30000000000ull);
    if (sc->leave)
        sr_leave(w);
    for (int round = 0; round < 10; round++) {
        sr_advance(w, 3000000000ull);
        if (w->sn.now < w->sn.last_fault_at + 3000000000ull)
            sr_advance(w, w->sn.last_fault_at + 3000000000ull - w->sn.now);
        uint64_t drain_from = w->sn.now;
        for (int k = 0; k < 100000 && sn_step(&w->sn); k++)
            ;
        if (w->sn.last_fault_at < drain_from)
            break;
    }
    return done;
}

/* sr_scenario.leave: what the judge adds (see the top). */
static inline void sr_judge_leave(sr_world *w, sr_result *res)
{
    const sr_scenario *sc = w->sc;
    uint64_t mapouts = 0;
    int fired = 0, given_up = 0;
    for (int f = 0; f < w->sn.nfaults; f++)
        fired += w->sn.faults[f].fired;
    for (int i = 0; i < sc->ranks; i++) {
        const bfo_engine *e = &w->e[i];
        mapouts += e->stats.mapouts;
        res->byes_sent += e->stats.byes_sent;
        res->byes_taken += e->stats.peers_left;
        for (int p = 0; p < sc->ranks; p++) {
            if (p == i)
                continue;
            given_up += e->peers[p].unreachable == BFO__GIVEN_UP;
            if (w->bye_at[(size_t)i * (size_t)sc->ranks + (size_t)p] && e->peers[p].unreachable == BFO__GIVEN_UP &&
                !w->left_failures++) {
                w->first_failure_rank = i;
                w->first_failure_peer = p;
            }
        }
        if (!w->exit_at[i])
            sr_note(res, "rank %d never ended after it left%.0d", i, 0);
    }
    res->leave_timeouts = w->leave_timeouts;
    res->left_failures = w->left_failures;
    if (w->left_failures)
        sr_note(res, "rank %d failed a rail of peer %d (or gave it up) after its BYE",
                w->first_failure_rank, w->first_failure_peer);
    if (!fired) { /* a clean end is clean */
        if (mapouts > w->mapouts_at_leave || given_up)
            sr_note(res, "no fault, yet %d map-outs and %d peers given up once ranks left",
                    (int)(mapouts - w->mapouts_at_leave), given_up);
        if (w->leave_timeouts)
            sr_note(res, "no fault, yet %d ranks' BYEs were not out within SR_LEAVE_NS%.0d",
                    (int)w->leave_timeouts, 0);
        if (!res->byes_taken)
            sr_note(res, "no fault, yet no BYE was taken (%d sent)%.0d", (int)res->byes_sent, 0);
    }
}

/* Judges a world after sr_go; fills *res.  Returns res->passed. */
static inline int sr_judge(sr_world *w, sr_result *res)
{
    const sr_scenario *sc = w->sc;
    memset(res, 0, sizeof *res);
    res->ops = w->sn.ops;
    res->kills = w->killed_at != 0;
    res->ops_to_done = w->ops_to_done;
    res->pending_reposts = w->pending_reposts;
    res->mem_bytes = w->mem_bytes;
    res->mem_per_peer = w->mem_per_peer;
    res->grown_bytes = w->grown_bytes;
    res->grow_calls = w->grow_calls;
    for (int i = 0; i < sc->ranks; i++)
        if (!sr_dead(w, i))
            res->failed_errors += w->e[i].stats.failed_errors;
    for (int i = 0; i < w->nmsgs; i++) {
        const sr_msg *m = &w->msg[i];
        bfo_request *s = &w->sreq[i], *r = &w->rreq[i];
        if (sr_dead(w, m->dst)) { /* to the killed rank: its send tells */
            if (!bfo_test(s)) {
                res->hung++;
                sr_note(res, "message %d: its send to the killed rank never completed%.0d", i, 0);
            } else if (s->status == BFO_OK) {
                res->delivered++;
            } else if (s->status == BFO_ERR_PROC_FAILED) {
                res->errored++;
            } else {
                sr_note(res, "message %d: its send to the killed rank ended with %d", i, s->status);
            }
            continue;
        }
        if (sr_dead(w, m->src) && w->posted[i] == 1 && bfo_test(r) && r->status != BFO_OK) {
            /* from the killed rank: its receive tells */
            if (r->status == BFO_ERR_PROC_FAILED || (m->any && r->status == BFO_ERR_PROC_FAILED_PENDING))
                res->errored++;
            else
                sr_note(res, "message %d: its receive from the killed rank ended with %d", i, r->status);
            continue;
        }
        if (sr_dead(w, m->src) && (w->posted[i] != 1 || !bfo_test(r))) {
            res->hung++;
            sr_note(res, "message %d: its receive from the killed rank never completed%.0d", i, 0);
            continue;
        }
        if (sr_dead(w, m->src)) /* received: its bytes are judged below, its send is gone */
            s = r;
        if (!bfo_test(s) || w->posted[i] != 1 || !bfo_test(r)) {
            res->hung++;
            res->lost += bfo_test(s) && s->status == BFO_OK;
            sr_note(res, "message %d: a request never completed (send %d)", i, bfo_test(s));
            continue;
        }
        if (w->send_cancelled[i]) { /* judged by sr_drive_recv: both cancelled */
            if (s->status != BFO_ERR_CANCELLED || r->status != BFO_ERR_CANCELLED)
                sr_note(res, "message %d: cancelled, but the receive ended with %d", i, r->status);
            continue;
        }
        if (r->status == BFO_OK && s->status != BFO_ERR_PEER_UNREACHABLE && s->status != BFO_OK)
            sr_note(res, "message %d: send failed with %d", i, s->status);
        /* an ANY_SOURCE receive that no peer is left to match: PROC_FAILED
         * when one of the peers gone is the killed rank */
        const int any_gone = m->any && w->killed_at && r->status == BFO_ERR_PROC_FAILED;
        if (r->status == BFO_ERR_PEER_UNREACHABLE || s->status == BFO_ERR_PEER_UNREACHABLE || any_gone) {
            res->unreachable_errors += (r->status != BFO_OK) + (s->status != BFO_OK);
            /* allowed only when no rail to the peer is left */
            int left = 0;
            for (int k = 0; k < sc->rails; k++)
                left += !sn_rail_faulty(&w->sn, k);
            if (left)
                sr_note(res, "message %d: unreachable error with %d rail(s) up", i, left);
            if (r->status == BFO_ERR_PEER_UNREACHABLE || any_gone) {
                res->errored++; /* reported, not lost */
                continue;
            }
        }
        if (r->status != BFO_OK) {
            sr_note(res, "message %d: receive failed with %d", i, r->status);
            continue;
        }
        if (r->length != m->size || r->source != sr_rank_in(m->ctx, m->src) || r->peer != m->src ||
            r->tag != m->tag) {
            res->corrupt++;
            sr_note(res, "message %d: wrong length, source or tag (length %d)", i, (int)r->length);
            continue;
        }
        if (sc->data && w->rsegs[i]) { /* an iovec receive: its segments hold the bytes */
            bfo_data_pos p = { 0, 0 };
            bfo_data_read(&w->rdata[i], &p, 0, w->rbuf[i], m->size);
        }
        if (sc->data && (w->spack[i].bad || w->rpack[i].bad ||
                         (w->rsegs[i] && !sr_iov_gaps_intact(&w->rdata[i])) ||
                         (w->ssegs[i] && !sr_iov_gaps_intact(&w->sdata[i])))) {
            res->corrupt++;
            sr_note(res, "message %d: described data touched outside the message (%d)", i,
                    (int)(w->spack[i].bad + w->rpack[i].bad));
            continue;
        }
        size_t k = 0;
        while (k < m->size && w->rbuf[i][k] == sr_pattern(i, k))
            k++;
        if (k < m->size) {
            res->corrupt++;
            sr_note(res, "message %d: byte %d is wrong", i, (int)k);
            continue;
        }
        res->delivered++;
    }
    for (int i = 0; i < sc->ranks; i++) {
        bfo_engine *e = &w->e[i];
        if (sr_dead(w, i))
            continue; /* its process is gone: its pools with it */
        res->restarts += e->stats.restarts;
        res->mapouts += e->stats.mapouts;
        res->readmissions += e->stats.readmissions;
        res->relayed_frames += e->stats.relayed_frames;
        res->relay_passed += e->stats.relay_passed;
        res->relay_refused += e->stats.relay_refused;
        res->routes_found += e->stats.routes_found;
        res->routes_lost += e->stats.routes_lost;
        res->eagers += e->stats.eagers;
        res->copies += e->stats.copies;
        res->puts += e->stats.puts;
        res->gets += e->stats.gets;
        res->rdma_ops += e->stats.rdma_writes + e->stats.rdma_reads;
        for (int k = 0; k < BFO_MAX_RAILS; k++)
            res->rail_bytes[k] += e->stats.rail_bytes[k];
        if (e->uxm_in_use) { /* a message nobody will ever receive: a duplicate */
            res->duplicates += (uint64_t)e->uxm_in_use;
            sr_note(res, "rank %d: %d messages left unexpected (duplicates)", i, e->uxm_in_use);
        }
        if (bfo__stages_in_use(e) || e->stage_wait_head >= 0) {
            res->leaked += (uint64_t)bfo__stages_in_use(e);
            sr_note(res, "rank %d: %d staging buffers not back", i, bfo__stages_in_use(e));
        }
        if (e->ops_in_use || e->slots_in_use) {
            res->leaked += (uint64_t)(e->ops_in_use + e->slots_in_use);
            sr_note(res, "rank %d: %d pool entries not back", i, e->ops_in_use + e->slots_in_use);
            for (int k = 0, shown = 0; k < e->opp.live && shown < 3; k++) { /* which operations */
                const bfo_op *op = bfo__op_at(e, k);
                size_t n = strlen(res->why);
                int is_free = 0;
                for (int f = e->op_free; f >= 0 && !is_free; f = bfo__op_at(e, f)->next)
                    is_free = f == k;
                if (is_free || n + 64 > sizeof res->why)
                    continue;
                shown++;
                snprintf(res->why + n, sizeof res->why - n, "; op %s to %d, rail %d, posted %d",
                         op->type >= 0x100 ? "RDMA" : bfo_frag_name(op->type), op->peer, op->rail, op->posted);
            }
        }
        if (e->stats.protocol_violations)
            sr_note(res, "rank %d: %d protocol violations", i, (int)e->stats.protocol_violations);
        for (int p = 0; p < sc->ranks && !sc->leave; p++)
            for (int k = 0; p != i && !sr_dead(w, p) && k < sc->rails; k++) {
                /* working (UP or DEMOTED: each side demotes by what it
                 * measures of its own sending) or not */
                int a = bfo__live(e->peers[p].rail[k].fsm.cs);
                int b = bfo__live(w->e[p].peers[i].rail[k].fsm.cs);
                if (a != b && !sn_rail_faulty(&w->sn, k))
                    sr_note(res, "ranks %d and %d disagree on a rail", i, p);
            }
    }
    if (sc->leave)
        sr_judge_leave(w, res);
    if (sc->relay_strict && (res->errored || res->unreachable_errors))
        sr_note(res, "relay: %d messages ended with an error (%d requests), though a third rank "
                     "reaches both ends", (int)res->errored, (int)res->unreachable_errors);
    for (int i = 0; i < sc->ranks; i++) {
        res->credit_rndv += w->e[i].stats.credit_rndv;
        res->over_window += w->e[i].over_window;
    }
    if (res->over_window)
        sr_note(res, "%d frames found the receiver's budget spent: a peer went past its window%.0d",
                (int)res->over_window, 0);
    res->early_syncs = w->early_syncs;
    res->probe_errors = w->probe_errors;
    res->cancelled = w->cancelled;
    res->cancel_errors = w->cancel_errors;
    if (w->probe_errors)
        sr_note(res, "%d probes reported another source, tag or length, or a bad imrecv%.0d",
                (int)w->probe_errors, 0);
    if (w->cancel_errors)
        sr_note(res, "%d cancels went wrong (a cancelled message matched, or a bad status)%.0d",
                (int)w->cancel_errors, 0);
    if (w->early_syncs)
        sr_note(res, "%d synchronous sends completed before their receive matched (of %d)",
                (int)w->early_syncs, w->nmsgs);
    if (w->sn.rdma_violations)
        sr_note(res, "%d RDMA accesses outside registered memory (%d refused)",
                (int)w->sn.rdma_violations, (int)w->sn.rdma_refused);
    if (w->sn.regs_live) {
        res->leaked += w->sn.regs_live;
        sr_note(res, "%d memory registrations not released (of %d)", (int)w->sn.regs_live,
                (int)w->sn.nregs);
    }
    res->passed = res->why[0] == 0;
    return res->passed;
}

static inline void sr_del(sr_world *w)
{
    const sr_scenario *sc = w->sc;
    for (int i = 0; i < w->nmsgs; i++) {
        free(w->sbuf[i]);
        free(w->rbuf[i]);
        free(w->sback[i]);
        free(w->rback[i]);
        free(w->ssegs[i]);
        free(w->rsegs[i]);
    }
    for (int i = 0; i < sc->ranks; i++) {
        if (sc->mem_free && w->mem[i])
            sc->mem_free(sc->mem_ctx, w->mem[i], w->mem_bytes);
        else
            free(w->mem[i]);
    }
    while (w->grown) { /* after the engines: the chunks are theirs */
        void *next;
        memcpy(&next, w->grown, sizeof next);
        free(w->grown);
        w->grown = next;
    }
    sn_free(&w->sn);
    free(w->msg);
    free(w->open);
    free(w->e);
    free(w->mem);
    free(w->tctx);
    free(w->tracer);
    free(w->left_at);
    free(w->exit_at);
    free(w->bye_at);
    free(w->sreq);
    free(w->rreq);
    free(w->sbuf);
    free(w->rbuf);
    free(w->posted);
    free(w->early);
    free(w->claimed_at);
    free(w->cancel_tried);
    free(w->send_cancelled);
    free(w->sdata);
    free(w->rdata);
    free(w->ssegs);
    free(w->rsegs);
    free(w->sback);
    free(w->rback);
    free(w->spack);
    free(w->rpack);
    free(w);
}

/* Runs one scenario; fills *res.  Returns res->passed. */
static inline int sr_run(const sr_scenario *sc, sr_result *res)
{
    sr_world *w = sr_new(sc);
    sr_go(w);
    sr_judge(w, res);
    sr_del(w);
    return res->passed;
}

/* Protocols as `bfo sim --protocol` names them (sr_scenario.protocol). */
enum { SR_P_AUTO, SR_P_EAGER, SR_P_COPY, SR_P_PUT, SR_P_GET };

/* What a protocol means for a scenario (its messages already set). */
static inline void sr_set_protocol(sr_scenario *sc, int proto)
{
    sc->protocol = proto;
    sc->eager_limit = 0;
    sc->rdma = BFO_RDMA_AUTO;
    sc->rdma_min = 0;
    switch (proto) {
    case SR_P_EAGER: /* the largest message fits */
        sc->eager_limit = 1;
        for (int i = 0; i < sc->nmsgs && sc->exchange <= 0; i++)
            if (sc->msgs[i].size > sc->eager_limit)
                sc->eager_limit = sc->msgs[i].size;
        if (sc->exchange > 0 && sc->exchange_size > sc->eager_limit)
            sc->eager_limit = sc->exchange_size;
        break;
    case SR_P_COPY: sc->eager_limit = 1; sc->rdma = BFO_RDMA_OFF; break;
    case SR_P_PUT: sc->rdma = BFO_RDMA_PUT; sc->rdma_min = 1; break;
    case SR_P_GET: sc->rdma = BFO_RDMA_GET; sc->rdma_min = 1; break;
    default: break;
    }
}

/* The standard set (bfo sim --explore, tests/test_verbs_scenarios.c): each
 * protocol (eager, copy, PUT, GET, and automatic over rails of which only
 * some can RDMA), 1-3 rails, both directions, ANY_SOURCE.  Returns how
 * many it wrote (at most max; 14 in all). */
static inline int sr_standard_set(sr_scenario *out, int max)
{
    static const sr_msg eager_msgs[] = { { .src = 0, .dst = 1, .tag = 0, .any = 0, .size = 64 }, { .src = 1, .dst = 0, .tag = 1, .any = 0, .size = 1000 },
                                         { .src = 0, .dst = 1, .tag = 2, .any = 1, .size = 4096 }, { .src = 0, .dst = 1, .tag = 3, .any = 0, .size = 0 } };
    static const sr_msg rndv_msgs[] = { { .src = 0, .dst = 1, .tag = 0, .any = 0, .size = 100000 }, { .src = 1, .dst = 0, .tag = 1, .any = 1, .size = 9000 },
                                        { .src = 0, .dst = 1, .tag = 2, .any = 0, .size = 200 } };
    static const int protos[] = { SR_P_EAGER, SR_P_COPY, SR_P_PUT, SR_P_GET, SR_P_AUTO };
    int n = 0;
    for (int rails = 1; rails <= 3; rails++)
        for (int k = 0; k < 5; k++) {
            const int proto = protos[k];
            if (proto == SR_P_AUTO && rails == 1)
                continue; /* mixed rails need two */
            if (n == max)
                return n;
            sr_scenario *sc = &out[n++];
            memset(sc, 0, sizeof *sc);
            sc->ranks = 2;
            sc->rails = rails;
            if (proto == SR_P_EAGER) {
                sc->nmsgs = 4;
                memcpy(sc->msgs, eager_msgs, sizeof eager_msgs);
            } else {
                sc->nmsgs = 3;
                memcpy(sc->msgs, rndv_msgs, sizeof rndv_msgs);
            }
            sr_set_protocol(sc, proto);
            if (proto == SR_P_AUTO) /* rail 0 cannot RDMA; the others can */
                sc->plain_rails = 1;
            sc->seed = (uint64_t)(rails * 10 + k);
        }
    return n;
}

#endif /* BFO_SIMRUN_H */
