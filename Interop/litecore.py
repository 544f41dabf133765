#!/usr/bin/env python3
"""The differential suite against Couchbase Lite's own code (make litecore; Interop/README.md).

`litecore-harness` (../shared/peers/litecore) runs nine unmodified couchbase-lite-core sources:
the replicator's push (`DBAccess::encodeRevWithLegacyAttachments`), its pull
(`legacy_attachments::encodeStrippingOldMetaProperties`, then the dangling-blob check of
`IncomingRev::parseAndInsert`) and the blob store's file names (`C4BlobKey::withDigestString`,
`C4BlobStore::pathForKey`). This suite generates documents of every shape those functions treat
apart, runs the harness and the tool on them, and compares parsed values (LiteCore re-encodes
JSON through Fleece: keys sorted, numbers as doubles):

- push: `--push --naming litecore` against what the pusher sends (`push_gated`);
- pull: `--pull --update-blobs` against what the puller keeps, a revision LiteCore fails
  (an exception, or a dangling blob) against a rejection or a `--check` finding;
- file names: `--check --blobs` on a store holding the files LiteCore names, for every digest.

Every difference must be one of DIFFERENCES below (each with its reason and the LiteCore function
it comes from); any other fails the run. Prints `ok - …` / `FAIL - …` lines and the counts.

    Interop/litecore.py --binary PATH --harness PATH [--documents N]
"""

import argparse
import base64
import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

# -- digests

def sha1_digest(data):
    return "sha1-" + base64.b64encode(hashlib.sha1(data).digest()).decode()


def non_canonical(digest):
    """The same digest with the unused low bits of its last base64 character set (still valid
    base64 to a forgiving decoder, as LiteCore's is)."""
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    body = digest[len("sha1-"):]
    last = body[-2]
    value = alphabet.index(last)
    return "sha1-" + body[:-2] + alphabet[value | 1 if value % 4 == 0 else value] + "="


BODIES = [bytes([i]) * (i * 7) for i in range(1, 9)] + [b"", b"hello\n"]
DIGESTS = [sha1_digest(b) for b in BODIES]


def digest_pool(rng):
    """A digest for a blob or an entry: mostly valid, sometimes not what LiteCore takes."""
    roll = rng.random()
    if roll < 0.70:
        return rng.choice(DIGESTS)
    if roll < 0.78:
        candidate = non_canonical(rng.choice(DIGESTS))
        return candidate
    if roll < 0.84:
        return "md5-" + base64.b64encode(hashlib.md5(rng.choice(BODIES)).digest()).decode()
    if roll < 0.90:
        return rng.choice(["sha1-", "sha1-xyz", "SHA1-" + rng.choice(DIGESTS)[5:], "blob"])
    return rng.choice([17, None, True, ["sha1-x"], {"d": 1}])


# -- documents

KEYS = ["photo", "a", "b", "files", "x~y", "x/y", "dot.key", "café", "", "0", "1"]


def blob(rng, digest=None):
    value = {"@type": "blob", "digest": digest if digest is not None else digest_pool(rng)}
    if rng.random() < 0.7:
        value["content_type"] = rng.choice(["image/png", "text/plain", "application/octet-stream"])
    if rng.random() < 0.8:
        value["length"] = rng.choice([0, 7, 14, 3008])
    return value


def pointer_token(key):
    return key.replace("~", "~0").replace("/", "~1")


def place_blobs(rng, document, count):
    """Puts `count` blobs in `document` and returns their pointers."""
    pointers = []
    for _ in range(count):
        shape = rng.random()
        key = rng.choice(KEYS)
        if shape < 0.45:
            document[key] = blob(rng)
            pointers.append("/" + pointer_token(key))
        elif shape < 0.75:
            inner = rng.choice(KEYS)
            document.setdefault(key, {})
            if isinstance(document[key], dict) and document[key].get("@type") != "blob":
                document[key][inner] = blob(rng)
                pointers.append("/" + pointer_token(key) + "/" + pointer_token(inner))
        else:
            items = [blob(rng) for _ in range(rng.randint(1, 3))]
            if rng.random() < 0.3:
                items.insert(0, "text")
            document[key] = items
            pointers.extend("/" + pointer_token(key) + "/" + str(i)
                            for i, item in enumerate(items) if isinstance(item, dict))
    return pointers


def entries(rng, document, pointers):
    """An `_attachments` object as Sync Gateway would hold one: entries an earlier push made
    (mirroring, replaced, or with no blob at their place), real attachments, odd ones."""
    attachments = {}
    for pointer in pointers:
        roll = rng.random()
        target = document_value(document, pointer)
        if roll < 0.5 and isinstance(target, dict):
            value = dict(target)
            value.pop("@type", None)
            value["stub"] = True
            value["revpos"] = rng.randint(1, 3)
            attachments["blob_" + pointer] = value
        elif roll < 0.7:
            attachments["blob_" + pointer] = {"digest": digest_pool(rng), "length": rng.choice([7, 99]),
                                              "content_type": "image/jpeg", "stub": True, "revpos": 2}
    for _ in range(rng.randint(0, 2)):
        roll = rng.random()
        if roll < 0.4:
            attachments[rng.choice(["notes.txt", "a.png", "blob_1", "blob_/nowhere", "blob_/"])] = {
                "digest": digest_pool(rng), "length": 7, "stub": True, "revpos": 1}
        elif roll < 0.6:
            attachments["blob_/" + rng.choice(["g/x", "a//b", "a/", "files/9"])] = {
                "digest": rng.choice(DIGESTS), "stub": True}
        elif roll < 0.8:
            attachments[rng.choice(["n", "blob_2"])] = rng.choice([1, "s", None, [1]])
        else:
            attachments["real.bin"] = {"data": base64.b64encode(b"bytes").decode(),
                                       "content_type": "application/octet-stream"}
    return attachments


def document_value(document, pointer):
    value = document
    for token in pointer.split("/")[1:]:
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(value, list):
            value = value[int(token)] if token.isdigit() and int(token) < len(value) else None
        elif isinstance(value, dict):
            value = value.get(token)
        else:
            return None
    return value


def make_documents(count, seed):
    rng = random.Random(seed)
    documents = []
    for index in range(count):
        document = {"_id": f"d{index}"}
        roll = rng.random()
        if roll < 0.6:
            document["_rev"] = f"{rng.randint(1, 9)}-{rng.getrandbits(128):032x}"
        elif roll < 0.7:
            document["_rev"] = rng.choice(["3-abc", "x", "2-"])
        document["n"] = rng.choice([1, 2.5, "s", None, [1, 2], {"k": True}])
        pointers = place_blobs(rng, document, rng.choice([0, 1, 1, 2, 3]))
        shape = rng.random()
        if shape < 0.6:
            attachments = entries(rng, document, pointers)
            if attachments or rng.random() < 0.2:
                document["_attachments"] = attachments
        elif shape < 0.66:
            document["_attachments"] = rng.choice([None, "x", [], [blob(rng)]])
        documents.append(document)
    # The shapes the harness README singles out, once each.
    documents += [
        {"_id": "self-blob", "@type": "blob", "digest": DIGESTS[0], "length": 7,
         "inner": {"@type": "blob", "digest": DIGESTS[1]}},
        {"_id": "self-blob-pulled", "@type": "blob", "digest": DIGESTS[0],
         "_attachments": {"blob_/": {"digest": DIGESTS[0], "stub": True}}},
        {"_id": "non-objects", "photo": {"@type": "blob", "digest": DIGESTS[2]},
         "_attachments": {"a": 1, "b": "x"}},
        {"_id": "stale", "n": 1, "_attachments": {"blob_/gone": {"digest": DIGESTS[3], "stub": True}}},
        {"_id": "fix-nested", "p": {"@type": "blob", "digest": DIGESTS[1],
                                    "q": {"@type": "blob", "digest": DIGESTS[2]}},
         "_attachments": {"blob_/p": {"digest": "md5-x"}, "blob_/p/q": {"digest": DIGESTS[3]}}},
        {"_id": "root-fix", "@type": "blob", "digest": DIGESTS[1],
         "_attachments": {"blob_/": {"digest": DIGESTS[3]}}},
        {"_id": "entry-order", "p": {"@type": "blob", "digest": DIGESTS[1]},
         "_attachments": {"blob_/p/": {"digest": DIGESTS[2]}, "blob_/p": {"digest": non_canonical(DIGESTS[3])}}},
        {"_id": "spaced-digest", "p": {"@type": "blob", "digest": DIGESTS[4][:20] + " " + DIGESTS[4][20:-1]},
         "_attachments": {"k": {"digest": DIGESTS[4][:20] + " " + DIGESTS[4][20:-1], "stub": True}}},
        {"_id": "line-break-digest", "p": {"@type": "blob", "digest": DIGESTS[5][:-1] + "\n"},
         "_attachments": {"k": {"digest": DIGESTS[5], "stub": True}}},
        {"_id": "non-string-digest-entry", "photo": {"@type": "blob", "digest": DIGESTS[2],
                                                      "length": 14, "content_type": "image/png"},
         "_attachments": {"blob_/photo": {"digest": 17, "length": 3, "content_type": "x/y"}}},
    ]
    return documents


# -- running

def run(command, stdin):
    completed = subprocess.run(command, input=stdin, capture_output=True, timeout=600)
    return completed.returncode, completed.stdout, completed.stderr.decode(errors="replace")


def by_id(text):
    result = {}
    for line in text.decode().splitlines():
        if line.strip():
            value = json.loads(line)
            result[value.get("_id")] = value
    return result


class Suite:
    def __init__(self, binary, harness):
        self.binary = binary
        self.harness = harness
        self.failures = 0
        self.checks = 0

    def check(self, condition, what, detail=""):
        self.checks += 1
        if condition:
            print(f"ok - {what}")
        else:
            self.failures += 1
            print(f"FAIL - {what}" + (f"\n    {detail}" if detail else ""))


# -- the differences kept on purpose, each with its reason and LiteCore's function

def is_synthesized(name):
    return isinstance(name, str) and (name.startswith("blob_") or name.startswith("$"))


def valid_sha1(digest):
    if not isinstance(digest, str) or not digest.startswith("sha1-") or len(digest) != 33:
        return False
    try:
        base64.b64decode(digest[5:], validate=True)
        return True
    except Exception:
        return False


def canonical_sha1(digest):
    return valid_sha1(digest) and base64.b64encode(base64.b64decode(digest[5:])).decode() == digest[5:]


def entry_pointers(document):
    attachments = document.get("_attachments")
    if not isinstance(attachments, dict):
        return []
    return [name[5:] for name in attachments if isinstance(name, str) and name.startswith("blob_/")]


def blob_digests(value, found=None):
    found = [] if found is None else found
    if isinstance(value, dict):
        if value.get("@type") == "blob":
            found.append(value.get("digest"))
        for key, item in value.items():
            if key != "_attachments":
                blob_digests(item, found)
    elif isinstance(value, list):
        for item in value:
            blob_digests(item, found)
    return found


# Each row: (name, comparison, reason, predicate(document, harness row) -> bool, keys(document)
# -> the top-level keys the difference may touch). A document whose outputs differ only in keys
# a matching row names is explained; any other difference fails.
def first_token(pointer):
    """The top-level key a pointer (after `blob_`) goes through, decoded and not."""
    token = pointer[1:].split("/")[0] if pointer.startswith("/") else pointer.split("/")[0]
    return {token, token.replace("~1", "/").replace("~0", "~")}


def pointer_keys(document, test):
    """`_attachments` and the top-level keys of the entries' pointers that pass `test`."""
    keys = {"_attachments"}
    for pointer in entry_pointers(document):
        if test(pointer):
            keys |= first_token(pointer)
    return keys


def entry_keys(document, test):
    """`_attachments` and the top-level keys the pointers of the entries passing `test` name."""
    keys = {"_attachments"}
    attachments = document.get("_attachments")
    if isinstance(attachments, dict):
        for name, value in attachments.items():
            if isinstance(name, str) and name.startswith("blob_/") and test(name, value):
                keys |= first_token(name[5:])
    return keys


def blob_keys(document, test):
    """The top-level keys under which a blob whose digest passes `test` is."""
    return {key for key, value in document.items()
            if key != "_attachments" and any(test(x) for x in blob_digests(value))}


def names_digestless_blob(document, name):
    """Whether the entry `name` names, by either reading of its pointer, a blob whose digest is
    not a string."""
    pointer = name[5:]
    for target in (document_value(document, pointer), literal_value(document, pointer)):
        if isinstance(target, dict) and target.get("@type") == "blob" \
                and not isinstance(target.get("digest"), str):
            return True
    return False


def literal_value(document, pointer):
    """Where LiteCore's evalJSONPointer goes: tokens not decoded, a last / dropped, `/` alone
    the document; None where it finds nothing."""
    if pointer == "/":
        return document
    value = document
    tokens = pointer[1:].split("/")
    if tokens and tokens[-1] == "" and len(tokens) > 1:
        tokens = tokens[:-1]
    for token in tokens:
        if isinstance(value, list):
            if not token.isdigit() or int(token) >= len(value):
                return None
            value = value[int(token)]
        elif isinstance(value, dict) and token:
            value = value.get(token)
        else:
            return None
    return value


def empty_token(pointer):
    return pointer == "/" or pointer.endswith("/") or "//" in pointer


def _any_entry(document, test):
    attachments = document.get("_attachments")
    return isinstance(attachments, dict) and any(test(name, value) for name, value in attachments.items())


DIFFERENCES = [
    ("unparsable _rev", "push",
     "with a _rev LiteCore cannot parse (`3-abc`, `2-`), C4Document::getRevIDGeneration gives 0 and "
     "encodeRevWithLegacyAttachments writes no revpos; --naming litecore writes the generation's "
     "digits (a real Couchbase Lite document always has a parsable _rev)",
     lambda d, h: h.get("rev_unparsable", False), lambda d: {"_attachments"}),
    ("blob without a sha1 digest", "push",
     "encodeRevWithLegacyAttachments synthesizes entries from findBlobReferences, which takes only "
     "blobs whose digest C4BlobKey parses (sha1-); push makes an entry for every blob with a string "
     "digest (an md5- one too), and --check reports what would not sync",
     lambda d, h: any(not valid_sha1(x) for x in blob_digests(d)), lambda d: {"_attachments"}),
    ("no blob: stale entries", "push",
     "the pusher calls encodeRevWithLegacyAttachments only when C4Blob::dictContainsBlobs (the "
     "revision has kRevHasAttachments): a document without a blob goes as it is, entries an earlier "
     "push made included; push removes them (item 6)",
     lambda d, h: not h.get("has_blobs", True), lambda d: {"_attachments"}),
    ("_attachments not an object", "push",
     "encodeRevWithLegacyAttachments replaces a null, string or array _attachments with the entries "
     "it makes (a blob inside an array leaves {}); push rejects the document rather than drop what "
     "is there (item 7)",
     lambda d, h: "_attachments" in d and not isinstance(d["_attachments"], dict),
     lambda d: {"_attachments", "*rejected"}),
    ("the document is a blob", "push",
     "a document that is itself a blob gets one entry, blob_/, for the whole document and none "
     "for blobs inside it (item 8); push names every blob",
     lambda d, h: d.get("@type") == "blob", lambda d: {"_attachments"}),
    ("_attachments empty", "both",
     "LiteCore writes an empty _attachments object where the pushed document had blobs but no "
     "entry could be made, and strips an empty one on pull; the tool leaves an input's empty "
     "object as it is and adds none",
     lambda d, h: True, lambda d: {"_attachments=empty"}),
    ("escaped pointer", "pull",
     "LiteCore resolves blob_/ names with Path::evalJSONPointer, which splits at / and never "
     "decodes ~0 or ~1: such an entry names no blob there and stays; --update-blobs decodes RFC "
     "6901 pointers (docs/compatibility.md)",
     lambda d, h: any("~" in p for p in entry_pointers(d)),
     lambda d: pointer_keys(d, lambda p: "~" in p)),
    ("empty pointer token", "pull",
     "Path::evalJSONPointer, with SharedKeys on as for incoming revisions, finds no empty key "
     "(blob_//, blob_/a//b), drops a last / (blob_/a/ is /a) and takes blob_/ for the document "
     "itself; --update-blobs reads RFC 6901 pointers (blob_/ is the key \"\", blob_/a/ the key "
     "\"\" in /a) (item 2), and --check reports entry-pointer-differs",
     lambda d, h: any(empty_token(p) for p in entry_pointers(d)),
     lambda d: pointer_keys(d, empty_token)),
    ("non-numeric index", "pull",
     "a pointer token that is not a number over an array (blob_/g/x) makes evalJSONPointer throw "
     "and the revision fails; --update-blobs keeps such an entry (item 3), and --check reports "
     "invalid-entry-pointer",
     lambda d, h: "pull_error" in h, lambda d: set(d) | {"*failed"}),
    ("digest not a string", "pull",
     "encodeStrippingOldMetaProperties copies an entry's digest into its blob whatever its type and "
     "drops length and content_type; --update-blobs leaves the blob and keeps the entry, with a "
     "warning, an error with --strict (blob-not-updated, item 4)",
     lambda d, h: _any_entry(d, lambda n, v: isinstance(v, dict) and "digest" in v
                             and not isinstance(v["digest"], str)),
     lambda d: entry_keys(d, lambda n, v: isinstance(v, dict) and not isinstance(v.get("digest"), str))),
    ("non-object entries", "pull",
     "LiteCore drops _attachments when every entry left is not an object (item 9); the tool keeps "
     "entries it does not understand",
     lambda d, h: _any_entry(d, lambda n, v: not isinstance(v, dict)), lambda d: {"_attachments"}),
    ("_attachments not an object", "pull",
     "LiteCore strips _attachments as an old meta property whatever it holds; the tool keeps a "
     "null, string or array one (it names no entry)",
     lambda d, h: "_attachments" in d and not isinstance(d["_attachments"], dict),
     lambda d: {"_attachments"}),
    ("non-canonical digest", "pull",
     "a sha1- digest whose last base64 character has unused bits set is valid to LiteCore "
     "(C4BlobKey::withDigestString), which re-encodes it where it copies it into a blob (item 1); "
     "the tool reads it so too (the file named by the canonical text, --check: "
     "non-canonical-digest) but matches entries and blobs by the digest as written",
     lambda d, h: any(valid_sha1(x) and not canonical_sha1(x) for x in blob_digests(d))
     or _any_entry(d, lambda n, v: isinstance(v, dict) and valid_sha1(v.get("digest"))
                   and not canonical_sha1(v.get("digest"))),
     lambda d: blob_keys(d, lambda x: valid_sha1(x) and not canonical_sha1(x))
     | entry_keys(d, lambda n, v: isinstance(v, dict) and valid_sha1(v.get("digest"))
                  and not canonical_sha1(v.get("digest")))),
    ("a blob without a string digest", "pull",
     "encodeStrippingOldMetaProperties updates the blob a blob_/ entry names whatever the blob's "
     "own digest is; --update-blobs leaves a blob without a string digest as it is (and says so)",
     lambda d, h: any(not isinstance(x, str) for x in blob_digests(d)),
     lambda d: entry_keys(d, lambda n, v: names_digestless_blob(d, n))),
    ("an entry naming no blob, with a blob's digest", "pull",
     "LiteCore keeps a blob_/ entry whose pointer resolves to no blob; --update-blobs removes it "
     "when a blob of the document has its digest, as plain --pull does (the blob holds its bytes)",
     lambda d, h: _any_entry(d, lambda n, v: isinstance(v, dict) and v.get("digest") in blob_digests(d)),
     lambda d: {"_attachments"}),
    ("an entry whose digest is not sha1-", "pull",
     "encodeStrippingOldMetaProperties copies an entry's digest into its blob whatever it is (an "
     "md5- one too, which no blob store can hold); --update-blobs updates blobs from sha1- entries "
     "only and keeps the others, with a warning (blob-not-updated)",
     lambda d, h: _any_entry(d, lambda n, v: isinstance(v, dict) and isinstance(v.get("digest"), str)
                             and not valid_sha1(v["digest"])),
     lambda d: entry_keys(d, lambda n, v: isinstance(v, dict) and not valid_sha1(v.get("digest")))),
    ("a real name with a blob's digest", "pull",
     "encodeStrippingOldMetaProperties removes only entries named blob_…; --update-blobs also "
     "removes an entry of any other name whose digest a blob of the document has (it mirrors that "
     "blob's bytes), as plain --pull does",
     lambda d, h: _any_entry(d, lambda n, v: not is_synthesized(n) and isinstance(v, dict)
                             and v.get("digest") in blob_digests(d)),
     lambda d: {"_attachments"}),
]


# -- comparing

def differing_keys(lc, us):
    """The top-level keys whose values differ; `_attachments=empty` when the only difference is
    an empty object on one side and none on the other."""
    if lc is None and us is None:
        return set()
    if us is None:
        return {"*rejected"}
    if lc is None:
        return {"*failed"}
    keys = set()
    for key in set(lc) | set(us):
        if lc.get(key, "<none>") == us.get(key, "<none>"):
            continue
        if key == "_attachments" and lc.get(key, {}) == {} and us.get(key, {}) == {}:
            keys.add("_attachments=empty")
        else:
            keys.add(key)
    return keys


def without_meta(document):
    """What pull compares: LiteCore strips _id, _rev and the other old meta properties
    (legacy_attachments::encodeStrippingOldMetaProperties); the tool's output keeps them, as
    documents in a dump have them."""
    if document is None:
        return None
    return {k: v for k, v in document.items() if not k.startswith("_") or k == "_attachments"}


def explain(document, row, comparison, keys):
    """The rows that explain `keys`, or None when some key is explained by none."""
    used = []
    allowed = set()
    for name, applies, _, predicate, touched in DIFFERENCES:
        if applies not in (comparison, "both") or not predicate(document, row):
            continue
        explained = touched(document)
        allowed |= explained
        if explained & keys:
            used.append(name)
    if not keys <= allowed:
        return None
    return used


def file_names(suite, arguments, counts):
    """Blob file names: for every digest, the file LiteCore's store uses (C4BlobKey::
    withDigestString, C4BlobStore::pathForKey) against the one the tool looks for (`--list
    --blobs`: `"stored":true` when the file LiteCore names is there). No difference is allowed:
    a non-canonical digest names the file of its canonical text in both."""
    digests = sorted(set(DIGESTS + [non_canonical(d) for d in DIGESTS] + [
        "sha1-", "sha1-xyz", "SHA1-" + DIGESTS[0][5:], "sha1-" + DIGESTS[1][5:-1],
        DIGESTS[2] + "=", "md5-XUFAKrxLKna5cZ2REBfFkg==", "sha1-" + "A" * 27 + "=",
        "sha1-" + DIGESTS[3][5:].replace("+", "-"), " " + DIGESTS[4],
        DIGESTS[5][:20] + " " + DIGESTS[5][20:-1], DIGESTS[6][:-1] + " ", DIGESTS[7][:-1] + "\t",
        DIGESTS[1][:12] + "=" + DIGESTS[1][12:-1], DIGESTS[2][:-1] + "-"]))
    status, out, err = run([arguments.harness, "digest"], "".join(d + "\n" for d in digests).encode())
    named = [json.loads(line) for line in out.decode().splitlines() if line]
    suite.check(status == 0 and len(named) == len(digests),
                f"litecore-harness digest named {len(digests)} digests", err[:300])
    work = tempfile.mkdtemp(prefix="cbl-litecore-")
    try:
        store = os.path.join(work, "Attachments")
        os.makedirs(store)
        for row in named:
            if row.get("valid") and row.get("file"):
                open(os.path.join(store, row["file"]), "wb").close()
        documents = [{"_id": f"f{i}", "p": {"@type": "blob", "digest": row["digest"]}}
                     for i, row in enumerate(named)]
        text = b"".join(json.dumps(d).encode() + b"\n" for d in documents)
        _, out, _ = run([arguments.binary, "--list", "--blobs", store], text)
        listed = {row["id"]: row for row in map(json.loads, out.decode().splitlines()) if row}
        unexplained = []
        for i, row in enumerate(named):
            found = listed.get(f"f{i}", {}).get("stored") is True
            if found == bool(row.get("valid")):
                continue
            unexplained.append(row)
        suite.check(not unexplained,
                    f"the tool finds exactly the files LiteCore names ({len(named)} digests, "
                    f"{sum(1 for r in named if r.get('valid'))} valid to LiteCore)",
                    json.dumps(unexplained[:5]))
    finally:
        shutil.rmtree(work, ignore_errors=True)


REFUSALS = {"invalid-entry-pointer": "error", "dangling-blob": "dangling"}


def refusal(row):
    """What LiteCore's pull does with a document as it is: fails it on an entry name
    (`pull_error`), fails it as dangling (`pull_dangling` not empty), or takes it."""
    if "pull_error" in row:
        return "error"
    return "dangling" if row.get("pull_dangling") else "ok"


DIGEST_IN_TEXT = re.compile(r"sha1-[A-Za-z0-9+/]{27}=")


def check_findings(arguments, text):
    """`--check` on `text`: the set of problems each document id has, and the digests its
    dangling-blob findings name."""
    _, out, _ = run([arguments.binary, "--check"], text)
    found = {}
    digests = {}
    for line in out.decode().splitlines():
        if line:
            row = json.loads(line)
            found.setdefault(row.get("id"), set()).add(row.get("problem"))
            if row.get("problem") == "dangling-blob":
                named = DIGEST_IN_TEXT.findall(row.get("detail", ""))
                digests.setdefault(row.get("id"), set()).update(named[-1:])
    return found, digests


def compare_refusals(suite, arguments, label, text):
    """`--check` says exactly what LiteCore's pull refuses: `invalid-entry-pointer` where it
    throws, `dangling-blob` where its dangling-blob check fails the revision. No table: no
    difference is allowed. Returns (documents, refused, the harness rows, the findings)."""
    _, out, err = run([arguments.harness, "docs"], text)
    rows = [json.loads(line) for line in out.decode().splitlines() if line]
    documents = [json.loads(line) for line in text.decode().splitlines() if line]
    found, digests = check_findings(arguments, text)
    wrong = []
    refused = 0
    for document, row in zip(documents, rows):
        if "parse_error" in row:
            continue
        theirs = refusal(row)
        problems = found.get(document.get("_id"), set())
        ours = next((v for k, v in REFUSALS.items() if k in problems), "ok")
        refused += theirs != "ok"
        if theirs == "dangling" and ours == "dangling":
            # The same digests, as LiteCore reads them.
            theirs = (theirs, tuple(sorted(set(row["pull_dangling"]))))
            ours = (ours, tuple(sorted(digests.get(document.get("_id"), set()))))
        if theirs != ours:
            wrong.append((document, theirs, ours, row.get("pull_dangling"), row.get("pull_error")))
    suite.check(len(rows) == len(documents) and not wrong,
                f"{label}: --check reports exactly what LiteCore's pull refuses ({len(documents)} "
                f"documents, {refused} refused, {len(wrong)} not as LiteCore)",
                "\n    ".join(f"LiteCore {t}, --check {o}: {json.dumps(d)[:300]} {g} {e}"
                               for d, t, o, g, e in wrong[:5]) + err[:300])
    return documents, refused, rows, found


def upgrade_then_push(suite, arguments, text):
    """--upgrade's output is what Couchbase Lite keeps (as pull's is): a document that keeps
    some entries has blobs no entry names, which LiteCore's pull would refuse as it is (--check
    says so: compare_refusals). After the documented push (--naming litecore) LiteCore's pull
    takes every one, but where --check on the upgraded document reported what LiteCore reads
    otherwise (a non-canonical digest, an entry it follows elsewhere) or the document is a blob
    (a row of the table)."""
    _, upgraded, _ = run([arguments.binary, "--upgrade", "-k"], text)
    documents, refused, _, found = compare_refusals(suite, arguments, "upgraded documents", upgraded)
    _, pushed, _ = run([arguments.binary, "--push", "--naming", "litecore", "-k"], upgraded)
    _, out, _ = run([arguments.harness, "docs"], pushed)
    rows = [json.loads(line) for line in out.decode().splitlines() if line]
    explained = {"non-canonical-digest", "entry-pointer-differs", "invalid-entry-pointer"}
    pushed_documents = [json.loads(line) for line in pushed.decode().splitlines() if line]
    wrong = [(d, r) for d, r in zip(pushed_documents, rows)
             if refusal(r) != "ok" and not (found.get(d["_id"], set()) & explained)
             and d.get("@type") != "blob"]
    after = sum(1 for r in rows if refusal(r) != "ok")
    suite.check(len(rows) == len(pushed_documents) and not wrong,
                f"--upgrade then --push --naming litecore: LiteCore's pull takes every document "
                f"but those --check explained ({len(documents)} upgraded, {refused} refused as "
                f"they are, {after} after push, {len(wrong)} unexplained)",
                "\n    ".join(f"{json.dumps(d)[:300]} {r.get('pull_dangling')} {r.get('pull_error')}"
                               for d, r in wrong[:5]))
    return len(documents), refused, after


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", required=True)
    parser.add_argument("--harness", required=True)
    parser.add_argument("--documents", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=27)
    arguments = parser.parse_args()
    suite = Suite(arguments.binary, arguments.harness)
    documents = make_documents(arguments.documents, arguments.seed)
    text = b"".join(json.dumps(d, ensure_ascii=False).encode() + b"\n" for d in documents)
    status, out, err = run([arguments.harness, "docs"], text)
    suite.check(status == 0, "litecore-harness docs ran", err[:300])
    rows = [json.loads(line) for line in out.decode().splitlines() if line]
    suite.check(len(rows) == len(documents), f"the harness answered for all {len(documents)} documents")
    _, pushed, _ = run([arguments.binary, "--push", "--naming", "litecore", "-k"], text)
    _, pulled, _ = run([arguments.binary, "--pull", "--update-blobs", "-k"], text)
    pushed, pulled = by_id(pushed), by_id(pulled)

    counts = {name: 0 for name, *_ in DIFFERENCES}
    compared = differing = 0
    unexplained = []
    for document, row in zip(documents, rows):
        if "parse_error" in row:
            continue
        for comparison, lc, us in (
                ("push", row.get("push_gated"), pushed.get(document["_id"])),
                ("pull", without_meta(row.get("pull")), without_meta(pulled.get(document["_id"])))):
            compared += 1
            keys = differing_keys(lc, us)
            if not keys:
                continue
            differing += 1
            used = explain(document, row, comparison, keys)
            if used is None:
                unexplained.append((comparison, document, lc, us, keys))
                continue
            for name in used:
                counts[name] += 1
    suite.check(not unexplained,
                f"every difference from LiteCore is in the table ({compared} comparisons of "
                f"{len(documents)} documents, {differing} differing, {len(unexplained)} not explained)",
                "\n    ".join(f"{c} {sorted(k)}: {json.dumps(d)[:300]}\n      LiteCore {json.dumps(l)[:300]}"
                             f"\n      tool     {json.dumps(u)[:300]}"
                             for c, d, l, u, k in unexplained[:5]))
    file_names(suite, arguments, counts)
    _, refused_input, _, _ = compare_refusals(suite, arguments, "generated documents", text)
    compare_refusals(suite, arguments, "pushed documents", b"".join(
        json.dumps(d).encode() + b"\n" for d in pushed.values()))
    upgraded, refused_upgraded, refused_pushed = upgrade_then_push(suite, arguments, text)
    documented = open(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                   "docs", "compatibility.md"), encoding="utf-8").read()
    missing = [name for name, *_ in DIFFERENCES if f"| {name} |" not in documented]
    suite.check(not missing, "docs/compatibility.md lists every row of the table", str(missing))
    for name, count in counts.items():
        print(f"# {count:5d} {name}")
    print(f"# refused by LiteCore's pull as generated: {refused_input}; upgraded: "
          f"{refused_upgraded} of {upgraded}; upgraded and pushed: {refused_pushed}")
    print(f"# litecore: {suite.checks} checks, {suite.failures} failed")
    return 1 if suite.failures else 0


if __name__ == "__main__":
    sys.exit(main())
