#!/usr/bin/env bash
# check_meta.sh - proves the safety nets catch what they are for, on a
# scratch copy of the repository (the work tree is not touched):
#   1. one line of gen/ edited by hand        -> `make check-gen` fails
#   2. a transition added to the spec, no row -> `make gen && make check` fails
#   3. a transition removed from the spec     -> `make gen && make check` fails
#   4. a state the binding does not name      -> `make gen` fails
#   5. the unchanged copy                     -> both pass (the nets are not stuck)
# Needs what `make gen` needs (ragel, python3).  Run by `make check-meta`.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
pass=0 fail=0

fresh() { # a clean copy of the tracked files
    rm -rf "$scratch/repo" && mkdir -p "$scratch/repo"
    (cd "$top" && git ls-files -z | xargs -0 cp --parents -t "$scratch/repo")
}
expect() { # expect pass|fail "what" [reason-regex] command...
    local want=$1 what=$2 reason=""
    shift 2
    if [ "$want" = fail ]; then reason=$1; shift; fi
    if (cd "$scratch/repo" && "$@") >"$scratch/log" 2>&1; then got=pass; else got=fail; fi
    if [ "$got" = "$want" ] && { [ -z "$reason" ] || grep -qE "$reason" "$scratch/log"; }; then
        if [ "$want" = fail ]; then
            echo "ok   - $what: fails, saying:"
            grep -E "$reason" "$scratch/log" | head -2 | sed 's/^/       /'
        else
            echo "ok   - $what: passes"
        fi
        pass=$((pass + 1))
    else
        echo "FAIL - $what: expected to ${want}${reason:+ saying /$reason/}; last lines:"
        tail -15 "$scratch/log" | sed 's/^/       /'
        fail=$((fail + 1))
    fi
}
mk() { make -s "$@" CC="${CC:-cc}" CXX="${CXX:-c++}"; }

fresh
expect pass "unchanged copy: make check-gen" mk check-gen
expect pass "unchanged copy: make check" mk check

fresh
sed -i '0,/BFO_SEND_ST_RNDV_SENT = /s/BFO_SEND_ST_RNDV_SENT = \([0-9]*\)/BFO_SEND_ST_RNDV_SENT = 9\1/' \
    "$scratch/repo/gen/bfo_send.h"
expect fail "one line of gen/bfo_send.h edited by hand: make check-gen" \
    "gen/ differs from what spec/ generates" mk check-gen

fresh
sed -i 's/^\(      | RESTARTNACK_RCVD @drop -> COMPLETE\)$/\1\n      | ACK_RCVD @drop -> COMPLETE/' \
    "$scratch/repo/spec/send.rl"
grep -q 'ACK_RCVD @drop -> COMPLETE' "$scratch/repo/spec/send.rl" || { echo "FAIL - could not add a transition"; exit 1; }
expect pass "transition COMPLETE --ACK_RCVD--> added to spec/send.rl: make gen" mk gen
expect fail "... and no table row for it: make check" \
    "the table has no row for it" mk check

fresh
sed -i '/^      | FIN_DUP_RCVD @drop -> COMPLETE$/d' "$scratch/repo/spec/recv.rl"
expect pass "transition COMPLETE --FIN_DUP_RCVD--> removed from spec/recv.rl: make gen" mk gen
expect fail "... while the table still has its row: make check" \
    "the spec no longer does" mk check

fresh
sed -i 's/ (void)fentry(RETIRED);//' "$scratch/repo/spec/rail_binding.rl"
expect fail "a state left out of name_states in spec/rail_binding.rl: make gen" \
    "has no name" mk gen

echo "meta: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
