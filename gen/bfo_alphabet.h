// SPDX-License-Identifier: BSD-3-Clause
/* GENERATED FILE - DO NOT EDIT.
 * The bfo alphabet: fragment types, flags, events.
 * Generated from spec/alphabet.tab by tools/bfo_gen.py (run `make gen`).
 * Change the spec and regenerate; `make check-gen` fails when this
 * file is not what the spec generates. */
#ifndef BFO_ALPHABET_H
#define BFO_ALPHABET_H

/* What this gen/ is: BFO_GEN_ABI, the contract with include/fsm's base
 * (bfo_core.h's BFO_GEN_ABI_REQUIRED) that every generated header using
 * the base checks; BFO_GEN_STAMP, a digest of tools/bfo_gen.py and spec/
 * that every other generated header checks.  This header includes
 * nothing. */
#define BFO_GEN_ABI 2
#define BFO_GEN_STAMP 0xedf8e343

/* What may follow a header (PAYLOAD in the list): nothing, data, or the
 * RDMA keys of the memory the header names, one u32 per rail of the
 * sender (rail 0 first, little-endian). */
#define BFO_PAYLOAD_NONE 0
#define BFO_PAYLOAD_DATA 1
#define BFO_PAYLOAD_KEYS 2

/* Fragment types: BFO_FRAGMENTS(X) calls X(NAME, CODE, LAYOUT, PAYLOAD, DEDUP),
 * PAYLOAD a BFO_PAYLOAD_* value. */
#define BFO_FRAGMENTS(X) \
    X(MATCH, 0x01, match, 1, 0) \
    X(RNDV, 0x02, rndv, 1, 1) \
    X(RGET, 0x03, rget, 2, 1) \
    X(ACK, 0x04, ack, 0, 0) \
    X(FRAG, 0x05, frag, 1, 0) \
    X(PUT, 0x06, put, 2, 0) \
    X(FIN, 0x07, fin, 0, 1) \
    X(NOTIFY, 0x08, restart, 0, 1) \
    X(RESTARTACK, 0x09, restart, 0, 0) \
    X(RESTARTNACK, 0x0a, restart, 0, 0) \
    X(RECVERRNOTIFY, 0x0b, restart, 0, 0) \
    X(BROKEN, 0x10, railctl, 0, 0) \
    X(PROBE, 0x11, railctl, 1, 0) \
    X(PROBEACK, 0x12, railctl, 0, 0) \
    X(CREDIT, 0x13, credit, 0, 0) \
    X(BYE, 0x14, bye, 0, 0) \
    X(RELAY, 0x15, relay, 1, 0) \
    X(RELAYACK, 0x16, relayack, 0, 0) \
    X(REACH, 0x17, reach, 1, 0)

enum bfo_frag_type {
    BFO_FRAG_MATCH = 0x01, /* eager message: match header and the whole payload */
    BFO_FRAG_RNDV = 0x02, /* rendezvous start: match header, total length, first bytes */
    BFO_FRAG_RGET = 0x03, /* rendezvous for RDMA read: where the receiver may read the message */
    BFO_FRAG_ACK = 0x04, /* receiver to sender: send bytes from offset on by FRAG */
    BFO_FRAG_FRAG = 0x05, /* a piece of the message sent by copy */
    BFO_FRAG_PUT = 0x06, /* receiver to sender: RDMA-write this range into this memory */
    BFO_FRAG_FIN = 0x07, /* an RDMA range is done (sender after a write, receiver after a read) */
    BFO_FRAG_NOTIFY = 0x08, /* RNDVRESTARTNOTIFY: sender to receiver, this message restarts */
    BFO_FRAG_RESTARTACK = 0x09, /* RNDVRESTARTACK: receiver to sender, ready for the restart */
    BFO_FRAG_RESTARTNACK = 0x0a, /* RNDVRESTARTNACK: receiver to sender, the message is already complete */
    BFO_FRAG_RECVERRNOTIFY = 0x0b, /* receiver to sender: an operation of the receiver failed */
    BFO_FRAG_BROKEN = 0x10, /* rail control: the rail named in the header failed at the sender */
    BFO_FRAG_PROBE = 0x11, /* rail control: heartbeat, or probe of a rail coming back; zeros may follow (a demoted rail measured: the receiver skips them) */
    BFO_FRAG_PROBEACK = 0x12, /* rail control: answer to PROBE, echoing its nonce */
    BFO_FRAG_CREDIT = 0x13, /* flow control, receiver to sender: the eager bytes it may have sent in all (limit; the newest is the largest) */
    BFO_FRAG_BYE = 0x14, /* goodbye, on every rail: the sender leaves; seq is the last message it sent this peer, nothing comes after it, its rails closing are no failure */
    BFO_FRAG_RELAY = 0x15, /* relay (bfo_config.relay): a frame from rank src for rank dst, through this one; the frame follows whole; token is src's name for it, which the RELAYACK echoes */
    BFO_FRAG_RELAYACK = 0x16, /* relay to the frame's sender: its post to dst completed, ok 1 (dst has it) or ok 0 (it may not have arrived) */
    BFO_FRAG_REACH = 0x17, /* relay: the ranks the sender has a live rail to or never tried (it connects to one when asked to pass a frame on to it), a bitmap of count bits (rank i: byte i/8, bit i%8); gen orders its reports */
    BFO_FRAG_MAX_CODE = 0x17
};

#define BFO_FRAG_COUNT 19

/* Header flag bits. */
#define BFO_FLAG_RESTART 0x01 /* restarted rendezvous: dreq names the receive request, rseq is the new generation (RNDV, RGET) */
#define BFO_FLAG_PIN 0x02 /* the sender's buffer is registered: the receiver may answer with PUT (RNDV) */
#define BFO_FLAG_CANCEL 0x04 /* the send was cancelled before any of it left: the receiver takes the sequence number, matches nothing; no payload (MATCH) */

/* Flags: BFO_FLAGS(X) calls X(NAME, BIT). */
#define BFO_FLAGS(X) \
    X(RESTART, 0x01) \
    X(PIN, 0x02) \
    X(CANCEL, 0x04)

/* Events: the one alphabet of every machine.  0 is no event. */
#define BFO_EVENTS(X) \
    X(MATCH_RCVD, 1) \
    X(MATCH_DELIVERED, 2) \
    X(MATCH_FAILED, 3) \
    X(RNDV_RCVD, 4) \
    X(RNDV_DUP_RCVD, 5) \
    X(RNDV_DELIVERED, 6) \
    X(RNDV_FAILED, 7) \
    X(RGET_RCVD, 8) \
    X(RGET_DUP_RCVD, 9) \
    X(RGET_DELIVERED, 10) \
    X(RGET_FAILED, 11) \
    X(ACK_RCVD, 12) \
    X(ACK_DELIVERED, 13) \
    X(ACK_FAILED, 14) \
    X(FRAG_RCVD, 15) \
    X(FRAG_DELIVERED, 16) \
    X(FRAG_FAILED, 17) \
    X(PUT_RCVD, 18) \
    X(PUT_DELIVERED, 19) \
    X(PUT_FAILED, 20) \
    X(FIN_RCVD, 21) \
    X(FIN_DUP_RCVD, 22) \
    X(FIN_DELIVERED, 23) \
    X(FIN_FAILED, 24) \
    X(NOTIFY_RCVD, 25) \
    X(NOTIFY_DUP_RCVD, 26) \
    X(NOTIFY_DELIVERED, 27) \
    X(NOTIFY_FAILED, 28) \
    X(RESTARTACK_RCVD, 29) \
    X(RESTARTACK_DELIVERED, 30) \
    X(RESTARTACK_FAILED, 31) \
    X(RESTARTNACK_RCVD, 32) \
    X(RESTARTNACK_DELIVERED, 33) \
    X(RESTARTNACK_FAILED, 34) \
    X(RECVERRNOTIFY_RCVD, 35) \
    X(RECVERRNOTIFY_DELIVERED, 36) \
    X(RECVERRNOTIFY_FAILED, 37) \
    X(BROKEN_RCVD, 38) \
    X(BROKEN_DELIVERED, 39) \
    X(BROKEN_FAILED, 40) \
    X(PROBE_RCVD, 41) \
    X(PROBE_DELIVERED, 42) \
    X(PROBE_FAILED, 43) \
    X(PROBEACK_RCVD, 44) \
    X(PROBEACK_DELIVERED, 45) \
    X(PROBEACK_FAILED, 46) \
    X(CREDIT_RCVD, 47) \
    X(CREDIT_DELIVERED, 48) \
    X(CREDIT_FAILED, 49) \
    X(BYE_RCVD, 50) \
    X(BYE_DELIVERED, 51) \
    X(BYE_FAILED, 52) \
    X(RELAY_RCVD, 53) \
    X(RELAY_DELIVERED, 54) \
    X(RELAY_FAILED, 55) \
    X(RELAYACK_RCVD, 56) \
    X(RELAYACK_DELIVERED, 57) \
    X(RELAYACK_FAILED, 58) \
    X(REACH_RCVD, 59) \
    X(REACH_DELIVERED, 60) \
    X(REACH_FAILED, 61) \
    X(WRITE_COMPLETED, 62) \
    X(WRITE_FAILED, 63) \
    X(READ_COMPLETED, 64) \
    X(READ_FAILED, 65) \
    X(EAGER_CHOSEN, 66) \
    X(RNDV_CHOSEN, 67) \
    X(RGET_CHOSEN, 68) \
    X(COPY_CHOSEN, 69) \
    X(PUT_CHOSEN, 70) \
    X(GET_CHOSEN, 71) \
    X(DRAINED, 72) \
    X(ALL_DELIVERED, 73) \
    X(PEER_UNREACHABLE, 74) \
    X(CONNECTED, 75) \
    X(CONNECT_FAILED, 76) \
    X(RAIL_ERROR, 77) \
    X(HEARTBEAT_DUE, 78) \
    X(SILENCE_DETECTED, 79) \
    X(BACKOFF_EXPIRED, 80) \
    X(PROBE_TIMED_OUT, 81) \
    X(RETRIES_EXHAUSTED, 82) \
    X(PROBE_MATCHED, 83) \
    X(CANCEL_REQUESTED, 84) \
    X(RAIL_ABSENT, 85) \
    X(LEAVE_REQUESTED, 86) \
    X(DEMOTION_DUE, 87) \
    X(PROMOTION_DUE, 88) \
    X(PEER_FENCED, 89) \
    X(PEER_NEEDED, 90) \
    X(CONNECTED_PROVEN, 91)

enum bfo_event {
    BFO_EV_NONE = 0,
    BFO_EV_MATCH_RCVD = 1, /* a MATCH arrived for this machine */
    BFO_EV_MATCH_DELIVERED = 2, /* a MATCH posted here completed: the peer has it */
    BFO_EV_MATCH_FAILED = 3, /* a MATCH posted here completed with an error: it may have arrived */
    BFO_EV_RNDV_RCVD = 4, /* a RNDV arrived for this machine */
    BFO_EV_RNDV_DUP_RCVD = 5, /* a RNDV arrived that duplicates one already taken */
    BFO_EV_RNDV_DELIVERED = 6, /* a RNDV posted here completed: the peer has it */
    BFO_EV_RNDV_FAILED = 7, /* a RNDV posted here completed with an error: it may have arrived */
    BFO_EV_RGET_RCVD = 8, /* a RGET arrived for this machine */
    BFO_EV_RGET_DUP_RCVD = 9, /* a RGET arrived that duplicates one already taken */
    BFO_EV_RGET_DELIVERED = 10, /* a RGET posted here completed: the peer has it */
    BFO_EV_RGET_FAILED = 11, /* a RGET posted here completed with an error: it may have arrived */
    BFO_EV_ACK_RCVD = 12, /* a ACK arrived for this machine */
    BFO_EV_ACK_DELIVERED = 13, /* a ACK posted here completed: the peer has it */
    BFO_EV_ACK_FAILED = 14, /* a ACK posted here completed with an error: it may have arrived */
    BFO_EV_FRAG_RCVD = 15, /* a FRAG arrived for this machine */
    BFO_EV_FRAG_DELIVERED = 16, /* a FRAG posted here completed: the peer has it */
    BFO_EV_FRAG_FAILED = 17, /* a FRAG posted here completed with an error: it may have arrived */
    BFO_EV_PUT_RCVD = 18, /* a PUT arrived for this machine */
    BFO_EV_PUT_DELIVERED = 19, /* a PUT posted here completed: the peer has it */
    BFO_EV_PUT_FAILED = 20, /* a PUT posted here completed with an error: it may have arrived */
    BFO_EV_FIN_RCVD = 21, /* a FIN arrived for this machine */
    BFO_EV_FIN_DUP_RCVD = 22, /* a FIN arrived that duplicates one already taken */
    BFO_EV_FIN_DELIVERED = 23, /* a FIN posted here completed: the peer has it */
    BFO_EV_FIN_FAILED = 24, /* a FIN posted here completed with an error: it may have arrived */
    BFO_EV_NOTIFY_RCVD = 25, /* a NOTIFY arrived for this machine */
    BFO_EV_NOTIFY_DUP_RCVD = 26, /* a NOTIFY arrived that duplicates one already taken */
    BFO_EV_NOTIFY_DELIVERED = 27, /* a NOTIFY posted here completed: the peer has it */
    BFO_EV_NOTIFY_FAILED = 28, /* a NOTIFY posted here completed with an error: it may have arrived */
    BFO_EV_RESTARTACK_RCVD = 29, /* a RESTARTACK arrived for this machine */
    BFO_EV_RESTARTACK_DELIVERED = 30, /* a RESTARTACK posted here completed: the peer has it */
    BFO_EV_RESTARTACK_FAILED = 31, /* a RESTARTACK posted here completed with an error: it may have arrived */
    BFO_EV_RESTARTNACK_RCVD = 32, /* a RESTARTNACK arrived for this machine */
    BFO_EV_RESTARTNACK_DELIVERED = 33, /* a RESTARTNACK posted here completed: the peer has it */
    BFO_EV_RESTARTNACK_FAILED = 34, /* a RESTARTNACK posted here completed with an error: it may have arrived */
    BFO_EV_RECVERRNOTIFY_RCVD = 35, /* a RECVERRNOTIFY arrived for this machine */
    BFO_EV_RECVERRNOTIFY_DELIVERED = 36, /* a RECVERRNOTIFY posted here completed: the peer has it */
    BFO_EV_RECVERRNOTIFY_FAILED = 37, /* a RECVERRNOTIFY posted here completed with an error: it may have arrived */
    BFO_EV_BROKEN_RCVD = 38, /* a BROKEN arrived for this machine */
    BFO_EV_BROKEN_DELIVERED = 39, /* a BROKEN posted here completed: the peer has it */
    BFO_EV_BROKEN_FAILED = 40, /* a BROKEN posted here completed with an error: it may have arrived */
    BFO_EV_PROBE_RCVD = 41, /* a PROBE arrived for this machine */
    BFO_EV_PROBE_DELIVERED = 42, /* a PROBE posted here completed: the peer has it */
    BFO_EV_PROBE_FAILED = 43, /* a PROBE posted here completed with an error: it may have arrived */
    BFO_EV_PROBEACK_RCVD = 44, /* a PROBEACK arrived for this machine */
    BFO_EV_PROBEACK_DELIVERED = 45, /* a PROBEACK posted here completed: the peer has it */
    BFO_EV_PROBEACK_FAILED = 46, /* a PROBEACK posted here completed with an error: it may have arrived */
    BFO_EV_CREDIT_RCVD = 47, /* a CREDIT arrived for this machine */
    BFO_EV_CREDIT_DELIVERED = 48, /* a CREDIT posted here completed: the peer has it */
    BFO_EV_CREDIT_FAILED = 49, /* a CREDIT posted here completed with an error: it may have arrived */
    BFO_EV_BYE_RCVD = 50, /* a BYE arrived for this machine */
    BFO_EV_BYE_DELIVERED = 51, /* a BYE posted here completed: the peer has it */
    BFO_EV_BYE_FAILED = 52, /* a BYE posted here completed with an error: it may have arrived */
    BFO_EV_RELAY_RCVD = 53, /* a RELAY arrived for this machine */
    BFO_EV_RELAY_DELIVERED = 54, /* a RELAY posted here completed: the peer has it */
    BFO_EV_RELAY_FAILED = 55, /* a RELAY posted here completed with an error: it may have arrived */
    BFO_EV_RELAYACK_RCVD = 56, /* a RELAYACK arrived for this machine */
    BFO_EV_RELAYACK_DELIVERED = 57, /* a RELAYACK posted here completed: the peer has it */
    BFO_EV_RELAYACK_FAILED = 58, /* a RELAYACK posted here completed with an error: it may have arrived */
    BFO_EV_REACH_RCVD = 59, /* a REACH arrived for this machine */
    BFO_EV_REACH_DELIVERED = 60, /* a REACH posted here completed: the peer has it */
    BFO_EV_REACH_FAILED = 61, /* a REACH posted here completed with an error: it may have arrived */
    BFO_EV_WRITE_COMPLETED = 62, /* an RDMA write posted by this side completed: the data is in the peer's memory */
    BFO_EV_WRITE_FAILED = 63, /* an RDMA write posted by this side failed: the data may or may not be there */
    BFO_EV_READ_COMPLETED = 64, /* an RDMA read posted by this side completed: the data is here */
    BFO_EV_READ_FAILED = 65, /* an RDMA read posted by this side failed */
    BFO_EV_EAGER_CHOSEN = 66, /* the engine chose the eager protocol for this send */
    BFO_EV_RNDV_CHOSEN = 67, /* the engine chose rendezvous (copy or PUT, the receiver decides) for this send */
    BFO_EV_RGET_CHOSEN = 68, /* the engine chose RDMA GET for this send */
    BFO_EV_COPY_CHOSEN = 69, /* the receiver chose to take the rest of the message by copy (ACK, FRAGs) */
    BFO_EV_PUT_CHOSEN = 70, /* the receiver chose to take the rest of the message by RDMA PUT */
    BFO_EV_GET_CHOSEN = 71, /* the receiver chose to read the message by RDMA GET */
    BFO_EV_DRAINED = 72, /* fact: the request has no operation whose completion is outstanding */
    BFO_EV_ALL_DELIVERED = 73, /* fact: every byte of the message is delivered and nothing is outstanding */
    BFO_EV_PEER_UNREACHABLE = 74, /* fact: nothing more will come from the peer: no rail to it is left (after the engine's grace period), it left (its BYE), or this side left; C sets the status (BFO_ERR_PEER_UNREACHABLE, BFO_ERR_PEER_LEFT, BFO_ERR_LEFT) */
    BFO_EV_CONNECTED = 75, /* the transport connected this rail to the peer */
    BFO_EV_CONNECT_FAILED = 76, /* the transport could not connect this rail to the peer */
    BFO_EV_RAIL_ERROR = 77, /* the transport reported an error on this rail (for this peer or all peers) */
    BFO_EV_HEARTBEAT_DUE = 78, /* fact: no probe is outstanding and the rail heard or sent nothing for a heartbeat interval */
    BFO_EV_SILENCE_DETECTED = 79, /* fact: nothing arrived on the rail for the silence timeout */
    BFO_EV_BACKOFF_EXPIRED = 80, /* fact: the back-off before the next reconnect attempt is over */
    BFO_EV_PROBE_TIMED_OUT = 81, /* fact: a probe got no PROBEACK in time (in UP: nothing heard on the rail for the probe timeout since it went out) */
    BFO_EV_RETRIES_EXHAUSTED = 82, /* fact: the rail reached the configured number of reconnect attempts */
    BFO_EV_PROBE_MATCHED = 83, /* a matched probe (bfo_improbe) took an unexpected message out of matching for this receive; its buffer comes with bfo_imrecv */
    BFO_EV_CANCEL_REQUESTED = 84, /* the caller cancels the request, and it can be: a receive nothing matched yet, a send of which nothing was handed to a transport */
    BFO_EV_RAIL_ABSENT = 85, /* the rail does not reach the peer: it published no such rail, one of another transport, or the transport has no path to it (another host) */
    BFO_EV_LEAVE_REQUESTED = 86, /* this side leaves (bfo_engine_leave): fed to every rail of every peer */
    BFO_EV_DEMOTION_DUE = 87, /* fact: the rail is to carry probes only: its measured rate fell below 1/8 of the peer's best UP rail for three measurements in a row over 50 ms, or it is a standby rail and an active rail is UP */
    BFO_EV_PROMOTION_DUE = 88, /* fact: the rail may carry data again: three active measurements in a row found it at 1/4 of the best UP rail or better, no other rail of the peer is UP, or it is a standby rail and no active rail is UP */
    BFO_EV_PEER_FENCED = 89, /* the peer's process was reported dead (the peer machine's fence, spec/peer.rl): every rail of it is given up for good; C drops its connection */
    BFO_EV_PEER_NEEDED = 90, /* fact: the engine has a frame for the peer (a send, a rendezvous, a control message, a frame a relay passes on) and no rail of it is UP, must learn whether it is left (a relay candidate; an ANY_SOURCE receive with every peer needed gone), or connects every rail at init (bfo_config.connect_at_init): its DORMANT rails connect */
    BFO_EV_CONNECTED_PROVEN = 91, /* the transport connected this rail to the peer and the peer proved itself in this connection's handshake, both ways over fresh nonces (an authenticating transport: TCP, shm given a bfo_auth): the peer is alive and the connection works both ways, no probe needed */
};
#define BFO_EV_COUNT 92 /* events are 1 .. BFO_EV_COUNT-1 */

/* Name of a fragment type ("MATCH"), or NULL. */
static inline const char *bfo_frag_name(int type)
{
    switch (type) {
    case 0x01: return "MATCH";
    case 0x02: return "RNDV";
    case 0x03: return "RGET";
    case 0x04: return "ACK";
    case 0x05: return "FRAG";
    case 0x06: return "PUT";
    case 0x07: return "FIN";
    case 0x08: return "NOTIFY";
    case 0x09: return "RESTARTACK";
    case 0x0a: return "RESTARTNACK";
    case 0x0b: return "RECVERRNOTIFY";
    case 0x10: return "BROKEN";
    case 0x11: return "PROBE";
    case 0x12: return "PROBEACK";
    case 0x13: return "CREDIT";
    case 0x14: return "BYE";
    case 0x15: return "RELAY";
    case 0x16: return "RELAYACK";
    case 0x17: return "REACH";
    default: return (const char *)0;
    }
}

/* Flags defined for a fragment type (other bits are malformed). */
static inline unsigned bfo_frag_flags_allowed(int type)
{
    switch (type) {
    case 0x01: return BFO_FLAG_CANCEL;
    case 0x02: return BFO_FLAG_RESTART | BFO_FLAG_PIN;
    case 0x03: return BFO_FLAG_RESTART;
    case 0x04: return 0u;
    case 0x05: return 0u;
    case 0x06: return 0u;
    case 0x07: return 0u;
    case 0x08: return 0u;
    case 0x09: return 0u;
    case 0x0a: return 0u;
    case 0x0b: return 0u;
    case 0x10: return 0u;
    case 0x11: return 0u;
    case 0x12: return 0u;
    case 0x13: return 0u;
    case 0x14: return 0u;
    case 0x15: return 0u;
    case 0x16: return 0u;
    case 0x17: return 0u;
    default: return 0u;
    }
}

/* 1 when data may follow the header of a fragment type (BFO_PAYLOAD_DATA), else 0. */
static inline int bfo_frag_has_payload(int type)
{
    switch (type) {
    case 0x01:
    case 0x02:
    case 0x05:
    case 0x11:
    case 0x15:
    case 0x17:
        return 1;
    default: return 0;
    }
}

/* 1 when RDMA keys follow the header of a fragment type (BFO_PAYLOAD_KEYS), else 0. */
static inline int bfo_frag_has_keys(int type)
{
    switch (type) {
    case 0x03:
    case 0x06:
        return 1;
    default: return 0;
    }
}

/* The event of fragment type `type` for kind: BFO_EVK_RCVD, BFO_EVK_DUP_RCVD,
 * BFO_EVK_DELIVERED or BFO_EVK_FAILED; 0 when there is none. */
enum bfo_event_kind { BFO_EVK_RCVD, BFO_EVK_DUP_RCVD, BFO_EVK_DELIVERED, BFO_EVK_FAILED };
static inline int bfo_frag_event(int type, int kind)
{
    static const unsigned char ev[24][4] = {
        { 0, 0, 0, 0 }, /* 0x00 */
        { BFO_EV_MATCH_RCVD, 0, BFO_EV_MATCH_DELIVERED, BFO_EV_MATCH_FAILED },
        { BFO_EV_RNDV_RCVD, BFO_EV_RNDV_DUP_RCVD, BFO_EV_RNDV_DELIVERED, BFO_EV_RNDV_FAILED },
        { BFO_EV_RGET_RCVD, BFO_EV_RGET_DUP_RCVD, BFO_EV_RGET_DELIVERED, BFO_EV_RGET_FAILED },
        { BFO_EV_ACK_RCVD, 0, BFO_EV_ACK_DELIVERED, BFO_EV_ACK_FAILED },
        { BFO_EV_FRAG_RCVD, 0, BFO_EV_FRAG_DELIVERED, BFO_EV_FRAG_FAILED },
        { BFO_EV_PUT_RCVD, 0, BFO_EV_PUT_DELIVERED, BFO_EV_PUT_FAILED },
        { BFO_EV_FIN_RCVD, BFO_EV_FIN_DUP_RCVD, BFO_EV_FIN_DELIVERED, BFO_EV_FIN_FAILED },
        { BFO_EV_NOTIFY_RCVD, BFO_EV_NOTIFY_DUP_RCVD, BFO_EV_NOTIFY_DELIVERED, BFO_EV_NOTIFY_FAILED },
        { BFO_EV_RESTARTACK_RCVD, 0, BFO_EV_RESTARTACK_DELIVERED, BFO_EV_RESTARTACK_FAILED },
        { BFO_EV_RESTARTNACK_RCVD, 0, BFO_EV_RESTARTNACK_DELIVERED, BFO_EV_RESTARTNACK_FAILED },
        { BFO_EV_RECVERRNOTIFY_RCVD, 0, BFO_EV_RECVERRNOTIFY_DELIVERED, BFO_EV_RECVERRNOTIFY_FAILED },
        { 0, 0, 0, 0 }, /* 0x0c */
        { 0, 0, 0, 0 }, /* 0x0d */
        { 0, 0, 0, 0 }, /* 0x0e */
        { 0, 0, 0, 0 }, /* 0x0f */
        { BFO_EV_BROKEN_RCVD, 0, BFO_EV_BROKEN_DELIVERED, BFO_EV_BROKEN_FAILED },
        { BFO_EV_PROBE_RCVD, 0, BFO_EV_PROBE_DELIVERED, BFO_EV_PROBE_FAILED },
        { BFO_EV_PROBEACK_RCVD, 0, BFO_EV_PROBEACK_DELIVERED, BFO_EV_PROBEACK_FAILED },
        { BFO_EV_CREDIT_RCVD, 0, BFO_EV_CREDIT_DELIVERED, BFO_EV_CREDIT_FAILED },
        { BFO_EV_BYE_RCVD, 0, BFO_EV_BYE_DELIVERED, BFO_EV_BYE_FAILED },
        { BFO_EV_RELAY_RCVD, 0, BFO_EV_RELAY_DELIVERED, BFO_EV_RELAY_FAILED },
        { BFO_EV_RELAYACK_RCVD, 0, BFO_EV_RELAYACK_DELIVERED, BFO_EV_RELAYACK_FAILED },
        { BFO_EV_REACH_RCVD, 0, BFO_EV_REACH_DELIVERED, BFO_EV_REACH_FAILED },
    };
    return (unsigned)type <= BFO_FRAG_MAX_CODE && (unsigned)kind < 4 ? ev[type][kind] : 0;
}

/* Name of an event ("ACK_RCVD"), or "(invalid)". */
static inline const char *bfo_event_name(int ev)
{
    static const char *const names[] = {
        "(none)",
        "MATCH_RCVD",
        "MATCH_DELIVERED",
        "MATCH_FAILED",
        "RNDV_RCVD",
        "RNDV_DUP_RCVD",
        "RNDV_DELIVERED",
        "RNDV_FAILED",
        "RGET_RCVD",
        "RGET_DUP_RCVD",
        "RGET_DELIVERED",
        "RGET_FAILED",
        "ACK_RCVD",
        "ACK_DELIVERED",
        "ACK_FAILED",
        "FRAG_RCVD",
        "FRAG_DELIVERED",
        "FRAG_FAILED",
        "PUT_RCVD",
        "PUT_DELIVERED",
        "PUT_FAILED",
        "FIN_RCVD",
        "FIN_DUP_RCVD",
        "FIN_DELIVERED",
        "FIN_FAILED",
        "NOTIFY_RCVD",
        "NOTIFY_DUP_RCVD",
        "NOTIFY_DELIVERED",
        "NOTIFY_FAILED",
        "RESTARTACK_RCVD",
        "RESTARTACK_DELIVERED",
        "RESTARTACK_FAILED",
        "RESTARTNACK_RCVD",
        "RESTARTNACK_DELIVERED",
        "RESTARTNACK_FAILED",
        "RECVERRNOTIFY_RCVD",
        "RECVERRNOTIFY_DELIVERED",
        "RECVERRNOTIFY_FAILED",
        "BROKEN_RCVD",
        "BROKEN_DELIVERED",
        "BROKEN_FAILED",
        "PROBE_RCVD",
        "PROBE_DELIVERED",
        "PROBE_FAILED",
        "PROBEACK_RCVD",
        "PROBEACK_DELIVERED",
        "PROBEACK_FAILED",
        "CREDIT_RCVD",
        "CREDIT_DELIVERED",
        "CREDIT_FAILED",
        "BYE_RCVD",
        "BYE_DELIVERED",
        "BYE_FAILED",
        "RELAY_RCVD",
        "RELAY_DELIVERED",
        "RELAY_FAILED",
        "RELAYACK_RCVD",
        "RELAYACK_DELIVERED",
        "RELAYACK_FAILED",
        "REACH_RCVD",
        "REACH_DELIVERED",
        "REACH_FAILED",
        "WRITE_COMPLETED",
        "WRITE_FAILED",
        "READ_COMPLETED",
        "READ_FAILED",
        "EAGER_CHOSEN",
        "RNDV_CHOSEN",
        "RGET_CHOSEN",
        "COPY_CHOSEN",
        "PUT_CHOSEN",
        "GET_CHOSEN",
        "DRAINED",
        "ALL_DELIVERED",
        "PEER_UNREACHABLE",
        "CONNECTED",
        "CONNECT_FAILED",
        "RAIL_ERROR",
        "HEARTBEAT_DUE",
        "SILENCE_DETECTED",
        "BACKOFF_EXPIRED",
        "PROBE_TIMED_OUT",
        "RETRIES_EXHAUSTED",
        "PROBE_MATCHED",
        "CANCEL_REQUESTED",
        "RAIL_ABSENT",
        "LEAVE_REQUESTED",
        "DEMOTION_DUE",
        "PROMOTION_DUE",
        "PEER_FENCED",
        "PEER_NEEDED",
        "CONNECTED_PROVEN",
    };
    return (ev >= 0 && ev < 92) ? names[ev] : "(invalid)";
}

#endif /* BFO_ALPHABET_H */
