#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# tests/pml/env_wrap.sh MODE CMD...: one rank of pml.env_ignored (run.sh),
# CMD run with every BFO_* variable bfo reads (bfo_net.h, ENVIRONMENT; the
# wire-up's too) set to what would change something if it were read. Under
# pml/bfo every setting comes from MCA parameters: none of it may count.
#   bad    every rank: a malformed value for each (a bfo_net that read one
#          would refuse to start, failing MPI_Init)
#   other  rank 0 only (as one host's environment would): a valid value
#          other than the MCA-derived one for each (relay on, eager limit 1,
#          another rail list, ...); the other ranks have none
set -u
mode=$1
shift
for v in $(env | sed -n 's/^\(BFO_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
case $mode in
bad)
    export BFO_RAILS='nosuch:rail' BFO_EAGER_LIMIT=12Q BFO_UNEXPECTED_BUDGET=lots BFO_STANDBY_RAILS=9 \
        BFO_RELAY=yes BFO_CONNECT_AT_INIT=x BFO_PROGRESS_THREAD=x BFO_TCP_BEACON_MS=soon BFO_TCP_NOTSENT_LOWAT=-3 \
        BFO_NET_LOG=x BFO_TCP_LOG=x BFO_SHM_LOG=x BFO_VERBS_LOG=x \
        BFO_RANK=x BFO_SIZE=x BFO_BOOTSTRAP=x BFO_LAUNCHER_FD=x
    # the rest of the transports' settings (bfo run --settings lists them)
    export BFO_TCP_USER_TIMEOUT_MS=x BFO_TCP_CONNECT_TIMEOUT_MS=x BFO_SHM_RING_BYTES=x BFO_SHM_READ_CHUNK=x \
        BFO_SHM_CONNECT_TIMEOUT_MS=x BFO_VERBS_RETRY_CNT=x BFO_VERBS_TIMEOUT=x BFO_VERBS_RECV_DEPTH=x \
        BFO_VERBS_SEND_DEPTH=x BFO_VERBS_REG_CACHE=x BFO_VERBS_CONNECT_TIMEOUT_MS=x
    ;;
other)
    if [ "${OMPI_COMM_WORLD_RANK:-}" = 0 ]; then
        export BFO_RAILS=127.0.0.1 BFO_EAGER_LIMIT=1 BFO_UNEXPECTED_BUDGET=1 BFO_STANDBY_RAILS=1 \
            BFO_RELAY=1 BFO_CONNECT_AT_INIT=1 BFO_PROGRESS_THREAD=1 BFO_TCP_BEACON_MS=off BFO_TCP_NOTSENT_LOWAT=off \
            BFO_NET_LOG=3 BFO_TCP_LOG=3 BFO_SHM_LOG=3 BFO_VERBS_LOG=3 BFO_RANK=1 BFO_SIZE=9
    fi
    ;;
*)
    echo "env_wrap.sh: MODE must be bad or other, not $mode" >&2
    exit 2
    ;;
esac
exec "$@"
