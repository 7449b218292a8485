// SPDX-License-Identifier: BSD-3-Clause
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
 *   bench_engine eager-iov|rndv-iov N   the same messages described
 *                                  (bfo_isend_data, bfo_irecv_data): 8 bytes
 *                                  in two segments, 1 MiB in 16; the null
 *                                  transport has no post_send_data, so
 *                                  the engine stages what spans segments
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
    int rndv = argc > 1 && !strncmp(argv[1], "rndv", 4);
    int iov = argc > 1 && strstr(argv[1], "-iov") != NULL;
    int crowd = argc > 1 && !strcmp(argv[1], "crowd");
    long n = argc > 2 ? atol(argv[2]) : 1000;
    size_t size = rndv ? (size_t)1 << 20 : 8;
    uint8_t *sbuf = (uint8_t *)calloc(1, size), *rbuf = (uint8_t *)calloc(1, size);
    void *ring = malloc(nn_mem_size(64, 65536 + 128));

    nn_init(&nn, 1, 64, 65536 + 128, ring);
    for (int i = 0; i < 2; i++) {
        bfo_config c = nn_config(&nn, i);
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
    for (size_t k = 0; k < size; k++)
        sbuf[k] = (uint8_t)(k * 7 + 1);
    bfo_data_seg ss[16], rs[16];
    bfo_data sd, rd;
    int nseg = rndv ? 16 : 2;
    memset(&sd, 0, sizeof sd);
    sd.kind = BFO_DATA_IOV;
    sd.len = size;
    sd.nsegs = nseg;
    sd.segs = ss;
    rd = sd;
    rd.segs = rs;
    for (int k = 0; k < nseg; k++) {
        ss[k].base = sbuf + k * (size / (size_t)nseg);
        rs[k].base = rbuf + k * (size / (size_t)nseg);
        ss[k].len = rs[k].len = size / (size_t)nseg;
    }
    for (long i = 0; i < n && iov; i++) {
        bfo_irecv_data(&e[1], &r, &rd, 0, 0, 1, nn.now);
        bfo_isend_data(&e[0], &s, &sd, 1, 0, 1, nn.now);
        while (!(bfo_test(&s) && bfo_test(&r)))
            nn_pump(&nn);
        if (s.status != BFO_OK || r.status != BFO_OK)
            return 1;
    }
    if (iov && memcmp(sbuf, rbuf, size)) /* once: memcmp is not left out of the count */
        return 1;
    for (long i = 0; i < n && !iov; i++) {
        bfo_irecv(&e[1], &r, rbuf, size, 0, 0, 1, nn.now);
        bfo_isend(&e[0], &s, sbuf, size, 1, 0, 1, nn.now);
        while (!(bfo_test(&s) && bfo_test(&r)))
            nn_pump(&nn);
        if (s.status != BFO_OK || r.status != BFO_OK)
            return 1;
    }
    printf("%ld %s pairs%s\n", n, rndv ? "1 MiB rendezvous" : crowd ? "crowded 8-byte eager" : "8-byte eager",
           iov ? ", described" : "");
    return 0;
}
