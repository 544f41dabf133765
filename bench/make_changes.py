#!/usr/bin/env python3
"""Wraps an NDJSON stream of documents into one Sync Gateway `_changes?include_docs=true`
response body, laid out as Sync Gateway writes it (one row per line), streaming:

    python3 bench/make_changes.py < docs.ndjson > changes.json

Each document becomes `{"seq":N,"id":ID,"changes":[{"rev":REV}],"doc":DOC}`, its bytes copied
as they are (the `_id` and `_rev` are found with a regular expression, never re-serialized)."""
import re
import sys

ident = re.compile(rb'"_id":("(?:[^"\\]|\\.)*")')
revision = re.compile(rb'"_rev":("(?:[^"\\]|\\.)*")')

out = sys.stdout.buffer
out.write(b'{"results":[\n')
seq = 0
for line in sys.stdin.buffer:
    line = line.strip()
    if not line:
        continue
    seq += 1
    found = ident.search(line)
    rev = revision.search(line)
    row = b'{"seq":%d,"id":%s,"changes":[{"rev":%s}],"doc":' % (
        seq, found.group(1) if found else b'"row-%d"' % seq, rev.group(1) if rev else b'"1-a"')
    out.write((b"," if seq > 1 else b"") + row + line + b"}\n")
out.write(b'],\n"last_seq":"%d"}\n' % seq)
