#!/bin/sh
# Bad input, nothing lost: by default the first bad document stops the run (everything before
# it is written whole); --keep-going reports each bad document and goes on; --rejects FILE also
# saves each bad document's original text, so good output + rejects = the whole input.
#
# examples/data/messy.ndjson has 8 lines: 4 good documents, an array, a line cut short by an
# interrupted export, a document with two "_attachments", one whose "_attachments" is a string
# although it has a blob, and a blob without a digest (a warning; --strict makes it an error).
# After malformed JSON, --keep-going resumes at the next line that starts with "{".
#
# usage: examples/keep-going-rejects.sh [PATH-TO-cbl-attachments]
set -eu
. "$(dirname -- "$0")/lib/common.sh" "$@"

messy=$data/messy.ndjson

section "default: stop at the first bad document"
status=0
"$bin" --push "$messy" >"$tmp/out" 2>"$tmp/err" || status=$?
cat "$tmp/err"
expect_status 1 "$status" "--push on bad input"
[ "$(count_lines "$tmp/out")" -eq 1 ] || fail "expected only the document before the bad one"
ok "status 1; the one document before the bad line was written"

section "--keep-going: report each bad document, convert the rest"
status=0
"$bin" --push --keep-going "$messy" >"$tmp/out" 2>"$tmp/err" || status=$?
cat "$tmp/err"
expect_status 1 "$status" "--push --keep-going on bad input"
[ "$(grep -c ': error: ' "$tmp/err")" -eq 4 ] || fail "expected 4 errors"
[ "$(grep -c ': warning: ' "$tmp/err")" -eq 1 ] || fail "expected 1 warning"
for message in \
  'messy.ndjson:2:1: error: document is not a JSON object (it is an array); a file holding one array of documents is read in list framing (skipped 2:1 to 2:69) (--format list)' \
  'messy.ndjson:4:[0-9]*: error: document "msg::cut": malformed JSON: ' \
  'messy.ndjson:5:[0-9]*: error: document "note::dup": more than one top-level "_attachments" member; refusing to guess which one is meant' \
  'messy.ndjson:6:[0-9]*: error: document "note::weird": "_attachments" is a string, not an object, and the document has blobs: push cannot add their entries without losing data' \
  'messy.ndjson:7:[0-9]*: warning: document "product::nodigest": blob at $.photos.thumbnail has no string "digest"; it gets no _attachments entry'
do
  grep -q "^cbl-attachments: .*$message" "$tmp/err" || fail "missing message: $message"
done
jq -r '._id' "$tmp/out" | tr '\n' ' '
echo
[ "$(jq -r '._id' "$tmp/out" | tr '\n' ' ')" = "user::ok1 user::ok2 product::nodigest user::ok3 " ] ||
  fail "unexpected documents in the output"
ok "status 1; 4 errors and 1 warning reported; the 4 other documents converted"

section "--rejects rejects.ndjson: the bad documents' original text"
status=0
"$bin" --push --rejects "$tmp/rejects.ndjson" "$messy" >"$tmp/out" 2>/dev/null || status=$?
expect_status 1 "$status" "--push --rejects"
cut -c 1-100 "$tmp/rejects.ndjson"
sed -n '2p;4p;5p;6p' "$messy" >"$tmp/expected-rejects"
same "$tmp/expected-rejects" "$tmp/rejects.ndjson" "the rejects file is not lines 2, 4, 5 and 6 of the input"
total=$(($(count_lines "$tmp/out") + $(count_lines "$tmp/rejects.ndjson")))
[ "$total" -eq "$(count_lines "$messy")" ] || fail "output + rejects = $total lines, input has $(count_lines "$messy")"
ok "$(count_lines "$tmp/out") converted + $(count_lines "$tmp/rejects.ndjson") rejected = $(count_lines "$messy") input documents"

section "--strict: a blob without a digest is an error too"
status=0
"$bin" --push --strict --rejects "$tmp/strict-rejects.ndjson" "$messy" >"$tmp/out" 2>"$tmp/err" || status=$?
expect_status 1 "$status" "--push --strict"
grep 'product::nodigest' "$tmp/err"
grep -q 'error: document "product::nodigest"' "$tmp/err" || fail "the warning did not become an error"
[ "$(count_lines "$tmp/strict-rejects.ndjson")" -eq 5 ] || fail "expected 5 rejects with --strict"
ok "5 rejected, 3 converted"

section "what --check says about the rejects (to fix them by hand)"
status=0
"$bin" --check "$tmp/rejects.ndjson" 2>"$tmp/err" >"$tmp/findings" || status=$?
jq -r '[.line, .id // "-", .problem] | @tsv' "$tmp/findings"
cat "$tmp/err"
expect_status 1 "$status" "--check on the rejects"
# note::dup's entry is also no stub, which Sync Gateway's REST API refuses.
[ "$(count_lines "$tmp/findings")" -eq 5 ] || fail "expected 5 findings"
ok "5 findings, status 1"

section "good input gives status 0"
status=0
grep '"user::ok' "$messy" | "$bin" --push >/dev/null || status=$?
expect_status 0 "$status" "--push on good documents"
ok "status 0"
