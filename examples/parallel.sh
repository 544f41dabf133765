#!/bin/sh
# Scale out with GNU parallel: the filter is a pure function of each NDJSON line, so
# `parallel --pipe -k` can cut the input into blocks of whole lines, run one cbl-attachments per
# block and glue the outputs back together in input order. The result is byte-identical to one
# process. Shown on the bundled dump and on a generated 5 MB corpus, for --push, --pull and
# --list, with --rejects per block.
#
# On one machine `cbl-attachments -j N` already uses N threads; GNU parallel is the way to use
# processes, or other machines (its --sshlogin option), with the same command line.
#
# Needs GNU parallel (Debian: apt-get install parallel) and python3; prints SKIP and exits 77
# without them.
#
# usage: examples/parallel.sh [PATH-TO-cbl-attachments]
set -eu
. "$(dirname -- "$0")/lib/common.sh" "$@"

if ! parallel --version 2>/dev/null | grep -q '^GNU parallel'; then
  echo "SKIP: GNU parallel is not installed (Debian: apt-get install parallel)"
  exit 77
fi
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 is not installed"; exit 77; }

dump=$data/dump.ndjson

section "parallel --pipe -k --block 1k -j 4 cbl-attachments --push < dump.ndjson"
# --block 1k: the 5.8 kB dump becomes several blocks, so several processes really share it.
# -j 1 for each filter: the parallelism is parallel's here.
"$bin" --push "$dump" >"$tmp/single.ndjson"
parallel --pipe -k --block 1k -j 4 "$bin" --push -j 1 <"$dump" >"$tmp/parallel.ndjson"
blocks=$(parallel --pipe --block 1k -j 4 wc -l <"$dump" | wc -l | tr -d ' ')
cut -c 1-100 "$tmp/parallel.ndjson" | head -n 3
same "$tmp/single.ndjson" "$tmp/parallel.ndjson" "parallel --pipe output differs from one process"
ok "byte-identical to one process ($(count_lines "$tmp/parallel.ndjson") documents, $blocks blocks)"

section "and back: parallel --pipe -k cbl-attachments --pull gives the dump"
parallel --pipe -k --block 2k -j 4 "$bin" --pull -j 1 <"$tmp/parallel.ndjson" >"$tmp/pulled.ndjson"
same "$dump" "$tmp/pulled.ndjson" "pull(push(dump)) through parallel differs from the dump"
ok "pull(push(dump)) == dump (cmp)"

section "a generated 5 MB corpus: python3 bench/make_corpus.py --mb 5"
python3 "$repo/bench/make_corpus.py" --mb 5 --seed 7 >"$tmp/corpus.ndjson"
printf '%s bytes, %s documents\n' "$(wc -c <"$tmp/corpus.ndjson" | tr -d ' ')" "$(count_lines "$tmp/corpus.ndjson")"
"$bin" --push -j 1 "$tmp/corpus.ndjson" >"$tmp/corpus-single.ndjson"
# --pipepart -a FILE reads the blocks straight from the file (faster than --pipe for a file).
parallel --pipepart -a "$tmp/corpus.ndjson" -k --block 512k -j 4 "$bin" --push -j 1 >"$tmp/corpus-parallel.ndjson"
same "$tmp/corpus-single.ndjson" "$tmp/corpus-parallel.ndjson" "--pipepart output differs from one process"
ok "--pipepart --block 512k: byte-identical to one process"
parallel --pipe -k --block 256k -j 4 "$bin" --push -j 1 <"$tmp/corpus.ndjson" >"$tmp/corpus-pipe.ndjson"
same "$tmp/corpus-single.ndjson" "$tmp/corpus-pipe.ndjson" "--pipe output differs from one process"
ok "--pipe --block 256k: byte-identical to one process"

section "--list in blocks: the same rows, except that 'line' counts from each block's start"
"$bin" --list "$tmp/corpus.ndjson" >"$tmp/rows-single.ndjson"
parallel --pipepart -a "$tmp/corpus.ndjson" -k --block 512k -j 4 "$bin" --list -j 1 >"$tmp/rows-parallel.ndjson"
jq -c 'del(.line)' "$tmp/rows-single.ndjson" >"$tmp/a"
jq -c 'del(.line)' "$tmp/rows-parallel.ndjson" >"$tmp/b"
same "$tmp/a" "$tmp/b" "--list rows differ (ignoring line)"
ok "$(count_lines "$tmp/rows-parallel.ndjson") rows, identical but for 'line'"

section "bad documents: each block keeps its own --rejects file; output + rejects = input"
# messy.ndjson has bad documents; {#} is the block's sequence number.
status=0
parallel --pipe -k --block 200 -j 4 "$bin" --push -j 1 --rejects "$tmp/rejects.{#}" \
  <"$data/messy.ndjson" >"$tmp/messy-parallel.ndjson" 2>"$tmp/messy-errors" || status=$?
"$bin" --push --rejects "$tmp/rejects-single" "$data/messy.ndjson" >"$tmp/messy-single.ndjson" 2>/dev/null || true
same "$tmp/messy-single.ndjson" "$tmp/messy-parallel.ndjson" "converted documents differ from one process"
cat "$tmp"/rejects.* | sort >"$tmp/rejects-parallel"
sort "$tmp/rejects-single" >"$tmp/rejects-single-sorted"
same "$tmp/rejects-single-sorted" "$tmp/rejects-parallel" "the rejected documents differ"
sed 's/^/  /' "$tmp/messy-errors"
[ "$status" -ne 0 ] || fail "parallel did not report the failing blocks"
ok "same documents and same rejects as one process; parallel's status is $status (failed blocks)"
echo "(messages name the line within the block, not within the whole input)"
