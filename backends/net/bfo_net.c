/* bfo_net.c - the rail multiplexer (see bfo_net.h). */
#define _GNU_SOURCE
#include "bfo_net.h"
#include "bfo_sink.h"
#include "bfo_tcp_pmix.h"
#ifdef BFO_HAVE_VERBS
#include "bfo_verbs.h"
#endif

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct bfo_net {
    int rank, size, nrails, pmix;
    bfo_tcp *plain;                 /* TCP rails only: bfo_tcp, nothing else */
    bfo_tcp *tcp;                   /* the TCP rail group of a mix (under a sink) */
#ifdef BFO_HAVE_VERBS
    bfo_verbs *verbs;
#endif
    int kind[BFO_MAX_RAILS], local[BFO_MAX_RAILS]; /* engine rail -> (transport, its rail) */
    int g_tcp[BFO_MAX_RAILS], g_verbs[BFO_MAX_RAILS]; /* transport rail -> engine rail */
    int ntcp, nverbs;
    bfo_backend tbe, vbe;
    bfo_engine eng;
    void *emem;
    unsigned bw[BFO_MAX_RAILS];
    const char *bootstrap;
    uint64_t job, timeout_ns;
    bfo_tcp_addr vmine[BFO_MAX_RAILS]; /* verbs control addresses, for the exchange */
    bfo_tcp_addr *vtable;
    bfo_tcp_stats st;
};

uint64_t bfo_net_now(void) { return bfo_tcp_now(); }

int bfo_net_have_verbs(void)
{
#ifdef BFO_HAVE_VERBS
    return 1;
#else
    return 0;
#endif
}

const char *bfo_net_errname(int rc)
{
#ifdef BFO_HAVE_VERBS
    return bfo_verbs_errname(rc);
#else
    return bfo_tcp_errname(rc);
#endif
}

static int is_verbs(const char *s) { return !strncmp(s, "verbs:", 6); }

int bfo_net_check_rails(const char *list)
{
    int n = 0;
    const char *p = list;
    if (!list || !*list)
        return -1;
    for (;;) {
        uint32_t ip;
        if (n >= BFO_MAX_RAILS)
            return -1;
        if (is_verbs(p)) {
            size_t len = strcspn(p, ",");
            if (len <= 6)
                return -1;
        } else if (bfo_tcp_parse_rail(p, &ip) != 0) {
            return -1;
        }
        n++;
        p = strchr(p, ',');
        if (!p)
            return n;
        p++;
    }
}

/* ---------------------------------------------------------- the backend */

static int n_post_send(void *ctx, int peer, int rail, const bfo_iov *iov, int iovcnt, uint64_t token)
{
    bfo_net *n = (bfo_net *)ctx;
    const bfo_backend *b;
    if (rail < 0 || rail >= n->nrails)
        return -1;
    b = n->kind[rail] == BFO_NET_TCP ? &n->tbe : &n->vbe;
    return b->post_send(b->ctx, peer, n->local[rail], iov, iovcnt, token);
}

static int n_post_write(void *ctx, int peer, int rail, const void *local, size_t len, uint64_t raddr,
                        uint64_t rkey, uint64_t token)
{
    bfo_net *n = (bfo_net *)ctx;
    if (rail < 0 || rail >= n->nrails || n->kind[rail] != BFO_NET_VERBS || !n->vbe.post_write)
        return -1;
    return n->vbe.post_write(n->vbe.ctx, peer, n->local[rail], local, len, raddr, rkey, token);
}

static int n_post_read(void *ctx, int peer, int rail, void *local, size_t len, uint64_t raddr,
                       uint64_t rkey, uint64_t token)
{
    bfo_net *n = (bfo_net *)ctx;
    if (rail < 0 || rail >= n->nrails || n->kind[rail] != BFO_NET_VERBS || !n->vbe.post_read)
        return -1;
    return n->vbe.post_read(n->vbe.ctx, peer, n->local[rail], local, len, raddr, rkey, token);
}

static int n_reg_mem(void *ctx, void *buf, size_t len, uint64_t *raddr, uint64_t *rkey)
{
    bfo_net *n = (bfo_net *)ctx;
    return n->vbe.reg_mem ? n->vbe.reg_mem(n->vbe.ctx, buf, len, raddr, rkey) : -1;
}

static void n_dereg_mem(void *ctx, uint64_t rkey)
{
    bfo_net *n = (bfo_net *)ctx;
    if (n->vbe.dereg_mem)
        n->vbe.dereg_mem(n->vbe.ctx, rkey);
}

static int n_connect(void *ctx, int peer, int rail)
{
    bfo_net *n = (bfo_net *)ctx;
    const bfo_backend *b;
    if (rail < 0 || rail >= n->nrails)
        return -1;
    b = n->kind[rail] == BFO_NET_TCP ? &n->tbe : &n->vbe;
    return b->connect ? b->connect(b->ctx, peer, n->local[rail]) : -1;
}

static void n_disconnect(void *ctx, int peer, int rail)
{
    bfo_net *n = (bfo_net *)ctx;
    const bfo_backend *b;
    if (rail < 0 || rail >= n->nrails)
        return;
    b = n->kind[rail] == BFO_NET_TCP ? &n->tbe : &n->vbe;
    if (b->disconnect)
        b->disconnect(b->ctx, peer, n->local[rail]);
}

static unsigned n_caps(void *ctx, int rail)
{
    bfo_net *n = (bfo_net *)ctx;
    const bfo_backend *b;
    if (rail < 0 || rail >= n->nrails)
        return 0;
    b = n->kind[rail] == BFO_NET_TCP ? &n->tbe : &n->vbe;
    return b->rail_caps ? b->rail_caps(b->ctx, n->local[rail]) : 0;
}

static unsigned n_bw(void *ctx, int rail)
{
    bfo_net *n = (bfo_net *)ctx;
    return rail >= 0 && rail < n->nrails ? n->bw[rail] : 0;
}

/* ----------------------------------------------------------- the sinks */

static void up_completion(void *ctx, uint64_t token, int ok)
{
    bfo_engine_completion(&((bfo_net *)ctx)->eng, token, ok);
}

static int up_frame_tcp(void *ctx, int peer, int rail, const uint8_t *buf, size_t len, uint64_t now)
{
    bfo_net *n = (bfo_net *)ctx;
    if (rail < 0 || rail >= n->ntcp)
        return BFO_ERR_INVALID;
    return bfo_engine_frame(&n->eng, peer, n->g_tcp[rail], buf, len, now);
}

static void up_event_tcp(void *ctx, int peer, int rail, int ev, uint64_t now)
{
    bfo_net *n = (bfo_net *)ctx;
    if (rail >= 0 && rail < n->ntcp)
        bfo_engine_rail_event(&n->eng, peer, n->g_tcp[rail], ev, now);
}

static void up_heard_tcp(void *ctx, int peer, int rail, uint64_t now)
{
    bfo_net *n = (bfo_net *)ctx;
    if (rail >= 0 && rail < n->ntcp)
        bfo_engine_rail_heard(&n->eng, peer, n->g_tcp[rail], now);
}

#ifdef BFO_HAVE_VERBS
static int up_frame_verbs(void *ctx, int peer, int rail, const uint8_t *buf, size_t len, uint64_t now)
{
    bfo_net *n = (bfo_net *)ctx;
    if (rail < 0 || rail >= n->nverbs)
        return BFO_ERR_INVALID;
    return bfo_engine_frame(&n->eng, peer, n->g_verbs[rail], buf, len, now);
}

static void up_event_verbs(void *ctx, int peer, int rail, int ev, uint64_t now)
{
    bfo_net *n = (bfo_net *)ctx;
    if (rail >= 0 && rail < n->nverbs)
        bfo_engine_rail_event(&n->eng, peer, n->g_verbs[rail], ev, now);
}
#endif

/* ------------------------------------------------------------ exchange */

/* Every rail in one round: the TCP group's addresses (mine, ntcp of them),
 * then the verbs control addresses; the verbs part of the table is kept. */
static int exchange(void *ctx, int ntcp, const bfo_tcp_addr *mine, bfo_tcp_addr *table, uint64_t *job)
{
    bfo_net *n = (bfo_net *)ctx;
    int tot = ntcp + n->nverbs, rc;
    bfo_tcp_addr all_mine[2 * BFO_MAX_RAILS];
    bfo_tcp_addr *all = (bfo_tcp_addr *)calloc((size_t)n->size * (size_t)tot, sizeof *all);
    if (!all)
        return BFO_ERR_NO_MEMORY;
    for (int r = 0; r < ntcp; r++)
        all_mine[r] = mine[r];
    for (int r = 0; r < n->nverbs; r++)
        all_mine[ntcp + r] = n->vmine[r];
    rc = n->pmix ? bfo_tcp_pmix_exchange(n->rank, n->size, tot, all_mine, all, job, n->timeout_ns)
                 : bfo_tcp_bootstrap(n->bootstrap, n->rank, n->size, tot, all_mine, all, job,
                                     n->timeout_ns);
    if (rc == BFO_OK) {
        n->job = *job; /* one job id for both transports */
        for (int p = 0; p < n->size; p++) {
            for (int r = 0; r < ntcp; r++)
                table[p * ntcp + r] = all[p * tot + r];
            for (int r = 0; r < n->nverbs; r++)
                n->vtable[p * n->nverbs + r] = all[p * tot + ntcp + r];
        }
    }
    free(all);
    return rc;
}

/* --------------------------------------------------------------- init */

int bfo_net_init(bfo_net **out, const bfo_config *cfg_in, const bfo_net_options *opt_in)
{
    bfo_net *n;
    bfo_net_options opt;
    const char *rails = getenv("BFO_RAILS");
    char *list = NULL, *save = NULL;
    const char *names[BFO_MAX_RAILS];
    int rc = BFO_ERR_INVALID, any_verbs = 0;
    *out = NULL;
    opt = opt_in ? *opt_in : (bfo_net_options){ 0 };
    if (rails && *rails && bfo_net_check_rails(rails) < 0) {
        fprintf(stderr, "bfo: bad rail list %s (tcp:ADDR, ADDR or verbs:DEVICE[:PORT], at most %d)\n",
                rails, BFO_MAX_RAILS);
        return BFO_ERR_INVALID;
    }
    any_verbs = rails && strstr(rails, "verbs:") != NULL;
    n = (bfo_net *)calloc(1, sizeof *n);
    if (!n)
        return BFO_ERR_NO_MEMORY;
    if (!any_verbs && !(getenv("BFO_NET_MUX") && !strcmp(getenv("BFO_NET_MUX"), "1"))) {
        /* TCP only: bfo_tcp as it is (BFO_NET_MUX=1: through the multiplexer, for tests) */
        rc = bfo_tcp_init(&n->plain, cfg_in, &opt.tcp);
        if (rc != BFO_OK) {
            free(n);
            return rc;
        }
        n->rank = bfo_tcp_rank(n->plain);
        n->size = bfo_tcp_size(n->plain);
        n->nrails = bfo_tcp_nrails(n->plain);
        for (int r = 0; r < n->nrails; r++)
            n->kind[r] = BFO_NET_TCP;
        *out = n;
        return BFO_OK;
    }
#ifndef BFO_HAVE_VERBS
    if (any_verbs) {
        fprintf(stderr, "bfo: BFO_RAILS names a verbs rail, but this bfo was built without libibverbs "
                        "(apt-get install libibverbs-dev, then make)\n");
        free(n);
        return BFO_ERR_INVALID;
    }
#endif
    /* rank and size */
    if (!getenv("BFO_RANK") && !getenv("BFO_SIZE") && bfo_tcp_pmix_env()) {
        rc = bfo_tcp_pmix_init(&n->rank, &n->size);
        if (rc != BFO_OK) {
            free(n);
            return rc;
        }
        n->pmix = 1;
    } else if (bfo_tcp_env_rank(&n->rank, &n->size) != 0) {
        fprintf(stderr, "bfo: %s (BFO_RANK=%s BFO_SIZE=%s; bfo run sets them)\n", bfo_tcp_env_rank_error(),
                getenv("BFO_RANK") ? getenv("BFO_RANK") : "", getenv("BFO_SIZE") ? getenv("BFO_SIZE") : "");
        free(n);
        return BFO_ERR_INVALID;
    }
    n->bootstrap = getenv("BFO_BOOTSTRAP");
    n->timeout_ns = opt.tcp.bootstrap_timeout_ns;
    if (!n->pmix && n->size > 1) {
        uint32_t ip;
        uint16_t port;
        if (!n->bootstrap || bfo_tcp_parse_hostport(n->bootstrap, &ip, &port) != 0) {
            fprintf(stderr, "bfo: BFO_BOOTSTRAP must be IPV4ADDR:PORT, rank 0's address (it is \"%s\")\n",
                    n->bootstrap ? n->bootstrap : "");
            free(n);
            return BFO_ERR_INVALID;
        }
    }
    /* the rails, in order */
    list = strdup(rails && *rails ? rails : "127.0.0.1");
    if (!list) {
        rc = BFO_ERR_NO_MEMORY;
        goto fail;
    }
    for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int g = n->nrails++;
        if (is_verbs(tok)) {
            n->kind[g] = BFO_NET_VERBS;
            n->local[g] = n->nverbs;
            names[n->nverbs] = tok;
            n->g_verbs[n->nverbs++] = g;
        } else {
            n->kind[g] = BFO_NET_TCP;
            n->local[g] = n->ntcp;
            opt.tcp.rails[n->ntcp] = tok;
            n->g_tcp[n->ntcp++] = g;
        }
        n->bw[g] = opt.rail_bandwidth[g];
    }
    opt.tcp.nrails = n->ntcp;
    (void)names;
    bfo_config cfg = cfg_in ? *cfg_in : (bfo_config){ 0 };
    cfg.rank = n->rank;
    cfg.nranks = n->size;
    cfg.nrails = n->nrails;
#ifdef BFO_HAVE_VERBS
    if (n->nverbs > 0) {
        bfo_verbs_options vo;
        memset(&vo, 0, sizeof vo);
        vo.retry_cnt = opt.verbs_retry_cnt;
        vo.timeout = opt.verbs_timeout;
        vo.recv_depth = opt.verbs_recv_depth;
        vo.send_depth = opt.verbs_send_depth;
        vo.reg_cache = opt.verbs_reg_cache;
        vo.connect_timeout_ns = opt.verbs_connect_timeout_ns;
        vo.log_level = opt.tcp.log_level;
        rc = bfo_verbs_open(&n->verbs, n->rank, n->size, names, n->nverbs, &cfg, &vo);
        if (rc != BFO_OK)
            goto fail;
        bfo_verbs_addrs(n->verbs, n->vmine);
    }
#endif
    n->vtable = (bfo_tcp_addr *)calloc((size_t)n->size * (size_t)(n->nverbs + 1), sizeof *n->vtable);
    if (!n->vtable) {
        rc = BFO_ERR_NO_MEMORY;
        goto fail;
    }
    if (n->ntcp > 0) {
        bfo_sink ts = { n, up_completion, up_frame_tcp, up_event_tcp, up_heard_tcp, NULL };
        rc = bfo_tcp_init_sink(&n->tcp, n->rank, n->size, &cfg, &opt.tcp, &ts, exchange, n);
        if (rc != BFO_OK)
            goto fail;
        bfo_tcp_backend(n->tcp, &n->tbe);
    } else {
        rc = exchange(n, 0, NULL, NULL, &n->job);
        if (rc != BFO_OK) {
            fprintf(stderr, "bfo: the address exchange through %s failed: %s\n",
                    n->pmix ? "PMIx" : n->bootstrap ? n->bootstrap : "(BFO_BOOTSTRAP unset)",
                    bfo_net_errname(rc));
            goto fail;
        }
    }
#ifdef BFO_HAVE_VERBS
    if (n->verbs) {
        bfo_sink vs = { n, up_completion, up_frame_verbs, up_event_verbs, NULL, NULL };
        rc = bfo_verbs_start(n->verbs, n->vtable, n->job, &vs);
        if (rc != BFO_OK)
            goto fail;
        bfo_verbs_backend(n->verbs, &n->vbe);
    }
#endif
    {
        bfo_backend be;
        memset(&be, 0, sizeof be);
        be.ctx = n;
        be.post_send = n_post_send;
        be.post_write = n_post_write;
        be.post_read = n_post_read;
        be.reg_mem = n_reg_mem;
        be.dereg_mem = n_dereg_mem;
        be.connect = n_connect;
        be.disconnect = n_disconnect;
        be.rail_caps = n_caps;
        be.rail_bandwidth = n_bw;
        rc = BFO_ERR_NO_MEMORY;
        n->emem = malloc(bfo_engine_mem_size(&cfg));
        if (!n->emem)
            goto fail;
        rc = bfo_engine_init(&n->eng, &cfg, &be, n->emem, bfo_engine_mem_size(&cfg), bfo_tcp_now());
        if (rc != BFO_OK)
            goto fail;
    }
    free(list);
    *out = n;
    return BFO_OK;
fail:
    free(list);
    bfo_net_fini(n);
    return rc;
}

bfo_engine *bfo_net_engine(bfo_net *n) { return n->plain ? bfo_tcp_engine(n->plain) : &n->eng; }
int bfo_net_rank(const bfo_net *n) { return n->rank; }
int bfo_net_size(const bfo_net *n) { return n->size; }
int bfo_net_nrails(const bfo_net *n) { return n->nrails; }
int bfo_net_rail_kind(const bfo_net *n, int rail)
{
    return rail >= 0 && rail < n->nrails ? n->kind[rail] : 0;
}

int bfo_net_progress(bfo_net *n, int timeout_ms)
{
    int handled = 0;
    uint64_t now;
    if (n->plain)
        return bfo_tcp_progress(n->plain, timeout_ms);
    now = bfo_tcp_now();
    (void)now;
#ifdef BFO_HAVE_VERBS
    if (n->verbs)
        handled += bfo_verbs_progress(n->verbs, now);
#endif
    if (n->tcp)
        handled += bfo_tcp_progress(n->tcp, 0);
    bfo_engine_progress(&n->eng, bfo_tcp_now());
    if (timeout_ms > 0 && handled == 0) {
        struct pollfd pf[4 * BFO_MAX_RAILS * 8 + 64];
        int fds[sizeof pf / sizeof pf[0]], nf = 0;
        /* busy-polled TCP links back into the epoll set, the acks owed out
         * (progress with timeout 0 reads busy links outside epoll: without
         * this, data waiting on one would not wake the poll below) */
        if (n->tcp && bfo_tcp_prepare_sleep(n->tcp))
            return handled;
#ifdef BFO_HAVE_VERBS
        if (n->verbs) {
            nf = bfo_verbs_wait_fds(n->verbs, fds, (int)(sizeof fds / sizeof fds[0]) - 1);
            if (nf < 0)
                return handled;
        }
#endif
        if (n->tcp)
            fds[nf++] = bfo_tcp_epoll_fd(n->tcp);
        for (int i = 0; i < nf; i++) {
            pf[i].fd = fds[i];
            pf[i].events = POLLIN;
            pf[i].revents = 0;
        }
        handled += poll(pf, (nfds_t)nf, timeout_ms) > 0;
    }
    return handled;
}

const bfo_tcp_stats *bfo_net_get_stats(bfo_net *n)
{
    if (n->plain)
        return bfo_tcp_get_stats(n->plain);
    memset(&n->st, 0, sizeof n->st);
    for (int g = 0; g < n->nrails; g++) {
        bfo_tcp_rail_stats *o = &n->st.rail[g];
        if (n->kind[g] == BFO_NET_TCP) {
            *o = bfo_tcp_get_stats(n->tcp)->rail[n->local[g]];
            continue;
        }
#ifdef BFO_HAVE_VERBS
        const bfo_verbs_rail_stats *s = bfo_verbs_get_stats(n->verbs, n->local[g]);
        o->frames_tx = s->frames_tx;
        o->frames_rx = s->frames_rx;
        o->bytes_tx = s->bytes_tx + s->rdma_bytes;
        o->bytes_rx = s->bytes_rx;
        o->connects = s->connects;
        o->connect_failures = s->connect_failures;
        o->conn_errors = s->qp_errors;
        o->malformed = s->malformed;
        o->completed_ok = s->completed_ok;
        o->completed_failed = s->completed_failed;
        o->backpressure = s->backpressure;
#endif
    }
    if (n->tcp)
        n->st.hellos_rejected = bfo_tcp_get_stats(n->tcp)->hellos_rejected;
    return &n->st;
}

void bfo_net_fault_drop(bfo_net *n, int rail, int on)
{
    if (n->plain) {
        bfo_tcp_fault_drop(n->plain, rail, on);
        return;
    }
    if (rail < 0 || rail >= n->nrails)
        return;
    if (n->kind[rail] == BFO_NET_TCP)
        bfo_tcp_fault_drop(n->tcp, n->local[rail], on);
#ifdef BFO_HAVE_VERBS
    else if (on)
        bfo_verbs_fault(n->verbs, n->local[rail]);
#endif
}

void bfo_net_fini(bfo_net *n)
{
    if (!n)
        return;
    if (n->plain) {
        bfo_tcp_fini(n->plain);
        free(n);
        return;
    }
    if (n->tcp)
        bfo_tcp_fini(n->tcp);
#ifdef BFO_HAVE_VERBS
    if (n->verbs)
        bfo_verbs_fini(n->verbs);
#endif
    free(n->vtable);
    free(n->emem);
    if (n->pmix)
        bfo_tcp_pmix_fini();
    free(n);
}

/* The multiplexer's engine: each rail's state per peer, what waits. */
static void dump_engine(bfo_net *n, FILE *f)
{
    const bfo_engine *e = &n->eng;
    uint64_t now = bfo_tcp_now();
    int ux = 0, posted = 0;
    for (int i = e->ux_head; i >= 0; i = e->uxm[i].next)
        ux++;
    for (const bfo_request *r = e->posted_head; r; r = r->next)
        posted++;
    fprintf(f, "bfo-net[%d]: engine: ops in use %d, unexpected %d, buffers in use %d, receives posted %d; "
            "map-outs %llu, re-admissions %llu; engine time %.3f ms ago\n",
            n->rank, e->ops_in_use, ux, e->uxm_in_use, posted, (unsigned long long)e->stats.mapouts,
            (unsigned long long)e->stats.readmissions, (double)(now - e->now) / 1e6);
    for (int p = 0; p < n->size; p++) {
        int pend = 0;
        if (p == n->rank)
            continue;
        for (int i = e->peers[p].pend_head; i >= 0; i = e->ops[i].next)
            pend++;
        fprintf(f, "bfo-net[%d]: engine: peer %d: next seq expected %u, last sent %u, ops waiting for a "
                "rail %d%s\n", n->rank, p, e->peers[p].recv_seq[0], e->peers[p].send_seq[0], pend,
                e->peers[p].unreachable ? ", unreachable" : "");
        for (int r = 0; r < n->nrails; r++) {
            const bfo_rail_link *rs = &e->peers[p].rail[r];
            fprintf(f, "bfo-net[%d]: engine: peer %d rail %d (%s %d): %s, in flight %d, probe out %d, "
                    "heard %.3f ms ago, posted %.3f ms ago\n", n->rank, p, r,
                    n->kind[r] == BFO_NET_TCP ? "tcp" : "verbs", n->local[r],
                    bfo_rail_state_name(rs->fsm.cs), rs->inflight, rs->probe_out,
                    (double)(now - rs->last_rx) / 1e6, (double)(now - rs->last_tx) / 1e6);
        }
    }
}

void bfo_net_dump(bfo_net *n, FILE *f)
{
    if (n->plain) {
        bfo_tcp_dump(n->plain, f);
        return;
    }
    dump_engine(n, f);
    if (n->tcp)
        bfo_tcp_dump(n->tcp, f);
#ifdef BFO_HAVE_VERBS
    if (n->verbs)
        bfo_verbs_dump(n->verbs, f);
#endif
}
