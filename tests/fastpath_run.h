// SPDX-License-Identifier: BSD-3-Clause
/* fastpath_run.h - the scenarios of tests/test_fastpath.c, compiled twice:
 * in test_fastpath.c with the engine's fast paths (docs/engine-design.md,
 * "Fast paths"), and in fastpath_slow.c with BFO_NO_FAST_PATH, where every
 * transition is the generated machine's step.  Each run records what can
 * be seen of it: every traced step (machine, request or rail, from, event,
 * to, result, actions), every frame posted (bytes, peer, rail), the final
 * state, status and envelope of every request, the bytes received, and
 * the engines' counters.  The two records must be the same, byte for byte.
 *
 * Two engines over the null transport (sim/bfo_nullnet.h), one rail.
 * Include after defining FP_RUN (the name of the run function) and, for
 * the slow copy, BFO_NO_FAST_PATH.
 */
#ifndef FASTPATH_RUN_H
#define FASTPATH_RUN_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bfo_engine.h"
#include "bfo_nullnet.h"

#define FP_NREQ 96
#define FP_NSTEPS 2048

enum fp_scenario {
    FP_POSTED_FIRST,   /* the receive is posted, then the send: the bench's exchange */
    FP_UNEXPECTED,     /* the send first: its MATCH waits unexpected, the receive takes it */
    FP_EMPTY,          /* zero bytes */
    FP_TRUNCATED,      /* 8 bytes into a buffer of 4: BFO_ERR_TRUNCATE */
    FP_WILDCARD,       /* BFO_ANY_SOURCE and BFO_ANY_TAG receives */
    FP_SELF,           /* to this rank itself */
    FP_FAILED_COMPLETIONS, /* every 3rd operation delivered but completed with an error */
    FP_LOST,           /* every 4th operation lost (completed with an error) */
    FP_RING_FULL,      /* more sends than the transport takes: posts refused */
    FP_DONE_QUEUE,     /* bfo_config.done_queue */
    FP_CREDITS,        /* a small window: eager sizes go by rendezvous past it */
    FP_SYNC_AND_CANCEL,/* a synchronous send, a cancelled receive, tags out of order */
    FP_UNTRACED,       /* FP_POSTED_FIRST with no trace hook */
    FP_NSCENARIOS
};

typedef struct fp_step {
    int machine, obj, from, event, to, result;
    unsigned n_actions;
    int actions[BFO_MAX_ACTIONS];
} fp_step;

typedef struct fp_req {
    int status, complete, cs, source, tag, peer;
    uint64_t length;
} fp_req;

typedef struct fp_log {
    int nsteps, overflow;
    fp_step steps[FP_NSTEPS];
    uint64_t frames, wire_hash;     /* frames posted; FNV-1a of their bytes, peers and rails */
    fp_req send[FP_NREQ], recv[FP_NREQ];
    uint8_t rbuf[FP_NREQ][16];
    bfo_stats stats[2];
    int ops_in_use[2], slots_in_use[2], posted_count[2], uxm_in_use[2];
    int done_order[2][2 * FP_NREQ]; /* bfo_done_pop: request numbers (sends 0.., receives 1000..) */
} fp_log;

typedef struct fp_world {
    bfo_engine e[2];
    nullnet nn;
    bfo_tracer tracer;
    bfo_request s[FP_NREQ], r[FP_NREQ];
    uint8_t sbuf[FP_NREQ][16], rbuf[FP_NREQ][16];
    void *mem[2];
    fp_log *log;
} fp_world;

#define FP_RBUF(w, i) ((void *)(w)->rbuf[i])

static fp_world *fp_w; /* the run under way (the trace hook and post_send find it here) */

static int fp_obj(const fp_world *w, const void *obj)
{
    for (int i = 0; i < FP_NREQ; i++) {
        if (obj == &w->s[i])
            return i;
        if (obj == &w->r[i])
            return 1000 + i;
    }
    for (int k = 0; k < 2; k++)
        for (int p = 0; p < 2; p++)
            for (int l = 0; l < w->e[k].cfg.nrails; l++)
                if (obj == &w->e[k].peers[p].rail[l])
                    return 2000 + 100 * k + 10 * p + l;
    return -1;
}

static void fp_on_step(void *user, const bfo_machine *m, const bfo_step *st)
{
    fp_world *w = (fp_world *)user;
    fp_log *log = w->log;
    fp_step *s;
    if (log->nsteps == FP_NSTEPS) {
        log->overflow = 1;
        return;
    }
    s = &log->steps[log->nsteps++];
    memset(s, 0, sizeof *s);
    s->machine = m->id;
    s->obj = fp_obj(w, st->obj);
    s->from = st->from;
    s->event = st->event;
    s->to = st->to;
    s->result = st->result;
    s->n_actions = st->n_actions;
    for (unsigned i = 0; i < st->n_actions && i < BFO_MAX_ACTIONS; i++)
        s->actions[i] = st->actions[i];
}

static void fp_hash(fp_log *log, const void *p, size_t n)
{
    const uint8_t *b = (const uint8_t *)p;
    for (size_t i = 0; i < n; i++) {
        log->wire_hash ^= b[i];
        log->wire_hash *= 1099511628211ull;
    }
}

/* nn_post, with every frame it takes recorded */
static int fp_post(void *ctx, int peer, int rail, const bfo_iov *iov, int iovcnt, uint64_t token)
{
    const struct nn_ep *ep = (const struct nn_ep *)ctx;
    int rc = nn_post(ctx, peer, rail, iov, iovcnt, token);
    if (rc == 0) {
        int head[3] = { ep->rank, peer, rail };
        fp_w->log->frames++;
        fp_hash(fp_w->log, head, sizeof head);
        for (int i = 0; i < iovcnt; i++)
            fp_hash(fp_w->log, iov[i].base, iov[i].len);
    }
    return rc;
}

static void fp_pump(fp_world *w)
{
    for (int i = 0; i < 64 && nn_pump(&w->nn); i++)
        ;
}

static int fp_setup(fp_world *w, int scenario, void *ring)
{
    nn_init(&w->nn, 1, 64, 256, ring);
    for (int i = 0; i < 2; i++) {
        bfo_config c = nn_config(&w->nn, i);
        c.max_requests = 256;
        c.done_queue = scenario == FP_DONE_QUEUE;
        c.unexpected_budget = scenario == FP_CREDITS ? 512 : 0;
        size_t need = bfo_engine_mem_size(&c);
        w->nn.be[i].post_send = fp_post;
        w->nn.eng[i] = &w->e[i];
        w->mem[i] = malloc(need);
        if (!w->mem[i] || bfo_engine_init(&w->e[i], &c, &w->nn.be[i], w->mem[i], need, w->nn.now) != BFO_OK)
            return -1;
        if (scenario != FP_UNTRACED)
            w->e[i].trace = &w->tracer;
    }
    w->tracer.fn = fp_on_step;
    w->tracer.user = w;
    while (nn_pump(&w->nn)) /* connect and probe */
        ;
    for (int i = 0; i < FP_NREQ; i++)
        for (int k = 0; k < 16; k++)
            w->sbuf[i][k] = (uint8_t)(i * 31 + k + 1);
    if (scenario == FP_FAILED_COMPLETIONS)
        w->nn.fail_every = 3;
    if (scenario == FP_LOST)
        w->nn.lose_every = 4;
    return 0;
}

static void fp_record(fp_world *w)
{
    fp_log *log = w->log;
    for (int i = 0; i < FP_NREQ; i++) {
        const bfo_request *q[2] = { &w->s[i], &w->r[i] };
        fp_req *out[2] = { &log->send[i], &log->recv[i] };
        for (int k = 0; k < 2; k++) {
            out[k]->status = q[k]->status;
            out[k]->complete = q[k]->complete;
            out[k]->cs = q[k]->cs;
            out[k]->source = q[k]->source;
            out[k]->tag = q[k]->tag;
            out[k]->peer = q[k]->peer;
            out[k]->length = q[k]->length;
        }
    }
    for (int k = 0; k < 2; k++) {
        bfo_request *d;
        int n = 0;
        log->stats[k] = w->e[k].stats;
        log->ops_in_use[k] = w->e[k].ops_in_use;
        log->slots_in_use[k] = w->e[k].slots_in_use;
        log->posted_count[k] = w->e[k].posted_count;
        log->uxm_in_use[k] = w->e[k].uxm_in_use;
        while ((d = bfo_done_pop(&w->e[k])) != NULL && n < 2 * FP_NREQ) {
            int id = fp_obj(w, d);
            log->done_order[k][n++] = id < 0 ? -1 : id + 1; /* 0: none */
        }
    }
}

/* One scenario, its record in *log (zeroed first).  0, or -1 when the
 * setup failed. */
static int FP_RUN(int scenario, fp_log *log)
{
    fp_world *w = (fp_world *)calloc(1, sizeof *w);
    void *ring = malloc(nn_mem_size(64, 256));
    int rc = 0;
    if (!w || !ring)
        return -1;
    memset(log, 0, sizeof *log);
    w->log = log;
    fp_w = w;
    for (int i = 0; i < FP_NREQ; i++) {
        w->s[i].cs = w->r[i].cs = -1;
        w->s[i].status = w->r[i].status = 12345;
    }
    if (fp_setup(w, scenario, ring) != 0) {
        rc = -1;
        goto out;
    }
    bfo_engine *e0 = &w->e[0], *e1 = &w->e[1];
    uint64_t now = w->nn.now;
    switch ((enum fp_scenario)scenario) {
    case FP_POSTED_FIRST:
    case FP_UNTRACED:
    case FP_DONE_QUEUE:
    case FP_FAILED_COMPLETIONS:
    case FP_LOST:
        for (int i = 0; i < 24; i++) {
            bfo_irecv(e1, &w->r[i], FP_RBUF(w, i), 8, 0, 0, i % 3, now);
            bfo_isend(e0, &w->s[i], w->sbuf[i], 8, 1, 0, i % 3, now);
            if (i % 4 == 3)
                fp_pump(w);
        }
        break;
    case FP_UNEXPECTED:
        for (int i = 0; i < 16; i++)
            bfo_isend(e0, &w->s[i], w->sbuf[i], 1 + i % 9, 1, 7, i, now);
        fp_pump(w);
        for (int i = 15; i >= 0; i--) /* in the other order: the tags pick */
            bfo_irecv(e1, &w->r[i], FP_RBUF(w, i), 16, 0, 7, i, now);
        break;
    case FP_EMPTY:
        for (int i = 0; i < 8; i++) {
            bfo_irecv(e1, &w->r[i], i % 2 ? FP_RBUF(w, i) : NULL, i % 2 ? 16 : 0, 0, 0, 5, now);
            bfo_isend(e0, &w->s[i], i % 3 ? w->sbuf[i] : NULL, 0, 1, 0, 5, now);
        }
        break;
    case FP_TRUNCATED:
        for (int i = 0; i < 8; i++) {
            bfo_irecv(e1, &w->r[i], FP_RBUF(w, i), 4, 0, 0, 2, now);
            bfo_isend(e0, &w->s[i], w->sbuf[i], 8, 1, 0, 2, now);
        }
        break;
    case FP_WILDCARD:
        for (int i = 0; i < 12; i++) {
            bfo_irecv(e1, &w->r[i], FP_RBUF(w, i), 16, i % 2 ? BFO_ANY_SOURCE : 0, 3,
                      i % 3 ? BFO_ANY_TAG : i, now);
            bfo_isend(e0, &w->s[i], w->sbuf[i], 12, 1, 3, i, now);
            bfo_isend(e0, &w->s[40 + i], w->sbuf[i], 3, 1, 3, 100 + i, now);
        }
        fp_pump(w);
        for (int i = 0; i < 12; i++)
            bfo_irecv(e1, &w->r[40 + i], FP_RBUF(w, 40 + i), 16, BFO_ANY_SOURCE, 3, BFO_ANY_TAG, now);
        break;
    case FP_SELF:
        for (int i = 0; i < 8; i++) {
            if (i % 2)
                bfo_irecv(e0, &w->r[i], FP_RBUF(w, i), 16, 0, 1, i, now);
            bfo_isend(e0, &w->s[i], w->sbuf[i], 8, 0, 1, i, now);
            if (!(i % 2))
                bfo_irecv(e0, &w->r[i], FP_RBUF(w, i), 16, 0, 1, i, now);
        }
        break;
    case FP_RING_FULL:
        for (int i = 0; i < 80; i++) {
            bfo_irecv(e1, &w->r[i], FP_RBUF(w, i), 8, 0, 0, 9, now);
            bfo_isend(e0, &w->s[i], w->sbuf[i], 8, 1, 0, 9, now);
        }
        break;
    case FP_CREDITS:
        for (int i = 0; i < 20; i++)
            bfo_isend(e0, &w->s[i], w->sbuf[i], 8, 1, 0, 4, now);
        fp_pump(w);
        for (int i = 0; i < 20; i++)
            bfo_irecv(e1, &w->r[i], FP_RBUF(w, i), 8, 0, 0, 4, now);
        fp_pump(w);
        for (int i = 20; i < 30; i++) {
            bfo_irecv(e1, &w->r[i], FP_RBUF(w, i), 8, 0, 0, 4, now);
            bfo_isend(e0, &w->s[i], w->sbuf[i], 8, 1, 0, 4, now);
        }
        break;
    case FP_SYNC_AND_CANCEL: {
        bfo_envelope env = { 1, 0, 0, 6, BFO_SEND_SYNC };
        bfo_irecv(e1, &w->r[0], FP_RBUF(w, 0), 8, 0, 0, 6, now);
        bfo_irecv(e1, &w->r[1], FP_RBUF(w, 1), 8, 0, 0, 99, now);
        bfo_isend_env(e0, &w->s[0], w->sbuf[0], 8, &env, now);
        bfo_cancel(e1, &w->r[1], now);
        bfo_irecv(e1, &w->r[2], FP_RBUF(w, 2), 8, 0, 0, 6, now);
        bfo_isend(e0, &w->s[1], w->sbuf[1], 8, 1, 0, 6, now);
        bfo_isend(e0, &w->s[2], w->sbuf[2], 8, 1, 0, 7, now);
        fp_pump(w);
        bfo_irecv(e1, &w->r[3], FP_RBUF(w, 3), 8, 0, 0, 7, now);
        break;
    }
    case FP_NSCENARIOS:
        break;
    }
    w->nn.fail_every = w->nn.lose_every = 0;
    for (int i = 0; i < 200; i++) { /* until nothing moves: failed ones are sent again */
        w->nn.now += 1000000;
        bfo_engine_progress(e0, w->nn.now);
        bfo_engine_progress(e1, w->nn.now);
        if (!nn_pump(&w->nn) && i > 4)
            break;
    }
    fp_record(w);
    memcpy(log->rbuf, w->rbuf, sizeof log->rbuf);
out:
    fp_w = NULL;
    free(w->mem[0]);
    free(w->mem[1]);
    free(ring);
    free(w);
    return rc;
}

#endif /* FASTPATH_RUN_H */
