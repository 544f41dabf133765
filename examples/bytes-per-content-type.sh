#!/bin/sh
# Total attachment bytes per content type, counting each distinct digest once (that is what
# is stored), from --list rows. Cross-checked against a jq walk over the dump itself.
#
# usage: examples/bytes-per-content-type.sh [PATH-TO-cbl-attachments]
set -eu
. "$(dirname -- "$0")/lib/common.sh" "$@"

dump=$data/dump.ndjson

section "cbl-attachments --list dump.ndjson | jq -s 'unique_by(.digest) | group_by(.content_type) | ...'"
"$bin" --list "$dump" |
  jq -s 'unique_by(.digest) | group_by(.content_type)
         | map({content_type: .[0].content_type, count: length, bytes: (map(.length) | add)})
         | sort_by(-.bytes)' >"$tmp/by-type.json"
jq -r '.[] | [.content_type, .count, .bytes] | @tsv' "$tmp/by-type.json" |
  awk -F '\t' '{ printf "%-18s %3d  %10d bytes\n", $1, $2, $3 }'

total=$(jq 'map(.bytes) | add' "$tmp/by-type.json")
printf '%-18s      %10d bytes\n' "total" "$total"

# The same total without cbl-attachments: every blob (outside _attachments) and every legacy
# attachment in the dump, each digest once.
direct=$(jq -s '[.[] | (del(._attachments) | .. | objects | select(.["@type"] == "blob")),
                        ((._attachments // {}) | .[] | objects)]
                | unique_by(.digest) | map(.length) | add' "$dump")
[ "$total" -eq "$direct" ] || fail "--list gives $total bytes, the dump holds $direct"
ok "the total agrees with a direct jq walk of the dump ($direct bytes)"
