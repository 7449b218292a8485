#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Gray failures (issue 18): two network namespaces as two hosts, two veth
# rails, faults from the kernel's own tools, every byte of a verified
# stream checked each time.
#   (a) a rail slowed to 20 Mbit/s by tc tbf mid-stream is demoted, not
#       failed (no failover, no re-admission), and promoted back within
#       seconds once the shaping is removed;
#   (b) 3% random loss on a rail (nftables numgen): no rail failed;
#   (c) the peer stopped for 1.2 s (SIGSTOP): no rail failed;
#   (d) a rail blackholed (nftables drops all): failed over within 300 ms;
#   (e) a rail's interface down, then up: failed over, re-admitted.
. "$(dirname "$0")/lib.sh"

# the monotonic clock (seconds), as --trace-rails prints it
mono() { python3 -c 'import time; print("%.6f" % time.monotonic())'; }
summary() {
    echo "   messages $(jget messages), verified $(jget verified), failovers $(jget failovers)," \
         "readmissions $(jget readmissions), demotions $(jget demotions), promotions $(jget promotions)," \
         "stall_ms_max $(jget stall_ms_max), per_rail_bytes [$(jrail 0),$(jrail 1)], elapsed_ms $(jget elapsed_ms)"
}
no_failover() {
    [ "$(jget failovers)" = 0 ] || fail "$1: $(jget failovers) failover(s)"
    [ "$(jget readmissions)" = 0 ] || fail "$1: $(jget readmissions) re-admission(s)"
    [ "$(jget conn_errors)" = 0 ] || fail "$1: $(jget conn_errors) connection(s) lost"
}

# (a) slow, then fast again
start --size 1M --duration 11 --timeline 500 --trace-rails
sleep 2; shape 1 20mbit; sleep 3.5; t_unshape=$(mono); unshape 1
finish; check_exact; no_failover "slow rail"
[ "$(jget demotions)" -ge 1 ] || fail "slow rail: never demoted"
[ "$(jget promotions)" -ge 1 ] || fail "slow rail: never promoted back"
grep -q 'DEMOTED' "$WORK/err0" || fail "slow rail: the timeline never showed DEMOTED"
# promoted back: rank 0's first DEMOTED -> UP of rail 1 after the unshaping
t_up=$(sed -n 's/.*(\([0-9.]*\)) peer 1 rail 1: DEMOTED --PROMOTION_DUE--> UP.*/\1/p' "$WORK/err0" |
       awk -v t="$t_unshape" '$1 >= t { print; exit }')
[ -n "$t_up" ] || fail "slow rail: rail 1 not promoted back after the shaping was removed"
up_ms=$(awk -v a="$t_unshape" -v b="$t_up" 'BEGIN { printf "%.0f", (b - a) * 1000 }')
[ "$up_ms" -le 5000 ] || fail "slow rail: promoted back ${up_ms} ms after the shaping was removed (bound 5 s)"
summary
grep '^ *[0-9.]* s |' "$WORK/err0" | sed 's/^/   /'
echo "ok: n1 a rail slowed to 20 Mbit/s is demoted, not failed, and promoted back ${up_ms} ms after the shaping is removed"

# (b) 3% random loss
start --size 1M --duration 8
sleep 1; loss 1 3; sleep 6; nft_clear 1
finish; check_exact; no_failover "3% loss"
summary
echo "ok: n1 3% random loss on a rail fails no rail"

# (c) the peer stopped for 1.2 s
start --size 1M --duration 6
sleep 2; kill -STOP "$R1"; sleep 1.2; kill -CONT "$R1"
finish; check_exact; no_failover "SIGSTOP 1.2 s"
summary
echo "ok: n1 a peer stopped for 1.2 s fails no rail"

# (d) blackhole: failed over within 300 ms
start --size 1M --duration 5 --trace-rails
sleep 2; t_fault=$(mono); nft_drop 1 ""; sleep 1.5; nft_clear 1 # (the time taken before the rules: an upper bound)
finish; check_exact
t_fail=$(sed -n 's/.*(\([0-9.]*\)) peer 1 rail 1: [A-Z]* --[A-Z_]*--> FAILED.*/\1/p' "$WORK/err0" | head -1)
[ -n "$t_fail" ] || fail "blackhole: rank 0 never failed rail 1"
ms=$(awk -v a="$t_fault" -v b="$t_fail" 'BEGIN { printf "%.0f", (b - a) * 1000 }')
[ "$ms" -le 300 ] || fail "blackhole: rail 1 failed ${ms} ms after the drop (bound 300)"
[ "$(jget failovers)" -ge 1 ] || fail "blackhole: no failover"
summary
echo "ok: n1 a blackholed rail is failed over ${ms} ms after the drop (bound 300 ms)"

# (e) interface down and up
start --size 1M --duration 6
sleep 1.5; inA ip link set "$(dev a 1)" down; sleep 1.5; inA ip link set "$(dev a 1)" up
finish; check_exact
[ "$(jget failovers)" -ge 1 ] && [ "$(jget readmissions)" -ge 1 ] ||
    fail "link down/up: failovers $(jget failovers), readmissions $(jget readmissions)"
summary
echo "ok: n1 a rail's link down and up: failed over and re-admitted"
