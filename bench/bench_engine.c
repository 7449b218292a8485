/* bench_engine.c - one kind of exchange, repeated, through two engines over
 * the null transport.  Run under callgrind by `make bench-engine`, which
 * takes the difference between two iteration counts (so setup cancels out)
 * and leaves out the instructions spent in memcpy.
 *
 *   bench_engine eager|rndv N      N eager 8-byte or 1 MiB rendezvous
 *                                  send+receive pairs
 *   bench_engine crowd N           N eager pairs while 100,000 other receives
 *                                  wait, posted over 1,000 contexts (bins:
 *                                  they cost the pairs nothing)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bfo_engine.h"
#include "bfo_nullnet.h"

static void *bench_grow(void *ctx, size_t bytes)
{
    (void)ctx;
    return aligned_alloc(16, (bytes + 15) & ~(size_t)15);
}

int main(int argc, char **argv)
{
    static bfo_engine e[2];
    static nullnet nn;
    bfo_request s, r;
    int rndv = argc > 1 && !strcmp(argv[1], "rndv");
    int crowd = argc > 1 && !strcmp(argv[1], "crowd");
    long n = argc > 2 ? atol(argv[2]) : 1000;
    size_t size = rndv ? (size_t)1 << 20 : 8;
    uint8_t *sbuf = (uint8_t *)calloc(1, size), *rbuf = (uint8_t *)calloc(1, size);
    void *ring = malloc(nn_mem_size(64, 65536 + 128));

    nn_init(&nn, 1, 64, 65536 + 128, ring);
    for (int i = 0; i < 2; i++) {
        bfo_config c;
        memset(&c, 0, sizeof c);
        c.rank = i;
        c.nranks = 2;
        c.nrails = 1;
        c.grow = crowd ? bench_grow : NULL;
        size_t need = bfo_engine_mem_size(&c);
        nn.eng[i] = &e[i];
        if (bfo_engine_init(&e[i], &c, &nn.be[i], malloc(need), need, nn.now) != BFO_OK)
            return 1;
    }
    while (nn_pump(&nn)) /* connect and probe */
        ;
    if (crowd) { /* receives that wait, in other contexts */
        static bfo_request waiting[100000];
        static uint8_t sink[8];
        for (int i = 0; i < 100000; i++)
            if (bfo_irecv(&e[1], &waiting[i], sink, sizeof sink, 0, 1 + (uint32_t)(i % 1000), i,
                          nn.now) != BFO_OK)
                return 1;
    }
    for (long i = 0; i < n; i++) {
        bfo_irecv(&e[1], &r, rbuf, size, 0, 0, 1, nn.now);
        bfo_isend(&e[0], &s, sbuf, size, 1, 0, 1, nn.now);
        while (!(bfo_test(&s) && bfo_test(&r)))
            nn_pump(&nn);
        if (s.status != BFO_OK || r.status != BFO_OK)
            return 1;
    }
    printf("%ld %s pairs\n", n, rndv ? "1 MiB rendezvous" : crowd ? "crowded 8-byte eager" : "8-byte eager");
    return 0;
}
