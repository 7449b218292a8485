#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# (a) two Soft-RoCE rails and one TCP rail, no fault: every byte verified,
# every rail carries data.  Receives from the shared receive queue (the
# default; rxe has one): the log says so, and what is pinned.
. "$(dirname "$0")/lib.sh"
stream --count 40 --timeout 100
wait_stream 110
[ "$rc" = 0 ] || fail "bfo stream exit status $rc"
[ "$ROLE" = a ] || exit 0
check_exact
[ "$(jget messages)" = 80 ] || fail "expected 80 messages, got $(jget messages)"
[ "$(jget failovers)" = 0 ] || fail "a failover without a fault"
for r in 0 1 2; do [ "$(jrail $r)" -gt 0 ] || fail "rail $r carried nothing"; done
grep -q 'receives from a shared receive queue per device' "$OUT/err.a" || fail "no shared receive queue"
echo "measure: $(grep -o 'credit [0-9]* frames per peer; [0-9]* bytes pinned, none per peer' "$OUT/err.a" | head -1)"
echo "measure: LAST_WQE_REACHED waits given up: $(grep -c 'no LAST_WQE_REACHED' "$OUT/err.a")"
summary
echo "ok: t1 clean stream over verbs:rxe0, verbs:rxe1 and tcp"
