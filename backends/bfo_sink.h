/* bfo_sink.h - where a transport that does not own the engine reports.
 *
 * Part of bfo (see bfo.h).  A transport that is one of several under a rail
 * multiplexer (bfo_net.h) reports its completions, frames and rail events
 * here, with its own rail numbers; the multiplexer turns them into the
 * engine's calls (bfo_engine_completion, bfo_engine_frame,
 * bfo_engine_rail_event) with the engine's rail numbers.  Tokens pass
 * through unchanged.  The same rules as for the engine's calls hold: only
 * from the transport's progress, never from inside a post.
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
} bfo_sink;

#endif /* BFO_SINK_H */
