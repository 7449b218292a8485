#!/bin/bash
# (issue 16) 100,000 receives outstanding, over real TCP rails: each rank
# posts a receive for every one of the other's 100,000 eager messages
# before a single one is sent (bfo stream --recv-first: all posted, then a
# READY to the peer), then both stream them at once, 100,000 frames
# written in a burst on the two connections.  Every message verified, none
# lost or twice, no failover, no peer given up.  The liveness probes
# (heartbeats every 100 ms, 40 ms probe timeout) must not wait behind the
# burst: they once did, in the receiver's out-of-order list (12 s in one
# progress call), behind frames stamped with a long read's start, and
# behind the data in the sender's queue (docs/engine-design.md, "The
# failure detector").
. "$(dirname "$0")/lib.sh"
timeout 120 "$BFO_TCP" run -n 2 --rails "$RAILS" --timeout 110 -- \
    "$BFO_TCP" stream --json --count 100000 --size 8 --recv-first \
    > "$WORK/out" 2> "$WORK/err" || fail "exit status $?"
check_exact
expect_messages 200000
summary
[ "$(jget failovers)" = 0 ] || fail "$(jget failovers) failovers with 100,000 receives posted first"
[ "$(jget unreachable)" = 0 ] || fail "$(jget unreachable) operations failed unreachable"
[ "$(jget conn_errors)" = 0 ] || fail "$(jget conn_errors) connection errors"
echo "ok: t17 100,000 receives posted before their sends, every message verified, no failover"
