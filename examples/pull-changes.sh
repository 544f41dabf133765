#!/bin/sh
# Pull: take a Sync Gateway changes feed (GET /db/_changes?include_docs=true, saved in
# examples/data/changes.json) and remove, inside the response itself (--format changes), the
# "_attachments" entries that only mirror blobs. What remains are real legacy attachments
# (CBL 1.x, PouchDB). jq is used only to look at the results.
#
# Live, the same pipeline is (examples/rest-apis.sh runs it):
#   curl -sS 'http://localhost:4985/app/_changes?include_docs=true' \
#     | cbl-attachments --pull --format changes
#
# usage: examples/pull-changes.sh [PATH-TO-cbl-attachments]
set -eu
. "$(dirname -- "$0")/lib/common.sh" "$@"

feed=$data/changes.json

section "documents in the feed, with their _attachments names"
jq -r '.results[].doc | [._id, ((._attachments // {}) | keys_unsorted | join(" "))] | @tsv' "$feed"

section "cbl-attachments --pull --format changes --stats $feed"
"$bin" --pull --format changes --stats "$feed" >"$tmp/pulled.json" 2>"$tmp/stats" || fail "--pull failed: $(cat "$tmp/stats")"
cat "$tmp/stats"
# For looking: the documents, one per line (jq re-encodes them; the tool's output does not).
jq -c '.results[].doc' "$feed" >"$tmp/docs.ndjson"
jq -c '.results[].doc' "$tmp/pulled.json" >"$tmp/pulled.ndjson"
[ "$(count_lines "$tmp/pulled.ndjson")" -eq "$(jq '.results | length' "$feed")" ] || fail "one document out per document in"
[ "$(jq -c 'del(.results)' "$tmp/pulled.json")" = "$(jq -c 'del(.results)' "$feed")" ] || fail "the envelope changed"
ok "the response keeps its rows and its last_seq"

section "after the pull"
jq -r '[._id, (if has("_attachments") then ._attachments | keys_unsorted | join(" ") else "(no _attachments)" end)] | @tsv' \
  "$tmp/pulled.ndjson"

# Every remaining entry must be one that no blob of the same document stands for.
left=$(jq -c '
  [del(._attachments) | .. | objects | select(.["@type"] == "blob") | .digest] as $blobs
  | (._attachments // {}) | to_entries[] | select(.value.digest as $d | $blobs | index([$d]))
  | .key' "$tmp/pulled.ndjson")
[ -z "$left" ] || fail "entries that mirror a blob are left: $left"
ok "no entry whose digest matches a blob of its document is left"

expect() { # ID EXPECTED-NAMES
  got=$(jq -r --arg id "$1" 'select(._id == $id) | if has("_attachments") then ._attachments | keys_unsorted | join(" ") else "-" end' "$tmp/pulled.ndjson")
  [ "$got" = "$2" ] || fail "$1: _attachments is '$got', expected '$2'"
}
expect "user::priya" "-"                       # CBL 2.1+ (blob_/image): back to the original
expect "product::124C41" "-"                   # CBL 2.0 ($.photos...): the same, whatever the names
expect "msg::general::0003" "-"
expect "note::2016-002" "booth.jpg memo.m4a"   # CBL 1.x: real attachments, untouched
expect "recipe::pancakes" "pancakes.png"       # PouchDB: untouched
expect "note::2017-004" "readme.txt"           # migrated: only the mirror of the blob goes
expect "msg::sales::0002" "-"                  # a deletion passes through
ok "blob mirrors removed (any naming); CBL 1.x and PouchDB attachments kept"

section "a document that only has real attachments is byte-for-byte unchanged"
# The row is compact in the saved response: the same bytes must be in the output.
row=$(grep '"id":"note::2016-002"' "$feed" | sed 's/^,//')
grep -qF -- "$row" "$tmp/pulled.json" || fail "note::2016-002 changed"
ok "note::2016-002 is as Sync Gateway sent it"
