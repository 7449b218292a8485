#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# (a) two Soft-RoCE rails and one TCP rail, no fault: every byte verified,
# every rail carries data.
. "$(dirname "$0")/lib.sh"
stream --count 40 --timeout 100
wait_stream 110
[ "$rc" = 0 ] || fail "bfo stream exit status $rc"
[ "$ROLE" = a ] || exit 0
check_exact
[ "$(jget messages)" = 80 ] || fail "expected 80 messages, got $(jget messages)"
[ "$(jget failovers)" = 0 ] || fail "a failover without a fault"
for r in 0 1 2; do [ "$(jrail $r)" -gt 0 ] || fail "rail $r carried nothing"; done
summary
echo "ok: t1 clean stream over verbs:rxe0, verbs:rxe1 and tcp"
