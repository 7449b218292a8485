// SPDX-License-Identifier: BSD-3-Clause
/* tcp_ranks.c - mini_mpi between real processes over bfo_net.
 *
 *   bfo run -n 2 --rails 127.0.0.1,127.0.0.2 -- ./mini_mpi [ROUNDS]
 *
 * Rank, size and the wire-up come from what `bfo run` sets (BFO_RANK,
 * BFO_SIZE, BFO_BOOTSTRAP, BFO_RAILS; bfo's docs/running.md), or from PMIx
 * under mpirun.  The rails may be of any transport bfo_net has (TCP,
 * shared memory, verbs).  Ranks pair up (0 with 1, 2 with 3, ...) and run
 * ROUNDS (default 3) rounds of exchange.h.  Exit 0 only when every message
 * arrived with the right bytes and status.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bfo_net.h"
#include "exchange.h"

static int net_progress(void *ctx, int timeout_ms)
{
    return bfo_net_progress((bfo_net *)ctx, timeout_ms);
}

static uint64_t net_now(void *ctx)
{
    (void)ctx;
    return bfo_net_now();
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 3, fails = 0, rc;
    bfo_config cfg;
    bfo_net *n;
    mm_comm *c;
    xchg x;

    memset(&cfg, 0, sizeof cfg); /* the engine's defaults; rank, size, rails from bfo run */
    rc = bfo_net_init(&n, &cfg, NULL);
    if (rc != BFO_OK) {
        fprintf(stderr, "mini_mpi: bfo_net_init: %s (run me under bfo run -n 2)\n", bfo_net_errname(rc));
        return 1;
    }
    mm_transport tr = {bfo_net_engine(n), bfo_net_rank(n), bfo_net_size(n), net_progress, net_now, n};
    if (mm_comm_create(&c, &tr, 0, 64) != MM_SUCCESS || xchg_init(&x, c) != 0) {
        fprintf(stderr, "mini_mpi[%d]: needs an even number of ranks, and memory\n", tr.rank);
        return 1;
    }
    for (int r = 0; r < rounds; r++) {
        rc = xchg_post(&x, r);
        if (rc != MM_SUCCESS) {
            fprintf(stderr, "mini_mpi[%d]: round %d: posting: %s\n", tr.rank, r, mm_error_string(rc));
            return 1;
        }
        fails += xchg_finish(&x, stderr);
    }
    const bfo_net_stats *st = bfo_net_get_stats(n);
    printf("mini_mpi[%d]: %lu messages, %lu bytes from rank %d %s over %d rails (bytes sent:",
           tr.rank, x.messages, x.bytes, x.peer, fails ? "NOT all right" : "verified", bfo_net_nrails(n));
    for (int r = 0; r < bfo_net_nrails(n); r++)
        printf(" %s %llu", bfo_net_rail_transport(n, r), (unsigned long long)st->rail[r].bytes_tx);
    printf(")\n");
    xchg_fini(&x);
    mm_comm_free(c);
    bfo_net_fini(n);
    return fails ? 1 : 0;
}
