#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# (i) Both ends of a rail reconnecting at once, over and over, one rank or
# the other busy (tests/tcp/reconnect_race.c: two bfo_tcp rail groups in one
# process, each under an engine of its own, as under bfo_net): the rail is
# back with one attempt at most each side, no new connection torn down by a late
# connect(); a stale hello is refused and the connection stays.  No root.
set -u
: "${BFO_RACE:?set BFO_RACE to the tcp_race binary (make check-tcp does)}"
timeout 120 "$BFO_RACE" || { echo "FAIL: t9 reconnect race (exit status $?)"; exit 1; }
