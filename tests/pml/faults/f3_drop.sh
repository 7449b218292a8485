#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# (c) Silent loss: every packet from or to one rail's address is dropped
# (an nftables table the test creates in its namespace: ip daddr/saddr
# ADDR counter drop, on the output hook) for DROP_S seconds (default 1.5)
# mid-stream, then the table is deleted.  Rail 0 in one run (4 MiB
# messages), rail 1 in a second (mixed sizes: 8 B, 64 KiB, 1 MiB).  Expected (bfo): the stream completes, every message verified;
# the rule dropped packets (its counter); and bytes kept arriving while
# the rail was silent (the other rail carried them: at least one progress
# line inside the drop, 0.6 s or more after it began, shows received bytes
# moving; DROP_REQUIRE_MOVE=0 turns that check into a note).  TCP alone
# rides out a 1.5 s loss by retransmitting, so completing is not enough to
# show a failover; ob1 (whose connections here all touch 10.201.1.1)
# typically completes after a stall of about the drop plus TCP's backoff.
. "$(dirname "$0")/lib.sh"
SCENARIOS=("f3a drop rail 0" "f3b drop rail 1, mixed sizes")
DROP_S=${DROP_S:-1.5}
preflight "f3 drop ($PML)" nft || { finish; exit; }
setup_net || { finish; exit; }
if ! in_ns nft add table ip "$NFT_TABLE" 2>/dev/null; then
    skip "f3 drop ($PML): nftables does not work here"; finish; exit
fi
in_ns nft delete table ip "$NFT_TABLE"

drop_run() { # $1: name, $2: rail
    local addr dropped t_on t_off moved
    addr=$(eval echo "\$RAIL$2")
    # shellcheck disable=SC2086
    start_stream "$1" "$NP" -- --duration "$DURATION" --finalize-timeout 10 ${EXTRA:-}
    if ! wait_traffic 1.5; then
        watch_run "$NP"; classify "$NP"
        fail "$1 ($PML): no traffic before the fault: $OUTCOME ($DETAIL)"; show_tail; return
    fi
    in_ns nft add table ip "$NFT_TABLE" &&
        in_ns nft add chain ip "$NFT_TABLE" out '{ type filter hook output priority 0; }' &&
        in_ns nft add rule ip "$NFT_TABLE" out ip daddr "$addr" counter drop &&
        in_ns nft add rule ip "$NFT_TABLE" out ip saddr "$addr" counter drop || { fail "$1: nft rule"; return; }
    t_on=$(now)
    fault_mark "nft: every packet from/to $addr (rail $2) dropped"
    sleep "$DROP_S"
    dropped=$(in_ns nft list table ip "$NFT_TABLE" | sed -n 's/.*counter packets \([0-9]*\).*/\1/p' | awk '{ s += $1 } END { print s + 0 }')
    in_ns nft delete table ip "$NFT_TABLE"
    t_off=$(now)
    fault_mark "nft table deleted after $(fsub "$t_off" "$t_on")s: $dropped packets dropped"
    watch_run "$NP"
    classify "$NP"
    # received bytes moving inside the drop: rank 1's progress lines from
    # t_on + 0.6 to t_off, compared with the one before
    moved=$(awk -v a="$t_on" -v b="$t_off" '$1 == "progress" && $2 == "rank=1" {
            for (i = 3; i <= NF; i++) { if ($i ~ /^t=/) t = substr($i, 3) + 0; if ($i ~ /^rx_bytes=/) x = substr($i, 10) + 0 }
            if (t <= a + 0.6) base = x; else if (t <= b) last = x }
        END { printf "%.0f\n", (last == "" ? 0 : last - base) }' "$OUT")
    local what
    what="longest stall $(stall_max 1)s; $(gb "${moved:-0}") received during the drop (from 0.6s in)"
    if [ "$OUTCOME" != completed ]; then
        fail "$1 ($PML): $OUTCOME: $DETAIL"; openmpi_says; show_tail
    elif [ "${dropped:-0}" = 0 ]; then
        fail "$1 ($PML): the rule dropped no packet: is $PML using $addr?"
    elif [ "${moved:-0}" -le 0 ] && [ "${DROP_REQUIRE_MOVE:-1}" = 1 ]; then
        fail "$1 ($PML): completed, but nothing arrived while rail $2 was silent ($what): no failover, TCP's retransmission rode it out"
        OUTCOME=stalled-then-completed
    else
        [ "${moved:-0}" -le 0 ] && { note "$1 ($PML): nothing arrived while rail $2 was silent ($what)"; OUTCOME=stalled-then-completed; }
        echo "   $DETAIL; $what; elapsed $(fsub "$RUN_END" "$RUN_START")s"
        ok "$1 ($PML): rail $2 silent for ${DROP_S}s mid-stream ($dropped packets dropped), stream completed verified"
    fi
    record "$1" "$OUTCOME" "$DETAIL; $dropped packets dropped; $what"
}

drop_run "f3a drop rail 0" 0
EXTRA="--mixed ${EXTRA:-}" drop_run "f3b drop rail 1, mixed sizes" 1
finish
