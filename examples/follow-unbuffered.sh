#!/bin/sh
# --unbuffered: each document is written as soon as it is converted, for pipelines that follow
# a growing file or a feed (tail -f changes.ndjson | cbl-attachments --pull --unbuffered | ...).
# Here a writer sends one document, waits until its conversion has come out, then sends the next.
#
# usage: examples/follow-unbuffered.sh [PATH-TO-cbl-attachments]
set -eu
. "$(dirname -- "$0")/lib/common.sh" "$@"

mkfifo "$tmp/feed"
"$bin" --push --unbuffered <"$tmp/feed" >"$tmp/out" &
converter=$!
exec 3>"$tmp/feed"

# wait_for_lines N: wait up to 20 s until the output has N lines.
wait_for_lines() {
  tries=0
  while [ "$(count_lines "$tmp/out")" -lt "$1" ]; do
    tries=$((tries + 1))
    if [ "$tries" -gt 200 ]; then
      exec 3>&-
      kill "$converter" 2>/dev/null || true
      fail "document $1 was not written while the input stayed open"
    fi
    sleep 0.1 2>/dev/null || sleep 1
  done
}

section "one document in, one converted document out, with the input still open"
i=0
for id in user::priya product::124C41 msg::general::0002; do
  i=$((i + 1))
  grep "\"_id\":\"$id\"" "$data/dump.ndjson" >&3
  wait_for_lines "$i"
  printf '%s -> %s\n' "$id" "$(sed -n "${i}p" "$tmp/out" | jq -c '._attachments | keys_unsorted')"
done
exec 3>&-
wait "$converter" || fail "the converter failed"
[ "$(count_lines "$tmp/out")" -eq 3 ] || fail "expected 3 documents"
ok "each document came out before the next one went in"
