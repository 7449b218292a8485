#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# run_lines.sh JOBS COMMAND... < LINES - runs "COMMAND LINE" (LINE split as
# the shell would: quotes hold) for each non-empty line of stdin, JOBS at
# once, each one's output to its own file; prints each command and its
# output in the lines' order as soon as it and those before it are done;
# exits 1 if any failed (after all have run), naming them.  Used by
# `make check-sim` (CHECK_JOBS).
set -u
jobs=$1
shift
prefix=$(printf '%q ' "$@")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
lines=()
while IFS= read -r l; do
    [ -n "$l" ] && lines+=("$l")
done
n=${#lines[@]}
next_print=0
failed=()
flush() { # print, in order, those done
    while [ "$next_print" -lt "$n" ] && [ -e "$dir/$next_print.rc" ]; do
        echo "$prefix${lines[$next_print]}"
        cat "$dir/$next_print.out"
        [ "$(cat "$dir/$next_print.rc")" = 0 ] || failed+=("$prefix${lines[$next_print]}")
        next_print=$((next_print + 1))
    done
}
running=0
for ((i = 0; i < n; i++)); do
    while [ "$running" -ge "$jobs" ]; do
        wait -n
        running=$((running - 1))
        flush
    done
    (eval "$prefix${lines[$i]}" > "$dir/$i.out" 2>&1; echo $? > "$dir/$i.rc.tmp"; mv "$dir/$i.rc.tmp" "$dir/$i.rc") &
    running=$((running + 1))
done
wait
flush
if [ "${#failed[@]}" -gt 0 ]; then
    printf 'FAILED: %s\n' "${failed[@]}"
    exit 1
fi
