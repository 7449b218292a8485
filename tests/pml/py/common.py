# SPDX-License-Identifier: BSD-3-Clause
"""Shared helpers of the mpi4py tests (tests/pml/py/): payloads that depend
on (source, tag, index), checks that abort the whole job with a clear
message, and the pairing rounds (partner = rank ^ d)."""
import random
import sys
import time

from mpi4py import MPI

comm = MPI.COMM_WORLD
me = comm.Get_rank()
np_ = comm.Get_size()
CASE = "?"


def fail(msg):
    sys.stderr.write("FAIL rank %d/%d case %s: %s\n" % (me, np_, CASE, msg))
    sys.stderr.flush()
    sys.stdout.flush()
    comm.Abort(3)


def expect(cond, msg):
    if not cond:
        fail(msg() if callable(msg) else msg)


def payload(src, tag, n):
    """n bytes that depend on (src, tag) and on each index"""
    return random.Random("%d:%d" % (src, tag)).randbytes(n)


def expect_bytes(got, src, tag, n, what):
    exp = payload(src, tag, n)
    got = bytes(got[:n])
    if got != exp:
        i = next((k for k in range(n) if got[k] != exp[k]), n)
        fail("%s: byte %d of %d is %r, expected %r" % (what, i, n, got[i:i + 1], exp[i:i + 1]))


def expect_status(st, src, tag, count, what, datatype=MPI.BYTE):
    expect(st.Get_source() == src, lambda: "%s: status source %d, expected %d" % (what, st.Get_source(), src))
    expect(st.Get_tag() == tag, lambda: "%s: status tag %d, expected %d" % (what, st.Get_tag(), tag))
    c = st.Get_count(datatype)
    expect(c == count, lambda: "%s: Get_count %d, expected %d" % (what, c, count))


def rounds():
    """partners, one per round: rank ^ d (skipped when past the size)"""
    p = 1
    while p < np_:
        p *= 2
    for d in range(1, p):
        peer = me ^ d
        yield peer if peer < np_ else None


def run(cases):
    global CASE
    if len(sys.argv) < 2 or sys.argv[1] not in cases:
        if me == 0:
            sys.stderr.write("usage: %s CASE; cases: %s\n" % (sys.argv[0], " ".join(cases)))
        sys.exit(2)
    CASE = sys.argv[1]
    t0 = time.time()
    cases[CASE]()
    comm.Barrier()
    if me == 0:
        print("case %s: passed on %d ranks in %.2f s" % (CASE, np_, time.time() - t0))
        sys.stdout.flush()
