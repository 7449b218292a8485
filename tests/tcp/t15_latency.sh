#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# (m) No cliff (issue 16, item 10): bfo bench --latency, every size from 8 B
# to 4 MiB and the one 1 KiB above the eager limit, next to raw TCP between
# the same two processes, medians of 5 interleaved rounds, over one rail (a
# raw socket is one connection too).  Twice: with the TCP default (64K, no
# BFO_EAGER_LIMIT: the table must say 65536 B) and with BFO_EAGER_LIMIT=4K
# (the engine's generic default).  The tables
# and the verdict on the targets (every size at most 1.5x raw, 8 B and 1 MiB
# at most 1.2x) are printed, not enforced: these machines are small and
# noisy.  Only a gross miss up to 128 KiB fails, judged on the fastest
# iterations (min over every round, bfo against raw: a cliff moves the
# minimum too, other processes on the machine hardly do): above 3x with
# 64K; above 5x with 4K,
# where the sizes just above the limit are a rendezvous (three one-way trips
# where raw TCP makes one, so near 3x by nature; the cliff was 8x, every
# rendezvous waiting for a delayed ack).  A size over it is measured again
# once (7 rounds) and fails only if it is over again.  Larger sizes are
# printed, not judged: with other work on the 2 cores a rank that is not
# running costs a time slice per exchange, and a rendezvous of 256 KiB and
# more has many (512 KiB in flight; docs/engine-design.md, "Latency across
# the eager limit"): medians of 30 ms against raw's 6 ms were seen at
# 1 MiB under a load of 8, where a quiet machine gives 0.3 ms, below raw.
. "$(dirname "$0")/lib.sh"
expect_sizes() { # the sizes the table must have: 8 B to 4 MiB, and limit + 1 KiB
    local above=$(($1 + 1024)) s=8 out=""
    while [ $s -le $((4 * 1024 * 1024)) ]; do
        if [ $above -gt 0 ] && [ $above -lt $s ]; then out="$out$above "; above=0; fi
        out="$out$s "
        s=$((s * 2))
    done
    echo "$out"
}
unset BFO_EAGER_LIMIT
for lim in 64K 4K; do
    bytes=$(( ${lim%K} * 1024 ))
    gross=$([ "$lim" = 64K ] && echo 3 || echo 5)
    env=$([ "$lim" = 64K ] || echo "BFO_EAGER_LIMIT=$lim") # 64K: the TCP default
    # About 10 s alone; a minute or more with other busy processes on 2 cores
    # (a descheduled rank costs a time slice per exchange), hence the limits.
    env $env timeout 400 "$BFO_TCP" run -n 2 --rails 127.0.0.1 --timeout 380 -- \
        "$BFO_TCP" bench --latency --rounds 5 --max-iters 200 --timeout 360 --csv "$WORK/lat.csv" \
        > "$WORK/out" 2> "$WORK/err" || fail "eager limit $lim: exit status $?"
    cat "$WORK/out"
    grep -q "eager limit $bytes B" "$WORK/out" || fail "eager limit $lim: the table does not say $bytes B"
    grep -qE '^targets: (PASS|FAIL)' "$WORK/out" || fail "eager limit $lim: no verdict line"
    verdict=$(sed -n 's/^targets: \([A-Z]*\).*/\1/p' "$WORK/out")
    head -1 "$WORK/lat.csv" | grep -qx 'size,protocol,lat_us,raw_lat_us,lat_ratio,target,ok,lat_min_us,raw_lat_min_us' ||
        fail "bad CSV header: $(head -1 "$WORK/lat.csv")"
    got=$(tail -n +2 "$WORK/lat.csv" | cut -d, -f1 | tr '\n' ' ')
    [ "$got" = "$(expect_sizes $bytes)" ] || fail "eager limit $lim: sizes $got, expected $(expect_sizes $bytes)"
    awk -F, -v lim="$bytes" 'NR > 1 {
            if (NF != 9) { print "row " NR ": " NF " fields"; bad = 1 }
            for (i = 3; i <= 9; i++) if (i != 6 && i != 7 && (!($i ~ /^[0-9]+(\.[0-9]+)?$/) || $i + 0 <= 0)) {
                print "row " NR " field " i ": \"" $i "\" is not a positive number"; bad = 1 }
            if ($2 != ($1 <= lim ? "eager" : "rndv")) { print "row " NR ": protocol " $2; bad = 1 } }
         END { exit bad }' "$WORK/lat.csv" || fail "malformed CSV: $(cat "$WORK/lat.csv")"
    # a gross miss is measured again, once, with 7 rounds: a burst of other
    # work on the machine rarely lands on the same size twice
    over=$(awk -F, -v g="$gross" 'NR > 1 && $1 <= 131072 && $8 > g * $9 { printf "%s%s", sep, $1; sep = "," }' \
        "$WORK/lat.csv")
    if [ -n "$over" ]; then
        echo "   fastest iteration above ${gross}x raw's: $over B; measuring again"
        env $env timeout 400 "$BFO_TCP" run -n 2 --rails 127.0.0.1 --timeout 380 -- \
            "$BFO_TCP" bench --latency --sizes "$over" --rounds 7 --max-iters 200 --timeout 360 \
            --csv "$WORK/again.csv" > "$WORK/out" 2> "$WORK/err" || fail "eager limit $lim, again: exit status $?"
        cat "$WORK/out"
        over=$(awk -F, -v g="$gross" 'NR > 1 && $8 > g * $9 { printf "%s B: min %.2f us, raw %.2f us; ", $1, $8, $9 }' \
            "$WORK/again.csv")
        [ -z "$over" ] || fail "eager limit $lim: gross miss (above ${gross}x raw, twice): $over"
    fi
    echo "ok: t15 latency table with eager limit $lim ${env:-(the TCP default)}, every size to 128 KiB within ${gross}x raw at its fastest (targets: $verdict, printed, not enforced)"
done
