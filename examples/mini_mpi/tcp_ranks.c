/* tcp_ranks.c - mini_mpi between real processes over bfo's TCP backend.
 *
 *   bfo run -n 2 --rails 127.0.0.1,127.0.0.2 -- ./mini_mpi [ROUNDS]
 *
 * Rank, size and the wire-up come from what `bfo run` sets (BFO_RANK,
 * BFO_SIZE, BFO_BOOTSTRAP, BFO_RAILS; bfo's docs/running.md), or from PMIx
 * under mpirun.  Ranks pair up (0 with 1, 2 with 3, ...) and run
 * ROUNDS (default 3) rounds of exchange.h.  Exit 0 only when every message
 * arrived with the right bytes and status.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bfo_tcp.h"
#include "exchange.h"

static int tcp_progress(void *ctx, int timeout_ms)
{
    return bfo_tcp_progress((bfo_tcp *)ctx, timeout_ms);
}

static uint64_t tcp_now(void *ctx)
{
    (void)ctx;
    return bfo_tcp_now();
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 3, fails = 0, rc;
    bfo_config cfg;
    bfo_tcp *t;
    mm_comm *c;
    xchg x;

    memset(&cfg, 0, sizeof cfg); /* the engine's defaults; rank, size, rails from bfo run */
    rc = bfo_tcp_init(&t, &cfg, NULL);
    if (rc != BFO_OK) {
        fprintf(stderr, "mini_mpi: bfo_tcp_init: %s (run me under bfo run -n 2)\n", bfo_tcp_errname(rc));
        return 1;
    }
    mm_transport tr = {bfo_tcp_engine(t), bfo_tcp_rank(t), bfo_tcp_size(t), tcp_progress, tcp_now, t};
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
    const bfo_tcp_stats *st = bfo_tcp_get_stats(t);
    printf("mini_mpi[%d]: %lu messages, %lu bytes from rank %d %s over %d TCP rails (bytes sent:",
           tr.rank, x.messages, x.bytes, x.peer, fails ? "NOT all right" : "verified", bfo_tcp_nrails(t));
    for (int r = 0; r < bfo_tcp_nrails(t); r++)
        printf(" %llu", (unsigned long long)st->rail[r].bytes_tx);
    printf(")\n");
    xchg_fini(&x);
    mm_comm_free(c);
    bfo_tcp_fini(t);
    return fails ? 1 : 0;
}
