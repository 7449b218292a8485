#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""check_api_docs.py - docs/api.md names every public function, and only those.

Public: every function declared or defined in the headers below whose name
starts with bfo_ (bfo__ is internal), every function-like macro named so
(bfo_engine_init, called like a function), every function-pointer typedef
(bfo_trace_fn, ...) and every callback member of bfo_backend and bfo_sink
(named bfo_backend.post_send, bfo_sink.frame, ...).  The engine's parts
(include/fsm/bfo_engine_<concern>.h) count as bfo_engine.h, which includes
them: its users include that.

docs/api.md documents a name when it stands in backquotes in a heading
(### `bfo_isend`) or in the first column of a table row, under the section
of its header (a heading that is the header's path alone:
## `include/fsm/bfo_engine.h`).  The check fails when a
public name is not documented, is documented under another header, or
when api.md documents (or calls, as `name()`) something that does not
exist.

  tests/check_api_docs.py [--api docs/api.md] [--root .]
  tests/check_api_docs.py --list         the public names, by header
"""
import argparse
import glob
import os
import re
import sys

HEADERS = ['include/fsm/*.h', 'gen/*.h', 'backends/bfo_sink.h', 'backends/bfo_transport.h', 'backends/bfo_setting.h',
           'backends/boot/bfo_boot.h', 'backends/tcp/bfo_tcp.h', 'backends/net/bfo_net.h', 'backends/net/bfo_railsel.h',
           'backends/verbs/bfo_verbs.h', 'backends/shm/bfo_shm.h']
CALLBACK_STRUCTS = {'bfo_backend', 'bfo_sink', 'bfo_transport_ops', 'bfo_boot_ops'}

FUNC = re.compile(r'(?<![\w.>])(bfo_[a-z0-9_]+)\s*\(')
TYPEDEF_FN = re.compile(r'typedef\s+[^;()]*\(\s*\*\s*(bfo_[a-z0-9_]+)\s*\)\s*\(')
MEMBER_FN = re.compile(r'\(\s*\*\s*([a-z_][a-z0-9_]*)\s*\)\s*\(')


def strip_comments(text):
    text = re.sub(r'/\*.*?\*/', lambda m: '\n' * m.group(0).count('\n'), text, flags=re.S)
    return re.sub(r'//[^\n]*', '', text)


def public_names(root):
    """{name: header} for every public function, typedef and callback."""
    names = {}
    for pat in HEADERS:
        for path in sorted(glob.glob(os.path.join(root, pat))):
            rel = os.path.relpath(path, root)
            if re.match(r'include/fsm/bfo_engine_\w+\.h$', rel):
                rel = 'include/fsm/bfo_engine.h'  # a part of it: users include bfo_engine.h
            src = strip_comments(open(path).read())
            # declarations and definitions: a name followed by ( at the start of
            # a declarator: after a type, at file scope (no leading whitespace)
            for line in src.split('\n'):
                m = re.match(r'#\s*define\s+(bfo_[a-z0-9_]+)\(', line)
                if m and '__' not in m.group(1):
                    names.setdefault(m.group(1), rel)
                if not line or line[0].isspace() or line.startswith('#'):
                    continue
                m = re.match(r'(?:static\s+)?(?:inline\s+)?(?:const\s+)?[a-z_][a-z0-9_ ]*?[\s*]+(bfo_[a-z0-9_]+)\s*\(',
                             line)
                if m and '__' not in m.group(1) and not line.startswith('typedef'):
                    names.setdefault(m.group(1), rel)
            for m in TYPEDEF_FN.finditer(src):
                if '__' not in m.group(1):
                    names.setdefault(m.group(1), rel)
            for s in CALLBACK_STRUCTS:
                m = re.search(r'typedef\s+struct\s+%s\s*\{(.*?)\}\s*%s\s*;' % (s, s), src, flags=re.S)
                if m:
                    for cb in MEMBER_FN.finditer(m.group(1)):
                        names.setdefault('%s.%s' % (s, cb.group(1)), rel)
    return names


def documented(api):
    """[(name, section header, line number)] and every name called as name()."""
    docs, calls, section = [], [], None
    for i, line in enumerate(api.split('\n'), 1):
        m = re.match(r'^#+ `([^`]+\.h)`\s*$', line)
        if m:
            section = m.group(1)
            continue
        if line.startswith('#') or line.startswith('|'):
            if line.startswith('|'):
                cells = line.split('|')
                cell = cells[1] if len(cells) > 2 else ''
                if re.match(r'^\s*:?-+', cell):
                    continue
            else:
                cell = line
            for n in re.findall(r'`(bfo_[a-z0-9_.]+)`', cell):
                docs.append((n, section, i))
        for n in re.findall(r'`(bfo_[a-z0-9_.]+)\(', line):
            calls.append((n, i))
    return docs, calls


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--api', default='docs/api.md')
    ap.add_argument('--root', default='.')
    ap.add_argument('--list', action='store_true')
    a = ap.parse_args()
    pub = public_names(a.root)
    if a.list:
        for n, h in sorted(pub.items(), key=lambda x: (x[1], x[0])):
            print('%-40s %s' % (n, h))
        return 0
    docs, calls = documented(open(os.path.join(a.root, a.api)).read())
    errors = []
    seen = {}
    for n, sec, line in docs:
        if '__' in n:
            errors.append('%s:%d: %s is internal (__): not part of the API' % (a.api, line, n))
        elif n not in pub:
            errors.append('%s:%d: %s is documented but no such public function exists' % (a.api, line, n))
        elif sec != pub[n]:
            errors.append('%s:%d: %s is documented under %s but declared in %s' % (a.api, line, n, sec, pub[n]))
        else:
            seen[n] = line
    for n, line in calls:
        if n not in pub:
            errors.append('%s:%d: `%s()` is called in the text but no such public function exists' % (a.api, line, n))
    for n, h in sorted(pub.items(), key=lambda x: (x[1], x[0])):
        if n not in seen:
            errors.append('%s: %s (%s) is public but not documented' % (a.api, n, h))
    for e in errors:
        print(e)
    if errors:
        print('check_api_docs: %d problem(s); docs/api.md must document every public function of the headers'
              % len(errors))
        return 1
    print('== api docs: %d public functions and callbacks, each documented under its header' % len(pub))
    return 0


if __name__ == '__main__':
    sys.exit(main())
