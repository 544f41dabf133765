#!/usr/bin/env bash
# Instructions of push and pull (-j 1) on the yardstick's 10 MiB slice, by callgrind: a figure
# that stays the same on a busy machine, for comparing builds (issues 28 and 29).
#
#   bench/callgrind.sh BINARY [BINARY ...]
#
# The slice is the first 10 MiB (whole lines) of ../shared/bench/gen_corpus.py --mb 100 --seed 1
# (cached in bench/out); pull reads its push. json_verify -s on the slice is the yardstick's
# unit: the ratios are instructions over json_verify's. The last two columns count push on the
# slice's lines without attachments, against ../shared/bench/yajl_floor.c on the same lines.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: bench/callgrind.sh BINARY [BINARY ...]" >&2; exit 2; }
out=bench/out
mkdir -p "$out"
yard=$out/yardstick-100.ndjson
slice=$out/yardstick-10mib.ndjson
[ -s "$yard" ] || python3 ../shared/bench/gen_corpus.py --mb 100 --seed 1 > "$yard"
[ -s "$slice" ] || head -c 10485760 "$yard" | sed '$d' > "$slice"
count() { # the instructions callgrind collects for a command reading $1
  local input=$1; shift
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" < "$input" > /dev/null 2> "$out/cg.log"
  sed -n 's/.*Collected : //p' "$out/cg.log"
}
verify=$(count "$slice" json_verify -s -q)
# The slice's lines with no blob and no _attachments (a fifth of its bytes): what a dump of
# documents without attachments costs, against yajl with empty callbacks on the same lines.
plain=$out/yardstick-10mib-plain.ndjson
[ -s "$plain" ] || grep -v -e '@type' -e '_attachments' "$slice" > "$plain"
floor=$out/yajl_floor_shared
[ -x "$floor" ] || cc -O2 -o "$floor" ../shared/bench/yajl_floor.c -lyajl
plain_floor=$(count "$plain" "$floor")
printf '| build | push | push/json_verify | pull | pull/json_verify | push, no attachments | /floor |\n'
printf '|---|---:|---:|---:|---:|---:|---:|\n'
printf '| json_verify -s; yajl_floor.c | %s | 1.000 | | | %s | 1.000 |\n' "$verify" "$plain_floor"
for bin in "$@"; do
  pushed=$out/yardstick-10mib-pushed.ndjson
  "$bin" --push -j 1 < "$slice" > "$pushed"
  push=$(count "$slice" "$bin" --push -j 1)
  pull=$(count "$pushed" "$bin" --pull -j 1)
  bare=$(count "$plain" "$bin" --push -j 1)
  awk -v b="$bin" -v push="$push" -v pull="$pull" -v v="$verify" -v bare="$bare" \
    -v f="$plain_floor" 'BEGIN { printf "| %s | %s | %.3f | %s | %.3f | %s | %.3f |\n",
      b, push, push / v, pull, pull / v, bare, bare / f }'
done
