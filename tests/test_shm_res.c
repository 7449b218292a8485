// SPDX-License-Identifier: BSD-3-Clause
/* test_shm_res.c - the shared-memory transport's memory grows with use
 * (bfo_shm.h, MEMORY): no segment for a local peer never connected (none
 * at open), one per connection made, and rings that shrink as the ranks of
 * a host grow so that all of them fit in node_bytes.  Four ranks of one
 * host in this process, driven through the transport's row (no engine:
 * the sink takes every frame). */
#define _GNU_SOURCE
#define TR_RANKS 4 /* the ranks (bfo_test_ranks.h: book) */
#include "bfo_test.h"
#include "bfo_test_ranks.h"

#include "bfo_setting.h"
#include "bfo_shm.h"
#include "bfo_transport.h"

#include <dirent.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define N TR_RANKS
#define JOB 0x5e5e0001ull

static const bfo_transport_ops *const OPS = &bfo_shm_transport;

typedef struct rk {
    void *t;
    bfo_backend be;
    int up[N];
    uint32_t got, bad; /* frames taken; ... not the next one expected (first word: its number) */
    uint32_t done;     /* sends completed ok */
} rk;

static rk R[N];

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void s_completion(void *ctx, uint64_t token, int ok)
{
    (void)token;
    ((rk *)ctx)->done += ok != 0;
}
/* Frames of a test that numbers them (at least 4 bytes: the number, then
 * bytes that follow from it) are checked in order; others are taken. */
static int s_frame(void *ctx, int peer, int rail, const uint8_t *buf, size_t len, uint64_t now)
{
    rk *r = (rk *)ctx;
    (void)peer, (void)rail, (void)now;
    if (len >= 4) {
        uint32_t k;
        memcpy(&k, buf, 4);
        r->bad += k != r->got;
        for (size_t i = 4; i < len; i++)
            r->bad += buf[i] != (uint8_t)(k * 31u + i);
    }
    r->got++;
    return BFO_OK;
}
static void s_event(void *ctx, int peer, int rail, int ev, uint64_t now)
{
    (void)rail, (void)now;
    ((rk *)ctx)->up[peer] = ev == BFO_EV_CONNECTED;
}

/* A setting of shm's table by name (said when there is none: the test
 * then fails by what it checks). */
static void set_opt(bfo_shm_options *o, const char *name, const char *v)
{
    char why[200];
    for (int i = 0; i < OPS->nsettings; i++)
        if (!strcmp(OPS->settings[i].name, name)) {
            assert_int_equal(bfo_setting_parse(&OPS->settings[i], v, o, why, sizeof why), 0);
            return;
        }
    print_message("shm has no setting %s\n", name);
}

static void open_all(const bfo_shm_options *o)
{
    const tr_job j = { OPS, N, "shm", NULL, -1 };
    for (int i = 0; i < N; i++) {
        bfo_sink sink = { &R[i], s_completion, s_frame, s_event, NULL, tr_lookup, NULL, NULL, NULL, NULL };
        memset(&R[i], 0, sizeof R[i]);
        tr_open(&j, i, &sink, o, &R[i].t, &R[i].be, &book[i]);
    }
    for (int i = 0; i < N; i++)
        assert_int_equal(OPS->start(R[i].t, JOB), BFO_OK);
}

static void close_all(void)
{
    for (int i = 0; i < N; i++)
        OPS->fini(R[i].t);
}

static void run_for(uint64_t ns)
{
    for (uint64_t end = now_ns() + ns; now_ns() < end;)
        for (int i = 0; i < N; i++)
            OPS->progress(R[i].t, now_ns());
}

static void connect_pair(int a, int b)
{
    uint64_t end = now_ns() + 2000000000ull;
    R[a].be.connect(R[a].be.ctx, b, 0);
    R[b].be.connect(R[b].be.ctx, a, 0);
    while (!(R[a].up[b] && R[b].up[a])) {
        assert_true(now_ns() < end);
        run_for(1000000);
    }
}

/* The ring segments this process holds: memfds named bfo-shm open as
 * descriptors, or mapped (distinct ones: both ends of a connection map its
 * segment here). */
static int segments(void)
{
    ino_t seen[64];
    int n = 0;
    char line[512];
    DIR *d = opendir("/proc/self/fd");
    FILE *f = fopen("/proc/self/maps", "r");
    struct dirent *e;
    assert_non_null(d);
    assert_non_null(f);
    while ((e = readdir(d))) {
        char p[300], l[256];
        ssize_t k;
        struct stat st;
        snprintf(p, sizeof p, "/proc/self/fd/%s", e->d_name);
        k = readlink(p, l, sizeof l - 1);
        if (k <= 0)
            continue;
        l[k] = 0;
        if (strstr(l, "memfd:bfo-shm") && stat(p, &st) == 0 && n < 64) {
            int dup = 0;
            for (int i = 0; i < n; i++)
                dup |= seen[i] == st.st_ino;
            if (!dup)
                seen[n++] = st.st_ino;
        }
    }
    closedir(d);
    while (fgets(line, sizeof line, f)) {
        unsigned long long ino = 0;
        int dup = 0;
        if (!strstr(line, "memfd:bfo-shm") || sscanf(line, "%*s %*s %*s %*s %llu", &ino) != 1)
            continue;
        for (int i = 0; i < n; i++)
            dup |= seen[i] == (ino_t)ino;
        if (!dup && n < 64)
            seen[n++] = (ino_t)ino;
    }
    fclose(f);
    return n;
}

/* Four ranks of one host, started and progressed: no segment (there was
 * one reserved for every higher rank: six); ranks 0 and 1 connect: one,
 * and ranks 2 and 3, never connected, have no ring. */
static void test_no_ring_for_a_local_peer_never_connected(void **state)
{
    bfo_shm_options o;
    bfo_shm_conn_info in;
    (void)state;
    memset(&o, 0, sizeof o);
    open_all(&o);
    run_for(20000000ull);
    assert_int_equal(segments(), 0);
    connect_pair(0, 1);
    assert_int_equal(segments(), 1);
    for (int p = 2; p < N; p++) {
        assert_int_equal(bfo_shm_get_conn_info((bfo_shm *)R[0].t, p, 0, &in), BFO_OK);
        assert_int_equal(in.state, 0);
        assert_int_equal(in.ring_bytes, 0);
    }
    close_all();
    assert_int_equal(segments(), 0);
}

/* The rings of every pair of the four ranks within node_bytes (4 MiB: 12
 * rings of at most 349,525 bytes): a dial makes rings of 256 KiB, not the
 * 1 MiB of ring_bytes, and the acceptor maps what the dialer chose; with
 * node_bytes off, 1 MiB. */
static void test_rings_shrink_as_the_ranks_of_a_host_grow(void **state)
{
    (void)state;
    for (int off = 0; off < 2; off++) {
        bfo_shm_options o;
        bfo_shm_conn_info a, b;
        size_t want = off ? 1u << 20 : 256u << 10;
        memset(&o, 0, sizeof o);
        set_opt(&o, "node_bytes", off ? "off" : "4M");
        open_all(&o);
        connect_pair(0, 3);
        connect_pair(1, 2);
        assert_int_equal(bfo_shm_get_conn_info((bfo_shm *)R[0].t, 3, 0, &a), BFO_OK);
        assert_int_equal(bfo_shm_get_conn_info((bfo_shm *)R[3].t, 0, 0, &b), BFO_OK);
        assert_int_equal(a.ring_bytes, want);
        assert_int_equal(b.ring_bytes, want);
        assert_int_equal(bfo_shm_get_conn_info((bfo_shm *)R[2].t, 1, 0, &b), BFO_OK);
        assert_int_equal(b.ring_bytes, want);
        close_all();
    }
}

/* Bytes of the ring segments mapped into this process (Rss of every
 * memfd:bfo-shm mapping in /proc/self/smaps), in KiB: the pages the rings'
 * writers and readers touched, what PSS charges the ranks. */
static long segment_rss_kib(void)
{
    char line[512];
    long kib = 0;
    int in = 0;
    FILE *f = fopen("/proc/self/smaps", "r");
    assert_non_null(f);
    while (fgets(line, sizeof line, f)) {
        unsigned long long a, b;
        long v;
        if (sscanf(line, "%llx-%llx ", &a, &b) == 2 && strchr(line, ' '))
            in = strstr(line, "memfd:bfo-shm") != NULL;
        else if (in && sscanf(line, "Rss: %ld kB", &v) == 1)
            kib += v;
    }
    fclose(f);
    return kib;
}

/* Sends n frames of len bytes from a to b, each numbered from first,
 * burst at a time, taken by b before the next burst goes. */
static void send_taken(int a, int b, uint32_t first, int n, size_t len, int burst)
{
    static uint8_t bufs[8][8192]; /* one per frame of a burst: a send holds its bytes until it completes */
    assert_true(len <= sizeof bufs[0] && len >= 4 && burst <= 8);
    for (int i = 0; i < n;) {
        uint32_t want = R[a].done;
        int k;
        for (k = 0; k < burst && i < n; k++, i++) {
            uint32_t num = first + (uint32_t)i;
            uint8_t *buf = bufs[k];
            bfo_iov iov = { buf, len };
            memcpy(buf, &num, 4);
            for (size_t j = 4; j < len; j++)
                buf[j] = (uint8_t)(num * 31u + j);
            assert_int_equal(R[a].be.post_send(R[a].be.ctx, b, 0, &iov, 1, num), 0);
        }
        want += (uint32_t)k;
        for (uint64_t end = now_ns() + 2000000000ull; R[a].done < want;) {
            assert_true(now_ns() < end);
            OPS->progress(R[b].t, now_ns());
            OPS->progress(R[a].t, now_ns());
        }
    }
}

/* A ring whose frames are taken as they come touches its first pages only
 * (bfo_shm.h, MEMORY, REWIND): 300 frames of 4 KiB from rank 0 to rank 1,
 * each taken before the next, through rings of 1 MiB leave two pages
 * mapped on each side (the ring went round once, all 1 MiB of it, before
 * rings rewound; 3 pages with a header page of its own); every frame arrives
 * whole and in order, and so do bursts of 1 to 7 frames of 64 bytes to
 * 8 KiB each way afterwards (some taken while the ring was not empty, some
 * rewound behind frames of another size). */
static void test_a_ring_taken_as_it_comes_touches_its_first_pages_only(void **state)
{
    bfo_shm_options o;
    bfo_shm_conn_info in;
    long rss;
    uint32_t sent[2] = { 0, 0 };
    (void)state;
    memset(&o, 0, sizeof o);
    open_all(&o);
    connect_pair(0, 1);
    assert_int_equal(bfo_shm_get_conn_info((bfo_shm *)R[0].t, 1, 0, &in), BFO_OK);
    assert_int_equal(in.ring_bytes, 1u << 20);
    send_taken(0, 1, 0, 300, 4096, 1);
    sent[0] = 300;
    assert_int_equal(R[1].got, 300);
    assert_int_equal(R[1].bad, 0);
    rss = segment_rss_kib();
    /* each mapping: the header's page, where ring 0 starts, and the next
     * (a record of 4 KiB from the header's end, then the WRAP): 8 KiB;
     * a page of slack each (it was 1 MiB + 8 KiB each) */
    print_message("segment pages mapped after 300 x 4 KiB: %ld KiB (both sides)\n", rss);
    assert_true(rss <= 2 * (8 + 4));
    for (int round = 0; round < 40; round++) {
        int a = round & 1, burst = 1 + round % 7;
        size_t len = (size_t)64 << (round % 8);
        send_taken(a, 1 - a, sent[a], burst * 3, len, burst);
        sent[a] += (uint32_t)(burst * 3);
    }
    assert_int_equal(R[1].got, sent[0]);
    assert_int_equal(R[0].got, sent[1]);
    assert_int_equal(R[0].bad + R[1].bad, 0);
    close_all();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_ring_for_a_local_peer_never_connected),
        cmocka_unit_test(test_rings_shrink_as_the_ranks_of_a_host_grow),
        cmocka_unit_test(test_a_ring_taken_as_it_comes_touches_its_first_pages_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
