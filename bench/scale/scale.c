// SPDX-License-Identifier: BSD-3-Clause
/* bench/scale/scale.c - what a job of N ranks costs under a PML: the time of
 * MPI_Init, a first and a warm MPI_Alltoall, a ring, and per rank the
 * memory (PSS), open files, sockets and pinned memory, and the packets the
 * job sends while idle.  Run by bench/scale/run.sh under ob1 and pml/bfo in
 * interleaved rounds (bench/scale/README.md says what every figure is).
 *
 *   mpirun -np N scale [--idle SECONDS] [--warm K] [--ring K]
 *
 * Rank 0 prints one line "scale result key=value ..." (every time the
 * slowest rank's, every count a mean or a maximum over ranks, said in the
 * key), then "scale done".  Any word received wrong: "VERIFY FAILED ..."
 * on stderr and MPI_Abort (exit 3).
 *
 * Idle windows: after a barrier, every rank either sleeps (no MPI call:
 * idle_sleep_*) or calls MPI_Iprobe(MPI_ANY_SOURCE) in a loop (a rank
 * waiting in MPI: idle_probe_*) for --idle seconds; one rank per host (per
 * MPI_COMM_TYPE_SHARED communicator) reads its network namespace's packet
 * counters (/proc/self/net/dev: packets transmitted, every interface, lo
 * included) right after the barrier and at the window's end; the job's
 * figure is the sum over hosts divided by the window and the ranks.
 * Ranks of one host share its namespace: with run.sh the job has its
 * namespaces to itself (unshare --net, or tests/hosts' hosts), so nothing
 * else is counted. */
#include <mpi.h>

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define A2A_WORDS 1024 /* 4 KiB of uint32_t per peer */
#define RING_WORDS 1024

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int rank, size;

static void verify_failed(const char *what, int iter, int peer, int word, uint32_t got, uint32_t want)
{
    fprintf(stderr, "scale VERIFY FAILED %s rank=%d iteration=%d peer=%d word=%d got=0x%08x want=0x%08x\n", what,
            rank, iter, peer, word, got, want);
    MPI_Abort(MPI_COMM_WORLD, 3);
}

static double t_init; /* when MPI_Init returned */

/* Any MPI error: said with its string (the PML's: which peer, why) and
 * when, then the job aborts (exit 4); MPI_ERRORS_ARE_FATAL said only
 * "known error not in list" for pml/bfo's codes. */
static void on_error(MPI_Comm *comm, int *code, ...)
{
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    (void)comm;
    if (MPI_Error_string(*code, s, &len) != MPI_SUCCESS)
        snprintf(s, sizeof s, "error %d", *code);
    fprintf(stderr, "scale MPI ERROR rank=%d after_init_s=%.1f: %s\n", rank, now_s() - t_init, s);
    MPI_Abort(MPI_COMM_WORLD, 4);
}

/* the word that src sends dst at position i of iteration it */
static uint32_t pattern(int src, int dst, int i, int it)
{
    uint32_t x = (uint32_t)src * 0x9e3779b1u ^ (uint32_t)dst * 0x85ebca77u ^ (uint32_t)i * 0xc2b2ae3du ^
                 (uint32_t)it * 0x27d4eb2fu;
    return x ^ (x >> 15);
}

/* ---------------------------------------------------------- resources */

typedef struct {
    double pss_kib, fds, sockets, pin_kib, lck_kib;
} res;

static long kib_field(const char *path, const char *key)
{
    char line[256];
    long v = -1;
    size_t k = strlen(key);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, key, k) && line[k] == ':') {
            v = strtol(line + k + 1, NULL, 10);
            break;
        }
    fclose(f);
    return v;
}

static res res_now(void)
{
    res r = {0, 0, 0, 0, 0};
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    char p[300], t[300];
    r.pss_kib = (double)kib_field("/proc/self/smaps_rollup", "Pss");
    r.pin_kib = (double)kib_field("/proc/self/status", "VmPin");
    r.lck_kib = (double)kib_field("/proc/self/status", "VmLck");
    if (d) {
        while ((e = readdir(d))) {
            ssize_t n;
            if (e->d_name[0] == '.')
                continue;
            snprintf(p, sizeof p, "/proc/self/fd/%s", e->d_name);
            n = readlink(p, t, sizeof t - 1);
            if (n < 0)
                continue; /* the directory's own fd, closed meanwhile */
            t[n] = 0;
            r.fds++;
            if (!strncmp(t, "socket:", 7))
                r.sockets++;
        }
        closedir(d);
        r.fds--; /* opendir's own */
    }
    return r;
}

/* the mean and the maximum over ranks, as "name_mean=.. name_max=.." */
static void res_report(const char *when, res r, char *out, size_t cap)
{
    double v[5] = {r.pss_kib, r.fds, r.sockets, r.pin_kib, r.lck_kib}, sum[5], max[5];
    static const char *name[5] = {"pss_kib", "fds", "sockets", "vmpin_kib", "vmlck_kib"};
    size_t len = strlen(out);
    MPI_Reduce(v, sum, 5, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(v, max, 5, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    for (int i = 0; i < 5 && rank == 0; i++)
        len += (size_t)snprintf(out + len, len < cap ? cap - len : 0, " %s_%s_mean=%.1f %s_%s_max=%.0f", name[i],
                                when, sum[i] / size, name[i], when, max[i]);
}

/* ---------------------------------------------------------- timing */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* the slowest rank's time of each of k runs, then their median */
static double median_of_max(double *local, int k)
{
    double *max = malloc(sizeof(double) * (size_t)k), m = 0;
    MPI_Reduce(local, max, k, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        qsort(max, (size_t)k, sizeof(double), cmp_double);
        m = k % 2 ? max[k / 2] : (max[k / 2 - 1] + max[k / 2]) / 2;
    }
    free(max);
    return m;
}

static double slowest(double local)
{
    double m = 0;
    MPI_Reduce(&local, &m, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    return m;
}

/* ---------------------------------------------------------- the phases */

static double alltoall_once(uint32_t *sb, uint32_t *rb, int it)
{
    double t0, t1;
    for (int p = 0; p < size; p++)
        for (int i = 0; i < A2A_WORDS; i++)
            sb[(size_t)p * A2A_WORDS + i] = pattern(rank, p, i, it);
    memset(rb, 0, sizeof(uint32_t) * A2A_WORDS * (size_t)size);
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = now_s();
    MPI_Alltoall(sb, A2A_WORDS, MPI_UINT32_T, rb, A2A_WORDS, MPI_UINT32_T, MPI_COMM_WORLD);
    t1 = now_s();
    for (int p = 0; p < size; p++)
        for (int i = 0; i < A2A_WORDS; i++) {
            uint32_t want = pattern(p, rank, i, it), got = rb[(size_t)p * A2A_WORDS + i];
            if (got != want)
                verify_failed("alltoall", it, p, i, got, want);
        }
    return t1 - t0;
}

static double ring_once(uint32_t *sb, uint32_t *rb, int it)
{
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    MPI_Request q[2];
    double t0, t1;
    for (int i = 0; i < RING_WORDS; i++)
        sb[i] = pattern(rank, to, i, it);
    memset(rb, 0, sizeof(uint32_t) * RING_WORDS);
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = now_s();
    MPI_Irecv(rb, RING_WORDS, MPI_UINT32_T, from, 7, MPI_COMM_WORLD, &q[0]);
    MPI_Isend(sb, RING_WORDS, MPI_UINT32_T, to, 7, MPI_COMM_WORLD, &q[1]);
    MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
    t1 = now_s();
    for (int i = 0; i < RING_WORDS; i++)
        if (rb[i] != pattern(from, rank, i, it))
            verify_failed("ring", it, from, i, rb[i], pattern(from, rank, i, it));
    return t1 - t0;
}

/* packets transmitted in this network namespace, every interface (-1:
 * not readable), and UDP datagrams sent */
static void ns_packets(double *tx, double *udp)
{
    char line[512];
    FILE *f = fopen("/proc/self/net/dev", "r");
    *tx = -1;
    *udp = -1;
    if (f) {
        double s = 0;
        while (fgets(line, sizeof line, f)) {
            char *c = strchr(line, ':');
            unsigned long long v[10];
            if (c && sscanf(c + 1, "%llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
                            &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]) == 10)
                s += (double)v[9]; /* transmit packets */
        }
        fclose(f);
        *tx = s;
    }
    f = fopen("/proc/self/net/snmp", "r");
    if (f) {
        int udp_lines = 0;
        while (fgets(line, sizeof line, f))
            if (!strncmp(line, "Udp: ", 5) && ++udp_lines == 2) { /* the values; OutDatagrams is 4th */
                unsigned long long v[4];
                if (sscanf(line + 5, "%llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3]) == 4)
                    *udp = (double)v[3];
            }
        fclose(f);
    }
}

/* one idle window: every rank sleeps (probe 0) or probes for secs; the
 * packets sent per second per rank, and the UDP datagrams */
static void idle_window(MPI_Comm host, int probe, double secs, double *pkts, double *udp)
{
    int hr, flag;
    double a[2] = {0, 0}, b[2] = {0, 0}, d[2] = {0, 0}, sum[2] = {0, 0}, t0;
    MPI_Comm_rank(host, &hr);
    MPI_Barrier(MPI_COMM_WORLD);
    if (hr == 0)
        ns_packets(&a[0], &a[1]);
    t0 = now_s();
    if (probe) {
        while (now_s() - t0 < secs)
            MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    } else {
        struct timespec ts = {(time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9)};
        while (nanosleep(&ts, &ts) != 0)
            ;
    }
    if (hr == 0) {
        double el = now_s() - t0;
        ns_packets(&b[0], &b[1]);
        d[0] = a[0] < 0 || b[0] < 0 ? -1e18 : (b[0] - a[0]) / el;
        d[1] = a[1] < 0 || b[1] < 0 ? -1e18 : (b[1] - a[1]) / el;
    }
    MPI_Reduce(d, sum, 2, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    *pkts = sum[0] < 0 ? -1 : sum[0] / size;
    *udp = sum[1] < 0 ? -1 : sum[1] / size;
}

int main(int argc, char **argv)
{
    double idle = 2, t0, t1, *warm, first, pk, ud;
    int nwarm = 5, nring = 9, nhosts = 0, hr;
    char out[4096] = "";
    uint32_t *sb, *rb;
    res r_init, r_barrier, r_end;
    MPI_Comm host;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--idle") && i + 1 < argc)
            idle = atof(argv[++i]);
        else if (!strcmp(argv[i], "--warm") && i + 1 < argc)
            nwarm = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--ring") && i + 1 < argc)
            nring = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: scale [--idle SECONDS] [--warm K] [--ring K]\n");
            return 2;
        }
    }
    if (nwarm < 1)
        nwarm = 1;
    if (nring < 2)
        nring = 2;

    t0 = now_s();
    MPI_Init(&argc, &argv);
    t1 = now_s();
    r_init = res_now(); /* before any message of the program's */
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    t_init = t1;
    {
        MPI_Errhandler eh;
        MPI_Comm_create_errhandler(on_error, &eh);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh);
        MPI_Errhandler_free(&eh);
    }

    first = slowest(t1 - t0);
    if (rank == 0)
        snprintf(out, sizeof out, "ranks=%d init_s=%.4f", size, first);
    MPI_Barrier(MPI_COMM_WORLD);
    r_barrier = res_now();
    res_report("init", r_init, out, sizeof out);
    res_report("barrier", r_barrier, out, sizeof out);

    sb = malloc(sizeof(uint32_t) * A2A_WORDS * (size_t)size);
    rb = malloc(sizeof(uint32_t) * A2A_WORDS * (size_t)size);
    if (!sb || !rb) {
        fprintf(stderr, "scale: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    warm = malloc(sizeof(double) * (size_t)(nwarm > nring ? nwarm : nring));

    /* the ring first: its first step is the first message to either neighbour */
    first = slowest(ring_once(sb, rb, 0));
    for (int k = 0; k < nring - 1; k++)
        warm[k] = ring_once(sb, rb, 1 + k);
    {
        double w = median_of_max(warm, nring - 1);
        if (rank == 0)
            snprintf(out + strlen(out), sizeof out - strlen(out), " ring_first_us=%.1f ring_warm_us=%.1f", first * 1e6,
                     w * 1e6);
    }

    first = slowest(alltoall_once(sb, rb, 100));
    for (int k = 0; k < nwarm; k++)
        warm[k] = alltoall_once(sb, rb, 101 + k);
    {
        double w = median_of_max(warm, nwarm);
        if (rank == 0)
            snprintf(out + strlen(out), sizeof out - strlen(out), " a2a_first_ms=%.3f a2a_warm_ms=%.3f", first * 1e3,
                     w * 1e3);
    }
    r_end = res_now();
    res_report("end", r_end, out, sizeof out);

    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host);
    MPI_Comm_rank(host, &hr);
    hr = hr == 0;
    MPI_Reduce(&hr, &nhosts, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (idle > 0) {
        idle_window(host, 0, idle, &pk, &ud);
        if (rank == 0)
            snprintf(out + strlen(out), sizeof out - strlen(out), " idle_sleep_pkts_per_rank_s=%.2f idle_sleep_udp_per_rank_s=%.2f",
                     pk, ud);
        idle_window(host, 1, idle, &pk, &ud);
        if (rank == 0)
            snprintf(out + strlen(out), sizeof out - strlen(out), " idle_probe_pkts_per_rank_s=%.2f idle_probe_udp_per_rank_s=%.2f",
                     pk, ud);
    }
    MPI_Comm_free(&host);
    if (rank == 0) {
        printf("scale result hosts=%d %s\n", nhosts, out);
        fflush(stdout);
    }
    free(warm);
    free(sb);
    free(rb);
    MPI_Finalize();
    if (rank == 0)
        printf("scale done\n");
    return 0;
}
