#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# One guest: the rxe devices appear and carry a loopback RC ping-pong.
set -e
for i in $(seq 0 $((RXE - 1))); do
    ibv_devinfo -d "rxe$i" | grep -E 'hca_id|state|link_layer'
    ibv_devinfo -d "rxe$i" | grep -q PORT_ACTIVE
done
cat /sys/class/infiniband/rxe0/ports/1/gids/1
timeout 30 ibv_rc_pingpong -d rxe0 -g 1 -n 200 > "$OUT/pp-server.log" 2>&1 &
sleep 1
timeout 30 ibv_rc_pingpong -d rxe0 -g 1 -n 200 127.0.0.1
wait
echo "smoke ok"
