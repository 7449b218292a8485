// SPDX-License-Identifier: BSD-3-Clause
/* bfo_verbs_ud.h - the verbs rails' card and the connection exchange over
 * unreliable datagrams, without libibverbs.
 *
 * Part of the verbs backend (bfo_verbs.h).  Each verbs rail opens one UD
 * queue pair on its port at open; the rank's card for the rail (what
 * bfo_verbs_address publishes through the wire-up) names the port's GID
 * and LID and that queue pair's number and Q_Key.  The REQ, REP and RTU
 * that bring an RC queue pair up (bfo_verbs.h, WIRE-UP) go as datagrams
 * to the peer's UD queue pair: no IP address on the port, no socket, so a
 * rail is `verbs:DEVICE[:PORT]` on every host, native InfiniBand included
 * (docs/verbs.md, "Wire-up").  What is here, tested without a device by
 * tests/test_verbs_ud.c (make check):
 *   - the card (bfo_vu_card_write, bfo_vu_card_read): version 2 (the UD
 *     exchange), and version 1, the 8 bytes the TCP exchange published
 *     before (read as such; the setting tcp_exchange still writes it);
 *   - the control message (64 bytes, the same as over TCP: bfo_vu_msg_*);
 *   - what a datagram does to a queue pair in a given state
 *     (bfo_vu_classify): the conn machine's, a duplicate answered again,
 *     or dropped;
 *   - when a datagram goes again (bfo_vu_due): UD loses them, so the
 *     dialer repeats its REQ and the acceptor its REP until the answer
 *     comes or the conn machine's connect timeout ends the attempt
 *     (CONNECT_FAILED, as for a TCP dial that gets no answer).
 * No allocation, no I/O, no clock: `now` is an argument.
 */
#ifndef BFO_VERBS_UD_H
#define BFO_VERBS_UD_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "bfo_conn.h"
#include "bfo_le.h"
#include "bfo_verbs.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ card */

/* Version 1: u8 4, u8 0, u16 TCP port, 4 bytes of IPv4 address (network
 * order): the control channel's listener (the TCP exchange).
 * Version 2: u8 'V', u8 2, u8 flags, u8 mtu, u16 lid, u16 0, u32 UD queue
 * pair number, u32 Q_Key, u8 gid[16], u32 0 (little-endian): 32 bytes. */
#define BFO_VU_CARD_V1_LEN 8
#define BFO_VU_CARD_TAG 0x56 /* 'V' */
#define BFO_VU_CARD_VERSION 2
#define BFO_VU_CARD_LEN 32
#define BFO_VU_CARD_UD 0x1u /* flags: the rank takes the exchange on its UD queue pair */
/* The Q_Key of every bfo UD queue pair (the high bit clear: not a
 * controlled Q_Key, which an unprivileged process may not use). */
#define BFO_VU_QKEY 0x0BF0E5B5u

typedef struct bfo_vu_card {
    int version;       /* 1 or 2 */
    unsigned flags;    /* version 2: BFO_VU_CARD_UD */
    uint32_t ip;       /* version 1: IPv4, host order */
    uint16_t tcp_port; /* version 1, host order */
    uint8_t mtu;       /* version 2: the port's active MTU (enum ibv_mtu, 1..5) */
    uint16_t lid;
    uint32_t qpn, qkey;
    uint8_t gid[16];
} bfo_vu_card;

/* Writes c as its version says; returns its length (0: a bad card). */
static inline size_t bfo_vu_card_write(const bfo_vu_card *c, uint8_t *out, size_t cap)
{
    if (c->version == 1) {
        if (cap < BFO_VU_CARD_V1_LEN)
            return 0;
        out[0] = 4;
        out[1] = 0;
        out[2] = (uint8_t)(c->tcp_port >> 8);
        out[3] = (uint8_t)c->tcp_port;
        out[4] = (uint8_t)(c->ip >> 24);
        out[5] = (uint8_t)(c->ip >> 16);
        out[6] = (uint8_t)(c->ip >> 8);
        out[7] = (uint8_t)c->ip;
        return BFO_VU_CARD_V1_LEN;
    }
    if (c->version != BFO_VU_CARD_VERSION || cap < BFO_VU_CARD_LEN)
        return 0;
    memset(out, 0, BFO_VU_CARD_LEN);
    out[0] = BFO_VU_CARD_TAG;
    out[1] = BFO_VU_CARD_VERSION;
    out[2] = (uint8_t)c->flags;
    out[3] = c->mtu;
    bfo_put16(out + 4, c->lid);
    bfo_put32(out + 8, c->qpn);
    bfo_put32(out + 12, c->qkey);
    memcpy(out + 16, c->gid, 16);
    return BFO_VU_CARD_LEN;
}

/* Reads a peer's card: 0, or -1 with why (a sentence) for one this bfo
 * cannot read (not a verbs card, a version it does not know, a bad
 * length, a UD queue pair number of 0). */
static inline int bfo_vu_card_read(const uint8_t *in, size_t len, bfo_vu_card *c, char *why, size_t whylen)
{
    memset(c, 0, sizeof *c);
    if (len == BFO_VU_CARD_V1_LEN && in[0] == 4 && in[1] == 0) {
        c->version = 1;
        c->tcp_port = (uint16_t)(in[2] << 8 | in[3]);
        c->ip = (uint32_t)in[4] << 24 | (uint32_t)in[5] << 16 | (uint32_t)in[6] << 8 | in[7];
        return 0;
    }
    if (len < 2 || in[0] != BFO_VU_CARD_TAG) {
        snprintf(why, whylen, "not a verbs card (%zu bytes, first byte %u)", len, len ? in[0] : 0u);
        return -1;
    }
    if (in[1] != BFO_VU_CARD_VERSION) {
        snprintf(why, whylen, "a verbs card of version %u (this bfo reads versions 1 and %d: run one "
                 "bfo on every rank)", in[1], BFO_VU_CARD_VERSION);
        return -1;
    }
    if (len != BFO_VU_CARD_LEN) {
        snprintf(why, whylen, "a verbs card of version %d with %zu bytes, not %d", BFO_VU_CARD_VERSION, len,
                 BFO_VU_CARD_LEN);
        return -1;
    }
    c->version = BFO_VU_CARD_VERSION;
    c->flags = in[2];
    c->mtu = in[3];
    c->lid = bfo_get16(in + 4);
    c->qpn = bfo_get32(in + 8) & 0xffffff;
    c->qkey = bfo_get32(in + 12);
    memcpy(c->gid, in + 16, 16);
    if ((c->flags & BFO_VU_CARD_UD) && c->qpn == 0) {
        snprintf(why, whylen, "a verbs card with UD queue pair number 0");
        return -1;
    }
    return 0;
}

/* --------------------------------------------------------------- message */

/* One control message (BFO_VERBS_CTL_SIZE bytes, little-endian; the same
 * over a datagram as over the TCP exchange): u32 magic, u8 kind, u8
 * version (2), u16 rail, u32 rank, u32 nranks, u64 job, u32 qpn, u32 psn,
 * u16 lid, u8 mtu, u8 0, u8 gid[16], u32 attempt, u32 dialed, u32 grant.
 * grant: in a REQ or REP, the frames the sender lets the peer have in its
 * receive buffers at once (its credit, docs/verbs.md "Shared receive
 * queue"); 0: no limit (the per-queue-pair receives, whose depth the
 * peer's adapter meets as receiver-not-ready).  dialed: the low 32 bits of the sender's last dial of the (peer, rail)
 * (0 none): in a REP, every REQ of the replier's up to it is given up (a
 * dial that lost the tie, whose REQ may come late: stale). */
typedef struct bfo_vu_msg {
    int kind; /* enum bfo_verbs_ctl_kind */
    int rail;
    uint32_t rank, nranks;
    uint64_t job;
    uint32_t qpn, psn;
    uint16_t lid;
    uint8_t mtu;
    uint8_t gid[16];
    uint32_t attempt; /* the dialer's attempt number, its low 32 bits (echoed in REP and RTU) */
    uint32_t dialed;  /* the sender's last dial, its low 32 bits */
    uint32_t grant;   /* REQ, REP: the sender's credit for the peer (0: no limit) */
} bfo_vu_msg;

static inline void bfo_vu_msg_encode(const bfo_vu_msg *s, uint8_t *m)
{
    memset(m, 0, BFO_VERBS_CTL_SIZE);
    bfo_put32(m, BFO_VERBS_MAGIC);
    m[4] = (uint8_t)s->kind;
    m[5] = BFO_VERBS_CTL_VERSION;
    bfo_put16(m + 6, (uint16_t)s->rail);
    bfo_put32(m + 8, s->rank);
    bfo_put32(m + 12, s->nranks);
    bfo_put64(m + 16, s->job);
    bfo_put32(m + 24, s->qpn);
    bfo_put32(m + 28, s->psn);
    bfo_put16(m + 32, s->lid);
    m[34] = s->mtu;
    memcpy(m + 36, s->gid, 16);
    bfo_put32(m + 52, s->attempt);
    bfo_put32(m + 56, s->dialed);
    bfo_put32(m + 60, s->grant);
}

/* Decodes and checks a message that reached rank `me` of `size` in job
 * `job` on rail `rail`: 0, or -1 with why.  kind 0: any of REQ, REP, RTU;
 * else only that one.  A REQ or a REP must name a queue pair and an MTU. */
static inline int bfo_vu_msg_decode(const uint8_t *m, size_t len, int kind, int me, int size, uint64_t job,
                                    int rail, bfo_vu_msg *s, char *why, size_t whylen)
{
    memset(s, 0, sizeof *s);
    if (len < BFO_VERBS_CTL_SIZE) {
        snprintf(why, whylen, "a control message of %zu bytes", len);
        return -1;
    }
    if (bfo_get32(m) != BFO_VERBS_MAGIC || m[5] != BFO_VERBS_CTL_VERSION) {
        snprintf(why, whylen, "not a control message (magic %08x version %u)", bfo_get32(m), m[5]);
        return -1;
    }
    s->kind = m[4];
    if (kind ? s->kind != kind : s->kind < BFO_VERBS_K_REQ || s->kind > BFO_VERBS_K_RTU) {
        snprintf(why, whylen, "control message kind %u, expected %d", m[4], kind);
        return -1;
    }
    s->rail = bfo_get16(m + 6);
    s->rank = bfo_get32(m + 8);
    s->nranks = bfo_get32(m + 12);
    s->job = bfo_get64(m + 16);
    if (s->job != job || s->nranks != (uint32_t)size) {
        snprintf(why, whylen, "control message of another job");
        return -1;
    }
    if (s->rank >= (uint32_t)size || s->rank == (uint32_t)me || s->rail != rail) {
        snprintf(why, whylen, "control message from rank %u for rail %d on rail %d", s->rank, s->rail, rail);
        return -1;
    }
    s->qpn = bfo_get32(m + 24) & 0xffffff;
    s->psn = bfo_get32(m + 28) & 0xffffff;
    s->lid = bfo_get16(m + 32);
    s->mtu = m[34];
    memcpy(s->gid, m + 36, 16);
    s->attempt = bfo_get32(m + 52);
    s->dialed = bfo_get32(m + 56);
    s->grant = bfo_get32(m + 60);
    if (s->kind != BFO_VERBS_K_RTU && (s->qpn == 0 || s->mtu < 1 || s->mtu > 5)) {
        snprintf(why, whylen, "control message with a bad QP number or MTU");
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------ datagrams */

/* What a checked datagram does to its queue pair. */
enum bfo_vu_verdict {
    BFO_VU_DROP = 0,   /* nothing: a late or stray one (logged at level 3) */
    BFO_VU_HELLO,      /* a REQ for the conn machine (bfo_vg_hello: taken, or refused) */
    BFO_VU_REP_AGAIN,  /* a REQ already taken, its REP lost: the same REP again */
    BFO_VU_TAKE_REP,   /* the REP to the dialer's attempt: its queue pair to RTS, the RTU, up */
    BFO_VU_RTU_AGAIN,  /* a REP the dialer already took (its RTU lost): the RTU again */
    BFO_VU_TAKE_RTU,   /* the RTU to the attempt the acceptor took: up */
    BFO_VU_CLAIM,      /* authenticated: a REQ is a claim (bfo_verbs_auth.h, bfo_va_req_verdict) */
    BFO_VU_PROOF,      /* authenticated: an RTU is the proof of a claim (bfo_va_rtu_proves) */
};

/* kind: the datagram's; cs: the queue pair's conn state (BFO_CONN_ST_*);
 * dialer: this side dialed the queue pair's connection (bfo_link_is_dialer);
 * attempt: the link's current connection's (its dialer's), compared by its
 * low 32 bits with the datagram's; qpn: the
 * datagram's queue pair number, have_qp: a queue pair is wired towards
 * peer_qpn.  A REQ is the conn machine's unless it is the one taken
 * (same attempt, same queue pair) while that queue pair lives: then its
 * REP went astray and goes again (the machine would refuse it as stale,
 * and the dialer would wait out its connect timeout). */
static inline int bfo_vu_classify(int kind, int cs, int dialer, uint64_t attempt, uint32_t msg_attempt,
                                  uint32_t qpn, int have_qp, uint32_t peer_qpn)
{
    const int same = msg_attempt == (uint32_t)attempt && attempt != 0;
    switch (kind) {
    case BFO_VERBS_K_REQ:
        if (same && have_qp && qpn == peer_qpn &&
            (cs == BFO_CONN_ST_REPLY_SENT || cs == BFO_CONN_ST_REPLY_SENT_ASKED || (cs == BFO_CONN_ST_UP && !dialer)))
            return BFO_VU_REP_AGAIN;
        return BFO_VU_HELLO;
    case BFO_VERBS_K_REP:
        if (!same)
            return BFO_VU_DROP; /* to an attempt given up */
        if (cs == BFO_CONN_ST_HELLO_SENT)
            return BFO_VU_TAKE_REP;
        if (cs == BFO_CONN_ST_UP && dialer && have_qp && qpn == peer_qpn)
            return BFO_VU_RTU_AGAIN;
        return BFO_VU_DROP;
    case BFO_VERBS_K_RTU:
        if (same && (cs == BFO_CONN_ST_REPLY_SENT || cs == BFO_CONN_ST_REPLY_SENT_ASKED))
            return BFO_VU_TAKE_RTU;
        return BFO_VU_DROP;
    }
    return BFO_VU_DROP;
}

/* The same, for the exchange as it runs (bfo_verbs.c: ud_datagram):
 * authenticated (auth: a bfo_auth over UD, bfo_verbs.h AUTHENTICATION), a
 * REQ is a claim and an RTU a proof, whatever the state (a claim is held
 * aside from the queue pair's own connection); a REP is classified as
 * above, and taken (TAKE_REP) only once bfo_va_rep_check verified it. */
static inline int bfo_vu_route(int auth, int kind, int cs, int dialer, uint64_t attempt, uint32_t msg_attempt,
                               uint32_t qpn, int have_qp, uint32_t peer_qpn)
{
    if (auth && kind == BFO_VERBS_K_REQ)
        return BFO_VU_CLAIM;
    if (auth && kind == BFO_VERBS_K_RTU)
        return BFO_VU_PROOF;
    return bfo_vu_classify(kind, cs, dialer, attempt, msg_attempt, qpn, have_qp, peer_qpn);
}

/* ----------------------------------------------------------- repeating */

/* The first repeat of a REQ or a REP after this long, then twice as long
 * each time up to the cap; the conn machine's connect timeout (2 s by
 * default) ends the attempt: about 6 REQs in all by default. */
#define BFO_VU_RESEND_FIRST_NS 50000000ull /* 50 ms: well above a round trip, even in TCG guests */
#define BFO_VU_RESEND_MAX_NS 500000000ull

enum bfo_vu_what { BFO_VU_NONE = 0, BFO_VU_SEND_REQ, BFO_VU_SEND_REP };

/* A queue pair's datagram waiting for its answer. */
typedef struct bfo_vu_resend {
    int what;     /* enum bfo_vu_what */
    uint64_t at;  /* due then */
    uint64_t gap; /* the gap before the one after */
    unsigned sent;
} bfo_vu_resend;

/* The datagram `what` just went out for the first time. */
static inline void bfo_vu_arm(bfo_vu_resend *r, int what, uint64_t now)
{
    r->what = what;
    r->gap = BFO_VU_RESEND_FIRST_NS;
    r->at = now + r->gap;
    r->sent = 1;
}

/* 1 when the datagram is due again now (the next one then armed). */
static inline int bfo_vu_due(bfo_vu_resend *r, uint64_t now)
{
    if (r->what == BFO_VU_NONE || now < r->at)
        return 0;
    r->gap = r->gap * 2 < BFO_VU_RESEND_MAX_NS ? r->gap * 2 : BFO_VU_RESEND_MAX_NS;
    r->at = now + r->gap;
    r->sent++;
    return 1;
}

/* 1 while the conn state still waits for the answer to `what` (the REP to
 * a REQ, the RTU to a REP): else nothing goes again. */
static inline int bfo_vu_waits(int what, int cs)
{
    return (what == BFO_VU_SEND_REQ && cs == BFO_CONN_ST_HELLO_SENT) ||
           (what == BFO_VU_SEND_REP && (cs == BFO_CONN_ST_REPLY_SENT || cs == BFO_CONN_ST_REPLY_SENT_ASKED));
}

/* What a queue pair's own timer does now (bfo_verbs.c: ud_timers). */
enum bfo_vu_timer_verdict {
    BFO_VU_T_NONE = 0, /* nothing waits, or not yet due */
    BFO_VU_T_READY,    /* not authenticated, the acceptor waits for the RTU and a frame of
                        * the dialer's came on the new queue pair: the dialer has it at RTS
                        * (it sends nothing before the REP), which is what the RTU says */
    BFO_VU_T_AGAIN,    /* the REQ (rs->what SEND_REQ) or the REP goes again */
};

/* auth: the exchange is authenticated (an RTU is a proof, and only the
 * proof takes: a frame stands for nothing); cs: the queue pair's conn
 * state; rx_held: frames of its new queue pair waiting for CONNECTED; rs:
 * its datagram waiting for an answer (cleared when the state no longer
 * waits for it, or READY). */
static inline int bfo_vu_timer(int auth, int cs, int rx_held, bfo_vu_resend *rs, uint64_t now)
{
    if (!auth && (cs == BFO_CONN_ST_REPLY_SENT || cs == BFO_CONN_ST_REPLY_SENT_ASKED) && rx_held > 0) {
        rs->what = BFO_VU_NONE;
        return BFO_VU_T_READY;
    }
    if (rs->what != BFO_VU_NONE && !bfo_vu_waits(rs->what, cs)) {
        rs->what = BFO_VU_NONE;
        return BFO_VU_T_NONE;
    }
    return bfo_vu_due(rs, now) ? BFO_VU_T_AGAIN : BFO_VU_T_NONE;
}

#ifdef __cplusplus
}
#endif
#endif /* BFO_VERBS_UD_H */
