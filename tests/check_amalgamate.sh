#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# check_amalgamate.sh - the single header (make amalgamate) is usable alone
# and is the headers it was made from, no more and no less:
#   1. copied alone into an empty directory, it compiles as C11 and C++17
#      with every warning an error;
#   2. no #include "..." of a bfo header is left in it;
#   3. a file that includes it and one that includes every header of
#      include/fsm/ and gen/ preprocess to the same macros (-dM) and the same
#      lines (-E -P, blank lines dropped, sorted: the order differs).
#   bash tests/check_amalgamate.sh SINGLE_H SCRATCH_DIR   (make check-amalgamate)
set -uo pipefail
single=$1 work=$2/amalgamate
CC=${CC:-cc} CXX=${CXX:-c++}
WARN=(-Wall -Wextra -Werror -pedantic)
rm -rf "$work" && mkdir -p "$work/alone" "$work/split"
cp "$single" "$work/alone/bfo_single.h"
pass=0
bad() { echo "check-amalgamate: $*"; exit 1; }

printf '#include "bfo_single.h"\n' >"$work/alone/use.c"
"$CC" -std=c11 "${WARN[@]}" -I "$work/alone" -fsyntax-only "$work/alone/use.c" ||
    bad "bfo_single.h alone does not compile as C11 ($CC)"
pass=$((pass + 1))
"$CXX" -x c++ -std=c++17 "${WARN[@]}" -I "$work/alone" -fsyntax-only "$work/alone/use.c" ||
    bad "bfo_single.h alone does not compile as C++17 ($CXX)"
pass=$((pass + 1))

if grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$single"; then
    bad "bfo_single.h still includes a header by name (above)"
fi
pass=$((pass + 1))

for h in include/fsm/*.h gen/*.h; do printf '#include "%s"\n' "$(basename "$h")"; done >"$work/split/use.c"
"$CC" -std=c11 -E -dM -I include/fsm -I gen "$work/split/use.c" | LC_ALL=C sort >"$work/split.dM" &&
"$CC" -std=c11 -E -dM -I "$work/alone" "$work/alone/use.c" | grep -v '^#define BFO_SINGLE_H *$' |
    LC_ALL=C sort >"$work/alone.dM" || bad "cannot preprocess"
"$CC" -std=c11 -E -P -I include/fsm -I gen "$work/split/use.c" | grep -v '^[[:space:]]*$' |
    LC_ALL=C sort >"$work/split.i" &&
"$CC" -std=c11 -E -P -I "$work/alone" "$work/alone/use.c" | grep -v '^[[:space:]]*$' |
    LC_ALL=C sort >"$work/alone.i" || bad "cannot preprocess"
[ -s "$work/split.i" ] && [ -s "$work/split.dM" ] || bad "nothing preprocessed"
for k in dM i; do
    if ! diff -u "$work/split.$k" "$work/alone.$k" >"$work/diff.$k"; then
        head -20 "$work/diff.$k" | cut -c1-160
        bad "bfo_single.h does not match the headers ($([ $k = dM ] && echo macros || echo code) differ" \
            "above: - in the headers, + in bfo_single.h); make amalgamate makes it again"
    fi
    pass=$((pass + 1))
done
echo "== check-amalgamate: $single compiles alone (C11 $CC, C++17 $CXX) and is" \
    "$(ls include/fsm/*.h gen/*.h | wc -l) headers: $(wc -l <"$work/split.dM") macros, $(wc -l <"$work/split.i") lines"
echo "tests: $pass passed, 0 failed"
