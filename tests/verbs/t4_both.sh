#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# (d) both verbs rails' cables pulled at once, mid-stream (host side): the
# stream finishes over the TCP rail, every byte verified (RDMA messages
# fall back to copy).
. "$(dirname "$0")/lib.sh"
stream --duration 15 --timeline 250 --timeout 100
if [ "$ROLE" = b ]; then
    moving 2
    P=$(mono); monitor a "set_link n0 off" "set_link n1 off"
    echo "$P" > "$OUT/pull.t"
fi
wait_stream 110
[ "$rc" = 0 ] || fail "bfo stream exit status $rc"
[ "$ROLE" = a ] || exit 0
check_exact
[ "$(jget failovers)" -ge 2 ] || fail "both verbs rails should have been mapped out"
[ "$(jget unreachable)" = 0 ] || fail "the peer was declared unreachable with the TCP rail up"
# after the pull, only the TCP rail (2) moves data
awk -F'|' '/failovers [2-9]/ { seen = 1 } seen && $4 ~ /UP/ { split($4, w, " "); if (w[3] + 0 > 0) ok = 1 } END { exit !ok }' \
    "$OUT/err.a" || fail "the TCP rail carried nothing after the verbs rails were lost"
echo "measure: both verbs cables pulled -> stream moving over TCP: longest gap between completions $(jget stall_ms_max) ms (mapped out -> next completion $(jget recovery_ms_max) ms; out of UP -> its operations in flight failed $(jget failover_ms_max) ms)"
summary
echo "ok: t4 both verbs rails pulled: the stream finishes over TCP"
