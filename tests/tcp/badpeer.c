/* badpeer.c - a misbehaving rank for tests/tcp/t5_malformed.sh.
 *
 * Run under `bfo run` as one rank of the job (the others run `bfo stream
 * --skip-rank R`).  It takes part in the bootstrap like any rank, then
 * answers every connection the others dial to it with something wrong, one
 * scenario after another, and also dials rank 0 itself with a bad hello.
 * It runs for the given seconds (argv[1], default 3) and exits 0; it
 * prints the scenarios it played on stderr.  The test checks that the
 * well-behaved ranks logged a reason for every drop and stayed up.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bfo_tcp.h"

static const char *const scen_name[] = {
    "bad magic",        "frame too long", "engine garbage", "sequence gap",
    "truncated + close", "garbage hello",  "ack beyond sent",
};
#define NSCEN 7

#define hdr bfo_tcp_frame_header

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

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 3;
    const char *rs = getenv("BFO_RANK"), *ss = getenv("BFO_SIZE"), *rails = getenv("BFO_RAILS");
    uint32_t ip[BFO_MAX_RAILS];
    bfo_tcp_addr mine[BFO_MAX_RAILS], *table;
    int lfd[BFO_MAX_RAILS], rank, size, nrails, played[NSCEN] = { 0 }, next = 0;
    uint64_t job, end;
    if (!rs || !ss)
        return 2;
    rank = atoi(rs);
    size = atoi(ss);
    nrails = bfo_tcp_parse_rails(rails && *rails ? rails : "127.0.0.1", ip, BFO_MAX_RAILS);
    if (nrails < 1)
        return 2;
    for (int r = 0; r < nrails; r++) {
        struct sockaddr_in sa;
        socklen_t sl = sizeof sa;
        memset(&sa, 0, sizeof sa);
        sa.sin_family = AF_INET;
        sa.sin_addr.s_addr = htonl(ip[r]);
        lfd[r] = socket(AF_INET, SOCK_STREAM, 0);
        if (lfd[r] < 0 || bind(lfd[r], (struct sockaddr *)&sa, sizeof sa) || listen(lfd[r], 64) ||
            getsockname(lfd[r], (struct sockaddr *)&sa, &sl))
            return 3;
        mine[r].ip = ip[r];
        mine[r].port = ntohs(sa.sin_port);
    }
    table = calloc((size_t)size * (size_t)nrails, sizeof *table);
    if (!table || bfo_tcp_bootstrap(getenv("BFO_BOOTSTRAP"), rank, size, nrails, mine, table, &job,
                                     30000000000ull) != BFO_OK) {
        fprintf(stderr, "badpeer: bootstrap failed\n");
        return 4;
    }
    /* an impostor: dial rank 0 on rail 0, claiming our rank (a higher rank
     * may not dial), and once more with bytes that are not a hello */
    if (rank != 0) {
        for (int k = 0; k < 2; k++) {
            struct sockaddr_in sa;
            uint8_t b[BFO_TCP_HDR_SIZE + BFO_TCP_HELLO_SIZE];
            int fd = socket(AF_INET, SOCK_STREAM, 0);
            memset(&sa, 0, sizeof sa);
            sa.sin_family = AF_INET;
            sa.sin_addr.s_addr = htonl(table[0].ip);
            sa.sin_port = htons(table[0].port);
            if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0) {
                if (k == 0)
                    hello(b, rank, 0, size, job, 1);
                else
                    memset(b, 0x5a, sizeof b);
                put_all(fd, b, sizeof b);
                usleep(50000);
            }
            if (fd >= 0)
                close(fd);
        }
        fprintf(stderr, "badpeer: dialed rank 0 with a hello from a higher rank and with garbage\n");
    }
    end = bfo_tcp_now() + (uint64_t)(secs * 1e9);
    while (bfo_tcp_now() < end) {
        struct pollfd pf[BFO_MAX_RAILS];
        for (int r = 0; r < nrails; r++) {
            pf[r].fd = lfd[r];
            pf[r].events = POLLIN;
            pf[r].revents = 0;
        }
        if (poll(pf, (nfds_t)nrails, 50) <= 0)
            continue;
        for (int r = 0; r < nrails; r++) {
            uint8_t in[BFO_TCP_HDR_SIZE + BFO_TCP_HELLO_SIZE], out[256];
            int fd, sc, peer;
            if (!(pf[r].revents & POLLIN))
                continue;
            fd = accept(lfd[r], NULL, NULL);
            if (fd < 0)
                continue;
            if (read_n(fd, in, sizeof in, 1000) != 0) {
                close(fd);
                continue;
            }
            peer = (int)bfo_get32(in + BFO_TCP_HDR_SIZE + 4);
            sc = next++ % NSCEN;
            hello(out, rank, r, size, job, bfo_get64(in + BFO_TCP_HDR_SIZE + 24));
            switch (sc) {
            case 0: /* a frame whose magic is wrong */
                hdr(out + 56, 8, BFO_TCP_K_DATA, 1, 0);
                out[56 + 4] ^= 0xff;
                put_all(fd, out, 56 + 24 + 8);
                break;
            case 1: /* longer than any frame */
                hdr(out + 56, 0x10000000u, BFO_TCP_K_DATA, 1, 0);
                put_all(fd, out, 56 + 24);
                break;
            case 2: /* framing right, the engine frame garbage */
                hdr(out + 56, 40, BFO_TCP_K_DATA, 1, 0);
                memset(out + 80, 0xee, 40);
                put_all(fd, out, 56 + 24 + 40);
                break;
            case 3: /* a sequence number out of order */
                hdr(out + 56, 8, BFO_TCP_K_DATA, 5, 0);
                memset(out + 80, 0, 8);
                put_all(fd, out, 56 + 24 + 8);
                break;
            case 4: /* a frame cut short, then the connection closes */
                hdr(out + 56, 100, BFO_TCP_K_DATA, 1, 0);
                put_all(fd, out, 56 + 24 + 30);
                break;
            case 5: /* no hello at all */
                memset(out, 0xa5, 56);
                put_all(fd, out, 56);
                break;
            case 6: /* acknowledges frames never sent */
                hdr(out + 56, 0, BFO_TCP_K_ACK, 0, 99);
                put_all(fd, out, 56 + 24);
                break;
            }
            played[sc]++;
            fprintf(stderr, "badpeer: rank %d rail %d: %s\n", peer, r, scen_name[sc]);
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
    free(table);
    return 0;
}
