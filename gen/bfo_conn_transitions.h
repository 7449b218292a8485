// SPDX-License-Identifier: BSD-3-Clause
/* GENERATED FILE - DO NOT EDIT.
 * Every transition of the connection (one transport connection to one peer on one rail) machine, as Ragel built it.
 * Generated from spec/conn.rl, spec/conn_binding.rl, spec/conn_alphabet.tab by tools/bfo_gen.py (run `make gen`).
 * Change the spec and regenerate; `make check-gen` fails when this
 * file is not what the spec generates. */
#ifndef BFO_CONN_TRANSITIONS_H
#define BFO_CONN_TRANSITIONS_H

#include "bfo_conn.h"

#if !defined(BFO_GEN_STAMP) || BFO_GEN_STAMP != 0xedf8e343
#error "gen/bfo_conn_transitions.h and gen/bfo_alphabet.h come from different runs of tools/bfo_gen.py (BFO_GEN_STAMP): regenerate with make gen"
#endif

/* BFO_CONN_TRANSITIONS(X) calls X(FROM, EVENT, TO, N, A1, A2, A3, A4) once per
 * transition: states and events without their prefixes, the N actions by
 * their spec names, padded with NONE. */
#define BFO_CONN_TRANSITIONS(X) \
    X(NEW, PEER_CHOSEN, DOWN, 0, NONE, NONE, NONE, NONE) \
    X(DOWN, CONNECT_ASKED, DIALING, 1, dial, NONE, NONE, NONE) \
    X(DOWN, LOWER_HELLO_RCVD, REPLY_SENT, 2, take, send_reply, NONE, NONE) \
    X(DOWN, HIGHER_HELLO_RCVD, REPLY_SENT, 2, take, send_reply, NONE, NONE) \
    X(DOWN, STALE_HELLO_RCVD, DOWN, 1, refuse, NONE, NONE, NONE) \
    X(DOWN, LOWER_CLAIM_RCVD, REPLY_SENT, 1, send_reply, NONE, NONE, NONE) \
    X(DOWN, HIGHER_CLAIM_RCVD, REPLY_SENT, 1, send_reply, NONE, NONE, NONE) \
    X(DOWN, PROOF_RCVD, UP, 2, take, report_up, NONE, NONE) \
    X(DOWN, PROOF_BAD_RCVD, DOWN, 1, refuse, NONE, NONE, NONE) \
    X(DIALING, CONNECT_ASKED, DIALING, 0, NONE, NONE, NONE, NONE) \
    X(DIALING, DIAL_CONNECTED, HELLO_SENT, 1, send_hello, NONE, NONE, NONE) \
    X(DIALING, DIAL_FAILED, DOWN, 2, report_failed, close, NONE, NONE) \
    X(DIALING, LOWER_HELLO_RCVD, REPLY_SENT_ASKED, 3, close, take, send_reply, NONE) \
    X(DIALING, HIGHER_HELLO_RCVD, DIALING, 1, refuse_tie, NONE, NONE, NONE) \
    X(DIALING, STALE_HELLO_RCVD, DIALING, 1, refuse, NONE, NONE, NONE) \
    X(DIALING, BROKEN, DOWN, 2, report_failed, close, NONE, NONE) \
    X(DIALING, TIMED_OUT, DOWN, 2, report_failed, close, NONE, NONE) \
    X(DIALING, LOWER_CLAIM_RCVD, DIALING, 1, send_reply, NONE, NONE, NONE) \
    X(DIALING, HIGHER_CLAIM_RCVD, DIALING, 1, refuse_tie, NONE, NONE, NONE) \
    X(DIALING, PROOF_RCVD, UP, 3, close, take, report_up, NONE) \
    X(DIALING, PROOF_BAD_RCVD, DIALING, 1, refuse, NONE, NONE, NONE) \
    X(HELLO_SENT, CONNECT_ASKED, HELLO_SENT, 0, NONE, NONE, NONE, NONE) \
    X(HELLO_SENT, REPLY_RCVD, UP, 1, report_up, NONE, NONE, NONE) \
    X(HELLO_SENT, LOWER_HELLO_RCVD, REPLY_SENT_ASKED, 3, close, take, send_reply, NONE) \
    X(HELLO_SENT, HIGHER_HELLO_RCVD, HELLO_SENT, 1, refuse_tie, NONE, NONE, NONE) \
    X(HELLO_SENT, STALE_HELLO_RCVD, HELLO_SENT, 1, refuse, NONE, NONE, NONE) \
    X(HELLO_SENT, TIE_LOST_RCVD, AWAITING_HELLO, 2, close, wait, NONE, NONE) \
    X(HELLO_SENT, BROKEN, DOWN, 2, report_failed, close, NONE, NONE) \
    X(HELLO_SENT, TIMED_OUT, DOWN, 2, report_failed, close, NONE, NONE) \
    X(HELLO_SENT, LOWER_CLAIM_RCVD, HELLO_SENT, 1, send_reply, NONE, NONE, NONE) \
    X(HELLO_SENT, HIGHER_CLAIM_RCVD, HELLO_SENT, 1, refuse_tie, NONE, NONE, NONE) \
    X(HELLO_SENT, PROOF_RCVD, UP, 3, close, take, report_up, NONE) \
    X(HELLO_SENT, PROOF_BAD_RCVD, HELLO_SENT, 1, refuse, NONE, NONE, NONE) \
    X(UP, CONNECT_ASKED, DIALING, 2, close, dial, NONE, NONE) \
    X(UP, LOWER_HELLO_RCVD, REPLY_SENT, 4, report_error, close, take, send_reply) \
    X(UP, HIGHER_HELLO_RCVD, REPLY_SENT, 4, report_error, close, take, send_reply) \
    X(UP, STALE_HELLO_RCVD, UP, 1, refuse, NONE, NONE, NONE) \
    X(UP, BROKEN, DOWN, 2, report_error, close, NONE, NONE) \
    X(UP, LOWER_CLAIM_RCVD, UP, 1, send_reply, NONE, NONE, NONE) \
    X(UP, HIGHER_CLAIM_RCVD, UP, 1, refuse_tie, NONE, NONE, NONE) \
    X(UP, PROOF_RCVD, UP, 4, report_error, close, take, report_up) \
    X(UP, PROOF_BAD_RCVD, UP, 1, refuse, NONE, NONE, NONE) \
    X(REPLY_SENT, CONNECT_ASKED, REPLY_SENT_ASKED, 0, NONE, NONE, NONE, NONE) \
    X(REPLY_SENT, LOWER_HELLO_RCVD, REPLY_SENT, 3, close, take, send_reply, NONE) \
    X(REPLY_SENT, HIGHER_HELLO_RCVD, REPLY_SENT, 3, close, take, send_reply, NONE) \
    X(REPLY_SENT, STALE_HELLO_RCVD, REPLY_SENT, 1, refuse, NONE, NONE, NONE) \
    X(REPLY_SENT, PEER_READY, UP, 1, report_up, NONE, NONE, NONE) \
    X(REPLY_SENT, BROKEN, DOWN, 1, close, NONE, NONE, NONE) \
    X(REPLY_SENT, TIMED_OUT, DOWN, 1, close, NONE, NONE, NONE) \
    X(REPLY_SENT, LOWER_CLAIM_RCVD, REPLY_SENT, 1, send_reply, NONE, NONE, NONE) \
    X(REPLY_SENT, HIGHER_CLAIM_RCVD, REPLY_SENT, 1, send_reply, NONE, NONE, NONE) \
    X(REPLY_SENT, PROOF_RCVD, UP, 3, close, take, report_up, NONE) \
    X(REPLY_SENT, PROOF_BAD_RCVD, REPLY_SENT, 1, refuse, NONE, NONE, NONE) \
    X(REPLY_SENT_ASKED, CONNECT_ASKED, REPLY_SENT_ASKED, 0, NONE, NONE, NONE, NONE) \
    X(REPLY_SENT_ASKED, LOWER_HELLO_RCVD, REPLY_SENT_ASKED, 3, close, take, send_reply, NONE) \
    X(REPLY_SENT_ASKED, HIGHER_HELLO_RCVD, REPLY_SENT_ASKED, 3, close, take, send_reply, NONE) \
    X(REPLY_SENT_ASKED, STALE_HELLO_RCVD, REPLY_SENT_ASKED, 1, refuse, NONE, NONE, NONE) \
    X(REPLY_SENT_ASKED, PEER_READY, UP, 1, report_up, NONE, NONE, NONE) \
    X(REPLY_SENT_ASKED, BROKEN, DOWN, 2, report_failed, close, NONE, NONE) \
    X(REPLY_SENT_ASKED, TIMED_OUT, DOWN, 2, report_failed, close, NONE, NONE) \
    X(REPLY_SENT_ASKED, LOWER_CLAIM_RCVD, REPLY_SENT_ASKED, 1, send_reply, NONE, NONE, NONE) \
    X(REPLY_SENT_ASKED, HIGHER_CLAIM_RCVD, REPLY_SENT_ASKED, 1, send_reply, NONE, NONE, NONE) \
    X(REPLY_SENT_ASKED, PROOF_RCVD, UP, 3, close, take, report_up, NONE) \
    X(REPLY_SENT_ASKED, PROOF_BAD_RCVD, REPLY_SENT_ASKED, 1, refuse, NONE, NONE, NONE) \
    X(AWAITING_HELLO, CONNECT_ASKED, AWAITING_HELLO, 0, NONE, NONE, NONE, NONE) \
    X(AWAITING_HELLO, LOWER_HELLO_RCVD, REPLY_SENT_ASKED, 2, take, send_reply, NONE, NONE) \
    X(AWAITING_HELLO, STALE_HELLO_RCVD, AWAITING_HELLO, 1, refuse, NONE, NONE, NONE) \
    X(AWAITING_HELLO, TIMED_OUT, DOWN, 1, report_failed, NONE, NONE, NONE) \
    X(AWAITING_HELLO, LOWER_CLAIM_RCVD, AWAITING_HELLO, 1, send_reply, NONE, NONE, NONE) \
    X(AWAITING_HELLO, PROOF_RCVD, UP, 2, take, report_up, NONE, NONE) \
    X(AWAITING_HELLO, PROOF_BAD_RCVD, AWAITING_HELLO, 1, refuse, NONE, NONE, NONE)

#define BFO_CONN_NUM_TRANSITIONS 71

#endif /* BFO_CONN_TRANSITIONS_H */
