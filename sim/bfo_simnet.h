// SPDX-License-Identifier: BSD-3-Clause
/* bfo_simnet.h - a deterministic in-memory network for bfo engines.
 *
 * N engines in one process.  Every post becomes a message in flight; a
 * seeded scheduler picks which one moves next (so rails reorder against
 * each other, never within one rail), delivers it, and completes it at the
 * sender.  Faults are injected by operation count:
 *   type fault   the n-th fragment of a type (or any): lose (not delivered,
 *                completion error) or deliver-error (delivered, completion
 *                error);
 *   rail down    when the n-th operation of the run is posted, a rail fails:
 *                every message in flight on it completes with an error,
 *                delivered or not as the seed decides; later posts on it fail;
 *   rail up      when the n-th operation is posted, the rail comes back;
 *   path         when the n-th operation is posted, one direction of a rail
 *                (from one rank to another, or every direction) turns:
 *       silent   a silent drop (a cut cable, a firewall rule): frames vanish
 *                with no error and no completion, the frames in flight too,
 *                and so do the acknowledgements of frames going the other
 *                way (they are delivered, their sender never hears so).  A
 *                connection that lost something stays silent: what its
 *                sender posts later vanishes too.  Once the connection is
 *                replaced (its end asks to reconnect, or accepts a new
 *                connection) every such operation of that end completes with
 *                an error, as TCP completes unacknowledged frames when it
 *                closes a connection.  Connecting over a silent rail fails;
 *       hold     a stall (the receiver does not read the connection): frames
 *                wait, in order, and so do the acknowledgements of frames
 *                going the other way, until the path opens again (or the
 *                connection is replaced: they complete with an error);
 *       open     back to normal: a frame lost stays lost until replaced,
 *                but the acknowledgement of one that arrived (lost this
 *                way) is heard now, as TCP's sender hears the answer to a
 *                segment it sends again; a connection that lost nothing of
 *                its own works as before.
 *                sn_set_path() does the same at once, from a test.
 * The transport's own liveness (transport_heard, on by default): like the
 * TCP backend, a sender hears from the peer (bfo_engine_rail_heard) at
 * every acknowledgement (a completion without error) and at every keepalive
 * of a receiver applying back-pressure (a frame refused with BFO_ERR_AGAIN
 * and offered again), when the way back is open.
 * RDMA: rails in rdma_mask (default all) can write and read; memory is
 * registered per rank, and every access is checked against it: one to
 * released memory fails (as on real hardware), one outside any registration,
 * or that the registration's role does not allow (a peer writing a region
 * registered only to be read, reading one registered only to be written,
 * this side's read landing in one it may not write), is counted as a
 * violation (a bug in the engine).
 * The registration cache (reg_cache, off by default): as an adapter pins a
 * region's pages, a registration reaches the memory through what pin gave
 * when it was made (a second mapping of the same pages, say), and keeps it
 * after the buffer is unmapped; with the cache on, a region given back
 * stays registered and is handed out again, keys and pinned pages alike:
 * SN_CACHE_EXACT for the same rank, buffer, length and access (the verbs
 * transport's rule), SN_CACHE_CONTAIN for any region that holds the range,
 * every region registered for every access (the verbs transport before
 * it: a larger earlier region's keys).  sn_mem_released is the release
 * notification (bfo_net_mem_released): every cached region the range
 * overlaps is dropped (one in use, when its last use ends, never handed
 * out again).  A test that unmaps a buffer and maps new memory at the same
 * address without it gets what hardware gives: the old pages.  WRITE and READ are
 * counted as fragment types SN_TYPE_WRITE and SN_TYPE_READ for faults.
 * Simulated time advances a little with every delivery and jumps to the
 * next timer when the network is idle.  This is a test tool: it allocates.
 * Wire trace (simnet.trace, set by bfo sim --trace): one line per frame or
 * RDMA operation posted, moved (deliver, lost, error, again), vanished or
 * failed with its connection, and per fault fired; tools/bfo_seq.py turns
 * it into the sequence diagrams of docs/protocol.md.
 *
 * A rank's process may end (sn_rank_exits, after its engine left: a BYE on
 * every rail): what it posted and has not seen completed completes with an
 * error at once (its transport closing); what it wrote and is still on the
 * wire goes on to its peer, then its connections' ends do (a CLOSE on each
 * (rank, peer, rail) path, in order behind its frames, as TCP's FIN comes
 * behind the data): the peer's engine gets RAIL_ERROR when it arrives.
 * Frames to the rank fail at their sender (not delivered, its connection
 * reset); connecting to it fails.  The rank's engine is called no more.
 *
 * A transport model between the engines and this wire (sn_hooks, e.g. the
 * verbs backend's glue in tests/test_verbs_scenarios.c): with sn->hooks
 * set, a message goes to hooks->arrive and a completion to hooks->completion
 * instead of the engines, a rail that fails under a message reports no
 * RAIL_ERROR of its own (the model does), and every step first runs
 * hooks->pump (the model's progress).  The model posts with sn_post_*.
 */
#ifndef BFO_SIMNET_H
#define BFO_SIMNET_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bfo_engine.h"

#define SN_MAX_FAULTS 16

/* The ranks a test's own fixed tables hold (tests/): the network itself
 * takes any number, its tables allocated by sn_init. */
#define SN_TEST_RANKS 8

enum sn_kind { SN_NONE = 0, SN_LOSE, SN_DELIVER_ERROR, SN_DELAY };
enum { SN_TYPE_WRITE = 0xF0, SN_TYPE_READ = 0xF1 }; /* RDMA, as fault types */
enum { SN_TYPE_CLOSE = 0xF2 }; /* a connection's end (sn_rank_exits): no fault takes it */
enum { SN_SEND = 0, SN_WRITE, SN_READ, SN_CLOSE }; /* SN_CLOSE: a connection's end (sn_rank_exits) */
enum sn_fault_what { SN_FAULT_TYPE = 1, SN_FAULT_RAIL_DOWN, SN_FAULT_RAIL_UP, SN_FAULT_PATH };

/* One direction (src -> dst) of a rail (simnet.path). */
enum sn_path { SN_PATH_OPEN = 0, SN_PATH_SILENT, SN_PATH_HOLD };

/* What a message in the queue waits for (sn_msg.wait). */
enum sn_wait {
    SN_W_NONE = 0, /* in flight (held while its path is on hold) */
    SN_W_LOST,     /* vanished on a silent path; its path stays blocked */
    SN_W_ACK_LOST, /* delivered; its acknowledgement vanished on the way back */
    SN_W_ACK_HELD  /* delivered; its acknowledgement waits for the way back to open */
};

typedef struct sn_fault {
    int what;   /* SN_FAULT_* */
    int type;   /* fragment type, 0 for ANY (SN_FAULT_TYPE) */
    int rail;   /* SN_FAULT_RAIL_*, SN_FAULT_PATH */
    uint64_t n; /* the n-th such fragment, or the n-th operation of the run */
    int kind;   /* SN_LOSE, SN_DELIVER_ERROR, SN_DELAY; SN_FAULT_PATH: enum sn_path */
    int from, to; /* SN_FAULT_PATH: the direction; from == to: every direction */
    int fired;
} sn_fault;

typedef struct sn_msg {
    int src, dst, rail, kind, type, dead; /* dead: rail failed under it */
    int wait;                             /* enum sn_wait */
    int op;                               /* SN_SEND, SN_WRITE, SN_READ */
    uint64_t token, order;
    uint64_t nth;                         /* the nth of its type posted (TYPE#N of a fault) */
    size_t len;
    uint8_t *data;                        /* SEND and WRITE: the bytes */
    void *local;                          /* READ: where they go */
    uint64_t raddr;                       /* RDMA: the peer's memory */
    uint32_t key;                         /* RDMA: the key the engine gave for this rail */
    /* read in place (simnet.place): the first half of a FRAG's payload is
     * in the receive's buffer, the rest comes at a later step */
    int placing;
    uint8_t *pl_dst;
    size_t pl_hs;
    bfo_place_ticket pl_tk;
    uint64_t ready_at;                    /* simnet.rail_mbps: its last byte is through */
} sn_msg;

typedef struct sn_reg {
    int rank, live;     /* live: registered (in use, or idle in the cache) */
    uint64_t base, len; /* its keys: SN_KEY(index, rail), one per rail */
    unsigned access;    /* enum bfo_mem_access */
    int refs;           /* requests holding it (reg_mem without its dereg_mem) */
    int invalid;        /* its memory was released while in use: never handed out again */
    uint8_t *pages;     /* what pin gave: where its RDMA lands */
} sn_reg;

/* simnet.reg_cache */
enum sn_cache { SN_CACHE_OFF = 0, SN_CACHE_EXACT, SN_CACHE_CONTAIN };

typedef struct sn_endpoint {
    struct simnet *sn;
    int rank;
} sn_endpoint;

struct simnet;

/* A transport model above the wire (see the top).  arrive: a message
 * reaches its destination, a frame (returns what bfo_engine_frame would:
 * BFO_OK the model took it, BFO_ERR_AGAIN it waits, in order,
 * BFO_ERR_PEER_UNREACHABLE not delivered, its sender sees an error) or an
 * RDMA access (BFO_OK: it goes ahead, checked against the registrations;
 * anything else: not carried out, its sender sees an error). */
typedef struct sn_hooks {
    void *ctx;
    int (*arrive)(void *ctx, const struct sn_msg *m);
    void (*completion)(void *ctx, const struct sn_msg *m, int ok);
    int (*pump)(void *ctx); /* 1 when it did something */
} sn_hooks;

/* Tables per rank ([n]) and per link ([n * n * nrails], indexed by
 * sn_link: a direction of a rail between two ranks) are allocated by
 * sn_init for any n, freed by sn_free; the network's cost per step does
 * not grow with n * n (a 1,024-rank run: bfo sim --ranks). */
typedef struct simnet {
    int n, nrails;
    bfo_engine **eng;  /* [n] */
    sn_endpoint *ep;   /* [n] */
    bfo_backend *be;   /* [n] */
    sn_msg *q;
    size_t qlen, qcap;
    uint64_t now, ops, order, rng;
    uint64_t type_count[256];
    int rail_down[BFO_MAX_RAILS];
    sn_fault faults[SN_MAX_FAULTS];
    int nfaults;
    uint8_t *connects;      /* [link]: pending connect requests */
    uint8_t *disconnects;   /* [link]: pending drops (sn_disconnect) */
    /* the links with one of them set, in a heap by link (sn_do_connects
     * takes them in link order, as a scan of every link would) */
    size_t *pending;
    size_t npending, cappending;
    unsigned rdma_mask;     /* rails that can RDMA (bit per rail) */
    unsigned data_mask;     /* rails whose transport reads described data itself
                             * (post_send_data; bit per rail, default none) */
    uint64_t data_posts;    /* frames whose described bytes this transport read */
    sn_reg *regs;
    size_t nregs, capregs;
    uint64_t rdma_violations, rdma_refused;
    uint64_t regs_live;     /* registrations in use (held by a request) */
    /* the registration cache (see the top): enum sn_cache; pin (NULL: the
     * buffer itself) gives the pages behind buf[0..len) at registration,
     * NULL when it cannot (reg_mem fails), and unpin lets them go when the
     * registration ends */
    int reg_cache;
    void *(*pin)(void *ctx, void *buf, size_t len);
    void (*unpin)(void *ctx, void *pages, size_t len);
    void *pin_ctx;
    uint64_t reg_hits, reg_misses, regs_released; /* released: dropped by sn_mem_released */
    uint64_t delivered, lost, deliver_errors;
    uint64_t last_fault_at; /* simulated time the last fault fired */
    uint8_t *path;          /* [sn_link(src, dst, rail)]: enum sn_path */
    int transport_heard;    /* acknowledgements and keepalives reach the engines (default 1) */
    void *user;             /* for whoever drives the network */
    FILE *trace;            /* the wire trace (see the top), or NULL */
    const sn_hooks *hooks;  /* a transport model above the wire, or NULL */
    int *gone;              /* [n]: the rank's process ended (sn_rank_exits) */
    int *killed;            /* [n]: ... killed (sn_rank_killed): its engine hears nothing more */
    /* 1: frames are read as the TCP transport reads them, FRAGs in place
     * (bfo_engine_place): half the payload at one step, the rest at a
     * later one (other messages move between), the receive asked before
     * the second (bfo_engine_place_ok), then bfo_engine_frame_placed.
     * Without a transport model (hooks) only. */
    int place;
    uint64_t placed, placed_dropped;
    /* Rail speeds (MB/s = bytes per us; 0: no model, a message moves the
     * step it is picked): a message can move only once its bytes went
     * through its (src, dst, rail) link, one message after another, at the
     * rail's speed (a slow rail: messages wait on it; time leaps to the
     * next one through when nothing else can move).  What the engine
     * measures and stripes by. */
    unsigned rail_mbps[BFO_MAX_RAILS];
    /* ... and a rail's delay (ns, with rail_mbps only): a message moves
     * this long after its last byte went through (a long path, or a
     * queue that its acknowledgements wait in), the link free meanwhile */
    uint64_t rail_delay_ns[BFO_MAX_RAILS];
    /* ... and a token-bucket shaper's burst (bytes, with rail_mbps only;
     * 0: none), as tc's tbf: a link's tokens fill at the rail's speed up
     * to the burst, and the bytes of a message that tokens cover go
     * through at once, the rest at the rail's speed.  A short burst on an
     * idle link thus moves at no cost, as a measuring probe behind a real
     * shaper does. */
    uint64_t rail_burst[BFO_MAX_RAILS];
    uint64_t *link_free;    /* [link] */
    uint64_t *link_tokens;  /* [link]: at link_free */
    /* sn_step: the links whose queue head it passed (== head_mark), so
     * that finding each link's head is one walk of the queue */
    uint32_t *head_seen;    /* [link] */
    uint32_t head_mark;
    /* The engines' timers (sn_progress): 0, every engine's
     * (bfo_engine_progress) after every step, as each process runs its
     * progress loop; else every engine's once progress_ns of simulated
     * time went by since they last ran, as processes whose loop runs
     * that often: a timer fires up to progress_ns late, never early (the
     * network's calls, frames and completions, still reach an engine at
     * once).  An engine's progress walks its peers, so every engine's
     * after every step costs n * n per step: too slow for hundreds of
     * ranks (bfo sim --progress-us, 10 ms from 9 ranks on). */
    uint64_t progress_ns;
    uint64_t progressed_at; /* when every engine's last ran (progress_ns) */
} simnet;

/* A link's entry in the tables per link: one direction (src to dst) of a
 * rail. */
static inline size_t sn_link(const simnet *sn, int src, int dst, int rail)
{
    return ((size_t)src * (size_t)sn->n + (size_t)dst) * (size_t)sn->nrails + (size_t)rail;
}

/* A message's completion at its sender: the engine's, or the model's. */
static inline void sn_complete(simnet *sn, const sn_msg *m, int ok)
{
    if (sn->gone[m->src] || sn->killed[m->src] || m->op == SN_CLOSE)
        return; /* nobody is there to hear it */
    if (sn->hooks)
        sn->hooks->completion(sn->hooks->ctx, m, ok);
    else
        bfo_engine_completion(sn->eng[m->src], m->token, ok);
}

static inline const char *sn_type_name(int type)
{
    if (type == SN_TYPE_CLOSE)
        return "CLOSE";
    if (type == SN_TYPE_WRITE)
        return "WRITE";
    if (type == SN_TYPE_READ)
        return "READ";
    const char *n = bfo_frag_name(type);
    return n ? n : "?";
}

/* One wire line: time, what happened, the operation (TYPE#N as a fault
 * names it), direction and rail, then what its header says: every field of
 * the type's layout but the reserved ones as NAME VALUE (a handle as
 * INDEX.GEN), from
 * bfo_frag_fields, then "data N" for a type that carries data, then the
 * flags set, by name.  No type is written here by hand: a new one is
 * traced as soon as spec/alphabet.tab has it.  (raddr is an address of
 * this process: it differs from run to run.) */
static inline void sn_trace_msg(const simnet *sn, const char *what, const struct sn_msg *m)
{
    bfo_frame f;
    const bfo_field *fl;
    size_t nf;
    FILE *o = sn->trace;
    if (!o)
        return;
    fprintf(o, "%12.6f ms  wire  %-8s %s#%" PRIu64 "  %d>%d rail %d  %zu B", (double)sn->now / 1e6,
            what, sn_type_name(m->type), m->nth, m->src, m->dst, m->rail, m->len);
    if (m->op != SN_SEND || !m->data || bfo_frame_parse(&f, m->data, m->len) != BFO_OK) {
        fputc('\n', o);
        return;
    }
    fl = bfo_frag_fields(f.type, &nf);
    fputc(' ', o);
    for (size_t i = 0; i < nf; i++) {
        const uint8_t *v = m->data + fl[i].offset;
        if (fl[i].kind == BFO_FIELD_RESERVED)
            continue; /* zero: bfo_frame_parse checked it */
        fputc(' ', o);
        if (fl[i].kind == BFO_FIELD_HANDLE)
            fprintf(o, "%s %" PRIu32 ".%" PRIu32, fl[i].name, bfo_get32(v), bfo_get32(v + 4));
        else
            fprintf(o, "%s %" PRIu64, fl[i].name,
                    fl[i].width == 1   ? (uint64_t)v[0]
                    : fl[i].width == 2 ? (uint64_t)bfo_get16(v)
                    : fl[i].width == 4 ? (uint64_t)bfo_get32(v)
                                       : bfo_get64(v));
    }
    if (bfo_frag_has_payload(f.type))
        fprintf(o, " data %zu", f.payload_len);
#define SN_TRACE_FLAG(name, bit) \
    if (f.flags & (bit))        \
        fputs(" " #name, o);
    BFO_FLAGS(SN_TRACE_FLAG)
#undef SN_TRACE_FLAG
    fputc('\n', o);
}

static inline void sn_trace_fault(const simnet *sn, int rail, const char *what)
{
    if (sn->trace)
        fprintf(sn->trace, "%12.6f ms  wire  fault    rail %d %s\n", (double)sn->now / 1e6, rail, what);
}

static inline uint64_t sn_rand(simnet *sn)
{
    uint64_t x = sn->rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    sn->rng = x;
    return x;
}

static inline void sn_push(simnet *sn, const sn_msg *m)
{
    unsigned mbps = (unsigned)m->rail < BFO_MAX_RAILS ? sn->rail_mbps[m->rail] : 0;
    if (mbps && m->rail < sn->nrails) {
        const size_t l = sn_link(sn, m->src, m->dst, m->rail);
        uint64_t *f = &sn->link_free[l];
        uint64_t start = *f > sn->now ? *f : sn->now, len = m->len;
        uint64_t burst = sn->rail_burst[m->rail];
        if (burst) { /* the tokens gathered since the link was last free */
            uint64_t *tok = &sn->link_tokens[l];
            uint64_t t = *tok + (start - *f) * mbps / 1000;
            t = t < burst ? t : burst;
            uint64_t covered = len < t ? len : t;
            *tok = t - covered;
            len -= covered;
        }
        uint64_t at = start + len * 1000 / mbps;
        *f = at;
        ((sn_msg *)m)->ready_at = at + sn->rail_delay_ns[m->rail];
    }
    if (sn->qlen == sn->qcap) {
        sn->qcap = sn->qcap ? 2 * sn->qcap : 256;
        sn->q = (sn_msg *)realloc(sn->q, sn->qcap * sizeof *sn->q);
        if (!sn->q)
            abort();
    }
    sn->q[sn->qlen++] = *m;
}

static inline void sn_rail_fails(simnet *sn, int rail)
{
    sn_trace_fault(sn, rail, "down");
    sn->rail_down[rail] = 1;
    for (size_t i = 0; i < sn->qlen; i++)
        if (sn->q[i].rail == rail && !sn->q[i].dead) {
            sn_msg *m = &sn->q[i];
            m->dead = 1;
            if (m->wait == SN_W_ACK_LOST || m->wait == SN_W_ACK_HELD)
                m->kind = SN_LOSE; /* delivered already: only the error is left */
            else if (m->wait == SN_W_LOST)
                m->kind = SN_LOSE;
            else /* delivered or not, as the seed decides; the sender sees an error */
                m->kind = (sn_rand(sn) & 1) ? SN_LOSE : SN_DELIVER_ERROR;
            m->wait = SN_W_NONE;
        }
}

/* 1 when a frame from src to dst on rail vanished and its connection is not
 * replaced yet: what follows it on that path vanishes too. */
static inline int sn_path_lost(const simnet *sn, int src, int dst, int rail)
{
    for (size_t i = 0; i < sn->qlen; i++)
        if (sn->q[i].wait == SN_W_LOST && sn->q[i].src == src && sn->q[i].dst == dst &&
            sn->q[i].rail == rail)
            return 1;
    return 0;
}

/* Turns one direction of a rail silent, on hold, or open again (see the top). */
static inline void sn_set_path(simnet *sn, int src, int dst, int rail, int mode)
{
    if (rail < sn->nrails) /* (a rail the network has not: nothing on it to turn) */
        sn->path[sn_link(sn, src, dst, rail)] = (uint8_t)mode;
    sn->last_fault_at = sn->now;
    if (mode == SN_PATH_OPEN) /* an acknowledgement lost this way: the sender's transport */
        for (size_t i = 0; i < sn->qlen; i++) /* sends again, and hears it now (TCP) */
            if (sn->q[i].src == dst && sn->q[i].dst == src && sn->q[i].rail == rail &&
                sn->q[i].wait == SN_W_ACK_LOST)
                sn->q[i].wait = SN_W_ACK_HELD;
    if (mode != SN_PATH_SILENT)
        return;
    for (size_t i = 0; i < sn->qlen; i++) {
        sn_msg *m = &sn->q[i];
        if (m->dead || m->rail != rail)
            continue;
        if (m->src == src && m->dst == dst && m->wait == SN_W_NONE) {
            m->wait = SN_W_LOST; /* in flight: gone */
            sn_trace_msg(sn, "vanish", m);
        } else if (m->src == dst && m->dst == src && m->wait == SN_W_ACK_HELD)
            m->wait = SN_W_ACK_LOST; /* its acknowledgement: gone */
    }
}

/* A path fault: one direction, or every direction between every pair. */
static inline void sn_path_fault(simnet *sn, const sn_fault *f)
{
    static const char *const modes[] = { "open", "silent", "hold" };
    char what[48];
    if (f->from == f->to)
        snprintf(what, sizeof what, "%s", modes[f->kind]);
    else
        snprintf(what, sizeof what, "%s %d>%d", modes[f->kind], f->from, f->to);
    sn_trace_fault(sn, f->rail, what);
    for (int a = 0; a < sn->n; a++)
        for (int b = 0; b < sn->n; b++)
            if (a != b && (f->from == f->to || (a == f->from && b == f->to)))
                sn_set_path(sn, a, b, f->rail, f->kind);
}

/* 1 when a rail is down or some direction of it is not open. */
static inline int sn_rail_faulty(const simnet *sn, int rail)
{
    if (sn->rail_down[rail])
        return 1;
    for (int a = 0; a < sn->n && rail < sn->nrails; a++)
        for (int b = 0; b < sn->n; b++)
            if (sn->path[sn_link(sn, a, b, rail)] != SN_PATH_OPEN)
                return 1;
    return 0;
}

/* The end `src` replaced its connection to dst on rail: every operation of
 * it that waits because of a path fault completes with an error (not
 * delivered, if it was not already).  Only from the network's step, never
 * inside an engine call. */
static inline void sn_close_conn(simnet *sn, int src, int dst, int rail)
{
    for (;;) {
        size_t i;
        for (i = 0; i < sn->qlen; i++) {
            const sn_msg *m = &sn->q[i];
            if (m->src == src && m->dst == dst && m->rail == rail && !m->dead &&
                (m->wait != SN_W_NONE || sn->path[sn_link(sn, src, dst, rail)] == SN_PATH_HOLD))
                break;
        }
        if (i == sn->qlen)
            return;
        sn_msg m = sn->q[i];
        memmove(&sn->q[i], &sn->q[i + 1], (sn->qlen - i - 1) * sizeof *sn->q);
        sn->qlen--;
        if (m.wait == SN_W_NONE || m.wait == SN_W_LOST)
            sn->lost++;
        sn_trace_msg(sn, "closed", &m);
        free(m.data);
        sn_complete(sn, &m, 0); /* may post: the queue moves */
    }
}

static inline void sn_apply_op_faults(simnet *sn)
{
    for (int i = 0; i < sn->nfaults; i++) {
        sn_fault *f = &sn->faults[i];
        if (f->fired || f->n != sn->ops)
            continue;
        if (f->what == SN_FAULT_RAIL_DOWN) {
            f->fired = 1;
            sn->last_fault_at = sn->now;
            sn_rail_fails(sn, f->rail);
        } else if (f->what == SN_FAULT_RAIL_UP) {
            f->fired = 1;
            sn->last_fault_at = sn->now;
            sn->rail_down[f->rail] = 0;
            sn_trace_fault(sn, f->rail, "up");
        } else if (f->what == SN_FAULT_PATH) {
            f->fired = 1;
            sn_path_fault(sn, f);
        }
    }
}

/* Counts the operation, applies the faults it triggers, queues it. */
static inline void sn_enqueue(simnet *sn, sn_msg *m)
{
    m->order = sn->order++;
    sn->ops++;
    sn_apply_op_faults(sn);
    m->nth = ++sn->type_count[m->type];
    for (int i = 0; i < sn->nfaults && m->op != SN_CLOSE; i++) {
        sn_fault *f = &sn->faults[i];
        if (f->what == SN_FAULT_TYPE && !f->fired &&
            ((f->type == 0 && f->n == sn->ops) ||
             (f->type == m->type && f->n == sn->type_count[m->type]))) {
            f->fired = 1;
            sn->last_fault_at = sn->now;
            m->kind = f->kind;
        }
    }
    if (sn->rail_down[m->rail] || sn->gone[m->dst]) {
        m->dead = 1;
        m->kind = SN_LOSE;
    } else if (sn->path[sn_link(sn, m->src, m->dst, m->rail)] == SN_PATH_SILENT ||
               sn_path_lost(sn, m->src, m->dst, m->rail)) {
        m->wait = SN_W_LOST;
    }
    sn_trace_msg(sn, m->wait == SN_W_LOST ? "post-vanish" : m->dead ? "post-dead" : "post", m);
    sn_push(sn, m);
}

static inline int sn_post_send(void *ctx, int peer, int rail, const bfo_iov *iov, int iovcnt,
                               uint64_t token)
{
    sn_endpoint *ep = (sn_endpoint *)ctx;
    sn_msg m;
    size_t len = 0;
    memset(&m, 0, sizeof m);
    for (int i = 0; i < iovcnt; i++)
        len += iov[i].len;
    m.data = (uint8_t *)malloc(len ? len : 1);
    if (!m.data)
        abort();
    for (int i = 0, off = 0; i < iovcnt; off += (int)iov[i].len, i++)
        if (iov[i].len)
            memcpy(m.data + off, iov[i].base, iov[i].len);
    m.len = len;
    m.src = ep->rank;
    m.dst = peer;
    m.rail = rail;
    m.token = token;
    m.type = len ? m.data[0] : 0;
    sn_enqueue(ep->sn, &m);
    return 0;
}

/* post_send_data: the header and the described bytes, read (packed) into
 * the frame at the post, as a transport that copies into its ring does. */
static inline int sn_post_send_data(void *ctx, int peer, int rail, const bfo_iov *hdr,
                                    const bfo_data_span *data, uint64_t token)
{
    sn_endpoint *ep = (sn_endpoint *)ctx;
    sn_msg m;
    size_t len = hdr->len + data->len;
    if (!((ep->sn->data_mask >> rail) & 1))
        return -1; /* the engine must not ask: the rail has no BFO_CAP_SEND_* */
    memset(&m, 0, sizeof m);
    m.data = (uint8_t *)malloc(len ? len : 1);
    if (!m.data)
        abort();
    memcpy(m.data, hdr->base, hdr->len);
    bfo_data_span_copy(data, 0, m.data + hdr->len, data->len);
    ep->sn->data_posts++;
    m.len = len;
    m.src = ep->rank;
    m.dst = peer;
    m.rail = rail;
    m.token = token;
    m.type = m.data[0];
    sn_enqueue(ep->sn, &m);
    return 0;
}

static inline sn_reg *sn_reg_held(simnet *sn, int rank, const void *p, size_t len);

static inline int sn_post_rdma(sn_endpoint *ep, int op, int peer, int rail, void *local,
                               size_t len, uint64_t raddr, uint32_t key, uint64_t token)
{
    sn_msg m;
    /* this side's memory, through its registration as an adapter reaches it */
    const sn_reg *g = sn_reg_held(ep->sn, ep->rank, local, len);
    uint8_t *pages = (uint8_t *)local;
    if (!((ep->sn->rdma_mask >> rail) & 1))
        return -1; /* the engine must not ask: counted by the caller as a failure */
    if (!g || (op == SN_READ && !(g->access & BFO_MEM_LOCAL_WRITE)))
        ep->sn->rdma_violations++; /* not registered, or not for this */
    else
        pages = g->pages + ((uint64_t)(uintptr_t)local - g->base);
    memset(&m, 0, sizeof m);
    m.op = op;
    m.src = ep->rank;
    m.dst = peer;
    m.rail = rail;
    m.token = token;
    m.len = len;
    m.raddr = raddr;
    m.key = key;
    m.type = op == SN_WRITE ? SN_TYPE_WRITE : SN_TYPE_READ;
    if (op == SN_WRITE) { /* the source is read when the write is posted */
        m.data = (uint8_t *)malloc(len ? len : 1);
        if (!m.data)
            abort();
        memcpy(m.data, pages, len);
    } else {
        m.local = pages;
    }
    sn_enqueue(ep->sn, &m);
    return 0;
}

static inline int sn_post_write(void *ctx, int peer, int rail, const void *local, size_t len,
                                uint64_t raddr, uint32_t key, uint64_t token)
{
    return sn_post_rdma((sn_endpoint *)ctx, SN_WRITE, peer, rail, (void *)(uintptr_t)local, len,
                        raddr, key, token);
}

static inline int sn_post_read(void *ctx, int peer, int rail, void *local, size_t len,
                               uint64_t raddr, uint32_t key, uint64_t token)
{
    return sn_post_rdma((sn_endpoint *)ctx, SN_READ, peer, rail, local, len, raddr, key, token);
}

/* The key of registration i on a rail: every rail its own, as with one
 * device per rail, so that a key used on another rail than its own is
 * caught (an RDMA violation).  Registrations are never reused (a cache
 * hit hands out the same one again). */
#define SN_KEY(i, rail) ((uint32_t)(0x40000000u | ((uint32_t)(i) << 6) | (uint32_t)(rail)))

/* A registration ends: its keys are refused from now on, its pages let go. */
static inline void sn_reg_end(simnet *sn, sn_reg *g)
{
    if (!g->live)
        return;
    if (g->refs > 0)
        sn->regs_live--;
    g->live = 0;
    g->refs = 0;
    if (sn->unpin && g->pages)
        sn->unpin(sn->pin_ctx, g->pages, g->len);
    g->pages = NULL;
}

/* The cached region reg_mem hands out again for this, or NULL. */
static inline sn_reg *sn_reg_cached(simnet *sn, int rank, const void *buf, size_t len, unsigned access)
{
    const uint64_t b = (uint64_t)(uintptr_t)buf;
    for (size_t i = 0; i < sn->nregs; i++) {
        sn_reg *g = &sn->regs[i];
        if (!g->live || g->invalid || g->rank != rank)
            continue;
        if (sn->reg_cache == SN_CACHE_EXACT ? g->base == b && g->len == len && g->access == access
                                            : b >= g->base && len <= g->len && b - g->base <= g->len - len)
            return g;
    }
    return NULL;
}

static inline int sn_reg_mem(void *ctx, void *buf, size_t len, unsigned access, uint64_t *raddr,
                             uint32_t *keys, uint64_t *handle)
{
    sn_endpoint *ep = (sn_endpoint *)ctx;
    simnet *sn = ep->sn;
    sn_reg *g = sn->reg_cache ? sn_reg_cached(sn, ep->rank, buf, len, access) : NULL;
    size_t i;
    if (g) {
        sn->reg_hits++;
        if (g->refs++ == 0)
            sn->regs_live++;
        i = (size_t)(g - sn->regs);
    } else {
        void *pages = sn->pin ? sn->pin(sn->pin_ctx, buf, len) : buf;
        if (!pages)
            return -1;
        if (sn->reg_cache)
            sn->reg_misses++;
        if (sn->nregs == sn->capregs) {
            sn->capregs = sn->capregs ? 2 * sn->capregs : 64;
            sn->regs = (sn_reg *)realloc(sn->regs, sn->capregs * sizeof *sn->regs);
            if (!sn->regs)
                abort();
        }
        i = sn->nregs++;
        g = &sn->regs[i];
        memset(g, 0, sizeof *g);
        g->rank = ep->rank;
        g->live = 1;
        g->refs = 1;
        g->base = (uint64_t)(uintptr_t)buf;
        g->len = len;
        g->access = sn->reg_cache == SN_CACHE_CONTAIN /* as the verbs transport did */
                        ? (unsigned)(BFO_MEM_REMOTE_READ | BFO_MEM_REMOTE_WRITE | BFO_MEM_LOCAL_WRITE)
                        : access;
        g->pages = (uint8_t *)pages;
        sn->regs_live++;
    }
    *raddr = (uint64_t)(uintptr_t)buf;
    for (int r = 0; r < sn->nrails; r++)
        if ((sn->rdma_mask >> r) & 1)
            keys[r] = SN_KEY(i, r);
    *handle = i + 1;
    return 0;
}

static inline void sn_dereg_mem(void *ctx, uint64_t handle)
{
    simnet *sn = ((sn_endpoint *)ctx)->sn;
    sn_reg *g = handle >= 1 && handle <= sn->nregs ? &sn->regs[handle - 1] : NULL;
    if (g && g->live && g->refs > 0 && g->rank == ((sn_endpoint *)ctx)->rank) {
        if (--g->refs == 0) {
            sn->regs_live--;
            if (!sn->reg_cache || g->invalid) /* else it stays, cached */
                sn_reg_end(sn, g);
        }
        return;
    }
    sn->rdma_violations++; /* released twice, or never registered */
}

/* The release notification (bfo_net_mem_released): buf[0..len) went back to
 * the system.  Every registration it overlaps, of every rank (one process),
 * is dropped; one in use is the program's error (memory freed under a
 * request): never handed out again, dropped when its last use ends. */
static inline void sn_mem_released(simnet *sn, const void *buf, size_t len)
{
    const uint64_t b = (uint64_t)(uintptr_t)buf;
    for (size_t i = 0; i < sn->nregs; i++) {
        sn_reg *g = &sn->regs[i];
        if (!g->live || g->base >= b + len || b >= g->base + g->len)
            continue;
        sn->regs_released++;
        if (g->refs > 0)
            g->invalid = 1;
        else
            sn_reg_end(sn, g);
    }
}

/* The registration of this rank's that holds p[0..len) and is in use
 * (the one the engine's RDMA from or into it goes through), or NULL. */
static inline sn_reg *sn_reg_held(simnet *sn, int rank, const void *p, size_t len)
{
    const uint64_t b = (uint64_t)(uintptr_t)p;
    sn_reg *found = NULL;
    for (size_t i = sn->nregs; i-- > 0;) { /* the newest first */
        sn_reg *g = &sn->regs[i];
        if (g->live && g->refs > 0 && g->rank == rank && b >= g->base && len <= g->len &&
            b - g->base <= g->len - len && (!found || (found->invalid && !g->invalid)))
            found = g;
    }
    return found;
}

static inline unsigned sn_rail_caps(void *ctx, int rail)
{
    const simnet *sn = ((sn_endpoint *)ctx)->sn;
    return ((sn->rdma_mask >> rail) & 1 ? BFO_CAP_RDMA : 0) |
           ((sn->data_mask >> rail) & 1 ? BFO_CAP_SEND_IOV | BFO_CAP_SEND_PACK : 0);
}

/* An RDMA access (op SN_WRITE or SN_READ; 0: any) to rank's memory: where
 * it lands (the registration's pages) if it may go ahead, NULL if refused
 * (released memory), or a violation (counted) if outside every
 * registration or not allowed by its role. */
static inline uint8_t *sn_rdma_access(simnet *sn, int rank, int op, int rail, uint64_t raddr,
                                      uint32_t key, size_t len)
{
    const size_t i = (size_t)((key & ~0x40000000u) >> 6);
    const sn_reg *g = i < sn->nregs ? &sn->regs[i] : NULL;
    if (!g || SN_KEY(i, rail) != key || g->rank != rank) { /* no such key, or another rail's */
        sn->rdma_violations++;
        return NULL;
    }
    if (raddr < g->base || len > g->len || raddr - g->base > g->len - len ||
        (op == SN_WRITE && !(g->access & BFO_MEM_REMOTE_WRITE)) ||
        (op == SN_READ && !(g->access & BFO_MEM_REMOTE_READ))) {
        sn->rdma_violations++;
        return NULL;
    }
    if (!g->live) {
        sn->rdma_refused++;
        return NULL;
    }
    return g->pages + (raddr - g->base);
}

/* The same, 1 if it may go ahead, 0 if not. */
static inline int sn_rdma_check(simnet *sn, int rank, int rail, uint64_t raddr, uint32_t key,
                                size_t len)
{
    return sn_rdma_access(sn, rank, 0, rail, raddr, key, len) != NULL;
}

/* The pending links' heap (simnet.pending): smallest link first. */
static inline void sn_pending_push(simnet *sn, size_t l)
{
    size_t i;
    if (sn->npending == sn->cappending) {
        sn->cappending = sn->cappending ? 2 * sn->cappending : 64;
        sn->pending = (size_t *)realloc(sn->pending, sn->cappending * sizeof *sn->pending);
        if (!sn->pending)
            abort();
    }
    for (i = sn->npending++; i > 0 && sn->pending[(i - 1) / 2] > l; i = (i - 1) / 2)
        sn->pending[i] = sn->pending[(i - 1) / 2];
    sn->pending[i] = l;
}

static inline size_t sn_pending_pop(simnet *sn)
{
    const size_t top = sn->pending[0], last = sn->pending[--sn->npending];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= sn->npending)
            break;
        if (c + 1 < sn->npending && sn->pending[c + 1] < sn->pending[c])
            c++;
        if (last <= sn->pending[c])
            break;
        sn->pending[i] = sn->pending[c];
        i = c;
    }
    if (sn->npending)
        sn->pending[i] = last;
    return top;
}

/* A connect or drop asked on a link: its flag, and the link pending. */
static inline void sn_ask(simnet *sn, uint8_t *flags, int rank, int peer, int rail)
{
    const size_t l = sn_link(sn, rank, peer, rail);
    if (!sn->connects[l] && !sn->disconnects[l])
        sn_pending_push(sn, l);
    flags[l] = 1;
}

static inline int sn_connect(void *ctx, int peer, int rail)
{
    sn_endpoint *ep = (sn_endpoint *)ctx;
    sn_ask(ep->sn, ep->sn->connects, ep->rank, peer, rail);
    return 0;
}

/* The backend's disconnect (installed by a caller that wants it, e.g.
 * sim/bfo_simgroup.h): the end drops its connection, as a transport closes
 * a socket, so what it posted and has not seen complete on that path
 * (vanished on a silent path, or held) completes with an error, from the
 * next step of the network. */
static inline void sn_disconnect(void *ctx, int peer, int rail)
{
    sn_endpoint *ep = (sn_endpoint *)ctx;
    sn_ask(ep->sn, ep->sn->disconnects, ep->rank, peer, rail);
}

/* Sets up the network; the engines are attached with sn_attach. */
static inline void sn_init(simnet *sn, int n, int nrails, uint64_t seed)
{
    const size_t links = (size_t)n * (size_t)n * (size_t)nrails;
    memset(sn, 0, sizeof *sn);
    sn->n = n;
    sn->nrails = nrails;
    sn->eng = (bfo_engine **)calloc((size_t)n, sizeof *sn->eng);
    sn->ep = (sn_endpoint *)calloc((size_t)n, sizeof *sn->ep);
    sn->be = (bfo_backend *)calloc((size_t)n, sizeof *sn->be);
    sn->gone = (int *)calloc((size_t)n, sizeof *sn->gone);
    sn->killed = (int *)calloc((size_t)n, sizeof *sn->killed);
    sn->connects = (uint8_t *)calloc(links, 1);
    sn->disconnects = (uint8_t *)calloc(links, 1);
    sn->path = (uint8_t *)calloc(links, 1); /* SN_PATH_OPEN */
    sn->link_free = (uint64_t *)calloc(links, sizeof *sn->link_free);
    sn->link_tokens = (uint64_t *)calloc(links, sizeof *sn->link_tokens);
    sn->head_seen = (uint32_t *)calloc(links, sizeof *sn->head_seen);
    if (!sn->eng || !sn->ep || !sn->be || !sn->gone || !sn->killed || !sn->connects || !sn->disconnects ||
        !sn->path || !sn->link_free || !sn->link_tokens || !sn->head_seen)
        abort();
    sn->rng = seed * 0x9e3779b97f4a7c15ull + 1;
    sn->now = 1000;
    sn->rdma_mask = ~0u;
    sn->transport_heard = 1;
    for (int i = 0; i < n; i++) {
        sn->ep[i].sn = sn;
        sn->ep[i].rank = i;
        memset(&sn->be[i], 0, sizeof sn->be[i]);
        sn->be[i].ctx = &sn->ep[i];
        sn->be[i].post_send = sn_post_send;
        sn->be[i].post_send_data = sn_post_send_data;
        sn->be[i].post_write = sn_post_write;
        sn->be[i].post_read = sn_post_read;
        sn->be[i].reg_mem = sn_reg_mem;
        sn->be[i].dereg_mem = sn_dereg_mem;
        sn->be[i].rail_caps = sn_rail_caps;
        sn->be[i].connect = sn_connect;
    }
}

static inline void sn_add_fault(simnet *sn, const sn_fault *f)
{
    if (sn->nfaults < SN_MAX_FAULTS)
        sn->faults[sn->nfaults++] = *f;
}

static inline void sn_rail_event(simnet *sn, int rank, int peer, int rail, int ev)
{
    bfo_engine_rail_event(sn->eng[rank], peer, rail, ev, sn->now);
}

/* Pending connects: the end that asked gives its old connection up; each
 * end still waiting for a connection (CONNECTING, FAILED, RECONNECTING)
 * learns of the new one, after its old one is gone; an end that has one
 * already (PROBING, UP) keeps it; a rail that is down, or silent in either
 * direction, refuses. */
/* The links are taken in link order (sn_link: rank, peer, rail), as one
 * scan of them all: one asked while this runs is taken now when it comes
 * later in that order, at the next step otherwise. */
static inline int sn_do_connects(simnet *sn)
{
    int did = 0, any = 0;
    size_t at = 0, *later = NULL, nlater = 0;
    while (sn->npending) {
        const size_t l = sn_pending_pop(sn);
        if (any && l <= at) { /* asked meanwhile, behind the scan: the next step's */
            size_t *nl = (size_t *)realloc(later, (nlater + 1) * sizeof *later);
            if (!nl)
                abort();
            later = nl;
            later[nlater++] = l;
            continue;
        }
        any = 1;
        at = l;
        const int r = (int)(l % (size_t)sn->nrails), b = (int)(l / (size_t)sn->nrails % (size_t)sn->n),
                  a = (int)(l / (size_t)sn->nrails / (size_t)sn->n);
        if (sn->disconnects[l]) {
            sn->disconnects[l] = 0;
            did = 1;
            if (!sn->gone[a])
                sn_close_conn(sn, a, b, r);
        }
        if (!sn->connects[l])
            continue;
        sn->connects[l] = 0;
        did = 1;
        if (sn->gone[a])
            continue;
        sn_close_conn(sn, a, b, r);
        if (sn->gone[b] || sn->rail_down[r] || sn->path[l] == SN_PATH_SILENT ||
            sn->path[sn_link(sn, b, a, r)] == SN_PATH_SILENT) {
            sn_rail_event(sn, a, b, r, BFO_EV_CONNECT_FAILED);
            continue;
        }
        int ends[2] = { a, b }, peers[2] = { b, a };
        for (int k = 0; k < 2; k++) {
            if (bfo_engine_left(sn->eng[ends[k]]))
                continue; /* it left: no new connection is taken up */
            int cs = sn->eng[ends[k]]->peers[peers[k]].rail[r].fsm.cs;
            if (!bfo_rail_accepts(cs, BFO_EV_CONNECTED))
                continue;
            sn_close_conn(sn, ends[k], peers[k], r);
            cs = sn->eng[ends[k]]->peers[peers[k]].rail[r].fsm.cs;
            if (bfo_rail_accepts(cs, BFO_EV_CONNECTED))
                sn_rail_event(sn, ends[k], peers[k], r, BFO_EV_CONNECTED);
        }
    }
    for (size_t i = 0; i < nlater; i++)
        sn_pending_push(sn, later[i]);
    free(later);
    return did;
}

/* The peer's transport acknowledged, or kept the connection alive: the
 * sender hears from it (when the simulated transport reports that). */
static inline void sn_heard(simnet *sn, const sn_msg *m)
{
    if (sn->transport_heard && !sn->gone[m->src])
        bfo_engine_rail_heard(sn->eng[m->src], m->dst, m->rail, sn->now);
}

/* Moves one message: the head of a randomly chosen (src, dst, rail) queue.
 * Returns 0 when nothing could move. */
static inline int sn_step(simnet *sn)
{
    size_t pick = (size_t)-1, cand = 0;
    uint64_t next_ready = 0; /* the soonest a message still on its link is through */
    if (sn->hooks && sn->hooks->pump && sn->hooks->pump(sn->hooks->ctx))
        return 1;
    if (sn_do_connects(sn))
        return 1;
    if (!++sn->head_mark) { /* wrapped: no mark of an earlier step may count */
        memset(sn->head_seen, 0, (size_t)sn->n * (size_t)sn->n * (size_t)sn->nrails * sizeof *sn->head_seen);
        sn->head_mark = 1;
    }
    for (size_t i = 0; i < sn->qlen; i++) {
        const sn_msg *m = &sn->q[i];
        const size_t l = sn_link(sn, m->src, m->dst, m->rail);
        /* FIFO within a rail: a message in flight (or vanished) before it
         * on its link holds it back */
        const int head = sn->head_seen[l] != sn->head_mark;
        if (m->wait == SN_W_NONE || m->wait == SN_W_LOST)
            sn->head_seen[l] = sn->head_mark;
        if (m->wait == SN_W_LOST || m->wait == SN_W_ACK_LOST)
            continue; /* until its connection is replaced */
        if (m->wait == SN_W_ACK_HELD) { /* its acknowledgement, once the way back opens */
            if (sn->path[sn_link(sn, m->dst, m->src, m->rail)] == SN_PATH_HOLD)
                continue;
        } else {
            if (!head)
                continue;
            if (!m->dead && sn->path[l] == SN_PATH_HOLD)
                continue; /* held, and what follows it */
            if (m->ready_at > sn->now && !m->dead) { /* its bytes are still on the link */
                if (!next_ready || m->ready_at < next_ready)
                    next_ready = m->ready_at;
                continue;
            }
            /* a delayed message waits while anything else can move */
            if (sn->q[i].kind == SN_DELAY && sn->qlen > 1) {
                sn->q[i].kind = SN_NONE;
                continue;
            }
        }
        cand++;
        if (sn_rand(sn) % cand == 0)
            pick = i;
    }
    if (pick == (size_t)-1) {
        if (!next_ready)
            return 0;
        sn->now = next_ready; /* nothing else moves: time leaps to it */
        return 1;
    }
    sn_msg m = sn->q[pick];
    memmove(&sn->q[pick], &sn->q[pick + 1], (sn->qlen - pick - 1) * sizeof *sn->q);
    sn->qlen--;
    sn->now += 1000; /* 1 us a message */
    if (m.op == SN_CLOSE) { /* the peer's end of the connection: after all it wrote */
        sn_trace_msg(sn, "close", &m);
        if (!sn->gone[m.dst])
            sn_rail_event(sn, m.dst, m.src, m.rail, BFO_EV_RAIL_ERROR);
        return 1;
    }
    if (m.wait == SN_W_ACK_HELD) { /* delivered before; now acknowledged */
        sn_heard(sn, &m);
        sn_complete(sn, &m, 1);
        return 1;
    }
    if (sn->gone[m.dst]) /* its process ended: nothing reaches it */
        m.kind = SN_LOSE;
    int ok = m.kind == SN_NONE || m.kind == SN_DELAY;
    if (m.op != SN_SEND) { /* RDMA: the peer's memory, checked */
        uint8_t *at = NULL;
        if (m.kind != SN_LOSE && (!sn->hooks || sn->hooks->arrive(sn->hooks->ctx, &m) == BFO_OK) &&
            (at = sn_rdma_access(sn, m.dst, m.op, m.rail, m.raddr, m.key, m.len)) != NULL) {
            sn_trace_msg(sn, m.kind == SN_DELIVER_ERROR ? "arrive-error" : "arrive", &m);
            if (m.op == SN_WRITE)
                memcpy(at, m.data, m.len);
            else
                memcpy(m.local, at, m.len);
            sn->delivered++;
        } else {
            sn_trace_msg(sn, "lost", &m);
            ok = 0;
            sn->lost++;
        }
    } else if (m.kind != SN_LOSE) {
        sn_trace_msg(sn, m.kind == SN_DELIVER_ERROR ? "arrive-error" : "arrive", &m);
        const bfo_stats *st = &sn->eng[m.dst]->stats;
        uint64_t dup = st->duplicates_dropped, stale = st->stale_dropped,
                 bad = st->protocol_violations;
        int rc;
        if (sn->place && !sn->hooks && !m.placing) {
            size_t hs = 0;
            bfo_place_ticket tk;
            uint8_t *d = bfo_engine_place(sn->eng[m.dst], m.src, m.data, m.len, m.len, &hs, &tk);
            if (d) { /* the first half read in place; the rest at a later step, first on its path */
                memcpy(d, m.data + hs, (m.len - hs) / 2);
                m.placing = 1;
                m.pl_dst = d;
                m.pl_hs = hs;
                m.pl_tk = tk;
                sn->placed++;
                sn_trace_msg(sn, "placing", &m);
                memmove(&sn->q[1], &sn->q[0], sn->qlen * sizeof *sn->q);
                sn->q[0] = m;
                sn->qlen++;
                return 1;
            }
        }
        if (m.placing) {
            size_t half = (m.len - m.pl_hs) / 2;
            if (bfo_engine_place_ok(sn->eng[m.dst], m.pl_tk)) {
                memcpy(m.pl_dst + half, m.data + m.pl_hs + half, m.len - m.pl_hs - half);
                rc = bfo_engine_frame_placed(sn->eng[m.dst], m.src, m.rail, m.data, m.pl_hs, m.pl_dst,
                                             m.len - m.pl_hs, sn->now);
            } else { /* the receive is gone: the rest is read elsewhere, the frame dropped */
                rc = BFO_ERR_STALE;
                sn->placed_dropped++;
            }
        } else
            rc = sn->hooks ? sn->hooks->arrive(sn->hooks->ctx, &m)
                           : bfo_engine_frame(sn->eng[m.dst], m.src, m.rail, m.data, m.len, sn->now);
        /* what the engine dropped before any machine saw it */
        if (st->duplicates_dropped != dup)
            sn_trace_msg(sn, "duplicate", &m);
        if (st->stale_dropped != stale)
            sn_trace_msg(sn, "stale", &m);
        if (st->protocol_violations != bad)
            sn_trace_msg(sn, "violation", &m);
        if (rc == BFO_ERR_AGAIN) { /* no buffer yet: the frame waits, in order */
            memmove(&sn->q[1], &sn->q[0], sn->qlen * sizeof *sn->q);
            sn->q[0] = m;
            sn->qlen++;
            if (sn->path[sn_link(sn, m.dst, m.src, m.rail)] == SN_PATH_OPEN)
                sn_heard(sn, &m); /* the receiver's keepalive while it holds back */
            sn_trace_msg(sn, "again", &sn->q[0]);
            return 0;
        }
        if (rc == BFO_ERR_PEER_UNREACHABLE) /* refused, not acknowledged */
            ok = 0;
        else
            sn->delivered++;
    } else {
        sn_trace_msg(sn, "lost", &m);
        sn->lost++;
    }
    if (!ok)
        sn->deliver_errors += m.kind == SN_DELIVER_ERROR;
    free(m.data);
    m.data = NULL;
    if (ok && !m.dead && sn->path[sn_link(sn, m.dst, m.src, m.rail)] != SN_PATH_OPEN) {
        /* delivered; the acknowledgement cannot come back (yet) */
        m.wait = sn->path[sn_link(sn, m.dst, m.src, m.rail)] == SN_PATH_SILENT ? SN_W_ACK_LOST : SN_W_ACK_HELD;
        sn_push(sn, &m);
        return 1;
    }
    if (ok)
        sn_heard(sn, &m);
    sn_complete(sn, &m, ok);
    if (m.dead && !sn->hooks && !sn->gone[m.src])
        sn_rail_event(sn, m.src, m.dst, m.rail, BFO_EV_RAIL_ERROR);
    return 1;
}

/* The process of rank r ends, its engine having left (bfo_engine_leave):
 * see the top.  Only from outside the network's step and engine calls. */
static inline void sn_rank_exits(simnet *sn, int r)
{
    if (sn->gone[r])
        return;
    /* what it posted and has not seen complete: completed with an error now
     * (its transport closes; only its engine hears of it) */
    for (;;) {
        size_t i;
        for (i = 0; i < sn->qlen; i++) {
            const sn_msg *m = &sn->q[i];
            if (m->src == r && m->op != SN_CLOSE && (m->dead || m->wait != SN_W_NONE || m->op != SN_SEND))
                break;
        }
        if (i == sn->qlen)
            break;
        sn_msg m = sn->q[i];
        memmove(&sn->q[i], &sn->q[i + 1], (sn->qlen - i - 1) * sizeof *sn->q);
        sn->qlen--;
        sn_trace_msg(sn, "closed", &m);
        free(m.data);
        sn_complete(sn, &m, 0);
    }
    /* frames on the wire from it go on, uncompleted at it; their
     * completions as failures now */
    for (size_t i = 0; i < sn->qlen; i++)
        if (sn->q[i].src == r && sn->q[i].op == SN_SEND) {
            sn_msg m = sn->q[i];
            m.data = NULL;
            sn_complete(sn, &m, 0);
        }
    sn->gone[r] = 1;
    if (sn->trace)
        fprintf(sn->trace, "%12.6f ms  wire  exit     rank %d\n", (double)sn->now / 1e6, r);
    /* frames to it: not delivered, their senders see an error (and the
     * connection's end, RAIL_ERROR, when the failure moves) */
    for (size_t i = 0; i < sn->qlen; i++) {
        sn_msg *m = &sn->q[i];
        /* (one that vanished on a silent path, or whose acknowledgement did,
         * stays so: its sender hears nothing, as over a cut cable) */
        if (m->dst == r && m->op != SN_CLOSE && !m->dead &&
            (m->wait == SN_W_NONE || m->wait == SN_W_ACK_HELD)) {
            m->dead = 1;
            m->kind = SN_LOSE;
            m->wait = SN_W_NONE;
        }
    }
    /* its connections' ends, behind what it wrote */
    for (int p = 0; p < sn->n; p++)
        for (int k = 0; p != r && !sn->gone[p] && k < sn->nrails; k++) {
            sn_msg c;
            memset(&c, 0, sizeof c);
            c.op = SN_CLOSE;
            c.src = r;
            c.dst = p;
            c.rail = k;
            c.type = SN_TYPE_CLOSE;
            c.order = sn->order++;
            if (sn->path[sn_link(sn, r, p, k)] == SN_PATH_SILENT || sn_path_lost(sn, r, p, k))
                c.wait = SN_W_LOST; /* a cut cable: the peer never hears of the end */
            sn_push(sn, &c);
        }
}

/* The process of rank r is killed (SIGKILL, no BYE): as sn_rank_exits, but
 * its engine hears nothing more, not even the failures of what it posted
 * (an engine that heard them would post them again, on another rail, and
 * again).  Only from outside the network's step and engine calls. */
static inline void sn_rank_killed(simnet *sn, int r)
{
    sn->killed[r] = 1;
    sn_rank_exits(sn, r);
}

/* After a step: the engines' timers, bfo_engine_progress (simnet.progress_ns
 * says whose). */
static inline void sn_progress(simnet *sn)
{
    if (sn->progress_ns && sn->now < sn->progressed_at + sn->progress_ns)
        return;
    for (int i = 0; i < sn->n; i++)
        if (!sn->gone[i])
            bfo_engine_progress(sn->eng[i], sn->now);
    sn->progressed_at = sn->now;
}

/* Runs until done(arg) is true or the simulated time passes limit_ns.
 * Returns 1 when done. */
static inline int sn_run(simnet *sn, int (*done)(void *), void *arg, uint64_t limit_ns)
{
    uint64_t end = sn->now + limit_ns;
    while (!done(arg)) {
        if (sn->now >= end)
            return 0;
        if (!sn_step(sn)) /* idle: let timers fire */
            sn->now += 5000000; /* 5 ms */
        sn_progress(sn);
    }
    return 1;
}

static inline void sn_free(simnet *sn)
{
    for (size_t i = 0; i < sn->qlen; i++)
        free(sn->q[i].data);
    free(sn->q);
    for (size_t i = 0; i < sn->nregs; i++)
        sn_reg_end(sn, &sn->regs[i]);
    free(sn->regs);
    sn->regs = NULL;
    sn->q = NULL;
    sn->qlen = sn->qcap = 0;
    free(sn->eng);
    free(sn->ep);
    free(sn->be);
    free(sn->gone);
    free(sn->killed);
    free(sn->connects);
    free(sn->disconnects);
    free(sn->pending);
    free(sn->path);
    free(sn->link_free);
    free(sn->link_tokens);
    free(sn->head_seen);
    sn->eng = NULL;
    sn->ep = NULL;
    sn->be = NULL;
    sn->gone = sn->killed = NULL;
    sn->connects = sn->disconnects = sn->path = NULL;
    sn->pending = NULL;
    sn->npending = sn->cappending = 0;
    sn->link_free = sn->link_tokens = NULL;
    sn->head_seen = NULL;
}

#endif /* BFO_SIMNET_H */
