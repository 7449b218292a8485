// SPDX-License-Identifier: BSD-3-Clause
/* test_shm_hostile.c - a shm peer that lies with what it hands over
 * (issue 38, item 4): the victim is rank 1 of a job of 2, opened in this
 * process on one shm rail with no bfo_auth (the hellos taken at their
 * word: what a job member, or any local process of the same uid, can send
 * once authentication is not in the way).  The attacker poses as rank 0
 * from a raw SOCK_SEQPACKET socket on rank 1's listener, with a segment
 * and a doorbell of its own choosing:
 *   (a) a doorbell that is not an eventfd (a full pipe, a regular file):
 *       refused, and the victim never blocks writing it;
 *   (b) a segment shorter than the hello says: refused, no SIGBUS;
 *   (c) records written into the ring directly: a bad kind or length
 *       under a right checksum refused (the checks do not lean on it); a
 *       header rewritten after it was checked, while the engine holds the
 *       record back, is not read again (the checked copy is offered);
 *   (d) same uid: the rule as data, and, as root, a real hello from a
 *       child that became nobody: refused, taken with options.any_uid.
 * One process (and a forked child for (d)). */
#define _GNU_SOURCE
#include "bfo_test.h"
#include "bfo_test_ranks.h"
#include "bfo_shm.h"
#include "bfo_tp_os.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <grp.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

/* Built against the bfo_shm.{c,h} of before (to see each test fail
 * there): no any_uid, and any uid was taken. */
#ifndef BFO_SHM_SAME_UID
#define HOSTILE_OLD_SHM 1
static int bfo_shm_uid_allowed(uint32_t peer_uid, uint32_t my_uid, int any_uid)
{
    (void)peer_uid, (void)my_uid, (void)any_uid;
    return 1;
}
#endif

#define JOB 0x40571e5eull
#define SIZE 2
#define RING 65536u
#define SEG_LEN (BFO_SHM_SEG_HDR + 2u * RING)

static const bfo_transport_ops *const OPS = &bfo_shm_transport;

/* the victim, rank 1, and what its sink heard */
static void *V;
static bfo_addr vaddr;
static unsigned connected, errors;
static int hold;              /* the sink answers BFO_ERR_AGAIN (back-pressure) */
static size_t offered[16];    /* the length of each frame offered */
static unsigned noffered, taken;

static void v_event(void *ctx, int peer, int rail, int ev, uint64_t now)
{
    (void)ctx, (void)peer, (void)rail, (void)now;
    if (ev == BFO_EV_CONNECTED || ev == BFO_EV_CONNECTED_PROVEN)
        connected++;
    else
        errors++;
}
static int v_frame(void *ctx, int peer, int rail, const uint8_t *buf, size_t len, uint64_t now)
{
    (void)ctx, (void)peer, (void)rail, (void)buf, (void)now;
    if (noffered < 16)
        offered[noffered++] = len;
    if (hold)
        return BFO_ERR_AGAIN;
    taken++;
    return BFO_OK;
}
static int v_lookup(void *ctx, int peer, int rail, bfo_addr *out)
{
    (void)ctx, (void)peer, (void)rail, (void)out;
    return BFO_ERR_INVALID;
}

static void open_victim(int any_uid)
{
    const bfo_config base = { .eager_limit = 4096, .frag_size = 8192 };
    const tr_job j = { OPS, SIZE, "shm", &base, getenv("TEST_SHM_LOG") ? atoi(getenv("TEST_SHM_LOG")) : -1 };
    bfo_sink sink = { NULL, tr_no_completion, v_frame, v_event, NULL, v_lookup, NULL, NULL, NULL, NULL };
    bfo_shm_options o;
    bfo_backend be;
    memset(&o, 0, sizeof o);
    o.ring_bytes = RING;
    o.node_bytes = -1;
    o.connect_timeout_ns = 300000000ull;
#ifndef HOSTILE_OLD_SHM
    o.any_uid = any_uid;
#else
    (void)any_uid;
#endif
    connected = errors = taken = noffered = 0;
    hold = 0;
    tr_open(&j, 1, &sink, &o, &V, &be, &vaddr);
    assert_int_equal(OPS->start(V, JOB), BFO_OK);
}

static void close_victim(void)
{
    OPS->fini(V);
    V = NULL;
}

static void pump(unsigned ms)
{
    uint64_t end = bfo_tp_now() + (uint64_t)ms * 1000000ull;
    while (bfo_tp_now() < end) {
        OPS->progress(V, bfo_tp_now());
        usleep(200);
    }
}

static bfo_rail_stats stats(void)
{
    bfo_rail_stats st;
    OPS->stats(V, 0, &st);
    return st;
}

/* ------------------------------------------------------------ the attacker */

/* A SOCK_SEQPACKET connection to the victim's listener, named from its address. */
static int raw_dial(void)
{
    struct sockaddr_un sa;
    const uint8_t *b = vaddr.bytes;
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0), n;
    if (fd < 0)
        return -1;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    n = snprintf(sa.sun_path + 1, sizeof sa.sun_path - 1, "bfo-shm.%u.%016llx.%d", bfo_get32(b + BFO_SHM_ADDR_OFF_PID),
                 (unsigned long long)bfo_get64(b + BFO_SHM_ADDR_OFF_NONCE), 0);
    if (connect(fd, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n)) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* A segment as rank 0 dialing rank 1 makes it for generation 1, of `bytes`
 * bytes (SEG_LEN: right), sealed; *map: its mapping (SEG_LEN bytes, of
 * which `bytes` may be touched), NULL: unmapped. */
static int raw_segment(size_t bytes, uint8_t **map)
{
    int fd = memfd_create("attacker", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    uint8_t *seg;
    if (fd < 0 || ftruncate(fd, (off_t)bytes) != 0 ||
        fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0)
        return -1;
    seg = (uint8_t *)mmap(NULL, SEG_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (seg == MAP_FAILED)
        return -1;
    bfo_put32(seg, BFO_SHM_SEG_MAGIC);
    bfo_put32(seg + 4, BFO_SHM_SEG_VERSION);
    bfo_put64(seg + 8, 1);
    bfo_put64(seg + 16, JOB);
    bfo_put32(seg + 24, 0);
    bfo_put32(seg + 28, 1);
    bfo_put32(seg + 32, 0);
    bfo_put32(seg + 36, RING);
    bfo_put64(seg + 40, SEG_LEN);
    if (map)
        *map = seg;
    else
        munmap(seg, SEG_LEN);
    return fd;
}

/* Rank 0's hello for generation 1, with the segment and doorbell given: 0 sent. */
static int send_hello(int fd, int seg, int bell)
{
    uint8_t h[BFO_SHM_HELLO_SIZE];
    int fds[2] = { seg, bell };
    memset(h, 0, sizeof h);
    bfo_put32(h, BFO_SHM_HELLO_MAGIC);
    bfo_put16(h + 4, BFO_SHM_HELLO_VERSION);
    bfo_put16(h + 6, BFO_SHM_HELLO);
    bfo_put32(h + 8, 0);
    bfo_put32(h + 12, 0);
    bfo_put32(h + 16, SIZE);
    bfo_put32(h + 20, (uint32_t)getpid());
    bfo_put64(h + 24, JOB);
    bfo_put64(h + 32, 1);
    bfo_put64(h + 40, SEG_LEN);
    bfo_put32(h + 48, RING);
    return bfo_tp_send_fds(fd, h, sizeof h, fds, 2);
}

/* Ring 0 (rank 0 to rank 1) of seg: a record at byte position pos, as a
 * writer makes it (the checksum right for what it says), then the head
 * published past it. */
static void put_record(uint8_t *seg, uint64_t pos, uint32_t seq, uint32_t len, int kind, size_t body)
{
    uint8_t *r = seg + BFO_SHM_SEG_HDR + (pos & (RING - 1));
    size_t sz = (BFO_SHM_REC_HDR + body + BFO_SHM_REC_ALIGN - 1) & ~(size_t)(BFO_SHM_REC_ALIGN - 1);
    uint32_t c;
    bfo_put32(r, seq);
    bfo_put32(r + 4, len);
    bfo_put16(r + 8, (uint16_t)kind);
    bfo_put16(r + 10, 1);
    memset(r + BFO_SHM_REC_HDR, 0x11, body);
    r[BFO_SHM_REC_HDR] = 0x7f; /* no frame type: the sink here does not parse */
    c = bfo_shm_crc32c(0, r, 12);
    bfo_put32(r + 12, bfo_shm_crc32c(c, r + BFO_SHM_REC_HDR, body));
    __atomic_store_n((uint64_t *)(void *)(seg + 64), pos + sz, __ATOMIC_RELEASE);
}

/* The victim connected to the attacker as rank 0 (a right segment and an
 * eventfd); the segment's mapping in *seg, the socket returned. */
static int attacker_connected(uint8_t **seg)
{
    int fd = raw_dial(), mfd = raw_segment(SEG_LEN, seg), bell = eventfd(0, EFD_CLOEXEC);
    assert_true(fd >= 0 && mfd >= 0 && bell >= 0);
    assert_int_equal(send_hello(fd, mfd, bell), 0);
    close(mfd);
    close(bell);
    pump(100);
    assert_int_equal(connected, 1);
    return fd;
}

/* ------------------------------------------------------------------ tests */

static void on_alarm(int sig) { (void)sig; }

/* (a) A pipe nobody reads, filled, as the doorbell; then the attacker
 * says it sleeps and writes a frame: a victim that took the pipe writes
 * it (to wake the "sleeping" dialer) and blocks there.  An alarm breaks a
 * blocked write (EINTR) so that the test ends either way; the time spent
 * in progress says whether it blocked. */
static void test_a_pipe_for_a_doorbell_is_refused_and_never_blocks_the_acceptor(void **state)
{
    struct sigaction sa, old;
    struct itimerval it = { { 0, 0 }, { 2, 0 } }, off = { { 0, 0 }, { 0, 0 } };
    int p[2], fd, mfd, fl;
    uint8_t *seg;
    uint64_t t0, longest = 0;
    (void)state;
    open_victim(0);
    assert_int_equal(pipe(p), 0);
    fl = fcntl(p[1], F_GETFL);
    assert_int_equal(fcntl(p[1], F_SETFL, fl | O_NONBLOCK), 0);
    while (write(p[1], "12345678", 8) == 8)
        ;
    assert_int_equal(fcntl(p[1], F_SETFL, fl), 0); /* full, and blocking */
    fd = raw_dial();
    mfd = raw_segment(SEG_LEN, &seg);
    assert_true(fd >= 0 && mfd >= 0);
    assert_int_equal(send_hello(fd, mfd, p[1]), 0);
    close(mfd);
    pump(100);
    /* the attack, whatever the victim made of the hello */
    __atomic_store_n((uint32_t *)(void *)(seg + 320), 1u, __ATOMIC_SEQ_CST); /* "the dialer sleeps" */
    put_record(seg, 0, 1, 40, BFO_SHM_REC_DATA, 40);
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm; /* no SA_RESTART: a blocked write returns EINTR */
    sigaction(SIGALRM, &sa, &old);
    setitimer(ITIMER_REAL, &it, NULL);
    for (int k = 0; k < 100; k++) {
        t0 = bfo_tp_now();
        OPS->progress(V, bfo_tp_now());
        if (bfo_tp_now() - t0 > longest)
            longest = bfo_tp_now() - t0;
        usleep(500);
    }
    setitimer(ITIMER_REAL, &off, NULL);
    sigaction(SIGALRM, &old, NULL);
    assert_true(longest < 500000000ull); /* never blocked in write() */
    assert_int_equal(connected, 0);
    assert_int_equal(taken, 0);
    assert_true(stats().hellos_rejected >= 1);
    close(fd);
    close(p[0]);
    close(p[1]);
    munmap(seg, SEG_LEN);
    close_victim();
}

/* (a) A regular file as the doorbell: refused (the victim would write
 * its wake-ups into it). */
static void test_a_regular_file_for_a_doorbell_is_refused(void **state)
{
    char path[] = "/tmp/bfo-shm-hostile-XXXXXX";
    int fd, mfd, file = mkstemp(path);
    (void)state;
    assert_true(file >= 0);
    unlink(path);
    open_victim(0);
    fd = raw_dial();
    mfd = raw_segment(SEG_LEN, NULL);
    assert_true(fd >= 0 && mfd >= 0);
    assert_int_equal(send_hello(fd, mfd, file), 0);
    close(mfd);
    pump(100);
    assert_int_equal(connected, 0);
    assert_int_equal(stats().hellos_rejected, 1);
    close(fd);
    close(file);
    close_victim();
}

/* (b) A segment of one ring where the hello says two: mapped, the victim
 * would SIGBUS at ring 1's first byte.  Refused at the hello; a real
 * eventfd with it, so only the segment is at fault. */
static void test_a_segment_shorter_than_its_hello_is_refused(void **state)
{
    int fd, mfd, bell = eventfd(0, EFD_CLOEXEC);
    (void)state;
    open_victim(0);
    fd = raw_dial();
    mfd = raw_segment(BFO_SHM_SEG_HDR + RING, NULL);
    assert_true(fd >= 0 && mfd >= 0 && bell >= 0);
    assert_int_equal(send_hello(fd, mfd, bell), 0);
    close(mfd);
    close(bell);
    pump(100);
    assert_int_equal(connected, 0);
    assert_int_equal(stats().hellos_rejected, 1);
    close(fd);
    close_victim();
}

/* (c) Records whose checksum is right for what they say, but whose kind,
 * or length, is wrong: refused by the checks that come before the
 * checksum (sequence, generation, kind, length), the connection dropped
 * and counted malformed, nothing offered; a length past the ring is
 * refused before the checksum would read past it. */
static void test_a_record_with_a_bad_kind_or_length_and_a_right_checksum_is_refused(void **state)
{
    static const struct { uint32_t len; int kind; size_t body; } bad[] = {
        { 40, 9, 40 },                 /* no such kind */
        { 0xfffffff0u, BFO_SHM_REC_DATA, 40 }, /* longer than the ring */
        { 0, BFO_SHM_REC_DATA, 0 },     /* an empty frame */
    };
    (void)state;
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        uint8_t *seg;
        uint64_t mal;
        int fd;
        open_victim(0);
        fd = attacker_connected(&seg);
        mal = stats().malformed;
        put_record(seg, 0, 1, bad[k].len, bad[k].kind, bad[k].body);
        pump(50);
        assert_int_equal(noffered, 0);
        assert_int_equal(errors, 1);
        assert_true(stats().malformed > mal);
        close(fd);
        munmap(seg, SEG_LEN);
        close_victim();
    }
}

/* (c) A record checked and offered, held back by the engine (BFO_ERR_AGAIN);
 * meanwhile the peer rewrites its header (a length of 1,000 where it said
 * 40, checksum and all unchecked again).  Offered again, it is the record
 * as checked: 40 bytes, and the next record is where that one ends. */
static void test_a_header_rewritten_after_its_check_is_not_read_again(void **state)
{
    uint8_t *seg;
    int fd;
    (void)state;
    open_victim(0);
    fd = attacker_connected(&seg);
    hold = 1;
    put_record(seg, 0, 1, 40, BFO_SHM_REC_DATA, 40);
    pump(20);
    assert_true(noffered >= 1);
    assert_int_equal(offered[0], 40);
    /* rewritten in place after the check: the length only */
    __atomic_store_n((uint32_t *)(void *)(seg + BFO_SHM_SEG_HDR + 4), 1000u, __ATOMIC_RELEASE);
    hold = 0;
    noffered = 0;
    pump(20);
    assert_int_equal(noffered, 1);
    assert_int_equal(offered[0], 40); /* as checked, not as the ring says now */
    assert_int_equal(taken, 1);
    /* the next record, where the first one (as checked) ends */
    put_record(seg, 64, 2, 40, BFO_SHM_REC_DATA, 40);
    pump(20);
    assert_int_equal(taken, 2);
    assert_int_equal(errors, 0);
    close(fd);
    munmap(seg, SEG_LEN);
    close_victim();
}

/* (d) The rule, as data. */
static void test_only_the_same_uid_may_connect_unless_any_uid(void **state)
{
    (void)state;
    assert_int_equal(bfo_shm_uid_allowed(1000, 1000, 0), 1);
    assert_int_equal(bfo_shm_uid_allowed(65534, 1000, 0), 0);
    assert_int_equal(bfo_shm_uid_allowed(0, 1000, 0), 0); /* root is another uid too */
    assert_int_equal(bfo_shm_uid_allowed(1000, 0, 0), 0);
    assert_int_equal(bfo_shm_uid_allowed(65534, 1000, 1), 1);
}

/* A child that becomes nobody (uid and gid 65534), then dials the victim
 * as rank 0 with a right hello: its exit status is 0 when no reply came
 * (the socket closed, or nothing within a second), 1 when one did, 2 when
 * it could not try. */
static pid_t nobody_dials(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        uint8_t b[256];
        int fd, mfd, bell;
        struct timeval tv = { 1, 0 };
        if (setgroups(0, NULL) != 0 || setresgid(65534, 65534, 65534) != 0 || setresuid(65534, 65534, 65534) != 0)
            _exit(2);
        fd = raw_dial();
        mfd = raw_segment(SEG_LEN, NULL);
        bell = eventfd(0, EFD_CLOEXEC);
        if (fd < 0 || mfd < 0 || bell < 0 || send_hello(fd, mfd, bell) != 0)
            _exit(2);
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        _exit(recv(fd, b, sizeof b, 0) > 0 ? 1 : 0);
    }
    return pid;
}

static int wait_child(pid_t pid)
{
    int st = 0;
    uint64_t end = bfo_tp_now() + 5000000000ull;
    while (waitpid(pid, &st, WNOHANG) == 0 && bfo_tp_now() < end)
        pump(5);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* (d) As root: a hello from another uid is refused (its message never
 * read), counted; with options.any_uid the same hello is taken. */
static void test_a_hello_from_another_uid_is_refused(void **state)
{
    (void)state;
    if (geteuid() != 0)
        skip(); /* setuid needs root (CI runs as root) */
    open_victim(0);
    assert_int_equal(wait_child(nobody_dials()), 0);
    pump(50);
    assert_int_equal(connected, 0);
    assert_int_equal(stats().hellos_rejected, 1);
    close_victim();

    open_victim(1); /* options.any_uid */
    assert_int_equal(wait_child(nobody_dials()), 1);
    pump(50);
    assert_int_equal(connected, 1);
    close_victim();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_pipe_for_a_doorbell_is_refused_and_never_blocks_the_acceptor),
        cmocka_unit_test(test_a_regular_file_for_a_doorbell_is_refused),
        cmocka_unit_test(test_a_segment_shorter_than_its_hello_is_refused),
        cmocka_unit_test(test_a_record_with_a_bad_kind_or_length_and_a_right_checksum_is_refused),
        cmocka_unit_test(test_a_header_rewritten_after_its_check_is_not_read_again),
        cmocka_unit_test(test_only_the_same_uid_may_connect_unless_any_uid),
        cmocka_unit_test(test_a_hello_from_another_uid_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
