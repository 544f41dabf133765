#!/usr/bin/env bash
# make interop: the interop suite (Interop/couchdb.py) against a real CouchDB 3.5, the one in
# ../shared/peers/couchdb beside the project, started here twice: with its default settings,
# and with [attachments] compression_level = 0 (every body stored as it is).
#
# usage: Interop/run-couchdb.sh BINARY
# Without ../shared/peers/couchdb it says so and exits 0 (make test does not need it).
set -euo pipefail
cd "$(dirname "$0")/.."
binary=$(realpath "${1:?usage: Interop/run-couchdb.sh BINARY}")
peer=${COUCHDB_PEER:-$(realpath -m ../shared/peers/couchdb)}
if [ ! -x "$peer/start" ]; then
  echo "make interop: no CouchDB peer at $peer (../shared/peers/couchdb): nothing to run"
  exit 0
fi
missing=""
command -v curl >/dev/null 2>&1 || missing="$missing curl"
command -v parallel >/dev/null 2>&1 || missing="$missing parallel"
[ -e /usr/lib/x86_64-linux-gnu/libicu.so.72 ] || [ -n "$(ls /usr/lib/*/libicuuc.so.72 2>/dev/null)" ] \
  || missing="$missing libicu72"
if [ -n "$missing" ]; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  echo "installing:$missing" >&2
  $sudo apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing >/dev/null
fi

status=0
run() { # LABEL INI
  local label=$1 dir url
  dir=$(mktemp -d "${TMPDIR:-/tmp}/couchdb-interop.XXXXXX")
  url=$(COUCHDB_DIR=$dir COUCHDB_INI=$2 "$peer/start") || {
    echo "make interop: CouchDB ($label) did not start; see $dir" >&2
    return 1
  }
  trap '"$peer/stop" "$dir" >/dev/null 2>&1 || true' RETURN
  python3 Interop/couchdb.py --binary "$binary" --url "$url" --label "$label" || status=1
}
run "couchdb default" "" || status=1
run "couchdb compression_level=0" '[attachments]\ncompression_level = 0' || status=1
[ "$status" = 0 ] && echo "make interop: every check passed" || echo "make interop: FAILED" >&2
exit "$status"
