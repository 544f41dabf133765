#!/bin/sh
# Find blobs shared between documents: --list writes one NDJSON row per attachment (blob or
# legacy) with its digest; jq groups the rows by digest. Couchbase stores each attachment
# once per digest, so shared blobs are uploaded and stored once.
#
# usage: examples/list-shared-blobs.sh [PATH-TO-cbl-attachments]
set -eu
. "$(dirname -- "$0")/lib/common.sh" "$@"

dump=$data/dump.ndjson

section "cbl-attachments --list $dump | head -n 3"
"$bin" --list "$dump" >"$tmp/rows.ndjson"
head -n 3 "$tmp/rows.ndjson"
rows=$(count_lines "$tmp/rows.ndjson")
expected=$(jq -s '[.[] | [(del(._attachments) | .. | objects | select(.["@type"] == "blob")),
                         ((._attachments // {}) | .[] | objects)] | length] | add' "$dump")
[ "$rows" -eq "$expected" ] || fail "$rows rows, expected $expected (one per blob and legacy attachment)"
ok "$rows rows: one per blob and per legacy attachment"

section "the fields of a row"
jq -c 'keys_unsorted' "$tmp/rows.ndjson" | sort -u
[ "$(jq -c 'keys_unsorted' "$tmp/rows.ndjson" | sort -u)" = \
  '["id","line","kind","name","pointer","digest","length","content_type"]' ] || fail "unexpected fields"
ok "id line kind name pointer digest length content_type"

section "jq -s 'group_by(.digest) | map(select(length > 1))': blobs used more than once"
jq -s 'group_by(.digest) | map(select(length > 1))
       | map({digest: .[0].digest, length: .[0].length, used_at: map("\(.id) \(.name)")})' \
  "$tmp/rows.ndjson" | tee "$tmp/shared.json"
[ "$(jq length "$tmp/shared.json")" -eq 2 ] || fail "expected 2 shared digests in the example dump"
jq -e 'map(.used_at | length) == [2, 2]' "$tmp/shared.json" >/dev/null || fail "expected each used twice"
ok "2 digests are shared, each by 2 places"

section "bytes that de-duplication by digest saves"
jq -s 'group_by(.digest) | map((length - 1) * .[0].length) | add' "$tmp/rows.ndjson"
