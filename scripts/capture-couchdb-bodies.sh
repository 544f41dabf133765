#!/usr/bin/env bash
# Captures the CouchDB response bodies under examples/data/api/ from a real CouchDB 3.5 (the one
# in ../shared/peers/couchdb), so that the examples and the README show what the server sends,
# byte for byte, never a body written from reading its code.
#
#   scripts/capture-couchdb-bodies.sh [BINARY]     (default .build/release/cbl-attachments)
#
# It starts a fresh server with default settings, makes the database `app` the README talks to,
# loads it the way the README does and the way CouchDB's own clients do, and writes:
#   couchdb-all-docs.json        GET  /app/_all_docs?include_docs=true
#   couchdb-all-docs-keys.json   POST /app/_all_docs?include_docs=true  {"keys":[…]}: a deleted
#                                document ("doc":null) and a missing one (an error row)
#   couchdb-changes.json         GET  /app/_changes?include_docs=true
#   couchdb-bulk-get.json        POST /app/_bulk_get?revs=true (Accept: application/json)
#   couchdb-doc-multipart.txt    GET  /app/note::2017-004?attachments=true, no Accept header:
#                                what CouchDB answers then (multipart/related), not JSON
#   couchdb-doc-attachments.json GET  /app/note::couch?attachments=true, Accept:
#                                application/json: a text attachment CouchDB stored compressed;
#                                the same document is the note::couch line of
#                                examples/data/legacy-dump.ndjson, which this script rewrites
#   couchdb-bulk-get-multipart.txt       POST /app/_bulk_get, Accept: multipart/mixed: documents
#                                with a blob and its pushed entry, a text attachment (a gzip
#                                part), a PNG (an identity part), a deleted document and a
#                                missing one (error parts)
#   couchdb-bulk-get-attachments.json    the same request as JSON, attachments=true and
#                                att_encoding_info=true: what the multipart body stands for
#   couchdb-bulk-get-large-multipart.txt POST /parts/_bulk_get, Accept: multipart/mixed: 5 MB of
#                                text (a 16 KiB block of words, repeated: a small gzip part),
#                                64 KiB of binary and an empty attachment; their SHA-1 digests,
#                                by sha1sum, are in couchdb-bulk-get-large.sha1
set -euo pipefail
cd "$(dirname "$0")/.."
binary=$(realpath "${1:-.build/release/cbl-attachments}")
peer=$(realpath -m ../shared/peers/couchdb)
[ -x "$peer/start" ] || { echo "no CouchDB peer at $peer" >&2; exit 1; }
out=examples/data/api
dir=$(mktemp -d "${TMPDIR:-/tmp}/couchdb-capture.XXXXXX")
url=$(COUCHDB_DIR=$dir "$peer/start")
trap '"$peer/stop" "$dir" >/dev/null 2>&1 || true' EXIT
base=${url/admin:password@/}
put() { curl -fsS -u admin:password -X PUT "$@" >/dev/null; }
rev() { curl -fsS -u admin:password "$base/app/$1" | sed 's/.*"_rev":"\([^"]*\)".*/\1/'; }

put "$base/app"
# Couchbase Lite 2 documents pushed with their bytes, as the README loads them: a user with an
# image blob, and a scanned note whose blob sits beside a real attachment added later.
printf '%s\n' \
  '{"_id":"user::priya","type":"user","name":"Priya","email":"priya@example.com","image":{"@type":"blob","content_type":"image/png","digest":"sha1-qYHybdMfZYz/UnMwZhjrAccGSXg=","length":3008}}' \
  '{"_id":"note::2017-004","type":"note","scan":{"@type":"blob","content_type":"image/tiff","digest":"sha1-tXA0C7MAnpPwaEL+gODDrXcg/K4=","length":70000}}' \
  | "$binary" --push --blobs examples/data/app.cblite2 --bulk-docs 10 \
  | curl -fsS -u admin:password -H 'Content-Type: application/json' --data-binary @- \
    "$base/app/_bulk_docs" >/dev/null
printf 'hello\n' | put -H 'Content-Type: text/plain' --data-binary @- \
  "$base/app/note::2017-004/readme.txt?rev=$(rev note::2017-004)"
# Documents CouchDB's own clients made: an attachment PUT as raw bytes, and a deleted document.
put -H 'Content-Type: application/json' -d '{"type":"recipe","title":"Pancakes — café style"}' \
  "$base/app/recipe::pancakes"
put -H 'Content-Type: image/png' --data-binary @"examples/data/app.cblite2/Attachments/qYHybdMfZYz_UnMwZhjrAccGSXg=.blob" \
  "$base/app/recipe::pancakes/pancakes.png?rev=$(rev recipe::pancakes)"
put -H 'Content-Type: application/json' -d '{"type":"recipe","title":"Toast"}' "$base/app/recipe::toast"
curl -fsS -u admin:password -X DELETE "$base/app/recipe::toast?rev=$(rev recipe::toast)" >/dev/null

# A document of CouchDB's own, for --upgrade: text stored gzip-compressed under the md5 of the
# stream. It is captured alone, and goes into the legacy dump.
put "$base/couch"
put -H 'Content-Type: application/json' -d '{"text":"from CouchDB, GET ?attachments=true"}' \
  "$base/couch/note::couch"
printf 'hello from couchdb\n' | put -H 'Content-Type: text/plain' --data-binary @- \
  "$base/couch/note::couch/hello.txt?rev=$(curl -fsS -u admin:password "$base/couch/note::couch" \
    | sed 's/.*"_rev":"\([^"]*\)".*/\1/')"
curl -fsS -u admin:password -H 'Accept: application/json' \
  "$base/couch/note::couch?attachments=true" >"$out/couchdb-doc-attachments.json"
legacy=examples/data/legacy-dump.ndjson
awk -v doc="$(cat "$out/couchdb-doc-attachments.json")" \
  'index($0, "{\"_id\":\"note::couch\"") == 1 { print doc; next } { print }' "$legacy" >"$legacy.new"
mv "$legacy.new" "$legacy"

curl -fsS -u admin:password "$base/app/_all_docs?include_docs=true" >"$out/couchdb-all-docs.json"
curl -fsS -u admin:password -H 'Content-Type: application/json' \
  -d '{"keys":["recipe::pancakes","recipe::toast","recipe::missing"]}' \
  "$base/app/_all_docs?include_docs=true" >"$out/couchdb-all-docs-keys.json"
curl -fsS -u admin:password "$base/app/_changes?include_docs=true" >"$out/couchdb-changes.json"
curl -fsS -u admin:password -H 'Content-Type: application/json' -H 'Accept: application/json' \
  -d '{"docs":[{"id":"user::priya"},{"id":"user::nobody"}]}' \
  "$base/app/_bulk_get?revs=true" >"$out/couchdb-bulk-get.json"
curl -fsS -u admin:password "$base/app/note::2017-004?attachments=true" \
  >"$out/couchdb-doc-multipart.txt"
# Multipart bodies (--format multipart).
curl -fsS -u admin:password -H 'Content-Type: application/json' -H 'Accept: multipart/mixed' \
  -d '{"docs":[{"id":"user::priya"},{"id":"note::2017-004"},{"id":"recipe::pancakes"},{"id":"recipe::toast"},{"id":"recipe::missing"}]}' \
  "$base/app/_bulk_get" >"$out/couchdb-bulk-get-multipart.txt"
curl -fsS -u admin:password -H 'Content-Type: application/json' -H 'Accept: application/json' \
  -d '{"docs":[{"id":"user::priya"},{"id":"note::2017-004"},{"id":"recipe::pancakes"},{"id":"recipe::toast"},{"id":"recipe::missing"}]}' \
  "$base/app/_bulk_get?attachments=true&att_encoding_info=true" \
  >"$out/couchdb-bulk-get-attachments.json"
put "$base/parts"
files=$(mktemp -d "${TMPDIR:-/tmp}/couchdb-parts.XXXXXX")
python3 - "$files" <<'PY'
import random, sys
random.seed(26)
words = ["blob", "digest", "attachment", "revision", "gateway", "couch", "lite", "sync"]
block = " ".join(random.choice(words) for _ in range(3000)).encode()[:16384]
with open(sys.argv[1] + "/large.txt", "wb") as f:
    f.write((block * (5_000_000 // len(block) + 1))[:5_000_000])
with open(sys.argv[1] + "/random.bin", "wb") as f:
    f.write(bytes(random.getrandbits(8) for _ in range(65536)))
open(sys.argv[1] + "/empty.bin", "wb").close()
PY
put -H 'Content-Type: application/json' -d '{"type":"export","note":"large parts"}' "$base/parts/large"
put -H 'Content-Type: text/plain' --data-binary @"$files/large.txt" \
  "$base/parts/large/large.txt?rev=$(curl -fsS -u admin:password "$base/parts/large" | sed 's/.*"_rev":"\([^"]*\)".*/\1/')"
put -H 'Content-Type: application/octet-stream' --data-binary @"$files/random.bin" \
  "$base/parts/large/random.bin?rev=$(curl -fsS -u admin:password "$base/parts/large" | sed 's/.*"_rev":"\([^"]*\)".*/\1/')"
put -H 'Content-Type: application/octet-stream' --data-binary @"$files/empty.bin" \
  "$base/parts/large/empty.bin?rev=$(curl -fsS -u admin:password "$base/parts/large" | sed 's/.*"_rev":"\([^"]*\)".*/\1/')"
curl -fsS -u admin:password -H 'Content-Type: application/json' -H 'Accept: multipart/mixed' \
  -d '{"docs":[{"id":"large"}]}' "$base/parts/_bulk_get" \
  >"$out/couchdb-bulk-get-large-multipart.txt"
(cd "$files" && sha1sum large.txt random.bin empty.bin) >"$out/couchdb-bulk-get-large.sha1"
rm -rf "$files"
ls -l "$out"/couchdb-*
