// SPDX-License-Identifier: BSD-3-Clause
/* loopback.c - mini_mpi with both ranks in one process: two bfo engines
 * joined by an in-memory transport, the smallest bfo_backend that keeps the
 * guarantees of bfo_backend.h (a frame completes ok once the peer's engine
 * took it; the frames of a rail stay in order).
 *
 *   ./mini_mpi_loopback [ROUNDS]
 *
 * It needs the engine only, no library: it builds against bfo's headers
 * (pkg-config --cflags bfo) or against the single header copied alone
 * (-DMM_SINGLE_HEADER -I DIR; the Makefile's `single` target).  A real
 * transport does the same things across processes: post_send queues a
 * frame, its progress hands frames to the peer's engine (bfo_engine_frame)
 * and completions to the sender's (bfo_engine_completion), then runs the
 * engine's timers (bfo_engine_progress).
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exchange.h"

#define LB_RAILS 2

typedef struct lb_frame {
    struct lb_frame *next;
    int src, rail;
    uint64_t token;
    size_t len;
    uint8_t data[];
} lb_frame;

typedef struct lb_world {
    bfo_engine eng[2];
    void *mem[2];
    bfo_backend be[2];
    struct lb_end {
        struct lb_world *w;
        int rank;
    } end[2];
    lb_frame *head[2], *tail[2]; /* frames on their way to rank i, in posting order */
    int connecting[2][LB_RAILS]; /* rank i asked to connect the rail */
    unsigned long frames;
} lb_world;

static uint64_t lb_now(void *ctx)
{
    struct timespec ts;
    (void)ctx;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Called from inside the engine: only queue (the engine is not re-entrant). */
static int lb_post_send(void *ctx, int peer, int rail, const bfo_iov *iov, int iovcnt, uint64_t token)
{
    struct lb_end *end = (struct lb_end *)ctx;
    lb_world *w = end->w;
    size_t len = 0;
    lb_frame *f;
    for (int i = 0; i < iovcnt; i++)
        len += iov[i].len;
    if (!(f = (lb_frame *)malloc(sizeof *f + len)))
        return -1; /* the engine takes it as a failed operation */
    f->next = NULL;
    f->src = end->rank;
    f->rail = rail;
    f->token = token;
    f->len = 0;
    for (int i = 0; i < iovcnt; i++) {
        memcpy(f->data + f->len, iov[i].base, iov[i].len);
        f->len += iov[i].len;
    }
    if (w->tail[peer])
        w->tail[peer]->next = f;
    else
        w->head[peer] = f;
    w->tail[peer] = f;
    return 0;
}

static int lb_connect(void *ctx, int peer, int rail)
{
    struct lb_end *end = (struct lb_end *)ctx;
    (void)peer;
    end->w->connecting[end->rank][rail] = 1;
    return 0;
}

/* The transport's progress: connections, frames, completions, timers. */
static int lb_progress(void *ctx, int timeout_ms)
{
    lb_world *w = (lb_world *)ctx;
    uint64_t now = lb_now(NULL);
    int moved = 0;
    (void)timeout_ms; /* nothing to sleep on: everything is here */
    for (int i = 0; i < 2; i++)
        for (int r = 0; r < LB_RAILS; r++)
            if (w->connecting[i][r]) {
                w->connecting[i][r] = 0;
                bfo_engine_rail_event(&w->eng[i], 1 - i, r, BFO_EV_CONNECTED, now);
            }
    for (int dst = 0; dst < 2; dst++)
        while (w->head[dst]) {
            lb_frame *f = w->head[dst];
            int rc = bfo_engine_frame(&w->eng[dst], f->src, f->rail, f->data, f->len, now);
            if (rc == BFO_ERR_AGAIN) /* no buffer yet: offer it again later */
                break;
            if (!(w->head[dst] = f->next))
                w->tail[dst] = NULL;
            bfo_engine_completion(&w->eng[f->src], f->token, rc != BFO_ERR_PEER_UNREACHABLE);
            free(f);
            w->frames++;
            moved++;
        }
    for (int i = 0; i < 2; i++)
        bfo_engine_progress(&w->eng[i], now);
    return moved;
}

static int lb_init(lb_world *w)
{
    memset(w, 0, sizeof *w);
    for (int i = 0; i < 2; i++) {
        bfo_config cfg;
        memset(&cfg, 0, sizeof cfg); /* zero: the engine's defaults */
        cfg.rank = i;
        cfg.nranks = 2;
        cfg.nrails = LB_RAILS;
        w->end[i].w = w;
        w->end[i].rank = i;
        w->be[i].ctx = &w->end[i];
        w->be[i].post_send = lb_post_send;
        w->be[i].connect = lb_connect;
        size_t need = bfo_engine_mem_size(&cfg);
        if (!(w->mem[i] = malloc(need)))
            return BFO_ERR_NO_MEMORY;
        int rc = bfo_engine_init(&w->eng[i], &cfg, &w->be[i], w->mem[i], need, lb_now(NULL));
        if (rc != BFO_OK)
            return rc;
    }
    return BFO_OK;
}

static void lb_fini(lb_world *w)
{
    for (int i = 0; i < 2; i++) {
        while (w->head[i]) {
            lb_frame *f = w->head[i];
            w->head[i] = f->next;
            free(f);
        }
        free(w->mem[i]);
    }
}

/* MPI's other calls, once: a message to itself, a synchronous send, a
 * probe, a matched probe and a cancelled receive.  Returns the failures. */
static int features(mm_comm *c[2])
{
    char a[6] = "self", b[6] = "ssend", d[6] = "probe", got[4][8];
    mm_request s[3], r[4];
    mm_status st;
    mm_message m;
    int flag = 0, cancelled = 0, bad = 0;
    memset(got, 0, sizeof got);
    /* to itself: rank 0 sends to rank 0 */
    mm_isend(c[0], a, 5, 0, 7, &s[0]);
    mm_irecv(c[0], got[0], 8, 0, 7, &r[0]);
    bad += mm_wait(&s[0], NULL) != MM_SUCCESS || mm_wait(&r[0], NULL) != MM_SUCCESS ||
           strcmp(got[0], "self");
    /* synchronous: not complete before its receive is posted */
    mm_issend(c[0], b, 6, 1, 8, &s[1]);
    for (int k = 0; k < 100; k++)
        mm_test(&s[1], &flag, NULL);
    bad += flag != 0;
    mm_irecv(c[1], got[1], 8, 0, 8, &r[1]);
    bad += mm_wait(&r[1], NULL) != MM_SUCCESS || mm_wait(&s[1], NULL) != MM_SUCCESS ||
           strcmp(got[1], "ssend");
    /* probe, then a matched probe and its receive */
    mm_isend(c[0], d, 6, 1, 9, &s[2]);
    flag = 0;
    for (int k = 0; k < 1000 && !flag; k++)
        mm_iprobe(c[1], MM_ANY_SOURCE, 9, &flag, &st);
    bad += !flag || st.source != 0 || st.length != 6;
    flag = 0;
    for (int k = 0; k < 1000 && !flag; k++)
        mm_improbe(c[1], 0, 9, &flag, &m, &st);
    bad += !flag || mm_imrecv(got[2], 8, &m, &r[2]) != MM_SUCCESS ||
           mm_wait(&r[2], NULL) != MM_SUCCESS || strcmp(got[2], "probe") ||
           mm_wait(&s[2], NULL) != MM_SUCCESS;
    /* a receive nothing matches, cancelled */
    mm_irecv(c[1], got[3], 8, 0, 10, &r[3]);
    bad += mm_cancel(&r[3], &cancelled) != MM_SUCCESS || !cancelled ||
           mm_wait(&r[3], NULL) != MM_ERR_CANCELLED;
    printf("mini_mpi_loopback: to itself, synchronous send, probe, matched probe, cancel: %s\n",
           bad ? "NOT all right" : "right");
    return bad;
}

int main(int argc, char **argv)
{
    static lb_world w; /* two engines: keep them off the stack */
    int rounds = argc > 1 ? atoi(argv[1]) : 3, fails = 0, rc;
    mm_comm *c[2];
    xchg x[2];

    if ((rc = lb_init(&w)) != BFO_OK) {
        fprintf(stderr, "mini_mpi_loopback: engine: %s\n", bfo_errname(rc));
        return 1;
    }
    for (int i = 0; i < 2; i++) {
        mm_transport tr = {&w.eng[i], i, 2, lb_progress, lb_now, &w};
        if (mm_comm_create(&c[i], &tr, 0, 64) != MM_SUCCESS || xchg_init(&x[i], c[i]) != 0) {
            fprintf(stderr, "mini_mpi_loopback: out of memory\n");
            return 1;
        }
    }
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < 2; i++) /* both ranks post, then both wait */
            if ((rc = xchg_post(&x[i], r)) != MM_SUCCESS) {
                fprintf(stderr, "mini_mpi_loopback[%d]: round %d: posting: %s\n", i, r, mm_error_string(rc));
                return 1;
            }
        for (int i = 0; i < 2; i++)
            fails += xchg_finish(&x[i], stderr);
    }
    fails += features(c);
    for (int i = 0; i < 2; i++)
        printf("mini_mpi_loopback[%d]: %lu messages, %lu bytes from rank %d %s\n", i, x[i].messages,
               x[i].bytes, x[i].peer, fails ? "NOT all right" : "verified");
    printf("mini_mpi_loopback: 2 engines in one process, %d rails, %lu frames, %d rounds\n", LB_RAILS,
           w.frames, rounds);
    for (int i = 0; i < 2; i++) {
        xchg_fini(&x[i]);
        mm_comm_free(c[i]);
    }
    lb_fini(&w);
    return fails ? 1 : 0;
}
