# SPDX-License-Identifier: BSD-3-Clause
# stream_json.sh - reading `bfo stream --json` output, shared by
# tests/tcp/lib.sh and tests/verbs/lib.sh.  STREAM_JSON names the file
# that holds rank 0's JSON line; `fail` comes from the sourcing library.

# jget FIELD: a number from the JSON line
jget() { sed -n "s/.*\"$1\":\([0-9.]*\).*/\1/p" "$STREAM_JSON" | head -1; }
# jrail N: per_rail_bytes[N]
jrail() { sed -n 's/.*"per_rail_bytes":\[\([0-9,]*\)\].*/\1/p' "$STREAM_JSON" | cut -d, -f$(($1 + 1)); }

# Every message of every live pair exactly once with the right bytes.
check_exact() {
    local m v
    [ -s "$STREAM_JSON" ] || fail "no JSON from rank 0"
    m=$(jget messages); v=$(jget verified)
    [ -n "$m" ] && [ "$m" -gt 0 ] || fail "no messages"
    [ "$v" = "$m" ] || fail "verified $v of $m"
    [ "$(jget corrupt)" = 0 ] || fail "corrupt messages"
    [ "$(jget duplicates)" = 0 ] || fail "duplicates"
    [ "$(jget lost)" = 0 ] || fail "lost messages"
}
