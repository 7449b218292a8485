#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Two guests: every link pings, and an RC ping-pong crosses rxe0 and rxe1.
set -e
for i in $(seq 0 $((NICS - 1))); do
    eval peer=\$PEER$i
    n=0; until busybox ping -c1 -W1 "$peer" >/dev/null 2>&1; do n=$((n + 1)); [ $n -lt 20 ] || exit 1; done
    echo "link $i: $peer answers"
done
for i in $(seq 0 $((RXE - 1))); do
    if [ "$ROLE" = a ]; then
        timeout 30 ibv_rc_pingpong -d "rxe$i" -g 1 -p $((18500 + i)) -n 100
    else
        eval peer=\$PEER$i
        sleep 1
        timeout 30 ibv_rc_pingpong -d "rxe$i" -g 1 -p $((18500 + i)) -n 100 "$peer"
    fi
done
echo "pair ok"
