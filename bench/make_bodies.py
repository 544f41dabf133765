#!/usr/bin/env python3
"""Makes a Couchbase Lite blob store of attachment bodies and a dump of documents that point at
them, for the --blobs benchmark:

    python3 bench/make_bodies.py --mb 1024 --seed 1 STORE DUMP

Bodies are random bytes with sizes like real photos (log-uniform from 50 KB to 5 MB) until
their total reaches --mb MiB; each document has one blob (a third of them two: a photo and a
thumbnail of 50 KB), named in the store as Couchbase Lite names them."""
import argparse
import base64
import hashlib
import math
import os
import random

parser = argparse.ArgumentParser()
parser.add_argument("--mb", type=int, default=1024)
parser.add_argument("--seed", type=int, default=1)
parser.add_argument("store")
parser.add_argument("dump")
arguments = parser.parse_args()
rng = random.Random(arguments.seed)
os.makedirs(arguments.store, exist_ok=True)
total = 0
limit = arguments.mb * 1048576
index = 0


def body(size):
    data = rng.randbytes(size)
    digest = base64.b64encode(hashlib.sha1(data).digest()).decode()
    path = os.path.join(arguments.store, digest.replace("/", "_") + ".blob")
    with open(path, "wb") as handle:
        handle.write(data)
    return '{"@type":"blob","content_type":"image/jpeg","digest":"sha1-%s","length":%d}' % (
        digest, size)


with open(arguments.dump, "w") as dump:
    while total < limit:
        size = int(math.exp(rng.uniform(math.log(50_000), math.log(5_000_000))))
        size = min(size, limit - total) if limit - total > 50_000 else size
        photo = body(size)
        total += size
        extra = ""
        if index % 3 == 0:
            extra = ',"thumbnail":' + body(50_000)
            total += 50_000
        dump.write('{"_id":"photo::%d","_rev":"1-a","type":"photo","image":%s%s}\n' % (
            index, photo, extra))
        index += 1
