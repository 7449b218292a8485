#!/bin/bash
# (d) 3 processes; rank 2 killed with SIGKILL mid-stream.  The survivors'
# operations to it complete with BFO_ERR_PEER_UNREACHABLE within a bound
# (unreachable_grace 2 s + detection), nothing hangs, and ranks 0 and 1 keep
# talking to each other: all their messages verified.
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
[ "$(jget unreachable)" -ge 1 ] || fail "no operation failed with PEER_UNREACHABLE"
u=$(jget unreachable_ms_max)
ms_lt "$u" 4000 || fail "unreachable only after $u ms"
echo "   unreachable_ms_max $u (grace 2000), operations failed unreachable: $(jget unreachable)"
summary
echo "ok: t4 a rank killed"
