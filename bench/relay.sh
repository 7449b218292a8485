#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/relay.sh - what a relay through a third rank costs against the
# direct rails (BFO_RELAY=1; docs/engine-design.md, "Relay"), measured in
# one run: three network namespaces on two bridges (tests/netns/lib3.sh),
# `bfo relay-bench` on them; ranks 0 and 1 measure batches of 8 B
# ping-pongs and 1 MiB streams while this script cuts them apart
# (nftables, both rails) and joins them again every HOLD seconds (default
# 2), so that batches alternate between the direct rails and the relay
# (rank 2); rank 0 prints the medians of each kind and their ratios.
#   BFO_NETNS=build/gcc/bfo bash bench/relay.sh
# Needs root (the namespaces); prints "skip" otherwise.
SECS=${SECS:-16}
HOLD=${HOLD:-2}
. "$(dirname "$0")/../tests/netns/lib3.sh"
set +e
for i in 2 1 0; do
    ip netns exec "${TAG}n$i" env BFO_RANK=$i BFO_SIZE=3 BFO_BOOTSTRAP=$BOOT BFO_RAILS="$(rails_of $i)" \
        BFO_RELAY=1 "$BFO_NETNS" relay-bench --duration "$SECS" > "$WORK/out$i" 2> "$WORK/err$i" &
    PIDS+=($!)
done
R0=${PIDS[2]}
sleep 1
cuts=0
while kill -0 "$R0" 2>/dev/null; do
    cut 0 1; cuts=$((cuts + 1))
    sleep "$HOLD"
    uncut 0 1
    sleep "$HOLD"
done
rc=0
for p in "${PIDS[@]}"; do wait "$p" || rc=1; done
cat "$WORK/out0"
echo "bench-relay: ranks 0 and 1 cut apart $cuts times, ${HOLD} s each, over ${SECS} s"
[ "$rc" = 0 ] || { for i in 0 1 2; do echo "--- rank $i"; tail -5 "$WORK/err$i"; done; exit 1; }
