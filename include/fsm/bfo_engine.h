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

/* Configuration: zero means the default given here. */
typedef struct bfo_config {
    int rank, nranks;      /* this process, and how many (required) */
    int nrails;            /* rails per peer, 1..BFO_MAX_RAILS (required) */
    int max_requests;      /* requests alive at once, sends and receives from post to
                            * completion (default 1024) */
    int max_ops;           /* operations in flight (default and minimum: enough for every
                            * request at once, max_requests * (frag_pipeline + 3),
                            * plus engine control messages, see bfo__min_ops) */
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
                                   * the other, an answer's round trip between them: over
                                   * TCP loopback with a 64 KiB eager_limit, 128 KiB took
                                   * 1.52-1.55x raw TCP a way with 4 KiB in the RNDV,
                                   * 1.89-1.98x with 64 KiB.  What it carries waits at a
                                   * receiver that has not posted yet, counted against the
                                   * sender's window */
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

typedef struct bfo_rail_link {
    bfo_rail_fsm fsm;
    uint32_t epoch;
    unsigned caps, bw;
    uint64_t last_rx;    /* heard from the peer: a frame, or bfo_engine_rail_heard */
    uint64_t host_rx;    /* heard the peer's host on the rail, not its process (bfo_engine_host_heard) */
    uint64_t busy_at;    /* the last time the peer counted as busy (bfo_engine_progress) */
    uint64_t last_tx;    /* posted an operation on the rail */
    uint64_t probe_sent; /* the last probe, or the last attempt to send one (shifted
                          * past a gap between progress calls, as the other clocks) */
    uint64_t probe_nonce; /* the last probe's nonce, which its PROBEACK echoes (never shifted) */
    uint64_t deadline, backoff;
    /* Striping by measured rate (docs/engine-design.md): */
    uint64_t q_bytes;    /* bytes given to the backend on this rail, not yet completed */
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
    int inflight;        /* ops given to the backend on this rail, not yet completed */
    int attempts, ever_up;
    int probe_out;       /* UP: a heartbeat probe is out, its PROBEACK not yet here */
    int broken_owed;     /* mapped out with no other rail UP: its BROKEN goes out on
                            the next rail admitted (if it is still down then) */
    uint64_t srtt, rttvar; /* probe round trips: smoothed, and their variation (0: none yet) */
    int pt_shift;        /* probe timeouts in UP lately: the timeout is doubled this often */
    int pt_good;         /* heartbeats answered in a row since the last doubling */
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

typedef struct bfo_peer {
    bfo_rail_link rail[BFO_MAX_RAILS];
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
    uint64_t down_since;           /* when the last UP rail went (0: some rail is UP) */
    uint64_t left_seq, left_at;    /* its BYE's sequence (the last message it sent here), when
                                    * it came */
    int pend_head, pend_tail;      /* ops waiting for an UP rail */
    int ooo_head, ooo_tail;        /* messages ahead of recv_seq, by sequence (bfo__ux_at) */
    /* Flow control (docs/engine-design.md, "Credits"), in bytes of the
     * receiver's payload buffers (bfo__credit_cost), counted since init: */
    uint64_t credit_used;  /* as sender: eager bytes charged to this peer */
    uint64_t credit_limit; /* as sender: the most credit_used may reach (the peer's CREDIT;
                            * until one is heard, this side's own window: a guess) */
    uint64_t credit_freed; /* as receiver: bytes of this peer's messages taken (matched) */
    uint64_t credit_told;  /* as receiver: credit_freed when the last CREDIT went */
    int credit_heard;      /* as sender: a CREDIT came (credit_limit is no longer a guess) */
    /* Relay (bfo_config.relay): */
    int via;               /* RELAYED: the rank its frames go through (-1: none) */
    int relay_out;         /* frames this rank sent through this peer, their RELAYACK not
                            * yet here (at most bfo_engine.relay_window) */
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

/* The entry i of a pool of elements of size sz. */
static inline void *bfo__pool_at(const bfo__pool *p, int i, size_t sz)
{
    if (BFO__LIKELY(i < p->n0))
        return p->base + (size_t)i * sz;
    i -= p->n0;
    return p->chunk[i >> p->shift] + (size_t)(i & ((1 << p->shift) - 1)) * sz;
}
static inline bfo_op *bfo__op_at(const bfo_engine *e, int i)
{
    return (bfo_op *)bfo__pool_at(&e->opp, i, sizeof(bfo_op));
}
static inline bfo_slot *bfo__slot_at(const bfo_engine *e, int i)
{
    return (bfo_slot *)bfo__pool_at(&e->slotp, i, sizeof(bfo_slot));
}
static inline bfo_uxm *bfo__ux_at(const bfo_engine *e, int i)
{
    return (bfo_uxm *)bfo__pool_at(&e->uxp, i, sizeof(bfo_uxm));
}

/* One more chunk for a pool (sz bytes an entry); the index of its first
 * entry, or -1 (no grow, BFO_MAX_CHUNKS reached, or grow refused). */
static inline int bfo__pool_grow(bfo_engine *e, bfo__pool *p, size_t sz)
{
    void *m;
    const int per = 1 << p->shift;
    if (!e->cfg.grow || p->chunks == BFO_MAX_CHUNKS || p->n > 0x7fffffff - per)
        return -1;
    e->grow_calls++;
    m = e->cfg.grow(e->cfg.grow_ctx, sz * (size_t)per);
    if (!m) {
        e->grow_failures++;
        return -1;
    }
    p->chunk[p->chunks++] = (char *)m;
    p->n += per;
    return p->n - per;
}

/* ------------------------------------------------------------------- ABI */

/* The version of bfo_abi and of the layouts it cannot see by their sizes
 * alone (fields reordered): a new number when either changes.  Fields of
 * bfo_abi are only ever appended, with a new version. */
#define BFO_ABI_VERSION 1

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

/* ===================================================================== THE API
 *
 * Every public function of the engine, with what it returns; the
 * implementation follows below, section by section (ABI, init, handles,
 * ops, requests, rails, matching, frames, the API's bodies).  Error codes
 * are BFO_ERRORS in bfo_core.h.  bfo_engine_init, the call to use, is the
 * macro after bfo_engine_init_abi.
 */

/* --- Set up */

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
 * the caller's own layout (BFO_ABI_HERE), defined with it below. */

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

/* bfo_irecv_env where ranks are engine peers: src is peer. */
static inline int bfo_irecv(bfo_engine *e, bfo_request *r, void *buf, size_t cap, int peer,
                            uint32_t ctx, int tag, uint64_t now) BFO__ALWAYS_INLINE;

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

/* What a probe reports of a message. */
typedef struct bfo_status {
    int source;    /* the sender's rank in the context (its envelope's src) */
    int tag;
    int peer;      /* the engine peer it came from */
    size_t length; /* the whole message's length */
} bfo_status;

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

/* Called by the backend: BFO_EV_CONNECTED, BFO_EV_CONNECT_FAILED,
 * BFO_EV_RAIL_ERROR or BFO_EV_RAIL_ABSENT (the rail does not reach this
 * peer) for one peer, or every peer (BFO_ALL_PEERS).  An event
 * the rail does not wait for (CONNECTED on a rail already probing or up, an
 * error on a rail already failed) changes nothing and is not an error. */
static inline void bfo_engine_rail_event(bfo_engine *e, int peer, int rail, int ev, uint64_t now);

/* Called by the backend when it heard from the peer on this rail without a
 * frame for the engine: a transport acknowledgement, or a keepalive that the
 * peer sends while it applies back-pressure (it is alive, only not reading).
 * The rail is alive: an outstanding heartbeat probe waits probe_timeout from
 * now before it times out (it stays outstanding until its PROBEACK), and the
 * silence timer starts again.  Harmless in any rail state; an out-of-range
 * peer or rail, this rank and an unreachable peer are ignored. */
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

/* A message into why[0..len), cut short to fit, always terminated. */
typedef struct bfo__msg {
    char *p;
    size_t cap, len;
} bfo__msg;

static inline void bfo__msg_str(bfo__msg *m, const char *s)
{
    for (; *s; s++, m->len++)
        if (m->len + 1 < m->cap)
            m->p[m->len] = *s;
    if (m->cap)
        m->p[m->len < m->cap ? m->len : m->cap - 1] = 0;
}

static inline void bfo__msg_u32(bfo__msg *m, uint32_t v)
{
    char d[11];
    int n = (int)sizeof d - 1;
    d[n] = 0;
    do {
        d[--n] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    bfo__msg_str(m, d + n);
}

/* "NAME is A in the caller, B in the library" when a != b; counts them. */
static inline void bfo__abi_differ(bfo__msg *m, int *n, const char *name, uint32_t a, uint32_t b)
{
    if (a == b)
        return;
    bfo__msg_str(m, *n ? "; " : "");
    bfo__msg_str(m, name);
    bfo__msg_str(m, " is ");
    bfo__msg_u32(m, a);
    bfo__msg_str(m, " in the caller, ");
    bfo__msg_u32(m, b);
    bfo__msg_str(m, " in the library");
    ++*n;
}

/* bfo_abi_check: see THE API near the top. */
static inline int bfo_abi_check(const bfo_abi *caller, const bfo_abi *built, char *why,
                                size_t whylen)
{
    bfo__msg m;
    int n = 0;
    m.p = why;
    m.cap = why ? whylen : 0;
    m.len = 0;
    bfo__msg_str(&m, "");
    if (caller == built && caller)
        return BFO_OK;
    if (!caller || !built) {
        bfo__msg_str(&m, "no layout descriptor (pass BFO_ABI_HERE)");
        return BFO_ERR_INVALID;
    }
    if (caller->version != built->version) {
        bfo__abi_differ(&m, &n, "BFO_ABI_VERSION", caller->version, built->version);
        bfo__msg_str(&m, ": headers of another bfo version; build both from one");
        return BFO_ERR_ABI;
    }
    bfo__abi_differ(&m, &n, "BFO_MAX_RAILS", caller->max_rails, built->max_rails);
    bfo__abi_differ(&m, &n, "BFO_MAX_ACTIONS", caller->max_actions, built->max_actions);
    if (n) {
        bfo__msg_str(&m, "; build both with the same options (pkg-config --cflags bfo has the library's)");
        return BFO_ERR_ABI;
    }
    bfo__abi_differ(&m, &n, "sizeof(bfo_engine)", caller->sizeof_engine, built->sizeof_engine);
    bfo__abi_differ(&m, &n, "sizeof(bfo_peer)", caller->sizeof_peer, built->sizeof_peer);
    bfo__abi_differ(&m, &n, "sizeof(bfo_stats)", caller->sizeof_stats, built->sizeof_stats);
    bfo__abi_differ(&m, &n, "sizeof(bfo_request)", caller->sizeof_request, built->sizeof_request);
    bfo__abi_differ(&m, &n, "sizeof(bfo_config)", caller->sizeof_config, built->sizeof_config);
    bfo__abi_differ(&m, &n, "sizeof(bfo_backend)", caller->sizeof_backend, built->sizeof_backend);
    bfo__abi_differ(&m, &n, "sizeof(bfo_step)", caller->sizeof_step, built->sizeof_step);
    if (n) {
        bfo__msg_str(&m, ": another compiler, target or packing? Build both alike");
        return BFO_ERR_ABI;
    }
    return BFO_OK;
}

/* ------------------------------------------------------------------ init */

/* Engine control messages (PROBE, PROBEACK, BROKEN, RESTARTNACK) in flight
 * at once, at most; beyond it a probe waits for the next heartbeat and a
 * frame that needs an answer is refused with BFO_ERR_AGAIN. */
static inline int bfo__ctl_budget(const bfo_config *c)
{
    return 4 * c->nranks * c->nrails + 16 +
           (c->relay ? 3 * (c->relay_slots ? c->relay_slots : 16) + c->nranks : 0);
}

/* A request has at most frag_pipeline + 3 operations in flight (data, plus
 * RNDV or ACK, RECVERRNOTIFY or NOTIFY, FIN or RESTARTACK), so with this
 * many operations no request ever waits for one. */
static inline int bfo__min_ops(const bfo_config *c)
{
    int pipe = c->frag_pipeline ? c->frag_pipeline : 8;
    if (pipe > BFO_MAX_PIPELINE)
        pipe = BFO_MAX_PIPELINE;
    return (c->max_requests ? c->max_requests : 1024) * (pipe + 3) + bfo__ctl_budget(c);
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
 * ("Credits", below). */
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

/* bfo_engine_mem_size: see THE API near the top. */
static inline size_t bfo_engine_mem_size(const bfo_config *cfg_in)
{
    bfo_config c = *cfg_in;
    bfo__config_defaults(&c);
    return bfo__align(sizeof(bfo_peer) * (size_t)c.nranks) +
           bfo__align(sizeof(bfo_op) * (size_t)c.max_ops) +
           bfo__align(sizeof(bfo_slot) * (size_t)c.max_requests) +
           bfo__align(sizeof(bfo_uxm) * (size_t)c.max_unexpected) +
           bfo__align(bfo__ux_bytes(&c) * (size_t)c.max_unexpected) +
           3 * bfo__align(sizeof(char *) * BFO_MAX_CHUNKS) +
           2 * bfo__align(sizeof(bfo__rbin) * (size_t)c.match_bins) +
           2 * bfo__align(sizeof(bfo__ubin) * (size_t)c.match_bins) +
           bfo__align(sizeof(uint64_t) * (size_t)c.data_stages) +
           bfo__align(bfo__stage_bytes(&c) * (size_t)c.data_stages) +
           (c.nrails > 1 ? bfo__align(BFO_MEASURE_BYTES) : 0) + bfo__relay_mem_size(&c) + 16;
}

static inline void *bfo__carve(char **p, size_t n)
{
    void *r = *p;
    *p += bfo__align(n);
    return r;
}

/* A pool's first block, n entries of sz bytes, and its chunk table, carved
 * from the engine's memory; chunks grown later have a power of two of
 * entries, at least n (at least 256). */
static inline void bfo__pool_init(bfo__pool *pl, char **p, int n, size_t sz)
{
    pl->base = (char *)bfo__carve(p, sz * (size_t)n);
    pl->chunk = (char **)bfo__carve(p, sizeof(char *) * BFO_MAX_CHUNKS);
    pl->n0 = pl->n = n;
    pl->chunks = 0;
    for (pl->shift = 8; (1 << pl->shift) < n && pl->shift < 20; pl->shift++)
        ;
}

/* New entries [from, to) onto the free lists (in order: the lowest first). */
static inline void bfo__ops_free_range(bfo_engine *e, int from, int to)
{
    for (int i = to - 1; i >= from; i--) {
        bfo_op *op = bfo__op_at(e, i);
        op->idx = i;
        op->gen = 1;
        op->posted = 0;
        op->next = i + 1 < to ? i + 1 : e->op_free;
    }
    if (from < to)
        e->op_free = from;
}
static inline void bfo__slots_free_range(bfo_engine *e, int from, int to)
{
    for (int i = to - 1; i >= from; i--) {
        bfo_slot *s = bfo__slot_at(e, i);
        s->req = NULL;
        s->gen = 1;
        s->next = i + 1 < to ? i + 1 : e->slot_free;
    }
    if (from < to)
        e->slot_free = from;
}
static inline void bfo__ux_free_range(bfo_engine *e, int from, int to)
{
    for (int i = to - 1; i >= from; i--) {
        bfo_uxm *u = bfo__ux_at(e, i);
        u->used = 0;
        u->data = NULL;
        u->next = i + 1 < to ? i + 1 : e->uxm_free;
    }
    if (from < to)
        e->uxm_free = from;
}

static inline void bfo__rail_step(bfo_engine *e, int peer, int rail, int ev, const bfo_frame *f);
static BFO__COLD void bfo__peer_step(bfo_engine *e, int peer, int ev);
static BFO__COLD void bfo__relay_fail_via(bfo_engine *e, int via);
static BFO__COLD void bfo__relay_bye(bfo_engine *e, int peer);
static BFO__COLD void bfo__relay_progress(bfo_engine *e);

/* bfo_engine_init_abi: see THE API near the top. */
static inline int bfo_engine_init_abi(bfo_engine *e, const bfo_config *cfg, const bfo_backend *be,
                                      void *mem, size_t mem_len, uint64_t now,
                                      const bfo_abi *caller)
{
    char *p = (char *)(((uintptr_t)mem + 15) & ~(uintptr_t)15);
    int rc = bfo_abi_check(caller, BFO_ABI_HERE, NULL, 0);
    if (rc != BFO_OK)
        return rc;
    memset(e, 0, sizeof *e);
    if (!cfg || !be || !be->post_send || cfg->nranks <= 0 || cfg->rank < 0 ||
        cfg->rank >= cfg->nranks || cfg->nrails <= 0 || cfg->nrails > BFO_MAX_RAILS)
        return BFO_ERR_INVALID;
    e->cfg = *cfg;
    bfo__config_defaults(&e->cfg);
    if (e->cfg.max_ops < bfo__min_ops(&e->cfg) || e->cfg.rdma < 0 || e->cfg.rdma > BFO_RDMA_OFF ||
        e->cfg.match_bins < 1 || (e->cfg.match_bins & (e->cfg.match_bins - 1)) ||
        e->cfg.data_stages < 0 || e->cfg.relay < 0 || e->cfg.relay > 1 || e->cfg.relay_slots < 1)
        return BFO_ERR_INVALID;
    if (!mem || mem_len < bfo_engine_mem_size(cfg))
        return BFO_ERR_NO_MEMORY;
    e->be = *be;
    e->now = now;
    const bfo_config *c = &e->cfg;
    e->peers = (bfo_peer *)bfo__carve(&p, sizeof(bfo_peer) * (size_t)c->nranks);
    bfo__pool_init(&e->opp, &p, c->max_ops, sizeof(bfo_op));
    bfo__pool_init(&e->slotp, &p, c->max_requests, sizeof(bfo_slot));
    bfo__pool_init(&e->uxp, &p, c->max_unexpected, sizeof(bfo_uxm));
    e->ux_arena = (uint8_t *)bfo__carve(&p, bfo__ux_bytes(c) * (size_t)c->max_unexpected);
    e->ux_arena_left = bfo__ux_bytes(c) * (size_t)c->max_unexpected;
    e->rbin_src = (bfo__rbin *)bfo__carve(&p, sizeof(bfo__rbin) * (size_t)c->match_bins);
    e->rbin_any = (bfo__rbin *)bfo__carve(&p, sizeof(bfo__rbin) * (size_t)c->match_bins);
    e->ubin_src = (bfo__ubin *)bfo__carve(&p, sizeof(bfo__ubin) * (size_t)c->match_bins);
    e->ubin_ctx = (bfo__ubin *)bfo__carve(&p, sizeof(bfo__ubin) * (size_t)c->match_bins);
    e->bin_mask = c->match_bins - 1;
    for (int i = 0; i < c->match_bins; i++) {
        e->rbin_src[i].head = e->rbin_src[i].tail = NULL;
        e->rbin_any[i].head = e->rbin_any[i].tail = NULL;
        e->ubin_src[i].head = e->ubin_src[i].tail = -1;
        e->ubin_ctx[i].head = e->ubin_ctx[i].tail = -1;
    }
    e->stage_tok = (uint64_t *)bfo__carve(&p, sizeof(uint64_t) * (size_t)c->data_stages);
    e->stage_mem = (uint8_t *)bfo__carve(&p, bfo__stage_bytes(c) * (size_t)c->data_stages);
    e->stage_size = bfo__stage_bytes(c);
    e->pad_mem = NULL;
    if (c->nrails > 1) {
        e->pad_mem = (uint8_t *)bfo__carve(&p, BFO_MEASURE_BYTES);
        memset(e->pad_mem, 0, BFO_MEASURE_BYTES);
    }
    memset(e->stage_tok, 0, sizeof(uint64_t) * (size_t)c->data_stages);
    e->stage_wait_head = e->stage_wait_tail = -1;
    e->credit_window = bfo__credit_window(c);
    e->over_window = 0;
    e->msg_max = c->eager_limit > c->frag_size ? c->eager_limit : c->frag_size;
    e->credit_quarter = e->credit_window / 4 ? e->credit_window / 4 : 1;
    e->reach_bytes = (c->nranks + 7) / 8;
    if (c->relay) {
        e->relay_size = bfo__relay_slot_bytes(c);
        e->relay_mem = (uint8_t *)bfo__carve(&p, e->relay_size * (size_t)c->relay_slots);
        e->relay_used = (uint8_t *)bfo__carve(&p, (size_t)c->relay_slots);
        e->reach_mine = (uint8_t *)bfo__carve(&p, (size_t)e->reach_bytes);
        e->reach_of = (uint8_t *)bfo__carve(&p, (size_t)e->reach_bytes * (size_t)c->nranks);
        e->reach_gen = (uint64_t *)bfo__carve(&p, sizeof(uint64_t) * (size_t)c->nranks);
        memset(e->relay_used, 0, (size_t)c->relay_slots);
        memset(e->reach_mine, 0, (size_t)e->reach_bytes);
        memset(e->reach_of, 0, (size_t)e->reach_bytes * (size_t)c->nranks);
        memset(e->reach_gen, 0, sizeof(uint64_t) * (size_t)c->nranks);
        e->relay_window = c->nranks > 2 ? c->relay_slots / (c->nranks - 1) : c->relay_slots;
        if (e->relay_window < 1)
            e->relay_window = 1;
    }

    for (int i = 0; i < c->nranks; i++) {
        bfo_peer *pe = &e->peers[i];
        memset(pe, 0, sizeof *pe);
        pe->recv_seq = 1;
        pe->pend_head = pe->pend_tail = -1;
        pe->ooo_head = pe->ooo_tail = -1;
        pe->down_since = now ? now : 1;
        pe->credit_limit = e->credit_window; /* our own window: a guess, until told */
        pe->via = -1;
        bfo_peer_init(&pe->fsm);
        bfo__peer_step(e, i, i == c->rank ? BFO_PEER_EV_SELF_CHOSEN : BFO_PEER_EV_PEER_CHOSEN);
        for (int r = 0; r < c->nrails; r++) {
            bfo_rail_init(&pe->rail[r].fsm);
            pe->rail[r].backoff = c->backoff_min_ns;
            pe->rail[r].caps = be->rail_caps ? be->rail_caps(be->ctx, r) : 0;
            pe->rail[r].bw = be->rail_bandwidth ? be->rail_bandwidth(be->ctx, r) : 0;
            if (!pe->rail[r].bw)
                pe->rail[r].bw = 1;
            pe->rail[r].rate = bfo__rate_guess(&pe->rail[r]);
        }
    }
    e->op_free = -1;
    bfo__ops_free_range(e, 0, c->max_ops);
    e->fail_head = e->fail_tail = -1;
    e->gate_kick = -1;
    e->self_head = e->self_tail = -1;
    e->deferred = 0;
    e->slot_free = e->uxm_free = -1;
    bfo__slots_free_range(e, 0, c->max_requests);
    bfo__ux_free_range(e, 0, c->max_unexpected);
    e->ux_head = e->ux_tail = -1;
    for (int k = 0; k < BFO__SINKS; k++)
        e->sink[k].complete = 1; /* free */
    for (int i = 0; i < c->nranks; i++)
        if (i != c->rank)
            for (int r = 0; r < c->nrails; r++)
                if (be->connect && be->connect(be->ctx, i, r) != 0)
                    bfo__rail_step(e, i, r, BFO_EV_CONNECT_FAILED, NULL);
    return BFO_OK;
}

/* bfo_engine_init(e, cfg, be, mem, mem_len, now): bfo_engine_init_abi with
 * the layout of the caller's translation unit.  Returns BFO_OK,
 * BFO_ERR_INVALID, BFO_ERR_NO_MEMORY, or BFO_ERR_ABI (only when a library
 * in between passes another unit's layout). */
#define bfo_engine_init(e, cfg, be, mem, mem_len, now) \
    bfo_engine_init_abi((e), (cfg), (be), (mem), (mem_len), (now), BFO_ABI_HERE)

/* 0 <= i < n in one compare: a negative i wraps above any n.  For the
 * argument checks on every entry point. */
static inline int bfo__in_range(int i, int n) { return (unsigned)i < (unsigned)n; }

/* --------------------------------------------------------------- handles */

static inline bfo_handle bfo__null_handle(void)
{
    bfo_handle h;
    h.index = 0;
    h.gen = 0;
    return h;
}

/* The slot pool is empty: one more chunk of it (bfo_config.grow), the
 * index of a free slot, or -1. */
static BFO__COLD int bfo__slot_grow(bfo_engine *e)
{
    int i = bfo__pool_grow(e, &e->slotp, sizeof(bfo_slot));
    if (i >= 0)
        bfo__slots_free_range(e, i, e->slotp.n);
    return i;
}

/* Slots are counted, not only listed: slots_in_use is the handles taken
 * plus the receives posted without one (a reservation: bfo__slot_reserve),
 * so the free list always holds a slot for each reservation, and a
 * receive that matches a rendezvous takes its handle then (bfo__self)
 * without a way to fail.  An eager receive never takes one: nothing
 * names it (docs/engine-design.md, "Handles"). */
static inline int bfo__slot_reserve(bfo_engine *e)
{
    if (BFO__UNLIKELY(e->slots_in_use >= e->slotp.n) && bfo__slot_grow(e) < 0)
        return 0;
    e->slots_in_use++;
    return 1;
}

/* The free list's first slot, for r: counted already. */
static BFO__HOT bfo_handle bfo__handle_take(bfo_engine *e, bfo_request *r)
{
    bfo_handle h;
    const int i = e->slot_free;
    bfo_slot *s = bfo__slot_at(e, i);
    e->slot_free = s->next;
    s->req = r;
    h.index = (uint32_t)i;
    h.gen = s->gen;
    return h;
}

static BFO__HOT bfo_handle bfo__handle_alloc(bfo_engine *e, bfo_request *r)
{
    if (!bfo__slot_reserve(e))
        return bfo__null_handle();
    return bfo__handle_take(e, r);
}

/* A request's handle: a receive posted with a reservation takes it the
 * first time it is asked for (to answer a rendezvous, to post an op). */
static BFO__COLD void bfo__self_take(bfo_engine *e, bfo_request *r)
{
    if (e->slot_free >= 0) /* always: reserved */
        r->self = bfo__handle_take(e, r);
}
static inline bfo_handle bfo__self(bfo_engine *e, bfo_request *r)
{
    if (BFO__UNLIKELY(bfo_handle_is_null(r->self)))
        bfo__self_take(e, r);
    return r->self;
}

/* A finishing request gives its own handle back (or its reservation):
 * live and current by construction (taken at bfo_isend, bfo_irecv or
 * bfo__self, released once, here), so unlike a handle a peer names it
 * needs no check. */
static inline void bfo__handle_release(bfo_engine *e, const bfo_request *r)
{
    bfo_slot *s;
    e->slots_in_use--;
    if (bfo_handle_is_null(r->self))
        return;
    s = bfo__slot_at(e, r->self.index);
    s->req = NULL;
    s->gen += 2; /* odd from 1 on: never 0, the null handle's */
    s->next = e->slot_free;
    e->slot_free = (int)r->self.index;
}

/* The live request a handle names, or NULL (null, out of range, recycled).
 * The null handle has generation 0, which no slot ever has. */
static inline bfo_request *bfo__handle_get(const bfo_engine *e, bfo_handle h)
{
    if (h.index >= (uint32_t)e->slotp.n || bfo__slot_at(e, h.index)->gen != h.gen)
        return NULL;
    return bfo__slot_at(e, h.index)->req;
}

/* The request a peer's frame may name, or NULL: a receive takes its handle
 * when a rendezvous matched it (bfo__self), and the peer learns it from
 * the answer (ACK, PUT, RECVERRNOTIFY); a frame naming a receive still
 * posted is forged. */
static inline bfo_request *bfo__handle_named(const bfo_engine *e, bfo_handle h)
{
    bfo_request *r = bfo__handle_get(e, h);
    return r && !(r->kind == BFO_REQ_RECV && r->cs == BFO_RECV_ST_POSTED) ? r : NULL;
}

/* ------------------------------------------------------------------- ops */

/* The op pool is empty: one more chunk of it, the index of a free op, or -1. */
static BFO__COLD int bfo__op_grow(bfo_engine *e)
{
    int i = bfo__pool_grow(e, &e->opp, sizeof(bfo_op));
    if (i >= 0)
        bfo__ops_free_range(e, i, e->opp.n);
    return i;
}

static BFO__HOT bfo_op *bfo__op_alloc(bfo_engine *e, int type, int peer)
{
    int i = e->op_free;
    bfo_op *op;
    if (BFO__UNLIKELY(i < 0) && (i = bfo__op_grow(e)) < 0)
        return NULL;
    op = bfo__op_at(e, i);
    e->op_free = op->next;
    e->ops_in_use++;
    op->next = -1;
    op->type = type;
    op->peer = peer;
    op->rail = -1;
    op->posted = 0;
    op->fixed_rail = -1;
    op->about_rail = -1;
    op->owner = bfo__null_handle();
    op->rseq = 0;
    op->off = op->len = 0;
    op->payload = NULL;
    op->payload_len = op->hdr_len = 0;
    return op;
}

/* An engine-owned control op, within the control budget; NULL beyond it. */
static inline bfo_op *bfo__ctl_alloc(bfo_engine *e, int type, int peer)
{
    bfo_op *op;
    if (e->ctl_in_use >= bfo__ctl_budget(&e->cfg) || !(op = bfo__op_alloc(e, type, peer)))
        return NULL;
    e->ctl_in_use++;
    return op;
}

static BFO__HOT void bfo__rail_unqueued(bfo_engine *e, const bfo_op *op, uint64_t n, int ok);
static inline uint64_t bfo__op_qbytes(const bfo_op *op);

/* The op is back from the backend (completed: ok says how; or never taken). */
static inline void bfo__op_unpost(bfo_engine *e, bfo_op *op, int ok)
{
    if (op->posted) {
        op->posted = 0;
        bfo__rail_unqueued(e, op, bfo__op_qbytes(op), ok);
    }
}

static inline void bfo__op_free(bfo_engine *e, bfo_op *op)
{
    int i = op->idx;
    bfo__op_unpost(e, op, 0);
    if (bfo_handle_is_null(op->owner))
        e->ctl_in_use--;
    op->gen += 2; /* odd from 1 on: a token is never 0 */
    op->next = e->op_free;
    e->op_free = i;
    e->ops_in_use--;
}

static inline uint64_t bfo__token(const bfo_op *op)
{
    return ((uint64_t)op->gen << 32) | (uint32_t)op->idx;
}

/* UP: the rail carries data.  Live: UP or DEMOTED, connected and working
 * (probed, fails as UP does, carries control when no rail is UP). */
static inline int bfo__rail_up(const bfo_engine *e, int peer, int rail)
{
    return e->peers[peer].rail[rail].fsm.cs == BFO_RAIL_ST_UP;
}
static inline int bfo__live(int cs) { return cs == BFO_RAIL_ST_UP || cs == BFO_RAIL_ST_DEMOTED; }

/* Operations that are not engine frames: RDMA by this side. */
#define BFO__OP_WRITE 0x100
#define BFO__OP_READ 0x101
static inline int bfo__op_rdma(int type) { return type == BFO__OP_WRITE || type == BFO__OP_READ; }

static inline int bfo__rail_rdma(const bfo_engine *e, int peer, int rail)
{
    return bfo__rail_up(e, peer, rail) && (e->peers[peer].rail[rail].caps & BFO_CAP_RDMA);
}

/* 1 when RDMA can be used with this peer: the backend can, and a rail that
 * can is UP (up_now), or is neither retired nor absent (the sender's
 * choice, made before the rails may be up; the receiver, who decides last,
 * checks up_now). */
static inline int bfo__rdma_ok(const bfo_engine *e, int peer, int up_now)
{
    if (!e->be.post_write || !e->be.post_read || !e->be.reg_mem ||
        e->peers[peer].fsm.cs == BFO_PEER_ST_RELAYED) /* no RDMA through a relay */
        return 0;
    for (int r = 0; r < e->cfg.nrails; r++) {
        const bfo_rail_link *rl = &e->peers[peer].rail[r];
        if ((rl->caps & BFO_CAP_RDMA) &&
            (up_now ? rl->fsm.cs == BFO_RAIL_ST_UP
                    : rl->fsm.cs != BFO_RAIL_ST_RETIRED && rl->fsm.cs != BFO_RAIL_ST_ABSENT))
            return 1;
    }
    return 0;
}

/* Striping of data (FRAG, WRITE, READ) by measured rate: an op goes to the
 * eligible UP rail (RDMA rails only, for RDMA) where it is expected to be
 * delivered first: the bytes already queued on it (q_bytes: posted, not
 * completed) and its own, at the rail's measured rate.  Bytes thus split in
 * proportion to what each rail delivers, and a rail that slows down is
 * given less as its queue stops draining, before any sample says so.  A
 * DEMOTED rail (slow, or standby) gets none; a rail on probation (less
 * than BFO_PROBATION_BYTES delivered since its admission or promotion: its
 * rate is a guess, or what a few pieces said) gets
 * one piece of BFO__STRIPE_MIN or more at a time, so a rail that is slow
 * from the start holds up one piece, not a share (the only eligible rail
 * takes everything: there is no choice to make); and it gets the next one
 * as soon as the last is back, whatever its estimate, so that its
 * probation ends on pieces, not on a guess (a lone piece reads its round
 * trip: a readmitted loopback rail read at a thirtieth of the other on
 * its first was expected to finish last for every later piece, and was
 * given none).  When every eligible
 * rail, two or more, is on probation with its piece out (the first pieces
 * to a peer), BFO__PICK_WAIT: the op waits in the peer's pending list for the first
 * sample (bfo__gate_kick), a round trip of the fastest rail.  A
 * FRAG shorter than
 * BFO__STRIPE_MIN is not striped: it goes as a small message does
 * (bfo__pick_rail), so the tail of a message just past the eager limit
 * (64 KiB + 1) follows its RNDV on an idle peer's rail instead of waking a
 * second connection and its acknowledgement (two rails took 59 us a way
 * for it, one rail 32). */
#define BFO__STRIPE_MIN 16384
#define BFO__PICK_WAIT (-2) /* every UP rail on probation holds a piece: wait for a sample */
static inline int bfo__pick_weighted(bfo_engine *e, int peer, uint64_t len, int rdma)
{
    bfo_peer *p = &e->peers[peer];
    int best = -1, gated = -1, ngated = 0;
    uint64_t best_t = 0;
    for (int r = 0; r < e->cfg.nrails; r++) {
        const bfo_rail_link *rl = &p->rail[r];
        if (rdma ? !bfo__rail_rdma(e, peer, r) : !bfo__rail_up(e, peer, r))
            continue;
        if (BFO__UNLIKELY(!rl->measured) && len >= BFO__STRIPE_MIN) {
            if (rl->q_bytes < BFO__STRIPE_MIN)
                return r; /* on probation, its piece back: the next one, whatever its estimate */
            gated = r; /* on probation, its piece out: no more until it is back */
            ngated++;
            continue;
        }
        uint64_t t = ((rl->q_bytes + len) << 10) / (rl->rate ? rl->rate : 1);
        if (best < 0 || t < best_t) {
            best = r;
            best_t = t;
        }
    }
    if (BFO__UNLIKELY(best < 0) && ngated) /* the only rail is no choice: no probation */
        return ngated == 1 ? gated : BFO__PICK_WAIT;
    return best;
}

/* A piece of data for the peer (a FRAG, or an RDMA read if rdma), *n bytes
 * long (frag_size or less): the rail it goes on (bfo__pick_weighted; -1 to
 * leave the choice to bfo__post: a piece not striped, or one rail), and its
 * length: a rail on probation (bfo_rail_link.measured) is given at most
 * BFO_PROBATION_PIECE while another rail is UP and measured (at the start,
 * with none measured, pieces are whole), so that a rail slow from the
 * start, or promoted on a measurement that a burst fooled, holds up that
 * much of one message at a time until its samples say what it is worth. */
static inline int bfo__piece(bfo_engine *e, int peer, size_t *n, int rdma)
{
    int rail;
    if ((!rdma && *n < BFO__STRIPE_MIN) || peer == e->cfg.rank || e->cfg.nrails < 2)
        return -1;
    rail = bfo__pick_weighted(e, peer, *n, rdma);
    if (rail >= 0 && !e->peers[peer].rail[rail].measured && *n > BFO_PROBATION_PIECE)
        for (int k = 0; k < e->cfg.nrails; k++)
            if (k != rail && e->peers[peer].rail[k].measured && bfo__rail_up(e, peer, k)) {
                *n = BFO_PROBATION_PIECE;
                break;
            }
    return rail;
}

/* Eager and control messages, and a RNDV with its first bytes (len: the
 * frame's): as a piece of data, the UP rail where it is expected to be
 * delivered first, the lowest-numbered on a tie.  An idle peer's small
 * messages therefore keep to its fastest rail (the receiver finds them
 * where it last did); a stream of them spreads over every rail as bytes
 * queue up; and a rail that is slow, before it is demoted, is given no
 * frame that it would hold up (an ACK waiting behind a slow rail's queue
 * stalls its whole message). */
static inline int bfo__pick_rail(bfo_engine *e, int peer, uint64_t len)
{
    if (e->cfg.nrails == 1) /* no choice: the same answer, without its divisions */
        return bfo__rail_up(e, peer, 0) ? 0 : -1;
    return bfo__pick_weighted(e, peer, len, 0);
}

/* The bytes an op puts on its rail (q_bytes): a frame's, or an RDMA range. */
static inline uint64_t bfo__op_qbytes(const bfo_op *op)
{
    return bfo__op_rdma(op->type) ? op->len : op->hdr_len + op->payload_len;
}

/* deferred follows the three lists it sums up: called where any of them
 * changes. */
static inline void bfo__deferred_note(bfo_engine *e)
{
    e->deferred = e->fail_head >= 0 || e->self_head >= 0 || e->gate_kick >= 0;
}

/* The peer's ops waiting in its pending list may go now: bfo__gate_kick,
 * at the end of the entry point, looks at that peer (or at every peer,
 * when two or more were noted). */
static inline void bfo__gate_note(bfo_engine *e, int peer)
{
    e->gate_kick = e->gate_kick < 0 || e->gate_kick == peer ? peer : 0x7fffffff;
    e->deferred = 1;
}

/* Work goes on a rail (n bytes): a rail that had none starts a fresh lag
 * window (time it sat idle is no measure of it). */
static BFO__HOT void bfo__rail_took(bfo_engine *e, bfo_rail_link *rl, uint64_t n)
{
    if (!rl->q_bytes) {
        rl->win_start = e->now;
        rl->win_bytes = 0;
        rl->work_at = e->now;
    }
    rl->q_bytes += n;
    rl->inflight++;
    rl->last_tx = e->now;
}

/* ... for an op, which notes what was queued ahead of it, when, and since
 * when that has been coming back (its delivery is then a sample of the
 * rail's rate).  The rail's half is bfo__rail_took, which the lane's
 * MATCH takes alone. */
static BFO__HOT void bfo__rail_queued(bfo_engine *e, bfo_rail_link *rl, bfo_op *op, uint64_t n)
{
    op->q_at = rl->q_bytes;
    op->post_at = e->now;
    bfo__rail_took(e, rl, n);
    if (BFO__UNLIKELY(n >= BFO__STRIPE_MIN)) /* a sample to be (bfo__rail_unqueued) */
        op->since = rl->done_at > rl->work_at ? rl->done_at : rl->work_at;
}

static BFO__NOINLINE void bfo__rate_op(bfo_engine *e, int peer, int rail, uint64_t bytes, uint64_t dt,
                                       uint64_t since);

/* n bytes of the rail's came back (ok: delivered).  A piece of data
 * delivered (BFO__STRIPE_MIN or more) is a sample: it and what was queued
 * ahead of it came back since op->since, the rail's last completion before
 * its post (none came between: they come in order), or its post when the
 * rail was idle.  Not since its post: completions come in batches (a TCG
 * guest's, a peer's acknowledgements), and bytes queued ahead of it that
 * had arrived but were not reported yet made a sample of 51,849 MB/s on a
 * verbs rail of some 5, against which an equal rail was demoted.  Small
 * messages and control are no sample (their round trips, not the rail's
 * rate). */
static BFO__COLD void bfo__relay_unqueued(bfo_engine *e, const bfo_op *op, int ok);
static BFO__HOT void bfo__rail_gave(bfo_engine *e, int peer, int rail, uint64_t n, int ok,
                                    const bfo_op *sample)
{
    bfo_peer *p = &e->peers[peer];
    bfo_rail_link *rl = &p->rail[rail];
    rl->inflight--;
    rl->q_bytes -= n;
    rl->win_bytes += n;
    if (BFO__UNLIKELY(sample != NULL)) { /* after the window counted it: a sample may reset it */
        const uint64_t dt = e->now - sample->post_at;
        rl->lat = rl->lat ? rl->lat - rl->lat / 8 + dt / 8 : dt;
        bfo__rate_op(e, peer, rail, sample->q_at + n, dt, sample->since);
    }
    if (ok)
        rl->done_at = e->now;
    if (BFO__UNLIKELY(p->pend_head >= 0)) /* ops that wait may go now (bfo__gate_kick) */
        bfo__gate_note(e, peer);
}

/* ... for an op: the rail's half (bfo__rail_gave, which the lane's MATCH
 * takes alone), with the op as the sample when it is one. */
static BFO__HOT void bfo__rail_unqueued(bfo_engine *e, const bfo_op *op, uint64_t n, int ok)
{
    if (BFO__UNLIKELY(op->rail == BFO__RELAY_RAIL)) { /* its relay's RELAYACK came, or it failed */
        bfo__relay_unqueued(e, op, ok);
        return;
    }
    bfo__rail_gave(e, op->peer, op->rail, n, ok,
                   BFO__UNLIKELY(n >= BFO__STRIPE_MIN) && ok && op->type != BFO_FRAG_PROBE /* (not a measurement) */
                       ? op
                       : NULL);
}

/* The peer's UP rail but one with the best measured rate (-1: none).  A
 * rail never sampled (its rate the transport's guess: a TCP rail that
 * carries only control while verbs rails read) is no measure of the
 * others: slow against a guess is not slow. */
static inline int bfo__best_rail(const bfo_engine *e, int peer, int but)
{
    int best = -1;
    for (int r = 0; r < e->cfg.nrails; r++) {
        const bfo_rail_link *rl = &e->peers[peer].rail[r];
        if (r != but && bfo__rail_up(e, peer, r) && (rl->measured || rl->prob_bytes) &&
            (best < 0 || rl->rate > e->peers[peer].rail[best].rate))
            best = r;
    }
    return best;
}

/* ... its rate (0: none). */
static inline uint64_t bfo__best_rate(const bfo_engine *e, int peer, int but)
{
    int b = bfo__best_rail(e, peer, but);
    return b < 0 ? 0 : e->peers[peer].rail[b].rate;
}

/* The estimate takes a sample x (bytes per ms) that took dt: a quarter of
 * the way (EWMA), or all the way (BFO__SAMPLE_HARD).  An UP rail under
 * 1/BFO_DEMOTE_RATIO of the best other UP rail counts a slow sample
 * (bfo__rails_review demotes it after BFO_DEMOTE_SAMPLES over
 * BFO_DEMOTE_NS), unless the sample took no longer than a piece takes on
 * that best rail (its lat): a piece that came back as soon as the best
 * rail's do is no evidence that its rail is slow.  A piece sent alone (on
 * probation, or to a rail whose low estimate keeps its queue short)
 * measures the rail's round trip more than its rate, and with an equal
 * rail's acknowledgements waiting up to a shaper's 100 ms behind the other
 * direction's data (two rails at 400 Mbit/s), or a TCG guest's completions
 * taking 40 ms and more, a lone 32 KiB piece reads 0.3 to 1.7 MB/s: equal
 * rails were demoted on it, 5 to 8 times in 3 s. */
#define BFO__SAMPLE_HARD 1 /* the estimate takes the sample all the way */
#define BFO__SAMPLE_SEEN 2 /* a slow sample adds nothing to the streak (evidence counted) */
static inline void bfo__rate_take(bfo_engine *e, int peer, int rail, uint64_t x, int flags, uint64_t dt)
{
    bfo_rail_link *rl = &e->peers[peer].rail[rail];
    rl->rate = (flags & BFO__SAMPLE_HARD) ? x : rl->rate - rl->rate / 4 + x / 4;
    if (!rl->rate)
        rl->rate = 1;
    if (rl->fsm.cs == BFO_RAIL_ST_UP) {
        int b = bfo__best_rail(e, peer, rail);
        if (b >= 0 && rl->rate * BFO_DEMOTE_RATIO < e->peers[peer].rail[b].rate &&
            dt > e->peers[peer].rail[b].lat) {
            if (!rl->slow && !(flags & BFO__SAMPLE_SEEN))
                rl->slow_since = e->now;
            if (rl->slow < 255 && !(flags & BFO__SAMPLE_SEEN))
                rl->slow++;
        } else {
            rl->slow = 0;
        }
    }
    rl->sampled_at = e->now;
    rl->win_start = e->now;
    rl->win_bytes = 0;
}

/* A piece of data delivered: `bytes` (it and what was queued ahead of it
 * on the rail, which goes first) came back over `span`; the piece took dt.  A piece sent alone
 * on an idle rail counts its round trip against the rail: large pieces
 * only (bfo__rail_unqueued). */
static BFO__NOINLINE void bfo__rate_op(bfo_engine *e, int peer, int rail, uint64_t bytes, uint64_t dt,
                                       uint64_t since)
{
    bfo_rail_link *rl = &e->peers[peer].rail[rail];
    uint64_t span = e->now - since;
    int b = bfo__best_rail(e, peer, rail), flags = 0;
    /* no sample above twice the higher of its estimate and the best other
     * rail's: a piece's completion taken in the same instant as its post
     * (the clock read once for both, or acknowledgements held, then sent
     * at once) made a 400 Mbit/s rail read 65,584 MB/s, 16,473 after
     * averaging, and its equal pair slow beside it: demoted 7 times in 4 s */
    uint64_t top = b >= 0 && e->peers[peer].rail[b].rate > rl->rate ? e->peers[peer].rail[b].rate : rl->rate;
    if (span < 1000)
        span = 1000;
    if (!rl->measured) { /* on probation: all it delivered, over all its pieces' times */
        rl->prob_bytes += bytes;
        rl->prob_ns += span;
        rl->measured = rl->prob_bytes >= BFO_PROBATION_BYTES;
        /* not grown when back sooner than the best rail's pieces (as a
         * measured rail's is, below): a rail on probation is given its
         * next piece once the last is back whatever its estimate
         * (bfo__pick_weighted), and a slow rail's lone pieces beside a
         * loaded best rail always come back sooner: doubled on each, an
         * 8 Mbit/s rail left probation at 28 MB/s beside an 800 Mbit/s
         * one, was handed 5 MB, and held the stream's end 3 s
         * (bench-netns 1/100) */
        uint64_t x = rl->prob_bytes * 1000000u / rl->prob_ns;
        /* and, until its probation ends, no evidence of a slow rail: its
         * pieces go one at a time, each given once the last is back, so
         * it reads its round trip (32 KiB over 30 to 100 ms on a
         * 400 Mbit/s rail whose acknowledgements wait behind the other
         * direction's data: 0.3 to 1.9 MB/s), and it is never left
         * without a sample to come; pieces that do not come back are
         * judged by lag samples.  The last, over all its pieces, is. */
        bfo__rate_take(e, peer, rail, x < 2 * top ? x : 2 * top,
                       BFO__SAMPLE_HARD | (rl->measured ? 0 : BFO__SAMPLE_SEEN), dt);
        return;
    }
    if (BFO__UNLIKELY(rl->stall_to > since)) {
        /* it began before a stall that lag samples judged: the stall is
         * left out of its span (counted once, by them), and the sample
         * is no new evidence of a slow rail (the first pieces back after
         * a stall read its tail, since the last lag sample: 0.7 to 4 MB/s
         * on a rail of 30, six samples in a burst, and demoted it).  What
         * came back at once when the rail moved again is no measure of a
         * rate above the best rail's. */
        uint64_t from = rl->stall_from > since ? rl->stall_from : since;
        if (span - 1000 > rl->stall_to - from)
            span -= rl->stall_to - from;
        else
            span = 1000;
        flags = BFO__SAMPLE_SEEN;
    }
    uint64_t x = bytes * 1000000u / span;
    if (flags && b >= 0 && x > e->peers[peer].rail[b].rate)
        x = e->peers[peer].rail[b].rate;
    else if (x > 2 * top)
        x = 2 * top;
    /* back sooner than a piece on the best other rail: it could carry
     * more than it was given (the scheduler fills rails to equal expected
     * finish, and a rail given little reads its round trip, not its rate:
     * at 400 Mbit/s the other rank's data on it made a rail read 0.5 to
     * 3 MB/s for seconds while its pair carried 50).  Its estimate grows
     * by a quarter at least (never past the best rail's), until its pieces
     * take as long as the best rail's do. */
    if (b >= 0 && dt < e->peers[peer].rail[b].lat && rl->rate < e->peers[peer].rail[b].rate) {
        uint64_t up = 2 * rl->rate < e->peers[peer].rail[b].rate ? 2 * rl->rate : e->peers[peer].rail[b].rate;
        if (x < up)
            x = up;
    }
    bfo__rate_take(e, peer, rail, x, flags, dt);
}

/* Another UP rail of the peer's delivered data since `since`: a sample
 * taken, or bytes back in a window begun since.  A rail that lags while
 * every rail does is no slower than the others: the peer takes nothing (it
 * computes, its progress thread answers probes but nobody receives).
 * bfo__rate_lag asks about the second half of the rail's silence: rails
 * that stopped together stopped within a completion time or so of each
 * other (test_rails_lagging_together_are_not_demoted). */
static inline int bfo__others_delivered(const bfo_engine *e, int peer, int rail, uint64_t since)
{
    for (int r = 0; r < e->cfg.nrails; r++) {
        const bfo_rail_link *o = &e->peers[peer].rail[r];
        if (r != rail && bfo__rail_up(e, peer, r) &&
            (o->sampled_at > since || (o->win_start >= since && o->win_bytes)))
            return 1;
    }
    return 0;
}

/* From bfo_engine_progress: work waits on the rail and nothing came back
 * for BFO_RATE_LAG_NS.  With four fragments' worth queued (a piece or two
 * waiting for an acknowledgement are no measure of a rail) and another
 * rail delivering meanwhile (bfo__others_delivered), the estimate
 * drops at once to what the rail can at most have done: what came back and
 * one fragment more, over the time (no averaging: a rail that just slowed
 * down a hundredfold is given nothing more at once). */
static BFO__NOINLINE void bfo__rate_lag(bfo_engine *e, int peer, int rail)
{
    bfo_rail_link *rl = &e->peers[peer].rail[rail];
    uint64_t dt = e->now - rl->win_start;
    uint64_t bound = dt ? (rl->win_bytes + e->cfg.frag_size) * 1000000u / dt : rl->rate;
    const uint64_t from = rl->stall_to == rl->win_start ? rl->stall_from : rl->win_start;
    if (!rl->measured && rl->q_bytes >= BFO__STRIPE_MIN) {
        /* on probation, its piece not back: at most the bound.  With ops
         * waiting for a sample (BFO__PICK_WAIT: every rail on probation),
         * the probation ends on it and they go; completions correct it (a
         * peer that acknowledges late, or not at all while it computes,
         * holds nothing up for longer than this) */
        bfo__rate_take(e, peer, rail, bound < rl->rate ? bound : rl->rate, BFO__SAMPLE_HARD, dt);
        rl->stall_from = from;
        rl->stall_to = e->now;
        if (e->peers[peer].pend_head >= 0) {
            rl->measured = 1;
            bfo__gate_note(e, peer);
        }
    } else if (rl->q_bytes >= 4 * (uint64_t)e->cfg.frag_size && bound < rl->rate &&
               bfo__others_delivered(e, peer, rail, rl->win_start + dt / 2)) {
        bfo__rate_take(e, peer, rail, bound, BFO__SAMPLE_HARD, dt);
        rl->stall_from = from;
        rl->stall_to = e->now;
    } else {
        rl->win_start = e->now;
        rl->win_bytes = 0;
    }
}

/* An op that could not be posted completes with an error, but not inside
 * the action that posted it: it waits in the failed list, which every entry
 * point runs before it returns. */
static inline void bfo__op_fail_later(bfo_engine *e, bfo_op *op)
{
    int i = op->idx;
    op->next = -1;
    if (e->fail_tail >= 0)
        bfo__op_at(e, e->fail_tail)->next = i;
    else
        e->fail_head = i;
    e->fail_tail = i;
    e->deferred = 1;
}

static inline void bfo__pend(bfo_engine *e, bfo_peer *p, bfo_op *op)
{
    op->next = -1;
    if (p->pend_tail >= 0)
        bfo__op_at(e, p->pend_tail)->next = op->idx;
    else
        p->pend_head = op->idx;
    p->pend_tail = op->idx;
}


/* An op with no rail to go on: it waits for one, or fails (the peer is gone,
 * or an RDMA op with rails UP but none that can RDMA). */
static BFO__COLD int bfo__relay_post(bfo_engine *e, bfo_op *op);
static BFO__COLD void bfo__relay_take(bfo_engine *e, int peer, const bfo_frame *f);
static BFO__COLD void bfo__relayack_take(bfo_engine *e, int peer, const bfo_frame *f);
static BFO__COLD void bfo__reach_take(bfo_engine *e, int peer, const bfo_frame *f);
static BFO__COLD void bfo__relay_done(bfo_engine *e, bfo_op *op, int ok);
static BFO__COLD void bfo__post_no_rail(bfo_engine *e, bfo_op *op)
{
    bfo_peer *p = &e->peers[op->peer];
    if (p->unreachable || (bfo__op_rdma(op->type) && bfo__pick_rail(e, op->peer, 0) >= 0))
        bfo__op_fail_later(e, op);
    else if (BFO__UNLIKELY(op->type == BFO_FRAG_RELAY))
        bfo__op_fail_later(e, op); /* a relay frame (a frame of another passed on, or one
                                    * of this rank's to its relay) finds no rail: one hop,
                                    * never waits; its failure says so (bfo__relay_done) */
    else if (p->fsm.cs == BFO_PEER_ST_RELAYED && bfo__relay_post(e, op))
        ; /* through the relay, or waiting for room there */
    else
        bfo__pend(e, p, op);
}

/* A WRITE or READ on its rail: the backend's answer. */
static BFO__NOINLINE int bfo__post_rdma(bfo_engine *e, bfo_op *op, int rail)
{
    const bfo_request *r = bfo__handle_get(e, op->owner);
    uint32_t key;
    if (!r || (uint32_t)rail >= r->nkeys) /* the peer gave no key for this rail */
        return -1;
    key = r->keys[rail];
    e->stats.rail_bytes[rail] += op->len;
    if (op->type == BFO__OP_WRITE) {
        e->stats.rdma_writes++;
        return e->be.post_write(e->be.ctx, op->peer, rail, op->local, (size_t)op->len, op->raddr,
                                key, bfo__token(op));
    }
    e->stats.rdma_reads++;
    return e->be.post_read(e->be.ctx, op->peer, rail, op->local, (size_t)op->len, op->raddr, key,
                           bfo__token(op));
}

/* --------------------------------------------------------- described data
 *
 * A message given by bfo_isend_data or bfo_irecv_data (bfo_data.h) that is
 * not one buffer: its request has no buffer (r->buf NULL, r->cap > 0) and
 * r->data describes it; the contiguous path never reads r->data.  Its ops
 * carry a span (op->span: the descriptor and the range the frame holds;
 * op->payload NULL, op->payload_len > 0) and are posted by
 * bfo__post_described.  Once the rail is chosen the bytes reach the
 * transport one of three ways:
 *   - the rail's transport reads the description itself (post_send_data,
 *     BFO_CAP_SEND_IOV / BFO_CAP_SEND_PACK): TCP gathers segments into its
 *     writev, shared memory and verbs copy (or pack) straight into their
 *     ring or send buffer, the simulator into its frame;
 *   - the range lies in one segment: post_send with that pointer;
 *   - else the engine packs the range into one of its staging buffers
 *     (bfo_config.data_stages, max(frag_size, eager_limit) bytes each),
 *     which the op holds until it is freed (a staging buffer whose op's
 *     generation moved on is free again).  With none free the op waits,
 *     unposted, and is posted again at the next completion of a FRAG, the
 *     next described post or the next bfo_engine_progress.
 * A FRAG sent again after a failover is a new op: the bytes are read again
 * from the description, from offset 0 or from the ACK's.  Received bytes
 * are written in place (bfo__data_in) at the frame's offset, as far as the
 * description has room (truncation).  RDMA needs one registered region: a
 * described message is never registered, so it goes by copy. */

static BFO__NOINLINE void bfo__post_described_on(bfo_engine *e, bfo_op *op, int rail);
static inline void bfo__post_described(bfo_engine *e, bfo_op *op) { bfo__post_described_on(e, op, -1); }
static inline void bfo__post_on(bfo_engine *e, bfo_op *op, int rail);
static inline void bfo__post(bfo_engine *e, bfo_op *op) { bfo__post_on(e, op, -1); }

/* 1 for an op that carries described data. */
static inline int bfo__op_described(const bfo_op *op) { return !op->payload && op->payload_len; }

static inline unsigned bfo__data_cap(int kind)
{
    return kind == BFO_DATA_PACK ? BFO_CAP_SEND_PACK : BFO_CAP_SEND_IOV;
}

/* Received bytes to their place in the request's description. */
static BFO__NOINLINE void bfo__data_in(bfo_request *r, size_t off, const void *src, size_t n)
{
    bfo_data_write(r->data, &r->dpos, off, src, n);
}

static inline void bfo__stage_wait(bfo_engine *e, bfo_op *op)
{
    op->next = -1;
    if (e->stage_wait_tail >= 0)
        bfo__op_at(e, e->stage_wait_tail)->next = op->idx;
    else
        e->stage_wait_head = op->idx;
    e->stage_wait_tail = op->idx;
}

/* A free staging buffer, now held by op; -1 when none is free. */
static inline int bfo__stage_take(bfo_engine *e, const bfo_op *op)
{
    for (int k = 0; k < e->cfg.data_stages; k++) {
        uint64_t t = e->stage_tok[k];
        if (!t || bfo__op_at(e, (uint32_t)t)->gen != (uint32_t)(t >> 32)) {
            e->stage_tok[k] = bfo__token(op);
            return k;
        }
    }
    return -1;
}

/* Staging buffers held by live ops (a test's check that they come back). */
static inline int bfo__stages_in_use(const bfo_engine *e)
{
    int n = 0;
    for (int k = 0; k < e->cfg.data_stages; k++) {
        uint64_t t = e->stage_tok[k];
        n += t && bfo__op_at(e, (uint32_t)t)->gen == (uint32_t)(t >> 32);
    }
    return n;
}

/* The ops that waited for a staging buffer are posted again, in their
 * order, while a staging buffer is unused (the others wait on, in order). */
static BFO__NOINLINE void bfo__stage_kick(bfo_engine *e)
{
    int i = e->stage_wait_head, last = e->stage_wait_tail;
    e->stage_wait_head = e->stage_wait_tail = -1;
    while (i >= 0) {
        int next = bfo__op_at(e, i)->next, was_last = i == last;
        if (bfo__stages_in_use(e) < e->cfg.data_stages)
            bfo__post_described(e, bfo__op_at(e, i));
        else
            bfo__stage_wait(e, bfo__op_at(e, i));
        if (was_last)
            break;
        i = next;
    }
}

/* A described op on its rail: 0 posted, -1 refused, 1 when it must wait
 * for a staging buffer. */
static inline int bfo__post_data(bfo_engine *e, bfo_op *op, int rail)
{
    const bfo_data_span *s = &op->span;
    bfo_iov iov[2];
    int rc;
    iov[0].base = op->hdr;
    iov[0].len = op->hdr_len;
    if (e->be.post_send_data && (e->peers[op->peer].rail[rail].caps & bfo__data_cap(s->d->kind))) {
        rc = e->be.post_send_data(e->be.ctx, op->peer, rail, &iov[0], s, bfo__token(op));
    } else {
        if (!bfo_data_span_flat(s, &iov[1].base)) {
            int k = bfo__stage_take(e, op);
            if (k < 0)
                return 1;
            iov[1].base = e->stage_mem + (size_t)k * e->stage_size;
            bfo_data_span_copy(s, 0, (void *)(uintptr_t)iov[1].base, s->len);
        }
        iov[1].len = s->len;
        rc = e->be.post_send(e->be.ctx, op->peer, rail, iov, 2, bfo__token(op));
    }
    if (rc == 0)
        e->stats.rail_bytes[rail] += s->len;
    return rc ? -1 : 0;
}

/* bfo__post for a described op: its rail (given, or chosen if -1), then
 * its bytes (bfo__post_data). */
static BFO__NOINLINE void bfo__post_described_on(bfo_engine *e, bfo_op *op, int rail)
{
    bfo_peer *p = &e->peers[op->peer];
    if (op->peer == e->cfg.rank) { /* to itself: one piece, else staged, then as any op */
        const void *flat;
        if (!bfo_data_span_flat(&op->span, &flat)) {
            int k = bfo__stage_take(e, op);
            uint8_t *stage;
            if (k < 0) {
                bfo__stage_wait(e, op);
                return;
            }
            stage = e->stage_mem + (size_t)k * e->stage_size;
            bfo_data_span_copy(&op->span, 0, stage, op->span.len);
            flat = stage;
        }
        op->payload = flat;
        bfo__post(e, op);
        return;
    }
    int rc;
    if (rail == -1)
        rail = op->type == BFO_FRAG_FRAG && op->len >= BFO__STRIPE_MIN ? bfo__pick_weighted(e, op->peer, op->len, 0)
                                                                       : bfo__pick_rail(e, op->peer, op->hdr_len + op->payload_len);
    if (rail < 0) {
        if (rail == BFO__PICK_WAIT)
            bfo__pend(e, p, op); /* until a rail on probation is sampled */
        else
            bfo__post_no_rail(e, op);
        return;
    }
    op->rail = rail;
    op->posted = 1;
    bfo__rail_queued(e, &p->rail[rail], op, op->hdr_len + op->payload_len);
    e->stats.ops_posted++;
    rc = bfo__post_data(e, op, rail);
    if (rc == 0)
        return;
    bfo__op_unpost(e, op, 0);
    if (rc > 0) { /* no staging buffer free: it waits for one, unposted */
        e->stats.ops_posted--;
        bfo__stage_wait(e, op);
    } else {
        bfo__op_fail_later(e, op);
    }
}

/* The op's frame carries bytes [off, off+len) (len > 0) of the request's
 * description: posted. */
static BFO__NOINLINE void bfo__send_described(bfo_engine *e, bfo_request *r, bfo_op *op,
                                              size_t off, size_t len, int rail)
{
    op->span.d = r->data;
    op->span.off = off;
    op->span.len = len;
    if (r->data->kind == BFO_DATA_IOV)
        bfo_data_seek(r->data, &r->dpos, off);
    op->span.pos = r->dpos;
    op->payload = NULL;
    op->payload_len = len;
    if (e->stage_wait_head >= 0) /* those waiting first */
        bfo__stage_kick(e);
    bfo__post_described_on(e, op, rail);
}

/* Posts op on `rail` (an UP rail chosen by the caller: a piece sized for
 * it, bfo__piece), or if -1 on its fixed rail or an UP rail; with no UP
 * rail it waits in the peer's pending list (moved to a surviving or
 * re-admitted rail later).  An RDMA op with rails UP but none that can RDMA
 * fails (the request then runs the restart dance and goes on by copy). */
static inline void bfo__post_on(bfo_engine *e, bfo_op *op, int rail)
{
    bfo_peer *p = &e->peers[op->peer];
    const int rdma = bfo__op_rdma(op->type);
    int rc;
    if (op->peer == e->cfg.rank) { /* to itself: no rail, delivered by bfo__run_self */
        op->next = -1;
        if (e->self_tail >= 0)
            bfo__op_at(e, e->self_tail)->next = op->idx;
        else
            e->self_head = op->idx;
        e->self_tail = op->idx;
        e->deferred = 1;
        return;
    }
    if (rail != -1)
        ; /* chosen with the piece's size */
    else if (op->fixed_rail >= 0)
        rail = op->fixed_rail;
    else if (rdma || (op->type == BFO_FRAG_FRAG && op->len >= BFO__STRIPE_MIN))
        rail = bfo__pick_weighted(e, op->peer, op->len, rdma);
    else
        rail = bfo__pick_rail(e, op->peer, bfo__op_qbytes(op));
    if (rail < 0) {
        if (rail == BFO__PICK_WAIT)
            bfo__pend(e, p, op); /* until a rail on probation is sampled */
        else
            bfo__post_no_rail(e, op);
        return;
    }
    op->rail = rail;
    op->posted = 1; /* before the call: a backend may complete at once */
    bfo__rail_queued(e, &p->rail[rail], op, bfo__op_qbytes(op));
    e->stats.ops_posted++;
    if (rdma) {
        rc = bfo__post_rdma(e, op, rail);
    } else {
        bfo_iov iov[2];
        iov[0].base = op->hdr;
        iov[0].len = op->hdr_len;
        iov[1].base = op->payload;
        iov[1].len = op->payload_len;
        e->stats.rail_bytes[rail] += op->payload_len;
        rc = e->be.post_send(e->be.ctx, op->peer, rail, iov, op->payload_len ? 2 : 1,
                             bfo__token(op));
    }
    if (rc != 0) {
        bfo__op_unpost(e, op, 0);
        bfo__op_fail_later(e, op);
    }
}

/* bfo__post for a message of a request (MATCH) on any UP rail (no fixed
 * rail, no RDMA, not striped): the same, with what the op's type already
 * says left out; to itself, or with no rail UP, it is bfo__post's. */
static BFO__HOT void bfo__post_msg(bfo_engine *e, bfo_op *op)
{
    const int peer = op->peer;
    int rail, rc;
    bfo_iov iov[2];
    if (BFO__UNLIKELY(peer == e->cfg.rank) || BFO__UNLIKELY((rail = bfo__pick_rail(e, peer, op->hdr_len + op->payload_len)) < 0)) {
        bfo__post(e, op);
        return;
    }
    op->rail = rail;
    op->posted = 1; /* before the call: a backend may complete at once */
    bfo__rail_queued(e, &e->peers[peer].rail[rail], op, op->hdr_len + op->payload_len);
    e->stats.ops_posted++;
    iov[0].base = op->hdr;
    iov[0].len = op->hdr_len;
    iov[1].base = op->payload;
    iov[1].len = op->payload_len;
    e->stats.rail_bytes[rail] += op->payload_len;
    rc = e->be.post_send(e->be.ctx, peer, rail, iov, op->payload_len ? 2 : 1, bfo__token(op));
    if (BFO__UNLIKELY(rc != 0)) {
        bfo__op_unpost(e, op, 0);
        bfo__op_fail_later(e, op);
    }
}

/* Posts the ops waiting for a rail of this peer. */
static inline void bfo__flush_pending(bfo_engine *e, int peer)
{
    bfo_peer *p = &e->peers[peer];
    int i = p->pend_head;
    p->pend_head = p->pend_tail = -1;
    while (i >= 0) {
        int next = bfo__op_at(e, i)->next;
        if (bfo__op_described(bfo__op_at(e, i)))
            bfo__post_described(e, bfo__op_at(e, i));
        else
            bfo__post(e, bfo__op_at(e, i));
        i = next;
    }
}

/* ------------------------------------------------------------ frames */

/* Matching fields of MATCH, RNDV and RGET. */
static inline uint32_t bfo__frame_ctx(const bfo_frame *f)
{
    return f->type == BFO_FRAG_MATCH  ? f->h.match.ctx
           : f->type == BFO_FRAG_RNDV ? f->h.rndv.ctx
                                      : f->h.rget.ctx;
}
static inline int bfo__frame_tag(const bfo_frame *f)
{
    return (int)(f->type == BFO_FRAG_MATCH  ? f->h.match.tag
                 : f->type == BFO_FRAG_RNDV ? f->h.rndv.tag
                                            : f->h.rget.tag);
}
static inline uint32_t bfo__frame_src(const bfo_frame *f)
{
    return f->type == BFO_FRAG_MATCH  ? f->h.match.src
           : f->type == BFO_FRAG_RNDV ? f->h.rndv.src
                                      : f->h.rget.src;
}

/* The whole message's length: an eager MATCH's payload, a rendezvous's
 * msg_len. */
static inline size_t bfo__frame_len(const bfo_frame *f)
{
    return f->type == BFO_FRAG_MATCH  ? f->payload_len
           : f->type == BFO_FRAG_RNDV ? (size_t)f->h.rndv.msg_len
                                      : (size_t)f->h.rget.msg_len;
}

/* ------------------------------------------------------------ requests */

static inline void bfo__req_feed(bfo_engine *e, bfo_request *r, int ev, const bfo__input *in);

/* A request failed for its peer's sake (fail_unreachable), counted by why. */
static inline void bfo__count_gone(bfo_engine *e, int status)
{
    e->stats.unreachable_errors += status == BFO_ERR_PEER_UNREACHABLE;
    e->stats.left_errors += status == BFO_ERR_PEER_LEFT || status == BFO_ERR_LEFT;
    e->stats.failed_errors += status == BFO_ERR_PROC_FAILED || status == BFO_ERR_PROC_FAILED_PENDING;
    e->stats.revoked_errors += status == BFO_ERR_REVOKED;
}
static BFO__HOT void bfo__op_done(bfo_engine *e, bfo_op *op, int ok);
static BFO__NOINLINE void bfo__op_done_slow(bfo_engine *e, bfo_op *op, int ok);
static inline void bfo__credit_tell(bfo_engine *e, int peer);

/* Completes, with an error, the ops that could not be posted (those there
 * now: an op failing again waits for the next entry point, so a backend that
 * refuses every post cannot make this loop forever). */
static BFO__NOINLINE void bfo__run_failed_list(bfo_engine *e)
{
    int i = e->fail_head, last = e->fail_tail;
    e->fail_head = e->fail_tail = -1;
    bfo__deferred_note(e);
    for (;;) {
        int next = bfo__op_at(e, i)->next, was_last = i == last;
        bfo__op_done(e, bfo__op_at(e, i), 0);
        if (was_last)
            break;
        i = next;
    }
}

static inline void bfo__run_self(bfo_engine *e);
static inline void bfo__flush_pending(bfo_engine *e, int peer);

/* A peer's op completed while others wait in its pending list: those that
 * waited for a rail on probation to be sampled (BFO__PICK_WAIT) go if they
 * now can (a sample came, or the piece failed and the rail takes another);
 * with no rail UP they wait on (a peer with none UP is flushed when one is
 * admitted). */
static BFO__NOINLINE void bfo__gate_kick(bfo_engine *e)
{
    const int k = e->gate_kick;
    e->gate_kick = -1;
    bfo__deferred_note(e);
    if (e->gate_busy)
        return;
    e->gate_busy = 1;
    for (int peer = k == 0x7fffffff ? 0 : k; peer < e->cfg.nranks && (k == 0x7fffffff || peer == k); peer++)
        if (e->peers[peer].pend_head >= 0 && bfo__pick_rail(e, peer, 0) >= 0)
            bfo__flush_pending(e, peer);
    e->gate_busy = 0;
}

/* Every entry point ends here; the lists are nearly always empty, so only
 * the tests are inlined. */
static inline void bfo__run_failed(bfo_engine *e)
{
    if (BFO__LIKELY(!e->deferred))
        return; /* the lists empty, no kick: one test */
    if (e->gate_kick >= 0)
        bfo__gate_kick(e);
    if (e->fail_head >= 0)
        bfo__run_failed_list(e);
    if (e->self_head >= 0 && !e->self_busy)
        bfo__run_self(e);
}

/* bfo__finish's rarer half: the done queue, the registration. */
static BFO__NOINLINE void bfo__finish_more(bfo_engine *e, bfo_request *r)
{
    if (e->cfg.done_queue && !r->sink) { /* a discard receive is the engine's own */
        r->done_next = NULL;
        if (e->done_tail)
            e->done_tail->done_next = r;
        else
            e->done_head = r;
        e->done_tail = r;
    }
    if (r->reg) { /* after this, a peer's RDMA into or out of buf fails */
        r->reg = 0;
        if (e->be.dereg_mem)
            e->be.dereg_mem(e->be.ctx, r->my_reg);
    }
}

static BFO__HOT void bfo__finish(bfo_engine *e, bfo_request *r, int status)
{
    r->status = status;
    r->complete = 1;
    if (BFO__UNLIKELY(e->cfg.done_queue | r->reg))
        bfo__finish_more(e, r);
    bfo__handle_release(e, r);
}

/* The status of a request that fails because nothing more will come from
 * its peer: BFO_ERR_LEFT when this side left, BFO_ERR_PEER_LEFT when the
 * peer said goodbye (for an ANY_SOURCE receive: when every other peer
 * did), else BFO_ERR_PEER_UNREACHABLE. */
static inline int bfo__gone_status(const bfo_engine *e, const bfo_request *r)
{
    int st = BFO_ERR_PEER_LEFT;
    if (e->left)
        st = BFO_ERR_LEFT;
    else if (r->peer >= 0)
        st = e->peers[r->peer].fsm.cs == BFO_PEER_ST_FAILED ? BFO_ERR_PROC_FAILED
             : e->peers[r->peer].left                     ? BFO_ERR_PEER_LEFT
                                                          : BFO_ERR_PEER_UNREACHABLE;
    else
        for (int i = 0; i < e->cfg.nranks; i++)
            if (i != e->cfg.rank && !e->peers[i].left)
                st = st == BFO_ERR_PROC_FAILED || e->peers[i].fsm.cs == BFO_PEER_ST_FAILED
                         ? BFO_ERR_PROC_FAILED
                         : BFO_ERR_PEER_UNREACHABLE;
    return st;
}

/* PEER_UNREACHABLE for a request (the machines take the three reasons
 * alike), and feeding it: the reason waits in r->status (not read before
 * the request completes) for fail_unreachable, which may come later, once
 * the request's operations in flight are back. */
static BFO__COLD int bfo__gone_event(bfo_engine *e, bfo_request *r)
{
    r->status = bfo__gone_status(e, r);
    return BFO_EV_PEER_UNREACHABLE;
}
static BFO__COLD void bfo__req_gone(bfo_engine *e, bfo_request *r)
{
    bfo__req_feed(e, r, bfo__gone_event(e, r), NULL);
}

/* Registers the request's buffer for its role (access: bfo_mem_access);
 * 1 when it is registered so.  Once per request: a restarted message that
 * needs another role (a receive that was to GET and is now a PUT's
 * target) registers again for both, and the old registration is given
 * back (none of its operations is in flight: a restart waits for them).
 * Its keys, one per rail, are kept as RGET and PUT carry them. */
static inline int bfo__req_register(bfo_engine *e, bfo_request *r, unsigned access)
{
    uint32_t keys[BFO_MAX_RAILS];
    uint64_t raddr, handle;
    if (r->reg && (r->reg_access & access) == access)
        return 1;
    if (!r->cap || !r->buf || !e->be.reg_mem) /* no buffer: described, by copy */
        return 0;
    if (r->reg)
        access |= r->reg_access;
    memset(keys, 0, sizeof keys);
    if (e->be.reg_mem(e->be.ctx, r->buf, r->cap, access, &raddr, keys, &handle) != 0)
        return 0;
    if (r->reg && e->be.dereg_mem)
        e->be.dereg_mem(e->be.ctx, r->my_reg);
    r->my_raddr = raddr;
    r->my_reg = handle;
    for (int i = 0; i < e->cfg.nrails; i++)
        bfo_put32(r->my_keys + 4 * i, keys[i]);
    r->reg = 1;
    r->reg_access = (uint8_t)access;
    return 1;
}

/* The peer's keys (RGET's or PUT's payload), one per rail: those of rails
 * beyond this engine's are of no use here. */
static inline void bfo__req_take_keys(bfo_request *r, const uint8_t *p, size_t len)
{
    uint32_t n = (uint32_t)(len / 4);
    if (n > BFO_MAX_RAILS)
        n = BFO_MAX_RAILS;
    for (uint32_t i = 0; i < n; i++)
        r->keys[i] = bfo_get32(p + 4 * i);
    r->nkeys = n;
}

/* The sender's choice for a message above eager_limit (and after a
 * restart): GET, or RNDV (with PIN when the receiver may PUT). */
static inline int bfo__send_choose(bfo_engine *e, bfo_request *r)
{
    const int mode = e->cfg.rdma;
    if (mode == BFO_RDMA_OFF || r->cap < e->cfg.rdma_min || !bfo__rdma_ok(e, r->peer, 0) ||
        !bfo__req_register(e, r, mode == BFO_RDMA_PUT ? 0u : (unsigned)BFO_MEM_REMOTE_READ))
        return BFO_EV_RNDV_CHOSEN;
    return mode == BFO_RDMA_PUT ? BFO_EV_RNDV_CHOSEN : BFO_EV_RGET_CHOSEN;
}

/* The receiver's choice once an RNDV or RGET matched: PUT (RNDV with PIN),
 * GET (RGET), else copy.  A message larger than the buffer (truncation)
 * goes by copy. */
static inline int bfo__recv_choose(bfo_engine *e, bfo_request *r)
{
    const int mode = e->cfg.rdma, rget = r->cs == BFO_RECV_ST_RGET_MATCHED;
    if (mode == BFO_RDMA_OFF || r->length > r->cap || !bfo__rdma_ok(e, r->peer, 1) ||
        (rget ? mode == BFO_RDMA_PUT : (mode == BFO_RDMA_GET || !r->pin ||
                                        r->length < e->cfg.rdma_min)) ||
        /* GET: this side reads into it; PUT: the sender writes into it */
        !bfo__req_register(e, r, rget ? (unsigned)BFO_MEM_LOCAL_WRITE : (unsigned)BFO_MEM_REMOTE_WRITE)) {
        e->stats.copies++;
        return BFO_EV_COPY_CHOSEN;
    }
    if (rget) {
        e->stats.gets++;
        return BFO_EV_GET_CHOSEN;
    }
    e->stats.puts++;
    return BFO_EV_PUT_CHOSEN;
}

static inline bfo_op *bfo__req_op(bfo_engine *e, bfo_request *r, int type)
{
    bfo_op *op = bfo__op_alloc(e, type, r->peer);
    if (op) {
        op->owner = bfo__self(e, r);
        op->rseq = r->rseq;
        r->outstanding++;
    }
    return op;
}

/* The restart header of NOTIFY, RESTARTACK, RESTARTNACK, RECVERRNOTIFY. */
static inline void bfo__post_restart_msg(bfo_engine *e, bfo_request *r, int type,
                                         bfo_handle sreq, bfo_handle dreq)
{
    bfo_hdr_restart h;
    bfo_op *op = bfo__req_op(e, r, type);
    if (!op)
        return; /* cannot happen: max_ops covers every request (bfo__min_ops) */
    h.type = (uint8_t)type;
    h.flags = 0;
    h.rseq = r->rseq;
    h.ctx = r->ctx;
    h.seq = r->seq;
    h.src = (uint32_t)(r->kind == BFO_REQ_SEND ? r->src : r->source);
    h.sreq = sreq;
    h.dreq = dreq;
    op->hdr_len = bfo_hdr_restart_encode(&h, op->hdr, sizeof op->hdr);
    bfo__post(e, op);
}

/* The fields RNDV and RGET share: matching, length, restart, handles. */
#define BFO__RZV_FILL(h, e, r)                                                  \
    do {                                                                        \
        (h).flags = (r)->restarted ? BFO_FLAG_RESTART : 0;                      \
        (void)(e);                                                              \
        (h).ctx = (r)->ctx;                                                     \
        (h).src = (uint32_t)(r)->src;                                           \
        (h).tag = (uint32_t)(r)->want_tag;                                      \
        (h).seq = (r)->seq;                                                     \
        (h).rseq = (r)->rseq;                                                   \
        (h).msg_len = (r)->cap;                                                 \
        (h).sreq = (r)->self;                                                   \
        (h).dreq = (r)->restarted ? (r)->remote : bfo__null_handle();           \
    } while (0)

/* The bytes a RNDV of cap bytes carries (bfo_config.rndv_first): all of a
 * message of eager size (synchronous, or past its window: the receiver's
 * answer then completes it), else rndv_first. */
static inline size_t bfo__rndv_first(const bfo_engine *e, size_t cap)
{
    return cap <= e->cfg.eager_limit ? cap : e->cfg.rndv_first;
}

static inline void bfo__send_rndv(bfo_engine *e, bfo_request *r)
{
    bfo_hdr_rndv h;
    bfo_op *op = bfo__req_op(e, r, BFO_FRAG_RNDV);
    /* a restart's first bytes go to its matched receive; a first RNDV's
     * are what bfo__isend charged to the peer's window */
    size_t first = r->restarted ? bfo__rndv_first(e, r->cap) : r->first;
    if (!op)
        return;
    h.type = BFO_FRAG_RNDV;
    BFO__RZV_FILL(h, e, r);
    if (r->reg && e->cfg.rdma != BFO_RDMA_OFF && e->cfg.rdma != BFO_RDMA_GET &&
        r->cap >= e->cfg.rdma_min && bfo__rdma_ok(e, r->peer, 0))
        h.flags |= BFO_FLAG_PIN;
    op->hdr_len = bfo_hdr_rndv_encode(&h, op->hdr, sizeof op->hdr);
    r->first = first;
    if (BFO__UNLIKELY(!r->buf) && first) { /* no buffer and no bytes: nothing described */
        bfo__send_described(e, r, op, 0, first, -1);
        return;
    }
    op->payload = r->buf;
    op->payload_len = first;
    bfo__post(e, op);
}

static inline void bfo__send_rget(bfo_engine *e, bfo_request *r)
{
    bfo_hdr_rget h;
    bfo_op *op = bfo__req_op(e, r, BFO_FRAG_RGET);
    if (!op)
        return;
    h.type = BFO_FRAG_RGET;
    BFO__RZV_FILL(h, e, r);
    h.raddr = r->my_raddr;
    op->hdr_len = bfo_hdr_rget_encode(&h, op->hdr, sizeof op->hdr);
    op->payload = r->my_keys;
    op->payload_len = 4 * (size_t)e->cfg.nrails;
    r->first = 0;
    bfo__post(e, op);
}

static inline void bfo__send_frags(bfo_engine *e, bfo_request *r)
{
    while (r->next_off < r->cap && r->frags_inflight < e->cfg.frag_pipeline) {
        bfo_hdr_frag h;
        size_t n = r->cap - r->next_off;
        int rail;
        bfo_op *op = bfo__req_op(e, r, BFO_FRAG_FRAG);
        if (!op)
            return;
        if (n > e->cfg.frag_size)
            n = e->cfg.frag_size;
        rail = bfo__piece(e, r->peer, &n, 0);
        h.type = BFO_FRAG_FRAG;
        h.flags = 0;
        h.rseq = r->rseq;
        h.dreq = r->remote;
        h.offset = r->next_off;
        op->hdr_len = bfo_hdr_frag_encode(&h, op->hdr, sizeof op->hdr);
        op->off = r->next_off;
        op->len = n;
        r->next_off += n;
        r->frags_inflight++;
        if (BFO__UNLIKELY(!r->buf)) {
            bfo__send_described(e, r, op, (size_t)op->off, n, rail);
            continue;
        }
        op->payload = r->buf + op->off;
        op->payload_len = n;
        bfo__post_on(e, op, rail);
    }
}

/* The range of PUT slot s of a receive: the message after its first bytes,
 * cut into rdma_frag_size pieces. */
static inline void bfo__slot_range(const bfo_engine *e, const bfo_request *r, uint32_t s,
                                   uint64_t *off, uint64_t *len)
{
    uint64_t o = (uint64_t)r->first + (uint64_t)s * e->cfg.rdma_frag_size;
    uint64_t n = o < r->length ? r->length - o : 0;
    *off = o;
    *len = n < e->cfg.rdma_frag_size ? n : e->cfg.rdma_frag_size;
}

/* PUT receive: PUTs for the next ranges, up to frag_pipeline not FINned. */
static inline void bfo__post_puts(bfo_engine *e, bfo_request *r)
{
    while (r->next_off < r->length && r->frags_inflight < e->cfg.frag_pipeline) {
        bfo_hdr_put h;
        uint64_t off, len;
        bfo_op *op = bfo__req_op(e, r, BFO_FRAG_PUT);
        if (!op)
            return;
        bfo__slot_range(e, r, r->slot_next, &off, &len);
        h.type = BFO_FRAG_PUT;
        h.flags = 0;
        h.rseq = r->rseq;
        h.slot = r->slot_next++;
        h.sreq = r->remote;
        h.dreq = r->self;
        h.offset = off;
        h.length = len;
        h.raddr = r->my_raddr + off;
        op->hdr_len = bfo_hdr_put_encode(&h, op->hdr, sizeof op->hdr);
        op->payload = r->my_keys;
        op->payload_len = 4 * (size_t)e->cfg.nrails;
        r->next_off = (size_t)(off + len);
        r->frags_inflight++;
        bfo__post(e, op);
    }
}

/* GET receive: reads of the next ranges, up to frag_pipeline in flight. */
static inline void bfo__post_reads(bfo_engine *e, bfo_request *r)
{
    while (r->next_off < r->length && r->frags_inflight < e->cfg.frag_pipeline) {
        size_t n = r->length - r->next_off;
        int rail;
        bfo_op *op = bfo__req_op(e, r, BFO__OP_READ);
        if (!op)
            return;
        if (n > e->cfg.rdma_frag_size)
            n = e->cfg.rdma_frag_size;
        rail = bfo__piece(e, r->peer, &n, 1);
        op->local = r->buf + r->next_off;
        op->off = r->next_off;
        op->len = n;
        op->raddr = r->raddr + r->next_off;
        r->next_off += n;
        r->frags_inflight++;
        bfo__post_on(e, op, rail);
    }
}

/* FIN: the sender's after a write (PUT slot), or the receiver's after every
 * read (the whole message, slot 0). */
static inline void bfo__post_fin(bfo_engine *e, bfo_request *r, uint32_t slot, uint64_t off,
                                 uint64_t len)
{
    bfo_hdr_fin h;
    bfo_op *op = bfo__req_op(e, r, BFO_FRAG_FIN);
    if (!op)
        return;
    h.type = BFO_FRAG_FIN;
    h.flags = 0;
    h.rseq = r->rseq;
    h.slot = slot;
    h.dreq = r->remote;
    h.offset = off;
    h.length = len;
    op->hdr_len = bfo_hdr_fin_encode(&h, op->hdr, sizeof op->hdr);
    op->slot = slot;
    op->off = off;
    op->len = len;
    bfo__post(e, op);
}

/* A MATCH's header and payload into op: the message, or for a cancelled
 * send an empty MATCH with the CANCEL flag that only fills its sequence. */
static inline void bfo__match_hdr(bfo_engine *e, const bfo_request *r, bfo_op *op)
{
    bfo_hdr_match h;
    (void)e;
    h.type = BFO_FRAG_MATCH;
    h.flags = r->cancelled ? BFO_FLAG_CANCEL : 0;
    h.ctx = r->ctx;
    h.src = (uint32_t)r->src;
    h.tag = (uint32_t)r->want_tag;
    h.seq = r->seq;
    op->hdr_len = bfo_hdr_match_encode(&h, op->hdr, sizeof op->hdr);
    op->payload = r->cancelled ? NULL : r->buf;
    op->payload_len = r->cancelled ? 0 : r->cap;
}

/* The send's action post_match: its MATCH out (bfo__send_action, and the
 * eager fast path of bfo__isend). */
static BFO__NOINLINE void bfo__act_post_match(bfo_engine *e, bfo_request *r)
{
    bfo_op *op = bfo__req_op(e, r, BFO_FRAG_MATCH);
    if (!op)
        return;
    bfo__match_hdr(e, r, op);
    if (BFO__UNLIKELY(!r->buf) && r->cap && !r->cancelled) {
        bfo__send_described(e, r, op, 0, r->cap, -1);
        return;
    }
    bfo__post_msg(e, op);
}

/* The send's action complete (bfo__send_action, and the fast path of
 * bfo__op_done). */
static BFO__HOT void bfo__act_send_complete(bfo_engine *e, bfo_request *r)
{
    e->stats.messages_sent++;
    bfo__finish(e, r, BFO_OK);
}

/* The lane: an eager send's MATCH posted without an op.  Its token names
 * the request itself (its handle, with BFO__LANE_BIT in the index half),
 * its header waits in the request (lane_hdr), and what an op would hold
 * of the post is the rail (lane_rail).  Taken by bfo__send_eager only
 * where bfo__post_msg would post at once, for a frame that is no rate
 * sample (shorter than BFO__STRIPE_MIN: the op's q_at, post_at and since
 * would never be read).  A completion it does not take to COMPLETE
 * (failed, or the request drains in another state) and a refused post
 * become an op of the request, posted on lane_rail (bfo__lane_op), and go
 * the general way from there: the lane changes the operation's storage,
 * never a transition (docs/engine-design.md, "Fast paths"). */
#define BFO__LANE_BIT 0x80000000u

static inline uint64_t bfo__lane_token(const bfo_request *r)
{
    return ((uint64_t)r->self.gen << 32) | (BFO__LANE_BIT | r->self.index);
}

/* bfo__rail_unqueued for the lane's MATCH (no sample: shorter than
 * BFO__STRIPE_MIN). */
static BFO__HOT void bfo__lane_unqueued(bfo_engine *e, const bfo_request *r, int ok)
{
    bfo__rail_gave(e, r->peer, r->lane_rail, BFO_HDR_MATCH_SIZE + r->cap, ok, NULL);
}

/* The op the lane's MATCH becomes: posted on its rail (counted in the
 * request's outstanding as the lane was), or with posted 0 (the lane's
 * bytes are off its rail already). */
static BFO__COLD bfo_op *bfo__lane_op(bfo_engine *e, bfo_request *r, int posted)
{
    bfo_op *op = bfo__op_alloc(e, BFO_FRAG_MATCH, r->peer);
    r->lane = 0;
    if (!op)
        return NULL; /* cannot happen: max_ops covers every request (bfo__min_ops) */
    op->owner = r->self;
    op->rseq = r->rseq;
    memcpy(op->hdr, r->lane_hdr, BFO_HDR_MATCH_SIZE);
    op->hdr_len = BFO_HDR_MATCH_SIZE;
    op->payload = r->buf;
    op->payload_len = r->cap;
    op->rail = r->lane_rail;
    op->posted = posted;
    op->q_at = op->since = 0;
    op->post_at = 0;
    return op;
}

/* The transport refused the lane's MATCH: as bfo__post_msg's op, it is
 * tried again later (bfo__op_fail_later). */
static BFO__COLD void bfo__lane_refused(bfo_engine *e, bfo_request *r)
{
    bfo_op *op;
    bfo__lane_unqueued(e, r, 0);
    op = bfo__lane_op(e, r, 0);
    if (op)
        bfo__op_fail_later(e, op);
}

/* Posts r's MATCH by the lane; 0 when it does not apply (bfo__act_post_match
 * posts it then). */
static BFO__HOT int bfo__lane_post(bfo_engine *e, bfo_request *r)
{
    const int peer = r->peer;
    const uint64_t n = BFO_HDR_MATCH_SIZE + r->cap;
    bfo_hdr_match h;
    bfo_iov iov[2];
    int rail, rc;
    if (BFO__UNLIKELY(peer == e->cfg.rank) || BFO__UNLIKELY(!r->buf && r->cap) || n >= BFO__STRIPE_MIN ||
        BFO__UNLIKELY((rail = bfo__pick_rail(e, peer, n)) < 0))
        return 0;
    h.type = BFO_FRAG_MATCH;
    h.flags = 0;
    h.ctx = r->ctx;
    h.src = (uint32_t)r->src;
    h.tag = (uint32_t)r->want_tag;
    h.seq = r->seq;
    bfo_hdr_match_encode(&h, r->lane_hdr, sizeof r->lane_hdr);
    r->outstanding++;
    r->lane = 1;
    r->lane_rail = rail;
    bfo__rail_took(e, &e->peers[peer].rail[rail], n); /* no sample: no op fields */
    e->stats.ops_posted++;
    iov[0].base = r->lane_hdr;
    iov[0].len = BFO_HDR_MATCH_SIZE;
    iov[1].base = r->buf;
    iov[1].len = r->cap;
    e->stats.rail_bytes[rail] += r->cap;
    rc = e->be.post_send(e->be.ctx, peer, rail, iov, r->cap ? 2 : 1, bfo__lane_token(r));
    if (BFO__UNLIKELY(rc != 0))
        bfo__lane_refused(e, r);
    return 1;
}

/* Carries out one action of a send; returns the event it asks the machine
 * for next (RESTART: the protocol for the rails left), or 0. */
static inline int bfo__send_action(bfo_engine *e, bfo_request *r, int act, const bfo__input *in)
{
    switch ((enum bfo_send_action)act) { /* every action, no default: -Wswitch names one left out */
    case BFO_SEND_ACT_POST_MATCH:
        bfo__act_post_match(e, r);
        return 0;
    case BFO_SEND_ACT_WITHDRAW: { /* its first message, still waiting for a rail */
        bfo_peer *p = &e->peers[r->peer];
        r->cancelled = 1;
        for (int i = p->pend_head; i >= 0; i = bfo__op_at(e, i)->next) {
            bfo_op *op = bfo__op_at(e, i);
            if (bfo_handle_eq(op->owner, r->self)) {
                if (r->peer != e->cfg.rank && op->type != BFO_FRAG_RGET) /* its eager bytes */
                    p->credit_used -= bfo__credit_cost(op->type == BFO_FRAG_RNDV ? r->first : r->cap);
                op->type = BFO_FRAG_MATCH;
                op->len = 0;
                bfo__match_hdr(e, r, op);
                return 0;
            }
        }
        break; /* fed with nothing waiting: bfo_cancel checks that first */
    }
    case BFO_SEND_ACT_COMPLETE_CANCELLED:
        e->stats.revoked_errors += r->revoked;
        bfo__finish(e, r, r->revoked ? BFO_ERR_REVOKED : BFO_ERR_CANCELLED);
        return 0;
    case BFO_SEND_ACT_POST_RNDV: bfo__send_rndv(e, r); return 0;
    case BFO_SEND_ACT_POST_RGET: bfo__send_rget(e, r); return 0;
    case BFO_SEND_ACT_SEND_FRAGS: bfo__send_frags(e, r); return 0;
    case BFO_SEND_ACT_POST_WRITE: { /* the PUT being taken */
        const bfo_hdr_put *p;
        bfo_op *op;
        if (!in || !in->f || in->f->type != BFO_FRAG_PUT)
            break; /* fed without its PUT */
        p = &in->f->h.put;
        op = bfo__req_op(e, r, BFO__OP_WRITE);
        if (!op)
            return 0;
        op->local = r->buf + p->offset;
        op->off = p->offset;
        op->len = p->length;
        op->raddr = p->raddr;
        op->slot = p->slot;
        bfo__post(e, op);
        return 0;
    }
    case BFO_SEND_ACT_POST_FIN: /* the write that completed, or the FIN that failed */
        if (!in || in->f)
            break; /* fed without the op's range */
        bfo__post_fin(e, r, in->slot, in->off, in->len);
        return 0;
    case BFO_SEND_ACT_NOTE_FIN: /* the receiver read everything */
        r->done_bytes = r->cap;
        r->counting = 1;
        return 0;
    case BFO_SEND_ACT_POST_NOTIFY:
        e->stats.notifies++;
        r->rseq++;
        bfo__post_restart_msg(e, r, BFO_FRAG_NOTIFY, r->self, r->remote);
        return 0;
    case BFO_SEND_ACT_REPOST_NOTIFY:
        bfo__post_restart_msg(e, r, BFO_FRAG_NOTIFY, r->self, r->remote);
        return 0;
    case BFO_SEND_ACT_RESTART:
        r->rseq++;
        r->restarted = 1;
        r->done_bytes = r->next_off = 0;
        r->frags_inflight = 0;
        r->counting = 0;
        e->stats.restarts++;
        return bfo__send_choose(e, r); /* for the rails left */
    case BFO_SEND_ACT_COMPLETE:
        bfo__act_send_complete(e, r);
        return 0;
    case BFO_SEND_ACT_FAIL_UNREACHABLE: /* the reason: r->status (bfo__req_gone) */
        bfo__count_gone(e, r->status);
        bfo__finish(e, r, r->status);
        return 0;
    case BFO_SEND_ACT_NOTE_ERROR:
    case BFO_SEND_ACT_DROP:
        return 0;
    }
    e->stats.protocol_violations++; /* not an action of the send machine */
    return 0;
}

/* A matched RNDV or RGET: the receive takes its description. */
static inline void bfo__accept_rzv(bfo_engine *e, bfo_request *r, const bfo_frame *f, int peer)
{
    const int rget = f->type == BFO_FRAG_RGET;
    const size_t first = rget ? 0 : f->payload_len; /* RGET's payload: keys, not data */
    size_t n = first < r->cap ? first : r->cap;
    (void)e;
    if (n && BFO__UNLIKELY(!r->buf))
        bfo__data_in(r, 0, f->payload, n);
    else if (n)
        memcpy(r->buf, f->payload, n);
    if (rget)
        bfo__req_take_keys(r, f->payload, f->payload_len);
    else
        r->nkeys = 0;
    r->source = (int)(rget ? f->h.rget.src : f->h.rndv.src);
    r->peer = peer;
    r->tag = (int)(rget ? f->h.rget.tag : f->h.rndv.tag);
    r->length = (size_t)(rget ? f->h.rget.msg_len : f->h.rndv.msg_len);
    r->remote = rget ? f->h.rget.sreq : f->h.rndv.sreq;
    r->rseq = rget ? f->h.rget.rseq : f->h.rndv.rseq;
    r->seq = rget ? f->h.rget.seq : f->h.rndv.seq;
    r->raddr = rget ? f->h.rget.raddr : 0;
    r->pin = !rget && (f->flags & BFO_FLAG_PIN);
    r->first = r->done_bytes = first;
    r->next_off = r->first;
    r->frags_inflight = 0;
    r->slot_next = r->slot_base = 0;
    r->slot_mask = 0;
    r->counting = 1;
    bfo__self(e, r); /* its handle: the answer (ACK, PUT, RECVERRNOTIFY) names it */
}

/* 1 when the event came with a frame of this type (the actions that take
 * a frame's contents are fed with one; else a protocol violation). */
static inline int bfo__in_frame(const bfo__input *in, int type)
{
    return in && in->f && in->f->type == type;
}

/* The receive's action deliver_match, with its MATCH (bfo__recv_action,
 * and the fast path of bfo__recv_take). */
static BFO__HOT void bfo__act_deliver_match(bfo_engine *e, bfo_request *r, const bfo_frame *f)
{
    size_t n = f->payload_len < r->cap ? f->payload_len : r->cap;
    if (n) {
        if (BFO__UNLIKELY(!r->buf))
            bfo__data_in(r, 0, f->payload, n);
        else
            memcpy(r->buf, f->payload, n);
    }
    r->source = (int)f->h.match.src;
    r->tag = (int)f->h.match.tag;
    r->length = f->payload_len;
    e->stats.messages_received++;
    e->stats.eagers++;
    bfo__finish(e, r, r->length > r->cap ? BFO_ERR_TRUNCATE : BFO_OK);
}

static inline void bfo__recv_action(bfo_engine *e, bfo_request *r, int act, const bfo__input *in)
{
    const bfo_frame *f = in ? in->f : NULL;
    switch ((enum bfo_recv_action)act) { /* every action, no default: -Wswitch names one left out */
    case BFO_RECV_ACT_DELIVER_MATCH:
        if (!bfo__in_frame(in, BFO_FRAG_MATCH))
            break;
        bfo__act_deliver_match(e, r, f);
        return;
    case BFO_RECV_ACT_ACCEPT_RNDV:
    case BFO_RECV_ACT_ACCEPT_RGET:
        if (!bfo__in_frame(in, act == BFO_RECV_ACT_ACCEPT_RGET ? BFO_FRAG_RGET : BFO_FRAG_RNDV))
            break;
        bfo__accept_rzv(e, r, f, in->peer);
        return;
    case BFO_RECV_ACT_POST_ACK: {
        bfo_hdr_ack h;
        bfo_op *op = bfo__req_op(e, r, BFO_FRAG_ACK);
        if (!op)
            return;
        h.type = BFO_FRAG_ACK;
        h.flags = 0;
        h.rseq = r->rseq;
        h.sreq = r->remote;
        h.dreq = r->self;
        h.offset = r->done_bytes;
        op->hdr_len = bfo_hdr_ack_encode(&h, op->hdr, sizeof op->hdr);
        bfo__post(e, op);
        return;
    }
    case BFO_RECV_ACT_ACCEPT_FRAG: {
        uint64_t off;
        if (!bfo__in_frame(in, BFO_FRAG_FRAG))
            break;
        off = f->h.frag.offset;
        if (off < r->cap) {
            size_t n = r->cap - (size_t)off;
            if (n > f->payload_len)
                n = f->payload_len;
            if (BFO__UNLIKELY(!r->buf))
                bfo__data_in(r, (size_t)off, f->payload, n);
            else if ((const uint8_t *)(r->buf + off) != f->payload) /* not read in place (bfo_engine_place) */
                memcpy(r->buf + off, f->payload, n);
        }
        r->done_bytes += f->payload_len;
        return;
    }
    case BFO_RECV_ACT_POST_PUTS: bfo__post_puts(e, r); return;
    case BFO_RECV_ACT_ACCEPT_FIN: { /* a PUT slot is written (checked by the engine) */
        uint32_t bit;
        if (!bfo__in_frame(in, BFO_FRAG_FIN))
            break;
        bit = f->h.fin.slot - r->slot_base;
        r->slot_mask |= (uint64_t)1 << bit;
        while (r->slot_mask & 1) {
            r->slot_mask >>= 1;
            r->slot_base++;
        }
        r->done_bytes += (size_t)f->h.fin.length;
        r->frags_inflight--;
        return;
    }
    case BFO_RECV_ACT_POST_READS: bfo__post_reads(e, r); return;
    case BFO_RECV_ACT_ACCOUNT_READ: return; /* bytes are counted as each read completes */
    case BFO_RECV_ACT_POST_FIN:
        bfo__post_fin(e, r, 0, 0, r->length);
        return;
    case BFO_RECV_ACT_POST_RECVERRNOTIFY:
        bfo__post_restart_msg(e, r, BFO_FRAG_RECVERRNOTIFY, r->remote, bfo__self(e, r));
        return;
    case BFO_RECV_ACT_ACCEPT_NOTIFY:
        if (!bfo__in_frame(in, BFO_FRAG_NOTIFY))
            break;
        r->rseq = f->h.restart.rseq;
        return;
    case BFO_RECV_ACT_POST_RESTARTACK:
        bfo__post_restart_msg(e, r, BFO_FRAG_RESTARTACK, r->remote, bfo__self(e, r));
        return;
    case BFO_RECV_ACT_RESET: r->done_bytes = 0; return;
    case BFO_RECV_ACT_COMPLETE:
        e->stats.messages_received++;
        bfo__finish(e, r, r->length > r->cap ? BFO_ERR_TRUNCATE : BFO_OK);
        return;
    case BFO_RECV_ACT_FAIL_UNREACHABLE: /* the reason: r->status (bfo__req_gone) */
        bfo__count_gone(e, r->status);
        bfo__finish(e, r, r->status);
        return;
    case BFO_RECV_ACT_DROP: return;
    case BFO_RECV_ACT_CLAIM: /* the status a matched probe reports */
        if (!f || (f->type != BFO_FRAG_MATCH && f->type != BFO_FRAG_RNDV && f->type != BFO_FRAG_RGET))
            break;
        r->peer = in->peer;
        r->source = (int)bfo__frame_src(f);
        r->tag = bfo__frame_tag(f);
        r->length = bfo__frame_len(f);
        return;
    case BFO_RECV_ACT_COMPLETE_CANCELLED:
        e->stats.revoked_errors += r->revoked;
        bfo__finish(e, r, r->revoked ? BFO_ERR_REVOKED : BFO_ERR_CANCELLED);
        return;
    case BFO_RECV_ACT_POST_RESTARTNACK: /* the engine NACKs for released requests */
        break;
    }
    e->stats.protocol_violations++; /* POST_RESTARTNACK, fed without its frame, or not an action */
}

/* The fact a request waits for, if it is true now: ALL_DELIVERED (the data
 * phase began, every byte is delivered, nothing is outstanding) or DRAINED
 * (nothing is outstanding); 0 when neither applies.  waits_of is its
 * machine's table, total its bytes (a send's cap, a receive's length). */
static inline int bfo__fact(const bfo_request *r, const unsigned char *waits_of, size_t total)
{
    unsigned waits;
    if (r->complete || r->outstanding != 0)
        return 0;
    waits = waits_of[r->cs];
    if ((waits & BFO_WAITS_ALL_DELIVERED) && r->counting && r->done_bytes >= total)
        return BFO_EV_ALL_DELIVERED;
    return waits & BFO_WAITS_DRAINED ? BFO_EV_DRAINED : 0;
}

static inline int bfo__req_fact(const bfo_request *r)
{
    return r->kind == BFO_REQ_SEND ? bfo__fact(r, bfo_send_machine.waits, r->cap)
                                   : bfo__fact(r, bfo_recv_machine.waits, r->length);
}

/* Feeds one event to a request, carries out the actions, then the facts
 * (ALL_DELIVERED, DRAINED) and any event an action asked for.  One feed per
 * machine: bfo_fsm_step then sees a constant machine, and its exec is
 * inlined instead of called through m->exec. */
static inline void bfo__send_feed(bfo_engine *e, bfo_request *r, int ev, const bfo__input *in)
{
    for (; ev && !r->complete; in = NULL) { /* the input is the first event's */
        bfo_step st; /* bfo_fsm_step fills the rest */
        int asked = 0;
        st.trace = e->trace;
        st.obj = r;
        if (bfo_fsm_step(&bfo_send_machine, &r->cs, ev, &st) != BFO_OK) {
            e->stats.protocol_violations++;
            return;
        }
        /* no transition emits more than the generator's bound: the loop unrolls */
        for (unsigned i = 0; i < st.n_actions && i < BFO_SEND_MAX_ACTIONS; i++) {
            int a = bfo__send_action(e, r, st.actions[i], in);
            if (a)
                asked = a;
        }
        ev = asked ? asked : bfo__fact(r, bfo_send_machine.waits, r->cap);
    }
}

static inline void bfo__recv_feed(bfo_engine *e, bfo_request *r, int ev, const bfo__input *in)
{
    for (; ev && !r->complete; in = NULL) { /* the input is the first event's */
        bfo_step st;
        st.trace = e->trace;
        st.obj = r;
        if (bfo_fsm_step(&bfo_recv_machine, &r->cs, ev, &st) != BFO_OK) {
            e->stats.protocol_violations++;
            return;
        }
        for (unsigned i = 0; i < st.n_actions && i < BFO_RECV_MAX_ACTIONS; i++)
            bfo__recv_action(e, r, st.actions[i], in);
        ev = bfo__fact(r, bfo_recv_machine.waits, r->length);
    }
}

static inline void bfo__req_feed(bfo_engine *e, bfo_request *r, int ev, const bfo__input *in)
{
    if (r->kind == BFO_REQ_SEND)
        bfo__send_feed(e, r, ev, in);
    else
        bfo__recv_feed(e, r, ev, in);
}

/* Feeds the event a frame from peer caused: the frame is the actions' input. */
static inline void bfo__feed_frame(bfo_engine *e, bfo_request *r, int ev, const bfo_frame *f, int peer)
{
    const bfo__input in = { f, peer, 0, 0, 0 };
    bfo__req_feed(e, r, ev, &in);
}

/* The event of an op's completion. */
static inline int bfo__op_event(int type, int ok)
{
    if (type == BFO__OP_WRITE)
        return ok ? BFO_EV_WRITE_COMPLETED : BFO_EV_WRITE_FAILED;
    if (type == BFO__OP_READ)
        return ok ? BFO_EV_READ_COMPLETED : BFO_EV_READ_FAILED;
    return bfo_frag_event(type, ok ? BFO_EVK_DELIVERED : BFO_EVK_FAILED);
}

/* An eager send's MATCH delivered: MATCH_SENT --MATCH_DELIVERED--> COMPLETE
 * / complete, a fast path (docs/engine-design.md, "Fast paths").  It looks
 * first and changes nothing unless it applies: the op a MATCH (so neither
 * rail control nor engine-owned), delivered, its request alive, a send, in
 * MATCH_SENT.  Then what bfo__op_done_slow does for it, in its order: the
 * op back and freed, the request's counts, the step, its action; complete,
 * the request takes no fact.  Returns 1 when it took the completion. */
static BFO__HOT int bfo__op_done_fast(bfo_engine *e, bfo_op *op, int ok)
{
#ifndef BFO_NO_FAST_PATH
    bfo_request *r;
    const bfo_slot *s;
    /* a MATCH is a request's (never rail control: about_rail is -1) */
    if (op->type != BFO_FRAG_MATCH || !ok)
        return 0;
    /* bfo__handle_get without its range test: the owner's index was a
     * live slot's, and the pool never shrinks; a slot of the generation is
     * live (its req set) */
    s = bfo__slot_at(e, (int)op->owner.index);
    if (s->gen != op->owner.gen)
        return 0;
    r = s->req;
    if (r->cs != BFO_SEND_ST_MATCH_SENT || r->kind != BFO_REQ_SEND)
        return 0;
    /* bfo__op_unpost(e, op, 1) (delivered: its bytes count to its rail's
     * rate) and bfo__op_free, for a frame of a request */
    if (BFO__LIKELY(op->posted)) { /* not when to itself (bfo__run_self) */
        op->posted = 0;
        bfo__rail_unqueued(e, op, op->hdr_len + op->payload_len, 1);
    }
    op->gen += 2; /* as bfo__op_free */
    op->next = e->op_free;
    e->op_free = op->idx;
    e->ops_in_use--;
    r->outstanding--;
    r->answered = 1;
    bfo__fsm_shortcut(&bfo_send_machine, &r->cs, BFO_SEND_ST_MATCH_SENT, BFO_EV_MATCH_DELIVERED,
                      BFO_SEND_ST_COMPLETE, BFO_SEND_ACT_COMPLETE, e->trace, r);
    bfo__act_send_complete(e, r);
    return 1;
#else
    (void)e, (void)op, (void)ok;
    return 0;
#endif
}

/* A completion for an op: route it to its owner. */
static BFO__NOINLINE void bfo__op_done_slow(bfo_engine *e, bfo_op *op, int ok)
{
    const int type = op->type, peer = op->peer, about = op->about_rail;
    const bfo_handle owner = op->owner;
    const uint16_t rseq = op->rseq;
    const uint64_t len = op->len;
    bfo__input in = { NULL, peer, op->slot, op->off, op->len }; /* for POST_FIN */
    bfo_request *r;

    bfo__op_unpost(e, op, ok);
    if (about >= 0) { /* rail control: the rail machine it concerns */
        if (type == BFO_FRAG_BYE)
            e->byes_out--; /* delivered or not: it is not sent again (bfo_engine_left) */
        bfo__op_free(e, op);
        bfo__rail_step(e, peer, about, bfo_frag_event(type, ok ? BFO_EVK_DELIVERED : BFO_EVK_FAILED),
                       NULL);
        return;
    }
    if (BFO__UNLIKELY(type == BFO_FRAG_RELAY || type == BFO_FRAG_REACH)) { /* relay: its own */
        bfo__relay_done(e, op, ok);
        return;
    }
    if (BFO__UNLIKELY(type == BFO_FRAG_BYE)) { /* through a relay (bfo__relay_bye): not sent again */
        e->byes_out--;
        bfo__op_free(e, op);
        return;
    }
    if (bfo_handle_is_null(owner)) { /* an engine-owned NACK or CREDIT: until delivered */
        if (type == BFO_FRAG_CREDIT) { /* again with the newest limit */
            bfo__op_free(e, op);
            if (!ok && !e->peers[peer].unreachable)
                bfo__credit_tell(e, peer);
            return;
        }
        if (!ok && !e->peers[peer].unreachable) {
            bfo_op *again;
            uint8_t hdr[BFO_MAX_HDR_SIZE];
            size_t hdr_len = op->hdr_len;
            memcpy(hdr, op->hdr, hdr_len);
            bfo__op_free(e, op);
            again = bfo__ctl_alloc(e, type, peer);
            if (again) {
                memcpy(again->hdr, hdr, hdr_len);
                again->hdr_len = hdr_len;
                bfo__post(e, again);
            }
            return;
        }
        bfo__op_free(e, op);
        return;
    }
    bfo__op_free(e, op);
    r = bfo__handle_get(e, owner);
    if (!r)
        return; /* the request is gone: nothing waits for this */
    r->outstanding--;
    r->answered = 1;
    if (rseq == r->rseq) { /* bytes delivered: by copy, by read, or PUT slots FINned */
        if (type == BFO_FRAG_FRAG || type == BFO__OP_READ) {
            r->frags_inflight--;
            if (ok)
                r->done_bytes += (size_t)len;
            if (BFO__UNLIKELY(e->stage_wait_head >= 0)) /* a staging buffer may be free */
                bfo__stage_kick(e);
        } else if (type == BFO_FRAG_FIN && ok && r->kind == BFO_REQ_SEND) {
            r->done_bytes += (size_t)len;
        }
    }
    if (rseq != r->rseq && r->kind == BFO_REQ_RECV) {
        /* posted under an older restart: only the count matters */
        bfo__req_feed(e, r, bfo__req_fact(r), NULL);
        return;
    }
    bfo__req_feed(e, r, bfo__op_event(type, ok), &in);
}

static BFO__HOT void bfo__op_done(bfo_engine *e, bfo_op *op, int ok)
{
    if (!bfo__op_done_fast(e, op, ok))
        bfo__op_done_slow(e, op, ok);
}

/* bfo_engine_completion_probe: see THE API near the top.  Its rail's
 * machine takes PROBE_DELIVERED or PROBEACK_DELIVERED (no action in any
 * state, spec/rail.rl); the op goes back to the control budget. */
static inline bfo_op *bfo__op_of_token(const bfo_engine *e, uint64_t token);

static inline int bfo_engine_completion_probe(bfo_engine *e, uint64_t token, int ok)
{
    bfo_op *op = ok ? bfo__op_of_token(e, token) : NULL;
    if (!op || (op->type != BFO_FRAG_PROBE && op->type != BFO_FRAG_PROBEACK) || op->about_rail < 0)
        return 0;
    bfo__op_done_slow(e, op, 1);
    return 1;
}

/* The op a backend's token names and holds (posted, of the token's
 * generation), or NULL. */
static inline bfo_op *bfo__op_of_token(const bfo_engine *e, uint64_t token)
{
    uint32_t idx = (uint32_t)token, gen = (uint32_t)(token >> 32);
    bfo_op *op;
    if (idx < (uint32_t)e->opp.n && (op = bfo__op_at(e, (int)idx))->gen == gen && op->posted)
        return op;
    return NULL;
}

/* A completion of the lane's (bfo__lane_post): MATCH_SENT --MATCH_DELIVERED-->
 * COMPLETE / complete, as bfo__op_done_fast takes it for an op; anything
 * else as an op's. */
static BFO__HOT void bfo__lane_done(bfo_engine *e, uint64_t token, int ok)
{
    const uint32_t idx = (uint32_t)token & ~BFO__LANE_BIT, gen = (uint32_t)(token >> 32);
    const bfo_slot *s;
    bfo_request *r;
    bfo_op *op;
    if (idx >= (uint32_t)e->slotp.n || (s = bfo__slot_at(e, (int)idx))->gen != gen || !(r = s->req) ||
        !r->lane)
        return; /* not a lane's MATCH the backend holds */
#ifndef BFO_NO_FAST_PATH
    if (BFO__LIKELY(ok) && BFO__LIKELY(r->cs == BFO_SEND_ST_MATCH_SENT)) {
        bfo__lane_unqueued(e, r, 1);
        r->lane = 0;
        r->outstanding--;
        r->answered = 1;
        bfo__fsm_shortcut(&bfo_send_machine, &r->cs, BFO_SEND_ST_MATCH_SENT, BFO_EV_MATCH_DELIVERED,
                          BFO_SEND_ST_COMPLETE, BFO_SEND_ACT_COMPLETE, e->trace, r);
        bfo__act_send_complete(e, r);
        return;
    }
#endif
    op = bfo__lane_op(e, r, 1);
    if (op)
        bfo__op_done_slow(e, op, ok);
}

/* bfo_engine_completion: see THE API near the top. */
static inline void bfo_engine_completion(bfo_engine *e, uint64_t token, int ok)
{
    if ((uint32_t)token & BFO__LANE_BIT) {
        bfo__lane_done(e, token, ok);
    } else {
        bfo_op *op = bfo__op_of_token(e, token);
        if (op)
            bfo__op_done(e, op, ok);
    }
    bfo__run_failed(e);
}

/* --------------------------------------------------------------- rails */

/* Sends a rail control message; 0 when over the control budget (not sent:
 * a heartbeat probe is tried again at a later progress, a PROBING probe
 * times out and the rail reconnects). */
static inline int bfo__rail_ctl_pad(bfo_engine *e, int peer, int rail, int type, int on_rail,
                                    uint64_t nonce, size_t pad)
{
    bfo_hdr_railctl h;
    bfo_op *op = bfo__ctl_alloc(e, type, peer);
    if (!op)
        return 0;
    op->about_rail = rail;
    op->fixed_rail = on_rail;
    h.type = (uint8_t)type;
    h.flags = 0;
    h.rail = (uint16_t)rail;
    h.epoch = e->peers[peer].rail[rail].epoch;
    h.nonce = nonce;
    op->hdr_len = bfo_hdr_railctl_encode(&h, op->hdr, sizeof op->hdr);
    op->payload = pad ? e->pad_mem : NULL; /* a demoted rail's measuring probe: zeros */
    op->payload_len = pad;
    bfo__post(e, op);
    return 1;
}

static inline int bfo__rail_ctl(bfo_engine *e, int peer, int rail, int type, int on_rail,
                                uint64_t nonce)
{
    return bfo__rail_ctl_pad(e, peer, rail, type, on_rail, nonce, 0);
}

static inline void bfo__peer_unreachable(bfo_engine *e, int peer);
static inline void bfo__peer_fail(bfo_engine *e, int peer, int posted);
static inline int bfo__all_unreachable(const bfo_engine *e);

/* The probe timeout of one rail: probe_timeout_ns, or more when probes come
 * back slowly (srtt + 4 rttvar), or twice a piece's time from its post to
 * its completion (lat) while data is in flight on it, doubled after each
 * recent probe timeout in UP; never above silence_ns.  A loaded peer that
 * answers late is thus not failed again and again, while a quiet, healthy
 * rail keeps the floor.  A probe waits behind the rail's data as a piece
 * does, and its answer behind the other direction's: between namespaces
 * at 400 Mbit/s (a shaper's 100 ms queue each way) a loaded rail went 48 ms
 * unheard, its round trips measured at 0.6 ms before the load, and was
 * failed over in 2 runs of 3. */
static inline uint64_t bfo__probe_timeout(const bfo_engine *e, const bfo_rail_link *rs)
{
    uint64_t t = e->cfg.probe_timeout_ns, est = rs->srtt + 4 * rs->rttvar;
    if (est > t)
        t = est;
    if (rs->q_bytes && 2 * rs->lat > t)
        t = 2 * rs->lat;
    t <<= rs->pt_shift;
    /* a demoted rail is known to be slow: its probes and the peer's beacons
     * wait in a full queue (a shaper's drops them), twice as long */
    if (rs->fsm.cs == BFO_RAIL_ST_DEMOTED)
        t *= 2;
    return t < e->cfg.silence_ns ? t : e->cfg.silence_ns;
}

/* The PROBEACK of the last probe: one round trip measured (RFC 6298's
 * gains, 1/8 and 1/4); in UP the heartbeat is answered. */
static inline void bfo__probe_answered(bfo_engine *e, bfo_rail_link *rs)
{
    uint64_t rtt = e->now - rs->probe_sent;
    if (rs->busy_at > rs->probe_sent) {
        /* held open by a busy peer: its computing, not a round trip */
    } else if (!rs->srtt && !rs->rttvar) {
        rs->srtt = rtt;
        rs->rttvar = rtt / 2;
    } else {
        uint64_t d = rtt > rs->srtt ? rtt - rs->srtt : rs->srtt - rtt;
        rs->rttvar = rs->rttvar - rs->rttvar / 4 + d / 4;
        rs->srtt = rs->srtt - rs->srtt / 8 + rtt / 8;
    }
    if (!bfo__live(rs->fsm.cs))
        return;
    rs->probe_out = 0;
    if (rs->pt_shift && ++rs->pt_good >= 8) {
        rs->pt_shift--;
        rs->pt_good = 0;
    }
}

/* A demoted rail is measured by a pair of probes sent back to back: a
 * plain one, then one padded with zeros (at most BFO_MEASURE_BYTES,
 * frag_size, and what the rail moved in BFO_MEASURE_TIME_NS at the rate
 * it was demoted at; at least 4 KiB).  The padding goes through the rail's
 * narrowest point after the plain probe, so the time between their two
 * PROBEACKs is the padding's time on the rail (packet-pair dispersion):
 * the delays both share (the peer's progress loop, queues) cancel out,
 * where one probe's round trip would measure them instead.  Their nonces
 * have the top bit set (a heartbeat's never has): the padded one's is odd,
 * the plain one's one less.  At 1/BFO_PROMOTE_RATIO of the best UP rail or
 * better a measurement counts good (bfo__rails_review promotes after
 * BFO_PROMOTE_SAMPLES in a row); the estimate moves halfway to it. */
static BFO__NOINLINE void bfo__measured(bfo_engine *e, int peer, int rail, uint64_t nonce)
{
    bfo_rail_link *rl = &e->peers[peer].rail[rail];
    uint64_t dt, x, best;
    if (nonce == rl->meas_nonce - 1) { /* the plain one */
        rl->meas_first = e->now ? e->now : 1;
        return;
    }
    /* the padded one: from the plain one's answer (without it, from the
     * pair's sending: its round trip counts against it) */
    dt = rl->meas_first ? e->now - rl->meas_first : e->now - rl->meas_sent;
    rl->meas_sent = rl->meas_first = 0;
    if (rl->fsm.cs != BFO_RAIL_ST_DEMOTED)
        return;
    x = (uint64_t)rl->meas_len * 1000000u / (dt > 1000 ? dt : 1000);
    best = bfo__best_rate(e, peer, rail);
    if (best && x > best)
        x = best; /* both answers in one read: "fast", no more is known */
    rl->rate = rl->rate / 2 + x / 2;
    if (!rl->rate)
        rl->rate = 1;
    if (!best || x * BFO_PROMOTE_RATIO >= best) {
        if (rl->meas_good < 255)
            rl->meas_good++;
    } else {
        rl->meas_good = 0;
    }
}

/* Sends the measuring pair (see bfo__measured): the plain probe, then
 * the padding: 20 ms of the rail at the rate it was demoted at, times
 * 2^flaps, in at most BFO__TRAIN padded probes of at most
 * BFO_MEASURE_BYTES back to back (a train: those before the last carry
 * the plain one's nonce less one, which nothing waits for).  A rail behind
 * a token-bucket shaper (tc's tbf, a switch's policer) lets a padding that
 * its bucket covers through at once and measures fast; promoted on that,
 * it is demoted again on probation (a flap), and each flap doubles the
 * padding until the bucket no longer covers it: between namespaces, a
 * rail shaped to 20 Mbit/s (64 KiB burst) and demoted at 1.1 MB/s was
 * promoted on 22 KiB of padding, and in the simulator (10 MB/s, 64 KiB
 * burst) demoted 5 times in 6 s, twice with the padding doubled.
 * Measured half as often per flap (bfo__rails_review), a demoted rail's
 * bytes per second stay within the budget: 20 ms of it every 100 ms,
 * BFO_MEASURE_BYTES at most (more only once it flapped, and then no more
 * than BFO__TRAIN of them per period). */
#define BFO__TRAIN 8
static BFO__NOINLINE void bfo__measure(bfo_engine *e, int peer, int rail)
{
    bfo_rail_link *rl = &e->peers[peer].rail[rail];
    /* from the rate it was demoted at, not from what a measurement said
     * (a burst can fool one): the budget holds */
    uint64_t len = rl->base_rate * (BFO_MEASURE_TIME_NS / 1000000u);
    const uint64_t nonce = ((uint64_t)1 << 63) | (e->now << 1) | 1;
    uint64_t cap = bfo__stage_bytes(&e->cfg);
    int train;
    rl->meas_at = e->now;
    if (len < 4096)
        len = 4096;
    if (len > BFO_MEASURE_BYTES)
        len = BFO_MEASURE_BYTES;
    len <<= rl->flaps;
    if (cap > BFO_MEASURE_BYTES)
        cap = BFO_MEASURE_BYTES;
    train = (int)((len + cap - 1) / cap);
    if (train > BFO__TRAIN)
        train = BFO__TRAIN;
    len = len / (uint64_t)train < cap ? len / (uint64_t)train : cap; /* each probe's */
    if (!e->pad_mem || e->ctl_in_use + 1 + train > bfo__ctl_budget(&e->cfg))
        return;
    rl->meas_nonce = nonce;
    rl->meas_sent = e->now ? e->now : 1;
    rl->meas_first = 0;
    rl->meas_len = (uint32_t)(len * (uint64_t)train);
    e->stats.measures++;
    if (!bfo__rail_ctl_pad(e, peer, rail, BFO_FRAG_PROBE, rail, nonce - 1, 0)) {
        rl->meas_sent = 0;
        return;
    }
    for (int k = 1; k <= train; k++)
        if (!bfo__rail_ctl_pad(e, peer, rail, BFO_FRAG_PROBE, rail, k < train ? nonce - 2 : nonce, (size_t)len)) {
            rl->meas_sent = 0;
            return;
        }
}

static inline void bfo__rail_step(bfo_engine *e, int peer, int rail, int ev, const bfo_frame *f);

/* The peer's rails reviewed (bfo_engine_progress, two rails or more):
 * demotion and promotion (spec/rail.rl, "Slow is not dead"), and the
 * demoted rails' measurements. */
static BFO__NOINLINE void bfo__rails_review(bfo_engine *e, int peer)
{
    bfo_peer *p = &e->peers[peer];
    const unsigned sb = e->cfg.standby_rails;
    int up = 0, active = 0;
    for (int r = 0; r < e->cfg.nrails; r++)
        if (p->rail[r].fsm.cs == BFO_RAIL_ST_UP) {
            up++;
            active += !((sb >> r) & 1u);
        }
    for (int r = 0; r < e->cfg.nrails; r++) {
        bfo_rail_link *rl = &p->rail[r];
        const int standby = (sb >> r) & 1u;
        if (e->now - rl->in_mark_at >= BFO_DEMOTE_NS) { /* the peer's direction's rate */
            rl->in_rate = (rl->in_bytes - rl->in_mark) * 1000000u / (e->now - rl->in_mark_at);
            rl->in_mark = rl->in_bytes;
            rl->in_mark_at = e->now;
        }
        if (rl->fsm.cs == BFO_RAIL_ST_UP) {
            /* slow one way and fast the other (the peer's data comes in on
             * it at 1/BFO_DEMOTE_RATIO of the best rail or more): its
             * pieces' acknowledgements came back behind that data, no
             * evidence of a slow rail; the streak waits */
            const int in_fast = rl->slow && rl->in_rate &&
                                rl->in_rate * BFO_DEMOTE_RATIO >= bfo__best_rate(e, peer, r);
            if (standby ? active > 0
                        : (up > 1 && rl->slow && !in_fast && e->now - rl->slow_since >= BFO_DEMOTE_NS &&
                           (rl->slow >= BFO_DEMOTE_SAMPLES ||
                            (e->now - rl->sampled_at >= BFO_DEMOTE_NS &&
                             rl->q_bytes < 4 * (uint64_t)e->cfg.frag_size)))) {
                bfo__rail_step(e, peer, r, BFO_EV_DEMOTION_DUE, NULL);
                up--;
                active -= !standby;
            }
        } else if (rl->fsm.cs == BFO_RAIL_ST_DEMOTED) {
            if (!up || (standby ? !active : rl->meas_good >= BFO_PROMOTE_SAMPLES)) {
                bfo__rail_step(e, peer, r, BFO_EV_PROMOTION_DUE, NULL);
                up++;
                active += !standby;
            } else if (!standby) {
                if (rl->meas_sent && e->now - rl->meas_sent >= 10 * BFO_MEASURE_PERIOD_NS) {
                    rl->meas_sent = 0; /* lost with its connection, or very slow */
                    rl->meas_good = 0;
                }
                if (!rl->meas_sent && e->now - rl->meas_at >= (uint64_t)BFO_MEASURE_PERIOD_NS << rl->flaps)
                    bfo__measure(e, peer, r);
            }
        }
    }
}

static inline void bfo__rail_action(bfo_engine *e, int peer, int rail, int act, const bfo_frame *f)
{
    bfo_peer *p = &e->peers[peer];
    bfo_rail_link *rs = &p->rail[rail];
    switch ((enum bfo_rail_action)act) { /* every action, no default: -Wswitch names one left out */
    case BFO_RAIL_ACT_SEND_PROBE:
        rs->probe_sent = e->now; /* PROBING times out from the attempt, sent or not */
        rs->probe_nonce = e->now;
        if (bfo__rail_ctl(e, peer, rail, BFO_FRAG_PROBE, rail, e->now) && bfo__live(rs->fsm.cs))
            rs->probe_out = 1; /* a heartbeat that went out waits for its PROBEACK */
        return;
    case BFO_RAIL_ACT_SEND_PROBEACK:
        bfo__rail_ctl(e, peer, rail, BFO_FRAG_PROBEACK, rail,
                      f && f->type == BFO_FRAG_PROBE ? f->h.railctl.nonce : 0);
        return;
    case BFO_RAIL_ACT_ADMIT:
        if (rs->ever_up)
            e->stats.readmissions++;
        rs->ever_up = 1;
        rs->epoch++;
        rs->attempts = 0;
        rs->backoff = e->cfg.backoff_min_ns;
        rs->last_rx = rs->last_tx = e->now;
        rs->probe_out = 0;
        rs->broken_owed = 0;
        rs->rate = bfo__rate_guess(rs); /* measured afresh */
        rs->measured = 0;
        rs->prob_bytes = rs->prob_ns = 0;
        rs->lat = 0;
        rs->slow = rs->meas_good = 0;
        rs->meas_sent = 0;
        p->down_since = 0;
        bfo__peer_step(e, peer, BFO_PEER_EV_RAIL_ADMITTED);
        bfo__credit_tell(e, peer); /* the peer's window here, in case its guess is off */
        /* the notices that found no rail UP when their rail was mapped out
         * (the peer may still think it UP: it may hear us on it, one way) */
        for (int k = 0; k < e->cfg.nrails; k++)
            if (p->rail[k].broken_owed) {
                p->rail[k].broken_owed = 0;
                if ((p->rail[k].fsm.cs == BFO_RAIL_ST_FAILED ||
                     p->rail[k].fsm.cs == BFO_RAIL_ST_RECONNECTING) &&
                    !bfo__rail_ctl(e, peer, k, BFO_FRAG_BROKEN, rail, 0))
                    p->rail[k].broken_owed = 1; /* over the control budget: at the next */
            }
        return;
    case BFO_RAIL_ACT_MAP_OUT: {
        int up = 0;
        e->stats.mapouts++;
        for (int k = 0; k < e->cfg.nrails; k++)
            up += k != rail && bfo__live(p->rail[k].fsm.cs);
        if (!up && !p->down_since) {
            p->down_since = e->now ? e->now : 1;
            bfo__peer_step(e, peer, BFO_PEER_EV_LAST_RAIL_LOST);
        }
        if (e->be.disconnect) /* what is in flight on it fails now, not at the reconnect */
            e->be.disconnect(e->be.ctx, peer, rail);
        return;
    }
    case BFO_RAIL_ACT_SEND_BROKEN: {
        int other = -1;
        for (int k = 0; k < e->cfg.nrails && other < 0; k++)
            if (k != rail && bfo__rail_up(e, peer, k))
                other = k;
        for (int k = 0; k < e->cfg.nrails && other < 0; k++)
            if (k != rail && bfo__live(p->rail[k].fsm.cs))
                other = k; /* a demoted rail carries it when none is UP */
        if (other >= 0)
            bfo__rail_ctl(e, peer, rail, BFO_FRAG_BROKEN, other, 0);
        else
            rs->broken_owed = 1; /* sent when a rail is admitted (ADMIT) */
        return;
    }
    case BFO_RAIL_ACT_SCHEDULE_RECONNECT:
        rs->deadline = e->now + rs->backoff;
        rs->backoff = rs->backoff * 2 > e->cfg.backoff_max_ns ? e->cfg.backoff_max_ns
                                                               : rs->backoff * 2;
        rs->attempts++;
        return;
    case BFO_RAIL_ACT_RECONNECT:
        if (!e->be.connect || e->be.connect(e->be.ctx, peer, rail) != 0)
            rs->deadline = e->now; /* the next progress reports the failure */
        return;
    case BFO_RAIL_ACT_RETIRE: return;
    case BFO_RAIL_ACT_SEND_BYE: { /* this side leaves: on this rail, what it sent the peer */
        bfo_hdr_bye h;
        /* within the control budget (4 per peer and rail: room for a BYE
         * beside a probe, its answer and a CREDIT) */
        bfo_op *op = bfo__ctl_alloc(e, BFO_FRAG_BYE, peer);
        if (!op)
            return; /* the peer hears another rail's, or takes the closing as a failure */
        op->about_rail = rail;
        op->fixed_rail = rail;
        h.type = BFO_FRAG_BYE;
        h.flags = 0;
        h.seq = p->send_seq;
        op->hdr_len = bfo_hdr_bye_encode(&h, op->hdr, sizeof op->hdr);
        e->byes_out++;
        e->stats.byes_sent++;
        bfo__post(e, op);
        return;
    }
    case BFO_RAIL_ACT_DEMOTE: /* new data goes elsewhere; what is in flight completes here */
        e->stats.demotions++;
        /* demoted again within BFO_FLAP_NS of a promotion: a rail that
         * measures well in short bursts (a token-bucket shaper) and not
         * under load; measured half as often each time (flap damping) */
        if (rs->promoted_at && e->now - rs->promoted_at < BFO_FLAP_NS) {
            rs->flaps = rs->flaps < 6 ? rs->flaps + 1 : 6;
            /* the rate on probation had the burst in it: the measuring
             * budget stays at the rate of the first demotion, or less
             * (a 20 Mbit/s rail demoted at 1.1 MB/s, then at 3.3 on
             * probation, was measured with a quarter of its bytes) */
            if (!rs->base_rate || rs->rate < rs->base_rate)
                rs->base_rate = rs->rate;
        } else {
            rs->flaps = 0;
            rs->base_rate = rs->rate;
        }
        rs->meas_good = 0;
        rs->meas_sent = 0;
        rs->meas_at = e->now;
        return;
    case BFO_RAIL_ACT_PROMOTE: /* data again (bfo__rail_step posts what waited for a rail) */
        e->stats.promotions++;
        rs->slow = 0;
        { /* back on probation: at the promotion threshold, so that a rail
           * that measured well in a burst is not handed much at once; its
           * completions raise the estimate as fast as it delivers */
            uint64_t best = bfo__best_rate(e, peer, rail) / BFO_PROMOTE_RATIO;
            if (best && rs->rate > best)
                rs->rate = best;
        }
        rs->promoted_at = e->now ? e->now : 1;
        rs->meas_sent = 0;
        rs->measured = 0; /* probation: one small piece at a time, BFO_PROBATION_BYTES */
        rs->prob_bytes = rs->prob_ns = 0;
        return;
    case BFO_RAIL_ACT_PART: /* its connection's end is no failure */
        if (e->be.part)
            e->be.part(e->be.ctx, peer, rail);
        return;
    case BFO_RAIL_ACT_TAKE_CREDIT:
        /* the first replaces the guess (the peer's budget may be smaller
         * than ours); after it, the largest limit is the newest */
        if (f && f->type == BFO_FRAG_CREDIT &&
            (!p->credit_heard || f->h.credit.limit > p->credit_limit)) {
            p->credit_limit = f->h.credit.limit;
            p->credit_heard = 1;
        }
        return;
    case BFO_RAIL_ACT_TAKE_RELAY: bfo__relay_take(e, peer, f); return;
    case BFO_RAIL_ACT_TAKE_RELAYACK: bfo__relayack_take(e, peer, f); return;
    case BFO_RAIL_ACT_TAKE_REACH: bfo__reach_take(e, peer, f); return;
    }
    e->stats.protocol_violations++; /* not an action of the rail machine */
}

static inline void bfo__rail_step(bfo_engine *e, int peer, int rail, int ev, const bfo_frame *f)
{
    bfo_peer *p = &e->peers[peer];
    bfo_step st;
    int was_up = bfo__rail_up(e, peer, rail), was_live = bfo__live(p->rail[rail].fsm.cs);
    memset(&st, 0, sizeof st);
    st.trace = e->trace;
    st.obj = &p->rail[rail];
    if (bfo_rail_step(&p->rail[rail].fsm, ev, &st) != BFO_OK) {
        e->stats.protocol_violations++;
        return;
    }
    for (unsigned i = 0; i < st.n_actions; i++)
        bfo__rail_action(e, peer, rail, st.actions[i], f);
    if (was_live && !bfo__live(p->rail[rail].fsm.cs))
        p->rail[rail].probe_out = 0; /* a heartbeat probe belongs to one stay in UP/DEMOTED */
    if (!was_up && bfo__rail_up(e, peer, rail))
        bfo__flush_pending(e, peer);
}

/* A rail event of a peer that parted (it said BYE, or this side left): its
 * rails are LEFT, which takes it and does nothing; out of line, as a gone
 * peer's events are (one given up gets none). */
static BFO__COLD void bfo__rail_event_parted(bfo_engine *e, int peer, int rail, int ev)
{
    if (bfo_rail_accepts(e->peers[peer].rail[rail].fsm.cs, ev))
        bfo__rail_step(e, peer, rail, ev, NULL);
}

/* bfo_engine_rail_event: see THE API near the top. */
static inline void bfo_engine_rail_event(bfo_engine *e, int peer, int rail, int ev, uint64_t now)
{
    if (rail < 0 || rail >= e->cfg.nrails)
        return;
    if (now > e->now)
        e->now = now;
    for (int i = peer == BFO_ALL_PEERS ? 0 : peer;
         i >= 0 && i < e->cfg.nranks && (peer == BFO_ALL_PEERS || i == peer); i++)
        if (i != e->cfg.rank && !e->peers[i].unreachable &&
            bfo_rail_accepts(e->peers[i].rail[rail].fsm.cs, ev))
            bfo__rail_step(e, i, rail, ev, NULL);
        else if (BFO__UNLIKELY(e->peers[i].unreachable == BFO__PARTED) && i != e->cfg.rank)
            bfo__rail_event_parted(e, i, rail, ev);
    bfo__run_failed(e);
}

/* ------------------------------------------------------------ matching */

static inline void bfo__ux_buf_put(bfo_engine *e, bfo_uxm *u);

static inline int bfo__uxm_take(bfo_engine *e)
{
    int i = e->uxm_free;
    if (i < 0) {
        i = bfo__pool_grow(e, &e->uxp, sizeof(bfo_uxm));
        if (i >= 0)
            bfo__ux_free_range(e, i, e->uxp.n);
    }
    if (i >= 0) {
        e->uxm_free = bfo__ux_at(e, i)->next;
        bfo__ux_at(e, i)->used = 1;
        bfo__ux_at(e, i)->next = -1;
        e->uxm_in_use++;
    }
    return i;
}

static inline void bfo__uxm_put(bfo_engine *e, int i)
{
    bfo__ux_buf_put(e, bfo__ux_at(e, i));
    bfo__ux_at(e, i)->used = 0;
    bfo__ux_at(e, i)->next = e->uxm_free;
    e->uxm_free = i;
    e->uxm_in_use--;
}

/* A buffer for len bytes of an unexpected message's payload: a freed one
 * of its class, or carved from the arena (a new arena from grow when it is
 * spent).  0 when over unexpected_budget or out of memory: the frame waits
 * (BFO_ERR_AGAIN). */
static inline int bfo__ux_buf_get(bfo_engine *e, bfo_uxm *u, size_t len)
{
    const int k = bfo__ux_class(len);
    const size_t sz = (size_t)64 << k;
    void *b = e->ux_buf_free[k];
    if (e->ux_bytes_in_use + sz > e->cfg.unexpected_budget)
        return 0;
    if (b) {
        memcpy(&e->ux_buf_free[k], b, sizeof(void *));
    } else {
        if (e->ux_arena_left < sz) {
            size_t want = sz > ((size_t)1 << 20) ? sz : ((size_t)1 << 20);
            uint8_t *m;
            if (!e->cfg.grow)
                return 0;
            e->grow_calls++;
            m = (uint8_t *)e->cfg.grow(e->cfg.grow_ctx, want);
            if (!m) {
                e->grow_failures++;
                return 0;
            }
            e->ux_arena = m;
            e->ux_arena_left = want;
        }
        b = e->ux_arena;
        e->ux_arena += sz;
        e->ux_arena_left -= sz;
    }
    u->data = (uint8_t *)b;
    u->cls = (uint8_t)k;
    e->ux_bytes_in_use += sz;
    return 1;
}

static inline void bfo__ux_buf_put(bfo_engine *e, bfo_uxm *u)
{
    if (!u->data)
        return;
    memcpy(u->data, &e->ux_buf_free[u->cls], sizeof(void *));
    e->ux_buf_free[u->cls] = u->data;
    e->ux_bytes_in_use -= (size_t)64 << u->cls;
    u->data = NULL;
}

/* Keeps a frame in entry i: its header, and its payload in a buffer of
 * its own.  0 when no buffer is to be had (the entry is given back). */
static inline int bfo__uxm_fill(bfo_engine *e, int i, int peer, const bfo_frame *f)
{
    bfo_uxm *u = bfo__ux_at(e, i);
    u->peer = peer;
    u->f = *f;
    u->data = NULL;
    if (f->payload_len) {
        if (!bfo__ux_buf_get(e, u, f->payload_len)) {
            if (peer != e->cfg.rank &&
                e->ux_bytes_in_use + bfo__credit_cost(f->payload_len) > e->cfg.unexpected_budget)
                e->over_window++;
            bfo__uxm_put(e, i);
            return 0;
        }
        memcpy(u->data, f->payload, f->payload_len);
    }
    u->f.payload = u->data;
    return 1;
}

/* ------------------------------------------------------------- credits
 *
 * Flow control (docs/engine-design.md, "Credits"): each receiver gives each
 * peer a window of unexpected_budget / (nranks - 1) bytes of payload
 * buffers.  A sender charges an eager payload (a MATCH's, the first bytes
 * of an RNDV) to its window, and sends by rendezvous without first bytes
 * when it does not fit; the receiver counts what it took (matched) and
 * tells the sender a new limit (CREDIT, cumulative: freed + window) once a
 * quarter of the window came free.  So no peer holds more than its window
 * of a receiver's memory, and a sender is never stopped: past its window
 * it only goes by rendezvous.  Sends to this rank itself are not counted. */

/* As sender: charges n bytes of eager payload to peer's window; 0 when
 * they do not fit (nothing is charged). */
static BFO__HOT int bfo__credit_take(bfo_engine *e, int peer, size_t n)
{
    bfo_peer *p = &e->peers[peer];
    const uint64_t c = bfo__credit_cost(n);
    if (peer == e->cfg.rank || !c)
        return 1;
    if (p->credit_used + c > p->credit_limit)
        return 0;
    p->credit_used += c;
    return 1;
}

/* As receiver: tells peer its new limit.  Over the control budget, nothing
 * goes and credit_told stays: the next message taken tries again. */
static inline void bfo__credit_tell(bfo_engine *e, int peer)
{
    bfo_peer *p = &e->peers[peer];
    const uint64_t w = e->credit_window;
    bfo_hdr_credit h;
    bfo_op *op;
    if (p->unreachable) /* gone: it sends nothing more (a CREDIT would fail, and again) */
        return;
    op = bfo__ctl_alloc(e, BFO_FRAG_CREDIT, peer);
    if (!op)
        return;
    h.type = BFO_FRAG_CREDIT;
    h.flags = 0;
    h.limit = p->credit_freed + w < w ? UINT64_MAX : p->credit_freed + w;
    op->hdr_len = bfo_hdr_credit_encode(&h, op->hdr, sizeof op->hdr);
    p->credit_told = p->credit_freed;
    e->stats.credits_sent++;
    bfo__post(e, op);
}

/* As receiver: a MATCH or first RNDV of peer was taken by a receive (or
 * was a cancelled send's): its buffer bytes are free again. */
static BFO__HOT void bfo__credit_return(bfo_engine *e, int peer, const bfo_frame *f)
{
    bfo_peer *p = &e->peers[peer];
    if (peer == e->cfg.rank || f->type == BFO_FRAG_RGET)
        return;
    p->credit_freed += bfo__credit_cost(f->payload_len);
    /* a quarter of the window was taken since the last CREDIT (so some
     * was: credit_freed never falls behind credit_told) */
    if (BFO__UNLIKELY(p->credit_freed - p->credit_told >= e->credit_quarter))
        bfo__credit_tell(e, peer);
}

static inline int bfo__matches(const bfo_request *r, int peer, const bfo_frame *f);

/* A bin's index before the mask: a multiplier that is odd spreads the
 * contexts over every bin (a bijection modulo any power of two), and the
 * ranks of one context then take consecutive bins. */
static inline unsigned bfo__hash(uint32_t ctx, int src)
{
    return ctx * 0x9E3779B1u + (uint32_t)src;
}
static inline bfo__rbin *bfo__rbin_of(const bfo_engine *e, uint32_t ctx, int src)
{
    return src == BFO_ANY_SOURCE ? &e->rbin_any[bfo__hash(ctx, -7) & (unsigned)e->bin_mask]
                                 : &e->rbin_src[bfo__hash(ctx, src) & (unsigned)e->bin_mask];
}

/* A receive joins the posted ones (its bin, in post order). */
static inline void bfo__posted_add(bfo_engine *e, bfo_request *r)
{
    bfo__rbin *b = bfo__rbin_of(e, r->ctx, r->src);
    r->pseq = ++e->post_seq;
    r->next = NULL;
    if (b->tail)
        b->tail->next = r;
    else
        b->head = r;
    b->tail = r;
    e->posted_count++;
    e->posted_any += r->src == BFO_ANY_SOURCE;
}

/* Out of its bin (prev: its predecessor there, or NULL; any: the bin is
 * an ANY_SOURCE one). */
static inline void bfo__rbin_unlink(bfo_engine *e, bfo__rbin *b, bfo_request *prev, bfo_request *r,
                                    int any)
{
    if (prev)
        prev->next = r->next;
    else
        b->head = r->next;
    if (b->tail == r)
        b->tail = prev;
    r->next = NULL;
    e->posted_count--;
    e->posted_any -= any; /* b is an ANY_SOURCE bin (rbin_any) */
}

/* Whether posted receive r takes a message of (ctx, src, tag) from peer. */
static BFO__HOT int bfo__matches_env(const bfo_request *r, int peer, uint32_t ctx, uint32_t src, int tag)
{
    return r->ctx == ctx && (r->peer == BFO_ANY_SOURCE || r->peer == peer) &&
           (r->src == BFO_ANY_SOURCE || (uint32_t)r->src == src) &&
           (r->want_tag == BFO_ANY_TAG || r->want_tag == tag);
}

/* The first posted receive (in post order) that a frame from peer matches,
 * taken out of the posted ones; NULL when none.  Two bins are looked at:
 * the frame's (ctx, src) and its ctx's ANY_SOURCE receives (when there is
 * one at all). */
static BFO__HOT bfo_request *bfo__posted_take(bfo_engine *e, int peer, const bfo_frame *f)
{
    const uint32_t ctx = bfo__frame_ctx(f), src = bfo__frame_src(f);
    const int tag = bfo__frame_tag(f);
    bfo__rbin *bs = bfo__rbin_of(e, ctx, (int)src), *ba;
    bfo_request *rs = NULL, *ps = NULL, *ra = NULL, *pa = NULL, *prev = NULL;
    for (bfo_request *r = bs->head; r; prev = r, r = r->next)
        if (bfo__matches_env(r, peer, ctx, src, tag)) {
            rs = r;
            ps = prev;
            break;
        }
    if (BFO__UNLIKELY(e->posted_any)) {
        ba = bfo__rbin_of(e, ctx, -1);
        prev = NULL;
        for (bfo_request *r = ba->head; r && (!rs || r->pseq < rs->pseq); prev = r, r = r->next)
            if (bfo__matches_env(r, peer, ctx, src, tag)) {
                ra = r;
                pa = prev;
                break;
            }
        if (ra) {
            bfo__rbin_unlink(e, ba, pa, ra, 1);
            return ra;
        }
    }
    if (rs)
        bfo__rbin_unlink(e, bs, ps, rs, 0);
    return rs;
}

/* Appends unexpected message i to its three lists. */
static inline void bfo__ux_push(bfo_engine *e, int i, int *head, int *tail, int which)
{
    bfo_uxm *u = bfo__ux_at(e, i);
    int *nx = which == 0 ? &u->an : which == 1 ? &u->sn : &u->cn;
    int *pv = which == 0 ? &u->ap : which == 1 ? &u->sp : &u->cp;
    *nx = -1;
    *pv = *tail;
    if (*tail >= 0) {
        bfo_uxm *t = bfo__ux_at(e, *tail);
        *(which == 0 ? &t->an : which == 1 ? &t->sn : &t->cn) = i;
    } else {
        *head = i;
    }
    *tail = i;
}
static inline void bfo__ux_pull(bfo_engine *e, int i, int *head, int *tail, int which)
{
    bfo_uxm *u = bfo__ux_at(e, i);
    const int nx = which == 0 ? u->an : which == 1 ? u->sn : u->cn;
    const int pv = which == 0 ? u->ap : which == 1 ? u->sp : u->cp;
    if (pv >= 0) {
        bfo_uxm *p = bfo__ux_at(e, pv);
        *(which == 0 ? &p->an : which == 1 ? &p->sn : &p->cn) = nx;
    } else {
        *head = nx;
    }
    if (nx >= 0) {
        bfo_uxm *n = bfo__ux_at(e, nx);
        *(which == 0 ? &n->ap : which == 1 ? &n->sp : &n->cp) = pv;
    } else {
        *tail = pv;
    }
}
static inline bfo__ubin *bfo__ubin_src(const bfo_engine *e, uint32_t ctx, int src)
{
    return &e->ubin_src[bfo__hash(ctx, src) & (unsigned)e->bin_mask];
}
static inline bfo__ubin *bfo__ubin_ctx(const bfo_engine *e, uint32_t ctx)
{
    return &e->ubin_ctx[bfo__hash(ctx, -7) & (unsigned)e->bin_mask];
}

/* Unexpected message i joins the queue: all, its (ctx, src) bin, its ctx bin. */
static inline void bfo__ux_link(bfo_engine *e, int i)
{
    const bfo_frame *f = &bfo__ux_at(e, i)->f;
    bfo__ubin *bs = bfo__ubin_src(e, bfo__frame_ctx(f), (int)bfo__frame_src(f));
    bfo__ubin *bc = bfo__ubin_ctx(e, bfo__frame_ctx(f));
    bfo__ux_push(e, i, &e->ux_head, &e->ux_tail, 0);
    bfo__ux_push(e, i, &bs->head, &bs->tail, 1);
    bfo__ux_push(e, i, &bc->head, &bc->tail, 2);
    if (BFO__UNLIKELY(e->nrevoked)) /* it may be on one: the next progress sees */
        e->revoke_sweep = 1;
}

/* ... and leaves it. */
static inline void bfo__ux_unlink(bfo_engine *e, int i)
{
    const bfo_frame *f = &bfo__ux_at(e, i)->f;
    bfo__ubin *bs = bfo__ubin_src(e, bfo__frame_ctx(f), (int)bfo__frame_src(f));
    bfo__ubin *bc = bfo__ubin_ctx(e, bfo__frame_ctx(f));
    bfo__ux_pull(e, i, &e->ux_head, &e->ux_tail, 0);
    bfo__ux_pull(e, i, &bs->head, &bs->tail, 1);
    bfo__ux_pull(e, i, &bc->head, &bc->tail, 2);
}

/* The oldest unexpected message that receive r (or a probe shaped as one)
 * would take, or -1: a scan of its (ctx, src) bin, or of its ctx's bin for
 * BFO_ANY_SOURCE. */
static inline int bfo__ux_match(const bfo_engine *e, const bfo_request *r)
{
    if (r->src == BFO_ANY_SOURCE) {
        for (int i = bfo__ubin_ctx(e, r->ctx)->head; i >= 0; i = bfo__ux_at(e, i)->cn)
            if (bfo__matches(r, bfo__ux_at(e, i)->peer, &bfo__ux_at(e, i)->f))
                return i;
    } else {
        for (int i = bfo__ubin_src(e, r->ctx, r->src)->head; i >= 0; i = bfo__ux_at(e, i)->sn)
            if (bfo__matches(r, bfo__ux_at(e, i)->peer, &bfo__ux_at(e, i)->f))
                return i;
    }
    return -1;
}

static inline int bfo__matches(const bfo_request *r, int peer, const bfo_frame *f)
{
    return bfo__matches_env(r, peer, bfo__frame_ctx(f), bfo__frame_src(f), bfo__frame_tag(f));
}

/* After an RNDV or RGET matched: the receiver's choice of protocol.  One
 * that waited in the unexpected queue while its sender was given up fails:
 * the rest of the message never comes (and nothing would fail it later). */
static inline void bfo__recv_chosen(bfo_engine *e, bfo_request *r)
{
    if (!r->complete && (r->cs == BFO_RECV_ST_RNDV_MATCHED || r->cs == BFO_RECV_ST_RGET_MATCHED)) {
        bfo__req_feed(e, r, e->peers[r->peer].unreachable ? bfo__gone_event(e, r)
                                                           : bfo__recv_choose(e, r),
                      NULL);
    }
}

/* A posted receive takes a message: the first event of its machine. */
static BFO__HOT void bfo__recv_take(bfo_engine *e, bfo_request *r, int peer, const bfo_frame *f)
{
    r->peer = peer;
    r->ctx = bfo__frame_ctx(f);
#ifndef BFO_NO_FAST_PATH
    /* An eager message: POSTED --MATCH_RCVD--> COMPLETE / deliver_match, a
     * fast path (docs/engine-design.md, "Fast paths"); complete, the
     * request takes no fact and chooses no protocol. */
    if (BFO__LIKELY(f->type == BFO_FRAG_MATCH && r->cs == BFO_RECV_ST_POSTED)) {
        bfo__fsm_shortcut(&bfo_recv_machine, &r->cs, BFO_RECV_ST_POSTED, BFO_EV_MATCH_RCVD,
                          BFO_RECV_ST_COMPLETE, BFO_RECV_ACT_DELIVER_MATCH, e->trace, r);
        bfo__act_deliver_match(e, r, f);
        return;
    }
#endif
    const bfo__input in = { f, peer, 0, 0, 0 };
    bfo__recv_feed(e, r, f->type == BFO_FRAG_MATCH  ? BFO_EV_MATCH_RCVD
                        : f->type == BFO_FRAG_RNDV ? BFO_EV_RNDV_RCVD
                                                   : BFO_EV_RGET_RCVD,
                   &in);
    bfo__recv_chosen(e, r);
}

/* The message is next in its (context, peer) order: match it or queue it.
 * `held` is the buffer that already holds it (it waited in the out-of-order
 * list): it moves to the unexpected queue as it is, so that delivery never
 * needs a second buffer and cannot fail.  A frame just arrived (held < 0)
 * needs a free buffer when no receive matches: BFO_ERR_AGAIN without one. */
static BFO__HOT int bfo__deliver_in_order(bfo_engine *e, int peer, const bfo_frame *f, int held)
{
    if (f->flags & BFO_FLAG_CANCEL) { /* a cancelled send: its sequence, nothing to match */
        if (held >= 0)
            bfo__uxm_put(e, held);
        return BFO_OK;
    }
    bfo_request *r = e->posted_count ? bfo__posted_take(e, peer, f) : NULL;
    if (r) {
        bfo__recv_take(e, r, peer, f);
        bfo__credit_return(e, peer, f);
        if (held >= 0)
            bfo__uxm_put(e, held);
        return BFO_OK;
    }
    int i = held;
    if (i < 0) {
        i = bfo__uxm_take(e);
        if (i < 0 || !bfo__uxm_fill(e, i, peer, f))
            return BFO_ERR_AGAIN;
    }
    bfo__ux_link(e, i);
    return BFO_OK;
}

static inline uint64_t bfo__frame_seq(const bfo_frame *f)
{
    return f->type == BFO_FRAG_MATCH  ? f->h.match.seq
           : f->type == BFO_FRAG_RNDV ? f->h.rndv.seq
                                      : f->h.rget.seq;
}

/* Messages waiting in the peers' out-of-order lists (bfo_net_dump, tests). */
static inline int bfo__ooo_count(const bfo_engine *e)
{
    int n = 0;
    for (int k = 0; k < e->cfg.nranks; k++)
        for (int i = e->peers[k].ooo_head; i >= 0; i = bfo__ux_at(e, i)->next)
            n++;
    return n;
}

/* MATCH or first RNDV: the sequence window, then in-order delivery.  The
 * peer's out-of-order list is sorted by sequence: a frame ahead joins it at
 * its place (at the tail, in O(1), whenever it is the newest: always with
 * two rails, each of them in order), and the messages it held go out from
 * its head, in O(1) each.  (One list of every peer, newest first, scanned
 * whole for each frame and each message let out: 100,000 messages ahead
 * on one of two rails took 12 s in one progress call, and the peer's
 * probes waited behind them.) */
static BFO__HOT int bfo__on_message(bfo_engine *e, int peer, const bfo_frame *f)
{
    bfo_peer *p = &e->peers[peer];
    const uint64_t seq = bfo__frame_seq(f);
    /* a peer's eager limit may be larger than ours (bfo_net's default follows
     * the rails of each rank): we take what our transports carry, the larger
     * of eager_limit and frag_size; its credits bound what it holds here */
    if (f->payload_len > (f->type == BFO_FRAG_RGET ? 4 * BFO_MAX_RAILS : e->msg_max) || seq == 0)
        return BFO_ERR_PROTOCOL;
    if (seq < p->recv_seq) {
        e->stats.duplicates_dropped++;
        return BFO_OK;
    }
    if (seq > p->recv_seq) { /* ahead: wait in the out-of-order list (once) */
        int prev = -1, at = -1;
        if (p->ooo_tail >= 0 && bfo__frame_seq(&bfo__ux_at(e, p->ooo_tail)->f) < seq)
            prev = p->ooo_tail; /* the newest: at the tail */
        else
            for (at = p->ooo_head; at >= 0; prev = at, at = bfo__ux_at(e, at)->next) {
                const uint64_t s = bfo__frame_seq(&bfo__ux_at(e, at)->f);
                if (s == seq) {
                    e->stats.duplicates_dropped++;
                    return BFO_OK;
                }
                if (s > seq)
                    break;
            }
        int i = bfo__uxm_take(e);
        if (i < 0 || !bfo__uxm_fill(e, i, peer, f))
            return BFO_ERR_AGAIN;
        bfo__ux_at(e, i)->next = at;
        if (prev >= 0)
            bfo__ux_at(e, prev)->next = i;
        else
            p->ooo_head = i;
        if (at < 0)
            p->ooo_tail = i;
        return BFO_OK;
    }
    int rc = bfo__deliver_in_order(e, peer, f, -1);
    if (rc != BFO_OK)
        return rc;
    p->recv_seq++;
    while (p->ooo_head >= 0) { /* the out-of-order list may go on */
        const int i = p->ooo_head;
        bfo_uxm *u = bfo__ux_at(e, i);
        if (bfo__frame_seq(&u->f) != p->recv_seq)
            break;
        p->ooo_head = u->next; /* out of the list first: the buffer moves on as it is */
        if (p->ooo_head < 0)
            p->ooo_tail = -1;
        bfo__deliver_in_order(e, peer, &u->f, i); /* cannot fail with its own buffer */
        p->recv_seq++;
    }
    return BFO_OK;
}

/* --------------------------------------------------------------- frames */

/* The live request of kind `want` that a handle names, checked against its
 * restart sequence.  With newer_is_new (NOTIFY, restarted RNDV) a newer rseq
 * is a new message and an equal one a duplicate; otherwise (replies and
 * data) only an equal rseq is current.  Sets *evk to BFO_EVK_RCVD or
 * BFO_EVK_DUP_RCVD; returns NULL when the message is stale. */
static inline bfo_request *bfo__lookup(bfo_engine *e, int peer, bfo_handle h, int want,
                                       uint16_t rseq, int newer_is_new, int *evk)
{
    bfo_request *r = bfo__handle_named(e, h);
    int d;
    if (!r || r->kind != want || r->peer != peer)
        return NULL;
    d = bfo_rseq_cmp(rseq, r->rseq);
    if (newer_is_new ? d < 0 : d != 0)
        return NULL;
    *evk = d > 0 || !newer_is_new ? BFO_EVK_RCVD : BFO_EVK_DUP_RCVD;
    return r;
}

/* A restarted RNDV or RGET describes the message its receive took first:
 * the same source, context, tag, sequence, length and sender's request (a
 * restart sends the same message again; only the protocol may change). */
static inline int bfo__same_message(const bfo_request *r, int peer, const bfo_frame *f)
{
    const int rget = f->type == BFO_FRAG_RGET;
    return peer == r->peer && bfo__frame_src(f) == (uint32_t)r->source &&
           bfo__frame_ctx(f) == r->ctx && bfo__frame_tag(f) == r->tag &&
           bfo__frame_seq(f) == r->seq &&
           (rget ? f->h.rget.msg_len : f->h.rndv.msg_len) == (uint64_t)r->length &&
           bfo_handle_eq(rget ? f->h.rget.sreq : f->h.rndv.sreq, r->remote);
}

/* Answers a NOTIFY for a request that is gone; BFO_ERR_AGAIN when the
 * control budget is spent (the transport offers the NOTIFY again later). */
static inline int bfo__nack_from(bfo_engine *e, int peer, const bfo_frame *f)
{
    bfo_hdr_restart h = f->h.restart;
    bfo_op *op = bfo__ctl_alloc(e, BFO_FRAG_RESTARTNACK, peer);
    if (!op)
        return BFO_ERR_AGAIN;
    h.type = BFO_FRAG_RESTARTNACK; /* the rest echoes the NOTIFY */
    op->hdr_len = bfo_hdr_restart_encode(&h, op->hdr, sizeof op->hdr);
    bfo__post(e, op);
    return BFO_ERR_STALE;
}

/* One function per fragment type: bfo__rcvd_<TYPE>(e, peer, rail, f, kind),
 * a frame of that type arrived from peer on rail and parsed.  It finds what
 * the frame is for, drops what is stale (BFO_ERR_STALE), refuses what breaks
 * the protocol (BFO_ERR_PROTOCOL), tells a duplicate apart (*kind =
 * BFO_EVK_DUP_RCVD) and feeds the machine; BFO_OK when taken.
 * bfo_engine_frame calls them through BFO_FRAGMENTS, so a fragment type of
 * spec/alphabet.tab without its function here does not build ("implicit
 * declaration of function 'bfo__rcvd_NEWTYPE'"). */

static BFO__HOT int bfo__rcvd_MATCH(bfo_engine *e, int peer, int rail, const bfo_frame *f,
                                    int *kind)
{
    (void)rail;
    (void)kind;
    return bfo__on_message(e, peer, f);
}

/* RNDV or RGET: a first one is a message to match; a restarted one names
 * its receive and describes the message that receive took. */
static inline int bfo__rcvd_rzv(bfo_engine *e, int peer, const bfo_frame *f, int *kind)
{
    const int rget = f->type == BFO_FRAG_RGET;
    const uint64_t msg_len = rget ? f->h.rget.msg_len : f->h.rndv.msg_len;
    bfo_request *r;
    if (rget ? !msg_len : msg_len < f->payload_len)
        return BFO_ERR_PROTOCOL;
    if (!(f->flags & BFO_FLAG_RESTART))
        return bfo__on_message(e, peer, f);
    r = bfo__lookup(e, peer, rget ? f->h.rget.dreq : f->h.rndv.dreq, BFO_REQ_RECV,
                    rget ? f->h.rget.rseq : f->h.rndv.rseq, 1, kind);
    if (!r)
        return BFO_ERR_STALE;
    if (!bfo__same_message(r, peer, f))
        return BFO_ERR_PROTOCOL;
    bfo__feed_frame(e, r, bfo_frag_event(f->type, *kind), f, peer);
    bfo__recv_chosen(e, r);
    return BFO_OK;
}

static inline int bfo__rcvd_RNDV(bfo_engine *e, int peer, int rail, const bfo_frame *f, int *kind)
{
    (void)rail;
    return bfo__rcvd_rzv(e, peer, f, kind);
}

static inline int bfo__rcvd_RGET(bfo_engine *e, int peer, int rail, const bfo_frame *f, int *kind)
{
    (void)rail;
    return bfo__rcvd_rzv(e, peer, f, kind);
}

/* The receiver asks: write this range there. */
static inline int bfo__rcvd_PUT(bfo_engine *e, int peer, int rail, const bfo_frame *f, int *kind)
{
    bfo_request *r = bfo__lookup(e, peer, f->h.put.sreq, BFO_REQ_SEND, f->h.put.rseq, 0, kind);
    (void)rail;
    if (!r)
        return BFO_ERR_STALE;
    if (!r->reg || !f->h.put.length || f->h.put.offset > r->cap ||
        f->h.put.length > r->cap - f->h.put.offset)
        return BFO_ERR_PROTOCOL;
    bfo__req_take_keys(r, f->payload, f->payload_len); /* the receiver's, per rail */
    if (r->cs == BFO_SEND_ST_RNDV_SENT) { /* the first PUT: the RNDV arrived */
        r->remote = f->h.put.dreq;
        r->done_bytes = r->first;
        r->counting = 1;
    }
    bfo__feed_frame(e, r, BFO_EV_PUT_RCVD, f, peer);
    return BFO_OK;
}

/* A sender's FIN after a write (PUT: one slot is written), or a receiver's
 * after its reads (GET: the whole message). */
static inline int bfo__rcvd_FIN(bfo_engine *e, int peer, int rail, const bfo_frame *f, int *kind)
{
    bfo_request *r = bfo__handle_named(e, f->h.fin.dreq);
    (void)rail;
    if (!r || r->peer != peer || bfo_rseq_cmp(f->h.fin.rseq, r->rseq) != 0)
        return BFO_ERR_STALE;
    if (r->kind == BFO_REQ_SEND) { /* GET: the receiver read it all */
        if (f->h.fin.offset != 0 || f->h.fin.length != r->cap)
            return BFO_ERR_PROTOCOL;
        *kind = r->counting && r->done_bytes >= r->cap ? BFO_EVK_DUP_RCVD : BFO_EVK_RCVD;
    } else { /* PUT: one slot is written */
        uint64_t off, len;
        uint32_t s = f->h.fin.slot;
        if (s >= r->slot_next)
            return BFO_ERR_PROTOCOL;
        bfo__slot_range(e, r, s, &off, &len);
        if (f->h.fin.offset != off || f->h.fin.length != len)
            return BFO_ERR_PROTOCOL;
        *kind = s < r->slot_base || ((r->slot_mask >> (s - r->slot_base)) & 1) ? BFO_EVK_DUP_RCVD
                                                                              : BFO_EVK_RCVD;
    }
    bfo__feed_frame(e, r, bfo_frag_event(f->type, *kind), f, peer);
    return BFO_OK;
}

static inline int bfo__rcvd_ACK(bfo_engine *e, int peer, int rail, const bfo_frame *f, int *kind)
{
    bfo_request *r = bfo__lookup(e, peer, f->h.ack.sreq, BFO_REQ_SEND, f->h.ack.rseq, 0, kind);
    (void)rail;
    if (!r)
        return BFO_ERR_STALE;
    if (f->h.ack.offset > r->cap)
        return BFO_ERR_PROTOCOL;
    if (r->cs == BFO_SEND_ST_RNDV_SENT || r->cs == BFO_SEND_ST_RGET_SENT) {
        r->remote = f->h.ack.dreq;
        r->next_off = (size_t)f->h.ack.offset;
        r->done_bytes = (size_t)f->h.ack.offset;
        r->counting = 1;
    }
    bfo__feed_frame(e, r, BFO_EV_ACK_RCVD, f, peer);
    return BFO_OK;
}

static inline int bfo__rcvd_FRAG(bfo_engine *e, int peer, int rail, const bfo_frame *f, int *kind)
{
    bfo_request *r = bfo__lookup(e, peer, f->h.frag.dreq, BFO_REQ_RECV, f->h.frag.rseq, 0, kind);
    (void)rail;
    if (!r)
        return BFO_ERR_STALE;
    if (f->h.frag.offset + f->payload_len > r->length)
        return BFO_ERR_PROTOCOL;
    bfo__feed_frame(e, r, BFO_EV_FRAG_RCVD, f, peer);
    return BFO_OK;
}

static inline int bfo__rcvd_NOTIFY(bfo_engine *e, int peer, int rail, const bfo_frame *f, int *kind)
{
    bfo_request *r = bfo__handle_named(e, f->h.restart.dreq);
    (void)rail;
    if (!r || r->kind != BFO_REQ_RECV) /* complete and gone: NACK */
        return bfo__nack_from(e, peer, f);
    r = bfo__lookup(e, peer, f->h.restart.dreq, BFO_REQ_RECV, f->h.restart.rseq, 1, kind);
    if (!r)
        return BFO_ERR_STALE;
    bfo__feed_frame(e, r, bfo_frag_event(f->type, *kind), f, peer);
    return BFO_OK;
}

/* RESTARTACK, RESTARTNACK, RECVERRNOTIFY: the receiver answers the sender. */
static inline int bfo__rcvd_reply(bfo_engine *e, int peer, const bfo_frame *f, int *kind)
{
    bfo_request *r = bfo__handle_named(e, f->h.restart.sreq);
    if (!r || r->kind != BFO_REQ_SEND || r->peer != peer)
        return BFO_ERR_STALE;
    if (f->type == BFO_FRAG_RECVERRNOTIFY) { /* the receiver's rseq: not older */
        if (bfo_rseq_cmp(f->h.restart.rseq, r->rseq) < 0)
            return BFO_ERR_STALE;
    } else if (!bfo__lookup(e, peer, f->h.restart.sreq, BFO_REQ_SEND, f->h.restart.rseq, 0, kind)) {
        return BFO_ERR_STALE;
    }
    if (f->type == BFO_FRAG_RECVERRNOTIFY && bfo_handle_is_null(r->remote))
        r->remote = f->h.restart.dreq;
    bfo__feed_frame(e, r, bfo_frag_event(f->type, BFO_EVK_RCVD), f, peer);
    return BFO_OK;
}

static inline int bfo__rcvd_RESTARTACK(bfo_engine *e, int peer, int rail, const bfo_frame *f,
                                       int *kind)
{
    (void)rail;
    return bfo__rcvd_reply(e, peer, f, kind);
}

static inline int bfo__rcvd_RESTARTNACK(bfo_engine *e, int peer, int rail, const bfo_frame *f,
                                        int *kind)
{
    (void)rail;
    return bfo__rcvd_reply(e, peer, f, kind);
}

static inline int bfo__rcvd_RECVERRNOTIFY(bfo_engine *e, int peer, int rail, const bfo_frame *f,
                                          int *kind)
{
    (void)rail;
    return bfo__rcvd_reply(e, peer, f, kind);
}

/* BROKEN, PROBE, PROBEACK: to the rail machine, of the rail the BROKEN
 * names or of the rail the probe came on. */
static inline int bfo__rcvd_railctl(bfo_engine *e, int peer, int rail, const bfo_frame *f)
{
    int about = f->h.railctl.rail;
    if (about >= e->cfg.nrails)
        return BFO_ERR_PROTOCOL;
    if (f->type == BFO_FRAG_BROKEN &&
        (int32_t)(f->h.railctl.epoch - e->peers[peer].rail[about].epoch) < 0)
        return BFO_ERR_STALE; /* about an earlier life of the rail */
    bfo__rail_step(e, peer, f->type == BFO_FRAG_BROKEN ? about : rail,
                   bfo_frag_event(f->type, BFO_EVK_RCVD), f);
    if (f->type == BFO_FRAG_PROBEACK && f->h.railctl.nonce == e->peers[peer].rail[rail].probe_nonce)
        bfo__probe_answered(e, &e->peers[peer].rail[rail]);
    else if (f->type == BFO_FRAG_PROBEACK && e->peers[peer].rail[rail].meas_sent &&
             (f->h.railctl.nonce | 1) == e->peers[peer].rail[rail].meas_nonce)
        bfo__measured(e, peer, rail, f->h.railctl.nonce);
    return BFO_OK;
}

static inline int bfo__rcvd_BROKEN(bfo_engine *e, int peer, int rail, const bfo_frame *f, int *kind)
{
    (void)kind;
    return bfo__rcvd_railctl(e, peer, rail, f);
}

static inline int bfo__rcvd_PROBE(bfo_engine *e, int peer, int rail, const bfo_frame *f, int *kind)
{
    (void)kind;
    return bfo__rcvd_railctl(e, peer, rail, f);
}

/* RELAY, RELAYACK, REACH: to the rail machine of the rail they came on
 * (take_relay, take_relayack, take_reach: bfo__relay_take ...).  A frame
 * passed on to this rank returns what its own dispatch did (BFO_ERR_AGAIN:
 * the transport offers the RELAY again later, as any frame). */
static inline int bfo__rcvd_RELAY(bfo_engine *e, int peer, int rail, const bfo_frame *f, int *kind)
{
    (void)kind;
    e->relay_rc = BFO_ERR_PROTOCOL;
    bfo__rail_step(e, peer, rail, BFO_EV_RELAY_RCVD, f);
    return e->relay_rc;
}
static inline int bfo__rcvd_RELAYACK(bfo_engine *e, int peer, int rail, const bfo_frame *f, int *kind)
{
    (void)kind;
    bfo__rail_step(e, peer, rail, BFO_EV_RELAYACK_RCVD, f);
    return BFO_OK;
}
static inline int bfo__rcvd_REACH(bfo_engine *e, int peer, int rail, const bfo_frame *f, int *kind)
{
    (void)kind;
    bfo__rail_step(e, peer, rail, BFO_EV_REACH_RCVD, f);
    return BFO_OK;
}

/* CREDIT: to the rail machine of the rail it came on (take_credit). */
static inline int bfo__rcvd_CREDIT(bfo_engine *e, int peer, int rail, const bfo_frame *f, int *kind)
{
    (void)kind;
    bfo__rail_step(e, peer, rail, BFO_EV_CREDIT_RCVD, f);
    return BFO_OK;
}

static inline int bfo__rcvd_PROBEACK(bfo_engine *e, int peer, int rail, const bfo_frame *f,
                                     int *kind)
{
    (void)kind;
    return bfo__rcvd_railctl(e, peer, rail, f);
}

/* BYE: the peer leaves.  About the peer, not the rail it came on: its first
 * BYE takes every rail of it to LEFT (BYE_RCVD: part), makes it gone for
 * the hot paths (BFO__PARTED) and fails what it no longer answers (sends to
 * it, receives it matched: their operations in flight complete first);
 * receives naming it wait for what it sent before the BYE (left_seq) and
 * fail once that came (the peer machine's OWED_RCVD: close_out), or
 * unreachable_grace later (GRACE_EXPIRED, in
 * bfo_engine_progress).  The BYE of its other rails is a duplicate. */
static BFO__COLD int bfo__rcvd_BYE(bfo_engine *e, int peer, int rail, const bfo_frame *f, int *kind)
{
    bfo_peer *p = &e->peers[peer];
    (void)rail;
    if (peer == e->cfg.rank) /* never sent to itself */
        return BFO_ERR_PROTOCOL;
    if (p->left) {
        *kind = BFO_EVK_DUP_RCVD;
        return BFO_OK;
    }
    p->left_seq = f->h.bye.seq;
    p->left_at = e->now ? e->now : 1;
    bfo__peer_step(e, peer, BFO_PEER_EV_BYE_RCVD); /* part */
    if (p->recv_seq > p->left_seq)
        bfo__peer_step(e, peer, BFO_PEER_EV_OWED_RCVD); /* close_out */
    return BFO_OK;
}

/* A parsed frame to the bfo__rcvd_<TYPE> of its type. */
static inline int bfo__dispatch(bfo_engine *e, int peer, int rail, const bfo_frame *f, int *kind)
{
    switch (f->type) { /* one case per fragment type, each calling its bfo__rcvd_<TYPE> */
#define BFO__RCVD(name, code, layout, payload, dedup) \
    case BFO_FRAG_##name: return bfo__rcvd_##name(e, peer, rail, f, kind);
        BFO_FRAGMENTS(BFO__RCVD)
#undef BFO__RCVD
    default: /* bfo_frame_parse takes no other type */
        return BFO_ERR_PROTOCOL;
    }
}

/* Messages of this rank to itself: each is taken as a frame from peer
 * `rank` (matching, ordering, rendezvous as for any peer; no rail), then
 * completes as delivered.  One that finds no buffer (BFO_ERR_AGAIN: the
 * unexpected store is full) waits, first in line, for the next entry
 * point. */
static inline void bfo__run_self(bfo_engine *e)
{
    e->self_busy = 1;
    while (e->self_head >= 0) {
        bfo_op *op = bfo__op_at(e, e->self_head);
        bfo_frame f;
        int kind = BFO_EVK_RCVD, rc = bfo_frame_decode(&f, op->hdr, op->hdr_len);
        if (rc == BFO_OK) {
            f.payload = (const uint8_t *)op->payload;
            f.payload_len = op->payload_len;
            rc = bfo_frame_validate(&f);
        }
        if (rc == BFO_OK)
            rc = bfo__dispatch(e, e->cfg.rank, 0, &f, &kind);
        if (rc == BFO_ERR_AGAIN)
            break;
        e->self_head = op->next;
        if (e->self_head < 0)
            e->self_tail = -1;
        bfo__deferred_note(e);
        bfo__op_done(e, op, 1);
        if (e->fail_head >= 0)
            bfo__run_failed_list(e);
    }
    e->self_busy = 0;
}

/* 1 for a message that takes a sequence number: MATCH, a first RNDV or RGET. */
static inline int bfo__frame_is_message(const bfo_frame *f)
{
    return f->type == BFO_FRAG_MATCH ||
           ((f->type == BFO_FRAG_RNDV || f->type == BFO_FRAG_RGET) && !(f->flags & BFO_FLAG_RESTART));
}

/* After a frame was dispatched: the failed list run, the drop counted. */
static inline int bfo__frame_done(bfo_engine *e, int rc, int kind)
{
    bfo__run_failed(e);
    if (rc == BFO_OK && kind == BFO_EVK_DUP_RCVD)
        e->stats.duplicates_dropped++;
    if (rc == BFO_ERR_STALE)
        e->stats.stale_dropped++;
    else if (rc == BFO_ERR_PROTOCOL)
        e->stats.protocol_violations++;
    return rc;
}

/* bfo_engine_frame for a peer that is gone.  Given up: refused (see
 * bfo__peer_unreachable).  It said BYE, or this side left (BFO__PARTED):  Rail control, CREDIT and BYE go to the rail machine
 * (LEFT: a PROBE is answered).  Once this side left, nothing else is taken
 * (stale).  From a peer that left: a message beyond its BYE's sequence is
 * a protocol violation, one up to it was sent before the BYE (rails
 * reorder) and is taken, unless the peer was closed out meanwhile (stale);
 * anything else is taken as from any peer (its request may be gone:
 * stale). */
static BFO__COLD int bfo__frame_gone(bfo_engine *e, int peer, int rail, bfo_frame *fp, const uint8_t *buf,
                                     size_t len)
{
    bfo_peer *p = &e->peers[peer];
    bfo_frame f;
    int kind = BFO_EVK_RCVD, rc;
    if (p->unreachable == BFO__GIVEN_UP) { /* for good: see bfo__peer_unreachable */
        e->stats.unreachable_frames++;
        return BFO_ERR_PEER_UNREACHABLE;
    }
    if (fp) /* parsed already (bfo_engine_frame_placed) */
        f = *fp;
    else if ((rc = bfo_frame_parse(&f, buf, len)) != BFO_OK) {
        e->stats.malformed_frames++;
        return rc;
    }
    p->rail[rail].last_rx = e->now;
    if (f.type == BFO_FRAG_PROBE || f.type == BFO_FRAG_PROBEACK || f.type == BFO_FRAG_BROKEN ||
        f.type == BFO_FRAG_CREDIT || f.type == BFO_FRAG_BYE)
        rc = BFO_OK;
    else if (e->left)
        rc = BFO_ERR_STALE;
    else if (bfo__frame_is_message(&f))
        rc = bfo__frame_seq(&f) > p->left_seq                                        ? BFO_ERR_PROTOCOL
             : p->left == BFO__LEFT_DONE && bfo__frame_seq(&f) >= p->recv_seq ? BFO_ERR_STALE
                                                                              : BFO_OK;
    if (rc == BFO_OK)
        rc = bfo__dispatch(e, peer, rail, &f, &kind);
    if (p->left == BFO__LEFT_OWED && p->recv_seq > p->left_seq && !e->left)
        bfo__peer_step(e, peer, BFO_PEER_EV_OWED_RCVD); /* the last of what it sent before its BYE came */
    return bfo__frame_done(e, rc, kind);
}

/* bfo_engine_frame: see THE API near the top. */
static inline int bfo_engine_frame(bfo_engine *e, int peer, int rail, const uint8_t *buf,
                                   size_t len, uint64_t now)
{
    bfo_frame f;
    int rc = BFO_OK, kind = BFO_EVK_RCVD;
    if (!bfo__in_range(peer, e->cfg.nranks) || peer == e->cfg.rank ||
        !bfo__in_range(rail, e->cfg.nrails))
        return BFO_ERR_INVALID;
    if (now > e->now)
        e->now = now;
    if (e->peers[peer].unreachable) /* given up, or it said BYE, or this side left */
        return bfo__frame_gone(e, peer, rail, NULL, buf, len);
    e->peers[peer].rail[rail].in_bytes += len;
    if (BFO__LIKELY(bfo__parse_plain_match(&f, buf, len))) { /* the eager message */
        e->peers[peer].rail[rail].last_rx = e->now;
        return bfo__frame_done(e, bfo__rcvd_MATCH(e, peer, rail, &f, &kind), kind);
    }
    rc = bfo_frame_parse(&f, buf, len);
    if (rc != BFO_OK) {
        e->stats.malformed_frames++;
        return rc;
    }
    e->peers[peer].rail[rail].last_rx = e->now;
    rc = bfo__dispatch(e, peer, rail, &f, &kind);
    return bfo__frame_done(e, rc, kind);
}

/* The receive a placement names, while it takes FRAGs into a contiguous
 * buffer (bfo_engine_place), else NULL. */
static inline bfo_request *bfo__placed_req(const bfo_engine *e, bfo_handle h, uint16_t rseq)
{
    bfo_request *r = bfo__handle_named(e, h);
    if (!r || r->kind != BFO_REQ_RECV || r->complete || !r->buf || bfo_rseq_cmp(rseq, r->rseq) != 0 ||
        (r->cs != BFO_RECV_ST_ACK_SENT && r->cs != BFO_RECV_ST_RECVERR_SENT))
        return NULL;
    return r;
}

/* bfo_engine_place: see THE API near the top. */
static inline uint8_t *bfo_engine_place(const bfo_engine *e, int peer, const uint8_t *hdr, size_t have,
                                        size_t frame_len, size_t *hdr_len, bfo_place_ticket *ticket)
{
    bfo_frame f;
    bfo_request *r;
    if (!bfo__in_range(peer, e->cfg.nranks) || peer == e->cfg.rank || e->peers[peer].unreachable ||
        have < BFO_HDR_FRAG_SIZE || hdr[0] != BFO_FRAG_FRAG || frame_len <= BFO_HDR_FRAG_SIZE ||
        bfo_frame_decode(&f, hdr, BFO_HDR_FRAG_SIZE) != BFO_OK)
        return NULL;
    f.payload = hdr; /* any non-null pointer: validated for its length only */
    f.payload_len = frame_len - BFO_HDR_FRAG_SIZE;
    if (bfo_frame_validate(&f) != BFO_OK)
        return NULL;
    r = bfo__placed_req(e, f.h.frag.dreq, f.h.frag.rseq);
    if (!r || r->peer != peer || f.h.frag.offset > r->cap || f.payload_len > r->cap - f.h.frag.offset ||
        f.h.frag.offset + f.payload_len > r->length)
        return NULL;
    *hdr_len = BFO_HDR_FRAG_SIZE;
    ticket->req = f.h.frag.dreq;
    ticket->rseq = f.h.frag.rseq;
    return (uint8_t *)r->buf + f.h.frag.offset;
}

/* bfo_engine_place_ok: see THE API near the top. */
static inline int bfo_engine_place_ok(const bfo_engine *e, bfo_place_ticket ticket)
{
    return bfo__placed_req(e, ticket.req, ticket.rseq) != NULL;
}

/* bfo_engine_frame_placed: see THE API near the top. */
static inline int bfo_engine_frame_placed(bfo_engine *e, int peer, int rail, const uint8_t *hdr,
                                          size_t hdr_len, const uint8_t *payload, size_t payload_len,
                                          uint64_t now)
{
    bfo_frame f;
    int rc, kind = BFO_EVK_RCVD;
    if (!bfo__in_range(peer, e->cfg.nranks) || peer == e->cfg.rank || !bfo__in_range(rail, e->cfg.nrails) ||
        hdr_len != BFO_HDR_FRAG_SIZE || hdr[0] != BFO_FRAG_FRAG || !payload)
        return BFO_ERR_INVALID;
    if (now > e->now)
        e->now = now;
    rc = bfo_frame_decode(&f, hdr, hdr_len);
    if (rc == BFO_OK) {
        f.payload = payload;
        f.payload_len = payload_len;
        rc = bfo_frame_validate(&f);
    }
    if (rc != BFO_OK) {
        e->stats.malformed_frames++;
        return rc;
    }
    if (e->peers[peer].unreachable) /* placed before its BYE (or its loss) was taken */
        return bfo__frame_gone(e, peer, rail, &f, NULL, 0);
    e->peers[peer].rail[rail].last_rx = e->now;
    e->peers[peer].rail[rail].in_bytes += hdr_len + payload_len;
    rc = bfo__dispatch(e, peer, rail, &f, &kind);
    return bfo__frame_done(e, rc, kind);
}

/* ------------------------------------------------------------------ API */

/* Field by field rather than a memset of the whole request: an eager message
 * never touches the rendezvous fields at the end, and a receive sets them
 * when it takes a rendezvous (bfo__accept_rzv), a send when it registers
 * its buffer (bfo__req_register, then reg says they are valid). */
static inline void bfo__req_init(bfo_request *r, int kind, void *buf, size_t cap,
                                 const bfo_envelope *env)
{
    r->status = BFO_OK;
    r->source = 0;
    r->tag = 0;
    r->length = 0;
    r->kind = kind;
    r->peer = env->peer;
    r->ctx = env->ctx;
    r->src = env->src;
    r->want_tag = env->tag;
    r->held = -1;
    r->buf = (char *)buf;
    r->cap = cap;
    /* complete, counts, rseq, flags, seq, offsets, remote (the null
     * handle: 0, 0) and next: zero, in a few wide stores */
    memset(&r->complete, 0, offsetof(bfo_request, pseq) - offsetof(bfo_request, complete));
}

/* A new request to a peer that is gone: it fails at once; its status
 * (bfo__gone_status) is what the call returns. */
static BFO__COLD int bfo__gone_feed(bfo_engine *e, bfo_request *r)
{
    bfo__req_gone(e, r);
    return r->complete ? r->status : BFO_ERR_PEER_UNREACHABLE;
}

/* An ANY_SOURCE receive while a process failure is not acknowledged
 * (bfo_failure_ack): it completes at once, BFO_ERR_PROC_FAILED_PENDING. */
static BFO__COLD int bfo__pending_feed(bfo_engine *e, bfo_request *r)
{
    r->status = BFO_ERR_PROC_FAILED_PENDING;
    bfo__req_feed(e, r, BFO_EV_PEER_UNREACHABLE, NULL);
    return r->complete ? r->status : BFO_ERR_PROC_FAILED_PENDING;
}

/* 1 when ctx was revoked (bfo_revoke). */
static inline int bfo__ctx_revoked(const bfo_engine *e, uint32_t ctx)
{
    for (int i = 0; i < e->nrevoked; i++)
        if (e->revoked[i] == ctx)
            return 1;
    return 0;
}

/* A new request on a revoked context: it completes at once,
 * BFO_ERR_REVOKED, before it takes a sequence number or a message. */
static BFO__COLD int bfo__revoked_feed(bfo_engine *e, bfo_request *r)
{
    r->status = BFO_ERR_REVOKED;
    bfo__req_feed(e, r, BFO_EV_PEER_UNREACHABLE, NULL);
    return r->complete ? r->status : BFO_ERR_REVOKED;
}

/* 1 when a receive naming a gone peer may still be matched: the peer said
 * BYE and messages it sent before may still come (this side did not
 * leave). */
static inline int bfo__still_coming(const bfo_engine *e, int peer)
{
    return peer >= 0 && !e->left && e->peers[peer].left == BFO__LEFT_OWED;
}

/* An eager send's first transition, IDLE --EAGER_CHOSEN--> MATCH_SENT /
 * post_match: a fast path (docs/engine-design.md, "Fast paths") that sets
 * the state through bfo__fsm_shortcut and posts the MATCH, then feeds the
 * fact the machine waits for, if any, as bfo__send_feed would (none in
 * MATCH_SENT: that costs a test).  BFO_NO_FAST_PATH: the machine's step. */
static BFO__HOT void bfo__send_eager(bfo_engine *e, bfo_request *r)
{
#ifndef BFO_NO_FAST_PATH
    int ev;
    bfo__fsm_shortcut(&bfo_send_machine, &r->cs, BFO_SEND_ST_IDLE, BFO_EV_EAGER_CHOSEN,
                      BFO_SEND_ST_MATCH_SENT, BFO_SEND_ACT_POST_MATCH, e->trace, r);
    if (!bfo__lane_post(e, r))
        bfo__act_post_match(e, r);
    ev = bfo__fact(r, bfo_send_machine.waits, r->cap);
    if (BFO__UNLIKELY(ev != 0))
        bfo__send_feed(e, r, ev, NULL);
#else
    bfo__send_feed(e, r, BFO_EV_EAGER_CHOSEN, NULL);
#endif
}

/* bfo_isend_env and bfo_isend_data_env: data is NULL for a buffer, else a
 * description that is not one buffer. */
static BFO__HOT int bfo__isend(bfo_engine *e, bfo_request *r, const void *buf, size_t len,
                               const bfo_data *data, const bfo_envelope *env, uint64_t now)
{
    int peer;
    if (!r || !env || !bfo__in_range(env->peer, e->cfg.nranks) || env->src < 0 ||
        env->tag < 0 || (env->flags & ~BFO_SEND_SYNC) || (len && !buf && !data))
        return BFO_ERR_INVALID;
    peer = env->peer;
    if (now > e->now)
        e->now = now;
    bfo__req_init(r, BFO_REQ_SEND, (void *)(uintptr_t)buf, len, env);
    r->lane = 0;
    if (data) { /* described: no buffer (bfo__send_described) */
        r->data = data;
        r->dpos.seg = 0;
        r->dpos.start = 0;
    }
    r->cs = bfo_send_machine.start;
    r->self = bfo__handle_alloc(e, r);
    if (bfo_handle_is_null(r->self))
        return BFO_ERR_NO_MEMORY;
    if (BFO__UNLIKELY(e->nrevoked) && bfo__ctx_revoked(e, env->ctx))
        return bfo__revoked_feed(e, r); /* first: revoked whatever its peer */
    if (e->peers[peer].unreachable)
        return bfo__gone_feed(e, r);
    r->seq = ++e->peers[peer].send_seq;
    /* a synchronous send goes by rendezvous, whatever its size: the
     * receiver's answer (ACK, PUT, FIN) is the proof that it matched; so
     * does an eager one that the peer's window has no room for */
    if (BFO__LIKELY(len <= e->cfg.eager_limit && !(env->flags & BFO_SEND_SYNC))) {
        if (BFO__LIKELY(bfo__credit_take(e, peer, len))) {
            bfo__send_eager(e, r);
            bfo__run_failed(e);
            return BFO_OK;
        }
        e->stats.credit_rndv++;
    }
    {
        const int ev = bfo__send_choose(e, r);
        if (ev == BFO_EV_RNDV_CHOSEN) { /* its first bytes, if the window has room */
            r->first = bfo__rndv_first(e, len);
            if (!bfo__credit_take(e, peer, r->first))
                r->first = 0;
        }
        bfo__send_feed(e, r, ev, NULL);
    }
    bfo__run_failed(e);
    return BFO_OK;
}

/* bfo_isend: see THE API near the top. */
static inline int bfo_isend(bfo_engine *e, bfo_request *r, const void *buf, size_t len, int peer,
                            uint32_t ctx, int tag, uint64_t now)
{
    bfo_envelope env;
    env.peer = peer;
    env.ctx = ctx;
    env.src = e->cfg.rank;
    env.tag = tag;
    env.flags = 0;
    return bfo__isend(e, r, buf, len, NULL, &env, now);
}

/* bfo_isend_env: see THE API near the top. */
static inline int bfo_isend_env(bfo_engine *e, bfo_request *r, const void *buf, size_t len,
                                const bfo_envelope *env, uint64_t now)
{
    return bfo__isend(e, r, buf, len, NULL, env, now);
}

/* bfo_irecv_env and bfo_irecv_data_env: data as for bfo__isend. */
static BFO__HOT int bfo__irecv(bfo_engine *e, bfo_request *r, void *buf, size_t cap,
                               const bfo_data *data, const bfo_envelope *env, uint64_t now)
{
    bfo_request *rr = r;
    int peer;
    if (!r || !env || (unsigned)env->peer + 1u > (unsigned)e->cfg.nranks || /* -1: ANY */
        env->src < BFO_ANY_SOURCE || env->tag < BFO_ANY_TAG || env->flags || (cap && !buf && !data))
        return BFO_ERR_INVALID;
    peer = env->peer;
    if (now > e->now)
        e->now = now;
    bfo__req_init(r, BFO_REQ_RECV, buf, cap, env);
    if (data) { /* described: no buffer (bfo__data_in) */
        r->data = data;
        r->dpos.seg = 0;
        r->dpos.start = 0;
    }
    r->cs = bfo_recv_machine.start;
    /* a slot of its own from now on, its handle once it needs one
     * (bfo__self): a rendezvous it matches is answered with it (ACK, PUT),
     * and every request that posts operations holds one, which is what
     * keeps max_ops enough (bfo__min_ops) */
    r->self = bfo__null_handle();
    if (!bfo__slot_reserve(e))
        return BFO_ERR_NO_MEMORY;
    if (BFO__UNLIKELY(e->nrevoked) && bfo__ctx_revoked(e, env->ctx))
        return bfo__revoked_feed(e, r);
    {
        const int i = e->ux_head >= 0 ? bfo__ux_match(e, r) : -1;
        if (i >= 0) {
            bfo_uxm *u = bfo__ux_at(e, i);
            bfo__ux_unlink(e, i);
            bfo__recv_take(e, r, u->peer, &u->f);
            bfo__credit_return(e, u->peer, &u->f);
            bfo__uxm_put(e, i);
            bfo__run_failed(e);
            return BFO_OK;
        }
    }
    if ((peer >= 0 ? e->peers[peer].unreachable : bfo__all_unreachable(e)) &&
        !bfo__still_coming(e, peer))
        return bfo__gone_feed(e, r);
    if (BFO__UNLIKELY(peer < 0 && e->acked_n != e->failed_n)) /* a failure not acknowledged */
        return bfo__pending_feed(e, r);
    bfo__posted_add(e, rr);
    return BFO_OK;
}

/* bfo_irecv: see THE API near the top. */
static inline int bfo_irecv(bfo_engine *e, bfo_request *r, void *buf, size_t cap, int peer,
                            uint32_t ctx, int tag, uint64_t now)
{
    bfo_envelope env;
    env.peer = peer;
    env.ctx = ctx;
    env.src = peer;
    env.tag = tag;
    env.flags = 0;
    return bfo__irecv(e, r, buf, cap, NULL, &env, now);
}

/* bfo_irecv_env: see THE API near the top. */
static inline int bfo_irecv_env(bfo_engine *e, bfo_request *r, void *buf, size_t cap,
                                const bfo_envelope *env, uint64_t now)
{
    return bfo__irecv(e, r, buf, cap, NULL, env, now);
}

/* One buffer, however it was described: an iovec of one segment (empty
 * ones aside) is one.  *buf gets it. */
static inline int bfo__data_flat(const bfo_data *d, void **buf)
{
    int seen = 0;
    if (d->kind == BFO_DATA_CONTIG) {
        *buf = d->buf;
        return 1;
    }
    if (d->kind != BFO_DATA_IOV)
        return 0;
    *buf = NULL;
    for (int i = 0; i < d->nsegs; i++)
        if (d->segs[i].len) {
            if (seen++)
                return 0;
            *buf = d->segs[i].base;
        }
    return 1;
}

/* bfo_isend_data_env: see THE API near the top. */
static inline int bfo_isend_data_env(bfo_engine *e, bfo_request *r, const bfo_data *d,
                                     const bfo_envelope *env, uint64_t now)
{
    void *buf;
    if (!bfo_data_valid(d, 1))
        return BFO_ERR_INVALID;
    if (bfo__data_flat(d, &buf)) /* the contiguous path */
        return bfo__isend(e, r, buf, d->len, NULL, env, now);
    return bfo__isend(e, r, NULL, d->len, d, env, now);
}

/* bfo_irecv_data_env: see THE API near the top. */
static inline int bfo_irecv_data_env(bfo_engine *e, bfo_request *r, const bfo_data *d,
                                     const bfo_envelope *env, uint64_t now)
{
    void *buf;
    if (!bfo_data_valid(d, 0))
        return BFO_ERR_INVALID;
    if (bfo__data_flat(d, &buf))
        return bfo__irecv(e, r, buf, d->len, NULL, env, now);
    return bfo__irecv(e, r, NULL, d->len, d, env, now);
}

/* bfo_isend_data: see THE API near the top. */
static inline int bfo_isend_data(bfo_engine *e, bfo_request *r, const bfo_data *d, int peer,
                                 uint32_t ctx, int tag, uint64_t now)
{
    bfo_envelope env;
    env.peer = peer;
    env.ctx = ctx;
    env.src = e->cfg.rank;
    env.tag = tag;
    env.flags = 0;
    return bfo_isend_data_env(e, r, d, &env, now);
}

/* bfo_irecv_data: see THE API near the top. */
static inline int bfo_irecv_data(bfo_engine *e, bfo_request *r, const bfo_data *d, int peer,
                                 uint32_t ctx, int tag, uint64_t now)
{
    bfo_envelope env;
    env.peer = peer;
    env.ctx = ctx;
    env.src = peer;
    env.tag = tag;
    env.flags = 0;
    return bfo_irecv_data_env(e, r, d, &env, now);
}

/* bfo_test: see THE API near the top. */
static inline int bfo_test(const bfo_request *r) { return r->complete; }

/* bfo_rail_state: see THE API near the top. */
static inline int bfo_rail_state(const bfo_engine *e, int peer, int rail)
{
    if (!bfo__in_range(peer, e->cfg.nranks) || peer == e->cfg.rank || !bfo__in_range(rail, e->cfg.nrails))
        return 0;
    return e->peers[peer].rail[rail].fsm.cs;
}

/* bfo_rail_rate: see THE API near the top. */
static inline uint64_t bfo_rail_rate(const bfo_engine *e, int peer, int rail)
{
    if (!bfo__in_range(peer, e->cfg.nranks) || peer == e->cfg.rank || !bfo__in_range(rail, e->cfg.nrails))
        return 0;
    return e->peers[peer].rail[rail].rate * 1000;
}

/* bfo_peer_reachable: see THE API near the top. */
static inline int bfo_peer_reachable(const bfo_engine *e, int peer)
{
    return bfo__in_range(peer, e->cfg.nranks) &&
           (!e->peers[peer].unreachable || bfo__still_coming(e, peer));
}

/* bfo_peer_left: see THE API near the top. */
static inline int bfo_peer_left(const bfo_engine *e, int peer)
{
    return bfo__in_range(peer, e->cfg.nranks) && e->peers[peer].left != 0;
}

/* bfo_done_pop: see THE API near the top. */
static inline bfo_request *bfo_done_pop(bfo_engine *e)
{
    bfo_request *r = e->done_head;
    if (r && !(e->done_head = r->done_next))
        e->done_tail = NULL;
    return r;
}

/* Takes r out of the list of posted receives; 0 when it is not there. */
static inline int bfo__unpost(bfo_engine *e, bfo_request *r)
{
    bfo__rbin *b = bfo__rbin_of(e, r->ctx, r->src);
    for (bfo_request *q = b->head, *prev = NULL; q; prev = q, q = q->next)
        if (q == r) {
            bfo__rbin_unlink(e, b, prev, q, q->src == BFO_ANY_SOURCE);
            return 1;
        }
    return 0;
}

/* 1 when an op of the send waits in its peer's pending list. */
static inline int bfo__first_waits(const bfo_engine *e, const bfo_request *r)
{
    for (int i = e->peers[r->peer].pend_head; i >= 0; i = bfo__op_at(e, i)->next)
        if (bfo_handle_eq(bfo__op_at(e, i)->owner, r->self))
            return 1;
    return 0;
}

/* bfo_cancel: see THE API near the top. */
static inline int bfo_cancel(bfo_engine *e, bfo_request *r, uint64_t now)
{
    if (!r || r->complete)
        return r ? BFO_ERR_TOO_LATE : BFO_ERR_INVALID;
    if (bfo_handle_is_null(r->self)) { /* a posted receive holds none: in its bin, or not ours */
        if (r->kind != BFO_REQ_RECV || r->cs != BFO_RECV_ST_POSTED || !bfo__unpost(e, r))
            return BFO_ERR_INVALID;
    } else if (bfo__handle_get(e, r->self) != r) {
        return BFO_ERR_INVALID;
    } else if (r->kind == BFO_REQ_RECV) { /* matched, or a matched probe holds it */
        return BFO_ERR_TOO_LATE;
    } else if (r->answered || r->outstanding != 1 || r->peer == e->cfg.rank ||
               !bfo_send_accepts(r->cs, BFO_EV_CANCEL_REQUESTED) || !bfo__first_waits(e, r)) {
        return BFO_ERR_TOO_LATE;
    }
    if (now > e->now)
        e->now = now;
    bfo__req_feed(e, r, BFO_EV_CANCEL_REQUESTED, NULL);
    bfo__run_failed(e);
    return BFO_OK;
}

/* The oldest unexpected message a receive with envelope env would take,
 * or -1. */
static inline int bfo__ux_find(const bfo_engine *e, const bfo_envelope *env)
{
    bfo_request probe;
    probe.peer = env->peer;
    probe.ctx = env->ctx;
    probe.src = env->src;
    probe.want_tag = env->tag;
    return bfo__ux_match(e, &probe);
}

static inline int bfo__probe_args_ok(const bfo_engine *e, const bfo_envelope *env,
                                     const bfo_status *st)
{
    return env && st && (unsigned)env->peer + 1u <= (unsigned)e->cfg.nranks &&
           env->src >= BFO_ANY_SOURCE && env->tag >= BFO_ANY_TAG && !env->flags;
}

static inline void bfo__status_of(const bfo_uxm *u, bfo_status *st)
{
    st->source = (int)bfo__frame_src(&u->f);
    st->tag = bfo__frame_tag(&u->f);
    st->peer = u->peer;
    st->length = bfo__frame_len(&u->f);
}

/* bfo_iprobe: see THE API near the top. */
static inline int bfo_iprobe(bfo_engine *e, const bfo_envelope *env, bfo_status *st,
                             uint64_t now)
{
    int i;
    if (!bfo__probe_args_ok(e, env, st))
        return BFO_ERR_INVALID;
    if (now > e->now)
        e->now = now;
    i = bfo__ux_find(e, env);
    if (i < 0)
        return 0;
    bfo__status_of(bfo__ux_at(e, i), st);
    return 1;
}

/* bfo_improbe: see THE API near the top. */
static inline int bfo_improbe(bfo_engine *e, bfo_request *msg, const bfo_envelope *env,
                              bfo_status *st, uint64_t now)
{
    int i;
    if (!msg || !bfo__probe_args_ok(e, env, st))
        return BFO_ERR_INVALID;
    if (now > e->now)
        e->now = now;
    i = bfo__ux_find(e, env);
    if (i < 0)
        return 0;
    bfo__req_init(msg, BFO_REQ_RECV, NULL, 0, env);
    msg->data = NULL; /* bfo_imrecv_data sets it */
    msg->cs = bfo_recv_machine.start;
    msg->self = bfo__handle_alloc(e, msg);
    if (bfo_handle_is_null(msg->self))
        return BFO_ERR_NO_MEMORY;
    bfo__ux_unlink(e, i);
    msg->held = i;
    bfo__status_of(bfo__ux_at(e, i), st);
    {
        const bfo__input in = { &bfo__ux_at(e, i)->f, bfo__ux_at(e, i)->peer, 0, 0, 0 };
        bfo__recv_feed(e, msg, BFO_EV_PROBE_MATCHED, &in);
    }
    return 1;
}

/* bfo_imrecv: see THE API near the top. */
static inline int bfo_imrecv(bfo_engine *e, bfo_request *msg, void *buf, size_t cap,
                             uint64_t now)
{
    int i;
    if (!msg || (cap && !buf && !msg->data) || msg->kind != BFO_REQ_RECV || msg->complete ||
        msg->cs != BFO_RECV_ST_CLAIMED || msg->held < 0 || bfo__handle_get(e, msg->self) != msg)
        return BFO_ERR_INVALID;
    if (now > e->now)
        e->now = now;
    i = msg->held;
    msg->held = -1;
    msg->buf = (char *)buf;
    msg->cap = cap;
    bfo__recv_take(e, msg, bfo__ux_at(e, i)->peer, &bfo__ux_at(e, i)->f);
    bfo__credit_return(e, bfo__ux_at(e, i)->peer, &bfo__ux_at(e, i)->f);
    bfo__uxm_put(e, i);
    bfo__run_failed(e);
    return BFO_OK;
}

/* bfo_imrecv_data: see THE API near the top. */
static inline int bfo_imrecv_data(bfo_engine *e, bfo_request *msg, const bfo_data *d,
                                  uint64_t now)
{
    void *buf;
    int rc;
    if (!bfo_data_valid(d, 0))
        return BFO_ERR_INVALID;
    if (bfo__data_flat(d, &buf))
        return bfo_imrecv(e, msg, buf, d->len, now);
    if (!msg || msg->cs != BFO_RECV_ST_CLAIMED)
        return BFO_ERR_INVALID;
    msg->data = d; /* bfo_imrecv keeps it: no buffer, cap d->len */
    msg->dpos.seg = 0;
    msg->dpos.start = 0;
    rc = bfo_imrecv(e, msg, NULL, d->len, now);
    return rc;
}

/* 1 when no other rank is reachable: an ANY_SOURCE receive never can be
 * (but for a message of this rank to itself: a job of one rank waits). */
static inline int bfo__all_unreachable(const bfo_engine *e)
{
    if (e->cfg.nranks == 1)
        return e->left;
    for (int i = 0; i < e->cfg.nranks; i++)
        if (i != e->cfg.rank && (!e->peers[i].unreachable || bfo__still_coming(e, i)))
            return 0;
    return 1;
}

/* No rail of the peer came back in time: every request of it fails, and
 * ANY_SOURCE receives too once no peer at all is left.  It is for good, as
 * a failed process is: later requests fail at once, the engine stops
 * probing the peer's rails, and refuses its frames (bfo_engine_frame
 * returns BFO_ERR_PEER_UNREACHABLE: the transport does not acknowledge
 * the frame and drops the connection), so that the peer, if alive, fails
 * its operations too and declares this side unreachable in turn.  Neither
 * side can then mistake a message of the old sequence space for a new one.
 * (Resuming a peer needs a new sequence space agreed by both: future work.) */
static inline void bfo__peer_unreachable(bfo_engine *e, int peer)
{
    bfo__peer_step(e, peer, BFO_PEER_EV_GRACE_EXPIRED); /* give_up */
}

/* Fails what waits on a peer that is gone: every request of it not
 * complete (PEER_UNREACHABLE: a request drains its operations in flight,
 * then fails with the status bfo__gone_status gives), and the operations
 * waiting for a rail to it.  With posted, the receives still posted for it
 * too (and ANY_SOURCE ones once no peer is left that may send), and its
 * messages waiting for an earlier one that will never come; without (a
 * BYE: what the peer sent before it may still come), those wait. */
static inline void bfo__peer_fail(bfo_engine *e, int peer, int posted)
{
    bfo_peer *p = &e->peers[peer];
    bfo_request *prev = NULL, *r, *next;
    int none_left = bfo__all_unreachable(e);
    for (int i = 0; i < e->slotp.n; i++) {
        r = bfo__slot_at(e, i)->req;
        if (r && r->peer == peer && !r->complete &&
            (posted || r->kind != BFO_REQ_RECV || r->cs != BFO_RECV_ST_POSTED))
            bfo__req_gone(e, r);
    }
    for (int k = 0; k <= e->bin_mask && e->posted_count && posted; k++) /* receives naming it */
        for (int any = 0; any < 2; any++) {
            bfo__rbin *b = any ? &e->rbin_any[k] : &e->rbin_src[k];
            prev = NULL;
            for (r = b->head; r; r = next) {
                next = r->next;
                if (r->peer != peer && !(r->peer == BFO_ANY_SOURCE && none_left)) {
                    prev = r;
                    continue;
                }
                bfo__rbin_unlink(e, b, prev, r, any);
                bfo__req_gone(e, r);
            }
        }
    /* messages waiting for an earlier one that will never come */
    for (int k = p->ooo_head, nk; k >= 0 && posted; k = nk) {
        nk = bfo__ux_at(e, k)->next;
        bfo__uxm_put(e, k);
    }
    if (posted)
        p->ooo_head = p->ooo_tail = -1;
    int i = p->pend_head; /* operations waiting for a rail: they fail */
    p->pend_head = p->pend_tail = -1;
    while (i >= 0) {
        int n = bfo__op_at(e, i)->next;
        bfo__op_done(e, bfo__op_at(e, i), 0);
        i = n;
    }
}

/* fence: a process reported dead hears nothing more from this rank.  Its
 * failure takes the next place in the order; every connection to it is
 * dropped (its frames are refused from now on: bfo__peer_gone_flags), and
 * every ANY_SOURCE receive posted ends BFO_ERR_PROC_FAILED_PENDING: the
 * failure is not acknowledged yet (bfo_failure_ack). */
static BFO__COLD void bfo__peer_fence(bfo_engine *e, int peer)
{
    bfo_peer *p = &e->peers[peer];
    p->failed_order = ++e->failed_n;
    e->stats.procs_failed++;
    for (int k = 0; k < e->cfg.nrails; k++) {
        const int cs = p->rail[k].fsm.cs; /* a rail that may have a connection: dropped */
        bfo__rail_step(e, peer, k, BFO_EV_PEER_FENCED, NULL); /* retire */
        if (e->be.disconnect && cs != BFO_RAIL_ST_ABSENT && cs != BFO_RAIL_ST_RETIRED && cs != BFO_RAIL_ST_LEFT)
            e->be.disconnect(e->be.ctx, peer, k);
    }
    for (int k = 0; k <= e->bin_mask && e->posted_any; k++) {
        bfo__rbin *b = &e->rbin_any[k];
        for (bfo_request *r = b->head, *next; r; r = next) {
            next = r->next;
            bfo__rbin_unlink(e, b, NULL, r, 1);
            r->status = BFO_ERR_PROC_FAILED_PENDING;
            bfo__req_feed(e, r, BFO_EV_PEER_UNREACHABLE, NULL);
        }
    }
}

/* The hot paths' flags, from the peer machine's state: gone (unreachable:
 * its frames refused, or taken as after a BYE) and left. */
static inline void bfo__peer_gone_flags(bfo_peer *p)
{
    switch (p->fsm.cs) {
    case BFO_PEER_ST_UNREACHABLE:
    case BFO_PEER_ST_FAILED: p->unreachable = BFO__GIVEN_UP; break;
    case BFO_PEER_ST_LEAVING:
    case BFO_PEER_ST_LEFT:
    case BFO_PEER_ST_PARTED: p->unreachable = BFO__PARTED; break;
    default: p->unreachable = 0; break;
    }
    p->left = p->fsm.cs == BFO_PEER_ST_LEAVING ? BFO__LEFT_OWED
              : p->fsm.cs == BFO_PEER_ST_LEFT  ? BFO__LEFT_DONE
                                               : 0;
}

/* Every change of a peer's state passes through here (the tracer sees it,
 * obj: the bfo_peer): the peer machine takes the event, the flags follow
 * its state, then its actions run in order.  An event the machine has no
 * transition for is a bug of the engine's: counted as a protocol
 * violation, nothing changes. */
static BFO__COLD void bfo__peer_step(bfo_engine *e, int peer, int ev)
{
    bfo_peer *p = &e->peers[peer];
    bfo_step st;
    const int was_reachable = p->fsm.cs == BFO_PEER_ST_REACHABLE;
    memset(&st, 0, sizeof st);
    st.trace = e->trace;
    st.obj = p;
    if (bfo_peer_step(&p->fsm, ev, &st) != BFO_OK) {
        e->stats.protocol_violations++;
        return;
    }
    bfo__peer_gone_flags(p);
    if (p->fsm.cs != BFO_PEER_ST_RELAYED)
        p->via = -1;
    if (e->cfg.relay && was_reachable != (p->fsm.cs == BFO_PEER_ST_REACHABLE)) {
        e->reach_dirty = 1; /* who this rank reaches changed: it tells its peers */
        if (was_reachable && p->relay_out)
            bfo__relay_fail_via(e, peer);
    }
    for (unsigned i = 0; i < st.n_actions; i++)
        switch (st.actions[i]) {
        case BFO_PEER_ACT_GIVE_UP: /* every request of it, the receives naming it */
        case BFO_PEER_ACT_CLOSE_OUT: bfo__peer_fail(e, peer, 1); break;
        case BFO_PEER_ACT_PART: /* its BYE: every rail of it LEFT; what it no longer answers fails */
            e->stats.peers_left++;
            for (int k = 0; k < e->cfg.nrails; k++)
                if (bfo_rail_accepts(p->rail[k].fsm.cs, BFO_EV_BYE_RCVD))
                    bfo__rail_step(e, peer, k, BFO_EV_BYE_RCVD, NULL);
            bfo__peer_fail(e, peer, 0);
            break;
        case BFO_PEER_ACT_FENCE: bfo__peer_fence(e, peer); break;
        case BFO_PEER_ACT_TAKE_ROUTE: /* what waited for a rail goes through the relay */
            e->stats.routes_found++;
            bfo__flush_pending(e, peer);
            break;
        case BFO_PEER_ACT_REPORT_ROUTE_LOST: /* the grace runs from now */
            e->stats.routes_lost++;
            p->down_since = e->now ? e->now : 1;
            break;
        default: e->stats.protocol_violations++; break; /* not an action of the peer machine */
        }
}

/* ---------------------------------------------------------------- relay */

/* Relay (bfo_config.relay; docs/engine-design.md, "Relay").  A peer B that
 * no rail reaches, while a rank C that this rank reaches reports a live
 * rail to B (its REACH), is RELAYED (the peer machine): B's frames go to C
 * inside a RELAY {dst B, src this rank, token}, C passes them on, and the
 * frame completes when C's RELAYACK says how C's post to B completed:
 * B's transport acknowledged it, or it may not have arrived.  One hop: C
 * passes on only what its sender sent itself, never relays a frame it
 * passes on, and a frame passed on waits for no rail.  Ordering and
 * duplicates are B's as for any frame (sequence numbers are end to end);
 * RDMA never goes through a relay; rail control (PROBE, PROBEACK, BROKEN)
 * and BYE are never relayed. */

/* Frames that may go through a relay: a request's, CREDIT, and the BYE of
 * a rank that leaves while it reaches the peer only so (bfo__relay_bye). */
static inline int bfo__relayable(int type)
{
    return type >= BFO_FRAG_MATCH && type <= BFO_FRAG_RECVERRNOTIFY ? 1
                                                                    : type == BFO_FRAG_CREDIT || type == BFO_FRAG_BYE;
}

/* bfo_engine_leave, for a peer RELAYED: its BYE through the relay (about
 * no rail; not sent again), so that it takes this rank's leaving as no
 * failure, as over a rail of its own. */
static BFO__COLD void bfo__relay_bye(bfo_engine *e, int peer)
{
    bfo_hdr_bye h;
    bfo_op *op = bfo__ctl_alloc(e, BFO_FRAG_BYE, peer);
    if (!op)
        return; /* the peer finds the route gone, then gives this rank up */
    h.type = BFO_FRAG_BYE;
    h.flags = 0;
    h.seq = e->peers[peer].send_seq;
    op->hdr_len = bfo_hdr_bye_encode(&h, op->hdr, sizeof op->hdr);
    if (!bfo__relay_post(e, op)) { /* no room at the relay, or no rail to it UP */
        bfo__op_free(e, op);
        return;
    }
    e->byes_out++;
    e->stats.byes_sent++;
}

/* A RELAYACK to `to`: how the post of its frame (token) to dst completed. */
static BFO__COLD void bfo__relay_ack(bfo_engine *e, int to, int dst, uint64_t token, int ok)
{
    bfo_hdr_relayack h;
    bfo_op *op = bfo__ctl_alloc(e, BFO_FRAG_RELAYACK, to);
    if (!op) /* over the control budget: its sender's frame ages out (bfo__relay_progress) */
        return;
    h.type = BFO_FRAG_RELAYACK;
    h.flags = 0;
    h.ok = (uint16_t)(ok != 0);
    h.dst = (uint32_t)dst;
    h.token = token;
    op->hdr_len = bfo_hdr_relayack_encode(&h, op->hdr, sizeof op->hdr);
    bfo__post(e, op);
}

/* op, for a RELAYED peer, to its relay: 1 when sent (or waiting for a
 * staging buffer, or failed: RDMA), 0 when it waits in the peer's pending
 * list (the relay's window is full, or the relay is not reachable now). */
static BFO__COLD int bfo__relay_post(bfo_engine *e, bfo_op *op)
{
    const int via = e->peers[op->peer].via;
    const void *payload = op->payload;
    bfo_hdr_relay h;
    bfo_peer *v;
    bfo_op *leg;
    if (bfo__op_rdma(op->type)) { /* never through a relay: the request goes on by copy */
        bfo__op_fail_later(e, op);
        return 1;
    }
    if (!e->cfg.relay || via < 0 || op->hdr_len > BFO_MAX_HDR_SIZE || !bfo__relayable(op->type) ||
        op->about_rail >= 0)
        return 0; /* rail control waits for a rail of its own */
    v = &e->peers[via];
    if (v->fsm.cs != BFO_PEER_ST_REACHABLE || v->relay_out >= e->relay_window ||
        bfo__pick_rail(e, via, op->hdr_len + op->payload_len) < 0)
        return 0; /* until its RELAYACKs make room, a rail to it is UP (not only DEMOTED),
                   * or the next route (bfo__relay_progress tries again) */
    if (bfo__op_described(op) && !bfo_data_span_flat(&op->span, &payload)) {
        int k = bfo__stage_take(e, op);
        if (k < 0) {
            bfo__stage_wait(e, op);
            return 1;
        }
        payload = e->stage_mem + (size_t)k * e->stage_size;
        bfo_data_span_copy(&op->span, 0, (void *)(uintptr_t)payload, op->span.len);
    }
    leg = bfo__ctl_alloc(e, BFO_FRAG_RELAY, via);
    if (!leg)
        return 0;
    h.type = BFO_FRAG_RELAY;
    h.flags = 0;
    h.dst = (uint32_t)op->peer;
    h.src = (uint32_t)e->cfg.rank;
    h.token = bfo__token(op);
    leg->hdr_len = bfo_hdr_relay_encode(&h, leg->hdr, sizeof leg->hdr);
    memcpy(leg->hdr + leg->hdr_len, op->hdr, op->hdr_len);
    leg->hdr_len += op->hdr_len;
    leg->payload = payload;
    leg->payload_len = op->payload_len;
    leg->slot = UINT32_MAX; /* this rank's own (not a slot of a frame passed on) */
    op->rail = BFO__RELAY_RAIL;
    op->via = via;
    op->posted = 1;
    op->post_at = e->now;
    v->relay_out++;
    e->stats.ops_posted++;
    e->stats.relayed_frames++;
    e->stats.relayed_bytes += op->hdr_len + op->payload_len;
    bfo__post(e, leg);
    return 1;
}

/* A frame sent through a relay is back (its RELAYACK, its leg's failure,
 * its relay lost, or it aged out): room in the relay's window. */
static BFO__COLD void bfo__relay_unqueued(bfo_engine *e, const bfo_op *op, int ok)
{
    e->peers[op->via].relay_out--;
    if (!ok)
        e->stats.relay_failed++;
    if (e->peers[op->peer].pend_head >= 0)
        bfo__gate_note(e, op->peer);
}

/* A RELAY or REACH of this rank's completed.  A REACH that failed: the
 * report goes again (all of it, newer).  A RELAY of its own frame that
 * failed: the frame may not have arrived (it completes so); delivered, it
 * waits for the RELAYACK.  A frame it passed on: its sender is told. */
static BFO__COLD void bfo__relay_done(bfo_engine *e, bfo_op *op, int ok)
{
    bfo_hdr_relay h;
    uint32_t slot = op->slot;
    if (op->type == BFO_FRAG_REACH) {
        bfo__op_free(e, op);
        if (!ok)
            e->reach_dirty = 1;
        return;
    }
    if (bfo_hdr_relay_decode(&h, op->hdr, op->hdr_len) != BFO_OK) { /* never: encoded here */
        bfo__op_free(e, op);
        return;
    }
    bfo__op_free(e, op);
    if (slot == UINT32_MAX) {
        bfo_op *orig;
        if (!ok && (orig = bfo__op_of_token(e, h.token)) && orig->rail == BFO__RELAY_RAIL)
            bfo__op_done(e, orig, 0);
        return;
    }
    e->relay_used[slot] = 0;
    bfo__relay_ack(e, (int)h.src, (int)h.dst, h.token, ok);
}

/* take_relay: a RELAY from peer.  For this rank: its frame, taken as from
 * its sender (e->relay_rc: what that did).  For another: passed on, if
 * its sender is the peer it came from (one hop), its destination has a
 * live rail, and a slot is free; else refused (RELAYACK ok 0). */
static BFO__COLD void bfo__relay_take(bfo_engine *e, int peer, const bfo_frame *f)
{
    const bfo_hdr_relay *h = &f->h.relay;
    const uint32_t n = (uint32_t)e->cfg.nranks, me = (uint32_t)e->cfg.rank;
    bfo_op *op;
    int slot = -1;
    e->relay_rc = BFO_ERR_PROTOCOL;
    if (!f || f->type != BFO_FRAG_RELAY || !e->cfg.relay || !f->payload || f->payload_len < 2 ||
        !bfo__relayable(f->payload[0]) || h->src >= n || h->dst >= n || h->src == h->dst ||
        h->src == me)
        return;
    if (h->dst == me) {
        const int src = (int)h->src;
        int kind = BFO_EVK_RCVD, rc;
        bfo_frame g;
        if (src == peer) /* it would have come on a rail of its own */
            return;
        rc = bfo_frame_parse(&g, f->payload, f->payload_len);
        if (rc != BFO_OK) {
            e->stats.malformed_frames++;
            e->relay_rc = rc;
            return;
        }
        if (e->peers[src].unreachable) {
            e->relay_rc = bfo__frame_gone(e, src, 0, &g, NULL, 0);
            return;
        }
        rc = bfo__dispatch(e, src, 0, &g, &kind);
        if (rc != BFO_ERR_AGAIN)
            e->stats.relay_received++;
        if (rc == BFO_OK && kind == BFO_EVK_DUP_RCVD)
            e->stats.duplicates_dropped++;
        e->relay_rc = rc;
        return;
    }
    if (h->src != (uint32_t)peer || h->dst == (uint32_t)peer || f->payload_len > e->relay_size)
        return;
    e->relay_rc = BFO_OK;
    for (int k = 0; k < e->cfg.relay_slots && slot < 0; k++)
        if (!e->relay_used[k])
            slot = k;
    if (slot < 0 || e->peers[h->dst].fsm.cs != BFO_PEER_ST_REACHABLE ||
        !(op = bfo__ctl_alloc(e, BFO_FRAG_RELAY, (int)h->dst))) {
        e->stats.relay_refused++;
        bfo__relay_ack(e, peer, (int)h->dst, h->token, 0);
        return;
    }
    e->relay_used[slot] = 1;
    memcpy(e->relay_mem + (size_t)slot * e->relay_size, f->payload, f->payload_len);
    op->hdr_len = bfo_hdr_relay_encode(h, op->hdr, sizeof op->hdr);
    op->payload = e->relay_mem + (size_t)slot * e->relay_size;
    op->payload_len = f->payload_len;
    op->slot = (uint32_t)slot;
    e->stats.relay_passed++;
    e->stats.relay_passed_bytes += f->payload_len;
    bfo__post(e, op);
}

/* take_relayack: the relay's word on a frame of this rank's it passed on. */
static BFO__COLD void bfo__relayack_take(bfo_engine *e, int peer, const bfo_frame *f)
{
    bfo_op *op;
    if (!f || f->type != BFO_FRAG_RELAYACK || f->h.relayack.ok > 1) {
        e->stats.protocol_violations++;
        return;
    }
    op = bfo__op_of_token(e, f->h.relayack.token);
    if (!op || op->rail != BFO__RELAY_RAIL || op->via != peer || op->peer != (int)f->h.relayack.dst) {
        e->stats.stale_dropped++; /* completed already (its leg failed, it aged out) */
        return;
    }
    bfo__op_done(e, op, f->h.relayack.ok);
}

/* take_reach: the ranks the peer has a live rail to; an older report than
 * the one taken (rails reorder) is ignored. */
static BFO__COLD void bfo__reach_take(bfo_engine *e, int peer, const bfo_frame *f)
{
    if (!f || f->type != BFO_FRAG_REACH || !e->cfg.relay)
        return; /* relay off here: nothing to route */
    if (f->h.reach.count != (uint32_t)e->cfg.nranks || f->payload_len != (size_t)e->reach_bytes ||
        !f->payload) {
        e->stats.protocol_violations++;
        return;
    }
    if (f->h.reach.gen <= e->reach_gen[peer])
        return;
    e->reach_gen[peer] = f->h.reach.gen;
    memcpy(e->reach_of + (size_t)peer * (size_t)e->reach_bytes, f->payload, (size_t)e->reach_bytes);
}

/* The frames sent through `via` whose RELAYACK has not come: via is not
 * reachable any more, so they may not have arrived. */
static BFO__COLD void bfo__relay_fail_via(bfo_engine *e, int via)
{
    for (int i = 0; i < e->opp.n && e->peers[via].relay_out; i++) {
        bfo_op *op = bfo__op_at(e, i);
        if (op->posted && op->rail == BFO__RELAY_RAIL && op->via == via)
            bfo__op_done(e, op, 0);
    }
}

/* 1 while a rail of peer b makes its first connection, or is connected
 * and probed: no route is taken meanwhile (at the start, every peer is
 * DOWN until its first rail is admitted, a few round trips). */
static inline int bfo__rails_trying(const bfo_engine *e, int b)
{
    for (int k = 0; k < e->cfg.nrails; k++) {
        const int cs = e->peers[b].rail[k].fsm.cs;
        if (cs == BFO_RAIL_ST_CONNECTING || cs == BFO_RAIL_ST_PROBING)
            return 1;
    }
    return 0;
}

/* 1 when rank v may relay to peer b: reachable here, and it reports b. */
static inline int bfo__route_ok(const bfo_engine *e, int v, int b)
{
    return v >= 0 && v != e->cfg.rank && v != b && e->peers[v].fsm.cs == BFO_PEER_ST_REACHABLE &&
           ((e->reach_of[(size_t)v * (size_t)e->reach_bytes + (size_t)b / 8] >> (b % 8)) & 1);
}

/* Relay, at every progress: this rank's report to its peers when it
 * changed; each peer no rail reaches gets a route (ROUTE_FOUND) or loses
 * it (ROUTE_LOST); what waits for room at a relay is tried again; and a
 * frame whose RELAYACK has not come in silence_ns completes with an error
 * (the protocol sends it again; the receiver drops a duplicate). */
static BFO__COLD void bfo__relay_progress(bfo_engine *e)
{
    const bfo_config *c = &e->cfg;
    if (e->reach_dirty) {
        bfo_hdr_reach h;
        e->reach_dirty = 0;
        memset(e->reach_mine, 0, (size_t)e->reach_bytes);
        for (int i = 0; i < c->nranks; i++)
            if (e->peers[i].fsm.cs == BFO_PEER_ST_REACHABLE)
                e->reach_mine[i / 8] |= (uint8_t)(1u << (i % 8));
        h.type = BFO_FRAG_REACH;
        h.flags = 0;
        h.count = (uint32_t)c->nranks;
        h.gen = ++e->reach_gen_mine;
        for (int i = 0; i < c->nranks; i++) {
            bfo_op *op;
            if (e->peers[i].fsm.cs != BFO_PEER_ST_REACHABLE)
                continue;
            if (!(op = bfo__ctl_alloc(e, BFO_FRAG_REACH, i))) {
                e->reach_dirty = 1; /* over the control budget: at the next progress */
                continue;
            }
            op->hdr_len = bfo_hdr_reach_encode(&h, op->hdr, sizeof op->hdr);
            op->payload = e->reach_mine;
            op->payload_len = (size_t)e->reach_bytes;
            e->stats.reach_sent++;
            bfo__post(e, op);
        }
    }
    for (int b = 0; b < c->nranks; b++) {
        bfo_peer *p = &e->peers[b];
        int v = -1;
        if (p->fsm.cs != BFO_PEER_ST_DOWN && p->fsm.cs != BFO_PEER_ST_RELAYED)
            continue;
        if (p->fsm.cs == BFO_PEER_ST_DOWN && bfo__rails_trying(e, b))
            continue; /* a first connection, or a probe out: the direct rails first */
        if (bfo__route_ok(e, p->via, b))
            v = p->via;
        for (int k = 0; k < c->nranks && v < 0; k++)
            if (bfo__route_ok(e, k, b))
                v = k;
        if (v >= 0 && v != p->via) {
            p->via = v;
            bfo__peer_step(e, b, BFO_PEER_EV_ROUTE_FOUND); /* take_route, or another relay */
            if (p->pend_head >= 0)
                bfo__flush_pending(e, b);
        } else if (v < 0 && p->fsm.cs == BFO_PEER_ST_RELAYED) {
            bfo__peer_step(e, b, BFO_PEER_EV_ROUTE_LOST); /* report_route_lost */
        } else if (v >= 0 && p->pend_head >= 0 && e->peers[v].relay_out < e->relay_window) {
            bfo__flush_pending(e, b);
        }
    }
    if (e->now - e->relay_scan_at >= c->heartbeat_ns) {
        int out = 0;
        e->relay_scan_at = e->now;
        for (int i = 0; i < c->nranks; i++)
            out += e->peers[i].relay_out;
        for (int i = 0; i < e->opp.n && out; i++) {
            bfo_op *op = bfo__op_at(e, i);
            if (op->posted && op->rail == BFO__RELAY_RAIL && e->now - op->post_at >= c->silence_ns) {
                out--;
                bfo__op_done(e, op, 0);
            }
        }
    }
}

/* bfo_peer_failed: see THE API near the top. */
static inline int bfo_peer_failed(bfo_engine *e, int peer, uint64_t now)
{
    if (!bfo__in_range(peer, e->cfg.nranks) || peer == e->cfg.rank)
        return BFO_ERR_INVALID;
    if (now > e->now)
        e->now = now;
    bfo__peer_step(e, peer, BFO_PEER_EV_DEATH_REPORTED);
    bfo__run_failed(e);
    return BFO_OK;
}

/* bfo_peer_state: see THE API near the top. */
static inline int bfo_peer_state(const bfo_engine *e, int peer)
{
    return bfo__in_range(peer, e->cfg.nranks) ? e->peers[peer].fsm.cs : 0;
}

/* bfo_failure_ack: see THE API near the top. */
static inline int bfo_failure_ack(bfo_engine *e)
{
    e->acked_n = e->failed_n;
    return (int)e->acked_n;
}

/* bfo_failure_get_acked: see THE API near the top. */
static inline int bfo_failure_get_acked(const bfo_engine *e, int *ranks, int max)
{
    for (int i = 0; i < e->cfg.nranks && ranks && max > 0; i++) {
        const uint32_t o = e->peers[i].failed_order;
        if (o && o <= e->acked_n && o <= (uint32_t)max)
            ranks[o - 1] = i;
    }
    return (int)e->acked_n;
}

/* Messages on revoked contexts that no receive will ever take: an eager
 * one is dropped (its credit returned to its sender); a rendezvous is
 * taken by a free discard receive (cap 0: the copy protocol, every byte
 * dropped, so that its sender's request completes), or waits for one, for
 * a later progress (revoke_sweep). */
static BFO__COLD void bfo__revoke_sweep(bfo_engine *e)
{
    e->revoke_sweep = 0;
    for (int i = e->ux_head, next; i >= 0; i = next) {
        bfo_uxm *u = bfo__ux_at(e, i);
        bfo_request *r = NULL;
        bfo_envelope env;
        next = u->an;
        if (!bfo__ctx_revoked(e, bfo__frame_ctx(&u->f)))
            continue;
        if (u->f.type != BFO_FRAG_MATCH) {
            for (int k = 0; k < BFO__SINKS && !r; k++)
                if (e->sink[k].complete)
                    r = &e->sink[k];
            if (!r) {
                e->revoke_sweep = 1; /* all busy: at a later progress */
                continue;
            }
            env.peer = u->peer;
            env.ctx = bfo__frame_ctx(&u->f);
            env.src = BFO_ANY_SOURCE;
            env.tag = BFO_ANY_TAG;
            env.flags = 0;
            bfo__req_init(r, BFO_REQ_RECV, NULL, 0, &env);
            r->cs = bfo_recv_machine.start;
            r->self = bfo__handle_alloc(e, r);
            if (bfo_handle_is_null(r->self)) { /* every handle in use: later */
                r->complete = 1;
                e->revoke_sweep = 1;
                continue;
            }
            r->sink = 1;
        }
        e->stats.revoke_discards++;
        bfo__ux_unlink(e, i);
        if (r)
            bfo__recv_take(e, r, u->peer, &u->f);
        bfo__credit_return(e, u->peer, &u->f);
        bfo__uxm_put(e, i);
    }
}

/* bfo_revoke: see THE API near the top. */
static inline int bfo_revoke(bfo_engine *e, uint32_t ctx, uint64_t now)
{
    if (!e)
        return BFO_ERR_INVALID;
    if (now > e->now)
        e->now = now;
    if (bfo__ctx_revoked(e, ctx))
        return BFO_OK;
    if (e->nrevoked == BFO__MAX_REVOKED)
        return BFO_ERR_NO_MEMORY;
    e->revoked[e->nrevoked++] = ctx;
    e->stats.revokes++;
    /* the receives posted on it (in their bins; they hold no handle) */
    for (int k = 0; k <= e->bin_mask && e->posted_count; k++)
        for (int any = 0; any < 2; any++) {
            bfo__rbin *b = any ? &e->rbin_any[k] : &e->rbin_src[k];
            for (bfo_request *r = b->head, *prev = NULL, *next; r; r = next) {
                next = r->next;
                if (r->ctx != ctx || r->sink) {
                    prev = r;
                    continue;
                }
                bfo__rbin_unlink(e, b, prev, r, any);
                r->revoked = 1;
                bfo__req_feed(e, r, BFO_EV_CANCEL_REQUESTED, NULL);
            }
        }
    /* the sends whose message has not left (a receive that matched
     * completes as it would) */
    for (int i = 0; i < e->slotp.n; i++) {
        bfo_request *r = bfo__slot_at(e, i)->req;
        if (!r || r->complete || r->ctx != ctx || r->kind != BFO_REQ_SEND)
            continue;
        if (r->answered || r->outstanding != 1 || r->peer == e->cfg.rank ||
            !bfo_send_accepts(r->cs, BFO_EV_CANCEL_REQUESTED) || !bfo__first_waits(e, r))
            continue; /* its message left: the peer takes or discards it, and answers */
        r->revoked = 1;
        bfo__req_feed(e, r, BFO_EV_CANCEL_REQUESTED, NULL);
    }
    bfo__revoke_sweep(e);
    bfo__run_failed(e);
    return BFO_OK;
}

/* bfo_revoked: see THE API near the top. */
static inline int bfo_revoked(const bfo_engine *e, uint32_t ctx)
{
    return e && bfo__ctx_revoked(e, ctx);
}

/* bfo_engine_leave: see THE API near the top. */
static inline int bfo_engine_leave(bfo_engine *e, uint64_t now)
{
    const bfo_config *c = &e->cfg;
    if (now > e->now)
        e->now = now;
    if (e->left)
        return BFO_OK;
    e->left = 1;
    /* a peer reached through a relay: a BYE through it, first (the
     * relay's rails part next) */
    for (int i = 0; i < c->nranks; i++)
        if (e->peers[i].fsm.cs == BFO_PEER_ST_RELAYED)
            bfo__relay_bye(e, i);
    /* a BYE on every UP or PROBING rail of every peer that did not leave
     * (its rails are LEFT already), every connection parted */
    for (int i = 0; i < c->nranks; i++)
        for (int k = 0; i != c->rank && k < c->nrails; k++)
            if (bfo_rail_accepts(e->peers[i].rail[k].fsm.cs, BFO_EV_LEAVE_REQUESTED))
                bfo__rail_step(e, i, k, BFO_EV_LEAVE_REQUESTED, NULL);
    for (int i = 0; i < c->nranks; i++) /* this rank itself too: nothing new goes out */
        bfo__peer_step(e, i, BFO_PEER_EV_LEAVE_REQUESTED);
    /* every request fails: the posted receives (they hold no handle)
     * leave their bins first, then every request with a handle */
    {
        bfo_request *gone = NULL;
        for (int k = 0; k <= e->bin_mask && e->posted_count; k++)
            for (int any = 0; any < 2; any++) {
                bfo__rbin *b = any ? &e->rbin_any[k] : &e->rbin_src[k];
                for (bfo_request *r = b->head, *next; r; r = next) {
                    next = r->next;
                    r->next = gone;
                    gone = r;
                }
                b->head = b->tail = NULL;
            }
        e->posted_count = e->posted_any = 0;
        for (bfo_request *r = gone, *next; r; r = next) {
            next = r->next;
            r->next = NULL;
            bfo__req_gone(e, r);
        }
    }
    for (int i = 0; i < e->slotp.n; i++) {
        bfo_request *r = bfo__slot_at(e, i)->req;
        if (r && !r->complete)
            bfo__req_gone(e, r);
    }
    /* nobody receives what waits unexpected, or out of order */
    while (e->ux_head >= 0) {
        const int u = e->ux_head;
        bfo__ux_unlink(e, u);
        bfo__uxm_put(e, u);
    }
    for (int i = 0; i < c->nranks; i++) {
        bfo_peer *p = &e->peers[i];
        for (int k = p->ooo_head, nk; k >= 0; k = nk) {
            nk = bfo__ux_at(e, k)->next;
            bfo__uxm_put(e, k);
        }
        p->ooo_head = p->ooo_tail = -1;
        for (int k = p->pend_head, nk; k >= 0; k = nk) { /* waiting for a rail: fail */
            nk = bfo__op_at(e, k)->next;
            bfo__op_fail_later(e, bfo__op_at(e, k));
        }
        p->pend_head = p->pend_tail = -1;
    }
    for (int k = e->self_head, nk; k >= 0; k = nk) { /* to itself, not taken yet: fail */
        nk = bfo__op_at(e, k)->next;
        bfo__op_fail_later(e, bfo__op_at(e, k));
    }
    e->self_head = e->self_tail = -1;
    bfo__deferred_note(e);
    bfo__run_failed(e);
    return BFO_OK;
}

/* bfo_engine_left: see THE API near the top. */
static inline int bfo_engine_left(const bfo_engine *e) { return e->left && !e->byes_out; }

/* bfo_engine_rail_heard: see THE API near the top. */
static inline void bfo_engine_rail_heard(bfo_engine *e, int peer, int rail, uint64_t now)
{
    if (peer < 0 || peer >= e->cfg.nranks || peer == e->cfg.rank || rail < 0 ||
        rail >= e->cfg.nrails || e->peers[peer].unreachable)
        return;
    if (now > e->now)
        e->now = now;
    e->peers[peer].rail[rail].last_rx = e->now;
}

/* bfo_engine_host_heard: see THE API near the top. */
static inline void bfo_engine_host_heard(bfo_engine *e, int peer, int rail, uint64_t at)
{
    bfo_rail_link *rs;
    if (peer < 0 || peer >= e->cfg.nranks || peer == e->cfg.rank || rail < 0 ||
        rail >= e->cfg.nrails || e->peers[peer].unreachable)
        return;
    if (at > e->now)
        e->now = at;
    rs = &e->peers[peer].rail[rail];
    if (at > rs->host_rx)
        rs->host_rx = at;
}

/* bfo_engine_progress: see THE API near the top. */
static inline void bfo_engine_progress(bfo_engine *e, uint64_t now)
{
    const bfo_config *c = &e->cfg;
    if (now > e->now)
        e->now = now;
    if (e->stage_wait_head >= 0) /* described data waiting for a staging buffer */
        bfo__stage_kick(e);
    if (BFO__UNLIKELY(e->revoke_sweep)) /* messages on a revoked context */
        bfo__revoke_sweep(e);
    /* This engine was not called for longer than a heartbeat (its caller
     * computed): it heard nothing because it did not listen, so that time
     * is no evidence.  Every UP rail's clocks move on by the gap (never
     * past now): its probe and silence count from before the gap, and what
     * the transports read at this progress (queued meanwhile) is heard. */
    if (e->timers_at && e->now > e->timers_at + c->heartbeat_ns) {
        const uint64_t gap = e->now - e->timers_at;
        for (int i = 0; i < c->nranks; i++)
            for (int k = 0; i != c->rank && k < c->nrails; k++) {
                bfo_rail_link *rs = &e->peers[i].rail[k];
                if (!bfo__live(rs->fsm.cs))
                    continue;
                rs->last_rx = rs->last_rx + gap < e->now ? rs->last_rx + gap : e->now;
                rs->probe_sent = rs->probe_sent + gap < e->now ? rs->probe_sent + gap : e->now;
                if (rs->host_rx)
                    rs->host_rx = rs->host_rx + gap < e->now ? rs->host_rx + gap : e->now;
                if (rs->busy_at)
                    rs->busy_at = rs->busy_at + gap < e->now ? rs->busy_at + gap : e->now;
            }
    }
    e->timers_at = e->now;
    for (int i = 0; i < c->nranks; i++) {
        bfo_peer *p = &e->peers[i];
        uint64_t proc_rx = 0; /* the peer's process last heard, on any rail */
        if (i == c->rank || p->unreachable) {
            /* a peer that said BYE, whose messages sent before it never all came */
            if (p->left == BFO__LEFT_OWED && !e->left &&
                e->now - p->left_at >= c->unreachable_grace_ns)
                bfo__peer_step(e, i, BFO_PEER_EV_GRACE_EXPIRED); /* close_out */
            continue;
        }
        for (int k = 0; k < c->nrails; k++)
            if (p->rail[k].last_rx > proc_rx)
                proc_rx = p->rail[k].last_rx;
        for (int k = 0; k < c->nrails; k++) {
            bfo_rail_link *rs = &p->rail[k];
            switch (rs->fsm.cs) {
            case BFO_RAIL_ST_UP:
            case BFO_RAIL_ST_DEMOTED: {
                /* work waits on it, nothing delivered for a while, and the
                 * peer's process talks (a peer that computes is slow on
                 * every rail: no measure of this one) */
                if (rs->q_bytes && e->now - rs->win_start >= BFO_RATE_LAG_NS &&
                    e->now - rs->win_start >= 4 * rs->lat &&
                    (e->now - proc_rx < BFO_RATE_LAG_NS || (!rs->measured && p->pend_head >= 0)))
                    bfo__rate_lag(e, i, k);
                /* the probe waits from when it went out, or from the last thing
                 * heard, or a heartbeat past the end of a busy spell (the peer's
                 * process was heard again, maybe on another rail first, and has
                 * a backlog to read before it answers here) */
                uint64_t since = rs->last_rx > rs->probe_sent ? rs->last_rx : rs->probe_sent;
                uint64_t quiet = rs->last_rx;
                /* busy: the process silent everywhere since the probe (or
                 * for half a probe timeout: what was heard once just after
                 * it was sent before, and read late, by a process that
                 * then fell silent), its host heard here.  A process that
                 * talks elsewhere does not make this rail busy (below: a
                 * retransmission's time at most; test_busy_peer_heard_
                 * once_after_the_probe_then_silent_is_not_failed) */
                const int host_heard = rs->probe_out && rs->host_rx > rs->probe_sent &&
                                       e->now - rs->host_rx < c->host_timeout_ns; /* since the probe */
                if (host_heard &&
                    (proc_rx <= rs->probe_sent || e->now - proc_rx >= bfo__probe_timeout(e, rs) / 2)) {
                    rs->busy_at = e->now;
                    break;
                }
                if (rs->busy_at && rs->busy_at + c->heartbeat_ns > since)
                    since = rs->busy_at + c->heartbeat_ns; /* may lie ahead of now */
                if (rs->busy_at > quiet)
                    quiet = rs->busy_at;
                /* the process talks elsewhere, and this rail's host has
                 * answered since the probe went out: its path carries
                 * packets both ways, and the frames wait for a lost
                 * segment's retransmission (a shaper's queue overflowing
                 * at 400 Mbit/s: the rail silent 141 ms, its host heard
                 * 4 ms before, failed at 80), so the probe waits at least
                 * half host_timeout_ns, a retransmission timeout or two;
                 * a path that passes the kernel's acknowledgements and
                 * never the frames is mapped out then
                 * (test_host_heard_excuses_a_rail_a_retransmission_long_
                 * when_the_process_talks_elsewhere) */
                uint64_t pt = bfo__probe_timeout(e, rs);
                if (host_heard && pt < c->host_timeout_ns / 2)
                    pt = c->host_timeout_ns / 2;
                if (e->now - quiet >= c->silence_ns)
                    bfo__rail_step(e, i, k, BFO_EV_SILENCE_DETECTED, NULL);
                else if (rs->probe_out && e->now >= since + pt) {
                    if (rs->pt_shift < 3)
                        rs->pt_shift++;
                    rs->pt_good = 0;
                    bfo__rail_step(e, i, k, BFO_EV_PROBE_TIMED_OUT, NULL);
                }
                else if (!rs->probe_out && (e->now - rs->last_rx >= c->heartbeat_ns ||
                                            e->now - rs->last_tx >= c->heartbeat_ns))
                    bfo__rail_step(e, i, k, BFO_EV_HEARTBEAT_DUE, NULL);
                break;
            }
            case BFO_RAIL_ST_PROBING:
                if (e->now - rs->probe_sent >= bfo__probe_timeout(e, rs))
                    bfo__rail_step(e, i, k, BFO_EV_PROBE_TIMED_OUT, NULL);
                break;
            case BFO_RAIL_ST_FAILED:
                if (e->now >= rs->deadline)
                    bfo__rail_step(e, i, k, rs->attempts > c->max_reconnects
                                                ? BFO_EV_RETRIES_EXHAUSTED
                                                : BFO_EV_BACKOFF_EXPIRED,
                                   NULL);
                break;
            default: break;
            }
        }
        if (c->nrails > 1 && !p->unreachable && !p->down_since)
            bfo__rails_review(e, i);
        if (p->fsm.cs == BFO_PEER_ST_DOWN && p->down_since && e->now - p->down_since >= c->unreachable_grace_ns)
            bfo__peer_unreachable(e, i);
    }
    if (c->relay && !e->left)
        bfo__relay_progress(e);
    bfo__run_failed(e);
}

#ifdef __cplusplus
}
#endif
#endif /* BFO_ENGINE_H */
