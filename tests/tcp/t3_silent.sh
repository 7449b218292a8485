#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# (c) silent loss on rail 127.0.0.2: nothing arrives, no error.  Found by
# the engine's heartbeat probe timing out (the defaults: heartbeat 100 ms,
# probe timeout 40 ms; the silence backstop is 1 s); traffic moves to rail
# 0, nothing is lost, and the rail is re-admitted once the loss stops.  Two ways: an nftables drop rule (when nft works here) and
# the backend's fault hook (always; SIGUSR1 toggles it in rank 1).
. "$(dirname "$0")/lib.sh"
HEARTBEAT=100

one_run() { # $1: nft | hook
    rm -f "$WORK/pids" "$WORK/out"
    run_bg 2 --timeout 50 -- "$BFO_TCP" stream --json --duration 3.5 \
        --drop-on-signal 1 --timeout 30
    sleep 0.8
    if [ "$1" = nft ]; then
        nft add table ip "$TABLE" && nft add chain ip "$TABLE" out '{ type filter hook output priority 0; }' &&
            nft add rule ip "$TABLE" out ip daddr 127.0.0.2 drop || fail "nft rule"
    else
        kill -USR1 "$(rank_pid 1)"
    fi
    sleep 1.2
    if [ "$1" = nft ]; then nft delete table ip "$TABLE"; else kill -USR1 "$(rank_pid 1)"; fi
    wait_bg
    [ $rc = 0 ] || fail "$1: exit status $rc"
    check_exact
    [ "$(jget failovers)" -ge 1 ] || fail "$1: the silent rail was never mapped out"
    [ "$(jget readmissions)" -ge 1 ] || fail "$1: the rail was not re-admitted after the loss stopped"
    # the longest pause in completions: heartbeat + probe timeout + recovery
    # (about 140 ms), well below the 1 s silence backstop even on a loaded machine
    ms_lt "$(jget stall_ms_max)" 900 || fail "$1: traffic stalled $(jget stall_ms_max) ms"
    summary
    echo "   silent loss to traffic moving again: at most $(jget stall_ms_max) ms," \
        "the heartbeat ($HEARTBEAT ms) + $(awk -v s="$(jget stall_ms_max)" -v h=$HEARTBEAT 'BEGIN { printf "%.1f", s - h }') ms"
    echo "ok: t3 silent loss ($1)"
}

TABLE=bfo_tcp_test_$$
if command -v nft >/dev/null && nft add table ip "$TABLE" 2>/dev/null; then
    nft delete table ip "$TABLE"
    CLEANUP+=("nft delete table ip $TABLE")
    one_run nft
else
    echo "   (nft unavailable here: the nftables run is skipped)"
fi
one_run hook
