#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Credits, and back-pressure under them.  The receivers post nothing for a
# while; each sender has a window at its receiver of BFO_UNEXPECTED_BUDGET /
# (ranks - 1) bytes of payload buffers, and past it sends even small
# messages by rendezvous (RNDV without first bytes: an envelope waits, not
# the data), so the receiver never holds more than its budget and no frame
# waits in the transport (over_window and backpressure 0); once receives
# are posted everything arrives, exactly once, and nothing fails over:
#  (a) 512 eager messages of 64 B in flight per sender, a 16 KiB budget,
#      receives after 300 ms: 256 eager, the rest by rendezvous;
#  (b) 1024 messages of 4 KiB in flight per sender, a 1 MiB budget,
#      receives after 2.5 s: longer than TCP_USER_TIMEOUT (1 s) and 18
#      times the heartbeat plus probe timeout (100 + 40 ms, the defaults);
#  (c) the budgets differ: rank 1's is 16 KiB, rank 0's the default 64 MiB.
#      Rank 0 guesses a window of its own size until rank 1's first CREDIT
#      (sent when a rail is admitted) names the real one; what went past it
#      before is held back by the safety net (the frame waits, the backend
#      stops reading: back-pressure), and rank 0 then sends by rendezvous.
. "$(dirname "$0")/lib.sh"
BFO_UNEXPECTED_BUDGET=16K timeout 60 "$BFO_TCP" run -n 2 --rails "$RAILS" --timeout 50 -- \
    "$BFO_TCP" stream --json --size 64 --window 512 --count 4000 --recv-delay-ms 300 --timeout 40 \
    > "$WORK/out" 2> "$WORK/err" || fail "(a) exit status $?"
check_exact
[ "$(jget messages)" = 8000 ] || fail "(a) expected 8000 messages"
[ "$(jget credit_rndv)" -ge 1 ] || fail "(a) no send went by rendezvous past its window"
[ "$(jget over_window)" = 0 ] || fail "(a) $(jget over_window) frames went past a window"
[ "$(jget backpressure)" = 0 ] || fail "(a) frames waited in the transport: $(jget backpressure)"
[ "$(jget failovers)" = 0 ] || fail "(a) a stalled receiver must not look like a rail failure"
echo "   (a) 300 ms: by rendezvous for want of credit $(jget credit_rndv), past a window $(jget over_window)"
summary

BFO_UNEXPECTED_BUDGET=1M timeout 60 "$BFO_TCP" run -n 2 --rails "$RAILS" --timeout 50 -- \
    "$BFO_TCP" stream --json --size 4K --window 1024 --count 6000 --recv-delay-ms 2500 --timeout 40 \
    --trace-rails > "$WORK/out" 2> "$WORK/err" || fail "(b) exit status $?"
check_exact
[ "$(jget messages)" = 12000 ] || fail "(b) expected 12000 messages"
[ "$(jget credit_rndv)" -ge 1 ] || fail "(b) no send went by rendezvous past its window"
[ "$(jget over_window)" = 0 ] || fail "(b) $(jget over_window) frames went past a window"
# a failure names the events that took the rails out (--trace-rails)
[ "$(jget failovers)" = 0 ] || { grep -e '--> FAILED' "$WORK/err" | head -12
    fail "(b) a 2.5 s stall was taken for a rail failure ($(jget failovers) failovers)"; }
[ "$(jget conn_errors)" = 0 ] || fail "(b) connections lost during the stall: $(jget conn_errors)"
echo "   (b) 2.5 s: by rendezvous for want of credit $(jget credit_rndv), stall_ms_max $(jget stall_ms_max)"
summary

timeout 60 "$BFO_TCP" run -n 2 --rails "$RAILS" --timeout 50 -- sh -c \
    '[ "$BFO_RANK" = 1 ] && export BFO_UNEXPECTED_BUDGET=16K; exec "$0" "$@"' \
    "$BFO_TCP" stream --json --size 1K --window 512 --count 3000 --recv-delay-ms 300 --timeout 40 \
    > "$WORK/out" 2> "$WORK/err" || fail "(c) exit status $?"
check_exact
[ "$(jget messages)" = 6000 ] || fail "(c) expected 6000 messages"
[ "$(jget credit_rndv)" -ge 1 ] || fail "(c) rank 0 never learned rank 1's smaller window"
[ "$(jget failovers)" = 0 ] || fail "(c) failovers: $(jget failovers)"
echo "   (c) budgets 64M and 16K: by rendezvous $(jget credit_rndv), past a window $(jget over_window), backpressure $(jget backpressure)"
summary
echo "ok: t6 credits and back-pressure"
