#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# mpi_rsh.sh - Open MPI's rsh launcher across the two test guests, without
# ssh (tests/verbs/t9_mpi_cable.sh).
#
#   mpi_rsh.sh serve PORT [LOG]   in guest b: runs each command line it is sent
#   mpi_rsh.sh HOST WORD...       the agent: mpirun --mca plm_rsh_agent mpi_rsh.sh
#
# mpirun's rsh launcher (plm/rsh) starts its daemon on HOST by running
# `AGENT HOST orted ARGS...`, as it would run `ssh HOST orted ...`.  The
# agent sends that command line (the words joined by spaces, as ssh does:
# plm/rsh quotes them for a remote shell) to the server on HOST, port
# BFO_RSH_PORT (7118), retrying for BFO_RSH_WAIT seconds (30) while the
# server is not up yet.  The server (busybox nc -ll, one handler per
# connection) runs it with `sh -c`, stdin from /dev/null, in the server's
# environment plus OMPI_ALLOW_RUN_AS_ROOT(_CONFIRM), and sends back its
# output (stdout and stderr merged) and then a line "mpi_rsh: exit status
# N"; the agent writes the output to its stderr and exits with N, 255 when
# it cannot reach the server or the connection ends without a status.
# plm/rsh starts `orted --daemonize`, which returns at once; the remote orted
# then calls mpirun back over TCP by itself (the HNP URI is in its
# arguments).  A command the agent stops waiting for is not killed.
# Bash and busybox only: python3 takes 4-6 s to start in a TCG guest, and
# the agent is on the job's start path.
set -u
PORT=${BFO_RSH_PORT:-7118}
up() { cut -d' ' -f1 /proc/uptime; }
case ${1:-} in
serve)
    [ $# -ge 2 ] || { echo "usage: $0 serve PORT [LOG]" >&2; exit 2; }
    log=${3:-/dev/null}
    echo "[$(up)] mpi_rsh: listening on port $2" >> "$log"
    exec /bin/busybox nc -ll -p "$2" -e "$0" handle "$log" ;;
handle) # stdin and stdout: the connection
    log=$2
    IFS= read -r cmd || exit 0
    echo "[$(up)] mpi_rsh: run: $cmd" >> "$log"
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 sh -c "cd / && $cmd" < /dev/null 2>&1
    rc=$?
    echo "[$(up)] mpi_rsh: exit status $rc" >> "$log"
    printf '\nmpi_rsh: exit status %d\n' "$rc" ;;
'' | -*) sed -n '3,25p' "$0" >&2; exit 2 ;;
*)
    host=$1
    shift
    end=$((SECONDS + ${BFO_RSH_WAIT:-30}))
    until { exec 3<> "/dev/tcp/$host/$PORT"; } 2> /dev/null; do
        [ "$SECONDS" -lt "$end" ] || { echo "mpi_rsh: cannot reach $host:$PORT" >&2; exit 255; }
        sleep 0.2
    done
    printf '%s\n' "$*" >&3
    blank=0 # an empty line is held: the last one is the server's, before the status
    while IFS= read -r line <&3; do
        case $line in
        "mpi_rsh: exit status "*) exit "${line##* }" ;;
        "") [ $blank = 1 ] && echo >&2; blank=1 ;;
        *) [ $blank = 1 ] && echo >&2; blank=0; printf '%s\n' "$line" >&2 ;;
        esac
    done
    echo "mpi_rsh: $host closed the connection without an exit status" >&2
    exit 255 ;;
esac
