/* GENERATED FILE - DO NOT EDIT.
 * The send request machine (Ragel -G2) with its names and typed API.
 * Generated from spec/send.rl, spec/send_binding.rl, spec/alphabet.tab by tools/bfo_gen.py (run `make gen`).
 * Change the spec and regenerate; `make check-gen` fails when this
 * file is not what the spec generates. */
#ifndef BFO_SEND_H
#define BFO_SEND_H

#include "bfo_core.h"

#if !defined(BFO_GEN_STAMP) || BFO_GEN_STAMP != 0x241ca132
#error "gen/bfo_send.h and gen/bfo_alphabet.h come from different runs of tools/bfo_gen.py (BFO_GEN_STAMP): regenerate with make gen"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* States (numbers are Ragel's: they change when the spec changes). */
enum bfo_send_state {
    BFO_SEND_ST_IDLE = 1,
    BFO_SEND_ST_MATCH_SENT = 2,
    BFO_SEND_ST_COMPLETE = 3, /* final */
    BFO_SEND_ST_UNREACHABLE_DRAINING = 4,
    BFO_SEND_ST_FAILED = 5, /* final */
    BFO_SEND_ST_RNDV_SENT = 6,
    BFO_SEND_ST_FRAGS_SENDING = 7,
    BFO_SEND_ST_ERROR_DRAINING = 8,
    BFO_SEND_ST_NOTIFY_SENT = 9,
    BFO_SEND_ST_NOTIFY_LANDED = 10,
    BFO_SEND_ST_RESTARTED = 11,
    BFO_SEND_ST_RGET_SENT = 12,
    BFO_SEND_ST_RESTART_ACKED = 13,
    BFO_SEND_ST_RESTART_NACKED = 14,
    BFO_SEND_ST_PUTS_SERVING = 15,
};
#define BFO_SEND_NUM_STATES 16 /* states are 1 .. BFO_SEND_NUM_STATES-1 */

/* Actions: what a transition asks the caller to do, in order. */
enum bfo_send_action {
    BFO_SEND_ACT_POST_MATCH = 1,
    BFO_SEND_ACT_POST_RNDV = 2,
    BFO_SEND_ACT_POST_RGET = 3,
    BFO_SEND_ACT_SEND_FRAGS = 4,
    BFO_SEND_ACT_POST_WRITE = 5,
    BFO_SEND_ACT_POST_FIN = 6,
    BFO_SEND_ACT_NOTE_FIN = 7,
    BFO_SEND_ACT_NOTE_ERROR = 8,
    BFO_SEND_ACT_POST_NOTIFY = 9,
    BFO_SEND_ACT_REPOST_NOTIFY = 10,
    BFO_SEND_ACT_RESTART = 11,
    BFO_SEND_ACT_COMPLETE = 12,
    BFO_SEND_ACT_FAIL_UNREACHABLE = 13,
    BFO_SEND_ACT_DROP = 14,
};
#define BFO_SEND_NUM_ACTIONS 15 /* actions are 1 .. BFO_SEND_NUM_ACTIONS-1 */
#define BFO_SEND_MAX_ACTIONS 1 /* most actions one transition emits */
BFO_STATIC_ASSERT(BFO_SEND_MAX_ACTIONS <= BFO_MAX_ACTIONS,
                  "raise BFO_MAX_ACTIONS: a send transition emits more");

static const char *const bfo_send__state_names[] = {
    "(none)",
    "IDLE",
    "MATCH_SENT",
    "COMPLETE",
    "UNREACHABLE_DRAINING",
    "FAILED",
    "RNDV_SENT",
    "FRAGS_SENDING",
    "ERROR_DRAINING",
    "NOTIFY_SENT",
    "NOTIFY_LANDED",
    "RESTARTED",
    "RGET_SENT",
    "RESTART_ACKED",
    "RESTART_NACKED",
    "PUTS_SERVING",
};
static const char *const bfo_send__action_names[] = {
    "(none)",
    "post_match",
    "post_rndv",
    "post_rget",
    "send_frags",
    "post_write",
    "post_fin",
    "note_fin",
    "note_error",
    "post_notify",
    "repost_notify",
    "restart",
    "complete",
    "fail_unreachable",
    "drop",
};
static const unsigned char bfo_send__final[] = {
    0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
};
/* BFO_WAITS_* facts each state takes */
static const unsigned char bfo_send__waits[] = {
    0, 0, 0, 0, 3, 0, 0, 2, 3, 0, 0, 0, 2, 0, 0, 2,
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

/* ---- Ragel's output for spec/send_binding.rl, #line directives removed ---- */

/* send_binding.rl - binds the send request grammar (send.rl) to C.
 *
 * Each action emits its own BFO_SEND_ACT_* into the step record; the engine
 * carries the actions out.  Nothing here allocates, blocks or does I/O.
 * tools/bfo_gen.py runs Ragel on this file (-G2) and wraps the output into
 * gen/bfo_send.h with the names and the typed API.
 */
#define BFO_SEND__EMIT(a) bfo__emit(out, BFO_SEND_ACT_##a)

static const int bfo_send_start = 1;

/* Runs the machine on one event from state cs.  Returns the new state, or 0
 * when the spec has no transition for (cs, event).  Inlined wherever the
 * machine is known (BFO__EXEC_INLINE, tools/bfo_gen.py). */
static BFO__EXEC_INLINE int bfo_send__exec(int cs, unsigned char event, bfo_step *out)
{
    const unsigned char *p = &event;
    const unsigned char *pe = p + 1;
    const unsigned char *eof = 0;

    (void)bfo_send_start;

	{
	if ( p == pe )
		goto _test_eof;
	switch ( cs )
	{
case 1:
	switch( (*p) ) {
		case 51u: goto tr0;
		case 52u: goto tr2;
		case 53u: goto tr3;
		case 59u: goto st4;
	}
	goto st0;
st0:
cs = 0;
	goto _out;
tr0:
	{ BFO_SEND__EMIT(POST_MATCH); }
	goto st2;
st2:
	if ( ++p == pe )
		goto _test_eof2;
	BFO__FALLTHROUGH;
case 2:
	switch( (*p) ) {
		case 2u: goto tr5;
		case 3u: goto tr0;
		case 59u: goto st4;
	}
	goto st0;
tr5:
	{ BFO_SEND__EMIT(COMPLETE); }
	goto st3;
tr6:
	{ BFO_SEND__EMIT(DROP); }
	goto st3;
st3:
	if ( ++p == pe )
		goto _test_eof3;
	BFO__FALLTHROUGH;
case 3:
	switch( (*p) ) {
		case 22u: goto tr6;
		case 32u: goto tr6;
		case 35u: goto tr6;
		case 59u: goto st3;
	}
	goto st0;
tr8:
	{ BFO_SEND__EMIT(DROP); }
	goto st4;
st4:
	if ( ++p == pe )
		goto _test_eof4;
	BFO__FALLTHROUGH;
case 4:
	switch( (*p) ) {
		case 2u: goto tr5;
		case 3u: goto st4;
		case 12u: goto tr8;
		case 18u: goto tr8;
		case 29u: goto tr8;
		case 32u: goto tr8;
		case 35u: goto tr8;
		case 57u: goto tr9;
		case 58u: goto tr5;
		case 59u: goto st4;
	}
	if ( (*p) < 21u ) {
		if ( (*p) < 10u ) {
			if ( 6u <= (*p) && (*p) <= 7u )
				goto st4;
		} else if ( (*p) > 11u ) {
			if ( 16u <= (*p) && (*p) <= 17u )
				goto st4;
		} else
			goto st4;
	} else if ( (*p) > 22u ) {
		if ( (*p) < 27u ) {
			if ( 23u <= (*p) && (*p) <= 24u )
				goto st4;
		} else if ( (*p) > 28u ) {
			if ( 47u <= (*p) && (*p) <= 48u )
				goto st4;
		} else
			goto st4;
	} else
		goto tr8;
	goto st0;
tr10:
	{ BFO_SEND__EMIT(DROP); }
	goto st5;
tr9:
	{ BFO_SEND__EMIT(FAIL_UNREACHABLE); }
	goto st5;
st5:
	if ( ++p == pe )
		goto _test_eof5;
	BFO__FALLTHROUGH;
case 5:
	switch( (*p) ) {
		case 12u: goto tr10;
		case 18u: goto tr10;
		case 29u: goto tr10;
		case 32u: goto tr10;
		case 35u: goto tr10;
		case 59u: goto st5;
	}
	if ( 21u <= (*p) && (*p) <= 22u )
		goto tr10;
	goto st0;
tr2:
	{ BFO_SEND__EMIT(POST_RNDV); }
	goto st6;
st6:
	if ( ++p == pe )
		goto _test_eof6;
	BFO__FALLTHROUGH;
case 6:
	switch( (*p) ) {
		case 6u: goto st6;
		case 7u: goto tr2;
		case 12u: goto tr13;
		case 18u: goto tr14;
		case 35u: goto tr15;
		case 59u: goto st4;
	}
	goto st0;
tr13:
	{ BFO_SEND__EMIT(SEND_FRAGS); }
	goto st7;
st7:
	if ( ++p == pe )
		goto _test_eof7;
	BFO__FALLTHROUGH;
case 7:
	switch( (*p) ) {
		case 16u: goto tr13;
		case 17u: goto tr15;
		case 35u: goto tr15;
		case 58u: goto tr5;
		case 59u: goto st4;
	}
	if ( (*p) > 7u ) {
		if ( 10u <= (*p) && (*p) <= 11u )
			goto st7;
	} else if ( (*p) >= 6u )
		goto st7;
	goto st0;
tr18:
	{ BFO_SEND__EMIT(DROP); }
	goto st8;
tr15:
	{ BFO_SEND__EMIT(NOTE_ERROR); }
	goto st8;
st8:
	if ( ++p == pe )
		goto _test_eof8;
	BFO__FALLTHROUGH;
case 8:
	switch( (*p) ) {
		case 12u: goto tr18;
		case 18u: goto tr18;
		case 35u: goto tr18;
		case 57u: goto tr19;
		case 58u: goto tr5;
		case 59u: goto st4;
	}
	if ( (*p) < 16u ) {
		if ( (*p) > 7u ) {
			if ( 10u <= (*p) && (*p) <= 11u )
				goto st8;
		} else if ( (*p) >= 6u )
			goto st8;
	} else if ( (*p) > 17u ) {
		if ( (*p) < 23u ) {
			if ( 21u <= (*p) && (*p) <= 22u )
				goto tr18;
		} else if ( (*p) > 24u ) {
			if ( 47u <= (*p) && (*p) <= 48u )
				goto st8;
		} else
			goto st8;
	} else
		goto st8;
	goto st0;
tr19:
	{ BFO_SEND__EMIT(POST_NOTIFY); }
	goto st9;
tr21:
	{ BFO_SEND__EMIT(REPOST_NOTIFY); }
	goto st9;
st9:
	if ( ++p == pe )
		goto _test_eof9;
	BFO__FALLTHROUGH;
case 9:
	switch( (*p) ) {
		case 27u: goto st10;
		case 28u: goto tr21;
		case 29u: goto st13;
		case 32u: goto st14;
		case 59u: goto st4;
	}
	goto st0;
st10:
	if ( ++p == pe )
		goto _test_eof10;
	BFO__FALLTHROUGH;
case 10:
	switch( (*p) ) {
		case 29u: goto tr24;
		case 32u: goto tr5;
		case 59u: goto st4;
	}
	goto st0;
tr24:
	{ BFO_SEND__EMIT(RESTART); }
	goto st11;
st11:
	if ( ++p == pe )
		goto _test_eof11;
	BFO__FALLTHROUGH;
case 11:
	switch( (*p) ) {
		case 52u: goto tr2;
		case 53u: goto tr3;
		case 59u: goto st4;
	}
	goto st0;
tr3:
	{ BFO_SEND__EMIT(POST_RGET); }
	goto st12;
tr27:
	{ BFO_SEND__EMIT(DROP); }
	goto st12;
tr26:
	{ BFO_SEND__EMIT(NOTE_FIN); }
	goto st12;
st12:
	if ( ++p == pe )
		goto _test_eof12;
	BFO__FALLTHROUGH;
case 12:
	switch( (*p) ) {
		case 10u: goto st12;
		case 11u: goto tr3;
		case 12u: goto tr13;
		case 21u: goto tr26;
		case 22u: goto tr27;
		case 35u: goto tr15;
		case 58u: goto tr5;
		case 59u: goto st4;
	}
	goto st0;
st13:
	if ( ++p == pe )
		goto _test_eof13;
	BFO__FALLTHROUGH;
case 13:
	if ( (*p) == 59u )
		goto st4;
	if ( 27u <= (*p) && (*p) <= 28u )
		goto tr24;
	goto st0;
st14:
	if ( ++p == pe )
		goto _test_eof14;
	BFO__FALLTHROUGH;
case 14:
	if ( (*p) == 59u )
		goto st14;
	if ( 27u <= (*p) && (*p) <= 28u )
		goto tr5;
	goto st0;
tr14:
	{ BFO_SEND__EMIT(POST_WRITE); }
	goto st15;
tr29:
	{ BFO_SEND__EMIT(POST_FIN); }
	goto st15;
st15:
	if ( ++p == pe )
		goto _test_eof15;
	BFO__FALLTHROUGH;
case 15:
	switch( (*p) ) {
		case 18u: goto tr14;
		case 23u: goto st15;
		case 24u: goto tr29;
		case 35u: goto tr15;
		case 47u: goto tr29;
		case 48u: goto tr15;
		case 58u: goto tr5;
		case 59u: goto st4;
	}
	if ( 6u <= (*p) && (*p) <= 7u )
		goto st15;
	goto st0;
	}
	_test_eof2: cs = 2; goto _test_eof;
	_test_eof3: cs = 3; goto _test_eof;
	_test_eof4: cs = 4; goto _test_eof;
	_test_eof5: cs = 5; goto _test_eof;
	_test_eof6: cs = 6; goto _test_eof;
	_test_eof7: cs = 7; goto _test_eof;
	_test_eof8: cs = 8; goto _test_eof;
	_test_eof9: cs = 9; goto _test_eof;
	_test_eof10: cs = 10; goto _test_eof;
	_test_eof11: cs = 11; goto _test_eof;
	_test_eof12: cs = 12; goto _test_eof;
	_test_eof13: cs = 13; goto _test_eof;
	_test_eof14: cs = 14; goto _test_eof;
	_test_eof15: cs = 15; goto _test_eof;

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
	case 7:
	case 8:
	case 9:
	case 10:
	case 11:
	case 12:
	case 13:
	case 14:
	case 15:
	{
    (void)1; (void)2; (void)6;
    (void)7; (void)15; (void)12;
    (void)8; (void)9; (void)10;
    (void)13; (void)14; (void)11;
    (void)4; (void)3; (void)5;
  }
	break;
	}
	}

	_out: {}
	}

    return cs;
}

#undef BFO_SEND__EMIT

/* ---- typed API ---- */

static const bfo_machine bfo_send_machine = {
    BFO_MACHINE_SEND, "send", BFO_SEND_NUM_STATES, BFO_SEND_ST_IDLE,
    bfo_send__state_names, bfo_send__action_names, bfo_send__final, bfo_send__waits,
    bfo_send__exec
};

/* The caller's state of one send request. */
typedef struct bfo_send_fsm {
    int cs; /* a BFO_SEND_ST_* value */
} bfo_send_fsm;

/* Puts the machine in its start state, IDLE. */
static inline void bfo_send_init(bfo_send_fsm *fsm)
{
    fsm->cs = BFO_SEND_ST_IDLE;
}

/* Feeds one event; see bfo_fsm_step() for the return codes. */
static inline int bfo_send_step(bfo_send_fsm *fsm, int event, bfo_step *out)
{
    return bfo_fsm_step(&bfo_send_machine, &fsm->cs, event, out);
}

static inline int bfo_send_accepts(int state, int event)
{
    return bfo_fsm_accepts(&bfo_send_machine, state, event);
}

static inline const char *bfo_send_state_name(int state)
{
    return bfo_fsm_state_name(&bfo_send_machine, state);
}

static inline const char *bfo_send_action_name(int action)
{
    return (action > 0 && action < BFO_SEND_NUM_ACTIONS) ? bfo_send__action_names[action]
                                                     : "(invalid)";
}

static inline int bfo_send_is_final(int state)
{
    return bfo_fsm_is_final(&bfo_send_machine, state);
}

#ifdef __cplusplus
}
#endif
#endif /* BFO_SEND_H */
