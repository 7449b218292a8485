// SPDX-License-Identifier: BSD-3-Clause
/* bfo_transport.h - what a transport is: one table of operations.
 *
 * Part of bfo (see bfo.h).  A transport (TCP, verbs, shared memory, the
 * next one) moves bytes over its rails and nothing else: it owns no engine,
 * reads no environment and does no wire-up of its own.  bfo_net (bfo_net.h)
 * owns the engine, keeps a table of transports and calls through it:
 *
 *   down (bfo_net -> transport)            up (transport -> bfo_net)
 *   open, address, start                   through the bfo_sink it was given
 *   backend: post_send, post_write,        (bfo_sink.h): completion, frame,
 *     post_read, reg_mem, dereg_mem,       rail_event, heard, and lookup of
 *     connect, disconnect, rail_caps,      a peer's address when it first
 *     rail_bandwidth (bfo_backend.h,       needs one
 *     with this transport's rail numbers)
 *   progress, wait_fds, fault, stats,
 *   dump, fini, mem_released
 *
 * LIFE
 *   open(&t, args)        its rails (args->rails: the names as the user
 *                         listed them, "tcp:10.0.0.1", "verbs:rxe0",
 *                         "shm"), the engine's configuration, the sink.
 *                         Sets up what the rails need to be reached
 *                         (listening sockets, devices, a segment).
 *   address(t, r, &a)     this rank's address of rail r, to be published
 *                         (opaque, at most BFO_ADDR_MAX bytes).
 *   start(t, job)         every address published; job is one id for the
 *                         whole job (every hello carries it).  From here
 *                         on the engine may call connect(); the peer's
 *                         address comes from sink->lookup.
 *   progress(t, now)      does the I/O, reports to the sink; returns how
 *                         many things it handled (0: nothing to do).  A
 *                         call that finds nothing to do should make no
 *                         system call, or as few as it can.
 *   wait_fds(t, fds, max) the caller is about to sleep in poll(): the
 *                         transport sends what it owes, arms its wake-ups
 *                         and gives the fds that become readable when it
 *                         has work (returns how many), or -1 when it has
 *                         work now and the caller must not sleep.
 *   fini(t)               closes everything, frees everything.
 *
 * A TRANSPORT IS ONE DIRECTORY AND ONE TABLE ROW: backends/NAME/ holds it,
 * exporting `const bfo_transport_ops bfo_NAME_transport`, and bfo_net.c's
 * table of transports lists it (docs/porting.md walks a new transport
 * through this interface).
 *
 * ITS TUNABLES ARE DATA: the row's settings (bfo_setting.h) describe the
 * members of its options struct that can be set by name (from the
 * environment, `bfo run --set`, MCA parameters), its eager_limit what it
 * wants of the engine when it carries every rail, and its stats() fills
 * the counters it keeps (the rest of bfo_rail_stats stays 0); those only
 * it keeps sit in bfo_rail_stats.tp, named by its row's counters.  Nothing
 * outside the transport's own files names its tunables.
 */
#ifndef BFO_TRANSPORT_H
#define BFO_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "bfo_engine.h"
#include "bfo_setting.h"
#include "bfo_sink.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A counter of a transport's own (bfo_transport_ops.counters): what
 * bfo_net_rail_counter and `bfo stream --json` call it, lower case,
 * [a-z0-9_], unique within the transport; and one sentence of what it
 * counts. */
typedef struct bfo_counter_desc {
    const char *name;
    const char *help;
} bfo_counter_desc;

/* The most counters of its own a transport keeps (bfo_rail_stats.tp). */
#define BFO_TP_COUNTERS_MAX 16

/* Every transport's counters for one rail, in one shape (bfo_net_get_stats
 * reports these per engine rail).  A transport leaves at zero what it does
 * not count.  What only one transport counts goes in tp[], described by
 * its row (counters), so that this struct names no transport. */
typedef struct bfo_rail_stats {
    uint64_t frames_tx, frames_rx;   /* frames sent / taken by the engine */
    uint64_t bytes_tx, bytes_rx;     /* their engine bytes (and RDMA bytes this rank moved) */
    uint64_t acks_tx;                /* standalone acknowledgements */
    uint64_t connects, connect_failures;
    uint64_t conn_errors;            /* connections lost: reset, EOF, timeout, replaced */
    uint64_t malformed;              /* connections dropped for malformed input */
    uint64_t completed_ok, completed_failed;
    uint64_t dropped_tx, dropped_rx; /* frames swallowed by the fault hook */
    uint64_t backpressure;           /* frames the engine asked to offer again */
    uint64_t keepalives_tx;          /* back-pressure keepalives sent */
    uint64_t hellos_rejected;        /* incoming connections closed before a valid hello */
    uint64_t hellos_stale;           /* hellos of a dial the peer had given up, refused */
    uint64_t nudges_tx;              /* sent only for the peer's host to answer (TCP: ACK frames for its
                                      * kernel; verbs: zero-byte RDMA WRITEs for its adapter; shm: none,
                                      * its pidfd needs no traffic) */
    uint64_t busy_heard;             /* the peer process silent, its rail vouched for by other evidence
                                      * (TCP: its kernel's acknowledgements; shm: its pidfd; verbs:
                                      * its adapter completing a host probe) */
    uint64_t tp[BFO_TP_COUNTERS_MAX]; /* the transport's own counters: tp[i] is the one its row names
                                       * counters[i] (bfo_net_rail_counter finds one by name) */
} bfo_rail_stats;

/* What open() gets. */
typedef struct bfo_transport_args {
    int rank, size;
    int nrails;                /* this transport's rails, 1..BFO_MAX_RAILS */
    const char *const *rails;  /* their names as listed ("tcp:127.0.0.2", "shm") */
    const unsigned *bandwidth; /* MB/s per rail as configured, 0: the transport's figure */
    const bfo_config *cfg;     /* the engine's configuration, defaults filled in */
    const bfo_sink *sink;      /* where it reports (copied) */
    const void *opt;           /* this transport's own options, or NULL (defaults) */
    int log_level;             /* -1 silent, 1 errors (default), 2 connections, 3 debug */
} bfo_transport_args;

/* What a transport wants of the engine's protocol sizes from a layer that
 * sizes them per transport (pml/bfo; bfo_net itself applies none of them,
 * only eager_limit).  bfo_net_rail_tuning combines the rows of a rail list:
 * each size counts only when this transport is the only one concerned
 * (frag_size: it carries every rail; rdma_*: it is the only transport in
 * use that does RDMA), else the engine's default.  0: the engine's. */
typedef struct bfo_transport_tuning {
    int rdma;              /* 1: its rails may do RDMA (GET, PUT) */
    size_t frag_size;      /* bfo_config.frag_size */
    size_t rdma_min;       /* bfo_config.rdma_min */
    size_t rdma_frag_size; /* bfo_config.rdma_frag_size */
    /* With mem_released: its setting that, set "off", keeps no registration
     * beyond its request, for a layer that cannot call mem_released
     * (bfo_net_options_uncached) */
    const char *cache_setting;
} bfo_transport_tuning;

/* What a transport holds that counts against a process's limits, for a
 * job of a given size (bfo_transport_ops.need): open descriptors
 * (RLIMIT_NOFILE) and locked memory in bytes (RLIMIT_MEMLOCK), each as
 * per peer per rail (times the peers it may reach, times its rails), per
 * rail, and once.  An upper bound: every peer connected on every rail,
 * with what a reconnection holds for a while (the old and the new
 * connection).  bfo_net sums the rows of the rail list and checks the
 * limits against the sum before any transport opens (bfo_limits.h). */
typedef struct bfo_transport_need {
    uint64_t fds_peer, fds_rail, fds;          /* descriptors */
    uint64_t locked_peer, locked_rail, locked; /* bytes pinned (registered for RDMA) */
    int host_only; /* 1: it reaches only the peers on this host (shm): they are its peers */
} bfo_transport_need;

typedef struct bfo_transport_ops {
    const char *name; /* "tcp": rails named "tcp:..."; also the log prefix */
    /* 1 when this rail name is this transport's (a bare address is TCP's) */
    int (*claims)(const char *rail);
    int (*open)(void **out, const bfo_transport_args *a);
    int (*address)(void *t, int rail, bfo_addr *out);
    int (*start)(void *t, uint64_t job);
    void (*backend)(void *t, bfo_backend *be);
    int (*progress)(void *t, uint64_t now);
    int (*wait_fds)(void *t, int *fds, int max);
    /* test hook: the rail's frames vanish silently (on), or stop (off); a
     * transport may treat it as a one-shot failure of the rail instead */
    void (*fault)(void *t, int rail, int on);
    void (*stats)(void *t, int rail, bfo_rail_stats *out);
    void (*dump)(void *t, FILE *f);
    void (*fini)(void *t);
    /* the name of one of its own error codes, NULL for any other code */
    const char *(*errname)(int rc);
    /* Optional (NULL: every peer that published a rail of this transport
     * may be reached): 0 when this rail can never reach that peer, whose
     * published address is addr (shm: a peer on another host).  bfo_net
     * asks before connect(); the rail is then ABSENT for that peer
     * (RAIL_ABSENT), not failed, and connect() is never called for it. */
    int (*reaches)(void *t, int rail, int peer, const bfo_addr *addr);
    /* Optional (NULL: the transport keeps no registration beyond its
     * dereg_mem).  buf[0..len) went back to the system (unmapped, trimmed,
     * or about to be): drop every registration that overlaps it before
     * that memory can be mapped again, since a kept one still reaches the
     * old pages (bfo_net_mem_released).  Called from memory hooks: from
     * inside munmap, free, brk or madvise, in any thread, possibly one that
     * holds the caller's lock or is inside this transport, and possibly
     * again from inside what the transport does (ibv_dereg_mr can free).
     * So: take no lock but the transport's own for this (held for no more
     * than a scan, never across a call that may free), allocate nothing,
     * call nothing that may unmap; mark the registrations, and deregister
     * them later where it is safe (reg_mem, dereg_mem, progress).  One
     * still in use (the program freed a buffer under a request) is never
     * handed out again and is dropped when its last use ends. */
    void (*mem_released)(void *t, const void *buf, size_t len);
    /* Optional (NULL, 0: nothing to tune by name): its tunables, nsettings
     * rows over its options struct (bfo_transport_args.opt), names unique
     * within the transport.  Appended: a row written before them (with
     * every member up to mem_released, in order) keeps its meaning. */
    const bfo_setting *settings;
    int nsettings;
    /* Optional (0: the engine's default): the eager limit bfo_net gives the
     * engine when every rail is this transport's and neither the program
     * nor BFO_EAGER_LIMIT sets one (TCP: BFO_TCP_EAGER_LIMIT). */
    size_t eager_limit;
    /* Optional (NULL, 0: none): the counters of its own it keeps in
     * bfo_rail_stats.tp, ncounters <= BFO_TP_COUNTERS_MAX; tp[i] is
     * counters[i]. */
    const bfo_counter_desc *counters;
    int ncounters;
    /* Optional (NULL: its name): its rail names' syntax, for the messages
     * that refuse a rail list ("verbs:DEVICE[:PORT][@ADDR]"). */
    const char *rail_syntax;
    /* Optional (NULL: no wishes, no RDMA): bfo_transport_tuning above. */
    const bfo_transport_tuning *tuning;
    /* Optional (NULL: it holds nothing that counts against a limit):
     * bfo_transport_need above, for open(a) (a->sink is NULL here, a->opt
     * its options as open() gets them, defaults not applied yet).  Called
     * before open(); keeps nothing. */
    void (*need)(const bfo_transport_args *a, bfo_transport_need *out);
} bfo_transport_ops;

#ifdef __cplusplus
}
#endif
#endif /* BFO_TRANSPORT_H */
