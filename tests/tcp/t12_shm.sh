#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# (l) A shared-memory rail next to a TCP rail (--rails shm,127.0.0.2).
# Clean: every message verified, both rails carried bytes.  Broken
# mid-stream: the shm rail's frames vanish (the transport's fault hook,
# SIGUSR1 in rank 1) until the engine's probe maps it out and traffic
# moves to TCP; the hook goes off and the rail is re-admitted over a new
# segment generation; verified, nothing lost.  Then ranks whose rail 1 is
# shm on one side and TCP on the other: the rail reaches neither way
# (absent_rails 2), not a failure.
. "$(dirname "$0")/lib.sh"
RAILS=shm,127.0.0.2

run_bg 2 -- "$BFO_TCP" stream --json --count 2000
wait_bg
[ "$rc" = 0 ] || fail "clean: exit status $rc"
check_exact
expect_messages 4000
both_rails_carried
summary
echo "ok: t12 shm and tcp rails, clean: 4000 messages verified, both rails carried bytes"

rm -f "$WORK/pids" "$WORK/out"
run_bg 2 --timeout 50 -- "$BFO_TCP" stream --json --duration 3.5 --drop-on-signal 0 --timeout 30
sleep 0.8
kill -USR1 "$(rank_pid 1)"
sleep 1.2
kill -USR1 "$(rank_pid 1)"
wait_bg
[ "$rc" = 0 ] || fail "broken shm rail: exit status $rc"
check_exact
[ "$(jget failovers)" -ge 1 ] || fail "the broken shm rail was never mapped out"
[ "$(jget readmissions)" -ge 1 ] || fail "the shm rail was not re-admitted after the fault stopped"
ms_lt "$(jget stall_ms_max)" 900 || fail "traffic stalled $(jget stall_ms_max) ms"
both_rails_carried
summary
echo "ok: t12 shm rail broken mid-stream: failover to tcp, re-admitted, $(jget verified) messages verified, 0 lost"

start_rank1 127.0.0.2,127.0.0.3
run_rank0 127.0.0.2,shm
check_exact
expect_messages 600
[ "$(jget absent_rails)" = 2 ] || fail "absent_rails $(jget absent_rails), expected 2 (shm on one side, tcp on the other)"
[ "$(jget failovers)" = 0 ] && [ "$(jget conn_errors)" = 0 ] ||
    fail "a rail of another transport was taken for a failure: failovers $(jget failovers), conn_errors $(jget conn_errors)"
summary
echo "ok: t12 rail 1 shm on one rank and tcp on the other: absent both ways, 600 messages verified"

# bfo bench over shm with TCP loopback in the same rounds (--compare)
timeout 120 "$BFO_TCP" bench --sizes 8,64K --rounds 2 --rails shm --compare 127.0.0.2 > "$WORK/bench" 2> "$WORK/err" ||
    fail "bfo bench --rails shm --compare 127.0.0.2: exit status $?"
grep -q 'lat/cmp' "$WORK/bench" || fail "bfo bench printed no --compare table"
awk '/lat\/cmp/ { t = 1; next } t && NF == 10 && $4 == "|" { n++; for (i = 2; i <= 10; i++) if (i != 4 && i != 8 && !($i > 0)) bad++ }
     END { exit !(n == 2 && !bad) }' "$WORK/bench" || { cat "$WORK/bench"; fail "the --compare table is not 2 rows of positive values"; }
sed -n '/lat\/cmp/,$p' "$WORK/bench" | head -3 | sed 's/^/   /'
echo "ok: t12 bfo bench --rails shm --compare 127.0.0.2: shm and tcp loopback measured in the same rounds"
