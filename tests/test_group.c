// SPDX-License-Identifier: BSD-3-Clause
/* test_group.c - groups' agreements and shrink (include/fsm/bfo_group.h):
 * the agree machine's transitions as they happen between engines, in the
 * simulator (sim/bfo_simgroup.h), with processes killed, falsely
 * suspected and cut apart.  Each test is named after the transition or the
 * call it checks; `bfo agree-sim --explore` runs the same at every step.
 */
#include "bfo_test.h"
#include "bfo_simgroup.h"

static sg_scenario base(int ranks)
{
    sg_scenario sc;
    memset(&sc, 0, sizeof sc);
    sc.ranks = ranks;
    sc.rails = 2;
    sc.seed = 11;
    return sc;
}

static uint32_t and_of(int ranks)
{
    uint32_t v = 0xff;
    for (int r = 0; r < ranks; r++)
        v &= sg_value(r);
    return v;
}

/* No failure: every rank returns the AND of every proposal and no failed
 * member; one round decides (heard the same members as "round 0": all). */
static void test_ROUND_SAME_decides_with_every_proposal_when_none_failed(void **state)
{
    sg_scenario sc = base(4);
    sg_result r;
    (void)state;
    assert_true(sg_run(&sc, &r));
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < 4; i++) {
            assert_int_equal(r.rc[i][k], BFO_OK);
            assert_int_equal(r.value[i][k], and_of(4));
            assert_int_equal(r.failed[i][k], 0);
        }
    assert_true(r.decided_own >= 2);          /* at least one per agreement */
    assert_int_equal(r.rounds, 4 * 2);         /* one round each */
}

/* A member decided first: the others take its decision (adopt) rather
 * than finish their round. */
static void test_DECISION_RCVD_adopts_the_first_decision(void **state)
{
    sg_scenario sc = base(5);
    sg_result r;
    (void)state;
    assert_true(sg_run(&sc, &r));
    assert_true(r.adopted > 0);
    assert_int_equal(r.decided_own + r.adopted, 5 * 2);
}

/* A member killed before it proposed: round 1 misses it (ROUND_CHANGED),
 * round 2 hears the same members and decides; every survivor returns it
 * failed, and a value without its proposal. */
static void test_ROUND_CHANGED_when_a_member_died_then_decides_without_it(void **state)
{
    sg_scenario sc = base(3);
    sg_result r;
    (void)state;
    sc.kill[0] = 2 + 1;
    sc.kill_op[0] = 1;
    assert_true(sg_run(&sc, &r));
    assert_false(r.alive[2]);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(r.rc[i][0], BFO_OK);
        assert_int_equal(r.failed[i][0], 1u << 2);
        assert_int_equal(r.value[i][0], sg_value(0) & sg_value(1));
    }
    assert_true(r.rounds >= 2 * 2);
}

/* Two members killed, the second while the survivors are in round 2. */
static void test_ROUND_CHANGED_twice_with_two_deaths(void **state)
{
    sg_scenario sc = base(5);
    sg_result r;
    (void)state;
    sc.kill[0] = 1 + 1;
    sc.kill_op[0] = 1;
    sc.kill[1] = 3 + 1;
    sc.kill_op[1] = 40;
    assert_true(sg_run(&sc, &r));
    for (int i = 0; i < 5; i++) {
        if (!r.alive[i])
            continue;
        assert_int_equal(r.rc[i][1], BFO_OK);
        assert_int_equal(r.failed[i][1], (1u << 1) | (1u << 3));
    }
}

/* Every rank of 3 killed at every step of two agreements: no hang, no
 * disagreement (bfo agree-sim --explore kill, in make check-sim, does the
 * same for more ranks). */
static void test_agree_with_a_death_at_every_step(void **state)
{
    sg_scenario sc = base(3);
    sg_result r;
    uint64_t steps;
    (void)state;
    sg_run(&sc, &r);
    steps = r.ops;
    assert_true(steps > 10);
    for (uint64_t op = 1; op <= steps; op++)
        for (int v = 0; v < 3; v++) {
            sc = base(3);
            sc.kill[0] = v + 1;
            sc.kill_op[0] = op;
            if (!sg_run(&sc, &r))
                fail_msg("rank %d killed at step %d: %s", v, (int)op, r.why);
        }
}

/* A partition between two members (every rail silent both ways), a third
 * reaching both.  The first agreement still ends everywhere: the third
 * heard both, decided, and they took its decision.  In the second, the two
 * cannot hear each other and neither is reported dead, so neither can
 * decide safely (MEMBER_LOST once the grace ran out:
 * BFO_ERR_PEER_UNREACHABLE); each ends itself, and the third decides. */
static void test_MEMBER_LOST_aborts_a_side_of_a_partition(void **state)
{
    sg_scenario sc = base(3);
    sg_result r;
    int lost = -1;
    (void)state;
    sc.cut_a = 0 + 1;
    sc.cut_b = 1 + 1;
    sc.cut_op = 1;
    assert_true(sg_run(&sc, &r));
    assert_true(r.ended >= 1);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(r.rc[i][0], BFO_OK);
        if (r.rc[i][1] == BFO_ERR_PEER_UNREACHABLE)
            lost = i;
    }
    assert_true(lost >= 0);
    assert_false(r.alive[lost]);
    assert_true(r.alive[2]);
    assert_int_equal(r.rc[2][0], BFO_OK);
    assert_int_equal(r.rc[2][1], BFO_OK);
    assert_int_equal(r.value[2][0], and_of(3));
}

/* A live member falsely reported dead: the others fence it and agree
 * without it; it is dead to them, whatever it returns. */
static void test_false_suspicion_is_fenced_and_left_out(void **state)
{
    sg_scenario sc = base(4);
    sg_result r;
    (void)state;
    sc.suspect = 3 + 1;
    sc.suspect_op = 1;
    assert_true(sg_run(&sc, &r));
    for (int i = 0; i < 3; i++) {
        assert_int_equal(r.rc[i][0], BFO_OK);
        assert_int_equal(r.failed[i][0], 1u << 3);
        assert_int_equal(r.value[i][0] & ~(sg_value(0) & sg_value(1) & sg_value(2)), 0);
    }
}

/* bfo_group_shrink after an agreement that found a member failed: every
 * survivor makes the same group without it, and agrees on it again. */
static void test_shrink_makes_the_same_group_of_the_survivors(void **state)
{
    sg_scenario sc = base(4);
    sg_result r;
    (void)state;
    sc.shrink = 1;
    sc.agrees = 3;
    sc.kill[0] = 2 + 1;
    sc.kill_op[0] = 1;
    assert_true(sg_run(&sc, &r));
    for (int i = 0; i < 4; i++) {
        if (i == 2)
            continue;
        assert_int_equal(r.shrunk_n[i], 3);
        for (int k = 1; k < 3; k++) { /* on the shrunk group: no failure left */
            assert_int_equal(r.rc[i][k], BFO_OK);
            assert_int_equal(r.failed[i][k], 0);
            assert_int_equal(r.value[i][k], sg_value(0) & sg_value(1) & sg_value(3));
        }
    }
}

/* A rank that took a member's decision while its own proposals were still
 * out (their MATCH failed on a rail going down, and was posted again) must
 * not start the next agreement before they complete: SENDS_DONE waits for
 * every message of the agreement, proposals too.  Posting a request again
 * while it is in flight lost a sequence number, and the peer waited for it
 * for good (found by bfo agree-sim --random with rail faults). */
static void test_SENDS_DONE_waits_for_proposals_still_out(void **state)
{
    sg_scenario sc = base(4);
    sg_result r;
    static const struct { int what; uint64_t n; } f[4] = {
        { SN_FAULT_RAIL_DOWN, 164 }, { SN_FAULT_RAIL_UP, 184 },
        { SN_FAULT_RAIL_DOWN, 106 }, { SN_FAULT_RAIL_UP, 144 } };
    (void)state;
    sc.seed = 14358684091064683682ull;
    sc.agrees = 3;
    sc.shrink = 1;
    sc.cut_a = 3 + 1; /* ranks 1 and 3 cut apart: both end themselves */
    sc.cut_b = 1 + 1;
    sc.cut_op = 108;
    sc.report_ns = 11000000;
    for (int i = 0; i < 4; i++) {
        memset(&sc.faults[i], 0, sizeof sc.faults[i]);
        sc.faults[i].what = f[i].what;
        sc.faults[i].rail = 0;
        sc.faults[i].n = f[i].n;
    }
    sc.nfaults = 4;
    if (!sg_run(&sc, &r))
        fail_msg("%s", r.why);
    assert_int_equal(r.rc[0][2], BFO_OK);
    assert_int_equal(r.rc[2][2], BFO_OK);
}

/* The calls' errors. */
static void test_group_calls_refuse_bad_arguments(void **state)
{
    static bfo_group g, g2;
    simnet sn;
    bfo_engine e;
    bfo_config c;
    void *mem;
    size_t need;
    const int ranks[3] = { 0, 1, 2 }, twice[3] = { 0, 1, 1 }, without[2] = { 1, 2 },
              out[2] = { 0, 7 };
    (void)state;
    sn_init(&sn, 3, 1, 1);
    memset(&c, 0, sizeof c);
    c.rank = 0;
    c.nranks = 3;
    c.nrails = 1;
    need = bfo_engine_mem_size(&c);
    mem = malloc(need);
    assert_non_null(mem);
    sn.eng[0] = &e;
    assert_int_equal(bfo_engine_init(&e, &c, &sn.be[0], mem, need, sn.now), BFO_OK);
    assert_int_equal(bfo_group_init(&g, &e, 5, twice, 3, 0), BFO_ERR_INVALID);
    assert_int_equal(bfo_group_init(&g, &e, 5, without, 2, 0), BFO_ERR_INVALID); /* not a member */
    assert_int_equal(bfo_group_init(&g, &e, 5, out, 2, 0), BFO_ERR_INVALID);
    assert_int_equal(bfo_group_init(&g, &e, 5 | BFO_GROUP_SYS_CTX, ranks, 3, 0), BFO_ERR_INVALID);
    assert_int_equal(bfo_group_init(&g, &e, 5, ranks, 0, 0), BFO_ERR_INVALID);
    assert_int_equal(bfo_group_init(&g, &e, 5, ranks, 3, 0), BFO_OK);
    assert_int_equal(bfo_group_result(&g, NULL, NULL, 0, NULL), BFO_ERR_INVALID); /* none yet */
    assert_int_equal(bfo_group_shrink(&g, &g2, 6, 0), BFO_ERR_INVALID);
    assert_int_equal(bfo_group_agree(&g, 1, 0), BFO_OK);
    assert_int_equal(bfo_group_agree(&g, 1, 0), BFO_ERR_INVALID); /* one runs */
    assert_int_equal(bfo_group_result(&g, NULL, NULL, 0, NULL), BFO_ERR_AGAIN);
    assert_false(bfo_group_progress(&g, 0));
    assert_true(bfo_group_owns(&g, &g.rreq[1]));
    assert_false(bfo_group_owns(&g, NULL));
    bfo_group_fini(&g, 0);
    sn_free(&sn);
    free(mem);
}

int main(void)
{
    test_list list = { 0 };
#define T(fn, text) test_list_add(&list, fn, NULL, "%s", text)
    T(test_ROUND_SAME_decides_with_every_proposal_when_none_failed,
      "ROUND --ROUND_SAME--> DECIDING: no failure, one round, every proposal");
    T(test_DECISION_RCVD_adopts_the_first_decision, "ROUND --DECISION_RCVD--> DECIDING / adopt");
    T(test_ROUND_CHANGED_when_a_member_died_then_decides_without_it,
      "ROUND --ROUND_CHANGED--> ROUND: a member died before it proposed");
    T(test_ROUND_CHANGED_twice_with_two_deaths, "two deaths: the survivors agree on both");
    T(test_agree_with_a_death_at_every_step, "a death at every step of two agreements, 3 ranks");
    T(test_MEMBER_LOST_aborts_a_side_of_a_partition,
      "ROUND --MEMBER_LOST--> ABORTING --SENDS_DONE--> ABORTED: a side of a partition");
    T(test_false_suspicion_is_fenced_and_left_out, "a false suspicion: fenced, left out");
    T(test_shrink_makes_the_same_group_of_the_survivors, "bfo_group_shrink: the same group everywhere");
    T(test_SENDS_DONE_waits_for_proposals_still_out,
      "DECIDING --SENDS_DONE--> IDLE waits for proposals still out (rail faults)");
    T(test_group_calls_refuse_bad_arguments, "bfo_group_*: BFO_ERR_INVALID for bad arguments");
#undef T
    return test_list_run(&list, "group");
}
