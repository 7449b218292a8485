// SPDX-License-Identifier: BSD-3-Clause
/* pml_bench.c - ping-pong latency and streaming bandwidth between two MPI
 * ranks, for comparing Open MPI PMLs (ob1, ucx, bfo) in one run.
 *
 *   mpirun -np 2 [PML options] pml_bench [--sizes LIST] [--window W]
 *          [--iters N] [--quiet]
 *
 *   --sizes LIST  comma-separated sizes, K and M suffixes (powers of 1024);
 *                 default 8 B to 4 MiB in powers of two plus 64K-1 and
 *                 64K+1 (either side of a typical eager limit).  An entry
 *                 may be written 64K-1 or 64K+1.
 *   --window W    messages in flight in the bandwidth phase (default 16)
 *   --iters N     ping-pongs for messages up to 8 KiB (default 1000); larger
 *                 messages get N * 8 KiB / size, at least 20
 *   --quiet       no header comments, only the result lines
 *
 * For every size, in this order:
 *
 *   latency    warm-up ping-pongs (a tenth of the count, at least 2), then
 *              iters + 2 ping-pongs.  The first and the last of these carry
 *              a full pattern (a function of size and iteration) that both
 *              ranks check completely, and are not timed; the iters between
 *              them are timed one by one (MPI_Wtime around each round trip
 *              on rank 0).  latency_us = median half round trip; min and
 *              mean are printed too.  Rank 1 echoes the buffer it received,
 *              so what rank 0 gets back went both ways.
 *   bandwidth  warm-up windows, then windows + 2 windows; a window is W
 *              MPI_Isend (rank 0) / MPI_Irecv (rank 1) from / into W
 *              distinct buffers, MPI_Waitall, then a 4-byte ack from rank 1
 *              to rank 0.  The first and last windows carry the full pattern
 *              and are checked by rank 1 before it acks; they are not timed.
 *              Each window between them is timed on its own on rank 0, from
 *              the previous window's ack to its own: bandwidth_MBps = a
 *              window's bytes / the median window time (MB = 1e6 bytes),
 *              which a window the scheduler preempted hardly moves (as the
 *              latency is a median of iterations).  bw_total_MBps = all the
 *              timed windows' bytes / their total time (OSU's osu_bw way),
 *              which every preemption lowers.
 *              Windows: enough for 128 MiB at this size, between 10 and 200.
 *
 * Touching the buffers: every buffer is allocated once (page aligned) and
 * written in full before the first measurement, so that no first-touch page
 * fault lands in a timed region.  In every timed iteration the sender writes
 * a stamp (iteration, size) into the first and the last 8 bytes of each
 * message, and the receiver checks both stamps: a PML that skips the copy,
 * delivers an earlier message or a truncated one fails on the spot.  Fully
 * checked payload: first and last iteration of each phase (above).
 *
 * Output (rank 0, stdout), one line per size:
 *
 *   pml_bench size=S latency_us=L bandwidth_MBps=B lat_min_us=.. \
 *             lat_mean_us=.. bw_total_MBps=.. lat_iters=N bw_msgs=M \
 *             verified=1
 *
 * followed by `pml_bench done sizes=K`.  Lines starting with '#' are
 * comments.  On a verification failure: a line `pml_bench VERIFY FAILED ...`
 * on stderr and MPI_Abort with code 3; a run that did not print `done`
 * failed.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TAG_PING 11
#define TAG_PONG 12
#define TAG_DATA 13
#define TAG_ACK  14

static int rank;

static void die(const char *msg)
{
    fprintf(stderr, "pml_bench: %s\n", msg);
    MPI_Abort(MPI_COMM_WORLD, 2);
    exit(2);
}

/* ---- sizes ---- */

static size_t parse_size(const char *s)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s) die("bad size in --sizes");
    if (*end == 'K' || *end == 'k') { v <<= 10; end++; }
    else if (*end == 'M' || *end == 'm') { v <<= 20; end++; }
    else if (*end == 'G' || *end == 'g') { v <<= 30; end++; }
    if (*end == '+' || *end == '-') {
        char sign = *end++;
        char *e2;
        unsigned long long d = strtoull(end, &e2, 10);
        if (e2 == end) die("bad size in --sizes");
        v = sign == '+' ? v + d : v - d;
        end = e2;
    }
    if (*end != '\0' || v == 0) die("bad size in --sizes (sizes start at 1)");
    return (size_t)v;
}

static int parse_sizes(const char *list, size_t *out, int max)
{
    char buf[4096];
    int n = 0;
    if (strlen(list) >= sizeof buf) die("--sizes too long");
    strcpy(buf, list);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        if (n == max) die("too many sizes");
        out[n++] = parse_size(tok);
    }
    if (n == 0) die("empty --sizes");
    return n;
}

/* ---- payload pattern ---- */

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Word j of the pattern for (seed): cheap, different at every offset. */
static inline uint64_t pat_word(uint64_t base, size_t j) { return base ^ (j * 0x9e3779b97f4a7c15ull); }

static void pattern_fill(unsigned char *p, size_t n, uint64_t seed)
{
    uint64_t base = mix(seed);
    size_t words = n / 8, j;
    for (j = 0; j < words; j++) {
        uint64_t w = pat_word(base, j);
        memcpy(p + 8 * j, &w, 8);
    }
    if (n % 8) {
        uint64_t w = pat_word(base, j);
        memcpy(p + 8 * j, &w, n % 8);
    }
}

/* Offset of the first byte that differs, or (size_t)-1. */
static size_t pattern_check(const unsigned char *p, size_t n, uint64_t seed)
{
    uint64_t base = mix(seed);
    size_t words = n / 8, j;
    for (j = 0; j < words; j++) {
        uint64_t w = pat_word(base, j), g;
        memcpy(&g, p + 8 * j, 8);
        if (g != w) {
            for (size_t b = 0; b < 8; b++)
                if (p[8 * j + b] != ((unsigned char *)&w)[b]) return 8 * j + b;
        }
    }
    if (n % 8) {
        uint64_t w = pat_word(base, j);
        for (size_t b = 0; b < n % 8; b++)
            if (p[8 * j + b] != ((unsigned char *)&w)[b]) return 8 * j + b;
    }
    return (size_t)-1;
}

static uint64_t seed_of(int phase, size_t size, long iter, int slot)
{
    return ((uint64_t)phase << 60) ^ ((uint64_t)size << 20) ^ ((uint64_t)iter << 8) ^ (uint64_t)slot;
}

/* Stamps: first and last 8 bytes (fewer when size < 8; they overlap when
 * size < 16, and the last stamp wins there: both are checked the same way). */
static void stamp_write(unsigned char *p, size_t n, uint64_t v)
{
    size_t k = n < 8 ? n : 8;
    uint64_t a = mix(v), b = mix(v ^ 0x5555);
    memcpy(p, &a, k);
    memcpy(p + n - k, &b, k);
}

static int stamp_ok(const unsigned char *p, size_t n, uint64_t v)
{
    size_t k = n < 8 ? n : 8;
    uint64_t a = mix(v), b = mix(v ^ 0x5555);
    if (n >= 16) return memcmp(p, &a, 8) == 0 && memcmp(p + n - 8, &b, 8) == 0;
    /* n < 16: the two stamps cover (and overlap in) the whole message */
    unsigned char want[16];
    memcpy(want, &a, k);
    memcpy(want + n - k, &b, k);
    return memcmp(want, p, n) == 0;
}

static void verify_fail(const char *what, size_t size, long iter, int slot, size_t off)
{
    fprintf(stderr, "pml_bench VERIFY FAILED rank=%d phase=%s size=%zu iteration=%ld slot=%d offset=%zu\n",
            rank, what, size, iter, slot, off);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 3);
    exit(3);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void *xalloc(size_t n)
{
    void *p = NULL;
    if (posix_memalign(&p, 4096, n ? n : 1)) die("out of memory");
    return p;
}

int main(int argc, char **argv)
{
    size_t sizes[64];
    int nsizes, window = 16, quiet = 0;
    long base_iters = 1000;
    const char *sizes_arg = "8,16,32,64,128,256,512,1K,2K,4K,8K,16K,32K,64K-1,64K,64K+1,"
                            "128K,256K,512K,1M,2M,4M";
    int nprocs;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);

    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--sizes") && i + 1 < argc) sizes_arg = argv[++i];
        else if (!strcmp(argv[i], "--window") && i + 1 < argc) window = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--iters") && i + 1 < argc) base_iters = atol(argv[++i]);
        else if (!strcmp(argv[i], "--quiet")) quiet = 1;
        else {
            if (rank == 0) fprintf(stderr, "usage: pml_bench [--sizes LIST] [--window W] [--iters N] [--quiet]\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (nprocs != 2) die("needs exactly 2 ranks");
    if (window < 1 || window > 1024) die("--window out of range (1..1024)");
    if (base_iters < 1) die("--iters must be >= 1");
    nsizes = parse_sizes(sizes_arg, sizes, 64);

    size_t maxsize = 0;
    for (int i = 0; i < nsizes; i++)
        if (sizes[i] > maxsize) maxsize = sizes[i];

    /* Latency: sbuf (rank 0 sends, rank 1 echoes from rbuf), rbuf.
     * Bandwidth: window slots of maxsize each (rank 0 sends from them,
     * rank 1 receives into them). */
    unsigned char *sbuf = xalloc(maxsize), *rbuf = xalloc(maxsize);
    unsigned char *slots = xalloc(maxsize * (size_t)window);
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * (size_t)window);
    long max_iters = base_iters > 20 ? base_iters : 20;
    double *times = malloc(sizeof(double) * (size_t)max_iters);
    double *wtimes = malloc(sizeof(double) * 200);
    if (!reqs || !times || !wtimes) die("out of memory");
    memset(sbuf, 0xa5, maxsize);
    memset(rbuf, 0x5a, maxsize);
    memset(slots, 0x3c, maxsize * (size_t)window);

    if (rank == 0 && !quiet) {
        char ver[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(ver, &len);
        char *nl = strchr(ver, '\n');
        if (nl) *nl = '\0';
        printf("# pml_bench: %d sizes, window %d, iters %ld (<= 8 KiB), %s\n", nsizes, window, base_iters, ver);
        printf("# latency_us = median half round trip; bandwidth_MBps = 1e6 B/s, window of %d\n", window);
        fflush(stdout);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    for (int si = 0; si < nsizes; si++) {
        size_t size = sizes[si];
        int count = (int)size; /* sizes are < 2 GiB */
        long iters = size <= 8192 ? base_iters : (long)((double)base_iters * 8192.0 / (double)size);
        if (iters < 20) iters = 20;
        if (iters > max_iters) iters = max_iters;
        long warm = iters / 10 < 2 ? 2 : iters / 10;

        /* ---------------- latency ---------------- */
        for (long it = -warm; it < iters + 2; it++) {
            int verify = (it == 0 || it == iters + 1);
            int timed = it >= 1 && it <= iters;
            uint64_t seed = seed_of(1, size, it, 0);
            if (rank == 0) {
                if (verify) {
                    pattern_fill(sbuf, size, seed);
                    memset(rbuf, 0xee, size);
                } else
                    stamp_write(sbuf, size, seed);
                double t0 = MPI_Wtime();
                MPI_Send(sbuf, count, MPI_BYTE, 1, TAG_PING, MPI_COMM_WORLD);
                MPI_Recv(rbuf, count, MPI_BYTE, 1, TAG_PONG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                double t1 = MPI_Wtime();
                if (timed) times[it - 1] = (t1 - t0) / 2.0;
                if (verify) {
                    size_t off = pattern_check(rbuf, size, seed);
                    if (off != (size_t)-1) verify_fail("latency-echo", size, it, 0, off);
                } else if (!stamp_ok(rbuf, size, seed))
                    verify_fail("latency-echo-stamp", size, it, 0, 0);
            } else {
                if (verify) memset(rbuf, 0xee, size);
                MPI_Recv(rbuf, count, MPI_BYTE, 0, TAG_PING, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                if (verify) {
                    size_t off = pattern_check(rbuf, size, seed);
                    if (off != (size_t)-1) verify_fail("latency", size, it, 0, off);
                } else if (!stamp_ok(rbuf, size, seed))
                    verify_fail("latency-stamp", size, it, 0, 0);
                MPI_Send(rbuf, count, MPI_BYTE, 0, TAG_PONG, MPI_COMM_WORLD);
            }
        }

        /* ---------------- bandwidth ---------------- */
        long windows = (long)((128.0 * 1048576.0) / ((double)size * window));
        if (windows < 10) windows = 10;
        if (windows > 200) windows = 200;
        long bwarm = windows / 10 < 1 ? 1 : windows / 10;
        double bt0 = 0, bt1 = 0, tprev = 0;
        int ack = 0;
        MPI_Barrier(MPI_COMM_WORLD);
        for (long w = -bwarm; w < windows + 2; w++) {
            int verify = (w == 0 || w == windows + 1);
            for (int k = 0; k < window; k++) {
                unsigned char *p = slots + (size_t)k * maxsize;
                uint64_t seed = seed_of(2, size, w, k);
                if (rank == 0) {
                    if (verify) pattern_fill(p, size, seed);
                    else stamp_write(p, size, seed);
                    MPI_Isend(p, count, MPI_BYTE, 1, TAG_DATA, MPI_COMM_WORLD, &reqs[k]);
                } else {
                    if (verify) memset(p, 0xee, size);
                    MPI_Irecv(p, count, MPI_BYTE, 0, TAG_DATA, MPI_COMM_WORLD, &reqs[k]);
                }
            }
            MPI_Waitall(window, reqs, MPI_STATUSES_IGNORE);
            if (rank == 0) {
                MPI_Recv(&ack, 1, MPI_INT, 1, TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                if (ack != (int)(w & 0x7fffffff)) verify_fail("bandwidth-ack", size, w, 0, 0);
                if (w >= 0 && w <= windows) {
                    double t = MPI_Wtime();
                    if (w == 0) bt0 = t;
                    else wtimes[w - 1] = t - tprev;
                    if (w == windows) bt1 = t;
                    tprev = t;
                }
            } else {
                for (int k = 0; k < window; k++) {
                    unsigned char *p = slots + (size_t)k * maxsize;
                    uint64_t seed = seed_of(2, size, w, k);
                    if (verify) {
                        size_t off = pattern_check(p, size, seed);
                        if (off != (size_t)-1) verify_fail("bandwidth", size, w, k, off);
                    } else if (!stamp_ok(p, size, seed))
                        verify_fail("bandwidth-stamp", size, w, k, 0);
                }
                ack = (int)(w & 0x7fffffff);
                MPI_Send(&ack, 1, MPI_INT, 0, TAG_ACK, MPI_COMM_WORLD);
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);

        if (rank == 0) {
            double sum = 0;
            for (long i = 0; i < iters; i++) sum += times[i];
            qsort(times, (size_t)iters, sizeof(double), cmp_double);
            double med = iters % 2 ? times[iters / 2] : (times[iters / 2 - 1] + times[iters / 2]) / 2.0;
            long msgs = windows * window;
            double bw = (double)size * (double)msgs / (bt1 - bt0) / 1e6;
            qsort(wtimes, (size_t)windows, sizeof(double), cmp_double);
            double wmed = windows % 2 ? wtimes[windows / 2] : (wtimes[windows / 2 - 1] + wtimes[windows / 2]) / 2.0;
            double bw_med = (double)size * (double)window / wmed / 1e6;
            printf("pml_bench size=%zu latency_us=%.3f bandwidth_MBps=%.2f lat_min_us=%.3f lat_mean_us=%.3f "
                   "bw_total_MBps=%.2f lat_iters=%ld bw_msgs=%ld verified=1\n",
                   size, med * 1e6, bw_med, times[0] * 1e6, sum / (double)iters * 1e6, bw, iters, msgs);
            fflush(stdout);
        }
    }
    if (rank == 0) {
        printf("pml_bench done sizes=%d\n", nsizes);
        fflush(stdout);
    }
    free(wtimes);
    free(times);
    free(reqs);
    free(slots);
    free(rbuf);
    free(sbuf);
    MPI_Finalize();
    return 0;
}
