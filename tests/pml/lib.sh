# SPDX-License-Identifier: BSD-3-Clause
# tests/pml/lib.sh - how the MPI point-to-point tests run mpirun; sourced
# by every script of tests/pml/ (bash).
#
#   PML           bfo (default), ob1 or ucx: the PML under test
#   BFO_PML_DIR   where mca_pml_bfo.so is (default build/gcc/pml, made
#                 absolute)
#   BFO_PML_TEST_DIR where the test build of mca_pml_bfo.so is (make
#                 pml-test; default build/gcc/pml-test): the hooks.* tests
#   BFO_PML_RAILS the rails bfo stripes over (default 127.0.0.2,127.0.0.3)
#   PMLT_TIMEOUT  seconds one mpirun may take (default 60; some tests more)
#   PMLT_NP       rank counts to run (default "2 4")
#   PMLT_ONLY     run only the tests whose name matches this extended regex
#   PMLT_BUILD    where the programs and logs go (default build/pml-tests)
#   PMLT_PYTHON   the Python with mpi4py (default /usr/bin/python3)
#   SHORT=1       the compute test computes 10 s, not 60
#                 (PMLT_COMPUTE_SECS sets it exactly)
#
# Each test prints one line, "ok: NAME np=N (T s)" or "FAIL: NAME np=N: why"
# (a hang is a FAIL that names the test), or "skip: NAME: why"; the runner
# ends with "tests: P passed, F failed" and exits nonzero on any failure.

PMLT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PML=${PML:-bfo}
BFO_PML_DIR=${BFO_PML_DIR:-$PMLT_ROOT/build/gcc/pml}
case $BFO_PML_DIR in /*) ;; *) BFO_PML_DIR=$PWD/$BFO_PML_DIR ;; esac
BFO_PML_TEST_DIR=${BFO_PML_TEST_DIR:-$PMLT_ROOT/build/gcc/pml-test}
case $BFO_PML_TEST_DIR in /*) ;; *) BFO_PML_TEST_DIR=$PWD/$BFO_PML_TEST_DIR ;; esac
BFO_PML_RAILS=${BFO_PML_RAILS:-127.0.0.2,127.0.0.3}
PMLT_TIMEOUT=${PMLT_TIMEOUT:-60}
PMLT_NP=${PMLT_NP:-2 4}
PMLT_ONLY=${PMLT_ONLY:-}
PMLT_BUILD=${PMLT_BUILD:-$PMLT_ROOT/build/pml-tests}
case $PMLT_BUILD in /*) ;; *) PMLT_BUILD=$PWD/$PMLT_BUILD ;; esac
PMLT_PYTHON=${PMLT_PYTHON:-/usr/bin/python3}
PMLT_LOGS=$PMLT_BUILD/logs
if [ -z "${PMLT_COMPUTE_SECS:-}" ]; then
    if [ "${SHORT:-0}" = 1 ]; then PMLT_COMPUTE_SECS=10; else PMLT_COMPUTE_SECS=60; fi
fi
export PMLT_COMPUTE_SECS

pmlt_passed=0
pmlt_failed=0
pmlt_skipped=0

# PML_ARGS: the mpirun options that select the PML under test
pmlt_pml_args() {
    local pkglibdir
    case $PML in
    bfo)
        pkglibdir=$(ompi_info --path pkglibdir | sed 's/.*: *//')
        PML_ARGS=(--mca mca_component_path "$pkglibdir:$BFO_PML_DIR" --mca pml bfo
                  --mca pml_bfo_rails "$BFO_PML_RAILS"
                  # 4 ranks on 2 cores, next to other jobs: wide enough that
                  # a rank starved of CPU is never taken for a lost one
                  --mca pml_bfo_probe_timeout_ms "${BFO_PML_PROBE_MS:-200}"
                  --mca pml_bfo_peer_timeout_ms "${BFO_PML_PEER_MS:-60000}")
        ;;
    ob1) PML_ARGS=(--mca pml ob1 --mca btl self,vader,tcp) ;;
    ucx) PML_ARGS=(--mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any -x UCX_TLS=tcp,self) ;;
    *)
        echo "PML=$PML: must be bfo, ob1 or ucx" >&2
        return 1
        ;;
    esac
}

# pml_mpirun NP CMD...: mpirun under the PML (no timeout of its own)
pml_mpirun() {
    local np=$1
    shift
    mpirun --allow-run-as-root --oversubscribe -np "$np" "${PML_ARGS[@]}" "$@"
}

pmlt_wanted() { [ -z "$PMLT_ONLY" ] || [[ $1 =~ $PMLT_ONLY ]]; }
pmlt_any_wanted() {   # NAME...: is any of them wanted?
    local n
    for n; do pmlt_wanted "$n" && return 0; done
    return 1
}

pmlt_skip() {   # NAME WHY
    echo "skip: $1: $2"
    pmlt_skipped=$((pmlt_skipped + 1))
}

pmlt_fail() {   # NAME WHY [LOG]
    echo "FAIL: $1: $2"
    if [ -n "${3:-}" ] && [ -s "$3" ]; then
        # the programs' own FAIL lines first, then the end of the log
        grep -m 5 '^FAIL' "$3" | sed 's/^/    /'
        tail -n 8 "$3" | sed 's/^/    | /'
        echo "    (whole log: $3)"
    fi
    pmlt_failed=$((pmlt_failed + 1))
}

# pmlt_bounded SECS LOG CMD...: CMD with output to LOG, killed after SECS
# (status 124, like timeout(1)); before that, when gdb is there and
# PMLT_BACKTRACE is not 0, the stacks of CMD's child processes (the ranks)
# go to LOG.bt. Only the processes this started are signalled, by pid.
pmlt_bounded() {
    local to=$1 log=$2 pid kids k n=0 hung=0
    shift 2
    rm -f "$log.bt"
    "$@" >"$log" 2>&1 </dev/null &
    pid=$!
    local deadline=$((SECONDS + to))
    while kill -0 "$pid" 2>/dev/null; do
        if [ "$SECONDS" -ge "$deadline" ]; then
            hung=1
            kids=$(pgrep -P "$pid")
            if [ "${PMLT_BACKTRACE:-1}" != 0 ] && command -v gdb >/dev/null; then
                for k in $kids; do
                    echo "== pid $k: $(tr '\0' ' ' <"/proc/$k/cmdline" 2>/dev/null)"
                    timeout 20 gdb -p "$k" -batch -ex 'thread apply all bt' 2>/dev/null | grep -E '^(#|Thread)'
                done >"$log.bt"
            fi
            kill -TERM "$pid" 2>/dev/null
            for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
            kill -KILL "$pid" $kids 2>/dev/null
            break
        fi
        # poll fast at first: most runs take well under a second
        if [ $n -lt 50 ]; then sleep 0.02; else sleep 0.2; fi
        n=$((n + 1))
    done
    wait "$pid"
    local rc=$?
    [ $hung = 0 ] || rc=124
    return $rc
}

# pmlt_run NAME NP TIMEOUT CMD...: one mpirun, judged by its exit code, by
# its output matching PMLT_EXPECT (default: a "case ...: passed" line) and,
# if PMLT_CHECK names a function, by that function (called with the log and
# NP; it prints why and returns nonzero to fail the test); "NOTE: ..."
# lines of the output are appended to the ok line
pmlt_run() {
    local name=$1 np=$2 to=$3
    shift 3
    local log="$PMLT_LOGS/$name.np$np.log" expect=${PMLT_EXPECT:-'^case .*: passed'}
    mkdir -p "$PMLT_LOGS"
    local t0 t1 rc why
    t0=$(date +%s.%N)
    pmlt_bounded "$to" "$log" mpirun --allow-run-as-root --oversubscribe -np "$np" "${PML_ARGS[@]}" "$@"
    rc=$?
    t1=$(date +%s.%N)
    local dt
    dt=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
    if [ $rc -eq 124 ]; then
        pmlt_fail "$name np=$np" "HUNG: $name did not finish within $to s; killed (mpirun: $*)" "$log"
        if [ -s "$log.bt" ]; then
            echo "    where the ranks were (all threads: $log.bt):"
            grep -E '^== |^#[0-9]+ .* in (P?MPI_[A-Za-z_]+|case_[a-z_]+|main) ' "$log.bt" |
                awk '/^== / { print "      " $0; n = 0; next } n++ < 4 { print "        " $0 }' | head -n 40
        fi
    elif [ $rc -ne 0 ]; then
        pmlt_fail "$name np=$np" "exit $rc after $dt s (mpirun: $*)" "$log"
    elif ! grep -Eq "$expect" "$log"; then
        pmlt_fail "$name np=$np" "exit 0 but no line matching '$expect' in its output" "$log"
    elif [ -n "${PMLT_CHECK:-}" ] && ! why=$("$PMLT_CHECK" "$log" "$np"); then
        pmlt_fail "$name np=$np" "$why" "$log"
    else
        local notes
        notes=$(sed -n 's/^NOTE: //p' "$log" | sort -u | awk 'NR > 1 { printf " | " } { printf "%s", $0 }')
        echo "ok: $name np=$np (${dt} s)${notes:+ -- $notes}"
        pmlt_passed=$((pmlt_passed + 1))
    fi
}

# pmlt_summary: the closing line; status 1 if anything failed or nothing ran
pmlt_summary() {
    [ "$pmlt_skipped" -eq 0 ] || echo "($pmlt_skipped skipped)"
    echo "tests: $pmlt_passed passed, $pmlt_failed failed"
    [ "$pmlt_failed" -eq 0 ] && [ "$pmlt_passed" -gt 0 ]
}
