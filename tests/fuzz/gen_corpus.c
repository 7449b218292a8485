// SPDX-License-Identifier: BSD-3-Clause
/* gen_corpus.c - writes the seed corpora of tests/fuzz/corpus/
 * (`make fuzz-corpus`; the files are committed).
 *
 *   wire/        one valid frame of every type (with and without payload,
 *                every flag; the types not written out below get the
 *                sample of their layout, tests/bfo_samples.h), and a few of
 *                each error
 *   engine/      real exchanges recorded as fuzz_engine scripts: an honest
 *                second engine (rank 1 or 2) is the peer, a seeded network
 *                between the two delivers, completes, loses and fails
 *                operations and rails; what reached rank 0 is written down
 *                as the script's commands, so the script replays the
 *                exchange without the second engine
 *   tcp_frames/  the TCP backend's byte stream after the hello (DATA frames
 *                carrying the engine frames of those exchanges, ACKs,
 *                back-pressure flags) as fuzz_tcp_frames scripts
 * Every script is replayed through its target before it is written.
 *
 *   gen_corpus OUTDIR
 */
#define FZ_NO_ENTRY
#include "fuzz_engine.c"

#include <ctype.h>
#include <errno.h>
#include <sys/stat.h>

#include "../bfo_samples.h"
#include "bfo_tcp.h"
#include "fuzz_tcp_script.h"


static const char *g_out;
static unsigned g_written;
static size_t g_bytes;

static void put_file(const char *dir, const char *name, const uint8_t *b, size_t n)
{
    char path[512];
    FILE *f;
    snprintf(path, sizeof path, "%s/%s", g_out, dir);
    if (mkdir(path, 0755) != 0 && errno != EEXIST) {
        perror(path);
        exit(1);
    }
    snprintf(path, sizeof path, "%s/%s/%s", g_out, dir, name);
    f = fopen(path, "wb");
    if (!f || fwrite(b, 1, n, f) != n || fclose(f) != 0) {
        perror(path);
        exit(1);
    }
    g_written++;
    g_bytes += n;
}

static uint64_t g_rng;
static uint64_t rnd(void)
{
    uint64_t x = g_rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return g_rng = x;
}
static int chance(unsigned one_in) { return one_in && rnd() % one_in == 0; }

static bfo_handle H(uint32_t index, uint32_t gen)
{
    bfo_handle h;
    h.index = index;
    h.gen = gen;
    return h;
}

/* ------------------------------------------------------------- wire */

static void gen_wire(void)
{
    uint8_t b[BFO_MAX_HDR_SIZE + 128];
    char name[64];
    size_t n;
    int k = 0;
#define W(label, len)                                                           \
    do {                                                                        \
        snprintf(name, sizeof name, "%02d-%s", k++, label);                     \
        put_file("wire", name, b, len);                                         \
    } while (0)
    for (int pay = 0; pay <= 1; pay++) {
        size_t extra = pay ? 33 : 0;
        memset(b, 0x61, sizeof b);
        bfo_hdr_match m = { .type = BFO_FRAG_MATCH, .flags = 0, .ctx = 1, .src = 2, .tag = 77, .seq = 5 };
        n = bfo_hdr_match_encode(&m, b, sizeof b);
        W(pay ? "match-payload" : "match", n + extra);
        bfo_hdr_rndv r = { .type = BFO_FRAG_RNDV, .flags = BFO_FLAG_PIN, .ctx = 1, .src = 2, .tag = 77, .seq = 6, .rseq = 0, .msg_len = 4096, .sreq = H(3, 1), .dreq = H(0, 0) };
        n = bfo_hdr_rndv_encode(&r, b, sizeof b);
        W(pay ? "rndv-pin-payload" : "rndv-pin", n + extra);
        r.flags = BFO_FLAG_RESTART;
        r.rseq = 2;
        r.dreq = H(5, 3);
        n = bfo_hdr_rndv_encode(&r, b, sizeof b);
        W(pay ? "rndv-restart-payload" : "rndv-restart", n + extra);
        bfo_hdr_frag fr = { BFO_FRAG_FRAG, 0, 1, H(5, 3), 96 };
        n = bfo_hdr_frag_encode(&fr, b, sizeof b);
        W(pay ? "frag" : "frag-empty", n + extra);
    }
    /* RGET and PUT: their keys, two rails' (rail 1's 42, rail 0 none) */
    bfo_hdr_rget g = { .type = BFO_FRAG_RGET, .flags = 0, .ctx = 0, .src = 2, .tag = 9, .seq = 3, .rseq = 0, .msg_len = 300, .sreq = H(1, 1), .dreq = H(0, 0), .raddr = 0x7f0000001000ull };
    n = bfo_hdr_rget_encode(&g, b, sizeof b);
    bfo_put32(b + n, 0);
    bfo_put32(b + n + 4, 42);
    W("rget", n + 8);
    g.flags = BFO_FLAG_RESTART;
    g.dreq = H(2, 7);
    n = bfo_hdr_rget_encode(&g, b, sizeof b);
    W("rget-restart", n + 8);
    bfo_hdr_ack a = { BFO_FRAG_ACK, 0, 1, H(1, 1), H(2, 1), 64 };
    n = bfo_hdr_ack_encode(&a, b, sizeof b);
    W("ack", n);
    bfo_hdr_put p = { BFO_FRAG_PUT, 0, 0, 1, H(1, 1), H(2, 1), 160, 96, 0x7f0000002000ull };
    n = bfo_hdr_put_encode(&p, b, sizeof b);
    bfo_put32(b + n, 0);
    bfo_put32(b + n + 4, 43);
    W("put", n + 8);
    bfo_hdr_fin fi = { .type = BFO_FRAG_FIN, .flags = 0, .rseq = 0, .slot = 1, .dreq = H(2, 1), .offset = 160, .length = 96 };
    n = bfo_hdr_fin_encode(&fi, b, sizeof b);
    W("fin", n);
    /* every other type (NOTIFY, ..., PROBEACK, and a type added to the
     * alphabet): its layout's sample, named after the type */
    for (int t = 1; t < 256; t++) {
        const char *tn = bfo_frag_name(t);
        char lower[32];
        size_t i;
        if (!tn || t == BFO_FRAG_MATCH || t == BFO_FRAG_RNDV || t == BFO_FRAG_FRAG ||
            t == BFO_FRAG_RGET || t == BFO_FRAG_ACK || t == BFO_FRAG_PUT || t == BFO_FRAG_FIN)
            continue; /* written out above */
        for (i = 0; tn[i] && i + 1 < sizeof lower; i++)
            lower[i] = (char)tolower((unsigned char)tn[i]);
        lower[i] = 0;
        n = sample_encode(t, 0, b, sizeof b);
        W(lower, n + (bfo_frag_has_payload(t) ? 33 : 0));
    }
    /* errors: truncated, bad type, bad flags, reserved field, bytes too many */
    bfo_hdr_match m = { .type = BFO_FRAG_MATCH, .flags = 0, .ctx = 1, .src = 2, .tag = 77, .seq = 5 };
    n = bfo_hdr_match_encode(&m, b, sizeof b);
    W("err-truncated", n - 1);
    b[0] = 0x7e;
    W("err-type", n);
    b[0] = BFO_FRAG_MATCH;
    b[1] = 0x80;
    W("err-flags", n);
    b[1] = 0;
    b[14] = 1;
    W("err-reserved", n);
    n = bfo_hdr_ack_encode(&a, b, sizeof b);
    W("err-ack-payload", n + 1);
    bfo_hdr_frag fz = { BFO_FRAG_FRAG, 0, 1, H(0, 0), 96 };
    n = bfo_hdr_frag_encode(&fz, b, sizeof b);
    W("err-frag-null", n + 8);
    fi.offset = ~0ull;
    n = bfo_hdr_fin_encode(&fi, b, sizeof b);
    W("err-fin-overflow", n);
#undef W
}

/* ------------------------------------------------------------- engine */

/* The script being written: each rec_* call runs its fz_* call and
 * appends the command that makes it. */
static uint8_t rec[6000];
static size_t nrec;

static void rec_u8(unsigned v)
{
    if (nrec < sizeof rec)
        rec[nrec++] = (uint8_t)v;
}
static int rec_full(void) { return nrec + 200 > sizeof rec; }

/* Engine frames of the recorded exchanges, for the TCP seeds. */
#define NKEPT 160
static uint8_t kept[NKEPT][BFO_MAX_HDR_SIZE + 96];
static size_t kept_len[NKEPT];
static int nkept;

static int rec_frame(int peer, int rail, const uint8_t *frame, size_t len)
{
    size_t hl = bfo_frag_hdr_size(frame[0]);
    if (nkept < NKEPT && len <= sizeof kept[0]) {
        memcpy(kept[nkept], frame, len);
        kept_len[nkept++] = len;
    }
    rec_u8(FZ_C_FRAME);
    rec_u8((unsigned)((peer - 1) | (rail << 1)));
    rec_u8((unsigned)hl);
    for (size_t i = 0; i < hl; i++)
        rec_u8(frame[i]);
    rec_u8((unsigned)((len - hl) & 0xff));
    rec_u8((unsigned)((len - hl) >> 8));
    return fz_frame(peer, rail, frame, hl, len - hl);
}
static void rec_complete(int k, int ok)
{
    rec_u8(FZ_C_COMPLETE);
    rec_u8((unsigned)k);
    rec_u8((unsigned)ok);
    fz_complete(k, ok);
}
static void rec_transport(unsigned mask)
{
    rec_u8(FZ_C_TRANSPORT);
    rec_u8(mask);
    fz_transport(mask);
}
static void rec_progress(unsigned code)
{
    rec_u8(FZ_C_PROGRESS);
    rec_u8(code);
    fz_progress((uint64_t)((code & 15) + 1) << ((code >> 4) * 2));
}
static void rec_rail_error(int peer, int rail)
{
    rec_u8(FZ_C_RAIL_EVENT);
    rec_u8((unsigned)(peer | (rail << 2) | (2 << 4))); /* peers[1]=1, peers[2]=2; evs[2]=RAIL_ERROR */
    fz_rail_event(peer, rail, BFO_EV_RAIL_ERROR);
}
static void rec_heard(int peer, int rail)
{
    rec_u8(FZ_C_HEARD);
    rec_u8((unsigned)(peer | (rail << 2)));
    fz_heard(peer, rail);
}
static void rec_isend(int slot, int peer, int cls, int ctx, int tag)
{
    rec_u8(FZ_C_ISEND);
    rec_u8((unsigned)slot);
    rec_u8((unsigned)((peer == 1 ? 0 : 1) | (cls << 2)));
    rec_u8((unsigned)(ctx | (tag << 2)));
    fz_isend(slot, peer, fz_sizes[cls], ctx, tag);
}
static void rec_irecv(int slot, int peer, int cls, int ctx, int tag)
{
    rec_u8(FZ_C_IRECV);
    rec_u8((unsigned)slot);
    rec_u8((unsigned)((peer == BFO_ANY_SOURCE ? 0 : peer) | (cls << 2)));
    rec_u8((unsigned)(ctx | ((tag == BFO_ANY_TAG ? 0 : tag + 1) << 2)));
    fz_irecv(slot, peer, fz_sizes[cls], ctx, tag);
}

/* What rank 0 posted, as the peer needs it: the frame's bytes, RDMA's
 * remote address. */
typedef struct g0_op {
    uint64_t token;
    uint8_t frame[BFO_MAX_HDR_SIZE + FZ_BUF];
    size_t len;
    uint64_t raddr;
} g0_op;
static g0_op g0[FZ_PEND];
static int ng0;

static g0_op *g0_find(uint64_t token)
{
    for (int i = 0; i < ng0; i++)
        if (g0[i].token == token)
            return &g0[i];
    return NULL;
}
static g0_op *g0_slot(uint64_t token)
{
    g0_op *o = g0_find(token);
    if (!o) {
        for (int i = 0; i < ng0 && !o; i++)
            if (!g0[i].token)
                o = &g0[i];
        if (!o && ng0 < FZ_PEND)
            o = &g0[ng0++];
        if (!o)
            abort();
    }
    memset(o, 0, sizeof *o);
    o->token = token;
    return o;
}

static int g0_post_send(void *ctx, int peer, int rail, const bfo_iov *iov, int iovcnt, uint64_t token)
{
    int rc = fz_post_send(ctx, peer, rail, iov, iovcnt, token);
    if (rc == 0) {
        g0_op *o = g0_slot(token);
        for (int i = 0; i < iovcnt; i++) {
            memcpy(o->frame + o->len, iov[i].base, iov[i].len);
            o->len += iov[i].len;
        }
    }
    return rc;
}
static int g0_post_write(void *ctx, int peer, int rail, const void *local, size_t len, uint64_t raddr,
                         uint32_t rkey, uint64_t token)
{
    int rc = fz_post_write(ctx, peer, rail, local, len, raddr, rkey, token);
    if (rc == 0)
        g0_slot(token)->raddr = raddr;
    return rc;
}
static int g0_post_read(void *ctx, int peer, int rail, void *local, size_t len, uint64_t raddr,
                        uint32_t rkey, uint64_t token)
{
    int rc = fz_post_read(ctx, peer, rail, local, len, raddr, rkey, token);
    if (rc == 0)
        g0_slot(token)->raddr = raddr;
    return rc;
}

/* The honest peer: a second engine with its own transport queue. */
typedef struct p_op {
    uint64_t token;
    int rail, kind;
    uint8_t frame[BFO_MAX_HDR_SIZE + FZ_BUF];
    size_t len;
    uint8_t *local;
    uint64_t raddr;
} p_op;

static struct {
    bfo_engine e;
    bfo_config cfg;
    void *mem;
    int rank;
    p_op q[FZ_PEND];
    int nq;
    int conn[FZ_RAILS], disc[FZ_RAILS];
    bfo_request req[16];
    uint8_t buf[16][FZ_BUF];
    uint64_t next_key;
} P;

static p_op *p_push(uint64_t token, int peer, int rail, int kind)
{
    if (peer != 0 || P.nq == FZ_PEND)
        return NULL;
    p_op *o = &P.q[P.nq++];
    memset(o, 0, sizeof *o);
    o->token = token;
    o->rail = rail;
    o->kind = kind;
    return o;
}
static int p_post_send(void *ctx, int peer, int rail, const bfo_iov *iov, int iovcnt, uint64_t token)
{
    (void)ctx;
    p_op *o = p_push(token, peer, rail, FZ_SEND);
    if (!o)
        return -1;
    for (int i = 0; i < iovcnt; i++) {
        memcpy(o->frame + o->len, iov[i].base, iov[i].len);
        o->len += iov[i].len;
    }
    return 0;
}
static int p_post_write(void *ctx, int peer, int rail, const void *local, size_t len, uint64_t raddr,
                        uint32_t rkey, uint64_t token)
{
    (void)ctx;
    (void)rkey;
    p_op *o = p_push(token, peer, rail, FZ_WRITE);
    if (!o)
        return -1;
    o->local = (uint8_t *)(uintptr_t)local;
    o->len = len;
    o->raddr = raddr;
    return 0;
}
static int p_post_read(void *ctx, int peer, int rail, void *local, size_t len, uint64_t raddr,
                       uint32_t rkey, uint64_t token)
{
    (void)ctx;
    (void)rkey;
    p_op *o = p_push(token, peer, rail, FZ_READ);
    if (!o)
        return -1;
    o->local = (uint8_t *)local;
    o->len = len;
    o->raddr = raddr;
    return 0;
}
static int p_reg(void *ctx, void *buf, size_t len, unsigned access, uint64_t *raddr, uint32_t *keys,
                 uint64_t *handle)
{
    (void)ctx;
    (void)len;
    (void)access;
    *raddr = (uint64_t)(uintptr_t)buf;
    *handle = ++P.next_key;
    keys[1] = (uint32_t)*handle; /* rail 1 does RDMA */
    return 0;
}
static void p_dereg(void *ctx, uint64_t handle)
{
    (void)ctx;
    (void)handle;
}
static int p_connect(void *ctx, int peer, int rail)
{
    (void)ctx;
    if (peer == 0)
        P.conn[rail] = 1;
    return 0;
}
static void p_disconnect(void *ctx, int peer, int rail)
{
    (void)ctx;
    if (peer == 0)
        P.disc[rail] = 1;
}

static void p_complete(int i, int ok)
{
    p_op o = P.q[i];
    memmove(&P.q[i], &P.q[i + 1], (size_t)(P.nq - i - 1) * sizeof P.q[0]);
    P.nq--;
    if (ok)
        bfo_engine_rail_heard(&P.e, 0, o.rail, F.now);
    bfo_engine_completion(&P.e, o.token, ok);
}

static void p_start(int rank, int rdma)
{
    bfo_backend be;
    memset(&be, 0, sizeof be);
    be.post_send = p_post_send;
    be.post_write = p_post_write;
    be.post_read = p_post_read;
    be.reg_mem = p_reg;
    be.dereg_mem = p_dereg;
    be.connect = p_connect;
    be.disconnect = p_disconnect;
    be.rail_caps = fz_caps;
    be.rail_bandwidth = fz_bw;
    free(P.mem);
    memset(&P, 0, sizeof P);
    P.rank = rank;
    P.cfg = F.cfg;
    P.cfg.rank = rank;
    P.cfg.rdma = rdma;
    P.mem = malloc(bfo_engine_mem_size(&P.cfg));
    if (!P.mem || bfo_engine_init(&P.e, &P.cfg, &be, P.mem, bfo_engine_mem_size(&P.cfg), F.now) != BFO_OK)
        abort();
}

/* Both sides lose the connection of a rail: each gets RAIL_ERROR and its
 * operations on the rail fail. */
static void both_lose(int h, int r)
{
    rec_rail_error(h, r);
    for (int k = 0; k < F.npend;)
        if (F.pend[k].peer == h && F.pend[k].rail == r)
            rec_complete(k, 0);
        else
            k++;
    bfo_engine_rail_event(&P.e, 0, r, BFO_EV_RAIL_ERROR, F.now);
    for (int i = 0; i < P.nq;)
        if (P.q[i].rail == r)
            p_complete(i, 0);
        else
            i++;
}

typedef struct gmsg {
    int to_peer; /* 1: rank 0 sends to the peer, 0: the peer sends to rank 0 */
    int cls, any;
} gmsg;

/* One exchange between rank 0 and an honest peer h; faults one in `fault`
 * deliveries (0: none).  Returns 1 when every message arrived. */
static int exchange(int h, int rdma0, int rdma1, const gmsg *m, int nm, unsigned fault, uint64_t seed)
{
    int slot[16], pslot[16], done = 0;
    g_rng = seed * 0x9e3779b97f4a7c15ull + 7;
    nrec = 0;
    ng0 = 0;
    memset(g0, 0, sizeof g0);
    rec_u8((unsigned)rdma0);
    fz_start(rdma0);
    F.e.be.post_send = g0_post_send;
    F.e.be.post_write = g0_post_write;
    F.e.be.post_read = g0_post_read;
    p_start(h, rdma1);
    for (int i = 0; i < nm; i++) {
        int ctx = i % 2, tag = i % 3;
        size_t len = fz_sizes[m[i].cls];
        slot[i] = i;
        pslot[i] = i;
        if (m[i].to_peer) {
            rec_isend(i, h, m[i].cls, ctx, tag);
            if (bfo_irecv(&P.e, &P.req[i], P.buf[i], len, 0, ctx, tag, F.now) != BFO_OK)
                abort();
        } else {
            for (size_t k = 0; k < len; k++)
                P.buf[i][k] = fz_pattern(h, k);
            rec_irecv(i, m[i].any ? BFO_ANY_SOURCE : h, m[i].cls, ctx, m[i].any ? BFO_ANY_TAG : tag);
            if (bfo_isend(&P.e, &P.req[i], P.buf[i], len, 0, ctx, tag, F.now) != BFO_OK)
                abort();
        }
    }
    (void)slot;
    (void)pslot;
    for (int step = 0; step < 4000 && !rec_full(); step++) {
        int all = 1;
        for (int i = 0; i < nm; i++)
            all &= bfo_test(&F.req[i].r) && bfo_test(&P.req[i]);
        if (all) {
            done = 1;
            break;
        }
        int r = (int)(rnd() % FZ_RAILS), what = (int)(rnd() % 8);
        /* connections: both ends asked */
        unsigned mask = 0;
        int any_conn = 0;
        for (int rr = 0; rr < FZ_RAILS; rr++)
            if (F.connect_req[h][rr] && P.conn[rr]) {
                mask |= 1u << ((h - 1) * FZ_RAILS + rr);
                any_conn = 1;
            }
        for (int rr = 0; rr < FZ_RAILS; rr++)
            any_conn |= F.disc[h][rr] || P.disc[rr];
        if (any_conn) {
            for (int rr = 0; rr < FZ_RAILS; rr++)
                if (P.disc[rr] && !F.disc[h][rr]) { /* the peer dropped it: rank 0 sees an error */
                    P.disc[rr] = 0;
                    both_lose(h, rr);
                }
            for (int rr = 0; rr < FZ_RAILS; rr++)
                if (F.disc[h][rr]) { /* rank 0 dropped it: the peer loses it too */
                    P.disc[rr] = 0;
                    bfo_engine_rail_event(&P.e, 0, rr, BFO_EV_RAIL_ERROR, F.now);
                    for (int i = 0; i < P.nq;)
                        if (P.q[i].rail == rr)
                            p_complete(i, 0);
                        else
                            i++;
                }
            rec_transport(mask);
            for (int rr = 0; rr < FZ_RAILS; rr++)
                if ((mask >> ((h - 1) * FZ_RAILS + rr)) & 1) {
                    P.conn[rr] = 0;
                    bfo_engine_rail_event(&P.e, 0, rr, BFO_EV_CONNECTED, F.now);
                }
            continue;
        }
        if (what <= 2) { /* the oldest of rank 0's operations on rail r reaches the peer */
            int k;
            for (k = 0; k < F.npend && !(F.pend[k].peer == h && F.pend[k].rail == r); k++)
                ;
            if (k == F.npend)
                goto idle;
            const fz_op o = F.pend[k];
            g0_op *g = g0_find(o.token);
            int lose = chance(fault * 2), err = !lose && chance(fault * 2);
            if (!lose && o.kind == FZ_SEND) {
                if (bfo_engine_frame(&P.e, 0, r, g->frame, g->len, F.now) == BFO_ERR_AGAIN)
                    goto idle;
            } else if (!lose && o.kind == FZ_WRITE) {
                memcpy((void *)(uintptr_t)g->raddr, o.mem, o.len);
            }
            g->token = 0;
            rec_complete(k, !lose && !err);
            if (!lose && !err && chance(3))
                rec_heard(h, r);
        } else if (what <= 5) { /* the oldest of the peer's operations on rail r reaches rank 0 */
            int i;
            for (i = 0; i < P.nq && P.q[i].rail != r; i++)
                ;
            if (i == P.nq)
                goto idle;
            p_op *o = &P.q[i];
            int lose = chance(fault * 2), err = !lose && chance(fault * 2);
            if (!lose && o->kind == FZ_SEND) {
                if (rec_frame(h, r, o->frame, o->len) == BFO_ERR_AGAIN)
                    goto idle;
            } else if (!lose && o->kind == FZ_WRITE) {
                memcpy((void *)(uintptr_t)o->raddr, o->local, o->len);
            } else if (!lose && o->kind == FZ_READ) {
                memcpy(o->local, (const void *)(uintptr_t)o->raddr, o->len);
            }
            p_complete(i, !lose && !err);
        } else if (what == 6 && chance(fault * 6)) {
            both_lose(h, r); /* the connection resets under both */
        } else {
        idle:
            /* time passes: mostly microseconds, now and then a heartbeat's worth */
            rec_progress(chance(40) ? 0xa5 /* 6 * 2^20 ns */ : chance(4) ? 0x8f : 0x5f);
            bfo_engine_progress(&P.e, F.now);
        }
    }
    return done;
}

static void engine_trace(const char *name, int h, int rdma0, int rdma1, const gmsg *m, int nm,
                         unsigned fault, uint64_t seed)
{
    char fname[96];
    int ok = exchange(h, rdma0, rdma1, m, nm, fault, seed);
    fz_finish(); /* the invariants hold at the end of the real run too */
    snprintf(fname, sizeof fname, "trace-%s-%llu", name, (unsigned long long)seed);
    fz_run(rec, nrec); /* and the script replays clean on its own */
    put_file("engine", fname, rec, nrec);
    printf("  engine/%s: %zu bytes, %s\n", fname, nrec, ok ? "every message arrived" : "cut short");
}

static void gen_engine(void)
{
    static const gmsg eager[] = { { 0, 2, 0 }, { 1, 1, 0 }, { 0, 3, 1 }, { 1, 3, 0 }, { 0, 0, 0 } };
    static const gmsg copy[] = { { 0, 5, 0 }, { 1, 6, 0 }, { 0, 4, 0 }, { 1, 2, 0 } };
    static const gmsg big[] = { { 0, 7, 0 }, { 1, 7, 0 }, { 0, 6, 1 }, { 1, 5, 0 } };
    static const gmsg mixed[] = { { 0, 1, 0 }, { 0, 6, 0 }, { 1, 7, 0 }, { 1, 2, 0 },
                                  { 0, 3, 1 }, { 1, 4, 0 } };
    static const gmsg many[] = { { 0, 2, 0 }, { 0, 2, 0 }, { 0, 2, 0 }, { 0, 2, 0 }, { 0, 2, 0 },
                                 { 0, 2, 0 }, { 1, 2, 0 } };
    for (uint64_t s = 1; s <= 3; s++) {
        engine_trace("eager", 1 + (int)(s & 1), BFO_RDMA_AUTO, BFO_RDMA_AUTO, eager, 5, 0, s);
        engine_trace("copy", 1, BFO_RDMA_OFF, BFO_RDMA_OFF, copy, 4, 0, s);
        engine_trace("get", 2, BFO_RDMA_AUTO, BFO_RDMA_GET, big, 4, 0, s);
        engine_trace("put", 1, BFO_RDMA_PUT, BFO_RDMA_PUT, big, 4, 0, s);
        engine_trace("unexpected", 1, BFO_RDMA_AUTO, BFO_RDMA_AUTO, many, 7, 0, s);
    }
    for (uint64_t s = 1; s <= 8; s++) {
        engine_trace("faults-copy", 1 + (int)(s & 1), BFO_RDMA_OFF, BFO_RDMA_OFF, mixed, 6, 5, s);
        engine_trace("faults-get", 1, BFO_RDMA_AUTO, BFO_RDMA_AUTO, mixed, 6, 5, s);
        engine_trace("faults-put", 2, BFO_RDMA_PUT, BFO_RDMA_PUT, big, 4, 16, s);
    }
}


/* ------------------------------------------------------------- tcp */

static uint8_t ts[8192];
static size_t nts;

static void ts_u8(unsigned v)
{
    if (nts < sizeof ts)
        ts[nts++] = (uint8_t)v;
}
static void ts_bytes(const uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        ts_u8(b[i]);
}
static void ts_data(unsigned a, const uint8_t *b, size_t n) /* n < 256 */
{
    ts_u8(TF_DATA);
    ts_u8(a);
    ts_u8((unsigned)n);
    ts_bytes(b, n);
}
static void ts_raw(const uint8_t *b, size_t n) /* in pieces of at most 256 */
{
    while (n) {
        size_t c = n > 256 ? 256 : n;
        ts_u8(TF_RAW);
        ts_u8((unsigned)(c - 1));
        ts_bytes(b, c);
        b += c;
        n -= c;
    }
}
static void ts_cmd(unsigned cmd, unsigned arg)
{
    ts_u8(cmd);
    ts_u8(arg);
}
static size_t tcp_hdr(uint8_t *h, uint32_t len, int kind, uint64_t seq, uint64_t ack, int flags)
{
    bfo_put32(h, len);
    bfo_put16(h + 4, (uint16_t)BFO_TCP_MAGIC);
    h[6] = (uint8_t)kind;
    h[7] = (uint8_t)flags;
    bfo_put64(h + 8, seq);
    bfo_put64(h + 16, ack);
    return BFO_TCP_HDR_SIZE;
}
static void ts_put(const char *name)
{
    put_file("tcp_frames", name, ts, nts);
    nts = 0;
}

/* n frames kept from the engine exchanges, from the k-th on, as a byte
 * stream (sequence numbers from 1) */
static size_t tcp_stream(uint8_t *out, int k, int n)
{
    size_t o = 0;
    for (int i = 0; i < n; i++) {
        const int j = (k + i) % nkept;
        o += tcp_hdr(out + o, (uint32_t)kept_len[j], BFO_TCP_K_DATA, (uint64_t)i + 1, 0, 0);
        memcpy(out + o, kept[j], kept_len[j]);
        o += kept_len[j];
    }
    return o;
}

static void gen_tcp(void)
{
    static uint8_t st[8192];
    uint8_t h[BFO_TCP_HDR_SIZE];
    char name[64];
    size_t n;
    if (nkept < 20)
        abort();
    /* the exchanges' frames as DATA commands, the backend sending too */
    for (int v = 0; v < 4; v++) {
        for (int i = 0; i < 24; i++) {
            int j = (v * 37 + i) % nkept;
            ts_data(0, kept[j], kept_len[j]);
            if (i % 3 == v % 3)
                ts_cmd(TF_POST, (unsigned)(i * 29 + v));
            if (i % 5 == 4)
                ts_cmd(TF_ACK, 0);
            if (i % 4 == 1)
                ts_cmd(TF_PROGRESS, 3);
        }
        snprintf(name, sizeof name, "data-%d", v);
        ts_put(name);
    }
    /* the same as a raw byte stream, cut in pieces of every size */
    static const size_t cut[] = { 1, 5, 24, 61, 200, 256 };
    for (int v = 0; v < 6; v++) {
        n = tcp_stream(st, v * 11, 16);
        for (size_t o = 0; o < n; o += cut[v]) {
            size_t c = n - o < cut[v] ? n - o : cut[v];
            ts_raw(st + o, c);
            if (v % 2)
                ts_cmd(TF_POST, (unsigned)o);
        }
        snprintf(name, sizeof name, "stream-cut-%zu", cut[v]);
        ts_put(name);
    }
    /* back-pressure: the engine asks for frames again, then takes them */
    ts_cmd(TF_POST, 20);
    ts_cmd(TF_ANSWER, 1 | (3 << 4));
    for (int i = 0; i < 8; i++)
        ts_data(i & 1, kept[i], kept_len[i]);
    ts_cmd(TF_PROGRESS, 7);
    ts_cmd(TF_ACK, 2);
    ts_put("backpressure");
    /* frames the engine calls stale, then one it refuses */
    ts_cmd(TF_ANSWER, 2);
    for (int i = 0; i < 4; i++)
        ts_data(0, kept[i + 10], kept_len[i + 10]);
    ts_cmd(TF_ANSWER, 3);
    ts_data(0, kept[20], kept_len[20]);
    ts_data(0, kept[21], kept_len[21]);
    ts_put("stale-then-protocol");
    /* malformed framing, each after a good frame */
    for (int v = 0; v < 9; v++) {
        static const char *const what[] = { "bad-magic", "too-long", "seq-gap", "ack-beyond",
                                            "ack-with-seq", "hello-again", "truncated-eof",
                                            "disconnect", "zero-length" };
        ts_data(0, kept[v], kept_len[v]);
        ts_cmd(TF_POST, 9);
        ts_cmd(TF_PROGRESS, 2);
        switch (v) {
        case 0:
            tcp_hdr(h, 8, BFO_TCP_K_DATA, 2, 0, 0);
            h[4] ^= 0xff;
            ts_raw(h, sizeof h);
            break;
        case 1: ts_data(0x40, NULL, 0); break;
        case 2: ts_data(0x08, kept[v + 1], kept_len[v + 1]); break;
        case 3: ts_data(0x02 | 0x10, kept[v + 1], kept_len[v + 1]); break;
        case 4: ts_cmd(TF_ACK, 0x10); break;
        case 5: {
            uint8_t hello[BFO_TCP_HDR_SIZE + BFO_TCP_HELLO_SIZE] = { 0 };
            tcp_hdr(hello, BFO_TCP_HELLO_SIZE, BFO_TCP_K_HELLO, 0, 0, 0);
            ts_raw(hello, sizeof hello);
            break;
        }
        case 6:
            tcp_hdr(h, 100, BFO_TCP_K_DATA, 2, 0, 0);
            ts_raw(h, sizeof h);
            ts_raw(kept[v], 30);
            ts_u8(TF_SHUTDOWN);
            break;
        case 7: ts_u8(TF_DISCONNECT); break;
        case 8:
            tcp_hdr(h, 0, BFO_TCP_K_DATA, 2, 0, 0);
            ts_raw(h, sizeof h);
            break;
        }
        ts_cmd(TF_PROGRESS, 4);
        ts_put(what[v]);
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gen_corpus OUTDIR\n");
        return 2;
    }
    g_out = argv[1];
    gen_wire();
    gen_engine();
    gen_tcp();
    printf("gen_corpus: %u files, %zu bytes under %s\n", g_written, g_bytes, g_out);
    free(P.mem);
    free(F.mem);
    return 0;
}
