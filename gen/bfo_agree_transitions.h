// SPDX-License-Identifier: BSD-3-Clause
/* GENERATED FILE - DO NOT EDIT.
 * Every transition of the agreement (one rank's part in one fault-tolerant agreement of a group) machine, as Ragel built it.
 * Generated from spec/agree.rl, spec/agree_binding.rl, spec/agree_alphabet.tab by tools/bfo_gen.py (run `make gen`).
 * Change the spec and regenerate; `make check-gen` fails when this
 * file is not what the spec generates. */
#ifndef BFO_AGREE_TRANSITIONS_H
#define BFO_AGREE_TRANSITIONS_H

#include "bfo_agree.h"

#if !defined(BFO_GEN_STAMP) || BFO_GEN_STAMP != 0xedf8e343
#error "gen/bfo_agree_transitions.h and gen/bfo_alphabet.h come from different runs of tools/bfo_gen.py (BFO_GEN_STAMP): regenerate with make gen"
#endif

/* BFO_AGREE_TRANSITIONS(X) calls X(FROM, EVENT, TO, N, A1, A2, A3, A4) once per
 * transition: states and events without their prefixes, the N actions by
 * their spec names, padded with NONE. */
#define BFO_AGREE_TRANSITIONS(X) \
    X(IDLE, AGREE_CALLED, ROUND, 1, send_round, NONE, NONE, NONE) \
    X(ROUND, ROUND_SAME, DECIDING, 2, decide, send_decision, NONE, NONE) \
    X(ROUND, ROUND_CHANGED, ROUND, 2, next_round, send_round, NONE, NONE) \
    X(ROUND, DECISION_RCVD, DECIDING, 2, adopt, send_decision, NONE, NONE) \
    X(ROUND, MEMBER_LOST, ABORTING, 0, NONE, NONE, NONE, NONE) \
    X(DECIDING, SENDS_DONE, IDLE, 1, finish, NONE, NONE, NONE) \
    X(DECIDING, MEMBER_LOST, DECIDING, 0, NONE, NONE, NONE, NONE) \
    X(ABORTING, DECISION_RCVD, ABORTING, 0, NONE, NONE, NONE, NONE) \
    X(ABORTING, SENDS_DONE, ABORTED, 1, abort, NONE, NONE, NONE) \
    X(ABORTING, MEMBER_LOST, ABORTING, 0, NONE, NONE, NONE, NONE) \
    X(ABORTED, MEMBER_LOST, ABORTED, 0, NONE, NONE, NONE, NONE)

#define BFO_AGREE_NUM_TRANSITIONS 11

#endif /* BFO_AGREE_TRANSITIONS_H */
