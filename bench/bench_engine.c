/* bench_engine.c - one kind of exchange, repeated, through two engines over
 * the null transport.  Run under callgrind by `make bench-engine`, which
 * takes the difference between two iteration counts (so setup cancels out)
 * and leaves out the instructions spent in memcpy.
 *
 *   bench_engine eager|rndv N      N eager 8-byte or 1 MiB rendezvous
 *                                  send+receive pairs
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bfo_engine.h"
#include "bfo_nullnet.h"

int main(int argc, char **argv)
{
    static bfo_engine e[2];
    static nullnet nn;
    bfo_request s, r;
    int rndv = argc > 1 && !strcmp(argv[1], "rndv");
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
        size_t need = bfo_engine_mem_size(&c);
        nn.eng[i] = &e[i];
        if (bfo_engine_init(&e[i], &c, &nn.be[i], malloc(need), need, nn.now) != BFO_OK)
            return 1;
    }
    while (nn_pump(&nn)) /* connect and probe */
        ;
    for (long i = 0; i < n; i++) {
        bfo_irecv(&e[1], &r, rbuf, size, 0, 0, 1, nn.now);
        bfo_isend(&e[0], &s, sbuf, size, 1, 0, 1, nn.now);
        while (!(bfo_test(&s) && bfo_test(&r)))
            nn_pump(&nn);
        if (s.status != BFO_OK || r.status != BFO_OK)
            return 1;
    }
    printf("%ld %s pairs\n", n, rndv ? "1 MiB rendezvous" : "8-byte eager");
    return 0;
}
