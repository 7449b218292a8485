# SPDX-License-Identifier: BSD-3-Clause
# lib3.sh - shared by tests/netns/n2_relay.sh and bench/relay.sh: three
# network namespaces, as three hosts, each on two bridges (two rails) and a
# third one for the wire-up (the bootstrap, as an MPI runtime's own
# network); the bridges live in a fourth namespace, the switch.  All made
# by the script itself, removed when it ends.  Needs root, ip and nft, and
# BFO_NETNS (the bfo binary).  Gives: addr RANK RAIL, rails_of RANK, BOOT,
# cut A B / uncut A B (nftables: every packet between ranks A and B
# dropped, both rails, both ways), mono, fail, skip, PIDS (killed at the
# end).
set -u
: "${BFO_NETNS:?set BFO_NETNS to the bfo binary (make check-netns does)}"
BFO_NETNS=$(readlink -f "$BFO_NETNS")
WORK=$(mktemp -d /tmp/bfo-relay.XXXXXX)
TAG=r$$
NS0=${TAG}n0; NS1=${TAG}n1; NS2=${TAG}n2; NSS=${TAG}sw
NET=$(( ($$ % 200) + 20 ))
# rail r of rank i: 10.7r.NET.(i+1); the wire-up 10.79.NET.*
addr() { echo "10.7$2.$NET.$(( $1 + 1 ))"; }
rails_of() { echo "$(addr "$1" 0),$(addr "$1" 1)"; }
BOOT=$(addr 0 9):7$((NET % 10))10
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
    for ns in "$NS0" "$NS1" "$NS2" "$NSS"; do ip netns del "$ns" 2>/dev/null; done
    rm -rf "$WORK"
}
trap cleanup EXIT
fail() {
    echo "FAIL: $*"
    for i in 0 1 2; do echo "--- rank $i stderr (last 25 lines)"; tail -25 "$WORK/err$i" 2>/dev/null; done
    exit 1
}
skip() { echo "skip: $*"; exit 0; }

[ "$(id -u)" = 0 ] || skip "not root: network namespaces cannot be made"
command -v ip >/dev/null && command -v nft >/dev/null || skip "ip or nft missing"

ip netns add "$NSS" || skip "ip netns add failed"
for r in 0 1 9; do
    ip netns exec "$NSS" ip link add "br$r" type bridge
    ip netns exec "$NSS" ip link set "br$r" up
done
for i in 0 1 2; do
    ns=${TAG}n$i
    ip netns add "$ns"
    ip netns exec "$ns" ip link set lo up
    for r in 0 1 9; do
        ip link add "${TAG}h$i$r" netns "$ns" type veth peer name "${TAG}s$i$r" netns "$NSS"
        ip netns exec "$NSS" ip link set "${TAG}s$i$r" master "br$r"
        ip netns exec "$NSS" ip link set "${TAG}s$i$r" up
        ip netns exec "$ns" ip addr add "$(addr "$i" "$r")/24" dev "${TAG}h$i$r"
        ip netns exec "$ns" ip link set "${TAG}h$i$r" up
    done
done
# cut A B: every packet between ranks A and B dropped, in both namespaces,
# both rails, both ways (an nft table in each); uncut A B removes them.
cut() {
    local a=$1 b=$2
    for pair in "$a $b" "$b $a"; do
        set -- $pair
        ip netns exec "${TAG}n$1" nft -f - <<NFT
table inet bfo_cut {
  chain in { type filter hook input priority 0; ip saddr { $(addr "$2" 0), $(addr "$2" 1) } drop; }
  chain out { type filter hook output priority 0; ip daddr { $(addr "$2" 0), $(addr "$2" 1) } drop; }
}
NFT
    done
}
uncut() {
    ip netns exec "${TAG}n$1" nft delete table inet bfo_cut
    ip netns exec "${TAG}n$2" nft delete table inet bfo_cut
}
mono() { awk '{ print $1 }' /proc/uptime; }

