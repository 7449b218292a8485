# SPDX-License-Identifier: BSD-3-Clause
"""mpi4py collectives: bcast, reduce, allreduce, gather, allgather, scatter,
alltoall of pickled objects; Bcast/Allreduce/Allgather on array buffers at
1 MiB; barrier. Every result checked."""
from array import array

from common import MPI, comm, me, np_, expect, payload, run


def case_coll():
    comm.barrier()
    for root in range(np_):
        o = {"root": root, "list": list(range(root + 3)), "blob": payload(root, 1, 200000)} if me == root else None
        got = comm.bcast(o, root=root)
        expect(got == {"root": root, "list": list(range(root + 3)), "blob": payload(root, 1, 200000)},
               "bcast of an object from %d" % root)
        got = comm.gather({"r": me, "s": "x" * me}, root=root)
        if me == root:
            expect(got == [{"r": r, "s": "x" * r} for r in range(np_)], "gather of objects to %d: %r" % (root, got))
        else:
            expect(got is None, "gather: non-root got %r" % (got,))
        got = comm.scatter([("to", r, root) for r in range(np_)] if me == root else None, root=root)
        expect(got == ("to", me, root), "scatter from %d: %r" % (root, got))
        got = comm.reduce(me + 1, op=MPI.MAX, root=root)
        if me == root:
            expect(got == np_, "reduce(MAX) to %d: %r" % (root, got))
    expect(comm.allreduce(me + 1, op=MPI.SUM) == np_ * (np_ + 1) // 2, "allreduce(SUM) of ints")
    got = comm.allreduce([me], op=MPI.SUM)  # SUM is commutative: any order
    expect(sorted(got) == list(range(np_)), "allreduce(SUM) of lists concatenates: %r" % (got,))
    expect(comm.allgather((me, "a")) == [(r, "a") for r in range(np_)], "allgather of tuples")
    got = comm.alltoall([{"from": me, "to": p} for p in range(np_)])
    expect(got == [{"from": p, "to": me} for p in range(np_)], "alltoall of dicts: %r" % (got,))
    # buffers at 1 MiB
    n = 1 << 18
    a = array("i", range(me, me + n))
    r = array("i", bytes(4 * n))
    comm.Allreduce(a, r, op=MPI.SUM)
    s = sum(range(np_))
    expect(r == array("i", (i * np_ + s for i in range(n))), "Allreduce of array('i') 1 MiB")
    b = bytearray(payload(np_ - 1, 2, 1 << 20)) if me == np_ - 1 else bytearray(1 << 20)
    comm.Bcast([b, MPI.BYTE], root=np_ - 1)
    expect(bytes(b) == payload(np_ - 1, 2, 1 << 20), "Bcast of 1 MiB bytearray")
    g = bytearray(np_ * 65537)
    comm.Allgather([payload(me, 3, 65537), MPI.BYTE], [g, MPI.BYTE])
    for p in range(np_):
        expect(bytes(g[p * 65537:(p + 1) * 65537]) == payload(p, 3, 65537), "Allgather block %d" % p)
    comm.Barrier()


run({"coll": case_coll})
