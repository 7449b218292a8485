// SPDX-License-Identifier: BSD-3-Clause
/* test_shm_trust.c - who may take a shm rail (issue 37: connections
 * authenticated in the conn machine, as test_tcp_trust.c for TCP).  Ranks
 * 0 and 1 of a job of 3 are opened in this process on one shm rail, each
 * with its bfo_auth made from the job's membership key (a test key) and
 * the other ranks' public keys.  The attacker is a local process: a raw
 * SOCK_SEQPACKET socket on rank 1's listener (its abstract name is in
 * rank 1's address, and in /proc/net/unix: no permission guards it), with
 * a segment of its own (a sealed memfd whose header is right) and an
 * eventfd, as a dialer sends them:
 *   (a) an outsider (the job id, the ranks' public keys, no membership
 *       key) claims rank 0 with the highest generation while rank 0's rail
 *       to rank 1 is up: nothing changes on either side (no RAIL_ERROR, no
 *       CONNECTED), and rank 0, reconnecting after it, still connects
 *       (the forged generation made nothing stale);
 *   (b) a real exchange of rank 0's, recorded (hello and CONFIRM), replayed
 *       to rank 1 restarted: refused, no CONNECTED;
 *   (c) a job member (rank 2) poses as rank 0, answering the challenge as
 *       best it can (its own pair key, over the right transcript): refused;
 *   (d) an unproven hello is given no doorbell (rank 1's eventfd: whoever
 *       holds it can drain the wake-ups meant for rank 1);
 * and, authenticated, the connections themselves: only one side asks,
 * both ask at once, frames both ways, a sleeping acceptor woken by the
 * dialer's first frame.
 *
 * BFO_TEST_NOAUTH=1 runs the same with no bfo_auth (options.auth NULL:
 * the hellos of before, the attacks sent in that format): (a) to (d) fail
 * there; so do they built against the bfo_shm.{c,h} of before (no
 * BFO_SHM_HELLO_AUTH_SIZE: TRUST_OLD_SHM).  One process, no root. */
#define _GNU_SOURCE
#define TRUST_NAP_US 100
#include "bfo_trust_harness.h"
#include "bfo_shm.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* Built against the bfo_shm.h of before (no AUTHENTICATION): the same
 * attacks in the old format, with no bfo_auth. */
#ifndef BFO_SHM_HELLO_AUTH_SIZE
#define TRUST_OLD_SHM 1
#define BFO_SHM_HELLO_AUTH_SIZE 64
#define BFO_SHM_HELLO_CONFIRM 4
#endif

#define JOB 0x5a7e5eedull
#define SIZE 3
#define RING 65536u
#define SEG_LEN (BFO_SHM_SEG_HDR + 2u * RING)
#define TMO_NS 300000000ull /* the connect timeout */

static const bfo_transport_ops *const OPS = &bfo_shm_transport;
static const uint8_t membership[BFO_AUTH_KEY_LEN] = { 0x51, 0x17, 0x99, 0x03 };

static void frames_both_ways(void);

static int setup_keys(void **state)
{
    int old = 0;
    (void)state;
#ifdef TRUST_OLD_SHM
    old = 1;
#endif
    th_then = frames_both_ways; /* each connection carries frames, both ways */
    th_step_ms = 5;
    th_late_ms = 50;
    return th_keys_make(membership, SIZE, JOB, old);
}

static void open_rank(int r)
{
    bfo_config cfg;
    bfo_shm_options o;
    memset(&cfg, 0, sizeof cfg);
    memset(&o, 0, sizeof o);
    cfg.eager_limit = 4096;
    cfg.frag_size = 8192;
    o.ring_bytes = RING;
    o.node_bytes = -1; /* the attacker's ring is RING, whatever the host */
    o.connect_timeout_ns = TMO_NS;
#ifndef TRUST_OLD_SHM
    o.auth = noauth ? NULL : A[r];
#endif
    th_open(OPS, r, SIZE, "shm", &o, &cfg, getenv("TEST_SHM_LOG") ? atoi(getenv("TEST_SHM_LOG")) : -1, JOB);
}

static uint8_t fbuf[64];
static int frames_in(void) { return E[0].frames >= 1 && E[1].frames >= 1; }

/* One frame each way on the rail: taken by both engines, completed ok. */
static void frames_both_ways(void)
{
    bfo_iov iov = { fbuf, sizeof fbuf };
    unsigned f0 = E[0].frames, f1 = E[1].frames;
    E[0].frames = E[1].frames = 0;
    assert_int_equal(E[0].be.post_send(E[0].be.ctx, 1, 0, &iov, 1, 7), 0);
    assert_int_equal(E[1].be.post_send(E[1].be.ctx, 0, 0, &iov, 1, 8), 0);
    pump(3, 2000, frames_in);
    assert_int_equal(E[0].frames, 1);
    assert_int_equal(E[1].frames, 1);
    E[0].frames += f0;
    E[1].frames += f1;
}

/* ------------------------------------------------------------ the attacker */

static size_t msg_len(void) { return BFO_SHM_HELLO_SIZE + (noauth ? 0 : BFO_SHM_HELLO_AUTH_SIZE); }

/* A SOCK_SEQPACKET connection to rank r's listener, named from its address. */
static int raw_dial(int r)
{
    struct sockaddr_un sa;
    const uint8_t *b = table[r].bytes;
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0), n;
    assert_true(fd >= 0);
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    n = snprintf(sa.sun_path + 1, sizeof sa.sun_path - 1, "bfo-shm.%u.%016llx.%d", bfo_get32(b + BFO_SHM_ADDR_OFF_PID),
                 (unsigned long long)bfo_get64(b + BFO_SHM_ADDR_OFF_NONCE), 0);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n)),
                     0);
    return fd;
}

/* A segment as rank `from` dialing rank `to` would make it: a sealed
 * memfd whose header is right for generation gen. */
static int raw_segment(int from, int to, uint64_t gen)
{
    int fd = memfd_create("attacker", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    uint8_t *seg;
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, SEG_LEN), 0);
    assert_int_equal(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL), 0);
    seg = (uint8_t *)mmap(NULL, SEG_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    assert_true(seg != MAP_FAILED);
    bfo_put32(seg, BFO_SHM_SEG_MAGIC);
    bfo_put32(seg + 4, BFO_SHM_SEG_VERSION);
    bfo_put64(seg + 8, gen);
    bfo_put64(seg + 16, JOB);
    bfo_put32(seg + 24, (uint32_t)from);
    bfo_put32(seg + 28, (uint32_t)to);
    bfo_put32(seg + 32, 0);
    bfo_put32(seg + 36, RING);
    bfo_put64(seg + 40, SEG_LEN);
    munmap(seg, SEG_LEN);
    return fd;
}

/* A message as rank `rank` would write it (the handshake's part, when
 * authenticated, is the caller's: auth, alen bytes, or NULL). */
static void put_msg(uint8_t *h, int kind, int rank, uint64_t gen, const uint8_t *auth, size_t alen)
{
    memset(h, 0, msg_len());
    bfo_put32(h, BFO_SHM_HELLO_MAGIC);
    bfo_put16(h + 4, BFO_SHM_HELLO_VERSION);
    bfo_put16(h + 6, (uint16_t)kind);
    bfo_put32(h + 8, (uint32_t)rank);
    bfo_put32(h + 12, 0);
    bfo_put32(h + 16, SIZE);
    bfo_put32(h + 20, (uint32_t)getpid());
    bfo_put64(h + 24, JOB);
    bfo_put64(h + 32, gen);
    bfo_put64(h + 40, kind == BFO_SHM_HELLO ? SEG_LEN : 0);
    bfo_put32(h + 48, kind == BFO_SHM_HELLO ? RING : 0);
    if (auth && !noauth)
        memcpy(h + BFO_SHM_HELLO_SIZE, auth, alen);
}

/* Sends one message, with nfds fds, as shm's dialer does. */
static void send_msg(int fd, const uint8_t *h, const int *fds, int nfds)
{
    assert_int_equal(bfo_tp_send_fds(fd, h, msg_len(), fds, nfds), 0);
}

/* A hello of rank `rank`'s for generation gen, with a segment and an
 * eventfd of the attacker's, as a dialer sends it. */
static void send_hello_as(int fd, int rank, uint64_t gen, const uint8_t *auth)
{
    uint8_t h[256];
    int fds[2] = { raw_segment(rank, 1, gen), eventfd(0, EFD_CLOEXEC) };
    assert_true(fds[1] >= 0);
    put_msg(h, BFO_SHM_HELLO, rank, gen, auth, BFO_AUTH_HELLO_LEN);
    send_msg(fd, h, fds, 2);
    close(fds[0]);
    close(fds[1]);
}

/* Reads one message from fd, pumping the ranks meanwhile: its length (0:
 * the connection closed or nothing came within ms); *nfds: the fds that
 * came with it (closed). */
static ssize_t read_msg(int fd, uint8_t *h, size_t cap, unsigned ms, int *nfds)
{
    uint64_t end_at = now_ns() + (uint64_t)ms * 1000000ull;
    *nfds = 0;
    while (now_ns() < end_at) {
        union {
            struct cmsghdr c;
            char buf[CMSG_SPACE(sizeof(int) * 4)];
        } u;
        struct iovec iov = { h, cap };
        struct msghdr mh;
        ssize_t n;
        pump(3, 1, NULL);
        memset(&mh, 0, sizeof mh);
        mh.msg_iov = &iov;
        mh.msg_iovlen = 1;
        mh.msg_control = u.buf;
        mh.msg_controllen = sizeof u.buf;
        n = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
        if (n < 0 && errno == EAGAIN)
            continue;
        for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); n > 0 && cm; cm = CMSG_NXTHDR(&mh, cm))
            if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
                for (size_t j = 0; j < (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int); j++) {
                    int x;
                    memcpy(&x, CMSG_DATA(cm) + sizeof(int) * j, sizeof x);
                    close(x);
                    ++*nfds;
                }
        return n < 0 ? 0 : n;
    }
    return 0;
}

static uint64_t rejected(int r) { return tr_rejected(OPS, E[r].tv); }

/* ------------------------------------------------------------------ tests
 * (the connections themselves, test_authenticated_only_one_side_asks,
 * _both_ask_at_once and _a_challenged_hello_answers_the_other_sides_ask,
 * are bfo_trust_harness.h's: the same on every transport) */

/* The acceptor (rank 1) sleeps in wait_fds once the connection is up; the
 * dialer's first frame wakes it (authenticated, the dialer holds the
 * acceptor's doorbell only once TAKEN came: it rings it then). */
static void test_authenticated_a_sleeping_acceptor_is_woken_by_the_first_frame(void **state)
{
    int fds[4], n;
    bfo_iov iov = { fbuf, sizeof fbuf };
    uint64_t t0;
    (void)state;
    open_two();
    connect_pair(1);
    for (int k = 0; k < 200 && (n = OPS->wait_fds(E[1].tv, fds, 4)) < 0; k++)
        OPS->progress(E[1].tv, now_ns());
    assert_int_equal(n, 2);
    assert_int_equal(E[0].be.post_send(E[0].be.ctx, 1, 0, &iov, 1, 9), 0);
    t0 = now_ns();
    while (E[1].frames == 0 && now_ns() - t0 < 2000000000ull) {
        struct pollfd pf[2] = { { fds[0], POLLIN, 0 }, { fds[1], POLLIN, 0 } };
        OPS->progress(E[0].tv, now_ns()); /* the dialer: its frame, TAKEN read */
        if (poll(pf, 2, 10) > 0) {
            OPS->progress(E[1].tv, now_ns());
            if (E[1].frames == 0)
                while (OPS->wait_fds(E[1].tv, fds, 4) < 0 && E[1].frames == 0)
                    OPS->progress(E[1].tv, now_ns());
        }
    }
    assert_int_equal(E[1].frames, 1);
    assert_int_equal(E[0].errors + E[1].errors, 0);
    close_two();
}

/* (a) */
static void test_a_forged_hello_does_not_take_a_live_rail(void **state)
{
    uint8_t area[BFO_SHM_HELLO_AUTH_SIZE], reply[256], f[256];
    bfo_auth *evil;
    bfo_auth_hs hs;
    int fd, nfds;
    (void)state;
    open_two();
    connect_pair(1);
    /* an outsider: knows the job id and the public keys, not the
     * membership key; its handshake HELLO is well formed (it has no MAC) */
    evil = th_outsider(0x66, SIZE, JOB);
    memset(area, 0, sizeof area);
    assert_int_equal(bfo_auth_hs_hello(evil, &hs, 1, 0, UINT32_MAX, area), BFO_OK);

    /* the generation the old code took: 2^64-1 */
    fd = raw_dial(1);
    send_hello_as(fd, 0, UINT64_MAX, area);
    pump(3, 100, NULL);
    close(fd);
    /* the highest the handshake carries, through the challenge: a CONFIRM
     * it cannot make */
    fd = raw_dial(1);
    send_hello_as(fd, 0, noauth ? UINT64_MAX : UINT32_MAX, area);
    if (!noauth) {
        assert_int_equal(read_msg(fd, reply, sizeof reply, 1000, &nfds), (ssize_t)msg_len()); /* the challenge */
        assert_int_equal(bfo_auth_hs_read_reply(evil, &hs, reply + BFO_SHM_HELLO_SIZE, BFO_AUTH_REPLY_LEN),
                         BFO_ERR_INVALID); /* rank 1's pair key is not the outsider's */
        memset(area, 0xa5, sizeof area);
        put_msg(f, BFO_SHM_HELLO_CONFIRM, 0, UINT32_MAX, area, BFO_AUTH_CONFIRM_LEN);
        send_msg(fd, f, NULL, 0);
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
        assert_true(rejected(1) >= 1);
    frames_both_ways(); /* and it carries frames */
    /* the real rank 0, dialing again, is taken: the forged generation made
     * none of its hellos stale */
    connect_pair(2);
    frames_both_ways();
    bfo_auth_free(evil);
    close_two();
}

/* An unproven hello before any connection: the real rank 0 connects after it. */
static void test_a_forged_hello_first_does_not_lock_the_real_rank_out(void **state)
{
    uint8_t area[BFO_SHM_HELLO_AUTH_SIZE];
    bfo_auth *evil;
    bfo_auth_hs hs;
    int fd;
    (void)state;
    open_two();
    evil = th_outsider(0x67, SIZE, JOB);
    assert_int_equal(bfo_auth_hs_hello(evil, &hs, 1, 0, UINT32_MAX, area), BFO_OK);
    fd = raw_dial(1);
    send_hello_as(fd, 0, noauth ? UINT64_MAX : UINT32_MAX, area);
    pump(2, 100, NULL);
    close(fd); /* the outsider goes, having proven nothing */
    pump(2, 50, NULL);
    assert_int_equal(E[1].connected, 0);
    E[1].errors = 0;
    connect_pair(1);
    frames_both_ways();
    bfo_auth_free(evil);
    close_two();
}

/* (b) */
static void test_a_replayed_hello_and_confirm_are_refused(void **state)
{
    uint8_t area[BFO_SHM_HELLO_AUTH_SIZE], harea[BFO_SHM_HELLO_AUTH_SIZE], confirm[256], reply[256];
    bfo_auth_hs hs;
    int fd, nfds;
    (void)state;
    open_rank(1);
    /* a real exchange of rank 0's (rank 0's own keys), recorded on the way */
    memset(harea, 0, sizeof harea);
    assert_int_equal(bfo_auth_hs_hello(A[0], &hs, 1, 0, 1, harea), BFO_OK);
    fd = raw_dial(1);
    send_hello_as(fd, 0, 1, harea);
    assert_int_equal(read_msg(fd, reply, sizeof reply, 1000, &nfds), (ssize_t)msg_len());
    if (!noauth) {
        assert_int_equal(bfo_auth_hs_read_reply(A[0], &hs, reply + BFO_SHM_HELLO_SIZE, BFO_AUTH_REPLY_LEN), BFO_OK);
        memset(area, 0, sizeof area);
        assert_int_equal(bfo_auth_hs_confirm(A[0], &hs, area), BFO_OK);
        put_msg(confirm, BFO_SHM_HELLO_CONFIRM, 0, 1, area, BFO_AUTH_CONFIRM_LEN);
        send_msg(fd, confirm, NULL, 0);
    }
    want_up = 1;
    pump(2, 1000, one_up);
    assert_int_equal(E[1].connected, 1); /* it was real */
    close(fd);
    close_rank(1);

    /* rank 1 again, its generations forgotten (a restarted transport): the
     * recording, replayed (the segment and eventfd are the attacker's own:
     * fds are not recorded) */
    open_rank(1);
    fd = raw_dial(1);
    send_hello_as(fd, 0, 1, harea);
    if (!noauth) {
        assert_int_equal(read_msg(fd, reply, sizeof reply, 1000, &nfds), (ssize_t)msg_len()); /* a fresh nonce */
        send_msg(fd, confirm, NULL, 0);
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
    uint8_t area[BFO_SHM_HELLO_AUTH_SIZE], reply[256], f[256];
    bfo_auth_hs hs;
    int fd, nfds;
    (void)state;
    open_two();
    connect_pair(1);
    /* rank 2 (a member: the membership key, its own identity) writes its
     * own handshake HELLO and says rank 0 in it and in the message */
    memset(area, 0, sizeof area);
    assert_int_equal(bfo_auth_hs_hello(A[2], &hs, 1, 0, 5, area), BFO_OK);
    area[4] = 0; /* the HELLO's rank: 2 -> 0 */
    fd = raw_dial(1);
    send_hello_as(fd, 0, 5, area);
    if (!noauth) {
        /* the challenge; the best answer a member has: a CONFIRM over the
         * right transcript under the keys it holds (its pair key with rank
         * 1), named rank 0 */
        assert_int_equal(read_msg(fd, reply, sizeof reply, 1000, &nfds), (ssize_t)msg_len());
        memcpy(hs.transcript, area, BFO_AUTH_HELLO_LEN);
        memcpy(hs.transcript + BFO_AUTH_HELLO_LEN, reply + BFO_SHM_HELLO_SIZE, BFO_AUTH_REPLY_LEN);
        hs.step = 2;
        memset(area, 0, sizeof area);
        assert_int_equal(bfo_auth_hs_confirm(A[2], &hs, area), BFO_OK);
        area[4] = 0;
        put_msg(f, BFO_SHM_HELLO_CONFIRM, 0, 5, area, BFO_AUTH_CONFIRM_LEN);
        send_msg(fd, f, NULL, 0);
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
    frames_both_ways();
    close_two();
}

/* (d) */
static void test_an_unproven_hello_gets_no_doorbell(void **state)
{
    uint8_t area[BFO_SHM_HELLO_AUTH_SIZE], reply[256];
    bfo_auth *evil;
    bfo_auth_hs hs;
    int fd, nfds = -1;
    (void)state;
    open_two();
    evil = th_outsider(0x68, SIZE, JOB);
    assert_int_equal(bfo_auth_hs_hello(evil, &hs, 1, 0, 3, area), BFO_OK);
    fd = raw_dial(1);
    send_hello_as(fd, 0, 3, area);
    /* the answer (the challenge, or before: the reply) */
    assert_int_equal(read_msg(fd, reply, sizeof reply, 1000, &nfds), (ssize_t)msg_len());
    assert_int_equal(nfds, 0); /* rank 1's eventfd is not the attacker's */
    close(fd);
    pump(3, 50, NULL);
    bfo_auth_free(evil);
    close_two();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_authenticated_only_one_side_asks),
        cmocka_unit_test(test_authenticated_both_ask_at_once),
        cmocka_unit_test(test_authenticated_a_challenged_hello_answers_the_other_sides_ask),
        cmocka_unit_test(test_authenticated_a_sleeping_acceptor_is_woken_by_the_first_frame),
        cmocka_unit_test(test_a_forged_hello_does_not_take_a_live_rail),
        cmocka_unit_test(test_a_forged_hello_first_does_not_lock_the_real_rank_out),
        cmocka_unit_test(test_a_replayed_hello_and_confirm_are_refused),
        cmocka_unit_test(test_a_job_member_posing_as_another_rank_is_refused),
        cmocka_unit_test(test_an_unproven_hello_gets_no_doorbell),
    };
    return cmocka_run_group_tests(tests, setup_keys, th_keys_free);
}
