/* bfo_le.h - little-endian loads and stores, and the request handle.
 *
 * Part of bfo (see bfo.h).  Byte-wise, so alignment and host byte order do
 * not matter; compilers turn each into one load or store on x86 and ARM.
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

static inline int bfo_handle_eq(bfo_handle a, bfo_handle b)
{
    return a.index == b.index && a.gen == b.gen;
}

static inline void bfo_put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static inline void bfo_put32(uint8_t *p, uint32_t v)
{
    bfo_put16(p, (uint16_t)v);
    bfo_put16(p + 2, (uint16_t)(v >> 16));
}

static inline void bfo_put64(uint8_t *p, uint64_t v)
{
    bfo_put32(p, (uint32_t)v);
    bfo_put32(p + 4, (uint32_t)(v >> 32));
}

static inline uint16_t bfo_get16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (uint16_t)(p[1] << 8));
}

static inline uint32_t bfo_get32(const uint8_t *p)
{
    return (uint32_t)bfo_get16(p) | ((uint32_t)bfo_get16(p + 2) << 16);
}

static inline uint64_t bfo_get64(const uint8_t *p)
{
    return (uint64_t)bfo_get32(p) | ((uint64_t)bfo_get32(p + 4) << 32);
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
