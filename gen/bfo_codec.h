/* GENERATED FILE - DO NOT EDIT.
 * Header layouts of every fragment type: structs, encoders, decoders.
 * Generated from spec/alphabet.tab by tools/bfo_gen.py (run `make gen`).
 * Change the spec and regenerate; `make check-gen` fails when this
 * file is not what the spec generates. */
#ifndef BFO_CODEC_H
#define BFO_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "bfo_alphabet.h"
#include "bfo_core.h"
#include "bfo_le.h"

#if !defined(BFO_GEN_STAMP) || BFO_GEN_STAMP != 0x241ca132
#error "gen/bfo_codec.h and gen/bfo_alphabet.h come from different runs of tools/bfo_gen.py (BFO_GEN_STAMP): regenerate with make gen"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* layout match (16 bytes): MATCH */
#define BFO_HDR_MATCH_SIZE 16
typedef struct bfo_hdr_match {
    uint8_t type;  /* offset 0: BFO_FRAG_* */
    uint8_t flags; /* offset 1: BFO_FLAG_* */
    uint16_t ctx; /* offset 2, u16 */
    uint32_t src; /* offset 4, u32 */
    uint32_t tag; /* offset 8, u32 */
    uint16_t seq; /* offset 12, u16 */
} bfo_hdr_match;
BFO_STATIC_ASSERT(BFO_HDR_MATCH_SIZE % 8 == 0 && BFO_HDR_MATCH_SIZE <= BFO_MAX_HDR_SIZE,
                  "layout match: size");
BFO_STATIC_ASSERT(sizeof(((bfo_hdr_match *)0)->ctx) == 2, "layout match: ctx holds u16");
BFO_STATIC_ASSERT(sizeof(((bfo_hdr_match *)0)->src) == 4, "layout match: src holds u32");
BFO_STATIC_ASSERT(sizeof(((bfo_hdr_match *)0)->tag) == 4, "layout match: tag holds u32");
BFO_STATIC_ASSERT(sizeof(((bfo_hdr_match *)0)->seq) == 2, "layout match: seq holds u16");

/* Writes the header into buf; returns its size, or 0 when cap is too small. */
static inline size_t bfo_hdr_match_encode(const bfo_hdr_match *h, uint8_t *buf, size_t cap)
{
    if (cap < BFO_HDR_MATCH_SIZE)
        return 0;
    buf[0] = h->type;
    buf[1] = h->flags;
    bfo_put16(buf + 2, h->ctx);
    bfo_put32(buf + 4, h->src);
    bfo_put32(buf + 8, h->tag);
    bfo_put16(buf + 12, h->seq);
    bfo_put16(buf + 14, 0);
    return BFO_HDR_MATCH_SIZE;
}

/* Reads the header from buf[0..len); BFO_ERR_TRUNCATED when len is short,
 * BFO_ERR_BAD_FIELD when a reserved field is not zero.  Type and flags are
 * copied, not checked: bfo_frame_decode() checks them. */
static inline int bfo_hdr_match_decode(bfo_hdr_match *h, const uint8_t *buf, size_t len)
{
    if (len < BFO_HDR_MATCH_SIZE)
        return BFO_ERR_TRUNCATED;
    h->type = buf[0];
    h->flags = buf[1];
    h->ctx = bfo_get16(buf + 2);
    h->src = bfo_get32(buf + 4);
    h->tag = bfo_get32(buf + 8);
    h->seq = bfo_get16(buf + 12);
    if (bfo_get16(buf + 14) != 0)
        return BFO_ERR_BAD_FIELD;
    return BFO_OK;
}

/* layout rndv (40 bytes): RNDV */
#define BFO_HDR_RNDV_SIZE 40
typedef struct bfo_hdr_rndv {
    uint8_t type;  /* offset 0: BFO_FRAG_* */
    uint8_t flags; /* offset 1: BFO_FLAG_* */
    uint16_t ctx; /* offset 2, u16 */
    uint32_t src; /* offset 4, u32 */
    uint32_t tag; /* offset 8, u32 */
    uint16_t seq; /* offset 12, u16 */
    uint16_t rseq; /* offset 14, u16 */
    uint64_t msg_len; /* offset 16, u64 */
    bfo_handle sreq; /* offset 24, handle */
    bfo_handle dreq; /* offset 32, handle */
} bfo_hdr_rndv;
BFO_STATIC_ASSERT(BFO_HDR_RNDV_SIZE % 8 == 0 && BFO_HDR_RNDV_SIZE <= BFO_MAX_HDR_SIZE,
                  "layout rndv: size");
BFO_STATIC_ASSERT(sizeof(((bfo_hdr_rndv *)0)->ctx) == 2, "layout rndv: ctx holds u16");
BFO_STATIC_ASSERT(sizeof(((bfo_hdr_rndv *)0)->src) == 4, "layout rndv: src holds u32");
BFO_STATIC_ASSERT(sizeof(((bfo_hdr_rndv *)0)->tag) == 4, "layout rndv: tag holds u32");
BFO_STATIC_ASSERT(sizeof(((bfo_hdr_rndv *)0)->seq) == 2, "layout rndv: seq holds u16");
BFO_STATIC_ASSERT(sizeof(((bfo_hdr_rndv *)0)->rseq) == 2, "layout rndv: rseq holds u16");
BFO_STATIC_ASSERT(sizeof(((bfo_hdr_rndv *)0)->msg_len) == 8, "layout rndv: msg_len holds u64");

/* Writes the header into buf; returns its size, or 0 when cap is too small. */
static inline size_t bfo_hdr_rndv_encode(const bfo_hdr_rndv *h, uint8_t *buf, size_t cap)
{
    if (cap < BFO_HDR_RNDV_SIZE)
        return 0;
    buf[0] = h->type;
    buf[1] = h->flags;
    bfo_put16(buf + 2, h->ctx);
    bfo_put32(buf + 4, h->src);
    bfo_put32(buf + 8, h->tag);
    bfo_put16(buf + 12, h->seq);
    bfo_put16(buf + 14, h->rseq);
    bfo_put64(buf + 16, h->msg_len);
    bfo_put_handle(buf + 24, h->sreq);
    bfo_put_handle(buf + 32, h->dreq);
    return BFO_HDR_RNDV_SIZE;
}

/* Reads the header from buf[0..len); BFO_ERR_TRUNCATED when len is short,
 * BFO_ERR_BAD_FIELD when a reserved field is not zero.  Type and flags are
 * copied, not checked: bfo_frame_decode() checks them. */
static inline int bfo_hdr_rndv_decode(bfo_hdr_rndv *h, const uint8_t *buf, size_t len)
{
    if (len < BFO_HDR_RNDV_SIZE)
        return BFO_ERR_TRUNCATED;
    h->type = buf[0];
    h->flags = buf[1];
    h->ctx = bfo_get16(buf + 2);
    h->src = bfo_get32(buf + 4);
    h->tag = bfo_get32(buf + 8);
    h->seq = bfo_get16(buf + 12);
    h->rseq = bfo_get16(buf + 14);
    h->msg_len = bfo_get64(buf + 16);
    h->sreq = bfo_get_handle(buf + 24);
    h->dreq = bfo_get_handle(buf + 32);
    return BFO_OK;
}

/* layout rget (56 bytes): RGET */
#define BFO_HDR_RGET_SIZE 56
typedef struct bfo_hdr_rget {
    uint8_t type;  /* offset 0: BFO_FRAG_* */
    uint8_t flags; /* offset 1: BFO_FLAG_* */
    uint16_t ctx; /* offset 2, u16 */
    uint32_t src; /* offset 4, u32 */
    uint32_t tag; /* offset 8, u32 */
    uint16_t seq; /* offset 12, u16 */
    uint16_t rseq; /* offset 14, u16 */
    uint64_t msg_len; /* offset 16, u64 */
    bfo_handle sreq; /* offset 24, handle */
    bfo_handle dreq; /* offset 32, handle */
    uint64_t raddr; /* offset 40, u64 */
    uint64_t rkey; /* offset 48, u64 */
} bfo_hdr_rget;
BFO_STATIC_ASSERT(BFO_HDR_RGET_SIZE % 8 == 0 && BFO_HDR_RGET_SIZE <= BFO_MAX_HDR_SIZE,
                  "layout rget: size");
BFO_STATIC_ASSERT(sizeof(((bfo_hdr_rget *)0)->ctx) == 2, "layout rget: ctx holds u16");
BFO_STATIC_ASSERT(sizeof(((bfo_hdr_rget *)0)->src) == 4, "layout rget: src holds u32");
BFO_STATIC_ASSERT(sizeof(((bfo_hdr_rget *)0)->tag) == 4, "layout rget: tag holds u32");
BFO_STATIC_ASSERT(sizeof(((bfo_hdr_rget *)0)->seq) == 2, "layout rget: seq holds u16");
BFO_STATIC_ASSERT(sizeof(((bfo_hdr_rget *)0)->rseq) == 2, "layout rget: rseq holds u16");
BFO_STATIC_ASSERT(sizeof(((bfo_hdr_rget *)0)->msg_len) == 8, "layout rget: msg_len holds u64");
BFO_STATIC_ASSERT(sizeof(((bfo_hdr_rget *)0)->raddr) == 8, "layout rget: raddr holds u64");
BFO_STATIC_ASSERT(sizeof(((bfo_hdr_rget *)0)->rkey) == 8, "layout rget: rkey holds u64");

/* Writes the header into buf; returns its size, or 0 when cap is too small. */
static inline size_t bfo_hdr_rget_encode(const bfo_hdr_rget *h, uint8_t *buf, size_t cap)
{
    if (cap < BFO_HDR_RGET_SIZE)
        return 0;
    buf[0] = h->type;
    buf[1] = h->flags;
    bfo_put16(buf + 2, h->ctx);
    bfo_put32(buf + 4, h->src);
    bfo_put32(buf + 8, h->tag);
    bfo_put16(buf + 12, h->seq);
    bfo_put16(buf + 14, h->rseq);
    bfo_put64(buf + 16, h->msg_len);
    bfo_put_handle(buf + 24, h->sreq);
    bfo_put_handle(buf + 32, h->dreq);
    bfo_put64(buf + 40, h->raddr);
    bfo_put64(buf + 48, h->rkey);
    return BFO_HDR_RGET_SIZE;
}

/* Reads the header from buf[0..len); BFO_ERR_TRUNCATED when len is short,
 * BFO_ERR_BAD_FIELD when a reserved field is not zero.  Type and flags are
 * copied, not checked: bfo_frame_decode() checks them. */
static inline int bfo_hdr_rget_decode(bfo_hdr_rget *h, const uint8_t *buf, size_t len)
{
    if (len < BFO_HDR_RGET_SIZE)
        return BFO_ERR_TRUNCATED;
    h->type = buf[0];
    h->flags = buf[1];
    h->ctx = bfo_get16(buf + 2);
    h->src = bfo_get32(buf + 4);
    h->tag = bfo_get32(buf + 8);
    h->seq = bfo_get16(buf + 12);
    h->rseq = bfo_get16(buf + 14);
    h->msg_len = bfo_get64(buf + 16);
    h->sreq = bfo_get_handle(buf + 24);
    h->dreq = bfo_get_handle(buf + 32);
    h->raddr = bfo_get64(buf + 40);
    h->rkey = bfo_get64(buf + 48);
    return BFO_OK;
}

/* layout ack (32 bytes): ACK */
#define BFO_HDR_ACK_SIZE 32
typedef struct bfo_hdr_ack {
    uint8_t type;  /* offset 0: BFO_FRAG_* */
    uint8_t flags; /* offset 1: BFO_FLAG_* */
    uint16_t rseq; /* offset 2, u16 */
    bfo_handle sreq; /* offset 8, handle */
    bfo_handle dreq; /* offset 16, handle */
    uint64_t offset; /* offset 24, u64 */
} bfo_hdr_ack;
BFO_STATIC_ASSERT(BFO_HDR_ACK_SIZE % 8 == 0 && BFO_HDR_ACK_SIZE <= BFO_MAX_HDR_SIZE,
                  "layout ack: size");
BFO_STATIC_ASSERT(sizeof(((bfo_hdr_ack *)0)->rseq) == 2, "layout ack: rseq holds u16");
BFO_STATIC_ASSERT(sizeof(((bfo_hdr_ack *)0)->offset) == 8, "layout ack: offset holds u64");

/* Writes the header into buf; returns its size, or 0 when cap is too small. */
static inline size_t bfo_hdr_ack_encode(const bfo_hdr_ack *h, uint8_t *buf, size_t cap)
{
    if (cap < BFO_HDR_ACK_SIZE)
        return 0;
    buf[0] = h->type;
    buf[1] = h->flags;
    bfo_put16(buf + 2, h->rseq);
    bfo_put32(buf + 4, 0);
    bfo_put_handle(buf + 8, h->sreq);
    bfo_put_handle(buf + 16, h->dreq);
    bfo_put64(buf + 24, h->offset);
    return BFO_HDR_ACK_SIZE;
}

/* Reads the header from buf[0..len); BFO_ERR_TRUNCATED when len is short,
 * BFO_ERR_BAD_FIELD when a reserved field is not zero.  Type and flags are
 * copied, not checked: bfo_frame_decode() checks them. */
static inline int bfo_hdr_ack_decode(bfo_hdr_ack *h, const uint8_t *buf, size_t len)
{
    if (len < BFO_HDR_ACK_SIZE)
        return BFO_ERR_TRUNCATED;
    h->type = buf[0];
    h->flags = buf[1];
    h->rseq = bfo_get16(buf + 2);
    if (bfo_get32(buf + 4) != 0)
        return BFO_ERR_BAD_FIELD;
    h->sreq = bfo_get_handle(buf + 8);
    h->dreq = bfo_get_handle(buf + 16);
    h->offset = bfo_get64(buf + 24);
    return BFO_OK;
}

/* layout frag (24 bytes): FRAG */
#define BFO_HDR_FRAG_SIZE 24
typedef struct bfo_hdr_frag {
    uint8_t type;  /* offset 0: BFO_FRAG_* */
    uint8_t flags; /* offset 1: BFO_FLAG_* */
    uint16_t rseq; /* offset 2, u16 */
    bfo_handle dreq; /* offset 8, handle */
    uint64_t offset; /* offset 16, u64 */
} bfo_hdr_frag;
BFO_STATIC_ASSERT(BFO_HDR_FRAG_SIZE % 8 == 0 && BFO_HDR_FRAG_SIZE <= BFO_MAX_HDR_SIZE,
                  "layout frag: size");
BFO_STATIC_ASSERT(sizeof(((bfo_hdr_frag *)0)->rseq) == 2, "layout frag: rseq holds u16");
BFO_STATIC_ASSERT(sizeof(((bfo_hdr_frag *)0)->offset) == 8, "layout frag: offset holds u64");

/* Writes the header into buf; returns its size, or 0 when cap is too small. */
static inline size_t bfo_hdr_frag_encode(const bfo_hdr_frag *h, uint8_t *buf, size_t cap)
{
    if (cap < BFO_HDR_FRAG_SIZE)
        return 0;
    buf[0] = h->type;
    buf[1] = h->flags;
    bfo_put16(buf + 2, h->rseq);
    bfo_put32(buf + 4, 0);
    bfo_put_handle(buf + 8, h->dreq);
    bfo_put64(buf + 16, h->offset);
    return BFO_HDR_FRAG_SIZE;
}

/* Reads the header from buf[0..len); BFO_ERR_TRUNCATED when len is short,
 * BFO_ERR_BAD_FIELD when a reserved field is not zero.  Type and flags are
 * copied, not checked: bfo_frame_decode() checks them. */
static inline int bfo_hdr_frag_decode(bfo_hdr_frag *h, const uint8_t *buf, size_t len)
{
    if (len < BFO_HDR_FRAG_SIZE)
        return BFO_ERR_TRUNCATED;
    h->type = buf[0];
    h->flags = buf[1];
    h->rseq = bfo_get16(buf + 2);
    if (bfo_get32(buf + 4) != 0)
        return BFO_ERR_BAD_FIELD;
    h->dreq = bfo_get_handle(buf + 8);
    h->offset = bfo_get64(buf + 16);
    return BFO_OK;
}

/* layout put (56 bytes): PUT */
#define BFO_HDR_PUT_SIZE 56
typedef struct bfo_hdr_put {
    uint8_t type;  /* offset 0: BFO_FRAG_* */
    uint8_t flags; /* offset 1: BFO_FLAG_* */
    uint16_t rseq; /* offset 2, u16 */
    uint32_t slot; /* offset 4, u32 */
    bfo_handle sreq; /* offset 8, handle */
    bfo_handle dreq; /* offset 16, handle */
    uint64_t offset; /* offset 24, u64 */
    uint64_t length; /* offset 32, u64 */
    uint64_t raddr; /* offset 40, u64 */
    uint64_t rkey; /* offset 48, u64 */
} bfo_hdr_put;
BFO_STATIC_ASSERT(BFO_HDR_PUT_SIZE % 8 == 0 && BFO_HDR_PUT_SIZE <= BFO_MAX_HDR_SIZE,
                  "layout put: size");
BFO_STATIC_ASSERT(sizeof(((bfo_hdr_put *)0)->rseq) == 2, "layout put: rseq holds u16");
BFO_STATIC_ASSERT(sizeof(((bfo_hdr_put *)0)->slot) == 4, "layout put: slot holds u32");
BFO_STATIC_ASSERT(sizeof(((bfo_hdr_put *)0)->offset) == 8, "layout put: offset holds u64");
BFO_STATIC_ASSERT(sizeof(((bfo_hdr_put *)0)->length) == 8, "layout put: length holds u64");
BFO_STATIC_ASSERT(sizeof(((bfo_hdr_put *)0)->raddr) == 8, "layout put: raddr holds u64");
BFO_STATIC_ASSERT(sizeof(((bfo_hdr_put *)0)->rkey) == 8, "layout put: rkey holds u64");

/* Writes the header into buf; returns its size, or 0 when cap is too small. */
static inline size_t bfo_hdr_put_encode(const bfo_hdr_put *h, uint8_t *buf, size_t cap)
{
    if (cap < BFO_HDR_PUT_SIZE)
        return 0;
    buf[0] = h->type;
    buf[1] = h->flags;
    bfo_put16(buf + 2, h->rseq);
    bfo_put32(buf + 4, h->slot);
    bfo_put_handle(buf + 8, h->sreq);
    bfo_put_handle(buf + 16, h->dreq);
    bfo_put64(buf + 24, h->offset);
    bfo_put64(buf + 32, h->length);
    bfo_put64(buf + 40, h->raddr);
    bfo_put64(buf + 48, h->rkey);
    return BFO_HDR_PUT_SIZE;
}

/* Reads the header from buf[0..len); BFO_ERR_TRUNCATED when len is short,
 * BFO_ERR_BAD_FIELD when a reserved field is not zero.  Type and flags are
 * copied, not checked: bfo_frame_decode() checks them. */
static inline int bfo_hdr_put_decode(bfo_hdr_put *h, const uint8_t *buf, size_t len)
{
    if (len < BFO_HDR_PUT_SIZE)
        return BFO_ERR_TRUNCATED;
    h->type = buf[0];
    h->flags = buf[1];
    h->rseq = bfo_get16(buf + 2);
    h->slot = bfo_get32(buf + 4);
    h->sreq = bfo_get_handle(buf + 8);
    h->dreq = bfo_get_handle(buf + 16);
    h->offset = bfo_get64(buf + 24);
    h->length = bfo_get64(buf + 32);
    h->raddr = bfo_get64(buf + 40);
    h->rkey = bfo_get64(buf + 48);
    return BFO_OK;
}

/* layout fin (40 bytes): FIN */
#define BFO_HDR_FIN_SIZE 40
typedef struct bfo_hdr_fin {
    uint8_t type;  /* offset 0: BFO_FRAG_* */
    uint8_t flags; /* offset 1: BFO_FLAG_* */
    uint16_t rseq; /* offset 2, u16 */
    uint32_t slot; /* offset 4, u32 */
    bfo_handle dreq; /* offset 8, handle */
    uint64_t offset; /* offset 16, u64 */
    uint64_t length; /* offset 24, u64 */
    uint16_t ctx; /* offset 32, u16 */
    uint16_t seq; /* offset 34, u16 */
} bfo_hdr_fin;
BFO_STATIC_ASSERT(BFO_HDR_FIN_SIZE % 8 == 0 && BFO_HDR_FIN_SIZE <= BFO_MAX_HDR_SIZE,
                  "layout fin: size");
BFO_STATIC_ASSERT(sizeof(((bfo_hdr_fin *)0)->rseq) == 2, "layout fin: rseq holds u16");
BFO_STATIC_ASSERT(sizeof(((bfo_hdr_fin *)0)->slot) == 4, "layout fin: slot holds u32");
BFO_STATIC_ASSERT(sizeof(((bfo_hdr_fin *)0)->offset) == 8, "layout fin: offset holds u64");
BFO_STATIC_ASSERT(sizeof(((bfo_hdr_fin *)0)->length) == 8, "layout fin: length holds u64");
BFO_STATIC_ASSERT(sizeof(((bfo_hdr_fin *)0)->ctx) == 2, "layout fin: ctx holds u16");
BFO_STATIC_ASSERT(sizeof(((bfo_hdr_fin *)0)->seq) == 2, "layout fin: seq holds u16");

/* Writes the header into buf; returns its size, or 0 when cap is too small. */
static inline size_t bfo_hdr_fin_encode(const bfo_hdr_fin *h, uint8_t *buf, size_t cap)
{
    if (cap < BFO_HDR_FIN_SIZE)
        return 0;
    buf[0] = h->type;
    buf[1] = h->flags;
    bfo_put16(buf + 2, h->rseq);
    bfo_put32(buf + 4, h->slot);
    bfo_put_handle(buf + 8, h->dreq);
    bfo_put64(buf + 16, h->offset);
    bfo_put64(buf + 24, h->length);
    bfo_put16(buf + 32, h->ctx);
    bfo_put16(buf + 34, h->seq);
    bfo_put32(buf + 36, 0);
    return BFO_HDR_FIN_SIZE;
}

/* Reads the header from buf[0..len); BFO_ERR_TRUNCATED when len is short,
 * BFO_ERR_BAD_FIELD when a reserved field is not zero.  Type and flags are
 * copied, not checked: bfo_frame_decode() checks them. */
static inline int bfo_hdr_fin_decode(bfo_hdr_fin *h, const uint8_t *buf, size_t len)
{
    if (len < BFO_HDR_FIN_SIZE)
        return BFO_ERR_TRUNCATED;
    h->type = buf[0];
    h->flags = buf[1];
    h->rseq = bfo_get16(buf + 2);
    h->slot = bfo_get32(buf + 4);
    h->dreq = bfo_get_handle(buf + 8);
    h->offset = bfo_get64(buf + 16);
    h->length = bfo_get64(buf + 24);
    h->ctx = bfo_get16(buf + 32);
    h->seq = bfo_get16(buf + 34);
    if (bfo_get32(buf + 36) != 0)
        return BFO_ERR_BAD_FIELD;
    return BFO_OK;
}

/* layout restart (32 bytes): NOTIFY, RESTARTACK, RESTARTNACK, RECVERRNOTIFY */
#define BFO_HDR_RESTART_SIZE 32
typedef struct bfo_hdr_restart {
    uint8_t type;  /* offset 0: BFO_FRAG_* */
    uint8_t flags; /* offset 1: BFO_FLAG_* */
    uint16_t rseq; /* offset 2, u16 */
    uint16_t ctx; /* offset 4, u16 */
    uint16_t seq; /* offset 6, u16 */
    uint32_t src; /* offset 8, u32 */
    bfo_handle sreq; /* offset 16, handle */
    bfo_handle dreq; /* offset 24, handle */
} bfo_hdr_restart;
BFO_STATIC_ASSERT(BFO_HDR_RESTART_SIZE % 8 == 0 && BFO_HDR_RESTART_SIZE <= BFO_MAX_HDR_SIZE,
                  "layout restart: size");
BFO_STATIC_ASSERT(sizeof(((bfo_hdr_restart *)0)->rseq) == 2, "layout restart: rseq holds u16");
BFO_STATIC_ASSERT(sizeof(((bfo_hdr_restart *)0)->ctx) == 2, "layout restart: ctx holds u16");
BFO_STATIC_ASSERT(sizeof(((bfo_hdr_restart *)0)->seq) == 2, "layout restart: seq holds u16");
BFO_STATIC_ASSERT(sizeof(((bfo_hdr_restart *)0)->src) == 4, "layout restart: src holds u32");

/* Writes the header into buf; returns its size, or 0 when cap is too small. */
static inline size_t bfo_hdr_restart_encode(const bfo_hdr_restart *h, uint8_t *buf, size_t cap)
{
    if (cap < BFO_HDR_RESTART_SIZE)
        return 0;
    buf[0] = h->type;
    buf[1] = h->flags;
    bfo_put16(buf + 2, h->rseq);
    bfo_put16(buf + 4, h->ctx);
    bfo_put16(buf + 6, h->seq);
    bfo_put32(buf + 8, h->src);
    bfo_put32(buf + 12, 0);
    bfo_put_handle(buf + 16, h->sreq);
    bfo_put_handle(buf + 24, h->dreq);
    return BFO_HDR_RESTART_SIZE;
}

/* Reads the header from buf[0..len); BFO_ERR_TRUNCATED when len is short,
 * BFO_ERR_BAD_FIELD when a reserved field is not zero.  Type and flags are
 * copied, not checked: bfo_frame_decode() checks them. */
static inline int bfo_hdr_restart_decode(bfo_hdr_restart *h, const uint8_t *buf, size_t len)
{
    if (len < BFO_HDR_RESTART_SIZE)
        return BFO_ERR_TRUNCATED;
    h->type = buf[0];
    h->flags = buf[1];
    h->rseq = bfo_get16(buf + 2);
    h->ctx = bfo_get16(buf + 4);
    h->seq = bfo_get16(buf + 6);
    h->src = bfo_get32(buf + 8);
    if (bfo_get32(buf + 12) != 0)
        return BFO_ERR_BAD_FIELD;
    h->sreq = bfo_get_handle(buf + 16);
    h->dreq = bfo_get_handle(buf + 24);
    return BFO_OK;
}

/* layout railctl (16 bytes): BROKEN, PROBE, PROBEACK */
#define BFO_HDR_RAILCTL_SIZE 16
typedef struct bfo_hdr_railctl {
    uint8_t type;  /* offset 0: BFO_FRAG_* */
    uint8_t flags; /* offset 1: BFO_FLAG_* */
    uint16_t rail; /* offset 2, u16 */
    uint32_t epoch; /* offset 4, u32 */
    uint64_t nonce; /* offset 8, u64 */
} bfo_hdr_railctl;
BFO_STATIC_ASSERT(BFO_HDR_RAILCTL_SIZE % 8 == 0 && BFO_HDR_RAILCTL_SIZE <= BFO_MAX_HDR_SIZE,
                  "layout railctl: size");
BFO_STATIC_ASSERT(sizeof(((bfo_hdr_railctl *)0)->rail) == 2, "layout railctl: rail holds u16");
BFO_STATIC_ASSERT(sizeof(((bfo_hdr_railctl *)0)->epoch) == 4, "layout railctl: epoch holds u32");
BFO_STATIC_ASSERT(sizeof(((bfo_hdr_railctl *)0)->nonce) == 8, "layout railctl: nonce holds u64");

/* Writes the header into buf; returns its size, or 0 when cap is too small. */
static inline size_t bfo_hdr_railctl_encode(const bfo_hdr_railctl *h, uint8_t *buf, size_t cap)
{
    if (cap < BFO_HDR_RAILCTL_SIZE)
        return 0;
    buf[0] = h->type;
    buf[1] = h->flags;
    bfo_put16(buf + 2, h->rail);
    bfo_put32(buf + 4, h->epoch);
    bfo_put64(buf + 8, h->nonce);
    return BFO_HDR_RAILCTL_SIZE;
}

/* Reads the header from buf[0..len); BFO_ERR_TRUNCATED when len is short,
 * BFO_ERR_BAD_FIELD when a reserved field is not zero.  Type and flags are
 * copied, not checked: bfo_frame_decode() checks them. */
static inline int bfo_hdr_railctl_decode(bfo_hdr_railctl *h, const uint8_t *buf, size_t len)
{
    if (len < BFO_HDR_RAILCTL_SIZE)
        return BFO_ERR_TRUNCATED;
    h->type = buf[0];
    h->flags = buf[1];
    h->rail = bfo_get16(buf + 2);
    h->epoch = bfo_get32(buf + 4);
    h->nonce = bfo_get64(buf + 8);
    return BFO_OK;
}

/* Header size of each fragment type. */
#define BFO_FRAG_MATCH_HDR_SIZE BFO_HDR_MATCH_SIZE
BFO_STATIC_ASSERT(BFO_FRAG_MATCH_HDR_SIZE == 16, "MATCH header: 16 bytes");
#define BFO_FRAG_RNDV_HDR_SIZE BFO_HDR_RNDV_SIZE
BFO_STATIC_ASSERT(BFO_FRAG_RNDV_HDR_SIZE == 40, "RNDV header: 40 bytes");
#define BFO_FRAG_RGET_HDR_SIZE BFO_HDR_RGET_SIZE
BFO_STATIC_ASSERT(BFO_FRAG_RGET_HDR_SIZE == 56, "RGET header: 56 bytes");
#define BFO_FRAG_ACK_HDR_SIZE BFO_HDR_ACK_SIZE
BFO_STATIC_ASSERT(BFO_FRAG_ACK_HDR_SIZE == 32, "ACK header: 32 bytes");
#define BFO_FRAG_FRAG_HDR_SIZE BFO_HDR_FRAG_SIZE
BFO_STATIC_ASSERT(BFO_FRAG_FRAG_HDR_SIZE == 24, "FRAG header: 24 bytes");
#define BFO_FRAG_PUT_HDR_SIZE BFO_HDR_PUT_SIZE
BFO_STATIC_ASSERT(BFO_FRAG_PUT_HDR_SIZE == 56, "PUT header: 56 bytes");
#define BFO_FRAG_FIN_HDR_SIZE BFO_HDR_FIN_SIZE
BFO_STATIC_ASSERT(BFO_FRAG_FIN_HDR_SIZE == 40, "FIN header: 40 bytes");
#define BFO_FRAG_NOTIFY_HDR_SIZE BFO_HDR_RESTART_SIZE
BFO_STATIC_ASSERT(BFO_FRAG_NOTIFY_HDR_SIZE == 32, "NOTIFY header: 32 bytes");
#define BFO_FRAG_RESTARTACK_HDR_SIZE BFO_HDR_RESTART_SIZE
BFO_STATIC_ASSERT(BFO_FRAG_RESTARTACK_HDR_SIZE == 32, "RESTARTACK header: 32 bytes");
#define BFO_FRAG_RESTARTNACK_HDR_SIZE BFO_HDR_RESTART_SIZE
BFO_STATIC_ASSERT(BFO_FRAG_RESTARTNACK_HDR_SIZE == 32, "RESTARTNACK header: 32 bytes");
#define BFO_FRAG_RECVERRNOTIFY_HDR_SIZE BFO_HDR_RESTART_SIZE
BFO_STATIC_ASSERT(BFO_FRAG_RECVERRNOTIFY_HDR_SIZE == 32, "RECVERRNOTIFY header: 32 bytes");
#define BFO_FRAG_BROKEN_HDR_SIZE BFO_HDR_RAILCTL_SIZE
BFO_STATIC_ASSERT(BFO_FRAG_BROKEN_HDR_SIZE == 16, "BROKEN header: 16 bytes");
#define BFO_FRAG_PROBE_HDR_SIZE BFO_HDR_RAILCTL_SIZE
BFO_STATIC_ASSERT(BFO_FRAG_PROBE_HDR_SIZE == 16, "PROBE header: 16 bytes");
#define BFO_FRAG_PROBEACK_HDR_SIZE BFO_HDR_RAILCTL_SIZE
BFO_STATIC_ASSERT(BFO_FRAG_PROBEACK_HDR_SIZE == 16, "PROBEACK header: 16 bytes");

/* Header size of a fragment type, or 0 for an unknown type. */
static inline size_t bfo_frag_hdr_size(int type)
{
    switch (type) {
    case BFO_FRAG_MATCH: return BFO_HDR_MATCH_SIZE;
    case BFO_FRAG_RNDV: return BFO_HDR_RNDV_SIZE;
    case BFO_FRAG_RGET: return BFO_HDR_RGET_SIZE;
    case BFO_FRAG_ACK: return BFO_HDR_ACK_SIZE;
    case BFO_FRAG_FRAG: return BFO_HDR_FRAG_SIZE;
    case BFO_FRAG_PUT: return BFO_HDR_PUT_SIZE;
    case BFO_FRAG_FIN: return BFO_HDR_FIN_SIZE;
    case BFO_FRAG_NOTIFY: return BFO_HDR_RESTART_SIZE;
    case BFO_FRAG_RESTARTACK: return BFO_HDR_RESTART_SIZE;
    case BFO_FRAG_RESTARTNACK: return BFO_HDR_RESTART_SIZE;
    case BFO_FRAG_RECVERRNOTIFY: return BFO_HDR_RESTART_SIZE;
    case BFO_FRAG_BROKEN: return BFO_HDR_RAILCTL_SIZE;
    case BFO_FRAG_PROBE: return BFO_HDR_RAILCTL_SIZE;
    case BFO_FRAG_PROBEACK: return BFO_HDR_RAILCTL_SIZE;
    default: return 0;
    }
}

/* One field of a header as it is on the wire, for code that shows or checks
 * the header of any fragment type without knowing its layout (the
 * simulator's trace, the tests): its name in spec/alphabet.tab, its offset
 * and width in bytes, and its kind: BFO_FIELD_UINT (little-endian, width 1,
 * 2, 4 or 8), BFO_FIELD_HANDLE (index u32, then generation u32) or
 * BFO_FIELD_RESERVED (written as zero; a frame where it is not is
 * malformed).  type and flags, at 0 and 1, are not listed. */
enum bfo_field_kind { BFO_FIELD_UINT = 1, BFO_FIELD_HANDLE = 2, BFO_FIELD_RESERVED = 3 };
typedef struct bfo_field {
    const char *name;
    unsigned char offset, width, kind;
} bfo_field;

/* The fields of a fragment type's header in wire order, *n of them; NULL
 * (and *n = 0) for an unknown type. */
static inline const bfo_field *bfo_frag_fields(int type, size_t *n)
{
    static const bfo_field fields_match[] = {
        { "ctx", 2, 2, BFO_FIELD_UINT },
        { "src", 4, 4, BFO_FIELD_UINT },
        { "tag", 8, 4, BFO_FIELD_UINT },
        { "seq", 12, 2, BFO_FIELD_UINT },
        { "rsvd", 14, 2, BFO_FIELD_RESERVED },
    };
    static const bfo_field fields_rndv[] = {
        { "ctx", 2, 2, BFO_FIELD_UINT },
        { "src", 4, 4, BFO_FIELD_UINT },
        { "tag", 8, 4, BFO_FIELD_UINT },
        { "seq", 12, 2, BFO_FIELD_UINT },
        { "rseq", 14, 2, BFO_FIELD_UINT },
        { "msg_len", 16, 8, BFO_FIELD_UINT },
        { "sreq", 24, 8, BFO_FIELD_HANDLE },
        { "dreq", 32, 8, BFO_FIELD_HANDLE },
    };
    static const bfo_field fields_rget[] = {
        { "ctx", 2, 2, BFO_FIELD_UINT },
        { "src", 4, 4, BFO_FIELD_UINT },
        { "tag", 8, 4, BFO_FIELD_UINT },
        { "seq", 12, 2, BFO_FIELD_UINT },
        { "rseq", 14, 2, BFO_FIELD_UINT },
        { "msg_len", 16, 8, BFO_FIELD_UINT },
        { "sreq", 24, 8, BFO_FIELD_HANDLE },
        { "dreq", 32, 8, BFO_FIELD_HANDLE },
        { "raddr", 40, 8, BFO_FIELD_UINT },
        { "rkey", 48, 8, BFO_FIELD_UINT },
    };
    static const bfo_field fields_ack[] = {
        { "rseq", 2, 2, BFO_FIELD_UINT },
        { "rsvd", 4, 4, BFO_FIELD_RESERVED },
        { "sreq", 8, 8, BFO_FIELD_HANDLE },
        { "dreq", 16, 8, BFO_FIELD_HANDLE },
        { "offset", 24, 8, BFO_FIELD_UINT },
    };
    static const bfo_field fields_frag[] = {
        { "rseq", 2, 2, BFO_FIELD_UINT },
        { "rsvd", 4, 4, BFO_FIELD_RESERVED },
        { "dreq", 8, 8, BFO_FIELD_HANDLE },
        { "offset", 16, 8, BFO_FIELD_UINT },
    };
    static const bfo_field fields_put[] = {
        { "rseq", 2, 2, BFO_FIELD_UINT },
        { "slot", 4, 4, BFO_FIELD_UINT },
        { "sreq", 8, 8, BFO_FIELD_HANDLE },
        { "dreq", 16, 8, BFO_FIELD_HANDLE },
        { "offset", 24, 8, BFO_FIELD_UINT },
        { "length", 32, 8, BFO_FIELD_UINT },
        { "raddr", 40, 8, BFO_FIELD_UINT },
        { "rkey", 48, 8, BFO_FIELD_UINT },
    };
    static const bfo_field fields_fin[] = {
        { "rseq", 2, 2, BFO_FIELD_UINT },
        { "slot", 4, 4, BFO_FIELD_UINT },
        { "dreq", 8, 8, BFO_FIELD_HANDLE },
        { "offset", 16, 8, BFO_FIELD_UINT },
        { "length", 24, 8, BFO_FIELD_UINT },
        { "ctx", 32, 2, BFO_FIELD_UINT },
        { "seq", 34, 2, BFO_FIELD_UINT },
        { "rsvd", 36, 4, BFO_FIELD_RESERVED },
    };
    static const bfo_field fields_restart[] = {
        { "rseq", 2, 2, BFO_FIELD_UINT },
        { "ctx", 4, 2, BFO_FIELD_UINT },
        { "seq", 6, 2, BFO_FIELD_UINT },
        { "src", 8, 4, BFO_FIELD_UINT },
        { "rsvd", 12, 4, BFO_FIELD_RESERVED },
        { "sreq", 16, 8, BFO_FIELD_HANDLE },
        { "dreq", 24, 8, BFO_FIELD_HANDLE },
    };
    static const bfo_field fields_railctl[] = {
        { "rail", 2, 2, BFO_FIELD_UINT },
        { "epoch", 4, 4, BFO_FIELD_UINT },
        { "nonce", 8, 8, BFO_FIELD_UINT },
    };
    switch (type) {
    case BFO_FRAG_MATCH: *n = 5; return fields_match;
    case BFO_FRAG_RNDV: *n = 8; return fields_rndv;
    case BFO_FRAG_RGET: *n = 10; return fields_rget;
    case BFO_FRAG_ACK: *n = 5; return fields_ack;
    case BFO_FRAG_FRAG: *n = 4; return fields_frag;
    case BFO_FRAG_PUT: *n = 8; return fields_put;
    case BFO_FRAG_FIN: *n = 8; return fields_fin;
    case BFO_FRAG_NOTIFY: *n = 7; return fields_restart;
    case BFO_FRAG_RESTARTACK: *n = 7; return fields_restart;
    case BFO_FRAG_RESTARTNACK: *n = 7; return fields_restart;
    case BFO_FRAG_RECVERRNOTIFY: *n = 7; return fields_restart;
    case BFO_FRAG_BROKEN: *n = 3; return fields_railctl;
    case BFO_FRAG_PROBE: *n = 3; return fields_railctl;
    case BFO_FRAG_PROBEACK: *n = 3; return fields_railctl;
    default: *n = 0; return (const bfo_field *)0;
    }
}

/* A decoded frame: the header in the member named after its layout. */
typedef struct bfo_frame {
    uint8_t type;  /* BFO_FRAG_* */
    uint8_t flags;
    union {
        bfo_hdr_match match;
        bfo_hdr_rndv rndv;
        bfo_hdr_rget rget;
        bfo_hdr_ack ack;
        bfo_hdr_frag frag;
        bfo_hdr_put put;
        bfo_hdr_fin fin;
        bfo_hdr_restart restart;
        bfo_hdr_railctl railctl;
    } h;
    const uint8_t *payload; /* bytes after the header (NULL when none) */
    size_t payload_len;
} bfo_frame;

/* Decodes one frame of exactly len bytes.  Returns BFO_OK or
 *   BFO_ERR_TRUNCATED   len is shorter than the type byte or the header
 *   BFO_ERR_BAD_TYPE    unknown fragment type
 *   BFO_ERR_BAD_FLAGS   a flag bit not defined for the type
 *   BFO_ERR_BAD_FIELD   a reserved field is not zero
 *   BFO_ERR_BAD_LENGTH  bytes after the header of a type that carries none
 * It reads nothing beyond buf[len-1].  Field semantics (handles, lengths)
 * are checked by bfo_frame_parse() in bfo_wire.h. */
static inline int bfo_frame_decode(bfo_frame *f, const uint8_t *buf, size_t len)
{
    int rc;
    size_t hs;
    int payload;

    if (len < 2)
        return BFO_ERR_TRUNCATED;
    switch (buf[0]) {
    case BFO_FRAG_MATCH:
        rc = bfo_hdr_match_decode(&f->h.match, buf, len);
        hs = BFO_HDR_MATCH_SIZE;
        payload = 1;
        break;
    case BFO_FRAG_RNDV:
        rc = bfo_hdr_rndv_decode(&f->h.rndv, buf, len);
        hs = BFO_HDR_RNDV_SIZE;
        payload = 1;
        break;
    case BFO_FRAG_RGET:
        rc = bfo_hdr_rget_decode(&f->h.rget, buf, len);
        hs = BFO_HDR_RGET_SIZE;
        payload = 0;
        break;
    case BFO_FRAG_ACK:
        rc = bfo_hdr_ack_decode(&f->h.ack, buf, len);
        hs = BFO_HDR_ACK_SIZE;
        payload = 0;
        break;
    case BFO_FRAG_FRAG:
        rc = bfo_hdr_frag_decode(&f->h.frag, buf, len);
        hs = BFO_HDR_FRAG_SIZE;
        payload = 1;
        break;
    case BFO_FRAG_PUT:
        rc = bfo_hdr_put_decode(&f->h.put, buf, len);
        hs = BFO_HDR_PUT_SIZE;
        payload = 0;
        break;
    case BFO_FRAG_FIN:
        rc = bfo_hdr_fin_decode(&f->h.fin, buf, len);
        hs = BFO_HDR_FIN_SIZE;
        payload = 0;
        break;
    case BFO_FRAG_NOTIFY:
        rc = bfo_hdr_restart_decode(&f->h.restart, buf, len);
        hs = BFO_HDR_RESTART_SIZE;
        payload = 0;
        break;
    case BFO_FRAG_RESTARTACK:
        rc = bfo_hdr_restart_decode(&f->h.restart, buf, len);
        hs = BFO_HDR_RESTART_SIZE;
        payload = 0;
        break;
    case BFO_FRAG_RESTARTNACK:
        rc = bfo_hdr_restart_decode(&f->h.restart, buf, len);
        hs = BFO_HDR_RESTART_SIZE;
        payload = 0;
        break;
    case BFO_FRAG_RECVERRNOTIFY:
        rc = bfo_hdr_restart_decode(&f->h.restart, buf, len);
        hs = BFO_HDR_RESTART_SIZE;
        payload = 0;
        break;
    case BFO_FRAG_BROKEN:
        rc = bfo_hdr_railctl_decode(&f->h.railctl, buf, len);
        hs = BFO_HDR_RAILCTL_SIZE;
        payload = 0;
        break;
    case BFO_FRAG_PROBE:
        rc = bfo_hdr_railctl_decode(&f->h.railctl, buf, len);
        hs = BFO_HDR_RAILCTL_SIZE;
        payload = 0;
        break;
    case BFO_FRAG_PROBEACK:
        rc = bfo_hdr_railctl_decode(&f->h.railctl, buf, len);
        hs = BFO_HDR_RAILCTL_SIZE;
        payload = 0;
        break;
    default:
        return BFO_ERR_BAD_TYPE;
    }
    if (rc != BFO_OK)
        return rc;
    if (buf[1] & ~bfo_frag_flags_allowed(buf[0]))
        return BFO_ERR_BAD_FLAGS;
    if (!payload && len != hs)
        return BFO_ERR_BAD_LENGTH;
    f->type = buf[0];
    f->flags = buf[1];
    f->payload = len > hs ? buf + hs : (const uint8_t *)0;
    f->payload_len = len - hs;
    return BFO_OK;
}

/* Writes the header of frame f: f->type, f->flags, then the fields of the
 * member of f->h named after the type's layout (reserved fields as zero).
 * The payload is not written: it follows the header.  Returns the
 * header's size, or 0 when cap is too small or f->type is unknown. */
static inline size_t bfo_frame_encode(const bfo_frame *f, uint8_t *buf, size_t cap)
{
    size_t n;

    switch (f->type) {
    case BFO_FRAG_MATCH: n = bfo_hdr_match_encode(&f->h.match, buf, cap); break;
    case BFO_FRAG_RNDV: n = bfo_hdr_rndv_encode(&f->h.rndv, buf, cap); break;
    case BFO_FRAG_RGET: n = bfo_hdr_rget_encode(&f->h.rget, buf, cap); break;
    case BFO_FRAG_ACK: n = bfo_hdr_ack_encode(&f->h.ack, buf, cap); break;
    case BFO_FRAG_FRAG: n = bfo_hdr_frag_encode(&f->h.frag, buf, cap); break;
    case BFO_FRAG_PUT: n = bfo_hdr_put_encode(&f->h.put, buf, cap); break;
    case BFO_FRAG_FIN: n = bfo_hdr_fin_encode(&f->h.fin, buf, cap); break;
    case BFO_FRAG_NOTIFY: n = bfo_hdr_restart_encode(&f->h.restart, buf, cap); break;
    case BFO_FRAG_RESTARTACK: n = bfo_hdr_restart_encode(&f->h.restart, buf, cap); break;
    case BFO_FRAG_RESTARTNACK: n = bfo_hdr_restart_encode(&f->h.restart, buf, cap); break;
    case BFO_FRAG_RECVERRNOTIFY: n = bfo_hdr_restart_encode(&f->h.restart, buf, cap); break;
    case BFO_FRAG_BROKEN: n = bfo_hdr_railctl_encode(&f->h.railctl, buf, cap); break;
    case BFO_FRAG_PROBE: n = bfo_hdr_railctl_encode(&f->h.railctl, buf, cap); break;
    case BFO_FRAG_PROBEACK: n = bfo_hdr_railctl_encode(&f->h.railctl, buf, cap); break;
    default: return 0;
    }
    if (n) {
        buf[0] = f->type;
        buf[1] = f->flags;
    }
    return n;
}

#ifdef __cplusplus
}
#endif
#endif /* BFO_CODEC_H */
