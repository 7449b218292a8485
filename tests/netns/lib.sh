# SPDX-License-Identifier: BSD-3-Clause
# lib.sh - shared by tests/netns/n*.sh: two network namespaces, as two
# hosts, joined by two veth pairs (two rails) and a third pair for the
# wire-up (the bootstrap, as an MPI runtime's own network), all made by the
# test itself and removed when it ends.  Needs root, ip, tc, nft, and
# BFO_NETNS (the bfo binary).
set -u
: "${BFO_NETNS:?set BFO_NETNS to the bfo binary (make check-netns does)}"
BFO_NETNS=$(readlink -f "$BFO_NETNS")
WORK=$(mktemp -d /tmp/bfo-netns-test.XXXXXX)
TAG=b$$
NSA=${TAG}a
NSB=${TAG}b
# rail i: 10.(60+i).x.1 in A, .2 in B; the wire-up on 10.69.x.*
NET=$(( ($$ % 200) + 20 ))
ADDR_A=10.60.$NET.1,10.61.$NET.1
ADDR_B=10.60.$NET.2,10.61.$NET.2
BOOT=10.69.$NET.1:7$((NET % 10))00
R0=; R1=
cleanup() {
    [ -n "$R0" ] && kill -9 "$R0" 2>/dev/null
    [ -n "$R1" ] && kill -9 "$R1" 2>/dev/null
    ip netns del "$NSA" 2>/dev/null
    ip netns del "$NSB" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; echo "--- rank 0 stderr (last 30 lines)"; tail -30 "$WORK/err0" 2>/dev/null
         echo "--- rank 1 stderr (last 30 lines)"; tail -30 "$WORK/err1" 2>/dev/null; exit 1; }
skip() { echo "skip: $*"; exit 0; }

[ "$(id -u)" = 0 ] || skip "not root: network namespaces cannot be made"
command -v ip >/dev/null && command -v tc >/dev/null && command -v nft >/dev/null || skip "ip, tc or nft missing"

inA() { ip netns exec "$NSA" "$@"; }
inB() { ip netns exec "$NSB" "$@"; }
# veth names: <tag>a<i> in A, <tag>b<i> in B; i = 0, 1 (rails), 9 (wire-up)
dev() { echo "${TAG}$1$2"; }

ip netns add "$NSA" || skip "ip netns add failed"
ip netns add "$NSB"
inA ip link set lo up
inB ip link set lo up
for i in 0 1 9; do
    ip link add "$(dev a $i)" netns "$NSA" type veth peer name "$(dev b $i)" netns "$NSB"
    inA ip addr add "10.6$i.$NET.1/24" dev "$(dev a $i)"
    inB ip addr add "10.6$i.$NET.2/24" dev "$(dev b $i)"
    inA ip link set "$(dev a $i)" up
    inB ip link set "$(dev b $i)" up
done

# shape RAIL RATE: tbf at RATE (tc's units: 20mbit) on both ends of the rail
shape() {
    local i=$1 rate=$2
    inA tc qdisc replace dev "$(dev a "$i")" root tbf rate "$rate" burst 64kb latency 100ms
    inB tc qdisc replace dev "$(dev b "$i")" root tbf rate "$rate" burst 64kb latency 100ms
}
unshape() {
    inA tc qdisc del dev "$(dev a "$1")" root 2>/dev/null
    inB tc qdisc del dev "$(dev b "$1")" root 2>/dev/null
    true
}
# nft_drop RAIL RULE: every packet arriving on the rail, both sides, that
# RULE (an nft expression; empty: all) selects is dropped.  nft_clear removes it.
nft_drop() {
    local i=$1 rule=$2
    for ns in "$NSA" "$NSB"; do
        local side; [ "$ns" = "$NSA" ] && side=a || side=b
        ip netns exec "$ns" nft -f - <<NFT
table inet bfo_rail$i {
  chain in { type filter hook input priority 0; iifname "$(dev $side "$i")" $rule drop; }
}
NFT
    done
}
nft_clear() {
    inA nft delete table inet "bfo_rail$1" 2>/dev/null
    inB nft delete table inet "bfo_rail$1" 2>/dev/null
    true
}
# loss RAIL PERCENT: that share of the rail's packets, at random, each way
loss() { nft_drop "$1" "numgen random mod 100 < $2"; }

# start RANK_ARGS...: both ranks, bfo stream with these arguments (rank 0
# writes JSON to $WORK/out0); R0, R1 their pids.
start() {
    inB env BFO_RANK=1 BFO_SIZE=2 BFO_BOOTSTRAP=$BOOT BFO_RAILS=$ADDR_B \
        "$BFO_NETNS" stream "$@" > "$WORK/out1" 2> "$WORK/err1" &
    R1=$!
    inA env BFO_RANK=0 BFO_SIZE=2 BFO_BOOTSTRAP=$BOOT BFO_RAILS=$ADDR_A \
        "$BFO_NETNS" stream --json "$@" > "$WORK/out0" 2> "$WORK/err0" &
    R0=$!
}
# finish: waits for both (120 s at most); fails on a non-zero exit
finish() {
    local rc0 rc1
    timeout 120 tail --pid="$R0" -f /dev/null
    wait "$R0"; rc0=$?; R0=
    timeout 30 tail --pid="$R1" -f /dev/null
    wait "$R1"; rc1=$?; R1=
    [ "$rc0" = 0 ] || fail "rank 0: exit status $rc0"
    [ "$rc1" = 0 ] || fail "rank 1: exit status $rc1"
}
STREAM_JSON=$WORK/out0
. "$(dirname "${BASH_SOURCE[0]}")/../stream_json.sh"
