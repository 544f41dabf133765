#!/bin/sh
# The README's curl pipelines for Sync Gateway's and CouchDB's REST APIs (_changes, a
# continuous feed, _all_docs, _bulk_get, _bulk_docs), run exactly as the README writes them,
# against response bodies captured from those servers (examples/data/api): `curl` here is
# examples/lib/fake-curl, which answers with the captured body and keeps what is POSTed.
# No jq in any pipeline: the envelopes are read as they come, every byte of them kept.
#
# usage: examples/rest-apis.sh [PATH-TO-cbl-attachments]
set -eu
. "$(dirname -- "$0")/lib/common.sh" "$@"

mkdir -p "$tmp/bin" "$tmp/posts"
ln -s "$examples/lib/fake-curl" "$tmp/bin/curl"
ln -s "$bin" "$tmp/bin/cbl-attachments"
cp "$data/dump.ndjson" "$tmp/dump.ndjson"
export FAKE_CURL_DATA="$data" FAKE_CURL_POSTS="$tmp/posts"

# run PIPELINE: checks that the documentation (the README, docs/) shows PIPELINE verbatim, then
# runs it in $tmp.
run() {
  cat "$repo/README.md" "$repo"/docs/*.md | grep -qF -- "$1" || fail "the documentation does not show: $1"
  section "$1" >&2
  (cd "$tmp" && PATH="$tmp/bin:$PATH" sh -c "$1")
}

# Sync Gateway _changes: the response pulled in place; the envelope is byte for byte the same.
run "curl -sS 'http://localhost:4985/app/_changes?include_docs=true' | cbl-attachments --pull --format changes > pulled-changes.json"
jq -e '.results | length == 8' "$tmp/pulled-changes.json" >/dev/null || fail "eight rows out"
[ "$(jq -r '.last_seq' "$tmp/pulled-changes.json")" = "$(jq -r '.last_seq' "$data/changes.json")" ] \
  || fail "last_seq changed"
[ "$(jq '[.results[].doc | select(. != null) | ._attachments // {} | keys[] | select(startswith("blob_") or startswith("$"))] | length' "$tmp/pulled-changes.json")" = 0 ] \
  || fail "an entry mirroring a blob is left"
ok "the _changes response is valid JSON, rows and last_seq kept, blob mirrors removed"
"$bin" --push --naming litecore --format changes "$tmp/pulled-changes.json" \
  | "$bin" --pull --format changes | cmp -s - "$tmp/pulled-changes.json" \
  || fail "pull(push(e)) is not e"
ok "pushing the pulled response and pulling it again gives it back byte for byte"

# A continuous feed: one row per line, heartbeats skipped, each row out as it arrives.
run "curl -sS -N 'http://localhost:4985/app/_changes?feed=continuous&include_docs=true&heartbeat=30000' | cbl-attachments --pull --docs .doc --unbuffered" \
  >"$tmp/feed.ndjson"
cat "$tmp/feed.ndjson"
[ "$(count_lines "$tmp/feed.ndjson")" = 3 ] || fail "three rows out of the feed"
grep -q blob_ "$tmp/feed.ndjson" && fail "the blob_/voice entry is left"
ok "three rows, the removed-from-channel row kept as it was"

# Sync Gateway _all_docs, listed: every attachment, with where its document is.
run "curl -sS 'http://localhost:4985/app/_all_docs?include_docs=true' | cbl-attachments --list --format all-docs" \
  >"$tmp/rows.ndjson"
cat "$tmp/rows.ndjson"
[ "$(jq -r '.path' "$tmp/rows.ndjson" | sort -u | tr '\n' ' ')" = ".rows[0].doc .rows[1].doc " ] \
  || fail "rows name their documents' places"
ok "--list rows carry the document's path in the envelope"

# The CouchDB bodies are a real CouchDB 3.5's (scripts/capture-couchdb-bodies.sh): every digest
# re-labelled md5-, so pull matches push's entries by name and length.

# CouchDB _changes: the mirrors of the image and scan blobs go, the real attachments stay, the
# deleted document's row is kept as it was.
status=0
run "curl -sS -u admin:password 'http://localhost:5984/app/_changes?include_docs=true' | cbl-attachments --pull --format changes" \
  >"$tmp/couch-changes.json" 2>"$tmp/stderr" || status=$?
expect_status 0 "$status" "--pull on CouchDB's _changes"
# (run writes its section heading to standard error: only the heading may be there.)
[ "$(grep -cv '^== \|^$' "$tmp/stderr")" = 0 ] || fail "no message expected: $(cat "$tmp/stderr")"
[ "$(jq -c '[.results[] | [.id, (.doc._attachments // {} | keys)]]' "$tmp/couch-changes.json")" = \
  '[["user::priya",[]],["note::2017-004",["readme.txt"]],["recipe::pancakes",["pancakes.png"]],["recipe::toast",[]]]' ] \
  || fail "the \$.image and \$.scan mirrors go, readme.txt and pancakes.png stay"
jq -e '.results[0].doc | has("_attachments") | not' "$tmp/couch-changes.json" >/dev/null \
  || fail "user::priya's emptied _attachments goes"
jq -e '.results[3].deleted == true and .pending == 0' "$tmp/couch-changes.json" >/dev/null \
  || fail "the deleted document's row and the envelope are kept"
ok "CouchDB _changes: the blobs' mirrors removed by name and length, real attachments kept"

# CouchDB _bulk_get (asked for JSON): the documents pulled inside their {"ok":…} elements,
# errors kept.
run "curl -sS -u admin:password -H 'Content-Type: application/json' -H 'Accept: application/json' -d '{\"docs\":[{\"id\":\"user::priya\"},{\"id\":\"user::nobody\"}]}' 'http://localhost:5984/app/_bulk_get?revs=true' | cbl-attachments --pull --format bulk-get" \
  >"$tmp/bulk-get.json"
jq -e '.results[0].docs[0].ok | has("_attachments") | not' "$tmp/bulk-get.json" >/dev/null \
  || fail "the \$.image entry should be gone"
jq -e '.results[1].docs[0].error.error == "not_found"' "$tmp/bulk-get.json" >/dev/null \
  || fail "the error element is kept"
ok "_bulk_get: the mirror entry removed, the error element kept"

# CouchDB _all_docs by keys ("doc":null for a deleted document, an error row for a missing
# one): would Couchbase Lite clients take these documents as they are? Not the md5 stub of the
# attachment CouchDB made: one finding, status 1.
status=0
run "curl -sS -u admin:password -H 'Content-Type: application/json' -d '{\"keys\":[\"recipe::pancakes\",\"recipe::toast\",\"recipe::missing\"]}' 'http://localhost:5984/app/_all_docs?include_docs=true' | cbl-attachments --check --format all-docs" \
  >"$tmp/findings.ndjson" 2>"$tmp/summary" || status=$?
cat "$tmp/findings.ndjson" "$tmp/summary"
expect_status 1 "$status" "--check on CouchDB's _all_docs"
[ "$(jq -r '[.id, .problem, .pointer, .path] | join(" ")' "$tmp/findings.ndjson")" = \
  "recipe::pancakes md5-digest /_attachments/pancakes.png .rows[0].doc" ] ||
  fail "expected one md5-digest finding, for recipe::pancakes"
ok "the md5 stub is found; the deleted document and the error row pass"

# A single GET with ?attachments=true and no Accept header: CouchDB answers multipart/related,
# and the error says so.
status=0
(cd "$tmp" && PATH="$tmp/bin:$PATH" sh -c \
  "curl -sS -u admin:password 'http://localhost:5984/app/note::2017-004?attachments=true' | cbl-attachments --pull") \
  >/dev/null 2>"$tmp/stderr" || status=$?
expect_status 1 "$status" "--pull on a multipart body"
grep -q "error: not JSON: the input is a MIME multipart body (its first line is the boundary --" \
  "$tmp/stderr" || fail "the error names the multipart body: $(cat "$tmp/stderr")"
ok "a multipart body is named as such"

# _bulk_docs: a dump pushed as request bodies of 500 documents, POSTed in parallel.
command -v parallel >/dev/null 2>&1 || { echo "SKIP: GNU parallel is not installed"; exit 77; }
run "cbl-attachments --push --naming litecore --bulk-docs 500 dump.ndjson | parallel --pipe -N1 --block 64M -q curl -sS -H 'Content-Type: application/json' --data-binary @- http://localhost:4985/app/_bulk_docs"
cat "$tmp"/posts/body.* | jq -c '.docs[]' >"$tmp/posted.ndjson"
[ "$(count_lines "$tmp/posted.ndjson")" = "$(count_lines "$data/dump.ndjson")" ] \
  || fail "every document posted once"
"$bin" --check "$tmp/posted.ndjson" 2>"$tmp/check" >/dev/null || true
ok "$(cat "$tmp/check")"
