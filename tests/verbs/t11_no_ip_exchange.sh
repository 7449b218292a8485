#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# (k) the queue pairs' exchange needs no IP path (issue 36): rails named
# `verbs:rxe0,verbs:rxe1` (no @ADDR), every TCP packet to the other
# guest's RDMA links refused by a policy-routing rule (`ip rule ... ipproto
# tcp prohibit`: the guests' kernel has no netfilter modules; the rule
# refuses TCP only, so RoCE v2's UDP still flows):
#   1. the TCP exchange (verbs.tcp_exchange=1, what every bfo did before
#      the UD exchange): the verbs rails never connect (their dials are
#      refused), the stream goes over the TCP rail alone;
#   2. the UD exchange (the default): both verbs rails connect and carry
#      the stream, every byte verified;
#   3. then no IPv4 address on the RDMA links at all (flushed: the GID
#      tables keep only the link-local IPv6 entries): the TCP exchange
#      refuses the rails at open (no IPv4 GID), the UD exchange connects
#      over the link-local RoCE v2 GIDs.
# What this proves, and what not: rxe is RoCE, whose GIDs are IP addresses
# and whose packets are UDP/IP; native InfiniBand has no IP at all.  So
# this shows the exchange itself uses no TCP/IP and no IPv4 GID (the same
# code addresses an IB port by its LID and GID), not that bfo runs on
# native IB, which no guest here has.
. "$(dirname "$0")/lib.sh"
# phase N: its output files kept apart (stream writes json.ROLE, err.ROLE)
keep() { cp "$OUT/json.$ROLE" "$OUT/json$1.$ROLE" 2>/dev/null; cp "$OUT/err.$ROLE" "$OUT/err$1.$ROLE"; }
for i in 0 1; do
    ip rule add to "10.0.$i.0/24" ipproto tcp prohibit pref 100 || fail "ip rule for link $i"
done
# the rule refuses TCP to the peer's link 0 at once (not "connection refused":
# nothing is sent), while TCP over link 2 (bootstrap, TCP rail) is open
e=$( (exec 3<> "/dev/tcp/$PEER0/7117") 2>&1)
case "$e" in *refused* | "") fail "TCP to $PEER0 not blocked: '${e:-connected}'" ;; esac
say "TCP to $PEER0 (link 0): ${e##*: }"

# 1. the TCP exchange: refused
export BFO_BOOTSTRAP=10.0.2.1:7117 BFO_VERBS_TCP_EXCHANGE=1
stream --count 10 --timeout 60
wait_stream 80
keep 1
[ "$rc" = 0 ] || fail "phase 1 (TCP exchange, TCP blocked): bfo stream exit status $rc"
if [ "$ROLE" = a ]; then
    STREAM_JSON=$OUT/json1.a
    check_exact
    [ "$(jrail 0)" = 0 ] && [ "$(jrail 1)" = 0 ] ||
        fail "phase 1: a verbs rail carried data with its TCP exchange blocked ($(jrail 0), $(jrail 1) bytes)"
    n=$(grep -c 'control channel: connect: ' "$OUT/err1.a")
    [ "$n" -gt 0 ] || fail "phase 1: no refused control-channel dial in rank 0's log"
    say "phase 1: TCP exchange: $n dials refused ($(grep -m1 -o 'control channel: connect: .*' "$OUT/err1.a")), verbs rails 0 bytes, TCP rail $(jrail 2) bytes"
fi

# 2. the UD exchange, the same block: both verbs rails up
unset BFO_VERBS_TCP_EXCHANGE
export BFO_BOOTSTRAP=10.0.2.1:7118 # not phase 1's: a late rank must not meet its job
stream --count 40 --timeout 100
wait_stream 110
keep 2
[ "$rc" = 0 ] || fail "phase 2 (UD exchange, TCP blocked): bfo stream exit status $rc"
grep -q 'control channel' "$OUT/err2.$ROLE" && fail "phase 2: a control channel in the log"
grep -q 'UD queue pair [0-9]' "$OUT/err2.$ROLE" || fail "phase 2: no UD queue pair in the log"
if [ "$ROLE" = a ]; then
    STREAM_JSON=$OUT/json2.a
    check_exact
    [ "$(jget failovers)" = 0 ] || fail "phase 2: a failover without a fault"
    for r in 0 1; do [ "$(jrail $r)" -gt 0 ] || fail "phase 2: verbs rail $r carried nothing"; done
    say "phase 2: UD exchange: rails [$(jrail 0),$(jrail 1),$(jrail 2)] bytes, $(grep -c 'again' "$OUT/err2.a") datagrams sent again"
fi

# 3. no IPv4 on the RDMA links: link-local GIDs only
for i in 0 1; do ip -4 addr flush dev "eth$i" || fail "flushing eth$i"; done
for _ in $(seq 100); do # the GID tables drop the IPv4 entries
    grep -q '0000:0000:0000:0000:0000:ffff' /sys/class/infiniband/rxe[01]/ports/1/gids/* 2> /dev/null || break
    pause 0.1
done
grep -q '0000:0000:0000:0000:0000:ffff' /sys/class/infiniband/rxe[01]/ports/1/gids/* 2> /dev/null &&
    fail "phase 3: an IPv4 GID left after the flush"
say "phase 3: rxe0's GIDs: $(cat /sys/class/infiniband/rxe0/ports/1/gids/* | grep -v '^0000:0000:0000:0000:0000:0000:0000:0000$' | tr '\n' ' ')"
export BFO_BOOTSTRAP=10.0.2.1:7119
BFO_VERBS_TCP_EXCHANGE=1 timeout 30 "$BFO" stream --count 1 --timeout 10 > /dev/null 2> "$OUT/err3t.$ROLE"
grep -q 'no IPv4 address in the GID table' "$OUT/err3t.$ROLE" || fail "phase 3: the TCP exchange did not refuse a port without IPv4"
export BFO_BOOTSTRAP=10.0.2.1:7120
stream --count 40 --timeout 100
wait_stream 110
keep 3
[ "$rc" = 0 ] || fail "phase 3 (UD exchange, no IPv4 on the RDMA links): bfo stream exit status $rc"
grep -m2 'gid fe80' "$OUT/err3.$ROLE" | sed 's/^/    /'
if [ "$ROLE" = a ]; then
    STREAM_JSON=$OUT/json3.a
    check_exact
    for r in 0 1; do [ "$(jrail $r)" -gt 0 ] || fail "phase 3: verbs rail $r carried nothing"; done
    say "phase 3: UD exchange over link-local GIDs: rails [$(jrail 0),$(jrail 1),$(jrail 2)] bytes"
    echo "ok: t11 no IP path for the exchange: TCP exchange refused, UD exchange up (TCP blocked; then no IPv4 on the links)"
fi
