#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# (s) A lossy rail is slow, not dead; a blackholed one is dead.  3% of the
# packets to rail 127.0.0.3 dropped at random (nftables, in a network
# namespace of its own): every lost segment stalls that rail's TCP
# connection for a retransmission timeout (200 ms or more), longer than the
# engine's probe timeout (40 ms), so the probe and the transport's acks,
# which ride the same connection, used to arrive too late and the rail was
# mapped out again and again though it worked (issue 18).  The TCP
# transport's beacons (bfo_tcp.h, BEACONS: a datagram every 10 ms outside
# the connection) keep the peer heard: a 6 s verified stream of 1 MiB
# messages over 127.0.0.2,127.0.0.3 maps no rail out.  The same without
# beacons (BFO_TCP_BEACON_MS=off) is run for comparison, not checked.  Then
# every packet to 127.0.0.3 dropped from 2 s on, for 1.5 s: the beacons stop
# with everything else, and the rail must still be mapped out, within 300 ms
# of the drop (said; checked against 1 s: a loaded machine).  Needs root
# (unshare -n, nft); skipped without.
if [ -z "${BFO_T19_NETNS:-}" ] && command -v unshare >/dev/null && command -v ip >/dev/null &&
    command -v nft >/dev/null && unshare -n true 2>/dev/null; then
    exec unshare -n env BFO_T19_NETNS=1 bash -c 'ip link set lo up && exec bash "$0"' "$0"
fi
. "$(dirname "$0")/lib.sh"
RAILS=127.0.0.2,127.0.0.3
if [ -z "${BFO_T19_NETNS:-}" ] || ! nft add table inet t 2>/dev/null; then
    echo "   (no network namespace or nft here: skipped)"
    echo "ok: t19 lossy rail (skipped)"
    exit 0
fi
nft add chain inet t in '{ type filter hook input priority 0; }' || fail "nft chain"
mono() { python3 -c 'import time; print("%.6f" % time.monotonic())'; }

# lossy NAME [env...]: the 6 s stream with 3% of rail 1's packets lost
lossy() {
    local name=$1
    shift
    nft flush chain inet t in && nft add rule inet t in ip daddr 127.0.0.3 numgen random mod 100 \< 3 drop ||
        fail "nft rule"
    rm -f "$WORK/pids" "$WORK/out"
    env "$@" "$BFO_TCP" run -n 2 --rails "$RAILS" --pidfile "$WORK/pids" --timeout 50 -- \
        "$BFO_TCP" stream --json --size 1M --duration 6 --timeout 40 > "$WORK/out" 2> "$WORK/err" &
    LAUNCHER=$!
    wait_bg
    nft flush chain inet t in
    [ "$rc" = 0 ] || fail "$name: exit status $rc"
    check_exact
}

lossy "beacons"
[ "$(jget beacons_rcvd)" -gt 0 ] || fail "no beacon received"
[ "$(jget failovers)" = 0 ] || fail "3% loss: $(jget failovers) rail(s) mapped out though the beacons came"
[ "$(jrail 1)" -gt 0 ] || fail "the lossy rail carried nothing"
summary
echo "   3% loss on rail 1: no failover; beacons received $(jget beacons_rcvd), dropped $(jget beacons_dropped);" \
    "connections lost $(jget conn_errors); the longest pause in completions $(jget stall_ms_max) ms" \
    "(the lossy rail's retransmissions)"
echo "ok: t19 3% random loss on a rail: never failed (beacons)"

lossy "no beacons" BFO_TCP_BEACON_MS=off
[ "$(jget beacons_rcvd)" = 0 ] || fail "beacons received with BFO_TCP_BEACON_MS=off"
echo "   the same without beacons (BFO_TCP_BEACON_MS=off, not checked): failovers $(jget failovers)," \
    "connections lost $(jget conn_errors), messages $(jget messages) all verified"
echo "ok: t19 3% random loss without beacons (for comparison)"

# The blackhole: every packet to 127.0.0.3 from 2 s on, for 1.5 s.
rm -f "$WORK/pids" "$WORK/out"
"$BFO_TCP" run -n 2 --rails "$RAILS" --pidfile "$WORK/pids" --timeout 50 -- \
    "$BFO_TCP" stream --json --size 1M --duration 4.5 --trace-rails --timeout 40 > "$WORK/out" 2> "$WORK/err" &
LAUNCHER=$!
sleep 2
t_drop=$(mono)
nft add rule inet t in ip daddr 127.0.0.3 drop || fail "nft rule"
sleep 1.5
nft flush chain inet t in
wait_bg
[ "$rc" = 0 ] || fail "blackhole: exit status $rc"
check_exact
[ "$(jget failovers)" -ge 1 ] || fail "blackhole: rail 1 was never mapped out"
# the first time a rank's rail 1 left UP after the drop (--trace-rails:
# CLOCK_MONOTONIC seconds in parentheses)
detect=$(awk -v t="$t_drop" '/rail 1: UP --/ { s = $0; sub(/.*\(/, "", s); sub(/\).*/, "", s);
    if (s + 0 >= t && (d == "" || s - t < d)) d = s - t } END { if (d != "") printf "%.1f", d * 1000 }' "$WORK/err")
[ -n "$detect" ] || fail "blackhole: no map-out of rail 1 traced after the drop"
summary
echo "   blackhole on rail 1: mapped out $detect ms after the drop (target 300 ms: heartbeat + probe timeout);" \
    "traffic moved again within $(jget stall_ms_max) ms, recovery_ms_max $(jget recovery_ms_max)," \
    "failover_ms_max $(jget failover_ms_max); re-admitted $(jget readmissions)"
ms_lt "$detect" 1000 || fail "blackhole: mapped out only $detect ms after the drop"
echo "ok: t19 blackholed rail still failed over (beacons stop with it)"
