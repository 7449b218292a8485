// SPDX-License-Identifier: BSD-3-Clause
/* bfo_engine_detect.h - the failure detector: probe round trips and timeouts,
 * what the transport heard.
 *
 * Part of bfo_engine.h, level 3 of its parts (docs/engine-design.md, "The
 * parts"): include bfo_engine.h, not this.  It includes bfo_engine_pools.h
 * (and so every part below); a call to a part above goes through a
 * prototype in bfo_engine_hooks.h (none from here).
 *
 * Sections (grep '>>name'): >>probe_rtt, >>evidence.
 */
#ifndef BFO_ENGINE_DETECT_H
#define BFO_ENGINE_DETECT_H

#include "bfo_engine_pools.h"

#ifdef __cplusplus
extern "C" {
#endif

/* >>probe_rtt - a rail's probe timeout, from its round trips -------------- */

/* The probe timeout of one rail: probe_timeout_ns, or more when probes come
 * back slowly (srtt + 4 rttvar), or twice a piece's time from its post to
 * its completion (lat) while data is in flight on it, doubled after each
 * recent probe timeout in UP; never above silence_ns.  A loaded peer that
 * answers late is thus not failed again and again, while a quiet, healthy
 * rail keeps the floor.  A probe waits behind the rail's data as a piece
 * does, and its answer behind the other direction's: between namespaces
 * at 400 Mbit/s (a shaper's 100 ms queue each way) a loaded rail went 48 ms
 * unheard, its round trips measured at 0.6 ms before the load, and was
 * failed over in 2 runs of 3. */
static inline uint64_t bfo__probe_timeout(const bfo_engine *e, const bfo_rail_link *rs)
{
    uint64_t t = e->cfg.probe_timeout_ns, est = rs->srtt + 4 * rs->rttvar;
    if (est > t)
        t = est;
    if (rs->q_bytes && 2 * rs->lat > t)
        t = 2 * rs->lat;
    t <<= rs->pt_shift;
    /* a demoted rail is known to be slow: its probes and the peer's beacons
     * wait in a full queue (a shaper's drops them), twice as long */
    if (rs->fsm.cs == BFO_RAIL_ST_DEMOTED)
        t *= 2;
    return t < e->cfg.silence_ns ? t : e->cfg.silence_ns;
}

/* The PROBEACK of the last probe: one round trip measured (RFC 6298's
 * gains, 1/8 and 1/4); in UP the heartbeat is answered. */
static inline void bfo__probe_answered(bfo_engine *e, bfo_rail_link *rs)
{
    uint64_t rtt = e->now - rs->probe_sent;
    if (rs->busy_at > rs->probe_sent) {
        /* held open by a busy peer: its computing, not a round trip */
    } else if (!rs->srtt && !rs->rttvar) {
        rs->srtt = rtt;
        rs->rttvar = rtt / 2;
    } else {
        uint64_t d = rtt > rs->srtt ? rtt - rs->srtt : rs->srtt - rtt;
        rs->rttvar = rs->rttvar - rs->rttvar / 4 + d / 4;
        rs->srtt = rs->srtt - rs->srtt / 8 + rtt / 8;
    }
    if (!bfo__live(rs->fsm.cs))
        return;
    rs->probe_out = 0;
    if (rs->pt_shift && ++rs->pt_good >= 8) {
        rs->pt_shift--;
        rs->pt_good = 0;
    }
}

/* >>evidence - the transport heard the peer, or its host ------------------ */

/* bfo_engine_rail_heard: see THE API in bfo_engine.h. */
static inline void bfo_engine_rail_heard(bfo_engine *e, int peer, int rail, uint64_t now)
{
    if (peer < 0 || peer >= e->cfg.nranks || peer == e->cfg.rank || rail < 0 ||
        rail >= e->cfg.nrails || e->peers[peer].unreachable)
        return;
    if (now > e->now)
        e->now = now;
    e->peers[peer].rail[rail].last_rx = e->now;
}

/* bfo_engine_host_heard: see THE API in bfo_engine.h. */
static inline void bfo_engine_host_heard(bfo_engine *e, int peer, int rail, uint64_t at)
{
    bfo_rail_link *rs;
    if (peer < 0 || peer >= e->cfg.nranks || peer == e->cfg.rank || rail < 0 ||
        rail >= e->cfg.nrails || e->peers[peer].unreachable)
        return;
    if (at > e->now)
        e->now = at;
    rs = &e->peers[peer].rail[rail];
    if (at > rs->host_rx)
        rs->host_rx = at;
}

#ifdef __cplusplus
}
#endif
#endif /* BFO_ENGINE_DETECT_H */
