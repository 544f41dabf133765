#!/bin/sh
# Push a cbexport-style dump (one document per line, as `cbexport json --format lines` writes
# it) so that every Couchbase Lite 2 blob gets a legacy "_attachments" entry, then look at what
# was added with jq. Checks the result against an independent jq model of --push.
#
# usage: examples/push-dump.sh [PATH-TO-cbl-attachments]
set -eu
. "$(dirname -- "$0")/lib/common.sh" "$@"

dump=$data/dump.ndjson

section "push $dump"
"$bin" --push --stats "$dump" >"$tmp/pushed.ndjson" 2>"$tmp/stats" || fail "--push failed: $(cat "$tmp/stats")"
cat "$tmp/stats"
[ "$(count_lines "$tmp/pushed.ndjson")" -eq "$(count_lines "$dump")" ] || fail "one output line per input document"
ok "$(count_lines "$tmp/pushed.ndjson") documents in, as many out, in order"

section "the entries synthesized for product::124C41 (blob at \$.photos.thumbnail and in \$.photos.gallery[])"
jq 'select(._id == "product::124C41") | ._attachments' "$tmp/pushed.ndjson"
names=$(jq -r 'select(._id == "product::124C41") | ._attachments | keys_unsorted | join(" ")' "$tmp/pushed.ndjson")
[ "$names" = '$.photos.thumbnail $.photos.gallery[0] $.photos.gallery[1] $.photos.gallery[2]' ] ||
  fail "unexpected names: $names"
ok "named by JSON path, in document order"

section "a key with a dot is escaped: product::C33"
jq -r 'select(._id == "product::C33") | ._attachments | keys_unsorted[]' "$tmp/pushed.ndjson"
[ "$(jq 'select(._id == "product::C33") | ._attachments | has("$.manuals.en\\.pdf")' "$tmp/pushed.ndjson")" = true ] ||
  fail 'expected the name $.manuals.en\.pdf'
ok 'the key "en.pdf" gives $.manuals.en\.pdf'

section "a CBL 1.x document that gained a blob keeps its own attachment first: note::2017-004"
jq -c 'select(._id == "note::2017-004") | ._attachments | keys_unsorted' "$tmp/pushed.ndjson"
[ "$(jq -c 'select(._id == "note::2017-004") | ._attachments | keys_unsorted' "$tmp/pushed.ndjson")" = '["readme.txt","$.photo"]' ] ||
  fail "legacy entry not kept in front of the new one"
ok "legacy entries stay, new entries follow"

section "the blobs stay where they were; nothing else changes"
jq -c 'del(._attachments)' "$dump" >"$tmp/in-without"
jq -c 'del(._attachments)' "$tmp/pushed.ndjson" >"$tmp/out-without"
same "$tmp/in-without" "$tmp/out-without" "push changed something besides _attachments"
ok "apart from _attachments, every document is as it was"

section "every document matches the jq model of --push (examples/lib/push-model.jq)"
jq -c -L "$examples/lib" 'include "push-model"; push_model' "$dump" >"$tmp/model"
jq -c . "$tmp/pushed.ndjson" >"$tmp/actual"
same "$tmp/model" "$tmp/actual" "the output differs from the model"
ok "$(count_lines "$tmp/model") documents as the model says"

section "number literals and escapes are copied as they were"
grep -o '"price":19.90' "$tmp/pushed.ndjson" >/dev/null || fail "19.90 was rewritten"
grep -o '"price":1.25e0' "$tmp/pushed.ndjson" >/dev/null || fail "1.25e0 was rewritten"
grep -o '"installs":12345678901234567890123' "$tmp/pushed.ndjson" >/dev/null || fail "a big integer was rewritten"
grep -o 'Ren\\u00e9e' "$tmp/pushed.ndjson" >/dev/null || fail "an escape was rewritten"
ok '19.90, 1.25e0, 12345678901234567890123 and \u00e9 are untouched'

section "how many entries were added, per document type"
jq -r 'select(._attachments) | [.type, (._attachments | keys_unsorted | map(select(startswith("$"))) | length)] | @tsv' \
  "$tmp/pushed.ndjson" | sort | awk -F '\t' '{ n[$1] += $2 } END { for (t in n) printf "%-8s %d\n", t, n[t] }' | sort

section "a closed pipe ends the program quietly (| head -n 1)"
"$bin" --push "$dump" 2>"$tmp/err" | head -n 1 | cut -c 1-100
[ ! -s "$tmp/err" ] || fail "unexpected output on standard error: $(cat "$tmp/err")"
ok "nothing on standard error"
