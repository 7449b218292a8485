// SPDX-License-Identifier: BSD-3-Clause
/* test_fastpath.c - each fast path of the engine (docs/engine-design.md,
 * "Fast paths") against the generated machine.
 *
 * A fast path takes a transition whose outcome it knows without running
 * the machine (bfo__fsm_shortcut) and carries out the action itself.  Every
 * scenario of tests/fastpath_run.h runs twice: here, with the fast paths,
 * and in fastpath_slow.c, compiled with BFO_NO_FAST_PATH, where the same
 * transitions are the machine's steps.  The records must be the same:
 * every step the trace hook saw (machine, request, from, event, to, result,
 * actions), every frame on the wire, every request's final state, status
 * and envelope, the bytes received, the engines' counters and their done
 * queues.  And each fast path must have been taken for every such
 * transition the machine made (counted through BFO_SHORTCUT_HOOK), so a
 * fast path that silently stopped applying fails too.  One test per fast
 * path, named after its transition.
 */
#include <stdio.h>

struct bfo_machine;
static void fp_seen(const struct bfo_machine *m, int from, int event, int to);
#define BFO_SHORTCUT_HOOK(m, from, event, to) fp_seen(m, from, event, to)

#include "bfo_test.h"

#define FP_RUN fp_run_fast
#include "fastpath_run.h"

int fp_run_slow_extern(int scenario, fp_log *log);

static const char *const fp_names[FP_NSCENARIOS] = {
    "posted first", "unexpected", "empty", "truncated", "wildcard", "self",
    "failed completions", "lost", "ring full", "done queue", "credits",
    "sync and cancel", "untraced",
};

typedef struct fp_transition {
    int machine, from, event, to, action;
    long seen; /* shortcuts taken in the run under way */
} fp_transition;

static fp_transition fp_paths[] = {
    { BFO_MACHINE_SEND, BFO_SEND_ST_IDLE, BFO_EV_EAGER_CHOSEN, BFO_SEND_ST_MATCH_SENT,
      BFO_SEND_ACT_POST_MATCH, 0 },
    { BFO_MACHINE_SEND, BFO_SEND_ST_MATCH_SENT, BFO_EV_MATCH_DELIVERED, BFO_SEND_ST_COMPLETE,
      BFO_SEND_ACT_COMPLETE, 0 },
    { BFO_MACHINE_RECV, BFO_RECV_ST_POSTED, BFO_EV_MATCH_RCVD, BFO_RECV_ST_COMPLETE,
      BFO_RECV_ACT_DELIVER_MATCH, 0 },
};
#define FP_NPATHS (sizeof fp_paths / sizeof fp_paths[0])
static long fp_unknown; /* shortcuts of no transition above */

static void fp_seen(const struct bfo_machine *m, int from, int event, int to)
{
    for (size_t i = 0; i < FP_NPATHS; i++)
        if (fp_paths[i].machine == m->id && fp_paths[i].from == from &&
            fp_paths[i].event == event && fp_paths[i].to == to) {
            fp_paths[i].seen++;
            return;
        }
    fp_unknown++;
}

static const bfo_machine *fp_machine(int id)
{
    return id == BFO_MACHINE_SEND ? &bfo_send_machine
           : id == BFO_MACHINE_RECV ? &bfo_recv_machine
                                    : &bfo_rail_machine;
}

/* The first difference of two records, said in words; 0 when none. */
static int fp_differ(const fp_log *a, const fp_log *b, char *why, size_t n)
{
    int steps = a->nsteps < b->nsteps ? a->nsteps : b->nsteps;
    for (int i = 0; i < steps; i++)
        if (memcmp(&a->steps[i], &b->steps[i], sizeof a->steps[i])) {
            const fp_step *x = &a->steps[i], *y = &b->steps[i];
            snprintf(why, n, "step %d: fast %s %d: %s --%s--> %s (%u actions), machine %s %d: %s --%s--> %s (%u actions)",
                     i, fp_machine(x->machine)->name, x->obj,
                     bfo_fsm_state_name(fp_machine(x->machine), x->from), bfo_event_name(x->event),
                     bfo_fsm_state_name(fp_machine(x->machine), x->to), x->n_actions,
                     fp_machine(y->machine)->name, y->obj,
                     bfo_fsm_state_name(fp_machine(y->machine), y->from), bfo_event_name(y->event),
                     bfo_fsm_state_name(fp_machine(y->machine), y->to), y->n_actions);
            return 1;
        }
    if (a->nsteps != b->nsteps || a->overflow != b->overflow) {
        snprintf(why, n, "%d steps traced with the fast paths, %d by the machines", a->nsteps, b->nsteps);
        return 1;
    }
    if (a->frames != b->frames || a->wire_hash != b->wire_hash) {
        snprintf(why, n, "the wire: %llu frames with the fast paths, %llu by the machines (or their bytes differ)",
                 (unsigned long long)a->frames, (unsigned long long)b->frames);
        return 1;
    }
    for (int i = 0; i < FP_NREQ; i++) {
        if (memcmp(&a->send[i], &b->send[i], sizeof a->send[i])) {
            snprintf(why, n, "send %d: status %d, cs %d with the fast paths; status %d, cs %d by the machines",
                     i, a->send[i].status, a->send[i].cs, b->send[i].status, b->send[i].cs);
            return 1;
        }
        if (memcmp(&a->recv[i], &b->recv[i], sizeof a->recv[i])) {
            snprintf(why, n, "receive %d: status %d, cs %d, length %llu with the fast paths; status %d, cs %d, length %llu by the machines",
                     i, a->recv[i].status, a->recv[i].cs, (unsigned long long)a->recv[i].length,
                     b->recv[i].status, b->recv[i].cs, (unsigned long long)b->recv[i].length);
            return 1;
        }
    }
    if (memcmp(a->rbuf, b->rbuf, sizeof a->rbuf)) {
        snprintf(why, n, "the bytes received differ");
        return 1;
    }
    for (int k = 0; k < 2; k++)
        if (memcmp(&a->stats[k], &b->stats[k], sizeof a->stats[k])) {
            snprintf(why, n, "engine %d: the counters (bfo_stats) differ", k);
            return 1;
        }
    if (memcmp(a, b, sizeof *a)) {
        snprintf(why, n, "the pools in use, the posted receives or the done queues differ");
        return 1;
    }
    return 0;
}

/* Every scenario, with and without the fast paths: the same record, and
 * the fast path for this transition taken each time the machine made it. */
static void test_fast_path(void **state)
{
    fp_transition *t = (fp_transition *)*state;
    static fp_log fast, slow;
    long total = 0;
    char why[512];
    for (int sc = 0; sc < FP_NSCENARIOS; sc++) {
        long machine_made = 0;
        for (size_t i = 0; i < FP_NPATHS; i++)
            fp_paths[i].seen = 0;
        fp_unknown = 0;
        assert_int_equal(fp_run_fast(sc, &fast), 0);
        assert_int_equal(fp_run_slow_extern(sc, &slow), 0);
        if (fp_differ(&fast, &slow, why, sizeof why))
            fail_msg("scenario \"%s\": %s", fp_names[sc], why);
        assert_int_equal(fast.overflow, 0);
        assert_int_equal(fp_unknown, 0);
        for (int i = 0; i < slow.nsteps; i++)
            machine_made += slow.steps[i].machine == t->machine && slow.steps[i].from == t->from &&
                            slow.steps[i].event == t->event;
        if (sc != FP_UNTRACED && t->seen != machine_made)
            fail_msg("scenario \"%s\": the machine made this transition %ld times, the fast path took it %ld",
                     fp_names[sc], machine_made, t->seen);
        total += t->seen;
    }
    assert_true(total > 0);
}

/* The fast paths name real transitions: each is the spec's (the
 * generated machine takes `event` from `from` to `to` with that one
 * action). */
static void test_fast_paths_are_spec_transitions(void **state)
{
    (void)state;
    for (size_t i = 0; i < FP_NPATHS; i++) {
        const fp_transition *t = &fp_paths[i];
        bfo_step st;
        int cs = t->from;
        memset(&st, 0, sizeof st);
        assert_int_equal(bfo_fsm_step(fp_machine(t->machine), &cs, t->event, &st), BFO_OK);
        assert_int_equal(cs, t->to);
        assert_int_equal(st.n_actions, 1);
        assert_int_equal(st.actions[0], t->action);
    }
}

int main(void)
{
    test_list list = { 0 };
    test_list_add(&list, test_fast_paths_are_spec_transitions, NULL,
                  "every fast path is a transition of the spec, with its one action");
    for (size_t i = 0; i < FP_NPATHS; i++) {
        const fp_transition *t = &fp_paths[i];
        const bfo_machine *m = fp_machine(t->machine);
        test_list_add(&list, test_fast_path, &fp_paths[i],
                      "fast path %s: %s --%s--> %s / %s: the machine's state, trace and effects in %d scenarios",
                      m->name, bfo_fsm_state_name(m, t->from), bfo_event_name(t->event),
                      bfo_fsm_state_name(m, t->to), m->action_names[t->action], FP_NSCENARIOS);
    }
    return test_list_run(&list, "fastpath");
}
