// SPDX-License-Identifier: BSD-3-Clause
/* mini_mpi.c - MPI point-to-point on the bfo engine (see mini_mpi.h). */
#include "mini_mpi.h"

#include <stdlib.h>
#include <string.h>

struct mm_req {
    bfo_request r;   /* first: the engine points at it until complete */
    mm_comm *comm;
    struct mm_req *next_free;
    int is_recv, peer, tag;
    size_t count;
    /* a vector (mm_isend_vector): its description, valid until complete */
    bfo_data data;
    bfo_data_seg *segs; /* large blocks: one segment per block (freed at finish) */
    char *base;
    mm_vector vec;
};

struct mm_comm {
    mm_transport t;
    int context;
    struct mm_req *pool, *free_list;
};

static int mm_error_of(int bfo_rc)
{
    switch (bfo_rc) {
    case BFO_OK: return MM_SUCCESS;
    case BFO_ERR_TRUNCATE: return MM_ERR_TRUNCATE;
    case BFO_ERR_PEER_UNREACHABLE: return MM_ERR_PROC_FAILED;
    case BFO_ERR_INVALID: return MM_ERR_ARG;
    case BFO_ERR_NO_MEMORY: return MM_ERR_NO_REQUEST;
    case BFO_ERR_CANCELLED: return MM_ERR_CANCELLED;
    default: return MM_ERR_OTHER;
    }
}

const char *mm_error_string(int err)
{
    static const char *const s[] = {"success", "message truncated", "peer unreachable (no rail left)",
                                    "invalid argument", "no request free", "internal error",
                                    "request cancelled"};
    return err >= 0 && err <= MM_ERR_CANCELLED ? s[err] : "unknown error";
}

int mm_comm_create(mm_comm **out, const mm_transport *t, int context, int max_requests)
{
    mm_comm *c;
    if (!out || !t || !t->engine || !t->progress || !t->now || max_requests <= 0 || context < 0)
        return MM_ERR_ARG;
    c = (mm_comm *)calloc(1, sizeof *c);
    if (!c || !(c->pool = (struct mm_req *)calloc((size_t)max_requests, sizeof *c->pool))) {
        free(c);
        return MM_ERR_OTHER;
    }
    c->t = *t;
    c->context = context;
    for (int i = max_requests - 1; i >= 0; i--) {
        c->pool[i].comm = c;
        c->pool[i].next_free = c->free_list;
        c->free_list = &c->pool[i];
    }
    *out = c;
    return MM_SUCCESS;
}

void mm_comm_free(mm_comm *c)
{
    if (c) {
        free(c->pool);
        free(c);
    }
}

int mm_comm_rank(const mm_comm *c) { return c->t.rank; }
int mm_comm_size(const mm_comm *c) { return c->t.size; }

static struct mm_req *req_get(mm_comm *c)
{
    struct mm_req *q = c->free_list;
    if (q)
        c->free_list = q->next_free;
    return q;
}

static void req_put(struct mm_req *q)
{
    q->next_free = q->comm->free_list;
    q->comm->free_list = q;
}

static int post(mm_comm *c, int is_recv, void *buf, size_t count, int peer, int tag, mm_request *req,
                unsigned flags)
{
    struct mm_req *q;
    int rc;
    /* ranks of this communicator are the engine's: src is the rank */
    bfo_envelope env = {peer, (uint32_t)c->context, is_recv ? peer : c->t.rank, tag, flags};
    if (!c || !req)
        return MM_ERR_ARG;
    *req = MM_REQUEST_NULL;
    if (!(q = req_get(c)))
        return MM_ERR_NO_REQUEST;
    q->is_recv = is_recv;
    q->peer = peer;
    q->tag = tag;
    q->count = count;
    rc = is_recv ? bfo_irecv_env(c->t.engine, &q->r, buf, count, &env, c->t.now(c->t.ctx))
                 : bfo_isend_env(c->t.engine, &q->r, buf, count, &env, c->t.now(c->t.ctx));
    if (rc != BFO_OK) { /* invalid, or complete at once (no rail to the peer) */
        req_put(q);
        return mm_error_of(rc);
    }
    *req = q;
    return MM_SUCCESS;
}

int mm_isend(mm_comm *c, const void *buf, size_t count, int dest, int tag, mm_request *req)
{
    return post(c, 0, (void *)(uintptr_t)buf, count, dest, tag, req, 0);
}

int mm_issend(mm_comm *c, const void *buf, size_t count, int dest, int tag, mm_request *req)
{
    return post(c, 0, (void *)(uintptr_t)buf, count, dest, tag, req, BFO_SEND_SYNC);
}

int mm_irecv(mm_comm *c, void *buf, size_t count, int source, int tag, mm_request *req)
{
    return post(c, 1, buf, count, source, tag, req, 0);
}

int mm_iprobe(mm_comm *c, int source, int tag, int *flag, mm_status *status)
{
    bfo_envelope env = {source, (uint32_t)c->context, source, tag, 0};
    bfo_status st;
    int rc;
    if (!c || !flag)
        return MM_ERR_ARG;
    c->t.progress(c->t.ctx, 0);
    rc = bfo_iprobe(c->t.engine, &env, &st, c->t.now(c->t.ctx));
    if (rc < 0)
        return mm_error_of(rc);
    *flag = rc;
    if (rc && status) {
        status->source = st.source;
        status->tag = st.tag;
        status->length = status->count = st.length;
        status->error = MM_SUCCESS;
    }
    return MM_SUCCESS;
}

int mm_improbe(mm_comm *c, int source, int tag, int *flag, mm_message *msg, mm_status *status)
{
    bfo_envelope env = {source, (uint32_t)c->context, source, tag, 0};
    bfo_status st;
    struct mm_req *q;
    int rc;
    if (!c || !flag || !msg)
        return MM_ERR_ARG;
    *flag = 0;
    *msg = MM_REQUEST_NULL;
    if (!(q = req_get(c)))
        return MM_ERR_NO_REQUEST;
    c->t.progress(c->t.ctx, 0);
    rc = bfo_improbe(c->t.engine, &q->r, &env, &st, c->t.now(c->t.ctx));
    if (rc != 1) {
        req_put(q);
        return rc < 0 ? mm_error_of(rc) : MM_SUCCESS;
    }
    q->is_recv = 1;
    q->peer = st.source;
    q->tag = st.tag;
    *flag = 1;
    *msg = q;
    if (status) {
        status->source = st.source;
        status->tag = st.tag;
        status->length = status->count = st.length;
        status->error = MM_SUCCESS;
    }
    return MM_SUCCESS;
}

int mm_imrecv(void *buf, size_t count, mm_message *msg, mm_request *req)
{
    struct mm_req *q;
    int rc;
    if (!msg || !*msg || !req)
        return MM_ERR_ARG;
    q = *msg;
    q->count = count;
    rc = bfo_imrecv(q->comm->t.engine, &q->r, buf, count, q->comm->t.now(q->comm->t.ctx));
    if (rc != BFO_OK)
        return mm_error_of(rc);
    *msg = MM_REQUEST_NULL;
    *req = q;
    return MM_SUCCESS;
}

int mm_cancel(mm_request *req, int *cancelled)
{
    int rc;
    if (!req || !*req)
        return MM_ERR_ARG;
    rc = bfo_cancel((*req)->comm->t.engine, &(*req)->r, (*req)->comm->t.now((*req)->comm->t.ctx));
    if (cancelled)
        *cancelled = rc == BFO_OK;
    return rc == BFO_OK || rc == BFO_ERR_TOO_LATE ? MM_SUCCESS : mm_error_of(rc);
}

/* Small blocks: bytes [off, off+n) of the vector's message, block by block
 * (byte off is byte off % blocklen of block off / blocklen). */
static void vec_copy(struct mm_req *q, size_t off, unsigned char *p, size_t n, int out)
{
    const mm_vector *v = &q->vec;
    while (n) {
        size_t in = off % v->blocklen, k = v->blocklen - in;
        char *at = q->base + (off / v->blocklen) * v->stride + in;
        if (k > n)
            k = n;
        if (out)
            memcpy(p, at, k);
        else
            memcpy(at, p, k);
        p += k;
        off += k;
        n -= k;
    }
}
static void vec_pack(void *ctx, size_t off, void *dst, size_t n)
{
    vec_copy((struct mm_req *)ctx, off, (unsigned char *)dst, n, 1);
}
static void vec_unpack(void *ctx, size_t off, const void *src, size_t n)
{
    vec_copy((struct mm_req *)ctx, off, (unsigned char *)(uintptr_t)src, n, 0);
}

#define MM_VEC_IOV_MIN 1024 /* blocks this large go as iovec segments */

static int post_vector(mm_comm *c, int is_recv, void *buf, const mm_vector *v, int peer, int tag,
                       mm_request *req)
{
    struct mm_req *q;
    int rc;
    if (!c || !req || !v || (v->count && (!buf || !v->blocklen || v->stride < v->blocklen)))
        return MM_ERR_ARG;
    *req = MM_REQUEST_NULL;
    if (!(q = req_get(c)))
        return MM_ERR_NO_REQUEST;
    q->is_recv = is_recv;
    q->peer = peer;
    q->tag = tag;
    q->count = v->count * v->blocklen;
    q->vec = *v;
    q->base = (char *)buf;
    memset(&q->data, 0, sizeof q->data);
    q->data.len = q->count;
    if (v->blocklen >= MM_VEC_IOV_MIN) {
        q->segs = (bfo_data_seg *)malloc((v->count ? v->count : 1) * sizeof *q->segs);
        if (!q->segs) {
            req_put(q);
            return MM_ERR_OTHER;
        }
        for (size_t i = 0; i < v->count; i++) {
            q->segs[i].base = q->base + i * v->stride;
            q->segs[i].len = v->blocklen;
        }
        q->data.kind = BFO_DATA_IOV;
        q->data.segs = q->segs;
        q->data.nsegs = (int)v->count;
    } else {
        q->data.kind = BFO_DATA_PACK;
        q->data.pack = vec_pack;
        q->data.unpack = vec_unpack;
        q->data.ctx = q;
    }
    rc = is_recv ? bfo_irecv_data(c->t.engine, &q->r, &q->data, peer, c->context, tag, c->t.now(c->t.ctx))
                 : bfo_isend_data(c->t.engine, &q->r, &q->data, peer, c->context, tag, c->t.now(c->t.ctx));
    if (rc != BFO_OK) {
        free(q->segs);
        q->segs = NULL;
        req_put(q);
        return mm_error_of(rc);
    }
    *req = q;
    return MM_SUCCESS;
}

int mm_isend_vector(mm_comm *c, const void *buf, const mm_vector *v, int dest, int tag,
                    mm_request *req)
{
    return post_vector(c, 0, (void *)(uintptr_t)buf, v, dest, tag, req);
}

int mm_irecv_vector(mm_comm *c, void *buf, const mm_vector *v, int source, int tag, mm_request *req)
{
    return post_vector(c, 1, buf, v, source, tag, req);
}

/* The request is complete: fill the status, give the slot back. */
static int finish(mm_request *req, mm_status *st)
{
    struct mm_req *q = *req;
    int err = mm_error_of(q->r.status);
    if (st) {
        st->error = err;
        if (q->is_recv) {
            st->source = q->r.source;
            st->tag = q->r.tag;
            st->length = q->r.length;
            st->count = q->r.length < q->count ? q->r.length : q->count;
        } else {
            st->source = q->peer;
            st->tag = q->tag;
            st->length = st->count = q->count;
        }
    }
    free(q->segs);
    q->segs = NULL;
    req_put(q);
    *req = MM_REQUEST_NULL;
    return err;
}

int mm_test(mm_request *req, int *flag, mm_status *status)
{
    if (!req || !flag)
        return MM_ERR_ARG;
    *flag = 1;
    if (*req == MM_REQUEST_NULL)
        return MM_SUCCESS;
    if (!bfo_test(&(*req)->r)) {
        mm_comm *c = (*req)->comm;
        c->t.progress(c->t.ctx, 0);
        if (!bfo_test(&(*req)->r)) {
            *flag = 0;
            return MM_SUCCESS;
        }
    }
    return finish(req, status);
}

int mm_wait(mm_request *req, mm_status *status)
{
    if (!req)
        return MM_ERR_ARG;
    if (*req == MM_REQUEST_NULL)
        return MM_SUCCESS;
    /* No timeout needed: bfo completes every request, with
     * BFO_ERR_PEER_UNREACHABLE once no rail to its peer is left. */
    while (!bfo_test(&(*req)->r)) {
        mm_comm *c = (*req)->comm;
        c->t.progress(c->t.ctx, 1);
    }
    return finish(req, status);
}

int mm_waitall(int n, mm_request *reqs, mm_status *statuses)
{
    int first = MM_SUCCESS;
    for (int i = 0; i < n; i++) {
        int rc = mm_wait(&reqs[i], statuses ? &statuses[i] : NULL);
        if (rc != MM_SUCCESS && first == MM_SUCCESS)
            first = rc;
    }
    return first;
}
