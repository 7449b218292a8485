// SPDX-License-Identifier: BSD-3-Clause
/* bfo_bench.c - `bfo bench`: ping-pong latency and streaming bandwidth over
 * the TCP backend, optionally against a plain TCP socket in the same run.
 *
 *   bfo bench [--sizes LIST] [--rails A,B,...] [--baseline] [--csv [FILE]]
 *             [--plot FILE.png] [--rounds R] [--window W] [--iters N]
 *             [--msgs N] [--raw-blocking] [--timeout SEC] [--verbose]
 *             [--eager-limit SIZE]
 *   bfo bench --latency [--sizes LIST] [--rails A,B,...] [--rounds R]
 *             [--iters N] [--max-iters N] [--eager-limit SIZE] [--fail-above X]
 *             [--csv [FILE]]
 *   bfo bench --plot FILE.png --input LABEL=FILE.csv [--input LABEL=FILE.csv]...
 *
 *   Two ranks.  Under `bfo run -n 2 [--rails A,B] -- bfo bench ...` it runs
 *   directly; started without BFO_RANK it launches itself that way (bfo run
 *   -n 2, with --rails passed on).  Rank 0 prints the table and writes the
 *   CSV and the plot.
 *
 *   --sizes LIST    message sizes, K and M suffixes (default 1 B to 16 MiB in
 *                   powers of two; with --latency 8 B to 4 MiB and the size
 *                   1 KiB above the eager limit)
 *   --latency       latency only, raw TCP side by side (--baseline implied),
 *                   no bandwidth phases: the table of issue 16's item 10,
 *                   size, bfo_us, raw_us, ratio, target, verdict, and one
 *                   line judging every size (at most 1.5x the raw half round
 *                   trip of the same size; at most 1.2x at 8 B and 1 MiB).
 *                   bfo_us and raw_us are the medians of the rounds'
 *                   medians, ratio the median of the rounds' ratios (each
 *                   round's bfo median over the raw median measured next to
 *                   it), so that one round disturbed by another process
 *                   weighs little.  Fewer than 5 rounds: no verdict
 *                   --csv: size,protocol,lat_us,raw_lat_us,lat_ratio,target,
 *                   ok (1 or 0),lat_min_us,raw_lat_min_us (the fastest
 *                   iteration of every round: what a cliff moves too, and
 *                   other processes on the machine hardly do)
 *   --fail-above X  with --latency: exit status 3 when a size's ratio is
 *                   above X (for CI on a noisy machine: only gross misses;
 *                   the targets are printed, not enforced)
 *   --eager-limit SIZE  the engine's eager limit (bfo_config.eager_limit;
 *                   default: BFO_EAGER_LIMIT, else 64 KiB over TCP rails
 *                   alone, the engine's 4 KiB otherwise); the
 *                   table's header says which one is in force
 *   --baseline      also a plain TCP connection between the same two
 *                   processes (127.0.0.1, TCP_NODELAY), same sizes and
 *                   counts, measured in the same rounds, and our/raw ratios
 *   --compare RAILS also bfo over these rails (a second bfo_net between the
 *                   same two processes, e.g. --rails shm --compare
 *                   127.0.0.2), measured in the same rounds: columns
 *                   cmp_lat_us, cmp_MBps and the ratios lat/cmp, bw/cmp
 *                   (while one net is measured, the other gets one progress
 *                   call in 64: it may owe its peer acknowledgements)
 *   --rounds R      measured rounds per size (default 5), after one warm-up
 *                   round that is thrown away.  Each round measures bfo
 *                   latency, raw latency, bfo bandwidth, raw bandwidth; the
 *                   order of bfo and raw alternates from round to round
 *   --iters N       ping-pongs per round (default: 1000 for small messages,
 *                   fewer for large ones, at least 10)
 *   --max-iters N   the default's 1000 lowered to N (a quicker run)
 *   --msgs N        messages per bandwidth round (default: 64 MiB worth,
 *                   between 32 and 4000)
 *   --window W      bfo messages in flight in the stream (default 16)
 *   --raw-blocking  the raw side blocks in recv (as NetPIPE does) instead of
 *                   busy-polling with MSG_DONTWAIT (the default: bfo busy-
 *                   polls too, bfo_tcp_progress(t, 0))
 *   --csv [FILE]    rows: size,lat_us,bw_MBps,raw_lat_us,raw_bw_MBps,
 *                   lat_ratio,bw_ratio,lat_min_us,raw_lat_min_us (raw and
 *                   ratio fields empty without --baseline); no FILE or "-":
 *                   stdout, instead of the table
 *   --timeout SEC   give up (exit 1, the transport's state on stderr) after
 *                   SEC seconds (default 600); SIGUSR2 prints that state and
 *                   goes on
 *   --verbose       each phase on stderr as it starts (CLOCK_MONOTONIC
 *                   seconds), each round's latency medians and bandwidths
 *                   (lines "bfo bench: SIZE B round R: KIND latency median
 *                   X us" and "... KIND bandwidth X MB/s", KIND bfo, raw or
 *                   compare: bench/tcp.sh reads them), and the
 *                   engine's map-outs at the end
 *   --plot FILE.png latency and bandwidth against size (gnuplot, Debian
 *                   package gnuplot-nox; exit 1 if it is missing)
 *   --input LABEL=FILE.csv  with --plot: no benchmark, plot these CSVs (one
 *                   curve each, plus the raw baseline of the first that has
 *                   one).  bench/plot.sh runs 1 and 2 rails and does this.
 *
 *   Latency: half the round trip of each ping-pong, median (and min) over
 *   every measured iteration of every round.  Rank 0 sends the ping, then
 *   posts the receive of the pong; rank 1 sends the pong, then posts the
 *   receive of the next ping (the order of MPI latency benchmarks: send,
 *   then receive; neither receive is needed before a round trip).
 *   Bandwidth: rank 0 streams N messages (W in flight for bfo; the socket
 *   buffer for raw), rank 1 answers with one small message once it has
 *   them all; bytes / time, median over the rounds.  Buffers are reused
 *   (one per side), as NetPIPE does.  The engine's heartbeat is set to 1 s,
 *   its probe timeout to 5 s and silence to 30 s, so that probes do not land
 *   in the measurement and the raw phases (no bfo progress; on a loaded
 *   machine a 4 MiB raw phase took over a second) cannot look like a
 *   silent rail.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bfo_net.h"
#include "bfo_tcp.h"

int bfo_cmd_bench(int argc, char **argv);
int bfo_cmd_run(int argc, char **argv);

#define BN_MAX_SIZES 64
#define BN_MAX_INPUTS 8
#define BN_TAG_LAT 1
#define BN_TAG_BW 2
#define BN_TAG_DONE 3
#define BN_TAG_SYNC 4

typedef struct bench {
    bfo_net *t;
    bfo_engine *e;
    int rank, peer, window, rounds, iters, max_iters, msgs, baseline, raw_blocking;
    int fd; /* raw socket, or -1 */
    int latency_only;
    size_t sizes[BN_MAX_SIZES];
    int nsizes;
    size_t maxsize;
    char *sbuf, *rbuf;
    bfo_request *sreq, *rreq;
    uint64_t deadline;
    int failed, verbose;
    const char *phase; /* where it is, for the timeout message */
    size_t phase_size;
    /* the nets: 0 over --rails, 1 over --compare; t and e above are the
     * one being measured (use_net).  Each has its barrier's sends, which
     * stay where they are: the engine holds them by address. */
    struct bench_net {
        bfo_net *t;
        bfo_engine *e;
        bfo_request sync_s[2]; /* barrier sends, completed lazily */
        uint64_t sync_out[2];
        int sync_used[2], nsync;
    } net[2], *cur;
    int compare;
    unsigned spin;
} bench;

typedef struct result {
    size_t size;
    double lat, lat_min, bw, raw_lat, raw_lat_min, raw_bw, cmp_lat, cmp_lat_min, cmp_bw;
    /* --latency: medians of the rounds' medians, and of their ratios */
    double r_lat, r_raw, r_ratio;
} result;

/* Makes the --compare net (alt 1) or the main one (alt 0) the one every
 * bfo phase uses. */
static void use_net(bench *b, int alt)
{
    b->cur = &b->net[alt];
    b->t = b->cur->t;
    b->e = b->cur->e;
}

static const char bench_usage[] =
    "usage: bfo bench [--sizes LIST] [--rails A,B,...] [--baseline] [--compare RAILS] [--csv [FILE]]\n"
    "                 [--plot FILE.png]\n"
    "                 [--rounds R] [--iters N] [--msgs N] [--window W] [--raw-blocking] [--timeout SEC]\n"
    "                 [--verbose] [--eager-limit SIZE]\n"
    "       bfo bench --latency [--sizes LIST] [--rails A,B,...] [--rounds R] [--iters N] [--max-iters N]\n"
    "                 [--eager-limit SIZE] [--fail-above X] [--csv [FILE]]\n"
    "       bfo bench --plot FILE.png --input LABEL=FILE.csv [--input LABEL=FILE.csv]...\n"
    "  two ranks: under `bfo run -n 2 -- bfo bench ...`, or it launches itself so\n";

/* A size alone or in a list ("8,64K": bfo_setting.h's syntax), 0 for
 * anything else ("64Q" and "1.5K" were 64 and 1). */
static size_t bn_parse_size(const char *s)
{
    const char *end;
    unsigned long long v;
    return bfo_size_prefix(s, &end, &v) == 0 && (!*end || *end == ',') ? (size_t)v : 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    if (n <= 0)
        return 0;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ----------------------------------------------------------- bfo side */

/* SIGUSR2: dump the transport's state (bfo_net_dump) once, and go on. */
static volatile sig_atomic_t dump_asked;
static void on_usr2(int sig)
{
    (void)sig;
    dump_asked = 1;
}

static int overdue(bench *b)
{
    if (dump_asked) {
        dump_asked = 0;
        fprintf(stderr, "bfo bench[%d]: state in %s (%zu B)\n", b->rank, b->phase ? b->phase : "start",
                b->phase_size);
        bfo_net_dump(b->t, stderr);
    }
    if (bfo_net_now() <= b->deadline)
        return 0;
    if (!b->failed) {
        fprintf(stderr, "bfo bench[%d]: timed out in %s (%zu B)\n", b->rank,
                b->phase ? b->phase : "start", b->phase_size);
        bfo_net_dump(b->t, stderr);
    }
    b->failed = 1;
    return 1;
}

/* --verbose: each phase as it starts (CLOCK_MONOTONIC seconds, the clock
 * of the backends' log lines). */
static void bn_phase(bench *b, const char *phase, size_t size, int round)
{
    b->phase = phase;
    b->phase_size = size;
    if (b->verbose)
        fprintf(stderr, "bfo bench[%d] %.3f: %zu B round %d: %s\n", b->rank, (double)bfo_net_now() / 1e9,
                size, round, phase);
}

/* One progress of the net being measured, and now and then of the other
 * (--compare): it owes its peer acknowledgements from its last phase, which
 * the peer may be waiting for. */
static inline void bn_progress(bench *b)
{
    bfo_net_progress(b->t, 0);
    if (b->compare && (++b->spin & 63) == 0)
        bfo_net_progress(b->net[b->cur == b->net].t, 0);
}

static int bn_wait(bench *b, bfo_request *r)
{
    while (!bfo_test(r)) {
        if (overdue(b))
            return -1;
        bn_progress(b);
    }
    if (r->status != BFO_OK) {
        fprintf(stderr, "bfo bench[%d]: request failed: %s\n", b->rank, bfo_errname(r->status));
        b->failed = 1;
        return -1;
    }
    return 0;
}

static int bn_send(bench *b, bfo_request *r, const void *buf, size_t len, int tag)
{
    int rc = bfo_isend(b->e, r, buf, len, b->peer, 0, tag, bfo_net_now());
    if (rc != BFO_OK) {
        fprintf(stderr, "bfo bench[%d]: isend: %s\n", b->rank, bfo_errname(rc));
        b->failed = 1;
    }
    return rc;
}

static int bn_recv(bench *b, bfo_request *r, void *buf, size_t len, int tag)
{
    int rc = bfo_irecv(b->e, r, buf, len, b->peer, 0, tag, bfo_net_now());
    if (rc != BFO_OK) {
        fprintf(stderr, "bfo bench[%d]: irecv: %s\n", b->rank, bfo_errname(rc));
        b->failed = 1;
    }
    return rc;
}

/* A small exchange both ways: a barrier on the bfo side.  The send is not
 * waited for: it completes once the peer acknowledges it, and the peer may
 * go straight into a raw phase (no bfo progress) owing that ack.  Two send
 * slots alternate; the older one is complete by the time it is reused (the
 * peer has been through another barrier since).  final: wait for both. */
static int bn_sync_final(bench *b, int final)
{
    uint64_t in = 0;
    bfo_request r;
    int k = b->cur->nsync++ & 1;
    if (b->cur->sync_used[k] && bn_wait(b, &b->cur->sync_s[k]))
        return -1;
    b->cur->sync_out[k] = 1;
    b->cur->sync_used[k] = 1;
    if (bn_recv(b, &r, &in, sizeof in, BN_TAG_SYNC) ||
        bn_send(b, &b->cur->sync_s[k], &b->cur->sync_out[k], sizeof b->cur->sync_out[k], BN_TAG_SYNC))
        return -1;
    if (bn_wait(b, &r))
        return -1;
    for (int j = 0; final && j < 2; j++)
        if (b->cur->sync_used[j] && bn_wait(b, &b->cur->sync_s[j]))
            return -1;
    return 0;
}

static int bn_sync(bench *b) { return bn_sync_final(b, 0); }

/* n ping-pongs of size bytes; rank 0 stores half round trips (us) in out. */
static int bfo_lat(bench *b, size_t size, int n, double *out)
{
    if (b->rank == 0) {
        for (int i = 0; i < n; i++) {
            uint64_t t0 = bfo_net_now();
            /* the ping first, then the receive of its pong, as MPI latency
             * benchmarks do (send, then receive): the pong cannot come back
             * before a round trip, so the receive is in place in time */
            if (bn_send(b, &b->sreq[0], b->sbuf, size, BN_TAG_LAT) ||
                bn_recv(b, &b->rreq[0], b->rbuf, size, BN_TAG_LAT))
                return -1;
            if (bn_wait(b, &b->rreq[0]) || bn_wait(b, &b->sreq[0]))
                return -1;
            out[i] = (double)(bfo_net_now() - t0) / 2e3;
        }
        return 0;
    }
    /* rank 1: the pong goes out, then the next receive is posted (it is in
     * place long before the next ping can come back); a pong's send
     * completes with the next ping, which carries its ack */
    if (bn_recv(b, &b->rreq[0], b->rbuf, size, BN_TAG_LAT))
        return -1;
    for (int i = 0; i < n; i++) {
        bfo_request *r = &b->rreq[i & 1], *s = &b->sreq[i & 1];
        if (bn_wait(b, r))
            return -1;
        if (i >= 2 && bn_wait(b, s))
            return -1;
        if (bn_send(b, s, b->sbuf, size, BN_TAG_LAT))
            return -1;
        if (i + 1 < n && bn_recv(b, &b->rreq[(i + 1) & 1], b->rbuf, size, BN_TAG_LAT))
            return -1;
    }
    for (int k = 0; k < 2 && k < n; k++)
        if (bn_wait(b, &b->sreq[k]))
            return -1;
    return 0;
}

/* Rank 0 streams n messages, W in flight; rank 1 answers once it has them
 * all.  Returns bytes/s on rank 0 (0 on rank 1), -1 on failure. */
/* One side of the bandwidth stream: W messages of `size` in flight (sends
 * or receives), each reposted as it completes, until n have completed.
 * Returns 0, or -1 (failed or overdue). */
static int bn_window(bench *b, size_t size, int n, int sender)
{
    bfo_request *q = sender ? b->sreq : b->rreq;
    int W = b->window, posted = 0, finished = 0;
    char act[256];
    memset(act, 0, sizeof act);
    for (; finished < n; bn_progress(b)) {
        if (overdue(b))
            return -1;
        for (int w = 0; w < W; w++) {
            if (act[w] && bfo_test(&q[w])) {
                if (q[w].status != BFO_OK) {
                    fprintf(stderr, "bfo bench[%d]: %s failed: %s\n", b->rank,
                            sender ? "send" : "receive", bfo_errname(q[w].status));
                    b->failed = 1;
                    return -1;
                }
                finished++;
                act[w] = 0;
            }
            if (!act[w] && posted < n) {
                posted++;
                act[w] = 1;
                if (sender ? bn_send(b, &q[w], b->sbuf, size, BN_TAG_BW)
                           : bn_recv(b, &q[w], b->rbuf, size, BN_TAG_BW))
                    return -1;
            }
        }
    }
    return 0;
}

static double bfo_bw(bench *b, size_t size, int n)
{
    uint64_t done = 0;
    bfo_request dr;
    uint64_t t0 = bfo_net_now();
    if (b->rank == 0) {
        if (bn_recv(b, &dr, &done, sizeof done, BN_TAG_DONE))
            return -1;
        if (bn_window(b, size, n, 1))
            return -1;
        if (bn_wait(b, &dr))
            return -1;
        return (double)size * n / ((double)(bfo_net_now() - t0) / 1e9);
    }
    if (bn_window(b, size, n, 0))
        return -1;
    done = (uint64_t)n;
    if (bn_send(b, &dr, &done, sizeof done, BN_TAG_DONE) || bn_wait(b, &dr))
        return -1;
    return 0;
}

/* ----------------------------------------------------------- raw side */

static int raw_io(bench *b, int out, char *buf, size_t len)
{
    size_t off = 0;
    int flags = b->raw_blocking ? 0 : MSG_DONTWAIT;
    while (off < len) {
        ssize_t k = out ? send(b->fd, buf + off, len - off, flags | MSG_NOSIGNAL)
                        : recv(b->fd, buf + off, len - off, flags);
        if (k > 0) {
            off += (size_t)k;
            continue;
        }
        if (k == 0) {
            fprintf(stderr, "bfo bench[%d]: raw socket closed\n", b->rank);
            b->failed = 1;
            return -1;
        }
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
            if (overdue(b))
                return -1;
            continue;
        }
        fprintf(stderr, "bfo bench[%d]: raw %s: %s\n", b->rank, out ? "send" : "recv", strerror(errno));
        b->failed = 1;
        return -1;
    }
    return 0;
}

static int raw_lat(bench *b, size_t size, int n, double *out)
{
    for (int i = 0; i < n; i++) {
        uint64_t t0 = bfo_net_now();
        if (b->rank == 0) {
            if (raw_io(b, 1, b->sbuf, size) || raw_io(b, 0, b->rbuf, size))
                return -1;
            out[i] = (double)(bfo_net_now() - t0) / 2e3;
        } else if (raw_io(b, 0, b->rbuf, size) || raw_io(b, 1, b->sbuf, size))
            return -1;
    }
    return 0;
}

static double raw_bw(bench *b, size_t size, int n)
{
    char ack[8] = { 0 };
    uint64_t t0 = bfo_net_now();
    if (b->rank == 0) {
        for (int i = 0; i < n; i++)
            if (raw_io(b, 1, b->sbuf, size))
                return -1;
        if (raw_io(b, 0, ack, sizeof ack))
            return -1;
        return (double)size * n / ((double)(bfo_net_now() - t0) / 1e9);
    }
    for (int i = 0; i < n; i++)
        if (raw_io(b, 0, b->rbuf, size))
            return -1;
    return raw_io(b, 1, ack, sizeof ack) ? -1 : 0;
}

/* Rank 1 listens on 127.0.0.1 and sends its port over bfo; rank 0 dials. */
static int raw_setup(bench *b)
{
    int one = 1, fd;
    uint32_t port = 0;
    struct sockaddr_in sa;
    socklen_t sl = sizeof sa;
    bfo_request r;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (b->rank == 1) {
        int l = socket(AF_INET, SOCK_STREAM, 0);
        if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof sa) || listen(l, 1) ||
            getsockname(l, (struct sockaddr *)&sa, &sl)) {
            perror("bfo bench[1]: raw listen");
            return -1;
        }
        port = ntohs(sa.sin_port);
        if (bn_send(b, &r, &port, sizeof port, BN_TAG_SYNC) || bn_wait(b, &r))
            return -1;
        fd = accept(l, NULL, NULL);
        close(l);
    } else {
        if (bn_recv(b, &r, &port, sizeof port, BN_TAG_SYNC) || bn_wait(b, &r))
            return -1;
        sa.sin_port = htons((uint16_t)port);
        fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa)) {
            close(fd);
            fd = -1;
        }
    }
    if (fd < 0) {
        fprintf(stderr, "bfo bench[%d]: raw connection: %s\n", b->rank, strerror(errno));
        return -1;
    }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (!b->raw_blocking)
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    b->fd = fd;
    return bn_sync(b);
}

/* ----------------------------------------------------------- output */

static void fmt_size(char *o, size_t n, size_t s)
{
    if (s >= 1048576 && s % 1048576 == 0)
        snprintf(o, n, "%zuM", s / 1048576);
    else if (s >= 1024 && s % 1024 == 0)
        snprintf(o, n, "%zuK", s / 1024);
    else
        snprintf(o, n, "%zu", s);
}

static void print_table(FILE *f, const result *res, int n, int baseline, int nrails, const char *compare)
{
    fprintf(f, "bfo bench: %d rail%s, latency = half round trip (median; min), bandwidth = median "
               "of rounds; MB/s = 1e6 B/s\n", nrails, nrails > 1 ? "s" : "");
    if (baseline)
        fprintf(f, "%8s %10s %9s %10s | %10s %9s %10s | %9s %8s\n", "size", "lat_us", "min_us", "bw_MBps",
                "raw_lat_us", "raw_min", "raw_MBps", "lat_ratio", "bw_ratio");
    else
        fprintf(f, "%8s %10s %9s %10s\n", "size", "lat_us", "min_us", "bw_MBps");
    for (int i = 0; i < n; i++) {
        const result *r = &res[i];
        char sz[32];
        fmt_size(sz, sizeof sz, r->size);
        if (baseline)
            fprintf(f, "%8s %10.2f %9.2f %10.2f | %10.2f %9.2f %10.2f | %9.3f %8.3f\n", sz, r->lat,
                    r->lat_min, r->bw, r->raw_lat, r->raw_lat_min, r->raw_bw, r->lat / r->raw_lat,
                    r->bw / r->raw_bw);
        else
            fprintf(f, "%8s %10.2f %9.2f %10.2f\n", sz, r->lat, r->lat_min, r->bw);
    }
    if (compare) {
        fprintf(f, "bfo bench: the same rounds over --compare %s (lat/cmp < 1: these rails are faster)\n", compare);
        fprintf(f, "%8s %10s %10s | %10s %9s %10s | %9s %8s\n", "size", "lat_us", "bw_MBps", "cmp_lat_us",
                "cmp_min", "cmp_MBps", "lat/cmp", "bw/cmp");
        for (int i = 0; i < n; i++) {
            const result *r = &res[i];
            char sz[32];
            fmt_size(sz, sizeof sz, r->size);
            fprintf(f, "%8s %10.2f %10.2f | %10.2f %9.2f %10.2f | %9.3f %8.3f\n", sz, r->lat, r->bw, r->cmp_lat,
                    r->cmp_lat_min, r->cmp_bw, r->lat / r->cmp_lat, r->bw / r->cmp_bw);
        }
    }
    for (int i = 0; baseline && i < n; i++) {
        if (res[i].size == 8)
            fprintf(f, "target: 8 B latency at most 1.10x raw: %.3fx (%s)\n", res[i].lat / res[i].raw_lat,
                    res[i].lat / res[i].raw_lat <= 1.10 ? "met" : "NOT met");
        if (res[i].size == 1048576)
            fprintf(f, "target: 1 MiB bandwidth at least 0.90x raw: %.3fx (%s)\n", res[i].bw / res[i].raw_bw,
                    res[i].bw / res[i].raw_bw >= 0.90 ? "met" : "NOT met");
    }
}

static void write_csv(FILE *f, const result *res, int n, int baseline)
{
    fprintf(f, "size,lat_us,bw_MBps,raw_lat_us,raw_bw_MBps,lat_ratio,bw_ratio,lat_min_us,raw_lat_min_us\n");
    for (int i = 0; i < n; i++) {
        const result *r = &res[i];
        if (baseline)
            fprintf(f, "%zu,%.3f,%.3f,%.3f,%.3f,%.4f,%.4f,%.3f,%.3f\n", r->size, r->lat, r->bw, r->raw_lat,
                    r->raw_bw, r->lat / r->raw_lat, r->bw / r->raw_bw, r->lat_min, r->raw_lat_min);
        else
            fprintf(f, "%zu,%.3f,%.3f,,,,,%.3f,\n", r->size, r->lat, r->bw, r->lat_min);
    }
}

/* Issue 16, item 10: every size at most 1.5x the raw half round trip of
 * the same size, at most 1.2x at 8 B and 1 MiB. */
static double lat_target(size_t size) { return size == 8 || size == 1048576 ? 1.2 : 1.5; }

static void print_latency_table(FILE *f, const result *res, int n, int nrails, size_t eager, int rounds)
{
    int miss = 0, worst = -1;
    fprintf(f, "bfo bench --latency: %d rail%s, eager limit %zu B; half round trip in us: median of %d "
               "interleaved rounds' medians; ratio: median of the rounds' bfo/raw\n",
            nrails, nrails > 1 ? "s" : "", eager, rounds);
    fprintf(f, "%8s %6s %10s %10s %7s %7s %s\n", "size", "proto", "bfo_us", "raw_us", "ratio", "target",
            "verdict");
    for (int i = 0; i < n; i++) {
        const result *r = &res[i];
        char sz[32];
        int ok = r->r_ratio <= lat_target(r->size);
        fmt_size(sz, sizeof sz, r->size);
        fprintf(f, "%8s %6s %10.2f %10.2f %6.2fx %6.1fx %s\n", sz, r->size <= eager ? "eager" : "rndv", r->r_lat,
                r->r_raw, r->r_ratio, lat_target(r->size), ok ? "ok" : "MISS");
        miss += !ok;
        if (worst < 0 || r->r_ratio / lat_target(r->size) > res[worst].r_ratio / lat_target(res[worst].size))
            worst = i;
    }
    if (n == 0)
        return;
    if (rounds < 5) {
        fprintf(f, "targets: NOT JUDGED: %d round%s, at least 5 needed\n", rounds, rounds > 1 ? "s" : "");
        return;
    }
    if (!miss) {
        char sz[32];
        fmt_size(sz, sizeof sz, res[worst].size);
        fprintf(f, "targets: PASS: every size at most 1.5x raw, 8 B and 1 MiB at most 1.2x (closest: %s at "
                   "%.2fx of %.1fx)\n", sz, res[worst].r_ratio, lat_target(res[worst].size));
        return;
    }
    fprintf(f, "targets: FAIL: %d size%s over (every size at most 1.5x raw, 8 B and 1 MiB at most 1.2x):", miss,
            miss > 1 ? "s" : "");
    for (int i = 0; i < n; i++)
        if (res[i].r_ratio > lat_target(res[i].size)) {
            char sz[32];
            fmt_size(sz, sizeof sz, res[i].size);
            fprintf(f, " %s %.2fx", sz, res[i].r_ratio);
        }
    fprintf(f, "\n");
}

static void write_latency_csv(FILE *f, const result *res, int n, size_t eager)
{
    fprintf(f, "size,protocol,lat_us,raw_lat_us,lat_ratio,target,ok,lat_min_us,raw_lat_min_us\n");
    for (int i = 0; i < n; i++) {
        const result *r = &res[i];
        fprintf(f, "%zu,%s,%.3f,%.3f,%.4f,%.1f,%d,%.3f,%.3f\n", r->size, r->size <= eager ? "eager" : "rndv", r->r_lat,
                r->r_raw, r->r_ratio, lat_target(r->size), r->r_ratio <= lat_target(r->size), r->lat_min,
                r->raw_lat_min);
    }
}

static int have_gnuplot(void)
{
    return system("gnuplot --version >/dev/null 2>&1") == 0;
}

static void gp_quote(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++)
        if (*s == '\'')
            fputs("''", f);
        else
            fputc(*s, f);
    fputc('\'', f);
}

/* Plots latency and bandwidth of each CSV (label, file), plus the raw
 * columns of raw_from (index into files, or -1). */
static int plot(const char *png, const char **labels, const char **files, int n, int raw_from)
{
    char script[] = "/tmp/bfo-bench-plot.XXXXXX";
    int fd, rc;
    FILE *f;
    if (!have_gnuplot()) {
        fprintf(stderr, "bfo bench: --plot needs gnuplot (Debian package gnuplot-nox), not found\n");
        return 1;
    }
    fd = mkstemp(script);
    if (fd < 0 || !(f = fdopen(fd, "w"))) {
        perror("bfo bench: plot script");
        return 1;
    }
    fprintf(f, "set terminal pngcairo size 1200,500 noenhanced\nset output ");
    gp_quote(f, png);
    fprintf(f, "\nset datafile separator ','\nset key top left\nset logscale x 2\nset grid\n"
               "set xtics ('1 B' 1, '16 B' 16, '256 B' 256, '4 KiB' 4096, '64 KiB' 65536, "
               "'1 MiB' 1048576, '16 MiB' 16777216)\n"
               "set xlabel 'message size'\nset multiplot layout 1,2\n"
               "set logscale y\nset ylabel 'one-way latency (us, median)'\nset title 'latency'\nplot ");
    for (int pass = 0; pass < 2; pass++) {
        int col = pass ? 3 : 2, rawcol = pass ? 5 : 4;
        if (pass)
            fprintf(f, "set logscale y\nset ylabel 'bandwidth (MB/s)'\nset title 'bandwidth'\n"
                       "set key top left\nplot ");
        for (int i = 0; i < n; i++) {
            fprintf(f, "%s", i ? ", " : "");
            gp_quote(f, files[i]);
            fprintf(f, " skip 1 using 1:%d with linespoints title ", col);
            gp_quote(f, labels[i]);
        }
        if (raw_from >= 0) {
            fprintf(f, ", ");
            gp_quote(f, files[raw_from]);
            fprintf(f, " skip 1 using 1:%d with linespoints dashtype 2 lc rgb 'black' title 'raw TCP'", rawcol);
        }
        fprintf(f, "\n");
    }
    fprintf(f, "unset multiplot\n");
    fclose(f);
    {
        char cmd[sizeof script + 32];
        snprintf(cmd, sizeof cmd, "gnuplot %s", script);
        rc = system(cmd);
    }
    unlink(script);
    if (rc != 0) {
        fprintf(stderr, "bfo bench: gnuplot failed\n");
        return 1;
    }
    fprintf(stderr, "bfo bench: plot written to %s\n", png);
    return 0;
}

static int csv_has_raw(const char *file)
{
    char line[512];
    int has = 0;
    FILE *f = fopen(file, "r");
    if (!f)
        return -1;
    if (fgets(line, sizeof line, f) && fgets(line, sizeof line, f)) {
        char *p = strchr(line, ',');
        p = p ? strchr(p + 1, ',') : NULL;
        p = p ? strchr(p + 1, ',') : NULL;
        has = p && p[1] && p[1] != ',';
    }
    fclose(f);
    return has;
}

/* ----------------------------------------------------------- main */

static int self_launch(int argc, char **argv, const char *rails, double timeout)
{
    char exe[4096], tbuf[32];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    char **av = calloc((size_t)argc + 16, sizeof *av);
    int n = 0, rc;
    if (k <= 0 || !av) {
        fprintf(stderr, "bfo bench: cannot find my own executable to launch two ranks\n");
        free(av);
        return 1;
    }
    exe[k] = 0;
    snprintf(tbuf, sizeof tbuf, "%g", timeout + 30);
    av[n++] = "run";
    av[n++] = "-n";
    av[n++] = "2";
    av[n++] = "--timeout";
    av[n++] = tbuf;
    if (rails) {
        av[n++] = "--rails";
        av[n++] = (char *)rails;
    }
    av[n++] = "--";
    av[n++] = exe;
    av[n++] = "bench";
    for (int i = 1; i < argc; i++)
        av[n++] = argv[i];
    av[n] = NULL;
    rc = bfo_cmd_run(n, av);
    free(av);
    return rc;
}

int bfo_cmd_bench(int argc, char **argv)
{
    bench B, *b = &B;
    bfo_config cfg;
    bfo_net_options opt;
    const char *rails = NULL, *csv = NULL, *png = NULL, *compare = NULL;
    const char *in_label[BN_MAX_INPUTS], *in_file[BN_MAX_INPUTS];
    char in_lbuf[BN_MAX_INPUTS][128]; /* LABEL of LABEL=FILE.csv (no allocation to free) */
    int want_csv = 0, ninputs = 0, rc, nrails, sizes_given = 0;
    double timeout = 600, fail_above = 0;
    size_t eager = 0; /* the engine's eager limit, once it is set up */
    memset(b, 0, sizeof *b);
    memset(&cfg, 0, sizeof cfg);
    memset(&opt, 0, sizeof opt);
    b->fd = -1;
    b->rounds = 5;
    b->window = 16;
    for (size_t s = 1; s <= 16u * 1024 * 1024; s *= 2)
        b->sizes[b->nsizes++] = s;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--baseline"))
            b->baseline = 1;
        else if (!strcmp(a, "--latency"))
            b->latency_only = b->baseline = 1;
        else if (!strcmp(a, "--compare") && i + 1 < argc)
            compare = argv[++i];
        else if (!strcmp(a, "--verbose"))
            b->verbose = 1;
        else if (!strcmp(a, "--raw-blocking"))
            b->raw_blocking = 1;
        else if (!strcmp(a, "--csv")) {
            want_csv = 1;
            if (v && strncmp(v, "--", 2)) {
                csv = v;
                i++;
            }
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(bench_usage, stdout);
            return 0;
        } else if (!v) {
            fputs(bench_usage, stderr);
            return 2;
        } else if (!strcmp(a, "--sizes")) {
            b->nsizes = 0;
            for (const char *p = v; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
                size_t s = bn_parse_size(p);
                if (!s || b->nsizes == BN_MAX_SIZES) {
                    fprintf(stderr, "bfo bench: bad --sizes %s\n", v);
                    return 2;
                }
                b->sizes[b->nsizes++] = s;
            }
            sizes_given = 1;
            i++;
        } else if (!strcmp(a, "--rails"))
            rails = argv[++i];
        else if (!strcmp(a, "--plot"))
            png = argv[++i];
        else if (!strcmp(a, "--input") && ninputs < BN_MAX_INPUTS) {
            const char *eq = strchr(v, '=');
            if (eq)
                snprintf(in_lbuf[ninputs], sizeof in_lbuf[ninputs], "%.*s", (int)(eq - v), v);
            in_label[ninputs] = eq ? in_lbuf[ninputs] : v;
            in_file[ninputs++] = eq ? eq + 1 : v;
            i++;
        } else if (!strcmp(a, "--rounds"))
            b->rounds = atoi(argv[++i]);
        else if (!strcmp(a, "--iters"))
            b->iters = atoi(argv[++i]);
        else if (!strcmp(a, "--max-iters"))
            b->max_iters = atoi(argv[++i]);
        else if (!strcmp(a, "--msgs"))
            b->msgs = atoi(argv[++i]);
        else if (!strcmp(a, "--window"))
            b->window = atoi(argv[++i]);
        else if (!strcmp(a, "--timeout"))
            timeout = atof(argv[++i]);
        else if (!strcmp(a, "--fail-above"))
            fail_above = atof(argv[++i]);
        else if (!strcmp(a, "--eager-limit")) {
            cfg.eager_limit = bn_parse_size(v);
            if (!cfg.eager_limit) {
                fprintf(stderr, "bfo bench: bad --eager-limit %s\n", v);
                return 2;
            }
            i++;
        }
        else {
            fputs(bench_usage, stderr);
            return 2;
        }
    }
    if (b->rounds < 1 || b->window < 1 || b->window > 256 || b->iters < 0 || b->max_iters < 0 || b->msgs < 0 || timeout <= 0 ||
        fail_above < 0 || (fail_above && !b->latency_only) || (b->latency_only && (png || compare || ninputs))) {
        fputs(bench_usage, stderr);
        return 2;
    }
    if (ninputs) { /* plot only */
        int raw_from = -1;
        if (!png) {
            fprintf(stderr, "bfo bench: --input goes with --plot\n");
            return 2;
        }
        for (int i = 0; i < ninputs; i++) {
            int h = csv_has_raw(in_file[i]);
            if (h < 0) {
                fprintf(stderr, "bfo bench: %s: %s\n", in_file[i], strerror(errno));
                return 1;
            }
            if (h && raw_from < 0)
                raw_from = i;
        }
        return plot(png, in_label, in_file, ninputs, raw_from);
    }
    if (png && !have_gnuplot()) { /* say so before running anything */
        fprintf(stderr, "bfo bench: --plot needs gnuplot (Debian package gnuplot-nox), not found\n");
        return 1;
    }
    if (!getenv("BFO_RANK"))
        return self_launch(argc, argv, rails, timeout);

    if (rails) { /* TCP addresses and verbs:DEVICE rails (bfo_net) */
        if (bfo_net_check_rails(rails) < 1) {
            fprintf(stderr, "bfo bench: bad --rails %s\n", rails);
            return 2;
        }
        setenv("BFO_RAILS", rails, 1);
    }
    if (compare && bfo_net_check_rails(compare) < 1) {
        fprintf(stderr, "bfo bench: bad --compare %s\n", compare);
        return 2;
    }
    cfg.heartbeat_ns = 1000000000ull;
    cfg.silence_ns = 30000000000ull;
    cfg.probe_timeout_ns = 5000000000ull;
    cfg.unreachable_grace_ns = 60000000000ull;
    /* a bench measures every rail it is given: each connects at init (a
     * peer's first small message would connect one rail only, the others
     * when striping pays: docs/engine-design.md, "One rail first") */
    cfg.connect_at_init = 1;
    signal(SIGUSR2, on_usr2);
    rc = bfo_net_init(&b->t, &cfg, &opt);
    if (rc != BFO_OK) {
        fprintf(stderr, "bfo bench: init: %s\n", bfo_net_errname(rc));
        return 1;
    }
    b->e = bfo_net_engine(b->t);
    b->net[0].t = b->t;
    b->net[0].e = b->e;
    b->cur = &b->net[0];
    b->rank = bfo_net_rank(b->t);
    nrails = bfo_net_nrails(b->t);
    if (compare) { /* the second net: the same wire-up, other rails */
        bfo_net_options o2 = opt;
        o2.rails = compare;
        rc = bfo_net_init(&b->net[1].t, &cfg, &o2);
        if (rc != BFO_OK) {
            fprintf(stderr, "bfo bench: init of the --compare rails: %s\n", bfo_net_errname(rc));
            bfo_net_fini(b->t);
            return 1;
        }
        b->net[1].e = bfo_net_engine(b->net[1].t);
        b->compare = 1;
    }
    if (bfo_net_size(b->t) != 2) {
        fprintf(stderr, "bfo bench: needs exactly 2 ranks (bfo run -n 2)\n");
        bfo_net_fini(b->t);
        return 2;
    }
    b->peer = 1 - b->rank;
    b->deadline = bfo_net_now() + (uint64_t)(timeout * 1e9);
    eager = b->e->cfg.eager_limit;
    if (b->latency_only && !sizes_given) { /* 8 B to 4 MiB, and just above the eager limit */
        size_t above = eager + 1024;
        b->nsizes = 0;
        for (size_t s = 8; s <= 4u * 1024 * 1024; s *= 2) {
            if (above && above < s) {
                b->sizes[b->nsizes++] = above;
                above = 0;
            }
            if (s != above)
                b->sizes[b->nsizes++] = s;
        }
        if (above && above <= 4u * 1024 * 1024)
            b->sizes[b->nsizes++] = above;
    }
    for (int i = 0; i < b->nsizes; i++)
        if (b->sizes[i] > b->maxsize)
            b->maxsize = b->sizes[i];
    b->sbuf = malloc(b->maxsize);
    b->rbuf = malloc(b->maxsize);
    b->sreq = calloc((size_t)b->window + 2, sizeof *b->sreq);
    b->rreq = calloc((size_t)b->window + 2, sizeof *b->rreq);
    result *res = calloc((size_t)b->nsizes, sizeof *res);
    if (!b->sbuf || !b->rbuf || !b->sreq || !b->rreq || !res)
        return 1;
    memset(b->sbuf, 0x5a, b->maxsize);
    memset(b->rbuf, 0, b->maxsize);

    /* every rail UP before measuring (eager messages go round-robin):
     * asked at init (connect_at_init above), then wait */
    for (int alt = 0; alt <= b->compare; alt++) {
        use_net(b, alt);
        if (bn_sync(b))
            goto out;
        for (;;) {
            int up = 0, nr = bfo_net_nrails(b->t);
            for (int k = 0; k < nr; k++)
                up += bfo_rail_state(b->e, b->peer, k) == BFO_RAIL_ST_UP;
            if (up == nr)
                break;
            if (overdue(b))
                goto out;
            bfo_net_progress(b->t, 1);
        }
        if (bn_sync(b))
            goto out;
    }
    use_net(b, 0);
    if (b->baseline && raw_setup(b))
        goto out;

    for (int si = 0; si < b->nsizes && !b->failed; si++) {
        size_t size = b->sizes[si];
        int iters = b->iters ? b->iters : (int)(8388608 / size), msgs = b->msgs ? b->msgs : (int)(67108864 / size);
        if (!b->iters) {
            int cap = b->max_iters ? b->max_iters : 1000;
            iters = iters > cap ? cap : iters;
            iters = iters < 10 ? 10 : iters;
        }
        if (!b->msgs)
            msgs = msgs < 32 ? 32 : msgs > 4000 ? 4000 : msgs;
        /* three kinds, each measured every round in a rotating order: bfo
         * (K_BFO), raw TCP (--baseline), bfo over the --compare rails */
        enum { K_BFO, K_RAW, K_CMP, NK };
        static const char *const kname[NK] = { "bfo", "raw", "compare" };
        int on[NK] = { 1, b->baseline, b->compare };
        double *lats[NK], *bws[NK], *rmed[NK], *tmp = malloc(sizeof(double) * (size_t)(iters > b->rounds ? iters : b->rounds));
        int oom = !tmp;
        for (int k = 0; k < NK; k++) {
            lats[k] = malloc(sizeof(double) * (size_t)iters * (size_t)b->rounds);
            bws[k] = calloc((size_t)b->rounds, sizeof *bws[k]);
            rmed[k] = calloc((size_t)b->rounds, sizeof *rmed[k]); /* each round's median */
            oom |= !lats[k] || !bws[k] || !rmed[k];
        }
        if (oom)
            return 1;
        for (int round = 0; round <= b->rounds && !b->failed; round++) { /* round 0: warm-up */
            int m = round - 1;
            for (int pass = 0; pass < NK && !b->failed; pass++) {
                int k = (pass + round) % NK; /* rotate the order */
                double *dst = m >= 0 ? lats[k] + (size_t)m * (size_t)iters : tmp;
                if (!on[k])
                    continue;
                use_net(b, k == K_CMP);
                bn_phase(b, "the barrier before a latency phase", size, round);
                if (bn_sync(b))
                    break;
                bn_phase(b, k == K_RAW ? "raw latency" : k == K_CMP ? "compare latency" : "bfo latency", size, round);
                if (k == K_RAW ? raw_lat(b, size, iters, dst) : bfo_lat(b, size, iters, dst))
                    break;
                if (b->rank == 0 && m >= 0) { /* this round alone */
                    memcpy(tmp, dst, sizeof(double) * (size_t)iters);
                    rmed[k][m] = median(tmp, iters);
                    if (b->verbose)
                        fprintf(stderr, "bfo bench: %zu B round %d: %s latency median %.3f us\n", size,
                                round, kname[k], rmed[k][m]);
                }
            }
            for (int pass = 0; pass < NK && !b->failed && !b->latency_only; pass++) {
                int k = (pass + round) % NK;
                double v;
                if (!on[k])
                    continue;
                use_net(b, k == K_CMP);
                bn_phase(b, "the barrier before a bandwidth phase", size, round);
                if (bn_sync(b))
                    break;
                bn_phase(b, k == K_RAW ? "raw bandwidth" : k == K_CMP ? "compare bandwidth" : "bfo bandwidth",
                         size, round);
                v = k == K_RAW ? raw_bw(b, size, msgs) : bfo_bw(b, size, msgs);
                if (v < 0)
                    break;
                if (m < 0)
                    continue;
                bws[k][m] = v / 1e6;
                if (b->verbose && b->rank == 0)
                    fprintf(stderr, "bfo bench: %zu B round %d: %s bandwidth %.1f MB/s\n", size, round, kname[k],
                            bws[k][m]);
            }
        }
        use_net(b, 0);
        if (!b->failed && b->rank == 0) {
            int n = iters * b->rounds;
            result *r = &res[si];
            r->size = size;
            r->lat = median(lats[K_BFO], n);
            r->lat_min = lats[K_BFO][0];
            r->bw = median(bws[K_BFO], b->rounds);
            if (b->baseline) {
                for (int m = 0; m < b->rounds; m++)
                    tmp[m] = rmed[K_RAW][m] > 0 ? rmed[K_BFO][m] / rmed[K_RAW][m] : 0;
                r->r_ratio = median(tmp, b->rounds); /* before median() sorts the rounds */
                r->r_lat = median(rmed[K_BFO], b->rounds);
                r->r_raw = median(rmed[K_RAW], b->rounds);
                r->raw_lat = median(lats[K_RAW], n);
                r->raw_lat_min = lats[K_RAW][0];
                r->raw_bw = median(bws[K_RAW], b->rounds);
            }
            if (b->compare) {
                r->cmp_lat = median(lats[K_CMP], n);
                r->cmp_lat_min = lats[K_CMP][0];
                r->cmp_bw = median(bws[K_CMP], b->rounds);
            }
            if (want_csv && !csv) /* progress on stderr when stdout is the CSV */
                fprintf(stderr, "bfo bench: %zu B done\n", size);
        }
        for (int k = 0; k < NK; k++) {
            free(lats[k]);
            free(bws[k]);
            free(rmed[k]);
        }
        free(tmp);
    }
    for (int alt = b->compare; alt >= 0 && !b->failed; alt--) {
        use_net(b, alt);
        bn_sync_final(b, 1); /* the last acks before anyone closes */
    }

out:
    if (b->fd >= 0)
        close(b->fd);
    if (b->verbose || b->e->stats.mapouts)
        fprintf(stderr, "bfo bench[%d]: engine: map-outs %llu, re-admissions %llu\n", b->rank,
                (unsigned long long)b->e->stats.mapouts, (unsigned long long)b->e->stats.readmissions);
    if (b->verbose)
        bfo_net_dump(b->t, stderr); /* the transport's counters: progress and epoll calls, acks */
    use_net(b, 0);
    bfo_net_fini(b->net[0].t);
    bfo_net_fini(b->net[1].t);
    rc = b->failed ? 1 : 0;
    if (b->rank == 0 && !b->failed) {
        if ((!want_csv || csv) && b->latency_only)
            print_latency_table(stdout, res, b->nsizes, nrails, eager, b->rounds);
        else if (!want_csv || csv)
            print_table(stdout, res, b->nsizes, b->baseline, nrails, compare);
        fflush(stdout);
        if (want_csv) {
            FILE *f = csv && strcmp(csv, "-") ? fopen(csv, "w") : stdout;
            if (!f) {
                fprintf(stderr, "bfo bench: %s: %s\n", csv, strerror(errno));
                rc = 1;
            } else {
                if (b->latency_only)
                    write_latency_csv(f, res, b->nsizes, eager);
                else
                    write_csv(f, res, b->nsizes, b->baseline);
                if (f != stdout)
                    fclose(f);
                else
                    fflush(f);
            }
        }
        if (png && rc == 0) {
            char tmpcsv[] = "/tmp/bfo-bench-csv.XXXXXX";
            int fd = mkstemp(tmpcsv);
            FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
            char label[32];
            const char *lab[1], *fil[1];
            if (!f)
                rc = 1;
            else {
                write_csv(f, res, b->nsizes, b->baseline);
                fclose(f);
                snprintf(label, sizeof label, "bfo, %d rail%s", nrails, nrails > 1 ? "s" : "");
                lab[0] = label;
                fil[0] = tmpcsv;
                rc = plot(png, lab, fil, 1, b->baseline ? 0 : -1);
                unlink(tmpcsv);
            }
        }
    }
    for (int i = 0; b->rank == 0 && !b->failed && fail_above > 0 && i < b->nsizes; i++)
        if (res[i].r_ratio > fail_above) {
            char sz[32];
            fmt_size(sz, sizeof sz, res[i].size);
            fprintf(stderr, "bfo bench: %s at %.2fx raw, above --fail-above %g\n", sz, res[i].r_ratio, fail_above);
            rc = rc ? rc : 3;
        }
    free(b->sbuf);
    free(b->rbuf);
    free(b->sreq);
    free(b->rreq);
    free(res);
    return rc;
}
