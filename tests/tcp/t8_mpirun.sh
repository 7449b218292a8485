#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# (h) Under Open MPI's mpirun (openmpi-bin): 2 processes wire up through PMIx
# (no BFO_RANK/BFO_SIZE/BFO_BOOTSTRAP), 2 loopback rails from BFO_RAILS;
# every message verified.  Skipped when mpirun is missing; fails when the
# binary was built without PMIx (libpmix-dev) while mpirun is there.
. "$(dirname "$0")/lib.sh"
if ! command -v mpirun >/dev/null 2>&1; then
    echo "skip: t8 mpirun (openmpi-bin not installed)"
    exit 0
fi
# Open MPI refuses root without these (CI containers run as root); its own
# wire-up stays on loopback.  Under SAN=1, libpmix 4.2 leaks a few bytes
# (strdup in pmix_rte_init and pmix_bfrops_base_value_load, still there
# after PMIx_Finalize): LeakSanitizer ignores allocations made in libpmix
# only, and still checks ours.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
echo 'leak:libpmix.so' > "$WORK/lsan.supp"
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$WORK/lsan.supp"
unset BFO_RANK BFO_SIZE BFO_BOOTSTRAP
start=$(date +%s%N)
timeout 60 mpirun --allow-run-as-root --oversubscribe -np 2 \
    --mca btl self --mca oob_tcp_if_include lo \
    -x BFO_RAILS="$RAILS" -x LSAN_OPTIONS \
    "$BFO_TCP" stream --json --count 200 > "$WORK/out" 2> "$WORK/err" || {
    rc=$?
    grep -q 'built without PMIx' "$WORK/err" && fail "mpirun is installed but $BFO_TCP was built without PMIx (apt-get install libpmix-dev, rebuild)"
    fail "mpirun exit status $rc"
}
check_exact
[ "$(jget ranks)" = 2 ] || fail "expected 2 ranks, got $(jget ranks)"
expect_messages 400
summary
echo "   mpirun wall time $(( ($(date +%s%N) - start) / 1000000 )) ms"
echo "ok: t8 mpirun -np 2"
