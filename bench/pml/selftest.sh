#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/pml/selftest.sh - checks the harness itself, with Open MPI's ob1 only
# (no pml/bfo needed), in about a minute:
#   1. pml_bench under ob1 (tcp btl) finishes and prints every size;
#   2. under a preloaded shim that damages received payloads (corrupt_shim.c:
#      middle byte, first byte, bandwidth phase only) pml_bench fails with
#      VERIFY FAILED and a nonzero exit, every time;
#   3. run.sh with that shim exits 1 and records verify-failed;
#   4. run.sh with PML_BENCH_STANDIN=1 (bfo configurations played by ob1)
#      exits 0 and produces the table with every ratio and a verdict per
#      target, the JSON and (with gnuplot) the PNG.
#   bash bench/pml/selftest.sh        (OUT: default build/bench-pml-selftest)
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
OUT=${OUT:-$ROOT/build/bench-pml-selftest}
case $OUT in /*) ;; *) OUT=$ROOT/$OUT ;; esac
mkdir -p "$OUT"
MPICC=${MPICC:-mpicc}
BIN=$OUT/pml_bench
SHIM=$OUT/corrupt_shim.so
$MPICC -O2 -g -Wall -Wextra -o "$BIN" "$HERE/pml_bench.c" || exit 2
$MPICC -O2 -g -Wall -fPIC -shared -o "$SHIM" "$HERE/corrupt_shim.c" || exit 2
MPIRUN="mpirun --allow-run-as-root --oversubscribe -np 2 --mca pml ob1 --mca btl self,tcp --mca btl_tcp_if_include lo"
SZ=8,16,1K,64K-1,64K+1,1M
fails=0
ok()  { echo "selftest: ok    $*"; }
bad() { echo "selftest: FAIL  $*"; fails=$((fails + 1)); }

$MPIRUN "$BIN" --sizes $SZ --iters 200 > "$OUT/clean.out" 2> "$OUT/clean.err"
rc=$?
n=$(grep -c '^pml_bench size=' "$OUT/clean.out")
if [ $rc = 0 ] && [ "$n" = 6 ] && grep -q '^pml_bench done' "$OUT/clean.out"; then ok "clean run: 6 sizes"
else bad "clean run: exit $rc, $n sizes"; cat "$OUT/clean.err"; fi

# what must catch each damage: the full check (first iteration), the stamp
# (every iteration, warm-up included), the full check of the first window
for mode in mid first bw; do
    env=(-x PMLB_CORRUPT=$mode)
    want='phase=latency '
    [ $mode = first ] && want='phase=latency-stamp '
    [ $mode = bw ] && { env=(-x PMLB_CORRUPT=mid -x PMLB_CORRUPT_BW=1); want='phase=bandwidth '; }
    $MPIRUN -x LD_PRELOAD="$SHIM" "${env[@]}" "$BIN" --sizes $SZ --iters 200 > "$OUT/$mode.out" 2> "$OUT/$mode.err"
    rc=$?
    line=$(grep -m1 'VERIFY FAILED' "$OUT/$mode.err")
    if [ $rc != 0 ] && [[ $line == *"$want"* ]]; then ok "damage '$mode' caught (exit $rc): ${line#pml_bench }"
    else bad "damage '$mode' not caught by $want: exit $rc, ${line:-no VERIFY FAILED line}"; fi
done

OUT=$OUT/run-damaged ROUNDS=1 CONFIGS=ob1-tcp SIZES=8,1M NETPIPE=0 PML_BENCH_BIN=$BIN \
    MPIRUN_ARGS="-x LD_PRELOAD=$SHIM -x PMLB_CORRUPT=mid" bash "$HERE/run.sh" > "$OUT/run-damaged.log" 2>&1
rc=$?
if [ $rc = 1 ] && grep -q 'verify-failed' "$OUT/run-damaged/raw/manifest.tsv"; then ok "run.sh: damaged run -> exit 1, verify-failed"
else bad "run.sh: damaged run -> exit $rc"; tail -20 "$OUT/run-damaged.log"; fi

OUT=$OUT/run-standin ROUNDS=${SELFTEST_ROUNDS:-2} SIZES=8,4K,64K+1,1M,2M NP_ARGS="-l 8 -u 1048576 -p 0 -n 20" \
    PML_BENCH_BIN=$BIN PML_BENCH_STANDIN=1 bash "$HERE/run.sh" > "$OUT/run-standin.log" 2>&1
rc=$?
t=$OUT/run-standin/table.txt
if [ $rc = 0 ] && [ -s "$t" ] && [ -s "$OUT/run-standin/pml-bench.json" ] \
   && [ "$(grep -c '^  \[\(met   \|MISSED\)\]' "$t")" = 10 ] && ! grep -q 'n/a' "$t" \
   && python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["medians"]) == 6' "$OUT/run-standin/pml-bench.json"
then ok "run.sh: stand-in run -> exit 0, 10 targets judged, 6 configurations in the JSON"
else bad "run.sh: stand-in run -> exit $rc"; tail -40 "$OUT/run-standin.log"; fi
if command -v gnuplot >/dev/null; then
    [ -s "$OUT/run-standin/pml-bench.png" ] && ok "PNG written" || bad "no PNG"
fi
[ $fails = 0 ] && echo "selftest: all passed" || echo "selftest: $fails FAILED"
[ $fails = 0 ]
