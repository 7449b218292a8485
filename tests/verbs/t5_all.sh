#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# (e) every cable pulled at guest a (both verbs rails and the TCP rail):
# pending operations complete with BFO_ERR_PEER_UNREACHABLE on both sides,
# nothing hangs.
. "$(dirname "$0")/lib.sh"
stream --duration 30 --tolerate-death --timeout 60
if [ "$ROLE" = b ]; then
    moving 2
    monitor a "set_link n0 off" "set_link n1 off" "set_link n2 off"
fi
S=$(mono)
wait_stream 70
E=$(mono)
[ "$rc" = 0 ] || fail "bfo stream exit status $rc"
grep -q "peer $((1 - RANK)) unreachable" "$OUT/err.$ROLE" || fail "the peer was never declared unreachable"
grep "unreachable (" "$OUT/err.$ROLE" | head -1
if [ "$ROLE" = a ]; then
    [ "$(jget dead_peers)" = 1 ] || fail "dead_peers $(jget dead_peers), expected 1"
    [ "$(jget unreachable)" -ge 1 ] || fail "no request failed with the unreachable error"
    [ "$(jget corrupt)" = 0 ] && [ "$(jget duplicates)" = 0 ] || fail "corrupt or duplicate messages"
    echo "measure: last rail down -> requests failed with PEER_UNREACHABLE $(jget unreachable_ms_max) ms"
    summary
fi
echo "ok: t5 every rail pulled: pending operations fail with BFO_ERR_PEER_UNREACHABLE, no hang"
