#!/bin/bash
# Back-pressure: the receivers post nothing for a while, the engine's
# unexpected messages reach their budget (BFO_UNEXPECTED_BUDGET: 16 KiB
# here, 1 MiB in (b); the pools grow, the budget bounds the payloads),
# bfo_engine_frame says BFO_ERR_AGAIN, the
# backend keeps the frame and stops reading; once receives are posted
# everything arrives, exactly once.  A stall is not a failure, however long:
#  (a) 512 eager messages of 64 B in flight per sender, receives after 300 ms;
#  (b) 1024 messages of 4 KiB in flight per sender (the socket buffers fill
#      up and the kernel advertises a zero window), receives after 2.5 s:
#      longer than TCP_USER_TIMEOUT (1 s) and 18 times the heartbeat plus
#      probe timeout (100 + 40 ms, the defaults).  Both sides are stalled:
#      the user timeout is off while they are, and the stalled side's
#      keepalives keep the rail up; nothing fails over.
. "$(dirname "$0")/lib.sh"
BFO_UNEXPECTED_BUDGET=16K timeout 60 "$BFO_TCP" run -n 2 --rails "$RAILS" --timeout 50 -- \
    "$BFO_TCP" stream --json --size 64 --window 512 --count 4000 --recv-delay-ms 300 --timeout 40 \
    > "$WORK/out" 2> "$WORK/err" || fail "(a) exit status $?"
check_exact
[ "$(jget messages)" = 8000 ] || fail "(a) expected 8000 messages"
[ "$(jget backpressure)" -ge 1 ] || fail "(a) the engine never pushed back (backpressure $(jget backpressure))"
[ "$(jget failovers)" = 0 ] || fail "(a) back-pressure must not look like a rail failure"
echo "   (a) 300 ms: frames offered again after BFO_ERR_AGAIN: $(jget backpressure), keepalives $(jget keepalives)"
summary

BFO_UNEXPECTED_BUDGET=1M timeout 60 "$BFO_TCP" run -n 2 --rails "$RAILS" --timeout 50 -- \
    "$BFO_TCP" stream --json --size 4K --window 1024 --count 6000 --recv-delay-ms 2500 --timeout 40 \
    --trace-rails > "$WORK/out" 2> "$WORK/err" || fail "(b) exit status $?"
check_exact
[ "$(jget messages)" = 12000 ] || fail "(b) expected 12000 messages"
[ "$(jget backpressure)" -ge 1 ] || fail "(b) the engine never pushed back"
[ "$(jget keepalives)" -ge 100 ] || fail "(b) a 2.5 s stall sent only $(jget keepalives) keepalives"
# a failure names the events that took the rails out (--trace-rails)
[ "$(jget failovers)" = 0 ] || { grep -e '--> FAILED' "$WORK/err" | head -12
    fail "(b) a 2.5 s stall was taken for a rail failure ($(jget failovers) failovers)"; }
[ "$(jget conn_errors)" = 0 ] || fail "(b) connections lost during the stall: $(jget conn_errors)"
echo "   (b) 2.5 s: backpressure $(jget backpressure), keepalives $(jget keepalives), stall_ms_max $(jget stall_ms_max)"
summary
echo "ok: t6 back-pressure"
