// SPDX-License-Identifier: BSD-3-Clause
/* comm.c - communicators through the PML: Comm_dup (same tag on two
 * communicators, interleaved, must not cross), dup/free in a loop (context
 * ids reused), Comm_split (odd/even, reversed keys), Comm_create from a
 * group, intercommunicators (Intercomm_create, p2p across, Intercomm_merge).
 * Status MPI_SOURCE is always checked in the communicator's own numbering. */
#include "common.h"

#define TAG 5
static int npow2(void)
{
    int p = 1;
    while (p < np) p <<= 1;
    return p;
}

/* every rank of comm sends one message of n bytes to every rank (itself
 * too) and receives from each: status source must be the rank in comm,
 * payload made by the sender's rank in comm under key */
static void all_pairs(MPI_Comm comm, size_t n, int key, const char *what)
{
    int r, sz;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &sz);
    unsigned char *sb = xmalloc(n), *rb = xmalloc((n + 16) * sz);
    MPI_Request *rq = xmalloc(sizeof(*rq) * 2 * sz);
    MPI_Status *st = xmalloc(sizeof(*st) * 2 * sz);
    fill(sb, n, r, key);
    memset(rb, SENTINEL, (n + 16) * sz);
    for (int p = 0; p < sz; p++)
        CHK(MPI_Irecv(rb + (n + 16) * p, (int)n + 16, MPI_BYTE, p, TAG, comm, &rq[p]));
    for (int p = 0; p < sz; p++) CHK(MPI_Isend(sb, (int)n, MPI_BYTE, p, TAG, comm, &rq[sz + p]));
    CHK(MPI_Waitall(2 * sz, rq, st));
    for (int p = 0; p < sz; p++) {
        expect_status(&st[p], p, TAG, MPI_BYTE, n, "%s: from rank %d of %d", what, p, sz);
        expect_bytes(rb + (n + 16) * p, n, p, key, "%s: from rank %d of %d", what, p, sz);
    }
    free(sb);
    free(rb);
    free(rq);
    free(st);
}

static void case_dup(void)
{
    MPI_Comm dup, dup2;
    CHK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    CHK(MPI_Comm_dup(dup, &dup2));
    /* with each peer: 40 messages, same tag, alternating world / dup /
     * dup2; received comm by comm in the opposite order, then with
     * wildcards on dup only */
    enum { K = 42 };
    MPI_Comm cs[3] = {MPI_COMM_WORLD, dup, dup2};
    static const char *cn[3] = {"MPI_COMM_WORLD", "dup", "dup of dup"};
    unsigned char *sb = xmalloc((size_t)K * 65537), *rb = xmalloc(65537 + 16);
    for (int d = 1; d < npow2(); d++) {
        int peer = me ^ d;
        if (peer < np) {
            MPI_Request rq[K];
            for (int k = 0; k < K; k++) {
                size_t n = k % 7 == 6 ? 65537 : 8 + k;
                fill(sb + (size_t)k * 65537, n, me, k);
                CHK(MPI_Isend(sb + (size_t)k * 65537, (int)n, MPI_BYTE, peer, TAG, cs[k % 3], &rq[k]));
            }
            for (int c = 2; c >= 0; c--)
                for (int k = c; k < K; k += 3) {
                    MPI_Status st;
                    size_t n = k % 7 == 6 ? 65537 : 8 + k;
                    if (c == 1) /* wildcards on dup see only dup's messages */
                        CHK(MPI_Recv(rb, 65537 + 16, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, dup, &st));
                    else
                        CHK(MPI_Recv(rb, 65537 + 16, MPI_BYTE, peer, TAG, cs[c], &st));
                    expect_status(&st, peer, TAG, MPI_BYTE, n, "message #%d on %s", k, cn[c]);
                    expect_bytes(rb, n, peer, k, "message #%d on %s (crossed communicators?)", k, cn[c]);
                }
            CHK(MPI_Waitall(K, rq, MPI_STATUSES_IGNORE));
        }
        CHK(MPI_Barrier(MPI_COMM_WORLD));
    }
    /* a probe on dup does not see world's message */
    {
        int flag = 1, peer = (me + 1) % np, from = (me + np - 1) % np;
        MPI_Status st;
        fill(sb, 100, me, 9);
        CHK(MPI_Send(sb, 100, MPI_BYTE, peer, TAG, MPI_COMM_WORLD));
        CHK(MPI_Probe(from, TAG, MPI_COMM_WORLD, &st));
        CHK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, dup, &flag, &st));
        EXPECT(!flag, "Iprobe on a dup sees a message sent on MPI_COMM_WORLD");
        CHK(MPI_Recv(rb, 100, MPI_BYTE, from, TAG, MPI_COMM_WORLD, &st));
        expect_bytes(rb, 100, from, 9, "world message after probing dup");
    }
    all_pairs(dup2, 65537, 3, "dup of dup, all pairs");
    CHK(MPI_Comm_free(&dup2));
    CHK(MPI_Comm_free(&dup));
    /* dup, talk at once (the peer may not have left Comm_dup yet), free;
     * 50 times: freed context ids come back and must start clean */
    for (int i = 0; i < 50; i++) {
        MPI_Comm c;
        CHK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        all_pairs(c, i % 10 == 9 ? 70000 : 16, 100 + i, "dup/free loop");
        CHK(MPI_Comm_free(&c));
    }
}

static void case_split(void)
{
    /* odd/even, reversed keys: rank in sub = members with a larger world rank */
    MPI_Comm sub, one, none;
    CHK(MPI_Comm_split(MPI_COMM_WORLD, me % 2, -me, &sub));
    int sr, ss, expect_r = 0, expect_s = 0;
    for (int r = 0; r < np; r++)
        if (r % 2 == me % 2) {
            expect_s++;
            if (r > me) expect_r++;
        }
    MPI_Comm_rank(sub, &sr);
    MPI_Comm_size(sub, &ss);
    EXPECT(sr == expect_r && ss == expect_s, "Comm_split odd/even reversed: rank %d of %d, expected %d of %d",
           sr, ss, expect_r, expect_s);
    static const size_t ns[] = {0, 8, 65537, 1u << 20};
    for (int i = 0; i < 4; i++) all_pairs(sub, ns[i], 10 + i, "split odd/even reversed");
    /* every rank, reversed: rank np-1-me */
    CHK(MPI_Comm_split(MPI_COMM_WORLD, 0, np - me, &one));
    MPI_Comm_rank(one, &sr);
    EXPECT(sr == np - 1 - me, "Comm_split reversed: rank %d, expected %d", sr, np - 1 - me);
    for (int i = 0; i < 4; i++) all_pairs(one, ns[i], 20 + i, "split all, reversed");
    /* a ring in the reversed numbering: messages go the other way round */
    {
        int to = (sr + 1) % np, from = (sr + np - 1) % np;
        unsigned char b[64], r[80];
        MPI_Status st;
        fill(b, 64, sr, 30);
        CHK(MPI_Sendrecv(b, 64, MPI_BYTE, to, 1, r, 80, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, one, &st));
        expect_status(&st, from, 1, MPI_BYTE, 64, "reversed ring");
        expect_bytes(r, 64, from, 30, "reversed ring");
    }
    /* MPI_UNDEFINED: rank 0 stays out */
    CHK(MPI_Comm_split(MPI_COMM_WORLD, me == 0 ? MPI_UNDEFINED : 1, me, &none));
    if (me == 0)
        EXPECT(none == MPI_COMM_NULL, "Comm_split with MPI_UNDEFINED did not give MPI_COMM_NULL");
    else {
        all_pairs(none, 65537, 40, "split without rank 0");
        CHK(MPI_Comm_free(&none));
    }
    CHK(MPI_Comm_free(&sub));
    CHK(MPI_Comm_free(&one));
}

static void case_create(void)
{
    MPI_Group wg, rg, eg;
    MPI_Comm rc, ec;
    int *ranks = xmalloc(sizeof(int) * np);
    CHK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    for (int i = 0; i < np; i++) ranks[i] = np - 1 - i;
    CHK(MPI_Group_incl(wg, np, ranks, &rg));
    CHK(MPI_Comm_create(MPI_COMM_WORLD, rg, &rc));
    int r;
    MPI_Comm_rank(rc, &r);
    EXPECT(r == np - 1 - me, "Comm_create from the reversed group: rank %d, expected %d", r, np - 1 - me);
    all_pairs(rc, 8, 50, "Comm_create, reversed group");
    all_pairs(rc, 1u << 20, 51, "Comm_create, reversed group");
    /* a group without the last rank; the last gets MPI_COMM_NULL */
    int ex = np - 1;
    CHK(MPI_Group_excl(wg, 1, &ex, &eg));
    CHK(MPI_Comm_create(MPI_COMM_WORLD, eg, &ec));
    if (me == np - 1) {
        EXPECT(ec == MPI_COMM_NULL, "Comm_create: a rank outside the group got a communicator");
    } else {
        all_pairs(ec, 65537, 52, "Comm_create, group without the last rank");
        CHK(MPI_Comm_free(&ec));
    }
    /* and that one's messages on world are not disturbed by it */
    all_pairs(MPI_COMM_WORLD, 65537, 53, "world after Comm_create");
    CHK(MPI_Comm_free(&rc));
    MPI_Group_free(&rg);
    MPI_Group_free(&eg);
    MPI_Group_free(&wg);
    free(ranks);
}

static void case_inter(void)
{
    MPI_Comm local, inter, merged;
    int color = me % 2;
    CHK(MPI_Comm_split(MPI_COMM_WORLD, color, me, &local));
    int lr, ls, rs;
    MPI_Comm_rank(local, &lr);
    MPI_Comm_size(local, &ls);
    /* leaders: world 0 (even group) and world 1 (odd group) */
    CHK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, color ? 0 : 1, 77, &inter));
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    int is;
    CHK(MPI_Comm_test_inter(inter, &is));
    EXPECT(is, "Comm_test_inter: not an intercommunicator");
    CHK(MPI_Comm_remote_size(inter, &rs));
    EXPECT(rs == np / 2 + (color == 0 ? 0 : np % 2), "remote size %d", rs);
    /* p2p across: each local rank sends to every remote rank and receives
     * from each; status source is the remote rank */
    static const size_t ns[] = {0, 8, 65537, 1u << 20};
    for (int i = 0; i < 4; i++) {
        size_t n = ns[i];
        unsigned char *sb = xmalloc(n), *rb = xmalloc((n + 16) * rs);
        MPI_Request *rq = xmalloc(sizeof(*rq) * 2 * rs);
        MPI_Status *st = xmalloc(sizeof(*st) * 2 * rs);
        int key = 60 + i + color * 10;   /* the sender's color */
        fill(sb, n, lr, key);
        for (int p = 0; p < rs; p++) {
            if (i % 2)
                CHK(MPI_Irecv(rb + (n + 16) * p, (int)n + 16, MPI_BYTE, p, TAG + i, inter, &rq[p]));
            else /* ANY_SOURCE across: fill by arrival, checked below */
                CHK(MPI_Irecv(rb + (n + 16) * p, (int)n + 16, MPI_BYTE, MPI_ANY_SOURCE, TAG + i, inter, &rq[p]));
        }
        for (int p = 0; p < rs; p++) CHK(MPI_Isend(sb, (int)n, MPI_BYTE, p, TAG + i, inter, &rq[rs + p]));
        CHK(MPI_Waitall(2 * rs, rq, st));
        int seen = 0;
        for (int p = 0; p < rs; p++) {
            int src = st[p].MPI_SOURCE;
            EXPECT(src >= 0 && src < rs && !(seen & (1 << src)), "intercomm: status source %d (remote size %d)",
                   src, rs);
            seen |= 1 << src;
            if (i % 2) EXPECT(src == p, "intercomm: status source %d, expected %d", src, p);
            expect_status(&st[p], src, TAG + i, MPI_BYTE, n, "intercomm %zu B from remote %d", n, src);
            expect_bytes(rb + (n + 16) * p, n, src, 60 + i + (1 - color) * 10, "intercomm %zu B from remote %d", n,
                         src);
        }
        free(sb);
        free(rb);
        free(rq);
        free(st);
    }
    CHK(MPI_Barrier(inter));
    /* merged: even group first (high = color) */
    CHK(MPI_Intercomm_merge(inter, color, &merged));
    int mr, ms;
    MPI_Comm_rank(merged, &mr);
    MPI_Comm_size(merged, &ms);
    int evens = (np + 1) / 2;
    EXPECT(ms == np && mr == (color ? evens + lr : lr), "Intercomm_merge: rank %d of %d, expected %d of %d", mr,
           ms, color ? evens + lr : lr, np);
    all_pairs(merged, 8, 70, "merged intercommunicator");
    all_pairs(merged, 1u << 20, 71, "merged intercommunicator");
    int sum = 0, one = me;
    CHK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, merged));
    EXPECT(sum == np * (np - 1) / 2, "Allreduce on the merged communicator: %d", sum);
    (void)ls;
    CHK(MPI_Comm_free(&merged));
    CHK(MPI_Comm_free(&inter));
    CHK(MPI_Comm_free(&local));
}

int main(int argc, char **argv)
{
    static const struct tcase cases[] = {{"dup", case_dup},       {"split", case_split},
                                         {"create", case_create}, {"inter", case_inter},
                                         {NULL, NULL}};
    init(&argc, &argv);
    if (np < 2) FAIL("needs at least 2 ranks");
    return run_cases(argc, argv, cases);
}
