#!/bin/bash
# (e) rank 2 is a misbehaving peer (tests/tcp/badpeer.c): bad magic, frames
# too long, engine garbage, sequence gaps, truncated frames, bad hellos,
# acks for frames never sent.  Ranks 0 and 1 drop each such connection with
# a logged reason, stay up and finish their own stream.
. "$(dirname "$0")/lib.sh"
: "${BFO_BADPEER:?set BFO_BADPEER to the tcp_badpeer binary}"
BAD=$(readlink -f "$BFO_BADPEER")
timeout 60 "$BFO_TCP" run -n 3 --rails "$RAILS" --timeout 50 -- sh -c \
    'if [ "$BFO_RANK" = 2 ]; then exec "$0" 2; else exec "$1" stream --json --duration 3 --skip-rank 2; fi' \
    "$BAD" "$BFO_TCP" > "$WORK/out" 2> "$WORK/err" || fail "exit status $?"
check_exact
for why in "bad frame header" "bad frame (kind 1, length 268435456)" "engine rejected a frame" \
           "frame sequence 5, expected 1" "closed inside a frame" "beyond the last frame sent" \
           "hello from rank 2, which may not connect here" "not a hello"; do
    grep -q "$why" "$WORK/err" || fail "no drop logged for: $why"
done
[ "$(jget malformed_drops)" -ge 7 ] || fail "malformed_drops $(jget malformed_drops)"
echo "   connections dropped for malformed input: $(jget malformed_drops) (badpeer played $(grep -c 'badpeer: rank' "$WORK/err"))"
summary
echo "ok: t5 malformed frames"
