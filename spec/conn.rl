# SPDX-License-Identifier: BSD-3-Clause
%%{
# The connection: how one transport connection between this rank and one
# peer, on one rail, is made, taken, handed to the engine and torn down.
# Grammar only; the C binding is conn_binding.rl, the C that runs it
# backends/bfo_link.h, and each transport (TCP, shm, verbs) binds the
# actions: connect(), accept, write the hello, close.
#
# What this machine owns, and the rail machine (rail.rl) does not: dialing,
# accepting, the hello and its reply, both ends asking at once, a stale
# hello, teardown.  What it hands over: the connection is up (report_up:
# CONNECTED), it could not be made (report_failed: CONNECT_FAILED), it broke
# (report_error: RAIL_ERROR).  What stays in the rail machine: probing,
# back-off and re-admission.  This machine has no timer of its own beyond
# the connect timeout, and never retries: the next attempt starts when the
# engine asks again (CONNECT_ASKED, after the rail machine's back-off).
#
# Who dials.  The lower rank of a pair dials, the higher rank accepts
# (DIALER_CHOSEN, ACCEPTOR_CHOSEN: fed once, at start).  Both ends ask for
# a connection (connect()) and, after a failure under both, after the same
# back-off: they ask at once.  That gives one connection, never two: the
# lower rank dials and the higher rank only waits for that dial, and a hello
# that reaches the lower rank (the peer dialed too: a peer that breaks the
# rule) is refused in every state of the dialer.  The higher rank's own
# CONNECT_ASKED, whether it comes before the hello (it waits in
# AWAITING_HELLO) or after (the connection being made answers it), ends in
# the same connection; a connect() not yet fed when the hello or the reply
# arrives is fed first, so the connection answers it.
#
# Attempts.  Every dial carries an attempt number, counting up per (peer,
# rail).  The acceptor takes a hello only when its number is above the last
# one it took (HELLO_RCVD); one that is not (STALE_HELLO_RCVD) is a dial the
# peer gave up, read late behind a newer one, and is refused in every state,
# so it never replaces a newer connection.  The dialer takes a reply only
# for its current attempt (C checks; another is a malformed reply: BROKEN).
#
# Teardown.  BROKEN in every state that holds a connection closes it; the
# engine hears RAIL_ERROR when it had the connection, CONNECT_FAILED when it
# waited for it, nothing otherwise.  A CONNECT_ASKED while the engine had
# the connection up closes it in silence (the engine gave it up) and starts
# again.  Reports come before close: the engine hears of the failure, then
# every operation in flight on the connection completes with an error.
#
# What C keeps, not this machine (backends/bfo_link.h): the attempt numbers
# (the dialer's last dial; the acceptor's last hello taken), the connect
# deadline (armed by dial, wait and take), the connect() not yet fed, and
# the transport's own connection (socket, segment, queue pair) with what is
# in flight on it.

  machine bfo_conn_grammar;
  include bfo_conn_alphabet "bfo_conn_alphabet.rl";

  # A hello at the lower rank: the peer dialed too, or a stale one.
  peer_dialed = HELLO_RCVD | STALE_HELLO_RCVD;

  Conn = (
    # The transport has not said yet which side dials.
    start: NEW: (
        DIALER_CHOSEN -> DIALER_DOWN
      | ACCEPTOR_CHOSEN -> ACCEPTOR_DOWN
    ),

    # ---- the lower rank: it dials --------------------------------------

    # No connection; the engine waits for none.
    DIALER_DOWN: (
        CONNECT_ASKED @dial -> DIALING
      | peer_dialed @refuse -> DIALER_DOWN
    ),

    # The dial is on its way (the engine waits for it).
    DIALING: (
        DIAL_CONNECTED @send_hello -> HELLO_SENT
      | DIAL_FAILED @report_failed @close -> DIALER_DOWN
      | BROKEN @report_failed @close -> DIALER_DOWN
      | TIMED_OUT @report_failed @close -> DIALER_DOWN
      | CONNECT_ASKED -> DIALING
      | peer_dialed @refuse -> DIALING
    ),

    # Connected, the hello sent; waiting for the acceptor's reply.
    HELLO_SENT: (
        REPLY_RCVD @report_up -> DIALER_UP
      | BROKEN @report_failed @close -> DIALER_DOWN
      | TIMED_OUT @report_failed @close -> DIALER_DOWN
      | CONNECT_ASKED -> HELLO_SENT
      | peer_dialed @refuse -> HELLO_SENT
    ),

    # The engine has the connection.
    DIALER_UP: (
        BROKEN @report_error @close -> DIALER_DOWN
      | CONNECT_ASKED @close @dial -> DIALING
      | peer_dialed @refuse -> DIALER_UP
    ),

    # ---- the higher rank: it accepts -----------------------------------

    # No connection; the engine waits for none.  A hello is taken all the
    # same: the peer's engine asked first, ours will hear CONNECTED.
    ACCEPTOR_DOWN: (
        CONNECT_ASKED @wait -> AWAITING_HELLO
      | HELLO_RCVD @take @send_reply -> REPLY_SENT
      | STALE_HELLO_RCVD @refuse -> ACCEPTOR_DOWN
    ),

    # The engine waits; the peer has not dialed yet.
    AWAITING_HELLO: (
        HELLO_RCVD @take @send_reply -> REPLY_SENT_ASKED
      | STALE_HELLO_RCVD @refuse -> AWAITING_HELLO
      | TIMED_OUT @report_failed -> ACCEPTOR_DOWN
      | CONNECT_ASKED @wait -> AWAITING_HELLO
    ),

    # A hello taken and answered; waiting for the dialer to be ready, the
    # engine not waiting (yet).  A newer hello replaces the connection.
    REPLY_SENT: (
        PEER_READY @report_up -> ACCEPTOR_UP
      | CONNECT_ASKED -> REPLY_SENT_ASKED
      | HELLO_RCVD @close @take @send_reply -> REPLY_SENT
      | STALE_HELLO_RCVD @refuse -> REPLY_SENT
      | BROKEN @close -> ACCEPTOR_DOWN
      | TIMED_OUT @close -> ACCEPTOR_DOWN
    ),

    # The same, and the engine waits for it: when it breaks, the engine
    # keeps waiting for the peer's next dial, until the connect timeout.
    REPLY_SENT_ASKED: (
        PEER_READY @report_up -> ACCEPTOR_UP
      | CONNECT_ASKED -> REPLY_SENT_ASKED
      | HELLO_RCVD @close @take @send_reply -> REPLY_SENT_ASKED
      | STALE_HELLO_RCVD @refuse -> REPLY_SENT_ASKED
      | BROKEN @close -> AWAITING_HELLO
      | TIMED_OUT @report_failed @close -> ACCEPTOR_DOWN
    ),

    # The engine has the connection.  A newer hello replaces it: the peer
    # gave it up (it broke on its side first).
    ACCEPTOR_UP: (
        BROKEN @report_error @close -> ACCEPTOR_DOWN
      | CONNECT_ASKED @close @wait -> AWAITING_HELLO
      | HELLO_RCVD @report_error @close @take @send_reply -> REPLY_SENT
      | STALE_HELLO_RCVD @refuse -> ACCEPTOR_UP
    )
  );
}%%
