// SPDX-License-Identifier: BSD-3-Clause
/* bfo_engine_types.h - types, compile-time options, the configuration and its
 * defaults, the layout descriptor.
 *
 * Part of bfo_engine.h, level 0 of its parts (docs/engine-design.md, "The
 * parts"): include bfo_engine.h, not this.  It includes the headers of
 * include/fsm/ and gen/ it builds on (and so every part below); a call to a
 * part above goes through a prototype in bfo_engine_hooks.h (none from
 * here).
 *
 * Sections (grep '>>name'): >>options, >>types, >>config, >>layout.
 */
#ifndef BFO_ENGINE_TYPES_H
#define BFO_ENGINE_TYPES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "bfo_backend.h"
#include "bfo_core.h"
#include "bfo_data.h"
#include "bfo_peer.h"
#include "bfo_rail.h"
#include "bfo_recv.h"
#include "bfo_send.h"
#include "bfo_wire.h"

#ifdef __cplusplus
extern "C" {
#endif

/* >>options - compile-time options and attributes ------------------------- */

#ifndef BFO_MAX_RAILS
#define BFO_MAX_RAILS 8 /* rails per peer (compile-time option) */
#endif

/* Striping by measured rate and demotion of slow rails (compile-time
 * options; docs/engine-design.md, "Striping by measured rate"):
 *   BFO_RATE_LAG_NS     a rail's delivered rate is sampled from each large
 *                       piece of data delivered, and from
 *                       bfo_engine_progress when work waits on it and
 *                       nothing came back for this long (20 ms)
 *   BFO_DEMOTE_RATIO    a rail delivering under 1/this of the peer's best UP
 *                       rail for BFO_DEMOTE_SAMPLES samples in a row, over
 *                       BFO_DEMOTE_NS at least, is demoted (8, 3, 50 ms);
 *                       one slow sample is enough when no other came in
 *                       BFO_DEMOTE_NS and the rail holds less than four
 *                       fragments (a rail too slow to be given data; one
 *                       that holds more and stopped is stalled, and its
 *                       lag samples say so as long as it stays stopped;
 *                       the samples of the pieces back after them leave
 *                       out the stall and add nothing to the streak, as
 *                       samples on probation, but its last, do not);
 *                       a sample that took no longer than a piece takes on
 *                       the best rail is never slow
 *   BFO_PROBATION_BYTES a rail is on probation after its admission or
 *                       promotion until it has delivered this many bytes
 *                       of data (256 KiB): it is given one piece at a time,
 *                       and its rate is what it delivered over the time
 *                       its pieces took (a first piece that a shaper's or
 *                       a switch's burst let through at once is no measure)
 *   BFO_PROBATION_PIECE ... of at most this many bytes while another rail is
 *                       UP and measured (32 KiB)
 *   BFO_PROMOTE_RATIO   a demoted rail measured at 1/this of the best or
 *                       better BFO_PROMOTE_SAMPLES times in a row is
 *                       promoted (4, 3)
 *   BFO_MEASURE_PERIOD_NS  a demoted rail is measured this often (100 ms)
 *   BFO_MEASURE_BYTES   ... with a probe padded with at most this many zeros
 *                       (64 KiB; and at most frag_size, and at most what the
 *                       rail moved in BFO_MEASURE_TIME_NS, 20 ms, at the
 *                       rate it was demoted at; at least 4 KiB): the engine keeps one zeroed
 *                       block of this size when it has two rails or more
 *   BFO_FLAP_NS         a rail demoted again within this of its promotion
 *                       is measured half as often, up to 64 times less,
 *                       with twice the padding, in up to 8 probes of
 *                       BFO_MEASURE_BYTES (a token bucket's burst fools a
 *                       short one) (5 s) */
#ifndef BFO_PROBATION_BYTES
#define BFO_PROBATION_BYTES 262144u
#endif
#ifndef BFO_PROBATION_PIECE
#define BFO_PROBATION_PIECE 32768u
#endif
#ifndef BFO_RATE_LAG_NS
#define BFO_RATE_LAG_NS 20000000u
#endif
#ifndef BFO_DEMOTE_RATIO
#define BFO_DEMOTE_RATIO 8
#endif
#ifndef BFO_DEMOTE_SAMPLES
#define BFO_DEMOTE_SAMPLES 3
#endif
#ifndef BFO_PROMOTE_RATIO
#define BFO_PROMOTE_RATIO 4
#endif
#ifndef BFO_PROMOTE_SAMPLES
#define BFO_PROMOTE_SAMPLES 3
#endif
#ifndef BFO_MEASURE_PERIOD_NS
#define BFO_MEASURE_PERIOD_NS 100000000u
#endif
#ifndef BFO_MEASURE_BYTES
#define BFO_MEASURE_BYTES 65536u
#endif
#ifndef BFO_DEMOTE_NS
#define BFO_DEMOTE_NS 50000000u
#endif
#ifndef BFO_FLAP_NS
#define BFO_FLAP_NS 5000000000ull
#endif
#ifndef BFO_MEASURE_TIME_NS
#define BFO_MEASURE_TIME_NS 20000000u
#endif

/* A hot helper with few callers, inlined even when the compiler's size
 * estimate says no: a call costs a dozen instructions of saved registers,
 * a tenth of an eager send + receive. */
#if defined(__GNUC__) || defined(__clang__)
#define BFO__HOT inline __attribute__((always_inline))
#else
#define BFO__HOT inline
#endif
/* The same for a public function, whose declaration keeps `static inline`
 * (after its parameters: BFO__ALWAYS_INLINE;). */
#if defined(__GNUC__) || defined(__clang__)
#define BFO__ALWAYS_INLINE __attribute__((always_inline))
#else
#define BFO__ALWAYS_INLINE
#endif

/* A path off the eager one (RDMA, no rail, errors) kept out of line, so
 * that its registers and stack do not weigh on the function that calls it
 * (not `inline`, which GCC will not combine with noinline; `unused`, as a
 * static inline function is, when a file includes this and uses none). */
#if defined(__GNUC__) || defined(__clang__)
#define BFO__NOINLINE __attribute__((noinline, unused))
#define BFO__COLD __attribute__((noinline, cold, unused))
#else
#define BFO__NOINLINE inline
#define BFO__COLD inline
#endif

/* Described data (bfo_data.h) is off the contiguous fast path. */
#if defined(__GNUC__) || defined(__clang__)
#define BFO__UNLIKELY(x) __builtin_expect(!!(x), 0)
#define BFO__LIKELY(x) __builtin_expect(!!(x), 1)
#else
#define BFO__UNLIKELY(x) (x)
#define BFO__LIKELY(x) (x)
#endif

/* >>types - configuration, requests, operations, peers, the engine -------- */

#define BFO_ANY_SOURCE (-1)
#define BFO_ANY_TAG (-1)

/* Which RDMA protocols the engine may use (bfo_config.rdma). */
enum bfo_rdma_mode {
    BFO_RDMA_AUTO = 0, /* GET when it can, else PUT, else copy (default) */
    BFO_RDMA_GET = 1,  /* GET or copy */
    BFO_RDMA_PUT = 2,  /* PUT or copy */
    BFO_RDMA_OFF = 3   /* copy only */
};

#define BFO_MAX_PIPELINE 64 /* frag_pipeline is at most this */

/* FRAG ranges a copy receive holds apart above its lowest missing byte
 * (bfo_request.frag_run).  FRAGs are sent in offset order, at most
 * frag_pipeline at once, striped over the rails: out of order only across
 * rails.  BFO_MAX_RAILS of them are kept for frames read in place
 * (bfo__frag_fits): a FRAG that needs one more waits (BFO_ERR_AGAIN) for
 * the lowest missing one, which comes first on its own rail. */
#define BFO__FRAG_RUNS (8 + BFO_MAX_RAILS)

/* The longest message a receive can hold: the wire's lengths are 64-bit,
 * a receive's are size_t, so on a 32-bit build a longer one would be
 * truncated (a 4 GiB + 10 rendezvous taken as 10 bytes).  A rendezvous
 * longer than this is refused before its length becomes a size_t
 * (bfo__rcvd_rzv).  A test may define it lower to play a 32-bit build. */
#ifndef BFO__LEN_MAX
#define BFO__LEN_MAX SIZE_MAX
#endif

/* Configuration: zero means the default given here. */
typedef struct bfo_config {
    int rank, nranks;      /* this process, and how many (required) */
    int nrails;            /* rails per peer, 1..BFO_MAX_RAILS (required) */
    int max_requests;      /* requests alive at once, sends and receives from post to
                            * completion (default 1024) */
    int max_ops;           /* operations in flight (default and minimum: enough for every
                            * request at once, max_requests * (frag_pipeline + 3),
                            * plus engine control messages, see bfo__min_ops: their
                            * whole budget without grow, 16 with it) */
    int max_unexpected;    /* unexpected or out-of-order messages (default 256) */
    /* Growth.  The three pools above (requests, operations, unexpected
     * messages) start at the sizes above, in the memory given to
     * bfo_engine_init.  With grow set, a pool that runs out gets one more
     * chunk (as many entries as it started with, or a power of two just
     * above; at most BFO_MAX_CHUNKS of them) from grow(grow_ctx, bytes):
     * memory the engine keeps until the caller frees it after the engine,
     * 16-byte aligned, NULL when there is none.  Called only when a pool is
     * empty, never on the steady path: a stream whose requests complete
     * reuses what it has.  Without grow (the default) the pools are fixed
     * and max_ops must cover every request at once (bfo__min_ops). */
    void *(*grow)(void *grow_ctx, size_t bytes);
    void *grow_ctx;
    int match_bins;        /* bins of each matching table, a power of two (default 1024):
                            * matching costs a scan of one (ctx, src) bin and one ctx bin */
    size_t unexpected_budget; /* bytes of unexpected messages' payloads held at once
                               * (default 64 MiB), each peer's credit window a
                               * share of it: budget / (nranks - 1); past its
                               * window a peer sends by rendezvous.  A frame that
                               * finds it spent (or no memory) waits (BFO_ERR_AGAIN) */
    size_t eager_limit;    /* largest eager payload (default 4096) */
    size_t frag_size;      /* bytes per FRAG (default 65536) */
    int frag_pipeline;     /* FRAGs, PUTs or reads in flight per request (default 8,
                            * at most BFO_MAX_PIPELINE) */
    int rdma;              /* enum bfo_rdma_mode (default BFO_RDMA_AUTO) */
    size_t rdma_min;       /* smallest message sent by RDMA GET or PUT (default 65536) */
    uint64_t heartbeat_ns;        /* probe a rail that heard or sent nothing for this long
                                   * (default 100 ms) */
    uint64_t silence_ns;          /* backstop: rail failed when nothing heard for (default 1 s) */
    uint64_t probe_timeout_ns;    /* a probe unanswered, and nothing heard from the peer on
                                   * the rail, for this long: the rail fails (default 40 ms).
                                   * A silently dead rail is mapped out within about
                                   * heartbeat + probe_timeout; a process must run progress
                                   * at least that often, or its peers map its rails out.
                                   * The floor of an adaptive timeout (bfo__probe_timeout):
                                   * probes answered slowly raise it (RTT estimate, like
                                   * TCP's RTO), and each probe timeout in UP doubles it for
                                   * that rail (up to 8x, at most silence_ns) until eight
                                   * heartbeats in a row are answered in time */
    uint64_t backoff_min_ns;      /* first reconnect delay (default 10 ms) */
    uint64_t backoff_max_ns;      /* doubling up to (default 500 ms) */
    int max_reconnects;           /* then the rail is retired (default 100) */
    uint64_t unreachable_grace_ns;/* no rail UP for this long: peer unreachable (default 2 s;
                                   * keep it above probe_timeout + backoff_max, so that a
                                   * rail that works gets a full probe cycle first) */
    int data_stages;              /* staging buffers for described data (bfo_data.h) that a
                                   * rail's transport cannot read in place, each
                                   * max(frag_size, eager_limit) bytes (default 4); a frame
                                   * waits for one when all are in use */
    uint64_t host_timeout_ns;     /* a busy peer (its process silent on every rail since the
                                   * probe went out) keeps a rail UP while the transport hears
                                   * its host on it (bfo_engine_host_heard) at least this often
                                   * (default 500 ms; docs/engine-design.md, "The failure
                                   * detector") */
    int done_queue;               /* 1: every request that completes is queued, in the order
                                   * it completed, for bfo_done_pop (an MPI layer finds its
                                   * completions there instead of testing each request);
                                   * default 0: nothing queued */
    unsigned standby_rails;       /* rails (bit i: rail i) that carry probes only while a
                                   * rail not among them is UP: active-standby (default 0:
                                   * every rail is active, data striped over all) */
    size_t rdma_frag_size;        /* bytes per RDMA read of a GET and per PUT slot (default:
                                   * frag_size).  RDMA pieces need no buffer of the
                                   * transport's: larger ones cost nothing there (shared
                                   * memory reads a MiB in one process_vm_readv) */
    int relay;                    /* 1: relay through a third rank (docs/engine-design.md,
                                   * "Relay"): a peer that no rail reaches but a rank this
                                   * one reaches does is sent to through that rank, and
                                   * this rank passes on the frames of others (default 0:
                                   * off; every rank of the job must have it on to relay) */
    int relay_slots;              /* relay: frames this rank holds while it passes them on,
                                   * each BFO_MAX_HDR_SIZE + max(frag_size, eager_limit)
                                   * bytes (default 16).  Each sender may have
                                   * relay_slots / (nranks - 1) frames (1 at least) out
                                   * through one rank, so that the senders together never
                                   * find the slots taken: the same setting on every rank */
    size_t rndv_first;            /* a rendezvous by copy of a message above eager_limit
                                   * sends this many of its bytes in its RNDV, the rest
                                   * once the receiver answers (default 4096, at most
                                   * eager_limit; one of eager size, synchronous or past
                                   * its window, sends all of them if its window has
                                   * room).  The receiver answers only once the whole
                                   * RNDV is in, so its bytes and the rest cross one after
                                   * the other, an answer's round trip between them
                                   * (docs/engine-design.md, "Latency across the eager
                                   * limit", has the figures).  What it carries waits at a
                                   * receiver that has not posted yet, counted against the
                                   * sender's window */
    int connect_at_init;          /* 1: bfo_engine_init connects every rail of every peer
                                   * (be->connect for each), as bfo did before issue 37;
                                   * default 0: a peer's rails connect when the engine first
                                   * has a frame for it and no rail of it is UP, or when the
                                   * peer connects (spec/rail.rl, "Connections on first
                                   * use"); no grace runs for a peer never needed */
    /* Whether a message's source (its envelope's src: the sender's rank in
     * its context) may come from the engine peer that sent it: a receive
     * reports it (bfo_request.source, bfo_status.source; MPI_SOURCE), so a
     * member must not claim another rank's.  NULL (the default): the ranks
     * are the engine's (bfo_isend), the source must be the sending peer.  A
     * layer with ranks of its own per context (pml/bfo) says whether src of
     * ctx is that peer (1) or not (0); it is asked for each message, before
     * matching.  A message that fails is a protocol violation (counted,
     * dropped: its sequence moves on, matching nothing). */
    int (*source_ok)(void *source_ctx, uint32_t ctx, uint32_t src, int peer);
    void *source_ctx;
} bfo_config;

enum bfo_req_kind { BFO_REQ_SEND = 1, BFO_REQ_RECV = 2 };

/* bfo_envelope.flags of a send */
#define BFO_SEND_SYNC 0x1u /* complete only once the receiver has matched the message */

/* A message's envelope: whom it is for or from, and what it matches.  A
 * communicator is a context id; within it ranks are the layer's, which maps
 * them to engine peers (peer).  Ordering holds per (ctx, src): one sequence
 * per engine peer, shared by every context, does that. */
typedef struct bfo_envelope {
    int peer;       /* engine peer: a send's destination (this rank itself too);
                     * a receive's sender, or BFO_ANY_SOURCE */
    uint32_t ctx;   /* context id: any value (a receiver need not know it yet) */
    int src;        /* send: this process's rank in ctx (>= 0); receive: the
                     * sender's rank in ctx, or BFO_ANY_SOURCE */
    int tag;        /* send: >= 0; receive: >= 0 or BFO_ANY_TAG */
    unsigned flags; /* send: BFO_SEND_SYNC, or 0 */
} bfo_envelope;

/* Contexts one engine can revoke (bfo_revoke), and its discard receives. */
#define BFO__MAX_REVOKED 64
#define BFO__SINKS 2

/* A request: caller memory, valid from bfo_isend/bfo_irecv until bfo_test
 * returns 1.  Read the public part; leave the rest alone. */
typedef struct bfo_request {
    /* public, valid once complete */
    int status;     /* BFO_OK or BFO_ERR_* */
    int source;     /* receive: the sender's rank in the context (the envelope's src) */
    int tag;        /* receive: the message's tag */
    size_t length;  /* receive: the message's length (may exceed the buffer) */
    int peer;       /* receive: the engine peer it came from; send: the destination */
    /* private: set by bfo__req_init */
    int kind, cs, src, want_tag;
    uint32_t ctx;
    int held;          /* CLAIMED receive: the unexpected message it holds (uxm index) */
    char *buf;
    size_t cap;
    bfo_handle self;
    /* private: 0 from bfo__req_init on, in one memset from complete to
     * next (keep them together) */
    int complete;
    int outstanding, frags_inflight;
    uint16_t rseq;
    uint8_t restarted;
    uint8_t counting;  /* the data phase began: done_bytes means something */
    uint8_t reg;       /* buf is registered (my_raddr, my_keys, my_reg) */
    uint8_t pin;       /* receive: the RNDV said the sender's buffer is registered */
    uint8_t answered;  /* an operation of it completed: something may have left */
    uint8_t cancelled; /* send: cancelled, its first message is an empty MATCH (CANCEL) */
    uint8_t revoked;   /* its context was revoked: a cancel completes it BFO_ERR_REVOKED */
    uint8_t sink;      /* one of the engine's discard receives (bfo_engine.sink) */
    uint8_t reg_access; /* while reg: the bfo_mem_access it was registered for */
    uint64_t seq;   /* the message's sequence for its peer (one for all contexts) */
    size_t done_bytes, next_off, first;
    bfo_handle remote;
    struct bfo_request *next;
    uint64_t pseq;  /* posted receive: its place in post order */
    /* private, rendezvous only: left unset until then (see bfo__req_init) */
    uint64_t my_raddr, my_reg;    /* this side's registration (my_reg: the backend's
                                     handle), valid while reg */
    uint64_t raddr;               /* the peer's registration: from its RGET (GET
                                     receive) or its PUTs (PUT send) */
    uint32_t nkeys;               /* the peer's keys, one per rail: keys[rail] */
    uint32_t keys[BFO_MAX_RAILS];
    uint8_t my_keys[4 * BFO_MAX_RAILS]; /* this side's keys as the wire carries them
                                     (bfo_config.nrails u32s): RGET's and PUT's payload */
    uint32_t slot_next, slot_base;/* PUT receive: slots issued; lowest not FINned */
    uint64_t slot_mask;           /* PUT receive: FINned slots from slot_base on */
    /* copy receive: the FRAG bytes taken in this restart sequence, so that
     * none counts twice (bfo__frag_take): all of [frag_lo's start, frag_lo)
     * from the ACK's offset on, and frag_runs runs [start, end) above it,
     * relative to frag_lo, sorted, apart; frag_runs -1 before the ACK */
    uint64_t frag_lo;
    int frag_runs;
    uint32_t frag_run[BFO__FRAG_RUNS][2];
    /* private: described data (bfo_isend_data, bfo_irecv_data): set only when
     * buf is NULL and cap is not 0 (the contiguous path never reads them) */
    const bfo_data *data;
    bfo_data_pos dpos;            /* the cursor in an iovec description */
    struct bfo_request *done_next;/* bfo_config.done_queue: the completion queue */
    /* private: an eager send's MATCH posted without an op (bfo__lane_post;
     * docs/engine-design.md, "Fast paths"): its completion's token names
     * this request while lane is 1 */
    uint8_t lane;
    int lane_rail;
    uint8_t lane_hdr[BFO_HDR_MATCH_SIZE];
} bfo_request;

/* One operation posted to the backend. */
typedef struct bfo_op {
    uint32_t gen;        /* odd, as bfo_slot's: a token is never 0 */
    int idx;             /* its place in the pool: the token, the lists (no division) */
    int next;            /* free list or pending list */
    int type;            /* BFO_FRAG_*, or BFO__OP_WRITE / BFO__OP_READ */
    int peer, rail;      /* rail chosen at post; about_rail for rail control */
    int fixed_rail;      /* -1: any UP rail; else this rail only */
    int posted;          /* given to the backend: counted in its rail's inflight */
    int about_rail;      /* rail control: the rail it concerns */
    bfo_handle owner;    /* the request, or null for engine-owned messages */
    uint16_t rseq;       /* the owner's rseq when posted */
    uint64_t off, len;   /* data range (FRAG, WRITE, READ, FIN) */
    uint64_t q_at, post_at; /* posted: bytes queued on its rail ahead of it, and when */
    uint64_t since;      /* ... and when those began to come back: the rail's last
                          * completion before, or when it took work after none */
    uint64_t raddr;      /* RDMA: the peer's memory (its key: the owner's keys[rail]) */
    uint32_t slot;       /* PUT slot (WRITE, FIN) */
    char *local;         /* RDMA: this side's memory */
    const void *payload;
    size_t payload_len, hdr_len;
    bfo_data_span span;  /* described data (payload NULL, payload_len > 0): its bytes */
    int via;             /* sent through a relay (rail BFO__RELAY_RAIL): the rank */
    uint8_t hdr[BFO_MAX_HDR_SIZE + BFO_HDR_RELAY_SIZE]; /* a relay's header before the frame's */
} bfo_op;

/* bfo_op.rail of a frame sent through a third rank (relay): it completes on
 * that rank's RELAYACK, not on a transport's completion. */
#define BFO__RELAY_RAIL BFO_MAX_RAILS

/* An unexpected (arrived before its receive) or out-of-order message. */
typedef struct bfo_uxm {
    int next, used, peer;
    bfo_frame f;         /* decoded header; f.payload points into data */
    uint8_t *data;       /* its payload (an eager message's, an RNDV's first bytes, an
                          * RGET's keys): a buffer of class cls, or NULL */
    uint8_t cls;
    /* unexpected (not out-of-order): three lists in arrival order, each
     * doubly linked (-1 ends): all of them, its (ctx, src) bin, its ctx bin */
    int an, ap, sn, sp, cn, cp;
} bfo_uxm;

/* Matching bins (bfo_config.match_bins of each kind): posted receives by
 * (ctx, src) and, for BFO_ANY_SOURCE, by ctx; unexpected messages the same
 * way.  Lists in post or arrival order. */
typedef struct bfo__rbin {
    struct bfo_request *head, *tail;
} bfo__rbin;
typedef struct bfo__ubin {
    int head, tail;
} bfo__ubin;

/* A rail's rate (docs/engine-design.md, "Striping"): its queue, what it
 * delivered, the estimate, a demoted rail's measurement.  bfo_engine_rate.h
 * owns it: only its functions write it (bfo__rate_init, _reset, _on_<event>;
 * make check-layers fails on a write elsewhere). */
typedef struct bfo__rail_rate {
    uint64_t q_bytes;    /* bytes given to the backend on this rail, not yet completed */
    int inflight;        /* ops given to the backend on this rail, not yet completed */
    uint64_t last_tx;    /* posted an operation on the rail (the failure detector's
                          * heartbeat reads it) */
    uint64_t rate;       /* delivered bytes per ms: measured, from the transport's figure */
    uint64_t win_start, win_bytes; /* since the last sample (or since work was queued on
                                    * an idle rail), and the bytes that came back since */
    uint64_t work_at, done_at; /* when it last took work after none; its last completion */
    uint64_t stall_from, stall_to; /* the last stretch that lag samples judged (bfo__rate_lag,
                                    * back to back): a completion's sample leaves it out */
    uint64_t meas_sent, meas_nonce; /* DEMOTED: the measuring pair out (0: none), its nonce
                                     * (the padded probe's; the plain one's is one less) */
    uint64_t meas_first; /* ... when the plain probe's PROBEACK came (0: not yet) */
    uint32_t meas_len;   /* ... its padding */
    uint8_t slow;        /* samples in a row under 1/BFO_DEMOTE_RATIO of the best UP rail */
    uint8_t measured;    /* BFO_PROBATION_BYTES delivered since its admission or promotion:
                          * until then (probation) it is given one piece of at most
                          * BFO_PROBATION_PIECE at a time when another rail can take it,
                          * and its rate is prob_bytes over prob_ns */
    uint64_t prob_bytes, prob_ns; /* probation: bytes its pieces carried, and their times */
    uint8_t meas_good;   /* DEMOTED: measurements in a row at 1/BFO_PROMOTE_RATIO of it or better */
    uint64_t meas_at;    /* DEMOTED: when the last measurement went out */
    uint64_t promoted_at; /* when it was last promoted */
    uint64_t slow_since; /* the first sample of its slow streak */
    uint64_t in_bytes;   /* bytes of the frames handed in on it (bfo_engine_frame, _placed): the peer's direction */
    uint64_t in_mark, in_mark_at; /* in_bytes at the review in_mark_at (bfo__rails_review) */
    uint64_t in_rate;    /* bytes per ms taken from it over the last BFO_DEMOTE_NS or more */
    uint64_t sampled_at; /* its last sample */
    uint64_t lat;        /* a piece's time from its post to its completion (EWMA 1/8; 0: none
                          * yet): how long "nothing came back" may last before it counts
                          * (bfo__rate_lag: four times this, BFO_RATE_LAG_NS at least) */
    uint64_t base_rate;  /* DEMOTED: its rate when it was demoted (sizes its measurements) */
    uint8_t flaps;       /* demoted again soon after a promotion, lately: measured
                          * BFO_MEASURE_PERIOD_NS << flaps apart (at most 6) */
} bfo__rail_rate;

/* A rail's failure detector (docs/engine-design.md, "The failure
 * detector"): what was heard on it and when, its probe, the round trips
 * that set the probe's timeout.  bfo_engine_detect.h owns it: only its
 * functions write it (bfo__detect_init, _reset, _on_<event>). */
typedef struct bfo__rail_detect {
    uint64_t last_rx;    /* heard from the peer: a frame, or bfo_engine_rail_heard */
    uint64_t host_rx;    /* heard the peer's host on the rail, not its process (bfo_engine_host_heard) */
    uint64_t busy_at;    /* the last time the peer counted as busy (bfo__detect_due) */
    uint64_t probe_sent; /* the last probe, or the last attempt to send one (shifted
                          * past a gap between progress calls, as the other clocks) */
    uint64_t probe_nonce; /* the last probe's nonce, which its PROBEACK echoes (never shifted) */
    int probe_out;       /* UP: a heartbeat probe is out, its PROBEACK not yet here */
    uint64_t srtt, rttvar; /* probe round trips: smoothed, and their variation (0: none yet) */
    int pt_shift;        /* probe timeouts in UP lately: the timeout is doubled this often */
    int pt_good;         /* heartbeats answered in a row since the last doubling */
    uint64_t woke_at;    /* its peer's last quiet spell ended (bfo__detect_wake): silence
                          * counts from here at the earliest, not from what was last
                          * heard before the spell (0: never quiet) */
} bfo__rail_detect;

/* A rail to one peer: the rail machine and what its actions keep (epoch,
 * back-off, attempts), the transport's figures, and the two concerns that
 * own their state. */
typedef struct bfo_rail_link {
    bfo_rail_fsm fsm;
    uint32_t epoch;
    unsigned caps, bw;
    uint64_t deadline, backoff;
    int attempts, ever_up;
    int broken_owed;     /* mapped out with no other rail UP: its BROKEN goes out on
                            the next rail admitted (if it is still down then) */
    bfo__rail_rate rate; /* striping by measured rate (bfo_engine_rate.h) */
    bfo__rail_detect det; /* the failure detector (bfo_engine_detect.h) */
} bfo_rail_link;

/* bfo_peer.unreachable: why the peer is gone (0: it is not); derived from
 * the peer machine's state (bfo__peer_step) */
#define BFO__GIVEN_UP 1 /* UNREACHABLE (no rail came back within unreachable_grace) or
                         * FAILED (its process is dead): its frames are refused */
#define BFO__PARTED 2   /* LEAVING, LEFT (it said BYE) or PARTED (this side left): its
                         * frames are taken as after a BYE */
/* bfo_peer.left: derived as well */
#define BFO__LEFT_OWED 1 /* LEAVING: its BYE came; messages it sent before may still come */
#define BFO__LEFT_DONE 2 /* LEFT: they came, or unreachable_grace passed: nothing more comes */

/* Flow control (docs/engine-design.md, "Credits"), in bytes of the
 * receiver's payload buffers (bfo__credit_cost), counted since init.
 * bfo_engine_match.h owns it: only the bfo__credit_* functions write it. */
typedef struct bfo__peer_credit {
    uint64_t used;  /* as sender: eager bytes charged to this peer */
    uint64_t limit; /* as sender: the most used may reach (the peer's CREDIT; until one
                     * is heard, this side's own window: a guess) */
    uint64_t freed; /* as receiver: bytes of this peer's messages taken (matched) */
    uint64_t told;  /* as receiver: freed when the last CREDIT went */
    int heard;      /* as sender: a CREDIT came (limit is no longer a guess) */
} bfo__peer_credit;

/* Relay (bfo_config.relay; docs/engine-design.md, "Relay").
 * bfo_engine_relay.h owns it: only its functions write it. */
typedef struct bfo__peer_relay {
    int via; /* RELAYED: the rank its frames go through (-1: none) */
    int out; /* frames this rank sent through this peer, their RELAYACK not yet here
              * (at most bfo_engine.relay_window) */
} bfo__peer_relay;

/* A peer: what the hot paths read first (its rails, its machine, the
 * sequences, unreachable), then the rest.  Its rails are cfg.nrails
 * bfo_rail_link in the engine's memory, carved by bfo_engine_init
 * (bfo__rails_stride): an idle peer costs the rails the job has, not
 * BFO_MAX_RAILS of them ("What an idle peer costs" in
 * docs/engine-design.md).  rail[k] for k >= cfg.nrails is another peer's
 * (an ASan build keeps a poisoned gap after each peer's: it is caught). */
typedef struct bfo_peer {
    bfo_rail_link *rail;           /* [cfg.nrails] */
    bfo_peer_fsm fsm;              /* the peer machine (spec/peer.rl): where the peer is; changed
                                    * by bfo__peer_step only */
    uint32_t failed_order;         /* FAILED: its failure's place (1, 2, ...) in the order
                                    * failures were reported here (bfo_failure_get_acked); 0 */
    uint64_t send_seq, recv_seq;   /* MATCH/RNDV/RGET sequence, all contexts: last sent,
                                    * next expected (64 bits: never wraps) */
    int unreachable;               /* gone: nothing is sent to it any more, nothing of it is
                                    * matched but what its BYE still owes: BFO__GIVEN_UP (no rail
                                    * came back within unreachable_grace), or BFO__PARTED (it said
                                    * BYE, or this side left); the one test of every hot path */
    int left;                      /* its BYE was taken: BFO__LEFT_OWED while its messages up to
                                    * left_seq may still come (rails reorder), BFO__LEFT_DONE once
                                    * they came or unreachable_grace passed */
    uint64_t down_since;           /* when the last UP rail went, or when the peer was first
                                    * needed (a rail of it left DORMANT): the grace runs from
                                    * here; 0: some rail is UP, or (DOWN) it was never needed */
    uint64_t work_at;              /* the failure detector's (bfo_engine_detect.h, "Liveness
                                    * follows the work"): the last time it had work, a request
                                    * posted to or for it, or one not complete, or an op
                                    * waiting for a rail to it */
    int quiet;                     /* 1: no work for heartbeat_ns: no heartbeat, no silence
                                    * on its rails until work comes (bfo__detect_wake) */
    int awaited;                   /* never needed, and a receive naming it posted: how many
                                    * work sweeps in a row saw one (<< 1), | 1 if this one did;
                                    * a heartbeat of them needs it (bfo__work_sweep) */
    uint64_t left_seq, left_at;    /* its BYE's sequence (the last message it sent here), when
                                    * it came */
    int pend_head, pend_tail;      /* ops waiting for an UP rail */
    int ooo_head, ooo_tail;        /* messages ahead of recv_seq, by sequence (bfo__ux_at) */
    bfo__peer_credit credit; /* flow control (bfo_engine_match.h) */
    bfo__peer_relay relay;   /* relay (bfo_engine_relay.h) */
} bfo_peer;

/* A request handle's slot: the live request, the generation its handle
 * carries, the free list.  One array, so a lookup reads one line. */
typedef struct bfo_slot {
    struct bfo_request *req; /* NULL while free */
    uint32_t gen;            /* odd: 1, then 2 more at each reuse (0 is the null handle's) */
    int next;
} bfo_slot;

/* A pool that grows in chunks: entries [0, n0) in the first block (from
 * bfo_engine_init's memory), the rest in chunks of 1 << shift entries. */
#ifndef BFO_MAX_CHUNKS
#define BFO_MAX_CHUNKS 4096 /* chunks a pool may grow by (compile-time option; sizes
                             * bfo_engine_mem_size, no layout) */
#endif
#define BFO__UX_CLASSES 24  /* payload buffer size classes: 64 << k bytes */

typedef struct bfo__pool {
    char *base;      /* the first n0 entries */
    char **chunk;    /* [BFO_MAX_CHUNKS]: the chunks grown */
    int n0, n;       /* entries in the first block; in all */
    int shift, chunks;
    int live;        /* the op and unexpected pools: entries [0, live) are set up;
                      * the rest were never touched, so their pages are not the
                      * process's yet (bfo__op_more, bfo__uxm_more: a job that
                      * never has 45,000 ops in flight never pays for them) */
} bfo__pool;

typedef struct bfo_stats {
    uint64_t messages_sent, messages_received, duplicates_dropped, stale_dropped,
        protocol_violations, malformed_frames, mapouts, readmissions, restarts, notifies,
        unreachable_errors, unreachable_frames, ops_posted, rdma_writes, rdma_reads;
    uint64_t eagers, copies, puts, gets; /* messages received by each protocol */
    uint64_t credit_rndv;  /* sends of eager size that went by rendezvous for want of credit */
    uint64_t credits_sent; /* CREDIT messages posted (this side as receiver) */
    uint64_t byes_sent;    /* BYEs posted (bfo_engine_leave: one per peer and UP or PROBING rail) */
    uint64_t peers_left;   /* peers whose BYE was taken */
    uint64_t left_errors;  /* requests completed with BFO_ERR_PEER_LEFT or BFO_ERR_LEFT */
    uint64_t demotions, promotions; /* rails demoted (slow, or standby), promoted again */
    uint64_t measures;     /* padded probes sent to measure a demoted rail */
    uint64_t procs_failed; /* peers reported dead (bfo_peer_failed): FAILED */
    uint64_t failed_errors;/* requests completed with BFO_ERR_PROC_FAILED or _PENDING */
    uint64_t revokes;      /* contexts revoked (bfo_revoke) */
    uint64_t revoked_errors;/* requests completed with BFO_ERR_REVOKED */
    uint64_t revoke_discards;/* messages discarded on a revoked context (eager dropped,
                              * rendezvous taken by a discard receive) */
    /* relay (bfo_config.relay) */
    uint64_t relayed_frames, relayed_bytes; /* frames of this rank sent through a third rank,
                                             * and their bytes (header and payload) */
    uint64_t relay_passed, relay_passed_bytes; /* frames of others this rank passed on */
    uint64_t relay_refused;   /* frames of others refused (no rail to their destination,
                               * no slot): answered RELAYACK ok 0 */
    uint64_t relay_received;  /* frames that came to this rank through a third rank */
    uint64_t relay_failed;    /* frames sent through a relay that completed with an error */
    uint64_t routes_found, routes_lost; /* peers that became RELAYED; whose route was lost */
    uint64_t reach_sent;      /* REACH reports posted */
    uint64_t rail_bytes[BFO_MAX_RAILS]; /* payload bytes posted per rail (all peers) */
} bfo_stats;

/* What an event brings to the actions it runs: the frame that caused it
 * and its sender, or the PUT slot and range of the op whose completion it
 * is.  An event fed without one (a timer, a choice, a fact) passes NULL.
 * Actions read their inputs here, never from fields of the engine. */
typedef struct bfo__input {
    const bfo_frame *f; /* the frame (its payload: f->payload, f->payload_len), or NULL */
    int peer;           /* the frame's sender */
    uint32_t slot;      /* a completed WRITE or FIN: its PUT slot and range */
    uint64_t off, len;
} bfo__input;

typedef struct bfo_engine {
    bfo_config cfg;
    bfo_backend be;
    uint64_t now;
    uint64_t timers_at;        /* the last bfo_engine_progress: a longer gap stops the rails' clocks */
    uint64_t work_at;          /* the last look for peers' work (bfo__work_sweep) */
    bfo_peer *peers;
    bfo__pool opp;             /* the operations (bfo__op_at) */
    int op_free, ops_in_use, ctl_in_use;
    int fail_head, fail_tail;  /* ops that could not be posted: completed with an error later */
    int gate_kick;             /* -1; else the peer whose ops waiting in its pending list may
                                * go (0x7fffffff: look at every peer), bfo__gate_kick */
    int gate_busy;             /* bfo__gate_kick is running */
    int self_head, self_tail;  /* ops to this rank itself: delivered, then completed, later */
    int self_busy;             /* delivering them (bfo__run_self): not again from inside */
    int deferred;              /* 1 while fail_head, self_head or gate_kick is >= 0: the
                                * one test of bfo__run_failed (bfo__deferred_note) */
    bfo__pool slotp;           /* request handles (bfo__slot_at) */
    int slot_free, slots_in_use;
    bfo__pool uxp;             /* unexpected and out-of-order messages (bfo__ux_at) */
    int uxm_free, ux_head, ux_tail, uxm_in_use;
    void *ux_buf_free[BFO__UX_CLASSES]; /* freed payload buffers by size class */
    uint8_t *ux_arena;         /* where new payload buffers are carved */
    size_t ux_arena_left, ux_bytes_in_use;
    uint64_t grow_calls, grow_failures; /* chunks asked for; refused (NULL) */
    uint64_t credit_window;    /* bfo__credit_window(&cfg), each peer's window here */
    uint64_t credit_quarter;   /* a CREDIT goes when this much came free since the last:
                                * a quarter of the window, at least 1 (bfo__credit_return) */
    size_t msg_max;            /* the most payload a MATCH or first RNDV may carry here: the
                                * larger of eager_limit and frag_size (bfo__on_message) */
    uint64_t over_window;      /* frames of a peer that found unexpected_budget spent (they
                                * wait): 0 while every peer keeps to its window (credits) */
    bfo__rbin *rbin_src, *rbin_any; /* posted receives: [match_bins] each */
    bfo__ubin *ubin_src, *ubin_ctx; /* unexpected messages: [match_bins] each */
    int bin_mask;                   /* match_bins - 1 */
    int posted_count;               /* receives posted, not matched */
    int posted_any;                 /* of them, BFO_ANY_SOURCE ones (rbin_any: looked at only then) */
    uint64_t post_seq;              /* the last pseq given */
    bfo_tracer *trace;        /* optional: every transition (set after init) */
    bfo_stats stats;
    /* described data: staging buffers (bfo__post_data) and the ops waiting for one */
    uint8_t *stage_mem;
    uint8_t *pad_mem;         /* zeros: a demoted rail's measuring probe (NULL: one rail) */
    int pad_zeroed;           /* pad_mem zeroed yet (at the first measurement: its pages
                               * are resident only once a rail is measured) */
    uint64_t *stage_tok;      /* [data_stages]: the token of the op holding it, 0: never used */
    size_t stage_size;
    int stage_wait_head, stage_wait_tail;
    bfo_request *done_head, *done_tail; /* bfo_config.done_queue: completed, not yet popped */
    int left;                 /* bfo_engine_leave was called: every peer is BFO__PARTED */
    int byes_out;             /* BYEs posted whose completion is not back (bfo_engine_left) */
    uint32_t failed_n;        /* peers reported dead so far (their failed_order: 1 .. failed_n) */
    uint32_t acked_n;         /* of them, acknowledged (bfo_failure_ack): an ANY_SOURCE receive
                               * ends BFO_ERR_PROC_FAILED_PENDING while acked_n < failed_n */
    /* revoked contexts (bfo_revoke), and the receives that take, to
     * discard them, the rendezvous that come on them (cap 0: the sender's
     * request completes, nothing is kept) */
    int nrevoked;
    int revoke_sweep;         /* a message on a revoked context may be unexpected */
    uint32_t revoked[BFO__MAX_REVOKED];
    bfo_request sink[BFO__SINKS];
    /* relay (bfo_config.relay; docs/engine-design.md, "Relay") */
    uint8_t *relay_mem;       /* [relay_slots] frames being passed on, relay_size bytes each */
    uint8_t *relay_used;      /* [relay_slots]: 1 while its frame is out */
    size_t relay_size;
    int relay_window;         /* frames out through one rank at most */
    int relay_rc;             /* take_relay's result (bfo__rcvd_RELAY returns it) */
    int reach_bytes;          /* a REACH's bitmap: (nranks + 7) / 8 */
    int reach_dirty;          /* a peer became reachable, or stopped being: report */
    uint8_t *reach_mine;      /* [reach_bytes]: the ranks this one has a live rail to */
    uint8_t *reach_of;        /* [nranks][reach_bytes]: what each peer reported */
    uint64_t *reach_gen;      /* [nranks]: the gen of each peer's report taken (0: none) */
    uint64_t reach_gen_mine;  /* the gen of this rank's last report */
    uint64_t relay_scan_at;   /* when relayed frames were last looked at for age */
} bfo_engine;

/* What a probe reports of a message. */
typedef struct bfo_status {
    int source;    /* the sender's rank in the context (its envelope's src) */
    int tag;
    int peer;      /* the engine peer it came from */
    size_t length; /* the whole message's length */
} bfo_status;

/* >>config - the configuration's defaults and the sizes it sets ----------- */

/* Engine control messages (PROBE, PROBEACK, BROKEN, RESTARTNACK) in flight
 * at once, at most; beyond it a probe waits for the next heartbeat and a
 * frame that needs an answer is refused with BFO_ERR_AGAIN. */
static inline int bfo__ctl_budget(const bfo_config *c)
{
    return 4 * c->nranks * c->nrails + 16 +
           (c->relay ? 3 * (c->relay_slots ? c->relay_slots : 16) + c->nranks : 0);
}

/* The operations kept back for control messages in the first block of the
 * op pool: the whole budget when the pools are fixed (no grow), so that
 * control never takes an op a request needs; with grow, its part that does
 * not grow with the job (16, and the relay's slots): what a peer's control
 * messages take comes from the pool's spare ops, else from a chunk grown
 * then, as they are sent.  An idle peer sends none: it costs no op. */
static inline int bfo__ctl_reserve(const bfo_config *c)
{
    if (!c->grow)
        return bfo__ctl_budget(c);
    return 16 + (c->relay ? 3 * (c->relay_slots ? c->relay_slots : 16) : 0);
}

/* A request has at most frag_pipeline + 3 operations in flight (data, plus
 * RNDV or ACK, RECVERRNOTIFY or NOTIFY, FIN or RESTARTACK), so with this
 * many operations no request ever waits for one. */
static inline int bfo__min_ops(const bfo_config *c)
{
    int pipe = c->frag_pipeline ? c->frag_pipeline : 8;
    if (pipe > BFO_MAX_PIPELINE)
        pipe = BFO_MAX_PIPELINE;
    return (c->max_requests ? c->max_requests : 1024) * (pipe + 3) + bfo__ctl_reserve(c);
}

static inline void bfo__config_defaults(bfo_config *c)
{
#define BFO__DEF(f, v) if (!c->f) c->f = v
    BFO__DEF(max_requests, 1024);
    BFO__DEF(max_unexpected, 256);
    BFO__DEF(unexpected_budget, (size_t)64 << 20);
    BFO__DEF(match_bins, 1024);
    BFO__DEF(eager_limit, 4096);
    BFO__DEF(frag_size, 65536);
    BFO__DEF(frag_pipeline, 8);
    BFO__DEF(rdma_min, 65536);
    BFO__DEF(heartbeat_ns, 100000000ull);
    BFO__DEF(silence_ns, 1000000000ull);
    BFO__DEF(probe_timeout_ns, 40000000ull);
    BFO__DEF(backoff_min_ns, 10000000ull);
    BFO__DEF(backoff_max_ns, 500000000ull);
    BFO__DEF(max_reconnects, 100);
    BFO__DEF(unreachable_grace_ns, 2000000000ull);
    BFO__DEF(data_stages, 4);
    BFO__DEF(host_timeout_ns, 500000000ull);
    BFO__DEF(rdma_frag_size, c->frag_size);
    BFO__DEF(relay_slots, 16);
    BFO__DEF(rndv_first, 4096);
#undef BFO__DEF
    if (c->rndv_first > c->eager_limit)
        c->rndv_first = c->eager_limit;
    if (c->frag_pipeline > BFO_MAX_PIPELINE)
        c->frag_pipeline = BFO_MAX_PIPELINE;
    if (!c->max_ops)
        c->max_ops = bfo__min_ops(c);
}

static inline size_t bfo__align(size_t n) { return (n + 15) & ~(size_t)15; }

/* The buffer of an unexpected message: an eager payload, or an RGET's keys. */
/* A payload buffer's size class: the smallest 64 << k that holds len. */
static inline int bfo__ux_class(size_t len)
{
    int k = 0;
    if (len <= 64)
        return 0;
#if defined(__GNUC__) || defined(__clang__)
    k = 64 - __builtin_clzll((unsigned long long)(len - 1)) - 6; /* 64 << k >= len */
    return k < BFO__UX_CLASSES - 1 ? k : BFO__UX_CLASSES - 1;
#else
    while (((size_t)64 << k) < len && k < BFO__UX_CLASSES - 1)
        k++;
    return k;
#endif
}

/* What n bytes of eager payload cost against a window: the size class the
 * receiver keeps them in (bfo__ux_class); nothing for none. */
static inline uint64_t bfo__credit_cost(size_t n)
{
    return n ? (uint64_t)64 << bfo__ux_class(n) : 0;
}

/* The window of payload buffer bytes each peer has at this receiver
 * ("Credits": >>credits in bfo_engine_match.h). */
static inline uint64_t bfo__credit_window(const bfo_config *c)
{
    return c->nranks > 1 ? (uint64_t)c->unexpected_budget / (uint64_t)(c->nranks - 1) : 0;
}

static inline size_t bfo__ux_bytes(const bfo_config *c)
{
    return c->eager_limit > 4 * BFO_MAX_RAILS ? c->eager_limit : 4 * BFO_MAX_RAILS;
}

/* A rail's rate before anything is measured (bytes per ms): the
 * transport's figure (MB/s), else 1 GB/s. */
static inline uint64_t bfo__rate_guess(const struct bfo_rail_link *rl)
{
    return rl->bw > 1 ? (uint64_t)rl->bw * 1000 : 1000000;
}

/* A staging buffer for described data: a FRAG, an eager payload or an
 * RNDV's first bytes. */
static inline size_t bfo__stage_bytes(const bfo_config *c)
{
    return c->frag_size > c->eager_limit ? c->frag_size : c->eager_limit;
}

/* A peer's rails in the engine's memory: cfg.nrails bfo_rail_link, and in
 * an ASan build with BFO_RAIL_GAPS defined (a test's option) a poisoned gap
 * after them, so that a read of rail[k] past nrails is reported rather
 * than landing in the next peer's (the gap is the unit's: bfo_engine_mem_size
 * and bfo_engine_init agree within one).  Not by default: the poison
 * outlives the engine, and a caller that reuses its block (memset before
 * another init) would be reported. */
#if !defined(BFO_RAIL_GAPS)
#elif defined(__SANITIZE_ADDRESS__)
#define BFO__ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BFO__ASAN 1
#endif
#endif
#ifdef BFO__ASAN
#define BFO__RAIL_REDZONE 16
void __asan_poison_memory_region(void const volatile *addr, size_t size);
void __asan_unpoison_memory_region(void const volatile *addr, size_t size);
#define BFO__POISON(p, n) __asan_poison_memory_region((p), (n))
#define BFO__UNPOISON(p, n) __asan_unpoison_memory_region((p), (n))
#else
#define BFO__RAIL_REDZONE 0
#define BFO__POISON(p, n) ((void)(p), (void)(n))
#define BFO__UNPOISON(p, n) ((void)(p), (void)(n))
#endif
static inline size_t bfo__rails_stride(const bfo_config *c)
{
    return bfo__align(sizeof(bfo_rail_link) * (size_t)c->nrails) + BFO__RAIL_REDZONE;
}

/* Relay: the frames passed on, and the reports of who reaches whom. */
static inline size_t bfo__relay_slot_bytes(const bfo_config *c)
{
    return BFO_MAX_HDR_SIZE + (c->frag_size > c->eager_limit ? c->frag_size : c->eager_limit);
}
static inline size_t bfo__relay_mem_size(const bfo_config *c)
{
    const size_t rb = ((size_t)c->nranks + 7) / 8;
    if (!c->relay)
        return 0;
    return bfo__align(bfo__relay_slot_bytes(c) * (size_t)c->relay_slots) + bfo__align((size_t)c->relay_slots) +
           bfo__align(rb) + bfo__align(rb * (size_t)c->nranks) + bfo__align(sizeof(uint64_t) * (size_t)c->nranks);
}

/* >>layout - the layout descriptor (ABI) ---------------------------------- */

/* The version of bfo_abi and of the layouts it cannot see by their sizes
 * alone (fields reordered): a new number when either changes, or a public
 * struct of bfo_net's (bfo_rail_stats), whose init checks this too (2: issue 35,
 * the engine's concerns in sub-structs and bfo_rail_stats' transport counters
 * as data, one number for both).  Fields of
 * bfo_abi are only ever appended, with a new version. */
#define BFO_ABI_VERSION 2

/* The layout of the public structs as one translation unit sees them: its
 * compile-time options and the sizes they give.  BFO_ABI_HERE is the
 * descriptor of the unit it is written in; bfo_abi_check compares two. */
typedef struct bfo_abi {
    uint32_t version;         /* BFO_ABI_VERSION: the rest is read only when it agrees */
    uint32_t max_rails;       /* BFO_MAX_RAILS */
    uint32_t max_actions;     /* BFO_MAX_ACTIONS */
    uint32_t sizeof_engine, sizeof_peer, sizeof_stats, sizeof_request, sizeof_config,
        sizeof_backend, sizeof_step;
} bfo_abi;

/* static: every translation unit has its own, built with its own options. */
static inline const bfo_abi *bfo__abi_here(void)
{
    static const bfo_abi here = {
        BFO_ABI_VERSION, (uint32_t)BFO_MAX_RAILS, (uint32_t)BFO_MAX_ACTIONS,
        (uint32_t)sizeof(bfo_engine), (uint32_t)sizeof(bfo_peer), (uint32_t)sizeof(bfo_stats),
        (uint32_t)sizeof(bfo_request), (uint32_t)sizeof(bfo_config), (uint32_t)sizeof(bfo_backend),
        (uint32_t)sizeof(bfo_step)};
    return &here;
}

/* The layout of the translation unit this is written in: a const bfo_abi *
 * (valid for the whole run). */
#define BFO_ABI_HERE (bfo__abi_here())

#ifdef __cplusplus
}
#endif
#endif /* BFO_ENGINE_TYPES_H */
