// SPDX-License-Identifier: BSD-3-Clause
/* test_tcp_res.c - what the TCP transport holds grows with use, not with the
 * job (bfo_tcp.h, MEMORY and BEACONS): a peer never connected costs no
 * receive buffer (the heap grows by its link alone), a connection takes
 * one buffer at its first read, keeps it however many frames it carries
 * and gives it back once idle; beacons go to a connection with work and
 * stop on one left idle.  Several ranks of one host in this process, on
 * loopback rails, driven through the transport's own calls (no engine:
 * the sink takes every frame). */
#define _GNU_SOURCE
#include "bfo_test.h"
#include "bfo_test_heap.h"
#include "bfo_setting.h"
#include "bfo_tcp.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAXR 3
#define NR 2
static const char *const rails2[NR] = { "127.0.0.1", "127.0.0.2" };

typedef struct rk {
    int rank;
    void *t;
    bfo_backend be;
    struct world *w;
    int up[MAXR][NR];
    uint64_t frames, done_ok, done_failed;
} rk;

typedef struct world {
    int size, nrails;
    rk r[MAXR];
    bfo_addr addr[MAXR][NR];
} world;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void s_completion(void *ctx, uint64_t token, int ok)
{
    rk *k = (rk *)ctx;
    (void)token;
    if (ok)
        k->done_ok++;
    else
        k->done_failed++;
}
static int s_frame(void *ctx, int peer, int rail, const uint8_t *buf, size_t len, uint64_t now)
{
    (void)peer, (void)rail, (void)buf, (void)len, (void)now;
    ((rk *)ctx)->frames++;
    return BFO_OK;
}
static void s_event(void *ctx, int peer, int rail, int ev, uint64_t now)
{
    (void)now;
    ((rk *)ctx)->up[peer][rail] = ev == BFO_EV_CONNECTED;
}
static int s_lookup(void *ctx, int peer, int rail, bfo_addr *out)
{
    rk *k = (rk *)ctx;
    if (peer < 0 || peer >= k->w->size || rail < 0 || rail >= k->w->nrails)
        return BFO_ERR_INVALID;
    *out = k->w->addr[peer][rail];
    return BFO_OK;
}

/* A setting of TCP's table by name, as `--set tcp.NAME=V` would (said
 * when there is none: the test then fails by what it checks, not here). */
static void set_opt(bfo_tcp_options *o, const char *name, const char *v)
{
    char why[200];
    for (int i = 0; i < bfo_tcp_transport.nsettings; i++)
        if (!strcmp(bfo_tcp_transport.settings[i].name, name)) {
            assert_int_equal(bfo_setting_parse(&bfo_tcp_transport.settings[i], v, o, why, sizeof why), 0);
            return;
        }
    print_message("TCP has no setting %s\n", name);
}

/* A TCP counter of rail by the name its row gives it. */
static uint64_t counter(rk *k, int rail, const char *name)
{
    bfo_rail_stats st;
    bfo_tcp_transport.stats(k->t, rail, &st);
    for (int i = 0; i < bfo_tcp_transport.ncounters; i++)
        if (!strcmp(bfo_tcp_transport.counters[i].name, name))
            return st.tp[i];
    fail_msg("TCP has no counter %s", name);
    return 0;
}

static int open_rank(world *w, int rank, const bfo_tcp_options *o)
{
    bfo_sink sink = { &w->r[rank], s_completion, s_frame, s_event, NULL, s_lookup, NULL, NULL, NULL, NULL };
    bfo_config cfg;
    bfo_transport_args a;
    rk *k = &w->r[rank];
    memset(&cfg, 0, sizeof cfg);
    cfg.rank = rank;
    cfg.nranks = w->size;
    cfg.nrails = w->nrails;
    bfo_config_defaults(&cfg);
    memset(&a, 0, sizeof a);
    a.rank = rank;
    a.size = w->size;
    a.nrails = w->nrails;
    a.rails = rails2;
    a.cfg = &cfg;
    a.sink = &sink;
    a.opt = o;
    k->rank = rank;
    k->w = w;
    return bfo_tcp_transport.open(&k->t, &a);
}

static void world_open(world *w, int size, int nrails, const bfo_tcp_options *o)
{
    memset(w, 0, sizeof *w);
    w->size = size;
    w->nrails = nrails;
    for (int i = 0; i < size; i++) {
        assert_int_equal(open_rank(w, i, o), BFO_OK);
        for (int g = 0; g < nrails; g++)
            assert_int_equal(bfo_tcp_transport.address(w->r[i].t, g, &w->addr[i][g]), BFO_OK);
    }
    for (int i = 0; i < size; i++) {
        bfo_tcp_transport.start(w->r[i].t, 0x7e57);
        bfo_tcp_transport.backend(w->r[i].t, &w->r[i].be);
    }
}

static void world_close(world *w)
{
    for (int i = 0; i < w->size; i++)
        bfo_tcp_transport.fini(w->r[i].t);
}

static void run_for(world *w, uint64_t ns)
{
    for (uint64_t end = now_ns() + ns; now_ns() < end;)
        for (int i = 0; i < w->size; i++)
            bfo_tcp_transport.progress(w->r[i].t, now_ns());
}

/* Ranks a and b connect on every rail (connect() on both sides, as the
 * engine calls it). */
static void connect_pair(world *w, int a, int b)
{
    uint64_t end = now_ns() + 5000000000ull;
    for (int g = 0; g < w->nrails; g++) {
        w->r[a].be.connect(w->r[a].be.ctx, b, g);
        w->r[b].be.connect(w->r[b].be.ctx, a, g);
    }
    for (;;) {
        int all = 1;
        for (int g = 0; g < w->nrails; g++)
            all &= w->r[a].up[b][g] && w->r[b].up[a][g];
        if (all)
            return;
        assert_true(now_ns() < end);
        run_for(w, 1000000);
    }
}

/* n frames of len bytes from a to b on rail, each waited for. */
static void send_frames(world *w, int a, int b, int rail, int n, size_t len)
{
    static uint8_t buf[8192];
    rk *k = &w->r[a];
    memset(buf, 0x5a, sizeof buf);
    buf[0] = 1; /* not a rail control frame */
    for (int i = 0; i < n; i++) {
        bfo_iov iov = { buf, len };
        uint64_t ok = k->done_ok, end = now_ns() + 2000000000ull;
        assert_int_equal(k->be.post_send(k->be.ctx, b, rail, &iov, 1, (uint64_t)i), 0);
        while (k->done_ok == ok) {
            assert_true(now_ns() < end);
            for (int j = 0; j < w->size; j++)
                bfo_tcp_transport.progress(w->r[j].t, now_ns());
        }
    }
}

/* The heap tests read glibc's heap: skipped, saying so, where a
 * sanitizer's heap hides it; o cleared, the transport quiet. */
static void heap_options(bfo_tcp_options *o)
{
    if (!heap_seen()) {
        print_message("the heap is not glibc's here (a sanitizer's): skipped\n");
        skip();
    }
    memset(o, 0, sizeof *o);
    o->log_level = -1;
}

/* Opening for 64 peers more costs each of them its link (and the slots for
 * accepted connections), under 2 KiB a peer: no receive buffer for a peer
 * never connected (there was one of two of the largest frames, 131 KiB,
 * for every peer). */
static void test_a_peer_never_connected_costs_no_receive_buffer(void **state)
{
    static const char *const one[1] = { "127.0.0.1" };
    bfo_tcp_options o;
    size_t h[2];
    (void)state;
    heap_options(&o);
    for (int s = 0; s < 2; s++) {
        int size = s ? 68 : 4;
        bfo_sink sink = { NULL, s_completion, s_frame, s_event, NULL, NULL, NULL, NULL, NULL, NULL };
        bfo_config cfg;
        bfo_transport_args a;
        void *t;
        size_t before;
        memset(&cfg, 0, sizeof cfg);
        cfg.rank = 0;
        cfg.nranks = size;
        cfg.nrails = 1;
        bfo_config_defaults(&cfg);
        memset(&a, 0, sizeof a);
        a.rank = 0;
        a.size = size;
        a.nrails = 1;
        a.rails = one;
        a.cfg = &cfg;
        a.sink = &sink;
        a.opt = &o;
        before = heap_now();
        assert_int_equal(bfo_tcp_transport.open(&t, &a), BFO_OK);
        h[s] = heap_now() - before;
        bfo_tcp_transport.fini(t);
    }
    print_message("heap at open: %zu bytes for 4 ranks, %zu for 68: %zu bytes per peer\n", h[0], h[1],
                  (h[1] - h[0]) / 64);
    assert_true(h[1] > h[0]);
    assert_true((h[1] - h[0]) / 64 < 2048);
}

/* Ranks 0 and 1 connect, rank 2 never: no buffer anywhere before the first
 * read; then one per connection that carried frames (whatever their
 * number: allocated once), none for rank 2; given back after rx_idle
 * (1 s: the machine may be loaded) of nothing; the next frames take a
 * small one (4 KiB: the engine's probes need no more), and a frame that
 * does not fit in it the whole one again. */
static void test_a_connection_takes_one_buffer_and_gives_it_back_when_idle(void **state)
{
    world w;
    bfo_tcp_options o;
    uint64_t one;
    (void)state;
    memset(&o, 0, sizeof o);
    o.log_level = -1;
    set_opt(&o, "rx_idle_ms", "1000");
    world_open(&w, 3, 1, &o);
    for (int i = 0; i < 3; i++)
        assert_int_equal(counter(&w.r[i], 0, "rx_buf_bytes"), 0);
    connect_pair(&w, 0, 1);
    send_frames(&w, 0, 1, 0, 300, 1000);
    send_frames(&w, 1, 0, 0, 300, 8000);
    one = counter(&w.r[0], 0, "rx_buf_bytes");
    assert_true(one > 2 * 65536);                                /* two of the largest frames */
    assert_int_equal(counter(&w.r[1], 0, "rx_buf_bytes"), one);
    assert_int_equal(counter(&w.r[0], 0, "rx_buf_allocs"), 1); /* not per frame */
    assert_int_equal(counter(&w.r[1], 0, "rx_buf_allocs"), 1);
    assert_int_equal(counter(&w.r[2], 0, "rx_buf_bytes"), 0);   /* never connected */
    assert_int_equal(counter(&w.r[2], 0, "rx_buf_allocs"), 0);
    run_for(&w, 2500000000ull); /* idle */
    assert_int_equal(counter(&w.r[0], 0, "rx_buf_bytes"), 0);
    assert_int_equal(counter(&w.r[1], 0, "rx_buf_bytes"), 0);
    send_frames(&w, 0, 1, 0, 10, 100); /* small frames: a small buffer */
    assert_true(counter(&w.r[1], 0, "rx_buf_bytes") > 0 && counter(&w.r[1], 0, "rx_buf_bytes") <= 8192);
    assert_int_equal(counter(&w.r[1], 0, "rx_buf_allocs"), 2);
    send_frames(&w, 0, 1, 0, 10, 8000); /* one that does not fit: the whole buffer, once */
    assert_int_equal(counter(&w.r[1], 0, "rx_buf_bytes"), one);
    assert_int_equal(counter(&w.r[1], 0, "rx_buf_allocs"), 3);
    assert_int_equal(w.r[0].done_failed + w.r[1].done_failed, 0);
    world_close(&w);
}

/* The same through the heap, which the transport's own counters cannot
 * fake: connecting and carrying frames grows it by the two buffers (the
 * ranks live in this process), idleness gives them back. */
static void test_the_heap_follows_the_connection(void **state)
{
    world w;
    bfo_tcp_options o;
    size_t h0, h1, h2;
    (void)state;
    heap_options(&o);
    set_opt(&o, "rx_idle_ms", "1000");
    world_open(&w, 2, 1, &o);
    h0 = heap_now();
    connect_pair(&w, 0, 1);
    send_frames(&w, 0, 1, 0, 20, 1000);
    send_frames(&w, 1, 0, 0, 20, 1000);
    h1 = heap_now();
    run_for(&w, 2500000000ull);
    h2 = heap_now();
    print_message("heap: %zu after open, %zu connected, %zu idle\n", h0, h1, h2);
    assert_true(h1 > h0 + 2 * 2 * 65536); /* two buffers */
    assert_true(h2 + 2 * 2 * 65536 < h1);
    world_close(&w);
}

/* Two ranks, two rails, beacons every 2 ms: once both connections have
 * been idle for beacon_idle (50 ms), neither gets a beacon; then rail 1,
 * left idle, gets none while rail 0 carries a stream of frames and gets
 * them as before, both ways (the receiver has work too). */
static void test_beacons_follow_the_work(void **state)
{
    world w;
    bfo_tcp_options o;
    uint64_t s0[2], s1[2], end;
    (void)state;
    memset(&o, 0, sizeof o);
    o.log_level = -1;
    o.beacon_interval_ns = 2000000;
    set_opt(&o, "beacon_idle_ms", "50");
    world_open(&w, 2, 2, &o);
    connect_pair(&w, 0, 1);
    run_for(&w, 100000000ull); /* past beacon_idle */
    for (int i = 0; i < 2; i++) {
        s0[i] = counter(&w.r[i], 0, "beacons_sent");
        s1[i] = counter(&w.r[i], 1, "beacons_sent");
    }
    run_for(&w, 50000000ull);
    for (int i = 0; i < 2; i++) { /* idle: none */
        assert_int_equal(counter(&w.r[i], 0, "beacons_sent"), s0[i]);
        assert_int_equal(counter(&w.r[i], 1, "beacons_sent"), s1[i]);
    }
    end = now_ns() + 300000000ull;
    while (now_ns() < end)
        send_frames(&w, 0, 1, 0, 1, 4000);
    for (int i = 0; i < 2; i++) {
        uint64_t busy = counter(&w.r[i], 0, "beacons_sent") - s0[i];
        print_message("rank %d: %llu beacons on the busy rail, %llu on the idle one in 300 ms\n", i,
                      (unsigned long long)busy, (unsigned long long)(counter(&w.r[i], 1, "beacons_sent") - s1[i]));
        assert_true(busy >= 5); /* 150 on an idle machine: a loaded one runs progress less often */
        assert_int_equal(counter(&w.r[i], 1, "beacons_sent"), s1[i]);
    }
    assert_true(counter(&w.r[1], 0, "beacons_rcvd") >= 5);
    world_close(&w);
}

/* The beacon address rank published for rail g (BEACONS: its rail's IP,
 * the UDP port after the TCP address's 8 bytes). */
static struct sockaddr_in beacon_addr(const world *w, int rank, int g)
{
    const bfo_addr *a = &w->addr[rank][g];
    struct sockaddr_in sa;
    assert_int_equal(a->len, 10); /* IPv4 with a beacon port */
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    memcpy(&sa.sin_addr, a->bytes + 4, 4);
    memcpy(&sa.sin_port, a->bytes + 8, 2);
    return sa;
}

/* 1 when a UDP socket of this process (every rank lives here) is bound to sa. */
static int udp_bound(const struct sockaddr_in *sa)
{
    for (int fd = 3; fd < 4096; fd++) {
        int type = 0;
        socklen_t tl = sizeof type;
        struct sockaddr_in b;
        socklen_t bl = sizeof b;
        if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) != 0 || type != SOCK_DGRAM)
            continue;
        if (getsockname(fd, (struct sockaddr *)&b, &bl) == 0 && b.sin_family == AF_INET &&
            b.sin_addr.s_addr == sa->sin_addr.s_addr && b.sin_port == sa->sin_port)
            return 1;
    }
    return 0;
}

/* Frames both ways on rail 0 for ns (beacons every 2 ms meanwhile). */
static void busy_for(world *w, int a, int b, uint64_t ns)
{
    for (uint64_t end = now_ns() + ns; now_ns() < end;) {
        send_frames(w, a, b, 0, 1, 4000);
        send_frames(w, b, a, 0, 1, 4000);
    }
}

/* An idle rank holds its listener per rail and no beacon socket (BEACONS:
 * opened at the rail's first connection, on the port published at open,
 * the listener's number): none bound after open; ranks 0 and 1 connected,
 * each has its socket on its published port, rank 2 (never connected)
 * still none; and the first beacons are not lost: both sides hear the
 * other's, none dropped. */
static void test_no_beacon_socket_until_the_rails_first_connection(void **state)
{
    world w;
    bfo_tcp_options o;
    struct sockaddr_in ba[3];
    (void)state;
    memset(&o, 0, sizeof o);
    o.log_level = -1;
    o.beacon_interval_ns = 2000000;
    world_open(&w, 3, 1, &o);
    for (int i = 0; i < 3; i++) {
        ba[i] = beacon_addr(&w, i, 0);
        assert_true(ba[i].sin_port != 0);
        assert_false(udp_bound(&ba[i])); /* none at open */
    }
    connect_pair(&w, 0, 1);
    assert_true(udp_bound(&ba[0]));
    assert_true(udp_bound(&ba[1]));
    assert_false(udp_bound(&ba[2]));
    busy_for(&w, 0, 1, 100000000ull);
    for (int i = 0; i < 2; i++) {
        print_message("rank %d: beacons sent %llu, received %llu, dropped %llu\n", i,
                      (unsigned long long)counter(&w.r[i], 0, "beacons_sent"),
                      (unsigned long long)counter(&w.r[i], 0, "beacons_rcvd"),
                      (unsigned long long)counter(&w.r[i], 0, "beacons_dropped"));
        assert_true(counter(&w.r[i], 0, "beacons_rcvd") >= 5);
        assert_int_equal(counter(&w.r[i], 0, "beacons_dropped"), 0);
        assert_int_equal(counter(&w.r[i], 0, "beacon_binds_failed"), 0);
    }
    world_close(&w);
}

/* Another socket holds rank 1's published beacon port when its rail first
 * connects: said and counted (beacon_binds_failed), rank 1 hears no
 * beacon and sends none (the peers check where beacons come from), the
 * connection works; once the port is free, rank 1 binds it within the
 * retry (a second) while the rail is busy, and hears rank 0's beacons. */
static void test_a_beacon_port_taken_at_the_first_connection_is_counted_and_tried_again(void **state)
{
    world w;
    bfo_tcp_options o;
    struct sockaddr_in b1;
    int squat;
    uint64_t end;
    (void)state;
    memset(&o, 0, sizeof o);
    o.log_level = -1;
    o.beacon_interval_ns = 2000000;
    world_open(&w, 2, 1, &o);
    b1 = beacon_addr(&w, 1, 0);
    squat = socket(AF_INET, SOCK_DGRAM, 0);
    assert_true(squat >= 0);
    assert_int_equal(bind(squat, (struct sockaddr *)&b1, sizeof b1), 0); /* free until the first connection */
    connect_pair(&w, 0, 1);
    busy_for(&w, 0, 1, 100000000ull);
    assert_true(counter(&w.r[1], 0, "beacon_binds_failed") >= 1);
    assert_int_equal(counter(&w.r[1], 0, "beacons_rcvd"), 0);
    assert_int_equal(counter(&w.r[1], 0, "beacons_sent"), 0);
    assert_int_equal(counter(&w.r[0], 0, "beacons_rcvd"), 0);
    assert_true(counter(&w.r[0], 0, "beacons_sent") >= 5); /* to the squatter */
    close(squat);
    end = now_ns() + 3000000000ull;
    while (counter(&w.r[1], 0, "beacons_rcvd") == 0 && now_ns() < end)
        busy_for(&w, 0, 1, 50000000ull);
    print_message("rank 1: %llu binds failed, then %llu beacons received, %llu sent\n",
                  (unsigned long long)counter(&w.r[1], 0, "beacon_binds_failed"),
                  (unsigned long long)counter(&w.r[1], 0, "beacons_rcvd"),
                  (unsigned long long)counter(&w.r[1], 0, "beacons_sent"));
    assert_true(udp_bound(&b1));
    assert_true(counter(&w.r[1], 0, "beacons_rcvd") > 0);
    busy_for(&w, 0, 1, 50000000ull);
    assert_true(counter(&w.r[0], 0, "beacons_rcvd") > 0);
    assert_int_equal(w.r[0].done_failed + w.r[1].done_failed, 0);
    world_close(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_peer_never_connected_costs_no_receive_buffer),
        cmocka_unit_test(test_a_connection_takes_one_buffer_and_gives_it_back_when_idle),
        cmocka_unit_test(test_the_heap_follows_the_connection),
        cmocka_unit_test(test_beacons_follow_the_work),
        cmocka_unit_test(test_no_beacon_socket_until_the_rails_first_connection),
        cmocka_unit_test(test_a_beacon_port_taken_at_the_first_connection_is_counted_and_tried_again),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
