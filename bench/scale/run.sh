#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/scale/run.sh - what a job of 16, 64, 128 ranks costs under ob1
# (vader + tcp) and pml/bfo (shm + tcp), in interleaved rounds: MPI_Init,
# first and warm MPI_Alltoall, a ring, PSS, open files, sockets, pinned
# memory, packets sent while idle (bench/scale/scale.c), on this host and
# across tests/hosts' namespace hosts; and the engine's memory per rank at
# 1,024 ranks: bfo sim running them (every rank sending to 4 peers), and
# engine_mem.c's sizes in pml/bfo's configuration.  One table of medians and bfo/ob1 ratios;
# bench/scale/README.md says what every figure is.
#
#   make bench-scale                       (builds what it runs)
#   flock /work/.netlock make bench-scale  (on a machine shared with network tests:
#                                           it makes namespaces, and takes no lock itself)
#
# Environment:
#   BENCH_SCALE_SIZES   ranks on this host (default "16 64 128")
#   BENCH_SCALE_HOSTS   ranks across 4 namespace hosts (default "16 64 128" as root,
#                       else none; "" for none)
#   BENCH_SCALE_ROUNDS  interleaved rounds (default 3)
#   BENCH_SCALE_IDLE    seconds of each idle window (default 2)
#   RUN_TIMEOUT         seconds one mpirun may take (default 60 + 2 s per rank)
#   BFO_PML_DIR         where mca_pml_bfo.so is (default build/gcc/pml)
#   OUT                 output directory (default build/bench-scale)
#   BFO_MCA_ARGS, OB1_MCA_ARGS  more mpirun options for one configuration
#   BENCH_SCALE_SIM     ranks of the bfo sim run (default 1024; "" for none)
#   SCALE_BIN, ENGINE_MEM_BIN, BFO_BIN   the programs (make bench-scale builds them)
#
# Exit status: 0 when every run finished and verified; 1 when one failed
# (FAILED in the table, the others go on); 2 on a setup error.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
abspath() { case $1 in /*) printf '%s\n' "$1" ;; *) printf '%s\n' "$ROOT/$1" ;; esac; }
say() { printf 'bench-scale: %s\n' "$*"; }
fail_setup() { printf 'bench-scale: %s\n' "$*" >&2; exit 2; }

IS_ROOT=0
[ "$(id -u)" = 0 ] && IS_ROOT=1
SIZES=${BENCH_SCALE_SIZES-16 64 128}
if [ $IS_ROOT = 1 ]; then HSIZES=${BENCH_SCALE_HOSTS-16 64 128}; else HSIZES=${BENCH_SCALE_HOSTS-}; fi
ROUNDS=${BENCH_SCALE_ROUNDS:-3}
IDLE=${BENCH_SCALE_IDLE:-2}
BFO_PML_DIR=$(abspath "${BFO_PML_DIR:-build/gcc/pml}")
OUT=$(abspath "${OUT:-build/bench-scale}")
SCALE_BIN=$(abspath "${SCALE_BIN:-$OUT/scale}")
ENGINE_MEM_BIN=$(abspath "${ENGINE_MEM_BIN:-$OUT/engine_mem}")
BFO_BIN=$(abspath "${BFO_BIN:-build/gcc/bfo}")
SIM_RANKS=${BENCH_SCALE_SIM-1024}
BFO_MCA_ARGS=${BFO_MCA_ARGS:-}
OB1_MCA_ARGS=${OB1_MCA_ARGS:-}

case $ROUNDS in '' | *[!0-9]* | 0) fail_setup "BENCH_SCALE_ROUNDS must be a number >= 1" ;; esac
for n in $SIZES $HSIZES $SIM_RANKS; do
    case $n in '' | *[!0-9]*) fail_setup "rank counts must be numbers: '$n'" ;; esac
    [ "$n" -ge 2 ] || fail_setup "at least 2 ranks: '$n'"
done
[ $IS_ROOT = 1 ] || [ -z "$HSIZES" ] || fail_setup "BENCH_SCALE_HOSTS needs root (namespaces)"
command -v mpirun >/dev/null || fail_setup "mpirun not found (Debian: openmpi-bin)"
command -v python3 >/dev/null || fail_setup "python3 not found"
[ -x "$SCALE_BIN" ] || fail_setup "$SCALE_BIN missing (make bench-scale builds it)"
[ -f "$BFO_PML_DIR/mca_pml_bfo.so" ] || fail_setup "no mca_pml_bfo.so in $BFO_PML_DIR (make pml, or BFO_PML_DIR)"

mkdir -p "$OUT" || fail_setup "cannot create $OUT"
RAW=$OUT/raw
rm -rf "$RAW" && mkdir -p "$RAW"
PKGLIBDIR=$(ompi_info --path pkglibdir 2>/dev/null | sed -n 's/^ *Pkglibdir: *//p')
[ -n "$PKGLIBDIR" ] || fail_setup "ompi_info --path pkglibdir said nothing"

# The configurations.  One host: ob1's tcp btl on lo (loopback is not in
# its default interfaces) beside vader, as bfo's TCP rail is 127.0.0.2
# beside shm.  Hosts: both over the two rail networks of tests/hosts.
BFO_BASE="--mca mca_component_path $PKGLIBDIR:$BFO_PML_DIR --mca pml bfo"
config_args() { # WHERE CONFIG
    case $1.$2 in
    host.ob1) echo "--mca pml ob1 --mca btl self,vader,tcp --mca btl_tcp_if_include lo $OB1_MCA_ARGS" ;;
    host.bfo) echo "$BFO_BASE --mca pml_bfo_rails shm,127.0.0.2 $BFO_MCA_ARGS" ;;
    hosts.ob1) echo "--mca pml ob1 --mca btl self,vader,tcp --mca btl_tcp_if_include 10.36.1.0/24,10.36.2.0/24 $OB1_MCA_ARGS" ;;
    hosts.bfo) echo "$BFO_BASE --mca pml_bfo_rails shm,10.36.1.0/24,10.36.2.0/24 $BFO_MCA_ARGS" ;;
    esac
}

# One host: as root each job gets a network namespace of its own with lo
# only (unshare --net), so the idle packet counts are the job's alone;
# otherwise the host's lo, shared with whatever else runs (said in the table).
if [ $IS_ROOT = 1 ] && command -v unshare >/dev/null; then
    HOST_NS=1
else
    HOST_NS=0
fi

if [ -n "$HSIZES" ]; then
    for need in unshare nsenter ip; do
        command -v $need >/dev/null || fail_setup "$need missing (namespace hosts)"
    done
    # shellcheck source=../../tests/pml/lib.sh
    . "$ROOT/tests/pml/lib.sh" # pmlt_bounded
    # shellcheck source=../../tests/hosts/lib.sh
    . "$ROOT/tests/hosts/lib.sh" # hosts_up, hosts_mpirun, hosts_down on exit
    say "making 4 namespace hosts (tests/hosts/lib.sh)"
    hosts_up 4 >"$RAW/hosts_up.log" 2>&1 || { cat "$RAW/hosts_up.log" >&2; fail_setup "hosts_up failed"; }
fi

MANIFEST=$RAW/manifest.tsv
printf 'round\twhere\tranks\tconfig\tstatus\trc\tseconds\tfile\n' >"$MANIFEST"
{
    echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "host=$(hostname)"
    echo "nproc=$(nproc)"
    echo "loadavg=$(cut -d' ' -f1-3 /proc/loadavg)"
    echo "ompi_version=$(ompi_info --version 2>/dev/null | sed -n 's/^Open MPI v//p' | head -1)"
    echo "commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null)"
    echo "rounds=$ROUNDS"
    echo "sizes=$SIZES"
    echo "host_sizes=$HSIZES"
    echo "sim_ranks=$SIM_RANKS"
    echo "idle=$IDLE"
    echo "host_ns=$HOST_NS"
    for w in host hosts; do for c in ob1 bfo; do echo "args.$w.$c=$(config_args $w $c)"; done; done
} >"$RAW/meta.txt"

any_failure=0
T_START=$SECONDS

# run_one ROUND WHERE N CONFIG
run_one() {
    local r=$1 where=$2 n=$3 c=$4 file to rc status t0 t1
    file=$RAW/r$r-$where-$n-$c
    to=${RUN_TIMEOUT:-$((60 + 2 * n))}
    # shellcheck disable=SC2046 # the options, one a word
    set -- $(config_args "$where" "$c") "$SCALE_BIN" --idle "$IDLE"
    t0=$(date +%s.%N)
    if [ "$where" = hosts ]; then
        hosts_mpirun "$file.out" "$to" "$n" --map-by node "$@"
        rc=$?
    elif [ $HOST_NS = 1 ]; then
        timeout -k 10 "$to" unshare --net sh -c 'ip link set lo up && exec "$@"' sh \
            mpirun --allow-run-as-root --oversubscribe -np "$n" "$@" >"$file.out" 2>&1 </dev/null
        rc=$?
    else
        timeout -k 10 "$to" mpirun --allow-run-as-root --oversubscribe -np "$n" "$@" >"$file.out" 2>&1 </dev/null
        rc=$?
    fi
    t1=$(date +%s.%N)
    status=ok
    if [ $rc = 124 ] || [ $rc = 137 ]; then
        status=timeout
    elif grep -q 'VERIFY FAILED' "$file.out"; then
        status=verify-failed
    elif [ $rc != 0 ]; then
        status=crashed
    elif ! grep -q '^scale result' "$file.out" || ! grep -q '^scale done' "$file.out"; then
        status=incomplete
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%.1f\t%s\n' "$r" "$where" "$n" "$c" "$status" "$rc" \
        "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" "$(basename "$file").out" >>"$MANIFEST"
    if [ $status != ok ]; then
        any_failure=1
        say "round $r: $where $n ranks $c FAILED ($status, exit $rc): $file.out"
        grep -m 4 -iE 'VERIFY FAILED|error|unable|cannot|timed out|signal' "$file.out" | sed 's/^/    /'
        # (a timed-out job: let its ranks go before the next starts)
        [ $status = timeout ] && sleep 3
    else
        say "round $r: $where $n ranks $c ok ($(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s)"
    fi
}

# Round r: every (where, ranks) in turn, and within each ob1 and bfo in an
# order that alternates from round to round (a slow spell of the machine
# is not charged to one configuration every time).
for ((r = 1; r <= ROUNDS; r++)); do
    if [ $((r % 2)) = 1 ]; then order="ob1 bfo"; else order="bfo ob1"; fi
    for n in $SIZES; do for c in $order; do run_one $r host "$n" $c; done; done
    for n in $HSIZES; do for c in $order; do run_one $r hosts "$n" $c; done; done
    if [ $r = 1 ] && [ "$ROUNDS" -gt 1 ]; then
        say "round 1 took $((SECONDS - T_START)) s; about $(((SECONDS - T_START) * (ROUNDS - 1))) s to go"
    fi
done

# the engine's memory per rank at 1,024 ranks, run: bfo sim's engines (its
# own pool sizes; grown as pml/bfo's), every rank sending 1 KiB to 4 peers,
# every message checked; what a rank touched of its block is measured
if [ -n "$SIM_RANKS" ]; then
    if [ -x "$BFO_BIN" ]; then
        k=0 # 4 peers each (fewer below 16 ranks: an exchange's peers are rank + 2^j)
        while [ $k -lt 4 ] && [ $((1 << k)) -lt "$SIM_RANKS" ]; do k=$((k + 1)); done
        say "bfo sim, $SIM_RANKS ranks (every rank to $k peers)"
        if ! "$BFO_BIN" sim --ranks "$SIM_RANKS" --rails 2 --exchange "$k:1K" --grow --mem >"$RAW/sim_mem.txt" 2>&1 ||
            ! grep -q '^sim: 1 passed, 0 failed' "$RAW/sim_mem.txt"; then
            any_failure=1
            say "bfo sim $SIM_RANKS ranks FAILED: $RAW/sim_mem.txt"
        fi
    else
        say "no $BFO_BIN: no bfo sim figures"
    fi
fi

# ... and as pml/bfo sizes it, computed (engine_mem.c), up to 1,024 ranks
if [ -x "$ENGINE_MEM_BIN" ]; then
    "$ENGINE_MEM_BIN" shm,127.0.0.2 16 64 128 1024 >"$RAW/engine_mem.txt" 2>&1 ||
        say "engine_mem failed: $RAW/engine_mem.txt"
else
    say "no $ENGINE_MEM_BIN: no engine memory figures"
fi
echo "seconds=$((SECONDS - T_START))" >>"$RAW/meta.txt"

python3 "$HERE/report.py" "$RAW" | tee "$OUT/table.txt"
exit $any_failure
