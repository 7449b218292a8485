#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# (t20) examples/master_worker.c, a resilient master-worker, under real
# process kills: workers SIGKILLed mid-run under `bfo run --keep-going`.
# The launcher tells the survivors; the master acknowledges the failure,
# revokes the group (the workers' pending operations end revoked), every
# survivor agrees on who failed and shrinks the group, and the master
# hands out again what was not done.  The total must be right, every
# survivor must exit 0, and each death must have cost one repair.
. "$(dirname "$0")/lib.sh"
[ -x "${BFO_MASTER_WORKER:-}" ] || fail "BFO_MASTER_WORKER: the example's binary"
BFO_MASTER_WORKER=$(readlink -f "$BFO_MASTER_WORKER")
mw_run() { # N RANKS-TO-KILL...: once every rank is past its start (a kill
    # during the address exchange is another test's), kills them one after
    # the other, 0.1-0.3 s apart; 800 tasks of 3 ms keep 4 workers busy 0.6 s
    local n=$1; shift
    run_bg "$n" --timeout 50 --keep-going -- "$BFO_MASTER_WORKER" --tasks 800 --task-us 3000 --say-ready
    for _ in $(seq 400); do
        [ "$(grep -c ': ready$' "$WORK/err")" -ge "$n" ] && break
        kill -0 "$LAUNCHER" 2> /dev/null || break
        sleep 0.05
    done
    [ "$(grep -c ': ready$' "$WORK/err")" -ge "$n" ] || fail "not every rank started: $(cat "$WORK/err")"
    for r in "$@"; do
        sleep "0.$((1 + RANDOM % 3))"
        kill -9 "$(rank_pid "$r")"
    done
    wait_bg
    [ $rc != 0 ] || fail "the launcher should report the killed ranks"
    for r in $(seq 0 $((n - 1))); do
        if [[ " $* " == *" $r "* ]]; then
            grep -q "rank $r pid .*: signal 9" "$WORK/err" || fail "rank $r not reported killed"
        else
            grep -q "rank $r pid .*: exit 0" "$WORK/err" || fail "rank $r did not exit 0"
        fi
    done
    grep -q "total .* correct" "$WORK/out" || fail "the master's total: $(cat "$WORK/out")"
    grep -q "workers lost $#, " "$WORK/out" || fail "expected $# workers lost: $(cat "$WORK/out")"
    echo "   $(cat "$WORK/out")"
}
mw_run 4 2
mw_run 5 3 1
echo "ok: t20 master-worker under real kills (one, then two workers)"
