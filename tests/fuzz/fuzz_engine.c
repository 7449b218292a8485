// SPDX-License-Identifier: BSD-3-Clause
/* fuzz_engine.c - one engine (rank 0 of 3) whose peers are the fuzz input.
 *
 * The input is a script of commands, one byte each and its arguments:
 * frames from peer 1 or 2 on any rail (the header bytes as given, the
 * payload made up: byte j of a frame from peer p at message offset o is
 * fz_pattern(p, o + j)), completions of the engine's own operations (ok or
 * failed, in any order), rail events, back-pressure of the transport (posts
 * or connects refused), liveness, time passing (a fake clock: timers fire),
 * and the engine's own isends and irecvs (eager, copy, RDMA GET and PUT:
 * rail 1 can RDMA, rail 0 cannot).  The transport is this file's: it holds
 * what the engine posts until the script completes it, and checks every
 * post.  At the end every operation fails, every rail errs and the clock
 * runs until no request is left.  The script's first byte is the engine's
 * RDMA mode (bfo_config.rdma: auto, GET, PUT, off).
 *
 * What must hold, beyond no crash and no sanitizer report:
 *   - every frame the engine sends parses, and its payload is the right
 *     piece of a live send's buffer (MATCH and RNDV from offset 0, FRAG
 *     from its offset); RDMA only on rail 1, within a live registration of
 *     a request that is not complete; nothing deregistered twice;
 *   - the engine's memory is what init gave it: no pool beyond its size,
 *     operations held by the transport are never recycled, the transport
 *     never holds more than max_ops, and at the end (every request
 *     complete) every operation, handle, control slot and registration is
 *     back, and no out-of-order buffer is left;
 *   - nothing delivered that was not sent: a receive buffer holds, at each
 *     position i, either its initial zero or fz_pattern(source, i) (what the
 *     source sent for that position); nothing past the message; status,
 *     length, source and tag agree with what was asked; a send's buffer is
 *     never written;
 *   - no hang: the script is bounded, and at the end every request
 *     completes (delivered, or BFO_ERR_PEER_UNREACHABLE, or
 *     BFO_ERR_PEER_LEFT after the peer's BYE: a frame of the input) within 20 s of fake
 *     time once the transport fails everything; libFuzzer's -timeout catches
 *     a loop inside one call.
 *
 * tests/fuzz/gen_corpus.c writes seeds with this file's fz_* calls: real
 * exchanges with a second engine as the peer, recorded as scripts.
 */
#include <string.h>

#include "bfo_engine.h"
#include "fuzz.h"

#define FZ_RANKS 3
#define FZ_RAILS 2
#define FZ_RDMA_RAIL 1
#define FZ_NREQ 10           /* request slots of the script (the engine has 8) */
#define FZ_BUF 1024          /* each slot's buffer */
#define FZ_PEND 256          /* operations the transport can hold */
#define FZ_REGS 256          /* registrations in one run */
#define FZ_MAXPAY 400        /* payload bytes of a scripted frame */
#define FZ_DONE 8            /* completed tokens kept, to complete again (stale) */

/* Commands (the first byte, modulo FZ_NCMD). */
enum {
    FZ_C_FRAME,
    FZ_C_FRAME2, /* the same, twice as likely */
    FZ_C_COMPLETE,
    FZ_C_COMPLETE_N,
    FZ_C_RAIL_EVENT,
    FZ_C_TRANSPORT,
    FZ_C_PROGRESS,
    FZ_C_HEARD,
    FZ_C_ISEND,
    FZ_C_IRECV,
    FZ_C_REFUSE,
    FZ_C_FORGED,
    FZ_NCMD
};

static const size_t fz_sizes[8] = { 0, 1, 20, 64, 65, 150, 300, 1000 };

/* Byte i of every message from peer p; never 0 (a receive buffer's initial
 * value), and different for each peer. */
static inline uint8_t fz_pattern(int p, uint64_t i)
{
    return (uint8_t)(0x80 | ((i * 37 + (i >> 7) * 5 + (uint64_t)p * 11) & 0x7f));
}

/* Byte i of send slot s's buffer. */
static inline uint8_t fz_spattern(int s, size_t i) { return (uint8_t)(i * 13 + (size_t)s * 29 + 1); }

enum { FZ_SEND, FZ_WRITE, FZ_READ };

typedef struct fz_op {
    uint64_t token;
    int peer, rail, kind, type;
    const uint8_t *mem; /* SEND: its payload (or NULL); WRITE, READ: the local memory */
    size_t len;
} fz_op;

typedef struct fz_req {
    bfo_request r;
    int active, kind, peer, ctx, tag, checked, cancelled;
    size_t cap;
} fz_req;

typedef struct fz_state {
    bfo_engine e;
    bfo_config cfg;
    bfo_backend be;
    void *mem;
    size_t mem_len;
    uint64_t now;
    fz_op pend[FZ_PEND];
    int npend;
    struct { const uint8_t *base; size_t len; uint64_t key; int live; } reg[FZ_REGS];
    int nreg, regs_live;
    uint64_t next_key;
    int connect_req[FZ_RANKS][FZ_RAILS], disc[FZ_RANKS][FZ_RAILS];
    int refuse_posts, refuse_connects, refuse_reg;
    uint64_t done[FZ_DONE];
    int ndone;
    fz_req req[FZ_NREQ];
    uint8_t buf[FZ_NREQ][FZ_BUF];
    uint8_t frame[BFO_MAX_HDR_SIZE + FZ_MAXPAY];
    uint8_t post[BFO_MAX_HDR_SIZE + FZ_BUF];
} fz_state;

static fz_state F;

/* FZ_TRACE=1 in the environment: every command on stderr (to read a crash). */
static int fz_tracing = -1;
#define FZ_TRACE(...)                                                           \
    do {                                                                        \
        if (fz_tracing < 0)                                                     \
            fz_tracing = getenv("FZ_TRACE") != NULL;                            \
        if (fz_tracing) {                                                       \
            fprintf(stderr, "[%llu] ", (unsigned long long)F.now);              \
            fprintf(stderr, __VA_ARGS__);                                       \
            fputc('\n', stderr);                                                \
        }                                                                       \
    } while (0)

/* ------------------------------------------------------------ transport */

/* The slot whose buffer holds [p, p + len), or -1. */
FUZZ_NOCOV static int fz_slot_of(const void *p, size_t len)
{
    const uint8_t *b = (const uint8_t *)p;
    for (int s = 0; s < FZ_NREQ; s++)
        if (b >= F.buf[s] && b <= F.buf[s] + FZ_BUF && len <= (size_t)(F.buf[s] + FZ_BUF - b))
            return s;
    return -1;
}

/* A request's memory is in use by the transport: the request is alive. */
FUZZ_NOCOV static void fz_check_live(int s, int kind, const char *what)
{
    FUZZ_CHECK(s >= 0, "%s: memory outside every request buffer", what);
    FUZZ_CHECK(F.req[s].active && F.req[s].kind == kind && !bfo_test(&F.req[s].r),
               "%s: slot %d is not a live %s (active %d, complete %d)", what, s,
               kind == BFO_REQ_SEND ? "send" : "receive", F.req[s].active, F.req[s].r.complete);
}

/* Covered by a live registration. */
FUZZ_NOCOV static int fz_registered(const uint8_t *p, size_t len)
{
    for (int i = 0; i < F.nreg; i++)
        if (F.reg[i].live && p >= F.reg[i].base && p <= F.reg[i].base + F.reg[i].len &&
            len <= (size_t)(F.reg[i].base + F.reg[i].len - p))
            return 1;
    return 0;
}

FUZZ_NOCOV static void fz_hold(uint64_t token, int peer, int rail, int kind, int type, const uint8_t *mem,
                    size_t len)
{
    FUZZ_CHECK(peer >= 1 && peer < FZ_RANKS && rail >= 0 && rail < FZ_RAILS, "post to peer %d rail %d",
               peer, rail);
    FUZZ_CHECK(F.npend < FZ_PEND && F.npend < F.e.cfg.max_ops, "the transport holds %d operations",
               F.npend);
    for (int i = 0; i < F.npend; i++)
        FUZZ_CHECK(F.pend[i].token != token, "token %llx posted twice", (unsigned long long)token);
    fz_op *o = &F.pend[F.npend++];
    o->token = token;
    o->peer = peer;
    o->rail = rail;
    o->kind = kind;
    o->type = type;
    o->mem = mem;
    o->len = len;
}

static int fz_refused(void)
{
    if (F.refuse_posts > 0) {
        F.refuse_posts--;
        return 1;
    }
    return 0;
}

static int fz_post_send(void *ctx, int peer, int rail, const bfo_iov *iov, int iovcnt, uint64_t token)
{
    bfo_frame f;
    size_t len = 0;
    (void)ctx;
    FUZZ_CHECK(iovcnt >= 1 && iovcnt <= 2, "iovcnt %d", iovcnt);
    for (int i = 0; i < iovcnt; i++) {
        FUZZ_CHECK(len + iov[i].len <= sizeof F.post, "frame of %zu bytes", len + iov[i].len);
        memcpy(F.post + len, iov[i].base, iov[i].len);
        len += iov[i].len;
    }
    int rc = bfo_frame_parse(&f, F.post, len);
    FUZZ_CHECK(rc == BFO_OK, "the engine sent a frame that does not parse: %s (type 0x%02x, %zu bytes)",
               bfo_errname(rc), F.post[0], len);
    const uint8_t *pay = iovcnt == 2 ? (const uint8_t *)iov[1].base : NULL;
    FUZZ_CHECK(f.payload_len == (pay ? iov[1].len : 0), "payload not in the second piece");
    if (pay && bfo_frag_has_keys(f.type)) { /* the keys of a live registration, one per rail */
        uint64_t raddr = f.type == BFO_FRAG_RGET ? f.h.rget.raddr : f.h.put.raddr;
        int g = -1;
        for (int i = 0; i < F.nreg && g < 0; i++)
            if (F.reg[i].live && raddr >= (uint64_t)(uintptr_t)F.reg[i].base &&
                raddr <= (uint64_t)(uintptr_t)F.reg[i].base + F.reg[i].len)
                g = i;
        FUZZ_CHECK(g >= 0, "type 0x%02x names memory not registered", f.type);
        FUZZ_CHECK(f.payload_len == 4 * (size_t)F.cfg.nrails, "%zu bytes of keys for %d rails",
                   f.payload_len, F.cfg.nrails);
        for (int r = 0; r < F.cfg.nrails; r++)
            FUZZ_CHECK(bfo_get32(pay + 4 * r) == (r == FZ_RDMA_RAIL ? (uint32_t)F.reg[g].key : 0u),
                       "type 0x%02x: rail %d's key is not its registration's", f.type, r);
        pay = NULL;
    }
    if (pay) { /* the right piece of a live send */
        int s = fz_slot_of(pay, f.payload_len);
        fz_check_live(s, BFO_REQ_SEND, "payload");
        size_t pos = (size_t)(pay - F.buf[s]);
        uint64_t want = f.type == BFO_FRAG_FRAG ? f.h.frag.offset : 0;
        FUZZ_CHECK(pos == want, "type 0x%02x payload from offset %zu, header says %llu", f.type, pos,
                   (unsigned long long)want);
        FUZZ_CHECK(pos + f.payload_len <= F.req[s].cap, "payload beyond the message");
        if (f.type == BFO_FRAG_MATCH)
            FUZZ_CHECK(f.payload_len == F.req[s].cap && f.h.match.src == 0 &&
                           (int)f.h.match.tag == F.req[s].tag && f.h.match.ctx == (uint32_t)F.req[s].ctx,
                       "MATCH header does not describe slot %d", s);
        if (f.type == BFO_FRAG_RNDV)
            FUZZ_CHECK(f.h.rndv.msg_len == F.req[s].cap && f.h.rndv.src == 0,
                       "RNDV header does not describe slot %d", s);
    }
    if (fz_refused())
        return -1;
    fz_hold(token, peer, rail, FZ_SEND, f.type, pay, f.payload_len);
    FZ_TRACE("  post type 0x%02x to %d rail %d (op %u)", f.type, peer, rail, (unsigned)token);
    return 0;
}

static int fz_post_write(void *ctx, int peer, int rail, const void *local, size_t len, uint64_t raddr,
                         uint32_t key, uint64_t token)
{
    (void)ctx;
    (void)raddr;
    (void)key; /* the peer's: the fuzzer's frames say what they like */
    FUZZ_CHECK(rail == FZ_RDMA_RAIL, "RDMA write on rail %d", rail);
    fz_check_live(fz_slot_of(local, len), BFO_REQ_SEND, "write");
    FUZZ_CHECK(fz_registered((const uint8_t *)local, len), "write from memory not registered");
    if (fz_refused())
        return -1;
    fz_hold(token, peer, rail, FZ_WRITE, 0, (const uint8_t *)local, len);
    return 0;
}

static int fz_post_read(void *ctx, int peer, int rail, void *local, size_t len, uint64_t raddr,
                        uint32_t key, uint64_t token)
{
    (void)ctx;
    (void)raddr;
    (void)key;
    FUZZ_CHECK(rail == FZ_RDMA_RAIL, "RDMA read on rail %d", rail);
    fz_check_live(fz_slot_of(local, len), BFO_REQ_RECV, "read");
    FUZZ_CHECK(fz_registered((const uint8_t *)local, len), "read into memory not registered");
    if (fz_refused())
        return -1;
    fz_hold(token, peer, rail, FZ_READ, 0, (const uint8_t *)local, len);
    return 0;
}

static int fz_reg_mem(void *ctx, void *buf, size_t len, unsigned access, uint64_t *raddr, uint32_t *keys,
                      uint64_t *handle)
{
    (void)ctx;
    FUZZ_CHECK(access == 0 || access == BFO_MEM_REMOTE_READ || access == BFO_MEM_REMOTE_WRITE ||
                   access == BFO_MEM_LOCAL_WRITE || access == (BFO_MEM_REMOTE_WRITE | BFO_MEM_LOCAL_WRITE),
               "registers for a role no message has (access %u)", access);
    int s = fz_slot_of(buf, len);
    FUZZ_CHECK(s >= 0 && F.req[s].active && (const uint8_t *)buf == F.buf[s] && len == F.req[s].cap,
               "registers something else than a request's buffer");
    if (F.refuse_reg || F.nreg == FZ_REGS)
        return -1;
    F.reg[F.nreg].base = (const uint8_t *)buf;
    F.reg[F.nreg].len = len;
    F.reg[F.nreg].key = ++F.next_key;
    F.reg[F.nreg].live = 1;
    *raddr = (uint64_t)(uintptr_t)buf;
    keys[FZ_RDMA_RAIL] = (uint32_t)F.reg[F.nreg].key;
    *handle = F.reg[F.nreg].key;
    F.nreg++;
    F.regs_live++;
    return 0;
}

static void fz_dereg_mem(void *ctx, uint64_t handle)
{
    (void)ctx;
    for (int i = 0; i < F.nreg; i++)
        if (F.reg[i].key == handle) {
            FUZZ_CHECK(F.reg[i].live, "key %llu deregistered twice", (unsigned long long)handle);
            F.reg[i].live = 0;
            F.regs_live--;
            return;
        }
    FUZZ_CHECK(0, "key %llu never registered", (unsigned long long)handle);
}

static int fz_connect(void *ctx, int peer, int rail)
{
    (void)ctx;
    FUZZ_CHECK(peer >= 1 && peer < FZ_RANKS && rail >= 0 && rail < FZ_RAILS, "connect %d %d", peer,
               rail);
    if (F.refuse_connects)
        return -1;
    F.connect_req[peer][rail] = 1;
    return 0;
}

static void fz_disconnect(void *ctx, int peer, int rail)
{
    (void)ctx;
    FUZZ_CHECK(peer >= 1 && peer < FZ_RANKS && rail >= 0 && rail < FZ_RAILS, "disconnect %d %d",
               peer, rail);
    F.disc[peer][rail] = 1;
}

static unsigned fz_caps(void *ctx, int rail)
{
    (void)ctx;
    return rail == FZ_RDMA_RAIL ? BFO_CAP_RDMA : 0;
}

static unsigned fz_bw(void *ctx, int rail)
{
    (void)ctx;
    return rail == FZ_RDMA_RAIL ? 3 : 1;
}

/* ------------------------------------------------------------ checks */

/* The engine's memory stays what init gave it. */
FUZZ_NOCOV static void fz_check_engine(void)
{
    const bfo_engine *e = &F.e;
    int inflight = 0;
    FUZZ_CHECK(e->ops_in_use >= 0 && e->ops_in_use <= e->cfg.max_ops, "ops %d", e->ops_in_use);
    FUZZ_CHECK(e->uxm_in_use >= 0 && e->uxm_in_use <= e->cfg.max_unexpected, "unexpected %d",
               e->uxm_in_use);
    FUZZ_CHECK(e->slots_in_use >= 0 && e->slots_in_use <= e->cfg.max_requests, "handles %d",
               e->slots_in_use);
    FUZZ_CHECK(e->ctl_in_use >= 0 && e->ctl_in_use <= bfo__ctl_budget(&e->cfg), "control %d",
               e->ctl_in_use);
    for (int p = 0; p < FZ_RANKS; p++)
        for (int r = 0; r < FZ_RAILS; r++) {
            FUZZ_CHECK(e->peers[p].rail[r].rate.inflight >= 0, "peer %d rail %d inflight %d", p, r,
                       e->peers[p].rail[r].rate.inflight);
            inflight += e->peers[p].rail[r].rate.inflight;
        }
    FUZZ_CHECK(inflight == F.npend, "the engine counts %d operations in flight, the transport holds %d",
               inflight, F.npend);
    for (int i = 0; i < F.npend; i++) { /* what the transport holds is not recycled */
        uint32_t idx = (uint32_t)F.pend[i].token, gen = (uint32_t)(F.pend[i].token >> 32);
        if (idx & BFO__LANE_BIT) { /* the lane's (an eager MATCH without an op): its live send */
            const uint32_t s = idx & ~BFO__LANE_BIT;
            FUZZ_CHECK(s < (uint32_t)e->slotp.n && bfo__slot_at(e, s)->gen == gen && bfo__slot_at(e, s)->req &&
                           bfo__slot_at(e, s)->req->lane && bfo__slot_at(e, s)->req->kind == BFO_REQ_SEND,
                       "the send %u of a lane token recycled while the transport holds its MATCH", s);
            continue;
        }
        FUZZ_CHECK(idx < (uint32_t)e->opp.live && bfo__op_at(e, idx)->gen == gen && bfo__op_at(e, idx)->posted,
                   "operation %u recycled while the transport holds it", idx);
    }
}

/* A request that completed: what it says and what its buffer holds. */
FUZZ_NOCOV static void fz_check_req(int s)
{
    fz_req *q = &F.req[s];
    const bfo_request *r = &q->r;
    if (q->kind == BFO_REQ_SEND) {
        FUZZ_CHECK(r->status == BFO_OK || r->status == BFO_ERR_PEER_UNREACHABLE ||
                       r->status == BFO_ERR_PEER_LEFT, "send status %s",
                   bfo_errname(r->status));
        for (size_t i = 0; i < q->cap; i++)
            FUZZ_CHECK(F.buf[s][i] == fz_spattern(s, i), "send buffer %d written at %zu", s, i);
        return;
    }
    int got = r->status == BFO_OK || r->status == BFO_ERR_TRUNCATE;
    size_t end = q->cap;
    FUZZ_CHECK(got || r->status == BFO_ERR_PEER_UNREACHABLE || r->status == BFO_ERR_PEER_LEFT ||
                   (q->cancelled && r->status == BFO_ERR_CANCELLED),
               "receive status %s",
               bfo_errname(r->status));
    if (got) {
        FUZZ_CHECK(r->status == BFO_OK ? r->length <= q->cap : r->length > q->cap,
                   "status %s with length %zu into %zu", bfo_errname(r->status), r->length, q->cap);
        /* the engine peer is the connection's; the envelope's source is
         * whatever the (hostile) peer wrote, and only a receive from one
         * peer pins it */
        FUZZ_CHECK(r->peer >= 1 && r->peer < FZ_RANKS &&
                       (q->peer == BFO_ANY_SOURCE || (q->peer == r->peer && r->source == q->peer)),
                   "peer %d (source %d) for a receive from %d", r->peer, r->source, q->peer);
        FUZZ_CHECK(q->tag == BFO_ANY_TAG || q->tag == r->tag, "tag %d for a receive of tag %d",
                   r->tag, q->tag);
        if (r->length < end)
            end = r->length;
    }
    for (size_t i = 0; i < q->cap; i++) {
        uint8_t b = F.buf[s][i];
        int src = r->peer;
        FUZZ_CHECK(b == 0 || (i < end && src >= 1 && src < FZ_RANKS && b == fz_pattern(src, i)),
                   "receive %d (from %d, status %s, length %zu, cap %zu) holds 0x%02x at %zu, "
                   "never sent there",
                   s, src, bfo_errname(r->status), r->length, q->cap, b, i);
    }
}

FUZZ_NOCOV static void fz_after(void)
{
    fz_check_engine();
    for (int s = 0; s < FZ_NREQ; s++)
        if (F.req[s].active && !F.req[s].checked && bfo_test(&F.req[s].r)) {
            F.req[s].checked = 1;
            fz_check_req(s);
        }
}

/* ------------------------------------------------------------ the calls */

/* A fresh engine; rdma is its bfo_config.rdma (the script's first byte). */
void fz_start(int rdma);
void fz_start(int rdma)
{
    if (!F.mem) {
        memset(&F.cfg, 0, sizeof F.cfg);
        F.cfg.rank = 0;
        F.cfg.nranks = FZ_RANKS;
        F.cfg.nrails = FZ_RAILS;
        F.cfg.max_requests = 8;
        F.cfg.max_unexpected = 4;
        F.cfg.eager_limit = 64;
        F.cfg.frag_size = 96;
        F.cfg.frag_pipeline = 2;
        F.cfg.rdma_min = 128;
        F.cfg.max_reconnects = 4;
        /* rails on first use (the engine's default): the input decides
         * which peers are ever needed, so DORMANT rails and peers never
         * needed are reached too (fz_all_done) */
        F.mem_len = bfo_engine_mem_size(&F.cfg);
        F.mem = malloc(F.mem_len);
        FUZZ_CHECK(F.mem != NULL, "out of memory");
    }
    void *mem = F.mem;
    size_t mem_len = F.mem_len;
    bfo_config cfg = F.cfg;
    memset(&F, 0, sizeof F);
    F.mem = mem;
    F.mem_len = mem_len;
    F.cfg = cfg;
    F.cfg.rdma = rdma & 3;
    F.now = 1000000;
    F.be.post_send = fz_post_send;
    F.be.post_write = fz_post_write;
    F.be.post_read = fz_post_read;
    F.be.reg_mem = fz_reg_mem;
    F.be.dereg_mem = fz_dereg_mem;
    F.be.connect = fz_connect;
    F.be.disconnect = fz_disconnect;
    F.be.rail_caps = fz_caps;
    F.be.rail_bandwidth = fz_bw;
    memset(F.mem, 0xdb, F.mem_len); /* init must not rely on zeroed memory */
    FUZZ_CHECK(bfo_engine_init(&F.e, &F.cfg, &F.be, F.mem, F.mem_len, F.now) == BFO_OK, "init");
    fz_after();
}

/* A frame from peer on rail: hdr[0..hl) as given, then pl bytes of the
 * peer's pattern from the message offset the header names (a FRAG's
 * offset, else 0).  Header bytes past the type's header size are ignored:
 * the payload is always the pattern.  Returns what the engine returned. */
int fz_frame(int peer, int rail, const uint8_t *hdr, size_t hl, size_t pl);
int fz_frame(int peer, int rail, const uint8_t *hdr, size_t hl, size_t pl)
{
    uint64_t base = 0;
    size_t hs = hl ? bfo_frag_hdr_size(hdr[0]) : 0;
    int rc;
    if (hs && hl > hs)
        hl = hs;
    if (hl > BFO_MAX_HDR_SIZE)
        hl = BFO_MAX_HDR_SIZE;
    if (pl > FZ_MAXPAY)
        pl = FZ_MAXPAY;
    memcpy(F.frame, hdr, hl);
    if (hl >= BFO_HDR_FRAG_SIZE && hdr[0] == BFO_FRAG_FRAG)
        base = bfo_get64(hdr + 16);
    for (size_t j = 0; j < pl; j++)
        F.frame[hl + j] = fz_pattern(peer, base + j);
    rc = bfo_engine_frame(&F.e, peer, rail, F.frame, hl + pl, F.now);
    FZ_TRACE("frame from %d rail %d: type 0x%02x, %zu + %zu bytes: %s", peer, rail,
             hl ? F.frame[0] : 0, hl, pl, bfo_errname(rc));
    FUZZ_CHECK(rc == BFO_OK || rc == BFO_ERR_AGAIN || rc == BFO_ERR_STALE || rc == BFO_ERR_PROTOCOL ||
                   rc == BFO_ERR_INVALID || rc == BFO_ERR_PEER_UNREACHABLE ||
                   rc == BFO_ERR_TRUNCATED || rc == BFO_ERR_BAD_TYPE || rc == BFO_ERR_BAD_FLAGS ||
                   rc == BFO_ERR_BAD_FIELD || rc == BFO_ERR_BAD_LENGTH,
               "bfo_engine_frame returned %d", rc);
    if (rail < 0 || rail >= FZ_RAILS)
        FUZZ_CHECK(rc == BFO_ERR_INVALID, "a frame on rail %d: %s", rail, bfo_errname(rc));
    fz_after();
    return rc;
}

/* The transport completes the k-th operation it holds (a READ that
 * succeeds fills the memory with what the peer sent for it). */
void fz_complete(int k, int ok);
void fz_complete(int k, int ok)
{
    fz_op o;
    if (k < 0 || k >= F.npend)
        return;
    o = F.pend[k];
    memmove(&F.pend[k], &F.pend[k + 1], (size_t)(F.npend - k - 1) * sizeof F.pend[0]);
    F.npend--;
    if (o.mem) {
        int s = fz_slot_of(o.mem, o.len);
        fz_check_live(s, o.kind == FZ_READ ? BFO_REQ_RECV : BFO_REQ_SEND, "completion");
        if (o.kind != FZ_SEND)
            FUZZ_CHECK(fz_registered(o.mem, o.len), "RDMA completes on memory given back");
        if (o.kind == FZ_READ && ok) {
            size_t pos = (size_t)(o.mem - F.buf[s]);
            for (size_t j = 0; j < o.len; j++)
                F.buf[s][pos + j] = fz_pattern(F.req[s].r.source, pos + j);
        }
    }
    F.done[F.ndone++ % FZ_DONE] = o.token;
    FZ_TRACE("complete %s type 0x%02x to %d rail %d (op %u): %s", o.kind == FZ_SEND ? "send"
             : o.kind == FZ_WRITE ? "write" : "read", o.type, o.peer, o.rail, (unsigned)o.token,
             ok ? "ok" : "failed");
    bfo_engine_completion(&F.e, o.token, ok);
    fz_after();
}

/* A rail event as a transport reports it: peer BFO_ALL_PEERS, 1, 2 or one
 * out of range; rail 0..2 (2 is out of range). */
void fz_rail_event(int peer, int rail, int ev);
void fz_rail_event(int peer, int rail, int ev)
{
    FZ_TRACE("rail event %s peer %d rail %d", bfo_event_name(ev), peer, rail);
    bfo_engine_rail_event(&F.e, peer, rail, ev, F.now);
    fz_after();
}

/* The transport does what it owes: answers the connect() requests (a set
 * bit of mask, by (peer - 1) * FZ_RAILS + rail: CONNECTED, else
 * CONNECT_FAILED) and drops the connections the engine disconnected
 * (RAIL_ERROR, then every operation on it fails). */
void fz_transport(unsigned mask);
void fz_transport(unsigned mask)
{
    for (int p = 1; p < FZ_RANKS; p++)
        for (int r = 0; r < FZ_RAILS; r++) {
            if (F.disc[p][r]) {
                F.disc[p][r] = 0;
                FZ_TRACE("transport: peer %d rail %d disconnected", p, r);
                bfo_engine_rail_event(&F.e, p, r, BFO_EV_RAIL_ERROR, F.now);
                for (int k = 0; k < F.npend;)
                    if (F.pend[k].peer == p && F.pend[k].rail == r)
                        fz_complete(k, 0);
                    else
                        k++;
            }
            if (F.connect_req[p][r]) {
                F.connect_req[p][r] = 0;
                FZ_TRACE("transport: peer %d rail %d %s", p, r,
                         (mask >> ((p - 1) * FZ_RAILS + r)) & 1 ? "connected" : "connect failed");
                bfo_engine_rail_event(&F.e, p, r,
                                      (mask >> ((p - 1) * FZ_RAILS + r)) & 1 ? BFO_EV_CONNECTED
                                                                             : BFO_EV_CONNECT_FAILED,
                                      F.now);
            }
        }
    fz_after();
}

/* Time passes (dt ns) and the timers run. */
void fz_progress(uint64_t dt);
void fz_progress(uint64_t dt)
{
    F.now += dt;
    FZ_TRACE("progress +%llu ns", (unsigned long long)dt);
    bfo_engine_progress(&F.e, F.now);
    fz_after();
}

void fz_heard(int peer, int rail);
void fz_heard(int peer, int rail)
{
    FZ_TRACE("heard peer %d rail %d", peer, rail);
    bfo_engine_rail_heard(&F.e, peer, rail, F.now);
    fz_after();
}

/* The script's own requests: slot s (busy slots are left alone). */
int fz_isend(int s, int peer, size_t len, int ctx, int tag);
int fz_isend(int s, int peer, size_t len, int ctx, int tag)
{
    fz_req *q = &F.req[s];
    int rc;
    if (q->active && !bfo_test(&q->r))
        return BFO_ERR_INVALID;
    if (peer == 0) /* to itself: no wire to play, and a rendezvous to itself rightly waits
                    * for a receive of the program's (test_engine_match and bfo sim cover it) */
        return BFO_ERR_INVALID;
    for (int i = 0; i < F.npend; i++) /* what the transport holds of this buffer */
        FUZZ_CHECK(!F.pend[i].mem || fz_slot_of(F.pend[i].mem, F.pend[i].len) != s,
                   "slot %d's request completed while the transport holds its memory", s);
    FUZZ_CHECK(!fz_registered(F.buf[s], 1), "slot %d's buffer is still registered", s);
    memset(q, 0, sizeof *q);
    for (size_t i = 0; i < FZ_BUF; i++)
        F.buf[s][i] = fz_spattern(s, i);
    q->kind = BFO_REQ_SEND;
    q->peer = peer;
    q->ctx = ctx;
    q->tag = tag;
    q->cap = len;
    q->active = 1; /* the engine may register the buffer inside */
    rc = bfo_isend(&F.e, &q->r, F.buf[s], len, peer, ctx, tag, F.now);
    FUZZ_CHECK(rc == BFO_OK || rc == BFO_ERR_INVALID || rc == BFO_ERR_NO_MEMORY ||
                   rc == BFO_ERR_PEER_UNREACHABLE || rc == BFO_ERR_PEER_LEFT,
               "bfo_isend: %d", rc);
    q->active = rc == BFO_OK || rc == BFO_ERR_PEER_UNREACHABLE || rc == BFO_ERR_PEER_LEFT;
    FZ_TRACE("isend slot %d to %d, %zu bytes, ctx %d tag %d: %s", s, peer, len, ctx, tag,
             bfo_errname(rc));
    if (rc == BFO_ERR_PEER_UNREACHABLE || rc == BFO_ERR_PEER_LEFT)
        FUZZ_CHECK(bfo_test(&q->r) && q->r.status == rc, "gone but not complete with that status");
    fz_after();
    return rc;
}

int fz_irecv(int s, int peer, size_t cap, int ctx, int tag);
int fz_irecv(int s, int peer, size_t cap, int ctx, int tag)
{
    fz_req *q = &F.req[s];
    int rc;
    if (q->active && !bfo_test(&q->r))
        return BFO_ERR_INVALID;
    for (int i = 0; i < F.npend; i++)
        FUZZ_CHECK(!F.pend[i].mem || fz_slot_of(F.pend[i].mem, F.pend[i].len) != s,
                   "slot %d's request completed while the transport holds its memory", s);
    FUZZ_CHECK(!fz_registered(F.buf[s], 1), "slot %d's buffer is still registered", s);
    memset(q, 0, sizeof *q);
    memset(F.buf[s], 0, FZ_BUF);
    q->kind = BFO_REQ_RECV;
    q->peer = peer;
    q->ctx = ctx;
    q->tag = tag;
    q->cap = cap;
    q->active = 1;
    rc = bfo_irecv(&F.e, &q->r, F.buf[s], cap, peer, ctx, tag, F.now);
    FZ_TRACE("irecv slot %d from %d, %zu bytes, ctx %d tag %d: %s", s, peer, cap, ctx, tag,
             bfo_errname(rc));
    FUZZ_CHECK(rc == BFO_OK || rc == BFO_ERR_INVALID || rc == BFO_ERR_NO_MEMORY ||
                   rc == BFO_ERR_PEER_UNREACHABLE || rc == BFO_ERR_PEER_LEFT,
               "bfo_irecv: %d", rc);
    q->active = rc == BFO_OK || rc == BFO_ERR_PEER_UNREACHABLE || rc == BFO_ERR_PEER_LEFT;
    fz_after();
    return rc;
}

/* A completion the transport should never make: a token it does not hold
 * (made up, or one it completed already).  The engine ignores it. */
void fz_forged(uint64_t token);
void fz_forged(uint64_t token)
{
    for (int i = 0; i < F.npend; i++)
        if (F.pend[i].token == token)
            return;
    FZ_TRACE("forged completion %llx", (unsigned long long)token);
    bfo_engine_completion(&F.e, token, 1);
    fz_after();
}

/* A receive naming peer p, which was never needed: it rightly waits (p may
 * send later; no rail of it can fail), so the finish cancels it. */
static void fz_cancel_waiting(int p)
{
    for (int s = 0; s < FZ_NREQ; s++)
        if (F.req[s].active && F.req[s].kind == BFO_REQ_RECV && F.req[s].peer == p &&
            !bfo_test(&F.req[s].r) && bfo_cancel(&F.e, &F.req[s].r, F.now) == BFO_OK)
            F.req[s].cancelled = 1;
}

/* Every request complete, the transport holds nothing, every peer given
 * up (what waited for a rail of it is gone too) or never needed (its rails
 * DORMANT: nothing of it to fail, and it is never given up; one whose
 * messages wait for an earlier one is needed, bfo__work_sweep), and none that
 * said BYE still owes messages sent before it (LEAVING: what came ahead of
 * them waits, out of order, until they come or the grace runs out). */
static int fz_all_done(void)
{
    for (int s = 0; s < FZ_NREQ; s++)
        if (F.req[s].active && !bfo_test(&F.req[s].r))
            return 0;
    for (int p = 1; p < FZ_RANKS; p++)
        if ((!F.e.peers[p].unreachable &&
             !(bfo__peer_fresh(&F.e, p) && F.e.peers[p].ooo_head < 0)) ||
            F.e.peers[p].left == BFO__LEFT_OWED)
            return 0;
    return F.npend == 0;
}

/* The end: the transport fails everything, every rail errs, the clock runs
 * until no request is left; then every pool entry must be back. */
void fz_finish(void);
void fz_finish(void)
{
    const bfo_engine *e = &F.e;
    F.refuse_posts = F.refuse_connects = 0;
    FZ_TRACE("finish: everything fails");
    for (int it = 0; it < 100 && !fz_all_done(); it++) {
        for (int p = 1; p < FZ_RANKS; p++)
            for (int r = 0; r < FZ_RAILS; r++)
                bfo_engine_rail_event(&F.e, p, r, BFO_EV_RAIL_ERROR, F.now);
        for (int n = 0; F.npend && n < 4 * FZ_PEND; n++)
            fz_complete(0, 0);
        memset(F.connect_req, 0, sizeof F.connect_req);
        memset(F.disc, 0, sizeof F.disc);
        fz_progress(250000000ull);
        for (int p = 1; p < FZ_RANKS; p++)
            if (bfo__peer_fresh(&F.e, p))
                fz_cancel_waiting(p);
    }
    for (int s = 0; s < FZ_NREQ; s++)
        FUZZ_CHECK(!F.req[s].active || bfo_test(&F.req[s].r),
                   "hang: slot %d (%s in state %d, peer %d, outstanding %d, handle %u/%u) not "
                   "complete 25 s after everything failed",
                   s, F.req[s].kind == BFO_REQ_SEND ? "send" : "receive", F.req[s].r.cs,
                   F.req[s].r.peer, F.req[s].r.outstanding, F.req[s].r.self.index,
                   F.req[s].r.self.gen);
    FUZZ_CHECK(fz_all_done(), "25 s after everything failed: %d operations held, peers unreachable %d %d",
               F.npend, F.e.peers[1].unreachable, F.e.peers[2].unreachable);
    FUZZ_CHECK(e->ops_in_use == 0 && e->ctl_in_use == 0, "leaked: %d operations (%d control)",
               e->ops_in_use, e->ctl_in_use);
    FUZZ_CHECK(e->slots_in_use == 0, "leaked: %d handles", e->slots_in_use);
    FUZZ_CHECK(F.regs_live == 0, "leaked: %d registrations", F.regs_live);
    FUZZ_CHECK(bfo__ooo_count(e) == 0 && e->posted_count == 0, "out-of-order or posted left");
    int ux = 0;
    for (int i = e->ux_head; i >= 0 && ux <= e->uxp.n; i = bfo__ux_at(e, i)->an)
        ux++;
    FUZZ_CHECK(ux == e->uxm_in_use, "unexpected buffers: %d in use, %d queued", e->uxm_in_use, ux);
    for (int s = 0; s < FZ_NREQ; s++)
        if (F.req[s].active)
            fz_check_req(s);
}

/* ------------------------------------------------------------ the script */

/* Runs a script: the RDMA mode (its first byte), the commands, fz_finish. */
void fz_run(const uint8_t *data, size_t size);
void fz_run(const uint8_t *data, size_t size)
{
    fuzz_in in = { data, size, 0 };
    fz_start(fuzz_u8(&in));
    for (int steps = 0; fuzz_more(&in) && steps < 4096; steps++) {
        uint8_t a, b, c;
        switch (fuzz_u8(&in) % FZ_NCMD) {
        case FZ_C_FRAME:
        case FZ_C_FRAME2: {
            size_t hl, got;
            a = fuzz_u8(&in);
            hl = fuzz_u8(&in) % (BFO_MAX_HDR_SIZE + 1);
            const uint8_t *h = fuzz_bytes(&in, hl, &got);
            size_t pl = fuzz_u16(&in) % (FZ_MAXPAY + 1);
            fz_frame(1 + (a & 1), (a >> 1) % 3, h, got, pl);
            break;
        }
        case FZ_C_COMPLETE:
            a = fuzz_u8(&in);
            b = fuzz_u8(&in);
            if (F.npend)
                fz_complete(a % F.npend, b & 1);
            break;
        case FZ_C_COMPLETE_N:
            a = fuzz_u8(&in);
            b = fuzz_u8(&in);
            for (int i = 0; i <= a % 8 && F.npend; i++)
                fz_complete(0, (b >> i) & 1);
            break;
        case FZ_C_RAIL_EVENT: {
            static const int peers[4] = { BFO_ALL_PEERS, 1, 2, 5 };
            /* CONNECTED_PROVEN: an authenticating transport's connection, admitted with no probe */
            static const int evs[4] = { BFO_EV_CONNECTED, BFO_EV_CONNECT_FAILED, BFO_EV_RAIL_ERROR,
                                        BFO_EV_CONNECTED_PROVEN };
            a = fuzz_u8(&in);
            fz_rail_event(peers[a & 3], (a >> 2) % 3, evs[(a >> 4) % 4]);
            break;
        }
        case FZ_C_TRANSPORT:
            fz_transport(fuzz_u8(&in));
            break;
        case FZ_C_PROGRESS:
            a = fuzz_u8(&in);
            fz_progress((uint64_t)((a & 15) + 1) << ((a >> 4) * 2));
            break;
        case FZ_C_HEARD:
            a = fuzz_u8(&in);
            fz_heard(a & 3, (a >> 2) % 3);
            break;
        case FZ_C_ISEND: {
            static const int peers[4] = { 1, 2, 0, 1 };
            a = fuzz_u8(&in);
            b = fuzz_u8(&in);
            c = fuzz_u8(&in);
            fz_isend(a % FZ_NREQ, peers[b & 3], fz_sizes[(b >> 2) & 7], c % 3, (c >> 2) & 3);
            break;
        }
        case FZ_C_IRECV: {
            static const int peers[4] = { BFO_ANY_SOURCE, 1, 2, BFO_ANY_SOURCE };
            static const int tags[4] = { BFO_ANY_TAG, 0, 1, 2 };
            a = fuzz_u8(&in);
            b = fuzz_u8(&in);
            c = fuzz_u8(&in);
            fz_irecv(a % FZ_NREQ, peers[b & 3], fz_sizes[(b >> 2) & 7], c % 3, tags[(c >> 2) & 3]);
            break;
        }
        case FZ_C_REFUSE:
            a = fuzz_u8(&in);
            F.refuse_posts = a & 3;
            FZ_TRACE("refuse %d posts, connects %d, registrations %d", a & 3, (a >> 2) & 1, (a >> 3) & 1);
            F.refuse_connects = (a >> 2) & 1;
            F.refuse_reg = (a >> 3) & 1;
            break;
        case FZ_C_FORGED: {
            a = fuzz_u8(&in);
            if ((a & 1) && F.ndone) {
                int n = F.ndone < FZ_DONE ? F.ndone : FZ_DONE;
                fz_forged(F.done[(a >> 1) % n]);
            } else {
                uint64_t t = 0;
                for (int i = 0; i < 8; i++)
                    t |= (uint64_t)fuzz_u8(&in) << (8 * i);
                fz_forged(t);
            }
            break;
        }
        }
    }
    fz_finish();
}

#ifndef FZ_NO_ENTRY
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_run(data, size);
    return 0;
}
#endif
