#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# agent.sh MAP HOST CMD... - Open MPI's rsh agent (plm_rsh_agent) for the
# hosts of tests/hosts/lib.sh: runs CMD, as ssh would run it on HOST, in
# HOST's network and UTS namespaces.  MAP is a file of "HOST PID" lines,
# PID the process that holds HOST's namespaces (lib.sh writes it; mpirun
# is given "agent.sh MAP" as the agent, so MAP comes first).  Like ssh,
# CMD is one shell command line (Open MPI passes the orted's command as
# several words; sh -c gets them joined) and runs with a fresh, small
# environment: nothing of mpirun's own environment leaks to the orted, as
# nothing would across real hosts.
map=$1
host=$2
shift 2
pid=$(awk -v h="$host" '$1 == h { print $2 }' "$map")
if [ -z "$pid" ]; then
    echo "agent.sh: no host $host in $map" >&2
    exit 255
fi
# OMPI_ALLOW_RUN_AS_ROOT*: the harness runs as root (namespaces need it);
# sshd would give the same to a root login through ~/.ssh/environment
exec nsenter -t "$pid" -n -u env -i PATH="$PATH" HOME="${HOME:-/root}" \
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 sh -c "$*"
