#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# A clean end is clean: ranks that finish say goodbye (a BYE on every rail,
# bfo_net_fini), so their peers, still running, take the connections
# closing as no failure: nothing on stderr (no "connection closed"), no
# failover, no reconnect, no peer given up.
#   (a) 2 ranks, 2 rails, the default stream, three times.
#   (b) 4 ranks finishing at different times: rank 3 lingers 1 s, calling
#       progress, while the others leave and exit; it still receives the
#       farewell each of them sent before leaving, finds that all 3 said
#       goodbye, maps nothing out, and a send to one of them fails at once
#       with BFO_ERR_PEER_LEFT.
#   (c) the same with rank 1 asleep for 1 s (no call into bfo): the others'
#       BYEs wait in its sockets, their processes end at bfo_net_leave's
#       bound (500 ms); it takes the BYEs when it wakes, before the ends
#       behind them.
#   (d) at log level 2 the ends are there, each said to be parted.
# Every run traces the rails (--trace-rails).  A run in which a probe timed
# out (a rank starved of the CPU by other work on this machine: its peers'
# probes time out, they map it out, and a rank whose every rail to a peer
# failed has no rail left to say goodbye on) says nothing about goodbyes: it
# is run again, up to 5 times.  In the run kept, no rail may fail at all
# (no transition to FAILED), and stderr holds nothing but the launcher's
# lines, the rail trace and the lingering rank's report.
. "$(dirname "$0")/lib.sh"

# job WHAT ARGS...: `bfo run ARGS --trace-rails` (JSON in $WORK/out, stderr
# in $WORK/err) until a run where no probe timed out, at most 5 times
job() {
    local what=$1 try; shift
    for try in 1 2 3 4 5; do
        timeout 60 "$BFO_TCP" run "$@" --trace-rails > "$WORK/out" 2> "$WORK/err" || fail "$what exit status $?"
        check_exact
        if [ "$(jget failovers)" = 0 ] && ! grep -q -e '--PROBE_TIMED_OUT-->' -e '--SILENCE_DETECTED-->' "$WORK/err"; then
            grep -- '--> FAILED' "$WORK/err" | head -5
            ! grep -q -- '--> FAILED' "$WORK/err" || fail "$what: a rail failed"
            return 0
        fi
        echo "   $what: a probe timed out (a rank starved by other work on this machine): again"
    done
    fail "$what: a probe timed out in 5 runs"
}

# quiet FILE: stderr holds nothing but the launcher's lines, the rail trace
# (with the evidence of a demotion or a timeout) and the lingering rank's
# report: nothing else (bfo_net gives TCP its keys, so no line saying the
# hellos are not authenticated either)
quiet() {
    local noise
    noise=$(grep -v -e '^bfo run: rank [0-9]* pid [0-9]*: exit 0$' -e '^bfo stream\[[0-9]*\]: lingered ' \
                -e '^bfo stream\[[0-9]*\]: .* --[A-Z_]*--> [A-Z_]*$' \
                -e '^bfo stream\[[0-9]*\]:   \(its rate\|the rail heard\) ' \
                -e '^bfo stream\[[0-9]*\]: ([0-9.]*) peer [0-9]* rail [0-9]*: [A-Z_]* with [0-9]* operation(s) in flight$' \
                "$1")
    [ -z "$noise" ] || { echo "$noise" | head -20; fail "$2: stderr is not quiet"; }
}

for i in 1 2 3; do
    job "(a)" -n 2 --rails "$RAILS" --timeout 50 -- "$BFO_TCP" stream --json --count 200
    expect_messages 400
    quiet "$WORK/err" "(a) run $i"
done
summary
echo "ok: t18 (a) 2 ranks, 2 rails: a clean end prints nothing (3 runs)"

SMALL=(--sizes 64,4096,65536 --count 300 --window 16)
job "(b)" -n 4 --rails "$RAILS" --timeout 50 -- "$BFO_TCP" stream --json "${SMALL[@]}" --linger 3:1000
expect_messages 3600
quiet "$WORK/err" "(b)"
line=$(grep 'lingered' "$WORK/err")
echo "   $line"
case "$line" in
*"lingered 1000 ms: 3 farewell(s) received after their senders left, 3 of 3 peers said goodbye, map-outs 0, a send to a peer that left: BFO_ERR_PEER_LEFT") ;;
*) fail "(b) the lingering rank: $line" ;;
esac
echo "ok: t18 (b) 4 ranks, rank 3 leaves 1 s after the others: no failure, their farewells received, they all said goodbye"

start=$(date +%s%N)
job "(c)" -n 4 --rails "$RAILS" --timeout 50 -- "$BFO_TCP" stream --json "${SMALL[@]}" --linger 1:1000:sleep
ms=$((($(date +%s%N) - start) / 1000000))
quiet "$WORK/err" "(c)"
line=$(grep 'lingered' "$WORK/err")
echo "   $line (the job: $ms ms)"
case "$line" in
*"lingered 1000 ms asleep: 0 farewell(s) received after their senders left, 3 of 3 peers said goodbye, "*"a send to a peer that left: BFO_ERR_PEER_LEFT") ;;
*) fail "(c) the sleeping rank: $line" ;;
esac
echo "ok: t18 (c) 4 ranks, rank 1 asleep 1 s while the others leave: it takes their BYEs when it wakes, no failure"

BFO_TCP_LOG=2 BFO_NET_LOG=2 timeout 60 "$BFO_TCP" run -n 4 --rails "$RAILS" --timeout 50 -- \
    "$BFO_TCP" stream "${SMALL[@]}" --linger 2:300 > /dev/null 2> "$WORK/err" || fail "(d) exit status $?"
parted=$(grep -c 'connection closed, parted' "$WORK/err")
lost=$(grep 'connection closed: ' "$WORK/err" | grep -vc 'the engine reconnects')
left=$(grep -c 'bfo-net\[[0-9]*\]: left: ' "$WORK/err")
echo "   log level 2: $parted connection ends parted, $lost others, $left ranks left"
[ "$parted" -gt 0 ] || fail "(d) no connection end said parted"
[ "$left" = 4 ] || fail "(d) $left ranks said they left, not 4"
echo "ok: t18 (d) at log level 2 the connections' ends are there, parted"
