// SPDX-License-Identifier: BSD-3-Clause
/* test_tcp_trust.c - who may take a TCP rail (issue 37: connections
 * authenticated in the conn machine).  Ranks 0 and 1 of a job of 3 are
 * opened in this process on one loopback rail, each with its bfo_auth made
 * from the job's membership key (a test key) and the other ranks' public
 * keys; the attacks are raw sockets on rank 1's listening port:
 *   (a) an outsider (the job id, the ranks' public keys, no membership
 *       key) forges rank 0's hello with the highest attempt number, while
 *       rank 0's rail to rank 1 is up: nothing changes on either side
 *       (no RAIL_ERROR, no CONNECTED), and rank 0, reconnecting after it,
 *       still connects (the forged attempt made nothing stale);
 *   (b) a captured hello and CONFIRM of a real exchange, replayed to rank
 *       1 restarted (the attempt numbers forgotten): refused, no CONNECTED;
 *   (c) a job member (rank 2: the membership key and its own identity)
 *       poses as rank 0, answering the challenge as best it can (its own
 *       pair key, over the right transcript): refused, rank 0's rail
 *       untouched;
 * and, authenticated, the connections themselves: only one side asks,
 * both ask at once (the tie answer proven), in either order.
 *
 * BFO_TEST_NOAUTH=1 runs the same with no bfo_auth (options.auth NULL:
 * the unauthenticated hellos of before, the attacks sent in that format):
 * (a), (b) and (c) fail there, which is how they were shown to test
 * something; and so do they built against the bfo_tcp.{c,h} and conn
 * machine of before (no AUTHENTICATION in bfo_tcp.h: TRUST_OLD_TCP).
 * Loopback only, no namespace, no root. */
#define _GNU_SOURCE
#include "bfo_trust_harness.h"
#include "bfo_tcp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Built against the bfo_tcp.h of before (no AUTHENTICATION): the same
 * attacks in the old format, with no bfo_auth. */
#ifndef BFO_TCP_HELLO_F_AUTH
#define TRUST_OLD_TCP 1
#define BFO_TCP_HELLO_AUTH_SIZE 64
#define BFO_TCP_HELLO_F_AUTH 1
#define BFO_TCP_A_CONFIRM 2
#endif

#define JOB 0x7e57c0ull
#define SIZE 3
#define TMO_NS 300000000ull /* the connect timeout */

static const uint8_t membership[BFO_AUTH_KEY_LEN] = { 0x42, 0x17, 0x99, 0x03 };

static int setup_keys(void **state)
{
    int old = 0;
    (void)state;
#ifdef TRUST_OLD_TCP
    old = 1;
#endif
    return th_keys_make(membership, SIZE, JOB, old);
}

static void open_rank(int r)
{
    bfo_tcp_options o;
    tr_tcp_options(&o, TMO_NS);
#ifndef TRUST_OLD_TCP
    o.auth = noauth ? NULL : A[r];
#endif
    th_open(&bfo_tcp_transport, r, SIZE, "127.0.0.1", &o, NULL, 0, JOB);
}

/* ------------------------------------------------------------ raw sockets */

static int raw_dial(int r)
{
    struct sockaddr_in sa;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    assert_int_equal(table[r].bytes[0], 4);
    memcpy(&sa.sin_port, table[r].bytes + 2, 2);
    memcpy(&sa.sin_addr, table[r].bytes + 4, 4);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    return fd;
}

static size_t frame_len(void) { return BFO_TCP_HDR_SIZE + BFO_TCP_HELLO_SIZE + (noauth ? 0 : BFO_TCP_HELLO_AUTH_SIZE); }

/* A hello frame as rank `rank` would write it (the handshake's part, when
 * authenticated, is the caller's: auth, AUTH_SIZE bytes or NULL). */
static void put_hello(uint8_t *f, int rank, uint64_t attempt, int answer, const uint8_t *auth, size_t alen)
{
    uint8_t *b = f + BFO_TCP_HDR_SIZE;
    memset(f, 0, frame_len());
    bfo_tcp_frame_header(f, (uint32_t)(frame_len() - BFO_TCP_HDR_SIZE), BFO_TCP_K_HELLO, 0, 0);
    b[0] = BFO_TCP_HELLO_VERSION;
    b[4] = (uint8_t)rank;
    b[12] = SIZE;
    for (int i = 0; i < 8; i++) {
        b[16 + i] = (uint8_t)(JOB >> (8 * i));
        b[24 + i] = (uint8_t)(attempt >> (8 * i));
    }
    b[40] = (uint8_t)answer;
    b[44] = noauth ? 0 : BFO_TCP_HELLO_F_AUTH;
    if (auth)
        memcpy(b + BFO_TCP_HELLO_SIZE, auth, alen);
}

static void send_all(int fd, const uint8_t *p, size_t n)
{
    assert_int_equal(send(fd, p, n, MSG_NOSIGNAL), (ssize_t)n);
}

/* Reads one hello frame from fd, pumping the ranks meanwhile: 1, or 0 when
 * the connection closed or nothing came within ms. */
static int read_frame(int fd, uint8_t *f, unsigned ms)
{
    size_t got = 0, want = frame_len();
    uint64_t end_at = now_ns() + (uint64_t)ms * 1000000ull;
    while (got < want && now_ns() < end_at) {
        struct pollfd pf = { fd, POLLIN, 0 };
        pump(3, 1, NULL);
        if (poll(&pf, 1, 0) == 1) {
            ssize_t n = recv(fd, f + got, want - got, MSG_DONTWAIT);
            if (n <= 0)
                return 0;
            got += (size_t)n;
        }
    }
    return got == want;
}

static uint64_t rejected(int r) { return bfo_tcp_get_stats(E[r].tv)->hellos_rejected; }

/* ------------------------------------------------------------------ tests
 * (the connections themselves, test_authenticated_only_one_side_asks,
 * _both_ask_at_once and _a_challenged_hello_answers_the_other_sides_ask,
 * are bfo_trust_harness.h's: the same on every transport) */

/* The dialer computes right after its hello went (no progress call for
 * five connect timeouts): the acceptor, its challenge acknowledged by the
 * dialer's kernel, waits for the CONFIRM; the dialer, back, connects with
 * no failure on either side. */
static void test_authenticated_a_computing_dialer_is_waited_for(void **state)
{
    uint64_t end_at;
    (void)state;
    open_two();
    want_up = 1;
    ask(1);
    pump(2, 20, NULL); /* rank 1 dials; its hello goes */
    end_at = now_ns() + 5 * TMO_NS;
    while (now_ns() < end_at) { /* rank 0 alone: challenges, waits */
        bfo_tcp_progress(E[0].tv, 0);
        usleep(500);
    }
    pump(3, 3000, both_up);
    pump(3, 100, NULL);
    th_up_once_clean();
    close_two();
}

/* (a) */
static void test_a_forged_hello_does_not_take_a_live_rail(void **state)
{
    uint8_t f[256], area[BFO_TCP_HELLO_AUTH_SIZE], reply[256];
    bfo_auth *evil;
    bfo_auth_hs hs;
    int fd;
    (void)state;
    open_two();
    connect_pair(1);
    /* an outsider: knows the job id and the public keys, not the
     * membership key; its handshake HELLO is well formed (it has no MAC) */
    evil = th_outsider(0x66, SIZE, JOB);
    memset(area, 0, sizeof area);
    assert_int_equal(bfo_auth_hs_hello(evil, &hs, 1, 0, UINT32_MAX, area), BFO_OK);

    /* the attempt the old code took: 2^64-1 */
    fd = raw_dial(1);
    put_hello(f, 0, UINT64_MAX, BFO_TCP_A_HELLO, noauth ? NULL : area, sizeof area);
    send_all(fd, f, frame_len());
    pump(3, 100, NULL);
    close(fd);
    /* the highest the handshake carries, through the challenge: a CONFIRM
     * it cannot make */
    fd = raw_dial(1);
    put_hello(f, 0, noauth ? UINT64_MAX : UINT32_MAX, BFO_TCP_A_HELLO, noauth ? NULL : area, sizeof area);
    send_all(fd, f, frame_len());
    if (!noauth) {
        assert_true(read_frame(fd, reply, 1000)); /* the challenge */
        assert_int_equal(bfo_auth_hs_read_reply(evil, &hs, reply + BFO_TCP_HDR_SIZE + BFO_TCP_HELLO_SIZE,
                                                BFO_AUTH_REPLY_LEN),
                         BFO_ERR_INVALID); /* rank 1's pair key is not the outsider's */
        memset(area, 0xa5, sizeof area);
        put_hello(f, 0, UINT32_MAX, BFO_TCP_A_CONFIRM, area, sizeof area);
        send_all(fd, f, frame_len());
    }
    pump(3, 200, NULL);
    close(fd);
    pump(3, 100, NULL);

    /* nothing happened on either side: the rail is rank 0's */
    assert_int_equal(E[1].errors, 0);
    assert_int_equal(E[0].errors, 0);
    assert_int_equal(E[1].connected, 1);
    assert_int_equal(E[0].connected, 1);
    if (!noauth)
        assert_true(rejected(1) >= 2);
    /* and the real rank 0, dialing again, is taken: the forged attempt
     * made none of its hellos stale */
    connect_pair(2);
    bfo_auth_free(evil);
    close_two();
}

/* An unproven hello before any connection: the real rank 0 connects after it. */
static void test_a_forged_hello_first_does_not_lock_the_real_rank_out(void **state)
{
    uint8_t f[256], area[BFO_TCP_HELLO_AUTH_SIZE];
    bfo_auth *evil;
    bfo_auth_hs hs;
    int fd;
    (void)state;
    open_two();
    evil = th_outsider(0x67, SIZE, JOB);
    assert_int_equal(bfo_auth_hs_hello(evil, &hs, 1, 0, UINT32_MAX, area), BFO_OK);
    fd = raw_dial(1);
    put_hello(f, 0, noauth ? UINT64_MAX : UINT32_MAX, BFO_TCP_A_HELLO, noauth ? NULL : area, sizeof area);
    send_all(fd, f, frame_len());
    pump(2, 100, NULL);
    close(fd); /* the outsider goes, having proven nothing */
    pump(2, 50, NULL);
    assert_int_equal(E[1].connected, 0);
    E[1].errors = 0;
    connect_pair(1);
    bfo_auth_free(evil);
    close_two();
}

/* (b) */
static void test_a_replayed_hello_and_confirm_are_refused(void **state)
{
    uint8_t hello[256], confirm[256], reply[256], area[BFO_TCP_HELLO_AUTH_SIZE];
    bfo_auth_hs hs;
    int fd;
    (void)state;
    open_rank(1);
    /* a real exchange of rank 0's (rank 0's own keys), recorded on the way */
    memset(area, 0, sizeof area);
    assert_int_equal(bfo_auth_hs_hello(A[0], &hs, 1, 0, 1, area), BFO_OK);
    put_hello(hello, 0, 1, BFO_TCP_A_HELLO, noauth ? NULL : area, sizeof area);
    fd = raw_dial(1);
    send_all(fd, hello, frame_len());
    assert_true(read_frame(fd, reply, 1000));
    if (!noauth) {
        assert_int_equal(bfo_auth_hs_read_reply(A[0], &hs, reply + BFO_TCP_HDR_SIZE + BFO_TCP_HELLO_SIZE,
                                                BFO_AUTH_REPLY_LEN),
                         BFO_OK);
        memset(area, 0, sizeof area);
        assert_int_equal(bfo_auth_hs_confirm(A[0], &hs, area), BFO_OK);
        put_hello(confirm, 0, 1, BFO_TCP_A_CONFIRM, area, sizeof area);
        send_all(fd, confirm, frame_len());
    }
    want_up = 1;
    pump(2, 1000, one_up);
    assert_int_equal(E[1].connected, 1); /* it was real */
    close(fd);
    close_rank(1);

    /* rank 1 again, its attempt numbers forgotten (a restarted transport):
     * the recording, replayed */
    open_rank(1);
    fd = raw_dial(1);
    send_all(fd, hello, frame_len());
    if (!noauth) {
        assert_true(read_frame(fd, reply, 1000)); /* a fresh challenge: another nonce */
        send_all(fd, confirm, frame_len());
    }
    pump(2, 300, NULL);
    assert_int_equal(E[1].connected, 0);
    assert_int_equal(E[1].errors, 0);
    if (!noauth)
        assert_int_equal(rejected(1), 1);
    close(fd);
    close_rank(1);
}

/* (c) */
static void test_a_job_member_posing_as_another_rank_is_refused(void **state)
{
    uint8_t f[256], reply[256], area[BFO_TCP_HELLO_AUTH_SIZE];
    bfo_auth_hs hs;
    int fd;
    (void)state;
    open_two();
    connect_pair(1);
    /* rank 2 (a member: the membership key, its own identity) writes its
     * own handshake HELLO and says rank 0 in it and in the frame */
    memset(area, 0, sizeof area);
    assert_int_equal(bfo_auth_hs_hello(A[2], &hs, 1, 0, 5, area), BFO_OK);
    area[4] = 0; /* the HELLO's rank: 2 -> 0 */
    fd = raw_dial(1);
    put_hello(f, 0, 5, BFO_TCP_A_HELLO, noauth ? NULL : area, sizeof area);
    send_all(fd, f, frame_len());
    if (!noauth) {
        /* the challenge; the best answer a member has: a CONFIRM over the
         * right transcript under the keys it holds (its pair key with rank
         * 1), named rank 0 */
        assert_true(read_frame(fd, reply, 1000));
        memcpy(hs.transcript, area, BFO_AUTH_HELLO_LEN);
        memcpy(hs.transcript + BFO_AUTH_HELLO_LEN, reply + BFO_TCP_HDR_SIZE + BFO_TCP_HELLO_SIZE, BFO_AUTH_REPLY_LEN);
        hs.step = 2;
        memset(area, 0, sizeof area);
        assert_int_equal(bfo_auth_hs_confirm(A[2], &hs, area), BFO_OK);
        area[4] = 0;
        put_hello(f, 0, 5, BFO_TCP_A_CONFIRM, area, sizeof area);
        send_all(fd, f, frame_len());
    }
    pump(3, 300, NULL);
    assert_int_equal(E[1].errors, 0);
    assert_int_equal(E[0].errors, 0);
    assert_int_equal(E[1].connected, 1);
    if (!noauth)
        assert_int_equal(rejected(1), 1);
    close(fd);
    pump(3, 50, NULL);
    assert_int_equal(E[1].errors + E[0].errors, 0);
    close_two();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_authenticated_only_one_side_asks),
        cmocka_unit_test(test_authenticated_both_ask_at_once),
        cmocka_unit_test(test_authenticated_a_challenged_hello_answers_the_other_sides_ask),
        cmocka_unit_test(test_authenticated_a_computing_dialer_is_waited_for),
        cmocka_unit_test(test_a_forged_hello_does_not_take_a_live_rail),
        cmocka_unit_test(test_a_forged_hello_first_does_not_lock_the_real_rank_out),
        cmocka_unit_test(test_a_replayed_hello_and_confirm_are_refused),
        cmocka_unit_test(test_a_job_member_posing_as_another_rank_is_refused),
    };
    return cmocka_run_group_tests(tests, setup_keys, th_keys_free);
}
