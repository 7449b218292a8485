// SPDX-License-Identifier: BSD-3-Clause
/* exchange.h - what both example programs run on mini_mpi: one round has
 * every rank send its partner (rank ^ 1) one message of each size in
 * XCHG_SIZES (eager, at the eager limit, just past it, rendezvous up to
 * 1 MiB), all at once, plus one caught by an MM_ANY_SOURCE/MM_ANY_TAG
 * receive posted last and one sent into a receive too small
 * (MM_ERR_TRUNCATE), and three strided vectors (mm_isend_vector,
 * mm_irecv_vector): 2000 blocks of 48 bytes into a plain buffer (packed in
 * place, rendezvous), 12 blocks of 4 KiB into 12 at another stride
 * (iovecs: over TCP written straight from the blocks),
 * and 30 blocks of 16 bytes into 60 of 8 (both described, eager).  Every
 * byte is checked: byte k of message i of round r from rank s is a function
 * of (s, r, i, k); the bytes between a receive vector's blocks stay as they
 * were.
 *
 * Posting and waiting are apart so that one process can drive both ranks
 * (loopback.c): post for each, then wait for each.
 */
#ifndef EXCHANGE_H
#define EXCHANGE_H

#include <stdio.h>

#include "mini_mpi.h"

#define XCHG_SIZES {0, 1, 100, 4096, 4097, 65536, 300000, 1048583}
#define XCHG_NSIZES 8
#define XCHG_TAG_ANY 100   /* received with MM_ANY_SOURCE, MM_ANY_TAG */
#define XCHG_TAG_TRUNC 101 /* 5000 bytes into a 1000-byte buffer */
#define XCHG_TAG_VEC 102  /* the vectors: 102, 103, 104 */
#define XCHG_NVEC 3
#define XCHG_NMSG (XCHG_NSIZES + 2 + XCHG_NVEC)

typedef struct xchg {
    mm_comm *c;
    int round, peer;
    unsigned char *sbuf[XCHG_NMSG], *rbuf[XCHG_NMSG];
    mm_request sreq[XCHG_NMSG], rreq[XCHG_NMSG];
    /* totals over the rounds */
    unsigned long messages, bytes, bad;
} xchg;

int xchg_init(xchg *x, mm_comm *c); /* rank 0 and 1 of an even size: 0 */
int xchg_post(xchg *x, int round);
/* Waits for the round and checks it; returns the number of failures
 * (each said on f). */
int xchg_finish(xchg *x, FILE *f);
void xchg_fini(xchg *x);

#endif /* EXCHANGE_H */
