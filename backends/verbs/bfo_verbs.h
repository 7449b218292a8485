// SPDX-License-Identifier: BSD-3-Clause
/* bfo_verbs.h - the verbs backend: bfo rails over InfiniBand / RoCE
 * (libibverbs), one reliable-connected queue pair per (peer, rail).
 * What it tells the engine (completions, rail errors, flushes, frames,
 * async events, connections) is bfo_verbs_glue.h, libibverbs-free and
 * tested over the simulator in make check (tests/test_verbs_scenarios.c);
 * bfo_verbs.c is the device under it.  Its connections run on the conn
 * machine (spec/conn.rl, backends/bfo_link.h), as TCP's and shm's do.
 *
 * Part of bfo (see bfo.h).  A rail is a (device, port): `verbs:rxe0`,
 * `verbs:mlx5_0:2`.  A transport (bfo_transport.h, its row
 * bfo_verbs_transport): it runs under bfo_net (bfo_net.h), which owns the
 * engine, does the wire-up for every rail and can put TCP or shared-memory
 * rails beside the verbs ones; the backend reports through a bfo_sink.
 *
 * ---------------------------------------------------------------------------
 * USE (bfo_net.c does this, through bfo_verbs_transport)
 *   bfo_verbs_open(&v, rank, size, rails, nrails, &cfg, &opt);
 *   bfo_verbs_address(v, r, &addr);   // per rail: its card (bfo_verbs_ud.h),
 *   ... published (bfo_boot.h) ...    // looked up through sink->lookup
 *   bfo_verbs_start(v, job, &sink);   // when the dialer dials
 *   bfo_verbs_backend(v, &be);        // post_send/write/read, reg_mem, ...
 *   loop: bfo_verbs_progress(v, now); ... bfo_verbs_fini(v);
 *
 * RAIL NAMES
 *   verbs:DEVICE[:PORT]   port defaults to 1; the same name on every host
 *   (no address: the exchange below needs none).  verbs:DEVICE[:PORT]@ADDR
 *   is read too: ADDR (IPv4) is where the TCP exchange's control channel
 *   listens (tcp_exchange only; by default the IPv4 address in the port's
 *   GID table, RoCE v2: ::ffff:a.b.c.d).
 *
 * WIRE-UP.  Each rail opens one UD queue pair on its port at open; each
 *   rank publishes, per rail, its card (bfo_verbs_ud.h, version 2: the
 *   port's GID and LID, the UD queue pair's number and Q_Key; opaque to
 *   everyone else); the dialer looks the peer's up when it dials.  Queue
 *   pairs are wired on demand, like the TCP rails' connections: the engine
 *   calls connect(peer, rail) on one side or both; the side that asks
 *   dials (a new RC queue pair, the REQ to the peer's UD queue pair), the
 *   other accepts; both at once settle on the lower rank's dial (the
 *   higher rank's REQ goes unanswered, and it takes the lower rank's:
 *   docs/verbs.md, "Either side dials").  Three messages, as datagrams between the rails' UD queue
 *   pairs: the REQ goes again (50 ms, then doubling up to 500 ms) until its
 *   REP comes, the REP until its RTU (or the dialer's first frame on the
 *   new queue pair) comes, a REQ or REP that comes again is answered again
 *   (bfo_vu_classify), and the connect timeout ends an attempt with no
 *   answer (CONNECT_FAILED).  With tcp_exchange (bfo_verbs_options), the
 *   exchange before this one: the card is version 1 (u8 4, u8 0, u16 TCP
 *   port, 4 bytes of IPv4 address, network order), the dialer opens a TCP
 *   connection to it from its own rail address, and the three messages go
 *   over it, then it closes.  The messages:
 *     REQ  dialer -> acceptor : its QP number, PSN, GID, LID, MTU
 *     REP  acceptor -> dialer : the same for the acceptor's new QP, which
 *                               is now RTR and RTS
 *     RTU  dialer -> acceptor : the dialer's QP is RTR and RTS
 *   The dialer reports CONNECTED after sending RTU, the acceptor when RTU
 *   arrives, so neither sends before the other can receive; a frame that
 *   reaches the acceptor before (the dialer's PROBE overtaking the RTU)
 *   waits for its CONNECTED.  Every message (64 bytes, little-endian): u32
 *   magic BFO_VERBS_MAGIC, u8 kind, u8 version (BFO_VERBS_CTL_VERSION, 2),
 *   u16 rail, u32 rank, u32 nranks, u64 job, u32 qpn, u32 psn, u16 lid, u8
 *   mtu, u8 pad, u8 gid[16], u32 attempt, u32 dialed, u32 grant
 *   (authenticated: then the handshake's part, AUTHENTICATION).  attempt: the
 *   dialer's, counting from 1 per (peer, rail), its low 32 bits (the
 *   acceptor compares them with wrap-around), echoed in REP and RTU.  What
 *   a REQ, a connect() or a failure does is the conn machine's, the same
 *   for every transport: a REQ for a (peer, rail) that has a queue pair
 *   replaces it (RAIL_ERROR first when the engine had it up and has not
 *   asked for a new one; in silence when its connect() is pending),
 *   unless its attempt is not above the last one accepted (a REQ the
 *   dialer gave up, read late): then only its control connection closes;
 *   a REQ from a higher rank is refused.  connect() while a connection
 *   the engine was not told about is being wired keeps it, and a
 *   connection that comes up answers a connect() not handled yet
 *   (docs/verbs.md, "Both ends reconnecting").  CONNECT_FAILED: no answer
 *   within connect_timeout, refused, a bad message, or the port is down
 *   (at once).  Re-admission after a fault is the same: a NEW queue pair,
 *   then the engine's PROBE/PROBEACK before any traffic.
 *
 * AUTHENTICATION (issue 37; options.auth; bfo_verbs_auth.h).  Whoever can
 *   send a datagram to a rank's UD queue pair (its number and the Q_Key
 *   are in the card) can send it a REQ.  With a bfo_auth the exchange
 *   carries the connection handshake (bfo_auth.h) with no extra message:
 *   the REQ the dialer's HELLO, the REP the acceptor's REPLY, the RTU the
 *   dialer's CONFIRM, and the REP and RTU a BIND, a MAC under the pair key
 *   over the control fields of the exchange (queue pair numbers, PSNs,
 *   GIDs, LIDs, MTUs, credit: datagrams are no stream, and a copy of a
 *   real REQ with another queue pair in it must not be taken).  A REQ is
 *   a claim (the conn machine's LOWER_/HIGHER_CLAIM_RCVD): the acceptor
 *   answers it with a REP from a new queue pair of its own (RTS towards
 *   the claimant's), held aside from the (peer, rail)'s, at most 2 per
 *   (peer, rail) at once (a newer one drops the oldest), sent again as
 *   the REP is until the RTU or connect_timeout; it takes that queue pair
 *   (PROOF_RCVD: the machine closes what the rail held, then the claim's
 *   queue pair becomes the rail's, its receives posted, its credit the
 *   claimant's grant) only at an RTU whose BIND and CONFIRM verify.  The
 *   dialer connects its queue pair only at a REP whose BIND and REPLY
 *   verify, and sends its RTU (made once, sent again for a REP that comes
 *   again).  A REQ, REP or RTU that proves nothing (forged, replayed,
 *   another job's key, a rank without a bfo_auth) is dropped, logged at
 *   level 2 and counted (hellos_rejected), and ends no dial and no claim:
 *   anyone can send a datagram.  So a live queue pair is never replaced
 *   without a proof, no member can pose as another rank, and a forged
 *   attempt number makes nothing stale (only a proof raises the last one
 *   taken).  Without a bfo_auth, or with tcp_exchange (not
 *   authenticated), REQs are taken at their word as before, and the
 *   first open in the process says so at level 1.  A peer whose public
 *   key auth lacks: options.auth_peer is asked for it; still unknown, its
 *   REQ is refused and a dial to it fails, each logged.  Cost: no extra
 *   datagram or round trip (the acceptor's CONNECTED comes at the RTU, as
 *   before); the datagrams are 104, 160 and 144 bytes instead of 64; an
 *   X25519 pair key per peer at its first connection (bfo_net's), then a
 *   few HMAC-SHA-256 per connection; nothing per frame.  The handshake's
 *   state is allocated while it runs (a claim's, from its REQ to its proof
 *   or deadline; the dialer's, from its REQ to the queue pair's close):
 *   three pointers per (peer, rail) otherwise.
 *
 * GUARANTEES (bfo_backend.h) AND HOW THEY ARE KEPT
 *   1. ok only when the peer has it: RC completions.  A send completes
 *      successfully once the peer's adapter acknowledged it: the frame is in
 *      a receive buffer of the peer, which the peer's backend hands to its
 *      engine even when the queue pair fails afterwards (received frames
 *      are never dropped: they wait, in order, until the engine takes them).
 *   2, 3. Every error completion (RETRY_EXC_ERR, LOC_QP_OP_ERR, ...) marks
 *      the queue pair failed; at the next safe point the backend reports
 *      BFO_EV_RAIL_ERROR for (peer, rail), moves the queue pair to the
 *      error state, collects every flushed work request (WR_FLUSH_ERR) and
 *      completes every operation of it with ok=0, then destroys it.  The
 *      mapping of statuses and async events is bfo_verbs_map.h, what follows
 *      from it bfo_verbs_glue.h (both tested in make check).  A flush on a
 *      queue pair still up fails it the same way (the device moved it to
 *      the error state).  IBV_EVENT_PORT_ERR fails every queue pair of the port.
 *      Posts while a rail has no queue pair complete with ok=0 at the next
 *      progress.  disconnect(peer, rail) (the engine mapped the rail out by
 *      itself: its probe timed out, or the peer's BROKEN notice came) marks
 *      the queue pair the engine was told about as failed; the next
 *      progress tears it down the same way (RAIL_ERROR, error state,
 *      every operation of it completed with ok=0), so what was in flight
 *      fails over at once instead of at the reconnect after the back-off
 *      or at the adapter's retry timeout.  A queue pair still being wired
 *      (not yet reported CONNECTED) is left alone.
 *   4. One RC queue pair carries a rail to a peer: sends arrive in order;
 *      received frames are offered to the engine in order.
 *
 * TIMEOUTS.  retry_cnt (default 6, at most 6: rxe retries forever on 7) and
 *   timeout (the IB exponent, default 14: 4.096 us * 2^14 = 67 ms) bound
 *   how long a dead path takes to show: about (retry_cnt + 1) * 67 ms =
 *   0.47 s by default.  rnr_retry is 7 (the receiver not keeping up is
 *   back-pressure, not a failure).
 *
 * HOST PROBES (the peer's host as a witness: bfo_engine_host_heard; the
 *   glue's bfo_vg_keepalive).  While the engine's PROBE on a queue pair
 *   waits (no PROBEACK since), every successful completion on it (the
 *   PROBE's own send, an operation) is the peer's adapter answering, told
 *   to the engine as its host heard; once the PROBE has waited a keepalive
 *   interval (probe_timeout / 4, at most 10 ms), a host probe keeps that
 *   evidence fresh: a signalled RDMA WRITE of zero bytes (no memory, no
 *   key: wr_id 1 << 62), at most one on the send queue and one per
 *   interval.  A peer that computes without calling into bfo stays UP (the
 *   engine counts it busy); a dead peer, port or path leaves it unanswered:
 *   RETRY_EXC_ERR after the retries, the queue pair's error.  Counted as
 *   host_probes and host_heard (bfo_net: nudges_tx and busy_heard).
 *
 * BACK-PRESSURE.  bfo_engine_frame returning BFO_ERR_AGAIN: the frame and
 *   those behind it wait in their receive buffers, which are not reposted;
 *   without the SRQ, the sender sees receiver-not-ready NAKs and waits;
 *   with it, the sender runs out of credit and waits (below).
 *
 * SHARED RECEIVE QUEUE (docs/verbs.md, "Shared receive queue").  Where
 *   every device has one (ibv_query_device's max_srq; rxe has) and srq is
 *   not off, each device has one SRQ with srq_frames receive buffers, and
 *   half as many send buffers, shared by all its queue pairs: nothing is
 *   registered per peer.  Each side grants each peer `credits` frames in
 *   its REQ or REP (the control message's last u32; 0: no limit, the
 *   per-queue-pair receives): a frame sent uses one, and the receiver
 *   gives them back as its engine takes the frames, in the immediate data
 *   of its own sends (SEND_WITH_IMM) or, when it has none to send and owes
 *   half the credit, in a credit message (a zero-byte send with immediate
 *   data: its buffer goes straight back to the queue).  So one peer can
 *   hold at most `credits` of the queue's buffers however fast it sends
 *   and however long the engine leaves its frames waiting; a frame beyond
 *   the credit fails the queue pair (malformed).  A queue pair attached to
 *   the SRQ is destroyed only after IBV_EVENT_QP_LAST_WQE_REACHED (or 2 s
 *   after its close, logged), its completion queue read a last time.
 *   Without an SRQ (srq off, or a device without one) the receives are
 *   per queue pair, as below.
 *
 * RDMA.  Rails claim BFO_CAP_RDMA.  reg_mem registers the buffer with the
 *   protection domain of every device (but a dead one) and gives each rail
 *   the rkey of its own device's region, so a peer reading or writing on
 *   rail i uses the key for rail i, whatever number of devices there is.
 *   A region is registered for its role (reg_mem's access) only: a GET's
 *   source remote-readable, a PUT's target remote-writable (and locally,
 *   as verbs requires), a GET's landing place locally writable.  A
 *   registration cache (reg_cache entries, default 32, -1 = none) keeps a
 *   region registered after dereg_mem while nothing needs its place, and
 *   hands it out again only for the same buffer, length and access
 *   (bfo_verbs_cache.h); a cached region stays accessible to a peer
 *   holding its key, and reaches the pages it pinned.  So memory that goes
 *   back to the system must be dropped first: the transport's
 *   mem_released (bfo_net_mem_released; safe from memory hooks in any
 *   thread: it marks, and the regions are deregistered at the next
 *   reg_mem, dereg_mem or progress, one in use when its last use ends), or
 *   bfo_verbs_uncache from the thread that drives the transport (bfo
 *   stream and bfo bench keep their buffers).  Reads and writes go from
 *   the engine's registered memory directly.
 *
 * MEMORY.  Everything is allocated and registered at bfo_verbs_start: with
 *   the SRQ, per device srq_frames receive and srq_frames / 2 send buffers of
 *   the largest frame each; without, per (peer, rail) recv_depth receive
 *   buffers and send_depth send buffers (sends are copied into a
 *   registered buffer; the start's log line at level 2 and bfo_verbs_dump
 *   say how many bytes that pins), and
 *   a descriptor pool as large as the engine's max_ops.  Queue pairs and
 *   their completion queues are created per connection.  No allocation on
 *   the per-message path.
 *
 * FAULT HOOK (tests).  bfo_verbs_fault(v, rail): moves every queue pair of
 *   the rail to the error state now, as a local failure would.
 *
 * ERRORS: BFO_OK, BFO_ERR_INVALID (bad rail name, unknown device or port),
 *   BFO_ERR_NO_MEMORY, BFO_VERBS_ERR_DEVICE (a verbs call failed at init,
 *   the UD queue pair included), BFO_VERBS_ERR_SOCKET (the TCP exchange's
 *   control listener).
 */
#ifndef BFO_VERBS_H
#define BFO_VERBS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "bfo_engine.h"
#include "bfo_sink.h"
#include "bfo_transport.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BFO_VERBS_ERR_DEVICE (-110)
#define BFO_VERBS_ERR_SOCKET (-111)

#define BFO_VERBS_MAGIC 0xBF0BE5B5u
#define BFO_VERBS_CTL_SIZE 64
#define BFO_VERBS_CTL_VERSION 2
enum bfo_verbs_ctl_kind { BFO_VERBS_K_REQ = 1, BFO_VERBS_K_REP = 2, BFO_VERBS_K_RTU = 3 };

typedef struct bfo_verbs_options {
    int retry_cnt;            /* 1..6 (default 6) */
    int timeout;              /* IB local ACK timeout exponent, 1..31 (default 14) */
    int recv_depth;           /* receive buffers per (peer, rail) (default 32; no SRQ) */
    int send_depth;           /* send buffers per (peer, rail) (default 32; no SRQ) */
    int srq;                  /* 0 or 1: a shared receive queue per device where every device has
                               * one (default); -1: per queue pair (the setting's "off") */
    int srq_frames;           /* its receive buffers per device, and half as many send buffers (64) */
    int credits;              /* frames a peer may have in the shared receive queue at once (8) */
    int reg_cache;            /* registration cache entries (default 32; -1: none, as when nobody
                               * calls bfo_net_mem_released: docs/porting.md, Registered memory) */
    int gid_index;            /* -1 or 0: find the IPv4 RoCE v2 GID (default) */
    uint64_t connect_timeout_ns; /* control exchange (default 2 s) */
    int tcp_exchange;         /* 1: the control exchange over TCP to the rail's IPv4 address (the
                               * exchange before the UD one; needs an IPv4 GID or @ADDR); 0: over
                               * the rails' UD queue pairs (default; -1 too: the setting's "off") */
    unsigned rail_bandwidth[BFO_MAX_RAILS]; /* MB/s, striping weights (default: port speed) */
    int log_level;            /* -1 silent, 1 errors (default), 2 connections, 3 debug */
    /* AUTHENTICATION: the rank's key state from bfo_auth_init, with peers'
     * public keys set by bfo_auth_set_peer (bfo_net gives its own); NULL:
     * REQs taken at their word, as before (said once at open); ignored,
     * and said, with tcp_exchange.  Not owned: the caller frees it after
     * fini. */
    struct bfo_auth *auth;
    /* Called when a REQ comes from, or a dial goes to, a peer whose public
     * key auth does not hold yet: the embedding layer calls
     * bfo_auth_set_peer with the key from that peer's card and returns 0,
     * or nonzero when it cannot (the REQ is refused, the dial fails, each
     * logged).  NULL: every peer's key must be set before it connects. */
    int (*auth_peer)(void *ctx, int peer);
    void *auth_peer_ctx;
} bfo_verbs_options;

typedef struct bfo_verbs_rail_stats {
    uint64_t frames_tx, frames_rx, bytes_tx, bytes_rx;
    uint64_t rdma_writes, rdma_reads, rdma_bytes;
    uint64_t connects, connect_failures;
    uint64_t qp_errors;         /* queue pairs lost: error completion, async event, replaced,
                                 * dropped by disconnect() */
    uint64_t disconnects;       /* disconnect() calls that dropped a queue pair */
    uint64_t completed_ok, completed_failed, flushed;
    uint64_t wc_errors[22];     /* error completions by ibv_wc_status */
    uint64_t port_errors;       /* IBV_EVENT_PORT_ERR */
    uint64_t malformed;         /* bad control messages, oversized frames */
    uint64_t backpressure;      /* frames the engine asked to offer again */
    uint64_t reg_hits, reg_misses;
    uint64_t host_probes;       /* zero-byte RDMA WRITEs posted for the peer's adapter to
                                 * answer while its process is silent (bfo_vg_keepalive) */
    uint64_t host_heard;        /* the peer's host heard: told to the engine
                                 * (bfo_engine_host_heard) */
    uint64_t resends;           /* UD exchange: REQs and REPs sent again (no answer in time) */
    uint64_t dup_answers;       /* UD exchange: a REQ or REP that came again answered again */
    uint64_t hellos_rejected;   /* authenticated: REQs, REPs and RTUs that proved nothing (forged,
                                 * replayed, unauthenticated), and claims never proven */
} bfo_verbs_rail_stats;

typedef struct bfo_verbs bfo_verbs;

/* Is this rail name a verbs rail ("verbs:...")?  Parses it when so. */
int bfo_verbs_is_rail(const char *name);
int bfo_verbs_parse_rail(const char *name, char *dev, size_t devlen, int *port, uint32_t *ip);

/* Opens the devices, finds each rail's GID, opens its UD queue pair (or,
 * with tcp_exchange, listens for the control channel).  cfg: the engine's
 * configuration (frame sizes, max_ops). */
int bfo_verbs_open(bfo_verbs **out, int rank, int size, const char *const *rails, int nrails,
                   const bfo_config *cfg, const bfo_verbs_options *opt);
/* This rank's card for rail (to publish; bfo_verbs_ud.h). */
int bfo_verbs_address(const bfo_verbs *v, int rail, bfo_addr *out);
/* Every card published; the job id, the sink (its lookup gives a peer's
 * card): allocates and registers the buffers; ready for connect(). */
int bfo_verbs_start(bfo_verbs *v, uint64_t job, const bfo_sink *sink);
/* The backend's functions (ctx = v). */
void bfo_verbs_backend(bfo_verbs *v, bfo_backend *be);
/* Polls completions, events and the control channel; reports to the sink.
 * Returns the number of things handled. */
int bfo_verbs_progress(bfo_verbs *v, uint64_t now);
/* Arms the completion queues for a wake-up and fills fds (at most max) with
 * what to poll() for reading while idle; returns the count, or -1 when
 * there is work already (do not sleep). */
int bfo_verbs_wait_fds(bfo_verbs *v, int *fds, int max);
int bfo_verbs_nrails(const bfo_verbs *v);
const bfo_verbs_rail_stats *bfo_verbs_get_stats(const bfo_verbs *v, int rail);
void bfo_verbs_fault(bfo_verbs *v, int rail);
/* Drops the cached registrations overlapping buf[0..len) (page by page),
 * from the thread that drives v; one in use is never handed out again. */
void bfo_verbs_uncache(bfo_verbs *v, const void *buf, size_t len);
/* One line per (peer, rail): queue pair state, work in flight, receive
 * buffers; then the descriptors (for a tool that timed out, or SIGUSR2). */
void bfo_verbs_dump(const bfo_verbs *v, FILE *f);
void bfo_verbs_fini(bfo_verbs *v);
const char *bfo_verbs_errname(int rc);

/* The transport's row for bfo_net (bfo_transport.h): claims verbs:...;
 * opt is a bfo_verbs_options. */
extern const bfo_transport_ops bfo_verbs_transport;

#ifdef __cplusplus
}
#endif
#endif /* BFO_VERBS_H */
