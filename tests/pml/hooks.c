// SPDX-License-Identifier: BSD-3-Clause
/* hooks.c - pml/bfo's request lifecycle and failure paths, step by step,
 * through the hooks of its test build (make pml-test; mpi/ompi/
 * pml_bfo_test.h): 2 ranks, rank 0 the subject, rank 1 its partner.
 *
 *   lifecycle  an Irecv and an Isend (64 KiB+1) freed, cancelled, or
 *              cancelled then freed at each step of their completion
 *              (popped, status written, completed): each request is
 *              released exactly once, nothing of its completion runs after
 *              the release, a freed receive still gets its data, the
 *              partner gets the freed send's
 *   msgalloc   MPI_Improbe whose message object cannot be had fails with
 *              an error and loses nothing: the message is then received
 *   start      MPI_Startall of three requests whose second fails to post:
 *              the other two run, the second completes with the error
 *              (MPI_Waitall: MPI_ERR_IN_STATUS), started again it works;
 *              MPI_Start the same
 *   convertor  a pack (send) and an unpack (receive) of a vector type that
 *              fail: the send and the receive end with MPI_ERR_INTERN
 *
 * Only with the test build (tests/pml/run.sh runs it when PML=bfo and
 * BFO_PML_TEST_DIR has it); with the shipped component no hook is ever
 * called and each case says so and fails. */
#include "common.h"
#include "../../mpi/ompi/pml_bfo_test.h"

#define DEADLINE 10.0 /* s: what "never" means here */

/* ---------------------------------------------------------------- hook */

static void *watch;              /* the request watched (an MPI_Request) */
static MPI_Request *watch_h;     /* its handle, for the action */
static int arm_point, arm_action, acted;
static int released, after_release, seen;
#define ACT_FREE 1
#define ACT_CANCEL 2

static int inj_point, inj_nth, inj_calls, inj_fired;

static void inject(int point, int nth)
{
    inj_point = point;
    inj_nth = nth;
    inj_calls = inj_fired = 0;
}

/* called by the test build of pml/bfo (found by dlsym: -rdynamic) */
__attribute__((visibility("default"))) int pml_bfo_test_hook(int point, void *req);
int pml_bfo_test_hook(int point, void *req)
{
    seen = 1;
    if (point >= PML_BFO_HOOK_MSG_ALLOC) {
        if (point == inj_point && ++inj_calls == inj_nth) {
            inj_fired++;
            return 1;
        }
        return 0;
    }
    if (!watch || req != watch)
        return 0;
    if (point == PML_BFO_HOOK_RELEASE) {
        released++;
        return 0;
    }
    if (released)
        after_release++; /* a step of a completion of a released request */
    if (point == arm_point && !acted) {
        acted = 1;
        if (arm_action & ACT_CANCEL)
            CHK(MPI_Cancel(watch_h));
        if (arm_action & ACT_FREE)
            CHK(MPI_Request_free(watch_h));
    }
    return 0;
}

static void need_test_build(void)
{
    CHK(MPI_Barrier(MPI_COMM_WORLD)); /* requests complete: hooks are called */
    if (!seen)
        FAIL("pml_bfo_test_hook was never called: this needs the test build of pml/bfo (make pml-test; "
             "BFO_PML_DIR=build/<cc>/pml-test)");
}

/* ---------------------------------------------------------------- lifecycle */

static const char *point_name(int p)
{
    return p == PML_BFO_HOOK_POPPED ? "popped" : p == PML_BFO_HOOK_STATUS ? "status" : "completed";
}
static const char *action_name(int a)
{
    return a == ACT_FREE ? "free" : a == ACT_CANCEL ? "cancel" : "cancel+free";
}

/* One request of rank 0 (an Irecv when recv, else an Isend), acted on at
 * point; rank 1 is the other end. */
static void lifecycle_one(int recv, int point, int action, int tag)
{
    size_t n = recv ? 8 + (size_t)tag % 300 : 65537;
    unsigned char *buf = xmalloc(n + 16);
    if (me == 0) {
        MPI_Request r;
        MPI_Status st;
        int flag = 0, still_mine = !(action & ACT_FREE);
        char what[128];
        snprintf(what, sizeof what, "%s %s at %s", recv ? "Irecv" : "Isend", action_name(action), point_name(point));
        if (recv) {
            memset(buf, SENTINEL, n + 16);
            CHK(MPI_Irecv(buf, (int)n + 16, MPI_BYTE, 1, tag, MPI_COMM_WORLD, &r));
        } else {
            fill(buf, n, 0, tag);
            CHK(MPI_Isend(buf, (int)n, MPI_BYTE, 1, tag, MPI_COMM_WORLD, &r));
        }
        watch = r;
        watch_h = &r;
        arm_point = point;
        arm_action = action;
        acted = released = after_release = 0;
        double t0 = now();
        /* progress until the request is released: by MPI_Test's free when
         * it is still ours, else by the completion itself */
        while (!released) {
            if (still_mine) {
                CHK(MPI_Test(&r, &flag, &st)); /* completes and frees it, once */
                if (flag) {
                    int c = -1;
                    CHK(MPI_Test_cancelled(&st, &c));
                    EXPECT(!c, "%s: cancelled though it had completed", what);
                    if (recv)
                        expect_status(&st, 1, tag, MPI_BYTE, n, "%s", what);
                    EXPECT(released == 1, "%s: complete and freed but released %d times", what, released);
                }
            } else {
                int f;
                CHK(MPI_Iprobe(1, 32000, MPI_COMM_WORLD, &f, MPI_STATUS_IGNORE));
            }
            if (now() - t0 > DEADLINE)
                FAIL("%s: the request was never released (released %d times, acted %d)", what, released, acted);
        }
        /* nothing of the completion after the release (checked before any
         * other MPI call can take the same request from the free list) */
        EXPECT(after_release == 0, "%s: %d completion steps ran on the request after its release", what,
               after_release);
        EXPECT(acted, "%s: the completion never reached that step", what);
        watch = NULL;
        EXPECT(released == 1, "%s: released %d times", what, released);
        if (recv) {
            expect_bytes(buf, n, 1, tag, "%s", what);
            expect_untouched(buf + n, 16, "%s: past the end", what);
        }
        /* the partner checked what it got; then the next case */
        CHK(MPI_Recv(NULL, 0, MPI_BYTE, 1, 32001, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    } else if (me == 1) {
        MPI_Status st;
        if (recv) {
            fill(buf, n, 1, tag);
            CHK(MPI_Send(buf, (int)n, MPI_BYTE, 0, tag, MPI_COMM_WORLD));
        } else {
            memset(buf, SENTINEL, n + 16);
            CHK(MPI_Recv(buf, (int)n + 16, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &st));
            expect_status(&st, 0, tag, MPI_BYTE, n, "the Isend freed/cancelled at step %d", point);
            expect_bytes(buf, n, 0, tag, "the Isend freed/cancelled at step %d", point);
        }
        CHK(MPI_Send(NULL, 0, MPI_BYTE, 0, 32001, MPI_COMM_WORLD));
    }
    free(buf);
}

static void case_lifecycle(void)
{
    static const int points[] = {PML_BFO_HOOK_POPPED, PML_BFO_HOOK_STATUS, PML_BFO_HOOK_COMPLETED};
    static const int actions[] = {ACT_FREE, ACT_CANCEL, ACT_CANCEL | ACT_FREE};
    int tag = 100;
    need_test_build();
    for (int recv = 1; recv >= 0; recv--)
        for (int p = 0; p < 3; p++)
            for (int a = 0; a < 3; a++)
                lifecycle_one(recv, points[p], actions[a], tag++);
    if (me == 0)
        printf("NOTE: 18 requests freed/cancelled at each step of their completion, each released once\n");
}

/* ---------------------------------------------------------------- msgalloc */

static void case_msgalloc(void)
{
    unsigned char *buf = xmalloc(65537 + 16);
    need_test_build();
    for (int k = 0; k < 2; k++) {
        size_t n = k ? 65537 : 8;
        int tag = 200 + k;
        if (me == 1) {
            fill(buf, n, 1, tag);
            CHK(MPI_Send(buf, (int)n, MPI_BYTE, 0, tag, MPI_COMM_WORLD));
        } else if (me == 0) {
            MPI_Message m = MPI_MESSAGE_NULL;
            MPI_Status st;
            int flag = 0, rc;
            double t0 = now();
            /* the message is here (unexpected) before the failing improbe */
            while (!flag) {
                CHK(MPI_Iprobe(1, tag, MPI_COMM_WORLD, &flag, &st));
                EXPECT(now() - t0 < DEADLINE, "%zu B: the message never came", n);
            }
            inject(PML_BFO_HOOK_MSG_ALLOC, 1);
            flag = 7;
            rc = MPI_Improbe(1, tag, MPI_COMM_WORLD, &flag, &m, &st);
            EXPECT(inj_fired == 1, "%zu B: the injection point was not reached", n);
            inject(0, 0);
            EXPECT(rc != MPI_SUCCESS, "%zu B: MPI_Improbe succeeded without a message object (flag %d)", n, flag);
            EXPECT(m == MPI_MESSAGE_NULL || flag == 0, "%zu B: a failed MPI_Improbe says it matched", n);
            /* nothing lost: the message is still there to be probed and received */
            flag = 0;
            t0 = now();
            while (!flag) {
                CHK(MPI_Improbe(1, tag, MPI_COMM_WORLD, &flag, &m, &st));
                if (now() - t0 > DEADLINE)
                    FAIL("%zu B: the message matched by the MPI_Improbe that failed is lost", n);
            }
            memset(buf, SENTINEL, n + 16);
            CHK(MPI_Mrecv(buf, (int)n + 16, MPI_BYTE, &m, &st));
            expect_status(&st, 1, tag, MPI_BYTE, n, "%zu B after a failed improbe", n);
            expect_bytes(buf, n, 1, tag, "%zu B after a failed improbe", n);
        }
        CHK(MPI_Barrier(MPI_COMM_WORLD));
    }
    free(buf);
}

/* ---------------------------------------------------------------- start */

/* MPI_Testall until done or DEADLINE; returns its code (Open MPI 4.1 says
 * MPI_SUCCESS when only persistent requests failed: their statuses say it) */
static int testall_bounded(int n, MPI_Request *r, MPI_Status *st, const char *what)
{
    int flag = 0, rc;
    double t0 = now();
    for (;;) {
        rc = MPI_Testall(n, r, &flag, st);
        if (flag || (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS))
            return rc;
        if (now() - t0 > DEADLINE)
            FAIL("%s: requests still not complete after %.0f s (started but never posted?)", what, DEADLINE);
    }
}

static void case_start(void)
{
    enum { N = 65537 };
    unsigned char *a = xmalloc(N + 16), *b = xmalloc(N + 16), *c = xmalloc(N + 16);
    need_test_build();
    if (me == 0) {
        MPI_Request r[3];
        MPI_Status st[3];
        int rc;
        CHK(MPI_Recv_init(a, N + 16, MPI_BYTE, 1, 300, MPI_COMM_WORLD, &r[0]));
        CHK(MPI_Send_init(b, N, MPI_BYTE, 1, 301, MPI_COMM_WORLD, &r[1]));
        CHK(MPI_Recv_init(c, N + 16, MPI_BYTE, 1, 302, MPI_COMM_WORLD, &r[2]));
        fill(b, N, 0, 301);
        memset(a, SENTINEL, N + 16);
        memset(c, SENTINEL, N + 16);
        /* Startall: the send (second) fails to post */
        inject(PML_BFO_HOOK_START, 2);
        (void)MPI_Startall(3, r); /* Open MPI 4.1 returns MPI_SUCCESS whatever the PML says */
        EXPECT(inj_fired == 1, "Startall: the injection point was not reached");
        inject(0, 0);
        rc = testall_bounded(3, r, st, "MPI_Startall with its second request failing");
        EXPECT(rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS, "Startall: MPI_Testall returned %d", rc);
        EXPECT(st[1].MPI_ERROR != MPI_SUCCESS && st[1].MPI_ERROR != MPI_ERR_PENDING,
               "Startall: the send that failed to post says %d", st[1].MPI_ERROR);
        EXPECT(st[0].MPI_ERROR == MPI_SUCCESS && st[2].MPI_ERROR == MPI_SUCCESS,
               "Startall: the receives around it say %d and %d", st[0].MPI_ERROR, st[2].MPI_ERROR);
        expect_status(&st[0], 1, 300, MPI_BYTE, N, "Startall, first receive");
        expect_bytes(a, N, 1, 300, "Startall, first receive");
        expect_status(&st[2], 1, 302, MPI_BYTE, N, "Startall, third receive (after the failed send)");
        expect_bytes(c, N, 1, 302, "Startall, third receive (after the failed send)");
        /* MPI_Start alone: returns the error, and the request completes with it */
        inject(PML_BFO_HOOK_START, 1);
        rc = MPI_Start(&r[1]);
        EXPECT(inj_fired == 1, "Start: the injection point was not reached");
        inject(0, 0);
        EXPECT(rc != MPI_SUCCESS, "MPI_Start whose posting failed returned MPI_SUCCESS");
        {
            int flag = 0;
            double t0 = now();
            while (!flag) {
                rc = MPI_Test(&r[1], &flag, MPI_STATUS_IGNORE); /* a persistent one's error */
                EXPECT(now() - t0 < DEADLINE, "MPI_Start failing: the request never completed");
            }
            EXPECT(rc != MPI_SUCCESS, "Start: the request whose posting failed completed with MPI_SUCCESS");
        }
        /* Open MPI's MPI_Test frees a request that ended in error, even a
         * persistent one (ompi_errhandler_request_invoke): made again, it
         * works, and the partner gets the data */
        if (r[1] == MPI_REQUEST_NULL)
            CHK(MPI_Send_init(b, N, MPI_BYTE, 1, 301, MPI_COMM_WORLD, &r[1]));
        CHK(MPI_Start(&r[1]));
        CHK(MPI_Wait(&r[1], MPI_STATUS_IGNORE));
        for (int i = 0; i < 3; i++)
            CHK(MPI_Request_free(&r[i]));
    } else if (me == 1) {
        MPI_Status st;
        fill(a, N, 1, 300);
        fill(c, N, 1, 302);
        CHK(MPI_Send(a, N, MPI_BYTE, 0, 300, MPI_COMM_WORLD));
        CHK(MPI_Send(c, N, MPI_BYTE, 0, 302, MPI_COMM_WORLD));
        memset(b, SENTINEL, N + 16);
        CHK(MPI_Recv(b, N + 16, MPI_BYTE, 0, 301, MPI_COMM_WORLD, &st));
        expect_status(&st, 0, 301, MPI_BYTE, N, "the send started again after its failures");
        expect_bytes(b, N, 0, 301, "the send started again after its failures");
    }
    free(a);
    free(b);
    free(c);
}

/* ---------------------------------------------------------------- convertor */

static void case_convertor(void)
{
    enum { NI = 20000 }; /* ints of a vector with gaps: 80,000 B packed */
    MPI_Datatype vec;
    int *v = xmalloc(sizeof(int) * 2 * NI);
    unsigned char *flat = xmalloc(sizeof(int) * NI);
    int rc, cls;
    need_test_build();
    CHK(MPI_Type_vector(NI, 1, 2, MPI_INT, &vec));
    CHK(MPI_Type_commit(&vec));
    for (int i = 0; i < 2 * NI; i++)
        v[i] = i;
    /* a send whose pack fails: the send ends with MPI_ERR_INTERN */
    if (me == 0) {
        inject(PML_BFO_HOOK_PACK, 1);
        rc = MPI_Send(v, 1, vec, 1, 400, MPI_COMM_WORLD);
        EXPECT(inj_fired == 1, "pack: the injection point was not reached");
        inject(0, 0);
        MPI_Error_class(rc, &cls);
        EXPECT(cls == MPI_ERR_INTERN, "a send whose pack failed returned %d (class %d), not MPI_ERR_INTERN", rc, cls);
    } else if (me == 1) {
        /* what it gets is not what was sent (the engine cannot fail a
         * message from inside pack: docs/mpi.md); only that it arrives */
        CHK(MPI_Recv(flat, (int)sizeof(int) * NI, MPI_BYTE, 0, 400, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
    CHK(MPI_Barrier(MPI_COMM_WORLD));
    /* a receive whose unpack fails: the receive ends with MPI_ERR_INTERN */
    if (me == 1) {
        fill(flat, sizeof(int) * NI, 1, 401);
        CHK(MPI_Send(flat, (int)sizeof(int) * NI, MPI_BYTE, 0, 401, MPI_COMM_WORLD));
    } else if (me == 0) {
        inject(PML_BFO_HOOK_UNPACK, 1);
        rc = MPI_Recv(v, 1, vec, 1, 401, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        EXPECT(inj_fired == 1, "unpack: the injection point was not reached");
        inject(0, 0);
        MPI_Error_class(rc, &cls);
        EXPECT(cls == MPI_ERR_INTERN, "a receive whose unpack failed returned %d (class %d), not MPI_ERR_INTERN", rc,
               cls);
        /* and the next one, unhurt, is right */
    }
    if (me == 1) {
        fill(flat, sizeof(int) * NI, 1, 402);
        CHK(MPI_Send(flat, (int)sizeof(int) * NI, MPI_BYTE, 0, 402, MPI_COMM_WORLD));
    } else if (me == 0) {
        unsigned char *got = xmalloc(sizeof(int) * NI);
        CHK(MPI_Recv(v, 1, vec, 1, 402, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int i = 0; i < NI; i++)
            memcpy(got + sizeof(int) * i, &v[2 * i], sizeof(int));
        expect_bytes(got, sizeof(int) * NI, 1, 402, "a vector receive after the failed one");
        free(got);
    }
    CHK(MPI_Type_free(&vec));
    free(v);
    free(flat);
}

int main(int argc, char **argv)
{
    static const struct tcase cases[] = {{"lifecycle", case_lifecycle},
                                         {"msgalloc", case_msgalloc},
                                         {"start", case_start},
                                         {"convertor", case_convertor},
                                         {NULL, NULL}};
    int provided;
    /* MPI_THREAD_MULTIPLE: the component's lock is real, as in the race */
    CHK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (np != 2)
        FAIL("hooks runs on 2 ranks (%d)", np);
    return run_cases(argc, argv, cases);
}
