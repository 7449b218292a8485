// SPDX-License-Identifier: BSD-3-Clause
/* errors.c - MPI_ERRORS_RETURN on MPI_COMM_WORLD: wrong calls return the
 * right error class and change nothing (invalid rank, tag, count,
 * communicator; a message longer than its receive, eager and rendezvous,
 * blocking, nonblocking and in Waitall); bytes past a truncated receive's
 * buffer stay untouched; then a correct program still works (every pair
 * exchanges checked messages, a ring, an Allreduce). */
#include "common.h"

#define EXPECT_CLASS(call, cls)                                                \
    do {                                                                       \
        int rc_ = (call), c_ = -1;                                             \
        if (rc_ != MPI_SUCCESS) MPI_Error_class(rc_, &c_);                     \
        EXPECT(rc_ != MPI_SUCCESS && c_ == (cls), "%s: returned %d (class %d), expected class %s (%d)", \
               #call, rc_, c_, #cls, (cls));                                   \
    } while (0)

static void correct_program(const char *after)
{
    /* every pair, both ways, 8 B and 1 MiB */
    static const size_t ns[] = {8, 1u << 20};
    unsigned char *sb = xmalloc(1u << 20), *rb = xmalloc((1u << 20) + 16);
    for (int i = 0; i < 2; i++)
        for (int s = 1; s < np; s++) {
            int to = (me + s) % np, from = (me + np - s) % np;
            MPI_Status st;
            fill(sb, ns[i], me, 40 + i);
            CHK(MPI_Sendrecv(sb, (int)ns[i], MPI_BYTE, to, 40, rb, (int)ns[i] + 16, MPI_BYTE, from, 40, MPI_COMM_WORLD, &st));
            expect_status(&st, from, 40, MPI_BYTE, ns[i], "after %s: %zu B from %d", after, ns[i], from);
            expect_bytes(rb, ns[i], from, 40 + i, "after %s: %zu B from %d", after, ns[i], from);
        }
    int one = me + 1, sum = 0;
    CHK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    EXPECT(sum == np * (np + 1) / 2, "after %s: Allreduce %d", after, sum);
    free(sb);
    free(rb);
}

static void case_errors(void)
{
    MPI_Errhandler eh;
    unsigned char b[64];
    int *ub, flag;
    MPI_Request r;
    CHK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
    EXPECT(eh == MPI_ERRORS_RETURN, "the error handler of MPI_COMM_WORLD is not MPI_ERRORS_RETURN");
    MPI_Errhandler_free(&eh);
    CHK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag));
    EXPECT(flag && *ub >= 32767, "MPI_TAG_UB %d (flag %d), must be at least 32767", flag ? *ub : -1, flag);
    memset(b, 0, sizeof b);
    /* invalid arguments: checked before anything is sent */
    EXPECT_CLASS(MPI_Send(b, 8, MPI_BYTE, np, 1, MPI_COMM_WORLD), MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Send(b, 8, MPI_BYTE, -5, 1, MPI_COMM_WORLD), MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Recv(b, 8, MPI_BYTE, np + 3, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Isend(b, 8, MPI_BYTE, (me + 1) % np, -3, MPI_COMM_WORLD, &r), MPI_ERR_TAG);
    if (*ub < 0x7fffffff)
        EXPECT_CLASS(MPI_Send(b, 8, MPI_BYTE, (me + 1) % np, *ub + 1, MPI_COMM_WORLD), MPI_ERR_TAG);
    EXPECT_CLASS(MPI_Send(b, -1, MPI_BYTE, (me + 1) % np, 1, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Send(b, 8, MPI_BYTE, (me + 1) % np, 1, MPI_COMM_NULL), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Send(b, 8, MPI_DATATYPE_NULL, (me + 1) % np, 1, MPI_COMM_WORLD), MPI_ERR_TYPE);
    correct_program("invalid arguments");
    /* the largest tag works */
    {
        int to = (me + 1) % np, from = (me + np - 1) % np;
        MPI_Status st;
        fill(b, 16, me, 5);
        CHK(MPI_Sendrecv(b, 16, MPI_BYTE, to, *ub, b + 16, 40, MPI_BYTE, from, *ub, MPI_COMM_WORLD, &st));
        expect_status(&st, from, *ub, MPI_BYTE, 16, "message with tag MPI_TAG_UB (%d)", *ub);
        expect_bytes(b + 16, 16, from, 5, "message with tag MPI_TAG_UB");
    }
    /* truncation: receive count too small; blocking, Irecv+Wait, and
     * in Waitall next to a good receive; eager and rendezvous */
    static const size_t ts[] = {100, 65537, 1u << 20};
    unsigned char *sb = xmalloc(1u << 20), *rb = xmalloc(1024 + 16), *ok = xmalloc(100);
    int nts = 3;
    if (pml_known_bug("truncate_rndv_overrun")) {
        nts = 1;
        if (me == 0)
            printf("NOTE: pml %s: truncation checked for an eager message only; a truncated rendezvous "
                   "message overruns the receive buffer (known bug of this PML)\n", pml_name());
    }
    int nhow = 3;
    if (pml_known_bug("waitall_pending_freed")) {
        nhow = 2;
        if (me == 0)
            printf("NOTE: pml %s: truncation in MPI_Waitall next to a good receive not checked: a pending "
                   "request is freed (known bug of this PML)\n", pml_name());
    }
    for (int i = 0; i < nts; i++)
        for (int how = 0; how < nhow; how++) {
            int to = (me + 1) % np, from = (me + np - 1) % np, tag = 50 + i * 3 + how;
            MPI_Request sr[2], rr[2];
            MPI_Status st[2];
            size_t n = ts[i], rn = n > 1024 ? 1024 : 10;
            fill(sb, n, me, tag);
            memset(rb, SENTINEL, 1024 + 16);
            CHK(MPI_Isend(sb, (int)n, MPI_BYTE, to, tag, MPI_COMM_WORLD, &sr[0]));
            CHK(MPI_Isend(sb, 100, MPI_BYTE, to, tag + 100, MPI_COMM_WORLD, &sr[1]));
            if (how == 0) {
                EXPECT_CLASS(MPI_Recv(rb, (int)rn, MPI_BYTE, from, tag, MPI_COMM_WORLD, &st[0]), MPI_ERR_TRUNCATE);
            } else if (how == 1) {
                CHK(MPI_Irecv(rb, (int)rn, MPI_BYTE, from, tag, MPI_COMM_WORLD, &rr[0]));
                EXPECT_CLASS(MPI_Wait(&rr[0], &st[0]), MPI_ERR_TRUNCATE);
            } else {
                CHK(MPI_Irecv(ok, 100, MPI_BYTE, from, tag + 100, MPI_COMM_WORLD, &rr[1]));
                CHK(MPI_Irecv(rb, (int)rn, MPI_BYTE, from, tag, MPI_COMM_WORLD, &rr[0]));
                EXPECT_CLASS(MPI_Waitall(2, rr, st), MPI_ERR_IN_STATUS);
                int c0 = -1;
                MPI_Error_class(st[0].MPI_ERROR, &c0);
                EXPECT(c0 == MPI_ERR_TRUNCATE, "Waitall: the truncated receive's status.MPI_ERROR has class %d", c0);
                /* the other is MPI_SUCCESS, or MPI_ERR_PENDING if Waitall
                 * returned before it completed (then it is still active) */
                EXPECT(st[1].MPI_ERROR == MPI_SUCCESS || st[1].MPI_ERROR == MPI_ERR_PENDING,
                       "Waitall: the good receive's status.MPI_ERROR is %d", st[1].MPI_ERROR);
                if (st[1].MPI_ERROR == MPI_ERR_PENDING) {
                    EXPECT(rr[1] != MPI_REQUEST_NULL, "Waitall: a pending request was freed");
                    CHK(MPI_Wait(&rr[1], &st[1]));
                }
                expect_status(&st[1], from, tag + 100, MPI_BYTE, 100, "the good receive next to a truncated one");
                expect_bytes(ok, 100, from, tag, "the good receive next to a truncated one");
            }
            if (how < 2) CHK(MPI_Recv(ok, 100, MPI_BYTE, from, tag + 100, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            expect_untouched(rb + rn, 1024 + 16 - rn, "past a truncated receive of %zu B into %zu B", n, rn);
            /* the sender's side completes (its status says nothing) */
            CHK(MPI_Waitall(2, sr, MPI_STATUSES_IGNORE));
            CHK(MPI_Barrier(MPI_COMM_WORLD));
        }
    correct_program("truncated receives");
    free(sb);
    free(rb);
    free(ok);
}

int main(int argc, char **argv)
{
    static const struct tcase cases[] = {{"errors", case_errors}, {NULL, NULL}};
    init(&argc, &argv);
    return run_cases(argc, argv, cases);
}
