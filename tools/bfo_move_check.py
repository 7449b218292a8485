#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""bfo_move_check.py - a move of C code changed no function: every function
defined before is defined after, once, with the same tokens.

Reads the old text of one or more files from git (REV:PATH) and the new
files from the work tree, and extracts every function definition at file
scope: its name, its declarator (return type, specifiers, parameters) and
its body, as token sequences with comments and whitespace left out
(preprocessor lines inside a body are tokens of their own, their spacing
normalised).  Prototypes, macros and types are not functions: they may
move, and a moved static function may gain a prototype.  Reports every
function missing after, added after, defined twice, or whose declarator
or body differs; exit status 1 when there is any.

It also counts the lines (stripped of surrounding whitespace, blank lines
left out) that are in one text and not in the other, as a multiset: a pure
move adds only includes, guards, banners and prototypes, and loses only the
old banners and prototypes (--lines lists them).

  tools/bfo_move_check.py --old REV:include/fsm/bfo_engine.h \\
      --new include/fsm/bfo_engine.h include/fsm/bfo_engine_*.h [--lines]

A test program split into several (issue 35: tests/test_engine.c into
tests/test_engine_<part>.c and their shared tests/engine_test.h):

  tools/bfo_move_check.py --old REV:tests/test_engine.c \\
      --new tests/engine_test.h tests/test_engine_*.c \\
      --inline-ok --split-main --added engine_test_main

--inline-ok lets a declarator gain `inline` (a static function moved into
a header that several files include, where one that leaves it unused must
not warn); --split-main lets each new file have its own main, and compares
instead the tests the mains list (cmocka_unit_test*(NAME, ...)): every test
of the old main listed once in the new ones, none added; --added NAME
allows a function that is new (the old main's code that the new ones
share).
"""
import argparse
import collections
import re
import subprocess
import sys

TOKEN = re.compile(r'''
    (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<pp>^[ \t]*\#(?:\\\n|/\*.*?\*/|[^\n])*)
  | (?P<str>"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')
  | (?P<num>\.?[0-9](?:[eEpP][+-]|[0-9A-Za-z_.])*)
  | (?P<id>[A-Za-z_][A-Za-z_0-9]*)
  | (?P<op>->|\+\+|--|<<=|>>=|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&|^]=|\.\.\.|\#\#|[^\s])
  | (?P<ws>\s+)
''', re.S | re.M | re.X)


def tokens(text):
    """[(kind, text, first line, last line)] without comments and whitespace."""
    out, line = [], 1
    for m in TOKEN.finditer(text):
        kind, s = m.lastgroup, m.group(0)
        if kind not in ('comment', 'ws'):
            if kind == 'pp':  # its comments out (one may run over lines), its spacing one
                s = re.sub(r'/\*.*?\*/|//[^\n]*', ' ', s, flags=re.S)
                s = ' '.join(s.replace('\\\n', ' ').split())
            out.append((kind, s, line, line + m.group(0).count('\n')))
        line += m.group(0).count('\n')
    return out


def functions(text, where):
    """{name: [(where, line, declarator tokens, body tokens)]} of the file-scope
    function definitions of text."""
    toks = tokens(text)
    found = collections.defaultdict(list)
    depth = 0          # braces that are not extern "C" blocks
    start = 0          # first token of the current file-scope declaration
    i = 0
    while i < len(toks):
        kind, s, line = toks[i][:3]
        if depth == 0 and kind == 'pp':
            start = i + 1
        elif depth == 0 and s in (';',):
            start = i + 1
        elif depth == 0 and s == '}':
            start = i + 1  # the end of an extern "C" block
        elif s == '{' and depth == 0:
            decl = [t for t in toks[start:i] if t[0] != 'pp']
            words = [t[1] for t in decl]
            if words[-2:] == ['extern', '"C"'] or (words and words[-1] == '"C"'):
                start = i + 1
                i += 1
                continue
            # the matching brace
            d, j = 0, i
            while j < len(toks):
                if toks[j][1] == '{':
                    d += 1
                elif toks[j][1] == '}':
                    d -= 1
                    if d == 0:
                        break
                j += 1
            is_fn = (words and words[-1] == ')' and '(' in words and '=' not in words and
                     words[0] not in ('typedef', 'struct', 'enum', 'union'))
            if is_fn:
                # the name: the identifier before the first ( at paren depth 0
                name = None
                for k, w in enumerate(words):
                    if w == '(' and k > 0 and re.match(r'[A-Za-z_]\w*$', words[k - 1]):
                        name = words[k - 1]
                        break
                body = [t[1] for t in toks[i:j + 1]]
                found[name].append((where, decl[0][2] if decl else line, words, body))
            i = j + 1
            start = i
            continue
        i += 1
    return found


def read_old(spec):
    rev, path = spec.split(':', 1)
    return subprocess.run(['git', 'show', '%s:%s' % (rev, path)], check=True,
                          capture_output=True, text=True).stdout


def lines_of(text):
    return collections.Counter(l.strip() for l in text.split('\n') if l.strip())


TEST_ENTRY = re.compile(r'cmocka_unit_test\w*$')


def listed_tests(body):
    """the tests a main lists: the first argument of each cmocka_unit_test*(...)"""
    return [body[k + 2] for k in range(len(body) - 2)
            if TEST_ENTRY.match(body[k]) and body[k + 1] == '(']


def split_main(o, w):
    """problems with the tests of the old main (o, one definition) and of the
    new ones (w, one per file): each old test listed once after, none added"""
    if len(o) != 1:
        return ['main: defined %d times before (--split-main wants one)' % len(o)]
    before = collections.Counter(listed_tests(o[0][3]))
    after = collections.Counter(t for d in w for t in listed_tests(d[3]))
    print('bfo_move_check: main: %d tests listed before, %d after in %d main(s)'
          % (sum(before.values()), sum(after.values()), len(w)))
    out = ['main: test %s listed %d time(s) after, %d before' % (t, after[t], before[t])
           for t in sorted(set(before) | set(after)) if before[t] != after[t]]
    if not before:
        out.append('main: lists no test before (is it a cmocka program?)')
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--old', nargs='+', required=True, help='REV:PATH ... (git)')
    ap.add_argument('--new', nargs='+', required=True, help='files of the work tree')
    ap.add_argument('--lines', action='store_true', help='list the lines added and lost')
    ap.add_argument('--inline-ok', action='store_true',
                    help='a declarator may gain inline (a static function moved into a header)')
    ap.add_argument('--split-main', action='store_true',
                    help='main may be defined in each new file: compare the tests the mains list')
    ap.add_argument('--added', nargs='+', default=[], metavar='NAME',
                    help='functions that may be new after (what the split mains share)')
    a = ap.parse_args()
    old, new = collections.defaultdict(list), collections.defaultdict(list)
    old_text, new_text = '', ''
    for spec in a.old:
        t = read_old(spec)
        old_text += t
        for n, defs in functions(t, spec).items():
            old[n] += defs
    for path in a.new:
        with open(path, encoding='utf-8') as f:
            t = f.read()
        new_text += t
        for n, defs in functions(t, path).items():
            new[n] += defs
    problems = []
    if a.split_main:
        problems += split_main(old.pop('main', []), new.pop('main', []))
    for n in sorted(set(old) | set(new)):
        o, w = old.get(n, []), new.get(n, [])
        if n in a.added and not o and len(w) == 1:
            continue
        if len(o) > 1:
            problems.append('%s: defined %d times before' % (n, len(o)))
        if len(w) > 1:
            problems.append('%s: defined %d times after (%s)' %
                            (n, len(w), ', '.join('%s:%d' % (d[0], d[1]) for d in w)))
        if not w:
            problems.append('%s: missing after (was %s:%d)' % (n, o[0][0], o[0][1]))
        elif not o:
            problems.append('%s: added (%s:%d)' % (n, w[0][0], w[0][1]))
        else:
            if o[0][2] != w[0][2] and not (a.inline_ok and
                                          [t for t in w[0][2] if t != 'inline'] == o[0][2]):
                problems.append('%s: declarator differs (%s:%d): %s -> %s' %
                                (n, w[0][0], w[0][1], ' '.join(o[0][2]), ' '.join(w[0][2])))
            if o[0][3] != w[0][3]:
                problems.append('%s: body differs (%s:%d)' % (n, w[0][0], w[0][1]))
    ntok = sum(len(d[3]) for defs in old.values() for d in defs)
    print('bfo_move_check: %d functions before (%d body tokens), %d after, in %d file(s)'
          % (sum(map(len, old.values())), ntok, sum(map(len, new.values())), len(a.new)))
    lo, ln = lines_of(old_text), lines_of(new_text)
    lost, added = lo - ln, ln - lo
    print('bfo_move_check: lines (non-blank, as a multiset): %d before, %d after; %d only before, '
          '%d only after' % (sum(lo.values()), sum(ln.values()), sum(lost.values()), sum(added.values())))
    if a.lines:
        for tag, c in (('-', lost), ('+', added)):
            for l, k in sorted(c.items()):
                print('%s %s%s' % (tag, l, '  (x%d)' % k if k > 1 else ''))
    for p in problems:
        print('bfo_move_check: %s' % p)
    if problems:
        print('bfo_move_check: %d problem(s)' % len(problems))
        return 1
    print('bfo_move_check: every function before is defined once after, its declarator%s and body '
          'token for token the same; none added%s'
          % (' (but for an inline added)' if a.inline_ok else '',
             ' but %s' % ', '.join(a.added) if a.added else ''))
    return 0


if __name__ == '__main__':
    sys.exit(main())
