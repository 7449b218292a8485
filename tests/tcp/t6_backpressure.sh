#!/bin/bash
# Back-pressure: the receivers post nothing for 300 ms while 512 eager
# messages per sender are in flight; the engine's unexpected buffers (256)
# fill, bfo_engine_frame says BFO_ERR_AGAIN, the backend keeps the frame and
# stops reading; once receives are posted everything arrives, exactly once.
# Failure detection is slowed down here (user timeout 5 s, silence 3 s): a
# stalled connection keeps its control frames queued behind the stalled one
# and the kernel's zero window counts against TCP_USER_TIMEOUT, so on a
# loaded machine a long stall can look like a dead rail (a known limit,
# docs/engine-design.md); this test is about the back-pressure itself.
. "$(dirname "$0")/lib.sh"
timeout 60 "$BFO_TCP" run -n 2 --rails "$RAILS" --timeout 50 -- \
    "$BFO_TCP" stream --json --size 64 --window 512 --count 4000 --recv-delay-ms 300 --timeout 40 \
    --user-timeout-ms 5000 --silence-ms 3000 --grace-ms 10000 \
    > "$WORK/out" 2> "$WORK/err" || fail "exit status $?"
check_exact
[ "$(jget messages)" = 8000 ] || fail "expected 8000 messages"
[ "$(jget backpressure)" -ge 1 ] || fail "the engine never pushed back (backpressure $(jget backpressure))"
[ "$(jget failovers)" = 0 ] || fail "back-pressure must not look like a rail failure"
echo "   frames offered again after BFO_ERR_AGAIN: $(jget backpressure)"
summary
echo "ok: t6 back-pressure"
