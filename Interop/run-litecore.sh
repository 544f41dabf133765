#!/usr/bin/env bash
# make litecore: the differential suite (Interop/litecore.py) against Couchbase Lite's own code,
# ../shared/peers/litecore/litecore-harness beside the project.
#
# usage: Interop/run-litecore.sh BINARY
# Without ../shared/peers/litecore it says so and exits 0 (make test does not need it).
set -euo pipefail
cd "$(dirname "$0")/.."
binary=$(realpath "${1:?usage: Interop/run-litecore.sh BINARY}")
harness=${LITECORE_HARNESS:-$(realpath -m ../shared/peers/litecore/litecore-harness)}
if [ ! -x "$harness" ]; then
  echo "make litecore: no LiteCore harness at $harness (../shared/peers/litecore): nothing to run"
  exit 0
fi
status=0
for seed in 27 1 2; do
  python3 Interop/litecore.py --binary "$binary" --harness "$harness" --seed "$seed" || status=1
done
[ "$status" = 0 ] && echo "make litecore: every check passed" || echo "make litecore: FAILED" >&2
exit "$status"
