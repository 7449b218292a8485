// SPDX-License-Identifier: BSD-3-Clause
/* test_verbs_scenarios.c - the engine's scenario set over the verbs backend's
 * own error handling, every fault a verbs event.  No device, no libibverbs.
 *
 * Between each engine and the simulated wire (sim/bfo_simnet.h, through
 * sn_hooks) sits the code bfo_verbs.c runs: bfo_verbs_glue.h (the queue
 * pairs' outstanding operations, completions, rail errors, flushes, frames,
 * async events, disconnect, and each queue pair's connection run by the
 * conn machine, spec/conn.rl, as for every transport) over a model of an
 * RC device: a queue pair per (peer, rail) with its receive queue and its
 * send queue (the wire's messages), connected by REQ, REP and RTU with
 * delays (the model carries out the machine's dial, hello, take, reply and
 * refuse).  A fault is what a device reports, passed through
 * bfo_verbs_map.h and the glue into the engine:
 *   - an error status on the n-th operation (send, RDMA write, RDMA read):
 *     not carried out, the device moves the queue pair to the error state
 *     and flushes (WR_FLUSH_ERR) the rest of its queue;
 *   - failed but arrived: the n-th operation is carried out and completes
 *     with RETRY_EXC_ERR (its acknowledgement was lost);
 *   - an error status on the receive of the n-th send: the frame is not
 *     delivered, the receiver's queue pair is in error, the sender sees
 *     REM_INV_REQ_ERR (a frame too long) or RETRY_EXC_ERR;
 *   - an async event when the n-th operation is posted, on the poster's
 *     side or the other: PORT_ERR (the port comes back 30 ms later),
 *     QP_FATAL, QP_REQ_ERR, QP_ACCESS_ERR, PATH_MIG_ERR, CQ_ERR,
 *     DEVICE_FATAL (rails 0 and 1 share a device: gone for good).
 * The judge is the simulator's (sim/bfo_simrun.h): every message delivered
 * exactly once with the right bytes, or BFO_ERR_PEER_UNREACHABLE only when
 * no rail to the peer is left, no request left waiting, every pool entry
 * back, both ends agreeing on the rails; and the glue's own: every
 * descriptor back, nothing completed twice, no completion from a queue
 * pair that is gone.
 * Then the connection manager's races, with the control messages' delays
 * chosen to hit them, and the attempt number's wrap-around.
 *
 * A failure prints the command that replays it:
 *   build/cc/test_verbs_scenarios SCENARIO WHAT N STATUS|EVENT OTHER
 * (VW_TRACE=1 in the environment traces every transition, the conn
 * machine's too).
 */
#include "bfo_test.h"
#include "bfo_simrun.h"
#include "bfo_verbs_glue.h"
#include "bfo_verbs_auth.h"

#define VW_RECV_DEPTH 2
#define VW_SQ_DEPTH 16
#define VW_NQ (SN_TEST_RANKS * BFO_MAX_RAILS)
#define VW_MAX_CTL 256
#define VW_PORT_DOWN_NS 30000000ull /* PORT_ERR: the port is back after 30 ms */
/* a host probe nobody answers ends in RETRY_EXC_ERR once the adapter's
 * retries ran out: bfo_verbs' defaults, (retry_cnt 6 + 1) x 67 ms */
#define VW_RETRY_NS 470000000ull

enum vw_what { VF_NONE = 0, VF_OP, VF_ARRIVED, VF_RECV, VF_ASYNC };
enum vw_ctl_kind { VC_REQ = 1, VC_REP, VC_RTU, VC_CLOSE };

/* One fault (see the top): at the n-th operation posted to the device. */
typedef struct vw_fault {
    int what;    /* enum vw_what */
    uint64_t n;
    int status;  /* VF_OP, VF_RECV: the work completion's status */
    int event;   /* VF_ASYNC: the ibv_event_type */
    int other;   /* VF_ASYNC: on the other side (not the poster's) */
} vw_fault;

/* What fired, over many runs (the coverage the tests ask for). */
typedef struct vw_cov {
    uint64_t op[22][4];  /* [status][kind]: VF_OP fired */
    uint64_t arrived[4]; /* [kind] */
    uint64_t recv[22];   /* [status] */
    uint64_t async[19];  /* [event] */
    uint64_t flushed, unflushed, unreachable, runs, failed, max_pumps, rnr, backpressure;
    uint64_t hp_ok, hp_failed; /* host probes completed, by outcome */
} vw_cov;

typedef struct vw_op {   /* the device's view of a descriptor */
    bfo_iov iov[2];
    int iovcnt;
    void *local;
    size_t len;
    uint64_t raddr;
    uint32_t key;
    uint64_t inc;        /* the queue pair it was posted on */
    int fault;           /* enum vw_what armed on it */
    int status;          /* VF_OP / VF_RECV status */
    int fail_status;     /* why it was not carried out (arrive) */
    int done;            /* completed by the device (twice is a bug) */
} vw_op;

typedef struct vw_hwqp { /* the device's queue pair of a (peer, rail) */
    uint64_t inc;        /* this queue pair (0: none) */
    uint64_t partner;    /* the peer's queue pair it is connected to */
    int err;             /* in the error state */
    int rq[VW_RECV_DEPTH], rq_head, rq_n; /* posted receives, in order */
    int ctl;             /* its control connection is open (from the dial or the
                          * take until the RTU) */
    uint64_t ctl_at;     /* its control connection: when the last message lands */
    /* its host probe (a zero-byte RDMA WRITE, bfo_vg_keepalive): the device
     * carries it out without the peer's process, in order behind what was
     * posted before it (sn order below hp_order) */
    int hp_live, hp_retrying; /* retrying: nobody answered; RETRY_EXC_ERR at hp_at */
    uint64_t hp_inc, hp_order, hp_at;
} vw_hwqp;

typedef struct vw_ctl {
    int live, kind, from, to, rail;
    uint32_t gen;
    uint64_t from_inc, to_inc, at;
} vw_ctl;

struct vworld;

typedef struct vw_rank {
    struct vworld *w;
    int rank;
    bfo_vg g;
    void *gmem;
    uint8_t *rbuf;
    vw_op *ops;
    vw_hwqp hw[VW_NQ];
    uint64_t sink_calls; /* completions, frames, rail events passed up */
    uint64_t connects;   /* connect() calls by the engine */
    uint64_t port_back_at[BFO_MAX_RAILS]; /* PORT_ERR: when PORT_ACTIVE comes */
    bfo_tracer tracer;   /* VW_TRACE: the conn machine's steps */
    int frozen;          /* its process computes: no progress, no engine call; its
                          * device still answers (receives, RDMA, host probes) */
    uint64_t host_heard; /* host_heard calls passed up */
    uint64_t hp_ok, hp_failed; /* its host probes completed, by outcome */
} vw_rank;

typedef struct vworld {
    sr_world *sw;
    simnet *sn;
    int n, nrails;
    vw_rank r[SN_TEST_RANKS];
    sn_hooks hooks;
    vw_fault f;
    int fired, recv_armed, async_pending, async_rank, async_qi;
    uint64_t next_inc, rng;
    vw_ctl ctl[VW_MAX_CTL];
    uint64_t ctl_delay[5]; /* per kind; 0: 20-100 us at random */
    size_t frame;
    uint8_t *kinds; /* when set: the kind of each operation of the run, by number */
    uint64_t violations, pumps, max_pumps, refused, ties; /* ties: REQs refused because both dialed */
    char why[160];
    vw_cov *cov;
} vworld;

static uint64_t vw_rand(vworld *w)
{
    w->rng ^= w->rng << 13;
    w->rng ^= w->rng >> 7;
    w->rng ^= w->rng << 17;
    return w->rng;
}

static void vw_violation(vworld *w, const char *what, int a, int b)
{
    if (!w->violations++)
        snprintf(w->why, sizeof w->why, "%s (%d, %d)", what, a, b);
}

static int rails_of_device(const vworld *w, int rail)
{
    /* rails 0 and 1 share device 0 (ports 1 and 2); rail 2 is device 1 */
    unsigned m = 0;
    for (int r = 0; r < w->nrails; r++)
        if ((r < 2) == (rail < 2))
            m |= 1u << r;
    return (int)m;
}

static uint64_t tok(uint64_t inc, int i) { return inc << 24 | (uint64_t)i; }

/* ------------------------------------------------------------ the sink */

static void s_completion(void *ctx, uint64_t token, int ok)
{
    vw_rank *R = (vw_rank *)ctx;
    R->sink_calls++;
    bfo_engine_completion(&R->w->sw->e[R->rank], token, ok);
}

static int s_frame(void *ctx, int peer, int rail, const uint8_t *buf, size_t len, uint64_t now)
{
    vw_rank *R = (vw_rank *)ctx;
    int rc = bfo_engine_frame(&R->w->sw->e[R->rank], peer, rail, buf, len, now);
    R->sink_calls += rc != BFO_ERR_AGAIN; /* a frame offered again is no progress */
    return rc;
}

static void s_rail_event(void *ctx, int peer, int rail, int ev, uint64_t now)
{
    vw_rank *R = (vw_rank *)ctx;
    R->sink_calls++;
    bfo_engine_rail_event(&R->w->sw->e[R->rank], peer, rail, ev, now);
}

static void s_host_heard(void *ctx, int peer, int rail, uint64_t at)
{
    vw_rank *R = (vw_rank *)ctx;
    R->host_heard++;
    bfo_engine_host_heard(&R->w->sw->e[R->rank], peer, rail, at);
}

/* ---------------------------------------------------------- the device */

static void ctl_send(vworld *w, int kind, int from, int to, int rail, uint32_t gen,
                     uint64_t from_inc, uint64_t to_inc, uint64_t not_before)
{
    uint64_t d = w->ctl_delay[kind] ? w->ctl_delay[kind] : 20000 + vw_rand(w) % 80000;
    for (int k = 0; k < VW_MAX_CTL; k++)
        if (!w->ctl[k].live) {
            vw_ctl *c = &w->ctl[k];
            c->live = 1;
            c->kind = kind;
            c->from = from;
            c->to = to;
            c->rail = rail;
            c->gen = gen;
            c->from_inc = from_inc;
            c->to_inc = to_inc;
            c->at = w->sn->now + d > not_before ? w->sn->now + d : not_before;
            return;
        }
    vw_violation(w, "control messages overflow", kind, from);
}

/* Removes every message of (rank, qi) still on the wire and reports it
 * flushed, in order; with `report` 0, it reports none of them (a device
 * whose flush did not come back within bfo_verbs' bounded wait: the glue
 * fails what is left in posted on its own). */
static void flush_some(vworld *w, vw_rank *R, int qi, int report)
{
    const bfo_vg_qp *q = &R->g.qps[qi];
    uint64_t inc = R->hw[qi].inc;
    for (size_t k = 0; k < w->sn->qlen;) {
        sn_msg m = w->sn->q[k];
        if (m.src != R->rank || m.dst != q->peer || m.rail != q->rail || m.token >> 24 != inc) {
            k++;
            continue;
        }
        memmove(&w->sn->q[k], &w->sn->q[k + 1], (w->sn->qlen - k - 1) * sizeof *w->sn->q);
        w->sn->qlen--;
        free(m.data);
        int i = (int)(m.token & 0xffffff);
        if (R->ops[i].done++)
            vw_violation(w, "an operation completed twice", R->rank, i);
        if (!report) {
            w->cov->unflushed++;
            continue;
        }
        w->cov->flushed++;
        bfo_vg_op_wc(&R->g, qi, i, BFO_VWC_WR_FLUSH_ERR);
    }
    if (R->hw[qi].hp_live && R->hw[qi].hp_inc == inc) { /* the host probe, behind them */
        R->hw[qi].hp_live = 0;
        if (report)
            bfo_vg_probe_wc(&R->g, qi, BFO_VWC_WR_FLUSH_ERR);
    }
}

static void flush_sends(vworld *w, vw_rank *R, int qi) { flush_some(w, R, qi, 1); }

static void hw_flush(void *ctx, int qi)
{
    vw_rank *R = (vw_rank *)ctx;
    vworld *w = R->w;
    const bfo_vg_qp *q = &R->g.qps[qi];
    vw_hwqp *h = &R->hw[qi];
    if (h->ctl)
        ctl_send(w, VC_CLOSE, R->rank, q->peer, q->rail, (uint32_t)q->link.attempt, h->inc,
                 h->partner, h->ctl_at);
    h->ctl = 0;
    if (!h->inc)
        return;
    h->err = 1;
    flush_some(w, R, qi, vw_rand(w) % 4 != 0);
    while (h->rq_n > 0) {
        int b = h->rq[h->rq_head];
        h->rq_head = (h->rq_head + 1) % VW_RECV_DEPTH;
        h->rq_n--;
        bfo_vg_recv_wc(&R->g, qi, b, BFO_VWC_WR_FLUSH_ERR, 0);
    }
    h->inc = h->partner = 0;
    h->err = 0;
}

static int hw_post_recv(void *ctx, int qi, int b)
{
    vw_rank *R = (vw_rank *)ctx;
    vw_hwqp *h = &R->hw[qi];
    if (!h->inc || h->rq_n == VW_RECV_DEPTH)
        return -1;
    h->rq[(h->rq_head + h->rq_n) % VW_RECV_DEPTH] = b;
    h->rq_n++;
    return 0;
}

/* Arms the fault on an operation being posted (the n-th of the run). */
static void arm(vworld *w, vw_rank *R, int qi, int i, int kind)
{
    vw_op *op = &R->ops[i];
    uint64_t n = w->sn->ops + 1; /* sn_enqueue counts it next */
    op->fault = VF_NONE;
    if (w->fired)
        return;
    if (w->f.what == VF_RECV && (n == w->f.n || w->recv_armed)) {
        if (kind != BFO_VG_SEND) { /* the next send takes it */
            w->recv_armed = 1;
            return;
        }
        w->fired = 1;
        w->sn->last_fault_at = w->sn->now;
        op->fault = VF_RECV;
        op->status = w->f.status;
        w->cov->recv[w->f.status]++;
        return;
    }
    if (n != w->f.n)
        return;
    w->fired = 1;
    w->sn->last_fault_at = w->sn->now; /* the run settles after it (sr_go) */
    if (w->f.what == VF_OP) {
        op->fault = VF_OP;
        op->status = w->f.status;
        w->cov->op[w->f.status][kind]++;
    } else if (w->f.what == VF_ARRIVED) {
        op->fault = VF_ARRIVED;
        w->cov->arrived[kind]++;
    } else if (w->f.what == VF_ASYNC) {
        /* at the next pump, never inside the engine's call */
        const bfo_vg_qp *q = &R->g.qps[qi];
        w->async_pending = 1;
        w->async_rank = w->f.other ? q->peer : R->rank;
        w->async_qi = bfo_vg_qi(&R->g, w->f.other ? R->rank : q->peer, q->rail);
        w->cov->async[w->f.event]++;
    }
}

static int hw_post(void *ctx, int qi, int i)
{
    vw_rank *R = (vw_rank *)ctx;
    vworld *w = R->w;
    const bfo_vg_qp *q = &R->g.qps[qi];
    vw_op *op = &R->ops[i];
    int kind = R->g.ents[i].kind, rc;
    uint64_t t = tok(R->hw[qi].inc, i);
    arm(w, R, qi, i, kind);
    if (w->kinds && w->sn->ops + 1 < 4096)
        w->kinds[w->sn->ops + 1] = (uint8_t)kind;
    op->inc = R->hw[qi].inc;
    op->fail_status = 0;
    op->done = 0;
    if (kind == BFO_VG_SEND)
        rc = sn_post_send(&w->sn->ep[R->rank], q->peer, q->rail, op->iov, op->iovcnt, t);
    else if (kind == BFO_VG_WRITE)
        rc = sn_post_write(&w->sn->ep[R->rank], q->peer, q->rail, op->local, op->len, op->raddr,
                           op->key, t);
    else
        rc = sn_post_read(&w->sn->ep[R->rank], q->peer, q->rail, op->local, op->len, op->raddr,
                          op->key, t);
    if (rc != 0) {
        vw_violation(w, "RDMA posted on a rail that cannot", R->rank, q->rail);
        bfo_vg_broken(&R->g, qi, 0, "post refused");
        return -1;
    }
    return 0;
}

/* The glue's host probe: at most one on a queue pair's send queue. */
static int hw_host_probe(void *ctx, int qi)
{
    vw_rank *R = (vw_rank *)ctx;
    vworld *w = R->w;
    vw_hwqp *h = &R->hw[qi];
    if (!h->inc) {
        vw_violation(w, "a host probe without a queue pair", R->rank, qi);
        return -1;
    }
    if (h->hp_live) {
        vw_violation(w, "two host probes on one send queue", R->rank, qi);
        return 1;
    }
    h->hp_live = 1;
    h->hp_retrying = 0;
    h->hp_inc = h->inc;
    h->hp_order = w->sn->order; /* what the wire holds below it was posted before */
    h->hp_at = w->sn->now + 2000;
    return 0;
}

/* The device carries out host probes due: SUCCESS when the peer's queue
 * pair is there to acknowledge (whether its process runs or not), in order
 * behind the queue pair's earlier operations; RETRY_EXC_ERR when nobody
 * answers (the peer's queue pair in error or gone, a port down, a rail cut);
 * WR_FLUSH_ERR when the prober's queue pair is in error.  1 when any
 * completed. */
static int hp_step(vworld *w)
{
    int did = 0;
    for (int x = 0; x < w->n; x++) {
        vw_rank *S = &w->r[x];
        for (int qi = 0; qi < w->n * w->nrails; qi++) {
            vw_hwqp *sh = &S->hw[qi];
            const bfo_vg_qp *q = &S->g.qps[qi];
            int status = BFO_VWC_SUCCESS, blocked = 0;
            if (!sh->hp_live || w->sn->now < sh->hp_at)
                continue;
            if (sh->inc != sh->hp_inc) {
                vw_violation(w, "a host probe outlived its queue pair", x, qi);
                sh->hp_live = 0;
                continue;
            }
            for (size_t k = 0; k < w->sn->qlen && !blocked; k++) {
                const sn_msg *m = &w->sn->q[k];
                blocked = m->src == x && m->dst == q->peer && m->rail == q->rail &&
                          m->token >> 24 == sh->inc && m->order < sh->hp_order;
            }
            if (blocked)
                continue; /* RC: behind what was posted before it */
            if (sh->err) {
                status = BFO_VWC_WR_FLUSH_ERR;
            } else if (sh->hp_retrying) {
                status = BFO_VWC_RETRY_EXC_ERR;
            } else {
                const vw_rank *D = &w->r[q->peer];
                const vw_hwqp *dh = &D->hw[bfo_vg_qi(&D->g, x, q->rail)];
                if (!dh->inc || dh->err || dh->partner != sh->inc || !D->g.port_up[q->rail] ||
                    !S->g.port_up[q->rail] || D->g.rail_dead[q->rail] || S->g.rail_dead[q->rail] ||
                    w->sn->rail_down[q->rail] || w->sn->path[sn_link(w->sn, x, q->peer, q->rail)] != SN_PATH_OPEN ||
                    w->sn->path[sn_link(w->sn, q->peer, x, q->rail)] != SN_PATH_OPEN) {
                    sh->hp_retrying = 1; /* nobody answers: the adapter retries */
                    sh->hp_at = w->sn->now + VW_RETRY_NS;
                    continue;
                }
            }
            sh->hp_live = 0;
            if (status == BFO_VWC_SUCCESS)
                S->hp_ok++;
            else
                S->hp_failed++;
            S->g.now = w->sn->now;
            bfo_vg_probe_wc(&S->g, qi, status);
            if (status != BFO_VWC_SUCCESS) { /* RC: the queue pair is in error, the rest flushes */
                sh->err = 1;
                flush_sends(w, S, qi);
            }
            did = 1;
        }
    }
    return did;
}

static void hw_log(void *ctx, int level, const char *line)
{
    (void)ctx;
    (void)level;
    (void)line;
}

/* A message reaches its destination (simnet's arrive hook). */
static int vw_arrive(void *ctx, const sn_msg *m)
{
    vworld *w = (vworld *)ctx;
    vw_rank *S = &w->r[m->src], *D = &w->r[m->dst];
    int sqi = bfo_vg_qi(&S->g, m->dst, m->rail), dqi = bfo_vg_qi(&D->g, m->src, m->rail);
    int i = (int)(m->token & 0xffffff);
    vw_op *op = &S->ops[i];
    vw_hwqp *sh = &S->hw[sqi], *dh = &D->hw[dqi];
    if (sh->inc != m->token >> 24 || sh->err) { /* the sender's queue pair is in error: flushed */
        op->fail_status = BFO_VWC_WR_FLUSH_ERR;
        return BFO_ERR_PEER_UNREACHABLE;
    }
    if (op->fault == VF_OP) { /* not carried out; the status says why */
        op->fail_status = op->status;
        return BFO_ERR_PEER_UNREACHABLE;
    }
    if (!dh->inc || dh->err || dh->partner != sh->inc || !D->g.port_up[m->rail] ||
        !S->g.port_up[m->rail] || D->g.rail_dead[m->rail] || S->g.rail_dead[m->rail]) {
        op->fail_status = BFO_VWC_RETRY_EXC_ERR; /* nobody answers: retries run out */
        return BFO_ERR_PEER_UNREACHABLE;
    }
    if (m->op != SN_SEND)
        return BFO_OK; /* the RDMA access goes ahead */
    if (dh->rq_n == 0) {
        w->cov->rnr++;
        return BFO_ERR_AGAIN; /* receiver not ready: the frame waits, in order */
    }
    int b = dh->rq[dh->rq_head];
    dh->rq_head = (dh->rq_head + 1) % VW_RECV_DEPTH;
    dh->rq_n--;
    if (op->fault == VF_RECV) {
        /* the receive fails: nothing delivered, the receiver's queue pair
         * is in error (its own queue flushed), the sender hears so */
        bfo_vg_recv_wc(&D->g, dqi, b, op->status, 0);
        dh->err = 1;
        flush_sends(w, D, dqi);
        op->fail_status = op->status == BFO_VWC_LOC_LEN_ERR ? BFO_VWC_REM_INV_REQ_ERR
                                                             : BFO_VWC_RETRY_EXC_ERR;
        return BFO_ERR_PEER_UNREACHABLE;
    }
    if (m->len > D->g.qps[dqi].rstride) {
        vw_violation(w, "a frame larger than a receive buffer", (int)m->len, (int)D->g.qps[dqi].rstride);
        return BFO_ERR_PEER_UNREACHABLE;
    }
    memcpy(D->g.qps[dqi].rbuf + (size_t)b * D->g.qps[dqi].rstride, m->data, m->len);
    bfo_vg_recv_wc(&D->g, dqi, b, BFO_VWC_SUCCESS, (uint32_t)m->len);
    return BFO_OK;
}

/* An operation's completion at its sender (simnet's completion hook). */
static void vw_completion(void *ctx, const sn_msg *m, int ok)
{
    vworld *w = (vworld *)ctx;
    vw_rank *S = &w->r[m->src];
    int qi = bfo_vg_qi(&S->g, m->dst, m->rail), i = (int)(m->token & 0xffffff), status;
    vw_op *op = &S->ops[i];
    if (S->hw[qi].inc != m->token >> 24 || i >= S->g.nents) {
        vw_violation(w, "a completion from a queue pair that is gone", m->src, i);
        return;
    }
    if (op->done++)
        vw_violation(w, "an operation completed twice", m->src, i);
    if (op->fault == VF_ARRIVED && ok)
        status = BFO_VWC_RETRY_EXC_ERR; /* carried out; the acknowledgement was lost */
    else if (ok)
        status = BFO_VWC_SUCCESS;
    else
        status = op->fail_status ? op->fail_status : BFO_VWC_RETRY_EXC_ERR;
    S->g.now = w->sn->now; /* polled now */
    bfo_vg_op_wc(&S->g, qi, i, status);
    if (status != BFO_VWC_SUCCESS) { /* RC: the queue pair is in error, the rest flushes */
        S->hw[qi].err = 1;
        flush_sends(w, S, qi);
    }
}

/* ------------------------------------------------- the connection manager */

/* A new queue pair on the device for qi, its receives posted, its control
 * connection open. */
static void cm_qp(vworld *w, vw_rank *R, int qi, uint64_t partner)
{
    vw_hwqp *h = &R->hw[qi];
    memset(h, 0, sizeof *h);
    h->inc = ++w->next_inc;
    h->partner = partner;
    h->ctl = 1;
    R->g.qps[qi].hw = 1;
    if (bfo_vg_post_receives(&R->g, qi) != 0)
        vw_violation(w, "receives refused", R->rank, qi);
}

/* The device's part of the conn machine's actions (bfo_vg_hw.conn), as
 * bfo_verbs.c carries them out: the dial (a queue pair, its receives; the
 * control connection is made at once), the REQ, the take of a REQ (a queue
 * pair connected to the dialer's), the REP, a refused REQ closed. */
static int hw_conn(void *ctx, int qi, int action, void *arg)
{
    vw_rank *R = (vw_rank *)ctx;
    vworld *w = R->w;
    const bfo_vg_qp *q = &R->g.qps[qi];
    vw_hwqp *h = &R->hw[qi];
    const vw_ctl *c = (const vw_ctl *)arg; /* take, send_reply, refuse: the REQ */
    switch (action) {
    case BFO_CONN_ACT_DIAL:
        cm_qp(w, R, qi, 0);
        return BFO_CONN_EV_DIAL_CONNECTED;
    case BFO_CONN_ACT_SEND_HELLO:
        ctl_send(w, VC_REQ, R->rank, q->peer, q->rail, (uint32_t)q->link.attempt, h->inc, 0, 0);
        h->ctl_at = 0;
        for (int k = 0; k < VW_MAX_CTL; k++) /* the CLOSE of this attempt lands after its REQ */
            if (w->ctl[k].live && w->ctl[k].from_inc == h->inc)
                h->ctl_at = w->ctl[k].at;
        return 0;
    case BFO_CONN_ACT_TAKE:
        cm_qp(w, R, qi, c->from_inc);
        return 0;
    case BFO_CONN_ACT_SEND_REPLY:
        ctl_send(w, VC_REP, R->rank, c->from, c->rail, c->gen, h->inc, c->from_inc, 0);
        h->ctl_at = 0;
        return 0;
    case BFO_CONN_ACT_REFUSE:
    case BFO_CONN_ACT_REFUSE_TIE: /* both dialed, this side's won: closed too (no "dialing you" here) */
        if (action == BFO_CONN_ACT_REFUSE)
            w->refused++;
        else
            w->ties++;
        ctl_send(w, VC_CLOSE, R->rank, c->from, c->rail, c->gen, 0, c->from_inc, 0);
        return 0;
    default:
        vw_violation(w, "a conn action that is not the device's", action, qi);
        return 0;
    }
}

static int wiring(const bfo_vg_qp *q)
{
    int cs = q->link.fsm.cs;
    return cs == BFO_CONN_ST_HELLO_SENT || cs == BFO_CONN_ST_REPLY_SENT ||
           cs == BFO_CONN_ST_REPLY_SENT_ASKED;
}

static void cm_deliver(vworld *w, vw_ctl *c)
{
    vw_rank *R = &w->r[c->to];
    int qi = bfo_vg_qi(&R->g, c->from, c->rail);
    bfo_vg_qp *q = &R->g.qps[qi];
    vw_hwqp *h = &R->hw[qi];
    switch (c->kind) {
    case VC_REQ:
        if (!bfo_vg_port_ok(&R->g, c->rail)) {
            w->refused++; /* no queue pair can answer it now */
            ctl_send(w, VC_CLOSE, c->to, c->from, c->rail, c->gen, 0, c->from_inc, 0);
            return;
        }
        if (bfo_vg_hello(&R->g, qi, c->gen, c) != BFO_OK)
            vw_violation(w, "a REQ the conn machine refused to take", c->to, qi);
        break;
    case VC_REP:
        if (q->link.fsm.cs != BFO_CONN_ST_HELLO_SENT || h->inc != c->to_inc ||
            (uint32_t)q->link.attempt != c->gen)
            return; /* a reply to an attempt given up */
        h->partner = c->from_inc;
        ctl_send(w, VC_RTU, c->to, c->from, c->rail, c->gen, h->inc, h->partner, 0);
        h->ctl = 0;
        bfo_vg_reply(&R->g, qi, 0);
        break;
    case VC_RTU:
        if ((q->link.fsm.cs != BFO_CONN_ST_REPLY_SENT && q->link.fsm.cs != BFO_CONN_ST_REPLY_SENT_ASKED) ||
            h->inc != c->to_inc || h->partner != c->from_inc)
            return;
        h->ctl = 0;
        bfo_vg_ready(&R->g, qi);
        break;
    case VC_CLOSE:
        if (wiring(q) && h->inc && (h->inc == c->to_inc || (c->from_inc && h->partner == c->from_inc)))
            bfo_vg_broken(&R->g, qi, 0, "control channel closed by the peer");
        break;
    default: break;
    }
}

/* An async event at rank x about queue pair qi (its rail for port and
 * device events), now. */
static void async_event(vworld *w, int x, int qi, int ev)
{
    vw_rank *R = &w->r[x];
    int rail = R->g.qps[qi].rail;
    unsigned rails = 0;
    w->sn->last_fault_at = w->sn->now;
    switch (ev) {
    case BFO_VEV_PORT_ERR:
        rails = 1u << rail;
        R->port_back_at[rail] = w->sn->now + VW_PORT_DOWN_NS;
        break;
    case BFO_VEV_DEVICE_FATAL:
        rails = (unsigned)rails_of_device(w, rail);
        for (int r = 0; r < w->nrails; r++)
            if ((rails >> r) & 1)
                w->sn->rail_down[r] = 1; /* for the judge: no rail left there, for good */
        break;
    default:
        rails = (unsigned)rails_of_device(w, rail);
        break;
    }
    /* the device moves what the event hits to the error state */
    for (int k = 0; k < w->n * w->nrails; k++) {
        const bfo_vg_qp *q = &R->g.qps[k];
        bfo_verbs_async_action a = bfo_verbs_map_async(ev);
        if (q->peer == R->rank)
            continue;
        if (((a.scope == BFO_VSCOPE_PORT || a.scope == BFO_VSCOPE_DEVICE) && ((rails >> q->rail) & 1)) ||
            ((a.scope == BFO_VSCOPE_QP || a.scope == BFO_VSCOPE_CQ) && k == qi))
            R->hw[k].err = R->hw[k].inc != 0;
    }
    bfo_vg_async(&R->g, ev, rails, qi);
}

/* The async event armed by the fault. */
static void apply_async(vworld *w)
{
    w->async_pending = 0;
    async_event(w, w->async_rank, w->async_qi, w->f.event);
}

/* The backend's progress on every rank: the device's events, the control
 * messages due, then what bfo_verbs_progress does.  1 when anything moved. */
static int vw_pump(void *ctx)
{
    vworld *w = (vworld *)ctx;
    uint64_t before = w->sn->ops, calls = 0;
    int did = 0;
    if (++w->pumps > w->max_pumps) { /* a backend that spins: judged, not waited for */
        if (w->pumps == w->max_pumps + 1)
            vw_violation(w, "the backend keeps busy forever", (int)w->max_pumps, 0);
        return 0;
    }
    if (w->async_pending) {
        apply_async(w);
        did = 1;
    }
    for (int x = 0; x < w->n; x++)
        for (int r = 0; r < w->nrails; r++)
            if (w->r[x].port_back_at[r] && w->sn->now >= w->r[x].port_back_at[r]) {
                w->r[x].port_back_at[r] = 0;
                w->sn->last_fault_at = w->sn->now;
                bfo_vg_async(&w->r[x].g, BFO_VEV_PORT_ACTIVE, 1u << r, -1);
                did = 1;
            }
    if (hp_step(w))
        did = 1;
    for (int k = 0; k < VW_MAX_CTL; k++)
        if (w->ctl[k].live && w->ctl[k].at <= w->sn->now &&
            !w->r[w->ctl[k].to].frozen) { /* read by its progress */
            vw_ctl c = w->ctl[k];
            w->ctl[k].live = 0;
            w->r[c.to].g.now = w->sn->now;
            cm_deliver(w, &c);
            did = 1;
        }
    for (int x = 0; x < w->n; x++) {
        vw_rank *R = &w->r[x];
        bfo_vg *g = &R->g;
        uint64_t c0 = R->sink_calls;
        if (R->frozen)
            continue; /* computing: nobody polls its device */
        g->now = w->sn->now;
        if (vw_rand(w) % 3) /* a receiver that is sometimes slow: its buffers fill (RNR) */
            bfo_vg_deliver(g);
        bfo_vg_settle(g);
        if (bfo_vg_keepalive(g))
            did = 1;
        bfo_vg_settle(g);
        bfo_vg_timeouts(g);
        bfo_vg_settle(g);
        if (bfo_vg_connects(g))
            did = 1;
        bfo_vg_settle(g);
        for (int qi = 0; qi < w->n * w->nrails; qi++)
            if (g->qps[qi].backlog.head >= 0)
                bfo_vg_kick(g, qi);
        bfo_vg_settle(g);
        calls += R->sink_calls - c0;
    }
    did = did || calls || w->sn->ops != before;
    if (did)
        w->sn->now += 1000; /* a progress call takes time, like a message */
    return did;
}

/* ------------------------------------------- the backend the engine calls */

static vw_rank *rk(void *ctx) { return (vw_rank *)ctx; }

static int b_post_send(void *ctx, int peer, int rail, const bfo_iov *iov, int iovcnt, uint64_t token)
{
    vw_rank *R = rk(ctx);
    int i = bfo_vg_alloc(&R->g, peer, rail, BFO_VG_SEND);
    size_t len = 0;
    if (i < 0 || iovcnt < 1 || iovcnt > 2)
        return -1;
    for (int k = 0; k < iovcnt; k++) {
        R->ops[i].iov[k] = iov[k];
        len += iov[k].len;
    }
    if (len > R->w->frame) { /* what bfo_verbs refuses */
        R->g.ents[i].next = R->g.ent_free;
        R->g.ent_free = i;
        return -1;
    }
    R->ops[i].iovcnt = iovcnt;
    R->g.ents[i].token = token;
    R->g.ents[i].probe = iov[0].len > 0 && *(const uint8_t *)iov[0].base == BFO_FRAG_PROBE;
    bfo_vg_post(&R->g, i);
    return 0;
}

static int b_post_rdma(vw_rank *R, int kind, int peer, int rail, void *local, size_t len,
                       uint64_t raddr, uint32_t key, uint64_t token)
{
    int i = bfo_vg_alloc(&R->g, peer, rail, kind);
    if (i < 0)
        return -1;
    R->ops[i].local = local;
    R->ops[i].len = len;
    R->ops[i].raddr = raddr;
    R->ops[i].key = key;
    R->g.ents[i].token = token;
    bfo_vg_post(&R->g, i);
    return 0;
}

static int b_post_write(void *ctx, int peer, int rail, const void *local, size_t len, uint64_t raddr,
                        uint32_t key, uint64_t token)
{
    return b_post_rdma(rk(ctx), BFO_VG_WRITE, peer, rail, (void *)(uintptr_t)local, len, raddr,
                       key, token);
}

static int b_post_read(void *ctx, int peer, int rail, void *local, size_t len, uint64_t raddr,
                       uint32_t key, uint64_t token)
{
    return b_post_rdma(rk(ctx), BFO_VG_READ, peer, rail, local, len, raddr, key, token);
}

static int b_reg_mem(void *ctx, void *buf, size_t len, unsigned access, uint64_t *raddr, uint32_t *keys,
                     uint64_t *handle)
{
    vw_rank *R = rk(ctx);
    return sn_reg_mem(&R->w->sn->ep[R->rank], buf, len, access, raddr, keys, handle);
}

static void b_dereg_mem(void *ctx, uint64_t handle)
{
    vw_rank *R = rk(ctx);
    sn_dereg_mem(&R->w->sn->ep[R->rank], handle);
}

static int b_connect(void *ctx, int peer, int rail)
{
    vw_rank *R = rk(ctx);
    if (peer < 0 || peer >= R->w->n || peer == R->rank || rail < 0 || rail >= R->w->nrails)
        return -1;
    R->connects++;
    return bfo_vg_connect(&R->g, peer, rail);
}

static void b_disconnect(void *ctx, int peer, int rail) { bfo_vg_disconnect(&rk(ctx)->g, peer, rail); }
static void b_part(void *ctx, int peer, int rail) { bfo_vg_part(&rk(ctx)->g, peer, rail); }

static unsigned b_caps(void *ctx, int rail)
{
    return (rk(ctx)->w->sn->rdma_mask >> rail) & 1 ? BFO_CAP_RDMA : 0;
}

static unsigned b_bw(void *ctx, int rail) { return rk(ctx)->w->sw->sc->rail_bw[rail]; }

/* Memory reused from run to run (thousands of runs: no mmap each time). */
typedef struct vw_arena {
    void *p;
    size_t len;
} vw_arena;
static vw_arena arenas[SN_TEST_RANKS][3];

static void *arena(vw_arena *a, size_t len)
{
    if (a->len < len) {
        free(a->p);
        a->p = malloc(len);
        a->len = len;
        if (!a->p)
            abort();
    }
    return a->p;
}

/* VW_TRACE: a conn machine's step, as sr_trace prints the engine's. */
static void vw_trace(void *user, const bfo_machine *m, const bfo_step *st)
{
    const vw_rank *R = (const vw_rank *)user;
    const bfo_vg_qp *q = (const bfo_vg_qp *)st->obj;
    fprintf(stderr, "%12.6f ms  rank %d  peer %d rail %d  %-4s %s -> %s  %s",
            (double)R->w->sn->now / 1e6, R->rank, q->peer, q->rail, m->name,
            bfo_fsm_state_name(m, st->from), bfo_fsm_state_name(m, st->to),
            bfo_conn_event_name(st->event));
    for (unsigned i = 0; i < st->n_actions; i++)
        fprintf(stderr, "%s%s", i ? ", " : " / ", m->action_names[st->actions[i]]);
    if (st->result != BFO_OK)
        fprintf(stderr, "  [%s]", bfo_errname(st->result));
    fputc('\n', stderr);
}

/* sr_scenario.attach: the model between the engines and the wire. */
static void vw_attach(sr_world *sw, void *arg)
{
    vworld *w = (vworld *)arg;
    const sr_scenario *sc = sw->sc;
    size_t eager = sc->eager_limit ? sc->eager_limit : 4096, frag = 65536;
    int nents = 4096; /* above the engine's max_ops: a post never finds none */
    w->sw = sw;
    w->sn = &sw->sn;
    w->n = sc->ranks;
    w->nrails = sc->rails;
    w->rng = sc->seed * 0x9e3779b97f4a7c15ull + 77;
    w->frame = BFO_MAX_HDR_SIZE + (eager > frag ? eager : frag);
    w->hooks.ctx = w;
    w->hooks.arrive = vw_arrive;
    w->hooks.completion = vw_completion;
    w->hooks.pump = vw_pump;
    w->sn->hooks = &w->hooks;
    w->sn->transport_heard = 0; /* a verbs rail reports no acknowledgements (bfo_verbs.h) */
    for (int x = 0; x < w->n; x++) {
        vw_rank *R = &w->r[x];
        bfo_sink sink = { R, s_completion, s_frame, s_rail_event, NULL, NULL, s_host_heard, NULL, NULL, NULL };
        bfo_vg_hw hw = { R, hw_flush, hw_post, hw_post_recv, hw_log, hw_conn, hw_host_probe, NULL };
        bfo_backend *be = &sw->sn.be[x];
        R->w = w;
        R->rank = x;
        R->gmem = arena(&arenas[x][0], bfo_vg_mem_size(w->n, w->nrails, nents, VW_RECV_DEPTH));
        R->rbuf = (uint8_t *)arena(&arenas[x][1], (size_t)(w->n * w->nrails) * VW_RECV_DEPTH * w->frame);
        R->ops = (vw_op *)arena(&arenas[x][2], (size_t)nents * sizeof *R->ops);
        bfo_vg_init(&R->g, R->gmem, x, w->n, w->nrails, nents, VW_RECV_DEPTH, VW_SQ_DEPTH, &sink, &hw);
        R->g.lb.timeout_ns = 200000000ull;
        /* host probes as bfo_verbs.c sets them: four per probe timeout, at most 10 ms apart */
        R->g.ka_ns = (sc->cfg && sc->cfg->probe_timeout_ns ? sc->cfg->probe_timeout_ns
                                                           : 40000000ull) / 4;
        if (R->g.ka_ns > 10000000ull || R->g.ka_ns == 0)
            R->g.ka_ns = 10000000ull;
        if (sc->trace) {
            R->tracer.fn = vw_trace;
            R->tracer.user = R;
            R->g.lb.trace = &R->tracer;
        }
        for (int qi = 0; qi < w->n * w->nrails; qi++) {
            R->g.qps[qi].rbuf = R->rbuf + (size_t)qi * VW_RECV_DEPTH * w->frame;
            R->g.qps[qi].rstride = w->frame;
        }
        memset(be, 0, sizeof *be);
        be->ctx = R;
        be->post_send = b_post_send;
        be->post_write = b_post_write;
        be->post_read = b_post_read;
        be->reg_mem = b_reg_mem;
        be->dereg_mem = b_dereg_mem;
        be->connect = b_connect;
        be->disconnect = b_disconnect;
        be->part = b_part;
        be->rail_caps = b_caps;
        be->rail_bandwidth = b_bw;
    }
}

static vworld *vw_new(const vw_fault *f, vw_cov *cov)
{
    vworld *w = (vworld *)calloc(1, sizeof *w);
    if (!w)
        abort();
    if (f)
        w->f = *f;
    w->cov = cov;
    w->max_pumps = 50000; /* a run takes a few thousand at most */
    return w;
}

static void vw_free(vworld *w) { free(w); }

/* The glue's own checks after a run: every descriptor back, no receive
 * buffer lost. */
static void vw_judge(vworld *w)
{
    for (int x = 0; x < w->n; x++) {
        const bfo_vg *g = &w->r[x].g;
        int free_ents = 0;
        for (int k = g->ent_free; k >= 0 && free_ents <= g->nents; k = g->ents[k].next)
            free_ents++;
        if (free_ents != g->nents)
            vw_violation(w, "descriptors not back", x, g->nents - free_ents);
        for (int qi = 0; qi < w->n * w->nrails; qi++) {
            const bfo_vg_qp *q = &g->qps[qi];
            if (q->peer != x && q->nrfree + q->rposted + q->rx_n != g->recv_depth)
                vw_violation(w, "receive buffers lost", x, qi);
        }
    }
}

/* Runs one scenario with one fault; 1 when it passed (why says otherwise). */
static int vw_run(const sr_scenario *base, const vw_fault *f, vw_cov *cov, sr_result *res,
                  char *why, size_t whylen, uint64_t *busy_ops, uint8_t *kinds)
{
    sr_scenario sc = *base;
    vworld *w = vw_new(f, cov);
    sc.attach = vw_attach;
    sc.attach_arg = w;
    w->kinds = kinds;
    if (getenv("VW_TRACE")) /* with a replay: every transition */
        sc.trace = stderr;
    sc.connect_at_init = 1; /* the verbs glue is judged on rails connected at init, as before issue 37 */
    sr_world *sw = sr_new(&sc);
    if (busy_ops)
        *busy_ops = 0;
    if (busy_ops && sn_run(&sw->sn, sr_all_done, sw, 30000000000ull))
        *busy_ops = sw->sn.ops; /* operations until every request completed */
    sr_go(sw);
    sr_judge(sw, res);
    vw_judge(w);
    cov->runs++;
    for (int x = 0; x < w->n; x++) {
        for (int r = 0; r < w->nrails; r++)
            cov->backpressure += w->r[x].g.st[r].backpressure;
        cov->hp_ok += w->r[x].hp_ok;
        cov->hp_failed += w->r[x].hp_failed;
    }
    if (w->pumps > cov->max_pumps)
        cov->max_pumps = w->pumps;
    cov->unreachable += res->unreachable_errors > 0;
    if (!res->passed)
        snprintf(why, whylen, "%s", res->why);
    else if (w->violations)
        snprintf(why, whylen, "%s", w->why);
    int ok = res->passed && !w->violations;
    cov->failed += !ok;
    sr_del(sw);
    vw_free(w);
    return ok;
}

/* ------------------------------------------------------------ the tests */

static sr_scenario set[16];
static int nset;
static uint64_t set_ops[16];     /* operations each posts without a fault */
static uint64_t set_busy[16];    /* ... until every request completed */
static uint8_t set_kinds[16][4096]; /* the kind of each operation (bfo_vg_kind) */

/* The operations a fault is tried at: from the first (the connections'
 * probes) until the messages are done, and the probes just after. */
static uint64_t last_op(int s) { return set_busy[s] + 8 < set_ops[s] ? set_busy[s] + 8 : set_ops[s]; }

static const char *const what_names[] = { "none", "error status", "failed but arrived",
                                          "receive error", "async event" };
static const char *const kind_names[] = { "?", "send", "RDMA write", "RDMA read" };

static void report_failure(int s, const vw_fault *f, const char *why)
{
    print_message("FAILED: scenario %d (%d rails, protocol %d, seed %llu), %s %s at op %llu "
                  "(a %s%s): %s\n",
                  s, set[s].rails, set[s].protocol, (unsigned long long)set[s].seed,
                  what_names[f->what],
                  f->what == VF_ASYNC ? bfo_verbs_event_name(f->event)
                  : f->what == VF_ARRIVED ? "" : bfo_verbs_wc_name(f->status),
                  (unsigned long long)f->n, kind_names[set_kinds[s][f->n] & 3],
                  f->what == VF_ASYNC ? (f->other ? ", the other side" : ", the poster's side") : "",
                  why);
    print_message("  replay: build/cc/test_verbs_scenarios %d %d %llu %d %d\n", s, f->what,
                  (unsigned long long)f->n, f->what == VF_ASYNC ? f->event : f->status, f->other);
}

static int setup_set(void **state)
{
    vw_cov cov;
    (void)state;
    memset(&cov, 0, sizeof cov);
    nset = sr_standard_set(set, 16);
    for (int s = 0; s < nset; s++) {
        sr_result r;
        char why[256];
        if (!vw_run(&set[s], NULL, &cov, &r, why, sizeof why, &set_busy[s], set_kinds[s])) {
            print_message("clean scenario %d fails: %s\n", s, why);
            return -1;
        }
        set_ops[s] = r.ops;
    }
    return 0;
}

/* Runs one fault over scenario s; counts and shows a failure. */
static void try_fault(int s, const vw_fault *f, vw_cov *cov, int *failures)
{
    sr_result r;
    char why[256];
    if (*failures >= 10)
        return; /* enough to go on (a failing run takes its full time limit) */
    if (!vw_run(&set[s], f, cov, &r, why, sizeof why, NULL, NULL) && (*failures)++ < 10)
        report_failure(s, f, why);
}

static void summary(const vw_cov *cov)
{
    print_message("   %llu runs over %d scenarios, %llu with the unreachable error; operations "
                  "flushed %llu, not flushed in time %llu; receiver not ready %llu, frames the "
                  "engine held back %llu; host probes answered %llu, failed %llu; at most %llu "
                  "progress calls in a run\n",
                  (unsigned long long)cov->runs, nset, (unsigned long long)cov->unreachable,
                  (unsigned long long)cov->flushed, (unsigned long long)cov->unflushed,
                  (unsigned long long)cov->rnr, (unsigned long long)cov->backpressure,
                  (unsigned long long)cov->hp_ok, (unsigned long long)cov->hp_failed,
                  (unsigned long long)cov->max_pumps);
}

/* Every error status: on a send, two at each send (a different pair at each
 * operation and scenario: all 21 meet sends across the set); on an RDMA
 * write or read (fewer), all 21 at each. */
static void test_every_error_status_on_a_send_write_or_read_at_every_operation(void **state)
{
    vw_cov cov;
    int failures = 0;
    (void)state;
    memset(&cov, 0, sizeof cov);
    for (int s = 0; s < nset; s++)
        for (uint64_t op = 1; op <= last_op(s); op++) {
            int rdma = set_kinds[s][op] != BFO_VG_SEND;
            for (int v = 0; v < (rdma ? 21 : 2); v++) {
                vw_fault f;
                memset(&f, 0, sizeof f);
                f.what = VF_OP;
                f.n = op;
                f.status = 1 + (int)((op * 5 + (uint64_t)s * 3 + (uint64_t)v * 11) % 21);
                try_fault(s, &f, &cov, &failures);
            }
        }
    summary(&cov);
    assert_int_equal(failures, 0);
    for (int st = 1; st <= 21; st++)
        for (int k = BFO_VG_SEND; k <= BFO_VG_READ; k++)
            if (!cov.op[st][k])
                fail_msg("%s never hit a %s", bfo_verbs_wc_name(st), kind_names[k]);
    assert_true(cov.flushed > 0);
    assert_true(cov.unflushed > 0);
}

static void test_every_error_status_on_a_receive_at_every_send(void **state)
{
    vw_cov cov;
    int failures = 0;
    (void)state;
    memset(&cov, 0, sizeof cov);
    for (int s = 0; s < nset; s++)
        for (uint64_t op = 1; op <= last_op(s); op++) {
            vw_fault f;
            if (set_kinds[s][op] != BFO_VG_SEND)
                continue;
            memset(&f, 0, sizeof f);
            f.what = VF_RECV;
            f.n = op;
            f.status = 1 + (int)((op * 5 + (uint64_t)s * 3) % 21);
            try_fault(s, &f, &cov, &failures);
        }
    summary(&cov);
    assert_int_equal(failures, 0);
    for (int st = 1; st <= 21; st++)
        if (!cov.recv[st])
            fail_msg("%s never hit a receive", bfo_verbs_wc_name(st));
}

static void test_failed_but_arrived_at_every_operation_is_delivered_once(void **state)
{
    vw_cov cov;
    int failures = 0;
    (void)state;
    memset(&cov, 0, sizeof cov);
    for (int s = 0; s < nset; s++)
        for (uint64_t op = 1; op <= last_op(s); op++) {
            vw_fault f;
            memset(&f, 0, sizeof f);
            f.what = VF_ARRIVED;
            f.n = op;
            try_fault(s, &f, &cov, &failures);
        }
    summary(&cov);
    assert_int_equal(failures, 0);
    for (int k = BFO_VG_SEND; k <= BFO_VG_READ; k++)
        if (!cov.arrived[k])
            fail_msg("no %s failed but arrived", kind_names[k]);
}

/* Each event at each operation, on the poster's side and on the other. */
static void test_async_events_mid_message_on_either_side(void **state)
{
    static const int events[] = { BFO_VEV_PORT_ERR, BFO_VEV_QP_FATAL, BFO_VEV_CQ_ERR,
                                  BFO_VEV_DEVICE_FATAL, BFO_VEV_QP_REQ_ERR, BFO_VEV_QP_ACCESS_ERR,
                                  BFO_VEV_PATH_MIG_ERR };
    const int nev = (int)(sizeof events / sizeof events[0]);
    vw_cov cov;
    int failures = 0;
    (void)state;
    memset(&cov, 0, sizeof cov);
    for (int s = 0; s < nset; s++)
        for (uint64_t op = 1; op <= last_op(s); op++)
            for (int v = 0; v < 2; v++) {
                vw_fault f;
                memset(&f, 0, sizeof f);
                f.what = VF_ASYNC;
                f.n = op;
                f.event = events[(op + (uint64_t)s + (uint64_t)v * 3) % (uint64_t)nev];
                f.other = v;
                try_fault(s, &f, &cov, &failures);
            }
    summary(&cov);
    assert_int_equal(failures, 0);
    for (int k = 0; k < nev; k++)
        if (!cov.async[events[k]])
            fail_msg("%s never fired", bfo_verbs_event_name(events[k]));
    assert_true(cov.unreachable > 0); /* a device gone with every rail to the peer */
}


/* ------------------------------------------------- the connection races
 *
 * Two ranks, one rail, no messages: the rail comes up, then the dialer's
 * queue pair fails (QP_FATAL at rank 0).  Rank 0 reconnects after its
 * back-off (10 ms) and dials; rank 1 takes the REQ, which replaces its old
 * queue pair (RAIL_ERROR: its engine reconnects after its own back-off)
 * and answers; rank 0 is up at the REP and probes.  The control messages
 * are held or let go to put rank 1's connect() where each race needs it.
 * The rail must come back with one attempt on each side. */

typedef struct race {
    vworld *w;
    sr_world *sw;
    vw_cov cov;
    uint64_t c0[2], ok0[2], fail0[2], err0[2];
} race;

static int rail_up(const race *x, int rank)
{
    return x->sw->e[rank].peers[1 - rank].rail[0].fsm.cs == BFO_RAIL_ST_UP;
}

/* Steps the world (0.1 ms idle steps) until cond or limit; 1 when cond. */
static int race_run(race *x, int (*cond)(race *), uint64_t limit_ns)
{
    uint64_t end = x->w->sn->now + limit_ns;
    while (!(cond && cond(x))) {
        if (x->w->sn->now >= end)
            return 0;
        if (!sn_step(x->w->sn))
            x->w->sn->now += 100000;
        for (int i = 0; i < 2; i++)
            bfo_engine_progress(&x->sw->e[i], x->w->sn->now);
    }
    return 1;
}

static int both_up(race *x) { return rail_up(x, 0) && rail_up(x, 1); }
static int rank1_connects(race *x) { return x->w->r[1].connects > x->c0[1]; }

static vw_ctl *held(race *x, int kind)
{
    for (int k = 0; k < VW_MAX_CTL; k++)
        if (x->w->ctl[k].live && x->w->ctl[k].kind == kind)
            return &x->w->ctl[k];
    return NULL;
}

static int req_sent(race *x) { return held(x, VC_REQ) != NULL; }

static void race_start(race *x)
{
    sr_scenario sc;
    memset(x, 0, sizeof *x);
    memset(&sc, 0, sizeof sc);
    sc.ranks = 2;
    sc.rails = 1;
    sc.seed = 5;
    x->w = vw_new(NULL, &x->cov);
    sc.attach = vw_attach;
    sc.attach_arg = x->w;
    sc.connect_at_init = 1; /* the verbs glue is judged on rails connected at init, as before issue 37 */
    x->sw = sr_new(&sc);
    assert_true(race_run(x, both_up, 1000000000ull));
    race_run(x, NULL, 1000000); /* what follows admission (the CREDITs) delivered: idle */
    for (int i = 0; i < 2; i++) {
        x->c0[i] = x->w->r[i].connects;
        x->ok0[i] = x->w->r[i].g.st[0].connects;
        x->fail0[i] = x->w->r[i].g.st[0].connect_failures;
        x->err0[i] = x->w->r[i].g.st[0].qp_errors;
    }
}

/* The rail is back on both sides within limit, with one connect() and one
 * new connection each, nothing refused or torn down on the way. */
static void race_check(race *x, const char *what)
{
    uint64_t t0 = x->w->sn->now;
    int up = race_run(x, both_up, 2000000000ull);
    print_message("   %s: rail %s after %.3f ms; connect() calls %llu and %llu, new "
                  "connections %llu and %llu, connects failed %llu and %llu\n",
                  what, up ? "back" : "NOT back", (double)(x->w->sn->now - t0) / 1e6,
                  (unsigned long long)(x->w->r[0].connects - x->c0[0]),
                  (unsigned long long)(x->w->r[1].connects - x->c0[1]),
                  (unsigned long long)(x->w->r[0].g.st[0].connects - x->ok0[0]),
                  (unsigned long long)(x->w->r[1].g.st[0].connects - x->ok0[1]),
                  (unsigned long long)(x->w->r[0].g.st[0].connect_failures - x->fail0[0]),
                  (unsigned long long)(x->w->r[1].g.st[0].connect_failures - x->fail0[1]));
    assert_true(up);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(x->w->r[i].connects - x->c0[i], 1);
        assert_int_equal(x->w->r[i].g.st[0].connects - x->ok0[i], 1);
        assert_int_equal(x->w->r[i].g.st[0].connect_failures - x->fail0[i], 0);
    }
    /* one queue pair lost on each side: the one QP_FATAL hit, the one it replaced */
    assert_int_equal(x->w->r[0].g.st[0].qp_errors - x->err0[0], 1);
    assert_int_equal(x->w->r[1].g.st[0].qp_errors - x->err0[1], 1);
    assert_int_equal(x->w->violations, 0);
}

static void race_end(race *x)
{
    sr_del(x->sw);
    vw_free(x->w);
}

/* Rank 1's connect() comes while its new queue pair waits for the RTU: the
 * connection being wired answers it (it used to be closed: rank 0, up
 * already, lost its probe and reconnected after a probe timeout). */
static void test_acceptor_connect_while_waiting_for_the_rtu_keeps_the_new_queue_pair(void **state)
{
    race x;
    (void)state;
    race_start(&x);
    x.w->ctl_delay[VC_RTU] = 10000000000ull; /* held until let go below */
    async_event(x.w, 0, bfo_vg_qi(&x.w->r[0].g, 1, 0), BFO_VEV_QP_FATAL);
    assert_true(race_run(&x, rank1_connects, 1000000000ull));
    assert_int_equal(x.w->r[1].g.qps[0].link.fsm.cs, BFO_CONN_ST_REPLY_SENT); /* the window */
    race_run(&x, NULL, 1000000); /* its connect() handled */
    assert_int_equal(x.w->r[1].g.qps[0].link.connect_req, 0);
    assert_int_equal(x.w->r[1].g.qps[0].link.fsm.cs, BFO_CONN_ST_REPLY_SENT_ASKED);
    assert_non_null(held(&x, VC_RTU));
    held(&x, VC_RTU)->at = x.w->sn->now;
    x.w->ctl_delay[VC_RTU] = 0;
    race_check(&x, "connect() while waiting for the RTU");
    race_end(&x);
}

/* Rank 1's connect() is called, and before its progress handles it the
 * RTU arrives: the new connection answers the request (it used to be
 * closed as one the engine had been told about). */
static void test_pending_connect_is_answered_by_the_connection_that_comes_up(void **state)
{
    race x;
    (void)state;
    race_start(&x);
    x.w->ctl_delay[VC_RTU] = 10000000000ull;
    async_event(x.w, 0, bfo_vg_qi(&x.w->r[0].g, 1, 0), BFO_VEV_QP_FATAL);
    assert_true(race_run(&x, rank1_connects, 1000000000ull));
    assert_int_equal(x.w->r[1].g.qps[0].link.connect_req, 1); /* not handled yet */
    assert_non_null(held(&x, VC_RTU));
    held(&x, VC_RTU)->at = x.w->sn->now; /* the next progress reads it first */
    x.w->ctl_delay[VC_RTU] = 0;
    race_check(&x, "connect() pending when the RTU comes");
    race_end(&x);
}

/* Rank 0's first REQ is slow (it gives the attempt up after the connect
 * timeout and dials again); the second is accepted, the rail comes up, and
 * then the first arrives: it is refused as stale, the connection stays (it
 * used to replace it, and both sides started over).  `last`: the attempt
 * number both sides are at when the rail fails. */
static void stale_req(uint64_t last)
{
    race x;
    vw_ctl *req;
    uint64_t qp_err;
    race_start(&x);
    if (last) {
        for (int r = 0; r < 2; r++) { /* both sides dialed and took up to `last` */
            bfo_link *l = &x.w->r[r].g.qps[bfo_vg_qi(&x.w->r[r].g, 1 - r, 0)].link;
            l->attempt = l->dialed = l->taken = last;
        }
    }
    async_event(x.w, 0, bfo_vg_qi(&x.w->r[0].g, 1, 0), BFO_VEV_QP_FATAL);
    assert_true(race_run(&x, req_sent, 1000000000ull));
    req = held(&x, VC_REQ);
    req->at = x.w->sn->now + 500000000ull; /* read 0.5 s later, behind the next attempt */
    x.w->r[0].hw[bfo_vg_qi(&x.w->r[0].g, 1, 0)].ctl_at = req->at;
    assert_true(race_run(&x, both_up, 1000000000ull));
    qp_err = x.w->r[1].g.st[0].qp_errors;
    assert_int_equal(x.w->refused, 0);
    race_run(&x, NULL, 600000000ull); /* the stale REQ arrives */
    print_message("   a stale REQ: %llu refused; rank 1 lost %llu queue pair(s) after it; "
                  "rail %s\n",
                  (unsigned long long)x.w->refused,
                  (unsigned long long)(x.w->r[1].g.st[0].qp_errors - qp_err),
                  both_up(&x) ? "up on both sides" : "DOWN");
    assert_int_equal(x.w->refused, 1);
    assert_int_equal(x.w->r[1].g.st[0].qp_errors, qp_err);
    assert_true(both_up(&x));
    assert_int_equal(x.w->r[1].g.st[0].connects - x.ok0[1], 1);
    assert_int_equal(x.w->violations, 0);
    if (last) /* two dials since; the acceptor took the second */
        assert_true(x.w->r[1].g.qps[bfo_vg_qi(&x.w->r[1].g, 0, 0)].link.attempt == last + 2);
    race_end(&x);
}

static void test_stale_req_read_after_a_newer_one_is_refused(void **state)
{
    (void)state;
    stale_req(0);
}

/* A REQ carries the low 32 bits of the attempt number: across the wrap
 * (0xffffffff, then 0 and 1 on the wire) a newer REQ is still taken and
 * the stale one still refused; and the widening itself. */
static void test_attempt_numbers_wrap_around_32_bits(void **state)
{
    bfo_vg_qp q;
    (void)state;
    memset(&q, 0, sizeof q);
    assert_true(bfo_vg_attempt(&q, 1) == 1);
    assert_true(bfo_vg_attempt(&q, 0) == 0);          /* not above 0: stale */
    assert_true(bfo_vg_attempt(&q, 0x80000001u) == 0); /* far behind: stale, no underflow */
    q.link.taken = 0xffffffffull; /* widened against the last REQ taken */
    assert_true(bfo_vg_attempt(&q, 0) == 0x100000000ull);
    assert_true(bfo_vg_attempt(&q, 1) == 0x100000001ull);
    assert_true(bfo_vg_attempt(&q, 0xfffffffeu) == 0xfffffffeull);
    q.link.taken = 0x100000001ull;
    assert_true(bfo_vg_attempt(&q, 0) == 0x100000000ull);           /* stale */
    assert_true(bfo_vg_attempt(&q, 0xffffffffu) == 0xffffffffull); /* stale */
    assert_true(bfo_vg_attempt(&q, 2) == 0x100000002ull);
    stale_req(0xffffffffull);
}

/* ------------------------------------- what the engine hears, one link */

typedef struct ev_log {
    int ev[16], n, flushes, refused;
} ev_log;

static void el_completion(void *ctx, uint64_t token, int ok)
{
    (void)ctx;
    (void)token;
    (void)ok;
}
static int el_frame(void *ctx, int peer, int rail, const uint8_t *buf, size_t len, uint64_t now)
{
    (void)ctx, (void)peer, (void)rail, (void)buf, (void)len, (void)now;
    return BFO_OK;
}
static void el_rail_event(void *ctx, int peer, int rail, int ev, uint64_t now)
{
    ev_log *L = (ev_log *)ctx;
    (void)peer, (void)rail, (void)now;
    if (L->n < 16)
        L->ev[L->n++] = ev;
}
static void el_flush(void *ctx, int qi)
{
    (void)qi;
    ((ev_log *)ctx)->flushes++;
}
static void el_flush_quiet(void *ctx, int qi)
{
    (void)ctx, (void)qi;
}
static int el_post(void *ctx, int qi, int i)
{
    (void)ctx, (void)qi, (void)i;
    return 0;
}
static int el_post_recv(void *ctx, int qi, int b)
{
    (void)ctx, (void)qi, (void)b;
    return 0;
}
static int el_conn(void *ctx, int qi, int action, void *arg)
{
    (void)qi, (void)arg;
    if (action == BFO_CONN_ACT_REFUSE)
        ((ev_log *)ctx)->refused++;
    return 0;
}

/* The acceptor (rank 1) with its connection up gets a newer REQ (the
 * dialer gave the connection up).  When its engine has not asked for a new
 * one, it hears RAIL_ERROR (its rail is UP: it maps it out), then CONNECTED
 * at the RTU.  When its engine asked (connect(), not fed yet: the rail is
 * RECONNECTING, e.g. after a probe timeout in PROBING, which does not call
 * disconnect()), the old connection closes in silence and the engine hears
 * only CONNECTED: a RAIL_ERROR would have pushed the reconnecting rail to
 * FAILED, another back-off and a retry counted (spec/rail.rl), as the verbs
 * backend did before it ran the conn machine. */
static void test_a_newer_req_while_connect_is_pending_replaces_the_connection_silently(void **state)
{
    static uint8_t mem[1 << 16];
    static uint8_t rbuf[2 * 64];
    ev_log L;
    bfo_vg g;
    bfo_sink sink = { &L, el_completion, el_frame, el_rail_event, NULL, NULL, NULL, NULL, NULL, NULL };
    bfo_vg_hw hw = { &L, el_flush, el_post, el_post_recv, NULL, el_conn, NULL, NULL };
    int qi;
    (void)state;
    memset(&L, 0, sizeof L);
    assert_true(bfo_vg_mem_size(2, 1, 8, 2) <= sizeof mem);
    bfo_vg_init(&g, mem, 1, 2, 1, 8, 2, 4, &sink, &hw);
    qi = bfo_vg_qi(&g, 0, 0);
    g.qps[qi].rbuf = rbuf;
    g.qps[qi].rstride = 64;
    /* up: REQ 1, RTU */
    assert_int_equal(bfo_vg_hello(&g, qi, 1, NULL), BFO_OK);
    g.qps[qi].hw = 1;
    assert_int_equal(bfo_vg_ready(&g, qi), BFO_OK);
    assert_int_equal(L.n, 1);
    assert_int_equal(L.ev[0], BFO_EV_CONNECTED);
    /* the engine asked; REQ 2 comes first */
    assert_int_equal(bfo_vg_connect(&g, 0, 0), 0);
    assert_int_equal(bfo_vg_hello(&g, qi, 2, NULL), BFO_OK);
    assert_int_equal(g.qps[qi].link.fsm.cs, BFO_CONN_ST_REPLY_SENT_ASKED);
    assert_int_equal(g.lb.asked, 0);
    assert_int_equal(L.n, 1); /* nothing heard */
    /* the request, fed first, closed the old queue pair and dialed; the
     * REQ of rank 0 (the lower rank) won the tie with that dial: it was
     * closed too, before any REQ of its own went out */
    assert_int_equal(L.flushes, 2);
    assert_true(bfo_link_is_dialer(&g.qps[qi].link) == 0);
    assert_int_equal(g.qps[qi].link.dialed, 1);
    assert_int_equal(g.st[0].qp_errors, 1);
    g.qps[qi].hw = 1;
    assert_int_equal(bfo_vg_ready(&g, qi), BFO_OK);
    assert_int_equal(L.n, 2);
    assert_int_equal(L.ev[1], BFO_EV_CONNECTED);
    /* not asked: REQ 3 replaces it, the engine hears RAIL_ERROR first */
    assert_int_equal(bfo_vg_hello(&g, qi, 3, NULL), BFO_OK);
    assert_int_equal(g.qps[qi].link.fsm.cs, BFO_CONN_ST_REPLY_SENT);
    assert_int_equal(L.n, 3);
    assert_int_equal(L.ev[2], BFO_EV_RAIL_ERROR);
    /* and REQ 2 again, read late: refused, nothing changes */
    assert_int_equal(bfo_vg_hello(&g, qi, 2, NULL), BFO_OK);
    assert_int_equal(L.refused, 1);
    assert_int_equal(g.qps[qi].link.fsm.cs, BFO_CONN_ST_REPLY_SENT);
    assert_int_equal(L.n, 3);
    assert_int_equal(g.lb.refused, 0); /* no event the machine would not take */
}


/* ------------------------------------------- shared receive queue, credit
 *
 * Rank 2 receives from a shared receive queue of SRQ_N buffers (the test
 * is its device: srq_pool holds the buffers posted to the queue), ranks 0
 * and 1 send to it keeping to the credit it grants (their side of the
 * credit is the test's, as the device side of a sender would be).  Rank
 * 0's frames are never taken by the engine (BFO_ERR_AGAIN: a flood its
 * engine cannot take, e.g. unexpected messages it has no room for). */

#define SRQ_N 8
typedef struct srq_bed {
    bfo_vg g;
    uint8_t mem[1 << 16];
    uint8_t rbuf[SRQ_N * 64];
    int pool[SRQ_N], npool;     /* buffers on the shared receive queue */
    int credit[2];              /* each sender's credit for rank 2 (-1: no limit) */
    int got[2];                 /* frames rank 2's engine took, per sender */
    int take0;                  /* frames of rank 0 the engine takes before it holds them */
    uint32_t imm_sent[8];       /* the immediate data of rank 2's own sends, in order */
    int nsent;
} srq_bed;

static int srq_frame(void *ctx, int peer, int rail, const uint8_t *buf, size_t len, uint64_t now)
{
    srq_bed *B = (srq_bed *)ctx;
    (void)rail, (void)buf, (void)len, (void)now;
    if (peer == 0 && B->take0 == 0)
        return BFO_ERR_AGAIN; /* the flood: held */
    if (peer == 0)
        B->take0--;
    B->got[peer]++;
    return BFO_OK;
}
static int srq_post_recv(void *ctx, int qi, int b)
{
    srq_bed *B = (srq_bed *)ctx;
    (void)qi;
    B->pool[B->npool++] = b;
    return 0;
}
static int srq_post(void *ctx, int qi, int i)
{
    srq_bed *B = (srq_bed *)ctx;
    (void)qi;
    if (B->nsent < 8)
        B->imm_sent[B->nsent++] = B->g.ents[i].imm;
    return 0;
}
static int srq_credit(void *ctx, int qi, uint32_t n)
{
    srq_bed *B = (srq_bed *)ctx;
    int peer = B->g.qps[qi].peer;
    if (B->credit[peer] >= 0)
        B->credit[peer] += (int)n; /* the credit message reaches the sender */
    return 0;
}
static void srq_rail_event(void *ctx, int peer, int rail, int ev, uint64_t now)
{
    (void)ctx, (void)peer, (void)rail, (void)ev, (void)now;
}
static int srq_conn(void *ctx, int qi, int action, void *arg)
{
    (void)ctx, (void)qi, (void)action, (void)arg;
    return 0;
}

/* share 0: no credit (the senders send while the queue has buffers, as
 * with rnr_retry 7 and no credit). */
static void srq_bed_init(srq_bed *B, int share)
{
    bfo_sink sink = { B, el_completion, srq_frame, srq_rail_event, NULL, NULL, NULL, NULL, NULL, NULL };
    bfo_vg_hw hw = { B, el_flush_quiet, srq_post, srq_post_recv, NULL, srq_conn, NULL, srq_credit };
    memset(B, 0, sizeof *B);
    assert_true(bfo_vg_mem_size(3, 1, 8, 2 * SRQ_N + 4) <= sizeof B->mem);
    bfo_vg_init(&B->g, B->mem, 2, 3, 1, 8, 2 * SRQ_N + 4, 4, &sink, &hw);
    bfo_vg_use_srq(&B->g, SRQ_N, share);
    for (int b = 0; b < SRQ_N; b++)
        B->pool[B->npool++] = b;
    for (int p = 0; p < 2; p++) {
        int qi = bfo_vg_qi(&B->g, p, 0);
        B->g.qps[qi].rbuf = B->rbuf;
        B->g.qps[qi].rstride = 64;
        assert_int_equal(bfo_vg_hello(&B->g, qi, 1, NULL), BFO_OK); /* the peer dials */
        B->g.qps[qi].hw = 1;
        bfo_vg_granted(&B->g, qi, 0); /* the peers grant rank 2 no limit */
        assert_int_equal(bfo_vg_ready(&B->g, qi), BFO_OK);
        B->credit[p] = share > 0 ? share : -1; /* rank 2's grant, as its REP said */
    }
}

/* Peer p sends one frame if its credit and the queue let it (a buffer of
 * the queue: its adapter would otherwise retry, receiver not ready).
 * Returns 1 when it went. */
static int srq_send(srq_bed *B, int p)
{
    int b;
    if (B->credit[p] == 0 || B->npool == 0)
        return 0;
    if (B->credit[p] > 0)
        B->credit[p]--;
    b = B->pool[--B->npool];
    B->rbuf[b * 64] = 0x7f; /* not a PROBEACK */
    bfo_vg_recv_wc_imm(&B->g, bfo_vg_qi(&B->g, p, 0), b, BFO_VWC_SUCCESS, 16, 1, 0);
    return 1;
}

/* Rank 2's progress: frames to the engine, credit given back, the credit
 * messages' completions. */
static void srq_progress(srq_bed *B)
{
    bfo_vg_deliver(&B->g);
    bfo_vg_credit(&B->g);
    for (int p = 0; p < 2; p++) {
        int qi = bfo_vg_qi(&B->g, p, 0);
        if (B->g.qps[qi].cm_out)
            bfo_vg_credit_wc(&B->g, qi, BFO_VWC_SUCCESS);
    }
    bfo_vg_settle(&B->g);
}

/* Rank 0 floods (its frames held by the engine for good), rank 1 sends 10
 * small frames meanwhile, rank 0 first in every round.  With a credit of
 * 2 per peer, rank 0 holds 2 of the 8 buffers and every frame of rank 1
 * gets through; without credit (the same code, share 0), rank 0 takes
 * every buffer in the first round and rank 1 gets nothing, for good:
 * what rnr_retry 7 alone would do. */
static void test_one_flooding_peer_cannot_starve_another_with_credit(void **state)
{
    static srq_bed B;
    (void)state;
    for (int share = 2; share >= 0; share -= 2) {
        int sent1 = 0;
        srq_bed_init(&B, share);
        for (int round = 0; round < 40; round++) {
            while (srq_send(&B, 0))
                ;
            if (sent1 < 10)
                sent1 += srq_send(&B, 1);
            srq_progress(&B);
        }
        if (share) {
            assert_int_equal(B.got[1], 10);
            assert_int_equal(B.npool, SRQ_N - 2); /* rank 0 holds its credit, no more */
            assert_int_equal(B.credit[0], 0);
            assert_true(B.g.credit_msgs >= 5); /* rank 2 sends nothing: credit messages */
            assert_int_equal(B.g.credit_late, 0);
        } else {
            assert_int_equal(B.got[1], 0);
            assert_int_equal(B.npool, 0);
        }
    }
}

/* The credit a receiver gives back rides on its own sends (their
 * immediate data), a sender stops at credit 0 and goes on when credit
 * comes, and a frame beyond the credit fails the queue pair. */
static void test_credit_is_used_given_back_and_enforced(void **state)
{
    static srq_bed B;
    int qi1, i;
    (void)state;
    srq_bed_init(&B, 2);
    qi1 = bfo_vg_qi(&B.g, 1, 0);
    /* rank 1 sends 2 frames; the engine takes them: rank 2 owes 2 */
    assert_int_equal(srq_send(&B, 1) + srq_send(&B, 1), 2);
    assert_int_equal(srq_send(&B, 1), 0); /* no credit */
    bfo_vg_deliver(&B.g);
    assert_int_equal(B.got[1], 2);
    assert_int_equal(B.g.qps[qi1].owed, 2);
    /* rank 2's own send carries them back (no credit message) */
    B.g.qps[qi1].credits = 1; /* rank 1 granted rank 2 one frame */
    i = bfo_vg_alloc(&B.g, 1, 0, BFO_VG_SEND);
    bfo_vg_post(&B.g, i);
    assert_int_equal(B.nsent, 1);
    assert_int_equal(B.imm_sent[0], 2);
    assert_int_equal(B.g.qps[qi1].owed, 0);
    assert_int_equal(B.g.qps[qi1].credits, 0);
    /* a second send waits for rank 1's credit, in order */
    i = bfo_vg_alloc(&B.g, 1, 0, BFO_VG_SEND);
    bfo_vg_post(&B.g, i);
    assert_int_equal(B.nsent, 1);
    assert_int_equal(B.g.qps[qi1].backlog.head, i);
    /* rank 1's credit message (zero bytes, immediate data CREDIT | 1): the
     * buffer goes straight back, the engine sees no frame */
    {
        int b = B.pool[--B.npool], before = B.got[1];
        bfo_vg_recv_wc_imm(&B.g, qi1, b, BFO_VWC_SUCCESS, 0, 1, BFO_VG_IMM_CREDIT | 1);
        assert_int_equal(B.npool, SRQ_N);
        bfo_vg_deliver(&B.g);
        assert_int_equal(B.got[1], before);
    }
    assert_int_equal(B.g.qps[qi1].credits, 1);
    bfo_vg_kick(&B.g, qi1);
    assert_int_equal(B.nsent, 2);
    /* rank 0 keeps its frames held and sends a third beyond its credit 2:
     * malformed, the queue pair fails at the next settle */
    B.credit[0] = 3;
    assert_int_equal(srq_send(&B, 0) + srq_send(&B, 0) + srq_send(&B, 0), 3);
    assert_int_equal(B.g.credit_late, 1);
    assert_true(B.g.qps[bfo_vg_qi(&B.g, 0, 0)].link.broken);
    assert_int_equal(B.npool, SRQ_N - 2); /* its buffer went back */
}

/* Rank 0 uses its whole credit (8); the engine takes 3 frames and holds
 * the other 5 (no buffer for them until the program receives, which may
 * wait for rank 0's next message): the 3 go back at once, though less than
 * half the credit, so that rank 0 is not left with none. */
static void test_credit_goes_back_below_half_while_frames_are_held(void **state)
{
    static srq_bed B;
    (void)state;
    srq_bed_init(&B, 8);
    for (int k = 0; k < 8; k++)
        assert_int_equal(srq_send(&B, 0), 1);
    assert_int_equal(B.credit[0], 0);
    B.take0 = 3;
    srq_progress(&B);
    assert_int_equal(B.got[0], 3);
    assert_int_equal(B.credit[0], 3);
    assert_int_equal(B.g.credit_msgs, 1);
    /* nothing held, 1 owed (< half): it waits for more to go with it */
    srq_bed_init(&B, 8);
    B.take0 = 1;
    assert_int_equal(srq_send(&B, 0), 1);
    srq_progress(&B);
    assert_int_equal(B.g.credit_msgs, 0);
    assert_int_equal(B.g.qps[bfo_vg_qi(&B.g, 0, 0)].owed, 1);
}

/* After a close, frames of the closed queue pair still go to the engine,
 * but give no credit back to the next connection (which starts from the
 * grant). */
static void test_frames_of_a_closed_queue_pair_give_no_credit_to_the_next(void **state)
{
    static srq_bed B;
    int qi0;
    (void)state;
    srq_bed_init(&B, 2);
    qi0 = bfo_vg_qi(&B.g, 0, 0);
    assert_int_equal(srq_send(&B, 0) + srq_send(&B, 0), 2); /* held by the engine */
    bfo_vg_broken(&B.g, qi0, 0, "test");
    bfo_vg_settle(&B.g); /* closed: 2 frames of the old connection wait */
    assert_int_equal(B.g.qps[qi0].rx_old, 2);
    assert_int_equal(B.g.qps[qi0].rx_n, 2);
    /* a new connection, then the engine takes everything */
    assert_int_equal(bfo_vg_hello(&B.g, qi0, 2, NULL), BFO_OK);
    B.g.qps[qi0].hw = 1;
    bfo_vg_granted(&B.g, qi0, 0);
    assert_int_equal(bfo_vg_ready(&B.g, qi0), BFO_OK);
    B.credit[0] = 2;
    assert_int_equal(srq_send(&B, 0) + srq_send(&B, 0), 2); /* the new one's full credit */
    assert_int_equal(B.g.credit_late, 0); /* 4 waiting, 2 of them old: within credit */
    B.g.sink.frame = el_frame; /* the engine takes them now */
    bfo_vg_deliver(&B.g);
    assert_int_equal(B.g.qps[qi0].rx_n, 0);
    assert_int_equal(B.g.qps[qi0].owed, 2); /* for the new connection's 2 only */
    assert_int_equal(B.npool, SRQ_N);
}

/* Teardown of a queue pair attached to the SRQ, as data: it waits for
 * LAST_WQE_REACHED; the event (before or after the close) lets it go at
 * once; without it, it goes after the limit, logged (TIMED_OUT); at the
 * backend's end, at once. */
static void test_srq_teardown_waits_for_last_wqe_reached(void **state)
{
    static const struct { int last_wqe; uint64_t waited; int force, want; } t[] = {
        { 0, 0, 0, BFO_VG_DRAIN_WAIT },
        { 0, 1999999999ull, 0, BFO_VG_DRAIN_WAIT },
        { 1, 0, 0, BFO_VG_DRAIN_NOW },
        { 1, 5000000000ull, 0, BFO_VG_DRAIN_NOW },
        { 0, 2000000000ull, 0, BFO_VG_DRAIN_TIMED_OUT },
        { 0, 0, 1, BFO_VG_DRAIN_NOW },
    };
    (void)state;
    for (size_t k = 0; k < sizeof t / sizeof t[0]; k++)
        assert_int_equal(bfo_vg_drain_decide(t[k].last_wqe, t[k].waited, 2000000000ull, t[k].force), t[k].want);
}

/* ------------------------------------------------ a peer that computes
 *
 * Two ranks, idle, every rail up; then rank 1's process computes: no
 * progress, no engine call, nobody polls its device, which still answers
 * (receives into posted buffers, RDMA, host probes).  Rank 0 runs on; its
 * PROBE waits, and its glue keeps hearing rank 1's host through host probes
 * (bfo_vg_keepalive): the engine counts rank 1 busy, not failed
 * (docs/engine-design.md, "The failure detector"). */

typedef struct busy {
    vworld *w;
    sr_world *sw;
    vw_cov cov;
} busy;

static int busy_up(const busy *x, int rank, int rail)
{
    return x->sw->e[rank].peers[1 - rank].rail[rail].fsm.cs == BFO_RAIL_ST_UP;
}

static int busy_all_up(const busy *x)
{
    for (int r = 0; r < x->w->nrails; r++)
        if (!busy_up(x, 0, r) || !busy_up(x, 1, r))
            return 0;
    return 1;
}

/* Steps the world for up to ns (idle steps of 0.5 ms) until cond; the
 * engines of the ranks that are not frozen progress.  1 when cond. */
static int busy_run(busy *x, uint64_t ns, int (*cond)(const busy *))
{
    simnet *sn = x->w->sn;
    uint64_t end = sn->now + ns;
    while (!(cond && cond(x))) {
        if (sn->now >= end)
            return 0;
        if (!sn_step(sn))
            sn->now += 500000;
        for (int i = 0; i < 2; i++)
            if (!x->w->r[i].frozen)
                bfo_engine_progress(&x->sw->e[i], sn->now);
    }
    return 1;
}

static void busy_start(busy *x, int nrails)
{
    sr_scenario sc;
    memset(x, 0, sizeof *x);
    memset(&sc, 0, sizeof sc);
    sc.ranks = 2;
    sc.rails = nrails;
    sc.seed = 7;
    x->w = vw_new(NULL, &x->cov);
    x->w->max_pumps = ~0ull; /* minutes of simulated time */
    sc.attach = vw_attach;
    sc.attach_arg = x->w;
    sc.connect_at_init = 1; /* the verbs glue is judged on rails connected at init, as before issue 37 */
    x->sw = sr_new(&sc);
    assert_true(busy_run(x, 1000000000ull, busy_all_up));
    /* the ranks wait on each other (work: heartbeats run; an idle peer is
     * not probed since issue 37); the requests are never freed */
    static bfo_request wait[2];
    static uint8_t b[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(bfo_irecv(&x->sw->e[i], &wait[i], &b[i], 1, 1 - i, 0, 999, x->sw->sn.now), BFO_OK);
    busy_run(x, 300000000ull, NULL); /* heartbeats answered */
    assert_true(busy_all_up(x));
}

/* Rank 1 starts computing at a quiet moment: the last heartbeats answered,
 * nothing on the wire.  (A frame of rank 1's that arrives after rank 0's
 * probe went out makes it "heard since the probe", not busy, in the
 * engine's judgement: that probe times out whatever its host says.) */
static void busy_freeze(busy *x)
{
    for (int k = 0; k < 100000; k++) {
        int quiet = x->w->sn->qlen == 0;
        for (int i = 0; i < 2 && quiet; i++)
            for (int r = 0; r < x->w->nrails && quiet; r++)
                quiet = !x->sw->e[i].peers[1 - i].rail[r].det.probe_out;
        if (quiet && k > 0)
            break;
        busy_run(x, 1000000, NULL);
    }
    x->w->r[1].frozen = 1;
}

static void busy_end(busy *x)
{
    sr_del(x->sw);
    vw_free(x->w);
}

static uint64_t busy_probes(const busy *x, int rank)
{
    uint64_t n = 0;
    for (int r = 0; r < x->w->nrails; r++)
        n += x->w->r[rank].g.st[r].host_probes;
    return n;
}

/* Rank 1 computes 60 s: rank 0 keeps both rails UP, maps nothing out, and
 * hears rank 1's host on each; when rank 1 comes back, so does it.  Without
 * host probes (the same run with rank 0's ka_ns 0: only the PROBE's own
 * completion is heard) both rails are mapped out. */
static void test_a_computing_peer_stays_up_while_its_adapter_answers_host_probes(void **state)
{
    busy x;
    uint64_t map0, map1, t0, err0 = 0, heard0, failed_at = 0;
    (void)state;
    /* first without host probes: what they are for */
    busy_start(&x, 2);
    x.w->r[0].g.ka_ns = 0;
    map0 = x.sw->e[0].stats.mapouts;
    busy_freeze(&x);
    t0 = x.w->sn->now;
    while (x.w->sn->now - t0 < 5000000000ull && !failed_at) {
        busy_run(&x, 1000000, NULL);
        if (x.sw->e[0].stats.mapouts > map0)
            failed_at = x.w->sn->now - t0;
    }
    print_message("   without host probes: rank 0 mapped a rail out %.0f ms into rank 1's "
                  "computation (host heard %llu times, through completions, the last the "
                  "PROBE's own)\n",
                  (double)failed_at / 1e6, (unsigned long long)x.w->r[0].host_heard);
    assert_true(failed_at > 0);
    busy_end(&x);

    busy_start(&x, 2);
    map0 = x.sw->e[0].stats.mapouts;
    map1 = x.sw->e[1].stats.mapouts;
    for (int r = 0; r < 2; r++)
        err0 += x.w->r[0].g.st[r].qp_errors + x.w->r[1].g.st[r].qp_errors;
    heard0 = x.w->r[0].host_heard;
    busy_freeze(&x);
    t0 = x.w->sn->now;
    busy_run(&x, 60000000000ull, NULL);
    print_message("   rank 1 computed %.0f s: rank 0's rails %s and %s, mapped out %llu times; "
                  "host probes %llu and %llu (failed %llu), host heard %llu times\n",
                  (double)(x.w->sn->now - t0) / 1e9, busy_up(&x, 0, 0) ? "UP" : "DOWN",
                  busy_up(&x, 0, 1) ? "UP" : "DOWN",
                  (unsigned long long)(x.sw->e[0].stats.mapouts - map0),
                  (unsigned long long)x.w->r[0].g.st[0].host_probes,
                  (unsigned long long)x.w->r[0].g.st[1].host_probes,
                  (unsigned long long)x.w->r[0].hp_failed,
                  (unsigned long long)(x.w->r[0].host_heard - heard0));
    assert_true(busy_up(&x, 0, 0) && busy_up(&x, 0, 1));
    assert_int_equal(x.sw->e[0].stats.mapouts, map0);
    assert_int_equal(x.w->r[0].hp_failed, 0);
    for (int r = 0; r < 2; r++) {
        /* one per keepalive interval (10 ms) while the PROBE waits: ~6,000 a minute */
        assert_true(x.w->r[0].g.st[r].host_probes > 5000);
        assert_true(x.w->r[0].g.st[r].host_probes < 6100);
        assert_true(x.w->r[0].g.st[r].host_heard > 5000);
    }
    assert_int_equal(busy_probes(&x, 1), 0); /* the computing rank posts nothing */
    /* rank 1 comes back: it reads what waited, answers; nothing is lost */
    x.w->r[1].frozen = 0;
    busy_run(&x, 1000000000ull, NULL);
    assert_true(busy_all_up(&x));
    assert_int_equal(x.sw->e[0].stats.mapouts, map0);
    assert_int_equal(x.sw->e[1].stats.mapouts, map1);
    for (int r = 0; r < 2; r++)
        err0 -= x.w->r[0].g.st[r].qp_errors + x.w->r[1].g.st[r].qp_errors;
    assert_int_equal(err0, 0);
    /* and the probes stop once it answers */
    heard0 = busy_probes(&x, 0);
    busy_run(&x, 1000000000ull, NULL);
    assert_int_equal(busy_probes(&x, 0), heard0);
    assert_int_equal(x.w->violations, 0);
    busy_end(&x);
}

/* Rank 1 computes; then its rail 0 dies under it (its port fails, or the
 * rail is cut): rank 0's next host probe is not answered, ends in
 * RETRY_EXC_ERR after the adapter's retries (470 ms), and rail 0 is mapped
 * out then: within the usual time for a busy peer (the host's last answer
 * excuses the probe for host_timeout, 500 ms, then a heartbeat and a probe
 * timeout: 640 ms), not kept up by the host's earlier answers; rail 1
 * stays UP. */
static void test_a_computing_peer_whose_rail_dies_is_still_failed_in_time(void **state)
{
    (void)state;
    for (int v = 0; v < 2; v++) {
        busy x;
        uint64_t t0, err1;
        busy_start(&x, 2);
        busy_freeze(&x);
        busy_run(&x, 2000000000ull, NULL); /* busy, heard */
        assert_true(busy_up(&x, 0, 0) && busy_up(&x, 0, 1));
        assert_true(x.w->r[0].g.st[0].host_heard > 100);
        err1 = x.w->r[0].g.st[1].qp_errors;
        t0 = x.w->sn->now;
        if (v == 0) /* the device moves rank 1's queue pairs of the port to the error state */
            async_event(x.w, 1, bfo_vg_qi(&x.w->r[1].g, 0, 0), BFO_VEV_PORT_ERR);
        else
            x.w->sn->path[sn_link(x.w->sn, 0, 1, 0)] = x.w->sn->path[sn_link(x.w->sn, 1, 0, 0)] = SN_PATH_SILENT;
        while (busy_up(&x, 0, 0) && x.w->sn->now - t0 < 2000000000ull)
            busy_run(&x, 1000000, NULL);
        print_message("   %s under a computing peer: rail 0 mapped out after %.1f ms (RETRY_EXC_ERR "
                      "%llu); rail 1 %s\n", v == 0 ? "its port failed" : "the rail cut",
                      (double)(x.w->sn->now - t0) / 1e6,
                      (unsigned long long)x.w->r[0].g.st[0].wc_errors[BFO_VWC_RETRY_EXC_ERR],
                      busy_up(&x, 0, 1) ? "UP" : "DOWN");
        assert_false(busy_up(&x, 0, 0));
        assert_true(x.w->sn->now - t0 <= 640000000ull);
        assert_int_equal(x.w->r[0].g.st[0].wc_errors[BFO_VWC_RETRY_EXC_ERR], 1);
        assert_true(x.w->r[0].hp_failed >= 1);
        busy_run(&x, 1000000000ull, NULL); /* rank 1 still computing */
        assert_true(busy_up(&x, 0, 1));
        assert_int_equal(x.w->r[0].g.st[1].qp_errors, err1);
        assert_int_equal(x.w->violations, 0);
        busy_end(&x);
    }
}

/* A host probe that cannot complete (behind a PROBE the wire holds) is not
 * joined by another: one on the send queue, however long it waits; the
 * model counts a second one as a violation.  The engine, hearing no host,
 * maps the rail out after its probe timeout as before; the host probe is
 * flushed with the queue pair. */
static void test_one_host_probe_at_most_on_a_send_queue(void **state)
{
    busy x;
    int qi;
    (void)state;
    busy_start(&x, 1);
    qi = bfo_vg_qi(&x.w->r[0].g, 1, 0);
    busy_freeze(&x);
    x.w->sn->path[sn_link(x.w->sn, 0, 1, 0)] = SN_PATH_HOLD; /* rank 0's next PROBE waits on the wire */
    while (busy_up(&x, 0, 0)) {
        busy_run(&x, 100000, NULL);
        assert_true(x.w->r[0].g.qps[qi].sq_used <= 2); /* the PROBE and one host probe */
        if (x.w->r[0].g.qps[qi].hp_out)
            assert_true(x.w->r[0].hw[qi].hp_live);
    }
    print_message("   a host probe held behind the PROBE: %llu posted until the rail was "
                  "mapped out (%llu host heard)\n",
                  (unsigned long long)x.w->r[0].g.st[0].host_probes,
                  (unsigned long long)x.w->r[0].g.st[0].host_heard);
    assert_false(busy_up(&x, 0, 0));
    busy_run(&x, 1000000, NULL); /* the queue pair closes at the next progress */
    assert_int_equal(x.w->r[0].g.st[0].host_probes, 1);
    assert_int_equal(x.w->r[0].g.qps[qi].hp_out, 0); /* gone with its queue pair */
    assert_int_equal(x.w->r[0].hw[qi].hp_live, 0);
    assert_int_equal(x.w->violations, 0);
    busy_end(&x);
}

/* Rank 1 leaves (bfo_engine_leave): its BYE goes over both queue pairs,
 * rank 0 takes it (both rails LEFT, each queue pair parted: bfo_vg_part),
 * then rank 0's queue pairs end (the peer's process is gone: a fatal
 * event on each): no error counted, no map-out, no reconnect, no host
 * probe while it waited. */
static int busy_bye_taken(const busy *x)
{
    return bfo_engine_left(&x->sw->e[1]) && bfo_peer_left(&x->sw->e[0], 1);
}

static void test_a_peer_that_leaves_its_queue_pairs_end_as_no_error(void **state)
{
    busy x;
    uint64_t err0 = 0, map0, probes0;
    (void)state;
    busy_start(&x, 2);
    for (int r = 0; r < 2; r++)
        err0 += x.w->r[0].g.st[r].qp_errors;
    map0 = x.sw->e[0].stats.mapouts;
    assert_int_equal(bfo_engine_leave(&x.sw->e[1], x.w->sn->now), BFO_OK);
    assert_true(busy_run(&x, 100000000ull, busy_bye_taken));
    x.w->r[1].frozen = 1; /* its process ends */
    probes0 = busy_probes(&x, 0);
    for (int r = 0; r < 2; r++) {
        int qi = bfo_vg_qi(&x.w->r[0].g, 1, r);
        assert_int_equal(x.sw->e[0].peers[1].rail[r].fsm.cs, BFO_RAIL_ST_LEFT);
        assert_true(x.w->r[0].g.qps[qi].parted);
        assert_true(x.w->r[1].g.qps[bfo_vg_qi(&x.w->r[1].g, 0, r)].parted);
        async_event(x.w, 0, qi, BFO_VEV_QP_FATAL);
    }
    busy_run(&x, 3000000000ull, NULL);
    for (int r = 0; r < 2; r++) {
        err0 -= x.w->r[0].g.st[r].qp_errors;
        assert_int_equal(x.sw->e[0].peers[1].rail[r].fsm.cs, BFO_RAIL_ST_LEFT);
        assert_int_equal(x.sw->e[0].peers[1].rail[r].attempts, 0);
        assert_false(bfo_link_up(&x.w->r[0].g.qps[bfo_vg_qi(&x.w->r[0].g, 1, r)].link));
    }
    assert_int_equal(err0, 0);
    assert_int_equal(x.sw->e[0].stats.mapouts, map0);
    assert_int_equal(busy_probes(&x, 0), probes0);
    assert_int_equal(x.w->violations, 0);
    busy_end(&x);
}

/* One run, as report_failure prints it: SCENARIO WHAT N STATUS|EVENT OTHER. */
static int replay(char **argv)
{
    vw_fault f;
    vw_cov cov;
    sr_result r;
    char why[256] = "";
    int sc = atoi(argv[1]), ok;
    memset(&f, 0, sizeof f);
    memset(&cov, 0, sizeof cov);
    if (setup_set(NULL) != 0 || sc < 0 || sc >= nset)
        return 2;
    f.what = atoi(argv[2]);
    f.n = strtoull(argv[3], NULL, 10);
    f.status = f.event = atoi(argv[4]);
    f.other = atoi(argv[5]);
    ok = vw_run(&set[sc], &f, &cov, &r, why, sizeof why, NULL, NULL);
    printf("%s\n", ok ? "passed" : why);
    return !ok;
}

int main(int argc, char **argv)
{
    if (argc == 6)
        return replay(argv);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_error_status_on_a_send_write_or_read_at_every_operation),
        cmocka_unit_test(test_every_error_status_on_a_receive_at_every_send),
        cmocka_unit_test(test_failed_but_arrived_at_every_operation_is_delivered_once),
        cmocka_unit_test(test_async_events_mid_message_on_either_side),
        cmocka_unit_test(test_acceptor_connect_while_waiting_for_the_rtu_keeps_the_new_queue_pair),
        cmocka_unit_test(test_pending_connect_is_answered_by_the_connection_that_comes_up),
        cmocka_unit_test(test_stale_req_read_after_a_newer_one_is_refused),
        cmocka_unit_test(test_attempt_numbers_wrap_around_32_bits),
        cmocka_unit_test(test_a_newer_req_while_connect_is_pending_replaces_the_connection_silently),
        cmocka_unit_test(test_a_computing_peer_stays_up_while_its_adapter_answers_host_probes),
        cmocka_unit_test(test_a_computing_peer_whose_rail_dies_is_still_failed_in_time),
        cmocka_unit_test(test_one_host_probe_at_most_on_a_send_queue),
        cmocka_unit_test(test_a_peer_that_leaves_its_queue_pairs_end_as_no_error),
        cmocka_unit_test(test_one_flooding_peer_cannot_starve_another_with_credit),
        cmocka_unit_test(test_credit_is_used_given_back_and_enforced),
        cmocka_unit_test(test_credit_goes_back_below_half_while_frames_are_held),
        cmocka_unit_test(test_frames_of_a_closed_queue_pair_give_no_credit_to_the_next),
        cmocka_unit_test(test_srq_teardown_waits_for_last_wqe_reached),
    };
    return cmocka_run_group_tests_name("verbs_scenarios", tests, setup_set, NULL);
}
