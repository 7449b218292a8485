# SPDX-License-Identifier: BSD-3-Clause
%%{
# The connection: how one transport connection between this rank and one
# peer, on one rail, is made, taken, handed to the engine and torn down.
# Grammar only; the C binding is conn_binding.rl, the C that runs it
# backends/bfo_link.h, and each transport (TCP, shm, verbs) binds the
# actions: connect(), accept, write the hello, close.
#
# What this machine owns, and the rail machine (rail.rl) does not: dialing,
# accepting, the hello and its reply, both ends dialing at once, a stale
# hello, teardown.  What it hands over: the connection is up (report_up:
# CONNECTED), it could not be made (report_failed: CONNECT_FAILED), it broke
# (report_error: RAIL_ERROR).  What stays in the rail machine: probing,
# back-off and re-admission.  This machine has no timer of its own beyond
# the connect timeout, and never retries: the next attempt starts when the
# engine asks again (CONNECT_ASKED, after the rail machine's back-off).
#
# Who dials.  Either side: the one whose engine asks (CONNECT_ASKED).  The
# engine asks when it first needs the peer, so only one side may ask (rank
# 7 sends to rank 2, rank 2 never to 7), or both at once (both send, or
# both ask at init).  A hello that reaches a side with no dial of its own is
# taken, whether its engine asked or not (it hears CONNECTED all the same).
#
# Both dial at once.  The lower rank's dial wins; both sides know which
# that is (C classes every hello by its sender's rank: LOWER_HELLO_RCVD,
# HIGHER_HELLO_RCVD).  The lower rank, dialing, answers the higher rank's
# hello "I am dialing you" (refuse_tie) and goes on with its own dial.  The
# higher rank, dialing, either reads the lower rank's hello first (it closes
# its own dial in silence and takes that hello: the answer to its engine's
# ask), or that answer first (TIE_LOST_RCVD: it closes its dial in silence
# and waits for the winner's hello, AWAITING_HELLO, until the connect
# timeout).  Either order ends in the one connection the lower rank dialed,
# and the engine hears no failure.  The reply to a hello carries the last
# attempt its sender dialed (C: a hello of that attempt or below, read late
# behind the winner's, is stale), so the loser's hello, read after the
# connection is up, never replaces it.
#
# Attempts.  Every dial carries an attempt number, counting up per (peer,
# rail) and side.  A hello is taken only when its number is above the last
# one taken from that peer (LOWER_HELLO_RCVD, HIGHER_HELLO_RCVD); one that
# is not (STALE_HELLO_RCVD) is a dial the peer gave up, read late behind a
# newer one, and is refused in every state, so it never replaces a newer
# connection.  The dialer takes a reply only for its current attempt (C
# checks; another is a malformed reply: BROKEN).  A newer trusted hello
# replaces a live connection, whichever side dialed it: the peer gave it
# up (it broke on its side first), as it always did for the side that
# accepted; an authenticating transport's, only once proven (below).
#
# Authenticated.  A transport that authenticates (TCP and shm given a
# bfo_auth: docs/protocol.md, "Authentication") feeds a hello as a claim
# (LOWER_CLAIM_RCVD, HIGHER_CLAIM_RCVD; STALE_HELLO_RCVD as above), which
# changes no connection: it is answered with the handshake's reply on
# its own connection, held aside by the transport (send_reply without
# take: a challenge), or, where
# this side's dial wins the tie, with "I am dialing you" (refuse_tie).
# From DOWN the wait for its proof is REPLY_SENT, as for a trusted hello,
# so that this side, asked meanwhile, waits for that connection rather
# than dial across it (two dials, each proven at the other end, would
# each replace the other's and close its own).  The
# dialer's proof (its CONFIRM, verified over this side's fresh nonce) is
# what takes: PROOF_RCVD closes this side's dial, ends the wait of a lost
# tie, or replaces the live connection; PROOF_BAD_RCVD (a CONFIRM that
# does not verify, or none) closes the challenged connection alone.  So a
# live connection is never replaced by a hello without a valid proof, and
# the last attempt taken (raised by take) moves only at a proof: a forged
# attempt 2^64-1 cannot make the real peer's hellos stale.  The dialer's
# side is as above (REPLY_RCVD: the reply's MAC checked by C).  The lower
# rank's connection holds: up, it tells a higher rank's claim "I am dialing
# you" as while dialing (both dialed at once, and this side's dial was up
# first: the loser waits for its proof, AWAITING_HELLO), so the two ends
# never each take the other's dial; a higher rank that really lost the
# connection finds it broken, as this side does, and they dial again.  The trusted
# hellos (LOWER_HELLO_RCVD, ...) stay for transports that do not
# authenticate (TCP, shm and verbs without a bfo_auth; verbs over its TCP
# exchange).
#
# The host answers.  The connect timeout fails a dial that does not connect
# (DIALING), a wait for the winner's hello (AWAITING_HELLO) and an accepted
# connection the dialer never declares ready (REPLY_SENT: verbs' RTU).
# Once the dial connected and the hello is out (HELLO_SENT), a transport
# whose connection proves that the peer's host answers (TCP: the peer's
# kernel accepted; shm: the peer's process exists) disarms it: the peer may
# be computing, and its reply comes when it next calls in; meanwhile the
# transport tells the engine, at a bounded rate, that the host answers.
# Only that connection failing (BROKEN) ends the wait.  Verbs' exchange
# (UD datagrams, answered by the peer's software) keeps the timeout there.
#
# Teardown.  BROKEN in every state that holds a connection closes it; the
# engine hears RAIL_ERROR when it had the connection, CONNECT_FAILED when it
# waited for it, nothing otherwise.  A CONNECT_ASKED while the engine had
# the connection up closes it in silence (the engine gave it up) and dials
# again.  Reports come before close: the engine hears of the failure, then
# every operation in flight on the connection completes with an error.
#
# What C keeps, not this machine (backends/bfo_link.h): the attempt numbers
# (this side's last dial; the last hello taken from the peer; the current
# connection's), whether this side is the lower rank (to class hellos), the
# connect deadline (armed by dial, wait and take; disarmed by send_hello
# where the transport's connection proves the host), the connect() not yet
# fed, and the transport's own connection (socket, segment, queue pair)
# with what is in flight on it.

  machine bfo_conn_grammar;
  include bfo_conn_alphabet "bfo_conn_alphabet.rl";

  # A hello above the last one taken, from either side.
  hello = LOWER_HELLO_RCVD | HIGHER_HELLO_RCVD;
  # The same, from an authenticating transport: a claim, to be proven.
  claim = LOWER_CLAIM_RCVD | HIGHER_CLAIM_RCVD;

  Conn = (
    # A link to this rank itself stays here and takes nothing.
    start: NEW: (
        PEER_CHOSEN -> DOWN
    ),

    # No connection; the engine waits for none.  A hello is taken: the
    # peer's engine asked first, ours will hear CONNECTED.
    DOWN: (
        CONNECT_ASKED @dial -> DIALING
      | hello @take @send_reply -> REPLY_SENT
      | STALE_HELLO_RCVD @refuse -> DOWN
      | claim @send_reply -> REPLY_SENT
      | PROOF_RCVD @take @report_up -> UP
      | PROOF_BAD_RCVD @refuse -> DOWN
    ),

    # This side's dial is on its way (the engine waits for it).  The peer
    # dialed too: the lower rank's dial wins.
    DIALING: (
        DIAL_CONNECTED @send_hello -> HELLO_SENT
      | DIAL_FAILED @report_failed @close -> DOWN
      | BROKEN @report_failed @close -> DOWN
      | TIMED_OUT @report_failed @close -> DOWN
      | CONNECT_ASKED -> DIALING
      | HIGHER_HELLO_RCVD @refuse_tie -> DIALING
      | LOWER_HELLO_RCVD @close @take @send_reply -> REPLY_SENT_ASKED
      | STALE_HELLO_RCVD @refuse -> DIALING
      | HIGHER_CLAIM_RCVD @refuse_tie -> DIALING
      | LOWER_CLAIM_RCVD @send_reply -> DIALING
      | PROOF_RCVD @close @take @report_up -> UP
      | PROOF_BAD_RCVD @refuse -> DIALING
    ),

    # Connected, the hello sent; waiting for the peer's reply.
    HELLO_SENT: (
        REPLY_RCVD @report_up -> UP
      | BROKEN @report_failed @close -> DOWN
      | TIMED_OUT @report_failed @close -> DOWN
      | CONNECT_ASKED -> HELLO_SENT
      | HIGHER_HELLO_RCVD @refuse_tie -> HELLO_SENT
      | LOWER_HELLO_RCVD @close @take @send_reply -> REPLY_SENT_ASKED
      | TIE_LOST_RCVD @close @wait -> AWAITING_HELLO
      | STALE_HELLO_RCVD @refuse -> HELLO_SENT
      | HIGHER_CLAIM_RCVD @refuse_tie -> HELLO_SENT
      | LOWER_CLAIM_RCVD @send_reply -> HELLO_SENT
      | PROOF_RCVD @close @take @report_up -> UP
      | PROOF_BAD_RCVD @refuse -> HELLO_SENT
    ),

    # The higher rank lost a tie: the engine waits; the lower rank's dial is
    # on its way.
    AWAITING_HELLO: (
        LOWER_HELLO_RCVD @take @send_reply -> REPLY_SENT_ASKED
      | STALE_HELLO_RCVD @refuse -> AWAITING_HELLO
      | TIMED_OUT @report_failed -> DOWN
      | CONNECT_ASKED -> AWAITING_HELLO
      | LOWER_CLAIM_RCVD @send_reply -> AWAITING_HELLO
      | PROOF_RCVD @take @report_up -> UP
      | PROOF_BAD_RCVD @refuse -> AWAITING_HELLO
    ),

    # A hello taken and answered; waiting for the dialer to be ready, the
    # engine not waiting (yet).  A newer hello replaces the connection.
    # Or a claim answered (send_reply, from DOWN), the connection held by
    # the transport: waiting for its proof; asked meanwhile, this side does
    # not dial across it (REPLY_SENT_ASKED), and a bad proof leaves the
    # wait to the connect deadline (other claims may be answered).
    REPLY_SENT: (
        PEER_READY @report_up -> UP
      | CONNECT_ASKED -> REPLY_SENT_ASKED
      | hello @close @take @send_reply -> REPLY_SENT
      | STALE_HELLO_RCVD @refuse -> REPLY_SENT
      | claim @send_reply -> REPLY_SENT
      | PROOF_RCVD @close @take @report_up -> UP
      | PROOF_BAD_RCVD @refuse -> REPLY_SENT
      | BROKEN @close -> DOWN
      | TIMED_OUT @close -> DOWN
    ),

    # The same, and the engine waits for it.
    REPLY_SENT_ASKED: (
        PEER_READY @report_up -> UP
      | CONNECT_ASKED -> REPLY_SENT_ASKED
      | hello @close @take @send_reply -> REPLY_SENT_ASKED
      | STALE_HELLO_RCVD @refuse -> REPLY_SENT_ASKED
      | claim @send_reply -> REPLY_SENT_ASKED
      | PROOF_RCVD @close @take @report_up -> UP
      | PROOF_BAD_RCVD @refuse -> REPLY_SENT_ASKED
      | BROKEN @report_failed @close -> DOWN
      | TIMED_OUT @report_failed @close -> DOWN
    ),

    # The engine has the connection (dialed by either side).  A newer hello
    # replaces it: the peer gave it up (it broke on its side first).
    UP: (
        BROKEN @report_error @close -> DOWN
      | CONNECT_ASKED @close @dial -> DIALING
      | hello @report_error @close @take @send_reply -> REPLY_SENT
      | STALE_HELLO_RCVD @refuse -> UP
      | LOWER_CLAIM_RCVD @send_reply -> UP
      | HIGHER_CLAIM_RCVD @refuse_tie -> UP
      | PROOF_RCVD @report_error @close @take @report_up -> UP
      | PROOF_BAD_RCVD @refuse -> UP
    )
  );
}%%
