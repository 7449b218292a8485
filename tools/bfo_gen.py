#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""bfo_gen.py - turn spec/ into gen/.

    python3 tools/bfo_gen.py [--out DIR] [--ragel PATH]

Reads spec/alphabet.tab (fragment types, header layouts, flags, events) and
the Ragel machines spec/<machine>.rl (grammar) + spec/<machine>_binding.rl
(binding to C), and writes into DIR (default gen/):

  bfo_alphabet.h  bfo_alphabet.rl  bfo_codec.h        from alphabet.tab
  bfo_<m>.h                 Ragel's C (-G2) wrapped with names and the typed API
  bfo_<m>_transitions.h     every transition, derived from Ragel's XML (-x)
  bfo_<m>.dot               the machine as Graphviz, with state names

The conn machine (spec/conn.rl) has an alphabet of its own,
spec/conn_alphabet.tab (events only): its events are generated into
gen/bfo_conn.h (BFO_CONN_EV_*, bfo_conn_event_name).

State names are the labels of the grammar: the binding references each label
with fentry(), so Ragel exports its state number.  Generation fails when a
state has no label, when two labels name one state (Ragel merged them because
they behave the same), when a transition emits more actions than allowed, or
when no machine takes a fragment type (no transition on its T_RCVD).

Output is deterministic: no paths, no dates, no #line directives; a file is
rewritten only when its bytes change.  Run from the repository root.

The version stamp: bfo_alphabet.h defines BFO_GEN_ABI (GEN_ABI below, the
contract with include/fsm's base, which every generated header that uses
the base checks against bfo_core.h's BFO_GEN_ABI_REQUIRED with an #error)
and BFO_GEN_STAMP (a digest of this file and spec/, which every other
generated header checks), so that a gen/ made for other headers, or files
of two runs mixed, stop the build with "regenerate with make gen".

Layering: a generated header includes other generated headers and the base
of include/fsm/ only (BASE_INCLUDES: bfo_core.h, bfo_le.h, which include
nothing of gen/); the rest of include/fsm/ includes gen/, never the other
way round (tests/check_layers.py, make check-headers).
"""

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

SPEC = "spec"
ALPHABET = os.path.join(SPEC, "alphabet.tab")
# (short name, C prefix, grammar definition instantiated by main, title)
MACHINES = [
    ("send", "SendRequest", "send request"),
    ("recv", "RecvRequest", "receive request"),
    ("rail", "Rail", "rail (one rail seen from one peer)"),
    ("conn", "Conn", "connection (one transport connection to one peer on one rail)"),
    ("peer", "Peer", "peer (one other process of the job, as this rank sees it)"),
    ("agree", "Agree", "agreement (one rank's part in one fault-tolerant agreement of a group)"),
]
# Machines with an alphabet of their own (events only), not alphabet.tab's:
# the conn machine runs under the transports (backends/bfo_link.h), its
# events never reach the engine; the peer machine's events are facts the
# engine computes, never a frame.  Their events are BFO_<M>_EV_* in
# gen/bfo_<m>.h; the Ragel alphabet each grammar includes
# (bfo_<m>_alphabet.rl) is made in the temporary directory only.
OWN_ALPHABET = {"conn": os.path.join(SPEC, "conn_alphabet.tab"),
                "peer": os.path.join(SPEC, "peer_alphabet.tab"),
                "agree": os.path.join(SPEC, "agree_alphabet.tab")}
MAX_ACTIONS = 4  # must match BFO_MAX_ACTIONS' default in bfo_core.h
# The contract between gen/ and include/fsm's base: bfo_machine's layout,
# bfo_fsm_step, BFO_STATIC_ASSERT, the error codes, the bfo_le.h loads and
# stores the codec calls.  bfo_core.h requires it (BFO_GEN_ABI_REQUIRED) and
# the generated headers stop the build when it says otherwise; bump both
# together when either side changes it.  2: bfo_machine.n_events, and the
# check in gen/ (bfo_core.h no longer includes gen/).
GEN_ABI = 2
CORE_H = os.path.join("include", "fsm", "bfo_core.h")
# what follows a header: nothing, data, or RDMA keys (u32 per rail)
PAYLOAD_KIND = {"-": 0, "payload": 1, "keys": 2}
WIDTH = {"u8": 1, "u16": 2, "u32": 4, "u64": 8, "handle": 8}
CTYPE = {"u8": "uint8_t", "u16": "uint16_t", "u32": "uint32_t",
         "u64": "uint64_t", "handle": "bfo_handle"}


class GenError(Exception):
    pass


# The license of what this writes, spec/'s (LICENSE): the first line of every
# generated file, as of every source file (tests/check_spdx.sh).
SPDX = "SPDX-License-Identifier: BSD-3-Clause"


def banner(sources, what):
    src = ", ".join(sources)
    return ("// " + SPDX + "\n"
            "/* GENERATED FILE - DO NOT EDIT.\n"
            " * %s\n"
            " * Generated from %s by tools/bfo_gen.py (run `make gen`).\n"
            " * Change the spec and regenerate; `make check-gen` fails when this\n"
            " * file is not what the spec generates. */\n" % (what, src))


def check_core_abi():
    """The headers must expect what this generator writes."""
    try:
        with open(CORE_H, encoding="utf-8") as f:
            m = re.search(r"^#define BFO_GEN_ABI_REQUIRED (\d+)", f.read(), re.M)
    except OSError as e:
        raise GenError("%s: %s" % (CORE_H, e))
    if not m:
        raise GenError("%s has no BFO_GEN_ABI_REQUIRED" % CORE_H)
    if int(m.group(1)) != GEN_ABI:
        raise GenError("%s requires BFO_GEN_ABI %s but tools/bfo_gen.py writes %d: "
                       "change the generator to match the headers, then GEN_ABI"
                       % (CORE_H, m.group(1), GEN_ABI))


def gen_stamp():
    """A digest of the generator and every spec file: the same for every
    file of one run, so files of different runs do not mix unnoticed."""
    h = hashlib.sha256(b"bfo_gen ABI %d\n" % GEN_ABI)
    me = os.path.join("tools", "bfo_gen.py")
    with open(os.path.abspath(__file__), "rb") as f:
        h.update(me.encode() + b"\0" + f.read() + b"\0")
    for name in sorted(os.listdir(SPEC)):
        p = os.path.join(SPEC, name)
        if os.path.isfile(p):
            with open(p, "rb") as f:
                h.update(p.encode() + b"\0" + f.read() + b"\0")
    return "0x" + h.hexdigest()[:8]


STAMP = None  # set by main()


def stamp_check(path):
    """Lines a generated header puts after its includes (bfo_alphabet.h,
    reached through them, defines the stamp)."""
    return ("#if !defined(BFO_GEN_STAMP) || BFO_GEN_STAMP != %s\n"
            "#error \"%s and gen/bfo_alphabet.h come from different runs of tools/bfo_gen.py"
            " (BFO_GEN_STAMP): regenerate with make gen\"\n"
            "#endif\n\n" % (STAMP, path))


def abi_check():
    """Lines a generated header that uses the base puts after the stamp
    check: this gen/ must be written for the base it is compiled with."""
    return ("#if !defined(BFO_GEN_ABI_REQUIRED) || BFO_GEN_ABI != BFO_GEN_ABI_REQUIRED\n"
            "#error \"gen/ was generated by a tools/bfo_gen.py for other include/fsm headers"
            " (BFO_GEN_ABI): regenerate with make gen\"\n"
            "#endif\n\n")


def includes(base, gen):
    """The #include lines of a generated header: the base of include/fsm/
    (headers that include nothing of gen/), then generated headers."""
    o = ""
    if base:
        o += "/* include/fsm/'s base, which includes nothing of gen/ (tests/check_layers.py) */\n"
        o += "".join('#include "%s"\n' % h for h in base) + "\n"
    return o + "".join('#include "%s"\n' % h for h in gen) + "\n"


def write_if_changed(path, text, written):
    old = None
    if os.path.exists(path):
        with open(path, "r", encoding="utf-8") as f:
            old = f.read()
    if old != text:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        written.append(path)


# ---------------------------------------------------------------------------
# alphabet.tab
# ---------------------------------------------------------------------------
class Alphabet:
    def __init__(self):
        self.layouts = {}      # name -> [(field, type, reserved)]
        self.layout_order = []
        self.fragments = []    # dicts: name code layout payload dedup desc
        self.flags = []        # dicts: name bit frags desc
        self.extra_events = []  # (name, desc)
        self.events = []       # (name, desc) in enum order, from 1
        self.path = ALPHABET
        self.owner = None      # the machine whose own alphabet this is (OWN_ALPHABET)


def parse_alphabet(path):
    ab = Alphabet()
    ab.path = path
    with open(path, encoding="utf-8") as f:
        lines = f.readlines()
    for lineno, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        where = "%s:%d" % (path, lineno)
        m = re.match(r'^(\w+)\s+(.*?)\s*("([^"]*)")?$', line)
        if not m:
            raise GenError("%s: cannot read this line" % where)
        kind, rest, desc = m.group(1), m.group(2).split(), m.group(4)
        if kind == "layout":
            name, fields = rest[0], []
            for spec in rest[1:]:
                fm = re.match(r"^(\w+):(\w+)(=0)?$", spec)
                if not fm or fm.group(2) not in WIDTH:
                    raise GenError("%s: bad field %r" % (where, spec))
                fields.append((fm.group(1), fm.group(2), bool(fm.group(3))))
            if name in ab.layouts:
                raise GenError("%s: layout %s defined twice" % (where, name))
            ab.layouts[name] = fields
            ab.layout_order.append(name)
        elif kind == "fragment":
            if len(rest) != 5 or desc is None:
                raise GenError("%s: fragment NAME CODE LAYOUT PAYLOAD DEDUP \"DESC\"" % where)
            name, code, layout, payload, dedup = rest
            if layout not in ab.layouts:
                raise GenError("%s: unknown layout %s" % (where, layout))
            if payload not in PAYLOAD_KIND:
                raise GenError("%s: PAYLOAD is one of %s" % (where, ", ".join(PAYLOAD_KIND)))
            ab.fragments.append(dict(name=name, code=int(code, 0), layout=layout,
                                     payload=PAYLOAD_KIND[payload],
                                     dedup=dedup == "dedup", desc=desc))
        elif kind == "flag":
            if len(rest) != 3 or desc is None:
                raise GenError("%s: flag NAME BIT FRAGMENTS \"DESC\"" % where)
            ab.flags.append(dict(name=rest[0], bit=int(rest[1], 0),
                                 frags=rest[2].split(","), desc=desc))
        elif kind == "event":
            if len(rest) != 1 or desc is None:
                raise GenError("%s: event NAME \"DESC\"" % where)
            ab.extra_events.append((rest[0], desc))
        else:
            raise GenError("%s: unknown kind %r" % (where, kind))

    names = [fr["name"] for fr in ab.fragments]
    codes = [fr["code"] for fr in ab.fragments]
    if len(set(names)) != len(names) or len(set(codes)) != len(codes):
        raise GenError("%s: fragment names and codes must be unique" % path)
    if any(c <= 0 or c > 255 for c in codes):
        raise GenError("%s: fragment codes are 1..255" % path)
    for fl in ab.flags:
        for fr in fl["frags"]:
            if fr not in names:
                raise GenError("%s: flag %s names unknown fragment %s" % (path, fl["name"], fr))
    for fr in ab.fragments:
        t = fr["name"]
        ab.events.append((t + "_RCVD", "a %s arrived for this machine" % t))
        if fr["dedup"]:
            ab.events.append((t + "_DUP_RCVD", "a %s arrived that duplicates one already taken" % t))
        ab.events.append((t + "_DELIVERED", "a %s posted here completed: the peer has it" % t))
        ab.events.append((t + "_FAILED", "a %s posted here completed with an error: it may have arrived" % t))
    ab.events.extend(ab.extra_events)
    evnames = [e[0] for e in ab.events]
    if len(set(evnames)) != len(evnames):
        raise GenError("%s: event names collide" % path)
    if len(ab.events) > 254:
        raise GenError("%s: more than 254 events do not fit the Ragel alphabet" % path)
    return ab


def parse_own_alphabet(short, path):
    """A machine's own alphabet: events only."""
    ab = parse_alphabet(path)
    if ab.layouts or ab.fragments or ab.flags:
        raise GenError("%s: only events here (layouts, fragments and flags are spec/alphabet.tab's)"
                       % path)
    if not ab.events:
        raise GenError("%s: no events" % path)
    ab.owner = short
    return ab


def gen_own_alphabet_rl(ab):
    o = ["# The Ragel alphabet of the %s machine, from %s by tools/bfo_gen.py.\n"
         % (ab.owner, ab.path)]
    o.append("%%%%{\n  machine bfo_%s_alphabet;\n\n" % ab.owner)
    for i, (n, d) in enumerate(ab.events, 1):
        o.append("  %s = %d;\n" % (n, i))
    o.append("}%%\n")
    return "".join(o)


def gen_own_events_c(ab):
    """The events of a machine with its own alphabet, in its header."""
    up = ab.owner.upper()
    o = ["/* Events: this machine's own alphabet (%s), not bfo_alphabet.h's.  0 is no\n"
         " * event. */\n" % ab.path]
    o.append("#define BFO_%s_EVENTS(X) \\\n" % up)
    o.append(" \\\n".join("    X(%s, %d)" % (n, i) for i, (n, _) in enumerate(ab.events, 1)))
    o.append("\n\nenum bfo_%s_event {\n    BFO_%s_EV_NONE = 0,\n" % (ab.owner, up))
    for i, (n, d) in enumerate(ab.events, 1):
        o.append("    BFO_%s_EV_%s = %d, /* %s */\n" % (up, n, i, d))
    o.append("};\n#define BFO_%s_EV_COUNT %d /* events are 1 .. BFO_%s_EV_COUNT-1 */\n\n"
             % (up, len(ab.events) + 1, up))
    o.append("/* Name of an event (\"%s\"), or \"(invalid)\". */\n" % ab.events[0][0])
    o.append("static inline const char *bfo_%s_event_name(int ev)\n{\n" % ab.owner)
    o.append("    static const char *const names[] = {\n        \"(none)\",\n")
    for n, _ in ab.events:
        o.append("        \"%s\",\n" % n)
    o.append("    };\n    return (ev >= 0 && ev < %d) ? names[ev] : \"(invalid)\";\n}\n\n"
             % (len(ab.events) + 1))
    return "".join(o)


def layout_offsets(ab, name):
    """[(field, type, reserved, offset)], size; checks natural alignment."""
    off, out = 2, []
    for field, typ, rsv in ab.layouts[name]:
        w = WIDTH[typ]
        if off % w:
            raise GenError("layout %s: field %s at offset %d is not aligned to %d"
                           % (name, field, off, w))
        out.append((field, typ, rsv, off))
        off += w
    if off % 8:
        raise GenError("layout %s: size %d is not a multiple of 8" % (name, off))
    return out, off


def gen_alphabet_h(ab):
    o = [banner([ALPHABET], "The bfo alphabet: fragment types, flags, events.")]
    o.append("#ifndef BFO_ALPHABET_H\n#define BFO_ALPHABET_H\n\n")
    o.append("/* What this gen/ is: BFO_GEN_ABI, the contract with include/fsm's base\n"
             " * (bfo_core.h's BFO_GEN_ABI_REQUIRED) that every generated header using\n"
             " * the base checks; BFO_GEN_STAMP, a digest of tools/bfo_gen.py and spec/\n"
             " * that every other generated header checks.  This header includes\n"
             " * nothing. */\n")
    o.append("#define BFO_GEN_ABI %d\n#define BFO_GEN_STAMP %s\n\n" % (GEN_ABI, STAMP))
    o.append("/* What may follow a header (PAYLOAD in the list): nothing, data, or the\n"
             " * RDMA keys of the memory the header names, one u32 per rail of the\n"
             " * sender (rail 0 first, little-endian). */\n")
    o.append("#define BFO_PAYLOAD_NONE 0\n#define BFO_PAYLOAD_DATA 1\n#define BFO_PAYLOAD_KEYS 2\n\n")
    o.append("/* Fragment types: BFO_FRAGMENTS(X) calls X(NAME, CODE, LAYOUT, PAYLOAD, DEDUP),\n"
             " * PAYLOAD a BFO_PAYLOAD_* value. */\n")
    o.append("#define BFO_FRAGMENTS(X) \\\n")
    o.append(" \\\n".join("    X(%s, 0x%02x, %s, %d, %d)" % (
        fr["name"], fr["code"], fr["layout"], fr["payload"], fr["dedup"])
        for fr in ab.fragments))
    o.append("\n\nenum bfo_frag_type {\n")
    for fr in ab.fragments:
        o.append("    BFO_FRAG_%s = 0x%02x, /* %s */\n" % (fr["name"], fr["code"], fr["desc"]))
    o.append("    BFO_FRAG_MAX_CODE = 0x%02x\n};\n\n" % max(fr["code"] for fr in ab.fragments))
    o.append("#define BFO_FRAG_COUNT %d\n\n" % len(ab.fragments))
    o.append("/* Header flag bits. */\n")
    for fl in ab.flags:
        o.append("#define BFO_FLAG_%s 0x%02x /* %s (%s) */\n" % (
            fl["name"], fl["bit"], fl["desc"], ", ".join(fl["frags"])))
    o.append("\n/* Flags: BFO_FLAGS(X) calls X(NAME, BIT). */\n")
    o.append("#define BFO_FLAGS(X) \\\n")
    o.append(" \\\n".join("    X(%s, 0x%02x)" % (fl["name"], fl["bit"]) for fl in ab.flags))
    o.append("\n")
    o.append("\n/* Events: the one alphabet of every machine.  0 is no event. */\n")
    o.append("#define BFO_EVENTS(X) \\\n")
    o.append(" \\\n".join("    X(%s, %d)" % (n, i) for i, (n, _) in enumerate(ab.events, 1)))
    o.append("\n\nenum bfo_event {\n    BFO_EV_NONE = 0,\n")
    for i, (n, d) in enumerate(ab.events, 1):
        o.append("    BFO_EV_%s = %d, /* %s */\n" % (n, i, d))
    o.append("};\n#define BFO_EV_COUNT %d /* events are 1 .. BFO_EV_COUNT-1 */\n\n" % (len(ab.events) + 1))
    o.append("/* Name of a fragment type (\"MATCH\"), or NULL. */\n")
    o.append("static inline const char *bfo_frag_name(int type)\n{\n    switch (type) {\n")
    for fr in ab.fragments:
        o.append("    case 0x%02x: return \"%s\";\n" % (fr["code"], fr["name"]))
    o.append("    default: return (const char *)0;\n    }\n}\n\n")
    o.append("/* Flags defined for a fragment type (other bits are malformed). */\n")
    o.append("static inline unsigned bfo_frag_flags_allowed(int type)\n{\n    switch (type) {\n")
    for fr in ab.fragments:
        bits = [fl for fl in ab.flags if fr["name"] in fl["frags"]]
        expr = " | ".join("BFO_FLAG_%s" % fl["name"] for fl in bits) or "0u"
        o.append("    case 0x%02x: return %s;\n" % (fr["code"], expr))
    o.append("    default: return 0u;\n    }\n}\n\n")
    o.append("/* 1 when data may follow the header of a fragment type (BFO_PAYLOAD_DATA), else 0. */\n")
    o.append("static inline int bfo_frag_has_payload(int type)\n{\n    switch (type) {\n")
    for fr in ab.fragments:
        if fr["payload"] == 1:
            o.append("    case 0x%02x:\n" % fr["code"])
    o.append("        return 1;\n" if any(fr["payload"] == 1 for fr in ab.fragments) else "")
    o.append("    default: return 0;\n    }\n}\n\n")
    o.append("/* 1 when RDMA keys follow the header of a fragment type (BFO_PAYLOAD_KEYS), else 0. */\n")
    o.append("static inline int bfo_frag_has_keys(int type)\n{\n    switch (type) {\n")
    for fr in ab.fragments:
        if fr["payload"] == 2:
            o.append("    case 0x%02x:\n" % fr["code"])
    o.append("        return 1;\n" if any(fr["payload"] == 2 for fr in ab.fragments) else "")
    o.append("    default: return 0;\n    }\n}\n\n")
    o.append("/* The event of fragment type `type` for kind: BFO_EVK_RCVD, BFO_EVK_DUP_RCVD,\n"
             " * BFO_EVK_DELIVERED or BFO_EVK_FAILED; 0 when there is none. */\n")
    o.append("enum bfo_event_kind { BFO_EVK_RCVD, BFO_EVK_DUP_RCVD, BFO_EVK_DELIVERED, BFO_EVK_FAILED };\n")
    # one lookup (every completion and most frames go through it), not a switch
    if len(ab.events) + 1 > 256:
        raise GenError("%s: more than 255 events no longer fit bfo_frag_event's table" % ALPHABET)
    codes = {fr["code"]: fr for fr in ab.fragments}
    top = max(codes)
    o.append("static inline int bfo_frag_event(int type, int kind)\n{\n")
    o.append("    static const unsigned char ev[%d][4] = {\n" % (top + 1))
    for code in range(top + 1):
        fr = codes.get(code)
        if not fr:
            o.append("        { 0, 0, 0, 0 }, /* 0x%02x */\n" % code)
            continue
        t = fr["name"]
        dup = "BFO_EV_%s_DUP_RCVD" % t if fr["dedup"] else "0"
        o.append("        { BFO_EV_%s_RCVD, %s, BFO_EV_%s_DELIVERED, BFO_EV_%s_FAILED },\n"
                 % (t, dup, t, t))
    o.append("    };\n")
    o.append("    return (unsigned)type <= BFO_FRAG_MAX_CODE && (unsigned)kind < 4 ? ev[type][kind] : 0;\n}\n\n")
    o.append("/* Name of an event (\"ACK_RCVD\"), or \"(invalid)\". */\n")
    o.append("static inline const char *bfo_event_name(int ev)\n{\n")
    o.append("    static const char *const names[] = {\n        \"(none)\",\n")
    for n, _ in ab.events:
        o.append("        \"%s\",\n" % n)
    o.append("    };\n    return (ev >= 0 && ev < %d) ? names[ev] : \"(invalid)\";\n}\n\n" % (len(ab.events) + 1))
    o.append("#endif /* BFO_ALPHABET_H */\n")
    return "".join(o)


def gen_alphabet_rl(ab):
    o = ["# " + line.lstrip("/* ").rstrip(" */") + "\n"
         for line in banner([ALPHABET], "The Ragel alphabet of every bfo machine.").splitlines()]
    o.append("%%{\n  machine bfo_alphabet;\n\n")
    for i, (n, d) in enumerate(ab.events, 1):
        o.append("  %s = %d;\n" % (n, i))
    o.append("}%%\n")
    return "".join(o)


def gen_codec_h(ab):
    o = [banner([ALPHABET], "Header layouts of every fragment type: structs, encoders, decoders.")]
    o.append("#ifndef BFO_CODEC_H\n#define BFO_CODEC_H\n\n")
    o.append("#include <stddef.h>\n#include <stdint.h>\n\n")
    o.append(includes(["bfo_core.h", "bfo_le.h"], ["bfo_alphabet.h"]))
    o.append(stamp_check("gen/bfo_codec.h"))
    o.append(abi_check())
    o.append("#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n")
    sizes = {}
    for lname in ab.layout_order:
        fields, size = layout_offsets(ab, lname)
        sizes[lname] = size
        users = [fr["name"] for fr in ab.fragments if fr["layout"] == lname]
        up = lname.upper()
        o.append("/* layout %s (%d bytes): %s */\n" % (lname, size, ", ".join(users) or "unused"))
        o.append("#define BFO_HDR_%s_SIZE %d\n" % (up, size))
        o.append("typedef struct bfo_hdr_%s {\n    uint8_t type;  /* offset 0: BFO_FRAG_* */\n"
                 "    uint8_t flags; /* offset 1: BFO_FLAG_* */\n" % lname)
        for field, typ, rsv, off in fields:
            if not rsv:
                o.append("    %s %s; /* offset %d, %s */\n" % (CTYPE[typ], field, off, typ))
        o.append("} bfo_hdr_%s;\n" % lname)
        o.append("BFO_STATIC_ASSERT(BFO_HDR_%s_SIZE %% 8 == 0 && BFO_HDR_%s_SIZE <= BFO_MAX_HDR_SIZE,\n"
                 "                  \"layout %s: size\");\n" % (up, up, lname))
        for field, typ, rsv, off in fields:
            if not rsv and typ != "handle":
                o.append("BFO_STATIC_ASSERT(sizeof(((bfo_hdr_%s *)0)->%s) == %d, \"layout %s: %s holds %s\");\n"
                         % (lname, field, WIDTH[typ], lname, field, typ))
        # encoder
        o.append("\n/* Writes the header into buf; returns its size, or 0 when cap is too small. */\n")
        o.append("static inline size_t bfo_hdr_%s_encode(const bfo_hdr_%s *h, uint8_t *buf, size_t cap)\n{\n"
                 % (lname, lname))
        o.append("    if (cap < BFO_HDR_%s_SIZE)\n        return 0;\n" % up)
        o.append("    buf[0] = h->type;\n    buf[1] = h->flags;\n")
        for field, typ, rsv, off in fields:
            val = "0" if rsv else "h->%s" % field
            if typ == "u8":
                o.append("    buf[%d] = %s;\n" % (off, "0" if rsv else "h->%s" % field))
            elif typ == "handle":
                o.append("    bfo_put_handle(buf + %d, h->%s);\n" % (off, field))
            else:
                o.append("    bfo_put%d(buf + %d, %s);\n" % (WIDTH[typ] * 8, off, val))
        o.append("    return BFO_HDR_%s_SIZE;\n}\n\n" % up)
        # decoder
        o.append("/* Reads the header from buf[0..len); BFO_ERR_TRUNCATED when len is short,\n"
                 " * BFO_ERR_BAD_FIELD when a reserved field is not zero.  Type and flags are\n"
                 " * copied, not checked: bfo_frame_decode() checks them. */\n")
        o.append("static inline int bfo_hdr_%s_decode(bfo_hdr_%s *h, const uint8_t *buf, size_t len)\n{\n"
                 % (lname, lname))
        o.append("    if (len < BFO_HDR_%s_SIZE)\n        return BFO_ERR_TRUNCATED;\n" % up)
        o.append("    h->type = buf[0];\n    h->flags = buf[1];\n")
        for field, typ, rsv, off in fields:
            if rsv:
                get = "buf[%d]" % off if typ == "u8" else "bfo_get%d(buf + %d)" % (WIDTH[typ] * 8, off)
                o.append("    if (%s != 0)\n        return BFO_ERR_BAD_FIELD;\n" % get)
            elif typ == "u8":
                o.append("    h->%s = buf[%d];\n" % (field, off))
            elif typ == "handle":
                o.append("    h->%s = bfo_get_handle(buf + %d);\n" % (field, off))
            else:
                o.append("    h->%s = bfo_get%d(buf + %d);\n" % (field, WIDTH[typ] * 8, off))
        o.append("    return BFO_OK;\n}\n\n")
    # size per fragment type
    o.append("/* Header size of each fragment type. */\n")
    for fr in ab.fragments:
        o.append("#define BFO_FRAG_%s_HDR_SIZE BFO_HDR_%s_SIZE\n" % (fr["name"], fr["layout"].upper()))
        o.append("BFO_STATIC_ASSERT(BFO_FRAG_%s_HDR_SIZE == %d, \"%s header: %d bytes\");\n"
                 % (fr["name"], sizes[fr["layout"]], fr["name"], sizes[fr["layout"]]))
    o.append("\n/* Header size of a fragment type, or 0 for an unknown type. */\n")
    o.append("static inline size_t bfo_frag_hdr_size(int type)\n{\n    switch (type) {\n")
    for fr in ab.fragments:
        o.append("    case BFO_FRAG_%s: return BFO_HDR_%s_SIZE;\n" % (fr["name"], fr["layout"].upper()))
    o.append("    default: return 0;\n    }\n}\n\n")
    # every header's fields, for code that handles any type without its layout
    o.append("/* One field of a header as it is on the wire, for code that shows or checks\n"
             " * the header of any fragment type without knowing its layout (the\n"
             " * simulator's trace, the tests): its name in spec/alphabet.tab, its offset\n"
             " * and width in bytes, and its kind: BFO_FIELD_UINT (little-endian, width 1,\n"
             " * 2, 4 or 8), BFO_FIELD_HANDLE (index u32, then generation u32) or\n"
             " * BFO_FIELD_RESERVED (written as zero; a frame where it is not is\n"
             " * malformed).  type and flags, at 0 and 1, are not listed. */\n")
    o.append("enum bfo_field_kind { BFO_FIELD_UINT = 1, BFO_FIELD_HANDLE = 2, BFO_FIELD_RESERVED = 3 };\n")
    o.append("typedef struct bfo_field {\n    const char *name;\n"
             "    unsigned char offset, width, kind;\n} bfo_field;\n\n")
    o.append("/* The fields of a fragment type's header in wire order, *n of them; NULL\n"
             " * (and *n = 0) for an unknown type. */\n")
    o.append("static inline const bfo_field *bfo_frag_fields(int type, size_t *n)\n{\n")
    for lname in ab.layout_order:
        if not any(fr["layout"] == lname for fr in ab.fragments):
            continue  # an unused static would be a warning
        fields, _ = layout_offsets(ab, lname)
        o.append("    static const bfo_field fields_%s[] = {\n" % lname)
        for field, typ, rsv, off in fields:
            kind = "BFO_FIELD_RESERVED" if rsv else "BFO_FIELD_HANDLE" if typ == "handle" else "BFO_FIELD_UINT"
            o.append("        { \"%s\", %d, %d, %s },\n" % (field, off, WIDTH[typ], kind))
        o.append("    };\n")
    o.append("    switch (type) {\n")
    for fr in ab.fragments:
        o.append("    case BFO_FRAG_%s: *n = %d; return fields_%s;\n"
                 % (fr["name"], len(ab.layouts[fr["layout"]]), fr["layout"]))
    o.append("    default: *n = 0; return (const bfo_field *)0;\n    }\n}\n\n")
    # the frame union and the generic decoder
    o.append("/* A decoded frame: the header in the member named after its layout. */\n")
    o.append("typedef struct bfo_frame {\n    uint8_t type;  /* BFO_FRAG_* */\n    uint8_t flags;\n"
             "    union {\n")
    for lname in ab.layout_order:
        o.append("        bfo_hdr_%s %s;\n" % (lname, lname))
    o.append("    } h;\n    const uint8_t *payload; /* bytes after the header (NULL when none) */\n"
             "    size_t payload_len;\n} bfo_frame;\n\n")
    o.append("/* Decodes one frame of exactly len bytes.  Returns BFO_OK or\n"
             " *   BFO_ERR_TRUNCATED   len is shorter than the type byte or the header\n"
             " *   BFO_ERR_BAD_TYPE    unknown fragment type\n"
             " *   BFO_ERR_BAD_FLAGS   a flag bit not defined for the type\n"
             " *   BFO_ERR_BAD_FIELD   a reserved field is not zero\n"
             " *   BFO_ERR_BAD_LENGTH  bytes after the header of a type that carries none,\n"
             " *                       or keys that are not whole u32s\n"
             " * It reads nothing beyond buf[len-1].  Field semantics (handles, lengths)\n"
             " * are checked by bfo_frame_parse() in bfo_wire.h. */\n")
    o.append("static inline int bfo_frame_decode(bfo_frame *f, const uint8_t *buf, size_t len)\n{\n")
    o.append("    int rc;\n    size_t hs;\n    int payload;\n\n")
    o.append("    if (len < 2)\n        return BFO_ERR_TRUNCATED;\n    switch (buf[0]) {\n")
    for fr in ab.fragments:
        ln = fr["layout"]
        o.append("    case BFO_FRAG_%s:\n        rc = bfo_hdr_%s_decode(&f->h.%s, buf, len);\n"
                 "        hs = BFO_HDR_%s_SIZE;\n        payload = %d;\n        break;\n"
                 % (fr["name"], ln, ln, ln.upper(), fr["payload"]))
    o.append("    default:\n        return BFO_ERR_BAD_TYPE;\n    }\n")
    o.append("    if (rc != BFO_OK)\n        return rc;\n")
    o.append("    if (buf[1] & ~bfo_frag_flags_allowed(buf[0]))\n        return BFO_ERR_BAD_FLAGS;\n")
    o.append("    if ((payload == BFO_PAYLOAD_NONE && len != hs) || (payload == BFO_PAYLOAD_KEYS && (len - hs) % 4))\n"
             "        return BFO_ERR_BAD_LENGTH;\n")
    o.append("    f->type = buf[0];\n    f->flags = buf[1];\n")
    o.append("    f->payload = len > hs ? buf + hs : (const uint8_t *)0;\n    f->payload_len = len - hs;\n")
    o.append("    return BFO_OK;\n}\n\n")
    # the generic encoder
    o.append("/* Writes the header of frame f: f->type, f->flags, then the fields of the\n"
             " * member of f->h named after the type's layout (reserved fields as zero).\n"
             " * The payload is not written: it follows the header.  Returns the\n"
             " * header's size, or 0 when cap is too small or f->type is unknown. */\n")
    o.append("static inline size_t bfo_frame_encode(const bfo_frame *f, uint8_t *buf, size_t cap)\n{\n")
    o.append("    size_t n;\n\n    switch (f->type) {\n")
    for fr in ab.fragments:
        ln = fr["layout"]
        o.append("    case BFO_FRAG_%s: n = bfo_hdr_%s_encode(&f->h.%s, buf, cap); break;\n"
                 % (fr["name"], ln, ln))
    o.append("    default: return 0;\n    }\n")
    o.append("    if (n) {\n        buf[0] = f->type;\n        buf[1] = f->flags;\n    }\n")
    o.append("    return n;\n}\n\n")
    o.append("#ifdef __cplusplus\n}\n#endif\n#endif /* BFO_CODEC_H */\n")
    return "".join(o), sizes


# ---------------------------------------------------------------------------
# machines
# ---------------------------------------------------------------------------
def run_ragel(ragel, args):
    p = subprocess.run([ragel] + args, capture_output=True, text=True)
    if p.returncode != 0:
        raise GenError("ragel %s failed:\n%s%s" % (" ".join(args), p.stdout, p.stderr))


class Machine:
    pass


def read_machine(ragel, ab, short, defname, incdir, tmp):
    binding = os.path.join(SPEC, "%s_binding.rl" % short)
    xml_path = os.path.join(tmp, short + ".xml")
    c_path = os.path.join(tmp, short + ".c")
    inc = ["-I", incdir, "-I", SPEC, "-I", tmp]
    run_ragel(ragel, ["-x"] + inc + [binding, "-o", xml_path])
    # -G2, goto-driven: a step is a jump on the state and one on the event,
    # about half the instructions of the table styles (-F1: six dependent
    # table loads), which counts on every message (make bench-engine)
    run_ragel(ragel, ["-C", "-L", "-G2"] + inc + [binding, "-o", c_path])
    root = ET.parse(xml_path).getroot()
    mach = root.find("ragel_def/machine")
    m = Machine()
    m.short, m.defname, m.binding = short, defname, binding
    m.grammar = os.path.join(SPEC, "%s.rl" % short)
    actions = {int(a.get("id")): a.get("name") for a in mach.find("action_list")}
    tables = {}
    for t in mach.find("action_table_list"):
        tables[t.get("id")] = [actions[int(x)] for x in (t.text or "").split()]
    m.start = int(mach.find("start_state").text)
    error = int(mach.find("error_state").text)
    if error != 0:
        raise GenError("%s: expected Ragel's error state to be 0" % binding)
    prefix = "main_%s_" % defname
    names = {}
    for e in mach.find("entry_points"):
        en = e.get("name")
        if en == "main":
            continue
        if not en.startswith(prefix):
            raise GenError("%s: entry point %s is not a label of %s" % (binding, en, defname))
        label = en[len(prefix):]
        if label.startswith("start_"):
            label = label[len("start_"):]
        st = int(e.text)
        if st in names:
            raise GenError("%s: labels %s and %s name the same state: Ragel merged them "
                           "because every transition out of them is the same; merge them in "
                           "the spec or tell them apart" % (m.grammar, names[st], label))
        names[st] = label
    states = mach.find("state_list")
    m.n_states = int(states.get("length"))
    m.trans = []  # (from, event, to, [actions])
    used_actions = set()
    evnames = [e[0] for e in ab.events]  # the machine's own alphabet when it has one
    for s in states:
        sid = int(s.get("id"))
        if sid == 0:
            continue
        if sid not in names:
            raise GenError("%s: state %d has no name: reference its label with fentry() in "
                           "the name_states action of %s" % (m.grammar, sid, binding))
        for t in s.find("trans_list"):
            lo, hi, target, acts = t.text.split()
            if target == "x":
                continue
            acts = [] if acts == "x" else tables[acts]
            for ev in range(int(lo), int(hi) + 1):
                if ev < 1 or ev > len(evnames):
                    raise GenError("%s: transition on %d, not an event" % (binding, ev))
                m.trans.append((sid, ev, int(target), acts))
                used_actions.update(acts)
            if len(acts) > MAX_ACTIONS:
                raise GenError("%s: a transition out of %s emits %d actions (max %d)"
                               % (m.grammar, names[sid], len(acts), MAX_ACTIONS))
    m.names = names
    # actions in Ragel's definition order, only those transitions use
    m.actions = [actions[i] for i in sorted(actions) if actions[i] in used_actions]
    m.final = {sid: all(to == sid for (fr, _, to, _) in m.trans if fr == sid)
               for sid in names}
    m.max_actions = max([len(a) for (_, _, _, a) in m.trans] + [0])
    # facts C computes, and which states wait for them (bfo_machine.waits)
    fact_bits = {"DRAINED": 1, "ALL_DELIVERED": 2}
    m.waits = {sid: 0 for sid in names}
    for (fr, ev, _, _) in m.trans:
        m.waits[fr] |= fact_bits.get(evnames[ev - 1], 0)
    with open(c_path, encoding="utf-8") as f:
        m.ccode = clean_ragel_c(f.read(), short)
    return m


def clean_ragel_c(text, short):
    out = []
    for line in text.splitlines():
        if re.match(r"^\s*/\* #line \d+ \"[^\"]*\" \*/\s*$", line):
            continue
        # the binding's own license line: the banner gives the file's one
        if line.strip() == "// " + SPDX:
            continue
        out.append(line.rstrip())
    text = "\n".join(out).strip("\n") + "\n"
    text = re.sub(r"\n{3,}", "\n\n", text)
    # Ragel names its tables _<machine>_...; identifiers that start with an
    # underscore are reserved at file scope, so give them ours.
    text = re.sub(r"\b_bfo_%s_" % short, "bfo_%s__" % short, text)
    # -G2 enters a state's code both by goto and, from the switch on cs, by
    # its case label, which the code before it falls into: say so, for
    # -Wimplicit-fallthrough (GCC's -Wextra; clang's only when asked)
    text, n = re.subn(r"(\n\t\tgoto _test_eof\d+;\n)(case \d+:)", r"\1\tBFO__FALLTHROUGH;\n\2", text)
    if not n:
        raise GenError("Ragel's -G2 output for %s no longer has the expected shape" % short)
    return text


EXEC_MACROS = """/* With GCC the exec is inlined wherever the machine is known (bfo_<m>_step,
 * the engine's feeds): a step is on every message's path, and inlined its
 * jumps fold into the caller's checks.  Clang, made to inline this goto
 * graph, spills dozens of values per step: there it stays a call (make
 * bench-engine: eager pair 836 vs 924 with GCC, 1224 vs 1020 with Clang). */
#ifndef BFO__EXEC_INLINE
#if defined(__GNUC__) && !defined(__clang__)
#define BFO__EXEC_INLINE inline __attribute__((always_inline))
#else
#define BFO__EXEC_INLINE inline
#endif
#endif

/* Ragel's -G2 code falls into a state's case label on purpose. */
#ifndef BFO__FALLTHROUGH
#if defined(__cplusplus) && __cplusplus >= 201703L
#define BFO__FALLTHROUGH [[fallthrough]]
#elif defined(__has_attribute)
#if __has_attribute(fallthrough)
#define BFO__FALLTHROUGH __attribute__((fallthrough))
#endif
#endif
#ifndef BFO__FALLTHROUGH
#define BFO__FALLTHROUGH (void)0
#endif
#endif

"""


def gen_machine_h(m, ab):
    up = m.short.upper()
    st = lambda sid: "BFO_%s_ST_%s" % (up, m.names[sid])
    o = [banner([m.grammar, m.binding, ab.path],
                "The %s machine (Ragel -G2) with its names and typed API." % m.title)]
    o.append("#ifndef BFO_%s_H\n#define BFO_%s_H\n\n" % (up, up))
    o.append(includes(["bfo_core.h"], ["bfo_alphabet.h"]))
    o.append(stamp_check("gen/bfo_%s.h" % m.short))
    o.append(abi_check())
    o.append('#ifdef __cplusplus\nextern "C" {\n#endif\n\n')
    if ab.owner:
        o.append(gen_own_events_c(ab))
    o.append("/* States (numbers are Ragel's: they change when the spec changes). */\n")
    o.append("enum bfo_%s_state {\n" % m.short)
    for sid in sorted(m.names):
        o.append("    %s = %d,%s\n" % (st(sid), sid, " /* final */" if m.final[sid] else ""))
    o.append("};\n#define BFO_%s_NUM_STATES %d /* states are 1 .. BFO_%s_NUM_STATES-1 */\n\n"
             % (up, m.n_states, up))
    o.append("/* Actions: what a transition asks the caller to do, in order. */\n")
    o.append("enum bfo_%s_action {\n" % m.short)
    for i, a in enumerate(m.actions, 1):
        o.append("    BFO_%s_ACT_%s = %d,\n" % (up, a.upper(), i))
    o.append("};\n#define BFO_%s_NUM_ACTIONS %d /* actions are 1 .. BFO_%s_NUM_ACTIONS-1 */\n"
             % (up, len(m.actions) + 1, up))
    o.append("#define BFO_%s_MAX_ACTIONS %d /* most actions one transition emits */\n" % (up, m.max_actions))
    o.append("BFO_STATIC_ASSERT(BFO_%s_MAX_ACTIONS <= BFO_MAX_ACTIONS,\n"
             "                  \"raise BFO_MAX_ACTIONS: a %s transition emits more\");\n\n" % (up, m.short))
    o.append("static const char *const bfo_%s__state_names[] = {\n    \"(none)\",\n" % m.short)
    for sid in range(1, m.n_states):
        o.append("    \"%s\",\n" % m.names[sid])
    o.append("};\nstatic const char *const bfo_%s__action_names[] = {\n    \"(none)\",\n" % m.short)
    for a in m.actions:
        o.append("    \"%s\",\n" % a)
    o.append("};\nstatic const unsigned char bfo_%s__final[] = {\n    0," % m.short)
    o.append("".join(" %d," % int(m.final[sid]) for sid in range(1, m.n_states)))
    o.append("\n};\n/* BFO_WAITS_* facts each state takes */\n")
    o.append("static const unsigned char bfo_%s__waits[] = {\n    0," % m.short)
    o.append("".join(" %d," % m.waits[sid] for sid in range(1, m.n_states)))
    o.append("\n};\n\n")
    o.append(EXEC_MACROS)
    o.append("/* ---- Ragel's output for %s, #line directives removed ---- */\n\n" % m.binding)
    o.append(m.ccode)
    o.append("\n/* ---- typed API ---- */\n\n")
    o.append("static const bfo_machine bfo_%s_machine = {\n" % m.short)
    o.append("    BFO_MACHINE_%s, \"%s\", BFO_%s_NUM_STATES, %s, %s,\n"
             % (up, m.short, up, "BFO_%s_EV_COUNT" % up if ab.owner else "BFO_EV_COUNT",
                st(m.start)))
    o.append("    bfo_%s__state_names, bfo_%s__action_names, bfo_%s__final, bfo_%s__waits,\n"
             "    bfo_%s__exec\n};\n\n" % (m.short, m.short, m.short, m.short, m.short))
    o.append("/* The caller's state of one %s. */\n" % m.title)
    o.append("typedef struct bfo_%s_fsm {\n    int cs; /* a BFO_%s_ST_* value */\n} bfo_%s_fsm;\n\n"
             % (m.short, up, m.short))
    o.append("/* Puts the machine in its start state, %s. */\n" % m.names[m.start])
    o.append("static inline void bfo_%s_init(bfo_%s_fsm *fsm)\n{\n    fsm->cs = %s;\n}\n\n"
             % (m.short, m.short, st(m.start)))
    o.append("/* Feeds one event; see bfo_fsm_step() for the return codes. */\n")
    o.append("static inline int bfo_%s_step(bfo_%s_fsm *fsm, int event, bfo_step *out)\n{\n"
             "    return bfo_fsm_step(&bfo_%s_machine, &fsm->cs, event, out);\n}\n\n"
             % (m.short, m.short, m.short))
    o.append("static inline int bfo_%s_accepts(int state, int event)\n{\n"
             "    return bfo_fsm_accepts(&bfo_%s_machine, state, event);\n}\n\n" % (m.short, m.short))
    o.append("static inline const char *bfo_%s_state_name(int state)\n{\n"
             "    return bfo_fsm_state_name(&bfo_%s_machine, state);\n}\n\n" % (m.short, m.short))
    o.append("static inline const char *bfo_%s_action_name(int action)\n{\n"
             "    return (action > 0 && action < BFO_%s_NUM_ACTIONS) ? bfo_%s__action_names[action]\n"
             "                                                     : \"(invalid)\";\n}\n\n"
             % (m.short, up, m.short))
    o.append("static inline int bfo_%s_is_final(int state)\n{\n"
             "    return bfo_fsm_is_final(&bfo_%s_machine, state);\n}\n\n" % (m.short, m.short))
    o.append("#ifdef __cplusplus\n}\n#endif\n#endif /* BFO_%s_H */\n" % up)
    return "".join(o)


def gen_transitions_h(m, ab):
    up = m.short.upper()
    evn = [None] + [e[0] for e in ab.events]
    o = [banner([m.grammar, m.binding, ab.path],
                "Every transition of the %s machine, as Ragel built it." % m.title)]
    o.append("#ifndef BFO_%s_TRANSITIONS_H\n#define BFO_%s_TRANSITIONS_H\n\n" % (up, up))
    o.append(includes([], ["bfo_%s.h" % m.short]))
    o.append(stamp_check("gen/bfo_%s_transitions.h" % m.short))
    o.append("/* BFO_%s_TRANSITIONS(X) calls X(FROM, EVENT, TO, N, A1, A2, A3, A4) once per\n"
             " * transition: states and events without their prefixes, the N actions by\n"
             " * their spec names, padded with NONE. */\n" % up)
    o.append("#define BFO_%s_TRANSITIONS(X) \\\n" % up)
    rows = []
    for fr, ev, to, acts in m.trans:
        padded = list(acts) + ["NONE"] * (MAX_ACTIONS - len(acts))
        rows.append("    X(%s, %s, %s, %d, %s)" % (m.names[fr], evn[ev], m.names[to], len(acts),
                                                 ", ".join(padded)))
    o.append(" \\\n".join(rows))
    o.append("\n\n#define BFO_%s_NUM_TRANSITIONS %d\n\n" % (up, len(m.trans)))
    o.append("#endif /* BFO_%s_TRANSITIONS_H */\n" % up)
    return "".join(o)


def dot_id(s):
    return '"%s"' % s


def gen_dot(m, ab):
    evn = [None] + [e[0] for e in ab.events]
    o = ["// %s\n" % SPDX]
    o.append("// GENERATED FILE - DO NOT EDIT. The %s machine, from %s and %s\n"
             % (m.title, m.grammar, m.binding))
    o.append("// by tools/bfo_gen.py; render with `make diagrams`.\n")
    o.append("digraph bfo_%s {\n" % m.short)
    o.append('  label="bfo %s machine\\n(edge: events / actions)"; labelloc=t; fontsize=18;\n' % m.title)
    o.append('  rankdir=LR; nodesep=0.35; ranksep=0.6;\n')
    o.append('  node [shape=box, style="rounded,filled", fillcolor="#eef3fb", fontname="Helvetica"];\n')
    o.append('  edge [fontname="Helvetica", fontsize=9];\n')
    o.append('  __start [shape=point, width=0.15, label=""];\n')
    for sid in sorted(m.names):
        extra = ', peripheries=2, fillcolor="#e4f4e4"' if m.final[sid] else ""
        o.append("  %s [label=%s%s];\n" % (dot_id(m.names[sid]), dot_id(m.names[sid]), extra))
    o.append("  __start -> %s;\n" % dot_id(m.names[m.start]))
    # one edge per (from, to, actions), listing its events
    edges, order = {}, []
    for fr, ev, to, acts in m.trans:
        key = (fr, to, tuple(acts))
        if key not in edges:
            edges[key] = []
            order.append(key)
        edges[key].append(evn[ev])
    for key in order:
        fr, to, acts = key
        lab = "\\n".join(edges[key])
        if acts:
            lab += "\\n/ " + ", ".join(acts)
        o.append("  %s -> %s [label=%s];\n" % (dot_id(m.names[fr]), dot_id(m.names[to]), dot_id(lab)))
    o.append("}\n")
    return "".join(o)


def check_fragments_taken(ab, machines):
    """Every fragment type is received by some machine: its T_RCVD (and, with
    dedup, T_DUP_RCVD) is the event of some transition of spec/*.rl.  A type no
    machine takes could only be dropped by the engine."""
    evnames = [e[0] for e in ab.events]
    taken = {evnames[ev - 1] for m in machines for (_, ev, _, _) in m.trans}
    for fr in ab.fragments:
        for ev in [fr["name"] + "_RCVD"] + ([fr["name"] + "_DUP_RCVD"] if fr["dedup"] else []):
            if ev not in taken:
                raise GenError("%s: fragment %s: no machine has a transition on %s: give it one in "
                               "spec/send.rl, spec/recv.rl or spec/rail.rl (the machine that "
                               "receives it)" % (ALPHABET, fr["name"], ev))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="gen", help="output directory (default gen)")
    ap.add_argument("--ragel", default=os.environ.get("RAGEL", "ragel"))
    ap.add_argument("--only", help="generate this machine only (while developing)")
    args = ap.parse_args()
    if not os.path.exists(ALPHABET):
        sys.exit("bfo_gen: run me from the repository root (no %s here)" % ALPHABET)
    if shutil.which(args.ragel) is None:
        sys.exit("bfo_gen: %s not found; install Ragel 6 (Debian: apt-get install ragel)" % args.ragel)
    os.makedirs(args.out, exist_ok=True)
    written = []
    global STAMP
    try:
        check_core_abi()
        STAMP = gen_stamp()
        ab = parse_alphabet(ALPHABET)
        write_if_changed(os.path.join(args.out, "bfo_alphabet.h"), gen_alphabet_h(ab), written)
        write_if_changed(os.path.join(args.out, "bfo_alphabet.rl"), gen_alphabet_rl(ab), written)
        codec, _ = gen_codec_h(ab)
        write_if_changed(os.path.join(args.out, "bfo_codec.h"), codec, written)
        with tempfile.TemporaryDirectory() as tmp:
            machines = []
            for short, defname, title in MACHINES:
                if args.only and short != args.only:
                    continue
                mab = ab
                if short in OWN_ALPHABET:
                    mab = parse_own_alphabet(short, OWN_ALPHABET[short])
                    with open(os.path.join(tmp, "bfo_%s_alphabet.rl" % short), "w",
                              encoding="utf-8") as f:
                        f.write(gen_own_alphabet_rl(mab))
                m = read_machine(args.ragel, mab, short, defname, args.out, tmp)
                m.title = title
                m.ab = mab
                machines.append(m)
            if not args.only:
                check_fragments_taken(ab, [m for m in machines if m.ab is ab])
            for m in machines:
                short, mab = m.short, m.ab
                write_if_changed(os.path.join(args.out, "bfo_%s.h" % short), gen_machine_h(m, mab), written)
                write_if_changed(os.path.join(args.out, "bfo_%s_transitions.h" % short),
                                 gen_transitions_h(m, mab), written)
                write_if_changed(os.path.join(args.out, "bfo_%s.dot" % short), gen_dot(m, mab), written)
                print("bfo_gen: %-4s %2d states, %3d transitions, %2d actions"
                      % (short, len(m.names), len(m.trans), len(m.actions)))
    except GenError as e:
        sys.exit("bfo_gen: error: %s" % e)
    for p in written:
        print("bfo_gen: wrote %s" % p)
    if not written:
        print("bfo_gen: %s is up to date" % args.out)


if __name__ == "__main__":
    main()
