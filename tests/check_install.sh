#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# check_install.sh - bfo as a user outside this tree gets it (make check-install):
#   install into a scratch prefix; the files are exactly the list; bfo.pc
#   answers pkg-config; every installed header compiles alone (C11, C++17;
#   a part of the engine before the rest of bfo_engine.h);
#   bfo.pc's Cflags carry the layout bfo was built with (BFO_MAX_RAILS,
#   BFO_MAX_ACTIONS): a program built with them has the installed `bfo
#   abi`'s layout, and one built with another BFO_MAX_RAILS is told so;
#   examples/mini_mpi, copied out of the tree, builds through pkg-config;
#   its two ranks run as two processes over two loopback rails under the
#   installed `bfo run`, and its loopback program runs; uninstall leaves
#   nothing.  Then under DESTDIR next to a directory that was there before
#   (uninstall keeps it).  Last, with nothing installed, the example builds
#   against build/dist/bfo_single.h copied alone into an empty directory,
#   pkg-config out of reach, and runs.
#   bash tests/check_install.sh   (run by make check-install, which passes
#   CC CXX MAKE MAKE_ARGS VERSION INSTALL_HDR AMALG)
set -uo pipefail
CC=${CC:-cc} CXX=${CXX:-c++} MAKE=${MAKE:-make} MAKE_ARGS=${MAKE_ARGS:-}
: "${VERSION:?}" "${INSTALL_HDR:?}" "${AMALG:?}"
top=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
ok() { echo "ok: $*"; pass=$((pass + 1)); }
fail() { echo "FAIL: $*"; echo "tests: $pass passed, 1 failed"; exit 1; }
mk() { $MAKE -s --no-print-directory $MAKE_ARGS "$@"; }
inventory() { (cd "$1" && find . -mindepth 1 | LC_ALL=C sort); }

prefix=$tmp/prefix
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig

# ---- install into a prefix that does not exist yet
mk install PREFIX="$prefix" >"$tmp/log" 2>&1 || { cat "$tmp/log"; fail "make install PREFIX=$prefix"; }
{
    echo ./bin/bfo
    for h in $INSTALL_HDR; do echo "./include/bfo/$h"; done
    echo ./lib/libbfo_net.a
    echo ./lib/pkgconfig/bfo.pc
    echo ./share/doc/bfo/LICENSE
} | LC_ALL=C sort >"$tmp/want"
(cd "$prefix" && find . -type f | LC_ALL=C sort) >"$tmp/got"
diff -u "$tmp/want" "$tmp/got" || fail "make install: the installed files are not the list (- expected, + found)"
ok "make install PREFIX=<scratch>: $(wc -l <"$tmp/got") files, exactly the list"

v=$(pkg-config --modversion bfo) || fail "pkg-config cannot read the installed bfo.pc"
[ "$v" = "$VERSION" ] || fail "pkg-config --modversion bfo says $v, include/fsm/bfo.h says $VERSION"
cflags=$(pkg-config --cflags bfo) libs=$(pkg-config --libs bfo)
case " $cflags " in *" -I$prefix/include/bfo "*) ;; *) fail "pkg-config --cflags bfo: $cflags" ;; esac
case " $libs " in *" -L$prefix/lib -lbfo_net "*) ;; *) fail "pkg-config --libs bfo: $libs" ;; esac
[ "$(pkg-config --variable=bindir bfo)" = "$prefix/bin" ] || fail "pkg-config --variable=bindir bfo"
req=$(pkg-config --print-requires bfo | tr '\n' ' ' | sed 's/ *$//')
grep -qx 'License: BSD-3-Clause' "$prefix/lib/pkgconfig/bfo.pc" || fail "bfo.pc names no License: BSD-3-Clause"
lic=$(pkg-config --variable=docdir bfo)/LICENSE
[ "$lic" = "$prefix/share/doc/bfo/LICENSE" ] && cmp -s LICENSE "$lic" ||
    fail "bfo.pc's docdir/LICENSE ($lic) is not the LICENSE of the tree"
ok "bfo.pc: version $v, Cflags -I<prefix>/include/bfo, Libs -lbfo_net${req:+, Requires $req}," \
    "License BSD-3-Clause, its text in <prefix>/share/doc/bfo/LICENSE"

n=0
for h in "$prefix"/include/bfo/*.h; do
    # a part of the engine (bfo_engine_*.h) first, then the rest of
    # bfo_engine.h, as make check-headers compiles it: alone, what it calls
    # up through bfo_engine_hooks.h would be declared but never defined
    case $(basename "$h") in
    bfo_engine_*) printf '#include "%s"\n#include "bfo_engine.h"\n' "$(basename "$h")" >"$tmp/hdr.c" ;;
    *) printf '#include "%s"\n' "$(basename "$h")" >"$tmp/hdr.c" ;;
    esac
    # shellcheck disable=SC2086
    $CC -std=c11 -Wall -Wextra -Werror -pedantic $cflags -fsyntax-only "$tmp/hdr.c" ||
        fail "installed $(basename "$h") does not compile alone as C11"
    # shellcheck disable=SC2086
    $CXX -x c++ -std=c++17 -Wall -Wextra -Werror -pedantic $cflags -fsyntax-only "$tmp/hdr.c" ||
        fail "installed $(basename "$h") does not compile alone as C++17"
    n=$((n + 1))
done
ok "every installed header ($n) compiles alone with pkg-config --cflags bfo, as C11 and C++17" \
    "(a part of the engine before the rest of bfo_engine.h)"

# ---- the layout: what the archives and bin/bfo were built with is in bfo.pc
layout=$("$prefix/bin/bfo" abi) || fail "the installed bfo abi"
rails=$(sed -n 's/^max_rails //p' <<<"$layout") actions=$(sed -n 's/^max_actions //p' <<<"$layout")
case " $cflags " in *" -DBFO_MAX_RAILS=$rails -DBFO_MAX_ACTIONS=$actions "*) ;;
*) fail "pkg-config --cflags bfo ($cflags) does not carry the layout bfo was built with (BFO_MAX_RAILS $rails, BFO_MAX_ACTIONS $actions)" ;;
esac
cat >"$tmp/abi.c" <<'EOF'
/* A program's layout against the installed bfo's (`bfo abi` on stdin). */
#include <stdio.h>
#include <string.h>

#include "bfo_engine.h"

int main(void)
{
    bfo_abi lib;
    char name[32], why[256];
    unsigned v;
    memset(&lib, 0, sizeof lib);
    while (scanf("%31s %u", name, &v) == 2) {
#define F(f) if (!strcmp(name, #f)) lib.f = v;
        F(version) F(max_rails) F(max_actions) F(sizeof_engine) F(sizeof_peer) F(sizeof_stats)
        F(sizeof_request) F(sizeof_config) F(sizeof_backend) F(sizeof_step)
    }
    int rc = bfo_abi_check(BFO_ABI_HERE, &lib, why, sizeof why);
    puts(rc == BFO_OK ? "the installed bfo's layout" : why);
    return rc != BFO_OK;
}
EOF
# shellcheck disable=SC2086
$CC -std=c11 -Wall -Wextra -Werror -pedantic $cflags "$tmp/abi.c" -o "$tmp/abi" || fail "the layout probe does not build"
"$prefix/bin/bfo" abi | "$tmp/abi" >"$tmp/run" ||
    { cat "$tmp/run"; fail "a program built with pkg-config --cflags bfo does not have the installed bfo's layout"; }
other=$((rails * 2))
$CC -std=c11 -Wall -Wextra -Werror -pedantic -I"$prefix/include/bfo" -DBFO_MAX_RAILS=$other "$tmp/abi.c" \
    -o "$tmp/abi_other" || fail "the layout probe does not build with BFO_MAX_RAILS=$other"
if "$prefix/bin/bfo" abi | "$tmp/abi_other" >"$tmp/run"; then
    fail "a program built with BFO_MAX_RAILS=$other matched a bfo built with $rails"
fi
grep -q "BFO_MAX_RAILS is $other in the caller, $rails in the library" "$tmp/run" ||
    { cat "$tmp/run"; fail "a program built with BFO_MAX_RAILS=$other: the mismatch is not named"; }
ok "bfo.pc's Cflags carry -DBFO_MAX_RAILS=$rails -DBFO_MAX_ACTIONS=$actions: a program built with them" \
    "has bfo abi's layout; one built with BFO_MAX_RAILS=$other is told '$(cut -d';' -f1 "$tmp/run")'"

# ---- the example, out of the tree, through pkg-config
cp -r examples/mini_mpi "$tmp/src"
(cd "$tmp/src" && $MAKE -s --no-print-directory CC="$CC") >"$tmp/log" 2>&1 ||
    { cat "$tmp/log"; fail "examples/mini_mpi does not build against the installed bfo"; }
ok "examples/mini_mpi builds out of the tree: make (pkg-config --cflags --libs bfo)"

(cd "$tmp/src" && "$prefix/bin/bfo" run -n 2 --rails 127.0.0.1,127.0.0.2 --timeout 120 -- ./mini_mpi) \
    >"$tmp/run" 2>&1
rc=$?
cat "$tmp/run"
[ "$rc" -eq 0 ] || fail "mini_mpi: two ranks over two loopback rails exited $rc"
[ "$(grep -c '^mini_mpi\[[01]\]: 39 messages, 4713135 bytes from rank [01] verified over 2 rails' "$tmp/run")" -eq 2 ] ||
    fail "mini_mpi: not both ranks said every message was verified"
ok "mini_mpi: 2 processes, 2 rails (127.0.0.1, 127.0.0.2): every message of every size, both ways, verified"

(cd "$tmp/src" && ./mini_mpi_loopback) >"$tmp/run" 2>&1 || { cat "$tmp/run"; fail "mini_mpi_loopback"; }
cat "$tmp/run"
[ "$(grep -c 'verified$' "$tmp/run")" -eq 2 ] || fail "mini_mpi_loopback: not both ranks verified"
ok "mini_mpi_loopback (engine only, installed headers): both ranks verified"

# ---- uninstall: nothing left, not even the directories install made
mk uninstall PREFIX="$prefix" >"$tmp/log" 2>&1 || { cat "$tmp/log"; fail "make uninstall PREFIX=$prefix"; }
if [ -e "$prefix" ]; then
    inventory "$prefix"
    fail "make uninstall left the above in the prefix"
fi
ok "make uninstall PREFIX=<scratch>: nothing left (the prefix itself was made by install)"

# ---- DESTDIR, PREFIX=/usr/local, and a directory that was there before
stage=$tmp/stage
mkdir -p "$stage/usr/local/bin"
mk install DESTDIR="$stage" PREFIX=/usr/local >"$tmp/log" 2>&1 || { cat "$tmp/log"; fail "make install DESTDIR"; }
[ -x "$stage/usr/local/bin/bfo" ] && [ -f "$stage/usr/local/include/bfo/bfo.h" ] ||
    fail "make install DESTDIR=<stage> PREFIX=/usr/local: not under <stage>/usr/local"
grep -qx 'prefix=/usr/local' "$stage/usr/local/lib/pkgconfig/bfo.pc" ||
    fail "bfo.pc under DESTDIR must name the final prefix /usr/local"
[ "$(inventory "$stage" | grep -vcE '^\./usr(/local(/(bin|include|lib|share)(/.*)?)?)?$')" -eq 0 ] ||
    fail "make install DESTDIR wrote outside <stage>/usr/local/{bin,include,lib,share}"
mk uninstall DESTDIR="$stage" PREFIX=/usr/local >"$tmp/log" 2>&1 || { cat "$tmp/log"; fail "make uninstall DESTDIR"; }
left=$(inventory "$stage" | tr '\n' ' ')
[ "$left" = "./usr ./usr/local ./usr/local/bin " ] ||
    fail "make uninstall DESTDIR: left '$left', want exactly the directories that were there before"
ok "DESTDIR=<stage> PREFIX=/usr/local: installed under <stage>, bfo.pc names /usr/local; uninstall kept only the bin/ that was there"

# ---- the single header alone, nothing installed, no pkg-config
mkdir "$tmp/single"
cp "$AMALG" "$tmp/single/" || fail "no $AMALG (make amalgamate)"
[ "$(ls -A "$tmp/single")" = bfo_single.h ] || fail "the single header's directory holds more than it"
(cd "$tmp/src" && $MAKE -s --no-print-directory CC="$CC" PKG_CONFIG=false single SINGLE_DIR="$tmp/single") \
    >"$tmp/log" 2>&1 || { cat "$tmp/log"; fail "examples/mini_mpi against the single header alone"; }
(cd "$tmp/src" && ./mini_mpi_single) >"$tmp/run" 2>&1 || { cat "$tmp/run"; fail "mini_mpi_single"; }
cat "$tmp/run"
[ "$(grep -c 'verified$' "$tmp/run")" -eq 2 ] || fail "mini_mpi_single: not both ranks verified"
ok "mini_mpi_single: loopback.c built against bfo_single.h alone in an empty directory, both ranks verified"

cd "$top"
echo "== check-install: bfo $VERSION installs, builds an out-of-tree MPI layer through pkg-config, runs, uninstalls clean"
echo "tests: $pass passed, 0 failed"
