// SPDX-License-Identifier: BSD-3-Clause
/* bfo_engine.h - the point-to-point engine: matching, protocols, striping
 * and failover, bound to the generated machines.  Design: docs/engine-design.md.
 *
 * Part of bfo (see bfo.h).  Header-only; no allocation after init (every
 * pool is carved out of the memory given to bfo_engine_init); no I/O (a
 * bfo_backend does it); time is an argument (`now`, nanoseconds).
 *
 * Protocols: eager (MATCH) at or below eager_limit; above it RDMA GET
 * (RGET, the receiver reads, FIN) or RDMA PUT (RNDV, the receiver answers
 * PUTs, the sender writes and FINs) when the message reaches rdma_min, both
 * buffers can be registered and an RDMA rail to the peer is UP; otherwise
 * rendezvous by copy (RNDV, ACK, FRAGs).  Data of a large message is striped
 * over the peer's UP rails in proportion to their bandwidth; eager and
 * control messages go to the UP rail with the fewest operations in flight
 * (the lowest-numbered on a tie).  Failures: see docs/engine-design.md.
 *
 * USE
 *   bfo_config cfg = {0};  cfg.rank = r; cfg.nranks = n; cfg.nrails = 2;
 *   size_t need = bfo_engine_mem_size(&cfg);      // then give that much
 *   bfo_engine_init(&e, &cfg, &backend, mem, need, now);   // a macro: LAYOUTS
 *   bfo_isend(&e, &req, buf, len, peer, ctx, tag, now);
 *   bfo_irecv(&e, &req, buf, cap, BFO_ANY_SOURCE, ctx, BFO_ANY_TAG, now);
 *   while (!bfo_test(&req)) { backend_progress(); bfo_engine_progress(&e, now); }
 *   req.status: BFO_OK, BFO_ERR_TRUNCATE, BFO_ERR_PEER_UNREACHABLE
 *
 * NOT RE-ENTRANT: a backend must not call bfo_engine_* from inside a post.
 *
 * LAYOUTS (the ABI).  BFO_MAX_RAILS (here) and BFO_MAX_ACTIONS (bfo_core.h)
 * set the size of bfo_peer, bfo_stats, bfo_engine and bfo_step.  Every
 * translation unit that shares these structs must be compiled with the same
 * values: the engine is inline code, compiled into each unit with that
 * unit's layout, so an engine set up by a library built with BFO_MAX_RAILS=8
 * and then used by a program compiled with 16 is silent memory corruption.
 * BFO_NO_TRACE and BFO_LE_PORTABLE change code only, not layouts.
 *   bfo_engine_init is a macro: it passes BFO_ABI_HERE, the layout of the
 *   caller's unit (bfo_abi), to bfo_engine_init_abi, which compares it with
 *   its own and returns BFO_ERR_ABI, touching nothing, when they differ.
 *   Called directly the two are one unit and always agree; the check counts
 *   when a library sets the engine up for a program compiled apart.  Such a
 *   library takes the program's descriptor the same way, and compares it
 *   with the one it was built with before it touches anything of the
 *   program's:
 *       // mylib.h, compiled into the program
 *       int mylib_init_abi(mylib **out, const bfo_config *cfg, const bfo_abi *caller);
 *       #define mylib_init(out, cfg) mylib_init_abi(out, cfg, BFO_ABI_HERE)
 *       // mylib.c, compiled into the library, with the library's options
 *       int mylib_init_abi(mylib **out, const bfo_config *cfg, const bfo_abi *caller)
 *       {
 *           char why[256];
 *           int rc = bfo_abi_check(caller, BFO_ABI_HERE, why, sizeof why);
 *           if (rc != BFO_OK) {  // BFO_ERR_ABI: "BFO_MAX_RAILS is 16 in the caller, 8 in the library; ..."
 *               fprintf(stderr, "mylib_init: %s\n", why);
 *               return rc;
 *           }
 *           ...
 *           rc = bfo_engine_init_abi(&l->eng, cfg, &be, mem, len, now, caller);
 *       }
 *   An installed bfo records the values its archives were built with in
 *   bfo.pc (Cflags: -DBFO_MAX_RAILS=N -DBFO_MAX_ACTIONS=N), so a program
 *   built with `pkg-config --cflags bfo` has the library's layout; `make
 *   BFO_MAX_RAILS=N` builds (and installs) bfo with another value.
 */
#ifndef BFO_ENGINE_H
#define BFO_ENGINE_H

/* The types the API below names, the compile-time options. */
#include "bfo_engine_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* >>api_list - THE API ---------------------------------------------------- */

/* Every public function of the engine, with what it returns.  The types it
 * names (bfo_config, bfo_request, bfo_envelope, bfo_status, bfo_stats,
 * bfo_engine) are bfo_engine_types.h's; the implementation is the parts
 * included after this list, each a concern of its own (docs/engine-design.md,
 * "The parts").  Error codes are BFO_ERRORS in bfo_core.h.  bfo_engine_init,
 * the call to use, is a macro, defined with bfo_engine_init_abi in
 * bfo_engine_init.h. */

/* --- Set up */

/* Gives every zero field of *cfg the default the engine takes for it, and
 * bounds frag_pipeline and rndv_first, as bfo_engine_init and
 * bfo_engine_mem_size do on their copy (the defaults: bfo_config,
 * bfo_engine_types.h): what the engine will use, for a transport that
 * sizes its buffers to it.  A NULL cfg is ignored. */
static inline void bfo_config_defaults(bfo_config *cfg);

/* Bytes of memory bfo_engine_init needs for this configuration. */
static inline size_t bfo_engine_mem_size(const bfo_config *cfg_in);

/* Sets up the engine in mem (at least bfo_engine_mem_size bytes) and starts
 * connecting every rail to every peer.  caller is the layout the engine's
 * user was compiled with (BFO_ABI_HERE in its unit): when it is not this
 * unit's, BFO_ERR_ABI and nothing touched, not even *e, which is the
 * caller's size (bfo_abi_check says what differs).  Returns BFO_OK,
 * BFO_ERR_ABI, BFO_ERR_INVALID (also for a NULL caller) or
 * BFO_ERR_NO_MEMORY.  Call it as bfo_engine_init, below, which passes the
 * caller's layout; call it yourself in a library that sets an engine up
 * for a program compiled apart, with the program's descriptor. */
static inline int bfo_engine_init_abi(bfo_engine *e, const bfo_config *cfg, const bfo_backend *be,
                                      void *mem, size_t mem_len, uint64_t now,
                                      const bfo_abi *caller);

/* bfo_engine_init(e, cfg, be, mem, mem_len, now): bfo_engine_init_abi with
 * the caller's own layout (BFO_ABI_HERE), defined with it in bfo_engine_init.h. */

/* --- What the layer calls: send, receive, test */

/* Starts sending len bytes of buf with envelope env (peer, ctx, src, tag,
 * flags).  A send to this rank itself is matched and ordered as any other,
 * with no rail.  Returns BFO_OK (then poll bfo_test), BFO_ERR_INVALID,
 * BFO_ERR_PEER_UNREACHABLE, BFO_ERR_PEER_LEFT (the peer said goodbye),
 * BFO_ERR_PROC_FAILED (its process was reported dead, bfo_peer_failed) or
 * BFO_ERR_LEFT (this side left, bfo_engine_leave): completed at once with
 * that status; or BFO_ERR_NO_MEMORY (no request slot left: complete some
 * first).  A request that fails later has one of the same four statuses. */
static inline int bfo_isend_env(bfo_engine *e, bfo_request *r, const void *buf, size_t len,
                                const bfo_envelope *env, uint64_t now);

/* Posts a receive of at most cap bytes matching env (peer and src, or
 * BFO_ANY_SOURCE for both; ctx; tag or BFO_ANY_TAG).  Returns BFO_OK,
 * BFO_ERR_INVALID, BFO_ERR_PEER_UNREACHABLE, BFO_ERR_PEER_LEFT (the peer
 * said goodbye and every message it sent before came: one that came is
 * still received), BFO_ERR_PROC_FAILED (its process was reported dead) or
 * BFO_ERR_LEFT (this side left): completed at once with that status (for
 * BFO_ANY_SOURCE: when no peer is left that may send; BFO_ERR_PEER_LEFT
 * when every one of them said goodbye, BFO_ERR_PROC_FAILED when one of
 * them failed); BFO_ERR_PROC_FAILED_PENDING for BFO_ANY_SOURCE while a
 * process failure is not acknowledged (bfo_failure_ack) and no message
 * here matches it: completed at once, as a posted one is when a process
 * fails; or BFO_ERR_NO_MEMORY (no request slot left: a receive is a
 * request too, max_requests counts it). */
static inline int bfo_irecv_env(bfo_engine *e, bfo_request *r, void *buf, size_t cap,
                                const bfo_envelope *env, uint64_t now);

/* bfo_isend_env where ranks are engine peers: src is this rank, flags 0. */
static inline int bfo_isend(bfo_engine *e, bfo_request *r, const void *buf, size_t len, int peer,
                            uint32_t ctx, int tag, uint64_t now);

/* bfo_irecv_env where ranks are engine peers: src is peer.  (Always
 * inlined: bfo_engine_api.h declares it so.) */
static inline int bfo_irecv(bfo_engine *e, bfo_request *r, void *buf, size_t cap, int peer,
                            uint32_t ctx, int tag, uint64_t now);

/* Starts sending a message described by d (bfo_data.h: a buffer, an iovec
 * list, or a pack callback that works from any offset): d->len bytes, read
 * in place whenever a frame needs them (also again, after a failover).  d
 * and what it points to must stay valid and unchanged until the request
 * completes.  A description that is one buffer goes as bfo_isend; any
 * other never by RDMA (copy protocol).  Returns as bfo_isend, and
 * BFO_ERR_INVALID for an invalid description (NULL, an unknown kind, no
 * pack callback, segments that do not add up to d->len). */
static inline int bfo_isend_data(bfo_engine *e, bfo_request *r, const bfo_data *d, int peer,
                                 uint32_t ctx, int tag, uint64_t now);

/* bfo_isend_data with an envelope (as bfo_isend_env). */
static inline int bfo_isend_data_env(bfo_engine *e, bfo_request *r, const bfo_data *d,
                                     const bfo_envelope *env, uint64_t now);

/* Posts a receive into a message description (unpack callback for
 * BFO_DATA_PACK): at most d->len bytes, written in place as they arrive,
 * at any offset and in any order (and again after a restart).  Longer
 * messages are cut to d->len (BFO_ERR_TRUNCATE, r->length the message's).
 * d must stay valid until the request completes.  Returns as bfo_irecv,
 * and BFO_ERR_INVALID for an invalid description (as bfo_isend_data, with
 * unpack for pack). */
static inline int bfo_irecv_data(bfo_engine *e, bfo_request *r, const bfo_data *d, int peer,
                                 uint32_t ctx, int tag, uint64_t now);

/* bfo_irecv_data with an envelope (as bfo_irecv_env). */
static inline int bfo_irecv_data_env(bfo_engine *e, bfo_request *r, const bfo_data *d,
                                     const bfo_envelope *env, uint64_t now);

/* 1 when the request is complete (read r->status), else 0. */
static inline int bfo_test(const bfo_request *r);

/* 1 while the engine has not given the peer up (BFO_ERR_PEER_UNREACHABLE:
 * no rail came back within unreachable_grace_ns; for good) and it may
 * still send (it did not leave, or messages it sent before its BYE may
 * still come), else 0; 0 for a peer out of range, and for every peer once
 * this side left.  This rank itself is reachable until it leaves.  A layer
 * whose probe of one peer would otherwise wait forever asks this. */
static inline int bfo_peer_reachable(const bfo_engine *e, int peer);

/* The state of the rail to a peer (a BFO_RAIL_ST_* value of the rail
 * machine, gen/bfo_rail.h: CONNECTING, PROBING, UP, DEMOTED, FAILED,
 * RECONNECTING, ABSENT, RETIRED, LEFT), or 0 for this rank itself and
 * out-of-range arguments.  For a layer that waits for its rails at start,
 * or reports them. */
static inline int bfo_rail_state(const bfo_engine *e, int peer, int rail);

/* The rail's delivered rate to a peer as the engine measures it from its
 * completions (bytes per second; docs/engine-design.md, "Striping by
 * measured rate"): what striping weighs it by and demotion compares.
 * Before anything is measured, the transport's figure (else 1 GB/s); 0 for
 * this rank itself and out-of-range arguments. */
static inline uint64_t bfo_rail_rate(const bfo_engine *e, int peer, int rail);

/* The best rate among the peer's other UP rails whose rate was measured
 * (bytes per second, as bfo_rail_rate): what demotion compares this rail's
 * with.  0 when there is none, for this rank itself and out-of-range
 * arguments. */
static inline uint64_t bfo_rail_best_other_rate(const bfo_engine *e, int peer, int rail);

/* The rail's probe timeout to a peer now (ns): how long a probe may go
 * unanswered before the rail fails (bfo_engine_progress's
 * PROBE_TIMED_OUT): probe_timeout_ns, or more when its probes come back
 * slowly or data waits on it, doubled after recent timeouts, never above
 * silence_ns.  0 for this rank itself and out-of-range arguments. */
static inline uint64_t bfo_rail_probe_timeout(const bfo_engine *e, int peer, int rail);

/* The smoothed round trip of the rail's probes to a peer (ns): 0 until
 * one was measured, for this rank itself and out-of-range arguments. */
static inline uint64_t bfo_rail_rtt(const bfo_engine *e, int peer, int rail);

/* What waits in the engine, for a layer that reports it (bfo_net's dump):
 * unexpected messages (here, no receive matched them yet); messages held
 * out of order (ahead of their peer's sequence), all peers; operations
 * that could not be posted (they complete with an error at the engine's
 * next entry point); operations waiting for an UP rail to the peer (0 for a peer
 * out of range).  Each walks a list: not for a hot path. */
static inline int bfo_engine_unexpected_count(const bfo_engine *e);
static inline int bfo_engine_out_of_order_count(const bfo_engine *e);
static inline int bfo_engine_unposted_count(const bfo_engine *e);
static inline int bfo_peer_waiting_count(const bfo_engine *e, int peer);

/* 1 when the peer said goodbye (its BYE was taken: it finished, and its
 * rails closing are no failure), else 0; 0 for a peer out of range.  Sends
 * to it complete with BFO_ERR_PEER_LEFT; its messages sent before the BYE
 * are still received. */
static inline int bfo_peer_left(const bfo_engine *e, int peer);

/* With bfo_config.done_queue set: the oldest request that completed and was
 * not popped yet (complete: read its status; the caller may reuse it), or
 * NULL when there is none.  Every completion is queued once, also those of
 * requests that bfo_isend or bfo_irecv completed at once (their return
 * BFO_ERR_PEER_UNREACHABLE); a request the caller reuses must be popped
 * first.  Without done_queue: always NULL. */
static inline bfo_request *bfo_done_pop(bfo_engine *e);

/* Cancels a request.  A receive nothing matched yet completes at once
 * with status BFO_ERR_CANCELLED; a send of which nothing was handed to a
 * transport yet (its first message still waits for a rail) completes with
 * BFO_ERR_CANCELLED once the empty MATCH that keeps the peer's sequence
 * whole is delivered (poll bfo_test).  Returns BFO_OK (cancelled, or will
 * be), BFO_ERR_TOO_LATE (it matched, some of it left, it is complete, or a
 * matched probe holds it: it completes as it would have) or
 * BFO_ERR_INVALID (not a live request of this engine). */
static inline int bfo_cancel(bfo_engine *e, bfo_request *r, uint64_t now);

/* bfo_status, what a probe reports: bfo_engine_types.h. */

/* Looks for an unexpected message that a receive with envelope env would
 * match (the one it would take: the oldest that fits) and fills *st, without
 * receiving it.  Returns 1 (found), 0 (none yet: progress and ask again) or
 * BFO_ERR_INVALID (bad envelope, NULL st). */
static inline int bfo_iprobe(bfo_engine *e, const bfo_envelope *env, bfo_status *st,
                             uint64_t now);

/* bfo_iprobe that also takes the message out of matching: msg becomes a
 * receive request that holds it (a rendezvous's data stays at its sender)
 * until bfo_imrecv gives it a buffer.  No other receive or probe sees the
 * message again.  Returns 1 (msg holds it: call bfo_imrecv), 0 (none
 * yet), BFO_ERR_INVALID, or BFO_ERR_NO_MEMORY (no request slot: the
 * message stays where it was). */
static inline int bfo_improbe(bfo_engine *e, bfo_request *msg, const bfo_envelope *env,
                              bfo_status *st, uint64_t now);

/* Receives the message a bfo_improbe gave msg into buf (at most cap
 * bytes); msg then runs as any receive (poll bfo_test).  Returns BFO_OK or
 * BFO_ERR_INVALID (msg holds no matched message, or buf NULL with cap > 0).
 * A rendezvous whose sender was given up meanwhile completes with
 * BFO_ERR_PEER_UNREACHABLE; an eager message is here whole and completes. */
static inline int bfo_imrecv(bfo_engine *e, bfo_request *msg, void *buf, size_t cap,
                             uint64_t now);

/* bfo_imrecv into a description (as bfo_irecv_data).  Returns BFO_OK or
 * BFO_ERR_INVALID (as bfo_imrecv, or an invalid description). */
static inline int bfo_imrecv_data(bfo_engine *e, bfo_request *msg, const bfo_data *d,
                                  uint64_t now);

/* --- What the backend reports (never from inside a post) */

/* Called by the backend for each frame that arrives.  Returns BFO_OK (taken
 * or dropped as duplicate), BFO_ERR_AGAIN (no buffer: offer it again
 * later), BFO_ERR_STALE (dropped: names a finished request or an older
 * restart; or this side left and the frame is not rail control or a BYE),
 * BFO_ERR_PROTOCOL or a bfo_frame_parse error (dropped, counted; the
 * transport may drop the connection; a message beyond the sequence its
 * sender's BYE named is one), BFO_ERR_PEER_UNREACHABLE (this side gave the
 * peer up: the transport must not acknowledge the frame, so that its
 * sender sees an error, and should drop the connection). */
static inline int bfo_engine_frame(bfo_engine *e, int peer, int rail, const uint8_t *buf,
                                   size_t len, uint64_t now);

/* Receiving in place (zero-copy), for a transport that reads frames from a
 * byte stream (TCP): instead of reading a large frame whole into its own
 * buffer, for the engine to copy its payload out, it may read the payload
 * of a FRAG straight into the receive's buffer.
 *
 * bfo_engine_place: hdr holds the first have bytes of a frame of
 * frame_len bytes from peer.  When it is a FRAG of a live receive (its
 * rendezvous answered, a contiguous buffer, the restart sequence current)
 * whose bytes [offset, offset + payload) lie in that buffer, returns where
 * the payload goes, with *hdr_len the engine header's size (the payload is
 * frame_len - *hdr_len bytes, after the header) and *ticket naming the
 * placement; else NULL (read the frame whole, as always; also when have is
 * short of the header).  Changes nothing.
 *
 * bfo_engine_place_ok: 1 while the receive the ticket names still takes
 * bytes (not complete, cancelled or failed, the same restart sequence),
 * else 0.  Ask before every read into the place: once it says 0 the buffer
 * may be the caller's again; read the rest of the payload anywhere else
 * and drop the frame (it is stale).
 *
 * bfo_engine_frame_placed: the frame, once its payload is all in place:
 * hdr and hdr_len as bfo_engine_place gave them, payload where it pointed.
 * The engine takes it as bfo_engine_frame would (and copies nothing); the
 * same returns, never BFO_ERR_AGAIN; BFO_ERR_INVALID for a frame that is
 * not a FRAG.
 *
 * Why it is safe: the bytes written in place before the engine takes the
 * frame are this message's own bytes at their own offsets (a duplicate,
 * or a fragment resent after a restart, carries the same bytes), and none
 * is written once the receive is complete (place_ok). */
static inline uint8_t *bfo_engine_place(const bfo_engine *e, int peer, const uint8_t *hdr, size_t have,
                                        size_t frame_len, size_t *hdr_len, bfo_place_ticket *ticket);
static inline int bfo_engine_place_ok(const bfo_engine *e, bfo_place_ticket ticket);
static inline int bfo_engine_frame_placed(bfo_engine *e, int peer, int rail, const uint8_t *hdr,
                                          size_t hdr_len, const uint8_t *payload, size_t payload_len,
                                          uint64_t now);

/* Called by the backend once per posted operation.  A token that names no
 * operation the backend holds (stale, made up, or of an op that is free or
 * waiting for a rail) is ignored: the generation alone does not tell, a
 * free op keeps the generation its next post will have. */
static inline void bfo_engine_completion(bfo_engine *e, uint64_t token, int ok);
/* The completion of a PROBE or PROBEACK delivered (ok != 0), taken now;
 * 1 when it was one, else 0 and nothing done (give it to
 * bfo_engine_completion later).  Completes no request and runs no timer:
 * for a caller that answers rail control while it holds the rest back
 * (bfo_net's progress thread: the control budget would fill with its
 * answers, and a peer that computes would stop answering probes). */
static inline int bfo_engine_completion_probe(bfo_engine *e, uint64_t token, int ok);

/* Called by the backend: BFO_EV_CONNECTED, BFO_EV_CONNECTED_PROVEN (the
 * connection's handshake proved the peer both ways: the rail is admitted
 * at once, no probe; bfo_backend.h, UP AT THE HANDSHAKE),
 * BFO_EV_CONNECT_FAILED, BFO_EV_RAIL_ERROR or BFO_EV_RAIL_ABSENT (the rail
 * does not reach this peer) for one peer, or every peer (BFO_ALL_PEERS).
 * An event the rail does not wait for (CONNECTED on a rail already probing
 * or up, an error on a rail already failed) changes nothing and is not an
 * error. */
static inline void bfo_engine_rail_event(bfo_engine *e, int peer, int rail, int ev, uint64_t now);

/* Called by the backend when it heard from the peer on this rail without a
 * frame for the engine: a transport acknowledgement, or a keepalive that the
 * peer sends while it applies back-pressure (it is alive, only not reading).
 * The rail is alive: an outstanding heartbeat probe waits probe_timeout from
 * now before it times out (it stays outstanding until its PROBEACK), and the
 * silence timer starts again.  On a rail being connected (CONNECTING,
 * RECONNECTING) it says the peer's host answers (the connection is made,
 * the hello waits for a process that computes): a peer with no live rail
 * has its unreachable grace started over, so it is not given up while its
 * host answers.  Harmless in any rail state; an out-of-range peer or rail,
 * this rank and an unreachable peer are ignored. */
static inline void bfo_engine_rail_heard(bfo_engine *e, int peer, int rail, uint64_t now);

/* Called by the backend when the peer's host answered on this rail at time
 * `at` but its process did not: its kernel acknowledged TCP segments, its
 * HCA an RDMA operation, its process still exists (a pidfd).  The peer is
 * busy (computing, stopped), not dead, and the rail reaches it.  While the
 * peer's process has been silent on every rail since a rail's probe went
 * out, that probe does not time out, nor the silence backstop fire, as
 * long as the host was heard on that rail within host_timeout_ns.  Harmless
 * in any rail state; out-of-range arguments, this rank and an unreachable
 * peer are ignored. */
static inline void bfo_engine_host_heard(bfo_engine *e, int peer, int rail, uint64_t at);

/* --- Timers */

/* Timers: heartbeats, probe timeouts, silence, back-off, unreachable peers.
 * Call it often (every few milliseconds of `now` at least, and well within
 * probe_timeout).  A rail in UP:
 *   HEARTBEAT_DUE    no probe out, and nothing heard or nothing sent for
 *                    heartbeat_ns (a busy sender whose peer went quiet probes);
 *   PROBE_TIMED_OUT  a probe out, and nothing heard for probe_timeout_ns since
 *                    the later of the probe and the last thing heard;
 *   SILENCE_DETECTED nothing heard for silence_ns (the backstop);
 * neither of the last two while the peer is busy: its process silent on
 * every rail since this rail's probe went out, its host heard on this rail
 * within host_timeout_ns (bfo_engine_host_heard).  A gap of more than
 * heartbeat_ns since the last call (the caller computed) is not silence:
 * the rails' clocks move on by it. */
static inline void bfo_engine_progress(bfo_engine *e, uint64_t now);

/* --- Leaving */

/* This rank leaves: it finished (an MPI program's MPI_Finalize) and its
 * backend will close its connections.  Posts a BYE on every rail that is
 * UP or PROBING to every peer that did not leave already, and tells the
 * backend that every connection parts (bfo_backend.part): the peers then
 * take this rank's rails closing as no failure (no map-out, no reconnect,
 * no probe, no grace period, nothing logged).  Every request not complete
 * fails: it completes with BFO_ERR_LEFT once its operations in flight are
 * back (one whose completion proves delivery completes BFO_OK);
 * unexpected messages are dropped.  From then on every new request
 * completes at once with BFO_ERR_LEFT, no rail is probed, timed or
 * reconnected, a PROBE is still answered and a BYE taken, and any other
 * frame is stale (BFO_ERR_STALE).  Progress the backend (and
 * bfo_engine_completion) until bfo_engine_left, for a bounded time, then
 * close it.  Returns BFO_OK (also when called again: nothing more). */
static inline int bfo_engine_leave(bfo_engine *e, uint64_t now);

/* 1 once bfo_engine_leave was called and every BYE it posted completed
 * (delivered or failed: a BYE is not sent again): the backend may close
 * its connections now.  0 before. */
static inline int bfo_engine_left(const bfo_engine *e);

/* --- Process failure (docs/failure-model.md) */

/* The peer's process is dead: the layer says so on the word of one entitled
 * to (the launcher that saw it exit, PMIx's event notification, the
 * survivors' agreement); the rails cannot tell a dead process from a
 * partition.  The peer machine (spec/peer.rl) goes to FAILED, for good:
 *   - every request of the peer not complete fails, as for an unreachable
 *     peer but with BFO_ERR_PROC_FAILED (once its operations in flight are
 *     back), and so does every later one, at once;
 *   - the peer is fenced: every connection to it is dropped (the backend's
 *     disconnect), its frames are refused from then on (bfo_engine_frame
 *     returns BFO_ERR_PEER_UNREACHABLE) and no rail of it is probed or
 *     reconnected, so a process wrongly declared dead hears nothing more
 *     from this rank (failures are fail-stop);
 *   - the failure takes the next place in the order failures are reported
 *     here, and every ANY_SOURCE receive posted, and every one posted
 *     later that no message already here matches, completes with
 *     BFO_ERR_PROC_FAILED_PENDING until bfo_failure_ack acknowledges it.
 * A peer that left in good order (its BYE), or any peer once this rank
 * left, is no failure: the report changes nothing.  A peer given up
 * (UNREACHABLE) becomes FAILED (its requests failed already, with
 * BFO_ERR_PEER_UNREACHABLE).  Reporting a FAILED peer again changes
 * nothing.  Returns BFO_OK, or BFO_ERR_INVALID for a peer out of range or
 * this rank itself. */
static inline int bfo_peer_failed(bfo_engine *e, int peer, uint64_t now);

/* The peer machine's state (a BFO_PEER_ST_* value, gen/bfo_peer.h: SELF,
 * DOWN, REACHABLE, UNREACHABLE, LEAVING, LEFT, PARTED, FAILED), or 0 for a
 * peer out of range. */
static inline int bfo_peer_state(const bfo_engine *e, int peer);

/* Acknowledges every process failure reported so far: ANY_SOURCE receives
 * work again (until the next failure).  Returns how many failures are
 * acknowledged in all (0 or more). */
static inline int bfo_failure_ack(bfo_engine *e);

/* The acknowledged failures, in the order they were reported: fills
 * ranks[0 .. min(n, max)-1] with their peers and returns n, the number
 * acknowledged (ranks may be NULL when max is 0).  Failures reported since
 * the last bfo_failure_ack are not in it. */
static inline int bfo_failure_get_acked(const bfo_engine *e, int *ranks, int max);

/* Revokes context ctx here (ULFM's MPI_Comm_revoke, this rank's half: the
 * group layer spreads it, bfo_group_revoke).  From now on nothing is
 * matched on ctx:
 *   - every receive posted on it and not matched yet completes with
 *     BFO_ERR_REVOKED, and so does every send whose first message has not
 *     left (it is withdrawn, as bfo_cancel does: the peer's sequence is
 *     kept);
 *   - every later bfo_isend, bfo_irecv (and their _env, _data forms) on it
 *     completes at once with BFO_ERR_REVOKED, which it returns;
 *   - messages on it that come, or wait unexpected, are discarded: an
 *     eager one dropped, a rendezvous taken by one of the engine's own
 *     discard receives, so that its sender's request completes;
 *   - requests on it already matched, or whose message left, complete as
 *     they would (BFO_OK, or the failure of their peer).
 * No request on a revoked context hangs for the revocation's sake.  Other
 * contexts are untouched.  Returns BFO_OK (also when ctx was revoked
 * already), BFO_ERR_NO_MEMORY when BFO__MAX_REVOKED (64) contexts are
 * revoked already, BFO_ERR_INVALID for a NULL engine. */
static inline int bfo_revoke(bfo_engine *e, uint32_t ctx, uint64_t now);

/* 1 when context ctx was revoked here (bfo_revoke), else 0. */
static inline int bfo_revoked(const bfo_engine *e, uint32_t ctx);

/* --- Layouts */

/* Compares the layout a caller was compiled with (its BFO_ABI_HERE) with
 * the one a library was built with (the library's BFO_ABI_HERE).  Returns
 * BFO_OK (why gets ""), BFO_ERR_ABI, or BFO_ERR_INVALID (a NULL
 * descriptor).  On an error why[0..whylen) gets what differs, e.g.
 * "BFO_MAX_RAILS is 16 in the caller, 8 in the library; build both with the
 * same options (pkg-config --cflags bfo has the library's)"; why may be
 * NULL. */
static inline int bfo_abi_check(const bfo_abi *caller, const bfo_abi *built, char *why,
                                size_t whylen);

#ifdef __cplusplus
}
#endif

/* >>parts - the implementation, bottom up -------------------------------- */

/* Each part includes the level below it and calls up only through the
 * prototypes of bfo_engine_hooks.h; parts of one level include neither
 * each other nor anything above (tests/check_layers.py, make check-layers).
 * What each owns and may call: docs/engine-design.md, "The parts". */
#include "bfo_engine_types.h"     /*  0: types, options, the config's defaults, the layout */
#include "bfo_engine_hooks.h"     /*  1: predicates; the calls that go up */
#include "bfo_engine_pools.h"     /*  2: pools, handles, ops and their lists, unexpected buffers */
#include "bfo_engine_rate.h"      /*  3: striping by measured rate, demotion, promotion */
#include "bfo_engine_detect.h"    /*  3: failure detector: probe timeouts, evidence */
#include "bfo_engine_post.h"      /*  4: an op onto a rail, described data, the lane */
#include "bfo_engine_match.h"     /*  5: credits; matching bins */
#include "bfo_engine_request.h"   /*  6: a request's life; op completion */
#include "bfo_engine_send.h"      /*  7: send protocols, the send machine's actions */
#include "bfo_engine_recv.h"      /*  7: receive protocols, the receive machine's actions */
#include "bfo_engine_machines.h"  /*  8: the rail and peer machines' actions */
#include "bfo_engine_frame.h"     /*  9: frame arrival: sequence window, per type, entry points */
#include "bfo_engine_relay.h"     /* 10: relay through a third rank */
#include "bfo_engine_revoke.h"    /* 10: process failure reported, acknowledged; revoke */
#include "bfo_engine_init.h"      /* 11: layout check; set-up */
#include "bfo_engine_api.h"       /* 11: entry points: post, query, cancel, probe, leave, progress */

#endif /* BFO_ENGINE_H */
