// SPDX-License-Identifier: BSD-3-Clause
/* test_verbs_map.c - the verbs backend's mapping of work completions and
 * asynchronous events to what the engine is told (backends/verbs/bfo_verbs_map.h).
 * Needs no libibverbs: the mapping is a pure function of the status. */
#include "bfo_test.h"
#include "bfo_verbs_map.h"

/* Every status the verbs ABI defines, what a send/write/read and what a
 * receive must turn into: the engine's ok, whether the rail is in error
 * (RAIL_ERROR and a flush of the rest), malformed input, the cause. */
static const struct wc_row {
    int status;
    const char *name;
    int op_ok, op_failed, rx_ok, rx_failed, rx_malformed, cause;
} wc_rows[] = {
    { 0, "SUCCESS", 1, 0, 1, 0, 0, BFO_VCAUSE_NONE },
    { 1, "LOC_LEN_ERR", 0, 1, 0, 1, 1, BFO_VCAUSE_LOCAL },
    { 2, "LOC_QP_OP_ERR", 0, 1, 0, 1, 0, BFO_VCAUSE_LOCAL },
    { 3, "LOC_EEC_OP_ERR", 0, 1, 0, 1, 0, BFO_VCAUSE_LOCAL },
    { 4, "LOC_PROT_ERR", 0, 1, 0, 1, 0, BFO_VCAUSE_LOCAL },
    { 5, "WR_FLUSH_ERR", 0, 0, 0, 0, 0, BFO_VCAUSE_FLUSH },
    { 6, "MW_BIND_ERR", 0, 1, 0, 1, 0, BFO_VCAUSE_LOCAL },
    { 7, "BAD_RESP_ERR", 0, 1, 0, 1, 0, BFO_VCAUSE_REMOTE },
    { 8, "LOC_ACCESS_ERR", 0, 1, 0, 1, 0, BFO_VCAUSE_LOCAL },
    { 9, "REM_INV_REQ_ERR", 0, 1, 0, 1, 0, BFO_VCAUSE_REMOTE },
    { 10, "REM_ACCESS_ERR", 0, 1, 0, 1, 0, BFO_VCAUSE_REMOTE },
    { 11, "REM_OP_ERR", 0, 1, 0, 1, 0, BFO_VCAUSE_REMOTE },
    { 12, "RETRY_EXC_ERR", 0, 1, 0, 1, 0, BFO_VCAUSE_PATH },
    { 13, "RNR_RETRY_EXC_ERR", 0, 1, 0, 1, 0, BFO_VCAUSE_PATH },
    { 14, "LOC_RDD_VIOL_ERR", 0, 1, 0, 1, 0, BFO_VCAUSE_LOCAL },
    { 15, "REM_INV_RD_REQ_ERR", 0, 1, 0, 1, 0, BFO_VCAUSE_REMOTE },
    { 16, "REM_ABORT_ERR", 0, 1, 0, 1, 0, BFO_VCAUSE_REMOTE },
    { 17, "INV_EECN_ERR", 0, 1, 0, 1, 0, BFO_VCAUSE_FATAL },
    { 18, "INV_EEC_STATE_ERR", 0, 1, 0, 1, 0, BFO_VCAUSE_FATAL },
    { 19, "FATAL_ERR", 0, 1, 0, 1, 0, BFO_VCAUSE_FATAL },
    { 20, "RESP_TIMEOUT_ERR", 0, 1, 0, 1, 0, BFO_VCAUSE_PATH },
    { 21, "GENERAL_ERR", 0, 1, 0, 1, 0, BFO_VCAUSE_FATAL },
};

static void test_every_wc_status(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof wc_rows / sizeof wc_rows[0]; i++) {
        const struct wc_row *r = &wc_rows[i];
        bfo_verbs_wc_action op = bfo_verbs_map_wc(r->status, 0);
        bfo_verbs_wc_action rx = bfo_verbs_map_wc(r->status, 1);
        printf("   %-20s op ok=%d rail_error=%d | recv frame=%d rail_error=%d malformed=%d | %s\n",
               r->name, op.ok, op.qp_failed, rx.ok, rx.qp_failed, rx.malformed,
               bfo_verbs_cause_name(op.cause));
        assert_string_equal(bfo_verbs_wc_name(r->status), r->name);
        assert_int_equal(op.ok, r->op_ok);
        assert_int_equal(op.qp_failed, r->op_failed);
        assert_int_equal(op.malformed, 0);
        assert_int_equal(op.cause, r->cause);
        assert_int_equal(rx.ok, r->rx_ok);
        assert_int_equal(rx.qp_failed, r->rx_failed);
        assert_int_equal(rx.malformed, r->rx_malformed);
        assert_int_equal(rx.cause, r->cause);
    }
}

/* The rules the engine's guarantees need, over every value an int can
 * bring (beyond the table too): an operation is ok only on SUCCESS; an
 * error is never silent (a non-flush error always puts the rail in error,
 * a flush reports ok=0 and comes from a rail already in error); an
 * unknown status is fatal, not success. */
static void test_no_status_is_lost_or_silent(void **state)
{
    static const int extra[] = { -1, 22, 23, 99, 1000, -2147483647 - 1, 2147483647 };
    (void)state;
    for (int s = -5; s < 64; s++) {
        for (int rx = 0; rx < 2; rx++) {
            bfo_verbs_wc_action a = bfo_verbs_map_wc(s, rx);
            if (s == BFO_VWC_SUCCESS) {
                assert_true(a.ok && !a.qp_failed);
                continue;
            }
            assert_false(a.ok);
            assert_int_not_equal(a.cause, BFO_VCAUSE_NONE);
            if (s == BFO_VWC_WR_FLUSH_ERR)
                assert_false(a.qp_failed);
            else
                assert_true(a.qp_failed);
        }
    }
    for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++) {
        bfo_verbs_wc_action a = bfo_verbs_map_wc(extra[i], 0);
        assert_false(a.ok);
        assert_true(a.qp_failed);
        assert_int_equal(a.cause, BFO_VCAUSE_FATAL);
        assert_string_equal(bfo_verbs_wc_name(extra[i]), "UNKNOWN_WC_STATUS");
    }
}

static const struct ev_row {
    int event;
    const char *name;
    int scope, port_state, permanent;
} ev_rows[] = {
    { 0, "CQ_ERR", BFO_VSCOPE_CQ, 0, 0 },
    { 1, "QP_FATAL", BFO_VSCOPE_QP, 0, 0 },
    { 2, "QP_REQ_ERR", BFO_VSCOPE_QP, 0, 0 },
    { 3, "QP_ACCESS_ERR", BFO_VSCOPE_QP, 0, 0 },
    { 4, "COMM_EST", BFO_VSCOPE_NONE, 0, 0 },
    { 5, "SQ_DRAINED", BFO_VSCOPE_NONE, 0, 0 },
    { 6, "PATH_MIG", BFO_VSCOPE_NONE, 0, 0 },
    { 7, "PATH_MIG_ERR", BFO_VSCOPE_QP, 0, 0 },
    { 8, "DEVICE_FATAL", BFO_VSCOPE_DEVICE, -1, 1 },
    { 9, "PORT_ACTIVE", BFO_VSCOPE_NONE, 1, 0 },
    { 10, "PORT_ERR", BFO_VSCOPE_PORT, -1, 0 },
    { 11, "LID_CHANGE", BFO_VSCOPE_NONE, 0, 0 },
    { 12, "PKEY_CHANGE", BFO_VSCOPE_NONE, 0, 0 },
    { 13, "SM_CHANGE", BFO_VSCOPE_NONE, 0, 0 },
    { 14, "SRQ_ERR", BFO_VSCOPE_NONE, 0, 0 },
    { 15, "SRQ_LIMIT_REACHED", BFO_VSCOPE_NONE, 0, 0 },
    { 16, "QP_LAST_WQE_REACHED", BFO_VSCOPE_NONE, 0, 0 },
    { 17, "CLIENT_REREGISTER", BFO_VSCOPE_NONE, 0, 0 },
    { 18, "GID_CHANGE", BFO_VSCOPE_NONE, 0, 0 },
};

static void test_every_async_event(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof ev_rows / sizeof ev_rows[0]; i++) {
        const struct ev_row *r = &ev_rows[i];
        bfo_verbs_async_action a = bfo_verbs_map_async(r->event);
        assert_string_equal(bfo_verbs_event_name(r->event), r->name);
        assert_int_equal(a.scope, r->scope);
        assert_int_equal(a.port_state, r->port_state);
        assert_int_equal(a.permanent, r->permanent);
    }
    assert_int_equal(bfo_verbs_map_async(19).scope, BFO_VSCOPE_NONE);
    assert_int_equal(bfo_verbs_map_async(-1).scope, BFO_VSCOPE_NONE);
    assert_string_equal(bfo_verbs_event_name(-1), "UNKNOWN_EVENT");
}

/* What the backend feeds the engine for a queue pair that failed: the
 * rail machine, UP, takes RAIL_ERROR (mapped out, BROKEN, reconnect) and
 * then the flushed operations' failures; a second RAIL_ERROR for the same
 * failure changes nothing. */
static void test_rail_error_reaches_the_rail_machine(void **state)
{
    bfo_rail_fsm fsm;
    bfo_step st;
    (void)state;
    bfo_rail_init(&fsm);
    memset(&st, 0, sizeof st);
    assert_int_equal(bfo_rail_step(&fsm, BFO_EV_CONNECTED, &st), BFO_OK);
    memset(&st, 0, sizeof st);
    assert_int_equal(bfo_rail_step(&fsm, BFO_EV_PROBEACK_RCVD, &st), BFO_OK);
    assert_int_equal(fsm.cs, BFO_RAIL_ST_UP);
    /* RETRY_EXC_ERR on a send: the backend reports RAIL_ERROR */
    assert_true(bfo_verbs_map_wc(BFO_VWC_RETRY_EXC_ERR, 0).qp_failed);
    memset(&st, 0, sizeof st);
    assert_int_equal(bfo_rail_step(&fsm, BFO_EV_RAIL_ERROR, &st), BFO_OK);
    assert_int_equal(fsm.cs, BFO_RAIL_ST_FAILED);
    assert_int_equal(st.n_actions, 3);
    assert_int_equal(st.actions[0], BFO_RAIL_ACT_MAP_OUT);
    /* the flush that follows is no second error for the machine */
    assert_false(bfo_verbs_map_wc(BFO_VWC_WR_FLUSH_ERR, 0).qp_failed);
    assert_true(bfo_rail_accepts(fsm.cs, BFO_EV_RAIL_ERROR));
    memset(&st, 0, sizeof st);
    assert_int_equal(bfo_rail_step(&fsm, BFO_EV_RAIL_ERROR, &st), BFO_OK);
    assert_int_equal(fsm.cs, BFO_RAIL_ST_FAILED);
    assert_int_equal(st.n_actions, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_wc_status),
        cmocka_unit_test(test_no_status_is_lost_or_silent),
        cmocka_unit_test(test_every_async_event),
        cmocka_unit_test(test_rail_error_reaches_the_rail_machine),
    };
    return cmocka_run_group_tests_name("verbs_map", tests, NULL, NULL);
}
