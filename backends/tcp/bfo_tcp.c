// SPDX-License-Identifier: BSD-3-Clause
/* bfo_tcp.c - the TCP backend (see bfo_tcp.h for the contract and design). */
#define _GNU_SOURCE
#include "bfo_tcp.h"
#include "bfo_auth.h"
#include "bfo_link.h"
#include "bfo_list.h"
#include "bfo_tp_os.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

enum { EV_LISTEN = 1, EV_LINK = 2, EV_PEND = 3, EV_BEACON = 4 };

#define MAX_IOV 64
/* Busy polling (bfo_tcp_progress(t, 0)): a link that took a data frame in
 * the last HOT_NS is "hot": it leaves the epoll set and is read directly at
 * every progress.  That saves a system call on the critical path (epoll,
 * then read) and the kernel's epoll wake-up work for every segment that
 * arrives.  epoll still runs at least every EPOLL_EVERY_NS for the other
 * links, accepts and writability; a link goes back into the epoll set when
 * it cools down, and all of them before the process sleeps.  The periodic
 * scans (connect timeouts, the engine's timers) run every SCAN_EVERY_NS, or
 * at once before sleeping; delayed acks are checked at every progress. */
#define HOT_MAX 4
#define HOT_NS 1000000ull
#define EPOLL_EVERY_NS 20000ull
/* ... and at least every EPOLL_ALONE_NS while every link that is up is
 * hot (two ranks, one peer): epoll then has only accepts, handshakes and
 * beacons to find, and at every 20 us it was a system call on the path of
 * 0.45 of the messages of a ping-pong (an 8-byte one-way takes some
 * 3.5 us here).  A link that is up and cold (another peer's, a rail not
 * used) brings EPOLL_EVERY_NS back at the next scan (SCAN_EVERY_NS). */
#define EPOLL_ALONE_NS 200000ull
#define SCAN_EVERY_NS 20000ull
/* A read of a few frames is stamped with the time its progress call began
 * (or the clock's last reading): the clock is read again before parsing
 * only once more than this many bytes were read since (a busy poll's read
 * of one small frame is stamped by the progress call's one reading). */
#define CLOCK_AFTER_BYTES 4096
/* A link whose peer process is silent looks at TCP_INFO at most this often
 * (kernel_evidence). */
#define KEV_EVERY_NS 1000000ull
/* A dialer whose reply has not come tells the engine that the peer's host
 * answers at most this often (hello_heard). */
#define HELLO_HEARD_EVERY_NS 100000000ull
/* An acceptor waits for a challenged hello's CONFIRM at most this long
 * while the dialer's kernel answers (proof_host_answers). */
#define PROOF_WAIT_MAX_NS 60000000000ull
/* A zero-window probe whose answer is not back yet still counts as the
 * peer's host heard for this long after the last answer: the peer's kernel
 * answers a window probe (an out-of-window segment) at most once per
 * net.ipv4.tcp_invalid_ratelimit (500 ms by default), so the answer to a
 * probe that follows the last one closer than that is withheld, and only
 * the next probe (a doubled interval later) is answered: up to about
 * 1.4 s between answers with the default, early in a closed window.  Seen
 * as a peer that computed 60 s losing both rails, now and then, in
 * check-tcp t14. */
#define ZWIN_WITHHELD_NS 2000000000ull
/* TCP_NOTSENT_LOWAT (bfo_tcp.h, OPTIONS) unless the options say otherwise.
 * Measured, `bfo bench --sizes 1M` over 127.0.0.2,127.0.0.3 (one way, the
 * sender busy polling) against the option off, each run paired with one
 * off, 2 shared cores under load: 128 KiB 0.75 of the bandwidth (median
 * of 8 pairs), 1 MiB 0.91 (8), 2 MiB 1.06 (4), 4 MiB 1.02 (4); `bfo stream
 * --size 1M` (both ways, so every link is busy polled and refilled at
 * every progress) showed no difference even at 128 KiB.  A sender that
 * loses its core leaves the receiver only the unsent bytes to take; the
 * smaller the mark, the sooner the pipe runs dry. */
#define NOTSENT_LOWAT_DEFAULT (2 * 1024 * 1024)
/* BEACONS (bfo_tcp.h): the default interval, and how long a beacon vouches
 * for a connection that has carried nothing from the peer process: a TCP
 * connection stuck for longer (a path that passes UDP and not TCP) is left
 * to the engine's probe, then TCP_USER_TIMEOUT.  Retransmission timeouts
 * back off from 200 ms: 3 s covers three losses of the same segment in a
 * row (0.2 + 0.4 + 0.8 + 1.6). */
#define BEACON_DEFAULT_NS 10000000ll
/* bfo_tcp.h, OPTIONS: why 10 s and not less. */
#define USER_TIMEOUT_DEFAULT_MS 10000u
#define CONNECT_TIMEOUT_DEFAULT_NS 1000000000ull
#define BEACON_TRUST_NS 3000000000ull
/* BEACONS: a beacon socket whose port could not be bound at the rail's
 * first connection is tried again this often (beacon_open) */
#define UDP_RETRY_NS 1000000000ull
/* BEACONS follow the work (beacon_due): a connection gets them for this
 * long after its last data frame either way, unless the options say
 * otherwise: a probe out at the end of a burst (the engine's probe
 * timeout is tens of ms) is covered many times over. */
#define BEACON_IDLE_DEFAULT_NS 1000000000ll
/* RECEIVE BUFFERS: a connection idle this long gives its buffer back,
 * unless the options say otherwise; looked for at most every
 * IDLE_SCAN_NS. */
#define RX_IDLE_DEFAULT_NS 2000000000ll
#define IDLE_SCAN_NS 10000000ull
/* ... and one idle takes this much at its next read, enough for the
 * engine's probes and their answers (a heartbeat every 100 ms on an idle
 * rail), and the whole buffer only once a frame that does not fit comes */
#define RX_SMALL 4096
#define FRAME_HELLO (BFO_TCP_HDR_SIZE + BFO_TCP_HELLO_SIZE)
/* ... with the handshake's part (AUTHENTICATION in bfo_tcp.h) */
#define FRAME_HELLO_AUTH (FRAME_HELLO + BFO_TCP_HELLO_AUTH_SIZE)
#define AUTH_AREA(f) ((f) + FRAME_HELLO)
/* the tie answer's MAC: this label, over the hello's handshake HELLO */
#define TIE_LABEL "bfo tcp tie v1"

/* A frame whose engine bytes fit in INLINE_MAX is copied behind its header
 * at post: one piece to write instead of three (the kernel's per-piece work
 * is a visible part of a small message's latency). */
#define INLINE_MAX 64

/* Send descriptors at open (MEMORY in bfo_tcp.h): more as posts in flight
 * need them (ent_take), kept once taken. */
#define ENTS_FIRST 256

/* A send descriptor: one posted frame, from post to completion. */
typedef struct ent {
    uint8_t hdr[BFO_TCP_HDR_SIZE + INLINE_MAX];
    size_t hlen; /* bytes of hdr to write: the header, and the frame if inline */
    const void *base[2];
    size_t len[2];
    int n;
    const bfo_data_span *span; /* described data (iovec): its segments follow the pieces,
                                * gathered into the writev (bfo_data_span_gather) */
    size_t total, off; /* bytes of the whole frame, bytes written */
    uint64_t seq, token; /* seq: 0 until its first byte is handed to the socket (stamp_ack) */
    int next;
    int urgent; /* a rail control frame (queue_urgent) */
} ent;

typedef bfo_list elist; /* a FIFO of descriptors (bfo_list.h) */

/* A peer's beacon address (BEACONS): the 28 bytes of an IPv6 one at most,
 * not a sockaddr_storage's 128 in every link (RECEIVE BUFFERS). */
typedef union baddr {
    struct sockaddr sa;
    struct sockaddr_in v4;
    struct sockaddr_in6 v6;
    uint64_t align; /* sockaddr_storage's alignment: it is read as one (sa_len, sendto) */
} baddr;

/* RECEIVE BUFFERS.  A connection's receive buffer (two of the largest
 * frames: a frame being taken and the next one read behind it) and its
 * state for a FRAG read in place (RECEIVING IN PLACE below) are one block,
 * allocated at the connection's first read and given back when the
 * connection closes, or once it has carried no data frame either way for
 * rx_idle (bfo_tcp.h, OPTIONS) and holds nothing (rx_trim): a
 * never-connected peer costs its tlink alone.  After that the next read
 * takes RX_SMALL, grown to the whole buffer when a frame that does not fit
 * comes (rx_ready): the engine's heartbeat on an idle rail costs 4 KiB,
 * not 2 x 64 KiB.  One allocation per connection and idle period, none
 * per frame.  Counted per rail: rx_buf_bytes (held now), rx_buf_allocs. */
typedef struct rxbuf {
    uint8_t *pl_dst;   /* where a FRAG's payload goes; NULL: the receive is gone, the rest is read and dropped */
    size_t pl_len, pl_got, pl_hlen;
    bfo_place_ticket pl_ticket;
    uint8_t pl_hdr[BFO_TCP_HDR_SIZE + BFO_MAX_HDR_SIZE];
    uint8_t data[]; /* rx_cap bytes: the frames read */
} rxbuf;

typedef struct tlink {
    bfo_link c;        /* the conn machine: state, attempt numbers, deadline (bfo_link.h); first:
                        * t->used is read as an array of bfo_link pointers (settle) */
    int peer, rail, fd;
    int idx;           /* peer * nrails + rail: its place in t->lk, its epoll tags, t->hot */
    uint32_t gen;      /* connection generation (stale epoll events) */
    int poisoned;      /* the fault hook swallowed a frame of it */
    int parted;        /* the peer said goodbye, or this side leaves (tcp_part): its end
                        * is no failure; for good (link_reset keeps it) */
    int stalled;       /* back-pressure: the frame at rx_off waits */
    uint64_t ka_at;    /* ... the last keepalive telling the peer so */
    int peer_stalled;  /* the peer said it is stalled */
    int uto_off;       /* TCP_USER_TIMEOUT is off (a side is stalled, or the peer's window closed) */
    /* the peer's kernel as a witness (kernel_evidence) */
    uint64_t rx_at;    /* the last frame of any kind from the peer process */
    uint64_t kev_at;   /* the last look at TCP_INFO */
    uint64_t nudge_at; /* the last nudge (an ACK frame its kernel must acknowledge) */
    int zwin;          /* the peer's receive window is closed: it does not read */
    int hot;           /* in t->hot[] (HOT_NS) */
    int in_epoll;      /* the connection is in the epoll set */
    uint64_t hot_at;   /* the last data frame taken */
    uint32_t evmask;   /* registered epoll events */
    /* BEACONS: the peer's beacon address (bto_ok 1; -1 it published none,
     * 0 not looked up yet), this connection's beacons sent and the last
     * sequence number taken; work_at: the last data frame written or taken,
     * or the connection's start (beacons follow the work: beacon_due) */
    baddr bto;
    int bto_ok;
    uint64_t work_at;
    uint64_t bseq_tx, bseq_rx;
    /* send */
    elist q;    /* written and unacknowledged, then unwritten */
    int unsent; /* first unwritten entry, -1 none */
    elist hole; /* swallowed by the fault hook */
    uint64_t next_seq, last_written;
    uint8_t ctl[2 * FRAME_HELLO];
    bfo_auth_hs *hs;   /* this side's dial's handshake (options.auth): from send_hello to the reply */
    size_t ctl_len, ctl_off;
    /* receive: rb (rx is its bytes) exists while the connection reads
     * (RECEIVE BUFFERS below); NULL never connected, closed, or idle */
    rxbuf *rb;
    uint8_t *rx;
    size_t rx_capl;    /* rx's bytes: 0, RX_SMALL or rx_cap */
    int rx_idled;      /* this connection's buffer went back idle once: the next is small first */
    size_t rx_len, rx_off;
    uint64_t rx_seq, ack_sent, rx_since;
    unsigned rx_frames;
    size_t rx_bytes;
    int placing;       /* 1: the frame in rb->pl_hdr is being read in place (RECEIVING IN PLACE) */
    int pl_streak;     /* the last frame was read in place: read the next one's headers alone first */
} tlink;

/* An authenticated hello being read and proven (options.auth): allocated
 * when its header says so, freed with its connection, so that the slots
 * (4 per peer and rail) cost what they did.  Stage 0 reads the hello; 1,
 * challenged (the handshake's reply sent), reads the dialer's CONFIRM. */
typedef struct proof {
    uint8_t buf[FRAME_HELLO_AUTH];
    int stage, peer;
    uint64_t attempt, challenged_at;
    bfo_auth_hs hs;
    const char *why; /* a proof refused: why (NULL: said nothing, it just went) */
} proof;

/* An accepted connection until its hello names the link (bfo_tp.h), and,
 * authenticated, until its dialer proves the hello (pr). */
typedef struct pend {
    bfo_tp_pend a; /* first member */
    size_t got;
    uint8_t buf[FRAME_HELLO];
    proof *pr;
} pend;

static inline int pend_stage(const pend *p) { return p->pr ? p->pr->stage : 0; }

struct bfo_tcp {
    int rank, size, nrails, ep;
    bfo_tp_log lg; /* tlog */
    bfo_tcp_options o;
    struct sockaddr_storage sa[BFO_MAX_RAILS];  /* each rail's local address (port 0: dials bind it) */
    struct sockaddr_storage lsa[BFO_MAX_RAILS]; /* ... and where it listens (published) */
    unsigned bw[BFO_MAX_RAILS];
    int lfd[BFO_MAX_RAILS];
    int ufd[BFO_MAX_RAILS];     /* BEACONS: each rail's UDP socket (-1: none, or not yet) */
    uint16_t uport[BFO_MAX_RAILS]; /* ... its port, host order (published) */
    /* ... opened at the rail's first connection (beacon_open): the port
     * published is the listener's number, bound then; ulazy 0: opened at
     * open (a beacon range without the listener's port), or none */
    int ulazy[BFO_MAX_RAILS];
    int uwant[BFO_MAX_RAILS];   /* a connection was dialed or accepted on the rail */
    uint64_t utry_at[BFO_MAX_RAILS]; /* the last bind that failed (retried every UDP_RETRY_NS) */
    uint64_t beacon_ns, beacon_at; /* the interval (0: off), the last round */
    int drop[BFO_MAX_RAILS];
    uint64_t job, now;
    bfo_sink sink;
    /* MEMORY (bfo_tcp.h): a (peer, rail) costs its pointer in lk until its
     * link is first needed (a connect(), a post, a hello from the peer),
     * then the link, made then and kept; used lists the links made, in the
     * order they were, for the scans (a scan passes the peers never used) */
    tlink **lk;
    tlink **used;
    int nused, capused;
    ent *ents;
    int nents, ent_free;
    elist failed;
    bfo_tp_pends pends; /* accepted connections without a hello yet (pend) */
    int nrx;           /* receive buffers held (RECEIVE BUFFERS) */
    uint64_t rx_idle_ns, trim_at; /* rx_idle (0: kept while connected), the last rx_trim */
    uint64_t beacon_idle_ns; /* BEACONS: after the last work this long (0: as long as connected) */
    int links_ready;
    int nstalled;
    bfo_link_binding lb; /* the conn machine's binding: tcp_act (lb.asked: connect() requests) */
    int hot[HOT_MAX], nhot;
    int cold_up;       /* links up and not hot at the last acks_due: epoll's cadence */
    uint64_t last_epoll, last_scan;
    size_t unclocked; /* bytes read since now was read (link_read) */
    uint64_t ka_ns; /* back-pressure keepalive interval */
    int busy; /* this progress does not sleep: links may turn hot */
    /* The link whose frames are being handed to the engine (parse): what
     * the engine posts on it meanwhile is queued, and written at the end
     * of parse with the ack of every frame taken (see parse). */
    tlink *taking;
    int replied_elsewhere; /* ... and it posted to that peer on another link */
    uint64_t nprogress, nepoll; /* calls, for bfo_tcp_dump */
    size_t max_frame, rx_cap;
    bfo_tcp_stats st;
};

/* ---------------------------------------------------------------- helpers */


/* This transport's log (bfo_tp.h). */
#define tlog(t, ...) bfo_tp_logf(&(t)->lg, __VA_ARGS__)

static const bfo_tp_err tcp_errs[] = { { BFO_TCP_ERR_SOCKET, "BFO_TCP_ERR_SOCKET" }, { 0, NULL } };

const char *bfo_tcp_errname(int rc)
{
    const char *name = bfo_tp_errname(tcp_errs, rc);
    return name ? name : bfo_errname(rc);
}

int bfo_tcp_parse_rail(const char *s, struct sockaddr_storage *sa)
{
    char buf[64];
    size_t n;
    if (!s)
        return -1;
    if (!strncmp(s, "tcp:", 4))
        s += 4;
    n = strcspn(s, ",");
    if (n >= 2 && s[0] == '[' && s[n - 1] == ']') { /* [IPV6] */
        s++;
        n -= 2;
    }
    if (n == 0 || n >= sizeof buf)
        return -1;
    memcpy(buf, s, n);
    buf[n] = 0;
    memset(sa, 0, sizeof *sa);
    struct sockaddr_in *v4 = (struct sockaddr_in *)sa;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)sa;
    if (inet_pton(AF_INET, buf, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        return 0;
    }
    if (inet_pton(AF_INET6, buf, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        return 0;
    }
    return -1;
}

static int tcp_claims(const char *rail)
{
    struct sockaddr_storage sa;
    return bfo_tcp_parse_rail(rail, &sa) == 0;
}

static socklen_t sa_len(const struct sockaddr_storage *sa)
{
    return sa->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
}

/* "127.0.0.2:4000", "[::1]:4000" */
static const char *sastr(const struct sockaddr_storage *sa, char *buf, size_t cap)
{
    char a[INET6_ADDRSTRLEN];
    if (sa->ss_family == AF_INET6) {
        const struct sockaddr_in6 *v6 = (const struct sockaddr_in6 *)sa;
        inet_ntop(AF_INET6, &v6->sin6_addr, a, sizeof a);
        snprintf(buf, cap, "[%s]:%u", a, ntohs(v6->sin6_port));
    } else {
        const struct sockaddr_in *v4 = (const struct sockaddr_in *)sa;
        inet_ntop(AF_INET, &v4->sin_addr, a, sizeof a);
        snprintf(buf, cap, "%s:%u", a, ntohs(v4->sin_port));
    }
    return buf;
}

/* The published address: u8 family (4 or 6), u8 0, u16 port, the IP, and
 * the beacons' UDP port (u16, network order) when the rail has one (uport
 * not 0). */
static void addr_put(const struct sockaddr_storage *sa, uint16_t uport, bfo_addr *a)
{
    memset(a, 0, sizeof *a);
    if (sa->ss_family == AF_INET6) {
        const struct sockaddr_in6 *v6 = (const struct sockaddr_in6 *)sa;
        a->bytes[0] = 6;
        memcpy(a->bytes + 2, &v6->sin6_port, 2);
        memcpy(a->bytes + 4, &v6->sin6_addr, 16);
        a->len = 20;
    } else {
        const struct sockaddr_in *v4 = (const struct sockaddr_in *)sa;
        a->bytes[0] = 4;
        memcpy(a->bytes + 2, &v4->sin_port, 2);
        memcpy(a->bytes + 4, &v4->sin_addr, 4);
        a->len = 8;
    }
    if (uport) {
        a->bytes[a->len] = (uint8_t)(uport >> 8);
        a->bytes[a->len + 1] = (uint8_t)uport;
        a->len += 2;
    }
}

/* The peer's TCP address, and its beacons' UDP port (0: none published:
 * a card without one, from before beacons). */
static int addr_get(const bfo_addr *a, struct sockaddr_storage *sa, uint16_t *uport)
{
    memset(sa, 0, sizeof *sa);
    *uport = 0;
    if ((a->len == 22 || a->len == 10) && a->bytes[0] == (a->len == 22 ? 6 : 4))
        *uport = (uint16_t)(a->bytes[a->len - 2] << 8 | a->bytes[a->len - 1]);
    if ((a->len == 20 || a->len == 22) && a->bytes[0] == 6) {
        struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)sa;
        v6->sin6_family = AF_INET6;
        memcpy(&v6->sin6_port, a->bytes + 2, 2);
        memcpy(&v6->sin6_addr, a->bytes + 4, 16);
        return 0;
    }
    if ((a->len == 8 || a->len == 10) && a->bytes[0] == 4) {
        struct sockaddr_in *v4 = (struct sockaddr_in *)sa;
        v4->sin_family = AF_INET;
        memcpy(&v4->sin_port, a->bytes + 2, 2);
        memcpy(&v4->sin_addr, a->bytes + 4, 4);
        return 0;
    }
    return -1;
}

static void sock_opts(const bfo_tcp *t, int fd)
{
    int one = 1;
    unsigned to = t->o.user_timeout_ms;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &to, sizeof to);
    if (t->o.notsent_lowat > 0) { /* OPTIONS: the kernel's unsent queue stays short */
        int lw = t->o.notsent_lowat;
        setsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &lw, sizeof lw);
    }
}

/* TCP_USER_TIMEOUT is off while either side of the connection is stalled
 * (back-pressure): the kernel counts zero-window probes against it, and a
 * stall is not a failure.  The peer's stall is known from its flag (on its
 * keepalives and data frames), which also proves it alive
 * (bfo_engine_rail_heard); if they stop, the engine's probe timeout fails
 * the rail.  A side stalled itself offers its stalled frame to the engine
 * again at every progress, which counts as hearing from the peer; when both
 * sides are stalled nothing can cross the connection until one of them
 * reads again. */
static void user_timeout_update(bfo_tcp *t, tlink *l)
{
    int off = l->stalled || l->peer_stalled || l->zwin;
    unsigned to = off ? 0 : t->o.user_timeout_ms;
    if (off == l->uto_off || l->fd < 0)
        return;
    l->uto_off = off;
    setsockopt(l->fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &to, sizeof to);
    tlog(t, 3, "peer %d rail %d: user timeout %s (stalled: %s%s)", l->peer, l->rail,
         off ? "off" : "on", l->stalled ? "this side " : "", l->peer_stalled ? "the peer" : "");
}

static void peer_stall(bfo_tcp *t, tlink *l, int stalled)
{
    if (stalled != l->peer_stalled) {
        l->peer_stalled = stalled;
        user_timeout_update(t, l);
    }
}

_Static_assert(offsetof(tlink, c) == 0, "a tlink's conn machine is its first member (settle, tcp_act)");

static void link_reset(bfo_tcp *t, tlink *l);
static void beacon_open(bfo_tcp *t, int r);

/* (peer, rail)'s link when it was ever needed, else NULL. */
static inline tlink *link_find(const bfo_tcp *t, int peer, int rail) { return t->lk[peer * t->nrails + rail]; }

/* (peer, rail)'s link, made at its first use (MEMORY: a peer never used
 * costs a pointer per rail): the conn machine as open would have started
 * it (bfo_link_init: the peer chosen, nothing asked).  NULL when out of
 * memory (said). */
static tlink *link_of(bfo_tcp *t, int peer, int rail)
{
    tlink *l = link_find(t, peer, rail);
    if (l)
        return l;
    if (t->nused == t->capused) {
        int cap = t->capused ? 2 * t->capused : 16;
        tlink **u = (tlink **)realloc(t->used, (size_t)cap * sizeof *u);
        if (!u) {
            tlog(t, 1, "peer %d rail %d: no memory for its link", peer, rail);
            return NULL;
        }
        t->used = u;
        t->capused = cap;
    }
    if (!(l = (tlink *)calloc(1, sizeof *l))) {
        tlog(t, 1, "peer %d rail %d: no memory for its link", peer, rail);
        return NULL;
    }
    link_reset(t, l);
    l->peer = peer;
    l->rail = rail;
    l->idx = peer * t->nrails + rail;
    bfo_link_init(&t->lb, &l->c, t->rank, peer, rail); /* either side dials; the lower rank wins a tie */
    t->lk[l->idx] = l;
    t->used[t->nused++] = l;
    return l;
}

/* The link of an engine's call, NULL when (peer, rail) names none. */
static tlink *pair_link(bfo_tcp *t, int peer, int rail)
{
    return bfo_tp_pair_ok(t->rank, t->size, t->nrails, peer, rail) ? link_of(t, peer, rail) : NULL;
}

/* The engine has the connection (the conn machine is UP). */
static inline int link_up(const tlink *l) { return bfo_link_up(&l->c); }

static void link_events_now(bfo_tcp *t, tlink *l)
{
    uint32_t want = 0;
    struct epoll_event ev;
    if (!l->stalled)
        want |= EPOLLIN;
    if (l->c.fsm.cs == BFO_CONN_ST_DIALING || l->ctl_off < l->ctl_len || l->unsent >= 0)
        want |= EPOLLOUT;
    if (want == l->evmask)
        return;
    ev.events = want;
    ev.data.u64 = bfo_tp_tag(EV_LINK, l->gen, l->idx);
    if (epoll_ctl(t->ep, EPOLL_CTL_MOD, l->fd, &ev) == 0)
        l->evmask = want;
}

/* The epoll events a link in the set waits for; a hot link (busy polled,
 * not in the set) has none to change, which is the common case. */
static inline void link_events(bfo_tcp *t, tlink *l)
{
    if (l->fd >= 0 && l->in_epoll)
        link_events_now(t, l);
}

/* A hot link leaves the epoll set: progress reads it directly. */
static void heat(bfo_tcp *t, tlink *l)
{
    if (l->in_epoll && epoll_ctl(t->ep, EPOLL_CTL_DEL, l->fd, NULL) != 0)
        return;
    l->in_epoll = 0;
    l->evmask = 0;
    l->hot = 1;
    t->hot[t->nhot++] = l->idx;
}

/* The hot link at t->hot[k] goes back into the epoll set (if it still has
 * the same connection) and out of the hot set. */
static void cool(bfo_tcp *t, int k)
{
    tlink *l = t->lk[t->hot[k]];
    l->hot = 0;
    t->hot[k] = t->hot[--t->nhot];
    if (l->fd >= 0 && !l->in_epoll) {
        struct epoll_event ev;
        ev.events = EPOLLIN;
        ev.data.u64 = bfo_tp_tag(EV_LINK, l->gen, l->idx);
        if (epoll_ctl(t->ep, EPOLL_CTL_ADD, l->fd, &ev) == 0) {
            l->in_epoll = 1;
            l->evmask = EPOLLIN;
            link_events(t, l);
        }
    }
}

/* ------------------------------------------------------------ entry pool */

static inline void el_push(bfo_tcp *t, elist *L, int i) { bfo_list_push(&t->ents->next, sizeof *t->ents, L, i); }
static inline int el_pop(bfo_tcp *t, elist *L) { return bfo_list_pop(&t->ents->next, sizeof *t->ents, L); }
static inline void el_append(bfo_tcp *t, elist *dst, elist *src)
{
    bfo_list_append(&t->ents->next, sizeof *t->ents, dst, src);
}

/* ------------------------------------------------------------- the sink
 *
 * Every report goes to the sink (bfo_net, which owns the engine and runs
 * its timers). */

static int up_frame(bfo_tcp *t, const tlink *l, const uint8_t *buf, size_t len)
{
    return t->sink.frame(t->sink.ctx, l->peer, l->rail, buf, len, t->now);
}

static void up_heard(bfo_tcp *t, const tlink *l)
{
    if (t->sink.heard)
        t->sink.heard(t->sink.ctx, l->peer, l->rail, t->now);
}

static void up_host(bfo_tcp *t, const tlink *l, uint64_t at)
{
    t->st.rail[l->rail].busy_heard++;
    if (t->sink.host_heard)
        t->sink.host_heard(t->sink.ctx, l->peer, l->rail, at);
}

/* Completes an entry: frees it first (the engine may post from inside). */
static void complete(bfo_tcp *t, int i, int ok, int rail)
{
    bfo_tp_complete(&t->sink, &t->ents->next, sizeof *t->ents, &t->ent_free, i, t->ents[i].token, ok,
                    &t->st.rail[rail].completed_ok, &t->st.rail[rail].completed_failed);
}

/* A rail control frame (the engine's PROBE, PROBEACK, BROKEN), by its type. */
static inline int ctl_frag(uint8_t type)
{
    return type == BFO_FRAG_PROBE || type == BFO_FRAG_PROBEACK || type == BFO_FRAG_BROKEN;
}

/* ------------------------------------------------------ receive buffers */

/* RECEIVE BUFFERS: l's block with at least cap bytes (kept, or grown:
 * what it holds stays); -1: no memory. */
static int rx_alloc(bfo_tcp *t, tlink *l, size_t cap)
{
    rxbuf *rb;
    size_t old = l->rb ? sizeof *rb + l->rx_capl : 0;
    if (l->rb && l->rx_capl >= cap)
        return 0;
    rb = (rxbuf *)realloc(l->rb, sizeof *rb + cap);
    if (!rb)
        return -1;
    if (!l->rb) {
        memset(rb, 0, sizeof *rb);
        l->rx_len = l->rx_off = 0;
        t->nrx++;
    }
    l->rb = rb;
    l->rx = rb->data;
    l->rx_capl = cap;
    t->st.rail[l->rail].tp[BFO_TCP_RX_BUF_BYTES] += sizeof *rb + cap - old;
    t->st.rail[l->rail].tp[BFO_TCP_RX_BUF_ALLOCS]++;
    return 0;
}

/* ... given back: the connection closed, or idle with nothing in it. */
static void rx_free(bfo_tcp *t, tlink *l)
{
    if (!l->rb)
        return;
    free(l->rb);
    t->st.rail[l->rail].tp[BFO_TCP_RX_BUF_BYTES] -= sizeof(rxbuf) + l->rx_capl;
    l->rb = NULL;
    l->rx = NULL;
    l->rx_capl = 0;
    l->rx_len = l->rx_off = 0;
    l->placing = 0;
    t->nrx--;
}

/* At every read: a connection's first takes the whole buffer (it was made
 * for work); one that was idle takes RX_SMALL (what the engine's probes
 * and their answers need), and the whole once a frame that does not fit
 * comes.  -1: no memory. */
static int rx_ready(bfo_tcp *t, tlink *l)
{
    size_t need;
    if (!l->rb)
        return rx_alloc(t, l, l->rx_idled ? RX_SMALL : t->rx_cap);
    if (l->rx_capl >= t->rx_cap || l->placing || l->rx_len - l->rx_off < BFO_TCP_HDR_SIZE)
        return 0;
    need = BFO_TCP_HDR_SIZE + (size_t)bfo_get32(l->rx + l->rx_off); /* checked against max_frame by parse */
    if (need <= l->rx_capl - l->rx_off)
        return 0;
    if (need <= l->rx_capl) { /* it fits from the start */
        memmove(l->rx, l->rx + l->rx_off, l->rx_len - l->rx_off);
        l->rx_len -= l->rx_off;
        l->rx_off = 0;
        return 0;
    }
    return rx_alloc(t, l, t->rx_cap);
}

/* At most every IDLE_SCAN_NS: the buffers of connections that carried no
 * data frame either way for rx_idle (the engine's probes and their
 * answers do not count) and hold nothing go back (RECEIVE BUFFERS); a
 * small one (RX_SMALL) stays.  Nothing to do without one. */
static void rx_trim(bfo_tcp *t)
{
    if (!t->nrx || !t->rx_idle_ns || t->now - t->trim_at < IDLE_SCAN_NS)
        return;
    t->trim_at = t->now;
    for (int i = 0; i < t->nused; i++) {
        tlink *l = t->used[i];
        if (l->rb && l->rx_capl > RX_SMALL && link_up(l) && !l->c.broken && !l->placing && !l->stalled &&
            l->rx_len == l->rx_off && t->now - l->work_at >= t->rx_idle_ns) {
            rx_free(t, l);
            l->rx_idled = 1;
        }
    }
}

/* --------------------------------------------------------------- events */

static void link_reset(bfo_tcp *t, tlink *l)
{
    if (l->stalled)
        t->nstalled--;
    free(l->hs); /* a dial's handshake ends with its connection */
    l->hs = NULL;
    l->fd = -1;
    l->c.broken = l->c.malformed = l->poisoned = l->stalled = 0;
    l->peer_stalled = l->uto_off = l->zwin = 0;
    l->ka_at = 0;
    l->rx_at = l->kev_at = l->nudge_at = t->now;
    l->evmask = 0;
    l->in_epoll = 0;
    l->hot_at = 0;
    l->bseq_tx = l->bseq_rx = 0;
    l->q.head = l->q.tail = l->hole.head = l->hole.tail = -1;
    l->unsent = -1;
    l->next_seq = l->last_written = 0;
    l->ctl_len = l->ctl_off = 0;
    l->rx_len = l->rx_off = 0;
    l->rx_seq = l->ack_sent = l->rx_since = 0;
    l->rx_frames = 0;
    l->rx_bytes = 0;
    l->placing = l->pl_streak = 0;
    l->work_at = t->now;
    rx_free(t, l); /* a new connection takes a fresh one at its first read */
    l->rx_idled = 0;
}

/* The conn machine's close: the connection is torn down, then every frame
 * not acknowledged completes with ok=0 (what the engine hears, RAIL_ERROR
 * or CONNECT_FAILED, the machine reported first).  Only at safe points. */
static void link_close(bfo_tcp *t, tlink *l, const bfo_step *st, const char *why)
{
    elist dead = { -1, -1 };
    int malformed = st->event == BFO_CONN_EV_BROKEN && l->c.malformed;
    int was_up = bfo_link_state_up(st->from);
    if (l->fd < 0 && l->q.head < 0 && l->hole.head < 0) {
        l->c.broken = 0;
        return;
    }
    if (malformed) {
        t->st.rail[l->rail].malformed++;
        tlog(t, 1, "peer %d rail %d: connection dropped: %s", l->peer, l->rail, why);
    } else if (l->parted) {
        /* the peer left, or this side leaves (tcp_part): its end, closed or
         * reset, is no failure */
        tlog(t, 2, "peer %d rail %d: connection closed, parted: %s", l->peer, l->rail, why);
    } else {
        if (was_up)
            t->st.rail[l->rail].conn_errors++;
        tlog(t, was_up && st->event != BFO_CONN_EV_CONNECT_ASKED ? 1 : 2,
             "peer %d rail %d: connection closed: %s", l->peer, l->rail, why);
    }
    if (l->fd >= 0)
        close(l->fd);
    el_append(t, &dead, &l->q);
    el_append(t, &dead, &l->hole);
    link_reset(t, l);
    l->gen++;
    for (int i = el_pop(t, &dead); i >= 0; i = el_pop(t, &dead))
        complete(t, i, 0, l->rail);
}

/* A post that failed before it was written (no connection): the failed
 * list keeps its rail in seq. */
static void fail_post(void *ctx, int i)
{
    bfo_tcp *t = (bfo_tcp *)ctx;
    complete(t, i, 0, (int)t->ents[i].seq);
}

/* Called after anything that may break a connection or fail a post, so on
 * every busy poll: the usual case (nothing to do) is two tests. */
static inline void settle(bfo_tcp *t)
{
    bfo_tp_settle_p(&t->lb, (bfo_link *const *)t->used, t->nused, &t->failed, &t->ents->next, sizeof *t->ents,
                    fail_post, t->now);
}

/* ----------------------------------------------------------------- send */

void bfo_tcp_frame_header(uint8_t *h, uint32_t len, int kind, uint64_t seq, uint64_t ack)
{
    bfo_put32(h, len);
    bfo_put16(h + 4, (uint16_t)BFO_TCP_MAGIC);
    h[6] = (uint8_t)kind;
    h[7] = 0;
    bfo_put64(h + 8, seq);
    bfo_put64(h + 16, ack);
}

/* A hello, a reply (attempt: the one it answers) or a tie answer; dialed:
 * this side's last dial of the (peer, rail). */
static void put_hello(const bfo_tcp *t, uint8_t *p, int rail, uint64_t attempt, uint64_t dialed, int answer)
{
    unsigned flags = t->o.auth ? BFO_TCP_HELLO_F_AUTH : 0;
    bfo_tcp_frame_header(p, BFO_TCP_HELLO_SIZE + (flags ? BFO_TCP_HELLO_AUTH_SIZE : 0), BFO_TCP_K_HELLO, 0, 0);
    if (flags)
        memset(AUTH_AREA(p), 0, BFO_TCP_HELLO_AUTH_SIZE);
    p += BFO_TCP_HDR_SIZE;
    bfo_put32(p, BFO_TCP_HELLO_VERSION);
    bfo_put32(p + 4, (uint32_t)t->rank);
    bfo_put32(p + 8, (uint32_t)rail);
    bfo_put32(p + 12, (uint32_t)t->size);
    bfo_put64(p + 16, t->job);
    bfo_put64(p + 24, attempt);
    bfo_put64(p + 32, dialed);
    bfo_put32(p + 40, (uint32_t)answer);
    bfo_put32(p + 44, flags);
}

/* The frame's length for a hello (authenticated or not). */
static size_t hello_frame_len(const bfo_tcp *t) { return t->o.auth ? FRAME_HELLO_AUTH : FRAME_HELLO; }

/* 1 when options.auth holds the peer's public key, asking the embedding
 * layer for it (options.auth_peer) when it does not yet. */
static int auth_has_peer(bfo_tcp *t, int peer)
{
    if (bfo_auth_has_peer(t->o.auth, peer))
        return 1;
    return t->o.auth_peer && t->o.auth_peer(t->o.auth_peer_ctx, peer) == 0 && bfo_auth_has_peer(t->o.auth, peer);
}

/* The fault hook or an earlier swallowed frame: nothing goes out. */
static int swallowing(bfo_tcp *t, tlink *l)
{
    if (t->drop[l->rail])
        l->poisoned = 1;
    return l->poisoned;
}

/* A frame about to be written for the first time carries the freshest
 * cumulative ack, and the flag when this side is stalled; and gets its
 * sequence number now, not at post, since a control frame may pass the
 * frames queued before it (queue_urgent).  A number given to a frame the
 * socket then did not take is taken back (unstamp). */
static inline void stamp_ack(tlink *l, ent *en)
{
    if (!en->seq) {
        en->seq = ++l->next_seq;
        bfo_put64(en->hdr + 8, en->seq);
    }
    en->hdr[7] = l->stalled ? BFO_TCP_F_STALLED : 0;
    bfo_put64(en->hdr + 16, l->rx_seq);
    l->ack_sent = l->rx_seq;
    l->rx_frames = 0;
    l->rx_bytes = 0;
}

/* After a write: the frames stamped for it that the socket did not take
 * give their sequence numbers back (the next frame written, maybe a
 * control frame queued since, takes the next number). */
static void unstamp(bfo_tcp *t, tlink *l)
{
    int i = l->unsent;
    if (i >= 0 && t->ents[i].off) /* partly written: its number is on the wire */
        i = t->ents[i].next;
    for (; i >= 0 && t->ents[i].seq; i = t->ents[i].next)
        t->ents[i].seq = 0;
    l->next_seq = l->unsent >= 0 && t->ents[l->unsent].off ? t->ents[l->unsent].seq : l->last_written;
}

/* A rail control frame (the engine's PROBE, PROBEACK, BROKEN) on a link
 * whose unsent queue is not empty goes ahead of the data frames in it:
 * after the frame being written (never inside one) and after the control
 * frames queued before it.  Behind a burst of 100,000 small frames (4 MB
 * in user space) a heartbeat's answer came back seconds late and the probe
 * timed out.  Descriptors are named by index: to go ahead of the first
 * unsent one, the new descriptor goes right after it and the two swap
 * contents. */
static void queue_urgent(bfo_tcp *t, tlink *l, int i)
{
    int a = l->unsent;
    ent *m = t->ents;
    if (!m[a].off && !m[a].urgent) {
        ent tmp = m[a];
        int n = m[a].next;
        m[a] = m[i];
        m[a].next = i;
        m[i] = tmp;
        m[i].next = n;
        if (l->q.tail == a)
            l->q.tail = i;
        return;
    }
    while (m[a].next >= 0 && m[m[a].next].urgent)
        a = m[a].next;
    m[i].next = m[a].next;
    m[a].next = i;
    if (l->q.tail == a)
        l->q.tail = i;
}

/* A free descriptor, taken; when every one is in use (more posts in flight
 * than ever before: ENTS_FIRST), twice as many first.  Descriptors are named by index
 * everywhere (queues, the free list); no pointer to one outlives a call,
 * so they may move.  -1 (logged): none. */
static int ent_take(bfo_tcp *t)
{
    void *base = t->ents;
    int i = bfo_list_alloc(&base, &t->nents, sizeof *t->ents, offsetof(ent, next), &t->ent_free);
    t->ents = (ent *)base;
    if (i < 0)
        tlog(t, 1, "post refused: no descriptor");
    return i;
}

/* The whole of a frame is in the socket.  A rail control frame (the
 * engine's heartbeat, its answer) is no work: the beacons and the receive
 * buffer follow the data (beacon_due, rx_trim). */
static inline void frame_written(bfo_tcp *t, tlink *l, const ent *en)
{
    l->last_written = en->seq;
    if (!en->urgent)
        l->work_at = t->now;
    t->st.rail[l->rail].frames_tx++;
    t->st.rail[l->rail].bytes_tx += en->total - BFO_TCP_HDR_SIZE;
}

/* Writes what can be written now; errors mark the tlink broken. */
static void link_flush(bfo_tcp *t, tlink *l)
{
    if (l->fd < 0 || l->c.broken || l->c.fsm.cs == BFO_CONN_ST_DIALING)
        return;
    if (swallowing(t, l)) {
        while (l->unsent >= 0) { /* the rest of the queue vanishes */
            int i = l->unsent;
            l->unsent = t->ents[i].next;
            t->st.rail[l->rail].dropped_tx++;
        }
        /* unwritten entries stay in q: they complete with ok=0 at close */
        l->ctl_len = l->ctl_off = 0;
        link_events(t, l);
        return;
    }
    while (l->ctl_off < l->ctl_len || l->unsent >= 0) {
        struct iovec iov[MAX_IOV];
        struct msghdr mh;
        int n = 0, first = l->unsent;
        ssize_t w;
        size_t done;
        if (l->ctl_off < l->ctl_len) {
            iov[n].iov_base = l->ctl + l->ctl_off;
            iov[n++].iov_len = l->ctl_len - l->ctl_off;
        } else if (t->ents[l->unsent].n == 0 && t->ents[l->unsent].next < 0) {
            /* one small frame alone, a latency-bound exchange: it is in
             * its header buffer (INLINE_MAX), so no gathering */
            ent *en = &t->ents[l->unsent];
            if (en->off == 0)
                stamp_ack(l, en);
            iov[n].iov_base = en->hdr + en->off;
            iov[n++].iov_len = en->hlen - en->off;
            first = -1;
        }
        for (int i = first; i >= 0 && n + 3 <= MAX_IOV; i = t->ents[i].next) {
            ent *en = &t->ents[i];
            size_t skip = en->off;
            if (en->off == 0)
                stamp_ack(l, en);
            const void *b[3] = { en->hdr, en->base[0], en->base[1] };
            size_t len[3] = { en->hlen, en->len[0], en->len[1] };
            for (int k = 0; k < 1 + en->n; k++) {
                if (skip >= len[k]) {
                    skip -= len[k];
                    continue;
                }
                iov[n].iov_base = (void *)((uintptr_t)b[k] + skip);
                iov[n++].iov_len = len[k] - skip;
                skip = 0;
            }
            if (en->span) { /* the segments, from where the socket stopped */
                bfo_data_seg g[MAX_IOV];
                size_t got;
                int k = bfo_data_span_gather(en->span, skip, g, MAX_IOV - n, &got);
                for (int j = 0; j < k; j++) {
                    iov[n].iov_base = g[j].base;
                    iov[n++].iov_len = g[j].len;
                }
                if (got < en->span->len - skip)
                    break; /* out of pieces inside this frame: nothing after it */
            }
        }
        if (n == 1) { /* one piece (a small frame, an ack): the cheaper call */
            w = send(l->fd, iov[0].iov_base, iov[0].iov_len, MSG_NOSIGNAL | MSG_DONTWAIT);
        } else {
            memset(&mh, 0, sizeof mh);
            mh.msg_iov = iov;
            mh.msg_iovlen = (size_t)n;
            w = sendmsg(l->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
        }
        if (w > 0)
            t->st.rail[l->rail].tp[BFO_TCP_WRITES]++;
        if (w < 0) {
            unstamp(t, l);
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                bfo_link_break(&t->lb, &l->c, 0, "send: %s", strerror(errno));
            break;
        }
        done = (size_t)w;
        if (l->ctl_off < l->ctl_len) {
            size_t c = l->ctl_len - l->ctl_off;
            if (c > done)
                c = done;
            l->ctl_off += c;
            done -= c;
            if (l->ctl_off == l->ctl_len)
                l->ctl_off = l->ctl_len = 0;
        }
        while (done && l->unsent >= 0) {
            ent *en = &t->ents[l->unsent];
            size_t c = en->total - en->off;
            if (c > done)
                c = done;
            en->off += c;
            done -= c;
            if (en->off == en->total) {
                frame_written(t, l, en);
                l->unsent = en->next;
            }
        }
        unstamp(t, l);
    }
    link_events(t, l);
}

/* A standalone ACK, unless a data frame is about to carry it anyway. */
static void send_ack(bfo_tcp *t, tlink *l)
{
    if (!link_up(l) || l->rx_seq == l->ack_sent || l->c.broken)
        return;
    if (l->unsent < 0 && l->ctl_len == 0) {
        bfo_tcp_frame_header(l->ctl, 0, BFO_TCP_K_ACK, 0, l->rx_seq);
        l->ctl_len = BFO_TCP_HDR_SIZE;
        l->ctl_off = 0;
        l->ack_sent = l->rx_seq;
        l->rx_frames = 0;
        l->rx_bytes = 0;
        t->st.rail[l->rail].acks_tx++;
    }
    link_flush(t, l);
}

/* Back-pressure keepalive: a stalled receiver tells the peer, at least
 * every keepalive interval, that it is alive and stalled: an ACK with
 * BFO_TCP_F_STALLED, or, while its own data frames are queued, the flag on
 * each of them. */
static void send_keepalive(bfo_tcp *t, tlink *l)
{
    if (!link_up(l) || l->c.broken || t->now - l->ka_at < t->ka_ns)
        return;
    l->ka_at = t->now;
    if (l->unsent < 0 && l->ctl_len == 0) { /* never inside a frame being written */
        bfo_tcp_frame_header(l->ctl, 0, BFO_TCP_K_ACK, 0, l->rx_seq);
        l->ctl[7] = BFO_TCP_F_STALLED;
        l->ctl_len = BFO_TCP_HDR_SIZE;
        l->ctl_off = 0;
        l->ack_sent = l->rx_seq;
        t->st.rail[l->rail].keepalives_tx++;
    }
    link_flush(t, l);
}

/* Something goes to peer on rail: the acks owed on its other connections go
 * out now, alone (send_ack), instead of after ack_delay.  The peer is in an
 * exchange with this side and may wait for them: a blocking send striped
 * over two rails completes at the sender only once both rails' frames are
 * acknowledged, and the answer to it goes on one rail (a ping-pong of 64
 * KiB + 1 over two rails took 59 us a way, against 32 on one rail, the
 * other rail's ack waiting its 50 us).  The connection being read (parse)
 * sends its own when it is done. */
static void ack_others(bfo_tcp *t, int peer, int rail)
{
    for (int r = 0; r < t->nrails; r++) {
        tlink *o = link_find(t, peer, r);
        if (o && r != rail && o != t->taking && o->rx_seq != o->ack_sent)
            send_ack(t, o);
    }
}

/* A frame: iov[0..iovcnt) and, for described data, span's bytes after them. */
static int post_frame(bfo_tcp *t, int peer, int rail, const bfo_iov *iov, int iovcnt,
                      const bfo_data_span *span, uint64_t token)
{
    int64_t n = bfo_tp_send_len(&t->lg, t->size, t->nrails, peer, rail, iov, iovcnt, span, t->max_frame);
    tlink *l = n < 0 ? NULL : link_of(t, peer, rail);
    int i = l ? ent_take(t) : -1;
    size_t len = (size_t)n;
    ent *en;
    if (i < 0)
        return -1;
    en = &t->ents[i];
    if (len <= INLINE_MAX) { /* the engine keeps iov valid, but one piece writes faster */
        size_t o = BFO_TCP_HDR_SIZE;
        for (int k = 0; k < iovcnt; k++) {
            if (iov[k].len)
                memcpy(en->hdr + o, iov[k].base, iov[k].len);
            o += iov[k].len;
        }
        if (span)
            bfo_data_span_copy(span, 0, en->hdr + o, span->len);
        o += span ? span->len : 0;
        en->n = 0;
        en->span = NULL;
        en->hlen = o;
    } else {
        en->n = iovcnt;
        bfo_tp_pieces(iov, iovcnt, en->base, en->len);
        en->span = span;
        en->hlen = BFO_TCP_HDR_SIZE;
    }
    en->total = BFO_TCP_HDR_SIZE + len;
    en->off = 0;
    en->token = token;
    en->urgent = iov[0].len > 0 && ctl_frag(((const uint8_t *)iov[0].base)[0]);
    if (!link_up(l) || l->c.broken) {
        en->seq = (uint64_t)rail; /* the failed list keeps the rail here */
        el_push(t, &t->failed, i);
        return 0;
    }
    en->seq = 0; /* given when it is first written (stamp_ack) */
    bfo_tcp_frame_header(en->hdr, (uint32_t)len, BFO_TCP_K_DATA, 0, 0);
    if (t->nrails > 1)
        ack_others(t, peer, rail);
    if (en->urgent && l->unsent >= 0) {
        queue_urgent(t, l, i); /* en is not this frame's descriptor any more */
        if (t->taking == l)
            return 0;
        if (t->taking && t->taking->peer == peer)
            t->replied_elsewhere = 1;
        link_flush(t, l);
        return 0;
    }
    el_push(t, &l->q, i);
    if (t->taking == l) {
        /* a reply to a frame being taken: written once parse has counted
         * that frame, so it carries its ack (parse) */
        if (l->unsent < 0)
            l->unsent = i;
        return 0;
    }
    if (t->taking && t->taking->peer == peer) {
        t->replied_elsewhere = 1;
        if (en->n) { /* a piece of data: written at the end of parse (see parse) */
            if (l->unsent < 0)
                l->unsent = i;
            return 0;
        }
    }
    if (l->unsent < 0 && en->n == 0 && l->ctl_off == l->ctl_len && l->fd >= 0 &&
        !swallowing(t, l)) {
        /* Nothing waits before it and it is small (the latency-bound
         * case): written at once, the freshest ack in its header, without
         * link_flush's gathering.  What the socket does not take now is
         * left to link_flush. */
        ssize_t w;
        stamp_ack(l, en);
        w = send(l->fd, en->hdr, en->hlen, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w > 0)
            t->st.rail[l->rail].tp[BFO_TCP_WRITES]++;
        if (w == (ssize_t)en->hlen) {
            en->off = en->total;
            frame_written(t, l, en);
            return 0;
        }
        if (w > 0) {
            en->off = (size_t)w;
        } else {
            en->seq = 0; /* not on the wire: its number is given again */
            l->next_seq--;
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                bfo_link_break(&t->lb, &l->c, 0, "send: %s", strerror(errno));
        }
    }
    if (l->unsent < 0)
        l->unsent = i;
    link_flush(t, l);
    return 0;
}

static int tcp_post_send(void *ctx, int peer, int rail, const bfo_iov *iov, int iovcnt,
                         uint64_t token)
{
    return post_frame((bfo_tcp *)ctx, peer, rail, iov, iovcnt, NULL, token);
}

/* Described data as an iovec: its segments go to the socket from the
 * layer's memory (writev), no copy before it; a frame of at most
 * INLINE_MAX bytes is copied behind its header as any small frame.
 * Packed data is not taken (no BFO_CAP_SEND_PACK): the engine packs it. */
static int tcp_post_send_data(void *ctx, int peer, int rail, const bfo_iov *hdr,
                              const bfo_data_span *data, uint64_t token)
{
    if (data->d->kind == BFO_DATA_PACK)
        return -1;
    return post_frame((bfo_tcp *)ctx, peer, rail, hdr, 1, data, token);
}

/* The acks of one header: frames up to ack completed ok. */
static void take_ack(bfo_tcp *t, tlink *l, uint64_t ack)
{
    if (ack > l->last_written) {
        bfo_link_break(&t->lb, &l->c, 1, "ack %llu beyond the last frame sent (%llu)", (unsigned long long)ack,
                   (unsigned long long)l->last_written);
        return;
    }
    while (l->q.head >= 0 && l->q.head != l->unsent && t->ents[l->q.head].seq <= ack)
        complete(t, el_pop(t, &l->q), 1, l->rail);
}

/* -------------------------------------------------------------- receive */

static int hello_check(const bfo_tcp *t, const uint8_t *f, int want_rank, int want_rail,
                       char *why, size_t whylen, int *rank_out, uint64_t *attempt, uint64_t *dialed, int *answer)
{
    const uint8_t *b = f + BFO_TCP_HDR_SIZE;
    uint32_t rank = bfo_get32(b + 4), rail = bfo_get32(b + 8);
    uint32_t flags = bfo_get32(b + 44);
    if (bfo_get16(f + 4) != BFO_TCP_MAGIC || f[6] != BFO_TCP_K_HELLO || f[7] != 0 || flags > BFO_TCP_HELLO_F_AUTH ||
        bfo_get32(f) != BFO_TCP_HELLO_SIZE + (flags ? BFO_TCP_HELLO_AUTH_SIZE : 0)) {
        snprintf(why, whylen, "not a hello (magic %04x kind %u len %u)", bfo_get16(f + 4), f[6],
                 bfo_get32(f));
        return -1;
    }
    if (bfo_get32(b) != BFO_TCP_HELLO_VERSION || bfo_get32(b + 12) != (uint32_t)t->size ||
        bfo_get64(b + 16) != t->job || bfo_get32(b + 40) > BFO_TCP_A_CONFIRM) {
        snprintf(why, whylen, "hello of another job or version");
        return -1;
    }
    if (!flags != !t->o.auth) {
        snprintf(why, whylen, flags ? "an authenticated hello, and this side has no key (options.auth): "
                                      "it cannot answer it (the embedding layer passed no bfo_auth)"
                                    : "a hello that is not authenticated, and this side requires it "
                                      "(the peer was given no bfo_auth)");
        return -1;
    }
    /* whether that rank may dial this one is the conn machine's to say */
    if (rank >= (uint32_t)t->size || rank == (uint32_t)t->rank ||
        (want_rank >= 0 && rank != (uint32_t)want_rank)) {
        snprintf(why, whylen, "hello from rank %u, which may not connect here", rank);
        return -1;
    }
    if (rail != (uint32_t)want_rail) {
        snprintf(why, whylen, "hello for rail %u on rail %d", rail, want_rail);
        return -1;
    }
    *rank_out = (int)rank;
    *attempt = bfo_get64(b + 24);
    *dialed = bfo_get64(b + 32);
    *answer = (int)bfo_get32(b + 40);
    return 0;
}

/* Frames in the receive buffer, in order, until one must wait. */
/* The engine refused a frame for now (BFO_ERR_AGAIN): the link stalls
 * (BACK-PRESSURE in bfo_tcp.h) and is offered again from retry_stalled. */
static void link_stall(bfo_tcp *t, tlink *l)
{
    if (!l->stalled) {
        t->st.rail[l->rail].backpressure++;
        t->nstalled++;
    }
    l->stalled = 1;
    user_timeout_update(t, l);
    link_events(t, l);
    send_keepalive(t, l);
}

/* The engine took data frame seq (len bytes after the transport header). */
static void frame_taken(bfo_tcp *t, tlink *l, uint64_t seq, uint32_t len, int ctl)
{
    if (l->stalled) {
        l->stalled = 0;
        t->nstalled--;
        user_timeout_update(t, l);
    }
    l->hot_at = t->now;
    if (!ctl)
        l->work_at = t->now;
    if (!l->hot && t->busy && t->nhot < HOT_MAX)
        heat(t, l);
    if (l->rx_seq == l->ack_sent)
        l->rx_since = t->now;
    l->rx_seq = seq;
    l->rx_frames++;
    l->rx_bytes += len;
    t->st.rail[l->rail].frames_rx++;
    t->st.rail[l->rail].bytes_rx += len;
}

/* RECEIVING IN PLACE (bfo_sink place, place_ok, frame_placed; bfo_engine_place).
 * A data frame of at least PLACE_MIN bytes that is not all in the receive
 * buffer yet, and whose headers are: when the engine says it is a FRAG of a
 * live receive, its payload is read straight into that receive's buffer
 * (what came with the headers is copied there first), with a read of its
 * own, and the frame is handed over once it is all there
 * (frame_placed).  The receive buffer is empty meanwhile.  Before every
 * read the engine is asked whether the receive still takes bytes
 * (place_ok); once it does not (it completed through another rail, it
 * failed), the rest of the payload is read into the receive buffer and the
 * frame is dropped, acknowledged as a stale one would be.  Every other
 * rule of a data frame holds: sequence, ack, back-pressure (a placed frame
 * the engine refuses for now stays placed and is offered again).  After a
 * frame read in place, the next read takes the next frame's headers alone,
 * so that a stream of fragments is read in place nearly whole rather than
 * every other one. */
#define PLACE_MIN 16384

static void place_start(bfo_tcp *t, tlink *l)
{
    uint8_t *h = l->rx + l->rx_off;
    uint32_t len = bfo_get32(h);
    size_t have = l->rx_len - l->rx_off - BFO_TCP_HDR_SIZE, hs = 0;
    bfo_place_ticket tk;
    uint8_t *dst;
    if (!t->sink.place || len < PLACE_MIN || t->drop[l->rail] || l->poisoned || !link_up(l) ||
        bfo_get64(h + 8) != l->rx_seq + 1)
        return;
    dst = t->sink.place(t->sink.ctx, l->peer, h + BFO_TCP_HDR_SIZE, have, len, &hs, &tk);
    if (!dst || hs > BFO_MAX_HDR_SIZE || hs > have || hs >= len)
        return;
    memcpy(l->rb->pl_hdr, h, BFO_TCP_HDR_SIZE + hs);
    l->rb->pl_hlen = hs;
    l->rb->pl_len = len - hs;
    l->rb->pl_got = have - hs;
    l->rb->pl_ticket = tk;
    l->rb->pl_dst = dst;
    memcpy(dst, h + BFO_TCP_HDR_SIZE + hs, l->rb->pl_got);
    l->placing = 1;
    l->rx_off = l->rx_len = 0;
    t->st.rail[l->rail].tp[BFO_TCP_PLACED_FRAMES]++;
}

/* The frame read in place is all there: the engine takes it (0), or it
 * stalls the link or broke it (-1). */
static int place_finish(bfo_tcp *t, tlink *l)
{
    const uint8_t *h = l->rb->pl_hdr;
    uint32_t len = bfo_get32(h);
    uint64_t seq = bfo_get64(h + 8), ack = bfo_get64(h + 16);
    int rc = BFO_ERR_STALE;
    if (t->drop[l->rail] || l->poisoned) { /* the fault hook: it never came */
        l->poisoned = 1;
        t->st.rail[l->rail].dropped_rx++;
        l->placing = 0;
        return 0;
    }
    l->rx_at = t->now;
    if (l->zwin) {
        l->zwin = 0;
        user_timeout_update(t, l);
    }
    take_ack(t, l, ack); /* idempotent when the frame is offered again */
    if (l->c.broken || l->fd < 0)
        return -1;
    peer_stall(t, l, h[7] & BFO_TCP_F_STALLED);
    if (l->rb->pl_dst)
        rc = t->sink.frame_placed(t->sink.ctx, l->peer, l->rail, h + BFO_TCP_HDR_SIZE, l->rb->pl_hlen, l->rb->pl_dst,
                                  l->rb->pl_len, t->now);
    else
        t->st.rail[l->rail].tp[BFO_TCP_PLACED_DROPPED]++;
    if (rc == BFO_ERR_AGAIN) {
        link_stall(t, l);
        return -1;
    }
    if (rc != BFO_OK && rc != BFO_ERR_STALE) {
        bfo_link_break(&t->lb, &l->c, 1, "engine rejected a frame (FRAG read in place, %u bytes): %s", len, bfo_errname(rc));
        return -1;
    }
    l->placing = 0;
    l->pl_streak = 1;
    frame_taken(t, l, seq, len, 0); /* a FRAG */
    return 0;
}

static void parse_frames(bfo_tcp *t, tlink *l)
{
    if (l->placing) {
        if (l->rb->pl_got < l->rb->pl_len || place_finish(t, l) != 0)
            return;
    }
    while (!l->c.broken && l->fd >= 0 && l->rx_len - l->rx_off >= BFO_TCP_HDR_SIZE) {
        uint8_t *h = l->rx + l->rx_off;
        uint32_t len = bfo_get32(h);
        int kind = h[6];
        uint64_t seq = bfo_get64(h + 8), ack = bfo_get64(h + 16);
        if (bfo_get16(h + 4) != BFO_TCP_MAGIC || (h[7] & ~BFO_TCP_F_STALLED) ||
            (h[7] && kind == BFO_TCP_K_HELLO)) {
            bfo_link_break(&t->lb, &l->c, 1, "bad frame header (magic %04x flags %u)", bfo_get16(h + 4), h[7]);
            return;
        }
        if ((kind == BFO_TCP_K_DATA && (len == 0 || len > t->max_frame)) ||
            (kind == BFO_TCP_K_ACK && len != 0) ||
            (kind == BFO_TCP_K_HELLO && len != BFO_TCP_HELLO_SIZE + (t->o.auth ? BFO_TCP_HELLO_AUTH_SIZE : 0)) ||
            (kind != BFO_TCP_K_DATA && kind != BFO_TCP_K_ACK && kind != BFO_TCP_K_HELLO)) {
            bfo_link_break(&t->lb, &l->c, 1, "bad frame (kind %d, length %u)", kind, len);
            return;
        }
        if (l->rx_len - l->rx_off < BFO_TCP_HDR_SIZE + (size_t)len) {
            if (kind == BFO_TCP_K_DATA && l->c.fsm.cs != BFO_CONN_ST_HELLO_SENT)
                place_start(t, l);
            break;
        }
        l->pl_streak = 0;
        if (t->drop[l->rail] || l->poisoned) { /* the fault hook: it never came */
            l->poisoned = 1;
            t->st.rail[l->rail].dropped_rx++;
            l->rx_off += BFO_TCP_HDR_SIZE + len;
            continue;
        }
        if (l->c.fsm.cs == BFO_CONN_ST_HELLO_SENT) {
            char why[96];
            int rank, answer = 0;
            uint64_t attempt = 0, dialed = 0;
            if (hello_check(t, h, l->peer, l->rail, why, sizeof why, &rank, &attempt, &dialed, &answer) != 0 ||
                attempt != l->c.attempt) {
                bfo_link_break(&t->lb, &l->c, 1, "hello reply: %s",
                           attempt != l->c.attempt ? "for another attempt" : why);
                return;
            }
            if (answer == BFO_TCP_A_CONFIRM) {
                bfo_link_break(&t->lb, &l->c, 1, "hello reply: a CONFIRM where the reply belongs");
                return;
            }
            if (t->o.auth && answer == BFO_TCP_A_DIALING &&
                (!l->hs || bfo_auth_verify(t->o.auth, l->peer, TIE_LABEL, l->hs->transcript, BFO_AUTH_HELLO_LEN,
                                           AUTH_AREA(h)) != BFO_OK)) {
                bfo_link_break(&t->lb, &l->c, 1, "hello reply: \"dialing you\" that does not prove rank %d", l->peer);
                return;
            }
            if (t->o.auth && answer == BFO_TCP_A_HELLO) {
                /* the reply proves the peer (its MAC over this side's
                 * hello); this side's CONFIRM proves this side, and goes
                 * before any DATA frame (ctl is written first) */
                uint8_t *cf = l->ctl + l->ctl_len;
                if (!l->hs || bfo_auth_hs_read_reply(t->o.auth, l->hs, AUTH_AREA(h), BFO_AUTH_REPLY_LEN) != BFO_OK) {
                    bfo_link_break(&t->lb, &l->c, 1,
                                   "hello reply: does not prove rank %d (not that rank, or another job's key)", l->peer);
                    return;
                }
                if (l->ctl_len - l->ctl_off + FRAME_HELLO_AUTH > sizeof l->ctl) {
                    bfo_link_break(&t->lb, &l->c, 0, "no room for the CONFIRM");
                    return;
                }
                put_hello(t, cf, l->rail, l->c.attempt, 0, BFO_TCP_A_CONFIRM);
                bfo_auth_hs_confirm(t->o.auth, l->hs, AUTH_AREA(cf));
                l->ctl_len += FRAME_HELLO_AUTH;
                free(l->hs); /* done with: the connection is the peer's */
                l->hs = NULL;
                dialed = 0; /* not under a MAC: never raises what is stale */
            }
            l->rx_off += BFO_TCP_HDR_SIZE + len;
            if (answer == BFO_TCP_A_DIALING) { /* the peer dials this side too, and wins */
                t->st.rail[l->rail].tp[BFO_TCP_TIES_LOST]++;
                if (bfo_link_tie_lost(&t->lb, &l->c, t->now) != BFO_OK)
                    bfo_link_break(&t->lb, &l->c, 1, "hello reply: \"dialing you\" from the higher rank");
                return; /* the dial is closed */
            }
            bfo_link_reply(&t->lb, &l->c, dialed, t->now);
            if (t->o.auth)
                link_flush(t, l);
            continue;
        }
        if (kind == BFO_TCP_K_HELLO) {
            bfo_link_break(&t->lb, &l->c, 1, "hello on an established connection");
            return;
        }
        l->rx_at = t->now; /* the peer process is running */
        if (l->zwin) {
            l->zwin = 0;
            user_timeout_update(t, l);
        }
        if (kind == BFO_TCP_K_ACK) {
            if (seq != 0) {
                bfo_link_break(&t->lb, &l->c, 1, "ack frame with a sequence number");
                return;
            }
            l->rx_off += BFO_TCP_HDR_SIZE;
            take_ack(t, l, ack);
            peer_stall(t, l, h[7] & BFO_TCP_F_STALLED);
            up_heard(t, l);
            continue;
        }
        if (seq != l->rx_seq + 1) {
            bfo_link_break(&t->lb, &l->c, 1, "frame sequence %llu, expected %llu", (unsigned long long)seq,
                       (unsigned long long)(l->rx_seq + 1));
            return;
        }
        take_ack(t, l, ack); /* idempotent when the frame is offered again */
        if (l->c.broken || l->fd < 0)
            return;
        peer_stall(t, l, h[7] & BFO_TCP_F_STALLED);
        int rc = up_frame(t, l, h + BFO_TCP_HDR_SIZE, len);
        if (rc == BFO_ERR_AGAIN) {
            link_stall(t, l);
            return;
        }
        if (rc != BFO_OK && rc != BFO_ERR_STALE) {
            const char *type = bfo_frag_name(h[BFO_TCP_HDR_SIZE]);
            bfo_link_break(&t->lb, &l->c, 1, "engine rejected a frame (%s, %u bytes): %s",
                       type ? type : "unknown type", len, bfo_errname(rc));
            return;
        }
        l->rx_off += BFO_TCP_HDR_SIZE + len;
        frame_taken(t, l, seq, len, ctl_frag(h[BFO_TCP_HDR_SIZE]));
    }
    if (l->rx_off == l->rx_len && !l->placing)
        l->rx_off = l->rx_len = 0;
    if (!l->c.broken && l->fd >= 0 && link_up(l) &&
        (l->rx_frames >= t->o.ack_frames || l->rx_bytes >= t->o.ack_bytes))
        send_ack(t, l); /* the sender's pipeline waits for it */
}

/* The frames in the receive buffer go to the engine.  What the engine
 * posts on this link meanwhile (an ACK answering an RNDV, the FRAGs
 * answering an ACK, the next FRAGs a completion frees a slot for) is
 * written at the end, in one call, carrying the ack of every frame taken:
 * the sequence number a frame is acknowledged by moves only after the
 * engine has taken it, so a reply written from inside bfo_engine_frame
 * would carry the ack of the frame before, and the peer's request would
 * wait for a standalone ack (ack_delay, 50 us, and up to 20 us more: the
 * latency cliff above the eager limit, docs/engine-design.md).  When the
 * engine answered on another link of that peer, the ack of this one goes
 * out at once, alone: the peer is in an exchange and may wait for it.
 * Pieces of data (frames too large to copy inline) that it posted on the
 * peer's other links meanwhile are written at the end as well, one call
 * per link: written as each was posted, a stream striped over two
 * loopback rails made 65,000 sendmsg calls where one rail made 18,283
 * (the acks of one rail free the pieces of both) and carried 0.8 of one
 * rail; 20,683 calls after. */
static void parse(bfo_tcp *t, tlink *l)
{
    tlink *outer = t->taking;
    int outer_replied = t->replied_elsewhere;
    t->taking = l;
    t->replied_elsewhere = 0;
    parse_frames(t, l);
    t->taking = outer;
    if (t->replied_elsewhere) /* the peer's other links: what post_frame left queued */
        for (int r = 0; r < t->nrails; r++) {
            tlink *o = link_find(t, l->peer, r);
            if (o && o != l && o != outer && o->unsent >= 0)
                link_flush(t, o);
        }
    if (l->fd >= 0 && !l->c.broken) {
        if (t->replied_elsewhere && l->unsent < 0)
            send_ack(t, l);
        else if (l->unsent >= 0)
            link_flush(t, l);
    }
    t->replied_elsewhere = outer_replied;
}

static void link_read(bfo_tcp *t, tlink *l)
{
    for (int round = 0; round < 8 && l->fd >= 0 && !l->c.broken && !l->stalled; round++) {
        size_t space;
        ssize_t n;
        uint8_t *into;
        if (rx_ready(t, l) != 0) {
            bfo_link_break(&t->lb, &l->c, 0, "no memory for a receive buffer (%zu bytes)", t->rx_cap);
            return;
        }
        if (l->placing) { /* RECEIVING IN PLACE */
            space = l->rb->pl_len - l->rb->pl_got;
            if (l->rb->pl_dst && !t->sink.place_ok(t->sink.ctx, l->rb->pl_ticket))
                l->rb->pl_dst = NULL; /* the receive is gone: the rest is dropped */
            if (l->rb->pl_dst)
                into = l->rb->pl_dst + l->rb->pl_got;
            else {
                into = l->rx;
                if (space > l->rx_capl)
                    space = l->rx_capl;
            }
        } else {
            if (l->rx_off && l->rx_capl - l->rx_len < BFO_TCP_HDR_SIZE + t->max_frame) {
                memmove(l->rx, l->rx + l->rx_off, l->rx_len - l->rx_off);
                l->rx_len -= l->rx_off;
                l->rx_off = 0;
            }
            space = l->rx_capl - l->rx_len;
            if (l->pl_streak && l->rx_len == l->rx_off && space > BFO_TCP_HDR_SIZE + BFO_MAX_HDR_SIZE)
                space = BFO_TCP_HDR_SIZE + BFO_MAX_HDR_SIZE; /* the next frame's headers alone */
            into = l->rx + l->rx_len;
        }
        n = read(l->fd, into, space);
        if (n == 0) {
            if (l->placing || l->rx_len > l->rx_off)
                bfo_link_break(&t->lb, &l->c, 1, "connection closed inside a frame (%zu bytes of it)",
                           l->placing ? BFO_TCP_HDR_SIZE + l->rb->pl_hlen + l->rb->pl_got : l->rx_len - l->rx_off);
            else
                bfo_link_break(&t->lb, &l->c, 0, "closed by the peer");
            return;
        }
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                bfo_link_break(&t->lb, &l->c, 0, "receive: %s", strerror(errno));
            return;
        }
        t->st.rail[l->rail].tp[BFO_TCP_READS]++;
        if (l->placing)
            l->rb->pl_got += (size_t)n;
        else
            l->rx_len += (size_t)n;
        /* The clock moves on as the frames are taken: those at the end of
         * a long read, stamped with the progress call's start, would tell
         * the engine that the peer was last heard that long ago (and a
         * probe out meanwhile times out at the timers of this very call). */
        t->unclocked += (size_t)n;
        if (round || t->unclocked > CLOCK_AFTER_BYTES) {
            t->now = bfo_tp_now();
            t->unclocked = 0;
        }
        parse(t, l);
        if ((size_t)n < space)
            return;
    }
}

static void retry_stalled(bfo_tcp *t)
{
    for (int i = 0; i < t->nused; i++) {
        tlink *l = t->used[i];
        if (!l->stalled || l->fd < 0)
            continue;
        parse(t, l);
        if (!l->stalled)
            link_events(t, l);
        else
            send_keepalive(t, l);
    }
}

/* ----------------------------------------------------------- connecting */

static void start_conn(bfo_tcp *t, tlink *l, int fd)
{
    struct epoll_event ev;
    link_reset(t, l);
    l->gen++;
    l->fd = fd;
    ev.events = EPOLLIN | EPOLLOUT;
    ev.data.u64 = bfo_tp_tag(EV_LINK, l->gen, l->idx);
    l->evmask = ev.events;
    l->in_epoll = 1;
    if (epoll_ctl(t->ep, EPOLL_CTL_ADD, fd, &ev) != 0)
        bfo_link_break(&t->lb, &l->c, 0, "epoll: %s", strerror(errno));
}

/* The conn machine's dial (bfo_link_feed numbered the attempt and armed
 * the deadline): DIAL_FAILED when it cannot even start. */
static int dial(bfo_tcp *t, tlink *l)
{
    char a[80];
    bfo_addr pa;
    struct sockaddr_storage them;
    const struct sockaddr_storage *me = &t->sa[l->rail];
    int fd = -1;
    uint16_t uport;
    if (t->o.auth && !auth_has_peer(t, l->peer)) {
        tlog(t, 1, "peer %d rail %d: its public key is not known (bfo_auth_set_peer; options.auth_peer could not "
                   "give it): no dial", l->peer, l->rail);
        return BFO_CONN_EV_DIAL_FAILED;
    }
    if (!t->sink.lookup || t->sink.lookup(t->sink.ctx, l->peer, l->rail, &pa) != BFO_OK ||
        addr_get(&pa, &them, &uport) != 0 || them.ss_family != me->ss_family) {
        tlog(t, 1, "peer %d rail %d: the peer published no %s address for this rail", l->peer, l->rail,
             me->ss_family == AF_INET6 ? "IPv6" : "IPv4");
        return BFO_CONN_EV_DIAL_FAILED;
    }
    beacon_open(t, l->rail); /* before the hello: the peer may beacon once it has the CONFIRM */
    fd = socket(me->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        tlog(t, 1, "socket: %s", strerror(errno));
        return BFO_CONN_EV_DIAL_FAILED;
    }
    sock_opts(t, fd);
    start_conn(t, l, fd);
    tlog(t, 3, "peer %d rail %d: dialing %s (attempt %llu)", l->peer, l->rail, sastr(&them, a, sizeof a),
         (unsigned long long)l->c.attempt);
    if (bind(fd, (const struct sockaddr *)me, sa_len(me)) != 0)
        bfo_link_break(&t->lb, &l->c, 0, "bind: %s", strerror(errno));
    else if (connect(fd, (struct sockaddr *)&them, sa_len(&them)) != 0 && errno != EINPROGRESS)
        bfo_link_break(&t->lb, &l->c, 0, "connect: %s", strerror(errno));
    return 0;
}

/* A dialer waiting for the reply (HELLO_SENT) keeps TCP keepalives on its
 * connection (1 s idle, 1 s apart): the peer's kernel answers them while
 * its process computes, which hello_heard reads; a host that died after
 * accepting leaves them unanswered, and TCP_USER_TIMEOUT (set on every
 * connection) then fails it.  Off once the connection is up: the engine's
 * probes and the beacons take over. */
static void hello_keepalive(bfo_tcp *t, tlink *l, int on)
{
    int one = 1;
    (void)t;
    if (l->fd < 0)
        return;
    setsockopt(l->fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
    if (on) {
        setsockopt(l->fd, IPPROTO_TCP, TCP_KEEPIDLE, &one, sizeof one);
        setsockopt(l->fd, IPPROTO_TCP, TCP_KEEPINTVL, &one, sizeof one);
    }
}

/* A dialer waiting for the reply on a connection whose peer's kernel
 * answers (TCP_INFO: nothing unacknowledged, no keepalive or window probe
 * out): the peer's host answers, its process may be computing; the engine
 * hears the peer on the rail (bfo_engine_rail_heard), at most every
 * HELLO_HEARD_EVERY_NS, so it does not give the peer up meanwhile.  The
 * fault hook's rails give no evidence. */
static void hello_heard(bfo_tcp *t)
{
    for (int i = 0; i < t->nused; i++) {
        tlink *l = t->used[i];
        struct tcp_info ti;
        socklen_t tl = sizeof ti;
        if (!bfo_link_waits_on_host(&t->lb, &l->c) || l->fd < 0 || l->poisoned || t->drop[l->rail] ||
            t->now - l->kev_at < HELLO_HEARD_EVERY_NS)
            continue;
        l->kev_at = t->now;
        memset(&ti, 0, sizeof ti);
        if (getsockopt(l->fd, IPPROTO_TCP, TCP_INFO, &ti, &tl) != 0)
            continue;
        tlog(t, 3, "peer %d rail %d: waiting for the hello reply; kernel: unacked %u, probes %u, last ack %u ms ago",
             l->peer, l->rail, ti.tcpi_unacked, ti.tcpi_probes, ti.tcpi_last_ack_recv);
        if (ti.tcpi_unacked == 0 && ti.tcpi_probes == 0) {
            t->st.rail[l->rail].tp[BFO_TCP_HELLO_HEARD]++;
            up_heard(t, l);
        }
    }
}

static void dialed(bfo_tcp *t, tlink *l)
{
    int err = 0;
    socklen_t el = sizeof err;
    if (getsockopt(l->fd, SOL_SOCKET, SO_ERROR, &err, &el) != 0)
        err = errno;
    if (err) {
        bfo_link_break(&t->lb, &l->c, 0, "connect: %s", strerror(err));
        return;
    }
    bfo_link_feed(&t->lb, &l->c, BFO_CONN_EV_DIAL_CONNECTED, NULL, t->now);
}

static int tcp_connect(void *ctx, int peer, int rail)
{
    tlink *l = pair_link((bfo_tcp *)ctx, peer, rail);
    if (l) /* fed at the next progress */
        bfo_link_ask(&((bfo_tcp *)ctx)->lb, &l->c);
    return l ? 0 : -1;
}

/* The engine mapped the rail out: the connection is dropped at the next
 * safe point, and what is in flight on it completes with ok=0 then (not at
 * the reconnect, after the back-off). */
static void tcp_disconnect(void *ctx, int peer, int rail)
{
    bfo_tcp *t = (bfo_tcp *)ctx;
    tlink *l = bfo_tp_pair_ok(t->rank, t->size, t->nrails, peer, rail) ? link_find(t, peer, rail) : NULL;
    if (l && l->fd >= 0 && !l->c.broken) /* none made: no connection to drop */
        bfo_link_break(&t->lb, &l->c, 0, "the engine mapped the rail out");
}

/* The peer said goodbye, or this side leaves: the connection stays (a
 * BYE may be on it, the peer acknowledges it), and its end, when the peer
 * closes it, is logged only at level 2 and not counted as lost. */
static void tcp_part(void *ctx, int peer, int rail)
{
    tlink *l = pair_link((bfo_tcp *)ctx, peer, rail);
    if (l)
        l->parted = 1;
}

/* connect() requests, fed to the conn machine: it dials, waits for the
 * peer's dial, or lets the connection being made answer. */
static void handle_connects(bfo_tcp *t)
{
    bfo_link_asked_all_p(&t->lb, (bfo_link *const *)t->used, t->nused, t->now);
}

static pend *pend_at(bfo_tcp *t, int k) { return (pend *)(void *)bfo_tp_pend_at(&t->pends, k); }

/* An accepted connection closed; why: it sent what is not a hello (NULL:
 * it just went, or the hook swallowed it). */
static void pend_close(bfo_tcp *t, pend *p, const char *why)
{
    if (why) {
        t->st.hellos_rejected++;
        t->st.rail[p->a.rail].hellos_rejected++;
        t->st.rail[p->a.rail].malformed++;
        tlog(t, 1, "rail %d: incoming connection dropped: %s", p->a.rail, why);
    }
    bfo_tp_pend_close(&t->pends, &p->a);
    free(p->pr);
    p->pr = NULL;
}

static void do_accept(bfo_tcp *t, int rail)
{
    int k;
    while ((k = bfo_tp_accept(&t->pends, &t->lg, t->lfd[rail], rail, t->now)) >= 0) {
        sock_opts(t, pend_at(t, k)->a.fd);
        pend_at(t, k)->got = 0;
        beacon_open(t, rail); /* before the reply: the dialer may beacon once it has it */
    }
}

/* A challenged connection whose CONFIRM is late: its dialer may compute
 * (its hello went, then it made no progress call), as a dialer's wait for
 * the reply allows (CONNECTIONS in bfo_tcp.h).  While its kernel has
 * acknowledged the reply (nothing unacknowledged, the connection
 * established) the wait goes on, up to PROOF_WAIT_MAX_NS after the
 * challenge: a slot held that long at most, by a peer or by anyone. */
static int proof_host_answers(const bfo_tcp *t, const pend *p)
{
    struct tcp_info ti;
    socklen_t tl = sizeof ti;
    memset(&ti, 0, sizeof ti);
    if (t->now - p->pr->challenged_at >= PROOF_WAIT_MAX_NS || t->drop[p->a.rail] ||
        getsockopt(p->a.fd, IPPROTO_TCP, TCP_INFO, &ti, &tl) != 0)
        return 0;
    return ti.tcpi_state == TCP_ESTABLISHED && ti.tcpi_unacked == 0;
}

/* A challenged connection's answer (stage 1): its dialer's CONFIRM, or
 * nothing (ok 0, why: what came instead; NULL: it closed, as a loser of a
 * tie does).  The conn machine takes it (PROOF_RCVD: take) or refuses it
 * (PROOF_BAD_RCVD, or a newer attempt proven meanwhile: refuse). */
static void pend_proof(bfo_tcp *t, pend *p, int ok, const char *why)
{
    tlink *l = link_of(t, p->pr->peer, p->a.rail); /* made by the claim */
    p->pr->why = ok ? NULL : why;
    if (!l)
        pend_close(t, p, "no memory for its link");
    else
        bfo_link_proof(&t->lb, &l->c, ok, p->pr->attempt, p, t->now);
}

/* An accepted connection's hello: it becomes the rail's connection (not
 * authenticated), or is challenged and, proven, becomes it (options.auth). */
static void pend_read(bfo_tcp *t, pend *p)
{
    char why[160];
    int rank, answer, stage = pend_stage(p);
    uint64_t attempt, dialed;
    uint8_t *buf;
    tlink *l;
    int r;
    for (;;) {
        size_t want;
        if (t->o.auth && !p->pr && p->got >= BFO_TCP_HDR_SIZE && bfo_get16(p->buf + 4) == BFO_TCP_MAGIC &&
            bfo_get32(p->buf) == BFO_TCP_HELLO_SIZE + BFO_TCP_HELLO_AUTH_SIZE) {
            if (!(p->pr = (proof *)calloc(1, sizeof *p->pr))) {
                pend_close(t, p, "no memory for its handshake");
                return;
            }
            memcpy(p->pr->buf, p->buf, p->got);
        }
        want = p->pr ? FRAME_HELLO_AUTH : FRAME_HELLO;
        if (p->got >= want) {
            r = 1;
            break;
        }
        r = bfo_tp_read_hello(p->a.fd, p->pr ? p->pr->buf : p->buf, &p->got, want);
        if (r != 1)
            break;
    }
    buf = p->pr ? p->pr->buf : p->buf;
    if (r < 0) {
        if (stage == 1)
            pend_proof(t, p, 0, p->got ? "closed inside its CONFIRM" : NULL);
        else
            pend_close(t, p, r == BFO_TP_EOF && p->got ? "closed inside its hello" : NULL);
        return;
    }
    if (p->got >= BFO_TCP_HDR_SIZE && bfo_get16(buf + 4) != BFO_TCP_MAGIC) {
        if (stage == 1)
            pend_proof(t, p, 0, "not a CONFIRM (bad magic)");
        else
            pend_close(t, p, "not a hello (bad magic)");
        return;
    }
    if (r != 1)
        return; /* more to come */
    if (t->drop[p->a.rail]) { /* the fault hook: the hello never came */
        t->st.rail[p->a.rail].dropped_rx++;
        if (stage == 1)
            pend_proof(t, p, 0, NULL);
        else
            pend_close(t, p, NULL);
        return;
    }
    int bad = hello_check(t, buf, stage == 1 ? p->pr->peer : -1, p->a.rail, why, sizeof why, &rank, &attempt,
                          &dialed, &answer) != 0;
    if (stage == 1) {
        /* the CONFIRM: the dialer holds the pair key and saw this side's
         * fresh nonce (a replayed CONFIRM carries another's) */
        if (bad || answer != BFO_TCP_A_CONFIRM || attempt != p->pr->attempt)
            pend_proof(t, p, 0, bad ? "not a CONFIRM" : "a hello frame where its CONFIRM belongs");
        else if (bfo_auth_hs_read_confirm(t->o.auth, &p->pr->hs, AUTH_AREA(buf), BFO_AUTH_CONFIRM_LEN) != BFO_OK)
            pend_proof(t, p, 0, "a CONFIRM that does not prove its rank (an impostor, a replay, or another job's key)");
        else
            pend_proof(t, p, 1, NULL);
        return;
    }
    if (bad || answer != BFO_TCP_A_HELLO) { /* a refused hello's answer field is not read: say why it was */
        pend_close(t, p, bad ? why : "an answer where a hello belongs");
        return;
    }
    if (t->o.auth) {
        int hp, hr;
        uint32_t ha;
        if (!auth_has_peer(t, rank)) {
            snprintf(why, sizeof why,
                     "a hello from rank %d, whose public key this side does not know (bfo_auth_set_peer; "
                     "options.auth_peer could not give it): refused, its engine dials again", rank);
            pend_close(t, p, why);
            return;
        }
        if (!p->pr || bfo_auth_hs_read_hello(t->o.auth, &p->pr->hs, AUTH_AREA(buf), BFO_AUTH_HELLO_LEN, &hp, &hr,
                                             &ha) != BFO_OK ||
            hp != rank || hr != p->a.rail || (uint64_t)ha != attempt) {
            pend_close(t, p, "a hello whose handshake does not match it (rank, rail, attempt, size or job)");
            return;
        }
        /* a claim: challenged (the handshake's reply on this connection)
         * or told "dialing you"; taken only at its proof */
        p->pr->peer = rank;
        p->pr->attempt = attempt;
        if (!(l = link_of(t, rank, p->a.rail)))
            pend_close(t, p, "no memory for its link");
        else
            bfo_link_claim(&t->lb, &l->c, attempt, p, t->now);
        return;
    }
    /* the conn machine takes it (tcp_act: take, send_reply), or refuses it:
     * a stale attempt (refuse), or a tie this side's dial wins (refuse_tie);
     * the peer's first hello makes the link (MEMORY) */
    if (!(l = link_of(t, rank, p->a.rail)))
        pend_close(t, p, "no memory for its link");
    else
        bfo_link_hello(&t->lb, &l->c, attempt, p, t->now);
}

/* The conn machine's send_reply to a claim (an authenticated hello not
 * proven yet, options.auth): the handshake's reply on its own connection,
 * held aside (stage 1) until its dialer's CONFIRM; whatever the link holds
 * stays.  The socket is fresh, its buffer empty: the reply fits. */
static int challenge(bfo_tcp *t, tlink *l, bfo_link *c, pend *p)
{
    uint8_t a[FRAME_HELLO_AUTH];
    put_hello(t, a, p->a.rail, c->offered, 0, BFO_TCP_A_HELLO);
    if (bfo_auth_hs_reply(t->o.auth, &p->pr->hs, AUTH_AREA(a)) != BFO_OK ||
        send(p->a.fd, a, sizeof a, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)sizeof a) {
        tlog(t, 2, "peer %d rail %d: the handshake's reply did not go: %s", l->peer, p->a.rail, strerror(errno));
        pend_close(t, p, NULL);
        return 0;
    }
    p->pr->stage = 1;
    p->got = 0;
    p->pr->challenged_at = t->now;
    p->a.deadline = t->now + t->pends.timeout_ns;
    tlog(t, 3, "peer %d rail %d: hello %llu challenged", l->peer, p->a.rail, (unsigned long long)c->offered);
    return 0;
}

/* The conn machine's actions (bfo_link.h): the connection of link c. */
static int tcp_act(bfo_link_binding *b, bfo_link *c, int action, const bfo_step *st, void *arg)
{
    bfo_tcp *t = (bfo_tcp *)b->ctx;
    tlink *l = (tlink *)(void *)c; /* c is its first member */
    pend *p = (pend *)arg;         /* take, send_reply, refuse: the accepted connection */
    switch ((enum bfo_conn_action)action) {
    case BFO_CONN_ACT_DIAL:
        return dial(t, l);
    case BFO_CONN_ACT_SEND_HELLO:
        put_hello(t, l->ctl, l->rail, c->attempt, c->dialed, BFO_TCP_A_HELLO);
        if (t->o.auth && !l->hs && !(l->hs = (bfo_auth_hs *)malloc(sizeof *l->hs))) {
            bfo_link_break(&t->lb, c, 0, "no memory for the handshake");
            return 0;
        }
        if (t->o.auth && (c->attempt > UINT32_MAX ||
                          bfo_auth_hs_hello(t->o.auth, l->hs, l->peer, l->rail, (uint32_t)c->attempt,
                                            AUTH_AREA(l->ctl)) != BFO_OK)) {
            bfo_link_break(&t->lb, c, 0, "no handshake for rank %d (its public key is gone?)", l->peer);
            return 0;
        }
        l->ctl_len = hello_frame_len(t);
        l->ctl_off = 0;
        hello_keepalive(t, l, 1);
        link_flush(t, l);
        return 0;
    case BFO_CONN_ACT_WAIT: /* for the peer's dial (the deadline is armed) */
        return 0;
    case BFO_CONN_ACT_TAKE: {
        int fd = p->a.fd;
        p->a.fd = -1;
        free(p->pr); /* proven (or not authenticated): its handshake is done */
        p->pr = NULL;
        epoll_ctl(t->ep, EPOLL_CTL_DEL, fd, NULL); /* it comes back as the link's */
        start_conn(t, l, fd);
        return 0;
    }
    case BFO_CONN_ACT_SEND_REPLY:
        if (st->event == BFO_CONN_EV_LOWER_CLAIM_RCVD || st->event == BFO_CONN_EV_HIGHER_CLAIM_RCVD)
            return challenge(t, l, c, p);
        put_hello(t, l->ctl, l->rail, c->attempt, c->dialed, BFO_TCP_A_HELLO);
        l->ctl_len = FRAME_HELLO;
        link_flush(t, l);
        return BFO_CONN_EV_PEER_READY; /* frames follow the reply in order */
    case BFO_CONN_ACT_REFUSE:
        if (st->event == BFO_CONN_EV_PROOF_BAD_RCVD) {
            pend_close(t, p, p->pr ? p->pr->why : NULL); /* logged with why, counted (hellos_rejected) */
            return 0;
        }
        /* a dial the peer gave up (read late, behind a newer one):
         * refused, so it never replaces the newer connection */
        t->st.hellos_stale++;
        t->st.rail[p->a.rail].hellos_stale++;
        tlog(t, 2, "peer %d rail %d: a stale hello (attempt %llu, %llu taken) refused", l->peer,
             p->a.rail, (unsigned long long)c->offered, (unsigned long long)c->taken);
        pend_close(t, p, NULL);
        return 0;
    case BFO_CONN_ACT_REFUSE_TIE: {
        /* both dial: this side's (the lower rank's) wins; the answer tells
         * the peer to wait for it rather than fail.  The socket is fresh,
         * its buffer empty: the answer fits; lost, the peer's dial fails
         * and its engine retries, as before. */
        uint8_t a[FRAME_HELLO_AUTH];
        size_t alen = hello_frame_len(t);
        put_hello(t, a, p->a.rail, c->offered, c->dialed, BFO_TCP_A_DIALING);
        if (t->o.auth) /* proves this side: the dialer waits for it then */
            bfo_auth_mac(t->o.auth, l->peer, TIE_LABEL, p->pr->hs.transcript, BFO_AUTH_HELLO_LEN, AUTH_AREA(a));
        if (send(p->a.fd, a, alen, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)alen)
            tlog(t, 2, "peer %d rail %d: the tie answer did not go: %s", l->peer, p->a.rail, strerror(errno));
        t->st.rail[p->a.rail].tp[BFO_TCP_TIES_WON]++;
        tlog(t, 3, "peer %d rail %d: both dial: this side's dial wins (its hello %llu answered \"dialing you\")",
             l->peer, p->a.rail, (unsigned long long)c->offered);
        pend_close(t, p, NULL);
        return 0;
    }
    case BFO_CONN_ACT_REPORT_UP:
        hello_keepalive(t, l, 0);
        t->st.rail[l->rail].connects++;
        /* proven both ways (authenticated): the engine admits the rail
         * at once, and the dialer's frames may follow its CONFIRM */
        bfo_tp_emit(&t->lg, &t->sink, l->peer, l->rail, bfo_tp_up_event(t->o.auth != NULL, st), t->now);
        return 0;
    case BFO_CONN_ACT_REPORT_FAILED:
    case BFO_CONN_ACT_REPORT_ERROR:
        t->st.rail[l->rail].connect_failures += (uint64_t)bfo_tp_report_down(&t->lg, &t->sink, c, action, st, arg, t->now); /* a failed connect counted */
        return 0;
    case BFO_CONN_ACT_CLOSE:
        link_close(t, l, st, bfo_link_why(st, arg));
        return 0;
    }
    return 0;
}

/* The peer's kernel as a witness (docs/engine-design.md, "The failure
 * detector").  A link that waits on the peer (frames written and not
 * acknowledged by the peer process) while the peer process has sent nothing
 * for the keepalive interval: the peer may be computing, not calling into
 * bfo.  Its kernel still acknowledges every TCP segment, and TCP_INFO
 * tells when the last acknowledgement came (tcpi_last_ack_recv) and
 * whether anything sent is still unacknowledged (tcpi_unacked).  So:
 *   - the time of the last acknowledgement goes to the engine as the
 *     peer's host heard on the rail (bfo_engine_host_heard): while the
 *     peer's process is silent on every rail, that keeps the engine's
 *     probe waiting, up to host_timeout after it;
 *   - to keep that evidence fresh while nothing else is sent, a nudge: a
 *     standalone ACK frame (24 bytes), when every byte sent is acknowledged
 *     and at most one per keepalive interval; the peer's kernel
 *     acknowledges it (delayed ACK: up to 200 ms later) and its process
 *     reads and ignores it when it comes back (about 20 nudges a second:
 *     30 KB queued at the peer after a minute);
 *   - a blackholed rail: bytes stay unacknowledged, the last
 *     acknowledgement ages, and the probe times out host_timeout after it
 *     (at once when the peer's process is heard on another rail: then it
 *     is not busy, and the rail is);
 *   - the peer's window closed (its socket buffer full: bytes queued,
 *     nothing in flight): its kernel answers the window probes, which
 *     back off (0.2 s doubling); while the last was answered (tcpi_probes
 *     0), or one probe is out within ZWIN_WITHHELD_NS of the last answer
 *     (its answer may be rate-limited away), the host is heard now, and
 *     TCP_USER_TIMEOUT is off (the kernel
 *     would otherwise abort a window closed that long even though every
 *     probe is answered); a rail that dies then is found at the second
 *     window probe unanswered, or 2 s after the last answer, whichever
 *     is later.
 * The fault hook's rails give no evidence: a cut cable has no kernel
 * behind it. */
static void kernel_evidence(bfo_tcp *t)
{
    for (int i = 0; i < t->nused; i++) {
        tlink *l = t->used[i];
        struct tcp_info ti;
        socklen_t tl = sizeof ti;
        int outq = 0;
        uint64_t age;
        if (!link_up(l) || l->c.broken || l->fd < 0 || l->poisoned || t->drop[l->rail] ||
            l->q.head < 0 || t->now - l->rx_at < t->ka_ns || t->now - l->kev_at < KEV_EVERY_NS)
            continue;
        l->kev_at = t->now;
        memset(&ti, 0, sizeof ti);
        if (getsockopt(l->fd, IPPROTO_TCP, TCP_INFO, &ti, &tl) != 0 || ioctl(l->fd, TIOCOUTQ, &outq) != 0)
            continue;
        age = (uint64_t)ti.tcpi_last_ack_recv * 1000000ull;
        if (age > t->now)
            age = t->now;
        tlog(t, 3, "peer %d rail %d: process silent %.1f ms; kernel: queued %d, unacked %u, window probes %u, "
             "last ack %u ms ago", l->peer, l->rail, (double)(t->now - l->rx_at) / 1e6, outq,
             ti.tcpi_unacked, ti.tcpi_probes, ti.tcpi_last_ack_recv);
        if (outq > 0 && ti.tcpi_unacked == 0) { /* the peer's window is closed */
            if (!l->zwin) {
                l->zwin = 1;
                user_timeout_update(t, l);
            }
            /* the last window probe answered, or one whose answer the
             * peer's kernel may be withholding (ZWIN_WITHHELD_NS) */
            up_host(t, l, ti.tcpi_probes == 0 || (ti.tcpi_probes == 1 && age < ZWIN_WITHHELD_NS) ? t->now
                                                                                                 : t->now - age);
            continue;
        }
        if (l->zwin) {
            l->zwin = 0;
            user_timeout_update(t, l);
        }
        up_host(t, l, t->now - age);
        if (ti.tcpi_unacked == 0 && outq == 0 && l->unsent < 0 && l->ctl_len == 0 &&
            t->now - l->nudge_at >= t->ka_ns) {
            l->nudge_at = t->now;
            bfo_tcp_frame_header(l->ctl, 0, BFO_TCP_K_ACK, 0, l->rx_seq);
            l->ctl[7] = l->stalled ? BFO_TCP_F_STALLED : 0;
            l->ctl_len = BFO_TCP_HDR_SIZE;
            l->ctl_off = 0;
            l->ack_sent = l->rx_seq;
            l->rx_frames = 0;
            l->rx_bytes = 0;
            t->st.rail[l->rail].nudges_tx++;
            link_flush(t, l);
        }
    }
}

/* ---------------------------------------------------------------- beacons
 *
 * BEACONS (bfo_tcp.h): every beacon interval, a datagram from each rail's
 * UDP socket to each peer whose connection on that rail is up, outside the
 * connection's byte stream (nothing queued holds it back, no lost segment
 * stalls it); a beacon that names a live connection and comes from the
 * peer's published beacon address is reported as heard on the rail, as an
 * ACK frame is.  Sent only from bfo_tcp_progress: a process that makes no
 * progress call sends none (its host vouches for it, kernel_evidence). */

void bfo_tcp_beacon_put(uint8_t *b, int rank, int rail, uint64_t job, uint64_t attempt, uint64_t seq)
{
    memset(b + BFO_TCP_BEACON_BODY, 0, BFO_TCP_BEACON_SIZE - BFO_TCP_BEACON_BODY);
    bfo_put16(b, (uint16_t)BFO_TCP_BEACON_MAGIC);
    b[2] = BFO_TCP_BEACON_VERSION;
    b[3] = 0;
    bfo_put32(b + 4, (uint32_t)rank);
    bfo_put32(b + 8, (uint32_t)rail);
    bfo_put32(b + 12, 0);
    bfo_put64(b + 16, job);
    bfo_put64(b + 24, attempt);
    bfo_put64(b + 32, seq);
}

/* The peer's beacon address for link l (looked up once: a card does not
 * change), or NULL when it published none (a peer from before beacons, or
 * with them off). */
static const struct sockaddr_storage *beacon_peer(bfo_tcp *t, tlink *l)
{
    bfo_addr pa;
    struct sockaddr_storage a;
    uint16_t uport;
    if (l->bto_ok)
        return l->bto_ok > 0 ? (const struct sockaddr_storage *)(const void *)&l->bto : NULL;
    if (!t->sink.lookup || t->sink.lookup(t->sink.ctx, l->peer, l->rail, &pa) != BFO_OK)
        return NULL; /* not known yet: asked again at the next beacon */
    if (addr_get(&pa, &a, &uport) != 0 || !uport || a.ss_family != t->sa[l->rail].ss_family) {
        l->bto_ok = -1;
        tlog(t, 2, "peer %d rail %d: the peer published no beacon address: no beacons to it", l->peer, l->rail);
        return NULL;
    }
    if (a.ss_family == AF_INET6) {
        memcpy(&l->bto.v6, &a, sizeof l->bto.v6);
        l->bto.v6.sin6_port = htons(uport);
    } else {
        memcpy(&l->bto.v4, &a, sizeof l->bto.v4);
        l->bto.v4.sin_port = htons(uport);
    }
    l->bto_ok = 1;
    return (const struct sockaddr_storage *)(const void *)&l->bto;
}

static void set_port(struct sockaddr_storage *sa, int port);

/* BEACONS: the rail's UDP socket, opened when the rail first needs it
 * (ulazy): a dial or an accepted connection on the rail, before this
 * side's first hello frame leaves, so that no peer can send it a beacon
 * before it is open (the peer beacons only over a connection up, and
 * that takes this side's hello, reply or CONFIRM).  It binds the port
 * published at open, the listener's number (TCP's and UDP's ports are
 * apart: the job's listeners on one address have distinct numbers, so
 * do their beacon sockets); another socket may hold it meanwhile (a
 * program's UDP socket on that port): then the peers' beacons to this
 * rank on the rail go elsewhere, and the engine's probes alone prove the
 * peers, as on a rail without beacons.  Not silent: said at level 1 and
 * counted (beacon_binds_failed), and tried again every UDP_RETRY_NS while
 * the rail has a connection. */
static void beacon_open(bfo_tcp *t, int r)
{
    struct sockaddr_storage ua = t->lsa[r];
    socklen_t ul = sa_len(&ua);
    int fd, e = 0;
    char b[80];
    t->uwant[r] = 1;
    if (!t->ulazy[r] || t->ufd[r] >= 0 || (t->utry_at[r] && t->now - t->utry_at[r] < UDP_RETRY_NS))
        return;
    set_port(&ua, t->uport[r]);
    fd = socket(ua.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&ua, ul) != 0 ||
        bfo_tp_watch(t->ep, fd, EPOLLIN, bfo_tp_tag(EV_BEACON, 0, r)) != 0) {
        e = errno;
        if (fd >= 0)
            close(fd);
        t->st.rail[r].tp[BFO_TCP_BEACON_BINDS_FAILED]++;
        tlog(t, t->st.rail[r].tp[BFO_TCP_BEACON_BINDS_FAILED] == 1 ? 1 : 2,
             "rail %d: the beacons' port %s (published) cannot be bound: %s; the peers' beacons to this rank on "
             "the rail are lost, its probes alone prove them, until it can (tried again every %d ms)", r,
             sastr(&ua, b, sizeof b), strerror(e), (int)(UDP_RETRY_NS / 1000000));
        t->utry_at[r] = t->now ? t->now : 1;
        return;
    }
    t->ufd[r] = fd;
    t->utry_at[r] = 0;
    tlog(t, 2, "rail %d: beacons on %s (the rail's first connection)", r, sastr(&ua, b, sizeof b));
}

/* BEACONS follow the work: a connection up gets them while it has work
 * outstanding (data frames unacknowledged or unsent, a frame partly read
 * or read in place, a stall either side) or has carried a data frame
 * either way (or come up) within beacon_idle (acks owed are for frames
 * taken within it).  That is where they
 * matter: a probe or an ACK frame queued behind data, or behind a lost
 * segment, is late, and the beacon is not.  An idle connection's probe
 * has nothing in front of it, and a peer never connected has nothing to
 * vouch for: neither gets any (an idle rank sends none once its
 * connections are idle for beacon_idle). */
static int beacon_due(const bfo_tcp *t, const tlink *l)
{
    if (!t->beacon_idle_ns || t->now - l->work_at < t->beacon_idle_ns || l->placing || l->rx_len > l->rx_off ||
        l->stalled || l->peer_stalled)
        return 1;
    /* frames not acknowledged yet, or not written: work unless every one is
     * a rail control frame (a heartbeat waiting for its ack); a stream's
     * first is data, so this looks at one */
    for (int i = l->q.head; i >= 0; i = t->ents[i].next)
        if (!t->ents[i].urgent)
            return 1;
    return 0;
}

/* A beacon to every peer whose connection is up and has work (beacon_due),
 * on every rail that has a UDP socket, once per beacon interval. */
static void beacons_send(bfo_tcp *t)
{
    uint8_t b[BFO_TCP_BEACON_SIZE];
    if (!t->beacon_ns || t->now - t->beacon_at < t->beacon_ns)
        return;
    t->beacon_at = t->now;
    for (int r = 0; r < t->nrails; r++) /* a rail whose beacon socket could not be bound yet: again */
        if (t->uwant[r] && t->ufd[r] < 0)
            beacon_open(t, r);
    for (int i = 0; i < t->nused; i++) {
        tlink *l = t->used[i];
        const struct sockaddr_storage *to;
        uint64_t seq;
        if (t->ufd[l->rail] < 0 || !link_up(l) || l->c.broken || l->fd < 0 || !beacon_due(t, l) ||
            swallowing(t, l) || !(to = beacon_peer(t, l)))
            continue;
        /* with keys, the peer's sequence (every rail and connection: its
         * one replay window) and the MAC; beacon_peer read its card, which
         * gave its key; none (no key in its card): no beacon it could take */
        seq = t->o.auth ? bfo_auth_beacon_seq(t->o.auth, l->peer) : l->bseq_tx + 1;
        if (!seq)
            continue;
        bfo_tcp_beacon_put(b, t->rank, l->rail, t->job, l->c.attempt, seq);
        if (t->o.auth && bfo_auth_beacon_mac(t->o.auth, l->peer, seq, b, BFO_TCP_BEACON_BODY,
                                             b + BFO_TCP_BEACON_BODY) != BFO_OK)
            continue;
        if (sendto(t->ufd[l->rail], b, sizeof b, MSG_DONTWAIT | MSG_NOSIGNAL, (const struct sockaddr *)to,
                   sa_len(to)) == (ssize_t)sizeof b) {
            l->bseq_tx = seq;
            t->st.rail[l->rail].tp[BFO_TCP_BEACONS_SENT]++;
        }
    }
}

static int same_addr(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
    if (a->ss_family != b->ss_family)
        return 0;
    if (a->ss_family == AF_INET6) {
        const struct sockaddr_in6 *x = (const struct sockaddr_in6 *)a, *y = (const struct sockaddr_in6 *)b;
        return x->sin6_port == y->sin6_port && !memcmp(&x->sin6_addr, &y->sin6_addr, sizeof x->sin6_addr);
    }
    const struct sockaddr_in *x = (const struct sockaddr_in *)a, *y = (const struct sockaddr_in *)b;
    return x->sin_port == y->sin_port && x->sin_addr.s_addr == y->sin_addr.s_addr;
}

/* One received datagram on rail's UDP socket: the link it vouches for, or
 * NULL (why says what was wrong). */
static tlink *beacon_check(bfo_tcp *t, int rail, const uint8_t *b, ssize_t n, const struct sockaddr_storage *from,
                           const char **why)
{
    uint32_t rank;
    tlink *l;
    const struct sockaddr_storage *peer;
    if (n != BFO_TCP_BEACON_SIZE || bfo_get16(b) != BFO_TCP_BEACON_MAGIC || b[2] != BFO_TCP_BEACON_VERSION) {
        *why = "not a beacon (length, magic or version)";
        return NULL;
    }
    if (bfo_get64(b + 16) != t->job) {
        *why = "another job's";
        return NULL;
    }
    rank = bfo_get32(b + 4);
    if (rank >= (uint32_t)t->size || rank == (uint32_t)t->rank) {
        *why = "no such peer";
        return NULL;
    }
    if (bfo_get32(b + 8) != (uint32_t)rail) {
        *why = "for another rail";
        return NULL;
    }
    l = link_find(t, (int)rank, rail);
    if (!l || !link_up(l) || l->c.broken || l->fd < 0) {
        *why = "no connection up";
        return NULL;
    }
    if (bfo_get64(b + 24) != l->c.attempt) {
        *why = "another connection's (a stale attempt)";
        return NULL;
    }
    if (!(peer = beacon_peer(t, l)) || !same_addr(from, peer)) {
        *why = "not from the peer's beacon address";
        return NULL;
    }
    if (l->poisoned || t->drop[rail]) {
        *why = "the fault hook";
        return NULL;
    }
    if (t->o.auth) {
        /* the MAC before the window moves (bfo_auth_beacon_verify): a
         * forged beacon, a huge sequence number in it, changes nothing */
        if (bfo_auth_replay_check(t->o.auth, (int)rank, bfo_get64(b + 32)) != BFO_OK) {
            *why = bfo_auth_has_peer(t->o.auth, (int)rank) ? "a sequence number already seen, or too old"
                                                            : "no key for the peer (its card had none)";
            return NULL;
        }
        if (bfo_auth_beacon_verify(t->o.auth, (int)rank, bfo_get64(b + 32), b, BFO_TCP_BEACON_BODY,
                                   b + BFO_TCP_BEACON_BODY) != BFO_OK) {
            *why = "its MAC is wrong (not the pair key of the peer and this rank)";
            return NULL;
        }
    } else if (bfo_get64(b + 32) <= l->bseq_rx) {
        *why = "a sequence number already seen";
        return NULL;
    }
    l->bseq_rx = bfo_get64(b + 32);
    return l;
}

/* Reads rail's UDP socket: each beacon that vouches for a live connection
 * is the peer heard on the rail (while that connection has carried
 * something from the peer process within BEACON_TRUST_NS, or this side is
 * stalled reading it); anything else is counted and dropped. */
static void beacons_read(bfo_tcp *t, int rail)
{
    for (int k = 0; k < 64; k++) {
        uint8_t b[BFO_TCP_BEACON_SIZE + 1];
        struct sockaddr_storage from;
        socklen_t fl = sizeof from;
        const char *why = NULL;
        tlink *l;
        ssize_t n = recvfrom(t->ufd[rail], b, sizeof b, MSG_DONTWAIT | MSG_TRUNC, (struct sockaddr *)&from, &fl);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return; /* EAGAIN, or an ICMP error of an earlier send */
        }
        l = beacon_check(t, rail, b, n, &from, &why);
        if (!l) {
            char a[80];
            t->st.rail[rail].tp[BFO_TCP_BEACONS_DROPPED]++;
            tlog(t, 3, "rail %d: a datagram from %s dropped: %s", rail, sastr(&from, a, sizeof a), why);
            continue;
        }
        t->st.rail[rail].tp[BFO_TCP_BEACONS_RCVD]++;
        if (l->stalled || t->now - l->rx_at < BEACON_TRUST_NS)
            up_heard(t, l);
    }
}

static void timeouts(bfo_tcp *t)
{
    hello_heard(t);
    for (int i = 0; i < t->nused; i++)
        bfo_link_timeout(&t->lb, &t->used[i]->c, t->now); /* TIMED_OUT where it waits */
    for (int k = 0; k < t->pends.n; k++) {
        pend *p = pend_at(t, k);
        if (p->a.fd < 0 || t->now < p->a.deadline)
            continue;
        if (bfo_tp_readable(p->a.fd)) {
            /* What came while this side did not look is read before the
             * connection is judged: an acceptor starved longer than the
             * connect timeout finds its peers' hellos (or CONFIRMs) waiting,
             * and one epoll_wait returns 64 sockets at most, so those past
             * them were dropped unread and every dialer redialled into the
             * same (docs/mpi.md).  Read once: what is still not complete
             * is judged below, so a trickle holds no slot. */
            uint32_t gen = p->a.gen;
            int stage = pend_stage(p);
            pend_read(t, p);
            settle(t);
            p = pend_at(t, k);
            if (p->a.fd < 0 || p->a.gen != gen || pend_stage(p) != stage || t->now < p->a.deadline)
                continue; /* taken, refused or closed, or challenged (due again) */
        }
        if (pend_stage(p) == 1 && proof_host_answers(t, p))
            p->a.deadline = t->now + t->pends.timeout_ns;
        else if (pend_stage(p) == 1)
            pend_proof(t, p, 0, "no CONFIRM in time");
        else
            pend_close(t, p, p->got ? "no complete hello in time" : NULL);
    }
}

static void acks_due(bfo_tcp *t, int all)
{
    int cold = 0;
    for (int i = 0; i < t->nused; i++) {
        tlink *l = t->used[i];
        cold += link_up(l) && !l->hot;
        if (!link_up(l) || l->rx_seq == l->ack_sent)
            continue;
        if (all || l->rx_frames >= t->o.ack_frames || l->rx_bytes >= t->o.ack_bytes ||
            t->now - l->rx_since >= t->o.ack_delay_ns)
            send_ack(t, l);
    }
    t->cold_up = cold;
}

/* ------------------------------------------------------------- progress */

/* Busy polling: reads the hot links directly (they are not in the epoll
 * set); a link that has cooled down, or lost its connection, leaves the
 * set.  Returns 1 when epoll must run too: it is due, or no link is hot.
 * *handled counts the hot links that had data frames for the engine. */
static int poll_hot(bfo_tcp *t, int *handled)
{
    int need_epoll = t->nhot == 0 ||
                     t->now - t->last_epoll >= (t->cold_up ? EPOLL_EVERY_NS : EPOLL_ALONE_NS);
    for (int k = 0; k < t->nhot;) {
        tlink *l = t->lk[t->hot[k]];
        if (l->fd < 0 || !link_up(l) || l->in_epoll || t->now - l->hot_at > HOT_NS) {
            cool(t, k);
            continue;
        }
        if (!l->stalled && !l->c.broken) {
            uint64_t seq = l->rx_seq;
            link_read(t, l);
            *handled += l->rx_seq != seq;
        }
        if (l->fd >= 0 && (l->unsent >= 0 || l->ctl_off < l->ctl_len))
            link_flush(t, l);
        settle(t);
        k++;
    }
    return need_epoll;
}

static int poll_epoll(bfo_tcp *t, int timeout_ms)
{
    struct epoll_event evs[64];
    int n, handled = 0;
    n = epoll_wait(t->ep, evs, 64, timeout_ms);
    t->now = bfo_tp_now();
    t->unclocked = 0;
    t->last_epoll = t->now;
    t->nepoll++;
    for (int k = 0; k < n; k++) {
        uint64_t d = evs[k].data.u64;
        int type = (int)(d >> 60), idx = (int)(uint32_t)d;
        uint32_t gen = (uint32_t)(d >> 32) & 0x0fffffffu;
        handled++;
        if (type == EV_LISTEN) {
            do_accept(t, idx);
        } else if (type == EV_BEACON) {
            beacons_read(t, idx);
        } else if (type == EV_PEND) {
            if (pend_at(t, idx)->a.fd >= 0 && (pend_at(t, idx)->a.gen & 0x0fffffffu) == gen)
                pend_read(t, pend_at(t, idx));
        } else if (type == EV_LINK) {
            tlink *l = t->lk[idx]; /* an fd in the set: made */
            if (!l || l->fd < 0 || (l->gen & 0x0fffffffu) != gen)
                continue;
            if (l->c.fsm.cs == BFO_CONN_ST_DIALING) {
                if (evs[k].events & (EPOLLOUT | EPOLLERR | EPOLLHUP))
                    dialed(t, l);
            } else {
                if ((evs[k].events & EPOLLERR) && l->stalled) {
                    int err = 0;
                    socklen_t el = sizeof err;
                    getsockopt(l->fd, SOL_SOCKET, SO_ERROR, &err, &el);
                    if (err)
                        bfo_link_break(&t->lb, &l->c, 0, "socket error: %s", strerror(err));
                }
                if (evs[k].events & (EPOLLIN | EPOLLERR | EPOLLHUP))
                    link_read(t, l);
                if ((evs[k].events & EPOLLOUT) && l->fd >= 0)
                    link_flush(t, l);
            }
        }
        settle(t);
    }
    return handled;
}

/* About to sleep in epoll: nothing else goes out soon, so every ack owed
 * goes out now, and every hot link goes back into the epoll set (data
 * already waiting on one makes the set readable at once).  Returns 1 when
 * the caller must not sleep: posts wait to complete, or connect() requests
 * to be handled (both only happen in progress). */
static int sleep_prep(bfo_tcp *t)
{
    acks_due(t, 1);
    settle(t);
    while (t->nhot)
        cool(t, 0);
    return t->failed.head >= 0 || t->lb.asked > 0;
}

int bfo_tcp_prepare_sleep(bfo_tcp *t)
{
    t->now = bfo_tp_now();
    return sleep_prep(t);
}

/* One progress with now given: the clock is read once per busy poll, by
 * whoever runs the transports (bfo_net, op_progress), not again here. */
static int progress_at(bfo_tcp *t, int timeout_ms, uint64_t now)
{
    int handled = 0;
    const uint64_t skip = bfo_link_gap(&t->lb, now);
    t->now = now;
    t->unclocked = 0;
    t->nprogress++;
    if (skip) {
        /* not run for a while: what came meanwhile is read before any
         * connect deadline is judged (bfo_link.h, "time the transport did
         * not run") */
        for (int i = 0; i < t->nused; i++)
            bfo_link_skip(&t->lb, &t->used[i]->c, skip, now);
        bfo_tp_pends_skip(&t->pends, skip, now);
    }
    if (t->nstalled)
        retry_stalled(t);
    settle(t);
    if (timeout_ms > 0 && sleep_prep(t))
        timeout_ms = 0;
    t->busy = timeout_ms == 0;
    if (timeout_ms > 0 || poll_hot(t, &handled))
        handled += poll_epoll(t, timeout_ms);
    t->busy = 0;
    settle(t);
    /* The periodic work, every SCAN_EVERY_NS of busy polling: acks owed for
     * ack_delay (the frame and byte limits send theirs from parse), connect
     * deadlines, the engine's timers.  Off the per-poll path: a busy poll
     * that finds nothing costs little more than its read(). */
    if (timeout_ms > 0 || t->now - t->last_scan >= SCAN_EVERY_NS) {
        t->last_scan = t->now;
        acks_due(t, 0);
        settle(t);
        timeouts(t);
        settle(t);
        kernel_evidence(t);
        settle(t);
        beacons_send(t);
        rx_trim(t);
    }
    if (t->lb.asked) {
        handle_connects(t);
        settle(t);
    }
    if (t->now > t->lb.last_now)
        t->lb.last_now = t->now; /* a sleep in epoll_wait listened: not a gap */
    return handled;
}

int bfo_tcp_progress(bfo_tcp *t, int timeout_ms) { return progress_at(t, timeout_ms, bfo_tp_now()); }

/* The state of every connection, one line each (for tools on a timeout). */
void bfo_tcp_dump(const bfo_tcp *t, FILE *f)
{
    for (int i = 0; i < t->nused; i++) {
        const tlink *l = t->used[i];
        int q = 0, u = 0;
        if (l->peer == t->rank)
            continue;
        for (int k = l->q.head; k >= 0; k = t->ents[k].next)
            q++;
        for (int k = l->unsent; k >= 0; k = t->ents[k].next)
            u++;
        int inq = -1, outq = -1;
        if (l->fd >= 0) {
            ioctl(l->fd, FIONREAD, &inq);
            ioctl(l->fd, TIOCOUTQ, &outq);
        }
        struct tcp_info ti;
        socklen_t tl = sizeof ti;
        memset(&ti, 0, sizeof ti);
        if (l->fd >= 0)
            getsockopt(l->fd, IPPROTO_TCP, TCP_INFO, &ti, &tl);
        fprintf(f,
                "bfo-tcp[%d]: peer %d rail %d: kernel: %d bytes to read, %d not yet acked by the "
                "peer; ca_state %u retransmits %u probes %u backoff %u rto %u us cwnd %u unacked %u "
                "lost %u last data sent %u ms ago, last ack %u ms ago\n",
                t->rank, l->peer, l->rail, inq, outq, ti.tcpi_ca_state, ti.tcpi_retransmits,
                ti.tcpi_probes, ti.tcpi_backoff, ti.tcpi_rto, ti.tcpi_snd_cwnd, ti.tcpi_unacked,
                ti.tcpi_lost, ti.tcpi_last_data_sent, ti.tcpi_last_ack_recv);
        fprintf(f,
                "bfo-tcp[%d]: peer %d rail %d: fd %d state %s attempt %llu dialed %llu taken %llu engine-rail %s hot %d in-epoll %d "
                "evmask %x stalled %d peer-stalled %d queued %d unsent %d ctl %zu/%zu rx %zu/%zu "
                "rx-seq %llu ack-sent %llu last-written %llu beacons sent %llu last taken %llu%s\n",
                t->rank, l->peer, l->rail, l->fd, bfo_conn_state_name(l->c.fsm.cs),
                (unsigned long long)l->c.attempt, (unsigned long long)l->c.dialed, (unsigned long long)l->c.taken,
                "(bfo_net)", l->hot,
                l->in_epoll, l->evmask, l->stalled, l->peer_stalled, q, u, l->ctl_off, l->ctl_len,
                l->rx_off, l->rx_len, (unsigned long long)l->rx_seq,
                (unsigned long long)l->ack_sent, (unsigned long long)l->last_written,
                (unsigned long long)l->bseq_tx, (unsigned long long)l->bseq_rx,
                l->bto_ok < 0 ? " (the peer has no beacon address)" : "");
    }
    uint64_t now = bfo_tp_now();
    fprintf(f, "bfo-tcp[%d]: hot %d stalled %d connect-requests %d; "
            "progress calls %llu, epoll calls %llu; last epoll %.3f ms ago, last scan %.3f ms ago\n", t->rank,
            t->nhot, t->nstalled, t->lb.asked,
            (unsigned long long)t->nprogress, (unsigned long long)t->nepoll,
            (double)(now - t->last_epoll) / 1e6, (double)(now - t->last_scan) / 1e6);
    {
        for (int i = 0; i < t->nused; i++) {
            const tlink *l = t->used[i];
            bfo_frame fr;
            if (!l->stalled || l->rx_len - l->rx_off < BFO_TCP_HDR_SIZE)
                continue;
            if (bfo_frame_decode(&fr, l->rx + l->rx_off + BFO_TCP_HDR_SIZE, bfo_get32(l->rx + l->rx_off)) == BFO_OK)
                fprintf(f, "bfo-tcp[%d]: stalled frame on peer %d rail %d: type %d seq %lld\n", t->rank,
                        l->peer, l->rail, fr.type,
                        fr.type == BFO_FRAG_MATCH  ? (long long)fr.h.match.seq
                        : fr.type == BFO_FRAG_RNDV ? (long long)fr.h.rndv.seq
                                                   : -1LL);
        }
    }
}

/* ----------------------------------------------------------------- init */

static void set_port(struct sockaddr_storage *sa, int port)
{
    if (sa->ss_family == AF_INET6)
        ((struct sockaddr_in6 *)sa)->sin6_port = htons((uint16_t)port);
    else
        ((struct sockaddr_in *)sa)->sin_port = htons((uint16_t)port);
}

static int get_port(const struct sockaddr_storage *sa)
{
    return ntohs(sa->ss_family == AF_INET6 ? ((const struct sockaddr_in6 *)sa)->sin6_port
                                           : ((const struct sockaddr_in *)sa)->sin_port);
}

/* PORTS (bfo_tcp.h): a range of ports, lo..hi; 0, 0: any. */
typedef struct prange {
    int lo, hi;
} prange;

/* The range of a min and a max setting (one alone: the other end is 1024
 * or 65535). */
static prange range_of(int min, int max)
{
    prange p = { 0, 0 };
    if (min > 0 || max > 0) {
        p.lo = min > 0 ? min : 1024;
        p.hi = max > 0 ? max : 65535;
    }
    return p;
}

/* A socket of type on sa's address, bound (and listening: SOCK_STREAM) to
 * a port of range pr: first (when in it) first, then from lo + start
 * modulo the range's size on; a port in use is passed over.  Without a
 * range: first, then any (first 0: any at once).  The fd, with sa's port
 * the one bound; or -1 with errno (EADDRINUSE: every port in use). */
static int bind_range(int type, struct sockaddr_storage *sa, prange pr, int first, int start)
{
    int span = pr.lo ? pr.hi - pr.lo + 1 : 1;
    int ntry = span + (first > 0);
    for (int i = 0; i < ntry; i++) {
        int port = i == 0 && first > 0 ? first : pr.lo ? pr.lo + (start + i - (first > 0)) % span : 0;
        int fd, one = 1, e;
        if (pr.lo && (port < pr.lo || port > pr.hi))
            continue;
        if (i > 0 && first > 0 && port == first)
            continue; /* tried first */
        fd = socket(sa->ss_family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return -1;
        /* a listener in a range: its port's old connections in TIME_WAIT do
         * not hold it (one listening there does); never on UDP, where it
         * would let two sockets share the port */
        if (type == SOCK_STREAM && pr.lo)
            (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        set_port(sa, port);
        if (bind(fd, (struct sockaddr *)sa, sa_len(sa)) == 0 && (type != SOCK_STREAM || listen(fd, BFO_TP_BACKLOG) == 0)) {
            socklen_t sl = sa_len(sa);
            if (getsockname(fd, (struct sockaddr *)sa, &sl) == 0)
                return fd;
        }
        e = errno;
        close(fd);
        errno = e;
        if (e != EADDRINUSE)
            return -1;
    }
    errno = EADDRINUSE;
    return -1;
}

/* Every port of the range in use: said, naming the setting and its size. */
static void say_exhausted(bfo_tcp *t, int r, const char *what, const char *setting, prange pr)
{
    char b[80], *colon;
    sastr(&t->sa[r], b, sizeof b);
    if ((colon = strrchr(b, ':')))
        *colon = 0; /* the address without its port (0) */
    tlog(t, 1, "rail %d (%s): no free port for its %s in %d-%d (%s: %d port%s); every rank on this host takes "
         "one per rail on this address: widen the range to at least the ranks per host", r, b, what, pr.lo, pr.hi, setting, pr.hi - pr.lo + 1, pr.hi > pr.lo ? "s" : "");
}

/* BEACONS: rail's UDP socket at open, on the rail's address: the TCP
 * listen port when it is free (and in the beacons' range), else any (else
 * another of the range).  Only where the beacons' range leaves out the
 * listener's number; else the socket waits for the rail's first
 * connection (beacon_open), its port the listener's, published now: an
 * idle rank holds one socket per rail, its listener.  Without one the
 * rail has no beacons (none published: the peers send it none), which is
 * no error, unless the beacons have a range and every port of it is in
 * use (PORTS): -1, said. */
static int beacon_socket(bfo_tcp *t, int r)
{
    struct sockaddr_storage ua = t->lsa[r];
    socklen_t ul = sa_len(&ua);
    struct epoll_event ev;
    prange pr = range_of(t->o.beacon_port_min, t->o.beacon_port_max);
    int inherit = !pr.lo;
    int fd;
    char b[80];
    if (inherit)
        pr = range_of(t->o.port_min, t->o.port_max);
    if (!pr.lo || (get_port(&t->lsa[r]) >= pr.lo && get_port(&t->lsa[r]) <= pr.hi)) {
        t->ulazy[r] = 1; /* at the rail's first connection (beacon_open) */
        t->uport[r] = (uint16_t)get_port(&t->lsa[r]);
        return 0;
    }
    fd = bind_range(SOCK_DGRAM, &ua, pr, get_port(&t->lsa[r]), t->rank);
    if (fd < 0 && errno == EADDRINUSE && pr.lo) {
        say_exhausted(t, r, "beacon socket",
                      inherit ? "tcp.port_min/port_max, the beacons' too" : "tcp.beacon_port_min/beacon_port_max", pr);
        return -1;
    }
    ev.events = EPOLLIN;
    ev.data.u64 = bfo_tp_tag(EV_BEACON, 0, r);
    if (fd < 0 || getsockname(fd, (struct sockaddr *)&ua, &ul) != 0 || epoll_ctl(t->ep, EPOLL_CTL_ADD, fd, &ev) != 0) {
        tlog(t, 1, "rail %d (%s): no beacon socket: %s; no beacons on it", r, sastr(&t->lsa[r], b, sizeof b),
             strerror(errno));
        if (fd >= 0)
            close(fd);
        return 0;
    }
    t->ufd[r] = fd;
    t->uport[r] = (uint16_t)get_port(&ua);
    return 0;
}

static unsigned tcp_rail_caps(void *ctx, int rail)
{
    (void)ctx;
    (void)rail;
    /* no BFO_CAP_RDMA: the engine uses its copy protocols; iovec data is
     * written from the layer's segments (tcp_post_send_data) */
    return BFO_CAP_SEND_IOV;
}

static unsigned tcp_rail_bw(void *ctx, int rail)
{
    const bfo_tcp *t = (const bfo_tcp *)ctx;
    return rail >= 0 && rail < t->nrails ? t->bw[rail] : 0;
}

int bfo_tcp_open(bfo_tcp **out, const bfo_transport_args *a)
{
    bfo_tcp *t;
    bfo_tp_sizes z;
    int rc;
    *out = NULL;
    if (!bfo_tp_args_ok(a))
        return BFO_ERR_INVALID;
    t = (bfo_tcp *)calloc(1, sizeof *t);
    if (!t)
        return BFO_ERR_NO_MEMORY;
    t->ep = -1;
    t->failed = (elist)BFO_LIST_EMPTY;
    for (int r = 0; r < BFO_MAX_RAILS; r++)
        t->lfd[r] = t->ufd[r] = -1;
    if (a->opt)
        t->o = *(const bfo_tcp_options *)a->opt;
    t->rank = a->rank;
    t->size = a->size;
    t->nrails = a->nrails;
    t->sink = *a->sink;
    t->lg = (bfo_tp_log){ .name = "tcp", .rank = a->rank,
                          .level = t->o.log_level ? t->o.log_level : a->log_level ? a->log_level : 1 };
    if (!t->o.user_timeout_ms)
        t->o.user_timeout_ms = USER_TIMEOUT_DEFAULT_MS; /* bfo_tcp.h, OPTIONS */
    if (!t->o.connect_timeout_ns)
        t->o.connect_timeout_ns = CONNECT_TIMEOUT_DEFAULT_NS;
    if (!t->o.ack_delay_ns)
        t->o.ack_delay_ns = 50000;
    if (!t->o.ack_frames)
        t->o.ack_frames = 8;
    if (!t->o.ack_bytes)
        t->o.ack_bytes = 256 * 1024;
    if (!t->o.notsent_lowat)
        t->o.notsent_lowat = NOTSENT_LOWAT_DEFAULT;
    t->beacon_idle_ns = t->o.beacon_idle_ns < 0 ? 0
                        : t->o.beacon_idle_ns ? (uint64_t)t->o.beacon_idle_ns : (uint64_t)BEACON_IDLE_DEFAULT_NS;
    t->rx_idle_ns = t->o.rx_idle_ns < 0 ? 0 : t->o.rx_idle_ns ? (uint64_t)t->o.rx_idle_ns : (uint64_t)RX_IDLE_DEFAULT_NS;
    t->beacon_ns = t->o.beacon_interval_ns < 0 ? 0
                   : t->o.beacon_interval_ns ? (uint64_t)t->o.beacon_interval_ns : (uint64_t)BEACON_DEFAULT_NS;
    rc = BFO_ERR_INVALID;
    for (int r = 0; r < t->nrails; r++) {
        t->bw[r] = a->bandwidth ? a->bandwidth[r] : 0;
        if (bfo_tcp_parse_rail(a->rails[r], &t->sa[r]) != 0) {
            tlog(t, 1, "rail %d: \"%s\" is not an address (tcp:ADDR, ADDR, tcp:[IPV6])", r, a->rails[r]);
            goto fail;
        }
    }
    {
        prange lp = range_of(t->o.port_min, t->o.port_max), bp = range_of(t->o.beacon_port_min, t->o.beacon_port_max);
        if (lp.lo > lp.hi || bp.lo > bp.hi) {
            tlog(t, 1, "port range %d-%d: the lowest port above the highest (tcp.%s)", lp.lo > lp.hi ? lp.lo : bp.lo,
                 lp.lo > lp.hi ? lp.hi : bp.hi, lp.lo > lp.hi ? "port_min/port_max" : "beacon_port_min/beacon_port_max");
            goto fail;
        }
    }
    rc = BFO_TCP_ERR_SOCKET;
    t->ep = epoll_create1(EPOLL_CLOEXEC);
    if (t->ep < 0)
        goto fail;
    for (int r = 0; r < t->nrails; r++) {
        struct sockaddr_storage *sa = &t->lsa[r];
        prange pr = range_of(t->o.port_min, t->o.port_max);
        struct epoll_event ev;
        char b[80];
        *sa = t->sa[r];
        t->lfd[r] = bind_range(SOCK_STREAM, sa, pr, 0, t->rank);
        if (t->lfd[r] < 0) {
            if (errno == EADDRINUSE && pr.lo)
                say_exhausted(t, r, "listener", "tcp.port_min/port_max", pr);
            else
                tlog(t, 1, "rail %d (%s): cannot listen: %s", r, sastr(&t->sa[r], b, sizeof b), strerror(errno));
            goto fail;
        }
        ev.events = EPOLLIN;
        ev.data.u64 = bfo_tp_tag(EV_LISTEN, 0, r);
        if (epoll_ctl(t->ep, EPOLL_CTL_ADD, t->lfd[r], &ev) != 0)
            goto fail;
        if (t->beacon_ns && beacon_socket(t, r) != 0)
            goto fail;
        /* the beacons' port is published now, its socket opened now or at
         * the rail's first connection (ulazy); tests/tcp/t23 reads this line */
        tlog(t, 2, "rail %d: listening on %s, beacons on port %d", r, sastr(sa, b, sizeof b),
             t->ufd[r] >= 0 || t->ulazy[r] ? (int)t->uport[r] : 0);
    }

    /* memory: everything now */
    (void)bfo_tp_config(a->cfg, &z);
    t->max_frame = z.max_frame;
    /* the send descriptors: the engine's max_ops grows with the ranks (a
     * few per peer), the descriptors in use with the posts in flight; they
     * start at ENTS_FIRST and double when every one is in use (ent_take),
     * so an idle peer costs none */
    t->nents = z.nents < ENTS_FIRST ? z.nents : ENTS_FIRST;
    t->ka_ns = z.ka_ns; /* keepalives while stalled */
    t->rx_cap = 2 * (BFO_TCP_HDR_SIZE + t->max_frame);
    rc = BFO_ERR_NO_MEMORY;
    /* a pointer per (peer, rail): its link is made at its first use (link_of) */
    t->lk = (tlink **)calloc((size_t)t->size * (size_t)t->nrails, sizeof *t->lk);
    t->ents = (ent *)calloc((size_t)t->nents, sizeof *t->ents);
    t->pends = (bfo_tp_pends){ .ep = t->ep, .events = EPOLLIN, .ev_type = EV_PEND, .timeout_ns = t->o.connect_timeout_ns };
    if (!t->lk || !t->ents || bfo_tp_pends_init(&t->pends, sizeof(pend), t->size, t->nrails) != 0)
        goto fail;
    bfo_list_free_all(&t->ents->next, sizeof *t->ents, t->nents, &t->ent_free);
    static int said_unauthenticated; /* once per process (bfo sim and tests open many; threads may) */
    if (!t->o.auth && !__atomic_exchange_n(&said_unauthenticated, 1, __ATOMIC_RELAXED))
        tlog(t, 1, "rank %d: TCP hellos are NOT authenticated (no bfo_auth given): any process that reaches a "
                   "listening port and knows the job id can take a rail (docs/failure-model.md, \"Threat model\")",
             t->rank);
    bfo_link_bind(&t->lb, t, tcp_act, t->o.connect_timeout_ns);
    t->lb.host_answers = 1; /* connect() completed: the peer's kernel accepted (hello_heard) */
    t->links_ready = 1;
    t->now = bfo_tp_now();
    *out = t;
    return BFO_OK;
fail:
    bfo_tcp_fini(t);
    return rc;
}

/* ----------------------------------------------------------- accessors */

int bfo_tcp_epoll_fd(const bfo_tcp *t) { return t->ep; }

/* What the engine calls (bfo_backend.h): sends, no RDMA, no registration. */
static const bfo_backend tcp_calls = {
    .post_send = tcp_post_send, .post_send_data = tcp_post_send_data, .connect = tcp_connect,
    .disconnect = tcp_disconnect, .part = tcp_part, .rail_caps = tcp_rail_caps, .rail_bandwidth = tcp_rail_bw,
};

void bfo_tcp_backend(bfo_tcp *t, bfo_backend *be)
{
    *be = tcp_calls;
    be->ctx = t;
}

int bfo_tcp_address(const bfo_tcp *t, int rail, bfo_addr *out)
{
    if (rail < 0 || rail >= t->nrails)
        return BFO_ERR_INVALID;
    addr_put(&t->lsa[rail], t->uport[rail], out);
    return BFO_OK;
}

void bfo_tcp_start(bfo_tcp *t, uint64_t job)
{
    t->job = job;
    tlog(t, 2, "rank %d of %d, %d rail(s), job %016llx", t->rank, t->size, t->nrails, (unsigned long long)job);
}

const bfo_tcp_stats *bfo_tcp_get_stats(const bfo_tcp *t) { return &t->st; }

void bfo_tcp_fault_drop(bfo_tcp *t, int rail, int on)
{
    if (rail >= 0 && rail < t->nrails) {
        t->drop[rail] = on != 0;
        tlog(t, 2, "rail %d: fault hook %s", rail, on ? "on (frames vanish)" : "off");
    }
}

/* ------------------------------------------------- the transport's row */

static int op_open(void **out, const bfo_transport_args *a)
{
    bfo_tcp *t = NULL;
    int rc = bfo_tcp_open(&t, a);
    *out = t;
    return rc;
}

static int op_address(void *t, int rail, bfo_addr *out) { return bfo_tcp_address((bfo_tcp *)t, rail, out); }

static int op_start(void *t, uint64_t job)
{
    bfo_tcp_start((bfo_tcp *)t, job);
    return BFO_OK;
}

static void op_backend(void *t, bfo_backend *be) { bfo_tcp_backend((bfo_tcp *)t, be); }

static int op_progress(void *t, uint64_t now)
{
    /* now: CLOCK_MONOTONIC, read by bfo_net just before (tnow's clock); the
     * clock is read again after an epoll_wait */
    return progress_at((bfo_tcp *)t, 0, now);
}

static int op_wait_fds(void *vt, int *fds, int max)
{
    bfo_tcp *t = (bfo_tcp *)vt;
    if (max < 1 || bfo_tcp_prepare_sleep(t))
        return -1;
    fds[0] = t->ep;
    return 1;
}

static void op_fault(void *t, int rail, int on) { bfo_tcp_fault_drop((bfo_tcp *)t, rail, on); }

static void op_stats(void *vt, int rail, bfo_rail_stats *o)
{
    const bfo_tcp *t = (const bfo_tcp *)vt;
    if (rail >= 0 && rail < t->nrails)
        *o = t->st.rail[rail];
    else
        memset(o, 0, sizeof *o);
}

static void op_dump(void *t, FILE *f) { bfo_tcp_dump((const bfo_tcp *)t, f); }
static void op_fini(void *t) { bfo_tcp_fini((bfo_tcp *)t); }

static const char *op_errname(int rc) { return bfo_tp_errname(tcp_errs, rc); }

/* The tunables (bfo_setting.h; bfo_tcp.h, OPTIONS): BFO_TCP_<NAME>, `bfo run
 * --set tcp.NAME=V`, pml_bfo_tcp_<name>.  Defaults as bfo_tcp_open applies them. */
/* doc begin: tcp-settings */
static const bfo_setting tcp_settings[] = {
    { "beacon_ms", BFO_SETTING_MS, BFO_SETTING_AT(bfo_tcp_options, beacon_interval_ns), BEACON_DEFAULT_NS / 1e6, 0,
      60000, BFO_SETTING_OFF,
      "a UDP beacon to each peer with work on each rail this often, the proof that this process is alive (ms; off: none)" },
    { "notsent_lowat", BFO_SETTING_SIZE, BFO_SETTING_AT(bfo_tcp_options, notsent_lowat), NOTSENT_LOWAT_DEFAULT, 1,
      1 << 30, BFO_SETTING_OFF,
      "TCP_NOTSENT_LOWAT on every connection: unsent bytes the kernel keeps at most (off: the kernel's)" },
    { "user_timeout_ms", BFO_SETTING_INT, BFO_SETTING_AT(bfo_tcp_options, user_timeout_ms), USER_TIMEOUT_DEFAULT_MS,
      1, 3600000, 0, "TCP_USER_TIMEOUT: data unacknowledged by the peer's kernel this long fails the connection (ms)" },
    { "connect_timeout_ms", BFO_SETTING_MS, BFO_SETTING_AT(bfo_tcp_options, connect_timeout_ns),
      CONNECT_TIMEOUT_DEFAULT_NS / 1e6, 1, 3600000, 0,
      "a dial and its hello exchange, or the wait for the peer to dial, at most this long (ms)" },
    { "port_min", BFO_SETTING_INT, BFO_SETTING_AT(bfo_tcp_options, port_min), 0, 0, 65535, BFO_SETTING_OFF,
      "the lowest port a rail's listener binds to (with port_max: a range for a firewall; 0 or off: any port)" },
    { "port_max", BFO_SETTING_INT, BFO_SETTING_AT(bfo_tcp_options, port_max), 0, 0, 65535, BFO_SETTING_OFF,
      "the highest port a rail's listener binds to (0 or off: 65535 when port_min is set, else any; a port per rank on the host per rail address)" },
    { "beacon_port_min", BFO_SETTING_INT, BFO_SETTING_AT(bfo_tcp_options, beacon_port_min), 0, 0, 65535, BFO_SETTING_OFF,
      "the lowest UDP port of the beacons (0 or off: the listeners' range when set, else any)" },
    { "beacon_port_max", BFO_SETTING_INT, BFO_SETTING_AT(bfo_tcp_options, beacon_port_max), 0, 0, 65535, BFO_SETTING_OFF,
      "the highest UDP port of the beacons (0 or off: the listeners' range when set, else any)" },
    { "beacon_idle_ms", BFO_SETTING_MS, BFO_SETTING_AT(bfo_tcp_options, beacon_idle_ns), BEACON_IDLE_DEFAULT_NS / 1e6,
      1, 3600000, BFO_SETTING_OFF,
      "beacons go to a connection while it has work and this long after its last data frame (ms; off: while up)" },
    { "rx_idle_ms", BFO_SETTING_MS, BFO_SETTING_AT(bfo_tcp_options, rx_idle_ns), RX_IDLE_DEFAULT_NS / 1e6, 1,
      3600000, BFO_SETTING_OFF,
      "a connection idle this long gives its receive buffer back (ms; off: kept while connected)" },
};
/* doc end: tcp-settings */


/* Its own counters (bfo_rail_stats.tp, in the order of bfo_tcp.h's enum):
 * the names `bfo stream --json` prints. */
_Static_assert(BFO_TCP_NCOUNTERS <= BFO_TP_COUNTERS_MAX, "bfo_rail_stats.tp holds TCP's counters");
static const bfo_counter_desc tcp_counters[BFO_TCP_NCOUNTERS] = {
    [BFO_TCP_PLACED_FRAMES] = { "placed_frames",
                                "FRAGs whose payload was read straight into the receive's buffer (bfo_engine_place)" },
    [BFO_TCP_PLACED_DROPPED] = { "placed_dropped", "of those, dropped: the receive was gone before the end" },
    [BFO_TCP_BEACONS_SENT] = { "beacons_sent", "liveness datagrams sent outside the connections (BEACONS)" },
    [BFO_TCP_BEACONS_RCVD] = { "beacons_rcvd", "beacons received for a live connection: the peer heard" },
    [BFO_TCP_BEACONS_DROPPED] = { "beacons_dropped",
                                  "datagrams on the beacon sockets dropped: another job, rank, rail or connection, "
                                  "from another address, a repeat, or the fault hook" },
    [BFO_TCP_WRITES] = { "writes", "send calls that handed bytes to the kernel (a frame, a batch, or part of one)" },
    [BFO_TCP_READS] = { "reads", "read calls on the connections that returned bytes" },
    [BFO_TCP_RX_BUF_BYTES] = { "rx_buf_bytes", "bytes of receive buffers held now (allocated at a connection's "
                                               "first read, given back when it closes or idles)" },
    [BFO_TCP_RX_BUF_ALLOCS] = { "rx_buf_allocs", "receive buffers allocated (one per connection and idle period)" },
    [BFO_TCP_TIES_WON] = { "ties_won", "hellos of the peer answered \"dialing you\": both dialed, this side's dial won" },
    [BFO_TCP_TIES_LOST] = { "ties_lost", "\"dialing you\" answers to this side's hello: both dialed, the peer's dial won" },
    [BFO_TCP_HELLO_HEARD] = { "hello_heard",
                              "a dialer waiting for the reply heard the peer's kernel answer (the peer may compute)" },
    [BFO_TCP_BEACON_BINDS_FAILED] = { "beacon_binds_failed",
                                      "tries to open the rail's beacon socket on its published port at its first "
                                      "connection that failed (the port taken: the peers' beacons are lost meanwhile)" },
};

/* Fragments of four times the engine's 64 KiB when every rail is TCP:
 * each costs two reads and a pass through the engine (measured over
 * pml/bfo, one rail: a 1 MiB ping-pong 227-230 us a way with 64 KiB, 152-157
 * with 256 KiB).  No RDMA. */
static const bfo_transport_tuning tcp_tuning = { 0, 256 << 10, 0, 0, NULL };

/* What it holds (bfo_transport.h, bfo_transport_need): one connection per
 * (peer, rail), the listener and the beacon socket per rail, the epoll
 * set.  Nothing pinned. */
static void op_need(const bfo_transport_args *a, bfo_transport_need *out)
{
    const bfo_tcp_options *o = (const bfo_tcp_options *)a->opt;
    memset(out, 0, sizeof *out);
    out->fds_peer = 1;
    out->fds_rail = 1 + (o && o->beacon_interval_ns < 0 ? 0 : 1);
    out->fds = 1;
}

const bfo_transport_ops bfo_tcp_transport = {
    "tcp", tcp_claims, op_open, op_address, op_start, op_backend, op_progress,
    op_wait_fds, op_fault, op_stats, op_dump, op_fini, op_errname, NULL, NULL,
    tcp_settings, (int)(sizeof tcp_settings / sizeof tcp_settings[0]), BFO_TCP_EAGER_LIMIT,
    tcp_counters, BFO_TCP_NCOUNTERS, "tcp:ADDR or ADDR, tcp:[IPV6]", &tcp_tuning, op_need,
};

void bfo_tcp_fini(bfo_tcp *t)
{
    if (!t)
        return;
    if (t->links_ready) {
        int nl = t->nused;
        uint64_t end;
        t->now = bfo_tp_now();
        acks_due(t, 1);
        /* let what is queued (our last acks) go out, then close politely */
        end = t->now + 200000000ull;
        for (;;) {
            int busy = 0;
            for (int i = 0; i < nl; i++) {
                tlink *l = t->used[i];
                if (l->fd >= 0 && !l->c.broken && (l->ctl_len || l->unsent >= 0)) {
                    link_flush(t, l);
                    busy |= l->fd >= 0 && !l->c.broken && (l->ctl_len || l->unsent >= 0);
                }
            }
            if (!busy || bfo_tp_now() >= end)
                break;
            usleep(1000);
        }
        for (int i = 0; i < nl; i++)
            if (t->used[i]->fd >= 0)
                shutdown(t->used[i]->fd, SHUT_WR);
        /* read what is still coming until the peers close too (bounded), so
         * that closing does not reset a connection with our acks unread */
        end = bfo_tp_now() + 100000000ull;
        for (int i = 0; i < nl; i++) {
            tlink *l = t->used[i];
            char sink[4096];
            while (l->fd >= 0 && bfo_tp_now() < end) {
                struct pollfd pf = { l->fd, POLLIN, 0 };
                if (poll(&pf, 1, 5) <= 0)
                    continue;
                if (read(l->fd, sink, sizeof sink) <= 0)
                    break;
            }
            if (l->fd >= 0)
                close(l->fd);
            l->fd = -1;
        }
    }
    for (int i = 0; i < t->nused; i++) {
        rx_free(t, t->used[i]); /* the links' receive buffers */
        free(t->used[i]->hs);
        free(t->used[i]);
    }
    for (int k = 0; t->pends.slots && k < t->pends.n; k++)
        free(pend_at(t, k)->pr);
    bfo_tp_pends_fini(&t->pends);
    for (int r = 0; r < BFO_MAX_RAILS; r++) {
        if (t->lfd[r] >= 0)
            close(t->lfd[r]);
        if (t->ufd[r] >= 0)
            close(t->ufd[r]);
    }
    if (t->ep >= 0)
        close(t->ep);
    free(t->lk);
    free(t->used);
    free(t->ents);
    free(t);
}
