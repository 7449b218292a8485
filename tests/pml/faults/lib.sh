# SPDX-License-Identifier: BSD-3-Clause
# lib.sh - shared by tests/pml/faults/f*.sh (README.md there says what each does).
#
# Every run happens in a network namespace the test creates (and deletes,
# also on failure, timeout or ^C: trap), so that `ss -K` and nftables
# touch nothing but the test's own connections; Open MPI's runtime talks
# over the namespace's own lo (127.0.0.1), which is never touched.
#   PML=bfo  the component under test: rails 127.0.0.2 (rail 0) and
#            127.0.0.3 (rail 1) on the namespace's lo
#   PML=ob1  Open MPI's ob1 over the tcp btl, pinned to a veth pair inside
#            the namespace: bfr0 10.201.1.1/24 (rail 0), bfr1 10.201.2.1/24
#            (rail 1); ob1 on lo cannot be pinned to 127.0.0.2/.3
#
# Environment:
#   PML             bfo (default) or ob1
#   FAULTS_STREAM   the stream binary (faults.mk sets it)
#   BFO_PML_DIR     where mca_pml_bfo.so is (default: <repo>/build/gcc/pml)
#   BFO_REQUIRE=1   a missing or unloadable component fails instead of skipping
#   FAULTS_NETNS=0  PML=bfo only: run on the host's lo instead (then `ss -K`
#                   and the nft rule hit every 127.0.0.2/.3 connection of the
#                   machine, other tests' too)
#   DURATION        seconds each stream runs (default 8)
#   NP              ranks of the reset and drop streams (default 2; 4: pairs 0-1, 2-3)
#   RUN_TIMEOUT     hard bound of one mpirun, seconds (default 60): then killed
#   HANG_S          no byte moving for this long after a fault = hang (default 12)
#   PML_EXTRA       more mpirun arguments
#   FAULTS_RESULTS  a file each run appends "scenario|pml|outcome|detail" to
#   KEEP=1          keep the work directory (outputs) and print where it is
set -u
FAULTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$FAULTS_DIR/../../.." && pwd)
PML=${PML:-bfo}
FAULTS_STREAM=${FAULTS_STREAM:-$REPO/build/gcc/pml/faults/stream}
BFO_PML_DIR=${BFO_PML_DIR:-$REPO/build/gcc/pml}
FAULTS_NETNS=${FAULTS_NETNS:-1}
DURATION=${DURATION:-8}
NP=${NP:-2}
RUN_TIMEOUT=${RUN_TIMEOUT:-60}
HANG_S=${HANG_S:-12}
PML_EXTRA=${PML_EXTRA:-}
FAULTS_RESULTS=${FAULTS_RESULTS:-}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

T_PASS=0 T_FAIL=0 T_SKIP=0 T_NOTE=0
ok()   { echo "ok: $*"; T_PASS=$((T_PASS + 1)); }
fail() { echo "FAIL: $*"; T_FAIL=$((T_FAIL + 1)); }
skip() { echo "skip: $*"; T_SKIP=$((T_SKIP + 1)); }
note() { echo "note: $*"; T_NOTE=$((T_NOTE + 1)); }
finish() {
    local extra=""
    [ $T_SKIP -gt 0 ] && extra+=", $T_SKIP skipped"
    [ $T_NOTE -gt 0 ] && extra+=", $T_NOTE noted"
    echo "tests: $T_PASS passed, $T_FAIL failed${extra:+ (${extra#, })}"
    [ $T_FAIL = 0 ]
}
record() { [ -n "$FAULTS_RESULTS" ] && echo "$1|$PML|$2|$3" >> "$FAULTS_RESULTS"; return 0; }
# record_skip WHY: a skip for each of the script's SCENARIOS
record_skip() { local s; for s in "${SCENARIOS[@]}"; do record "$s" skip "$1"; done; }

WORK=$(mktemp -d /tmp/bfo-pmlfaults.XXXXXX)
NS=
NFT_TABLE=bfo_pmlfaults_$$
MPIRUN_PID=
cleanup() {
    trap - EXIT INT TERM
    # our own processes only: mpirun and its ranks by the pids we wrote
    # down, and (with a namespace) whatever still runs in the namespace we made
    [ -n "$MPIRUN_PID" ] && { kill -9 "$MPIRUN_PID"; wait "$MPIRUN_PID"; } 2>/dev/null
    kill_ranks
    [ "$FAULTS_NETNS" = 0 ] && nft delete table ip "$NFT_TABLE" 2>/dev/null
    if [ -n "$NS" ]; then
        ip netns del "$NS" 2>/dev/null
    fi
    if [ "${KEEP:-0}" = 1 ]; then echo "   (outputs kept in $WORK)"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'echo "FAIL: interrupted"; exit 130' INT TERM

kill_ranks() {
    local p
    if [ -n "$NS" ]; then
        for p in $(ip netns pids "$NS" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
    fi
    for f in "$WORK"/*.out; do
        [ -f "$f" ] || continue
        for p in $(sed -n 's/^start rank=[0-9]* .*pid=\([0-9]*\) .*/\1/p' "$f"); do kill -9 "$p" 2>/dev/null; done
    done
    return 0
}

# in_ns CMD...: CMD inside the test's namespace (or here, FAULTS_NETNS=0)
in_ns() { if [ -n "$NS" ]; then ip netns exec "$NS" "$@"; else "$@"; fi; }

# needs: root, ip, ss, nft (callers say which), mpirun, the stream binary;
# PML=bfo: the component.  Prints skip/FAIL and returns 1 when not runnable.
preflight() { # $1: test name; $2...: extra tools needed
    local name=$1 t; shift
    command -v mpirun >/dev/null || { skip "$name (no mpirun: apt-get install openmpi-bin)"; return 1; }
    [ -x "$FAULTS_STREAM" ] || { fail "$name: $FAULTS_STREAM not built (make -f tests/pml/faults/faults.mk faults-stream)"; return 1; }
    [ "$(id -u)" = 0 ] || { skip "$name (needs root: netns, ss -K, nftables)"; return 1; }
    for t in ip ss "$@"; do command -v "$t" >/dev/null || { skip "$name (no $t)"; return 1; }; done
    case $PML in
    bfo)
        if [ ! -f "$BFO_PML_DIR/mca_pml_bfo.so" ]; then
            if [ "${BFO_REQUIRE:-0}" = 1 ]; then fail "$name: component not built ($BFO_PML_DIR/mca_pml_bfo.so)"
            else skip "$name: component not built ($BFO_PML_DIR/mca_pml_bfo.so)"; fi
            record_skip "component not built"
            return 1
        fi
        if ! OMPI_MCA_mca_base_component_path="$(pkglibdir):$BFO_PML_DIR" ompi_info 2>/dev/null | grep -q 'MCA pml: bfo'; then
            if [ "${BFO_REQUIRE:-0}" = 1 ]; then fail "$name: ompi_info does not list pml bfo from $BFO_PML_DIR"
            else skip "$name: component not loadable (ompi_info does not list pml bfo from $BFO_PML_DIR)"; fi
            record_skip "component not loadable"
            return 1
        fi ;;
    ob1) ;;
    *) fail "$name: PML=$PML (bfo or ob1)"; return 1 ;;
    esac
    return 0
}
pkglibdir() { ompi_info --path pkglibdir | sed 's/.*: *//'; }

# setup_net: the namespace, its lo up (Open MPI's runtime and bfo's rails);
# for ob1 a veth pair with one address per rail.  Sets RAIL0 RAIL1 (the
# addresses whose connections the faults hit) and PML_ARGS.
setup_net() {
    if [ "$PML" = ob1 ] || [ "$FAULTS_NETNS" != 0 ]; then
        NS=bfopf$$
        ip netns add "$NS" || { fail "ip netns add $NS"; return 1; }
        ip -n "$NS" link set lo up || { fail "lo up in $NS"; return 1; }
    fi
    case $PML in
    bfo)
        RAIL0=127.0.0.2 RAIL1=127.0.0.3
        PML_ARGS=(--mca mca_component_path "$(pkglibdir):$BFO_PML_DIR" --mca pml bfo
                  --mca pml_bfo_rails "$RAIL0,$RAIL1") ;;
    ob1)
        RAIL0=10.201.1.1 RAIL1=10.201.2.1
        ip -n "$NS" link add bfr0 type veth peer name bfr1 &&
            ip -n "$NS" addr add "$RAIL0/24" dev bfr0 && ip -n "$NS" addr add "$RAIL1/24" dev bfr1 &&
            ip -n "$NS" link set bfr0 up && ip -n "$NS" link set bfr1 up || { fail "veth pair in $NS"; return 1; }
        PML_ARGS=(--mca pml ob1 --mca btl "self,tcp" --mca btl_tcp_if_include "bfr0,bfr1") ;;
    esac
    # shellcheck disable=SC2206
    PML_ARGS+=($PML_EXTRA)
    return 0
}

now() { date +%s.%N | cut -c1-14; }
fsub() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a - b }'; }

# start_stream NAME NP MPIRUN_ARGS... -- STREAM_ARGS...: mpirun in the
# background, its output in $WORK/NAME.out (OUT)
start_stream() {
    local name=$1 np=$2; shift 2
    local margs=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do margs+=("$1"); shift; done
    [ "${1:-}" = -- ] && shift
    OUT=$WORK/$name.out
    : > "$OUT"
    RUN_START=$(now)
    local pre=()
    [ -n "$NS" ] && pre=(ip netns exec "$NS")
    # ip netns exec execs mpirun: $! is mpirun's pid
    "${pre[@]}" mpirun --allow-run-as-root --oversubscribe -np "$np" \
        --mca oob_tcp_if_include lo "${PML_ARGS[@]}" "${margs[@]}" \
        "$FAULTS_STREAM" --progress 0.25 "$@" > "$OUT" 2>&1 &
    MPIRUN_PID=$!
    FAULT_TIMES=()
    HUNG=0 TIMED_OUT=0
}

# progress_bytes: the sum of every rank's latest progress bytes
progress_bytes() {
    awk '/^progress rank=/ { for (i = 2; i <= NF; i++) if ($i ~ /^(rank|bytes)=/) { split($i, kv, "="); v[kv[1]] = kv[2] } last[v["rank"]] = v["bytes"] }
         END { s = 0; for (r in last) s += last[r]; printf "%.0f\n", s }' "$OUT"
}
summaries() { grep -c '^{"summary":1' "$OUT"; }

# wait_traffic SECONDS: until rank 0 reports bytes after SECONDS of
# streaming; 1 when the stream ended or nothing moved within 30 s
wait_traffic() {
    local want=$1
    for _ in $(seq 300); do
        kill -0 "$MPIRUN_PID" 2>/dev/null || return 1
        if awk -v w="$want" '/^progress rank=0 / { for (i = 2; i <= NF; i++) { if ($i ~ /^el=/) el = substr($i, 4) + 0; if ($i ~ /^bytes=/) b = substr($i, 7) + 0 } if (el >= w && b > 0) f = 1 } END { exit !f }' "$OUT"; then
            return 0
        fi
        sleep 0.1
    done
    return 1
}

# fault_mark WHAT: notes the time of a fault
fault_mark() { FAULT_TIMES+=("$(now)"); echo "   $(fsub "$(now)" "$RUN_START")s: $1"; }

# ss_kill ADDR: kills every TCP connection from or to ADDR (ss -K dst, src);
# KILLED: how many sockets
ss_kill() {
    local a b
    a=$(in_ns ss -K -t dst "$1" 2>/dev/null | tail -n +2 | grep -c .)
    b=$(in_ns ss -K -t src "$1" 2>/dev/null | tail -n +2 | grep -c .)
    KILLED=$((a + b))
}

# watch_run NP: waits for mpirun (RUN_TIMEOUT seconds at most from its
# start); a stream where no byte moves for HANG_S seconds (before every
# rank has printed its summary) is a hang.  Either way mpirun and the
# ranks are killed.  Sets RC, HUNG (HUNG_AT), TIMED_OUT, RUN_END.
watch_run() {
    local last=-1 changed b np=$1 t
    changed=$(now)
    while kill -0 "$MPIRUN_PID" 2>/dev/null; do
        t=$(now)
        b=$(progress_bytes)
        if [ "$b" != "$last" ]; then last=$b; changed=$t; fi
        if [ "$(summaries)" -lt "$np" ] && awk -v n="$t" -v c="$changed" -v h="$HANG_S" 'BEGIN { exit !(n - c > h) }'; then
            HUNG=1 HUNG_AT=$changed
            break
        fi
        if awk -v n="$t" -v s="$RUN_START" -v h="$RUN_TIMEOUT" 'BEGIN { exit !(n - s > h) }'; then
            TIMED_OUT=1
            break
        fi
        sleep 0.2
    done
    RUN_END=$(now)
    if [ $HUNG = 1 ] || [ $TIMED_OUT = 1 ]; then
        kill -TERM "$MPIRUN_PID" 2>/dev/null
        for t in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$MPIRUN_PID" 2>/dev/null || break; sleep 0.2; done
        kill -9 "$MPIRUN_PID" 2>/dev/null
    fi
    wait "$MPIRUN_PID" 2>/dev/null; RC=$?
    MPIRUN_PID=
    kill_ranks
    return 0
}

# jsum KEY: the sum of KEY over the ranks' summary lines
jsum() { sed -n 's/^{"summary":1,.*"'"$1"'":\([0-9]*\).*/\1/p' "$OUT" | awk '{ s += $1 } END { printf "%.0f\n", s }'; }

# stall_max: the longest time (s) in which rank R's received bytes did not
# move, from its progress lines (0.25 s apart)
stall_max() { # $1: rank
    awk -v r="$1" '$1 == "progress" && $2 == "rank=" r {
            for (i = 3; i <= NF; i++) { if ($i ~ /^t=/) t = substr($i, 3) + 0; if ($i ~ /^rx_bytes=/) b = substr($i, 10) + 0 }
            if (!started) { started = 1; lt = t; lb = b; next }
            if (b != lb) { if (t - lt > m) m = t - lt; lt = t; lb = b }
        } END { printf "%.2f", m }' "$OUT"
}

# openmpi_says: the first lines Open MPI (not the stream) printed
openmpi_says() {
    grep -v -E '^(start|progress|peer|finalized|error|dead|corrupt|count|finalize) rank=|^\{"summary"|^-+$|^$' "$OUT" |
        grep -E 'FATAL|noticed|abort|reset|disconnect|failed|ERROR|error|exited|terminated' | head -${1:-4} | cut -c1-200 | sed 's/^/      | /'
}

# classify NP: OUTCOME (completed|corruption|hang|timeout|mpi-error|abort|
# incomplete) and DETAIL for a pair-mode run
classify() {
    local np=$1 n cor cnt merr msgs txm ver byt
    n=$(summaries)
    cor=$(jsum corrupt) cnt=$(jsum count_errors) merr=$(jsum mpi_errors)
    msgs=$(jsum messages) txm=$(jsum tx_messages) ver=$(jsum verified) byt=$(jsum bytes)
    local c_lines e_lines
    c_lines=$(grep -c -E '^(corrupt|count) rank=' "$OUT")
    e_lines=$(grep -c '^error rank=' "$OUT")
    if [ "$cor" -gt 0 ] || [ "$cnt" -gt 0 ] || [ "$c_lines" -gt 0 ]; then
        OUTCOME=corruption
        DETAIL="$c_lines corrupt/count reports: $(grep -m1 -E '^(corrupt|count) rank=' "$OUT" | cut -c1-160)"
    elif [ "$HUNG" = 1 ]; then
        OUTCOME=hang
        DETAIL="no byte moved for ${HANG_S}s (from $(fsub "$HUNG_AT" "$RUN_START")s, first fault at $(fsub "${FAULT_TIMES[0]:-$RUN_START}" "$RUN_START")s); killed"
    elif [ "$TIMED_OUT" = 1 ]; then
        OUTCOME=timeout
        DETAIL="mpirun still running after ${RUN_TIMEOUT}s; killed"
    elif [ "$e_lines" -gt 0 ] || [ "$merr" -gt 0 ]; then
        OUTCOME=mpi-error
        DETAIL="$(grep -m1 '^error rank=' "$OUT" | cut -c1-200)"
    elif [ "$RC" != 0 ] || [ "$n" -lt "$np" ]; then
        OUTCOME=abort
        DETAIL="mpirun exit $RC after $(fsub "$RUN_END" "$RUN_START")s ($(fsub "$RUN_END" "${FAULT_TIMES[0]:-$RUN_START}")s after the first fault), $n of $np summaries"
    elif [ "$msgs" != "$txm" ] || [ "$ver" != "$msgs" ] || [ "$msgs" = 0 ]; then
        OUTCOME=incomplete
        DETAIL="received $msgs of $txm messages, $ver verified"
    else
        OUTCOME=completed
        DETAIL="$msgs messages, $(awk -v b="$byt" 'BEGIN { printf "%.2f", b / 1e9 }') GB, every byte verified"
    fi
}

# after_fault_bytes: bytes received after the last fault (rank 1's rx
# bytes at the end minus the last progress before the fault)
after_fault_bytes() {
    local f=${FAULT_TIMES[-1]}
    awk -v f="$f" '$1 == "progress" && $2 == "rank=1" {
            for (i = 3; i <= NF; i++) { if ($i ~ /^t=/) t = substr($i, 3) + 0; if ($i ~ /^rx_bytes=/) b = substr($i, 10) + 0 }
            if (t <= f) before = b; last = b }
        END { printf "%.0f\n", last - before }' "$OUT"
}
gb() { awk -v b="$1" 'BEGIN { printf "%.2f GB", b / 1e9 }'; }

show_tail() { echo "   --- output (last ${2:-15} lines without progress)"; grep -v '^progress' "$OUT" | tail -"${2:-15}" | cut -c1-220 | sed 's/^/   | /'; }

# reset_run NAME RAIL...: an NP-rank stream (DURATION s, stream arguments
# EXTRA as well); once traffic flows
# (1.5 s in), every connection of each RAIL (0 or 1) is reset with ss -K,
# BOTH_PAUSE seconds (default 1.5) apart; then classify.  RESETS lists how
# many sockets each reset killed.
reset_run() {
    local name=$1 r addr first=1; shift
    RESETS=""
    # shellcheck disable=SC2086
    start_stream "$name" "$NP" -- --duration "$DURATION" --finalize-timeout 10 ${EXTRA:-}
    if ! wait_traffic 1.5; then
        watch_run "$NP"; classify "$NP"
        DETAIL="no traffic before the fault: $OUTCOME ($DETAIL)"; OUTCOME=no-traffic
        return
    fi
    for r in "$@"; do
        [ $first = 1 ] || sleep "${BOTH_PAUSE:-1.5}"
        first=0
        addr=$(eval echo "\$RAIL$r")
        ss_kill "$addr"
        RESETS+="${RESETS:+,}$KILLED"
        fault_mark "ss -K dst/src $addr (rail $r): $KILLED sockets killed"
    done
    watch_run "$NP"
    classify "$NP"
}
