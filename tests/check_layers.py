#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""check_layers.py - the headers include downward only.

The layers, lowest first:

  base      include/fsm/ headers that include nothing of gen/ (bfo_core.h,
            bfo_le.h): what the generated code builds on
  gen/      generated from spec/ (make gen); includes the base and gen/
  the rest  of include/fsm/ (bfo_wire.h, bfo.h, bfo_engine.h, ...): builds
            on gen/ and the base

then backends/, then tools/.  A generated header that includes an
include/fsm/ header which includes a gen/ header back, directly or through
others, makes the two layers include each other: this fails then, naming
the chain.  It also fails on a cycle between any two headers, on a
`#include "..."` of include/fsm/ or gen/ that names neither (a header of
backends/ or tools/: a higher layer), and on a name in both directories.
Includes resolve as `-I include/fsm -I gen` does: include/fsm/ first.

  tests/check_layers.py [--root DIR]      (make check-layers, part of make check)
"""
import argparse
import os
import re
import sys

DIRS = ["include/fsm", "gen"]
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def strip_comments(text):
    return re.sub(r"/\*.*?\*/", "", re.sub(r"//[^\n]*", "", text), flags=re.S)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=".")
    a = ap.parse_args()
    where = {}  # name -> directory
    errors = []
    for d in DIRS:
        for name in sorted(os.listdir(os.path.join(a.root, d))):
            if name.endswith(".h"):
                if name in where:
                    errors.append("%s/%s and %s/%s: one name in both directories"
                                  % (where[name], name, d, name))
                else:
                    where[name] = d
    path = lambda n: "%s/%s" % (where[n], n)
    incs = {}
    for name, d in where.items():
        with open(os.path.join(a.root, d, name), encoding="utf-8") as f:
            src = strip_comments(f.read())
        incs[name] = []
        for inc in INCLUDE.findall(src):
            if inc not in where:
                errors.append("%s includes \"%s\", which is in neither include/fsm/ nor gen/ "
                              "(a header of a higher layer, or none)" % (path(name), inc))
            else:
                incs[name].append(inc)

    # cycles between headers (include guards hide them from the compiler)
    state = {}

    def visit(n, stack):
        if state.get(n) == "done":
            return
        if state.get(n) == "busy":
            cyc = stack[stack.index(n):] + [n]
            errors.append("include cycle: %s" % " -> ".join(path(x) for x in cyc))
            return
        state[n] = "busy"
        for m in incs[n]:
            visit(m, stack + [n])
        state[n] = "done"

    for n in sorted(where):
        visit(n, [])
    if errors:
        return report(errors)

    def gen_reached(n):
        """A chain from n to a gen/ header, or None."""
        seen, todo = {n}, [[n]]
        while todo:
            chain = todo.pop(0)
            for m in incs[chain[-1]]:
                if where[m] == "gen":
                    return chain + [m]
                if m not in seen:
                    seen.add(m)
                    todo.append(chain + [m])
        return None

    base = set()
    for g in sorted(n for n in where if where[n] == "gen"):
        for h in incs[g]:
            if where[h] != "gen":
                chain = gen_reached(h)
                if chain:
                    errors.append("%s includes %s, which includes gen/ back (%s): gen/ and "
                                  "include/fsm/ include each other; a generated header may "
                                  "include only include/fsm/'s base, headers that include "
                                  "nothing of gen/" % (path(g), path(h),
                                                       " -> ".join(path(x) for x in chain)))
                else:
                    base.add(h)
    if errors:
        return report(errors)
    ngen = sum(1 for n in where if where[n] == "gen")
    rest = sorted(n for n in where if where[n] != "gen" and n not in base)
    print("== layers: base %s <- gen/ (%d headers) <- include/fsm/ %s; nothing includes upward"
          % (", ".join(sorted(base)), ngen, ", ".join(rest)))
    return 0


def report(errors):
    for e in errors:
        print("check_layers: %s" % e)
    print("check_layers: %d problem(s): headers include downward only, base <- gen/ <- "
          "include/fsm/ (tests/check_layers.py)" % len(errors))
    return 1


if __name__ == "__main__":
    sys.exit(main())
