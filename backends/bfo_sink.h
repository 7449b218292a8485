/* bfo_sink.h - where a transport that does not own the engine reports.
 *
 * Part of bfo (see bfo.h).  A transport that is one of several under a rail
 * multiplexer (bfo_net.h) reports its completions, frames, rail events and
 * liveness here, with its own rail numbers; the multiplexer turns them into
 * the engine's calls (bfo_engine_completion, bfo_engine_frame,
 * bfo_engine_rail_event, bfo_engine_rail_heard) with the engine's rail
 * numbers.  Tokens pass through unchanged.  The same rules as for the
 * engine's calls hold: only from the transport's progress, never from
 * inside a post.  A rail event is passed on whatever the rail's state (the
 * engine ignores one its rail machine does not wait for).
 */
#ifndef BFO_SINK_H
#define BFO_SINK_H

#include <stddef.h>
#include <stdint.h>

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
} bfo_sink;

#endif /* BFO_SINK_H */
