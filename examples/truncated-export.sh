#!/bin/sh
# An export or a copy that was interrupted leaves records cut short, anywhere: inside a string,
# right after a comma or a bracket, after a key, or at the very end of the file. With
# --keep-going a cut record costs only its own line: processing resumes at the next line that
# starts with "{", every whole record is converted, and --rejects holds exactly the cut lines.
#
# usage: examples/truncated-export.sh [PATH-TO-cbl-attachments]
set -eu
. "$(dirname -- "$0")/lib/common.sh" "$@"

dump=$data/dump.ndjson
# A message with a blob, whole; it is cut at each of these prefixes below.
record=$(grep '"_id":"msg::general::0002"' "$dump")

section "one cut record between whole ones"
failures=""
for cut in \
  '{"_id":"msg::general::0002","type":"message","channel":"gen' \
  '{"_id":"msg::general::0002","type":"message",' \
  '{"_id":"msg::general::0002","type":"message","channel":"general","from":"user::marco","text":"Here is the shelf at the store","sent":"2024-03-04T09:15:02Z","attachments":[' \
  '{"_id":"msg::general::0002","type":"message","channel":"general","from":"user::marco","text":"Here is the shelf at the store","sent":"2024-03-04T09:15:02Z","attachments":[{"file":{"@type":"blob",' \
  '{"_id":"msg::general::0002","type":"message","channel":"general","from":"user::marco","text":"Here is the shelf at the store","sent":"2024-03-04T09:15:02Z","attachments":[{"file":{"@type":"blob","content_type"' \
  '{"_id":"msg::general::0002","type":"message","channel":"general","from":"user::marco","text":"Here is the shelf at the store","sent":"2024-03-04T09:15:02Z","attachments":[{"file":{"@type":"blob","content_type":"image/jpeg","digest":"sha1-Y+cWl+SmzCUT6jVWB5/d4U65hvo=","length":1048576}' \
  '{"_id":"msg::general::0002","type":"message","channel":"general","from":"user::marco","text":"Here is the shelf at the store","sent":"2024-03-04T09:15:02Z","attachments":[{"file":{"@type":"blob","content_type":"image/jpeg","digest":"sha1-Y+cWl+SmzCUT6jVWB5/d4U65hvo=","length":1048576},"caption":"shelf"}'
do
  case $record in "$cut"*) ;; *) fail "not a prefix of the record: $cut" ;; esac
  {
    grep '"_id":"user::priya"' "$dump"
    printf '%s\n' "$cut"
    grep -e '"_id":"user::marco"' -e '"_id":"user::aiko"' "$dump"
  } >"$tmp/cut.ndjson"
  status=0
  "$bin" --push --rejects "$tmp/rejects.ndjson" "$tmp/cut.ndjson" >"$tmp/out" 2>"$tmp/err" || status=$?
  printf 'cut after ...%-22s %s converted, %s rejected; %s\n' "$(printf '%s' "$cut" | tail -c 22)" \
    "$(count_lines "$tmp/out")" "$(count_lines "$tmp/rejects.ndjson")" "$(sed 's/^[^ ]* [^ ]* error: //' "$tmp/err" | tr '\n' ' ')"
  problem=""
  [ "$status" -eq 1 ] || problem="$problem exit status $status, expected 1;"
  [ "$(jq -r ._id "$tmp/out" | tr '\n' ' ')" = "user::priya user::marco user::aiko " ] ||
    problem="$problem not every whole record was converted;"
  printf '%s\n' "$cut" >"$tmp/expected-rejects"
  cmp -s "$tmp/expected-rejects" "$tmp/rejects.ndjson" || problem="$problem the rejects file is not just the cut line;"
  [ "$(grep -c ': error: ' "$tmp/err")" -eq 1 ] || problem="$problem not exactly one error;"
  [ -z "$problem" ] || failures="$failures
  cut after ...$(printf '%s' "$cut" | tail -c 22):$problem"
done
[ -z "$failures" ] || fail "a cut record cost more than its own line:$failures"
ok "each time: 3 converted, the cut line rejected, one error"

section "the last record of the file cut short (no newline at the end)"
{
  head -n 3 "$dump"
  printf '%s' '{"_id":"msg::general::0002","type":"message","attachments":[{"file":{"@type":"blob","digest":"sha1-Y+cW'
} >"$tmp/cut-end.ndjson"
status=0
"$bin" --push --rejects "$tmp/rejects.ndjson" "$tmp/cut-end.ndjson" >"$tmp/out" 2>"$tmp/err" || status=$?
cat "$tmp/err"
expect_status 1 "$status" "a cut last record"
[ "$(count_lines "$tmp/out")" -eq 3 ] || fail "expected the 3 whole records"
[ "$(count_lines "$tmp/rejects.ndjson")" -eq 1 ] || fail "expected the cut record in the rejects file"
[ "$(grep -c ': error: ' "$tmp/err")" -eq 1 ] || fail "expected exactly one error"
ok "3 converted, the cut record rejected"
