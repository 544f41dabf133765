#!/bin/sh
# Before a migration, find the documents that Sync Gateway would refuse: --check writes one
# NDJSON finding per problem (an attachment over 20 MiB, more than 1 MiB of attachment metadata,
# a blob without a digest, a bad "_attachments", what Couchbase Lite's replicator would trip
# on) and exits 1 when it found any.
#
# usage: examples/check-before-sync.sh [PATH-TO-cbl-attachments]
set -eu
. "$(dirname -- "$0")/lib/common.sh" "$@"

section "the example dump as exported: one blob that only a push gives an entry"
# note::2017-004 has an _attachments object (an old readme.txt) and a blob that is in none of
# its entries: a Couchbase Lite client pulling the document as it is fails the revision ("There
# is no content for the blob"). --check describes documents as given; push gives the blob its
# entry.
status=0
"$bin" --check "$data/dump.ndjson" >"$tmp/findings" 2>"$tmp/summary" || status=$?
cat "$tmp/findings" "$tmp/summary"
expect_status 1 "$status" "--check on the example dump"
[ "$(jq -r '[.id, .problem, .pointer] | join(" ")' "$tmp/findings")" = \
  "note::2017-004 dangling-blob /photo" ] || fail "expected one dangling-blob finding"
ok "the blob without an entry is found"

section "the example dump as Couchbase Lite's replicator sends it: only its stubs are found"
# Over the replication protocol, Sync Gateway answers a stub it does not know by asking the client
# for the bytes. Posted over REST, a stub must repeat an attachment of the revision before, and
# these documents have no _rev: CouchDB answers 412, Sync Gateway keeps an attachment without
# bytes. Nothing else is found.
status=0
"$bin" --push --naming litecore "$data/dump.ndjson" | "$bin" --check >"$tmp/findings" 2>"$tmp/summary" ||
  status=$?
cat "$tmp/summary"
expect_status 1 "$status" "--push --naming litecore | --check on the example dump"
[ "$(jq -r .problem "$tmp/findings" | sort -u)" = "stub-without-revision" ] ||
  fail "only stub-without-revision expected: $(cat "$tmp/findings")"
stubs=$("$bin" --push --naming litecore "$data/dump.ndjson" |
  jq -s '[.[] | select(has("_rev") | not) | ._attachments // {} | keys[] | select(startswith("blob_/"))] | length')
[ "$(count_lines "$tmp/findings")" = "$stubs" ] || fail "one finding per stub of a document without _rev ($stubs)"
ok "$stubs stubs in documents without _rev, and nothing else"

section "attachments over 20 MiB (examples/data/media.ndjson)"
status=0
"$bin" --check "$data/media.ndjson" >"$tmp/findings" 2>"$tmp/summary" || status=$?
jq -r '[.id, .problem, .pointer] | @tsv' "$tmp/findings"
cat "$tmp/summary"
expect_status 1 "$status" "--check on media.ndjson"
[ "$(jq -r '[.id, .problem, .pointer] | join(" ")' "$tmp/findings" | tr '\n' ';')" = \
  "video::launch attachment-too-large /video;note::2015-scan attachment-too-large /_attachments/plan.tiff;" ] ||
  fail "unexpected findings"
ok "the 30 MiB blob and the 21 MiB legacy attachment are found; exactly 20 MiB is accepted"

section "more than 1 MiB of attachment metadata: an album of 10000 photos"
jq -nc '{_id: "album::trip-2023", type: "album",
         photos: [range(0; 10000) | {"@type": "blob", content_type: "image/jpeg",
                  digest: ("sha1-" + ("00000000000000000000000000" + tostring)[-26:] + "A="),
                  length: (100000 + .)}]}' >"$tmp/album.json"
status=0
"$bin" --check "$tmp/album.json" >"$tmp/findings" 2>/dev/null || status=$?
jq -r '.detail' "$tmp/findings"
expect_status 1 "$status" "--check on the album"
[ "$(jq -r .problem "$tmp/findings")" = "metadata-too-large" ] || fail "expected metadata-too-large"
# The size --check reports is the size of the compact _attachments that --push makes.
size=$("$bin" --push "$tmp/album.json" | jq -c '._attachments' | tr -d '\n' | wc -c | tr -d ' ')
jq -r '.detail' "$tmp/findings" | grep -q " $size bytes" || fail "--check does not report the $size bytes that push makes"
ok "reported, with the size that push would produce ($size bytes)"

section "the IDs of the documents that would fail to sync, from all inputs"
"$bin" --check "$data/dump.ndjson" "$data/media.ndjson" "$data/messy.ndjson" 2>/dev/null |
  jq -r '.id // "(no _id, line \(.line))"' | sort -u | tee "$tmp/ids"
[ "$(count_lines "$tmp/ids")" -eq 8 ] || fail "expected 8 documents"
ok "8 documents to fix before they can sync"
