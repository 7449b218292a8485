// SPDX-License-Identifier: BSD-3-Clause
/* test_tcp_conn.c - the TCP transport's connections as the conn machine
 * makes them (spec/conn.rl), with real sockets: ranks opened in this
 * process on one loopback rail, a sink that counts what the engine would
 * hear (CONNECTED, CONNECT_FAILED, RAIL_ERROR, the peer heard), no engine.
 *   - only the higher rank asks (it sends to the lower, which never sent
 *     to it): both hear CONNECTED, the higher rank dialed;
 *   - only the lower rank asks: the same, the other way;
 *   - both ask at once (as at init), in either order of progress: one
 *     connection, no failure on either side;
 *   - a dialer whose peer computes (its process makes no progress call
 *     for five connect timeouts, its kernel accepted the connection and
 *     acknowledges): not failed, the peer heard meanwhile; connected when
 *     the peer calls in;
 *   - a dead host: refused, or no answer at all (a listener whose queue is
 *     full drops the SYN): CONNECT_FAILED within the connect timeout.
 * Loopback only, no namespace, no root. */
#define _GNU_SOURCE
#include "bfo_trust_harness.h"
#include "bfo_tcp.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define JOB 0x7e57c0ull
#define TMO_NS 200000000ull /* the connect timeout */

static void open_rank(int r)
{
    bfo_tcp_options o;
    tr_tcp_options(&o, TMO_NS);
    th_open(&bfo_tcp_transport, r, 2, "127.0.0.1", &o, NULL, 0, JOB);
}

static uint64_t tp(int r, int k) { return bfo_tcp_get_stats(E[r].tv)->rail[0].tp[k]; }

static void one_side_asks(int r)
{
    open_two();
    th_pump(3, 0, 20, NULL); /* both idle: nothing happens */
    assert_int_equal(E[0].connected + E[1].connected + E[0].failed + E[1].failed, 0);
    ask(r);
    th_pump(3, 0, 2000, both_up);
    th_up_once_clean();
    assert_int_equal(bfo_tcp_get_stats(E[r].tv)->rail[0].connects, 1);
    close_two();
}

static void test_only_the_higher_rank_asks_connected(void **state)
{
    (void)state;
    one_side_asks(1);
}

static void test_only_the_lower_rank_asks_connected(void **state)
{
    (void)state;
    one_side_asks(0);
}

/* Both ask before either makes progress: both dial, their hellos cross.
 * Several rounds, each rank going first in turn, and one rank a few
 * progress calls ahead: one connection, no failure, whichever hello or
 * answer came first. */
static void test_simultaneous_dial_gives_one_connection(void **state)
{
    uint64_t won = 0, lost = 0;
    (void)state;
    for (int round = 0; round < 8; round++) {
        int first = round & 1;
        open_two();
        ask(0);
        ask(1);
        if (round & 2)
            th_pump(1 << first, first, 2, NULL); /* one dials and waits a little */
        th_pump(3, first, 2000, both_up);
        th_pump(3, first, 50, NULL); /* anything late: a stale hello, a close */
        th_up_once_clean();
        won += tp(0, BFO_TCP_TIES_WON);
        lost += tp(1, BFO_TCP_TIES_LOST);
        assert_int_equal(tp(1, BFO_TCP_TIES_WON) + tp(0, BFO_TCP_TIES_LOST), 0); /* the lower rank wins */
        close_two();
    }
    print_message("   8 rounds: the lower rank answered \"dialing you\" %llu times, the higher rank read it "
                  "%llu times (else it read the winner's hello first)\n",
                  (unsigned long long)won, (unsigned long long)lost);
}

/* Rank 0 dials; rank 1 computes (no progress call) for five connect
 * timeouts: its kernel accepted the connection and acknowledges the hello.
 * Rank 0 does not fail the attempt and tells the engine the peer is heard;
 * rank 1 calls in, and both are connected. */
static void test_a_dialer_waiting_for_a_computing_peer_is_not_failed(void **state)
{
    (void)state;
    open_two();
    ask(0);
    th_pump(1, 0, (unsigned)(5 * TMO_NS / 1000000ull), NULL);
    print_message("   rank 0 waited %llu ms for a computing peer: CONNECT_FAILED %u, peer heard %u times\n",
                  (unsigned long long)(5 * TMO_NS / 1000000ull), E[0].failed, E[0].heard);
    assert_int_equal(E[0].failed, 0);
    assert_int_equal(E[0].connected, 0);
    assert_true(E[0].heard >= 3);
    assert_true(tp(0, BFO_TCP_HELLO_HEARD) >= 3);
    th_pump(3, 1, 2000, both_up);
    th_up_once_clean();
    close_two();
}

/* A listener of this process on 127.0.0.1, its port (network order) in
 * *port; backlog 0 and never accepted. */
static int listener(uint16_t *port)
{
    struct sockaddr_in sa;
    socklen_t sl = sizeof sa;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_true(fd >= 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(listen(fd, 0), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
    *port = sa.sin_port;
    return fd;
}

/* Rank 1's published address with another port: rank 0 dials there. */
static void point_rank1_at(uint16_t port) { memcpy(table[1].bytes + 2, &port, 2); }

/* Rank 0 dials a port nobody listens on (refused), then a listener whose
 * queue is full (the SYN dropped: no answer at all); rank 1 is not run.
 * Each fails within the connect timeout (and a little). */
static void test_a_dead_host_still_fails_within_the_connect_timeout(void **state)
{
    uint16_t port;
    int lfd, fill[4], nfill = 0;
    uint64_t t0;
    (void)state;
    open_two();
    lfd = listener(&port);
    close(lfd); /* nobody listens there now */
    point_rank1_at(port);
    t0 = now_ns();
    ask(0);
    while (!E[0].failed && now_ns() - t0 < 3 * TMO_NS)
        bfo_tcp_progress(E[0].tv, 1);
    print_message("   refused: CONNECT_FAILED after %.1f ms\n", (double)(now_ns() - t0) / 1e6);
    assert_int_equal(E[0].failed, 1);
    assert_true(now_ns() - t0 < TMO_NS + 200000000ull); /* the timeout, and a loaded machine's slack */
    /* a queue that takes no more: connections the listener never accepts */
    lfd = listener(&port);
    for (int k = 0; k < 4; k++) {
        struct sockaddr_in sa;
        memset(&sa, 0, sizeof sa);
        sa.sin_family = AF_INET;
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        sa.sin_port = port;
        fill[nfill] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
        (void)connect(fill[nfill], (struct sockaddr *)&sa, sizeof sa);
        nfill++;
    }
    usleep(20000);
    point_rank1_at(port);
    t0 = now_ns();
    ask(0);
    while (E[0].failed < 2 && now_ns() - t0 < 3 * TMO_NS)
        bfo_tcp_progress(E[0].tv, 1);
    print_message("   no answer: CONNECT_FAILED after %.1f ms (connect timeout %llu ms), peer heard %u times\n",
                  (double)(now_ns() - t0) / 1e6, (unsigned long long)(TMO_NS / 1000000ull), E[0].heard);
    assert_int_equal(E[0].failed, 2);
    assert_true(now_ns() - t0 < TMO_NS + 200000000ull); /* the timeout, and a loaded machine's slack */
    assert_int_equal(E[0].connected, 0);
    for (int k = 0; k < nfill; k++)
        close(fill[k]);
    close(lfd);
    close_two();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_only_the_higher_rank_asks_connected),
        cmocka_unit_test(test_only_the_lower_rank_asks_connected),
        cmocka_unit_test(test_simultaneous_dial_gives_one_connection),
        cmocka_unit_test(test_a_dialer_waiting_for_a_computing_peer_is_not_failed),
        cmocka_unit_test(test_a_dead_host_still_fails_within_the_connect_timeout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
