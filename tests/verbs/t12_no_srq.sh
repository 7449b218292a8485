#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The fallback without a shared receive queue (BFO_VERBS_SRQ=0, as on a
# device whose max_srq is 0): the clean stream of t1 over per-queue-pair
# receives, every byte verified, every rail carries data.
. "$(dirname "$0")/lib.sh"
export BFO_VERBS_SRQ=0
stream --count 40 --timeout 100
wait_stream 110
[ "$rc" = 0 ] || fail "bfo stream exit status $rc"
[ "$ROLE" = a ] || exit 0
check_exact
[ "$(jget messages)" = 80 ] || fail "expected 80 messages, got $(jget messages)"
[ "$(jget failovers)" = 0 ] || fail "a failover without a fault"
for r in 0 1 2; do [ "$(jrail $r)" -gt 0 ] || fail "rail $r carried nothing"; done
grep -q 'receives per queue pair (verbs.srq off)' "$OUT/err.a" || fail "the shared receive queue was not off"
grep -q 'shared receive queue per device' "$OUT/err.a" && fail "a shared receive queue with BFO_VERBS_SRQ=0"
echo "measure: $(grep -o '[0-9]* bytes pinned, [0-9]* per (peer, rail)' "$OUT/err.a" | head -1)"
summary
echo "ok: t12 clean stream without the shared receive queue"
