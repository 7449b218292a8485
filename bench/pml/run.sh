#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/pml/run.sh - pml_bench and NetPIPE under Open MPI's PMLs (ob1, ucx)
# and pml/bfo, in interleaved rounds, then one table of medians and ratios,
# a JSON and a PNG (bench/pml/README.md says what every column is).
#
#   bash bench/pml/run.sh                  (from anywhere; paths below are
#                                           relative to the repository root)
#   make -f bench/pml/bench.mk bench-pml   (builds pml_bench first)
#
# Environment:
#   ROUNDS        rounds (default 5; at least 5 for a median worth the name)
#   SIZES         pml_bench sizes, K/M suffixes, e.g. 8,4K,64K-1,1M
#                 (default 8 B..4 MiB in powers of two, plus 64K-1 and 64K+1)
#   CONFIGS       subset, comma or space separated, of
#                   ob1-tcp ucx-tcp bfo-1rail bfo-2rails ob1-vader bfo-shm
#                 and the optional ucx-lo (ucx on the lo device only)
#                 (default: the first six)
#   BFO_PML_DIR   where mca_pml_bfo.so is (default build/gcc/pml; made absolute)
#   OUT           output directory (default build/bench-pml)
#   PML_BENCH_BIN pml_bench binary (default $OUT/pml_bench, built with mpicc
#                 when missing or older than bench/pml/pml_bench.c)
#   PML_BENCH_ARGS extra pml_bench options (e.g. "--window 64 --iters 500")
#   NETPIPE       1 (default) runs NPopenmpi once per config and round, 0 not
#   NP_ARGS       NPopenmpi options (default "-l 8 -u 1048576 -p 0 -n 100")
#   RUN_TIMEOUT   seconds one mpirun may take before it is killed (default 180)
#   MPIRUN_ARGS   extra mpirun options for every configuration
#   BFO_MCA_ARGS  extra mpirun options for the bfo configurations
#   PML_BENCH_STANDIN=1  harness self-test: the bfo configurations run ob1
#                 instead (tcp btl for the TCP rails, vader for shm), so that
#                 every ratio and verdict path is exercised before pml/bfo
#                 loads.  The table says so; the numbers mean nothing.
#
# Exit status: 0 when every run finished and verified (targets missed or
# not, they are informational); 1 when a run crashed, hung, or failed
# verification (that configuration is dropped from the later rounds);
# 2 on a usage or setup error.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
abspath() { case $1 in /*) printf '%s\n' "$1" ;; *) printf '%s\n' "$ROOT/$1" ;; esac; }

ROUNDS=${ROUNDS:-5}
SIZES=${SIZES:-}
ALL_CONFIGS="ob1-tcp ucx-tcp bfo-1rail bfo-2rails ob1-vader bfo-shm"
KNOWN_CONFIGS="$ALL_CONFIGS ucx-lo"
CONFIGS=${CONFIGS:-$ALL_CONFIGS}
BFO_PML_DIR=$(abspath "${BFO_PML_DIR:-build/gcc/pml}")
OUT=$(abspath "${OUT:-build/bench-pml}")
PML_BENCH_BIN=$(abspath "${PML_BENCH_BIN:-$OUT/pml_bench}")
PML_BENCH_ARGS=${PML_BENCH_ARGS:-}
NETPIPE=${NETPIPE:-1}
NP_ARGS=${NP_ARGS:--l 8 -u 1048576 -p 0 -n 100}
RUN_TIMEOUT=${RUN_TIMEOUT:-180}
MPIRUN_ARGS=${MPIRUN_ARGS:-}
BFO_MCA_ARGS=${BFO_MCA_ARGS:-}
STANDIN=${PML_BENCH_STANDIN:-0}

say() { printf 'bench-pml: %s\n' "$*"; }
fail_setup() { printf 'bench-pml: %s\n' "$*" >&2; exit 2; }

case $ROUNDS in ''|*[!0-9]*) fail_setup "ROUNDS must be a number" ;; esac
[ "$ROUNDS" -ge 1 ] || fail_setup "ROUNDS must be at least 1"
[ "$ROUNDS" -ge 5 ] || say "note: ROUNDS=$ROUNDS (< 5): medians of so few rounds are weak"
command -v mpirun >/dev/null || fail_setup "mpirun not found (Debian: openmpi-bin)"
command -v python3 >/dev/null || fail_setup "python3 not found"

CONFIGS=$(printf '%s\n' $(echo "$CONFIGS" | tr ',' ' ') | awk '!seen[$0]++' | tr '\n' ' ')
for c in $CONFIGS; do
    case " $KNOWN_CONFIGS " in *" $c "*) ;; *) fail_setup "unknown configuration '$c' (known: $KNOWN_CONFIGS)" ;; esac
done

mkdir -p "$OUT" || fail_setup "cannot create $OUT"
RAW=$OUT/raw
rm -rf "$RAW" && mkdir -p "$RAW"

# ---- pml_bench binary ----
SRC=$HERE/pml_bench.c
if [ ! -x "$PML_BENCH_BIN" ] || [ "$SRC" -nt "$PML_BENCH_BIN" ]; then
    command -v mpicc >/dev/null || fail_setup "mpicc not found (Debian: libopenmpi-dev)"
    say "building $PML_BENCH_BIN"
    mkdir -p "$(dirname "$PML_BENCH_BIN")"
    ${MPICC:-mpicc} -O2 -g -Wall -Wextra -o "$PML_BENCH_BIN" "$SRC" || fail_setup "mpicc failed"
fi

if [ "$NETPIPE" = 1 ] && ! command -v NPopenmpi >/dev/null; then
    say "NPopenmpi not found (Debian: netpipe-openmpi): NetPIPE columns skipped"
    NETPIPE=0
fi
HAVE_GNUPLOT=1
command -v gnuplot >/dev/null || { HAVE_GNUPLOT=0; say "gnuplot not found (Debian: gnuplot-nox): no PNG"; }

PKGLIBDIR=$(ompi_info --path pkglibdir 2>/dev/null | sed -n 's/^ *Pkglibdir: *//p')
[ -n "$PKGLIBDIR" ] || PKGLIBDIR=$(dirname "$(ompi_info --path libdir 2>/dev/null | sed -n 's/^ *Libdir: *//p')/openmpi/x")
OMPI_VERSION=$(ompi_info --version 2>/dev/null | sed -n 's/^Open MPI v//p' | head -1)
UCX_VERSION=$(dpkg-query -W -f '${Version}' libucx0 2>/dev/null || true)

# ---- configurations ----
BFO_SO=$BFO_PML_DIR/mca_pml_bfo.so
bfo_available=1
[ -f "$BFO_SO" ] || bfo_available=0

config_args() {   # prints the mpirun options of configuration $1
    local bfo="--mca mca_component_path $PKGLIBDIR:$BFO_PML_DIR --mca pml bfo $BFO_MCA_ARGS"
    local ob1tcp="--mca pml ob1 --mca btl self,tcp --mca btl_tcp_if_include lo"
    local ob1vader="--mca pml ob1 --mca btl self,vader"
    case $1 in
    ob1-tcp)    echo "$ob1tcp" ;;
    ucx-tcp)    echo "--mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any -x UCX_TLS=tcp,self" ;;
    ucx-lo)     echo "--mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any -x UCX_TLS=tcp,self -x UCX_NET_DEVICES=lo" ;;
    ob1-vader)  echo "$ob1vader" ;;
    bfo-1rail)  [ "$STANDIN" = 1 ] && echo "$ob1tcp" || echo "$bfo --mca pml_bfo_rails 127.0.0.2" ;;
    bfo-2rails) [ "$STANDIN" = 1 ] && echo "$ob1tcp" || echo "$bfo --mca pml_bfo_rails 127.0.0.2,127.0.0.3" ;;
    bfo-shm)    [ "$STANDIN" = 1 ] && echo "$ob1vader" || echo "$bfo --mca pml_bfo_rails shm" ;;
    esac
}

RUN_CONFIGS=""
SKIPPED=""
for c in $CONFIGS; do
    case $c in
    bfo-*)
        if [ "$STANDIN" != 1 ] && [ $bfo_available = 0 ]; then SKIPPED="$SKIPPED $c"; continue; fi ;;
    esac
    RUN_CONFIGS="$RUN_CONFIGS $c"
done
RUN_CONFIGS=${RUN_CONFIGS# }
SKIPPED=${SKIPPED# }
if [ "$STANDIN" = 1 ]; then
    say "PML_BENCH_STANDIN=1: the bfo configurations run ob1 (harness self-test, not a measurement of bfo)"
elif [ -n "$SKIPPED" ]; then
    say "SKIPPED $SKIPPED: no mca_pml_bfo.so in $BFO_PML_DIR (build it with 'make pml', or set BFO_PML_DIR)"
fi
[ -n "$RUN_CONFIGS" ] || fail_setup "no configuration left to run"

# ---- the runs ----
MPIRUN="mpirun --allow-run-as-root --oversubscribe -np 2 $MPIRUN_ARGS"
BENCH_ARGS="$PML_BENCH_ARGS${SIZES:+ --sizes $SIZES}"
MANIFEST=$RAW/manifest.tsv
printf 'round\tposition\tconfig\tkind\tstatus\trc\tseconds\tfile\n' > "$MANIFEST"

{
    echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "host=$(hostname)"
    echo "nproc=$(nproc)"
    echo "kernel=$(uname -r)"
    echo "ompi_version=$OMPI_VERSION"
    echo "ucx_version=$UCX_VERSION"
    echo "rounds=$ROUNDS"
    echo "configs=$CONFIGS"
    echo "run_configs=$RUN_CONFIGS"
    echo "skipped=$SKIPPED"
    echo "standin=$STANDIN"
    echo "bfo_pml_dir=$BFO_PML_DIR"
    echo "bfo_available=$bfo_available"
    echo "pkglibdir=$PKGLIBDIR"
    echo "mpirun=$MPIRUN"
    echo "pml_bench=$PML_BENCH_BIN $BENCH_ARGS"
    echo "netpipe=$NETPIPE"
    echo "np_args=$NP_ARGS"
    for c in $RUN_CONFIGS; do echo "args.$c=$(config_args "$c")"; done
} > "$RAW/meta.txt"

failed=""       # configurations dropped after a failure
any_failure=0
now() { date +%s.%N; }

# run_one ROUND POS CONFIG KIND FILE CMD...: runs one mpirun with a timeout,
# records it in the manifest; returns 0 when it finished and verified.
run_one() {
    local r=$1 pos=$2 c=$3 kind=$4 file=$5; shift 5
    local t0 t1 rc status
    t0=$(now)
    ( cd "$RAW" && timeout -k 10 "$RUN_TIMEOUT" "$@" ) > "$file.out" 2> "$file.err"
    rc=$?
    t1=$(now)
    status=ok
    if [ $rc = 124 ] || [ $rc = 137 ]; then
        status=timeout
    elif grep -q 'VERIFY FAILED' "$file.err" "$file.out" 2>/dev/null; then
        status=verify-failed
    elif [ $rc != 0 ]; then
        status=crashed
    elif [ "$kind" = pml_bench ] && ! grep -q '^pml_bench done' "$file.out"; then
        status=incomplete
    elif [ "$kind" = netpipe ] && ! [ -s "$file.np" ]; then
        status=incomplete
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%.2f\t%s\n' "$r" "$pos" "$c" "$kind" "$status" "$rc" \
        "$(awk "BEGIN{print $t1 - $t0}")" "$(basename "$file")" >> "$MANIFEST"
    if [ $status != ok ]; then
        say "round $r: $c $kind FAILED ($status, exit $rc); from its stderr ($file.err):"
        { grep -m 6 -iE 'VERIFY FAILED|unable|cannot|not found|error:|signal|timeout|Segmentation' "$file.err" \
            || tail -n 8 "$file.err"; } | sed 's/^/    /'
        if [ "$kind" = pml_bench ]; then
            last=$(grep '^pml_bench size=' "$file.out" | tail -n 1)
            say "    last result: ${last:-none (it failed before the first size was done)}"
        fi
        [ $status = timeout ] && sleep 2   # let mpirun finish taking its ranks down
        return 1
    fi
    return 0
}

# The order of round r: a Williams design, rotated.  base = 0, 1, n-1, 2,
# n-2, 3, ...; round r runs configuration (base[i] + r - 1) mod n at
# position i.  Over n rounds (n even) every configuration runs once at
# every position AND right after every other configuration once: a plain
# rotation would keep the same neighbour in front of each configuration in
# every round, and whatever a run leaves behind (sockets in TIME_WAIT,
# caches, a UCX async thread winding down) would be charged to its
# successor every time.  n odd: every other round runs the previous order
# reversed (2n rounds balance it).
set -- $RUN_CONFIGS
NCONF=$#
base=()
for ((i = 0, lo = 1, hi = NCONF - 1; i < NCONF; i++)); do
    if [ $i = 0 ]; then base+=(0)
    elif [ $((i % 2)) = 1 ]; then base+=($lo); lo=$((lo + 1))
    else base+=($hi); hi=$((hi - 1)); fi
done
T_START=$(now)
for ((r = 1; r <= ROUNDS; r++)); do
    order=""
    shift_=$(( r - 1 )); rev=0
    if [ $((NCONF % 2)) = 1 ]; then shift_=$(( (r - 1) / 2 )); rev=$(( (r - 1) % 2 )); fi
    for ((i = 0; i < NCONF; i++)); do
        k=$i; [ $rev = 1 ] && k=$((NCONF - 1 - i))
        j=$(( (base[k] + shift_) % NCONF + 1 ))
        order="$order ${!j}"
    done
    if [ $r = 2 ]; then
        el=$(awk "BEGIN{print $(now) - $T_START}")
        say "round 1 took $(printf '%.0f' "$el") s: about $(awk "BEGIN{printf \"%.0f\", $el * ($ROUNDS - 1)}") s to go"
    fi
    say "round $r/$ROUNDS:$order"
    pos=0
    for c in $order; do
        pos=$((pos + 1))
        case " $failed " in *" $c "*) continue ;; esac
        args=$(config_args "$c")
        f=$RAW/r$r-$c
        # shellcheck disable=SC2086
        if ! run_one "$r" "$pos" "$c" pml_bench "$f" $MPIRUN $args "$PML_BENCH_BIN" $BENCH_ARGS; then
            failed="$failed $c"; any_failure=1; continue
        fi
        if [ "$NETPIPE" = 1 ]; then
            # shellcheck disable=SC2086
            if ! run_one "$r" "$pos" "$c" netpipe "$f-np" $MPIRUN $args NPopenmpi $NP_ARGS -o "$f-np.np"; then
                failed="$failed $c"; any_failure=1; continue
            fi
        fi
    done
done
T_END=$(now)
echo "seconds=$(awk "BEGIN{printf \"%.1f\", $T_END - $T_START}")" >> "$RAW/meta.txt"
echo "failed=${failed# }" >> "$RAW/meta.txt"

# ---- report ----
python3 "$HERE/report.py" "$RAW" "$OUT" || { say "report.py failed"; exit 1; }
if [ $HAVE_GNUPLOT = 1 ] && [ -f "$OUT/plot.gp" ]; then
    if gnuplot "$OUT/plot.gp" 2> "$OUT/gnuplot.err"; then
        say "plot: $OUT/pml-bench.png"
    else
        say "gnuplot failed (see $OUT/gnuplot.err); no PNG"
    fi
fi
say "table: $OUT/table.txt  json: $OUT/pml-bench.json  raw: $RAW/"
if [ $any_failure = 1 ]; then
    say "FAILED: ${failed# } (crashed, hung or failed verification; see above)"
    exit 1
fi
exit 0
