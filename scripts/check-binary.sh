#!/bin/sh
# Checks that the shipped binary runs anywhere: `make install` into a scratch prefix, then
# - ldd lists only the libraries the README names (libc and its parts, libyajl, libcrypto,
#   libz, libstdc++, libgcc_s), none from the Swift toolchain's folder;
# - it runs with an empty environment (no LD_LIBRARY_PATH) and converts the example dump
#   exactly as the test build does;
# - it loads libcrypto when it hashes (it is loaded on first use, not linked: --upgrade of an
#   entry with inline bytes checks them against their digest).
#
# usage: scripts/check-binary.sh STATIC-BINARY
set -eu
cd "$(dirname "$0")/.."
binary=$1
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
make -s install DESTDIR="$scratch" PREFIX=/usr STATIC_BIN="$binary" >/dev/null
installed=$scratch/usr/bin/cbl-attachments
[ -f "$scratch/usr/share/man/man1/cbl-attachments.1" ] || { echo "check-binary: man page not installed" >&2; exit 1; }

echo "ldd $installed:"
ldd "$installed" | tee "$scratch/ldd"
toolchain=$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")
status=0
while read -r line; do
  library=${line%% *}
  case $library in
    linux-vdso.so.* | /lib64/ld-linux-*.so.* | ld-linux-*.so.*) continue ;;
    libc.so.* | libm.so.* | libpthread.so.* | libdl.so.* | librt.so.* | libutil.so.*) ;;
    libyajl.so.* | libcrypto.so.* | libz.so.* | libstdc++.so.* | libgcc_s.so.*) ;;
    *) echo "check-binary: unexpected library: $line" >&2; status=1 ;;
  esac
  case $line in
    *"$toolchain"* | *libswift* | *libFoundation* | *libdispatch*)
      echo "check-binary: a toolchain library: $line" >&2; status=1 ;;
    *"not found"*) echo "check-binary: missing: $line" >&2; status=1 ;;
  esac
done <"$scratch/ldd"
[ "$status" = 0 ] || exit 1

version=$(env -i "$installed" --version)
echo "$version"
env -i "$installed" --push examples/data/dump.ndjson >"$scratch/pushed" 2>"$scratch/stderr" || {
  echo "check-binary: the installed binary failed: $(cat "$scratch/stderr")" >&2; exit 1; }
.build/release/cbl-attachments --push examples/data/dump.ndjson >"$scratch/expected" 2>/dev/null || true
if [ -x .build/release/cbl-attachments ]; then
  cmp -s "$scratch/pushed" "$scratch/expected" || { echo "check-binary: output differs from the test build's" >&2; exit 1; }
fi
# "hi", inline: its SHA-1 must match for the entry to become a blob.
hashed='{"_attachments":{"a.txt":{"content_type":"text/plain","data":"aGk=","digest":"sha1-witfkXg0JglCjW9RssWvTAveakI="}}}'
printf '%s\n' "$hashed" | env -i "$installed" --upgrade >"$scratch/upgraded" 2>"$scratch/stderr" || {
  echo "check-binary: --upgrade (libcrypto) failed: $(cat "$scratch/stderr")" >&2; exit 1; }
grep -q '"@type":"blob"' "$scratch/upgraded" || {
  echo "check-binary: --upgrade made no blob: $(cat "$scratch/upgraded" "$scratch/stderr")" >&2; exit 1; }
echo "check-binary: ok: no toolchain library; runs with an empty environment; loads libcrypto"
