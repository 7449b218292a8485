#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# (g) three Soft-RoCE devices, one rail each, no fault: every rail carries
# RDMA (each rail's peer reads with the key of that rail's own device, not
# one key per job packed in 64 bits, which left a third device to sends),
# every byte verified.  The guests put rxe on all three links.
# vm: BFO_VM_RXE=3
. "$(dirname "$0")/lib.sh"
export BFO_RAILS="verbs:rxe0,verbs:rxe1,verbs:rxe2"
stream --count 40 --size 262144 --timeout 100
wait_stream 110
[ "$rc" = 0 ] || fail "bfo stream exit status $rc"
[ "$ROLE" = a ] || exit 0
check_exact
[ "$(jget messages)" = 80 ] || fail "expected 80 messages, got $(jget messages)"
[ "$(jget failovers)" = 0 ] || fail "a failover without a fault"
reads=$(jget rdma_reads)
[ -n "$reads" ] && [ "$reads" -gt 0 ] || fail "no RDMA read (rdma_reads ${reads:-none}): the messages went by copy"
total=$(( $(jrail 0) + $(jrail 1) + $(jrail 2) ))
# Three equal devices: each carries a part.  Not an equal part: striping
# goes by each rail's measured rate, and between emulated (TCG) guests a
# rail's pieces take 110-130 ms, in bursts; a rail admitted 150 ms after
# the others, on probation, or demoted on its samples for a while, carried
# 7% and 9% of 80 messages (the bound was 15%).  At least 5%.
for r in 0 1 2; do
    [ $(( $(jrail $r) * 100 )) -ge $(( total * 5 )) ] ||
        fail "rail $r (rxe$r) carried $(jrail $r) of $total bytes: its device does no RDMA"
done
summary
say "rdma_reads $reads, rdma_writes $(jget rdma_writes)"
echo "ok: t7 three verbs devices, one rail each: RDMA on every rail, 80 messages verified"
