/* GENERATED FILE - DO NOT EDIT.
 * The send request machine (Ragel -F1) with its names and typed API.
 * Generated from spec/send.rl, spec/send_binding.rl, spec/alphabet.tab by tools/bfo_gen.py (run `make gen`).
 * Change the spec and regenerate; `make check-gen` fails when this
 * file is not what the spec generates. */
#ifndef BFO_SEND_H
#define BFO_SEND_H

#include "bfo_core.h"

#if !defined(BFO_GEN_STAMP) || BFO_GEN_STAMP != 0x009304ed
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

/* ---- Ragel's output for spec/send_binding.rl, #line directives removed ---- */

/* send_binding.rl - binds the send request grammar (send.rl) to C.
 *
 * Each action emits its own BFO_SEND_ACT_* into the step record; the engine
 * carries the actions out.  Nothing here allocates, blocks or does I/O.
 * tools/bfo_gen.py runs Ragel on this file (-F1) and wraps the output into
 * gen/bfo_send.h with the names and the typed API.
 */
#define BFO_SEND__EMIT(a) bfo__emit(out, BFO_SEND_ACT_##a)

static const unsigned char bfo_send__trans_keys[] = {
	0u, 0u, 51u, 59u, 2u, 59u, 22u, 59u, 2u, 59u, 12u, 59u, 6u, 59u, 6u, 59u,
	6u, 59u, 27u, 59u, 29u, 59u, 52u, 59u, 10u, 59u, 27u, 59u, 27u, 59u, 6u, 59u,
	0
};

static const char bfo_send__key_spans[] = {
	0, 9, 58, 38, 58, 48, 54, 54,
	54, 33, 31, 8, 50, 33, 33, 54
};

static const short bfo_send__index_offsets[] = {
	0, 0, 10, 69, 108, 167, 216, 271,
	326, 381, 415, 447, 456, 507, 541, 575
};

static const char bfo_send__indicies[] = {
	0, 2, 3, 1, 1, 1, 1,
	1, 4, 1, 5, 0, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 4, 1, 6, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	6, 1, 1, 6, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 7, 1, 5, 4, 1,
	1, 4, 4, 1, 1, 4, 4, 8,
	1, 1, 1, 4, 4, 8, 1, 1,
	8, 8, 4, 4, 1, 1, 4, 4,
	8, 1, 1, 8, 1, 1, 8, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 4, 4, 1, 1, 1, 1,
	1, 1, 1, 1, 9, 5, 4, 1,
	10, 1, 1, 1, 1, 1, 10, 1,
	1, 10, 10, 1, 1, 1, 1, 1,
	1, 10, 1, 1, 10, 1, 1, 10,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 11,
	1, 12, 2, 1, 1, 1, 1, 13,
	1, 1, 1, 1, 1, 14, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 15, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 4, 1,
	16, 16, 1, 1, 16, 16, 1, 1,
	1, 1, 13, 15, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 15, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 5, 4, 1, 17,
	17, 1, 1, 17, 17, 18, 1, 1,
	1, 17, 17, 18, 1, 1, 18, 18,
	17, 17, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 18, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	17, 17, 1, 1, 1, 1, 1, 1,
	1, 1, 19, 5, 4, 1, 20, 21,
	22, 1, 1, 23, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 4, 1,
	24, 1, 1, 5, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 4, 1,
	2, 3, 1, 1, 1, 1, 1, 4,
	1, 25, 3, 13, 1, 1, 1, 1,
	1, 1, 1, 1, 26, 27, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 15, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 5, 4, 1, 24, 24, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 4, 1, 5, 5,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 23, 1,
	28, 28, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 14, 1, 1, 1,
	1, 28, 29, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 15, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 29, 15, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 5, 4, 1, 0
};

static const char bfo_send__trans_targs[] = {
	2, 0, 6, 12, 4, 3, 3, 3,
	4, 5, 5, 5, 6, 7, 15, 8,
	7, 8, 8, 9, 10, 9, 13, 14,
	11, 12, 12, 12, 15, 15
};

static const char bfo_send__trans_actions[] = {
	2, 0, 3, 4, 0, 5, 6, 0,
	6, 7, 6, 0, 0, 8, 9, 10,
	0, 0, 6, 11, 0, 12, 0, 0,
	13, 0, 14, 6, 0, 15
};

static const char bfo_send__eof_actions[] = {
	0, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1
};

static const int bfo_send_start = 1;

/* Runs the machine on one event from state cs.  Returns the new state, or 0
 * when the spec has no transition for (cs, event). */
static inline int bfo_send__exec(int cs, unsigned char event, bfo_step *out)
{
    const unsigned char *p = &event;
    const unsigned char *pe = p + 1;
    const unsigned char *eof = 0;

    (void)bfo_send_start;

	{
	int _slen;
	int _trans;
	const unsigned char *_keys;
	const char *_inds;
	if ( p == pe )
		goto _test_eof;
	if ( cs == 0 )
		goto _out;
_resume:
	_keys = bfo_send__trans_keys + (cs<<1);
	_inds = bfo_send__indicies + bfo_send__index_offsets[cs];

	_slen = bfo_send__key_spans[cs];
	_trans = _inds[ _slen > 0 && _keys[0] <=(*p) &&
		(*p) <= _keys[1] ?
		(*p) - _keys[0] : _slen ];

	cs = bfo_send__trans_targs[_trans];

	if ( bfo_send__trans_actions[_trans] == 0 )
		goto _again;

	switch ( bfo_send__trans_actions[_trans] ) {
	case 2:
	{ BFO_SEND__EMIT(POST_MATCH); }
	break;
	case 3:
	{ BFO_SEND__EMIT(POST_RNDV); }
	break;
	case 4:
	{ BFO_SEND__EMIT(POST_RGET); }
	break;
	case 8:
	{ BFO_SEND__EMIT(SEND_FRAGS); }
	break;
	case 9:
	{ BFO_SEND__EMIT(POST_WRITE); }
	break;
	case 15:
	{ BFO_SEND__EMIT(POST_FIN); }
	break;
	case 14:
	{ BFO_SEND__EMIT(NOTE_FIN); }
	break;
	case 10:
	{ BFO_SEND__EMIT(NOTE_ERROR); }
	break;
	case 11:
	{ BFO_SEND__EMIT(POST_NOTIFY); }
	break;
	case 12:
	{ BFO_SEND__EMIT(REPOST_NOTIFY); }
	break;
	case 13:
	{ BFO_SEND__EMIT(RESTART); }
	break;
	case 5:
	{ BFO_SEND__EMIT(COMPLETE); }
	break;
	case 7:
	{ BFO_SEND__EMIT(FAIL_UNREACHABLE); }
	break;
	case 6:
	{ BFO_SEND__EMIT(DROP); }
	break;
	}

_again:
	if ( cs == 0 )
		goto _out;
	if ( ++p != pe )
		goto _resume;
	_test_eof: {}
	if ( p == eof )
	{
	switch ( bfo_send__eof_actions[cs] ) {
	case 1:
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
