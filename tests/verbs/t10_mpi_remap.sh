#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# (j) Memory given back and mapped again at the same address between RDMA
# transfers (issue 34, finding 1): tests/pml/remap.c as 2 ranks over pml/bfo,
# rank 0 in guest a and rank 1 in guest b, one verbs rail (rxe0, link 0),
# no cable pulled.  Each variant of the program sends REMAP_SIZE bytes both
# ways REMAP_ITERS times and checks every byte; between the transfers it
# munmaps its buffers and maps the same addresses again (or madvises them
# away, or frees and mallocs them).  Twice: with pml_bfo_rdma 1 (the
# receiver RDMA-READs the sender's buffer: GET) and 2 (the sender
# RDMA-WRITEs into the receiver's buffer: PUT).  A registration cache that
# hands out a region registered before the memory was given back moves the
# data from and to the old pages: wrong data, which the program reports
# (FAIL lines naming the variant, the iteration and the first wrong byte).
# Passes when both runs see every byte right, every large message went by
# the RDMA protocol asked for (pml_bfo_verbose 2: each rank's count of
# messages received by GET and by PUT at MPI_Finalize) and rxe0 carried
# them (its packet counters).  mpirun in guest a, orted in guest b through
# tests/verbs/mpi_rsh.sh, as in t9; Open MPI's own TCP on link 1.
# vm: BFO_VM_RXE=1
. "$(dirname "$0")/lib.sh"
unset BFO_RANK BFO_SIZE BFO_BOOTSTRAP BFO_RAILS BFO_VERBS_LOG
HERE=$(cd "$(dirname "$0")" && pwd)
# the component and the program, staged by run.sh from next to the bfo
# binary (make pml pml-remap: BUILD/pml/mca_pml_bfo.so, BUILD/pml/remap)
PML_DIR=${PML_DIR:-$(dirname "$BFO")/pml}
REMAP=${REMAP:-$PML_DIR/remap}
RSH=$HERE/mpi_rsh.sh
export BFO_RSH_PORT=7118
ORTE_NET=10.0.1.0/24
REMAP_SIZE=${REMAP_SIZE:-1M} # above rdma_min (64 KiB): every transfer by RDMA
REMAP_ITERS=${REMAP_ITERS:-3} # the first registers; the later ones would reuse it
MPI_OUT=$OUT/mpi
fail() { say "FAIL: $*"; exit 1; }
hostname "bfo-$ROLE" # ORTE refuses the kernel's "(none)"

if [ "$ROLE" = b ]; then
    "$RSH" serve "$BFO_RSH_PORT" "$OUT/rsh.log" > "$OUT/rsh.out" 2>&1 &
    SRV=$!
    for _ in $(seq 280); do [ -e "$OUT/mpi.done" ] && break; pause 1; done
    kill "$SRV" 2>/dev/null
    say "orted started here $(grep -c 'mpi_rsh: run: .*orted' "$OUT/rsh.log") time(s)"
    [ -e "$OUT/mpi.done" ] || fail "guest a never said it was done"
    exit 0
fi

trap 'touch "$OUT/mpi.done"' EXIT
[ -f "$PML_DIR/mca_pml_bfo.so" ] || fail "no $PML_DIR/mca_pml_bfo.so (make pml)"
[ -x "$REMAP" ] || fail "no $REMAP (make pml-remap)"
PKGLIB=$(cat "$PML_DIR/pkglibdir" 2>/dev/null) || PKGLIB=$(ompi_info --path pkglibdir | sed 's/.*: *//')
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 BFO_RSH_WAIT=120
CNT=/sys/class/infiniband/rxe0/ports/1/hw_counters
pkts() { local s r; read -r s < "$CNT/sent_pkts"; read -r r < "$CNT/rcvd_pkts"; PKTS=$((s + r)); }
bytes_of() { # 1M, 64K, 1000 -> bytes
    case $1 in *[Mm]) echo $((${1%?} << 20)) ;; *[Kk]) echo $((${1%?} << 10)) ;; *) echo "$1" ;; esac
}
size=$(bytes_of "$REMAP_SIZE")
nvar=7 # the variants of remap.c's "all"

# run MODE NAME: one mpirun of "remap all" with pml_bfo_rdma MODE; its
# output in $MPI_OUT.NAME; rc, and the packets rxe0 moved meanwhile in K
run() {
    local t0 t1 k0
    read -r t0 _ < /proc/uptime
    pkts; k0=$PKTS
    # TCG guests are slow: a probe gets 1 s, the silence backstop 3 s and a
    # peer 30 s to come up (as t9)
    timeout -s KILL 200 mpirun --allow-run-as-root -np 2 --host 10.0.1.1:1,10.0.1.2:1 \
        --mca plm_rsh_agent "$RSH" --mca plm_rsh_no_tree_spawn 1 --mca orte_keep_fqdn_hostnames 1 \
        --mca oob_tcp_if_include "$ORTE_NET" --mca btl self,tcp --mca btl_tcp_if_include "$ORTE_NET" \
        --mca mca_component_path "$PKGLIB:$PML_DIR" --mca pml bfo --mca pml_bfo_rails verbs:rxe0 \
        --mca pml_bfo_rdma "$1" --mca pml_bfo_verbose 2 --mca pml_bfo_probe_timeout_ms 1000 \
        --mca pml_bfo_silence_ms 3000 --mca pml_bfo_peer_timeout_ms 30000 \
        "$REMAP" all "$REMAP_SIZE" "$REMAP_ITERS" > "$MPI_OUT.$2" 2>&1
    rc=$?
    pkts; K=$((PKTS - k0))
    read -r t1 _ < /proc/uptime
    say "$2 (pml_bfo_rdma $1): mpirun exit status $rc after $(ms_between "$t0" "$t1") ms, rxe0 packets $K"
    MEASURE+="${MEASURE:+; }$2: mpirun $(ms_between "$t0" "$t1") ms, rxe0 packets $K"
    # what the program said: its variants' verdicts and FAIL lines, the
    # ranks' protocol counts
    grep -E '^(variant|NOTE|case|FAIL)|finalize: messages|pml bfo: ' "$MPI_OUT.$2" | cut -c1-300 | sed "s/^/  $2: /"
}

bad='' MEASURE=''
for m in 1:get 2:put; do
    run "${m%%:*}" "${m#*:}"
    name=${m#*:}
    if [ "$rc" != 0 ]; then
        if grep -q '^FAIL' "$MPI_OUT.$name"; then
            bad+=" $name: wrong data in$(sed -n 's/.*wrong data in variant(s)://p' "$MPI_OUT.$name" | head -1);"
        else
            bad+=" $name: mpirun exit status $rc (see $MPI_OUT.$name);"
        fi
        continue
    fi
    # every message of a variant (REMAP_ITERS per rank) by the protocol asked
    # for, on both ranks: pml bfo[R]: finalize: ... RDMA GET g, RDMA PUT p
    col=$([ "$name" = get ] && echo GET || echo PUT)
    want=$((nvar * REMAP_ITERS))
    n=$(sed -n "s/.*finalize: messages received .*RDMA $col \([0-9]*\).*/\1/p" "$MPI_OUT.$name" |
        awk -v w="$want" '$1 >= w { n++ } END { print n + 0 }')
    [ "$n" = 2 ] || { bad+=" $name: $n of 2 ranks received at least $want messages by RDMA $col;"; continue; }
    # and rxe0 carried them: each way nvar * iters * size bytes, 1 KiB a packet
    min=$((2 * want * size / 1024))
    [ "$K" -ge "$min" ] || bad+=" $name: rxe0 moved $K packets, fewer than the $min of the data;"
done
[ -z "$bad" ] || fail "pml/bfo over verbs:rxe0, memory remapped between transfers:$bad"
echo "measure: $MEASURE"
echo "ok: t10 MPI remap (pml/bfo over verbs:rxe0, GET and PUT): buffers unmapped, madvised away or freed and mapped again at the same address between RDMA transfers, every byte right"
