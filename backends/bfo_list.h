/* bfo_list.h - a FIFO of pool indices, for the transports' send descriptors.
 *
 * Part of bfo (see bfo.h).  A transport keeps its descriptors in one array
 * and threads queues through an int `next` in each (-1 ends a list): the
 * frames written and not yet acknowledged, the ones swallowed by a fault
 * hook, the completions owed.  The functions take where the first
 * element's `next` is and the size of an element:
 *     bfo_list_push(&t->ents[0].next, sizeof t->ents[0], &L, i);
 * No allocation; header-only (static inline).
 */
#ifndef BFO_LIST_H
#define BFO_LIST_H

#include <stddef.h>

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

#endif /* BFO_LIST_H */
