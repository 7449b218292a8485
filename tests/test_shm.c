// SPDX-License-Identifier: BSD-3-Clause
/* test_shm.c - the shared-memory transport (backends/shm): two bfo_shm
 * instances driven through bfo_shm_transport's table, with a fake engine
 * behind a fake sink (frames checked for order and content, completions and
 * rail events recorded) and a fake address book behind sink->lookup.  Both
 * ends in one process where that is enough (the ring, the checksum, the
 * hooks); a forked second process where it matters (a peer that dies, a
 * read of another process's memory, a sleeping process woken by another).
 * The last tests put two real engines on two shm rails. */
#define _GNU_SOURCE
#include "bfo_test.h"
#include "bfo_test_stderr.h"

#include "bfo_shm.h"
#include "bfo_transport.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <time.h>

/* CLOCK_MONOTONIC in nanoseconds. */
static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#define MAXC 8192
#define JOB 0x5eed5eedull

static const bfo_transport_ops *const OPS = &bfo_shm_transport;

/* ------------------------------------------------------- the fake sink */

typedef struct book {
    bfo_addr a[4][BFO_MAX_RAILS];
    int have[4][BFO_MAX_RAILS];
} book;

typedef struct side {
    void *tv;
    bfo_shm *t;
    bfo_backend be;
    int rank, size, nrails;
    book *bk;
    /* the fake engine */
    int again;             /* answer BFO_ERR_AGAIN this many more times */
    int offers, took, bad; /* frames offered, taken, not intact */
    uint32_t ids[MAXC];    /* ids of the frames taken, in order */
    uint32_t offered[64];  /* ids of the first offers, in order */
    int ncomp, nok, nfail;
    uint64_t comp_token[MAXC];
    int comp_ok[MAXC];
    int nev, ev[256], ev_rail[256];
    int heard;
    /* or a real engine */
    int use_eng;
    bfo_engine eng;
    void *emem;
} side;

static void s_completion(void *ctx, uint64_t token, int ok)
{
    side *s = (side *)ctx;
    if (s->use_eng) {
        bfo_engine_completion(&s->eng, token, ok);
        return;
    }
    if (s->ncomp < MAXC) {
        s->comp_token[s->ncomp] = token;
        s->comp_ok[s->ncomp] = ok;
    }
    s->ncomp++;
    if (ok)
        s->nok++;
    else
        s->nfail++;
}

static uint8_t pat(uint32_t id, size_t i) { return (uint8_t)(id * 131u + i * 7u + (i >> 8)); }

/* A test frame: u32 id, u32 length, then pat(id, i). */
static int frame_ok(const uint8_t *b, size_t len)
{
    uint32_t id = bfo_get32(b);
    if (len < 8 || bfo_get32(b + 4) != len)
        return 0;
    for (size_t i = 8; i < len; i++)
        if (b[i] != pat(id, i))
            return 0;
    return 1;
}

static int s_frame(void *ctx, int peer, int rail, const uint8_t *buf, size_t len, uint64_t now)
{
    side *s = (side *)ctx;
    if (s->use_eng)
        return bfo_engine_frame(&s->eng, peer, rail, buf, len, now);
    if (s->offers < 64)
        s->offered[s->offers] = len >= 4 ? bfo_get32(buf) : 0xffffffffu;
    s->offers++;
    if (s->again > 0) {
        s->again--;
        return BFO_ERR_AGAIN;
    }
    if (!frame_ok(buf, len))
        s->bad++;
    if (s->took < MAXC)
        s->ids[s->took] = len >= 4 ? bfo_get32(buf) : 0xffffffffu;
    s->took++;
    return BFO_OK;
}

static void s_event(void *ctx, int peer, int rail, int ev, uint64_t now)
{
    side *s = (side *)ctx;
    if (s->use_eng) {
        bfo_engine_rail_event(&s->eng, peer, rail, ev, now);
        return;
    }
    if (s->nev < 256) {
        s->ev[s->nev] = ev;
        s->ev_rail[s->nev] = rail;
    }
    s->nev++;
}

static void s_heard(void *ctx, int peer, int rail, uint64_t now)
{
    side *s = (side *)ctx;
    if (s->use_eng)
        bfo_engine_rail_heard(&s->eng, peer, rail, now);
    else
        s->heard++;
}

static int s_lookup(void *ctx, int peer, int rail, bfo_addr *out)
{
    side *s = (side *)ctx;
    if (peer < 0 || peer >= 4 || rail < 0 || rail >= BFO_MAX_RAILS || !s->bk->have[peer][rail])
        return BFO_ERR_INVALID;
    *out = s->bk->a[peer][rail];
    return BFO_OK;
}

static int count_ev(const side *s, int ev, int rail)
{
    int n = 0;
    for (int i = 0; i < s->nev && i < 256; i++)
        n += s->ev[i] == ev && (rail < 0 || s->ev_rail[i] == rail);
    return n;
}

/* ------------------------------------------------------------- sides */

static int cfg_max_ops; /* a test's max_ops (0: the engine's default) */

static bfo_config small_cfg(void)
{
    bfo_config c;
    memset(&c, 0, sizeof c);
    c.max_ops = cfg_max_ops;
    c.nranks = 2;
    c.nrails = 2;
    c.connect_at_init = 1; /* the shm glue is judged on rails connected at init */
    c.eager_limit = 4096;
    c.frag_size = 8192; /* frames up to 8256 bytes: a ring of 64 KiB */
    return c;
}

/* Rings of 64 KiB (the default is 1 MiB): they wrap and fill sooner. */
static const bfo_shm_options *small_opt(void)
{
    static bfo_shm_options o;
    o.ring_bytes = 65536;
    return &o;
}

/* The transports' log level: silent, but for the tests that read the log
 * (TEST_SHM_LOG=N shows every test's at level N). */
static int log_level = -1;

static int open_side(side *s, book *bk, int rank, int size, int nrails, const bfo_config *cfg,
                     const bfo_shm_options *o)
{
    static const char *const names[] = { "shm", "shm:1", "shm:2", "shm:3" };
    bfo_sink sink = { s, s_completion, s_frame, s_event, s_heard, s_lookup, NULL, NULL, NULL, NULL };
    bfo_transport_args a;
    bfo_config c = *cfg;
    int rc;
    memset(s, 0, sizeof *s);
    s->rank = rank;
    s->size = size;
    s->nrails = nrails;
    s->bk = bk;
    c.rank = rank;
    c.nranks = size;
    memset(&a, 0, sizeof a);
    a.rank = rank;
    a.size = size;
    a.nrails = nrails;
    a.rails = names;
    a.cfg = &c;
    a.sink = &sink;
    a.opt = o ? o : small_opt();
    a.log_level = getenv("TEST_SHM_LOG") ? atoi(getenv("TEST_SHM_LOG")) : log_level;
    rc = OPS->open(&s->tv, &a);
    if (rc != BFO_OK)
        return rc;
    s->t = (bfo_shm *)s->tv;
    OPS->backend(s->tv, &s->be);
    for (int r = 0; r < nrails; r++) {
        assert_int_equal(OPS->address(s->tv, r, &bk->a[rank][r]), BFO_OK);
        bk->have[rank][r] = 1;
    }
    return BFO_OK;
}

static void close_side(side *s)
{
    if (s->tv)
        OPS->fini(s->tv);
    s->tv = NULL;
    free(s->emem);
    s->emem = NULL;
}

static void progress(side *s) { OPS->progress(s->tv, now_ns()); }

typedef int (*cond_fn)(side *a, side *b, void *arg);

/* Progress both (b may be NULL) until cond holds, for at most ms. */
static int pump(side *a, side *b, cond_fn cond, void *arg, int ms)
{
    uint64_t end = now_ns() + (uint64_t)ms * 1000000ull;
    do {
        if (a)
            progress(a);
        if (b)
            progress(b);
        if (a && a->use_eng)
            bfo_engine_progress(&a->eng, now_ns());
        if (b && b->use_eng)
            bfo_engine_progress(&b->eng, now_ns());
        if (cond && cond(a, b, arg))
            return 1;
    } while (now_ns() < end);
    return cond ? cond(a, b, arg) : 1;
}

static int conn_state(const side *s, int peer, int rail)
{
    bfo_shm_conn_info in;
    assert_int_equal(bfo_shm_get_conn_info(s->t, peer, rail, &in), BFO_OK);
    return in.state;
}

static bfo_shm_conn_info info(const side *s, int peer, int rail)
{
    bfo_shm_conn_info in;
    assert_int_equal(bfo_shm_get_conn_info(s->t, peer, rail, &in), BFO_OK);
    return in;
}

/* rank 0 (a) and rank 1 (b) in this process, started, rail connected. */
static void pair_connect(side *a, side *b, int rail)
{
    int ca = count_ev(a, BFO_EV_CONNECTED, rail), cb = count_ev(b, BFO_EV_CONNECTED, rail);
    assert_int_equal(a->be.connect(a->be.ctx, 1, rail), 0);
    assert_int_equal(b->be.connect(b->be.ctx, 0, rail), 0);
    uint64_t end = now_ns() + 2000000000ull;
    while ((count_ev(a, BFO_EV_CONNECTED, rail) == ca || count_ev(b, BFO_EV_CONNECTED, rail) == cb) &&
           now_ns() < end) {
        progress(a);
        progress(b);
    }
    assert_true(count_ev(a, BFO_EV_CONNECTED, rail) > ca);
    assert_true(count_ev(b, BFO_EV_CONNECTED, rail) > cb);
    assert_int_equal(conn_state(a, 1, rail), 2);
    assert_int_equal(conn_state(b, 0, rail), 2);
}

static void pair_open(side *a, side *b, book *bk, int nrails, const bfo_shm_options *o)
{
    bfo_config c = small_cfg();
    memset(bk, 0, sizeof *bk);
    assert_int_equal(open_side(a, bk, 0, 2, nrails, &c, o), BFO_OK);
    assert_int_equal(open_side(b, bk, 1, 2, nrails, &c, o), BFO_OK);
    assert_int_equal(OPS->start(a->tv, JOB), BFO_OK);
    assert_int_equal(OPS->start(b->tv, JOB), BFO_OK);
    for (int r = 0; r < nrails; r++)
        pair_connect(a, b, r);
}

/* 1 when this process may read its peers' memory (GET on shm rails);
 * the tests of process_vm_readv are skipped where it may not (Yama). */
static int attach_allowed(void)
{
    static int known = -1;
    if (known < 0) {
        side s;
        book bk;
        bfo_config c = small_cfg();
        memset(&bk, 0, sizeof bk);
        assert_int_equal(open_side(&s, &bk, 0, 2, 1, &c, NULL), BFO_OK);
        known = (s.be.rail_caps(s.be.ctx, 0) & BFO_CAP_RDMA) != 0;
        close_side(&s);
        if (!known)
            fprintf(stderr, "test_shm: this process may not read its peers' memory (Yama ptrace_scope): "
                            "the GET tests are skipped\n");
    }
    return known;
}

/* Frames to send live until their completion: a ring of buffers. */
#define WIN 48
static uint8_t fbuf[WIN][8256];

static size_t mk_frame(uint32_t id, size_t len)
{
    uint8_t *b = fbuf[id % WIN];
    bfo_put32(b, id);
    bfo_put32(b + 4, (uint32_t)len);
    for (size_t i = 8; i < len; i++)
        b[i] = pat(id, i);
    return len;
}

/* Posts frame id (len bytes) from s to its peer on rail, in two pieces. */
static int post(side *s, int rail, uint32_t id, size_t len)
{
    bfo_iov iov[2];
    uint8_t *b = fbuf[id % WIN];
    mk_frame(id, len);
    iov[0].base = b;
    iov[0].len = 8;
    iov[1].base = b + 8;
    iov[1].len = len - 8;
    return s->be.post_send(s->be.ctx, 1 - s->rank, rail, iov, 2, id);
}

static int got_completions(side *a, side *b, void *arg)
{
    (void)b;
    return a->ncomp >= *(int *)arg;
}

/* ------------------------------------------------------------- tests */

static void test_crc32c_is_castagnoli(void **state)
{
    uint8_t buf[1000];
    (void)state;
    assert_int_equal(bfo_shm_crc32c(0, "123456789", 9), 0xE3069283u);
    /* chained over pieces and at every alignment: the same as at once */
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (uint8_t)(i * 37 + 11);
    uint32_t whole = bfo_shm_crc32c(0, buf, sizeof buf);
    for (size_t cut = 0; cut < 20; cut++)
        assert_int_equal(bfo_shm_crc32c(bfo_shm_crc32c(0, buf, cut), buf + cut, sizeof buf - cut), whole);
    /* against the bitwise definition */
    for (size_t off = 0; off < 9; off++) {
        uint32_t c = 0xffffffffu;
        for (size_t i = off; i < sizeof buf; i++) {
            c ^= buf[i];
            for (int k = 0; k < 8; k++)
                c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1)));
        }
        assert_int_equal(bfo_shm_crc32c(0, buf + off, sizeof buf - off), ~c);
    }
}

static void test_claims_shm_rails_only(void **state)
{
    (void)state;
    assert_string_equal(OPS->name, "shm");
    assert_true(OPS->claims("shm"));
    assert_true(OPS->claims("shm:a"));
    assert_false(OPS->claims("shmx"));
    assert_false(OPS->claims("tcp:127.0.0.1"));
    assert_false(OPS->claims("127.0.0.1"));
}

static void test_connect_reports_connected_with_generation_and_pid(void **state)
{
    side a, b;
    book bk;
    (void)state;
    pair_open(&a, &b, &bk, 2, NULL);
    for (int r = 0; r < 2; r++) {
        bfo_shm_conn_info ia = info(&a, 1, r), ib = info(&b, 0, r);
        assert_int_equal(ia.generation, 1);
        assert_int_equal(ib.generation, 1);
        assert_int_equal(ia.pid, (int)getpid());
        assert_int_equal(ib.pid, (int)getpid());
        assert_int_equal(ia.ring_bytes, 65536);
    }
    bfo_rail_stats st;
    OPS->stats(a.tv, 0, &st);
    assert_int_equal(st.connects, 1);
    close_side(&a);
    close_side(&b);
}

/* First use: only one side's engine asks (rank 1 sends to rank 0, which
 * never sent to it; then the other way): that side dials, the other takes
 * its hello and hears CONNECTED all the same; nobody fails. */
static void test_either_side_alone_connects(void **state)
{
    (void)state;
    for (int asker = 0; asker < 2; asker++) {
        side s[2];
        book bk;
        bfo_config c = small_cfg();
        uint64_t end;
        memset(&bk, 0, sizeof bk);
        assert_int_equal(open_side(&s[0], &bk, 0, 2, 1, &c, NULL), BFO_OK);
        assert_int_equal(open_side(&s[1], &bk, 1, 2, 1, &c, NULL), BFO_OK);
        assert_int_equal(OPS->start(s[0].tv, JOB), BFO_OK);
        assert_int_equal(OPS->start(s[1].tv, JOB), BFO_OK);
        assert_int_equal(s[asker].be.connect(s[asker].be.ctx, 1 - asker, 0), 0);
        end = now_ns() + 2000000000ull;
        while ((!count_ev(&s[0], BFO_EV_CONNECTED, 0) || !count_ev(&s[1], BFO_EV_CONNECTED, 0)) && now_ns() < end) {
            progress(&s[0]);
            progress(&s[1]);
        }
        for (int r = 0; r < 2; r++) {
            assert_int_equal(count_ev(&s[r], BFO_EV_CONNECTED, 0), 1);
            assert_int_equal(count_ev(&s[r], BFO_EV_CONNECT_FAILED, 0), 0);
            assert_int_equal(conn_state(&s[r], 1 - r, 0), 2);
        }
        assert_int_equal(info(&s[0], 1, 0).generation, 1);
        close_side(&s[0]);
        close_side(&s[1]);
    }
}

/* Rank 0 dials; rank 1 computes (no progress call) for five connect
 * timeouts: its process exists and holds the listener the dial reached.
 * Rank 0 does not fail the attempt, and tells the engine that the peer is
 * heard; rank 1 calls in, both are connected. */
static void test_a_dialer_waiting_for_a_computing_peer_is_not_failed(void **state)
{
    side a, b;
    book bk;
    bfo_config c = small_cfg();
    bfo_shm_options o = *small_opt();
    uint64_t end;
    (void)state;
    o.connect_timeout_ns = 100000000ull;
    memset(&bk, 0, sizeof bk);
    assert_int_equal(open_side(&a, &bk, 0, 2, 1, &c, &o), BFO_OK);
    assert_int_equal(open_side(&b, &bk, 1, 2, 1, &c, &o), BFO_OK);
    assert_int_equal(OPS->start(a.tv, JOB), BFO_OK);
    assert_int_equal(OPS->start(b.tv, JOB), BFO_OK);
    assert_int_equal(a.be.connect(a.be.ctx, 1, 0), 0);
    pump(&a, NULL, NULL, NULL, 500);
    assert_int_equal(count_ev(&a, BFO_EV_CONNECT_FAILED, 0), 0);
    assert_int_equal(count_ev(&a, BFO_EV_CONNECTED, 0), 0);
    assert_int_equal(conn_state(&a, 1, 0), 1); /* the hello sent, waiting */
    assert_true(a.heard >= 2); /* every 100 ms at most: 5 in 500 ms, fewer on a loaded machine */
    end = now_ns() + 2000000000ull;
    while ((!count_ev(&a, BFO_EV_CONNECTED, 0) || !count_ev(&b, BFO_EV_CONNECTED, 0)) && now_ns() < end) {
        progress(&b);
        progress(&a);
    }
    assert_int_equal(count_ev(&a, BFO_EV_CONNECTED, 0), 1);
    assert_int_equal(count_ev(&b, BFO_EV_CONNECTED, 0), 1);
    assert_int_equal(count_ev(&a, BFO_EV_CONNECT_FAILED, 0) + count_ev(&b, BFO_EV_CONNECT_FAILED, 0), 0);
    close_side(&a);
    close_side(&b);
}

static void test_frames_in_order_and_intact_across_ring_wraparound(void **state)
{
    side a, b;
    book bk;
    const uint32_t n = 3000;
    uint32_t next = 0;
    uint64_t seed = 7;
    (void)state;
    pair_open(&a, &b, &bk, 1, NULL);
    while (next < n || a.ncomp < (int)n) {
        while (next < n && next < (uint32_t)a.ncomp + WIN) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            size_t len = 8 + (size_t)(seed >> 33) % (8256 - 8 + 1);
            assert_int_equal(post(&a, 0, next, len), 0);
            next++;
        }
        progress(&b);
        progress(&a);
    }
    assert_int_equal(b.took, n);
    assert_int_equal(b.bad, 0);
    assert_int_equal(a.nok, n);
    for (uint32_t i = 0; i < n; i++) {
        assert_int_equal(b.ids[i], i);
        assert_int_equal(a.comp_token[i], i);
    }
    bfo_shm_conn_info in = info(&a, 1, 0);
    assert_true(in.tx_head > 50 * in.ring_bytes); /* wrapped around many times */
    assert_int_equal(in.tx_tail, in.tx_head);
    assert_int_equal(info(&b, 0, 0).rx_tail, in.tx_head);
    close_side(&a);
    close_side(&b);
}

static void test_ok_only_after_the_receivers_engine_took_the_frame(void **state)
{
    side a, b;
    book bk;
    (void)state;
    pair_open(&a, &b, &bk, 1, NULL);
    assert_int_equal(post(&a, 0, 1, 100), 0);
    for (int i = 0; i < 200; i++)
        progress(&a);
    assert_int_equal(a.ncomp, 0); /* written into the ring is not delivered */
    b.again = 5;
    for (int i = 0; i < 5; i++)
        progress(&b);
    assert_int_equal(b.offers, 5);
    assert_int_equal(b.took, 0);
    for (int i = 0; i < 200; i++)
        progress(&a);
    assert_int_equal(a.ncomp, 0); /* offered, refused: still not delivered */
    progress(&b);
    assert_int_equal(b.took, 1);
    int heard = a.heard;
    progress(&a);
    assert_int_equal(a.ncomp, 1);
    assert_int_equal(a.comp_ok[0], 1);
    assert_int_equal(a.comp_token[0], 1);
    assert_true(a.heard > heard); /* the consumed counter moved: the peer is heard */
    close_side(&a);
    close_side(&b);
}

static void test_again_offers_the_same_frame_later_in_order(void **state)
{
    side a, b;
    book bk;
    int ten = 10;
    (void)state;
    pair_open(&a, &b, &bk, 1, NULL);
    for (uint32_t i = 0; i < 10; i++)
        assert_int_equal(post(&a, 0, i, 64 + i), 0);
    b.again = 3;
    assert_true(pump(&a, &b, got_completions, &ten, 2000));
    assert_int_equal(b.offered[0], 0);
    assert_int_equal(b.offered[1], 0);
    assert_int_equal(b.offered[2], 0);
    assert_int_equal(b.offered[3], 0); /* the fourth offer is taken */
    assert_int_equal(b.offered[4], 1);
    assert_int_equal(b.took, 10);
    for (int i = 0; i < 10; i++)
        assert_int_equal(b.ids[i], (uint32_t)i);
    assert_int_equal(b.bad, 0);
    assert_int_equal(a.nok, 10);
    bfo_rail_stats st;
    OPS->stats(b.tv, 0, &st);
    assert_int_equal(st.backpressure, 1);
    assert_true(st.keepalives_tx >= 1); /* the stalled side's beat: the sender hears it */
    assert_true(a.heard >= 1);
    close_side(&a);
    close_side(&b);
}

static void test_full_ring_leaves_sends_queued_until_space_frees(void **state)
{
    side a, b;
    book bk;
    int n = 40;
    (void)state;
    pair_open(&a, &b, &bk, 1, NULL);
    for (uint32_t i = 0; i < (uint32_t)n; i++) /* 40 x 8 KiB into a ring of 64 KiB */
        assert_int_equal(post(&a, 0, i, 8192), 0);
    for (int i = 0; i < 100; i++)
        progress(&a);
    bfo_shm_conn_info in = info(&a, 1, 0);
    assert_true(in.queued > 0);
    assert_int_equal(in.queued + in.in_flight, n);
    assert_true(in.tx_head <= in.ring_bytes);
    assert_int_equal(a.ncomp, 0);
    assert_true(pump(&a, &b, got_completions, &n, 2000));
    assert_int_equal(b.took, n);
    for (int i = 0; i < n; i++)
        assert_int_equal(b.ids[i], (uint32_t)i);
    assert_int_equal(b.bad, 0);
    assert_int_equal(a.nok, n);
    in = info(&a, 1, 0);
    assert_int_equal(in.queued, 0);
    assert_int_equal(in.in_flight, 0);
    close_side(&a);
    close_side(&b);
}

/* More sends posted than the transport has descriptors (the engine's
 * pools grew past max_ops): the descriptors grow, nothing is refused, and
 * every frame arrives in order. */
static void test_descriptors_grow_when_more_sends_are_posted_than_there_are(void **state)
{
    side a, b;
    book bk;
    int n = 1000; /* max_ops 64: 80 descriptors at first */
    uint8_t(*bufs)[1024]; /* a ring of 64 KiB holds 60-odd: the rest queue */
    (void)state;
    cfg_max_ops = 64;
    pair_open(&a, &b, &bk, 1, NULL);
    cfg_max_ops = 0;
    bufs = malloc((size_t)n * sizeof *bufs);
    assert_non_null(bufs);
    for (int i = 0; i < n; i++) {
        bfo_iov iov[1];
        bfo_put32(bufs[i], (uint32_t)i);
        bfo_put32(bufs[i] + 4, 1024);
        for (size_t k = 8; k < 1024; k++)
            bufs[i][k] = pat((uint32_t)i, k);
        iov[0].base = bufs[i];
        iov[0].len = 1024;
        assert_int_equal(a.be.post_send(a.be.ctx, 1, 0, iov, 1, (uint64_t)i), 0);
    }
    assert_true(pump(&a, &b, got_completions, &n, 5000));
    assert_int_equal(b.took, n);
    for (int i = 0; i < n; i++)
        assert_int_equal(b.ids[i], (uint32_t)i);
    assert_int_equal(b.bad, 0);
    assert_int_equal(a.nok, n);
    free(bufs);
    close_side(&a);
    close_side(&b);
}

static int rail_error_both(side *a, side *b, void *arg)
{
    int rail = *(int *)arg;
    return count_ev(a, BFO_EV_RAIL_ERROR, rail) > 0 && count_ev(b, BFO_EV_RAIL_ERROR, rail) > 0;
}

static void test_corrupt_slot_fails_the_rail_and_reconnect_uses_a_new_generation(void **state)
{
    side a, b;
    book bk;
    int rail = 0, five = 5;
    (void)state;
    pair_open(&a, &b, &bk, 1, NULL);
    for (uint32_t i = 0; i < 3; i++)
        assert_int_equal(post(&a, 0, i, 300), 0);
    bfo_shm_test_corrupt_next(a.t, 0);
    assert_int_equal(post(&a, 0, 3, 300), 0); /* one byte flipped after its checksum */
    assert_int_equal(post(&a, 0, 4, 300), 0);
    assert_true(pump(&a, &b, rail_error_both, &rail, 2000));
    assert_int_equal(b.took, 3); /* 0..2, then the checksum stops the corrupt slot */
    assert_int_equal(b.bad, 0);
    assert_int_equal(a.ncomp, 5); /* every op in flight completed */
    assert_int_equal(a.nok, 3);   /* those the peer's engine took, ok */
    assert_int_equal(a.comp_ok[3], 0);
    assert_int_equal(a.comp_ok[4], 0);
    bfo_rail_stats st;
    OPS->stats(b.tv, 0, &st);
    assert_int_equal(st.malformed, 1);
    OPS->stats(a.tv, 0, &st);
    assert_int_equal(st.conn_errors, 1);
    assert_int_equal(conn_state(&a, 1, 0), 0);
    assert_int_equal(conn_state(&b, 0, 0), 0);
    /* posts while the rail is down complete ok=0 at the next progress */
    assert_int_equal(post(&a, 0, 40, 100), 0);
    progress(&a);
    assert_int_equal(a.ncomp, 6);
    assert_int_equal(a.comp_ok[5], 0);
    /* re-admitted: a new segment, a new generation, and it works */
    pair_connect(&a, &b, 0);
    assert_int_equal(info(&a, 1, 0).generation, 2);
    assert_int_equal(info(&b, 0, 0).generation, 2);
    a.ncomp = a.nok = a.nfail = 0;
    for (uint32_t i = 5; i < 10; i++)
        assert_int_equal(post(&a, 0, i, 1000), 0);
    assert_true(pump(&a, &b, got_completions, &five, 2000));
    assert_int_equal(a.nok, 5);
    assert_int_equal(b.took, 8);
    for (int i = 3; i < 8; i++)
        assert_int_equal(b.ids[i], (uint32_t)(i + 2));
    assert_int_equal(b.bad, 0);
    close_side(&a);
    close_side(&b);
}

static void test_connect_while_connected_starts_afresh(void **state)
{
    side a, b;
    book bk;
    int one = 1;
    (void)state;
    pair_open(&a, &b, &bk, 1, NULL);
    assert_int_equal(post(&a, 0, 1, 100), 0); /* in flight when the engine reconnects */
    pair_connect(&a, &b, 0);
    assert_int_equal(a.ncomp, 1);
    assert_int_equal(a.comp_ok[0], 0);
    assert_int_equal(info(&a, 1, 0).generation, 2);
    assert_int_equal(info(&b, 0, 0).generation, 2);
    a.ncomp = a.nok = 0;
    assert_int_equal(post(&a, 0, 2, 100), 0);
    assert_true(pump(&a, &b, got_completions, &one, 2000));
    assert_int_equal(a.nok, 1);
    assert_int_equal(b.ids[b.took - 1], 2);
    close_side(&a);
    close_side(&b);
}

/* The sockets this process holds (/proc/self/fd entries that read
 * "socket:"). */
static int open_sockets(void)
{
    char path[300], link[64];
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    assert_non_null(d);
    while ((e = readdir(d)) != NULL) {
        ssize_t k;
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        k = readlink(path, link, sizeof link - 1);
        if (k > 0) {
            link[k] = 0;
            n += !strncmp(link, "socket:", 7);
        }
    }
    closedir(d);
    return n;
}

/* No socket is kept per peer (bfo_shm.h, LIFELINE): once the handshake
 * is over the connection's unix socket is closed, and the peer's pidfd
 * and the segment's gone flags do what the socket did.  Two ranks of this
 * process, 2 rails connected both ways and frames through them: their
 * sockets are their listeners (one per rank and rail), where the lifelines
 * added one per connection and side (4 more). */
static void test_no_socket_kept_per_peer_once_connected(void **state)
{
    side a, b;
    book bk;
    int before = open_sockets(), rail = 0;
    (void)state;
    pair_open(&a, &b, &bk, 2, NULL);
    assert_int_equal(post(&a, 0, 1, 100), 0);
    assert_int_equal(post(&b, 1, 2, 100), 0);
    pump(&a, &b, NULL, NULL, 20);
    assert_int_equal(a.nok + b.nok, 2);
    assert_int_equal(open_sockets() - before, 4); /* the listeners */
    /* and the connection still ends at both sides when one drops it */
    a.be.disconnect(a.be.ctx, 1, 0);
    assert_true(pump(&a, &b, rail_error_both, &rail, 2000));
    close_side(&a);
    close_side(&b);
}

static void test_disconnect_drops_the_connection_at_next_progress(void **state)
{
    side a, b;
    book bk;
    int rail = 0;
    (void)state;
    pair_open(&a, &b, &bk, 2, NULL);
    assert_int_equal(post(&a, 0, 1, 100), 0);
    a.be.disconnect(a.be.ctx, 1, 0);
    assert_int_equal(a.ncomp, 0); /* nothing from inside the call */
    progress(&a);
    assert_int_equal(a.ncomp, 1);
    assert_int_equal(a.comp_ok[0], 0);
    assert_int_equal(count_ev(&a, BFO_EV_RAIL_ERROR, 0), 1);
    assert_true(pump(&a, &b, rail_error_both, &rail, 2000)); /* the peer: its lifeline's EOF */
    assert_int_equal(conn_state(&a, 1, 1), 2);              /* the other rail is untouched */
    assert_int_equal(conn_state(&b, 0, 1), 2);
    close_side(&a);
    close_side(&b);
}

static void test_fault_hook_frames_vanish_silently_until_replaced(void **state)
{
    side a, b;
    book bk;
    int rail = 0, one = 1;
    (void)state;
    pair_open(&a, &b, &bk, 1, NULL);
    OPS->fault(a.tv, 0, 1);
    for (uint32_t i = 0; i < 3; i++)
        assert_int_equal(post(&a, 0, i, 100), 0);
    pump(&a, &b, NULL, NULL, 30);
    assert_int_equal(a.ncomp, 0); /* no error, no delivery: silence */
    assert_int_equal(b.took, 0);
    assert_int_equal(a.nev, 1);   /* only the CONNECTED */
    assert_true(info(&a, 1, 0).poisoned);
    bfo_rail_stats st;
    OPS->stats(a.tv, 0, &st);
    assert_int_equal(st.dropped_tx, 3);
    /* the engine's probe would time out: it maps the rail out */
    a.be.disconnect(a.be.ctx, 1, 0);
    assert_true(pump(&a, &b, rail_error_both, &rail, 2000));
    assert_int_equal(a.nfail, 3);
    /* while the hook is on, a new connection cannot be made */
    int cf = count_ev(&a, BFO_EV_CONNECT_FAILED, 0);
    a.be.connect(a.be.ctx, 1, 0);
    b.be.connect(b.be.ctx, 0, 0);
    uint64_t end = now_ns() + 3000000000ull;
    while (count_ev(&a, BFO_EV_CONNECT_FAILED, 0) == cf && now_ns() < end) {
        progress(&a);
        progress(&b);
    }
    assert_int_equal(count_ev(&a, BFO_EV_CONNECT_FAILED, 0), cf + 1);
    OPS->fault(a.tv, 0, 0);
    pair_connect(&a, &b, 0);
    a.ncomp = a.nok = 0;
    assert_int_equal(post(&a, 0, 7, 100), 0);
    assert_true(pump(&a, &b, got_completions, &one, 2000));
    assert_int_equal(a.nok, 1);
    close_side(&a);
    close_side(&b);
}

static void test_busy_receiver_gets_no_doorbell_write(void **state)
{
    side a, b;
    book bk;
    int n = 200;
    (void)state;
    pair_open(&a, &b, &bk, 1, NULL);
    for (uint32_t i = 0; i < (uint32_t)n; i++) {
        assert_int_equal(post(&a, 0, i, 200), 0);
        progress(&b);
        progress(&a);
    }
    assert_true(pump(&a, &b, got_completions, &n, 2000));
    assert_int_equal(info(&a, 1, 0).wakeups, 0); /* the peer polls: no system call per frame */
    /* b says it sleeps: the next frame rings its doorbell, once */
    int fds[4];
    assert_int_equal(OPS->wait_fds(b.tv, fds, 4), 2);
    assert_true(info(&b, 0, 0).sleeping);
    assert_true(info(&a, 1, 0).peer_sleeping);
    assert_int_equal(post(&a, 0, 500, 100), 0);
    assert_int_equal(post(&a, 0, 501, 100), 0);
    assert_int_equal(info(&a, 1, 0).wakeups, 1);
    struct pollfd pf[2] = { { fds[0], POLLIN, 0 }, { fds[1], POLLIN, 0 } };
    assert_int_equal(poll(pf, 2, 0), 1);
    assert_true(pf[1].revents & POLLIN); /* the doorbell */
    int before = b.took;
    progress(&b);
    assert_int_equal(b.took, before + 2);
    assert_false(info(&b, 0, 0).sleeping);
    /* with work waiting, wait_fds does not let it sleep */
    assert_int_equal(post(&a, 0, 502, 100), 0);
    assert_int_equal(OPS->wait_fds(b.tv, fds, 4), -1);
    assert_false(info(&b, 0, 0).sleeping);
    close_side(&a);
    close_side(&b);
}

static void test_peer_on_another_host_connect_failed_with_a_log_line(void **state)
{
    side a, b;
    book bk;
    bfo_config c = small_cfg();
    char log[4096];
    (void)state;
    memset(&bk, 0, sizeof bk);
    log_level = 1;
    assert_int_equal(open_side(&a, &bk, 0, 2, 1, &c, NULL), BFO_OK);
    assert_int_equal(open_side(&b, &bk, 1, 2, 1, &c, NULL), BFO_OK);
    log_level = -1;
    OPS->start(a.tv, JOB);
    OPS->start(b.tv, JOB);
    assert_int_equal(OPS->reaches(a.tv, 0, 1, &bk.a[1][0]), 1); /* the same host */
    bk.a[1][0].bytes[BFO_SHM_ADDR_OFF_BOOT + 3] ^= 0x55; /* rank 1 on another boot of another host */
    bk.a[0][0].bytes[BFO_SHM_ADDR_OFF_HOST] ^= 0x01;     /* rank 0 under another host name */
    /* what bfo_net asks before connect(): such a rail is ABSENT, not failed */
    assert_int_equal(OPS->reaches(a.tv, 0, 1, &bk.a[1][0]), 0);
    assert_int_equal(OPS->reaches(b.tv, 0, 0, &bk.a[0][0]), 0);
    stderr_catch_t caught;
    stderr_catch(&caught);
    a.be.connect(a.be.ctx, 1, 0);
    b.be.connect(b.be.ctx, 0, 0);
    progress(&a);
    progress(&b);
    stderr_caught(&caught, log, sizeof log);
    assert_int_equal(count_ev(&a, BFO_EV_CONNECT_FAILED, 0), 1); /* at once, no dial */
    assert_int_equal(count_ev(&b, BFO_EV_CONNECT_FAILED, 0), 1); /* the acceptor does not wait either */
    assert_non_null(strstr(log, "bfo-shm[0]: peer 1 rail 0: the shm rail does not reach a peer on another host (boot id differs)"));
    assert_non_null(strstr(log, "bfo-shm[1]: peer 0 rail 0: the shm rail does not reach a peer on another host (host name differs)"));
    close_side(&a);
    close_side(&b);
}

static void test_read_hooks_and_real_fault_fail_the_op_and_the_rail(void **state)
{
    side a, b;
    book bk;
    static uint8_t src[100000], dst[100000];
    uint64_t raddr, handle;
    uint32_t keys[2] = { 0, 0 }, rkey = 0;
    int one = 1, two = 2;
    (void)state;
    if (!attach_allowed())
        skip();
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = (uint8_t)(i * 13);
    pair_open(&a, &b, &bk, 2, NULL);
    assert_int_equal(a.be.rail_caps(a.be.ctx, 0) & BFO_CAP_RDMA, BFO_CAP_RDMA);
    assert_int_equal(b.be.reg_mem(b.be.ctx, src, sizeof src, BFO_MEM_REMOTE_READ, &raddr, keys, &handle), 0);
    assert_int_equal(raddr, (uint64_t)(uintptr_t)src);
    assert_int_equal(keys[0], 0); /* no keys */
    assert_int_equal(keys[1], 0);
    assert_int_equal(a.be.post_write(a.be.ctx, 1, 0, dst, 10, raddr, rkey, 99), -1); /* GET only */
    /* a read that works (this process: process_vm_readv of itself) */
    assert_int_equal(a.be.post_read(a.be.ctx, 1, 0, dst, sizeof dst, raddr, rkey, 11), 0);
    assert_int_equal(a.ncomp, 0); /* from progress, not from the post */
    assert_true(pump(&a, NULL, got_completions, &one, 2000));
    assert_int_equal(a.comp_ok[0], 1);
    assert_memory_equal(dst, src, sizeof src);
    /* the attach refused: the read fails, the rail fails, what else was in flight fails */
    assert_int_equal(post(&a, 0, 1, 100), 0);
    bfo_shm_test_refuse_attach(a.t, 0);
    assert_int_equal(a.be.post_read(a.be.ctx, 1, 0, dst, sizeof dst, raddr, rkey, 12), 0);
    a.ncomp = a.nok = a.nfail = 0;
    assert_true(pump(&a, NULL, got_completions, &two, 2000));
    assert_int_equal(a.nfail, 2);
    assert_int_equal(count_ev(&a, BFO_EV_RAIL_ERROR, 0), 1);
    assert_int_equal(conn_state(&a, 1, 1), 2); /* rail 1 goes on */
    /* a real failure: an address the peer never mapped (EFAULT) */
    a.ncomp = a.nok = a.nfail = 0;
    assert_int_equal(a.be.post_read(a.be.ctx, 1, 1, dst, 4096, 4096, 0, 13), 0);
    assert_true(pump(&a, NULL, got_completions, &one, 2000));
    assert_int_equal(a.nfail, 1);
    assert_int_equal(count_ev(&a, BFO_EV_RAIL_ERROR, 1), 1);
    close_side(&a);
    close_side(&b);
}

static void test_rail_caps_follow_the_rdma_mode(void **state)
{
    side a;
    book bk;
    bfo_config c = small_cfg();
    (void)state;
    memset(&bk, 0, sizeof bk);
    c.rdma = BFO_RDMA_PUT;
    assert_int_equal(open_side(&a, &bk, 0, 2, 1, &c, NULL), BFO_OK);
    /* no PUT: the engine copies; described data is read into the ring in place */
    assert_int_equal(a.be.rail_caps(a.be.ctx, 0) & BFO_CAP_RDMA, 0);
    assert_int_equal(a.be.rail_caps(a.be.ctx, 0) & ~(unsigned)BFO_CAP_RDMA,
                     BFO_CAP_SEND_IOV | BFO_CAP_SEND_PACK);
    close_side(&a);
    c.rdma = BFO_RDMA_GET;
    assert_int_equal(open_side(&a, &bk, 0, 2, 1, &c, NULL), BFO_OK);
    assert_int_equal(a.be.rail_caps(a.be.ctx, 0) & BFO_CAP_RDMA,
                     attach_allowed() ? BFO_CAP_RDMA : 0);
    close_side(&a);
}

static void test_stats_and_dump_one_line_per_connection(void **state)
{
    side a, b;
    book bk;
    int three = 3;
    char *text = NULL;
    size_t len = 0;
    (void)state;
    pair_open(&a, &b, &bk, 2, NULL);
    for (uint32_t i = 0; i < 3; i++)
        assert_int_equal(post(&a, 1, i, 1000), 0);
    assert_true(pump(&a, &b, got_completions, &three, 2000));
    bfo_rail_stats st;
    OPS->stats(a.tv, 1, &st);
    assert_int_equal(st.frames_tx, 3);
    assert_int_equal(st.bytes_tx, 3000);
    assert_int_equal(st.completed_ok, 3);
    OPS->stats(b.tv, 1, &st);
    assert_int_equal(st.frames_rx, 3);
    assert_int_equal(st.bytes_rx, 3000);
    FILE *f = open_memstream(&text, &len);
    OPS->dump(a.tv, f);
    fclose(f);
    assert_non_null(strstr(text, "bfo-shm[0]: peer 1 rail 0: up generation 1"));
    assert_non_null(strstr(text, "bfo-shm[0]: peer 1 rail 1: up generation 1"));
    assert_non_null(strstr(text, "tx head 3072 tail 3072"));
    int lines = 0;
    for (char *p = text; *p; p++)
        lines += *p == '\n';
    assert_int_equal(lines, 3); /* two connections and a summary */
    free(text);
    close_side(&a);
    close_side(&b);
}

/* ------------------------------------------------ a second process */

static void xfer(int fd, void *p, size_t n, int out)
{
    size_t done = 0;
    while (done < n) {
        ssize_t k = out ? write(fd, (char *)p + done, n - done) : read(fd, (char *)p + done, n - done);
        if (k <= 0) {
            if (k < 0 && errno == EINTR)
                continue;
            _exit(90);
        }
        done += (size_t)k;
    }
}

/* Opens rank `rank` of 2 (one rail) in this process, swaps addresses with
 * the other process over sock, starts, connects rail 0 (pumping only this
 * side: the other process pumps its own). */
static void proc_side(side *s, book *bk, int rank, int sock, const bfo_shm_options *o)
{
    bfo_config c = small_cfg();
    memset(bk, 0, sizeof *bk);
    if (open_side(s, bk, rank, 2, 1, &c, o) != BFO_OK)
        _exit(91);
    xfer(sock, &bk->a[rank][0], sizeof(bfo_addr), 1);
    xfer(sock, &bk->a[1 - rank][0], sizeof(bfo_addr), 0);
    bk->have[1 - rank][0] = 1;
    OPS->start(s->tv, JOB);
    s->be.connect(s->be.ctx, 1 - rank, 0);
    uint64_t end = now_ns() + 3000000000ull;
    while (count_ev(s, BFO_EV_CONNECTED, 0) == 0 && now_ns() < end)
        progress(s);
    if (count_ev(s, BFO_EV_CONNECTED, 0) == 0)
        _exit(92);
}

static pid_t fork_peer(int *sock)
{
    int sv[2];
    pid_t pid;
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    fflush(NULL);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(sv[0]);
        *sock = sv[1];
    } else {
        close(sv[1]);
        *sock = sv[0];
    }
    return pid;
}

static int reap(pid_t pid)
{
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    return st;
}

static int rail_error(side *a, side *b, void *arg)
{
    (void)b;
    return count_ev(a, BFO_EV_RAIL_ERROR, *(int *)arg) > 0;
}

static void test_peer_death_on_the_lifeline_fails_the_rail(void **state)
{
    side a;
    book bk;
    int sock, rail = 0;
    char c = 0;
    (void)state;
    pid_t pid = fork_peer(&sock);
    if (pid == 0) { /* rank 1: connects, then never runs progress again */
        side b;
        book bk2;
        proc_side(&b, &bk2, 1, sock, NULL);
        xfer(sock, &c, 1, 1);
        for (;;)
            pause();
    }
    proc_side(&a, &bk, 0, sock, NULL);
    xfer(sock, &c, 1, 0);
    for (uint32_t i = 0; i < 5; i++)
        assert_int_equal(post(&a, 0, i, 500), 0);
    pump(&a, NULL, NULL, NULL, 20);
    assert_int_equal(a.ncomp, 0); /* in its ring, never consumed */
    kill(pid, SIGKILL);
    reap(pid);
    uint64_t t0 = now_ns();
    assert_true(pump(&a, NULL, rail_error, &rail, 2000));
    assert_true(now_ns() - t0 < 500000000ull); /* the lifeline, not a timeout */
    assert_int_equal(a.ncomp, 5);
    assert_int_equal(a.nfail, 5);
    assert_int_equal(conn_state(&a, 1, 0), 0);
    close(sock);
    close_side(&a);
}

static void test_get_of_several_mib_by_process_vm_readv_in_chunks(void **state)
{
    side a;
    book bk;
    int sock;
    const size_t len = (6u << 20) + 12345;
    char c = 0;
    (void)state;
    if (!attach_allowed())
        skip();
    pid_t pid = fork_peer(&sock);
    if (pid == 0) { /* rank 1: a buffer the parent reads */
        side b;
        book bk2;
        uint64_t raddr, handle;
        uint32_t keys[1] = { 0 };
        uint8_t *buf = (uint8_t *)malloc(len);
        if (!buf)
            _exit(93);
        for (size_t i = 0; i < len; i++)
            buf[i] = (uint8_t)((i * 2654435761u) >> 13);
        proc_side(&b, &bk2, 1, sock, NULL);
        b.be.reg_mem(b.be.ctx, buf, len, BFO_MEM_REMOTE_READ, &raddr, keys, &handle);
        xfer(sock, &raddr, sizeof raddr, 1);
        xfer(sock, &c, 1, 0); /* the parent is done */
        free(buf);
        close_side(&b);
        _exit(0);
    }
    uint64_t raddr;
    uint8_t *dst = (uint8_t *)malloc(len);
    assert_non_null(dst);
    memset(dst, 0, len);
    proc_side(&a, &bk, 0, sock, NULL);
    xfer(sock, &raddr, sizeof raddr, 0);
    assert_int_equal(info(&a, 1, 0).pid, (int)pid);
    assert_int_equal(a.be.post_read(a.be.ctx, 1, 0, dst, len, raddr, 0, 77), 0);
    int calls = 0;
    while (a.ncomp == 0 && calls < 1000) {
        progress(&a);
        calls++;
        if (calls == 1)
            assert_int_equal(info(&a, 1, 0).reads, 1); /* 1 MiB read, the rest at the next calls */
    }
    assert_int_equal(a.ncomp, 1);
    assert_int_equal(a.comp_ok[0], 1);
    assert_int_equal(calls, 7); /* 1 MiB per call */
    for (size_t i = 0; i < len; i++)
        if (dst[i] != (uint8_t)((i * 2654435761u) >> 13))
            fail_msg("byte %zu differs", i);
    bfo_rail_stats st;
    OPS->stats(a.tv, 0, &st);
    assert_int_equal(st.bytes_tx, len);
    xfer(sock, &c, 1, 1);
    assert_int_equal(reap(pid), 0);
    close(sock);
    close_side(&a);
    free(dst);
}

static void test_wait_fds_sleeping_process_wakes_when_the_peer_writes(void **state)
{
    side a;
    book bk;
    int sock, fds[4], n;
    char c = 0;
    (void)state;
    pid_t pid = fork_peer(&sock);
    if (pid == 0) { /* rank 1: after "go", 200 ms later, one frame */
        side b;
        book bk2;
        proc_side(&b, &bk2, 1, sock, NULL);
        xfer(sock, &c, 1, 0);
        usleep(200000);
        if (post(&b, 0, 42, 600) != 0)
            _exit(94);
        uint64_t end = now_ns() + 3000000000ull;
        while (b.ncomp == 0 && now_ns() < end)
            progress(&b);
        uint64_t w = info(&b, 0, 0).wakeups;
        xfer(sock, &w, sizeof w, 1);
        xfer(sock, &c, 1, 0);
        _exit(b.nok == 1 ? 0 : 95);
    }
    proc_side(&a, &bk, 0, sock, NULL);
    while ((n = OPS->wait_fds(a.tv, fds, 4)) < 0)
        progress(&a);
    assert_int_equal(n, 2);
    xfer(sock, &c, 1, 1);
    /* what the sockets still say (both sides dialled: the second dial's
     * end, late on a loaded machine) wakes it on the first fd: taken, and
     * back to sleep; the frame must ring the doorbell */
    uint64_t t0 = now_ns(), slept;
    for (;;) {
        struct pollfd pf[2] = { { fds[0], POLLIN, 0 }, { fds[1], POLLIN, 0 } };
        assert_true(poll(pf, 2, 5000) >= 1);
        slept = now_ns() - t0;
        if (pf[1].revents & POLLIN) /* the doorbell woke it */
            break;
        assert_true(slept < 3000000000ull);
        progress(&a);
        while ((n = OPS->wait_fds(a.tv, fds, 4)) < 0 && a.took == 0)
            progress(&a);
        assert_int_equal(a.took, 0); /* nothing came before the doorbell */
    }
    assert_true(slept > 100000000ull && slept < 3000000000ull);
    progress(&a);
    assert_int_equal(a.took, 1);
    assert_int_equal(a.ids[0], 42);
    assert_int_equal(a.bad, 0);
    uint64_t w;
    xfer(sock, &w, sizeof w, 0);
    assert_int_equal(w, 1);
    xfer(sock, &c, 1, 1);
    assert_int_equal(reap(pid), 0);
    close(sock);
    close_side(&a);
}

/* Any system call but exit kills the process (seccomp). */
static int no_syscalls(void)
{
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (uint32_t)offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_exit_group, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = { (unsigned short)(sizeof f / sizeof f[0]), f };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return -1;
    return (int)syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

static void test_progress_and_busy_frames_make_no_system_call(void **state)
{
    (void)state;
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        side a, b;
        book bk;
        pair_open(&a, &b, &bk, 2, NULL);
        uint64_t now = now_ns();
        /* the pages the frames below go through, reserved as a writer
         * first reaches them (one madvise a page: bfo_shm.h, MEMORY) */
        for (uint32_t i = 0; i < 100; i++) {
            if (post(&a, (int)(i & 1), i, 100 + i) != 0 || post(&b, 0, 1000 + i, 64) != 0)
                _exit(96);
            OPS->progress(b.tv, now);
            OPS->progress(a.tv, now);
        }
        for (int i = 0; i < 10; i++) {
            OPS->progress(b.tv, now);
            OPS->progress(a.tv, now);
        }
        if (a.nok != 100 || b.nok != 100 || a.took != 100 || b.took != 100)
            _exit(95);
        OPS->progress(a.tv, now); /* the last socket scan */
        OPS->progress(b.tv, now);
        a.nok = b.nok = a.took = b.took = 0;
        if (no_syscalls() != 0)
            _exit(97);
        /* nothing to do, on two connections: no system call */
        for (int i = 0; i < 1000; i++) {
            OPS->progress(a.tv, now);
            OPS->progress(b.tv, now);
        }
        /* frames both ways while both sides poll: none either */
        for (uint32_t i = 0; i < 100; i++) {
            if (post(&a, (int)(i & 1), i, 100 + i) != 0 || post(&b, 0, 1000 + i, 64) != 0)
                syscall(__NR_exit_group, 98);
            OPS->progress(b.tv, now);
            OPS->progress(a.tv, now);
        }
        for (int i = 0; i < 10; i++) {
            OPS->progress(b.tv, now);
            OPS->progress(a.tv, now);
        }
        /* the raw call: ASan's _exit makes one more (sigaltstack) */
        syscall(__NR_exit_group, a.nok == 100 && b.nok == 100 && a.took == 100 && b.took == 100 && !a.bad && !b.bad ? 0 : 99);
    }
    int st = reap(pid);
    if (WIFSIGNALED(st))
        fail_msg("the child was killed by signal %d: a system call where none was expected", WTERMSIG(st));
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
}

/* A segment is made at the dial (bfo_shm.h, MEMORY), not at open: open
 * succeeds under a file size limit below a segment, and the dial fails
 * with CONNECT_FAILED and a message that says why. */
static int connect_failed(side *a, side *b, void *arg)
{
    (void)b, (void)arg;
    return count_ev(a, BFO_EV_CONNECT_FAILED, 0) > 0;
}

static void test_a_dial_fails_clearly_when_the_segment_cannot_be_reserved(void **state)
{
    (void)state;
    char path[] = "/tmp/test_shm_logXXXXXX";
    int lfd = mkstemp(path);
    assert_true(lfd >= 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct rlimit rl = { 65536, 65536 }; /* a segment is 64 KiB x 2 + 1 KiB */
        side a, b;
        book bk;
        bfo_config c = small_cfg();
        signal(SIGXFSZ, SIG_IGN);
        dup2(lfd, 2);
        log_level = 1;
        if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
            _exit(96);
        memset(&bk, 0, sizeof bk);
        if (open_side(&a, &bk, 0, 2, 1, &c, NULL) != BFO_OK || open_side(&b, &bk, 1, 2, 1, &c, NULL) != BFO_OK)
            _exit(97);
        OPS->start(a.tv, JOB);
        OPS->start(b.tv, JOB);
        a.be.connect(a.be.ctx, 1, 0);
        b.be.connect(b.be.ctx, 0, 0);
        _exit(pump(&a, &b, connect_failed, NULL, 2000) && count_ev(&a, BFO_EV_CONNECTED, 0) == 0 ? 0 : 98);
    }
    int st = reap(pid);
    char log[2048];
    ssize_t n = pread(lfd, log, sizeof log - 1, 0);
    close(lfd);
    unlink(path);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    assert_true(n > 0);
    log[n] = 0;
    assert_non_null(strstr(log, "bfo-shm[0]: peer 1 rail 0: cannot make a segment of 132096 bytes of "
                                "shared memory (ftruncate: File too large"));
    assert_string_equal(bfo_shm_errname(BFO_SHM_ERR_SEGMENT), "BFO_SHM_ERR_SEGMENT");
}

/* fallocate fails as on a tmpfs or memory cgroup short of memory
 * (seccomp: ENOSPC); every other call goes through. */
static int fallocate_short(void)
{
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (uint32_t)offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_fallocate, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSPC),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = { (unsigned short)(sizeof f / sizeof f[0]), f };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return -1;
    return (int)syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

static int both_connected(side *a, side *b, void *arg)
{
    (void)arg;
    return count_ev(a, BFO_EV_CONNECTED, 0) > 0 && count_ev(b, BFO_EV_CONNECTED, 0) > 0;
}

static int frames_both_ways(side *a, side *b, void *arg)
{
    (void)arg;
    return a->nok == 1 && b->nok == 1 && a->took == 1 && b->took == 1;
}

/* A dial reserves only the pages its rings write, as they first reach
 * them (bfo_shm.h, MEMORY), not its whole segment up front: with fallocate
 * failing (no memory for 2 x ring at once), a pair connects and exchanges
 * frames.  The dial's fallocate of the whole segment (0.5 ms for 2 MiB
 * here, the largest part of a connection's set-up) failed it. */
static void test_a_dial_reserves_only_the_pages_its_rings_write(void **state)
{
    (void)state;
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        side a, b;
        book bk;
        bfo_config c = small_cfg();
        memset(&bk, 0, sizeof bk);
        if (fallocate_short() != 0)
            _exit(96);
        if (open_side(&a, &bk, 0, 2, 1, &c, NULL) != BFO_OK || open_side(&b, &bk, 1, 2, 1, &c, NULL) != BFO_OK)
            _exit(97);
        OPS->start(a.tv, JOB);
        OPS->start(b.tv, JOB);
        a.be.connect(a.be.ctx, 1, 0);
        b.be.connect(b.be.ctx, 0, 0);
        if (!pump(&a, &b, both_connected, NULL, 2000))
            _exit(98);
        if (post(&a, 0, 1, 100) != 0 || post(&b, 0, 2, 3000) != 0)
            _exit(99);
        _exit(pump(&a, &b, frames_both_ways, NULL, 2000) && !a.bad && !b.bad ? 0 : 100);
    }
    int st = reap(pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
}

/* -------------------------------------------------- two real engines */

static void eng_open(side *s, book *bk, int rank, bfo_config *c)
{
    bfo_shm_options o;
    memset(&o, 0, sizeof o);
    c->rank = rank;
    assert_int_equal(open_side(s, bk, rank, 2, 2, c, &o), BFO_OK);
    s->use_eng = 1;
}

static void eng_start(side *s, bfo_config *c)
{
    size_t m = bfo_engine_mem_size(c);
    c->rank = s->rank;
    s->emem = malloc(m);
    assert_non_null(s->emem);
    OPS->start(s->tv, JOB);
    assert_int_equal(bfo_engine_init(&s->eng, c, &s->be, s->emem, m, now_ns()), BFO_OK);
}

static int rails_up(side *a, side *b, void *arg)
{
    (void)arg;
    for (int r = 0; r < 2; r++)
        if (a->eng.peers[1].rail[r].fsm.cs != BFO_RAIL_ST_UP || b->eng.peers[0].rail[r].fsm.cs != BFO_RAIL_ST_UP)
            return 0;
    return 1;
}

typedef struct xmsg {
    bfo_request s, r;
    uint8_t *sb, *rb;
    size_t len;
} xmsg;

static int all_done(side *a, side *b, void *arg)
{
    xmsg *m = (xmsg *)arg;
    (void)a;
    (void)b;
    for (; m->len; m++)
        if (!bfo_test(&m->s) || !bfo_test(&m->r))
            return 0;
    return 1;
}

static void msgs_start(side *a, side *b, xmsg *m, int n, const size_t *lens, uint32_t salt)
{
    for (int i = 0; i < n; i++) {
        m[i].len = lens[i];
        m[i].sb = (uint8_t *)malloc(lens[i]);
        m[i].rb = (uint8_t *)calloc(1, lens[i]);
        assert_true(m[i].sb && m[i].rb);
        for (size_t k = 0; k < lens[i]; k++)
            m[i].sb[k] = pat((uint32_t)i + salt, k);
        assert_int_equal(bfo_irecv(&b->eng, &m[i].r, m[i].rb, lens[i], 0, 0, i, now_ns()), BFO_OK);
        assert_int_equal(bfo_isend(&a->eng, &m[i].s, m[i].sb, lens[i], 1, 0, i, now_ns()), BFO_OK);
    }
    m[n].len = 0;
}

static void msgs_check(xmsg *m)
{
    for (; m->len; m++) {
        assert_int_equal(m->s.status, BFO_OK);
        assert_int_equal(m->r.status, BFO_OK);
        assert_int_equal(m->r.length, m->len);
        assert_memory_equal(m->sb, m->rb, m->len);
        free(m->sb);
        free(m->rb);
    }
}

static void test_two_engines_exchange_eager_and_get_messages(void **state)
{
    side a, b;
    book bk;
    bfo_config c;
    static xmsg m[12];
    size_t lens[11] = { 1, 100, 4096, 4097, 70000, 1u << 20, 3u << 20, 64, 0x12345, 8, 5u << 20 };
    (void)state;
    if (!attach_allowed())
        skip();
    memset(&bk, 0, sizeof bk);
    memset(&c, 0, sizeof c);
    c.nranks = 2;
    c.nrails = 2;
    c.connect_at_init = 1; /* the shm glue is judged on rails connected at init */
    eng_open(&a, &bk, 0, &c);
    eng_open(&b, &bk, 1, &c);
    eng_start(&a, &c);
    eng_start(&b, &c);
    assert_true(pump(&a, &b, rails_up, NULL, 3000));
    msgs_start(&a, &b, m, 11, lens, 0);
    assert_true(pump(&a, &b, all_done, m, 10000));
    msgs_check(m);
    assert_true(b.eng.stats.gets >= 5); /* every message from rdma_min on: GET */
    assert_true(b.eng.stats.rdma_reads > 0);
    assert_int_equal(b.eng.stats.copies, 1); /* 4097 bytes: above the eager limit, below rdma_min */
    bfo_rail_stats s0, s1;
    OPS->stats(b.tv, 0, &s0);
    OPS->stats(b.tv, 1, &s1);
    assert_true(s0.bytes_tx > 0 && s1.bytes_tx > 0); /* reads striped over both rails */
    close_side(&a);
    close_side(&b);
}

static int rail0_readmitted(side *a, side *b, void *arg)
{
    (void)arg;
    return rails_up(a, b, NULL) && info(a, 1, 0).generation == 2 && info(b, 0, 0).generation == 2;
}

static void test_engine_fails_over_on_a_corrupt_slot_and_readmits_the_rail(void **state)
{
    side a, b;
    book bk;
    bfo_config c;
    static xmsg m[40];
    size_t lens[39];
    (void)state;
    memset(&bk, 0, sizeof bk);
    memset(&c, 0, sizeof c);
    c.nranks = 2;
    c.nrails = 2;
    c.connect_at_init = 1; /* the shm glue is judged on rails connected at init */
    c.rdma = BFO_RDMA_OFF; /* every byte through the rings: FRAGs on both rails */
    eng_open(&a, &bk, 0, &c);
    eng_open(&b, &bk, 1, &c);
    eng_start(&a, &c);
    eng_start(&b, &c);
    assert_true(pump(&a, &b, rails_up, NULL, 3000));
    for (int i = 0; i < 39; i++)
        lens[i] = i % 3 == 0 ? 300000 + (size_t)i : 1000 + (size_t)i * 100;
    msgs_start(&a, &b, m, 39, lens, 5);
    for (int i = 0; i < 3; i++) { /* under way */
        progress(&a);
        bfo_engine_progress(&a.eng, now_ns());
    }
    bfo_shm_test_corrupt_next(a.t, 0);
    assert_true(pump(&a, &b, all_done, m, 10000));
    msgs_check(m);
    bfo_rail_stats st;
    OPS->stats(b.tv, 0, &st);
    assert_int_equal(st.malformed, 1); /* the receiver caught it */
    assert_true(b.eng.stats.mapouts + a.eng.stats.mapouts >= 1);
    /* the rail comes back with a new segment generation, and carries data */
    assert_true(pump(&a, &b, rail0_readmitted, NULL, 5000));
    OPS->stats(a.tv, 0, &st);
    uint64_t before = st.frames_tx;
    lens[0] = 200000;
    lens[1] = 300000;
    msgs_start(&a, &b, m, 2, lens, 9);
    assert_true(pump(&a, &b, all_done, m, 10000));
    msgs_check(m);
    OPS->stats(a.tv, 0, &st);
    assert_true(st.frames_tx > before);
    close_side(&a);
    close_side(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc32c_is_castagnoli),
        cmocka_unit_test(test_claims_shm_rails_only),
        cmocka_unit_test(test_connect_reports_connected_with_generation_and_pid),
        cmocka_unit_test(test_either_side_alone_connects),
        cmocka_unit_test(test_a_dialer_waiting_for_a_computing_peer_is_not_failed),
        cmocka_unit_test(test_frames_in_order_and_intact_across_ring_wraparound),
        cmocka_unit_test(test_ok_only_after_the_receivers_engine_took_the_frame),
        cmocka_unit_test(test_again_offers_the_same_frame_later_in_order),
        cmocka_unit_test(test_full_ring_leaves_sends_queued_until_space_frees),
        cmocka_unit_test(test_descriptors_grow_when_more_sends_are_posted_than_there_are),
        cmocka_unit_test(test_corrupt_slot_fails_the_rail_and_reconnect_uses_a_new_generation),
        cmocka_unit_test(test_connect_while_connected_starts_afresh),
        cmocka_unit_test(test_disconnect_drops_the_connection_at_next_progress),
        cmocka_unit_test(test_fault_hook_frames_vanish_silently_until_replaced),
        cmocka_unit_test(test_busy_receiver_gets_no_doorbell_write),
        cmocka_unit_test(test_peer_on_another_host_connect_failed_with_a_log_line),
        cmocka_unit_test(test_read_hooks_and_real_fault_fail_the_op_and_the_rail),
        cmocka_unit_test(test_rail_caps_follow_the_rdma_mode),
        cmocka_unit_test(test_stats_and_dump_one_line_per_connection),
        cmocka_unit_test(test_peer_death_on_the_lifeline_fails_the_rail),
        cmocka_unit_test(test_no_socket_kept_per_peer_once_connected),
        cmocka_unit_test(test_get_of_several_mib_by_process_vm_readv_in_chunks),
        cmocka_unit_test(test_wait_fds_sleeping_process_wakes_when_the_peer_writes),
        cmocka_unit_test(test_progress_and_busy_frames_make_no_system_call),
        cmocka_unit_test(test_a_dial_fails_clearly_when_the_segment_cannot_be_reserved),
        cmocka_unit_test(test_a_dial_reserves_only_the_pages_its_rings_write),
        cmocka_unit_test(test_two_engines_exchange_eager_and_get_messages),
        cmocka_unit_test(test_engine_fails_over_on_a_corrupt_slot_and_readmits_the_rail),
    };
    return cmocka_run_group_tests_name("bfo_shm", tests, NULL, NULL);
}
