// SPDX-License-Identifier: BSD-3-Clause
/* bfo_backend.h - what a transport gives the engine, and what it reports.
 *
 * Part of bfo (see bfo.h).  A backend (TCP, verbs, the simulator) turns the
 * engine's posts into wire operations and reports back through four engine
 * calls (each also takes `now`):
 *     bfo_engine_completion(e, token, ok)       every post completes once
 *     bfo_engine_frame(e, peer, rail, buf, len) a frame arrived
 *     bfo_engine_rail_event(e, peer, rail, ev)  BFO_EV_CONNECTED,
 *                                               BFO_EV_CONNECTED_PROVEN,
 *                                               BFO_EV_CONNECT_FAILED,
 *                                               BFO_EV_RAIL_ERROR
 *                                               (peer BFO_ALL_PEERS: all)
 *     bfo_engine_rail_heard(e, peer, rail)      the transport heard from the
 *                                               peer on this rail without a
 *                                               frame for the engine: an
 *                                               acknowledgement, or a keepalive
 *                                               the peer sends while it applies
 *                                               back-pressure (the rail is
 *                                               alive; harmless in any state).
 *                                               On a rail being connected
 *                                               (CONNECTING, RECONNECTING): the
 *                                               peer's host answers (the
 *                                               connection is made, its hello
 *                                               waits for a process that
 *                                               computes); each call restarts
 *                                               the unreachable grace of a peer
 *                                               with no live rail, so say it at
 *                                               least once per grace while that
 *                                               lasts, and only then
 *
 * CONNECTIONS ON FIRST USE.  bfo_engine_init connects nothing (unless
 * bfo_config.connect_at_init): every rail starts DORMANT, and the engine
 * calls connect for every rail of a peer when it first has a frame for it
 * and no rail of it is UP.  The peer may connect first: report CONNECTED
 * for a connection the peer made (accepted) on a DORMANT rail as for any
 * other; the engine probes and admits it without calling connect.
 *
 * UP AT THE HANDSHAKE.  A transport whose connection set-up proves the
 * peer both ways (each end answers the other's fresh nonce with a MAC only
 * the peer's process can make, over that connection: the dialer has
 * verified the acceptor's proof and sent its own, the acceptor has verified
 * that) reports BFO_EV_CONNECTED_PROVEN instead of BFO_EV_CONNECTED, on
 * both sides once each side's proof is in.  The engine admits the rail at
 * once, with no PROBE round trip (the handshake showed the peer alive and
 * the connection working both ways), and may post on it from inside the
 * call: the dialer's frames follow its proof on the connection.  Report it
 * before any frame of that connection (a frame that comes first is taken
 * all the same).  A transport whose hellos are not authenticated reports
 * BFO_EV_CONNECTED: the engine probes the rail before it carries data.
 *
 * FAILURE DETECTION.  The engine maps a silent rail out within about
 * heartbeat + probe_timeout (bfo_config): a heartbeat probe that gets no
 * PROBEACK while nothing at all is heard from the peer on the rail for
 * probe_timeout.  A transport that can tell the peer is alive though its
 * frames are held up (a receiver not reading a stalled connection) says so
 * with bfo_engine_rail_heard, or such a stall longer than that looks like a
 * dead rail.
 *
 * LEAVING.  A rank that finishes says BYE on every rail before it closes
 * (bfo_engine_leave); its peers then take its connections' ends as no
 * failure.  The engine tells the backend which connections part (part,
 * below), so that their ends are not logged or counted as failures.
 *
 * THE GUARANTEES THE ENGINE RELIES ON
 *   1. A completion with ok != 0 means the peer received the frame (or the
 *      RDMA data is in place).  A successful write() into a socket is not
 *      that: a TCP backend acknowledges delivery from the peer.
 *   2. Every operation that may not have arrived completes with ok == 0,
 *      even if it did arrive.  The protocol handles that case.
 *   3. After a rail error, every operation in flight on that rail completes
 *      (with ok == 0), so nothing waits forever.
 *   4. Frames of one rail arrive in the order they were posted on it;
 *      across rails there is no order.
 * A post that cannot be carried out at all returns non-zero; the engine
 * then treats it as completed with an error.
 */
#ifndef BFO_BACKEND_H
#define BFO_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "bfo_data.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BFO_ALL_PEERS (-1)

/* One piece of a frame to send: the engine sends a header and, for MATCH,
 * RNDV and FRAG, a piece of the user's buffer (or of a staging buffer, for
 * described data: post_send_data below). */
typedef struct bfo_iov {
    const void *base;
    size_t len;
} bfo_iov;

/* Capabilities of a rail. */
enum bfo_rail_caps {
    BFO_CAP_RDMA = 1,      /* post_write and post_read work on this rail */
    BFO_CAP_SEND_IOV = 2,  /* post_send_data takes iovec data (BFO_DATA_IOV) on this rail */
    BFO_CAP_SEND_PACK = 4  /* post_send_data takes packed data (BFO_DATA_PACK) on this rail */
};

/* What a registration is for (reg_mem's access, bits).  Reading the
 * buffer as the local source of this side's own RDMA write needs none. */
enum bfo_mem_access {
    BFO_MEM_REMOTE_READ = 1,  /* a peer reads it: the source of a GET (the sender's buffer) */
    BFO_MEM_REMOTE_WRITE = 2, /* a peer writes into it: the target of a PUT (the receiver's) */
    BFO_MEM_LOCAL_WRITE = 4   /* this side's RDMA read lands in it: the receiver's, for a GET */
};

typedef struct bfo_backend {
    void *ctx; /* passed back to every function */

    /* Sends one frame, the concatenation of iov[0..iovcnt), to peer over
     * rail.  The engine keeps the memory valid until the completion. */
    int (*post_send)(void *ctx, int peer, int rail, const bfo_iov *iov, int iovcnt,
                     uint64_t token);

    /* RDMA: write local[0..len) to the peer's memory at raddr, or read the
     * peer's memory at raddr into local, on this rail with key: the peer's
     * key for this rail (what the peer's reg_mem gave for its rail of this
     * number, 0 for a rail that needs none).  The local memory lies inside a
     * region the engine registered with reg_mem.  Only called on rails whose
     * caps have BFO_CAP_RDMA.  NULL when no rail can RDMA. */
    int (*post_write)(void *ctx, int peer, int rail, const void *local, size_t len,
                      uint64_t raddr, uint32_t key, uint64_t token);
    int (*post_read)(void *ctx, int peer, int rail, void *local, size_t len,
                     uint64_t raddr, uint32_t key, uint64_t token);

    /* Registers buf[0..len) for RDMA, for the role access says (enum
     * bfo_mem_access below, one or more bits): the engine asks for what
     * the buffer's role in its message needs and no more, so a peer can
     * read only a GET's source and write only a PUT's target.  *raddr is
     * what the peer names it by; keys[rail] (one per rail,
     * bfo_config.nrails of them, zeroed by the caller) is the key a peer's
     * operation on that rail needs: a backend whose rails sit on several
     * devices gives each rail its own device's key and leaves the entries
     * of rails that need none at 0.  *handle is the backend's name for the
     * registration, which the engine gives back to dereg_mem when the
     * request completes (after which the engine uses neither the keys nor
     * the buffer).  Returns 0, or non-zero when it cannot (the engine then
     * uses a copy protocol for that message; the backend keeps nothing).
     * The engine registers a rendezvous buffer once per request (again,
     * for the union of both roles, if a restarted message needs another).
     * A backend may keep a registration cache if registering is slow: it
     * hands a cached region out again only for the same buffer, length
     * and access (never a larger region: its keys would open memory the
     * request does not own), and drops every cached region a released
     * range overlaps (bfo_transport_ops.mem_released, bfo_net_mem_released)
     * before that memory can be mapped again.  Both NULL: no RDMA (the
     * engine uses the copy protocols only). */
    int (*reg_mem)(void *ctx, void *buf, size_t len, unsigned access, uint64_t *raddr,
                   uint32_t *keys, uint64_t *handle);
    void (*dereg_mem)(void *ctx, uint64_t handle);

    /* Starts (re)connecting a rail to a peer; the result comes back as a
     * BFO_EV_CONNECTED (or BFO_EV_CONNECTED_PROVEN) or
     * BFO_EV_CONNECT_FAILED rail event.  Called when
     * the engine first needs the peer (connections on first use, above),
     * at each reconnect, and at init only with bfo_config.connect_at_init;
     * a non-zero return is a failed attempt (CONNECT_FAILED). */
    int (*connect)(void *ctx, int peer, int rail);

    /* Optional (may be NULL).  The engine mapped the rail out for this peer
     * (its probe timed out, the peer's notice said so, ...): drop the
     * connection now, so that every operation in flight on it completes
     * with ok == 0 at once rather than at the reconnect, after the back-off;
     * the engine then sends them again over the other rails.  Called from
     * inside engine calls (even from bfo_engine_frame): mark the connection
     * and report from the next progress, like any rail error. */
    void (*disconnect)(void *ctx, int peer, int rail);

    /* What a rail can do (BFO_CAP_*) and its bandwidth in MB/s (weights
     * for striping; 0 counts as 1). */
    unsigned (*rail_caps)(void *ctx, int rail);
    unsigned (*rail_bandwidth)(void *ctx, int rail);

    /* Optional (may be NULL).  Sends one frame, hdr followed by the bytes
     * of a described message that data names (bfo_data.h): the engine calls
     * it for a MATCH, RNDV or FRAG of a message given to bfo_isend_data,
     * on a rail whose caps have BFO_CAP_SEND_IOV or BFO_CAP_SEND_PACK for
     * the description's kind.  *hdr and *data stay valid until the
     * completion; read the bytes when it suits (bfo_data_span_gather gives
     * pointers for writev, bfo_data_span_copy copies, calling the layer's
     * pack), as often as needed.  Without it, or on rails without the cap,
     * the engine gives post_send one piece: a segment that holds the whole
     * range, or one of its staging buffers (bfo_config.data_stages) that it
     * packed the bytes into. */
    int (*post_send_data)(void *ctx, int peer, int rail, const bfo_iov *hdr,
                          const bfo_data_span *data, uint64_t token);

    /* Optional (may be NULL).  The rail's connection to this peer is parting:
     * the peer said goodbye (its BYE), or this side leaves
     * (bfo_engine_leave).  Keep the connection (this side's BYE may still
     * be on it, and the peer acknowledges it), send nothing more of your
     * own on it but what the engine posts, and take its end, when the peer
     * closes it, as no failure: report RAIL_ERROR as for any end (the
     * engine ignores it now) and complete what is in flight with ok == 0,
     * but say nothing of it at the default log level and do not count it
     * among the connections lost.  For good: a later connection to this
     * peer on this rail is parted too.  Called from inside engine calls
     * (bfo_engine_frame, bfo_engine_leave): only mark. */
    void (*part)(void *ctx, int peer, int rail);
} bfo_backend;

#ifdef __cplusplus
}
#endif
#endif /* BFO_BACKEND_H */
