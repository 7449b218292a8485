#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# (m) A rank that computes: rank 1 runs a busy loop that makes no call into
# bfo for 60 s while rank 0 streams to it (its sends queue up behind the
# window).  Its peer's kernel still acknowledges every TCP segment, so rank
# 0's engine counts rank 1 busy, not failed (docs/engine-design.md, "The
# failure detector"): afterwards every message is verified, and neither rank
# mapped a rail out, lost a connection, or saw a peer unreachable.  Then
# the same over a shared-memory rail next to TCP (the peer's pidfd vouches
# for it), with bfo_net's progress thread on (BFO_PROGRESS_THREAD=1), and
# with every rank computing at once (nobody listens, so nobody's silence
# counts), and with the peer's kernel withholding answers to window probes
# (tcp_invalid_ratelimit raised in the namespace), shorter; and with the
# progress thread on and nothing to receive (an idle peer).  COMPUTE_S overrides the 60 s (a quicker local run);
# T14_ONLY, a pattern, runs only the cases it matches.
# A minute is long on a shared loopback: another test's faults (ss -K on a
# rail address, an nftables drop) would reach these connections too.  Run
# in a network namespace of its own when one can be made (root).
if [ -z "${BFO_T13_NETNS:-}" ] && command -v unshare >/dev/null && command -v ip >/dev/null &&
    unshare -n true 2>/dev/null; then
    exec unshare -n env BFO_T13_NETNS=1 bash -c 'ip link set lo up && exec bash "$0"' "$0"
fi
. "$(dirname "$0")/lib.sh"
COMPUTE_S=${COMPUTE_S:-60}
[ -n "${BFO_T13_NETNS:-}" ] && echo "   (in a network namespace of its own: other tests' faults cannot reach it)"

# wait_long SECONDS: wait_bg with a longer bound than its 60 s
wait_long() {
    timeout "$1" tail --pid="$LAUNCHER" -f /dev/null
    wait "$LAUNCHER"; rc=$?; LAUNCHER=
}

# one_run NAME COMPUTE_S [env...]: rank 1 (WHO) computes from 1 s for
# COMPUTE_S seconds; rank 0 streams until 3 s after that.
one_run() {
    local name=$1 secs=$2 who=${WHO:-1}
    shift 2
    # T14_ONLY (a grep -E pattern): only the cases whose name matches
    if [ -n "${T14_ONLY:-}" ] && ! echo "$name" | grep -Eq "$T14_ONLY"; then
        echo "   skipped (T14_ONLY): $name"
        return 0
    fi
    rm -f "$WORK/pids" "$WORK/out"
    env "$@" "$BFO_TCP" run -n 2 --rails "$RAILS" --pidfile "$WORK/pids" --timeout $((secs + 60)) -- \
        "$BFO_TCP" stream --json --duration $((secs + 4)) --compute "$who:1:$secs" --window 16 --trace-rails ${EXTRA:-} \
        --timeout $((secs + 50)) > "$WORK/out" 2> "$WORK/err" &
    LAUNCHER=$!
    wait_long $((secs + 70))
    [ "$rc" = 0 ] || fail "$name: exit status $rc"
    [ "$(grep -c "computed $secs.0 s without a call into bfo" "$WORK/err")" = "$([ "$who" = all ] && echo 2 || echo 1)" ] ||
        fail "$name: rank $who did not compute"
    check_exact
    [ "$(jget failovers)" = 0 ] || fail "$name: $(jget failovers) rail(s) mapped out"
    [ "$(jget unreachable)" = 0 ] || fail "$name: $(jget unreachable) operation(s) failed unreachable"
    [ "$(jget dead_peers)" = 0 ] || fail "$name: a peer was given up"
    [ "$(jget conn_errors)" = 0 ] || fail "$name: $(jget conn_errors) connection(s) lost"
    case "$*" in
    *BFO_PROGRESS_THREAD=1*) [ "$(jget thread_rounds)" -gt 0 ] || fail "$name: the progress thread never ran" ;;
    *) [ "$who" = all ] || [ "$(jget host_heard)" -gt 0 ] || fail "$name: no host evidence reached the engine" ;;
    esac
    summary
    echo "   rank $who made no call for $secs s: the longest pause in completions $(jget stall_ms_max) ms," \
        "no failover, no connection lost; host heard $(jget host_heard) times, $(jget nudges) nudges," \
        "progress thread rounds $(jget thread_rounds)"
    echo "ok: t14 a rank computing $secs s ($name)"
}

one_run "tcp rails" "$COMPUTE_S"
# The peer's kernel answers a zero-window probe at most once per
# net.ipv4.tcp_invalid_ratelimit: raised to 1 s (this namespace's own),
# answers are withheld early in the closed window, up to 1.2 s apart (rails
# were mapped out when only answered probes counted as the host heard).
if [ -n "${BFO_T13_NETNS:-}" ] && sysctl -qw net.ipv4.tcp_invalid_ratelimit=1000 2>/dev/null; then
    one_run "tcp rails, window probes' answers withheld" 10
    skipped=$(nstat -az TcpExtTCPACKSkippedSeq 2>/dev/null | awk '/TCPACKSkippedSeq/ {print $2}')
    echo "   answers withheld by the peer's kernel (TcpExtTCPACKSkippedSeq): ${skipped:-?}"
    sysctl -qw net.ipv4.tcp_invalid_ratelimit=500
fi
RAILS=shm,127.0.0.2 one_run "shm and tcp rails" 10
one_run "tcp rails, progress thread" 10 BFO_PROGRESS_THREAD=1
# An idle peer: nothing is sent or received until 2 s after the computing
# ends, so the progress thread answers every heartbeat probe on both rails
# (its answers' completions once filled the control budget: no probe was
# answered after 1.6 s, both rails were mapped out 3 s later).
EXTRA="--send-delay-ms 12000 --recv-delay-ms 12000" one_run "tcp rails, progress thread, an idle peer" 10 BFO_PROGRESS_THREAD=1
WHO=all one_run "tcp rails, every rank at once" 10
