// SPDX-License-Identifier: BSD-3-Clause
/* bfo_samples.h - one valid header of each layout of spec/alphabet.tab, for
 * the code that goes over every fragment type: tests/test_wire.c (which
 * checks the values below after a round trip) and the fuzzers' seeds
 * (tests/fuzz/gen_corpus.c).
 *
 * sample_encode(type, flags, buf, cap) encodes the sample of the type's
 * layout, carrying that type.  It dispatches through BFO_FRAGMENTS: a new
 * type of an existing layout is covered at once, and a new layout without
 * its sample_<layout> here does not build.  A sample passes
 * bfo_frame_validate with flags 0 (and with the flags its type allows:
 * RESTART names the receive request); a type that carries data needs at
 * least one byte of it (a FRAG without data is malformed).
 */
#ifndef BFO_SAMPLES_H
#define BFO_SAMPLES_H

#include <stddef.h>
#include <stdint.h>

#include "bfo.h"

static inline bfo_handle sample_h(uint32_t index, uint32_t gen)
{
    bfo_handle h;
    h.index = index;
    h.gen = gen;
    return h;
}

static inline size_t sample_match(int type, uint8_t flags, uint8_t *buf, size_t cap)
{
    bfo_hdr_match h = { .type = (uint8_t)type, .flags = flags, .ctx = 7, .src = 3, .tag = 0x11223344u, .seq = 9 };
    return bfo_hdr_match_encode(&h, buf, cap);
}

static inline size_t sample_rndv(int type, uint8_t flags, uint8_t *buf, size_t cap)
{
    bfo_hdr_rndv h = { .type = (uint8_t)type, .flags = flags, .ctx = 7, .src = 3, .tag = 5, .seq = 10, .rseq = 2, .msg_len = 1u << 20, .sreq = sample_h(4, 1), .dreq = sample_h(0, 0) };
    if (flags & BFO_FLAG_RESTART)
        h.dreq = sample_h(8, 2);
    return bfo_hdr_rndv_encode(&h, buf, cap);
}

static inline size_t sample_rget(int type, uint8_t flags, uint8_t *buf, size_t cap)
{
    bfo_hdr_rget h = { .type = (uint8_t)type, .flags = flags, .ctx = 7, .src = 3, .tag = 5, .seq = 11, .rseq = 0, .msg_len = 4096, .sreq = sample_h(4, 1), .dreq = sample_h(0, 0), .raddr = 0xdeadbeef000ull };
    if (flags & BFO_FLAG_RESTART)
        h.dreq = sample_h(8, 2);
    return bfo_hdr_rget_encode(&h, buf, cap);
}

static inline size_t sample_ack(int type, uint8_t flags, uint8_t *buf, size_t cap)
{
    bfo_hdr_ack h = { (uint8_t)type, flags, 1, sample_h(4, 1), sample_h(8, 2), 65536 };
    return bfo_hdr_ack_encode(&h, buf, cap);
}

static inline size_t sample_frag(int type, uint8_t flags, uint8_t *buf, size_t cap)
{
    bfo_hdr_frag h = { (uint8_t)type, flags, 1, sample_h(8, 2), 65536 };
    return bfo_hdr_frag_encode(&h, buf, cap);
}

static inline size_t sample_put(int type, uint8_t flags, uint8_t *buf, size_t cap)
{
    bfo_hdr_put h = { (uint8_t)type, flags, 1, 3, sample_h(4, 1), sample_h(8, 2), 0, 1 << 20,
                      0x7000 };
    return bfo_hdr_put_encode(&h, buf, cap);
}

static inline size_t sample_fin(int type, uint8_t flags, uint8_t *buf, size_t cap)
{
    bfo_hdr_fin h = { .type = (uint8_t)type, .flags = flags, .rseq = 1, .slot = 3, .dreq = sample_h(8, 2), .offset = 0, .length = 1 << 20 };
    return bfo_hdr_fin_encode(&h, buf, cap);
}

static inline size_t sample_restart(int type, uint8_t flags, uint8_t *buf, size_t cap)
{
    bfo_hdr_restart h = { .type = (uint8_t)type, .flags = flags, .rseq = 65535, .ctx = 7, .seq = 9, .src = 3, .sreq = sample_h(4, 1), .dreq = sample_h(8, 2) };
    return bfo_hdr_restart_encode(&h, buf, cap);
}

static inline size_t sample_railctl(int type, uint8_t flags, uint8_t *buf, size_t cap)
{
    bfo_hdr_railctl h = { (uint8_t)type, flags, 1, 5, 0x0102030405060708ull };
    return bfo_hdr_railctl_encode(&h, buf, cap);
}

static inline size_t sample_credit(int type, uint8_t flags, uint8_t *buf, size_t cap)
{
    bfo_hdr_credit h;
    memset(&h, 0, sizeof h);
    h.type = (uint8_t)type;
    h.flags = flags;
    h.limit = 0x0102030405060708ull;
    return bfo_hdr_credit_encode(&h, buf, cap);
}

static inline size_t sample_bye(int type, uint8_t flags, uint8_t *buf, size_t cap)
{
    bfo_hdr_bye h;
    memset(&h, 0, sizeof h);
    h.type = (uint8_t)type;
    h.flags = flags;
    h.seq = 0x0102030405060708ull;
    return bfo_hdr_bye_encode(&h, buf, cap);
}

static inline size_t sample_relay(int type, uint8_t flags, uint8_t *buf, size_t cap)
{
    bfo_hdr_relay h;
    memset(&h, 0, sizeof h);
    h.type = (uint8_t)type;
    h.flags = flags;
    h.dst = 2;
    h.src = 1;
    h.token = 0x0102030405060708ull;
    return bfo_hdr_relay_encode(&h, buf, cap);
}

static inline size_t sample_relayack(int type, uint8_t flags, uint8_t *buf, size_t cap)
{
    bfo_hdr_relayack h;
    memset(&h, 0, sizeof h);
    h.type = (uint8_t)type;
    h.flags = flags;
    h.ok = 1;
    h.dst = 2;
    h.token = 0x0102030405060708ull;
    return bfo_hdr_relayack_encode(&h, buf, cap);
}

static inline size_t sample_reach(int type, uint8_t flags, uint8_t *buf, size_t cap)
{
    bfo_hdr_reach h; /* 8 ranks: a bitmap of a byte follows (the tests' payloads) */
    memset(&h, 0, sizeof h);
    h.type = (uint8_t)type;
    h.flags = flags;
    h.count = 8;
    h.gen = 0x0102030405060708ull;
    return bfo_hdr_reach_encode(&h, buf, cap);
}

/* The sample header of fragment type `type` with these flags: its size, or
 * 0 when cap is too small or the type is unknown. */
static inline size_t sample_encode(int type, uint8_t flags, uint8_t *buf, size_t cap)
{
    switch (type) {
#define SAMPLE_CASE(name, code, layout, payload, dedup) \
    case BFO_FRAG_##name: return sample_##layout(type, flags, buf, cap);
        BFO_FRAGMENTS(SAMPLE_CASE)
#undef SAMPLE_CASE
    default:
        return 0;
    }
}

#endif /* BFO_SAMPLES_H */
