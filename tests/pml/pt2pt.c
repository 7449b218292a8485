// SPDX-License-Identifier: BSD-3-Clause
/* pt2pt.c - point-to-point cases: send modes over sizes, synchronous and
 * ready semantics, wildcards, ordering, tags out of order, probes, cancel,
 * persistent requests, self, MPI_PROC_NULL, Sendrecv(_replace).
 * Usage: mpirun -np N pt2pt CASE   (N >= 2; pairs are formed me ^ d) */
#define _GNU_SOURCE /* RUSAGE_THREAD */
#include "common.h"

#include <sys/resource.h>

static const size_t sizes[] = {0, 1, 8, 4096, 65535, 65536, 65537,
                               1u << 20, 4u << 20, 32u << 20};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))
#define MAXSZ (32u << 20)
#define SLACK 16 /* receives post this many bytes more than is sent */
#define TAG_SIG 30000

enum { M_STD, M_BUF, M_SYN, M_RDY, NMODES };
static const char *mname[NMODES] = {"standard", "buffered", "synchronous", "ready"};

static unsigned char *sbuf, *rbuf;

/* pairing rounds: round d in 1..npow2-1, partner me ^ d (none if >= np) */
static int npow2(void)
{
    int p = 1;
    while (p < np) p <<= 1;
    return p;
}

static void alloc_bufs(size_t n)
{
    sbuf = xmalloc(n + SLACK);
    rbuf = xmalloc(n + SLACK);
}

static void attach_bsend(size_t n)
{
    int sz = (int)(2 * (n + MPI_BSEND_OVERHEAD) + 4096);
    CHK(MPI_Buffer_attach(xmalloc(sz), sz));
}

static void detach_bsend(void)
{
    void *b;
    int sz;
    CHK(MPI_Buffer_detach(&b, &sz));
    free(b);
}

/* ---- modes: every mode, blocking and not, over every size ---- */

static void send_blocking(int mode, size_t n, int peer, int tag, int key)
{
    fill(sbuf, n, me, key);
    switch (mode) {
    case M_STD: CHK(MPI_Send(sbuf, (int)n, MPI_BYTE, peer, tag, MPI_COMM_WORLD)); break;
    case M_BUF: CHK(MPI_Bsend(sbuf, (int)n, MPI_BYTE, peer, tag, MPI_COMM_WORLD)); break;
    case M_SYN: CHK(MPI_Ssend(sbuf, (int)n, MPI_BYTE, peer, tag, MPI_COMM_WORLD)); break;
    case M_RDY:
        CHK(MPI_Recv(NULL, 0, MPI_BYTE, peer, TAG_SIG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHK(MPI_Rsend(sbuf, (int)n, MPI_BYTE, peer, tag, MPI_COMM_WORLD));
        break;
    }
}

static void recv_blocking(int mode, size_t n, int peer, int tag, int key, const char *how)
{
    MPI_Status st;
    memset(rbuf, SENTINEL, n + SLACK);
    if (mode == M_RDY) {
        MPI_Request r;
        CHK(MPI_Irecv(rbuf, (int)n + SLACK, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &r));
        CHK(MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_SIG, MPI_COMM_WORLD));
        CHK(MPI_Wait(&r, &st));
    } else {
        CHK(MPI_Recv(rbuf, (int)n + SLACK, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &st));
    }
    expect_status(&st, peer, tag, MPI_BYTE, n, "%s %s %zu B", how, mname[mode], n);
    expect_bytes(rbuf, n, peer, key, "%s %s %zu B", how, mname[mode], n);
    expect_untouched(rbuf + n, SLACK, "%s %s %zu B (past the end)", how, mname[mode], n);
}

static void exchange_nonblocking(int mode, int si, int peer, int tag, int key)
{
    size_t n = sizes[si];
    MPI_Request rq[2];
    MPI_Status st[2];
    memset(rbuf, SENTINEL, n + SLACK);
    CHK(MPI_Irecv(rbuf, (int)n + SLACK, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &rq[0]));
    if (mode == M_RDY) /* both receives are posted: tell each other */
        CHK(MPI_Sendrecv(NULL, 0, MPI_BYTE, peer, TAG_SIG, NULL, 0, MPI_BYTE, peer, TAG_SIG,
                         MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    fill(sbuf, n, me, key);
    switch (mode) {
    case M_STD: CHK(MPI_Isend(sbuf, (int)n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &rq[1])); break;
    case M_BUF: CHK(MPI_Ibsend(sbuf, (int)n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &rq[1])); break;
    case M_SYN: CHK(MPI_Issend(sbuf, (int)n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &rq[1])); break;
    case M_RDY: CHK(MPI_Irsend(sbuf, (int)n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &rq[1])); break;
    }
    /* vary the completion call */
    MPI_Status rst;
    switch ((si + mode) % 5) {
    case 0:
        CHK(MPI_Waitall(2, rq, st));
        rst = st[0];
        break;
    case 1:
        for (int k = 0; k < 2; k++) {
            int idx;
            MPI_Status s;
            CHK(MPI_Waitany(2, rq, &idx, &s));
            EXPECT(idx == 0 || idx == 1, "Waitany index %d", idx);
            if (idx == 0) rst = s;
        }
        break;
    case 2: {
        int flag = 0;
        while (!flag) CHK(MPI_Testall(2, rq, &flag, st));
        rst = st[0];
        break;
    }
    case 3: {
        int done = 0, outc, idx[2];
        while (done < 2) {
            CHK(MPI_Waitsome(2, rq, &outc, idx, st));
            EXPECT(outc != MPI_UNDEFINED, "Waitsome: MPI_UNDEFINED with %d left", 2 - done);
            for (int k = 0; k < outc; k++)
                if (idx[k] == 0) rst = st[k];
            done += outc;
        }
        EXPECT(rq[0] == MPI_REQUEST_NULL && rq[1] == MPI_REQUEST_NULL, "Waitsome left requests");
        break;
    }
    default:
        CHK(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
        CHK(MPI_Wait(&rq[0], &rst));
        break;
    }
    expect_status(&rst, peer, tag, MPI_BYTE, n, "nonblocking %s %zu B", mname[mode], n);
    expect_bytes(rbuf, n, peer, key, "nonblocking %s %zu B", mname[mode], n);
    expect_untouched(rbuf + n, SLACK, "nonblocking %s %zu B (past the end)", mname[mode], n);
}

static void case_modes(void)
{
    alloc_bufs(MAXSZ);
    attach_bsend(MAXSZ);
    for (int si = 0; si < NSIZES; si++)
        for (int mode = 0; mode < NMODES; mode++)
            for (int d = 1; d < npow2(); d++) {
                int peer = me ^ d;
                int tag = 100 + mode * 10, key = tag + si * 1000 + d * 100000;
                if (peer < np) {
                    /* blocking: the lower rank sends first, then they swap */
                    if (me < peer) {
                        send_blocking(mode, sizes[si], peer, tag, key);
                        recv_blocking(mode, sizes[si], peer, tag, key, "blocking");
                    } else {
                        recv_blocking(mode, sizes[si], peer, tag, key, "blocking");
                        send_blocking(mode, sizes[si], peer, tag, key);
                    }
                    exchange_nonblocking(mode, si, peer, tag + 1, key + 1);
                }
                CHK(MPI_Barrier(MPI_COMM_WORLD));
            }
    detach_bsend();
}

/* ---- ssync: a synchronous send does not complete before its receive is
 * posted. The receiver sleeps 200 ms after a barrier, then notes the time
 * (CLOCK_MONOTONIC, one clock for every process of a host) and posts the
 * receive; the sender notes when its Issend (Test in a loop) or Ssend
 * completed; completion must not precede the post. Sender and receiver
 * must be on one host (they are: the rails are loopback addresses). ---- */
static void case_ssync(void)
{
    static const size_t ss[] = {0, 8, 4096, 65537, 1u << 20};
    char host[MPI_MAX_PROCESSOR_NAME], phost[MPI_MAX_PROCESSOR_NAME];
    int hl;
    alloc_bufs(1u << 20);
    CHK(MPI_Get_processor_name(host, &hl));
    int peer = me ^ 1, sender = !(me & 1);
    if (peer < np) {
        CHK(MPI_Sendrecv(host, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, peer, TAG_SIG, phost, MPI_MAX_PROCESSOR_NAME,
                         MPI_CHAR, peer, TAG_SIG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        EXPECT(strcmp(host, phost) == 0, "ssync needs both ranks of a pair on one host (%s, %s)", host, phost);
    }
    for (int i = 0; i < 5; i++)
        for (int blocking = 0; blocking < 2; blocking++) {
            size_t n = ss[i];
            int tag = 200 + i * 2 + blocking;
            const char *call = blocking ? "MPI_Ssend" : "MPI_Issend";
            if (peer >= np) {
                CHK(MPI_Barrier(MPI_COMM_WORLD));
                CHK(MPI_Barrier(MPI_COMM_WORLD));
                continue;
            }
            if (sender) {
                MPI_Request r;
                int flag = 0, tests = 0;
                double t_done, t_post;
                fill(sbuf, n, me, tag);
                if (blocking) {
                    CHK(MPI_Barrier(MPI_COMM_WORLD));
                    CHK(MPI_Ssend(sbuf, (int)n, MPI_BYTE, peer, tag, MPI_COMM_WORLD));
                } else {
                    CHK(MPI_Issend(sbuf, (int)n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &r));
                    CHK(MPI_Barrier(MPI_COMM_WORLD));
                    while (!flag) {
                        CHK(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
                        tests++;
                    }
                }
                t_done = now();
                CHK(MPI_Recv(&t_post, 1, MPI_DOUBLE, peer, TAG_SIG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                EXPECT(t_done >= t_post, "%s of %zu B completed %.3f s before its receive was posted "
                       "(after %d MPI_Test)", call, n, t_post - t_done, tests);
            } else {
                MPI_Status st;
                double t_post;
                CHK(MPI_Barrier(MPI_COMM_WORLD));
                msleep(200);
                memset(rbuf, SENTINEL, n + SLACK);
                t_post = now();
                CHK(MPI_Recv(rbuf, (int)n + SLACK, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &st));
                expect_status(&st, peer, tag, MPI_BYTE, n, "%s %zu B", call, n);
                expect_bytes(rbuf, n, peer, tag, "%s %zu B", call, n);
                CHK(MPI_Send(&t_post, 1, MPI_DOUBLE, peer, TAG_SIG, MPI_COMM_WORLD));
            }
            CHK(MPI_Barrier(MPI_COMM_WORLD));
        }
}

/* ---- small_at_once: a standard send of 0 and 8 bytes completes while
 * its receiver sleeps (it is buffered: the MPI standard allows it, ob1 and
 * bfo do it).  The receiver sleeps 400 ms after a barrier; the sender
 * sends 100 ms into that sleep (so that the receiver is surely not in a
 * progress call that could acknowledge the frame), and must be done
 * within 150 ms.  An empty send that waited for the peer's transport to
 * acknowledge it held Open MPI's barriers (made of them) up to a delayed
 * ack per round, and here the rest of the sleep. ---- */
static void case_small_at_once(void)
{
    static const size_t ss[] = {0, 8};
    int peer = me ^ 1, sender = !(me & 1);
    alloc_bufs(64);
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 2; k++) {
            size_t n = ss[i];
            int tag = 260 + i * 2 + k;
            CHK(MPI_Barrier(MPI_COMM_WORLD));
            if (peer >= np)
                continue;
            if (sender) {
                double t0, took;
                fill(sbuf, n, me, tag);
                msleep(100);
                t0 = now();
                CHK(MPI_Send(sbuf, (int)n, MPI_BYTE, peer, tag, MPI_COMM_WORLD));
                took = now() - t0;
                EXPECT(took < 0.15, "MPI_Send of %zu B took %.3f s: it waited for the receiver (asleep)", n, took);
            } else {
                MPI_Status st;
                msleep(400);
                memset(rbuf, SENTINEL, n + SLACK);
                CHK(MPI_Recv(rbuf, (int)n + SLACK, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &st));
                expect_status(&st, peer, tag, MPI_BYTE, n, "MPI_Send %zu B", n);
                expect_bytes(rbuf, n, peer, tag, "MPI_Send %zu B", n);
            }
        }
    CHK(MPI_Barrier(MPI_COMM_WORLD));
}

/* ---- wildcard: ANY_SOURCE / ANY_TAG in every combination; per-source
 * order; tags received out of order ---- */
#define WM 60
#define WTAGS 13
static int wtag(int src, int k) { return (k * 7 + src * 3) % WTAGS; }
static size_t wsize(int src, int k)
{
    if (k % 15 == 14) return 300000;   /* rendezvous on any transport */
    if (k % 5 == 4) return 65537;
    return (size_t)((k * 13 + src) % 200);  /* 0 .. 199 */
}
static int wkey(int k, int tag) { return k * 64 + tag + 7; }
#define WMAX (300000 + SLACK)

static void wcheck(MPI_Status *st, const unsigned char *buf, int k, const char *phase)
{
    int src = st->MPI_SOURCE;
    EXPECT(k < WM, "%s: more than %d messages from %d", phase, WM, src);
    int tag = wtag(src, k);
    expect_status(st, src, tag, MPI_BYTE, wsize(src, k),
                  "%s: message #%d from rank %d (per-source order)", phase, k, src);
    expect_bytes(buf, wsize(src, k), src, wkey(k, tag), "%s: message #%d from rank %d", phase, k, src);
}

/* next k from src with tag after last */
static int wnext(int src, int tag, int last)
{
    for (int k = last + 1; k < WM; k++)
        if (wtag(src, k) == tag) return k;
    return WM;
}

static void case_wildcard(void)
{
    unsigned char **sb = xmalloc(sizeof(*sb) * WM);
    MPI_Request *srq = xmalloc(sizeof(*srq) * WM * np);
    int nrecv = (np - 1) * WM;
    unsigned char *rb = xmalloc((size_t)WMAX * nrecv);
    MPI_Request *rrq = xmalloc(sizeof(*rrq) * nrecv);
    MPI_Status *rst = xmalloc(sizeof(*rst) * nrecv);
    int *last = xmalloc(sizeof(int) * np * WTAGS);
    for (int k = 0; k < WM; k++) {
        sb[k] = xmalloc(wsize(me, k) + 1);
        fill(sb[k], wsize(me, k), me, wkey(k, wtag(me, k)));
    }
    for (int phase = 0; phase < 5; phase++) {
        static const char *pn[] = {"ANY_SOURCE+ANY_TAG", "source+ANY_TAG (all unexpected)",
                                   "ANY_SOURCE+tag", "source+tag, tags in reverse order",
                                   "ANY_SOURCE+ANY_TAG preposted"};
        int ns = 0;
        for (int i = 0; i < np * WTAGS; i++) last[i] = -1;
        if (phase == 4) {
            for (int i = 0; i < nrecv; i++)
                CHK(MPI_Irecv(rb + (size_t)i * WMAX, WMAX, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG,
                              MPI_COMM_WORLD, &rrq[i]));
            CHK(MPI_Barrier(MPI_COMM_WORLD));
        }
        for (int p = 0; p < np; p++) {
            if (p == me) continue;
            for (int k = 0; k < WM; k++)
                CHK(MPI_Isend(sb[k], (int)wsize(me, k), MPI_BYTE, p, wtag(me, k), MPI_COMM_WORLD,
                              &srq[ns++]));
        }
        MPI_Status st;
        if (phase == 0) {
            for (int i = 0; i < nrecv; i++) {
                CHK(MPI_Recv(rb, WMAX, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
                EXPECT(st.MPI_SOURCE >= 0 && st.MPI_SOURCE < np && st.MPI_SOURCE != me,
                       "%s: MPI_SOURCE %d", pn[phase], st.MPI_SOURCE);
                wcheck(&st, rb, ++last[st.MPI_SOURCE], pn[phase]);
            }
        } else if (phase == 1) {
            CHK(MPI_Barrier(MPI_COMM_WORLD));
            for (int p = np - 1; p >= 0; p--) {
                if (p == me) continue;
                for (int k = 0; k < WM; k++) {
                    CHK(MPI_Recv(rb, WMAX, MPI_BYTE, p, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
                    wcheck(&st, rb, k, pn[phase]);
                }
            }
        } else if (phase == 2) {
            for (int tag = 0; tag < WTAGS; tag++) {
                int cnt = 0;
                for (int p = 0; p < np; p++)
                    for (int k = 0; k < WM && p != me; k++) cnt += wtag(p, k) == tag;
                for (int i = 0; i < cnt; i++) {
                    CHK(MPI_Recv(rb, WMAX, MPI_BYTE, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &st));
                    EXPECT(st.MPI_SOURCE >= 0 && st.MPI_SOURCE < np && st.MPI_SOURCE != me,
                           "%s: MPI_SOURCE %d", pn[phase], st.MPI_SOURCE);
                    int *l = &last[st.MPI_SOURCE * WTAGS + tag];
                    *l = wnext(st.MPI_SOURCE, tag, *l);
                    wcheck(&st, rb, *l, pn[phase]);
                }
            }
        } else if (phase == 3) {
            for (int tag = WTAGS - 1; tag >= 0; tag--)
                for (int p = 0; p < np; p++) {
                    if (p == me) continue;
                    for (int k = wnext(p, tag, -1); k < WM; k = wnext(p, tag, k)) {
                        CHK(MPI_Recv(rb, WMAX, MPI_BYTE, p, tag, MPI_COMM_WORLD, &st));
                        wcheck(&st, rb, k, pn[phase]);
                    }
                }
        } else {
            CHK(MPI_Waitall(nrecv, rrq, rst));
            for (int i = 0; i < nrecv; i++) {
                int s = rst[i].MPI_SOURCE;
                EXPECT(s >= 0 && s < np && s != me, "%s: MPI_SOURCE %d", pn[phase], s);
                wcheck(&rst[i], rb + (size_t)i * WMAX, ++last[s], pn[phase]);
            }
        }
        CHK(MPI_Waitall(ns, srq, MPI_STATUSES_IGNORE));
        CHK(MPI_Barrier(MPI_COMM_WORLD));
    }
}

/* ---- order: many messages with one tag from each peer arrive in order,
 * small ones behind large (rendezvous) ones ---- */
#define NORD 2000
static size_t osize(int seq)
{
    if (seq % 100 == 99) return 1u << 20;
    if (seq % 37 == 36) return 65537;
    return 8 + seq % 24;
}

static void case_order(void)
{
    size_t off[NORD + 1];
    off[0] = 0;
    for (int s = 0; s < NORD; s++) off[s + 1] = off[s] + osize(s);
    unsigned char *sb = xmalloc(off[NORD]);
    unsigned char *rb = xmalloc(off[NORD] * (np - 1));
    MPI_Request *srq = xmalloc(sizeof(*srq) * NORD * np);
    MPI_Request *rrq = xmalloc(sizeof(*rrq) * NORD * np);
    MPI_Status *rst = xmalloc(sizeof(*rst) * NORD * np);
    unsigned char *tmp = xmalloc((1u << 20) + SLACK);
    int tag = 7;
    for (int s = 0; s < NORD; s++) fill(sb + off[s], osize(s), me, s);
    for (int v = 0; v < 3; v++) {
        static const char *vn[] = {"preposted receives", "unexpected messages", "ANY_SOURCE"};
        int ns = 0, nr = 0;
        if (v == 0) {
            for (int p = 0, j = 0; p < np; p++) {
                if (p == me) continue;
                for (int s = 0; s < NORD; s++)
                    CHK(MPI_Irecv(rb + j * off[NORD] + off[s], (int)osize(s), MPI_BYTE, p, tag,
                                  MPI_COMM_WORLD, &rrq[nr++]));
                j++;
            }
            CHK(MPI_Barrier(MPI_COMM_WORLD));
        }
        for (int p = 0; p < np; p++) {
            if (p == me) continue;
            for (int s = 0; s < NORD; s++)
                CHK(MPI_Isend(sb + off[s], (int)osize(s), MPI_BYTE, p, tag, MPI_COMM_WORLD, &srq[ns++]));
        }
        if (v == 0) {
            CHK(MPI_Waitall(nr, rrq, rst));
            for (int p = 0, j = 0, i = 0; p < np; p++) {
                if (p == me) continue;
                for (int s = 0; s < NORD; s++, i++) {
                    expect_status(&rst[i], p, tag, MPI_BYTE, osize(s), "%s: #%d from %d", vn[v], s, p);
                    expect_bytes(rb + j * off[NORD] + off[s], osize(s), p, s, "%s: #%d from %d",
                                 vn[v], s, p);
                }
                j++;
            }
        } else if (v == 1) {
            CHK(MPI_Barrier(MPI_COMM_WORLD));
            for (int p = 0; p < np; p++) {
                if (p == me) continue;
                for (int s = 0; s < NORD; s++) {
                    MPI_Status st;
                    CHK(MPI_Recv(tmp, (1 << 20) + SLACK, MPI_BYTE, p, tag, MPI_COMM_WORLD, &st));
                    expect_status(&st, p, tag, MPI_BYTE, osize(s), "%s: #%d from %d", vn[v], s, p);
                    expect_bytes(tmp, osize(s), p, s, "%s: #%d from %d", vn[v], s, p);
                }
            }
        } else {
            int next[64] = {0};
            for (int i = 0; i < NORD * (np - 1); i++) {
                MPI_Status st;
                CHK(MPI_Recv(tmp, (1 << 20) + SLACK, MPI_BYTE, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &st));
                int p = st.MPI_SOURCE;
                EXPECT(p >= 0 && p < np && p != me && p < 64, "%s: MPI_SOURCE %d", vn[v], p);
                int s = next[p]++;
                EXPECT(s < NORD, "%s: too many messages from %d", vn[v], p);
                expect_status(&st, p, tag, MPI_BYTE, osize(s), "%s: #%d from %d", vn[v], s, p);
                expect_bytes(tmp, osize(s), p, s, "%s: #%d from %d", vn[v], s, p);
            }
        }
        CHK(MPI_Waitall(ns, srq, MPI_STATUSES_IGNORE));
        CHK(MPI_Barrier(MPI_COMM_WORLD));
    }
}

/* ---- tags: one message per tag, received in reverse order, or preposted
 * in a shuffled order ---- */
#define NTAGS 64
static size_t tsize(int t)
{
    static const size_t s[] = {0, 8, 4096, 65537, 1u << 20, 100};
    return s[t % 6];
}

static void case_tags(void)
{
    unsigned char *sb[NTAGS], *rb[NTAGS];
    MPI_Request srq[NTAGS], rrq[NTAGS];
    for (int t = 0; t < NTAGS; t++) {
        sb[t] = xmalloc(tsize(t) + SLACK);
        rb[t] = xmalloc(tsize(t) + SLACK);
    }
    for (int d = 1; d < npow2(); d++) {
        int peer = me ^ d;
        for (int v = 0; v < 2 && peer < np; v++) {
            int key0 = d * 1000 + v * 100;
            if (v == 1) { /* prepost in a shuffled order, then the peer sends */
                for (int i = 0; i < NTAGS; i++) {
                    int t = (i * 29 + 11) % NTAGS;
                    memset(rb[t], SENTINEL, tsize(t) + SLACK);
                    CHK(MPI_Irecv(rb[t], (int)tsize(t) + SLACK, MPI_BYTE, peer, t, MPI_COMM_WORLD, &rrq[t]));
                }
                CHK(MPI_Sendrecv(NULL, 0, MPI_BYTE, peer, TAG_SIG, NULL, 0, MPI_BYTE, peer, TAG_SIG,
                                 MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            }
            for (int t = 0; t < NTAGS; t++) {
                fill(sb[t], tsize(t), me, key0 + t);
                CHK(MPI_Isend(sb[t], (int)tsize(t), MPI_BYTE, peer, t, MPI_COMM_WORLD, &srq[t]));
            }
            for (int t = NTAGS - 1; t >= 0; t--) {
                MPI_Status st;
                if (v == 0) {
                    memset(rb[t], SENTINEL, tsize(t) + SLACK);
                    CHK(MPI_Recv(rb[t], (int)tsize(t) + SLACK, MPI_BYTE, peer, t, MPI_COMM_WORLD, &st));
                } else {
                    CHK(MPI_Wait(&rrq[t], &st));
                }
                expect_status(&st, peer, t, MPI_BYTE, tsize(t), "tag %d of %d (%s)", t, NTAGS,
                              v ? "preposted shuffled" : "received in reverse");
                expect_bytes(rb[t], tsize(t), peer, key0 + t, "tag %d", t);
                expect_untouched(rb[t] + tsize(t), SLACK, "tag %d past the end", t);
            }
            CHK(MPI_Waitall(NTAGS, srq, MPI_STATUSES_IGNORE));
        }
        CHK(MPI_Barrier(MPI_COMM_WORLD));
    }
}

/* ---- probe: Probe, Iprobe, Mprobe, Improbe, Mrecv, Imrecv with every
 * wildcard combination ---- */
enum { P_PROBE, P_IPROBE, P_MPROBE_MRECV, P_IMPROBE_IMRECV, P_MPROBE_IMRECV, P_IMPROBE_MRECV, NPK };
static const char *pkname[NPK] = {"Probe+Recv", "Iprobe+Recv", "Mprobe+Mrecv", "Improbe+Imrecv",
                                  "Mprobe+Imrecv", "Improbe+Mrecv"};

static void probe_recv(int kind, int src, int tag, int psrc, int ptag, size_t n, int key, unsigned char *buf)
{
    MPI_Status st, st2;
    MPI_Message msg = MPI_MESSAGE_NULL;
    int flag = 0;
    char what[160];
    snprintf(what, sizeof what, "%s source %s tag %s, %zu B", pkname[kind],
             psrc == MPI_ANY_SOURCE ? "ANY" : "given", ptag == MPI_ANY_TAG ? "ANY" : "given", n);
    switch (kind) {
    case P_PROBE: CHK(MPI_Probe(psrc, ptag, MPI_COMM_WORLD, &st)); break;
    case P_IPROBE:
        while (!flag) CHK(MPI_Iprobe(psrc, ptag, MPI_COMM_WORLD, &flag, &st));
        break;
    case P_MPROBE_MRECV:
    case P_MPROBE_IMRECV: CHK(MPI_Mprobe(psrc, ptag, MPI_COMM_WORLD, &msg, &st)); break;
    default:
        while (!flag) CHK(MPI_Improbe(psrc, ptag, MPI_COMM_WORLD, &flag, &msg, &st));
        break;
    }
    expect_status(&st, src, tag, MPI_BYTE, n, "%s: probe status", what);
    memset(buf, SENTINEL, n + SLACK);
    switch (kind) {
    case P_PROBE:
    case P_IPROBE:
        CHK(MPI_Recv(buf, (int)n + SLACK, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st2));
        break;
    case P_MPROBE_MRECV:
    case P_IMPROBE_MRECV:
        EXPECT(msg != MPI_MESSAGE_NULL && msg != MPI_MESSAGE_NO_PROC, "%s: no message handle", what);
        CHK(MPI_Mrecv(buf, (int)n + SLACK, MPI_BYTE, &msg, &st2));
        EXPECT(msg == MPI_MESSAGE_NULL, "%s: Mrecv did not set the message to MPI_MESSAGE_NULL", what);
        break;
    default: {
        MPI_Request r;
        EXPECT(msg != MPI_MESSAGE_NULL && msg != MPI_MESSAGE_NO_PROC, "%s: no message handle", what);
        CHK(MPI_Imrecv(buf, (int)n + SLACK, MPI_BYTE, &msg, &r));
        EXPECT(msg == MPI_MESSAGE_NULL, "%s: Imrecv did not set the message to MPI_MESSAGE_NULL", what);
        CHK(MPI_Wait(&r, &st2));
        break;
    }
    }
    expect_status(&st2, src, tag, MPI_BYTE, n, "%s: receive status", what);
    expect_bytes(buf, n, src, key, "%s", what);
    expect_untouched(buf + n, SLACK, "%s: past the end", what);
}

static void case_probe(void)
{
    static const size_t ps[] = {0, 8, 65537, 1u << 20};
    unsigned char *sb = xmalloc((1u << 20) + SLACK), *rb = xmalloc((2u << 20) + SLACK);
    unsigned char *sb2 = xmalloc((1u << 20) + 3);
    /* every kind x wildcard combination x size, between each pair, both ways */
    for (int d = 1; d < npow2(); d++) {
        int peer = me ^ d;
        for (int kind = 0; kind < NPK && peer < np; kind++)
            for (int wc = 0; wc < 4; wc++)
                for (int si = 0; si < 4; si++)
                    for (int dir = 0; dir < 2; dir++) {
                        int sending = (me < peer) == (dir == 0);
                        int tag = 300 + kind * 8 + wc * 2 + dir, key = tag * 10 + si;
                        if (sending) {
                            MPI_Request r;
                            fill(sb, ps[si], me, key);
                            CHK(MPI_Isend(sb, (int)ps[si], MPI_BYTE, peer, tag, MPI_COMM_WORLD, &r));
                            CHK(MPI_Wait(&r, MPI_STATUS_IGNORE));
                        } else {
                            probe_recv(kind, peer, tag, (wc & 1) ? MPI_ANY_SOURCE : peer,
                                       (wc & 2) ? MPI_ANY_TAG : tag, ps[si], key, rb);
                        }
                    }
        CHK(MPI_Barrier(MPI_COMM_WORLD));
    }
    /* a matched (mprobed) message is out of matching: a later probe sees
     * the next one, which is received first */
    for (int d = 1; d < npow2(); d++) {
        int peer = me ^ d;
        if (peer < np) {
            MPI_Request r[2];
            MPI_Status st, st1;
            MPI_Message m1, m2;
            fill(sb, 8, me, 1);
            fill(sb2, (1u << 20) + 3, me, 2);
            CHK(MPI_Isend(sb, 8, MPI_BYTE, peer, 400, MPI_COMM_WORLD, &r[0]));
            CHK(MPI_Isend(sb2, (1 << 20) + 3, MPI_BYTE, peer, 400, MPI_COMM_WORLD, &r[1]));
            CHK(MPI_Mprobe(peer, 400, MPI_COMM_WORLD, &m1, &st1));
            expect_status(&st1, peer, 400, MPI_BYTE, 8, "Mprobe of the first of two");
            CHK(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            expect_status(&st, peer, 400, MPI_BYTE, (1 << 20) + 3,
                          "Probe after Mprobe must see the second message");
            CHK(MPI_Mprobe(peer, 400, MPI_COMM_WORLD, &m2, &st));
            expect_status(&st, peer, 400, MPI_BYTE, (1 << 20) + 3, "Mprobe of the second");
            CHK(MPI_Mrecv(rb, (2 << 20), MPI_BYTE, &m2, &st));   /* second first */
            expect_status(&st, peer, 400, MPI_BYTE, (1 << 20) + 3, "Mrecv of the second");
            expect_bytes(rb, (1u << 20) + 3, peer, 2, "Mrecv of the second (received first)");
            CHK(MPI_Mrecv(rb, 100, MPI_BYTE, &m1, &st));
            expect_status(&st, peer, 400, MPI_BYTE, 8, "Mrecv of the first");
            expect_bytes(rb, 8, peer, 1, "Mrecv of the first (received second)");
            CHK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
        }
        CHK(MPI_Barrier(MPI_COMM_WORLD));
    }
    /* many sources at once: Improbe(ANY, ANY) then Mrecv/Imrecv alternately */
    {
        int per = 20, got[64] = {0};
        MPI_Request *r = xmalloc(sizeof(*r) * per * np);
        int ns = 0;
        fill(sb, 65537, me, 500);   /* every message is a prefix of this */
        for (int p = 0; p < np; p++) {
            if (p == me) continue;
            for (int k = 0; k < per; k++)
                CHK(MPI_Isend(sb, (int)(k % 4 == 3 ? 65537 : k * 10), MPI_BYTE, p, 500 + k,
                              MPI_COMM_WORLD, &r[ns++]));
        }
        for (int i = 0; i < per * (np - 1); i++) {
            MPI_Message m;
            MPI_Status st;
            int flag = 0;
            while (!flag) CHK(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &m, &st));
            int p = st.MPI_SOURCE, k = got[p]++;
            EXPECT(p >= 0 && p < np && p != me && k < per, "Improbe: source %d (#%d)", p, k);
            size_t n = k % 4 == 3 ? 65537 : (size_t)k * 10;
            expect_status(&st, p, 500 + k, MPI_BYTE, n, "Improbe(ANY,ANY) #%d from %d", k, p);
            if (i & 1) {
                MPI_Request rr;
                CHK(MPI_Imrecv(rb, 70000, MPI_BYTE, &m, &rr));
                CHK(MPI_Wait(&rr, &st));
            } else {
                CHK(MPI_Mrecv(rb, 70000, MPI_BYTE, &m, &st));
            }
            expect_status(&st, p, 500 + k, MPI_BYTE, n, "Mrecv/Imrecv #%d from %d", k, p);
            expect_bytes(rb, n, p, 500, "Mrecv/Imrecv #%d from %d", k, p);
        }
        CHK(MPI_Waitall(ns, r, MPI_STATUSES_IGNORE));
        free(r);
        CHK(MPI_Barrier(MPI_COMM_WORLD));
    }
    /* MPI_PROC_NULL */
    {
        MPI_Status st;
        MPI_Message m;
        MPI_Request r;
        int flag = 0;
        CHK(MPI_Probe(MPI_PROC_NULL, 5, MPI_COMM_WORLD, &st));
        expect_status(&st, MPI_PROC_NULL, MPI_ANY_TAG, MPI_BYTE, 0, "Probe(MPI_PROC_NULL)");
        CHK(MPI_Iprobe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
        EXPECT(flag, "Iprobe(MPI_PROC_NULL): flag false");
        expect_status(&st, MPI_PROC_NULL, MPI_ANY_TAG, MPI_BYTE, 0, "Iprobe(MPI_PROC_NULL)");
        CHK(MPI_Mprobe(MPI_PROC_NULL, 5, MPI_COMM_WORLD, &m, &st));
        EXPECT(m == MPI_MESSAGE_NO_PROC, "Mprobe(MPI_PROC_NULL): message is not MPI_MESSAGE_NO_PROC");
        expect_status(&st, MPI_PROC_NULL, MPI_ANY_TAG, MPI_BYTE, 0, "Mprobe(MPI_PROC_NULL)");
        memset(rb, SENTINEL, 16);
        CHK(MPI_Mrecv(rb, 16, MPI_BYTE, &m, &st));
        EXPECT(m == MPI_MESSAGE_NULL, "Mrecv(MPI_MESSAGE_NO_PROC) did not set MPI_MESSAGE_NULL");
        expect_status(&st, MPI_PROC_NULL, MPI_ANY_TAG, MPI_BYTE, 0, "Mrecv(MPI_MESSAGE_NO_PROC)");
        expect_untouched(rb, 16, "Mrecv(MPI_MESSAGE_NO_PROC)");
        flag = 0;
        CHK(MPI_Improbe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &m, &st));
        EXPECT(flag && m == MPI_MESSAGE_NO_PROC, "Improbe(MPI_PROC_NULL): flag %d, message %s", flag,
               m == MPI_MESSAGE_NO_PROC ? "NO_PROC" : "other");
        CHK(MPI_Imrecv(rb, 16, MPI_BYTE, &m, &r));
        CHK(MPI_Wait(&r, &st));
        expect_status(&st, MPI_PROC_NULL, MPI_ANY_TAG, MPI_BYTE, 0, "Imrecv(MPI_MESSAGE_NO_PROC)");
        expect_untouched(rb, 16, "Imrecv(MPI_MESSAGE_NO_PROC)");
    }
}

/* ---- cancel ---- */
static void pair_sync(int peer)
{
    CHK(MPI_Sendrecv(NULL, 0, MPI_BYTE, peer, TAG_SIG + 1, NULL, 0, MPI_BYTE, peer, TAG_SIG + 1,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE));
}

static void case_cancel(void)
{
    unsigned char *sb = xmalloc((1u << 20) + SLACK), *rb = xmalloc((4u << 20) + SLACK);
    int peer = me ^ 1, lower = me < peer;
    MPI_Status st;
    MPI_Request r;
    int flag;
    /* a posted, unmatched receive: cancelled; a later message with the
     * same envelope goes to the next receive, not to the cancelled one */
    for (int wc = 0; wc < 3; wc++) {
        int src = wc == 1 ? MPI_ANY_SOURCE : (peer < np ? peer : me);
        int tag = wc == 2 ? MPI_ANY_TAG : 600;
        memset(rb, SENTINEL, 64);
        CHK(MPI_Irecv(rb, 64, MPI_BYTE, src, tag, MPI_COMM_WORLD, &r));
        CHK(MPI_Cancel(&r));
        CHK(MPI_Wait(&r, &st));
        CHK(MPI_Test_cancelled(&st, &flag));
        EXPECT(flag, "a posted receive (wildcard combination %d) was not cancelled", wc);
        EXPECT(r == MPI_REQUEST_NULL, "Wait did not free the cancelled request");
        expect_untouched(rb, 64, "cancelled receive's buffer");
    }
    CHK(MPI_Barrier(MPI_COMM_WORLD));
    if (peer < np) {
        /* cancel one of two, then the peer sends: the other gets it */
        MPI_Request r2;
        CHK(MPI_Irecv(rb, 64, MPI_BYTE, peer, 601, MPI_COMM_WORLD, &r));
        CHK(MPI_Irecv(rb + 64, 64, MPI_BYTE, peer, 601, MPI_COMM_WORLD, &r2));
        CHK(MPI_Cancel(&r));
        CHK(MPI_Wait(&r, &st));
        CHK(MPI_Test_cancelled(&st, &flag));
        EXPECT(flag, "the first of two posted receives was not cancelled");
        pair_sync(peer);   /* the peer's two receives are posted too */
        fill(sb, 40, me, 601);
        CHK(MPI_Send(sb, 40, MPI_BYTE, peer, 601, MPI_COMM_WORLD));
        CHK(MPI_Wait(&r2, &st));
        CHK(MPI_Test_cancelled(&st, &flag));
        EXPECT(!flag, "the receive that got the message says cancelled");
        expect_status(&st, peer, 601, MPI_BYTE, 40, "receive after a cancelled one");
        expect_bytes(rb + 64, 40, peer, 601, "receive after a cancelled one");

        /* a matched receive cannot be cancelled: the sender's Ssend has
         * completed (so the receive matched) before the receiver cancels */
        static const size_t ms[] = {8, 65537, 4u << 20};
        for (int i = 0; i < 3; i++) {
            size_t n = ms[i];
            if (lower) {
                unsigned char *big = xmalloc(n);
                fill(big, n, me, 610 + i);
                CHK(MPI_Ssend(big, (int)n, MPI_BYTE, peer, 610 + i, MPI_COMM_WORLD));
                CHK(MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_SIG, MPI_COMM_WORLD));
                free(big);
            } else {
                memset(rb, SENTINEL, n + SLACK);
                CHK(MPI_Irecv(rb, (int)n + SLACK, MPI_BYTE, peer, 610 + i, MPI_COMM_WORLD, &r));
                CHK(MPI_Recv(NULL, 0, MPI_BYTE, peer, TAG_SIG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                CHK(MPI_Cancel(&r));
                CHK(MPI_Wait(&r, &st));
                CHK(MPI_Test_cancelled(&st, &flag));
                EXPECT(!flag, "a matched receive of %zu B was cancelled", n);
                expect_status(&st, peer, 610 + i, MPI_BYTE, n, "matched receive, cancel tried");
                expect_bytes(rb, n, peer, 610 + i, "matched receive of %zu B, cancel tried", n);
            }
        }
        /* cancel of a send may or may not succeed; either way the receiver
         * must see exactly what the sender's Test_cancelled says */
        static const size_t cs[] = {8, 65537, 1u << 20};
        for (int i = 0; i < 6; i++) {
            size_t n = cs[i % 3];
            int syn = i >= 3, tag = 620 + i;
            if (lower) {
                int c;
                fill(sb, n, me, tag);
                if (syn)
                    CHK(MPI_Issend(sb, (int)n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &r));
                else
                    CHK(MPI_Isend(sb, (int)n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &r));
                CHK(MPI_Cancel(&r));
                pair_sync(peer);
                CHK(MPI_Wait(&r, &st));
                CHK(MPI_Test_cancelled(&st, &c));
                CHK(MPI_Send(&c, 1, MPI_INT, peer, TAG_SIG, MPI_COMM_WORLD));
                if (me == 0 && i == 0) printf("NOTE: cancel of an %s: %s\n", "Isend of 8 B", c ? "cancelled" : "not cancelled (delivered)");
                if (me == 0 && i == 2) printf("NOTE: cancel of an %s: %s\n", "Isend of 1 MiB", c ? "cancelled" : "not cancelled (delivered)");
                if (me == 0 && i == 5) printf("NOTE: cancel of an %s: %s\n", "Issend of 1 MiB", c ? "cancelled" : "not cancelled (delivered)");
            } else {
                int c = -1;
                pair_sync(peer);
                memset(rb, SENTINEL, n + SLACK);
                CHK(MPI_Irecv(rb, (int)n + SLACK, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &r));
                CHK(MPI_Recv(&c, 1, MPI_INT, peer, TAG_SIG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                if (c) {
                    /* cancelled: the message must never arrive */
                    double t0 = now();
                    while (now() - t0 < 0.05) {
                        CHK(MPI_Test(&r, &flag, &st));
                        EXPECT(!flag, "the sender cancelled its %s of %zu B, yet it was received",
                               syn ? "Issend" : "Isend", n);
                    }
                    CHK(MPI_Cancel(&r));
                    CHK(MPI_Wait(&r, &st));
                    CHK(MPI_Test_cancelled(&st, &flag));
                    EXPECT(flag, "the sender cancelled its %s of %zu B, yet the receive matched",
                           syn ? "Issend" : "Isend", n);
                } else {
                    CHK(MPI_Wait(&r, &st));
                    expect_status(&st, peer, tag, MPI_BYTE, n, "send whose cancel failed");
                    expect_bytes(rb, n, peer, tag, "send whose cancel failed");
                }
            }
        }
    }
    CHK(MPI_Barrier(MPI_COMM_WORLD));
}

/* ---- persistent requests ---- */
static void case_persistent(void)
{
    static const size_t ps[] = {0, 8, 65537, 1u << 20};
    int iters = 100, noted = 0;
    unsigned char *sb = xmalloc((1u << 20) + SLACK), *rb = xmalloc((1u << 20) + SLACK);
    attach_bsend(1u << 20);
    for (int d = 1; d < npow2(); d++) {
        int peer = me ^ d;
        for (int si = 0; si < 4 && peer < np; si++) {
            size_t n = ps[si];
            for (int mode = 0; mode < NMODES; mode++) {
                int tag = 700 + mode;
                MPI_Request rq[2];
                MPI_Status st[2];
                CHK(MPI_Recv_init(rb, (int)n + SLACK, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &rq[0]));
                switch (mode) {
                case M_STD: CHK(MPI_Send_init(sb, (int)n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &rq[1])); break;
                case M_BUF: CHK(MPI_Bsend_init(sb, (int)n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &rq[1])); break;
                case M_SYN: CHK(MPI_Ssend_init(sb, (int)n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &rq[1])); break;
                case M_RDY: CHK(MPI_Rsend_init(sb, (int)n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &rq[1])); break;
                }
                int it_n = n >= (1u << 20) ? 20 : iters;
                for (int it = 0; it < it_n; it++) {
                    int key = tag * 1000 + it * 7 + si;
                    memset(rb, SENTINEL, n + SLACK);
                    fill(sb, n, me, key);
                    if (mode == M_RDY) {
                        CHK(MPI_Start(&rq[0]));
                        CHK(MPI_Sendrecv(NULL, 0, MPI_BYTE, peer, TAG_SIG, NULL, 0, MPI_BYTE, peer,
                                         TAG_SIG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                        CHK(MPI_Start(&rq[1]));
                    } else if (it & 1) {
                        CHK(MPI_Startall(2, rq));
                    } else {
                        CHK(MPI_Start(&rq[1]));
                        CHK(MPI_Start(&rq[0]));
                    }
                    CHK(MPI_Waitall(2, rq, st));
                    EXPECT(rq[0] != MPI_REQUEST_NULL && rq[1] != MPI_REQUEST_NULL,
                           "Waitall freed a persistent request");
                    if (mode == M_BUF && it > 0 && pml_known_bug("bsend_init_restart")) {
                        if (!noted++ && me == 0)
                            printf("NOTE: pml %s: the data of restarted MPI_Bsend_init requests "
                                   "is not checked (known bug of this PML)\n", pml_name());
                        continue;
                    }
                    expect_status(&st[0], peer, tag, MPI_BYTE, n, "persistent %s %zu B, start #%d",
                                  mname[mode], n, it);
                    expect_bytes(rb, n, peer, key, "persistent %s %zu B, start #%d", mname[mode], n, it);
                    expect_untouched(rb + n, SLACK, "persistent %s %zu B past the end", mname[mode], n);
                }
                CHK(MPI_Request_free(&rq[0]));
                CHK(MPI_Request_free(&rq[1]));
                EXPECT(rq[0] == MPI_REQUEST_NULL, "Request_free did not set MPI_REQUEST_NULL");
            }
        }
        CHK(MPI_Barrier(MPI_COMM_WORLD));
    }
    /* Startall of many persistent sends to many tags at once, repeatedly */
    {
        enum { K = 16 };
        MPI_Request sr[K], rr[K];
        unsigned char *s2 = xmalloc(K * 70000), *r2 = xmalloc(K * 70000);
        int peer = (me + 1) % np, from = (me + np - 1) % np;
        for (int k = 0; k < K; k++) {
            int n = k % 4 == 3 ? 65537 : k * 100;
            CHK(MPI_Send_init(s2 + k * 70000, n, MPI_BYTE, peer, 800 + k, MPI_COMM_WORLD, &sr[k]));
            CHK(MPI_Recv_init(r2 + k * 70000, 70000, MPI_BYTE, from, 800 + (K - 1 - k), MPI_COMM_WORLD, &rr[k]));
        }
        for (int it = 0; it < 50; it++) {
            for (int k = 0; k < K; k++) fill(s2 + k * 70000, k % 4 == 3 ? 65537 : k * 100, me, it * 100 + k);
            CHK(MPI_Startall(K, rr));
            CHK(MPI_Startall(K, sr));
            MPI_Status st[K];
            CHK(MPI_Waitall(K, rr, st));
            for (int k = 0; k < K; k++) {
                int t = K - 1 - k, n = t % 4 == 3 ? 65537 : t * 100;
                expect_status(&st[k], from, 800 + t, MPI_BYTE, n, "Startall of %d, round %d", K, it);
                expect_bytes(r2 + k * 70000, n, from, it * 100 + t, "Startall of %d, round %d", K, it);
            }
            CHK(MPI_Waitall(K, sr, MPI_STATUSES_IGNORE));
        }
        for (int k = 0; k < K; k++) {
            CHK(MPI_Request_free(&sr[k]));
            CHK(MPI_Request_free(&rr[k]));
        }
    }
    /* Request_free on an active nonpersistent send: still delivered */
    {
        int peer = (me + 1) % np, from = (me + np - 1) % np;
        MPI_Request r;
        MPI_Status st;
        static const size_t fs[] = {8, 1u << 20};
        for (int i = 0; i < 2; i++) {
            fill(sb, fs[i], me, 900 + i);
            CHK(MPI_Isend(sb, (int)fs[i], MPI_BYTE, peer, 900 + i, MPI_COMM_WORLD, &r));
            CHK(MPI_Request_free(&r));
            EXPECT(r == MPI_REQUEST_NULL, "Request_free of an active Isend");
            CHK(MPI_Recv(rb, (1 << 20) + SLACK, MPI_BYTE, from, 900 + i, MPI_COMM_WORLD, &st));
            expect_status(&st, from, 900 + i, MPI_BYTE, fs[i], "Isend freed while active");
            expect_bytes(rb, fs[i], from, 900 + i, "Isend freed while active");
            /* the receiver acknowledges: only then may sb be reused */
            CHK(MPI_Sendrecv(NULL, 0, MPI_BYTE, from, TAG_SIG, NULL, 0, MPI_BYTE, peer, TAG_SIG,
                             MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        }
    }
    detach_bsend();
}

/* ---- self: every mode to oneself; Sendrecv(_replace) to self ---- */
static void case_self(void)
{
    alloc_bufs(MAXSZ);
    attach_bsend(MAXSZ);
    for (int si = 0; si < NSIZES; si++) {
        size_t n = sizes[si];
        MPI_Request r, rq[2];
        MPI_Status st;
        int key = 1000 + si;
        /* Isend first, then a blocking receive (also ANY_SOURCE) */
        for (int wc = 0; wc < 2; wc++) {
            fill(sbuf, n, me, key + wc);
            memset(rbuf, SENTINEL, n + SLACK);
            CHK(MPI_Isend(sbuf, (int)n, MPI_BYTE, me, 11, MPI_COMM_WORLD, &r));
            CHK(MPI_Recv(rbuf, (int)n + SLACK, MPI_BYTE, wc ? MPI_ANY_SOURCE : me, 11, MPI_COMM_WORLD, &st));
            CHK(MPI_Wait(&r, MPI_STATUS_IGNORE));
            expect_status(&st, me, 11, MPI_BYTE, n, "self Isend+Recv %zu B", n);
            expect_bytes(rbuf, n, me, key + wc, "self Isend+Recv %zu B", n);
            expect_untouched(rbuf + n, SLACK, "self Isend+Recv past the end");
        }
        /* Irecv first, then each blocking send mode */
        for (int mode = 0; mode < NMODES; mode++) {
            fill(sbuf, n, me, key + 10 + mode);
            memset(rbuf, SENTINEL, n + SLACK);
            CHK(MPI_Irecv(rbuf, (int)n + SLACK, MPI_BYTE, me, 12, MPI_COMM_WORLD, &r));
            switch (mode) {
            case M_STD: CHK(MPI_Send(sbuf, (int)n, MPI_BYTE, me, 12, MPI_COMM_WORLD)); break;
            case M_BUF: CHK(MPI_Bsend(sbuf, (int)n, MPI_BYTE, me, 12, MPI_COMM_WORLD)); break;
            case M_SYN: CHK(MPI_Ssend(sbuf, (int)n, MPI_BYTE, me, 12, MPI_COMM_WORLD)); break;
            case M_RDY: CHK(MPI_Rsend(sbuf, (int)n, MPI_BYTE, me, 12, MPI_COMM_WORLD)); break;
            }
            CHK(MPI_Wait(&r, &st));
            expect_status(&st, me, 12, MPI_BYTE, n, "self Irecv+%s %zu B", mname[mode], n);
            expect_bytes(rbuf, n, me, key + 10 + mode, "self Irecv+%s %zu B", mname[mode], n);
        }
        /* Bsend to self before the receive; Issend to self, probed first */
        fill(sbuf, n, me, key + 20);
        CHK(MPI_Bsend(sbuf, (int)n, MPI_BYTE, me, 13, MPI_COMM_WORLD));
        memset(sbuf, 0, n);   /* buffered: the copy is what is sent */
        CHK(MPI_Recv(rbuf, (int)n + SLACK, MPI_BYTE, me, 13, MPI_COMM_WORLD, &st));
        expect_status(&st, me, 13, MPI_BYTE, n, "self Bsend then Recv %zu B", n);
        expect_bytes(rbuf, n, me, key + 20, "self Bsend then Recv %zu B", n);
        fill(sbuf, n, me, key + 21);
        CHK(MPI_Issend(sbuf, (int)n, MPI_BYTE, me, 14, MPI_COMM_WORLD, &rq[0]));
        CHK(MPI_Probe(me, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        expect_status(&st, me, 14, MPI_BYTE, n, "self Issend, Probe %zu B", n);
        CHK(MPI_Irecv(rbuf, (int)n + SLACK, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &rq[1]));
        MPI_Status sts[2];
        CHK(MPI_Waitall(2, rq, sts));
        expect_status(&sts[1], me, 14, MPI_BYTE, n, "self Issend+Irecv %zu B", n);
        expect_bytes(rbuf, n, me, key + 21, "self Issend+Irecv %zu B", n);
        /* Sendrecv to self; Sendrecv_replace to self */
        fill(sbuf, n, me, key + 30);
        memset(rbuf, SENTINEL, n + SLACK);
        CHK(MPI_Sendrecv(sbuf, (int)n, MPI_BYTE, me, 15, rbuf, (int)n + SLACK, MPI_BYTE, me, 15,
                         MPI_COMM_WORLD, &st));
        expect_status(&st, me, 15, MPI_BYTE, n, "self Sendrecv %zu B", n);
        expect_bytes(rbuf, n, me, key + 30, "self Sendrecv %zu B", n);
        fill(sbuf, n, me, key + 31);
        CHK(MPI_Sendrecv_replace(sbuf, (int)n, MPI_BYTE, me, 16, me, 16, MPI_COMM_WORLD, &st));
        expect_status(&st, me, 16, MPI_BYTE, n, "self Sendrecv_replace %zu B", n);
        expect_bytes(sbuf, n, me, key + 31, "self Sendrecv_replace %zu B", n);
    }
    detach_bsend();
}

/* ---- procnull: every call with MPI_PROC_NULL completes at once, status
 * source MPI_PROC_NULL, tag MPI_ANY_TAG, count 0, buffer untouched ---- */
static void case_procnull(void)
{
    unsigned char b[64], s[64];
    MPI_Status st;
    MPI_Request r[4];
    memset(s, 1, sizeof s);
    attach_bsend(1024);
#define PN_CHECK(what)                                                         \
    do {                                                                       \
        expect_status(&st, MPI_PROC_NULL, MPI_ANY_TAG, MPI_BYTE, 0, "%s", what); \
        expect_untouched(b, sizeof b, "%s", what);                             \
    } while (0)
    memset(b, SENTINEL, sizeof b);
    CHK(MPI_Send(s, 64, MPI_BYTE, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
    CHK(MPI_Bsend(s, 64, MPI_BYTE, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
    CHK(MPI_Ssend(s, 64, MPI_BYTE, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
    CHK(MPI_Rsend(s, 64, MPI_BYTE, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
    CHK(MPI_Recv(b, 64, MPI_BYTE, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st));
    PN_CHECK("Recv from MPI_PROC_NULL");
    CHK(MPI_Irecv(b, 64, MPI_BYTE, MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &r[0]));
    CHK(MPI_Wait(&r[0], &st));
    PN_CHECK("Irecv from MPI_PROC_NULL");
    CHK(MPI_Isend(s, 64, MPI_BYTE, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &r[0]));
    CHK(MPI_Ibsend(s, 64, MPI_BYTE, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &r[1]));
    CHK(MPI_Issend(s, 64, MPI_BYTE, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &r[2]));
    CHK(MPI_Irsend(s, 64, MPI_BYTE, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &r[3]));
    int flag = 0;
    CHK(MPI_Testall(4, r, &flag, MPI_STATUSES_IGNORE));
    EXPECT(flag, "Isend/Ibsend/Issend/Irsend to MPI_PROC_NULL not complete at the first Testall");
    CHK(MPI_Sendrecv(s, 64, MPI_BYTE, MPI_PROC_NULL, 1, b, 64, MPI_BYTE, MPI_PROC_NULL, 1,
                     MPI_COMM_WORLD, &st));
    PN_CHECK("Sendrecv with MPI_PROC_NULL");
    memcpy(b, s, 64);
    CHK(MPI_Sendrecv_replace(b, 64, MPI_BYTE, MPI_PROC_NULL, 1, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st));
    EXPECT(memcmp(b, s, 64) == 0, "Sendrecv_replace with MPI_PROC_NULL changed the buffer");
    memset(b, SENTINEL, sizeof b);
    /* persistent */
    CHK(MPI_Send_init(s, 64, MPI_BYTE, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &r[0]));
    CHK(MPI_Recv_init(b, 64, MPI_BYTE, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &r[1]));
    for (int i = 0; i < 3; i++) {
        MPI_Status sts[2];
        CHK(MPI_Startall(2, r));
        CHK(MPI_Waitall(2, r, sts));
        st = sts[1];
        PN_CHECK("persistent Recv_init from MPI_PROC_NULL");
    }
    CHK(MPI_Request_free(&r[0]));
    CHK(MPI_Request_free(&r[1]));
    /* a ring where the ends talk to MPI_PROC_NULL */
    {
        int right = me + 1 < np ? me + 1 : MPI_PROC_NULL, left = me > 0 ? me - 1 : MPI_PROC_NULL;
        unsigned char *sb = xmalloc(65537), *rb = xmalloc(65537 + SLACK);
        fill(sb, 65537, me, 42);
        memset(rb, SENTINEL, 65537 + SLACK);
        CHK(MPI_Sendrecv(sb, 65537, MPI_BYTE, right, 42, rb, 65537 + SLACK, MPI_BYTE, left, 42,
                         MPI_COMM_WORLD, &st));
        if (left == MPI_PROC_NULL) {
            expect_status(&st, MPI_PROC_NULL, MPI_ANY_TAG, MPI_BYTE, 0, "open chain, left end");
            expect_untouched(rb, 65537 + SLACK, "open chain, left end");
        } else {
            expect_status(&st, left, 42, MPI_BYTE, 65537, "open chain");
            expect_bytes(rb, 65537, left, 42, "open chain");
        }
    }
    detach_bsend();
}

/* ---- sendrecv: Sendrecv and Sendrecv_replace around the ring at every
 * shift ---- */
static void case_sendrecv(void)
{
    alloc_bufs(MAXSZ);
    for (int si = 0; si < NSIZES; si++)
        for (int shift = 1; shift < np; shift++) {
            size_t n = sizes[si];
            int to = (me + shift) % np, from = (me + np - shift) % np;
            int key = si * 100 + shift;
            MPI_Status st;
            fill(sbuf, n, me, key);
            memset(rbuf, SENTINEL, n + SLACK);
            CHK(MPI_Sendrecv(sbuf, (int)n, MPI_BYTE, to, 20 + shift, rbuf, (int)n + SLACK, MPI_BYTE,
                             from, 20 + shift, MPI_COMM_WORLD, &st));
            expect_status(&st, from, 20 + shift, MPI_BYTE, n, "Sendrecv %zu B shift %d", n, shift);
            expect_bytes(rbuf, n, from, key, "Sendrecv %zu B shift %d", n, shift);
            expect_untouched(rbuf + n, SLACK, "Sendrecv past the end");
            fill(sbuf, n, me, key + 50);
            /* a peer may be a step ahead: the tag tells the steps apart */
            int tag = 1000 + si * 64 + shift;
            CHK(MPI_Sendrecv_replace(sbuf, (int)n, MPI_BYTE, to, tag, MPI_ANY_SOURCE, tag,
                                     MPI_COMM_WORLD, &st));
            expect_status(&st, from, tag, MPI_BYTE, n, "Sendrecv_replace %zu B shift %d", n, shift);
            expect_bytes(sbuf, n, from, key + 50, "Sendrecv_replace %zu B shift %d", n, shift);
        }
}

/* ---- yield: oversubscribed (run.sh passes mpi_yield_when_idle 1, what
 * mpirun sets with more ranks than cores), a rank that waits in MPI_Recv
 * gives its core away by sleeping: rank 0 sleeps 1 s, then sends to every
 * other rank; each of them, waiting, blocks in the kernel again and again
 * (voluntary context switches of the waiting thread, getrusage
 * RUSAGE_THREAD: a frame, a doorbell or the poll's timeout wakes it).  A
 * rank that spins, even calling sched_yield, is never switched out
 * voluntarily (it stays runnable), whatever else the machine runs; its
 * CPU time depends on that load and is only said.  ob1 and ucx spin: the
 * check is bfo's (a NOTE for the others). ---- */
static void case_yield(void)
{
    int v = 0;
    CHK(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0) {
        struct timespec ts = {1, 0};
        while (nanosleep(&ts, &ts) != 0)
            ;
        for (int p = 1; p < np; p++)
            CHK(MPI_Send(&p, 1, MPI_INT, p, 77, MPI_COMM_WORLD));
    } else {
        struct rusage a, b;
        double t0 = now(), wall, cpu;
        long blocks;
        getrusage(RUSAGE_THREAD, &a);
        CHK(MPI_Recv(&v, 1, MPI_INT, 0, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        getrusage(RUSAGE_THREAD, &b);
        wall = now() - t0;
        cpu = (double)(b.ru_utime.tv_sec - a.ru_utime.tv_sec + b.ru_stime.tv_sec - a.ru_stime.tv_sec) +
              (double)(b.ru_utime.tv_usec - a.ru_utime.tv_usec + b.ru_stime.tv_usec - a.ru_stime.tv_usec) * 1e-6;
        blocks = b.ru_nvcsw - a.ru_nvcsw;
        EXPECT(v == me, "got %d, not %d", v, me);
        if (strcmp(pml_name(), "bfo") == 0)
            EXPECT(blocks >= 10, "waiting %.2f s in MPI_Recv it never slept (%ld voluntary context switches, "
                   "%.2f s of CPU): no yield", wall, blocks, cpu);
        if (me == 1)
            printf("NOTE: yield: %s, rank 1 waited %.2f s: %ld voluntary context switches, %.2f s of CPU%s\n",
                   pml_name(), wall, blocks, cpu, strcmp(pml_name(), "bfo") ? " (not checked)" : "");
    }
    CHK(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    static const struct tcase cases[] = {
        {"modes", case_modes},         {"ssync", case_ssync},
        {"small_at_once", case_small_at_once},
        {"wildcard", case_wildcard},   {"order", case_order},
        {"tags", case_tags},           {"probe", case_probe},
        {"cancel", case_cancel},       {"persistent", case_persistent},
        {"self", case_self},           {"procnull", case_procnull},
        {"sendrecv", case_sendrecv},   {"yield", case_yield},
        {NULL, NULL}};
    init(&argc, &argv);
    if (np < 2) FAIL("needs at least 2 ranks");
    return run_cases(argc, argv, cases);
}
