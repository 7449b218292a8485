// SPDX-License-Identifier: BSD-3-Clause
/* bfo_test_heap.h - the heap as the tests that weigh memory read it
 * (test_idle_peer.c, test_tcp_res.c): glibc's mallinfo2. */
#ifndef BFO_TEST_HEAP_H
#define BFO_TEST_HEAP_H

#include <malloc.h>
#include <stdlib.h>

/* The bytes in use on the heap: small blocks and mapped ones. */
static inline size_t heap_now(void)
{
    struct mallinfo2 m = mallinfo2();
    return m.uordblks + m.hblkhd;
}

/* Under ASan (or another allocator that glibc's mallinfo2 does not see)
 * the heap reads 0 however much is allocated: the heap tests say so and
 * are skipped there. */
static inline int heap_seen(void)
{
    size_t h0 = heap_now();
    void *volatile p = malloc(1 << 20);
    size_t h1 = heap_now();
    free(p);
    return h1 >= h0 + (1 << 20);
}

#endif /* BFO_TEST_HEAP_H */
