// SPDX-License-Identifier: BSD-3-Clause
/* spawn.c - dynamic processes: MPI_Comm_spawn of 2 children either works
 * (then parent and children exchange checked messages across the
 * intercommunicator, merge it, reduce, disconnect) or returns an MPI error
 * (MPI_ERRORS_RETURN), which is reported in a NOTE line: never a crash or
 * a hang. Usage: spawn spawn (the children run as: spawn child). */
#include "common.h"

#define NCHILD 2

static void exchange(MPI_Comm inter, int parent_side)
{
    int lr, rs;
    MPI_Comm_rank(inter, &lr);
    MPI_Comm_remote_size(inter, &rs);
    static const size_t ns[] = {8, 65537, 1u << 20};
    unsigned char *sb = xmalloc((1u << 20)), *rb = xmalloc((1u << 20) + 16);
    for (int i = 0; i < 3; i++)
        for (int p = 0; p < rs; p++) {
            MPI_Status st;
            MPI_Request r;
            int key = 10 * i + (parent_side ? 1 : 2);
            fill(sb, ns[i], lr, key);
            CHK(MPI_Isend(sb, (int)ns[i], MPI_BYTE, p, i, inter, &r));
            CHK(MPI_Recv(rb, (int)ns[i] + 16, MPI_BYTE, p, i, inter, &st));
            CHK(MPI_Wait(&r, MPI_STATUS_IGNORE));
            expect_status(&st, p, i, MPI_BYTE, ns[i], "%s: from remote rank %d", parent_side ? "parent" : "child", p);
            expect_bytes(rb, ns[i], p, 10 * i + (parent_side ? 2 : 1), "%s: from remote rank %d",
                         parent_side ? "parent" : "child", p);
        }
    MPI_Comm merged;
    int one = 1, sum = 0;
    CHK(MPI_Intercomm_merge(inter, !parent_side, &merged));
    CHK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, merged));
    int ms;
    MPI_Comm_size(merged, &ms);
    EXPECT(sum == ms, "Allreduce over parents and children: %d, expected %d", sum, ms);
    CHK(MPI_Comm_free(&merged));
    free(sb);
    free(rb);
}

int main(int argc, char **argv)
{
    init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    if (argc > 1 && strcmp(argv[1], "child") == 0) {
        MPI_Comm parent;
        tcase = "spawn (child)";
        CHK(MPI_Comm_get_parent(&parent));
        EXPECT(parent != MPI_COMM_NULL, "child: MPI_Comm_get_parent gave MPI_COMM_NULL");
        MPI_Comm_set_errhandler(parent, MPI_ERRORS_RETURN);
        exchange(parent, 0);
        CHK(MPI_Comm_disconnect(&parent));
        CHK(MPI_Finalize());
        return 0;
    }
    if (argc < 2 || strcmp(argv[1], "spawn") != 0) {
        fprintf(stderr, "usage: %s spawn\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    tcase = "spawn";
    MPI_Comm inter, parent;
    int errs[NCHILD];
    char *cargv[] = {"child", NULL};
    CHK(MPI_Comm_get_parent(&parent));
    EXPECT(parent == MPI_COMM_NULL, "MPI_Comm_get_parent is not MPI_COMM_NULL in a job that was not spawned");
    double t0 = now();
    int rc = MPI_Comm_spawn(argv[0], cargv, NCHILD, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, errs);
    if (rc != MPI_SUCCESS) {
        char s[MPI_MAX_ERROR_STRING];
        int l, cls;
        MPI_Error_class(rc, &cls);
        MPI_Error_string(rc, s, &l);
        if (me == 0) printf("NOTE: MPI_Comm_spawn returned an error after %.1f s: class %d: %s\n", now() - t0, cls, s);
    } else {
        for (int i = 0; i < NCHILD; i++) EXPECT(errs[i] == MPI_SUCCESS, "spawn: child %d error code %d", i, errs[i]);
        MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
        exchange(inter, 1);
        CHK(MPI_Comm_disconnect(&inter));
        if (me == 0)
            printf("NOTE: MPI_Comm_spawn of %d children worked (%.1f s); messages across, merge and "
                   "disconnect checked\n", NCHILD, now() - t0);
    }
    CHK(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0) printf("case spawn: passed on %d ranks\n", np);
    CHK(MPI_Finalize());
    return 0;
}
