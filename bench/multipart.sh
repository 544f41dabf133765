#!/usr/bin/env bash
# --format multipart on a body of about 1 GiB: the time to check and store every attachment's
# bytes, against sha1sum of the same bytes, and the peak RSS.
#
#   bench/multipart.sh [--mb N] [--part-mb N] [--rounds N] [--digest md5|sha1]
#
# The body is made here in the shape a real CouchDB 3.5 writes for _bulk_get with
# Accept: multipart/mixed (examples/data/api/couchdb-bulk-get-multipart.txt): each document a
# nested multipart/related part, its JSON with "follows":true entries and md5- digests, then
# one identity part per attachment (Content-Disposition, Content-Type, Content-Length). The
# attachments are random bytes of --part-mb MiB (default 20, Sync Gateway's largest), so no
# compression helps either side. --digest sha1 labels them as Sync Gateway does (the SHA-1 of
# the bytes, which is also the file's name: one hash per byte instead of two). hyperfine times pull --blobs into an emptied store and
# sha1sum on the attachments' bytes alone; GNU time gives the RSS.
set -euo pipefail
cd "$(dirname "$0")/.."
mb=1024
part=20
rounds=3
digest=md5
while [ $# -gt 0 ]; do
  case "$1" in
    --mb) mb="$2"; shift 2 ;;
    --part-mb) part="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --digest) digest="$2"; shift 2 ;;
    *) echo "usage: bench/multipart.sh [--mb N] [--part-mb N] [--rounds N] [--digest md5|sha1]" >&2
      exit 2 ;;
  esac
done
swift build -c release >/dev/null
bin=$(realpath .build/release/cbl-attachments)
out=bench/out/multipart
rm -rf "$out"
mkdir -p "$out/store"
python3 - "$out" "$mb" "$part" "$digest" <<'PY'
import hashlib, base64, os, sys
out, mb, part_mb, algorithm = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
outer = b"--" + b"0ff2a1" * 5
size = part_mb * 1048576
count = max(1, mb // part_mb)
with open(out + "/body.multipart", "wb") as body, open(out + "/attachments.bin", "wb") as raw:
    body.write(b"\r\n")
    for index in range(count):
        data = os.urandom(size)
        raw.write(data)
        md5 = algorithm + "-" + base64.b64encode(hashlib.new(algorithm, data).digest()).decode()
        inner = b"--" + (b"e681%04d" % index) * 4
        doc = ('{"_id":"doc%d","_rev":"1-%032x","n":%d,"_attachments":{"scan.bin":'
               '{"content_type":"application/octet-stream","revpos":1,"digest":"%s",'
               '"length":%d,"follows":true}}}' % (index, index, index, md5, size)).encode()
        body.write(b"--" + outer + b"\r\nX-Doc-Id: doc%d\r\n" % index)
        body.write(b"Content-Type: multipart/related; boundary=" + inner + b"\r\n\r\n")
        body.write(b"--" + inner + b"\r\nContent-Type: application/json\r\n\r\n" + doc + b"\r\n")
        body.write(b"--" + inner + b'\r\nContent-Disposition: attachment; filename="scan.bin"\r\n'
                   b"Content-Type: application/octet-stream\r\nContent-Length: %d\r\n\r\n" % size)
        body.write(data)
        body.write(b"\r\n--" + inner + b"--\r\n")
    body.write(b"--" + outer + b"--\r\n")
PY
ls -l "$out/body.multipart" "$out/attachments.bin"
hyperfine --runs "$rounds" --warmup 1 \
  --prepare "rm -rf $out/store && mkdir $out/store" \
  -n "pull --blobs --format multipart" \
  "$bin --pull --blobs $out/store --format multipart $out/body.multipart > $out/docs.ndjson" \
  -n "sha1sum of the bytes" "sha1sum $out/attachments.bin"
rm -rf "$out/store" && mkdir "$out/store"
/usr/bin/time -v "$bin" --pull --blobs "$out/store" --format multipart "$out/body.multipart" \
  2>&1 >/dev/null | grep -E "Maximum resident|Elapsed"
echo "files stored: $(ls "$out/store" | wc -l)"
