#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# (issue 36) Port ranges for a firewall (bfo_tcp.h, PORTS), by `bfo run`:
#   (a) 8 ranks on 2 rails with `--set tcp.port_min=B --set tcp.port_max=B+7`:
#       every rank's listener and beacon socket on each rail binds inside
#       the range (as each says at log level 2, from getsockname), no two
#       ranks on one port of a rail, and the stream passes, every message
#       verified; and again at once on the same range, the first job's
#       connections in TIME_WAIT on its ports;
#   (b) 9 ranks on the same 8 ports (BFO_TCP_PORT_MIN/MAX): one rank finds
#       none and fails open, naming the range and its size.
. "$(dirname "$0")/lib.sh"
# a block of 8 ports below the ephemeral range that nothing uses now
for _ in $(seq 50); do
    B=$(( 20000 + (RANDOM % 1000) * 10 )); E=$((B + 7))
    [ -z "$(ss -Htuan "( sport >= :$B and sport <= :$E )" 2>/dev/null)" ] && break
done

# (a)
BFO_TCP_LOG=2 timeout 60 "$BFO_TCP" run -n 8 --rails "$RAILS" --timeout 50 --set tcp.port_min=$B \
    --set tcp.port_max=$E -- "$BFO_TCP" stream --json --count 200 --size 64 > "$WORK/out" 2> "$WORK/err" ||
    fail "(a) exit status $?"
check_exact
grep '^bfo-tcp\[[0-9]*\]: rail [01]: listening on ' "$WORK/err" |
    sed 's/^bfo-tcp\[\([0-9]*\)\]: rail \([01]\): listening on 127.0.0.[12]:\([0-9]*\), beacons on port \([0-9]*\)$/\1 \2 \3 \4/' \
    > "$WORK/ports"
[ "$(wc -l < "$WORK/ports")" = 16 ] || fail "(a) $(wc -l < "$WORK/ports") of 16 listeners said where they bound"
awk -v b=$B -v e=$E 'NF != 4 || $3 < b || $3 > e || $4 < b || $4 > e { print "(a) outside " b "-" e ": " $0; bad = 1 }
    { if (seen[$2 " " $3]++) { print "(a) port " $3 " twice on rail " $2; bad = 1 } } END { exit bad }' "$WORK/ports" ||
    fail "(a) a port outside the range or shared"
echo "   (a) 8 ranks x 2 rails bound inside $B-$E (listeners and beacons); messages $(jget messages), verified $(jget verified)"

# (a2) at once again on the same ports, while the first job's connections
# wait in TIME_WAIT on them (the listeners' SO_REUSEADDR; without it this
# job found no free port)
tw=$(ss -Htan state time-wait "( sport >= :$B and sport <= :$E )" | wc -l)
timeout 60 "$BFO_TCP" run -n 8 --rails "$RAILS" --timeout 50 --set tcp.port_min=$B --set tcp.port_max=$E -- \
    "$BFO_TCP" stream --json --count 200 --size 64 > "$WORK/out" 2> "$WORK/err" ||
    fail "(a2) exit status $? on the same range again ($tw connections in TIME_WAIT on it)"
check_exact
echo "   (a2) the same range again at once, $tw connections of the first job in TIME_WAIT on it: passed"

# (b)
BFO_TCP_PORT_MIN=$B BFO_TCP_PORT_MAX=$E timeout 60 "$BFO_TCP" run -n 9 --rails "$RAILS" --timeout 50 -- \
    "$BFO_TCP" stream --json --count 200 --size 64 > "$WORK/out" 2> "$WORK/err" && fail "(b) 9 ranks on 8 ports passed"
grep -q "^bfo-tcp\[[0-9]*\]: rail [01] (127.0.0.[12]): no free port for its listener in $B-$E (tcp.port_min/port_max: 8 ports); every rank on this host takes one per rail on this address" "$WORK/err" ||
    fail "(b) no rank said the range was exhausted"
echo "   (b) 9 ranks on 8 ports: $(grep -m1 'no free port' "$WORK/err")"
echo "ok: t23 listeners and beacons bind inside a port range; an exhausted range fails open, naming it"
