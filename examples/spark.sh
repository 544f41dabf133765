#!/bin/sh
# Scale out with Apache Spark: examples/spark/push_with_spark.py reads an NDJSON dump with
# sc.textFile, pipes each partition through one cbl-attachments process with RDD.pipe and writes
# the result with saveAsTextFile. Checked against one process, as a multiset of lines and in
# order, in Spark's local mode, and in the form a cluster job takes (the binary shipped with
# spark-submit --files to two separate executor processes of a local stand-alone cluster).
# examples/spark/README.md tells how the same job runs on a real cluster.
#
# Needs PyPI pyspark (pip install pyspark), Java 17 or later and python3; prints SKIP and exits
# 77 without them.
#
# usage: examples/spark.sh [PATH-TO-cbl-attachments]
set -eu
. "$(dirname -- "$0")/lib/common.sh" "$@"

command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 is not installed"; exit 77; }
python3 -c 'import pyspark' 2>/dev/null || { echo "SKIP: pyspark is not importable (pip install pyspark)"; exit 77; }
command -v java >/dev/null 2>&1 || { echo "SKIP: java is not installed (Spark needs Java 17 or later)"; exit 77; }
spark_home=$(python3 -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))')
spark_submit=$spark_home/bin/spark-submit
job=$examples/spark/push_with_spark.py
dump=$data/dump.ndjson
# Spark writes its scratch files under the working directory and /tmp: keep them in $tmp.
cd "$tmp"
export SPARK_LOCAL_DIRS="$tmp/spark-local"

# run_job LOG ARGS...: runs the job (python3 push_with_spark.py ARGS...), keeping Spark's chatter
# in LOG; shows it and fails if the job fails.
run_job() {
  log=$1
  shift
  python3 "$job" "$@" >"$log" 2>&1 || {
    cat "$log" >&2
    fail "the Spark job failed: $*"
  }
  grep '^--' "$log" || true
}

# compare OUTPUT-DIR EXPECTED WHAT: the part files hold exactly the lines of EXPECTED.
compare() {
  [ -f "$1/_SUCCESS" ] || fail "$3: no _SUCCESS in $1"
  cat "$1"/part-* >"$tmp/joined"
  LC_ALL=C sort "$tmp/joined" >"$tmp/got-sorted"
  LC_ALL=C sort "$2" >"$tmp/expected-sorted"
  same "$tmp/expected-sorted" "$tmp/got-sorted" "$3: Spark's lines differ from one process's"
  ok "$3: the same lines as one process ($(count_lines "$2") lines, $(ls "$1" | grep -c '^part-') part files)"
  # The parts are in partition order, and each keeps its lines' order: the input order.
  same "$2" "$tmp/joined" "$3: the part files, concatenated, are not in input order"
  ok "$3: cat part-* is byte-identical to one process"
}

section "local mode: push_with_spark.py --master 'local[2]' --partitions 8 corpus.ndjson"
# A generated 5 MB corpus (bench/make_corpus.py --mb 5), in 8 partitions.
python3 "$repo/bench/make_corpus.py" --mb 5 --seed 3 >"$tmp/corpus.ndjson"
"$bin" --push "$tmp/corpus.ndjson" >"$tmp/corpus-expected.ndjson"
run_job "$tmp/log1" --master 'local[2]' --partitions 8 --binary "$bin" "$tmp/corpus.ndjson" "$tmp/corpus-pushed"
head -c 300 "$tmp/corpus-pushed/part-00000"
echo
compare "$tmp/corpus-pushed" "$tmp/corpus-expected.ndjson" "corpus, 8 partitions"

section "bad documents fail the job (RDD.pipe checkCode), unless --allow-rejects"
if python3 "$job" --master 'local[2]' --partitions 2 --binary "$bin" "$data/messy.ndjson" "$tmp/messy" \
  >"$tmp/log3" 2>&1; then
  fail "the job succeeded on messy.ndjson"
fi
grep -o 'PIPE_FUNCTION_EXITED[^.]*' "$tmp/log3" | head -n 1
ok "a partition with a bad document fails its task and the job"
run_job "$tmp/log4" --master 'local[2]' --partitions 2 --binary "$bin" --option=--keep-going --allow-rejects \
  "$data/messy.ndjson" "$tmp/messy-kept"
"$bin" --push --keep-going "$data/messy.ndjson" >"$tmp/messy-expected.ndjson" 2>/dev/null || true
compare "$tmp/messy-kept" "$tmp/messy-expected.ndjson" "messy.ndjson with --keep-going"

section "cluster form: spark-submit --master 'local-cluster[2,1,1024]' --files cbl-attachments ... --binary ./cbl-attachments"
# Two executor processes, each in its own working directory under $SPARK_HOME/work; the binary
# reaches them only through --files, as on a real cluster.
if [ ! -w "$spark_home" ]; then
  echo "(skipped: a local stand-alone cluster writes under $spark_home, which is not writable)"
  exit 0
fi
ls "$spark_home/work" >"$tmp/work-before" 2>/dev/null || true
"$bin" --push "$dump" >"$tmp/expected.ndjson"
status=0
"$spark_submit" --master 'local-cluster[2,1,1024]' --files "$bin" \
  "$job" --binary ./cbl-attachments --partitions 4 "$dump" "$tmp/cluster" >"$tmp/log5" 2>&1 || status=$?
# Remove the executors' working directories this run made.
ls "$spark_home/work" 2>/dev/null | grep -vxF -f "$tmp/work-before" | while read -r made; do
  rm -rf -- "${spark_home:?}/work/$made"
done
rmdir "$spark_home/work" 2>/dev/null || true
[ "$status" -eq 0 ] || {
  cat "$tmp/log5" >&2
  fail "the spark-submit job failed"
}
grep '^--' "$tmp/log5" || true
compare "$tmp/cluster" "$tmp/expected.ndjson" "dump.ndjson, spark-submit --files, 2 executors"
