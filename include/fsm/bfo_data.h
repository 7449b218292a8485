// SPDX-License-Identifier: BSD-3-Clause
/* bfo_data.h - a message's data as the layer describes it: one buffer, a
 * list of segments, or pack/unpack callbacks that work from any offset.
 *
 * Part of bfo (see bfo.h).  The layer fills a bfo_data and hands it to
 * bfo_isend_data or bfo_irecv_data (bfo_engine.h); the descriptor (and the
 * segments it points to) is the caller's memory, valid until the request
 * completes.  Every path that reads or writes message data works on the
 * descriptor in place: an eager MATCH, the first bytes of an RNDV, a FRAG at
 * any offset, a restart from offset 0 or from the ACK's offset, an
 * unexpected message copied out when it matches, truncation.
 *
 *   kind              send                        receive
 *   BFO_DATA_CONTIG   buf[0..len)                 buf[0..len)
 *   BFO_DATA_IOV      segs[0..nsegs), in order    segs[0..nsegs), in order
 *   BFO_DATA_PACK     pack(ctx, off, dst, n)      unpack(ctx, off, src, n)
 *
 * len is the message's length (send) or the room for it (receive); for
 * BFO_DATA_IOV it must be the sum of the segments' lengths.  pack copies
 * bytes [off, off+n) of the message into dst; unpack puts src[0..n) at bytes
 * [off, off+n) of the message.  Both are called with any offset, in any
 * order, and more than once for the same bytes (a FRAG resent after a
 * failover is read again); never for bytes beyond len; never from inside
 * another of the engine's calls to them.  They must not call into the engine.
 *
 * Contiguous data (BFO_DATA_CONTIG, or an iovec of one segment) takes the
 * engine's ordinary path, as bfo_isend and bfo_irecv do.  A described
 * message is never sent by RDMA (GET or PUT need one registered region):
 * it goes by copy (RNDV, ACK, FRAGs) above the eager limit.
 *
 * A transport that can read described data itself (bfo_backend.h:
 * post_send_data, and BFO_CAP_SEND_IOV / BFO_CAP_SEND_PACK in a rail's
 * caps) gets a bfo_data_span, the bytes a frame carries, and reads it with
 * bfo_data_span_gather (pointers into the layer's memory, for writev) or
 * bfo_data_span_copy (into memory of its own; calls pack).  Otherwise the
 * engine packs into one of its staging buffers (bfo_config.data_stages).
 */
#ifndef BFO_DATA_H
#define BFO_DATA_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

enum bfo_data_kind {
    BFO_DATA_CONTIG = 0, /* one buffer */
    BFO_DATA_IOV = 1,    /* a list of segments */
    BFO_DATA_PACK = 2    /* pack / unpack callbacks */
};

/* One segment of an iovec description. */
typedef struct bfo_data_seg {
    void *base;
    size_t len;
} bfo_data_seg;

typedef struct bfo_data {
    int kind;                 /* enum bfo_data_kind */
    size_t len;               /* the message's bytes (send), the room for them (receive) */
    void *buf;                /* BFO_DATA_CONTIG */
    const bfo_data_seg *segs; /* BFO_DATA_IOV: segs[0..nsegs) */
    int nsegs;
    /* BFO_DATA_PACK: pack for a send, unpack for a receive (the other may be NULL) */
    void (*pack)(void *ctx, size_t off, void *dst, size_t n);
    void (*unpack)(void *ctx, size_t off, const void *src, size_t n);
    void *ctx;
} bfo_data;

/* Where an offset lies in an iovec description: its segment, and the
 * message offset at which that segment starts.  A cursor: each seek starts
 * from the last one, so reading a message in order costs O(1) a segment. */
typedef struct bfo_data_pos {
    int seg;
    size_t start;
} bfo_data_pos;

/* The bytes [off, off+len) of a described message that one frame carries,
 * and (BFO_DATA_IOV) the segment where off lies.  The engine keeps it valid
 * until the frame's completion. */
typedef struct bfo_data_span {
    const bfo_data *d;
    size_t off, len;
    bfo_data_pos pos;
} bfo_data_span;

/* 1 when the description is valid: callbacks and segments present, an
 * iovec's lengths adding up to len (and not wrapping).  send: 1 for a send. */
static inline int bfo_data_valid(const bfo_data *d, int send)
{
    size_t sum = 0;
    if (!d)
        return 0;
    switch (d->kind) {
    case BFO_DATA_CONTIG: return !d->len || d->buf;
    case BFO_DATA_PACK: return send ? d->pack != NULL : d->unpack != NULL;
    case BFO_DATA_IOV:
        if (d->nsegs < 0 || (d->nsegs && !d->segs))
            return 0;
        for (int i = 0; i < d->nsegs; i++) {
            if ((d->segs[i].len && !d->segs[i].base) || sum + d->segs[i].len < sum)
                return 0;
            sum += d->segs[i].len;
        }
        return sum == d->len;
    default: return 0;
    }
}

/* Moves the cursor to the segment holding byte off (off < d->len), forward
 * or back from where it is; empty segments are passed over. */
static inline void bfo_data_seek(const bfo_data *d, bfo_data_pos *p, size_t off)
{
    while (off < p->start && p->seg > 0) {
        p->seg--;
        p->start -= d->segs[p->seg].len;
    }
    if (off < p->start) { /* a cursor never set: from the start */
        p->seg = 0;
        p->start = 0;
    }
    while (p->seg < d->nsegs && off >= p->start + d->segs[p->seg].len) {
        p->start += d->segs[p->seg].len;
        p->seg++;
    }
}

/* Bytes [off, off+n) of a send's message into dst (the caller checked that
 * off + n <= d->len); p: the cursor (IOV), moved along. */
static inline void bfo_data_read(const bfo_data *d, bfo_data_pos *p, size_t off, void *dst,
                                 size_t n)
{
    uint8_t *o = (uint8_t *)dst;
    if (!n)
        return;
    if (d->kind == BFO_DATA_CONTIG) {
        memcpy(o, (const uint8_t *)d->buf + off, n);
        return;
    }
    if (d->kind == BFO_DATA_PACK) {
        d->pack(d->ctx, off, o, n);
        return;
    }
    bfo_data_seek(d, p, off);
    while (n && p->seg < d->nsegs) {
        const bfo_data_seg *s = &d->segs[p->seg];
        size_t in = off - p->start, c = s->len - in;
        if (c > n)
            c = n;
        memcpy(o, (const uint8_t *)s->base + in, c);
        o += c;
        off += c;
        n -= c;
        if (off == p->start + s->len) {
            p->start += s->len;
            p->seg++;
        }
    }
}

/* src[0..n) to bytes [off, off+n) of a receive's message (off + n <=
 * d->len); p: the cursor (IOV), moved along. */
static inline void bfo_data_write(const bfo_data *d, bfo_data_pos *p, size_t off, const void *src,
                                  size_t n)
{
    const uint8_t *i = (const uint8_t *)src;
    if (!n)
        return;
    if (d->kind == BFO_DATA_CONTIG) {
        memcpy((uint8_t *)d->buf + off, i, n);
        return;
    }
    if (d->kind == BFO_DATA_PACK) {
        d->unpack(d->ctx, off, i, n);
        return;
    }
    bfo_data_seek(d, p, off);
    while (n && p->seg < d->nsegs) {
        const bfo_data_seg *s = &d->segs[p->seg];
        size_t in = off - p->start, c = s->len - in;
        if (c > n)
            c = n;
        memcpy((uint8_t *)s->base + in, i, c);
        i += c;
        off += c;
        n -= c;
        if (off == p->start + s->len) {
            p->start += s->len;
            p->seg++;
        }
    }
}

/* For a transport: bytes [skip, skip+n) of the span into dst (skip + n <=
 * s->len); pack is called for packed data. */
static inline void bfo_data_span_copy(const bfo_data_span *s, size_t skip, void *dst, size_t n)
{
    bfo_data_pos p = s->pos;
    bfo_data_read(s->d, &p, s->off + skip, dst, n);
}

/* For a transport that writes from the layer's memory (writev): pointers to
 * the span's bytes from skip on, at most max pieces; returns how many, and
 * *bytes how many bytes they hold (less than the rest when max ran out).
 * Packed data has no pointers: 0 (copy it with bfo_data_span_copy). */
static inline int bfo_data_span_gather(const bfo_data_span *s, size_t skip, bfo_data_seg *out,
                                       int max, size_t *bytes)
{
    const bfo_data *d = s->d;
    size_t off = s->off + skip, n = skip < s->len ? s->len - skip : 0;
    int k = 0;
    *bytes = 0;
    if (!n || max <= 0 || d->kind == BFO_DATA_PACK)
        return 0;
    if (d->kind == BFO_DATA_CONTIG) {
        out[0].base = (uint8_t *)d->buf + off;
        out[0].len = n;
        *bytes = n;
        return 1;
    }
    bfo_data_pos p = s->pos;
    bfo_data_seek(d, &p, off);
    while (n && k < max && p.seg < d->nsegs) {
        const bfo_data_seg *g = &d->segs[p.seg];
        size_t in = off - p.start, c = g->len - in;
        if (c > n)
            c = n;
        if (c) {
            out[k].base = (uint8_t *)g->base + in;
            out[k++].len = c;
        }
        off += c;
        n -= c;
        *bytes += c;
        p.start += g->len;
        p.seg++;
    }
    return k;
}

/* 1 when the span lies inside one segment (or one buffer): *base then
 * points at its first byte. */
static inline int bfo_data_span_flat(const bfo_data_span *s, const void **base)
{
    bfo_data_seg g;
    size_t b;
    if (s->d->kind == BFO_DATA_PACK || bfo_data_span_gather(s, 0, &g, 1, &b) != 1 || b != s->len)
        return 0;
    *base = g.base;
    return 1;
}

#ifdef __cplusplus
}
#endif
#endif /* BFO_DATA_H */
