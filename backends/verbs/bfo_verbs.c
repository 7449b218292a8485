/* bfo_verbs.c - the verbs backend (see bfo_verbs.h for the contract and design). */
#define _GNU_SOURCE
#include "bfo_verbs.h"
#include "bfo_verbs_map.h"

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

enum { Q_NONE = 0, Q_DIALING, Q_WAIT_REP, Q_WAIT_RTU, Q_UP };
enum { K_SEND = 1, K_WRITE = 2, K_READ = 3 };
#define RECV_BIT (1ull << 63)
#define MAX_DEV BFO_MAX_RAILS
#define RKEY_SLOTS 2

typedef struct vlist {
    int head, tail;
} vlist;

/* A descriptor: one operation the engine posted, from post to completion. */
typedef struct vent {
    uint64_t token;
    int kind, qp, slot, next;
    const void *base[2];
    size_t len[2];
    char *local;
    size_t rlen;
    uint64_t raddr, rkey;
} vent;

typedef struct vdev {
    char name[64];
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    struct ibv_comp_channel *ch;
    int max_rd_atom, dead;
} vdev;

typedef struct vrail {
    char dev[64];
    int port, d, gid_index, is_ib, port_up, mtu;
    uint32_t ip;
    int lfd;
    uint16_t lport, lid;
    uint8_t gid[16];
    unsigned bw;
} vrail;

typedef struct vqp {
    int peer, rail, dialer;
    struct ibv_qp *qp;
    struct ibv_cq *cq;
    int state, reported, awaiting, connect_req, broken, malformed;
    char why[128];
    uint32_t psn;
    /* control channel */
    int cfd;
    uint8_t cin[BFO_VERBS_CTL_SIZE], cout[BFO_VERBS_CTL_SIZE];
    size_t cin_got, cout_len, cout_off;
    uint64_t deadline;
    uint32_t peer_qpn, peer_psn;
    uint16_t peer_lid;
    uint8_t peer_gid[16];
    int peer_mtu;
    /* send */
    uint8_t *sbuf;
    struct ibv_mr *smr;
    int *sfree, nsfree, sq_used;
    vlist posted, backlog;
    /* receive: buffers posted, and filled ones waiting for the engine, in order */
    uint8_t *rbuf;
    struct ibv_mr *rmr;
    int *rfree, nrfree, rposted;
    int *rxq, rx_head, rx_n;
    uint32_t *rxlen;
} vqp;

/* An accepted control connection before its REQ names the (peer, rail). */
typedef struct vpend {
    int fd, rail;
    size_t got;
    uint8_t buf[BFO_VERBS_CTL_SIZE];
    uint64_t deadline;
} vpend;

/* A registration: the region, one MR per device that can RDMA. */
typedef struct vreg {
    char *addr;
    size_t len;
    struct ibv_mr *mr[RKEY_SLOTS];
    uint64_t key, last_use;
    int refs, used;
} vreg;

struct bfo_verbs {
    int rank, size, nrails, ndev, log;
    bfo_verbs_options o;
    bfo_config cfg;
    vrail rails[BFO_MAX_RAILS];
    vdev devs[MAX_DEV];
    bfo_tcp_addr *table;
    uint64_t job, now, use_clock;
    bfo_sink sink;
    vqp *qps;
    vent *ents;
    int nents, ent_free;
    vlist failed;
    vpend *pend;
    int npend;
    vreg *regs;
    int nregs;
    size_t max_frame;
    int started;
    bfo_verbs_rail_stats st[BFO_MAX_RAILS];
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

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void vlog(const bfo_verbs *v, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void vlog(const bfo_verbs *v, int level, const char *fmt, ...)
{
    va_list ap;
    char line[512];
    if (v->log < level)
        return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    /* CLOCK_MONOTONIC seconds: tests line these up with the time of a fault */
    fprintf(stderr, "bfo-verbs[%d] %.3f: %s\n", v->rank, (double)now_ns() / 1e9, line);
}

const char *bfo_verbs_errname(int rc)
{
    if (rc == BFO_VERBS_ERR_DEVICE)
        return "BFO_VERBS_ERR_DEVICE";
    if (rc == BFO_VERBS_ERR_SOCKET)
        return "BFO_VERBS_ERR_SOCKET";
    return bfo_tcp_errname(rc);
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

static void vl_push(bfo_verbs *v, vlist *L, int i)
{
    v->ents[i].next = -1;
    if (L->tail >= 0)
        v->ents[L->tail].next = i;
    else
        L->head = i;
    L->tail = i;
}

static int vl_pop(bfo_verbs *v, vlist *L)
{
    int i = L->head;
    if (i >= 0) {
        L->head = v->ents[i].next;
        if (L->head < 0)
            L->tail = -1;
    }
    return i;
}

static void vl_append(bfo_verbs *v, vlist *dst, vlist *src)
{
    if (src->head < 0)
        return;
    if (dst->tail >= 0)
        v->ents[dst->tail].next = src->head;
    else
        dst->head = src->head;
    dst->tail = src->tail;
    src->head = src->tail = -1;
}

static vqp *qp_of(bfo_verbs *v, int peer, int rail) { return &v->qps[peer * v->nrails + rail]; }

static void set_broken(bfo_verbs *v, vqp *q, int malformed, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void set_broken(bfo_verbs *v, vqp *q, int malformed, const char *fmt, ...)
{
    va_list ap;
    (void)v;
    if (q->broken)
        return;
    q->broken = 1;
    q->malformed = malformed;
    va_start(ap, fmt);
    vsnprintf(q->why, sizeof q->why, fmt, ap);
    va_end(ap);
}

/* Completes a descriptor: frees it first (the engine may post from inside). */
static void complete(bfo_verbs *v, int i, int ok, int rail)
{
    uint64_t token = v->ents[i].token;
    v->ents[i].next = v->ent_free;
    v->ent_free = i;
    if (ok)
        v->st[rail].completed_ok++;
    else
        v->st[rail].completed_failed++;
    v->sink.completion(v->sink.ctx, token, ok);
}

static void emit(bfo_verbs *v, vqp *q, int ev)
{
    vlog(v, 2, "peer %d rail %d: %s", q->peer, q->rail,
         ev == BFO_EV_CONNECTED ? "CONNECTED" : ev == BFO_EV_CONNECT_FAILED ? "CONNECT_FAILED" : "RAIL_ERROR");
    v->sink.rail_event(v->sink.ctx, q->peer, q->rail, ev, v->now);
}

/* ------------------------------------------------------- control messages */

static void ctl_encode(const bfo_verbs *v, const vqp *q, int kind, uint8_t *m)
{
    const vrail *r = &v->rails[q->rail];
    memset(m, 0, BFO_VERBS_CTL_SIZE);
    bfo_put32(m, BFO_VERBS_MAGIC);
    m[4] = (uint8_t)kind;
    m[5] = 1;
    bfo_put16(m + 6, (uint16_t)q->rail);
    bfo_put32(m + 8, (uint32_t)v->rank);
    bfo_put32(m + 12, (uint32_t)v->size);
    bfo_put64(m + 16, v->job);
    bfo_put32(m + 24, q->qp ? q->qp->qp_num : 0);
    bfo_put32(m + 28, q->psn);
    bfo_put16(m + 32, r->lid);
    m[34] = (uint8_t)r->mtu;
    memcpy(m + 36, r->gid, 16);
}

/* Checks a message; fills the peer's QP fields into q (when q). */
static int ctl_decode(const bfo_verbs *v, const uint8_t *m, int kind, int rail, int *rank,
                      vqp *q, char *why, size_t whylen)
{
    uint32_t rk = bfo_get32(m + 8);
    if (bfo_get32(m) != BFO_VERBS_MAGIC || m[5] != 1) {
        snprintf(why, whylen, "not a control message (magic %08x version %u)", bfo_get32(m), m[5]);
        return -1;
    }
    if (m[4] != kind) {
        snprintf(why, whylen, "control message kind %u, expected %d", m[4], kind);
        return -1;
    }
    if (bfo_get64(m + 16) != v->job || bfo_get32(m + 12) != (uint32_t)v->size) {
        snprintf(why, whylen, "control message of another job");
        return -1;
    }
    if (rk >= (uint32_t)v->size || rk == (uint32_t)v->rank || bfo_get16(m + 6) != (uint16_t)rail) {
        snprintf(why, whylen, "control message from rank %u for rail %u on rail %d", rk,
                 bfo_get16(m + 6), rail);
        return -1;
    }
    if (kind != BFO_VERBS_K_RTU && (bfo_get32(m + 24) == 0 || m[34] < 1 || m[34] > 5)) {
        snprintf(why, whylen, "control message with a bad QP number or MTU");
        return -1;
    }
    *rank = (int)rk;
    if (q && kind != BFO_VERBS_K_RTU) {
        q->peer_qpn = bfo_get32(m + 24) & 0xffffff;
        q->peer_psn = bfo_get32(m + 28) & 0xffffff;
        q->peer_lid = bfo_get16(m + 32);
        q->peer_mtu = m[34];
        memcpy(q->peer_gid, m + 36, 16);
    }
    return 0;
}

/* ------------------------------------------------------------ queue pairs */

static int post_recv(bfo_verbs *v, vqp *q, int b)
{
    struct ibv_sge sge;
    struct ibv_recv_wr wr, *bad = NULL;
    sge.addr = (uintptr_t)(q->rbuf + (size_t)b * v->max_frame);
    sge.length = (uint32_t)v->max_frame;
    sge.lkey = q->rmr->lkey;
    memset(&wr, 0, sizeof wr);
    wr.wr_id = RECV_BIT | (uint64_t)b;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    if (ibv_post_recv(q->qp, &wr, &bad) != 0)
        return -1;
    q->rposted++;
    return 0;
}

/* A new queue pair in INIT with every free receive buffer posted. */
static int qp_create(bfo_verbs *v, vqp *q)
{
    const vrail *r = &v->rails[q->rail];
    vdev *d = &v->devs[r->d];
    struct ibv_qp_init_attr ia;
    struct ibv_qp_attr a;
    int sq = 2 * v->o.send_depth;
    q->cq = ibv_create_cq(d->ctx, sq + v->o.recv_depth + 4, NULL, d->ch, 0);
    if (!q->cq) {
        vlog(v, 1, "peer %d rail %d: ibv_create_cq: %s", q->peer, q->rail, strerror(errno));
        return -1;
    }
    memset(&ia, 0, sizeof ia);
    ia.send_cq = q->cq;
    ia.recv_cq = q->cq;
    ia.qp_type = IBV_QPT_RC;
    ia.cap.max_send_wr = (uint32_t)sq;
    ia.cap.max_recv_wr = (uint32_t)v->o.recv_depth;
    ia.cap.max_send_sge = 1;
    ia.cap.max_recv_sge = 1;
    q->qp = ibv_create_qp(d->pd, &ia);
    if (!q->qp) {
        vlog(v, 1, "peer %d rail %d: ibv_create_qp: %s", q->peer, q->rail, strerror(errno));
        ibv_destroy_cq(q->cq);
        q->cq = NULL;
        return -1;
    }
    memset(&a, 0, sizeof a);
    a.qp_state = IBV_QPS_INIT;
    a.pkey_index = 0;
    a.port_num = (uint8_t)r->port;
    a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
    if (ibv_modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) {
        vlog(v, 1, "peer %d rail %d: QP to INIT: %s", q->peer, q->rail, strerror(errno));
        return -1;
    }
    q->psn = (uint32_t)(now_ns() * 2654435761u + (uint64_t)q->peer * 7919u + (uint64_t)q->rail) & 0xffffff;
    while (q->nrfree > 0) {
        int b = q->rfree[q->nrfree - 1];
        if (post_recv(v, q, b) != 0) {
            vlog(v, 1, "peer %d rail %d: ibv_post_recv: %s", q->peer, q->rail, strerror(errno));
            return -1;
        }
        q->nrfree--;
    }
    q->sq_used = 0;
    return 0;
}

/* INIT -> RTR -> RTS towards the peer's QP (q->peer_*). */
static int qp_connect(bfo_verbs *v, vqp *q)
{
    const vrail *r = &v->rails[q->rail];
    const vdev *d = &v->devs[r->d];
    struct ibv_qp_attr a;
    int mtu = r->mtu < q->peer_mtu ? r->mtu : q->peer_mtu;
    memset(&a, 0, sizeof a);
    a.qp_state = IBV_QPS_RTR;
    a.path_mtu = (enum ibv_mtu)mtu;
    a.dest_qp_num = q->peer_qpn;
    a.rq_psn = q->peer_psn;
    a.max_dest_rd_atomic = (uint8_t)d->max_rd_atom;
    a.min_rnr_timer = 12; /* 0.64 ms */
    a.ah_attr.port_num = (uint8_t)r->port;
    a.ah_attr.dlid = q->peer_lid;
    if (!r->is_ib || r->gid_index > 0) {
        a.ah_attr.is_global = 1;
        memcpy(a.ah_attr.grh.dgid.raw, q->peer_gid, 16);
        a.ah_attr.grh.sgid_index = (uint8_t)r->gid_index;
        a.ah_attr.grh.hop_limit = 64;
    }
    if (ibv_modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                                     IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)) {
        vlog(v, 1, "peer %d rail %d: QP to RTR: %s", q->peer, q->rail, strerror(errno));
        return -1;
    }
    memset(&a, 0, sizeof a);
    a.qp_state = IBV_QPS_RTS;
    a.timeout = (uint8_t)v->o.timeout;
    a.retry_cnt = (uint8_t)v->o.retry_cnt;
    a.rnr_retry = 7;
    a.sq_psn = q->psn;
    a.max_rd_atomic = (uint8_t)d->max_rd_atom;
    if (ibv_modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                                     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC)) {
        vlog(v, 1, "peer %d rail %d: QP to RTS: %s", q->peer, q->rail, strerror(errno));
        return -1;
    }
    return 0;
}

static void ctl_close(vqp *q)
{
    if (q->cfd >= 0)
        close(q->cfd);
    q->cfd = -1;
    q->cin_got = q->cout_len = q->cout_off = 0;
}

/* One work completion.  Sends, writes and reads complete in order per QP. */
static void handle_wc(bfo_verbs *v, vqp *q, const struct ibv_wc *wc)
{
    bfo_verbs_wc_action a = bfo_verbs_map_wc((int)wc->status, (wc->wr_id & RECV_BIT) != 0);
    bfo_verbs_rail_stats *st = &v->st[q->rail];
    if (wc->status != IBV_WC_SUCCESS) {
        if (wc->status == IBV_WC_WR_FLUSH_ERR)
            st->flushed++;
        else if ((unsigned)wc->status < sizeof st->wc_errors / sizeof st->wc_errors[0])
            st->wc_errors[wc->status]++;
        if (a.qp_failed)
            set_broken(v, q, a.malformed, "%s (%s) on %s", bfo_verbs_wc_name((int)wc->status),
                       bfo_verbs_cause_name(a.cause),
                       (wc->wr_id & RECV_BIT) ? "a receive" : "an operation");
        if (a.malformed)
            st->malformed++;
    }
    if (wc->wr_id & RECV_BIT) {
        int b = (int)(wc->wr_id & 0xffffffffu);
        q->rposted--;
        if (a.ok) {
            int at = (q->rx_head + q->rx_n) % v->o.recv_depth;
            q->rxq[at] = b;
            q->rxlen[at] = wc->byte_len;
            q->rx_n++;
        } else {
            q->rfree[q->nrfree++] = b;
        }
        return;
    }
    /* an operation: it is in posted; mark the outcome */
    int i = (int)wc->wr_id;
    if (i < 0 || i >= v->nents)
        return;
    vent *en = &v->ents[i];
    q->sq_used--;
    if (en->kind == K_SEND && en->slot >= 0) {
        q->sfree[q->nsfree++] = en->slot;
        en->slot = -1;
    }
    /* unlink from posted (in order: normally the head) */
    {
        int prev = -1, k = q->posted.head;
        while (k >= 0 && k != i) {
            prev = k;
            k = v->ents[k].next;
        }
        if (k < 0)
            return;
        if (prev < 0)
            q->posted.head = en->next;
        else
            v->ents[prev].next = en->next;
        if (q->posted.tail == i)
            q->posted.tail = prev;
    }
    if (a.ok) {
        if (en->kind == K_SEND) {
            st->frames_tx++;
            st->bytes_tx += en->len[0] + en->len[1];
        } else {
            st->rdma_bytes += en->rlen;
            if (en->kind == K_WRITE)
                st->rdma_writes++;
            else
                st->rdma_reads++;
        }
        complete(v, i, 1, q->rail);
    } else {
        /* fails after the rail error is reported (settle) */
        vl_push(v, &v->failed, i);
        en->qp = (int)(q - v->qps);
    }
}

static int poll_cq(bfo_verbs *v, vqp *q)
{
    struct ibv_wc wc[16];
    int n, total = 0;
    if (!q->cq)
        return 0;
    while ((n = ibv_poll_cq(q->cq, 16, wc)) > 0) {
        for (int k = 0; k < n; k++)
            handle_wc(v, q, &wc[k]);
        total += n;
        if (n < 16)
            break;
    }
    if (n < 0)
        set_broken(v, q, 0, "ibv_poll_cq failed");
    return total;
}

/* Moves the queue pair to ERR, collects every flushed work request (bounded
 * wait), destroys it.  Operations still posted, and the backlog, go to
 * `dead`; filled receive buffers stay queued for the engine. */
static void qp_destroy(bfo_verbs *v, vqp *q, vlist *dead)
{
    if (q->qp) {
        struct ibv_qp_attr a;
        uint64_t until = now_ns() + 100000000ull; /* rxe flushes at once; bounded */
        memset(&a, 0, sizeof a);
        a.qp_state = IBV_QPS_ERR;
        ibv_modify_qp(q->qp, &a, IBV_QP_STATE);
        while ((q->sq_used > 0 || q->rposted > 0) && now_ns() < until) {
            if (poll_cq(v, q) == 0)
                usleep(200);
        }
        if (q->sq_used > 0 || q->rposted > 0)
            vlog(v, 2, "peer %d rail %d: %d operation(s) and %d receive(s) not flushed in time",
                 q->peer, q->rail, q->sq_used, q->rposted);
        vlog(v, 3, "peer %d rail %d: flushed; the queue pair goes to the reaper", q->peer, q->rail);
    }
    if (q->qp || q->cq)
        reap(v, q->qp, q->cq);
    q->qp = NULL;
    q->cq = NULL;
    /* what never came back: its buffers are free again (the QP is gone) */
    for (int k = q->posted.head; k >= 0; k = v->ents[k].next)
        if (v->ents[k].kind == K_SEND && v->ents[k].slot >= 0) {
            q->sfree[q->nsfree++] = v->ents[k].slot;
            v->ents[k].slot = -1;
        }
    if (q->rposted > 0) {
        /* rebuild the free list: every buffer not waiting for the engine */
        char *busy = calloc((size_t)v->o.recv_depth, 1);
        if (busy) {
            for (int k = 0; k < q->rx_n; k++)
                busy[q->rxq[(q->rx_head + k) % v->o.recv_depth]] = 1;
            q->nrfree = 0;
            for (int b = 0; b < v->o.recv_depth; b++)
                if (!busy[b])
                    q->rfree[q->nrfree++] = b;
            free(busy);
        }
        q->rposted = 0;
    }
    q->sq_used = 0;
    vl_append(v, dead, &q->posted);
    vl_append(v, dead, &q->backlog);
}

/* Tears a (peer, rail) down: RAIL_ERROR (if the engine had it up) or
 * CONNECT_FAILED (if it waited for a connection), then every operation not
 * completed fails.  Only at safe points (progress). */
static void conn_close(bfo_verbs *v, vqp *q, const char *why, int report)
{
    vlist dead = { -1, -1 };
    int reported = q->reported && report, awaiting = q->awaiting;
    if (q->malformed)
        v->st[q->rail].malformed++;
    if (q->state == Q_UP || q->reported)
        v->st[q->rail].qp_errors++;
    if (q->qp || q->cfd >= 0)
        vlog(v, q->reported && report ? 1 : 2, "peer %d rail %d: queue pair closed: %s", q->peer,
             q->rail, why);
    ctl_close(q);
    q->state = Q_NONE; /* posts from here on fail */
    q->reported = 0;
    if (reported) {
        emit(v, q, BFO_EV_RAIL_ERROR);
    } else if (awaiting && (q->dialer || !report)) {
        q->awaiting = 0;
        v->st[q->rail].connect_failures++;
        emit(v, q, BFO_EV_CONNECT_FAILED);
    }
    qp_destroy(v, q, &dead);
    q->broken = q->malformed = 0;
    for (int i = vl_pop(v, &dead); i >= 0; i = vl_pop(v, &dead))
        complete(v, i, 0, q->rail);
}

/* Broken queue pairs close, failed operations complete, until nothing is left. */
static void settle(bfo_verbs *v)
{
    for (int round = 0; round < 1000; round++) {
        int any = 0;
        for (int i = 0; i < v->size * v->nrails; i++) {
            vqp *q = &v->qps[i];
            if (q->broken) {
                char why[sizeof q->why];
                memcpy(why, q->why, sizeof why);
                conn_close(v, q, why, 1);
                any = 1;
            }
        }
        if (v->failed.head >= 0) {
            vlist f = v->failed;
            v->failed.head = v->failed.tail = -1;
            for (int i = vl_pop(v, &f); i >= 0; i = vl_pop(v, &f))
                complete(v, i, 0, v->qps[v->ents[i].qp].rail);
            any = 1;
        }
        if (!any)
            return;
    }
}

/* ---------------------------------------------------------------- posting */

static const vreg *reg_find(const bfo_verbs *v, const void *p, size_t len)
{
    const char *c = (const char *)p;
    for (int i = 0; i < v->nregs; i++) {
        const vreg *g = &v->regs[i];
        if (g->used && c >= g->addr && c + len <= g->addr + g->len)
            return g;
    }
    return NULL;
}

/* Posts what the queue pair has room for, in order. */
static void kick(bfo_verbs *v, vqp *q)
{
    while (q->backlog.head >= 0 && q->qp && q->state == Q_UP && !q->broken &&
           q->sq_used < 2 * v->o.send_depth) {
        int i = q->backlog.head;
        vent *en = &v->ents[i];
        struct ibv_sge sge;
        struct ibv_send_wr wr, *bad = NULL;
        const vrail *r = &v->rails[q->rail];
        if (en->kind == K_SEND && q->nsfree == 0)
            return;
        memset(&wr, 0, sizeof wr);
        wr.wr_id = (uint64_t)i;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        wr.send_flags = IBV_SEND_SIGNALED;
        if (en->kind == K_SEND) {
            int s = q->sfree[q->nsfree - 1];
            uint8_t *b = q->sbuf + (size_t)s * v->max_frame;
            memcpy(b, en->base[0], en->len[0]);
            if (en->len[1])
                memcpy(b + en->len[0], en->base[1], en->len[1]);
            sge.addr = (uintptr_t)b;
            sge.length = (uint32_t)(en->len[0] + en->len[1]);
            sge.lkey = q->smr->lkey;
            wr.opcode = IBV_WR_SEND;
            en->slot = s;
        } else {
            const vreg *g = reg_find(v, en->local, en->rlen);
            int slot = v->devs[r->d].dead ? -1 : r->d;
            if (!g || slot < 0 || slot >= RKEY_SLOTS || !g->mr[slot]) {
                set_broken(v, q, 0, "RDMA from memory that is not registered");
                return;
            }
            sge.addr = (uintptr_t)en->local;
            sge.length = (uint32_t)en->rlen;
            sge.lkey = g->mr[slot]->lkey;
            wr.opcode = en->kind == K_WRITE ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ;
            wr.wr.rdma.remote_addr = en->raddr;
            wr.wr.rdma.rkey = (uint32_t)(en->rkey >> (32 * slot));
        }
        if (ibv_post_send(q->qp, &wr, &bad) != 0) {
            en->slot = -1;
            set_broken(v, q, 0, "ibv_post_send: %s", strerror(errno));
            return;
        }
        if (en->kind == K_SEND)
            q->nsfree--;
        vl_pop(v, &q->backlog);
        vl_push(v, &q->posted, i);
        q->sq_used++;
    }
}

static int post_common(bfo_verbs *v, int peer, int rail, vent **out)
{
    int i;
    if (!v->started || peer < 0 || peer >= v->size || peer == v->rank || rail < 0 ||
        rail >= v->nrails || v->ent_free < 0)
        return -1;
    i = v->ent_free;
    v->ent_free = v->ents[i].next;
    *out = &v->ents[i];
    memset(*out, 0, sizeof **out);
    (*out)->slot = -1;
    (*out)->qp = peer * v->nrails + rail;
    return i;
}

static void post_finish(bfo_verbs *v, vqp *q, int i)
{
    if (q->state != Q_UP || !q->reported || q->broken || !q->qp) {
        vl_push(v, &v->failed, i);
        return;
    }
    vl_push(v, &q->backlog, i);
    kick(v, q);
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
    i = post_common(v, peer, rail, &en);
    if (i < 0)
        return -1;
    en->token = token;
    en->kind = K_SEND;
    en->base[0] = iov[0].base;
    en->len[0] = iov[0].len;
    en->base[1] = iovcnt > 1 ? iov[1].base : NULL;
    en->len[1] = iovcnt > 1 ? iov[1].len : 0;
    post_finish(v, qp_of(v, peer, rail), i);
    return 0;
}

static int v_post_rdma(bfo_verbs *v, int kind, int peer, int rail, void *local, size_t len,
                       uint64_t raddr, uint64_t rkey, uint64_t token)
{
    vent *en;
    int i;
    if (len == 0 || len > 0x7fffffffu || !reg_find(v, local, len))
        return -1;
    i = post_common(v, peer, rail, &en);
    if (i < 0)
        return -1;
    en->token = token;
    en->kind = kind;
    en->local = (char *)local;
    en->rlen = len;
    en->raddr = raddr;
    en->rkey = rkey;
    post_finish(v, qp_of(v, peer, rail), i);
    return 0;
}

static int v_post_write(void *ctx, int peer, int rail, const void *local, size_t len, uint64_t raddr,
                        uint64_t rkey, uint64_t token)
{
    return v_post_rdma((bfo_verbs *)ctx, K_WRITE, peer, rail, (void *)(uintptr_t)local, len, raddr,
                       rkey, token);
}

static int v_post_read(void *ctx, int peer, int rail, void *local, size_t len, uint64_t raddr,
                       uint64_t rkey, uint64_t token)
{
    return v_post_rdma((bfo_verbs *)ctx, K_READ, peer, rail, local, len, raddr, rkey, token);
}

/* ------------------------------------------------------ registration cache */

static void reg_drop(vreg *g)
{
    for (int s = 0; s < RKEY_SLOTS; s++)
        if (g->mr[s])
            ibv_dereg_mr(g->mr[s]);
    memset(g, 0, sizeof *g);
}

static int v_reg_mem(void *ctx, void *buf, size_t len, uint64_t *raddr, uint64_t *rkey)
{
    bfo_verbs *v = (bfo_verbs *)ctx;
    vreg *g = NULL, *victim = NULL;
    int slots = v->ndev < RKEY_SLOTS ? v->ndev : RKEY_SLOTS;
    if (!buf || !len)
        return -1;
    for (int i = 0; i < v->nregs; i++) { /* a cached region that holds it */
        vreg *c = &v->regs[i];
        if (c->used && (char *)buf >= c->addr && (char *)buf + len <= c->addr + c->len) {
            c->refs++;
            c->last_use = ++v->use_clock;
            v->st[0].reg_hits++;
            *raddr = (uint64_t)(uintptr_t)buf;
            *rkey = c->key;
            return 0;
        }
    }
    v->st[0].reg_misses++;
    for (int i = 0; i < v->nregs && !g; i++)
        if (!v->regs[i].used)
            g = &v->regs[i];
    if (!g) { /* evict the least recently used region nobody holds */
        for (int i = 0; i < v->nregs; i++)
            if (v->regs[i].refs == 0 && (!victim || v->regs[i].last_use < victim->last_use))
                victim = &v->regs[i];
        if (!victim)
            return -1; /* every slot held: the engine uses a copy protocol */
        reg_drop(victim);
        g = victim;
    }
    g->key = 0;
    for (int s = 0; s < slots; s++) {
        g->mr[s] = ibv_reg_mr(v->devs[s].pd, buf, len,
                              IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
        if (!g->mr[s]) {
            vlog(v, 1, "ibv_reg_mr(%zu bytes) on %s: %s", len, v->devs[s].name, strerror(errno));
            reg_drop(g);
            return -1;
        }
        g->key |= (uint64_t)g->mr[s]->rkey << (32 * s);
    }
    g->addr = (char *)buf;
    g->len = len;
    g->refs = 1;
    g->used = 1;
    g->last_use = ++v->use_clock;
    *raddr = (uint64_t)(uintptr_t)buf;
    *rkey = g->key;
    return 0;
}

static void v_dereg_mem(void *ctx, uint64_t rkey)
{
    bfo_verbs *v = (bfo_verbs *)ctx;
    for (int i = 0; i < v->nregs; i++) {
        vreg *g = &v->regs[i];
        if (g->used && g->key == rkey && g->refs > 0) {
            if (--g->refs == 0 && v->o.reg_cache < 0)
                reg_drop(g);
            return;
        }
    }
}

void bfo_verbs_uncache(bfo_verbs *v, const void *buf, size_t len)
{
    const char *c = (const char *)buf;
    for (int i = 0; i < v->nregs; i++) {
        vreg *g = &v->regs[i];
        if (g->used && g->refs == 0 && g->addr < c + len && c < g->addr + g->len)
            reg_drop(g);
    }
}

/* ------------------------------------------------------------- connecting */

static int v_connect(void *ctx, int peer, int rail)
{
    bfo_verbs *v = (bfo_verbs *)ctx;
    if (peer < 0 || peer >= v->size || peer == v->rank || rail < 0 || rail >= v->nrails)
        return -1;
    qp_of(v, peer, rail)->connect_req = 1;
    return 0;
}

/* The engine mapped the rail out (its probe timed out, the peer's BROKEN
 * notice): the queue pair it had goes down at the next progress as after an
 * error completion (RAIL_ERROR, the queue pair to the error state, every
 * operation of it completed with ok=0), not at the reconnect after the
 * back-off.  Called from inside engine calls (even bfo_engine_frame, from
 * deliver()): it only marks.  A connection the engine has not been told
 * about (a newer one, still being wired) is left alone. */
static void v_disconnect(void *ctx, int peer, int rail)
{
    bfo_verbs *v = (bfo_verbs *)ctx;
    vqp *q;
    if (!v->started || peer < 0 || peer >= v->size || peer == v->rank || rail < 0 || rail >= v->nrails)
        return;
    q = qp_of(v, peer, rail);
    if (q->reported && !q->broken) {
        vlog(v, 2, "peer %d rail %d: the engine mapped the rail out: the queue pair goes down", peer, rail);
        v->st[rail].disconnects++;
        set_broken(v, q, 0, "the engine mapped the rail out");
    }
}

static int port_active(bfo_verbs *v, vrail *r)
{
    struct ibv_port_attr pa;
    if (v->devs[r->d].dead)
        return 0;
    if (!r->port_up && ibv_query_port(v->devs[r->d].ctx, (uint8_t)r->port, &pa) == 0 &&
        pa.state == IBV_PORT_ACTIVE)
        r->port_up = 1;
    return r->port_up;
}

static void ctl_send_now(bfo_verbs *v, vqp *q)
{
    while (q->cfd >= 0 && q->cout_off < q->cout_len) {
        ssize_t w = send(q->cfd, q->cout + q->cout_off, q->cout_len - q->cout_off,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                set_broken(v, q, 0, "control channel: send: %s", strerror(errno));
            return;
        }
        q->cout_off += (size_t)w;
    }
}

static void dial(bfo_verbs *v, vqp *q)
{
    const bfo_tcp_addr *to = &v->table[q->peer * v->nrails + q->rail];
    struct sockaddr_in me, them;
    int one = 1;
    memset(&me, 0, sizeof me);
    memset(&them, 0, sizeof them);
    me.sin_family = them.sin_family = AF_INET;
    me.sin_addr.s_addr = htonl(v->rails[q->rail].ip);
    them.sin_addr.s_addr = htonl(to->ip);
    them.sin_port = htons(to->port);
    q->cfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (q->cfd < 0) {
        set_broken(v, q, 0, "control channel: socket: %s", strerror(errno));
        return;
    }
    setsockopt(q->cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (bind(q->cfd, (struct sockaddr *)&me, sizeof me) != 0)
        set_broken(v, q, 0, "control channel: bind: %s", strerror(errno));
    else if (connect(q->cfd, (struct sockaddr *)&them, sizeof them) != 0 && errno != EINPROGRESS)
        set_broken(v, q, 0, "control channel: connect: %s", strerror(errno));
    q->state = Q_DIALING;
}

/* connect() requests: whatever the rail had is over; build a new QP and
 * dial (lower rank), or wait for the peer's REQ. */
static void handle_connects(bfo_verbs *v)
{
    for (int i = 0; i < v->size * v->nrails; i++) {
        vqp *q = &v->qps[i];
        if (!q->connect_req)
            continue;
        q->connect_req = 0;
        q->awaiting = 0;
        if (q->qp || q->cfd >= 0 || q->posted.head >= 0 || q->backlog.head >= 0)
            conn_close(v, q, "the engine reconnects", 0);
        q->awaiting = 1;
        q->deadline = v->now + v->o.connect_timeout_ns;
        if (!port_active(v, &v->rails[q->rail])) {
            q->awaiting = 0;
            v->st[q->rail].connect_failures++;
            emit(v, q, BFO_EV_CONNECT_FAILED);
            continue;
        }
        if (!q->dialer)
            continue;
        if (qp_create(v, q) != 0) {
            set_broken(v, q, 0, "cannot create a queue pair");
            continue;
        }
        dial(v, q);
    }
}

static void up(bfo_verbs *v, vqp *q)
{
    q->state = Q_UP;
    q->reported = 1;
    q->awaiting = 0;
    v->st[q->rail].connects++;
    emit(v, q, BFO_EV_CONNECTED);
    kick(v, q);
}

/* The dialer's side of the exchange. */
static void dialer_io(bfo_verbs *v, vqp *q)
{
    char why[128];
    int rank;
    if (q->state == Q_DIALING) {
        struct pollfd pf = { q->cfd, POLLOUT, 0 };
        int err = 0;
        socklen_t el = sizeof err;
        if (poll(&pf, 1, 0) <= 0)
            return;
        if (getsockopt(q->cfd, SOL_SOCKET, SO_ERROR, &err, &el) != 0 || err) {
            set_broken(v, q, 0, "control channel: connect: %s", strerror(err ? err : errno));
            return;
        }
        ctl_encode(v, q, BFO_VERBS_K_REQ, q->cout);
        q->cout_len = BFO_VERBS_CTL_SIZE;
        q->cout_off = 0;
        q->state = Q_WAIT_REP;
    }
    ctl_send_now(v, q);
    if (q->state != Q_WAIT_REP || q->broken)
        return;
    while (q->cin_got < BFO_VERBS_CTL_SIZE) {
        ssize_t n = recv(q->cfd, q->cin + q->cin_got, BFO_VERBS_CTL_SIZE - q->cin_got, MSG_DONTWAIT);
        if (n == 0) {
            set_broken(v, q, 0, "control channel closed by the peer before its reply");
            return;
        }
        if (n < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                set_broken(v, q, 0, "control channel: receive: %s", strerror(errno));
            return;
        }
        q->cin_got += (size_t)n;
    }
    if (ctl_decode(v, q->cin, BFO_VERBS_K_REP, q->rail, &rank, q, why, sizeof why) != 0 ||
        rank != q->peer) {
        set_broken(v, q, 1, "reply: %s", rank != q->peer ? "from the wrong rank" : why);
        return;
    }
    if (qp_connect(v, q) != 0) {
        set_broken(v, q, 0, "cannot bring the queue pair up");
        return;
    }
    ctl_encode(v, q, BFO_VERBS_K_RTU, q->cout);
    q->cout_len = BFO_VERBS_CTL_SIZE;
    q->cout_off = 0;
    ctl_send_now(v, q);
    if (q->broken)
        return;
    ctl_close(q); /* a short message on a fresh connection: sent */
    up(v, q);
}

/* The acceptor's side: a REQ arrived for q (from pend); answer it. */
static void acceptor_req(bfo_verbs *v, vqp *q, int fd, const uint8_t *req)
{
    int rank;
    char why[128];
    if (q->qp || q->cfd >= 0 || q->posted.head >= 0 || q->backlog.head >= 0)
        conn_close(v, q, "replaced by a newer connection", 1);
    ctl_decode(v, req, BFO_VERBS_K_REQ, q->rail, &rank, q, why, sizeof why); /* checked before */
    q->connect_req = 0; /* a connect() not handled yet asked for just this */
    q->cfd = fd;
    if (qp_create(v, q) != 0 || qp_connect(v, q) != 0) {
        set_broken(v, q, 0, "cannot bring a queue pair up for the peer's request");
        return;
    }
    ctl_encode(v, q, BFO_VERBS_K_REP, q->cout);
    q->cout_len = BFO_VERBS_CTL_SIZE;
    q->cout_off = 0;
    q->cin_got = 0;
    q->state = Q_WAIT_RTU;
    q->deadline = v->now + v->o.connect_timeout_ns;
    ctl_send_now(v, q);
}

static void acceptor_io(bfo_verbs *v, vqp *q)
{
    char why[128];
    int rank;
    ctl_send_now(v, q);
    while (!q->broken && q->cin_got < BFO_VERBS_CTL_SIZE) {
        ssize_t n = recv(q->cfd, q->cin + q->cin_got, BFO_VERBS_CTL_SIZE - q->cin_got, MSG_DONTWAIT);
        if (n == 0) {
            set_broken(v, q, 0, "control channel closed by the peer before its RTU");
            return;
        }
        if (n < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                set_broken(v, q, 0, "control channel: receive: %s", strerror(errno));
            return;
        }
        q->cin_got += (size_t)n;
    }
    if (q->broken)
        return;
    if (ctl_decode(v, q->cin, BFO_VERBS_K_RTU, q->rail, &rank, NULL, why, sizeof why) != 0 ||
        rank != q->peer) {
        set_broken(v, q, 1, "RTU: %s", rank != q->peer ? "from the wrong rank" : why);
        return;
    }
    ctl_close(q);
    up(v, q);
}

static void pend_close(bfo_verbs *v, vpend *p, const char *why)
{
    if (why) {
        v->st[p->rail].malformed++;
        vlog(v, 1, "rail %d: control connection dropped: %s", p->rail, why);
    }
    close(p->fd);
    p->fd = -1;
}

static void accept_all(bfo_verbs *v)
{
    for (int r = 0; r < v->nrails; r++) {
        for (;;) {
            int fd = accept4(v->rails[r].lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC), k;
            if (fd < 0)
                break;
            for (k = 0; k < v->npend && v->pend[k].fd >= 0; k++)
                ;
            if (k == v->npend) {
                close(fd);
                continue;
            }
            v->pend[k].fd = fd;
            v->pend[k].rail = r;
            v->pend[k].got = 0;
            v->pend[k].deadline = v->now + v->o.connect_timeout_ns;
        }
    }
    for (int k = 0; k < v->npend; k++) {
        vpend *p = &v->pend[k];
        char why[128];
        int rank;
        if (p->fd < 0)
            continue;
        ssize_t n = recv(p->fd, p->buf + p->got, BFO_VERBS_CTL_SIZE - p->got, MSG_DONTWAIT);
        if (n == 0) {
            pend_close(v, p, p->got ? "closed inside its request" : NULL);
            continue;
        }
        if (n < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                pend_close(v, p, NULL);
            else if (v->now >= p->deadline)
                pend_close(v, p, p->got ? "no complete request in time" : NULL);
            continue;
        }
        p->got += (size_t)n;
        if (p->got < BFO_VERBS_CTL_SIZE)
            continue;
        if (ctl_decode(v, p->buf, BFO_VERBS_K_REQ, p->rail, &rank, NULL, why, sizeof why) != 0) {
            pend_close(v, p, why);
            continue;
        }
        if (rank > v->rank) {
            pend_close(v, p, "a request from a higher rank (it must accept, not dial)");
            continue;
        }
        if (!port_active(v, &v->rails[p->rail])) {
            pend_close(v, p, NULL);
            continue;
        }
        int fd = p->fd;
        p->fd = -1;
        acceptor_req(v, qp_of(v, rank, p->rail), fd, p->buf);
    }
}

static void control_io(bfo_verbs *v)
{
    for (int i = 0; i < v->size * v->nrails; i++) {
        vqp *q = &v->qps[i];
        if (q->cfd < 0 || q->broken)
            continue;
        if (q->dialer)
            dialer_io(v, q);
        else if (q->state == Q_WAIT_RTU)
            acceptor_io(v, q);
    }
}

static void timeouts(bfo_verbs *v)
{
    for (int i = 0; i < v->size * v->nrails; i++) {
        vqp *q = &v->qps[i];
        if (q->peer == v->rank || v->now < q->deadline || q->broken)
            continue;
        if (q->state == Q_DIALING || q->state == Q_WAIT_REP || q->state == Q_WAIT_RTU)
            set_broken(v, q, 0, "no connection within the connect timeout");
        else if (q->state == Q_NONE && q->awaiting && !q->dialer) {
            q->awaiting = 0;
            v->st[q->rail].connect_failures++;
            vlog(v, 2, "peer %d rail %d: the peer did not connect in time", q->peer, q->rail);
            emit(v, q, BFO_EV_CONNECT_FAILED);
        }
    }
}

/* ----------------------------------------------------------------- events */

static void async_events(bfo_verbs *v)
{
    for (int d = 0; d < v->ndev; d++) {
        struct ibv_async_event ev;
        while (v->devs[d].ctx && ibv_get_async_event(v->devs[d].ctx, &ev) == 0) {
            bfo_verbs_async_action a = bfo_verbs_map_async((int)ev.event_type);
            int port = -1;
            vqp *hit = NULL;
            if (ev.event_type == IBV_EVENT_PORT_ERR || ev.event_type == IBV_EVENT_PORT_ACTIVE)
                port = ev.element.port_num;
            for (int i = 0; i < v->size * v->nrails && (a.scope == BFO_VSCOPE_QP || a.scope == BFO_VSCOPE_CQ); i++) {
                vqp *q = &v->qps[i];
                if ((a.scope == BFO_VSCOPE_QP && q->qp && q->qp == ev.element.qp) ||
                    (a.scope == BFO_VSCOPE_CQ && q->cq && q->cq == ev.element.cq))
                    hit = q;
            }
            vlog(v, 1, "%s: async event %s%s", v->devs[d].name,
                 bfo_verbs_event_name((int)ev.event_type), port >= 0 ? " (port)" : "");
            ibv_ack_async_event(&ev);
            if (a.permanent)
                v->devs[d].dead = 1;
            for (int r = 0; r < v->nrails; r++) {
                vrail *ra = &v->rails[r];
                if (ra->d != d || (port >= 0 && ra->port != port))
                    continue;
                if (a.port_state < 0) {
                    ra->port_up = 0;
                    v->st[r].port_errors++;
                } else if (a.port_state > 0) {
                    ra->port_up = 1;
                }
                if (a.scope == BFO_VSCOPE_PORT || a.scope == BFO_VSCOPE_DEVICE)
                    for (int p = 0; p < v->size; p++)
                        if (p != v->rank && (qp_of(v, p, r)->qp || qp_of(v, p, r)->cfd >= 0))
                            set_broken(v, qp_of(v, p, r), 0, "%s", bfo_verbs_event_name((int)ev.event_type));
            }
            if (hit)
                set_broken(v, hit, 0, "%s", bfo_verbs_event_name((int)ev.event_type));
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

/* Received frames, in order per (peer, rail), until the engine says wait. */
static int deliver(bfo_verbs *v)
{
    int n = 0;
    for (int i = 0; i < v->size * v->nrails; i++) {
        vqp *q = &v->qps[i];
        while (q->rx_n > 0) {
            int b = q->rxq[q->rx_head];
            uint32_t len = q->rxlen[q->rx_head];
            int rc = v->sink.frame(v->sink.ctx, q->peer, q->rail, q->rbuf + (size_t)b * v->max_frame,
                                   len, v->now);
            if (rc == BFO_ERR_AGAIN) {
                v->st[q->rail].backpressure++;
                break;
            }
            q->rx_head = (q->rx_head + 1) % v->o.recv_depth;
            q->rx_n--;
            n++;
            v->st[q->rail].frames_rx++;
            v->st[q->rail].bytes_rx += len;
            if (rc != BFO_OK && rc != BFO_ERR_STALE) {
                set_broken(v, q, 1, "the engine rejected a frame: %s", bfo_errname(rc));
                v->st[q->rail].malformed++;
            }
            /* the buffer goes back to the queue pair it came from, if it lives */
            if (q->qp && !q->broken && post_recv(v, q, b) == 0)
                continue;
            q->rfree[q->nrfree++] = b;
        }
    }
    return n;
}

int bfo_verbs_progress(bfo_verbs *v, uint64_t now)
{
    int n = 0;
    v->now = now;
    drain_channels(v);
    async_events(v);
    accept_all(v);
    control_io(v);
    for (int i = 0; i < v->size * v->nrails; i++)
        n += poll_cq(v, &v->qps[i]);
    n += deliver(v);
    settle(v);
    timeouts(v);
    settle(v);
    handle_connects(v);
    settle(v);
    for (int i = 0; i < v->size * v->nrails; i++)
        if (v->qps[i].backlog.head >= 0)
            kick(v, &v->qps[i]);
    settle(v);
    return n;
}

int bfo_verbs_wait_fds(bfo_verbs *v, int *fds, int max)
{
    int n = 0;
    if (v->failed.head >= 0)
        return -1;
    for (int i = 0; i < v->size * v->nrails; i++) {
        vqp *q = &v->qps[i];
        if (q->broken || q->connect_req || q->rx_n > 0 || q->state == Q_DIALING)
            return -1;
        if (q->cq) {
            struct ibv_wc wc;
            ibv_req_notify_cq(q->cq, 0);
            int got = ibv_poll_cq(q->cq, 1, &wc);
            if (got != 0) { /* arrived before the arming: handle it, do not sleep */
                if (got > 0)
                    handle_wc(v, q, &wc);
                return -1;
            }
        }
        if (q->cfd >= 0 && n < max)
            fds[n++] = q->cfd;
    }
    for (int d = 0; d < v->ndev && n + 2 <= max; d++) {
        if (v->devs[d].ch)
            fds[n++] = v->devs[d].ch->fd;
        fds[n++] = v->devs[d].ctx->async_fd;
    }
    for (int r = 0; r < v->nrails && n < max; r++)
        fds[n++] = v->rails[r].lfd;
    for (int k = 0; k < v->npend && n < max; k++)
        if (v->pend[k].fd >= 0)
            fds[n++] = v->pend[k].fd;
    return n;
}

/* ------------------------------------------------------------------- init */

static unsigned v_rail_caps(void *ctx, int rail)
{
    const bfo_verbs *v = (const bfo_verbs *)ctx;
    if (rail < 0 || rail >= v->nrails)
        return 0;
    return v->rails[rail].d < RKEY_SLOTS ? BFO_CAP_RDMA : 0;
}

static unsigned v_rail_bw(void *ctx, int rail)
{
    const bfo_verbs *v = (const bfo_verbs *)ctx;
    return rail >= 0 && rail < v->nrails ? v->rails[rail].bw : 0;
}

void bfo_verbs_backend(bfo_verbs *v, bfo_backend *be)
{
    memset(be, 0, sizeof *be);
    be->ctx = v;
    be->post_send = v_post_send;
    be->post_write = v_post_write;
    be->post_read = v_post_read;
    be->reg_mem = v_reg_mem;
    be->dereg_mem = v_dereg_mem;
    be->connect = v_connect;
    be->disconnect = v_disconnect;
    be->rail_caps = v_rail_caps;
    be->rail_bandwidth = v_rail_bw;
}

static int nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* The GID to use on a port: an IPv4-mapped RoCE v2 entry (the rail's
 * address comes from it), else an IPv4-mapped one, else index 0 (IB). */
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
    snprintf(v->devs[d].name, sizeof v->devs[d].name, "%s", name);
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
    }
    if (v->devs[d].max_rd_atom < 1)
        v->devs[d].max_rd_atom = 1;
    return d;
}

int bfo_verbs_open(bfo_verbs **out, int rank, int size, const char *const *rails, int nrails,
                   const bfo_config *cfg, const bfo_verbs_options *opt)
{
    bfo_verbs *v;
    const char *lv = getenv("BFO_VERBS_LOG");
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
    v->log = v->o.log_level ? v->o.log_level : 1;
    if (lv && *lv)
        v->log = atoi(lv);
    for (int r = 0; r < BFO_MAX_RAILS; r++)
        v->rails[r].lfd = -1;
    rc = BFO_ERR_INVALID;
    if (!v->o.retry_cnt)
        v->o.retry_cnt = 6;
    if (!v->o.timeout)
        v->o.timeout = 14;
    if (!v->o.recv_depth)
        v->o.recv_depth = 32;
    if (!v->o.send_depth)
        v->o.send_depth = 32;
    if (!v->o.reg_cache)
        v->o.reg_cache = 32;
    if (!v->o.connect_timeout_ns)
        v->o.connect_timeout_ns = 2000000000ull;
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
    bfo__config_defaults(&v->cfg);
    v->max_frame = BFO_MAX_HDR_SIZE +
                   (v->cfg.eager_limit > v->cfg.frag_size ? v->cfg.eager_limit : v->cfg.frag_size);
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
        if (pick_gid(v, ra, pa.gid_tbl_len) != 0 || !ra->ip) {
            vlog(v, 1, "%s port %d: no IPv4 address in the GID table (name one: verbs:%s:%d@ADDR)",
                 ra->dev, ra->port, ra->dev, ra->port);
            goto fail;
        }
        rc = BFO_VERBS_ERR_SOCKET;
        memset(&sa, 0, sizeof sa);
        sa.sin_family = AF_INET;
        sa.sin_addr.s_addr = htonl(ra->ip);
        ra->lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (ra->lfd < 0 || bind(ra->lfd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
            listen(ra->lfd, 64) != 0 || getsockname(ra->lfd, (struct sockaddr *)&sa, &sl) != 0) {
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

void bfo_verbs_addrs(const bfo_verbs *v, bfo_tcp_addr *mine)
{
    for (int r = 0; r < v->nrails; r++) {
        mine[r].ip = v->rails[r].ip;
        mine[r].port = v->rails[r].lport;
    }
}

int bfo_verbs_start(bfo_verbs *v, const bfo_tcp_addr *table, uint64_t job, const bfo_sink *sink)
{
    size_t nq = (size_t)v->size * (size_t)v->nrails;
    size_t sbytes = (size_t)v->o.send_depth * v->max_frame, rbytes = (size_t)v->o.recv_depth * v->max_frame;
    v->job = job;
    v->sink = *sink;
    v->table = (bfo_tcp_addr *)calloc(nq, sizeof *v->table);
    v->qps = (vqp *)calloc(nq, sizeof *v->qps);
    v->nents = v->cfg.max_ops + 16;
    v->ents = (vent *)calloc((size_t)v->nents, sizeof *v->ents);
    v->npend = 4 * v->size * v->nrails + 8;
    v->pend = (vpend *)calloc((size_t)v->npend, sizeof *v->pend);
    v->nregs = v->o.reg_cache > 0 ? v->o.reg_cache : 0;
    v->nregs += 64; /* regions held by requests at once; beyond, the engine copies */
    v->regs = (vreg *)calloc((size_t)v->nregs, sizeof *v->regs);
    if (!v->table || !v->qps || !v->ents || !v->pend || !v->regs)
        return BFO_ERR_NO_MEMORY;
    memcpy(v->table, table, nq * sizeof *table);
    for (int i = 0; i < v->nents; i++)
        v->ents[i].next = i + 1 < v->nents ? i + 1 : -1;
    v->ent_free = 0;
    v->failed.head = v->failed.tail = -1;
    for (int k = 0; k < v->npend; k++)
        v->pend[k].fd = -1;
    for (int p = 0; p < v->size; p++)
        for (int r = 0; r < v->nrails; r++) {
            vqp *q = qp_of(v, p, r);
            q->peer = p;
            q->rail = r;
            q->cfd = -1;
            q->dialer = v->rank < p;
            q->posted.head = q->posted.tail = q->backlog.head = q->backlog.tail = -1;
            if (p == v->rank)
                continue;
            q->sbuf = (uint8_t *)malloc(sbytes);
            q->rbuf = (uint8_t *)malloc(rbytes);
            q->sfree = (int *)malloc(sizeof(int) * (size_t)v->o.send_depth);
            q->rfree = (int *)malloc(sizeof(int) * (size_t)v->o.recv_depth);
            q->rxq = (int *)malloc(sizeof(int) * (size_t)v->o.recv_depth);
            q->rxlen = (uint32_t *)malloc(sizeof(uint32_t) * (size_t)v->o.recv_depth);
            if (!q->sbuf || !q->rbuf || !q->sfree || !q->rfree || !q->rxq || !q->rxlen)
                return BFO_ERR_NO_MEMORY;
            q->smr = ibv_reg_mr(v->devs[v->rails[r].d].pd, q->sbuf, sbytes, IBV_ACCESS_LOCAL_WRITE);
            q->rmr = ibv_reg_mr(v->devs[v->rails[r].d].pd, q->rbuf, rbytes, IBV_ACCESS_LOCAL_WRITE);
            if (!q->smr || !q->rmr) {
                vlog(v, 1, "registering %zu bytes of buffers: %s", sbytes + rbytes, strerror(errno));
                return BFO_VERBS_ERR_DEVICE;
            }
            for (int s = 0; s < v->o.send_depth; s++)
                q->sfree[s] = s;
            q->nsfree = v->o.send_depth;
            for (int b = 0; b < v->o.recv_depth; b++)
                q->rfree[b] = b;
            q->nrfree = v->o.recv_depth;
        }
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
    return rail >= 0 && rail < v->nrails ? &v->st[rail] : NULL;
}

void bfo_verbs_fault(bfo_verbs *v, int rail)
{
    if (!v->started || rail < 0 || rail >= v->nrails)
        return;
    for (int p = 0; p < v->size; p++) {
        vqp *q = qp_of(v, p, rail);
        if (p != v->rank && q->qp) {
            struct ibv_qp_attr a;
            memset(&a, 0, sizeof a);
            a.qp_state = IBV_QPS_ERR;
            ibv_modify_qp(q->qp, &a, IBV_QP_STATE);
            set_broken(v, q, 0, "fault hook");
        }
    }
}

static int vl_count(const bfo_verbs *v, const vlist *L)
{
    int n = 0;
    for (int k = L->head; k >= 0 && n <= v->nents; k = v->ents[k].next)
        n++;
    return n;
}

void bfo_verbs_dump(const bfo_verbs *v, FILE *f)
{
    static const char *const st[] = { "NONE", "DIALING", "WAIT_REP", "WAIT_RTU", "UP" };
    uint64_t now = now_ns();
    int free_ents = 0;
    if (!v->started) {
        fprintf(f, "bfo-verbs[%d]: not started\n", v->rank);
        return;
    }
    for (int i = 0; i < v->size * v->nrails; i++) {
        const vqp *q = &v->qps[i];
        struct ibv_qp_attr a;
        struct ibv_qp_init_attr ia;
        int qs = -1;
        if (q->peer == v->rank)
            continue;
        if (q->qp && ibv_query_qp(q->qp, &a, IBV_QP_STATE, &ia) == 0)
            qs = (int)a.qp_state;
        fprintf(f,
                "bfo-verbs[%d]: peer %d rail %d: %s qp %u (ibv state %d) reported %d awaiting %d "
                "connect-req %d broken %d%s%s; sq %d posted %d backlog %d send-buffers free "
                "%d; receives posted %d waiting for the engine %d free %d; cfd %d deadline %+.3f s\n",
                v->rank, q->peer, q->rail, q->state >= 0 && q->state <= Q_UP ? st[q->state] : "?",
                q->qp ? q->qp->qp_num : 0, qs, q->reported, q->awaiting, q->connect_req, q->broken,
                q->broken ? ": " : "", q->broken ? q->why : "", q->sq_used,
                vl_count(v, &q->posted), vl_count(v, &q->backlog), q->nsfree, q->rposted, q->rx_n,
                q->nrfree, q->cfd, q->deadline ? ((double)q->deadline - (double)now) / 1e9 : 0.0);
    }
    for (int k = v->ent_free; k >= 0 && free_ents <= v->nents; k = v->ents[k].next)
        free_ents++;
    fprintf(f, "bfo-verbs[%d]: descriptors %d, free %d, failed (to complete) %d; reaper queue %d\n",
            v->rank, v->nents, free_ents, vl_count(v, &v->failed), v->nreap);
    for (int r = 0; r < v->nrails; r++) {
        const bfo_verbs_rail_stats *s = &v->st[r];
        fprintf(f,
                "bfo-verbs[%d]: rail %d (%s:%d, port %s): frames tx %llu rx %llu, rdma w %llu r %llu, "
                "ok %llu failed %llu flushed %llu, qp errors %llu (disconnects %llu), connects %llu "
                "failed %llu, back-pressure %llu\n",
                v->rank, r, v->rails[r].dev, v->rails[r].port, v->rails[r].port_up ? "up" : "down",
                (unsigned long long)s->frames_tx, (unsigned long long)s->frames_rx,
                (unsigned long long)s->rdma_writes, (unsigned long long)s->rdma_reads,
                (unsigned long long)s->completed_ok, (unsigned long long)s->completed_failed,
                (unsigned long long)s->flushed, (unsigned long long)s->qp_errors,
                (unsigned long long)s->disconnects, (unsigned long long)s->connects,
                (unsigned long long)s->connect_failures,
                (unsigned long long)s->backpressure);
    }
}

void bfo_verbs_fini(bfo_verbs *v)
{
    if (!v)
        return;
    if (v->qps) {
        for (int i = 0; i < v->size * v->nrails; i++) {
            vlist dead = { -1, -1 };
            ctl_close(&v->qps[i]);
            if (v->started)
                qp_destroy(v, &v->qps[i], &dead);
        }
    }
    if (v->reaper_on) { /* every queue pair destroyed before the memory goes */
        pthread_mutex_lock(&v->rmu);
        v->reaper_stop = 1;
        pthread_cond_signal(&v->rcv);
        pthread_mutex_unlock(&v->rmu);
        pthread_join(v->reaper, NULL);
        v->reaper_on = 0;
    }
    free(v->reap_qp);
    free(v->reap_cq);
    if (v->qps) {
        for (int i = 0; i < v->size * v->nrails; i++) {
            vqp *q = &v->qps[i];
            if (q->smr)
                ibv_dereg_mr(q->smr);
            if (q->rmr)
                ibv_dereg_mr(q->rmr);
            free(q->sbuf);
            free(q->rbuf);
            free(q->sfree);
            free(q->rfree);
            free(q->rxq);
            free(q->rxlen);
        }
    }
    if (v->regs)
        for (int i = 0; i < v->nregs; i++)
            if (v->regs[i].used)
                reg_drop(&v->regs[i]);
    if (v->pend)
        for (int k = 0; k < v->npend; k++)
            if (v->pend[k].fd >= 0)
                close(v->pend[k].fd);
    for (int r = 0; r < BFO_MAX_RAILS; r++)
        if (v->rails[r].lfd >= 0)
            close(v->rails[r].lfd);
    for (int d = 0; d < v->ndev; d++) {
        if (v->devs[d].ch)
            ibv_destroy_comp_channel(v->devs[d].ch);
        if (v->devs[d].pd)
            ibv_dealloc_pd(v->devs[d].pd);
        if (v->devs[d].ctx)
            ibv_close_device(v->devs[d].ctx);
    }
    free(v->table);
    free(v->qps);
    free(v->ents);
    free(v->pend);
    free(v->regs);
    free(v);
}
