#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# vm.sh - QEMU guests with Soft-RoCE (rdma_rxe) for the verbs backend's tests.
#
#   tests/verbs/vm.sh setup          guest kernel + modules + initramfs, cached in $BFO_VM_DIR
#   tests/verbs/vm.sh run1 SCRIPT    one guest "a": NICs eth0.. (rxe on the first $BFO_VM_RXE)
#   tests/verbs/vm.sh run2 SCRIPT    two guests "a" and "b", one point-to-point link per NIC
#
# The guests are TCG-emulated (no usable KVM here), boot the Debian kernel
# with a busybox initramfs (tests/verbs/guest-init.sh), mount this host's
# root filesystem read-only over 9p and run SCRIPT chrooted into it, in the
# current directory: the host's build of bfo, libibverbs and its rxe
# provider run unchanged.  Link i joins a.ethi (10.0.i.1) and b.ethi
# (10.0.i.2) through a pair of QEMU UDP sockets; rxeI sits on ethI for the
# first $BFO_VM_RXE links; the others are plain IP (TCP rails).
#
# SCRIPT sees ROLE (a|b), OUT (a directory shared with the host, writable),
# NICS, RXE, and PEER0.. (the other guest's address on each link).  It asks
# the host for a cable pull by appending a line to $OUT/mon.$ROLE, e.g.
#     echo "set_link n1 off" >> "$OUT/mon.a"      (n<i> is link i of that guest)
# The host sends each new line to that guest's QEMU monitor and then writes
# the number of lines done to $OUT/mon.$ROLE.done (tests/verbs/lib.sh: monitor).
#
# Environment: BFO_VM_DIR (cache, /var/tmp/bfo-vm), BFO_VM_OUT (output
# directory; default a new one under /var/tmp), BFO_VM_NICS (links, 3),
# BFO_VM_RXE (links with rxe, 2), BFO_VM_MEM (MiB, 512), BFO_VM_SMP (1),
# BFO_VM_TIMEOUT (seconds per guest, 300).
# Exit status: 0 when every guest's SCRIPT exited 0.
set -euo pipefail
VM_DIR=${BFO_VM_DIR:-/var/tmp/bfo-vm}
VM_TIMEOUT=${BFO_VM_TIMEOUT:-300}
VM_MEM=${BFO_VM_MEM:-512}
VM_SMP=${BFO_VM_SMP:-1}
HERE=$(cd "$(dirname "$0")" && pwd)

# the kernel modules the guest loads, in load order (no modprobe in the
# initramfs; crc32_generic is what rxe asks the crypto API for)
MODULES="crc32_generic virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci
failover net_failover virtio_net netfs fscache 9pnet 9pnet_virtio 9p ib_core ib_uverbs udp_tunnel
ip6_udp_tunnel rdma_rxe"

say() { echo "vm.sh: $*" >&2; }
die() { say "$*"; exit 1; }

need_tools() {
    local missing=()
    command -v qemu-system-x86_64 >/dev/null || missing+=(qemu-system-x86)
    command -v ibv_devinfo >/dev/null || missing+=(ibverbs-utils)
    [ -x /bin/busybox ] || missing+=(busybox-static)
    command -v rdma >/dev/null || missing+=(iproute2)
    [ -e /usr/include/infiniband/verbs.h ] || missing+=(libibverbs-dev)
    ls /usr/lib/*/libibverbs/librxe-rdmav*.so >/dev/null 2>&1 || missing+=(ibverbs-providers)
    if [ ${#missing[@]} -gt 0 ]; then
        [ "$(id -u)" = 0 ] || die "missing packages: ${missing[*]} (apt-get install them)"
        say "installing ${missing[*]}"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" rdma-core >/dev/null
    fi
}

setup() {
    local t0=$SECONDS
    need_tools
    mkdir -p "$VM_DIR"
    if [ ! -s "$VM_DIR/vmlinuz" ] || [ ! -s "$VM_DIR/modules.ok" ]; then
        local pkg tmp globs=()
        pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
        [ -n "$pkg" ] || die "cannot resolve the kernel package (apt-get update first)"
        tmp=$(mktemp -d "$VM_DIR/dl.XXXXXX")
        chmod 777 "$tmp" # apt's download user must be able to write here
        say "downloading $pkg"
        (cd "$tmp" && apt-get download -q "$pkg" >/dev/null 2>&1) || die "apt-get download $pkg failed"
        for m in $MODULES; do globs+=("*/$m.ko"); done
        mkdir "$tmp/x"
        dpkg-deb --fsys-tarfile "$tmp"/*.deb | tar -x -C "$tmp/x" --wildcards './boot/vmlinuz-*' "${globs[@]}"
        rm -rf "$VM_DIR/mod" && mkdir "$VM_DIR/mod"
        cp "$tmp"/x/boot/vmlinuz-* "$VM_DIR/vmlinuz"
        find "$tmp/x" -name '*.ko' -exec cp {} "$VM_DIR/mod/" \;
        for m in $MODULES; do [ -f "$VM_DIR/mod/$m.ko" ] || die "module $m missing from $pkg"; done
        echo "$pkg" > "$VM_DIR/modules.ok"
        rm -rf "$tmp"
    fi
    # the initramfs: static busybox, the modules, our init (rebuilt every
    # setup: cheap, and picks up changes to guest-init.sh)
    local root
    root=$(mktemp -d)
    mkdir -p "$root"/{bin,dev,proc,sys,host,lib/modules}
    cp /bin/busybox "$root/bin/"
    for a in $(/bin/busybox --list); do [ -e "$root/bin/$a" ] || ln -s busybox "$root/bin/$a"; done
    cp "$VM_DIR"/mod/*.ko "$root/lib/modules/"
    echo "$MODULES" > "$root/lib/modules/order"
    cp "$HERE/guest-init.sh" "$root/init"
    chmod +x "$root/init"
    (cd "$root" && find . | /bin/busybox cpio -o -H newc 2>/dev/null | gzip -1) > "$VM_DIR/initrd.gz.new"
    mv "$VM_DIR/initrd.gz.new" "$VM_DIR/initrd.gz"
    rm -rf "$root"
    say "setup done in $((SECONDS - t0)) s: kernel $(cat "$VM_DIR/modules.ok"), initrd $(du -k "$VM_DIR/initrd.gz" | cut -f1) KiB"
}

# guest ROLE NICS RXE SCRIPT OUT PORTBASE MONPORT
guest() {
    local role=$1 nics=$2 rxe=$3 script=$4 out=$5 base=$6 mon=$7 net=() i me peer mac
    for ((i = 0; i < nics; i++)); do
        me=$((base + 2 * i)) peer=$((base + 2 * i + 1)) mac=0a
        if [ "$role" = b ]; then me=$((base + 2 * i + 1)) peer=$((base + 2 * i)) mac=0b; fi
        if [ "$NVMS" = 1 ]; then
            net+=(-netdev "user,id=n$i") # one guest: a NIC with nothing behind it
        else
            net+=(-netdev "socket,id=n$i,udp=127.0.0.1:$peer,localaddr=127.0.0.1:$me")
        fi
        net+=(-device "virtio-net-pci,netdev=n$i,mac=52:54:00:00:$mac:0$i")
    done
    timeout "$VM_TIMEOUT" qemu-system-x86_64 -accel tcg -cpu max -smp "$VM_SMP" -m "$VM_MEM" \
        -nographic -no-reboot -kernel "$VM_DIR/vmlinuz" -initrd "$VM_DIR/initrd.gz" \
        -append "console=ttyS0 panic=-1 loglevel=3 bvm.role=$role bvm.nics=$nics bvm.rxe=$rxe bvm.script=$script bvm.cwd=$(dirname "$script") bvm.out=$out" \
        -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
        -virtfs "local,path=$out,mount_tag=out,security_model=none" \
        -monitor "tcp:127.0.0.1:$mon,server,nowait" "${net[@]}" > "$out/console.$role.log" 2>&1
}

# Sends the new lines of $OUT/mon.ROLE to that guest's monitor, over one
# connection kept for the whole run (QEMU's monitor serves one client;
# reconnecting right after a close can be refused); its answers go to
# $OUT/monitor.ROLE.log.
declare -A MONFD
forward_monitor() { # role port
    local role=$1 port=$2 req="$OUT/mon.$1" done_n total line n=0 fd
    [ -s "$req" ] || return 0
    done_n=$(cat "$req.done" 2>/dev/null || echo 0)
    total=$(wc -l < "$req")
    [ "$total" -gt "$done_n" ] || return 0
    if [ -z "${MONFD[$role]:-}" ]; then
        for _ in $(seq 50); do
            if exec {fd}<>"/dev/tcp/127.0.0.1/$port"; then
                MONFD[$role]=$fd
                cat <&"$fd" > "$OUT/monitor.$role.log" &
                break
            fi 2>/dev/null
            sleep 0.1
        done
        [ -n "${MONFD[$role]:-}" ] || { say "monitor $role: cannot connect to port $port"; return 0; }
    fi
    while IFS= read -r line; do
        n=$((n + 1))
        [ "$n" -gt "$done_n" ] || continue
        [ "$n" -le "$total" ] || break
        say "[$(date +%T.%3N)] monitor $role: $line"
        printf '%s\n' "$line" >&"${MONFD[$role]}" || say "monitor $role: write failed"
    done < "$req"
    sleep 0.05 # QEMU carries it out at once; a moment for it to be read
    echo "$total" > "$req.done.tmp" && mv "$req.done.tmp" "$req.done"
}

# A base port with 2*NICS+2 free UDP/TCP ports after it (best effort), below
# the kernel's ephemeral range (32768 and up on Debian): an ephemeral port, e.g.
# the monitor forwarder's own dialling end, once took a guest's monitor port
# before QEMU could bind it.
free_base() {
    local b lo
    lo=$(awk '{ print $1 }' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
    [ "$lo" -gt 12200 ] || lo=32768
    for _ in $(seq 50); do
        b=$((10000 + RANDOM % (lo - 10200)))
        if ! ss -Htuan 2>/dev/null | awk '{ print $5 }' | grep -qE ":($b|$((b + 1))|$((b + 2))|$((b + 3))|$((b + 4))|$((b + 5))|$((b + 100))|$((b + 101)))$"; then
            echo "$b"
            return
        fi
    done
    echo $((10000 + RANDOM % (lo - 10200)))
}

run() { # nvms script
    NVMS=$1
    local script t0=$SECONDS nics=${BFO_VM_NICS:-3} rxe=${BFO_VM_RXE:-2} roles=(a) pids=() r rc=0 base
    script=$(realpath "$2")
    [ -x "$script" ] || die "$script is not executable"
    [ -s "$VM_DIR/initrd.gz" ] || die "run '$0 setup' first"
    [ "$NVMS" = 2 ] && roles=(a b)
    [ "$rxe" -le "$nics" ] || die "BFO_VM_RXE ($rxe) > BFO_VM_NICS ($nics)"
    OUT=${BFO_VM_OUT:-$(mktemp -d /var/tmp/bfo-vm-out.XXXXXX)}
    mkdir -p "$OUT"
    OUT=$(realpath "$OUT")
    case "$OUT" in /tmp/* | /dev/* | /proc/* | /sys/* | /run/*) die "BFO_VM_OUT must not be under /tmp, /dev, /proc, /sys or /run (the guest mounts its own there)" ;; esac
    # the guest runs the script in its own directory: it must be visible too
    # (tests/verbs/run.sh copies the scripts next to its output for that)
    case "$script" in /tmp/* | /dev/* | /proc/* | /sys/* | /run/*) die "$script is under /tmp, /dev, /proc, /sys or /run, which the guest mounts its own: use tests/verbs/run.sh, or copy it elsewhere" ;; esac
    rm -f "$OUT"/rc.* "$OUT"/mon.* "$OUT"/out.*.log "$OUT"/console.*.log
    base=$(free_base)
    for r in "${roles[@]}"; do
        local mon=$((base + 100)); [ "$r" = b ] && mon=$((base + 101))
        guest "$r" "$nics" "$rxe" "$script" "$OUT" "$base" "$mon" &
        pids+=($!)
    done
    trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT
    say "$NVMS guest(s), $nics link(s), rxe on $rxe; output in $OUT"
    while :; do
        local alive=0 p k
        for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
        # a QEMU that ended with no result (it did not start, or the guest
        # died): its peer would wait out its whole timeout, so stop it now
        for k in "${!pids[@]}"; do
            if [ "$alive" = 1 ] && ! kill -0 "${pids[$k]}" 2>/dev/null && [ ! -s "$OUT/rc.${roles[$k]}" ]; then
                say "guest ${roles[$k]}: QEMU ended with no result (console $OUT/console.${roles[$k]}.log): stopping the other guest"
                for p in "${pids[@]}"; do pkill -P "$p" 2>/dev/null; kill "$p" 2>/dev/null || true; done
            fi
        done
        forward_monitor a $((base + 100))
        [ "$NVMS" = 2 ] && forward_monitor b $((base + 101))
        [ "$alive" = 1 ] || break
        sleep 0.02
    done
    for p in "${pids[@]}"; do wait "$p" || true; done
    trap - EXIT
    for r in "${roles[@]}"; do
        local g
        g=$(cat "$OUT/rc.$r" 2>/dev/null || echo none)
        say "guest $r: script exit status $g (output $OUT/out.$r.log, console $OUT/console.$r.log)"
        [ "$g" = 0 ] || rc=1
    done
    say "run$NVMS took $((SECONDS - t0)) s"
    return $rc
}

case ${1:-} in
setup) setup ;;
run1) [ $# = 2 ] || die "usage: $0 run1 SCRIPT"; run 1 "$2" ;;
run2) [ $# = 2 ] || die "usage: $0 run2 SCRIPT"; run 2 "$2" ;;
*) sed -n '3,31p' "$0"; exit 2 ;;
esac
