#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# (j) By hand, as across hosts: no `bfo run`, each rank started with
# BFO_RANK, BFO_SIZE, BFO_BOOTSTRAP=ADDR:PORT (rank 0 listens there) and
# its own BFO_RAILS, rails named `tcp:ADDR` on one side and bare on the
# other.  Rank 1 starts first and waits for rank 0's bootstrap; every
# message verified over both rails.  Then the mistakes a user makes by
# hand end at once with a message that names them, never a hang.
. "$(dirname "$0")/lib.sh"
start_rank1 127.0.0.1,tcp:127.0.0.2
sleep 0.3
kill -0 "$R1" 2>/dev/null || fail "rank 1 did not wait for rank 0's bootstrap: $(cat "$WORK/err1")"
run_rank0 tcp:127.0.0.1,tcp:127.0.0.2
check_exact
[ "$(jget ranks)" = 2 ] || fail "expected 2 ranks, got $(jget ranks)"
expect_messages 600
both_rails_carried
summary
echo "ok: t10 two ranks started by hand (BFO_RANK, BFO_SIZE, BFO_BOOTSTRAP), rank 1 first"

# mistakes: each exits non-zero within 10 s, saying what is wrong
mistake() { # mistake "what" "expected text" env...
    local what=$1 want=$2 rc
    shift 2
    env "$@" timeout 10 "$BFO_TCP" stream --count 5 > "$WORK/out" 2> "$WORK/err"
    rc=$?
    [ $rc != 0 ] && [ $rc != 124 ] || fail "$what: exit status $rc (124: a hang)"
    grep -q -- "$want" "$WORK/err" || fail "$what: no \"$want\" on stderr"
    echo "   $what: $(grep -m1 -- "$want" "$WORK/err")"
}
mistake "rank out of range" "BFO_RANK must be below BFO_SIZE" BFO_RANK=2 BFO_SIZE=2 BFO_BOOTSTRAP=$BOOT
mistake "rank not a number" "BFO_RANK is not a number" BFO_RANK=one BFO_SIZE=2 BFO_BOOTSTRAP=$BOOT
mistake "size missing" "BFO_SIZE is not set" BFO_RANK=0 BFO_SIZE= BFO_BOOTSTRAP=$BOOT
mistake "bootstrap without a port" "BFO_BOOTSTRAP must be IPV4ADDR:PORT" BFO_RANK=1 BFO_SIZE=2 BFO_BOOTSTRAP=nohost
mistake "no bootstrap address" "BFO_BOOTSTRAP must be IPV4ADDR:PORT" BFO_RANK=1 BFO_SIZE=2 BFO_BOOTSTRAP=
mistake "a rail that is no address" "bad rail list" BFO_RANK=0 BFO_SIZE=2 BFO_BOOTSTRAP=$BOOT BFO_RAILS=tcp:300.1.1.1
echo "ok: t10 mistakes by hand end at once with a message"
