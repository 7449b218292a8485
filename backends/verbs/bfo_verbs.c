// SPDX-License-Identifier: BSD-3-Clause
/* bfo_verbs.c - the verbs backend (see bfo_verbs.h for the contract and design). */
#define _GNU_SOURCE
#include "bfo_verbs.h"
#include "bfo_verbs_map.h"
#include "bfo_verbs_cache.h"
#include "bfo_verbs_glue.h"
#include "bfo_verbs_ud.h"
#include "bfo_verbs_auth.h"
#include "bfo_tp_os.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* bfo_verbs_map.h mirrors the ABI's numbers: they must agree. */
_Static_assert((int)IBV_WC_SUCCESS == (int)BFO_VWC_SUCCESS, "wc status");
_Static_assert((int)IBV_WC_LOC_LEN_ERR == (int)BFO_VWC_LOC_LEN_ERR, "wc status");
_Static_assert((int)IBV_WC_LOC_QP_OP_ERR == (int)BFO_VWC_LOC_QP_OP_ERR, "wc status");
_Static_assert((int)IBV_WC_LOC_PROT_ERR == (int)BFO_VWC_LOC_PROT_ERR, "wc status");
_Static_assert((int)IBV_WC_WR_FLUSH_ERR == (int)BFO_VWC_WR_FLUSH_ERR, "wc status");
_Static_assert((int)IBV_WC_LOC_ACCESS_ERR == (int)BFO_VWC_LOC_ACCESS_ERR, "wc status");
_Static_assert((int)IBV_WC_REM_ACCESS_ERR == (int)BFO_VWC_REM_ACCESS_ERR, "wc status");
_Static_assert((int)IBV_WC_REM_OP_ERR == (int)BFO_VWC_REM_OP_ERR, "wc status");
_Static_assert((int)IBV_WC_RETRY_EXC_ERR == (int)BFO_VWC_RETRY_EXC_ERR, "wc status");
_Static_assert((int)IBV_WC_RNR_RETRY_EXC_ERR == (int)BFO_VWC_RNR_RETRY_EXC_ERR, "wc status");
_Static_assert((int)IBV_WC_REM_ABORT_ERR == (int)BFO_VWC_REM_ABORT_ERR, "wc status");
_Static_assert((int)IBV_WC_FATAL_ERR == (int)BFO_VWC_FATAL_ERR, "wc status");
_Static_assert((int)IBV_WC_RESP_TIMEOUT_ERR == (int)BFO_VWC_RESP_TIMEOUT_ERR, "wc status");
_Static_assert((int)IBV_WC_GENERAL_ERR == (int)BFO_VWC_GENERAL_ERR, "wc status");
_Static_assert((int)IBV_EVENT_CQ_ERR == (int)BFO_VEV_CQ_ERR, "event");
_Static_assert((int)IBV_EVENT_QP_FATAL == (int)BFO_VEV_QP_FATAL, "event");
_Static_assert((int)IBV_EVENT_QP_REQ_ERR == (int)BFO_VEV_QP_REQ_ERR, "event");
_Static_assert((int)IBV_EVENT_QP_ACCESS_ERR == (int)BFO_VEV_QP_ACCESS_ERR, "event");
_Static_assert((int)IBV_EVENT_PATH_MIG_ERR == (int)BFO_VEV_PATH_MIG_ERR, "event");
_Static_assert((int)IBV_EVENT_DEVICE_FATAL == (int)BFO_VEV_DEVICE_FATAL, "event");
_Static_assert((int)IBV_EVENT_PORT_ACTIVE == (int)BFO_VEV_PORT_ACTIVE, "event");
_Static_assert((int)IBV_EVENT_PORT_ERR == (int)BFO_VEV_PORT_ERR, "event");
_Static_assert((int)IBV_EVENT_GID_CHANGE == (int)BFO_VEV_GID_CHANGE, "event");

#define RECV_BIT (1ull << 63)
#define HPROBE_WRID (1ull << 62) /* a host probe's (bfo_vg_keepalive), not a descriptor's */
#define CREDIT_WRID (1ull << 61) /* a credit message's (bfo_vg_credit) */
#define MAX_DEV BFO_MAX_RAILS
/* bfo_verbs_options' defaults (a 0 member): 6 retries x 67 ms (timeout 14)
 * before a queue pair fails, docs/verbs.md. */
#define RETRY_CNT_DEFAULT 6
#define TIMEOUT_DEFAULT 14
#define DEPTH_DEFAULT 32
#define REG_CACHE_DEFAULT 32
/* The shared receive queue (docs/verbs.md, "Shared receive queue"): its
 * frames per device (and half as many send buffers: SRQ_SEND), the credit
 * each peer gets, and how long a queue pair closed while attached to it waits for
 * IBV_EVENT_QP_LAST_WQE_REACHED before it is destroyed anyway. */
#define SRQ_FRAMES_DEFAULT 64
#define SRQ_SEND(frames) ((frames) / 2)
#define CREDITS_DEFAULT 8
#define CREDITS_MAX 2048
#define LAST_WQE_WAIT_NS 2000000000ull
#define CONNECT_TIMEOUT_DEFAULT_NS 2000000000ull
/* Each rail's UD queue pair (the exchange, bfo_verbs_ud.h): UD_RECV
 * receive slots, UD_SEND send slots, UD_SLOT bytes each (a received
 * datagram lands behind the 40 bytes of its GRH).  A burst beyond UD_RECV
 * (many peers connecting at once) loses datagrams, which go again. */
#define UD_RECV 128
#define UD_SEND 32
#define UD_SLOT 256 /* the GRH and the longest message, an authenticated REP (bfo_verbs_auth.h) */
#define GRH_LEN 40
/* AUTHENTICATION: the claims a (peer, rail) holds at once, each with its
 * queue pair held aside (a newer one drops the oldest). */
#define VCLAIMS BFO_VA_CLAIMS /* claims held per (peer, rail) */

/* What the device needs of a descriptor (the glue's bfo_vg_ent has the
 * token, kind and queue pair; same index). */
typedef struct vent {
    int slot; /* send buffer while posted, -1 none */
    const void *base[2];
    size_t len[2];
    const bfo_data_span *span; /* described data: len[1] bytes of it, in place of base[1] */
    char *local;
    size_t rlen;
    uint64_t raddr;
    uint32_t key; /* the peer's key for this rail's device */
} vent;

/* Frames registered once, each max_frame bytes: a queue pair's own send
 * buffers (no SRQ), or a device's pool of receive or of send buffers. */
typedef struct vpool {
    uint8_t *buf;
    struct ibv_mr *mr;
    int *free, nfree, n;
} vpool;

typedef struct vdev {
    char name[64];
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    struct ibv_comp_channel *ch;
    int max_rd_atom, dead;
    int max_srq, max_srq_wr; /* ibv_query_device's */
    /* with the shared receive queue: it, its receive buffers (nothing in
     * rp.free: every one is posted or holds a frame), the send buffers of
     * every queue pair of the device */
    struct ibv_srq *srq;
    vpool rp, sp;
} vdev;

/* A queue pair closed while attached to the shared receive queue: kept
 * (in the error state) until the device says it takes no more of the
 * queue's receives (IBV_EVENT_QP_LAST_WQE_REACHED) or LAST_WQE_WAIT_NS
 * passed; then its completion queue is read a last time (its receives'
 * buffers go back to the queue) and both go to the reaper. */
typedef struct vdrain {
    struct ibv_qp *qp;
    struct ibv_cq *cq;
    int d, peer, rail, last_wqe;
    uint64_t since;
} vdrain;

typedef struct vrail {
    char dev[64];
    int port, d, gid_index, is_ib, port_up, mtu; /* port_up: at open (the glue's from start) */
    uint32_t ip;
    int lfd;
    uint16_t lport, lid;
    uint8_t gid[16];
    unsigned bw;
    /* the UD queue pair the exchange goes through (not with tcp_exchange) */
    struct ibv_cq *ucq;
    struct ibv_qp *uqp;
    struct ibv_mr *umr;
    uint8_t *ubuf; /* UD_RECV receive slots, then UD_SEND send slots */
    int usfree[UD_SEND], nusfree;
    int ud_bad; /* an error completion: the queue pair goes back to RTS (same number) */
} vrail;

/* The device side of a (peer, rail); its connection state, operations and
 * receive buffers are the glue's (bfo_vg_qp, same index). */
typedef struct vqp {
    struct ibv_qp *qp;
    struct ibv_cq *cq;
    uint32_t psn;
    /* control channel */
    int cfd;
    uint8_t cin[BFO_VERBS_CTL_SIZE], cout[BFO_VERBS_CTL_SIZE];
    size_t cin_got, cout_len, cout_off;
    uint32_t peer_qpn, peer_psn;
    uint16_t peer_lid;
    uint8_t peer_gid[16];
    int peer_mtu;
    bfo_vu_resend rs; /* UD exchange: the REQ or REP waiting for its answer */
    uint32_t peer_grant; /* the peer's credit for this side (its REQ or REP; 0: no limit) */
    int last_wqe;        /* IBV_EVENT_QP_LAST_WQE_REACHED came for qp before its close */
    /* send buffers: its own (own), or its device's pool (SRQ) */
    vpool own, *sp;
    /* receive buffers (the glue's rbuf; no SRQ) */
    struct ibv_mr *rmr;
    /* AUTHENTICATION (bfo_verbs_auth.h): the dialer's handshake, from its
     * REQ to the queue pair's close (its RTU answers a REP that comes
     * again); the claims challenged (REQs not proven yet) */
    bfo_va_dial *dial;
    bfo_va_held *cl[VCLAIMS]; /* each a vclaim's first member */
} vqp;

/* AUTHENTICATION: a REQ not proven yet (a claim), with the queue pair that
 * answers it, held aside from the (peer, rail)'s own until the RTU proves
 * the dialer (then taken: claim_take), or dropped (claim_drop). */
typedef struct vclaim {
    bfo_va_held c;     /* first: the REQ, its REP, attempt, deadline, resend (bfo_verbs_auth.h) */
    vqp h;             /* its queue pair (qp, cq, psn) towards the claimant's (peer_*) */
    int qi;
} vclaim;

/* An accepted control connection before its REQ names the (peer, rail). */
typedef struct vpend {
    bfo_tp_pend a; /* first member (bfo_tp.h; polled, no epoll set) */
    size_t got;
    uint8_t buf[BFO_VERBS_CTL_SIZE];
} vpend;

/* A registration: one MR per device (each rail gives the peer its own
 * device's rkey); its handle is its index + 1.  Which region it is, who
 * holds it and whether it may be handed out again: the cache's slot of
 * the same index (bfo_verbs_cache.h).  Only the owner (reg_mem,
 * dereg_mem, progress) touches the MRs. */
typedef struct vreg {
    struct ibv_mr *mr[MAX_DEV];
} vreg;

struct bfo_verbs {
    int rank, size, nrails, ndev;
    bfo_tp_log lg; /* vlog */
    bfo_verbs_options o;
    bfo_config cfg;
    bfo_tp_sizes sizes; /* what cfg sizes (bfo_tp.h) */
    vrail rails[BFO_MAX_RAILS];
    vdev devs[MAX_DEV];
    bfo_sink sink; /* where it reports, and where it looks peers' addresses up */
    uint64_t job;
    bfo_vg g; /* queue pairs' state, outstanding operations, what the engine is told */
    /* UD exchange, per (peer, rail): the peer's card as read, its state
     * (0 not read, 1 read, 2 unusable: said once), the address handle to
     * its UD queue pair */
    bfo_vu_card *pcard;
    uint8_t *pcard_st;
    struct ibv_ah **ah;
    void *gmem;
    vqp *qps;
    vent *ents;
    bfo_tp_pends pends; /* accepted control connections without a REQ yet (vpend) */
    vreg *regs;
    int nregs;
    bfo_vc_ent *vents;
    bfo_vc vc; /* the registration cache (bfo_verbs_cache.h), vc_on once set up */
    int vc_on;
    size_t max_frame;
    int started;
    uint64_t pinned; /* bytes of the backend's own buffers registered (not reg_mem's) */
    vdrain *drain;   /* closed queue pairs waiting for LAST_WQE_REACHED */
    int ndrain, drain_cap;
    uint64_t last_wqe_seen, last_wqe_timeouts, drain_late; /* events; waits given up; receives found then */
    /* the reaper: destroys dead queue pairs off the progress path (rxe can
     * block ibv_destroy_qp for seconds while packets of it sit in a queue
     * of a link that went down) */
    pthread_t reaper;
    pthread_mutex_t rmu;
    pthread_cond_t rcv;
    int reaper_on, reaper_stop, nreap, reap_cap;
    struct ibv_qp **reap_qp;
    struct ibv_cq **reap_cq;
};

/* How long bfo_verbs_fini waits for the reaper's last destroys. */
#define BFO_VERBS_REAP_WAIT_S 3

static void *reaper_main(void *arg)
{
    bfo_verbs *v = (bfo_verbs *)arg;
    pthread_mutex_lock(&v->rmu);
    for (;;) {
        while (v->nreap == 0 && !v->reaper_stop)
            pthread_cond_wait(&v->rcv, &v->rmu);
        if (v->nreap == 0 && v->reaper_stop)
            break;
        struct ibv_qp *qp = v->reap_qp[v->nreap - 1];
        struct ibv_cq *cq = v->reap_cq[v->nreap - 1];
        v->nreap--;
        pthread_mutex_unlock(&v->rmu);
        if (qp)
            ibv_destroy_qp(qp);
        if (cq)
            ibv_destroy_cq(cq);
        pthread_mutex_lock(&v->rmu);
    }
    pthread_mutex_unlock(&v->rmu);
    return NULL;
}

/* Hands a dead queue pair and its completion queue to the reaper (or
 * destroys them here when it cannot take them). */
static void reap(bfo_verbs *v, struct ibv_qp *qp, struct ibv_cq *cq)
{
    if (v->reaper_on) {
        pthread_mutex_lock(&v->rmu);
        if (v->nreap < v->reap_cap) {
            v->reap_qp[v->nreap] = qp;
            v->reap_cq[v->nreap] = cq;
            v->nreap++;
            pthread_cond_signal(&v->rcv);
            pthread_mutex_unlock(&v->rmu);
            return;
        }
        pthread_mutex_unlock(&v->rmu);
    }
    if (qp)
        ibv_destroy_qp(qp);
    if (cq)
        ibv_destroy_cq(cq);
}

/* ---------------------------------------------------------------- helpers */

/* This transport's log (bfo_tp.h); its lines go out through v_log_out. */
#define vlog(v, ...) bfo_tp_logf(&(v)->lg, __VA_ARGS__)

/* A line of this transport's log, with CLOCK_MONOTONIC seconds after the
 * rank: tests line these up with the time of a fault. */
static void v_log_out(void *ctx, int level, const char *line)
{
    (void)level;
    fprintf(stderr, "bfo-verbs[%d] %.3f: %s\n", ((const bfo_verbs *)ctx)->rank, (double)bfo_tp_now() / 1e9, line);
}

static const bfo_tp_err v_errs[] = {
    { BFO_VERBS_ERR_DEVICE, "BFO_VERBS_ERR_DEVICE" }, { BFO_VERBS_ERR_SOCKET, "BFO_VERBS_ERR_SOCKET" }, { 0, NULL }
};

const char *bfo_verbs_errname(int rc)
{
    const char *name = bfo_tp_errname(v_errs, rc);
    return name ? name : bfo_errname(rc);
}

int bfo_verbs_is_rail(const char *name) { return name && !strncmp(name, "verbs:", 6); }

int bfo_verbs_parse_rail(const char *name, char *dev, size_t devlen, int *port, uint32_t *ip)
{
    const char *s, *end, *colon, *at;
    size_t n;
    if (!bfo_verbs_is_rail(name))
        return -1;
    s = name + 6;
    end = s + strcspn(s, ",");
    at = memchr(s, '@', (size_t)(end - s));
    colon = memchr(s, ':', (size_t)((at ? at : end) - s));
    n = (size_t)((colon ? colon : at ? at : end) - s);
    if (n == 0 || n >= devlen)
        return -1;
    memcpy(dev, s, n);
    dev[n] = 0;
    *port = 1;
    *ip = 0;
    if (colon) {
        char *e;
        long p = strtol(colon + 1, &e, 10);
        if (e != (at ? at : end) || p < 1 || p > 255)
            return -1;
        *port = (int)p;
    }
    if (at) {
        char buf[64];
        struct in_addr a;
        size_t m = (size_t)(end - at - 1);
        if (m == 0 || m >= sizeof buf)
            return -1;
        memcpy(buf, at + 1, m);
        buf[m] = 0;
        if (inet_pton(AF_INET, buf, &a) != 1)
            return -1;
        *ip = ntohl(a.s_addr);
    }
    return 0;
}

static bfo_vg_qp *gq(bfo_verbs *v, int qi) { return &v->g.qps[qi]; }
static int qi_of(const bfo_verbs *v, int peer, int rail) { return peer * v->nrails + rail; }

static void g_log(void *ctx, int level, const char *line)
{
    vlog((const bfo_verbs *)ctx, level, "%s", line);
}

/* ------------------------------------------------------- control messages */

/* The control message of qi, naming queue pair h (qi's own, or a claim's)
 * and attempt number `attempt` (the low 32 bits are sent). */
static void ctl_encode_qp(const bfo_verbs *v, int qi, int kind, const vqp *h, uint64_t attempt, uint8_t *m)
{
    const bfo_vg_qp *q = &v->g.qps[qi];
    const vrail *r = &v->rails[q->rail];
    bfo_vu_msg s;
    memset(&s, 0, sizeof s);
    s.kind = kind;
    s.rail = q->rail;
    s.rank = (uint32_t)v->rank;
    s.nranks = (uint32_t)v->size;
    s.job = v->job;
    s.qpn = h->qp ? h->qp->qp_num : 0;
    s.psn = h->psn;
    s.lid = r->lid;
    s.mtu = (uint8_t)r->mtu;
    memcpy(s.gid, r->gid, 16);
    s.attempt = (uint32_t)attempt; /* the dialer's attempt, its low 32 bits (REQ;
                                    * echoed in REP and RTU) */
    s.dialed = (uint32_t)q->link.dialed;
    s.grant = (uint32_t)v->g.share; /* REQ, REP: this side's credit for the peer */
    bfo_vu_msg_encode(&s, m);
}

static void ctl_encode(const bfo_verbs *v, int qi, int kind, uint8_t *m)
{
    ctl_encode_qp(v, qi, kind, &v->qps[qi], v->g.qps[qi].link.attempt, m);
}

/* The peer's queue pair as a REQ or a REP names it. */
static void peer_from(vqp *h, const bfo_vu_msg *s)
{
    h->peer_qpn = s->qpn;
    h->peer_psn = s->psn;
    h->peer_lid = s->lid;
    h->peer_mtu = s->mtu;
    h->peer_grant = s->grant;
    memcpy(h->peer_gid, s->gid, 16);
}

/* Checks a message; fills the peer's QP fields into h (when h) and its
 * attempt number into *gen (when gen).  -1 (*rank -1, why said) when it is
 * not a valid one. */
static int ctl_decode(const bfo_verbs *v, const uint8_t *m, int kind, int rail, int *rank,
                      vqp *h, uint32_t *gen, char *why, size_t whylen)
{
    bfo_vu_msg s;
    if (bfo_vu_msg_decode(m, BFO_VERBS_CTL_SIZE, kind, v->rank, v->size, v->job, rail, &s, why, whylen) != 0) {
        *rank = -1;
        return -1;
    }
    *rank = (int)s.rank;
    if (gen)
        *gen = s.attempt;
    if (h && kind != BFO_VERBS_K_RTU)
        peer_from(h, &s);
    return 0;
}

/* ------------------------------------------------------------ queue pairs */

/* One receive buffer posted on a queue pair (RC or the rail's UD one),
 * slot k of the buffers it owns: 0, or -1. */
static int post_recv_one(struct ibv_qp *qp, const uint8_t *buf, uint32_t len, uint32_t lkey, int k)
{
    struct ibv_sge sge;
    struct ibv_recv_wr wr, *bad = NULL;
    sge.addr = (uintptr_t)buf;
    sge.length = len;
    sge.lkey = lkey;
    memset(&wr, 0, sizeof wr);
    wr.wr_id = RECV_BIT | (uint64_t)k;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    return ibv_post_recv(qp, &wr, &bad) != 0 ? -1 : 0;
}

/* Buffer b of device d's pool onto its shared receive queue: 0, or -1. */
static int srq_post(bfo_verbs *v, int d, int b)
{
    vdev *dv = &v->devs[d];
    struct ibv_sge sge;
    struct ibv_recv_wr wr, *bad = NULL;
    sge.addr = (uintptr_t)(dv->rp.buf + (size_t)b * v->max_frame);
    sge.length = (uint32_t)v->max_frame;
    sge.lkey = dv->rp.mr->lkey;
    memset(&wr, 0, sizeof wr);
    wr.wr_id = RECV_BIT | (uint64_t)b;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    return ibv_post_srq_recv(dv->srq, &wr, &bad) != 0 ? -1 : 0;
}

/* The glue's post_recv: receive buffer b of queue pair qi (with the SRQ:
 * of qi's device's pool, onto the queue, whatever became of qi). */
static int g_post_recv(void *ctx, int qi, int b)
{
    bfo_verbs *v = (bfo_verbs *)ctx;
    const bfo_vg_qp *q = gq(v, qi);
    vqp *h = &v->qps[qi];
    if (v->g.srq)
        return srq_post(v, v->rails[q->rail].d, b);
    if (!h->qp)
        return -1;
    return post_recv_one(h->qp, q->rbuf + (size_t)b * v->max_frame, (uint32_t)v->max_frame, h->rmr->lkey, b);
}

/* A new queue pair for qi's (peer, rail) into h (qi's own, or a claim's),
 * in INIT: 0, or -1 (logged; what was made is in h, for the caller to
 * destroy). */
static int qp_make(bfo_verbs *v, int qi, vqp *h)
{
    const bfo_vg_qp *q = gq(v, qi);
    const vrail *r = &v->rails[q->rail];
    vdev *d = &v->devs[r->d];
    struct ibv_qp_init_attr ia;
    struct ibv_qp_attr a;
    int sq = v->g.sq_depth;
    /* with the SRQ, the peer's frames at once are its credit, and its credit
     * messages one at a time: the queue of frames waiting is as deep */
    int rq = v->g.srq ? v->g.recv_depth : v->o.recv_depth;
    h->cq = ibv_create_cq(d->ctx, sq + rq + 4, NULL, d->ch, 0);
    if (!h->cq) {
        vlog(v, 1, "peer %d rail %d: ibv_create_cq: %s", q->peer, q->rail, strerror(errno));
        return -1;
    }
    memset(&ia, 0, sizeof ia);
    ia.send_cq = h->cq;
    ia.recv_cq = h->cq;
    ia.qp_type = IBV_QPT_RC;
    ia.cap.max_send_wr = (uint32_t)sq;
    ia.cap.max_recv_wr = v->g.srq ? 0 : (uint32_t)v->o.recv_depth;
    ia.srq = v->g.srq ? d->srq : NULL;
    ia.cap.max_send_sge = 1;
    ia.cap.max_recv_sge = 1;
    h->qp = ibv_create_qp(d->pd, &ia);
    if (!h->qp) {
        vlog(v, 1, "peer %d rail %d: ibv_create_qp: %s", q->peer, q->rail, strerror(errno));
        ibv_destroy_cq(h->cq);
        h->cq = NULL;
        return -1;
    }
    h->last_wqe = 0;
    memset(&a, 0, sizeof a);
    a.qp_state = IBV_QPS_INIT;
    a.pkey_index = 0;
    a.port_num = (uint8_t)r->port;
    a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
    if (ibv_modify_qp(h->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) {
        vlog(v, 1, "peer %d rail %d: QP to INIT: %s", q->peer, q->rail, strerror(errno));
        return -1;
    }
    h->psn = (uint32_t)(bfo_tp_now() * 2654435761u + (uint64_t)q->peer * 7919u + (uint64_t)q->rail) & 0xffffff;
    return 0;
}

/* A new queue pair of qi in INIT with every free receive buffer posted. */
static int qp_create(bfo_verbs *v, int qi)
{
    bfo_vg_qp *q = gq(v, qi);
    vqp *h = &v->qps[qi];
    int rc = qp_make(v, qi, h);
    if (h->qp)
        q->hw = 1; /* close destroys it */
    if (rc != 0)
        return -1;
    if (bfo_vg_post_receives(&v->g, qi) != 0) {
        vlog(v, 1, "peer %d rail %d: ibv_post_recv: %s", q->peer, q->rail, strerror(errno));
        return -1;
    }
    q->sq_used = 0;
    return 0;
}

/* Queue pair h of qi (its own, or a claim's): INIT -> RTR -> RTS towards
 * the peer's QP (h->peer_*). */
static int qp_rts(bfo_verbs *v, int qi, vqp *h)
{
    const bfo_vg_qp *q = gq(v, qi);
    const vrail *r = &v->rails[q->rail];
    const vdev *d = &v->devs[r->d];
    struct ibv_qp_attr a;
    int mtu = r->mtu < h->peer_mtu ? r->mtu : h->peer_mtu;
    memset(&a, 0, sizeof a);
    a.qp_state = IBV_QPS_RTR;
    a.path_mtu = (enum ibv_mtu)mtu;
    a.dest_qp_num = h->peer_qpn;
    a.rq_psn = h->peer_psn;
    a.max_dest_rd_atomic = (uint8_t)d->max_rd_atom;
    a.min_rnr_timer = 12; /* 0.64 ms */
    a.ah_attr.port_num = (uint8_t)r->port;
    a.ah_attr.dlid = h->peer_lid;
    if (!r->is_ib || r->gid_index > 0) {
        a.ah_attr.is_global = 1;
        memcpy(a.ah_attr.grh.dgid.raw, h->peer_gid, 16);
        a.ah_attr.grh.sgid_index = (uint8_t)r->gid_index;
        a.ah_attr.grh.hop_limit = 64;
    }
    if (ibv_modify_qp(h->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                                     IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)) {
        vlog(v, 1, "peer %d rail %d: QP to RTR: %s", q->peer, q->rail, strerror(errno));
        return -1;
    }
    memset(&a, 0, sizeof a);
    a.qp_state = IBV_QPS_RTS;
    a.timeout = (uint8_t)v->o.timeout;
    a.retry_cnt = (uint8_t)v->o.retry_cnt;
    a.rnr_retry = 7;
    a.sq_psn = h->psn;
    a.max_rd_atomic = (uint8_t)d->max_rd_atom;
    if (ibv_modify_qp(h->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                                     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC)) {
        vlog(v, 1, "peer %d rail %d: QP to RTS: %s", q->peer, q->rail, strerror(errno));
        return -1;
    }
    return 0;
}

/* qi's own queue pair to RTS towards the peer's, with the credit the
 * connection starts with, before either side can send. */
static int qp_connect(bfo_verbs *v, int qi)
{
    vqp *h = &v->qps[qi];
    if (qp_rts(v, qi, h) != 0)
        return -1;
    bfo_vg_granted(&v->g, qi, h->peer_grant);
    return 0;
}

static void ctl_close(vqp *h)
{
    if (h->cfd >= 0)
        close(h->cfd);
    h->cfd = -1;
    h->cin_got = h->cout_len = h->cout_off = 0;
}

/* One work completion, through the glue.  Sends, writes and reads complete
 * in order per QP. */
static void handle_wc(bfo_verbs *v, int qi, const struct ibv_wc *wc)
{
    bfo_verbs_rail_stats *st = &v->g.st[gq(v, qi)->rail];
    vqp *h = &v->qps[qi];
    if (wc->wr_id & RECV_BIT) {
        const int imm = wc->status == IBV_WC_SUCCESS && (wc->wc_flags & IBV_WC_WITH_IMM);
        bfo_vg_recv_wc_imm(&v->g, qi, (int)(wc->wr_id & 0xffffffffu), (int)wc->status, wc->byte_len, imm,
                           imm ? ntohl(wc->imm_data) : 0);
        return;
    }
    if (wc->wr_id == HPROBE_WRID) {
        bfo_vg_probe_wc(&v->g, qi, (int)wc->status);
        return;
    }
    if (wc->wr_id == CREDIT_WRID) {
        bfo_vg_credit_wc(&v->g, qi, (int)wc->status);
        return;
    }
    int i = (int)wc->wr_id;
    if (i < 0 || i >= v->g.nents) {
        bfo_vg_op_wc(&v->g, qi, -1, (int)wc->status);
        return;
    }
    vent *en = &v->ents[i];
    if (v->g.ents[i].kind == BFO_VG_SEND && en->slot >= 0) {
        h->sp->free[h->sp->nfree++] = en->slot;
        en->slot = -1;
    }
    if (wc->status == IBV_WC_SUCCESS) {
        if (v->g.ents[i].kind == BFO_VG_SEND) {
            st->frames_tx++;
            st->bytes_tx += en->len[0] + en->len[1];
        } else {
            st->rdma_bytes += en->rlen;
            if (v->g.ents[i].kind == BFO_VG_WRITE)
                st->rdma_writes++;
            else
                st->rdma_reads++;
        }
    }
    bfo_vg_op_wc(&v->g, qi, i, (int)wc->status);
}

static int poll_cq(bfo_verbs *v, int qi)
{
    struct ibv_wc wc[16];
    vqp *h = &v->qps[qi];
    int n, total = 0;
    if (!h->cq)
        return 0;
    while ((n = ibv_poll_cq(h->cq, 16, wc)) > 0) {
        for (int k = 0; k < n; k++)
            handle_wc(v, qi, &wc[k]);
        total += n;
        if (n < 16)
            break;
    }
    if (n < 0)
        bfo_vg_broken(&v->g, qi, 0, "ibv_poll_cq failed");
    return total;
}

/* The glue's flush: the control channel closes; the queue pair goes to
 * ERR, every flushed work request is collected (bounded wait), and it goes
 * to the reaper.  Send buffers of operations that never came back are free
 * again (the glue fails those operations next). */
static void g_flush(void *ctx, int qi)
{
    bfo_verbs *v = (bfo_verbs *)ctx;
    bfo_vg_qp *q = gq(v, qi);
    vqp *h = &v->qps[qi];
    ctl_close(h);
    h->rs.what = BFO_VU_NONE;
    free(h->dial); /* the handshake was this queue pair's */
    h->dial = NULL;
    if (h->qp) {
        struct ibv_qp_attr a;
        uint64_t until = bfo_tp_now() + 100000000ull; /* rxe flushes at once; bounded */
        memset(&a, 0, sizeof a);
        a.qp_state = IBV_QPS_ERR;
        ibv_modify_qp(h->qp, &a, IBV_QP_STATE);
        while ((q->sq_used > 0 || q->rposted > 0) && bfo_tp_now() < until) {
            if (poll_cq(v, qi) == 0)
                usleep(200);
        }
        poll_cq(v, qi); /* receives from the SRQ: what came before the error state */
        if (q->sq_used > 0 || q->rposted > 0)
            vlog(v, 2, "peer %d rail %d: %d operation(s) and %d receive(s) not flushed in time",
                 q->peer, q->rail, q->sq_used, q->rposted);
        vlog(v, 3, "peer %d rail %d: flushed; the queue pair goes to the %s", q->peer, q->rail,
             v->g.srq && v->started ? "SRQ drain (waits for LAST_WQE_REACHED)" : "reaper");
    }
    if (h->qp && v->g.srq && v->started && v->ndrain < v->drain_cap) {
        /* attached to the SRQ: destroyed once the device takes no more of
         * its receives (drain_run), not now */
        vdrain *e = &v->drain[v->ndrain++];
        e->qp = h->qp;
        e->cq = h->cq;
        e->d = v->rails[q->rail].d;
        e->peer = q->peer;
        e->rail = q->rail;
        e->last_wqe = h->last_wqe;
        e->since = bfo_tp_now();
    } else if (h->qp || h->cq) {
        reap(v, h->qp, h->cq);
    }
    h->qp = NULL;
    h->cq = NULL;
    h->last_wqe = 0;
    for (int k = q->posted.head; k >= 0; k = v->g.ents[k].next)
        if (v->g.ents[k].kind == BFO_VG_SEND && v->ents[k].slot >= 0) {
            h->sp->free[h->sp->nfree++] = v->ents[k].slot;
            v->ents[k].slot = -1;
        }
}

/* The closed queue pairs that were attached to the SRQ: once
 * LAST_WQE_REACHED came (or LAST_WQE_WAIT_NS passed: logged, and on
 * whatever it may still hold of the queue), their completion queue is read
 * a last time, a receive's buffer goes back to the queue (a frame there
 * came after the close: the engine had its connection's end already), and
 * the queue pair and its completion queue go to the reaper.  force: all of
 * them now (bfo_verbs_fini).  Returns how many went. */
static int drain_run(bfo_verbs *v, int force)
{
    uint64_t now = bfo_tp_now();
    int n = 0;
    for (int k = 0; k < v->ndrain;) {
        vdrain *e = &v->drain[k];
        int decide = bfo_vg_drain_decide(e->last_wqe, now - e->since, LAST_WQE_WAIT_NS, force);
        struct ibv_wc wc[16];
        int got;
        if (decide == BFO_VG_DRAIN_WAIT) {
            k++;
            continue;
        }
        if (decide == BFO_VG_DRAIN_TIMED_OUT) {
            /* at level 1 the first time (rxe of Linux 6.1 never sends the
             * event: every close ends here), then at 2 */
            vlog(v, v->last_wqe_timeouts++ ? 2 : 1,
                 "peer %d rail %d: no LAST_WQE_REACHED %.0f ms after the close: the queue pair is "
                 "destroyed anyway (receives it may hold of the SRQ are lost)",
                 e->peer, e->rail, (double)(now - e->since) / 1e6);
        }
        while (e->cq && (got = ibv_poll_cq(e->cq, 16, wc)) > 0)
            for (int i = 0; i < got; i++)
                if (wc[i].wr_id & RECV_BIT) {
                    int b = (int)(wc[i].wr_id & 0xffffffffu);
                    if (wc[i].status == IBV_WC_SUCCESS)
                        v->drain_late++;
                    if (!force && b >= 0 && b < v->devs[e->d].rp.n && srq_post(v, e->d, b) != 0)
                        vlog(v, 1, "receive buffer %d: the shared receive queue refused it (lost)", b);
                }
        vlog(v, 3, "peer %d rail %d: %s; the queue pair goes to the reaper", e->peer, e->rail,
             e->last_wqe ? "LAST_WQE_REACHED" : "drained");
        reap(v, e->qp, e->cq);
        *e = v->drain[--v->ndrain];
        n++;
    }
    return n;
}

/* ---------------------------------------------------------------- posting */

/* The registration an RDMA from or into p[0..len) goes through: one a
 * request holds (bfo_vc_find). */
static const vreg *reg_find(bfo_verbs *v, const void *p, size_t len)
{
    const int i = v->vc_on ? bfo_vc_find(&v->vc, p, len) : -1;
    return i >= 0 ? &v->regs[i] : NULL;
}

/* The glue's post: descriptor i on queue pair qi (its kick keeps the order
 * and the send queue's depth). */
static int g_post(void *ctx, int qi, int i)
{
    bfo_verbs *v = (bfo_verbs *)ctx;
    const bfo_vg_qp *q = gq(v, qi);
    vqp *h = &v->qps[qi];
    vent *en = &v->ents[i];
    int kind = v->g.ents[i].kind;
    struct ibv_sge sge;
    struct ibv_send_wr wr, *bad = NULL;
    const vrail *r = &v->rails[q->rail];
    if (kind == BFO_VG_SEND && h->sp->nfree == 0)
        return 1;
    memset(&wr, 0, sizeof wr);
    wr.wr_id = (uint64_t)i;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.send_flags = IBV_SEND_SIGNALED;
    if (kind == BFO_VG_SEND) {
        int s = h->sp->free[h->sp->nfree - 1];
        uint8_t *b = h->sp->buf + (size_t)s * v->max_frame;
        memcpy(b, en->base[0], en->len[0]);
        if (en->span) /* copied, or packed, straight into the registered send buffer */
            bfo_data_span_copy(en->span, 0, b + en->len[0], en->len[1]);
        else if (en->len[1])
            memcpy(b + en->len[0], en->base[1], en->len[1]);
        sge.addr = (uintptr_t)b;
        sge.length = (uint32_t)(en->len[0] + en->len[1]);
        sge.lkey = h->sp->mr->lkey;
        wr.opcode = IBV_WR_SEND;
        if (v->g.share > 0) { /* the credit given back rides along (bfo_vg_kick set it) */
            wr.opcode = IBV_WR_SEND_WITH_IMM;
            wr.imm_data = htonl(v->g.ents[i].imm);
        }
        en->slot = s;
    } else {
        const vreg *g = reg_find(v, en->local, en->rlen);
        if (!g || v->devs[r->d].dead || !g->mr[r->d]) {
            bfo_vg_broken(&v->g, qi, 0, "RDMA from memory that is not registered");
            return -1;
        }
        sge.addr = (uintptr_t)en->local;
        sge.length = (uint32_t)en->rlen;
        sge.lkey = g->mr[r->d]->lkey;
        wr.opcode = kind == BFO_VG_WRITE ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ;
        wr.wr.rdma.remote_addr = en->raddr;
        wr.wr.rdma.rkey = en->key;
    }
    if (ibv_post_send(h->qp, &wr, &bad) != 0) {
        en->slot = -1;
        bfo_vg_broken(&v->g, qi, 0, "ibv_post_send: %s", strerror(errno));
        return -1;
    }
    if (kind == BFO_VG_SEND)
        h->sp->nfree--;
    return 0;
}

/* The glue's credit message on queue pair qi: a signalled send of zero
 * bytes whose immediate data gives n credits back (BFO_VG_IMM_CREDIT). */
static int g_credit(void *ctx, int qi, uint32_t n)
{
    bfo_verbs *v = (bfo_verbs *)ctx;
    vqp *h = &v->qps[qi];
    struct ibv_send_wr wr, *bad = NULL;
    if (!h->qp)
        return 1;
    memset(&wr, 0, sizeof wr);
    wr.wr_id = CREDIT_WRID;
    wr.num_sge = 0;
    wr.opcode = IBV_WR_SEND_WITH_IMM;
    wr.imm_data = htonl(BFO_VG_IMM_CREDIT | n);
    wr.send_flags = IBV_SEND_SIGNALED;
    if (ibv_post_send(h->qp, &wr, &bad) != 0) {
        bfo_vg_broken(&v->g, qi, 0, "ibv_post_send (credit): %s", strerror(errno));
        return -1;
    }
    vlog(v, 3, "peer %d rail %d: %u credit(s) given back", gq(v, qi)->peer, gq(v, qi)->rail, n);
    return 0;
}

/* The glue's host probe on queue pair qi: a signalled RDMA WRITE of zero
 * bytes, no scatter list, no remote address or key (the responder checks
 * none for a zero-length access: IB spec C9-88; rxe's check_rkey skips
 * it).  The peer's adapter acknowledges it without its process. */
static int g_host_probe(void *ctx, int qi)
{
    bfo_verbs *v = (bfo_verbs *)ctx;
    vqp *h = &v->qps[qi];
    struct ibv_send_wr wr, *bad = NULL;
    if (!h->qp)
        return 1;
    memset(&wr, 0, sizeof wr);
    wr.wr_id = HPROBE_WRID;
    wr.sg_list = NULL;
    wr.num_sge = 0;
    wr.opcode = IBV_WR_RDMA_WRITE;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.rdma.remote_addr = 0;
    wr.wr.rdma.rkey = 0;
    if (ibv_post_send(h->qp, &wr, &bad) != 0) {
        bfo_vg_broken(&v->g, qi, 0, "ibv_post_send (host probe): %s", strerror(errno));
        return -1;
    }
    vlog(v, 3, "peer %d rail %d: host probe posted", gq(v, qi)->peer, gq(v, qi)->rail);
    return 0;
}

static int post_common(bfo_verbs *v, int peer, int rail, int kind, uint64_t token, vent **out)
{
    int i;
    if (!v->started)
        return -1;
    i = bfo_vg_alloc(&v->g, peer, rail, kind);
    if (i < 0)
        return -1;
    v->g.ents[i].token = token;
    *out = &v->ents[i];
    memset(*out, 0, sizeof **out);
    (*out)->slot = -1;
    return i;
}

static int v_post_send(void *ctx, int peer, int rail, const bfo_iov *iov, int iovcnt, uint64_t token)
{
    bfo_verbs *v = (bfo_verbs *)ctx;
    size_t len = 0;
    vent *en;
    int i;
    if (iovcnt < 1 || iovcnt > 2)
        return -1;
    for (int k = 0; k < iovcnt; k++)
        len += iov[k].len;
    if (len > v->max_frame || len == 0)
        return -1;
    i = post_common(v, peer, rail, BFO_VG_SEND, token, &en);
    if (i < 0)
        return -1;
    en->base[0] = iov[0].base;
    en->len[0] = iov[0].len;
    en->base[1] = iovcnt > 1 ? iov[1].base : NULL;
    en->len[1] = iovcnt > 1 ? iov[1].len : 0;
    /* the engine's PROBE: its answer is awaited (bfo_vg_keepalive) */
    v->g.ents[i].probe = iov[0].len > 0 && *(const uint8_t *)iov[0].base == BFO_FRAG_PROBE;
    bfo_vg_post(&v->g, i);
    return 0;
}

/* Described data (bfo_data.h): read into the send buffer when the frame is
 * posted to the queue pair (g_post), no copy before it. */
static int v_post_send_data(void *ctx, int peer, int rail, const bfo_iov *hdr,
                            const bfo_data_span *data, uint64_t token)
{
    bfo_verbs *v = (bfo_verbs *)ctx;
    vent *en;
    int i;
    if (hdr->len + data->len > v->max_frame)
        return -1;
    i = post_common(v, peer, rail, BFO_VG_SEND, token, &en);
    if (i < 0)
        return -1;
    en->base[0] = hdr->base;
    en->len[0] = hdr->len;
    en->base[1] = NULL;
    en->len[1] = data->len;
    en->span = data;
    bfo_vg_post(&v->g, i);
    return 0;
}

static int v_post_rdma(bfo_verbs *v, int kind, int peer, int rail, void *local, size_t len,
                       uint64_t raddr, uint32_t key, uint64_t token)
{
    vent *en;
    int i;
    if (len == 0 || len > 0x7fffffffu || !reg_find(v, local, len))
        return -1;
    i = post_common(v, peer, rail, kind, token, &en);
    if (i < 0)
        return -1;
    en->local = (char *)local;
    en->rlen = len;
    en->raddr = raddr;
    en->key = key;
    bfo_vg_post(&v->g, i);
    return 0;
}

static int v_post_write(void *ctx, int peer, int rail, const void *local, size_t len, uint64_t raddr,
                        uint32_t key, uint64_t token)
{
    return v_post_rdma((bfo_verbs *)ctx, BFO_VG_WRITE, peer, rail, (void *)(uintptr_t)local, len,
                       raddr, key, token);
}

static int v_post_read(void *ctx, int peer, int rail, void *local, size_t len, uint64_t raddr,
                       uint32_t key, uint64_t token)
{
    return v_post_rdma((bfo_verbs *)ctx, BFO_VG_READ, peer, rail, local, len, raddr, key, token);
}

/* ------------------------------------------------------ registration cache */

/* Deregisters slot i's MRs (the slot is the owner's: REG or DROP).
 * ibv_dereg_mr may free or unmap, and so run the memory hooks, which come
 * back to bfo_vc_released: no lock of the cache is held here. */
static void reg_drop(bfo_verbs *v, int i)
{
    vreg *g = &v->regs[i];
    for (int s = 0; s < MAX_DEV; s++)
        if (g->mr[s]) {
            ibv_dereg_mr(g->mr[s]);
            g->mr[s] = NULL;
        }
}

/* A safe point (reg_mem, dereg_mem, progress: never inside a memory
 * hook): deregisters the idle regions a release marked. */
static void reg_collect(bfo_verbs *v)
{
    int i;
    while (v->vc_on && (i = bfo_vc_collect(&v->vc)) >= 0) {
        reg_drop(v, i);
        bfo_vc_free(&v->vc, i);
    }
}

/* Each rail's key: the rkey of the MR on that rail's device. */
static void reg_keys(const bfo_verbs *v, const vreg *g, uint32_t *keys)
{
    for (int r = 0; r < v->nrails; r++)
        keys[r] = g->mr[v->rails[r].d] ? g->mr[v->rails[r].d]->rkey : 0;
}

/* The adapter's access for a role: no more than it needs (a remote write
 * needs the local one too, as verbs requires). */
static int reg_ibv_access(unsigned access)
{
    int a = 0;
    if (access & BFO_MEM_REMOTE_READ)
        a |= IBV_ACCESS_REMOTE_READ;
    if (access & BFO_MEM_REMOTE_WRITE)
        a |= IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE;
    if (access & BFO_MEM_LOCAL_WRITE)
        a |= IBV_ACCESS_LOCAL_WRITE;
    return a;
}

static int v_reg_mem(void *ctx, void *buf, size_t len, unsigned access, uint64_t *raddr, uint32_t *keys,
                     uint64_t *handle)
{
    bfo_verbs *v = (bfo_verbs *)ctx;
    int i, evict;
    if (!buf || !len || !v->vc_on)
        return -1;
    reg_collect(v);
    i = bfo_vc_get(&v->vc, buf, len, access); /* the same region, for the same role */
    if (i >= 0) {
        v->g.st[0].reg_hits++;
        *raddr = (uint64_t)(uintptr_t)buf;
        reg_keys(v, &v->regs[i], keys);
        *handle = (uint64_t)i + 1;
        return 0;
    }
    v->g.st[0].reg_misses++;
    i = bfo_vc_reserve(&v->vc, buf, len, access, &evict);
    if (i < 0)
        return -1; /* every slot held: the engine uses a copy protocol */
    if (evict)
        reg_drop(v, i);
    for (int d = 0; d < v->ndev; d++) { /* every device: each rail's peer gets its own rkey */
        if (v->devs[d].dead)
            continue; /* its rails are down: their keys stay 0 */
        v->regs[i].mr[d] = ibv_reg_mr(v->devs[d].pd, buf, len, reg_ibv_access(access));
        if (!v->regs[i].mr[d]) {
            vlog(v, 1, "ibv_reg_mr(%zu bytes) on %s: %s", len, v->devs[d].name, strerror(errno));
            reg_drop(v, i);
            bfo_vc_abort(&v->vc, i);
            return -1;
        }
    }
    bfo_vc_publish(&v->vc, i);
    *raddr = (uint64_t)(uintptr_t)buf;
    reg_keys(v, &v->regs[i], keys);
    *handle = (uint64_t)i + 1;
    return 0;
}

static void v_dereg_mem(void *ctx, uint64_t handle)
{
    bfo_verbs *v = (bfo_verbs *)ctx;
    const int i = (int)handle - 1;
    if (handle < 1 || handle > (uint64_t)v->nregs || !v->vc_on)
        return;
    if (bfo_vc_put(&v->vc, i) == 1) { /* no cache, or its memory was released */
        reg_drop(v, i);
        bfo_vc_free(&v->vc, i);
    }
    reg_collect(v);
}

/* From memory hooks, any thread (bfo_transport_ops.mem_released): marks only. */
static void v_mem_released(bfo_verbs *v, const void *buf, size_t len)
{
    if (v->vc_on)
        bfo_vc_released(&v->vc, buf, len);
}

void bfo_verbs_uncache(bfo_verbs *v, const void *buf, size_t len)
{
    v_mem_released(v, buf, len);
    reg_collect(v);
}

/* ------------------------------------------------------------- connecting */

static int v_connect(void *ctx, int peer, int rail)
{
    bfo_verbs *v = (bfo_verbs *)ctx;
    if (!v->started)
        return -1;
    return bfo_vg_connect(&v->g, peer, rail); /* fed to the conn machine at the next progress */
}

/* The engine mapped the rail out (its probe timed out, the peer's BROKEN
 * notice): the glue marks the queue pair it was told about (bfo_vg_disconnect). */
static void v_disconnect(void *ctx, int peer, int rail)
{
    bfo_verbs *v = (bfo_verbs *)ctx;
    if (v->started)
        bfo_vg_disconnect(&v->g, peer, rail);
}

/* The peer said goodbye, or this side leaves (bfo_vg_part). */
static void v_part(void *ctx, int peer, int rail)
{
    bfo_verbs *v = (bfo_verbs *)ctx;
    if (v->started)
        bfo_vg_part(&v->g, peer, rail);
}

static int port_active(bfo_verbs *v, int rail)
{
    const vrail *r = &v->rails[rail];
    struct ibv_port_attr pa;
    if (v->devs[r->d].dead || v->g.rail_dead[rail])
        return 0;
    if (!v->g.port_up[rail] && ibv_query_port(v->devs[r->d].ctx, (uint8_t)r->port, &pa) == 0 &&
        pa.state == IBV_PORT_ACTIVE)
        v->g.port_up[rail] = 1;
    return v->g.port_up[rail];
}

static void ctl_send_now(bfo_verbs *v, int qi)
{
    vqp *h = &v->qps[qi];
    while (h->cfd >= 0 && h->cout_off < h->cout_len) {
        ssize_t w = send(h->cfd, h->cout + h->cout_off, h->cout_len - h->cout_off,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                bfo_vg_broken(&v->g, qi, 0, "control channel: send: %s", strerror(errno));
            return;
        }
        h->cout_off += (size_t)w;
    }
}

static void ctl_send_msg(bfo_verbs *v, int qi, int kind)
{
    vqp *h = &v->qps[qi];
    ctl_encode(v, qi, kind, h->cout);
    h->cout_len = BFO_VERBS_CTL_SIZE;
    h->cout_off = 0;
    ctl_send_now(v, qi);
}

/* The conn machine's dial (the attempt numbered, the deadline armed, the
 * port checked): a new queue pair, and the control connection to the
 * peer's address.  DIAL_FAILED when it cannot even start. */
static int dial(bfo_verbs *v, int qi)
{
    bfo_vg_qp *q = gq(v, qi);
    vqp *h = &v->qps[qi];
    struct sockaddr_in me, them;
    bfo_addr to;
    int one = 1;
    if (qp_create(v, qi) != 0)
        return BFO_CONN_EV_DIAL_FAILED; /* logged; close destroys what was made */
    memset(&me, 0, sizeof me);
    memset(&them, 0, sizeof them);
    me.sin_family = them.sin_family = AF_INET;
    me.sin_addr.s_addr = htonl(v->rails[q->rail].ip);
    if (!v->sink.lookup || v->sink.lookup(v->sink.ctx, q->peer, q->rail, &to) != BFO_OK || to.len != 8 ||
        to.bytes[0] != 4) {
        vlog(v, 1, "peer %d rail %d: control channel: the peer published no verbs address for this rail",
             q->peer, q->rail);
        return BFO_CONN_EV_DIAL_FAILED;
    }
    memcpy(&them.sin_port, to.bytes + 2, 2);
    memcpy(&them.sin_addr, to.bytes + 4, 4);
    h->cfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (h->cfd < 0) {
        vlog(v, 1, "peer %d rail %d: control channel: socket: %s", q->peer, q->rail, strerror(errno));
        return BFO_CONN_EV_DIAL_FAILED;
    }
    setsockopt(h->cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    vlog(v, 3, "peer %d rail %d: dialing (attempt %llu)", q->peer, q->rail,
         (unsigned long long)q->link.attempt);
    if (bind(h->cfd, (struct sockaddr *)&me, sizeof me) != 0)
        bfo_vg_broken(&v->g, qi, 0, "control channel: bind: %s", strerror(errno));
    else if (connect(h->cfd, (struct sockaddr *)&them, sizeof them) != 0 && errno != EINPROGRESS)
        bfo_vg_broken(&v->g, qi, 0, "control channel: connect: %s", strerror(errno));
    return 0;
}

/* The acceptor takes the peer's REQ (the conn machine closed what the rail
 * had): its control connection becomes the queue pair's, and a new queue
 * pair goes to RTS towards the peer's. */
static void take(bfo_verbs *v, int qi, vpend *p)
{
    vqp *h = &v->qps[qi];
    int rank;
    char why[128];
    h->cfd = p->a.fd;
    p->a.fd = -1;
    h->cin_got = 0;
    ctl_decode(v, p->buf, BFO_VERBS_K_REQ, p->a.rail, &rank, h, NULL, why, sizeof why); /* checked */
    if (qp_create(v, qi) != 0 || qp_connect(v, qi) != 0)
        bfo_vg_broken(&v->g, qi, 0, "cannot bring a queue pair up for the peer's request");
}

static void pend_close(bfo_verbs *v, vpend *p, const char *why);
static int ud_dial(bfo_verbs *v, int qi);
static void ud_send(bfo_verbs *v, int qi, int kind);
static void ud_take(bfo_verbs *v, int qi, const bfo_vu_msg *s);
static void auth_hello(bfo_verbs *v, int qi);
static void claim_challenge(bfo_verbs *v, int qi, struct vclaim *c);
static void claim_take(bfo_verbs *v, int qi, struct vclaim *c);
static void claim_drop(bfo_verbs *v, struct vclaim *c);

/* The device's part of the conn machine's actions (bfo_vg_hw.conn). */
static int g_conn(void *ctx, int qi, int action, void *arg)
{
    bfo_verbs *v = (bfo_verbs *)ctx;
    vpend *p = (vpend *)arg; /* take, refuse: the accepted control connection */
    if (!v->o.tcp_exchange) { /* over UD (bfo_va_op): authenticated, arg is a claim (vclaim); else
                               * the REQ (bfo_vu_msg) for take */
        switch (bfo_va_op(v->o.auth != NULL, action, arg)) {
        case BFO_VA_OP_DIAL:
            return ud_dial(v, qi);
        case BFO_VA_OP_REQ:
            if (v->o.auth)
                auth_hello(v, qi);
            else
                ud_send(v, qi, BFO_VERBS_K_REQ);
            bfo_vu_arm(&v->qps[qi].rs, BFO_VU_SEND_REQ, v->g.now);
            return 0;
        case BFO_VA_OP_TAKE_REQ:
            ud_take(v, qi, (const bfo_vu_msg *)arg);
            return 0;
        case BFO_VA_OP_REP:
            ud_send(v, qi, BFO_VERBS_K_REP); /* PEER_READY comes with the RTU */
            bfo_vu_arm(&v->qps[qi].rs, BFO_VU_SEND_REP, v->g.now);
            return 0;
        case BFO_VA_OP_TAKE_CLAIM:
            claim_take(v, qi, (vclaim *)arg);
            return 0;
        case BFO_VA_OP_CHALLENGE:
            claim_challenge(v, qi, (vclaim *)arg);
            return 0;
        case BFO_VA_OP_DROP_CLAIM: /* its queue pair goes */
            claim_drop(v, (vclaim *)arg);
            return 0;
        default: /* a refused REQ: a datagram, nothing to close, left unanswered */
            return 0;
        }
    }
    switch (action) {
    case BFO_CONN_ACT_DIAL:
        return dial(v, qi);
    case BFO_CONN_ACT_SEND_HELLO:
        ctl_send_msg(v, qi, BFO_VERBS_K_REQ);
        return 0;
    case BFO_CONN_ACT_TAKE:
        take(v, qi, p);
        return 0;
    case BFO_CONN_ACT_SEND_REPLY:
        ctl_send_msg(v, qi, BFO_VERBS_K_REP); /* PEER_READY comes with the RTU */
        return 0;
    case BFO_CONN_ACT_REFUSE:
    case BFO_CONN_ACT_REFUSE_TIE: /* no "dialing you" on this exchange: closed (bfo_verbs_glue.h) */
        pend_close(v, p, NULL); /* the glue logged why */
        return 0;
    default:
        return 0;
    }
}

/* connect() requests, fed to the conn machine (the ports' state looked up
 * first: a down port fails the connect at once). */
static void handle_connects(bfo_verbs *v)
{
    if (!v->g.lb.asked)
        return;
    for (int r = 0; r < v->nrails; r++)
        (void)port_active(v, r);
    bfo_vg_connects(&v->g);
}

/* The dialer's side of the exchange. */
static void dialer_io(bfo_verbs *v, int qi)
{
    bfo_vg_qp *q = gq(v, qi);
    vqp *h = &v->qps[qi];
    char why[128];
    int rank;
    uint32_t gen;
    if (q->link.fsm.cs == BFO_CONN_ST_DIALING) {
        struct pollfd pf = { h->cfd, POLLOUT, 0 };
        int err = 0;
        socklen_t el = sizeof err;
        if (poll(&pf, 1, 0) <= 0)
            return;
        if (getsockopt(h->cfd, SOL_SOCKET, SO_ERROR, &err, &el) != 0 || err) {
            bfo_vg_broken(&v->g, qi, 0, "control channel: connect: %s", strerror(err ? err : errno));
            return;
        }
        bfo_vg_dialed(&v->g, qi); /* the conn machine sends the REQ */
    }
    ctl_send_now(v, qi);
    if (q->link.fsm.cs != BFO_CONN_ST_HELLO_SENT || q->link.broken)
        return;
    while (h->cin_got < BFO_VERBS_CTL_SIZE) {
        ssize_t n = recv(h->cfd, h->cin + h->cin_got, BFO_VERBS_CTL_SIZE - h->cin_got, MSG_DONTWAIT);
        if (n == 0) {
            bfo_vg_broken(&v->g, qi, 0, "control channel closed by the peer before its reply");
            return;
        }
        if (n < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                bfo_vg_broken(&v->g, qi, 0, "control channel: receive: %s", strerror(errno));
            return;
        }
        h->cin_got += (size_t)n;
    }
    if (ctl_decode(v, h->cin, BFO_VERBS_K_REP, q->rail, &rank, h, &gen, why, sizeof why) != 0 ||
        rank != q->peer || gen != (uint32_t)q->link.attempt) {
        bfo_vg_broken(&v->g, qi, 1, "reply: %s",
                      rank < 0 ? why /* not a valid reply */
                      : rank != q->peer ? "from the wrong rank"
                      : gen != (uint32_t)q->link.attempt ? "to another attempt"
                                                         : why);
        return;
    }
    if (qp_connect(v, qi) != 0) {
        bfo_vg_broken(&v->g, qi, 0, "cannot bring the queue pair up");
        return;
    }
    ctl_send_msg(v, qi, BFO_VERBS_K_RTU);
    if (q->link.broken)
        return;
    ctl_close(h); /* a short message on a fresh connection: sent */
    bfo_vg_reply(&v->g, qi, 0); /* up: CONNECTED (the TCP exchange's REP names no dial given up) */
}

static void acceptor_io(bfo_verbs *v, int qi)
{
    bfo_vg_qp *q = gq(v, qi);
    vqp *h = &v->qps[qi];
    char why[128];
    int rank;
    ctl_send_now(v, qi);
    while (!q->link.broken && h->cin_got < BFO_VERBS_CTL_SIZE) {
        ssize_t n = recv(h->cfd, h->cin + h->cin_got, BFO_VERBS_CTL_SIZE - h->cin_got, MSG_DONTWAIT);
        if (n == 0) {
            bfo_vg_broken(&v->g, qi, 0, "control channel closed by the peer before its RTU");
            return;
        }
        if (n < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                bfo_vg_broken(&v->g, qi, 0, "control channel: receive: %s", strerror(errno));
            return;
        }
        h->cin_got += (size_t)n;
    }
    if (q->link.broken)
        return;
    if (ctl_decode(v, h->cin, BFO_VERBS_K_RTU, q->rail, &rank, NULL, NULL, why, sizeof why) != 0 ||
        rank != q->peer) {
        bfo_vg_broken(&v->g, qi, 1, "RTU: %s", rank >= 0 && rank != q->peer ? "from the wrong rank" : why);
        return;
    }
    ctl_close(h);
    bfo_vg_ready(&v->g, qi); /* up: CONNECTED */
}

static void pend_close(bfo_verbs *v, vpend *p, const char *why)
{
    if (why) {
        v->g.st[p->a.rail].malformed++;
        vlog(v, 1, "rail %d: control connection dropped: %s", p->a.rail, why);
    }
    bfo_tp_pend_close(&v->pends, &p->a);
}

static vpend *pend_at(bfo_verbs *v, int k) { return (vpend *)(void *)bfo_tp_pend_at(&v->pends, k); }

static void accept_all(bfo_verbs *v)
{
    int k;
    for (int r = 0; r < v->nrails; r++)
        while ((k = bfo_tp_accept(&v->pends, &v->lg, v->rails[r].lfd, r, v->g.now)) >= 0)
            pend_at(v, k)->got = 0;
    for (int k = 0; k < v->pends.n; k++) {
        vpend *p = pend_at(v, k);
        char why[128];
        int rank, qi;
        uint32_t gen;
        if (p->a.fd < 0)
            continue;
        int r = bfo_tp_read_hello(p->a.fd, p->buf, &p->got, BFO_VERBS_CTL_SIZE);
        if (r < 0) {
            pend_close(v, p, r == BFO_TP_EOF && p->got ? "closed inside its request" : NULL);
            continue;
        }
        if (r == 0) {
            if (v->g.now >= p->a.deadline)
                pend_close(v, p, p->got ? "no complete request in time" : NULL);
            continue;
        }
        if (ctl_decode(v, p->buf, BFO_VERBS_K_REQ, p->a.rail, &rank, NULL, &gen, why, sizeof why) != 0) {
            pend_close(v, p, why);
            continue;
        }
        qi = qi_of(v, rank, p->a.rail);
        if (!port_active(v, p->a.rail)) {
            pend_close(v, p, NULL); /* no queue pair can answer it now */
            continue;
        }
        /* the conn machine takes it (take, the REP), or refuses it: a
         * stale attempt, or a tie this side's dial wins */
        bfo_vg_hello(&v->g, qi, gen, p);
        if (p->a.fd >= 0)
            pend_close(v, p, NULL);
    }
}

static void control_io(bfo_verbs *v)
{
    for (int qi = 0; qi < v->size * v->nrails; qi++) {
        const bfo_vg_qp *q = gq(v, qi);
        int cs = q->link.fsm.cs;
        if (v->qps[qi].cfd < 0 || q->link.broken)
            continue;
        if (cs == BFO_CONN_ST_DIALING || cs == BFO_CONN_ST_HELLO_SENT)
            dialer_io(v, qi);
        else if (cs == BFO_CONN_ST_REPLY_SENT || cs == BFO_CONN_ST_REPLY_SENT_ASKED)
            acceptor_io(v, qi);
    }
}


/* ------------------------------------------------- the exchange over UD */

/* Receive slot k of rail r posted on its UD queue pair. */
static int ud_post_recv(bfo_verbs *v, int r, int k)
{
    vrail *ra = &v->rails[r];
    return post_recv_one(ra->uqp, ra->ubuf + (size_t)k * UD_SLOT, UD_SLOT, ra->umr->lkey, k);
}

/* The rail's UD queue pair from RESET to RTS, every receive slot posted,
 * every send slot free.  Its number stays what the card says. */
static int ud_up(bfo_verbs *v, int r)
{
    vrail *ra = &v->rails[r];
    struct ibv_qp_attr a;
    memset(&a, 0, sizeof a);
    a.qp_state = IBV_QPS_INIT;
    a.pkey_index = 0;
    a.port_num = (uint8_t)ra->port;
    a.qkey = BFO_VU_QKEY;
    if (ibv_modify_qp(ra->uqp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
        return -1;
    for (int k = 0; k < UD_RECV; k++)
        if (ud_post_recv(v, r, k) != 0)
            return -1;
    memset(&a, 0, sizeof a);
    a.qp_state = IBV_QPS_RTR;
    if (ibv_modify_qp(ra->uqp, &a, IBV_QP_STATE))
        return -1;
    memset(&a, 0, sizeof a);
    a.qp_state = IBV_QPS_RTS;
    a.sq_psn = 0;
    if (ibv_modify_qp(ra->uqp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
        return -1;
    ra->nusfree = 0;
    for (int k = 0; k < UD_SEND; k++)
        ra->usfree[ra->nusfree++] = UD_RECV + k;
    ra->ud_bad = 0;
    return 0;
}

/* At open: the rail's UD queue pair (its completions on the device's
 * channel, as the RC ones), RTS. */
static int ud_open(bfo_verbs *v, int r)
{
    vrail *ra = &v->rails[r];
    vdev *d = &v->devs[ra->d];
    struct ibv_qp_init_attr ia;
    size_t bytes = (size_t)(UD_RECV + UD_SEND) * UD_SLOT;
    ra->ucq = ibv_create_cq(d->ctx, UD_RECV + UD_SEND + 4, NULL, d->ch, 0);
    ra->ubuf = (uint8_t *)calloc(1, bytes);
    if (!ra->ucq || !ra->ubuf)
        return -1;
    ra->umr = ibv_reg_mr(d->pd, ra->ubuf, bytes, IBV_ACCESS_LOCAL_WRITE);
    if (!ra->umr)
        return -1;
    memset(&ia, 0, sizeof ia);
    ia.send_cq = ra->ucq;
    ia.recv_cq = ra->ucq;
    ia.qp_type = IBV_QPT_UD;
    ia.cap.max_send_wr = UD_SEND;
    ia.cap.max_recv_wr = UD_RECV;
    ia.cap.max_send_sge = 1;
    ia.cap.max_recv_sge = 1;
    ra->uqp = ibv_create_qp(d->pd, &ia);
    if (!ra->uqp)
        return -1;
    return ud_up(v, r);
}

/* Back to RTS after an error (the same queue pair number: peers have it
 * on the card); what was in its queues is lost, and goes again. */
static void ud_reset(bfo_verbs *v, int r)
{
    vrail *ra = &v->rails[r];
    struct ibv_qp_attr a;
    memset(&a, 0, sizeof a);
    a.qp_state = IBV_QPS_RESET;
    if (ibv_modify_qp(ra->uqp, &a, IBV_QP_STATE) == 0) {
        struct ibv_wc wc[16]; /* completions of the old queues: not ours any more */
        while (ibv_poll_cq(ra->ucq, 16, wc) > 0)
            ;
    }
    if (ud_up(v, r) != 0) {
        vlog(v, 1, "rail %d: the UD queue pair cannot be brought back: %s", r, strerror(errno));
        return;
    }
    vlog(v, 2, "rail %d: the UD queue pair is back (queue pair %u)", r, ra->uqp->qp_num);
}

/* The peer's card for qi's rail, read, and an address handle to its UD
 * queue pair: 0, or -1 (said once at level 1: no usable card). */
static int ud_peer(bfo_verbs *v, int qi)
{
    const bfo_vg_qp *q = gq(v, qi);
    const vrail *ra = &v->rails[q->rail];
    bfo_vu_card *c = &v->pcard[qi];
    bfo_addr to;
    char why[160];
    struct ibv_ah_attr aa;
    if (v->ah[qi])
        return 0;
    if (v->pcard_st[qi] == 2)
        return -1;
    why[0] = 0;
    if (!v->sink.lookup || v->sink.lookup(v->sink.ctx, q->peer, q->rail, &to) != BFO_OK)
        snprintf(why, sizeof why, "the peer published no verbs card for this rail");
    else if (bfo_vu_card_read(to.bytes, to.len, c, why, sizeof why) != 0)
        ;
    else if (c->version == 1)
        snprintf(why, sizeof why, "the peer takes the control exchange over TCP (verbs.tcp_exchange=1, or "
                 "an older bfo): set the same verbs.tcp_exchange on every rank");
    else if (!(c->flags & BFO_VU_CARD_UD))
        snprintf(why, sizeof why, "the peer's card names no UD queue pair");
    if (why[0]) {
        vlog(v, 1, "peer %d rail %d: %s", q->peer, q->rail, why);
        v->pcard_st[qi] = 2;
        return -1;
    }
    v->pcard_st[qi] = 1;
    memset(&aa, 0, sizeof aa);
    aa.dlid = c->lid;
    aa.port_num = (uint8_t)ra->port;
    if (!ra->is_ib || ra->gid_index > 0) {
        aa.is_global = 1;
        memcpy(aa.grh.dgid.raw, c->gid, 16);
        aa.grh.sgid_index = (uint8_t)ra->gid_index;
        aa.grh.hop_limit = 64;
    }
    v->ah[qi] = ibv_create_ah(v->devs[ra->d].pd, &aa);
    if (!v->ah[qi]) {
        vlog(v, 1, "peer %d rail %d: ibv_create_ah: %s", q->peer, q->rail, strerror(errno));
        return -1; /* tried again at the next dial */
    }
    return 0;
}

/* A message of len bytes (a control message, with its handshake part when
 * authenticated) as a datagram to qi's peer's UD queue pair: m, or when m
 * is NULL the control message of kind `kind` made now.  No free send slot:
 * not sent (it goes again on its timer; an RTU's loss is made good by the
 * REP coming again, or by the dialer's first frame). */
static void ud_send_msg(bfo_verbs *v, int qi, int kind, const uint8_t *m, size_t len)
{
    const bfo_vg_qp *q = gq(v, qi);
    vrail *ra = &v->rails[q->rail];
    struct ibv_sge sge;
    struct ibv_send_wr wr, *bad = NULL;
    int k;
    if (ud_peer(v, qi) != 0) {
        if (!m) /* a claim's REP (m) has a queue pair of its own, not the link's */
            bfo_vg_broken(&v->g, qi, 0, "no UD queue pair of the peer to answer");
        return;
    }
    if (ra->nusfree == 0 || ra->ud_bad) {
        vlog(v, 3, "peer %d rail %d: no UD send slot: the datagram waits for its timer", q->peer, q->rail);
        return;
    }
    k = ra->usfree[--ra->nusfree];
    if (m)
        memcpy(ra->ubuf + (size_t)k * UD_SLOT, m, len);
    else
        ctl_encode(v, qi, kind, ra->ubuf + (size_t)k * UD_SLOT);
    sge.addr = (uintptr_t)(ra->ubuf + (size_t)k * UD_SLOT);
    sge.length = m ? (uint32_t)len : BFO_VERBS_CTL_SIZE;
    sge.lkey = ra->umr->lkey;
    memset(&wr, 0, sizeof wr);
    wr.wr_id = (uint64_t)k;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.ud.ah = v->ah[qi];
    wr.wr.ud.remote_qpn = v->pcard[qi].qpn;
    wr.wr.ud.remote_qkey = v->pcard[qi].qkey;
    if (ibv_post_send(ra->uqp, &wr, &bad) != 0) {
        ra->usfree[ra->nusfree++] = k;
        vlog(v, 2, "peer %d rail %d: UD send: %s", q->peer, q->rail, strerror(errno));
        return;
    }
    vlog(v, 3, "peer %d rail %d: %s sent (attempt %u%s)", q->peer, q->rail,
         kind == BFO_VERBS_K_REQ ? "REQ" : kind == BFO_VERBS_K_REP ? "REP" : "RTU",
         m ? bfo_get32(m + 52) : (uint32_t)q->link.attempt, m ? ", authenticated" : "");
}

/* One control message of qi's own: with its handshake part when
 * authenticated (the dialer's REQ and RTU as made once: the same bytes
 * each time), else made now. */
static void ud_send(bfo_verbs *v, int qi, int kind)
{
    const bfo_va_dial *d = v->qps[qi].dial;
    if (v->o.auth && kind == BFO_VERBS_K_REQ) {
        if (d)
            ud_send_msg(v, qi, kind, d->req, sizeof d->req);
        return;
    }
    if (v->o.auth && kind == BFO_VERBS_K_RTU) {
        if (d && d->proven)
            ud_send_msg(v, qi, kind, d->rtu, sizeof d->rtu);
        return;
    }
    ud_send_msg(v, qi, kind, NULL, 0);
}

/* ------------------------------------------------- AUTHENTICATION (UD) */

/* 1 when options.auth holds the peer's public key, asking the embedding
 * layer for it (options.auth_peer) when it does not yet. */
static int auth_has_peer(bfo_verbs *v, int peer)
{
    if (bfo_auth_has_peer(v->o.auth, peer))
        return 1;
    return v->o.auth_peer && v->o.auth_peer(v->o.auth_peer_ctx, peer) == 0 && bfo_auth_has_peer(v->o.auth, peer);
}

/* The conn machine's send_hello, authenticated: the REQ with a fresh
 * HELLO, made once for the attempt (sent again as it is). */
static void auth_hello(bfo_verbs *v, int qi)
{
    bfo_vg_qp *q = gq(v, qi);
    vqp *h = &v->qps[qi];
    uint8_t ctl[BFO_VERBS_CTL_SIZE];
    if (!h->dial && !(h->dial = (bfo_va_dial *)malloc(sizeof *h->dial))) {
        bfo_vg_broken(&v->g, qi, 0, "no memory for the handshake");
        return;
    }
    ctl_encode(v, qi, BFO_VERBS_K_REQ, ctl);
    if (bfo_va_req_make(v->o.auth, h->dial, ctl, q->peer, q->rail, (uint32_t)q->link.attempt) != BFO_OK) {
        bfo_vg_broken(&v->g, qi, 0, "no handshake for rank %d (its public key is gone?)", q->peer);
        return;
    }
    ud_send(v, qi, BFO_VERBS_K_REQ);
}

/* A claim's index among qi's, -1 when not held (gone: c is not read). */
static int claim_slot(const bfo_verbs *v, int qi, const vclaim *c)
{
    for (int k = 0; k < VCLAIMS; k++)
        if (v->qps[qi].cl[k] == &c->c)
            return k;
    return -1;
}

/* A claim let go: its queue pair destroyed (through the SRQ drain when
 * attached to it, as a closed one), its slot free. */
static void claim_drop(bfo_verbs *v, vclaim *c)
{
    int k = claim_slot(v, c->qi, c);
    if (k >= 0)
        v->qps[c->qi].cl[k] = NULL;
    if (c->h.qp) {
        struct ibv_qp_attr a;
        memset(&a, 0, sizeof a);
        a.qp_state = IBV_QPS_ERR;
        ibv_modify_qp(c->h.qp, &a, IBV_QP_STATE);
    }
    if (c->h.qp && v->g.srq && v->started && v->ndrain < v->drain_cap) {
        vdrain *e = &v->drain[v->ndrain++];
        e->qp = c->h.qp;
        e->cq = c->h.cq;
        e->d = v->rails[gq(v, c->qi)->rail].d;
        e->peer = gq(v, c->qi)->peer;
        e->rail = gq(v, c->qi)->rail;
        e->last_wqe = 0;
        e->since = bfo_tp_now();
    } else if (c->h.qp || c->h.cq) {
        reap(v, c->h.qp, c->h.cq);
    }
    memset(c, 0, sizeof *c);
    free(c);
}

/* The conn machine's send_reply to a claim: a queue pair of the claim's
 * own, to RTS towards the claimant's (the REQ's), and the REP that
 * challenges it (REPLY, BIND), sent until the RTU or the deadline.  The
 * (peer, rail)'s own queue pair stays as it is. */
static void claim_challenge(bfo_verbs *v, int qi, vclaim *c)
{
    uint8_t ctl[BFO_VERBS_CTL_SIZE];
    if (qp_make(v, qi, &c->h) != 0 || qp_rts(v, qi, &c->h) != 0) {
        vlog(v, 1, "peer %d rail %d: no queue pair to answer a request with", gq(v, qi)->peer, gq(v, qi)->rail);
        return; /* not challenged: dropped after the feed */
    }
    ctl_encode_qp(v, qi, BFO_VERBS_K_REP, &c->h, c->c.attempt, ctl);
    if (bfo_va_rep_make(v->o.auth, &c->c.a, ctl) != BFO_OK) {
        vlog(v, 1, "peer %d rail %d: no handshake reply (its public key is gone?)", gq(v, qi)->peer, gq(v, qi)->rail);
        return;
    }
    c->c.challenged = 1;
    c->c.deadline = v->g.now + v->g.lb.timeout_ns;
    ud_send_msg(v, qi, BFO_VERBS_K_REP, c->c.a.rep, sizeof c->c.a.rep);
    bfo_vu_arm(&c->c.rs, BFO_VU_SEND_REP, v->g.now);
    vlog(v, 3, "peer %d rail %d: request %llu challenged (queue pair %u held aside)", gq(v, qi)->peer,
         gq(v, qi)->rail, (unsigned long long)c->c.attempt, c->h.qp->qp_num);
}

/* The conn machine's take at a proof: the claim's queue pair becomes the
 * (peer, rail)'s (the machine closed what it held first), its receives
 * posted, its credit the claimant's grant. */
static void claim_take(bfo_verbs *v, int qi, vclaim *c)
{
    bfo_vg_qp *q = gq(v, qi);
    vqp *h = &v->qps[qi];
    int k = claim_slot(v, qi, c);
    if (k >= 0)
        h->cl[k] = NULL;
    h->qp = c->h.qp;
    h->cq = c->h.cq;
    h->psn = c->h.psn;
    h->peer_qpn = c->h.peer_qpn;
    h->peer_psn = c->h.peer_psn;
    h->peer_lid = c->h.peer_lid;
    h->peer_mtu = c->h.peer_mtu;
    h->peer_grant = c->h.peer_grant;
    memcpy(h->peer_gid, c->h.peer_gid, 16);
    h->last_wqe = 0;
    h->rs.what = BFO_VU_NONE;
    c->h.qp = NULL;
    c->h.cq = NULL;
    q->hw = 1;
    q->sq_used = 0;
    if (bfo_vg_post_receives(&v->g, qi) != 0)
        bfo_vg_broken(&v->g, qi, 0, "ibv_post_recv on the proven queue pair: %s", strerror(errno));
    bfo_vg_granted(&v->g, qi, h->peer_grant);
    claim_drop(v, c);
}

/* A REQ (m, len bytes, its control message s) when authenticated: the
 * same REQ as a claim holds answered with the same REP; else a new claim,
 * fed to the conn machine (challenged, or refused). */
static void auth_req(bfo_verbs *v, int qi, const uint8_t *m, size_t len, const bfo_vu_msg *s)
{
    bfo_vg_qp *q = gq(v, qi);
    vqp *h = &v->qps[qi];
    vclaim *c;
    int k, evict;
    switch (bfo_va_req_verdict(h->cl, VCLAIMS, m, len, &k, &evict)) {
    case BFO_VA_REQ_AGAIN:
        v->g.st[q->rail].dup_answers++;
        ud_send_msg(v, qi, BFO_VERBS_K_REP, h->cl[k]->a.rep, sizeof h->cl[k]->a.rep);
        return;
    case BFO_VA_REQ_UNAUTHENTICATED:
        v->g.st[q->rail].hellos_rejected++;
        vlog(v, 2, "peer %d rail %d: a request without the handshake (the peer has no bfo_auth, or BFO_AUTH=off "
                   "there): refused, this side requires it", q->peer, q->rail);
        return;
    }
    if (!auth_has_peer(v, q->peer)) {
        v->g.st[q->rail].hellos_rejected++;
        vlog(v, 1, "peer %d rail %d: a request from a rank whose public key this side does not know "
                   "(bfo_auth_set_peer; options.auth_peer could not give it): refused", q->peer, q->rail);
        return;
    }
    if (evict) { /* every slot held: the oldest claim goes (a flood of claims wins this) */
        vclaim *o = (vclaim *)(void *)h->cl[k];
        bfo_vg_proof(&v->g, qi, 0, o->c.attempt, o); /* refuse: claim_drop */
        if (claim_slot(v, qi, o) >= 0)
            claim_drop(v, o);
    }
    if (!(c = (vclaim *)calloc(1, sizeof *c))) {
        vlog(v, 1, "peer %d rail %d: no memory for a claim", q->peer, q->rail);
        return;
    }
    c->qi = qi;
    if (bfo_va_req_check(v->o.auth, &c->c.a, m, len, s->rank, q->rail, s->attempt) != BFO_OK) {
        v->g.st[q->rail].hellos_rejected++;
        vlog(v, 2, "peer %d rail %d: a request whose handshake does not match it (rank, rail, attempt, size or job): "
                   "dropped", q->peer, q->rail);
        free(c);
        return;
    }
    peer_from(&c->h, s);
    h->cl[k] = &c->c;
    /* a claim: challenged (send_reply: claim_challenge), left unanswered
     * where this side's dial wins the tie, or refused as stale; taken only
     * at its proof (auth_rtu) */
    bfo_vg_claim(&v->g, qi, s->attempt, c, &c->c.attempt);
    if (claim_slot(v, qi, c) >= 0 && !c->c.challenged) /* neither challenged nor refused (the machine refused the event) */
        claim_drop(v, c);
}

/* An RTU (m, len bytes, attempt gen) when authenticated: the proof of the
 * claim whose REP it answers, taken (PROOF_RCVD); one that proves no
 * claim (forged, replayed, or for a claim gone) is dropped and counted,
 * and changes nothing: the claim waits on for its dialer's. */
static void auth_rtu(bfo_verbs *v, int qi, const uint8_t *m, size_t len, uint32_t gen)
{
    bfo_vg_qp *q = gq(v, qi);
    int k = bfo_va_rtu_proves(v->o.auth, v->qps[qi].cl, VCLAIMS, m, len, gen);
    if (k >= 0) {
        vclaim *c = (vclaim *)(void *)v->qps[qi].cl[k];
        vlog(v, 3, "peer %d rail %d: request %llu proven", q->peer, q->rail, (unsigned long long)c->c.attempt);
        bfo_vg_proof(&v->g, qi, 1, c->c.attempt, c); /* take (claim_take), or refuse (stale: claim_drop) */
        if (claim_slot(v, qi, c) >= 0)
            claim_drop(v, c);
        return;
    }
    if (bfo_va_rtu_again(q->link.fsm.cs, q->link.attempt, gen))
        return; /* the RTU of the claim taken, again: the REP came again before it stopped */
    v->g.st[q->rail].hellos_rejected++;
    vlog(v, 2, "peer %d rail %d: an RTU that proves no request of this side's (forged, replayed, or late): dropped",
         q->peer, q->rail);
}

/* The dialer, authenticated: a REP to its attempt, checked (REPLY, BIND)
 * and its RTU made; 0, or -1 when it proves nothing (dropped: the dial
 * waits on for the real one, a forged datagram cannot end it). */
static int auth_rep(bfo_verbs *v, int qi, const uint8_t *m, size_t len)
{
    bfo_vg_qp *q = gq(v, qi);
    vqp *h = &v->qps[qi];
    uint8_t ctl[BFO_VERBS_CTL_SIZE];
    ctl_encode(v, qi, BFO_VERBS_K_RTU, ctl);
    if (!h->dial || bfo_va_rep_check(v->o.auth, h->dial, m, len, ctl) != BFO_OK) {
        v->g.st[q->rail].hellos_rejected++;
        vlog(v, 2, "peer %d rail %d: a REP that does not prove rank %d (forged, replayed, another job's key, or "
                   "the peer has no bfo_auth): dropped", q->peer, q->rail, q->peer);
        return -1;
    }
    return 0;
}

/* Claims past their deadline refused; REPs of the others due again. */
static void auth_timers(bfo_verbs *v, int qi)
{
    vqp *h = &v->qps[qi];
    for (int k = 0; k < VCLAIMS; k++) {
        vclaim *c = (vclaim *)(void *)h->cl[k];
        if (!c)
            continue;
        switch (bfo_va_claim_timer(&c->c, v->g.now)) {
        case BFO_VA_CLAIM_EXPIRED:
            v->g.st[gq(v, qi)->rail].hellos_rejected++;
            bfo_vg_proof(&v->g, qi, 0, c->c.attempt, c); /* refuse: claim_drop */
            if (claim_slot(v, qi, c) >= 0)
                claim_drop(v, c);
            break;
        case BFO_VA_CLAIM_REP_DUE:
            v->g.st[gq(v, qi)->rail].resends++;
            ud_send_msg(v, qi, BFO_VERBS_K_REP, c->c.a.rep, sizeof c->c.a.rep);
            break;
        }
    }
}

/* The dialer's dial: a new queue pair, the peer's UD queue pair known;
 * nothing to wait for (DIAL_CONNECTED: the machine sends the REQ). */
static int ud_dial(bfo_verbs *v, int qi)
{
    vlog(v, 3, "peer %d rail %d: dialing over UD (attempt %llu)", gq(v, qi)->peer, gq(v, qi)->rail,
         (unsigned long long)gq(v, qi)->link.attempt);
    if (v->o.auth && !auth_has_peer(v, gq(v, qi)->peer)) {
        vlog(v, 1, "peer %d rail %d: its public key is not known (bfo_auth_set_peer; options.auth_peer could not "
                   "give it): no dial", gq(v, qi)->peer, gq(v, qi)->rail);
        return BFO_CONN_EV_DIAL_FAILED;
    }
    if (qp_create(v, qi) != 0 || ud_peer(v, qi) != 0)
        return BFO_CONN_EV_DIAL_FAILED;
    return BFO_CONN_EV_DIAL_CONNECTED;
}

/* The acceptor takes a REQ (s): a new queue pair to RTS towards the peer's. */
static void ud_take(bfo_verbs *v, int qi, const bfo_vu_msg *s)
{
    vqp *h = &v->qps[qi];
    peer_from(h, s);
    if (qp_create(v, qi) != 0 || qp_connect(v, qi) != 0)
        bfo_vg_broken(&v->g, qi, 0, "cannot bring a queue pair up for the peer's request");
}

/* One datagram (m, len bytes) from UD queue pair src_qp on rail r. */
static void ud_datagram(bfo_verbs *v, int r, const uint8_t *m, size_t len, uint32_t src_qp)
{
    bfo_vu_msg s;
    char why[128];
    int qi, verdict;
    bfo_vg_qp *q;
    vqp *h;
    if (bfo_vu_msg_decode(m, len, 0, v->rank, v->size, v->job, r, &s, why, sizeof why) != 0) {
        v->g.st[r].malformed++;
        vlog(v, 2, "rail %d: a datagram dropped: %s", r, why);
        return;
    }
    qi = qi_of(v, (int)s.rank, r);
    q = gq(v, qi);
    h = &v->qps[qi];
    if (ud_peer(v, qi) != 0 || src_qp != v->pcard[qi].qpn) {
        v->g.st[r].malformed++;
        vlog(v, 2, "peer %d rail %d: a datagram from UD queue pair %u, not the one on its card: dropped",
             q->peer, r, src_qp);
        return;
    }
    verdict = bfo_vu_route(v->o.auth != NULL, s.kind, q->link.fsm.cs, bfo_link_is_dialer(&q->link), q->link.attempt,
                           s.attempt, s.qpn, h->qp != NULL, h->peer_qpn);
    if (v->o.auth && verdict == BFO_VU_TAKE_REP && auth_rep(v, qi, m, len) != 0)
        return; /* proves nothing: the dial waits on */
    switch (verdict) {
    case BFO_VU_CLAIM: /* AUTHENTICATION */
        if (port_active(v, r)) /* else no queue pair can answer it now */
            auth_req(v, qi, m, len, &s);
        return;
    case BFO_VU_PROOF: /* of a claim held aside */
        auth_rtu(v, qi, m, len, s.attempt);
        return;
    case BFO_VU_HELLO:
        if (!port_active(v, r))
            return; /* no queue pair can answer it now */
        bfo_vg_hello(&v->g, qi, s.attempt, &s); /* taken (ud_take, the REP), or refused */
        return;
    case BFO_VU_REP_AGAIN:
        v->g.st[r].dup_answers++;
        ud_send(v, qi, BFO_VERBS_K_REP);
        return;
    case BFO_VU_TAKE_REP:
        peer_from(h, &s);
        h->rs.what = BFO_VU_NONE;
        if (qp_connect(v, qi) != 0) {
            bfo_vg_broken(&v->g, qi, 0, "cannot bring the queue pair up");
            return;
        }
        ud_send(v, qi, BFO_VERBS_K_RTU);
        bfo_vg_reply(&v->g, qi, s.dialed); /* up: CONNECTED */
        return;
    case BFO_VU_RTU_AGAIN:
        v->g.st[r].dup_answers++;
        ud_send(v, qi, BFO_VERBS_K_RTU);
        return;
    case BFO_VU_TAKE_RTU:
        h->rs.what = BFO_VU_NONE;
        bfo_vg_ready(&v->g, qi); /* up: CONNECTED */
        return;
    default:
        vlog(v, 3, "peer %d rail %d: kind %d attempt %u dropped (state %s, attempt %llu)", q->peer, r, s.kind,
             s.attempt, bfo_conn_state_name(q->link.fsm.cs), (unsigned long long)q->link.attempt);
        return;
    }
}

/* The rails' UD completions: datagrams in, send slots back. */
static int ud_poll(bfo_verbs *v)
{
    int total = 0;
    for (int r = 0; r < v->nrails; r++) {
        vrail *ra = &v->rails[r];
        struct ibv_wc wc[16];
        int n;
        if (!ra->uqp)
            continue;
        while ((n = ibv_poll_cq(ra->ucq, 16, wc)) > 0) {
            for (int k = 0; k < n; k++) {
                int slot = (int)(wc[k].wr_id & 0xffffffffu);
                if (wc[k].status != IBV_WC_SUCCESS && !ra->ud_bad) {
                    vlog(v, 1, "rail %d: UD queue pair: %s", r, ibv_wc_status_str(wc[k].status));
                    ra->ud_bad = 1;
                }
                if (!(wc[k].wr_id & RECV_BIT)) {
                    if (slot >= UD_RECV && slot < UD_RECV + UD_SEND)
                        ra->usfree[ra->nusfree++] = slot;
                    continue;
                }
                if (wc[k].status != IBV_WC_SUCCESS || slot >= UD_RECV)
                    continue;
                if (wc[k].byte_len >= GRH_LEN)
                    ud_datagram(v, r, ra->ubuf + (size_t)slot * UD_SLOT + GRH_LEN, wc[k].byte_len - GRH_LEN,
                                wc[k].src_qp);
                if (!ra->ud_bad && ud_post_recv(v, r, slot) != 0)
                    ra->ud_bad = 1;
            }
            total += n;
            if (n < 16)
                break;
        }
        if (ra->ud_bad)
            ud_reset(v, r);
    }
    return total;
}

/* The REQs and REPs due again, and an acceptor whose RTU was lost: a
 * frame on its new queue pair says the dialer has it at RTS (it sends
 * nothing before the REP), which is what the RTU says. */
static void ud_timers(bfo_verbs *v)
{
    for (int qi = 0; qi < v->size * v->nrails; qi++) {
        bfo_vg_qp *q = gq(v, qi);
        vqp *h = &v->qps[qi];
        int cs = q->link.fsm.cs;
        if (q->peer == v->rank)
            continue;
        if (v->o.auth)
            auth_timers(v, qi); /* claims: whatever the link's own connection does */
        if (q->link.broken)
            continue;
        switch (bfo_vu_timer(v->o.auth != NULL, cs, q->rx_held, &h->rs, v->g.now)) {
        case BFO_VU_T_READY:
            vlog(v, 2, "peer %d rail %d: a frame before the RTU: the dialer is up", q->peer, q->rail);
            bfo_vg_ready(&v->g, qi);
            break;
        case BFO_VU_T_AGAIN:
            v->g.st[q->rail].resends++;
            vlog(v, 2, "peer %d rail %d: no %s yet: the %s again (%u sent)", q->peer, q->rail,
                 h->rs.what == BFO_VU_SEND_REQ ? "REP" : "RTU", h->rs.what == BFO_VU_SEND_REQ ? "REQ" : "REP",
                 h->rs.sent);
            ud_send(v, qi, h->rs.what == BFO_VU_SEND_REQ ? BFO_VERBS_K_REQ : BFO_VERBS_K_REP);
            break;
        }
    }
}

/* ----------------------------------------------------------------- events */

static void async_events(bfo_verbs *v)
{
    for (int d = 0; d < v->ndev; d++) {
        struct ibv_async_event ev;
        while (v->devs[d].ctx && ibv_get_async_event(v->devs[d].ctx, &ev) == 0) {
            int event = (int)ev.event_type, port = -1, hit = -1;
            bfo_verbs_async_action a = bfo_verbs_map_async(event);
            unsigned rails = 0;
            if (ev.event_type == IBV_EVENT_QP_LAST_WQE_REACHED) {
                /* a queue pair attached to the SRQ takes no more of its
                 * receives: one closed may go now (drain_run), one not
                 * closed yet (it failed by itself) when it closes */
                int found = 0;
                v->last_wqe_seen++;
                for (int k = 0; k < v->ndrain && !found; k++)
                    if (v->drain[k].qp == ev.element.qp)
                        found = v->drain[k].last_wqe = 1;
                for (int qi = 0; qi < v->size * v->nrails && !found; qi++)
                    if (v->qps[qi].qp && v->qps[qi].qp == ev.element.qp)
                        found = v->qps[qi].last_wqe = 1;
                vlog(v, 3, "%s: async event QP_LAST_WQE_REACHED (qp %u)%s", v->devs[d].name,
                     ev.element.qp ? ev.element.qp->qp_num : 0, found ? "" : ", a queue pair not known");
                ibv_ack_async_event(&ev);
                continue;
            }
            if (ev.event_type == IBV_EVENT_PORT_ERR || ev.event_type == IBV_EVENT_PORT_ACTIVE)
                port = ev.element.port_num;
            for (int qi = 0; qi < v->size * v->nrails && hit < 0; qi++) {
                const vqp *h = &v->qps[qi];
                if ((a.scope == BFO_VSCOPE_QP && h->qp && h->qp == ev.element.qp) ||
                    (a.scope == BFO_VSCOPE_CQ && h->cq && h->cq == ev.element.cq))
                    hit = qi;
            }
            for (int r = 0; r < v->nrails; r++) {
                if (v->rails[r].d == d && (port < 0 || v->rails[r].port == port))
                    rails |= 1u << r;
                if (v->rails[r].uqp && ((a.scope == BFO_VSCOPE_QP && ev.element.qp == v->rails[r].uqp) ||
                                        (a.scope == BFO_VSCOPE_CQ && ev.element.cq == v->rails[r].ucq)))
                    v->rails[r].ud_bad = 1; /* its own: back to RTS at the next poll, no RC queue pair hit */
            }
            vlog(v, 1, "%s: async event %s%s", v->devs[d].name, bfo_verbs_event_name(event),
                 port >= 0 ? " (port)" : "");
            ibv_ack_async_event(&ev);
            if (bfo_vg_async(&v->g, event, rails, hit).permanent)
                v->devs[d].dead = 1;
        }
    }
}

static void drain_channels(bfo_verbs *v)
{
    for (int d = 0; d < v->ndev; d++) {
        struct ibv_cq *cq;
        void *cctx;
        while (v->devs[d].ch && ibv_get_cq_event(v->devs[d].ch, &cq, &cctx) == 0)
            ibv_ack_cq_events(cq, 1);
    }
}

/* Not run for a while (bfo_link_gap's skip): every connect deadline, each
 * accepted control connection's and each claim's moves on by the skip, so
 * that what came meanwhile is read before it is judged (bfo_link.h, "time
 * the transport did not run"). */
static void skip_gap(bfo_verbs *v, uint64_t skip, uint64_t now)
{
    for (int qi = 0; qi < v->size * v->nrails; qi++) {
        bfo_link_skip(&v->g.lb, &v->g.qps[qi].link, skip, now);
        for (int k = 0; k < VCLAIMS; k++)
            if (v->qps[qi].cl[k])
                v->qps[qi].cl[k]->deadline =
                    bfo_link_skip_deadline(v->qps[qi].cl[k]->deadline, skip, now + v->g.lb.timeout_ns);
    }
    bfo_tp_pends_skip(&v->pends, skip, now);
}

int bfo_verbs_progress(bfo_verbs *v, uint64_t now)
{
    int n = 0;
    const uint64_t skip = bfo_link_gap(&v->g.lb, now);
    v->g.now = now;
    if (skip)
        skip_gap(v, skip, now);
    reg_collect(v); /* one atomic load unless a release marked an idle region */
    drain_channels(v);
    async_events(v);
    if (v->o.tcp_exchange) {
        accept_all(v);
        control_io(v);
    } else {
        n += ud_poll(v);
    }
    for (int qi = 0; qi < v->size * v->nrails; qi++)
        n += poll_cq(v, qi);
    if (!v->o.tcp_exchange)
        ud_timers(v); /* after the frames came in: one before the RTU counts as it */
    n += bfo_vg_deliver(&v->g);
    n += bfo_vg_credit(&v->g); /* credit given back where no send carries it */
    bfo_vg_settle(&v->g);
    if (v->ndrain)
        n += drain_run(v, 0);
    n += bfo_vg_keepalive(&v->g); /* the peer's host, while it waits on its process */
    bfo_vg_settle(&v->g);
    bfo_vg_timeouts(&v->g);
    bfo_vg_settle(&v->g);
    handle_connects(v);
    bfo_vg_settle(&v->g);
    for (int qi = 0; qi < v->size * v->nrails; qi++)
        if (gq(v, qi)->backlog.head >= 0)
            bfo_vg_kick(&v->g, qi);
    bfo_vg_settle(&v->g);
    return n;
}

int bfo_verbs_wait_fds(bfo_verbs *v, int *fds, int max)
{
    int n = 0;
    if (v->g.failed.head >= 0)
        return -1;
    for (int qi = 0; qi < v->size * v->nrails; qi++) {
        const bfo_vg_qp *q = gq(v, qi);
        vqp *h = &v->qps[qi];
        if (q->link.broken || q->link.connect_req || q->rx_n > q->rx_held ||
            q->link.fsm.cs == BFO_CONN_ST_DIALING)
            return -1; /* work now (held frames wait for the RTU: a control fd) */
        if (h->cq) {
            struct ibv_wc wc;
            ibv_req_notify_cq(h->cq, 0);
            int got = ibv_poll_cq(h->cq, 1, &wc);
            if (got != 0) { /* arrived before the arming: handle it, do not sleep */
                if (got > 0)
                    handle_wc(v, qi, &wc);
                return -1;
            }
        }
        if (h->cfd >= 0 && n < max)
            fds[n++] = h->cfd;
    }
    for (int r = 0; r < v->nrails; r++)
        if (v->rails[r].uqp)
            ibv_req_notify_cq(v->rails[r].ucq, 0);
    if (!v->o.tcp_exchange && ud_poll(v) > 0) /* arrived before the arming: handled, do not sleep */
        return -1;
    for (int d = 0; d < v->ndev && n + 2 <= max; d++) {
        if (v->devs[d].ch)
            fds[n++] = v->devs[d].ch->fd;
        fds[n++] = v->devs[d].ctx->async_fd;
    }
    for (int r = 0; r < v->nrails && n < max; r++)
        if (v->rails[r].lfd >= 0)
            fds[n++] = v->rails[r].lfd;
    for (int k = 0; k < v->pends.n && n < max; k++)
        if (pend_at(v, k)->a.fd >= 0)
            fds[n++] = pend_at(v, k)->a.fd;
    return n;
}

static unsigned v_rail_caps(void *ctx, int rail)
{
    const bfo_verbs *v = (const bfo_verbs *)ctx;
    if (rail < 0 || rail >= v->nrails)
        return 0;
    /* every rail: each has its own device's key; described data is read
     * straight into the send buffers (v_post_send_data) */
    return BFO_CAP_RDMA | BFO_CAP_SEND_IOV | BFO_CAP_SEND_PACK;
}

static unsigned v_rail_bw(void *ctx, int rail)
{
    const bfo_verbs *v = (const bfo_verbs *)ctx;
    return rail >= 0 && rail < v->nrails ? v->rails[rail].bw : 0;
}

/* What the engine calls (bfo_backend.h): sends, RDMA, registration. */
static const bfo_backend v_calls = {
    .post_send = v_post_send, .post_send_data = v_post_send_data, .post_write = v_post_write,
    .post_read = v_post_read, .reg_mem = v_reg_mem, .dereg_mem = v_dereg_mem, .connect = v_connect,
    .disconnect = v_disconnect, .part = v_part, .rail_caps = v_rail_caps, .rail_bandwidth = v_rail_bw,
};

void bfo_verbs_backend(bfo_verbs *v, bfo_backend *be)
{
    *be = v_calls;
    be->ctx = v;
}

static int nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* The GID to use on a port: an IPv4-mapped RoCE v2 entry (the rail's
 * address comes from it, for the TCP exchange), else an IPv4-mapped one,
 * else index 0 (IB: its GID needs no IP), else (RoCE without IPv4, with
 * the UD exchange) the first RoCE v2 entry, else the first entry. */
static int pick_gid(bfo_verbs *v, vrail *r, int tbl_len)
{
    struct ibv_context *ctx = v->devs[r->d].ctx;
    int best = -1, best_v2 = 0;
    if (v->o.gid_index > 0) {
        union ibv_gid g;
        if (ibv_query_gid(ctx, (uint8_t)r->port, v->o.gid_index, &g) != 0)
            return -1;
        memcpy(r->gid, g.raw, 16);
        r->gid_index = v->o.gid_index;
        return 0;
    }
    for (int i = 0; i < tbl_len; i++) {
        struct ibv_gid_entry ent;
        static const uint8_t v4[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
        if (ibv_query_gid_ex(ctx, (uint32_t)r->port, (uint32_t)i, &ent, 0) != 0)
            continue;
        if (memcmp(ent.gid.raw, v4, 12) != 0)
            continue;
        int is_v2 = ent.gid_type == IBV_GID_TYPE_ROCE_V2;
        if (best < 0 || (is_v2 && !best_v2)) {
            best = i;
            best_v2 = is_v2;
            memcpy(r->gid, ent.gid.raw, 16);
        }
    }
    if (best >= 0) {
        r->gid_index = best;
        if (!r->ip)
            r->ip = ((uint32_t)r->gid[12] << 24) | ((uint32_t)r->gid[13] << 16) |
                    ((uint32_t)r->gid[14] << 8) | r->gid[15];
        return 0;
    }
    if (r->is_ib) {
        union ibv_gid g;
        if (ibv_query_gid(ctx, (uint8_t)r->port, 0, &g) == 0)
            memcpy(r->gid, g.raw, 16);
        r->gid_index = 0;
        return 0;
    }
    if (v->o.tcp_exchange)
        return -1; /* no address for its control channel */
    for (int i = 0; i < tbl_len; i++) {
        struct ibv_gid_entry ent;
        static const uint8_t zero[16];
        if (ibv_query_gid_ex(ctx, (uint32_t)r->port, (uint32_t)i, &ent, 0) != 0 ||
            !memcmp(ent.gid.raw, zero, 16))
            continue;
        if (best < 0 || (ent.gid_type == IBV_GID_TYPE_ROCE_V2 && !best_v2)) {
            best = i;
            best_v2 = ent.gid_type == IBV_GID_TYPE_ROCE_V2;
            memcpy(r->gid, ent.gid.raw, 16);
        }
    }
    if (best >= 0) {
        r->gid_index = best;
        return 0;
    }
    return -1;
}

static int open_device(bfo_verbs *v, const char *name)
{
    struct ibv_device **list;
    int n = 0, d;
    struct ibv_device_attr da;
    for (d = 0; d < v->ndev; d++)
        if (!strcmp(v->devs[d].name, name))
            return d;
    if (v->ndev >= MAX_DEV)
        return -1;
    list = ibv_get_device_list(&n);
    if (!list) {
        vlog(v, 1, "ibv_get_device_list: %s", strerror(errno));
        return -1;
    }
    d = v->ndev;
    for (int i = 0; i < n; i++)
        if (!strcmp(ibv_get_device_name(list[i]), name))
            v->devs[d].ctx = ibv_open_device(list[i]);
    ibv_free_device_list(list);
    if (!v->devs[d].ctx) {
        vlog(v, 1, "no verbs device %s (ibv_devices lists them)", name);
        return -1;
    }
    { /* name may be the caller's copy inside *v: memmove, not snprintf */
        size_t n = strlen(name) < sizeof v->devs[d].name ? strlen(name) : sizeof v->devs[d].name - 1;
        memmove(v->devs[d].name, name, n);
        v->devs[d].name[n] = '\0';
    }
    v->ndev++;
    v->devs[d].pd = ibv_alloc_pd(v->devs[d].ctx);
    v->devs[d].ch = ibv_create_comp_channel(v->devs[d].ctx);
    if (!v->devs[d].pd || !v->devs[d].ch || nonblock(v->devs[d].ch->fd) != 0 ||
        nonblock(v->devs[d].ctx->async_fd) != 0) {
        vlog(v, 1, "%s: protection domain or completion channel: %s", name, strerror(errno));
        return -1;
    }
    v->devs[d].max_rd_atom = 16;
    if (ibv_query_device(v->devs[d].ctx, &da) == 0) {
        if (da.max_qp_rd_atom < v->devs[d].max_rd_atom)
            v->devs[d].max_rd_atom = da.max_qp_rd_atom;
        if (da.max_qp_init_rd_atom < v->devs[d].max_rd_atom)
            v->devs[d].max_rd_atom = da.max_qp_init_rd_atom;
        v->devs[d].max_srq = da.max_srq;
        v->devs[d].max_srq_wr = da.max_srq_wr;
    }
    if (v->devs[d].max_rd_atom < 1)
        v->devs[d].max_rd_atom = 1;
    return d;
}

int bfo_verbs_open(bfo_verbs **out, int rank, int size, const char *const *rails, int nrails,
                   const bfo_config *cfg, const bfo_verbs_options *opt)
{
    bfo_verbs *v;
    int rc;
    *out = NULL;
    if (nrails < 1 || nrails > BFO_MAX_RAILS || size < 1 || rank < 0 || rank >= size)
        return BFO_ERR_INVALID;
    v = (bfo_verbs *)calloc(1, sizeof *v);
    if (!v)
        return BFO_ERR_NO_MEMORY;
    if (opt)
        v->o = *opt;
    v->rank = rank;
    v->size = size;
    v->nrails = nrails;
    v->lg = (bfo_tp_log){ .name = "verbs", .rank = rank, .level = v->o.log_level ? v->o.log_level : 1,
                          .out = v_log_out, .ctx = v };
    for (int r = 0; r < BFO_MAX_RAILS; r++)
        v->rails[r].lfd = -1;
    rc = BFO_ERR_INVALID;
    if (!v->o.retry_cnt)
        v->o.retry_cnt = RETRY_CNT_DEFAULT;
    if (!v->o.timeout)
        v->o.timeout = TIMEOUT_DEFAULT;
    if (!v->o.recv_depth)
        v->o.recv_depth = DEPTH_DEFAULT;
    if (!v->o.send_depth)
        v->o.send_depth = DEPTH_DEFAULT;
    if (!v->o.reg_cache)
        v->o.reg_cache = REG_CACHE_DEFAULT;
    if (!v->o.connect_timeout_ns)
        v->o.connect_timeout_ns = CONNECT_TIMEOUT_DEFAULT_NS;
    if (v->o.tcp_exchange < 0) /* set "off" (0 stores -1, as 0 means the default): the UD exchange */
        v->o.tcp_exchange = 0;
    /* AUTHENTICATION: never off silently (once per process: tests open many) */
    if (v->o.auth && v->o.tcp_exchange) {
        static int said_tcp;
        if (!__atomic_exchange_n(&said_tcp, 1, __ATOMIC_RELAXED))
            vlog(v, 1, "rank %d: verbs.tcp_exchange: the verbs hellos over TCP are NOT authenticated: anyone who "
                       "reads the job id off the wire can take this rank's verbs rails (the UD exchange, the "
                       "default, is)", rank);
        v->o.auth = NULL;
    } else if (!v->o.auth) {
        static int said_unauthenticated;
        if (!__atomic_exchange_n(&said_unauthenticated, 1, __ATOMIC_RELAXED))
            vlog(v, 1, "rank %d: verbs hellos are NOT authenticated (no bfo_auth given): anyone who can send a "
                       "datagram to this rank's UD queue pair with the job id can take its verbs rails", rank);
    }
    if (!v->o.srq_frames)
        v->o.srq_frames = SRQ_FRAMES_DEFAULT;
    if (!v->o.credits)
        v->o.credits = CREDITS_DEFAULT;
    if (v->o.srq_frames < 2 || v->o.srq_frames > 65536 || v->o.credits < 1 || v->o.credits > CREDITS_MAX) {
        vlog(v, 1, "srq_frames must be 2..65536 and credits 1..%d (not %d, %d)", CREDITS_MAX, v->o.srq_frames,
             v->o.credits);
        goto fail;
    }
    if (v->o.retry_cnt < 1 || v->o.retry_cnt > 6) {
        vlog(v, 1, "retry_cnt must be 1..6 (7 means retry forever on rxe), not %d", v->o.retry_cnt);
        goto fail;
    }
    if (v->o.timeout < 1 || v->o.timeout > 31 || v->o.recv_depth < 2 || v->o.send_depth < 1 ||
        v->o.recv_depth > 4096 || v->o.send_depth > 4096)
        goto fail;
    v->cfg = cfg ? *cfg : (bfo_config){ 0 };
    if (!v->cfg.nranks)
        v->cfg.nranks = size;
    if (!v->cfg.nrails)
        v->cfg.nrails = nrails;
    v->cfg = bfo_tp_config(&v->cfg, &v->sizes);
    v->max_frame = v->sizes.max_frame;
    for (int r = 0; r < nrails; r++) {
        vrail *ra = &v->rails[r];
        struct ibv_port_attr pa;
        struct sockaddr_in sa;
        socklen_t sl = sizeof sa;
        char a[INET_ADDRSTRLEN];
        rc = BFO_ERR_INVALID;
        if (bfo_verbs_parse_rail(rails[r], ra->dev, sizeof ra->dev, &ra->port, &ra->ip) != 0) {
            vlog(v, 1, "bad verbs rail %s (verbs:DEVICE[:PORT][@ADDR])", rails[r]);
            goto fail;
        }
        rc = BFO_VERBS_ERR_DEVICE;
        ra->d = open_device(v, ra->dev);
        if (ra->d < 0)
            goto fail;
        if (ibv_query_port(v->devs[ra->d].ctx, (uint8_t)ra->port, &pa) != 0) {
            vlog(v, 1, "%s: no port %d", ra->dev, ra->port);
            goto fail;
        }
        ra->is_ib = pa.link_layer != IBV_LINK_LAYER_ETHERNET;
        ra->lid = pa.lid;
        ra->mtu = pa.active_mtu;
        ra->port_up = pa.state == IBV_PORT_ACTIVE;
        ra->bw = v->o.rail_bandwidth[r];
        if (pick_gid(v, ra, pa.gid_tbl_len) != 0 || (v->o.tcp_exchange && !ra->ip)) {
            if (v->o.tcp_exchange)
                vlog(v, 1, "%s port %d: no IPv4 address in the GID table for the TCP exchange (name one: "
                     "verbs:%s:%d@ADDR, or leave verbs.tcp_exchange off)", ra->dev, ra->port, ra->dev, ra->port);
            else
                vlog(v, 1, "%s port %d: no GID", ra->dev, ra->port);
            goto fail;
        }
        if (!v->o.tcp_exchange) { /* the exchange over the port's UD queue pair: no address, no socket */
            char g[INET6_ADDRSTRLEN];
            if (ud_open(v, r) != 0) {
                vlog(v, 1, "rail %d (%s): the UD queue pair for the exchange: %s", r, rails[r], strerror(errno));
                goto fail;
            }
            inet_ntop(AF_INET6, ra->gid, g, sizeof g);
            vlog(v, 2, "rail %d: %s port %d, gid %s (index %d), lid %u, UD queue pair %u, mtu %d, %s", r,
                 ra->dev, ra->port, g, ra->gid_index, ra->lid, ra->uqp->qp_num, 128 << ra->mtu,
                 ra->port_up ? "active" : "down");
            continue;
        }
        rc = BFO_VERBS_ERR_SOCKET;
        memset(&sa, 0, sizeof sa);
        sa.sin_family = AF_INET;
        sa.sin_addr.s_addr = htonl(ra->ip);
        ra->lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (ra->lfd < 0 || bind(ra->lfd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
            listen(ra->lfd, BFO_TP_BACKLOG) != 0 || getsockname(ra->lfd, (struct sockaddr *)&sa, &sl) != 0) {
            inet_ntop(AF_INET, &sa.sin_addr, a, sizeof a);
            vlog(v, 1, "rail %d (%s, %s): cannot listen: %s", r, rails[r], a, strerror(errno));
            goto fail;
        }
        ra->lport = ntohs(sa.sin_port);
        inet_ntop(AF_INET, &sa.sin_addr, a, sizeof a);
        vlog(v, 2, "rail %d: %s port %d, gid index %d, control %s:%u, mtu %d, %s", r, ra->dev, ra->port,
             ra->gid_index, a, ra->lport, 128 << ra->mtu, ra->port_up ? "active" : "down");
    }
    *out = v;
    return BFO_OK;
fail:
    bfo_verbs_fini(v);
    return rc;
}



int bfo_verbs_address(const bfo_verbs *v, int rail, bfo_addr *out)
{
    const vrail *r;
    bfo_vu_card c;
    if (rail < 0 || rail >= v->nrails)
        return BFO_ERR_INVALID;
    r = &v->rails[rail];
    memset(out, 0, sizeof *out);
    memset(&c, 0, sizeof c);
    if (v->o.tcp_exchange) { /* version 1: what bfo published before the UD exchange */
        c.version = 1;
        c.ip = r->ip;
        c.tcp_port = r->lport;
    } else {
        c.version = BFO_VU_CARD_VERSION;
        c.flags = BFO_VU_CARD_UD;
        c.mtu = (uint8_t)r->mtu;
        c.lid = r->lid;
        c.qpn = r->uqp->qp_num;
        c.qkey = BFO_VU_QKEY;
        memcpy(c.gid, r->gid, 16);
    }
    out->len = (uint16_t)bfo_vu_card_write(&c, out->bytes, sizeof out->bytes);
    return out->len ? BFO_OK : BFO_ERR_INVALID;
}

/* n frames of max_frame bytes registered with pd (every one free): 0, or -1. */
static int pool_init(bfo_verbs *v, vpool *p, struct ibv_pd *pd, int n)
{
    size_t bytes = (size_t)n * v->max_frame;
    p->n = n;
    p->buf = (uint8_t *)malloc(bytes);
    p->free = (int *)malloc(sizeof(int) * (size_t)n);
    if (!p->buf || !p->free)
        return -1;
    p->mr = ibv_reg_mr(pd, p->buf, bytes, IBV_ACCESS_LOCAL_WRITE);
    if (!p->mr) {
        vlog(v, 1, "registering %zu bytes of buffers: %s", bytes, strerror(errno));
        return -1;
    }
    v->pinned += bytes;
    for (int k = 0; k < n; k++)
        p->free[k] = n - 1 - k;
    p->nfree = n;
    return 0;
}

static void pool_fini(vpool *p)
{
    if (p->mr)
        ibv_dereg_mr(p->mr);
    free(p->buf);
    free(p->free);
    memset(p, 0, sizeof *p);
}

/* The shared receive queue, when asked for (srq not off) and every device
 * of the rails has one: its frames (the smallest max_srq_wr of them, at
 * most srq_frames); 0 when not (the per-queue-pair receives), logged. */
static int srq_frames(bfo_verbs *v)
{
    int n = v->o.srq_frames;
    if (v->o.srq < 0) {
        vlog(v, 2, "receives per queue pair (verbs.srq off)");
        return 0;
    }
    for (int d = 0; d < v->ndev; d++) {
        if (v->devs[d].max_srq < 1 || v->devs[d].max_srq_wr < 2) {
            vlog(v, 2, "%s has no shared receive queue (max_srq %d): receives per queue pair", v->devs[d].name,
                 v->devs[d].max_srq);
            return 0;
        }
        if (v->devs[d].max_srq_wr < n)
            n = v->devs[d].max_srq_wr;
    }
    return n;
}

/* Each device's shared receive queue, its receive buffers (every one
 * posted) and its send buffers: 0, or an error. */
static int srq_open(bfo_verbs *v, int frames)
{
    for (int d = 0; d < v->ndev; d++) {
        vdev *dv = &v->devs[d];
        struct ibv_srq_init_attr sa;
        memset(&sa, 0, sizeof sa);
        sa.attr.max_wr = (uint32_t)frames;
        sa.attr.max_sge = 1;
        if (dv->dead)
            continue;
        dv->srq = ibv_create_srq(dv->pd, &sa);
        if (!dv->srq) {
            vlog(v, 1, "%s: ibv_create_srq(%d): %s", dv->name, frames, strerror(errno));
            return BFO_VERBS_ERR_DEVICE;
        }
        if (pool_init(v, &dv->rp, dv->pd, frames) != 0 || pool_init(v, &dv->sp, dv->pd, SRQ_SEND(frames)) != 0)
            return BFO_VERBS_ERR_DEVICE;
        for (int b = 0; b < frames; b++)
            if (srq_post(v, d, b) != 0) {
                vlog(v, 1, "%s: ibv_post_srq_recv: %s", dv->name, strerror(errno));
                return BFO_VERBS_ERR_DEVICE;
            }
        dv->rp.nfree = 0; /* every one posted */
    }
    return 0;
}

int bfo_verbs_start(bfo_verbs *v, uint64_t job, const bfo_sink *sink)
{
    size_t nq = (size_t)v->size * (size_t)v->nrails;
    size_t rbytes = (size_t)v->o.recv_depth * v->max_frame;
    int nents = v->sizes.nents;
    bfo_vg_hw hw = { v, g_flush, g_post, g_post_recv, g_log, g_conn, g_host_probe, g_credit };
    const int frames = srq_frames(v);
    /* with the SRQ, recv_depth is the depth of each queue pair's queue of
     * frames waiting for the engine: a closed queue pair's (at most its
     * credit) and the next one's (bfo_vg_use_srq) */
    const int share = frames ? (v->o.credits < frames ? v->o.credits : frames) : 0;
    const int rdepth = frames ? 2 * share + 4 : v->o.recv_depth;
    int rc;
    v->job = job;
    v->qps = (vqp *)calloc(nq, sizeof *v->qps);
    for (size_t qi = 0; v->qps && qi < nq; qi++)
        v->qps[qi].cfd = -1;
    v->ents = (vent *)calloc((size_t)nents, sizeof *v->ents);
    v->pcard = (bfo_vu_card *)calloc(nq, sizeof *v->pcard);
    v->pcard_st = (uint8_t *)calloc(nq, 1);
    v->ah = (struct ibv_ah **)calloc(nq, sizeof *v->ah);
    v->gmem = malloc(bfo_vg_mem_size(v->size, v->nrails, nents, rdepth));
    v->drain_cap = frames ? 4 * v->size * v->nrails + 16 : 0;
    v->drain = frames ? (vdrain *)calloc((size_t)v->drain_cap, sizeof *v->drain) : NULL;
    v->pends = (bfo_tp_pends){ .ep = -1, .timeout_ns = v->o.connect_timeout_ns };
    v->nregs = v->o.reg_cache > 0 ? v->o.reg_cache : 0;
    v->nregs += 64; /* regions held by requests at once; beyond, the engine copies */
    v->regs = (vreg *)calloc((size_t)v->nregs, sizeof *v->regs);
    v->vents = (bfo_vc_ent *)calloc((size_t)v->nregs, sizeof *v->vents);
    v->sink = *sink;
    if (!v->qps || !v->ents || !v->gmem || !v->regs || !v->vents || !v->pcard || !v->pcard_st || !v->ah ||
        (frames && !v->drain) ||
        bfo_tp_pends_init(&v->pends, sizeof(vpend), v->size, v->nrails) != 0)
        return BFO_ERR_NO_MEMORY;
    bfo_vc_init(&v->vc, v->vents, v->nregs, v->o.reg_cache > 0);
    v->vc_on = 1;
    bfo_vg_init(&v->g, v->gmem, v->rank, v->size, v->nrails, nents, rdepth, 2 * v->o.send_depth, sink, &hw);
    if (frames) {
        bfo_vg_use_srq(&v->g, frames, share);
        if ((rc = srq_open(v, frames)) != 0)
            return rc;
    }
    v->g.log_level = v->lg.level;
    v->g.lb.timeout_ns = v->o.connect_timeout_ns;
    v->g.ka_ns = v->sizes.ka_ns; /* host probes, as often as TCP's nudges */
    for (int r = 0; r < v->nrails; r++)
        v->g.port_up[r] = v->rails[r].port_up;
    for (int qi = 0; qi < (int)nq; qi++) {
        bfo_vg_qp *q = gq(v, qi);
        vqp *h = &v->qps[qi];
        vdev *dv = &v->devs[v->rails[q->rail].d];
        if (q->peer == v->rank)
            continue;
        q->rstride = v->max_frame;
        if (frames) { /* nothing of its own: the device's pools */
            q->rbuf = dv->rp.buf;
            h->sp = &dv->sp;
            continue;
        }
        h->sp = &h->own;
        q->rbuf = (uint8_t *)malloc(rbytes);
        if (!q->rbuf || pool_init(v, &h->own, dv->pd, v->o.send_depth) != 0)
            return BFO_VERBS_ERR_DEVICE;
        h->rmr = ibv_reg_mr(dv->pd, q->rbuf, rbytes, IBV_ACCESS_LOCAL_WRITE);
        if (!h->rmr) {
            vlog(v, 1, "registering %zu bytes of buffers: %s", rbytes, strerror(errno));
            return BFO_VERBS_ERR_DEVICE;
        }
        v->pinned += rbytes;
    }
    if (frames)
        vlog(v, 2, "receives from a shared receive queue per device: %d frames of %zu bytes, %d send "
                   "buffers, credit %d frames per peer; %llu bytes pinned, none per peer",
             frames, v->max_frame, SRQ_SEND(frames), share, (unsigned long long)v->pinned);
    else
        vlog(v, 2, "receives per queue pair: %d + %d frames of %zu bytes per (peer, rail); %llu bytes pinned, "
                   "%zu per (peer, rail)",
             v->o.recv_depth, v->o.send_depth, v->max_frame, (unsigned long long)v->pinned,
             (size_t)(v->o.recv_depth + v->o.send_depth) * v->max_frame);
    v->reap_cap = 4 * v->size * v->nrails + 16;
    v->reap_qp = (struct ibv_qp **)calloc((size_t)v->reap_cap, sizeof *v->reap_qp);
    v->reap_cq = (struct ibv_cq **)calloc((size_t)v->reap_cap, sizeof *v->reap_cq);
    if (!v->reap_qp || !v->reap_cq)
        return BFO_ERR_NO_MEMORY;
    pthread_mutex_init(&v->rmu, NULL);
    pthread_cond_init(&v->rcv, NULL);
    v->reaper_on = pthread_create(&v->reaper, NULL, reaper_main, v) == 0;
    v->started = 1;
    return BFO_OK;
}

int bfo_verbs_nrails(const bfo_verbs *v) { return v->nrails; }

const bfo_verbs_rail_stats *bfo_verbs_get_stats(const bfo_verbs *v, int rail)
{
    return rail >= 0 && rail < v->nrails ? &v->g.st[rail] : NULL;
}

void bfo_verbs_fault(bfo_verbs *v, int rail)
{
    if (!v->started || rail < 0 || rail >= v->nrails)
        return;
    for (int p = 0; p < v->size; p++) {
        vqp *h = &v->qps[qi_of(v, p, rail)];
        if (p != v->rank && h->qp) {
            struct ibv_qp_attr a;
            memset(&a, 0, sizeof a);
            a.qp_state = IBV_QPS_ERR;
            ibv_modify_qp(h->qp, &a, IBV_QP_STATE);
            bfo_vg_broken(&v->g, qi_of(v, p, rail), 0, "fault hook");
        }
    }
}

void bfo_verbs_dump(const bfo_verbs *v, FILE *f)
{
    uint64_t now = bfo_tp_now();
    int free_ents = 0;
    if (!v->started) {
        fprintf(f, "bfo-verbs[%d]: not started\n", v->rank);
        return;
    }
    for (int qi = 0; qi < v->size * v->nrails; qi++) {
        const bfo_vg_qp *q = &v->g.qps[qi];
        const vqp *h = &v->qps[qi];
        struct ibv_qp_attr a;
        struct ibv_qp_init_attr ia;
        int qs = -1;
        if (q->peer == v->rank)
            continue;
        if (h->qp && ibv_query_qp(h->qp, &a, IBV_QP_STATE, &ia) == 0)
            qs = (int)a.qp_state;
        fprintf(f,
                "bfo-verbs[%d]: peer %d rail %d: %s qp %u (ibv state %d) connect-req %d attempt %llu "
                "broken %d%s%s; sq %d posted %d backlog %d send-buffers free "
                "%d; receives posted %d waiting for the engine %d free %d; cfd %d deadline %+.3f s\n",
                v->rank, q->peer, q->rail, bfo_conn_state_name(q->link.fsm.cs),
                h->qp ? h->qp->qp_num : 0, qs, q->link.connect_req,
                (unsigned long long)q->link.attempt, q->link.broken, q->link.broken ? ": " : "", q->link.broken ? q->link.why : "", q->sq_used,
                bfo_vg_count(&v->g, &q->posted), bfo_vg_count(&v->g, &q->backlog), h->sp ? h->sp->nfree : 0,
                q->rposted, q->rx_n, q->nrfree, h->cfd,
                q->link.deadline ? ((double)q->link.deadline - (double)now) / 1e9 : 0.0);
    }
    for (int k = v->g.ent_free; k >= 0 && free_ents <= v->g.nents; k = v->g.ents[k].next)
        free_ents++;
    fprintf(f, "bfo-verbs[%d]: descriptors %d, free %d, failed (to complete) %d; reaper queue %d\n",
            v->rank, v->g.nents, free_ents, bfo_vg_count(&v->g, &v->g.failed), v->nreap);
    fprintf(f, "bfo-verbs[%d]: pinned %llu bytes; %s credit %d, credit messages %llu, frames beyond credit %llu; "
               "closed queue pairs waiting for LAST_WQE_REACHED %d (events %llu, waits given up %llu, "
               "receives found then %llu)\n",
            v->rank, (unsigned long long)v->pinned, v->g.srq ? "SRQ," : "per-queue-pair receives,", v->g.share,
            (unsigned long long)v->g.credit_msgs, (unsigned long long)v->g.credit_late, v->ndrain,
            (unsigned long long)v->last_wqe_seen, (unsigned long long)v->last_wqe_timeouts,
            (unsigned long long)v->drain_late);
    for (int r = 0; r < v->nrails; r++) {
        const bfo_verbs_rail_stats *s = &v->g.st[r];
        fprintf(f,
                "bfo-verbs[%d]: rail %d (%s:%d, port %s): frames tx %llu rx %llu, rdma w %llu r %llu, "
                "ok %llu failed %llu flushed %llu, qp errors %llu (disconnects %llu), connects %llu "
                "failed %llu, back-pressure %llu, host probes %llu, host heard %llu; exchange: %s%u, "
                "sent again %llu, answered again %llu\n",
                v->rank, r, v->rails[r].dev, v->rails[r].port, v->g.port_up[r] ? "up" : "down",
                (unsigned long long)s->frames_tx, (unsigned long long)s->frames_rx,
                (unsigned long long)s->rdma_writes, (unsigned long long)s->rdma_reads,
                (unsigned long long)s->completed_ok, (unsigned long long)s->completed_failed,
                (unsigned long long)s->flushed, (unsigned long long)s->qp_errors,
                (unsigned long long)s->disconnects, (unsigned long long)s->connects,
                (unsigned long long)s->connect_failures,
                (unsigned long long)s->backpressure, (unsigned long long)s->host_probes,
                (unsigned long long)s->host_heard, v->rails[r].uqp ? "UD queue pair " : "TCP port ",
                v->rails[r].uqp ? v->rails[r].uqp->qp_num : v->rails[r].lport,
                (unsigned long long)s->resends, (unsigned long long)s->dup_answers);
    }
}

void bfo_verbs_fini(bfo_verbs *v)
{
    if (!v)
        return;
    if (v->started) { /* every queue pair destroyed before the memory goes; nobody is told */
        for (int qi = 0; qi < v->size * v->nrails; qi++) {
            g_flush(v, qi);
            for (int k = 0; k < VCLAIMS; k++)
                if (v->qps[qi].cl[k])
                    claim_drop(v, (vclaim *)(void *)v->qps[qi].cl[k]);
        }
        drain_run(v, 1);
    }
    else if (v->qps)
        for (int qi = 0; qi < v->size * v->nrails; qi++)
            ctl_close(&v->qps[qi]);
    if (v->reaper_on) {
        /* the reaper destroys what is left; a destroy the kernel holds up
         * (rxe after a link flap: a queue pair's timers) is waited for
         * BFO_VERBS_REAP_WAIT_S at most, then left to the process's end:
         * nothing the reaper may still touch is released here, so that
         * the rank ends rather than waits for ever */
        struct timespec ts;
        int n;
        pthread_mutex_lock(&v->rmu);
        v->reaper_stop = 1;
        n = v->nreap;
        pthread_cond_signal(&v->rcv);
        pthread_mutex_unlock(&v->rmu);
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += BFO_VERBS_REAP_WAIT_S;
        if (pthread_timedjoin_np(v->reaper, NULL, &ts) != 0) {
            vlog(v, 1, "queue pairs still being destroyed by the kernel after %d s (%d were queued): "
                       "left to the process's end",
                 BFO_VERBS_REAP_WAIT_S, n);
            v->reaper_on = 0;
            return;
        }
        v->reaper_on = 0;
    }
    free(v->reap_qp);
    free(v->reap_cq);
    if (v->qps) {
        for (int qi = 0; qi < v->size * v->nrails; qi++) {
            vqp *h = &v->qps[qi];
            pool_fini(&h->own);
            if (h->rmr)
                ibv_dereg_mr(h->rmr);
            if (v->g.qps && !v->g.srq)
                free(v->g.qps[qi].rbuf);
        }
    }
    if (v->regs)
        for (int i = 0; i < v->nregs; i++)
            reg_drop(v, i);
    if (v->vc_on) {
        v->vc_on = 0;
        bfo_vc_destroy(&v->vc);
    }
    bfo_tp_pends_fini(&v->pends);
    for (int qi = 0; v->ah && qi < v->size * v->nrails; qi++)
        if (v->ah[qi])
            ibv_destroy_ah(v->ah[qi]);
    for (int r = 0; r < BFO_MAX_RAILS; r++) {
        vrail *ra = &v->rails[r];
        if (ra->lfd >= 0)
            close(ra->lfd);
        if (ra->uqp)
            ibv_destroy_qp(ra->uqp);
        if (ra->umr)
            ibv_dereg_mr(ra->umr);
        if (ra->ucq)
            ibv_destroy_cq(ra->ucq);
        free(ra->ubuf);
    }
    for (int d = 0; d < v->ndev; d++) {
        if (v->devs[d].srq) /* after every queue pair attached to it (the reaper's, joined) */
            ibv_destroy_srq(v->devs[d].srq);
        pool_fini(&v->devs[d].rp);
        pool_fini(&v->devs[d].sp);
        if (v->devs[d].ch)
            ibv_destroy_comp_channel(v->devs[d].ch);
        if (v->devs[d].pd)
            ibv_dealloc_pd(v->devs[d].pd);
        if (v->devs[d].ctx)
            ibv_close_device(v->devs[d].ctx);
    }
    free(v->qps);
    free(v->drain);
    free(v->pcard);
    free(v->pcard_st);
    free(v->ah);
    free(v->ents);
    free(v->gmem);
    free(v->regs);
    free(v->vents);
    free(v);
}

/* ------------------------------------------------- the transport's row */

static int op_claims(const char *rail) { return bfo_verbs_is_rail(rail); }

static int op_open(void **out, const bfo_transport_args *a)
{
    bfo_verbs *v = NULL;
    bfo_verbs_options o;
    int rc;
    memset(&o, 0, sizeof o);
    if (a->opt)
        o = *(const bfo_verbs_options *)a->opt;
    if (!o.log_level)
        o.log_level = a->log_level;
    for (int r = 0; a->bandwidth && r < a->nrails; r++)
        if (a->bandwidth[r])
            o.rail_bandwidth[r] = a->bandwidth[r];
    rc = bfo_verbs_open(&v, a->rank, a->size, a->rails, a->nrails, a->cfg, &o);
    if (rc == BFO_OK)
        v->sink = *a->sink;
    *out = v;
    return rc;
}

static int op_address(void *v, int rail, bfo_addr *out) { return bfo_verbs_address((bfo_verbs *)v, rail, out); }

static int op_start(void *vv, uint64_t job)
{
    bfo_verbs *v = (bfo_verbs *)vv;
    bfo_sink sink = v->sink;
    return bfo_verbs_start(v, job, &sink);
}

static void op_backend(void *v, bfo_backend *be) { bfo_verbs_backend((bfo_verbs *)v, be); }
static int op_progress(void *v, uint64_t now) { return bfo_verbs_progress((bfo_verbs *)v, now); }
static int op_wait_fds(void *v, int *fds, int max) { return bfo_verbs_wait_fds((bfo_verbs *)v, fds, max); }

static void op_fault(void *v, int rail, int on)
{
    if (on)
        bfo_verbs_fault((bfo_verbs *)v, rail);
}

static void op_stats(void *v, int rail, bfo_rail_stats *o)
{
    const bfo_verbs_rail_stats *s = bfo_verbs_get_stats((const bfo_verbs *)v, rail);
    memset(o, 0, sizeof *o);
    if (!s)
        return;
    o->frames_tx = s->frames_tx;
    o->frames_rx = s->frames_rx;
    o->bytes_tx = s->bytes_tx + s->rdma_bytes;
    o->bytes_rx = s->bytes_rx;
    o->connects = s->connects;
    o->connect_failures = s->connect_failures;
    o->conn_errors = s->qp_errors;
    o->malformed = s->malformed;
    o->hellos_rejected = s->hellos_rejected;
    o->completed_ok = s->completed_ok;
    o->completed_failed = s->completed_failed;
    o->backpressure = s->backpressure;
    o->nudges_tx = s->host_probes; /* posted only for the peer's adapter to answer */
    o->busy_heard = s->host_heard;
}

static void op_dump(void *v, FILE *f) { bfo_verbs_dump((const bfo_verbs *)v, f); }
static void op_fini(void *v) { bfo_verbs_fini((bfo_verbs *)v); }
static void op_mem_released(void *v, const void *buf, size_t len)
{
    v_mem_released((bfo_verbs *)v, buf, len);
}

static const char *op_errname(int rc)
{
    return rc == BFO_VERBS_ERR_DEVICE ? "BFO_VERBS_ERR_DEVICE" : rc == BFO_VERBS_ERR_SOCKET ? "BFO_VERBS_ERR_SOCKET" : NULL;
}

/* The tunables (bfo_setting.h; bfo_verbs.h, bfo_verbs_options): BFO_VERBS_<NAME>,
 * `bfo run --set verbs.NAME=V`, pml_bfo_verbs_<name>.  Defaults as bfo_verbs_open
 * applies them. */
static const bfo_setting verbs_settings[] = {
    { "retry_cnt", BFO_SETTING_INT, BFO_SETTING_AT(bfo_verbs_options, retry_cnt), RETRY_CNT_DEFAULT, 1, 6, 0,
      "transport retries of a queue pair before it fails (7 would mean forever on rxe)" },
    { "timeout", BFO_SETTING_INT, BFO_SETTING_AT(bfo_verbs_options, timeout), TIMEOUT_DEFAULT, 1, 31, 0,
      "the local ACK timeout exponent: 4.096 us x 2^timeout per try" },
    { "recv_depth", BFO_SETTING_INT, BFO_SETTING_AT(bfo_verbs_options, recv_depth), DEPTH_DEFAULT, 2, 4096, 0,
      "receive buffers per peer and rail" },
    { "send_depth", BFO_SETTING_INT, BFO_SETTING_AT(bfo_verbs_options, send_depth), DEPTH_DEFAULT, 1, 4096, 0,
      "send buffers per peer and rail (without the shared receive queue)" },
    { "srq", BFO_SETTING_BOOL, BFO_SETTING_AT(bfo_verbs_options, srq), 1, 0, 1, BFO_SETTING_OFF,
      "1: receives from a shared receive queue per device where the device has one; 0: per queue pair "
      "(recv_depth, send_depth)" },
    { "srq_frames", BFO_SETTING_INT, BFO_SETTING_AT(bfo_verbs_options, srq_frames), SRQ_FRAMES_DEFAULT, 2, 65536, 0,
      "receive buffers of the shared receive queue per device (and half as many send buffers)" },
    { "credits", BFO_SETTING_INT, BFO_SETTING_AT(bfo_verbs_options, credits), CREDITS_DEFAULT, 1, CREDITS_MAX, 0,
      "frames a peer may have in this side's shared receive queue at once" },
    { "reg_cache", BFO_SETTING_INT, BFO_SETTING_AT(bfo_verbs_options, reg_cache), REG_CACHE_DEFAULT, 1, 1 << 20,
      BFO_SETTING_OFF, "registrations kept for reuse (off: none; docs/porting.md, Registered memory)" },
    { "connect_timeout_ms", BFO_SETTING_MS, BFO_SETTING_AT(bfo_verbs_options, connect_timeout_ns),
      CONNECT_TIMEOUT_DEFAULT_NS / 1e6, 1, 3600000, 0, "the control exchange at most this long (ms)" },
    { "tcp_exchange", BFO_SETTING_BOOL, BFO_SETTING_AT(bfo_verbs_options, tcp_exchange), 0, 0, 1,
      BFO_SETTING_SAME | BFO_SETTING_OFF, "1: the control exchange over TCP to the port's IPv4 address, as before the UD one "
      "(needs an IPv4 GID or @ADDR; talks to older bfo builds); 0: over each rail's UD queue pair, no IP" },
};

/* RDMA at the engine's sizes (registering costs); its registration cache
 * needs mem_released, or reg_cache off. */
static const bfo_transport_tuning verbs_tuning = { 1, 0, 0, 0, "reg_cache" };

/* What it holds (bfo_transport.h, bfo_transport_need), an upper bound:
 * pinned with the shared receive queue (srq not off) per rail its pools
 * (srq_frames receive and half as many send buffers, one frame each: per
 * device, counted per rail), nothing per peer (a device without an SRQ
 * falls back to the per-peer buffers below, beyond this figure: it fails
 * at registration then, logged); without, per (peer, rail) its send and
 * receive buffers, one frame each;
 * per rail the UD queue pair's slots (the exchange); descriptors: the
 * device's and its completion channel's per rail, and with tcp_exchange
 * a socket per (peer, rail) while connecting and the listener.  The
 * registration cache pins the program's own buffers: not counted. */
static void op_need(const bfo_transport_args *a, bfo_transport_need *out)
{
    const bfo_verbs_options *o = (const bfo_verbs_options *)a->opt;
    bfo_tp_sizes z;
    uint64_t depth = (uint64_t)(o && o->recv_depth > 0 ? o->recv_depth : DEPTH_DEFAULT) +
                     (uint64_t)(o && o->send_depth > 0 ? o->send_depth : DEPTH_DEFAULT);
    (void)bfo_tp_config(a->cfg, &z);
    memset(out, 0, sizeof *out);
    out->locked_rail = (uint64_t)(UD_RECV + UD_SEND) * (UD_SLOT + GRH_LEN);
    if (!o || o->srq >= 0) {
        uint64_t f = (uint64_t)(o && o->srq_frames > 0 ? o->srq_frames : SRQ_FRAMES_DEFAULT);
        out->locked_rail += (f + SRQ_SEND(f)) * z.max_frame;
    } else {
        out->locked_peer = depth * z.max_frame;
    }
    out->fds_rail = 2;
    if (o && o->tcp_exchange > 0) {
        out->fds_peer = 1;
        out->fds_rail += 1;
    }
}

const bfo_transport_ops bfo_verbs_transport = {
    "verbs", op_claims, op_open, op_address, op_start, op_backend, op_progress,
    op_wait_fds, op_fault, op_stats, op_dump, op_fini, op_errname, NULL, op_mem_released,
    verbs_settings, (int)(sizeof verbs_settings / sizeof verbs_settings[0]), 0,
    NULL, 0, /* counters: none of its own (its host probes are the common nudges_tx, busy_heard) */
    "verbs:DEVICE[:PORT][@ADDR]", &verbs_tuning, op_need, /* @ADDR: only for tcp_exchange */
};
