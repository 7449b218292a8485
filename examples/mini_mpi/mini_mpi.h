// SPDX-License-Identifier: BSD-3-Clause
/* mini_mpi.h - the skeleton of an MPI point-to-point layer on bfo.
 *
 * What an MPI library's point-to-point layer does with bfo, cut down to
 * bytes (no datatypes) and communicators that are a context id.  The names
 * are mm_*, not MPI_*, so that this links next to a real MPI.
 *
 *   MPI                         here                    bfo
 *   MPI_Isend(b,n,MPI_BYTE,..)  mm_isend(c,b,n,dst,tag) bfo_isend_env(e, req, b, n, &env, now)
 *   MPI_Irecv                   mm_irecv                bfo_irecv_env (env: peer, ctx, src, tag)
 *   MPI_Issend                  mm_issend               bfo_isend_env, env.flags BFO_SEND_SYNC
 *   MPI_Iprobe                  mm_iprobe               bfo_iprobe
 *   MPI_Improbe, MPI_Imrecv     mm_improbe, mm_imrecv   bfo_improbe, bfo_imrecv
 *   MPI_Cancel                  mm_cancel               bfo_cancel (BFO_ERR_CANCELLED)
 *   a send to oneself           mm_isend(c,..,rank,..)  the same: no rail, no network
 *   MPI_Type_vector + Isend     mm_isend_vector         bfo_isend_data (an iovec, or pack)
 *   MPI_Type_vector + Irecv     mm_irecv_vector         bfo_irecv_data (an iovec, or unpack)
 *   MPI_ANY_SOURCE, _ANY_TAG    MM_ANY_SOURCE, _TAG     BFO_ANY_SOURCE, BFO_ANY_TAG
 *   MPI_Test                    mm_test                 one progress of the transport, bfo_test
 *   MPI_Wait, MPI_Waitall       mm_wait, mm_waitall     progress until bfo_test
 *   MPI_Status                  mm_status               bfo_request .source .tag .length .status
 *   MPI_ERR_TRUNCATE            MM_ERR_TRUNCATE         BFO_ERR_TRUNCATE
 *   MPI_ERR_PROC_FAILED (ULFM)  MM_ERR_PROC_FAILED      BFO_ERR_PEER_UNREACHABLE: no rail left
 *   a communicator's context    mm_comm's context       the engine's ctx (any uint32_t)
 *
 * Rails failing underneath are bfo's business: a request completes as if
 * nothing happened, or with MM_ERR_PROC_FAILED once no rail to the peer is
 * left.  Matching is MPI's: in posting order, and messages of one sender in
 * one context match in the order they were sent.
 *
 * A request is a bfo_request the layer owns (a pool per communicator): the
 * engine keeps a pointer to it until bfo_test says it is complete, so it
 * must not move, and the user sees only a handle.
 *
 * The transport is whatever drives the engine: bfo_tcp (tcp_ranks.c, real
 * processes) or an in-memory one (loopback.c).  This file and mini_mpi.c
 * need only the engine: bfo's headers (pkg-config --cflags bfo), or the
 * single header alone with -DMM_SINGLE_HEADER.
 */
#ifndef MINI_MPI_H
#define MINI_MPI_H

#include <stddef.h>
#include <stdint.h>

#ifdef MM_SINGLE_HEADER
#include "bfo_single.h"
#else
#include "bfo_engine.h"
#endif

/* What the layer needs from a transport. */
typedef struct mm_transport {
    bfo_engine *engine;
    int rank, size;
    /* Does the I/O, reports it to the engine, runs bfo_engine_progress;
     * may wait up to timeout_ms for something to happen. */
    int (*progress)(void *ctx, int timeout_ms);
    uint64_t (*now)(void *ctx); /* the engine's clock, nanoseconds */
    void *ctx;
} mm_transport;

typedef struct mm_comm mm_comm;
typedef struct mm_req *mm_request;
#define MM_REQUEST_NULL ((mm_request)0)

typedef struct mm_status {
    int source;   /* receive: the sender; send: the destination */
    int tag;
    int error;    /* MM_SUCCESS or MM_ERR_* */
    size_t count; /* bytes in the buffer (a truncated receive: what fit) */
    size_t length;/* receive: the message's length (more than count when truncated) */
} mm_status;

enum mm_error {
    MM_SUCCESS = 0,
    MM_ERR_TRUNCATE = 1,    /* the message was longer than the receive buffer */
    MM_ERR_PROC_FAILED = 2, /* no rail to the peer is left */
    MM_ERR_ARG = 3,         /* bad rank, tag, buffer or handle */
    MM_ERR_NO_REQUEST = 4,  /* every request of the communicator is in use */
    MM_ERR_OTHER = 5,
    MM_ERR_CANCELLED = 6    /* the request was cancelled (mm_cancel): nothing matched it */
};

#define MM_ANY_SOURCE BFO_ANY_SOURCE
#define MM_ANY_TAG BFO_ANY_TAG

#ifdef __cplusplus
extern "C" {
#endif

/* A communicator over t (copied) with its own context id (any value >= 0)
 * and at most max_requests requests alive. */
int mm_comm_create(mm_comm **out, const mm_transport *t, int context, int max_requests);
void mm_comm_free(mm_comm *c); /* after every request completed */
int mm_comm_rank(const mm_comm *c);
int mm_comm_size(const mm_comm *c);

int mm_isend(mm_comm *c, const void *buf, size_t count, int dest, int tag, mm_request *req);
int mm_irecv(mm_comm *c, void *buf, size_t count, int source, int tag, mm_request *req);
/* MPI_Issend: complete only once the receiver matched it (BFO_SEND_SYNC).
 * dest may be the rank itself, for every send. */
int mm_issend(mm_comm *c, const void *buf, size_t count, int dest, int tag, mm_request *req);

/* MPI_Iprobe: *flag = 1 and status filled (source, tag, length) when a
 * message matches, without receiving it. */
int mm_iprobe(mm_comm *c, int source, int tag, int *flag, mm_status *status);
/* MPI_Improbe / MPI_Imrecv: the message is taken out of matching into
 * *msg (a request of the communicator), received later with mm_imrecv. */
typedef struct mm_req *mm_message;
int mm_improbe(mm_comm *c, int source, int tag, int *flag, mm_message *msg, mm_status *status);
int mm_imrecv(void *buf, size_t count, mm_message *msg, mm_request *req);
/* MPI_Cancel: the request then completes with MM_ERR_CANCELLED, or (too
 * late: it matched, or some of it left) as it would have.  MM_SUCCESS
 * either way, as MPI's; *cancelled says which it will be. */
int mm_cancel(mm_request *req, int *cancelled);

/* A strided vector of bytes, MPI_Type_vector(count, blocklen, stride,
 * MPI_BYTE): count blocks of blocklen bytes, block i at buf + i * stride.
 * The message is the blocks one after the other (count * blocklen bytes);
 * the other side may describe the same bytes differently (a plain buffer,
 * another vector).  Nothing is copied into a contiguous buffer first: bfo
 * reads and writes the blocks in place (bfo_isend_data, bfo_irecv_data),
 * as segments of an iovec when blocks are large (the TCP transport then
 * writes them straight from here), through pack/unpack callbacks when they
 * are small (one segment per block would cost more than copying them). */
typedef struct mm_vector {
    size_t count, blocklen, stride;
} mm_vector;

int mm_isend_vector(mm_comm *c, const void *buf, const mm_vector *v, int dest, int tag,
                    mm_request *req);
int mm_irecv_vector(mm_comm *c, void *buf, const mm_vector *v, int source, int tag,
                    mm_request *req);

/* *flag = 1 and the request freed (*req = MM_REQUEST_NULL) when complete;
 * returns its error then (status may be NULL), else MM_SUCCESS. */
int mm_test(mm_request *req, int *flag, mm_status *status);
int mm_wait(mm_request *req, mm_status *status);
/* Returns MM_SUCCESS, or the first error (each status has its own). */
int mm_waitall(int n, mm_request *reqs, mm_status *statuses);

const char *mm_error_string(int err);

#ifdef __cplusplus
}
#endif
#endif /* MINI_MPI_H */
