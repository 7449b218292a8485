// SPDX-License-Identifier: BSD-3-Clause
/* bfo_verbs_cache.h - the verbs transport's registration cache: which
 * region reg_mem hands out again, which ones a released range drops, and
 * when the transport deregisters; no libibverbs (the transport keeps the
 * memory regions, index for index), so that the rules are tested
 * everywhere (tests/test_reg_cache.c).
 *
 * Part of the verbs backend (bfo_verbs.h).
 *
 * THE RULES
 *   A hit only for the same buffer, length and access (bfo_mem_access):
 *   never a larger earlier region, whose keys would let a peer reach memory
 *   the request does not own (or for an access it does not need).  A region
 *   stays registered after its last use (keep) until its place is needed
 *   (the least recently used idle one goes), or until a release drops it.
 *   bfo_vc_released(range): every region that overlaps the range, rounded
 *   out to whole pages (memory goes back to the system a page at a time),
 *   is marked invalid: never handed out again; an idle one is collected at
 *   the transport's next safe point, one in use when its last use ends.
 *
 * THREADS.  The owner (the thread in reg_mem, dereg_mem, progress: bfo_net's
 *   caller serialises them) alone changes a slot's range and state, and
 *   registers and deregisters.  bfo_vc_released comes from memory hooks,
 *   from inside munmap/free/brk/madvise in any thread, possibly the owner
 *   itself, possibly from inside the owner's ibv_dereg_mr: it only marks,
 *   under mu, which nobody holds across anything that may allocate or
 *   unmap (every critical section here is a scan of the slots), so it
 *   cannot deadlock on itself.  A slot being registered (REG) or dropped
 *   (DROP) is the owner's own: a release marks a REG slot too (it is then
 *   used by its request, never cached), and leaves DROP slots alone.
 *
 * STATES: FREE -> REG (bfo_vc_reserve; the caller registers) -> LIVE
 *   (bfo_vc_publish) or FREE (bfo_vc_abort); LIVE -> DROP (bfo_vc_put at
 *   the last use, without keep or when invalid; bfo_vc_collect; an evicted
 *   one inside bfo_vc_reserve) -> FREE (bfo_vc_free, the caller
 *   deregistered).
 */
#ifndef BFO_VERBS_CACHE_H
#define BFO_VERBS_CACHE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#ifdef __cplusplus
extern "C" {
#endif

enum bfo_vc_state { BFO_VC_FREE = 0, BFO_VC_REG, BFO_VC_LIVE, BFO_VC_DROP };

typedef struct bfo_vc_ent {
    uintptr_t addr;
    size_t len;
    unsigned access; /* enum bfo_mem_access */
    int refs;        /* requests holding it */
    int state;       /* enum bfo_vc_state */
    int invalid;     /* its memory was released: never handed out again */
    uint64_t last_use;
} bfo_vc_ent;

typedef struct bfo_vc {
    bfo_vc_ent *e;
    int n;
    int keep; /* 1: a region stays registered after its last use (the cache) */
    uintptr_t page;
    uint64_t clock;
    pthread_mutex_t mu;
    atomic_int sweep; /* a release marked an idle region: collect it */
    uint64_t hits, misses, released; /* released: regions a release marked */
} bfo_vc;

/* ents: n slots, zeroed by the caller. */
static inline void bfo_vc_init(bfo_vc *vc, bfo_vc_ent *ents, int n, int keep)
{
    long pg = sysconf(_SC_PAGESIZE);
    vc->e = ents;
    vc->n = n;
    vc->keep = keep;
    vc->page = pg > 0 ? (uintptr_t)pg : 4096u;
    vc->clock = 0;
    vc->hits = vc->misses = vc->released = 0;
    atomic_init(&vc->sweep, 0);
    pthread_mutex_init(&vc->mu, NULL);
}

static inline void bfo_vc_destroy(bfo_vc *vc)
{
    pthread_mutex_destroy(&vc->mu);
}

/* The cached region for exactly this (a hit: one more use), or -1. */
static inline int bfo_vc_get(bfo_vc *vc, const void *buf, size_t len, unsigned access)
{
    const uintptr_t a = (uintptr_t)buf;
    int hit = -1;
    pthread_mutex_lock(&vc->mu);
    for (int i = 0; i < vc->n && hit < 0; i++) {
        bfo_vc_ent *g = &vc->e[i];
        if (g->state == BFO_VC_LIVE && !g->invalid && g->addr == a && g->len == len &&
            g->access == access) {
            g->refs++;
            g->last_use = ++vc->clock;
            hit = i;
        }
    }
    if (hit >= 0)
        vc->hits++;
    else
        vc->misses++;
    pthread_mutex_unlock(&vc->mu);
    return hit;
}

/* A slot for a new registration of buf[0..len) (state REG), or -1 when
 * every slot is in use.  *evict: 1 when the slot held an idle region
 * (the least recently used), which the caller deregisters first. */
static inline int bfo_vc_reserve(bfo_vc *vc, const void *buf, size_t len, unsigned access, int *evict)
{
    int pick = -1;
    *evict = 0;
    pthread_mutex_lock(&vc->mu);
    for (int i = 0; i < vc->n && pick < 0; i++)
        if (vc->e[i].state == BFO_VC_FREE)
            pick = i;
    if (pick < 0) {
        for (int i = 0; i < vc->n; i++) {
            const bfo_vc_ent *g = &vc->e[i];
            if (g->state == BFO_VC_LIVE && g->refs == 0 &&
                (pick < 0 || g->invalid > vc->e[pick].invalid ||
                 (g->invalid == vc->e[pick].invalid && g->last_use < vc->e[pick].last_use)))
                pick = i; /* an invalid one first, then the least recently used */
        }
        if (pick >= 0)
            *evict = 1;
    }
    if (pick >= 0) {
        bfo_vc_ent *g = &vc->e[pick];
        g->state = BFO_VC_REG;
        g->addr = (uintptr_t)buf;
        g->len = len;
        g->access = access;
        g->refs = 0;
        g->invalid = 0;
    }
    pthread_mutex_unlock(&vc->mu);
    return pick;
}

/* The registration of slot i is made: in use once. */
static inline void bfo_vc_publish(bfo_vc *vc, int i)
{
    pthread_mutex_lock(&vc->mu);
    vc->e[i].state = BFO_VC_LIVE;
    vc->e[i].refs = 1;
    vc->e[i].last_use = ++vc->clock;
    pthread_mutex_unlock(&vc->mu);
}

/* The registration of slot i failed, or was dropped (the caller
 * deregistered it): the slot is free. */
static inline void bfo_vc_free(bfo_vc *vc, int i)
{
    pthread_mutex_lock(&vc->mu);
    vc->e[i].state = BFO_VC_FREE;
    vc->e[i].refs = 0;
    vc->e[i].invalid = 0;
    pthread_mutex_unlock(&vc->mu);
}
#define bfo_vc_abort bfo_vc_free

/* One use of slot i ends.  1: it goes now (state DROP; the caller
 * deregisters, then bfo_vc_free); 0: it stays (in use, or cached); -1:
 * slot i is not in use (a handle given back twice). */
static inline int bfo_vc_put(bfo_vc *vc, int i)
{
    int rc = -1;
    pthread_mutex_lock(&vc->mu);
    if (i >= 0 && i < vc->n && vc->e[i].state == BFO_VC_LIVE && vc->e[i].refs > 0) {
        rc = 0;
        if (--vc->e[i].refs == 0 && (!vc->keep || vc->e[i].invalid)) {
            vc->e[i].state = BFO_VC_DROP;
            rc = 1;
        }
    }
    pthread_mutex_unlock(&vc->mu);
    return rc;
}

/* At a safe point: an idle region a release marked (state DROP: the
 * caller deregisters, then bfo_vc_free), or -1.  One atomic load when
 * there is none. */
static inline int bfo_vc_collect(bfo_vc *vc)
{
    int pick = -1;
    if (!atomic_load_explicit(&vc->sweep, memory_order_acquire))
        return -1;
    pthread_mutex_lock(&vc->mu);
    for (int i = 0; i < vc->n && pick < 0; i++)
        if (vc->e[i].state == BFO_VC_LIVE && vc->e[i].invalid && vc->e[i].refs == 0)
            pick = i;
    if (pick >= 0)
        vc->e[pick].state = BFO_VC_DROP;
    else
        atomic_store_explicit(&vc->sweep, 0, memory_order_relaxed);
    pthread_mutex_unlock(&vc->mu);
    return pick;
}

/* buf[0..len) went back to the system (any thread, from a memory hook):
 * marks every region it overlaps, page by page; nothing else. */
static inline void bfo_vc_released(bfo_vc *vc, const void *buf, size_t len)
{
    const uintptr_t lo = (uintptr_t)buf & ~(vc->page - 1);
    uintptr_t hi = (uintptr_t)buf + len;
    if (!len)
        return;
    hi = hi + (vc->page - 1) < hi ? UINTPTR_MAX : (hi + (vc->page - 1)) & ~(vc->page - 1);
    pthread_mutex_lock(&vc->mu);
    for (int i = 0; i < vc->n; i++) {
        bfo_vc_ent *g = &vc->e[i];
        if ((g->state != BFO_VC_LIVE && g->state != BFO_VC_REG) || g->invalid || g->addr >= hi ||
            lo >= g->addr + g->len)
            continue;
        g->invalid = 1;
        vc->released++;
        if (g->state == BFO_VC_LIVE && g->refs == 0)
            atomic_store_explicit(&vc->sweep, 1, memory_order_release);
    }
    pthread_mutex_unlock(&vc->mu);
}

/* The region in use that holds p[0..len) (where an RDMA from or into it
 * goes through; a valid one before one a release marked), or -1.  Idle
 * cached regions are never used: every RDMA is of a request holding its
 * own. */
static inline int bfo_vc_find(bfo_vc *vc, const void *p, size_t len)
{
    const uintptr_t a = (uintptr_t)p;
    int found = -1;
    pthread_mutex_lock(&vc->mu);
    for (int i = 0; i < vc->n; i++) {
        const bfo_vc_ent *g = &vc->e[i];
        if (g->state == BFO_VC_LIVE && g->refs > 0 && a >= g->addr && len <= g->len &&
            a - g->addr <= g->len - len && (found < 0 || (vc->e[found].invalid && !g->invalid)))
            found = i;
    }
    pthread_mutex_unlock(&vc->mu);
    return found;
}

#ifdef __cplusplus
}
#endif
#endif /* BFO_VERBS_CACHE_H */
