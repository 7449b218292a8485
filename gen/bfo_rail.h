/* GENERATED FILE - DO NOT EDIT.
 * The rail (one rail seen from one peer) machine (Ragel -F1) with its names and typed API.
 * Generated from spec/rail.rl, spec/rail_binding.rl, spec/alphabet.tab by tools/bfo_gen.py (run `make gen`).
 * Change the spec and regenerate; `make check-gen` fails when this
 * file is not what the spec generates. */
#ifndef BFO_RAIL_H
#define BFO_RAIL_H

#include "bfo_core.h"

#if !defined(BFO_GEN_STAMP) || BFO_GEN_STAMP != 0x009304ed
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

/* ---- Ragel's output for spec/rail_binding.rl, #line directives removed ---- */

/* rail_binding.rl - binds the rail grammar (rail.rl) to C.
 *
 * Each action emits its own BFO_RAIL_ACT_* into the step record; the engine
 * and the transport carry the actions out.  Nothing here allocates, blocks
 * or does I/O.  tools/bfo_gen.py wraps Ragel's output into gen/bfo_rail.h.
 */
#define BFO_RAIL__EMIT(a) bfo__emit(out, BFO_RAIL_ACT_##a)

static const unsigned char bfo_rail__trans_keys[] = {
	0u, 0u, 38u, 62u, 38u, 67u, 38u, 66u, 38u, 66u, 38u, 62u, 38u, 62u, 0
};

static const char bfo_rail__key_spans[] = {
	0, 25, 30, 29, 29, 25, 25
};

static const unsigned char bfo_rail__index_offsets[] = {
	0, 0, 26, 57, 87, 117, 143
};

static const char bfo_rail__indicies[] = {
	0, 1, 1, 2, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 3,
	0, 0, 1, 4, 4, 5, 6, 4,
	4, 4, 4, 4, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 3, 1, 4, 1, 1, 7, 1,
	8, 1, 0, 9, 9, 10, 9, 0,
	11, 9, 0, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 9, 0, 1, 1, 1, 0, 1,
	12, 13, 13, 14, 13, 15, 13, 13,
	15, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 13,
	15, 16, 15, 1, 15, 1, 17, 17,
	18, 19, 17, 17, 17, 17, 17, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 3, 0, 0, 1,
	20, 20, 20, 1, 20, 20, 1, 20,
	20, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1,
	20, 1, 0
};

static const char bfo_rail__trans_targs[] = {
	2, 0, 1, 3, 2, 2, 3, 5,
	6, 3, 3, 4, 2, 4, 4, 2,
	4, 5, 5, 5, 6
};

static const char bfo_rail__trans_actions[] = {
	2, 0, 3, 4, 0, 5, 6, 7,
	8, 0, 3, 9, 10, 0, 3, 11,
	4, 0, 5, 3, 0
};

static const char bfo_rail__eof_actions[] = {
	0, 1, 1, 1, 1, 1, 1
};

static const int bfo_rail_start = 1;

/* Runs the machine on one event from state cs.  Returns the new state, or 0
 * when the spec has no transition for (cs, event). */
static inline int bfo_rail__exec(int cs, unsigned char event, bfo_step *out)
{
    const unsigned char *p = &event;
    const unsigned char *pe = p + 1;
    const unsigned char *eof = 0;

    (void)bfo_rail_start;

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
	_keys = bfo_rail__trans_keys + (cs<<1);
	_inds = bfo_rail__indicies + bfo_rail__index_offsets[cs];

	_slen = bfo_rail__key_spans[cs];
	_trans = _inds[ _slen > 0 && _keys[0] <=(*p) &&
		(*p) <= _keys[1] ?
		(*p) - _keys[0] : _slen ];

	cs = bfo_rail__trans_targs[_trans];

	if ( bfo_rail__trans_actions[_trans] == 0 )
		goto _again;

	switch ( bfo_rail__trans_actions[_trans] ) {
	case 4:
	{ BFO_RAIL__EMIT(SEND_PROBE); }
	break;
	case 3:
	{ BFO_RAIL__EMIT(SEND_PROBEACK); }
	break;
	case 9:
	{ BFO_RAIL__EMIT(ADMIT); }
	break;
	case 5:
	{ BFO_RAIL__EMIT(SEND_BROKEN); }
	break;
	case 2:
	{ BFO_RAIL__EMIT(SCHEDULE_RECONNECT); }
	break;
	case 7:
	{ BFO_RAIL__EMIT(RECONNECT); }
	break;
	case 8:
	{ BFO_RAIL__EMIT(RETIRE); }
	break;
	case 6:
	{ BFO_RAIL__EMIT(SEND_PROBEACK); }
	{ BFO_RAIL__EMIT(SEND_PROBE); }
	break;
	case 10:
	{ BFO_RAIL__EMIT(MAP_OUT); }
	{ BFO_RAIL__EMIT(SCHEDULE_RECONNECT); }
	break;
	case 11:
	{ BFO_RAIL__EMIT(MAP_OUT); }
	{ BFO_RAIL__EMIT(SEND_BROKEN); }
	{ BFO_RAIL__EMIT(SCHEDULE_RECONNECT); }
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
	switch ( bfo_rail__eof_actions[cs] ) {
	case 1:
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
