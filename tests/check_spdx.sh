#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# check_spdx.sh - every source file says its license (LICENSE) on its first
# line, or its second after a #! line:
#     // SPDX-License-Identifier: BSD-3-Clause      (C, Ragel bindings, .dot)
#     # SPDX-License-Identifier: BSD-3-Clause       (shell, python, make, Ragel grammars, .tab)
# Source files: .c .h .rl .py .sh .mk .tab .dot .supp, Makefiles, and any
# file that starts with #!; not tests/fuzz/corpus/ (data).  gen/ is checked
# like the rest: tools/bfo_gen.py writes the line.  In a git checkout the
# files are git's tracked files; elsewhere (a tarball) the files found under
# the tree, build/ left out.  Fails with the list of files without it.
#   bash tests/check_spdx.sh [DIR]   (make check-spdx, part of make check)
set -uo pipefail
id='SPDX-License-Identifier: BSD-3-Clause'
cd "${1:-.}" || exit 1
if top=$(git rev-parse --show-toplevel 2>/dev/null) && [ "$top" = "$(pwd -P)" ]; then
    mapfile -d '' files < <(git ls-files -z)
    from="git ls-files"
else
    mapfile -d '' files < <(find . \( -name .git -o -path ./build \) -prune -o -type f -print0 |
        sed -z 's|^\./||' | LC_ALL=C sort -z)
    from="not a git checkout: the files found"
fi

n=0 bad=()
for f in "${files[@]}"; do
    [ -f "$f" ] || continue # deleted in the work tree, not yet in git
    case $f in
    tests/fuzz/corpus/*) continue ;;
    *.c | *.h | *.rl | *.py | *.sh | *.mk | *.tab | *.dot | *.supp | Makefile | */Makefile) ;;
    *) [ "$(head -c2 "$f")" = '#!' ] || continue ;;
    esac
    n=$((n + 1))
    l1= l2=
    { IFS= read -r l1; IFS= read -r l2; } <"$f"
    [[ $l1 == '#!'* ]] && l1=$l2
    [[ $l1 =~ ^(//|#|/\*)\ $id( \*/)?$ ]] || bad+=("$f")
done

if [ "${#bad[@]}" -gt 0 ]; then
    printf "%s: no '$id' first\n" "${bad[@]}"
    echo "check_spdx: ${#bad[@]} of $n source files ($from) do not say their license first (above):" \
        "make their first line (the second after #!) '// $id' (C) or '# $id' (shell, python, make)"
    exit 1
fi
[ "$n" -gt 0 ] || { echo "check_spdx: no source file found in $(pwd) ($from)"; exit 1; }
echo "== spdx: $n source files ($from) say $id first (LICENSE)"
