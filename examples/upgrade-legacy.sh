#!/bin/sh
# Coming from Couchbase Lite 1.x, CouchDB or PouchDB: move legacy attachments into blobs.
# examples/data/legacy-dump.ndjson holds a Couchbase Lite 1.x export (stubs whose bytes are in
# legacy.cblite/attachments/<HEX SHA-1>.blob), a CouchDB and a PouchDB document with inline md5
# bodies, a document half-way to blobs, and a CouchDB stub whose bytes are not at hand.
#
# usage: examples/upgrade-legacy.sh [PATH-TO-cbl-attachments]
set -eu
. "$(dirname -- "$0")/lib/common.sh" "$@"

dump=$data/legacy-dump.ndjson
store=$tmp/new.cblite2/Attachments

section "the 1.x files, renamed as Couchbase Lite 2 names them (hex SHA-1 -> base64, / -> _)"
mkdir -p "$store"
for file in "$data"/legacy.cblite/attachments/*.blob; do
  name=$(basename "$file" .blob | basenc --base16 -d | base64 | tr / _)
  cp "$file" "$store/$name.blob"
done
ls "$store"

section "cbl-attachments --upgrade --blobs new.cblite2 legacy-dump.ndjson > upgraded.ndjson"
status=0
"$bin" --upgrade --blobs "$tmp/new.cblite2" --stats "$dump" >"$tmp/upgraded.ndjson" \
  2>"$tmp/stderr" || status=$?
cat "$tmp/upgraded.ndjson" "$tmp/stderr"
expect_status 0 "$status" "--upgrade"
[ "$(jq -c '[._id, (.attachments // {} | keys), (._attachments // {} | keys)]' "$tmp/upgraded.ndjson" | tr '\n' ' ')" = \
  '["recipe::pancakes",["recipe.txt"],[]] ["user::ana",["avatar.gif","board/minutes.txt"],[]] ["note::couch",["hello.txt"],[]] ["user::pouch",["avatar.bin","banner"],[]] ["recipe::waffles",[],[]] ["note::plain",[],[]] ["note::stub",[],["scan.pdf"]] ' ] ||
  fail "each attachment should be a blob under .attachments, but the md5 stub"
grep -q 'warning: document "note::stub": _attachments entry "scan.pdf" has an md5- digest and no "data"' "$tmp/stderr" ||
  fail "the md5 stub should stay with a warning"
ok "legacy entries are blobs in .attachments; the md5 stub stays, with a warning"
[ "$(jq -r 'select(._id == "note::couch") | .attachments["hello.txt"].digest' "$tmp/upgraded.ndjson")" = \
  "sha1-$(printf 'hello from couchdb\n' | sha1sum | cut -d' ' -f1 | tr a-f A-F | basenc --base16 -d | base64)" ] ||
  fail "CouchDB's md5 digest should be the SHA-1 of the bytes"
grep -q '"score":12345678901234567890123' "$tmp/upgraded.ndjson" || fail "numbers are copied exactly"
ok "md5 digests are re-hashed to SHA-1, numbers copied exactly"
[ -z "$(jq -r '.. | objects | select(has("data")) | ._id' "$tmp/upgraded.ndjson")" ] ||
  fail "inline bytes should have moved into the store"
ls "$store"
[ "$(ls "$store" | wc -l | tr -d ' ')" = 5 ] || fail "the two inline bodies should be stored"
ok "inline bodies moved into the store"

section "idempotent, and pull after it changes nothing"
"$bin" --upgrade --blobs "$tmp/new.cblite2" "$dump" 2>/dev/null | "$bin" --upgrade 2>/dev/null >"$tmp/twice.ndjson"
same "$tmp/upgraded.ndjson" "$tmp/twice.ndjson" "upgrade twice differs from once"
"$bin" --pull "$tmp/upgraded.ndjson" >"$tmp/pulled.ndjson"
same "$tmp/upgraded.ndjson" "$tmp/pulled.ndjson" "pull after upgrade changed something"
ok "upgrade(upgrade(d)) == upgrade(d), pull(upgrade(d)) == upgrade(d)"

section "cbl-attachments --check --blobs new.cblite2 upgraded.ndjson: every body is there"
status=0
"$bin" --check --blobs "$tmp/new.cblite2" "$tmp/upgraded.ndjson" >"$tmp/findings" 2>"$tmp/summary" || status=$?
cat "$tmp/findings" "$tmp/summary"
expect_status 1 "$status" "--check"
[ "$(jq -r '[.id, .problem] | join(" ")' "$tmp/findings")" = "note::stub md5-digest" ] ||
  fail "only the md5 stub should be found"
ok "no blob-missing; the md5 stub is the one finding (fetch it with ?attachments=true)"

section "what a Couchbase Lite 2 client would send: push --naming litecore"
"$bin" --push --naming litecore "$tmp/upgraded.ndjson" >"$tmp/pushed.ndjson"
jq -c 'select(._id == "user::ana") | ._attachments' "$tmp/pushed.ndjson"
[ "$(jq -c 'select(._id == "user::ana") | ._attachments | keys' "$tmp/pushed.ndjson")" = \
  '["blob_/attachments/avatar.gif","blob_/attachments/board~1minutes.txt"]' ] ||
  fail "entries are named by the blobs' JSON Pointers"
"$bin" --pull "$tmp/pushed.ndjson" >"$tmp/back.ndjson"
same "$tmp/upgraded.ndjson" "$tmp/back.ndjson" "pull(push(upgrade(d))) != upgrade(d)"
ok "stub entries named blob_/attachments/…, and pull gives the upgraded documents back"

section "into Sync Gateway over REST: push --naming litecore --blobs, bodies with the bytes"
"$bin" --push --naming litecore --blobs "$tmp/new.cblite2" --bulk-docs 10 "$tmp/upgraded.ndjson" >"$tmp/bulk.ndjson"
[ -z "$(jq -r '.docs[] | select(._id != "note::stub") | (._attachments // {}) | to_entries[] | select(.value.data == null) | .key' "$tmp/bulk.ndjson")" ] ||
  fail "every blob's entry should carry its bytes"
ok "every blob's entry carries data: ready for POST /db/_bulk_docs"
