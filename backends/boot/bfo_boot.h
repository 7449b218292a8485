// SPDX-License-Identifier: BSD-3-Clause
/* bfo_boot.h - the job's wire-up: who am I, how many are we, and where do
 * the others listen.  Publish and lookup, the way MPI runtimes do it.
 *
 * Part of bfo (see bfo.h).  At init a rank publishes one card (bfo_net
 * writes it: every rail's transport and opaque address) and later looks a
 * peer's card up when it first needs it.  Three ways to do that:
 *
 *   bfo_boot_env       what `bfo run` sets: BFO_RANK, BFO_SIZE and
 *                      BFO_BOOTSTRAP=ADDR:PORT (rank 0 listens there, the
 *                      others connect to it: every card reaches every rank
 *                      in one round); or, with neither BFO_RANK nor
 *                      BFO_SIZE set and PMIX_RANK or PMIX_NAMESPACE set
 *                      (Open MPI's mpirun), PMIx: PMIx_Put, PMIx_Commit and
 *                      a fence at publish, PMIx_Get at lookup (built when
 *                      the Makefile finds <pmix.h>).
 *   bfo_boot_custom    the caller's own publish and lookup (an MPI layer's
 *                      modex: publish during component init, lookup when a
 *                      peer is added).  Rank, size and job id are given.
 *
 * Failures.  The launcher that saw a process exit may say so: `bfo run`
 * gives each rank the read end of a pipe (BFO_LAUNCHER_FD=N) and writes
 * one line "failed R\n" to every surviving rank when rank R ends with a
 * signal or a nonzero exit (and it keeps the others running: --keep-going).
 * bfo_boot_failures reads them; bfo_net declares those processes dead
 * (bfo_peer_failed, docs/failure-model.md).  With the caller's own wire-up
 * there is none: the caller reports failures itself (bfo_net_peer_failed).
 *
 * Reading the environment happens here and nowhere else: neither the
 * engine nor a transport reads a variable.  The few settings read from it
 * (BFO_RAILS, the log levels) are read through bfo_boot_getenv.
 *
 * ERRORS: BFO_OK; BFO_ERR_INVALID (a variable missing or malformed, said on
 *   stderr with its name); BFO_ERR_NO_MEMORY; BFO_BOOT_ERR_EXCHANGE (the
 *   exchange failed or timed out, or a peer published nothing).
 *
 * WIRE (BFO_BOOTSTRAP).  Little-endian.  A rank > 0 connects to rank 0 and
 *   sends u32 magic BFO_BOOT_MAGIC, u32 rank, u32 card length, the card.
 *   Rank 0, once it has every rank's card, answers each with u32 magic,
 *   u32 size, u64 job, then per rank u32 length and the card.
 */
#ifndef BFO_BOOT_H
#define BFO_BOOT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BFO_BOOT_ERR_EXCHANGE (-101) /* was BFO_TCP_ERR_BOOTSTRAP: the same number */
#define BFO_BOOT_MAGIC 0xBF0B0076u
#define BFO_BOOT_CARD_MAX 4096 /* bytes of one rank's card */

typedef struct bfo_boot bfo_boot;

/* The caller's own wire-up (an MPI layer's modex). */
typedef struct bfo_boot_ops {
    void *ctx;
    /* Publishes this rank's card; called once, from bfo_boot_publish.  When
     * it returns, every rank that later looks it up must find it (do the
     * fence here, if the runtime needs one). */
    int (*publish)(void *ctx, const void *card, size_t len);
    /* A peer's card: at most cap bytes into buf, its length in *len.
     * BFO_OK, or an error code (the peer published nothing). */
    int (*lookup)(void *ctx, int rank, void *buf, size_t cap, size_t *len);
    /* Optional: called at bfo_boot_fini. */
    void (*fini)(void *ctx);
    /* 1: a card published is found only after a fence that the runtime
     * runs later, after publish returns (Open MPI's modex: components
     * publish during their init, MPI_Init fences after).  bfo_net then
     * looks no card up, and dials nobody, before its first
     * bfo_net_progress; call that only once the fence is done.  0: cards
     * are there when publish returns. */
    int lookup_later;
} bfo_boot_ops;

/* From the environment (see above).  timeout_ns bounds the exchange (0:
 * 30 s).  Says on stderr what is wrong when it fails. */
int bfo_boot_env(bfo_boot **out, uint64_t timeout_ns);

/* The caller's: rank and size given, job one id the same on every rank
 * (it goes into every transport's hello), ops copied. */
int bfo_boot_custom(bfo_boot **out, int rank, int size, uint64_t job, const bfo_boot_ops *ops);

int bfo_boot_rank(const bfo_boot *b);
int bfo_boot_size(const bfo_boot *b);
/* 1 when cards may be looked up only after the caller's later fence
 * (bfo_boot_ops.lookup_later), else 0. */
int bfo_boot_lookup_later(const bfo_boot *b);
/* Valid after bfo_boot_publish (the environment's server makes it up). */
uint64_t bfo_boot_job(const bfo_boot *b);
/* "BFO_BOOTSTRAP 127.0.0.1:4000", "PMIx", "the caller's publish and lookup" */
const char *bfo_boot_via(const bfo_boot *b);

/* Publishes this rank's card (len <= BFO_BOOT_CARD_MAX): with
 * BFO_BOOTSTRAP, the one round that gets everyone's (blocking). */
int bfo_boot_publish(bfo_boot *b, const void *card, size_t len);

/* A peer's card (this rank's own too). */
int bfo_boot_lookup(bfo_boot *b, int rank, void *buf, size_t cap, size_t *len);

void bfo_boot_fini(bfo_boot *b);

/* The file descriptor the launcher reports failures on (BFO_LAUNCHER_FD;
 * readable when a report waits), or -1 when there is none. */
int bfo_boot_failures_fd(const bfo_boot *b);

/* The ranks the launcher reported failed since the last call, at most max
 * of them into ranks (the rest at the next call); never blocks.  Returns
 * how many, 0 when none waits; a line that is not "failed R" with R a
 * rank of the job is said on stderr and skipped.  When the launcher is
 * gone (its end closed) the descriptor is closed and -1 comes after
 * every report was read: nobody will report failures any more. */
int bfo_boot_failures(bfo_boot *b, int *ranks, int max);

/* A setting from the environment, or NULL when unset or empty. */
const char *bfo_boot_getenv(const char *name);

/* Reads BFO_RANK and BFO_SIZE (as bfo run sets them): 0 when both are set
 * and 0 <= rank < size, else -1 (nothing written). */
int bfo_boot_env_rank(int *rank, int *size);

/* Why bfo_boot_env_rank returns -1, for a message: which of BFO_RANK and
 * BFO_SIZE is missing or not a number, or that BFO_RANK is not below
 * BFO_SIZE (a static string; "" when both are fine). */
const char *bfo_boot_env_rank_error(void);

/* Parses "ADDR:PORT" (IPv4 dotted quad, port 1-65535; BFO_BOOTSTRAP's
 * form); 0 on success, -1 (nothing written to port) otherwise.  ip in host
 * byte order. */
int bfo_boot_parse_hostport(const char *s, uint32_t *ip, uint16_t *port);

/* "BFO_BOOT_ERR_EXCHANGE", or bfo_errname(rc). */
const char *bfo_boot_errname(int rc);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t bfo_boot_now(void);

#ifdef __cplusplus
}
#endif
#endif /* BFO_BOOT_H */
