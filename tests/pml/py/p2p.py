# SPDX-License-Identifier: BSD-3-Clause
"""mpi4py point-to-point: raw buffers without numpy (bytearray, array
module): standard, buffered, synchronous, blocking and not, Sendrecv; pickled objects (dicts,
lists, a large one past the eager limit) with send/recv, isend/irecv,
ssend, sendrecv, ANY_SOURCE/ANY_TAG with status."""
from array import array

from common import MPI, comm, me, np_, expect, expect_bytes, expect_status, payload, rounds, run

SIZES = [0, 1, 8, 4096, 65535, 65536, 65537, 1 << 20]


def send(mode, sb, peer, tag):
    if mode == "Send":
        comm.Send([sb, MPI.BYTE], peer, tag)
    elif mode == "Bsend":
        comm.Bsend([sb, MPI.BYTE], peer, tag)
    elif mode == "Ssend":
        comm.Ssend([sb, MPI.BYTE], peer, tag)
    elif mode == "Isend":
        comm.Isend([sb, MPI.BYTE], peer, tag).Wait()
    else:
        comm.Issend([sb, MPI.BYTE], peer, tag).Wait()


def case_buffers():
    MPI.Attach_buffer(bytearray(2 * (SIZES[-1] + MPI.BSEND_OVERHEAD)))
    for peer in rounds():
        if peer is not None:
            for si, n in enumerate(SIZES):
                tag = 10 + si
                sb = bytearray(payload(me, tag, n))
                # blocking receive; the lower rank sends first
                for mode in ("Send", "Bsend", "Ssend", "Isend", "Issend"):
                    rb = bytearray(n + 16)
                    st = MPI.Status()
                    if me < peer:
                        send(mode, sb, peer, tag)
                        comm.Recv([rb, MPI.BYTE], peer, tag, st)
                    else:
                        comm.Recv([rb, MPI.BYTE], peer, tag, st)
                        send(mode, sb, peer, tag)
                    expect_status(st, peer, tag, n, "%s of %d B" % (mode, n))
                    expect_bytes(rb, peer, tag, n, "%s of %d B" % (mode, n))
                    expect(rb[n:] == bytearray(16), "%s of %d B: bytes past the end written" % (mode, n))
                # both at once: Irecv + Isend, Waitall
                rb = bytearray(n + 16)
                reqs = [comm.Irecv([rb, MPI.BYTE], peer, tag + 100), comm.Isend([sb, MPI.BYTE], peer, tag + 100)]
                sts = [MPI.Status(), MPI.Status()]
                MPI.Request.Waitall(reqs, sts)
                expect_status(sts[0], peer, tag + 100, n, "Irecv/Isend of %d B" % n)
                expect_bytes(rb, peer, tag, n, "Irecv/Isend of %d B" % n)
                # Sendrecv
                rb = bytearray(n + 16)
                st = MPI.Status()
                comm.Sendrecv([sb, MPI.BYTE], peer, tag + 200, [rb, MPI.BYTE], peer, tag + 200, st)
                expect_status(st, peer, tag + 200, n, "Sendrecv of %d B" % n)
                expect_bytes(rb, peer, tag, n, "Sendrecv of %d B" % n)
        comm.Barrier()
    MPI.Detach_buffer()
    # typed: array('d') and array('i') (the datatype comes from the typecode)
    for peer in rounds():
        if peer is not None:
            for n in (1, 1000, 300000):
                sd = array("d", (me * 1e6 + i * 0.5 for i in range(n)))
                si = array("i", (me * 7 + i for i in range(n)))
                rd = array("d", bytes(8 * n))
                ri = array("i", bytes(4 * n))
                st = MPI.Status()
                r1 = comm.Irecv(rd, peer, 1)
                r2 = comm.Irecv(ri, peer, 2)
                comm.Send(sd, peer, 1)
                comm.Send(si, peer, 2)
                r1.Wait(st)
                expect_status(st, peer, 1, n, "array('d') of %d" % n, MPI.DOUBLE)
                r2.Wait(st)
                expect_status(st, peer, 2, n, "array('i') of %d" % n, MPI.INT)
                expect(rd == array("d", (peer * 1e6 + i * 0.5 for i in range(n))), "array('d') of %d: values" % n)
                expect(ri == array("i", (peer * 7 + i for i in range(n))), "array('i') of %d: values" % n)
        comm.Barrier()


def obj(src, k, big=False):
    o = {"from": src, "k": k, "list": [src, k, "x" * k, (1, 2.5, None)], "nested": {"a": [k] * (k % 5)}}
    if big:
        o["blob"] = payload(src, k, 2 << 20)
    return o


def case_objects():
    for peer in rounds():
        if peer is not None:
            # send/recv, lower rank first; ssend; a big object
            for k, big in ((1, False), (2, True), (3, False)):
                if me < peer:
                    comm.send(obj(me, k, big), dest=peer, tag=k)
                    got = comm.recv(source=peer, tag=k)
                else:
                    got = comm.recv(source=peer, tag=k)
                    comm.ssend(obj(me, k, big), dest=peer, tag=k)
                expect(got == obj(peer, k, big), "send/recv of object %d%s" % (k, " (2 MiB)" if big else ""))
            # isend/irecv both ways at once (irecv with a buffer for the big one)
            for k, big in ((4, False), (5, True)):
                rreq = comm.irecv(bytearray(4 << 20) if big else None, source=peer, tag=k)
                sreq = comm.isend(obj(me, k, big), dest=peer, tag=k)
                got = rreq.wait()
                sreq.wait()
                expect(got == obj(peer, k, big), "isend/irecv of object %d" % k)
            # sendrecv of a list
            got = comm.sendrecv([me, "abc", {"k": 6}], dest=peer, sendtag=6, source=peer, recvtag=6)
            expect(got == [peer, "abc", {"k": 6}], "sendrecv of a list: %r" % (got,))
        comm.Barrier()
    # ANY_SOURCE / ANY_TAG: everyone sends 5 objects to everyone
    reqs = [comm.isend(obj(me, 10 + k), dest=p, tag=10 + k) for p in range(np_) if p != me for k in range(5)]
    nxt = {}
    for _ in range((np_ - 1) * 5):
        st = MPI.Status()
        got = comm.recv(source=MPI.ANY_SOURCE, tag=MPI.ANY_TAG, status=st)
        src, tag = st.Get_source(), st.Get_tag()
        k = nxt.get(src, 0)
        nxt[src] = k + 1
        expect(tag == 10 + k, "ANY_TAG from %d: tag %d, expected %d (order)" % (src, tag, 10 + k))
        expect(got == obj(src, 10 + k), "ANY_SOURCE object from %d tag %d" % (src, tag))
    MPI.Request.waitall(reqs)


run({"buffers": case_buffers, "objects": case_objects})
