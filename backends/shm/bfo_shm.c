// SPDX-License-Identifier: BSD-3-Clause
/* bfo_shm.c - the shared-memory transport (see bfo_shm.h for the contract and design). */
#define _GNU_SOURCE
#include "bfo_shm.h"
#include "bfo_auth.h"
#include "bfo_link.h"
#include "bfo_list.h"
#include "bfo_tp_os.h"
#include "bfo_transport.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <nmmintrin.h>
#define SHM_CRC_HW 1
#endif

enum { EV_LISTEN = 1, EV_PEND = 2, EV_CONN = 3, EV_PID = 4 };
enum { E_SEND = 1, E_READ = 2 };

#define RING_DEFAULT (1u << 20)
#define RING_MAX (1u << 30)
/* MEMORY (bfo_shm.h): the rings of every connection of this host's ranks
 * within this, per rail, unless the options say otherwise (ring_scale) */
#define NODE_DEFAULT (256u << 20)
#define CHUNK_DEFAULT (1u << 20)
/* REWIND (ring_put): an empty ring starts over from its first byte once
 * this much of it is behind the head */
#define REWIND_AT 4096u
#define CONNECT_TIMEOUT_DEFAULT_NS 1000000000ull
/* MEMORY (bfo_shm.h): a ring's pages are reserved as its writer first
 * reaches them (madvise MADV_POPULATE_WRITE, Linux 5.14), not all at the
 * dial (fallocate of the whole segment: 0.5 ms a 2 MiB segment here, the
 * largest part of a connection's set-up, for pages a ring that rewinds
 * never touches) */
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
#define PAGE_BYTES 4096u
/* The rail's rate before the engine measures one (MB/s), unless the args
 * or the options say: a copy into a ring, well above the 1 GB/s the engine
 * guesses for a rail without a figure (TCP's).  With both guessed equal, a
 * small message went to the rail where it was expected first, and one
 * frame still unconsumed on shm (its receiver asleep or not scheduled, as
 * oversubscribed ranks are) sent the next to TCP, where it woke both ends
 * for its acknowledgements and beacons.  Small messages are no rate sample
 * (bfo__rail_gave): the guess stays what it is while only they flow, so it
 * is what keeps them on shm: a 4 KiB message goes to an idle TCP rail only
 * once 28 KiB wait on shm (docs/engine-design.md, "Protocols and striping"). */
#define BFO_SHM_BW_GUESS 8000u

/* AUTHENTICATION (bfo_shm.h).  An authenticated message: the hello's 64
 * bytes, then the handshake's part (bfo_auth.h). */
#define HELLO_AUTH_LEN (BFO_SHM_HELLO_SIZE + BFO_SHM_HELLO_AUTH_SIZE)
#define AUTH_AREA(h) ((h) + BFO_SHM_HELLO_SIZE)
/* the MAC of a tie answer ("I am dialing you"), over the hello's HELLO */
#define TIE_LABEL "bfo shm tie v1"
/* An acceptor waits for a challenged hello's CONFIRM at most this long
 * while the dialer's process exists (it may compute; proof_host_answers). */
#define PROOF_WAIT_MAX_NS 60000000000ull

/* The segment's control lines, each on a cache line of its own: per
 * direction d (0: dialer to acceptor, 1: acceptor to dialer) the
 * producer's head, then the consumer's tail and beat; per side s (0 the
 * dialer, 1 the acceptor) its sleeping flag. */
#define CTL_HEAD(d) (64 + 128 * (d))
#define CTL_TAIL(d) (64 + 128 * (d) + 64)
#define CTL_BEAT(d) (64 + 128 * (d) + 72)
#define CTL_SLEEP(s) (320 + 64 * (s))
/* ... and its "gone" flag: it closed the connection (LIFELINE) */
#define CTL_GONE(s) (320 + 64 * (s) + 8)

/* LIFELINE (bfo_shm.h): SO_PEERPIDFD, a connected unix socket's peer as a
 * pidfd (Linux 6.5; before, pidfd_open of SO_PEERCRED's pid) */
#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

#define REC_HDR BFO_SHM_REC_HDR
#define REC_ALIGN BFO_SHM_REC_ALIGN

static size_t rec_size(size_t len) { return (REC_HDR + len + REC_ALIGN - 1) & ~(size_t)(REC_ALIGN - 1); }

/* A descriptor: one posted send or read, from post to completion. */
typedef struct ent {
    int next, kind, rail;
    uint64_t token;
    uint64_t end;          /* send: the ring position after its record, once written */
    const void *base[2];
    size_t len[2];
    int n;
    const bfo_data_span *span; /* send of described data: its bytes follow base[0] (the header),
                                * copied (or packed) straight into the ring */
    size_t total, done;    /* frame bytes, or read bytes and those read so far */
    void *local;           /* read */
    uint64_t raddr;
} ent;

typedef bfo_list elist; /* a FIFO of descriptors (bfo_list.h) */

/* A record's header as the receiver took it: copied out of the ring once
 * (rec_load), then checked and used only from here.  The peer writes the
 * ring and may rewrite a header at any time; a check of the ring's bytes
 * followed by a use of the ring's bytes would let it pass one value and
 * use another (THE RING, bfo_shm.h). */
struct rec_hdr {
    uint32_t seq, len, crc;
    int kind, gen;
    uint8_t raw[12];       /* the header's first 12 bytes, as the checksum covers them */
};

typedef struct sconn {
    bfo_link c;            /* the conn machine: state, generation numbers, deadline (bfo_link.h) */
    int peer, rail, dialer; /* dialer: it writes ring 0 */
    int fd;                /* the handshake's unix socket, and the lifeline where this host
                            * has no pidfds; -1 when none (LIFELINE: the pidfd watches) */
    int peer_efd;          /* the peer's doorbell (eventfd), -1 when none */
    int spare_fd;          /* dialer: a segment made before the dial; -1 (none is: made at the dial) */
    int hello_mfd;         /* dialer: the segment's memfd, between dial and send_hello */
    bfo_auth_hs *hs;       /* dialer, authenticated: its handshake, from send_hello to the reply */
    uint32_t egen;         /* epoll tag generation (stale events) */
    int poisoned;          /* the fault hook swallowed its traffic */
    int parted;            /* the peer said goodbye, or this side leaves (shm_part): its
                            * end is no failure; for good (conn_reset keeps it) */
    int stalled;           /* the engine asked to offer the frame at rx_pos again */
    int up_idx;            /* its place in t->up, -1 */
    int pid;               /* the peer's process */
    int pidfd;             /* ... as a pidfd (readable once it has exited), -1 none yet; in the
                            * epoll set once the socket is closed (lifeline_handover) */
    uint64_t host_at;      /* the last look at it (host_evidence) */
    uint64_t ka_at;
    /* the segment */
    uint8_t *seg;
    size_t seg_len, ring;
    uint8_t *tx, *rx;      /* the rings: to the peer, from the peer */
    uint64_t *tx_head, *tx_tail, *tx_beat, *rx_head, *rx_tail, *rx_beat;
    uint32_t *my_sleep, *peer_sleep;
    uint32_t *my_gone, *peer_gone; /* LIFELINE: this side, the peer closed the connection */
    /* send */
    elist q;               /* written and not consumed, then unwritten from `unsent` */
    int unsent;
    elist reads;
    uint64_t head;         /* the next write position (*tx_head as published) */
    size_t tx_res;         /* bytes of the ring to the peer reserved from its start (ring_reserve) */
    uint64_t tail_seen;    /* the peer's tail as completions last took it */
    uint64_t space_tail;   /* ... as the space check last read it */
    uint64_t beat_seen;
    uint32_t tx_seq;
    /* receive */
    uint64_t rx_pos;       /* the next record to offer */
    uint64_t rx_pub;       /* the tail published */
    uint64_t rx_checked;   /* the record at rx_pos passed its checks (offered again) */
    struct rec_hdr rx_hdr; /* ... and its header as checked: the copy offered again, never
                            * re-read from the ring (the peer may have rewritten it since) */
    uint32_t rx_seq;
    uint64_t beat;
    uint64_t wakes;
} sconn;

struct pend;

/* An accepted connection whose hello passed its checks, as the conn machine
 * takes it (take, send_reply) or refuses it; authenticated, held by its
 * proof until the dialer's CONFIRM. */
typedef struct incoming {
    struct pend *p;
    int efd;           /* the dialer's doorbell, -1: none (given to the connection, or closed) */
    uint8_t *seg;      /* its segment, mapped; NULL: none (given, or unmapped) */
    size_t ring, seg_len;
    int rc;            /* take: an errno that fails the reply */
} incoming;

/* An authenticated hello being proven (options.auth): allocated when its
 * hello passed its checks, freed with its connection.  Stage 0: the
 * claim fed; 1: challenged (the handshake's reply sent), waiting for the
 * dialer's CONFIRM. */
typedef struct proof {
    int stage, peer;
    uint64_t attempt, challenged_at;
    bfo_auth_hs hs;
    incoming in;       /* the dialer's segment and doorbell, held until the proof */
    const char *why;   /* a proof refused: why (NULL: said nothing, it just went) */
} proof;

/* An accepted connection until its hello names the connection (bfo_tp.h),
 * and, authenticated, until its dialer proves the hello (pr). */
typedef struct pend {
    bfo_tp_pend a;     /* first member */
    proof *pr;
} pend;

static inline int pend_stage(const pend *p) { return p->pr ? p->pr->stage : 0; }

struct bfo_shm {
    int rank, size, nrails;
    bfo_tp_log lg;         /* slog */
    int ep, efd;           /* the epoll set (sockets), this rank's doorbell */
    bfo_shm_options o;
    bfo_sink sink;
    int lfd[BFO_MAX_RAILS];
    int drop[BFO_MAX_RAILS], corrupt[BFO_MAX_RAILS], refuse[BFO_MAX_RAILS];
    unsigned bw[BFO_MAX_RAILS];
    int rdma_caps;
    int pid;
    uint64_t nonce;
    uint8_t boot[16];
    uint64_t host_hash, ns_id;
    uint64_t job;
    int started;
    sconn *conns;
    int *up, nup;
    ent *ents;
    int nents, ent_free;
    elist failed;
    bfo_tp_pends pends;    /* accepted connections without a hello yet (pend) */
    int conns_ready, nstalled;
    bfo_link_binding lb;   /* the conn machine's binding: shm_act (lb.asked: connect() requests) */
    int armed, drain, scan_now;
    uint64_t now, last_scan;
    size_t max_frame, ring, seg_len; /* ring: a dial's (ring_scale) */
    int nlocal;            /* ranks on this host, this one too (ring_scale; 0: not counted yet) */
    int populate;          /* 1: rings reserved page by page as written (MADV_POPULATE_WRITE);
                            * 0: this kernel has none, the dialer reserves the whole segment */
    uint64_t ka_ns;
    uint64_t nprogress, nscans, nsleeps;
    uid_t euid;            /* SAME UID: a peer's socket must say this uid (unless any_uid) */
    int uid_logged[8];     /* the last pids refused for their uid, each logged once */
    unsigned nuid_logged;
    bfo_rail_stats st[BFO_MAX_RAILS];
};

/* ---------------------------------------------------------------- helpers */

/* This transport's log (bfo_tp.h). */
#define slog(t, ...) bfo_tp_logf(&(t)->lg, __VA_ARGS__)

static const bfo_tp_err shm_errs[] = {
    { BFO_SHM_ERR_SOCKET, "BFO_SHM_ERR_SOCKET" }, { BFO_SHM_ERR_SEGMENT, "BFO_SHM_ERR_SEGMENT" }, { 0, NULL }
};

const char *bfo_shm_errname(int rc)
{
    const char *name = bfo_tp_errname(shm_errs, rc);
    return name ? name : bfo_errname(rc);
}

static uint64_t ld_acq(const uint64_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static void st_rel(uint64_t *p, uint64_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
static void fence_sc(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

/* ------------------------------------------------------------------ CRC32C */

static uint32_t crc_tab[8][256];
static int crc_ready;
static int crc_hw;

static void crc_init(void)
{
    if (crc_ready)
        return;
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1)));
        crc_tab[0][i] = c;
    }
    for (int s = 1; s < 8; s++)
        for (int i = 0; i < 256; i++)
            crc_tab[s][i] = (crc_tab[s - 1][i] >> 8) ^ crc_tab[0][crc_tab[s - 1][i] & 0xff];
#ifdef SHM_CRC_HW
    __builtin_cpu_init();
    crc_hw = __builtin_cpu_supports("sse4.2");
#endif
    crc_ready = 1;
}

static uint32_t crc_sw(uint32_t crc, const uint8_t *p, size_t n)
{
    uint32_t c = ~crc;
    while (n && ((uintptr_t)p & 7)) {
        c = (c >> 8) ^ crc_tab[0][(c ^ *p++) & 0xff];
        n--;
    }
    while (n >= 8) {
        uint32_t lo = c ^ bfo_get32(p), hi = bfo_get32(p + 4);
        c = crc_tab[7][lo & 0xff] ^ crc_tab[6][(lo >> 8) & 0xff] ^ crc_tab[5][(lo >> 16) & 0xff] ^
            crc_tab[4][lo >> 24] ^ crc_tab[3][hi & 0xff] ^ crc_tab[2][(hi >> 8) & 0xff] ^
            crc_tab[1][(hi >> 16) & 0xff] ^ crc_tab[0][hi >> 24];
        p += 8;
        n -= 8;
    }
    while (n--)
        c = (c >> 8) ^ crc_tab[0][(c ^ *p++) & 0xff];
    return ~c;
}

#ifdef SHM_CRC_HW
__attribute__((target("sse4.2"))) static uint32_t crc_sse(uint32_t crc, const uint8_t *p, size_t n)
{
    uint64_t c = ~crc & 0xffffffffu;
    while (n && ((uintptr_t)p & 7)) {
        c = _mm_crc32_u8((uint32_t)c, *p++);
        n--;
    }
    while (n >= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        c = _mm_crc32_u64(c, v);
        p += 8;
        n -= 8;
    }
    while (n--)
        c = _mm_crc32_u8((uint32_t)c, *p++);
    return ~(uint32_t)c;
}
#endif

uint32_t bfo_shm_crc32c(uint32_t crc, const void *p, size_t n)
{
    crc_init();
#ifdef SHM_CRC_HW
    if (crc_hw)
        return crc_sse(crc, (const uint8_t *)p, n);
#endif
    return crc_sw(crc, (const uint8_t *)p, n);
}

/* The checksum of a record: its first 12 header bytes (h: where they
 * are, the ring's for the writer, the receiver's copy for the receiver),
 * then its frame (at r + REC_HDR). */
static uint32_t rec_crc_of(const uint8_t *h, const uint8_t *r, size_t len)
{
    uint32_t c = bfo_shm_crc32c(0, h, 12);
    return len ? bfo_shm_crc32c(c, r + REC_HDR, len) : c;
}
static uint32_t rec_crc(const uint8_t *r, size_t len) { return rec_crc_of(r, r, len); }

/* The header of the record at r (64-byte aligned), copied out of the ring
 * in one go: two relaxed 8-byte loads (the compiler may neither re-read
 * nor split them), then parsed from the copy only. */
static void rec_load(struct rec_hdr *h, const uint8_t *r)
{
    uint64_t w[2];
    w[0] = __atomic_load_n((const uint64_t *)(const void *)r, __ATOMIC_RELAXED);
    w[1] = __atomic_load_n((const uint64_t *)(const void *)(r + 8), __ATOMIC_RELAXED);
    memcpy(h->raw, w, sizeof h->raw);
    h->seq = bfo_get32(h->raw);
    h->len = bfo_get32(h->raw + 4);
    h->kind = bfo_get16(h->raw + 8);
    h->gen = bfo_get16(h->raw + 10);
    h->crc = bfo_get32((const uint8_t *)w + 12);
}

/* ------------------------------------------------------------ entry pool */

static inline void el_push(bfo_shm *t, elist *L, int i) { bfo_list_push(&t->ents->next, sizeof *t->ents, L, i); }
static inline int el_pop(bfo_shm *t, elist *L) { return bfo_list_pop(&t->ents->next, sizeof *t->ents, L); }
static inline void el_append(bfo_shm *t, elist *dst, elist *src)
{
    bfo_list_append(&t->ents->next, sizeof *t->ents, dst, src);
}

static int el_count(const bfo_shm *t, int from)
{
    int n = 0;
    for (int i = from; i >= 0; i = t->ents[i].next)
        n++;
    return n;
}

/* Send and read descriptors at open: more as posts in flight need them
 * (ent_take), kept once taken. */
#define ENTS_FIRST 256

/* A free descriptor, taken; when every one is in use (more posts in flight
 * than ever before), twice as many first.  Descriptors are named by index
 * everywhere (queues, the free list); no pointer to one is held across a
 * call that may post, so they may move.  -1: none (the post is refused). */
static int ent_take(bfo_shm *t)
{
    void *base = t->ents;
    int i = bfo_list_alloc(&base, &t->nents, sizeof *t->ents, offsetof(ent, next), &t->ent_free);
    t->ents = (ent *)base;
    return i;
}

/* Completes an entry: frees it first (the engine may post from inside). */
static void complete(bfo_shm *t, int i, int ok)
{
    bfo_rail_stats *rs = &t->st[t->ents[i].rail];
    bfo_tp_complete(&t->sink, &t->ents->next, sizeof *t->ents, &t->ent_free, i, t->ents[i].token, ok,
                    &rs->completed_ok, &rs->completed_failed);
}

/* ------------------------------------------------------------ events */

static sconn *conn_of(bfo_shm *t, int peer, int rail) { return &t->conns[peer * t->nrails + rail]; }

/* The connection of an engine's call, NULL when (peer, rail) names none. */
static sconn *pair_conn(bfo_shm *t, int peer, int rail)
{
    return bfo_tp_pair_ok(t->rank, t->size, t->nrails, peer, rail) ? conn_of(t, peer, rail) : NULL;
}

/* The engine has the connection (the conn machine is UP). */
static inline int conn_up_now(const sconn *c) { return bfo_link_up(&c->c); }

/* The segment generation: the conn machine's attempt number of the
 * current connection (its dialer's). */
static inline uint64_t seg_gen(const sconn *c) { return c->c.attempt; }

/* A dialer whose reply has not come tells the engine that the peer's
 * process exists at most this often (hello_heard). */
#define HELLO_HEARD_EVERY_NS 100000000ull

static void heard(bfo_shm *t, const sconn *c)
{
    if (t->sink.heard)
        t->sink.heard(t->sink.ctx, c->peer, c->rail, t->now);
}


static void up_add(bfo_shm *t, sconn *c)
{
    if (c->up_idx < 0) {
        c->up_idx = t->nup;
        t->up[t->nup++] = (int)(c - t->conns);
    }
}

static void up_del(bfo_shm *t, sconn *c)
{
    if (c->up_idx >= 0) {
        int last = t->up[--t->nup];
        t->up[c->up_idx] = last;
        t->conns[last].up_idx = c->up_idx;
        c->up_idx = -1;
    }
}

/* ---------------------------------------------------------- the segment */

/* A fresh segment for one connection: a memfd of the segment's size,
 * sealed so that neither side can shrink it under the other's mapping.
 * Its pages are reserved as they are first written (seg_reserve,
 * ring_reserve: a host short of memory fails the connection with a
 * message, not the process with SIGBUS at a ring write). */
static int seg_create(const bfo_shm *t, int peer, int rail, char *why, size_t whylen)
{
    char name[64];
    int fd;
    snprintf(name, sizeof name, "bfo-shm.%d.%d.%d", t->rank, peer, rail);
    fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) {
        snprintf(why, whylen, "memfd_create: %s", strerror(errno));
        return -1;
    }
    if (ftruncate(fd, (off_t)t->seg_len) != 0) {
        snprintf(why, whylen, "cannot make a segment of %zu bytes of shared memory (ftruncate: %s; is "
                 "RLIMIT_FSIZE short?)", t->seg_len, strerror(errno));
        close(fd);
        return -1;
    }
    if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
        snprintf(why, whylen, "cannot seal the segment: %s", strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

/* madvise(MADV_POPULATE_WRITE) of [p, p + len): the pages allocated now,
 * or errno (ENOMEM, EFAULT: memory or the memory cgroup short; EINVAL: a
 * kernel before 5.14). */
static int populate(void *p, size_t len)
{
    uintptr_t from = (uintptr_t)p & ~(uintptr_t)(PAGE_BYTES - 1);
    int rc;
    do
        rc = madvise((void *)from, (uintptr_t)p + len - from, MADV_POPULATE_WRITE) == 0 ? 0 : errno;
    while (rc == EINTR || rc == EAGAIN);
    return rc;
}

/* The dialer's reserve of a fresh segment, before it writes the header:
 * the header's page (where ring 0 starts), or, on a kernel without
 * MADV_POPULATE_WRITE, the whole segment (fallocate, as before 5.14: the
 * acceptor's ring_reserve finds EINVAL too, and relies on it).  0, or -1
 * with why. */
static int seg_reserve(bfo_shm *t, int mfd, uint8_t *seg, char *why, size_t whylen)
{
    int rc = t->populate ? populate(seg, PAGE_BYTES) : EINVAL;
    if (rc == EINVAL && t->populate) {
        t->populate = 0;
        slog(t, 2, "no MADV_POPULATE_WRITE (Linux < 5.14): every segment reserved whole at its dial");
    }
    if (rc == EINVAL) {
        rc = fallocate(mfd, 0, 0, (off_t)t->seg_len) == 0 ? 0 : errno;
        if (rc == EOPNOTSUPP || rc == ENOSYS)
            rc = posix_fallocate(mfd, 0, (off_t)t->seg_len);
    }
    if (rc) {
        snprintf(why, whylen, "cannot reserve shared memory for the segment (%s: %s; is memory or the memory "
                 "cgroup short?)", t->populate ? "madvise" : "fallocate", strerror(rc));
        return -1;
    }
    return 0;
}

/* The pages of the ring to the peer up to offset end, reserved before
 * they are first written (MEMORY): page by page as the writer first
 * reaches them, so a ring that rewinds reserves its first pages only.  0,
 * or -1 with the connection broken (memory short: the rail fails, no
 * SIGBUS). */
static int ring_reserve(bfo_shm *t, sconn *c, size_t end)
{
    int rc;
    if (end <= c->tx_res)
        return 0;
    rc = t->populate ? populate(c->tx + c->tx_res, end - c->tx_res) : EINVAL;
    if (rc == EINVAL) { /* no MADV_POPULATE_WRITE: its dialer reserved the segment whole */
        t->populate = 0;
        c->tx_res = c->ring;
        return 0;
    }
    if (rc) {
        bfo_link_break(&t->lb, &c->c, 0, "cannot reserve shared memory for the ring (madvise: %s; is memory or "
                       "the memory cgroup short?)", strerror(rc));
        return -1;
    }
    c->tx_res = (size_t)((((uintptr_t)c->tx + end + PAGE_BYTES - 1) & ~(uintptr_t)(PAGE_BYTES - 1)) -
                         (uintptr_t)c->tx);
    if (c->tx_res > c->ring)
        c->tx_res = c->ring;
    return 0;
}

/* The connection's view of a mapped segment (dialer: it writes ring 0). */
static void conn_attach(sconn *c, uint8_t *seg, size_t seg_len, size_t ring)
{
    int d_tx = c->dialer ? 0 : 1, d_rx = 1 - d_tx;
    c->seg = seg;
    c->seg_len = seg_len;
    c->ring = ring;
    c->tx = seg + BFO_SHM_SEG_HDR + (size_t)d_tx * ring;
    c->rx = seg + BFO_SHM_SEG_HDR + (size_t)d_rx * ring;
    c->tx_head = (uint64_t *)(void *)(seg + CTL_HEAD(d_tx));
    c->tx_tail = (uint64_t *)(void *)(seg + CTL_TAIL(d_tx));
    c->tx_beat = (uint64_t *)(void *)(seg + CTL_BEAT(d_tx));
    c->rx_head = (uint64_t *)(void *)(seg + CTL_HEAD(d_rx));
    c->rx_tail = (uint64_t *)(void *)(seg + CTL_TAIL(d_rx));
    c->rx_beat = (uint64_t *)(void *)(seg + CTL_BEAT(d_rx));
    c->my_sleep = (uint32_t *)(void *)(seg + CTL_SLEEP(d_tx));
    c->peer_sleep = (uint32_t *)(void *)(seg + CTL_SLEEP(d_rx));
    c->my_gone = (uint32_t *)(void *)(seg + CTL_GONE(d_tx));
    c->peer_gone = (uint32_t *)(void *)(seg + CTL_GONE(d_rx));
}

/* -------------------------------------------------------- closing */

static void conn_reset(bfo_shm *t, sconn *c)
{
    if (c->stalled)
        t->nstalled--;
    up_del(t, c);
    c->fd = -1;
    c->peer_efd = -1;
    c->c.broken = c->c.malformed = c->poisoned = c->stalled = 0;
    c->pid = 0;
    if (c->pidfd >= 0)
        close(c->pidfd);
    c->pidfd = -1;
    c->host_at = 0;
    c->seg = NULL;
    c->seg_len = c->ring = 0;
    c->tx = c->rx = NULL;
    c->tx_head = c->tx_tail = c->tx_beat = c->rx_head = c->rx_tail = c->rx_beat = NULL;
    c->my_sleep = c->peer_sleep = NULL;
    c->my_gone = c->peer_gone = NULL;
    c->q.head = c->q.tail = c->reads.head = c->reads.tail = -1;
    c->unsent = -1;
    c->head = c->tail_seen = c->space_tail = c->beat_seen = 0;
    c->tx_res = 0;
    c->tx_seq = 0;
    c->rx_pos = c->rx_pub = 0;
    c->rx_checked = UINT64_MAX;
    c->rx_seq = 0;
    c->beat = 0;
    c->ka_at = 0;
}

static void take_tail(bfo_shm *t, sconn *c);
static int shm_reaches(void *vt, int rail, int peer, const bfo_addr *a);

/* LIFELINE (bfo_shm.h): this side closes the connection: its gone flag in
 * the segment, then the peer's doorbell, whether it sleeps or not (its
 * socket closing told it before; once the handshake is over there is
 * none).  The peer's wait_fds looks at the flag after it drained its
 * doorbell, its progress at every call. */
static void say_gone(bfo_shm *t, sconn *c)
{
    uint64_t one = 1;
    if (!c->seg)
        return;
    __atomic_store_n(c->my_gone, 1u, __ATOMIC_SEQ_CST);
    if (c->peer_efd >= 0 && write(c->peer_efd, &one, sizeof one) < 0 && errno != EAGAIN)
        slog(t, 3, "peer %d rail %d: doorbell: %s", c->peer, c->rail, strerror(errno));
}

/* The conn machine's close: what the peer's engine took completes ok, then
 * the connection is torn down and every send and read still in flight
 * completes with ok=0 (what the engine hears, RAIL_ERROR or CONNECT_FAILED,
 * the machine reported first).  Only at safe points (progress). */
static void conn_close(bfo_shm *t, sconn *c, const bfo_step *st, const char *why)
{
    elist dead = { -1, -1 };
    int malformed = st->event == BFO_CONN_EV_BROKEN && c->c.malformed;
    int was_up = bfo_link_state_up(st->from);
    free(c->hs); /* a dial's handshake ends with its connection */
    c->hs = NULL;
    if (c->fd < 0 && !c->seg && c->q.head < 0 && c->reads.head < 0) {
        if (c->c.broken)
            c->c.broken = 0;
        return;
    }
    /* frames the peer's engine took before the end: proven delivered */
    if (was_up && !c->poisoned && !malformed)
        take_tail(t, c);
    if (malformed) {
        t->st[c->rail].malformed++;
        slog(t, 1, "peer %d rail %d: connection dropped: %s", c->peer, c->rail, why);
    } else if (c->parted) { /* the peer left, or this side leaves: no failure */
        slog(t, 2, "peer %d rail %d: connection closed, parted: %s", c->peer, c->rail, why);
    } else {
        if (was_up)
            t->st[c->rail].conn_errors++;
        slog(t, was_up && st->event != BFO_CONN_EV_CONNECT_ASKED ? 1 : 2, "peer %d rail %d: connection closed: %s",
             c->peer, c->rail, why);
    }
    if (c->fd >= 0) {
        epoll_ctl(t->ep, EPOLL_CTL_DEL, c->fd, NULL);
        close(c->fd);
    }
    say_gone(t, c);
    if (c->peer_efd >= 0)
        close(c->peer_efd);
    if (c->seg)
        munmap(c->seg, c->seg_len);
    el_append(t, &dead, &c->q);
    el_append(t, &dead, &c->reads);
    conn_reset(t, c);
    c->egen++;
    for (int i = el_pop(t, &dead); i >= 0; i = el_pop(t, &dead))
        complete(t, i, 0);
}

static void fail_post(void *ctx, int i) { complete((bfo_shm *)ctx, i, 0); }

/* Broken connections close, failed posts complete (bfo_tp.h). */
static inline void settle(bfo_shm *t)
{
    bfo_tp_settle(&t->lb, &t->conns->c, sizeof *t->conns, t->size * t->nrails, &t->failed, &t->ents->next,
                  sizeof *t->ents, fail_post, t->now);
}

/* ------------------------------------------------------------------ send */

/* The peer's doorbell, only when it said it is going to sleep: the flag is
 * read after the publication (a full fence between, as wait_fds has
 * between setting it and looking for work), so one of the two sides sees
 * the other. */
static void wake_peer(bfo_shm *t, sconn *c)
{
    fence_sc();
    if (c->peer_efd < 0) /* authenticated, TAKEN not read yet: it rings then, if the flag is still set */
        return;
    if (__atomic_load_n(c->peer_sleep, __ATOMIC_RELAXED) &&
        __atomic_exchange_n(c->peer_sleep, 0u, __ATOMIC_SEQ_CST)) {
        uint64_t one = 1;
        if (write(c->peer_efd, &one, sizeof one) < 0 && errno != EAGAIN)
            slog(t, 3, "peer %d rail %d: doorbell: %s", c->peer, c->rail, strerror(errno));
        c->wakes++;
    }
}

static void publish_head(bfo_shm *t, sconn *c)
{
    st_rel(c->tx_head, c->head);
    wake_peer(t, c);
}

static void rec_header(uint8_t *r, uint32_t seq, uint32_t len, int kind, uint64_t gen)
{
    bfo_put32(r, seq);
    bfo_put32(r + 4, len);
    bfo_put16(r + 8, (uint16_t)kind);
    bfo_put16(r + 10, (uint16_t)gen);
}

/* Writes en's record (and a WRAP record before it when it does not fit
 * before the ring's end, or to rewind) if the ring has room; 1 when
 * written.  The head is published by the caller.
 *
 * REWIND (bfo_shm.h, MEMORY): a ring the peer has emptied starts over
 * from its first byte once REWIND_AT bytes of it are behind the head (a
 * WRAP record where the head is; the reader takes a WRAP anywhere).  Pages
 * of a ring are mapped by both processes as they are first written, and a
 * ring whose head only ever went round touched all of it after ring_bytes
 * of traffic (at 64 ranks: 63 x 2 x 256 KiB per rank, whatever the job
 * sends at once); rewound, a pair whose messages are taken as they come
 * touches REWIND_AT and one record per direction, and more only as deep as
 * the peer falls behind.  Only when the record fits before the WRAP (need
 * <= off): it then overwrites nothing the reader has not passed. */
static int ring_put(bfo_shm *t, sconn *c, ent *en)
{
    size_t need = rec_size(en->total), off = (size_t)(c->head & (c->ring - 1));
    size_t pad = off + need > c->ring ? c->ring - off : 0;
    uint8_t *r;
    if (!pad && off >= REWIND_AT && need <= off) {
        uint64_t tail = ld_acq(c->tx_tail);
        if (tail == c->head) { /* empty: every record before it taken */
            c->space_tail = tail;
            pad = c->ring - off;
        }
    }
    if (c->head + pad + need - c->space_tail > c->ring) {
        uint64_t tail = ld_acq(c->tx_tail);
        if (tail > c->space_tail && tail <= c->head)
            c->space_tail = tail;
        if (c->head + pad + need - c->space_tail > c->ring)
            return 0;
    }
    if (ring_reserve(t, c, pad ? off + REC_HDR : off + need) != 0 || (pad && ring_reserve(t, c, need) != 0))
        return 0; /* broken: the rail fails, what is queued completes ok=0 */
    if (pad) {
        r = c->tx + off;
        rec_header(r, ++c->tx_seq, 0, BFO_SHM_REC_WRAP, seg_gen(c));
        bfo_put32(r + 12, rec_crc(r, 0));
        c->head += pad;
        off = 0;
    }
    r = c->tx + off;
    rec_header(r, ++c->tx_seq, (uint32_t)en->total, BFO_SHM_REC_DATA, seg_gen(c));
    if (en->len[0])
        memcpy(r + REC_HDR, en->base[0], en->len[0]);
    if (en->n > 1 && en->len[1])
        memcpy(r + REC_HDR + en->len[0], en->base[1], en->len[1]);
    if (en->span)
        bfo_data_span_copy(en->span, 0, r + REC_HDR + en->len[0], en->span->len);
    bfo_put32(r + 12, rec_crc(r, en->total));
    if (t->corrupt[c->rail]) { /* test hook: after the checksum */
        t->corrupt[c->rail] = 0;
        r[REC_HDR + en->total / 2] ^= 0x20;
        slog(t, 2, "peer %d rail %d: test hook: record %u corrupted", c->peer, c->rail, c->tx_seq);
    }
    c->head += need;
    en->end = c->head;
    t->st[c->rail].frames_tx++;
    t->st[c->rail].bytes_tx += en->total;
    return 1;
}

/* Writes the queued sends while the ring has room. */
static void flush(bfo_shm *t, sconn *c)
{
    int wrote = 0;
    while (c->unsent >= 0 && ring_put(t, c, &t->ents[c->unsent])) {
        c->unsent = t->ents[c->unsent].next;
        wrote = 1;
    }
    if (wrote)
        publish_head(t, c);
}

/* The fault hook: the rail's traffic vanishes from now on, on this
 * connection until it is replaced. */
static int swallowing(bfo_shm *t, sconn *c)
{
    if (t->drop[c->rail] && !c->poisoned) {
        c->poisoned = 1;
        slog(t, 2, "peer %d rail %d: fault hook: the connection goes silent", c->peer, c->rail);
    }
    return c->poisoned;
}

/* A send: iov[0..iovcnt) and, for described data, span's bytes after them. */
static int post_frame(bfo_shm *t, int peer, int rail, const bfo_iov *iov, int iovcnt,
                      const bfo_data_span *span, uint64_t token)
{
    int64_t len = bfo_tp_send_len(&t->lg, t->size, t->nrails, peer, rail, iov, iovcnt, span, t->max_frame);
    int i = len < 0 ? -1 : ent_take(t);
    sconn *c;
    ent *en;
    if (i < 0) {
        if (len >= 0)
            slog(t, 1, "post refused: no descriptor");
        return -1;
    }
    c = conn_of(t, peer, rail);
    en = &t->ents[i];
    en->kind = E_SEND;
    en->rail = rail;
    en->token = token;
    en->n = iovcnt;
    bfo_tp_pieces(iov, iovcnt, en->base, en->len);
    en->span = span;
    en->total = (size_t)len;
    en->end = 0;
    if (!conn_up_now(c) || c->c.broken) {
        el_push(t, &t->failed, i);
        return 0;
    }
    el_push(t, &c->q, i);
    if (swallowing(t, c)) {
        t->st[rail].dropped_tx++;
        if (c->unsent < 0)
            c->unsent = i;
        return 0;
    }
    if (c->unsent < 0) {
        if (ring_put(t, c, en)) { /* nothing queued before it: written now */
            publish_head(t, c);
            return 0;
        }
        c->unsent = i;
        return 0;
    }
    flush(t, c); /* behind queued frames: they go first, if the ring has room now */
    return 0;
}

static int shm_post_send(void *ctx, int peer, int rail, const bfo_iov *iov, int iovcnt, uint64_t token)
{
    return post_frame((bfo_shm *)ctx, peer, rail, iov, iovcnt, NULL, token);
}

/* Described data: copied (iovec) or packed (the layer's pack) straight into
 * the ring when the record is written, no copy before it. */
static int shm_post_send_data(void *ctx, int peer, int rail, const bfo_iov *hdr,
                              const bfo_data_span *data, uint64_t token)
{
    return post_frame((bfo_shm *)ctx, peer, rail, hdr, 1, data, token);
}

/* The peer's consumed counter: sends up to it complete ok=1. */
static void take_tail(bfo_shm *t, sconn *c)
{
    uint64_t tail = ld_acq(c->tx_tail);
    if (tail == c->tail_seen)
        return;
    if (tail < c->tail_seen || tail > c->head) {
        bfo_link_break(&t->lb, &c->c, 1, "the peer's consumed counter %llu is outside the ring (%llu..%llu)",
                   (unsigned long long)tail, (unsigned long long)c->tail_seen, (unsigned long long)c->head);
        return;
    }
    c->tail_seen = tail;
    if (tail > c->space_tail)
        c->space_tail = tail;
    while (c->q.head >= 0 && c->q.head != c->unsent && t->ents[c->q.head].end <= tail)
        complete(t, el_pop(t, &c->q), 1);
    heard(t, c);
}

/* ---------------------------------------------------------------- reads */

static int shm_post_read(void *ctx, int peer, int rail, void *local, size_t len, uint64_t raddr,
                         uint32_t key, uint64_t token)
{
    bfo_shm *t = (bfo_shm *)ctx;
    sconn *c;
    int i;
    (void)key;
    if (!bfo_tp_pair_ok(t->rank, t->size, t->nrails, peer, rail) || (!local && len) || (i = ent_take(t)) < 0)
        return -1;
    c = conn_of(t, peer, rail);
    t->ents[i] = (ent){ .kind = E_READ, .rail = rail, .token = token, .local = local, .raddr = raddr, .total = len };
    if (!conn_up_now(c) || c->c.broken)
        el_push(t, &t->failed, i);
    else
        el_push(t, &c->reads, i);
    return 0;
}

static int shm_post_write(void *ctx, int peer, int rail, const void *local, size_t len, uint64_t raddr,
                          uint32_t key, uint64_t token)
{
    (void)ctx;
    (void)peer;
    (void)rail;
    (void)local;
    (void)len;
    (void)raddr;
    (void)key;
    (void)token;
    return -1; /* GET only: a late write into a buffer handed back could not be revoked */
}

static int shm_reg_mem(void *ctx, void *buf, size_t len, unsigned access, uint64_t *raddr, uint32_t *keys,
                       uint64_t *handle)
{
    (void)ctx;
    (void)len;
    (void)access; /* a peer reads through process_vm_readv: no key to scope */
    (void)keys; /* no key: its rails' stay 0 */
    *raddr = (uint64_t)(uintptr_t)buf;
    *handle = 0;
    return 0;
}

static void shm_dereg_mem(void *ctx, uint64_t handle)
{
    (void)ctx;
    (void)handle;
}

/* The reads of one connection, in order, at most read_chunk bytes in all
 * per call; a read that is not done goes on at the next call. */
static int do_reads(bfo_shm *t, sconn *c)
{
    size_t budget = t->o.read_chunk;
    int n = 0;
    while (c->reads.head >= 0 && budget > 0 && !c->c.broken && conn_up_now(c)) {
        ent *en = &t->ents[c->reads.head];
        size_t want = en->total - en->done;
        ssize_t got;
        int err = 0;
        if (want > budget)
            want = budget;
        if (want == 0) {
            complete(t, el_pop(t, &c->reads), 1);
            n++;
            continue;
        }
        if (t->refuse[c->rail]) { /* test hook */
            t->refuse[c->rail] = 0;
            got = -1;
            err = EPERM;
        } else {
            struct iovec l = { (char *)en->local + en->done, want };
            struct iovec r = { (void *)(uintptr_t)(en->raddr + en->done), want };
            got = process_vm_readv(c->pid, &l, 1, &r, 1, 0);
            err = got < 0 ? errno : got == 0 ? EFAULT : 0;
            if (got < 0 && err == EINTR)
                continue;
        }
        if (got <= 0) {
            uint64_t at = en->raddr + en->done;
            bfo_link_break(&t->lb, &c->c, 0, "process_vm_readv of %zu bytes at 0x%llx from pid %d: %s", want,
                       (unsigned long long)at, c->pid, strerror(err));
            complete(t, el_pop(t, &c->reads), 0);
            return n + 1;
        }
        en->done += (size_t)got;
        budget -= (size_t)got;
        t->st[c->rail].bytes_tx += (uint64_t)got;
        if (en->done == en->total)
            complete(t, el_pop(t, &c->reads), 1);
        n++;
    }
    return n;
}

/* -------------------------------------------------------------- receive */

/* Offers the peer's records to the engine, in order, until one must wait;
 * then publishes how far the engine took them. */
static int rx_drain(bfo_shm *t, sconn *c)
{
    uint64_t head = ld_acq(c->rx_head);
    const uint64_t mask = c->ring - 1;
    int n = 0;
    if (head == c->rx_pos)
        return 0;
    if (head < c->rx_pos || head - c->rx_pub > c->ring || (head & (REC_ALIGN - 1))) {
        bfo_link_break(&t->lb, &c->c, 1, "the peer's ring head %llu is outside the ring (%llu..%llu)", (unsigned long long)head,
                   (unsigned long long)c->rx_pos, (unsigned long long)(c->rx_pub + c->ring));
        return 0;
    }
    while (c->rx_pos < head && !c->c.broken && conn_up_now(c)) {
        size_t off = (size_t)(c->rx_pos & mask);
        const uint8_t *r = c->rx + off;
        struct rec_hdr h;
        uint32_t seq, len;
        int kind;
        if (c->rx_checked != c->rx_pos) {
            rec_load(&h, r); /* the one read of this header: checked and used from the copy */
            if (h.seq != c->rx_seq + 1 || h.gen != (uint16_t)seg_gen(c)) {
                bfo_link_break(&t->lb, &c->c, 1, "corrupt slot at %llu: sequence %u generation %u, expected %u and %u",
                           (unsigned long long)c->rx_pos, h.seq, (unsigned)h.gen, c->rx_seq + 1,
                           (unsigned)(uint16_t)seg_gen(c));
                break;
            }
            if (h.kind == BFO_SHM_REC_WRAP ? (h.len != 0 || off == 0 || c->rx_pos + (c->ring - off) > head)
                                           : (h.kind != BFO_SHM_REC_DATA || h.len == 0 || h.len > t->max_frame ||
                                              off + rec_size(h.len) > c->ring || c->rx_pos + rec_size(h.len) > head)) {
                bfo_link_break(&t->lb, &c->c, 1, "corrupt slot at %llu: kind %d, length %u", (unsigned long long)c->rx_pos,
                           h.kind, h.len);
                break;
            }
            uint32_t crc = rec_crc_of(h.raw, r, h.len);
            if (crc != h.crc) {
                bfo_link_break(&t->lb, &c->c, 1, "corrupt slot at %llu (sequence %u, %u bytes): checksum %08x, computed %08x",
                           (unsigned long long)c->rx_pos, h.seq, h.len, h.crc, crc);
                break;
            }
            c->rx_checked = c->rx_pos;
            c->rx_hdr = h;
        } else {
            h = c->rx_hdr; /* offered again (back-pressure): as checked, whatever the ring says now */
        }
        seq = h.seq;
        len = h.len;
        kind = h.kind;
        if (kind == BFO_SHM_REC_WRAP) {
            c->rx_pos += c->ring - off;
            c->rx_seq = seq;
            continue;
        }
        if (c->poisoned) { /* the fault hook: it never came */
            t->st[c->rail].dropped_rx++;
            c->rx_pos += rec_size(len);
            c->rx_seq = seq;
            continue;
        }
        int rc = t->sink.frame(t->sink.ctx, c->peer, c->rail, r + REC_HDR, len, t->now);
        if (rc == BFO_ERR_AGAIN) {
            if (!c->stalled) {
                c->stalled = 1;
                t->nstalled++;
                t->st[c->rail].backpressure++;
            }
            if (t->now - c->ka_at >= t->ka_ns) { /* alive, only stalled: the peer's rail_heard */
                c->ka_at = t->now;
                __atomic_store_n(c->rx_beat, ++c->beat, __ATOMIC_RELEASE);
                t->st[c->rail].keepalives_tx++;
            }
            break;
        }
        if (c->stalled) {
            c->stalled = 0;
            t->nstalled--;
        }
        if (rc != BFO_OK && rc != BFO_ERR_STALE) {
            const char *type = bfo_frag_name(r[REC_HDR]);
            bfo_link_break(&t->lb, &c->c, 1, "engine rejected a frame (%s, %u bytes): %s", type ? type : "unknown type", len,
                       bfo_errname(rc));
            break;
        }
        c->rx_pos += rec_size(len);
        c->rx_seq = seq;
        t->st[c->rail].frames_rx++;
        t->st[c->rail].bytes_rx += len;
        n++;
    }
    if (c->rx_pos != c->rx_pub && !c->poisoned && c->seg) {
        st_rel(c->rx_tail, c->rx_pos);
        c->rx_pub = c->rx_pos;
        wake_peer(t, c);
    }
    return n;
}

/* One connection's shared memory: acknowledgements, keepalives, frames,
 * queued sends, reads.  No system call unless there is work. */
static int conn_poll(bfo_shm *t, sconn *c)
{
    int n = 0;
    if (__atomic_load_n(c->peer_gone, __ATOMIC_ACQUIRE)) {
        bfo_link_break(&t->lb, &c->c, 0, "the peer closed the connection (it dropped the rail, or left)");
        return 1;
    }
    if (swallowing(t, c)) {
        if (c->seg && ld_acq(c->rx_head) != c->rx_pos && !c->c.broken)
            n += rx_drain(t, c); /* counted, dropped */
        return n;
    }
    if (__atomic_load_n(c->tx_tail, __ATOMIC_RELAXED) != c->tail_seen) {
        take_tail(t, c);
        n++;
    }
    if (__atomic_load_n(c->tx_beat, __ATOMIC_RELAXED) != c->beat_seen) {
        c->beat_seen = __atomic_load_n(c->tx_beat, __ATOMIC_RELAXED);
        heard(t, c);
    }
    if (!c->c.broken && conn_up_now(c))
        n += rx_drain(t, c);
    if (!c->c.broken && conn_up_now(c) && c->unsent >= 0)
        flush(t, c);
    if (!c->c.broken && conn_up_now(c) && c->reads.head >= 0)
        n += do_reads(t, c);
    return n;
}

/* ----------------------------------------------------------- addresses */

static void addr_make(const bfo_shm *t, int rail, bfo_addr *a)
{
    memset(a, 0, sizeof *a);
    a->len = BFO_SHM_ADDR_SIZE;
    bfo_put32(a->bytes, BFO_SHM_ADDR_MAGIC);
    bfo_put16(a->bytes + 4, BFO_SHM_ADDR_VERSION);
    bfo_put16(a->bytes + BFO_SHM_ADDR_OFF_RAIL, (uint16_t)rail);
    bfo_put32(a->bytes + BFO_SHM_ADDR_OFF_RANK, (uint32_t)t->rank);
    bfo_put32(a->bytes + BFO_SHM_ADDR_OFF_PID, (uint32_t)t->pid);
    bfo_put64(a->bytes + BFO_SHM_ADDR_OFF_NONCE, t->nonce);
    memcpy(a->bytes + BFO_SHM_ADDR_OFF_BOOT, t->boot, 16);
    bfo_put64(a->bytes + BFO_SHM_ADDR_OFF_HOST, t->host_hash);
    bfo_put64(a->bytes + BFO_SHM_ADDR_OFF_NS, t->ns_id);
}

/* The abstract unix socket name of (pid, nonce, rail). */
static socklen_t sock_name(struct sockaddr_un *sa, uint32_t pid, uint64_t nonce, int rail)
{
    int n;
    memset(sa, 0, sizeof *sa);
    sa->sun_family = AF_UNIX;
    n = snprintf(sa->sun_path + 1, sizeof sa->sun_path - 1, "bfo-shm.%u.%016llx.%d", pid,
                 (unsigned long long)nonce, rail);
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

/* The peer's address of rail, checked: 0, or -1 with why (another host:
 * *other_host = 1). */
static int peer_addr(bfo_shm *t, const sconn *c, uint32_t *pid, uint64_t *nonce, int *other_host, char *why,
                     size_t whylen)
{
    bfo_addr a;
    const uint8_t *b = a.bytes;
    *other_host = 0;
    if (!t->sink.lookup || t->sink.lookup(t->sink.ctx, c->peer, c->rail, &a) != BFO_OK) {
        snprintf(why, whylen, "no address published for it");
        return -1;
    }
    if (a.len != BFO_SHM_ADDR_SIZE || bfo_get32(b) != BFO_SHM_ADDR_MAGIC ||
        bfo_get16(b + 4) != BFO_SHM_ADDR_VERSION || bfo_get16(b + BFO_SHM_ADDR_OFF_RAIL) != (uint16_t)c->rail ||
        bfo_get32(b + BFO_SHM_ADDR_OFF_RANK) != (uint32_t)c->peer) {
        snprintf(why, whylen, "its address is not a shm address of this rail and rank");
        return -1;
    }
    if (memcmp(b + BFO_SHM_ADDR_OFF_BOOT, t->boot, 16) != 0 || bfo_get64(b + BFO_SHM_ADDR_OFF_HOST) != t->host_hash) {
        *other_host = 1;
        snprintf(why, whylen, "the shm rail does not reach a peer on another host (%s differs)",
                 memcmp(b + BFO_SHM_ADDR_OFF_BOOT, t->boot, 16) != 0 ? "boot id" : "host name");
        return -1;
    }
    if (bfo_get64(b + BFO_SHM_ADDR_OFF_NS) != t->ns_id) {
        *other_host = 1;
        snprintf(why, whylen, "the shm rail does not reach a peer in another container (network or pid "
                 "namespace differs)");
        return -1;
    }
    *pid = bfo_get32(b + BFO_SHM_ADDR_OFF_PID);
    *nonce = bfo_get64(b + BFO_SHM_ADDR_OFF_NONCE);
    return 0;
}

/* ------------------------------------------------------------ the hello */

/* The length of every message of the exchange: longer by the handshake's
 * part when authenticated (AUTHENTICATION, bfo_shm.h). */
static size_t hello_len(const bfo_shm *t) { return t->o.auth ? HELLO_AUTH_LEN : BFO_SHM_HELLO_SIZE; }

/* dialed: this side's last dial of the (peer, rail) (a reply: every hello
 * of the replier's up to it is given up).  The handshake's part, when
 * authenticated, is zero: the caller writes it. */
static void put_hello(const bfo_shm *t, uint8_t *h, int kind, int rail, uint64_t gen, uint64_t dialed)
{
    memset(h, 0, hello_len(t));
    bfo_put32(h, BFO_SHM_HELLO_MAGIC);
    bfo_put16(h + 4, BFO_SHM_HELLO_VERSION);
    bfo_put16(h + 6, (uint16_t)kind);
    bfo_put32(h + 8, (uint32_t)t->rank);
    bfo_put32(h + 12, (uint32_t)rail);
    bfo_put32(h + 16, (uint32_t)t->size);
    bfo_put32(h + 20, (uint32_t)t->pid);
    bfo_put64(h + 24, t->job);
    bfo_put64(h + 32, gen);
    bfo_put64(h + 40, kind == BFO_SHM_HELLO ? (uint64_t)t->seg_len : 0);
    bfo_put32(h + 48, kind == BFO_SHM_HELLO ? (uint32_t)t->ring : 0);
    bfo_put32(h + 52, (uint32_t)t->max_frame);
    bfo_put64(h + 56, dialed);
}

/* Receives one message and its fds: its length (0: EOF), or -1 (errno:
 * EAGAIN when nothing waits).  Fds beyond max are closed; *nfds counts
 * them all, *trunc says the control data was cut. */
static ssize_t recv_msg(int fd, uint8_t *buf, size_t cap, int *fds, int max, int *nfds, int *trunc)
{
    union {
        struct cmsghdr c;
        char buf[CMSG_SPACE(sizeof(int) * 4)];
    } u;
    struct iovec iov = { buf, cap };
    struct msghdr mh;
    ssize_t n;
    *nfds = 0;
    *trunc = 0;
    memset(&mh, 0, sizeof mh);
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = u.buf;
    mh.msg_controllen = sizeof u.buf;
    do
        n = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return -1;
    *trunc = (mh.msg_flags & (MSG_CTRUNC | MSG_TRUNC)) != 0;
    for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
        if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
            continue;
        int k = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
        for (int j = 0; j < k; j++) {
            int x;
            memcpy(&x, CMSG_DATA(cm) + sizeof(int) * (size_t)j, sizeof x);
            if (*nfds < max)
                fds[*nfds] = x;
            else
                close(x);
            (*nfds)++;
        }
    }
    return n;
}

static void close_fds(int *fds, int n, int max)
{
    for (int i = 0; i < n && i < max; i++)
        if (fds[i] >= 0)
            close(fds[i]);
}

/* The fields every message must have right (kind: the one expected; a
 * reply may be DIALING): 0, or -1 with why. */
static int hello_check(const bfo_shm *t, const uint8_t *h, ssize_t n, int kind, int rail, char *why, size_t whylen)
{
    uint32_t rank = bfo_get32(h + 8);
    if (n >= 8 && bfo_get32(h) == BFO_SHM_HELLO_MAGIC && n != (ssize_t)hello_len(t) &&
        (n == BFO_SHM_HELLO_SIZE || n == HELLO_AUTH_LEN)) {
        snprintf(why, whylen, t->o.auth ? "a hello that is not authenticated, and this side requires it (the peer "
                                          "was given no bfo_auth)"
                                        : "an authenticated hello, and this side has no key (options.auth): it "
                                          "cannot answer it");
        return -1;
    }
    if (n != (ssize_t)hello_len(t) || bfo_get32(h) != BFO_SHM_HELLO_MAGIC ||
        (bfo_get16(h + 6) != kind && !(kind == BFO_SHM_HELLO_REPLY && bfo_get16(h + 6) == BFO_SHM_HELLO_DIALING))) {
        snprintf(why, whylen, "not a hello (%zd bytes)", n);
        return -1;
    }
    if (bfo_get16(h + 4) != BFO_SHM_HELLO_VERSION || bfo_get32(h + 16) != (uint32_t)t->size ||
        bfo_get64(h + 24) != t->job) {
        snprintf(why, whylen, "hello of another job or version");
        return -1;
    }
    if (rank >= (uint32_t)t->size || rank == (uint32_t)t->rank) {
        snprintf(why, whylen, "hello from rank %u", rank);
        return -1;
    }
    if (bfo_get32(h + 12) != (uint32_t)rail) {
        snprintf(why, whylen, "hello for rail %u on rail %d", bfo_get32(h + 12), rail);
        return -1;
    }
    return 0;
}

/* SAME UID (bfo_shm.h): the rule, as data (tests/test_shm_hostile.c). */
int bfo_shm_uid_allowed(uint32_t peer_uid, uint32_t my_uid, int any_uid)
{
    return any_uid || peer_uid == my_uid;
}

/* The uid of the process at the other end of a connected unix socket, as
 * the kernel recorded it at connect() (or listen()): 0 and *uid, or -1. */
static int peer_uid(int fd, uint32_t *uid, int *pid)
{
    struct ucred cr;
    socklen_t l = sizeof cr;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &l) != 0)
        return -1;
    *uid = (uint32_t)cr.uid;
    *pid = (int)cr.pid;
    return 0;
}

/* SAME UID: 1 when the process at the other end of fd may be a peer (its
 * uid is this process's effective uid, or options.any_uid); 0 otherwise,
 * logged at level 1 once per peer pid (who dials a listener again and
 * again is not to fill the log). */
static int uid_ok(bfo_shm *t, int fd, int rail, const char *role)
{
    uint32_t uid = 0;
    int pid = 0;
    unsigned k;
    if (peer_uid(fd, &uid, &pid) != 0) {
        slog(t, 1, "rail %d: %s: SO_PEERCRED: %s: refused", rail, role, strerror(errno));
        return 0;
    }
    if (bfo_shm_uid_allowed(uid, (uint32_t)t->euid, t->o.any_uid))
        return 1;
    for (k = 0; k < sizeof t->uid_logged / sizeof t->uid_logged[0]; k++)
        if (t->uid_logged[k] == pid)
            return 0;
    t->uid_logged[t->nuid_logged++ % (sizeof t->uid_logged / sizeof t->uid_logged[0])] = pid;
    slog(t, 1, "rail %d: %s of pid %d, uid %u, refused: this process's uid is %u (only the same uid may connect; "
               "options.any_uid allows any)", rail, role, pid, (unsigned)uid, (unsigned)t->euid);
    return 0;
}

/* A peer's doorbell as it came (SCM_RIGHTS), before it is ever written:
 * it must be an eventfd, and is made non-blocking.  Anything else could
 * hang this process in write() (a pipe nobody reads, a FIFO, a FUSE file:
 * O_NONBLOCK does not help a FUSE file) or write somewhere it should not
 * (a regular file).  The kernel names an eventfd "anon_inode:[eventfd]" in
 * /proc/self/fd; fstat cannot tell it apart (every anonymous inode, epoll,
 * timerfd, signalfd, eventfd, shares one inode and one mode on the kernels
 * before 5.x's secure anonymous inodes), and this transport reads /proc
 * already (the boot id).  0, or -1 with why. */
static int doorbell_ok(int fd, char *why, size_t whylen)
{
    char path[64], link[64];
    ssize_t n;
    int fl;
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    n = readlink(path, link, sizeof link - 1);
    if (n < 0) {
        snprintf(why, whylen, "its doorbell could not be checked (%s: %s)", path, strerror(errno));
        return -1;
    }
    link[n] = 0;
    if (strcmp(link, "anon_inode:[eventfd]") != 0) {
        snprintf(why, whylen, "its doorbell is not an eventfd (%.40s)", link);
        return -1;
    }
    if ((fl = fcntl(fd, F_GETFL)) < 0 || (!(fl & O_NONBLOCK) && fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0)) {
        snprintf(why, whylen, "its doorbell could not be made non-blocking: %s", strerror(errno));
        return -1;
    }
    return 0;
}

static int peer_pid(int fd)
{
    struct ucred cr;
    socklen_t l = sizeof cr;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &l) != 0)
        return -1;
    return (int)cr.pid;
}

/* The process at the other end of a connected unix socket as a pidfd
 * (LIFELINE): SO_PEERPIDFD (Linux 6.5: the process itself, whatever became
 * of its pid), else pidfd_open of its pid (Linux 5.3; the peer is alive: it
 * just spoke on the socket), else -1 (no pidfds: the socket stays the
 * lifeline). */
static int peer_pidfd(int fd, int pid)
{
    int pfd = -1;
    socklen_t l = sizeof pfd;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pfd, &l) == 0 && pfd >= 0)
        return pfd;
#ifdef SYS_pidfd_open
    if (pid > 0)
        return (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
#endif
    (void)pid;
    return -1;
}

/* LIFELINE (bfo_shm.h): the handshake is over on this side (the acceptor
 * sent its reply or TAKEN, the dialer read it): the socket is closed, and
 * the peer's pidfd, in the epoll set, says when its process exits; the
 * segment's gone flags say when either side closes the connection.  No
 * socket is kept per peer.  Without a pidfd the socket stays, the lifeline
 * of before. */
static void lifeline_handover(bfo_shm *t, sconn *c)
{
    struct epoll_event ev;
    if (c->fd < 0 || c->c.broken)
        return;
    if (c->pidfd < 0)
        c->pidfd = peer_pidfd(c->fd, c->pid);
    if (c->pidfd < 0)
        return;
    ev.events = EPOLLIN;
    ev.data.u64 = bfo_tp_tag(EV_PID, c->egen, (int)(c - t->conns));
    if (epoll_ctl(t->ep, EPOLL_CTL_ADD, c->pidfd, &ev) != 0)
        return;
    epoll_ctl(t->ep, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    c->fd = -1;
}

/* 1 when options.auth holds the peer's public key, asking the embedding
 * layer for it (options.auth_peer) when it does not yet. */
static int auth_has_peer(bfo_shm *t, int peer)
{
    if (bfo_auth_has_peer(t->o.auth, peer))
        return 1;
    return t->o.auth_peer && t->o.auth_peer(t->o.auth_peer_ctx, peer) == 0 && bfo_auth_has_peer(t->o.auth, peer);
}

/* ----------------------------------------------------------- connecting */

/* The conn machine's report_up: the engine hears of the connection;
 * authenticated, proven both ways (st: the dialer's verified reply, its
 * CONFIRM sent; the acceptor's verified CONFIRM), so the engine admits it
 * at once (CONNECTED_PROVEN).  Its ring is read only once it is up
 * (up_add), so the frames the dialer wrote right after its CONFIRM reach
 * the engine after this report. */
static void conn_up(bfo_shm *t, sconn *c, const bfo_step *st)
{
    up_add(t, c);
    t->st[c->rail].connects++;
    slog(t, 2, "peer %d rail %d: up (generation %llu, ring %zu bytes each way, peer pid %d)", c->peer, c->rail,
         (unsigned long long)seg_gen(c), c->ring, c->pid);
    bfo_tp_emit(&t->lg, &t->sink, c->peer, c->rail, bfo_tp_up_event(t->o.auth != NULL, st), t->now);
}

/* The conn machine's dial (bfo_link_feed numbered the generation and armed
 * the deadline): made at once, so it returns DIAL_CONNECTED (the segment
 * is mapped: the hello goes next) or DIAL_FAILED; 0 when the fault hook
 * swallows it (the deadline fails it).  A peer on another host fails here. */
static int dial(bfo_shm *t, sconn *c)
{
    struct sockaddr_un sa;
    socklen_t sl;
    struct epoll_event ev;
    char why[200];
    int fd, mfd, other = 0;
    uint32_t pid = 0;
    uint64_t nonce = 0;
    uint8_t *seg;
    if (peer_addr(t, c, &pid, &nonce, &other, why, sizeof why) != 0) {
        slog(t, other ? 1 : 2, "peer %d rail %d: %s", c->peer, c->rail, why);
        return BFO_CONN_EV_DIAL_FAILED;
    }
    if (t->o.auth && !auth_has_peer(t, c->peer)) {
        slog(t, 1, "peer %d rail %d: its public key is not known (bfo_auth_set_peer; options.auth_peer could not "
                   "give it): no dial", c->peer, c->rail);
        return BFO_CONN_EV_DIAL_FAILED;
    }
    if (t->drop[c->rail]) { /* the fault hook: the hello vanishes; the deadline fails it */
        t->st[c->rail].dropped_tx++;
        slog(t, 2, "peer %d rail %d: fault hook: no dial", c->peer, c->rail);
        return 0;
    }
    sl = sock_name(&sa, pid, nonce, c->rail);
    fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sl) != 0) {
        slog(t, 2, "peer %d rail %d: dialing %s: %s", c->peer, c->rail, sa.sun_path + 1, strerror(errno));
        if (fd >= 0)
            close(fd);
        return BFO_CONN_EV_DIAL_FAILED;
    }
    if (!uid_ok(t, fd, c->rail, "a listener")) { /* SAME UID: the name was taken by another user */
        t->st[c->rail].hellos_rejected++;
        close(fd);
        return BFO_CONN_EV_DIAL_FAILED;
    }
    if (c->spare_fd >= 0) { /* reserved at open */
        mfd = c->spare_fd;
        c->spare_fd = -1;
    } else if ((mfd = seg_create(t, c->peer, c->rail, why, sizeof why)) < 0) {
        slog(t, 1, "peer %d rail %d: %s", c->peer, c->rail, why);
        close(fd);
        return BFO_CONN_EV_DIAL_FAILED;
    }
    seg = (uint8_t *)mmap(NULL, t->seg_len, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
    if (seg == MAP_FAILED) {
        slog(t, 1, "peer %d rail %d: mmap of the segment: %s", c->peer, c->rail, strerror(errno));
        close(mfd);
        close(fd);
        return BFO_CONN_EV_DIAL_FAILED;
    }
    if (seg_reserve(t, mfd, seg, why, sizeof why) != 0) {
        slog(t, 1, "peer %d rail %d: %s", c->peer, c->rail, why);
        munmap(seg, t->seg_len);
        close(mfd);
        close(fd);
        return BFO_CONN_EV_DIAL_FAILED;
    }
    bfo_put32(seg, BFO_SHM_SEG_MAGIC);
    bfo_put32(seg + 4, BFO_SHM_SEG_VERSION);
    bfo_put64(seg + 8, seg_gen(c));
    bfo_put64(seg + 16, t->job);
    bfo_put32(seg + 24, (uint32_t)t->rank);
    bfo_put32(seg + 28, (uint32_t)c->peer);
    bfo_put32(seg + 32, (uint32_t)c->rail);
    bfo_put32(seg + 36, (uint32_t)t->ring);
    bfo_put64(seg + 40, (uint64_t)t->seg_len);
    c->dialer = 1; /* it writes ring 0 */
    conn_attach(c, seg, t->seg_len, t->ring);
    c->tx_res = t->populate ? PAGE_BYTES - BFO_SHM_SEG_HDR : c->ring; /* ring 0 starts in the header's page */
    c->fd = fd;
    c->pid = peer_pid(fd); /* the listener's: its process exists (hello_heard) */
    c->pidfd = peer_pidfd(fd, c->pid); /* LIFELINE, once the handshake is over */
    c->egen++;
    c->hello_mfd = mfd; /* sent with the hello, then closed */
    ev.events = EPOLLIN | EPOLLRDHUP;
    ev.data.u64 = bfo_tp_tag(EV_CONN, c->egen, (int)(c - t->conns));
    if (epoll_ctl(t->ep, EPOLL_CTL_ADD, fd, &ev) != 0)
        bfo_link_break(&t->lb, &c->c, 0, "epoll: %s", strerror(errno));
    return BFO_CONN_EV_DIAL_CONNECTED;
}

/* The conn machine's send_hello: the segment's memfd and this rank's
 * doorbell go with it; authenticated, the handshake's HELLO (a fresh
 * nonce) too. */
static void hello_send(bfo_shm *t, sconn *c)
{
    uint8_t h[HELLO_AUTH_LEN];
    int fds[2], rc = 0;
    put_hello(t, h, BFO_SHM_HELLO, c->rail, seg_gen(c), c->c.dialed);
    if (t->o.auth && !c->c.broken) {
        if (!c->hs && !(c->hs = (bfo_auth_hs *)malloc(sizeof *c->hs)))
            bfo_link_break(&t->lb, &c->c, 0, "no memory for the handshake");
        else if (seg_gen(c) > UINT32_MAX ||
                 bfo_auth_hs_hello(t->o.auth, c->hs, c->peer, c->rail, (uint32_t)seg_gen(c), AUTH_AREA(h)) != BFO_OK)
            bfo_link_break(&t->lb, &c->c, 0, "no handshake for rank %d (its public key is gone?)", c->peer);
    }
    fds[0] = c->hello_mfd;
    fds[1] = t->efd;
    if (!c->c.broken)
        rc = bfo_tp_send_fds(c->fd, h, hello_len(t), fds, 2);
    close(c->hello_mfd); /* the mapping keeps the segment; the peer has its own fd */
    c->hello_mfd = -1;
    if (rc)
        bfo_link_break(&t->lb, &c->c, 0, "sending the hello: %s", strerror(rc));
    else if (!c->c.broken)
        slog(t, 3, "peer %d rail %d: hello sent (generation %llu, pid %d)", c->peer, c->rail,
             (unsigned long long)seg_gen(c), c->pid);
}

/* Authenticated, the dialer's part of the reply: its MAC proves the peer
 * (it holds the pair key and answered this side's fresh nonce); this
 * side's CONFIRM goes back at once, before any frame can be read (the
 * acceptor takes the connection only then).  0, or -1 with why (the
 * connection is to be dropped as malformed). */
static int reply_proven(bfo_shm *t, sconn *c, const uint8_t *h, const char **why)
{
    uint8_t cf[HELLO_AUTH_LEN];
    int rc;
    if (!c->hs || bfo_auth_hs_read_reply(t->o.auth, c->hs, AUTH_AREA(h), BFO_AUTH_REPLY_LEN) != BFO_OK) {
        *why = "a reply that does not prove its rank (not that rank, or another job's key)";
        return -1;
    }
    put_hello(t, cf, BFO_SHM_HELLO_CONFIRM, c->rail, seg_gen(c), 0);
    bfo_auth_hs_confirm(t->o.auth, c->hs, AUTH_AREA(cf));
    free(c->hs); /* done with: the connection is the peer's */
    c->hs = NULL;
    if ((rc = bfo_tp_send_fds(c->fd, cf, sizeof cf, NULL, 0)) != 0) {
        *why = "the CONFIRM did not go";
        return -1;
    }
    return 0;
}

/* The acceptor's reply on a dialed connection (with its doorbell), or,
 * authenticated, its challenge (no doorbell: that comes with TAKEN). */
static void hello_reply(bfo_shm *t, sconn *c)
{
    uint8_t h[HELLO_AUTH_LEN + 8];
    int fds[4], nfds, trunc, dialing, want_fds;
    char why[160] = "";
    const char *bad = NULL;
    uint64_t dialed;
    ssize_t n = recv_msg(c->fd, h, sizeof h, fds, 4, &nfds, &trunc);
    if (n < 0) {
        if (errno != EAGAIN && errno != EWOULDBLOCK)
            bfo_link_break(&t->lb, &c->c, 0, "waiting for the hello reply: %s", strerror(errno));
        return;
    }
    if (n == 0) {
        close_fds(fds, nfds, 4);
        bfo_link_break(&t->lb, &c->c, 0, "the peer closed the connection before its hello reply");
        return;
    }
    if (t->drop[c->rail]) { /* the fault hook: it never came */
        close_fds(fds, nfds, 4);
        t->st[c->rail].dropped_rx++;
        return;
    }
    dialing = bfo_get16(h + 6) == BFO_SHM_HELLO_DIALING;
    want_fds = dialing || t->o.auth ? 0 : 1;
    if (hello_check(t, h, n, BFO_SHM_HELLO_REPLY, c->rail, why, sizeof why) != 0 || trunc || nfds != want_fds ||
        bfo_get32(h + 8) != (uint32_t)c->peer || bfo_get64(h + 32) != seg_gen(c)) {
        close_fds(fds, nfds, 4);
        bfo_link_break(&t->lb, &c->c, 1, "hello reply: %s",
                       *why ? why : nfds != want_fds ? "not the fds it carries" : "for another rank or generation");
        return;
    }
    if (dialing) { /* the peer dials this side too, and wins */
        if (t->o.auth && (!c->hs || bfo_auth_verify(t->o.auth, c->peer, TIE_LABEL, c->hs->transcript,
                                                    BFO_AUTH_HELLO_LEN, AUTH_AREA(h)) != BFO_OK))
            bfo_link_break(&t->lb, &c->c, 1, "hello reply: \"dialing you\" that does not prove rank %d", c->peer);
        else if (bfo_link_tie_lost(&t->lb, &c->c, t->now) != BFO_OK)
            bfo_link_break(&t->lb, &c->c, 1, "hello reply: \"dialing you\" from the higher rank");
        return;
    }
    dialed = bfo_get64(h + 56);
    if (t->o.auth) {
        if (reply_proven(t, c, h, &bad) != 0) {
            bfo_link_break(&t->lb, &c->c, 1, "hello reply: %s", bad);
            return;
        }
        dialed = 0; /* not under a MAC: never raises what is stale */
    } else {
        if (doorbell_ok(fds[0], why, sizeof why) != 0) {
            close_fds(fds, nfds, 4);
            t->st[c->rail].hellos_rejected++;
            bfo_link_break(&t->lb, &c->c, 1, "hello reply: %s", why);
            return;
        }
        c->peer_efd = fds[0];
    }
    bfo_link_reply(&t->lb, &c->c, dialed, t->now); /* report_up */
    if (!t->o.auth)
        lifeline_handover(t, c); /* the acceptor's doorbell came with the reply: nothing more on the socket */
}

static pend *pend_at(bfo_shm *t, int k) { return (pend *)(void *)bfo_tp_pend_at(&t->pends, k); }

/* The dialer's segment and doorbell, unless given to a connection. */
static void in_release(incoming *in)
{
    if (in->seg)
        munmap(in->seg, in->seg_len);
    in->seg = NULL;
    if (in->efd >= 0)
        close(in->efd);
    in->efd = -1;
}

/* An accepted connection closed; why: it sent what is not a hello, or
 * did not prove it (NULL: it just went, or the hook swallowed it). */
static void pend_close(bfo_shm *t, pend *p, const char *why)
{
    if (why) {
        t->st[p->a.rail].hellos_rejected++;
        t->st[p->a.rail].malformed++;
        slog(t, 1, "rail %d: incoming connection dropped: %s", p->a.rail, why);
    }
    if (p->a.fd >= 0)
        bfo_tp_pend_close(&t->pends, &p->a);
    if (p->pr) {
        in_release(&p->pr->in);
        free(p->pr);
        p->pr = NULL;
    }
}

static void do_accept(bfo_shm *t, int rail)
{
    while (bfo_tp_accept(&t->pends, &t->lg, t->lfd[rail], rail, t->now) >= 0)
        ; /* its hello is read when its socket is readable */
}

/* Maps the dialer's segment and checks it: the mapping, or NULL with why. */
static uint8_t *seg_map(bfo_shm *t, int mfd, const uint8_t *h, int rank, int rail, size_t *ring_out, size_t *len_out,
                        char *why, size_t whylen)
{
    uint64_t gen = bfo_get64(h + 32), seg_len = bfo_get64(h + 40);
    size_t ring = bfo_get32(h + 48);
    struct stat st;
    int seals = fcntl(mfd, F_GET_SEALS);
    uint8_t *seg;
    if (ring < 2 * rec_size(t->max_frame) || ring > RING_MAX || (ring & (ring - 1)) ||
        seg_len != BFO_SHM_SEG_HDR + 2 * (uint64_t)ring) {
        snprintf(why, whylen, "a ring of %zu bytes (segment %llu) cannot carry this rank's frames of %zu bytes", ring,
                 (unsigned long long)seg_len, t->max_frame);
        return NULL;
    }
    /* a file shorter than the mapping would SIGBUS this process at the
     * first access past its end: a regular file (a memfd is one) at least
     * seg_len long, sealed so that it cannot shrink later */
    if (fstat(mfd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size < seg_len || seals < 0 ||
        !(seals & F_SEAL_SHRINK)) {
        snprintf(why, whylen, "the segment is not a sealed memfd of %llu bytes", (unsigned long long)seg_len);
        return NULL;
    }
    seg = (uint8_t *)mmap(NULL, (size_t)seg_len, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
    if (seg == MAP_FAILED) {
        snprintf(why, whylen, "mmap of the segment: %s", strerror(errno));
        return NULL;
    }
    if (bfo_get32(seg) != BFO_SHM_SEG_MAGIC || bfo_get32(seg + 4) != BFO_SHM_SEG_VERSION ||
        bfo_get64(seg + 8) != gen || bfo_get64(seg + 16) != t->job || bfo_get32(seg + 24) != (uint32_t)rank ||
        bfo_get32(seg + 28) != (uint32_t)t->rank || bfo_get32(seg + 32) != (uint32_t)rail ||
        bfo_get32(seg + 36) != (uint32_t)ring || bfo_get64(seg + 40) != seg_len) {
        munmap(seg, (size_t)seg_len);
        snprintf(why, whylen, "the segment's header does not match the hello");
        return NULL;
    }
    *ring_out = ring;
    *len_out = (size_t)seg_len;
    return seg;
}

/* A challenged connection whose CONFIRM is late: its dialer may compute
 * (its hello went, then it made no progress call), as a dialer's wait for
 * the reply allows.  While the dialer's process exists (SO_PEERCRED, as
 * hello_heard looks) the wait goes on, up to PROOF_WAIT_MAX_NS after the
 * challenge: a slot held that long at most, by a peer or by anyone. */
static int proof_host_answers(const bfo_shm *t, const pend *p)
{
    int pid;
    if (t->now - p->pr->challenged_at >= PROOF_WAIT_MAX_NS || t->drop[p->a.rail] || (pid = peer_pid(p->a.fd)) <= 0)
        return 0;
    return kill((pid_t)pid, 0) == 0 || errno == EPERM;
}

/* A challenged connection's answer (stage 1): its dialer's CONFIRM, or
 * nothing (ok 0, why: what came instead; NULL: it closed, as a loser of a
 * tie does).  The conn machine takes it (PROOF_RCVD: take) or refuses it
 * (PROOF_BAD_RCVD, or a newer generation proven meanwhile: refuse). */
static void pend_proof(bfo_shm *t, pend *p, int ok, const char *why)
{
    proof *pr = p->pr;
    pr->why = ok ? NULL : why;
    if (bfo_link_proof(&t->lb, &conn_of(t, pr->peer, p->a.rail)->c, ok, pr->attempt, &pr->in, t->now) != BFO_OK ||
        p->a.fd >= 0)
        pend_close(t, p, ok ? NULL : why); /* refused by the machine: nothing may hold it */
}

/* Stage 1: the message after the challenge, which must be the dialer's
 * CONFIRM for this hello, over this side's fresh nonce. */
static void confirm_read(bfo_shm *t, pend *p, const uint8_t *h, ssize_t n, int nfds, int trunc)
{
    char why[160] = "";
    proof *pr = p->pr;
    if (hello_check(t, h, n, BFO_SHM_HELLO_CONFIRM, p->a.rail, why, sizeof why) != 0 || trunc || nfds ||
        bfo_get32(h + 8) != (uint32_t)pr->peer || bfo_get64(h + 32) != pr->attempt)
        pend_proof(t, p, 0, "not its CONFIRM (another message, rank or generation)");
    else if (bfo_auth_hs_read_confirm(t->o.auth, &pr->hs, AUTH_AREA(h), BFO_AUTH_CONFIRM_LEN) != BFO_OK)
        pend_proof(t, p, 0, "a CONFIRM that does not prove its rank (an impostor, a replay, or another job's key)");
    else
        pend_proof(t, p, 1, NULL);
}

/* An accepted connection's hello: it becomes the rail's connection, if the
 * conn machine takes it; authenticated, a claim, challenged (or refused)
 * and taken only at its CONFIRM.  Returns 0 when it left the hello for
 * later (before start). */
static int pend_read(bfo_shm *t, pend *p)
{
    uint8_t h[HELLO_AUTH_LEN + 8];
    int fds[4], nfds, trunc, rank, stage = pend_stage(p);
    char why[200];
    incoming in, *inp = &in;
    uint64_t gen;
    ssize_t n;
    if (!t->started)
        return 0; /* the job id is not known yet: read at a later scan */
    if (stage == 0 && !uid_ok(t, p->a.fd, p->a.rail, "a hello")) {
        /* SAME UID: refused before its message is read (its fds are
         * closed with the socket, never held here); logged once per pid */
        t->st[p->a.rail].hellos_rejected++;
        pend_close(t, p, NULL);
        return 1;
    }
    n = recv_msg(p->a.fd, h, sizeof h, fds, 4, &nfds, &trunc);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return 1;
    if (n <= 0 || t->drop[p->a.rail]) { /* gone; or the fault hook: it never came */
        if (n > 0)
            t->st[p->a.rail].dropped_rx++;
        if (n >= 0)
            close_fds(fds, nfds, 4);
        if (stage == 1)
            pend_proof(t, p, 0, NULL);
        else
            pend_close(t, p, NULL);
        return 1;
    }
    if (stage == 1) {
        close_fds(fds, nfds, 4);
        confirm_read(t, p, h, n, nfds, trunc);
        return 1;
    }
    *why = 0;
    rank = (int)bfo_get32(h + 8);
    gen = bfo_get64(h + 32);
    if (hello_check(t, h, n, BFO_SHM_HELLO, p->a.rail, why, sizeof why) != 0 || trunc || nfds != 2) {
        close_fds(fds, nfds, 4);
        pend_close(t, p, *why ? why : "not a segment and an eventfd with it");
        return 1;
    }
    if (t->o.auth) {
        int hp, hr;
        uint32_t ha;
        if (!auth_has_peer(t, rank)) {
            snprintf(why, sizeof why,
                     "a hello from rank %d, whose public key this side does not know (bfo_auth_set_peer; "
                     "options.auth_peer could not give it): refused, its engine dials again", rank);
            close_fds(fds, nfds, 4);
            pend_close(t, p, why);
            return 1;
        }
        if (!(p->pr = (proof *)calloc(1, sizeof *p->pr))) {
            close_fds(fds, nfds, 4);
            pend_close(t, p, "no memory for its handshake");
            return 1;
        }
        p->pr->in.efd = -1;
        if (bfo_auth_hs_read_hello(t->o.auth, &p->pr->hs, AUTH_AREA(h), BFO_AUTH_HELLO_LEN, &hp, &hr, &ha) != BFO_OK ||
            hp != rank || hr != p->a.rail || (uint64_t)ha != gen) {
            close_fds(fds, nfds, 4);
            pend_close(t, p, "a hello whose handshake does not match it (rank, rail, generation, size or job)");
            return 1;
        }
        inp = &p->pr->in;
    }
    if (doorbell_ok(fds[1], why, sizeof why) != 0) { /* before it can ever be written */
        close_fds(fds, nfds, 4);
        pend_close(t, p, why);
        return 1;
    }
    inp->seg = seg_map(t, fds[0], h, rank, p->a.rail, &inp->ring, &inp->seg_len, why, sizeof why);
    close(fds[0]);
    if (!inp->seg) {
        close(fds[1]);
        pend_close(t, p, why);
        return 1;
    }
    inp->p = p;
    inp->efd = fds[1];
    inp->rc = 0;
    if (t->o.auth) {
        /* a claim: challenged (the handshake's reply on this connection)
         * or told "dialing you", or stale; taken only at its proof */
        p->pr->peer = rank;
        p->pr->attempt = gen;
        if (bfo_link_claim(&t->lb, &conn_of(t, rank, p->a.rail)->c, gen, inp, t->now) != BFO_OK)
            pend_close(t, p, "a claim the conn machine does not take here");
        return 1;
    }
    /* the conn machine takes it (shm_act: take, send_reply), or refuses it:
     * a stale generation, or a rank that may not dial this one */
    if (bfo_link_hello(&t->lb, &conn_of(t, rank, p->a.rail)->c, gen, inp, t->now) != BFO_OK) {
        in_release(inp);
        pend_close(t, p, "a hello the conn machine does not take here");
    }
    return 1;
}

/* The conn machine's take: the accepted connection and its segment become
 * the rail's. */
static void conn_take(bfo_shm *t, sconn *c, incoming *in)
{
    struct epoll_event ev;
    int fd = in->p->a.fd, pid = peer_pid(fd);
    epoll_ctl(t->ep, EPOLL_CTL_DEL, fd, NULL);
    in->p->a.fd = -1;
    conn_reset(t, c);
    c->egen++;
    c->dialer = 0; /* it writes ring 1 */
    conn_attach(c, in->seg, in->seg_len, in->ring);
    c->fd = fd;
    c->peer_efd = in->efd;
    c->pid = pid;
    c->pidfd = peer_pidfd(fd, pid); /* LIFELINE, once the reply or TAKEN is out */
    in->seg = NULL; /* the connection's now */
    in->efd = -1;
    ev.events = EPOLLIN | EPOLLRDHUP;
    ev.data.u64 = bfo_tp_tag(EV_CONN, c->egen, (int)(c - t->conns));
    in->rc = epoll_ctl(t->ep, EPOLL_CTL_ADD, fd, &ev) != 0 ? errno : 0;
}

/* Authenticated, the conn machine's take at a proof: the connection, then
 * TAKEN to its dialer with this rank's doorbell (given only to a proven
 * peer: whoever holds it can ring it, or drain the wake-ups meant for
 * this rank).  The handshake is done. */
static void conn_take_proven(bfo_shm *t, sconn *c, incoming *in)
{
    pend *p = in->p;
    uint8_t m[HELLO_AUTH_LEN];
    int rc;
    conn_take(t, c, in);
    rc = in->rc;
    free(p->pr); /* in with it: given to the connection */
    p->pr = NULL;
    put_hello(t, m, BFO_SHM_HELLO_TAKEN, c->rail, seg_gen(c), 0);
    if (!rc)
        rc = bfo_tp_send_fds(c->fd, m, sizeof m, &t->efd, 1);
    if (rc)
        bfo_link_break(&t->lb, &c->c, 0, "sending TAKEN: %s", strerror(rc));
    else
        lifeline_handover(t, c); /* the dialer reads TAKEN before the socket's end */
}

/* The conn machine's send_reply to a claim (an authenticated hello not
 * proven yet): the handshake's reply on its own connection, held aside
 * (stage 1) until its dialer's CONFIRM; whatever the link holds stays.
 * The socket is fresh: the reply goes at once. */
static void challenge(bfo_shm *t, sconn *c, incoming *in)
{
    pend *p = in->p;
    uint8_t a[HELLO_AUTH_LEN];
    int rc = 0;
    put_hello(t, a, BFO_SHM_HELLO_REPLY, p->a.rail, c->c.offered, 0);
    if (bfo_auth_hs_reply(t->o.auth, &p->pr->hs, AUTH_AREA(a)) != BFO_OK ||
        (rc = bfo_tp_send_fds(p->a.fd, a, sizeof a, NULL, 0)) != 0) {
        slog(t, 2, "peer %d rail %d: the handshake's reply did not go: %s", c->peer, p->a.rail,
             rc ? strerror(rc) : "no key");
        pend_close(t, p, NULL);
        return;
    }
    p->pr->stage = 1;
    p->pr->challenged_at = t->now;
    p->a.deadline = t->now + t->pends.timeout_ns;
    slog(t, 3, "peer %d rail %d: hello %llu challenged", c->peer, p->a.rail, (unsigned long long)c->c.offered);
}

/* The conn machine's refuse (a stale hello: a dial the peer gave up, read
 * late behind a newer one, refused so that it never replaces the newer
 * connection; or a proof that failed) and refuse_tie (both dial, this
 * side's dial wins: the peer hears "dialing you", MACed when
 * authenticated, and waits for it). */
static void conn_refuse(bfo_shm *t, sconn *c, incoming *in, const bfo_step *st, int tie)
{
    pend *p = in->p;
    in_release(in);
    if (tie) {
        uint8_t a[HELLO_AUTH_LEN];
        int rc;
        put_hello(t, a, BFO_SHM_HELLO_DIALING, c->rail, c->c.offered, c->c.dialed);
        if (t->o.auth && p->pr) /* proves this side: the dialer waits for it then */
            bfo_auth_mac(t->o.auth, c->peer, TIE_LABEL, p->pr->hs.transcript, BFO_AUTH_HELLO_LEN, AUTH_AREA(a));
        if ((rc = bfo_tp_send_fds(p->a.fd, a, hello_len(t), NULL, 0)) != 0)
            slog(t, 2, "peer %d rail %d: the tie answer did not go: %s", c->peer, c->rail, strerror(rc));
        slog(t, 3, "peer %d rail %d: both dial: this side's dial wins (its hello %llu answered \"dialing you\")",
             c->peer, c->rail, (unsigned long long)c->c.offered);
        pend_close(t, p, NULL);
        return;
    }
    if (st->event == BFO_CONN_EV_PROOF_BAD_RCVD) { /* logged with why, counted (hellos_rejected) */
        pend_close(t, p, p->pr ? p->pr->why : NULL);
        return;
    }
    t->st[p->a.rail].hellos_stale++;
    slog(t, 2, "peer %d rail %d: a stale hello (generation %llu, %llu taken) refused", c->peer, c->rail,
         (unsigned long long)c->c.offered, (unsigned long long)c->c.taken);
    pend_close(t, p, NULL);
}

/* The conn machine's actions (bfo_link.h): the connection of link l. */
static int shm_act(bfo_link_binding *b, bfo_link *l, int action, const bfo_step *st, void *arg)
{
    bfo_shm *t = (bfo_shm *)b->ctx;
    sconn *c = (sconn *)(void *)l; /* l is its first member */
    incoming *in = (incoming *)arg; /* take, send_reply, refuse */
    switch ((enum bfo_conn_action)action) {
    case BFO_CONN_ACT_DIAL:
        return dial(t, c);
    case BFO_CONN_ACT_SEND_HELLO:
        hello_send(t, c);
        return 0;
    case BFO_CONN_ACT_WAIT: {
        /* for the peer's dial, which won a tie (the deadline is armed); a
         * peer that cannot reach this one fails at once */
        uint32_t pid;
        uint64_t nonce;
        int other = 0;
        char why[160];
        if (peer_addr(t, c, &pid, &nonce, &other, why, sizeof why) != 0 && other) {
            slog(t, 1, "peer %d rail %d: %s", c->peer, c->rail, why);
            l->deadline = t->now;
            return BFO_CONN_EV_TIMED_OUT;
        }
        return 0;
    }
    case BFO_CONN_ACT_TAKE:
        if (st->event == BFO_CONN_EV_PROOF_RCVD)
            conn_take_proven(t, c, in);
        else
            conn_take(t, c, in);
        return 0;
    case BFO_CONN_ACT_SEND_REPLY: {
        uint8_t r[HELLO_AUTH_LEN];
        int rc = in->rc;
        if (st->event == BFO_CONN_EV_LOWER_CLAIM_RCVD || st->event == BFO_CONN_EV_HIGHER_CLAIM_RCVD) {
            challenge(t, c, in);
            return 0;
        }
        put_hello(t, r, BFO_SHM_HELLO_REPLY, c->rail, seg_gen(c), c->c.dialed);
        if (!rc)
            rc = bfo_tp_send_fds(c->fd, r, hello_len(t), &t->efd, 1);
        if (rc)
            bfo_link_break(&t->lb, &c->c, 0, "sending the hello reply: %s", strerror(rc));
        else
            lifeline_handover(t, c); /* the dialer reads the reply before the socket's end */
        return BFO_CONN_EV_PEER_READY; /* the dialer writes once it has the reply */
    }
    case BFO_CONN_ACT_REFUSE:
    case BFO_CONN_ACT_REFUSE_TIE:
        conn_refuse(t, c, in, st, action == BFO_CONN_ACT_REFUSE_TIE);
        return 0;
    case BFO_CONN_ACT_REPORT_UP:
        conn_up(t, c, st);
        return 0;
    case BFO_CONN_ACT_REPORT_FAILED:
    case BFO_CONN_ACT_REPORT_ERROR:
        t->st[c->rail].connect_failures += (uint64_t)bfo_tp_report_down(&t->lg, &t->sink, l, action, st, arg, t->now); /* a failed connect counted */
        return 0;
    case BFO_CONN_ACT_CLOSE:
        conn_close(t, c, st, bfo_link_why(st, arg));
        return 0;
    }
    return 0;
}

/* A lifeline event: EOF is the peer gone (exited, or it dropped the rail).
 * Authenticated, the dialer's lifeline brings one message first: TAKEN,
 * with the acceptor's doorbell (rung at once if the peer sleeps already). */
static void lifeline(bfo_shm *t, sconn *c)
{
    uint8_t b[HELLO_AUTH_LEN + 8];
    int fds[4], nfds, trunc;
    char why[160] = "";
    ssize_t n = recv_msg(c->fd, b, sizeof b, fds, 4, &nfds, &trunc);
    if (n > 0 && t->o.auth && c->dialer && c->peer_efd < 0) {
        if (t->drop[c->rail]) { /* the fault hook: it never came (the rail stays silent) */
            close_fds(fds, nfds, 4);
            t->st[c->rail].dropped_rx++;
            return;
        }
        if (hello_check(t, b, n, BFO_SHM_HELLO_TAKEN, c->rail, why, sizeof why) != 0 || trunc || nfds != 1 ||
            bfo_get32(b + 8) != (uint32_t)c->peer || bfo_get64(b + 32) != seg_gen(c)) {
            close_fds(fds, nfds, 4);
            bfo_link_break(&t->lb, &c->c, 1, "TAKEN: %s", *why ? why : "not one doorbell, or another generation");
            return;
        }
        if (doorbell_ok(fds[0], why, sizeof why) != 0) {
            close(fds[0]);
            t->st[c->rail].hellos_rejected++;
            bfo_link_break(&t->lb, &c->c, 1, "TAKEN: %s", why);
            return;
        }
        c->peer_efd = fds[0];
        wake_peer(t, c);
        lifeline_handover(t, c); /* nothing more comes on the socket */
        return;
    }
    close_fds(fds, nfds, 4);
    if (n == 0)
        bfo_link_break(&t->lb, &c->c, 0, "the peer closed the lifeline (it exited, or dropped the rail)");
    else if (n > 0)
        bfo_link_break(&t->lb, &c->c, 1, "a message of %zd bytes on an established lifeline", n);
    else if (errno != EAGAIN && errno != EWOULDBLOCK)
        bfo_link_break(&t->lb, &c->c, 0, "lifeline: %s", strerror(errno));
}

static int shm_connect(void *ctx, int peer, int rail)
{
    bfo_shm *t = (bfo_shm *)ctx;
    sconn *c = pair_conn(t, peer, rail);
    if (!c)
        return -1;
    bfo_link_ask(&t->lb, &c->c); /* fed at the next progress */
    return 0;
}

/* The peer said goodbye, or this side leaves: the connection stays, and
 * its end is logged only at level 2, not counted as lost. */
static void shm_part(void *ctx, int peer, int rail)
{
    sconn *c = pair_conn((bfo_shm *)ctx, peer, rail);
    if (c)
        c->parted = 1;
}

/* The engine mapped the rail out: dropped at the next progress, and what
 * is in flight on it completes with ok=0 then. */
static void shm_disconnect(void *ctx, int peer, int rail)
{
    bfo_shm *t = (bfo_shm *)ctx;
    sconn *c = pair_conn(t, peer, rail);
    if (c && (c->fd >= 0 || c->seg) && !c->c.broken)
        bfo_link_break(&t->lb, &c->c, 0, "the engine mapped the rail out");
}

/* MEMORY (bfo_shm.h): the ring a dial makes, decided once, before the
 * first connect() request is handled (the peers' addresses are known by
 * then).  The ranks of this host (the peers this rail reaches, by their
 * published addresses, and this one: L) have at most L (L - 1) / 2
 * connections per rail, two rings each: a ring is the largest power of two
 * that keeps them all within node_bytes, at most ring_bytes and at least
 * two of the largest records (what an acceptor takes).  Every rank of the
 * host finds the same L and so the same ring. */
static void ring_scale(bfo_shm *t)
{
    uint64_t rings, want;
    size_t floor = REC_ALIGN;
    int local = 1;
    if (t->nlocal)
        return;
    for (int p = 0; p < t->size; p++) {
        bfo_addr a;
        if (p != t->rank && t->sink.lookup && t->sink.lookup(t->sink.ctx, p, 0, &a) == BFO_OK &&
            shm_reaches(t, 0, p, &a))
            local++;
    }
    t->nlocal = local;
    if (t->o.node_bytes < 0 || local < 2)
        return;
    rings = (uint64_t)local * (uint64_t)(local - 1) * (uint64_t)t->nrails;
    want = (uint64_t)(t->o.node_bytes ? t->o.node_bytes : (int64_t)NODE_DEFAULT) / rings;
    while (floor < 2 * rec_size(t->max_frame))
        floor <<= 1;
    while (t->ring > floor && t->ring > want)
        t->ring >>= 1;
    t->seg_len = BFO_SHM_SEG_HDR + 2 * t->ring;
    slog(t, 2, "%d rank(s) on this host: rings of %zu bytes each way (shm.node_bytes %lld)", local, t->ring,
         (long long)(t->o.node_bytes ? t->o.node_bytes : (int64_t)NODE_DEFAULT));
}

/* connect() requests, fed to the conn machine: it dials, waits for the
 * peer's dial, or lets the connection being made answer. */
static void handle_connects(bfo_shm *t)
{
    bfo_link_asked_all(&t->lb, &t->conns->c, sizeof *t->conns, t->size * t->nrails, t->now);
}

/* The peer's process as a witness (docs/engine-design.md, "The failure
 * detector"): a connection that waits on the peer (frames not consumed)
 * looks, every keepalive interval, whether the peer's process still exists:
 * its pidfd (pidfd_open on the pid the lifeline's SO_PEERCRED gave) is
 * readable once it has exited; without pidfds, kill(pid, 0).  Alive: its
 * host is heard (bfo_engine_host_heard), so a peer that computes without
 * calling into bfo, whose rings nobody reads, is busy, not failed.  A dead
 * one is found by its lifeline closing, as before. */
static void host_evidence(bfo_shm *t)
{
    for (int k = 0; k < t->nup; k++) {
        sconn *c = &t->conns[t->up[k]];
        struct pollfd pf;
        int alive;
        if (c->c.broken || c->poisoned || c->pid <= 0 || c->q.head < 0 || t->now - c->host_at < t->ka_ns)
            continue;
        c->host_at = t->now;
#ifdef SYS_pidfd_open
        if (c->pidfd < 0)
            c->pidfd = (int)syscall(SYS_pidfd_open, (pid_t)c->pid, 0);
#endif
        if (c->pidfd >= 0) {
            pf.fd = c->pidfd;
            pf.events = POLLIN;
            pf.revents = 0;
            alive = poll(&pf, 1, 0) == 0;
        } else {
            alive = kill((pid_t)c->pid, 0) == 0 || errno == EPERM;
        }
        if (alive) {
            t->st[c->rail].busy_heard++;
            if (t->sink.host_heard)
                t->sink.host_heard(t->sink.ctx, c->peer, c->rail, t->now);
        }
    }
}

/* A dialer waiting for the reply (HELLO_SENT): its socket is connected to
 * the peer's listener, whose process (SO_PEERCRED at the dial) may be
 * computing and read the hello when it next calls in.  While that process
 * exists (kill(pid, 0)), the engine hears the peer on the rail, at most
 * every HELLO_HEARD_EVERY_NS, so it does not give the peer up meanwhile;
 * the process gone closes the socket: BROKEN. */
static void hello_heard(bfo_shm *t)
{
    for (int i = 0; i < t->size * t->nrails; i++) {
        sconn *c = &t->conns[i];
        if (!bfo_link_waits_on_host(&t->lb, &c->c) || c->poisoned || c->pid <= 0 ||
            t->now - c->host_at < HELLO_HEARD_EVERY_NS)
            continue;
        c->host_at = t->now;
        if (kill((pid_t)c->pid, 0) == 0 || errno == EPERM)
            heard(t, c);
    }
}

static void timeouts(bfo_shm *t)
{
    host_evidence(t);
    hello_heard(t);
    for (int i = 0; i < t->size * t->nrails; i++)
        bfo_link_timeout(&t->lb, &t->conns[i].c, t->now); /* TIMED_OUT where it waits */
    for (int k = 0; k < t->pends.n; k++) {
        pend *p = pend_at(t, k);
        if (p->a.fd < 0 || t->now < p->a.deadline)
            continue;
        if (pend_stage(p) == 1 && proof_host_answers(t, p))
            p->a.deadline = t->now + t->pends.timeout_ns;
        else if (pend_stage(p) == 1)
            pend_proof(t, p, 0, "no CONFIRM in time");
        else if (!p->pr && t->started && bfo_tp_readable(p->a.fd)) {
            (void)pend_read(t, p); /* its hello came while this side did not look (bfo_tp_readable) */
            settle(t);
        }
        else
            pend_close(t, p, t->started ? "no hello in time" : NULL);
    }
}

/* The sockets: accepts, hellos, replies, lifelines.  One epoll_wait. */
static int scan(bfo_shm *t)
{
    struct epoll_event evs[64];
    int n, handled = 0;
    t->last_scan = t->now;
    t->scan_now = 0;
    t->nscans++;
    n = epoll_wait(t->ep, evs, 64, 0);
    for (int k = 0; k < n; k++) {
        uint64_t d = evs[k].data.u64;
        int type = (int)(d >> 60), idx = (int)(uint32_t)d;
        uint32_t gen = (uint32_t)(d >> 32) & 0x0fffffffu;
        if (type == EV_LISTEN) {
            do_accept(t, idx);
        } else if (type == EV_PEND) {
            pend *p = pend_at(t, idx);
            if (p->a.fd >= 0 && (p->a.gen & 0x0fffffffu) == gen && !pend_read(t, p))
                continue;
        } else if (type == EV_PID) { /* LIFELINE: the peer's process exited */
            sconn *c = &t->conns[idx];
            if (c->pidfd < 0 || (c->egen & 0x0fffffffu) != gen || c->c.broken)
                continue;
            bfo_link_break(&t->lb, &c->c, 0, "the peer's process exited (pid %d)", c->pid);
        } else if (type == EV_CONN) {
            sconn *c = &t->conns[idx];
            if (c->fd < 0 || (c->egen & 0x0fffffffu) != gen || c->c.broken)
                continue;
            if (c->c.fsm.cs == BFO_CONN_ST_HELLO_SENT)
                hello_reply(t, c);
            else
                lifeline(t, c);
        }
        handled++;
        settle(t);
    }
    timeouts(t);
    settle(t);
    return handled;
}

/* ------------------------------------------------------------- progress */

static void disarm(bfo_shm *t)
{
    for (int k = 0; k < t->nup; k++) {
        sconn *c = &t->conns[t->up[k]];
        __atomic_store_n(c->my_sleep, 0u, __ATOMIC_RELAXED);
    }
    t->armed = 0;
}

static int shm_progress(void *tv, uint64_t now)
{
    bfo_shm *t = (bfo_shm *)tv;
    int n = 0;
    const uint64_t skip = bfo_link_gap(&t->lb, now);
    t->now = now;
    t->nprogress++;
    if (skip) {
        /* not run for a while: what came meanwhile is read before any
         * connect deadline is judged (bfo_link.h, "time the transport did
         * not run") */
        for (int i = 0; i < t->size * t->nrails; i++)
            bfo_link_skip(&t->lb, &t->conns[i].c, skip, now);
        bfo_tp_pends_skip(&t->pends, skip, now);
    }
    if (t->armed) { /* back from a sleep: the sockets may have woken it */
        disarm(t);
        t->scan_now = 1;
    }
    settle(t);
    for (int k = 0; k < t->nup; k++) {
        sconn *c = &t->conns[t->up[k]];
        if (!c->c.broken)
            n += conn_poll(t, c);
    }
    settle(t);
    if (t->scan_now || t->lb.asked || now >= t->last_scan + t->o.scan_ns)
        n += scan(t);
    if (t->lb.asked && t->started) {
        ring_scale(t);
        handle_connects(t);
        settle(t);
    }
    return n;
}

/* About to sleep: every connection says so in shared memory (the peer then
 * rings the doorbell after its next publication), then looks once more for
 * work that arrived before the flag was seen. */
static int shm_wait_fds(void *tv, int *fds, int max)
{
    bfo_shm *t = (bfo_shm *)tv;
    int work = 0;
    settle(t);
    if (t->failed.head >= 0 || (t->lb.asked && t->started) || t->lb.nbroken || max < 2)
        return -1;
    for (int k = 0; k < t->nup; k++)
        if (t->conns[t->up[k]].reads.head >= 0)
            return -1;
    if (t->drain) { /* a wake-up from the last sleep may be left in the counter */
        uint64_t v;
        if (read(t->efd, &v, sizeof v) < 0 && errno != EAGAIN)
            slog(t, 3, "doorbell: %s", strerror(errno));
        t->drain = 0;
    }
    for (int k = 0; k < t->nup; k++)
        __atomic_store_n(t->conns[t->up[k]].my_sleep, 1u, __ATOMIC_RELAXED);
    fence_sc();
    for (int k = 0; k < t->nup && !work; k++) {
        sconn *c = &t->conns[t->up[k]];
        if (__atomic_load_n(c->peer_gone, __ATOMIC_ACQUIRE)) /* its doorbell ring may have been drained */
            work = 1;
        else if (c->poisoned)
            continue;
        else if (!c->stalled && ld_acq(c->rx_head) != c->rx_pos)
            work = 1;
        else if (ld_acq(c->tx_tail) != c->tail_seen || __atomic_load_n(c->tx_beat, __ATOMIC_RELAXED) != c->beat_seen)
            work = 1;
        else if (c->unsent >= 0) {
            size_t need = rec_size(t->ents[c->unsent].total), off = (size_t)(c->head & (c->ring - 1));
            size_t pad = off + need > c->ring ? c->ring - off : 0;
            if (c->head + pad + need - ld_acq(c->tx_tail) <= c->ring)
                work = 1;
        }
    }
    t->armed = 1;
    t->drain = 1;
    if (work) {
        disarm(t);
        return -1;
    }
    t->nsleeps++;
    fds[0] = t->ep;
    fds[1] = t->efd;
    return 2;
}

/* ----------------------------------------------------------- the rest */

static unsigned shm_rail_caps(void *ctx, int rail)
{
    const bfo_shm *t = (const bfo_shm *)ctx;
    if (rail < 0 || rail >= t->nrails)
        return 0;
    return (t->rdma_caps ? BFO_CAP_RDMA : 0) | BFO_CAP_SEND_IOV | BFO_CAP_SEND_PACK;
}

static unsigned shm_rail_bw(void *ctx, int rail)
{
    const bfo_shm *t = (const bfo_shm *)ctx;
    return rail >= 0 && rail < t->nrails ? t->bw[rail] : 0;
}

/* What the engine calls (bfo_backend.h): sends into the rings, RDMA by
 * process_vm_readv/writev (shm_rail_caps says when). */
static const bfo_backend shm_calls = {
    .post_send = shm_post_send, .post_send_data = shm_post_send_data, .post_write = shm_post_write,
    .post_read = shm_post_read, .reg_mem = shm_reg_mem, .dereg_mem = shm_dereg_mem, .connect = shm_connect,
    .disconnect = shm_disconnect, .part = shm_part, .rail_caps = shm_rail_caps, .rail_bandwidth = shm_rail_bw,
};

static void shm_backend(void *tv, bfo_backend *be)
{
    *be = shm_calls;
    be->ctx = tv;
}

static int shm_claims(const char *rail)
{
    return rail && !strncmp(rail, "shm", 3) && (rail[3] == 0 || rail[3] == ':');
}

static int shm_address(void *tv, int rail, bfo_addr *out)
{
    const bfo_shm *t = (const bfo_shm *)tv;
    if (rail < 0 || rail >= t->nrails || !out)
        return BFO_ERR_INVALID;
    addr_make(t, rail, out);
    return BFO_OK;
}

static int shm_start(void *tv, uint64_t job)
{
    bfo_shm *t = (bfo_shm *)tv;
    t->job = job;
    t->started = 1;
    t->scan_now = 1; /* hellos that came before the job id */
    slog(t, 2, "rank %d of %d, %d rail(s), job %016llx", t->rank, t->size, t->nrails, (unsigned long long)job);
    return BFO_OK;
}

static void shm_fault(void *tv, int rail, int on)
{
    bfo_shm *t = (bfo_shm *)tv;
    if (rail >= 0 && rail < t->nrails) {
        t->drop[rail] = on != 0;
        slog(t, 2, "rail %d: fault hook %s", rail, on ? "on (frames vanish)" : "off");
    }
}

static void shm_stats(void *tv, int rail, bfo_rail_stats *out)
{
    const bfo_shm *t = (const bfo_shm *)tv;
    if (rail >= 0 && rail < t->nrails)
        *out = t->st[rail];
    else
        memset(out, 0, sizeof *out);
}

int bfo_shm_get_conn_info(const bfo_shm *t, int peer, int rail, bfo_shm_conn_info *o)
{
    const sconn *c;
    if (!t || !o || !bfo_tp_pair_ok(t->rank, t->size, t->nrails, peer, rail))
        return BFO_ERR_INVALID;
    c = &t->conns[peer * t->nrails + rail];
    memset(o, 0, sizeof *o);
    o->state = conn_up_now(c) ? 2 : c->c.fsm.cs == BFO_CONN_ST_HELLO_SENT ? 1 : 0;
    o->generation = seg_gen(c);
    o->pid = c->pid;
    o->ring_bytes = c->ring;
    o->tx_head = c->head;
    o->tx_tail = c->tail_seen;
    o->rx_head = c->seg ? ld_acq(c->rx_head) : 0;
    o->rx_tail = c->rx_pos;
    o->queued = el_count(t, c->unsent);
    o->in_flight = el_count(t, c->q.head) - o->queued;
    o->reads = el_count(t, c->reads.head);
    o->stalled = c->stalled;
    o->poisoned = c->poisoned;
    o->sleeping = c->seg ? (int)__atomic_load_n(c->my_sleep, __ATOMIC_RELAXED) : 0;
    o->peer_sleeping = c->seg ? (int)__atomic_load_n(c->peer_sleep, __ATOMIC_RELAXED) : 0;
    o->wakeups = c->wakes;
    return BFO_OK;
}

static void shm_dump(void *tv, FILE *f)
{
    const bfo_shm *t = (const bfo_shm *)tv;
    static const char *const states[] = { "none", "hello-sent", "up" };
    for (int i = 0; i < t->size * t->nrails; i++) {
        const sconn *c = &t->conns[i];
        bfo_shm_conn_info in;
        if (c->peer == t->rank)
            continue;
        bfo_shm_get_conn_info(t, c->peer, c->rail, &in);
        fprintf(f,
                "bfo-shm[%d]: peer %d rail %d: %s generation %llu pid %d, conn %s%s%s; tx head %llu tail %llu "
                "(in flight %d, queued %d); rx head %llu tail %llu%s; reads %d; sleeping me %d peer %d; "
                "wake-ups sent %llu\n",
                t->rank, c->peer, c->rail, states[in.state], (unsigned long long)seg_gen(c), c->pid,
                bfo_conn_state_name(c->c.fsm.cs), c->c.broken ? ", broken" : "", c->poisoned ? ", poisoned" : "",
                (unsigned long long)in.tx_head, (unsigned long long)in.tx_tail, in.in_flight, in.queued,
                (unsigned long long)in.rx_head, (unsigned long long)in.rx_tail, c->stalled ? " (stalled)" : "",
                in.reads, in.sleeping, in.peer_sleeping, (unsigned long long)c->wakes);
    }
    fprintf(f, "bfo-shm[%d]: %d connection(s) up, %d stalled, %d connect request(s); progress calls %llu, "
            "socket scans %llu, sleeps %llu; ring %zu bytes each way\n",
            t->rank, t->nup, t->nstalled, t->lb.asked, (unsigned long long)t->nprogress,
            (unsigned long long)t->nscans, (unsigned long long)t->nsleeps, t->ring);
}

void bfo_shm_test_corrupt_next(bfo_shm *t, int rail)
{
    if (t && rail >= 0 && rail < t->nrails)
        t->corrupt[rail] = 1;
}

void bfo_shm_test_refuse_attach(bfo_shm *t, int rail)
{
    if (t && rail >= 0 && rail < t->nrails)
        t->refuse[rail] = 1;
}

static void shm_fini(void *tv)
{
    bfo_shm *t = (bfo_shm *)tv;
    if (!t)
        return;
    if (t->conns_ready)
        for (int i = 0; i < t->size * t->nrails; i++) {
            sconn *c = &t->conns[i];
            if (c->fd >= 0)
                close(c->fd);
            say_gone(t, c); /* its process may go on: its peers must hear it left */
            if (c->peer_efd >= 0)
                close(c->peer_efd);
            if (c->pidfd >= 0)
                close(c->pidfd);
            if (c->spare_fd >= 0)
                close(c->spare_fd);
            if (c->seg)
                munmap(c->seg, c->seg_len);
            free(c->hs);
        }
    for (int k = 0; t->pends.slots && k < t->pends.n; k++) { /* handshakes held, with their segments */
        pend *p = pend_at(t, k);
        if (p->pr) {
            in_release(&p->pr->in);
            free(p->pr);
            p->pr = NULL;
        }
    }
    bfo_tp_pends_fini(&t->pends);
    for (int r = 0; r < BFO_MAX_RAILS; r++)
        if (t->lfd[r] >= 0)
            close(t->lfd[r]);
    if (t->ep >= 0)
        close(t->ep);
    if (t->efd >= 0)
        close(t->efd);
    free(t->conns);
    free(t->up);
    free(t->ents);
    free(t);
}

/* ----------------------------------------------------------------- open */

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* This host as a peer tells it: boot id, host name, namespaces. */
static void host_identity(bfo_shm *t)
{
    char buf[64], host[256];
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    struct stat st;
    int k = 0;
    memset(t->boot, 0, sizeof t->boot);
    if (f) {
        if (fgets(buf, sizeof buf, f))
            for (const char *p = buf; *p && k < 32; p++) {
                int v = *p >= '0' && *p <= '9' ? *p - '0' : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10 : -1;
                if (v < 0)
                    continue;
                t->boot[k / 2] = (uint8_t)(t->boot[k / 2] | (v << (k % 2 ? 0 : 4)));
                k++;
            }
        fclose(f);
    }
    if (k != 32)
        slog(t, 2, "no boot id (/proc/sys/kernel/random/boot_id): the host name alone tells hosts apart");
    memset(host, 0, sizeof host);
    gethostname(host, sizeof host - 1);
    t->host_hash = 0xcbf29ce484222325ull;
    for (const char *p = host; *p; p++)
        t->host_hash = (t->host_hash ^ (uint8_t)*p) * 0x100000001b3ull;
    t->ns_id = 0;
    if (stat("/proc/self/ns/net", &st) == 0)
        t->ns_id = mix64((uint64_t)st.st_ino);
    if (stat("/proc/self/ns/pid", &st) == 0)
        t->ns_id ^= (uint64_t)st.st_ino;
}

/* 1 when this process may read its peers' memory (process_vm_readv needs
 * ptrace access): Yama's ptrace_scope 0, or CAP_SYS_PTRACE under 1 and 2. */
static int can_attach(int *scope_out)
{
    char line[256];
    int scope = 0;
    unsigned long long cap = 0;
    FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
    if (f) {
        if (fscanf(f, "%d", &scope) != 1)
            scope = 0;
        fclose(f);
    }
    *scope_out = scope;
    if (scope <= 0)
        return 1;
    if (scope >= 3)
        return 0;
    f = fopen("/proc/self/status", "r");
    if (!f)
        return 0;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "CapEff:", 7))
            cap = strtoull(line + 7, NULL, 16);
    fclose(f);
    return (int)((cap >> 19) & 1); /* CAP_SYS_PTRACE */
}

/* What the engine's configuration sizes: the frames, the descriptors, the
 * keepalives, the rings (each holds at least four of the largest frames),
 * and whether RDMA GET is possible here.  -1 (logged): not supported. */
static int shm_size(bfo_shm *t, const bfo_config *cfg)
{
    bfo_tp_sizes z;
    bfo_config d = bfo_tp_config(cfg, &z);
    size_t rec;
    t->rdma_caps = d.rdma != BFO_RDMA_PUT;
    if (t->rdma_caps) {
        int scope;
        if (!can_attach(&scope)) {
            t->rdma_caps = 0;
            slog(t, 2, "kernel.yama.ptrace_scope is %d and this process lacks CAP_SYS_PTRACE: no "
                 "process_vm_readv, so no RDMA GET on shm rails (the engine copies)", scope);
        }
    }
    t->max_frame = z.max_frame;
    /* descriptors: the engine's max_ops is sized for every request on
     * every rail (45,600 under pml/bfo: 5 MiB set up and resident at
     * open); they start at ENTS_FIRST and double when every one is in
     * use (ent_take), as TCP's */
    t->nents = z.nents < ENTS_FIRST ? z.nents : ENTS_FIRST;
    t->ka_ns = z.ka_ns;
    rec = rec_size(t->max_frame);
    if (rec > RING_MAX / 4 || (t->o.ring_bytes && t->o.ring_bytes > RING_MAX)) {
        slog(t, 1, "a ring above %u bytes, or frames of %zu bytes, are not supported", RING_MAX, t->max_frame);
        return -1;
    }
    t->ring = REC_ALIGN;
    while (t->ring < (t->o.ring_bytes ? t->o.ring_bytes : RING_DEFAULT) || t->ring < 4 * rec)
        t->ring <<= 1;
    t->seg_len = BFO_SHM_SEG_HDR + 2 * t->ring;
    return 0;
}

/* The epoll set, this rank's doorbell, and a listening socket per rail
 * (in the abstract namespace: named by pid, nonce and rail).  -1: failed
 * (logged). */
static int shm_listen(bfo_shm *t)
{
    t->ep = epoll_create1(EPOLL_CLOEXEC);
    t->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (t->ep < 0 || t->efd < 0) {
        slog(t, 1, "epoll or eventfd: %s", strerror(errno));
        return -1;
    }
    for (int r = 0; r < t->nrails; r++) {
        struct sockaddr_un sa;
        socklen_t sl = sock_name(&sa, (uint32_t)t->pid, t->nonce, r);
        t->lfd[r] = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (t->lfd[r] < 0 || bind(t->lfd[r], (struct sockaddr *)&sa, sl) != 0 || listen(t->lfd[r], BFO_TP_BACKLOG) != 0) {
            slog(t, 1, "rail %d: cannot listen on @%s: %s", r, sa.sun_path + 1, strerror(errno));
            return -1;
        }
        if (bfo_tp_watch(t->ep, t->lfd[r], EPOLLIN, bfo_tp_tag(EV_LISTEN, 0, r)) != 0)
            return -1;
    }
    return 0;
}

/* Every connection's state (no connection yet; its conn machine told which
 * side it is), the descriptors and the slots for accepted connections.
 * -1: no memory. */
static int shm_conns_open(bfo_shm *t)
{
    t->conns = (sconn *)calloc((size_t)t->size * (size_t)t->nrails, sizeof *t->conns);
    t->up = (int *)calloc((size_t)t->size * (size_t)t->nrails, sizeof *t->up);
    t->ents = (ent *)calloc((size_t)t->nents, sizeof *t->ents);
    t->pends = (bfo_tp_pends){ .ep = t->ep, .events = EPOLLIN | EPOLLRDHUP, .ev_type = EV_PEND,
                               .timeout_ns = t->o.connect_timeout_ns };
    if (!t->conns || !t->up || !t->ents || bfo_tp_pends_init(&t->pends, sizeof(pend), t->size, t->nrails) != 0)
        return -1;
    bfo_list_free_all(&t->ents->next, sizeof *t->ents, t->nents, &t->ent_free);
    bfo_link_bind(&t->lb, t, shm_act, t->o.connect_timeout_ns);
    t->lb.host_answers = 1; /* a dial connects to the peer's listener: its process exists (hello_heard) */
    for (int p = 0; p < t->size; p++)
        for (int r = 0; r < t->nrails; r++) {
            sconn *c = conn_of(t, p, r);
            c->up_idx = -1;
            c->pidfd = -1;
            conn_reset(t, c);
            c->peer = p;
            c->rail = r;
            bfo_link_init(&t->lb, &c->c, t->rank, p, r);
            c->dialer = 0; /* dial and take say, per connection (either side dials) */
            c->spare_fd = -1;
            c->hello_mfd = -1;
        }
    t->conns_ready = 1;
    return 0;
}

static int shm_open_rails(void **out, const bfo_transport_args *a)
{
    bfo_shm *t;
    const bfo_shm_options *opt = a ? (const bfo_shm_options *)a->opt : NULL;
    int rc = BFO_ERR_INVALID;
    *out = NULL;
    if (!bfo_tp_args_ok(a))
        return BFO_ERR_INVALID;
    t = (bfo_shm *)calloc(1, sizeof *t);
    if (!t)
        return BFO_ERR_NO_MEMORY;
    t->ep = t->efd = -1;
    t->failed = (elist)BFO_LIST_EMPTY;
    for (int r = 0; r < BFO_MAX_RAILS; r++)
        t->lfd[r] = -1;
    if (opt)
        t->o = *opt;
    t->rank = a->rank;
    t->size = a->size;
    t->nrails = a->nrails;
    t->lg = (bfo_tp_log){ .name = "shm", .rank = a->rank, .level = a->log_level ? a->log_level : 1 };
    t->sink = *a->sink;
    t->pid = (int)getpid();
    t->euid = geteuid(); /* SAME UID */
    t->populate = 1; /* until a kernel says otherwise (seg_reserve) */
    for (int r = 0; r < t->nrails; r++) {
        if (a->rails && !shm_claims(a->rails[r])) {
            slog(t, 1, "rail %d: \"%s\" is not a shm rail (shm or shm:LABEL)", r, a->rails[r]);
            goto fail;
        }
        t->bw[r] = a->bandwidth && a->bandwidth[r] ? a->bandwidth[r]
                   : t->o.rail_bandwidth[r] ? t->o.rail_bandwidth[r]
                                            : BFO_SHM_BW_GUESS;
    }
    if (!t->o.connect_timeout_ns)
        t->o.connect_timeout_ns = CONNECT_TIMEOUT_DEFAULT_NS;
    if (!t->o.scan_ns)
        t->o.scan_ns = 100000ull;
    if (!t->o.read_chunk)
        t->o.read_chunk = CHUNK_DEFAULT;
    if (shm_size(t, a->cfg) != 0)
        goto fail;
    crc_init();
    host_identity(t);
    t->nonce = mix64(bfo_tp_now() ^ ((uint64_t)t->pid << 32) ^ (uint64_t)(uintptr_t)t);
    rc = BFO_SHM_ERR_SOCKET;
    if (shm_listen(t) != 0)
        goto fail;
    rc = BFO_ERR_NO_MEMORY;
    if (shm_conns_open(t) != 0)
        goto fail;
    t->now = bfo_tp_now();
    t->last_scan = t->now;
    if (!t->o.auth) { /* once per process (tests open many; threads may) */
        static int said_unauthenticated;
        if (!__atomic_exchange_n(&said_unauthenticated, 1, __ATOMIC_RELAXED))
            slog(t, 1, "rank %d: shm hellos are NOT authenticated (no bfo_auth given): any process on this host "
                       "that reaches this rank's socket can take its shm rails", t->rank);
    }
    slog(t, 2, "open: %d rail(s), rings up to %zu bytes each way (frames up to %zu bytes), %d descriptors; "
         "no segment until a connection needs one", t->nrails, t->ring, t->max_frame, t->nents);
    *out = t;
    return BFO_OK;
fail:
    shm_fini(t);
    return rc;
}

/* Another host, or another container: never reached by this rail. */
static int shm_reaches(void *vt, int rail, int peer, const bfo_addr *a)
{
    const bfo_shm *t = (const bfo_shm *)vt;
    const uint8_t *b = a->bytes;
    (void)rail;
    (void)peer;
    if (a->len != BFO_SHM_ADDR_SIZE || bfo_get32(b) != BFO_SHM_ADDR_MAGIC)
        return 1; /* not ours to judge here: connect() says what is wrong with it */
    return memcmp(b + BFO_SHM_ADDR_OFF_BOOT, t->boot, 16) == 0 && bfo_get64(b + BFO_SHM_ADDR_OFF_HOST) == t->host_hash &&
           bfo_get64(b + BFO_SHM_ADDR_OFF_NS) == t->ns_id;
}

static const char *shm_errname(int rc) { return bfo_tp_errname(shm_errs, rc); }

/* The tunables (bfo_setting.h; bfo_shm.h, OPTIONS): BFO_SHM_<NAME>, `bfo run
 * --set shm.NAME=V`, pml_bfo_shm_<name>.  Defaults as shm_open_rails applies them. */
static const bfo_setting shm_settings[] = {
    { "ring_bytes", BFO_SETTING_SIZE, BFO_SETTING_AT(bfo_shm_options, ring_bytes), RING_DEFAULT, 1, RING_MAX, 0,
      "ring per direction of a connection, rounded up to a power of two and at least four of the largest frames" },
    { "node_bytes", BFO_SETTING_SIZE, BFO_SETTING_AT(bfo_shm_options, node_bytes), NODE_DEFAULT, 1, 1ull << 40,
      BFO_SETTING_OFF,
      "rings of every pair of ranks on a host within this per rail: smaller rings as ranks grow (off: ring_bytes)" },
    { "read_chunk", BFO_SETTING_SIZE, BFO_SETTING_AT(bfo_shm_options, read_chunk), CHUNK_DEFAULT, 1, 1u << 30, 0,
      "bytes process_vm_readv moves per connection per progress call" },
    { "connect_timeout_ms", BFO_SETTING_MS, BFO_SETTING_AT(bfo_shm_options, connect_timeout_ns),
      CONNECT_TIMEOUT_DEFAULT_NS / 1e6, 1, 3600000, 0,
      "the hello exchange, or the wait for the peer to dial, at most this long (ms)" },
};

/* RDMA from 8 KiB, 1 MiB per read, when no other RDMA transport is in use:
 * its RDMA is one process_vm_readv of the sender's memory, nothing to
 * register, one copy where the copy protocol makes two and three trips
 * through the rings (measured over pml/bfo, us a way: 16 KiB 7.0-7.2 with
 * the engine's 64 KiB, 4.7-4.9 with 8 KiB; 4 MiB 814-906 with 64 KiB
 * pieces, 541-769 with 1 MiB).  Its frames: the engine's sizes (its rings
 * are sized by the largest frame). */
static const bfo_transport_tuning shm_tuning = { 1, 0, 8 << 10, 1 << 20, NULL };

/* What it holds (bfo_transport.h, bfo_transport_need), per peer on this
 * host per rail: the peer's doorbell and pidfd (the lifeline, LIFELINE),
 * and, while the handshake runs, its socket (kept where pidfds are
 * missing) and the segment's memfd between the dial and its hello (the
 * mapping itself holds no descriptor, and nothing is pinned); per rail its
 * listener; the epoll set and the doorbell once. */
static void shm_need(const bfo_transport_args *a, bfo_transport_need *out)
{
    (void)a;
    memset(out, 0, sizeof *out);
    out->fds_peer = 3;
    out->fds_rail = 1;
    out->fds = 2;
    out->host_only = 1;
}

const bfo_transport_ops bfo_shm_transport = {
    "shm",
    shm_claims,
    shm_open_rails,
    shm_address,
    shm_start,
    shm_backend,
    shm_progress,
    shm_wait_fds,
    shm_fault,
    shm_stats,
    shm_dump,
    shm_fini,
    shm_errname,
    shm_reaches,
    NULL, /* mem_released: no registration outlives its dereg_mem */
    shm_settings,
    (int)(sizeof shm_settings / sizeof shm_settings[0]),
    0,    /* eager_limit: the engine's */
    NULL, /* counters: none of its own (busy_heard is common) */
    0,
    "shm",
    &shm_tuning,
    shm_need,
};
