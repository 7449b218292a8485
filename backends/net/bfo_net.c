// SPDX-License-Identifier: BSD-3-Clause
/* bfo_net.c - one engine over every transport's rails (see bfo_net.h). */
#define _GNU_SOURCE
#include "bfo_net.h"
#include "bfo_auth.h"
#include "bfo_le.h"
#include "bfo_limits.h"

#include <ctype.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------- the table of transports
 *
 * A transport is one row: its operations (its tunables and its eager limit
 * among them: bfo_transport.h) and where its options sit in
 * bfo_net_options.  Nothing below names a transport. */

static const struct {
    const bfo_transport_ops *ops;
    size_t opt; /* offset of its options in bfo_net_options */
} transports[] = {
#ifdef BFO_HAVE_VERBS
    { &bfo_verbs_transport, offsetof(bfo_net_options, verbs) },
#endif
    { &bfo_shm_transport, offsetof(bfo_net_options, shm) },
    { &bfo_tcp_transport, offsetof(bfo_net_options, tcp) }, /* last: it claims bare addresses */
};
#define NTRANSPORTS ((int)(sizeof transports / sizeof transports[0]))

#define TIMERS_EVERY_NS 20000ull /* the engine's timers while busy polling */
#define FAILURES_EVERY_NS 1000000ull /* the launcher's failure reports while busy polling */

typedef struct bfo_net bfo_net;

/* A transport in use: its rails and where it reports. */
typedef struct net_tp {
    const bfo_transport_ops *ops;
    const void *opt; /* its options */
    void *t;
    bfo_backend be;
    bfo_net *n;
    int nrails;
    int g[BFO_MAX_RAILS];               /* its rail -> engine rail */
    const char *names[BFO_MAX_RAILS];
    unsigned bw[BFO_MAX_RAILS];
} net_tp;

/* A peer's rail as its card says. */
typedef struct peer_rail {
    char transport[BFO_NET_NAME_MAX];
    bfo_addr addr;
} peer_rail;

struct bfo_net {
    int rank, size, nrails, ntp;
    bfo_boot *boot;
    net_tp tp[BFO_MAX_RAILS]; /* the transports in use: at most one per rail */
    int rtp[BFO_MAX_RAILS], rlocal[BFO_MAX_RAILS]; /* engine rail -> (tp index, its rail) */
    unsigned bw[BFO_MAX_RAILS];
    char *list;
    char rname[BFO_MAX_RAILS][64]; /* each rail's name (bfo_net_rail_name) */
    bfo_engine eng;
    void *emem;
    void *grown; /* the engine's pools grown (n_grow): a list, freed at fini */
    int engine_up;
    int leave_ms; /* bfo_net_options.leave_ms: what bfo_net_fini waits for its BYEs */
    uint64_t last_timers;
    uint64_t idle_at; /* the last busy progress, when it found nothing to do (0: it found some) */
    uint64_t last_failures; /* the launcher's failure reports last looked at (FAILURES_EVERY_NS) */
    /* peers' cards, read on first use: state per peer (0 not read, 1 read,
     * -1 unreadable), then size * nrails rails (this rank's nrails, not
     * BFO_MAX_RAILS: a peer's rails beyond ours reach nothing of ours) */
    signed char *card_state;
    peer_rail *prails;
    int *pnrails;
    /* (peer, rail) that does not reach the peer, its RAIL_ABSENT owed to
     * the engine (given at the next progress, not inside its connect()) */
    unsigned char *absent_due;
    int nabsent_due;
    /* bfo_boot_lookup_later: no card is read before the first progress, so
     * the engine's connect() at init is kept here ((peer, rail) due) and
     * made then */
    int cards_later;
    unsigned char *connect_due;
    uint8_t card[BFO_BOOT_CARD_MAX]; /* a peer's card as read (card_read) */
    /* AUTHENTICATION (bfo_net.h): this rank's keys, the wire-up's (owned
     * by boot) or made here (auth_own); a peer's pair key is derived when
     * its card is first read (card_read), never for every peer at init */
    struct bfo_auth *auth;
    int auth_own;
    bfo_net_stats st;
    int log;
    /* registrations (n_reg_mem): one per request at most; per registration
     * each transport's handle (regs[g * ntp + i]); free ones on a stack */
    uint64_t *regs;
    int *reg_free, nreg_free, nregs;
    /* threads (bfo_net.h, THREADS): one lock around every entry when
     * locking is on (thread_safe, or the progress thread) */
    int locking;
    pthread_mutex_t mu;
    /* the progress thread: started, told to stop, how often it looks */
    int thr_on;
    pthread_t thr;
    atomic_int thr_stop;
    uint64_t thr_every;
    _Atomic uint64_t last_call; /* the caller's last bfo_net_progress */
    /* while the thread runs the transports (ctl_only), frames other than
     * PROBE and PROBEACK are refused (BFO_ERR_AGAIN: back-pressure), and
     * completions and rail events wait here for the caller's next
     * progress, in the order they came (no request completes in the thread) */
    int ctl_only;
    struct deferred {
        int kind; /* 0 completion, 1 rail event */
        int peer, rail, ev;
        uint64_t token;
    } *dq;
    int ndq, capdq;
};

static inline void n_lock(bfo_net *n)
{
    if (n->locking)
        pthread_mutex_lock(&n->mu);
}

static inline void n_unlock(bfo_net *n)
{
    if (n->locking)
        pthread_mutex_unlock(&n->mu);
}

static int progress_locked(bfo_net *n, int timeout_ms);
static int threads_start(bfo_net *n, const bfo_net_options *opt);

uint64_t bfo_net_now(void) { return bfo_boot_now(); }

/* The caller's transports that a bfo_net was given (bfo_net_options.
 * transports), remembered for bfo_net_errname, which has no bfo_net to ask:
 * the first NCALLERS, for the life of the process (a transport's table
 * lives as long as its code). */
#define NCALLERS 16
static _Atomic(const bfo_transport_ops *) callers[NCALLERS];

static void remember(const bfo_transport_ops *ops)
{
    for (int i = 0; i < NCALLERS; i++) {
        const bfo_transport_ops *cur = NULL; /* a free slot takes it; else is it there? */
        if (atomic_compare_exchange_strong(&callers[i], &cur, ops) || cur == ops)
            return;
    }
}

const char *bfo_net_errname(int rc)
{
    const bfo_transport_ops *ops;
    for (int i = 0; i < NTRANSPORTS; i++) {
        const char *s = transports[i].ops->errname ? transports[i].ops->errname(rc) : NULL;
        if (s)
            return s;
    }
    for (int i = 0; i < NCALLERS && (ops = atomic_load(&callers[i])); i++) {
        const char *s = ops->errname ? ops->errname(rc) : NULL;
        if (s)
            return s;
    }
    return bfo_boot_errname(rc);
}

const char *bfo_net_transports(void)
{
    static _Thread_local char buf[128]; /* one per thread: no race on the first call */
    if (!buf[0])
        for (int i = 0; i < NTRANSPORTS; i++)
            snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", i ? ", " : "", transports[i].ops->name);
    return buf;
}

/* The transport that claims a rail name: the caller's first (opt), then
 * the table; NULL when none does.  *o: its options. */
static const bfo_transport_ops *claim(const char *name, const bfo_net_options *opt, const void **o)
{
    for (int i = 0; opt && opt->transports && opt->transports[i]; i++)
        if (opt->transports[i]->claims(name)) {
            *o = opt->transport_opts ? opt->transport_opts[i] : NULL;
            return opt->transports[i];
        }
    for (int i = 0; i < NTRANSPORTS; i++)
        if (transports[i].ops->claims(name)) {
            *o = opt ? (const char *)opt + transports[i].opt : NULL;
            return transports[i].ops;
        }
    return NULL;
}

static int check_rails(const char *list, const bfo_net_options *opt)
{
    int n = 0;
    char *copy, *save = NULL;
    const void *o;
    if (!list || !*list || !(copy = strdup(list)))
        return -1;
    int present = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int absent = !strcmp(tok, BFO_NET_RAIL_ABSENT);
        if (n >= BFO_MAX_RAILS || (!absent && !claim(tok, opt, &o))) {
            n = -1;
            break;
        }
        present += !absent;
        n++;
    }
    free(copy);
    return n > 0 && present > 0 && list[strlen(list) - 1] != ',' && !strstr(list, ",,") ? n : -1;
}

int bfo_net_check_rails(const char *list) { return check_rails(list, NULL); }

/* The rows' wishes combined (bfo_transport_tuning): ops[0..n) the
 * transports in use, each once. */
static void tune(const bfo_transport_ops *const *ops, int n, bfo_net_tuning *out)
{
    const bfo_transport_ops *rdma = NULL;
    int nrdma = 0;
    memset(out, 0, sizeof *out);
    for (int i = 0; i < n; i++) {
        if (ops[i]->tuning && ops[i]->tuning->rdma) {
            rdma = ops[i];
            nrdma++;
        }
        out->mem_release |= ops[i]->mem_released != NULL;
    }
    if (n == 1) {
        out->eager_limit = ops[0]->eager_limit;
        out->frag_size = ops[0]->tuning ? ops[0]->tuning->frag_size : 0;
    }
    if (nrdma == 1) {
        out->rdma_min = rdma->tuning->rdma_min;
        out->rdma_frag_size = rdma->tuning->rdma_frag_size;
    }
}

/* The transports of this build a list's rails use, each once, in the
 * table's order: how many, or -1 for a bad list. */
static int list_transports(const char *list, const bfo_transport_ops **ops)
{
    int n = 0;
    char *copy, *save = NULL;
    if (check_rails(list, NULL) < 0 || !(copy = strdup(list)))
        return -1;
    for (int i = 0; i < NTRANSPORTS; i++) {
        int used = 0;
        strcpy(copy, list);
        for (char *tok = strtok_r(copy, ",", &save); tok && !used; tok = strtok_r(NULL, ",", &save)) {
            const void *o;
            used = strcmp(tok, BFO_NET_RAIL_ABSENT) && claim(tok, NULL, &o) == transports[i].ops;
        }
        if (used)
            ops[n++] = transports[i].ops;
    }
    free(copy);
    return n;
}

int bfo_net_rail_tuning(const char *list, bfo_net_tuning *out)
{
    const bfo_transport_ops *ops[NTRANSPORTS];
    int n = list_transports(list, ops);
    memset(out, 0, sizeof *out);
    if (n < 0)
        return -1;
    tune(ops, n, out);
    return check_rails(list, NULL);
}

int bfo_net_options_uncached(bfo_net_options *opt, const char *list)
{
    const bfo_transport_ops *ops[NTRANSPORTS];
    int n = list_transports(list, ops), k = 0;
    char why[200];
    for (int i = 0; i < n; i++)
        if (ops[i]->mem_released && ops[i]->tuning && ops[i]->tuning->cache_setting &&
            bfo_net_options_set(opt, ops[i]->name, ops[i]->tuning->cache_setting, "off", why, sizeof why) == BFO_OK)
            k++;
    return n < 0 ? -1 : k;
}

/* ------------------------------------------------- the engine's backend */

static inline const bfo_backend *rail_be(const bfo_net *n, int rail, int *local)
{
    if (rail < 0 || rail >= n->nrails || n->rtp[rail] < 0)
        return NULL;
    *local = n->rlocal[rail];
    return &n->tp[n->rtp[rail]].be;
}

static int n_post_send(void *ctx, int peer, int rail, const bfo_iov *iov, int iovcnt, uint64_t token)
{
    int r;
    const bfo_backend *b = rail_be((bfo_net *)ctx, rail, &r);
    return b ? b->post_send(b->ctx, peer, r, iov, iovcnt, token) : -1;
}

/* Described data (bfo_data.h): to the rail's transport, which said it reads
 * such data itself (n_caps clears the caps of one without post_send_data). */
static int n_post_send_data(void *ctx, int peer, int rail, const bfo_iov *hdr,
                            const bfo_data_span *data, uint64_t token)
{
    int r;
    const bfo_backend *b = rail_be((bfo_net *)ctx, rail, &r);
    return b && b->post_send_data ? b->post_send_data(b->ctx, peer, r, hdr, data, token) : -1;
}

static int n_post_write(void *ctx, int peer, int rail, const void *local, size_t len, uint64_t raddr,
                        uint32_t key, uint64_t token)
{
    int r;
    const bfo_backend *b = rail_be((bfo_net *)ctx, rail, &r);
    return b && b->post_write ? b->post_write(b->ctx, peer, r, local, len, raddr, key, token) : -1;
}

static int n_post_read(void *ctx, int peer, int rail, void *local, size_t len, uint64_t raddr,
                       uint32_t key, uint64_t token)
{
    int r;
    const bfo_backend *b = rail_be((bfo_net *)ctx, rail, &r);
    return b && b->post_read ? b->post_read(b->ctx, peer, r, local, len, raddr, key, token) : -1;
}

/* Gives back transport i's part of registration g (0..i-1 of them). */
static void reg_undo(bfo_net *n, int g, int upto)
{
    for (int i = 0; i < upto; i++)
        if (n->tp[i].be.reg_mem && n->tp[i].be.dereg_mem)
            n->tp[i].be.dereg_mem(n->tp[i].be.ctx, n->regs[(size_t)g * (size_t)n->ntp + (size_t)i]);
}

/* A region registered with every transport that does RDMA, each giving
 * the keys of its own rails (a transport's rail j is engine rail g[j]) and
 * its own handle, kept in registration g (the engine's handle is g + 1).
 * Every transport names the region by its virtual address.  When one
 * refuses, none keeps it and the engine copies that message. */
static int n_reg_mem(void *ctx, void *buf, size_t len, unsigned access, uint64_t *raddr, uint32_t *keys,
                     uint64_t *handle)
{
    bfo_net *n = (bfo_net *)ctx;
    int i, any = 0, g;
    /* The table has max_requests entries (bfo_net_init) and the engine
     * registers once per request, but its request pool grows past
     * max_requests (bfo_config.grow, which bfo_net sets): with more
     * requests than that holding a registration at once, the next one
     * finds none and its message goes by copy, as when a transport
     * refuses (slower, nothing lost; docs/mpi.md, "Performance"). */
    if (n->nreg_free == 0)
        return -1;
    g = n->reg_free[--n->nreg_free];
    for (i = 0; i < n->ntp; i++) {
        const net_tp *tp = &n->tp[i];
        uint32_t k[BFO_MAX_RAILS] = { 0 };
        uint64_t a = 0, *h = &n->regs[(size_t)g * (size_t)n->ntp + (size_t)i];
        if (!tp->be.reg_mem)
            continue;
        if (tp->be.reg_mem(tp->be.ctx, buf, len, access, &a, k, h) != 0)
            break;
        if (a != (uint64_t)(uintptr_t)buf) {
            if (tp->be.dereg_mem)
                tp->be.dereg_mem(tp->be.ctx, *h);
            break;
        }
        for (int j = 0; j < tp->nrails; j++)
            keys[tp->g[j]] = k[j];
        any = 1;
    }
    if (i < n->ntp || !any) { /* one refused (or none does RDMA): none keeps it */
        reg_undo(n, g, i < n->ntp ? i : n->ntp);
        n->reg_free[n->nreg_free++] = g;
        return -1;
    }
    *raddr = (uint64_t)(uintptr_t)buf;
    *handle = (uint64_t)g + 1;
    return 0;
}

static void n_dereg_mem(void *ctx, uint64_t handle)
{
    bfo_net *n = (bfo_net *)ctx;
    if (handle < 1 || handle > (uint64_t)n->nregs)
        return;
    reg_undo(n, (int)(handle - 1), n->ntp);
    n->reg_free[n->nreg_free++] = (int)(handle - 1);
}

static int reaches(bfo_net *n, int peer, int rail);

static int n_connect(void *ctx, int peer, int rail)
{
    bfo_net *n = (bfo_net *)ctx;
    int r = 0; /* rail_be sets it when it returns a backend */
    const bfo_backend *b = rail_be(n, rail, &r);
    if (!b && rail >= 0 && rail < n->nrails && peer >= 0 && peer < n->size) {
        /* this rank has no rail on that network ("-"): it reaches nobody */
        unsigned char *due = &n->absent_due[(size_t)peer * (size_t)n->nrails + (size_t)rail];
        n->nabsent_due += !*due;
        *due = 1;
        return 0;
    }
    if (n->cards_later && b && peer >= 0 && peer < n->size) { /* made at the first progress */
        n->connect_due[(size_t)peer * (size_t)n->nrails + (size_t)rail] = 1;
        return 0;
    }
    if (b && peer >= 0 && peer < n->size && !reaches(n, peer, rail)) {
        unsigned char *due = &n->absent_due[(size_t)peer * (size_t)n->nrails + (size_t)rail];
        n->nabsent_due += !*due;
        *due = 1;
        return 0;
    }
    return b && b->connect ? b->connect(b->ctx, peer, r) : -1;
}

static void n_disconnect(void *ctx, int peer, int rail)
{
    int r;
    const bfo_backend *b = rail_be((bfo_net *)ctx, rail, &r);
    if (b && b->disconnect)
        b->disconnect(b->ctx, peer, r);
}

/* The peer said goodbye, or this side leaves: to the rail's transport. */
static void n_part(void *ctx, int peer, int rail)
{
    int r;
    const bfo_backend *b = rail_be((bfo_net *)ctx, rail, &r);
    if (b && b->part)
        b->part(b->ctx, peer, r);
}

static unsigned n_caps(void *ctx, int rail)
{
    int r;
    const bfo_backend *b = rail_be((bfo_net *)ctx, rail, &r);
    unsigned caps = b && b->rail_caps ? b->rail_caps(b->ctx, r) : 0;
    if (!b || !b->post_send_data)
        caps &= ~(unsigned)(BFO_CAP_SEND_IOV | BFO_CAP_SEND_PACK);
    return caps;
}

/* The options' figure, else the transport's own (bfo_transport_args.bandwidth:
 * "0: the transport's figure"). */
static unsigned n_bw(void *ctx, int rail)
{
    bfo_net *n = (bfo_net *)ctx;
    int r;
    const bfo_backend *b = rail_be(n, rail, &r);
    if (!b)
        return 0;
    return n->bw[rail] ? n->bw[rail] : b->rail_bandwidth ? b->rail_bandwidth(b->ctx, r) : 0;
}

/* ------------------------------------------------------------ the sinks */

static void up_completion(void *ctx, uint64_t token, int ok)
{
    bfo_net *n = ((net_tp *)ctx)->n;
    if (n->ctl_only && n->ndq < n->capdq) { /* the progress thread: for the caller's next progress */
        struct deferred *d;
        /* but its own answers (PROBEACK) and probes go back to the control
         * budget now: held, they would fill it in seconds */
        if (bfo_engine_completion_probe(&n->eng, token, ok))
            return;
        d = &n->dq[n->ndq++];
        d->kind = 0;
        d->token = token;
        d->ev = ok;
        return;
    }
    bfo_engine_completion(&n->eng, token, ok);
}

static int up_frame(void *ctx, int peer, int rail, const uint8_t *buf, size_t len, uint64_t now)
{
    net_tp *tp = (net_tp *)ctx;
    if (rail < 0 || rail >= tp->nrails)
        return BFO_ERR_INVALID;
    /* the progress thread answers rail control only; the rest waits
     * (back-pressure: the transport tells the peer it is stalled) */
    if (tp->n->ctl_only && !(len > 0 && (buf[0] == BFO_FRAG_PROBE || buf[0] == BFO_FRAG_PROBEACK)))
        return BFO_ERR_AGAIN;
    return bfo_engine_frame(&tp->n->eng, peer, tp->g[rail], buf, len, now);
}

static void up_event(void *ctx, int peer, int rail, int ev, uint64_t now)
{
    net_tp *tp = (net_tp *)ctx;
    bfo_net *n = tp->n;
    if (rail < 0 || rail >= tp->nrails)
        return;
    if (n->ctl_only && n->ndq < n->capdq) {
        struct deferred *d = &n->dq[n->ndq++];
        d->kind = 1;
        d->peer = peer;
        d->rail = tp->g[rail];
        d->ev = ev;
        return;
    }
    bfo_engine_rail_event(&n->eng, peer, tp->g[rail], ev, now);
}

static void up_heard(void *ctx, int peer, int rail, uint64_t now)
{
    net_tp *tp = (net_tp *)ctx;
    if (rail >= 0 && rail < tp->nrails)
        bfo_engine_rail_heard(&tp->n->eng, peer, tp->g[rail], now);
}

static void up_host(void *ctx, int peer, int rail, uint64_t at)
{
    net_tp *tp = (net_tp *)ctx;
    if (rail >= 0 && rail < tp->nrails)
        bfo_engine_host_heard(&tp->n->eng, peer, tp->g[rail], at);
}

/* Receiving in place: not while the progress thread runs (it takes rail
 * control only; a frame placed meanwhile waits, as up_frame's do). */
static uint8_t *up_place(void *ctx, int peer, const uint8_t *hdr, size_t have, size_t frame_len, size_t *hdr_len,
                         bfo_place_ticket *ticket)
{
    net_tp *tp = (net_tp *)ctx;
    if (tp->n->ctl_only)
        return NULL;
    return bfo_engine_place(&tp->n->eng, peer, hdr, have, frame_len, hdr_len, ticket);
}

static int up_place_ok(void *ctx, bfo_place_ticket ticket)
{
    return bfo_engine_place_ok(&((net_tp *)ctx)->n->eng, ticket);
}

static int up_frame_placed(void *ctx, int peer, int rail, const uint8_t *hdr, size_t hdr_len, const uint8_t *payload,
                           size_t payload_len, uint64_t now)
{
    net_tp *tp = (net_tp *)ctx;
    if (rail < 0 || rail >= tp->nrails)
        return BFO_ERR_INVALID;
    if (tp->n->ctl_only)
        return BFO_ERR_AGAIN;
    return bfo_engine_frame_placed(&tp->n->eng, peer, tp->g[rail], hdr, hdr_len, payload, payload_len, now);
}

/* ---------------------------------------------------------------- cards */

size_t bfo_net_card_write(uint8_t *c, size_t cap, int nrails, const char *const *transport, const bfo_addr *addr)
{
    return bfo_net_card_write_key(c, cap, nrails, transport, addr, NULL);
}

size_t bfo_net_card_write_key(uint8_t *c, size_t cap, int nrails, const char *const *transport, const bfo_addr *addr,
                              const uint8_t *pk)
{
    size_t o = 5;
    if (cap < 5 || nrails < 0 || nrails > BFO_MAX_RAILS)
        return 0;
    bfo_put32(c, BFO_NET_CARD_MAGIC);
    c[4] = (uint8_t)nrails;
    for (int g = 0; g < nrails; g++) {
        size_t nl = strlen(transport[g]);
        if (nl >= BFO_NET_NAME_MAX || addr[g].len > BFO_ADDR_MAX || o + 2 + nl + addr[g].len > cap)
            return 0;
        c[o++] = (uint8_t)nl;
        memcpy(c + o, transport[g], nl);
        o += nl;
        c[o++] = (uint8_t)addr[g].len;
        memcpy(c + o, addr[g].bytes, addr[g].len);
        o += addr[g].len;
    }
    if (pk) { /* the rank's public key: u8 its length, then it */
        if (o + 1 + BFO_NET_CARD_KEY_LEN > cap)
            return 0;
        c[o++] = BFO_NET_CARD_KEY_LEN;
        memcpy(c + o, pk, BFO_NET_CARD_KEY_LEN);
        o += BFO_NET_CARD_KEY_LEN;
    }
    return o;
}

int bfo_net_card_read(const uint8_t *c, size_t len, char (*transport)[BFO_NET_NAME_MAX], bfo_addr *addr)
{
    return bfo_net_card_read_key(c, len, transport, addr, NULL, NULL);
}

int bfo_net_card_read_key(const uint8_t *c, size_t len, char (*transport)[BFO_NET_NAME_MAX], bfo_addr *addr,
                          uint8_t *pk, int *has_pk)
{
    size_t o = 5;
    int nr;
    if (has_pk)
        *has_pk = 0;
    if (len < 5 || bfo_get32(c) != BFO_NET_CARD_MAGIC || (nr = c[4]) > BFO_MAX_RAILS)
        return -1;
    for (int r = 0; r < nr; r++) {
        size_t nl, al;
        if (o >= len || (nl = c[o]) >= BFO_NET_NAME_MAX || o + 1 + nl >= len)
            return -1;
        memcpy(transport[r], c + o + 1, nl);
        transport[r][nl] = 0;
        o += 1 + nl;
        if ((al = c[o]) > BFO_ADDR_MAX || o + 1 + al > len)
            return -1;
        memset(&addr[r], 0, sizeof addr[r]);
        addr[r].len = (uint16_t)al;
        memcpy(addr[r].bytes, c + o + 1, al);
        o += 1 + al;
    }
    if (o == len)
        return nr; /* no key: a card of a rank from before keys, or a test's */
    if (len - o != 1 + BFO_NET_CARD_KEY_LEN || c[o] != BFO_NET_CARD_KEY_LEN)
        return -1;
    if (pk)
        memcpy(pk, c + o + 1, BFO_NET_CARD_KEY_LEN);
    if (has_pk)
        *has_pk = 1;
    return nr;
}

/* This rank's card: every rail's transport and address. */
static size_t card_make(bfo_net *n, uint8_t *c, size_t cap)
{
    const char *names[BFO_MAX_RAILS];
    bfo_addr addr[BFO_MAX_RAILS];
    uint8_t pk[BFO_AUTH_PUB_LEN];
    for (int g = 0; g < n->nrails; g++) {
        net_tp *tp = n->rtp[g] >= 0 ? &n->tp[n->rtp[g]] : NULL;
        memset(&addr[g], 0, sizeof addr[g]);
        names[g] = tp ? tp->ops->name : BFO_NET_RAIL_ABSENT; /* no address: no peer's transport takes it */
        if (tp && tp->ops->address(tp->t, n->rlocal[g], &addr[g]) != BFO_OK)
            return 0;
    }
    bfo_auth_public(n->auth, pk);
    return bfo_net_card_write_key(c, cap, n->nrails, names, addr, pk);
}

/* Reads a peer's card once: 0, or -1 when it has none or a broken one.
 * Its public key, when it has one, gives the pair key (bfo_auth_set_peer,
 * about 100 us: here, the first time the peer is needed, and never for
 * every peer at init); a card without one leaves the peer without a key,
 * and whatever needs the key (a hello, a beacon) is refused. */
static int card_read(bfo_net *n, int peer)
{
    uint8_t *c = n->card; /* this bfo_net's own: another may read in another thread */
    char names[BFO_MAX_RAILS][BFO_NET_NAME_MAX];
    bfo_addr addr[BFO_MAX_RAILS];
    peer_rail *pr = &n->prails[(size_t)peer * (size_t)n->nrails];
    uint8_t pk[BFO_NET_CARD_KEY_LEN];
    size_t len = 0;
    int nr, has_pk = 0;
    if (n->card_state[peer])
        return n->card_state[peer] > 0 ? 0 : -1;
    n->card_state[peer] = -1;
    if (bfo_boot_lookup(n->boot, peer, c, sizeof n->card, &len) != BFO_OK ||
        (nr = bfo_net_card_read_key(c, len, names, addr, pk, &has_pk)) < 0) {
        fprintf(stderr, "bfo-net[%d]: rank %d published no card (or a broken one) through %s\n", n->rank, peer,
                bfo_boot_via(n->boot));
        return -1;
    }
    for (int r = 0; r < nr && r < n->nrails; r++) { /* its rails beyond ours reach none of ours */
        memcpy(pr[r].transport, names[r], BFO_NET_NAME_MAX);
        pr[r].addr = addr[r];
    }
    n->pnrails[peer] = nr;
    n->card_state[peer] = 1;
    if (peer != n->rank && (!has_pk || bfo_auth_set_peer(n->auth, peer, pk) != BFO_OK))
        fprintf(stderr, "bfo-net[%d]: rank %d's card has %s: nothing from it can be authenticated\n", n->rank,
                peer, has_pk ? "a public key that is no key (small order)" : "no public key");
    return 0;
}

/* A transport's word that a hello came from a peer whose pair key is not
 * derived yet (bfo_tcp_options.auth_peer, bfo_shm_options.auth_peer; it
 * runs in the transport's progress, as the lookups do): its card read,
 * which derives the key.  0 when the key is
 * there now; -1 when the peer has no card or no public key in it (the
 * hello is refused, logged, and the peer's engine dials again). */
static int auth_peer(void *ctx, int peer)
{
    bfo_net *n = (bfo_net *)ctx;
    if (peer < 0 || peer >= n->size || peer == n->rank || card_read(n, peer) != 0)
        return -1;
    return bfo_auth_has_peer(n->auth, peer) ? 0 : -1;
}

/* The peer's rail g as its card says, when it is of our rail's transport:
 * NULL when the rail does not reach the peer (said once on stderr). */
static const peer_rail *peer_rail_of(bfo_net *n, int peer, int g)
{
    const peer_rail *pr;
    const char *ours;
    if (n->rtp[g] < 0)
        return NULL; /* no rail of ours on that network */
    ours = n->tp[n->rtp[g]].ops->name;
    if (card_read(n, peer) != 0)
        return NULL;
    if (g >= n->pnrails[peer]) {
        if (n->log >= 2)
            fprintf(stderr, "bfo-net[%d]: rank %d has %d rail(s): our rail %d (%s, %s) does not reach it\n", n->rank,
                    peer, n->pnrails[peer], g, n->rname[g], ours);
        return NULL;
    }
    pr = &n->prails[(size_t)peer * (size_t)n->nrails + (size_t)g];
    if (strcmp(pr->transport, ours) != 0) {
        if (n->log >= 2 && !strcmp(pr->transport, BFO_NET_RAIL_ABSENT))
            fprintf(stderr, "bfo-net[%d]: rank %d has no rail %d (none on %s): it does not reach it\n",
                    n->rank, peer, g, n->rname[g]);
        else if (n->log >= 2)
            fprintf(stderr, "bfo-net[%d]: rank %d's rail %d is a %s rail, ours is %s: it does not reach it\n",
                    n->rank, peer, g, pr->transport, ours);
        return NULL;
    }
    {
        const net_tp *tp = &n->tp[n->rtp[g]];
        if (tp->ops->reaches && !tp->ops->reaches(tp->t, n->rlocal[g], peer, &pr->addr)) {
            if (n->log >= 2)
                fprintf(stderr, "bfo-net[%d]: our rail %d (%s, %s) cannot reach rank %d (the transport says so: "
                        "another host?)\n", n->rank, g, n->rname[g], ours, peer);
            return NULL;
        }
    }
    return pr;
}

static int reaches(bfo_net *n, int peer, int rail) { return peer_rail_of(n, peer, rail) != NULL; }

static int up_lookup(void *ctx, int peer, int rail, bfo_addr *out)
{
    net_tp *tp = (net_tp *)ctx;
    bfo_net *n = tp->n;
    const peer_rail *pr;
    if (peer < 0 || peer >= n->size || rail < 0 || rail >= tp->nrails ||
        !(pr = peer_rail_of(n, peer, tp->g[rail])))
        return BFO_ERR_INVALID;
    *out = pr->addr;
    return BFO_OK;
}

/* --------------------------------------------------------------- init */

/* A setting from the environment (bfo_boot_getenv), or NULL when the
 * caller said no_env: then every setting comes from its options and its
 * bfo_config, and one host's environment cannot make its ranks differ from
 * the others' (relay, the eager limit) behind the caller's back.  Every
 * BFO_* setting bfo_net and its transports take is read here; the
 * wire-up's variables (bfo_boot_env) are not settings. */
static const char *setting_env(const bfo_net_options *o, const char *name)
{
    return o && o->no_env ? NULL : bfo_boot_getenv(name);
}

/* The log level of a transport: the option, else BFO_<NAME>_LOG, else 1. */
static int log_level(const bfo_net_options *o, const char *name)
{
    char var[32], *p;
    const char *v;
    if (o->log_level)
        return o->log_level;
    snprintf(var, sizeof var, "BFO_%s_LOG", name);
    for (p = var; *p; p++)
        *p = (char)toupper((unsigned char)*p);
    v = setting_env(o, var);
    return v ? atoi(v) : 1;
}

/* The caller's layout against the one this library was built with. */
static int abi_ok(const bfo_abi *caller)
{
    char why[256];
    int rc = bfo_abi_check(caller, BFO_ABI_HERE, why, sizeof why);
    if (rc != BFO_OK)
        fprintf(stderr, "bfo_net_init: %s\n", why);
    return rc;
}

/* A size from the environment (bfo_setting.h: bytes, or with K, M or G),
 * for a field of the engine's configuration that the caller left 0:
 * BFO_EAGER_LIMIT (the eager limit) and BFO_UNEXPECTED_BUDGET (the
 * unexpected messages' budget).  1 and *out set, 0 when unset, -1 when it
 * is not a size from 1 B to max (said on stderr). */
static int size_env(const bfo_net_options *o, const char *name, unsigned long long max, size_t *out)
{
    const char *v = setting_env(o, name);
    unsigned long long x;
    if (!v)
        return 0;
    if (bfo_parse_size(v, 1, max, &x) != 0) {
        fprintf(stderr, "bfo: %s=%s: not a size from 1 B to %llu MiB (digits, then K, M or G)\n", name, v,
                max >> 20);
        return -1;
    }
    *out = (size_t)x;
    return 1;
}

/* BFO_<TRANSPORT>_<NAME>: the variable of a transport's setting. */
static void setting_var(char *var, size_t cap, const char *transport, const char *name)
{
    snprintf(var, cap, "BFO_%s_%s", transport, name);
    for (char *p = var; *p; p++)
        *p = (char)toupper((unsigned char)*p);
}

/* Every setting of every transport of the table (bfo_setting.h) that the
 * options leave 0, from BFO_<TRANSPORT>_<NAME>.  Read whichever rails are
 * listed: a bad value is refused the same on every host.  -1 for a bad
 * value (said on stderr). */
static int settings_env(bfo_net_options *opt)
{
    for (int i = 0; i < NTRANSPORTS; i++) {
        const bfo_transport_ops *ops = transports[i].ops;
        void *o = (char *)opt + transports[i].opt;
        for (int k = 0; k < ops->nsettings; k++) {
            const bfo_setting *st = &ops->settings[k];
            char var[64], why[160];
            const char *v;
            setting_var(var, sizeof var, ops->name, st->name);
            if (!bfo_setting_unset(st, o) || !(v = setting_env(opt, var)))
                continue;
            if (bfo_setting_parse(st, v, o, why, sizeof why) != 0) {
                fprintf(stderr, "bfo: %s=%s: %s\n", var, v, why);
                return -1;
            }
        }
    }
    return 0;
}

const bfo_setting *bfo_net_settings(int i, const char **transport, int *n)
{
    if (i < 0 || i >= NTRANSPORTS)
        return NULL;
    *transport = transports[i].ops->name;
    *n = transports[i].ops->nsettings;
    return transports[i].ops->settings;
}

const char *bfo_net_counters(int i, const bfo_counter_desc **counters, int *n)
{
    if (i < 0 || i >= NTRANSPORTS)
        return NULL;
    *counters = transports[i].ops->counters;
    *n = *counters ? transports[i].ops->ncounters : 0;
    return transports[i].ops->name;
}

int bfo_net_options_set(bfo_net_options *opt, const char *transport, const char *name, const char *value,
                        char *why, size_t cap)
{
    for (int i = 0; i < NTRANSPORTS; i++) {
        const bfo_transport_ops *ops = transports[i].ops;
        if (strcmp(ops->name, transport))
            continue;
        for (int k = 0; k < ops->nsettings; k++)
            if (!strcmp(ops->settings[k].name, name))
                return bfo_setting_parse(&ops->settings[k], value, (char *)opt + transports[i].opt, why, cap) == 0
                           ? BFO_OK
                           : BFO_ERR_INVALID;
        snprintf(why, cap, "the %s transport has no setting %s (bfo run --settings lists them)", transport, name);
        return BFO_ERR_INVALID;
    }
    snprintf(why, cap, "no transport %s in this build (it has %s)", transport, bfo_net_transports());
    return BFO_ERR_INVALID;
}

/* BFO_STANDBY_RAILS: the standby rails (bfo_config.standby_rails) as a
 * comma-separated list of rail indices when the caller gave none.  -1 for
 * a bad list (said on stderr). */
static int standby_env(const bfo_net_options *o, unsigned *out, int nrails)
{
    const char *v = setting_env(o, "BFO_STANDBY_RAILS");
    unsigned m = 0;
    if (!v || !*v || *out)
        return 0;
    for (const char *p = v; *p;) {
        char *end;
        long r = strtol(p, &end, 10);
        if (end == p || r < 0 || r >= nrails || (*end && *end != ',')) {
            fprintf(stderr, "bfo: BFO_STANDBY_RAILS=%s: not a list of rail indices from 0 to %d\n", v,
                    nrails - 1);
            return -1;
        }
        m |= 1u << r;
        p = *end ? end + 1 : end;
    }
    *out = m;
    return 0;
}

/* BFO_RELAY: 1 turns relay on (bfo_config.relay) when the caller left it
 * 0; 0 leaves it off.  -1 for another value (said on stderr). */
static int flag_env(const bfo_net_options *o, const char *name, const char *what, int *out)
{
    const char *v = setting_env(o, name);
    if (!v || !*v || !strcmp(v, "0"))
        return 0;
    if (strcmp(v, "1")) {
        fprintf(stderr, "bfo: %s=%s: 1 (%s) or 0\n", name, v, what);
        return -1;
    }
    *out = 1;
    return 0;
}

static int relay_env(const bfo_net_options *o, int *out)
{
    return flag_env(o, "BFO_RELAY", "relay through a third rank", out);
}

int bfo_net_init_abi(bfo_net **out, const bfo_config *cfg, const bfo_net_options *opt, const bfo_abi *caller)
{
    bfo_boot *b;
    int rc;
    *out = NULL;
    if ((rc = abi_ok(caller)) != BFO_OK)
        return rc;
    /* the rails first: a bad list ends before any socket */
    const char *rails = opt && opt->rails ? opt->rails : setting_env(opt, "BFO_RAILS");
    if (rails && check_rails(rails, opt) < 0) {
        fprintf(stderr, "bfo: bad rail list %s (each one of: tcp:ADDR or ADDR, tcp:[IPV6], verbs:DEVICE[:PORT], "
                        "shm; at most %d; this build has %s)\n", rails, BFO_MAX_RAILS, bfo_net_transports());
        return BFO_ERR_INVALID;
    }
    rc = bfo_boot_env(&b, opt ? opt->bootstrap_timeout_ns : 0);
    if (rc != BFO_OK)
        return rc;
    return bfo_net_init_boot_abi(out, cfg, opt, b, caller);
}

/* bfo_config.grow when the caller gives none: malloc, each block on a list
 * (its first 16 bytes) that bfo_net_fini frees after the engine. */
static void *n_grow(void *ctx, size_t bytes)
{
    bfo_net *n = (bfo_net *)ctx;
    uint8_t *m = (uint8_t *)aligned_alloc(16, 16 + ((bytes + 15) & ~(size_t)15));
    if (!m)
        return NULL;
    memcpy(m, &n->grown, sizeof n->grown);
    n->grown = m;
    return m + 16;
}

/* The bfo_net and its tables per peer, from the wire-up; NULL when out of
 * memory (boot then freed). */
static bfo_net *n_new(bfo_boot *boot, const bfo_net_options *opt, const char *rails)
{
    bfo_net *n = (bfo_net *)calloc(1, sizeof *n);
    if (!n) {
        bfo_boot_fini(boot);
        return NULL;
    }
    n->boot = boot;
    n->rank = bfo_boot_rank(boot);
    n->size = bfo_boot_size(boot);
    n->log = log_level(opt, "net");
    n->leave_ms = opt->leave_ms;
    n->list = strdup(rails ? rails : "127.0.0.1");
    n->card_state = (signed char *)calloc((size_t)n->size, 1);
    n->pnrails = (int *)calloc((size_t)n->size, sizeof *n->pnrails);
    n->cards_later = bfo_boot_lookup_later(n->boot);
    if (!n->list || !n->card_state || !n->pnrails) {
        bfo_net_fini(n);
        return NULL;
    }
    return n;
}

/* The tables per (peer, rail), once the rails are known (rails_group):
 * nrails each, not BFO_MAX_RAILS, so that an idle peer costs what the job's
 * rails need (docs/engine-design.md, "What an idle peer costs").  BFO_OK or
 * BFO_ERR_NO_MEMORY. */
static int peers_alloc(bfo_net *n)
{
    size_t np = (size_t)n->size * (size_t)n->nrails;
    n->prails = (peer_rail *)calloc(np, sizeof *n->prails);
    n->absent_due = (unsigned char *)calloc(np, 1);
    n->connect_due = (unsigned char *)calloc(np, 1);
    return n->prails && n->absent_due && n->connect_due ? BFO_OK : BFO_ERR_NO_MEMORY;
}

/* What the caller left 0 and the environment sets (bfo_net.h,
 * ENVIRONMENT): the engine's figures, relay, every transport's settings.
 * BFO_OK or BFO_ERR_INVALID (said on stderr). */
static int settings_read(bfo_net_options *opt, bfo_config *cfg)
{
    if (!cfg->eager_limit && size_env(opt, "BFO_EAGER_LIMIT", BFO_NET_EAGER_MAX, &cfg->eager_limit) < 0)
        return BFO_ERR_INVALID;
    if (!cfg->unexpected_budget &&
        size_env(opt, "BFO_UNEXPECTED_BUDGET", (unsigned long long)1 << 40, &cfg->unexpected_budget) < 0)
        return BFO_ERR_INVALID;
    if (settings_env(opt) < 0 || (!cfg->relay && relay_env(opt, &cfg->relay) < 0))
        return BFO_ERR_INVALID;
    if (!cfg->connect_at_init &&
        flag_env(opt, "BFO_CONNECT_AT_INIT", "every rail to every peer asked at init", &cfg->connect_at_init) < 0)
        return BFO_ERR_INVALID;
    return BFO_OK;
}

/* The rails of n->list, in order, grouped by transport (n->tp). */
static void rails_group(bfo_net *n, const bfo_net_options *opt)
{
    char *save = NULL;
    for (char *tok = strtok_r(n->list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        const void *o = NULL;
        const bfo_transport_ops *ops;
        int g = n->nrails++, k;
        snprintf(n->rname[g], sizeof n->rname[g], "%s",
                 opt->rail_names && opt->rail_names[g] ? opt->rail_names[g] : tok);
        if (!strcmp(tok, BFO_NET_RAIL_ABSENT)) { /* a slot this rank has no rail in */
            n->rtp[g] = -1;
            n->rlocal[g] = -1;
            continue;
        }
        ops = claim(tok, opt, &o);
        for (k = 0; k < n->ntp && n->tp[k].ops != ops; k++)
            ;
        if (k == n->ntp) {
            n->tp[k].ops = ops;
            n->tp[k].opt = o;
            n->tp[k].n = n;
            n->ntp++;
        }
        net_tp *tp = &n->tp[k];
        n->rtp[g] = k;
        n->rlocal[g] = tp->nrails;
        tp->names[tp->nrails] = tok;
        tp->bw[tp->nrails] = opt->rail_bandwidth[g];
        tp->g[tp->nrails++] = g;
        n->bw[g] = opt->rail_bandwidth[g];
    }
}

/* What transport tp's open() (and need()) get: its rails, the engine's
 * configuration d; the caller adds the sink and the log level. */
static void tp_args(const bfo_net *n, const net_tp *tp, const bfo_config *d, bfo_transport_args *a)
{
    memset(a, 0, sizeof *a);
    a->rank = n->rank;
    a->size = n->size;
    a->nrails = tp->nrails;
    a->rails = tp->names;
    a->bandwidth = tp->bw;
    a->cfg = d;
    a->opt = tp->opt;
}

/* The limits on open files and locked memory against what the transports
 * of the rail list may hold (bfo_net.h, LIMITS; bfo_limits.h). */
static int limits_check(bfo_net *n, const bfo_net_options *opt, const bfo_config *cfg)
{
    bfo_limits_part p[BFO_MAX_RAILS];
    bfo_config d = *cfg;
    const char *local = getenv("OMPI_COMM_WORLD_LOCAL_SIZE"); /* a launcher's fact, not a setting */
    int mode = opt->limits ? opt->limits : bfo_limits_mode(setting_env(opt, "BFO_LIMITS"));
    if (!opt->limits && !mode && setting_env(opt, "BFO_LIMITS")) {
        fprintf(stderr, "bfo: BFO_LIMITS=%s: not fail, warn or off\n", setting_env(opt, "BFO_LIMITS"));
        return BFO_ERR_INVALID;
    }
    if (mode == BFO_LIMITS_OFF)
        return BFO_OK;
    bfo_config_defaults(&d);
    memset(p, 0, sizeof p);
    for (int k = 0; k < n->ntp; k++) {
        net_tp *tp = &n->tp[k];
        bfo_transport_args a;
        tp_args(n, tp, &d, &a);
        p[k].name = tp->ops->name;
        p[k].nrails = tp->nrails;
        if (tp->ops->need)
            tp->ops->need(&a, &p[k].need);
        p[k].peers = (uint64_t)(n->size - 1);
        if (p[k].need.host_only && local && atoi(local) > 0 && atoi(local) <= n->size)
            p[k].peers = (uint64_t)(atoi(local) - 1);
    }
    return bfo_limits_check(p, n->ntp, bfo_limits_open_fds(), mode ? mode : BFO_LIMITS_FAIL, NULL, n->rank,
                            log_level(opt, "net"), stderr);
}
_Static_assert(BFO_NET_LIMITS_FAIL == BFO_LIMITS_FAIL && BFO_NET_LIMITS_WARN == BFO_LIMITS_WARN &&
               BFO_NET_LIMITS_OFF == BFO_LIMITS_OFF, "bfo_net.h's names of the limits' modes are bfo_limits.h's");

/* Each transport opened on its rails, with the configuration the engine
 * will use (its sizes). */
static int transports_open(bfo_net *n, const bfo_net_options *opt, const bfo_config *cfg)
{
    bfo_config d = *cfg;
    bfo_config_defaults(&d);
    for (int k = 0; k < n->ntp; k++) {
        net_tp *tp = &n->tp[k];
        bfo_sink sink = { tp, up_completion, up_frame, up_event, up_heard, up_lookup, up_host,
                          up_place, up_place_ok, up_frame_placed };
        bfo_transport_args a;
        int rc;
        tp_args(n, tp, &d, &a);
        a.sink = &sink;
        a.log_level = log_level(opt, tp->ops->name);
        rc = tp->ops->open(&tp->t, &a);
        if (rc != BFO_OK) {
            fprintf(stderr, "bfo: rank %d: the %s rails could not be opened: %s\n", n->rank, tp->ops->name,
                    bfo_net_errname(rc));
            tp->t = NULL;
            return rc;
        }
        tp->ops->backend(tp->t, &tp->be);
    }
    return BFO_OK;
}

/* AUTHENTICATION (bfo_net.h): this rank's keys.  The embedding layer's
 * membership key (opt->auth_key), else the wire-up's state (bfo_boot_auth:
 * BFO_BOOTSTRAP or PMIx given a key), else a state of its own with an
 * all-zero membership key: the public keys in the cards are then what the
 * pair keys rest on (the caller's modex, PMIx; with BFO_BOOTSTRAP and no
 * key, nothing: rank 0's bfo_boot said so on stderr). */
static int auth_setup(bfo_net *n, const bfo_net_options *opt)
{
    static const uint8_t zero[BFO_AUTH_KEY_LEN];
    int rc;
    if (!opt->auth_key && (n->auth = bfo_boot_auth(n->boot)) != NULL)
        return BFO_OK;
    rc = bfo_auth_init(&n->auth, opt->auth_key ? opt->auth_key : zero, n->rank, n->size, bfo_boot_job(n->boot));
    if (rc != BFO_OK) {
        fprintf(stderr, "bfo: rank %d: no keys (libsodium would not start, or no memory): %s\n", n->rank,
                bfo_net_errname(rc));
        return rc;
    }
    n->auth_own = 1;
    if (n->log >= 2)
        fprintf(stderr, "bfo-net[%d]: membership key %s\n", n->rank,
                opt->auth_key ? "the caller's" : bfo_boot_unkeyed(n->boot) ? "none (not authenticated)"
                                                                           : "none: the cards' public keys");
    return BFO_OK;
}

struct bfo_auth *bfo_net_auth(const bfo_net *n) { return n ? n->auth : NULL; }

/* BFO_AUTH: on (the default) gives the TCP transport this rank's keys (its
 * hellos and beacons, bfo_tcp.h), and the shm and verbs transports (their
 * hellos, bfo_shm.h, bfo_verbs.h); off gives them none, and says so on
 * stderr at every rank: a hello or a beacon that names the job id is then
 * taken, as before issue 37 (for a test's hostile peer that speaks the old
 * hello, tests/tcp/t5; never silently). */
static int auth_env(bfo_net *n, bfo_net_options *opt)
{
    const char *v = setting_env(opt, "BFO_AUTH");
    if (v && *v && strcmp(v, "on") && strcmp(v, "off")) {
        fprintf(stderr, "bfo: BFO_AUTH=%s: on (the default) or off\n", v);
        return BFO_ERR_INVALID;
    }
    if (v && !strcmp(v, "off")) {
        fprintf(stderr, "bfo: rank %d: BFO_AUTH=off: TCP connections and beacons are NOT authenticated, nor are shm "
                        "and verbs connections: anyone who reads the job id off the wire can take this rank's rails\n",
                n->rank);
        return BFO_OK;
    }
    opt->tcp.auth = n->auth; /* the TCP transport's hellos and beacons (bfo_tcp.h) */
    opt->tcp.auth_peer = auth_peer;
    opt->tcp.auth_peer_ctx = n;
    opt->shm.auth = n->auth; /* shm's hellos (bfo_shm.h, AUTHENTICATION) */
    opt->shm.auth_peer = auth_peer;
    opt->shm.auth_peer_ctx = n;
    opt->verbs.auth = n->auth; /* verbs' REQ, REP, RTU (bfo_verbs.h, AUTHENTICATION) */
    opt->verbs.auth_peer = auth_peer;
    opt->verbs.auth_peer_ctx = n;
    return BFO_OK;
}

/* The card published, then every transport started. */
static int card_publish(bfo_net *n)
{
    uint8_t card[BFO_BOOT_CARD_MAX];
    size_t clen = card_make(n, card, sizeof card);
    int rc;
    if (!clen) {
        fprintf(stderr, "bfo: rank %d: a transport gave no address for one of its rails (or the card is over "
                        "%d bytes): nothing to publish\n", n->rank, BFO_BOOT_CARD_MAX);
        return BFO_ERR_INVALID;
    }
    rc = bfo_boot_publish(n->boot, card, clen);
    if (rc == BFO_OK && n->auth_own && bfo_auth_set_job(n->auth, bfo_boot_job(n->boot)) != BFO_OK)
        rc = BFO_ERR_INVALID; /* no peer's key yet: cannot be */
    for (int k = 0; rc == BFO_OK && k < n->ntp; k++)
        rc = n->tp[k].ops->start(n->tp[k].t, bfo_boot_job(n->boot));
    return rc;
}

/* The engine over n's rails (n_* as its backend), and the table of
 * registrations. */
static int engine_start(bfo_net *n, bfo_config *cfg, const bfo_abi *caller)
{
    bfo_backend be;
    int rc;
    memset(&be, 0, sizeof be);
    be.ctx = n;
    be.post_send = n_post_send;
    be.post_send_data = n_post_send_data;
    be.post_write = n_post_write;
    be.post_read = n_post_read;
    be.reg_mem = n_reg_mem;
    be.dereg_mem = n_dereg_mem;
    be.connect = n_connect;
    be.disconnect = n_disconnect;
    be.part = n_part;
    be.rail_caps = n_caps;
    be.rail_bandwidth = n_bw;
    if (!cfg->grow) { /* the engine's pools grow as the program needs (n_grow) */
        cfg->grow = n_grow;
        cfg->grow_ctx = n;
    }
    n->emem = malloc(bfo_engine_mem_size(cfg));
    if (!n->emem)
        return BFO_ERR_NO_MEMORY;
    rc = bfo_engine_init_abi(&n->eng, cfg, &be, n->emem, bfo_engine_mem_size(cfg), bfo_boot_now(), caller);
    if (rc != BFO_OK)
        return rc;
    n->engine_up = 1;
    n->nregs = n->eng.cfg.max_requests;
    n->regs = (uint64_t *)calloc((size_t)n->nregs * (size_t)n->ntp, sizeof *n->regs);
    n->reg_free = (int *)malloc(sizeof(int) * (size_t)n->nregs);
    if (!n->regs || !n->reg_free)
        return BFO_ERR_NO_MEMORY;
    for (int g = 0; g < n->nregs; g++)
        n->reg_free[n->nreg_free++] = n->nregs - 1 - g;
    return BFO_OK;
}

int bfo_net_init_boot_abi(bfo_net **out, const bfo_config *cfg_in, const bfo_net_options *opt_in, bfo_boot *boot,
                          const bfo_abi *caller)
{
    bfo_net *n;
    bfo_net_options opt = opt_in ? *opt_in : (bfo_net_options){ 0 };
    bfo_config cfg = cfg_in ? *cfg_in : (bfo_config){ 0 };
    const char *rails = opt.rails ? opt.rails : setting_env(&opt, "BFO_RAILS");
    int rc;
    *out = NULL;
    for (int i = 0; opt.transports && opt.transports[i]; i++)
        remember(opt.transports[i]); /* before its open fails: bfo_net_errname names its codes */
    if (!boot)
        return BFO_ERR_INVALID;
    if ((rc = abi_ok(caller)) != BFO_OK) {
        bfo_boot_fini(boot);
        return rc;
    }
    if (!(n = n_new(boot, &opt, rails)))
        return BFO_ERR_NO_MEMORY;
    if (check_rails(n->list, &opt) < 0) {
        char syntax[256] = "";
        for (int i = 0; i < NTRANSPORTS; i++) /* each transport's, as its row says */
            snprintf(syntax + strlen(syntax), sizeof syntax - strlen(syntax), "%s%s", i ? "; " : "",
                     transports[i].ops->rail_syntax ? transports[i].ops->rail_syntax : transports[i].ops->name);
        fprintf(stderr, "bfo: bad rail list %s (each one of: %s; at most %d; this build has %s)\n", n->list, syntax,
                BFO_MAX_RAILS, bfo_net_transports());
        rc = BFO_ERR_INVALID;
        goto fail;
    }
    if ((rc = settings_read(&opt, &cfg)) != BFO_OK)
        goto fail;
    rails_group(n, &opt);
    if ((rc = peers_alloc(n)) != BFO_OK)
        goto fail;
    /* no eager limit from the program or BFO_EAGER_LIMIT: the transport's
     * own when it carries every rail (bfo_net.h, EAGER LIMIT), else the
     * engine's default */
    if (!cfg.eager_limit) {
        const bfo_transport_ops *ops[BFO_MAX_RAILS];
        bfo_net_tuning t;
        for (int k = 0; k < n->ntp; k++)
            ops[k] = n->tp[k].ops;
        tune(ops, n->ntp, &t);
        cfg.eager_limit = t.eager_limit;
    }
    cfg.rank = n->rank;
    cfg.nranks = n->size;
    cfg.nrails = n->nrails;
    if (standby_env(&opt, &cfg.standby_rails, n->nrails) < 0) {
        rc = BFO_ERR_INVALID;
        goto fail;
    }
    if ((rc = auth_setup(n, &opt)) != BFO_OK)
        goto fail;
    if ((rc = auth_env(n, &opt)) != BFO_OK)
        goto fail;
    if ((rc = limits_check(n, &opt, &cfg)) != BFO_OK || (rc = transports_open(n, &opt, &cfg)) != BFO_OK ||
        (rc = card_publish(n)) != BFO_OK ||
        (rc = engine_start(n, &cfg, caller)) != BFO_OK || (rc = threads_start(n, &opt)) != BFO_OK)
        goto fail;
    *out = n;
    return BFO_OK;
fail:
    bfo_net_fini(n);
    return rc;
}

/* ---------------------------------------------------------------- threads */

/* The progress thread (bfo_net.h, THREADS): while the caller has not called
 * bfo_net_progress for a while (it computes), it runs the transports under
 * the lock with ctl_only set: PROBE and PROBEACK reach the engine, every
 * other frame is refused (back-pressure: TCP and shm tell the peer they are
 * stalled, which keeps the peer's probes waiting), completions (but those
 * of its own PROBEs and PROBEACKs: bfo_engine_completion_probe) and rail
 * events wait for the caller.  It never runs the engine's timers and
 * completes no request; it only keeps this process answering. */
static void *progress_main(void *arg)
{
    bfo_net *n = (bfo_net *)arg;
    struct timespec ts;
    ts.tv_sec = 0;
    ts.tv_nsec = (long)n->thr_every;
    while (!atomic_load(&n->thr_stop)) {
        uint64_t now;
        nanosleep(&ts, NULL);
        now = bfo_boot_now();
        if (now - atomic_load_explicit(&n->last_call, memory_order_relaxed) < n->thr_every)
            continue; /* the caller progresses by itself */
        if (pthread_mutex_trylock(&n->mu) != 0)
            continue; /* the caller is inside bfo_net */
        n->ctl_only = 1;
        for (int k = 0; k < n->ntp; k++)
            n->tp[k].ops->progress(n->tp[k].t, now);
        n->ctl_only = 0;
        n->st.thread_rounds++;
        pthread_mutex_unlock(&n->mu);
    }
    return NULL;
}

/* The lock (thread_safe or the progress thread) and the thread. */
static int threads_start(bfo_net *n, const bfo_net_options *opt)
{
    int pt = opt->progress_thread;
    if (!pt) {
        const char *v = setting_env(opt, "BFO_PROGRESS_THREAD");
        pt = v && atoi(v) > 0;
    }
    pt = pt > 0;
    if (!pt && opt->thread_safe <= 0)
        return BFO_OK;
    {
        pthread_mutexattr_t ma; /* recursive: an entry may call another (the caller's lock held) */
        int bad = pthread_mutexattr_init(&ma) != 0 || pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE) != 0 ||
                  pthread_mutex_init(&n->mu, &ma) != 0;
        pthread_mutexattr_destroy(&ma);
        if (bad)
            return BFO_ERR_NO_MEMORY;
    }
    n->locking = 1;
    if (!pt)
        return BFO_OK;
    n->capdq = n->eng.cfg.max_ops + 4 * n->size * n->nrails + 16;
    n->dq = (struct deferred *)malloc(sizeof *n->dq * (size_t)n->capdq);
    if (!n->dq)
        return BFO_ERR_NO_MEMORY;
    n->thr_every = n->eng.cfg.probe_timeout_ns / 4; /* four looks per probe timeout, 1 to 10 ms apart */
    if (n->thr_every > 10000000ull)
        n->thr_every = 10000000ull;
    if (n->thr_every < 1000000ull)
        n->thr_every = 1000000ull;
    atomic_store(&n->last_call, bfo_boot_now());
    atomic_store(&n->thr_stop, 0);
    if (pthread_create(&n->thr, NULL, progress_main, n) != 0)
        return BFO_ERR_NO_MEMORY;
    n->thr_on = 1;
    if (n->log >= 2)
        fprintf(stderr, "bfo-net[%d]: progress thread on (looks every %.1f ms)\n", n->rank,
                (double)n->thr_every / 1e6);
    return BFO_OK;
}

void bfo_net_lock(bfo_net *n) { n_lock(n); }
void bfo_net_unlock(bfo_net *n) { n_unlock(n); }
int bfo_net_progress_thread(const bfo_net *n) { return n->thr_on; }

int bfo_net_isend(bfo_net *n, bfo_request *r, const void *buf, size_t len, int peer, int ctx, int tag)
{
    int rc;
    n_lock(n);
    rc = bfo_isend(&n->eng, r, buf, len, peer, ctx, tag, bfo_boot_now());
    n_unlock(n);
    return rc;
}

int bfo_net_irecv(bfo_net *n, bfo_request *r, void *buf, size_t cap, int peer, int ctx, int tag)
{
    int rc;
    n_lock(n);
    rc = bfo_irecv(&n->eng, r, buf, cap, peer, ctx, tag, bfo_boot_now());
    n_unlock(n);
    return rc;
}

int bfo_net_test(bfo_net *n, const bfo_request *r)
{
    int done;
    n_lock(n);
    done = bfo_test(r);
    n_unlock(n);
    return done;
}

/* ------------------------------------------------------------ accessors */

bfo_engine *bfo_net_engine(bfo_net *n) { return &n->eng; }
int bfo_net_rank(const bfo_net *n) { return n->rank; }
int bfo_net_size(const bfo_net *n) { return n->size; }
int bfo_net_nrails(const bfo_net *n) { return n->nrails; }

const char *bfo_net_rail_name(const bfo_net *n, int rail)
{
    return rail >= 0 && rail < n->nrails ? n->rname[rail] : NULL;
}

const char *bfo_net_rail_transport(const bfo_net *n, int rail)
{
    return rail >= 0 && rail < n->nrails ? n->rtp[rail] >= 0 ? n->tp[n->rtp[rail]].ops->name : BFO_NET_RAIL_ABSENT
                                         : NULL;
}

/* ------------------------------------------------------------- progress */

/* RAIL_ABSENT for every (peer, rail) found not to reach at connect(). */
static int report_absent(bfo_net *n, uint64_t now)
{
    int k = 0;
    n->nabsent_due = 0;
    for (int p = 0; p < n->size; p++)
        for (int g = 0; g < n->nrails; g++) {
            unsigned char *due = &n->absent_due[(size_t)p * (size_t)n->nrails + (size_t)g];
            if (*due) {
                *due = 0;
                bfo_engine_rail_event(&n->eng, p, g, BFO_EV_RAIL_ABSENT, now);
                k++;
            }
        }
    return k;
}


/* The first progress after a wire-up whose cards come later (the caller's
 * fence is done now): the connects the engine asked for at init. */
static int connect_now(bfo_net *n)
{
    int k = 0;
    n->cards_later = 0;
    for (int p = 0; p < n->size; p++)
        for (int g = 0; g < n->nrails; g++) {
            unsigned char *due = &n->connect_due[(size_t)p * (size_t)n->nrails + (size_t)g];
            if (*due) {
                *due = 0;
                if (n_connect(n, p, g) != 0)
                    bfo_engine_rail_event(&n->eng, p, g, BFO_EV_CONNECT_FAILED, bfo_boot_now());
                k++;
            }
        }
    return k;
}

/* What the progress thread left for the caller: in order, now. */
static int run_deferred(bfo_net *n, uint64_t now)
{
    int k = n->ndq;
    for (int i = 0; i < n->ndq; i++) {
        const struct deferred *d = &n->dq[i];
        if (d->kind == 0)
            bfo_engine_completion(&n->eng, d->token, d->ev);
        else
            bfo_engine_rail_event(&n->eng, d->peer, d->rail, d->ev, now);
    }
    n->ndq = 0;
    return k;
}

int bfo_net_progress(bfo_net *n, int timeout_ms)
{
    int handled;
    n_lock(n);
    handled = progress_locked(n, timeout_ms);
    n_unlock(n);
    return handled;
}

/* The processes the launcher reported dead since the last look: each is
 * declared dead to the engine (bfo_peer_failed: its requests fail
 * BFO_ERR_PROC_FAILED, it is fenced). */
static int launcher_reports(bfo_net *n, uint64_t now)
{
    int ranks[16], k, handled = 0;
    n->last_failures = now;
    while ((k = bfo_boot_failures(n->boot, ranks, 16)) > 0) {
        for (int i = 0; i < k; i++) {
            const int was = bfo_peer_state(&n->eng, ranks[i]);
            if (ranks[i] == n->rank || bfo_peer_failed(&n->eng, ranks[i], now) != BFO_OK)
                continue;
            handled++;
            if (was != BFO_PEER_ST_FAILED && bfo_peer_state(&n->eng, ranks[i]) == BFO_PEER_ST_FAILED)
                fprintf(stderr, "bfo-net[%d]: the launcher says rank %d failed: its requests fail "
                                "(BFO_ERR_PROC_FAILED), it is fenced\n", n->rank, ranks[i]);
        }
        if (k < 16)
            break;
    }
    return handled;
}

/* One reading of the clock for the whole call (46 ns each on a 2-core
 * guest here, and a busy poll's critical path ran through three): the
 * transports take it, and the engine's timers after them (the engine keeps
 * the latest time it was given: the frames taken meanwhile carry theirs). */
static int progress_locked(bfo_net *n, int timeout_ms)
{
    int handled = 0;
    uint64_t now = bfo_boot_now();
    /* A sleep right after a busy poll that found nothing (pml/bfo's nap:
     * its progress polls, then sleeps) goes straight to wait_fds: the
     * transports were polled under TIMERS_EVERY_NS ago, and what came
     * since is what wait_fds looks for after arming (frames, room, posts
     * queued, connects asked), so polling them again only cost every nap
     * its system calls (an epoll_wait, TCP_INFO) on a starved CPU. */
    const int fresh = timeout_ms > 0 && n->idle_at && now - n->idle_at < TIMERS_EVERY_NS;
    if (n->thr_on)
        atomic_store_explicit(&n->last_call, now, memory_order_relaxed);
    if (n->ndq)
        handled += run_deferred(n, now);
    if (BFO__UNLIKELY(n->cards_later) && !n->ctl_only && !n->eng.left) /* left: nobody to dial */
        handled += connect_now(n);
    if (!fresh)
        for (int k = 0; k < n->ntp; k++)
            handled += n->tp[k].ops->progress(n->tp[k].t, now);
    if (n->nabsent_due)
        handled += report_absent(n, now);
    if ((timeout_ms > 0 && !fresh) || now - n->last_timers >= TIMERS_EVERY_NS) {
        n->last_timers = now;
        bfo_engine_progress(&n->eng, now);
    }
    if (BFO__UNLIKELY(bfo_boot_failures_fd(n->boot) >= 0) &&
        ((timeout_ms > 0 && !fresh) || now - n->last_failures >= FAILURES_EVERY_NS))
        handled += launcher_reports(n, now);
    n->idle_at = timeout_ms == 0 && handled == 0 ? now : 0;
    if (timeout_ms > 0 && handled == 0) {
        struct pollfd pf[256];
        int fds[256], nf = 0, got;
        for (int k = 0; k < n->ntp; k++) {
            int m = n->tp[k].ops->wait_fds(n->tp[k].t, fds + nf, (int)(sizeof fds / sizeof fds[0]) - nf);
            if (m < 0)
                return handled; /* it has work now: no sleeping */
            nf += m;
        }
        if (bfo_boot_failures_fd(n->boot) >= 0 && nf < (int)(sizeof fds / sizeof fds[0]))
            fds[nf++] = bfo_boot_failures_fd(n->boot); /* a report wakes it */
        for (int i = 0; i < nf; i++) {
            pf[i].fd = fds[i];
            pf[i].events = POLLIN;
            pf[i].revents = 0;
        }
        n_unlock(n); /* other threads may go on while this one sleeps */
        got = poll(pf, (nfds_t)nf, timeout_ms);
        n_lock(n);
        if (got > 0) {
            now = bfo_boot_now();
            for (int k = 0; k < n->ntp; k++)
                handled += n->tp[k].ops->progress(n->tp[k].t, now);
            if (bfo_boot_failures_fd(n->boot) >= 0)
                handled += launcher_reports(n, now);
            handled += handled == 0;
        }
    }
    return handled;
}

int bfo_net_peer_failed(bfo_net *n, int peer)
{
    int rc;
    n_lock(n);
    rc = bfo_peer_failed(&n->eng, peer, bfo_boot_now());
    n_unlock(n);
    return rc;
}

const bfo_net_stats *bfo_net_get_stats(bfo_net *n)
{
    n_lock(n);
    for (int g = 0; g < n->nrails; g++) {
        const net_tp *tp = n->rtp[g] >= 0 ? &n->tp[n->rtp[g]] : NULL;
        if (tp)
            tp->ops->stats(tp->t, n->rlocal[g], &n->st.rail[g]);
    }
    n_unlock(n);
    return &n->st;
}

const bfo_counter_desc *bfo_net_rail_counters(const bfo_net *n, int rail, int *count)
{
    const bfo_transport_ops *ops = rail >= 0 && rail < n->nrails && n->rtp[rail] >= 0 ? n->tp[n->rtp[rail]].ops : NULL;
    *count = ops && ops->counters ? ops->ncounters : 0;
    return *count ? ops->counters : NULL;
}

int bfo_net_rail_counter(bfo_net *n, int rail, const char *name, uint64_t *value)
{
    int count;
    const bfo_counter_desc *d = bfo_net_rail_counters(n, rail, &count);
    *value = 0;
    for (int i = 0; i < count && i < BFO_TP_COUNTERS_MAX; i++)
        if (!strcmp(d[i].name, name)) {
            *value = bfo_net_get_stats(n)->rail[rail].tp[i];
            return BFO_OK;
        }
    return BFO_ERR_INVALID;
}

void bfo_net_fault_drop(bfo_net *n, int rail, int on)
{
    n_lock(n);
    if (rail >= 0 && rail < n->nrails && n->rtp[rail] >= 0) {
        const net_tp *tp = &n->tp[n->rtp[rail]];
        tp->ops->fault(tp->t, n->rlocal[rail], on);
    }
    n_unlock(n);
}

int bfo_net_leave(bfo_net *n, int timeout_ms)
{
    uint64_t end;
    int rc;
    if (!n || !n->engine_up)
        return BFO_ERR_INVALID;
    n_lock(n);
    end = bfo_boot_now() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0) * 1000000ull;
    bfo_engine_leave(&n->eng, bfo_boot_now());
    /* the BYEs out: each delivered (the peer's transport acknowledged it
     * once its engine took it) or failed; one whose peer does not progress
     * waits no longer than the timeout */
    while (!bfo_engine_left(&n->eng) && bfo_boot_now() < end)
        progress_locked(n, 1);
    rc = bfo_engine_left(&n->eng) ? BFO_OK : BFO_ERR_AGAIN;
    if (n->log >= 2)
        fprintf(stderr, "bfo-net[%d]: left: %llu BYE(s) posted, %s\n", n->rank,
                (unsigned long long)n->eng.stats.byes_sent,
                rc == BFO_OK ? "all out" : "some still out at the timeout");
    n_unlock(n);
    return rc;
}

void bfo_net_fini(bfo_net *n)
{
    if (!n)
        return;
    if (n->thr_on) {
        atomic_store(&n->thr_stop, 1);
        pthread_join(n->thr, NULL);
        n->thr_on = 0;
    }
    /* a rank that finishes says goodbye first, so that its peers take its
     * connections closing as no failure (bfo_net_leave, if not done) */
    if (n->engine_up && !n->eng.left && n->leave_ms >= 0)
        bfo_net_leave(n, n->leave_ms ? n->leave_ms : BFO_NET_LEAVE_MS);
    if (n->locking)
        pthread_mutex_destroy(&n->mu);
    free(n->dq);
    for (int k = 0; k < n->ntp; k++)
        if (n->tp[k].t)
            n->tp[k].ops->fini(n->tp[k].t);
    if (n->auth_own)
        bfo_auth_free(n->auth);
    bfo_boot_fini(n->boot); /* the wire-up's keys with it */
    free(n->emem);
    while (n->grown) {
        void *next;
        memcpy(&next, n->grown, sizeof next);
        free(n->grown);
        n->grown = next;
    }
    free(n->list);
    free(n->card_state);
    free(n->pnrails);
    free(n->prails);
    free(n->absent_due);
    free(n->connect_due);
    free(n->regs);
    free(n->reg_free);
    free(n);
}

/* The engine: each rail's state per peer, what waits. */
static void dump_engine(bfo_net *n, FILE *f)
{
    const bfo_engine *e = &n->eng;
    uint64_t now = bfo_boot_now();
    int ux = bfo_engine_unexpected_count(e), ooo = bfo_engine_out_of_order_count(e);
    int posted = e->posted_count, fail = bfo_engine_unposted_count(e);
    fprintf(f, "bfo-net[%d]: engine: ops in use %d, failed to post %d, unexpected %d, out of order %d, "
            "buffers in use %d, receives posted %d; map-outs %llu, re-admissions %llu; engine time %.3f ms ago\n",
            n->rank, e->ops_in_use, fail, ux, ooo, e->uxm_in_use, posted, (unsigned long long)e->stats.mapouts,
            (unsigned long long)e->stats.readmissions, (double)(now - e->now) / 1e6);
    for (int p = 0; p < n->size; p++) {
        int pend = bfo_peer_waiting_count(e, p);
        if (p == n->rank)
            continue;
        fprintf(f, "bfo-net[%d]: engine: peer %d: next seq expected %llu, last sent %llu, ops waiting for a "
                "rail %d%s\n", n->rank, p, (unsigned long long)e->peers[p].recv_seq, (unsigned long long)e->peers[p].send_seq, pend,
                e->peers[p].unreachable ? ", unreachable" : "");
        for (int r = 0; r < n->nrails; r++) {
            const bfo_rail_link *rs = &e->peers[p].rail[r];
            fprintf(f, "bfo-net[%d]: engine: peer %d rail %d (%s, %s %d): %s, in flight %d, probe out %d, "
                    "heard %.3f ms ago, posted %.3f ms ago\n", n->rank, p, r, n->rname[r], bfo_net_rail_transport(n, r),
                    n->rlocal[r], bfo_rail_state_name(bfo_rail_state(e, p, r)), rs->rate.inflight, rs->det.probe_out,
                    (double)(now - rs->det.last_rx) / 1e6, (double)(now - rs->rate.last_tx) / 1e6);
        }
    }
}

/* No lock and nothing allocated: called from memory hooks, in any thread,
 * maybe one inside bfo_net already (bfo_transport_ops.mem_released).  The
 * table of transports does not change between init and fini. */
void bfo_net_mem_released(bfo_net *n, const void *buf, size_t len)
{
    if (!n || !buf || !len)
        return;
    for (int k = 0; k < n->ntp; k++)
        if (n->tp[k].ops->mem_released && n->tp[k].t)
            n->tp[k].ops->mem_released(n->tp[k].t, buf, len);
}

void bfo_net_dump(bfo_net *n, FILE *f)
{
    n_lock(n);
    if (n->engine_up)
        dump_engine(n, f);
    for (int k = 0; k < n->ntp; k++)
        n->tp[k].ops->dump(n->tp[k].t, f);
    n_unlock(n);
}
