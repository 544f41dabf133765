#!/bin/sh
# What --format lines (the default) accepts: NDJSON, documents one after another on one line,
# pretty-printed documents, blank lines, CRLF line ends, a UTF-8 byte-order mark (as Windows
# tools write them), several files and standard input ("-"). The output is always one compact
# document per line, in input order.
#
# usage: examples/input-framing.sh [PATH-TO-cbl-attachments]
set -eu
. "$(dirname -- "$0")/lib/common.sh" "$@"

dump=$data/dump.ndjson
"$bin" --push "$dump" >"$tmp/expected"

check() { # WHAT FILE...
  what=$1
  shift
  "$bin" --push "$@" >"$tmp/got" || fail "$what: --push failed"
  same "$tmp/expected" "$tmp/got" "$what: output differs from the NDJSON result"
  ok "$what"
}

section "the same 20 documents, framed differently, give the same output"
check "NDJSON" "$dump"

# A byte-order mark, CRLF line ends and blank lines, as a Windows export might have them.
cr=$(printf '\r')
{ printf '\357\273\277'; sed "s/\$/$cr/" "$dump" | sed "5{p;s/.*/$cr/;}"; printf '\r\n\r\n'; } >"$tmp/windows.ndjson"
od -An -c -N 3 "$tmp/windows.ndjson" | tr -s ' '
check "BOM, CRLF and blank lines" "$tmp/windows.ndjson"

# All documents on one line, nothing between them.
tr -d '\n' <"$dump" >"$tmp/one-line.json"
check "concatenated on one line: {...}{...}" "$tmp/one-line.json"

# Pretty-printed by hand, keeping every number and escape as it was: a newline and two spaces
# after each comma at the document's top level (the example documents hold no ", in strings).
awk '{ gsub(/,"/, ",\n  \""); print }' "$dump" >"$tmp/pretty.json"
check "pretty-printed over several lines ($(count_lines "$tmp/pretty.json") lines)" "$tmp/pretty.json"

# Several inputs, one of them standard input.
head -n 7 "$dump" >"$tmp/part1"
sed -n '8,15p' "$dump" >"$tmp/part2"
tail -n +16 "$dump" >"$tmp/part3"
"$bin" --push "$tmp/part1" - "$tmp/part3" <"$tmp/part2" >"$tmp/got"
same "$tmp/expected" "$tmp/got" "file - file: output differs"
ok "three inputs (file, standard input, file), output in order"

section "locations in messages are lines and columns of the input as it is"
printf '{"_id":"a"}\r\n\r\n{"_id":"b",\r\n  "_attachments":{},\r\n  "_attachments":{}}\r\n' >"$tmp/dup.ndjson"
status=0
"$bin" --push "$tmp/dup.ndjson" >/dev/null 2>"$tmp/err" || status=$?
sed "s|$tmp/||" "$tmp/err"
expect_status 1 "$status" "duplicate _attachments"
grep -q 'dup.ndjson:5:3: error: document "b": more than one top-level "_attachments" member' "$tmp/err" ||
  fail "expected the location 5:3 (the second \"_attachments\")"
ok "line 5, column 3: the second \"_attachments\""
