#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# (m) Described data (bfo_isend_data, bfo_irecv_data; `bfo stream --data`):
# messages given as iovec lists (sender and receiver cut them at different
# places) or pack/unpack callbacks, over two TCP rails (TCP writes iovec
# segments straight from the layer's memory; packed data the engine stages)
# and over shared memory next to TCP (shm copies or packs straight into its
# ring); then a rail silenced mid-stream (the fault hook, SIGUSR1 in rank 1):
# restarted FRAGs read the descriptions again, in place.  Every byte
# verified.
. "$(dirname "$0")/lib.sh"

for kind in iov pack; do
    for rails in "$RAILS" shm,127.0.0.2; do
        timeout 60 "$BFO_TCP" run -n 2 --rails "$rails" --timeout 50 -- \
            "$BFO_TCP" stream --json --count 300 --data $kind > "$WORK/out" 2> "$WORK/err" ||
            fail "$kind over $rails: exit status $?"
        check_exact
        expect_messages 600
        summary
        echo "ok: t13 described data ($kind) over $rails"
    done
done

for kind in iov pack; do
    rm -f "$WORK/pids" "$WORK/out"
    run_bg 2 --timeout 50 -- "$BFO_TCP" stream --json --duration 3 --data $kind \
        --drop-on-signal 1 --timeout 30
    sleep 0.8
    kill -USR1 "$(rank_pid 1)"
    sleep 1.2
    kill -USR1 "$(rank_pid 1)"
    wait_bg
    [ $rc = 0 ] || fail "$kind, rail silenced: exit status $rc"
    check_exact
    [ "$(jget failovers)" -ge 1 ] || fail "$kind: the silent rail was never mapped out"
    summary
    echo "ok: t13 described data ($kind), a rail silenced mid-stream: every message verified"
done
