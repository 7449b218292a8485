#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# guest-init.sh - PID 1 of the test guests (busybox; see tests/verbs/vm.sh).
# Loads the modules, mounts the host's root (9p, read-only) at /host and the
# shared output directory, numbers the links, puts rxe on the first
# bvm.rxe of them, runs the test script chrooted into the host root, writes
# its exit status to $OUT/rc.ROLE and powers off.
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
role=a nics=1 rxe=1 script= cwd=/ out=
for kv in $(cat /proc/cmdline); do
    case $kv in
    bvm.role=*) role=${kv#*=} ;;
    bvm.nics=*) nics=${kv#*=} ;;
    bvm.rxe=*) rxe=${kv#*=} ;;
    bvm.script=*) script=${kv#*=} ;;
    bvm.cwd=*) cwd=${kv#*=} ;;
    bvm.out=*) out=${kv#*=} ;;
    esac
done
up() { cut -d' ' -f1 /proc/uptime; }
for m in $(cat /lib/modules/order); do
    insmod "/lib/modules/$m.ko" || echo "guest-init: insmod $m failed"
done
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=512000 hostroot /host || echo "guest-init: no host root"
for d in proc sys dev; do mount --bind /$d /host/$d; done
mount -t tmpfs tmp /host/run
mount -t tmpfs tmp /host/tmp
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 out "/host$out" || echo "guest-init: no output share"
ip link set lo up
if [ "$role" = b ]; then me=2 peer=1; else me=1 peer=2; fi
peers=
i=0
while [ "$i" -lt "$nics" ]; do
    ip link set "eth$i" up
    ip addr add "10.0.$i.$me/24" dev "eth$i"
    if [ "$i" -lt "$rxe" ]; then
        chroot /host rdma link add "rxe$i" type rxe netdev "eth$i" || echo "guest-init: rxe$i on eth$i failed"
    fi
    peers="$peers PEER$i=10.0.$i.$peer"
    i=$((i + 1))
done
echo "guest-init: [$(up)] $role ready ($nics links, rxe on $rxe), running $script"
# shellcheck disable=SC2086
chroot /host /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    HOME=/root ROLE="$role" OUT="$out" NICS="$nics" RXE="$rxe" $peers \
    /bin/sh -c 'cd "$1" && exec "$2"' sh "$cwd" "$script" > "/host$out/out.$role.log" 2>&1
rc=$?
echo "$rc" > "/host$out/rc.$role"
sync
echo "guest-init: [$(up)] script exit status $rc"
poweroff -f
