#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# (b) 2 processes, 2 rails; rail 127.0.0.2's connections reset from outside
# (ss -K dst/src) at random moments, several times: every message verified,
# none lost or duplicated, the rail comes back each time.
. "$(dirname "$0")/lib.sh"
command -v ss >/dev/null || { echo "skip: no ss"; exit 0; }
run_bg 2 --timeout 50 -- "$BFO_TCP" stream --json --duration 4 --timeout 30
kills=0
sleep 0.3
for i in 1 2 3 4 5; do
    sleep "0.$((RANDOM % 4 + 2))"
    kill -0 "$LAUNCHER" 2>/dev/null || break
    ss -K dst 127.0.0.2 >/dev/null 2>&1; ss -K src 127.0.0.2 >/dev/null 2>&1
    kills=$((kills + 1))
done
wait_bg
[ $rc = 0 ] || fail "exit status $rc"
check_exact
[ "$(jget failovers)" -ge 2 ] || fail "expected failovers after $kills resets, got $(jget failovers)"
[ "$(jget readmissions)" -ge 2 ] || fail "the rail was not re-admitted ($(jget readmissions))"
grep -q "Connection reset\|connection abort\|closed by the peer" "$WORK/err" || fail "no reset seen"
echo "   $kills resets from outside"
# large fragments are read straight into their receives (RECEIVING IN
# PLACE, bfo_tcp.c): the resets cut some of them halfway
[ "$(jget placed_frames)" -gt 0 ] || fail "no fragment was read in place"
summary
echo "ok: t2 connections reset from outside"
