// SPDX-License-Identifier: BSD-3-Clause
/* bfo_sink.h - where a transport reports, and where it asks for a peer's
 * address.
 *
 * Part of bfo (see bfo.h).  A transport (bfo_transport.h) runs under
 * bfo_net, which owns the engine.  It reports its completions, frames, rail
 * events and liveness here, with its own rail numbers; bfo_net turns them
 * into the engine's calls (bfo_engine_completion, bfo_engine_frame,
 * bfo_engine_rail_event, bfo_engine_rail_heard) with the engine's rail
 * numbers.  Tokens pass through unchanged.  The same rules as for the
 * engine's calls hold: only from the transport's progress, never from
 * inside a post.  A rail event is passed on whatever the rail's state (the
 * engine ignores one its rail machine does not wait for).
 *
 * A peer's address for one of this transport's rails is looked up when the
 * transport first needs it (to dial), not handed over at init: peers may be
 * added after init (an MPI layer's add_procs).
 */
#ifndef BFO_SINK_H
#define BFO_SINK_H

#include <stddef.h>
#include <stdint.h>

#include "bfo_le.h" /* bfo_place_ticket */

#ifdef __cplusplus
extern "C" {
#endif

/* One rail's address as a transport publishes it: opaque bytes whose
 * layout and length the transport chooses (an IPv4 or IPv6 address and a
 * port, a device's control address, a shared segment's name).  Only the
 * transport that made it reads it. */
#define BFO_ADDR_MAX 64
typedef struct bfo_addr {
    uint16_t len;
    uint8_t bytes[BFO_ADDR_MAX];
} bfo_addr;

typedef struct bfo_sink {
    void *ctx;
    void (*completion)(void *ctx, uint64_t token, int ok);
    /* returns what bfo_engine_frame returns (BFO_ERR_AGAIN: offer it again) */
    int (*frame)(void *ctx, int peer, int rail, const uint8_t *buf, size_t len, uint64_t now);
    void (*rail_event)(void *ctx, int peer, int rail, int ev, uint64_t now);
    /* bfo_engine_rail_heard: the transport heard from the peer on this rail
     * without a frame for the engine (an acknowledgement, a back-pressure
     * keepalive).  May be NULL (a transport that never reports it). */
    void (*heard)(void *ctx, int peer, int rail, uint64_t now);
    /* The address peer published for this transport's rail: BFO_OK, or
     * BFO_ERR_INVALID (no such peer or rail, or the peer published none for
     * it).  May be called from anywhere in the transport, posts included. */
    int (*lookup)(void *ctx, int peer, int rail, bfo_addr *out);
    /* bfo_engine_host_heard: the peer's host answered on this rail at time
     * `at` (its kernel's TCP acknowledgements, its process still there) but
     * its process did not: busy, not dead.  May be NULL. */
    void (*host_heard)(void *ctx, int peer, int rail, uint64_t at);
    /* Receiving in place, for a transport that reads a byte stream:
     * bfo_engine_place, bfo_engine_place_ok and bfo_engine_frame_placed
     * (which may also say BFO_ERR_AGAIN: offer it again later, the payload
     * staying where it is).  place says NULL whenever the frame is to be
     * read whole.  All three NULL, or none. */
    uint8_t *(*place)(void *ctx, int peer, const uint8_t *hdr, size_t have, size_t frame_len, size_t *hdr_len,
                      bfo_place_ticket *ticket);
    int (*place_ok)(void *ctx, bfo_place_ticket ticket);
    int (*frame_placed)(void *ctx, int peer, int rail, const uint8_t *hdr, size_t hdr_len, const uint8_t *payload,
                        size_t payload_len, uint64_t now);
} bfo_sink;

#ifdef __cplusplus
}
#endif
#endif /* BFO_SINK_H */
