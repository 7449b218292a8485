#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# (d) A rank killed: 3 ranks (KILL_NP), rank 0 streams both ways with each
# other rank under MPI_ERRORS_RETURN (stream --hub); once traffic flows,
# the last rank gets SIGKILL.  mpirun runs with KILL_MPIRUN_ARGS (default
# --mca orte_enable_recovery 1 --mca orte_abort_on_non_zero_status 0:
# without recovery mpirun ends the whole job about 1 s after a rank dies).
# Expected (bfo): rank 0's operations to the dead rank end with an MPI
# error (the stream prints its class and MPI_Error_string, with a
# timestamp, flushed), and rank 0 keeps streaming to the others and
# finishes: its summary names the dead rank, every other stream done and
# every message verified; the other survivors finish with exit 0.  Should
# Open MPI end the job anyway, the test passes when rank 0's output shows
# the error before the job ended.
. "$(dirname "$0")/lib.sh"
SCENARIOS=("f4 kill a rank")
KILL_NP=${KILL_NP:-3}
# shellcheck disable=SC2206
KILL_MPIRUN_ARGS=(${KILL_MPIRUN_ARGS---mca orte_enable_recovery 1 --mca orte_abort_on_non_zero_status 0})
NAME="f4 kill a rank"
preflight "$NAME ($PML)" || { finish; exit; }
setup_net || { finish; exit; }
victim=$((KILL_NP - 1))

start_stream kill "$KILL_NP" "${KILL_MPIRUN_ARGS[@]}" -- --hub --duration "$DURATION" --finalize-timeout 10
if ! wait_traffic 1.5; then
    watch_run "$victim"; classify "$KILL_NP"
    fail "$NAME ($PML): no traffic before the kill: $OUTCOME ($DETAIL)"; show_tail; finish; exit
fi
pid=$(sed -n "s/^start rank=$victim .*pid=\([0-9]*\) .*/\1/p" "$OUT")
[ -n "$pid" ] || { fail "$NAME: no pid for rank $victim"; show_tail; finish; exit; }
kill -9 "$pid"
t_kill=$(now)
fault_mark "SIGKILL to rank $victim (pid $pid)"
watch_run "$victim"   # the survivors' summaries

# what the survivors said
err=$(grep -m1 "^error rank=0 .* peer=$victim " "$OUT")
nerr=$(grep -c "^error rank=0 .* peer=$victim " "$OUT")
t_err=$(sed -n 's/.* t=\([0-9.]*\) .*/\1/p' <<< "$err")
s0=$(grep '^{"summary":1,"rank":0,' "$OUT")
ended_by_ompi=0
grep -q -E 'mpirun noticed|job has been aborted|exiting improperly|mpirun has exited' "$OUT" && ended_by_ompi=1
live_ok=1 why=""
if [ -z "$s0" ]; then live_ok=0 why="rank 0 printed no summary"
else
    grep -q "\"dead_peers\":\[$victim\]" <<< "$s0" || { live_ok=0; why+="rank 0's dead peers: $(sed -n 's/.*"dead_peers":\(\[[^]]*\]\).*/\1/p' <<< "$s0"); "; }
    grep -q '"corrupt":0,"count_errors":0' <<< "$s0" || { live_ok=0; why+="rank 0 saw corruption; "; }
    grep -q '"exit":0' <<< "$s0" || { live_ok=0; why+="rank 0's exit status $(sed -n 's/.*"exit":\([0-9]*\).*/\1/p' <<< "$s0"); "; }
    for r in $(seq 1 $((victim - 1))); do
        grep -q "^peer rank=0 peer=$r dir=rx .* corrupt=0 count_errors=0 mpi_errors=0 .*state=done" "$OUT" &&
            grep -q "^peer rank=0 peer=$r dir=tx .* mpi_errors=0 .*state=done" "$OUT" || { live_ok=0; why+="rank 0's streams with rank $r not done; "; }
        grep -q "^{\"summary\":1,\"rank\":$r,.*\"exit\":0}" "$OUT" || { live_ok=0; why+="rank $r did not finish cleanly; "; }
    done
fi
classify "$KILL_NP"
if [ -n "$err" ]; then
    echo "   rank 0's first error, $(fsub "$t_err" "$t_kill")s after the kill ($nerr error lines for rank $victim):"
    echo "      | ${err:0:220}"
fi
if [ -n "$err" ] && [ $live_ok = 1 ]; then
    echo "   rank 0: $(grep '^peer rank=0 ' "$OUT" | awk '{ printf "%s%s %s %s %s", sep, $3, $4, $5, $NF; sep = "; " }')"
    echo "   rank 0's operations with rank $victim after it died: $(grep "^peer rank=0 peer=$victim " "$OUT" |
        sed 's/.*dir=\([a-z]*\) .*mpi_errors=\([0-9]*\) late_ok=\([0-9]*\).*/\1: \2 ended with an error, \3 completed/' | paste -sd';' | sed 's/;/; /g')"
    ok "$NAME ($PML): rank $victim killed, rank 0's operations to it ended with an MPI error $(fsub "$t_err" "$t_kill")s later, the others finished verified"
    OUTCOME=error-and-continued DETAIL="first error $(fsub "$t_err" "$t_kill")s after the kill: $(sed 's/.*\(class=.*\)/\1/' <<< "$err"); survivors finished verified"
elif [ -n "$err" ] && [ $ended_by_ompi = 1 ]; then
    openmpi_says 3
    ok "$NAME ($PML): rank 0 got the MPI error $(fsub "$t_err" "$t_kill")s after the kill, before Open MPI ended the job ($(fsub "$RUN_END" "$t_err")s later)"
    OUTCOME=error-then-job-ended DETAIL="first error $(fsub "$t_err" "$t_kill")s after the kill, job ended $(fsub "$RUN_END" "$t_kill")s after it"
elif [ -n "$err" ]; then
    fail "$NAME ($PML): rank 0 got the error ($(fsub "$t_err" "$t_kill")s after the kill) but did not finish: ${why}($OUTCOME: $DETAIL)"
    openmpi_says; show_tail 20
    OUTCOME="error-then-$OUTCOME"
else
    fail "$NAME ($PML): rank 0 got no MPI error for rank $victim: $OUTCOME: $DETAIL"
    openmpi_says; show_tail 20
fi
record "$NAME" "$OUTCOME" "$DETAIL"
finish
