// SPDX-License-Identifier: BSD-3-Clause
/* bfo_boot.c - the job's wire-up (see bfo_boot.h). */
#define _GNU_SOURCE
#include "bfo_boot.h"
#include "bfo_boot_pmix.h"
#include "bfo_core.h"
#include "bfo_le.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { VIA_SERVER = 1, VIA_PMIX, VIA_CUSTOM };

struct bfo_boot {
    int rank, size, via;
    uint64_t job, timeout_ns;
    char server[64];
    char via_name[96];
    bfo_boot_ops ops;
    /* BFO_BOOTSTRAP: every rank's card after publish */
    uint8_t *cards;  /* size * BFO_BOOT_CARD_MAX */
    uint32_t *lens;
    int published;
    /* the launcher's failure reports (BFO_LAUNCHER_FD): -1 when none */
    int fail_fd;
    char fail_line[64];
    size_t fail_have;
};

uint64_t bfo_boot_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

const char *bfo_boot_getenv(const char *name)
{
    const char *s = getenv(name);
    return s && *s ? s : NULL;
}

const char *bfo_boot_errname(int rc)
{
    return rc == BFO_BOOT_ERR_EXCHANGE ? "BFO_BOOT_ERR_EXCHANGE" : bfo_errname(rc);
}

/* ----------------------------------------------------------- environment */

static int env_int(const char *name, int *v)
{
    const char *s = getenv(name);
    char *end;
    long x;
    if (!s || !*s)
        return -1;
    x = strtol(s, &end, 10);
    if (*end || x < 0 || x > 1000000)
        return -1;
    *v = (int)x;
    return 0;
}

/* BFO_RANK and BFO_SIZE read once, for both functions below: "" and the
 * values, or why not. */
static const char *env_rank(int *r, int *n)
{
    const char *rs = getenv("BFO_RANK"), *ns = getenv("BFO_SIZE");
    if ((!rs || !*rs) && (!ns || !*ns))
        return "BFO_RANK and BFO_SIZE must be set";
    if (!rs || !*rs)
        return "BFO_RANK is not set";
    if (!ns || !*ns)
        return "BFO_SIZE is not set";
    if (env_int("BFO_RANK", r) != 0)
        return "BFO_RANK is not a number from 0 to 1000000";
    if (env_int("BFO_SIZE", n) != 0 || *n < 1)
        return "BFO_SIZE is not a number from 1 to 1000000";
    if (*r >= *n)
        return "BFO_RANK must be below BFO_SIZE";
    return "";
}

const char *bfo_boot_env_rank_error(void)
{
    int r, n;
    return env_rank(&r, &n);
}

int bfo_boot_env_rank(int *rank, int *size)
{
    int r, n;
    if (*env_rank(&r, &n))
        return -1;
    *rank = r;
    *size = n;
    return 0;
}

int bfo_boot_parse_hostport(const char *s, uint32_t *ip, uint16_t *port)
{
    char buf[64];
    const char *c = strrchr(s ? s : "", ':');
    struct in_addr a;
    long p;
    char *end;
    if (!c || (size_t)(c - s) >= sizeof buf)
        return -1;
    memcpy(buf, s, (size_t)(c - s));
    buf[c - s] = 0;
    if (inet_pton(AF_INET, buf, &a) != 1)
        return -1;
    p = strtol(c + 1, &end, 10);
    if (*end || p <= 0 || p > 65535)
        return -1;
    *ip = ntohl(a.s_addr);
    *port = (uint16_t)p;
    return 0;
}

static bfo_boot *boot_new(int rank, int size, int via)
{
    bfo_boot *b = (bfo_boot *)calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->rank = rank;
    b->size = size;
    b->via = via;
    b->fail_fd = -1;
    return b;
}

/* BFO_LAUNCHER_FD (bfo run): the read end of its pipe, made non-blocking;
 * -1 when unset.  Malformed, or not an open descriptor: said, and none. */
static int launcher_fd(void)
{
    const char *s = bfo_boot_getenv("BFO_LAUNCHER_FD");
    char *end;
    long fd;
    if (!s)
        return -1;
    fd = strtol(s, &end, 10);
    if (*end || fd < 0 || fd > 1000000 || fcntl((int)fd, F_GETFD) < 0) {
        fprintf(stderr, "bfo: BFO_LAUNCHER_FD=%s: not an open file descriptor: failures the launcher sees "
                        "will not be reported to this rank\n", s);
        return -1;
    }
    if (fcntl((int)fd, F_SETFL, fcntl((int)fd, F_GETFL) | O_NONBLOCK) < 0 ||
        fcntl((int)fd, F_SETFD, FD_CLOEXEC) < 0)
        return -1;
    return (int)fd;
}

int bfo_boot_failures_fd(const bfo_boot *b) { return b ? b->fail_fd : -1; }

/* One line of the launcher's: the rank it names, or -1 (said). */
static int failure_line(const bfo_boot *b, const char *line)
{
    char *end;
    long r;
    if (strncmp(line, "failed ", 7) == 0) {
        r = strtol(line + 7, &end, 10);
        if (!*end && end != line + 7 && r >= 0 && r < b->size)
            return (int)r;
    }
    fprintf(stderr, "bfo[%d]: the launcher said \"%s\": not \"failed RANK\" with a rank below %d: ignored\n",
            b->rank, line, b->size);
    return -1;
}

int bfo_boot_failures(bfo_boot *b, int *ranks, int max)
{
    int n = 0;
    if (!b || b->fail_fd < 0)
        return b && b->fail_have == (size_t)-1 ? -1 : 0;
    while (n < max) {
        char c;
        ssize_t got = read(b->fail_fd, &c, 1);
        if (got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
            close(b->fail_fd); /* the launcher is gone */
            b->fail_fd = -1;
            b->fail_have = (size_t)-1;
            return n ? n : -1;
        }
        if (got < 0) {
            if (errno == EINTR)
                continue;
            break; /* nothing more now */
        }
        if (c != '\n') {
            if (b->fail_have < sizeof b->fail_line - 1)
                b->fail_line[b->fail_have++] = c;
            continue;
        }
        b->fail_line[b->fail_have] = 0;
        b->fail_have = 0;
        int r = failure_line(b, b->fail_line);
        if (r >= 0)
            ranks[n++] = r;
    }
    return n;
}

int bfo_boot_env(bfo_boot **out, uint64_t timeout_ns)
{
    int rank, size;
    bfo_boot *b;
    *out = NULL;
    /* neither BFO_RANK nor BFO_SIZE, but a PMIx launch (mpirun) */
    if (!getenv("BFO_RANK") && !getenv("BFO_SIZE") && bfo_bootpmix_env()) {
        int rc = bfo_bootpmix_init(&rank, &size);
        if (rc != BFO_OK)
            return rc;
        b = boot_new(rank, size, VIA_PMIX);
        if (!b) {
            bfo_bootpmix_fini();
            return BFO_ERR_NO_MEMORY;
        }
        b->timeout_ns = timeout_ns;
        snprintf(b->via_name, sizeof b->via_name, "PMIx");
        *out = b;
        return BFO_OK;
    }
    if (bfo_boot_env_rank(&rank, &size) != 0) {
        fprintf(stderr, "bfo: %s (BFO_RANK=%s BFO_SIZE=%s; bfo run sets them)\n", bfo_boot_env_rank_error(),
                getenv("BFO_RANK") ? getenv("BFO_RANK") : "", getenv("BFO_SIZE") ? getenv("BFO_SIZE") : "");
        return BFO_ERR_INVALID;
    }
    const char *srv = getenv("BFO_BOOTSTRAP");
    if (size > 1) {
        uint32_t ip;
        uint16_t port;
        if (!srv || strlen(srv) >= 64 || bfo_boot_parse_hostport(srv, &ip, &port) != 0) {
            fprintf(stderr, "bfo: BFO_BOOTSTRAP must be IPV4ADDR:PORT, rank 0's address (it is \"%s\")\n",
                    srv ? srv : "");
            return BFO_ERR_INVALID;
        }
    }
    b = boot_new(rank, size, VIA_SERVER);
    if (!b)
        return BFO_ERR_NO_MEMORY;
    b->timeout_ns = timeout_ns;
    b->fail_fd = launcher_fd();
    snprintf(b->server, sizeof b->server, "%s", srv ? srv : "");
    snprintf(b->via_name, sizeof b->via_name, "BFO_BOOTSTRAP %s", size > 1 ? b->server : "(one rank)");
    *out = b;
    return BFO_OK;
}

int bfo_boot_lookup_later(const bfo_boot *b) { return b->via == VIA_CUSTOM && b->ops.lookup_later; }

int bfo_boot_custom(bfo_boot **out, int rank, int size, uint64_t job, const bfo_boot_ops *ops)
{
    bfo_boot *b;
    *out = NULL;
    if (size < 1 || rank < 0 || rank >= size || !ops || !ops->publish || !ops->lookup)
        return BFO_ERR_INVALID;
    b = boot_new(rank, size, VIA_CUSTOM);
    if (!b)
        return BFO_ERR_NO_MEMORY;
    b->ops = *ops;
    b->job = job;
    snprintf(b->via_name, sizeof b->via_name, "the caller's publish and lookup");
    *out = b;
    return BFO_OK;
}

int bfo_boot_rank(const bfo_boot *b) { return b->rank; }
int bfo_boot_size(const bfo_boot *b) { return b->size; }
uint64_t bfo_boot_job(const bfo_boot *b) { return b->job; }
const char *bfo_boot_via(const bfo_boot *b) { return b->via_name; }

/* ------------------------------------------------------- BFO_BOOTSTRAP */

/* Blocking transfer of exactly len bytes before the deadline. */
static int xfer(int fd, void *buf, size_t len, int out, uint64_t deadline)
{
    size_t done = 0;
    while (done < len) {
        struct pollfd pf = { fd, (short)(out ? POLLOUT : POLLIN), 0 };
        uint64_t now = bfo_boot_now();
        ssize_t n;
        if (now >= deadline)
            return -1;
        if (poll(&pf, 1, (int)((deadline - now) / 1000000 + 1)) <= 0)
            continue;
        n = out ? send(fd, (char *)buf + done, len - done, MSG_NOSIGNAL)
                : recv(fd, (char *)buf + done, len - done, 0);
        if (n == 0)
            return -1;
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            return -1;
        }
        done += (size_t)n;
    }
    return 0;
}

static struct sockaddr_in sin_of(uint32_t ip, uint16_t port)
{
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(ip);
    sa.sin_port = htons(port);
    return sa;
}

/* Rank 0: every other rank's card, then the whole table to each. */
static int serve(bfo_boot *b, const struct sockaddr_in *sa, uint64_t deadline)
{
    int one = 1, got = 1, rc = BFO_BOOT_ERR_EXCHANGE, size = b->size;
    int *fds = (int *)malloc(sizeof(int) * (size_t)size);
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    size_t tab = 16;
    uint8_t *out = NULL, hdr[12];
    if (!fds || s < 0)
        goto out;
    for (int i = 0; i < size; i++)
        fds[i] = -1;
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(s, (const struct sockaddr *)sa, sizeof *sa) != 0 || listen(s, size) != 0) {
        fprintf(stderr, "bfo: BFO_BOOTSTRAP %s: cannot listen: %s\n", b->server, strerror(errno));
        goto out;
    }
    while (got < size) {
        struct pollfd pf = { s, POLLIN, 0 };
        uint64_t now = bfo_boot_now();
        uint32_t k, len;
        if (now >= deadline)
            goto out;
        if (poll(&pf, 1, (int)((deadline - now) / 1000000 + 1)) <= 0)
            continue;
        int c = accept4(s, NULL, NULL, SOCK_CLOEXEC);
        if (c < 0)
            continue;
        if (xfer(c, hdr, 12, 0, deadline) != 0 || bfo_get32(hdr) != BFO_BOOT_MAGIC ||
            (k = bfo_get32(hdr + 4)) == 0 || k >= (uint32_t)size ||
            (len = bfo_get32(hdr + 8)) > BFO_BOOT_CARD_MAX ||
            xfer(c, b->cards + (size_t)k * BFO_BOOT_CARD_MAX, len, 0, deadline) != 0) {
            close(c);
            continue;
        }
        if (fds[k] >= 0)
            close(fds[k]); /* the same rank again (it restarted): the newer one */
        else
            got++;
        fds[k] = c;
        b->lens[k] = len;
    }
    close(s); /* no connection of a later exchange may land in this backlog */
    s = -1;
    b->job = (bfo_boot_now() * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)getpid() << 32) ^ ntohs(sa->sin_port);
    for (int i = 0; i < size; i++)
        tab += 4 + b->lens[i];
    out = (uint8_t *)malloc(tab);
    if (!out)
        goto out;
    bfo_put32(out, BFO_BOOT_MAGIC);
    bfo_put32(out + 4, (uint32_t)size);
    bfo_put64(out + 8, b->job);
    tab = 16;
    for (int i = 0; i < size; i++) {
        bfo_put32(out + tab, b->lens[i]);
        memcpy(out + tab + 4, b->cards + (size_t)i * BFO_BOOT_CARD_MAX, b->lens[i]);
        tab += 4 + b->lens[i];
    }
    rc = BFO_OK;
    for (int i = 1; i < size; i++)
        if (xfer(fds[i], out, tab, 1, deadline) != 0)
            rc = BFO_BOOT_ERR_EXCHANGE;
out:
    if (fds)
        for (int i = 0; i < size; i++)
            if (fds[i] >= 0)
                close(fds[i]);
    if (s >= 0)
        close(s);
    free(fds);
    free(out);
    return rc;
}

/* Rank > 0, one try: its card to rank 0, everyone's back. Returns 1 when
 * the connection broke before the table came whole (worth another try),
 * 0 when done, -1 when rank 0 answered with something else. */
static int ask_once(bfo_boot *b, int s, const void *card, size_t len, uint64_t deadline)
{
    uint8_t hdr[16];
    bfo_put32(hdr, BFO_BOOT_MAGIC);
    bfo_put32(hdr + 4, (uint32_t)b->rank);
    bfo_put32(hdr + 8, (uint32_t)len);
    if (xfer(s, hdr, 12, 1, deadline) != 0 || xfer(s, (void *)(uintptr_t)card, len, 1, deadline) != 0 ||
        xfer(s, hdr, 16, 0, deadline) != 0)
        return 1;
    if (bfo_get32(hdr) != BFO_BOOT_MAGIC || bfo_get32(hdr + 4) != (uint32_t)b->size)
        return -1;
    b->job = bfo_get64(hdr + 8);
    for (int i = 0; i < b->size; i++) {
        uint8_t l[4];
        if (xfer(s, l, 4, 0, deadline) != 0)
            return 1;
        if (bfo_get32(l) > BFO_BOOT_CARD_MAX)
            return -1;
        b->lens[i] = bfo_get32(l);
        if (xfer(s, b->cards + (size_t)i * BFO_BOOT_CARD_MAX, b->lens[i], 0, deadline) != 0)
            return 1;
    }
    return 0;
}

/* Rank > 0: tries until the deadline. A connection can break before the
 * table comes: rank 0 may not listen yet, or (a second exchange on the
 * same address, as `bfo bench --compare` does) the connection landed in
 * the backlog of the listener of the round before, which rank 0 then
 * closes. Rank 0 keeps the newest connection of a rank, so trying again
 * is safe. */
static int ask(bfo_boot *b, const struct sockaddr_in *sa, const void *card, size_t len, uint64_t deadline)
{
    while (bfo_boot_now() < deadline) {
        int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), r = 1;
        if (s < 0)
            return BFO_BOOT_ERR_EXCHANGE;
        if (connect(s, (const struct sockaddr *)sa, sizeof *sa) == 0)
            r = ask_once(b, s, card, len, deadline);
        close(s);
        if (r <= 0)
            return r == 0 ? BFO_OK : BFO_BOOT_ERR_EXCHANGE;
        usleep(20000);
    }
    return BFO_BOOT_ERR_EXCHANGE;
}

static int server_exchange(bfo_boot *b, const void *card, size_t len)
{
    uint64_t deadline = bfo_boot_now() + (b->timeout_ns ? b->timeout_ns : 30000000000ull);
    uint32_t ip = 0;
    uint16_t port = 0;
    b->cards = (uint8_t *)malloc((size_t)b->size * BFO_BOOT_CARD_MAX);
    b->lens = (uint32_t *)calloc((size_t)b->size, sizeof *b->lens);
    if (!b->cards || !b->lens)
        return BFO_ERR_NO_MEMORY;
    memcpy(b->cards + (size_t)b->rank * BFO_BOOT_CARD_MAX, card, len);
    b->lens[b->rank] = (uint32_t)len;
    if (b->size == 1) {
        b->job = bfo_boot_now() ^ ((uint64_t)getpid() << 32);
        return BFO_OK;
    }
    if (bfo_boot_parse_hostport(b->server, &ip, &port) != 0)
        return BFO_ERR_INVALID;
    struct sockaddr_in sa = sin_of(ip, port);
    return b->rank == 0 ? serve(b, &sa, deadline) : ask(b, &sa, card, len, deadline);
}

/* ----------------------------------------------------- publish, lookup */

int bfo_boot_publish(bfo_boot *b, const void *card, size_t len)
{
    int rc;
    if (len > BFO_BOOT_CARD_MAX || b->published)
        return BFO_ERR_INVALID;
    switch (b->via) {
    case VIA_SERVER: rc = server_exchange(b, card, len); break;
    case VIA_PMIX: rc = bfo_bootpmix_publish(card, len, b->timeout_ns, &b->job); break;
    default: rc = b->ops.publish(b->ops.ctx, card, len); break;
    }
    if (rc == BFO_OK)
        b->published = 1;
    else
        fprintf(stderr, "bfo: rank %d: the address exchange through %s failed: %s\n", b->rank, b->via_name,
                bfo_boot_errname(rc));
    return rc;
}

int bfo_boot_lookup(bfo_boot *b, int rank, void *buf, size_t cap, size_t *len)
{
    if (rank < 0 || rank >= b->size || !b->published)
        return BFO_ERR_INVALID;
    switch (b->via) {
    case VIA_SERVER:
        if (b->lens[rank] > cap)
            return BFO_ERR_INVALID;
        memcpy(buf, b->cards + (size_t)rank * BFO_BOOT_CARD_MAX, b->lens[rank]);
        *len = b->lens[rank];
        return b->lens[rank] ? BFO_OK : BFO_BOOT_ERR_EXCHANGE;
    case VIA_PMIX: return bfo_bootpmix_lookup(rank, buf, cap, len);
    default: return b->ops.lookup(b->ops.ctx, rank, buf, cap, len);
    }
}

void bfo_boot_fini(bfo_boot *b)
{
    if (!b)
        return;
    if (b->via == VIA_PMIX)
        bfo_bootpmix_fini();
    else if (b->via == VIA_CUSTOM && b->ops.fini)
        b->ops.fini(b->ops.ctx);
    if (b->fail_fd >= 0)
        close(b->fail_fd);
    free(b->cards);
    free(b->lens);
    free(b);
}
