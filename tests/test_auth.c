// SPDX-License-Identifier: BSD-3-Clause
/* test_auth.c - membership and pair keys, MACs, replay windows and the
 * connection handshake (backends/auth/bfo_auth.h).
 *
 * Three members of one job (ranks 0, 1, 2 of 3, one membership key) and an
 * outsider (another key): the pair key is the same from both ends and
 * another for every other pair; a member cannot make a MAC that another
 * pair accepts, nor can the outsider; any flipped bit is refused; the
 * replay window takes fresh sequences in any order, refuses repeats and
 * the too old, and does not move for a forged one; the handshake runs
 * through and refuses a tampered or misdirected message; the keys are
 * wiped and their area is kept out of core dumps; the key's sources
 * (BFO_AUTH_FD, BFO_AUTH_KEYFILE) take what they should and refuse a
 * file others may read.
 */
#define _GNU_SOURCE
#include "bfo_test.h"

#include "bfo_auth.h"
#include "bfo_core.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#define N 3
static const uint8_t member_key[BFO_AUTH_KEY_LEN] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
                                                      17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32 };
static const uint64_t job = 0x1234567890abcdefull;

/* N members that know each other's public keys. */
static void members(bfo_auth **a)
{
    uint8_t pk[N][BFO_AUTH_PUB_LEN];
    for (int r = 0; r < N; r++) {
        assert_int_equal(bfo_auth_init(&a[r], member_key, r, N, job), BFO_OK);
        bfo_auth_public(a[r], pk[r]);
    }
    for (int r = 0; r < N; r++)
        for (int p = 0; p < N; p++)
            if (p != r)
                assert_int_equal(bfo_auth_set_peer(a[r], p, pk[p]), BFO_OK);
}

static void free_all(bfo_auth **a, int n)
{
    for (int r = 0; r < n; r++)
        bfo_auth_free(a[r]);
}

static void test_init_refuses_bad_arguments(void **state)
{
    bfo_auth *a = (bfo_auth *)(uintptr_t)1;
    uint8_t pk[32];
    (void)state;
    assert_int_equal(bfo_auth_init(&a, member_key, 0, 0, job), BFO_ERR_INVALID);
    assert_null(a);
    assert_int_equal(bfo_auth_init(&a, member_key, 2, 2, job), BFO_ERR_INVALID);
    assert_int_equal(bfo_auth_init(&a, member_key, -1, 2, job), BFO_ERR_INVALID);
    assert_int_equal(bfo_auth_init(&a, NULL, 0, 2, job), BFO_ERR_INVALID);
    assert_int_equal(bfo_auth_init(&a, member_key, 0, 2, job), BFO_OK);
    bfo_auth_public(a, pk);
    assert_int_equal(bfo_auth_set_peer(a, 0, pk), BFO_ERR_INVALID); /* itself */
    assert_int_equal(bfo_auth_set_peer(a, 2, pk), BFO_ERR_INVALID); /* out of range */
    memset(pk, 0, sizeof pk);                                      /* small order: all-zero secret */
    assert_int_equal(bfo_auth_set_peer(a, 1, pk), BFO_ERR_INVALID);
    assert_int_equal(bfo_auth_has_peer(a, 1), 0);
    assert_int_equal(bfo_auth_mac(a, 1, "x", "m", 1, pk), BFO_ERR_INVALID); /* no pair key yet */
    assert_int_equal(bfo_auth_set_job(a, 7), BFO_OK);
    bfo_auth_free(a);
    bfo_auth_free(NULL);
}

/* The pair key is the same from both ends, and another for each pair:
 * seen through MACs of one message. */
static void test_pair_key_is_symmetric_and_differs_between_pairs(void **state)
{
    bfo_auth *a[N];
    uint8_t m[N][N][BFO_AUTH_MAC_LEN], g[N][BFO_AUTH_MAC_LEN];
    (void)state;
    members(a);
    for (int r = 0; r < N; r++) {
        for (int p = 0; p < N; p++)
            if (p != r)
                assert_int_equal(bfo_auth_mac(a[r], p, "test", "hello", 5, m[r][p]), BFO_OK);
        assert_int_equal(bfo_auth_mac(a[r], BFO_AUTH_GROUP, "test", "hello", 5, g[r]), BFO_OK);
    }
    assert_memory_equal(m[0][1], m[1][0], BFO_AUTH_MAC_LEN);
    assert_memory_equal(m[0][2], m[2][0], BFO_AUTH_MAC_LEN);
    assert_memory_equal(m[1][2], m[2][1], BFO_AUTH_MAC_LEN);
    assert_memory_not_equal(m[0][1], m[0][2], BFO_AUTH_MAC_LEN);
    assert_memory_not_equal(m[0][1], m[1][2], BFO_AUTH_MAC_LEN);
    assert_memory_not_equal(m[0][2], m[1][2], BFO_AUTH_MAC_LEN);
    /* the group key: every member's, none of the pairs' */
    assert_memory_equal(g[0], g[1], BFO_AUTH_MAC_LEN);
    assert_memory_equal(g[0], g[2], BFO_AUTH_MAC_LEN);
    assert_memory_not_equal(g[0], m[0][1], BFO_AUTH_MAC_LEN);
    /* another job id: other pair keys */
    {
        bfo_auth *x, *y;
        uint8_t px[32], py[32], mx[32];
        assert_int_equal(bfo_auth_init(&x, member_key, 0, N, job + 1), BFO_OK);
        assert_int_equal(bfo_auth_init(&y, member_key, 1, N, 0), BFO_OK);
        assert_int_equal(bfo_auth_set_job(y, job + 1), BFO_OK);
        bfo_auth_public(x, px);
        bfo_auth_public(y, py);
        assert_int_equal(bfo_auth_set_peer(x, 1, py), BFO_OK);
        assert_int_equal(bfo_auth_set_peer(y, 0, px), BFO_OK);
        assert_int_equal(bfo_auth_set_job(y, job), BFO_ERR_INVALID); /* too late */
        assert_int_equal(bfo_auth_mac(x, 1, "test", "hello", 5, mx), BFO_OK);
        assert_int_equal(bfo_auth_verify(y, 0, "test", "hello", 5, mx), BFO_OK);
        bfo_auth_free(x);
        bfo_auth_free(y);
    }
    free_all(a, N);
}

/* Rank 2, a member, MACs as best it can (both its pair keys, the group
 * key) a message it wants rank 0 to take as rank 1's: refused.  An
 * outsider (another membership key) whose public key rank 0 took as rank
 * 1's: refused too, and the same both ways. */
static void test_member_and_outsider_cannot_forge_another_pairs_mac(void **state)
{
    bfo_auth *a[N], *o, *v;
    uint8_t mac[BFO_AUTH_MAC_LEN], pk_o[32], pk_v[32], other_key[BFO_AUTH_KEY_LEN];
    (void)state;
    members(a);
    for (int p = BFO_AUTH_GROUP; p < N; p++) {
        if (p == 2)
            continue;
        assert_int_equal(bfo_auth_mac(a[2], p, "data", "take me", 7, mac), BFO_OK);
        assert_int_equal(bfo_auth_verify(a[0], 1, "data", "take me", 7, mac), BFO_ERR_INVALID);
        assert_int_equal(bfo_auth_verify(a[1], 0, "data", "take me", 7, mac), BFO_ERR_INVALID);
    }
    memcpy(other_key, member_key, sizeof other_key);
    other_key[31] ^= 1;
    assert_int_equal(bfo_auth_init(&o, other_key, 1, N, job), BFO_OK);
    assert_int_equal(bfo_auth_init(&v, member_key, 0, N, job), BFO_OK); /* a rank 0 fooled about rank 1's key */
    bfo_auth_public(o, pk_o);
    bfo_auth_public(v, pk_v);
    assert_int_equal(bfo_auth_set_peer(o, 0, pk_v), BFO_OK);
    assert_int_equal(bfo_auth_set_peer(v, 1, pk_o), BFO_OK);
    assert_int_equal(bfo_auth_mac(o, 0, "data", "take me", 7, mac), BFO_OK);
    assert_int_equal(bfo_auth_verify(v, 1, "data", "take me", 7, mac), BFO_ERR_INVALID);
    assert_int_equal(bfo_auth_mac(v, 1, "data", "take me", 7, mac), BFO_OK);
    assert_int_equal(bfo_auth_verify(o, 0, "data", "take me", 7, mac), BFO_ERR_INVALID);
    assert_int_equal(bfo_auth_mac(o, BFO_AUTH_GROUP, "data", "take me", 7, mac), BFO_OK);
    assert_int_equal(bfo_auth_verify(v, BFO_AUTH_GROUP, "data", "take me", 7, mac), BFO_ERR_INVALID);
    bfo_auth_free(o);
    bfo_auth_free(v);
    free_all(a, N);
}

/* Every single flipped bit, of the MAC or of the message, and another
 * label or length: refused; the message as MACed: taken. */
static void test_verify_refuses_every_flipped_bit(void **state)
{
    bfo_auth *a[N];
    uint8_t msg[64], mac[BFO_AUTH_MAC_LEN];
    int refused = 0;
    (void)state;
    members(a);
    for (size_t i = 0; i < sizeof msg; i++)
        msg[i] = (uint8_t)(i * 13 + 5);
    assert_int_equal(bfo_auth_mac(a[0], 2, "frame", msg, sizeof msg, mac), BFO_OK);
    assert_int_equal(bfo_auth_verify(a[2], 0, "frame", msg, sizeof msg, mac), BFO_OK);
    for (int b = 0; b < 8 * BFO_AUTH_MAC_LEN; b++) {
        mac[b / 8] ^= (uint8_t)(1u << (b % 8));
        refused += bfo_auth_verify(a[2], 0, "frame", msg, sizeof msg, mac) == BFO_ERR_INVALID;
        mac[b / 8] ^= (uint8_t)(1u << (b % 8));
    }
    for (int b = 0; b < 8 * (int)sizeof msg; b++) {
        msg[b / 8] ^= (uint8_t)(1u << (b % 8));
        refused += bfo_auth_verify(a[2], 0, "frame", msg, sizeof msg, mac) == BFO_ERR_INVALID;
        msg[b / 8] ^= (uint8_t)(1u << (b % 8));
    }
    assert_int_equal(refused, 8 * BFO_AUTH_MAC_LEN + 8 * (int)sizeof msg);
    assert_int_equal(bfo_auth_verify(a[2], 0, "framf", msg, sizeof msg, mac), BFO_ERR_INVALID);
    assert_int_equal(bfo_auth_verify(a[2], 0, "frame", msg, sizeof msg - 1, mac), BFO_ERR_INVALID);
    assert_int_equal(bfo_auth_verify(a[2], 1, "frame", msg, sizeof msg, mac), BFO_ERR_INVALID);
    /* the label is length-prefixed: "fr"+"ame..." is not "frame"+"..." */
    {
        uint8_t joined[66];
        memcpy(joined, "am", 2);
        memcpy(joined + 2, msg, sizeof msg);
        assert_int_equal(bfo_auth_verify(a[2], 0, "fr", joined, sizeof joined, mac), BFO_ERR_INVALID);
    }
    /* in parts: the same bytes, the same MAC */
    {
        bfo_auth_part parts[3] = { { msg, 10 }, { msg + 10, 0 }, { msg + 10, sizeof msg - 10 } };
        assert_int_equal(bfo_auth_verifyv(a[2], 0, "frame", parts, 3, mac), BFO_OK);
    }
    assert_int_equal(bfo_auth_verify(a[2], 0, "frame", msg, sizeof msg, mac), BFO_OK);
    free_all(a, N);
}

static void test_replay_window_takes_fresh_refuses_repeats_and_too_old(void **state)
{
    bfo_auth *a[N];
    (void)state;
    members(a);
    assert_int_equal(bfo_auth_replay_check(a[0], 1, 0), BFO_ERR_INVALID); /* 0 never */
    assert_int_equal(bfo_auth_replay_accept(a[0], 1, 10), BFO_OK);
    assert_int_equal(bfo_auth_replay_accept(a[0], 1, 10), BFO_ERR_INVALID); /* again */
    assert_int_equal(bfo_auth_replay_accept(a[0], 1, 7), BFO_OK);           /* late, in the window */
    assert_int_equal(bfo_auth_replay_accept(a[0], 1, 7), BFO_ERR_INVALID);
    assert_int_equal(bfo_auth_replay_accept(a[0], 1, 12), BFO_OK); /* a gap */
    assert_int_equal(bfo_auth_replay_accept(a[0], 1, 11), BFO_OK); /* filled */
    assert_int_equal(bfo_auth_replay_check(a[0], 1, 10), BFO_ERR_INVALID);
    assert_int_equal(bfo_auth_replay_check(a[0], 1, 7), BFO_ERR_INVALID);
    assert_int_equal(bfo_auth_replay_check(a[0], 1, 8), BFO_OK);
    /* the window's edge: 12 - 63 = the oldest it tells */
    assert_int_equal(bfo_auth_replay_accept(a[0], 1, 12 + 63), BFO_OK); /* 12 is now the oldest */
    assert_int_equal(bfo_auth_replay_check(a[0], 1, 12), BFO_ERR_INVALID);
    assert_int_equal(bfo_auth_replay_check(a[0], 1, 13), BFO_OK);
    assert_int_equal(bfo_auth_replay_check(a[0], 1, 11), BFO_ERR_INVALID); /* too old */
    assert_int_equal(bfo_auth_replay_accept(a[0], 1, 13), BFO_OK);
    assert_int_equal(bfo_auth_replay_accept(a[0], 1, 1000), BFO_OK); /* far ahead: the window starts again */
    assert_int_equal(bfo_auth_replay_check(a[0], 1, 1000 - 63), BFO_OK);
    assert_int_equal(bfo_auth_replay_check(a[0], 1, 1000 - 64), BFO_ERR_INVALID);
    /* one window per peer */
    assert_int_equal(bfo_auth_replay_check(a[0], 2, 10), BFO_OK);
    /* a new key pair for a peer (it restarted): its window starts again */
    {
        uint8_t pk[32];
        bfo_auth_public(a[1], pk);
        assert_int_equal(bfo_auth_set_peer(a[0], 1, pk), BFO_OK);
        assert_int_equal(bfo_auth_replay_check(a[0], 1, 10), BFO_OK);
    }
    free_all(a, N);
}

/* Beacons: MACed with their sequence; a replayed one refused; a forged
 * one with a sequence far ahead (its MAC wrong) leaves the window where
 * it was, so the real ones after it still pass. */
static void test_beacon_forged_high_sequence_does_not_move_the_window(void **state)
{
    bfo_auth *a[N];
    uint8_t mac[BFO_AUTH_MAC_LEN], body[12] = "beacon body";
    uint64_t s;
    (void)state;
    members(a);
    for (int i = 0; i < 5; i++) {
        s = bfo_auth_beacon_seq(a[1], 0);
        assert_int_equal(s, (uint64_t)i + 1);
        assert_int_equal(bfo_auth_beacon_mac(a[1], 0, s, body, sizeof body, mac), BFO_OK);
        assert_int_equal(bfo_auth_beacon_verify(a[0], 1, s, body, sizeof body, mac), BFO_OK);
        assert_int_equal(bfo_auth_beacon_verify(a[0], 1, s, body, sizeof body, mac), BFO_ERR_INVALID); /* replay */
    }
    /* forged: sequence 2^62, a MAC made with the wrong key (rank 2's) */
    assert_int_equal(bfo_auth_beacon_mac(a[2], 0, 1ull << 62, body, sizeof body, mac), BFO_OK);
    assert_int_equal(bfo_auth_beacon_verify(a[0], 1, 1ull << 62, body, sizeof body, mac), BFO_ERR_INVALID);
    /* a real MAC moved to another sequence */
    assert_int_equal(bfo_auth_beacon_mac(a[1], 0, 6, body, sizeof body, mac), BFO_OK);
    assert_int_equal(bfo_auth_beacon_verify(a[0], 1, 1ull << 62, body, sizeof body, mac), BFO_ERR_INVALID);
    assert_int_equal(bfo_auth_replay_check(a[0], 1, 6), BFO_OK); /* the window did not move */
    assert_int_equal(bfo_auth_beacon_verify(a[0], 1, 6, body, sizeof body, mac), BFO_OK);
    body[0] ^= 1; /* the body is covered */
    assert_int_equal(bfo_auth_beacon_mac(a[1], 0, 7, "beacon body", 12, mac), BFO_OK);
    assert_int_equal(bfo_auth_beacon_verify(a[0], 1, 7, body, sizeof body, mac), BFO_ERR_INVALID);
    assert_int_equal(bfo_auth_replay_check(a[0], 1, 7), BFO_OK);
    free_all(a, N);
}

/* ------------------------------------------------------------ handshake */

static void test_handshake_runs_through_both_ways(void **state)
{
    bfo_auth *a[N];
    bfo_auth_hs d, x;
    uint8_t hello[BFO_AUTH_HELLO_LEN], reply[BFO_AUTH_REPLY_LEN], confirm[BFO_AUTH_CONFIRM_LEN];
    int peer = -1, rail = -1;
    uint32_t attempt = 0;
    (void)state;
    members(a);
    /* rank 2 dials rank 0 on rail 3, attempt 7 */
    assert_int_equal(bfo_auth_hs_hello(a[2], &d, 0, 3, 7, hello), BFO_OK);
    assert_int_equal(bfo_auth_hs_read_hello(a[0], &x, hello, sizeof hello, &peer, &rail, &attempt), BFO_OK);
    assert_int_equal(peer, 2);
    assert_int_equal(rail, 3);
    assert_int_equal(attempt, 7);
    assert_int_equal(bfo_auth_hs_reply(a[0], &x, reply), BFO_OK);
    assert_int_equal(bfo_auth_hs_read_reply(a[2], &d, reply, sizeof reply), BFO_OK);
    assert_int_equal(bfo_auth_hs_confirm(a[2], &d, confirm), BFO_OK);
    assert_int_equal(bfo_auth_hs_read_confirm(a[0], &x, confirm, sizeof confirm), BFO_OK);
    /* steps out of order */
    assert_int_equal(bfo_auth_hs_reply(a[0], &x, reply), BFO_ERR_INVALID);
    assert_int_equal(bfo_auth_hs_confirm(a[2], &d, confirm), BFO_ERR_INVALID);
    /* the wire: little-endian, the documented offsets */
    assert_int_equal(hello[0], 1);
    assert_int_equal(hello[1], BFO_AUTH_VERSION);
    assert_int_equal(hello[2] | hello[3] << 8, 3);
    assert_int_equal(hello[4], 2);
    assert_int_equal(hello[8], N);
    assert_int_equal(hello[12], 7);
    assert_int_equal(hello[16], 0xef);
    assert_int_equal(reply[0], 2);
    assert_int_equal(reply[4], 0);
    assert_int_equal(confirm[0], 3);
    assert_int_equal(confirm[4], 2);
    free_all(a, N);
}

/* A tampered or replayed message, one of another job or size, one
 * misdirected (rank 1 answering for rank 0), a member playing another:
 * refused; a dialer whose key the acceptor has not yet: BFO_ERR_AGAIN. */
static void test_handshake_refuses_tampered_replayed_and_impersonated(void **state)
{
    bfo_auth *a[N], *late;
    bfo_auth_hs d, x, y;
    uint8_t hello[BFO_AUTH_HELLO_LEN], bad[BFO_AUTH_REPLY_LEN], reply[BFO_AUTH_REPLY_LEN];
    uint8_t confirm[BFO_AUTH_CONFIRM_LEN], old_confirm[BFO_AUTH_CONFIRM_LEN];
    int peer, rail;
    uint32_t attempt;
    (void)state;
    members(a);
    assert_int_equal(bfo_auth_hs_hello(a[1], &d, 0, 0, 1, hello), BFO_OK);
    /* another job, another size, a rank out of range or the acceptor's
     * own, another type or version */
    {
        static const struct {
            int at;
            uint8_t to;
        } f[] = { { 16, 0xee }, { 8, N + 1 }, { 4, 9 }, { 4, 0 }, { 0, 2 }, { 1, BFO_AUTH_VERSION + 1 } };
        for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
            uint8_t h[BFO_AUTH_HELLO_LEN];
            memcpy(h, hello, sizeof h);
            h[f[i].at] = f[i].to;
            if (bfo_auth_hs_read_hello(a[0], &x, h, sizeof h, &peer, &rail, &attempt) != BFO_ERR_INVALID)
                fail_msg("a hello with byte %d = %d was taken", f[i].at, f[i].to);
        }
    }
    assert_int_equal(bfo_auth_hs_read_hello(a[0], &x, hello, sizeof hello - 1, &peer, &rail, &attempt),
                     BFO_ERR_INVALID);
    /* rank 0's key for the dialer unknown yet: again, once it is */
    assert_int_equal(bfo_auth_init(&late, member_key, 0, N, job), BFO_OK);
    assert_int_equal(bfo_auth_hs_read_hello(late, &x, hello, sizeof hello, &peer, &rail, &attempt), BFO_ERR_AGAIN);
    bfo_auth_free(late);
    assert_int_equal(bfo_auth_hs_read_hello(a[0], &x, hello, sizeof hello, &peer, &rail, &attempt), BFO_OK);
    assert_int_equal(bfo_auth_hs_reply(a[0], &x, reply), BFO_OK);
    /* every flipped bit of the reply refused by the dialer */
    for (int b = 0; b < 8 * BFO_AUTH_REPLY_LEN; b++) {
        bfo_auth_hs t = d;
        memcpy(bad, reply, sizeof bad);
        bad[b / 8] ^= (uint8_t)(1u << (b % 8));
        if (bfo_auth_hs_read_reply(a[1], &t, bad, sizeof bad) != BFO_ERR_INVALID)
            fail_msg("a reply with bit %d flipped was taken", b);
    }
    /* rank 2 (a member) answers for rank 0: it MACs with its own keys */
    {
        bfo_auth_hs z;
        assert_int_equal(bfo_auth_hs_read_hello(a[2], &z, hello, sizeof hello, &peer, &rail, &attempt), BFO_OK);
        assert_int_equal(bfo_auth_hs_reply(a[2], &z, bad), BFO_OK);
        bad[4] = 0; /* claims rank 0 */
        bfo_auth_hs t = d;
        assert_int_equal(bfo_auth_hs_read_reply(a[1], &t, bad, sizeof bad), BFO_ERR_INVALID);
    }
    assert_int_equal(bfo_auth_hs_read_reply(a[1], &d, reply, sizeof reply), BFO_OK);
    assert_int_equal(bfo_auth_hs_confirm(a[1], &d, confirm), BFO_OK);
    memcpy(old_confirm, confirm, sizeof confirm);
    /* a flipped bit of the confirm */
    for (int b = 0; b < 8 * BFO_AUTH_CONFIRM_LEN; b++) {
        bfo_auth_hs t = x;
        confirm[b / 8] ^= (uint8_t)(1u << (b % 8));
        if (bfo_auth_hs_read_confirm(a[0], &t, confirm, sizeof confirm) != BFO_ERR_INVALID)
            fail_msg("a confirm with bit %d flipped was taken", b);
        confirm[b / 8] ^= (uint8_t)(1u << (b % 8));
    }
    assert_int_equal(bfo_auth_hs_read_confirm(a[0], &x, confirm, sizeof confirm), BFO_OK);
    /* replayed: the same HELLO again gets a fresh nonce_a; the old CONFIRM
     * does not answer it */
    assert_int_equal(bfo_auth_hs_read_hello(a[0], &y, hello, sizeof hello, &peer, &rail, &attempt), BFO_OK);
    assert_int_equal(bfo_auth_hs_reply(a[0], &y, reply), BFO_OK);
    assert_int_equal(bfo_auth_hs_read_confirm(a[0], &y, old_confirm, sizeof old_confirm), BFO_ERR_INVALID);
    /* rank 2 dials rank 0 claiming to be rank 1: the confirm it can make
     * (with its own key) is refused */
    {
        bfo_auth_hs z, w;
        uint8_t h[BFO_AUTH_HELLO_LEN], r[BFO_AUTH_REPLY_LEN], c[BFO_AUTH_CONFIRM_LEN];
        assert_int_equal(bfo_auth_hs_hello(a[2], &z, 0, 0, 1, h), BFO_OK);
        h[4] = 1; /* claims rank 1 */
        assert_int_equal(bfo_auth_hs_read_hello(a[0], &w, h, sizeof h, &peer, &rail, &attempt), BFO_OK);
        assert_int_equal(peer, 1);
        assert_int_equal(bfo_auth_hs_reply(a[0], &w, r), BFO_OK);
        assert_int_equal(bfo_auth_hs_read_reply(a[2], &z, r, sizeof r), BFO_ERR_INVALID); /* r is for rank 1 */
        memcpy(z.transcript, h, sizeof h);                                              /* as it would */
        memcpy(z.transcript + BFO_AUTH_HELLO_LEN, r, sizeof r);
        z.step = 2;
        assert_int_equal(bfo_auth_hs_confirm(a[2], &z, c), BFO_OK);
        c[4] = 1;
        assert_int_equal(bfo_auth_hs_read_confirm(a[0], &w, c, sizeof c), BFO_ERR_INVALID);
    }
    free_all(a, N);
}

/* ----------------------------------------------------------- the keys */

/* The mapping of /proc/self/smaps that holds addr: its VmFlags line. */
static int vmflags_of(const void *addr, char *flags, size_t cap)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[512];
    int in = 0, found = 0;
    uintptr_t x = (uintptr_t)addr;
    assert_non_null(f);
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' '))
            in = x >= lo && x < hi;
        else if (in && strncmp(line, "VmFlags:", 8) == 0) {
            snprintf(flags, cap, "%s", line + 8);
            found = 1;
            break;
        }
    }
    fclose(f);
    return found;
}

static int mapped(const void *addr)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    int in = 0;
    assert_non_null(f);
    while (!in && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
            in = (uintptr_t)addr >= lo && (uintptr_t)addr < hi;
    }
    fclose(f);
    return in;
}

/* The keys' area is a mapping of its own marked dd (MADV_DONTDUMP: no core
 * dump holds it); bfo_auth_wipe zeroes all of it and every call fails
 * after; bfo_auth_free unmaps it. */
static void test_keys_out_of_core_dumps_and_wiped_at_free(void **state)
{
    bfo_auth *a[N];
    char flags[512];
    size_t len, nonzero = 0;
    const uint8_t *area;
    uint8_t mac[BFO_AUTH_MAC_LEN];
    (void)state;
    members(a);
    area = (const uint8_t *)bfo_auth_key_area(a[0], &len);
    assert_int_equal(len, 96 + N * 32);
    assert_true(vmflags_of(area, flags, sizeof flags));
    if (!strstr(flags, " dd"))
        fail_msg("the key area's mapping has no dd (MADV_DONTDUMP) in its VmFlags:%s", flags);
    for (size_t i = 0; i < len; i++)
        nonzero += area[i] != 0;
    assert_true(nonzero > len / 2); /* the keys are there */
    assert_memory_equal(area, member_key, BFO_AUTH_KEY_LEN);
    bfo_auth_wipe(a[0]);
    for (size_t i = 0; i < len; i++)
        if (area[i])
            fail_msg("byte %zu of the key area is %#x after bfo_auth_wipe", i, area[i]);
    assert_int_equal(bfo_auth_mac(a[0], 1, "x", "m", 1, mac), BFO_ERR_INVALID);
    assert_int_equal(bfo_auth_mac(a[0], BFO_AUTH_GROUP, "x", "m", 1, mac), BFO_ERR_INVALID);
    assert_int_equal(bfo_auth_has_peer(a[0], 1), 0);
    assert_true(mapped(area));
    bfo_auth_free(a[0]);
    assert_false(mapped(area));
    free_all(a + 1, N - 1);
}

static void test_key_from_fd_and_from_a_private_file(void **state)
{
    uint8_t key[BFO_AUTH_KEY_LEN], got[BFO_AUTH_KEY_LEN];
    char path[] = "/tmp/bfo-test-auth-XXXXXX", num[16], hex[2 * BFO_AUTH_KEY_LEN + 2];
    int p[2], fd;
    (void)state;
    assert_int_equal(bfo_auth_key_read(NULL, NULL, got), 0);
    assert_int_equal(bfo_auth_key_read("", "", got), 0);
    assert_string_equal(bfo_auth_key_source(), "");
    assert_int_equal(bfo_auth_keygen(key), BFO_OK);
    /* BFO_AUTH_FD: exactly the key, then closed */
    assert_int_equal(pipe(p), 0);
    assert_int_equal(write(p[1], key, sizeof key), (ssize_t)sizeof key);
    close(p[1]);
    snprintf(num, sizeof num, "%d", p[0]);
    assert_int_equal(bfo_auth_key_read(num, "/nonexistent", got), 1); /* the descriptor first */
    assert_memory_equal(got, key, sizeof key);
    assert_string_equal(bfo_auth_key_source(), "BFO_AUTH_FD");
    assert_int_equal(fcntl(p[0], F_GETFD), -1); /* closed */
    memset(got, 0, sizeof got);
    assert_int_equal(bfo_auth_key_read(num, NULL, got), 1); /* again: kept from the first read */
    assert_memory_equal(got, key, sizeof key);
    /* too short, too long (another descriptor number than the first) */
    for (int n = 5; n <= 2 * BFO_AUTH_KEY_LEN; n += 2 * BFO_AUTH_KEY_LEN - 5) {
        uint8_t two[2 * BFO_AUTH_KEY_LEN] = { 0 };
        int keep = open("/dev/null", O_RDONLY); /* the first number stays taken */
        assert_int_equal(pipe(p), 0);
        assert_int_equal(write(p[1], two, (size_t)n), n);
        close(p[1]);
        snprintf(num, sizeof num, "%d", p[0]);
        assert_int_equal(bfo_auth_key_read(num, NULL, got), -1);
        close(keep);
    }
    /* BFO_AUTH_KEYFILE: 64 hex digits, mode 600 */
    fd = mkstemp(path);
    assert_true(fd >= 0);
    for (int i = 0; i < BFO_AUTH_KEY_LEN; i++)
        snprintf(hex + 2 * i, 3, "%02x", key[i]);
    strcat(hex, "\n");
    assert_int_equal(write(fd, hex, strlen(hex)), (ssize_t)strlen(hex));
    close(fd);
    assert_int_equal(chmod(path, 0600), 0);
    memset(got, 0, sizeof got);
    assert_int_equal(bfo_auth_key_read(NULL, path, got), 1);
    assert_memory_equal(got, key, sizeof key);
    /* readable by the group, or by others: refused */
    assert_int_equal(chmod(path, 0640), 0);
    assert_int_equal(bfo_auth_key_read(NULL, path, got), -1);
    assert_int_equal(chmod(path, 0604), 0);
    assert_int_equal(bfo_auth_key_read(NULL, path, got), -1);
    /* not hex */
    assert_int_equal(chmod(path, 0600), 0);
    fd = open(path, O_WRONLY | O_TRUNC);
    assert_int_equal(write(fd, "not a key\n", 10), 10);
    close(fd);
    assert_int_equal(bfo_auth_key_read(NULL, path, got), -1);
    unlink(path);
    assert_int_equal(bfo_auth_key_read(NULL, path, got), -1); /* gone */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_init_refuses_bad_arguments),
        cmocka_unit_test(test_pair_key_is_symmetric_and_differs_between_pairs),
        cmocka_unit_test(test_member_and_outsider_cannot_forge_another_pairs_mac),
        cmocka_unit_test(test_verify_refuses_every_flipped_bit),
        cmocka_unit_test(test_replay_window_takes_fresh_refuses_repeats_and_too_old),
        cmocka_unit_test(test_beacon_forged_high_sequence_does_not_move_the_window),
        cmocka_unit_test(test_handshake_runs_through_both_ways),
        cmocka_unit_test(test_handshake_refuses_tampered_replayed_and_impersonated),
        cmocka_unit_test(test_keys_out_of_core_dumps_and_wiped_at_free),
        cmocka_unit_test(test_key_from_fd_and_from_a_private_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
