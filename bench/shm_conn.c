// SPDX-License-Identifier: BSD-3-Clause
/* shm_conn.c - what a shm connection costs (issue 37): N processes of this
 * host (fork), each with its own shm transport (bfo_shm_transport's row, no
 * engine) and its own bfo_auth (as bfo_net gives it: a peer's pair key made
 * at its first use, options.auth_peer), and then either
 *   pair: rank 0 connects to rank 1 (the others idle), or
 *   all:  every rank connects to every other at once (a first alltoall),
 * each rank sending one 8-byte frame to each peer as soon as its rail is up
 * and waiting for the frames of every peer.  A rank that finds nothing to
 * do sleeps as pml/bfo does when oversubscribed (wait_fds, then poll up to
 * 1 ms: bfo_net's nap).  Per rank: the time from its connect() calls to its
 * last rail up, to its last frame in, the pair keys' time, the messages of
 * the handshakes (the socket's, sent and read: counted by the transport's
 * hellos stats where it has them, else not), the sleeps and the wake-ups
 * (polls that returned an fd).  Rank 0 prints the median and the largest
 * over the ranks; with `strace -c -f` around it the system calls per
 * connection.
 *
 * Usage: shm_conn [-n ranks] [-m pair|all] [-A] [-r rounds]
 *   -A: no bfo_auth (the hellos of before), to see what authentication adds.
 * `make bench-shm-conn` builds it (build/<cc>/shm_conn). */
#define _GNU_SOURCE
#include "bfo_auth.h"
#include "bfo_shm.h"
#include "bfo_tp_os.h"
#include "bfo_transport.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAXN 256
#define JOB 0x5c0ccull

typedef struct result {
    double up_ms, rx_ms, key_ms;
    unsigned keys, sleeps, wakes, progress, ups, rx;
    uint64_t connects, failures, rejected, stale;
    int ok;
} result;

/* Shared by the ranks (MAP_SHARED before the fork). */
typedef struct shared {
    bfo_addr book[MAXN];
    uint8_t pk[MAXN][BFO_AUTH_PUB_LEN];
    int barrier[4];
    result res[MAXN];
} shared;

static shared *S;
static int N = 16, ALL = 1, NOAUTH;

typedef struct me {
    int rank;
    void *t;
    bfo_backend be;
    bfo_auth *auth;
    uint64_t t0;
    unsigned char up[MAXN], rx[MAXN];
    unsigned nup, nrx, done;
    uint64_t last_up, last_rx, key_ns;
    unsigned keys;
} me;

static me M;

static uint64_t now_ns(void) { return bfo_tp_now(); }

static void barrier(int k)
{
    __atomic_add_fetch(&S->barrier[k], 1, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&S->barrier[k], __ATOMIC_SEQ_CST) < N)
        usleep(200);
}

static int wants(int p) { return p != M.rank && (ALL || (M.rank == 0 && p == 1) || (M.rank == 1 && p == 0)); }
static int npeers(void)
{
    int n = 0;
    for (int p = 0; p < N; p++)
        n += wants(p);
    return n;
}

static void s_completion(void *ctx, uint64_t token, int ok) { (void)ctx, (void)token, M.done += ok != 0; }
static int s_frame(void *ctx, int peer, int rail, const uint8_t *buf, size_t len, uint64_t now)
{
    (void)ctx, (void)rail, (void)buf, (void)len, (void)now;
    if (!M.rx[peer]) {
        M.rx[peer] = 1;
        M.nrx++;
        M.last_rx = now_ns();
    }
    return BFO_OK;
}
static uint8_t payload[8] = { 'b', 'f', 'o', 's', 'h', 'm', 0, 1 };
static void s_event(void *ctx, int peer, int rail, int ev, uint64_t now)
{
    (void)ctx, (void)now;
    if ((ev == BFO_EV_CONNECTED || ev == BFO_EV_CONNECTED_PROVEN) && !M.up[peer]) {
        bfo_iov iov = { payload, sizeof payload };
        M.up[peer] = 1;
        M.nup++;
        M.last_up = now_ns();
        if (M.be.post_send(M.be.ctx, peer, rail, &iov, 1, (uint64_t)peer) != 0)
            fprintf(stderr, "shm_conn[%d]: post to %d refused\n", M.rank, peer);
    } else if (ev != BFO_EV_CONNECTED && ev != BFO_EV_CONNECTED_PROVEN) {
        fprintf(stderr, "shm_conn[%d]: peer %d event %d\n", M.rank, peer, ev);
    }
}
static void s_heard(void *ctx, int peer, int rail, uint64_t now) { (void)ctx, (void)peer, (void)rail, (void)now; }
static int s_lookup(void *ctx, int peer, int rail, bfo_addr *out)
{
    (void)ctx;
    if (peer < 0 || peer >= N || rail != 0)
        return BFO_ERR_INVALID;
    *out = S->book[peer];
    return BFO_OK;
}
/* As bfo_net: a peer's pair key when a connection first needs it. */
static int s_auth_peer(void *ctx, int peer)
{
    uint64_t a = now_ns();
    int rc;
    (void)ctx;
    rc = bfo_auth_set_peer(M.auth, peer, S->pk[peer]);
    M.key_ns += now_ns() - a;
    M.keys++;
    return rc == BFO_OK ? 0 : -1;
}

static int rank_main(int rank)
{
    static const char *const names[] = { "shm" };
    static const uint8_t membership[BFO_AUTH_KEY_LEN] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    bfo_sink sink = { &M, s_completion, s_frame, s_event, s_heard, s_lookup, NULL, NULL, NULL, NULL };
    bfo_shm_options o;
    bfo_config c;
    bfo_transport_args a;
    bfo_rail_stats st;
    result *r = &S->res[rank];
    int want, fds[8];
    uint64_t end;
    memset(&M, 0, sizeof M);
    M.rank = rank;
    memset(&o, 0, sizeof o);
    if (!NOAUTH) {
        if (bfo_auth_init(&M.auth, membership, rank, N, JOB) != BFO_OK)
            return 2;
        bfo_auth_public(M.auth, S->pk[rank]);
        o.auth = M.auth;
        o.auth_peer = s_auth_peer;
    }
    memset(&c, 0, sizeof c);
    c.rank = rank;
    c.nranks = N;
    c.nrails = 1;
    memset(&a, 0, sizeof a);
    a.rank = rank;
    a.size = N;
    a.nrails = 1;
    a.rails = names;
    a.cfg = &c;
    a.sink = &sink;
    a.opt = &o;
    a.log_level = getenv("SHM_CONN_LOG") ? atoi(getenv("SHM_CONN_LOG")) : 1;
    if (bfo_shm_transport.open(&M.t, &a) != BFO_OK)
        return 2;
    bfo_shm_transport.address(M.t, 0, &S->book[rank]);
    bfo_shm_transport.backend(M.t, &M.be);
    barrier(0); /* every address and public key published */
    bfo_shm_transport.start(M.t, JOB);
    barrier(1);
    want = npeers();
    M.t0 = now_ns();
    for (int p = 0; p < N; p++)
        if (wants(p) && (ALL || rank == 0))
            M.be.connect(M.be.ctx, p, 0);
    end = M.t0 + 20000000000ull;
    while ((M.nrx < (unsigned)want || M.done < (unsigned)want) && now_ns() < end) {
        int n = bfo_shm_transport.progress(M.t, now_ns()), k;
        r->progress++;
        if (n > 0)
            continue;
        k = bfo_shm_transport.wait_fds(M.t, fds, 8);
        if (k > 0) {
            struct pollfd pf[8];
            for (int i = 0; i < k; i++)
                pf[i] = (struct pollfd){ fds[i], POLLIN, 0 };
            r->sleeps++;
            if (poll(pf, (nfds_t)k, 1) > 0)
                r->wakes++;
        }
    }
    r->up_ms = M.nup ? (double)(M.last_up - M.t0) / 1e6 : -1;
    r->rx_ms = M.nrx ? (double)(M.last_rx - M.t0) / 1e6 : -1;
    r->key_ms = (double)M.key_ns / 1e6;
    r->keys = M.keys;
    r->ups = M.nup;
    r->rx = M.nrx;
    memset(&st, 0, sizeof st);
    bfo_shm_transport.stats(M.t, 0, &st);
    r->connects = st.connects;
    r->failures = st.connect_failures;
    r->rejected = st.hellos_rejected;
    r->stale = st.hellos_stale;
    r->ok = M.nrx == (unsigned)want && M.done == (unsigned)want;
    barrier(2); /* nobody closes before every rank is done */
    bfo_shm_transport.fini(M.t);
    bfo_auth_free(M.auth);
    return r->ok ? 0 : 1;
}

static int cmp_d(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

static void stat_line(const char *name, double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    printf("  %-26s median %9.3f  max %9.3f\n", name, v[n / 2], v[n - 1]);
}

int main(int argc, char **argv)
{
    int opt, rounds = 1, bad = 0;
    while ((opt = getopt(argc, argv, "n:m:Ar:")) != -1) {
        switch (opt) {
        case 'n': N = atoi(optarg); break;
        case 'm': ALL = strcmp(optarg, "pair") != 0; break;
        case 'A': NOAUTH = 1; break;
        case 'r': rounds = atoi(optarg); break;
        default:
            fprintf(stderr, "usage: shm_conn [-n ranks] [-m pair|all] [-A] [-r rounds]\n");
            return 2;
        }
    }
    if (N < 2 || N > MAXN || rounds < 1)
        return 2;
    S = (shared *)mmap(NULL, sizeof *S, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (S == MAP_FAILED)
        return 2;
    for (int round = 1; round <= rounds; round++) {
        double v[MAXN];
        unsigned conns = 0;
        uint64_t fails = 0, rej = 0;
        memset(S, 0, sizeof *S);
        fflush(stdout);
        for (int i = 0; i < N; i++) {
            pid_t pid = fork();
            if (pid == 0)
                _exit(rank_main(i));
            if (pid < 0)
                return 2;
        }
        for (int i = 0; i < N; i++) {
            int status;
            if (wait(&status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
                bad = 1;
        }
        printf("shm_conn: %d ranks, %s, %s, round %d%s\n", N, ALL ? "all to all" : "rank 0 to rank 1",
               NOAUTH ? "no bfo_auth" : "authenticated", round, bad ? " (A RANK FAILED)" : "");
        int m = ALL ? N : 2;
        for (int i = 0; i < m; i++) {
            conns += (unsigned)S->res[i].connects;
            fails += S->res[i].failures;
            rej += S->res[i].rejected;
        }
        for (int i = 0; i < m; i++)
            v[i] = S->res[i].up_ms;
        stat_line("last rail up (ms)", v, m);
        for (int i = 0; i < m; i++)
            v[i] = S->res[i].rx_ms;
        stat_line("last frame in (ms)", v, m);
        for (int i = 0; i < m; i++)
            v[i] = S->res[i].key_ms;
        stat_line("pair keys (ms)", v, m);
        for (int i = 0; i < m; i++)
            v[i] = S->res[i].sleeps;
        stat_line("sleeps", v, m);
        for (int i = 0; i < m; i++)
            v[i] = S->res[i].wakes;
        stat_line("wake-ups", v, m);
        for (int i = 0; i < m; i++)
            v[i] = S->res[i].progress;
        stat_line("progress calls", v, m);
        printf("  connections up %u (both ends), connect failures %llu, hellos rejected %llu\n", conns,
               (unsigned long long)fails, (unsigned long long)rej);
    }
    return bad;
}
