#!/bin/sh
# Round trip: for documents made by Couchbase Lite 2, pulling what push produced gives the
# original back byte for byte (compact input), in both namings. Push is idempotent, and pull on
# documents that were never pushed changes nothing.
#
# usage: examples/round-trip.sh [PATH-TO-cbl-attachments]
set -eu
. "$(dirname -- "$0")/lib/common.sh" "$@"

dump=$data/dump.ndjson

section "pull(push(d)) == d, jsonpath naming"
"$bin" --push "$dump" >"$tmp/pushed"
"$bin" --pull "$tmp/pushed" >"$tmp/back"
same "$dump" "$tmp/back" "pull(push(d)) differs from d"
ok "$(count_lines "$dump") documents, $(wc -c <"$dump" | tr -d ' ') bytes, identical (cmp)"

section "pull(push(d)) == d, litecore naming"
"$bin" --push --naming litecore "$dump" | "$bin" --pull >"$tmp/back-litecore"
same "$dump" "$tmp/back-litecore" "pull(push --naming litecore (d)) differs from d"
ok "identical (cmp)"

section "push(push(d)) == push(d): a second push replaces its own entries"
"$bin" --push "$tmp/pushed" >"$tmp/pushed-twice"
same "$tmp/pushed" "$tmp/pushed-twice" "push is not idempotent"
"$bin" --push --naming litecore "$dump" >"$tmp/lc1"
"$bin" --push --naming litecore "$tmp/lc1" >"$tmp/lc2"
same "$tmp/lc1" "$tmp/lc2" "push --naming litecore is not idempotent"
ok "idempotent in both namings"

section "pull(d) == d for a dump that was never pushed"
"$bin" --pull "$dump" >"$tmp/pulled-only"
same "$dump" "$tmp/pulled-only" "pull changed a document that has no synthesized entries"
ok "nothing to remove, nothing changed"

section "pretty-printed input comes out compact: push(pretty d) == push(compact d)"
# jq re-encodes what it prints, so compare with jq's own compact form of the same documents.
jq . "$dump" >"$tmp/pretty.json"
jq -c . "$dump" >"$tmp/compact.ndjson"
"$bin" --push "$tmp/pretty.json" >"$tmp/from-pretty"
"$bin" --push "$tmp/compact.ndjson" >"$tmp/from-compact"
same "$tmp/from-compact" "$tmp/from-pretty" "pretty and compact input give different output"
"$bin" --pull "$tmp/from-pretty" >"$tmp/back-from-pretty"
same "$tmp/compact.ndjson" "$tmp/back-from-pretty" "pull(push(pretty d)) is not the compact d"
ok "$(count_lines "$tmp/pretty.json") pretty lines in, $(count_lines "$tmp/from-pretty") compact documents out"
