#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# (b) The reset of f1a against Open MPI's ob1, side by side: ob1 over the
# tcp btl cannot be pinned to 127.0.0.2/.3 on lo, so it runs in a network
# namespace of its own on a veth pair (bfr0 10.201.1.1 = rail 0, bfr1
# 10.201.2.1 = rail 1; Open MPI's runtime on the namespace's lo), and every
# connection on rail 0's address is reset mid-stream (ip netns exec NS
# ss -K dst/src 10.201.1.1).  A demonstration: ob1 is expected to hang
# (no byte moves for HANG_S s: killed), abort or report corruption; the
# test passes when it has shown which, within RUN_TIMEOUT (60 s).  If ob1
# survives the reset, that is printed as a note and does not fail.
# OB1_RUNS=N repeats it (default 1) to see how ob1's failure varies.
PML=ob1
. "$(dirname "$0")/lib.sh"
SCENARIOS=("f1a reset rail 0")
preflight "f2 reset vs ob1" || { finish; exit; }
setup_net || { finish; exit; }
for i in $(seq "${OB1_RUNS:-1}"); do
    reset_run "ob1reset$i" 0
    case $OUTCOME in
    completed)
        note "f2 reset vs ob1: ob1 SURVIVED every connection of rail 0 reset mid-stream (sockets killed: $RESETS): $DETAIL" ;;
    no-traffic)
        fail "f2 reset vs ob1: $DETAIL"; show_tail ;;
    *)
        openmpi_says 3
        ok "f2 reset vs ob1: ob1 failed as expected: $OUTCOME ($RESETS sockets killed): $DETAIL" ;;
    esac
    record "f1a reset rail 0" "$OUTCOME" "$DETAIL; sockets killed $RESETS"
    if [ -n "$FAULTS_RESULTS" ] && grep -q '^f1a reset rail 0|bfo|' "$FAULTS_RESULTS"; then
        echo "   side by side, the same reset: bfo $(grep -m1 '^f1a reset rail 0|bfo|' "$FAULTS_RESULTS" | cut -d'|' -f3-4 | sed 's/|/: /')"
        echo "                                 ob1 $OUTCOME: $DETAIL"
    fi
done
finish
