#!/bin/sh
# --format list: the input is one JSON array of documents, as `cbexport json --format list`
# writes it; the output is again one array, one element per line. Checks that the elements are
# exactly what --format lines gives for the same documents, and that the round trip holds.
#
# usage: examples/cbexport-list-format.sh [PATH-TO-cbl-attachments]
set -eu
. "$(dirname -- "$0")/lib/common.sh" "$@"

dump=$data/dump.ndjson

# The example dump as one array: "[", the documents separated by ",\n", "]".
{
  printf '[\n'
  sed '$!s/$/,/' "$dump"
  printf ']\n'
} >"$tmp/list.json"
jq -e 'type == "array"' "$tmp/list.json" >/dev/null || fail "could not make the list input"

section "cbl-attachments --push --format list list.json (first 3 lines, cut)"
status=0
"$bin" --push --format list "$tmp/list.json" >"$tmp/pushed.json" 2>"$tmp/err" || status=$?
cut -c 1-110 "$tmp/pushed.json" | head -n 3
cat "$tmp/err" >&2
expect_status 0 "$status" "--push --format list"
[ "$(jq length "$tmp/pushed.json")" -eq "$(count_lines "$dump")" ] ||
  fail "the output array has $(jq length "$tmp/pushed.json") elements, expected $(count_lines "$dump")"
ok "one JSON array of $(jq length "$tmp/pushed.json") documents"

section "each element is the same document --format lines gives"
"$bin" --push "$dump" >"$tmp/pushed.ndjson"
sed '1d;$d;s/,$//' "$tmp/pushed.json" >"$tmp/elements"
same "$tmp/pushed.ndjson" "$tmp/elements" "list and lines output differ"
head -n 1 "$tmp/pushed.json" | grep -qx '\[' || fail "the array does not open on its own line"
tail -n 1 "$tmp/pushed.json" | grep -qx '\]' || fail "the array does not close on its own line"
ok "'[' and ']' on their own lines, one element per line in between"

section "pull(push(list)) == list"
# list.json is already in the output's layout, so the round trip gives it back byte for byte.
"$bin" --pull --format list "$tmp/pushed.json" >"$tmp/back.json"
same "$tmp/list.json" "$tmp/back.json" "pull(push(list)) differs from the list"
ok "identical (cmp)"

section "an empty list stays an empty list"
printf '[]' | "$bin" --push --format list >"$tmp/empty.json"
printf '[\n]\n' >"$tmp/empty-expected.json"
same "$tmp/empty-expected.json" "$tmp/empty.json" "[] did not give an empty array"
ok "[] gives [ and ] on two lines"

section "without --format list, an array is rejected with a hint"
status=0
"$bin" --push "$tmp/list.json" >/dev/null 2>"$tmp/err" || status=$?
cat "$tmp/err"
expect_status 1 "$status" "--push on a list without --format list"
grep -q 'read in list framing (--format list)' "$tmp/err" || fail "no hint at --format list"
ok "status 1 and a hint at --format list"
