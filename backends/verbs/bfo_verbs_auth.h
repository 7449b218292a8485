// SPDX-License-Identifier: BSD-3-Clause
/* bfo_verbs_auth.h - the verbs exchange's authentication (issue 37), without
 * libibverbs: what REQ, REP and RTU carry of the connection handshake
 * (bfo_auth.h), built and checked by pure functions.
 *
 * Part of the verbs backend (bfo_verbs.h, AUTHENTICATION).  The handshake
 * rides the exchange with no extra message: the REQ carries the dialer's
 * HELLO (a fresh nonce, its rank, rail, attempt), the REP the acceptor's
 * REPLY (its fresh nonce, its MAC over the HELLO) and the RTU the dialer's
 * CONFIRM (its MAC over both).  A REQ is a claim (bfo_link_claim): the
 * acceptor answers it with a REP from a queue pair of its own, held aside
 * by the device (bfo_verbs.c: a claim), and takes that queue pair only at
 * an RTU whose CONFIRM verifies (bfo_link_proof): a live queue pair is
 * never replaced before.  The dialer takes a REP only when its REPLY
 * verifies.
 *
 * Datagrams are not a stream: nothing ties a REP or an RTU to the REQ the
 * way a TCP connection does, and whoever sees a REQ on the fabric can send
 * a copy of it with its own queue pair in it.  So the control fields (queue
 * pair number, PSN, GID, LID, MTU, credit, the dial given up) are under a
 * MAC too: the REP's BIND is the acceptor's MAC over the REQ (control
 * fields and HELLO) and the REP before it, the RTU's the dialer's over the
 * REQ, the REP's first 128 bytes and the RTU before it, each under the pair
 * key with a label of its own.  A dialer then connects only to the queue
 * pair its peer named, and an acceptor takes a held-aside queue pair only
 * when the dialer named, in its proof, the queue pair it connected to.
 *
 * WIRE (little-endian; the control message is bfo_verbs_ud.h's 64 bytes):
 *   REQ  control (64) | HELLO (40)                    104 bytes
 *   REP  control (64) | REPLY (64) | BIND (32)        160 bytes
 *   RTU  control (64) | CONFIRM (48) | BIND (32)      144 bytes
 * A rank without a bfo_auth sends and takes the 64 bytes alone (taken at
 * their word); one with a bfo_auth refuses those, and the other refuses
 * its longer ones as malformed: both say so in their logs.
 *
 * DECISIONS.  What the exchange does with a REQ, an RTU, a claim's timer
 * and the conn machine's actions over UD (bfo_va_req_verdict,
 * bfo_va_rtu_proves, bfo_va_claim_timer, bfo_va_op; bfo_verbs_ud.h
 * bfo_vu_route and bfo_vu_timer for the rest) are decided here, so that
 * bfo_verbs.c and tests/test_verbs_trust.c take the same decisions: the
 * backend carries them out on a device, the test on a modelled wire.
 *
 * No allocation, no I/O; every check is constant-time (bfo_auth_verifyv).
 */
#ifndef BFO_VERBS_AUTH_H
#define BFO_VERBS_AUTH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "bfo_auth.h"
#include "bfo_verbs.h"
#include "bfo_verbs_ud.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BFO_VA_REQ_LEN (BFO_VERBS_CTL_SIZE + BFO_AUTH_HELLO_LEN)
#define BFO_VA_REP_LEN (BFO_VERBS_CTL_SIZE + BFO_AUTH_REPLY_LEN + BFO_AUTH_MAC_LEN)
#define BFO_VA_RTU_LEN (BFO_VERBS_CTL_SIZE + BFO_AUTH_CONFIRM_LEN + BFO_AUTH_MAC_LEN)
#define BFO_VA_MAX_LEN BFO_VA_REP_LEN
/* The REP's part that the RTU's BIND covers: its control fields and REPLY. */
#define BFO_VA_REP_BOUND (BFO_VERBS_CTL_SIZE + BFO_AUTH_REPLY_LEN)
#define BFO_VA_REP_LABEL "bfo verbs rep v1"
#define BFO_VA_RTU_LABEL "bfo verbs rtu v1"

/* The dialer's side of one attempt: its REQ (sent again as it is), then,
 * once a REP proved the peer, its RTU (sent again for a REP that comes
 * again). */
typedef struct bfo_va_dial {
    bfo_auth_hs hs;
    uint8_t req[BFO_VA_REQ_LEN];
    uint8_t rtu[BFO_VA_RTU_LEN];
    int proven; /* the REP verified: rtu is made */
} bfo_va_dial;

/* The acceptor's side of one claim: the REQ as it came, the REP that
 * challenges it (sent again as it is). */
typedef struct bfo_va_claim {
    bfo_auth_hs hs;
    uint8_t req[BFO_VA_REQ_LEN];
    uint8_t rep[BFO_VA_REP_LEN];
} bfo_va_claim;

/* The dialer: its REQ, the control message ctl (BFO_VERBS_CTL_SIZE bytes,
 * kind REQ) followed by a fresh HELLO for (peer, rail, attempt), into
 * d->req.  BFO_OK, or BFO_ERR_INVALID (no pair key for the peer). */
static inline int bfo_va_req_make(const bfo_auth *a, bfo_va_dial *d, const uint8_t *ctl, int peer, int rail,
                                  uint32_t attempt)
{
    memset(d, 0, sizeof *d);
    memcpy(d->req, ctl, BFO_VERBS_CTL_SIZE);
    return bfo_auth_hs_hello(a, &d->hs, peer, rail, attempt, d->req + BFO_VERBS_CTL_SIZE);
}

/* The acceptor: a REQ of len bytes whose control message decoded as s
 * (rank, rail, attempt): its HELLO must be well formed and name the same
 * rank, rail and attempt.  Keeps it in c.  BFO_OK, or BFO_ERR_INVALID. */
static inline int bfo_va_req_check(const bfo_auth *a, bfo_va_claim *c, const uint8_t *m, size_t len,
                                   uint32_t rank, int rail, uint32_t attempt)
{
    int hp, hr;
    uint32_t ha;
    if (len != BFO_VA_REQ_LEN ||
        bfo_auth_hs_read_hello(a, &c->hs, m + BFO_VERBS_CTL_SIZE, BFO_AUTH_HELLO_LEN, &hp, &hr, &ha) != BFO_OK ||
        (uint32_t)hp != rank || hr != rail || ha != attempt)
        return BFO_ERR_INVALID;
    memcpy(c->req, m, BFO_VA_REQ_LEN);
    return BFO_OK;
}

/* The acceptor's challenge: the REP, control message ctl (kind REP, its
 * held-aside queue pair) then the REPLY and the BIND, into c->rep. */
static inline int bfo_va_rep_make(const bfo_auth *a, bfo_va_claim *c, const uint8_t *ctl)
{
    bfo_auth_part parts[2] = { { c->req, BFO_VA_REQ_LEN }, { c->rep, BFO_VA_REP_BOUND } };
    memcpy(c->rep, ctl, BFO_VERBS_CTL_SIZE);
    if (bfo_auth_hs_reply(a, &c->hs, c->rep + BFO_VERBS_CTL_SIZE) != BFO_OK)
        return BFO_ERR_INVALID;
    return bfo_auth_macv(a, c->hs.peer, BFO_VA_REP_LABEL, parts, 2, c->rep + BFO_VA_REP_BOUND);
}

/* The dialer: a REP of len bytes to d's REQ.  Its BIND and REPLY must
 * verify (the peer holds the pair key, answered this REQ, and named this
 * queue pair); then the RTU, control message rtu_ctl (kind RTU) with the
 * CONFIRM and BIND, into d->rtu.  BFO_OK, or BFO_ERR_INVALID with nothing
 * changed (a forged or replayed REP: dropped, the dial waits on). */
static inline int bfo_va_rep_check(const bfo_auth *a, bfo_va_dial *d, const uint8_t *m, size_t len,
                                   const uint8_t *rtu_ctl)
{
    bfo_auth_part bind[2] = { { d->req, BFO_VA_REQ_LEN }, { m, BFO_VA_REP_BOUND } };
    bfo_auth_part rtu[3] = { { d->req, BFO_VA_REQ_LEN }, { m, BFO_VA_REP_BOUND },
                             { d->rtu, BFO_VERBS_CTL_SIZE + BFO_AUTH_CONFIRM_LEN } };
    bfo_auth_hs hs = d->hs; /* a REP that fails leaves the handshake as it was */
    if (d->proven || len != BFO_VA_REP_LEN ||
        bfo_auth_verifyv(a, d->hs.peer, BFO_VA_REP_LABEL, bind, 2, m + BFO_VA_REP_BOUND) != BFO_OK ||
        bfo_auth_hs_read_reply(a, &hs, m + BFO_VERBS_CTL_SIZE, BFO_AUTH_REPLY_LEN) != BFO_OK)
        return BFO_ERR_INVALID;
    memcpy(d->rtu, rtu_ctl, BFO_VERBS_CTL_SIZE);
    if (bfo_auth_hs_confirm(a, &hs, d->rtu + BFO_VERBS_CTL_SIZE) != BFO_OK ||
        bfo_auth_macv(a, hs.peer, BFO_VA_RTU_LABEL, rtu, 3, d->rtu + BFO_VERBS_CTL_SIZE + BFO_AUTH_CONFIRM_LEN) !=
            BFO_OK)
        return BFO_ERR_INVALID;
    d->hs = hs;
    d->proven = 1;
    return BFO_OK;
}

/* The acceptor: an RTU of len bytes for claim c.  Its BIND and CONFIRM
 * must verify (the dialer holds the pair key, saw this REP's fresh nonce
 * and queue pair).  BFO_OK: the proof; BFO_ERR_INVALID: not this claim's
 * (forged, replayed, another claim's), nothing changed. */
static inline int bfo_va_rtu_check(const bfo_auth *a, bfo_va_claim *c, const uint8_t *m, size_t len)
{
    bfo_auth_part bind[3] = { { c->req, BFO_VA_REQ_LEN }, { c->rep, BFO_VA_REP_BOUND },
                              { m, BFO_VERBS_CTL_SIZE + BFO_AUTH_CONFIRM_LEN } };
    if (len != BFO_VA_RTU_LEN ||
        bfo_auth_verifyv(a, c->hs.peer, BFO_VA_RTU_LABEL, bind, 3, m + BFO_VERBS_CTL_SIZE + BFO_AUTH_CONFIRM_LEN) !=
            BFO_OK)
        return BFO_ERR_INVALID;
    return bfo_auth_hs_read_confirm(a, &c->hs, m + BFO_VERBS_CTL_SIZE, BFO_AUTH_CONFIRM_LEN);
}

/* 1 when a REQ (m, len bytes) is the one claim c holds: the dialer's REQ
 * sent again (its REP was lost): the same REP answers it. */
static inline int bfo_va_same_req(const bfo_va_claim *c, const uint8_t *m, size_t len)
{
    return len == BFO_VA_REQ_LEN && !memcmp(c->req, m, BFO_VA_REQ_LEN);
}

/* ------------------------------------------------------------ DECISIONS */

/* Claims held at once per (peer, rail): a newer one drops the oldest. */
#define BFO_VA_CLAIMS 2

/* A claim held (bfo_verbs.c's vclaim begins with it): a REQ not proven
 * yet, answered by the REP of a queue pair held aside, until its RTU or
 * its deadline. */
typedef struct bfo_va_held {
    bfo_va_claim a;
    int challenged;    /* its REP made and sent (the conn machine's send_reply) */
    uint64_t attempt;  /* the REQ's, widened (bfo_vg_claim) */
    uint64_t deadline; /* no RTU by then: refused */
    bfo_vu_resend rs;  /* its REP, sent again until the RTU */
} bfo_va_held;

enum bfo_va_req_verdict {
    BFO_VA_REQ_AGAIN = 1,       /* the REQ a challenged claim holds (its REP lost): that REP again */
    BFO_VA_REQ_UNAUTHENTICATED, /* no handshake in it (the peer has no bfo_auth): refused */
    BFO_VA_REQ_NEW,             /* a new claim, in slot *slot; *evict: the claim there goes first */
};

/* A REQ (m, len bytes) against the claims held (cl[0..n-1], NULL: a free
 * slot).  NEW: the first free slot, or when every slot is held the one
 * whose deadline comes first (*evict 1: refused before the new one is
 * checked; a flood of claims wins this, and the real dialer's REQ comes
 * again).  The new claim is checked (bfo_va_req_check) by the caller. */
static inline int bfo_va_req_verdict(bfo_va_held *const *cl, int n, const uint8_t *m, size_t len, int *slot,
                                     int *evict)
{
    int k;
    *evict = 0;
    for (k = 0; k < n; k++)
        if (cl[k] && cl[k]->challenged && bfo_va_same_req(&cl[k]->a, m, len)) {
            *slot = k;
            return BFO_VA_REQ_AGAIN;
        }
    if (len != BFO_VA_REQ_LEN)
        return BFO_VA_REQ_UNAUTHENTICATED;
    for (k = 0; k < n && cl[k]; k++)
        ;
    if (k == n) {
        int oldest = 0;
        for (k = 1; k < n; k++)
            if (cl[k]->deadline < cl[oldest]->deadline)
                oldest = k;
        k = oldest;
        *evict = 1;
    }
    *slot = k;
    return BFO_VA_REQ_NEW;
}

/* An RTU (m, len bytes, attempt gen): the index of the claim it proves
 * (challenged, of that attempt, its BIND and CONFIRM verified), or -1. */
static inline int bfo_va_rtu_proves(const bfo_auth *a, bfo_va_held *const *cl, int n, const uint8_t *m, size_t len,
                                    uint32_t gen)
{
    for (int k = 0; k < n; k++)
        if (cl[k] && cl[k]->challenged && (uint32_t)cl[k]->attempt == gen &&
            bfo_va_rtu_check(a, &cl[k]->a, m, len) == BFO_OK)
            return k;
    return -1;
}

/* An RTU that proves no claim: 1 when it is the RTU of the claim taken,
 * again (the link up at that attempt: the REP came again before it
 * stopped), nothing to do; 0: forged, replayed or late, rejected. */
static inline int bfo_va_rtu_again(int cs, uint64_t attempt, uint32_t gen)
{
    return cs == BFO_CONN_ST_UP && (uint32_t)attempt == gen;
}

enum bfo_va_timer_verdict { BFO_VA_CLAIM_WAITS = 0, BFO_VA_CLAIM_EXPIRED, BFO_VA_CLAIM_REP_DUE };

/* A claim's timer now: past its deadline (refused: PROOF_BAD), its REP
 * due again, or nothing. */
static inline int bfo_va_claim_timer(bfo_va_held *c, uint64_t now)
{
    if (now >= c->deadline)
        return BFO_VA_CLAIM_EXPIRED;
    return bfo_vu_due(&c->rs, now) ? BFO_VA_CLAIM_REP_DUE : BFO_VA_CLAIM_WAITS;
}

/* What the device does for a conn machine action over UD (bfo_vg_hw.conn;
 * the reports and the close are the glue's). */
enum bfo_va_op {
    BFO_VA_OP_NONE = 0,
    BFO_VA_OP_DIAL,        /* a queue pair, the peer's UD queue pair known: DIAL_CONNECTED or DIAL_FAILED */
    BFO_VA_OP_REQ,         /* the REQ (authenticated: with a fresh HELLO), sent again until the REP */
    BFO_VA_OP_TAKE_REQ,    /* not authenticated: the REQ (arg, its bfo_vu_msg) taken, a queue pair to RTS */
    BFO_VA_OP_REP,         /* not authenticated: the REP of the queue pair taken, sent again until the RTU */
    BFO_VA_OP_TAKE_CLAIM,  /* at a proof: the claim's (arg) queue pair becomes the (peer, rail)'s */
    BFO_VA_OP_CHALLENGE,   /* the claim's (arg) own queue pair and the REP that challenges it */
    BFO_VA_OP_DROP_CLAIM,  /* a claim (arg) refused (stale, never proven) or unanswered (a tie won) */
};

/* auth: the exchange is authenticated (arg is then a claim); action: the
 * conn machine's (enum bfo_conn_action).  Without authentication a
 * refused REQ is a datagram: nothing to close, left unanswered. */
static inline int bfo_va_op(int auth, int action, const void *arg)
{
    switch (action) {
    case BFO_CONN_ACT_DIAL:
        return BFO_VA_OP_DIAL;
    case BFO_CONN_ACT_SEND_HELLO:
        return BFO_VA_OP_REQ;
    case BFO_CONN_ACT_TAKE: /* authenticated: at a proof only, a claim is never taken before */
        return auth ? BFO_VA_OP_TAKE_CLAIM : BFO_VA_OP_TAKE_REQ;
    case BFO_CONN_ACT_SEND_REPLY: /* authenticated: to a claim only, its challenge */
        return auth ? BFO_VA_OP_CHALLENGE : BFO_VA_OP_REP;
    default: /* REFUSE, REFUSE_TIE */
        return auth && arg ? BFO_VA_OP_DROP_CLAIM : BFO_VA_OP_NONE;
    }
}

#ifdef __cplusplus
}
#endif
#endif /* BFO_VERBS_AUTH_H */
