// SPDX-License-Identifier: BSD-3-Clause
/* bfo_auth.c - membership, identity keys, pair keys, MACs, replay windows
 * and the connection handshake (see bfo_auth.h). */
#define _GNU_SOURCE
#include "bfo_auth.h"
#include "bfo_core.h"
#include "bfo_le.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The guarded area: the membership key, the group key, this rank's X25519
 * secret, then one pair key per rank (the slot of this rank unused). */
enum { K_MEMBER = 0, K_GROUP = 32, K_SECRET = 64, K_PAIRS = 96 };

typedef struct peer {
    uint8_t pk[BFO_AUTH_PUB_LEN];
    uint64_t high;   /* highest sequence accepted (0: none) */
    uint64_t seen;   /* bit k: high - k accepted */
    uint64_t send;   /* the last beacon sequence given out to it */
    int has;         /* pk set, pair key derived */
} peer;

struct bfo_auth {
    int rank, size, peers_set, wiped;
    uint64_t job;
    uint8_t *keys; /* sodium_malloc: K_PAIRS + size * 32 */
    size_t keys_len;
    uint8_t pk[BFO_AUTH_PUB_LEN];
    peer *peers;
};

/* ------------------------------------------------------------ HMAC, HKDF */

/* HMAC-SHA-256 under key over u8 |label| | label | the parts (no label
 * when label is NULL: HKDF's own steps). */
static void hmac(const uint8_t *key, size_t klen, const char *label, const bfo_auth_part *parts, int n, uint8_t *out)
{
    crypto_auth_hmacsha256_state st;
    crypto_auth_hmacsha256_init(&st, key, klen);
    if (label) {
        size_t ll = strlen(label);
        uint8_t l8 = (uint8_t)(ll > 255 ? 255 : ll);
        crypto_auth_hmacsha256_update(&st, &l8, 1);
        crypto_auth_hmacsha256_update(&st, (const uint8_t *)label, l8);
    }
    for (int i = 0; i < n; i++)
        if (parts[i].len)
            crypto_auth_hmacsha256_update(&st, (const uint8_t *)parts[i].p, parts[i].len);
    crypto_auth_hmacsha256_final(&st, out);
    sodium_memzero(&st, sizeof st);
}

/* HKDF-SHA-256 (RFC 5869) for one block of output (32 bytes):
 * PRK = HMAC(salt, ikm); OKM = HMAC(PRK, info | 0x01). */
static void hkdf32(const uint8_t *salt, size_t slen, const uint8_t *ikm, size_t ilen, const bfo_auth_part *info,
                   int n, uint8_t *out)
{
    uint8_t prk[32], one = 1;
    bfo_auth_part in = { ikm, ilen }, parts[8];
    hmac(salt, slen, NULL, &in, 1, prk);
    for (int i = 0; i < n && i < 7; i++)
        parts[i] = info[i];
    parts[n < 7 ? n : 7] = (bfo_auth_part){ &one, 1 };
    hmac(prk, sizeof prk, NULL, parts, (n < 7 ? n : 7) + 1, out);
    sodium_memzero(prk, sizeof prk);
}

/* ---------------------------------------------------------------- state */

static int in_range(const bfo_auth *a, int peer) { return a && peer >= 0 && peer < a->size; }

int bfo_auth_init(bfo_auth **out, const uint8_t *membership_key, int rank, int size, uint64_t job)
{
    static const char group[] = "bfo group v1";
    bfo_auth *a;
    uint8_t zero[32] = { 0 };
    bfo_auth_part info = { group, sizeof group - 1 };
    *out = NULL;
    if (!membership_key || size < 1 || rank < 0 || rank >= size || (size_t)size > (SIZE_MAX - K_PAIRS) / 64)
        return BFO_ERR_INVALID;
    if (sodium_init() < 0)
        return BFO_ERR_NO_MEMORY;
    a = (bfo_auth *)calloc(1, sizeof *a);
    if (!a)
        return BFO_ERR_NO_MEMORY;
    a->rank = rank;
    a->size = size;
    a->job = job;
    a->keys_len = K_PAIRS + (size_t)size * BFO_AUTH_KEY_LEN;
    a->keys = (uint8_t *)sodium_malloc(a->keys_len);
    a->peers = (peer *)calloc((size_t)size, sizeof *a->peers);
    if (!a->keys || !a->peers) {
        if (a->keys)
            sodium_free(a->keys);
        free(a->peers);
        free(a);
        return BFO_ERR_NO_MEMORY;
    }
    sodium_memzero(a->keys, a->keys_len); /* sodium_malloc fills with 0xdb */
    memcpy(a->keys + K_MEMBER, membership_key, BFO_AUTH_KEY_LEN);
    hkdf32(zero, sizeof zero, membership_key, BFO_AUTH_KEY_LEN, &info, 1, a->keys + K_GROUP);
    randombytes_buf(a->keys + K_SECRET, 32);
    crypto_scalarmult_base(a->pk, a->keys + K_SECRET);
    sodium_mprotect_readonly(a->keys);
    *out = a;
    return BFO_OK;
}

int bfo_auth_set_job(bfo_auth *a, uint64_t job)
{
    if (!a || a->peers_set)
        return BFO_ERR_INVALID;
    a->job = job;
    return BFO_OK;
}

void bfo_auth_public(const bfo_auth *a, uint8_t *out) { memcpy(out, a->pk, BFO_AUTH_PUB_LEN); }

int bfo_auth_set_peer(bfo_auth *a, int p, const uint8_t *pk)
{
    static const char pair[] = "bfo pair v1";
    uint8_t shared[32], ends[16];
    const uint8_t *pk_lo, *pk_hi;
    int lo, hi, rc = BFO_OK;
    if (!in_range(a, p) || p == a->rank || !pk || a->wiped)
        return BFO_ERR_INVALID;
    sodium_mprotect_readwrite(a->keys);
    /* X25519 refuses (-1) a public key whose shared secret is all zeroes */
    if (crypto_scalarmult(shared, a->keys + K_SECRET, pk) != 0) {
        rc = BFO_ERR_INVALID;
        goto out;
    }
    lo = p < a->rank ? p : a->rank;
    hi = p < a->rank ? a->rank : p;
    pk_lo = lo == a->rank ? a->pk : pk;
    pk_hi = hi == a->rank ? a->pk : pk;
    bfo_put32(ends, (uint32_t)lo);
    bfo_put32(ends + 4, (uint32_t)hi);
    bfo_put64(ends + 8, a->job);
    {
        bfo_auth_part info[4] = { { pair, sizeof pair - 1 }, { ends, 16 }, { pk_lo, 32 }, { pk_hi, 32 } };
        hkdf32(a->keys + K_MEMBER, BFO_AUTH_KEY_LEN, shared, sizeof shared, info, 4,
               a->keys + K_PAIRS + (size_t)p * BFO_AUTH_KEY_LEN);
    }
    memcpy(a->peers[p].pk, pk, BFO_AUTH_PUB_LEN);
    a->peers[p].high = a->peers[p].seen = a->peers[p].send = 0;
    a->peers[p].has = 1;
    a->peers_set = 1;
out:
    sodium_memzero(shared, sizeof shared);
    sodium_mprotect_readonly(a->keys);
    return rc;
}

int bfo_auth_has_peer(const bfo_auth *a, int p) { return in_range(a, p) && a->peers[p].has && !a->wiped; }

void bfo_auth_nonce(uint8_t *out)
{
    if (sodium_init() >= 0)
        randombytes_buf(out, BFO_AUTH_NONCE_LEN);
}

/* The key of peer (BFO_AUTH_GROUP: the group's), or NULL. */
static const uint8_t *key_of(const bfo_auth *a, int p)
{
    if (!a || a->wiped)
        return NULL;
    if (p == BFO_AUTH_GROUP)
        return a->keys + K_GROUP;
    return bfo_auth_has_peer(a, p) && p != a->rank ? a->keys + K_PAIRS + (size_t)p * BFO_AUTH_KEY_LEN : NULL;
}

int bfo_auth_macv(const bfo_auth *a, int p, const char *label, const bfo_auth_part *parts, int n, uint8_t *out)
{
    const uint8_t *k = key_of(a, p);
    if (!k || !label || n < 0)
        return BFO_ERR_INVALID;
    hmac(k, BFO_AUTH_KEY_LEN, label, parts, n, out);
    return BFO_OK;
}

int bfo_auth_mac(const bfo_auth *a, int p, const char *label, const void *msg, size_t len, uint8_t *out)
{
    bfo_auth_part part = { msg, len };
    return bfo_auth_macv(a, p, label, &part, 1, out);
}

int bfo_auth_verifyv(const bfo_auth *a, int p, const char *label, const bfo_auth_part *parts, int n,
                     const uint8_t *mac)
{
    uint8_t want[BFO_AUTH_MAC_LEN];
    int rc = bfo_auth_macv(a, p, label, parts, n, want);
    if (rc == BFO_OK && sodium_memcmp(want, mac, BFO_AUTH_MAC_LEN) != 0)
        rc = BFO_ERR_INVALID;
    sodium_memzero(want, sizeof want);
    return rc;
}

int bfo_auth_verify(const bfo_auth *a, int p, const char *label, const void *msg, size_t len, const uint8_t *mac)
{
    bfo_auth_part part = { msg, len };
    return bfo_auth_verifyv(a, p, label, &part, 1, mac);
}

/* ------------------------------------------------------- replay window */

int bfo_auth_replay_check(const bfo_auth *a, int p, uint64_t seq)
{
    const peer *q;
    if (!bfo_auth_has_peer(a, p) || seq == 0)
        return BFO_ERR_INVALID;
    q = &a->peers[p];
    if (seq > q->high)
        return BFO_OK;
    if (q->high - seq >= BFO_AUTH_WINDOW)
        return BFO_ERR_INVALID; /* too old to tell */
    return q->seen >> (q->high - seq) & 1 ? BFO_ERR_INVALID : BFO_OK;
}

int bfo_auth_replay_accept(bfo_auth *a, int p, uint64_t seq)
{
    peer *q;
    if (bfo_auth_replay_check(a, p, seq) != BFO_OK)
        return BFO_ERR_INVALID;
    q = &a->peers[p];
    if (seq > q->high) {
        uint64_t shift = seq - q->high;
        q->seen = shift >= BFO_AUTH_WINDOW ? 0 : q->seen << shift;
        q->seen |= 1;
        q->high = seq;
    } else
        q->seen |= 1ull << (q->high - seq);
    return BFO_OK;
}

uint64_t bfo_auth_beacon_seq(bfo_auth *a, int p) { return bfo_auth_has_peer(a, p) ? ++a->peers[p].send : 0; }

static const char beacon_label[] = "bfo beacon v1";

int bfo_auth_beacon_mac(const bfo_auth *a, int p, uint64_t seq, const void *msg, size_t len, uint8_t *out)
{
    uint8_t s[8];
    bfo_auth_part parts[2] = { { s, 8 }, { msg, len } };
    bfo_put64(s, seq);
    return bfo_auth_macv(a, p, beacon_label, parts, 2, out);
}

int bfo_auth_beacon_verify(bfo_auth *a, int p, uint64_t seq, const void *msg, size_t len, const uint8_t *mac)
{
    uint8_t s[8];
    bfo_auth_part parts[2] = { { s, 8 }, { msg, len } };
    if (p == BFO_AUTH_GROUP || bfo_auth_replay_check(a, p, seq) != BFO_OK)
        return BFO_ERR_INVALID;
    bfo_put64(s, seq);
    if (bfo_auth_verifyv(a, p, beacon_label, parts, 2, mac) != BFO_OK)
        return BFO_ERR_INVALID; /* forged: the window does not move */
    return bfo_auth_replay_accept(a, p, seq);
}

/* ------------------------------------------------------------ handshake */

enum { HS_HELLO = 1, HS_REPLY = 2, HS_CONFIRM = 3 };
static const char reply_label[] = "bfo hs reply v1", confirm_label[] = "bfo hs confirm v1";

static void hs_head(uint8_t *p, int type, int rail)
{
    p[0] = (uint8_t)type;
    p[1] = BFO_AUTH_VERSION;
    bfo_put16(p + 2, (uint16_t)rail);
}

static int hs_head_ok(const uint8_t *p, int type) { return p[0] == type && p[1] == BFO_AUTH_VERSION; }

int bfo_auth_hs_hello(const bfo_auth *a, bfo_auth_hs *hs, int p, int rail, uint32_t attempt, uint8_t *out)
{
    uint8_t *h = hs->transcript;
    if (!key_of(a, p) || rail < 0 || rail > 0xffff)
        return BFO_ERR_INVALID;
    memset(hs, 0, sizeof *hs);
    hs_head(h, HS_HELLO, rail);
    bfo_put32(h + 4, (uint32_t)a->rank);
    bfo_put32(h + 8, (uint32_t)a->size);
    bfo_put32(h + 12, attempt);
    bfo_put64(h + 16, a->job);
    bfo_auth_nonce(h + 24);
    hs->peer = p;
    hs->rail = rail;
    hs->attempt = attempt;
    hs->dialer = 1;
    hs->step = 1;
    memcpy(out, h, BFO_AUTH_HELLO_LEN);
    return BFO_OK;
}

int bfo_auth_hs_read_hello(const bfo_auth *a, bfo_auth_hs *hs, const uint8_t *in, size_t len, int *peer_out,
                           int *rail, uint32_t *attempt)
{
    uint32_t d;
    if (!a || a->wiped || len != BFO_AUTH_HELLO_LEN || !hs_head_ok(in, HS_HELLO) ||
        bfo_get32(in + 8) != (uint32_t)a->size || bfo_get64(in + 16) != a->job)
        return BFO_ERR_INVALID;
    d = bfo_get32(in + 4);
    if (d >= (uint32_t)a->size || d == (uint32_t)a->rank)
        return BFO_ERR_INVALID;
    if (!bfo_auth_has_peer(a, (int)d))
        return BFO_ERR_AGAIN; /* its card first (bfo_auth_set_peer), then again */
    memset(hs, 0, sizeof *hs);
    memcpy(hs->transcript, in, BFO_AUTH_HELLO_LEN);
    hs->peer = (int)d;
    hs->rail = bfo_get16(in + 2);
    hs->attempt = bfo_get32(in + 12);
    hs->step = 1;
    *peer_out = hs->peer;
    *rail = hs->rail;
    *attempt = hs->attempt;
    return BFO_OK;
}

/* REPLY's first 32 bytes are in transcript + HELLO_LEN; its MAC over HELLO
 * and them. */
static int reply_mac(const bfo_auth *a, const bfo_auth_hs *hs, uint8_t *mac, int check)
{
    bfo_auth_part t = { hs->transcript, BFO_AUTH_HELLO_LEN + 32 };
    return check ? bfo_auth_verifyv(a, hs->peer, reply_label, &t, 1, mac)
                 : bfo_auth_macv(a, hs->peer, reply_label, &t, 1, mac);
}

int bfo_auth_hs_reply(const bfo_auth *a, bfo_auth_hs *hs, uint8_t *out)
{
    uint8_t *r = hs->transcript + BFO_AUTH_HELLO_LEN;
    if (hs->dialer || hs->step != 1 || !key_of(a, hs->peer))
        return BFO_ERR_INVALID;
    hs_head(r, HS_REPLY, hs->rail);
    bfo_put32(r + 4, (uint32_t)a->rank);
    bfo_put32(r + 8, hs->attempt);
    bfo_put32(r + 12, 0);
    bfo_auth_nonce(r + 16);
    reply_mac(a, hs, r + 32, 0);
    memcpy(out, r, BFO_AUTH_REPLY_LEN);
    hs->step = 2;
    return BFO_OK;
}

int bfo_auth_hs_read_reply(const bfo_auth *a, bfo_auth_hs *hs, const uint8_t *in, size_t len)
{
    uint8_t *r = hs->transcript + BFO_AUTH_HELLO_LEN;
    if (!hs->dialer || hs->step != 1 || len != BFO_AUTH_REPLY_LEN || !hs_head_ok(in, HS_REPLY) ||
        bfo_get16(in + 2) != (uint16_t)hs->rail || bfo_get32(in + 4) != (uint32_t)hs->peer ||
        bfo_get32(in + 8) != hs->attempt || bfo_get32(in + 12) != 0)
        return BFO_ERR_INVALID;
    memcpy(r, in, BFO_AUTH_REPLY_LEN);
    if (reply_mac(a, hs, r + 32, 1) != BFO_OK) {
        memset(r, 0, BFO_AUTH_REPLY_LEN);
        return BFO_ERR_INVALID;
    }
    hs->step = 2;
    return BFO_OK;
}

/* CONFIRM's MAC: over HELLO, REPLY and CONFIRM's first 16 bytes. */
static int confirm_mac(const bfo_auth *a, const bfo_auth_hs *hs, const uint8_t *head, uint8_t *mac, int check)
{
    bfo_auth_part t[2] = { { hs->transcript, sizeof hs->transcript }, { head, 16 } };
    return check ? bfo_auth_verifyv(a, hs->peer, confirm_label, t, 2, mac)
                 : bfo_auth_macv(a, hs->peer, confirm_label, t, 2, mac);
}

int bfo_auth_hs_confirm(const bfo_auth *a, bfo_auth_hs *hs, uint8_t *out)
{
    if (!hs->dialer || hs->step != 2 || !key_of(a, hs->peer))
        return BFO_ERR_INVALID;
    hs_head(out, HS_CONFIRM, hs->rail);
    bfo_put32(out + 4, (uint32_t)a->rank);
    bfo_put32(out + 8, hs->attempt);
    bfo_put32(out + 12, 0);
    confirm_mac(a, hs, out, out + 16, 0);
    hs->step = 3;
    return BFO_OK;
}

int bfo_auth_hs_read_confirm(const bfo_auth *a, bfo_auth_hs *hs, const uint8_t *in, size_t len)
{
    if (hs->dialer || hs->step != 2 || len != BFO_AUTH_CONFIRM_LEN || !hs_head_ok(in, HS_CONFIRM) ||
        bfo_get16(in + 2) != (uint16_t)hs->rail || bfo_get32(in + 4) != (uint32_t)hs->peer ||
        bfo_get32(in + 8) != hs->attempt || bfo_get32(in + 12) != 0 ||
        confirm_mac(a, hs, in, (uint8_t *)(uintptr_t)(in + 16), 1) != BFO_OK)
        return BFO_ERR_INVALID;
    hs->step = 3;
    return BFO_OK;
}

/* ---------------------------------------------------------------- end */

void bfo_auth_wipe(bfo_auth *a)
{
    if (!a || a->wiped)
        return;
    sodium_mprotect_readwrite(a->keys);
    sodium_memzero(a->keys, a->keys_len);
    sodium_mprotect_readonly(a->keys);
    sodium_memzero(a->peers, (size_t)a->size * sizeof *a->peers);
    sodium_memzero(a->pk, sizeof a->pk);
    a->wiped = 1;
}

void bfo_auth_free(bfo_auth *a)
{
    if (!a)
        return;
    bfo_auth_wipe(a);
    sodium_free(a->keys); /* zeroes again, unlocks, unmaps */
    free(a->peers);
    sodium_memzero(a, sizeof *a);
    free(a);
}

const void *bfo_auth_key_area(const bfo_auth *a, size_t *len)
{
    *len = a->keys_len;
    return a->keys;
}

/* ------------------------------------------------- the membership key */

static char key_source[300];

const char *bfo_auth_key_source(void) { return key_source; }

int bfo_auth_keygen(uint8_t *out)
{
    if (sodium_init() < 0)
        return BFO_ERR_NO_MEMORY;
    randombytes_buf(out, BFO_AUTH_KEY_LEN);
    return BFO_OK;
}

/* The key read from BFO_AUTH_FD, kept (guarded) for a later wire-up of
 * the same process (`bfo bench --compare` makes two): the pipe gives it
 * once.  fd_cached: the variable's value it came from. */
static uint8_t *fd_key;
static char fd_cached[24];

void bfo_auth_wipe_key(uint8_t *key) { sodium_memzero(key, BFO_AUTH_KEY_LEN); }

/* Exactly BFO_AUTH_KEY_LEN bytes from fd (then closed). */
static int key_from_fd(const char *s, uint8_t *key)
{
    char *end;
    long fd = strtol(s, &end, 10);
    size_t got = 0;
    uint8_t extra;
    if (fd_key && strcmp(s, fd_cached) == 0) {
        memcpy(key, fd_key, BFO_AUTH_KEY_LEN);
        snprintf(key_source, sizeof key_source, "BFO_AUTH_FD");
        return 1;
    }
    if (*end || fd < 0 || fd > 1000000 || fcntl((int)fd, F_GETFD) < 0) {
        fprintf(stderr, "bfo: BFO_AUTH_FD=%s: not an open file descriptor\n", s);
        return -1;
    }
    while (got < BFO_AUTH_KEY_LEN) {
        ssize_t n = read((int)fd, key + got, BFO_AUTH_KEY_LEN - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    /* one reader: a second read finds the pipe empty and its writer gone */
    if (got == BFO_AUTH_KEY_LEN && fcntl((int)fd, F_SETFL, O_NONBLOCK) == 0 && read((int)fd, &extra, 1) > 0)
        got = 0;
    close((int)fd);
    if (got != BFO_AUTH_KEY_LEN) {
        sodium_memzero(key, BFO_AUTH_KEY_LEN);
        fprintf(stderr, "bfo: BFO_AUTH_FD=%s: not exactly %d bytes of key (read twice, or not bfo run's)\n", s,
                BFO_AUTH_KEY_LEN);
        return -1;
    }
    if (!fd_key && strlen(s) < sizeof fd_cached && (fd_key = (uint8_t *)sodium_malloc(BFO_AUTH_KEY_LEN)) != NULL) {
        memcpy(fd_key, key, BFO_AUTH_KEY_LEN);
        sodium_mprotect_readonly(fd_key);
        snprintf(fd_cached, sizeof fd_cached, "%s", s);
    }
    snprintf(key_source, sizeof key_source, "BFO_AUTH_FD");
    return 1;
}

/* 64 hex digits and an optional newline, from a file only its owner (this
 * user) can read or write. */
static int key_from_file(const char *path, uint8_t *key)
{
    struct stat st;
    char text[80];
    size_t got = 0, bin = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW), rc = -1;
    if (fd < 0) {
        fprintf(stderr, "bfo: BFO_AUTH_KEYFILE=%s: %s\n", path, strerror(errno));
        return -1;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077)) {
        fprintf(stderr, "bfo: BFO_AUTH_KEYFILE=%s: must be a regular file of this user's that nobody else may "
                        "read or write (chmod 600)\n", path);
        close(fd);
        return -1;
    }
    for (;;) {
        ssize_t n = read(fd, text + got, sizeof text - 1 - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    while (got && (text[got - 1] == '\n' || text[got - 1] == '\r'))
        got--;
    if (got == 2 * BFO_AUTH_KEY_LEN && sodium_hex2bin(key, BFO_AUTH_KEY_LEN, text, got, NULL, &bin, NULL) == 0 &&
        bin == BFO_AUTH_KEY_LEN) {
        snprintf(key_source, sizeof key_source, "BFO_AUTH_KEYFILE %s", path);
        rc = 1;
    } else {
        sodium_memzero(key, BFO_AUTH_KEY_LEN);
        fprintf(stderr, "bfo: BFO_AUTH_KEYFILE=%s: not %d hex digits (one key: od -An -tx1 -N32 /dev/urandom | tr -d ' \\n')\n", path,
                2 * BFO_AUTH_KEY_LEN);
    }
    sodium_memzero(text, sizeof text);
    return rc;
}

int bfo_auth_key_read(const char *fd, const char *file, uint8_t *key)
{
    key_source[0] = 0;
    if (sodium_init() < 0)
        return -1;
    if (fd && *fd)
        return key_from_fd(fd, key);
    if (file && *file)
        return key_from_file(file, key);
    return 0;
}
