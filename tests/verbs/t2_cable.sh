#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# (b) the cable of verbs rail 1 pulled mid-stream at guest a (QEMU
# set_link, host side), put back 4 s later: the rail is mapped out, the
# stream goes on over the others with every byte verified, and the rail
# is re-admitted (a new queue pair, probed) and carries traffic again.
. "$(dirname "$0")/lib.sh"
stream --duration 22 --timeline 250 --timeout 100
if [ "$ROLE" = b ]; then
    moving 2
    P=$(mono); monitor a "set_link n1 off"
    echo "$P" > "$OUT/pull.t"
    pause 4
    R=$(mono); monitor a "set_link n1 on"
    echo "$R" > "$OUT/restore.t"
fi
wait_stream 110
[ "$rc" = 0 ] || fail "bfo stream exit status $rc"
if [ "$ROLE" = b ]; then
    P=$(cat "$OUT/pull.t") R=$(cat "$OUT/restore.t")
    d=$(first_log_after "$P" "rail 1: (RAIL_ERROR|queue pair closed)")
    u=$(first_log_after "$R" "rail 1: CONNECTED")
    echo "measure: rank 1: cable pull -> rail 1 error reported $(ms_between "$P" "${d:-$P}") ms; cable back -> new queue pair connected $(ms_between "$R" "${u:-$R}") ms"
    [ -n "$d" ] || fail "rank 1 never saw rail 1 fail"
    exit 0
fi
check_exact
[ "$(jget failovers)" -ge 1 ] || fail "rail 1 was never mapped out"
[ "$(jget readmissions)" -ge 1 ] || fail "rail 1 was not re-admitted after the cable came back"
rail_moves_at_end 1 || fail "rail 1 carried nothing after its re-admission"
# pull.t is guest b's clock: CLOCK_MONOTONIC counts from each guest's own
# boot, so it says nothing about times in guest a's log
d=$(first_log_after 0 "rail 1: (RAIL_ERROR|queue pair closed)")
[ -n "$d" ] || fail "rank 0 never saw rail 1 fail"
echo "measure: rank 0: rail 1 error reported ($(grep -m1 -oE 'rail 1: queue pair closed: [A-Z_]+' "$OUT/err.a" | sed 's/.*: //')); longest gap between completions $(jget stall_ms_max) ms; mapped out -> next completion $(jget recovery_ms_max) ms; out of UP -> its operations in flight failed $(jget failover_ms_max) ms"
summary
echo "ok: t2 cable of verbs rail 1 pulled and put back: failover, re-admission, traffic again"
