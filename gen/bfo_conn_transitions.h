// SPDX-License-Identifier: BSD-3-Clause
/* GENERATED FILE - DO NOT EDIT.
 * Every transition of the connection (one transport connection to one peer on one rail) machine, as Ragel built it.
 * Generated from spec/conn.rl, spec/conn_binding.rl, spec/conn_alphabet.tab by tools/bfo_gen.py (run `make gen`).
 * Change the spec and regenerate; `make check-gen` fails when this
 * file is not what the spec generates. */
#ifndef BFO_CONN_TRANSITIONS_H
#define BFO_CONN_TRANSITIONS_H

#include "bfo_conn.h"

#if !defined(BFO_GEN_STAMP) || BFO_GEN_STAMP != 0xcf0a9d96
#error "gen/bfo_conn_transitions.h and gen/bfo_alphabet.h come from different runs of tools/bfo_gen.py (BFO_GEN_STAMP): regenerate with make gen"
#endif

/* BFO_CONN_TRANSITIONS(X) calls X(FROM, EVENT, TO, N, A1, A2, A3, A4) once per
 * transition: states and events without their prefixes, the N actions by
 * their spec names, padded with NONE. */
#define BFO_CONN_TRANSITIONS(X) \
    X(NEW, DIALER_CHOSEN, DIALER_DOWN, 0, NONE, NONE, NONE, NONE) \
    X(NEW, ACCEPTOR_CHOSEN, ACCEPTOR_DOWN, 0, NONE, NONE, NONE, NONE) \
    X(DIALER_DOWN, CONNECT_ASKED, DIALING, 1, dial, NONE, NONE, NONE) \
    X(DIALER_DOWN, HELLO_RCVD, DIALER_DOWN, 1, refuse, NONE, NONE, NONE) \
    X(DIALER_DOWN, STALE_HELLO_RCVD, DIALER_DOWN, 1, refuse, NONE, NONE, NONE) \
    X(DIALING, CONNECT_ASKED, DIALING, 0, NONE, NONE, NONE, NONE) \
    X(DIALING, DIAL_CONNECTED, HELLO_SENT, 1, send_hello, NONE, NONE, NONE) \
    X(DIALING, DIAL_FAILED, DIALER_DOWN, 2, report_failed, close, NONE, NONE) \
    X(DIALING, HELLO_RCVD, DIALING, 1, refuse, NONE, NONE, NONE) \
    X(DIALING, STALE_HELLO_RCVD, DIALING, 1, refuse, NONE, NONE, NONE) \
    X(DIALING, BROKEN, DIALER_DOWN, 2, report_failed, close, NONE, NONE) \
    X(DIALING, TIMED_OUT, DIALER_DOWN, 2, report_failed, close, NONE, NONE) \
    X(HELLO_SENT, CONNECT_ASKED, HELLO_SENT, 0, NONE, NONE, NONE, NONE) \
    X(HELLO_SENT, REPLY_RCVD, DIALER_UP, 1, report_up, NONE, NONE, NONE) \
    X(HELLO_SENT, HELLO_RCVD, HELLO_SENT, 1, refuse, NONE, NONE, NONE) \
    X(HELLO_SENT, STALE_HELLO_RCVD, HELLO_SENT, 1, refuse, NONE, NONE, NONE) \
    X(HELLO_SENT, BROKEN, DIALER_DOWN, 2, report_failed, close, NONE, NONE) \
    X(HELLO_SENT, TIMED_OUT, DIALER_DOWN, 2, report_failed, close, NONE, NONE) \
    X(DIALER_UP, CONNECT_ASKED, DIALING, 2, close, dial, NONE, NONE) \
    X(DIALER_UP, HELLO_RCVD, DIALER_UP, 1, refuse, NONE, NONE, NONE) \
    X(DIALER_UP, STALE_HELLO_RCVD, DIALER_UP, 1, refuse, NONE, NONE, NONE) \
    X(DIALER_UP, BROKEN, DIALER_DOWN, 2, report_error, close, NONE, NONE) \
    X(ACCEPTOR_DOWN, CONNECT_ASKED, AWAITING_HELLO, 1, wait, NONE, NONE, NONE) \
    X(ACCEPTOR_DOWN, HELLO_RCVD, REPLY_SENT, 2, take, send_reply, NONE, NONE) \
    X(ACCEPTOR_DOWN, STALE_HELLO_RCVD, ACCEPTOR_DOWN, 1, refuse, NONE, NONE, NONE) \
    X(AWAITING_HELLO, CONNECT_ASKED, AWAITING_HELLO, 1, wait, NONE, NONE, NONE) \
    X(AWAITING_HELLO, HELLO_RCVD, REPLY_SENT_ASKED, 2, take, send_reply, NONE, NONE) \
    X(AWAITING_HELLO, STALE_HELLO_RCVD, AWAITING_HELLO, 1, refuse, NONE, NONE, NONE) \
    X(AWAITING_HELLO, TIMED_OUT, ACCEPTOR_DOWN, 1, report_failed, NONE, NONE, NONE) \
    X(REPLY_SENT_ASKED, CONNECT_ASKED, REPLY_SENT_ASKED, 0, NONE, NONE, NONE, NONE) \
    X(REPLY_SENT_ASKED, HELLO_RCVD, REPLY_SENT_ASKED, 3, close, take, send_reply, NONE) \
    X(REPLY_SENT_ASKED, STALE_HELLO_RCVD, REPLY_SENT_ASKED, 1, refuse, NONE, NONE, NONE) \
    X(REPLY_SENT_ASKED, PEER_READY, ACCEPTOR_UP, 1, report_up, NONE, NONE, NONE) \
    X(REPLY_SENT_ASKED, BROKEN, AWAITING_HELLO, 1, close, NONE, NONE, NONE) \
    X(REPLY_SENT_ASKED, TIMED_OUT, ACCEPTOR_DOWN, 2, report_failed, close, NONE, NONE) \
    X(ACCEPTOR_UP, CONNECT_ASKED, AWAITING_HELLO, 2, close, wait, NONE, NONE) \
    X(ACCEPTOR_UP, HELLO_RCVD, REPLY_SENT, 4, report_error, close, take, send_reply) \
    X(ACCEPTOR_UP, STALE_HELLO_RCVD, ACCEPTOR_UP, 1, refuse, NONE, NONE, NONE) \
    X(ACCEPTOR_UP, BROKEN, ACCEPTOR_DOWN, 2, report_error, close, NONE, NONE) \
    X(REPLY_SENT, CONNECT_ASKED, REPLY_SENT_ASKED, 0, NONE, NONE, NONE, NONE) \
    X(REPLY_SENT, HELLO_RCVD, REPLY_SENT, 3, close, take, send_reply, NONE) \
    X(REPLY_SENT, STALE_HELLO_RCVD, REPLY_SENT, 1, refuse, NONE, NONE, NONE) \
    X(REPLY_SENT, PEER_READY, ACCEPTOR_UP, 1, report_up, NONE, NONE, NONE) \
    X(REPLY_SENT, BROKEN, ACCEPTOR_DOWN, 1, close, NONE, NONE, NONE) \
    X(REPLY_SENT, TIMED_OUT, ACCEPTOR_DOWN, 1, close, NONE, NONE, NONE)

#define BFO_CONN_NUM_TRANSITIONS 45

#endif /* BFO_CONN_TRANSITIONS_H */
