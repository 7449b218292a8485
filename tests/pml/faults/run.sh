#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# run.sh - the fault tests of make check-pml (README.md): f0 (the harness
# checks itself, ob1, no fault), f1 (reset, PML bfo), f2 (the same reset
# against ob1, a demonstration), f3 (silent loss, bfo), f4 (a rank killed,
# bfo); then the side-by-side table and the totals.  FAULTS_OB1_ALL=1
# also runs f1, f3 and f4 against ob1, as demonstrations: their outcomes
# go into the table, not into the totals.
# FAULTS_ONLY="f1 f3" runs those only.  Exit status 1 when a test failed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
export FAULTS_RESULTS
FAULTS_RESULTS=$(mktemp /tmp/bfo-pmlfaults-results.XXXXXX)
trap 'rm -f "$FAULTS_RESULTS"' EXIT
P=0 F=0 S=0 N=0
start=$(date +%s)
tally() { # the last "tests:" line of a script's output
    local line p f s n
    line=$(grep '^tests: ' "$1" | tail -1)
    if [ -z "$line" ]; then echo "FAIL: $2 printed no tests: line"; F=$((F + 1)); return; fi
    p=$(sed -n 's/^tests: \([0-9]*\) passed.*/\1/p' <<< "$line")
    f=$(sed -n 's/.* \([0-9]*\) failed.*/\1/p' <<< "$line")
    s=$(sed -n 's/.*[ (]\([0-9]*\) skipped.*/\1/p' <<< "$line")
    n=$(sed -n 's/.*[ (]\([0-9]*\) noted.*/\1/p' <<< "$line")
    P=$((P + ${p:-0})) F=$((F + ${f:-0})) S=$((S + ${s:-0})) N=$((N + ${n:-0}))
}
run() { # PML script
    local pml=$1 s=$2 log t0
    case " ${FAULTS_ONLY:-f0 f1 f2 f3 f4} " in *" ${s%%_*} "*) ;; *) return ;; esac
    log=$(mktemp /tmp/bfo-pmlfaults-log.XXXXXX)
    t0=$(date +%s)
    echo "== $s (PML=$pml)"
    # each script's own "tests:" line, indented: CI adds up the unindented
    # ones, and the total below counts these again
    PML=$pml bash "$here/$s.sh" 2>&1 | tee "$log" | sed 's/^tests: /   tests: /'
    echo "   ($s: $(( $(date +%s) - t0 ))s)"
    tally "$log" "$s"
    rm -f "$log"
}
demo() { # PML script: outcomes into the table only
    local pml=$1 s=$2 t0
    case " ${FAULTS_ONLY:-f0 f1 f2 f3 f4} " in *" ${s%%_*} "*) ;; *) return ;; esac
    t0=$(date +%s)
    echo "== $s (PML=$pml, demonstration: not counted)"
    PML=$pml bash "$here/$s.sh" 2>&1 | sed 's/^/   /'
    echo "   ($s: $(( $(date +%s) - t0 ))s)"
}
run ob1 f0_selftest
run bfo f1_reset
run ob1 f2_reset_ob1
run bfo f3_drop
run bfo f4_kill
if [ "${FAULTS_OB1_ALL:-0}" = 1 ]; then
    demo ob1 f1_reset
    demo ob1 f3_drop
    demo ob1 f4_kill
fi
if [ -s "$FAULTS_RESULTS" ]; then
    echo "== side by side (outcome per PML)"
    awk -F'|' '{ k = $1; if (!(k in seen)) { seen[k] = 1; order[++n] = k } o[k, $2] = $3 }
        END { printf "   %-30s %-22s %s\n", "scenario", "bfo", "ob1"
              for (i = 1; i <= n; i++) { k = order[i]
                  printf "   %-30s %-22s %s\n", k, ((k, "bfo") in o) ? o[k, "bfo"] : "-", ((k, "ob1") in o) ? o[k, "ob1"] : "-" } }' "$FAULTS_RESULTS"
    echo "   details:"
    sed 's/^/   - /; s/|/: /; s/|/ /; s/|/: /' "$FAULTS_RESULTS" | cut -c1-250
fi
extra=""
[ $S -gt 0 ] && extra+=", $S skipped"
[ $N -gt 0 ] && extra+=", $N noted"
echo "== check-pml faults: $(( $(date +%s) - start ))s"
echo "tests: $P passed, $F failed${extra:+ (${extra#, })}"
[ $F = 0 ]
