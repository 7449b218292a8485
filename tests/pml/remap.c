// SPDX-License-Identifier: BSD-3-Clause
/* remap.c - large transfers between buffers whose memory is given back and
 * mapped again at the same address between them (issue 34, finding 1).
 *
 * A PML that sends by RDMA registers the buffers with the adapter, which
 * pins their pages; a registration cache keeps them registered after the
 * transfer and finds them again by virtual address.  When the program
 * frees or unmaps a buffer and the same address is mapped again, a cache
 * that was not told (a memory-release hook) hands out the old registration:
 * the adapter reads and writes the OLD pages, the program sees new ones.
 * No error anywhere, wrong data.  ob1 and ucx install release hooks; this
 * checks that a PML does the equivalent.
 *
 * Each iteration every rank sends SIZE bytes (default 4 MiB, above every
 * RDMA threshold) to a partner and receives as many from it, both ways at
 * once (Isend + Irecv + Waitall): its send buffer filled with the pattern of
 * (source, tag, variant, iteration, index), its receive buffer poisoned
 * (0xEE) first; every byte is checked afterwards.  Between iterations the
 * variant gives memory back and takes it again:
 *   control       nothing: the same buffers each time (a cache hit is right)
 *   munmap        both buffers: munmap, then mmap at the same address
 *                 (MAP_FIXED_NOREPLACE; checked to be the same)
 *   munmap_send   only the send buffer (the source of an RDMA GET, or of
 *                 the sender's own RDMA WRITE, goes stale)
 *   munmap_recv   only the receive buffer (the target of an RDMA PUT, or of
 *                 the receiver's own RDMA READ, goes stale)
 *   dontneed      madvise(MADV_DONTNEED) on both: still mapped, but the
 *                 next touch gets new zero pages (as a trimmed heap does)
 *   malloc        free and malloc of both (glibc's defaults: whether free
 *                 unmaps and malloc returns the same address is glibc's
 *                 choice; a NOTE says how often each happened)
 *   malloc_mmap   the same after mallopt(M_MMAP_THRESHOLD, 256 KiB): every
 *                 free unmaps, and malloc usually maps the same address
 *                 (its first buffers too can land where malloc's first
 *                 ones were, which malloc's frees unmapped)
 *   all           every variant in that order, one job: a variant that
 *                 sees wrong data says so (FAIL lines) and the next one
 *                 runs; the job aborts at the end when any did.  Each
 *                 variant's last buffers stay mapped until the end, so
 *                 that the next variant starts at new addresses
 * Usage: remap CASE [SIZE [ITERS]] (SIZE in bytes, K or M suffix; default
 * 4M and 6).  Wrong data: "FAIL rank R/N case C (...): VARIANT iteration
 * I from rank P: payload byte B of SIZE is 0xXX, expected 0xYY (what it is:
 * the poison, or the data of iteration J)".  A single case aborts at the
 * first wrong byte. */
#include "common.h"
#include <errno.h>
#include <malloc.h>
#include <sys/mman.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

#define RM_TAG 34
#define RM_POISON 0xEE

enum rm_how { RM_NONE, RM_MUNMAP, RM_DONTNEED, RM_MALLOC };

struct rm_variant {
    const char *name;
    enum rm_how how;
    int send, recv; /* which buffers it gives back */
    int mmap_threshold;
};

static const struct rm_variant rm_variants[] = {
    {"control", RM_NONE, 0, 0, 0},
    {"munmap", RM_MUNMAP, 1, 1, 0},
    {"munmap_send", RM_MUNMAP, 1, 0, 0},
    {"munmap_recv", RM_MUNMAP, 0, 1, 0},
    {"dontneed", RM_DONTNEED, 1, 1, 0},
    {"malloc", RM_MALLOC, 1, 1, 0},
    {"malloc_mmap", RM_MALLOC, 1, 1, 1},
    {NULL, RM_NONE, 0, 0, 0},
};

static size_t rm_size = 4u << 20;
static int rm_iters = 6;
static int rm_keep_going; /* "all": a variant's wrong data does not end the job */
/* "all" keeps each variant's last buffers until the end (parked), so that
 * the next variant starts at addresses no earlier one used: a variant's
 * first transfer then goes through fresh registrations, and wrong data in
 * a later one is that variant's own doing (released, the next variant's
 * first buffers came back at the same addresses, and the stale
 * registrations of the one before failed it) */
#define RM_PARKED 16
static struct rm_buf {
    unsigned char *p;
    size_t maplen; /* mmap'ed: the mapping's length; malloc'ed: 0 */
} rm_parked[RM_PARKED];
static int rm_nparked;
static size_t rm_page;

/* the pattern's key: tag, variant and iteration */
static int rm_key(int v, int it) { return RM_TAG * 1000000 + (v + 1) * 1000 + it; }

static void rm_map(struct rm_buf *b, void *at)
{
    void *p;
    b->maplen = (rm_size + rm_page - 1) / rm_page * rm_page;
    p = mmap(at, b->maplen, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | (at ? MAP_FIXED_NOREPLACE : 0), -1, 0);
    if (p == MAP_FAILED)
        FAIL("mmap(%p, %zu)%s: %s", at, b->maplen, at ? " at the address just unmapped" : "", strerror(errno));
    if (at && p != at) /* a kernel before 4.17 takes the flag as a hint */
        FAIL("mmap(%p, %zu, MAP_FIXED_NOREPLACE) mapped %p instead: the address was not reused", at,
             b->maplen, p);
    b->p = p;
}

/* Is the page of p still mapped?  (mincore fails with ENOMEM on a range
 * that is not.) */
static int rm_mapped(uintptr_t p)
{
    unsigned char v;
    void *pg = (void *)(p / rm_page * rm_page);
    return mincore(pg, rm_page, &v) == 0 || errno != ENOMEM;
}

struct rm_counts {
    long reused, unmapped, remaps; /* malloc: same address again; range unmapped by free; of remaps */
};

/* Gives b's memory back and takes it again, the variant's way. */
static void rm_renew(const struct rm_variant *vr, struct rm_buf *b, struct rm_counts *c)
{
    void *old = b->p;
    uintptr_t was = (uintptr_t)old; /* compared after free, never used */
    switch (vr->how) {
    case RM_NONE:
        break;
    case RM_MUNMAP:
        if (munmap(b->p, b->maplen) != 0)
            FAIL("munmap(%p, %zu): %s", (void *)b->p, b->maplen, strerror(errno));
        rm_map(b, old);
        break;
    case RM_DONTNEED:
        if (madvise(b->p, b->maplen, MADV_DONTNEED) != 0)
            FAIL("madvise(%p, %zu, MADV_DONTNEED): %s", (void *)b->p, b->maplen, strerror(errno));
        break;
    case RM_MALLOC:
        free(b->p);
        c->remaps++;
        if (!rm_mapped(was))
            c->unmapped++;
        b->p = xmalloc(rm_size);
        if ((uintptr_t)b->p == was)
            c->reused++;
        break;
    }
}

static void rm_alloc(const struct rm_variant *vr, struct rm_buf *b)
{
    if (vr->how == RM_MALLOC) {
        b->p = xmalloc(rm_size);
        b->maplen = 0;
    } else
        rm_map(b, NULL);
}

static void rm_release(struct rm_buf *b)
{
    if (rm_keep_going && rm_nparked < RM_PARKED) {
        rm_parked[rm_nparked++] = *b;
        b->p = NULL;
        return;
    }
    if (b->maplen)
        munmap(b->p, b->maplen);
    else
        free(b->p);
    b->p = NULL;
}

/* What the first wrong byte at bad is: the poison, or the data of an
 * earlier iteration (a stale registration's pages), or neither. */
static void rm_what(char *out, size_t n, const unsigned char *buf, size_t bad, int src, int v, int it)
{
    int j;
    size_t k;
    for (j = it - 1; j >= 0; j--) { /* the same for 64 bytes: that iteration's data */
        for (k = bad; k < rm_size && k < bad + 64; k++)
            if (buf[k] != pat(src, rm_key(v, j), k))
                break;
        if (k == rm_size || k == bad + 64) {
            snprintf(out, n, "the data of iteration %d", j);
            return;
        }
    }
    for (k = bad; k < rm_size && k < bad + 64; k++)
        if (buf[k] != RM_POISON)
            break;
    if (k == rm_size || k == bad + 64) {
        snprintf(out, n, "the poison the receiver wrote: nothing was written here");
        return;
    }
    snprintf(out, n, "neither the poison nor an earlier iteration's data");
}

/* One variant: rm_iters exchanges; the number of wrong transfers this rank
 * saw. */
static long rm_variant(int v)
{
    const struct rm_variant *vr = &rm_variants[v];
    struct rm_buf sb, rb;
    struct rm_counts c = {0, 0, 0}, tot;
    long bad = 0, allbad = 0, recvs[2] = {0, 0}, allrecvs[2];
    int npow = 1, it;
    double t0 = now();
    while (npow < np)
        npow <<= 1;
    if (vr->mmap_threshold && !mallopt(M_MMAP_THRESHOLD, 256 * 1024))
        FAIL("mallopt(M_MMAP_THRESHOLD, 256 KiB) failed");
    rm_alloc(vr, &sb);
    rm_alloc(vr, &rb);
    for (it = 0; it < rm_iters; it++) {
        /* every pair over the iterations (rank ^ d); a rank without a
         * partner this time (np not a power of two) only remaps */
        int d = npow > 1 ? 1 + it % (npow - 1) : 0, peer = me ^ d;
        MPI_Request rq[2];
        MPI_Status st[2];
        if (it > 0) {
            if (vr->send)
                rm_renew(vr, &sb, &c);
            if (vr->recv)
                rm_renew(vr, &rb, &c);
        }
        fill(sb.p, rm_size, me, rm_key(v, it));
        memset(rb.p, RM_POISON, rm_size);
        if (d == 0 || peer >= np)
            continue;
        CHK(MPI_Irecv(rb.p, (int)rm_size, MPI_BYTE, peer, RM_TAG, MPI_COMM_WORLD, &rq[0]));
        CHK(MPI_Isend(sb.p, (int)rm_size, MPI_BYTE, peer, RM_TAG, MPI_COMM_WORLD, &rq[1]));
        CHK(MPI_Waitall(2, rq, st));
        recvs[0]++;
        expect_status(&st[0], peer, RM_TAG, MPI_BYTE, rm_size, "%s iteration %d", vr->name, it);
        size_t at = find_bad(rb.p, rm_size, peer, rm_key(v, it));
        if (at != (size_t)-1) {
            char what[128], msg[512];
            rm_what(what, sizeof what, rb.p, at, peer, v, it);
            snprintf(msg, sizeof msg,
                     "%s iteration %d from rank %d: payload byte %zu of %zu is 0x%02x, expected 0x%02x (%s; "
                     "send buffer %p, receive buffer %p)",
                     vr->name, it, peer, at, rm_size, rb.p[at], pat(peer, rm_key(v, it), at), what,
                     (void *)sb.p, (void *)rb.p);
            if (!rm_keep_going)
                FAIL("%s", msg);
            if (bad++ == 0) /* the first wrong transfer of the variant, in FAIL's form */
                fprintf(stderr, "FAIL rank %d/%d case %s (%s:%d): %s\n", me, np, tcase, __FILE__, __LINE__, msg);
        }
    }
    rm_release(&sb);
    rm_release(&rb);
    recvs[1] = bad;
    CHK(MPI_Allreduce(recvs, allrecvs, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    allbad = allrecvs[1];
    CHK(MPI_Allreduce(&c, &tot, 3, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    if (me == 0) {
        printf("variant %s: %s: %ld of %ld receives of %zu bytes wrong (%d iterations, %.2f s)\n", vr->name,
               allbad ? "WRONG DATA" : "every byte right", allbad, allrecvs[0], rm_size, rm_iters, now() - t0);
        if (vr->how == RM_MALLOC)
            printf("NOTE: %s: free unmapped the buffer %ld of %ld times, malloc returned the same address %ld "
                   "times\n", vr->name, tot.unmapped, tot.remaps, tot.reused);
        fflush(stdout);
    }
    return allbad;
}

static int rm_find(const char *name)
{
    for (int v = 0; rm_variants[v].name; v++)
        if (strcmp(rm_variants[v].name, name) == 0)
            return v;
    return -1;
}

static void case_one(void)
{
    (void)rm_variant(rm_find(tcase));
}

static void case_all(void)
{
    char failed[256] = "";
    rm_keep_going = 1;
    for (int v = 0; rm_variants[v].name; v++)
        if (rm_variant(v))
            snprintf(failed + strlen(failed), sizeof failed - strlen(failed), " %s", rm_variants[v].name);
    rm_keep_going = 0;
    while (rm_nparked > 0)
        rm_release(&rm_parked[--rm_nparked]);
    if (*failed)
        FAIL("wrong data in variant(s):%s", failed);
}

static size_t rm_parse_size(const char *s)
{
    char *end;
    unsigned long long x = strtoull(s, &end, 10);
    if (*end == 'K' || *end == 'k')
        x <<= 10, end++;
    else if (*end == 'M' || *end == 'm')
        x <<= 20, end++;
    if (end == s || *end || x < 1 || x > INT32_MAX) {
        fprintf(stderr, "remap: size %s: bytes (K or M suffix), 1 to 2 GiB\n", s);
        exit(2);
    }
    return (size_t)x;
}

int main(int argc, char **argv)
{
    static const struct tcase cases[] = {
        {"control", case_one},     {"munmap", case_one},      {"munmap_send", case_one},
        {"munmap_recv", case_one}, {"dontneed", case_one},    {"malloc", case_one},
        {"malloc_mmap", case_one}, {"all", case_all},         {NULL, NULL},
    };
    rm_page = (size_t)sysconf(_SC_PAGESIZE);
    if (argc > 2)
        rm_size = rm_parse_size(argv[2]);
    if (argc > 3 && (rm_iters = atoi(argv[3])) < 2) {
        fprintf(stderr, "remap: iterations %s: at least 2\n", argv[3]);
        return 2;
    }
    init(&argc, &argv);
    return run_cases(argc, argv, cases);
}
