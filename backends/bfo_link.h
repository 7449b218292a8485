// SPDX-License-Identifier: BSD-3-Clause
/* bfo_link.h - one transport connection, run by the conn machine.
 *
 * Part of bfo's backends (header-only, like bfo_list.h).  Every transport
 * that makes connections (TCP, shm, verbs) keeps one bfo_link per (peer,
 * rail) and lets the conn machine (spec/conn.rl, gen/bfo_conn.h) decide
 * what happens to it: who dials (the side whose engine asks; both at once:
 * the lower rank's dial wins), when a hello is taken or refused (a stale
 * attempt, a tie this side's dial wins), what a connect() does to the
 * connection there is, what a failure tells the engine (CONNECTED,
 * CONNECT_FAILED, RAIL_ERROR or nothing).  The transport only carries the
 * actions out (dial, send the hello, take an accepted connection, send the
 * reply, refuse one, answer a tie it wins, report, close) in the one
 * callback of its bfo_link_binding.  Probing, back-off and re-admission
 * are the rail machine's, in the engine: this machine never retries.
 *
 * Every state change passes through bfo_link_feed, which the trace hook
 * (binding->trace) sees step by step like the engine's, and which returns
 * BFO_ERR_ILLEGAL_EVENT, changing nothing, for an event the machine does
 * not take in its state.
 *
 * What the module keeps besides the machine's state: the attempt numbers
 * (a dial numbers its attempt, counting from 1 per (peer, rail) and side;
 * the hello carries it; each side remembers the last one it took from the
 * peer, raised by what the peer's reply says it dialed last, and classes a
 * hello whose number is not above it as stale, one above it by its
 * sender's rank: LOWER_HELLO_RCVD, HIGHER_HELLO_RCVD), the connect deadline
 * (armed by the actions dial, wait and take; disarmed by send_hello where
 * the transport's connection proves that the peer's host answers;
 * moved on by time the transport did not run, bfo_link_gap;
 * bfo_link_timeout feeds TIMED_OUT), and a connect() not fed yet (connect()
 * is called from inside engine calls, where a transport only marks;
 * bfo_link_asked feeds it at the transport's progress, and bfo_link_feed
 * feeds it first when a reply, the dialer's readiness, or a hello arrives
 * (a hello in DOWN is taken first, the request fed before the connection
 * is declared up): that connection answers it).
 *
 * Authenticating transports feed hellos as claims and their dialers'
 * proofs (bfo_link_claim, bfo_link_proof below): only a proof takes a
 * connection; a live one is never replaced by a hello alone.
 *
 * No allocation, no I/O, no clock: `now` is an argument.
 */
#ifndef BFO_LINK_H
#define BFO_LINK_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "bfo_conn.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bfo_link {
    bfo_conn_fsm fsm;   /* the conn machine's state (BFO_CONN_ST_*) */
    int peer, rail;
    int lower;          /* this side is the lower rank of the pair: its dial wins a tie */
    int dialer;         /* this side dialed the current (or last) connection; 0: it took a hello */
    uint64_t attempt;   /* the current (or last) connection's attempt number, its dialer's (0: none) */
    uint64_t dialed;    /* this side's last dial (0: none) */
    uint64_t taken;     /* the last hello taken from the peer, or the last dial its reply named */
    uint64_t offered;   /* the attempt number of the hello being fed (take records it) */
    uint64_t deadline;  /* the connect deadline (dial, wait, take arm it; UINT64_MAX: none) */
    int connect_req;    /* connect() called, not fed yet */
    /* BROKEN to feed at the transport's next safe point (bfo_link_break,
     * bfo_link_breaks): the connection failed where the machine may not be
     * fed (inside a post, under a write), and why; the first reason stays */
    int broken;
    int malformed;      /* ... for malformed input from the peer */
    char why[128];
} bfo_link;

struct bfo_link_binding;

/* Carries out one action of the conn machine (BFO_CONN_ACT_*) on link l,
 * after the module's own part of it (dial: the new attempt number and the
 * deadline; wait: the deadline; take: the attempt number offered, the
 * deadline; send_hello: the deadline disarmed when the binding's
 * host_answers).  `st` is the step (event, from, to), `arg` what the event
 * was fed with (the incoming connection for take, send_reply, refuse and
 * refuse_tie; the reason, a string, for BROKEN and DIAL_FAILED).  Returns
 * 0, or an event to feed next, once every action of this step is done: a
 * dial that connected or failed at once (DIAL_CONNECTED, DIAL_FAILED), a
 * reply after which the dialer is ready (PEER_READY).  Never feeds the
 * link itself. */
typedef int (*bfo_link_act_fn)(struct bfo_link_binding *b, bfo_link *l, int action,
                               const bfo_step *st, void *arg);

/* One transport's binding, shared by its links. */
typedef struct bfo_link_binding {
    void *ctx;                /* the transport */
    bfo_link_act_fn act;
    uint64_t timeout_ns;      /* the connect timeout */
    /* 1: a dial that connected proves that the peer's host answers, as
     * long as that connection stands (TCP: the peer's kernel accepted it;
     * shm: the peer's process holds its end), so the dialer waits for the
     * reply without a deadline (send_hello disarms it; the peer may be
     * computing) and only the connection failing (BROKEN) ends the wait.
     * 0 (verbs: datagrams the peer's software must answer): the connect
     * timeout runs on. */
    int host_answers;
    const bfo_tracer *trace;  /* optional: every step, refused ones included */
    uint64_t last_now;        /* the transport's last progress (bfo_link_gap; 0: none yet) */
    int asked;                /* links with a connect() not fed yet */
    int nbroken;              /* links marked broken since bfo_link_breaks last found none */
    unsigned long refused;    /* steps the machine refused (BFO_ERR_ILLEGAL_EVENT) */
} bfo_link_binding;

/* The binding of a transport (ctx) whose actions are `act`, with its
 * connect timeout; nothing asked, nothing broken, nothing traced, the
 * connect timeout on in every waiting state (host_answers 0). */
static inline void bfo_link_bind(bfo_link_binding *b, void *ctx, bfo_link_act_fn act, uint64_t timeout_ns)
{
    memset(b, 0, sizeof *b);
    b->ctx = ctx;
    b->act = act;
    b->timeout_ns = timeout_ns;
}

/* 1 when `me` wins a tie with `peer` (both dial at once): the lower rank's
 * dial wins. */
static inline int bfo_link_wins_ties(int me, int peer) { return me < peer; }

/* 1 in the states where the engine has the connection. */
static inline int bfo_link_state_up(int cs) { return cs == BFO_CONN_ST_UP; }
static inline int bfo_link_up(const bfo_link *l) { return bfo_link_state_up(l->fsm.cs); }

/* 1 when this side dialed the connection it holds or makes (DIALING,
 * HELLO_SENT, or UP on its own dial); 0 when it took the peer's hello, or
 * holds none. */
static inline int bfo_link_is_dialer(const bfo_link *l)
{
    int cs = l->fsm.cs;
    return cs == BFO_CONN_ST_DIALING || cs == BFO_CONN_ST_HELLO_SENT || (cs == BFO_CONN_ST_UP && l->dialer);
}

/* 1 when this dialer waits for the peer's reply on a connection that
 * proves the peer's host answers (the binding's host_answers): the
 * transport tells the engine so, at a bounded rate, while it lasts. */
static inline int bfo_link_waits_on_host(const bfo_link_binding *b, const bfo_link *l)
{
    return b->host_answers && l->fsm.cs == BFO_CONN_ST_HELLO_SENT && !l->broken;
}

/* 1 when a connect() not fed yet goes first, before `event` in state cs:
 * the connection that event makes answers it.  Not before a hello in DOWN:
 * there the hello is taken first (fed first, the request would dial), and
 * the request is fed before the connection is declared up. */
static inline int bfo_link__ask_first(int event, int cs)
{
    switch (event) {
    case BFO_CONN_EV_REPLY_RCVD:
    case BFO_CONN_EV_PEER_READY:
        return 1;
    case BFO_CONN_EV_LOWER_HELLO_RCVD:
    case BFO_CONN_EV_HIGHER_HELLO_RCVD:
        return cs != BFO_CONN_ST_DOWN;
    case BFO_CONN_EV_PROOF_RCVD: /* in DOWN and UP the proven connection answers it (bfo_link_proof) */
        return cs != BFO_CONN_ST_DOWN && cs != BFO_CONN_ST_UP;
    default:
        return 0;
    }
}

/* Feeds one event, then the events the actions return, until none is left.
 * Returns BFO_OK, or the first step's error (BFO_ERR_ILLEGAL_EVENT: the
 * machine does not take the event in its state; nothing changed, nothing
 * was done).  A pending connect() is fed first where bfo_link__ask_first
 * says; feeding CONNECT_ASKED clears it. */
static inline int bfo_link_feed(bfo_link_binding *b, bfo_link *l, int event, void *arg,
                                uint64_t now)
{
    int first = 1, rc;
    for (;;) {
        bfo_step st;
        int next = 0;
        if (l->connect_req && bfo_link__ask_first(event, l->fsm.cs) &&
            bfo_conn_accepts(l->fsm.cs, BFO_CONN_EV_CONNECT_ASKED))
            (void)bfo_link_feed(b, l, BFO_CONN_EV_CONNECT_ASKED, (void *)0, now);
        memset(&st, 0, sizeof st);
        st.trace = b->trace;
        st.obj = l;
        if (event == BFO_CONN_EV_CONNECT_ASKED && l->connect_req) {
            l->connect_req = 0;
            b->asked--;
        }
        rc = bfo_conn_step(&l->fsm, event, &st);
        if (rc != BFO_OK) {
            b->refused++;
            return first ? rc : BFO_ERR_ILLEGAL_EVENT; /* a follow-up refused: a binding's bug */
        }
        for (unsigned i = 0; i < st.n_actions; i++) {
            int a = st.actions[i], r;
            if (a == BFO_CONN_ACT_DIAL) {
                l->attempt = ++l->dialed;
                l->dialer = 1;
                l->deadline = now + b->timeout_ns;
            } else if (a == BFO_CONN_ACT_WAIT) {
                l->deadline = now + b->timeout_ns;
            } else if (a == BFO_CONN_ACT_TAKE) {
                l->attempt = l->taken = l->offered;
                l->dialer = 0;
                l->deadline = now + b->timeout_ns;
            } else if (a == BFO_CONN_ACT_SEND_HELLO && b->host_answers) {
                l->deadline = UINT64_MAX;
            } else if (a == BFO_CONN_ACT_SEND_REPLY && st.from == BFO_CONN_ST_DOWN) {
                l->deadline = now + b->timeout_ns; /* a claim's: the wait for its proof (REPLY_SENT); take's: the same */
            }
            r = b->act(b, l, a, &st, arg);
            if (r > 0)
                next = r;
        }
        if (!next)
            return BFO_OK;
        event = next;
        arg = (void *)0;
        first = 0;
    }
}

/* Sets link l up for (peer, rail) as seen from rank `me` (PEER_CHOSEN).  A
 * link to itself stays NEW, where it takes nothing. */
static inline void bfo_link_init(bfo_link_binding *b, bfo_link *l, int me, int peer, int rail)
{
    memset(l, 0, sizeof *l);
    l->peer = peer;
    l->rail = rail;
    l->lower = bfo_link_wins_ties(me, peer);
    bfo_conn_init(&l->fsm);
    if (peer != me)
        bfo_link_feed(b, l, BFO_CONN_EV_PEER_CHOSEN, (void *)0, 0);
}

/* The engine's connect(), from inside an engine call: only marks.  Returns
 * 1 when it was not marked yet. */
static inline int bfo_link_ask(bfo_link_binding *b, bfo_link *l)
{
    if (l->connect_req)
        return 0;
    l->connect_req = 1;
    b->asked++;
    return 1;
}

/* At the transport's progress: feeds a connect() not fed yet. */
static inline int bfo_link_asked(bfo_link_binding *b, bfo_link *l, uint64_t now)
{
    return l->connect_req ? bfo_link_feed(b, l, BFO_CONN_EV_CONNECT_ASKED, (void *)0, now) : BFO_OK;
}

/* At the transport's progress: every connect() not fed yet among n links
 * (laid out as for bfo_link_breaks) is fed.  Returns how many were. */
static inline int bfo_link_asked_all(bfo_link_binding *b, bfo_link *l0, size_t stride, int n, uint64_t now)
{
    int fed = 0;
    for (int i = 0; b->asked > 0 && i < n; i++) {
        bfo_link *l = (bfo_link *)(void *)((char *)l0 + (size_t)i * stride);
        if (l->connect_req) {
            bfo_link_asked(b, l, now);
            fed++;
        }
    }
    return fed;
}

/* bfo_link_asked_all over n links named by pointers (bfo_link_breaks_p). */
static inline int bfo_link_asked_all_p(bfo_link_binding *b, bfo_link *const *ls, int n, uint64_t now)
{
    int fed = 0;
    for (int i = 0; b->asked > 0 && i < n; i++)
        if (ls[i]->connect_req) {
            bfo_link_asked(b, ls[i], now);
            fed++;
        }
    return fed;
}

/* A valid hello from the peer for this link, with its attempt number: fed
 * as STALE_HELLO_RCVD when the number is not above the last one taken (a
 * dial the peer gave up), else as LOWER_HELLO_RCVD or HIGHER_HELLO_RCVD by
 * the peer's rank.  `in` is the transport's incoming connection (take,
 * send_reply, refuse, refuse_tie get it). */
static inline int bfo_link_hello(bfo_link_binding *b, bfo_link *l, uint64_t attempt, void *in,
                                 uint64_t now)
{
    l->offered = attempt;
    return bfo_link_feed(b, l,
                         attempt <= l->taken ? BFO_CONN_EV_STALE_HELLO_RCVD
                         : l->lower         ? BFO_CONN_EV_HIGHER_HELLO_RCVD
                                            : BFO_CONN_EV_LOWER_HELLO_RCVD,
                         in, now);
}

/* AUTHENTICATING TRANSPORTS (TCP, shm and verbs with a bfo_auth).  A hello is only a
 * claim until its dialer proves it holds the pair key: the transport feeds
 * it with bfo_link_claim, which never changes a connection (the machine
 * answers it with the handshake's reply on its own connection, send_reply
 * with no take before it (a challenge),
 * which the transport holds aside, or with "I am dialing you" where this
 * side's dial wins the tie; from DOWN it waits for the proof in
 * REPLY_SENT, the connect deadline armed, so that a connect() meanwhile
 * waits for that connection rather than dial across it), and the
 * dialer's proof (its CONFIRM, verified over this side's fresh nonce) with
 * bfo_link_proof, which does what a trusted hello does in bfo_link_hello:
 * take the connection, closing this side's dial or replacing the live
 * one.  So a forged or replayed hello takes nothing, not even the last
 * attempt taken (raised by take, which only a proof reaches): a forged
 * attempt 2^64-1 cannot make the real peer's hellos stale.  (Its cost: a
 * connect() in that wait waits up to the connect timeout for a proof that
 * never comes, then fails, and the engine dials after its back-off.) */

/* A well-formed hello not proven yet, naming the peer: STALE_HELLO_RCVD
 * when its attempt number is not above the last one taken (refused: safe
 * even when forged), else LOWER_CLAIM_RCVD or HIGHER_CLAIM_RCVD by the
 * rank it names.  `in`: the incoming connection (send_reply, refuse_tie,
 * refuse get it). */
static inline int bfo_link_claim(bfo_link_binding *b, bfo_link *l, uint64_t attempt, void *in, uint64_t now)
{
    l->offered = attempt;
    return bfo_link_feed(b, l,
                         attempt <= l->taken ? BFO_CONN_EV_STALE_HELLO_RCVD
                         : l->lower         ? BFO_CONN_EV_HIGHER_CLAIM_RCVD
                                            : BFO_CONN_EV_LOWER_CLAIM_RCVD,
                         in, now);
}

/* The answer to a challenged claim on connection `in`, for the attempt the
 * claim named: ok, the proof verified: PROOF_RCVD (take), or
 * STALE_HELLO_RCVD when a proof for a newer attempt was taken meanwhile;
 * not ok (a proof that does not verify, or the connection closed or sent
 * something else first): PROOF_BAD_RCVD, the connection refused.  A
 * connect() not fed yet is answered by the proven connection: in DOWN and
 * UP it is dropped (fed, it would dial, or close what the proof brings),
 * elsewhere fed first (bfo_link__ask_first). */
static inline int bfo_link_proof(bfo_link_binding *b, bfo_link *l, int ok, uint64_t attempt, void *in, uint64_t now)
{
    int ev = !ok ? BFO_CONN_EV_PROOF_BAD_RCVD
             : attempt <= l->taken ? BFO_CONN_EV_STALE_HELLO_RCVD
                                   : BFO_CONN_EV_PROOF_RCVD;
    if (ev == BFO_CONN_EV_PROOF_RCVD && l->connect_req &&
        (l->fsm.cs == BFO_CONN_ST_DOWN || l->fsm.cs == BFO_CONN_ST_UP) &&
        bfo_conn_accepts(l->fsm.cs, ev)) {
        l->connect_req = 0;
        b->asked--;
    }
    if (ok)
        l->offered = attempt;
    return bfo_link_feed(b, l, ev, in, now);
}

/* The peer's valid reply to this side's current attempt, which names the
 * last attempt the peer dialed itself (0: none, or a transport whose reply
 * does not say): every hello of the peer up to that one is given up (a
 * dial that lost the tie, read late), so stale from now on.  Fed as
 * REPLY_RCVD. */
static inline int bfo_link_reply(bfo_link_binding *b, bfo_link *l, uint64_t peer_dialed, uint64_t now)
{
    int rc = bfo_link_feed(b, l, BFO_CONN_EV_REPLY_RCVD, (void *)0, now);
    if (rc == BFO_OK && peer_dialed > l->taken)
        l->taken = peer_dialed;
    return rc;
}

/* The peer answered this side's hello "I am dialing you" (refuse_tie):
 * fed as TIE_LOST_RCVD when the peer is the lower rank and this side
 * waits for its reply; otherwise BFO_ERR_ILLEGAL_EVENT, nothing fed (the
 * higher rank may not say so: the transport breaks the connection as
 * malformed). */
static inline int bfo_link_tie_lost(bfo_link_binding *b, bfo_link *l, uint64_t now)
{
    if (l->lower || !bfo_conn_accepts(l->fsm.cs, BFO_CONN_EV_TIE_LOST_RCVD))
        return BFO_ERR_ILLEGAL_EVENT;
    return bfo_link_feed(b, l, BFO_CONN_EV_TIE_LOST_RCVD, (void *)0, now);
}

/* Feeds BROKEN (with its reason) when the link holds a connection that
 * can break; returns 0 when it held none (nothing to do). */
static inline int bfo_link_broken(bfo_link_binding *b, bfo_link *l, const char *why, uint64_t now)
{
    if (!bfo_conn_accepts(l->fsm.cs, BFO_CONN_EV_BROKEN))
        return 0;
    bfo_link_feed(b, l, BFO_CONN_EV_BROKEN, (void *)why, now);
    return 1;
}

/* Marks link l broken (malformed: for malformed input), the reason
 * formatted like printf; the first reason stays.  Only marks: safe from
 * anywhere, inside posts and engine calls too; bfo_link_breaks feeds it. */
static inline void bfo_link_vbreak(bfo_link_binding *b, bfo_link *l, int malformed, const char *fmt,
                                   va_list ap)
{
    if (l->broken)
        return;
    l->broken = 1;
    l->malformed = malformed;
    b->nbroken++;
    vsnprintf(l->why, sizeof l->why, fmt, ap);
}

static inline void bfo_link_break(bfo_link_binding *b, bfo_link *l, int malformed, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static inline void bfo_link_break(bfo_link_binding *b, bfo_link *l, int malformed, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    bfo_link_vbreak(b, l, malformed, fmt, ap);
    va_end(ap);
}

/* At the transport's safe point: every link marked broken among n links
 * (an array whose elements, `stride` bytes apart, hold their bfo_link at
 * the address l0 gives for the first) is fed BROKEN with its reason; the
 * mark of a link that holds no connection is dropped (nothing to break).
 * Returns 1 when a link was marked (the machine's close may have completed
 * descriptors or marked others: look again). */
/* One link of bfo_link_breaks(_p): 1 when it was marked. */
static inline int bfo_link_break_one(bfo_link_binding *b, bfo_link *l, uint64_t now)
{
    char why[sizeof l->why];
    if (!l->broken)
        return 0;
    memcpy(why, l->why, sizeof why);
    if (!bfo_link_broken(b, l, why, now))
        l->broken = l->malformed = 0; /* no connection to break */
    return 1;
}

static inline int bfo_link_breaks(bfo_link_binding *b, bfo_link *l0, size_t stride, int n, uint64_t now)
{
    int any = 0;
    for (int i = 0; b->nbroken && i < n; i++)
        any |= bfo_link_break_one(b, (bfo_link *)(void *)((char *)l0 + (size_t)i * stride), now);
    if (!any)
        b->nbroken = 0;
    return any;
}

/* bfo_link_breaks over n links named by pointers (a transport that makes
 * its links at first use, TCP: only those made). */
static inline int bfo_link_breaks_p(bfo_link_binding *b, bfo_link *const *ls, int n, uint64_t now)
{
    int any = 0;
    for (int i = 0; b->nbroken && i < n; i++)
        any |= bfo_link_break_one(b, ls[i], now);
    if (!any)
        b->nbroken = 0;
    return any;
}

/* Feeds TIMED_OUT to the link when its deadline passed in a state that
 * waits for one.  Returns 1 when it did. */
static inline int bfo_link_timeout(bfo_link_binding *b, bfo_link *l, uint64_t now)
{
    if (now < l->deadline || !bfo_conn_accepts(l->fsm.cs, BFO_CONN_EV_TIMED_OUT))
        return 0;
    bfo_link_feed(b, l, BFO_CONN_EV_TIMED_OUT, (void *)0, now);
    return 1;
}

/* TIME THE TRANSPORT DID NOT RUN.  A rank whose transport progress is not
 * called for a while (its caller computed, or the process was not
 * scheduled: 128 ranks on 2 cores wait seconds for their turn) read
 * nothing meanwhile: a dial's connection, a reply, a proof or a hello that
 * came then waits unread, and when it runs again every deadline that
 * expired in the gap fired at once, before what waited was read (one
 * epoll_wait returns 64 sockets: the rest were timed out unread, and the
 * peers redialled into the same storm).  That time is no evidence against
 * the peer, as for the engine's failure detector (bfo__detect_on_gap):
 * each progress counts a quarter of the connect timeout of the time since
 * the last one, and the rest of that time, the skip, moves every armed
 * deadline on.  So a deadline with more than a quarter timeout left when
 * the gap began does not fire at the progress after it (what came in the
 * gap is read first), one that had passed before the gap still fires, and
 * a caller that only ever calls rarely (or sleeps in poll: the gap counts
 * the same as in the engine) still sees a dead dial fail, each call a
 * quarter timeout nearer (no hang). */

/* Called first at each transport progress, with its `now`: the skip (the
 * time since the last progress less timeout_ns/4) when that time was
 * longer than timeout_ns/4, else 0; remembers now as the last progress.
 * A transport that reads the clock again inside its progress after
 * sleeping in its own epoll_wait (listening: what came woke it) may set
 * last_now to that reading. */
static inline uint64_t bfo_link_gap(bfo_link_binding *b, uint64_t now)
{
    const uint64_t last = b->last_now, counted = b->timeout_ns / 4;
    if (now > last)
        b->last_now = now;
    if (!last || now <= last || now - last <= counted)
        return 0;
    return now - last - counted;
}

/* Deadline d moved on by skip, never past cap (now + the timeout: no wait
 * longer than one armed now) and never earlier: UINT64_MAX (unarmed) and a
 * deadline beyond cap stay as they are.  One that had passed when the gap
 * began still falls at or before now (d + skip < the gap's start + skip =
 * now - timeout/4), so it fires. */
static inline uint64_t bfo_link_skip_deadline(uint64_t d, uint64_t skip, uint64_t cap)
{
    if (d == UINT64_MAX || d >= cap)
        return d;
    return skip < cap - d ? d + skip : cap;
}

/* Link l's connect deadline moved on by the skip bfo_link_gap returned. */
static inline void bfo_link_skip(const bfo_link_binding *b, bfo_link *l, uint64_t skip, uint64_t now)
{
    if (skip)
        l->deadline = bfo_link_skip_deadline(l->deadline, skip, now + b->timeout_ns);
}

/* Why a connection is closed, or a connect failed, for a transport's log:
 * the reason it was fed with, else one the step tells. */
static inline const char *bfo_link_why(const bfo_step *st, const void *arg)
{
    if (arg && (st->event == BFO_CONN_EV_BROKEN || st->event == BFO_CONN_EV_DIAL_FAILED))
        return (const char *)arg;
    switch (st->event) {
    case BFO_CONN_EV_CONNECT_ASKED: return "the engine reconnects";
    case BFO_CONN_EV_LOWER_HELLO_RCVD:
    case BFO_CONN_EV_HIGHER_HELLO_RCVD:
        return st->from == BFO_CONN_ST_DIALING || st->from == BFO_CONN_ST_HELLO_SENT
                   ? "the peer's dial wins the tie (the lower rank's)"
                   : "replaced by a newer connection";
    case BFO_CONN_EV_TIE_LOST_RCVD: return "the peer dials this side (the lower rank's dial wins the tie)";
    case BFO_CONN_EV_TIMED_OUT:
        return st->from == BFO_CONN_ST_AWAITING_HELLO ? "the peer, which won the tie, did not connect in time"
                                                      : "no connection within the connect timeout";
    case BFO_CONN_EV_DIAL_FAILED: return "the dial failed";
    case BFO_CONN_EV_STALE_HELLO_RCVD: return "a stale hello (an attempt the peer gave up)";
    case BFO_CONN_EV_PROOF_RCVD:
        return st->from == BFO_CONN_ST_UP ? "replaced by a newer connection, proven"
                                          : "the peer's dial, proven, wins (the lower rank's, or the one proven first)";
    case BFO_CONN_EV_PROOF_BAD_RCVD: return "a hello whose dialer did not prove it is the peer";
    case BFO_CONN_EV_REPLY_RCVD:
    case BFO_CONN_EV_PEER_READY:
    case BFO_CONN_EV_DIAL_CONNECTED: return "connected";
    default: return "the connection broke";
    }
}

#ifdef __cplusplus
}
#endif
#endif /* BFO_LINK_H */
