#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# (d) 3 processes; rank 2 killed with SIGKILL mid-stream.  The launcher
# (bfo run --keep-going) sees it exit and tells the survivors (one line on
# each one's BFO_LAUNCHER_FD pipe); they declare it dead (bfo_peer_failed):
# their operations to it complete with BFO_ERR_PROC_FAILED at once, well
# before unreachable_grace (2 s) would have given it up, nothing hangs, and
# ranks 0 and 1 keep talking to each other: all their messages verified.
. "$(dirname "$0")/lib.sh"
run_bg 3 --timeout 50 --keep-going -- "$BFO_TCP" stream --json --duration 3 --tolerate-death --timeout 30
sleep "1.$((RANDOM % 5))"
kill -9 "$(rank_pid 2)"
killed_at=$(date +%s%N)
wait_bg
[ $rc != 0 ] || fail "the launcher should report the killed rank"
grep -q "rank 2 pid .*: signal 9" "$WORK/err" || fail "rank 2 not reported killed"
grep -q "rank 0 pid .*: exit 0" "$WORK/err" || fail "rank 0 failed"
grep -q "rank 1 pid .*: exit 0" "$WORK/err" || fail "rank 1 failed"
check_exact
[ "$(jget dead_peers)" = 1 ] || fail "dead_peers $(jget dead_peers)"
[ "$(jget unreachable)" -ge 1 ] || fail "no operation failed"
[ "$(jget proc_failed)" -ge 1 ] || fail "no operation failed with PROC_FAILED: the launcher's report was not taken"
grep -q "rank 2 failed; 2 rank(s) told" "$WORK/err" || fail "the launcher did not tell both survivors"
[ "$(grep -c "the launcher says rank 2 failed" "$WORK/err")" = 2 ] || fail "not both survivors took the report"
u=$(jget unreachable_ms_max)
ms_lt "$u" 1000 || fail "failed only after $u ms (the launcher reports within milliseconds)"
echo "   unreachable_ms_max $u (grace 2000), operations failed: $(jget unreachable), PROC_FAILED: $(jget proc_failed)"
summary
echo "ok: t4 a rank killed"
