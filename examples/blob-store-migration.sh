#!/bin/sh
# Attachment bodies: migrate a Couchbase Lite database's attachments (a miniature
# app.cblite2/Attachments folder and a dump of its documents, in examples/data) into
# _bulk_docs request bodies that carry every attachment's bytes, then back into a fresh
# folder: the same files (diff -r) and the same documents, byte for byte.
#
# usage: examples/blob-store-migration.sh [PATH-TO-cbl-attachments]
set -eu
. "$(dirname -- "$0")/lib/common.sh" "$@"

db=$data/app.cblite2
dump=$data/app-dump.ndjson

section "cbl-attachments --push --blobs app.cblite2 --bulk-docs 2 app-dump.ndjson"
"$bin" --push --blobs "$db" --bulk-docs 2 --stats "$dump" >"$tmp/bodies.ndjson" 2>"$tmp/stats" \
  || fail "push failed: $(cat "$tmp/stats")"
cat "$tmp/stats"
cut -c1-160 "$tmp/bodies.ndjson"
[ "$(count_lines "$tmp/bodies.ndjson")" = 2 ] || fail "two bodies of two documents"
# Every entry carries its bytes, and no stub: Sync Gateway's REST API takes these as they are.
missing=$(jq -r '.docs[] | (._attachments // {}) | to_entries[] | select(.value.data == null or .value.stub != null) | .key' \
  "$tmp/bodies.ndjson")
[ -z "$missing" ] || fail "entries without their bytes: $missing"
jq -c '.docs[]' "$tmp/bodies.ndjson" | "$bin" --check >/dev/null 2>"$tmp/check" \
  || fail "--check finds problems: $(cat "$tmp/check")"
ok "every entry carries data, and --check finds nothing Sync Gateway would refuse"
# The bytes are the files' own.
jq -r '.docs[] | select(._id == "note::1") | ._attachments["$.files[0]"].data' "$tmp/bodies.ndjson" \
  | base64 -d >"$tmp/readme"
same "$tmp/readme" "$db/Attachments/M1DuP3Mb6LQPcxCp3O4Sr4xHpbQ=.blob" "the readme's bytes differ"
ok "the data decodes to the stored file's bytes"

section "cbl-attachments --pull --blobs fresh.cblite2 --format bulk-docs bodies.ndjson"
mkdir "$tmp/fresh.cblite2"
"$bin" --pull --blobs "$tmp/fresh.cblite2" --format bulk-docs --stats "$tmp/bodies.ndjson" \
  >"$tmp/back.ndjson" 2>"$tmp/stats" || fail "pull failed: $(cat "$tmp/stats")"
cat "$tmp/stats"
ls -l "$tmp/fresh.cblite2/Attachments"
diff -r "$db/Attachments" "$tmp/fresh.cblite2/Attachments" || fail "the stores differ"
ok "diff -r: the fresh store holds the same files"
# The documents came back as they were: compare with the dump in the same bodies.
"$bin" --pull --bulk-docs 2 "$dump" >"$tmp/expected.ndjson" 2>/dev/null
same "$tmp/expected.ndjson" "$tmp/back.ndjson" "the documents are not the dump's"
ok "the documents are byte for byte the dump's (12345678901234567890123 included)"
[ "$(stat -c %a "$tmp/fresh.cblite2/Attachments/M1DuP3Mb6LQPcxCp3O4Sr4xHpbQ=.blob")" = 444 ] \
  || fail "stored files are read-only, as Couchbase Lite makes them"
ok "stored files are read-only"
