#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# (c) guest b takes its own link 0 down (ip link set eth0 down) mid-stream:
# local errors (LOC_QP_OP_ERR, IBV_EVENT_PORT_ERR) map rail 0 out; the
# stream goes on; the link comes back up and rail 0 is re-admitted.  The
# stream lasts 30 s: the re-admission must leave it time to carry data,
# and a loaded TCG guest has taken 10 s for `ip link set down; sleep 4`
# (re-admitted 22 s into the stream, which then ended: one CI run).
. "$(dirname "$0")/lib.sh"
stream --duration 30 --timeline 250 --timeout 100
if [ "$ROLE" = b ]; then
    moving 2
    P=$(mono); ip link set eth0 down; say "ip link set eth0 down"
    pause 4
    R=$(mono); ip link set eth0 up; say "ip link set eth0 up"
fi
wait_stream 110
[ "$rc" = 0 ] || fail "bfo stream exit status $rc"
if [ "$ROLE" = b ]; then
    d=$(first_log_after "$P" "rail 0: (RAIL_ERROR|queue pair closed|PORT_ERR)")
    u=$(first_log_after "$R" "rail 0: CONNECTED")
    echo "measure: rank 1: own link down -> rail 0 error $(ms_between "$P" "${d:-$P}") ms; link up -> new queue pair connected $(ms_between "$R" "${u:-$R}") ms"
    grep -E "LOC_QP_OP_ERR|PORT_ERR|RETRY_EXC_ERR" "$OUT/err.b" | head -3
    [ -n "$d" ] || fail "rank 1 never saw its own rail 0 fail"
    exit 0
fi
check_exact
[ "$(jget failovers)" -ge 1 ] || fail "rail 0 was never mapped out"
[ "$(jget readmissions)" -ge 1 ] || fail "rail 0 was not re-admitted after the link came back"
rail_moves_at_end 0 || fail "rail 0 carried nothing after its re-admission"
summary
echo "ok: t3 own link down and up: failover and re-admission"
