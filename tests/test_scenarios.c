// SPDX-License-Identifier: BSD-3-Clause
/* test_scenarios.c - protocol paths as event sequences across both sides.
 *
 * A scenario drives two machines (sender and receiver requests, or the two
 * ends of a rail) through one story, one event at a time, and checks the
 * state and the actions after every step.  Between steps, a comment says
 * what the engine does with the actions (post a fragment, count bytes,
 * drop a stale message): the machines only decide, the engine carries out.
 */
#include "bfo_test.h"

typedef struct sstep {
    char side;           /* 'S'/'R' (send/recv request), 'A'/'B' (rail ends) */
    int event;
    const char *state;   /* expected state after the event */
    const char *actions; /* expected actions, spec names */
} sstep;

typedef struct scenario {
    const char *name;
    const sstep *steps;
    size_t n;
} scenario;

#define SND(ev, st, acts) { 'S', BFO_EV_##ev, #st, acts }
#define RCV(ev, st, acts) { 'R', BFO_EV_##ev, #st, acts }
#define RA(ev, st, acts) { 'A', BFO_EV_##ev, #st, acts }
#define RB(ev, st, acts) { 'B', BFO_EV_##ev, #st, acts }
#define SCENARIO(name, arr) { name, arr, sizeof(arr) / sizeof(arr[0]) }

/* ---- the protocol paths ------------------------------------------------ */

static const sstep eager[] = {
    SND(EAGER_CHOSEN, MATCH_SENT, "post_match"),
    RCV(MATCH_RCVD, COMPLETE, "deliver_match"),
    SND(MATCH_DELIVERED, COMPLETE, "complete"),
};

/* The MATCH's completion says failed, but the MATCH did arrive.  The engine
 * sends it again; the receiver's sequence window drops the copy before any
 * request sees it. */
static const sstep eager_failed_but_arrived[] = {
    SND(EAGER_CHOSEN, MATCH_SENT, "post_match"),
    RCV(MATCH_RCVD, COMPLETE, "deliver_match"),
    SND(MATCH_FAILED, MATCH_SENT, "post_match"),
    SND(MATCH_DELIVERED, COMPLETE, "complete"),
};

/* Rendezvous by copy; the ACK overtakes the RNDV's own completion. */
static const sstep copy_path[] = {
    SND(RNDV_CHOSEN, RNDV_SENT, "post_rndv"),
    RCV(RNDV_RCVD, RNDV_MATCHED, "accept_rndv"),
    RCV(COPY_CHOSEN, ACK_SENT, "post_ack"),
    SND(ACK_RCVD, FRAGS_SENDING, "send_frags"),
    SND(RNDV_DELIVERED, FRAGS_SENDING, ""),
    RCV(ACK_DELIVERED, ACK_SENT, ""),
    RCV(FRAG_RCVD, ACK_SENT, "accept_frag"),
    SND(FRAG_DELIVERED, FRAGS_SENDING, "send_frags"),
    RCV(FRAG_RCVD, ACK_SENT, "accept_frag"),
    SND(FRAG_DELIVERED, FRAGS_SENDING, "send_frags"),
    /* every byte delivered, nothing outstanding: the engine feeds the fact */
    SND(ALL_DELIVERED, COMPLETE, "complete"),
    RCV(ALL_DELIVERED, COMPLETE, "complete"),
};

/* RDMA PUT: the receiver sends two PUTs (two rails); write, then FIN each. */
static const sstep put_path[] = {
    SND(RNDV_CHOSEN, RNDV_SENT, "post_rndv"),
    RCV(RNDV_RCVD, RNDV_MATCHED, "accept_rndv"),
    RCV(PUT_CHOSEN, PUTS_SENT, "post_puts"),
    SND(PUT_RCVD, PUTS_SERVING, "post_write"),
    SND(PUT_RCVD, PUTS_SERVING, "post_write"),
    SND(RNDV_DELIVERED, PUTS_SERVING, ""),
    SND(WRITE_COMPLETED, PUTS_SERVING, "post_fin"),
    SND(WRITE_COMPLETED, PUTS_SERVING, "post_fin"),
    RCV(PUT_DELIVERED, PUTS_SENT, ""),
    RCV(PUT_DELIVERED, PUTS_SENT, ""),
    RCV(FIN_RCVD, PUTS_SENT, "accept_fin post_puts"),
    RCV(FIN_RCVD, PUTS_SENT, "accept_fin post_puts"),
    SND(FIN_DELIVERED, PUTS_SERVING, ""),
    SND(FIN_DELIVERED, PUTS_SERVING, ""),
    SND(ALL_DELIVERED, COMPLETE, "complete"),
    RCV(ALL_DELIVERED, COMPLETE, "complete"),
};

/* RDMA GET: the receiver reads, then FINs; the sender ends on the FIN. */
static const sstep get_path[] = {
    SND(RGET_CHOSEN, RGET_SENT, "post_rget"),
    RCV(RGET_RCVD, RGET_MATCHED, "accept_rget"),
    RCV(GET_CHOSEN, READING, "post_reads"),
    SND(RGET_DELIVERED, RGET_SENT, ""),
    RCV(READ_COMPLETED, READING, "post_reads"),
    RCV(ALL_DELIVERED, FIN_SENT, "post_fin"),
    SND(FIN_RCVD, RGET_SENT, "note_fin"),
    RCV(FIN_DELIVERED, COMPLETE, "complete"),
    SND(ALL_DELIVERED, COMPLETE, "complete"),
};

/* The receiver cannot read (no RDMA rail reaches the sender): copy instead. */
static const sstep get_falls_back_to_copy[] = {
    SND(RGET_CHOSEN, RGET_SENT, "post_rget"),
    RCV(RGET_RCVD, RGET_MATCHED, "accept_rget"),
    RCV(COPY_CHOSEN, ACK_SENT, "post_ack"),
    SND(RGET_DELIVERED, RGET_SENT, ""),
    SND(ACK_RCVD, FRAGS_SENDING, "send_frags"),
    RCV(FRAG_RCVD, ACK_SENT, "accept_frag"),
    SND(FRAG_DELIVERED, FRAGS_SENDING, "send_frags"),
    RCV(ACK_DELIVERED, ACK_SENT, ""),
    SND(ALL_DELIVERED, COMPLETE, "complete"),
    RCV(ALL_DELIVERED, COMPLETE, "complete"),
};

/* ---- the design's hard cases ------------------------------------------- */

/* PUT path: the sender's FIN completes with an error but did arrive.  The
 * sender FINs again; the receiver recognises the copy by slot and drops it. */
static const sstep fin_failed_but_arrived_put[] = {
    SND(RNDV_CHOSEN, RNDV_SENT, "post_rndv"),
    RCV(RNDV_RCVD, RNDV_MATCHED, "accept_rndv"),
    RCV(PUT_CHOSEN, PUTS_SENT, "post_puts"),
    SND(PUT_RCVD, PUTS_SERVING, "post_write"),
    SND(RNDV_DELIVERED, PUTS_SERVING, ""),
    SND(WRITE_COMPLETED, PUTS_SERVING, "post_fin"),
    RCV(PUT_DELIVERED, PUTS_SENT, ""),
    RCV(FIN_RCVD, PUTS_SENT, "accept_fin post_puts"),
    SND(FIN_FAILED, PUTS_SERVING, "post_fin"),
    RCV(ALL_DELIVERED, COMPLETE, "complete"),
    RCV(FIN_DUP_RCVD, COMPLETE, "drop"),
    SND(FIN_DELIVERED, PUTS_SERVING, ""),
    SND(ALL_DELIVERED, COMPLETE, "complete"),
};

/* GET path: the receiver's FIN completes with an error but did arrive. */
static const sstep fin_failed_but_arrived_get[] = {
    SND(RGET_CHOSEN, RGET_SENT, "post_rget"),
    RCV(RGET_RCVD, RGET_MATCHED, "accept_rget"),
    RCV(GET_CHOSEN, READING, "post_reads"),
    SND(RGET_DELIVERED, RGET_SENT, ""),
    RCV(READ_COMPLETED, READING, "post_reads"),
    RCV(ALL_DELIVERED, FIN_SENT, "post_fin"),
    SND(FIN_RCVD, RGET_SENT, "note_fin"),
    SND(ALL_DELIVERED, COMPLETE, "complete"),
    RCV(FIN_FAILED, FIN_SENT, "post_fin"),
    SND(FIN_DUP_RCVD, COMPLETE, "drop"),
    RCV(FIN_DELIVERED, COMPLETE, "complete"),
};

/* The last FRAG completes with an error but did arrive.  The sender drains
 * and NOTIFYs; the receiver is already complete and answers NACK. */
static const sstep last_frag_failed_but_arrived_nack[] = {
    SND(RNDV_CHOSEN, RNDV_SENT, "post_rndv"),
    RCV(RNDV_RCVD, RNDV_MATCHED, "accept_rndv"),
    RCV(COPY_CHOSEN, ACK_SENT, "post_ack"),
    SND(RNDV_DELIVERED, RNDV_SENT, ""),
    SND(ACK_RCVD, FRAGS_SENDING, "send_frags"),
    RCV(ACK_DELIVERED, ACK_SENT, ""),
    RCV(FRAG_RCVD, ACK_SENT, "accept_frag"),
    SND(FRAG_FAILED, ERROR_DRAINING, "note_error"),
    RCV(ALL_DELIVERED, COMPLETE, "complete"),
    /* nothing left in flight at the sender */
    SND(DRAINED, NOTIFY_SENT, "post_notify"),
    RCV(NOTIFY_RCVD, COMPLETE, "post_restartnack"),
    SND(NOTIFY_DELIVERED, NOTIFY_LANDED, ""),
    SND(RESTARTNACK_RCVD, COMPLETE, "complete"),
};

/* A FRAG is lost; the dance.  The NOTIFY completes with an error but did
 * arrive: it is posted again with the same rseq (repost_notify, not
 * post_notify) and the receiver drops the copy.  Then the restarted RNDV
 * completes with an error but arrives, and its repost arrives twice. */
static const sstep dance_duplicate_notify_and_restarted_rndv_twice[] = {
    SND(RNDV_CHOSEN, RNDV_SENT, "post_rndv"),
    RCV(RNDV_RCVD, RNDV_MATCHED, "accept_rndv"),
    RCV(COPY_CHOSEN, ACK_SENT, "post_ack"),
    SND(RNDV_DELIVERED, RNDV_SENT, ""),
    SND(ACK_RCVD, FRAGS_SENDING, "send_frags"),
    RCV(ACK_DELIVERED, ACK_SENT, ""),
    SND(FRAG_FAILED, ERROR_DRAINING, "note_error"),
    SND(DRAINED, NOTIFY_SENT, "post_notify"),
    RCV(NOTIFY_RCVD, RESTART_ACK_OWED, "accept_notify"),
    SND(NOTIFY_FAILED, NOTIFY_SENT, "repost_notify"),
    RCV(NOTIFY_DUP_RCVD, RESTART_ACK_OWED, "drop"),
    RCV(DRAINED, RESTART_ACKED, "post_restartack"),
    SND(RESTARTACK_RCVD, RESTART_ACKED, ""),
    SND(NOTIFY_DELIVERED, RESTARTED, "restart"),
    SND(RNDV_CHOSEN, RNDV_SENT, "post_rndv"),
    RCV(RNDV_RCVD, RNDV_MATCHED, "reset accept_rndv"),
    SND(RNDV_FAILED, RNDV_SENT, "post_rndv"),
    RCV(COPY_CHOSEN, ACK_SENT, "post_ack"),
    RCV(RNDV_DUP_RCVD, ACK_SENT, "drop"),
    SND(ACK_RCVD, FRAGS_SENDING, "send_frags"),
    SND(RNDV_DELIVERED, FRAGS_SENDING, ""),
    RCV(FRAG_RCVD, ACK_SENT, "accept_frag"),
    SND(FRAG_DELIVERED, FRAGS_SENDING, "send_frags"),
    RCV(ACK_DELIVERED, ACK_SENT, ""),
    SND(ALL_DELIVERED, COMPLETE, "complete"),
    RCV(ALL_DELIVERED, COMPLETE, "complete"),
};

/* Both sides see an error: the receiver's ACK completion fails (it sends
 * RECVERRNOTIFY) and a FRAG fails at the sender, which is already draining
 * when the RECVERRNOTIFY arrives.  The notice is absorbed; one dance. */
static const sstep recverrnotify_while_sender_in_error[] = {
    SND(RNDV_CHOSEN, RNDV_SENT, "post_rndv"),
    RCV(RNDV_RCVD, RNDV_MATCHED, "accept_rndv"),
    RCV(COPY_CHOSEN, ACK_SENT, "post_ack"),
    SND(ACK_RCVD, FRAGS_SENDING, "send_frags"),
    SND(RNDV_DELIVERED, FRAGS_SENDING, ""),
    RCV(ACK_FAILED, RECVERR_SENT, "post_recverrnotify"),
    SND(FRAG_FAILED, ERROR_DRAINING, "note_error"),
    SND(RECVERRNOTIFY_RCVD, ERROR_DRAINING, "drop"),
    SND(DRAINED, NOTIFY_SENT, "post_notify"),
    RCV(RECVERRNOTIFY_DELIVERED, RECVERR_SENT, ""),
    RCV(NOTIFY_RCVD, RESTART_ACK_OWED, "accept_notify"),
    RCV(DRAINED, RESTART_ACKED, "post_restartack"),
    SND(NOTIFY_DELIVERED, NOTIFY_LANDED, ""),
    SND(RESTARTACK_RCVD, RESTARTED, "restart"),
    RCV(RESTARTACK_DELIVERED, RESTART_ACKED, ""),
    SND(RNDV_CHOSEN, RNDV_SENT, "post_rndv"),
    RCV(RNDV_RCVD, RNDV_MATCHED, "reset accept_rndv"),
    RCV(COPY_CHOSEN, ACK_SENT, "post_ack"),
    SND(ACK_RCVD, FRAGS_SENDING, "send_frags"),
    SND(RNDV_DELIVERED, FRAGS_SENDING, ""),
    RCV(FRAG_RCVD, ACK_SENT, "accept_frag"),
    SND(FRAG_DELIVERED, FRAGS_SENDING, "send_frags"),
    RCV(ACK_DELIVERED, ACK_SENT, ""),
    SND(ALL_DELIVERED, COMPLETE, "complete"),
    RCV(ALL_DELIVERED, COMPLETE, "complete"),
};

/* The receiver's ACK completes with an error but arrived.  The 2010 design
 * dropped every FRAG after that while the sender completed and ignored the
 * RECVERRNOTIFY: the receiver hung.  Here both complete. */
static const sstep ack_failed_but_arrived_no_hang[] = {
    SND(RNDV_CHOSEN, RNDV_SENT, "post_rndv"),
    RCV(RNDV_RCVD, RNDV_MATCHED, "accept_rndv"),
    RCV(COPY_CHOSEN, ACK_SENT, "post_ack"),
    SND(RNDV_DELIVERED, RNDV_SENT, ""),
    SND(ACK_RCVD, FRAGS_SENDING, "send_frags"),
    RCV(ACK_FAILED, RECVERR_SENT, "post_recverrnotify"),
    RCV(FRAG_RCVD, RECVERR_SENT, "accept_frag"),
    SND(FRAG_DELIVERED, FRAGS_SENDING, "send_frags"),
    SND(ALL_DELIVERED, COMPLETE, "complete"),
    SND(RECVERRNOTIFY_RCVD, COMPLETE, "drop"),
    RCV(RECVERRNOTIFY_DELIVERED, RECVERR_SENT, ""),
    RCV(ALL_DELIVERED, COMPLETE, "complete"),
};

/* An RDMA write fails (its rail died).  After the dance the engine picks a
 * protocol for what is left: no RDMA rail, so the receiver takes copy. */
static const sstep write_failed_restart_by_copy[] = {
    SND(RNDV_CHOSEN, RNDV_SENT, "post_rndv"),
    RCV(RNDV_RCVD, RNDV_MATCHED, "accept_rndv"),
    RCV(PUT_CHOSEN, PUTS_SENT, "post_puts"),
    SND(PUT_RCVD, PUTS_SERVING, "post_write"),
    SND(RNDV_DELIVERED, PUTS_SERVING, ""),
    RCV(PUT_DELIVERED, PUTS_SENT, ""),
    SND(WRITE_FAILED, ERROR_DRAINING, "note_error"),
    SND(DRAINED, NOTIFY_SENT, "post_notify"),
    RCV(NOTIFY_RCVD, RESTART_ACK_OWED, "accept_notify"),
    RCV(DRAINED, RESTART_ACKED, "post_restartack"),
    /* the ACK overtakes the NOTIFY's completion: the join, other order */
    SND(RESTARTACK_RCVD, RESTART_ACKED, ""),
    RCV(RESTARTACK_FAILED, RESTART_ACKED, "post_restartack"),
    SND(NOTIFY_DELIVERED, RESTARTED, "restart"),
    /* the reposted RESTARTACK reaches the sender with an old rseq: stale,
     * dropped by the engine before any machine */
    SND(RNDV_CHOSEN, RNDV_SENT, "post_rndv"),
    RCV(RNDV_RCVD, RNDV_MATCHED, "reset accept_rndv"),
    RCV(COPY_CHOSEN, ACK_SENT, "post_ack"),
    SND(ACK_RCVD, FRAGS_SENDING, "send_frags"),
    SND(RNDV_DELIVERED, FRAGS_SENDING, ""),
    RCV(FRAG_RCVD, ACK_SENT, "accept_frag"),
    SND(FRAG_DELIVERED, FRAGS_SENDING, "send_frags"),
    RCV(ACK_DELIVERED, ACK_SENT, ""),
    SND(ALL_DELIVERED, COMPLETE, "complete"),
    RCV(ALL_DELIVERED, COMPLETE, "complete"),
};

/* A NOTIFY fails once the RESTARTACK is in: the ACK proves it arrived. */
static const sstep notify_failed_after_restartack[] = {
    SND(RGET_CHOSEN, RGET_SENT, "post_rget"),
    RCV(RGET_RCVD, RGET_MATCHED, "accept_rget"),
    RCV(GET_CHOSEN, READING, "post_reads"),
    SND(RGET_DELIVERED, RGET_SENT, ""),
    RCV(READ_FAILED, RECVERR_SENT, "post_recverrnotify"),
    SND(RECVERRNOTIFY_RCVD, ERROR_DRAINING, "note_error"),
    SND(DRAINED, NOTIFY_SENT, "post_notify"),
    RCV(RECVERRNOTIFY_DELIVERED, RECVERR_SENT, ""),
    RCV(NOTIFY_RCVD, RESTART_ACK_OWED, "accept_notify"),
    RCV(DRAINED, RESTART_ACKED, "post_restartack"),
    SND(RESTARTACK_RCVD, RESTART_ACKED, ""),
    SND(NOTIFY_FAILED, RESTARTED, "restart"),
    SND(RGET_CHOSEN, RGET_SENT, "post_rget"),
    RCV(RGET_RCVD, RGET_MATCHED, "reset accept_rget"),
    RCV(GET_CHOSEN, READING, "post_reads"),
    RCV(READ_COMPLETED, READING, "post_reads"),
    RCV(ALL_DELIVERED, FIN_SENT, "post_fin"),
    SND(RGET_DELIVERED, RGET_SENT, ""),
    SND(FIN_RCVD, RGET_SENT, "note_fin"),
    SND(ALL_DELIVERED, COMPLETE, "complete"),
    RCV(FIN_DELIVERED, COMPLETE, "complete"),
};

/* The last rail to the peer dies mid-rendezvous: both sides fail, but only
 * once their operations have come back. */
static const sstep peer_unreachable_mid_rendezvous[] = {
    SND(RNDV_CHOSEN, RNDV_SENT, "post_rndv"),
    RCV(RNDV_RCVD, RNDV_MATCHED, "accept_rndv"),
    RCV(COPY_CHOSEN, ACK_SENT, "post_ack"),
    SND(ACK_RCVD, FRAGS_SENDING, "send_frags"),
    SND(PEER_UNREACHABLE, UNREACHABLE_DRAINING, ""),
    RCV(PEER_UNREACHABLE, UNREACHABLE_DRAINING, ""),
    SND(RNDV_DELIVERED, UNREACHABLE_DRAINING, ""),
    SND(FRAG_FAILED, UNREACHABLE_DRAINING, ""),
    RCV(ACK_FAILED, UNREACHABLE_DRAINING, ""),
    RCV(FRAG_RCVD, UNREACHABLE_DRAINING, "drop"),
    SND(DRAINED, FAILED, "fail_unreachable"),
    RCV(DRAINED, FAILED, "fail_unreachable"),
};

/* The peer becomes unreachable while an eager MATCH is in flight, and the
 * MATCH's completion then says delivered: that is a success. */
static const sstep peer_unreachable_after_match_delivered[] = {
    SND(EAGER_CHOSEN, MATCH_SENT, "post_match"),
    SND(PEER_UNREACHABLE, UNREACHABLE_DRAINING, ""),
    SND(MATCH_DELIVERED, COMPLETE, "complete"),
};

/* A receive posted for a peer that has no rail left fails at once. */
static const sstep receive_from_unreachable_peer[] = {
    RCV(PEER_UNREACHABLE, UNREACHABLE_DRAINING, ""),
    RCV(DRAINED, FAILED, "fail_unreachable"),
};

/* ---- the rail ----------------------------------------------------------- */

/* Both ends connect and probe each other; each admits the rail when its
 * own probe is answered. */
static const sstep rail_comes_up[] = {
    RA(CONNECTED, PROBING, "send_probe"),
    RB(CONNECTED, PROBING, "send_probe"),
    RB(PROBE_RCVD, PROBING, "send_probeack"),
    RA(PROBE_RCVD, PROBING, "send_probeack"),
    RA(PROBEACK_RCVD, UP, "admit"),
    RB(PROBE_DELIVERED, PROBING, ""),
    RB(PROBEACK_RCVD, UP, "admit"),
};

/* A fails the rail on a local error and tells B over another rail; later
 * A reconnects, both probe, both admit it again. */
static const sstep rail_fails_and_is_readmitted[] = {
    RA(CONNECTED, PROBING, "send_probe"),
    RB(CONNECTED, PROBING, "send_probe"),
    RA(PROBE_RCVD, PROBING, "send_probeack"),
    RB(PROBE_RCVD, PROBING, "send_probeack"),
    RA(PROBEACK_RCVD, UP, "admit"),
    RB(PROBEACK_RCVD, UP, "admit"),
    RA(RAIL_ERROR, FAILED, "map_out send_broken schedule_reconnect"),
    RB(BROKEN_RCVD, FAILED, "map_out schedule_reconnect"),
    RA(BROKEN_DELIVERED, FAILED, ""),
    RA(PROBE_FAILED, FAILED, ""),          /* late completions of the old rail */
    RA(BACKOFF_EXPIRED, RECONNECTING, "reconnect"),
    RB(CONNECTED, PROBING, "send_probe"),  /* B accepted A's new connection */
    RA(CONNECTED, PROBING, "send_probe"),
    RA(PROBE_RCVD, PROBING, "send_probeack"),
    RB(PROBE_RCVD, PROBING, "send_probeack"),
    RB(PROBEACK_RCVD, UP, "admit"),
    RA(PROBEACK_RCVD, UP, "admit"),
};

/* Only one side notices: A hears nothing for the silence timeout while B
 * sees no error at all.  A's notice makes B agree. */
static const sstep rail_half_broken_both_agree[] = {
    RA(CONNECTED, PROBING, "send_probe"),
    RB(CONNECTED, PROBING, "send_probe"),
    RA(PROBE_RCVD, PROBING, "send_probeack"),
    RB(PROBE_RCVD, PROBING, "send_probeack"),
    RA(PROBEACK_RCVD, UP, "admit"),
    RB(PROBEACK_RCVD, UP, "admit"),
    RB(HEARTBEAT_DUE, UP, "send_probe"),
    RA(SILENCE_DETECTED, FAILED, "map_out send_broken schedule_reconnect"),
    RA(BROKEN_FAILED, FAILED, "send_broken"), /* that rail failed too: try another */
    RB(BROKEN_RCVD, FAILED, "map_out schedule_reconnect"),
    RA(BROKEN_DELIVERED, FAILED, ""),
};

/* The rail drops everything in silence: A's heartbeat probe gets no
 * PROBEACK and A hears nothing else, so the probe times out; A's notice
 * (over another rail) maps the rail out on B, whose own probe was out too. */
static const sstep rail_silent_probe_times_out_both_agree[] = {
    RA(CONNECTED, PROBING, "send_probe"),
    RB(CONNECTED, PROBING, "send_probe"),
    RA(PROBE_RCVD, PROBING, "send_probeack"),
    RB(PROBE_RCVD, PROBING, "send_probeack"),
    RA(PROBEACK_RCVD, UP, "admit"),
    RB(PROBEACK_RCVD, UP, "admit"),
    RA(HEARTBEAT_DUE, UP, "send_probe"),
    RB(HEARTBEAT_DUE, UP, "send_probe"),
    RA(PROBE_TIMED_OUT, FAILED, "map_out send_broken schedule_reconnect"),
    RB(BROKEN_RCVD, FAILED, "map_out schedule_reconnect"),
    RA(BROKEN_DELIVERED, FAILED, ""),
};

/* A rail that never comes back is given up after the configured attempts. */
static const sstep rail_retired[] = {
    RA(CONNECT_FAILED, FAILED, "schedule_reconnect"),
    RA(BACKOFF_EXPIRED, RECONNECTING, "reconnect"),
    RA(CONNECT_FAILED, FAILED, "schedule_reconnect"),
    RA(BACKOFF_EXPIRED, RECONNECTING, "reconnect"),
    RA(CONNECTED, PROBING, "send_probe"),
    RA(PROBE_TIMED_OUT, FAILED, "schedule_reconnect"),
    RA(RETRIES_EXHAUSTED, RETIRED, "retire"),
    RA(PROBE_FAILED, RETIRED, ""),
};

/* Goodbye: A leaves (LEAVE_REQUESTED) and says BYE on the rail; B takes it
 * (the engine feeds BYE_RCVD to every rail of A); A's process ends, its
 * connection closes: at B that is no failure (no map-out, no notice, no
 * reconnect).  A PROBE B sent before the BYE reached A is still answered. */
static const sstep rail_goodbye[] = {
    RA(CONNECTED, PROBING, "send_probe"),
    RB(CONNECTED, PROBING, "send_probe"),
    RA(PROBE_RCVD, PROBING, "send_probeack"),
    RB(PROBE_RCVD, PROBING, "send_probeack"),
    RA(PROBEACK_RCVD, UP, "admit"),
    RB(PROBEACK_RCVD, UP, "admit"),
    RB(HEARTBEAT_DUE, UP, "send_probe"),
    RA(LEAVE_REQUESTED, LEFT, "send_bye part"),
    RA(PROBE_RCVD, LEFT, "send_probeack"),  /* B's heartbeat, crossing the BYE */
    RB(BYE_RCVD, LEFT, "part"),
    RA(BYE_DELIVERED, LEFT, ""),             /* A's process may end now */
    RB(PROBEACK_RCVD, LEFT, ""),
    RB(PROBE_DELIVERED, LEFT, ""),
    RB(RAIL_ERROR, LEFT, ""),                /* A closed: it left, not a failure */
    RB(LEAVE_REQUESTED, LEFT, ""),           /* B leaves later: no BYE to a peer gone */
};

/* Both leave at once: each BYE crosses the other's; each is taken, and
 * each side's connection ends as no failure. */
static const sstep rail_both_leave_at_once[] = {
    RA(CONNECTED, PROBING, "send_probe"),
    RB(CONNECTED, PROBING, "send_probe"),
    RA(PROBE_RCVD, PROBING, "send_probeack"),
    RB(PROBE_RCVD, PROBING, "send_probeack"),
    RA(PROBEACK_RCVD, UP, "admit"),
    RB(PROBEACK_RCVD, UP, "admit"),
    RA(LEAVE_REQUESTED, LEFT, "send_bye part"),
    RB(LEAVE_REQUESTED, LEFT, "send_bye part"),
    RA(BYE_RCVD, LEFT, ""),
    RB(BYE_RCVD, LEFT, ""),
    RA(BYE_DELIVERED, LEFT, ""),
    RB(BYE_FAILED, LEFT, ""),                /* A ended first: not sent again */
    RB(RAIL_ERROR, LEFT, ""),
};

/* The peer's BYE came on another rail while this one was failed and
 * waiting to reconnect: it parts instead; the back-off ends nowhere, a
 * connection the transport made meanwhile is not probed. */
static const sstep rail_goodbye_while_failed[] = {
    RA(CONNECTED, PROBING, "send_probe"),
    RA(PROBEACK_RCVD, UP, "admit"),
    RA(RAIL_ERROR, FAILED, "map_out send_broken schedule_reconnect"),
    RA(BYE_RCVD, LEFT, "part"),
    RA(BROKEN_FAILED, LEFT, ""),             /* its notice is not sent again */
    RA(CONNECTED, LEFT, ""),
    RA(CONNECT_FAILED, LEFT, ""),
};

/* A lost BYE: the peer takes the connection's end as today, a failure. */
static const sstep rail_goodbye_lost[] = {
    RA(CONNECTED, PROBING, "send_probe"),
    RB(CONNECTED, PROBING, "send_probe"),
    RA(PROBE_RCVD, PROBING, "send_probeack"),
    RB(PROBE_RCVD, PROBING, "send_probeack"),
    RA(PROBEACK_RCVD, UP, "admit"),
    RB(PROBEACK_RCVD, UP, "admit"),
    RA(LEAVE_REQUESTED, LEFT, "send_bye part"),
    RA(BYE_FAILED, LEFT, ""),                /* lost with its rail */
    RB(RAIL_ERROR, FAILED, "map_out send_broken schedule_reconnect"),
    RB(BACKOFF_EXPIRED, RECONNECTING, "reconnect"),
    RB(CONNECT_FAILED, FAILED, "schedule_reconnect"), /* until the grace period gives it up */
};

static const scenario scenarios[] = {
    SCENARIO("eager: MATCH delivered", eager),
    SCENARIO("eager: MATCH reported failed that did arrive is sent again", eager_failed_but_arrived),
    SCENARIO("copy: RNDV, ACK before the RNDV's completion, FRAGs", copy_path),
    SCENARIO("put: RNDV, two PUTs, writes, FINs", put_path),
    SCENARIO("get: RGET, read, FIN", get_path),
    SCENARIO("get: the receiver cannot read and takes copy", get_falls_back_to_copy),
    SCENARIO("hard case: FIN reported failed that did arrive (PUT)", fin_failed_but_arrived_put),
    SCENARIO("hard case: FIN reported failed that did arrive (GET)", fin_failed_but_arrived_get),
    SCENARIO("hard case: last FRAG reported failed that did arrive -> NACK",
             last_frag_failed_but_arrived_nack),
    SCENARIO("hard case: duplicate NOTIFY after NOTIFY failed (same rseq), restarted RNDV twice",
             dance_duplicate_notify_and_restarted_rndv_twice),
    SCENARIO("hard case: RECVERRNOTIFY while the sender is already in error",
             recverrnotify_while_sender_in_error),
    SCENARIO("hard case: ACK reported failed that did arrive, no hang", ack_failed_but_arrived_no_hang),
    SCENARIO("restart: WRITE failed, RESTARTACK before NOTIFY's completion, restart by copy",
             write_failed_restart_by_copy),
    SCENARIO("restart: NOTIFY failed after RESTARTACK restarts at once (GET)",
             notify_failed_after_restartack),
    SCENARIO("unreachable: mid-rendezvous, both fail after draining", peer_unreachable_mid_rendezvous),
    SCENARIO("unreachable: MATCH delivered after all completes", peer_unreachable_after_match_delivered),
    SCENARIO("unreachable: receive from a peer with no rail", receive_from_unreachable_peer),
    SCENARIO("rail: both ends connect, probe and admit", rail_comes_up),
    SCENARIO("rail: local error, broken-rail notice, re-admission", rail_fails_and_is_readmitted),
    SCENARIO("rail: half-broken rail, the notice makes both agree", rail_half_broken_both_agree),
    SCENARIO("rail: silent rail, the heartbeat probe times out, the notice makes both agree",
             rail_silent_probe_times_out_both_agree),
    SCENARIO("rail: retired after the reconnect attempts", rail_retired),
    SCENARIO("goodbye: A leaves, B takes its BYE, A's close is no failure", rail_goodbye),
    SCENARIO("goodbye: both leave at once, the BYEs cross", rail_both_leave_at_once),
    SCENARIO("goodbye: the BYE comes while the rail waits to reconnect", rail_goodbye_while_failed),
    SCENARIO("goodbye: the BYE lost, the peer takes the close as a failure", rail_goodbye_lost),
};

static void run_scenario(void **state)
{
    const scenario *sc = (const scenario *)*state;
    int cs_s = BFO_SEND_ST_IDLE, cs_r = BFO_RECV_ST_POSTED;
    int cs_a = BFO_RAIL_ST_CONNECTING, cs_b = BFO_RAIL_ST_CONNECTING;

    for (size_t i = 0; i < sc->n; i++) {
        const sstep *s = &sc->steps[i];
        const bfo_machine *m;
        int *cs;
        bfo_step st;
        char acts[128];
        int rc;

        switch (s->side) {
        case 'S': m = &bfo_send_machine; cs = &cs_s; break;
        case 'R': m = &bfo_recv_machine; cs = &cs_r; break;
        case 'A': m = &bfo_rail_machine; cs = &cs_a; break;
        default:  m = &bfo_rail_machine; cs = &cs_b; break;
        }
        memset(&st, 0, sizeof st);
        rc = bfo_fsm_step(m, cs, s->event, &st);
        actions_str(m, &st, acts, sizeof acts);
        if (rc != BFO_OK || strcmp(bfo_fsm_state_name(m, *cs), s->state) != 0 ||
            strcmp(acts, s->actions) != 0)
            fail_msg("step %zu, %c %s: got %s, %s [%s]; want %s [%s]", i + 1, s->side,
                     bfo_event_name(s->event), bfo_errname(rc), bfo_fsm_state_name(m, *cs),
                     acts, s->state, s->actions);
    }
}

int main(void)
{
    test_list list = { 0 };
    for (size_t i = 0; i < sizeof scenarios / sizeof scenarios[0]; i++)
        test_list_add(&list, run_scenario, (void *)&scenarios[i], "%s (%zu steps)",
                      scenarios[i].name, scenarios[i].n);
    return test_list_run(&list, "scenarios");
}
