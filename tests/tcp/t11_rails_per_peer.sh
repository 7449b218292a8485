#!/bin/bash
# (k) Rails per peer.  Two ranks started by hand with different numbers of
# rails (rank 0 two, rank 1 one): every message verified over the rail
# they share, and rank 0's second rail reported as not reaching rank 1
# (absent_rails 1), not as a failure (no failover, no re-admission, no
# connection error).  Then IPv6: a tcp:[::1] rail next to an IPv4 one,
# both carrying bytes.
. "$(dirname "$0")/lib.sh"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
BOOT=127.0.0.1:$port

BFO_RANK=1 BFO_SIZE=2 BFO_BOOTSTRAP=$BOOT BFO_RAILS=127.0.0.2 \
    timeout 60 "$BFO_TCP" stream --count 300 --timeout 40 > "$WORK/out1" 2> "$WORK/err1" &
r1=$!
CLEANUP+=("kill -9 $r1")
BFO_RANK=0 BFO_SIZE=2 BFO_BOOTSTRAP=$BOOT BFO_RAILS=127.0.0.2,127.0.0.3 \
    timeout 60 "$BFO_TCP" stream --json --count 300 --timeout 40 > "$WORK/out" 2> "$WORK/err" ||
    fail "rank 0: exit status $?"
wait "$r1" || { cp "$WORK/err1" "$WORK/err"; fail "rank 1: exit status $?"; }
check_exact
expect_messages 600
[ "$(jget absent_rails)" = 1 ] || fail "absent_rails $(jget absent_rails), expected 1 (rank 0's rail 1 to rank 1)"
[ "$(jget failovers)" = 0 ] && [ "$(jget readmissions)" = 0 ] && [ "$(jget conn_errors)" = 0 ] ||
    fail "a rail that does not reach was taken for a failure: failovers $(jget failovers)," \
         "readmissions $(jget readmissions), conn_errors $(jget conn_errors)"
[ "$(jrail 0)" -gt 0 ] && [ "$(jrail 1)" = 0 ] || fail "per_rail_bytes [$(jrail 0),$(jrail 1)]: expected [>0,0]"
summary
echo "ok: t11 ranks with 2 and 1 rails: 600 messages verified, the missing rail absent (not failed)"

ip -6 addr show dev lo 2>/dev/null | grep -q 'inet6 ::1/' || fail "no IPv6 loopback (::1) on lo"
RAILS='tcp:[::1],127.0.0.2'
run_bg 2 -- "$BFO_TCP" stream --json --count 300
wait_bg
[ "$rc" = 0 ] || fail "exit status $rc with rails $RAILS"
check_exact
expect_messages 600
both_rails_carried
summary
echo "ok: t11 an IPv6 rail (tcp:[::1]) next to an IPv4 rail, both carrying bytes"
