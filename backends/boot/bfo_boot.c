// SPDX-License-Identifier: BSD-3-Clause
/* bfo_boot.c - the job's wire-up (see bfo_boot.h). */
#define _GNU_SOURCE
#include "bfo_boot.h"
#include "bfo_auth.h"
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
    /* BFO_BOOTSTRAP's authentication: the membership key's state (an
     * all-zero key when none was given: keyed 0, said by rank 0) */
    bfo_auth *auth;
    int keyed;
    /* rank 0: the listening socket inherited (BFO_BOOTSTRAP_FD), or -1 */
    int listen_fd;
    uint64_t conn_timeout_ns; /* rank 0: a connection's own, to register */
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
    b->listen_fd = -1;
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

/* BFO_BOOTSTRAP_FD (bfo run, rank 0): a listening socket bound for it.
 * -1 when unset, -2 when set but not one (said). */
static int inherited_listener(void)
{
    const char *s = bfo_boot_getenv("BFO_BOOTSTRAP_FD");
    char *end;
    long fd;
    int yes = 0;
    socklen_t sl = sizeof yes;
    if (!s)
        return -1;
    fd = strtol(s, &end, 10);
    if (*end || fd < 0 || fd > 1000000 || getsockopt((int)fd, SOL_SOCKET, SO_ACCEPTCONN, &yes, &sl) != 0 || !yes) {
        fprintf(stderr, "bfo: BFO_BOOTSTRAP_FD=%s: not a listening socket\n", s);
        return -2;
    }
    fcntl((int)fd, F_SETFD, FD_CLOEXEC); /* this rank's, not its children's */
    return (int)fd;
}

/* BFO_BOOTSTRAP_CONN_TIMEOUT_MS: how long rank 0 gives one connection to
 * register (default 5000). */
static uint64_t conn_timeout(void)
{
    const char *s = bfo_boot_getenv("BFO_BOOTSTRAP_CONN_TIMEOUT_MS");
    char *end;
    long ms = s ? strtol(s, &end, 10) : 0;
    if (!s || *end || ms < 1 || ms > 3600000) {
        if (s)
            fprintf(stderr, "bfo: BFO_BOOTSTRAP_CONN_TIMEOUT_MS=%s: not 1 to 3600000: 5000 taken\n", s);
        ms = 5000;
    }
    return (uint64_t)ms * 1000000ull;
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
        /* a membership key given (BFO_AUTH_FD, BFO_AUTH_KEYFILE) goes into
         * the pair keys; without one the public keys in the cards, which
         * PMIx carries, are what the connections' keys rest on (bfo_net) */
        uint8_t key[BFO_AUTH_KEY_LEN] = { 0 };
        int keyed = size > 1 ? bfo_auth_key_read(bfo_boot_getenv("BFO_AUTH_FD"), bfo_boot_getenv("BFO_AUTH_KEYFILE"), key) : 0;
        if (keyed < 0) {
            bfo_bootpmix_fini();
            return BFO_ERR_INVALID; /* said */
        }
        b = boot_new(rank, size, VIA_PMIX);
        if (!b || (keyed && bfo_auth_init(&b->auth, key, rank, size, 0) != BFO_OK)) {
            bfo_auth_wipe_key(key);
            free(b);
            bfo_bootpmix_fini();
            return BFO_ERR_NO_MEMORY;
        }
        bfo_auth_wipe_key(key);
        b->keyed = keyed;
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
    uint8_t key[BFO_AUTH_KEY_LEN] = { 0 };
    int keyed = size > 1 ? bfo_auth_key_read(bfo_boot_getenv("BFO_AUTH_FD"), bfo_boot_getenv("BFO_AUTH_KEYFILE"), key) : 0, lfd = -1, rc;
    if (keyed < 0)
        return BFO_ERR_INVALID; /* said */
    if (rank == 0 && size > 1 && (lfd = inherited_listener()) == -2)
        return BFO_ERR_INVALID; /* said */
    b = boot_new(rank, size, VIA_SERVER);
    if (!b) {
        bfo_auth_wipe_key(key);
        return BFO_ERR_NO_MEMORY;
    }
    rc = bfo_auth_init(&b->auth, key, rank, size, 0);
    bfo_auth_wipe_key(key);
    if (rc != BFO_OK) {
        free(b);
        return rc;
    }
    b->keyed = keyed;
    b->listen_fd = lfd;
    b->conn_timeout_ns = conn_timeout();
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
bfo_auth *bfo_boot_auth(const bfo_boot *b) { return b->keyed ? b->auth : NULL; }
int bfo_boot_unkeyed(const bfo_boot *b) { return b->via == VIA_SERVER && b->size > 1 && !b->keyed; }

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

/* The bootstrap's messages (bfo_boot.h, WIRE). */
enum { HELLO_LEN = 24, CHALLENGE_LEN = 56, REFUSE_LEN = 8, MACL = BFO_AUTH_MAC_LEN, NL = BFO_AUTH_NONCE_LEN };
static const char lab_server[] = "bfo boot server v1", lab_client[] = "bfo boot client v1",
                  lab_table[] = "bfo boot table v1";

/* What both MACs of one registration start with: nonce_c | nonce_s | u32
 * rank (then the size, the card or the table). */
static void reg_parts(bfo_auth_part *p, const uint8_t *nc, const uint8_t *ns, uint8_t *rk, uint32_t rank)
{
    bfo_put32(rk, rank);
    p[0] = (bfo_auth_part){ nc, NL };
    p[1] = (bfo_auth_part){ ns, NL };
    p[2] = (bfo_auth_part){ rk, 4 };
}

/* One connection to rank 0 that has not registered yet. */
typedef struct pending {
    int fd;
    uint64_t deadline; /* its own: a silent one is dropped then */
    uint32_t rank, need, have;
    int step;          /* 0 HELLO, 1 the card's length, 2 the card and its MAC */
    uint8_t nc[NL], ns[NL];
    uint8_t buf[4 + BFO_BOOT_CARD_MAX + MACL];
} pending;

#define PENDING_MAX 64 /* connections in the handshake at once; more wait in the backlog */

static void refuse(int fd, uint32_t why)
{
    uint8_t m[REFUSE_LEN];
    bfo_put32(m, BFO_BOOT_REFUSE);
    bfo_put32(m + 4, why);
    (void)!send(fd, m, sizeof m, MSG_NOSIGNAL | MSG_DONTWAIT);
}

static void drop(pending *c)
{
    close(c->fd);
    c->fd = -1;
}

/* Rank 0: a step of connection c, whose buffer holds what its step needs.
 * Registers the rank (its card, its nonces) when the card's MAC verifies;
 * a rank registered already is refused, never replaced. */
static void serve_step(bfo_boot *b, pending *c, int *fds, uint8_t (*nonces)[2 * NL], int *got)
{
    uint8_t rk[4], sz[4], m[CHALLENGE_LEN];
    bfo_auth_part parts[5];
    uint32_t len;
    switch (c->step) {
    case 0:
        c->rank = bfo_get32(c->buf + 4);
        if (bfo_get32(c->buf) != BFO_BOOT_HELLO || c->rank == 0 || c->rank >= (uint32_t)b->size) {
            fprintf(stderr, "bfo: rank 0: bootstrap: a connection that is not a rank of this job's (magic %#x, "
                            "rank %u of %d): closed\n", bfo_get32(c->buf), c->rank, b->size);
            refuse(c->fd, BFO_BOOT_REFUSE_MALFORMED);
            drop(c);
            return;
        }
        if (fds[c->rank] >= 0) {
            fprintf(stderr, "bfo: rank 0: bootstrap: a second process claims rank %u: refused (the first keeps "
                            "its registration)\n", c->rank);
            refuse(c->fd, BFO_BOOT_REFUSE_TAKEN);
            drop(c);
            return;
        }
        memcpy(c->nc, c->buf + 8, NL);
        bfo_auth_nonce(c->ns);
        bfo_put32(m, BFO_BOOT_CHALLENGE);
        bfo_put32(m + 4, (uint32_t)b->size);
        memcpy(m + 8, c->ns, NL);
        reg_parts(parts, c->nc, c->ns, rk, c->rank);
        bfo_put32(sz, (uint32_t)b->size);
        parts[3] = (bfo_auth_part){ sz, 4 };
        bfo_auth_macv(b->auth, BFO_AUTH_GROUP, lab_server, parts, 4, m + 24);
        if (send(c->fd, m, sizeof m, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)sizeof m) {
            drop(c); /* 56 bytes into an empty socket buffer: it is gone */
            return;
        }
        c->step = 1;
        c->have = 0;
        c->need = 4;
        return;
    case 1:
        len = bfo_get32(c->buf);
        if (len > BFO_BOOT_CARD_MAX) {
            refuse(c->fd, BFO_BOOT_REFUSE_MALFORMED);
            drop(c);
            return;
        }
        c->step = 2;
        c->need = 4 + len + MACL;
        return;
    default:
        len = bfo_get32(c->buf);
        reg_parts(parts, c->nc, c->ns, rk, c->rank);
        parts[3] = (bfo_auth_part){ c->buf, 4 + len };
        if (bfo_auth_verifyv(b->auth, BFO_AUTH_GROUP, lab_client, parts, 4, c->buf + 4 + len) != BFO_OK) {
            fprintf(stderr, "bfo: rank 0: bootstrap: a registration for rank %u without the job's key: refused%s\n",
                    c->rank, b->keyed ? "" : " (this rank 0 has no key: BFO_AUTH_KEYFILE)");
            refuse(c->fd, BFO_BOOT_REFUSE_KEY);
            drop(c);
            return;
        }
        if (fds[c->rank] >= 0) { /* registered while this one was in its handshake */
            fprintf(stderr, "bfo: rank 0: bootstrap: a second process claims rank %u: refused (the first keeps "
                            "its registration)\n", c->rank);
            refuse(c->fd, BFO_BOOT_REFUSE_TAKEN);
            drop(c);
            return;
        }
        memcpy(b->cards + (size_t)c->rank * BFO_BOOT_CARD_MAX, c->buf + 4, len);
        b->lens[c->rank] = len;
        memcpy(nonces[c->rank], c->nc, NL);
        memcpy(nonces[c->rank] + NL, c->ns, NL);
        fds[c->rank] = c->fd;
        c->fd = -1;
        (*got)++;
    }
}

/* Rank 0: the listening socket, inherited (BFO_BOOTSTRAP_FD: bound by
 * whoever started it, no port left unbound between choice and bind) or
 * bound here to BFO_BOOTSTRAP's address.  -1 said. */
static int listener(bfo_boot *b, const struct sockaddr_in *sa)
{
    int one = 1, s;
    if (b->listen_fd >= 0)
        return b->listen_fd;
    s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return -1;
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(s, (const struct sockaddr *)sa, sizeof *sa) != 0 || listen(s, b->size + PENDING_MAX) != 0) {
        fprintf(stderr, "bfo: BFO_BOOTSTRAP %s: cannot listen: %s\n", b->server, strerror(errno));
        close(s);
        return -1;
    }
    return s;
}

/* Rank 0: every other rank's card, each registration authenticated and
 * each connection on its own deadline, then the whole table to each,
 * MACed for it. */
static int serve(bfo_boot *b, const struct sockaddr_in *sa, uint64_t deadline)
{
    int got = 1, rc = BFO_BOOT_ERR_EXCHANGE, size = b->size, npend = 0;
    int *fds = (int *)malloc(sizeof(int) * (size_t)size);
    uint8_t(*nonces)[2 * NL] = (uint8_t(*)[2 * NL])calloc((size_t)size, 2 * NL);
    pending *pend = (pending *)calloc(PENDING_MAX, sizeof *pend);
    struct pollfd *pf = (struct pollfd *)calloc((size_t)size + PENDING_MAX + 1, sizeof *pf);
    int *who = (int *)calloc((size_t)size + PENDING_MAX + 1, sizeof *who); /* pf[i]: >= 0 pend, < 0 -rank-1 */
    size_t tab = 0;
    uint8_t *out = NULL;
    int s = -1;
    if (!fds || !nonces || !pend || !pf || !who)
        goto out;
    for (int i = 0; i < size; i++)
        fds[i] = -1;
    for (int i = 0; i < PENDING_MAX; i++)
        pend[i].fd = -1;
    if ((s = listener(b, sa)) < 0)
        goto out;
    while (got < size) {
        uint64_t now = bfo_boot_now(), wake = deadline;
        int n = 0;
        if (now >= deadline) {
            fprintf(stderr, "bfo: rank 0: bootstrap: %d of %d ranks registered when the time was up\n", got, size);
            goto out;
        }
        if (npend < PENDING_MAX) { /* the listener: no more while 64 are in their handshake */
            pf[n] = (struct pollfd){ s, POLLIN, 0 };
            who[n++] = PENDING_MAX;
        }
        for (int i = 0; i < PENDING_MAX; i++)
            if (pend[i].fd >= 0) {
                if (pend[i].deadline <= now) {
                    fprintf(stderr, "bfo: rank 0: bootstrap: a connection that did not register within %llu ms "
                                    "(%s): dropped\n", (unsigned long long)(b->conn_timeout_ns / 1000000),
                            pend[i].step ? "after its HELLO" : "silent");
                    drop(&pend[i]);
                    npend--;
                    continue;
                }
                if (pend[i].deadline < wake)
                    wake = pend[i].deadline;
                pf[n] = (struct pollfd){ pend[i].fd, POLLIN, 0 };
                who[n++] = i;
            }
        for (int r = 1; r < size; r++) /* a registered rank that goes away is unregistered */
            if (fds[r] >= 0) {
                pf[n] = (struct pollfd){ fds[r], POLLIN, 0 };
                who[n++] = -r - 1;
            }
        if (poll(pf, (nfds_t)n, (int)((wake - now) / 1000000 + 1)) <= 0)
            continue;
        for (int k = 0; k < n; k++) {
            if (!pf[k].revents)
                continue;
            if (who[k] == PENDING_MAX) {
                int c = accept4(s, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK), i;
                if (c < 0)
                    continue;
                for (i = 0; pend[i].fd >= 0; i++)
                    ;
                pend[i].fd = c;
                pend[i].deadline = bfo_boot_now() + b->conn_timeout_ns;
                pend[i].step = 0;
                pend[i].have = 0;
                pend[i].need = HELLO_LEN;
                npend++;
            } else if (who[k] < 0) {
                int r = -who[k] - 1;
                char x;
                if (recv(fds[r], &x, 1, MSG_DONTWAIT) > 0)
                    fprintf(stderr, "bfo: rank 0: bootstrap: rank %d sent more than its registration\n", r);
                fprintf(stderr, "bfo: rank 0: bootstrap: rank %d went away before the table: unregistered\n", r);
                close(fds[r]);
                fds[r] = -1;
                b->lens[r] = 0;
                got--;
            } else {
                pending *c = &pend[who[k]];
                ssize_t m = recv(c->fd, c->buf + c->have, c->need - c->have, MSG_DONTWAIT);
                if (m <= 0) {
                    if (m < 0 && (errno == EINTR || errno == EAGAIN))
                        continue;
                    drop(c);
                    npend--;
                    continue;
                }
                c->have += (uint32_t)m;
                if (c->have == c->need) {
                    serve_step(b, c, fds, nonces, &got);
                    if (c->fd < 0)
                        npend--;
                }
            }
        }
    }
    /* the table: u32 size, u64 job, per rank u32 length and card */
    {
        uint8_t rnd[NL];
        bfo_auth_nonce(rnd); /* a job id nobody guesses: 8 random bytes */
        b->job = bfo_get64(rnd);
        b->job |= (uint64_t)(b->job == 0);
    }
    tab = 8 + 12;
    for (int i = 0; i < size; i++)
        tab += 4 + b->lens[i];
    out = (uint8_t *)malloc(tab + MACL);
    if (!out)
        goto out;
    bfo_put32(out, BFO_BOOT_TABLE);
    bfo_put32(out + 4, (uint32_t)(tab - 8));
    bfo_put32(out + 8, (uint32_t)size);
    bfo_put64(out + 12, b->job);
    tab = 20;
    for (int i = 0; i < size; i++) {
        bfo_put32(out + tab, b->lens[i]);
        memcpy(out + tab + 4, b->cards + (size_t)i * BFO_BOOT_CARD_MAX, b->lens[i]);
        tab += 4 + b->lens[i];
    }
    rc = BFO_OK;
    for (int i = 1; i < size; i++) {
        uint8_t rk[4];
        bfo_auth_part parts[4];
        reg_parts(parts, nonces[i], nonces[i] + NL, rk, (uint32_t)i);
        parts[3] = (bfo_auth_part){ out + 8, tab - 8 };
        bfo_auth_macv(b->auth, BFO_AUTH_GROUP, lab_table, parts, 4, out + tab);
        fcntl(fds[i], F_SETFL, fcntl(fds[i], F_GETFL) & ~O_NONBLOCK);
        if (xfer(fds[i], out, tab + MACL, 1, deadline) != 0)
            rc = BFO_BOOT_ERR_EXCHANGE;
    }
out:
    if (fds)
        for (int i = 0; i < size; i++)
            if (fds[i] >= 0)
                close(fds[i]);
    if (pend)
        for (int i = 0; i < PENDING_MAX; i++)
            if (pend[i].fd >= 0)
                close(pend[i].fd);
    /* bound here: closed, so that no connection of a later exchange lands
     * in this backlog; inherited: kept for the next exchange (a later
     * connection waits in its backlog for it) */
    if (s >= 0 && s != b->listen_fd)
        close(s);
    free(fds);
    free(nonces);
    free(pend);
    free(pf);
    free(who);
    free(out);
    return rc;
}

/* Rank > 0, one try: HELLO, rank 0's proof, its card MACed, the table
 * MACed for it.  Returns 1 when the connection broke before the table
 * came whole (worth another try), 0 when done, -1 when rank 0 refused or
 * answered with something else (said). */
static int ask_once(bfo_boot *b, int s, const void *card, size_t len, uint64_t deadline)
{
    uint8_t m[CHALLENGE_LEN], nc[NL], rk[4], sz[4], l4[4], mac[MACL], *body = NULL;
    bfo_auth_part parts[4];
    uint32_t blen;
    int rc = -1;
    bfo_auth_nonce(nc);
    bfo_put32(m, BFO_BOOT_HELLO);
    bfo_put32(m + 4, (uint32_t)b->rank);
    memcpy(m + 8, nc, NL);
    if (xfer(s, m, HELLO_LEN, 1, deadline) != 0 || xfer(s, m, REFUSE_LEN, 0, deadline) != 0)
        return 1;
    if (bfo_get32(m) == BFO_BOOT_REFUSE)
        goto refused;
    if (bfo_get32(m) != BFO_BOOT_CHALLENGE || bfo_get32(m + 4) != (uint32_t)b->size) {
        fprintf(stderr, "bfo: rank %d: bootstrap %s answered with magic %#x, size %u: not this job's rank 0\n",
                b->rank, b->server, bfo_get32(m), bfo_get32(m + 4));
        return -1;
    }
    if (xfer(s, m + REFUSE_LEN, CHALLENGE_LEN - REFUSE_LEN, 0, deadline) != 0)
        return 1;
    reg_parts(parts, nc, m + 8, rk, (uint32_t)b->rank);
    bfo_put32(sz, (uint32_t)b->size);
    parts[3] = (bfo_auth_part){ sz, 4 };
    if (bfo_auth_verifyv(b->auth, BFO_AUTH_GROUP, lab_server, parts, 4, m + 24) != BFO_OK) {
        fprintf(stderr, "bfo: rank %d: bootstrap %s did not prove the job's key: not this job's rank 0 (or the "
                        "ranks were given different keys: BFO_AUTH_KEYFILE)\n", b->rank, b->server);
        return -1;
    }
    bfo_put32(l4, (uint32_t)len);
    parts[3] = (bfo_auth_part){ l4, 4 };
    {
        bfo_auth_part p5[5] = { parts[0], parts[1], parts[2], parts[3], { card, len } };
        bfo_auth_macv(b->auth, BFO_AUTH_GROUP, lab_client, p5, 5, mac);
    }
    if (xfer(s, l4, 4, 1, deadline) != 0 || xfer(s, (void *)(uintptr_t)card, len, 1, deadline) != 0 ||
        xfer(s, mac, MACL, 1, deadline) != 0 || xfer(s, m, 8, 0, deadline) != 0)
        return 1;
    if (bfo_get32(m) == BFO_BOOT_REFUSE)
        goto refused;
    blen = bfo_get32(m + 4);
    if (bfo_get32(m) != BFO_BOOT_TABLE || blen < 12 ||
        blen > 12 + (uint64_t)b->size * (4 + BFO_BOOT_CARD_MAX)) {
        fprintf(stderr, "bfo: rank %d: bootstrap %s: not a table (magic %#x, %u bytes)\n", b->rank, b->server,
                bfo_get32(m), blen);
        return -1;
    }
    body = (uint8_t *)malloc((size_t)blen + MACL);
    if (!body)
        return -1;
    if (xfer(s, body, (size_t)blen + MACL, 0, deadline) != 0) {
        free(body);
        return 1;
    }
    parts[3] = (bfo_auth_part){ body, blen };
    if (bfo_auth_verifyv(b->auth, BFO_AUTH_GROUP, lab_table, parts, 4, body + blen) != BFO_OK) {
        fprintf(stderr, "bfo: rank %d: bootstrap %s: the table's MAC is wrong: not taken\n", b->rank, b->server);
        goto out;
    }
    /* verified: now parsed */
    if (bfo_get32(body) != (uint32_t)b->size)
        goto out;
    b->job = bfo_get64(body + 4);
    {
        size_t at = 12;
        for (int i = 0; i < b->size; i++) {
            uint32_t l;
            if (at + 4 > blen || (l = bfo_get32(body + at)) > BFO_BOOT_CARD_MAX || at + 4 + l > blen)
                goto out;
            b->lens[i] = l;
            memcpy(b->cards + (size_t)i * BFO_BOOT_CARD_MAX, body + at + 4, l);
            at += 4 + l;
        }
    }
    rc = 0;
out:
    free(body);
    return rc;
refused: /* the 8 bytes of REFUSE are in m */
    fprintf(stderr, "bfo: rank %d: bootstrap %s refused this rank: %s\n", b->rank, b->server,
            bfo_get32(m + 4) == BFO_BOOT_REFUSE_TAKEN ? "another process registered this rank first"
            : bfo_get32(m + 4) == BFO_BOOT_REFUSE_KEY ? "not the job's key (BFO_AUTH_KEYFILE, or bfo run's)"
                                                      : "malformed");
    return -1;
}

/* Rank > 0: tries until the deadline. A connection can break before the
 * table comes: rank 0 may not listen yet, or (a second exchange on the
 * same address, as `bfo bench --compare` does) the connection landed in
 * the backlog of the listener of the round before, which rank 0 then
 * closes. Rank 0 unregisters a rank whose connection went away before
 * the table, so trying again is safe; a refusal is final. */
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
    static int warned;
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
    if (!b->keyed && b->rank == 0 && !warned++) /* once a process (bfo bench --compare wires up twice) */
        fprintf(stderr, "bfo: rank 0: no membership key: the bootstrap at %s, the connections and the beacons are "
                        "not authenticated (give one: BFO_AUTH_KEYFILE=FILE, 64 hex digits, chmod 600, the same on "
                        "every rank; bfo run gives one)\n", b->server);
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
    if (rc == BFO_OK) {
        b->published = 1;
        if (b->auth)
            bfo_auth_set_job(b->auth, b->job); /* the pair keys bind the job rank 0 made up */
    }
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
    bfo_auth_free(b->auth);
    free(b->cards);
    free(b->lens);
    free(b);
}
