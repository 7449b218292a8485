// SPDX-License-Identifier: BSD-3-Clause
/* bfo_le.h - little-endian loads and stores, and the request handle.
 *
 * Part of bfo (see bfo.h).  Alignment and host byte order do not matter.
 */
#ifndef BFO_LE_H
#define BFO_LE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Largest header of any fragment type; the generated codec asserts that
 * every layout fits. */
#define BFO_MAX_HDR_SIZE 64

/* A reference to a request on the other side: slot index and generation.
 * The owner bumps the generation each time the slot is reused, so a message
 * naming a recycled request is recognised as stale.  Generation 0 is never
 * issued: {0, 0} is the null handle. */
typedef struct bfo_handle {
    uint32_t index;
    uint32_t gen;
} bfo_handle;

static inline int bfo_handle_is_null(bfo_handle h) { return h.gen == 0; }

/* A FRAG's payload being read in place: the receive it goes to and its
 * restart sequence (bfo_engine_place, bfo_engine_place_ok). */
typedef struct bfo_place_ticket {
    bfo_handle req;
    uint16_t rseq;
} bfo_place_ticket;

static inline int bfo_handle_eq(bfo_handle a, bfo_handle b)
{
    return a.index == b.index && a.gen == b.gen;
}

/* On a little-endian host with GCC or Clang the wire order is the host's:
 * memcpy, which compilers turn into one unaligned load or store.  Elsewhere
 * byte by byte.  BFO_LE_PORTABLE forces the byte-wise code. */
#if !defined(BFO_LE_PORTABLE) && defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__) && \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define BFO__LE_NATIVE 1
#else
#define BFO__LE_NATIVE 0
#endif

static inline void bfo_put16(uint8_t *p, uint16_t v)
{
#if BFO__LE_NATIVE
    __builtin_memcpy(p, &v, 2);
#else
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
#endif
}

static inline void bfo_put32(uint8_t *p, uint32_t v)
{
#if BFO__LE_NATIVE
    __builtin_memcpy(p, &v, 4);
#else
    bfo_put16(p, (uint16_t)v);
    bfo_put16(p + 2, (uint16_t)(v >> 16));
#endif
}

static inline void bfo_put64(uint8_t *p, uint64_t v)
{
#if BFO__LE_NATIVE
    __builtin_memcpy(p, &v, 8);
#else
    bfo_put32(p, (uint32_t)v);
    bfo_put32(p + 4, (uint32_t)(v >> 32));
#endif
}

static inline uint16_t bfo_get16(const uint8_t *p)
{
#if BFO__LE_NATIVE
    uint16_t v;
    __builtin_memcpy(&v, p, 2);
    return v;
#else
    return (uint16_t)(p[0] | (uint16_t)(p[1] << 8));
#endif
}

static inline uint32_t bfo_get32(const uint8_t *p)
{
#if BFO__LE_NATIVE
    uint32_t v;
    __builtin_memcpy(&v, p, 4);
    return v;
#else
    return (uint32_t)bfo_get16(p) | ((uint32_t)bfo_get16(p + 2) << 16);
#endif
}

static inline uint64_t bfo_get64(const uint8_t *p)
{
#if BFO__LE_NATIVE
    uint64_t v;
    __builtin_memcpy(&v, p, 8);
    return v;
#else
    return (uint64_t)bfo_get32(p) | ((uint64_t)bfo_get32(p + 4) << 32);
#endif
}

static inline void bfo_put_handle(uint8_t *p, bfo_handle h)
{
    bfo_put32(p, h.index);
    bfo_put32(p + 4, h.gen);
}

static inline bfo_handle bfo_get_handle(const uint8_t *p)
{
    bfo_handle h;
    h.index = bfo_get32(p);
    h.gen = bfo_get32(p + 4);
    return h;
}

#ifdef __cplusplus
}
#endif
#endif /* BFO_LE_H */
