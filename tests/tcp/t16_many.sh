#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# (issue 16) No fixed caps that legal programs hit, over real TCP rails:
# each rank sends the other 100,000 eager messages (1,000 at a time) that all complete
# before a single receive is posted (they wait, unexpected, in the
# receiver's pools, which grow).  Every message verified, none lost or
# twice, no failover.  (100,000 receives posted before their sends: t17.)
. "$(dirname "$0")/lib.sh"
timeout 120 "$BFO_TCP" run -n 2 --rails "$RAILS" --timeout 110 -- \
    "$BFO_TCP" stream --json --count 100000 --size 8 --window 1000 --recv-delay-ms 5000 \
    > "$WORK/out" 2> "$WORK/err" || fail "exit status $?"
check_exact
expect_messages 200000
summary
[ "$(jget failovers)" = 0 ] || fail "$(jget failovers) failovers with 100,000 messages unexpected"
echo "ok: t16 100,000 eager sends complete before their receives, every message verified, no failover"
