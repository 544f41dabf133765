#!/usr/bin/env python3
"""Run cbl-attachments over an NDJSON dump with Apache Spark's RDD.pipe.

Each partition of the input (whole lines, as sc.textFile splits it) is piped through one
cbl-attachments process; the output is written with saveAsTextFile, one part-NNNNN file per
partition, in input order. The filter is a pure function of each line, so the parts concatenated
are what one process gives for the whole dump.

Locally (Spark's local mode; pip install pyspark, Java 17 or later):

    python3 examples/spark/push_with_spark.py --binary .build/release/cbl-attachments \\
        examples/data/dump.ndjson /tmp/pushed

On a cluster (see examples/spark/README.md):

    spark-submit --master yarn --files /usr/local/bin/cbl-attachments \\
        examples/spark/push_with_spark.py --binary ./cbl-attachments \\
        hdfs:///dumps/app.ndjson hdfs:///dumps/app-pushed
"""
import argparse
import os
import shlex
import sys

from pyspark import SparkConf, SparkContext

MODES = ("--push", "--pull", "--list", "--check")


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("input", help="NDJSON input (a path or URL that sc.textFile reads)")
    parser.add_argument("output", help="output directory for saveAsTextFile (must not exist)")
    parser.add_argument(
        "--binary", default="cbl-attachments",
        help="the program as the executors see it: a path, a name on their PATH, or "
             "./cbl-attachments when shipped with spark-submit --files (default: %(default)s)")
    parser.add_argument("--mode", default="--push", choices=MODES, help="default: %(default)s")
    parser.add_argument(
        "--option", action="append", default=[], metavar="OPTION",
        help="another cbl-attachments option for every process, e.g. --option=--naming=litecore "
             "(repeatable)")
    parser.add_argument(
        "--partitions", type=int, default=None,
        help="minimum number of input partitions (default: Spark's)")
    parser.add_argument(
        "--master", default=None,
        help="Spark master, e.g. local[2] (default: spark-submit's --master, or local[*] "
             "when run with python3)")
    parser.add_argument(
        "--env", action="append", default=[], metavar="NAME=VALUE",
        help="environment of every cbl-attachments process, e.g. LD_LIBRARY_PATH=. when "
             "libyajl.so.2 is shipped with --files (repeatable)")
    parser.add_argument(
        "--allow-rejects", action="store_true",
        help="do not fail the job when cbl-attachments exits with status 1 (bad documents "
             "reported and skipped, e.g. with --option=--keep-going, or --check findings)")
    return parser.parse_args(argv)


def main(argv):
    args = parse_arguments(argv)
    binary = args.binary
    # A path to a program that exists here is made absolute, so that local-mode workers find
    # it whatever their working directory. "./cbl-attachments" (shipped with --files) is left
    # as it is: on executors the shipped files are in the working directory.
    if "/" in binary and not binary.startswith("./") and os.path.exists(binary):
        binary = os.path.abspath(binary)
    # One thread per process: Spark already runs one process per partition and core.
    command = " ".join(shlex.quote(part) for part in [binary, args.mode, "-j", "1", *args.option])
    # RDD.pipe runs the command with exactly this environment (not the executor's own).
    environment = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
    for setting in args.env:
        name, _, value = setting.partition("=")
        environment[name] = value

    conf = SparkConf().setAppName("cbl-attachments " + args.mode)
    conf.setIfMissing("spark.ui.showConsoleProgress", "false")
    # Without --master, the master is spark-submit's (--master), or local[*] when this script
    # is run with python3 directly.
    if args.master:
        conf.setMaster(args.master)
    context = SparkContext(conf=conf)
    context.setLogLevel("WARN")
    try:
        if args.partitions:
            lines = context.textFile(args.input, minPartitions=args.partitions)
        else:
            lines = context.textFile(args.input)
        # checkCode: a process that fails (status 2: cannot run, write error; status 1: a bad
        # document) fails its task, and so the job, instead of losing its partition silently.
        if args.allow_rejects:
            converted = lines.pipe(command, env=environment)
        else:
            converted = lines.pipe(command, env=environment, checkCode=True)
        converted.saveAsTextFile(args.output)
        print(f"{args.mode}: {lines.getNumPartitions()} partitions, each through: {command}",
              file=sys.stderr)
    finally:
        context.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
