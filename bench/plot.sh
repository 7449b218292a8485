#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/plot.sh - bfo bench over 1 rail and over 2 rails (each with the raw
# TCP baseline measured in the same run), then one plot of the three.
#
#   bash bench/plot.sh [BFO] [OUT.png] [-- bench options, e.g. --sizes 8,1K,64K,1M]
#     BFO     the bfo binary (default build/gcc/bfo)
#     OUT.png default bench.png; the CSVs go next to it (OUT-1rail.csv, OUT-2rails.csv)
# Needs gnuplot (Debian package gnuplot-nox).
set -euo pipefail
BFO=${1:-build/gcc/bfo}; OUT=${2:-bench.png}
shift $(( $# < 2 ? $# : 2 ))
[ "${1:-}" = -- ] && shift
command -v gnuplot >/dev/null || { echo "bench/plot.sh: gnuplot not found (Debian package gnuplot-nox)" >&2; exit 1; }
base=${OUT%.png}
mkdir -p "$(dirname "$OUT")"
"$BFO" run -n 2 --rails 127.0.0.1 -- "$BFO" bench --baseline --csv "$base-1rail.csv" "$@"
"$BFO" run -n 2 --rails 127.0.0.1,127.0.0.2 -- "$BFO" bench --baseline --csv "$base-2rails.csv" "$@"
"$BFO" bench --plot "$OUT" --input "bfo, 1 rail=$base-1rail.csv" --input "bfo, 2 rails=$base-2rails.csv"
