#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# bfo_amalgamate.sh - every header of include/fsm/ and gen/ in one file.
#
#   bash tools/bfo_amalgamate.sh OUT        (make amalgamate: build/dist/bfo_single.h)
#
# Each header comes after the headers it includes (depth first from bfo.h,
# bfo_backend.h, bfo_engine.h, then the others by name), with its own
# `#include "..."` lines and its SPDX line removed (the result has one, at
# its top); system includes and include guards stay, so the result also
# mixes with the separate headers.  The output depends
# only on the headers: no date, no path of this machine.  Run from the
# repository root.  tests/check_amalgamate.sh checks the result against the
# headers (make check-amalgamate, part of make check).
set -euo pipefail
out=${1:?usage: bfo_amalgamate.sh OUT}
dirs=(include/fsm gen)
[ -f include/fsm/bfo.h ] || { echo "bfo_amalgamate: run me from the repository root" >&2; exit 1; }

incl='^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*'
# every header's first line (LICENSE); the single header says it once, first
spdx='SPDX-License-Identifier: BSD-3-Clause'
declare -A state=() # header name -> busy | done
order=()

path_of() {
    local d
    for d in "${dirs[@]}"; do
        if [ -f "$d/$1" ]; then echo "$d/$1"; return 0; fi
    done
    echo "bfo_amalgamate: $1 is included but is in neither include/fsm/ nor gen/" >&2
    return 1
}

visit() { # appends $1's path to order, after everything it includes
    local name=$1 p dep
    case "${state[$name]:-}" in
    done) return 0 ;;
    busy) echo "bfo_amalgamate: $name includes itself (a cycle)" >&2; exit 1 ;;
    esac
    state[$name]=busy
    p=$(path_of "$name")
    for dep in $(sed -n "s/$incl/\\1/p" "$p"); do
        visit "$dep"
    done
    state[$name]=done
    order+=("$p")
}

for root in bfo.h bfo_backend.h bfo_engine.h; do visit "$root"; done
for p in $(ls include/fsm/*.h gen/*.h | LC_ALL=C sort); do visit "$(basename "$p")"; done

ver() { sed -n "s/^#define BFO_VERSION_$1 \\([0-9]*\\)$/\\1/p" include/fsm/bfo.h; }
version="$(ver MAJOR).$(ver MINOR).$(ver PATCH)"
stamp=$(sed -n 's/^#define BFO_GEN_STAMP \(0x[0-9a-f]*\)$/\1/p' gen/bfo_alphabet.h)
abi=$(sed -n 's/^#define BFO_GEN_ABI \([0-9]*\)$/\1/p' gen/bfo_alphabet.h)
[ "$version" != .. ] && [ -n "$stamp" ] && [ -n "$abi" ] ||
    { echo "bfo_amalgamate: no BFO_VERSION_* in bfo.h or no stamp in gen/bfo_alphabet.h" >&2; exit 1; }

tmp="$out.tmp.$$"
mkdir -p "$(dirname "$out")"
{
    cat <<EOF
// $spdx
/* bfo_single.h - bfo $version in one header: the protocol machines, the wire
 * format and the engine (gen/ stamp $stamp, BFO_GEN_ABI $abi).
 *
 * MADE BY tools/bfo_amalgamate.sh (\`make amalgamate\`) from the headers of
 * include/fsm/ and gen/ of bfo $version, listed below: every header in
 * dependency order, its #include "..." lines removed.  Do not edit: change
 * the headers or spec/ and make it again.
 *
 * USE: copy this file alone into your tree and
 *          #include "bfo_single.h"
 *      C11, or C++11 and later.  Everything is static inline: nothing to
 *      link, no implementation macro.  It is bfo.h + bfo_engine.h + the
 *      transition X-macros; the documentation is the separate headers' own,
 *      kept below (start with include/fsm/bfo.h).
 *
 * CONTENTS
EOF
    for p in "${order[@]}"; do echo " *   $p"; done
    cat <<EOF
 */
#ifndef BFO_SINGLE_H
#define BFO_SINGLE_H
EOF
    for p in "${order[@]}"; do
        printf '\n/* ==== %s ==== */\n' "$p"
        sed "/$incl/d; \\|^// $spdx\$|d" "$p"
    done
    printf '\n#endif /* BFO_SINGLE_H */\n'
} >"$tmp"
mv "$tmp" "$out"
echo "bfo_amalgamate: $out: bfo $version, ${#order[@]} headers, $(wc -l <"$out") lines"
