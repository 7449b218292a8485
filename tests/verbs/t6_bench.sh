#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# (f) bfo bench inside the guests: ping-pong latency and streaming
# bandwidth over one verbs rail alone (verbs:rxe0), then over the TCP rail
# alone, in the same two guests.  Functional figures only (TCG emulation
# says nothing about real hardware): it prints them and checks that every
# row is there; it asserts no performance.
#
# Sizes stay small: under TCG a verbs rail moves ~5 MB/s, and with 1 MiB
# messages the 16 a bandwidth round keeps in flight queue ~4 s of RDMA
# reads on the one queue pair, ahead of any PROBEACK: the bench's 1 s probe
# timeout then maps the rail out (and with the default sizes, up to 16 MiB,
# and counts, one run takes many minutes).
. "$(dirname "$0")/lib.sh"
SIZES=8,4K,64K
NSIZES=3
bench() { # label rails port
    local t0=$SECONDS rc
    BFO_RAILS=$2 BFO_BOOTSTRAP=10.0.2.1:$3 "$BFO" bench --sizes $SIZES --rounds 2 --iters 50 \
        --msgs 20 --timeout 60 --verbose --csv "$OUT/bench.$1.$ROLE.csv" 2> "$OUT/bench.$1.err.$ROLE"
    rc=$?
    say "bfo bench over $2: exit status $rc, $((SECONDS - t0)) s; $(grep 'engine: map-outs' "$OUT/bench.$1.err.$ROLE")"
    return $rc
}
bench verbs verbs:rxe0 7201 || fail "bfo bench over verbs:rxe0 failed (stderr: $OUT/bench.verbs.err.$ROLE)"
bench tcp "tcp:10.0.2.$ME" 7202 || fail "bfo bench over tcp failed (stderr: $OUT/bench.tcp.err.$ROLE)"
[ "$ROLE" = a ] || exit 0
for k in verbs tcp; do
    f="$OUT/bench.$k.a.csv"
    [ "$(grep -c '^[0-9]' "$f")" = $NSIZES ] || fail "$k: expected $NSIZES rows in $f"
    awk -F, '/^[0-9]/ && !($2 > 0 && $3 != "") { bad = 1 } END { exit bad }' "$f" || fail "$k: a row without figures in $f"
done
echo "measure: ping-pong half round trip (median, min; us) and stream bandwidth (MB/s) in the guests (TCG), verbs:rxe0 vs tcp alone:"
paste -d, "$OUT/bench.verbs.a.csv" "$OUT/bench.tcp.a.csv" |
    awk -F, '/^[0-9]/ { printf "measure:   %6s B: verbs %8.0f us (min %6.0f) %6.2f MB/s | tcp %8.0f us (min %6.0f) %6.2f MB/s\n", $1, $2, $8, $3, $11, $17, $12 }'
mo() { sed -n 's/.*engine: map-outs \([0-9]*\).*/\1/p' "$OUT/bench.$1.err.a"; }
echo "measure: map-outs during the benches (rank 0): verbs $(mo verbs), tcp $(mo tcp)"
echo "ok: t6 bfo bench over a verbs rail and over the TCP rail (figures above, not checked)"
