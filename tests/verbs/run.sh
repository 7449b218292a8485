#!/bin/bash
# run.sh - make check-verbs: every scenario tests/verbs/t*.sh in two QEMU
# guests (tests/verbs/vm.sh run2), then a count.
#   tests/verbs/run.sh BFO_BINARY [SCENARIO...]      (default: all of t*.sh)
# Output per scenario in $BFO_VM_OUT_BASE/<name>/ (default build/verbs-out).
set -uo pipefail
cd "$(dirname "$0")/../.."
BFO=$(realpath "${1:?usage: run.sh BFO_BINARY [SCENARIO...]}")
shift
[ -x "$BFO" ] || { echo "run.sh: $BFO is not executable"; exit 1; }
base=$(realpath -m "${BFO_VM_OUT_BASE:-build/verbs-out}")
list=("$@")
[ ${#list[@]} -gt 0 ] || list=(tests/verbs/t*_*.sh)
pass=0 failed=0 t0=$SECONDS
bash tests/verbs/vm.sh setup || exit 1
for t in "${list[@]}"; do
    name=$(basename "$t" .sh)
    out="$base/$name"
    rm -rf "$out" && mkdir -p "$out"
    echo "$BFO" > "$out/bfo.path"
    [ -n "${BFO_VERBS_TEST_ENV:-}" ] && echo "$BFO_VERBS_TEST_ENV" > "$out/env"
    echo "== $name"
    ts=$SECONDS
    BFO_VM_OUT=$out bash tests/verbs/vm.sh run2 "$t" > "$out/vm.log" 2>&1
    rc=$?
    grep -hE '^(ok:|measure:|\[[0-9.]+\] a: (messages|FAIL)|\[[0-9.]+\] b: FAIL)' "$out/out.a.log" "$out/out.b.log" 2>/dev/null | sed 's/^/   /'
    if [ $rc = 0 ] && grep -q '^ok:' "$out/out.a.log"; then
        pass=$((pass + 1))
        echo "ok: $name ($((SECONDS - ts)) s)"
    else
        failed=$((failed + 1))
        echo "FAILED: $name ($((SECONDS - ts)) s); output in $out"
        tail -5 "$out/vm.log" | sed 's/^/   /'
        for g in a b; do echo "   --- guest $g"; tail -15 "$out/out.$g.log" 2>/dev/null | sed 's/^/   /'; done
    fi
done
echo "== check-verbs: $((SECONDS - t0)) s"
echo "verbs: $pass passed, $failed failed"
[ $failed = 0 ]
