// SPDX-License-Identifier: BSD-3-Clause
/* badpeer.c - a misbehaving rank for tests/tcp/t5_malformed.sh.
 *
 * Run under `bfo run` as one rank of the job (the others run `bfo stream
 * --skip-rank R`).  It takes part in the bootstrap like any rank, then
 * answers every connection the others dial to it with something wrong, one
 * scenario after another, and also dials rank 0 itself with a bad hello
 * and sends rank 0's beacon socket three forged datagrams.
 * It runs for the given seconds (argv[1], default 3) and prints the
 * scenarios it played on stderr.  The test checks that the well-behaved
 * ranks logged a reason for every drop and stayed up.
 *
 * Most scenarios break the framing or send a frame no peer may send; the
 * connection must be dropped.  One ("stale and forged frames") plays a
 * correct peer first: it answers the engine's PROBE (the rail comes up),
 * then sends well-formed frames naming requests that never existed or
 * belong to another rank: FINs (each twice), ACKs, FRAGs, PUTs, restarted
 * RNDVs, RESTARTACK, RESTARTNACK, RECVERRNOTIFY, a NOTIFY of nothing, a
 * BROKEN of an earlier epoch.  The engine drops them as stale (duplicates
 * after a failover look the same), so the connection must stay up, every
 * frame be acknowledged, and the NOTIFY be answered by a RESTARTNACK
 * (docs/engine-design.md, "Hostile input").  Then a MATCH claiming to come
 * from rank 1 must get the connection dropped.  Where the well-behaved
 * side breaks that rule, this rank prints "badpeer: FAIL: ..." and exits 1.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bfo_boot.h"
#include "bfo_net.h"
#include "bfo_tcp.h"

enum {
    S_MAGIC, S_TOO_LONG, S_GARBAGE, S_SEQ_GAP, S_TRUNCATED_CLOSE, S_GARBAGE_HELLO, S_ACK_BEYOND,
    S_STALE_SESSION, S_ENGINE_TRUNCATED, S_EAGER_TOO_LONG, S_RAIL_BEYOND, NSCEN
};
static const char *const scen_name[NSCEN] = {
    "bad magic",         "frame too long",   "engine garbage",
    "sequence gap",      "truncated + close", "garbage hello",
    "ack beyond sent",   "stale and forged frames", "truncated engine frame",
    "eager payload beyond the limit", "rail beyond the rails",
};
/* the order they are played in, round and round: the session first, while
 * the ranks dial often */
static const int order[NSCEN] = { S_STALE_SESSION, S_MAGIC, S_TOO_LONG, S_ENGINE_TRUNCATED,
                                  S_GARBAGE, S_SEQ_GAP, S_EAGER_TOO_LONG, S_TRUNCATED_CLOSE,
                                  S_RAIL_BEYOND, S_GARBAGE_HELLO, S_ACK_BEYOND };

#define hdr bfo_tcp_frame_header
/* above what a receiver takes eager (the larger of eager_limit, 64 KiB by
 * default over TCP alone, and frag_size, 64 KiB), below the largest frame
 * (those plus BFO_MAX_HDR_SIZE) */
#define EAGER_TOO_LONG (65536 + 32)

static int g_failed;
static int g_rank;
static uint64_t g_stale_sent;

#define FAIL(...)                                                               \
    do {                                                                        \
        fprintf(stderr, "badpeer: FAIL: " __VA_ARGS__);                         \
        fputc('\n', stderr);                                                    \
        g_failed = 1;                                                           \
    } while (0)

/* A hello frame's bytes: header and body. */
#define HF (BFO_TCP_HDR_SIZE + BFO_TCP_HELLO_SIZE)

/* attempt: the dialer's (a reply echoes the one it answers) */
static void hello(uint8_t *p, int rank, int rail, int size, uint64_t job, uint64_t attempt)
{
    hdr(p, BFO_TCP_HELLO_SIZE, BFO_TCP_K_HELLO, 0, 0);
    p += BFO_TCP_HDR_SIZE;
    bfo_put32(p, BFO_TCP_HELLO_VERSION);
    bfo_put32(p + 4, (uint32_t)rank);
    bfo_put32(p + 8, (uint32_t)rail);
    bfo_put32(p + 12, (uint32_t)size);
    bfo_put64(p + 16, job);
    bfo_put64(p + 24, attempt);
    bfo_put64(p + 32, 0); /* dialed: none of its own */
    bfo_put32(p + 40, 0); /* a hello or a reply */
    bfo_put32(p + 44, 0);
}

static void put_all(int fd, const void *b, size_t n)
{
    while (n) {
        ssize_t w = send(fd, b, n, MSG_NOSIGNAL);
        if (w <= 0)
            return;
        b = (const char *)b + w;
        n -= (size_t)w;
    }
}

static int read_n(int fd, uint8_t *b, size_t n, int ms)
{
    size_t got = 0;
    while (got < n) {
        struct pollfd pf = { fd, POLLIN, 0 };
        if (poll(&pf, 1, ms) <= 0)
            return -1;
        ssize_t r = read(fd, b + got, n - got);
        if (r <= 0)
            return -1;
        got += (size_t)r;
    }
    return 0;
}

/* 1 when the peer closes (or resets) the connection within ms; what it
 * sends before is read and dropped. */
static int closed_within(int fd, int ms)
{
    uint8_t sink[4096];
    uint64_t end = bfo_boot_now() + (uint64_t)ms * 1000000ull;
    while (bfo_boot_now() < end) {
        struct pollfd pf = { fd, POLLIN, 0 };
        if (poll(&pf, 1, 10) <= 0)
            continue;
        ssize_t r = read(fd, sink, sizeof sink);
        if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN))
            return 1;
    }
    return 0;
}

static bfo_handle H(uint32_t index, uint32_t gen)
{
    bfo_handle h;
    h.index = index;
    h.gen = gen;
    return h;
}

/* ------------------------------------------------- a session that behaves */

typedef struct sess {
    int fd, rail, closed;
    uint8_t in[1 << 17];
    size_t nin;
    uint64_t tx_seq, rx_seq, acked; /* our DATA frames sent; theirs taken; ours they acknowledged */
    int probes, nacks;
} sess;

static void sess_data(sess *s, const uint8_t *frame, size_t len)
{
    uint8_t h[BFO_TCP_HDR_SIZE];
    hdr(h, (uint32_t)len, BFO_TCP_K_DATA, ++s->tx_seq, s->rx_seq);
    put_all(s->fd, h, sizeof h);
    put_all(s->fd, frame, len);
}

/* Reads for up to ms: answers PROBEs (PROBEACK, echoing the nonce),
 * counts the RESTARTNACKs that answer our NOTIFY of nothing, notes the
 * acknowledgements, and acknowledges what it took. */
static void sess_pump(sess *s, int ms)
{
    uint64_t end = bfo_boot_now() + (uint64_t)ms * 1000000ull;
    while (!s->closed && bfo_boot_now() < end) {
        struct pollfd pf = { s->fd, POLLIN, 0 };
        uint64_t took = s->rx_seq;
        if (poll(&pf, 1, 5) <= 0)
            continue;
        ssize_t r = read(s->fd, s->in + s->nin, sizeof s->in - s->nin);
        if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN)) {
            s->closed = 1;
            return;
        }
        if (r < 0)
            continue;
        s->nin += (size_t)r;
        size_t p = 0;
        while (s->nin - p >= BFO_TCP_HDR_SIZE) {
            const uint8_t *h = s->in + p;
            uint32_t len = bfo_get32(h);
            if (s->nin - p < BFO_TCP_HDR_SIZE + (size_t)len)
                break;
            if (bfo_get64(h + 16) > s->acked)
                s->acked = bfo_get64(h + 16);
            if (h[6] == BFO_TCP_K_DATA) {
                bfo_frame f;
                s->rx_seq = bfo_get64(h + 8);
                if (bfo_frame_parse(&f, h + BFO_TCP_HDR_SIZE, len) == BFO_OK) {
                    if (f.type == BFO_FRAG_PROBE) {
                        uint8_t b[BFO_HDR_RAILCTL_SIZE];
                        bfo_hdr_railctl a = f.h.railctl;
                        a.type = BFO_FRAG_PROBEACK;
                        sess_data(s, b, bfo_hdr_railctl_encode(&a, b, sizeof b));
                        s->probes++;
                    } else if (f.type == BFO_FRAG_RESTARTNACK && f.h.restart.rseq == 0x4242 &&
                               f.h.restart.sreq.index == 0x4242 && f.h.restart.dreq.index == 0x7fffffff) {
                        s->nacks++;
                    }
                }
            }
            p += BFO_TCP_HDR_SIZE + len;
        }
        memmove(s->in, s->in + p, s->nin - p);
        s->nin -= p;
        if (s->rx_seq != took) { /* their frames reached "our engine": acknowledge */
            uint8_t a[BFO_TCP_HDR_SIZE];
            hdr(a, 0, BFO_TCP_K_ACK, 0, s->rx_seq);
            put_all(s->fd, a, sizeof a);
        }
    }
}

/* Frames naming requests that never existed or are another rank's: each
 * must be dropped as stale, the connection kept.  Returns how many. */
static uint64_t send_stale(sess *s)
{
    uint8_t b[BFO_MAX_HDR_SIZE + 8];
    uint64_t n = 0;
    size_t len;
    for (uint32_t g = 1; g <= 3; g++)
        for (uint32_t i = 0; i < 6; i++) {
            bfo_hdr_fin fin = { .type = BFO_FRAG_FIN, .flags = 0, .rseq = 0, .slot = 0, .dreq = H(i, g), .offset = 0, .length = 8 };
            len = bfo_hdr_fin_encode(&fin, b, sizeof b);
            sess_data(s, b, len);
            sess_data(s, b, len); /* a duplicate FIN */
            bfo_hdr_ack ack = { BFO_FRAG_ACK, 0, 0, H(i, g), H(1, 1), 0 };
            sess_data(s, b, bfo_hdr_ack_encode(&ack, b, sizeof b));
            bfo_hdr_frag fr = { BFO_FRAG_FRAG, 0, 0, H(i, g), 0 };
            len = bfo_hdr_frag_encode(&fr, b, sizeof b);
            memset(b + len, 0x5a, 8);
            sess_data(s, b, len + 8);
            bfo_hdr_put put = { BFO_FRAG_PUT, 0, 0, 0, H(i, g), H(1, 1), 0, 8, 0x1000 };
            sess_data(s, b, bfo_hdr_put_encode(&put, b, sizeof b));
            for (int t = BFO_FRAG_RESTARTACK; t <= BFO_FRAG_RECVERRNOTIFY; t++) {
                bfo_hdr_restart rs = { .type = (uint8_t)t, .flags = 0, .rseq = 0, .ctx = 0, .seq = 1, .src = (uint32_t)g_rank, .sreq = H(i, g), .dreq = H(1, 1) };
                sess_data(s, b, bfo_hdr_restart_encode(&rs, b, sizeof b));
            }
            bfo_hdr_rndv rv = { .type = BFO_FRAG_RNDV, .flags = BFO_FLAG_RESTART, .ctx = 0, .src = (uint32_t)g_rank, .tag = 0, .seq = 1, .rseq = 1, .msg_len = 100, .sreq = H(1, 1), .dreq = H(i, g) };
            sess_data(s, b, bfo_hdr_rndv_encode(&rv, b, sizeof b));
            n += 9;
        }
    /* a NOTIFY for a receive that never existed: answered by RESTARTNACK */
    bfo_hdr_restart nt = { .type = BFO_FRAG_NOTIFY, .flags = 0, .rseq = 0x4242, .ctx = 0, .seq = 1, .src = (uint32_t)g_rank, .sreq = H(0x4242, 1), .dreq = H(0x7fffffff, 1) };
    sess_data(s, b, bfo_hdr_restart_encode(&nt, b, sizeof b));
    /* a BROKEN about an earlier life of this rail */
    bfo_hdr_railctl br = { BFO_FRAG_BROKEN, 0, (uint16_t)s->rail, 0, 0 };
    sess_data(s, b, bfo_hdr_railctl_encode(&br, b, sizeof b));
    return n + 2;
}

static void stale_session(int fd, int peer, int rail, const uint8_t *my_hello)
{
    static sess S;
    sess *s = &S;
    memset(s, 0, sizeof *s);
    s->fd = fd;
    s->rail = rail;
    put_all(fd, my_hello, BFO_TCP_HDR_SIZE + BFO_TCP_HELLO_SIZE);
    for (int k = 0; k < 50 && !s->probes && !s->closed; k++) /* the rail comes up */
        sess_pump(s, 10);
    if (!s->probes) {
        FAIL("rank %d rail %d: no PROBE on a new connection (%s)", peer, rail,
             s->closed ? "closed" : "silent");
        return;
    }
    sess_pump(s, 20);
    uint64_t n = send_stale(s), last = s->tx_seq; /* PROBEACKs may follow: not waited for */
    for (int k = 0; k < 150 && !s->closed && (s->acked < last || !s->nacks); k++)
        sess_pump(s, 10);
    sess_pump(s, 100); /* and it stays up */
    if (s->closed) {
        FAIL("rank %d rail %d: the connection was dropped for stale frames", peer, rail);
        return;
    }
    if (s->acked < last)
        FAIL("rank %d rail %d: %llu of %llu frames acknowledged", peer, rail,
             (unsigned long long)s->acked, (unsigned long long)last);
    if (!s->nacks)
        FAIL("rank %d rail %d: no RESTARTNACK for a NOTIFY of nothing", peer, rail);
    g_stale_sent += n;
    fprintf(stderr, "badpeer: rank %d rail %d: %llu stale frames acknowledged, the connection kept, "
            "NOTIFY of nothing answered by RESTARTNACK\n", peer, rail, (unsigned long long)n);
    /* a MATCH with sequence 0, which no message has (the sender's rank in a
     * context may be any number now: the sequence is what it cannot forge
     * without breaking the protocol): dropped */
    uint8_t b[BFO_HDR_MATCH_SIZE + 8];
    bfo_hdr_match m = { .type = BFO_FRAG_MATCH, .flags = 0, .ctx = 0, .src = 1, .tag = 0, .seq = 0 };
    size_t len = bfo_hdr_match_encode(&m, b, sizeof b);
    memset(b + len, 0x66, 8);
    sess_data(s, b, len + 8);
    for (int k = 0; k < 100 && !s->closed; k++)
        sess_pump(s, 10);
    if (!s->closed)
        FAIL("rank %d rail %d: a MATCH with sequence 0 did not drop the connection", peer, rail);
}

/* ------------------------------------------------------------------ main */

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 3;
    const char *rails = getenv("BFO_RAILS");
    struct sockaddr_in ip[BFO_MAX_RAILS], r0;
    const char *names[BFO_MAX_RAILS];
    bfo_addr mine[BFO_MAX_RAILS], theirs[BFO_MAX_RAILS];
    char tnames[BFO_MAX_RAILS][BFO_NET_NAME_MAX];
    static uint8_t card[BFO_BOOT_CARD_MAX];
    size_t clen;
    bfo_boot *boot;
    char *list, *save = NULL;
    int lfd[BFO_MAX_RAILS], rank, size, nrails = 0, played[NSCEN] = { 0 }, next = 0;
    uint64_t job, end;
    static uint8_t out[BFO_TCP_HDR_SIZE + BFO_TCP_HELLO_SIZE + BFO_TCP_HDR_SIZE + EAGER_TOO_LONG + 64];
    if (bfo_boot_env(&boot, 30000000000ull) != BFO_OK)
        return 2;
    rank = g_rank = bfo_boot_rank(boot);
    size = bfo_boot_size(boot);
    list = strdup(rails && *rails ? rails : "127.0.0.1");
    for (char *tok = strtok_r(list, ",", &save); tok && nrails < BFO_MAX_RAILS; tok = strtok_r(NULL, ",", &save)) {
        struct sockaddr_storage ss;
        if (bfo_tcp_parse_rail(tok, &ss) != 0 || ss.ss_family != AF_INET)
            return 2;
        memcpy(&ip[nrails++], &ss, sizeof ip[0]);
    }
    if (nrails < 1)
        return 2;
    for (int r = 0; r < nrails; r++) {
        struct sockaddr_in sa = ip[r];
        socklen_t sl = sizeof sa;
        lfd[r] = socket(AF_INET, SOCK_STREAM, 0);
        if (lfd[r] < 0 || bind(lfd[r], (struct sockaddr *)&sa, sizeof sa) || listen(lfd[r], 64) ||
            getsockname(lfd[r], (struct sockaddr *)&sa, &sl))
            return 3;
        /* the TCP transport's published address: u8 4, u8 0, u16 port, the address */
        memset(&mine[r], 0, sizeof mine[r]);
        mine[r].len = 8;
        mine[r].bytes[0] = 4;
        memcpy(mine[r].bytes + 2, &sa.sin_port, 2);
        memcpy(mine[r].bytes + 4, &sa.sin_addr, 4);
        names[r] = "tcp";
    }
    clen = bfo_net_card_write(card, sizeof card, nrails, names, mine);
    if (!clen || bfo_boot_publish(boot, card, clen) != BFO_OK ||
        bfo_boot_lookup(boot, 0, card, sizeof card, &clen) != BFO_OK ||
        bfo_net_card_read(card, clen, tnames, theirs) < 1 || (theirs[0].len != 8 && theirs[0].len != 10)) {
        fprintf(stderr, "badpeer: bootstrap failed\n");
        return 4;
    }
    job = bfo_boot_job(boot);
    memset(&r0, 0, sizeof r0); /* rank 0's rail 0 */
    r0.sin_family = AF_INET;
    memcpy(&r0.sin_port, theirs[0].bytes + 2, 2);
    memcpy(&r0.sin_addr, theirs[0].bytes + 4, 4);
    /* an impostor: dial rank 0 on rail 0 with a hello from a rank the job
     * does not have (any rank of the job may dial), and once more with
     * bytes that are not a hello */
    if (rank != 0) {
        for (int k = 0; k < 2; k++) {
            struct sockaddr_in sa = r0;
            uint8_t b[BFO_TCP_HDR_SIZE + BFO_TCP_HELLO_SIZE];
            int fd = socket(AF_INET, SOCK_STREAM, 0);
            if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0) {
                if (k == 0)
                    hello(b, size, 0, size, job, 1);
                else
                    memset(b, 0x5a, sizeof b);
                put_all(fd, b, sizeof b);
                usleep(50000);
            }
            if (fd >= 0)
                close(fd);
        }
        fprintf(stderr, "badpeer: dialed rank 0 with a hello from no rank of the job and with garbage\n");
    }
    /* rank 0's beacon port on rail 0 (bfo_tcp.h, BEACONS; after the address):
     * a short datagram, a beacon of another job, and one of this rank's,
     * which has no connection up there.  Dropped and counted
     * (beacons_dropped), nothing else. */
    if (rank != 0 && theirs[0].len == 10) {
        struct sockaddr_in u = r0;
        uint8_t b[BFO_TCP_BEACON_SIZE];
        int fd = socket(AF_INET, SOCK_DGRAM, 0), sent = 0;
        memcpy(&u.sin_port, theirs[0].bytes + 8, 2);
        bfo_tcp_beacon_put(b, rank, 0, job + 1, 1, 1);
        sent += fd >= 0 && sendto(fd, b, 5, 0, (struct sockaddr *)&u, sizeof u) == 5;
        sent += fd >= 0 && sendto(fd, b, sizeof b, 0, (struct sockaddr *)&u, sizeof u) == (ssize_t)sizeof b;
        bfo_tcp_beacon_put(b, rank, 0, job, 1, 1);
        sent += fd >= 0 && sendto(fd, b, sizeof b, 0, (struct sockaddr *)&u, sizeof u) == (ssize_t)sizeof b;
        if (fd >= 0)
            close(fd);
        fprintf(stderr, "badpeer: forged beacons sent to rank 0: %d\n", sent);
    }
    end = bfo_boot_now() + (uint64_t)(secs * 1e9);
    while (bfo_boot_now() < end) {
        struct pollfd pf[BFO_MAX_RAILS];
        for (int r = 0; r < nrails; r++) {
            pf[r].fd = lfd[r];
            pf[r].events = POLLIN;
            pf[r].revents = 0;
        }
        if (poll(pf, (nfds_t)nrails, 50) <= 0)
            continue;
        for (int r = 0; r < nrails; r++) {
            uint8_t in[BFO_TCP_HDR_SIZE + BFO_TCP_HELLO_SIZE];
            uint8_t *fr = out + HF, *eng = out + HF + 24; /* our frame after our hello, its engine bytes */
            int fd, sc, peer, one = 1, expect_drop = 1;
            if (!(pf[r].revents & POLLIN))
                continue;
            fd = accept(lfd[r], NULL, NULL);
            if (fd < 0)
                continue;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            if (read_n(fd, in, sizeof in, 1000) != 0) {
                close(fd);
                continue;
            }
            peer = (int)bfo_get32(in + BFO_TCP_HDR_SIZE + 4);
            sc = order[next++ % NSCEN];
            hello(out, rank, r, size, job, bfo_get64(in + BFO_TCP_HDR_SIZE + 24));
            switch (sc) {
            case S_MAGIC: /* a frame whose magic is wrong */
                hdr(fr, 8, BFO_TCP_K_DATA, 1, 0);
                fr[4] ^= 0xff;
                put_all(fd, out, HF + 24 + 8);
                break;
            case S_TOO_LONG: /* longer than any frame */
                hdr(fr, 0x10000000u, BFO_TCP_K_DATA, 1, 0);
                put_all(fd, out, HF + 24);
                break;
            case S_GARBAGE: /* framing right, the engine frame garbage */
                hdr(fr, 40, BFO_TCP_K_DATA, 1, 0);
                memset(eng, 0xee, 40);
                put_all(fd, out, HF + 24 + 40);
                break;
            case S_SEQ_GAP: /* a sequence number out of order */
                hdr(fr, 8, BFO_TCP_K_DATA, 5, 0);
                memset(eng, 0, 8);
                put_all(fd, out, HF + 24 + 8);
                break;
            case S_TRUNCATED_CLOSE: /* a frame cut short, then the connection closes */
                hdr(fr, 100, BFO_TCP_K_DATA, 1, 0);
                put_all(fd, out, HF + 24 + 30);
                expect_drop = 0; /* we close it */
                break;
            case S_GARBAGE_HELLO: /* no hello at all */
                memset(out, 0xa5, HF);
                put_all(fd, out, HF);
                break;
            case S_ACK_BEYOND: /* acknowledges frames never sent */
                hdr(fr, 0, BFO_TCP_K_ACK, 0, 99);
                put_all(fd, out, HF + 24);
                break;
            case S_STALE_SESSION:
                stale_session(fd, peer, r, out);
                expect_drop = 0; /* checked inside */
                break;
            case S_ENGINE_TRUNCATED: { /* framing right, an engine frame shorter than its header */
                hdr(fr, 10, BFO_TCP_K_DATA, 1, 0);
                memset(eng, 0, 10);
                eng[0] = BFO_FRAG_MATCH;
                put_all(fd, out, HF + 24 + 10);
                break;
            }
            case S_EAGER_TOO_LONG: { /* a well-formed MATCH with more than eager_limit bytes */
                bfo_hdr_match m = { .type = BFO_FRAG_MATCH, .flags = 0, .ctx = 0, .src = (uint32_t)rank, .tag = 0, .seq = 1 };
                size_t hl = bfo_hdr_match_encode(&m, eng, BFO_HDR_MATCH_SIZE);
                memset(eng + hl, 0x77, EAGER_TOO_LONG);
                hdr(fr, (uint32_t)(hl + EAGER_TOO_LONG), BFO_TCP_K_DATA, 1, 0);
                put_all(fd, out, HF + 24 + hl + EAGER_TOO_LONG);
                break;
            }
            case S_RAIL_BEYOND: { /* a PROBE about a rail the job does not have */
                bfo_hdr_railctl p = { BFO_FRAG_PROBE, 0, 7, 1, 42 };
                size_t hl = bfo_hdr_railctl_encode(&p, eng, BFO_HDR_RAILCTL_SIZE);
                hdr(fr, (uint32_t)hl, BFO_TCP_K_DATA, 1, 0);
                put_all(fd, out, HF + 24 + hl);
                break;
            }
            }
            played[sc]++;
            fprintf(stderr, "badpeer: rank %d rail %d: %s\n", peer, r, scen_name[sc]);
            if (expect_drop && !closed_within(fd, 1000))
                FAIL("rank %d rail %d: '%s' did not drop the connection", peer, r, scen_name[sc]);
            /* FIN, not RST: drain what the peer sent before closing */
            shutdown(fd, SHUT_WR);
            usleep(20000);
            while (recv(fd, out, sizeof out, MSG_DONTWAIT) > 0)
                ;
            close(fd);
        }
    }
    for (int k = 0; k < NSCEN; k++)
        fprintf(stderr, "badpeer: played '%s' %d times\n", scen_name[k], played[k]);
    fprintf(stderr, "badpeer: stale frames on kept connections: %llu\n",
            (unsigned long long)g_stale_sent);
    free(list);
    bfo_boot_fini(boot);
    return g_failed ? 1 : 0;
}
