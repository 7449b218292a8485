#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# bfo_amalgamate.sh - every header of include/fsm/ and gen/ in one file.
#
#   bash tools/bfo_amalgamate.sh OUT        (make amalgamate: build/dist/bfo_single.h)
#
# Each header comes where it is first included, as the preprocessor reads
# it (from bfo.h, bfo_backend.h, bfo_engine.h, then the others by name):
# its `#include "..."` lines replaced by the headers they name (once each)
# and its SPDX line removed (the result has one, at its top), so that
# bfo_engine.h's documentation and API come before the parts it includes
# after them; system includes and include guards stay, so the result also
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

visit() { # appends $1's path to order, and each header it includes where it includes it
    local name=$1 p dep
    case "${state[$name]:-}" in
    done) return 0 ;;
    busy) echo "bfo_amalgamate: $name includes itself (a cycle)" >&2; exit 1 ;;
    esac
    state[$name]=busy
    p=$(path_of "$name")
    order+=("$p")
    for dep in $(sed -n "s/$incl/\\1/p" "$p"); do
        visit "$dep"
    done
    state[$name]=done
}

emitted=" "
emit() { # header $1 (a path), each #include "..." of it replaced by its header, once
    local p=$1 line dep back=0
    emitted="$emitted$p "
    printf '\n/* ==== %s ==== */\n' "$p"
    while IFS= read -r line || [ -n "$line" ]; do
        if [[ $line =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*\"([^\"]*)\" ]]; then
            dep=$(path_of "${BASH_REMATCH[1]}")
            case $emitted in *" $dep "*) continue ;; esac
            emit "$dep"
            back=1
        elif [ "$line" != "// $spdx" ]; then
            if [ $back = 1 ] && [ -n "$line" ]; then # the includer goes on
                printf '\n/* ==== %s, continued ==== */\n' "$p"
                back=0
            fi
            printf '%s\n' "$line"
        fi
    done <"$p"
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
 * include/fsm/ and gen/ of bfo $version, listed below: every header where
 * it is first included, in the place of that #include "...".  Do not
 * edit: change the headers or spec/ and make it again.
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
        case $emitted in *" $p "*) ;; *) emit "$p" ;; esac
    done
    printf '\n#endif /* BFO_SINGLE_H */\n'
} >"$tmp"
mv "$tmp" "$out"
echo "bfo_amalgamate: $out: bfo $version, ${#order[@]} headers, $(wc -l <"$out") lines"
