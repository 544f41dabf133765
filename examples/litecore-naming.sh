#!/bin/sh
# --naming litecore: name entries the way Couchbase Lite 2.1 and later do on the wire,
# "blob_" + the blob's JSON Pointer, with "stub":true and "revpos" (the generation of the
# document's _rev, or 1, or --revpos N). Compares the two namings and converts a file pushed
# with one naming to the other.
#
# usage: examples/litecore-naming.sh [PATH-TO-cbl-attachments]
set -eu
. "$(dirname -- "$0")/lib/common.sh" "$@"

dump=$data/dump.ndjson

section "product::C33 in both namings"
grep '"_id":"product::C33"' "$dump" >"$tmp/c33.json"
"$bin" --push "$tmp/c33.json" | jq -c '._attachments | to_entries[] | [.key, .value.length]'
"$bin" --push --naming litecore "$tmp/c33.json" | jq -c '._attachments | to_entries[] | [.key, .value.length, .value.stub, .value.revpos]'
[ "$("$bin" --push --naming litecore "$tmp/c33.json" | jq -r '._attachments | keys_unsorted | join(" ")')" = \
  "blob_/photos/thumbnail blob_/manuals/en.pdf blob_/manuals/fr.pdf" ] || fail "unexpected litecore names"
ok 'jsonpath escapes the "." in en.pdf; a JSON Pointer does not need to'

section "every litecore name is blob_ + the blob's pointer, as --list reports it"
"$bin" --push --naming litecore "$dump" >"$tmp/litecore.ndjson"
"$bin" --list "$dump" | jq -r 'select(.kind == "blob") | "\(.id) blob_\(.pointer)"' >"$tmp/expected-names"
jq -r '._id as $id | (._attachments // {}) | keys_unsorted[] | select(startswith("blob_")) | "\($id) \(.)"' \
  "$tmp/litecore.ndjson" >"$tmp/names"
same "$tmp/expected-names" "$tmp/names" "litecore names differ from blob_ + pointer"
ok "$(count_lines "$tmp/names") names"

section "revpos is the generation of _rev (note::2017-004 is at 7-...), else 1"
jq -c 'select(._attachments) | [._id, ._rev, (._attachments | to_entries | map(select(.key | startswith("blob_")) | .value.revpos))]' \
  "$tmp/litecore.ndjson" | grep -e 'note::2017-004' -e 'user::priya'
bad=$(jq -c 'select(._attachments) | ((._rev // "1-") | split("-")[0] | tonumber) as $gen
             | ._attachments | to_entries[] | select(.key | startswith("blob_"))
             | select(.value.stub != true or .value.revpos != $gen)' "$tmp/litecore.ndjson")
[ -z "$bad" ] || fail "entries with a wrong stub or revpos: $bad"
ok "stub is true and revpos the _rev generation (or 1) everywhere"

section "--revpos 3 sets it for every entry"
"$bin" --push --naming litecore --revpos 3 "$dump" |
  jq -r '(._attachments // {}) | to_entries[] | select(.key | startswith("blob_")) | .value.revpos' | sort -u >"$tmp/revpos"
[ "$(cat "$tmp/revpos")" = 3 ] || fail "--revpos 3 not applied"
ok "all 3"

section "--revpos without --naming litecore is a usage error (status 2)"
status=0
"$bin" --push --revpos 3 "$dump" >/dev/null 2>"$tmp/err" || status=$?
cat "$tmp/err"
expect_status 2 "$status" "--revpos with jsonpath naming"
ok "status 2"

section "convert a file pushed with jsonpath names to litecore names: --pull | --push --naming litecore"
"$bin" --push "$dump" >"$tmp/jsonpath.ndjson"
"$bin" --pull "$tmp/jsonpath.ndjson" | "$bin" --push --naming litecore >"$tmp/converted.ndjson"
same "$tmp/litecore.ndjson" "$tmp/converted.ndjson" "converting differs from pushing with litecore directly"
ok "the same as pushing the original with --naming litecore"
