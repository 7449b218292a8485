#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# (0) The harness checks itself, with Open MPI's ob1 in the test's own
# namespace and no fault: a clean 2-rank stream is classified "completed";
# the same stream with one flipped byte (stream --inject-corrupt: the
# sender flips a byte of message 5 after filling it) is classified
# "corruption", the receiver names the message and the offset, and mpirun
# exits nonzero.  About 5 s.
PML=ob1
. "$(dirname "$0")/lib.sh"
SCENARIOS=("f0 harness self-test")
preflight "f0 self-test" || { finish; exit; }
setup_net || { finish; exit; }

start_stream clean 2 -- --duration 1.5 --mixed --bidir
watch_run 2; classify 2
if [ "$OUTCOME" = completed ]; then ok "f0a a clean stream is classified completed ($DETAIL)"
else fail "f0a a clean stream: $OUTCOME: $DETAIL"; show_tail; fi

start_stream corrupt 2 -- --bytes 256M --mixed --inject-corrupt 5
watch_run 2; classify 2
if [ "$OUTCOME" = corruption ] && [ "$RC" != 0 ] &&
    grep -q '^corrupt rank=1 peer=0 seq=5 size=1048576 offset=524288 .* bad_bytes=1$' "$OUT"; then
    ok "f0b one flipped byte is found (seq 5, offset 524288) and classified corruption; mpirun exit $RC"
else
    fail "f0b one flipped byte: $OUTCOME (mpirun exit $RC): $DETAIL"; show_tail
fi
finish
