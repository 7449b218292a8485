#!/bin/bash
# bfo bench inside the guests (not in make check-verbs: run it with
# tests/verbs/run.sh build/cc/bfo tests/verbs/bench_guests.sh): ping-pong latency and streaming bandwidth
# over one verbs rail (rxe0), then over the TCP rail alone (functional:
# TCG numbers say nothing about real hardware).  Checks that every row is
# there with positive values.
. "$(dirname "$0")/lib.sh"
SIZES=8,4K,64K,1M
bench() { # label rails port
    BFO_RAILS=$2 BFO_BOOTSTRAP=10.0.2.1:$3 timeout 120 "$BFO" bench --sizes $SIZES --rounds 2 \
        --iters 40 --msgs 16 --timeout 100 --csv "$OUT/bench.$1.$ROLE.csv" 2> "$OUT/bench.$1.err.$ROLE"
}
bench verbs verbs:rxe0 7201 || fail "bfo bench over verbs:rxe0: exit status $?"
bench tcp "tcp:10.0.2.$ME" 7202 || fail "bfo bench over tcp: exit status $?"
[ "$ROLE" = a ] || exit 0
for k in verbs tcp; do
    f="$OUT/bench.$k.a.csv"
    [ "$(grep -c '^[0-9]' "$f")" = 4 ] || fail "$k: expected 4 rows in $f"
    awk -F, '/^[0-9]/ && !($2 > 0 && $3 > 0) { bad = 1 } END { exit bad }' "$f" || fail "$k: a value is not positive"
done
echo "measure: ping-pong half round trip (us) and stream bandwidth (MB/s) in the guests (TCG), verbs:rxe0 vs tcp:"
paste -d, "$OUT/bench.verbs.a.csv" "$OUT/bench.tcp.a.csv" |
    awk -F, '/^[0-9]/ { printf "measure:   size %8s B: verbs %9.1f us %7.2f MB/s | tcp %9.1f us %7.2f MB/s\n", $1, $2, $3, $11, $12 }'
echo "ok: bench_guests: bfo bench over a verbs rail and over the TCP rail"
