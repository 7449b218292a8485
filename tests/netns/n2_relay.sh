#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# (n2) Relay through a third rank (BFO_RELAY=1; docs/engine-design.md,
# "Relay"), between three network namespaces, as three hosts: each on two
# bridges (two rails) and a third one for the wire-up (the bootstrap, as an
# MPI runtime's own network); the bridges live in a fourth namespace, the
# switch.  All made by the test itself, removed when it ends.  Needs root,
# ip and nft, and BFO_NETNS (the bfo binary).
#
# Every ordered pair of ranks streams, every byte verified.  Mid-stream,
# nftables in A's and B's namespaces drops every packet between A and B,
# on both rails, both ways; C still reaches both.  A-B traffic must go on
# through C: no message lost or errored (no PEER_UNREACHABLE), frames
# relayed and passed on; once the rules are removed, the direct rails come
# back (re-admitted, both UP at the end) and carry A-B traffic again.
. "$(dirname "${BASH_SOURCE[0]}")/lib3.sh"

# start ARGS...: the three ranks, bfo stream with relay on (rank 0 writes
# JSON to $WORK/out0)
start() {
    PIDS=()
    for i in 2 1 0; do
        local json=; [ "$i" = 0 ] && json=--json
        ip netns exec "${TAG}n$i" env BFO_RANK=$i BFO_SIZE=3 BFO_BOOTSTRAP=$BOOT BFO_RAILS="$(rails_of $i)" \
            BFO_RELAY=1 "$BFO_NETNS" stream $json "$@" > "$WORK/out$i" 2> "$WORK/err$i" &
        PIDS+=($!)
    done
}
finish() {
    local k=0 rc
    for p in "${PIDS[@]}"; do
        timeout 120 tail --pid="$p" -f /dev/null
        wait "$p"; rc=$?
        [ "$rc" = 0 ] || fail "a rank (pid $p) exited $rc"
        k=$((k + 1))
    done
    PIDS=()
}
STREAM_JSON=$WORK/out0
. "$(dirname "${BASH_SOURCE[0]}")/../stream_json.sh"

# Every ordered pair streams 256 KiB messages for 9 s; 2.5 s in, A (rank
# 0) and B (rank 1) are cut apart for 3 s.
start --size 256K --duration 9 --trace-rails
sleep 2.5
t_cut=$(mono); cut 0 1
sleep 3
t_uncut=$(mono); uncut 0 1
finish
check_exact
[ "$(jget errored)" = 0 ] || fail "$(jget errored) operations ended with an error (PEER_UNREACHABLE): the relay should carry them"
[ "$(jget relayed_frames)" -gt 0 ] || fail "no frame went through the third rank"
[ "$(jget relay_passed)" -gt 0 ] || fail "the third rank passed nothing on"
[ "$(jget relay_received)" -gt 0 ] || fail "nothing came through the third rank"
[ "$(jget routes_found)" -ge 2 ] || fail "routes found: $(jget routes_found) (A to B and B to A: 2 at least)"
[ "$(jget failovers)" -ge 2 ] || fail "the cut rails were never mapped out"
[ "$(jget readmissions)" -ge 2 ] || fail "the direct rails never came back after the cut"
# the direct rails carry A-B traffic again: a rail of rank 0 to rank 1
# re-admitted after the rules went (its probe answered, or its
# connection proven at the handshake: CONNECTED_PROVEN, spec/rail.rl),
# and the stream went on past it
t_back=$(sed -n -E 's/.*\(([0-9.]*)\) peer 1 rail [01]: (PROBING --PROBEACK_RCVD|[A-Z]+ --CONNECTED_PROVEN)--> UP.*/\1/p' "$WORK/err0" |
         awk -v t="$t_uncut" '$1 >= t { print; exit }')
[ -n "$t_back" ] || fail "no rail of rank 0 to rank 1 was re-admitted after the cut was removed"
back_ms=$(awk -v a="$t_uncut" -v b="$t_back" 'BEGIN { printf "%.0f", (b - a) * 1000 }')
# ... and stayed up to the end (the stream's BYE)
sed -n 's/.*(\([0-9.]*\)) peer 1 rail [01]: UP --\([A-Z_]*\)--> \([A-Z]*\).*/\1 \2 \3/p' "$WORK/err0" |
    awk -v t="$t_back" '$1 > t && $3 != "LEFT" && $3 != "DEMOTED" { bad = 1 } END { exit bad }' ||
    fail "a direct rail of rank 0 to rank 1 failed again after it came back"
echo "   messages $(jget messages), verified $(jget verified), errored $(jget errored), lost $(jget lost);" \
     "relayed frames $(jget relayed_frames) ($(jget relayed_bytes) bytes), passed on $(jget relay_passed)," \
     "received $(jget relay_received), failed $(jget relay_failed), refused $(jget relay_refused); routes found $(jget routes_found), lost $(jget routes_lost);" \
     "failovers $(jget failovers), readmissions $(jget readmissions); stall_ms_max $(jget stall_ms_max);" \
     "direct again ${back_ms} ms after the rules went"
echo "ok: n2 A and B cut apart on both rails mid-stream: their traffic went through C, every byte verified, none lost or errored, direct again once the cut was removed"
