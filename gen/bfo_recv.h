/* GENERATED FILE - DO NOT EDIT.
 * The receive request machine (Ragel -G2) with its names and typed API.
 * Generated from spec/recv.rl, spec/recv_binding.rl, spec/alphabet.tab by tools/bfo_gen.py (run `make gen`).
 * Change the spec and regenerate; `make check-gen` fails when this
 * file is not what the spec generates. */
#ifndef BFO_RECV_H
#define BFO_RECV_H

#include "bfo_core.h"

#if !defined(BFO_GEN_STAMP) || BFO_GEN_STAMP != 0x241ca132
#error "gen/bfo_recv.h and gen/bfo_alphabet.h come from different runs of tools/bfo_gen.py (BFO_GEN_STAMP): regenerate with make gen"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* States (numbers are Ragel's: they change when the spec changes). */
enum bfo_recv_state {
    BFO_RECV_ST_POSTED = 1,
    BFO_RECV_ST_COMPLETE = 2, /* final */
    BFO_RECV_ST_RNDV_MATCHED = 3,
    BFO_RECV_ST_ACK_SENT = 4,
    BFO_RECV_ST_RECVERR_SENT = 5,
    BFO_RECV_ST_RESTART_ACK_OWED = 6,
    BFO_RECV_ST_RESTART_ACKED = 7,
    BFO_RECV_ST_RGET_MATCHED = 8,
    BFO_RECV_ST_READING = 9,
    BFO_RECV_ST_FIN_SENT = 10,
    BFO_RECV_ST_UNREACHABLE_DRAINING = 11,
    BFO_RECV_ST_FAILED = 12, /* final */
    BFO_RECV_ST_PUTS_SENT = 13,
};
#define BFO_RECV_NUM_STATES 14 /* states are 1 .. BFO_RECV_NUM_STATES-1 */

/* Actions: what a transition asks the caller to do, in order. */
enum bfo_recv_action {
    BFO_RECV_ACT_DELIVER_MATCH = 1,
    BFO_RECV_ACT_ACCEPT_RNDV = 2,
    BFO_RECV_ACT_ACCEPT_RGET = 3,
    BFO_RECV_ACT_POST_ACK = 4,
    BFO_RECV_ACT_POST_PUTS = 5,
    BFO_RECV_ACT_POST_READS = 6,
    BFO_RECV_ACT_ACCOUNT_READ = 7,
    BFO_RECV_ACT_ACCEPT_FRAG = 8,
    BFO_RECV_ACT_ACCEPT_FIN = 9,
    BFO_RECV_ACT_POST_FIN = 10,
    BFO_RECV_ACT_POST_RECVERRNOTIFY = 11,
    BFO_RECV_ACT_ACCEPT_NOTIFY = 12,
    BFO_RECV_ACT_POST_RESTARTACK = 13,
    BFO_RECV_ACT_POST_RESTARTNACK = 14,
    BFO_RECV_ACT_RESET = 15,
    BFO_RECV_ACT_COMPLETE = 16,
    BFO_RECV_ACT_FAIL_UNREACHABLE = 17,
    BFO_RECV_ACT_DROP = 18,
};
#define BFO_RECV_NUM_ACTIONS 19 /* actions are 1 .. BFO_RECV_NUM_ACTIONS-1 */
#define BFO_RECV_MAX_ACTIONS 2 /* most actions one transition emits */
BFO_STATIC_ASSERT(BFO_RECV_MAX_ACTIONS <= BFO_MAX_ACTIONS,
                  "raise BFO_MAX_ACTIONS: a recv transition emits more");

static const char *const bfo_recv__state_names[] = {
    "(none)",
    "POSTED",
    "COMPLETE",
    "RNDV_MATCHED",
    "ACK_SENT",
    "RECVERR_SENT",
    "RESTART_ACK_OWED",
    "RESTART_ACKED",
    "RGET_MATCHED",
    "READING",
    "FIN_SENT",
    "UNREACHABLE_DRAINING",
    "FAILED",
    "PUTS_SENT",
};
static const char *const bfo_recv__action_names[] = {
    "(none)",
    "deliver_match",
    "accept_rndv",
    "accept_rget",
    "post_ack",
    "post_puts",
    "post_reads",
    "account_read",
    "accept_frag",
    "accept_fin",
    "post_fin",
    "post_recverrnotify",
    "accept_notify",
    "post_restartack",
    "post_restartnack",
    "reset",
    "complete",
    "fail_unreachable",
    "drop",
};
static const unsigned char bfo_recv__final[] = {
    0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0,
};
/* BFO_WAITS_* facts each state takes */
static const unsigned char bfo_recv__waits[] = {
    0, 0, 0, 0, 2, 2, 1, 0, 0, 2, 0, 3, 0, 2,
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

/* ---- Ragel's output for spec/recv_binding.rl, #line directives removed ---- */

/* recv_binding.rl - binds the receive request grammar (recv.rl) to C.
 *
 * Each action emits its own BFO_RECV_ACT_* into the step record; the engine
 * carries the actions out.  Nothing here allocates, blocks or does I/O.
 * tools/bfo_gen.py runs Ragel on this file (-G2) and wraps the output into
 * gen/bfo_recv.h with the names and the typed API.
 */
#define BFO_RECV__EMIT(a) bfo__emit(out, BFO_RECV_ACT_##a)

static const int bfo_recv_start = 1;

/* Runs the machine on one event from state cs.  Returns the new state, or 0
 * when the spec has no transition for (cs, event).  Inlined wherever the
 * machine is known (BFO__EXEC_INLINE, tools/bfo_gen.py). */
static BFO__EXEC_INLINE int bfo_recv__exec(int cs, unsigned char event, bfo_step *out)
{
    const unsigned char *p = &event;
    const unsigned char *pe = p + 1;
    const unsigned char *eof = 0;

    (void)bfo_recv_start;

	{
	if ( p == pe )
		goto _test_eof;
	switch ( cs )
	{
case 1:
	switch( (*p) ) {
		case 1u: goto tr0;
		case 4u: goto tr2;
		case 8u: goto tr3;
		case 59u: goto st11;
	}
	goto st0;
st0:
cs = 0;
	goto _out;
tr0:
	{ BFO_RECV__EMIT(DELIVER_MATCH); }
	goto st2;
tr5:
	{ BFO_RECV__EMIT(DROP); }
	goto st2;
tr6:
	{ BFO_RECV__EMIT(POST_RESTARTNACK); }
	goto st2;
tr15:
	{ BFO_RECV__EMIT(COMPLETE); }
	goto st2;
st2:
	if ( ++p == pe )
		goto _test_eof2;
	BFO__FALLTHROUGH;
case 2:
	switch( (*p) ) {
		case 5u: goto tr5;
		case 9u: goto tr5;
		case 22u: goto tr5;
		case 25u: goto tr6;
		case 26u: goto tr5;
		case 59u: goto st2;
	}
	goto st0;
tr2:
	{ BFO_RECV__EMIT(ACCEPT_RNDV); }
	goto st3;
tr23:
	{ BFO_RECV__EMIT(RESET); }
	{ BFO_RECV__EMIT(ACCEPT_RNDV); }
	goto st3;
st3:
	if ( ++p == pe )
		goto _test_eof3;
	BFO__FALLTHROUGH;
case 3:
	switch( (*p) ) {
		case 54u: goto tr8;
		case 55u: goto tr9;
		case 59u: goto st11;
	}
	goto st0;
tr10:
	{ BFO_RECV__EMIT(DROP); }
	goto st4;
tr8:
	{ BFO_RECV__EMIT(POST_ACK); }
	goto st4;
tr13:
	{ BFO_RECV__EMIT(ACCEPT_FRAG); }
	goto st4;
st4:
	if ( ++p == pe )
		goto _test_eof4;
	BFO__FALLTHROUGH;
case 4:
	switch( (*p) ) {
		case 5u: goto tr10;
		case 9u: goto tr10;
		case 13u: goto st4;
		case 14u: goto tr12;
		case 15u: goto tr13;
		case 25u: goto tr14;
		case 58u: goto tr15;
		case 59u: goto st11;
	}
	goto st0;
tr16:
	{ BFO_RECV__EMIT(DROP); }
	goto st5;
tr12:
	{ BFO_RECV__EMIT(POST_RECVERRNOTIFY); }
	goto st5;
tr18:
	{ BFO_RECV__EMIT(ACCEPT_FRAG); }
	goto st5;
tr19:
	{ BFO_RECV__EMIT(ACCEPT_FIN); }
	goto st5;
tr20:
	{ BFO_RECV__EMIT(ACCOUNT_READ); }
	goto st5;
st5:
	if ( ++p == pe )
		goto _test_eof5;
	BFO__FALLTHROUGH;
case 5:
	switch( (*p) ) {
		case 5u: goto tr16;
		case 9u: goto tr16;
		case 15u: goto tr18;
		case 21u: goto tr19;
		case 22u: goto tr16;
		case 25u: goto tr14;
		case 36u: goto st5;
		case 37u: goto tr12;
		case 49u: goto tr20;
		case 50u: goto st5;
		case 58u: goto tr15;
		case 59u: goto st11;
	}
	if ( (*p) > 14u ) {
		if ( 19u <= (*p) && (*p) <= 20u )
			goto st5;
	} else if ( (*p) >= 13u )
		goto st5;
	goto st0;
tr21:
	{ BFO_RECV__EMIT(DROP); }
	goto st6;
tr14:
	{ BFO_RECV__EMIT(ACCEPT_NOTIFY); }
	goto st6;
st6:
	if ( ++p == pe )
		goto _test_eof6;
	BFO__FALLTHROUGH;
case 6:
	switch( (*p) ) {
		case 26u: goto tr21;
		case 57u: goto tr22;
		case 59u: goto st11;
	}
	goto st0;
tr25:
	{ BFO_RECV__EMIT(DROP); }
	goto st7;
tr22:
	{ BFO_RECV__EMIT(POST_RESTARTACK); }
	goto st7;
st7:
	if ( ++p == pe )
		goto _test_eof7;
	BFO__FALLTHROUGH;
case 7:
	switch( (*p) ) {
		case 4u: goto tr23;
		case 8u: goto tr24;
		case 26u: goto tr25;
		case 30u: goto st7;
		case 31u: goto tr22;
		case 59u: goto st11;
	}
	goto st0;
tr3:
	{ BFO_RECV__EMIT(ACCEPT_RGET); }
	goto st8;
tr24:
	{ BFO_RECV__EMIT(RESET); }
	{ BFO_RECV__EMIT(ACCEPT_RGET); }
	goto st8;
st8:
	if ( ++p == pe )
		goto _test_eof8;
	BFO__FALLTHROUGH;
case 8:
	switch( (*p) ) {
		case 54u: goto tr8;
		case 56u: goto tr27;
		case 59u: goto st11;
	}
	goto st0;
tr28:
	{ BFO_RECV__EMIT(DROP); }
	goto st9;
tr27:
	{ BFO_RECV__EMIT(POST_READS); }
	goto st9;
st9:
	if ( ++p == pe )
		goto _test_eof9;
	BFO__FALLTHROUGH;
case 9:
	switch( (*p) ) {
		case 9u: goto tr28;
		case 25u: goto tr14;
		case 49u: goto tr27;
		case 50u: goto tr12;
		case 58u: goto tr29;
		case 59u: goto st11;
	}
	goto st0;
tr30:
	{ BFO_RECV__EMIT(DROP); }
	goto st10;
tr29:
	{ BFO_RECV__EMIT(POST_FIN); }
	goto st10;
st10:
	if ( ++p == pe )
		goto _test_eof10;
	BFO__FALLTHROUGH;
case 10:
	switch( (*p) ) {
		case 9u: goto tr30;
		case 23u: goto tr15;
		case 24u: goto tr29;
		case 59u: goto st11;
	}
	goto st0;
tr31:
	{ BFO_RECV__EMIT(DROP); }
	goto st11;
st11:
	if ( ++p == pe )
		goto _test_eof11;
	BFO__FALLTHROUGH;
case 11:
	switch( (*p) ) {
		case 5u: goto tr31;
		case 9u: goto tr31;
		case 15u: goto tr31;
		case 57u: goto tr32;
		case 58u: goto tr15;
		case 59u: goto st11;
	}
	if ( (*p) < 23u ) {
		if ( (*p) < 19u ) {
			if ( 13u <= (*p) && (*p) <= 14u )
				goto st11;
		} else if ( (*p) > 20u ) {
			if ( 21u <= (*p) && (*p) <= 22u )
				goto tr31;
		} else
			goto st11;
	} else if ( (*p) > 24u ) {
		if ( (*p) < 30u ) {
			if ( 25u <= (*p) && (*p) <= 26u )
				goto tr31;
		} else if ( (*p) > 31u ) {
			if ( (*p) > 37u ) {
				if ( 49u <= (*p) && (*p) <= 50u )
					goto st11;
			} else if ( (*p) >= 36u )
				goto st11;
		} else
			goto st11;
	} else
		goto st11;
	goto st0;
tr33:
	{ BFO_RECV__EMIT(DROP); }
	goto st12;
tr32:
	{ BFO_RECV__EMIT(FAIL_UNREACHABLE); }
	goto st12;
st12:
	if ( ++p == pe )
		goto _test_eof12;
	BFO__FALLTHROUGH;
case 12:
	switch( (*p) ) {
		case 5u: goto tr33;
		case 9u: goto tr33;
		case 15u: goto tr33;
		case 59u: goto st12;
	}
	if ( (*p) > 22u ) {
		if ( 25u <= (*p) && (*p) <= 26u )
			goto tr33;
	} else if ( (*p) >= 21u )
		goto tr33;
	goto st0;
tr35:
	{ BFO_RECV__EMIT(DROP); }
	goto st13;
tr9:
	{ BFO_RECV__EMIT(POST_PUTS); }
	goto st13;
tr37:
	{ BFO_RECV__EMIT(ACCEPT_FIN); }
	{ BFO_RECV__EMIT(POST_PUTS); }
	goto st13;
st13:
	if ( ++p == pe )
		goto _test_eof13;
	BFO__FALLTHROUGH;
case 13:
	switch( (*p) ) {
		case 5u: goto tr35;
		case 19u: goto st13;
		case 20u: goto tr12;
		case 21u: goto tr37;
		case 22u: goto tr35;
		case 25u: goto tr14;
		case 58u: goto tr15;
		case 59u: goto st11;
	}
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
	{
    (void)1; (void)3; (void)8;
    (void)4; (void)13; (void)9;
    (void)10; (void)5; (void)6;
    (void)7; (void)11;
    (void)2; (void)12;
  }
	break;
	}
	}

	_out: {}
	}

    return cs;
}

#undef BFO_RECV__EMIT

/* ---- typed API ---- */

static const bfo_machine bfo_recv_machine = {
    BFO_MACHINE_RECV, "recv", BFO_RECV_NUM_STATES, BFO_RECV_ST_POSTED,
    bfo_recv__state_names, bfo_recv__action_names, bfo_recv__final, bfo_recv__waits,
    bfo_recv__exec
};

/* The caller's state of one receive request. */
typedef struct bfo_recv_fsm {
    int cs; /* a BFO_RECV_ST_* value */
} bfo_recv_fsm;

/* Puts the machine in its start state, POSTED. */
static inline void bfo_recv_init(bfo_recv_fsm *fsm)
{
    fsm->cs = BFO_RECV_ST_POSTED;
}

/* Feeds one event; see bfo_fsm_step() for the return codes. */
static inline int bfo_recv_step(bfo_recv_fsm *fsm, int event, bfo_step *out)
{
    return bfo_fsm_step(&bfo_recv_machine, &fsm->cs, event, out);
}

static inline int bfo_recv_accepts(int state, int event)
{
    return bfo_fsm_accepts(&bfo_recv_machine, state, event);
}

static inline const char *bfo_recv_state_name(int state)
{
    return bfo_fsm_state_name(&bfo_recv_machine, state);
}

static inline const char *bfo_recv_action_name(int action)
{
    return (action > 0 && action < BFO_RECV_NUM_ACTIONS) ? bfo_recv__action_names[action]
                                                     : "(invalid)";
}

static inline int bfo_recv_is_final(int state)
{
    return bfo_fsm_is_final(&bfo_recv_machine, state);
}

#ifdef __cplusplus
}
#endif
#endif /* BFO_RECV_H */
