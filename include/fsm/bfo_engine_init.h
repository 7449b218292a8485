// SPDX-License-Identifier: BSD-3-Clause
/* bfo_engine_init.h - the layout check and the engine's set-up.
 *
 * Part of bfo_engine.h, level 11 of its parts (docs/engine-design.md, "The
 * parts"): include bfo_engine.h, not this.  It includes bfo_engine_relay.h,
 * bfo_engine_revoke.h (and so every part below); a call to a part above
 * goes through a prototype in bfo_engine_hooks.h (none from here).
 *
 * Sections (grep '>>name'): >>abi_check, >>init.
 */
#ifndef BFO_ENGINE_INIT_H
#define BFO_ENGINE_INIT_H

#include "bfo_engine_relay.h"
#include "bfo_engine_revoke.h"

#ifdef __cplusplus
extern "C" {
#endif

/* >>abi_check - two layouts compared -------------------------------------- */

/* A message into why[0..len), cut short to fit, always terminated. */
typedef struct bfo__msg {
    char *p;
    size_t cap, len;
} bfo__msg;

static inline void bfo__msg_str(bfo__msg *m, const char *s)
{
    for (; *s; s++, m->len++)
        if (m->len + 1 < m->cap)
            m->p[m->len] = *s;
    if (m->cap)
        m->p[m->len < m->cap ? m->len : m->cap - 1] = 0;
}

static inline void bfo__msg_u32(bfo__msg *m, uint32_t v)
{
    char d[11];
    int n = (int)sizeof d - 1;
    d[n] = 0;
    do {
        d[--n] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    bfo__msg_str(m, d + n);
}

/* "NAME is A in the caller, B in the library" when a != b; counts them. */
static inline void bfo__abi_differ(bfo__msg *m, int *n, const char *name, uint32_t a, uint32_t b)
{
    if (a == b)
        return;
    bfo__msg_str(m, *n ? "; " : "");
    bfo__msg_str(m, name);
    bfo__msg_str(m, " is ");
    bfo__msg_u32(m, a);
    bfo__msg_str(m, " in the caller, ");
    bfo__msg_u32(m, b);
    bfo__msg_str(m, " in the library");
    ++*n;
}

/* bfo_abi_check: see THE API in bfo_engine.h. */
static inline int bfo_abi_check(const bfo_abi *caller, const bfo_abi *built, char *why,
                                size_t whylen)
{
    bfo__msg m;
    int n = 0;
    m.p = why;
    m.cap = why ? whylen : 0;
    m.len = 0;
    bfo__msg_str(&m, "");
    if (caller == built && caller)
        return BFO_OK;
    if (!caller || !built) {
        bfo__msg_str(&m, "no layout descriptor (pass BFO_ABI_HERE)");
        return BFO_ERR_INVALID;
    }
    if (caller->version != built->version) {
        bfo__abi_differ(&m, &n, "BFO_ABI_VERSION", caller->version, built->version);
        bfo__msg_str(&m, ": headers of another bfo version; build both from one");
        return BFO_ERR_ABI;
    }
    bfo__abi_differ(&m, &n, "BFO_MAX_RAILS", caller->max_rails, built->max_rails);
    bfo__abi_differ(&m, &n, "BFO_MAX_ACTIONS", caller->max_actions, built->max_actions);
    if (n) {
        bfo__msg_str(&m, "; build both with the same options (pkg-config --cflags bfo has the library's)");
        return BFO_ERR_ABI;
    }
    bfo__abi_differ(&m, &n, "sizeof(bfo_engine)", caller->sizeof_engine, built->sizeof_engine);
    bfo__abi_differ(&m, &n, "sizeof(bfo_peer)", caller->sizeof_peer, built->sizeof_peer);
    bfo__abi_differ(&m, &n, "sizeof(bfo_stats)", caller->sizeof_stats, built->sizeof_stats);
    bfo__abi_differ(&m, &n, "sizeof(bfo_request)", caller->sizeof_request, built->sizeof_request);
    bfo__abi_differ(&m, &n, "sizeof(bfo_config)", caller->sizeof_config, built->sizeof_config);
    bfo__abi_differ(&m, &n, "sizeof(bfo_backend)", caller->sizeof_backend, built->sizeof_backend);
    bfo__abi_differ(&m, &n, "sizeof(bfo_step)", caller->sizeof_step, built->sizeof_step);
    if (n) {
        bfo__msg_str(&m, ": another compiler, target or packing? Build both alike");
        return BFO_ERR_ABI;
    }
    return BFO_OK;
}

/* >>init - memory carved, pools, peers and rails set up ------------------- */

/* bfo_config_defaults: see THE API in bfo_engine.h. */
static inline void bfo_config_defaults(bfo_config *cfg)
{
    if (cfg)
        bfo__config_defaults(cfg);
}

/* bfo_engine_mem_size: see THE API in bfo_engine.h. */
static inline size_t bfo_engine_mem_size(const bfo_config *cfg_in)
{
    bfo_config c = *cfg_in;
    bfo__config_defaults(&c);
    return bfo__align(sizeof(bfo_peer) * (size_t)c.nranks) + bfo__rails_stride(&c) * (size_t)c.nranks +
           bfo__align(sizeof(bfo_op) * (size_t)c.max_ops) +
           bfo__align(sizeof(bfo_slot) * (size_t)c.max_requests) +
           bfo__align(sizeof(bfo_uxm) * (size_t)c.max_unexpected) +
           bfo__align(bfo__ux_bytes(&c) * (size_t)c.max_unexpected) +
           3 * bfo__align(sizeof(char *) * BFO_MAX_CHUNKS) +
           2 * bfo__align(sizeof(bfo__rbin) * (size_t)c.match_bins) +
           2 * bfo__align(sizeof(bfo__ubin) * (size_t)c.match_bins) +
           bfo__align(sizeof(uint64_t) * (size_t)c.data_stages) +
           bfo__align(bfo__stage_bytes(&c) * (size_t)c.data_stages) +
           (c.nrails > 1 ? bfo__align(BFO_MEASURE_BYTES) : 0) + bfo__relay_mem_size(&c) + 16;
}

/* bfo_engine_init_abi: see THE API in bfo_engine.h. */
static inline int bfo_engine_init_abi(bfo_engine *e, const bfo_config *cfg, const bfo_backend *be,
                                      void *mem, size_t mem_len, uint64_t now,
                                      const bfo_abi *caller)
{
    char *p = (char *)(((uintptr_t)mem + 15) & ~(uintptr_t)15);
    int rc = bfo_abi_check(caller, BFO_ABI_HERE, NULL, 0);
    if (rc != BFO_OK)
        return rc;
    memset(e, 0, sizeof *e);
    if (!cfg || !be || !be->post_send || cfg->nranks <= 0 || cfg->rank < 0 ||
        cfg->rank >= cfg->nranks || cfg->nrails <= 0 || cfg->nrails > BFO_MAX_RAILS)
        return BFO_ERR_INVALID;
    e->cfg = *cfg;
    bfo__config_defaults(&e->cfg);
    if (e->cfg.max_ops < bfo__min_ops(&e->cfg) || e->cfg.rdma < 0 || e->cfg.rdma > BFO_RDMA_OFF ||
        e->cfg.match_bins < 1 || (e->cfg.match_bins & (e->cfg.match_bins - 1)) ||
        e->cfg.data_stages < 0 || e->cfg.relay < 0 || e->cfg.relay > 1 || e->cfg.relay_slots < 1)
        return BFO_ERR_INVALID;
    if (!mem || mem_len < bfo_engine_mem_size(cfg))
        return BFO_ERR_NO_MEMORY;
    e->be = *be;
    e->now = now;
    const bfo_config *c = &e->cfg;
    const size_t stride = bfo__rails_stride(c);
    char *rails;
    BFO__UNPOISON(p, bfo_engine_mem_size(cfg) - 16); /* a block used before: its gaps */
    e->peers = (bfo_peer *)bfo__carve(&p, sizeof(bfo_peer) * (size_t)c->nranks);
    rails = (char *)bfo__carve(&p, stride * (size_t)c->nranks);
    bfo__pool_init(&e->opp, &p, c->max_ops, sizeof(bfo_op));
    bfo__pool_init(&e->slotp, &p, c->max_requests, sizeof(bfo_slot));
    bfo__pool_init(&e->uxp, &p, c->max_unexpected, sizeof(bfo_uxm));
    e->ux_arena = (uint8_t *)bfo__carve(&p, bfo__ux_bytes(c) * (size_t)c->max_unexpected);
    e->ux_arena_left = bfo__ux_bytes(c) * (size_t)c->max_unexpected;
    e->rbin_src = (bfo__rbin *)bfo__carve(&p, sizeof(bfo__rbin) * (size_t)c->match_bins);
    e->rbin_any = (bfo__rbin *)bfo__carve(&p, sizeof(bfo__rbin) * (size_t)c->match_bins);
    e->ubin_src = (bfo__ubin *)bfo__carve(&p, sizeof(bfo__ubin) * (size_t)c->match_bins);
    e->ubin_ctx = (bfo__ubin *)bfo__carve(&p, sizeof(bfo__ubin) * (size_t)c->match_bins);
    e->bin_mask = c->match_bins - 1;
    for (int i = 0; i < c->match_bins; i++) {
        e->rbin_src[i].head = e->rbin_src[i].tail = NULL;
        e->rbin_any[i].head = e->rbin_any[i].tail = NULL;
        e->ubin_src[i].head = e->ubin_src[i].tail = -1;
        e->ubin_ctx[i].head = e->ubin_ctx[i].tail = -1;
    }
    e->stage_tok = (uint64_t *)bfo__carve(&p, sizeof(uint64_t) * (size_t)c->data_stages);
    e->stage_mem = (uint8_t *)bfo__carve(&p, bfo__stage_bytes(c) * (size_t)c->data_stages);
    e->stage_size = bfo__stage_bytes(c);
    e->pad_mem = NULL;
    if (c->nrails > 1) {
        e->pad_mem = (uint8_t *)bfo__carve(&p, BFO_MEASURE_BYTES);
        e->pad_zeroed = 0; /* at its first measurement (bfo__measure): 64 KiB resident only then */
    }
    memset(e->stage_tok, 0, sizeof(uint64_t) * (size_t)c->data_stages);
    e->stage_wait_head = e->stage_wait_tail = -1;
    e->credit_window = bfo__credit_window(c);
    e->over_window = 0;
    e->msg_max = c->eager_limit > c->frag_size ? c->eager_limit : c->frag_size;
    e->credit_quarter = e->credit_window / 4 ? e->credit_window / 4 : 1;
    e->reach_bytes = (c->nranks + 7) / 8;
    if (c->relay) {
        e->relay_size = bfo__relay_slot_bytes(c);
        e->relay_mem = (uint8_t *)bfo__carve(&p, e->relay_size * (size_t)c->relay_slots);
        e->relay_used = (uint8_t *)bfo__carve(&p, (size_t)c->relay_slots);
        e->reach_mine = (uint8_t *)bfo__carve(&p, (size_t)e->reach_bytes);
        e->reach_of = (uint8_t *)bfo__carve(&p, (size_t)e->reach_bytes * (size_t)c->nranks);
        e->reach_gen = (uint64_t *)bfo__carve(&p, sizeof(uint64_t) * (size_t)c->nranks);
        memset(e->relay_used, 0, (size_t)c->relay_slots);
        memset(e->reach_mine, 0, (size_t)e->reach_bytes);
        memset(e->reach_of, 0, (size_t)e->reach_bytes * (size_t)c->nranks);
        memset(e->reach_gen, 0, sizeof(uint64_t) * (size_t)c->nranks);
        e->relay_window = c->nranks > 2 ? c->relay_slots / (c->nranks - 1) : c->relay_slots;
        if (e->relay_window < 1)
            e->relay_window = 1;
    }

    for (int i = 0; i < c->nranks; i++) {
        bfo_peer *pe = &e->peers[i];
        memset(pe, 0, sizeof *pe);
        pe->rail = (bfo_rail_link *)(void *)(rails + stride * (size_t)i);
        memset(pe->rail, 0, sizeof(bfo_rail_link) * (size_t)c->nrails);
        BFO__POISON((char *)(pe->rail + c->nrails), stride - sizeof(bfo_rail_link) * (size_t)c->nrails);
        pe->recv_seq = 1;
        pe->pend_head = pe->pend_tail = -1;
        pe->ooo_head = pe->ooo_tail = -1;
        pe->down_since = 0; /* never needed: no grace runs (bfo__peer_need starts it) */
        pe->work_at = 0;
        pe->awaited = 0;
        pe->quiet = i != c->rank; /* no work yet: no heartbeat (bfo_engine_detect.h, >>work) */
        bfo__credit_init(e, pe);
        bfo__relay_init(pe);
        bfo_peer_init(&pe->fsm);
        bfo__peer_step(e, i, i == c->rank ? BFO_PEER_EV_SELF_CHOSEN : BFO_PEER_EV_PEER_CHOSEN);
        for (int r = 0; r < c->nrails; r++) {
            bfo_rail_init(&pe->rail[r].fsm);
            pe->rail[r].backoff = c->backoff_min_ns;
            pe->rail[r].caps = be->rail_caps ? be->rail_caps(be->ctx, r) : 0;
            pe->rail[r].bw = be->rail_bandwidth ? be->rail_bandwidth(be->ctx, r) : 0;
            if (!pe->rail[r].bw)
                pe->rail[r].bw = 1;
            bfo__rate_init(&pe->rail[r]);
            bfo__detect_init(&pe->rail[r]);
        }
    }
    e->op_free = -1; /* set up as they are needed (bfo__op_more) */
    e->fail_head = e->fail_tail = -1;
    e->gate_kick = -1;
    e->self_head = e->self_tail = -1;
    e->deferred = 0;
    e->slot_free = e->uxm_free = -1;
    bfo__slots_free_range(e, 0, c->max_requests);
    /* unexpected entries: set up as they are needed (bfo__uxm_more) */
    e->ux_head = e->ux_tail = -1;
    for (int k = 0; k < BFO__SINKS; k++)
        e->sink[k].complete = 1; /* free */
    /* connections on first use (spec/rail.rl): every rail DORMANT, none
     * asked for, unless the embedder wants them all now */
    for (int i = 0; i < c->nranks && c->connect_at_init; i++)
        bfo__peer_need_rest(e, i);
    return BFO_OK;
}

/* The peer whose rail obj is (a rail machine's bfo_step.obj), and in
 * *rail which of its rails; -1 when obj is no rail of this engine's.  A
 * tracer's way from a step to its peer: the rails are not inside
 * e->peers[] (bfo__rails_stride). */
static inline int bfo__rail_at(const bfo_engine *e, const void *obj, int *rail)
{
    const size_t stride = bfo__rails_stride(&e->cfg);
    const char *base = e->peers ? (const char *)e->peers[0].rail : NULL;
    size_t off, in;
    if (!base || (const char *)obj < base || (const char *)obj >= base + stride * (size_t)e->cfg.nranks)
        return -1;
    off = (size_t)((const char *)obj - base);
    in = off % stride;
    if (in % sizeof(bfo_rail_link) || in / sizeof(bfo_rail_link) >= (size_t)e->cfg.nrails)
        return -1;
    if (rail)
        *rail = (int)(in / sizeof(bfo_rail_link));
    return (int)(off / stride);
}

/* bfo_engine_init(e, cfg, be, mem, mem_len, now): bfo_engine_init_abi with
 * the layout of the caller's translation unit.  Returns BFO_OK,
 * BFO_ERR_INVALID, BFO_ERR_NO_MEMORY, or BFO_ERR_ABI (only when a library
 * in between passes another unit's layout). */
#define bfo_engine_init(e, cfg, be, mem, mem_len, now) \
    bfo_engine_init_abi((e), (cfg), (be), (mem), (mem_len), (now), BFO_ABI_HERE)

#ifdef __cplusplus
}
#endif
#endif /* BFO_ENGINE_INIT_H */
