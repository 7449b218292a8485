// SPDX-License-Identifier: BSD-3-Clause
/* threads.c - callers on several threads at once on one engine (what
 * MPI_THREAD_MULTIPLE needs), for `make check-tsan`: run by `bfo run -n 2`
 * over loopback rails, built with -fsanitize=thread.
 *
 *   threads [--threads T] [--count N] [--progress-thread]
 *
 * Each rank opens one bfo_net with thread_safe on (bfo_net.h, THREADS) and
 * starts T threads (default 4).  Thread t exchanges N messages (default
 * 300) with the other rank, tags t * 1000000 + i, sizes cycling through
 * eager and rendezvous, up to 4 of each direction in flight; it posts with
 * bfo_net_isend / bfo_net_irecv, polls bfo_net_test and drives
 * bfo_net_progress itself, so every thread is inside bfo_net at some time,
 * all at once.  Every byte is checked.  With --progress-thread, bfo_net's
 * progress thread runs as well.  Prints one line per rank; exit 0 only when
 * every message of every thread arrived with the right bytes.
 */
#define _GNU_SOURCE
#include "bfo_net.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WIN 4
#define MAXLEN (200 * 1024)

static bfo_net *net;
static int rank, peer, count = 300;
static atomic_int bad;
static const size_t sizes[] = { 8, 1000, 4096, 5000, 65536, 200000 };
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))

static uint8_t byte_of(int src, int tag, size_t k) { return (uint8_t)(src * 131 + tag * 7 + k * 13 + (k >> 8)); }

typedef struct slot {
    bfo_request req;
    uint8_t *buf;
    int active, idx;
} slot;

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg, sent = 0, rcvd = 0, sdone = 0, rdone = 0;
    slot s[WIN], r[WIN];
    for (int w = 0; w < WIN; w++) {
        s[w].buf = malloc(MAXLEN);
        r[w].buf = malloc(MAXLEN);
        s[w].active = r[w].active = 0;
        if (!s[w].buf || !r[w].buf) {
            atomic_fetch_add(&bad, 1);
            return NULL;
        }
    }
    uint64_t deadline = bfo_net_now() + 90000000000ull;
    while (sdone < count || rdone < count) {
        for (int w = 0; w < WIN; w++) {
            if (s[w].active && bfo_net_test(net, &s[w].req)) {
                s[w].active = 0;
                sdone++;
                if (s[w].req.status != BFO_OK) {
                    fprintf(stderr, "threads[%d]: thread %d: send %d: %s\n", rank, t, s[w].idx,
                            bfo_errname(s[w].req.status));
                    atomic_fetch_add(&bad, 1);
                }
            }
            if (!s[w].active && sent < count) {
                int i = sent++, tag = t * 1000000 + i;
                size_t len = sizes[i % NSIZES];
                for (size_t k = 0; k < len; k++)
                    s[w].buf[k] = byte_of(rank, tag, k);
                s[w].idx = i;
                if (bfo_net_isend(net, &s[w].req, s[w].buf, len, peer, 0, tag) != BFO_OK) {
                    atomic_fetch_add(&bad, 1);
                    sdone++;
                } else {
                    s[w].active = 1;
                }
            }
            if (r[w].active && bfo_net_test(net, &r[w].req)) {
                int i = r[w].idx, tag = t * 1000000 + i;
                size_t len = sizes[i % NSIZES];
                r[w].active = 0;
                rdone++;
                if (r[w].req.status != BFO_OK || r[w].req.length != len || r[w].req.tag != tag) {
                    fprintf(stderr, "threads[%d]: thread %d: receive %d: %s, %zu bytes\n", rank, t, i,
                            bfo_errname(r[w].req.status), r[w].req.length);
                    atomic_fetch_add(&bad, 1);
                } else {
                    for (size_t k = 0; k < len; k++)
                        if (r[w].buf[k] != byte_of(peer, tag, k)) {
                            fprintf(stderr, "threads[%d]: thread %d: message %d corrupt at %zu\n", rank, t, i, k);
                            atomic_fetch_add(&bad, 1);
                            break;
                        }
                }
            }
            if (!r[w].active && rcvd < count) {
                int i = rcvd++;
                r[w].idx = i;
                if (bfo_net_irecv(net, &r[w].req, r[w].buf, MAXLEN, peer, 0, t * 1000000 + i) != BFO_OK) {
                    atomic_fetch_add(&bad, 1);
                    rdone++;
                } else {
                    r[w].active = 1;
                }
            }
        }
        bfo_net_progress(net, 0);
        if (bfo_net_now() > deadline) {
            fprintf(stderr, "threads[%d]: thread %d: timed out (%d/%d sent, %d/%d received)\n", rank, t, sdone,
                    count, rdone, count);
            atomic_fetch_add(&bad, 1);
            break;
        }
    }
    for (int w = 0; w < WIN; w++) { /* only finished requests' buffers go back */
        if (!s[w].active)
            free(s[w].buf);
        if (!r[w].active)
            free(r[w].buf);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    bfo_config cfg;
    bfo_net_options opt;
    int nthreads = 4, rc;
    pthread_t th[64];
    memset(&cfg, 0, sizeof cfg);
    memset(&opt, 0, sizeof opt);
    opt.thread_safe = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            nthreads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--count") && i + 1 < argc)
            count = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--progress-thread"))
            opt.progress_thread = 1;
        else {
            fprintf(stderr, "usage: threads [--threads T] [--count N] [--progress-thread]\n");
            return 2;
        }
    }
    if (nthreads < 1 || nthreads > 64 || count < 1 || count > 1000000)
        return 2;
    rc = bfo_net_init(&net, &cfg, &opt);
    if (rc != BFO_OK) {
        fprintf(stderr, "threads: init: %s\n", bfo_net_errname(rc));
        return 1;
    }
    rank = bfo_net_rank(net);
    if (bfo_net_size(net) != 2) {
        fprintf(stderr, "threads: run it with two ranks\n");
        return 2;
    }
    peer = 1 - rank;
    for (int t = 0; t < nthreads; t++)
        if (pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t) != 0)
            return 1;
    for (int t = 0; t < nthreads; t++)
        pthread_join(th[t], NULL);
    /* the end: one message each way on another context, so that neither
     * rank closes its connections while the other still needs them */
    {
        uint64_t one = 1, in = 0, deadline = bfo_net_now() + 30000000000ull;
        bfo_request s, r;
        bfo_net_isend(net, &s, &one, sizeof one, peer, 1, 0);
        bfo_net_irecv(net, &r, &in, sizeof in, peer, 1, 0);
        while (!(bfo_net_test(net, &s) && bfo_net_test(net, &r)) && bfo_net_now() < deadline)
            bfo_net_progress(net, 1);
        if (!bfo_net_test(net, &s) || !bfo_net_test(net, &r) || s.status != BFO_OK || r.status != BFO_OK) {
            fprintf(stderr, "threads[%d]: the end exchange failed\n", rank);
            atomic_fetch_add(&bad, 1);
        }
        for (uint64_t end = bfo_net_now() + 20000000ull; bfo_net_now() < end;)
            bfo_net_progress(net, 1);
    }
    uint64_t mapouts = bfo_net_engine(net)->stats.mapouts;
    bfo_net_fini(net);
    printf("threads: rank %d: %d threads, %d messages each way per thread, every byte checked%s; %s "
           "(map-outs %llu)\n", rank, nthreads, count, opt.progress_thread ? ", progress thread on" : "",
           atomic_load(&bad) ? "FAILED" : "ok", (unsigned long long)mapouts);
    return atomic_load(&bad) ? 1 : 0;
}
