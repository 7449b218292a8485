// SPDX-License-Identifier: BSD-3-Clause
/* reconnect_race.c - both ends of a TCP rail reconnecting at once, over and
 * over; and a stale hello.  (make check-tcp: tests/tcp/t9_reconnect_race.sh)
 *
 * Two bfo_tcp rail groups in one process, each under an engine of its own
 * through a sink (as under bfo_net), rank 0 and rank 1, two loopback rails
 * (127.0.0.1, 127.0.0.2), messages streaming both ways on both rails, every
 * byte checked.  Each round, once both rails are up: the connection of rail
 * 0 is dropped on both sides at once (the backend's disconnect(), as when
 * both engines map it out; the second side a few microseconds to a few
 * milliseconds after the first), so that both engines reconnect after the
 * same back-off and the dialer's hello meets the acceptor's own connect().
 * Each round must bring the rail back with one attempt: on each side one
 * connect() call at most (none when the other's dial came in before its
 * own back-off ran out) and one new connection, no CONNECT_FAILED, and no
 * connection torn down once up (one RAIL_ERROR per side: the drop itself).
 * Then a hello of rank 0 that is not newer than the connection rail 0 has
 * (a dial given up, read late) arrives at rank 1: it is refused, and the
 * connection stays.
 * Exit status 0 and "ok:" lines when all holds; "FAIL:" and 1 otherwise.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bfo_engine.h"
#include "bfo_tcp.h"

#define NR 2
#define K 4                 /* messages in flight each way */
#define MSG (256 * 1024)    /* bytes each */
#define ROUNDS 40
#define JOB 0x5eedull

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

enum { E_CONNECTED, E_CONNECT_FAILED, E_RAIL_ERROR };

typedef struct node {
    int rank;
    bfo_tcp *t;
    bfo_engine e;
    void *emem;
    bfo_backend tbe, be;
    uint64_t connects[NR];  /* connect() calls of the engine */
    uint64_t ev[NR][3];     /* rail events the transport reported */
    bfo_request sreq[K], rreq[K];
    uint8_t *sbuf[K], *rbuf[K];
    uint64_t next_send, next_recv, sent, received, bad;
    int rtag[K];
} node;

static node nodes[2];
static bfo_addr table[2 * NR];
static pthread_barrier_t bar;
static const char *rails[NR] = { "127.0.0.1", "127.0.0.2" };

static int fail(const char *fmt, long a, long b)
{
    printf("FAIL: ");
    printf(fmt, a, b);
    printf("\n");
    for (int i = 0; i < 2; i++) {
        if (!nodes[i].t)
            continue;
        for (int r = 0; r < NR; r++)
            printf("rank %d rail %d: engine state %s; CONNECTED %llu, CONNECT_FAILED %llu, "
                   "RAIL_ERROR %llu, connect() %llu\n", i, r,
                   bfo_fsm_state_name(&bfo_rail_machine, nodes[i].e.peers[1 - i].rail[r].fsm.cs),
                   (unsigned long long)nodes[i].ev[r][E_CONNECTED],
                   (unsigned long long)nodes[i].ev[r][E_CONNECT_FAILED],
                   (unsigned long long)nodes[i].ev[r][E_RAIL_ERROR],
                   (unsigned long long)nodes[i].connects[r]);
        bfo_tcp_dump(nodes[i].t, stdout);
    }
    exit(1);
}

/* ------------------------------------------------- sink and backend */

static void s_completion(void *ctx, uint64_t token, int ok)
{
    node *n = (node *)ctx;
    bfo_engine_completion(&n->e, token, ok);
}

static int s_frame(void *ctx, int peer, int rail, const uint8_t *buf, size_t len, uint64_t now)
{
    node *n = (node *)ctx;
    return bfo_engine_frame(&n->e, peer, rail, buf, len, now);
}

static void s_rail_event(void *ctx, int peer, int rail, int ev, uint64_t now)
{
    node *n = (node *)ctx;
    int k = ev == BFO_EV_CONNECTED ? E_CONNECTED : ev == BFO_EV_CONNECT_FAILED ? E_CONNECT_FAILED
                                                                              : E_RAIL_ERROR;
    n->ev[rail][k]++;
    bfo_engine_rail_event(&n->e, peer, rail, ev, now);
}

static void s_heard(void *ctx, int peer, int rail, uint64_t now)
{
    node *n = (node *)ctx;
    bfo_engine_rail_heard(&n->e, peer, rail, now);
}

/* The engine's connect(), counted. */
static int b_connect(void *ctx, int peer, int rail)
{
    node *n = (node *)ctx;
    n->connects[rail]++;
    return n->tbe.connect(n->tbe.ctx, peer, rail);
}

static int b_post_send(void *ctx, int peer, int rail, const bfo_iov *iov, int iovcnt, uint64_t token)
{
    node *n = (node *)ctx;
    return n->tbe.post_send(n->tbe.ctx, peer, rail, iov, iovcnt, token);
}

static void b_disconnect(void *ctx, int peer, int rail)
{
    node *n = (node *)ctx;
    n->tbe.disconnect(n->tbe.ctx, peer, rail);
}

static unsigned b_caps(void *ctx, int rail)
{
    node *n = (node *)ctx;
    return n->tbe.rail_caps(n->tbe.ctx, rail);
}

static unsigned b_bw(void *ctx, int rail)
{
    node *n = (node *)ctx;
    return n->tbe.rail_bandwidth(n->tbe.ctx, rail);
}

/* A peer's address, as bfo_net would look it up. */
static int s_lookup(void *ctx, int peer, int rail, bfo_addr *out)
{
    (void)ctx;
    if (peer < 0 || peer > 1 || rail < 0 || rail >= NR)
        return BFO_ERR_INVALID;
    *out = table[peer * NR + rail];
    return BFO_OK;
}

static void *init_one(void *arg)
{
    node *n = (node *)arg;
    bfo_config cfg;
    bfo_tcp_options o;
    bfo_sink sink = { n, s_completion, s_frame, s_rail_event, s_heard, s_lookup, NULL, NULL, NULL, NULL };
    bfo_transport_args a;
    memset(&cfg, 0, sizeof cfg);
    memset(&o, 0, sizeof o);
    cfg.rank = n->rank;
    cfg.nranks = 2;
    cfg.nrails = NR;
    o.log_level = getenv("BFO_TCP_LOG") ? atoi(getenv("BFO_TCP_LOG")) : -1;
    memset(&a, 0, sizeof a);
    a.rank = n->rank;
    a.size = 2;
    a.nrails = NR;
    a.rails = rails;
    a.cfg = &cfg;
    a.sink = &sink;
    a.opt = &o;
    if (bfo_tcp_open(&n->t, &a) != BFO_OK)
        n->t = NULL;
    for (int r = 0; n->t && r < NR; r++)
        bfo_tcp_address(n->t, r, &table[n->rank * NR + r]);
    pthread_barrier_wait(&bar); /* both addresses are there */
    if (n->t)
        bfo_tcp_start(n->t, JOB);
    return NULL;
}

/* ------------------------------------------------------------ traffic */

static uint8_t pat(uint64_t msg, size_t i, int from) { return (uint8_t)(msg * 131 + i * 7 + (uint64_t)from * 29 + (i >> 9)); }

static void post_send(node *n, int k)
{
    uint64_t m = n->next_send++;
    for (size_t i = 0; i < MSG; i++)
        n->sbuf[k][i] = pat(m, i, n->rank);
    if (bfo_isend(&n->e, &n->sreq[k], n->sbuf[k], MSG, 1 - n->rank, 0, (int)(m & 0x3fffffff),
                  now_ns()) != BFO_OK)
        fail("isend failed at rank %ld (message %ld)", n->rank, (long)m);
}

static void post_recv(node *n, int k)
{
    uint64_t m = n->next_recv++;
    n->rtag[k] = (int)(m & 0x3fffffff);
    if (bfo_irecv(&n->e, &n->rreq[k], n->rbuf[k], MSG, 1 - n->rank, 0, n->rtag[k], now_ns()) !=
        BFO_OK)
        fail("irecv failed at rank %ld (message %ld)", n->rank, (long)m);
}

static void traffic(node *n)
{
    for (int k = 0; k < K; k++) {
        if (bfo_test(&n->sreq[k])) {
            if (n->sreq[k].status != BFO_OK)
                fail("a send failed at rank %ld: %ld", n->rank, n->sreq[k].status);
            n->sent++;
            post_send(n, k);
        }
        if (bfo_test(&n->rreq[k])) {
            uint64_t m = (uint64_t)n->rtag[k];
            if (n->rreq[k].status != BFO_OK || n->rreq[k].length != MSG)
                fail("a receive failed at rank %ld: %ld", n->rank, n->rreq[k].status);
            for (size_t i = 0; i < MSG; i++)
                if (n->rbuf[k][i] != pat(m, i, 1 - n->rank)) {
                    n->bad++;
                    fail("message %ld: byte %ld is wrong", (long)m, (long)i);
                }
            n->received++;
            post_recv(n, k);
        }
    }
}

/* A busy rank runs only every period_ns, its engine's timers before its
 * I/O: the peer's hello is already in its socket when its own connect()
 * comes (the window a late connect() needs). */
static uint64_t period_ns[2], last_run[2];

/* One progress of everything. */
static void pump(void)
{
    for (int i = 0; i < 2; i++) {
        node *n = &nodes[i];
        uint64_t now = now_ns();
        if (period_ns[i]) {
            if (now - last_run[i] < period_ns[i])
                continue;
            last_run[i] = now;
            bfo_engine_progress(&n->e, now);
            bfo_tcp_progress(n->t, 0);
        } else {
            bfo_tcp_progress(n->t, 0);
            bfo_engine_progress(&n->e, now_ns());
        }
        traffic(n);
    }
}

/* Connected and working: UP, or DEMOTED (a rail slower than the other for
 * a while, on two shared cores under load: it is still connected) */
static int up(int rank, int rail)
{
    const int cs = nodes[rank].e.peers[1 - rank].rail[rail].fsm.cs;
    return cs == BFO_RAIL_ST_UP || cs == BFO_RAIL_ST_DEMOTED;
}
static int all_up(void) { return up(0, 0) && up(1, 0) && up(0, 1) && up(1, 1); }

/* RAIL_ERRORs of rail 0 on each side before the round's drop: disconnect()
 * only marks the connection, the error is reported at the next progress, so
 * until both sides have seen it the rails still look UP. */
static uint64_t drop_base[2];
static int both_dropped(void)
{
    return nodes[0].ev[0][E_RAIL_ERROR] > drop_base[0] && nodes[1].ev[0][E_RAIL_ERROR] > drop_base[1];
}

/* Pumps until cond holds (for hold_ns in a row), or limit: 1 when it did. */
static int pump_until(int (*cond)(void), uint64_t hold_ns, uint64_t limit_ns)
{
    uint64_t end = now_ns() + limit_ns, since = 0;
    for (;;) {
        uint64_t now = now_ns();
        if (cond && cond()) {
            if (!since)
                since = now;
            if (now - since >= hold_ns)
                return 1;
        } else {
            since = 0;
        }
        if (now >= end)
            return 0;
        pump();
    }
}

/* ---------------------------------------------------------- stale hello */

/* The last hello rank 1 took from rank 0 on rail 0 (its dump's "taken"):
 * either side dials, so rank 0's connect() calls do not count its dials
 * (a connect() answered by rank 1's dial dials nothing). */
static uint64_t rank1_taken(void)
{
    char *buf = NULL, *p;
    size_t len = 0;
    unsigned long long taken = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        fail("open_memstream (%ld %ld)", 0, 0);
    bfo_tcp_dump(nodes[1].t, f);
    fclose(f);
    p = strstr(buf, "bfo-tcp[1]: peer 0 rail 0: fd");
    if (!p || !(p = strstr(p, " taken ")) || sscanf(p, " taken %llu", &taken) != 1)
        fail("no \"taken\" in rank 1's dump (%ld %ld)", 0, 0);
    free(buf);
    return taken;
}

/* Dials rank 1's rail 0 as rank 0 with this attempt number; 1 when rank 1
 * closed the connection without a reply. */
static int stale_hello(uint64_t attempt)
{
    uint8_t h[BFO_TCP_HDR_SIZE + BFO_TCP_HELLO_SIZE], *b = h + BFO_TCP_HDR_SIZE, in[64];
    struct sockaddr_in sa;
    int fd = socket(AF_INET, SOCK_STREAM, 0), closed = 0;
    uint64_t end;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    /* the TCP transport's address: u8 4, u8 0, u16 port, the IPv4 address */
    memcpy(&sa.sin_port, table[1 * NR + 0].bytes + 2, 2);
    memcpy(&sa.sin_addr, table[1 * NR + 0].bytes + 4, 4);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0)
        fail("cannot dial rank 1 (%ld %ld)", fd, 0);
    bfo_tcp_frame_header(h, BFO_TCP_HELLO_SIZE, BFO_TCP_K_HELLO, 0, 0);
    bfo_put32(b, BFO_TCP_HELLO_VERSION);
    bfo_put32(b + 4, 0);
    bfo_put32(b + 8, 0);
    bfo_put32(b + 12, 2);
    bfo_put64(b + 16, JOB);
    bfo_put64(b + 24, attempt);
    bfo_put64(b + 32, 0); /* dialed, answer (a hello), 0 */
    bfo_put32(b + 40, 0);
    bfo_put32(b + 44, 0);
    if (write(fd, h, sizeof h) != (ssize_t)sizeof h)
        fail("cannot send a hello (%ld %ld)", 0, 0);
    end = now_ns() + 300000000ull;
    while (now_ns() < end && !closed) {
        struct pollfd pf = { fd, POLLIN, 0 };
        pump();
        if (poll(&pf, 1, 0) == 1)
            closed = read(fd, in, sizeof in) <= 0;
    }
    close(fd);
    return closed;
}

int main(void)
{
    pthread_t th[2];
    uint64_t worst = 0, total = 0;
    static const unsigned skew_us[] = { 0, 30, 1000, 6000 };
    static const unsigned busy_us[] = { 0, 50, 100, 200, 400, 1500 };
    pthread_barrier_init(&bar, NULL, 2);
    for (int i = 0; i < 2; i++) {
        nodes[i].rank = i;
        pthread_create(&th[i], NULL, init_one, &nodes[i]);
    }
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    if (!nodes[0].t || !nodes[1].t)
        fail("bfo_tcp_open failed (%ld %ld)", !nodes[0].t, !nodes[1].t);
    for (int i = 0; i < 2; i++) {
        node *n = &nodes[i];
        bfo_config cfg;
        size_t need;
        memset(&cfg, 0, sizeof cfg);
        cfg.rank = i;
        cfg.nranks = 2;
        cfg.nrails = NR;
        bfo_tcp_backend(n->t, &n->tbe);
        n->be = n->tbe;
        n->be.ctx = n;
        n->be.post_send = b_post_send;
        n->be.connect = b_connect;
        n->be.disconnect = b_disconnect;
        n->be.rail_caps = b_caps;
        n->be.rail_bandwidth = b_bw;
        need = bfo_engine_mem_size(&cfg);
        n->emem = malloc(need);
        if (!n->emem || bfo_engine_init(&n->e, &cfg, &n->be, n->emem, need, now_ns()) != BFO_OK)
            fail("engine init failed at rank %ld (%ld)", i, 0);
        for (int k = 0; k < K; k++) {
            n->sbuf[k] = (uint8_t *)malloc(MSG);
            n->rbuf[k] = (uint8_t *)malloc(MSG);
            if (!n->sbuf[k] || !n->rbuf[k])
                fail("no memory (%ld %ld)", 0, 0);
        }
    }
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < K; k++) {
            post_recv(&nodes[i], k);
            post_send(&nodes[i], k);
        }
    for (int round = 0; round < ROUNDS; round++) {
        uint64_t c0[2], ev0[2][3], cn0[2], t0;
        const int first = round & 1;
        const unsigned skew = skew_us[(round / 2) % 4];
        period_ns[0] = period_ns[1] = 0;
        if (!pump_until(all_up, 30000000ull, 5000000000ull))
            fail("round %ld: the rails are not up (%ld)", round, 0);
        for (int i = 0; i < 2; i++) {
            c0[i] = nodes[i].connects[0];
            memcpy(ev0[i], nodes[i].ev[0], sizeof ev0[i]);
            cn0[i] = bfo_tcp_get_stats(nodes[i].t)->rail[0].connects;
            drop_base[i] = ev0[i][E_RAIL_ERROR];
        }
        period_ns[(round / 2) & 1] = busy_us[(round / 4) % 6] * 1000ull;
        /* both sides drop rail 0: both engines reconnect after the same back-off */
        t0 = now_ns();
        nodes[first].tbe.disconnect(nodes[first].tbe.ctx, 1 - first, 0);
        if (skew) {
            uint64_t until = t0 + skew * 1000ull;
            while (now_ns() < until)
                pump();
        }
        if (up(1 - first, 0)) /* it may have seen the drop already */
            nodes[1 - first].tbe.disconnect(nodes[1 - first].tbe.ctx, first, 0);
        if (!pump_until(both_dropped, 0, 2000000000ull))
            fail("round %ld: the drop of rail 0 not reported on both sides within 2 s (%ld)", round, 0);
        if (!pump_until(all_up, 0, 2000000000ull))
            fail("round %ld: rail 0 not back within 2 s (%ld)", round, 0);
        uint64_t dt = now_ns() - t0;
        pump_until(NULL, 0, 50000000ull); /* what comes late comes now */
        period_ns[0] = period_ns[1] = 0;
        total += dt;
        if (dt > worst)
            worst = dt;
        /* one dial at most on each side, and one at least in all: a side
         * whose back-off had not run out when the other's dial came in (it
         * saw the drop later: busy, or the skew) takes that connection
         * without a connect() of its own, as it should (this failed 1 run
         * in 8 of gcc's, 2 in 8 under ASan, when both had to dial) */
        if (nodes[0].connects[0] == c0[0] && nodes[1].connects[0] == c0[1])
            fail("round %ld: no connect() on either side (%ld)", round, 0);
        for (int i = 0; i < 2; i++) {
            const node *n = &nodes[i];
            long calls = (long)(n->connects[0] - c0[i]);
            long conns = (long)(bfo_tcp_get_stats(n->t)->rail[0].connects - cn0[i]);
            if (calls > 1 || conns != 1)
                fail("round %ld: %ld connect() calls or new connections on one side, not 1",
                     round, calls > 1 ? calls : conns);
            if (n->ev[0][E_CONNECTED] - ev0[i][E_CONNECTED] != 1 ||
                n->ev[0][E_CONNECT_FAILED] != ev0[i][E_CONNECT_FAILED])
                fail("round %ld: CONNECTED %ld times or a CONNECT_FAILED", round,
                     (long)(n->ev[0][E_CONNECTED] - ev0[i][E_CONNECTED]));
            if (n->ev[0][E_RAIL_ERROR] - ev0[i][E_RAIL_ERROR] != 1)
                fail("round %ld: %ld RAIL_ERRORs on one side: a new connection was torn down",
                     round, (long)(n->ev[0][E_RAIL_ERROR] - ev0[i][E_RAIL_ERROR]));
            if (!up(i, 0) || !up(i, 1))
                fail("round %ld: a rail went down again at rank %ld", round, i);
        }
    }
    printf("ok: %d simultaneous reconnects of a rail (either rank busy or not): back within one attempt each, "
           "no connection torn down; rail back after %.1f ms on average, %.1f ms at most; "
           "%llu + %llu messages verified\n",
           ROUNDS, (double)total / ROUNDS / 1e6, (double)worst / 1e6,
           (unsigned long long)nodes[0].received, (unsigned long long)nodes[1].received);
    {
        uint64_t attempt = rank1_taken(); /* not above it: stale */
        uint64_t stale0 = bfo_tcp_get_stats(nodes[1].t)->hellos_stale, err0 = nodes[1].ev[0][E_RAIL_ERROR];
        uint64_t cn = bfo_tcp_get_stats(nodes[1].t)->rail[0].connects;
        int a = stale_hello(attempt - 1), b = stale_hello(attempt);
        pump_until(NULL, 0, 100000000ull);
        if (!a || !b || bfo_tcp_get_stats(nodes[1].t)->hellos_stale - stale0 != 2)
            fail("a stale hello was not refused (%ld %ld)", a, b);
        if (nodes[1].ev[0][E_RAIL_ERROR] != err0 || bfo_tcp_get_stats(nodes[1].t)->rail[0].connects != cn ||
            !all_up())
            fail("a stale hello tore the connection down (%ld %ld)", 0, 0);
        printf("ok: stale hellos (attempts %llu and %llu, with %llu taken) refused, the connection "
               "stays\n",
               (unsigned long long)attempt - 1, (unsigned long long)attempt,
               (unsigned long long)attempt);
    }
    for (int i = 0; i < 2; i++)
        if (nodes[i].bad || nodes[i].received == 0)
            fail("rank %ld received %ld messages", i, (long)nodes[i].received);
    for (int i = 0; i < 2; i++)
        bfo_tcp_fini(nodes[i].t);
    return 0;
}
