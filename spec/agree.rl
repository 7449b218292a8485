# SPDX-License-Identifier: BSD-3-Clause
%%{
# One rank's part in one agreement of a group (bfo_group_agree,
# bfo_group_shrink: include/fsm/bfo_group.h).  Grammar only; the C binding
# is agree_binding.rl, and the group code (bfo__agree_step) feeds it and
# binds the actions.
#
# The algorithm is flooding consensus on a perfect failure detector
# (Guerraoui and Rodrigues, "Introduction to Reliable and Secure
# Distributed Programming", algorithm 5.1).  The failure detector is the
# peer machine's FAILED (spec/peer.rl): a process reported dead by one
# entitled to say so, and fenced, so failures are fail-stop.  Every round,
# each rank sends every member what it knows (the AND of the values
# proposed, the union of the failed members seen) and waits until every
# member was heard in that round: its proposal came, or it failed.  A round
# in which the same members' proposals came as in the round before (no
# failure came to light) lets the rank decide what it knows; else it goes
# on to the next round with what it learnt.  A decision is sent to every
# member, and a rank that takes one decides it too and passes it on, so a
# decider that dies halfway through its sends cannot split the survivors.
# Every survivor returns the same value and the same set of failed members.
#
# What C keeps, not this machine: the round number, the members heard in
# this round and the last, the value and failed set known, the messages of
# a later round held until this rank gets there, the instance number that
# tells one agreement of the group from the next.  A member's message of
# a later round comes at most one round early (a member moves on only
# once it heard this rank), and a decision comes before any message of the
# next agreement (a member sends its decision to everyone before it
# returns; the engine keeps a sender's messages in order).
#
# A member that is neither heard nor reported dead, and that no rail
# reaches (MEMBER_LOST), is a partition or this rank's own fencing: no
# safe decision is possible (the member may be deciding apart), so the
# agreement ends BFO_ERR_PEER_UNREACHABLE, and the process must end itself
# (its launcher then reports it dead to the others, who go on without it):
# fail-stop restored.  ABORTED is for good.

  machine bfo_agree_grammar;
  include bfo_agree_alphabet "bfo_agree_alphabet.rl";

  Agree = (
    # No agreement running: before the first, or once one decided (its
    # result is the caller's; the next may start).
    start: IDLE: (
        AGREE_CALLED @send_round -> ROUND
    ),

    # This round's proposal is out; waiting to hear every member.
    ROUND: (
        ROUND_SAME @decide @send_decision -> DECIDING
      | ROUND_CHANGED @next_round @send_round -> ROUND
      | DECISION_RCVD @adopt @send_decision -> DECIDING
      | MEMBER_LOST -> ABORTING
    ),

    # Decided; the decision is going to every member.  What comes now of
    # this agreement is late, and dropped by C.
    DECIDING: (
        SENDS_DONE @finish -> IDLE
      | MEMBER_LOST -> DECIDING
    ),

    # A member is lost: the sends in flight come back first (their buffers
    # are the group's), then the agreement ends with an error.
    ABORTING: (
        SENDS_DONE @abort -> ABORTED
      | DECISION_RCVD -> ABORTING
      | MEMBER_LOST -> ABORTING
    ),

    # Final: this process cannot agree with the group any more.
    ABORTED: (
        MEMBER_LOST -> ABORTED
    )
  );
}%%
