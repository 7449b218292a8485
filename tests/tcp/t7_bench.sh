#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# (g) bfo bench with the raw TCP baseline, 2 ranks, 2 rails: the CSV is well
# formed and every value positive.  The ratio targets (8 B latency at most
# 1.10x raw, 1 MiB bandwidth at least 0.90x raw) are printed, not enforced:
# these machines are small and noisy.
. "$(dirname "$0")/lib.sh"
# Five measured rounds (the bench's default; bfo and raw alternate, so drift
# of the machine's speed falls on both): about 2 s alone, 10-15 s under the
# sanitizers or with a third busy process on 2 cores, hence the generous
# limits (a hang still fails, in 45 s).
timeout 50 "$BFO_TCP" run -n 2 --rails "$RAILS" --timeout 45 -- \
    "$BFO_TCP" bench --sizes 8,64K,1M --baseline --rounds 5 --timeout 40 --csv "$WORK/bench.csv" \
    > "$WORK/out" 2> "$WORK/err" || fail "exit status $?"
[ -s "$WORK/bench.csv" ] || fail "no CSV"
cat "$WORK/out"
head -1 "$WORK/bench.csv" | grep -qx 'size,lat_us,bw_MBps,raw_lat_us,raw_bw_MBps,lat_ratio,bw_ratio,lat_min_us,raw_lat_min_us' ||
    fail "bad CSV header: $(head -1 "$WORK/bench.csv")"
[ "$(tail -n +2 "$WORK/bench.csv" | cut -d, -f1 | tr '\n' ' ')" = "8 65536 1048576 " ] ||
    fail "expected rows for 8, 65536, 1048576: $(tail -n +2 "$WORK/bench.csv" | cut -d, -f1 | tr '\n' ' ')"
awk -F, 'NR > 1 { if (NF != 9) { print "row " NR ": " NF " fields"; bad = 1 }
                  for (i = 1; i <= NF; i++) if (!($i ~ /^[0-9]+(\.[0-9]+)?$/) || $i + 0 <= 0) {
                      print "row " NR " field " i ": \"" $i "\" is not a positive number"; bad = 1 } }
         END { exit bad }' "$WORK/bench.csv" || fail "malformed CSV: $(cat "$WORK/bench.csv")"
lat8=$(awk -F, '$1 == 8 { print $6 }' "$WORK/bench.csv")
bw1m=$(awk -F, '$1 == 1048576 { print $7 }' "$WORK/bench.csv")
echo "   ratios (not enforced): 8 B latency ours/raw $lat8 (target <= 1.10), 1 MiB bandwidth ours/raw $bw1m (target >= 0.90)"
echo "ok: t7 bench CSV well formed, every value positive"

# --plot through bench/plot.sh (1 rail and 2 rails, each with its raw
# baseline, then one plot of the three): both CSVs and a PNG come out.
if command -v gnuplot >/dev/null; then
    bash "$(dirname "$0")/../../bench/plot.sh" "$BFO_TCP" "$WORK/plot/b.png" -- --sizes 8,4K,64K \
        --rounds 1 --timeout 40 > "$WORK/out" 2> "$WORK/err" || fail "bench/plot.sh: exit status $?"
    for f in b.png b-1rail.csv b-2rails.csv; do [ -s "$WORK/plot/$f" ] || fail "bench/plot.sh: no $f"; done
    [ "$(head -c 8 "$WORK/plot/b.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
        fail "bench/plot.sh: $WORK/plot/b.png is not a PNG"
    grep -q "plot written to" "$WORK/err" || fail "bench/plot.sh: bfo bench did not say it wrote the plot"
    echo "ok: t7 bench/plot.sh drew 1 rail, 2 rails and raw TCP ($(stat -c %s "$WORK/plot/b.png") bytes of PNG)"
else
    echo "skip: t7 plot (no gnuplot; Debian package gnuplot-nox)"
fi
