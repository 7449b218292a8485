// SPDX-License-Identifier: BSD-3-Clause
/* bfo_tp_os.h - what the transports share of the system.
 *
 * Part of bfo's backends (header-only; with bfo_tp.h, the rest of what the
 * transports share).  For the transports' own files, built with
 * _GNU_SOURCE (accept4, clock_gettime): not for the verbs glue, which the
 * simulator's tests build as plain C11.
 *   - bfo_tp_now: the clock (CLOCK_MONOTONIC, nanoseconds);
 *   - bfo_tp_tag, bfo_tp_watch: an fd in the epoll set, tagged;
 *   - bfo_tp_pends: accepted connections whose hello has not come yet;
 *   - bfo_tp_send_fds: a message with fds in it (SCM_RIGHTS);
 *   - BFO_TP_BACKLOG: the listeners' backlog.
 */
#ifndef BFO_TP_OS_H
#define BFO_TP_OS_H

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bfo_tp.h"

#ifdef __cplusplus
extern "C" {
#endif

/* CLOCK_MONOTONIC in nanoseconds: every transport's `now`. */
static inline uint64_t bfo_tp_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The backlog of every listener (TCP's, shm's unix socket, verbs' TCP
 * exchange of queue pairs).  A rank may be dialled by every other rank of
 * its host at once while it is not scheduled (128 ranks on 2 cores:
 * seconds); with a backlog of 128 the dials past it failed at once (shm:
 * connect() says EAGAIN, the dial fails and the engine connects another
 * rail) or had their SYN dropped (TCP: the kernel retries it after 1 s,
 * the connect timeout).  The kernel caps it at net.core.somaxconn (4096
 * since Linux 5.4). */
#define BFO_TP_BACKLOG 4096

/* ---------------------------------------------------------------- epoll */

/* An epoll tag: the kind of fd (the transport's EV_*), the generation of
 * what it belongs to (an event of an fd since replaced is recognised as
 * stale by it: its low 28 bits), and its index. */
static inline uint64_t bfo_tp_tag(int type, uint32_t gen, int idx)
{
    return ((uint64_t)type << 60) | ((uint64_t)(gen & 0x0fffffffu) << 32) | (uint32_t)idx;
}

/* fd joins the epoll set ep for `events`, tagged: 0, or -1 (errno set). */
static inline int bfo_tp_watch(int ep, int fd, uint32_t events, uint64_t tag)
{
    struct epoll_event ev;
    ev.events = events;
    ev.data.u64 = tag;
    return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
}

/* ------------------------------------------------------ pending accepts */

/* An accepted connection whose hello has not named its (peer, rail) yet;
 * the first member of a transport's slot, which adds what it reads. */
typedef struct bfo_tp_pend {
    int fd, rail;      /* fd -1: the slot is free */
    uint32_t gen;      /* taken connections, for stale epoll events (bfo_tp_tag) */
    uint64_t deadline; /* its hello is due by then */
} bfo_tp_pend;

#define BFO_TP_PENDS_FIRST 16 /* slots at first, and in each chunk */

/* The slots, and where a taken connection goes. */
typedef struct bfo_tp_pends {
    void **slots;        /* n slots of `stride` bytes, each beginning with its bfo_tp_pend, in
                          * chunks of BFO_TP_PENDS_FIRST made as needed: a slot never moves
                          * (a transport's handshake keeps a pointer to its slot across
                          * progress calls, while other connections are accepted) */
    size_t stride;
    int n;
    int max;             /* ... grown (doubled) up to this many as accepts find every one taken */
    int ep;              /* the epoll set a connection joins, -1: none (the transport polls) */
    uint32_t events;     /* ... for these events, */
    int ev_type;         /* ... tagged bfo_tp_tag(ev_type, gen, slot) */
    uint64_t timeout_ns; /* the hello is due this long after the accept */
} bfo_tp_pends;

static inline bfo_tp_pend *bfo_tp_pend_at(const bfo_tp_pends *pt, int k)
{
    return (bfo_tp_pend *)(void *)((char *)pt->slots[k / BFO_TP_PENDS_FIRST] +
                                   (size_t)(k % BFO_TP_PENDS_FIRST) * pt->stride);
}

/* Free slots k from `from` on: cleared, no connection. */
static inline void bfo_tp_pends_clear(bfo_tp_pends *pt, int from)
{
    for (int k = from; k < pt->n; k++) {
        memset(bfo_tp_pend_at(pt, k), 0, pt->stride);
        bfo_tp_pend_at(pt, k)->fd = -1;
    }
}

/* Slots for what size ranks can dial on nrails rails at once, with room
 * for repeats, at most: BFO_TP_PENDS_FIRST of them at first, doubled when
 * an accept finds every one taken (bfo_tp_pends_grow), so that a peer
 * that never dials costs none (they were all made here: 4 per peer and
 * rail, 448 B of TCP's and 96 of shm's per idle peer).  They grow by
 * chunks and never move: a pointer to a slot stays good (shm's handshake
 * held one while accepts grew the slots: a double free at 64 ranks, when
 * they were one block moved by realloc).  0, or -1 (no memory). */
static inline int bfo_tp_pends_init(bfo_tp_pends *pt, size_t stride, int size, int nrails)
{
    pt->stride = stride;
    pt->max = 4 * size * nrails + 8;
    pt->n = pt->max < BFO_TP_PENDS_FIRST ? pt->max : BFO_TP_PENDS_FIRST;
    pt->slots = (void **)calloc((size_t)(pt->max + BFO_TP_PENDS_FIRST - 1) / BFO_TP_PENDS_FIRST, sizeof *pt->slots);
    if (!pt->slots || !(pt->slots[0] = malloc(BFO_TP_PENDS_FIRST * stride))) {
        free(pt->slots);
        pt->slots = NULL;
        return -1;
    }
    bfo_tp_pends_clear(pt, 0);
    return 0;
}

/* Every slot taken: twice as many (up to max).  0, or -1 (at max already,
 * or no memory: the slots stay as they were). */
static inline int bfo_tp_pends_grow(bfo_tp_pends *pt)
{
    int old = pt->n, n = pt->n > pt->max / 2 ? pt->max : 2 * pt->n, got = old;
    if (old >= pt->max)
        return -1;
    /* old is a whole number of chunks (only max is not, and nothing grows
     * past it): chunks for [old, n), as many as memory gives */
    for (int c = old / BFO_TP_PENDS_FIRST; got < n; c++, got += BFO_TP_PENDS_FIRST)
        if (!(pt->slots[c] = malloc(BFO_TP_PENDS_FIRST * pt->stride)))
            break;
    if (got == old)
        return -1;
    pt->n = got < n ? got : n;
    bfo_tp_pends_clear(pt, old);
    return 0;
}

/* Every accepted connection's deadline moved on by the skip bfo_link_gap
 * returned (bfo_link.h, "time the transport did not run"): a hello that
 * came while this side did not run is read before its slot is judged. */
static inline void bfo_tp_pends_skip(bfo_tp_pends *pt, uint64_t skip, uint64_t now)
{
    for (int k = 0; skip && k < pt->n; k++) {
        bfo_tp_pend *p = bfo_tp_pend_at(pt, k);
        if (p->fd >= 0)
            p->deadline = bfo_link_skip_deadline(p->deadline, skip, now + pt->timeout_ns);
    }
}

/* The slot's connection closed (it leaves the epoll set first); the slot is free. */
static inline void bfo_tp_pend_close(const bfo_tp_pends *pt, bfo_tp_pend *p)
{
    if (pt->ep >= 0)
        epoll_ctl(pt->ep, EPOLL_CTL_DEL, p->fd, NULL);
    close(p->fd);
    p->fd = -1;
}

/* One connection waiting on listening socket lfd (of rail), accepted into a
 * free slot (deadline armed, the epoll set joined): its slot, or -1 when
 * none is waiting.  One that finds every slot taken, or cannot join the
 * epoll set, is refused (logged) and the next one accepted. */
static inline int bfo_tp_accept(bfo_tp_pends *pt, const bfo_tp_log *lg, int lfd, int rail, uint64_t now)
{
    for (;;) {
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC), k;
        bfo_tp_pend *p = NULL;
        if (fd < 0) {
            /* out of descriptors: the connection stays queued and the
             * listener readable, so this comes back at every progress;
             * said once a second (with how often meanwhile), not each time */
            static uint64_t said_at, since;
            int full = errno == EMFILE || errno == ENFILE;
            if (full && said_at && now - said_at < 1000000000ull) {
                since++;
                return -1;
            }
            if (full) {
                bfo_tp_logf(lg, 1, "rail %d: accept: %s (%llu more since it was last said; the open-files limit: "
                                   "docs/running.md)", rail, strerror(errno), (unsigned long long)since);
                said_at = now ? now : 1;
                since = 0;
            } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                bfo_tp_logf(lg, 1, "rail %d: accept: %s", rail, strerror(errno));
            return -1;
        }
        for (k = 0; k < pt->n && (p = bfo_tp_pend_at(pt, k))->fd >= 0; k++)
            ;
        if (k == pt->n && bfo_tp_pends_grow(pt) == 0)
            p = bfo_tp_pend_at(pt, k); /* the first new one */
        if (k == pt->n) {
            bfo_tp_logf(lg, 1, "rail %d: too many connections without a hello; refused", rail);
            close(fd);
            continue;
        }
        p->fd = fd;
        p->rail = rail;
        p->gen++;
        p->deadline = now + pt->timeout_ns;
        if (pt->ep < 0 || bfo_tp_watch(pt->ep, fd, pt->events, bfo_tp_tag(pt->ev_type, p->gen, k)) == 0)
            return k;
        bfo_tp_logf(lg, 1, "rail %d: epoll: %s; connection refused", rail, strerror(errno));
        close(fd);
        p->fd = -1;
    }
}

/* Something has come on fd (data, or its peer closed it), unread: an
 * accepted connection's hello may wait there past its deadline when this
 * side did not look in time (it was not scheduled, or more sockets were
 * ready than one epoll_wait returns): the lateness is then this side's,
 * not the dialer's, and the hello is read before the connection is
 * judged. */
static inline int bfo_tp_readable(int fd)
{
    struct pollfd q;
    q.fd = fd;
    q.events = POLLIN;
    q.revents = 0;
    return poll(&q, 1, 0) > 0;
}

/* Reads what has come of a hello of `want` bytes on nonblocking fd into
 * buf, *got bytes of it there already: 1 when it is complete, 0 when more
 * is to come, BFO_TP_EOF when the peer closed the connection, BFO_TP_ERR
 * when reading failed. */
enum { BFO_TP_EOF = -1, BFO_TP_ERR = -2 };
static inline int bfo_tp_read_hello(int fd, uint8_t *buf, size_t *got, size_t want)
{
    ssize_t n = read(fd, buf + *got, want - *got);
    if (n == 0)
        return BFO_TP_EOF;
    if (n < 0)
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : BFO_TP_ERR;
    *got += (size_t)n;
    return *got == want;
}

/* Every slot's connection closed, the slots freed. */
static inline void bfo_tp_pends_fini(bfo_tp_pends *pt)
{
    for (int k = 0; pt->slots && k < pt->n; k++)
        if (bfo_tp_pend_at(pt, k)->fd >= 0)
            close(bfo_tp_pend_at(pt, k)->fd);
    for (int c = 0; pt->slots && c * BFO_TP_PENDS_FIRST < pt->n; c++)
        free(pt->slots[c]);
    free(pt->slots);
    pt->slots = NULL;
}

/* ------------------------------------------------------ fds in a message */

/* Sends a message of len bytes on fd with nfds (0 to 2) fds in it
 * (SCM_RIGHTS), not blocking; 0, or an errno (EIO: sent in part).  For
 * shm's hellos, and for its tests, which send as a dialer does. */
static inline int bfo_tp_send_fds(int fd, const uint8_t *buf, size_t len, const int *fds, int nfds)
{
    union {
        struct cmsghdr c;
        char buf[CMSG_SPACE(sizeof(int) * 2)];
    } u;
    struct iovec iov = { (void *)(uintptr_t)buf, len };
    struct msghdr mh;
    struct cmsghdr *cm;
    memset(&mh, 0, sizeof mh);
    memset(&u, 0, sizeof u);
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    if (nfds > 0) { /* a tie answer carries none */
        mh.msg_control = u.buf;
        mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
        cm = CMSG_FIRSTHDR(&mh);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
        memcpy(CMSG_DATA(cm), fds, sizeof(int) * (size_t)nfds);
    }
    for (;;) {
        ssize_t n = sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n == (ssize_t)len)
            return 0;
        if (n < 0 && errno == EINTR)
            continue;
        return n < 0 ? errno : EIO;
    }
}

#ifdef __cplusplus
}
#endif
#endif /* BFO_TP_OS_H */
