// SPDX-License-Identifier: BSD-3-Clause
/* bfo_group.h - groups of ranks and their fault-tolerant calls: agree,
 * shrink.
 *
 * A group is bfo's communicator: some ranks of one engine's job, in an
 * order every member gives alike, and a context id (ctx) their messages
 * carry.  Over an engine (bfo_engine.h) whose processes may fail
 * (bfo_peer_failed: docs/failure-model.md), a group offers what
 * MPI's fault-tolerance proposal (ULFM) does on a communicator:
 *
 *   bfo_group_agree    a fault-tolerant agreement: every member that
 *                      survives returns the same value (the AND of the
 *                      values proposed) and the same set of failed members.
 *   bfo_group_shrink   once an agreement ended: a new group of the members
 *                      the agreement did not find failed, the same on
 *                      every survivor.
 *   bfo_group_revoke   every member's pending and later operations on the
 *                      group's context end (BFO_ERR_REVOKED: bfo_revoke),
 *                      spread by every member that learns it, so that it
 *                      reaches every survivor even when the revoker dies
 *                      halfway.  Agree and shrink still work on a revoked
 *                      group (they run on its system context).
 *
 * USE (one thread per engine, like the engine):
 *     static bfo_group g;                      // caller memory, ~40 KiB
 *     bfo_group_init(&g, &e, ctx, ranks, n, now);
 *     bfo_group_agree(&g, flag, now);
 *     while (!bfo_group_progress(&g, now))     // after bfo_engine_progress
 *         ...drive the engine...;
 *     int rc = bfo_group_result(&g, &value, failed, BFO_GROUP_MAX, &nfailed);
 *     bfo_group_shrink(&g, &g2, ctx2, now);    // survivors only
 *     bfo_group_revoke(&g, now);               // every member's ops on ctx end
 *
 * The agreement is the agree machine (spec/agree.rl: flooding consensus
 * on the engine's failure detector, the peer machine's FAILED); a member
 * it finds failed that this engine did not know dead yet is declared so
 * (bfo_peer_failed: the survivors' agreement is entitled to); its
 * messages are ordinary engine messages on the group's system context,
 * ctx | BFO_GROUP_SYS_CTX, so a program's own contexts must keep that bit
 * clear.  A group keeps one receive posted per other member on that
 * context while it lives (bfo_group_fini cancels them), and its messages
 * complete through the done queue too when the engine has one
 * (bfo_config.done_queue): a program that pops the queue skips requests
 * it does not own (bfo_group_owns).
 *
 * Compile-time option (define before including; every member's build
 * must agree):
 *   BFO_GROUP_MAX   most members of a group (default 64).
 *
 * No allocation, no I/O, no clock: all memory is the caller's bfo_group,
 * time is the caller's `now`, as for the engine.
 */
#ifndef BFO_GROUP_H
#define BFO_GROUP_H

#include "bfo_engine.h"
#include "bfo_agree.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifndef BFO_GROUP_MAX
#define BFO_GROUP_MAX 64
#endif
#define BFO__GROUP_WORDS ((BFO_GROUP_MAX + 63) / 64)

/* The context bit of a group's own messages (agreement): a program's
 * contexts keep it clear. */
#define BFO_GROUP_SYS_CTX 0x80000000u
/* The tags of the agreement's messages and of the revocation's notices on
 * the system context. */
#define BFO_GROUP_TAG_AGREE 1
#define BFO_GROUP_TAG_REVOKE 2

/* An agreement message: kind, instance, round, value, then the failed
 * members' bits, little-endian. */
#define BFO__AGREE_PROPOSE 1u
#define BFO__AGREE_DECISION 2u
#define BFO__AGREE_MSG (16 + 8 * BFO__GROUP_WORDS)

/* What a member's receive slot holds. */
enum {
    BFO__GR_NONE = 0,   /* nothing posted (this rank; or not yet) */
    BFO__GR_POSTED = 1, /* a receive is posted */
    BFO__GR_HELD = 2,   /* a message came that is not for now (a later round or
                         * agreement): kept, the receive not posted again yet */
    BFO__GR_GONE = 3    /* the receive ended with an error: nothing more comes */
};

typedef struct bfo_group {
    bfo_engine *e;
    uint32_t ctx;             /* the program's context of the group */
    int n, me;                /* members, this rank's index among them */
    int ranks[BFO_GROUP_MAX]; /* the engine rank of each member */

    /* the agreement (spec/agree.rl) */
    bfo_agree_fsm fsm;
    const bfo_tracer *trace;  /* the agree machine's steps, if set */
    uint32_t inst;            /* this agreement's number (1, 2, ...) */
    uint32_t round;           /* its round (1, 2, ...) */
    uint32_t value;           /* the AND of the values known */
    uint64_t failed[BFO__GROUP_WORDS];     /* the failed members known (union) */
    uint64_t heard[BFO__GROUP_WORDS];      /* members whose proposal of this round came */
    uint64_t heard_prev[BFO__GROUP_WORDS]; /* ... of the round before (round 1: all) */
    int result;               /* the last agreement's: BFO_OK, BFO_ERR_*, or BFO_ERR_AGAIN */
    uint32_t out_value;
    uint64_t out_failed[BFO__GROUP_WORDS];
    int revoked;              /* 1: revoked here (by this rank, or a member's notice) */
    int revoke_rc;            /* bfo_revoke's return, for the group's context */
    uint64_t revoke_heard;    /* notices taken from members */
    uint64_t rounds;          /* rounds run, all agreements */
    uint64_t decided_own;     /* agreements this rank decided by its own round */
    uint64_t adopted;         /* ... took from a member's decision */

    /* per member: one receive, a proposal send, a decision send */
    unsigned char rstate[BFO_GROUP_MAX];
    int rstatus[BFO_GROUP_MAX];
    bfo_request rreq[BFO_GROUP_MAX], preq[BFO_GROUP_MAX], dreq[BFO_GROUP_MAX];
    unsigned char pbusy[BFO_GROUP_MAX], dbusy[BFO_GROUP_MAX];
    uint8_t rbuf[BFO_GROUP_MAX][BFO__AGREE_MSG];
    uint8_t pbuf[BFO__AGREE_MSG], dbuf[BFO__AGREE_MSG];
    /* per member: the revocation's notice, received and sent */
    unsigned char xstate[BFO_GROUP_MAX], nbusy[BFO_GROUP_MAX];
    bfo_request xreq[BFO_GROUP_MAX], nreq[BFO_GROUP_MAX];
    uint8_t xbuf[BFO_GROUP_MAX][4], nbuf[4];
} bfo_group;

/* ------------------------------------------------------------------ API */

/* Makes g the group of the n ranks `ranks` (engine ranks, in the order
 * every member gives) with context ctx (bit BFO_GROUP_SYS_CTX clear);
 * this rank must be one of them, once.  Posts a receive per other member.
 * Returns BFO_OK, BFO_ERR_INVALID (n out of 1..BFO_GROUP_MAX, a rank out
 * of range or twice, this rank not in, ctx with the system bit), or the
 * engine's error posting a receive. */
static inline int bfo_group_init(bfo_group *g, bfo_engine *e, uint32_t ctx, const int *ranks,
                                 int n, uint64_t now);

/* Cancels the group's receives; the group's requests must not be reused
 * before they completed (bfo_group_progress until bfo_group_idle). */
static inline void bfo_group_fini(bfo_group *g, uint64_t now);

/* Starts an agreement on value (the result is the AND of the values of the
 * members whose proposals were taken).  Returns BFO_OK, or
 * BFO_ERR_INVALID when one is running or the group's last one aborted (the
 * process must end: see BFO_ERR_PEER_UNREACHABLE below). */
static inline int bfo_group_agree(bfo_group *g, uint32_t value, uint64_t now);

/* Drives the group: takes what came, feeds the agree machine, posts what it
 * says.  Call it after the engine's progress.  Returns 1 when no agreement
 * is running (the last one's result is ready), 0 while one runs. */
static inline int bfo_group_progress(bfo_group *g, uint64_t now);

/* The last agreement's result: BFO_ERR_AGAIN while it runs; BFO_OK with
 * *value and the failed members' engine ranks (at most max of them in
 * failed, their count in *nfailed); BFO_ERR_PEER_UNREACHABLE when a member
 * that no rail reaches was never reported dead (a partition, or this rank
 * was fenced: no safe result, and the process must end so that its
 * launcher reports it); BFO_ERR_PROC_FAILED when the agreement found this
 * rank itself failed (it must end).  value, failed, nfailed may be NULL. */
static inline int bfo_group_result(const bfo_group *g, uint32_t *value, int *failed, int max,
                                   int *nfailed);

/* Once an agreement ended BFO_OK: makes ng the group of g's members that
 * it did not find failed, in g's order, with context ctx (the same on
 * every survivor: the program chooses it, e.g. from g's).  Returns as
 * bfo_group_init, and BFO_ERR_INVALID when the last agreement did not end
 * BFO_OK. */
static inline int bfo_group_shrink(const bfo_group *g, bfo_group *ng, uint32_t ctx, uint64_t now);

/* Revokes the group: bfo_revoke on its context here, and a notice to every
 * member alive, who does the same and passes it on (once).  Returns BFO_OK
 * (also when it was revoked already), or bfo_revoke's error (the notices
 * go all the same). */
static inline int bfo_group_revoke(bfo_group *g, uint64_t now);

/* 1 when the group is revoked here (by this rank or by a member's notice;
 * bfo_group_progress takes the notices). */
static inline int bfo_group_revoked(const bfo_group *g);

/* 1 when r is one of g's own requests (for a program popping the done
 * queue). */
static inline int bfo_group_owns(const bfo_group *g, const bfo_request *r);

/* 1 when none of g's sends is in flight (after bfo_group_fini: and no
 * receive): its memory may go. */
static inline int bfo_group_idle(const bfo_group *g);

/* ------------------------------------------------------- implementation */

static inline int bfo__gbit(const uint64_t *s, int i) { return (int)((s[i >> 6] >> (i & 63)) & 1u); }
static inline void bfo__gset(uint64_t *s, int i) { s[i >> 6] |= (uint64_t)1 << (i & 63); }
static inline int bfo__gsame(const uint64_t *a, const uint64_t *b)
{
    for (int w = 0; w < BFO__GROUP_WORDS; w++)
        if (a[w] != b[w])
            return 0;
    return 1;
}

/* A member's process is dead (the engine's peer machine: FAILED). */
static inline int bfo__gdead(const bfo_group *g, int m)
{
    return bfo_peer_state(g->e, g->ranks[m]) == BFO_PEER_ST_FAILED;
}

static inline int bfo__grecv(bfo_group *g, int m, uint64_t now)
{
    int rc = bfo_irecv(g->e, &g->rreq[m], g->rbuf[m], BFO__AGREE_MSG, g->ranks[m],
                       g->ctx | BFO_GROUP_SYS_CTX, BFO_GROUP_TAG_AGREE, now);
    g->rstate[m] = BFO__GR_POSTED;
    if (rc != BFO_OK && !bfo_test(&g->rreq[m])) { /* not posted at all */
        g->rstate[m] = BFO__GR_GONE;
        g->rstatus[m] = rc;
    }
    return rc;
}

static inline void bfo__gnotice_recv(bfo_group *g, int m, uint64_t now)
{
    int rc = bfo_irecv(g->e, &g->xreq[m], g->xbuf[m], sizeof g->xbuf[m], g->ranks[m],
                       g->ctx | BFO_GROUP_SYS_CTX, BFO_GROUP_TAG_REVOKE, now);
    g->xstate[m] = rc == BFO_OK || bfo_test(&g->xreq[m]) ? BFO__GR_POSTED : BFO__GR_GONE;
}

static inline void bfo__gencode(const bfo_group *g, uint8_t *b, uint32_t kind)
{
    bfo_put32(b, kind);
    bfo_put32(b + 4, g->inst);
    bfo_put32(b + 8, g->round);
    bfo_put32(b + 12, g->value);
    for (int w = 0; w < BFO__GROUP_WORDS; w++)
        bfo_put64(b + 16 + 8 * w, g->failed[w]);
}

/* Sends len bytes of buf with tag to every member alive but this rank, on
 * the system context, on the slots reqs. */
static inline void bfo__gsend_all(bfo_group *g, bfo_request *reqs, unsigned char *busy,
                                  const uint8_t *buf, size_t len, int tag, uint64_t now)
{
    for (int m = 0; m < g->n; m++) {
        if (m == g->me || bfo__gdead(g, m))
            continue;
        if (busy[m] && !bfo_test(&reqs[m]))
            continue; /* cannot happen: the machine waits for SENDS_DONE (a request in
                       * flight is never posted again) */
        busy[m] = 1;
        if (bfo_isend(g->e, &reqs[m], buf, len, g->ranks[m], g->ctx | BFO_GROUP_SYS_CTX, tag, now) !=
                BFO_OK &&
            !bfo_test(&reqs[m]))
            busy[m] = 0; /* refused at once: nothing in flight */
    }
}

/* The failed members this rank sees now, into what it knows. */
static inline void bfo__gnote_dead(bfo_group *g)
{
    for (int m = 0; m < g->n; m++)
        if (m != g->me && bfo__gdead(g, m))
            bfo__gset(g->failed, m);
}

static inline void bfo__agree_act(bfo_group *g, int act, const uint8_t *msg, uint64_t now)
{
    switch (act) {
    case BFO_AGREE_ACT_SEND_ROUND:
        memset(g->heard, 0, sizeof g->heard);
        bfo__gset(g->heard, g->me);
        bfo__gnote_dead(g);
        g->rounds++;
        bfo__gencode(g, g->pbuf, BFO__AGREE_PROPOSE);
        bfo__gsend_all(g, g->preq, g->pbusy, g->pbuf, BFO__AGREE_MSG, BFO_GROUP_TAG_AGREE, now);
        return;
    case BFO_AGREE_ACT_NEXT_ROUND:
        memcpy(g->heard_prev, g->heard, sizeof g->heard);
        g->round++;
        return;
    case BFO_AGREE_ACT_DECIDE:
        g->decided_own++;
        return;
    case BFO_AGREE_ACT_ADOPT: /* the decision's value and failed set are ours */
        g->adopted++;
        g->value = bfo_get32(msg + 12);
        for (int w = 0; w < BFO__GROUP_WORDS; w++)
            g->failed[w] = bfo_get64(msg + 16 + 8 * w);
        return;
    case BFO_AGREE_ACT_SEND_DECISION:
        g->out_value = g->value;
        memcpy(g->out_failed, g->failed, sizeof g->failed);
        bfo__gencode(g, g->dbuf, BFO__AGREE_DECISION);
        bfo__gsend_all(g, g->dreq, g->dbusy, g->dbuf, BFO__AGREE_MSG, BFO_GROUP_TAG_AGREE, now);
        return;
    case BFO_AGREE_ACT_FINISH:
        g->result = bfo__gbit(g->out_failed, g->me) ? BFO_ERR_PROC_FAILED : BFO_OK;
        for (int m = 0; m < g->n && g->result == BFO_OK; m++) /* the survivors' word: dead */
            if (m != g->me && bfo__gbit(g->out_failed, m) && !bfo__gdead(g, m))
                bfo_peer_failed(g->e, g->ranks[m], now);
        return;
    case BFO_AGREE_ACT_ABORT:
        g->result = BFO_ERR_PEER_UNREACHABLE;
        return;
    }
}

/* Every change of the agreement passes here (traced when g->trace is
 * set). */
static inline void bfo__agree_step(bfo_group *g, int ev, const uint8_t *msg, uint64_t now)
{
    bfo_step st;
    memset(&st, 0, sizeof st);
    st.trace = g->trace;
    st.obj = g;
    if (bfo_agree_step(&g->fsm, ev, &st) != BFO_OK)
        return; /* C feeds only what the state takes */
    for (unsigned i = 0; i < st.n_actions; i++)
        bfo__agree_act(g, st.actions[i], msg, now);
}

static inline int bfo_group_init(bfo_group *g, bfo_engine *e, uint32_t ctx, const int *ranks,
                                 int n, uint64_t now)
{
    if (!g || !e || !ranks || n < 1 || n > BFO_GROUP_MAX || (ctx & BFO_GROUP_SYS_CTX))
        return BFO_ERR_INVALID;
    memset(g, 0, sizeof *g);
    g->e = e;
    g->ctx = ctx;
    g->n = n;
    g->me = -1;
    for (int m = 0; m < n; m++) {
        if (ranks[m] < 0 || ranks[m] >= e->cfg.nranks)
            return BFO_ERR_INVALID;
        for (int k = 0; k < m; k++)
            if (ranks[k] == ranks[m])
                return BFO_ERR_INVALID;
        g->ranks[m] = ranks[m];
        if (ranks[m] == e->cfg.rank)
            g->me = m;
    }
    if (g->me < 0)
        return BFO_ERR_INVALID;
    bfo_agree_init(&g->fsm);
    g->result = BFO_ERR_INVALID; /* no agreement yet */
    for (int m = 0; m < n; m++)
        if (m != g->me) {
            bfo__grecv(g, m, now);
            bfo__gnotice_recv(g, m, now);
        }
    return BFO_OK;
}

static inline int bfo_group_revoke(bfo_group *g, uint64_t now)
{
    if (!g)
        return BFO_ERR_INVALID;
    if (g->revoked)
        return g->revoke_rc;
    g->revoked = 1;
    g->revoke_rc = bfo_revoke(g->e, g->ctx, now);
    bfo_put32(g->nbuf, g->ctx);
    bfo__gsend_all(g, g->nreq, g->nbusy, g->nbuf, sizeof g->nbuf, BFO_GROUP_TAG_REVOKE, now);
    return g->revoke_rc;
}

static inline int bfo_group_revoked(const bfo_group *g) { return g && g->revoked; }

static inline void bfo_group_fini(bfo_group *g, uint64_t now)
{
    for (int m = 0; m < g->n; m++) {
        if (g->rstate[m] == BFO__GR_POSTED && bfo_cancel(g->e, &g->rreq[m], now) == BFO_OK)
            g->rstate[m] = BFO__GR_NONE;
        if (g->xstate[m] == BFO__GR_POSTED && bfo_cancel(g->e, &g->xreq[m], now) == BFO_OK)
            g->xstate[m] = BFO__GR_NONE;
    }
}

static inline int bfo_group_agree(bfo_group *g, uint32_t value, uint64_t now)
{
    if (!g || !bfo_agree_accepts(g->fsm.cs, BFO_AGREE_EV_AGREE_CALLED))
        return BFO_ERR_INVALID;
    g->inst++;
    g->round = 1;
    g->value = value;
    memset(g->failed, 0, sizeof g->failed);
    memset(g->heard_prev, 0, sizeof g->heard_prev); /* round 0: every member */
    for (int m = 0; m < g->n; m++)
        bfo__gset(g->heard_prev, m);
    g->result = BFO_ERR_AGAIN;
    bfo__agree_step(g, BFO_AGREE_EV_AGREE_CALLED, NULL, now);
    bfo_group_progress(g, now);
    return BFO_OK;
}

/* A message held or just come from member m: taken (1), or kept for a later
 * round or agreement (0). */
static inline int bfo__gtake(bfo_group *g, int m, uint64_t now)
{
    const uint8_t *b = g->rbuf[m];
    const uint32_t kind = bfo_get32(b), inst = bfo_get32(b + 4), round = bfo_get32(b + 8);
    const int cs = g->fsm.cs;
    if (g->rreq[m].length != BFO__AGREE_MSG || (kind != BFO__AGREE_PROPOSE && kind != BFO__AGREE_DECISION))
        return 1; /* not ours (a build with another BFO_GROUP_MAX): dropped */
    if (inst > g->inst)
        return 0; /* the next agreement's: it waits */
    if (inst < g->inst || cs != BFO_AGREE_ST_ROUND) {
        if (inst == g->inst && kind == BFO__AGREE_DECISION && bfo_agree_accepts(cs, BFO_AGREE_EV_DECISION_RCVD))
            bfo__agree_step(g, BFO_AGREE_EV_DECISION_RCVD, b, now);
        return 1; /* late: this agreement decided, or an earlier one's */
    }
    if (kind == BFO__AGREE_DECISION) {
        bfo__agree_step(g, BFO_AGREE_EV_DECISION_RCVD, b, now);
        return 1;
    }
    if (round > g->round)
        return 0; /* a round ahead: it waits for this rank to get there */
    if (round == g->round) {
        g->value &= bfo_get32(b + 12);
        for (int w = 0; w < BFO__GROUP_WORDS; w++)
            g->failed[w] |= bfo_get64(b + 16 + 8 * w);
        bfo__gset(g->heard, m);
    }
    return 1;
}

/* The fact a running agreement waits for, from the members' states: 0
 * while some member is still to be heard in this round. */
static inline int bfo__gfact(bfo_group *g)
{
    int sends = 1, lost = 0, all = 1;
    for (int m = 0; m < g->n; m++) {
        if (m == g->me)
            continue;
        if (g->pbusy[m] || g->dbusy[m]) /* a proposal may still be out after a decision */
            sends = 0;
        if (bfo__gbit(g->heard, m) || bfo__gdead(g, m))
            continue;
        all = 0;
        if (g->rstate[m] == BFO__GR_GONE)
            lost = 1;
    }
    switch (g->fsm.cs) {
    case BFO_AGREE_ST_ROUND:
        if (lost)
            return BFO_AGREE_EV_MEMBER_LOST;
        if (all && sends)
            return bfo__gsame(g->heard, g->heard_prev) ? BFO_AGREE_EV_ROUND_SAME
                                                       : BFO_AGREE_EV_ROUND_CHANGED;
        return 0;
    case BFO_AGREE_ST_DECIDING:
    case BFO_AGREE_ST_ABORTING:
        return sends ? BFO_AGREE_EV_SENDS_DONE : 0;
    }
    return 0;
}

static inline int bfo_group_progress(bfo_group *g, uint64_t now)
{
    for (int again = 1; again;) {
        again = 0;
        for (int m = 0; m < g->n; m++) { /* sends back */
            if (g->pbusy[m] && bfo_test(&g->preq[m]))
                g->pbusy[m] = 0;
            if (g->dbusy[m] && bfo_test(&g->dreq[m]))
                g->dbusy[m] = 0;
            if (g->nbusy[m] && bfo_test(&g->nreq[m]))
                g->nbusy[m] = 0;
        }
        for (int m = 0; m < g->n; m++) { /* a revocation's notice: revoked here, passed on */
            if (g->xstate[m] != BFO__GR_POSTED || !bfo_test(&g->xreq[m]))
                continue;
            g->xstate[m] = BFO__GR_GONE; /* one is enough: no more is posted */
            if (g->xreq[m].status == BFO_OK) {
                g->revoke_heard++;
                bfo_group_revoke(g, now);
                again = 1;
            }
        }
        for (int m = 0; m < g->n; m++) { /* what came */
            if (g->rstate[m] == BFO__GR_POSTED && bfo_test(&g->rreq[m])) {
                if (g->rreq[m].status == BFO_OK || g->rreq[m].status == BFO_ERR_TRUNCATE) {
                    g->rstate[m] = BFO__GR_HELD;
                } else {
                    g->rstate[m] = BFO__GR_GONE;
                    g->rstatus[m] = g->rreq[m].status;
                }
            }
            if (g->rstate[m] == BFO__GR_HELD && bfo__gtake(g, m, now)) {
                bfo__grecv(g, m, now);
                again = 1;
            }
        }
        for (int ev; (ev = bfo__gfact(g)) != 0;) {
            bfo__agree_step(g, ev, NULL, now);
            again = 1;
        }
    }
    return g->fsm.cs == BFO_AGREE_ST_IDLE || g->fsm.cs == BFO_AGREE_ST_ABORTED;
}

static inline int bfo_group_result(const bfo_group *g, uint32_t *value, int *failed, int max,
                                   int *nfailed)
{
    int k = 0;
    if (g->result != BFO_OK)
        return g->result;
    if (value)
        *value = g->out_value;
    for (int m = 0; m < g->n; m++)
        if (bfo__gbit(g->out_failed, m)) {
            if (failed && k < max)
                failed[k] = g->ranks[m];
            k++;
        }
    if (nfailed)
        *nfailed = k;
    return BFO_OK;
}

static inline int bfo_group_shrink(const bfo_group *g, bfo_group *ng, uint32_t ctx, uint64_t now)
{
    int ranks[BFO_GROUP_MAX], n = 0;
    if (!g || !ng || g == ng || g->result != BFO_OK)
        return BFO_ERR_INVALID;
    for (int m = 0; m < g->n; m++)
        if (!bfo__gbit(g->out_failed, m))
            ranks[n++] = g->ranks[m];
    return bfo_group_init(ng, g->e, ctx, ranks, n, now);
}

static inline int bfo_group_owns(const bfo_group *g, const bfo_request *r)
{
    const char *p = (const char *)r;
    return (p >= (const char *)g->rreq && p < (const char *)(g->rreq + BFO_GROUP_MAX)) ||
           (p >= (const char *)g->preq && p < (const char *)(g->preq + BFO_GROUP_MAX)) ||
           (p >= (const char *)g->dreq && p < (const char *)(g->dreq + BFO_GROUP_MAX)) ||
           (p >= (const char *)g->xreq && p < (const char *)(g->xreq + BFO_GROUP_MAX)) ||
           (p >= (const char *)g->nreq && p < (const char *)(g->nreq + BFO_GROUP_MAX));
}

static inline int bfo_group_idle(const bfo_group *g)
{
    for (int m = 0; m < g->n; m++)
        if ((g->pbusy[m] && !bfo_test(&g->preq[m])) || (g->dbusy[m] && !bfo_test(&g->dreq[m])) ||
            (g->nbusy[m] && !bfo_test(&g->nreq[m])) ||
            (g->rstate[m] == BFO__GR_POSTED && !bfo_test(&g->rreq[m])) ||
            (g->xstate[m] == BFO__GR_POSTED && !bfo_test(&g->xreq[m])))
            return 0;
    return 1;
}

#ifdef __cplusplus
}
#endif

#endif /* BFO_GROUP_H */
