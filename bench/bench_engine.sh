#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Instructions per exchange through the engine, under callgrind: the
# difference between two iteration counts, memcpy and memmove left out.
set -eu
bin=$1
command -v valgrind >/dev/null || { echo "bench-engine: valgrind is needed (apt-get install valgrind)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# total instructions, those in the memcpy family and those of the null
# transport's own lines (sim/bfo_nullnet.h; engine code inlined into its
# functions is attributed to the engine's files), of one run
measure() {
    valgrind --tool=callgrind --callgrind-out-file="$tmp/out" "$bin" "$1" "$2" >/dev/null 2>"$tmp/err"
    total=$(sed -n 's/.*Collected : //p' "$tmp/err")
    # the first per-function table only (the annotated sources repeat it)
    copies=$(callgrind_annotate --threshold=100 "$tmp/out" 2>/dev/null |
             awk '/file:function/ { t = 1; next } t && /^$/ && seen { exit }
                  t && /^ *[0-9]/ { seen = 1; if ($0 ~ /mem(cpy|move)/) { gsub(",", "", $1); s += $1 } }
                  END { print s + 0 }')
    transport=$(callgrind_annotate --threshold=100 "$tmp/out" 2>/dev/null |
             awk '/file:function/ { t = 1; next } t && /^$/ && seen { exit }
                  t && /^ *[0-9]/ { seen = 1; if ($0 ~ /bfo_nullnet\.h:/) { gsub(",", "", $1); s += $1 } }
                  END { print s + 0 }')
    echo "$total $copies $transport"
}
per() { # mode n1 n2: "engine transport" instructions per exchange
    read -r t1 c1 n1 < <(measure "$1" "$2")
    read -r t2 c2 n2 < <(measure "$1" "$3")
    echo $(( ((t2 - c2 - n2) - (t1 - c1 - n1)) / ($3 - $2) )) $(( (n2 - n1) / ($3 - $2) ))
}
read -r eager eager_nn < <(per eager 1000 11000)
read -r rndv rndv_nn < <(per rndv 10 60)
read -r crowd _ < <(per crowd 1000 11000)
echo "bench-engine: eager 8-byte send+receive: $eager instructions in the engine (+ $eager_nn in the null transport; memcpy excluded)"
echo "bench-engine: 1 MiB rendezvous send+receive: $rndv instructions in the engine (+ $rndv_nn in the null transport; memcpy excluded)"
echo "bench-engine: eager 8-byte send+receive with 100,000 other receives posted over 1,000 contexts: $crowd instructions in the engine (matching in bins: the crowd costs $((crowd - eager)))"
read -r eager_iov eager_iov_nn < <(per eager-iov 1000 11000)
read -r rndv_iov rndv_iov_nn < <(per rndv-iov 10 60)
echo "bench-engine: the same described (iovec: 8 bytes in 2 segments; 1 MiB in 16, staged by the engine): eager $eager_iov, rendezvous $rndv_iov instructions in the engine (+ $eager_iov_nn, $rndv_iov_nn in the null transport; memcpy excluded)"
# The same pair through Open MPI's ob1 (bench/ob1_eager.c: a rank's receive
# from itself and send to itself, --mca btl self standing where the null
# transport does), counted the same way: callgrind, only the loop of pairs
# (--toggle-collect), the difference between two counts; left out, as for
# bfo, the transport (mca_btl_self) and the memcpy family.  What is left:
# the MPI calls, ob1, the convertor and the request's completion; "PML
# alone" is mca_pml_ob1 itself.  Skipped without mpicc and mpirun.
if command -v mpicc >/dev/null && command -v mpirun >/dev/null; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    src=$(dirname "$0")/ob1_eager.c
    if mpicc -O2 "$src" -o "$tmp/ob1_eager" 2>"$tmp/err"; then
        ob1() { # n: "all pml" instructions of n pairs (the transport and copies left out)
            mpirun --oversubscribe -n 1 --mca pml ob1 --mca btl self \
                valgrind --tool=callgrind --toggle-collect=ob1_pairs --callgrind-out-file="$tmp/ob1" \
                "$tmp/ob1_eager" "$1" >/dev/null 2>"$tmp/err" || return 1
            callgrind_annotate --threshold=100 "$tmp/ob1" 2>/dev/null |
                awk '/file:function/ { t = 1; next } t && /^$/ && seen { exit }
                     t && /^ *[0-9]/ { seen = 1; c = $1; gsub(",", "", c)
                                       if ($0 ~ /mca_btl_self|mem(cpy|move)/) next
                                       all += c; if ($0 ~ /mca_pml_ob1/) pml += c }
                     END { print all + 0, pml + 0 }'
        }
        if read -r a1 p1 < <(ob1 1000) && read -r a2 p2 < <(ob1 11000); then
            ob1_all=$(( (a2 - a1) / 10000 )) ob1_pml=$(( (p2 - p1) / 10000 ))
            echo "bench-engine: the same 8-byte pair through Open MPI's ob1 (btl self): $ob1_all instructions" \
                 "(MPI calls, PML, convertor, completion; transport and memcpy excluded), of which the PML alone" \
                 "$ob1_pml; bfo's engine against them: $(awk -v a="$eager" -v b="$ob1_all" -v c="$ob1_pml" \
                 'BEGIN { printf "%.2f and %.2f", a / b, a / c }')"
        else
            echo "bench-engine: ob1 not measured (mpirun under callgrind failed: $(tail -1 "$tmp/err"))"
        fi
    else
        echo "bench-engine: ob1 not measured (mpicc failed: $(tail -1 "$tmp/err"))"
    fi
else
    echo "bench-engine: ob1 not measured (no mpicc or mpirun; Debian: libopenmpi-dev)"
fi
