#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""check_layers.py - the headers include downward only.

The layers, lowest first:

  base      include/fsm/ headers that include nothing of gen/ (bfo_core.h,
            bfo_le.h): what the generated code builds on
  gen/      generated from spec/ (make gen); includes the base and gen/
  the rest  of include/fsm/ (bfo_wire.h, bfo.h, bfo_engine.h, ...): builds
            on gen/ and the base

then backends/, then tools/.  Within the rest, the engine is bfo_engine.h
over its parts, include/fsm/bfo_engine_<concern>.h, in levels (ENGINE_PARTS
below, lowest first; docs/engine-design.md, "The parts"): a part includes
only parts of a lower level, never one of its own level or above (a call
up goes through a prototype in bfo_engine_hooks.h), and no header but
bfo_engine.h includes a part (nor does any source file: users include
bfo_engine.h); every bfo_engine_*.h is in ENGINE_PARTS.  A generated
header that includes an
include/fsm/ header which includes a gen/ header back, directly or through
others, makes the two layers include each other: this fails then, naming
the chain.  It also fails on a cycle between any two headers, on a
`#include "..."` of include/fsm/ or gen/ that names neither (a header of
backends/ or tools/: a higher layer), and on a name in both directories.
Includes resolve as `-I include/fsm -I gen` does: include/fsm/ first.

No private use from outside: the engine's private names (`bfo__*`
identifiers, and its rail and peer machines' state read as
`peers[p].rail[r].fsm` or `peers[p].fsm`) appear in no source file but
those of include/fsm/, gen/ (the generated code's own bfo__emit), sim/
and tests/; backends, tools, mpi/, bench/ and examples/ use the public
API (bfo_config_defaults, bfo_rail_state, ...).  Names private to a
backend take that backend's prefix, never bfo__.  This fails naming the
file, line and name.

Each concern owns its state (OWNED below): the fields of bfo_rail_link.rate,
.det and of bfo_peer.credit, .relay are written only in the part that owns
them (through its functions: bfo__rate_reset, bfo__detect_on_heard, ...).
A write elsewhere fails, naming file and line: an assignment (=, +=, ...),
++ or --, or the address taken (`&x.rate.q_bytes`; in the engine also
`&x.det`, or a whole sub-struct assigned), in include/fsm/ and in the
layers above (backends/, tools/, mpi/, examples/, bench/); tests/ and sim/
set states up on purpose, and may.

  tests/check_layers.py [--root DIR]      (make check-layers, part of make check)
"""
import argparse
import os
import re
import sys

DIRS = ["include/fsm", "gen"]
# The engine's parts, lowest level first (a level's parts side by side).
ENGINE = "bfo_engine.h"
ENGINE_PARTS = [
    ["bfo_engine_types.h"],
    ["bfo_engine_hooks.h"],
    ["bfo_engine_pools.h"],
    ["bfo_engine_rate.h", "bfo_engine_detect.h"],
    ["bfo_engine_post.h"],
    ["bfo_engine_match.h"],
    ["bfo_engine_request.h"],
    ["bfo_engine_send.h", "bfo_engine_recv.h"],
    ["bfo_engine_machines.h"],
    ["bfo_engine_frame.h"],
    ["bfo_engine_relay.h", "bfo_engine_revoke.h"],
    ["bfo_engine_init.h", "bfo_engine_api.h"],
]
# Sources that include headers (a part included from any of them fails).
SOURCE_DIRS = ["backends", "tools", "tests", "mpi", "sim", "examples", "bench"]
# ... of which these may use the engine's private names (white-box tests,
# the simulator); include/fsm/ and gen/ are the engine and its machines.
PRIVATE_OK = ["tests", "sim"]
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
# A private name of the engine: a bfo__ identifier, or a machine's state
# read past bfo_rail_state / bfo_peer_state.
PRIVATE = re.compile(r"\b(bfo__\w+)|(\bpeers\s*\[[^\]\n]*\]\s*(?:\.\s*rail\s*\[[^\]\n]*\]\s*)?\.\s*fsm\b)")
# The sub-structs a concern owns: member (of bfo_rail_link or bfo_peer) ->
# the one part that writes their fields.
OWNED = {"rate": "bfo_engine_rate.h", "det": "bfo_engine_detect.h",
         "credit": "bfo_engine_match.h", "relay": "bfo_engine_relay.h"}
OWNED_DIRS = ["include/fsm", "backends", "tools", "mpi", "examples", "bench"]
OWNED_FIELD = re.compile(r"(?:\.|->)\s*(%s)\b(\s*\.\s*[A-Za-z_]\w*)?" % "|".join(OWNED))
WRITE_AFTER = re.compile(r"\s*(?:\[[^\]]*\]\s*)*(\+\+|--|(?:<<|>>|[-+*/%&|^])?=(?!=))")


def strip_comments(text):
    return re.sub(r"/\*.*?\*/", "", re.sub(r"//[^\n]*", "", text), flags=re.S)


def strip_comments_keep_lines(text):
    """The code without its comments, each line where it was."""
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


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
    errors += engine_parts(a.root, where, incs)
    errors += private_use(a.root)
    errors += owned_writes(a.root)
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
    parts = set(p for level in ENGINE_PARTS for p in level)
    rest = sorted((n + " (over its %d parts)" % len(parts) if n == ENGINE else n)
                  for n in where if where[n] != "gen" and n not in base and n not in parts)
    print("== layers: base %s <- gen/ (%d headers) <- include/fsm/ %s; nothing includes upward"
          % (", ".join(sorted(base)), ngen, ", ".join(rest)))
    print("== the engine's parts: %s <- %s; each includes only parts below it"
          % (" <- ".join(", ".join(p[len("bfo_engine_"):-2] for p in level) for level in ENGINE_PARTS),
             ENGINE))
    print("== no private engine name (bfo__*, a machine's state) outside include/fsm/, gen/, %s"
          % ", ".join(d + "/" for d in PRIVATE_OK))
    print("== each concern's state written only by its part: %s"
          % ", ".join(".%s by %s" % (m, OWNED[m][len("bfo_engine_"):-2]) for m in OWNED))
    return 0


def engine_parts(root, where, incs):
    """The parts' order: what each includes, who includes them."""
    errors = []
    level = {p: n for n, ps in enumerate(ENGINE_PARTS) for p in ps}
    for p in sorted(level):
        if where.get(p) != "include/fsm":
            errors.append("include/fsm/%s is in ENGINE_PARTS (tests/check_layers.py) but does not exist"
                          % p)
    for n in sorted(where):
        if n.startswith("bfo_engine_") and n not in level:
            errors.append("%s/%s is not in ENGINE_PARTS (tests/check_layers.py): give the part its "
                          "level there" % (where[n], n))
    for n in sorted(where):
        for m in incs[n]:
            if m not in level or n == ENGINE:
                continue
            if n not in level:
                errors.append("%s/%s includes include/fsm/%s, a part of the engine: only %s "
                              "includes its parts" % (where[n], n, m, ENGINE))
            elif level[m] >= level[n]:
                errors.append("include/fsm/%s (level %d) includes include/fsm/%s (level %d): a part "
                              "includes only parts below it; a call up goes through a prototype in "
                              "bfo_engine_hooks.h" % (n, level[n], m, level[m]))
    for d in SOURCE_DIRS:
        for dirpath, _, files in os.walk(os.path.join(root, d)):
            for f in sorted(files):
                if not f.endswith((".c", ".h", ".cc", ".cpp")):
                    continue
                path = os.path.join(dirpath, f)
                with open(path, encoding="utf-8", errors="replace") as fh:
                    for inc in INCLUDE.findall(strip_comments(fh.read())):
                        if inc in level:
                            errors.append("%s includes %s, a part of the engine: include %s"
                                          % (os.path.relpath(path, root), inc, ENGINE))
    return errors


def private_use(root):
    """The engine's private names in sources outside it (file:line: name)."""
    errors = []
    for d in SOURCE_DIRS:
        if d in PRIVATE_OK:
            continue
        for dirpath, dirs, files in os.walk(os.path.join(root, d)):
            dirs.sort()
            for f in sorted(files):
                if not f.endswith((".c", ".h", ".cc", ".cpp")):
                    continue
                path = os.path.join(dirpath, f)
                with open(path, encoding="utf-8", errors="replace") as fh:
                    src = strip_comments_keep_lines(fh.read())
                for n, line in enumerate(src.split("\n"), 1):
                    for m in PRIVATE.finditer(line):
                        errors.append("%s:%d: %s is private to the engine (include/fsm/): use its "
                                      "public API, or add the public function it lacks"
                                      % (os.path.relpath(path, root), n, re.sub(r"\s+", "", m.group(0))))
    return errors


def blank_comments_strings(text):
    """Comments, strings and character literals blanked, lines kept."""
    def blank(m):
        return re.sub(r"[^\n]", " ", m.group(0))
    return re.sub(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', blank, text,
                  flags=re.S)


def lvalue_start(src, i):
    """Where the chain of member accesses, subscripts and calls that ends
    at src[i] (exclusive) begins: `e->peers[p].rail[k]` before `.rate`."""
    while i > 0:
        c = src[i - 1]
        if c.isalnum() or c in "_.":
            i -= 1
        elif c == ">" and i > 1 and src[i - 2] == "-":
            i -= 2
        elif c in ")]":
            depth, j = 0, i - 1
            while j >= 0:
                if src[j] in ")]":
                    depth += 1
                elif src[j] in "([":
                    depth -= 1
                    if depth == 0:
                        break
                j -= 1
            if j < 0:
                return i
            i = j
        else:
            return i
    return i


def address_of(before):
    """1 when the text before an lvalue ends in a unary & (its address
    taken), not a binary & or &&.  A cast's `(T)&x` reads as binary: the
    types would tell, this does not see them."""
    run = len(before) - len(before.rstrip("&"))
    if run % 2 == 0:  # none, or the last & is half of an &&
        return False
    rest = before[:-1].rstrip()
    if run > 1 or rest.endswith("&"):  # after an &&: unary
        return True
    return not re.search(r"[\w)\]]$", rest) or bool(re.search(r"\breturn$", rest))


def owned_writes(root):
    """Writes to a concern's sub-struct outside the part that owns it."""
    errors = []
    for d in OWNED_DIRS:
        for dirpath, _, files in sorted(os.walk(os.path.join(root, d))):
            for f in sorted(files):
                if not f.endswith((".c", ".h", ".cc", ".cpp")):
                    continue
                path = os.path.join(dirpath, f)
                engine = os.path.relpath(dirpath, root) == "include/fsm"
                with open(path, encoding="utf-8", errors="replace") as fh:
                    src = blank_comments_strings(fh.read())
                for m in OWNED_FIELD.finditer(src):
                    member, field = m.group(1), m.group(2)
                    if f == OWNED[member]:
                        continue
                    start = lvalue_start(src, m.start())
                    base = src[start:m.start()]
                    if re.search(r"(?:^|\W)h\s*$", base) or \
                            (not field and (not engine or re.search(r"(?:^|\W)(?:cfg|c)\s*$", base))):
                        continue  # a frame header's union member (f->h.credit); the configuration's flag
                    before = src[:start].rstrip()
                    after = WRITE_AFTER.match(src, m.end())
                    how = None
                    if after:
                        how = after.group(1)
                    elif before.endswith(("++", "--")):
                        how = before[-2:]
                    elif address_of(before):
                        how = "&"
                    if how:
                        line = src.count("\n", 0, m.start()) + 1
                        text = re.sub(r"\s+", "", src[start:m.end()])
                        errors.append("%s:%d: %s: %s outside %s, which owns .%s (only its "
                                      "functions write it)"
                                      % (os.path.relpath(path, root), line,
                                         "&" + text if how == "&" else
                                         (how + text if how in ("++", "--") and not after else
                                          text + " " + how),
                                         "its address taken" if how == "&" else "a write",
                                         OWNED[member], member))
    return errors


def report(errors):
    for e in errors:
        print("check_layers: %s" % e)
    print("check_layers: %d problem(s): headers include downward only, base <- gen/ <- "
          "include/fsm/, and nothing outside the engine uses its private names "
          "(tests/check_layers.py)" % len(errors))
    return 1


if __name__ == "__main__":
    sys.exit(main())
