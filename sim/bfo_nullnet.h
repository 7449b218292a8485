// SPDX-License-Identifier: BSD-3-Clause
/* bfo_nullnet.h - the cheapest transport: two engines, one process, no
 * allocation.  Frames go through a ring carved from memory given at setup;
 * pumping delivers them in order and completes them at once.  Every
 * fail_every-th operation is delivered but completed with an error (the
 * hard case of the protocol), and every lose_every-th is not delivered and
 * completed with an error, to run the failover paths without allocating;
 * nn_rail_down() fails a rail on both sides as a transport that lost the
 * connection would.  Used by the allocation test and by `make bench-engine`.
 */
#ifndef BFO_NULLNET_H
#define BFO_NULLNET_H

#include <stdint.h>
#include <string.h>

#include "bfo_engine.h"

typedef struct nn_frame {
    int src, dst, rail;
    uint64_t token;
    size_t len;
    int fail; /* delivered, but its completion reports an error */
    int lose; /* not delivered, and its completion reports an error */
    uint8_t *data;
} nn_frame;

typedef struct nullnet {
    bfo_engine *eng[2];
    bfo_backend be[2];
    int rank_of[2];
    nn_frame *ring;
    int cap, head, count, nrails;
    size_t frame_max;
    uint64_t ops, fail_every, lose_every, now;
    int connects[2][BFO_MAX_RAILS];
    struct nn_ep { struct nullnet *nn; int rank; } ep[2];
} nullnet;

static inline int nn_post(void *ctx, int peer, int rail, const bfo_iov *iov, int iovcnt,
                          uint64_t token)
{
    struct nn_ep *ep = (struct nn_ep *)ctx;
    nullnet *nn = ep->nn;
    nn_frame *f;
    size_t len = 0;
    if (nn->count == nn->cap)
        return -1; /* ring full: the engine treats it as a failed post */
    f = &nn->ring[(nn->head + nn->count) % nn->cap];
    for (int i = 0; i < iovcnt; i++) {
        if (len + iov[i].len > nn->frame_max)
            return -1;
        memcpy(f->data + len, iov[i].base, iov[i].len);
        len += iov[i].len;
    }
    f->src = ep->rank;
    f->dst = peer;
    f->rail = rail;
    f->token = token;
    f->len = len;
    nn->count++;
    nn->ops++;
    f->fail = nn->fail_every && nn->ops % nn->fail_every == 0;
    f->lose = nn->lose_every && nn->ops % nn->lose_every == 0;
    return 0;
}

static inline int nn_connect(void *ctx, int peer, int rail)
{
    struct nn_ep *ep = (struct nn_ep *)ctx;
    (void)peer;
    ep->nn->connects[ep->rank][rail] = 1;
    return 0;
}

/* mem: frames * frame_max bytes plus the ring; nn_mem_size tells how many. */
static inline size_t nn_mem_size(int frames, size_t frame_max)
{
    return (size_t)frames * (sizeof(nn_frame) + frame_max);
}

/* The configuration of rank (0 or 1) of the nullnet's pair on its rails:
 * zero but for those; the caller sets the rest. */
static inline bfo_config nn_config(const nullnet *nn, int rank)
{
    bfo_config c;
    memset(&c, 0, sizeof c);
    c.rank = rank;
    c.nranks = 2;
    c.nrails = nn->nrails;
    return c;
}

static inline void nn_init(nullnet *nn, int nrails, int frames, size_t frame_max, void *mem)
{
    memset(nn, 0, sizeof *nn);
    nn->nrails = nrails;
    nn->cap = frames;
    nn->frame_max = frame_max;
    nn->ring = (nn_frame *)mem;
    uint8_t *data = (uint8_t *)mem + (size_t)frames * sizeof(nn_frame);
    for (int i = 0; i < frames; i++)
        nn->ring[i].data = data + (size_t)i * frame_max;
    nn->now = 1000;
    for (int i = 0; i < 2; i++) {
        nn->ep[i].nn = nn;
        nn->ep[i].rank = i;
        memset(&nn->be[i], 0, sizeof nn->be[i]);
        nn->be[i].ctx = &nn->ep[i];
        nn->be[i].post_send = nn_post;
        nn->be[i].connect = nn_connect;
    }
}

/* Delivers and completes what is in the ring; returns frames moved. */
static inline int nn_pump(nullnet *nn)
{
    int moved = 0;
    for (int a = 0; a < 2; a++)
        for (int r = 0; r < nn->nrails; r++)
            if (nn->connects[a][r]) {
                nn->connects[a][r] = 0;
                for (int k = 0; k < 2; k++) {
                    int cs = nn->eng[k]->peers[1 - k].rail[r].fsm.cs;
                    if (bfo_rail_accepts(cs, BFO_EV_CONNECTED))
                        bfo_engine_rail_event(nn->eng[k], 1 - k, r, BFO_EV_CONNECTED, nn->now);
                }
            }
    while (nn->count) {
        nn_frame f = nn->ring[nn->head];
        int ok;
        if (!f.lose &&
            bfo_engine_frame(nn->eng[f.dst], f.src, f.rail, f.data, f.len, nn->now) == BFO_ERR_AGAIN)
            break;
        nn->head = (nn->head + 1) % nn->cap;
        nn->count--;
        ok = !f.fail && !f.lose;
        bfo_engine_completion(nn->eng[f.src], f.token, ok);
        moved++;
    }
    return moved;
}

/* The connection of one rail is gone: both engines hear RAIL_ERROR (the
 * frames still in the ring are delivered or lost as they were going to be;
 * the engines' back-off then reconnects the rail through nn_connect). */
static inline void nn_rail_down(nullnet *nn, int rail)
{
    for (int k = 0; k < 2; k++) {
        int cs = nn->eng[k]->peers[1 - k].rail[rail].fsm.cs;
        if (bfo_rail_accepts(cs, BFO_EV_RAIL_ERROR))
            bfo_engine_rail_event(nn->eng[k], 1 - k, rail, BFO_EV_RAIL_ERROR, nn->now);
    }
}

#endif /* BFO_NULLNET_H */
