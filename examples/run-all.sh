#!/bin/sh
# Runs every example script (examples/*.sh except this one) against one cbl-attachments binary
# and fails if any of them fails. A script that prints "SKIP" and exits with status 77 is
# counted as skipped (e.g. when a tool it needs is not installed). `make test` runs this.
#
# usage: examples/run-all.sh [-v] [PATH-TO-cbl-attachments]
#   -v  show every script's output (by default only a failing script's output is shown)
set -eu

verbose=0
if [ "${1:-}" = -v ]; then
  verbose=1
  shift
fi
examples=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)
self=$(basename -- "$0")

bin=${1:-}
if [ -n "$bin" ]; then
  case $bin in
    */*) bin=$(CDPATH='' cd -- "$(dirname -- "$bin")" && pwd)/$(basename -- "$bin") ;;
    *) bin=$(command -v -- "$bin") || { echo "$self: '$1' is not on PATH" >&2; exit 2; } ;;
  esac
  [ -x "$bin" ] || { echo "$self: not an executable: $bin" >&2; exit 2; }
fi

out=$(mktemp "${TMPDIR:-/tmp}/cbl-run-all.XXXXXX")
trap 'rm -f -- "$out"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

passed=0
failed=0
skipped=0
failures=""
for example in "$examples"/*.sh; do
  name=$(basename -- "$example")
  [ "$name" = "$self" ] && continue
  [ -f "$example" ] || continue
  status=0
  if [ -x "$example" ]; then
    "$example" ${bin:+"$bin"} >"$out" 2>&1 </dev/null || status=$?
  else
    sh "$example" ${bin:+"$bin"} >"$out" 2>&1 </dev/null || status=$?
  fi
  if [ "$verbose" = 1 ]; then
    printf '\n######## %s\n' "$name"
    cat "$out"
  fi
  if [ "$status" -eq 0 ]; then
    passed=$((passed + 1))
    checks=$(grep -c '^ok - ' "$out" || true)
    [ "$checks" = 1 ] && noun=check || noun=checks
    printf 'PASS  %s (%s %s)\n' "$name" "$checks" "$noun"
  elif [ "$status" -eq 77 ] && grep -q SKIP "$out"; then
    skipped=$((skipped + 1))
    printf 'SKIP  %s: %s\n' "$name" "$(grep SKIP "$out" | head -n 1)"
  else
    failed=$((failed + 1))
    failures="$failures $name"
    if [ "$verbose" = 0 ]; then
      printf '\n######## %s (output)\n' "$name"
      cat "$out"
    fi
    printf 'FAIL  %s (exit status %s)\n' "$name" "$status"
  fi
done

printf '\nexamples: %d passed, %d failed, %d skipped\n' "$passed" "$failed" "$skipped"
if [ "$failed" -gt 0 ]; then
  printf 'failed:%s\n' "$failures"
  exit 1
fi
if [ "$passed" -eq 0 ]; then
  echo "no example passed" >&2
  exit 1
fi
