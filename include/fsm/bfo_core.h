// SPDX-License-Identifier: BSD-3-Clause
/* bfo_core.h - error codes, the step record and the one function every
 * transition of every bfo state machine passes through.
 *
 * Part of bfo (see bfo.h).  No allocation, no I/O: the caller owns every byte.
 *
 * The base of the headers' layering (bfo.h, HEADERS): this header and
 * bfo_le.h include nothing of bfo's, and the generated headers of gen/
 * build on them; the other headers of include/fsm/ build on gen/.  Nothing
 * here may include a gen/ header, directly or through another header:
 * tests/check_layers.py (make check-layers, part of make check) fails
 * when one does.
 */
#ifndef BFO_CORE_H
#define BFO_CORE_H

#include <stddef.h>
#include <stdint.h>

/* gen/ is locked to these headers: the generated machines and codec use
 * bfo_machine, bfo_fsm_step and bfo_le.h as they are here.  Every generated
 * header that builds on them compares the BFO_GEN_ABI its generator wrote
 * (gen/bfo_alphabet.h) with this, and a gen/ made by a generator for other
 * headers (vendored from another version, or not regenerated after a
 * change to that contract) stops the build there rather than compiling into
 * something subtly wrong.  Bump this together with GEN_ABI in
 * tools/bfo_gen.py.  2: bfo_machine has n_events, and the check moved from
 * here into gen/ (this header no longer includes gen/bfo_alphabet.h). */
#define BFO_GEN_ABI_REQUIRED 2

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * Compile-time options (define before including any bfo header)
 * ------------------------------------------------------------------------
 * BFO_MAX_ACTIONS   most actions one transition may emit (default 4).  The
 *                   generated machines assert at compile time that they fit.
 *                   Raising it is safe; lowering it below what the spec
 *                   needs fails the build with a message.
 *                   It sets the size of bfo_step (a layout: see bfo_abi in
 *                   bfo_engine.h).
 * BFO_NO_TRACE      define to compile the trace hook out of bfo_fsm_step
 *                   (no layout changes).
 * BFO_NO_FAST_PATH  define to compile the engine's fast paths out
 *                   (docs/engine-design.md, "Fast paths"): every transition
 *                   is then the generated machine's step (no layout changes).
 */
#ifndef BFO_MAX_ACTIONS
#define BFO_MAX_ACTIONS 4
#endif

/* Compile-time assertion usable at file scope in C11 and C++11. */
#ifdef __cplusplus
#define BFO_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define BFO_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif

/* ------------------------------------------------------------------------
 * Error codes: named, stable, negative.  New codes get new numbers; a
 * number is never reused.  bfo_strerror() and bfo_errname() read this table.
 * ------------------------------------------------------------------------ */
#define BFO_ERRORS(X)                                                          \
    X(BFO_OK, 0, "success")                                                    \
    X(BFO_ERR_ILLEGAL_EVENT, -1, "event not allowed in the machine's state")   \
    X(BFO_ERR_BAD_EVENT, -2, "not an event of the bfo alphabet")               \
    X(BFO_ERR_BAD_STATE, -3, "not a state of this machine")                    \
    X(BFO_ERR_TRUNCATED, -10, "frame shorter than its header")                 \
    X(BFO_ERR_BAD_TYPE, -11, "unknown fragment type")                          \
    X(BFO_ERR_BAD_FLAGS, -12, "flag bit not defined for this fragment type")   \
    X(BFO_ERR_BAD_FIELD, -13, "reserved field not zero or field out of range") \
    X(BFO_ERR_BAD_LENGTH, -14, "frame length does not match its header")       \
    X(BFO_ERR_NO_SPACE, -15, "buffer too small for the encoded header")       \
    X(BFO_ERR_PEER_UNREACHABLE, -20, "no rail to the peer is left")            \
    X(BFO_ERR_TRUNCATE, -21, "message larger than the receive buffer")        \
    X(BFO_ERR_AGAIN, -22, "no buffer now: offer the frame again later")       \
    X(BFO_ERR_NO_MEMORY, -23, "memory given to the engine is too small")      \
    X(BFO_ERR_INVALID, -24, "invalid argument")                               \
    X(BFO_ERR_PROTOCOL, -25, "frame breaks the protocol: dropped and counted") \
    X(BFO_ERR_STALE, -26, "frame names a finished request or an old restart") \
    X(BFO_ERR_ABI, -27, "caller and library built with other layouts (BFO_MAX_RAILS, ...)") \
    X(BFO_ERR_CANCELLED, -28, "the request was cancelled: nothing of it was matched")    \
    X(BFO_ERR_TOO_LATE, -29, "too late to cancel: it matched, or some of it left") \
    X(BFO_ERR_PEER_LEFT, -30, "the peer left (its BYE): it takes nothing more")           \
    X(BFO_ERR_LEFT, -31, "this side left (bfo_engine_leave): nothing more goes out") \
    X(BFO_ERR_PROC_FAILED, -32, "the peer's process failed (reported dead: bfo_peer_failed)") \
    X(BFO_ERR_PROC_FAILED_PENDING, -33, "a process failed that bfo_failure_ack has not acknowledged: no ANY_SOURCE receive until it is") \
    X(BFO_ERR_REVOKED, -34, "the request's context was revoked (bfo_revoke): nothing more is matched on it")

enum bfo_error {
#define BFO__ERR_ENUM(name, num, text) name = num,
    BFO_ERRORS(BFO__ERR_ENUM)
#undef BFO__ERR_ENUM
};

/* Name of an error code ("BFO_ERR_ILLEGAL_EVENT"), or "BFO_ERR_UNKNOWN". */
static inline const char *bfo_errname(int err)
{
    switch (err) {
#define BFO__ERR_NAME(name, num, text) case num: return #name;
    BFO_ERRORS(BFO__ERR_NAME)
#undef BFO__ERR_NAME
    default: return "BFO_ERR_UNKNOWN";
    }
}

/* One-line description of an error code. */
static inline const char *bfo_strerror(int err)
{
    switch (err) {
#define BFO__ERR_TEXT(name, num, text) case num: return text;
    BFO_ERRORS(BFO__ERR_TEXT)
#undef BFO__ERR_TEXT
    default: return "unknown error";
    }
}

/* ------------------------------------------------------------------------
 * Machines and steps
 * ------------------------------------------------------------------------ */
enum bfo_machine_id {
    BFO_MACHINE_SEND = 1, /* send request, bfo_send_* (gen/bfo_send.h) */
    BFO_MACHINE_RECV = 2, /* receive request, bfo_recv_* (gen/bfo_recv.h) */
    BFO_MACHINE_RAIL = 3, /* one rail seen from one peer, bfo_rail_* */
    BFO_MACHINE_CONN = 4, /* one transport connection, bfo_conn_* (gen/bfo_conn.h): run by
                           * the transports (backends/bfo_link.h), never by the engine;
                           * its events are its own (BFO_CONN_EV_*) */
    BFO_MACHINE_PEER = 5, /* one other process, bfo_peer_* (gen/bfo_peer.h): run by the
                           * engine; its events are its own (BFO_PEER_EV_*) */
    BFO_MACHINE_AGREE = 6 /* one rank's part in one agreement of a group, bfo_agree_*
                           * (gen/bfo_agree.h): run by the group code (bfo_group.h), never
                           * by the engine; its events are its own (BFO_AGREE_EV_*) */
};

struct bfo_step;
struct bfo_machine;

/* The trace hook: called once for every step, legal or refused, after the
 * machine's state has been updated.  `step` says what happened: a copy of
 * the caller's step record, valid during the call.  Tell the machines apart
 * by machine->id: each translation unit has its own copy of the machine
 * descriptors, so their addresses differ between files. */
typedef void (*bfo_trace_fn)(void *user, const struct bfo_machine *machine,
                             const struct bfo_step *step);

typedef struct bfo_tracer {
    bfo_trace_fn fn;
    void *user;
} bfo_tracer;

/* A step record: the caller sets `trace` and `obj` (both optional) and keeps
 * the record around; each bfo_<machine>_step() call fills the rest.  The
 * actions are the machine's output: the caller carries them out in order. */
typedef struct bfo_step {
    const bfo_tracer *trace;  /* in: hook to call, or NULL */
    const void *obj;          /* in: the request or rail, shown to the hook */
    int from;                 /* out: state before the event */
    int to;                   /* out: state after (== from when refused) */
    int event;                /* out: the event fed */
    int result;               /* out: BFO_OK or a BFO_ERR_* code */
    unsigned n_actions;       /* out: number of actions emitted */
    uint8_t actions[BFO_MAX_ACTIONS]; /* out: BFO_<M>_ACT_* in order */
} bfo_step;

/* What the generated code tells the core about one machine. */
typedef int (*bfo__exec_fn)(int cs, unsigned char event, bfo_step *out);

/* Facts the caller computes from its counters (bfo_machine.waits): a state
 * has the bit when it has a transition on that event. */
#define BFO_WAITS_DRAINED 1       /* BFO_EV_DRAINED */
#define BFO_WAITS_ALL_DELIVERED 2 /* BFO_EV_ALL_DELIVERED */

typedef struct bfo_machine {
    int id;                         /* BFO_MACHINE_* */
    const char *name;               /* "send", "recv", "rail" */
    int n_states;                   /* valid states are 1 .. n_states-1 */
    int n_events;                   /* valid events are 1 .. n_events-1 (BFO_EV_COUNT;
                                     * the conn machine's own, BFO_CONN_EV_COUNT) */
    int start;                      /* the state bfo_<m>_init() sets */
    const char *const *state_names; /* [n_states]; [0] is "(none)" */
    const char *const *action_names;/* indexed by BFO_<M>_ACT_* */
    const unsigned char *final;     /* [n_states]: 1 if the state is final */
    const unsigned char *waits;     /* [n_states]: BFO_WAITS_* facts the state takes */
    bfo__exec_fn exec;              /* Ragel's machine, one event */
} bfo_machine;

/* Emits one action into the step record.  Called from the generated
 * machines only; the generator proves at build time that a transition
 * never emits more than BFO_MAX_ACTIONS. */
static inline void bfo__emit(bfo_step *out, int action)
{
    if (out->n_actions < BFO_MAX_ACTIONS)
        out->actions[out->n_actions++] = (uint8_t)action;
}

/* Calls the hook with a copy of the record: the caller's record then never
 * escapes, so an inlined bfo_fsm_step keeps it in registers and the caller
 * dispatches the actions straight from the machine's transition.  A traced
 * step pays for the copy. */
static inline void bfo__trace_step(const bfo_machine *m, const bfo_step *out)
{
    bfo_step seen = *out;
    seen.trace->fn(seen.trace->user, m, &seen);
}

/* Every transition of every machine passes through here.
 * Returns BFO_OK, or
 *   BFO_ERR_BAD_EVENT      event is not in the alphabet (1 .. m->n_events-1,
 *                          BFO_EV_COUNT of gen/bfo_alphabet.h) (state unchanged)
 *   BFO_ERR_BAD_STATE      *cs is not a state of the machine (state unchanged)
 *   BFO_ERR_ILLEGAL_EVENT  the spec has no transition for (state, event)
 *                          (state unchanged, no action emitted)
 * In every case `out` is filled and the trace hook, if any, is called. */
static inline int bfo_fsm_step(const bfo_machine *m, int *cs, int event,
                               bfo_step *out)
{
    int from = *cs, to = from, result = BFO_OK;

    out->n_actions = 0;
    if (event <= 0 || event >= m->n_events) {
        result = BFO_ERR_BAD_EVENT;
    } else if (from <= 0 || from >= m->n_states) {
        result = BFO_ERR_BAD_STATE;
    } else {
        to = m->exec(from, (unsigned char)event, out);
        if (to <= 0) { /* Ragel's error state: no such transition */
            to = from;
            out->n_actions = 0;
            result = BFO_ERR_ILLEGAL_EVENT;
        }
    }
    *cs = to;
    out->from = from;
    out->to = to;
    out->event = event;
    out->result = result;
#ifndef BFO_NO_TRACE
    if (out->trace && out->trace->fn)
        bfo__trace_step(m, out);
#endif
    return result;
}

/* The other way a transition passes: a fast path's (docs/engine-design.md,
 * "Fast paths").  The caller knows, without running the machine, that
 * `event` takes state `from` (which *cs holds) to `to`, emitting the one
 * action `action`; it sets the state and calls the trace hook, if any,
 * with the record bfo_fsm_step would have made, then carries the action
 * out itself as it would after bfo_fsm_step.  Only the transitions
 * docs/engine-design.md names come here; tests/test_fastpath.c runs each
 * fast path next to the generated machine (BFO_NO_FAST_PATH) and compares
 * states, traces and effects.  BFO_SHORTCUT_HOOK, when defined, sees each
 * one (the tests count them). */
static inline void bfo__fsm_shortcut(const bfo_machine *m, int *cs, int from, int event, int to,
                                     int action, const bfo_tracer *trace, const void *obj)
{
    *cs = to;
#ifdef BFO_SHORTCUT_HOOK
    BFO_SHORTCUT_HOOK(m, from, event, to);
#endif
#ifndef BFO_NO_TRACE
    if (trace && trace->fn) {
        bfo_step st;
        st.trace = trace;
        st.obj = obj;
        st.from = from;
        st.to = to;
        st.event = event;
        st.result = BFO_OK;
        st.n_actions = 1;
        for (unsigned i = 1; i < BFO_MAX_ACTIONS; i++)
            st.actions[i] = 0;
        st.actions[0] = (uint8_t)action;
        bfo__trace_step(m, &st);
    }
#else
    (void)m, (void)from, (void)event, (void)action, (void)trace, (void)obj;
#endif
}

/* Would the machine take `event` in `state`?  Runs the step on a copy and
 * throws the result away; the engine uses it to feed facts (DRAINED,
 * ALL_DELIVERED) only to machines that wait for them. */
static inline int bfo_fsm_accepts(const bfo_machine *m, int state, int event)
{
    bfo_step scratch;
    scratch.n_actions = 0;
    if (event <= 0 || event >= m->n_events || state <= 0 ||
        state >= m->n_states)
        return 0;
    return m->exec(state, (unsigned char)event, &scratch) > 0;
}

/* Name of a state of machine m, or "(invalid)". */
static inline const char *bfo_fsm_state_name(const bfo_machine *m, int state)
{
    return (state > 0 && state < m->n_states) ? m->state_names[state]
                                               : "(invalid)";
}

/* 1 if the state is final (every transition out of it is a self-loop). */
static inline int bfo_fsm_is_final(const bfo_machine *m, int state)
{
    return state > 0 && state < m->n_states && m->final[state];
}

#ifdef __cplusplus
}
#endif
#endif /* BFO_CORE_H */
