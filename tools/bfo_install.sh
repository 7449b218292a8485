#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# bfo_install.sh - make install / make uninstall (the Makefile passes the
# variables below; run from the repository root).
#
#   install:   BFO_BIN -> BINDIR/bfo; HEADERS -> INCLUDEDIR/bfo/; ARCHIVES ->
#              LIBDIR/; bfo.pc -> PKGCONFIGDIR/; LICENSE -> DOCDIR/ (a
#              package must carry its license; bfo.pc names it: License,
#              License.file) (everything under DESTDIR).
#   uninstall: removes those files (every name any configuration installs),
#              INCLUDEDIR/bfo when empty, and the directories install had to
#              create, when empty.  bfo.pc remembers which those were
#              (bfo_created_dirs), so a directory that was there before,
#              /usr/local/bin say, stays even when it ends up empty.
#
# bfo.pc's Cflags carry PC_CFLAGS, the layout the archives were built with
# (-DBFO_MAX_RAILS=N -DBFO_MAX_ACTIONS=N, read from the compiler by the
# Makefile), so that a program compiled through pkg-config lays bfo's
# structs out as the archives do (include/fsm/bfo.h, COMPILE-TIME OPTIONS).
#
# Variables: DESTDIR PREFIX BINDIR INCLUDEDIR LIBDIR PKGCONFIGDIR DOCDIR, BFO_BIN,
# HEADERS, ALL_HEADER_NAMES, ARCHIVES, VERSION, PC_REQUIRES, PC_LIBS,
# PC_CFLAGS.
set -euo pipefail
what=${1:?usage: bfo_install.sh install|uninstall}
: "${PREFIX:?}" "${BINDIR:?}" "${INCLUDEDIR:?}" "${LIBDIR:?}" "${PKGCONFIGDIR:?}" "${DOCDIR:?}"
DESTDIR=${DESTDIR:-}
for d in "$PREFIX" "$BINDIR" "$INCLUDEDIR" "$LIBDIR" "$PKGCONFIGDIR" "$DOCDIR"; do
    case $d in /*) ;; *) echo "bfo_install: $d: install directories must be absolute" >&2; exit 1 ;; esac
done
pc=$DESTDIR$PKGCONFIGDIR/bfo.pc
incdir=$INCLUDEDIR/bfo

created_before() { # the directories an earlier install recorded in bfo.pc
    [ -f "$pc" ] && sed -n 's/^bfo_created_dirs=//p' "$pc" || true
}

relative() { # $1 under PREFIX as ${prefix}/..., else as it is (bfo.pc)
    case $1 in "$PREFIX") echo '${prefix}' ;; "$PREFIX"/*) echo "\${prefix}${1#"$PREFIX"}" ;; *) echo "$1" ;; esac
}

if [ "$what" = install ]; then
    : "${BFO_BIN:?}" "${HEADERS:?}" "${ARCHIVES:?}" "${VERSION:?}" "${PC_CFLAGS?}"
    if ! [[ $PC_CFLAGS =~ ^-DBFO_MAX_RAILS=[1-9][0-9]*\ -DBFO_MAX_ACTIONS=[1-9][0-9]*$ ]]; then
        echo "bfo_install: the layout the archives were built with is unknown" \
            "(PC_CFLAGS='$PC_CFLAGS', want -DBFO_MAX_RAILS=N -DBFO_MAX_ACTIONS=N)" >&2
        exit 1
    fi
    created=$(created_before)
    for d in "$BINDIR" "$incdir" "$LIBDIR" "$PKGCONFIGDIR" "$DOCDIR"; do
        p=$d missing=""
        while [ ! -d "$DESTDIR$p" ]; do
            missing="$p $missing"
            p=$(dirname "$p")
        done
        for m in $missing; do
            case " $created " in *" $m "*) ;; *) created="$created $m" ;; esac
        done
        mkdir -p "$DESTDIR$d"
    done
    created=$(echo $created) # one space apart, parents first
    install -m 755 "$BFO_BIN" "$DESTDIR$BINDIR/bfo"
    install -m 644 $HEADERS "$DESTDIR$incdir/"
    install -m 644 $ARCHIVES "$DESTDIR$LIBDIR/"
    install -m 644 LICENSE "$DESTDIR$DOCDIR/"
    libs="-L\${libdir}"
    for a in $ARCHIVES; do
        a=${a##*/lib}
        libs="$libs -l${a%.a}"
    done
    {
        echo "# bfo.pc - written by make install (tools/bfo_install.sh)"
        echo "prefix=$PREFIX"
        echo "exec_prefix=\${prefix}"
        echo "bindir=$(relative "$BINDIR")"
        echo "includedir=$(relative "$INCLUDEDIR")"
        echo "libdir=$(relative "$LIBDIR")"
        echo "docdir=$(relative "$DOCDIR")"
        echo "# make uninstall removes these when empty: make install created them"
        echo "bfo_created_dirs=$created"
        echo
        echo "Name: bfo"
        echo "Description: messages that survive a failing rail: the header-only engine, TCP and verbs transports"
        echo "Version: $VERSION"
        echo "License: BSD-3-Clause"
        echo "License.file: \${docdir}/LICENSE"
        echo "# The archives are static: what they link against is in Requires and"
        echo "# Libs rather than the .private fields, so --libs alone links a program."
        [ -z "${PC_REQUIRES// /}" ] || echo "Requires: $(echo $PC_REQUIRES)"
        echo "# The layout options the archives were built with: a program must use the same"
        echo "Cflags: -I\${includedir}/bfo $PC_CFLAGS"
        echo "Libs: $libs${PC_LIBS:+ $(echo $PC_LIBS)}"
    } >"$pc.tmp"
    mv "$pc.tmp" "$pc"
    chmod 644 "$pc"
    echo "bfo_install: bfo $VERSION into $DESTDIR$PREFIX: bin/bfo, $(echo $HEADERS | wc -w) headers in $incdir," \
        "$(echo $ARCHIVES | wc -w) archives, $PKGCONFIGDIR/bfo.pc, $DOCDIR/LICENSE${created:+ (created: $created)}"
elif [ "$what" = uninstall ]; then
    : "${ALL_HEADER_NAMES:?}"
    created=$(created_before)
    rm -f "$DESTDIR$BINDIR/bfo" "$DESTDIR$LIBDIR/libbfo_tcp.a" "$DESTDIR$LIBDIR/libbfo_net.a" "$pc" \
        "$DESTDIR$DOCDIR/LICENSE"
    for h in $ALL_HEADER_NAMES; do rm -f "$DESTDIR$incdir/$h"; done
    rmdir "$DESTDIR$incdir" 2>/dev/null || true
    # deepest first: a parent empties once its children are gone
    for d in $(for c in $created; do echo "$c"; done | LC_ALL=C sort -r); do
        rmdir "$DESTDIR$d" 2>/dev/null || true
    done
    echo "bfo_install: bfo removed from $DESTDIR$PREFIX"
else
    echo "bfo_install: install or uninstall, not $what" >&2
    exit 1
fi
