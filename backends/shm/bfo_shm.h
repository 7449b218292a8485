// SPDX-License-Identifier: BSD-3-Clause
/* bfo_shm.h - the shared-memory transport: bfo rails between ranks on one host.
 *
 * Part of bfo (see bfo.h).  A transport under bfo_net (bfo_transport.h):
 * one row of its table, `bfo_shm_transport`.  A rail is named `shm` or
 * `shm:LABEL` (several shm rails to a peer are independent connections,
 * each with its own segment).  There is one connection per (peer, rail): a
 * shared segment holding a ring of frames each way, an eventfd doorbell per
 * rank, and the peer's pidfd as the connection's lifeline (LIFELINE: the
 * handshake's unix socket is closed once it is over).
 * No threads; everything happens in progress().
 *
 * ---------------------------------------------------------------------------
 * USE (through the table, as bfo_net does)
 *   bfo_shm_options o = {0};             // zero: every default
 *   bfo_transport_args a = { rank, size, nrails, rails, bw, &cfg, &sink, &o, 1 };
 *   void *t;  bfo_shm_transport.open(&t, &a);
 *   bfo_shm_transport.address(t, r, &addr);   // publish, for every rail
 *   bfo_shm_transport.start(t, job);           // every address published
 *   bfo_shm_transport.backend(t, &be);         // the engine's backend rows
 *   loop: bfo_shm_transport.progress(t, now);
 *         n = bfo_shm_transport.wait_fds(t, fds, max);   // before poll()
 *   bfo_shm_transport.fini(t);
 * cfg is the engine's configuration: max_ops sizes the descriptor pool,
 * eager_limit and frag_size the largest frame (and so the smallest ring),
 * probe_timeout the stall keepalive, rdma the capabilities.  The sink
 * needs completion, frame, rail_event and lookup (without lookup no
 * connection can be made); heard may be NULL.  One thread drives it.
 *
 * OPTIONS (bfo_shm_options; zero means the default)
 *   ring_bytes            ring per direction of a connection, rounded up to
 *                         a power of two (default 1 MiB, and at least four
 *                         records of the largest frame)
 *   node_bytes            the rings of every pair of ranks on this host
 *                         within this per rail (default 256 MiB; MEMORY
 *                         below): a dial's ring is ring_bytes or smaller;
 *                         negative: ring_bytes whatever the ranks
 *   read_chunk            bytes process_vm_readv moves per connection per
 *                         progress call (default 1 MiB)
 *   connect_timeout_ns    hello exchange, or how long the accepting side
 *                         waits for the peer to dial (default 1 s)
 *   scan_ns               how often a busy progress looks at the sockets:
 *                         accepts, hellos, lifelines, deadlines (default
 *                         100 us; at once after a sleep and while connect()
 *                         requests wait)
 *   rail_bandwidth[]      MB/s per rail when args->bandwidth gives none
 *                         (default 0: 8,000, eight times the engine's guess
 *                         for a rail without a figure, such as TCP's)
 *   any_uid               nonzero: a process of another uid may connect
 *                         (default 0: only this process's effective uid;
 *                         SAME UID below)
 *   The log level is args->log_level: -1 silent, 1 errors and lost
 *   connections (default), 2 connections, 3 debug; lines on stderr begin
 *   "bfo-shm[RANK]:".
 *
 * ERRORS (open): BFO_OK, BFO_ERR_INVALID (bad arguments, a rail that is not
 *   shm), BFO_ERR_NO_MEMORY, BFO_SHM_ERR_SOCKET (a socket, epoll or eventfd
 *   call failed).  bfo_shm_errname() names them, and BFO_SHM_ERR_SEGMENT
 *   (a ring segment could not be made or reserved), which open no longer
 *   returns: a segment is made at the dial (MEMORY), and its failure is a
 *   CONNECT_FAILED whose log line says why.
 *
 * ---------------------------------------------------------------------------
 * GUARANTEES (bfo_backend.h) AND HOW THEY ARE KEPT
 *   1. ok only when the peer's engine has it: every record the receiver
 *      offers the engine is counted in the ring's consumed counter (tail)
 *      only once the engine took it (sink->frame returned anything but
 *      BFO_ERR_AGAIN); the receiver publishes the tail in shared memory at
 *      the end of each progress that took frames.  The sender completes a
 *      send with ok=1 only when the tail it reads has passed the send's
 *      record, and reports sink->heard when the tail moves.  Writing into
 *      the ring is not delivery.
 *   2, 3. When a connection ends (its lifeline reports EOF or an error, a
 *      slot fails its checks, a read fails, the engine disconnects or
 *      reconnects, a newer connection replaces it), the sends the peer's
 *      engine already took complete ok=1 (the tail read one last time),
 *      then RAIL_ERROR is reported for (peer, rail) (CONNECT_FAILED when
 *      the engine was waiting for the connection instead), then every send
 *      and read still in flight completes with ok=0.  A post while the rail
 *      has no connection completes with ok=0 from the next progress.
 *   4. One ring per direction, read in order: frames stay in order.
 *
 * THE RING.  Records follow each other in a byte ring, 64-byte aligned;
 *   positions are 64-bit byte counts that only grow (head: written by the
 *   sender; tail: consumed by the receiver), the offset is the position
 *   modulo the ring.  A record that would cross the ring's end is preceded
 *   by a WRAP record that fills the rest of it.  Every record carries its
 *   sequence number (from 1, per connection and direction, WRAP records
 *   included), the low 16 bits of the segment generation, and a CRC32C
 *   over its header and frame.  The receiver copies a record's header out
 *   of the ring once (two relaxed 8-byte loads: the peer may rewrite the
 *   ring at any time, and a check of the ring's bytes then a use of them
 *   would let it pass one value and use another), and checks and uses
 *   only the copy: sequence, generation, kind, length (at most the
 *   largest frame, inside the ring, below the head), then the checksum
 *   (of the copy's 12 bytes and the frame in place; the checks before it
 *   hold without it); a record offered again (BACK-PRESSURE) is the
 *   checked copy, never re-read; any mismatch is corruption: the connection is dropped (counted:
 *   malformed), the rail fails, and nothing of the record reaches the
 *   engine.  The head and tail the peer publishes are checked too (inside
 *   the ring, never backwards).  The engine reads a frame where it lies in
 *   the ring (no copy on receive but the 16-byte record header's); the
 *   sender copies it in (one copy).
 *
 * BACK-PRESSURE.  sink->frame returning BFO_ERR_AGAIN: the record stays,
 *   the tail does not move past it, and the same record is offered again
 *   at every later progress (its checks are not run again: its header is
 *   the copy that passed them, whatever the ring holds now).  Meanwhile the
 *   stalled side bumps a beat counter in shared memory at least every
 *   probe_timeout / 4 (at most 10 ms apart; counted: keepalives_tx), and
 *   the sender reports sink->heard when it moves, so the engine's probe,
 *   queued behind the stalled frames, does not time out while the peer is
 *   alive.  A full ring is not an error either: sends wait in the sender's
 *   queue (descriptors from the pool) and are written, in order, when the
 *   tail frees room (at progress, or at the next post).
 *
 * CONNECTIONS.  Every rank listens on one abstract unix socket per rail
 *   (SOCK_SEQPACKET), named "bfo-shm.PID.NONCE.RAIL" from its published
 *   address (every rank listens from open).  The engine calls
 *   connect(peer, rail) on one side or both, at init or at first use; the
 *   side that asks dials, the other accepts (as TCP), and both at once
 *   settle on the lower rank's dial: it answers the higher rank's hello
 *   with a HELLO_DIALING ("I am dialing you", no fds) and the higher rank
 *   waits for its hello (or has taken it already).  Either side first
 *   looks the peer's address up (sink->lookup) and compares host identities
 *   (boot id, host name, network and pid namespaces): a peer on another
 *   host, or in another container, gets CONNECT_FAILED at once, with the
 *   log line "the shm rail does not reach a peer on another host (...)".
 *   The dialer maps a fresh segment, writes its header (generation, job,
 *   both ranks, rail, sizes) and sends a HELLO (rank, rail, size, pid, job,
 *   generation, sizes) with the segment's memfd and its doorbell eventfd
 *   (SCM_RIGHTS).  The acceptor checks the dialer's uid (SAME UID) before
 *   it reads the hello, then the hello, that the doorbell is an eventfd
 *   (made non-blocking), that the memfd is a regular file sealed against
 *   shrinking and large enough (a shorter one would SIGBUS this process
 *   at the first access past its end), maps it, checks its header
 *   against the hello, refuses a generation not above the last it took
 *   from that peer (a dial the peer gave up, read late: counted
 *   hellos_stale), and answers with a HELLO_REPLY carrying its own doorbell
 *   and its own last dial (the hellos of its that the reply supersedes are
 *   stale from then on); it reports CONNECTED then, the dialer when the
 *   reply arrives.  The dialer waits for the reply without a deadline: its
 *   dial reached the listener of the peer's process, which may be
 *   computing; while that process exists (kill(pid, 0), every 100 ms) the
 *   engine hears the peer on the rail, and its exit closes the socket.  A hello
 *   that fails a check closes the socket (counted: hellos_rejected).  The
 *   peer's pid for process_vm_readv comes from SO_PEERCRED.  Once the
 *   handshake is over the socket is closed (LIFELINE below): the peer
 *   process dying, or dropping the connection, fails the rail at once (no
 *   timeout).  connect() while connected closes the connection
 *   (RAIL_ERROR is not reported: the engine asked) and starts afresh;
 *   disconnect() drops it at the next progress.  A new connection for a
 *   (peer, rail) replaces the old one (RAIL_ERROR for the old first).
 *   CONNECT_FAILED: no address, another host, refused, the socket closed
 *   before the reply, or a lost tie whose winner did not dial within
 *   connect_timeout.  Who dials, what a hello, a connect() or a failure
 *   does to the connection and what the engine hears are the conn
 *   machine's (spec/conn.rl, run by backends/bfo_link.h): this transport
 *   binds its actions (bfo_shm.c, shm_act).
 *
 * SAME UID (issue 38).  Any process of the host can dial a listener
 *   (below), and any can bind a dead rank's name.  So the acceptor reads
 *   the dialer's uid from SO_PEERCRED (as the kernel recorded it at
 *   connect()) before it reads a byte of the hello, and the dialer the
 *   listener's right after its connect(): a uid other than this
 *   process's effective uid is refused (the socket closed, its fds never
 *   received; counted hellos_rejected; the dial: CONNECT_FAILED), logged
 *   at level 1 once per peer pid, unless options.any_uid (ranks of one
 *   job under several uids).  bfo_shm_uid_allowed is the rule.  Every
 *   doorbell a peer hands over (HELLO, HELLO_REPLY, TAKEN) must be an
 *   eventfd (its /proc/self/fd link "anon_inode:[eventfd]": fstat cannot
 *   tell an eventfd from an epoll fd or a timerfd, one anonymous inode
 *   for all on older kernels) and is made O_NONBLOCK before it is ever
 *   written: a pipe nobody reads, a FIFO or a FUSE file would hang this
 *   process in write() (O_NONBLOCK does not help a FUSE file), a regular
 *   file would be written into.  Refused otherwise (hellos_rejected; the
 *   dialer's connection breaks, malformed).
 *
 * AUTHENTICATION (issue 37; options.auth).  The listener's name is no
 *   secret (abstract unix sockets have no permissions, and
 *   /proc/net/unix lists them): any process of the host, of any user, in
 *   the same network namespace can dial it.  With a bfo_auth every
 *   message of the exchange carries the handshake (bfo_auth.h; WIRE
 *   below), as TCP's (bfo_tcp.h): the acceptor checks the hello and its
 *   segment, answers it with the handshake's REPLY on that connection (a
 *   challenge: no doorbell with it), and takes the connection only at a
 *   CONFIRM that proves the dialer (the conn machine's claims and
 *   proofs): until then whatever the rail holds stays, and the hello's
 *   generation counts for nothing.  It then sends TAKEN with its doorbell
 *   (whoever holds a rank's eventfd can ring it, or drain the wake-ups
 *   meant for it: only a proven peer gets it).  Both report
 *   CONNECTED_PROVEN (the engine admits the rail with no probe,
 *   bfo_backend.h, UP AT THE HANDSHAKE; without a bfo_auth, CONNECTED:
 *   it probes).  The dialer reports it at a REPLY whose MAC proves the
 *   peer, sends its CONFIRM at
 *   once, and may write frames before TAKEN comes (the acceptor reads
 *   them once it took the connection; a doorbell due before TAKEN is rung
 *   when TAKEN comes).  A "dialing you" is MACed too.  Refused and logged
 *   (counted: hellos_rejected): an answer that does not prove its rank,
 *   or no CONFIRM within connect_timeout of the challenge (while the
 *   dialer's process exists, within 60 s: it may compute).  A peer whose
 *   public key auth lacks: options.auth_peer is asked for it; still
 *   unknown, the hello is refused and the dial fails, each logged.
 *   Without a bfo_auth (NULL) the hellos are those of before, taken at
 *   their word, and the first open in the process says so (log level 1);
 *   a rank with one and a rank without refuse each other's hellos,
 *   saying which.  Cost: the acceptor's CONNECTED comes one round trip
 *   later (at the CONFIRM), the dialer's as before; two more messages on
 *   the socket (CONFIRM, TAKEN); nothing per frame.  The handshake's
 *   state is allocated while it runs (the dialer's 124 bytes from the
 *   hello to the reply, the acceptor's from the hello to the proof), a
 *   pointer per (peer, rail) and per accept slot otherwise.
 *
 * LIFELINE.  No socket is kept per peer: the acceptor closes the
 *   connection's unix socket once its reply (or, authenticated, TAKEN) is
 *   sent, the dialer once it read it; from then on the peer's pidfd
 *   (SO_PEERPIDFD, Linux 6.5; else pidfd_open, Linux 5.3, of the pid
 *   SO_PEERCRED gave, taken while the peer spoke on the socket), in the
 *   epoll set, is readable when its process exits: the rail fails ("the
 *   peer's process exited").  A side that closes the connection (the engine
 *   disconnects or reconnects, a newer connection replaces it, a check
 *   fails, fini) sets its gone flag in the segment and rings the peer's
 *   doorbell, whether the peer sleeps or not; the peer's progress looks at
 *   the flag at every call (a load), its wait_fds after draining the
 *   doorbell, and the rail fails ("the peer closed the connection").
 *   Where pidfds are missing the socket stays open, silent, as the
 *   lifeline of before (EOF or an error: the rail fails).  So a rank holds,
 *   per connected peer and rail, the peer's doorbell and its pidfd, and no
 *   socket (at 64 ranks: 63 sockets fewer a rank).
 *
 * GENERATIONS.  Every connection has a segment of its own (a fresh memfd)
 *   and a generation number, its dialer's count of its dials to that
 *   (peer, rail), from 1 (each side counts its own: either may dial): in the segment header and in both hellos, checked
 *   by both sides, and in every record.  A re-admitted rail never reads
 *   stale slots: the old segment is unmapped by both sides, and a writer
 *   that has not noticed the end yet writes into memory nobody reads.
 *
 * WAKE-UP.  Each rank has one eventfd (its doorbell), given to every peer
 *   in the hellos.  wait_fds(t, fds, max) (max >= 2) sets this side's
 *   sleeping flag in every connection's segment, then (after a full
 *   fence) looks once more for work: frames, a moved tail or beat, room for
 *   a queued send; if there is any, or reads are under way, or posts wait
 *   to fail, or connect() requests wait, it clears the flags and returns
 *   -1.  Otherwise it returns 2 fds: the epoll set of the sockets and the
 *   doorbell.  A side that publishes a head (frames) or a tail (room and
 *   completions) then reads the peer's flag (after a full fence) and writes
 *   the peer's doorbell only when the flag is set, clearing it: one write
 *   per sleep, none while the peer polls.  The next progress clears this
 *   side's flags and looks at the sockets; the next wait_fds drains the
 *   doorbell (one read).  A progress that finds nothing to do makes no
 *   system call, except one epoll_wait per scan_ns.
 *
 * LARGE MESSAGES (cross-memory attach, GET only).  rail_caps is
 *   BFO_CAP_RDMA unless cfg->rdma is BFO_RDMA_PUT, or this process may not
 *   read its peers' memory (Yama's kernel.yama.ptrace_scope is 3, or 1 or 2
 *   without CAP_SYS_PTRACE: found at open, said at log level 2); then 0
 *   and the engine copies.  reg_mem gives *raddr = the buffer's address and
 *   no key (its rails' keys stay 0); dereg_mem does nothing.  post_read(peer, rail, local, len, raddr, ...)
 *   queues a read of the peer's virtual memory; progress moves it with
 *   process_vm_readv against the peer's pid, at most read_chunk bytes per
 *   connection per call (so one huge read does not starve the other
 *   rails), going on where the last call stopped, and completes it ok=1
 *   when every byte is in place.  A failed read (EPERM, ESRCH, EFAULT, or
 *   no progress at all) completes the read with ok=0 and fails the rail.
 *   post_write returns -1 (not supported: a late write into a buffer
 *   already handed back to its owner could not be revoked).  Read bytes
 *   are counted in bytes_tx (as verbs counts its RDMA bytes).  The peer's
 *   buffer stays readable after its dereg_mem (a read cannot be revoked,
 *   only its result ignored): the engine reads only while the sender's
 *   request waits for the reader's FIN, so that does not matter to it.
 *
 * FAULTS.  The peer dies: its pidfd is readable (LIFELINE; without
 *   pidfds its socket reports EOF), the rail fails at once.
 *   The peer computes (makes no call, reads no ring): a connection that
 *   waits on it looks every keepalive interval at the peer's pidfd
 *   (LIFELINE; kill(pid, 0) without pidfds) and,
 *   while the process exists, reports its host heard (sink host_heard,
 *   bfo_engine_host_heard): the engine counts it busy, not failed
 *   (docs/engine-design.md, "The failure detector").
 *   A slot corrupted: caught by its checksum (bfo_shm_test_corrupt_next
 *   flips a byte of the next record written, after its checksum), the
 *   connection is dropped.  Attach refused: bfo_shm_test_refuse_attach
 *   makes the next read on the rail fail as EPERM would.  fault(t, rail, 1)
 *   (the generic hook): every frame on the rail, out or in, vanishes
 *   silently from then on, as a cut cable would: nothing is written, what
 *   arrives is dropped unread (counted dropped_tx, dropped_rx), no tail,
 *   no beat, no heard, no read; the connection stays silent until it is
 *   replaced (the engine's probe times out, it disconnects), and no new
 *   connection can be made on the rail while the hook is on (dials vanish,
 *   hellos are dropped).  Each fault fails the rail; the engine fails over
 *   to its other rails, and its reconnect re-admits the rail with a new
 *   segment generation.
 *
 * MEMORY.  At open: the descriptor pool (256, doubled whenever every one
 *   is in use: the engine's max_ops + 16 would be 5 MiB under pml/bfo)
 *   and the connection table; no segment.  A segment is
 *   made by the dial, when the engine first connects that (peer, rail): a
 *   memfd of 1 KiB + 2 x ring (ftruncate), sealed (no shrinking, no
 *   growing) before the peer sees it; it goes when the connection closes.
 *   Its pages are reserved as they are first written: the dialer's
 *   header page at the dial, then each ring's pages as its writer first
 *   reaches them (madvise MADV_POPULATE_WRITE, Linux 5.14: one call per
 *   page first reached, none once a ring rewinds within pages it has), so
 *   that a host (or memory cgroup) short of memory fails the connection
 *   (at the dial: CONNECT_FAILED; at a ring write: the rail, RAIL_ERROR;
 *   each logged) rather than the process at a ring write (SIGBUS, or the
 *   OOM killer).  The whole segment reserved at the dial (fallocate, as
 *   before) cost 0.5 ms for 2 MiB here, the largest part of a
 *   connection's set-up (bench/shm_conn.c), and memory for pages a ring
 *   that rewinds never touches; a kernel without MADV_POPULATE_WRITE still
 *   does that.  The ring: ring_bytes, halved until the rings of every pair of
 *   ranks on this host (L of them, counted once from the peers' published
 *   addresses before the first dial: L (L - 1) rings per rail) fit in
 *   node_bytes, but not below two of the largest records (256 KiB with the
 *   engine's 64 KiB fragments).  So per host and rail at most
 *   max(node_bytes, L (L - 1) / 2 x (1 KiB + 2 x that floor)) when every
 *   pair is connected, and only what the connections made use: with the
 *   defaults, 1 MiB rings up to 16 ranks on a host, 256 KiB from 32
 *   (32 ranks: 256 MiB when all are connected, where every pair was
 *   reserved 2 MiB at open before: 1 GiB; 64 ranks: 1 GiB, was 4 GiB).
 *   The acceptor maps the ring the dialer chose (the hello says it).
 *   REWIND: the pages of a ring are mapped into both processes as they
 *   are first written or read, and PSS charges them; a writer whose ring
 *   the peer has emptied, with 4 KiB or more of it behind the head, starts
 *   over from its first byte (a WRAP record where the head is, written
 *   only when the next record fits before it), so a pair whose frames are
 *   taken as they come keeps 4 KiB + one record per direction mapped, ring
 *   0's first page shared with the header's (64 ranks, 6 alltoalls of 4 KiB:
 *   4 pages a connection, about 500 KiB of rings per rank, where a head
 *   that only went round had 1,888 KiB, growing with traffic to all of
 *   every ring),
 *   and more only as deep as the reader falls behind.  The reserve is
 *   what the rings wrote (shared memory of the host, Shmem), and so
 *   follows the same pages.
 *   Nothing is allocated per message: sends are copied straight from the
 *   engine's iov into the ring, frames are read where they lie.
 *
 * WIRE
 *   Address (bfo_addr, 56 bytes, little-endian): u32 magic
 *     BFO_SHM_ADDR_MAGIC, u16 version, u16 rail, u32 rank, u32 pid,
 *     u64 nonce, 16 bytes boot id, u64 FNV-1a of the host name, u64
 *     namespaces (BFO_SHM_ADDR_OFF_*).
 *   Hello (64 bytes, SOCK_SEQPACKET): u32 magic BFO_SHM_HELLO_MAGIC,
 *     u16 version (2), u16 kind (HELLO, HELLO_REPLY, HELLO_DIALING,
 *     and authenticated HELLO_CONFIRM, HELLO_TAKEN), u32
 *     rank, u32 rail, u32 size, u32 pid, u64 job, u64 generation (the
 *     reply and HELLO_DIALING: the one they answer), u64 segment bytes and
 *     u32 ring bytes (HELLO; 0 otherwise), u32 largest frame, u64 dialed
 *     (the sender's last dial of the (peer, rail), 0 none).
 *     HELLO carries the memfd and the dialer's doorbell, HELLO_REPLY the
 *     acceptor's doorbell (each checked: SAME UID).
 *   Authenticated (options.auth), every message is 128 bytes: the 64
 *     above, then the handshake's part (BFO_SHM_HELLO_AUTH_SIZE, zeros
 *     after): in HELLO its HELLO (40, bfo_auth_hs_hello), in HELLO_REPLY
 *     its REPLY (64) and no fd, in HELLO_DIALING HMAC("bfo shm tie v1",
 *     the hello's HELLO) under the pair key, in HELLO_CONFIRM (the
 *     dialer's, right after the reply; generation as in the hello) its
 *     CONFIRM (48), in HELLO_TAKEN nothing (the acceptor's doorbell goes
 *     with it).  The reply's dialed field is 0 (not under a MAC).
 *     docs/protocol.md, "Authentication".
 *   Segment: 1 KiB of header and control lines (BFO_SHM_SEG_HDR), then
 *     ring 0 (dialer to acceptor) and ring 1 (acceptor to dialer),
 *     ring_bytes each (version 3; version 2 had no gone flags, version 1
 *     a header of 4 KiB).
 *       0    u32 magic BFO_SHM_SEG_MAGIC, u32 version, u64 generation,
 *            u64 job, u32 dialer rank, u32 acceptor rank, u32 rail,
 *            u32 ring bytes, u64 segment bytes
 *       64   ring 0 head (its writer's line)
 *       128  ring 0 tail, beat (its reader's line)
 *       192  ring 1 head
 *       256  ring 1 tail, beat
 *       320  the dialer's sleeping flag (u32), 328 its gone flag (u32:
 *            it closed the connection; LIFELINE)
 *       384  the acceptor's sleeping flag (u32), 392 its gone flag
 *     Head and tail are u64 byte positions, stored with release and
 *     loaded with acquire semantics (native byte order: one host).
 *   Record (BFO_SHM_REC_HDR + frame, padded to BFO_SHM_REC_ALIGN): u32
 *     sequence, u32 frame length (0 for WRAP: the next record is at the
 *     ring's start; at the end, or anywhere to rewind), u16 kind (DATA, WRAP), u16
 *     generation & 0xffff, u32 CRC32C of the 12 bytes before it and the
 *     frame.
 */
#ifndef BFO_SHM_H
#define BFO_SHM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "bfo_engine.h"
#include "bfo_transport.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The transport's row for bfo_net's table (bfo_transport.h): claims shm and
 * shm:LABEL; opt is a bfo_shm_options. */
extern const bfo_transport_ops bfo_shm_transport;

#define BFO_SHM_ERR_SOCKET (-120)  /* a socket, epoll or eventfd call failed at open */
#define BFO_SHM_ERR_SEGMENT (-121) /* a ring segment could not be made or reserved */

/* Options (bfo_transport_args.opt; zero means the default). */
typedef struct bfo_shm_options {
    size_t ring_bytes;            /* bytes of ring per direction of a connection, rounded
                                   * up to a power of two (default 1 MiB; at least four
                                   * of the largest records) */
    size_t read_chunk;            /* process_vm_readv bytes per connection per progress
                                   * call (default 1 MiB) */
    uint64_t connect_timeout_ns;  /* hello exchange, or how long the accepting side
                                   * waits for the peer to dial (default 1 s) */
    uint64_t scan_ns;             /* a busy progress looks at the sockets (accepts,
                                   * hellos, lifelines, deadlines) this often
                                   * (default 100 us) */
    unsigned rail_bandwidth[BFO_MAX_RAILS]; /* MB/s per rail when the args give none
                                   * (default 0: 8,000, above TCP's guess) */
    int64_t node_bytes;           /* MEMORY: every ring of this host's ranks within this
                                   * per rail (default 256 MiB; < 0: ring_bytes alone) */
    /* AUTHENTICATION: the rank's key state from bfo_auth_init, with peers'
     * public keys set by bfo_auth_set_peer (bfo_net gives its own); NULL:
     * hellos taken at their word, as before (said once at open).  Not
     * owned: the caller frees it after fini. */
    struct bfo_auth *auth;
    /* Called when a hello comes from, or a dial goes to, a peer whose
     * public key auth does not hold yet: the embedding layer calls
     * bfo_auth_set_peer with the key from that peer's card and returns 0,
     * or nonzero when it cannot (the hello is refused, the dial fails,
     * each logged).  NULL: every peer's key must be set before it connects. */
    int (*auth_peer)(void *ctx, int peer);
    void *auth_peer_ctx;
    /* SAME UID: nonzero lets a process of another uid connect (its
     * hello taken, its listener dialed); 0 (the default): only this
     * process's effective uid, as SO_PEERCRED says, may. */
    int any_uid;
} bfo_shm_options;

/* What open() returns (through its void **). */
typedef struct bfo_shm bfo_shm;

/* ------------------------------------------------------------ the wire */

/* A published address (bfo_addr, BFO_SHM_ADDR_SIZE bytes, little-endian). */
#define BFO_SHM_ADDR_MAGIC 0x41534642u /* "BFSA" */
#define BFO_SHM_ADDR_VERSION 1
#define BFO_SHM_ADDR_SIZE 56
#define BFO_SHM_ADDR_OFF_RAIL 6    /* u16 */
#define BFO_SHM_ADDR_OFF_RANK 8    /* u32 */
#define BFO_SHM_ADDR_OFF_PID 12    /* u32 */
#define BFO_SHM_ADDR_OFF_NONCE 16  /* u64 */
#define BFO_SHM_ADDR_OFF_BOOT 24   /* 16 bytes: /proc/sys/kernel/random/boot_id */
#define BFO_SHM_ADDR_OFF_HOST 40   /* u64: FNV-1a of the host name */
#define BFO_SHM_ADDR_OFF_NS 48     /* u64: the network and pid namespaces */

/* The hello (one SOCK_SEQPACKET message each way). */
#define BFO_SHM_HELLO_MAGIC 0x48534642u /* "BFSH" */
#define BFO_SHM_HELLO_VERSION 2
#define BFO_SHM_HELLO_SIZE 64
/* DIALING: the lower rank's answer to a hello of the higher rank's that
 * lost the tie (both dialed): "I am dialing you" (no fds).  CONFIRM: the
 * dialer's proof, after the reply (AUTHENTICATION; no fds).  TAKEN: the
 * acceptor took the proven connection: its doorbell (AUTHENTICATION). */
enum bfo_shm_hello_kind {
    BFO_SHM_HELLO = 1,
    BFO_SHM_HELLO_REPLY = 2,
    BFO_SHM_HELLO_DIALING = 3,
    BFO_SHM_HELLO_CONFIRM = 4,
    BFO_SHM_HELLO_TAKEN = 5
};
/* AUTHENTICATION: every message of the exchange is this many bytes
 * longer (the handshake's part, bfo_auth.h), so BFO_SHM_HELLO_SIZE +
 * BFO_SHM_HELLO_AUTH_SIZE long, when the transport has a bfo_auth. */
#define BFO_SHM_HELLO_AUTH_SIZE 64

/* The segment: a header of 1 KiB (its control lines, room for more),
 * then one ring per direction; ring 0 starts in the header's page, which
 * a connection has mapped anyway (MEMORY, REWIND: one page fewer per
 * connection than a header page of its own; version 2). */
#define BFO_SHM_SEG_MAGIC 0x47534642u /* "BFSG" */
#define BFO_SHM_SEG_VERSION 3
#define BFO_SHM_SEG_HDR 1024
/* A record in a ring: a 16-byte header, then the frame, padded to 64. */
#define BFO_SHM_REC_HDR 16
#define BFO_SHM_REC_ALIGN 64
enum bfo_shm_rec_kind { BFO_SHM_REC_DATA = 1, BFO_SHM_REC_WRAP = 2 };

/* CRC32C (Castagnoli) of p[0..n), continuing from crc (0 to start), as
 * the records' checksum computes it (SSE4.2 when the CPU has it). */
uint32_t bfo_shm_crc32c(uint32_t crc, const void *p, size_t n);

/* "BFO_SHM_ERR_SEGMENT", "BFO_ERR_INVALID", ... */
const char *bfo_shm_errname(int rc);

/* ---------------------------------------------------------- test hooks */

/* The next data record written on rail (to any peer) has one byte flipped
 * after its checksum was computed: the receiver must catch it. */
void bfo_shm_test_corrupt_next(bfo_shm *t, int rail);

/* The next process_vm_readv on rail fails as if the kernel had refused
 * the attach (EPERM), without calling it. */
void bfo_shm_test_refuse_attach(bfo_shm *t, int rail);

/* This header has SAME UID (options.any_uid, bfo_shm_uid_allowed). */
#define BFO_SHM_SAME_UID 1

/* SAME UID's rule as data: 1 when a peer whose socket says peer_uid may
 * connect to a process of effective uid my_uid (options.any_uid: any_uid). */
int bfo_shm_uid_allowed(uint32_t peer_uid, uint32_t my_uid, int any_uid);

/* One connection as seen from this side. */
typedef struct bfo_shm_conn_info {
    int state;             /* 0 none, 1 hello sent (dialer), 2 up */
    uint64_t generation;   /* the segment's generation (0: none yet) */
    int pid;               /* the peer's process (SO_PEERCRED) */
    size_t ring_bytes;
    uint64_t tx_head;      /* bytes written into the ring to the peer */
    uint64_t tx_tail;      /* ... and consumed by the peer's engine, as last read */
    uint64_t rx_head;      /* bytes the peer wrote into the ring to this side */
    uint64_t rx_tail;      /* ... and taken by this side's engine */
    int in_flight;         /* sends written and not yet consumed */
    int queued;            /* sends waiting for ring space */
    int reads;             /* process_vm_readv reads in progress */
    int stalled;           /* this side's engine asked to offer a frame again */
    int poisoned;          /* the fault hook swallowed its traffic */
    int sleeping;          /* this side said it sleeps (wait_fds) */
    int peer_sleeping;     /* the peer said so */
    uint64_t wakeups;      /* eventfd writes to the peer */
} bfo_shm_conn_info;

/* Fills *out for (peer, rail); BFO_OK or BFO_ERR_INVALID. */
int bfo_shm_get_conn_info(const bfo_shm *t, int peer, int rail, bfo_shm_conn_info *out);

#ifdef __cplusplus
}
#endif
#endif /* BFO_SHM_H */
