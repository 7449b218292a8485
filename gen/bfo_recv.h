/* GENERATED FILE - DO NOT EDIT.
 * The receive request machine (Ragel -F1) with its names and typed API.
 * Generated from spec/recv.rl, spec/recv_binding.rl, spec/alphabet.tab by tools/bfo_gen.py (run `make gen`).
 * Change the spec and regenerate; `make check-gen` fails when this
 * file is not what the spec generates. */
#ifndef BFO_RECV_H
#define BFO_RECV_H

#include "bfo_core.h"

#if !defined(BFO_GEN_STAMP) || BFO_GEN_STAMP != 0x009304ed
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

/* ---- Ragel's output for spec/recv_binding.rl, #line directives removed ---- */

/* recv_binding.rl - binds the receive request grammar (recv.rl) to C.
 *
 * Each action emits its own BFO_RECV_ACT_* into the step record; the engine
 * carries the actions out.  Nothing here allocates, blocks or does I/O.
 * tools/bfo_gen.py runs Ragel on this file (-F1) and wraps the output into
 * gen/bfo_recv.h with the names and the typed API.
 */
#define BFO_RECV__EMIT(a) bfo__emit(out, BFO_RECV_ACT_##a)

static const unsigned char bfo_recv__trans_keys[] = {
	0u, 0u, 1u, 59u, 5u, 59u, 54u, 59u, 5u, 59u, 5u, 59u, 26u, 59u, 4u, 59u,
	54u, 59u, 9u, 59u, 9u, 59u, 5u, 59u, 5u, 59u, 5u, 59u, 0
};

static const char bfo_recv__key_spans[] = {
	0, 59, 55, 6, 55, 55, 34, 56,
	6, 51, 51, 55, 55, 55
};

static const short bfo_recv__index_offsets[] = {
	0, 0, 60, 116, 123, 179, 235, 270,
	327, 334, 386, 438, 494, 550
};

static const char bfo_recv__indicies[] = {
	0, 1, 1, 2, 1, 1, 1,
	3, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 4, 1, 5, 1, 1,
	1, 5, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 5, 1,
	1, 6, 5, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 7, 1, 8, 9, 1,
	1, 1, 4, 1, 10, 1, 1, 1,
	10, 1, 1, 1, 11, 12, 13, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	14, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 15, 4, 1, 16, 1, 1, 1,
	16, 1, 1, 1, 17, 17, 18, 1,
	1, 1, 17, 17, 19, 16, 1, 1,
	14, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 17, 12, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	20, 17, 1, 1, 1, 1, 1, 1,
	1, 15, 4, 1, 21, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 22, 1, 4, 1, 23,
	1, 1, 1, 24, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 25, 1, 1,
	1, 26, 22, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 4, 1,
	8, 1, 27, 1, 1, 4, 1, 28,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 14,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 27,
	12, 1, 1, 1, 1, 1, 1, 1,
	29, 4, 1, 30, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 15, 29, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 4, 1, 31,
	1, 1, 1, 31, 1, 1, 1, 4,
	4, 31, 1, 1, 1, 4, 4, 31,
	31, 4, 4, 31, 31, 1, 1, 1,
	4, 4, 1, 1, 1, 1, 4, 4,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 4, 4, 1, 1, 1,
	1, 1, 1, 32, 15, 4, 1, 33,
	1, 1, 1, 33, 1, 1, 1, 1,
	1, 33, 1, 1, 1, 1, 1, 33,
	33, 1, 1, 33, 33, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 34, 1, 35,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 36, 12, 37,
	35, 1, 1, 14, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 15, 4, 1, 0
};

static const char bfo_recv__trans_targs[] = {
	2, 0, 3, 8, 11, 2, 2, 2,
	4, 13, 4, 4, 5, 4, 6, 2,
	5, 5, 5, 5, 5, 6, 7, 3,
	8, 7, 7, 9, 9, 10, 10, 11,
	12, 12, 12, 13, 13, 13
};

static const char bfo_recv__trans_actions[] = {
	2, 0, 3, 4, 0, 5, 6, 0,
	7, 8, 5, 0, 9, 10, 11, 12,
	5, 0, 10, 13, 14, 5, 15, 16,
	17, 5, 0, 18, 5, 19, 5, 5,
	20, 5, 0, 5, 0, 21
};

static const char bfo_recv__eof_actions[] = {
	0, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1
};

static const int bfo_recv_start = 1;

/* Runs the machine on one event from state cs.  Returns the new state, or 0
 * when the spec has no transition for (cs, event). */
static inline int bfo_recv__exec(int cs, unsigned char event, bfo_step *out)
{
    const unsigned char *p = &event;
    const unsigned char *pe = p + 1;
    const unsigned char *eof = 0;

    (void)bfo_recv_start;

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
	_keys = bfo_recv__trans_keys + (cs<<1);
	_inds = bfo_recv__indicies + bfo_recv__index_offsets[cs];

	_slen = bfo_recv__key_spans[cs];
	_trans = _inds[ _slen > 0 && _keys[0] <=(*p) &&
		(*p) <= _keys[1] ?
		(*p) - _keys[0] : _slen ];

	cs = bfo_recv__trans_targs[_trans];

	if ( bfo_recv__trans_actions[_trans] == 0 )
		goto _again;

	switch ( bfo_recv__trans_actions[_trans] ) {
	case 2:
	{ BFO_RECV__EMIT(DELIVER_MATCH); }
	break;
	case 3:
	{ BFO_RECV__EMIT(ACCEPT_RNDV); }
	break;
	case 4:
	{ BFO_RECV__EMIT(ACCEPT_RGET); }
	break;
	case 7:
	{ BFO_RECV__EMIT(POST_ACK); }
	break;
	case 8:
	{ BFO_RECV__EMIT(POST_PUTS); }
	break;
	case 18:
	{ BFO_RECV__EMIT(POST_READS); }
	break;
	case 14:
	{ BFO_RECV__EMIT(ACCOUNT_READ); }
	break;
	case 10:
	{ BFO_RECV__EMIT(ACCEPT_FRAG); }
	break;
	case 13:
	{ BFO_RECV__EMIT(ACCEPT_FIN); }
	break;
	case 19:
	{ BFO_RECV__EMIT(POST_FIN); }
	break;
	case 9:
	{ BFO_RECV__EMIT(POST_RECVERRNOTIFY); }
	break;
	case 11:
	{ BFO_RECV__EMIT(ACCEPT_NOTIFY); }
	break;
	case 15:
	{ BFO_RECV__EMIT(POST_RESTARTACK); }
	break;
	case 6:
	{ BFO_RECV__EMIT(POST_RESTARTNACK); }
	break;
	case 12:
	{ BFO_RECV__EMIT(COMPLETE); }
	break;
	case 20:
	{ BFO_RECV__EMIT(FAIL_UNREACHABLE); }
	break;
	case 5:
	{ BFO_RECV__EMIT(DROP); }
	break;
	case 21:
	{ BFO_RECV__EMIT(ACCEPT_FIN); }
	{ BFO_RECV__EMIT(POST_PUTS); }
	break;
	case 16:
	{ BFO_RECV__EMIT(RESET); }
	{ BFO_RECV__EMIT(ACCEPT_RNDV); }
	break;
	case 17:
	{ BFO_RECV__EMIT(RESET); }
	{ BFO_RECV__EMIT(ACCEPT_RGET); }
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
	switch ( bfo_recv__eof_actions[cs] ) {
	case 1:
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
