# SPDX-License-Identifier: BSD-3-Clause
# lib.sh - shared by tests/tcp/t*.sh.  Needs BFO_TCP (the bfo binary: bfo run, bfo stream).
set -u
: "${BFO_TCP:?set BFO_TCP to the bfo binary (make check-tcp does)}"
BFO_TCP=$(readlink -f "$BFO_TCP")
RAILS=127.0.0.1,127.0.0.2
WORK=$(mktemp -d /tmp/bfo-tcp-test.XXXXXX)
CLEANUP=()
cleanup() {
    local c
    for c in "${CLEANUP[@]}"; do eval "$c" >/dev/null 2>&1 || true; done
    # our own launcher and children only, by the pids we wrote down
    if [ -f "$WORK/pids" ]; then
        while read -r _ pid; do kill -9 "$pid" 2>/dev/null || true; done < "$WORK/pids"
    fi
    [ -n "${LAUNCHER:-}" ] && kill -9 "$LAUNCHER" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT

fail() {
    echo "FAIL: $*"
    # the first rails failed on a timeout, with the evidence (--trace-rails)
    grep -q '  the rail heard' "$WORK/err" 2>/dev/null &&
        { echo "--- the first rails timed out (--trace-rails)"; grep -m 4 -B1 '  the rail heard' "$WORK/err"; }
    echo "--- stderr (last 40 lines)"; tail -40 "$WORK/err" 2>/dev/null; exit 1
}

STREAM_JSON=$WORK/out
. "$(dirname "${BASH_SOURCE[0]}")/../stream_json.sh"

# ms_lt A B: A < B for decimal milliseconds
ms_lt() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }

# Starts the launcher in the background: run_bg N [run options] -- stream args
run_bg() {
    local n=$1; shift
    "$BFO_TCP" run -n "$n" --rails "$RAILS" --pidfile "$WORK/pids" "$@" > "$WORK/out" 2> "$WORK/err" &
    LAUNCHER=$!
    for _ in $(seq 100); do [ -s "$WORK/pids" ] && break; sleep 0.05; done
}
# wait_bg: waits (60 s at most) for the launcher run_bg started; sets rc to
# its exit status.
wait_bg() {
    timeout 60 tail --pid="$LAUNCHER" -f /dev/null
    wait "$LAUNCHER"; rc=$?; LAUNCHER=
}
# expect_messages N: rank 0's JSON counts exactly N messages
expect_messages() { [ "$(jget messages)" = "$1" ] || fail "expected $1 messages, got $(jget messages)"; }
# both_rails_carried: each of the two rails carried engine bytes
both_rails_carried() {
    [ "$(jrail 0)" -gt 0 ] && [ "$(jrail 1)" -gt 0 ] || fail "a rail carried nothing: [$(jrail 0),$(jrail 1)]"
}
rank_pid() { awk -v r="$1" '$1 == r { print $2 }' "$WORK/pids"; }
summary() {
    echo "   messages $(jget messages), bytes $(jget bytes), verified $(jget verified), lost $(jget lost)," \
         "duplicates $(jget duplicates), failovers $(jget failovers), readmissions $(jget readmissions)," \
         "recovery_ms_max $(jget recovery_ms_max), stall_ms_max $(jget stall_ms_max)," \
         "per_rail_bytes [$(jrail 0),$(jrail 1)], elapsed_ms $(jget elapsed_ms)," \
         "placed_frames $(jget placed_frames) (dropped $(jget placed_dropped))"
}

# Two ranks started by hand, as across hosts (no `bfo run`), each with its
# own rails: BOOT is a free address for rank 0's bootstrap; start_rank1
# RAILS starts rank 1 in the background (300 messages; $R1 its pid);
# run_rank0 RAILS runs rank 0 (--json into $WORK/out) and waits for rank 1.
BOOT=127.0.0.1:$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
start_rank1() {
    BFO_RANK=1 BFO_SIZE=2 BFO_BOOTSTRAP=$BOOT BFO_RAILS=$1 \
        timeout 60 "$BFO_TCP" stream --count 300 --timeout 40 > "$WORK/out1" 2> "$WORK/err1" &
    R1=$!
    CLEANUP+=("kill -9 $R1")
}
run_rank0() {
    BFO_RANK=0 BFO_SIZE=2 BFO_BOOTSTRAP=$BOOT BFO_RAILS=$1 \
        timeout 60 "$BFO_TCP" stream --json --count 300 --timeout 40 > "$WORK/out" 2> "$WORK/err" ||
        fail "rank 0: exit status $?"
    wait "$R1" || { cp "$WORK/err1" "$WORK/err"; fail "rank 1: exit status $?"; }
}
