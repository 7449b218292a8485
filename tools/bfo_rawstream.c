// SPDX-License-Identifier: BSD-3-Clause
/* bfo_rawstream.c - `bfo raw-stream`: the raw-socket baseline of a
 * multi-rail stream.  Two processes, one plain TCP connection per rail
 * address, data both ways on every connection for a fixed time, driven by
 * one thread with non-blocking sockets and poll(), every byte received
 * checked against the sender's pattern.  No framing, no protocol: what the
 * kernel's path (the shapers, the veth pairs, TCP) lets through, to judge
 * bfo stream's figures by in the same run (bench/netns.sh).
 *
 *   bfo raw-stream --listen A1[,A2...] --port P --duration SEC [--size S]
 *   bfo raw-stream --connect B1[,B2...] --port P --duration SEC [--size S]
 *
 * The listener accepts one connection per address given, the connecting
 * side makes them; both then send and receive until SEC seconds after the
 * last connection was made, writing at most S bytes per call (default
 * 1 MiB) and reading at most S.  Then each side shuts its writing down and
 * reads to the end.  Each prints one line of JSON on stdout: {"rx_bytes":
 * N (received in the SEC seconds), "tx_bytes": N, "elapsed_ms": SEC in
 * ms, "conns": K}.  Exit 0, or 1 with the reason on stderr (a connection
 * lost or closed more than a second before the end, a byte that is not the
 * pattern's).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define RAW_MAX_CONNS 8

static uint64_t raw_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The byte at offset k of every connection's stream, each way: a pattern
 * of period RAW_PERIOD, so that one buffer of size + RAW_PERIOD bytes holds
 * what any call sends, and what any call received is compared with it. */
#define RAW_PERIOD 65536u
static uint8_t raw_pattern(uint64_t k)
{
    k %= RAW_PERIOD;
    return (uint8_t)(k * 7 + (k >> 8) + 1);
}

static int raw_usage(void)
{
    fprintf(stderr, "usage: bfo raw-stream --listen A1[,A2...] | --connect B1[,B2...] --port P --duration SEC "
                    "[--size S]\n");
    return 2;
}

static int raw_addr(const char *s, int port, struct sockaddr_in *sa)
{
    memset(sa, 0, sizeof *sa);
    sa->sin_family = AF_INET;
    sa->sin_port = htons((uint16_t)port);
    return inet_pton(AF_INET, s, &sa->sin_addr) == 1 ? 0 : -1;
}

int bfo_cmd_raw_stream(int argc, char **argv);
int bfo_cmd_raw_stream(int argc, char **argv)
{
    const char *list = NULL;
    int listen_side = -1, port = 0, n = 0;
    double secs = 0;
    size_t size = 1 << 20;
    char addrs[RAW_MAX_CONNS][64];
    int fd[RAW_MAX_CONNS];
    uint64_t txoff[RAW_MAX_CONNS] = {0}, rxoff[RAW_MAX_CONNS] = {0};
    for (int i = 1; i < argc; i++) {
        if ((!strcmp(argv[i], "--listen") || !strcmp(argv[i], "--connect")) && i + 1 < argc) {
            listen_side = !strcmp(argv[i], "--listen");
            list = argv[++i];
        } else if (!strcmp(argv[i], "--port") && i + 1 < argc) {
            port = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--duration") && i + 1 < argc) {
            secs = atof(argv[++i]);
        } else if (!strcmp(argv[i], "--size") && i + 1 < argc) {
            char *end;
            size = strtoull(argv[++i], &end, 10);
            if (*end == 'K' || *end == 'k')
                size <<= 10;
            else if (*end == 'M' || *end == 'm')
                size <<= 20;
        } else {
            return raw_usage();
        }
    }
    if (!list || port <= 0 || port > 65535 || secs <= 0 || size == 0 || size > (64u << 20))
        return raw_usage();
    for (const char *p = list; *p && n < RAW_MAX_CONNS; n++) {
        size_t k = strcspn(p, ",");
        if (k == 0 || k >= sizeof addrs[0])
            return raw_usage();
        memcpy(addrs[n], p, k);
        addrs[n][k] = 0;
        p += k + (p[k] == ',');
    }
    uint8_t *out = malloc(size + RAW_PERIOD), *in = malloc(size);
    if (!out || !in)
        return 1;
    for (size_t k = 0; k < size + RAW_PERIOD; k++)
        out[k] = raw_pattern(k);
    /* the connections: one per address */
    for (int i = 0; i < n; i++) {
        struct sockaddr_in sa;
        if (raw_addr(addrs[i], port, &sa) != 0) {
            fprintf(stderr, "bfo raw-stream: %s: not an IPv4 address\n", addrs[i]);
            return 1;
        }
        int s = socket(AF_INET, SOCK_STREAM, 0), one = 1;
        if (s < 0) {
            perror("bfo raw-stream: socket");
            return 1;
        }
        if (listen_side) {
            setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
            if (bind(s, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(s, 1) != 0) {
                fprintf(stderr, "bfo raw-stream: listen on %s:%d: %s\n", addrs[i], port, strerror(errno));
                return 1;
            }
            fd[i] = accept(s, NULL, NULL);
            close(s);
            if (fd[i] < 0) {
                perror("bfo raw-stream: accept");
                return 1;
            }
        } else {
            uint64_t give_up = raw_now() + 10000000000ull; /* the listener may start later */
            while (connect(s, (struct sockaddr *)&sa, sizeof sa) != 0) {
                if (raw_now() > give_up) {
                    fprintf(stderr, "bfo raw-stream: connect to %s:%d: %s\n", addrs[i], port, strerror(errno));
                    return 1;
                }
                close(s);
                usleep(20000);
                s = socket(AF_INET, SOCK_STREAM, 0);
            }
            fd[i] = s;
        }
        setsockopt(fd[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        fcntl(fd[i], F_SETFL, fcntl(fd[i], F_GETFL) | O_NONBLOCK);
    }
    /* both ways on every connection until the time is up; then each side
     * shuts its writing down and reads to the end (the other side, which
     * started within a connect's time of this one, may still be sending),
     * counting nothing more */
    const uint64_t t0 = raw_now(), end = t0 + (uint64_t)(secs * 1e9), late = end + 5000000000ull;
    uint64_t rx = 0, tx = 0, now;
    int eof[RAW_MAX_CONNS] = {0}, open_n = n, shut = 0;
    struct pollfd pf[RAW_MAX_CONNS];
    while (open_n > 0 && (now = raw_now()) < late) {
        if (now >= end && !shut) {
            for (int i = 0; i < n; i++)
                shutdown(fd[i], SHUT_WR);
            shut = 1;
        }
        for (int i = 0; i < n; i++) {
            pf[i].fd = eof[i] ? -1 : fd[i];
            pf[i].events = POLLIN | (shut ? 0 : POLLOUT);
            pf[i].revents = 0;
        }
        if (poll(pf, (nfds_t)n, 10) < 0 && errno != EINTR) {
            perror("bfo raw-stream: poll");
            return 1;
        }
        for (int i = 0; i < n; i++) {
            if (eof[i])
                continue;
            if (!shut && (pf[i].revents & POLLOUT)) {
                ssize_t w = send(fd[i], out + txoff[i] % RAW_PERIOD, size, MSG_NOSIGNAL | MSG_DONTWAIT);
                if (w > 0) {
                    txoff[i] += (uint64_t)w;
                    tx += (uint64_t)w;
                } else if (w < 0 && errno != EAGAIN && errno != EINTR && raw_now() + 1000000000ull < end) {
                    fprintf(stderr, "bfo raw-stream: send on %s: %s\n", addrs[i], strerror(errno));
                    return 1;
                }
            }
            if (pf[i].revents & (POLLIN | POLLERR | POLLHUP)) {
                ssize_t r = recv(fd[i], in, size, MSG_DONTWAIT);
                if (r <= 0 && !(r < 0 && (errno == EAGAIN || errno == EINTR))) {
                    if (raw_now() + 1000000000ull < end) { /* the peer's end comes within a second of ours */
                        fprintf(stderr, "bfo raw-stream: connection %d (%s) %s before the end\n", i, addrs[i],
                                r == 0 ? "closed" : strerror(errno));
                        return 1;
                    }
                    eof[i] = 1;
                    open_n--;
                    continue;
                }
                if (r > 0 && memcmp(in, out + rxoff[i] % RAW_PERIOD, (size_t)r) != 0) {
                    fprintf(stderr, "bfo raw-stream: bytes %llu to %llu of connection %d are not the pattern's\n",
                            (unsigned long long)rxoff[i], (unsigned long long)(rxoff[i] + (uint64_t)r), i);
                    return 1;
                }
                if (r > 0) {
                    rxoff[i] += (uint64_t)r;
                    if (raw_now() < end)
                        rx += (uint64_t)r;
                }
            }
        }
    }
    printf("{\"rx_bytes\": %llu, \"tx_bytes\": %llu, \"elapsed_ms\": %.1f, \"conns\": %d}\n",
           (unsigned long long)rx, (unsigned long long)tx, (double)(end - t0) / 1e6, n);
    for (int i = 0; i < n; i++)
        close(fd[i]);
    free(out);
    free(in);
    return 0;
}
