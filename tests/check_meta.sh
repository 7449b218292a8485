#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# check_meta.sh - proves the safety nets catch what they are for, on a
# scratch copy of the repository (the work tree is not touched):
#   1. one line of gen/ edited by hand        -> `make check-gen` fails
#   2. a transition added to the spec, no row -> `make gen && make check-docs` fails (the
#                                                README's table of machines is stale),
#                                                then after `make docs-seq` the coverage
#                                                test, make check's first, fails
#                                                (test_transitions)
#   3. a transition removed from the spec     -> `make gen && make docs-seq`, then the
#                                                coverage test fails
#   4. a state the binding does not name      -> `make gen` fails
#   5. the unchanged copy                     -> check-gen, the coverage test and
#                                                test_abi pass (the nets are not stuck)
#   6. gen/ stamped for other headers (BFO_GEN_ABI)   -> the build stops: regenerate
#   7. headers that require another BFO_GEN_ABI       -> the build stops: regenerate;
#                                                        make gen says the generator is behind
#   8. one gen/ file from another spec (BFO_GEN_STAMP) -> the build stops: regenerate;
#                                                        after make gen it builds again
#   9. bfo_core.h includes gen/bfo_alphabet.h again   -> make check-layers fails:
#      (the base includes gen/, which includes it)       gen/ and include/fsm/ include each other
#  10. a generated header includes bfo_wire.h          -> make check-layers fails
#      (an include/fsm header above gen/)
#  10a. a part of the engine includes a part above it (bfo_engine_pools.h
#      includes bfo_engine_post.h), or one of its own level (bfo_engine_rate.h
#      includes bfo_engine_detect.h)                  -> make check-layers fails
#  10c. a part writes a concern's state that another part owns (the rail
#      machine's TAKE_CREDIT sets bfo_peer.credit.limit itself; frame
#      arrival sets bfo_rail_link.det.last_rx itself) -> make check-layers fails,
#      naming file and line
#  10b. a part calls up without its prototype in bfo_engine_hooks.h
#      (bfo__run_self's removed)                      -> make check-headers fails
#      (the part compiled before the rest of bfo_engine.h)
#  10c. a private engine name used outside the engine: a backend calls
#      bfo__config_defaults (backends/bfo_tp.h, what every transport calls), a tool reads a rail
#      machine's state past bfo_rail_state (bfo_bench.c)
#                                                     -> make check-layers fails,
#                                                        naming file, line and name
#  11. bfo_engine_init_abi without its layout check  -> test_abi (make check) fails:
#      (callers built with other BFO_MAX_RAILS,          the callers are taken
#      BFO_MAX_ACTIONS)
#  12. build/dist/bfo_single.h edited by hand         -> make check-amalgamate fails
#  13. a public function nobody documented    -> tests/check_api_docs.py fails
#  14. docs/api.md documents a made-up one    -> tests/check_api_docs.py fails
#  15. a sequence diagram edited by hand      -> tools/bfo_seq.py update --check fails
#  16. the engine changed, diagrams not redrawn -> `make check-docs` fails
#  17. a snippet's source changed, not copied -> tools/bfo_seq.py update --check fails
#  18. a fragment type no grammar takes      -> `make gen` fails
#  19. a fragment type a grammar takes, and no bfo__rcvd_<TYPE> in the engine
#                                             -> `make gen` passes, `make check` fails
#                                                (the engine does not build)
#  20. an action without its case in the engine -> `make check` fails (-Wswitch)
#  21. a source file without its SPDX line, in a tarball (the files found) and
#      in a git checkout (the tracked files); a new script (#!, no extension)
#      without it                             -> `make check-spdx` (make check) fails
# (make check-docs runs the two scripts; 16 goes through it, rebuilding bfo.)
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
# (-j: make check-docs builds bfo in a fresh copy, its objects side by side)
mk() { make -s -j"$(nproc 2>/dev/null || echo 1)" "$@" CC="${CC:-cc}" CXX="${CXX:-c++}"; }
# the docs checks without a rebuild: the work tree's bfo (make check-meta builds it)
bfo=${BFO:-$top/build/${CC:-cc}/bfo}
docs_check() { python3 tools/bfo_seq.py update --check --bfo "$bfo" docs/protocol.md docs/porting.md; }

# The coverage test and the layouts' test, on their own: `make check` runs
# them (test_transitions first), and CI runs `make check` on the tree itself;
# here only their verdicts on the edited copies matter, not a full build each.
cc_dir=build/$(basename "${CC:-cc}")
tt=$cc_dir/test_transitions
abi_test=$cc_dir/test_abi

fresh
expect pass "unchanged copy: make check-gen" mk check-gen
expect pass "unchanged copy: test_transitions (make check's coverage test)" eval "mk $tt && ./$tt"
expect pass "unchanged copy: test_abi" eval "mk $abi_test && ./$abi_test"

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
expect fail "... and the README's table of machines not redrawn: make check-docs" \
    "README.md: generated blocks are stale" mk check-docs
expect pass "... make docs-seq" mk docs-seq
expect fail "... and no table row for it: test_transitions (make check)" \
    "the table has no row for it" eval "mk $tt && ./$tt"

fresh
sed -i '/^      | FIN_DUP_RCVD @drop -> COMPLETE$/d' "$scratch/repo/spec/recv.rl"
expect pass "transition COMPLETE --FIN_DUP_RCVD--> removed from spec/recv.rl: make gen, make docs-seq" \
    eval "mk gen >/dev/null && mk docs-seq >/dev/null"
expect fail "... while the table still has its row: test_transitions (make check)" \
    "the spec no longer does" eval "mk $tt && ./$tt"

fresh
sed -i 's/ (void)fentry(RETIRED);//' "$scratch/repo/spec/rail_binding.rl"
expect fail "a state left out of name_states in spec/rail_binding.rl: make gen" \
    "has no name" mk gen

# The version stamp: gen/ is locked to include/fsm (BFO_GEN_ABI) and to
# itself (BFO_GEN_STAMP).  check-headers compiles every header alone.
regen="regenerate with make gen"
fresh
sed -i 's/^#define BFO_GEN_ABI [0-9]*$/#define BFO_GEN_ABI 0/' "$scratch/repo/gen/bfo_alphabet.h"
grep -q '^#define BFO_GEN_ABI 0$' "$scratch/repo/gen/bfo_alphabet.h" || { echo "FAIL - could not restamp gen/"; exit 1; }
expect fail "gen/ stamped BFO_GEN_ABI 0 (an older generator): make check-headers" \
    "gen/ was generated by .*: $regen" mk check-headers

fresh
sed -i 's/^#define BFO_GEN_ABI_REQUIRED \([0-9]*\)$/#define BFO_GEN_ABI_REQUIRED 9\1/' \
    "$scratch/repo/include/fsm/bfo_core.h"
grep -q '^#define BFO_GEN_ABI_REQUIRED 9' "$scratch/repo/include/fsm/bfo_core.h" || { echo "FAIL - could not edit bfo_core.h"; exit 1; }
expect fail "include/fsm/bfo_core.h requires another BFO_GEN_ABI: make check-headers" \
    "gen/ was generated by .*: $regen" mk check-headers
expect fail "... and make gen with the old generator" \
    "requires BFO_GEN_ABI 9[0-9]* but tools/bfo_gen.py writes" mk gen

fresh
cp "$scratch/repo/spec/send.rl" "$scratch/send.rl"
sed -i 's/^\(      | RESTARTNACK_RCVD @drop -> COMPLETE\)$/\1\n      | ACK_RCVD @drop -> COMPLETE/' \
    "$scratch/repo/spec/send.rl"
(cd "$scratch/repo" && python3 tools/bfo_gen.py --out "$scratch/other" >/dev/null) || { echo "FAIL - could not generate"; exit 1; }
cp "$scratch/send.rl" "$scratch/repo/spec/send.rl"
cp "$scratch/other/bfo_send.h" "$scratch/repo/gen/bfo_send.h"
expect fail "gen/bfo_send.h from another spec among the others: make check-headers" \
    "gen/bfo_send.h and gen/bfo_alphabet.h come from different runs .*: $regen" mk check-headers
expect pass "... after make gen: make check-headers" eval "make -s gen >/dev/null && make -s check-headers CC=${CC:-cc} CXX=${CXX:-c++}"

# The layers: include/fsm/'s base <- gen/ <- the rest of include/fsm/.
fresh
expect pass "unchanged copy: make check-layers" mk check-layers
sed -i 's/^#include <stdint.h>$/#include <stdint.h>\n#include "bfo_alphabet.h"/' "$scratch/repo/include/fsm/bfo_core.h"
grep -q '^#include "bfo_alphabet.h"$' "$scratch/repo/include/fsm/bfo_core.h" || { echo "FAIL - could not edit bfo_core.h"; exit 1; }
expect fail "include/fsm/bfo_core.h includes gen/bfo_alphabet.h again: make check-layers" \
    "gen/bfo_send.h includes include/fsm/bfo_core.h, which includes gen/ back .*include each other" mk check-layers

fresh
sed -i 's/^#include "bfo_alphabet.h"$/#include "bfo_alphabet.h"\n#include "bfo_wire.h"/' "$scratch/repo/gen/bfo_rail.h"
grep -q '^#include "bfo_wire.h"$' "$scratch/repo/gen/bfo_rail.h" || { echo "FAIL - could not edit gen/bfo_rail.h"; exit 1; }
expect fail "gen/bfo_rail.h includes include/fsm/bfo_wire.h (which includes gen/bfo_codec.h): make check-layers" \
    "gen/bfo_rail.h includes include/fsm/bfo_wire.h, which includes gen/ back \(include/fsm/bfo_wire.h -> gen/bfo_codec.h\)" mk check-layers

# The engine's parts: each includes only parts below it (tests/check_layers.py,
# ENGINE_PARTS), and calls up only through bfo_engine_hooks.h's prototypes.
fresh
sed -i 's/^#include "bfo_engine_hooks.h"$/#include "bfo_engine_hooks.h"\n#include "bfo_engine_post.h"/' \
    "$scratch/repo/include/fsm/bfo_engine_pools.h"
grep -q '^#include "bfo_engine_post.h"$' "$scratch/repo/include/fsm/bfo_engine_pools.h" || { echo "FAIL - could not edit bfo_engine_pools.h"; exit 1; }
expect fail "include/fsm/bfo_engine_pools.h includes bfo_engine_post.h, a part above it: make check-layers" \
    "bfo_engine_pools.h \(level 2\) includes include/fsm/bfo_engine_post.h \(level 4\)" mk check-layers
fresh
sed -i 's/^#include "bfo_engine_pools.h"$/#include "bfo_engine_pools.h"\n#include "bfo_engine_detect.h"/' \
    "$scratch/repo/include/fsm/bfo_engine_rate.h"
grep -q '^#include "bfo_engine_detect.h"$' "$scratch/repo/include/fsm/bfo_engine_rate.h" || { echo "FAIL - could not edit bfo_engine_rate.h"; exit 1; }
expect fail "include/fsm/bfo_engine_rate.h includes bfo_engine_detect.h, a part of its own level: make check-layers" \
    "bfo_engine_rate.h \(level 3\) includes include/fsm/bfo_engine_detect.h \(level 3\)" mk check-layers
fresh
sed -i '/^static inline void bfo__run_self(bfo_engine \*e);$/d' "$scratch/repo/include/fsm/bfo_engine_hooks.h"
grep -q 'bfo__run_self' "$scratch/repo/include/fsm/bfo_engine_hooks.h" && { echo "FAIL - could not edit bfo_engine_hooks.h"; exit 1; }
expect fail "bfo__run_self's prototype gone from bfo_engine_hooks.h (bfo_engine_request.h calls it, bfo_engine_frame.h defines it): make check-headers" \
    "implicit declaration of function .bfo__run_self." mk check-headers

# No private use from outside: backends, tools, mpi/, bench/ and examples/
# use the engine's public API only (tests/check_layers.py, private_use).
fresh
sed -i 's/^\(\s*\)bfo_config_defaults(&d);$/\1bfo__config_defaults(\&d);/' "$scratch/repo/backends/bfo_tp.h"
grep -q '^\s*bfo__config_defaults(&d);$' "$scratch/repo/backends/bfo_tp.h" || { echo "FAIL - could not edit bfo_tp.h"; exit 1; }
expect fail "backends/bfo_tp.h calls the engine's private bfo__config_defaults: make check-layers" \
    "backends/bfo_tp.h:[0-9]+: bfo__config_defaults is private to the engine" mk check-layers
fresh
sed -i 's/bfo_rail_state(b->e, b->peer, k) == BFO_RAIL_ST_UP/b->e->peers[b->peer].rail[k].fsm.cs == BFO_RAIL_ST_UP/' \
    "$scratch/repo/tools/bfo_bench.c"
grep -q 'rail\[k\]\.fsm\.cs == BFO_RAIL_ST_UP' "$scratch/repo/tools/bfo_bench.c" || { echo "FAIL - could not edit bfo_bench.c"; exit 1; }
expect fail "tools/bfo_bench.c reads the rail machine's state past bfo_rail_state: make check-layers" \
    "tools/bfo_bench.c:[0-9]+: peers\[b->peer\]\.rail\[k\]\.fsm is private to the engine" mk check-layers

# Each concern owns its state (tests/check_layers.py, OWNED): a field of
# bfo_rail_link.rate, .det, or bfo_peer.credit, .relay, written outside the
# part that owns it.
fresh
sed -i 's/^    case BFO_RAIL_ACT_TAKE_CREDIT: bfo__credit_heard(e, peer, f); return;$/    case BFO_RAIL_ACT_TAKE_CREDIT: e->peers[peer].credit.limit = f->h.credit.limit; return;/' \
    "$scratch/repo/include/fsm/bfo_engine_machines.h"
grep -q 'e->peers\[peer\].credit.limit = ' "$scratch/repo/include/fsm/bfo_engine_machines.h" || { echo "FAIL - could not edit bfo_engine_machines.h"; exit 1; }
expect fail "include/fsm/bfo_engine_machines.h's TAKE_CREDIT sets credit.limit itself, not through bfo_engine_match.h: make check-layers" \
    "include/fsm/bfo_engine_machines.h:[0-9]+: e->peers\[peer\]\.credit\.limit =: a write outside bfo_engine_match.h" mk check-layers
fresh
sed -i 's/^    bfo__detect_on_heard(e, &p->rail\[rail\]);$/    p->rail[rail].det.last_rx = e->now;/' "$scratch/repo/include/fsm/bfo_engine_frame.h"
grep -q 'det.last_rx = e->now;' "$scratch/repo/include/fsm/bfo_engine_frame.h" || { echo "FAIL - could not edit bfo_engine_frame.h"; exit 1; }
expect fail "include/fsm/bfo_engine_frame.h sets det.last_rx itself, not through bfo_engine_detect.h: make check-layers" \
    "include/fsm/bfo_engine_frame.h:[0-9]+: p->rail\[rail\]\.det\.last_rx =: a write outside bfo_engine_detect.h" mk check-layers

# Comments say why; the docs name the tests (tests/check_layers.py,
# test_names): a test's name put back into an engine comment fails.
fresh
sed -i 's|^ \* other (docs/engine-design.md, "Striping by measured rate"). \*/$| * other (test_rails_lagging_together_are_not_demoted). */|' "$scratch/repo/include/fsm/bfo_engine_rate.h"
grep -q 'test_rails_lagging_together_are_not_demoted' "$scratch/repo/include/fsm/bfo_engine_rate.h" || { echo "FAIL - could not edit bfo_engine_rate.h"; exit 1; }
expect fail "include/fsm/bfo_engine_rate.h names a test in a comment: make check-layers" \
    "include/fsm/bfo_engine_rate.h:[0-9]+: test_rails_lagging_together_are_not_demoted: a test's name in the engine" mk check-layers

# The license line: every source file says it first (tests/check_spdx.sh),
# whether the tree is a git checkout (the tracked files) or not (the files
# found; the scratch copy is not one).
fresh
expect pass "unchanged copy, not a git checkout: make check-spdx" mk check-spdx
sed -i '1{/SPDX-License-Identifier: BSD-3-Clause/d}' "$scratch/repo/include/fsm/bfo_core.h"
expect fail "include/fsm/bfo_core.h without its SPDX line, not a git checkout: make check-spdx" \
    "^include/fsm/bfo_core.h: no 'SPDX-License-Identifier: BSD-3-Clause' first" mk check-spdx
fresh
printf '#!/bin/sh\necho release\n' >"$scratch/repo/tools/bfo_release"
expect fail "a new script tools/bfo_release (#!, no extension) without the line: make check-spdx" \
    "^tools/bfo_release: no 'SPDX-License-Identifier: BSD-3-Clause' first" mk check-spdx
fresh
(cd "$scratch/repo" && git init -q && git add -A) || { echo "FAIL - could not make a git checkout"; exit 1; }
expect pass "unchanged copy, a git checkout: make check-spdx" mk check-spdx
sed -i '2{/SPDX-License-Identifier: BSD-3-Clause/d}' "$scratch/repo/tools/bfo_seq.py"
expect fail "tools/bfo_seq.py without its SPDX line (after #!), a git checkout: make check-spdx" \
    "^check_spdx: 1 of [0-9]+ source files \(git ls-files\)" mk check-spdx

# The layouts: a library's engine init refuses a caller built with other
# layout options (tests/test_abi.c, two kinds of translation unit).
fresh
sed -i 's/^    int rc = bfo_abi_check(caller, BFO_ABI_HERE, NULL, 0);$/    int rc = BFO_OK;\n    (void)caller;/' \
    "$scratch/repo/include/fsm/bfo_engine_init.h"
grep -q '^    (void)caller;$' "$scratch/repo/include/fsm/bfo_engine_init.h" || { echo "FAIL - could not edit bfo_engine_init.h"; exit 1; }
expect fail "bfo_engine_init_abi without its layout check: test_abi" \
    "FAILED  \] test_more_rails_in_the_caller_is_refused_by_name" eval "mk $abi_test && ./$abi_test"

# The single header: its check compares it with the headers it is made of.
fresh
expect pass "unchanged copy: make check-amalgamate" mk check-amalgamate
sed -i '0,/^#define BFO_FRAG_COUNT /{/^#define BFO_FRAG_COUNT /d}' "$scratch/repo/build/dist/bfo_single.h"
expect fail "a line of build/dist/bfo_single.h removed by hand: make check-amalgamate" \
    "bfo_single.h does not match the headers" mk check-amalgamate

fresh
printf '/* a new public function */\nstatic inline int bfo_frame_count(void) { return 0; }\n' \
    >>"$scratch/repo/include/fsm/bfo_wire.h"
expect fail "bfo_frame_count() added to bfo_wire.h, not in docs/api.md: tests/check_api_docs.py" \
    "bfo_frame_count .* is public but not documented" python3 tests/check_api_docs.py

fresh
sed -i 's/^| `bfo_handle_eq` |/| `bfo_handle_eq`, `bfo_handle_cmp` |/' "$scratch/repo/docs/api.md"
expect fail "docs/api.md documents bfo_handle_cmp, which does not exist: tests/check_api_docs.py" \
    "bfo_handle_cmp is documented but no such public function exists" python3 tests/check_api_docs.py

fresh
sed -i '0,/R1->>R0: ACK rseq 0/s//R1->>R0: ACK rseq 9/' "$scratch/repo/docs/protocol.md"
expect fail "a sequence diagram of docs/protocol.md edited by hand: tools/bfo_seq.py update --check" \
    "docs/protocol.md: generated blocks are stale" docs_check

fresh
sed -i 's/BFO__DEF(eager_limit, 4096)/BFO__DEF(eager_limit, 2048)/' "$scratch/repo/include/fsm/bfo_engine_types.h"
grep -q 'BFO__DEF(eager_limit, 2048)' "$scratch/repo/include/fsm/bfo_engine_types.h" || { echo "FAIL - could not edit bfo_engine_types.h"; exit 1; }
expect fail "the engine's default eager limit changed, diagrams not redrawn: make check-docs" \
    "docs/protocol.md: generated blocks are stale" mk check-docs

fresh
sed -i 's/be->post_send = my_post_send;        \/\* required \*\//be->post_send = my_post_send; \/* the one callback required *\//' \
    "$scratch/repo/tests/test_porting.c"
expect fail "a snippet's source in tests/test_porting.c changed, docs/porting.md not: tools/bfo_seq.py update --check" \
    "docs/porting.md: generated blocks are stale" docs_check

# Fragment types drive the engine's switches: a type or an action the
# engine has no code for stops the build, rather than being dropped at run
# time as a protocol violation.
goodbye='fragment GOODBYE        0x1f railctl -       -     "rail control: the peer leaves"'
fresh
sed -i "s/^\(fragment PROBEACK .*\)\$/\1\n$goodbye/" "$scratch/repo/spec/alphabet.tab"
grep -q '^fragment GOODBYE' "$scratch/repo/spec/alphabet.tab" || { echo "FAIL - could not add a fragment type"; exit 1; }
expect fail "fragment type GOODBYE added to spec/alphabet.tab, no grammar takes it: make gen" \
    "fragment GOODBYE: no machine has a transition on GOODBYE_RCVD" mk gen
sed -i 's/^\(      | BROKEN_RCVD -> RETIRED\)$/\1\n      | GOODBYE_RCVD -> RETIRED/' "$scratch/repo/spec/rail.rl"
grep -q 'GOODBYE_RCVD -> RETIRED' "$scratch/repo/spec/rail.rl" || { echo "FAIL - could not add a transition"; exit 1; }
expect pass "... and spec/rail.rl takes GOODBYE_RCVD in RETIRED: make gen" mk gen
expect fail "... and the engine has no bfo__rcvd_GOODBYE: make check" \
    "bfo__rcvd_GOODBYE" mk check

fresh
sed -i 's/^\(  action retire .*\)$/\1\n  action note_retired       { BFO_RAIL__EMIT(NOTE_RETIRED); }/' \
    "$scratch/repo/spec/rail_binding.rl"
sed -i 's/^      | RAIL_ERROR -> RETIRED$/      | RAIL_ERROR @note_retired -> RETIRED/' "$scratch/repo/spec/rail.rl"
grep -q 'RAIL_ERROR @note_retired -> RETIRED' "$scratch/repo/spec/rail.rl" || { echo "FAIL - could not add an action"; exit 1; }
expect pass "action note_retired added to spec/rail.rl and its binding: make gen" mk gen
expect fail "... and no case for it in bfo__rail_action: make check" \
    "BFO_RAIL_ACT_NOTE_RETIRED.{0,3} not handled in switch" mk check

echo "meta: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
