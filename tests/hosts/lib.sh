# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# tests/hosts/lib.sh - hosts made of namespaces, for MPI jobs across hosts
# on one machine; sourced (bash) by tests/hosts/run.sh.  Needs root,
# unshare, nsenter, ip, nft, mpirun.
#
# Each host is a process (a "holder", sleep) started by
# `unshare --net --uts` with its own hostname (nodeN), so Open MPI sees
# N nodes by name, pml/bfo's shared-memory rail sees N hosts (it compares
# boot id, host name and network namespace), and getifaddrs() sees only
# that host's interfaces.  Nothing is named in the root namespace: no
# `ip netns` name, no interface, no bridge there, so nothing can clash
# with tests/netns or another run of this harness; every link is made
# directly inside the namespaces it joins.  The PID namespace and the
# file system are shared (a process entering a host with nsenter -t PID
# -n -u sees the same files and processes; /dev/shm too: bfo's shm rail
# and Open MPI's vader key their segments by host and namespace).
#
#   switch   bridges br0 (management), br1 (rail 1), br2 (rail 2)
#   head     mgmt0 10.36.0.1/24: where mpirun runs (like a login node;
#            it runs no rank: the hostfile lists node1..N only)
#   nodeI    mgmt0 10.36.0.(10+I)/24          on br0
#            eth1  10.36.1.(10+I)/24, fd36:1::(10+I)/64  on br1
#            eth2  10.36.2.(10+I)/24, fd36:2::(10+I)/64  on br2
#
# Open MPI's own runtime (mpirun <-> orted, the modex) uses the management
# network only (oob_tcp_if_include 10.36.0.0/24), the MPI traffic the
# rails; mpirun reaches each node through tests/hosts/agent.sh, the rsh
# agent, which enters the node's namespaces.
#
# Per-host variations, set before hosts_up (lists of host numbers):
#   HOSTS_ONE_RAIL="4"  node4 has eth1 (rail 1) only
#   HOSTS_SWAPPED="3"   node3's interfaces are made in the other order and
#                       named the other way: eth1 is on rail 2's network,
#                       eth2 on rail 1's (a host whose NIC order differs)
#   HOSTS_RACKS="3 4"   a routed fabric, one subnet per rack: every node has
#                       one rail, eth1; the nodes listed are in rack 2
#                       (10.36.2.0/24 on br2), the others in rack 1
#                       (10.36.1.0/24 on br1); the switch routes between
#                       the racks (10.36.1.1, 10.36.2.1; IPv4 only)
#
# hosts_up N; hosts_mpirun LOG SECS NP ARGS...; hosts_cut I RAIL;
# hosts_uncut I; hosts_down (also on EXIT).  Hold /work/.netlock (flock)
# around a run that uses the network: run.sh takes it.
set -u
HOSTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
HOSTS_ROOT=$(cd "$HOSTS_DIR/../.." && pwd)
HOSTS_WORK=${HOSTS_WORK:-$(mktemp -d /tmp/bfo-hosts.XXXXXX)}
HOSTS_ONE_RAIL=${HOSTS_ONE_RAIL:-}
HOSTS_SWAPPED=${HOSTS_SWAPPED:-}
HOSTS_RACKS=${HOSTS_RACKS:-}
HOSTS_SW=
HOSTS_HEAD=
declare -a HOSTS_PID=()
: >"$HOSTS_WORK/hosts.map"

# holder NAME: a process in a new net + UTS namespace whose hostname is
# NAME, its pid in HOLDER (the namespaces live as long as it does)
hosts_holder() {
    local name=$1 me n
    unshare --net --uts sh -c "hostname '$name' && ip link set lo up && exec sleep 100000" </dev/null &
    HOLDER=$!
    disown "$HOLDER"   # no "Killed" from bash when hosts_down ends it
    me=$(readlink /proc/self/ns/net)
    for n in $(seq 100); do
        if [ "$(readlink "/proc/$HOLDER/ns/net" 2>/dev/null)" != "$me" ] &&
            [ "$(nsenter -t "$HOLDER" -u hostname 2>/dev/null)" = "$name" ] &&
            [ "$(readlink "/proc/$HOLDER/exe")" = "$(readlink -f "$(command -v sleep)")" ]; then
            return 0
        fi
        sleep 0.05
    done
    echo "hosts: the holder of $name did not come up" >&2
    return 1
}

in_host() { local pid=${HOSTS_PID[$1]}; shift; nsenter -t "$pid" -n -u "$@"; }
in_sw() { nsenter -t "$HOSTS_SW" -n "$@"; }
in_head() { nsenter -t "$HOSTS_HEAD" -n -u "$@"; }
hosts_in() { [[ " $2 " == *" $1 "* ]]; }   # I "LIST": is host I in LIST?

# hosts_ifname I RAIL: node I's interface on rail RAIL (1, 2; 0: mgmt0)
hosts_ifname() {
    if [ "$2" = 0 ]; then echo mgmt0
    elif hosts_in "$1" "$HOSTS_SWAPPED"; then echo "eth$((3 - $2))"
    else echo "eth$2"; fi
}

# link I RAIL: node I's veth onto the switch's bridge of RAIL (0: br0)
hosts_link() {
    local i=$1 r=$2 pid=${HOSTS_PID[$1]} dev
    dev=$(hosts_ifname "$i" "$r")
    ip link add name "$dev" netns "$pid" type veth peer name "n${i}p$r" netns "$HOSTS_SW" || return 1
    in_sw ip link set "n${i}p$r" master "br$r" up || return 1
    if [ "$r" = 0 ]; then
        in_host "$i" ip addr add "10.36.0.$((10 + i))/24" dev "$dev" || return 1
    else
        in_host "$i" ip addr add "10.36.$r.$((10 + i))/24" dev "$dev" || return 1
        in_host "$i" ip -6 addr add "fd36:$r::$((10 + i))/64" dev "$dev" nodad || return 1
    fi
    in_host "$i" ip link set "$dev" up
}

# link_rack I: (HOSTS_RACKS) node I's one rail, eth1, on its rack's subnet,
# with a route to the other rack's through the switch
hosts_link_rack() {
    local i=$1 pid=${HOSTS_PID[$1]} r=1 o=2
    hosts_in "$i" "$HOSTS_RACKS" && r=2 o=1
    ip link add name eth1 netns "$pid" type veth peer name "n${i}p$r" netns "$HOSTS_SW" || return 1
    in_sw ip link set "n${i}p$r" master "br$r" up || return 1
    in_host "$i" ip addr add "10.36.$r.$((10 + i))/24" dev eth1 || return 1
    in_host "$i" ip link set eth1 up || return 1
    in_host "$i" ip route add "10.36.$o.0/24" via "10.36.$r.1" dev eth1
}

# hosts_up N: the switch, the head and N nodes, their links and hostfile
hosts_up() {
    local n=$1 i r rails
    [ "$(id -u)" = 0 ] || { echo "hosts: not root: namespaces cannot be made" >&2; return 1; }
    hosts_holder switch || return 1
    HOSTS_SW=$HOLDER
    # the switch forwards frames, it has no address of its own
    in_sw sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
    for r in 0 1 2; do
        in_sw ip link add "br$r" type bridge || return 1
        in_sw ip link set "br$r" up
    done
    if [ -n "$HOSTS_RACKS" ]; then # the racks' router
        in_sw ip addr add 10.36.1.1/24 dev br1 && in_sw ip addr add 10.36.2.1/24 dev br2 &&
            in_sw sysctl -qw net.ipv4.ip_forward=1 || return 1
    fi
    hosts_holder head || return 1
    HOSTS_HEAD=$HOLDER
    ip link add name mgmt0 netns "$HOSTS_HEAD" type veth peer name headp0 netns "$HOSTS_SW" || return 1
    in_sw ip link set headp0 master br0 up
    in_head ip addr add 10.36.0.1/24 dev mgmt0
    in_head ip link set mgmt0 up
    : >"$HOSTS_WORK/hostfile"
    for ((i = 1; i <= n; i++)); do
        hosts_holder "node$i" || return 1
        HOSTS_PID[i]=$HOLDER
        echo "node$i $HOLDER" >>"$HOSTS_WORK/hosts.map"
        echo "node$i slots=4" >>"$HOSTS_WORK/hostfile"
        rails="1 2"
        hosts_in "$i" "$HOSTS_ONE_RAIL" && rails=1
        hosts_in "$i" "$HOSTS_SWAPPED" && rails=$(echo "$rails" | tr ' ' '\n' | sort -r | tr '\n' ' ')
        hosts_link "$i" 0 || return 1
        if [ -n "$HOSTS_RACKS" ]; then
            hosts_link_rack "$i" || return 1
            continue
        fi
        for r in $rails; do hosts_link "$i" "$r" || return 1; done
    done
    # every node answers on every network it has, IPv4 and IPv6 (a TCP
    # connect to a closed port: refused is an answer), from the head on
    # the management network, from node1 on the rails
    local mg='' rl=''
    for ((i = 1; i <= n; i++)); do
        mg="$mg 10.36.0.$((10 + i))"
        if [ -n "$HOSTS_RACKS" ]; then # across the racks: routed
            hosts_in "$i" "$HOSTS_RACKS" && rl="$rl 10.36.2.$((10 + i))" || rl="$rl 10.36.1.$((10 + i))"
            continue
        fi
        for r in 1 2; do
            hosts_in "$i" "$HOSTS_ONE_RAIL" && [ "$r" = 2 ] && continue
            rl="$rl 10.36.$r.$((10 + i)) fd36:$r::$((10 + i))"
        done
    done
    # shellcheck disable=SC2086 # one address a word
    in_head python3 "$HOSTS_DIR/reach.py" $mg || return 1
    # shellcheck disable=SC2086
    in_host 1 python3 "$HOSTS_DIR/reach.py" $rl || return 1
}

# hosts_cut I RAIL: every packet in or out of node I's interface on RAIL
# dropped (nftables, in node I's namespace); hosts_uncut I removes it
hosts_cut() {
    local dev
    dev=$(hosts_ifname "$1" "$2")
    in_host "$1" nft -f - <<NFT
table inet bfo_hosts_cut {
  chain in { type filter hook input priority 0; iifname "$dev" counter drop; }
  chain out { type filter hook output priority 0; oifname "$dev" counter drop; }
}
NFT
}
hosts_uncut() { in_host "$1" nft delete table inet bfo_hosts_cut 2>/dev/null; true; }
# hosts_cut_count I: packets the cut dropped on node I
hosts_cut_count() {
    in_host "$1" nft list table inet bfo_hosts_cut 2>/dev/null |
        awk '/counter packets/ { for (k = 1; k <= NF; k++) if ($k == "packets") s += $(k + 1) } END { print s + 0 }'
}

# hosts_mpirun LOG SECS NP ARGS...: mpirun on the head, NP ranks on the
# nodes (the hostfile's slots: 4 each), killed after SECS; output to LOG
hosts_mpirun() {
    local log=$1 to=$2 np=$3
    shift 3
    pmlt_bounded "$to" "$log" nsenter -t "$HOSTS_HEAD" -n -u \
        mpirun --allow-run-as-root --oversubscribe -np "$np" --hostfile "$HOSTS_WORK/hostfile" \
        --mca plm_rsh_agent "$HOSTS_DIR/agent.sh $HOSTS_WORK/hosts.map" \
        --mca plm_rsh_no_tree_spawn 1 \
        --mca oob_tcp_if_include 10.36.0.0/24 "$@"
}

# hosts_down: every process left in the hosts' namespaces (ranks, orteds:
# only this harness starts processes there), then the holders; their
# namespaces, links and bridges go with them
hosts_down() {
    local pids=" $HOSTS_SW $HOSTS_HEAD ${HOSTS_PID[*]} " nss='' p ns
    for p in $pids; do
        ns=$(readlink "/proc/$p/ns/net" 2>/dev/null) && nss="$nss $ns"
    done
    if [ -n "$nss" ]; then
        for p in /proc/[0-9]*; do
            ns=$(readlink "$p/ns/net" 2>/dev/null) || continue
            [[ " $nss " == *" $ns "* ]] && kill -9 "${p#/proc/}" 2>/dev/null
        done
    fi
    # (a holder is gone, or a zombie, when its namespace link is)
    for p in $pids; do
        while readlink "/proc/$p/ns/net" >/dev/null 2>&1; do sleep 0.02; done
    done
    HOSTS_SW=; HOSTS_HEAD=; HOSTS_PID=()
    : >"$HOSTS_WORK/hosts.map"
}
hosts_exit() {
    hosts_down
    [ "${HOSTS_KEEP:-0}" = 1 ] || rm -rf "$HOSTS_WORK"
}
trap hosts_exit EXIT
trap "exit 143" TERM
trap "exit 130" INT
