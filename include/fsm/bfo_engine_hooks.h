// SPDX-License-Identifier: BSD-3-Clause
/* bfo_engine_hooks.h - internal predicates, and the prototypes of every call
 * to a part above the caller's.
 *
 * Part of bfo_engine.h, level 1 of its parts (docs/engine-design.md, "The
 * parts"): include bfo_engine.h, not this.  The one list of calls that go
 * up: a part calls a function of a part above its own only through a
 * prototype here (>>hooks), so that each part compiles with the parts below
 * it; tests/check_layers.py keeps the order.
 *
 * Sections (grep '>>name'): >>predicates, >>frame_fields, >>hooks.
 */
#ifndef BFO_ENGINE_HOOKS_H
#define BFO_ENGINE_HOOKS_H

#include "bfo_engine_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* >>predicates - small tests every part makes ----------------------------- */

/* 0 <= i < n in one compare: a negative i wraps above any n.  For the
 * argument checks on every entry point. */
static inline int bfo__in_range(int i, int n) { return (unsigned)i < (unsigned)n; }

/* UP: the rail carries data.  Live: UP or DEMOTED, connected and working
 * (probed, fails as UP does, carries control when no rail is UP). */
static inline int bfo__rail_up(const bfo_engine *e, int peer, int rail)
{
    return e->peers[peer].rail[rail].fsm.cs == BFO_RAIL_ST_UP;
}
static inline int bfo__live(int cs) { return cs == BFO_RAIL_ST_UP || cs == BFO_RAIL_ST_DEMOTED; }

/* Operations that are not engine frames: RDMA by this side. */
#define BFO__OP_WRITE 0x100
#define BFO__OP_READ 0x101
static inline int bfo__op_rdma(int type) { return type == BFO__OP_WRITE || type == BFO__OP_READ; }

static inline int bfo__rail_rdma(const bfo_engine *e, int peer, int rail)
{
    return bfo__rail_up(e, peer, rail) && (e->peers[peer].rail[rail].caps & BFO_CAP_RDMA);
}

/* 1 when RDMA can be used with this peer: the backend can, and a rail that
 * can is UP (up_now), or is neither retired nor absent (the sender's
 * choice, made before the rails may be up; the receiver, who decides last,
 * checks up_now). */
static inline int bfo__rdma_ok(const bfo_engine *e, int peer, int up_now)
{
    if (!e->be.post_write || !e->be.post_read || !e->be.reg_mem ||
        e->peers[peer].fsm.cs == BFO_PEER_ST_RELAYED) /* no RDMA through a relay */
        return 0;
    for (int r = 0; r < e->cfg.nrails; r++) {
        const bfo_rail_link *rl = &e->peers[peer].rail[r];
        if ((rl->caps & BFO_CAP_RDMA) &&
            (up_now ? rl->fsm.cs == BFO_RAIL_ST_UP
                    : rl->fsm.cs != BFO_RAIL_ST_RETIRED && rl->fsm.cs != BFO_RAIL_ST_ABSENT))
            return 1;
    }
    return 0;
}

/* 1 when a receive naming a gone peer may still be matched: the peer said
 * BYE and messages it sent before may still come (this side did not
 * leave). */
static inline int bfo__still_coming(const bfo_engine *e, int peer)
{
    return peer >= 0 && !e->left && e->peers[peer].left == BFO__LEFT_OWED;
}

/* >>frame_fields - the matching fields of MATCH, RNDV and RGET ------------ */

/* Matching fields of MATCH, RNDV and RGET. */
static inline uint32_t bfo__frame_ctx(const bfo_frame *f)
{
    return f->type == BFO_FRAG_MATCH  ? f->h.match.ctx
           : f->type == BFO_FRAG_RNDV ? f->h.rndv.ctx
                                      : f->h.rget.ctx;
}
static inline int bfo__frame_tag(const bfo_frame *f)
{
    return (int)(f->type == BFO_FRAG_MATCH  ? f->h.match.tag
                 : f->type == BFO_FRAG_RNDV ? f->h.rndv.tag
                                            : f->h.rget.tag);
}
static inline uint32_t bfo__frame_src(const bfo_frame *f)
{
    return f->type == BFO_FRAG_MATCH  ? f->h.match.src
           : f->type == BFO_FRAG_RNDV ? f->h.rndv.src
                                      : f->h.rget.src;
}

/* The whole message's length: an eager MATCH's payload, a rendezvous's
 * msg_len. */
static inline size_t bfo__frame_len(const bfo_frame *f)
{
    return f->type == BFO_FRAG_MATCH  ? f->payload_len
           : f->type == BFO_FRAG_RNDV ? (size_t)f->h.rndv.msg_len
                                      : (size_t)f->h.rget.msg_len;
}

static inline uint64_t bfo__frame_seq(const bfo_frame *f)
{
    return f->type == BFO_FRAG_MATCH  ? f->h.match.seq
           : f->type == BFO_FRAG_RNDV ? f->h.rndv.seq
                                      : f->h.rget.seq;
}

/* >>hooks - calls to a part above the caller's ---------------------------- */

/* Grouped by the part that defines them, each group with the parts below
 * it that call into it: nothing else goes up.  A new prototype here is a
 * new dependency of a concern on one above it (docs/engine-design.md,
 * "The parts"). */

/* bfo_engine_rate.h, called from pools */
static BFO__HOT void bfo__rail_unqueued(bfo_engine *e, const bfo_op *op, uint64_t n, int ok);

/* bfo_engine_recv.h, called from request */
static inline void bfo__recv_feed(bfo_engine *e, bfo_request *r, int ev, const bfo__input *in);

/* bfo_engine_send.h, called from request */
static BFO__HOT void bfo__act_send_complete(bfo_engine *e, bfo_request *r);
static inline void bfo__send_feed(bfo_engine *e, bfo_request *r, int ev, const bfo__input *in);

/* bfo_engine_machines.h, called from rate, request, post */
static BFO__COLD void bfo__peer_need(bfo_engine *e, int peer);
static BFO__COLD void bfo__peer_need_rest(bfo_engine *e, int peer);
static inline int bfo__peer_may_reach(const bfo_engine *e, int peer);
static inline int bfo__rail_ctl_pad(bfo_engine *e, int peer, int rail, int type, int on_rail,
                                    uint64_t nonce, size_t pad);
static inline void bfo__rail_step(bfo_engine *e, int peer, int rail, int ev, const bfo_frame *f);

/* bfo_engine_frame.h, called from request */
static inline void bfo__run_self(bfo_engine *e);

/* bfo_engine_relay.h, called from rate, post, request, machines */
static BFO__COLD int bfo__relay_post(bfo_engine *e, bfo_op *op);
static BFO__COLD void bfo__relay_unqueued(bfo_engine *e, const bfo_op *op, int ok);
static BFO__COLD void bfo__relay_done(bfo_engine *e, bfo_op *op, int ok);
static BFO__COLD void bfo__relay_unpend(bfo_engine *e, int peer);
static BFO__COLD void bfo__relay_take(bfo_engine *e, int peer, const bfo_frame *f);
static BFO__COLD void bfo__relayack_take(bfo_engine *e, int peer, const bfo_frame *f);
static BFO__COLD void bfo__reach_take(bfo_engine *e, int peer, const bfo_frame *f);
static BFO__COLD void bfo__relay_on_peer_step(bfo_engine *e, int peer, int was_reachable);

#ifdef __cplusplus
}
#endif
#endif /* BFO_ENGINE_HOOKS_H */
