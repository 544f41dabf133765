# Shared by the example scripts (sourced, not run): finds the cbl-attachments binary, makes a
# scratch directory that is removed at exit, and gives small helpers for checks.
#
# After sourcing:  $bin      absolute path of the binary to demonstrate
#                  $data     examples/data
#                  $tmp      a scratch directory
# A script passes its own arguments:  . "$(dirname "$0")/lib/common.sh" "$@"

examples=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)
repo=$(dirname -- "$examples")
data=$examples/data
script=$(basename -- "$0")

# fail MESSAGE...: the demonstrated property does not hold.
fail() {
  printf '%s: FAIL: %s\n' "$script" "$*" >&2
  exit 1
}

# ok MESSAGE...: one check passed.
ok() {
  printf 'ok - %s\n' "$*"
}

# section TITLE: a heading in the output.
section() {
  printf '\n== %s\n' "$*"
}

# expect_status EXPECTED ACTUAL WHAT
expect_status() {
  [ "$2" -eq "$1" ] || fail "$3: exit status $2, expected $1"
}

# same FILE1 FILE2 WHAT: byte-for-byte equality.
same() {
  cmp -s -- "$1" "$2" || {
    cmp -- "$1" "$2" >&2 || true
    fail "$3"
  }
}

# count_lines FILE
count_lines() {
  wc -l <"$1" | tr -d ' '
}

if [ $# -gt 0 ] && [ -n "$1" ]; then
  case $1 in
    */*) bin=$(CDPATH='' cd -- "$(dirname -- "$1")" 2>/dev/null && pwd)/$(basename -- "$1") ;;
    *) bin=$(command -v -- "$1") || fail "'$1' is not on PATH" ;;
  esac
elif command -v cbl-attachments >/dev/null 2>&1; then
  bin=$(command -v cbl-attachments)
elif [ -x "$repo/.build/release/cbl-attachments" ]; then
  bin=$repo/.build/release/cbl-attachments
elif [ -x "$repo/.build/debug/cbl-attachments" ]; then
  bin=$repo/.build/debug/cbl-attachments
else
  fail "cannot find cbl-attachments: build it (make release) or pass its path as the first argument"
fi
[ -x "$bin" ] || fail "not an executable: $bin"
command -v jq >/dev/null 2>&1 || fail "these examples need jq (Debian: apt-get install jq)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cbl-example.XXXXXX")
trap 'rm -rf -- "$tmp"' EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 141' PIPE
trap 'exit 143' TERM
