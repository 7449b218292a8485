#!/usr/bin/env bash
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
read -r crowd crowd_nn < <(per crowd 1000 11000)
echo "bench-engine: eager 8-byte send+receive: $eager instructions in the engine (+ $eager_nn in the null transport; memcpy excluded)"
echo "bench-engine: 1 MiB rendezvous send+receive: $rndv instructions in the engine (+ $rndv_nn in the null transport; memcpy excluded)"
echo "bench-engine: eager 8-byte send+receive with 100,000 other receives posted over 1,000 contexts: $crowd instructions in the engine (matching in bins: the crowd costs $((crowd - eager)))"
read -r eager_iov eager_iov_nn < <(per eager-iov 1000 11000)
read -r rndv_iov rndv_iov_nn < <(per rndv-iov 10 60)
echo "bench-engine: the same described (iovec: 8 bytes in 2 segments; 1 MiB in 16, staged by the engine): eager $eager_iov, rendezvous $rndv_iov instructions in the engine (+ $eager_iov_nn, $rndv_iov_nn in the null transport; memcpy excluded)"
