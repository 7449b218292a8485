// SPDX-License-Identifier: BSD-3-Clause
/* test_reg_cache.c - registrations that cannot go stale.
 *
 * 1. Over the simulator's RDMA with its model of a registration cache
 *    (sim/bfo_simnet.h: a registration reaches the pages it pinned, kept
 *    after the buffer is unmapped): rendezvous messages by GET and by PUT
 *    between buffers that are unmapped (munmap) and mapped again at the
 *    same address (MAP_FIXED) between transfers, every byte checked.  With
 *    the release notification (sn_mem_released, bfo_net_mem_released's
 *    model) every byte arrives; the negative controls run the same without
 *    it, with the verbs rule (exact hits) and with a2b9f8d's (a hit for any
 *    region that holds the range), and require the stale data to be seen,
 *    so the model cannot stop modelling staleness unnoticed.
 * 2. The verbs transport's cache rules (backends/verbs/bfo_verbs_cache.h),
 *    without libibverbs: a hit only for the same range and access, a
 *    released range drops what it overlaps, a region in use when released
 *    is never handed out again and goes at its last use.
 *
 * Pinning is modelled by mremap(old_size 0): a second mapping of the same
 * shared pages, which outlives the buffer's own mapping, as an adapter's
 * pin does; so the buffers are MAP_SHARED anonymous mappings. */
#define _GNU_SOURCE
#include "bfo_test.h"

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bfo_simnet.h"
#include "bfo_verbs_cache.h"

#define RC_LEN (192 * 1024) /* one message: well above eager_limit */
#define RC_ROUNDS 4

static size_t rc_page(void) { return (size_t)sysconf(_SC_PAGESIZE); }

/* sn->pin: the pages behind buf, mapped a second time. */
static void *rc_pin(void *ctx, void *buf, size_t len)
{
    const size_t pg = rc_page(), off = (uintptr_t)buf & (pg - 1);
    const size_t total = (off + len + pg - 1) & ~(pg - 1);
    void *alias = mremap((char *)buf - off, 0, total, MREMAP_MAYMOVE);
    (void)ctx;
    return alias == MAP_FAILED ? NULL : (char *)alias + off;
}

static void rc_unpin(void *ctx, void *pages, size_t len)
{
    const size_t pg = rc_page(), off = (uintptr_t)pages & (pg - 1);
    (void)ctx;
    munmap((char *)pages - off, (off + len + pg - 1) & ~(pg - 1));
}

static uint8_t *rc_map(void *at)
{
    void *p = mmap(at, RC_LEN, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS | (at ? MAP_FIXED : 0), -1, 0);
    assert_true(p != MAP_FAILED);
    if (at)
        assert_ptr_equal(p, at);
    return (uint8_t *)p;
}

typedef struct rc_world {
    simnet sn;
    bfo_engine e[2];
    void *mem[2];
    uint8_t *sbuf, *rbuf;
} rc_world;

static void rc_open(rc_world *w, int rdma, int cache)
{
    memset(w, 0, sizeof *w);
    sn_init(&w->sn, 2, 1, 7);
    w->sn.reg_cache = cache;
    w->sn.pin = rc_pin;
    w->sn.unpin = rc_unpin;
    for (int i = 0; i < 2; i++) {
        bfo_config c;
        size_t need;
        memset(&c, 0, sizeof c);
        c.rank = i;
        c.nranks = 2;
        c.nrails = 1;
        c.max_requests = 16;
        c.max_unexpected = 16;
        c.rdma = rdma;
        c.rdma_min = 1;
        need = bfo_engine_mem_size(&c);
        w->mem[i] = malloc(need);
        w->sn.eng[i] = &w->e[i];
        assert_non_null(w->mem[i]);
        assert_int_equal(bfo_engine_init(&w->e[i], &c, &w->sn.be[i], w->mem[i], need, w->sn.now), BFO_OK);
    }
    w->sbuf = rc_map(NULL);
    w->rbuf = rc_map(NULL);
}

static void rc_close(rc_world *w)
{
    sn_free(&w->sn);
    munmap(w->sbuf, RC_LEN);
    munmap(w->rbuf, RC_LEN);
    free(w->mem[0]);
    free(w->mem[1]);
}

typedef struct rc_pair {
    bfo_request s, r;
} rc_pair;

static int rc_done(void *arg)
{
    const rc_pair *p = (const rc_pair *)arg;
    return bfo_test(&p->s) && bfo_test(&p->r);
}

static uint8_t rc_byte(int round, size_t i) { return (uint8_t)(round * 131 + i * 7 + (i >> 9)); }

/* One message of len bytes from rank 0's sbuf to rank 1's rbuf: the bytes
 * of rbuf that are not what was sent. */
static size_t rc_transfer(rc_world *w, int round, size_t len)
{
    rc_pair p;
    size_t bad = 0;
    for (size_t i = 0; i < len; i++)
        w->sbuf[i] = rc_byte(round, i);
    memset(w->rbuf, 0xEE, RC_LEN);
    memset(&p, 0, sizeof p);
    assert_int_equal(bfo_irecv(&w->e[1], &p.r, w->rbuf, len, 0, 1, round, w->sn.now), BFO_OK);
    assert_int_equal(bfo_isend(&w->e[0], &p.s, w->sbuf, len, 1, 1, round, w->sn.now), BFO_OK);
    assert_true(sn_run(&w->sn, rc_done, &p, 10000000000ull));
    assert_int_equal(p.s.status, BFO_OK);
    assert_int_equal(p.r.status, BFO_OK);
    for (size_t i = 0; i < len; i++)
        bad += w->rbuf[i] != rc_byte(round, i);
    return bad;
}

/* Both buffers go back to the system and new memory is mapped at the same
 * addresses, as free() and malloc() do with large blocks; notify: the
 * release hook runs first (sn_mem_released), as Open MPI's does. */
static void rc_remap(rc_world *w, int notify)
{
    uint8_t *b[2] = { w->sbuf, w->rbuf };
    for (int k = 0; k < 2; k++) {
        if (notify)
            sn_mem_released(&w->sn, b[k], RC_LEN);
        assert_int_equal(munmap(b[k], RC_LEN), 0);
        rc_map(b[k]);
    }
}

typedef struct rc_result {
    size_t bad;        /* bytes wrong, every round */
    uint64_t rdma_ops; /* GETs or PUTs chosen (else nothing could be stale) */
} rc_result;

static rc_result rc_rounds(int rdma, int cache, int notify)
{
    rc_world w;
    rc_result res = { 0, 0 };
    rc_open(&w, rdma, cache);
    for (int round = 0; round < RC_ROUNDS; round++) {
        res.bad += rc_transfer(&w, round, RC_LEN);
        rc_remap(&w, notify);
    }
    res.rdma_ops = rdma == BFO_RDMA_GET ? w.e[1].stats.gets : w.e[1].stats.puts;
    assert_int_equal(w.sn.rdma_violations, 0);
    assert_int_equal(w.sn.regs_live, 0);
    if (notify)
        assert_int_equal(w.sn.reg_hits, 0); /* every region dropped before its memory went */
    else if (cache)
        assert_true(w.sn.reg_hits > 0);
    rc_close(&w);
    return res;
}

/* With the release notification, the cache on: every byte of every round,
 * by GET and by PUT, though each round's buffers are new pages at the old
 * addresses. */
static void test_sim_cache_with_release_notification_every_byte_arrives(void **state)
{
    (void)state;
    for (int put = 0; put < 2; put++) {
        const int rdma = put ? BFO_RDMA_PUT : BFO_RDMA_GET;
        rc_result r = rc_rounds(rdma, SN_CACHE_EXACT, 1);
        assert_int_equal(r.rdma_ops, RC_ROUNDS);
        assert_int_equal(r.bad, 0);
        r = rc_rounds(rdma, SN_CACHE_OFF, 0); /* no cache: nothing to notify */
        assert_int_equal(r.rdma_ops, RC_ROUNDS);
        assert_int_equal(r.bad, 0);
    }
}

/* Negative controls: the same rounds without the notification, the cache
 * as the verbs transport keeps it (exact hits) and as a2b9f8d kept it (a
 * hit for any region that holds the range, every access): from the second
 * round on the RDMA goes through the first round's pages, and the
 * receiver's new buffer does not get the message.  If this passes no
 * more, the model no longer shows what the notification prevents. */
static void test_sim_cache_without_release_notification_rdma_reaches_the_old_pages(void **state)
{
    (void)state;
    for (int put = 0; put < 2; put++)
        for (int cache = SN_CACHE_EXACT; cache <= SN_CACHE_CONTAIN; cache++) {
            const rc_result r = rc_rounds(put ? BFO_RDMA_PUT : BFO_RDMA_GET, cache, 0);
            print_message("%s, %s cache, no notification: %zu of %d bytes stale\n", put ? "PUT" : "GET",
                          cache == SN_CACHE_EXACT ? "exact" : "containment (a2b9f8d)", r.bad,
                          RC_ROUNDS * RC_LEN);
            assert_int_equal(r.rdma_ops, RC_ROUNDS);
            /* rounds 1.. are stale: at least their RDMA part (all but the
             * first bytes, which a PUT's RNDV carries by copy) */
            assert_true(r.bad >= (size_t)(RC_ROUNDS - 1) * (RC_LEN / 2));
        }
}

/* The cache hands out no larger region: after a whole buffer's message, a
 * message from its first half registers anew under the verbs rule (its own
 * keys), while a2b9f8d's rule gave it the whole buffer's. */
static void test_sim_cache_hit_only_for_the_same_range(void **state)
{
    (void)state;
    for (int cache = SN_CACHE_EXACT; cache <= SN_CACHE_CONTAIN; cache++) {
        rc_world w;
        rc_open(&w, BFO_RDMA_GET, cache);
        assert_int_equal(rc_transfer(&w, 0, RC_LEN), 0);
        assert_int_equal(rc_transfer(&w, 1, RC_LEN / 2), 0);
        if (cache == SN_CACHE_EXACT) {
            assert_int_equal(w.sn.reg_hits, 0);
            assert_int_equal(w.sn.reg_misses, 4);
        } else {
            assert_int_equal(w.sn.reg_hits, 2);
        }
        assert_int_equal(rc_transfer(&w, 2, RC_LEN / 2), 0); /* the same range again: a hit */
        assert_true(w.sn.reg_hits >= 2);
        assert_int_equal(w.sn.rdma_violations, 0);
        rc_close(&w);
    }
}

/* A buffer released while a request holds its registration (the program's
 * error): that request keeps it, nobody gets it again, and it goes when
 * the request gives it back; a peer's access is refused from then on. */
static void test_sim_region_released_in_use_is_never_handed_out_again(void **state)
{
    static uint8_t mem[4096];
    uint32_t k1[1] = { 0 }, k2[1] = { 0 };
    uint64_t ra = 0, h1 = 0, h2 = 0;
    simnet sn;
    (void)state;
    sn_init(&sn, 2, 1, 1);
    sn.reg_cache = SN_CACHE_EXACT;
    assert_int_equal(sn_reg_mem(&sn.ep[1], mem, sizeof mem, BFO_MEM_REMOTE_READ, &ra, k1, &h1), 0);
    sn_mem_released(&sn, mem + 100, 1);
    assert_int_equal(sn_rdma_check(&sn, 1, 0, ra, k1[0], 16), 1); /* still its request's */
    assert_int_equal(sn_reg_mem(&sn.ep[1], mem, sizeof mem, BFO_MEM_REMOTE_READ, &ra, k2, &h2), 0);
    assert_int_not_equal(h1, h2); /* not the released one */
    assert_int_equal(sn.reg_hits, 0);
    sn_dereg_mem(&sn.ep[1], h1);
    assert_int_equal(sn_rdma_check(&sn, 1, 0, ra, k1[0], 16), 0); /* gone at its last use */
    sn_dereg_mem(&sn.ep[1], h2);
    assert_int_equal(sn_rdma_check(&sn, 1, 0, ra, k2[0], 16), 1); /* cached */
    assert_int_equal(sn.regs_live, 0);
    assert_int_equal(sn.rdma_violations, 0);
    sn_free(&sn);
}

/* The role: a peer may write only a PUT's target, read only a GET's source. */
static void test_sim_rdma_outside_the_registrations_role_is_a_violation(void **state)
{
    static uint8_t mem[4096];
    uint32_t kr[1] = { 0 }, kw[1] = { 0 };
    uint64_t ra = 0, hr = 0, hw = 0;
    simnet sn;
    (void)state;
    sn_init(&sn, 2, 1, 1);
    assert_int_equal(sn_reg_mem(&sn.ep[1], mem, sizeof mem, BFO_MEM_REMOTE_READ, &ra, kr, &hr), 0);
    assert_int_equal(sn_reg_mem(&sn.ep[1], mem, sizeof mem, BFO_MEM_REMOTE_WRITE, &ra, kw, &hw), 0);
    assert_non_null(sn_rdma_access(&sn, 1, SN_READ, 0, ra, kr[0], 16));
    assert_non_null(sn_rdma_access(&sn, 1, SN_WRITE, 0, ra, kw[0], 16));
    assert_int_equal(sn.rdma_violations, 0);
    assert_null(sn_rdma_access(&sn, 1, SN_WRITE, 0, ra, kr[0], 16)); /* write a read-only region */
    assert_int_equal(sn.rdma_violations, 1);
    assert_null(sn_rdma_access(&sn, 1, SN_READ, 0, ra, kw[0], 16)); /* read a write-only one */
    assert_int_equal(sn.rdma_violations, 2);
    sn_dereg_mem(&sn.ep[1], hr);
    sn_dereg_mem(&sn.ep[1], hw);
    sn_free(&sn);
}

/* ------------------------------------------ the verbs cache's own rules */

#define VC_N 4
static bfo_vc_ent vc_ents[VC_N];

static void vc_open(bfo_vc *vc, int keep)
{
    memset(vc_ents, 0, sizeof vc_ents);
    bfo_vc_init(vc, vc_ents, VC_N, keep);
}

/* A new region, in use once. */
static int vc_add(bfo_vc *vc, const void *buf, size_t len, unsigned access)
{
    int evict = 0, i = bfo_vc_reserve(vc, buf, len, access, &evict);
    assert_true(i >= 0);
    bfo_vc_publish(vc, i);
    return i;
}

static void test_verbs_cache_hit_only_for_same_range_and_access(void **state)
{
    static char buf[65536];
    bfo_vc vc;
    int i;
    (void)state;
    vc_open(&vc, 1);
    i = vc_add(&vc, buf, sizeof buf, BFO_MEM_REMOTE_READ);
    assert_int_equal(bfo_vc_put(&vc, i), 0); /* cached */
    assert_int_equal(bfo_vc_get(&vc, buf, sizeof buf / 2, BFO_MEM_REMOTE_READ), -1); /* no larger region */
    assert_int_equal(bfo_vc_get(&vc, buf + 4096, 4096, BFO_MEM_REMOTE_READ), -1);
    assert_int_equal(bfo_vc_get(&vc, buf, sizeof buf, BFO_MEM_REMOTE_WRITE), -1); /* another role */
    assert_int_equal(bfo_vc_get(&vc, buf, sizeof buf,
                                BFO_MEM_REMOTE_READ | BFO_MEM_REMOTE_WRITE), -1); /* nor more of it */
    assert_int_equal(bfo_vc_get(&vc, buf, sizeof buf, BFO_MEM_REMOTE_READ), i);
    assert_int_equal(bfo_vc_get(&vc, buf, sizeof buf, BFO_MEM_REMOTE_READ), i); /* two holders */
    assert_int_equal(bfo_vc_put(&vc, i), 0);
    assert_int_equal(bfo_vc_put(&vc, i), 0);
    assert_int_equal(bfo_vc_put(&vc, i), -1); /* given back once too often */
    assert_int_equal(bfo_vc_find(&vc, buf, 16), -1); /* idle: no RDMA goes through it */
    bfo_vc_destroy(&vc);
}

static void test_verbs_cache_release_drops_what_it_overlaps_page_by_page(void **state)
{
    static char buf[4 * 65536] __attribute__((aligned(65536)));
    const size_t pg = rc_page();
    bfo_vc vc;
    int a, b, c;
    (void)state;
    vc_open(&vc, 1);
    a = vc_add(&vc, buf, 100, BFO_MEM_REMOTE_READ);               /* page 0 */
    b = vc_add(&vc, buf + 4 * pg, 8 * pg, BFO_MEM_REMOTE_WRITE);  /* pages 4..11 */
    c = vc_add(&vc, buf + 16 * pg, pg, BFO_MEM_LOCAL_WRITE);      /* page 16 */
    for (int i = 0; i < 3; i++)
        assert_int_equal(bfo_vc_put(&vc, i == 0 ? a : i == 1 ? b : c), 0);
    assert_int_equal(bfo_vc_collect(&vc), -1); /* nothing released */
    bfo_vc_released(&vc, buf + 200, 10);         /* page 0, not a's bytes: its page goes */
    bfo_vc_released(&vc, buf + 11 * pg + 5, 1);  /* the last page of b */
    bfo_vc_released(&vc, buf + 13 * pg, 3 * pg); /* pages 13..15: nothing */
    assert_int_equal(vc.released, 2);
    int got[2];
    got[0] = bfo_vc_collect(&vc);
    bfo_vc_free(&vc, got[0]);
    got[1] = bfo_vc_collect(&vc);
    bfo_vc_free(&vc, got[1]);
    assert_int_equal(bfo_vc_collect(&vc), -1);
    assert_true((got[0] == a && got[1] == b) || (got[0] == b && got[1] == a));
    assert_int_equal(bfo_vc_get(&vc, buf, 100, BFO_MEM_REMOTE_READ), -1);
    assert_int_equal(bfo_vc_get(&vc, buf + 4 * pg, 8 * pg, BFO_MEM_REMOTE_WRITE), -1);
    assert_int_equal(bfo_vc_get(&vc, buf + 16 * pg, pg, BFO_MEM_LOCAL_WRITE), c);
    bfo_vc_destroy(&vc);
}

static void test_verbs_cache_released_in_use_goes_at_its_last_use(void **state)
{
    static char buf[8192];
    bfo_vc vc;
    int i, j, evict;
    (void)state;
    vc_open(&vc, 1);
    i = vc_add(&vc, buf, sizeof buf, BFO_MEM_REMOTE_READ);
    bfo_vc_released(&vc, buf, sizeof buf);
    assert_int_equal(bfo_vc_collect(&vc), -1);      /* in use: not dropped under its request */
    assert_int_equal(bfo_vc_find(&vc, buf, 8), i);  /* its RDMA still finds it */
    assert_int_equal(bfo_vc_get(&vc, buf, sizeof buf, BFO_MEM_REMOTE_READ), -1); /* never again */
    j = vc_add(&vc, buf, sizeof buf, BFO_MEM_REMOTE_READ); /* the new memory's own */
    assert_int_not_equal(i, j);
    assert_int_equal(bfo_vc_find(&vc, buf, 8), j);  /* the valid one first */
    assert_int_equal(bfo_vc_put(&vc, i), 1);        /* its last use: the caller drops it */
    bfo_vc_free(&vc, i);
    assert_int_equal(bfo_vc_put(&vc, j), 0);
    /* released while being registered: used by its request, never cached */
    i = bfo_vc_reserve(&vc, buf + 4096, 64, BFO_MEM_LOCAL_WRITE, &evict);
    bfo_vc_released(&vc, buf + 4096, 1);
    bfo_vc_publish(&vc, i);
    assert_int_equal(bfo_vc_get(&vc, buf + 4096, 64, BFO_MEM_LOCAL_WRITE), -1);
    assert_int_equal(bfo_vc_put(&vc, i), 1);
    bfo_vc_free(&vc, i);
    bfo_vc_destroy(&vc);
}

static void test_verbs_cache_off_and_eviction(void **state)
{
    static char buf[VC_N + 1][4096];
    bfo_vc vc;
    int evict, i;
    (void)state;
    vc_open(&vc, 0); /* reg_cache -1: nothing kept */
    i = vc_add(&vc, buf[0], 64, 0);
    assert_int_equal(bfo_vc_put(&vc, i), 1);
    bfo_vc_free(&vc, i);
    assert_int_equal(bfo_vc_get(&vc, buf[0], 64, 0), -1);
    bfo_vc_destroy(&vc);
    vc_open(&vc, 1);
    for (int k = 0; k < VC_N; k++)
        assert_int_equal(bfo_vc_put(&vc, vc_add(&vc, buf[k], 64, 0)), 0);
    assert_int_equal(bfo_vc_get(&vc, buf[0], 64, 0), 0); /* 0 used last now */
    assert_int_equal(bfo_vc_put(&vc, 0), 0);
    i = bfo_vc_reserve(&vc, buf[VC_N], 64, 0, &evict);
    assert_int_equal(i, 1); /* the least recently used idle one */
    assert_int_equal(evict, 1);
    bfo_vc_publish(&vc, i);
    for (int k = 0; k < VC_N; k++) /* all held: no slot */
        if (k != 1)
            assert_int_equal(bfo_vc_get(&vc, buf[k], 64, 0), k);
    assert_int_equal(bfo_vc_reserve(&vc, buf[1], 64, 0, &evict), -1);
    bfo_vc_destroy(&vc);
}

/* Memory hooks in another thread while the owner registers, hits, gives
 * back and collects: no deadlock, every state the owner sees is one it may
 * (a slot to register into, a put that drops or keeps), and after the last
 * release nothing is handed out. */
typedef struct vc_race {
    bfo_vc vc;
    char *buf;
    atomic_int stop;
    atomic_uint released; /* releases begun */
} vc_race;

static void *vc_hook_thread(void *arg)
{
    vc_race *t = (vc_race *)arg;
    while (!atomic_load(&t->stop)) {
        atomic_fetch_add(&t->released, 1);
        bfo_vc_released(&t->vc, t->buf, 64);
    }
    return NULL;
}

static void test_verbs_cache_releases_from_another_thread(void **state)
{
    static char buf[4096];
    static vc_race t;
    pthread_t th;
    int hits = 0;
    (void)state;
    memset(vc_ents, 0, sizeof vc_ents);
    bfo_vc_init(&t.vc, vc_ents, VC_N, 1);
    t.buf = buf;
    atomic_init(&t.stop, 0);
    atomic_init(&t.released, 0);
    assert_int_equal(pthread_create(&th, NULL, vc_hook_thread, &t), 0);
    for (int n = 0; n < 20000; n++) {
        int i, evict;
        i = bfo_vc_get(&t.vc, buf, 64, 0);
        if (i >= 0) {
            hits++;
        } else {
            i = bfo_vc_reserve(&t.vc, buf, 64, 0, &evict);
            assert_true(i >= 0);
            bfo_vc_publish(&t.vc, i);
        }
        if (bfo_vc_put(&t.vc, i) == 1)
            bfo_vc_free(&t.vc, i);
        while ((i = bfo_vc_collect(&t.vc)) >= 0)
            bfo_vc_free(&t.vc, i);
    }
    atomic_store(&t.stop, 1);
    pthread_join(th, NULL);
    /* the hook's last release came after every put: nothing valid left */
    bfo_vc_released(&t.vc, buf, 64);
    assert_int_equal(bfo_vc_get(&t.vc, buf, 64, 0), -1);
    (void)hits;
    bfo_vc_destroy(&t.vc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sim_cache_with_release_notification_every_byte_arrives),
        cmocka_unit_test(test_sim_cache_without_release_notification_rdma_reaches_the_old_pages),
        cmocka_unit_test(test_sim_cache_hit_only_for_the_same_range),
        cmocka_unit_test(test_sim_region_released_in_use_is_never_handed_out_again),
        cmocka_unit_test(test_sim_rdma_outside_the_registrations_role_is_a_violation),
        cmocka_unit_test(test_verbs_cache_hit_only_for_same_range_and_access),
        cmocka_unit_test(test_verbs_cache_release_drops_what_it_overlaps_page_by_page),
        cmocka_unit_test(test_verbs_cache_released_in_use_goes_at_its_last_use),
        cmocka_unit_test(test_verbs_cache_off_and_eviction),
        cmocka_unit_test(test_verbs_cache_releases_from_another_thread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
