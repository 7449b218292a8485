#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# (h) A rank that computes: rank 1 runs a busy loop that makes no call into
# bfo for COMPUTE_S (12) seconds while rank 0 streams to it, over the two
# verbs rails only (no TCP rail to vouch for it).  Rank 0's PROBEs wait; its
# backend posts host probes, zero-byte RDMA WRITEs that rank 1's rxe answers
# without its process, and tells the engine the host was heard, so rank 1
# is busy, not failed (docs/engine-design.md, "The failure detector"):
# every message verified, no rail mapped out, no queue pair lost, no peer
# given up.  Without host probes both rails were mapped out a heartbeat and
# a probe timeout (plus host_timeout) into the computation and rank 1 was
# given up 2 s later.
. "$(dirname "$0")/lib.sh"
COMPUTE_S=${COMPUTE_S:-12}
export BFO_RAILS=verbs:rxe0,verbs:rxe1
# Rendezvous messages (256 KiB: a send completes once the receiver has read
# it) and a window of 8 each way: what reaches the computing rank's receive
# buffers (8 RTS, 8 FIN, a PROBE, CREDITs) stays below recv_depth (32).
# Beyond it its adapter refuses sends (RNR), a host probe waits behind
# them, and the rail is mapped out host_timeout later (docs/verbs.md).
# A heartbeat of 1 s: a TCG guest's progress calls can come more than the
# default 100 ms apart.  The engine's gap rule used to move a probe's send
# time on so that its PROBEACK no longer matched (fixed since: the nonce
# is kept apart, probe_nonce); the heartbeat stays at 1 s here until this
# test has been measured with the default.
stream --duration $((COMPUTE_S + 8)) --compute "1:3:$COMPUTE_S" --size 262144 --window 8 \
    --heartbeat-ms 1000 --timeout $((COMPUTE_S + 60))
wait_stream $((COMPUTE_S + 70))
[ "$rc" = 0 ] || fail "bfo stream exit status $rc"
if [ "$ROLE" = b ]; then
    grep -q "computed $COMPUTE_S.0 s without a call into bfo" "$OUT/err.b" || fail "rank 1 did not compute"
    exit 0
fi
check_exact
[ "$(jget failovers)" = 0 ] || fail "$(jget failovers) rail(s) mapped out while rank 1 computed"
[ "$(jget unreachable)" = 0 ] || fail "$(jget unreachable) operation(s) failed unreachable"
[ "$(jget dead_peers)" = 0 ] || fail "rank 1 was given up"
[ "$(jget conn_errors)" = 0 ] || fail "$(jget conn_errors) queue pair(s) lost"
[ "$(jget host_heard)" -gt 0 ] || fail "no host evidence reached the engine"
[ "$(jget nudges)" -gt 0 ] || fail "no host probe posted"
summary
echo "measure: rank 1 made no call for $COMPUTE_S s: host probes (zero-byte RDMA WRITEs) $(jget nudges)," \
    "host heard $(jget host_heard) times, longest pause in completions $(jget stall_ms_max) ms"
echo "ok: t8 a rank computing $COMPUTE_S s over verbs rails: busy, not failed"
