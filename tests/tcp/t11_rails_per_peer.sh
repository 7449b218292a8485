#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# (k) Rails per peer.  Two ranks started by hand with different numbers of
# rails (rank 0 two, rank 1 one): every message verified over the rail
# they share, and rank 0's second rail reported as not reaching rank 1
# (absent_rails 1), not as a failure (no failover, no re-admission, no
# connection error).  Then IPv6: a tcp:[::1] rail next to an IPv4 one,
# both carrying bytes.
. "$(dirname "$0")/lib.sh"
start_rank1 127.0.0.2
run_rank0 127.0.0.2,127.0.0.3
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
