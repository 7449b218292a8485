// SPDX-License-Identifier: BSD-3-Clause
/* bfo_simgroup.h - groups' agreements under process deaths, in the
 * simulator (bfo agree-sim, tests).
 *
 * N ranks on a simnet (bfo_simnet.h), each with an engine and the group of
 * all of them (bfo_group.h), run `agrees` agreements in a row; with
 * `shrink`, the first is followed by bfo_group_shrink and the others run on
 * the new group.  Rank r proposes ~(1 << r) (low byte), so the value
 * decided tells whose proposals it holds.  Faults, by the network's
 * operation count (every step of an agreement can be chosen):
 *   kill     a rank's process killed (sn_rank_killed: no BYE, its engine
 *            hears nothing more); the launcher reports it dead to every
 *            live rank report_ns later (bfo_peer_failed);
 *   suspect  a live rank reported dead to every other rank (a false
 *            suspicion): they fence it; it must find out and end itself;
 *   cut      every rail between two ranks silent, both ways (a partial
 *            partition: a third rank still reaches both);
 *   faults   the network's own (sn_fault: a rail down and up, a fragment
 *            lost or failed): rails fail over, no process dies.
 * Revoke mode (sg_scenario.revoke): before the agreements, every rank
 * leaves a broken pattern pending on the group's context: a receive from
 * the next rank and two sends to it (64 bytes, eager; 20 KB, rendezvous)
 * that nobody matches.  One rank revokes the group at a chosen step, and,
 * as ULFM programs do, a rank that learns of a process failure revokes it
 * too.  Each rank waits until its pattern's requests complete, checks that
 * a send on the revoked context fails at once, then runs the agreements
 * on the revoked group.  The judge adds: every survivor's receive ended
 * BFO_ERR_REVOKED (or BFO_ERR_PROC_FAILED, its peer dead), every send
 * ended BFO_OK (discarded by a revoked receiver), BFO_ERR_REVOKED or
 * BFO_ERR_PROC_FAILED, and none hung.
 * A rank whose agreement ends with an error (it cannot agree: a member
 * unreachable and not reported dead, or itself found failed) ends itself
 * as the failure model says, and its launcher reports it.
 * The judge: every rank alive at the end finished every agreement (none
 * hangs); survivors are the ranks neither dead nor suspected (a suspected
 * rank is dead to the others, whatever it returns: it learns so when its
 * operations toward them fail); for each agreement, every survivor returned the same value and
 * failed set (0 disagreements); the value holds every survivor's proposal
 * and only members' ones; the failed set holds no survivor and only ranks
 * that were killed, suspected or ended; after a shrink, every survivor's
 * new group is the same.  This is a test tool: it allocates.
 * Debugging: sg_scenario.trace (bfo agree-sim --trace) prints the agree
 * machines' steps and the wire; with SG_ENGINE_TRACE set in the
 * environment, the engines' machines too; with SG_DEBUG, the scenario's
 * faults, and a rank that hung says where each member's requests are.
 */
#ifndef BFO_SIMGROUP_H
#define BFO_SIMGROUP_H

#define SG_MAX_RANKS 8
#ifndef BFO_GROUP_MAX
#define BFO_GROUP_MAX SG_MAX_RANKS /* groups as large as the simulator's: less to clear */
#endif

#include "bfo_simnet.h"
#include "bfo_group.h"

#define SG_MAX_AGREES 4
#define SG_RNDV_BYTES 20000 /* the pattern's rendezvous send (eager_limit: 4 KiB) */

typedef struct sg_scenario {
    int ranks, rails;
    uint64_t seed;
    int agrees;              /* agreements in a row (1..SG_MAX_AGREES; 0: 2) */
    int shrink;              /* shrink after the first, the rest on the new group */
    int kill[2];             /* ranks killed: rank + 1 (0: none) */
    uint64_t kill_op[2];     /* ... once the network carried this many operations */
    int suspect;             /* a live rank reported dead: rank + 1 */
    uint64_t suspect_op;
    int cut_a, cut_b;        /* every rail between these silent: rank + 1 each */
    uint64_t cut_op;
    int revoke;              /* revoke mode (below): this rank revokes, rank + 1; -1: none
                              * but ranks still revoke on failure */
    uint64_t revoke_op;      /* ... once the network carried this many operations */
    int revoke_alone;        /* no rank revokes on a failure: only the revoker, and the
                              * notices (the revocation must spread by them alone) */
    uint64_t report_ns;      /* the launcher's delay (0: 1 ms) */
    sn_fault faults[SN_MAX_FAULTS]; /* the network's own faults (bfo_simnet.h): rails down
                              * and up, fragments lost or failed; no process dies of them */
    int nfaults;
    uint64_t limit_ns;       /* 0: 60 s */
    FILE *trace;             /* the agree machines' steps, if set */
} sg_scenario;

typedef struct sg_result {
    int pass;
    uint64_t results;        /* agreements returned BFO_OK, every rank's */
    uint64_t disagreements, hangs, invalid, shrink_mismatch;
    uint64_t ended;          /* ranks that ended themselves (an agreement's error) */
    uint64_t revoked_ops;    /* pattern requests that ended BFO_ERR_REVOKED */
    uint64_t discarded;      /* pattern sends a revoked receiver discarded (BFO_OK) */
    uint64_t notices;        /* revocations learnt from a member's notice */
    uint64_t bad_status;     /* pattern requests that ended otherwise */
    uint64_t revoke_lost;    /* revoke_alone: the revoker died before any notice left, and no
                              * survivor learnt it (their pattern waits: not the revocation's
                              * fault) */
    uint64_t kills, suspects, cuts;
    uint64_t rounds, decided_own, adopted;
    uint64_t ops;            /* network operations until every rank was done */
    /* each rank's: */
    int alive[SG_MAX_RANKS];                 /* neither killed nor ended */
    int done[SG_MAX_RANKS];                  /* agreements it finished (rc below) */
    int rc[SG_MAX_RANKS][SG_MAX_AGREES];     /* bfo_group_result */
    uint32_t value[SG_MAX_RANKS][SG_MAX_AGREES];
    uint64_t failed[SG_MAX_RANKS][SG_MAX_AGREES]; /* engine ranks' bits */
    int shrunk_n[SG_MAX_RANKS];              /* its shrunk group's size (0: none) */
    char why[240];
} sg_result;

typedef struct sg_rank {
    bfo_engine e;
    void *mem;
    bfo_group g[2];          /* the group of all; the shrunk one */
    int cur;                 /* which g runs now */
    int k;                   /* the agreement it is at */
    int started, finished, ended;
    int rc[SG_MAX_AGREES];
    uint32_t value[SG_MAX_AGREES];
    uint64_t failed[SG_MAX_AGREES]; /* engine ranks' bits */
    int shrunk_n, shrunk[SG_MAX_RANKS];
    /* revoke mode: the broken pattern */
    int pattern_done;
    bfo_request prq, pse, psr, late;
    uint8_t prbuf[64], psebuf[64], *psrbuf;
    int late_rc;             /* a send on the revoked context, after */
} sg_rank;

typedef struct sg_world {
    const sg_scenario *sc;
    simnet sn;
    sg_rank r[SG_MAX_RANKS];
    uint64_t dead_at[SG_MAX_RANKS];   /* killed or ended (0: alive) */
    uint64_t report_at[SG_MAX_RANKS]; /* when the launcher reports it (0: not to do) */
    int killed_done[2], suspect_done, cut_done;
    uint64_t suspected;               /* ranks' bits: reported dead while alive */
    bfo_tracer tracer;
} sg_world;

static inline void sg_trace(void *user, const bfo_machine *m, const bfo_step *st)
{
    const sg_world *w = (const sg_world *)user;
    const bfo_group *g = (const bfo_group *)st->obj;
    if (m != &bfo_agree_machine) { /* the engines' machines: getenv("SG_ENGINE_TRACE") */
        fprintf(w->sc->trace, "%10.3f ms engine %s %p: %s --%s--> %s%s\n", (double)w->sn.now / 1e6,
                m->name, st->obj, bfo_fsm_state_name(m, st->from),
                m->id == BFO_MACHINE_PEER ? bfo_peer_event_name(st->event) : bfo_event_name(st->event),
                bfo_fsm_state_name(m, st->to), st->result == BFO_OK ? "" : " (refused)");
        return;
    }
    fprintf(w->sc->trace, "%10.3f ms rank %d agree %u round %u: %s --%s--> %s%s\n",
            (double)w->sn.now / 1e6, g->e->cfg.rank, g->inst, g->round,
            bfo_agree_state_name(st->from), bfo_agree_event_name(st->event),
            bfo_agree_state_name(st->to), st->result == BFO_OK ? "" : " (refused)");
}

/* The rank's process ends: killed, or ending itself; reported later. */
static inline void sg_end(sg_world *w, int r)
{
    if (w->dead_at[r])
        return;
    sn_rank_killed(&w->sn, r);
    w->dead_at[r] = w->sn.now ? w->sn.now : 1;
    w->report_at[r] = w->sn.now + (w->sc->report_ns ? w->sc->report_ns : 1000000);
}

static inline void sg_faults(sg_world *w)
{
    const sg_scenario *sc = w->sc;
    for (int i = 0; i < 2; i++)
        if (sc->kill[i] && !w->killed_done[i] && w->sn.ops >= sc->kill_op[i]) {
            w->killed_done[i] = 1;
            sg_end(w, sc->kill[i] - 1);
        }
    if (sc->suspect && !w->suspect_done && w->sn.ops >= sc->suspect_op) {
        const int v = sc->suspect - 1;
        w->suspect_done = 1;
        if (!w->dead_at[v]) {
            w->suspected |= 1u << v;
            for (int r = 0; r < sc->ranks; r++)
                if (r != v && !w->dead_at[r])
                    bfo_peer_failed(&w->r[r].e, v, w->sn.now);
        }
    }
    if (sc->cut_a && !w->cut_done && w->sn.ops >= sc->cut_op) {
        w->cut_done = 1;
        for (int k = 0; k < sc->rails; k++) {
            sn_set_path(&w->sn, sc->cut_a - 1, sc->cut_b - 1, k, SN_PATH_SILENT);
            sn_set_path(&w->sn, sc->cut_b - 1, sc->cut_a - 1, k, SN_PATH_SILENT);
        }
    }
    for (int v = 0; v < sc->ranks; v++)
        if (w->report_at[v] && w->sn.now >= w->report_at[v]) {
            w->report_at[v] = 0;
            for (int r = 0; r < sc->ranks; r++)
                if (r != v && !w->dead_at[r])
                    bfo_peer_failed(&w->r[r].e, v, w->sn.now);
        }
}

static inline uint32_t sg_value(int rank) { return ~(1u << rank) & 0xffu; }

/* One rank's program: agreements in a row, a shrink after the first. */
static inline int sg_drive(sg_world *w, int r)
{
    sg_rank *x = &w->r[r];
    const sg_scenario *sc = w->sc;
    const int agrees = sc->agrees ? sc->agrees : 2;
    if (sc->revoke && !x->pattern_done && !w->dead_at[r]) {
        bfo_group *g0 = &x->g[0];
        int failure = 0;
        for (int p = 0; p < sc->ranks; p++)
            failure |= bfo_peer_state(&x->e, p) == BFO_PEER_ST_FAILED;
        if ((sc->revoke == r + 1 && w->sn.ops >= sc->revoke_op) || (failure && !sc->revoke_alone))
            bfo_group_revoke(g0, w->sn.now);
        bfo_group_progress(g0, w->sn.now);
        if (!bfo_test(&x->prq) || !bfo_test(&x->pse) || !bfo_test(&x->psr))
            return 0;
        x->late_rc = bfo_isend(&x->e, &x->late, x->psebuf, 8, (r + 1) % sc->ranks, 10, 9, w->sn.now);
        if (!bfo_test(&x->late))
            abort(); /* a send on a revoked context must complete at once */
        x->pattern_done = 1;
    }
    for (;;) {
        bfo_group *g = &x->g[x->cur];
        if (x->finished || w->dead_at[r])
            return 1;
        if (!x->started) {
            x->started = 1;
            if (bfo_group_agree(g, sg_value(r), w->sn.now) != BFO_OK)
                abort();
        }
        if (!bfo_group_progress(g, w->sn.now))
            return 0;
        {
            int failed[SG_MAX_RANKS], nf = 0;
            const int rc = bfo_group_result(g, &x->value[x->k], failed, SG_MAX_RANKS, &nf);
            x->rc[x->k] = rc;
            x->failed[x->k] = 0;
            for (int i = 0; i < nf; i++)
                x->failed[x->k] |= 1u << failed[i];
            if (rc != BFO_OK) { /* it cannot agree: it ends itself */
                x->ended = 1;
                sg_end(w, r);
                return 1;
            }
        }
        if (sc->shrink && x->k == 0) {
            if (bfo_group_shrink(g, &x->g[1], g->ctx + 1, w->sn.now) != BFO_OK)
                abort();
            x->g[1].trace = g->trace;
            x->cur = 1;
            x->shrunk_n = x->g[1].n;
            memcpy(x->shrunk, x->g[1].ranks, sizeof(int) * (size_t)x->g[1].n);
        }
        x->k++;
        x->started = 0;
        if (x->k >= agrees)
            x->finished = 1;
    }
}

static inline int sg_all_done(void *arg)
{
    sg_world *w = (sg_world *)arg;
    int done = 1;
    sg_faults(w);
    for (int r = 0; r < w->sc->ranks; r++)
        if (!sg_drive(w, r))
            done = 0;
    for (int v = 0; v < w->sc->ranks; v++)
        if (w->report_at[v])
            done = 0; /* the launcher's word is still to come */
    return done;
}

static inline void sg_note(sg_result *res, const char *fmt, int a, int b, int c)
{
    if (!res->why[0])
        snprintf(res->why, sizeof res->why, fmt, a, b, c);
}

/* Runs one scenario; fills res.  Returns 1 when it passes. */
static inline int sg_run(const sg_scenario *sc, sg_result *res)
{
    sg_world *w = (sg_world *)calloc(1, sizeof *w);
    const int agrees = sc->agrees ? sc->agrees : 2;
    int done;
    memset(res, 0, sizeof *res);
    if (!w || sc->ranks < 2 || sc->ranks > SG_MAX_RANKS || agrees > SG_MAX_AGREES)
        abort();
    w->sc = sc;
    sn_init(&w->sn, sc->ranks, sc->rails, sc->seed);
    for (int i = 0; i < sc->nfaults; i++)
        sn_add_fault(&w->sn, &sc->faults[i]);
    w->sn.trace = sc->trace; /* the wire too */
    w->tracer.fn = sg_trace;
    w->tracer.user = w;
    for (int i = 0; i < sc->ranks; i++) {
        bfo_config c;
        size_t need;
        memset(&c, 0, sizeof c);
        c.rank = i;
        c.nranks = sc->ranks;
        c.nrails = sc->rails;
        c.max_requests = 5 * 2 * sc->ranks + 8; /* two groups of 5 per member, the pattern */
        c.max_unexpected = 8 * SG_MAX_RANKS;
        need = bfo_engine_mem_size(&c);
        w->sn.be[i].disconnect = sn_disconnect; /* a fenced peer's frames in flight fail */
        w->r[i].mem = malloc(need);
        w->sn.eng[i] = &w->r[i].e;
        if (!w->r[i].mem || bfo_engine_init(&w->r[i].e, &c, &w->sn.be[i], w->r[i].mem, need, w->sn.now))
            abort();
    }
    {
        int all[SG_MAX_RANKS];
        for (int i = 0; i < sc->ranks; i++)
            all[i] = i;
        for (int i = 0; i < sc->ranks; i++) {
            if (bfo_group_init(&w->r[i].g[0], &w->r[i].e, 10, all, sc->ranks, w->sn.now) != BFO_OK)
                abort();
            if (sc->trace)
                w->r[i].g[0].trace = &w->tracer;
            if (sc->trace && getenv("SG_ENGINE_TRACE"))
                w->r[i].e.trace = &w->tracer;
        }
        for (int i = 0; i < sc->ranks && sc->revoke; i++) { /* the broken pattern */
            sg_rank *x = &w->r[i];
            const int next = (i + 1) % sc->ranks;
            x->psrbuf = (uint8_t *)calloc(1, SG_RNDV_BYTES);
            if (!x->psrbuf)
                abort();
            bfo_irecv(&x->e, &x->prq, x->prbuf, sizeof x->prbuf, next, 10, 5, w->sn.now);
            bfo_isend(&x->e, &x->pse, x->psebuf, sizeof x->psebuf, next, 10, 7, w->sn.now);
            bfo_isend(&x->e, &x->psr, x->psrbuf, SG_RNDV_BYTES, next, 10, 6, w->sn.now);
        }
    }
    if (getenv("SG_DEBUG"))
        for (int i = 0; i < sc->nfaults; i++)
            fprintf(stderr, "fault %d: what %d type %d rail %d n %llu kind %d; revoke %d@%llu report %llu\n", i, sc->faults[i].what,
                    sc->faults[i].type, sc->faults[i].rail, (unsigned long long)sc->faults[i].n, sc->faults[i].kind,
                    sc->revoke, (unsigned long long)sc->revoke_op, (unsigned long long)sc->report_ns);
    done = sn_run(&w->sn, sg_all_done, w, sc->limit_ns ? sc->limit_ns : 60000000000ull);
    res->ops = w->sn.ops;
    res->kills = (uint64_t)(w->killed_done[0] + w->killed_done[1]);
    res->suspects = w->suspected != 0;
    res->cuts = (uint64_t)w->cut_done;
    int learnt = 0, stuck = 0, lost;
    for (int r = 0; r < sc->ranks; r++) {
        const int survivor = !w->dead_at[r] && !(w->suspected >> r & 1u);
        learnt |= survivor && w->r[r].g[0].revoked;
        stuck |= survivor && sc->revoke && !w->r[r].pattern_done;
    }
    /* revoke_alone: the revoker died before any notice left, nobody learnt
     * it, and the pattern waits as written: not the revocation's fault */
    lost = sc->revoke_alone && !learnt && stuck;
    res->revoke_lost = (uint64_t)lost;
    for (int r = 0; r < sc->ranks; r++) {
        sg_rank *x = &w->r[r];
        res->ended += (uint64_t)x->ended;
        res->alive[r] = !w->dead_at[r];
        res->done[r] = x->k + (x->ended ? 1 : 0);
        memcpy(res->rc[r], x->rc, sizeof x->rc);
        memcpy(res->value[r], x->value, sizeof x->value);
        memcpy(res->failed[r], x->failed, sizeof x->failed);
        res->shrunk_n[r] = x->shrunk_n;
        res->notices += x->g[0].revoke_heard;
        if (sc->revoke && !w->dead_at[r] && !(w->suspected >> r & 1u)) {
            const int next = (r + 1) % sc->ranks, gone = w->dead_at[next] || (w->suspected >> next & 1u);
            const bfo_request *q[3] = { &x->prq, &x->pse, &x->psr };
            if (!x->pattern_done && !lost) {
                res->hangs++;
                sg_note(res, "rank %d: its pattern on the revoked group never completed%.0d%.0d", r, 0, 0);
            }
            for (int i = 0; i < 3 && x->pattern_done; i++) {
                const int st = q[i]->status;
                res->revoked_ops += st == BFO_ERR_REVOKED;
                res->discarded += i > 0 && st == BFO_OK;
                if (st == BFO_ERR_REVOKED || (i > 0 && st == BFO_OK) || (gone && st == BFO_ERR_PROC_FAILED))
                    continue;
                res->bad_status++;
                sg_note(res, "rank %d: pattern request %d ended %d", r, i, st);
            }
            if (x->pattern_done && x->g[0].revoked && x->late_rc != BFO_ERR_REVOKED) {
                res->bad_status++;
                sg_note(res, "rank %d: a send on the revoked context returned %d%.0d", r, x->late_rc, 0);
            }
        }
        free(x->psrbuf);
        for (int k = 0; k < 2; k++) {
            res->rounds += x->g[k].rounds;
            res->decided_own += x->g[k].decided_own;
            res->adopted += x->g[k].adopted;
        }
        if (!w->dead_at[r] && !x->finished && !(w->suspected >> r & 1u) && !res->revoke_lost) {
            if (getenv("SG_DEBUG")) {
                const bfo_group *g = &x->g[x->cur];
                for (int m = 0; m < g->n; m++)
                    fprintf(stderr, "rank %d member %d (rank %d): peer %s, rstate %d, pbusy %d/%d dbusy %d/%d rail0 %d rail1 %d\n", r, m, g->ranks[m],
                            bfo_peer_state_name(bfo_peer_state(&x->e, g->ranks[m])), g->rstate[m], g->pbusy[m], bfo_test(&g->preq[m]), g->dbusy[m], bfo_test(&g->dreq[m]),
                            bfo_rail_state(&x->e, g->ranks[m], 0), bfo_rail_state(&x->e, g->ranks[m], 1));
                for (int p = 0; p < sc->ranks; p++)
                    fprintf(stderr, "  rank %d from %d: recv_seq %llu (its send_seq %llu), ooo %d; ux_head %d; revoked %d\n", r, p,
                            (unsigned long long)x->e.peers[p].recv_seq, (unsigned long long)w->r[p].e.peers[r].send_seq,
                            x->e.peers[p].ooo_head, x->e.ux_head, x->e.nrevoked);
            }
            res->hangs++;
            sg_note(res, "rank %d never finished agreement %d%.0d", r, x->k, 0);
        }
    }
    (void)done;
    /* the judge, agreement by agreement, over the survivors */
    for (int k = 0; k < agrees; k++) {
        int first = -1;
        uint64_t gone = w->suspected;
        for (int r = 0; r < sc->ranks; r++)
            if (w->dead_at[r])
                gone |= 1u << r;
        for (int r = 0; r < sc->ranks; r++) {
            const sg_rank *x = &w->r[r];
            uint32_t cleared;
            if (x->k <= k || x->rc[k] != BFO_OK)
                continue; /* it ended before this one, or at it */
            res->results++;
            if (w->dead_at[r] || (w->suspected >> r & 1u))
                continue; /* not a survivor (a suspected rank is dead to the others,
                           * whatever it returns): no claim on its result */
            if (first < 0) {
                first = r;
            } else if (x->value[k] != w->r[first].value[k] || x->failed[k] != w->r[first].failed[k]) {
                res->disagreements++;
                sg_note(res, "agreement %d: ranks %d and %d returned different results", k, first, r);
            }
            cleared = ~x->value[k] & 0xffu;
            for (int s = 0; s < sc->ranks; s++)
                if (!w->dead_at[s] && !(w->suspected >> s & 1u) && !(cleared >> s & 1u)) {
                    res->invalid++;
                    sg_note(res, "agreement %d at rank %d: survivor %d's proposal missing", k, r, s);
                }
            if (cleared >> sc->ranks) {
                res->invalid++;
                sg_note(res, "agreement %d at rank %d: a proposal of no member%.0d", k, r, 0);
            }
            if (x->failed[k] & ~gone) {
                res->invalid++;
                sg_note(res, "agreement %d at rank %d: a live rank in the failed set (%d)", k, r,
                        (int)x->failed[k]);
            }
        }
    }
    if (sc->shrink) {
        int first = -1;
        for (int r = 0; r < sc->ranks; r++) {
            const sg_rank *x = &w->r[r];
            if (w->dead_at[r] || (w->suspected >> r & 1u) || !x->shrunk_n)
                continue;
            if (first < 0)
                first = r;
            else if (x->shrunk_n != w->r[first].shrunk_n ||
                     memcmp(x->shrunk, w->r[first].shrunk, sizeof(int) * (size_t)x->shrunk_n)) {
                res->shrink_mismatch++;
                sg_note(res, "shrink: ranks %d and %d made different groups%.0d", first, r, 0);
            }
        }
    }
    res->pass = !res->hangs && !res->disagreements && !res->invalid && !res->shrink_mismatch &&
                !res->bad_status;
    sn_free(&w->sn);
    for (int i = 0; i < sc->ranks; i++)
        free(w->r[i].mem);
    free(w);
    return res->pass;
}

#endif /* BFO_SIMGROUP_H */
