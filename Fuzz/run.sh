#!/bin/sh
# Fuzz the LegacyAttachments engine with libFuzzer under AddressSanitizer.
#   Fuzz/run.sh [SECONDS] [extra libFuzzer flags...]
# Builds Fuzz/.build/fuzz from the library's sources plus Fuzz/FuzzTarget.swift, then runs it
# on Fuzz/seeds (committed seed inputs) plus Fuzz/corpus (what earlier runs found interesting;
# not committed) for SECONDS (default 60).
# Inputs that crash are written to Fuzz/findings/; copy each into Tests/.../Fuzz regressions.
set -eu
cd "$(dirname "$0")/.."
seconds="${1:-60}"
[ $# -gt 0 ] && shift
mkdir -p Fuzz/.build Fuzz/findings Fuzz/corpus
swiftc -sanitize=fuzzer,address -parse-as-library -O -g \
  -module-name LegacyAttachments \
  -Xcc -fmodule-map-file=Sources/CYajl/module.modulemap -I Sources/CYajl \
  -Xcc -fmodule-map-file=Sources/CCrypto/module.modulemap -I Sources/CCrypto \
  -Xcc -fmodule-map-file=Sources/CZlib/module.modulemap -I Sources/CZlib \
  $(find Sources/LegacyAttachments -name '*.swift') Fuzz/FuzzTarget.swift \
  -lyajl -lz -o Fuzz/.build/fuzz
cd Fuzz
exec ./.build/fuzz -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -max_len=4096 \
  -artifact_prefix=findings/ -print_final_stats=1 "$@" corpus seeds
