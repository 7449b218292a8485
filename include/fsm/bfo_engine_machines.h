// SPDX-License-Identifier: BSD-3-Clause
/* bfo_engine_machines.h - the rail machine's and the peer machine's actions.
 *
 * Part of bfo_engine.h, level 8 of its parts (docs/engine-design.md, "The
 * parts"): include bfo_engine.h, not this.  It includes bfo_engine_send.h,
 * bfo_engine_recv.h (and so every part below); a call to a part above goes
 * through a prototype in bfo_engine_hooks.h: here bfo__relay_take,
 * bfo__relayack_take, bfo__reach_take, bfo__relay_on_peer_step,
 * bfo__relay_unpend.
 *
 * Sections (grep '>>name'): >>rail_machine, >>peer_machine.
 */
#ifndef BFO_ENGINE_MACHINES_H
#define BFO_ENGINE_MACHINES_H

#include "bfo_engine_send.h"
#include "bfo_engine_recv.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Defined below in this part, called before their definition. */
static BFO__COLD void bfo__peer_step(bfo_engine *e, int peer, int ev);

/* >>rail_machine - rail control, the rail machine's actions --------------- */

/* Sends a rail control message; 0 when over the control budget (not sent:
 * a heartbeat probe is tried again at a later progress, a PROBING probe
 * times out and the rail reconnects). */
static inline int bfo__rail_ctl_pad(bfo_engine *e, int peer, int rail, int type, int on_rail,
                                    uint64_t nonce, size_t pad)
{
    bfo_hdr_railctl h;
    bfo_op *op = bfo__ctl_alloc(e, type, peer);
    if (!op)
        return 0;
    op->about_rail = rail;
    op->fixed_rail = on_rail;
    h.type = (uint8_t)type;
    h.flags = 0;
    h.rail = (uint16_t)rail;
    h.epoch = e->peers[peer].rail[rail].epoch;
    h.nonce = nonce;
    op->hdr_len = bfo_hdr_railctl_encode(&h, op->hdr, sizeof op->hdr);
    op->payload = pad ? e->pad_mem : NULL; /* a demoted rail's measuring probe: zeros */
    op->payload_len = pad;
    bfo__post(e, op);
    return 1;
}

static inline int bfo__rail_ctl(bfo_engine *e, int peer, int rail, int type, int on_rail,
                                uint64_t nonce)
{
    return bfo__rail_ctl_pad(e, peer, rail, type, on_rail, nonce, 0);
}

/* ADMIT: the rail is UP (again): a new epoch, its back-off and attempts
 * start over, rate and failure detector reset (measured afresh), the peer
 * told its window, the notices owed sent. */
static inline void bfo__rail_admit(bfo_engine *e, int peer, int rail)
{
    bfo_peer *p = &e->peers[peer];
    bfo_rail_link *rs = &p->rail[rail];
    if (rs->ever_up)
        e->stats.readmissions++;
    rs->ever_up = 1;
    rs->epoch++;
    rs->attempts = 0;
    rs->backoff = e->cfg.backoff_min_ns;
    bfo__detect_reset(e, rs);
    rs->broken_owed = 0;
    bfo__rate_reset(e, rs);
    p->down_since = 0;
    bfo__peer_step(e, peer, BFO_PEER_EV_RAIL_ADMITTED);
    bfo__credit_tell(e, peer); /* the peer's window here, in case its guess is off */
    /* the notices that found no rail UP when their rail was mapped out
     * (the peer may still think it UP: it may hear us on it, one way) */
    for (int k = 0; k < e->cfg.nrails; k++)
        if (p->rail[k].broken_owed) {
            p->rail[k].broken_owed = 0;
            if ((p->rail[k].fsm.cs == BFO_RAIL_ST_FAILED ||
                 p->rail[k].fsm.cs == BFO_RAIL_ST_RECONNECTING) &&
                !bfo__rail_ctl(e, peer, k, BFO_FRAG_BROKEN, rail, 0))
                p->rail[k].broken_owed = 1; /* over the control budget: at the next */
        }
}

/* MAP_OUT: the rail is out; the last one UP gone, the peer machine hears
 * it; the transport drops the connection. */
static inline void bfo__rail_map_out(bfo_engine *e, int peer, int rail)
{
    bfo_peer *p = &e->peers[peer];
    int up = 0;
    e->stats.mapouts++;
    for (int k = 0; k < e->cfg.nrails; k++)
        up += k != rail && bfo__live(p->rail[k].fsm.cs);
    if (!up && !p->down_since) {
        p->down_since = e->now ? e->now : 1;
        bfo__peer_step(e, peer, BFO_PEER_EV_LAST_RAIL_LOST);
    }
    if (e->be.disconnect) /* what is in flight on it fails now, not at the reconnect */
        e->be.disconnect(e->be.ctx, peer, rail);
}

/* SEND_BROKEN: the peer told on another rail that this one is broken (an
 * UP one, else a demoted one); with none, when a rail is admitted. */
static inline void bfo__rail_send_broken(bfo_engine *e, int peer, int rail)
{
    bfo_peer *p = &e->peers[peer];
    int other = -1;
    for (int k = 0; k < e->cfg.nrails && other < 0; k++)
        if (k != rail && bfo__rail_up(e, peer, k))
            other = k;
    for (int k = 0; k < e->cfg.nrails && other < 0; k++)
        if (k != rail && bfo__live(p->rail[k].fsm.cs))
            other = k; /* a demoted rail carries it when none is UP */
    if (other >= 0)
        bfo__rail_ctl(e, peer, rail, BFO_FRAG_BROKEN, other, 0);
    else
        p->rail[rail].broken_owed = 1; /* sent when a rail is admitted (ADMIT) */
}

/* SCHEDULE_RECONNECT: the next attempt after the back-off, which doubles
 * up to backoff_max_ns. */
static inline void bfo__rail_backoff(bfo_engine *e, bfo_rail_link *rs)
{
    rs->deadline = e->now + rs->backoff;
    rs->backoff = rs->backoff * 2 > e->cfg.backoff_max_ns ? e->cfg.backoff_max_ns : rs->backoff * 2;
    rs->attempts++;
}

/* SEND_BYE: this side leaves: on this rail, what it sent the peer (its
 * sequence).  Within the control budget (4 per peer and rail: room for a
 * BYE beside a probe, its answer and a CREDIT). */
static inline void bfo__rail_send_bye(bfo_engine *e, int peer, int rail)
{
    bfo_hdr_bye h;
    bfo_op *op = bfo__ctl_alloc(e, BFO_FRAG_BYE, peer);
    if (!op)
        return; /* the peer hears another rail's, or takes the closing as a failure */
    op->about_rail = rail;
    op->fixed_rail = rail;
    h.type = BFO_FRAG_BYE;
    h.flags = 0;
    h.seq = e->peers[peer].send_seq;
    op->hdr_len = bfo_hdr_bye_encode(&h, op->hdr, sizeof op->hdr);
    e->byes_out++;
    e->stats.byes_sent++;
    bfo__post(e, op);
}

/* The rail machine's actions, each a call into the part that owns what it
 * changes. */
static inline void bfo__rail_action(bfo_engine *e, int peer, int rail, int act, const bfo_frame *f)
{
    bfo_rail_link *rs = &e->peers[peer].rail[rail];
    switch ((enum bfo_rail_action)act) { /* every action, no default: -Wswitch names one left out */
    case BFO_RAIL_ACT_SEND_PROBE: bfo__detect_send_probe(e, peer, rail); return;
    case BFO_RAIL_ACT_SEND_PROBEACK:
        bfo__rail_ctl(e, peer, rail, BFO_FRAG_PROBEACK, rail,
                      f && f->type == BFO_FRAG_PROBE ? f->h.railctl.nonce : 0);
        return;
    case BFO_RAIL_ACT_ADMIT: bfo__rail_admit(e, peer, rail); return;
    case BFO_RAIL_ACT_MAP_OUT: bfo__rail_map_out(e, peer, rail); return;
    case BFO_RAIL_ACT_SEND_BROKEN: bfo__rail_send_broken(e, peer, rail); return;
    case BFO_RAIL_ACT_SCHEDULE_RECONNECT: bfo__rail_backoff(e, rs); return;
    case BFO_RAIL_ACT_CONNECT: /* first use: a refusal is a failed attempt, as at init before */
        rs->deadline = e->now; /* CONNECTING since (bfo__rails_suspect) */
        if (e->be.connect && e->be.connect(e->be.ctx, peer, rail) != 0)
            bfo__rail_step(e, peer, rail, BFO_EV_CONNECT_FAILED, NULL);
        return;
    case BFO_RAIL_ACT_RECONNECT:
        if (!e->be.connect || e->be.connect(e->be.ctx, peer, rail) != 0)
            rs->deadline = e->now; /* the next progress reports the failure */
        return;
    case BFO_RAIL_ACT_RETIRE: return;
    case BFO_RAIL_ACT_SEND_BYE: bfo__rail_send_bye(e, peer, rail); return;
    case BFO_RAIL_ACT_DEMOTE: bfo__rate_on_demote(e, rs); return;
    case BFO_RAIL_ACT_PROMOTE: bfo__rate_on_promote(e, peer, rail); return; /* bfo__rail_step posts what waited */
    case BFO_RAIL_ACT_PART: /* its connection's end is no failure */
        if (e->be.part)
            e->be.part(e->be.ctx, peer, rail);
        return;
    case BFO_RAIL_ACT_TAKE_CREDIT: bfo__credit_heard(e, peer, f); return;
    case BFO_RAIL_ACT_TAKE_RELAY: bfo__relay_take(e, peer, f); return;
    case BFO_RAIL_ACT_TAKE_RELAYACK: bfo__relayack_take(e, peer, f); return;
    case BFO_RAIL_ACT_TAKE_REACH: bfo__reach_take(e, peer, f); return;
    }
    e->stats.protocol_violations++; /* not an action of the rail machine */
}

/* 1 for a peer never needed: DOWN, every rail of it DORMANT (or ABSENT),
 * none connected either way.  Nothing is known of it: not given up, never
 * relayed to (no direct attempt failed), and a relay or an ANY_SOURCE
 * receive that must know asks for it (bfo__peer_need). */
static inline int bfo__peer_fresh(const bfo_engine *e, int peer)
{
    const bfo_peer *p = &e->peers[peer];
    int dormant = 0;
    if (peer == e->cfg.rank || p->fsm.cs != BFO_PEER_ST_DOWN)
        return 0;
    for (int k = 0; k < e->cfg.nrails; k++) {
        const int cs = p->rail[k].fsm.cs;
        if (cs == BFO_RAIL_ST_DORMANT)
            dormant = 1;
        else if (cs != BFO_RAIL_ST_ABSENT)
            return 0;
    }
    return dormant;
}

/* 1 for a peer this rank may reach as far as it knows (relay on: its
 * REACH): a rail of it live, or none ever tried and failed (it is fresh,
 * or its first connection is under way: a frame passed on to it asks for
 * it, bfo__relay_take). */
static inline int bfo__peer_may_reach(const bfo_engine *e, int peer)
{
    const bfo_peer *p = &e->peers[peer];
    int some = 0;
    if (p->fsm.cs == BFO_PEER_ST_REACHABLE)
        return 1;
    if (peer == e->cfg.rank || p->fsm.cs != BFO_PEER_ST_DOWN)
        return 0;
    for (int k = 0; k < e->cfg.nrails; k++) {
        const int cs = p->rail[k].fsm.cs;
        if (p->rail[k].ever_up || cs == BFO_RAIL_ST_FAILED || cs == BFO_RAIL_ST_RECONNECTING ||
            cs == BFO_RAIL_ST_RETIRED || cs == BFO_RAIL_ST_LEFT)
            return 0;
        some |= cs != BFO_RAIL_ST_ABSENT;
    }
    return some;
}

/* The peer is needed (a rail of it left DORMANT to connect or be probed,
 * or a frame for it waits): the grace starts now if no rail of it is live
 * and it was never needed before (spec/peer.rl: no grace runs for a peer
 * never needed). */
static inline void bfo__peer_grace_start(bfo_engine *e, bfo_peer *p)
{
    if (p->fsm.cs == BFO_PEER_ST_DOWN && !p->down_since)
        p->down_since = e->now ? e->now : 1;
}

static inline void bfo__rail_step(bfo_engine *e, int peer, int rail, int ev, const bfo_frame *f)
{
    bfo_peer *p = &e->peers[peer];
    bfo_step st;
    int was_up = bfo__rail_up(e, peer, rail), was_live = bfo__live(p->rail[rail].fsm.cs);
    const int cs0 = p->rail[rail].fsm.cs, was_dormant = cs0 == BFO_RAIL_ST_DORMANT;
    const int may_reach = e->cfg.relay && bfo__peer_may_reach(e, peer);
    memset(&st, 0, sizeof st);
    st.trace = e->trace;
    st.obj = &p->rail[rail];
    if (bfo_rail_step(&p->rail[rail].fsm, ev, &st) != BFO_OK) {
        e->stats.protocol_violations++;
        return;
    }
    /* before the actions: a connect refused at once fails the rail, and
     * the grace then runs from the attempt */
    if (was_dormant && (p->rail[rail].fsm.cs == BFO_RAIL_ST_CONNECTING ||
                        p->rail[rail].fsm.cs == BFO_RAIL_ST_PROBING))
        bfo__peer_grace_start(e, p);
    for (unsigned i = 0; i < st.n_actions; i++)
        bfo__rail_action(e, peer, rail, st.actions[i], f);
    if (was_live && !bfo__live(p->rail[rail].fsm.cs))
        bfo__detect_on_down(&p->rail[rail]);
    /* one rail first (bfo__peer_need): a rail that failed brings every
     * DORMANT rail of the peer in, so that what waits for it goes over
     * another as soon as one is admitted; one that does not reach the peer
     * (RAIL_ABSENT after its connect) hands the need on to the next */
    if (!was_dormant && p->rail[rail].fsm.cs != cs0) {
        if (p->rail[rail].fsm.cs == BFO_RAIL_ST_FAILED)
            bfo__peer_need_rest(e, peer);
        else if (p->rail[rail].fsm.cs == BFO_RAIL_ST_ABSENT && cs0 == BFO_RAIL_ST_CONNECTING &&
                 !p->unreachable && !e->left)
            bfo__peer_need(e, peer);
    }
    if (!was_up && bfo__rail_up(e, peer, rail))
        bfo__flush_pending(e, peer);
    if (e->cfg.relay && may_reach != bfo__peer_may_reach(e, peer)) {
        e->reach_dirty = 1; /* its first connection failed: this rank's REACH says so */
        if (may_reach && p->pend_head >= 0)
            bfo__relay_unpend(e, peer); /* and the frames passed on waiting for it fail */
    }
}

/* bfo__peer_need_rest: every DORMANT rail of the peer connects
 * (PEER_NEEDED / connect).  When one rail is not enough (docs/engine-design.md,
 * "One rail first"): a rail of the peer failed (bfo__rail_step), is
 * suspected (its heartbeat unanswered for half a probe timeout, or its
 * first connection made no progress for silence_ns: bfo_engine_progress),
 * a piece of data large enough to stripe goes to it (bfo__piece), or the
 * embedder connects every rail at init (bfo_config.connect_at_init).  Not
 * for a peer that is gone, or once this side leaves. */
static BFO__COLD void bfo__peer_need_rest(bfo_engine *e, int peer)
{
    bfo_peer *p = &e->peers[peer];
    if (peer == e->cfg.rank || p->unreachable || e->left)
        return;
    for (int k = 0; k < e->cfg.nrails; k++)
        if (p->rail[k].fsm.cs == BFO_RAIL_ST_DORMANT)
            bfo__rail_step(e, peer, k, BFO_EV_PEER_NEEDED, NULL);
    bfo__peer_grace_start(e, p);
}

/* bfo__peer_need: the engine has a frame for the peer and no rail of it
 * is UP (bfo__post_no_rail), or must learn whether it is left: one rail
 * connects, the preferred one (docs/engine-design.md, "One rail first"):
 * the DORMANT rail of the highest bandwidth (bfo_backend.rail_bandwidth),
 * the lowest-numbered on a tie, so a shared-memory rail listed first or
 * rated above the network's is the one a peer on the same host gets, and
 * a peer elsewhere the first network rail once the transport says the
 * shared-memory one does not reach it (RAIL_ABSENT: the next one connects,
 * bfo__rail_step).  None connects while a rail of it is on its way or
 * live (connecting, probing, UP, DEMOTED); every DORMANT one does once a
 * rail of it failed (FAILED, RECONNECTING: bfo__peer_need_rest).  The
 * grace starts if the peer was never needed.  A rail already connecting,
 * probing, failed or absent is left as it is. */
static BFO__COLD void bfo__peer_need(bfo_engine *e, int peer)
{
    bfo_peer *p = &e->peers[peer];
    int best = -1;
    if (peer == e->cfg.rank)
        return;
    for (int k = 0; k < e->cfg.nrails; k++) {
        const int cs = p->rail[k].fsm.cs;
        if (cs == BFO_RAIL_ST_DORMANT) {
            if (best < 0 || p->rail[k].bw > p->rail[best].bw)
                best = k;
        } else if (cs == BFO_RAIL_ST_FAILED || cs == BFO_RAIL_ST_RECONNECTING) {
            bfo__peer_need_rest(e, peer);
            return;
        } else if (cs == BFO_RAIL_ST_CONNECTING || cs == BFO_RAIL_ST_PROBING || bfo__live(cs)) {
            best = -2; /* one is on its way, or there */
        }
        if (best == -2)
            break;
    }
    if (best >= 0)
        bfo__rail_step(e, peer, best, BFO_EV_PEER_NEEDED, NULL);
    bfo__peer_grace_start(e, p);
}

/* The peer has work again after a quiet spell (bfo_engine_detect.h,
 * "Liveness follows the work"): a send to a silent peer starts from what
 * is known.  Every live rail of it that heard nothing for a heartbeat is
 * probed at once (HEARTBEAT_DUE, unless its probe is out already), before the work's first frame goes out and
 * without holding it back, so a rail that died meanwhile is found within a
 * probe timeout; its silence counts from now, not from the spell. */
static BFO__COLD void bfo__peer_wake(bfo_engine *e, int peer)
{
    bfo_peer *p = &e->peers[peer];
    p->quiet = 0;
    if (p->unreachable || peer == e->cfg.rank)
        return;
    for (int k = 0; k < e->cfg.nrails; k++) {
        bfo_rail_link *rs = &p->rail[k];
        if (!bfo__live(rs->fsm.cs))
            continue;
        bfo__detect_wake(e, rs);
        if (!rs->det.probe_out && e->now - rs->det.last_rx >= e->cfg.heartbeat_ns)
            bfo__rail_step(e, peer, k, BFO_EV_HEARTBEAT_DUE, NULL); /* silent lately */
    }
}

/* A request posted to or for the peer: it has work now (and a probe at
 * once if it had none for a while). */
static BFO__HOT void bfo__peer_work(bfo_engine *e, int peer)
{
    bfo_peer *p = &e->peers[peer];
    bfo__detect_work(e, p);
    if (BFO__UNLIKELY(p->quiet))
        bfo__peer_wake(e, peer);
}

/* A rail event of a peer that parted (it said BYE, or this side left): its
 * rails are LEFT, which takes it and does nothing; out of line, as a gone
 * peer's events are (one given up gets none). */
static BFO__COLD void bfo__rail_event_parted(bfo_engine *e, int peer, int rail, int ev)
{
    if (bfo_rail_accepts(e->peers[peer].rail[rail].fsm.cs, ev))
        bfo__rail_step(e, peer, rail, ev, NULL);
}

/* bfo_engine_rail_event: see THE API in bfo_engine.h. */
static inline void bfo_engine_rail_event(bfo_engine *e, int peer, int rail, int ev, uint64_t now)
{
    if (rail < 0 || rail >= e->cfg.nrails)
        return;
    if (now > e->now)
        e->now = now;
    for (int i = peer == BFO_ALL_PEERS ? 0 : peer;
         i >= 0 && i < e->cfg.nranks && (peer == BFO_ALL_PEERS || i == peer); i++)
        if (i != e->cfg.rank && !e->peers[i].unreachable &&
            bfo_rail_accepts(e->peers[i].rail[rail].fsm.cs, ev))
            bfo__rail_step(e, i, rail, ev, NULL);
        else if (BFO__UNLIKELY(e->peers[i].unreachable == BFO__PARTED) && i != e->cfg.rank)
            bfo__rail_event_parted(e, i, rail, ev);
    bfo__run_failed(e);
}

/* >>peer_machine - a peer gone or fenced, its machine's actions ----------- */

/* 1 when no other rank is reachable: an ANY_SOURCE receive never can be
 * (but for a message of this rank to itself: a job of one rank waits). */
static inline int bfo__all_unreachable(const bfo_engine *e)
{
    if (e->cfg.nranks == 1)
        return e->left;
    for (int i = 0; i < e->cfg.nranks; i++)
        if (i != e->cfg.rank && (!e->peers[i].unreachable || bfo__still_coming(e, i)))
            return 0;
    return 1;
}

/* No rail of the peer came back in time: every request of it fails, and
 * ANY_SOURCE receives too once no peer at all is left.  It is for good, as
 * a failed process is: later requests fail at once, the engine stops
 * probing the peer's rails, and refuses its frames (bfo_engine_frame
 * returns BFO_ERR_PEER_UNREACHABLE: the transport does not acknowledge
 * the frame and drops the connection), so that the peer, if alive, fails
 * its operations too and declares this side unreachable in turn.  Neither
 * side can then mistake a message of the old sequence space for a new one.
 * (Resuming a peer needs a new sequence space agreed by both: future work.) */
static inline void bfo__peer_unreachable(bfo_engine *e, int peer)
{
    bfo__peer_step(e, peer, BFO_PEER_EV_GRACE_EXPIRED); /* give_up */
}

/* Fails what waits on a peer that is gone: every request of it not
 * complete (PEER_UNREACHABLE: a request drains its operations in flight,
 * then fails with the status bfo__gone_status gives), and the operations
 * waiting for a rail to it.  With posted, the receives still posted for it
 * too (and ANY_SOURCE ones once no peer is left that may send), and its
 * messages waiting for an earlier one that will never come; without (a
 * BYE: what the peer sent before it may still come), those wait. */
static inline void bfo__peer_fail(bfo_engine *e, int peer, int posted)
{
    bfo_peer *p = &e->peers[peer];
    bfo_request *prev = NULL, *r, *next;
    int none_left = bfo__all_unreachable(e);
    for (int i = 0; i < e->slotp.n; i++) {
        r = bfo__slot_at(e, i)->req;
        if (r && r->peer == peer && !r->complete &&
            (posted || r->kind != BFO_REQ_RECV || r->cs != BFO_RECV_ST_POSTED))
            bfo__req_gone(e, r);
    }
    for (int k = 0; k <= e->bin_mask && e->posted_count && posted; k++) /* receives naming it */
        for (int any = 0; any < 2; any++) {
            bfo__rbin *b = any ? &e->rbin_any[k] : &e->rbin_src[k];
            prev = NULL;
            for (r = b->head; r; r = next) {
                next = r->next;
                if (r->peer != peer && !(r->peer == BFO_ANY_SOURCE && none_left)) {
                    prev = r;
                    continue;
                }
                bfo__rbin_unlink(e, b, prev, r, any);
                bfo__req_gone(e, r);
            }
        }
    /* messages waiting for an earlier one that will never come */
    for (int k = p->ooo_head, nk; k >= 0 && posted; k = nk) {
        nk = bfo__ux_at(e, k)->next;
        bfo__uxm_put(e, k);
    }
    if (posted)
        p->ooo_head = p->ooo_tail = -1;
    int i = p->pend_head; /* operations waiting for a rail: they fail */
    p->pend_head = p->pend_tail = -1;
    while (i >= 0) {
        int n = bfo__op_at(e, i)->next;
        bfo__op_done(e, bfo__op_at(e, i), 0);
        i = n;
    }
}

/* fence: a process reported dead hears nothing more from this rank.  Its
 * failure takes the next place in the order; every connection to it is
 * dropped (its frames are refused from now on: bfo__peer_gone_flags), and
 * every ANY_SOURCE receive posted ends BFO_ERR_PROC_FAILED_PENDING: the
 * failure is not acknowledged yet (bfo_failure_ack). */
static BFO__COLD void bfo__peer_fence(bfo_engine *e, int peer)
{
    bfo_peer *p = &e->peers[peer];
    p->failed_order = ++e->failed_n;
    e->stats.procs_failed++;
    for (int k = 0; k < e->cfg.nrails; k++) {
        const int cs = p->rail[k].fsm.cs; /* a rail that may have a connection: dropped */
        bfo__rail_step(e, peer, k, BFO_EV_PEER_FENCED, NULL); /* retire */
        if (e->be.disconnect && cs != BFO_RAIL_ST_ABSENT && cs != BFO_RAIL_ST_RETIRED && cs != BFO_RAIL_ST_LEFT)
            e->be.disconnect(e->be.ctx, peer, k);
    }
    for (int k = 0; k <= e->bin_mask && e->posted_any; k++) {
        bfo__rbin *b = &e->rbin_any[k];
        for (bfo_request *r = b->head, *next; r; r = next) {
            next = r->next;
            bfo__rbin_unlink(e, b, NULL, r, 1);
            r->status = BFO_ERR_PROC_FAILED_PENDING;
            bfo__req_feed(e, r, BFO_EV_PEER_UNREACHABLE, NULL);
        }
    }
}

/* The hot paths' flags, from the peer machine's state: gone (unreachable:
 * its frames refused, or taken as after a BYE) and left. */
static inline void bfo__peer_gone_flags(bfo_peer *p)
{
    switch (p->fsm.cs) {
    case BFO_PEER_ST_UNREACHABLE:
    case BFO_PEER_ST_FAILED: p->unreachable = BFO__GIVEN_UP; break;
    case BFO_PEER_ST_LEAVING:
    case BFO_PEER_ST_LEFT:
    case BFO_PEER_ST_PARTED: p->unreachable = BFO__PARTED; break;
    default: p->unreachable = 0; break;
    }
    p->left = p->fsm.cs == BFO_PEER_ST_LEAVING ? BFO__LEFT_OWED
              : p->fsm.cs == BFO_PEER_ST_LEFT  ? BFO__LEFT_DONE
                                               : 0;
}

/* Every change of a peer's state passes through here (the tracer sees it,
 * obj: the bfo_peer): the peer machine takes the event, the flags follow
 * its state, then its actions run in order.  An event the machine has no
 * transition for is a bug of the engine's: counted as a protocol
 * violation, nothing changes. */
static BFO__COLD void bfo__peer_step(bfo_engine *e, int peer, int ev)
{
    bfo_peer *p = &e->peers[peer];
    bfo_step st;
    const int was_reachable = p->fsm.cs == BFO_PEER_ST_REACHABLE;
    memset(&st, 0, sizeof st);
    st.trace = e->trace;
    st.obj = p;
    if (bfo_peer_step(&p->fsm, ev, &st) != BFO_OK) {
        e->stats.protocol_violations++;
        return;
    }
    bfo__peer_gone_flags(p);
    bfo__relay_on_peer_step(e, peer, was_reachable);
    for (unsigned i = 0; i < st.n_actions; i++)
        switch (st.actions[i]) {
        case BFO_PEER_ACT_GIVE_UP: /* every request of it, the receives naming it */
        case BFO_PEER_ACT_CLOSE_OUT: bfo__peer_fail(e, peer, 1); break;
        case BFO_PEER_ACT_PART: /* its BYE: every rail of it LEFT; what it no longer answers fails */
            e->stats.peers_left++;
            for (int k = 0; k < e->cfg.nrails; k++)
                if (bfo_rail_accepts(p->rail[k].fsm.cs, BFO_EV_BYE_RCVD))
                    bfo__rail_step(e, peer, k, BFO_EV_BYE_RCVD, NULL);
            bfo__peer_fail(e, peer, 0);
            break;
        case BFO_PEER_ACT_FENCE: bfo__peer_fence(e, peer); break;
        case BFO_PEER_ACT_TAKE_ROUTE: /* what waited for a rail goes through the relay */
            e->stats.routes_found++;
            bfo__flush_pending(e, peer);
            break;
        case BFO_PEER_ACT_REPORT_ROUTE_LOST: /* the grace runs from now */
            e->stats.routes_lost++;
            p->down_since = e->now ? e->now : 1;
            break;
        default: e->stats.protocol_violations++; break; /* not an action of the peer machine */
        }
}

#ifdef __cplusplus
}
#endif
#endif /* BFO_ENGINE_MACHINES_H */
