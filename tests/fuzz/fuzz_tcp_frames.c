// SPDX-License-Identifier: BSD-3-Clause
/* fuzz_tcp_frames.c - the TCP backend's framing and stream reassembly
 * (backends/tcp/bfo_tcp.c) fed an arbitrary byte stream by its peer.
 *
 * The parser is not factored out to run without sockets: it is one loop
 * over the connection's receive buffer whose every step acts on the
 * connection (acks complete sends, a stall stops reading and sends
 * keepalives, an error closes it and reports to the engine), so a socket
 * free copy would be a second implementation.  Instead the real backend
 * runs here, under a sink (no engine, no bootstrap), as rank 1 of 2 on
 * 127.0.0.1; this file plays rank 0: it dials, says hello, and then the
 * input is a script of what rank 0 does on the connection:
 *   raw bytes, well-formed DATA frames (sequence right or wrong, any flags,
 *   any ack, any length), ACK frames (up to one beyond what the backend
 *   sent), the backend's own sends (post_send, for acks to complete),
 *   what the "engine" answers to a frame (taken, stale, offer it again,
 *   a protocol error, a parse error), the engine disconnecting the rail,
 *   half-closing the connection, progress (fuzz_tcp_script.h).
 * What must hold, beyond no crash and no sanitizer report:
 *   - the engine gets only DATA frames rank 0 sent, whole and in order:
 *     each is the next DATA frame of the stream (only ACK frames between),
 *     its sequence number the next one; a frame it asked to have offered
 *     again comes again, the same; nothing after it refused a frame (the
 *     connection is dropped) and nothing while the connection is not up;
 *   - every post completes once; ok only once rank 0 acknowledged it;
 *     when the connection ends, every post is complete;
 *   - what the backend sends is well-formed: its hello, then DATA frames
 *     numbered from 1 carrying what was posted, in order, and ACK frames,
 *     never acknowledging more frames than the engine took.
 * Each run dials a new connection and ends with a reset, so runs do not
 * depend on each other.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bfo_tcp.h"
#include "fuzz.h"
#include "fuzz_tcp_script.h"

#define TF_STREAM 16384 /* bytes rank 0 writes in one run, at most */
#define TF_POSTS 64     /* the backend's sends in one run */
#define TF_JOB 0x5eedf00d12345678ull


static const int tf_answers[6] = { BFO_OK, BFO_ERR_AGAIN, BFO_ERR_STALE, BFO_ERR_PROTOCOL,
                                   BFO_ERR_TRUNCATED, BFO_ERR_PEER_UNREACHABLE };

static struct {
    bfo_tcp *t;
    bfo_backend be;
    uint16_t port;
    const char *unavailable;
    size_t max_frame;
    /* this run */
    int fd, up, downs, ended;
    uint8_t sent[TF_STREAM]; /* what rank 0 wrote after its hello */
    size_t nsent, cursor;    /* ... and where the next frame for the engine starts */
    uint64_t next_seq;       /* rank 0's next DATA sequence number */
    uint64_t want_seq;       /* the next one the engine should get */
    int answer, again_left;  /* what the engine answers */
    int last_again;          /* the last answer was AGAIN: the same frame comes next */
    size_t again_at, again_len;
    int refused;             /* the engine refused a frame: nothing more on this connection */
    uint64_t taken;          /* frames the engine took (not AGAIN) */
    /* the backend's sends */
    uint64_t tok_base, ntok;
    int done[TF_POSTS], ok_[TF_POSTS];
    uint64_t max_ack;        /* the largest ack rank 0 sent (in any frame header) */
    size_t scan;             /* where the next header of rank 0's stream starts */
    int scan_lost;           /* ... or not any more: the framing broke there */
    uint64_t seq_of[TF_POSTS]; /* the sequence number post k's DATA frame had */
    /* what the backend wrote to rank 0 */
    uint8_t in[65536];
    size_t nin;
    int hello_seen;
    uint64_t in_seq, in_ack;
} T;

/* ------------------------------------------------------------ the sink */

static void tf_completion(void *ctx, uint64_t token, int ok)
{
    (void)ctx;
    uint64_t k = token - T.tok_base;
    FUZZ_CHECK(token >= T.tok_base && k < T.ntok, "completion of token %llu, never posted",
               (unsigned long long)token);
    FUZZ_CHECK(!T.done[k], "post %llu completed twice", (unsigned long long)k);
    T.done[k] = 1;
    T.ok_[k] = ok;
}

/* The frame must be the next DATA frame rank 0 wrote (ACK frames may come
 * before it), or the one the engine asked to have offered again. */
static int tf_frame(void *ctx, int peer, int rail, const uint8_t *buf, size_t len, uint64_t now)
{
    size_t p = T.cursor;
    (void)ctx;
    (void)now;
    FUZZ_CHECK(peer == 0 && rail == 0, "frame from peer %d rail %d", peer, rail);
    FUZZ_CHECK(T.up, "a frame while the connection is not up");
    FUZZ_CHECK(!T.refused, "a frame after the engine refused one on this connection");
    if (T.last_again) {
        FUZZ_CHECK(len == T.again_len && memcmp(buf, T.sent + T.again_at + BFO_TCP_HDR_SIZE, len) == 0,
                   "the frame offered again is not the one refused with BFO_ERR_AGAIN");
        p = T.again_at;
    } else {
        for (;;) { /* skip rank 0's ACK frames */
            FUZZ_CHECK(p + BFO_TCP_HDR_SIZE <= T.nsent, "a frame beyond what rank 0 wrote");
            FUZZ_CHECK(bfo_get16(T.sent + p + 4) == BFO_TCP_MAGIC, "a frame after bytes that are not one");
            if (T.sent[p + 6] != BFO_TCP_K_ACK)
                break;
            FUZZ_CHECK(bfo_get32(T.sent + p) == 0, "an ACK frame with a length was let through");
            p += BFO_TCP_HDR_SIZE;
        }
        const uint8_t *h = T.sent + p;
        FUZZ_CHECK(h[6] == BFO_TCP_K_DATA && bfo_get32(h) == len && len > 0 && len <= T.max_frame &&
                       p + BFO_TCP_HDR_SIZE + len <= T.nsent,
                   "the engine got %zu bytes that are not the next DATA frame (kind %u length %u)", len,
                   h[6], bfo_get32(h));
        FUZZ_CHECK(memcmp(buf, h + BFO_TCP_HDR_SIZE, len) == 0, "the frame's bytes are not rank 0's");
        FUZZ_CHECK(bfo_get64(h + 8) == T.want_seq, "frame sequence %llu given to the engine, %llu due",
                   (unsigned long long)bfo_get64(h + 8), (unsigned long long)T.want_seq);
    }
    int rc = T.answer;
    if (T.again_left > 0 && --T.again_left == 0)
        T.answer = BFO_OK; /* offered again: taken this time */
    T.last_again = rc == BFO_ERR_AGAIN;
    if (T.last_again) {
        T.again_at = p;
        T.again_len = len;
        return rc;
    }
    T.cursor = p + BFO_TCP_HDR_SIZE + len;
    T.want_seq++;
    T.taken++;
    if (rc != BFO_OK && rc != BFO_ERR_STALE)
        T.refused = 1;
    return rc;
}

static void tf_event(void *ctx, int peer, int rail, int ev, uint64_t now)
{
    (void)ctx;
    (void)now;
    FUZZ_CHECK(peer == 0 && rail == 0, "rail event for peer %d rail %d", peer, rail);
    if (ev == BFO_EV_CONNECTED) {
        FUZZ_CHECK(!T.up, "CONNECTED twice");
        T.up = 1;
    } else if (ev == BFO_EV_RAIL_ERROR) {
        T.up = 0;
        T.downs++;
    }
}

static void tf_heard(void *ctx, int peer, int rail, uint64_t now)
{
    (void)ctx;
    (void)now;
    FUZZ_CHECK(peer == 0 && rail == 0 && T.up, "heard peer %d rail %d", peer, rail);
}

/* ------------------------------------------------------------ rank 0 */

static int tf_setup(void)
{
    static int tried;
    bfo_config cfg;
    bfo_tcp_options opt;
    bfo_sink sink = { NULL, tf_completion, tf_frame, tf_event, tf_heard, NULL, NULL, NULL, NULL, NULL }; /* rank 0 dials: no lookup */
    bfo_transport_args a;
    bfo_addr me;
    const char *rails[1] = { "127.0.0.1" };
    if (tried)
        return T.t != NULL;
    tried = 1;
    memset(&cfg, 0, sizeof cfg);
    cfg.nrails = 1;
    cfg.eager_limit = 64; /* small frames: a small receive buffer, reassembly at its edges */
    cfg.frag_size = 96;
    cfg.max_requests = 8;
    memset(&opt, 0, sizeof opt);
    opt.log_level = -1;
    opt.ack_frames = 4;
    memset(&a, 0, sizeof a);
    a.rank = 1;
    a.size = 2;
    a.nrails = 1;
    a.rails = rails;
    a.cfg = &cfg;
    a.sink = &sink;
    a.opt = &opt;
    T.fd = -1;
    if (bfo_tcp_open(&T.t, &a) != BFO_OK) {
        T.unavailable = "cannot listen on 127.0.0.1 (no loopback interface?)";
        T.t = NULL;
        return 0;
    }
    bfo_tcp_address(T.t, 0, &me); /* u8 4, u8 0, u16 port (network order), the address */
    T.port = (uint16_t)(me.bytes[2] << 8 | me.bytes[3]);
    bfo_tcp_start(T.t, TF_JOB);
    bfo_tcp_backend(T.t, &T.be);
    T.max_frame = BFO_MAX_HDR_SIZE + BFO_HDR_RELAY_SIZE + 96; /* the transport's own: a RELAY's header fits */
    { /* listening is not enough: a network namespace whose loopback is down binds */
        struct sockaddr_in sa;
        int fd = socket(AF_INET, SOCK_STREAM, 0), ok;
        memset(&sa, 0, sizeof sa);
        sa.sin_family = AF_INET;
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        sa.sin_port = htons(T.port);
        ok = fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0;
        if (fd >= 0)
            close(fd);
        if (!ok) {
            T.unavailable = "cannot connect over 127.0.0.1 (loopback down?)";
            bfo_tcp_fini(T.t);
            T.t = NULL;
            return 0;
        }
    }
    return 1;
}

const char *fuzz_unavailable(void);
const char *fuzz_unavailable(void) { return tf_setup() ? NULL : T.unavailable; }

static void tf_progress(int n)
{
    for (int i = 0; i < n; i++)
        bfo_tcp_progress(T.t, 0);
}

/* Reads what the backend wrote to rank 0 and checks it. */
static void tf_read(void)
{
    for (;;) {
        ssize_t n;
        if (T.nin == sizeof T.in) { /* keep the unparsed tail only */
            FUZZ_CHECK(0, "the backend wrote more than %zu bytes", sizeof T.in);
        }
        n = recv(T.fd, T.in + T.nin, sizeof T.in - T.nin, MSG_DONTWAIT);
        if (n <= 0)
            break;
        T.nin += (size_t)n;
    }
    size_t p = 0;
    while (T.nin - p >= BFO_TCP_HDR_SIZE) {
        const uint8_t *h = T.in + p;
        uint32_t len = bfo_get32(h);
        FUZZ_CHECK(bfo_get16(h + 4) == BFO_TCP_MAGIC, "the backend wrote a bad magic");
        if (!T.hello_seen) {
            FUZZ_CHECK(h[6] == BFO_TCP_K_HELLO && len == BFO_TCP_HELLO_SIZE, "no hello first");
            if (T.nin - p < BFO_TCP_HDR_SIZE + len)
                break;
            FUZZ_CHECK(bfo_get32(h + 28) == 1 && bfo_get64(h + 40) == TF_JOB, "a hello of another rank");
            T.hello_seen = 1;
            p += BFO_TCP_HDR_SIZE + len;
            continue;
        }
        FUZZ_CHECK((h[7] & ~BFO_TCP_F_STALLED) == 0, "flags %u", h[7]);
        uint64_t ack = bfo_get64(h + 16);
        FUZZ_CHECK(ack >= T.in_ack && ack <= T.taken, "the backend acknowledged %llu frames, the engine "
                   "took %llu (acknowledged before: %llu)", (unsigned long long)ack,
                   (unsigned long long)T.taken, (unsigned long long)T.in_ack);
        T.in_ack = ack;
        if (h[6] == BFO_TCP_K_ACK) {
            FUZZ_CHECK(len == 0 && bfo_get64(h + 8) == 0, "a bad ACK frame");
            p += BFO_TCP_HDR_SIZE;
            continue;
        }
        FUZZ_CHECK(h[6] == BFO_TCP_K_DATA && len > 0 && len <= T.max_frame, "kind %u length %u", h[6],
                   len);
        if (T.nin - p < BFO_TCP_HDR_SIZE + len)
            break;
        uint64_t seq = bfo_get64(h + 8);
        FUZZ_CHECK(seq == T.in_seq + 1, "DATA sequence %llu after %llu", (unsigned long long)seq,
                   (unsigned long long)T.in_seq);
        /* the frame names its post: the token's index in its first 8 bytes */
        uint64_t k = bfo_get64(h + BFO_TCP_HDR_SIZE);
        FUZZ_CHECK(k < T.ntok && !T.seq_of[k], "DATA frame of post %llu (posts: %llu), or twice",
                   (unsigned long long)k, (unsigned long long)T.ntok);
        for (uint32_t j = 8; j < len; j++)
            FUZZ_CHECK(h[BFO_TCP_HDR_SIZE + j] == (uint8_t)(k * 7 + j), "post %llu's bytes changed",
                       (unsigned long long)k);
        T.seq_of[k] = seq;
        T.in_seq = seq;
        p += BFO_TCP_HDR_SIZE + len;
    }
    memmove(T.in, T.in + p, T.nin - p);
    T.nin -= p;
}

/* The acks in rank 0's stream, whichever command wrote them (raw bytes
 * too): frame by frame while the framing holds. */
static void tf_scan_acks(void)
{
    while (!T.scan_lost && T.nsent - T.scan >= BFO_TCP_HDR_SIZE) {
        const uint8_t *h = T.sent + T.scan;
        uint32_t len = bfo_get32(h);
        if (bfo_get16(h + 4) != BFO_TCP_MAGIC || len > T.max_frame + 256) {
            T.scan_lost = 1; /* the backend drops the connection here: no ack after it counts */
            return;
        }
        if (bfo_get64(h + 16) > T.max_ack)
            T.max_ack = bfo_get64(h + 16);
        if (T.nsent - T.scan < BFO_TCP_HDR_SIZE + (size_t)len)
            return;
        T.scan += BFO_TCP_HDR_SIZE + len;
    }
}

static void tf_write(const uint8_t *b, size_t n)
{
    if (T.ended || T.nsent + n > sizeof T.sent)
        return;
    while (n) {
        ssize_t w = send(T.fd, b, n, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w <= 0) /* the backend stalled or dropped the connection: the rest is not sent */
            break;
        memcpy(T.sent + T.nsent, b, (size_t)w);
        T.nsent += (size_t)w;
        b += w;
        n -= (size_t)w;
    }
    tf_scan_acks();
    tf_progress(2);
    tf_read();
}

static void tf_header(uint8_t *h, uint32_t len, int kind, uint64_t seq, uint64_t ack, int flags)
{
    bfo_tcp_frame_header(h, len, kind, seq, ack);
    h[7] = (uint8_t)flags;
}

/* A blocking connect that a signal may interrupt (libFuzzer's SIGALRM for
 * -timeout): the connection goes on in the kernel; wait for it. */
static int tf_connect(int fd, const struct sockaddr_in *sa)
{
    int err = 0;
    socklen_t el = sizeof err;
    struct pollfd pf = { fd, POLLOUT, 0 };
    if (connect(fd, (const struct sockaddr *)sa, sizeof *sa) == 0)
        return 0;
    if (errno != EINTR)
        return -1;
    while (poll(&pf, 1, 1000) < 0 && errno == EINTR)
        ;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) != 0 || err != 0) {
        errno = err ? err : errno;
        return -1;
    }
    return 0;
}

static int tf_dial(void)
{
    struct sockaddr_in sa;
    uint8_t h[BFO_TCP_HDR_SIZE + BFO_TCP_HELLO_SIZE];
    int one = 1;
    T.fd = socket(AF_INET, SOCK_STREAM, 0);
    FUZZ_CHECK(T.fd >= 0, "socket: %s", strerror(errno));
    /* every write goes out at once: no Nagle holding small pieces back */
    setsockopt(T.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sa.sin_port = htons(T.port);
    FUZZ_CHECK(tf_connect(T.fd, &sa) == 0, "connect: %s", strerror(errno));
    tf_header(h, BFO_TCP_HELLO_SIZE, BFO_TCP_K_HELLO, 0, 0, 0);
    static uint64_t attempt; /* a dialer's attempts only go up (a stale one is refused) */
    bfo_put32(h + 24, BFO_TCP_HELLO_VERSION);
    bfo_put32(h + 28, 0); /* rank 0 */
    bfo_put32(h + 32, 0); /* rail 0 */
    bfo_put32(h + 36, 2);
    bfo_put64(h + 40, TF_JOB);
    bfo_put64(h + 48, ++attempt);
    bfo_put64(h + 56, 0); /* dialed, answer (a hello), 0 */
    bfo_put32(h + 64, 0);
    bfo_put32(h + 68, 0);
    FUZZ_CHECK(send(T.fd, h, sizeof h, MSG_NOSIGNAL) == (ssize_t)sizeof h, "hello: %s", strerror(errno));
    for (int i = 0; i < 100000 && !T.up; i++)
        tf_progress(1);
    FUZZ_CHECK(T.up, "the backend did not take the connection");
    return 0;
}

/* The end of a run: rank 0 resets the connection; the backend must report
 * the rail's error and complete every post. */
static void tf_end(void)
{
    struct linger lg = { 1, 0 };
    tf_progress(4);
    tf_read();
    setsockopt(T.fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    close(T.fd);
    T.fd = -1;
    for (int i = 0; i < 100000 && T.up; i++)
        tf_progress(1);
    FUZZ_CHECK(!T.up, "the backend did not notice the reset");
    tf_progress(2);
    for (uint64_t k = 0; k < T.ntok; k++)
        FUZZ_CHECK(T.done[k], "post %llu never completed", (unsigned long long)k);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint64_t tokens = 1000;
    fuzz_in in = { data, size, 0 };
    if (!tf_setup()) {
        fprintf(stderr, "fuzz_tcp_frames: %s\n", T.unavailable);
        abort();
    }
    {   /* a fresh run; the backend stays */
        bfo_tcp *t = T.t;
        bfo_backend be = T.be;
        uint16_t port = T.port;
        size_t mf = T.max_frame;
        memset(&T, 0, sizeof T);
        T.t = t;
        T.be = be;
        T.port = port;
        T.max_frame = mf;
    }
    T.next_seq = T.want_seq = 1;
    T.answer = BFO_OK;
    T.tok_base = tokens;
    tokens += TF_POSTS;
    tf_dial();
    for (int steps = 0; fuzz_more(&in) && steps < 512; steps++) {
        uint8_t a, b[BFO_TCP_HDR_SIZE + 256];
        size_t got;
        switch (fuzz_u8(&in) % TF_NCMD) {
        case TF_RAW: {
            const uint8_t *p = fuzz_bytes(&in, (size_t)fuzz_u8(&in) + 1, &got);
            tf_write(p, got);
            break;
        }
        case TF_DATA:
        case TF_DATA2: { /* a DATA frame: right unless the script says otherwise */
            a = fuzz_u8(&in);
            size_t len = fuzz_u8(&in);
            if (a & 0x40)
                len += 0x100; /* beyond the largest frame */
            uint64_t seq = T.next_seq + ((a & 0x08) ? (a >> 4) % 3 + 1 : 0);
            uint64_t ack = (a & 0x02) ? T.in_seq + 1 + (a >> 4) % 2 : T.in_seq;
            size_t body = len > 256 ? 0 : len;
            const uint8_t *p = fuzz_bytes(&in, body, &got);
            tf_header(b, (uint32_t)len, BFO_TCP_K_DATA, seq, ack, a & 0x01);
            memcpy(b + BFO_TCP_HDR_SIZE, p, got);
            memset(b + BFO_TCP_HDR_SIZE + got, 0, body - got);
            if (!(a & 0x08))
                T.next_seq++;
            tf_write(b, BFO_TCP_HDR_SIZE + body);
            break;
        }
        case TF_ACK: /* up to one beyond what the backend sent */
            a = fuzz_u8(&in);
            tf_header(b, 0, BFO_TCP_K_ACK, (a & 0x10) ? 1 : 0, T.in_seq + (a & 1), (a >> 1) & 1);
            tf_write(b, BFO_TCP_HDR_SIZE);
            break;
        case TF_ANSWER:
            a = fuzz_u8(&in);
            T.answer = tf_answers[a % 6];
            T.again_left = T.answer == BFO_ERR_AGAIN ? (a >> 4) + 1 : 0;
            break;
        case TF_POST: { /* the backend sends a frame: the token's index, then a pattern */
            a = fuzz_u8(&in);
            size_t len = 8 + a % (T.max_frame - 7);
            if (T.ntok == TF_POSTS)
                break;
            uint64_t k = T.ntok++;
            bfo_put64(b, k);
            for (size_t j = 8; j < len; j++)
                b[j] = (uint8_t)(k * 7 + j);
            bfo_iov iov[2] = { { b, len / 2 }, { b + len / 2, len - len / 2 } };
            int rc = T.be.post_send(T.be.ctx, 0, 0, iov, 2, T.tok_base + k);
            FUZZ_CHECK(rc == 0, "post_send refused a frame of %zu bytes", len);
            tf_progress(1);
            tf_read();
            break;
        }
        case TF_PROGRESS:
            tf_progress(fuzz_u8(&in) % 8 + 1);
            tf_read();
            break;
        case TF_DISCONNECT: /* the engine maps the rail out */
            T.be.disconnect(T.be.ctx, 0, 0);
            tf_progress(1);
            break;
        case TF_SHUTDOWN: /* rank 0 is done writing */
            shutdown(T.fd, SHUT_WR);
            T.ended = 1;
            tf_progress(2);
            tf_read();
            break;
        }
        if (!T.up) /* the connection is gone: nothing more happens on it */
            break;
    }
    tf_end();
    if (getenv("FZ_TRACE")) {
        unsigned long oks = 0;
        for (uint64_t k = 0; k < T.ntok; k++)
            oks += (unsigned long)T.ok_[k];
        fprintf(stderr, "fuzz_tcp_frames: %zu bytes written, %llu frames taken by the engine%s, "
                "%llu posts (%lu ok), %llu DATA frames read, acked up to %llu\n", T.nsent,
                (unsigned long long)T.taken, T.refused ? " (then one refused)" : "",
                (unsigned long long)T.ntok, oks, (unsigned long long)T.in_seq,
                (unsigned long long)T.max_ack);
    }
    /* ok only for what rank 0 acknowledged: the post's frame was written,
     * and rank 0 sent an ack that covers its sequence number */
    for (uint64_t k = 0; k < T.ntok; k++)
        if (T.ok_[k])
            FUZZ_CHECK(T.seq_of[k] && T.seq_of[k] <= T.max_ack,
                       "post %llu (sequence %llu) completed ok, rank 0 acknowledged up to %llu",
                       (unsigned long long)k, (unsigned long long)T.seq_of[k],
                       (unsigned long long)T.max_ack);
    return 0;
}
