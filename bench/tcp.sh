#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/tcp.sh - bfo over TCP loopback rails against raw TCP and against
# itself, ratios from one run each: the median of ROUNDS (default 5)
# interleaved rounds' ratios, and the worst round.
#   8 B latency      bfo's half round trip over raw TCP's, both in the same
#                    two processes, the order alternating every round (bfo
#                    bench --latency; ROUNDS + 2 rounds: the median moves
#                    most); target at most 1.05x
#   1 MiB bandwidth  bfo's stream over raw TCP's, the same way (bfo bench
#                    --baseline); target at least 0.90x, no round under 0.80x
#   two rails        1 MiB bandwidth over RAILS (default 127.0.0.2 and
#                    127.0.0.3) against the first alone: two bfo_nets in the
#                    same two processes, measured in turn (bfo bench
#                    --compare); target at least 1.0x (adding a rail must
#                    not cost throughput)
# The targets are printed with "met" or "MISSED", not enforced: on 2
# shared cores they move from run to run (docs/engine-design.md, "Open
# questions").  Exit 1 only when a run fails.
#   bash bench/tcp.sh build/gcc/bfo
set -u
BFO=${1:?usage: bench/tcp.sh BFO}
ROUNDS=${ROUNDS:-5}
MSGS=${MSGS:-2000}
RAILS=${RAILS:-127.0.0.2,127.0.0.3}
ONE=${RAILS%%,*}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

run() { # name args...: bfo bench, its per-round lines kept in $tmp/name
    local name=$1
    shift
    if ! "$BFO" bench --verbose "$@" > "$tmp/$name.out" 2> "$tmp/$name.err"; then
        echo "bench-tcp: bfo bench $* failed:" >&2
        tail -5 "$tmp/$name.err" >&2
        exit 1
    fi
}
# per NAME KIND1 KIND2 WHAT: "median worst v1 v2" of the rounds' KIND1/KIND2
# ratios of WHAT (latency or bandwidth), worst the highest for latency and
# the lowest for bandwidth, v1 and v2 the medians of the values themselves
per() {
    awk -v k1="$2" -v k2="$3" -v what="$4" '
        function med(a, n,   i, j, t) {
            for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
            return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
        }
        /^bfo bench: [0-9]+ B round [0-9]+: / {
            r = $6; sub(":", "", r); kind = $7; w = $8
            v = (what == "latency") ? $10 : $9
            if (w == what) { val[kind, r] = v; rounds[r] = 1 }
        }
        END {
            n = 0
            for (r in rounds) if (((k1, r) in val) && ((k2, r) in val) && val[k2, r] > 0) {
                n++; q[n] = val[k1, r] / val[k2, r]; a[n] = val[k1, r]; b[n] = val[k2, r]
                if (n == 1 || (what == "latency" ? q[n] > worst : q[n] < worst)) worst = q[n]
            }
            if (!n) { print "none"; exit }
            printf "%.2f %.2f %.2f %.2f\n", med(q, n), worst, med(a, n), med(b, n)
        }' "$tmp/$1.err"
}
verdict() { # ratio worst kind target [floor]
    awk -v r="$1" -v w="$2" -v k="$3" -v t="$4" -v f="${5:-}" 'BEGIN {
        ok = (k == "at most") ? r <= t : r >= t
        if (f != "") ok = ok && w >= f
        print ok ? "met" : "MISSED" }'
}

run lat --latency --sizes 8 --rails "$ONE" --rounds $((ROUNDS + 2))
run bw --sizes 1M --baseline --rails "$ONE" --rounds "$ROUNDS" --msgs "$MSGS" --max-iters 10
run two --sizes 1M --rails "$RAILS" --compare "$ONE" --rounds "$ROUNDS" --msgs "$MSGS" --max-iters 10

read -r lr lw lb la < <(per lat bfo raw latency)
read -r br bw bb ba < <(per bw bfo raw bandwidth)
read -r tr tw tb ta < <(per two bfo compare bandwidth)
[ "$lr" = none ] || [ "$br" = none ] || [ "$tr" = none ] && { echo "bench-tcp: no rounds measured" >&2; exit 1; }
echo "bench-tcp: bfo over TCP loopback rails; ratio: the median of $ROUNDS or more interleaved rounds' ratios, worst: the worst round's"
printf "  %-26s %12s %12s %6s %6s  %s\n" measure bfo against ratio worst target
printf "  %-26s %9.2f us %9.2f us %6s %6s  %s: %s\n" "8 B latency, raw TCP" "$lb" "$la" "$lr" "$lw" \
       "at most 1.05x" "$(verdict "$lr" "$lw" "at most" 1.05)"
printf "  %-26s %7.0f MB/s %7.0f MB/s %6s %6s  %s: %s\n" "1 MiB bandwidth, raw TCP" "$bb" "$ba" "$br" "$bw" \
       "at least 0.90x, no round under 0.80x" "$(verdict "$br" "$bw" "at least" 0.90 0.80)"
printf "  %-26s %7.0f MB/s %7.0f MB/s %6s %6s  %s: %s\n" "1 MiB, 2 rails against 1" "$tb" "$ta" "$tr" "$tw" \
       "at least 1.0x ($RAILS against $ONE)" "$(verdict "$tr" "$tw" "at least" 1.0)"
