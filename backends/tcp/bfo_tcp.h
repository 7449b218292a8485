// SPDX-License-Identifier: BSD-3-Clause
/* bfo_tcp.h - the TCP transport: bfo rails over TCP (IPv4 and IPv6).
 *
 * Part of bfo (see bfo.h).  A rail is a local address (127.0.0.2,
 * tcp:127.0.0.3, tcp:[::1], one address per NIC across machines).  Every
 * rank listens on each of its rails; there is one TCP connection per
 * (peer, rail).  Non-blocking sockets, one epoll set, no threads.
 *
 * ---------------------------------------------------------------------------
 * USE.  A transport (bfo_transport.h): bfo_net opens it through its row,
 *   bfo_tcp_transport, and is the only owner of the engine.  It owns no
 *   engine, reads no environment and does no wire-up: bfo_net publishes
 *   the address of each rail (bfo_tcp_address) and the dialer looks the
 *   peer's up through the sink when it dials (sink->lookup).  A test
 *   harness that runs its own engines (tests/tcp/reconnect_race.c) calls
 *   the same functions directly:
 *     bfo_tcp_open(&t, &args);        // args: rank, size, rails, cfg, sink, opt
 *     bfo_tcp_address(t, r, &addr);   // publish it; then
 *     bfo_tcp_start(t, job);          // the engine may call connect()
 *     bfo_tcp_backend(t, &be);        // post_send, connect, disconnect, ...
 *     loop: bfo_tcp_progress(t, 0); bfo_engine_progress(e, now);
 *   Completions, frames, rail events, every ACK and beacon heard and the
 *   peer's kernel heard (bfo_sink.h: completion, frame, rail_event, heard,
 *   host_heard) go to the sink.  Rail events are
 *   not filtered by rail state: the engine behind the sink ignores those
 *   its rail machine does not wait for.
 *   Sleeping: bfo_tcp_progress(t, 0) may read busy links directly, outside
 *   the epoll set (BUSY POLLING below); bfo_tcp_prepare_sleep sends every
 *   ack owed and puts those links back, so the epoll fd is readable
 *   whenever data waits.  It returns non-zero when the caller must not
 *   sleep (posts to complete, connect() requests to handle: run
 *   bfo_tcp_progress again).  The transport's wait_fds is exactly that.
 *
 * ADDRESSES.  A rail is `tcp:ADDR`, a bare ADDR, or `tcp:[IPV6]` / `[IPV6]`
 *   (a bare IPv6 address works too).  IPv4 and IPv6 rails mix freely; rail
 *   i of one rank must have the family of rail i of its peers.  The
 *   published address (opaque to everyone else): u8 family (4 or 6), u8 0,
 *   u16 port, then the 4 or 16 bytes of the address, then u16 the beacons'
 *   UDP port (BEACONS), all in network order: 10 or 22 bytes.  An address
 *   of 8 or 20 bytes (no beacon port: beacons off there, or a build from
 *   before them) is dialed as any other; that peer gets no beacons.
 *
 * OPTIONS (bfo_tcp_options; zero means the default)
 *   user_timeout_ms       TCP_USER_TIMEOUT on every connection (default
 *                         10000): data unacknowledged by the peer's kernel
 *                         for this long fails the connection.  A backstop:
 *                         the engine's probes find a dead rail first.  Not
 *                         less: the kernel counts a closed window's
 *                         unanswered probes against it (their answers may
 *                         be rate-limited away) and a process that computes
 *                         cannot switch it off (with 1 s, two ranks
 *                         computing at once lost connections in 2 of 8
 *                         runs of t14)
 *   connect_timeout_ns    dial + hello exchange, or how long the accepting
 *                         side waits for the peer to dial (default 1 s)
 *   ack_delay_ns          a standalone ack goes out this long after the
 *                         first unacknowledged frame (default 50 us), checked
 *                         every 20 us of busy polling, so up to 20 us later
 *   ack_frames, ack_bytes ... or once this many frames / bytes are
 *                         unacknowledged (default 8 frames, 256 KiB)
 *   log_level             -1 silent, 1 errors and dropped connections
 *                         (default: bfo_net's, from BFO_TCP_LOG), 2
 *                         connections, 3 debug; on stderr
 *   beacon_interval_ns    BEACONS below: one to each peer on each rail
 *                         whose connection has work, every this long
 *                         (default 10 ms); negative: no
 *                         beacons at all (no UDP socket, none published,
 *                         none sent or taken).  bfo_net: BFO_TCP_BEACON_MS
 *                         (milliseconds, or off) when the option is 0
 *   beacon_idle_ns        BEACONS below: a connection gets beacons for
 *                         this long after its last data frame either way
 *                         (or its start), and while it has work (default
 *                         1 s; negative: as long as it is up, as before).
 *                         bfo_net: BFO_TCP_BEACON_IDLE_MS (ms, or off)
 *   rx_idle_ns            MEMORY below: a connection idle this long gives
 *                         its receive buffer back (default 2 s; negative:
 *                         kept while connected).  bfo_net:
 *                         BFO_TCP_RX_IDLE_MS (ms, or off)
 *   notsent_lowat         TCP_NOTSENT_LOWAT on every connection, bytes
 *                         (default 2 MiB; negative: not set, the
 *                         kernel's net.ipv4.tcp_notsent_lowat, unlimited
 *                         by default).  The kernel then keeps at most about
 *                         this much written and not yet sent, so what waits
 *                         waits in user space, where a rail control frame
 *                         passes it (GUARANTEES 4); 4 MB of socket buffer
 *                         (tcp_wmem's maximum) is 1.6 s of a 20 Mbit/s rail.
 *                         EPOLLOUT comes once the unsent bytes fall below
 *                         half of it; link_flush writes until EAGAIN, and a
 *                         busy-polled link is written at every progress.
 *                         Why 2 MiB and not less: a sender descheduled
 *                         leaves the receiver only that much to take
 *                         (bfo_tcp.c, NOTSENT_LOWAT_DEFAULT).
 *                         bfo_net: BFO_TCP_NOTSENT_LOWAT (bytes, K or M, or
 *                         off) when the option is 0
 *
 *   port_min, port_max    PORTS below: the listeners' ports, for a
 *                         firewall (default: any, as the kernel picks).
 *                         bfo_net: BFO_TCP_PORT_MIN, BFO_TCP_PORT_MAX
 *   beacon_port_min,      the beacons' UDP ports (default: the listeners'
 *   beacon_port_max       range when it is set, else any).  bfo_net:
 *                         BFO_TCP_BEACON_PORT_MIN, BFO_TCP_BEACON_PORT_MAX
 *
 * PORTS.  Each rail's listener binds to the rail's address and a port of
 *   [port_min, port_max] (one of the two alone: the other is 1024 or
 *   65535); the beacon socket to one of [beacon_port_min, beacon_port_max]
 *   (or the listeners' range), the listener's own port number when it is
 *   in the range (bound at the rail's first connection: BEACONS), else one
 *   of the range at open.  Ranks on one host share a range: each tries every
 *   port of it, from port_min + rank modulo its size on (so that ranks
 *   numbered in a row find a free one at the first try), and a port in
 *   use is passed over; the listener sets SO_REUSEADDR, so that a port
 *   whose last connections wait in TIME_WAIT can be taken again at once
 *   (a port another socket listens on cannot).  A range needs as many
 *   ports as ranks on the host, times the rails that share one address;
 *   every port in use fails open (BFO_TCP_ERR_SOCKET) with a message that
 *   names the range, its size and the setting.  A dialed connection goes
 *   out from an ephemeral port (the kernel's, as any client's): a firewall
 *   lets the ranges in and what answers out.
 *
 * ERRORS: BFO_OK, BFO_ERR_INVALID (a bad argument or rail name),
 *   BFO_ERR_NO_MEMORY, BFO_TCP_ERR_SOCKET (a socket call failed at open).
 *   bfo_tcp_errname() names them and the BFO_ERR_* codes.
 *
 * ---------------------------------------------------------------------------
 * GUARANTEES (bfo_backend.h) AND HOW THEY ARE KEPT
 *   1. ok only when the peer has it: every data frame carries a
 *      per-connection sequence number; the receiver acknowledges
 *      cumulatively once the engine has taken the frame (bfo_engine_frame
 *      returned anything but BFO_ERR_AGAIN).  Acks ride on outgoing frames;
 *      a standalone ack goes out after ack_delay / ack_frames / ack_bytes, or
 *      at once when the process is about to block in epoll.  A completion
 *      with ok=1 is reported only for acknowledged frames.  What the engine
 *      posts on a connection while it takes that connection's frames (an
 *      ACK answering an RNDV, FRAGs answering an ACK) is written once they
 *      are taken, carrying their ack; a reply the engine sends to the same
 *      peer on another connection makes the ack go out at once, alone, and
 *      so does anything posted to a peer for the acks owed on its other
 *      connections (the peer may wait for them: a blocking send striped
 *      over two rails).
 *      Either way a request/response exchange (a rendezvous: three
 *      one-way trips) never waits for ack_delay.
 *   2, 3. When a connection fails (reset, EPIPE, EOF, TCP_USER_TIMEOUT,
 *      malformed framing, an engine parse error, a newer connection for the
 *      same (peer, rail), or the engine asking to reconnect), the backend
 *      reports BFO_EV_RAIL_ERROR for (peer, rail) and then completes every
 *      unacknowledged frame of it with ok=0.  Posts while a rail has no
 *      connection complete with ok=0 from the next progress.
 *   4. One TCP connection carries a rail: frames stay in order, except
 *      that a rail control frame (PROBE, PROBEACK, BROKEN) goes ahead of
 *      the data frames still queued in user space for the connection
 *      (after the frame being written, never inside it); sequence numbers
 *      are given as frames are written, so they stay consecutive on the
 *      wire.  The engine needs no order between a control frame and data.
 *      TCP_NOTSENT_LOWAT (OPTIONS) bounds the kernel's own queue of unsent
 *      bytes, where no control frame can pass.
 *   5. Liveness outside the data: the peer process is reported heard on a
 *      rail (sink->heard, bfo_engine_rail_heard) for every ACK frame and
 *      every beacon (BEACONS) that names the rail's live connection; the
 *      beacons are datagrams, so no byte queued on the connection and no
 *      retransmission of a lost segment holds them back.
 *
 * CONNECTIONS.  The engine calls connect(peer, rail) on one side or both,
 *   at init or at first use.  The side that asks dials (from its own rail
 *   address, so `ss -K src|dst ADDR` takes the whole rail down), the other
 *   accepts: every rank listens on every rail from open.  A HELLO each way
 *   names rank, rail and job; the dialer reports CONNECTED when the reply
 *   hello arrives, the acceptor when the hello arrives.  Both dialing at
 *   once: the lower rank's dial wins; it answers the higher rank's hello
 *   "I am dialing you" (a HELLO whose answer is BFO_TCP_A_DIALING) and
 *   closes it; the higher rank closes its own dial when that answer or
 *   the lower rank's hello comes, whichever first, and takes the hello:
 *   one connection, no failure.  The dialer's wait for the reply has no
 *   deadline once connect() completed (the peer's kernel accepted, so its
 *   host answers; the peer may be computing and reply when it next calls
 *   in): the connection keeps TCP keepalives on meanwhile (1 s), the
 *   peer's kernel answering them (TCP_INFO: nothing unacknowledged, no
 *   probe out) is told to the engine as the peer heard on the rail (every
 *   100 ms at most), and the wait ends only when the connection fails
 *   (reset, or unanswered for TCP_USER_TIMEOUT).  A dial that does not
 *   connect (no answer, refused) fails within connect_timeout.  A new connection
 *   for a (peer, rail) replaces the old one (RAIL_ERROR for the old first).
 *   connect() on a rail that still has a connection closes it and starts
 *   afresh, unless it is a dial the engine was not told about yet (it
 *   answers the request).  disconnect() (the engine mapped the rail out: its probe timed
 *   out, or the peer's notice came) drops the connection at the next
 *   progress, so what was in flight on it fails over at once rather than
 *   after the back-off.  connect() is
 *   handled in the next progress; an accepted connection whose hello
 *   arrives before that (at start-up the peer may dial first) answers it:
 *   it is kept, and whatever the rail had before closes as connect()
 *   would have it; the dialer's connection answers a pending connect() the
 *   same way when the reply hello comes.  Each hello carries the dialer's
 *   attempt number for the (peer, rail), from 1; the acceptor refuses a
 *   hello whose attempt is not above the last it took (a dial the peer gave
 *   up, read late behind a newer one, or one the peer's reply named as
 *   given up), so it never replaces the newer connection (counted:
 *   hellos_stale).  CONNECT_FAILED: refused, connect_timeout before
 *   connect() completed, the connection failing before the reply, or a
 *   lost tie whose winner did not dial within connect_timeout.  These rules are the conn machine's
 *   (spec/conn.rl, run by backends/bfo_link.h, the same for every
 *   transport): this backend binds its actions (bfo_tcp.c, tcp_act).
 *
 * AUTHENTICATION (issue 37; options.auth).  With a bfo_auth the hellos
 *   carry the handshake (bfo_auth.h; WIRE below): the dialer reports
 *   CONNECTED_PROVEN at a reply whose MAC proves the peer and writes its
 *   CONFIRM before any frame; the acceptor answers a hello with the reply
 *   on that connection and takes it (CONNECTED_PROVEN) only at a CONFIRM
 *   that proves the dialer (the conn machine's claims and proofs; the
 *   engine admits a proven connection with no probe, bfo_backend.h, UP AT
 *   THE HANDSHAKE; without a bfo_auth it hears CONNECTED and probes):
 *   until then whatever the rail
 *   holds stays, and the hello's attempt number counts for nothing.  An
 *   answer that does not prove its rank is refused and logged (counted:
 *   hellos_rejected), so is a CONFIRM not there within connect_timeout of
 *   the reply, or, while the dialer's kernel acknowledged the reply (the
 *   dialer may compute), within 60 s.  The lower rank's connection holds:
 *   up, it answers a higher rank's hello "I am dialing you" (the conn
 *   machine).  A peer whose public key auth lacks: options.auth_peer is
 *   asked for it (the embedding layer calls bfo_auth_set_peer from the
 *   peer's card); still unknown, the hello is refused and the dial fails,
 *   each logged with why.  Without a bfo_auth (NULL) the hellos are those
 *   of before, taken at their word, and the first open in the process says
 *   so (log level 1); a rank with one and a rank without refuse each other's hellos, saying
 *   which.  Cost: the acceptor's CONNECTED comes half a round trip later
 *   (with the dialer's first frames); nothing per frame; the handshake's
 *   state is allocated while a handshake runs (124 bytes a dial, 296 an
 *   accepted hello), a pointer per (peer, rail) and per accept slot
 *   otherwise.
 *
 * BACK-PRESSURE.  bfo_engine_frame returning BFO_ERR_AGAIN: the frame stays
 *   in the connection's buffer, the connection is not read until a later
 *   progress offers the frame again successfully.  A stall is not a
 *   failure, however long: the stalled side sends a keepalive (an ACK
 *   with BFO_TCP_F_STALLED) at least every probe_timeout / 4 (at most
 *   10 ms apart) and flags its data frames; the other side then turns
 *   TCP_USER_TIMEOUT off on that connection (the kernel counts zero-window
 *   probes against it) until a frame without the flag arrives.  Every ACK
 *   received is reported with bfo_engine_rail_heard, so the engine's
 *   heartbeat probe, queued behind the stalled frames, does not time out
 *   while keepalives arrive, and does once they stop.
 *
 * BEACONS (BFD-like liveness, RFC 5880).  Each rail has a UDP socket on the
 *   rail's own address, non-blocking, in the epoll set; its port is
 *   published with the rail's address: the TCP listener's number, the
 *   socket opened at the rail's first connection (a dial, or a connection
 *   accepted), before this side's first hello frame leaves, so an idle
 *   rank holds one socket per rail, its listener; no peer beacons to it
 *   before then (a peer beacons only over a connection up, which takes
 *   this side's hello, reply or CONFIRM).  Another socket on that port
 *   then (TCP's and UDP's ports are apart; a program's UDP socket may hold
 *   it): said at level 1, counted (beacon_binds_failed), tried again every
 *   second while the rail has a connection; meanwhile this rank sends no
 *   beacon on the rail and the peers' go elsewhere, so the engine's probes
 *   alone prove them, as on a rail without beacons.  Where
 *   beacon_port_min/max leave out the listener's number, the socket is
 *   opened at open as before, on a port of that range (PORTS).  Every
 *   beacon_interval (default 10 ms; checked with the
 *   periodic work of bfo_tcp_progress, so whoever runs the transport sends
 *   them: the caller, or bfo_net's progress thread) a beacon goes from
 *   that socket to every peer whose connection on the rail is up (the
 *   hellos exchanged: CONNECTED) and has work, at the peer's published
 *   beacon address.  Beacons follow the work: a connection has work while
 *   data frames wait for the peer's ack or to be written, a frame is partly
 *   read or either side is stalled, and for beacon_idle
 *   (OPTIONS, 1 s) after its last data frame either way or its start (the
 *   engine's PROBE, PROBEACK and BROKEN are no work: a heartbeat on an
 *   idle rail does not keep the beacons going).
 *   That is where a probe or an ACK frame may wait behind data or a lost
 *   segment and a datagram does not; an idle connection's probe has
 *   nothing in front of it, and a peer never connected has nothing to
 *   vouch for: neither gets any.  An idle rank sends none.
 *   A process that makes no progress call sends none: its beacons prove
 *   its process, as a PROBEACK does, and a process that computes is
 *   vouched for by its host instead (A PEER THAT COMPUTES).  A beacon
 *   received is the peer heard on the rail (sink->heard, as an ACK frame
 *   is) when it names this job, the peer's rank, this rail and the
 *   connection's attempt number (a beacon of an older connection, read
 *   late, is dropped), comes from the peer's published beacon address
 *   (its rail's IP and beacon port), and is fresh and authentic: with keys
 *   (the options' auth, bfo_auth.h: bfo_net gives its own), its MAC under
 *   the pair key of the peer and this rank verifies and its sequence
 *   number is new to the peer's replay window (above the highest taken,
 *   or one of the BFO_AUTH_WINDOW below it not taken yet), the MAC
 *   checked before the window moves (bfo_auth_beacon_verify), so that a
 *   forged beacon with a huge sequence number moves nothing and the real
 *   ones are still taken; without keys (a caller of the transport alone)
 *   its sequence number is above the last taken on that connection; and
 *   while that connection has carried
 *   something from the peer process within the last 3 s (or this side is
 *   stalled reading it), so that a connection stuck for longer, on a path
 *   that passes datagrams and not TCP, is left to the engine's probe and,
 *   behind it, TCP_USER_TIMEOUT.  Anything else is counted
 *   (beacons_dropped) and dropped, the fault hook's rails too.  Why: the
 *   engine's PROBE and the ACK frames ride the connection with the data:
 *   behind megabytes of socket buffer on a slow rail, or behind a lost
 *   segment (a retransmission timeout, 200 ms or more, against a probe
 *   timeout of 40 ms), nothing was heard in time and a rail that worked
 *   was mapped out, again and again (issue 18).  With 3% of a loopback
 *   rail's packets dropped, a 6 s stream of 1 MiB messages mapped the rail
 *   out 52 times in 8 runs without beacons (0 to 12 a run) and never in 9
 *   runs with them (tests/tcp/t19_lossy.sh); the lossy rail's messages
 *   wait for TCP's retransmissions instead (the longest pause in
 *   completions about 0.65 s).  A rail that drops everything loses its
 *   beacons too and is mapped out as before, 160 to 215 ms after the
 *   drop.  Counted per rail: beacons_sent, beacons_rcvd, beacons_dropped
 *   (its own counters, bfo_rail_stats.tp: BFO_TCP_BEACONS_*).
 *
 * A PEER THAT COMPUTES.  A link that waits on its peer (frames not
 *   acknowledged by the peer process) while the peer process has sent
 *   nothing for the keepalive interval looks at TCP_INFO (every 1 ms at
 *   most): the time of the last acknowledgement from the peer's kernel
 *   goes to the sink as the peer's host heard (host_heard,
 *   bfo_engine_host_heard), which keeps the engine's probe waiting while
 *   the peer's process is silent everywhere.  Once every byte sent is
 *   acknowledged it sends a nudge (an ACK frame, at most one per keepalive
 *   interval, counted nudges_tx) for the peer's kernel to acknowledge; the
 *   peer's process reads and ignores it later.  The peer's window closed
 *   (bytes queued, none in flight): the host counts as heard while the
 *   last window probe was answered, and TCP_USER_TIMEOUT is off on the
 *   connection until the peer sends again.  The fault hook's rails give
 *   no such evidence.  (docs/engine-design.md, "The failure detector".)
 *
 * BUSY POLLING.  bfo_tcp_progress(t, 0): a link that took a data frame in
 *   the last millisecond leaves the epoll set and is read directly at every
 *   such progress (no epoll_wait on the critical path); epoll still runs at
 *   least every 20 us for the other links (every 200 us while every link
 *   that is up is busy: only accepts, handshakes and beacons are left for
 *   it), and the periodic checks every 20 us (acks owed for ack_delay,
 *   connect deadlines, the engine's timers).  A
 *   small frame posted with nothing queued before it on its link is written
 *   at once, from the post (unless the engine posts it while it takes that
 *   link's frames: then at the end of them, with their ack; GUARANTEES 1).  bfo_tcp_progress(t, > 0) and
 *   bfo_tcp_prepare_sleep put every link back before anyone sleeps.
 *
 * MALFORMED INPUT.  Bad magic, unknown kind, length above the largest frame,
 *   out-of-sequence numbers, an ack beyond what was sent, a bad hello, or a
 *   frame the engine rejects (parse error, BFO_ERR_PROTOCOL; the reason
 *   names its type and length): the connection is dropped with a logged
 *   reason and counted (bfo_tcp_rail_stats.malformed); the process stays
 *   up.  A frame the engine drops as stale (BFO_ERR_STALE: it names no live
 *   request, as a duplicate after a failover does) is acknowledged and the
 *   connection kept (docs/engine-design.md, "Hostile input").
 *
 * RDMA.  TCP rails do not claim BFO_CAP_RDMA: post_write/post_read are
 *   NULL and the engine uses its copy protocols (eager, RNDV + FRAGs).
 *   Emulating RDMA over a socket would add a copy on the receiving side
 *   anyway and buys nothing.
 *
 * MEMORY.  At open: a pointer per (peer, rail) (8 bytes), its link (its
 *   state and the conn machine, no buffer: 680 bytes) made when the (peer,
 *   rail) is first needed (the engine's connect() or a post, or a hello
 *   from the peer) and kept; 16 slots for accepted connections, doubled
 *   when an accept finds every one taken (bfo_tp_pends_grow, up to 4 per
 *   peer and rail: they were all made at open, 448 bytes per peer and
 *   rail); and a pool of 256
 *   send descriptors (or the engine's max_ops, when smaller) that doubles
 *   when every one is in use, so a post never finds it empty, and keeps
 *   what it grew to (allocated only as the posts in flight reach a new
 *   high, never on the steady path).  A connection's receive buffer (two
 *   of the largest frames, and the state of a FRAG read in place) is
 *   allocated at its first read and given back when it closes, or when it
 *   has been idle for rx_idle (OPTIONS, 2 s: no data frame either way, the
 *   engine's probes and their answers aside, nothing buffered or read in
 *   place, not stalled): then to nothing; the next read takes 4 KiB (what
 *   the probes need), and the whole buffer only when a frame that does not
 *   fit comes.  One allocation per connection and idle period, none per
 *   frame (counters rx_buf_bytes, held now, and rx_buf_allocs).
 *
 * WIRE.  Every frame: a 24-byte header, little-endian:
 *     u32 len   bytes that follow (engine frame, hello body, 0 for ACK)
 *     u16 magic BFO_TCP_MAGIC    u8 kind (BFO_TCP_K_*)
 *     u8 flags  BFO_TCP_F_STALLED on DATA and ACK, else 0
 *     u64 seq   DATA: per connection, from 1; else 0
 *     u64 ack   every DATA frame up to this seq reached the engine
 *   HELLO body (48 bytes): u32 version (BFO_TCP_HELLO_VERSION, 3), u32 rank,
 *     u32 rail, u32 nranks, u64 job, u64 attempt (the dialer's; the reply
 *     and a tie answer echo it), u64 dialed (the sender's last dial of the
 *     (peer, rail), 0 none: in a reply, every hello of the replier's up to
 *     it is given up), u32 answer (BFO_TCP_A_*: 0 a hello or a reply, 1
 *     "I am dialing you", the answer to a hello that lost the tie; 2 the
 *     dialer's CONFIRM), u32 flags (BFO_TCP_HELLO_F_AUTH or 0).
 *   With BFO_TCP_HELLO_F_AUTH (options.auth given) the body goes on with
 *     64 bytes (BFO_TCP_HELLO_AUTH_SIZE): in a hello the handshake's HELLO
 *     (40, bfo_auth_hs_hello: nonce, rank, rail, size, u32 attempt, job),
 *     in the reply its REPLY (64: the acceptor's nonce, MAC over both), in
 *     a tie answer HMAC("bfo tcp tie v1", the hello's HELLO) under the
 *     pair key, in the dialer's CONFIRM frame (answer 2, sent right after
 *     the reply, before any DATA) its CONFIRM (48: MAC over HELLO and
 *     REPLY); zeros after.  docs/protocol.md, "Authentication".  The
 *     acceptor takes the connection at the CONFIRM, not at the hello (the
 *     conn machine's claims and proofs, bfo_link.h): a forged or replayed
 *     hello is answered and dropped, a live connection never replaced by
 *     one.  In a reply the dialed field is 0 (not covered by a MAC).
 *   BEACON (one UDP datagram of BFO_TCP_BEACON_SIZE, 72 bytes,
 *   little-endian; bfo_tcp_beacon_put):
 *     u16 magic BFO_TCP_BEACON_MAGIC (0xBF0B)   u8 version (2)   u8 0
 *     u32 rank     the sender's
 *     u32 rail     the rail it is sent on (the receiver's rail too)
 *     u32 0
 *     u64 job
 *     u64 attempt  the connection's attempt number (the dialer's, which
 *                  the acceptor took with its hello): the same at both ends
 *     u64 seq      with keys: per (sender, receiver), every rail and
 *                  connection, from 1 (bfo_auth_beacon_seq); without:
 *                  per connection, from 1
 *     u8 mac[32]   with keys: bfo_auth_beacon_mac under the pair key of
 *                  sender and receiver, over seq and the 40 bytes above
 *                  (HMAC-SHA-256, label "bfo beacon v1"); without: zero
 *
 * FAULT HOOK (tests).  bfo_tcp_fault_drop(t, rail, 1): every frame on that
 *   rail, out or in, vanishes silently from then on (as a cut cable or a
 *   firewall drop would: no error, no ack), and so do the rail's beacons.  A
 *   connection that lost a frame stays silent, beacons included, until it
 *   is replaced; new connections work again once the
 *   hook is off.  The engine finds out by its heartbeat probe timing out.
 */
#ifndef BFO_TCP_H
#define BFO_TCP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#include "bfo_engine.h"
#include "bfo_sink.h"
#include "bfo_transport.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BFO_TCP_ERR_SOCKET (-100)

#define BFO_TCP_MAGIC 0xBF07u
#define BFO_TCP_HDR_SIZE 24

/* Writes a frame header (BFO_TCP_HDR_SIZE bytes) at h; for tests and tools
 * that speak the wire format. */
void bfo_tcp_frame_header(uint8_t *h, uint32_t len, int kind, uint64_t seq, uint64_t ack);
#define BFO_TCP_HELLO_SIZE 48
#define BFO_TCP_HELLO_VERSION 3
/* AUTHENTICATION: a hello body whose flags say BFO_TCP_HELLO_F_AUTH is
 * followed by this many bytes of the handshake (bfo_auth.h), so is
 * BFO_TCP_HELLO_SIZE + BFO_TCP_HELLO_AUTH_SIZE long. */
#define BFO_TCP_HELLO_AUTH_SIZE 64
#define BFO_TCP_HELLO_F_AUTH 0x1u
/* A hello's answer field: a hello or its reply; the lower rank's "I am
 * dialing you" to a hello of the higher rank's that lost the tie; the
 * dialer's CONFIRM (authenticated hellos only). */
enum bfo_tcp_answer { BFO_TCP_A_HELLO = 0, BFO_TCP_A_DIALING = 1, BFO_TCP_A_CONFIRM = 2 };
enum bfo_tcp_kind { BFO_TCP_K_DATA = 1, BFO_TCP_K_ACK = 2, BFO_TCP_K_HELLO = 3 };
/* Header flags (DATA and ACK): the sender of the frame is stalled reading
 * this connection (back-pressure). */
#define BFO_TCP_F_STALLED 0x01

/* BEACONS: one datagram (WIRE above). */
#define BFO_TCP_BEACON_MAGIC 0xBF0Bu
#define BFO_TCP_BEACON_VERSION 2
#define BFO_TCP_BEACON_SIZE 72
#define BFO_TCP_BEACON_BODY 40 /* what the MAC covers; the MAC follows */
/* Writes a beacon (BFO_TCP_BEACON_SIZE bytes) at b, its MAC zero; for
 * tests that forge them (bfo_auth_beacon_mac over the first
 * BFO_TCP_BEACON_BODY bytes, at b + BFO_TCP_BEACON_BODY). */
void bfo_tcp_beacon_put(uint8_t *b, int rank, int rail, uint64_t job, uint64_t attempt, uint64_t seq);

/* The eager limit bfo_net gives the engine when every rail is TCP and
 * nobody sets one (the transport's row, eager_limit; bfo_net.h, EAGER
 * LIMIT): a rendezvous costs two small-frame trips more over TCP. */
#define BFO_TCP_EAGER_LIMIT (64 << 10)

typedef struct bfo_tcp_options {
    unsigned user_timeout_ms;
    uint64_t connect_timeout_ns;
    uint64_t ack_delay_ns;
    unsigned ack_frames;
    size_t ack_bytes;
    int log_level;
    int64_t beacon_interval_ns; /* BEACONS: 0 the default (10 ms), < 0 none */
    int notsent_lowat;          /* TCP_NOTSENT_LOWAT: 0 the default (2 MiB), < 0 not set */
    /* PORTS: the listeners' ports, and the beacons' (0, 0: the listeners'
     * range when that is set, else any); 0, 0: any port.  Negative (the
     * settings' "off"): as 0 */
    int port_min, port_max;
    int beacon_port_min, beacon_port_max;
    int64_t beacon_idle_ns;     /* BEACONS: 0 the default (1 s), < 0 as long as connected */
    int64_t rx_idle_ns;         /* MEMORY: 0 the default (2 s), < 0 kept while connected */
    /* AUTHENTICATION: the rank's key state from bfo_auth_init, with peers'
     * public keys set by bfo_auth_set_peer; NULL only when the embedding
     * layer passed none, which bfo_net warns about (this transport says so
     * too, once at open: its hellos then prove nothing).  Not owned: the
     * caller frees it after bfo_tcp_fini. */
    struct bfo_auth *auth;
    /* Called when a hello comes from, or a dial goes to, a peer whose
     * public key auth does not hold yet: the embedding layer calls
     * bfo_auth_set_peer with the key from that peer's card and returns 0,
     * or returns nonzero when it cannot (the hello is refused, the dial
     * fails, each logged with why; the peer's dial is retried by its
     * engine).  NULL: every peer's key must be set before it connects. */
    int (*auth_peer)(void *ctx, int peer);
    void *auth_peer_ctx;
} bfo_tcp_options;

/* One rail's counters: the common shape (bfo_transport.h).  DATA frames
 * written and taken by the engine, their engine bytes, standalone ACK
 * frames, connects, connections lost (reset, EOF, timeout, replaced) or
 * dropped for malformed input, completions, frames swallowed by the fault
 * hook, back-pressure and its keepalives, hellos refused. */
typedef bfo_rail_stats bfo_tcp_rail_stats;

/* TCP's own counters, their places in bfo_rail_stats.tp (named by its row:
 * bfo_net_rail_counter(n, rail, "beacons_sent"), `bfo stream --json`). */
enum {
    BFO_TCP_PLACED_FRAMES,   /* "placed_frames": FRAGs read straight into the receive's buffer */
    BFO_TCP_PLACED_DROPPED,  /* "placed_dropped": ... of them, dropped: the receive gone before the end */
    BFO_TCP_BEACONS_SENT,    /* "beacons_sent": liveness datagrams sent (BEACONS) */
    BFO_TCP_BEACONS_RCVD,    /* "beacons_rcvd": ... received for a live connection: the peer heard */
    BFO_TCP_BEACONS_DROPPED, /* "beacons_dropped": ... received and dropped */
    BFO_TCP_WRITES,          /* "writes": send calls that handed bytes to the kernel */
    BFO_TCP_READS,           /* "reads": read calls on the connections that returned bytes */
    BFO_TCP_RX_BUF_BYTES,    /* "rx_buf_bytes": bytes of receive buffers held now (MEMORY; not a count) */
    BFO_TCP_RX_BUF_ALLOCS,   /* "rx_buf_allocs": receive buffers allocated (MEMORY) */
    BFO_TCP_TIES_WON,        /* "ties_won": both dialed, this side's dial won (its "dialing you" sent) */
    BFO_TCP_TIES_LOST,       /* "ties_lost": both dialed, the peer's won ("dialing you" received) */
    BFO_TCP_HELLO_HEARD,     /* "hello_heard": a dialer waiting for the reply heard the peer's kernel */
    BFO_TCP_BEACON_BINDS_FAILED, /* "beacon_binds_failed": the beacon socket's published port could not be
                                  * bound at the rail's first connection (BEACONS; tried again every second) */
    BFO_TCP_NCOUNTERS
};

typedef struct bfo_tcp_stats {
    bfo_tcp_rail_stats rail[BFO_MAX_RAILS];
    uint64_t hellos_rejected; /* every rail's */
    uint64_t hellos_stale;
} bfo_tcp_stats;

typedef struct bfo_tcp bfo_tcp;

/* The transport's row for bfo_net (bfo_transport.h): claims tcp:ADDR and
 * bare addresses; opt is a bfo_tcp_options. */
extern const bfo_transport_ops bfo_tcp_transport;

/* Listens on every rail of args (its rails, rank, size, cfg: the engine's
 * configuration, which sizes the frames (and bounds the first send
 * descriptors) and whose
 * probe timeout sets the keepalive interval; sink: completion, frame and
 * rail_event required, heard and lookup optional, lookup needed to dial). */
int bfo_tcp_open(bfo_tcp **out, const bfo_transport_args *args);

/* This rank's published address for rail (after open). */
int bfo_tcp_address(const bfo_tcp *t, int rail, bfo_addr *out);

/* Every address is published: job goes into every hello. */
void bfo_tcp_start(bfo_tcp *t, uint64_t job);

/* Does the I/O and reports to the sink.  Waits up to timeout_ms (0: poll)
 * for something to happen.  Returns the number of events handled (>= 0). */
int bfo_tcp_progress(bfo_tcp *t, int timeout_ms);

/* The transport functions for an engine (post_send, connect, disconnect,
 * rail_caps, rail_bandwidth; ctx = t; no RDMA). */
void bfo_tcp_backend(bfo_tcp *t, bfo_backend *be);

/* The epoll set: readable when something waits for bfo_tcp_progress (after
 * bfo_tcp_prepare_sleep; a busy link may be outside it before that). */
int bfo_tcp_epoll_fd(const bfo_tcp *t);

/* The caller is about to sleep on bfo_tcp_epoll_fd (with other fds): sends
 * every ack owed and puts busy-polled links back into the epoll set.
 * Returns 0 when it may sleep, non-zero when there is work only
 * bfo_tcp_progress does (call it again instead of sleeping). */
int bfo_tcp_prepare_sleep(bfo_tcp *t);

const bfo_tcp_stats *bfo_tcp_get_stats(const bfo_tcp *t);

/* Test hook: silently drop every frame on rail (both directions), or stop. */
void bfo_tcp_fault_drop(bfo_tcp *t, int rail, int on);

/* One line per connection (state, queues, stall and busy-poll flags) and a
 * summary on f: for a tool that timed out (bfo_net_dump). */
void bfo_tcp_dump(const bfo_tcp *t, FILE *f);

/* Sends the acks still owed, closes every connection, frees everything. */
void bfo_tcp_fini(bfo_tcp *t);

/* Parses "tcp:ADDR", "ADDR", "tcp:[IPV6]" or "[IPV6]" into sa (port 0);
 * 0 on success. */
int bfo_tcp_parse_rail(const char *s, struct sockaddr_storage *sa);

/* "BFO_TCP_ERR_SOCKET", "BFO_ERR_INVALID", ... */
const char *bfo_tcp_errname(int rc);

#ifdef __cplusplus
}
#endif
#endif /* BFO_TCP_H */
