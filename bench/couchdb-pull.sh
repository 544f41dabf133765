#!/usr/bin/env bash
# --pull --blobs on what a real CouchDB 3.5 serves: a body of about 100 MiB from
# GET /db/_all_docs?include_docs=true&attachments=true, against --pull --blobs on the same
# documents one per line (the lines framing, the bytes inline as well).
#
#   bench/couchdb-pull.sh [--mb N] [--text-percent P] [--rounds N]
#
# Starts the CouchDB in ../shared/peers/couchdb (default settings: text is stored compressed),
# loads documents with photo-sized binary bodies and, P% of the bodies (default 20), JSON ones,
# with push --blobs; captures the _all_docs body; then times, with hyperfine, pull --blobs into a
# fresh store (emptied before each run) on the body and on its documents as NDJSON. JSON (and
# other text) bodies cost a zlib compression at CouchDB's level 8 each, to check CouchDB's md5 of
# them; binary ones an MD5 and a SHA-1.
set -euo pipefail
cd "$(dirname "$0")/.."
mb=100
text=20
rounds=5
while [ $# -gt 0 ]; do
  case "$1" in
    --mb) mb="$2"; shift 2 ;;
    --text-percent) text="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    *) echo "usage: bench/couchdb-pull.sh [--mb N] [--text-percent P] [--rounds N]" >&2; exit 2 ;;
  esac
done
peer=$(realpath -m ../shared/peers/couchdb)
[ -x "$peer/start" ] || { echo "no CouchDB peer at $peer" >&2; exit 1; }
swift build -c release >/dev/null
bin=$(realpath .build/release/cbl-attachments)
out=bench/out/couchdb
rm -rf "$out"
mkdir -p "$out/store"
# Bytes: 3/4 of the body size (base64 makes 4 of 3).
python3 - "$out" "$(( mb * 1048576 * 3 / 4 ))" "$text" <<'EOF'
import base64, hashlib, json, os, random, sys
out, limit, text_percent = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(7)
words = "the quick brown fox jumps over lazy dog blob couch sync gateway lite".split()
total = index = 0
with open(os.path.join(out, "dump.ndjson"), "w") as dump:
    while total < limit:
        is_text = rng.randrange(100) < text_percent
        size = int(50_000 * (100 ** rng.random()))  # 50 KB to 5 MB, log-uniform
        if is_text:
            # JSON records, as an export attached to a document would hold them.
            records = []
            length = 0
            while length < size:
                record = json.dumps({"id": rng.randrange(10**9), "name": rng.choice(words),
                                     "email": "u%d@example.com" % rng.randrange(10**6),
                                     "score": rng.random(), "tags": rng.sample(words, 3)})
                records.append(record)
                length += len(record) + 1
            data = ("[" + ",".join(records) + "]").encode()[:size]
            kind = "application/json"
        else:
            data = rng.randbytes(size)
            kind = "image/jpeg"
        digest = base64.b64encode(hashlib.sha1(data).digest()).decode()
        with open(os.path.join(out, "store", digest.replace("/", "_") + ".blob"), "wb") as f:
            f.write(data)
        dump.write('{"_id":"doc-%06d","n":%d,"file":{"@type":"blob","content_type":"%s",'
                   '"digest":"sha1-%s","length":%d}}\n' % (index, index, kind, digest, len(data)))
        total += len(data)
        index += 1
EOF
dir=$(mktemp -d "${TMPDIR:-/tmp}/couchdb-bench.XXXXXX")
url=$(COUCHDB_DIR=$dir "$peer/start")
trap '"$peer/stop" "$dir" >/dev/null 2>&1 || true' EXIT
base=${url/admin:password@/}
curl -fsS -u admin:password -X PUT "$base/bench" >/dev/null
"$bin" --push --blobs "$out/store" --bulk-docs 20 "$out/dump.ndjson" \
  | parallel --pipe -N1 --block 64M -q curl -sS -u admin:password \
    -H 'Content-Type: application/json' --data-binary @- "$base/bench/_bulk_docs" >/dev/null
curl -fsS -u admin:password "$base/bench/_all_docs?include_docs=true&attachments=true" \
  >"$out/all-docs.json"
python3 -c "
import json, sys
with open('$out/all-docs.json') as f: rows = json.load(f)['rows']
with open('$out/docs.ndjson', 'w') as f:
    for row in rows: f.write(json.dumps(row['doc'], separators=(',', ':')) + '\n')
"
printf 'body: %s bytes, %s documents; as lines: %s bytes\n' "$(stat -c %s "$out/all-docs.json")" \
  "$(wc -l <"$out/docs.ndjson")" "$(stat -c %s "$out/docs.ndjson")"
hyperfine --runs "$rounds" --export-json "$out/hyperfine.json" \
  --prepare "rm -rf $out/fresh && mkdir $out/fresh" \
  -n "all-docs body" "$bin --pull --blobs $out/fresh --format all-docs $out/all-docs.json > /dev/null" \
  -n "lines" "$bin --pull --blobs $out/fresh $out/docs.ndjson > /dev/null"
python3 -c "
import json
r = {x['command']: x for x in json.load(open('$out/hyperfine.json'))['results']}
body, lines = r['all-docs body'], r['lines']
print('all-docs body / lines: %.2fx the time (medians %.3f s / %.3f s)' % (
    body['median'] / lines['median'], body['median'], lines['median']))
"
/usr/bin/time -f 'peak RSS %M KiB' "$bin" --pull --blobs "$out/fresh2" --format all-docs \
  "$out/all-docs.json" >/dev/null
