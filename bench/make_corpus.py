#!/usr/bin/env python3
"""Deterministic corpus of Couchbase Lite style documents (NDJSON) for bench/run.sh.

Modelled on the project's yardstick generator: user profiles with an image blob, catalog
items with photo blobs in objects and arrays, chat messages with attachment lists, CBL 1.x
notes with legacy `_attachments`, and plain event documents; key order varies, numbers
include values beyond double precision, text includes non-ASCII words.

    make_corpus.py --mb 100 --seed 1 > corpus.ndjson
    make_corpus.py --single-document-mb 100 > one-big-document.json
"""
import argparse
import base64
import hashlib
import json
import random
import sys

WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike "
         "november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee "
         "zulu Ōsaka München São naïve café 東京 写真").split()
TYPES = ("image/jpeg", "image/png", "application/pdf", "audio/mpeg", "video/mp4")


def digest(rng):
    raw = hashlib.sha1(rng.getrandbits(64).to_bytes(8, "little")).digest()
    return "sha1-" + base64.b64encode(raw).decode()


def blob(rng):
    members = [("@type", "blob"), ("content_type", rng.choice(TYPES)),
               ("digest", digest(rng)), ("length", rng.randint(10, 20_000_000))]
    if rng.random() < 0.3:
        rng.shuffle(members)
    return dict(members)


def words(rng, n):
    return " ".join(rng.choice(WORDS) for _ in range(n))


def number(rng):
    r = rng.random()
    if r < 0.5:
        return rng.randint(-1000, 100000)
    if r < 0.9:
        return round(rng.uniform(-1e4, 1e4), rng.randint(0, 6))
    return rng.randint(2**53, 2**63 - 1)


def value(rng, depth=0):
    r = rng.random()
    if depth > 3 or r < 0.4:
        return words(rng, rng.randint(1, 10))
    if r < 0.6:
        return number(rng)
    if r < 0.7:
        return rng.choice([True, False, None])
    if r < 0.85:
        return [value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {f"f{i}": value(rng, depth + 1) for i in range(rng.randint(0, 4))}


def document(rng, i):
    kind = rng.random()
    if kind < 0.25:
        d = {"_id": f"user::{i}", "type": "user", "name": words(rng, 2), "age": rng.randint(13, 99),
             "address": {"street": words(rng, 3), "zip": f"{rng.randint(0, 99999):05d}"},
             "prefs": value(rng, 1)}
        if rng.random() < 0.7:
            d["image"] = blob(rng)
    elif kind < 0.5:
        d = {"_id": f"product::{i}", "type": "product", "name": words(rng, 3),
             "price": round(rng.uniform(0.5, 5000), 2), "description": words(rng, rng.randint(10, 60)),
             "photos": {"thumbnail": blob(rng)}}
        if rng.random() < 0.6:
            d["photos"]["gallery"] = [blob(rng) for _ in range(rng.randint(1, 4))]
    elif kind < 0.7:
        d = {"_id": f"msg::{i}", "type": "message", "body": words(rng, rng.randint(3, 30)),
             "ts": rng.randint(1_500_000_000_000, 1_800_000_000_000)}
        if rng.random() < 0.4:
            d["attachments"] = [{"name": f"file{j}", "file": blob(rng)} for j in range(rng.randint(1, 3))]
    elif kind < 0.8:
        d = {"_id": f"note::{i}", "_rev": f"{rng.randint(1, 40)}-{rng.getrandbits(64):016x}",
             "title": words(rng, 4),
             "_attachments": {f"{rng.choice(WORDS)}{j}.jpg": {
                 "content_type": "image/jpeg", "digest": digest(rng),
                 "length": rng.randint(10, 5_000_000), "revpos": 1, "stub": True}
                 for j in range(rng.randint(1, 3))}}
    else:
        d = {"_id": f"event::{i}", "type": "event", "payload": value(rng), "seq": i}
    return d


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--single-document-mb", type=float,
                        help="write one document of about this size instead")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    out = sys.stdout
    if args.single_document_mb:
        limit = int(args.single_document_mb * 1024 * 1024)
        out.write('{"_id":"huge","items":[')
        written, i = 0, 0
        while written < limit:
            item = json.dumps(document(rng, i), ensure_ascii=False, separators=(",", ":"))
            out.write(("," if i else "") + item)
            written += len(item.encode()) + 1
            i += 1
        out.write('],"cover":{"@type":"blob","digest":"sha1-cover","length":1}}\n')
        return
    limit = args.mb * 1024 * 1024
    written, i = 0, 0
    while written < limit:
        line = json.dumps(document(rng, i), ensure_ascii=False, separators=(",", ":")) + "\n"
        out.write(line)
        written += len(line.encode())
        i += 1


if __name__ == "__main__":
    main()
