# SPDX-License-Identifier: BSD-3-Clause
%%{
# The rail: one rail (a NIC, an IB/RoCE port) as seen from one peer.
# Grammar only; the C binding is rail_binding.rl.
#
# A rail carries traffic only in UP.  It gets there through PROBING (a
# PROBE answered by a PROBEACK proves the rail works both ways), on first
# connection and again after every failure (re-admission, which the 2010
# design never had), or at once when the connection itself proved that
# (CONNECTED_PROVEN, below).  A rail fails by a local error, by an unanswered
# heartbeat probe, by silence, or by the peer's broken-rail notice
# (BROKEN), so both sides agree that it is out (the design's section 9); the
# side that saw the error sends the notice over another rail, the side that
# got the notice does not echo it.
#
# Failure detection in UP.  A heartbeat PROBE goes out (HEARTBEAT_DUE) when
# no probe is outstanding and the rail has heard nothing, or sent nothing,
# for the heartbeat interval: a busy sender whose peer went quiet probes too.
# The probe is timed out (PROBE_TIMED_OUT) when nothing at all was heard
# from the peer on the rail for the probe timeout since it went out: a
# frame, or the transport's word that the peer is alive (an acknowledgement,
# a keepalive while the peer applies back-pressure), keeps it waiting for
# its PROBEACK, so a peer that is alive but stalled is not failed.  A rail
# that drops everything is thus mapped out within about heartbeat + probe
# timeout.  A loss in one direction only is caught by the side that hears
# nothing, whose notice maps the rail out on the other side.
# SILENCE_DETECTED (nothing heard for the longer silence timeout) stays as
# a backstop, e.g. for a probe that the control budget kept from going out.
#
# What C keeps, not this machine: timers and their intervals (heartbeat,
# silence timeout, probe timeout, back-off), whether a heartbeat probe is
# outstanding (set when one goes out, cleared by its PROBEACK, on admission
# and when the rail leaves UP), the count of reconnect attempts, the rail's
# epoch (bumped at each admission; a BROKEN naming an older epoch is stale
# and dropped before it gets here), the count of UP rails per peer
# (PEER_UNREACHABLE for the requests), moving queued work off a rail that
# is mapped out, and whether the rail's BROKEN notice is owed: send_broken
# with no other rail UP to carry it marks it owed, and the admit of another
# rail sends it then, if this rail is still FAILED or RECONNECTING (the peer
# may still hold it UP).
#
# Connections on first use.  A rail starts DORMANT: no connection, and
# none needed yet; nothing is sent on it, nothing timed, nothing can fail.
# C feeds PEER_NEEDED to one DORMANT rail of a peer, the preferred one,
# when it first has a frame for that peer and no rail of it is UP (a send,
# a rendezvous's answer, a control message queued to it), and to the
# others only when one rail is not enough: a rail of the peer failed, is
# suspected or found ABSENT, or striping pays (docs/engine-design.md, "One
# rail first"); which rails is C's, the machine is the same for each.
# connect asks the transport to
# connect the rail (the result comes back as CONNECTED or CONNECT_FAILED,
# as for any attempt).  The peer may need this side first: its connection
# (CONNECTED) or its PROBE brings the rail to PROBING without this side
# asking.  An embedder that wants every rail connected at init
# (bfo_config.connect_at_init) has C feed PEER_NEEDED to every rail then.
# A peer is needed too when what must be known of it can only be learnt
# by a connection: with relay on, a rank that could relay to a peer no
# rail reaches (the route search asks it), and the destination of a frame
# a relay is asked to pass on; an ANY_SOURCE receive, once every peer
# ever needed is gone, needs the others (are they left?).
# What C keeps, not this machine: whether the peer was ever needed (its
# down_since: no grace runs for a peer never needed, spec/peer.rl).

# Up at the handshake (CONNECTED_PROVEN).  A transport that authenticates
# its connections (TCP and shm given a bfo_auth, spec/conn.rl's claims and
# proofs) reports a connection only once both ends proved themselves in its
# handshake over fresh nonces: the dialer when the acceptor's reply proved
# the peer and its own CONFIRM is written, the acceptor when that CONFIRM
# verified.  Each proof is a message of the peer's process, made for this
# connection and answered through it, so the handshake has shown what a
# PROBE and its PROBEACK would: the peer is alive and the connection works
# both ways.  Such a connection is admitted at once (admit: a new epoch,
# the notices owed, what waited for the peer posted), from every state
# that waits for or takes a connection (DORMANT, CONNECTING, PROBING,
# FAILED, RECONNECTING), with no probe round trip: under oversubscription
# that probe's answer waited for the peer to be scheduled, and timed out.
# Both ends admit once per connection, as with a probe, so their epochs
# stay in step.  A transport whose hellos are not authenticated (verbs;
# TCP and shm without a bfo_auth) reports CONNECTED and the rail is
# probed as before.  Where the connection is no news it is taken and
# ignored: UP and DEMOTED (a connection that replaces theirs comes after
# its RAIL_ERROR, in FAILED; one reported again changes nothing), ABSENT
# (the rail is never used for that peer), RETIRED (the peer is fenced or
# the attempts ran out: C drops the connection), LEFT (as CONNECTED: the
# connection only waits for its end).

# Rails per peer.  Every rank lists its own rails; rail i of one rank need
# not reach every peer (a peer with fewer NICs, a shared-memory rail and a
# peer on another host).  The transport layer says so with RAIL_ABSENT
# while the rail is being connected, and the rail rests in ABSENT: not a
# failure (no map-out, no notice, no back-off, no retry count), never used
# for that peer.  A peer whose every rail is ABSENT is unreachable after the
# grace period, as one whose rails all failed.

# Leaving (BYE).  A rank that finishes leaves (bfo_engine_leave): C feeds
# LEAVE_REQUESTED to every rail of every peer; an UP or PROBING rail first
# carries this side's BYE (send_bye: engine-owned, on that rail; C counts the
# BYEs until their completions are back, bfo_engine_left), and every rail
# that may have a connection is parted (part: the transport is told that
# the connection's end is no failure).  A BYE is about the peer, not the
# rail it came on: C feeds BYE_RCVD to every rail of the peer for its first
# BYE (the others, one per rail, are duplicates C drops).  Either way the
# rail rests in LEFT: no heartbeat, no probe timeout, no silence, no
# map-out, no notice, no reconnect, no retry count; a connection coming or
# going, a late completion, a notice or an error is taken and ignored; a
# PROBE is still answered (the peer may not have our BYE yet).  What the
# peer is owed and what it still sends are C's (per peer, not per rail):
# its requests fail (BFO_ERR_PEER_LEFT, or BFO_ERR_LEFT on the side that
# leaves), its messages up to the BYE's sequence are still taken, one
# beyond it is a protocol violation, and no grace period runs for it.  A
# rail that is ABSENT or RETIRED stays so.  A BYE that is lost leaves the
# peer to find the rails closing as it does today: failures, bounded by
# unreachable_grace.

# Slow is not dead (demotion).  A rail that still works but delivers far
# less than the peer's best rail is demoted: DEMOTED carries no data (it
# keeps what is already in flight on it, which completes there), answers
# and sends probes, is measured actively and fails as UP does.  C measures
# every rail's delivered rate from its completions (time is an argument)
# and feeds DEMOTION_DUE when the rate stayed under 1/8 of the best UP
# rail's for three samples over 50 ms at least, PROMOTION_DUE when three
# active measurements in a row (a plain PROBE and one padded with zeros
# sent back to back, the gap between their PROBEACKs timed; at most 64 KiB
# and 20 ms of the rail's own measured time every 100 ms) found it at 1/4
# of the best or better.  The gap between the two ratios, the counts and
# flap damping (a rail demoted again within 5 s of a promotion is measured
# half as often, up to 64 times less, with twice the padding, which a
# token-bucket shaper's burst then no longer covers) keep a rail from
# flapping.  The last
# rail UP is never demoted, and a DEMOTED rail is promoted at once when no
# rail of the peer is UP (a slow rail is better than none).  A standby rail
# (bfo_config.standby_rails) is demoted while an active rail is UP and
# promoted when none is: it carries probes only until an active rail fails
# or is demoted.  What C keeps, not this machine: the rates, the
# measurements, the counts, and the choice of rail for each fragment
# (docs/engine-design.md, "Striping by measured rate").  A DEMOTED rail's
# probe timeout is twice an UP rail's (its probes and the peer's beacons
# wait in a full queue, which a shaper drops them from).

# A peer reported dead (spec/peer.rl, fence): C feeds PEER_FENCED to
# every rail of it; a rail that may have a connection is retired (RETIRED,
# for good: the peer is fenced, C drops the connection), one that is
# ABSENT, RETIRED or LEFT stays so.

# Flow control rides on the rails: a CREDIT (the receiver's word on how
# many eager bytes this side may have sent to it in all) arrives on any
# rail, whatever the rail's state, and is taken (take_credit: C keeps the
# largest limit heard; the counter is the peer's, not the rail's).  A
# CREDIT is cumulative, so one lost with a failing rail is made good by the
# next, and the engine posts it again on another rail when it fails.

# Routes ride on the rails the same way (relay, bfo_config.relay; the peer
# machine's RELAYED): a RELAY (a frame to pass on, or one passed on to
# this rank), a RELAYACK (a relay's word on a frame it passed on) and a
# REACH (the ranks the peer has a live rail to) are taken in every state
# of the rail they came on: take_relay, take_relayack, take_reach; what
# they mean is the peer's, the route's, not the rail's.

  machine bfo_rail_grammar;
  include bfo_alphabet "bfo_alphabet.rl";

  # Completions of the rail's own control messages.  The BROKEN about this
  # rail travels on another rail but belongs to this one.
  # The peer's flow control, taken in every state (see above).
  credit = CREDIT_RCVD @take_credit;
  # Routes (see above), taken in every state.
  route = RELAY_RCVD @take_relay | RELAYACK_RCVD @take_relayack | REACH_RCVD @take_reach;

  rail_completion = PROBE_DELIVERED | PROBE_FAILED | PROBEACK_DELIVERED
                  | PROBEACK_FAILED | BROKEN_DELIVERED | BROKEN_FAILED;

  # Leaving (see above): the peer's BYE, or this side's leave.  A rail that
  # is connected (UP) or being probed carries this side's BYE first.
  parted = (LEAVE_REQUESTED | BYE_RCVD) @part;
  parted_bye = LEAVE_REQUESTED @send_bye @part | BYE_RCVD @part;

  Rail = (
    # No connection, none needed yet (see "Connections on first use"
    # above).  The engine's need (PEER_NEEDED) connects it; the peer's
    # connection (CONNECTED) or its PROBE (the transport took the peer's
    # connection before it said so) brings it to PROBING as in FAILED, a
    # proven one (CONNECTED_PROVEN) to UP.  The
    # rest is taken and ignored: the transport saying it does not reach the
    # peer, a late or stray word of a connection the engine never asked
    # for (an error, a failed dial of the peer's, a notice or a PROBEACK
    # about one), completions.  No timer runs here: a heartbeat, a probe
    # timeout, silence, a back-off or its end, demotion are never due.
    start: DORMANT: (
        PEER_NEEDED @connect -> CONNECTING
      | CONNECTED @send_probe -> PROBING
      | CONNECTED_PROVEN @admit -> UP
      | PROBE_RCVD @send_probeack @send_probe -> PROBING
      | RAIL_ABSENT -> ABSENT
      | CONNECT_FAILED -> DORMANT
      | RAIL_ERROR -> DORMANT
      | BROKEN_RCVD -> DORMANT
      | PROBEACK_RCVD -> DORMANT
      | rail_completion -> DORMANT
      | parted -> LEFT
      | PEER_FENCED @retire -> RETIRED
      | credit -> DORMANT
      | route -> DORMANT
    ),

    # The transport is connecting the rail to the peer; a proven
    # connection is UP at once.
    CONNECTING: (
        CONNECTED @send_probe -> PROBING
      | CONNECTED_PROVEN @admit -> UP
      | CONNECT_FAILED @schedule_reconnect -> FAILED
      | RAIL_ERROR @schedule_reconnect -> FAILED
      | BROKEN_RCVD @schedule_reconnect -> FAILED
      | PROBE_RCVD @send_probeack -> CONNECTING
      | RAIL_ABSENT -> ABSENT
      | parted -> LEFT
      | PEER_FENCED @retire -> RETIRED
      | credit -> CONNECTING
      | route -> CONNECTING
    ),

    # Connected; our PROBE is out.  The peer probes too and we answer.  A
    # proven connection (the peer's PROBE brought the rail here before the
    # transport reported it) admits it as the PROBEACK would.
    # Both ends connect, so a second attempt may fail while this connection
    # stands: CONNECT_FAILED changes nothing here or in UP.
    PROBING: (
        PROBEACK_RCVD @admit -> UP
      | CONNECTED_PROVEN @admit -> UP
      | PROBE_RCVD @send_probeack -> PROBING
      | CONNECT_FAILED -> PROBING
      | PROBE_DELIVERED -> PROBING
      | PROBEACK_DELIVERED -> PROBING
      | BROKEN_DELIVERED -> PROBING
      | BROKEN_FAILED -> PROBING
      | PROBE_FAILED @schedule_reconnect -> FAILED
      | PROBEACK_FAILED @schedule_reconnect -> FAILED
      | PROBE_TIMED_OUT @schedule_reconnect -> FAILED
      | RAIL_ERROR @schedule_reconnect -> FAILED
      | BROKEN_RCVD @schedule_reconnect -> FAILED
      | parted_bye -> LEFT
      | PEER_FENCED @retire -> RETIRED
      | credit -> PROBING
      | route -> PROBING
    ),

    # In use.  A PROBE goes out as heartbeat; its PROBEACK answers it (C
    # clears the outstanding mark).  A proven connection is no news here
    # (see "Up at the handshake").
    UP: (
        HEARTBEAT_DUE @send_probe -> UP
      | PROBE_RCVD @send_probeack -> UP
      | CONNECTED_PROVEN -> UP
      | PROBEACK_RCVD -> UP
      | CONNECT_FAILED -> UP
      | PROBE_DELIVERED -> UP
      | PROBEACK_DELIVERED -> UP
      | BROKEN_DELIVERED -> UP
      | BROKEN_FAILED -> UP
      | RAIL_ERROR @map_out @send_broken @schedule_reconnect -> FAILED
      | PROBE_FAILED @map_out @send_broken @schedule_reconnect -> FAILED
      | PROBEACK_FAILED @map_out @send_broken @schedule_reconnect -> FAILED
      | PROBE_TIMED_OUT @map_out @send_broken @schedule_reconnect -> FAILED
      | SILENCE_DETECTED @map_out @send_broken @schedule_reconnect -> FAILED
      | BROKEN_RCVD @map_out @schedule_reconnect -> FAILED
      | DEMOTION_DUE @demote -> DEMOTED
      | parted_bye -> LEFT
      | PEER_FENCED @retire -> RETIRED
      | credit -> UP
      | route -> UP
    ),

    # Connected, working, slow (or standby): probes only, no new data (see
    # "Slow is not dead" above).  It fails as UP does.
    DEMOTED: (
        PROMOTION_DUE @promote -> UP
      | HEARTBEAT_DUE @send_probe -> DEMOTED
      | PROBE_RCVD @send_probeack -> DEMOTED
      | CONNECTED_PROVEN -> DEMOTED
      | PROBEACK_RCVD -> DEMOTED
      | CONNECT_FAILED -> DEMOTED
      | PROBE_DELIVERED -> DEMOTED
      | PROBEACK_DELIVERED -> DEMOTED
      | BROKEN_DELIVERED -> DEMOTED
      | BROKEN_FAILED -> DEMOTED
      | RAIL_ERROR @map_out @send_broken @schedule_reconnect -> FAILED
      | PROBE_FAILED @map_out @send_broken @schedule_reconnect -> FAILED
      | PROBEACK_FAILED @map_out @send_broken @schedule_reconnect -> FAILED
      | PROBE_TIMED_OUT @map_out @send_broken @schedule_reconnect -> FAILED
      | SILENCE_DETECTED @map_out @send_broken @schedule_reconnect -> FAILED
      | BROKEN_RCVD @map_out @schedule_reconnect -> FAILED
      | parted_bye -> LEFT
      | PEER_FENCED @retire -> RETIRED
      | credit -> DEMOTED
      | route -> DEMOTED
    ),

    # Mapped out; waiting for the back-off to end.  The peer may reconnect
    # first: its connection or its PROBE brings the rail to PROBING, its
    # proven connection to UP.  A
    # PROBEACK answering a probe of the connection that failed is ignored.
    FAILED: (
        BACKOFF_EXPIRED @reconnect -> RECONNECTING
      | CONNECTED @send_probe -> PROBING
      | CONNECTED_PROVEN @admit -> UP
      | PROBE_RCVD @send_probeack @send_probe -> PROBING
      | RETRIES_EXHAUSTED @retire -> RETIRED
      | RAIL_ERROR -> FAILED
      | BROKEN_RCVD -> FAILED
      | PROBEACK_RCVD -> FAILED
      | BROKEN_FAILED @send_broken -> FAILED
      | (rail_completion - BROKEN_FAILED) -> FAILED
      | RAIL_ABSENT -> ABSENT
      | parted -> LEFT
      | PEER_FENCED @retire -> RETIRED
      | credit -> FAILED
      | route -> FAILED
    ),

    # The transport is connecting the rail again (a proven connection: UP).
    RECONNECTING: (
        CONNECTED @send_probe -> PROBING
      | CONNECTED_PROVEN @admit -> UP
      | CONNECT_FAILED @schedule_reconnect -> FAILED
      | RAIL_ERROR @schedule_reconnect -> FAILED
      | PROBE_RCVD @send_probeack -> RECONNECTING
      | PROBEACK_RCVD -> RECONNECTING
      | BROKEN_RCVD -> RECONNECTING
      | BROKEN_FAILED @send_broken -> RECONNECTING
      | (rail_completion - BROKEN_FAILED) -> RECONNECTING
      | RAIL_ABSENT -> ABSENT
      | parted -> LEFT
      | PEER_FENCED @retire -> RETIRED
      | credit -> RECONNECTING
      | route -> RECONNECTING
    ),

    # The rail does not reach this peer (see "Rails per peer" above).  What
    # is late or stray is taken and ignored: completions, errors, a notice,
    # a probe, the transport saying so again, a proven connection.
    ABSENT: (
        rail_completion -> ABSENT
      | RAIL_ERROR -> ABSENT
      | CONNECT_FAILED -> ABSENT
      | BROKEN_RCVD -> ABSENT
      | PROBE_RCVD -> ABSENT
      | PROBEACK_RCVD -> ABSENT
      | RAIL_ABSENT -> ABSENT
      | CONNECTED_PROVEN -> ABSENT
      | LEAVE_REQUESTED -> ABSENT
      | BYE_RCVD -> ABSENT
      | PEER_FENCED -> ABSENT
      | credit -> ABSENT
      | route -> ABSENT
    ),

    # Final: the rail is given up (the peer is gone, or the attempts ran
    # out).  Late completions are taken and ignored, and a proven
    # connection (C drops it).
    RETIRED: (
        rail_completion -> RETIRED
      | RAIL_ERROR -> RETIRED
      | BROKEN_RCVD -> RETIRED
      | CONNECTED_PROVEN -> RETIRED
      | LEAVE_REQUESTED -> RETIRED
      | BYE_RCVD -> RETIRED
      | PEER_FENCED -> RETIRED
      | credit -> RETIRED
      | route -> RETIRED
    ),

    # Final: the peer left (its BYE) or this side leaves (see "Leaving"
    # above).  Nothing here is a failure: the connection's end, a late
    # completion (of this side's BYE too), a notice, a connection the
    # transport made meanwhile are taken and ignored; a PROBE is answered.
    LEFT: (
        LEAVE_REQUESTED -> LEFT
      | BYE_RCVD -> LEFT
      | PROBE_RCVD @send_probeack -> LEFT
      | PROBEACK_RCVD -> LEFT
      | BROKEN_RCVD -> LEFT
      | CONNECTED -> LEFT
      | CONNECTED_PROVEN -> LEFT
      | CONNECT_FAILED -> LEFT
      | RAIL_ERROR -> LEFT
      | RAIL_ABSENT -> LEFT
      | rail_completion -> LEFT
      | BYE_DELIVERED -> LEFT
      | BYE_FAILED -> LEFT
      | PEER_FENCED -> LEFT
      | credit -> LEFT
      | route -> LEFT
    )
  );
}%%
