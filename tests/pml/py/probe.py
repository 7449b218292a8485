# SPDX-License-Identifier: BSD-3-Clause
"""mpi4py probes: probe/iprobe with status (Get_count before the receive),
mprobe/improbe and Message.recv/irecv for pickled objects, Mprobe/Improbe
and Message.Recv/Irecv for buffers, with every wildcard combination;
MPI_PROC_NULL gives MPI.MESSAGE_NO_PROC."""
from common import MPI, comm, me, np_, expect, expect_bytes, expect_status, payload, rounds, run

SIZES = [0, 8, 65537, 1 << 20]


def case_probe():
    for peer in rounds():
        if peer is not None:
            for wc in range(4):
                src = MPI.ANY_SOURCE if wc & 1 else peer
                for kind in range(4):
                    for si, n in enumerate(SIZES):
                        tag = 100 + kind * 10 + si
                        what = "kind %d wildcards %d size %d" % (kind, wc, n)
                        ptag = MPI.ANY_TAG if wc & 2 else tag
                        sreq = comm.Isend([payload(me, tag, n), MPI.BYTE], peer, tag)
                        st = MPI.Status()
                        rb = bytearray(n + 16)
                        if kind == 0:
                            comm.Probe(src, ptag, st)
                            expect_status(st, peer, tag, n, "Probe " + what)
                            comm.Recv([rb, MPI.BYTE], st.Get_source(), st.Get_tag(), st)
                        elif kind == 1:
                            while not comm.Iprobe(src, ptag, st):
                                pass
                            expect_status(st, peer, tag, n, "Iprobe " + what)
                            comm.Recv([rb, MPI.BYTE], st.Get_source(), st.Get_tag(), st)
                        elif kind == 2:
                            m = comm.Mprobe(src, ptag, st)
                            expect_status(st, peer, tag, n, "Mprobe " + what)
                            m.Recv([rb, MPI.BYTE], st)
                        elif kind == 3:
                            m = None
                            while m is None:
                                m = comm.Improbe(src, ptag, st)
                            expect_status(st, peer, tag, n, "Improbe " + what)
                            m.Irecv([rb, MPI.BYTE]).Wait(st)
                        expect_status(st, peer, tag, n, "receive after probe " + what)
                        expect_bytes(rb, peer, tag, n, what)
                        sreq.Wait()
                # objects: mprobe + recv, improbe + irecv, probe + recv
                for k in range(3):
                    tag = 200 + k
                    o = {"from": me, "k": k, "data": payload(me, tag, [10, 100000, 2000000][k])}
                    sreq = comm.isend(o, dest=peer, tag=tag)
                    ptag = MPI.ANY_TAG if wc & 2 else tag
                    st = MPI.Status()
                    if k == 0:
                        m = comm.mprobe(source=src, tag=ptag, status=st)
                        got = m.recv()
                    elif k == 1:
                        m = None
                        while m is None:
                            m = comm.improbe(source=src, tag=ptag, status=st)
                        got = m.irecv().wait()
                    else:
                        expect(comm.probe(source=src, tag=ptag, status=st), "probe returned False")
                        got = comm.recv(source=st.Get_source(), tag=st.Get_tag())
                    expect(st.Get_source() == peer and st.Get_tag() == tag,
                           "object probe %d: status %d/%d" % (k, st.Get_source(), st.Get_tag()))
                    expect(got == {"from": peer, "k": k, "data": payload(peer, tag, [10, 100000, 2000000][k])},
                           "object after probe %d (wildcards %d)" % (k, wc))
                    sreq.wait()
                comm.Barrier()  # do not let the next wildcard round see this one's messages
        comm.Barrier()
    # MPI_PROC_NULL
    st = MPI.Status()
    m = comm.Mprobe(MPI.PROC_NULL, 0, st)
    expect(m == MPI.MESSAGE_NO_PROC, "Mprobe(PROC_NULL) is not MESSAGE_NO_PROC")
    expect(st.Get_source() == MPI.PROC_NULL, "Mprobe(PROC_NULL): status source %d" % st.Get_source())
    rb = bytearray(8)
    m.Recv([rb, MPI.BYTE], st)
    expect(st.Get_source() == MPI.PROC_NULL and st.Get_count(MPI.BYTE) == 0, "Recv of MESSAGE_NO_PROC")
    expect(comm.Iprobe(MPI.PROC_NULL, MPI.ANY_TAG, st), "Iprobe(PROC_NULL) is False")
    m = comm.mprobe(source=MPI.PROC_NULL)
    expect(m.recv() is None, "mprobe(PROC_NULL).recv() is not None")


run({"probe": case_probe})
