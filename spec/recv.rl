# SPDX-License-Identifier: BSD-3-Clause
%%{
# The receive request: one posted receive, from the moment the engine
# matches a message to it until the message is in the buffer or the peer is
# unreachable.  Grammar only; the C binding is recv_binding.rl.
#
# What C keeps, not this machine:
#   - matching (context, source, tag, per-peer sequence numbers, the
#     unexpected queue) and the sequence window that drops duplicate MATCH,
#     RNDV and RGET before they match anything;
#   - the count of outstanding completions (DRAINED, ALL_DELIVERED as in
#     send.rl) and the bytes received;
#   - the restart sequence.  Accepting a NOTIFY sets rseq to the NOTIFY's;
#     a restarted RNDV/RGET sets it again.  From then on, completions of
#     operations posted under an older rseq only lower the outstanding count
#     and do not reach the machine, and data messages (FRAG, FIN) of an
#     older rseq are dropped as stale.  NOTIFY/RNDV/RGET/FIN that repeat one
#     already taken arrive here as *_DUP_RCVD.
#   - the NACK for a NOTIFY naming a request that no longer exists: the
#     engine builds it from the NOTIFY alone.
#
# Changes from the 2010 design, on purpose:
#   - RECVERR_SENT keeps taking data of the current rseq and may complete.
#     In the old design a receiver whose ACK completed with an error (but
#     arrived) dropped every later FRAG, while the sender finished and
#     ignored the RECVERRNOTIFY: the receiver waited forever.
#   - RESTARTACK_FAILED is simply posted again; a duplicate is stale at the
#     sender (older rseq).
#   - the PUT protocol FINs name the PUT's slot, so a FIN that is posted
#     twice is taken once (FIN_DUP_RCVD).

  machine bfo_recv_grammar;
  include bfo_alphabet "bfo_alphabet.rl";

  # Completions of everything a receive request may have in flight.
  recv_completion = ACK_DELIVERED | ACK_FAILED | PUT_DELIVERED | PUT_FAILED
                  | READ_COMPLETED | READ_FAILED | FIN_DELIVERED | FIN_FAILED
                  | RECVERRNOTIFY_DELIVERED | RECVERRNOTIFY_FAILED
                  | RESTARTACK_DELIVERED | RESTARTACK_FAILED;

  # What the sender may still send for a message this side is done with.
  late_message = FRAG_RCVD | FIN_RCVD | FIN_DUP_RCVD | NOTIFY_RCVD | NOTIFY_DUP_RCVD
               | RNDV_DUP_RCVD | RGET_DUP_RCVD;

  RecvRequest = (
    # irecv was posted (or the message is being matched from the
    # unexpected queue); nothing has matched it yet.  A matched probe
    # starts here too: it claims the message before any buffer is given.
    start: POSTED: (
        MATCH_RCVD @deliver_match -> COMPLETE
      | RNDV_RCVD @accept_rndv -> RNDV_MATCHED
      | RGET_RCVD @accept_rget -> RGET_MATCHED
      | PROBE_MATCHED @claim -> CLAIMED
      | CANCEL_REQUESTED @complete_cancelled -> CANCELLED
      | PEER_UNREACHABLE -> UNREACHABLE_DRAINING
    ),

    # A matched probe holds the message (its MATCH, RNDV or RGET, out of
    # matching); bfo_imrecv gives the buffer and feeds that frame.  The
    # peer may be given up meanwhile: an eager message is here whole and
    # still completes; a rendezvous fails once taken (its rest never comes).
    # Nothing is in flight, and a matched message cannot be cancelled.
    CLAIMED: (
        MATCH_RCVD @deliver_match -> COMPLETE
      | RNDV_RCVD @accept_rndv -> RNDV_MATCHED
      | RGET_RCVD @accept_rget -> RGET_MATCHED
      | PEER_UNREACHABLE -> CLAIMED
    ),

    # An RNDV matched; its first bytes are copied.  The engine chooses how
    # to take the rest: by copy, or by PUT when the sender's buffer is
    # registered and an RDMA rail reaches it.
    RNDV_MATCHED: (
        COPY_CHOSEN @post_ack -> ACK_SENT
      | PUT_CHOSEN @post_puts -> PUTS_SENT
      | PEER_UNREACHABLE -> UNREACHABLE_DRAINING
    ),

    # An RGET matched: read the message, or fall back to copy.
    RGET_MATCHED: (
        GET_CHOSEN @post_reads -> READING
      | COPY_CHOSEN @post_ack -> ACK_SENT
      | PEER_UNREACHABLE -> UNREACHABLE_DRAINING
    ),

    # Copy protocol: ACK out, FRAGs coming.
    ACK_SENT: (
        ACK_DELIVERED -> ACK_SENT
      | ACK_FAILED @post_recverrnotify -> RECVERR_SENT
      | FRAG_RCVD @accept_frag -> ACK_SENT
      | NOTIFY_RCVD @accept_notify -> RESTART_ACK_OWED
      | RNDV_DUP_RCVD @drop -> ACK_SENT
      | RGET_DUP_RCVD @drop -> ACK_SENT
      | ALL_DELIVERED @complete -> COMPLETE
      | PEER_UNREACHABLE -> UNREACHABLE_DRAINING
    ),

    # PUT protocol: PUTs out (a pipeline of them); each FIN says a range
    # is written.  accept_fin counts the range; post_puts keeps the
    # pipeline full.
    PUTS_SENT: (
        PUT_DELIVERED -> PUTS_SENT
      | PUT_FAILED @post_recverrnotify -> RECVERR_SENT
      | FIN_RCVD @accept_fin @post_puts -> PUTS_SENT
      | FIN_DUP_RCVD @drop -> PUTS_SENT
      | NOTIFY_RCVD @accept_notify -> RESTART_ACK_OWED
      | RNDV_DUP_RCVD @drop -> PUTS_SENT
      | ALL_DELIVERED @complete -> COMPLETE
      | PEER_UNREACHABLE -> UNREACHABLE_DRAINING
    ),

    # GET protocol: RDMA reads out; when every byte is here, FIN the sender.
    READING: (
        READ_COMPLETED @post_reads -> READING
      | READ_FAILED @post_recverrnotify -> RECVERR_SENT
      | NOTIFY_RCVD @accept_notify -> RESTART_ACK_OWED
      | RGET_DUP_RCVD @drop -> READING
      | ALL_DELIVERED @post_fin -> FIN_SENT
      | PEER_UNREACHABLE -> UNREACHABLE_DRAINING
    ),

    # The data is all here; the sender's buffer is released by our FIN.
    FIN_SENT: (
        FIN_DELIVERED @complete -> COMPLETE
      | FIN_FAILED @post_fin -> FIN_SENT
      | RGET_DUP_RCVD @drop -> FIN_SENT
      | PEER_UNREACHABLE -> UNREACHABLE_DRAINING
    ),

    # An operation of ours failed and the sender has been told; it will
    # drain and NOTIFY.  Data of the current rseq is still good.
    RECVERR_SENT: (
        RECVERRNOTIFY_DELIVERED -> RECVERR_SENT
      | RECVERRNOTIFY_FAILED @post_recverrnotify -> RECVERR_SENT
      | ACK_DELIVERED -> RECVERR_SENT
      | ACK_FAILED -> RECVERR_SENT
      | PUT_DELIVERED -> RECVERR_SENT
      | PUT_FAILED -> RECVERR_SENT
      | READ_COMPLETED @account_read -> RECVERR_SENT
      | READ_FAILED -> RECVERR_SENT
      | FRAG_RCVD @accept_frag -> RECVERR_SENT
      | FIN_RCVD @accept_fin -> RECVERR_SENT
      | FIN_DUP_RCVD @drop -> RECVERR_SENT
      | RNDV_DUP_RCVD @drop -> RECVERR_SENT
      | RGET_DUP_RCVD @drop -> RECVERR_SENT
      | NOTIFY_RCVD @accept_notify -> RESTART_ACK_OWED
      | ALL_DELIVERED @complete -> COMPLETE
      | PEER_UNREACHABLE -> UNREACHABLE_DRAINING
    ),

    # NOTIFY accepted (rseq taken from it): the RESTARTACK is owed once
    # every operation posted before it has completed.
    RESTART_ACK_OWED: (
        DRAINED @post_restartack -> RESTART_ACKED
      | NOTIFY_DUP_RCVD @drop -> RESTART_ACK_OWED
      | PEER_UNREACHABLE -> UNREACHABLE_DRAINING
    ),

    # RESTARTACK out; the restarted RNDV/RGET resets the request (offset 0,
    # its rseq) and is taken like a new one.
    RESTART_ACKED: (
        RESTARTACK_DELIVERED -> RESTART_ACKED
      | RESTARTACK_FAILED @post_restartack -> RESTART_ACKED
      | NOTIFY_DUP_RCVD @drop -> RESTART_ACKED
      | RNDV_RCVD @reset @accept_rndv -> RNDV_MATCHED
      | RGET_RCVD @reset @accept_rget -> RGET_MATCHED
      | PEER_UNREACHABLE -> UNREACHABLE_DRAINING
    ),

    # No rail to the peer: wait for every outstanding completion, then fail
    # (or complete, when every byte is here).
    UNREACHABLE_DRAINING: (
        recv_completion -> UNREACHABLE_DRAINING
      | late_message @drop -> UNREACHABLE_DRAINING
      | PEER_UNREACHABLE -> UNREACHABLE_DRAINING
      | ALL_DELIVERED @complete -> COMPLETE
      | DRAINED @fail_unreachable -> FAILED
    ),

    # Final.  A NOTIFY for a complete message gets a NACK (the sender's
    # last FRAG failed but arrived); duplicates are dropped.
    COMPLETE: (
        NOTIFY_RCVD @post_restartnack -> COMPLETE
      | NOTIFY_DUP_RCVD @drop -> COMPLETE
      | FIN_DUP_RCVD @drop -> COMPLETE
      | RNDV_DUP_RCVD @drop -> COMPLETE
      | RGET_DUP_RCVD @drop -> COMPLETE
      | PEER_UNREACHABLE -> COMPLETE
    ),

    # Final: completed with BFO_ERR_PEER_UNREACHABLE.
    FAILED: (
        late_message @drop -> FAILED
      | PEER_UNREACHABLE -> FAILED
    ),

    # Final: cancelled before anything matched it (BFO_ERR_CANCELLED).
    CANCELLED: (
        PEER_UNREACHABLE -> CANCELLED
    )
  );
}%%
