#!/bin/sh
# Proves that a separate Swift package can depend on this one by version, as a user would with
# .package(url: …, from: "X.Y.Z"): a bare clone of this repository's HEAD, tagged with the
# current version, and a client package that resolves it from that URL, builds, and runs.
#
# usage: scripts/check-client-package.sh VERSION
set -eu
cd "$(dirname "$0")/.."
version=$1
root=$(pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# The commit under test, uncommitted changes included (CI runs on a clean clone); the tag is
# moved onto it when the repository already has one of that name.
git clone -q --bare "$root" "$scratch/cbl-attachments.git"
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
  stash=$(git stash create)
  git -C "$scratch/cbl-attachments.git" fetch -q "$root" "$stash"
  git -C "$scratch/cbl-attachments.git" tag -f "$version" FETCH_HEAD >/dev/null
else
  git -C "$scratch/cbl-attachments.git" tag -f "$version" HEAD >/dev/null
fi

mkdir -p "$scratch/client/Sources/client"
cat >"$scratch/client/Package.swift" <<SWIFT
// swift-tools-version:6.0
import PackageDescription

let package = Package(
  name: "client",
  dependencies: [
    .package(url: "file://$scratch/cbl-attachments.git", from: "$version")
  ],
  targets: [
    .executableTarget(
      name: "client",
      dependencies: [.product(name: "LegacyAttachments", package: "cbl-attachments")]),
    .executableTarget(
      name: "readme",
      dependencies: [.product(name: "LegacyAttachments", package: "cbl-attachments")]),
  ]
)
SWIFT
cat >"$scratch/client/Sources/client/main.swift" <<'SWIFT'
import LegacyAttachments

// A client's own generic types: the library's names must not collide with them, and the
// module name must still qualify the library's (no type in it is named like the module).
struct Mode {}
struct Diagnostic {}
struct Statistics {}
let mode: LegacyAttachments.ConversionMode = .push
let converter = try! LegacyAttachments.DocumentConverter(options: .init(mode: mode))
precondition((try? converter.convert(Array("{}".utf8)))?.bytes == Array("{}".utf8))

let document = Array(#"{"_id":"a","photo":{"@type":"blob","digest":"sha1-x","length":3}}"#.utf8)
do {
  let pushed = try CBLAttachments.push(document, naming: .litecore, revpos: 2)
  print(String(decoding: pushed, as: UTF8.self))
  print(String(decoding: try CBLAttachments.pull(pushed), as: UTF8.self))
} catch {
  print("error: \(error)")
}
SWIFT
# The library page's first Swift example, as it is written there.
mkdir -p "$scratch/client/Sources/readme"
# (the first ```swift block there that starts with the import; the one before is a manifest)
awk '/^```swift/{g=1;n=0;next} g&&/^```/{if(ok)exit; g=0;next}
  g&&n==0{n=1; ok=($0=="import LegacyAttachments")} g&&ok' docs/library.md \
  >"$scratch/client/Sources/readme/main.swift"
grep -q 'import LegacyAttachments' "$scratch/client/Sources/readme/main.swift" ||
  { echo "check-client: no Swift example found in docs/library.md" >&2; exit 1; }
(cd "$scratch/client" && swift build -q 2>&1 | tail -20) || { echo "check-client: the client did not build" >&2; exit 1; }
output=$(cd "$scratch/client" && .build/debug/client)
expected='{"_id":"a","photo":{"@type":"blob","digest":"sha1-x","length":3},"_attachments":{"blob_/photo":{"digest":"sha1-x","length":3,"stub":true,"revpos":2}}}
{"_id":"a","photo":{"@type":"blob","digest":"sha1-x","length":3}}'
[ "$output" = "$expected" ] || { printf 'check-client: unexpected output:\n%s\n' "$output" >&2; exit 1; }
readme=$(cd "$scratch/client" && .build/debug/readme)
case $readme in
  *'"_attachments":{"blob_/photos/thumbnail"'*'1 completed'*) ;;
  *) printf 'check-client: the README example printed:\n%s\n' "$readme" >&2; exit 1 ;;
esac
resolved=$(cd "$scratch/client" && sed -n 's/.*"version" *: *"\(.*\)".*/\1/p' Package.resolved)
echo "check-client: ok: a client package resolved cbl-attachments $resolved by version, built and ran (the README example too)"
