// SPDX-License-Identifier: BSD-3-Clause
/* test_tcp_ports.c - the TCP transport's port ranges (bfo_tcp.h, PORTS):
 * several ranks of one host, opened in this process on loopback rails,
 * each bind their listener and beacon socket inside a small range (the
 * ports they publish), a port in use is passed over, and a range with
 * every port taken fails open with a message naming the range and its
 * size.  Loopback only, no namespace; the range is a block of ports found
 * free at the start (other tests may run beside this one). */
#include "bfo_test.h"
#include "bfo_test_stderr.h"
#include "bfo_tcp.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#define NR 2
#define N 6
static const char *const rails[NR] = { "127.0.0.1", "127.0.0.2" };

static void s_completion(void *ctx, uint64_t token, int ok) { (void)ctx, (void)token, (void)ok; }
static int s_frame(void *ctx, int peer, int rail, const uint8_t *buf, size_t len, uint64_t now)
{
    (void)ctx, (void)peer, (void)rail, (void)buf, (void)len, (void)now;
    return BFO_OK;
}
static void s_event(void *ctx, int peer, int rail, int ev, uint64_t now) { (void)ctx, (void)peer, (void)rail, (void)ev, (void)now; }

/* rank of size opened with o; its rc, *out the transport (NULL on failure);
 * what it said on stderr in said (cap bytes). */
static int open_rank(int rank, int size, const bfo_tcp_options *o_in, void **out, char *said, size_t cap)
{
    bfo_sink sink = { NULL, s_completion, s_frame, s_event, NULL, NULL, NULL, NULL, NULL, NULL };
    bfo_config cfg;
    bfo_tcp_options o = *o_in;
    bfo_transport_args a;
    stderr_catch_t c;
    int rc;
    memset(&cfg, 0, sizeof cfg);
    cfg.rank = rank;
    cfg.nranks = size;
    cfg.nrails = NR;
    bfo_config_defaults(&cfg);
    o.log_level = 1;
    memset(&a, 0, sizeof a);
    a.rank = rank;
    a.size = size;
    a.nrails = NR;
    a.rails = rails;
    a.cfg = &cfg;
    a.sink = &sink;
    a.opt = &o;
    stderr_catch(&c);
    rc = bfo_tcp_transport.open(out, &a);
    stderr_caught(&c, said, cap);
    {
        /* no bfo_auth here: the first open in the process says so (one
         * line, bfo_tcp.h AUTHENTICATION); not what these tests read */
        static int warned;
        char *w = strstr(said, "TCP hellos are NOT authenticated"), *eol;
        if (w) {
            assert_int_equal(warned++, 0);
            while (w > said && w[-1] != '\n')
                w--;
            eol = strchr(w, '\n');
            memmove(w, eol ? eol + 1 : w + strlen(w), strlen(eol ? eol + 1 : w + strlen(w)) + 1);
        }
    }
    if (rc != BFO_OK)
        *out = NULL;
    return rc;
}

/* The ports a transport publishes for rail r: the listener's, the beacons'. */
static void ports_of(void *t, int r, int *port, int *bport)
{
    bfo_addr a;
    assert_int_equal(bfo_tcp_transport.address(t, r, &a), BFO_OK);
    assert_int_equal(a.len, 10); /* IPv4 with a beacon port */
    assert_int_equal(a.bytes[0], 4);
    *port = (a.bytes[2] << 8) | a.bytes[3];
    *bport = (a.bytes[8] << 8) | a.bytes[9];
}

/* A socket of type on addr:port (listening for TCP); -1 when in use. */
static int hold(int type, const char *addr, int port)
{
    struct sockaddr_in sa;
    int fd = socket(AF_INET, type, 0);
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    inet_pton(AF_INET, addr, &sa.sin_addr);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || (type == SOCK_STREAM && listen(fd, 1) != 0)) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

/* A block of n ports free for TCP and UDP on both rails now, below the
 * kernel's ephemeral range (32768 on). */
static int free_block(int n)
{
    unsigned seed = (unsigned)getpid() * 2654435761u;
    for (int tries = 0; tries < 200; tries++) {
        int base = 20000 + (int)((seed + (unsigned)tries * 7919u) % 10000u), ok = 1;
        for (int p = base; ok && p < base + n; p++)
            for (int r = 0; ok && r < NR; r++)
                for (int k = 0; ok && k < 2; k++) {
                    int fd = hold(k ? SOCK_DGRAM : SOCK_STREAM, rails[r], p);
                    ok = fd >= 0;
                    if (fd >= 0)
                        close(fd);
                }
        if (ok)
            return base;
    }
    fail_msg("no block of %d free ports found", n);
    return -1;
}

/* N ranks of one host on a range of N ports: every one binds, every
 * listener and beacon port it publishes lies in the range, no two ranks
 * share one on a rail, rank r at base + r (its first try); one more rank
 * fails open, saying the range and its size. */
static void test_ranks_share_a_small_range_and_one_too_many_fails(void **state)
{
    bfo_tcp_options o;
    void *t[N + 1];
    char said[2048], want[200];
    int base = free_block(N);
    (void)state;
    memset(&o, 0, sizeof o);
    o.port_min = base;
    o.port_max = base + N - 1;
    for (int k = 0; k < N; k++) {
        assert_int_equal(open_rank(k, N + 1, &o, &t[k], said, sizeof said), BFO_OK);
        assert_string_equal(said, "");
    }
    for (int r = 0; r < NR; r++) {
        int seen[N] = { 0 };
        for (int k = 0; k < N; k++) {
            int port, bport;
            ports_of(t[k], r, &port, &bport);
            if (port < base || port > base + N - 1 || bport < base || bport > base + N - 1)
                fail_msg("rank %d rail %d: port %d, beacon port %d, outside %d-%d", k, r, port, bport, base,
                         base + N - 1);
            assert_int_equal(port, base + k); /* free at its first try */
            assert_int_equal(bport, port);    /* the beacons take the listener's number first */
            assert_int_equal(seen[port - base]++, 0);
        }
    }
    assert_int_equal(open_rank(N, N + 1, &o, &t[N], said, sizeof said), BFO_TCP_ERR_SOCKET);
    snprintf(want, sizeof want, "rail 0 (127.0.0.1): no free port for its listener in %d-%d (tcp.port_min/port_max: %d ports)",
             base, base + N - 1, N);
    if (!strstr(said, want))
        fail_msg("said: %s\nwant: %s", said, want);
    for (int k = 0; k < N; k++)
        bfo_tcp_transport.fini(t[k]);
}

/* A port of the range held by another process is passed over; one of the
 * two ends alone makes a range up to 65535. */
static void test_a_port_in_use_is_passed_over(void **state)
{
    bfo_tcp_options o;
    void *t;
    char said[1024];
    int base = free_block(3), port, bport, fd;
    (void)state;
    fd = hold(SOCK_STREAM, "127.0.0.1", base); /* rank 0's first try on rail 0 */
    assert_true(fd >= 0);
    memset(&o, 0, sizeof o);
    o.port_min = base;
    o.port_max = base + 2;
    assert_int_equal(open_rank(0, 2, &o, &t, said, sizeof said), BFO_OK);
    ports_of(t, 0, &port, &bport);
    assert_int_equal(port, base + 1);
    ports_of(t, 1, &port, &bport); /* another address: its base is free */
    assert_int_equal(port, base);
    bfo_tcp_transport.fini(t);
    o.port_max = 0; /* from base up */
    assert_int_equal(open_rank(0, 2, &o, &t, said, sizeof said), BFO_OK);
    ports_of(t, 0, &port, &bport);
    assert_true(port > base && port <= 65535);
    bfo_tcp_transport.fini(t);
    close(fd);
}

/* The beacons' own range: they bind there, not in the listeners'; their
 * range exhausted fails open too, naming it. */
static void test_beacons_have_their_own_range(void **state)
{
    bfo_tcp_options o;
    void *t[2];
    char said[1024], want[200];
    int base = free_block(4), port, bport;
    (void)state;
    memset(&o, 0, sizeof o);
    o.port_min = base;
    o.port_max = base + 1;
    o.beacon_port_min = base + 2;
    o.beacon_port_max = base + 2;
    assert_int_equal(open_rank(0, 2, &o, &t[0], said, sizeof said), BFO_OK);
    for (int r = 0; r < NR; r++) {
        ports_of(t[0], r, &port, &bport);
        assert_int_equal(port, base);
        assert_int_equal(bport, base + 2);
    }
    assert_int_equal(open_rank(1, 2, &o, &t[1], said, sizeof said), BFO_TCP_ERR_SOCKET);
    snprintf(want, sizeof want, "no free port for its beacon socket in %d-%d (tcp.beacon_port_min/beacon_port_max: 1 port)",
             base + 2, base + 2);
    if (!strstr(said, want))
        fail_msg("said: %s\nwant: %s", said, want);
    bfo_tcp_transport.fini(t[0]);
}

/* No range: the kernel's port, the beacons on the listener's number, as
 * before; a range upside down is refused at open. */
static void test_no_range_as_before_and_a_reversed_range_refused(void **state)
{
    bfo_tcp_options o;
    void *t;
    char said[1024];
    int port, bport;
    (void)state;
    memset(&o, 0, sizeof o);
    assert_int_equal(open_rank(0, 2, &o, &t, said, sizeof said), BFO_OK);
    ports_of(t, 0, &port, &bport);
    assert_true(port > 0);
    assert_int_equal(bport, port);
    bfo_tcp_transport.fini(t);
    o.port_min = -1; /* off, as "0" or "off" set it: any port */
    o.port_max = -1;
    assert_int_equal(open_rank(0, 2, &o, &t, said, sizeof said), BFO_OK);
    ports_of(t, 0, &port, &bport);
    assert_true(port > 0);
    bfo_tcp_transport.fini(t);
    o.port_min = 30010;
    o.port_max = 30000;
    assert_int_equal(open_rank(0, 2, &o, &t, said, sizeof said), BFO_ERR_INVALID);
    assert_non_null(strstr(said, "port range 30010-30000: the lowest port above the highest (tcp.port_min/port_max)"));
}

/* The settings by name, as BFO_TCP_PORT_MIN, --set tcp.port_min and
 * pml_bfo_tcp_port_min give them. */
static void test_ports_are_settings_of_the_tcp_row(void **state)
{
    static const char *const names[] = { "port_min", "port_max", "beacon_port_min", "beacon_port_max" };
    bfo_tcp_options o;
    char why[200];
    (void)state;
    memset(&o, 0, sizeof o);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const bfo_setting *s = NULL;
        for (int k = 0; k < bfo_tcp_transport.nsettings; k++)
            if (!strcmp(bfo_tcp_transport.settings[k].name, names[i]))
                s = &bfo_tcp_transport.settings[k];
        assert_non_null(s);
        assert_int_equal(bfo_setting_parse(s, "40000", &o, why, sizeof why), 0);
        assert_int_equal(bfo_setting_parse(s, "65536", &o, why, sizeof why), -1);
        assert_int_equal(bfo_setting_parse(s, "-1", &o, why, sizeof why), -1);
    }
    assert_int_equal(o.port_min + o.port_max + o.beacon_port_min + o.beacon_port_max, 4 * 40000);
    for (int k = 0; k < bfo_tcp_transport.nsettings; k++)
        if (!strcmp(bfo_tcp_transport.settings[k].name, "port_min")) { /* 0 or off: no range, said */
            assert_int_equal(bfo_setting_parse(&bfo_tcp_transport.settings[k], "0", &o, why, sizeof why), 0);
            assert_int_equal(o.port_min, -1);
            o.port_min = 0;
            assert_int_equal(bfo_setting_parse(&bfo_tcp_transport.settings[k], "off", &o, why, sizeof why), 0);
            assert_int_equal(o.port_min, -1);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ranks_share_a_small_range_and_one_too_many_fails),
        cmocka_unit_test(test_a_port_in_use_is_passed_over),
        cmocka_unit_test(test_beacons_have_their_own_range),
        cmocka_unit_test(test_no_range_as_before_and_a_reversed_range_refused),
        cmocka_unit_test(test_ports_are_settings_of_the_tcp_row),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
