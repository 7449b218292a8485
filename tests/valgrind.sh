#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# valgrind.sh BUILD_DIR - memcheck on a subset: the unit tests (not
# test_noalloc: it interposes malloc itself) and a few `bfo sim` runs
# (the standard set, random fault schedules, a traced run), two at a time;
# the engine's tests (ENGINE_TESTS, from make), test_engine_rate, the
# longest, in four shards (--shard K/4).
# Any memcheck error or leak (definite or possible) fails it.  make
# check-valgrind runs it on a build without sanitizers.
set -uo pipefail
build=${1:?usage: valgrind.sh BUILD_DIR}
command -v valgrind >/dev/null || { echo "check-valgrind: valgrind not installed (apt-get install valgrind)"; exit 1; }
supp=$(cd "$(dirname "$0")" && pwd)/valgrind.supp # what is not ours (tests/valgrind.supp says what)
vg="valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,possible --suppressions=$supp"
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

engine=() # test_engine_rate's shards first, the longest
for t in ${ENGINE_TESTS:?valgrind.sh: ENGINE_TESTS (the engine\'s test programs) not set: run it from make check-valgrind}; do
    if [ "$t" = test_engine_rate ]; then
        for k in 0 1 2 3; do engine=("$t-$k|$build/$t --shard $k/4" "${engine[@]}"); done
    else
        engine+=("$t|$build/$t")
    fi
done
jobs=( # the longest first
    "${engine[@]}"
    "test_wire|$build/test_wire"
    "test_transitions|$build/test_transitions"
    "test_scenarios|$build/test_scenarios"
    "test_verbs_map|$build/test_verbs_map"
    "test_porting|$build/test_porting"
    "test_net|$build/test_net"
    "test_boot|$build/test_boot"
    "sim-standard|$build/bfo sim"
    "sim-random|$build/bfo sim --random 1000 --seed 11"
    "sim-trace|$build/bfo sim --msg 0>1:4M --fault FRAG#3:lose --trace"
)

run() { # name|command: its log, its exit status, its time
    local name=${1%%|*} cmd=${1#*|} t0 rc
    t0=$(date +%s)
    # shellcheck disable=SC2086 # the command is words
    $vg $cmd >"$logs/$name.log" 2>&1
    rc=$?
    echo "$rc $(($(date +%s) - t0))" >"$logs/$name.rc"
}
export -f run
export vg logs

printf '%s\n' "${jobs[@]}" | xargs -d '\n' -P 2 -I{} bash -c 'run "$@"' _ {}

passed=0 failed=0
for j in "${jobs[@]}"; do
    name=${j%%|*}
    read -r rc secs <"$logs/$name.rc"
    # cmocka's "[  PASSED  ] N test(s)", bfo sim's "sim: N passed, M failed"
    n=$(sed -n -e 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' -e 's/^sim: \([0-9]*\) passed.*/\1/p' "$logs/$name.log" | tail -1)
    if [ "$rc" -eq 0 ]; then
        echo "ok: $name under memcheck (${n:-0} passed, ${secs} s)"
        passed=$((passed + ${n:-0}))
    else
        echo "FAILED: $name under memcheck (exit $rc):"
        grep -E '^==[0-9]+==' "$logs/$name.log" | head -40
        tail -5 "$logs/$name.log"
        failed=$((failed + 1))
    fi
done
echo "== check-valgrind: ${#jobs[@]} runs, $failed failed"
echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
