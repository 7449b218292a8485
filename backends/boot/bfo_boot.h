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
 *                      in one round; AUTHENTICATION below), BFO_AUTH_FD
 *                      and, for rank 0, BFO_BOOTSTRAP_FD; or, with neither BFO_RANK nor
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
 * AUTHENTICATION (BFO_BOOTSTRAP; docs/failure-model.md, "Threat model").
 *   Every rank holds the job's membership key (bfo_auth.h): `bfo run`
 *   passes it through an inherited pipe (BFO_AUTH_FD), by hand it is a
 *   file only its user can read (BFO_AUTH_KEYFILE, the same on every
 *   rank).  Rank 0 registers a rank only when its registration is MACed
 *   with the key over rank 0's fresh nonce, and proves the key to it first;
 *   the table it sends is MACed for each rank over that rank's nonce.  A
 *   rank registers once: a second process claiming a registered rank is
 *   refused and said on stderr (the first keeps its registration); a
 *   registered rank whose connection closes before the table is
 *   unregistered (it may try again).  Each connection has its own
 *   deadline to register (BFO_BOOTSTRAP_CONN_TIMEOUT_MS, default 5000):
 *   a silent one is dropped and never holds the others up.  Rank 0 serves
 *   on the listening socket it inherits (BFO_BOOTSTRAP_FD, bound by `bfo
 *   run` before any rank starts: no port is left free between choice and
 *   bind), else binds BFO_BOOTSTRAP's address itself.  With no key at all
 *   (by hand, no BFO_AUTH_KEYFILE) the same protocol runs with an all-zero
 *   key, said by rank 0 on stderr: nothing is authenticated then.
 *
 * WIRE (BFO_BOOTSTRAP).  Little-endian.  MAC: HMAC-SHA-256 under the group
 *   key (bfo_auth.h) over u8 |label| | label | the fields listed.
 *     rank > 0 -> 0  HELLO      u32 BFO_BOOT_HELLO, u32 rank, nonce_c[16]
 *     0 -> rank      CHALLENGE  u32 BFO_BOOT_CHALLENGE, u32 size, nonce_s[16],
 *                               MAC("bfo boot server v1": nonce_c nonce_s
 *                               u32 rank u32 size)
 *     rank > 0 -> 0  REGISTER   u32 length, the card, MAC("bfo boot client
 *                               v1": nonce_c nonce_s u32 rank u32 length card)
 *     0 -> rank      TABLE      u32 BFO_BOOT_TABLE, u32 body length, body =
 *                               (u32 size, u64 job, per rank u32 length and
 *                               card), MAC("bfo boot table v1": nonce_c
 *                               nonce_s u32 rank body)
 *     0 -> rank      REFUSE     u32 BFO_BOOT_REFUSE, u32 why (instead of
 *                               CHALLENGE or TABLE; then closed)
 *   A rank checks the CHALLENGE's MAC before it sends its card, and the
 *   TABLE's before it reads a byte of it.
 */
#ifndef BFO_BOOT_H
#define BFO_BOOT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BFO_BOOT_ERR_EXCHANGE (-101) /* was BFO_TCP_ERR_BOOTSTRAP: the same number */
/* the bootstrap's messages (WIRE above); 0xBF0B0076 was the unauthenticated
 * protocol's, refused now */
#define BFO_BOOT_HELLO 0xBF0B0A01u
#define BFO_BOOT_CHALLENGE 0xBF0B0A02u
#define BFO_BOOT_TABLE 0xBF0B0A03u
#define BFO_BOOT_REFUSE 0xBF0B0AFFu
#define BFO_BOOT_REFUSE_TAKEN 1     /* another process registered that rank */
#define BFO_BOOT_REFUSE_KEY 2       /* the registration's MAC is wrong */
#define BFO_BOOT_REFUSE_MALFORMED 3
#define BFO_BOOT_CARD_MAX 4096 /* bytes of one rank's card */

typedef struct bfo_boot bfo_boot;
struct bfo_auth;

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

/* The membership key's state (bfo_auth.h) of a BFO_BOOTSTRAP or PMIx
 * wire-up that was given a key (BFO_AUTH_FD, BFO_AUTH_KEYFILE), for the
 * connections' handshake and the beacons; NULL otherwise (no key, the
 * caller's own: bfo_net then makes its own).  Owned by b.  Its public key
 * goes into this rank's card (bfo_auth_public); its job id is set by a
 * successful bfo_boot_publish (the pair keys bind it), so
 * bfo_auth_set_peer comes after that, with the public key from the peer's
 * card. */
struct bfo_auth *bfo_boot_auth(const bfo_boot *b);

/* 1 for a BFO_BOOTSTRAP wire-up of more than one rank given no key: the
 * bootstrap ran with an all-zero key (rank 0 said so on stderr, once), so
 * the public keys in the cards prove nothing; 0 otherwise. */
int bfo_boot_unkeyed(const bfo_boot *b);

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
