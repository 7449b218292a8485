#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# (a) 2 processes, 2 rails, no fault: every message verified, both rails used.
. "$(dirname "$0")/lib.sh"
timeout 60 "$BFO_TCP" run -n 2 --rails "$RAILS" --timeout 50 -- \
    "$BFO_TCP" stream --json --count 400 > "$WORK/out" 2> "$WORK/err" || fail "exit status $?"
check_exact
expect_messages 800
[ "$(jget failovers)" = 0 ] || fail "a failover without a fault"
both_rails_carried
summary
echo "ok: t1 clean stream"
