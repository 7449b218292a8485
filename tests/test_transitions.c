// SPDX-License-Identifier: BSD-3-Clause
/* test_transitions.c - every transition of every machine, one test each.
 *
 * The tables below are the expected behaviour, written by hand: for each
 * machine every legal (state, event) -> (next state, actions).  Each row is
 * a named test ("send: RNDV_SENT --ACK_RCVD--> FRAGS_SENDING / send_frags")
 * that puts the machine in the state and feeds the event.  For each state,
 * one more test feeds every other event and expects BFO_ERR_ILLEGAL_EVENT
 * with the state unchanged.  And per machine, a coverage test compares the
 * table with the transitions Ragel built (gen/bfo_<m>_transitions.h): a
 * transition in the spec without a row, or a row the spec no longer has,
 * fails `make check`.  Change the protocol: edit spec/, `make gen`, then
 * make this table say what you meant.
 *
 * The conn machine (spec/conn.rl: one transport connection, run by the
 * transports through backends/bfo_link.h) has an alphabet of its own
 * (BFO_CONN_EV_*): its table names its events, and "every other event" is
 * every other event of that alphabet.  So has the peer machine (spec/peer.rl:
 * one other process as this rank sees it, run by the engine; BFO_PEER_EV_*).
 */
#include "bfo_test.h"

#include "bfo_conn_transitions.h"
#include "bfo_peer_transitions.h"
#include "bfo_agree_transitions.h"
#include "bfo_rail_transitions.h"
#include "bfo_recv_transitions.h"
#include "bfo_send_transitions.h"

typedef struct row {
    int from, event, to;
    const char *actions; /* spec names, space separated; "" for none */
} row;

/* ---------------------------------------------------------------- send -- */
#define S(from, ev, to, acts) { BFO_SEND_ST_##from, BFO_EV_##ev, BFO_SEND_ST_##to, acts }
static const row send_rows[] = {
    S(IDLE, EAGER_CHOSEN, MATCH_SENT, "post_match"),
    S(IDLE, RNDV_CHOSEN, RNDV_SENT, "post_rndv"),
    S(IDLE, RGET_CHOSEN, RGET_SENT, "post_rget"),
    S(IDLE, PEER_UNREACHABLE, UNREACHABLE_DRAINING, ""),

    S(MATCH_SENT, MATCH_DELIVERED, COMPLETE, "complete"),
    S(MATCH_SENT, MATCH_FAILED, MATCH_SENT, "post_match"),
    S(MATCH_SENT, CANCEL_REQUESTED, CANCEL_SENT, "withdraw"),
    S(MATCH_SENT, PEER_UNREACHABLE, UNREACHABLE_DRAINING, ""),

    S(CANCEL_SENT, MATCH_DELIVERED, CANCELLED, "complete_cancelled"),
    S(CANCEL_SENT, MATCH_FAILED, CANCEL_SENT, "post_match"),
    S(CANCEL_SENT, PEER_UNREACHABLE, CANCEL_DRAINING, ""),

    S(CANCEL_DRAINING, MATCH_DELIVERED, CANCELLED, "complete_cancelled"),
    S(CANCEL_DRAINING, MATCH_FAILED, CANCEL_DRAINING, ""),
    S(CANCEL_DRAINING, PEER_UNREACHABLE, CANCEL_DRAINING, ""),
    S(CANCEL_DRAINING, DRAINED, CANCELLED, "complete_cancelled"),

    S(RNDV_SENT, RNDV_DELIVERED, RNDV_SENT, ""),
    S(RNDV_SENT, RNDV_FAILED, RNDV_SENT, "post_rndv"),
    S(RNDV_SENT, CANCEL_REQUESTED, CANCEL_SENT, "withdraw"),
    S(RNDV_SENT, ACK_RCVD, FRAGS_SENDING, "send_frags"),
    S(RNDV_SENT, PUT_RCVD, PUTS_SERVING, "post_write"),
    S(RNDV_SENT, RECVERRNOTIFY_RCVD, ERROR_DRAINING, "note_error"),
    S(RNDV_SENT, PEER_UNREACHABLE, UNREACHABLE_DRAINING, ""),

    S(FRAGS_SENDING, RNDV_DELIVERED, FRAGS_SENDING, ""),
    S(FRAGS_SENDING, RNDV_FAILED, FRAGS_SENDING, ""),
    S(FRAGS_SENDING, RGET_DELIVERED, FRAGS_SENDING, ""),
    S(FRAGS_SENDING, RGET_FAILED, FRAGS_SENDING, ""),
    S(FRAGS_SENDING, FRAG_DELIVERED, FRAGS_SENDING, "send_frags"),
    S(FRAGS_SENDING, FRAG_FAILED, ERROR_DRAINING, "note_error"),
    S(FRAGS_SENDING, RECVERRNOTIFY_RCVD, ERROR_DRAINING, "note_error"),
    S(FRAGS_SENDING, ALL_DELIVERED, COMPLETE, "complete"),
    S(FRAGS_SENDING, PEER_UNREACHABLE, UNREACHABLE_DRAINING, ""),

    S(PUTS_SERVING, RNDV_DELIVERED, PUTS_SERVING, ""),
    S(PUTS_SERVING, RNDV_FAILED, PUTS_SERVING, ""),
    S(PUTS_SERVING, PUT_RCVD, PUTS_SERVING, "post_write"),
    S(PUTS_SERVING, WRITE_COMPLETED, PUTS_SERVING, "post_fin"),
    S(PUTS_SERVING, WRITE_FAILED, ERROR_DRAINING, "note_error"),
    S(PUTS_SERVING, FIN_DELIVERED, PUTS_SERVING, ""),
    S(PUTS_SERVING, FIN_FAILED, PUTS_SERVING, "post_fin"),
    S(PUTS_SERVING, RECVERRNOTIFY_RCVD, ERROR_DRAINING, "note_error"),
    S(PUTS_SERVING, ALL_DELIVERED, COMPLETE, "complete"),
    S(PUTS_SERVING, PEER_UNREACHABLE, UNREACHABLE_DRAINING, ""),

    S(RGET_SENT, RGET_DELIVERED, RGET_SENT, ""),
    S(RGET_SENT, RGET_FAILED, RGET_SENT, "post_rget"),
    S(RGET_SENT, CANCEL_REQUESTED, CANCEL_SENT, "withdraw"),
    S(RGET_SENT, FIN_RCVD, RGET_SENT, "note_fin"),
    S(RGET_SENT, FIN_DUP_RCVD, RGET_SENT, "drop"),
    S(RGET_SENT, ACK_RCVD, FRAGS_SENDING, "send_frags"),
    S(RGET_SENT, RECVERRNOTIFY_RCVD, ERROR_DRAINING, "note_error"),
    S(RGET_SENT, ALL_DELIVERED, COMPLETE, "complete"),
    S(RGET_SENT, PEER_UNREACHABLE, UNREACHABLE_DRAINING, ""),

    S(ERROR_DRAINING, RNDV_DELIVERED, ERROR_DRAINING, ""),
    S(ERROR_DRAINING, RNDV_FAILED, ERROR_DRAINING, ""),
    S(ERROR_DRAINING, RGET_DELIVERED, ERROR_DRAINING, ""),
    S(ERROR_DRAINING, RGET_FAILED, ERROR_DRAINING, ""),
    S(ERROR_DRAINING, FRAG_DELIVERED, ERROR_DRAINING, ""),
    S(ERROR_DRAINING, FRAG_FAILED, ERROR_DRAINING, ""),
    S(ERROR_DRAINING, WRITE_COMPLETED, ERROR_DRAINING, ""),
    S(ERROR_DRAINING, WRITE_FAILED, ERROR_DRAINING, ""),
    S(ERROR_DRAINING, FIN_DELIVERED, ERROR_DRAINING, ""),
    S(ERROR_DRAINING, FIN_FAILED, ERROR_DRAINING, ""),
    S(ERROR_DRAINING, ACK_RCVD, ERROR_DRAINING, "drop"),
    S(ERROR_DRAINING, PUT_RCVD, ERROR_DRAINING, "drop"),
    S(ERROR_DRAINING, FIN_RCVD, ERROR_DRAINING, "drop"),
    S(ERROR_DRAINING, FIN_DUP_RCVD, ERROR_DRAINING, "drop"),
    S(ERROR_DRAINING, RECVERRNOTIFY_RCVD, ERROR_DRAINING, "drop"),
    S(ERROR_DRAINING, DRAINED, NOTIFY_SENT, "post_notify"),
    S(ERROR_DRAINING, ALL_DELIVERED, COMPLETE, "complete"),
    S(ERROR_DRAINING, PEER_UNREACHABLE, UNREACHABLE_DRAINING, ""),

    S(NOTIFY_SENT, NOTIFY_DELIVERED, NOTIFY_LANDED, ""),
    S(NOTIFY_SENT, NOTIFY_FAILED, NOTIFY_SENT, "repost_notify"),
    S(NOTIFY_SENT, RESTARTACK_RCVD, RESTART_ACKED, ""),
    S(NOTIFY_SENT, RESTARTNACK_RCVD, RESTART_NACKED, ""),
    S(NOTIFY_SENT, PEER_UNREACHABLE, UNREACHABLE_DRAINING, ""),

    S(NOTIFY_LANDED, RESTARTACK_RCVD, RESTARTED, "restart"),
    S(NOTIFY_LANDED, RESTARTNACK_RCVD, COMPLETE, "complete"),
    S(NOTIFY_LANDED, PEER_UNREACHABLE, UNREACHABLE_DRAINING, ""),

    S(RESTART_ACKED, NOTIFY_DELIVERED, RESTARTED, "restart"),
    S(RESTART_ACKED, NOTIFY_FAILED, RESTARTED, "restart"),
    S(RESTART_ACKED, PEER_UNREACHABLE, UNREACHABLE_DRAINING, ""),

    S(RESTART_NACKED, NOTIFY_DELIVERED, COMPLETE, "complete"),
    S(RESTART_NACKED, NOTIFY_FAILED, COMPLETE, "complete"),
    S(RESTART_NACKED, PEER_UNREACHABLE, RESTART_NACKED, ""),

    S(RESTARTED, RNDV_CHOSEN, RNDV_SENT, "post_rndv"),
    S(RESTARTED, RGET_CHOSEN, RGET_SENT, "post_rget"),
    S(RESTARTED, PEER_UNREACHABLE, UNREACHABLE_DRAINING, ""),

    S(UNREACHABLE_DRAINING, MATCH_DELIVERED, COMPLETE, "complete"),
    S(UNREACHABLE_DRAINING, MATCH_FAILED, UNREACHABLE_DRAINING, ""),
    S(UNREACHABLE_DRAINING, RNDV_DELIVERED, UNREACHABLE_DRAINING, ""),
    S(UNREACHABLE_DRAINING, RNDV_FAILED, UNREACHABLE_DRAINING, ""),
    S(UNREACHABLE_DRAINING, RGET_DELIVERED, UNREACHABLE_DRAINING, ""),
    S(UNREACHABLE_DRAINING, RGET_FAILED, UNREACHABLE_DRAINING, ""),
    S(UNREACHABLE_DRAINING, FRAG_DELIVERED, UNREACHABLE_DRAINING, ""),
    S(UNREACHABLE_DRAINING, FRAG_FAILED, UNREACHABLE_DRAINING, ""),
    S(UNREACHABLE_DRAINING, WRITE_COMPLETED, UNREACHABLE_DRAINING, ""),
    S(UNREACHABLE_DRAINING, WRITE_FAILED, UNREACHABLE_DRAINING, ""),
    S(UNREACHABLE_DRAINING, FIN_DELIVERED, UNREACHABLE_DRAINING, ""),
    S(UNREACHABLE_DRAINING, FIN_FAILED, UNREACHABLE_DRAINING, ""),
    S(UNREACHABLE_DRAINING, NOTIFY_DELIVERED, UNREACHABLE_DRAINING, ""),
    S(UNREACHABLE_DRAINING, NOTIFY_FAILED, UNREACHABLE_DRAINING, ""),
    S(UNREACHABLE_DRAINING, ACK_RCVD, UNREACHABLE_DRAINING, "drop"),
    S(UNREACHABLE_DRAINING, PUT_RCVD, UNREACHABLE_DRAINING, "drop"),
    S(UNREACHABLE_DRAINING, FIN_RCVD, UNREACHABLE_DRAINING, "drop"),
    S(UNREACHABLE_DRAINING, FIN_DUP_RCVD, UNREACHABLE_DRAINING, "drop"),
    S(UNREACHABLE_DRAINING, RECVERRNOTIFY_RCVD, UNREACHABLE_DRAINING, "drop"),
    S(UNREACHABLE_DRAINING, RESTARTACK_RCVD, UNREACHABLE_DRAINING, "drop"),
    S(UNREACHABLE_DRAINING, RESTARTNACK_RCVD, UNREACHABLE_DRAINING, "drop"),
    S(UNREACHABLE_DRAINING, PEER_UNREACHABLE, UNREACHABLE_DRAINING, ""),
    S(UNREACHABLE_DRAINING, ALL_DELIVERED, COMPLETE, "complete"),
    S(UNREACHABLE_DRAINING, DRAINED, FAILED, "fail_unreachable"),

    S(COMPLETE, FIN_DUP_RCVD, COMPLETE, "drop"),
    S(COMPLETE, RECVERRNOTIFY_RCVD, COMPLETE, "drop"),
    S(COMPLETE, RESTARTNACK_RCVD, COMPLETE, "drop"),
    S(COMPLETE, PEER_UNREACHABLE, COMPLETE, ""),

    S(FAILED, ACK_RCVD, FAILED, "drop"),
    S(FAILED, PUT_RCVD, FAILED, "drop"),
    S(FAILED, FIN_RCVD, FAILED, "drop"),
    S(FAILED, FIN_DUP_RCVD, FAILED, "drop"),
    S(FAILED, RECVERRNOTIFY_RCVD, FAILED, "drop"),
    S(FAILED, RESTARTACK_RCVD, FAILED, "drop"),
    S(FAILED, RESTARTNACK_RCVD, FAILED, "drop"),
    S(FAILED, PEER_UNREACHABLE, FAILED, ""),

    S(CANCELLED, PEER_UNREACHABLE, CANCELLED, ""),
};
#undef S

/* ---------------------------------------------------------------- recv -- */
#define R(from, ev, to, acts) { BFO_RECV_ST_##from, BFO_EV_##ev, BFO_RECV_ST_##to, acts }
static const row recv_rows[] = {
    R(POSTED, MATCH_RCVD, COMPLETE, "deliver_match"),
    R(POSTED, RNDV_RCVD, RNDV_MATCHED, "accept_rndv"),
    R(POSTED, RGET_RCVD, RGET_MATCHED, "accept_rget"),
    R(POSTED, PROBE_MATCHED, CLAIMED, "claim"),
    R(POSTED, CANCEL_REQUESTED, CANCELLED, "complete_cancelled"),
    R(POSTED, PEER_UNREACHABLE, UNREACHABLE_DRAINING, ""),

    R(CLAIMED, MATCH_RCVD, COMPLETE, "deliver_match"),
    R(CLAIMED, RNDV_RCVD, RNDV_MATCHED, "accept_rndv"),
    R(CLAIMED, RGET_RCVD, RGET_MATCHED, "accept_rget"),
    R(CLAIMED, PEER_UNREACHABLE, CLAIMED, ""),

    R(RNDV_MATCHED, COPY_CHOSEN, ACK_SENT, "post_ack"),
    R(RNDV_MATCHED, PUT_CHOSEN, PUTS_SENT, "post_puts"),
    R(RNDV_MATCHED, PEER_UNREACHABLE, UNREACHABLE_DRAINING, ""),

    R(RGET_MATCHED, GET_CHOSEN, READING, "post_reads"),
    R(RGET_MATCHED, COPY_CHOSEN, ACK_SENT, "post_ack"),
    R(RGET_MATCHED, PEER_UNREACHABLE, UNREACHABLE_DRAINING, ""),

    R(ACK_SENT, ACK_DELIVERED, ACK_SENT, ""),
    R(ACK_SENT, ACK_FAILED, RECVERR_SENT, "post_recverrnotify"),
    R(ACK_SENT, FRAG_RCVD, ACK_SENT, "accept_frag"),
    R(ACK_SENT, NOTIFY_RCVD, RESTART_ACK_OWED, "accept_notify"),
    R(ACK_SENT, RNDV_DUP_RCVD, ACK_SENT, "drop"),
    R(ACK_SENT, RGET_DUP_RCVD, ACK_SENT, "drop"),
    R(ACK_SENT, ALL_DELIVERED, COMPLETE, "complete"),
    R(ACK_SENT, PEER_UNREACHABLE, UNREACHABLE_DRAINING, ""),

    R(PUTS_SENT, PUT_DELIVERED, PUTS_SENT, ""),
    R(PUTS_SENT, PUT_FAILED, RECVERR_SENT, "post_recverrnotify"),
    R(PUTS_SENT, FIN_RCVD, PUTS_SENT, "accept_fin post_puts"),
    R(PUTS_SENT, FIN_DUP_RCVD, PUTS_SENT, "drop"),
    R(PUTS_SENT, NOTIFY_RCVD, RESTART_ACK_OWED, "accept_notify"),
    R(PUTS_SENT, RNDV_DUP_RCVD, PUTS_SENT, "drop"),
    R(PUTS_SENT, ALL_DELIVERED, COMPLETE, "complete"),
    R(PUTS_SENT, PEER_UNREACHABLE, UNREACHABLE_DRAINING, ""),

    R(READING, READ_COMPLETED, READING, "post_reads"),
    R(READING, READ_FAILED, RECVERR_SENT, "post_recverrnotify"),
    R(READING, NOTIFY_RCVD, RESTART_ACK_OWED, "accept_notify"),
    R(READING, RGET_DUP_RCVD, READING, "drop"),
    R(READING, ALL_DELIVERED, FIN_SENT, "post_fin"),
    R(READING, PEER_UNREACHABLE, UNREACHABLE_DRAINING, ""),

    R(FIN_SENT, FIN_DELIVERED, COMPLETE, "complete"),
    R(FIN_SENT, FIN_FAILED, FIN_SENT, "post_fin"),
    R(FIN_SENT, RGET_DUP_RCVD, FIN_SENT, "drop"),
    R(FIN_SENT, PEER_UNREACHABLE, UNREACHABLE_DRAINING, ""),

    R(RECVERR_SENT, RECVERRNOTIFY_DELIVERED, RECVERR_SENT, ""),
    R(RECVERR_SENT, RECVERRNOTIFY_FAILED, RECVERR_SENT, "post_recverrnotify"),
    R(RECVERR_SENT, ACK_DELIVERED, RECVERR_SENT, ""),
    R(RECVERR_SENT, ACK_FAILED, RECVERR_SENT, ""),
    R(RECVERR_SENT, PUT_DELIVERED, RECVERR_SENT, ""),
    R(RECVERR_SENT, PUT_FAILED, RECVERR_SENT, ""),
    R(RECVERR_SENT, READ_COMPLETED, RECVERR_SENT, "account_read"),
    R(RECVERR_SENT, READ_FAILED, RECVERR_SENT, ""),
    R(RECVERR_SENT, FRAG_RCVD, RECVERR_SENT, "accept_frag"),
    R(RECVERR_SENT, FIN_RCVD, RECVERR_SENT, "accept_fin"),
    R(RECVERR_SENT, FIN_DUP_RCVD, RECVERR_SENT, "drop"),
    R(RECVERR_SENT, RNDV_DUP_RCVD, RECVERR_SENT, "drop"),
    R(RECVERR_SENT, RGET_DUP_RCVD, RECVERR_SENT, "drop"),
    R(RECVERR_SENT, NOTIFY_RCVD, RESTART_ACK_OWED, "accept_notify"),
    R(RECVERR_SENT, ALL_DELIVERED, COMPLETE, "complete"),
    R(RECVERR_SENT, PEER_UNREACHABLE, UNREACHABLE_DRAINING, ""),

    R(RESTART_ACK_OWED, DRAINED, RESTART_ACKED, "post_restartack"),
    R(RESTART_ACK_OWED, NOTIFY_DUP_RCVD, RESTART_ACK_OWED, "drop"),
    R(RESTART_ACK_OWED, PEER_UNREACHABLE, UNREACHABLE_DRAINING, ""),

    R(RESTART_ACKED, RESTARTACK_DELIVERED, RESTART_ACKED, ""),
    R(RESTART_ACKED, RESTARTACK_FAILED, RESTART_ACKED, "post_restartack"),
    R(RESTART_ACKED, NOTIFY_DUP_RCVD, RESTART_ACKED, "drop"),
    R(RESTART_ACKED, RNDV_RCVD, RNDV_MATCHED, "reset accept_rndv"),
    R(RESTART_ACKED, RGET_RCVD, RGET_MATCHED, "reset accept_rget"),
    R(RESTART_ACKED, PEER_UNREACHABLE, UNREACHABLE_DRAINING, ""),

    R(UNREACHABLE_DRAINING, ACK_DELIVERED, UNREACHABLE_DRAINING, ""),
    R(UNREACHABLE_DRAINING, ACK_FAILED, UNREACHABLE_DRAINING, ""),
    R(UNREACHABLE_DRAINING, PUT_DELIVERED, UNREACHABLE_DRAINING, ""),
    R(UNREACHABLE_DRAINING, PUT_FAILED, UNREACHABLE_DRAINING, ""),
    R(UNREACHABLE_DRAINING, READ_COMPLETED, UNREACHABLE_DRAINING, ""),
    R(UNREACHABLE_DRAINING, READ_FAILED, UNREACHABLE_DRAINING, ""),
    R(UNREACHABLE_DRAINING, FIN_DELIVERED, UNREACHABLE_DRAINING, ""),
    R(UNREACHABLE_DRAINING, FIN_FAILED, UNREACHABLE_DRAINING, ""),
    R(UNREACHABLE_DRAINING, RECVERRNOTIFY_DELIVERED, UNREACHABLE_DRAINING, ""),
    R(UNREACHABLE_DRAINING, RECVERRNOTIFY_FAILED, UNREACHABLE_DRAINING, ""),
    R(UNREACHABLE_DRAINING, RESTARTACK_DELIVERED, UNREACHABLE_DRAINING, ""),
    R(UNREACHABLE_DRAINING, RESTARTACK_FAILED, UNREACHABLE_DRAINING, ""),
    R(UNREACHABLE_DRAINING, FRAG_RCVD, UNREACHABLE_DRAINING, "drop"),
    R(UNREACHABLE_DRAINING, FIN_RCVD, UNREACHABLE_DRAINING, "drop"),
    R(UNREACHABLE_DRAINING, FIN_DUP_RCVD, UNREACHABLE_DRAINING, "drop"),
    R(UNREACHABLE_DRAINING, NOTIFY_RCVD, UNREACHABLE_DRAINING, "drop"),
    R(UNREACHABLE_DRAINING, NOTIFY_DUP_RCVD, UNREACHABLE_DRAINING, "drop"),
    R(UNREACHABLE_DRAINING, RNDV_DUP_RCVD, UNREACHABLE_DRAINING, "drop"),
    R(UNREACHABLE_DRAINING, RGET_DUP_RCVD, UNREACHABLE_DRAINING, "drop"),
    R(UNREACHABLE_DRAINING, PEER_UNREACHABLE, UNREACHABLE_DRAINING, ""),
    R(UNREACHABLE_DRAINING, ALL_DELIVERED, COMPLETE, "complete"),
    R(UNREACHABLE_DRAINING, DRAINED, FAILED, "fail_unreachable"),

    R(COMPLETE, NOTIFY_RCVD, COMPLETE, "post_restartnack"),
    R(COMPLETE, NOTIFY_DUP_RCVD, COMPLETE, "drop"),
    R(COMPLETE, FIN_DUP_RCVD, COMPLETE, "drop"),
    R(COMPLETE, RNDV_DUP_RCVD, COMPLETE, "drop"),
    R(COMPLETE, RGET_DUP_RCVD, COMPLETE, "drop"),
    R(COMPLETE, PEER_UNREACHABLE, COMPLETE, ""),

    R(FAILED, FRAG_RCVD, FAILED, "drop"),
    R(FAILED, FIN_RCVD, FAILED, "drop"),
    R(FAILED, FIN_DUP_RCVD, FAILED, "drop"),
    R(FAILED, NOTIFY_RCVD, FAILED, "drop"),
    R(FAILED, NOTIFY_DUP_RCVD, FAILED, "drop"),
    R(FAILED, RNDV_DUP_RCVD, FAILED, "drop"),
    R(FAILED, RGET_DUP_RCVD, FAILED, "drop"),
    R(FAILED, PEER_UNREACHABLE, FAILED, ""),

    R(CANCELLED, PEER_UNREACHABLE, CANCELLED, ""),
};
#undef R

/* ---------------------------------------------------------------- rail -- */
#define L(from, ev, to, acts) { BFO_RAIL_ST_##from, BFO_EV_##ev, BFO_RAIL_ST_##to, acts }
#define DOWN_LOCAL "map_out send_broken schedule_reconnect"
static const row rail_rows[] = {
    /* DORMANT (issue 37, connections on first use): no connection, none
     * needed.  The engine's need connects it; the peer's connection or its
     * PROBE admits it through PROBING; stray words of connections never
     * asked for are taken and ignored.  No timer fact is legal here
     * (HEARTBEAT_DUE, SILENCE_DETECTED, PROBE_TIMED_OUT, BACKOFF_EXPIRED,
     * RETRIES_EXHAUSTED, DEMOTION_DUE, PROMOTION_DUE), nor a BYE's
     * completion (no BYE goes out on it): test_illegal checks them. */
    L(DORMANT, PEER_NEEDED, CONNECTING, "connect"),
    L(DORMANT, CONNECTED, PROBING, "send_probe"),              /* the peer dialed */
    L(DORMANT, PROBE_RCVD, PROBING, "send_probeack send_probe"), /* ... and probed first */
    L(DORMANT, RAIL_ABSENT, ABSENT, ""),
    L(DORMANT, CONNECT_FAILED, DORMANT, ""),                   /* no attempt of ours */
    L(DORMANT, RAIL_ERROR, DORMANT, ""),                       /* nothing to fail */
    L(DORMANT, BROKEN_RCVD, DORMANT, ""),
    L(DORMANT, PROBEACK_RCVD, DORMANT, ""),                    /* no probe of ours */
    L(DORMANT, PROBE_DELIVERED, DORMANT, ""),
    L(DORMANT, PROBE_FAILED, DORMANT, ""),
    L(DORMANT, PROBEACK_DELIVERED, DORMANT, ""),
    L(DORMANT, PROBEACK_FAILED, DORMANT, ""),
    L(DORMANT, BROKEN_DELIVERED, DORMANT, ""),
    L(DORMANT, BROKEN_FAILED, DORMANT, ""),
    L(DORMANT, LEAVE_REQUESTED, LEFT, "part"),                 /* a later connection parts too */
    L(DORMANT, BYE_RCVD, LEFT, "part"),
    L(DORMANT, PEER_FENCED, RETIRED, "retire"),
    L(DORMANT, CREDIT_RCVD, DORMANT, "take_credit"),
    L(DORMANT, RELAY_RCVD, DORMANT, "take_relay"),
    L(DORMANT, RELAYACK_RCVD, DORMANT, "take_relayack"),
    L(DORMANT, REACH_RCVD, DORMANT, "take_reach"),

    L(CONNECTING, CONNECTED, PROBING, "send_probe"),
    L(CONNECTING, CONNECT_FAILED, FAILED, "schedule_reconnect"),
    L(CONNECTING, RAIL_ERROR, FAILED, "schedule_reconnect"),
    L(CONNECTING, BROKEN_RCVD, FAILED, "schedule_reconnect"),
    L(CONNECTING, PROBE_RCVD, CONNECTING, "send_probeack"),

    L(PROBING, PROBEACK_RCVD, UP, "admit"),
    L(PROBING, PROBE_RCVD, PROBING, "send_probeack"),
    L(PROBING, CONNECT_FAILED, PROBING, ""),
    L(PROBING, PROBE_DELIVERED, PROBING, ""),
    L(PROBING, PROBEACK_DELIVERED, PROBING, ""),
    L(PROBING, BROKEN_DELIVERED, PROBING, ""),
    L(PROBING, BROKEN_FAILED, PROBING, ""),
    L(PROBING, PROBE_FAILED, FAILED, "schedule_reconnect"),
    L(PROBING, PROBEACK_FAILED, FAILED, "schedule_reconnect"),
    L(PROBING, PROBE_TIMED_OUT, FAILED, "schedule_reconnect"),
    L(PROBING, RAIL_ERROR, FAILED, "schedule_reconnect"),
    L(PROBING, BROKEN_RCVD, FAILED, "schedule_reconnect"),

    L(UP, HEARTBEAT_DUE, UP, "send_probe"),
    L(UP, PROBE_RCVD, UP, "send_probeack"),
    L(UP, PROBEACK_RCVD, UP, ""),
    L(UP, CONNECT_FAILED, UP, ""),
    L(UP, PROBE_DELIVERED, UP, ""),
    L(UP, PROBEACK_DELIVERED, UP, ""),
    L(UP, BROKEN_DELIVERED, UP, ""),
    L(UP, BROKEN_FAILED, UP, ""),
    L(UP, RAIL_ERROR, FAILED, DOWN_LOCAL),
    L(UP, PROBE_FAILED, FAILED, DOWN_LOCAL),
    L(UP, PROBEACK_FAILED, FAILED, DOWN_LOCAL),
    L(UP, PROBE_TIMED_OUT, FAILED, DOWN_LOCAL), /* a heartbeat probe unanswered, peer silent */
    L(UP, SILENCE_DETECTED, FAILED, DOWN_LOCAL),
    L(UP, BROKEN_RCVD, FAILED, "map_out schedule_reconnect"),
    L(UP, DEMOTION_DUE, DEMOTED, "demote"), /* slow, or standby with an active rail UP */

    /* DEMOTED: working, slow or standby: probes only, fails as UP does */
    L(DEMOTED, PROMOTION_DUE, UP, "promote"),
    L(DEMOTED, HEARTBEAT_DUE, DEMOTED, "send_probe"),
    L(DEMOTED, PROBE_RCVD, DEMOTED, "send_probeack"),
    L(DEMOTED, PROBEACK_RCVD, DEMOTED, ""),
    L(DEMOTED, CONNECT_FAILED, DEMOTED, ""),
    L(DEMOTED, PROBE_DELIVERED, DEMOTED, ""),
    L(DEMOTED, PROBEACK_DELIVERED, DEMOTED, ""),
    L(DEMOTED, BROKEN_DELIVERED, DEMOTED, ""),
    L(DEMOTED, BROKEN_FAILED, DEMOTED, ""),
    L(DEMOTED, RAIL_ERROR, FAILED, DOWN_LOCAL),
    L(DEMOTED, PROBE_FAILED, FAILED, DOWN_LOCAL),
    L(DEMOTED, PROBEACK_FAILED, FAILED, DOWN_LOCAL),
    L(DEMOTED, PROBE_TIMED_OUT, FAILED, DOWN_LOCAL),
    L(DEMOTED, SILENCE_DETECTED, FAILED, DOWN_LOCAL),
    L(DEMOTED, BROKEN_RCVD, FAILED, "map_out schedule_reconnect"),

    L(FAILED, BACKOFF_EXPIRED, RECONNECTING, "reconnect"),
    L(FAILED, CONNECTED, PROBING, "send_probe"),
    L(FAILED, PROBE_RCVD, PROBING, "send_probeack send_probe"),
    L(FAILED, RETRIES_EXHAUSTED, RETIRED, "retire"),
    L(FAILED, RAIL_ERROR, FAILED, ""),
    L(FAILED, BROKEN_RCVD, FAILED, ""),
    L(FAILED, PROBEACK_RCVD, FAILED, ""),
    L(FAILED, BROKEN_FAILED, FAILED, "send_broken"),
    L(FAILED, BROKEN_DELIVERED, FAILED, ""),
    L(FAILED, PROBE_DELIVERED, FAILED, ""),
    L(FAILED, PROBE_FAILED, FAILED, ""),
    L(FAILED, PROBEACK_DELIVERED, FAILED, ""),
    L(FAILED, PROBEACK_FAILED, FAILED, ""),

    L(RECONNECTING, CONNECTED, PROBING, "send_probe"),
    L(RECONNECTING, CONNECT_FAILED, FAILED, "schedule_reconnect"),
    L(RECONNECTING, RAIL_ERROR, FAILED, "schedule_reconnect"),
    L(RECONNECTING, PROBE_RCVD, RECONNECTING, "send_probeack"),
    L(RECONNECTING, PROBEACK_RCVD, RECONNECTING, ""),
    L(RECONNECTING, BROKEN_RCVD, RECONNECTING, ""),
    L(RECONNECTING, BROKEN_FAILED, RECONNECTING, "send_broken"),
    L(RECONNECTING, BROKEN_DELIVERED, RECONNECTING, ""),
    L(RECONNECTING, PROBE_DELIVERED, RECONNECTING, ""),
    L(RECONNECTING, PROBE_FAILED, RECONNECTING, ""),
    L(RECONNECTING, PROBEACK_DELIVERED, RECONNECTING, ""),
    L(RECONNECTING, PROBEACK_FAILED, RECONNECTING, ""),

    L(RETIRED, PROBE_DELIVERED, RETIRED, ""),
    L(RETIRED, PROBE_FAILED, RETIRED, ""),
    L(RETIRED, PROBEACK_DELIVERED, RETIRED, ""),
    L(RETIRED, PROBEACK_FAILED, RETIRED, ""),
    L(RETIRED, BROKEN_DELIVERED, RETIRED, ""),
    L(RETIRED, BROKEN_FAILED, RETIRED, ""),
    L(RETIRED, RAIL_ERROR, RETIRED, ""),
    L(RETIRED, BROKEN_RCVD, RETIRED, ""),

    /* rails per peer: a rail that does not reach the peer rests in ABSENT */
    L(CONNECTING, RAIL_ABSENT, ABSENT, ""),
    L(FAILED, RAIL_ABSENT, ABSENT, ""),
    L(RECONNECTING, RAIL_ABSENT, ABSENT, ""),
    L(ABSENT, PROBE_DELIVERED, ABSENT, ""),
    L(ABSENT, PROBE_FAILED, ABSENT, ""),
    L(ABSENT, PROBEACK_DELIVERED, ABSENT, ""),
    L(ABSENT, PROBEACK_FAILED, ABSENT, ""),
    L(ABSENT, BROKEN_DELIVERED, ABSENT, ""),
    L(ABSENT, BROKEN_FAILED, ABSENT, ""),
    L(ABSENT, RAIL_ERROR, ABSENT, ""),
    L(ABSENT, CONNECT_FAILED, ABSENT, ""),
    L(ABSENT, BROKEN_RCVD, ABSENT, ""),
    L(ABSENT, PROBE_RCVD, ABSENT, ""),
    L(ABSENT, PROBEACK_RCVD, ABSENT, ""),
    L(ABSENT, RAIL_ABSENT, ABSENT, ""),

    /* flow control: a CREDIT is taken whatever the rail's state */
    L(CONNECTING, CREDIT_RCVD, CONNECTING, "take_credit"),
    L(CONNECTING, RELAY_RCVD, CONNECTING, "take_relay"),         /* routes ride on every rail */
    L(CONNECTING, RELAYACK_RCVD, CONNECTING, "take_relayack"),
    L(CONNECTING, REACH_RCVD, CONNECTING, "take_reach"),
    L(PROBING, CREDIT_RCVD, PROBING, "take_credit"),
    L(PROBING, RELAY_RCVD, PROBING, "take_relay"),         /* routes ride on every rail */
    L(PROBING, RELAYACK_RCVD, PROBING, "take_relayack"),
    L(PROBING, REACH_RCVD, PROBING, "take_reach"),
    L(UP, CREDIT_RCVD, UP, "take_credit"),
    L(UP, RELAY_RCVD, UP, "take_relay"),         /* routes ride on every rail */
    L(UP, RELAYACK_RCVD, UP, "take_relayack"),
    L(UP, REACH_RCVD, UP, "take_reach"),
    L(DEMOTED, CREDIT_RCVD, DEMOTED, "take_credit"),
    L(DEMOTED, RELAY_RCVD, DEMOTED, "take_relay"),         /* routes ride on every rail */
    L(DEMOTED, RELAYACK_RCVD, DEMOTED, "take_relayack"),
    L(DEMOTED, REACH_RCVD, DEMOTED, "take_reach"),
    L(FAILED, CREDIT_RCVD, FAILED, "take_credit"),
    L(FAILED, RELAY_RCVD, FAILED, "take_relay"),         /* routes ride on every rail */
    L(FAILED, RELAYACK_RCVD, FAILED, "take_relayack"),
    L(FAILED, REACH_RCVD, FAILED, "take_reach"),
    L(RECONNECTING, CREDIT_RCVD, RECONNECTING, "take_credit"),
    L(RECONNECTING, RELAY_RCVD, RECONNECTING, "take_relay"),         /* routes ride on every rail */
    L(RECONNECTING, RELAYACK_RCVD, RECONNECTING, "take_relayack"),
    L(RECONNECTING, REACH_RCVD, RECONNECTING, "take_reach"),
    L(ABSENT, CREDIT_RCVD, ABSENT, "take_credit"),
    L(ABSENT, RELAY_RCVD, ABSENT, "take_relay"),         /* routes ride on every rail */
    L(ABSENT, RELAYACK_RCVD, ABSENT, "take_relayack"),
    L(ABSENT, REACH_RCVD, ABSENT, "take_reach"),
    L(RETIRED, CREDIT_RCVD, RETIRED, "take_credit"),
    L(RETIRED, RELAY_RCVD, RETIRED, "take_relay"),         /* routes ride on every rail */
    L(RETIRED, RELAYACK_RCVD, RETIRED, "take_relayack"),
    L(RETIRED, REACH_RCVD, RETIRED, "take_reach"),

    /* up at the handshake (spec/rail.rl, "Up at the handshake"): a
     * connection whose handshake proved the peer both ways is admitted at
     * once, no probe, from every state that waits for or takes a
     * connection; where it is no news it is taken and ignored */
    L(DORMANT, CONNECTED_PROVEN, UP, "admit"),      /* the peer dialed, proven */
    L(CONNECTING, CONNECTED_PROVEN, UP, "admit"),   /* our dial, proven */
    L(PROBING, CONNECTED_PROVEN, UP, "admit"),      /* the peer's PROBE came first */
    L(FAILED, CONNECTED_PROVEN, UP, "admit"),       /* the peer reconnected first */
    L(RECONNECTING, CONNECTED_PROVEN, UP, "admit"),
    L(UP, CONNECTED_PROVEN, UP, ""),                /* a replacement comes after RAIL_ERROR */
    L(DEMOTED, CONNECTED_PROVEN, DEMOTED, ""),      /* stays slow: no promotion by a connection */
    L(ABSENT, CONNECTED_PROVEN, ABSENT, ""),        /* never used for this peer */
    L(RETIRED, CONNECTED_PROVEN, RETIRED, ""),      /* C drops the connection */
    L(LEFT, CONNECTED_PROVEN, LEFT, ""),            /* as CONNECTED: waits for its end */

    /* the peer reported dead (spec/peer.rl, fence): every rail given up */
    L(CONNECTING, PEER_FENCED, RETIRED, "retire"),
    L(PROBING, PEER_FENCED, RETIRED, "retire"),
    L(UP, PEER_FENCED, RETIRED, "retire"),
    L(DEMOTED, PEER_FENCED, RETIRED, "retire"),
    L(FAILED, PEER_FENCED, RETIRED, "retire"),
    L(RECONNECTING, PEER_FENCED, RETIRED, "retire"),
    L(ABSENT, PEER_FENCED, ABSENT, ""),
    L(RETIRED, PEER_FENCED, RETIRED, ""),
    L(LEFT, PEER_FENCED, LEFT, ""),

    /* leaving: this side's LEAVE_REQUESTED, or the peer's BYE (fed to every
     * rail of it); a rail that may have a connection parts, one that is
     * connected carries this side's BYE first */
    L(CONNECTING, LEAVE_REQUESTED, LEFT, "part"),
    L(CONNECTING, BYE_RCVD, LEFT, "part"),
    L(PROBING, LEAVE_REQUESTED, LEFT, "send_bye part"),
    L(PROBING, BYE_RCVD, LEFT, "part"),
    L(UP, LEAVE_REQUESTED, LEFT, "send_bye part"),
    L(UP, BYE_RCVD, LEFT, "part"), /* no map-out, no notice, no reconnect */
    L(DEMOTED, LEAVE_REQUESTED, LEFT, "send_bye part"),
    L(DEMOTED, BYE_RCVD, LEFT, "part"),
    L(FAILED, LEAVE_REQUESTED, LEFT, "part"), /* its back-off ends nowhere */
    L(FAILED, BYE_RCVD, LEFT, "part"),
    L(RECONNECTING, LEAVE_REQUESTED, LEFT, "part"),
    L(RECONNECTING, BYE_RCVD, LEFT, "part"),
    L(ABSENT, LEAVE_REQUESTED, ABSENT, ""), /* never connected: nothing to part */
    L(ABSENT, BYE_RCVD, ABSENT, ""),
    L(RETIRED, LEAVE_REQUESTED, RETIRED, ""),
    L(RETIRED, BYE_RCVD, RETIRED, ""),
    /* LEFT: nothing is a failure; a PROBE is answered (the peer may not
     * have our BYE yet) */
    L(LEFT, LEAVE_REQUESTED, LEFT, ""),
    L(LEFT, BYE_RCVD, LEFT, ""),
    L(LEFT, PROBE_RCVD, LEFT, "send_probeack"),
    L(LEFT, PROBEACK_RCVD, LEFT, ""),
    L(LEFT, BROKEN_RCVD, LEFT, ""),
    L(LEFT, CONNECTED, LEFT, ""), /* no probe: the connection only waits for its end */
    L(LEFT, CONNECT_FAILED, LEFT, ""),
    L(LEFT, RAIL_ERROR, LEFT, ""), /* the peer closed: it left */
    L(LEFT, RAIL_ABSENT, LEFT, ""),
    L(LEFT, PROBE_DELIVERED, LEFT, ""),
    L(LEFT, PROBE_FAILED, LEFT, ""),
    L(LEFT, PROBEACK_DELIVERED, LEFT, ""),
    L(LEFT, PROBEACK_FAILED, LEFT, ""),
    L(LEFT, BROKEN_DELIVERED, LEFT, ""),
    L(LEFT, BROKEN_FAILED, LEFT, ""), /* not sent again: the peer does not need it */
    L(LEFT, BYE_DELIVERED, LEFT, ""),
    L(LEFT, BYE_FAILED, LEFT, ""), /* not sent again: C counts it done (bfo_engine_left) */
    L(LEFT, CREDIT_RCVD, LEFT, "take_credit"),
    L(LEFT, RELAY_RCVD, LEFT, "take_relay"),
    L(LEFT, RELAYACK_RCVD, LEFT, "take_relayack"),
    L(LEFT, REACH_RCVD, LEFT, "take_reach"),
};
#undef L
#undef DOWN_LOCAL

/* ---------------------------------------------------------------- conn -- */
#define C(from, ev, to, acts) { BFO_CONN_ST_##from, BFO_CONN_EV_##ev, BFO_CONN_ST_##to, acts }
static const row conn_rows[] = {
    C(NEW, PEER_CHOSEN, DOWN, ""),

    /* no connection: either side dials; a hello is taken */
    C(DOWN, CONNECT_ASKED, DIALING, "dial"),
    C(DOWN, LOWER_HELLO_RCVD, REPLY_SENT, "take send_reply"),
    C(DOWN, HIGHER_HELLO_RCVD, REPLY_SENT, "take send_reply"),    /* only one side asked */
    C(DOWN, STALE_HELLO_RCVD, DOWN, "refuse"),

    C(DIALING, DIAL_CONNECTED, HELLO_SENT, "send_hello"),
    C(DIALING, DIAL_FAILED, DOWN, "report_failed close"),
    C(DIALING, BROKEN, DOWN, "report_failed close"),
    C(DIALING, TIMED_OUT, DOWN, "report_failed close"),      /* no answer: a dead host */
    C(DIALING, CONNECT_ASKED, DIALING, ""),                  /* the dial answers it */
    C(DIALING, HIGHER_HELLO_RCVD, DIALING, "refuse_tie"),    /* both dial: ours wins */
    C(DIALING, LOWER_HELLO_RCVD, REPLY_SENT_ASKED, "close take send_reply"), /* theirs wins */
    C(DIALING, STALE_HELLO_RCVD, DIALING, "refuse"),

    C(HELLO_SENT, REPLY_RCVD, UP, "report_up"),
    C(HELLO_SENT, BROKEN, DOWN, "report_failed close"),
    C(HELLO_SENT, TIMED_OUT, DOWN, "report_failed close"),
    C(HELLO_SENT, CONNECT_ASKED, HELLO_SENT, ""),
    C(HELLO_SENT, HIGHER_HELLO_RCVD, HELLO_SENT, "refuse_tie"),
    C(HELLO_SENT, LOWER_HELLO_RCVD, REPLY_SENT_ASKED, "close take send_reply"),
    C(HELLO_SENT, TIE_LOST_RCVD, AWAITING_HELLO, "close wait"), /* no failure reported */
    C(HELLO_SENT, STALE_HELLO_RCVD, HELLO_SENT, "refuse"),

    /* the higher rank lost a tie: the winner's hello comes */
    C(AWAITING_HELLO, LOWER_HELLO_RCVD, REPLY_SENT_ASKED, "take send_reply"),
    C(AWAITING_HELLO, STALE_HELLO_RCVD, AWAITING_HELLO, "refuse"),
    C(AWAITING_HELLO, TIMED_OUT, DOWN, "report_failed"),
    C(AWAITING_HELLO, CONNECT_ASKED, AWAITING_HELLO, ""),

    C(REPLY_SENT, PEER_READY, UP, "report_up"),
    C(REPLY_SENT, CONNECT_ASKED, REPLY_SENT_ASKED, ""),       /* the connection answers it */
    C(REPLY_SENT, LOWER_HELLO_RCVD, REPLY_SENT, "close take send_reply"),
    C(REPLY_SENT, HIGHER_HELLO_RCVD, REPLY_SENT, "close take send_reply"),
    C(REPLY_SENT, STALE_HELLO_RCVD, REPLY_SENT, "refuse"),
    C(REPLY_SENT, BROKEN, DOWN, "close"),
    C(REPLY_SENT, TIMED_OUT, DOWN, "close"),

    C(REPLY_SENT_ASKED, PEER_READY, UP, "report_up"),
    C(REPLY_SENT_ASKED, CONNECT_ASKED, REPLY_SENT_ASKED, ""),
    C(REPLY_SENT_ASKED, LOWER_HELLO_RCVD, REPLY_SENT_ASKED, "close take send_reply"),
    C(REPLY_SENT_ASKED, HIGHER_HELLO_RCVD, REPLY_SENT_ASKED, "close take send_reply"),
    C(REPLY_SENT_ASKED, STALE_HELLO_RCVD, REPLY_SENT_ASKED, "refuse"),
    C(REPLY_SENT_ASKED, BROKEN, DOWN, "report_failed close"),
    C(REPLY_SENT_ASKED, TIMED_OUT, DOWN, "report_failed close"),

    /* up, dialed by either side */
    C(UP, BROKEN, DOWN, "report_error close"),
    C(UP, CONNECT_ASKED, DIALING, "close dial"),             /* the engine gave it up */
    C(UP, LOWER_HELLO_RCVD, REPLY_SENT, "report_error close take send_reply"), /* the peer gave it up */
    C(UP, HIGHER_HELLO_RCVD, REPLY_SENT, "report_error close take send_reply"),
    C(UP, STALE_HELLO_RCVD, UP, "refuse"),

    /* Authenticating transports (issue 37: TCP with a bfo_auth).  A claim
     * (a hello not proven yet) never changes a connection: it is answered
     * with the handshake's reply on its own connection, which the
     * transport holds (send_reply, with no take: a challenge), or told "I am dialing you" where this
     * side's dial wins the tie.  Only a proof takes a connection, closing
     * this side's dial or replacing a live one; a bad proof closes the
     * challenged connection alone, in every state.  From DOWN a claim
     * waits for its proof in REPLY_SENT (this side, asked, dials not across
     * it).  NEW takes none. */
    C(DOWN, LOWER_CLAIM_RCVD, REPLY_SENT, "send_reply"),          /* its proof is awaited: asked, no dial */
    C(DOWN, HIGHER_CLAIM_RCVD, REPLY_SENT, "send_reply"),
    C(DOWN, PROOF_RCVD, UP, "take report_up"),
    C(DOWN, PROOF_BAD_RCVD, DOWN, "refuse"),
    C(DIALING, HIGHER_CLAIM_RCVD, DIALING, "refuse_tie"),        /* ours wins: unproven, harmless */
    C(DIALING, LOWER_CLAIM_RCVD, DIALING, "send_reply"),          /* our dial stays until it proves */
    C(DIALING, PROOF_RCVD, UP, "close take report_up"),
    C(DIALING, PROOF_BAD_RCVD, DIALING, "refuse"),
    C(HELLO_SENT, HIGHER_CLAIM_RCVD, HELLO_SENT, "refuse_tie"),
    C(HELLO_SENT, LOWER_CLAIM_RCVD, HELLO_SENT, "send_reply"),
    C(HELLO_SENT, PROOF_RCVD, UP, "close take report_up"),
    C(HELLO_SENT, PROOF_BAD_RCVD, HELLO_SENT, "refuse"),
    C(AWAITING_HELLO, LOWER_CLAIM_RCVD, AWAITING_HELLO, "send_reply"),
    C(AWAITING_HELLO, PROOF_RCVD, UP, "take report_up"),          /* the winner's dial, proven */
    C(AWAITING_HELLO, PROOF_BAD_RCVD, AWAITING_HELLO, "refuse"),
    C(REPLY_SENT, LOWER_CLAIM_RCVD, REPLY_SENT, "send_reply"),
    C(REPLY_SENT, HIGHER_CLAIM_RCVD, REPLY_SENT, "send_reply"),
    C(REPLY_SENT, PROOF_RCVD, UP, "close take report_up"),
    C(REPLY_SENT, PROOF_BAD_RCVD, REPLY_SENT, "refuse"),
    C(REPLY_SENT_ASKED, LOWER_CLAIM_RCVD, REPLY_SENT_ASKED, "send_reply"),
    C(REPLY_SENT_ASKED, HIGHER_CLAIM_RCVD, REPLY_SENT_ASKED, "send_reply"),
    C(REPLY_SENT_ASKED, PROOF_RCVD, UP, "close take report_up"),
    C(REPLY_SENT_ASKED, PROOF_BAD_RCVD, REPLY_SENT_ASKED, "refuse"),
    C(UP, LOWER_CLAIM_RCVD, UP, "send_reply"),                    /* the live one stays */
    C(UP, HIGHER_CLAIM_RCVD, UP, "refuse_tie"),                  /* the lower rank's connection holds */
    C(UP, PROOF_RCVD, UP, "report_error close take report_up"),  /* the peer gave it up, proven */
    C(UP, PROOF_BAD_RCVD, UP, "refuse"),
};
#undef C

/* ---------------------------------------------------------------- peer -- */
#define P(from, ev, to, acts) { BFO_PEER_ST_##from, BFO_PEER_EV_##ev, BFO_PEER_ST_##to, acts }
static const row peer_rows[] = {
    /* whose entry it is */
    P(NEW, SELF_CHOSEN, SELF, ""),
    P(NEW, PEER_CHOSEN, DOWN, ""),

    P(SELF, LEAVE_REQUESTED, PARTED, ""),

    /* no rail reaches it now: the grace runs */
    P(DOWN, RAIL_ADMITTED, REACHABLE, ""),
    P(DOWN, GRACE_EXPIRED, UNREACHABLE, "give_up"),
    P(DOWN, BYE_RCVD, LEAVING, "part"),
    P(DOWN, LEAVE_REQUESTED, PARTED, ""),
    P(DOWN, ROUTE_FOUND, RELAYED, "take_route"),   /* relay on: a third rank reaches it */
    P(DOWN, DEATH_REPORTED, FAILED, "give_up fence"),

    /* Reached through a third rank (relay). */
    P(RELAYED, RAIL_ADMITTED, REACHABLE, ""),     /* back to the direct rails */
    P(RELAYED, ROUTE_FOUND, RELAYED, ""),         /* another relay */
    P(RELAYED, ROUTE_LOST, DOWN, "report_route_lost"),
    P(RELAYED, BYE_RCVD, LEAVING, "part"),
    P(RELAYED, LEAVE_REQUESTED, PARTED, ""),
    P(RELAYED, DEATH_REPORTED, FAILED, "give_up fence"),

    P(REACHABLE, RAIL_ADMITTED, REACHABLE, ""),   /* another rail */
    P(REACHABLE, LAST_RAIL_LOST, DOWN, ""),
    P(REACHABLE, BYE_RCVD, LEAVING, "part"),
    P(REACHABLE, LEAVE_REQUESTED, PARTED, ""),
    P(REACHABLE, DEATH_REPORTED, FAILED, "give_up fence"),

    /* given up: its requests failed already; a death report fences it */
    P(UNREACHABLE, RAIL_ADMITTED, UNREACHABLE, ""),
    P(UNREACHABLE, LAST_RAIL_LOST, UNREACHABLE, ""),
    P(UNREACHABLE, LEAVE_REQUESTED, UNREACHABLE, ""),
    P(UNREACHABLE, DEATH_REPORTED, FAILED, "fence"),

    /* it left in good order: its exit is no failure */
    P(LEAVING, OWED_RCVD, LEFT, "close_out"),
    P(LEAVING, GRACE_EXPIRED, LEFT, "close_out"),
    P(LEAVING, BYE_RCVD, LEAVING, ""),             /* another rail's BYE: a duplicate */
    P(LEAVING, RAIL_ADMITTED, LEAVING, ""),
    P(LEAVING, LAST_RAIL_LOST, LEAVING, ""),
    P(LEAVING, LEAVE_REQUESTED, LEAVING, ""),
    P(LEAVING, DEATH_REPORTED, LEAVING, ""),

    P(LEFT, BYE_RCVD, LEFT, ""),
    P(LEFT, RAIL_ADMITTED, LEFT, ""),
    P(LEFT, LAST_RAIL_LOST, LEFT, ""),
    P(LEFT, LEAVE_REQUESTED, LEFT, ""),
    P(LEFT, DEATH_REPORTED, LEFT, ""),

    /* this rank left first */
    P(PARTED, BYE_RCVD, LEAVING, "part"),
    P(PARTED, RAIL_ADMITTED, PARTED, ""),
    P(PARTED, LAST_RAIL_LOST, PARTED, ""),
    P(PARTED, LEAVE_REQUESTED, PARTED, ""),
    P(PARTED, DEATH_REPORTED, PARTED, ""),

    /* fenced, for good */
    P(FAILED, RAIL_ADMITTED, FAILED, ""),
    P(FAILED, LAST_RAIL_LOST, FAILED, ""),
    P(FAILED, LEAVE_REQUESTED, FAILED, ""),
    P(FAILED, DEATH_REPORTED, FAILED, ""),
};
#undef P

/* --------------------------------------------------------------- agree -- */
#define A(from, ev, to, acts) { BFO_AGREE_ST_##from, BFO_AGREE_EV_##ev, BFO_AGREE_ST_##to, acts }
static const row agree_rows[] = {
    A(IDLE, AGREE_CALLED, ROUND, "send_round"),

    /* every member heard in the round: decide, or one more round */
    A(ROUND, ROUND_SAME, DECIDING, "decide send_decision"),
    A(ROUND, ROUND_CHANGED, ROUND, "next_round send_round"),
    A(ROUND, DECISION_RCVD, DECIDING, "adopt send_decision"),  /* a member decided first */
    A(ROUND, MEMBER_LOST, ABORTING, ""),                        /* a partition, or fenced */

    A(DECIDING, SENDS_DONE, IDLE, "finish"),
    A(DECIDING, MEMBER_LOST, DECIDING, ""),        /* decided: a loss changes nothing */

    A(ABORTING, SENDS_DONE, ABORTED, "abort"),
    A(ABORTING, DECISION_RCVD, ABORTING, ""),      /* too late: it cannot vouch for the rest */
    A(ABORTING, MEMBER_LOST, ABORTING, ""),

    A(ABORTED, MEMBER_LOST, ABORTED, ""),          /* for good */
};
#undef A

/* ------------------------------------------- the transitions Ragel built -- */
typedef struct spec_row {
    int from, event, to;
    const char *a[BFO_MAX_ACTIONS];
} spec_row;

#define SPEC_SEND(F, E, T, N, A1, A2, A3, A4) \
    { BFO_SEND_ST_##F, BFO_EV_##E, BFO_SEND_ST_##T, { #A1, #A2, #A3, #A4 } },
#define SPEC_RECV(F, E, T, N, A1, A2, A3, A4) \
    { BFO_RECV_ST_##F, BFO_EV_##E, BFO_RECV_ST_##T, { #A1, #A2, #A3, #A4 } },
#define SPEC_RAIL(F, E, T, N, A1, A2, A3, A4) \
    { BFO_RAIL_ST_##F, BFO_EV_##E, BFO_RAIL_ST_##T, { #A1, #A2, #A3, #A4 } },
static const spec_row send_spec[] = { BFO_SEND_TRANSITIONS(SPEC_SEND) };
static const spec_row recv_spec[] = { BFO_RECV_TRANSITIONS(SPEC_RECV) };
#define SPEC_CONN(F, E, T, N, A1, A2, A3, A4) \
    { BFO_CONN_ST_##F, BFO_CONN_EV_##E, BFO_CONN_ST_##T, { #A1, #A2, #A3, #A4 } },
static const spec_row rail_spec[] = { BFO_RAIL_TRANSITIONS(SPEC_RAIL) };
static const spec_row conn_spec[] = { BFO_CONN_TRANSITIONS(SPEC_CONN) };
#define SPEC_PEER(F, E, T, N, A1, A2, A3, A4) \
    { BFO_PEER_ST_##F, BFO_PEER_EV_##E, BFO_PEER_ST_##T, { #A1, #A2, #A3, #A4 } },
static const spec_row peer_spec[] = { BFO_PEER_TRANSITIONS(SPEC_PEER) };
#define SPEC_AGREE(F, E, T, N, A1, A2, A3, A4) \
    { BFO_AGREE_ST_##F, BFO_AGREE_EV_##E, BFO_AGREE_ST_##T, { #A1, #A2, #A3, #A4 } },
static const spec_row agree_spec[] = { BFO_AGREE_TRANSITIONS(SPEC_AGREE) };

/* "a b" from {"a", "b", "NONE", "NONE"} */
static void spec_actions(const spec_row *s, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = 0;
    for (int i = 0; i < BFO_MAX_ACTIONS && strcmp(s->a[i], "NONE") != 0; i++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%s", i ? " " : "", s->a[i]);
}

typedef struct table {
    const char *name;
    const bfo_machine *m;
    const row *rows;
    size_t n_rows;
    const spec_row *spec;
    size_t n_spec;
    const char *(*evname)(int ev); /* the machine's alphabet */
} table;

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))
static const table tables[] = {
    { "send", &bfo_send_machine, send_rows, N_OF(send_rows), send_spec, N_OF(send_spec), bfo_event_name },
    { "recv", &bfo_recv_machine, recv_rows, N_OF(recv_rows), recv_spec, N_OF(recv_spec), bfo_event_name },
    { "rail", &bfo_rail_machine, rail_rows, N_OF(rail_rows), rail_spec, N_OF(rail_spec), bfo_event_name },
    { "conn", &bfo_conn_machine, conn_rows, N_OF(conn_rows), conn_spec, N_OF(conn_spec),
      bfo_conn_event_name },
    { "peer", &bfo_peer_machine, peer_rows, N_OF(peer_rows), peer_spec, N_OF(peer_spec),
      bfo_peer_event_name },
    { "agree", &bfo_agree_machine, agree_rows, N_OF(agree_rows), agree_spec, N_OF(agree_spec),
      bfo_agree_event_name },
};

typedef struct row_case {
    const table *t;
    const row *r;
} row_case;

typedef struct state_case {
    const table *t;
    int state;
} state_case;

static const row *find_row(const table *t, int from, int event)
{
    for (size_t i = 0; i < t->n_rows; i++)
        if (t->rows[i].from == from && t->rows[i].event == event)
            return &t->rows[i];
    return NULL;
}

/* One legal transition: put the machine in `from`, feed `event`. */
static void test_row(void **state)
{
    const row_case *c = (const row_case *)*state;
    bfo_step st;
    char acts[128];
    int cs = c->r->from;

    memset(&st, 0, sizeof st);
    assert_int_equal(bfo_fsm_step(c->t->m, &cs, c->r->event, &st), BFO_OK);
    assert_string_equal(bfo_fsm_state_name(c->t->m, cs), bfo_fsm_state_name(c->t->m, c->r->to));
    assert_int_equal(st.from, c->r->from);
    assert_int_equal(st.to, c->r->to);
    actions_str(c->t->m, &st, acts, sizeof acts);
    assert_string_equal(acts, c->r->actions);
    assert_true(bfo_fsm_accepts(c->t->m, c->r->from, c->r->event));
}

/* Every event the table does not list for a state is refused, by name. */
static void test_illegal(void **state)
{
    const state_case *c = (const state_case *)*state;
    int refused = 0;
    for (int ev = 1; ev < c->t->m->n_events; ev++) {
        bfo_step st;
        int cs = c->state;
        if (find_row(c->t, c->state, ev))
            continue;
        memset(&st, 0, sizeof st);
        if (bfo_fsm_step(c->t->m, &cs, ev, &st) != BFO_ERR_ILLEGAL_EVENT || cs != c->state ||
            st.n_actions != 0 || st.to != c->state || bfo_fsm_accepts(c->t->m, c->state, ev))
            fail_msg("%s: %s --%s--> was taken, the table says it is illegal", c->t->name,
                     bfo_fsm_state_name(c->t->m, c->state), c->t->evname(ev));
        refused++;
    }
    assert_true(refused > 0);
}

/* Out-of-range events and states get their own named errors. */
static void test_bad_input(void **state)
{
    const table *t = (const table *)*state;
    bfo_step st;
    int cs = t->m->start;
    memset(&st, 0, sizeof st);
    assert_int_equal(bfo_fsm_step(t->m, &cs, 0, &st), BFO_ERR_BAD_EVENT);
    assert_int_equal(bfo_fsm_step(t->m, &cs, t->m->n_events, &st), BFO_ERR_BAD_EVENT);
    assert_int_equal(bfo_fsm_step(t->m, &cs, -7, &st), BFO_ERR_BAD_EVENT);
    assert_int_equal(cs, t->m->start);
    cs = 0;
    assert_int_equal(bfo_fsm_step(t->m, &cs, 1, &st), BFO_ERR_BAD_STATE);
    assert_int_equal(cs, 0);
    cs = t->m->n_states;
    assert_int_equal(bfo_fsm_step(t->m, &cs, 1, &st), BFO_ERR_BAD_STATE);
    assert_int_equal(cs, t->m->n_states);
    assert_string_equal(bfo_fsm_state_name(t->m, 0), "(invalid)");
    assert_int_equal(bfo_fsm_accepts(t->m, 0, 1), 0);
    assert_int_equal(bfo_fsm_accepts(t->m, t->m->start, t->m->n_events), 0);
}

/* The table and the spec list the same transitions. */
static void test_coverage(void **state)
{
    const table *t = (const table *)*state;
    int missing = 0, extra = 0, differ = 0;
    char want[128];

    for (size_t i = 0; i < t->n_spec; i++) {
        const spec_row *s = &t->spec[i];
        const row *r = find_row(t, s->from, s->event);
        spec_actions(s, want, sizeof want);
        if (!r) {
            print_error("%s: the spec has %s --%s--> %s%s%s, the table has no row for it\n",
                        t->name, bfo_fsm_state_name(t->m, s->from), t->evname(s->event),
                        bfo_fsm_state_name(t->m, s->to), *want ? " / " : "", want);
            missing++;
        } else if (r->to != s->to || strcmp(r->actions, want) != 0) {
            print_error("%s: %s --%s-->: the spec says %s / %s, the table says %s / %s\n",
                        t->name, bfo_fsm_state_name(t->m, s->from), t->evname(s->event),
                        bfo_fsm_state_name(t->m, s->to), want,
                        bfo_fsm_state_name(t->m, r->to), r->actions);
            differ++;
        }
    }
    for (size_t i = 0; i < t->n_rows; i++) {
        const row *r = &t->rows[i];
        int found = 0;
        for (size_t j = 0; j < t->n_spec; j++)
            found += t->spec[j].from == r->from && t->spec[j].event == r->event;
        if (found == 0) {
            print_error("%s: the table has %s --%s--> %s, the spec no longer does\n", t->name,
                        bfo_fsm_state_name(t->m, r->from), t->evname(r->event),
                        bfo_fsm_state_name(t->m, r->to));
            extra++;
        }
        if (find_row(t, r->from, r->event) != r) {
            print_error("%s: the table lists %s --%s--> twice\n", t->name,
                        bfo_fsm_state_name(t->m, r->from), t->evname(r->event));
            extra++;
        }
    }
    if (missing || extra || differ)
        fail_msg("%s: %d spec transitions without a row, %d rows not in the spec, %d differ",
                 t->name, missing, extra, differ);
    print_message("%s: %zu transitions in the spec, %zu rows, all covered\n", t->name,
                  t->n_spec, t->n_rows);
}

/* The trace hook sees every step, refused ones included. */
typedef struct trace_log {
    int calls, last_result, last_from, last_to;
    const bfo_machine *machine;
    const void *obj;
} trace_log;

static void on_trace(void *user, const bfo_machine *m, const bfo_step *st)
{
    trace_log *log = (trace_log *)user;
    log->calls++;
    log->machine = m;
    log->obj = st->obj;
    log->last_result = st->result;
    log->last_from = st->from;
    log->last_to = st->to;
}

static void test_trace_hook_sees_every_step(void **state)
{
    trace_log log;
    bfo_tracer tr;
    bfo_step st;
    bfo_send_fsm fsm;
    int request = 42;
    (void)state;

    memset(&log, 0, sizeof log);
    memset(&st, 0, sizeof st);
    tr.fn = on_trace;
    tr.user = &log;
    st.trace = &tr;
    st.obj = &request;
    bfo_send_init(&fsm);
    assert_int_equal(bfo_send_step(&fsm, BFO_EV_RNDV_CHOSEN, &st), BFO_OK);
    assert_int_equal(log.calls, 1);
    assert_ptr_equal(log.machine, &bfo_send_machine);
    assert_ptr_equal(log.obj, &request);
    assert_int_equal(log.last_from, BFO_SEND_ST_IDLE);
    assert_int_equal(log.last_to, BFO_SEND_ST_RNDV_SENT);
    assert_int_equal(bfo_send_step(&fsm, BFO_EV_MATCH_RCVD, &st), BFO_ERR_ILLEGAL_EVENT);
    assert_int_equal(log.calls, 2);
    assert_int_equal(log.last_result, BFO_ERR_ILLEGAL_EVENT);
    assert_int_equal(log.last_to, BFO_SEND_ST_RNDV_SENT);
    assert_int_equal(bfo_send_step(&fsm, 999, &st), BFO_ERR_BAD_EVENT);
    assert_int_equal(log.calls, 3);
    assert_string_equal(bfo_errname(log.last_result), "BFO_ERR_BAD_EVENT");
}

static void test_names_and_finals(void **state)
{
    (void)state;
    assert_string_equal(bfo_send_state_name(BFO_SEND_ST_RNDV_SENT), "RNDV_SENT");
    assert_string_equal(bfo_recv_state_name(BFO_RECV_ST_RESTART_ACK_OWED), "RESTART_ACK_OWED");
    assert_string_equal(bfo_rail_state_name(BFO_RAIL_ST_PROBING), "PROBING");
    assert_string_equal(bfo_send_action_name(BFO_SEND_ACT_POST_NOTIFY), "post_notify");
    assert_string_equal(bfo_send_action_name(0), "(invalid)");
    assert_string_equal(bfo_event_name(BFO_EV_ACK_RCVD), "ACK_RCVD");
    assert_string_equal(bfo_event_name(BFO_EV_COUNT), "(invalid)");
    assert_string_equal(bfo_errname(BFO_ERR_ILLEGAL_EVENT), "BFO_ERR_ILLEGAL_EVENT");
    assert_string_equal(bfo_errname(12345), "BFO_ERR_UNKNOWN");
    assert_true(bfo_send_is_final(BFO_SEND_ST_COMPLETE));
    assert_true(bfo_send_is_final(BFO_SEND_ST_FAILED));
    assert_false(bfo_send_is_final(BFO_SEND_ST_IDLE));
    assert_true(bfo_recv_is_final(BFO_RECV_ST_COMPLETE));
    assert_true(bfo_rail_is_final(BFO_RAIL_ST_RETIRED));
    assert_true(bfo_rail_is_final(BFO_RAIL_ST_LEFT));
    assert_string_equal(bfo_rail_state_name(BFO_RAIL_ST_LEFT), "LEFT");
    assert_string_equal(bfo_rail_action_name(BFO_RAIL_ACT_SEND_BYE), "send_bye");
    assert_string_equal(bfo_event_name(BFO_EV_LEAVE_REQUESTED), "LEAVE_REQUESTED");
    assert_string_equal(bfo_errname(BFO_ERR_PEER_LEFT), "BFO_ERR_PEER_LEFT");
    assert_string_equal(bfo_errname(BFO_ERR_LEFT), "BFO_ERR_LEFT");
    assert_false(bfo_rail_is_final(BFO_RAIL_ST_UP));
    assert_string_equal(bfo_conn_state_name(BFO_CONN_ST_AWAITING_HELLO), "AWAITING_HELLO");
    assert_string_equal(bfo_conn_action_name(BFO_CONN_ACT_SEND_REPLY), "send_reply");
    assert_string_equal(bfo_conn_event_name(BFO_CONN_EV_STALE_HELLO_RCVD), "STALE_HELLO_RCVD");
    assert_string_equal(bfo_conn_event_name(BFO_CONN_EV_COUNT), "(invalid)");
    assert_false(bfo_conn_is_final(BFO_CONN_ST_UP));
    assert_string_equal(bfo_peer_state_name(BFO_PEER_ST_UNREACHABLE), "UNREACHABLE");
    assert_string_equal(bfo_peer_action_name(BFO_PEER_ACT_FENCE), "fence");
    assert_string_equal(bfo_peer_event_name(BFO_PEER_EV_DEATH_REPORTED), "DEATH_REPORTED");
    assert_string_equal(bfo_peer_event_name(BFO_PEER_EV_COUNT), "(invalid)");
    assert_true(bfo_peer_is_final(BFO_PEER_ST_FAILED)); /* only self-loops: for good */
    assert_false(bfo_peer_is_final(BFO_PEER_ST_UNREACHABLE));
    assert_string_equal(bfo_errname(BFO_ERR_PROC_FAILED), "BFO_ERR_PROC_FAILED");
    assert_string_equal(bfo_errname(BFO_ERR_PROC_FAILED_PENDING), "BFO_ERR_PROC_FAILED_PENDING");
    /* the start states */
    bfo_send_fsm s;
    bfo_recv_fsm r;
    bfo_rail_fsm l;
    bfo_send_init(&s);
    bfo_recv_init(&r);
    bfo_rail_init(&l);
    assert_int_equal(s.cs, BFO_SEND_ST_IDLE);
    assert_int_equal(r.cs, BFO_RECV_ST_POSTED);
    assert_int_equal(l.cs, BFO_RAIL_ST_DORMANT); /* connections on first use */
    bfo_conn_fsm c;
    bfo_conn_init(&c);
    assert_int_equal(c.cs, BFO_CONN_ST_NEW);
    bfo_peer_fsm pf;
    bfo_peer_init(&pf);
    assert_int_equal(pf.cs, BFO_PEER_ST_NEW);
    bfo_agree_fsm af;
    bfo_agree_init(&af);
    assert_int_equal(af.cs, BFO_AGREE_ST_IDLE);
    assert_true(bfo_agree_is_final(BFO_AGREE_ST_ABORTED));
    assert_false(bfo_agree_is_final(BFO_AGREE_ST_IDLE));
    assert_string_equal(bfo_agree_event_name(BFO_AGREE_EV_DECISION_RCVD), "DECISION_RCVD");
    assert_string_equal(bfo_agree_action_name(BFO_AGREE_ACT_SEND_DECISION), "send_decision");
}

int main(void)
{
    test_list list = { 0 };
    static row_case rcases[N_OF(send_rows) + N_OF(recv_rows) + N_OF(rail_rows) + N_OF(conn_rows) + N_OF(peer_rows) +
                               N_OF(agree_rows)];
    static state_case scases[128];
    size_t nr = 0, ns = 0;

    for (size_t t = 0; t < N_OF(tables); t++)
        test_list_add(&list, test_coverage, (void *)&tables[t],
                      "%s: every spec transition has a row and every row is in the spec",
                      tables[t].name);
    for (size_t t = 0; t < N_OF(tables); t++) {
        const table *tb = &tables[t];
        for (size_t i = 0; i < tb->n_rows; i++) {
            const row *r = &tb->rows[i];
            rcases[nr].t = tb;
            rcases[nr].r = r;
            test_list_add(&list, test_row, &rcases[nr++], "%s: %s --%s--> %s%s%s", tb->name,
                          bfo_fsm_state_name(tb->m, r->from), tb->evname(r->event),
                          bfo_fsm_state_name(tb->m, r->to), *r->actions ? " / " : "",
                          r->actions);
        }
        for (int s = 1; s < tb->m->n_states; s++) {
            scases[ns].t = tb;
            scases[ns].state = s;
            test_list_add(&list, test_illegal, &scases[ns++],
                          "%s: %s refuses every other event with BFO_ERR_ILLEGAL_EVENT",
                          tb->name, bfo_fsm_state_name(tb->m, s));
        }
        test_list_add(&list, test_bad_input, (void *)tb,
                      "%s: bad event -> BFO_ERR_BAD_EVENT, bad state -> BFO_ERR_BAD_STATE",
                      tb->name);
    }
    test_list_add(&list, test_trace_hook_sees_every_step, NULL,
                  "trace hook sees every step, refused ones included");
    test_list_add(&list, test_names_and_finals, NULL, "names of states, actions, events, errors");
    return test_list_run(&list, "transitions");
}
