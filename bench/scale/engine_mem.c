// SPDX-License-Identifier: BSD-3-Clause
/* bench/scale/engine_mem.c - the engine's memory per rank as pml/bfo sizes
 * it, for jobs of any number of ranks, without starting them.
 *
 *   engine_mem RAILS N...     e.g. engine_mem shm,127.0.0.2 16 64 128 1024
 *
 * `bfo sim` runs at most 8 ranks (SN_MAX_RANKS), so the 1,024-rank figure
 * of bench/scale is bfo_engine_mem_size: what bfo_net gives bfo_engine_init
 * in one block per rank, with the configuration pml/bfo builds in
 * mca_pml_bfo_init (max_requests 4096, max_unexpected 1024, done queue,
 * sizes from the rails' tuning: bfo_net_rail_tuning).  It is the engine's
 * block only: not the transports' buffers (TCP receive buffers, shm rings)
 * nor what the pools grow later.  One line per N:
 *   engine_mem ranks=N rails=R bytes=B per_peer=P
 * per_peer: sizeof(bfo_peer), the part that grows with N. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bfo_net.h"

int main(int argc, char **argv)
{
    bfo_net_tuning tun;
    int nrails;
    if (argc < 3) {
        fprintf(stderr, "usage: engine_mem RAILS N...\n");
        return 2;
    }
    nrails = bfo_net_rail_tuning(argv[1], &tun);
    if (nrails < 1) {
        fprintf(stderr, "engine_mem: rails \"%s\": no transport of this build takes them\n", argv[1]);
        return 2;
    }
    for (int i = 2; i < argc; i++) {
        bfo_config cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.rank = 0;
        cfg.nranks = atoi(argv[i]);
        cfg.nrails = nrails;
        /* as mca_pml_bfo_init, its MCA parameters at their defaults */
        cfg.done_queue = 1;
        cfg.max_requests = 4096;
        cfg.max_unexpected = 1024;
        cfg.eager_limit = tun.eager_limit;
        cfg.frag_size = tun.frag_size;
        cfg.rdma_min = tun.rdma_min;
        cfg.rdma_frag_size = tun.rdma_frag_size;
        if (cfg.nranks < 2) {
            fprintf(stderr, "engine_mem: %s: at least 2 ranks\n", argv[i]);
            return 2;
        }
        {
            bfo_config eff = cfg; /* the values the engine takes (0: its default) */
            bfo_config_defaults(&eff);
            printf("engine_mem ranks=%d rails=%d bytes=%zu per_peer=%zu eager_limit=%zu frag_size=%zu\n",
                   cfg.nranks, nrails, bfo_engine_mem_size(&cfg), sizeof(bfo_peer), eff.eager_limit, eff.frag_size);
        }
    }
    return 0;
}
