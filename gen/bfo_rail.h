/* GENERATED FILE - DO NOT EDIT.
 * The rail (one rail seen from one peer) machine (Ragel -G2) with its names and typed API.
 * Generated from spec/rail.rl, spec/rail_binding.rl, spec/alphabet.tab by tools/bfo_gen.py (run `make gen`).
 * Change the spec and regenerate; `make check-gen` fails when this
 * file is not what the spec generates. */
#ifndef BFO_RAIL_H
#define BFO_RAIL_H

#include "bfo_core.h"

#if !defined(BFO_GEN_STAMP) || BFO_GEN_STAMP != 0x241ca132
#error "gen/bfo_rail.h and gen/bfo_alphabet.h come from different runs of tools/bfo_gen.py (BFO_GEN_STAMP): regenerate with make gen"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* States (numbers are Ragel's: they change when the spec changes). */
enum bfo_rail_state {
    BFO_RAIL_ST_CONNECTING = 1,
    BFO_RAIL_ST_FAILED = 2,
    BFO_RAIL_ST_PROBING = 3,
    BFO_RAIL_ST_UP = 4,
    BFO_RAIL_ST_RECONNECTING = 5,
    BFO_RAIL_ST_RETIRED = 6, /* final */
};
#define BFO_RAIL_NUM_STATES 7 /* states are 1 .. BFO_RAIL_NUM_STATES-1 */

/* Actions: what a transition asks the caller to do, in order. */
enum bfo_rail_action {
    BFO_RAIL_ACT_SEND_PROBE = 1,
    BFO_RAIL_ACT_SEND_PROBEACK = 2,
    BFO_RAIL_ACT_ADMIT = 3,
    BFO_RAIL_ACT_MAP_OUT = 4,
    BFO_RAIL_ACT_SEND_BROKEN = 5,
    BFO_RAIL_ACT_SCHEDULE_RECONNECT = 6,
    BFO_RAIL_ACT_RECONNECT = 7,
    BFO_RAIL_ACT_RETIRE = 8,
};
#define BFO_RAIL_NUM_ACTIONS 9 /* actions are 1 .. BFO_RAIL_NUM_ACTIONS-1 */
#define BFO_RAIL_MAX_ACTIONS 3 /* most actions one transition emits */
BFO_STATIC_ASSERT(BFO_RAIL_MAX_ACTIONS <= BFO_MAX_ACTIONS,
                  "raise BFO_MAX_ACTIONS: a rail transition emits more");

static const char *const bfo_rail__state_names[] = {
    "(none)",
    "CONNECTING",
    "FAILED",
    "PROBING",
    "UP",
    "RECONNECTING",
    "RETIRED",
};
static const char *const bfo_rail__action_names[] = {
    "(none)",
    "send_probe",
    "send_probeack",
    "admit",
    "map_out",
    "send_broken",
    "schedule_reconnect",
    "reconnect",
    "retire",
};
static const unsigned char bfo_rail__final[] = {
    0, 0, 0, 0, 0, 0, 1,
};
/* BFO_WAITS_* facts each state takes */
static const unsigned char bfo_rail__waits[] = {
    0, 0, 0, 0, 0, 0, 0,
};

/* With GCC the exec is inlined wherever the machine is known (bfo_<m>_step,
 * the engine's feeds): a step is on every message's path, and inlined its
 * jumps fold into the caller's checks.  Clang, made to inline this goto
 * graph, spills dozens of values per step: there it stays a call (make
 * bench-engine: eager pair 836 vs 924 with GCC, 1224 vs 1020 with Clang). */
#ifndef BFO__EXEC_INLINE
#if defined(__GNUC__) && !defined(__clang__)
#define BFO__EXEC_INLINE inline __attribute__((always_inline))
#else
#define BFO__EXEC_INLINE inline
#endif
#endif

/* Ragel's -G2 code falls into a state's case label on purpose. */
#ifndef BFO__FALLTHROUGH
#if defined(__cplusplus) && __cplusplus >= 201703L
#define BFO__FALLTHROUGH [[fallthrough]]
#elif defined(__has_attribute)
#if __has_attribute(fallthrough)
#define BFO__FALLTHROUGH __attribute__((fallthrough))
#endif
#endif
#ifndef BFO__FALLTHROUGH
#define BFO__FALLTHROUGH (void)0
#endif
#endif

/* ---- Ragel's output for spec/rail_binding.rl, #line directives removed ---- */

/* rail_binding.rl - binds the rail grammar (rail.rl) to C.
 *
 * Each action emits its own BFO_RAIL_ACT_* into the step record; the engine
 * and the transport carry the actions out.  Nothing here allocates, blocks
 * or does I/O.  tools/bfo_gen.py wraps Ragel's output into gen/bfo_rail.h.
 */
#define BFO_RAIL__EMIT(a) bfo__emit(out, BFO_RAIL_ACT_##a)

static const int bfo_rail_start = 1;

/* Runs the machine on one event from state cs.  Returns the new state, or 0
 * when the spec has no transition for (cs, event).  Inlined wherever the
 * machine is known (BFO__EXEC_INLINE, tools/bfo_gen.py). */
static BFO__EXEC_INLINE int bfo_rail__exec(int cs, unsigned char event, bfo_step *out)
{
    const unsigned char *p = &event;
    const unsigned char *pe = p + 1;
    const unsigned char *eof = 0;

    (void)bfo_rail_start;

	{
	if ( p == pe )
		goto _test_eof;
	switch ( cs )
	{
tr2:
	{ BFO_RAIL__EMIT(SEND_PROBEACK); }
	goto st1;
st1:
	if ( ++p == pe )
		goto _test_eof1;
	BFO__FALLTHROUGH;
case 1:
	switch( (*p) ) {
		case 38u: goto tr0;
		case 41u: goto tr2;
		case 60u: goto tr3;
	}
	if ( 61u <= (*p) && (*p) <= 62u )
		goto tr0;
	goto st0;
st0:
cs = 0;
	goto _out;
tr0:
	{ BFO_RAIL__EMIT(SCHEDULE_RECONNECT); }
	goto st2;
tr5:
	{ BFO_RAIL__EMIT(SEND_BROKEN); }
	goto st2;
tr12:
	{ BFO_RAIL__EMIT(MAP_OUT); }
	{ BFO_RAIL__EMIT(SCHEDULE_RECONNECT); }
	goto st2;
tr15:
	{ BFO_RAIL__EMIT(MAP_OUT); }
	{ BFO_RAIL__EMIT(SEND_BROKEN); }
	{ BFO_RAIL__EMIT(SCHEDULE_RECONNECT); }
	goto st2;
st2:
	if ( ++p == pe )
		goto _test_eof2;
	BFO__FALLTHROUGH;
case 2:
	switch( (*p) ) {
		case 40u: goto tr5;
		case 41u: goto tr6;
		case 60u: goto tr3;
		case 62u: goto st2;
		case 65u: goto tr7;
		case 67u: goto tr8;
	}
	if ( 38u <= (*p) && (*p) <= 46u )
		goto st2;
	goto st0;
tr10:
	{ BFO_RAIL__EMIT(SEND_PROBEACK); }
	goto st3;
tr3:
	{ BFO_RAIL__EMIT(SEND_PROBE); }
	goto st3;
tr6:
	{ BFO_RAIL__EMIT(SEND_PROBEACK); }
	{ BFO_RAIL__EMIT(SEND_PROBE); }
	goto st3;
st3:
	if ( ++p == pe )
		goto _test_eof3;
	BFO__FALLTHROUGH;
case 3:
	switch( (*p) ) {
		case 38u: goto tr0;
		case 41u: goto tr10;
		case 43u: goto tr0;
		case 44u: goto tr11;
		case 46u: goto tr0;
		case 61u: goto st3;
		case 62u: goto tr0;
		case 66u: goto tr0;
	}
	if ( 39u <= (*p) && (*p) <= 45u )
		goto st3;
	goto st0;
tr14:
	{ BFO_RAIL__EMIT(SEND_PROBEACK); }
	goto st4;
tr16:
	{ BFO_RAIL__EMIT(SEND_PROBE); }
	goto st4;
tr11:
	{ BFO_RAIL__EMIT(ADMIT); }
	goto st4;
st4:
	if ( ++p == pe )
		goto _test_eof4;
	BFO__FALLTHROUGH;
case 4:
	switch( (*p) ) {
		case 38u: goto tr12;
		case 41u: goto tr14;
		case 43u: goto tr15;
		case 46u: goto tr15;
		case 61u: goto st4;
		case 63u: goto tr16;
		case 66u: goto tr15;
	}
	if ( (*p) > 45u ) {
		if ( 62u <= (*p) && (*p) <= 64u )
			goto tr15;
	} else if ( (*p) >= 39u )
		goto st4;
	goto st0;
tr19:
	{ BFO_RAIL__EMIT(SEND_PROBEACK); }
	goto st5;
tr18:
	{ BFO_RAIL__EMIT(SEND_BROKEN); }
	goto st5;
tr7:
	{ BFO_RAIL__EMIT(RECONNECT); }
	goto st5;
st5:
	if ( ++p == pe )
		goto _test_eof5;
	BFO__FALLTHROUGH;
case 5:
	switch( (*p) ) {
		case 40u: goto tr18;
		case 41u: goto tr19;
		case 60u: goto tr3;
	}
	if ( (*p) > 46u ) {
		if ( 61u <= (*p) && (*p) <= 62u )
			goto tr0;
	} else if ( (*p) >= 38u )
		goto st5;
	goto st0;
tr8:
	{ BFO_RAIL__EMIT(RETIRE); }
	goto st6;
st6:
	if ( ++p == pe )
		goto _test_eof6;
	BFO__FALLTHROUGH;
case 6:
	if ( (*p) == 62u )
		goto st6;
	if ( (*p) < 42u ) {
		if ( 38u <= (*p) && (*p) <= 40u )
			goto st6;
	} else if ( (*p) > 43u ) {
		if ( 45u <= (*p) && (*p) <= 46u )
			goto st6;
	} else
		goto st6;
	goto st0;
	}
	_test_eof1: cs = 1; goto _test_eof;
	_test_eof2: cs = 2; goto _test_eof;
	_test_eof3: cs = 3; goto _test_eof;
	_test_eof4: cs = 4; goto _test_eof;
	_test_eof5: cs = 5; goto _test_eof;
	_test_eof6: cs = 6; goto _test_eof;

	_test_eof: {}
	if ( p == eof )
	{
	switch ( cs ) {
	case 1:
	case 2:
	case 3:
	case 4:
	case 5:
	case 6:
	{
    (void)1; (void)3; (void)4;
    (void)2; (void)5; (void)6;
  }
	break;
	}
	}

	_out: {}
	}

    return cs;
}

#undef BFO_RAIL__EMIT

/* ---- typed API ---- */

static const bfo_machine bfo_rail_machine = {
    BFO_MACHINE_RAIL, "rail", BFO_RAIL_NUM_STATES, BFO_RAIL_ST_CONNECTING,
    bfo_rail__state_names, bfo_rail__action_names, bfo_rail__final, bfo_rail__waits,
    bfo_rail__exec
};

/* The caller's state of one rail (one rail seen from one peer). */
typedef struct bfo_rail_fsm {
    int cs; /* a BFO_RAIL_ST_* value */
} bfo_rail_fsm;

/* Puts the machine in its start state, CONNECTING. */
static inline void bfo_rail_init(bfo_rail_fsm *fsm)
{
    fsm->cs = BFO_RAIL_ST_CONNECTING;
}

/* Feeds one event; see bfo_fsm_step() for the return codes. */
static inline int bfo_rail_step(bfo_rail_fsm *fsm, int event, bfo_step *out)
{
    return bfo_fsm_step(&bfo_rail_machine, &fsm->cs, event, out);
}

static inline int bfo_rail_accepts(int state, int event)
{
    return bfo_fsm_accepts(&bfo_rail_machine, state, event);
}

static inline const char *bfo_rail_state_name(int state)
{
    return bfo_fsm_state_name(&bfo_rail_machine, state);
}

static inline const char *bfo_rail_action_name(int action)
{
    return (action > 0 && action < BFO_RAIL_NUM_ACTIONS) ? bfo_rail__action_names[action]
                                                     : "(invalid)";
}

static inline int bfo_rail_is_final(int state)
{
    return bfo_fsm_is_final(&bfo_rail_machine, state);
}

#ifdef __cplusplus
}
#endif
#endif /* BFO_RAIL_H */
