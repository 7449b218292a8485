// SPDX-License-Identifier: BSD-3-Clause
/* bfo_relaybench.c - `bfo relay-bench`: what a relay costs, against the
 * direct rails, measured in one run (bench/relay.sh).
 *
 *   bfo relay-bench [--duration SEC] [--size S] [--iters N] [--msgs N]
 *
 *   Three ranks (BFO_RANK 0, 1, 2), relay on (BFO_RELAY=1, or it says so and
 *   ends).  Ranks 0 and 1 measure in batches, one after the other, for SEC
 *   seconds (default 12): N ping-pongs of 8 bytes (default 200; the half
 *   round trip is a batch's median), then a stream of N 1 MiB messages
 *   (--size; default 32 messages, 8 in flight; MB/s from the first send to
 *   rank 1's answer that it has them all).  Rank 2 only relays.  Something
 *   outside (bench/relay.sh: nftables) cuts ranks 0 and 1 apart and joins
 *   them again, over and over, so that batches run alternately over the
 *   direct rails and through rank 2.  A batch counts as direct when rank 0's
 *   peer 1 was REACHABLE at its start and at its end, as relayed when it
 *   was RELAYED at both, and the engine's route and rail counters did not
 *   move meanwhile; the others (a switch in between) are thrown away.
 *   Rank 0 prints the medians of each kind and their ratios:
 *     relay-bench: 8 B half round trip: direct 41.2 us (12 batches), relayed
 *     88.0 us (11 batches): 2.14x; 1 MiB stream: direct 1510 MB/s (12),
 *     relayed 650 MB/s (10): 0.43x
 *   Exit status 0 when both kinds were measured at least 3 times each, else
 *   1 (the cut never took, or never came undone).
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bfo_net.h"

#define RB_CTX 77
#define RB_PING 1
#define RB_DATA 2
#define RB_DONE 3
#define RB_END 4
#define RB_MAXB 4096 /* batches kept of each kind */

typedef struct rb {
    bfo_net *net;
    bfo_engine *e;
    int rank;
} rb;

static void rb_wait(rb *b, bfo_request *r)
{
    while (!bfo_test(r))
        bfo_net_progress(b->net, 0);
}

static int rb_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double rb_median(double *v, int n)
{
    if (!n)
        return 0;
    qsort(v, (size_t)n, sizeof *v, rb_cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* What rank 0's view of rank 1 is: 1 direct, 2 relayed, 0 neither; and a
 * counter of everything that changes it. */
static int rb_kind(rb *b)
{
    int st = bfo_peer_state(b->e, 1);
    return st == BFO_PEER_ST_REACHABLE ? 1 : st == BFO_PEER_ST_RELAYED ? 2 : 0;
}
static uint64_t rb_moves(rb *b)
{
    const bfo_stats *s = &b->e->stats;
    return s->routes_found + s->routes_lost + s->mapouts + s->readmissions;
}

/* Rank 1: answers pings, takes streams, until rank 0 says it is over. */
static int rb_serve(rb *b, size_t size)
{
    char *buf = malloc(size);
    int got = 0;
    if (!buf)
        return 1;
    for (;;) {
        bfo_request r, s;
        bfo_irecv(b->e, &r, buf, size, 0, RB_CTX, BFO_ANY_TAG, bfo_net_now());
        rb_wait(b, &r);
        if (r.status != BFO_OK) {
            fprintf(stderr, "bfo relay-bench[1]: a receive ended %s\n", bfo_errname(r.status));
            free(buf);
            return 1;
        }
        if (r.tag == RB_END)
            break;
        if (r.tag == RB_PING) {
            bfo_isend(b->e, &s, buf, r.length, 0, RB_CTX, RB_PING, bfo_net_now());
            rb_wait(b, &s);
        } else if (r.tag == RB_DATA) {
            got++;
        } else if (r.tag == RB_DONE) { /* how many it should have had: the answer */
            int want;
            memcpy(&want, buf, sizeof want);
            if (want != got)
                fprintf(stderr, "bfo relay-bench[1]: %d of %d messages\n", got, want);
            bfo_isend(b->e, &s, &got, sizeof got, 0, RB_CTX, RB_DONE, bfo_net_now());
            rb_wait(b, &s);
            got = 0;
        }
    }
    free(buf);
    return 0;
}

int bfo_cmd_relay_bench(int argc, char **argv)
{
    rb b;
    bfo_config cfg;
    double secs = 12;
    size_t size = 1u << 20;
    int iters = 200, msgs = 32, rc;
    static double lat[3][RB_MAXB], bw[3][RB_MAXB];
    int nlat[3] = { 0, 0, 0 }, nbw[3] = { 0, 0, 0 }, thrown = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--duration"))
            secs = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--size"))
            size = (size_t)strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--iters"))
            iters = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--msgs"))
            msgs = atoi(argv[i + 1]);
        else {
            fprintf(stderr, "usage: bfo relay-bench [--duration SEC] [--size BYTES] [--iters N] [--msgs N]\n");
            return 2;
        }
    }
    if (secs <= 0 || size < 8 || iters < 1 || msgs < 1 || msgs > 100000) {
        fprintf(stderr, "bfo relay-bench: bad option\n");
        return 2;
    }
    memset(&cfg, 0, sizeof cfg);
    rc = bfo_net_init(&b.net, &cfg, NULL);
    if (rc != BFO_OK) {
        fprintf(stderr, "bfo relay-bench: bfo_net_init: %s\n", bfo_net_errname(rc));
        return 1;
    }
    b.e = bfo_net_engine(b.net);
    b.rank = bfo_net_rank(b.net);
    if (bfo_net_size(b.net) != 3 || !b.e->cfg.relay) {
        fprintf(stderr, "bfo relay-bench: three ranks, relay on (BFO_RELAY=1)\n");
        bfo_net_fini(b.net);
        return 1;
    }
    rc = 0;
    if (b.rank == 1) {
        rc = rb_serve(&b, size);
    } else if (b.rank == 2) { /* it relays, until rank 0 says it is over: asleep between
                                * frames (three ranks spinning on two cores would take
                                * turns at the scheduler's pace, milliseconds) */
        bfo_request r;
        int x;
        bfo_irecv(b.e, &r, &x, sizeof x, 0, RB_CTX, RB_END, bfo_net_now());
        while (!bfo_test(&r))
            bfo_net_progress(b.net, 1);
    } else {
        char *buf = malloc(size);
        bfo_request *w = calloc((size_t)msgs, sizeof *w);
        const uint64_t t_end = bfo_net_now() + (uint64_t)(secs * 1e9);
        if (!buf || !w)
            return 1;
        memset(buf, 0x5a, size);
        while (bfo_net_now() < t_end) {
            /* latency: a batch of ping-pongs, its median */
            static double one[100000];
            int k0 = rb_kind(&b);
            uint64_t m0 = rb_moves(&b);
            for (int i = 0; i < iters && i < 100000; i++) {
                bfo_request s, r;
                uint64_t t = bfo_net_now();
                bfo_irecv(b.e, &r, buf, 8, 1, RB_CTX, RB_PING, t);
                bfo_isend(b.e, &s, buf, 8, 1, RB_CTX, RB_PING, t);
                rb_wait(&b, &s);
                rb_wait(&b, &r);
                one[i] = (double)(bfo_net_now() - t) / 2e3;
                if (s.status != BFO_OK || r.status != BFO_OK) {
                    fprintf(stderr, "bfo relay-bench[0]: a ping ended %s\n",
                            bfo_errname(s.status != BFO_OK ? s.status : r.status));
                    return 1;
                }
            }
            if (k0 && rb_kind(&b) == k0 && rb_moves(&b) == m0 && nlat[k0] < RB_MAXB)
                lat[k0][nlat[k0]++] = rb_median(one, iters < 100000 ? iters : 100000);
            else
                thrown++;
            /* bandwidth: a stream, until rank 1 says it has it all */
            k0 = rb_kind(&b);
            m0 = rb_moves(&b);
            uint64_t t = bfo_net_now();
            int sent = 0, done = 0, got = 0;
            bfo_request a;
            while (done < msgs) {
                while (sent < msgs && sent - done < 8) {
                    bfo_isend(b.e, &w[sent], buf, size, 1, RB_CTX, RB_DATA, bfo_net_now());
                    sent++;
                }
                rb_wait(&b, &w[done]);
                if (w[done].status != BFO_OK) {
                    fprintf(stderr, "bfo relay-bench[0]: a send ended %s\n", bfo_errname(w[done].status));
                    return 1;
                }
                done++;
            }
            bfo_irecv(b.e, &a, &got, sizeof got, 1, RB_CTX, RB_DONE, bfo_net_now());
            bfo_isend(b.e, &w[0], &msgs, sizeof msgs, 1, RB_CTX, RB_DONE, bfo_net_now());
            rb_wait(&b, &w[0]);
            rb_wait(&b, &a);
            if (got != msgs) {
                fprintf(stderr, "bfo relay-bench[0]: rank 1 had %d of %d messages\n", got, msgs);
                return 1;
            }
            double mbps = (double)size * msgs / ((double)(bfo_net_now() - t) / 1e9) / 1e6;
            if (k0 && rb_kind(&b) == k0 && rb_moves(&b) == m0 && nbw[k0] < RB_MAXB)
                bw[k0][nbw[k0]++] = mbps;
            else
                thrown++;
        }
        for (int p = 1; p < 3; p++) { /* the end */
            bfo_request s;
            int x = 0;
            bfo_isend(b.e, &s, &x, sizeof x, p, RB_CTX, RB_END, bfo_net_now());
            rb_wait(&b, &s);
        }
        {
            const int nl1 = nlat[1], nl2 = nlat[2], nb1 = nbw[1], nb2 = nbw[2];
            const double l1 = rb_median(lat[1], nl1), l2 = rb_median(lat[2], nl2);
            const double b1 = rb_median(bw[1], nb1), b2 = rb_median(bw[2], nb2);
            printf("relay-bench: 8 B half round trip: direct %.1f us (%d batches), relayed %.1f us (%d "
                   "batches): %.2fx; %zu B stream: direct %.0f MB/s (%d), relayed %.0f MB/s (%d): %.2fx; "
                   "batches thrown away (a switch in between) %d; frames relayed %" PRIu64 "\n",
                   l1, nl1, l2, nl2, l1 > 0 ? l2 / l1 : 0, size, b1, nb1, b2, nb2, b1 > 0 ? b2 / b1 : 0,
                   thrown, b.e->stats.relayed_frames);
            rc = nl1 >= 3 && nl2 >= 3 && nb1 >= 3 && nb2 >= 3 ? 0 : 1;
        }
        free(buf);
        free(w);
    }
    bfo_net_leave(b.net, 2000);
    bfo_net_fini(b.net);
    return rc;
}
