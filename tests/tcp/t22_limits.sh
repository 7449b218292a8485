#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# (issue 36) The open-files limit checked at init (bfo_net.h, LIMITS): 16
# ranks on 4 TCP rails may hold 15 x 4 connections, a listener and a beacon
# socket per rail and an epoll set, more than 64 descriptors.
#   (a) under `prlimit --nofile=64:64` every rank fails at init, at once,
#       with the one message (the limit, the need, how it was counted, the
#       value to set), and nothing else is said; without the check
#       (BFO_LIMITS=off, as before it) the same job runs into "Too many
#       open files" (and fails later, or finishes on the rails it got).
#   (b) under --nofile=64:4096 each rank raises its soft limit to the need,
#       says so, and the job passes, every message verified.
#   (c) BFO_LIMITS=warn under 64:64 says the same and goes on; a value that
#       is not fail, warn or off is refused.
. "$(dirname "$0")/lib.sh"
R4=127.0.0.1,127.0.0.2,127.0.0.3,127.0.0.4
# 200 KB messages: rendezvous, striped, so every rail of a peer connects (a peer's
# first small message connects one rail: docs/engine-design.md, "One rail
# first"), and without the check the job does run out of descriptors
run16() { # run16 PRLIMIT [--keep-going]: the 16-rank stream under that limit
    local lim=$1; shift
    timeout 60 prlimit --nofile="$lim" "$BFO_TCP" run -n 16 --rails "$R4" --timeout 30 "$@" -- \
        "$BFO_TCP" stream --json --count 10 --size 200000 > "$WORK/out" 2> "$WORK/err"
}

# (a)
start=$(date +%s%N)
run16 64:64 --keep-going && fail "(a) the job passed under 64 open files" # every rank says it
ms=$(( ($(date +%s%N) - start) / 1000000 ))
n=$(grep -c '^bfo: rank [0-9]*: open files: this job may hold up to [0-9,]* (tcp: 15 peers x 4 rails x 1 + 4 rails x 2 + 1; [0-9]* open now; 32 spare; an upper bound: every peer connected on every rail); the limit is 64 (hard 64): raise it with ulimit -n [0-9]* where the ranks start' "$WORK/err")
[ "$n" = 16 ] || fail "(a) $n of 16 ranks said the limit"
grep -q 'Too many open files' "$WORK/err" && fail "(a) a rank went on to EMFILE"
other=$(grep -v '^bfo: rank [0-9]*: open files: \|^bfo stream: init: BFO_ERR_INVALID\|^bfo run: ' "$WORK/err" | head -3)
[ -z "$other" ] || fail "(a) more said than the limit: $other"
need=$(sed -n 's/.*ulimit -n \([0-9]*\) .*/\1/p' "$WORK/err" | sort -n | tail -1)
echo "   (a) 16 ranks refused in $ms ms: need up to $need descriptors, limit 64"
# without the check the job runs out of descriptors: it fails later, or
# (one rail first: a peer's first rail connected, the rest for striping)
# finishes on the rails it got, as it did under ASan, slower
rc=0
BFO_LIMITS=off run16 64:64 || rc=$?
emfile=$(grep -c 'Too many open files' "$WORK/err")
[ "$emfile" -gt 0 ] || fail "(a) without the check the job ran into no EMFILE (exit status $rc)"
echo "   (a) without the check (BFO_LIMITS=off): exit status $rc, $emfile lines of \"Too many open files\""

# (b)
run16 64:4096 || fail "(b) exit status $? with the hard limit at 4,096"
check_exact
n=$(grep -c "^bfo: rank [0-9]*: open files: soft limit raised from 64 to [0-9]* (hard 4,096)" "$WORK/err")
[ "$n" = 16 ] || fail "(b) $n of 16 ranks said they raised the limit"
to=$(sed -n 's/.*soft limit raised from 64 to \([0-9]*\) .*/\1/p' "$WORK/err" | sort -n | tail -1)
echo "   (b) 16 ranks raised 64 -> $to themselves; messages $(jget messages), verified $(jget verified)"

# (c)
BFO_LIMITS=warn run16 64:64 || true # it goes on into EMFILE: the first rank to fail ends it
n=$(grep -c '^bfo: rank [0-9]*: open files: this job may hold up to .*going on (BFO_LIMITS=warn)$' "$WORK/err")
[ "$n" -ge 1 ] || fail "(c) no rank warned"
grep -q 'init: BFO_ERR_INVALID' "$WORK/err" && fail "(c) a rank failed at init with BFO_LIMITS=warn"
BFO_LIMITS=maybe run16 64:4096 && fail "(c) BFO_LIMITS=maybe taken"
grep -q '^bfo: BFO_LIMITS=maybe: not fail, warn or off$' "$WORK/err" || fail "(c) BFO_LIMITS=maybe not refused by name"
echo "ok: t22 open files checked at init: refused with the value to set, raised where the hard limit allows, warn goes on"
