#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# (i) An unmodified MPI program across the two guests over pml/bfo (the
# Open MPI 4.1 component, mpi/ompi/): tests/pml/faults/stream.c as 2 ranks,
# rank 0 in guest a streaming mixed sizes (8 B, 64 KiB, 1 MiB) to rank 1 in
# guest b, every byte checked, over a verbs rail (rxe0, link 0) and a TCP
# rail (link 2).  Once both ranks stream, the cable of link 0 is pulled at
# guest a and put back 4 s later: the stream goes on over TCP, rail 0 is
# re-admitted (a new queue pair) and carries RDMA traffic again (rxe0's
# packet counters), and the stream completes with every message verified,
# no MPI error, mpirun exit status 0.
#
# One MPI job over two guests: mpirun runs in guest a and starts orted in
# guest b through its rsh launcher (plm/rsh) with tests/verbs/mpi_rsh.sh
# as the agent (plm_rsh_agent); in guest b the same script serves the
# agent and runs the orted command line (there is no ssh in the guests).
# Open MPI's own TCP (ORTE's out-of-band channel, the btls) stays on link 1,
# which carries no rail and is never pulled.
# vm: BFO_VM_RXE=1
. "$(dirname "$0")/lib.sh"
# the scenario's own settings (lib.sh's BFO_* are bfo stream's)
unset BFO_RANK BFO_SIZE BFO_BOOTSTRAP BFO_RAILS BFO_VERBS_LOG
HERE=$(cd "$(dirname "$0")" && pwd)
# the component and the stream, staged by run.sh from next to the bfo binary
PML_DIR=${PML_DIR:-$(dirname "$BFO")/pml}
MPI_STREAM=${MPI_STREAM:-$PML_DIR/stream}
RSH=$HERE/mpi_rsh.sh
export BFO_RSH_PORT=7118
ORTE_NET=10.0.1.0/24
MPI_RAILS=verbs:rxe0,10.0.2.0/24   # each rank's own address on link 2
PML_VERBOSE=${PML_VERBOSE:-2}      # 2: the queue pairs' connections too (1: failures only)
DURATION=${DURATION:-20}
MPI_OUT=$OUT/mpi.out
fail() { say "FAIL: $*"; echo "--- mpirun output (last 30 lines)"; tail -30 "$MPI_OUT" 2>/dev/null; exit 1; }
hostname "bfo-$ROLE" # ORTE refuses the kernel's "(none)"

if [ "$ROLE" = b ]; then
    # the server that starts orted here, until guest a is done
    "$RSH" serve "$BFO_RSH_PORT" "$OUT/rsh.log" > "$OUT/rsh.out" 2>&1 &
    SRV=$!
    for _ in $(seq 250); do [ -e "$OUT/mpi.done" ] && break; pause 1; done
    kill "$SRV" 2>/dev/null
    say "orted started here $(grep -c 'mpi_rsh: run: .*orted' "$OUT/rsh.log") time(s), $(grep -m1 'exit status' "$OUT/rsh.log" | sed 's/.*: //')"
    [ -e "$OUT/mpi.done" ] || fail "guest a never said it was done"
    exit 0
fi

trap 'touch "$OUT/mpi.done"' EXIT
[ -f "$PML_DIR/mca_pml_bfo.so" ] || fail "no $PML_DIR/mca_pml_bfo.so (make pml)"
[ -x "$MPI_STREAM" ] || fail "no $MPI_STREAM (make faults-stream)"
# Open MPI's own component directory, from run.sh (ompi_info takes 3-4 s here)
PKGLIB=$(cat "$PML_DIR/pkglibdir" 2>/dev/null) || PKGLIB=$(ompi_info --path pkglibdir | sed 's/.*: *//')
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 BFO_RSH_WAIT=120
CNT=/sys/class/infiniband/rxe0/ports/1/hw_counters
pkts() { local s r; read -r s < "$CNT/sent_pkts"; read -r r < "$CNT/rcvd_pkts"; PKTS=$((s + r)); }
read -r T0 _ < /proc/uptime
# TCG guests are slow: a probe gets 1 s and the silence backstop 3 s (as
# lib.sh's bfo stream), and a peer 30 s to come up: the ranks reach
# MPI_Init's rail set-up seconds apart here, and the engine gives up a peer
# no rail has reached within pml_bfo_peer_timeout_ms of its init (with the
# default of 2 s then, rank 0's start barrier once failed so)
: > "$MPI_OUT"
mpirun --allow-run-as-root -np 2 --host 10.0.1.1:1,10.0.1.2:1 \
    --mca plm_rsh_agent "$RSH" --mca plm_rsh_no_tree_spawn 1 --mca orte_keep_fqdn_hostnames 1 \
    --mca oob_tcp_if_include "$ORTE_NET" --mca btl self,tcp --mca btl_tcp_if_include "$ORTE_NET" \
    --mca mca_component_path "$PKGLIB:$PML_DIR" --mca pml bfo --mca pml_bfo_rails "$MPI_RAILS" \
    --mca pml_bfo_verbose "$PML_VERBOSE" --mca pml_bfo_probe_timeout_ms 1000 --mca pml_bfo_silence_ms 3000 \
    --mca pml_bfo_peer_timeout_ms 30000 \
    "$MPI_STREAM" --mixed --duration "$DURATION" --progress 0.5 --finalize-timeout 30 \
    >> "$MPI_OUT" 2>&1 &
MPIRUN=$!
( sleep 200; kill -9 "$MPIRUN" ) 2> /dev/null &
WATCHDOG=$!
# both ranks streaming (their "start" lines, read with builtins as they come)
exec 8< "$MPI_OUT"
started=0 part=''
for _ in $(seq 240); do
    while :; do
        if IFS= read -r -u 8 line; then
            line=$part$line part=''
            case $line in "start rank="*) started=$((started + 1)) ;; esac
        else
            part+=$line
            break
        fi
    done
    [ $started -ge 2 ] && break
    kill -0 "$MPIRUN" 2>/dev/null || fail "mpirun ended before both ranks started"
    pause 0.5
done
[ $started -ge 2 ] || fail "the ranks did not start within 120 s"
read -r S _ < /proc/uptime
echo "[$S] a: both ranks started (mpirun started at $T0)"
pause 3
# The cable, pulled and put back 4 s later, with builtins only (the
# request goes to the host unconfirmed: lib.sh's monitor polls for the
# answer, which this busy guest takes seconds to see; checked at the end)
cable() { printf 'set_link n0 %s\n' "$1" >> "$OUT/mon.a"; }
pkts; K0=$PKTS
read -r P _ < /proc/uptime
cable off
echo "[$P] a: cable of link 0 pulled (rail 0, verbs:rxe0)"
pause 4
pkts; K1=$PKTS
read -r R _ < /proc/uptime
cable on
echo "[$R] a: cable of link 0 back"
ss -Htnp > "$OUT/ss.a" 2>&1 # who talks over which link (judged at the end)
wait "$MPIRUN"; rc=$?
kill "$WATCHDOG" 2>/dev/null
pkts; K2=$PKTS
# CLOCK_REALTIME (rank 0's progress lines) against uptime (P, R, the logs)
E=$(date +%s.%N); read -r U _ < /proc/uptime
say "mpirun exit status $rc after $(ms_between "$T0" "$U") ms"
[ "$(cat "$OUT/mon.a.done" 2>/dev/null)" = 2 ] || fail "the host did not carry out both cable commands"

# What Open MPI and the ranks said (the redials while the cable was out:
# the first few)
awk '/^(pml bfo|bfo-verbs|bfo-tcp|start|error|corrupt|count|dead|peer|finalize)/ || /^\{"summary/ {
        if (/CONNECT_FAILED|the port is down: no dial|the peer did not connect in time/ && n++ >= 4) next
        print substr($0, 1, 220) }' "$MPI_OUT"
[ "$rc" = 0 ] || fail "mpirun exit status $rc"
# Everything else in one pass (each process started here costs): rank 1's
# and rank 0's summaries; from rank 0's log (guest a's uptime, as P and R)
# the first failure of rail 0 after the pull and its first new queue pair
# after the cable came back; rank 0's sent bytes (its progress lines, wall
# clock) at the pull and at the put-back; rank 1's longest gap in received
# bytes; from ss (taken after the cable came back) mpirun's connections
# (outside the guest: link 1 only) and the rank's.
errl='' fin='' s0='' s1='' bad='' msgs='' ver='' bytes='' txm='' txb='' b0='' b1='' gap_ms='' out_ms='' fail_ms='' why='' back_ms='' orte_ok='' orte_bad='' rank_tcp=''
eval "$(awk -v P="$P" -v R="$R" -v off="$(awk -v e="$E" -v u="$U" 'BEGIN { printf "%.3f", e - u }')" -v ssf="$OUT/ss.a" '
    FILENAME == ssf { if ($6 ~ /"mpirun"/ && $4 !~ /^127\./) { if ($4 ~ /^10\.0\.1\./) orte_ok++; else orte_bad++ }
                      if ($6 ~ /"stream"/ && $4 !~ /^127\./) rank_tcp = rank_tcp (rank_tcp == "" ? "" : ",") $4 "->" $5
                      next }
    function jv(line, k) { return match(line, "\"" k "\":[0-9]+") ? substr(line, RSTART + length(k) + 3, RLENGTH - length(k) - 3) : "" }
    function kv(k,   i) { for (i = 3; i <= NF; i++) if (index($i, k "=") == 1) return substr($i, length(k) + 2) + 0; return 0 }
    /^(error|corrupt|count|dead) rank=/ { errl++ }
    /^finalized rank=/ { fin++ }
    /^\{"summary":1,"rank":1,/ { s1 = 1; msgs = jv($0, "messages"); ver = jv($0, "verified"); bytes = jv($0, "bytes") }
    /^\{"summary":1,"rank":0,/ { s0 = 1; txm = jv($0, "tx_messages"); txb = jv($0, "tx_bytes") }
    /^\{"summary":1,/ { bad += jv($0, "errors") + jv($0, "corrupt") + jv($0, "count_errors") + jv($0, "mpi_errors") }
    /^bfo-verbs\[0\] [0-9.]+: / { t = substr($2, 1, length($2) - 1) + 0; line = $0; sub(/^[^:]*: /, "", line)
        if (d == "" && t >= P && line ~ /rail 0: (RAIL_ERROR|queue pair closed)|PORT_ERR/) { d = t; why = line }
        if (u == "" && t >= R && line ~ /peer 1 rail 0: CONNECTED/) u = t }
    $1 == "progress" && $2 == "rank=0" { tt = kv("t") - off; b = kv("tx_bytes"); if (tt <= P) b0 = b; if (tt <= R) b1 = b }
    $1 == "progress" && $2 == "rank=1" { t1 = kv("t"); r = kv("rx_bytes")
        if (!seen) { seen = 1; lt = t1; lb = r } else if (r != lb) { if (t1 - lt > gap) gap = t1 - lt; lt = t1; lb = r } }
    END {
        printf "errl=%d fin=%d s0=%d s1=%d bad=%d msgs=%s ver=%s bytes=%s txm=%s txb=%s\n", errl, fin, s0, s1, bad, msgs, ver, bytes, txm, txb
        printf "b0=%.0f b1=%.0f gap_ms=%.0f out_ms=%.0f\n", b0, b1, gap * 1000, (R - P) * 1000
        printf "fail_ms=%s why=\047%s\047 back_ms=%s\n", d == "" ? "" : sprintf("%.0f", (d - P) * 1000), why, u == "" ? "" : sprintf("%.0f", (u - R) * 1000)
        printf "orte_ok=%d orte_bad=%d rank_tcp=\047%s\047\n", orte_ok, orte_bad, rank_tcp
    }' "$OUT/ss.a" "$MPI_OUT")"
[ "$errl" = 0 ] || fail "the stream reported $errl error line(s)"
[ "$s0" = 1 ] && [ "$s1" = 1 ] || fail "a rank printed no summary"
[ "$bad" = 0 ] || fail "errors in the summaries"
[ "$msgs" -gt 0 ] && [ "$msgs" = "$txm" ] && [ "$ver" = "$msgs" ] && [ "$bytes" = "$txb" ] ||
    fail "rank 1 received $msgs messages ($bytes bytes, $ver verified), rank 0 sent $txm ($txb bytes)"
[ "$orte_bad" = 0 ] || fail "mpirun has $orte_bad connection(s) outside link 1 ($OUT/ss.a)"
[ "$orte_ok" -gt 0 ] || fail "ss shows no connection of mpirun over link 1 ($OUT/ss.a)"
[ "$fin" = 2 ] || fail "MPI_Finalize returned on $fin rank(s)"
[ -n "$fail_ms" ] || fail "rank 0 never saw rail 0 fail"
[ "$PML_VERBOSE" -lt 2 ] || [ -n "$back_ms" ] || fail "no new queue pair on rail 0 after the cable came back"
[ "$b0" -gt 0 ] || fail "nothing was sent before the cable was pulled"
[ "$b1" -gt "$b0" ] || fail "nothing was sent while the cable was out (the TCP rail)"
[ "$txb" -gt "$b1" ] || fail "nothing was sent after the cable came back"
# rail 0 carried RDMA before the pull and again after the cable came back
# (a 1 MiB message is 1,024 packets at rxe's MTU of 1,024)
[ "$K0" -ge 4096 ] || fail "rxe0 moved $K0 packets before the pull: rail 0 was not in use"
[ $((K2 - K1)) -ge 4096 ] || fail "rxe0 moved $((K2 - K1)) packets after the cable came back"
mb() { echo "$(($1 / 1000000)).$(($1 / 100000 % 10)) MB"; }
say "messages $msgs, bytes $bytes, verified $ver, MPI errors 0; sent before the pull $(mb "$b0")," \
    "in the $out_ms ms the cable was out $(mb $((b1 - b0))) (TCP rail), after $(mb $((txb - b1)))"
say "Open MPI's runtime: mpirun's $orte_ok connection(s) to guest b over link 1 (10.0.1.x) only; rank 0's TCP: $rank_tcp"
back=${back_ms:+$back_ms ms} back=${back:-(not logged below pml_bfo_verbose 2)}
echo "measure: cable pulled -> rank 0 saw rail 0 fail $fail_ms ms ($why); cable back -> new queue pair on rail 0" \
    "$back; longest gap in rank 1's received bytes $gap_ms ms;" \
    "rxe0 packets (sent + received) $K0 before the pull, $((K1 - K0)) while it was out, $((K2 - K1)) after"
echo "ok: t9 MPI stream (pml/bfo, mpirun in a, orted in b via mpi_rsh.sh): verbs rail's cable pulled and put back, every byte verified"
