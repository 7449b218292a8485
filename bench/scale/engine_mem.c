// SPDX-License-Identifier: BSD-3-Clause
/* bench/scale/engine_mem.c - the engine's memory per rank as pml/bfo sizes
 * it, for jobs of any number of ranks, without starting them.
 *
 *   engine_mem RAILS N...     e.g. engine_mem shm,127.0.0.2 16 64 128 1024
 *
 * bench/scale runs 1,024 ranks in bfo sim (its own pool sizes, what a rank
 * touched measured: run.sh); this is the figure in pml/bfo's configuration,
 * computed: bfo_engine_mem_size, what bfo_net gives bfo_engine_init
 * in one block per rank, with the configuration pml/bfo builds in
 * mca_pml_bfo_init (max_requests 4096, max_unexpected 1024, done queue,
 * sizes from the rails' tuning: bfo_net_rail_tuning).  It is the engine's
 * block only: not the transports' buffers (TCP receive buffers, shm rings)
 * nor what the pools grow later.  One line per N:
 *   engine_mem ranks=N rails=R bytes=B per_peer=P peer=S rail=L per_peer_fixed=F ...
 * per_peer: what one rank more adds to B (bfo_engine_mem_size at N and
 * N + 1): the engine's cost of an idle peer (docs/engine-design.md, "What
 * an idle peer costs"); peer, rail: sizeof(bfo_peer) and of each of its
 * R rails (bfo_rail_link); per_peer_fixed: per_peer for an embedder whose
 * pools do not grow (no bfo_config.grow), which keeps 4 control operations
 * per peer and rail.  Issue 37 took per_peer from 5,128 B (2 rails) to 848. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bfo_net.h"

/* bfo_net gives the engine a grow function (its n_grow) when the caller
 * gives none, as pml/bfo does: the sizes are those of pools that grow. */
static void *as_bfo_net(void *ctx, size_t bytes)
{
    (void)ctx;
    (void)bytes;
    return NULL;
}

/* bfo_engine_mem_size for cfg at nranks ranks. */
static size_t mem_at(bfo_config cfg, int nranks)
{
    cfg.nranks = nranks;
    return bfo_engine_mem_size(&cfg);
}

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
        cfg.grow = as_bfo_net;
        if (cfg.nranks < 2) {
            fprintf(stderr, "engine_mem: %s: at least 2 ranks\n", argv[i]);
            return 2;
        }
        {
            bfo_config eff = cfg; /* the values the engine takes (0: its default) */
            bfo_config_defaults(&eff);
            bfo_config fixed = cfg;
            fixed.grow = NULL;
            printf("engine_mem ranks=%d rails=%d bytes=%zu per_peer=%zu peer=%zu rail=%zu per_peer_fixed=%zu "
                   "eager_limit=%zu frag_size=%zu\n",
                   cfg.nranks, nrails, bfo_engine_mem_size(&cfg), mem_at(cfg, cfg.nranks + 1) - mem_at(cfg, cfg.nranks),
                   sizeof(bfo_peer), sizeof(bfo_rail_link), mem_at(fixed, cfg.nranks + 1) - mem_at(fixed, cfg.nranks),
                   eff.eager_limit, eff.frag_size);
        }
    }
    return 0;
}
