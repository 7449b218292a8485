# SPDX-License-Identifier: BSD-3-Clause
# lib.sh - shared by the guest scripts tests/verbs/t*.sh (run inside the
# guests by tests/verbs/vm.sh run2; ROLE, OUT, PEER0.. come from there).
# Rank 0 runs in guest a, rank 1 in guest b; rails: verbs:rxe0 (link 0),
# verbs:rxe1 (link 1), tcp (link 2).  BFO is the bfo binary.
set -u
export BFO_VERBS_LOG=${BFO_VERBS_LOG:-2}   # connections too: the tests time them
[ -f "$OUT/env" ] && . "$OUT/env"   # extra settings from the host (e.g. BFO_VERBS_LOG=2)
BFO=${BFO:-$(cat "$OUT/bfo.path")}
if [ "$ROLE" = a ]; then RANK=0 ME=1; else RANK=1 ME=2; fi
RAILS="verbs:rxe0,verbs:rxe1,tcp:10.0.2.$ME"
export BFO_RANK=$RANK BFO_SIZE=2 BFO_BOOTSTRAP=10.0.2.1:7117 BFO_RAILS=$RAILS
up() { local u _; read -r u _ < /proc/uptime; echo "$u"; }
say() { echo "[$(up)] $ROLE: $*"; }
# fail MESSAGE: the rails' state changes first (why a rail left UP: the
# stream runs with --trace-rails), then the end of the rank's stderr
fail() {
    say "FAIL: $*"
    echo "--- rail and peer state changes (last 15; connections and probe answers left out)"
    grep -E -- '--[A-Z_]+-->' "$OUT/err.$ROLE" 2>/dev/null | grep -v -E -- '--(CONNECTED|PROBEACK_RCVD)-->' | tail -15
    echo "--- stderr (last 30 lines)"
    tail -30 "$OUT/err.$ROLE" 2>/dev/null
    exit 1
}

# pause SEC: a sleep that starts no process. In a guest whose rank
# busy-polls, every exec reads the host's root over 9p and can take a
# second or more: a CI run once took 14.5 s for t2's "monitor ...; sleep 4"
# (the cable came back too late to be re-admitted before the stream ended).
mkfifo "/tmp/bfo-pause.$$" && exec {PAUSE_FD}<> "/tmp/bfo-pause.$$"
pause() { read -r -t "$1" -u "$PAUSE_FD" _ || true; }

# monitor GUEST COMMAND...: the host sends each COMMAND to that guest's QEMU
# monitor (e.g. "set_link n0 off" pulls link 0's cable at that guest), all
# of them in one go (cables pulled at once, not one host round trip apart:
# under load that was seconds); returns once they are done (20 s at most).
# Builtins only, for the reason given at pause.
monitor() {
    local role=$1 f="$OUT/mon.$1" n d lines end=$((SECONDS + 20))
    shift
    printf '%s\n' "$@" >> "$f"
    mapfile -t lines < "$f"
    n=${#lines[@]}
    while [ "$SECONDS" -lt "$end" ]; do
        d=0
        { read -r d < "$f.done"; } 2> /dev/null
        [ "${d:-0}" -ge "$n" ] && { say "monitor $role: $* (done)"; return 0; }
        pause 0.02
    done
    fail "the host did not carry out '$*' for guest $role"
}

# stream ARGS...: bfo stream in the background (rank 0 writes the JSON to
# $OUT/json); STREAM_PID.
stream() {
    # TCG guests are slow, and a new queue pair's first packets slower still:
    # a probe gets 2 s (the engine default is 40 ms) and the silence
    # backstop 4 s (the probe timeout never exceeds it); a clean stream
    # mapped rails out with 400 ms (t1, one CI run in several), and with
    # 1 s once on a loaded host (t7, whose run took 68 s, against 25 to 34
    # here: a rail mapped out 1.3 s after it connected).  The rails' state
    # changes go to stderr (--trace-rails): a failure shows them.
    # shellcheck disable=SC2086 # BFO_STREAM_ARGS: extra options (from $OUT/env)
    "$BFO" stream --json --probe-timeout-ms 2000 --silence-ms 4000 --trace-rails ${BFO_STREAM_ARGS:-} "$@" \
        > "$OUT/json.$ROLE" 2> "$OUT/err.$ROLE" &
    STREAM_PID=$!
}
# hung_dump PID: where each of a process's threads is (its state, the
# system call it is in, its kernel stack): a stream that does not end may be
# held in the kernel (rxe), where no signal reaches it
hung_dump() {
    local p=$1 t
    echo "--- bfo stream (pid $p) did not end: its threads"
    for t in /proc/"$p"/task/*; do
        [ -d "$t" ] || continue
        echo "thread ${t##*/}: state $(awk '{print $3}' "$t/stat" 2>/dev/null)," \
            "wchan $(cat "$t/wchan" 2>/dev/null), syscall $(cut -d' ' -f1 "$t/syscall" 2>/dev/null)"
        sed 's/^/    /' "$t/stack" 2>/dev/null
    done
}
# wait_stream SEC: waits at most SEC for the stream; sets rc.
wait_stream() {
    local t=$1
    local end=$((SECONDS + t))
    while [ "$SECONDS" -lt "$end" ]; do kill -0 "$STREAM_PID" 2>/dev/null || break; pause 0.1; done
    if kill -0 "$STREAM_PID" 2>/dev/null; then
        hung_dump "$STREAM_PID" >> "$OUT/err.$ROLE" 2>&1
        kill -9 "$STREAM_PID"
        wait "$STREAM_PID" 2>/dev/null
        rc=124
        return
    fi
    wait "$STREAM_PID"; rc=$?
}
STREAM_JSON=$OUT/json.a
. "$(dirname "${BASH_SOURCE[0]}")/../stream_json.sh"
summary() {
    say "messages $(jget messages), bytes $(jget bytes), verified $(jget verified), lost $(jget lost)," \
        "failovers $(jget failovers), readmissions $(jget readmissions), recovery_ms_max $(jget recovery_ms_max)," \
        "failover_ms_max $(jget failover_ms_max)," \
        "stall_ms_max $(jget stall_ms_max), per_rail_bytes [$(jrail 0),$(jrail 1),$(jrail 2)], elapsed_ms $(jget elapsed_ms)"
}

# mono: CLOCK_MONOTONIC seconds (the backend's log lines carry the same clock)
mono() { local u _; read -r u _ < /proc/uptime; echo "$u"; }
# first_log_after T PATTERN: the time of the first verbs log line of rank
# 0 after T that matches PATTERN (empty if none)
first_log_after() {
    sed -n 's/^bfo-verbs\[[0-9]*\] \([0-9.]*\): \(.*\)$/\1 \2/p' "$OUT/err.$ROLE" |
        awk -v t="$1" -v p="$2" '$1 >= t && $0 ~ p { print $1; exit }'
}
ms_between() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f", (b - a) * 1000 }'; }
# rail_moves_at_end R: in the last 3 s of rank 0's timeline (--timeline
# 250) rail R is UP and moves data: it came back and carries traffic again
rail_moves_at_end() {
    grep ' MB/s ' "$OUT/err.a" | tail -12 |
        awk -F'|' -v r="$1" '{ f = $(r + 2); if (f ~ /UP/) { split(f, w, " "); if (w[3] + 0 > 0) ok = 1 } } END { exit !ok }'
}
# moving: waits until this rank's stream has both verbs rails connected
# (its log says so) and then SEC more (default 2): the guests boot at
# their own pace, a fault must hit a stream that is moving.
moving() {
    for _ in $(seq 600); do
        [ "$(grep -c 'rail [01]: CONNECTED' "$OUT/err.$ROLE" 2>/dev/null)" -ge 2 ] && break
        pause 0.1
    done
    pause "${1:-2}"
}
