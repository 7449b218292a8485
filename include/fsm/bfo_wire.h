// SPDX-License-Identifier: BSD-3-Clause
/* bfo_wire.h - the wire format: frames in, validated headers out.
 *
 * Part of bfo (see bfo.h).  The layouts, structs, encoders and the syntactic
 * decoder are generated from spec/alphabet.tab into gen/bfo_codec.h; this
 * header adds the checks a layout table cannot say (handles that must be
 * set, lengths that must add up) and restart-sequence arithmetic.
 *
 * Everything is little-endian and fixed-size.  A decoder never reads past
 * the length it is given, and every malformed frame gets a named error.
 */
#ifndef BFO_WIRE_H
#define BFO_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "bfo_codec.h"
#include "bfo_core.h"
#include "bfo_le.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An eager message's whole overhead: type, flags, a 32-bit context, the
 * sender's rank in it, the tag and a 64-bit sequence (issue 16: MPI's
 * contexts and sources; a sequence that never wraps). */
BFO_STATIC_ASSERT(BFO_HDR_MATCH_SIZE <= 24, "the MATCH header must fit in 24 bytes");
BFO_STATIC_ASSERT(sizeof(((bfo_hdr_restart *)0)->rseq) >= 2,
                  "restart sequences are at least 16 bits on the wire");

/* Restart sequences are 16-bit serial numbers (RFC 1982 style): a is newer
 * than b when it is ahead by less than half the space.  Returns <0, 0, >0. */
static inline int bfo_rseq_cmp(uint16_t a, uint16_t b)
{
    return (int)(int16_t)(uint16_t)(a - b);
}

/* 1 if off + len overflows 64 bits. */
static inline int bfo__range_overflows(uint64_t off, uint64_t len)
{
    return off + len < off;
}

/* What each layout's fields must say beyond the layout table, one function
 * per layout: bfo__valid_<layout>, called for every fragment type of that
 * layout (bfo_frame_validate below, through BFO_FRAGMENTS).  A new layout
 * in spec/alphabet.tab without its function does not build; a new type of
 * an existing layout gets its layout's checks (look at f->type where a type
 * needs more). */
static inline int bfo__valid_match(const bfo_frame *f)
{
    /* matching fields: any value is a message; a cancelled one carries nothing */
    if ((f->flags & BFO_FLAG_CANCEL) && f->payload_len)
        return BFO_ERR_BAD_LENGTH;
    return BFO_OK;
}

/* rndv and rget share their leading fields */
static inline int bfo__valid_rzv(const bfo_frame *f, uint64_t msg_len, bfo_handle sreq,
                                 bfo_handle dreq)
{
    int restart = (f->flags & BFO_FLAG_RESTART) != 0;
    if (bfo_handle_is_null(sreq) || restart == bfo_handle_is_null(dreq))
        return BFO_ERR_BAD_FIELD;
    if (f->payload_len > msg_len)
        return BFO_ERR_BAD_LENGTH;
    return BFO_OK;
}

static inline int bfo__valid_rndv(const bfo_frame *f)
{
    return bfo__valid_rzv(f, f->h.rndv.msg_len, f->h.rndv.sreq, f->h.rndv.dreq);
}

static inline int bfo__valid_rget(const bfo_frame *f)
{
    return bfo__valid_rzv(f, f->h.rget.msg_len, f->h.rget.sreq, f->h.rget.dreq);
}

static inline int bfo__valid_ack(const bfo_frame *f)
{
    if (bfo_handle_is_null(f->h.ack.sreq) || bfo_handle_is_null(f->h.ack.dreq))
        return BFO_ERR_BAD_FIELD;
    return BFO_OK;
}

static inline int bfo__valid_frag(const bfo_frame *f)
{
    if (bfo_handle_is_null(f->h.frag.dreq))
        return BFO_ERR_BAD_FIELD;
    if (f->payload_len == 0)
        return BFO_ERR_BAD_LENGTH;
    if (bfo__range_overflows(f->h.frag.offset, f->payload_len))
        return BFO_ERR_BAD_FIELD;
    return BFO_OK;
}

static inline int bfo__valid_put(const bfo_frame *f)
{
    if (bfo_handle_is_null(f->h.put.sreq) || bfo_handle_is_null(f->h.put.dreq) ||
        f->h.put.length == 0 || bfo__range_overflows(f->h.put.offset, f->h.put.length))
        return BFO_ERR_BAD_FIELD;
    return BFO_OK;
}

static inline int bfo__valid_fin(const bfo_frame *f)
{
    if (bfo_handle_is_null(f->h.fin.dreq) || bfo__range_overflows(f->h.fin.offset, f->h.fin.length))
        return BFO_ERR_BAD_FIELD;
    return BFO_OK;
}

/* NOTIFY, RESTARTACK, RESTARTNACK, RECVERRNOTIFY: both requests named */
static inline int bfo__valid_restart(const bfo_frame *f)
{
    if (bfo_handle_is_null(f->h.restart.sreq) || bfo_handle_is_null(f->h.restart.dreq))
        return BFO_ERR_BAD_FIELD;
    return BFO_OK;
}

static inline int bfo__valid_railctl(const bfo_frame *f)
{
    (void)f; /* rail control: the engine checks the rail and epoch it names */
    return BFO_OK;
}

static inline int bfo__valid_credit(const bfo_frame *f)
{
    (void)f; /* any limit: a smaller one than already heard is an older CREDIT */
    return BFO_OK;
}

static inline int bfo__valid_bye(const bfo_frame *f)
{
    (void)f; /* any sequence: 0 when the sender never sent this peer a message */
    return BFO_OK;
}

/* RELAY: what follows (a frame) and the ranks it names, the engine checks;
 * RELAYACK: ok is 0 or 1; REACH: a bitmap of count bits follows (the
 * engine takes one of exactly its job's size). */
static inline int bfo__valid_relay(const bfo_frame *f)
{
    (void)f;
    return BFO_OK;
}

static inline int bfo__valid_relayack(const bfo_frame *f)
{
    return f->h.relayack.ok > 1 ? BFO_ERR_BAD_FIELD : BFO_OK;
}

static inline int bfo__valid_reach(const bfo_frame *f)
{
    return f->payload_len >= ((uint64_t)f->h.reach.count + 7) / 8 ? BFO_OK : BFO_ERR_BAD_LENGTH;
}

/* Checks what the layout table cannot: returns BFO_OK or BFO_ERR_BAD_FIELD
 * (a handle that must be set is null, a restart flag and dreq disagree, a
 * range is empty or overflows) or BFO_ERR_BAD_LENGTH (payload longer than
 * the message, a FRAG without data); BFO_ERR_BAD_TYPE for a type that is
 * not in the alphabet (bfo_frame_decode never gives one). */
static inline int bfo_frame_validate(const bfo_frame *f)
{
    if (f->type == BFO_FRAG_MATCH) /* the eager message: no field to check, no jump table */
        return BFO_OK;
    switch (f->type) {
#define BFO__VALIDATE(name, code, layout, payload, dedup) \
    case BFO_FRAG_##name: return bfo__valid_##layout(f);
        BFO_FRAGMENTS(BFO__VALIDATE)
#undef BFO__VALIDATE
    default:
        return BFO_ERR_BAD_TYPE;
    }
}

/* Decodes and validates one received frame of exactly len bytes: what a
 * transport should call on every frame.  Returns BFO_OK or one of
 * BFO_ERR_TRUNCATED, BFO_ERR_BAD_TYPE, BFO_ERR_BAD_FLAGS, BFO_ERR_BAD_FIELD,
 * BFO_ERR_BAD_LENGTH (see bfo_frame_decode and bfo_frame_validate).  On an
 * error the contents of *f are unspecified. */
static inline int bfo_frame_parse(bfo_frame *f, const uint8_t *buf, size_t len)
{
    int rc = bfo_frame_decode(f, buf, len);
    return rc != BFO_OK ? rc : bfo_frame_validate(f);
}

/* bfo_frame_parse for the eager message's common case, a MATCH without
 * flags: its first four bytes are the type, no flag and the reserved zero,
 * and nothing of bfo_frame_decode's or bfo_frame_validate's checks can
 * fail past the length.  Fills *f as bfo_frame_parse would and returns 1;
 * 0 for any other frame, which the caller parses in full (tests/test_wire.c
 * compares the two on every sample). */
static inline int bfo__parse_plain_match(bfo_frame *f, const uint8_t *buf, size_t len)
{
    if (len < BFO_HDR_MATCH_SIZE || bfo_get32(buf) != BFO_FRAG_MATCH)
        return 0;
    f->h.match.type = BFO_FRAG_MATCH;
    f->h.match.flags = 0;
    f->h.match.ctx = bfo_get32(buf + 4);
    f->h.match.src = bfo_get32(buf + 8);
    f->h.match.tag = bfo_get32(buf + 12);
    f->h.match.seq = bfo_get64(buf + 16);
    f->type = BFO_FRAG_MATCH;
    f->flags = 0;
    f->payload = len > BFO_HDR_MATCH_SIZE ? buf + BFO_HDR_MATCH_SIZE : (const uint8_t *)0;
    f->payload_len = len - BFO_HDR_MATCH_SIZE;
    return 1;
}

#ifdef __cplusplus
}
#endif
#endif /* BFO_WIRE_H */
