# SPDX-License-Identifier: BSD-3-Clause
%%{
# The send request: one message from this rank to one peer, from the moment
# the engine chooses a protocol until the message is delivered or the peer is
# unreachable.  Grammar only (states, events, transitions); the C binding is
# send_binding.rl.  States say where the request is; events are facts;
# actions are verbs the engine carries out, in the order written.
#
# What C keeps, not this machine (the machine sees facts):
#   - the count of operations posted for this request whose completion is
#     outstanding.  When it is zero the engine feeds DRAINED, or ALL_DELIVERED
#     when every byte is also delivered, to a machine that has a transition
#     for it (bfo_send_accepts()).  A request ends only with nothing in flight.
#   - the restart sequence (rseq, 16-bit serial arithmetic).  post_notify
#     bumps it; restart bumps it again.  Messages from an older rseq, and
#     messages naming a recycled request (handle generation), are dropped
#     before they reach the machine.  A reposted message keeps its rseq.
#   - the choice of protocol and rail; PEER_UNREACHABLE when no rail is left.
#
# Changes from the 2010 design, on purpose:
#   - RESTART_ACKED + NOTIFY_FAILED restarts at once: the RESTARTACK proves
#     that the NOTIFY arrived, so there is nothing to repost.
#   - ERROR_DRAINING + ALL_DELIVERED completes: every byte was delivered and
#     taken by the receiver, so no restart is needed.
#   - PEER_UNREACHABLE leads through UNREACHABLE_DRAINING: the request fails
#     only after its operations have completed (their errors come, the
#     transport guarantees it), so the caller may reuse the buffer at once.
#     A completion that proves delivery there still completes the request.

  machine bfo_send_grammar;
  include bfo_alphabet "bfo_alphabet.rl";

  # Completions a rendezvous may have in flight when something fails (a
  # NOTIFY is never in flight then: the dance waits for its completion).
  rndv_completion = RNDV_DELIVERED | RNDV_FAILED | RGET_DELIVERED | RGET_FAILED
                  | FRAG_DELIVERED | FRAG_FAILED | WRITE_COMPLETED | WRITE_FAILED
                  | FIN_DELIVERED | FIN_FAILED;

  # Completions of everything a send request may have in flight.
  send_completion = MATCH_DELIVERED | MATCH_FAILED | rndv_completion
                  | NOTIFY_DELIVERED | NOTIFY_FAILED;

  # What the receiver may still say about a message this side gave up on.
  late_reply = ACK_RCVD | PUT_RCVD | FIN_RCVD | FIN_DUP_RCVD | RECVERRNOTIFY_RCVD
             | RESTARTACK_RCVD | RESTARTNACK_RCVD;

  SendRequest = (
    # isend was called; the engine has not chosen a protocol yet.
    start: IDLE: (
        EAGER_CHOSEN @post_match -> MATCH_SENT
      | RNDV_CHOSEN @post_rndv -> RNDV_SENT
      | RGET_CHOSEN @post_rget -> RGET_SENT
      | PEER_UNREACHABLE -> UNREACHABLE_DRAINING
    ),

    # Eager: the whole message is in one MATCH.  A failed MATCH is sent
    # again; if the first one did arrive the receiver's sequence window
    # drops the copy.
    MATCH_SENT: (
        MATCH_DELIVERED @complete -> COMPLETE
      | MATCH_FAILED @post_match -> MATCH_SENT
      | CANCEL_REQUESTED @withdraw -> CANCEL_SENT
      | PEER_UNREACHABLE -> UNREACHABLE_DRAINING
    ),

    # Cancelled while its first message (MATCH, RNDV or RGET) still waited
    # for a rail, so nothing of it left: that message became an empty MATCH
    # with the CANCEL flag, which the receiver takes for its sequence number
    # and matches to nothing (the sequence has no hole).  Complete, as
    # cancelled, once it is delivered; a failed one is sent again (a copy
    # that did arrive is a duplicate there).
    CANCEL_SENT: (
        MATCH_DELIVERED @complete_cancelled -> CANCELLED
      | MATCH_FAILED @post_match -> CANCEL_SENT
      | PEER_UNREACHABLE -> CANCEL_DRAINING
    ),

    # Cancelled, and the peer was given up: nothing of the message reached
    # it either way.  Cancelled once the empty MATCH's completion is back.
    CANCEL_DRAINING: (
        MATCH_DELIVERED @complete_cancelled -> CANCELLED
      | MATCH_FAILED -> CANCEL_DRAINING
      | PEER_UNREACHABLE -> CANCEL_DRAINING
      | DRAINED @complete_cancelled -> CANCELLED
    ),

    # Rendezvous: RNDV (with the first bytes) is out; the receiver answers
    # ACK (send the rest by copy) or PUT (RDMA-write it here).  A failed
    # RNDV is sent again with the same rseq; a duplicate is dropped by the
    # receiver's sequence window.
    RNDV_SENT: (
        RNDV_DELIVERED -> RNDV_SENT
      | RNDV_FAILED @post_rndv -> RNDV_SENT
      | CANCEL_REQUESTED @withdraw -> CANCEL_SENT
      | ACK_RCVD @send_frags -> FRAGS_SENDING
      | PUT_RCVD @post_write -> PUTS_SERVING
      | RECVERRNOTIFY_RCVD @note_error -> ERROR_DRAINING
      | PEER_UNREACHABLE -> UNREACHABLE_DRAINING
    ),

    # Copy protocol: FRAGs carry the bytes from the ACK's offset on.  The
    # ACK may come before the RNDV's (or, when the receiver fell back to
    # copy, the RGET's) own completion; once it is here a failed RNDV or
    # RGET did arrive.
    FRAGS_SENDING: (
        RNDV_DELIVERED -> FRAGS_SENDING
      | RNDV_FAILED -> FRAGS_SENDING
      | RGET_DELIVERED -> FRAGS_SENDING
      | RGET_FAILED -> FRAGS_SENDING
      | FRAG_DELIVERED @send_frags -> FRAGS_SENDING
      | FRAG_FAILED @note_error -> ERROR_DRAINING
      | RECVERRNOTIFY_RCVD @note_error -> ERROR_DRAINING
      | ALL_DELIVERED @complete -> COMPLETE
      | PEER_UNREACHABLE -> UNREACHABLE_DRAINING
    ),

    # PUT protocol: for each PUT, RDMA-write the range, then FIN it.  A
    # failed FIN is sent again (the receiver drops a duplicate by slot).
    PUTS_SERVING: (
        RNDV_DELIVERED -> PUTS_SERVING
      | RNDV_FAILED -> PUTS_SERVING
      | PUT_RCVD @post_write -> PUTS_SERVING
      | WRITE_COMPLETED @post_fin -> PUTS_SERVING
      | WRITE_FAILED @note_error -> ERROR_DRAINING
      | FIN_DELIVERED -> PUTS_SERVING
      | FIN_FAILED @post_fin -> PUTS_SERVING
      | RECVERRNOTIFY_RCVD @note_error -> ERROR_DRAINING
      | ALL_DELIVERED @complete -> COMPLETE
      | PEER_UNREACHABLE -> UNREACHABLE_DRAINING
    ),

    # GET protocol: RGET says where to read; the receiver reads and FINs.
    # A failed RGET is sent again with the same rseq.  The receiver may
    # fall back to copy (ACK) when it cannot read.
    RGET_SENT: (
        RGET_DELIVERED -> RGET_SENT
      | RGET_FAILED @post_rget -> RGET_SENT
      | CANCEL_REQUESTED @withdraw -> CANCEL_SENT
      | FIN_RCVD @note_fin -> RGET_SENT
      | FIN_DUP_RCVD @drop -> RGET_SENT
      | ACK_RCVD @send_frags -> FRAGS_SENDING
      | RECVERRNOTIFY_RCVD @note_error -> ERROR_DRAINING
      | ALL_DELIVERED @complete -> COMPLETE
      | PEER_UNREACHABLE -> UNREACHABLE_DRAINING
    ),

    # Something failed: post nothing new, let every outstanding completion
    # come back, drop what the receiver says meanwhile; then NOTIFY.
    ERROR_DRAINING: (
        rndv_completion -> ERROR_DRAINING
      | ACK_RCVD @drop -> ERROR_DRAINING
      | PUT_RCVD @drop -> ERROR_DRAINING
      | FIN_RCVD @drop -> ERROR_DRAINING
      | FIN_DUP_RCVD @drop -> ERROR_DRAINING
      | RECVERRNOTIFY_RCVD @drop -> ERROR_DRAINING
      | DRAINED @post_notify -> NOTIFY_SENT
      | ALL_DELIVERED @complete -> COMPLETE
      | PEER_UNREACHABLE -> UNREACHABLE_DRAINING
    ),

    # The restart dance: the restart needs both the NOTIFY's completion and
    # the receiver's RESTARTACK, in either order.  A failed NOTIFY is sent
    # again with the same rseq (the receiver drops a duplicate).
    NOTIFY_SENT: (
        NOTIFY_DELIVERED -> NOTIFY_LANDED
      | NOTIFY_FAILED @repost_notify -> NOTIFY_SENT
      | RESTARTACK_RCVD -> RESTART_ACKED
      | RESTARTNACK_RCVD -> RESTART_NACKED
      | PEER_UNREACHABLE -> UNREACHABLE_DRAINING
    ),

    # NOTIFY delivered; waiting for the receiver's answer.
    NOTIFY_LANDED: (
        RESTARTACK_RCVD @restart -> RESTARTED
      | RESTARTNACK_RCVD @complete -> COMPLETE
      | PEER_UNREACHABLE -> UNREACHABLE_DRAINING
    ),

    # RESTARTACK here; waiting for the NOTIFY's own completion.
    RESTART_ACKED: (
        NOTIFY_DELIVERED @restart -> RESTARTED
      | NOTIFY_FAILED @restart -> RESTARTED
      | PEER_UNREACHABLE -> UNREACHABLE_DRAINING
    ),

    # The receiver already had the whole message: complete once the
    # NOTIFY's completion is back (whatever it says).
    RESTART_NACKED: (
        NOTIFY_DELIVERED @complete -> COMPLETE
      | NOTIFY_FAILED @complete -> COMPLETE
      | PEER_UNREACHABLE -> RESTART_NACKED
    ),

    # Reset to offset 0 with a new rseq; the engine chooses a protocol for
    # the surviving rails and the restarted RNDV/RGET carries the RESTART
    # flag and the receiver's handle.
    RESTARTED: (
        RNDV_CHOSEN @post_rndv -> RNDV_SENT
      | RGET_CHOSEN @post_rget -> RGET_SENT
      | PEER_UNREACHABLE -> UNREACHABLE_DRAINING
    ),

    # No rail to the peer: wait for every outstanding completion, then fail.
    UNREACHABLE_DRAINING: (
        MATCH_DELIVERED @complete -> COMPLETE
      | (send_completion - MATCH_DELIVERED) -> UNREACHABLE_DRAINING
      | late_reply @drop -> UNREACHABLE_DRAINING
      | PEER_UNREACHABLE -> UNREACHABLE_DRAINING
      | ALL_DELIVERED @complete -> COMPLETE
      | DRAINED @fail_unreachable -> FAILED
    ),

    # Final.  Duplicates of answers already taken are dropped.
    COMPLETE: (
        FIN_DUP_RCVD @drop -> COMPLETE
      | RECVERRNOTIFY_RCVD @drop -> COMPLETE
      | RESTARTNACK_RCVD @drop -> COMPLETE
      | PEER_UNREACHABLE -> COMPLETE
    ),

    # Final: completed with BFO_ERR_PEER_UNREACHABLE.
    FAILED: (
        late_reply @drop -> FAILED
      | PEER_UNREACHABLE -> FAILED
    ),

    # Final: cancelled (BFO_ERR_CANCELLED); the receiver never matched it.
    CANCELLED: (
        PEER_UNREACHABLE -> CANCELLED
    )
  );
}%%
