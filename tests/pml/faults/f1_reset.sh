#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# (a) ss -K on one rail mid-stream.  2 ranks stream 4 MiB messages for
# DURATION seconds (multi-GB), every byte verified; once traffic flows,
# every TCP connection on rail 0's address is reset from outside
# (ss -K dst ADDR; ss -K src ADDR), in a second run rail 1's, in a third
# rail 0's and, BOTH_PAUSE s (1.5) later, rail 1's (that run streams mixed
# sizes, 8 B, 64 KiB and 1 MiB, both ways).  Expected (bfo): each stream
# completes, every message verified, none lost, and traffic moves after the
# last reset.  PML=ob1 runs the same (in its namespace, see lib.sh) and
# fails it (f2_reset_ob1.sh shows that on purpose).
. "$(dirname "$0")/lib.sh"
SCENARIOS=("f1a reset rail 0" "f1b reset rail 1" "f1c reset rail 0 then rail 1")
preflight "f1 reset ($PML)" || { finish; exit; }
setup_net || { finish; exit; }

judge() { # $1: name, $2: description
    local moved
    if [ "$OUTCOME" = completed ]; then
        moved=$(after_fault_bytes)
        if [[ ",$RESETS," == *,0,* ]]; then
            fail "$1 ($PML): a reset found no connection on the rail (sockets killed: $RESETS): is $PML using $RAIL0/$RAIL1?"
        elif [ "${moved:-0}" -le 0 ]; then
            fail "$1 ($PML): completed but no byte arrived after the last reset"
        else
            echo "   $DETAIL; $(gb "$moved") after the last reset; longest stall $(stall_max 1)s; elapsed $(fsub "$RUN_END" "$RUN_START")s"
            ok "$1 ($PML): $2"
        fi
    else
        fail "$1 ($PML): $OUTCOME: $DETAIL"
        openmpi_says
        show_tail
    fi
    record "$1" "$OUTCOME" "$DETAIL; sockets killed $RESETS; longest stall $(stall_max 1)s"
}

reset_run reset0 0; judge "f1a reset rail 0" "every connection of rail 0 reset mid-stream, stream completed verified"
reset_run reset1 1; judge "f1b reset rail 1" "every connection of rail 1 reset mid-stream, stream completed verified"
EXTRA="--mixed --bidir ${EXTRA:-}" reset_run reset01 0 1
judge "f1c reset rail 0 then rail 1" "rail 0 reset, ${BOTH_PAUSE:-1.5}s later rail 1, mixed sizes both ways, stream completed verified"
finish
