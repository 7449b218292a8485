// SPDX-License-Identifier: BSD-3-Clause
/* tcp_auth.c - what authenticating TCP hellos cost (issue 37): two ranks
 * in this process on a loopback rail, one thread calling both ranks'
 * progress, without a bfo_auth (options.auth NULL: the hellos of before)
 * and with one, the two interleaved round by round in one run:
 *   - connection set-up: from the dialer's connect() to CONNECTED at the
 *     dialer and at the acceptor (a fresh pair of transports each round,
 *     opening them not counted), median and 90th percentile of ROUNDS;
 *   - 8-byte ping-pong once connected: median round trip of PINGS.
 * Usage: tcp_auth [rounds] [pings].  `make bench-tcp-auth` runs it. */
#define _GNU_SOURCE
#include "bfo_auth.h"
#include "bfo_tcp.h"
#include "bfo_tp_os.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define JOB 0xbe7c4ull

typedef struct end {
    bfo_tcp *t;
    bfo_backend be;
    uint64_t up_at;
    unsigned frames, done;
} end;

static end E[2];
static bfo_addr table[2];
static const char *rails[1] = { "127.0.0.1" };

static void s_completion(void *ctx, uint64_t token, int ok) { (void)token, (void)ok, ((end *)ctx)->done++; }
static int s_frame(void *ctx, int peer, int rail, const uint8_t *buf, size_t len, uint64_t now)
{
    (void)peer, (void)rail, (void)buf, (void)len, (void)now;
    ((end *)ctx)->frames++;
    return BFO_OK;
}
static void s_event(void *ctx, int peer, int rail, int ev, uint64_t now)
{
    (void)peer, (void)rail, (void)now;
    if (ev == BFO_EV_CONNECTED || ev == BFO_EV_CONNECTED_PROVEN) /* proven: authenticated */
        ((end *)ctx)->up_at = bfo_tp_now();
}
static void s_heard(void *ctx, int peer, int rail, uint64_t now) { (void)ctx, (void)peer, (void)rail, (void)now; }
static int s_lookup(void *ctx, int peer, int rail, bfo_addr *out)
{
    (void)ctx, (void)rail;
    *out = table[peer];
    return BFO_OK;
}

static void open_two(bfo_auth **auth)
{
    for (int r = 0; r < 2; r++) {
        bfo_sink sink = { &E[r], s_completion, s_frame, s_event, s_heard, s_lookup, NULL, NULL, NULL, NULL };
        bfo_config cfg;
        bfo_tcp_options o;
        bfo_transport_args a;
        memset(&E[r], 0, sizeof E[r]);
        memset(&cfg, 0, sizeof cfg);
        memset(&o, 0, sizeof o);
        cfg.rank = r;
        cfg.nranks = 2;
        cfg.nrails = 1;
        o.connect_timeout_ns = 2000000000ull;
        o.beacon_interval_ns = -1;
        o.log_level = -1;
        o.auth = auth ? auth[r] : NULL;
        memset(&a, 0, sizeof a);
        a.rank = r;
        a.size = 2;
        a.nrails = 1;
        a.rails = rails;
        a.cfg = &cfg;
        a.sink = &sink;
        a.opt = &o;
        if (bfo_tcp_open(&E[r].t, &a) != BFO_OK || bfo_tcp_address(E[r].t, 0, &table[r]) != BFO_OK) {
            fprintf(stderr, "tcp_auth: bfo_tcp_open failed\n");
            exit(1);
        }
        bfo_tcp_backend(E[r].t, &E[r].be);
    }
    for (int r = 0; r < 2; r++)
        bfo_tcp_start(E[r].t, JOB);
}

static void pump(void)
{
    bfo_tcp_progress(E[0].t, 0);
    bfo_tcp_progress(E[1].t, 0);
}

static int cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static double pct(uint64_t *v, int n, int p)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return (double)v[(n - 1) * p / 100] / 1000.0;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 300, pings = argc > 2 ? atoi(argv[2]) : 20000;
    static const uint8_t key[BFO_AUTH_KEY_LEN] = { 1, 2, 3 };
    bfo_auth *auth[2];
    uint8_t pk[2][BFO_AUTH_PUB_LEN];
    uint64_t *dial[2], *acc[2], *rtt[2];
    uint8_t msg[8] = { 1 };
    for (int r = 0; r < 2; r++) {
        if (bfo_auth_init(&auth[r], key, r, 2, JOB) != BFO_OK)
            return 1;
        bfo_auth_public(auth[r], pk[r]);
    }
    bfo_auth_set_peer(auth[0], 1, pk[1]);
    bfo_auth_set_peer(auth[1], 0, pk[0]);
    for (int m = 0; m < 2; m++) {
        dial[m] = calloc((size_t)rounds, sizeof(uint64_t));
        acc[m] = calloc((size_t)rounds, sizeof(uint64_t));
        rtt[m] = calloc((size_t)pings, sizeof(uint64_t));
    }
    for (int i = 0; i < 2 * rounds; i++) {
        int m = i & 1; /* 0: no bfo_auth, 1: authenticated; interleaved */
        uint64_t t0;
        open_two(m ? auth : NULL);
        t0 = bfo_tp_now();
        E[0].be.connect(E[0].be.ctx, 1, 0);
        while (!E[0].up_at || !E[1].up_at)
            pump();
        dial[m][i / 2] = E[0].up_at - t0;
        acc[m][i / 2] = E[1].up_at - t0;
        if (i >= 2 * rounds - 2) { /* the last round of each: ping-pong */
            for (int k = -1000; k < pings; k++) {
                uint64_t p0 = bfo_tp_now();
                bfo_iov iov = { msg, sizeof msg };
                unsigned f1 = E[1].frames, f0 = E[0].frames;
                E[0].be.post_send(E[0].be.ctx, 1, 0, &iov, 1, 1);
                while (E[1].frames == f1)
                    pump();
                E[1].be.post_send(E[1].be.ctx, 0, 0, &iov, 1, 1);
                while (E[0].frames == f0)
                    pump();
                if (k >= 0)
                    rtt[m][k] = bfo_tp_now() - p0;
            }
        }
        bfo_tcp_fini(E[0].t);
        bfo_tcp_fini(E[1].t);
    }
    printf("tcp_auth: loopback, one thread, %d set-ups and %d 8-byte ping-pongs each\n", rounds, pings);
    printf("%-16s %14s %14s %14s %14s %14s\n", "", "dial->UP med", "dial->UP p90", "accept UP med",
           "accept UP p90", "8 B RTT med");
    for (int m = 0; m < 2; m++) {
        double d50 = pct(dial[m], rounds, 50), d90 = pct(dial[m], rounds, 90);
        double a50 = pct(acc[m], rounds, 50), a90 = pct(acc[m], rounds, 90);
        printf("%-16s %11.1f us %11.1f us %11.1f us %11.1f us %11.2f us\n", m ? "authenticated" : "no bfo_auth", d50,
               d90, a50, a90, pct(rtt[m], pings, 50));
    }
    for (int r = 0; r < 2; r++)
        bfo_auth_free(auth[r]);
    return 0;
}
