#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""bfo_seq.py - sequence diagrams (Mermaid) from `bfo sim --trace`, and the
generated parts of docs/*.md kept true.

  bfo sim ... --trace | tools/bfo_seq.py draw [--rails] [--from-fault]
                                              [--until-readmitted] [--from-leave]
      one Mermaid sequenceDiagram on stdout.  Arrows are what the simulated
      wire carried (the `wire` lines), notes are the state changes of the
      machines (the transition lines); with `bfo sim --leave`, a process
      that ends is a note, its connections' ends are arrows.

  tools/bfo_seq.py update [--check] [--bfo build/cc/bfo] FILE.md...
      regenerates, in place, every block between
          <!-- bfo-seq: SIM ARGS | DRAW OPTIONS -->  and  <!-- bfo-seq end -->
      (runs `bfo sim SIM ARGS --trace` and draws it) and every block between
          <!-- bfo-snippet: PATH NAME -->  and  <!-- bfo-snippet end -->
      (the lines between /* doc begin: NAME */ and /* doc end: NAME */ in
      PATH, a file that is compiled and run by make check) and every block
      between  <!-- bfo-table: NAME -->  and  <!-- bfo-table end -->  (NAME
      fragments, layouts, flags or events: from spec/alphabet.tab; machines:
      states and transitions counted in gen/).  With --check
      it changes nothing and fails, naming each block, when a file is not
      what it would write: the docs are stale.
"""
import argparse
import difflib
import os
import re
import shlex
import subprocess
import sys
import textwrap

TRANS = re.compile(r'^\s*(?P<t>[\d.]+) ms  rank (?P<rank>\d+)  (?P<obj>msg \d+|peer \d+ rail \d+|\?)\s+'
                   r'(?P<m>send|recv|rail) (?P<frm>\S+) -> (?P<to>\S+)  (?P<ev>\S+)'
                   r'(?: / (?P<acts>[^\[]*?))?(?:  \[(?P<err>\S+)\])?\s*$')
WIRE = re.compile(r'^\s*(?P<t>[\d.]+) ms  wire  (?P<what>\S+)\s+(?P<type>[A-Z][A-Z0-9_]*)#(?P<n>\d+)  '
                  r'(?P<src>\d+)>(?P<dst>\d+) rail (?P<rail>\d+)  (?P<len>\d+) B(?:  (?P<rest>.*))?$')
FAULT = re.compile(r'^\s*(?P<t>[\d.]+) ms  wire  fault\s+rail (?P<rail>\d+) (?P<what>.*)$')
EXIT = re.compile(r'^\s*(?P<t>[\d.]+) ms  wire  exit\s+rank (?P<rank>\d+)$')
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RDMA = ('WRITE', 'READ')  # the simulator's names for RDMA operations (not fragment types)


def rail_types(root=ROOT):
    """The fragment types the rail machine receives (PROBE, PROBEACK, BROKEN):
    those whose T_RCVD is the event of a transition in gen/bfo_rail_transitions.h.
    Their frames are drawn only with --rails."""
    with open(os.path.join(root, 'gen/bfo_rail_transitions.h')) as f:
        return {m.group(1) for m in re.finditer(r'X\(\w+, (\w+)_RCVD,', f.read())}


def size(n):
    n = int(n)
    if n >= 1024 and n % 1024 == 0:
        return '%d KiB' % (n // 1024)
    return '%d B' % n


def label(w):
    """What an arrow says: the type, then what the trace says of its header
    (tools/bfo_seq.py knows field names, not fragment types):
      seq (of a message that is matched: it has a tag), rseq, slot;
      then msg_len as "msg", a range [offset +length or data] or "from offset",
      data as "first" (with msg_len) or the size, "about rail" when the
      header names another rail than the one carrying it; the flags; the rail."""
    typ, rest = w['type'], dict()
    toks = (w['rest'] or '').split()
    flags = [t for t in toks if t.isupper()]
    toks = [t for t in toks if not t.isupper()]
    for k, v in zip(toks[::2], toks[1::2]):
        rest[k] = v
    ids = ['%s %s' % (k, rest[k]) for k in ('seq', 'rseq', 'slot')
           if k in rest and (k != 'seq' or 'tag' in rest)]
    parts = [' '.join(ids)] if ids else []
    if 'msg_len' in rest:
        parts.append('msg %s' % size(rest['msg_len']))
    if 'offset' in rest:
        n = rest.get('length', rest.get('data'))
        parts.append('[%s +%s]' % (size(rest['offset']), size(n)) if n is not None
                     else 'from %s' % size(rest['offset']))
    elif 'data' in rest:
        parts.append(('first %s' if 'msg_len' in rest else '%s') % size(rest['data']))
    if 'rail' in rest and rest['rail'] != w['rail']:
        parts.append('about rail %s' % rest['rail'])
    if typ in RDMA:
        parts.append(size(w['len']))
    text = 'RDMA ' + typ if typ in RDMA else typ
    if parts:
        text += ' ' + ', '.join(parts)
    if flags:
        text += ' ' + ' '.join(flags)
    return '%s (rail %s)' % (text, w['rail'])


def parse(lines):
    out = []
    for line in lines:
        for kind, pat in (('trans', TRANS), ('fault', FAULT), ('exit', EXIT), ('wire', WIRE)):
            m = pat.match(line)
            if m:
                d = m.groupdict()
                d['kind'] = kind
                out.append(d)
                break
    return out


def window(evs, rails, from_fault, until_readmitted, from_leave=False):
    """The part of the trace the diagram shows."""
    start = 0
    if from_fault:
        start = next((i for i, e in enumerate(evs) if e['kind'] == 'fault'), 0)
    if from_leave:  # the first rank that leaves, to the end
        start = next((i for i, e in enumerate(evs) if e['kind'] == 'trans' and e['ev'] == 'LEAVE_REQUESTED'), None)
        if start is None:
            raise SystemExit('bfo_seq: --from-leave, but no rank left in the trace (bfo sim --leave)')
        return evs[start:]
    if until_readmitted:
        failed, end = set(), None
        for i, e in enumerate(evs):
            if i < start or e['kind'] != 'trans' or e['m'] != 'rail':
                continue
            key = (e['rank'], e['obj'])
            if e['to'] == 'FAILED':
                failed.add(key)
            if e['to'] == 'UP' and key in failed:
                failed.discard(key)
                if not failed:
                    end = i
                    break
        if end is None:
            raise SystemExit('bfo_seq: --until-readmitted, but no rail came back in the trace')
    else:  # the last step of a request
        end = max((i for i, e in enumerate(evs) if e['kind'] == 'trans' and e['m'] != 'rail'), default=len(evs) - 1)
    return evs[start:end + 1]


def shown_transition(e, rails):
    if e['m'] == 'rail' and not rails:
        return False
    if e['err']:
        return True
    if e['frm'] != e['to']:
        return True
    ev = e['ev']
    if e['m'] == 'rail':
        return ev.endswith('_FAILED') or ev in ('RAIL_ERROR', 'BROKEN_RCVD', 'PROBE_TIMED_OUT', 'SILENCE_DETECTED')
    return (ev.endswith('_FAILED') or ev.endswith('_DUP_RCVD') or ev in ('RECVERRNOTIFY_RCVD', 'NOTIFY_RCVD')
            or 'drop' in (e['acts'] or ''))


def ms(t):
    return '%s ms' % ('%.3f' % float(t)).rstrip('0').rstrip('.')


def note_text(e, times=False):
    who = e['m'] if e['m'] != 'rail' else e['obj'].replace('peer ', 'rail to ').replace(' rail ', ', rail ', 1)
    if e['m'] == 'rail':
        who = 'rail %s' % e['obj'].split()[-1]
    s = '%s: %s' % (who, e['frm'] if e['frm'] == e['to'] else '%s → %s' % (e['frm'], e['to']))
    s += ' on %s' % e['ev']
    if e['acts']:
        s += ' / ' + e['acts'].strip()
    if e['err']:
        s += ' [%s]' % e['err']
    return (ms(e['t']) + ' ' + s) if times else s


def draw(lines, rails=False, from_fault=False, until_readmitted=False, times=False, from_leave=False):
    evs = window(parse(lines), rails, from_fault, until_readmitted, from_leave)
    railctl = rail_types()
    ranks = sorted({int(e['rank']) for e in evs if e['kind'] in ('trans', 'exit')} |
                   {int(e[k]) for e in evs if e['kind'] == 'wire' for k in ('src', 'dst')})
    out = ['sequenceDiagram']
    for r in ranks:
        out.append('    participant R%d as rank %d' % (r, r))
    pending = []  # notes of one rank, merged until something else happens

    def flush():
        if pending:
            out.append('    Note over R%s: %s' % (pending[0][0], '<br/>'.join(t for _, t in pending)))
            pending.clear()

    for e in evs:
        if e['kind'] == 'trans':
            if not shown_transition(e, rails):
                continue
            if pending and pending[0][0] != e['rank']:
                flush()
            pending.append((e['rank'], note_text(e, times)))
            continue
        flush()
        if e['kind'] == 'fault':
            a, b = ranks[0], ranks[-1]
            out.append('    Note over R%d,R%d: %sfault: rail %s turns %s' % (a, b, ms(e['t']) + ' ' if times else '',
                                                                    e['rail'], e['what']))
            continue
        if e['kind'] == 'exit':
            out.append('    Note over R%s: %sthe process ends: its connections close' %
                       (e['rank'], ms(e['t']) + ' ' if times else ''))
            continue
        if e['type'] == 'CLOSE':  # a connection's end, behind what the process wrote
            out.append('    R%s-)R%s: the connection ends (rail %s)' % (e['src'], e['dst'], e['rail']))
            continue
        if e['type'] in railctl and not rails:
            continue
        what, s, d = e['what'], int(e['src']), int(e['dst'])
        text = label(e)
        if e['type'] == 'READ':  # the data comes from the peer's memory
            s, d = d, s
        dash = '--' if e['type'] in RDMA else '-'
        if what == 'arrive':
            out.append('    R%d%s>>R%d: %s' % (s, dash, d, text))
        elif what == 'arrive-error':
            out.append('    R%d%s>>R%d: %s, arrives but completes with an error' % (s, dash, d, text))
        elif what == 'lost':
            out.append('    R%d%sxR%d: %s, lost' % (s, dash, d, text))
        elif what in ('post-vanish', 'vanish'):
            out.append('    R%d%sxR%d: %s, vanishes (silent rail)' % (s, dash, d, text))
        elif what in ('duplicate', 'stale', 'violation', 'again'):
            text = {'duplicate': 'a duplicate (seq or slot seen before): dropped' if e['type'] != 'BYE'
                                 else 'a BYE of its other rail: a duplicate, dropped',
                    'stale': 'stale (old rseq or a finished request): dropped',
                    'violation': 'breaks the protocol: dropped and counted',
                    'again': 'no buffer for %s: offered again later' % e['type']}[what]
            out.append('    Note over R%d: %s%s' % (d, ms(e['t']) + ' ' if times else '', text))
        # post, post-dead, closed: the arrow is drawn when the operation moves
        # (or the machines' notes tell its completion)
    flush()
    return '\n'.join(out) + '\n'


def tab_lines(root):
    with open(os.path.join(root, 'spec/alphabet.tab')) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith('#'):
                yield shlex.split(line)


MACHINES = ('send', 'recv', 'rail', 'conn', 'peer', 'agree')


def machines_table(root, path):
    """The machines: states and transitions counted in gen/, the diagrams."""
    out = ['| machine | states | transitions | diagram |', '|---|---|---|---|']
    for m in MACHINES:
        with open(os.path.join(root, 'gen/bfo_%s.h' % m)) as f:
            text = f.read()
        title = re.search(r'^ \* The (.*) machine \(Ragel', text, re.M).group(1)
        states = int(re.search(r'#define BFO_%s_NUM_STATES (\d+)' % m.upper(), text).group(1)) - 1
        with open(os.path.join(root, 'gen/bfo_%s_transitions.h' % m)) as f:
            trans = re.search(r'#define BFO_%s_NUM_TRANSITIONS (\d+)' % m.upper(), f.read()).group(1)
        svg = os.path.relpath(os.path.join(root, 'docs/diagrams/bfo_%s.svg' % m),
                              os.path.dirname(os.path.abspath(path)))
        out.append('| %s | %d | %s | [%s](%s) |' % (title, states, trans, svg, svg))
    return out


def table_block(root, name, path):
    """A table generated from spec/alphabet.tab (and gen/bfo_codec.h's sizes),
    or from gen/ (machines)."""
    if name == 'machines':
        return machines_table(root, path)
    with open(os.path.join(root, 'gen/bfo_codec.h')) as f:
        sizes = dict((m.group(1).lower(), m.group(2))
                     for m in re.finditer(r'#define BFO_HDR_([A-Z]+)_SIZE (\d+)', f.read()))
    rows = list(tab_lines(root))
    if name == 'fragments':
        out = ['| code | type | layout | header | data | duplicates told apart | what it is |',
               '|---|---|---|---|---|---|---|']
        for r in rows:
            if r[0] == 'fragment':
                _, typ, code, layout, payload, dedup, desc = r
                out.append('| %s | %s | %s | %s B | %s | %s | %s |' % (
                    code, typ, layout, sizes[layout], 'yes' if payload == 'payload' else 'keys' if payload == 'keys' else '',
                    '`%s_DUP_RCVD`' % typ if dedup == 'dedup' else '', desc))
        return out
    if name == 'layouts':
        out = ['| layout | size | fields after `type:u8 flags:u8`, in wire order |', '|---|---|---|']
        for r in rows:
            if r[0] == 'layout':
                out.append('| %s | %s B | %s |' % (r[1], sizes[r[1]], ' '.join('`%s`' % f for f in r[2:])))
        return out
    if name == 'flags':
        out = ['| flag | bit | on | meaning |', '|---|---|---|---|']
        for r in rows:
            if r[0] == 'flag':
                out.append('| %s | %s | %s | %s |' % (r[1], r[2], r[3].replace(',', ', '), r[4]))
        return out
    if name == 'events':
        out = ['| event | what it says |', '|---|---|']
        for r in rows:
            if r[0] == 'event':
                out.append('| `%s` | %s |' % (r[1], r[2]))
        return out
    raise SystemExit('bfo_seq: no table named %s' % name)


SEQ_BEGIN = re.compile(r'^<!-- bfo-seq: (?P<args>.*?) -->\s*$')
SNIP_BEGIN = re.compile(r'^<!-- bfo-snippet: (?P<path>\S+) (?P<name>\S+) -->\s*$')
TAB_BEGIN = re.compile(r'^<!-- bfo-table: (?P<name>\S+) -->\s*$')


def sim_block(bfo, spec):
    sim_args, _, draw_args = spec.partition('|')
    sim = shlex.split(sim_args)
    opts = shlex.split(draw_args)
    bad = [o for o in opts if o not in ('--rails', '--from-fault', '--until-readmitted', '--times', '--from-leave')]
    if bad:
        raise SystemExit('bfo_seq: unknown draw option %s in "%s"' % (bad, spec))
    run = subprocess.run([bfo, 'sim'] + sim + ['--trace'], stdout=subprocess.PIPE, universal_newlines=True)
    if run.returncode != 0:
        raise SystemExit('bfo_seq: `bfo sim %s` failed (exit %d)' % (sim_args.strip(), run.returncode))
    text = draw(run.stdout.splitlines(), rails='--rails' in opts, from_fault='--from-fault' in opts,
                until_readmitted='--until-readmitted' in opts, times='--times' in opts,
                from_leave='--from-leave' in opts)
    cmd = 'bfo sim ' + ' '.join(shlex.quote(a) for a in sim) + ' --trace'
    return ['```mermaid'] + text.rstrip('\n').split('\n') + ['```', '',
                                                             '<sub>Drawn from `%s` by `make docs-seq`.</sub>' % cmd]


def snippet_block(root, path, name):
    with open(os.path.join(root, path)) as f:
        src = f.read().split('\n')
    begin = '/* doc begin: %s */' % name
    end = '/* doc end: %s */' % name
    idx = [i for i, line in enumerate(src) if line.strip() == begin]
    if len(idx) != 1:
        raise SystemExit('bfo_seq: %s: want exactly one "%s"' % (path, begin))
    j = next((k for k in range(idx[0] + 1, len(src)) if src[k].strip() == end), None)
    if j is None:
        raise SystemExit('bfo_seq: %s: no "%s"' % (path, end))
    body = textwrap.dedent('\n'.join(src[idx[0] + 1:j])).strip('\n')
    return ['```c'] + body.split('\n') + ['```']


def update(path, bfo, root):
    with open(path) as f:
        lines = f.read().split('\n')
    out, i, blocks = [], 0, []
    while i < len(lines):
        line = lines[i]
        ms, mn, mt = SEQ_BEGIN.match(line), SNIP_BEGIN.match(line), TAB_BEGIN.match(line)
        if not ms and not mn and not mt:
            out.append(line)
            i += 1
            continue
        endmark = '<!-- bfo-%s end -->' % ('seq' if ms else 'snippet' if mn else 'table')
        j = next((k for k in range(i + 1, len(lines)) if lines[k].strip() == endmark), None)
        if j is None:
            raise SystemExit('%s:%d: no %s' % (path, i + 1, endmark))
        if ms:
            body = sim_block(bfo, ms.group('args'))
        elif mn:
            body = snippet_block(root, mn.group('path'), mn.group('name'))
        else:
            body = table_block(root, mt.group('name'), path)
        blocks.append((i + 1, line))
        out += [line] + body + [lines[j]]
        i = j + 1
    return lines, out, blocks


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest='cmd')
    d = sub.add_parser('draw')
    d.add_argument('--rails', action='store_true', help='show the rail machines and PROBE/PROBEACK/BROKEN')
    d.add_argument('--from-fault', action='store_true', help='start at the first fault')
    d.add_argument('--until-readmitted', action='store_true',
                   help='end when every rail that failed is UP again (default: at the last request step)')
    d.add_argument('--times', action='store_true', help='simulated time in every note')
    d.add_argument('--from-leave', action='store_true',
                   help='from the first rank that leaves (bfo sim --leave) to the end')
    u = sub.add_parser('update')
    u.add_argument('--check', action='store_true')
    u.add_argument('--bfo', default='build/cc/bfo')
    u.add_argument('files', nargs='+')
    a = ap.parse_args()
    if a.cmd == 'draw':
        sys.stdout.write(draw(sys.stdin.read().splitlines(), a.rails, a.from_fault, a.until_readmitted, a.times,
                              a.from_leave))
        return 0
    if a.cmd != 'update':
        ap.print_help()
        return 2
    root = ROOT
    stale, nblocks = 0, 0
    for path in a.files:
        old, new, blocks = update(path, a.bfo, root)
        nblocks += len(blocks)
        if old == new:
            continue
        if a.check:
            stale += 1
            diff = list(difflib.unified_diff(old, new, path, path + ' (regenerated)', lineterm='', n=1))
            sys.stdout.write('\n'.join(diff[:40]) + '\n')
            print('%s: generated blocks are stale: run `make docs-seq` and commit' % path)
        else:
            with open(path, 'w') as f:
                f.write('\n'.join(new))
            print('%s: regenerated' % path)
    if a.check and not stale:
        print('== docs: %d generated blocks (sequence diagrams, tables, snippets) match the code' % nblocks)
    return 1 if stale else 0


if __name__ == '__main__':
    sys.exit(main())
