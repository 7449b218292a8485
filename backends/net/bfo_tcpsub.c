/* bfo_tcpsub.c - backends/tcp/bfo_tcp.c compiled as a rail group of bfo_net
 * (see bfo_tcpsub.h for why and how).  Nothing of bfo_tcp.c is copied: it
 * is included, with a few of its calls redirected by macros. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdlib.h>

#include "bfo_engine.h"
#include "bfo_sink.h"

/* ---- the redirections, seen by bfo_tcp.c only */
static int tsub_engine_init(bfo_engine *e, const bfo_config *cfg, const bfo_backend *be, void *mem,
                            size_t len, uint64_t now);
static void tsub_completion(bfo_engine *e, uint64_t token, int ok);
static int tsub_frame(bfo_engine *e, int peer, int rail, const uint8_t *buf, size_t len, uint64_t now);
static void tsub_rail_event(bfo_engine *e, int peer, int rail, int ev, uint64_t now);
static void tsub_engine_progress(bfo_engine *e, uint64_t now);
static int tsub_accepts(int cs, int ev);
static char *tsub_getenv(const char *name);

#define bfo_engine_init tsub_engine_init
#define bfo_engine_completion tsub_completion
#define bfo_engine_frame tsub_frame
#define bfo_engine_rail_event tsub_rail_event
#define bfo_engine_progress tsub_engine_progress
#define bfo_rail_accepts tsub_accepts
#define getenv tsub_getenv
/* PMIx wire-up: rank, size and the exchange come from the multiplexer */
#define bfo_tcp_pmix_env tsub_pmix_env
#define bfo_tcp_pmix_init tsub_pmix_init
#define bfo_tcp_pmix_exchange tsub_pmix_exchange
#define bfo_tcp_pmix_fini tsub_pmix_fini
/* the public names of this copy */
#define bfo_tcp_frame_header bfo_tcpsub__frame_header
#define bfo_tcp_init bfo_tcpsub__init
#define bfo_tcp_init_with bfo_tcpsub__init_with
#define bfo_tcp_progress bfo_tcpsub__progress
#define bfo_tcp_engine bfo_tcpsub__engine
#define bfo_tcp_rank bfo_tcpsub__rank
#define bfo_tcp_size bfo_tcpsub__size
#define bfo_tcp_nrails bfo_tcpsub__nrails
#define bfo_tcp_get_stats bfo_tcpsub__get_stats
#define bfo_tcp_now bfo_tcpsub__now
#define bfo_tcp_fault_drop bfo_tcpsub__fault_drop
#define bfo_tcp_fini bfo_tcpsub__fini
#define bfo_tcp_dump bfo_tcpsub__dump
#define bfo_tcp_bootstrap bfo_tcpsub__bootstrap
#define bfo_tcp_parse_rail bfo_tcpsub__parse_rail
#define bfo_tcp_parse_rails bfo_tcpsub__parse_rails
#define bfo_tcp_errname bfo_tcpsub__errname

#include "../tcp/bfo_tcp.c"

#undef bfo_engine_init
#undef bfo_engine_completion
#undef bfo_engine_frame
#undef bfo_engine_rail_event
#undef bfo_engine_progress
#undef bfo_rail_accepts
#undef getenv

#include "bfo_tcpsub.h"

/* ---- the multiplexer's side */

typedef struct tsub_reg {
    const bfo_engine *e;
    bfo_sink sink;
    bfo_backend be;
} tsub_reg;

#define TSUB_MAX 8
static tsub_reg tsub_regs[TSUB_MAX];

/* set while bfo_tcpsub_open runs */
static struct {
    int active, rank, size;
    const bfo_sink *sink;
    bfo_tcpsub_exchange_fn exchange;
    void *exchange_ctx;
} tsub_open;

static tsub_reg *tsub_find(const bfo_engine *e)
{
    for (int i = 0; i < TSUB_MAX; i++)
        if (tsub_regs[i].e == e)
            return &tsub_regs[i];
    return NULL;
}

static int tsub_engine_init(bfo_engine *e, const bfo_config *cfg, const bfo_backend *be, void *mem,
                            size_t len, uint64_t now)
{
    tsub_reg *r = tsub_find(NULL);
    int rc;
    if (!r || !tsub_open.active)
        return BFO_ERR_NO_MEMORY;
    /* a real engine, never driven: bfo_tcp.c reads its rail states */
    rc = bfo_engine_init(e, cfg, be, mem, len, now);
    if (rc != BFO_OK)
        return rc;
    r->e = e;
    r->sink = *tsub_open.sink;
    r->be = *be;
    return BFO_OK;
}

static void tsub_completion(bfo_engine *e, uint64_t token, int ok)
{
    tsub_reg *r = tsub_find(e);
    if (r)
        r->sink.completion(r->sink.ctx, token, ok);
}

static int tsub_frame(bfo_engine *e, int peer, int rail, const uint8_t *buf, size_t len, uint64_t now)
{
    tsub_reg *r = tsub_find(e);
    return r ? r->sink.frame(r->sink.ctx, peer, rail, buf, len, now) : BFO_ERR_INVALID;
}

static void tsub_rail_event(bfo_engine *e, int peer, int rail, int ev, uint64_t now)
{
    tsub_reg *r = tsub_find(e);
    if (r)
        r->sink.rail_event(r->sink.ctx, peer, rail, ev, now);
}

static void tsub_engine_progress(bfo_engine *e, uint64_t now)
{
    (void)e;
    (void)now; /* the multiplexer runs the real engine's timers */
}

static int tsub_accepts(int cs, int ev)
{
    (void)cs;
    (void)ev;
    return 1; /* the real engine filters (bfo_engine_rail_event) */
}

static char *tsub_getenv(const char *name)
{
    if (tsub_open.active && (!strcmp(name, "BFO_RANK") || !strcmp(name, "BFO_SIZE")))
        return NULL; /* rank and size come from the multiplexer (the "PMIx" path below) */
    return getenv(name);
}

int tsub_pmix_env(void) { return tsub_open.active; }

int tsub_pmix_init(int *rank, int *size)
{
    *rank = tsub_open.rank;
    *size = tsub_open.size;
    return BFO_OK;
}

int tsub_pmix_exchange(int rank, int size, int nrails, const bfo_tcp_addr *mine, bfo_tcp_addr *table,
                       uint64_t *job, uint64_t timeout_ns)
{
    (void)rank, (void)size, (void)timeout_ns;
    return tsub_open.exchange(tsub_open.exchange_ctx, nrails, mine, table, job);
}

void tsub_pmix_fini(void) {} /* the multiplexer finalizes PMIx */

int bfo_tcpsub_open(bfo_tcp **out, int rank, int size, const bfo_config *cfg,
                    const bfo_tcp_options *opt, const bfo_sink *sink,
                    bfo_tcpsub_exchange_fn exchange, void *exchange_ctx)
{
    int rc;
    tsub_open.active = 1;
    tsub_open.rank = rank;
    tsub_open.size = size;
    tsub_open.sink = sink;
    tsub_open.exchange = exchange;
    tsub_open.exchange_ctx = exchange_ctx;
    rc = bfo_tcpsub__init(out, cfg, opt);
    memset(&tsub_open, 0, sizeof tsub_open);
    return rc;
}

void bfo_tcpsub_backend(bfo_tcp *t, bfo_backend *be)
{
    tsub_reg *r = tsub_find(&t->eng);
    if (r)
        *be = r->be;
    else
        memset(be, 0, sizeof *be);
}

int bfo_tcpsub_progress(bfo_tcp *t) { return bfo_tcpsub__progress(t, 0); }

void bfo_tcpsub_before_sleep(bfo_tcp *t)
{
    t->now = bfo_tcpsub__now();
    acks_due(t, 1);
    settle(t);
}

int bfo_tcpsub_epoll_fd(const bfo_tcp *t) { return t->ep; }
const bfo_tcp_stats *bfo_tcpsub_stats(const bfo_tcp *t) { return &t->st; }
void bfo_tcpsub_fault_drop(bfo_tcp *t, int rail, int on) { bfo_tcpsub__fault_drop(t, rail, on); }

void bfo_tcpsub_fini(bfo_tcp *t)
{
    tsub_reg *r = t ? tsub_find(&t->eng) : NULL;
    bfo_tcpsub__fini(t);
    if (r)
        memset(r, 0, sizeof *r);
}
