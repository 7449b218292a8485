// SPDX-License-Identifier: BSD-3-Clause
/* exchange.c - the messages both example programs exchange (exchange.h). */
#include "exchange.h"

#include <stdlib.h>
#include <string.h>

static const size_t sizes[XCHG_NSIZES] = XCHG_SIZES;

/* The vectors: message XCHG_NSIZES + 2 + j is sent as svec[j] and received
 * as rvec[j] (blocklen 0: a plain buffer of the other side's bytes). */
#define VEC0 (XCHG_NSIZES + 2)
static const mm_vector svec[XCHG_NVEC] = { { 2000, 48, 80 }, { 12, 4096, 4500 }, { 30, 16, 24 } };
static const mm_vector rvec[XCHG_NVEC] = { { 0, 0, 0 }, { 12, 4096, 5000 }, { 60, 8, 20 } };

static size_t vec_bytes(const mm_vector *v) { return v->count * v->blocklen; }
static size_t vec_extent(const mm_vector *v)
{
    return v->count ? (v->count - 1) * v->stride + v->blocklen : 0;
}
/* where byte k of the message lies in the buffer of message i, sent or received */
static const mm_vector *vec_of(int i, int recv)
{
    const mm_vector *v = i >= VEC0 ? (recv ? &rvec[i - VEC0] : &svec[i - VEC0]) : NULL;
    return v && v->blocklen ? v : NULL;
}
static size_t at(int i, int recv, size_t k)
{
    const mm_vector *v = vec_of(i, recv);
    return v ? (k / v->blocklen) * v->stride + k % v->blocklen : k;
}

static size_t send_len(int i)
{
    if (i >= VEC0)
        return svec[i - VEC0].blocklen ? vec_bytes(&svec[i - VEC0]) : vec_bytes(&rvec[i - VEC0]);
    return i < XCHG_NSIZES ? sizes[i] : i == XCHG_NSIZES ? 2000 : 5000;
}

static size_t recv_cap(int i)
{
    return i == XCHG_NSIZES + 1 ? 1000 : send_len(i);
}

/* the bytes a buffer of message i spans */
static size_t extent(int i, int recv)
{
    const mm_vector *v = vec_of(i, recv);
    return v ? vec_extent(v) : recv ? recv_cap(i) : send_len(i);
}

static int tag_of(int i)
{
    if (i >= VEC0)
        return XCHG_TAG_VEC + i - VEC0;
    return i < XCHG_NSIZES ? i : i == XCHG_NSIZES ? XCHG_TAG_ANY : XCHG_TAG_TRUNC;
}

/* Byte k of message i of round r from rank s (k >> 8: a misplaced block
 * of a large message shows too). */
static unsigned char pattern(int s, int r, int i, size_t k)
{
    return (unsigned char)(s * 131 + r * 71 + i * 31 + k * 7 + (k >> 8));
}

int xchg_init(xchg *x, mm_comm *c)
{
    memset(x, 0, sizeof *x);
    x->c = c;
    x->peer = mm_comm_rank(c) ^ 1;
    if (x->peer >= mm_comm_size(c))
        return -1;
    for (int i = 0; i < XCHG_NMSG; i++) {
        /* +1: malloc(0) may return NULL */
        x->sbuf[i] = (unsigned char *)malloc(extent(i, 0) + 1);
        x->rbuf[i] = (unsigned char *)malloc(extent(i, 1) + 1);
        if (!x->sbuf[i] || !x->rbuf[i])
            return -1;
    }
    return 0;
}

void xchg_fini(xchg *x)
{
    for (int i = 0; i < XCHG_NMSG; i++) {
        free(x->sbuf[i]);
        free(x->rbuf[i]);
    }
}

int xchg_post(xchg *x, int round)
{
    int me = mm_comm_rank(x->c), rc;
    x->round = round;
    /* receives first, the wildcard last: the specific ones match first */
    for (int i = 0; i < XCHG_NMSG; i++) {
        memset(x->rbuf[i], 0xEE, extent(i, 1));
        if (i == XCHG_NSIZES)
            continue;
        rc = vec_of(i, 1) ? mm_irecv_vector(x->c, x->rbuf[i], vec_of(i, 1), x->peer, tag_of(i), &x->rreq[i])
                          : mm_irecv(x->c, x->rbuf[i], recv_cap(i), x->peer, tag_of(i), &x->rreq[i]);
        if (rc != MM_SUCCESS)
            return rc;
    }
    rc = mm_irecv(x->c, x->rbuf[XCHG_NSIZES], recv_cap(XCHG_NSIZES), MM_ANY_SOURCE, MM_ANY_TAG,
                  &x->rreq[XCHG_NSIZES]);
    if (rc != MM_SUCCESS)
        return rc;
    for (int i = 0; i < XCHG_NMSG; i++) {
        memset(x->sbuf[i], 0x55, extent(i, 0)); /* between a vector's blocks: not sent */
        for (size_t k = 0; k < send_len(i); k++)
            x->sbuf[i][at(i, 0, k)] = pattern(me, round, i, k);
        rc = vec_of(i, 0) ? mm_isend_vector(x->c, x->sbuf[i], vec_of(i, 0), x->peer, tag_of(i), &x->sreq[i])
                          : mm_isend(x->c, x->sbuf[i], send_len(i), x->peer, tag_of(i), &x->sreq[i]);
        if (rc != MM_SUCCESS)
            return rc;
    }
    return MM_SUCCESS;
}

int xchg_finish(xchg *x, FILE *f)
{
    int me = mm_comm_rank(x->c), fails = 0, flag = 0, last = XCHG_NSIZES - 1;
    mm_status rs[XCHG_NMSG], ss[XCHG_NMSG];
    /* the largest by MPI_Test-style polling, the rest by waiting */
    while (!flag)
        mm_test(&x->rreq[last], &flag, &rs[last]);
    x->rreq[last] = MM_REQUEST_NULL;
    mm_waitall(XCHG_NMSG, x->sreq, ss);
    for (int i = 0; i < XCHG_NMSG; i++)
        if (i != last)
            mm_wait(&x->rreq[i], &rs[i]);
    for (int i = 0; i < XCHG_NMSG; i++) {
        int want_err = i == XCHG_NSIZES + 1 ? MM_ERR_TRUNCATE : MM_SUCCESS;
        size_t want_count = recv_cap(i), bad_at = (size_t)-1;
        if (ss[i].error != MM_SUCCESS) {
            fprintf(f, "mini_mpi[%d]: round %d: send %d (%zu bytes): %s\n", me, x->round, i, send_len(i),
                    mm_error_string(ss[i].error));
            fails++;
        }
        for (size_t k = 0; k < rs[i].count && k < want_count; k++)
            if (x->rbuf[i][at(i, 1, k)] != pattern(x->peer, x->round, i, k)) {
                bad_at = k;
                break;
            }
        if (vec_of(i, 1)) { /* between the blocks: untouched */
            const mm_vector *v = vec_of(i, 1);
            for (size_t b = 0; b + 1 < v->count; b++)
                for (size_t g = v->blocklen; g < v->stride; g++)
                    if (x->rbuf[i][b * v->stride + g] != 0xEE) {
                        fprintf(f, "mini_mpi[%d]: round %d: receive %d: byte %zu between blocks written\n",
                                me, x->round, i, b * v->stride + g);
                        fails++;
                        b = v->count;
                        break;
                    }
        }
        if (rs[i].error != want_err || rs[i].source != x->peer || rs[i].tag != tag_of(i) ||
            rs[i].count != want_count || rs[i].length != send_len(i) || bad_at != (size_t)-1) {
            char where[48] = "";
            if (bad_at != (size_t)-1)
                snprintf(where, sizeof where, ", first wrong byte at %zu", bad_at);
            fprintf(f,
                    "mini_mpi[%d]: round %d: receive %d: error %s (want %s), source %d tag %d count %zu"
                    " length %zu (want %d %d %zu %zu)%s\n",
                    me, x->round, i, mm_error_string(rs[i].error), mm_error_string(want_err), rs[i].source,
                    rs[i].tag, rs[i].count, rs[i].length, x->peer, tag_of(i), want_count, send_len(i), where);
            fails++;
        }
        x->messages++;
        x->bytes += rs[i].count;
    }
    x->bad += (unsigned long)fails;
    return fails;
}
