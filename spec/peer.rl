# SPDX-License-Identifier: BSD-3-Clause
%%{
# The peer: one other process of the job, as this rank sees it.  Grammar
# only; the C binding is peer_binding.rl, and the engine
# (include/fsm/bfo_engine.h, bfo__peer_step) feeds it and binds the
# actions.
#
# It tells apart what the rails cannot: no rail reaches the peer *now*
# (DOWN: the rail machines are reconnecting, and unreachable_grace_ns
# runs), no rail came back in time (UNREACHABLE: given up, for good), the
# peer left in good order (its BYE: LEAVING while messages it sent before
# may still come, then LEFT), this rank left (PARTED), and the peer's
# process is dead (FAILED).  With relay on (bfo_config.relay), a peer that
# no rail reaches but a third rank does is RELAYED: its frames go through
# that rank (one hop), and the grace does not run while a route is left.
#
# Who may say a process is dead.  Not the rails: a partition, a stalled
# process and a dead one look alike from here, and a grace that runs out
# says only UNREACHABLE.  DEATH_REPORTED comes from bfo_peer_failed, which
# the layer calls on the word of one entitled to say so: the launcher that
# saw the process exit (`bfo run` waits on its children), PMIx's event
# notification under mpirun, or the survivors' agreement.  Failures are
# fail-stop: a FAILED peer is fenced (fence: every connection to it
# dropped, its frames refused from then on, no reconnect), so a process
# declared dead that is in fact alive hears nothing more from this rank,
# fails its own operations toward it, and cannot slip a message of the old
# sequence space in later.  FAILED is for good.
#
# What fails, and with what.  give_up fails every request of the peer not
# complete (BFO_ERR_PEER_UNREACHABLE, or BFO_ERR_PROC_FAILED when the
# machine is in FAILED: C reads the state), the receives posted for it and
# the operations waiting for a rail to it.  part, on its BYE, fails what
# it no longer answers (sends to it, receives it matched); receives naming
# it wait for what it sent before (close_out fails them, BFO_ERR_PEER_LEFT,
# once that came or the grace ran out).  fence also records the failure
# in order for bfo_failure_ack and bfo_failure_get_acked, and ends every
# posted ANY_SOURCE receive with BFO_ERR_PROC_FAILED_PENDING until the
# failure is acknowledged.
#
# A peer that left in good order and then exits is no failure:
# DEATH_REPORTED in LEAVING or LEFT changes nothing (the launcher reports
# every exit it sees).  Neither is it after this rank left (PARTED).
#
# Rails coming and going after the peer is gone (LEAVING, LEFT, PARTED,
# UNREACHABLE, FAILED) change nothing: RAIL_ADMITTED and LAST_RAIL_LOST
# are taken and ignored.  Frames of an UNREACHABLE or FAILED peer are
# refused before they are parsed, so BYE_RCVD never comes in those states.
#
# What C keeps, not this machine: when the last live rail went (down_since;
# the grace is timed from it), the BYE's sequence and when it came
# (left_seq, left_at), the failure's place in the order failures were
# reported, the count acknowledged; and the flags the hot paths test
# (bfo_peer.unreachable, .left), which bfo__peer_step derives from the
# state after every step.

  machine bfo_peer_grammar;
  include bfo_peer_alphabet "bfo_peer_alphabet.rl";

  # Rails of a peer that is gone, and a report of the death of one that
  # left in good order: taken, ignored.
  rails = RAIL_ADMITTED | LAST_RAIL_LOST;

  Peer = (
    # The engine has not said yet whose entry this is.
    start: NEW: (
        SELF_CHOSEN -> SELF
      | PEER_CHOSEN -> DOWN
    ),

    # This rank itself: no rails, never given up; gone when it leaves.
    SELF: (
        LEAVE_REQUESTED -> PARTED
    ),

    # No rail reaches the peer now (at start, or since its last live rail
    # was mapped out); the rails reconnect and unreachable_grace_ns runs.
    DOWN: (
        RAIL_ADMITTED -> REACHABLE
      | ROUTE_FOUND @take_route -> RELAYED
      | GRACE_EXPIRED @give_up -> UNREACHABLE
      | BYE_RCVD @part -> LEAVING
      | LEAVE_REQUESTED -> PARTED
      | DEATH_REPORTED @give_up @fence -> FAILED
    ),

    # No rail reaches it, but a third rank does (relay on): what waited for
    # a rail goes through that rank, and nothing is given up.  Only a peer
    # once needed gets a route (one never needed is tried directly first:
    # connections on first use); the ranks that could relay may never have
    # been needed, and the route search needs them (C: bfo__relay_ask).  A rail
    # admitted takes it back to the direct rails; the route lost, the grace
    # starts (report_route_lost: counted, said, timed from now).
    RELAYED: (
        RAIL_ADMITTED -> REACHABLE
      | ROUTE_FOUND -> RELAYED
      | ROUTE_LOST @report_route_lost -> DOWN
      | BYE_RCVD @part -> LEAVING
      | LEAVE_REQUESTED -> PARTED
      | DEATH_REPORTED @give_up @fence -> FAILED
    ),
    # A rail of it is UP or DEMOTED.
    REACHABLE: (
        RAIL_ADMITTED -> REACHABLE
      | LAST_RAIL_LOST -> DOWN
      | BYE_RCVD @part -> LEAVING
      | LEAVE_REQUESTED -> PARTED
      | DEATH_REPORTED @give_up @fence -> FAILED
    ),

    # No rail came back within the grace: given up, for good.  Whether it
    # is dead is not known; a report of its death says so (its requests
    # failed already).
    UNREACHABLE: (
        rails -> UNREACHABLE
      | LEAVE_REQUESTED -> UNREACHABLE
      | DEATH_REPORTED @fence -> FAILED
    ),

    # Its BYE came; messages it sent before may still come (rails reorder).
    LEAVING: (
        OWED_RCVD @close_out -> LEFT
      | GRACE_EXPIRED @close_out -> LEFT
      | BYE_RCVD -> LEAVING
      | rails -> LEAVING
      | LEAVE_REQUESTED -> LEAVING
      | DEATH_REPORTED -> LEAVING
    ),

    # It left, and nothing more comes from it.
    LEFT: (
        BYE_RCVD -> LEFT
      | rails -> LEFT
      | LEAVE_REQUESTED -> LEFT
      | DEATH_REPORTED -> LEFT
    ),

    # This rank left first: nothing goes out; a BYE of the peer is still
    # taken (bfo_peer_left says so), nothing of it is waited for.
    PARTED: (
        BYE_RCVD @part -> LEAVING
      | rails -> PARTED
      | LEAVE_REQUESTED -> PARTED
      | DEATH_REPORTED -> PARTED
    ),

    # Its process is dead: fenced, for good.
    FAILED: (
        rails -> FAILED
      | LEAVE_REQUESTED -> FAILED
      | DEATH_REPORTED -> FAILED
    )
  );
}%%
