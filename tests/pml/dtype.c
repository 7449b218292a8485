// SPDX-License-Identifier: BSD-3-Clause
/* dtype.c - derived datatypes through the PML: vector, indexed (blocks out
 * of order), struct with gaps, resized, contiguous of vector, subarray, a
 * large (24 MiB payload) vector, receives with a different but matching
 * type map, a partial element (MPI_Get_count MPI_UNDEFINED); and "big":
 * one message of more than INT_MAX bytes.
 * Each datatype is described here a second time, by hand, as the list of
 * its (offset, length) blocks in type-map order; the test fills and checks
 * buffers through that list, never through MPI. */
#include "common.h"

struct blk {
    size_t off, len;
};

struct lay {              /* count elements of one datatype */
    const char *name;
    MPI_Datatype t;
    struct blk *b;         /* blocks of the whole message, type-map order */
    size_t nb;
    size_t span;           /* bytes from buf to the end of the last element */
    size_t bytes;          /* payload bytes */
    int count;             /* elements */
    int nbasic;            /* basic elements in one element */
};

/* the blocks of one element, repeated count times at the extent */
static void lay_make(struct lay *L, const char *name, MPI_Datatype t, int count, const struct blk *eb,
                     size_t neb, size_t extent, int nbasic)
{
    L->name = name;
    L->t = t;
    L->count = count;
    L->nbasic = nbasic;
    L->nb = neb * (size_t)count;
    L->b = xmalloc(sizeof(struct blk) * L->nb);
    L->bytes = 0;
    L->span = 0;
    for (int i = 0; i < count; i++)
        for (size_t j = 0; j < neb; j++) {
            struct blk *b = &L->b[i * neb + j];
            b->off = (size_t)i * extent + eb[j].off;
            b->len = eb[j].len;
            L->bytes += b->len;
            if (b->off + b->len > L->span) L->span = b->off + b->len;
        }
    if ((size_t)count * extent > L->span) L->span = (size_t)count * extent;
    int tsize;
    MPI_Aint lb, ext;
    CHK(MPI_Type_size(t, &tsize));
    CHK(MPI_Type_get_extent(t, &lb, &ext));
    EXPECT((size_t)tsize * count == L->bytes, "%s: MPI_Type_size %d x %d, the blocks say %zu B", name,
           tsize, count, L->bytes);
    EXPECT(lb == 0 && (size_t)ext == extent, "%s: extent %ld (lb %ld), expected %zu", name, (long)ext,
           (long)lb, extent);
}

/* a buffer for L: the payload of (src, key) in its blocks, filler between */
static unsigned char *lay_image(const struct lay *L, int src, int key, int filler)
{
    unsigned char *p = xmalloc(L->span + 64);
    memset(p, filler, L->span + 64);
    size_t k = 0;
    unsigned char *tmp = NULL;
    size_t tl = 0;
    for (size_t i = 0; i < L->nb; i++) {
        /* pattern bytes k .. k+len of the packed stream */
        if (L->b[i].len + 8 > tl) {
            free(tmp);
            tl = L->b[i].len + 8;
            tmp = xmalloc(tl + 8);
        }
        size_t a = k & ~(size_t)7;
        /* fill() makes bytes from index 0; build bytes a.. then shift */
        for (size_t w = 0; w * 8 < (k - a) + L->b[i].len; w++) {
            uint64_t x = pat_word(src, key, a / 8 + w);
            memcpy(tmp + w * 8, &x, 8);
        }
        memcpy(p + L->b[i].off, tmp + (k - a), L->b[i].len);
        k += L->b[i].len;
    }
    free(tmp);
    return p;
}

static void lay_check(const struct lay *L, const unsigned char *got, int src, int key, const char *what)
{
    unsigned char *exp = lay_image(L, src, key, SENTINEL);
    if (memcmp(exp, got, L->span + 64) != 0) {
        size_t i = 0;
        while (exp[i] == got[i]) i++;
        const char *where = "a gap (must stay untouched)";
        for (size_t j = 0; j < L->nb; j++)
            if (i >= L->b[j].off && i < L->b[j].off + L->b[j].len) where = "payload";
        FAIL("%s: receive type %s: byte at offset %zu (%s) is 0x%02x, expected 0x%02x", what, L->name, i,
             where, got[i], exp[i]);
    }
    free(exp);
}

/* send with S, receive with R (same type signature), every way */
static void xfer(const struct lay *S, const struct lay *R, int tag)
{
    char what[200];
    snprintf(what, sizeof what, "send %d x %s, receive %d x %s", S->count, S->name, R->count, R->name);
    EXPECT(S->bytes == R->bytes, "%s: the test's layouts differ in size", what);
    unsigned char *sb = lay_image(S, me, tag, 0x5A);
    unsigned char *rb = xmalloc(R->span + 64);
    MPI_Status st;
    int peer = me ^ 1, c = -1;
    MPI_Count el = -1;
    for (int way = 0; way < 3; way++) {
        int to = way == 0 ? me : peer, from = to;
        static const char *wn[] = {"to self", "Sendrecv with the peer", "Isend/Irecv with the peer"};
        if (to >= np) continue;
        memset(rb, SENTINEL, R->span + 64);
        if (way < 2) {
            CHK(MPI_Sendrecv(sb, S->count, S->t, to, tag, rb, R->count, R->t, from, tag, MPI_COMM_WORLD, &st));
        } else {
            MPI_Request rq[2];
            MPI_Status sts[2];
            CHK(MPI_Irecv(rb, R->count, R->t, from, tag, MPI_COMM_WORLD, &rq[0]));
            CHK(MPI_Isend(sb, S->count, S->t, to, tag, MPI_COMM_WORLD, &rq[1]));
            CHK(MPI_Waitall(2, rq, sts));
            st = sts[0];
        }
        EXPECT(st.MPI_SOURCE == from && st.MPI_TAG == tag, "%s %s: status source %d tag %d", what, wn[way],
               st.MPI_SOURCE, st.MPI_TAG);
        CHK(MPI_Get_count(&st, R->t, &c));
        EXPECT(c == R->count, "%s %s: MPI_Get_count %d, expected %d", what, wn[way], c, R->count);
        CHK(MPI_Get_elements_x(&st, R->t, &el));
        EXPECT(el == (MPI_Count)R->count * R->nbasic, "%s %s: MPI_Get_elements_x %lld, expected %lld", what,
               wn[way], (long long)el, (long long)R->count * R->nbasic);
        char w2[260];
        snprintf(w2, sizeof w2, "%s %s", what, wn[way]);
        lay_check(R, rb, from, tag, w2);
    }
    free(sb);
    free(rb);
}

static void lay_free(struct lay *L) { free(L->b); }

static void case_types(void)
{
    /* counts: one element, a few, and enough for about 1 MiB */
    MPI_Datatype vec, idx, st0, st, rsz0, rsz, vs, cv, sub, big, dbl2, stp0, stp, d3;
    /* vector: 5 blocks of 3 ints, stride 7 */
    CHK(MPI_Type_vector(5, 3, 7, MPI_INT, &vec));
    CHK(MPI_Type_commit(&vec));
    struct blk vec_b[5];
    for (int i = 0; i < 5; i++) vec_b[i] = (struct blk){(size_t)i * 28, 12};
    /* indexed, blocks listed out of address order */
    int ibl[3] = {3, 1, 4}, idsp[3] = {6, 0, 10};
    CHK(MPI_Type_indexed(3, ibl, idsp, MPI_INT, &idx));
    CHK(MPI_Type_commit(&idx));
    struct blk idx_b[3] = {{24, 12}, {0, 4}, {40, 16}};
    /* struct with gaps: char @0, double @8, int @16, extent 24 */
    int sbl[3] = {1, 1, 1};
    MPI_Aint sdsp[3] = {0, 8, 16};
    MPI_Datatype sty[3] = {MPI_CHAR, MPI_DOUBLE, MPI_INT};
    CHK(MPI_Type_create_struct(3, sbl, sdsp, sty, &st0));
    CHK(MPI_Type_create_resized(st0, 0, 24, &st));
    CHK(MPI_Type_commit(&st));
    struct blk st_b[3] = {{0, 1}, {8, 8}, {16, 4}};
    /* the same signature packed: char @0, double @1, int @9, extent 13 */
    MPI_Aint pdsp[3] = {0, 1, 9};
    CHK(MPI_Type_create_struct(3, sbl, pdsp, sty, &stp0));
    CHK(MPI_Type_create_resized(stp0, 0, 13, &stp));
    CHK(MPI_Type_commit(&stp));
    struct blk stp_b[3] = {{0, 1}, {1, 8}, {9, 4}};
    /* resized: vector(2,1,2) of int (extent 12) resized to extent 20 */
    CHK(MPI_Type_vector(2, 1, 2, MPI_INT, &rsz0));
    CHK(MPI_Type_create_resized(rsz0, 0, 20, &rsz));
    CHK(MPI_Type_commit(&rsz));
    struct blk rsz_b[2] = {{0, 4}, {8, 4}};
    /* contiguous of vector: 4 x vector(3 blocks of 2 shorts, stride 4) */
    CHK(MPI_Type_vector(3, 2, 4, MPI_SHORT, &vs));
    CHK(MPI_Type_contiguous(4, vs, &cv));
    CHK(MPI_Type_commit(&cv));
    struct blk cv_b[12];
    for (int j = 0; j < 4; j++)
        for (int i = 0; i < 3; i++) cv_b[j * 3 + i] = (struct blk){(size_t)j * 20 + i * 8, 4};
    /* subarray: 30 x 40 of a 100 x 100 doubles, at (5, 7), C order */
    int gs[2] = {100, 100}, ss[2] = {30, 40}, so[2] = {5, 7};
    CHK(MPI_Type_create_subarray(2, gs, ss, so, MPI_ORDER_C, MPI_DOUBLE, &sub));
    CHK(MPI_Type_commit(&sub));
    struct blk sub_b[30];
    for (int r = 0; r < 30; r++) sub_b[r] = (struct blk){((size_t)(r + 5) * 100 + 7) * 8, 320};
    /* contiguous doubles, in pairs (the receive side of a vector) */
    CHK(MPI_Type_contiguous(2, MPI_DOUBLE, &dbl2));
    CHK(MPI_Type_commit(&dbl2));
    struct blk dbl2_b[1] = {{0, 16}};
    struct blk short_b[1] = {{0, 2}}, dbl_b[1] = {{0, 8}}, int_b[1] = {{0, 4}};

    struct lay S, R;
    static const int counts[] = {1, 7, 3000};
    for (int ci = 0; ci < 3; ci++) {
        int n = counts[ci], tag = 10 * ci + 1000 * ci;
        lay_make(&S, "vector(5,3,7,int)", vec, n, vec_b, 5, 124, 15);
        xfer(&S, &S, tag + 1);
        lay_make(&R, "int", MPI_INT, n * 15, int_b, 1, 4, 1);
        xfer(&S, &R, 50 + tag + 1);
        lay_free(&S);
        lay_free(&R);
        lay_make(&S, "indexed({3,1,4},{6,0,10},int)", idx, n, idx_b, 3, 56, 8);
        xfer(&S, &S, tag + 2);
        lay_make(&R, "int", MPI_INT, n * 8, int_b, 1, 4, 1);
        xfer(&S, &R, 50 + tag + 2);
        xfer(&R, &S, 50 + tag + 3);
        lay_free(&S);
        lay_free(&R);
        lay_make(&S, "struct{char,double,int} with gaps", st, n * 10, st_b, 3, 24, 3);
        xfer(&S, &S, tag + 3);
        lay_make(&R, "struct{char,double,int} packed", stp, n * 10, stp_b, 3, 13, 3);
        xfer(&S, &R, tag + 4);
        xfer(&R, &S, tag + 5);
        lay_free(&S);
        lay_free(&R);
        lay_make(&S, "resized(vector(2,1,2,int),extent 20)", rsz, n * 10, rsz_b, 2, 20, 2);
        xfer(&S, &S, tag + 6);
        lay_make(&R, "int", MPI_INT, n * 20, int_b, 1, 4, 1);
        xfer(&R, &S, 50 + tag + 6);
        lay_free(&S);
        lay_free(&R);
        lay_make(&S, "contiguous(4,vector(3,2,4,short))", cv, n, cv_b, 12, 80, 24);
        xfer(&S, &S, tag + 7);
        lay_make(&R, "short", MPI_SHORT, n * 24, short_b, 1, 2, 1);
        xfer(&S, &R, tag + 8);
        xfer(&R, &S, tag + 9);
        lay_free(&S);
        lay_free(&R);
        if (ci < 2) {
            lay_make(&S, "subarray(30x40 of 100x100 double)", sub, n, sub_b, 30, 80000, 1200);
            xfer(&S, &S, 100 + ci);
            lay_make(&R, "contiguous(2,double)", dbl2, n * 600, dbl2_b, 1, 16, 2);
            xfer(&S, &R, 102 + ci);
            xfer(&R, &S, 104 + ci);
            lay_free(&S);
            lay_free(&R);
        }
        CHK(MPI_Barrier(MPI_COMM_WORLD));
    }
    /* large: vector of 1M blocks of 3 doubles, stride 5 (24 MiB of payload
     * in 40 MiB), received as plain doubles and as itself */
    {
        int nblk = 1 << 20;
        CHK(MPI_Type_vector(nblk, 3, 5, MPI_DOUBLE, &big));
        CHK(MPI_Type_commit(&big));
        struct blk *bb = xmalloc(sizeof(struct blk) * nblk);
        for (int i = 0; i < nblk; i++) bb[i] = (struct blk){(size_t)i * 40, 24};
        lay_make(&S, "vector(1M,3,5,double)", big, 1, bb, nblk, ((size_t)(nblk - 1) * 5 + 3) * 8, 3 * nblk);
        xfer(&S, &S, 200);
        lay_make(&R, "double", MPI_DOUBLE, 3 * nblk, dbl_b, 1, 8, 1);
        xfer(&S, &R, 201);
        xfer(&R, &S, 202);
        lay_free(&S);
        lay_free(&R);
        free(bb);
        MPI_Type_free(&big);
    }
    /* a partial element: 10 doubles into contiguous(3,double) elements */
    {
        CHK(MPI_Type_contiguous(3, MPI_DOUBLE, &d3));
        CHK(MPI_Type_commit(&d3));
        double s[10], r[15];
        MPI_Status stt;
        int c, e;
        int peer = (me + 1) % np, from = (me + np - 1) % np;
        fill(s, sizeof s, me, 300);
        memset(r, SENTINEL, sizeof r);
        CHK(MPI_Sendrecv(s, 10, MPI_DOUBLE, peer, 300, r, 5, d3, from, 300, MPI_COMM_WORLD, &stt));
        CHK(MPI_Get_count(&stt, d3, &c));
        EXPECT(c == MPI_UNDEFINED, "10 doubles into contiguous(3,double): MPI_Get_count %d, expected "
               "MPI_UNDEFINED", c);
        CHK(MPI_Get_elements(&stt, d3, &e));
        EXPECT(e == 10, "10 doubles into contiguous(3,double): MPI_Get_elements %d, expected 10", e);
        CHK(MPI_Get_count(&stt, MPI_DOUBLE, &c));
        EXPECT(c == 10, "MPI_Get_count(MPI_DOUBLE) %d, expected 10", c);
        expect_bytes(r, sizeof s, from, 300, "10 doubles into contiguous(3,double)");
        expect_untouched((unsigned char *)r + sizeof s, sizeof r - sizeof s, "past 10 doubles");
        MPI_Type_free(&d3);
    }
    MPI_Type_free(&vec);
    MPI_Type_free(&idx);
    MPI_Type_free(&st0);
    MPI_Type_free(&st);
    MPI_Type_free(&stp0);
    MPI_Type_free(&stp);
    MPI_Type_free(&rsz0);
    MPI_Type_free(&rsz);
    MPI_Type_free(&vs);
    MPI_Type_free(&cv);
    MPI_Type_free(&sub);
    MPI_Type_free(&dbl2);
}

/* ---- big: one message of more than INT_MAX bytes: count x extent past
 * 2^31 with a contiguous type of 1 KiB; rank 0 -> 1, then 1 -> 0; the
 * other ranks watch. PMLT_BIG_KIB sets the count (default 2,200,000, that
 * is 2.05 GiB). ---- */
static void case_big(void)
{
    int count = env_int("PMLT_BIG_KIB", 2200000);
    size_t n = (size_t)count * 1024;
    MPI_Datatype kib;
    CHK(MPI_Type_contiguous(1024, MPI_BYTE, &kib));
    CHK(MPI_Type_commit(&kib));
    if (me < 2) {
        int peer = 1 - me;
        unsigned char *b = malloc(n);
        if (!b) FAIL("cannot allocate %zu B", n);
        for (int dir = 0; dir < 2; dir++) {
            int sender = dir == 0 ? 0 : 1;
            double t0 = now();
            if (me == sender) {
                fill(b, n, me, 77 + dir);
                CHK(MPI_Send(b, count, kib, peer, 77 + dir, MPI_COMM_WORLD));
                printf("NOTE: %zu B (%s INT_MAX) sent %d -> %d in %.1f s\n", n, n > 2147483647u ? ">" : "<=",
                       me, peer, now() - t0);
            } else {
                MPI_Status st;
                int c;
                MPI_Count el;
                memset(b, SENTINEL, n);
                CHK(MPI_Recv(b, count, kib, peer, 77 + dir, MPI_COMM_WORLD, &st));
                EXPECT(st.MPI_SOURCE == peer && st.MPI_TAG == 77 + dir, "big: status source %d tag %d",
                       st.MPI_SOURCE, st.MPI_TAG);
                CHK(MPI_Get_count(&st, kib, &c));
                EXPECT(c == count, "big: MPI_Get_count %d, expected %d", c, count);
                CHK(MPI_Get_elements_x(&st, MPI_BYTE, &el));
                EXPECT(el == (MPI_Count)n, "big: MPI_Get_elements_x(MPI_BYTE) %lld, expected %zu",
                       (long long)el, n);
                expect_bytes(b, n, peer, 77 + dir, "big message of %zu B", n);
            }
        }
        free(b);
    }
    MPI_Type_free(&kib);
}

int main(int argc, char **argv)
{
    static const struct tcase cases[] = {{"types", case_types}, {"big", case_big}, {NULL, NULL}};
    init(&argc, &argv);
    return run_cases(argc, argv, cases);
}
