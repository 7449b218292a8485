// SPDX-License-Identifier: BSD-3-Clause
/* bfo_list.h - a FIFO of pool indices, for the transports' send descriptors.
 *
 * Part of bfo (see bfo.h).  A transport keeps its descriptors in one array
 * and threads queues through an int `next` in each (-1 ends a list): the
 * frames written and not yet acknowledged, the ones swallowed by a fault
 * hook, the completions owed.  The functions take where the first
 * element's `next` is and the size of an element:
 *     bfo_list_push(&t->ents[0].next, sizeof t->ents[0], &L, i);
 * Header-only (static inline); no allocation but bfo_list_grow's, which a
 * transport calls when every descriptor is in use (off the steady path).
 */
#ifndef BFO_LIST_H
#define BFO_LIST_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef struct bfo_list {
    int head, tail; /* -1: empty */
} bfo_list;

#define BFO_LIST_EMPTY { -1, -1 }

/* The `next` of element i. */
static inline int *bfo_list_next(int *next0, size_t stride, int i)
{
    return (int *)(void *)((char *)next0 + (size_t)i * stride);
}

/* i at the tail of L. */
static inline void bfo_list_push(int *next0, size_t stride, bfo_list *L, int i)
{
    *bfo_list_next(next0, stride, i) = -1;
    if (L->tail >= 0)
        *bfo_list_next(next0, stride, L->tail) = i;
    else
        L->head = i;
    L->tail = i;
}

/* The head of L, taken off (-1: empty). */
static inline int bfo_list_pop(int *next0, size_t stride, bfo_list *L)
{
    int i = L->head;
    if (i >= 0) {
        L->head = *bfo_list_next(next0, stride, i);
        if (L->head < 0)
            L->tail = -1;
    }
    return i;
}

/* All of src at the tail of dst; src is left empty. */
static inline void bfo_list_append(int *next0, size_t stride, bfo_list *dst, bfo_list *src)
{
    if (src->head < 0)
        return;
    if (dst->tail >= 0)
        *bfo_list_next(next0, stride, dst->tail) = src->head;
    else
        dst->head = src->head;
    dst->tail = src->tail;
    src->head = src->tail = -1;
}

/* All of L, taken off: L is left empty. */
static inline bfo_list bfo_list_take(bfo_list *L)
{
    bfo_list all = *L;
    L->head = L->tail = -1;
    return all;
}

/* Elements 0..n-1 threaded, in order, onto the free list *free_head. */
static inline void bfo_list_free_all(int *next0, size_t stride, int n, int *free_head)
{
    for (int i = 0; i < n; i++)
        *bfo_list_next(next0, stride, i) = i + 1 < n ? i + 1 : -1;
    *free_head = n > 0 ? 0 : -1;
}

/* The array *base of *n elements of `size` bytes, whose `next` is at byte
 * `next_off` of each, grows to twice as many (never past 1 << 25); the new
 * ones, zeroed, go on the free list *free_head.  The array may move: name
 * its elements by index, and hold no pointer to one across a call that
 * may grow it.  0 when grown; -1 (nothing changed) when realloc fails or
 * the array is at its largest. */
static inline int bfo_list_grow(void **base, int *n, size_t size, size_t next_off, int *free_head)
{
    const int old = *n;
    char *m;
    if (old <= 0 || old > (1 << 24))
        return -1;
    m = (char *)realloc(*base, size * (size_t)old * 2);
    if (!m)
        return -1;
    memset(m + size * (size_t)old, 0, size * (size_t)old);
    *base = m;
    *n = 2 * old;
    for (int i = 2 * old - 1; i >= old; i--) {
        *bfo_list_next((int *)(void *)(m + next_off), size, i) = *free_head;
        *free_head = i;
    }
    return 0;
}

/* An element taken off the free list *free_head of the array *base (laid
 * out as for bfo_list_grow), the array grown first when the list is empty
 * (it may move): its index, or -1 when none is free and it cannot grow. */
static inline int bfo_list_alloc(void **base, int *n, size_t size, size_t next_off, int *free_head)
{
    int i;
    if (*free_head < 0 && bfo_list_grow(base, n, size, next_off, free_head) != 0)
        return -1;
    i = *free_head;
    *free_head = *bfo_list_next((int *)(void *)((char *)*base + next_off), size, i);
    return i;
}

#endif /* BFO_LIST_H */
