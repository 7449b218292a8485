// SPDX-License-Identifier: BSD-3-Clause
/* bfo_auth.h - who belongs to the job, and proof of it: the membership key,
 * each rank's identity key pair, the key of every pair of ranks, MACs,
 * a replay window per peer and the three-message connection handshake.
 *
 * Part of bfo (see bfo.h).  Built on libsodium (docs/failure-model.md,
 * "Threat model": why that library); the engine's headers (include/fsm/)
 * know nothing of it: only the backends link it.
 *
 * KEYS.  The job's membership key M (32 bytes) is given to every rank by
 * whoever starts the job (`bfo run` through an inherited pipe,
 * BFO_AUTH_FD; by hand a file only its user can read, BFO_AUTH_KEYFILE;
 * an embedding layer through bfo_auth_init).  Each rank makes its own
 * X25519 key pair at bfo_auth_init; its public key goes into its card
 * (the integrator publishes it) and a peer's is given here with
 * bfo_auth_set_peer.  The key of the pair (i, j) is
 *
 *   HKDF-SHA-256(salt = M, ikm = X25519(sk_i, pk_j),
 *                info = "bfo pair v1" | u32 min(i,j) | u32 max(i,j) | u64 job
 *                       | pk_min | pk_max)
 *
 * (RFC 5869, built from libsodium 1.0.18's HMAC-SHA-256: that release has
 * no crypto_kdf_hkdf_*).  Both ends compute the same key; a third member
 * cannot (it lacks sk_i and sk_j); an outsider cannot compute any (it
 * lacks M).  The group key, for what every member may check (the
 * bootstrap), is HKDF-Expand(HKDF-Extract(0, M), "bfo group v1").
 *
 * MACs are HMAC-SHA-256 over u8 length of the label | the label | the
 * message: a label names what is authenticated, so that a MAC made for
 * one purpose is never taken for another.  Checks are in constant time
 * (sodium_memcmp inside crypto_auth_hmacsha256_verify).
 *
 * The environment is read by bfo_boot (bfo_boot.h), not here.
 *
 * MEMORY.  bfo_auth_init allocates everything: the secret keys (M, the
 * group key, this rank's X25519 secret, one pair key per rank) in one area
 * from sodium_malloc (its own mapping between guard pages, mlock'ed when
 * RLIMIT_MEMLOCK allows, madvise(MADV_DONTDUMP): out of core dumps), made
 * read-only between bfo_auth_set_peer calls; the peers' public state (public
 * key, replay window, send sequence) from calloc.  Nothing allocates
 * afterwards.  bfo_auth_free wipes the secrets (sodium_free zeroes them)
 * and the rest (sodium_memzero).
 *
 * THREADS.  One bfo_auth per rank; calls on one peer are not safe against
 * each other (the caller's lock, as for the engine).  bfo_auth_set_peer
 * changes the protection of the whole key area: not concurrently with
 * anything else on the same bfo_auth.
 *
 * WIRE.  Little-endian, fixed lengths (docs/protocol.md, "Authentication").
 */
#ifndef BFO_AUTH_H
#define BFO_AUTH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BFO_AUTH_KEY_LEN 32   /* the membership key, pair keys */
#define BFO_AUTH_PUB_LEN 32   /* an X25519 public key */
#define BFO_AUTH_MAC_LEN 32   /* HMAC-SHA-256 */
#define BFO_AUTH_NONCE_LEN 16
#define BFO_AUTH_WINDOW 64    /* sequence numbers a replay window remembers */
#define BFO_AUTH_GROUP (-1)   /* as a peer: the group key (every member's) */

/* the handshake's messages (bfo_auth_hs_*): their lengths on the wire */
#define BFO_AUTH_HELLO_LEN 40
#define BFO_AUTH_REPLY_LEN 64
#define BFO_AUTH_CONFIRM_LEN 48
#define BFO_AUTH_VERSION 1

typedef struct bfo_auth bfo_auth;

/* One part of a message MACed in pieces (bfo_auth_macv). */
typedef struct bfo_auth_part {
    const void *p;
    size_t len;
} bfo_auth_part;

/* A handshake in progress, on one side (the caller's memory: one per
 * connection attempt, nothing allocated).  Opaque: set by the
 * bfo_auth_hs_* functions only. */
typedef struct bfo_auth_hs {
    uint8_t transcript[BFO_AUTH_HELLO_LEN + BFO_AUTH_REPLY_LEN];
    int peer, rail, step, dialer;
    uint32_t attempt;
} bfo_auth_hs;

/* Makes a rank's state: its X25519 key pair (fresh), the group key, room
 * for size peers.  membership_key: BFO_AUTH_KEY_LEN bytes (copied into the
 * guarded area; the caller wipes its copy).  job: the job id that goes
 * into the pair keys (0 when not known yet: bfo_auth_set_job before the
 * first bfo_auth_set_peer).  BFO_OK, BFO_ERR_INVALID (rank, size),
 * BFO_ERR_NO_MEMORY (also: libsodium would not start). */
int bfo_auth_init(bfo_auth **out, const uint8_t *membership_key, int rank, int size, uint64_t job);

/* The job id of the pair keys; only before the first bfo_auth_set_peer
 * (BFO_ERR_INVALID after). */
int bfo_auth_set_job(bfo_auth *a, uint64_t job);

/* This rank's public key (BFO_AUTH_PUB_LEN bytes), to publish in its card. */
void bfo_auth_public(const bfo_auth *a, uint8_t *out);

/* A peer's public key, from its card: derives the pair key and clears
 * the peer's replay window (a new key pair is a new process: its sequence
 * numbers start again).  BFO_ERR_INVALID for this rank, a rank out of
 * range, or a public key of small order (X25519 gives all zeroes). */
int bfo_auth_set_peer(bfo_auth *a, int peer, const uint8_t *pk);

/* 1 when the peer's public key was set (a pair key exists), else 0. */
int bfo_auth_has_peer(const bfo_auth *a, int peer);

/* BFO_AUTH_NONCE_LEN random bytes (the kernel's generator). */
void bfo_auth_nonce(uint8_t *out);

/* The MAC of label and msg under the pair key of (this rank, peer), or the
 * group key with peer BFO_AUTH_GROUP.  BFO_ERR_INVALID when there is no
 * such key (peer unset or out of range). */
int bfo_auth_mac(const bfo_auth *a, int peer, const char *label, const void *msg, size_t len, uint8_t *out);
int bfo_auth_macv(const bfo_auth *a, int peer, const char *label, const bfo_auth_part *parts, int n, uint8_t *out);

/* BFO_OK when mac is the MAC of label and msg (constant time), else
 * BFO_ERR_INVALID (also for no key). */
int bfo_auth_verify(const bfo_auth *a, int peer, const char *label, const void *msg, size_t len, const uint8_t *mac);
int bfo_auth_verifyv(const bfo_auth *a, int peer, const char *label, const bfo_auth_part *parts, int n,
                     const uint8_t *mac);

/* ------------------------------------------------ replay window, beacons
 *
 * Per peer: the highest sequence number accepted and a bitmap of the
 * BFO_AUTH_WINDOW below it.  bfo_auth_replay_check only reads (fresh or
 * not); bfo_auth_replay_accept moves the window, and must be called only
 * for a sequence whose MAC verified: a forged high sequence then cannot
 * push the window past the real ones.  Sequence 0 is never fresh. */

/* BFO_OK when seq is fresh (above the highest, or within the window and
 * not seen), BFO_ERR_INVALID when seen or too old. */
int bfo_auth_replay_check(const bfo_auth *a, int peer, uint64_t seq);
/* Marks seq seen, moving the window when seq is the highest; checks again
 * (BFO_ERR_INVALID when not fresh: nothing changed). */
int bfo_auth_replay_accept(bfo_auth *a, int peer, uint64_t seq);

/* The next sequence number for a beacon to peer (1, 2, ...). */
uint64_t bfo_auth_beacon_seq(bfo_auth *a, int peer);
/* The MAC of a beacon: label "bfo beacon v1", u64 seq, then msg. */
int bfo_auth_beacon_mac(const bfo_auth *a, int peer, uint64_t seq, const void *msg, size_t len, uint8_t *out);
/* A beacon from peer: fresh (replay_check), its MAC right, then accepted
 * (the window moves).  BFO_OK, or BFO_ERR_INVALID with nothing changed. */
int bfo_auth_beacon_verify(bfo_auth *a, int peer, uint64_t seq, const void *msg, size_t len, const uint8_t *mac);

/* ----------------------------------------------------------- handshake
 *
 * The dialer D and the acceptor A of one connection (a rail), pure
 * functions: the caller moves the bytes.
 *   D: bfo_auth_hs_hello       -> HELLO   (nonce_d, D's rank, rail, size,
 *                                          attempt, job)
 *   A: bfo_auth_hs_read_hello  <- HELLO   (checks size, job, ranks)
 *   A: bfo_auth_hs_reply       -> REPLY   (nonce_a, MAC_A over HELLO and
 *                                          the REPLY's fields)
 *   D: bfo_auth_hs_read_reply  <- REPLY   (MAC_A: A holds the pair key and
 *                                          answered this HELLO)
 *   D: bfo_auth_hs_confirm     -> CONFIRM (MAC_D over HELLO and REPLY)
 *   A: bfo_auth_hs_read_confirm<- CONFIRM (D holds the pair key and saw
 *                                          this nonce_a)
 * Each returns BFO_OK or BFO_ERR_INVALID (malformed, wrong step, a
 * field that is not the job's, a MAC that does not verify: the connection
 * is to be closed).  The connection counts as authenticated on A after
 * read_confirm, on D after read_reply. */
int bfo_auth_hs_hello(const bfo_auth *a, bfo_auth_hs *hs, int peer, int rail, uint32_t attempt, uint8_t *out);
/* The dialer's rank, rail and attempt into *peer, *rail, *attempt. */
int bfo_auth_hs_read_hello(const bfo_auth *a, bfo_auth_hs *hs, const uint8_t *in, size_t len, int *peer, int *rail,
                           uint32_t *attempt);
int bfo_auth_hs_reply(const bfo_auth *a, bfo_auth_hs *hs, uint8_t *out);
int bfo_auth_hs_read_reply(const bfo_auth *a, bfo_auth_hs *hs, const uint8_t *in, size_t len);
int bfo_auth_hs_confirm(const bfo_auth *a, bfo_auth_hs *hs, uint8_t *out);
int bfo_auth_hs_read_confirm(const bfo_auth *a, bfo_auth_hs *hs, const uint8_t *in, size_t len);

/* Wipes every key (secret and public) and every window, keeping the
 * memory: every MAC, verify and handshake call fails afterwards.  (A rank
 * whose job is over, or that is told it was excluded.) */
void bfo_auth_wipe(bfo_auth *a);

/* bfo_auth_wipe, then frees (the key area is zeroed again and unmapped;
 * NULL: nothing). */
void bfo_auth_free(bfo_auth *a);

/* ------------------------------------------------ the membership key */

/* A fresh membership key (BFO_AUTH_KEY_LEN random bytes): `bfo run`. */
int bfo_auth_keygen(uint8_t *out);

/* Zeroes a caller's copy of a key (BFO_AUTH_KEY_LEN bytes) so that the
 * compiler cannot leave the stores out. */
void bfo_auth_wipe_key(uint8_t *key);

/* Reads the membership key into key from what bfo_boot found in the
 * environment (this module reads no variable): fd, BFO_AUTH_FD's value
 * (an inherited descriptor, `bfo run`: exactly BFO_AUTH_KEY_LEN bytes,
 * then closed; kept, guarded, for a later call with the same value), else
 * file, BFO_AUTH_KEYFILE's (a regular file of this user's, not readable or
 * writable by group or others, holding 64 hex digits and an optional
 * newline).  NULL or "": not given.  Returns 1 (read), 0 (neither given)
 * or -1 (given but not usable: said on stderr with why). */
int bfo_auth_key_read(const char *fd, const char *file, uint8_t *key);

/* Where the key was read from by the last bfo_auth_key_read (a static
 * string: "BFO_AUTH_FD", "BFO_AUTH_KEYFILE /path", "" when none). */
const char *bfo_auth_key_source(void);

/* The guarded area's address and length (tests: to find its mapping in
 * /proc/self/smaps). */
const void *bfo_auth_key_area(const bfo_auth *a, size_t *len);

#ifdef __cplusplus
}
#endif
#endif /* BFO_AUTH_H */
