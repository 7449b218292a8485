#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# (t21) A stream striped over two rails makes about as many write calls per
# megabyte as over one rail.  The acknowledgements that come back on one
# connection free pieces for both; the TCP transport writes what the engine
# posts meanwhile at the end of parse, one call per connection (bfo_tcp.c,
# parse).  Written one call per piece instead, two loopback rails made 2.1
# to 2.3 times the writes of one rail in this stream, and carried 0.8 of
# one rail's bandwidth (docs/engine-design.md, "Open questions"); batched,
# 1.39 to 1.42.  Checked: at most 1.75 times.  The counts are the TCP
# transport's (its own counters "writes", "reads": bfo stream --json
# prints them by those names), both ranks, both directions, every message verified.
. "$(dirname "$0")/lib.sh"

# per_mib RAILS: the stream's write calls per MiB delivered (and its
# reads, acks), as "writes reads acks"
per_mib() {
    timeout 60 "$BFO_TCP" run -n 2 --rails "$1" --timeout 50 -- \
        "$BFO_TCP" stream --json --size 1M --count 1500 > "$WORK/out" 2> "$WORK/err" || fail "$1: exit status $?"
    check_exact
    expect_messages 3000
    [ "$(jget failovers)" = 0 ] || fail "$1: a failover without a fault"
    awk -v w="$(jget writes)" -v r="$(jget reads)" -v a="$(jget acks)" -v b="$(jget bytes)" \
        'BEGIN { m = b / 1048576; printf "%.2f %.2f %.2f\n", w / m, r / m, a / m }'
}
read -r w1 r1 a1 < <(per_mib 127.0.0.2) || exit 1
[ "$(jget writes)" -gt 0 ] && [ "$(jget reads)" -gt 0 ] || fail "no write or read counted on one rail"
read -r w2 r2 a2 < <(per_mib 127.0.0.2,127.0.0.3) || exit 1
both_rails_carried
ratio=$(awk -v a="$w2" -v b="$w1" 'BEGIN { printf "%.2f", a / b }')
echo "   per MiB: one rail $w1 writes, $r1 reads, $a1 standalone acks;" \
    "two rails $w2 writes, $r2 reads, $a2 standalone acks: writes $ratio times one rail's"
awk -v x="$ratio" 'BEGIN { exit !(x <= 1.75) }' ||
    fail "two rails made $ratio times the write calls of one rail per MiB (at most 1.75)"
echo "ok: t21 a stream over two rails makes about as many writes as over one"
