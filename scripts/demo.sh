#!/bin/sh
# make demo: push the bundled dump (examples/data/dump.ndjson), then show, for one document,
# what push did to it. The pushed documents are left in .build/demo/pushed.ndjson.
#
# usage: scripts/demo.sh BINARY
set -eu
cd "$(dirname "$0")/.."
bin=$1
dump=examples/data/dump.ndjson
out=.build/demo
mkdir -p "$out"
echo "\$ cbl-attachments --push --stats $dump > $out/pushed.ndjson"
"$bin" --push --stats "$dump" >"$out/pushed.ndjson"
id=product::124C41
before=$(grep -F "\"_id\":\"$id\"" "$dump")
after=$(grep -F "\"_id\":\"$id\"" "$out/pushed.ndjson")
echo
echo "What push did to $id: its blobs stay where they are, and"
printf '%s\n' "$after" | jq -r '"an \"_attachments\" member was added, one entry per blob:\n" +
  (._attachments | to_entries | map("  \(.key): \(.value | tojson)") | join("\n"))'
# Every other byte is the document's own: the pushed document minus the added member.
rest=$(printf '%s\n' "$after" | "$bin" --pull)
if [ "$rest" = "$before" ]; then
  echo "Everything else is byte for byte as it was (--pull gives the document back)."
fi
echo
echo "The $(wc -l <"$out/pushed.ndjson" | tr -d ' ') pushed documents are in $out/pushed.ndjson."
echo "To load a dump into Sync Gateway or CouchDB, with the attachments' bytes, see the README's"
echo "\"Which command\" list (push --blobs DIR --bulk-docs N)."
