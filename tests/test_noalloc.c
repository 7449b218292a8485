// SPDX-License-Identifier: BSD-3-Clause
/* test_noalloc.c - the engine allocates nothing after init.
 *
 * malloc, calloc, realloc and free are interposed (glibc's __libc_* do the
 * work) and counted while engine code runs.  A long run of mixed traffic
 * (eager and rendezvous, both directions) goes over the null transport
 * with faults injected: frames delivered but reported failed, frames lost,
 * and a rail's connection failing every 250 messages, so resends, restart
 * dances, map-outs, reconnects, probes and re-admissions run too.  Any
 * allocation there fails the test.  Skipped under the sanitizers, which own
 * malloc.
 */
#include "bfo_test.h"

#include "bfo_engine.h"
#include "bfo_nullnet.h"

#if defined(__SANITIZE_ADDRESS__)
#define NOALLOC_SKIP 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NOALLOC_SKIP 1
#endif
#endif

static volatile int counting; /* volatile: GCC assumes malloc touches no globals */
static volatile unsigned long allocs;

#ifndef NOALLOC_SKIP
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);

void *malloc(size_t n)
{
    allocs += counting;
    return __libc_malloc(n);
}
void *calloc(size_t a, size_t b)
{
    allocs += counting;
    return __libc_calloc(a, b);
}
void *realloc(void *p, size_t n)
{
    allocs += counting;
    return __libc_realloc(p, n);
}
void free(void *p)
{
    allocs += counting && p;
    __libc_free(p);
}
#endif

#define NMSG 5000
#define MAXSZ (300 * 1024)

static uint8_t pat(int m, size_t i) { return (uint8_t)(m * 13 + i * 3 + (i >> 9)); }

static void test_no_allocation_after_init(void **state)
{
    static bfo_engine e[2];
    static nullnet nn;
    static bfo_request sreq, rreq;
    void *mem[2], *ring;
    uint8_t *sbuf, *rbuf;
    size_t sizes[] = { 8, 100, 4096, 5000, 70000, MAXSZ, 0, 1 << 16 };
    unsigned long delivered = 0;
    (void)state;
#ifdef NOALLOC_SKIP
    skip(); /* before allocating anything: skip() does not return */
#endif
    sbuf = (uint8_t *)malloc(MAXSZ);
    rbuf = (uint8_t *)malloc(MAXSZ);
    ring = malloc(nn_mem_size(256, 65536 + 128));
    nn_init(&nn, 2, 256, 65536 + 128, ring);
    nn.fail_every = 97;  /* every 97th operation: delivered, reported failed */
    nn.lose_every = 389; /* every 389th: lost, reported failed */
    for (int i = 0; i < 2; i++) {
        bfo_config c = nn_config(&nn, i);
        size_t need = bfo_engine_mem_size(&c);
        mem[i] = malloc(need);
        nn.eng[i] = &e[i];
        assert_int_equal(bfo_engine_init(&e[i], &c, &nn.be[i], mem[i], need, nn.now), BFO_OK);
    }

    counting = 1; /* the interposer sees a real allocation ... */
    void *volatile probe = malloc(16); /* volatile: the compiler keeps the pair */
    free(probe);
    counting = 0;
    assert_int_equal(allocs, 2);
    allocs = 0;

    counting = 1; /* ... and from here on, engine code must not allocate */
    for (int m = 0; m < NMSG; m++) {
        size_t sz = sizes[m % 8];
        int from = m & 1, to = 1 - from;
        for (size_t k = 0; k < sz; k++)
            sbuf[k] = pat(m, k);
        bfo_irecv(&e[to], &rreq, rbuf, MAXSZ, from, 0, m % 1000, nn.now);
        bfo_isend(&e[from], &sreq, sbuf, sz, to, 0, m % 1000, nn.now);
        if (m % 250 == 125)
            nn_rail_down(&nn, (m / 250) & 1); /* its frames posted: one rail, then the other */
        for (int spin = 0; !(bfo_test(&sreq) && bfo_test(&rreq)); spin++) {
            if (!nn_pump(&nn))
                nn.now += 1000000;
            bfo_engine_progress(&e[0], nn.now);
            bfo_engine_progress(&e[1], nn.now);
            if (spin > 100000)
                fail_msg("message %d never completed", m);
        }
        if (sreq.status != BFO_OK || rreq.status != BFO_OK || rreq.length != sz)
            fail_msg("message %d: %s / %s", m, bfo_errname(sreq.status), bfo_errname(rreq.status));
        for (size_t k = 0; k < sz; k++)
            if (rbuf[k] != pat(m, k))
                fail_msg("message %d: byte %zu", m, k);
        delivered++;
    }
    /* a cut that found its rail idle (small messages keep to the fastest
     * rail) is found by the heartbeats: a second of quiet */
    for (int k = 0; k < 1000; k++) {
        if (!nn_pump(&nn))
            nn.now += 1000000;
        bfo_engine_progress(&e[0], nn.now);
        bfo_engine_progress(&e[1], nn.now);
    }
    counting = 0;

    print_message("%lu messages (%llu operations, %llu restart dances begun, %llu map-outs, "
                  "%llu re-admissions) with %lu allocations after init\n",
                  delivered, (unsigned long long)nn.ops,
                  (unsigned long long)(e[0].stats.notifies + e[1].stats.notifies),
                  (unsigned long long)(e[0].stats.mapouts + e[1].stats.mapouts),
                  (unsigned long long)(e[0].stats.readmissions + e[1].stats.readmissions), allocs);
    assert_int_equal(allocs, 0);
    assert_true(e[0].stats.notifies + e[1].stats.notifies > 0); /* the dance did run */
    assert_true(e[0].stats.mapouts + e[1].stats.mapouts >= 2 * (NMSG / 250)); /* and failover */
    assert_true(e[0].stats.readmissions + e[1].stats.readmissions >= NMSG / 250);
    free(mem[0]);
    free(mem[1]);
    free(ring);
    free(sbuf);
    free(rbuf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_allocation_after_init),
    };
    return cmocka_run_group_tests_name("noalloc", tests, NULL, NULL);
}
