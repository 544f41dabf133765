#!/usr/bin/env python3
"""The interop suite against a real CouchDB (make interop; Interop/README.md).

Run against one running server: it loads Couchbase Lite 2 documents and their blob store with
the README's own pipelines, reads them back through every API that serves them, pulls them into
fresh stores, and compares documents and files with what went in. Then the attachments CouchDB
made itself go through --upgrade --blobs, and what CouchDB refuses is checked against what
--check predicts.

    Interop/couchdb.py --binary PATH --url http://admin:password@127.0.0.1:PORT --label NAME

Only the Python standard library, curl, GNU parallel and the binary are used. Each check prints
one line, `ok - …` or `FAIL - …`; the exit status is 1 when any check failed.
"""

import argparse
import base64
import hashlib
import json
import math
import os
import random
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import urllib.error
import urllib.parse
import urllib.request

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = [os.path.join(REPO, "README.md")] + [
    os.path.join(REPO, "docs", name)
    for name in sorted(os.listdir(os.path.join(REPO, "docs")))
    if name.endswith(".md")
] if os.path.isdir(os.path.join(REPO, "docs")) else [os.path.join(REPO, "README.md")]

# The documentation writes CouchDB as http://localhost:5984 with -u admin:password and the
# database app; the suite runs the same text against its server and its databases.
DOC_BASE = "http://localhost:5984"
DOC_DB = "/app/"
# How the documentation sends _bulk_docs bodies to CouchDB, one request per line. (-q keeps
# the header one argument; --block: bodies over parallel's 1 MB default, without warnings.)
LOAD_PIPE = (" | parallel --pipe -N1 --block 64M -q curl -sS -u admin:password -H"
             " 'Content-Type: application/json' --data-binary @-"
             " http://localhost:5984/app/_bulk_docs")


class Suite:
    def __init__(self, binary, url, label, work):
        parsed = urllib.parse.urlsplit(url)
        self.base = f"{parsed.scheme}://{parsed.hostname}:{parsed.port}"
        self.auth = "Basic " + base64.b64encode(
            f"{parsed.username}:{parsed.password}".encode()).decode()
        self.binary = os.path.abspath(binary)
        self.label = label
        self.work = work
        self.failures = 0
        self.checks = 0
        bin_dir = os.path.join(work, "bin")
        os.makedirs(bin_dir, exist_ok=True)
        link = os.path.join(bin_dir, "cbl-attachments")
        if not os.path.exists(link):
            os.symlink(os.path.abspath(binary), link)
        self.env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ["PATH"], LC_ALL="C")
        self.doc_text = "".join(open(path, encoding="utf-8").read() for path in DOCS)

    # -- reporting

    def check(self, condition, what, detail=""):
        self.checks += 1
        if condition:
            print(f"ok - [{self.label}] {what}")
        else:
            self.failures += 1
            print(f"FAIL - [{self.label}] {what}" + (f"\n    {detail}" if detail else ""))
        return condition

    # -- HTTP

    def request(self, method, path, body=None, headers=None):
        request = urllib.request.Request(
            self.base + path, data=body, method=method,
            headers={"Authorization": self.auth, **(headers or {})})
        try:
            with urllib.request.urlopen(request, timeout=120) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()

    def create_database(self, name):
        self.request("DELETE", f"/{name}")
        status, body = self.request("PUT", f"/{name}")
        assert status == 201, (status, body)

    # -- pipelines

    def pipeline(self, text, db, cwd, documented=True, substitutions=()):
        """Runs a pipeline as the documentation writes it (checked to be there, verbatim),
        against this server and database `db`. Returns (status, stdout, stderr)."""
        if documented:
            self.check(text in self.doc_text, f"the documentation shows: {text}")
        command = text.replace(DOC_BASE, self.base).replace(DOC_DB, f"/{db}/")
        for old, new in substitutions:
            command = command.replace(old, new)
        completed = subprocess.run(
            ["bash", "-o", "pipefail", "-c", command], cwd=cwd, env=self.env,
            capture_output=True, timeout=900)
        return completed.returncode, completed.stdout, completed.stderr.decode(errors="replace")

    def run(self, arguments, stdin=b"", cwd=None):
        completed = subprocess.run(
            [self.binary] + arguments, input=stdin, cwd=cwd or self.work, capture_output=True,
            timeout=900)
        return completed.returncode, completed.stdout, completed.stderr.decode(errors="replace")


# -- the documents and their store, as Couchbase Lite 2 has them


def blob_file_name(sha1):
    return base64.b64encode(sha1).decode().replace("/", "_") + ".blob"


def digest(data):
    return "sha1-" + base64.b64encode(hashlib.sha1(data).digest()).decode()


def make_bodies():
    """Bodies of every kind CouchDB treats differently: compressible types (text/*, JSON,
    JavaScript, XML) and others, empty ones of both, and two over 2 MB."""
    rng = random.Random(2024)
    words = "blob attachment couchbase lite sync gateway couchdb digest revision store".split()

    def prose(count):
        return " ".join(rng.choice(words) for _ in range(count)).encode()

    bodies = {
        "png": (bytes(rng.getrandbits(8) for _ in range(3008)), "image/png"),
        "text": (prose(800), "text/plain"),
        "text-utf8": ("Grüße, ünïcödé — ".encode() * 40, "text/plain; charset=utf-8"),
        "json": (json.dumps({"values": list(range(400))}).encode(), "application/json"),
        "js": (b"function f(x) { return x * 2; }\n" * 30, "application/javascript"),
        "xml": (b"<a><b>xml body</b></a>\n" * 25, "application/xml"),
        "empty-text": (b"", "text/plain"),
        "empty-binary": (b"", "application/octet-stream"),
        "big-text": (prose(420_000)[:2_500_000], "text/plain"),
        "big-binary": (bytes(rng.getrandbits(8) for _ in range(2_200_000)),
                       "application/octet-stream"),
    }
    return bodies


def blob(bodies, name, **extra):
    data, content_type = bodies[name]
    value = {"@type": "blob", "content_type": content_type, "digest": digest(data),
             "length": len(data)}
    value.update(extra)
    return value


def make_documents(bodies, with_revisions):
    """Couchbase Lite 2 documents: blobs at the top, nested, in arrays, shared between
    documents, under keys that need escapes, and a document without any."""
    documents = [
        {"_id": "profile::lena", "name": "Lena Ström", "avatar": blob(bodies, "png")},
        {"_id": "note::1", "text": "trip", "files": [blob(bodies, "text"),
                                                      blob(bodies, "empty-text")]},
        {"_id": "product::9", "title": "Widget", "price": 12.5, "count": 7,
         "photos": {"thumbnail": blob(bodies, "png"),
                    "gallery": [blob(bodies, "big-binary"), blob(bodies, "json")]}},
        {"_id": "doc::nested", "a": {"b": {"c": [{"d": blob(bodies, "text-utf8")}]}},
         "quote": "say \"hi\"", "tags": ["x", "y"]},
        {"_id": "doc::big", "report": blob(bodies, "big-text"), "empty": blob(bodies, "empty-binary")},
        {"_id": "doc::keys", "a/b": {"~c": blob(bodies, "xml")}, "dot.key": blob(bodies, "js")},
        {"_id": "shared::copy", "copy": blob(bodies, "text")},
        {"_id": "plain::1", "text": "no attachments", "n": 3},
    ]
    if with_revisions:
        for index, document in enumerate(documents):
            # After _id, as an export writes it.
            items = list(document.items())
            items.insert(1, ("_rev", f"{index % 3 + 1}-{hashlib.md5(str(index).encode()).hexdigest()}"))
            documents[index] = dict(items)
    return documents


def write_store(directory, bodies):
    attachments = os.path.join(directory, "Attachments")
    os.makedirs(attachments, exist_ok=True)
    for data, _ in bodies.values():
        path = os.path.join(attachments, blob_file_name(hashlib.sha1(data).digest()))
        if not os.path.exists(path):
            with open(path, "wb") as file:
                file.write(data)
            os.chmod(path, 0o444)


def store_files(directory):
    attachments = os.path.join(directory, "Attachments")
    if not os.path.isdir(attachments):
        return {}
    files = {}
    for name in sorted(os.listdir(attachments)):
        with open(os.path.join(attachments, name), "rb") as file:
            files[name] = file.read()
    return files


def expected_files(documents, bodies):
    """The store files the documents' blobs name."""
    wanted = set()

    def walk(value):
        if isinstance(value, dict):
            if value.get("@type") == "blob":
                wanted.add(value["digest"])
                return
            for member in value.values():
                walk(member)
        elif isinstance(value, list):
            for member in value:
                walk(member)

    for document in documents:
        walk(document)
    files = {}
    for data, _ in bodies.values():
        if digest(data) in wanted:
            files[blob_file_name(hashlib.sha1(data).digest())] = data
    return files


def ejson_size(value):
    """couch_ejson_size:encoded_size/1 of a decoded JSON value, from its clauses in apache/couchdb
    3.5 (src/couch/src/couch_ejson_size.erl): structure as written, a string as its UTF-8 bytes
    and two quotes, an integer by its digits, a float by its magnitude only."""
    if isinstance(value, dict):
        return 2 if not value else 1 + sum(ejson_size(k) + ejson_size(v) + 2
                                           for k, v in value.items())
    if isinstance(value, list):
        return 2 if not value else 1 + sum(ejson_size(v) + 1 for v in value)
    if value is True or value is None:
        return 4
    if value is False:
        return 5
    if isinstance(value, str):
        return 2 + len(value.encode())
    if isinstance(value, int):
        if value == 0:
            return 1
        if value < 0:
            return ejson_size(-value) + 1
        return len(str(value)) if value < 10000 else int(math.log10(value)) + 1
    if value == 0.0 or value == 1.0:
        return 3
    if value < 0:
        return ejson_size(-value) + 1
    if value < 1.0:
        for bound, size in ((1e-300, 3), (1e-100, 6), (1e-10, 5), (0.01, 4)):
            if value <= bound:
                return size
        return 3
    return 5 if value >= 1e100 else 4 if value >= 1e10 else 3


def couchdb_body_size(document):
    """What CouchDB compares with max_document_size: the body without the _ members it takes
    out (couch_doc:transfer_fields/3), attachments never counted."""
    kept = ("_access",)
    return ejson_size({k: v for k, v in document.items() if not k.startswith("_") or k in kept})


def bulk_rows(out):
    """The per-document rows of _bulk_docs responses, one response per line; a response that
    is not a list (the whole request refused) is a row of its own."""
    rows = []
    for line in out.decode().splitlines():
        if line.strip():
            response = json.loads(line)
            rows.extend(response if isinstance(response, list) else [response])
    return rows


def without_rev(document):
    return {key: value for key, value in document.items() if key != "_rev"}


def ndjson(documents):
    return "".join(json.dumps(document, ensure_ascii=False, separators=(",", ":")) + "\n"
                   for document in documents).encode()


# -- the checks


class CouchDBInterop:
    def __init__(self, suite):
        self.suite = suite
        self.bodies = make_bodies()
        self.work = suite.work
        self.store = os.path.join(self.work, "app.cblite2")
        write_store(self.store, self.bodies)
        self.plain = make_documents(self.bodies, with_revisions=False)
        self.revised = make_documents(self.bodies, with_revisions=True)
        for name, documents in (("app-dump.ndjson", self.plain),
                                ("app-dump-revs.ndjson", self.revised)):
            with open(os.path.join(self.work, name), "wb") as file:
                file.write(ndjson(documents))

    def fresh(self, name):
        path = os.path.join(self.work, name)
        shutil.rmtree(path, ignore_errors=True)
        os.makedirs(path)
        return path

    def load(self, db, text, substitutions=()):
        """Loads with a documented _bulk_docs pipeline; every document must be taken."""
        suite = self.suite
        suite.create_database(db)
        command = text
        for old, new in substitutions:
            command = command.replace(old, new)
        status, out, err = suite.pipeline(text, db, self.work, substitutions=substitutions)
        errors = [row for row in bulk_rows(out) if "error" in row]
        suite.check(status == 0 and not errors and err == "",
                    f"{db}: every document loaded ({command[:60]}…)",
                    f"status {status}, errors {errors[:3]}, stderr {err[:300]}")

    def compare(self, what, documents, pulled, keep_rev):
        expected = {d["_id"]: d if keep_rev else without_rev(d) for d in documents}
        got = {d["_id"]: d if keep_rev else without_rev(d) for d in pulled}
        differing = [key for key in expected if expected[key] != got.get(key)]
        self.suite.check(not differing and set(got) == set(expected),
                         f"{what}: every document came back equal",
                         f"differing: {differing[:3]}; first got: "
                         f"{json.dumps(got.get(differing[0]) if differing else None)[:400]}")

    def compare_store(self, what, store, documents):
        expected = expected_files(documents, self.bodies)
        got = store_files(store)
        self.suite.check(got == expected, f"{what}: the fresh store holds exactly the blobs' files",
                         f"missing {sorted(set(expected) - set(got))[:3]}, extra "
                         f"{sorted(set(got) - set(expected))[:3]}, differing "
                         f"{[n for n in expected if n in got and got[n] != expected[n]][:3]}")

    def read_back(self, db, documents, keep_rev):
        """Every API that serves the documents, with their bytes and as stubs, through the
        documented pipelines."""
        suite = self.suite
        ids = [d["_id"] for d in documents]

        # _all_docs with the bytes, into a fresh store; with att_encoding_info too.
        for extra, label in (("", ""), ("&att_encoding_info=true", " and att_encoding_info")):
            self.fresh("fresh.cblite2")
            text = ("curl -sS -u admin:password 'http://localhost:5984/app/_all_docs?include_docs=true"
                    "&attachments=true' | cbl-attachments --pull --blobs fresh.cblite2 --format all-docs"
                    " > docs.json")
            status, _, err = suite.pipeline(
                text, db, self.work, documented=(extra == ""),
                substitutions=(("attachments=true'", "attachments=true" + extra + "'"),))
            suite.check(status == 0 and err == "", f"{db}: _all_docs{label} pulled with --blobs: exit 0, no message",
                        f"status {status}: {err[:500]}")
            with open(os.path.join(self.work, "docs.json"), "rb") as file:
                envelope = json.loads(file.read())
            self.compare(f"{db}: _all_docs{label}", documents,
                         [row["doc"] for row in envelope["rows"]], keep_rev)
            self.compare_store(f"{db}: _all_docs{label}", os.path.join(self.work, "fresh.cblite2"),
                               documents)

        # Stubs: the default GET of every API; plain pull undoes push.
        text = ("curl -sS -u admin:password 'http://localhost:5984/app/_all_docs?include_docs=true'"
                " | cbl-attachments --pull --format all-docs")
        status, out, err = suite.pipeline(text, db, self.work)
        suite.check(status == 0 and err == "", f"{db}: _all_docs stubs pulled: exit 0, no message",
                    f"status {status}: {err[:500]}")
        self.compare(f"{db}: _all_docs stubs", documents,
                     [row["doc"] for row in json.loads(out)["rows"]], keep_rev)

        # _changes, normal: with the bytes and as stubs.
        self.fresh("fresh.cblite2")
        text = ("curl -sS -u admin:password 'http://localhost:5984/app/_changes?include_docs=true"
                "&attachments=true' | cbl-attachments --pull --blobs fresh.cblite2 --format changes")
        status, out, err = suite.pipeline(text, db, self.work)
        suite.check(status == 0 and err == "", f"{db}: _changes pulled with --blobs: exit 0, no message",
                    f"status {status}: {err[:500]}")
        self.compare(f"{db}: _changes", documents,
                     [row["doc"] for row in json.loads(out)["results"]], keep_rev)
        self.compare_store(f"{db}: _changes", os.path.join(self.work, "fresh.cblite2"), documents)
        text = ("curl -sS -u admin:password 'http://localhost:5984/app/_changes?include_docs=true'"
                " | cbl-attachments --pull --format changes")
        status, out, err = suite.pipeline(text, db, self.work)
        suite.check(status == 0 and err == "", f"{db}: _changes stubs pulled: exit 0, no message",
                    f"status {status}: {err[:500]}")
        self.compare(f"{db}: _changes stubs", documents,
                     [row["doc"] for row in json.loads(out)["results"]], keep_rev)

        # A continuous feed: one row per line, the bytes inline; it ends when the server has
        # been quiet for the timeout.
        self.fresh("fresh.cblite2")
        text = ("curl -sS -N -u admin:password 'http://localhost:5984/app/_changes?feed=continuous"
                "&include_docs=true&attachments=true&timeout=10000' | cbl-attachments --pull --blobs"
                " fresh.cblite2 --docs .doc --unbuffered")
        status, out, err = suite.pipeline(text, db, self.work,
                                          substitutions=(("timeout=10000", "timeout=1500"),))
        rows = [json.loads(line) for line in out.decode().splitlines() if line.strip()]
        suite.check(status == 0 and err == "" and "last_seq" in rows[-1],
                    f"{db}: continuous _changes pulled: exit 0, no message, the last_seq line kept",
                    f"status {status}: {err[:500]}")
        self.compare(f"{db}: continuous _changes", documents,
                     [row["doc"] for row in rows if "doc" in row], keep_rev)
        self.compare_store(f"{db}: continuous _changes", os.path.join(self.work, "fresh.cblite2"),
                           documents)

        # _bulk_get, as JSON: with the bytes, and as stubs; an id that is not there stays an
        # error element.
        body = json.dumps({"docs": [{"id": i} for i in ids] + [{"id": "nobody"}]})
        self.fresh("fresh.cblite2")
        text = ("curl -sS -u admin:password -H 'Content-Type: application/json' -H 'Accept:"
                " application/json' -d @ids.json 'http://localhost:5984/app/_bulk_get?attachments=true'"
                " | cbl-attachments --pull --blobs fresh.cblite2 --format bulk-get")
        with open(os.path.join(self.work, "ids.json"), "w") as file:
            file.write(body)
        status, out, err = suite.pipeline(text, db, self.work)
        results = json.loads(out)["results"]
        suite.check(status == 0 and err == "" and "error" in results[-1]["docs"][0],
                    f"{db}: _bulk_get pulled with --blobs: exit 0, no message, the error kept",
                    f"status {status}: {err[:500]}")
        self.compare(f"{db}: _bulk_get", documents,
                     [r["docs"][0]["ok"] for r in results if "ok" in r["docs"][0]], keep_rev)
        self.compare_store(f"{db}: _bulk_get", os.path.join(self.work, "fresh.cblite2"), documents)
        status, out, err = suite.pipeline(
            text.replace("?attachments=true", "").replace(" --blobs fresh.cblite2", ""), db,
            self.work, documented=False)
        suite.check(status == 0 and err == "", f"{db}: _bulk_get stubs pulled: exit 0, no message",
                    f"status {status}: {err[:500]}")
        self.compare(f"{db}: _bulk_get stubs", documents,
                     [r["docs"][0]["ok"] for r in json.loads(out)["results"] if "ok" in r["docs"][0]],
                     keep_rev)

        # _bulk_get as multipart/mixed: the bytes raw, checked as they come, into a fresh
        # store; the missing id is a warning. Then --inline, as JSON with the bytes would be.
        self.fresh("fresh.cblite2")
        text = ("curl -sS -u admin:password -H 'Content-Type: application/json' -H 'Accept:"
                " multipart/mixed' -d @ids.json http://localhost:5984/app/_bulk_get"
                " | cbl-attachments --pull --blobs fresh.cblite2 --format multipart > docs.ndjson")
        status, _, err = suite.pipeline(text, db, self.work)
        warnings = [line for line in err.splitlines() if line]
        suite.check(status == 0 and len(warnings) == 1
                    and warnings[0].endswith('warning: document "nobody": the server could not'
                                             ' give the document: not_found (missing)'),
                    f"{db}: _bulk_get multipart pulled with --blobs: exit 0, the missing id said",
                    f"status {status}: {err[:500]}")
        with open(os.path.join(self.work, "docs.ndjson"), "rb") as file:
            restored = [json.loads(line) for line in file.read().decode().splitlines() if line]
        self.compare(f"{db}: _bulk_get multipart", documents, restored, keep_rev)
        self.compare_store(f"{db}: _bulk_get multipart", os.path.join(self.work, "fresh.cblite2"),
                           documents)
        status, out, err = suite.pipeline(
            text.replace(" --blobs fresh.cblite2", " --inline").replace(" > docs.ndjson", ""), db,
            self.work, documented=False)
        inline = [json.loads(line) for line in out.decode().splitlines() if line]
        status_json, json_out = suite.request(
            "POST", f"/{db}/_bulk_get?attachments=true&att_encoding_info=true", body.encode(),
            {"Content-Type": "application/json", "Accept": "application/json"})
        as_json = [r["docs"][0]["ok"] for r in json.loads(json_out)["results"]
                   if "ok" in r["docs"][0]]
        status_pull, pulled_json, _ = suite.run(
            ["--pull"], stdin=b"".join(json.dumps(d).encode() + b"\n" for d in as_json))
        expected = [json.loads(line) for line in pulled_json.decode().splitlines() if line]

        def without_data_length(document):
            document = json.loads(json.dumps(document))
            for entry in document.get("_attachments", {}).values():
                if "data" in entry:
                    entry.pop("length", None)
            return document

        suite.check(status == 0 and status_json == 200 and status_pull == 0
                    and list(map(without_data_length, inline))
                    == list(map(without_data_length, expected)),
                    f"{db}: _bulk_get multipart --inline gives what the JSON answer gives",
                    f"status {status}: {err[:300]}")

        # A single GET per document: with the bytes (JSON asked for), and as a stub.
        self.fresh("fresh.cblite2")
        pulled, stubs, quiet = [], [], True
        for identifier in ids:
            text = ("curl -sS -u admin:password -H 'Accept: application/json'"
                    " 'http://localhost:5984/app/note::1?attachments=true'"
                    " | cbl-attachments --pull --blobs fresh.cblite2")
            status, out, err = suite.pipeline(
                text, db, self.work, documented=(identifier == ids[0]),
                substitutions=(("/note::1?", "/" + urllib.parse.quote(identifier, safe="") + "?"),))
            quiet = quiet and status == 0 and err == ""
            pulled.append(json.loads(out))
            status, out, err = suite.pipeline(
                "curl -sS -u admin:password 'http://localhost:5984/app/DOC' | cbl-attachments --pull",
                db, self.work, documented=False,
                substitutions=(("/DOC'", "/" + urllib.parse.quote(identifier, safe="") + "'"),))
            quiet = quiet and status == 0 and err == ""
            stubs.append(json.loads(out))
        suite.check(quiet, f"{db}: single GETs pulled: exit 0, no message")
        self.compare(f"{db}: single GETs with the bytes", documents, pulled, keep_rev)
        self.compare(f"{db}: single GETs, stubs", documents, stubs, keep_rev)
        self.compare_store(f"{db}: single GETs", os.path.join(self.work, "fresh.cblite2"), documents)

    def second_revision(self):
        """A document's next revision with stubs: CouchDB takes a stub only when its revpos is
        the one it stored for the attachment, which --naming litecore's (the document's
        generation) is for the revision after the one that brought the attachment."""
        suite = self.suite
        db = "second-revision"
        self.load(db, "cbl-attachments --push --naming litecore --blobs app.cblite2 --bulk-docs 100"
                      " app-dump.ndjson" + LOAD_PIPE)
        # Revision 2: the documents as CouchDB has them, pulled, edited, pushed as stubs.
        text = ("curl -sS -u admin:password 'http://localhost:5984/app/_all_docs?include_docs=true'"
                " | cbl-attachments --pull --format all-docs > current.json")
        status, _, err = suite.pipeline(text, db, self.work)
        # The application's edit, on the envelope as it is.
        with open(os.path.join(self.work, "current.json")) as file:
            current = json.load(file)
        for row in current["rows"]:
            row["doc"]["edited"] = 2
        with open(os.path.join(self.work, "current.json"), "w") as file:
            json.dump(current, file, ensure_ascii=False)
        text = ("cbl-attachments --push --naming litecore --format all-docs --bulk-docs 100"
                " current.json" + LOAD_PIPE)
        status, out, err = suite.pipeline(text, db, self.work)
        rows = bulk_rows(out)
        suite.check(status == 0 and err == "" and rows and all(row.get("ok") for row in rows),
                    f"{db}: the second revision, its attachments as stubs, is taken",
                    f"{rows[:3]} {err[:300]}")
        expected = [dict(without_rev(d), edited=2) for d in self.plain]
        self.fresh("fresh.cblite2")
        status, out, err = suite.pipeline(
            "curl -sS -u admin:password 'http://localhost:5984/app/_all_docs?include_docs=true"
            "&attachments=true' | cbl-attachments --pull --blobs fresh.cblite2 --format all-docs"
            " > docs.json", db, self.work)
        with open(os.path.join(self.work, "docs.json")) as file:
            back = [row["doc"] for row in json.load(file)["rows"]]
        suite.check(status == 0 and err == "", f"{db}: revision 2 pulled with its bytes, no message",
                    err[:300])
        self.compare(f"{db}: revision 2", expected, back, keep_rev=False)
        self.compare_store(f"{db}: revision 2", os.path.join(self.work, "fresh.cblite2"), expected)
        # Revision 3 with stubs: revpos 2 is not the stored 1, and CouchDB answers 412 (the
        # documented difference); with the bytes it is taken.
        for document in back:
            document["edited"] = 3
        with open(os.path.join(self.work, "current.json"), "w") as file:
            json.dump({"rows": [{"doc": d} for d in back]}, file, ensure_ascii=False)
        # One document a body: CouchDB refuses a whole _bulk_docs body for one bad stub.
        status, out, err = suite.pipeline(
            text, db, self.work, documented=False, substitutions=(("--bulk-docs 100", "--bulk-docs 1"),))
        rows = bulk_rows(out)
        refused = {re.search(r"stub in (\S+) for", row.get("reason", "")).group(1)
                   for row in rows if row.get("error") == "missing_stub"}
        taken = {row["id"] for row in rows if row.get("ok")}
        with_blobs = {d["_id"] for d in self.plain if expected_files([d], self.bodies)}
        suite.check(refused == with_blobs and taken == {d["_id"] for d in self.plain} - with_blobs,
                    f"{db}: revision 3 as stubs: CouchDB refuses exactly the documents with"
                    " attachments (412 missing_stub: revpos 2 is not the stored 1)", f"{rows[:4]}")
        with open(os.path.join(self.work, "current.json"), "w") as file:
            json.dump({"rows": [{"doc": d} for d in back if d["_id"] in refused]}, file,
                      ensure_ascii=False)
        text = ("cbl-attachments --push --blobs app.cblite2 --format all-docs --bulk-docs 100"
                " current.json" + LOAD_PIPE)
        status, out, err = suite.pipeline(text, db, self.work)
        rows = bulk_rows(out)
        suite.check(status == 0 and err == "" and rows and all(row.get("ok") for row in rows),
                    f"{db}: revision 3 with its bytes (--blobs) is taken", f"{rows[:3]} {err[:300]}")

    def couchdb_made_attachments(self):
        """Attachments CouchDB made itself (PUT /db/doc/att of raw bytes) through
        --upgrade --blobs: every body becomes a blob named by its SHA-1, in the store."""
        suite = self.suite
        db = "couchdb-made"
        suite.create_database(db)
        made = {}  # document -> {attachment name: (bytes, type)}
        plan = {
            "legacy::text": [("hello.txt", "text", "text/plain"),
                             ("data.json", "json", "application/json")],
            "legacy::binary": [("photo.png", "png", "image/png"),
                               ("empty.bin", "empty-binary", "application/octet-stream")],
            "legacy::big": [("report.txt", "big-text", "text/plain"),
                            ("blob.bin", "big-binary", "application/octet-stream")],
            "legacy::mixed": [("a.xml", "xml", "application/xml"), ("b.js", "js",
                                                                  "application/javascript"),
                              ("c.txt", "empty-text", "text/plain")],
        }
        for identifier, attachments in plan.items():
            status, body = suite.request("PUT", f"/{db}/{identifier}",
                                         json.dumps({"kind": identifier}).encode(),
                                         {"Content-Type": "application/json"})
            revision = json.loads(body)["rev"]
            made[identifier] = {}
            for name, body_name, content_type in attachments:
                data = self.bodies[body_name][0]
                status, body = suite.request(
                    "PUT", f"/{db}/{urllib.parse.quote(identifier)}/{name}?rev={revision}", data,
                    {"Content-Type": content_type})
                revision = json.loads(body)["rev"]
                made[identifier][name] = (data, content_type)
        self.fresh("upgraded.cblite2")
        text = ("curl -sS -u admin:password 'http://localhost:5984/app/_all_docs?include_docs=true"
                "&attachments=true' | cbl-attachments --upgrade --blobs upgraded.cblite2 --format"
                " all-docs > upgraded.json")
        status, _, err = suite.pipeline(text, db, self.work)
        suite.check(status == 0 and err == "", f"{db}: --upgrade --blobs: exit 0, no message",
                    f"status {status}: {err[:500]}")
        with open(os.path.join(self.work, "upgraded.json")) as file:
            upgraded = {row["id"]: row["doc"] for row in json.load(file)["rows"]}
        good = True
        for identifier, attachments in made.items():
            document = upgraded[identifier]
            blobs = document.get("attachments", {})
            for name, (data, content_type) in attachments.items():
                value = blobs.get(name, {})
                good = good and value == {"@type": "blob", "content_type": content_type,
                                          "digest": digest(data), "length": len(data)}
            good = good and "_attachments" not in document and set(blobs) == set(attachments)
        suite.check(good, f"{db}: each attachment is a blob with the SHA-1 and length of its bytes")
        expected = {blob_file_name(hashlib.sha1(data).digest()): data
                    for attachments in made.values() for data, _ in attachments.values()}
        suite.check(store_files(os.path.join(self.work, "upgraded.cblite2")) == expected,
                    f"{db}: the store holds exactly their bytes")
        # Without a store the bytes stay inline in the blobs.
        status, out, err = suite.pipeline(
            "curl -sS -u admin:password 'http://localhost:5984/app/_all_docs?include_docs=true"
            "&attachments=true' | cbl-attachments --upgrade --format all-docs", db, self.work,
            documented=False)
        inline = {row["id"]: row["doc"] for row in json.loads(out)["rows"]}
        suite.check(
            status == 0 and err == "" and all(
                base64.b64decode(inline[i]["attachments"][n]["data"]) == data
                and inline[i]["attachments"][n]["digest"] == digest(data)
                for i, attachments in made.items() for n, (data, _) in attachments.items()),
            f"{db}: --upgrade without a store keeps the bytes inline, checked", err[:300])
        # And back into CouchDB: pushed with the bytes into a new database, served byte for byte.

        target = "couchdb-made-again"
        self.load(target, "cbl-attachments --push --blobs upgraded.cblite2 --format all-docs"
                          " --bulk-docs 100 --new-edits false upgraded.json" + LOAD_PIPE)
        served = True
        for identifier, attachments in made.items():
            for name, (data, _) in attachments.items():
                status, body = suite.request(
                    "GET", f"/{target}/{urllib.parse.quote(identifier)}/"
                           f"{urllib.parse.quote('$.attachments.' + name.replace('.', chr(92) + '.'), safe='')}")
                served = served and status == 200 and body == data
        suite.check(served, f"{target}: every upgraded blob pushed back is served byte for byte")

    def refusals(self):
        """What CouchDB refuses, against what --check predicts: 400 for an entry with neither
        data nor stub, 412 for a stub in a document without _rev, 413 over max_document_size
        (measured as CouchDB measures it)."""
        suite = self.suite
        db = "refusals"
        suite.create_database(db)
        png = self.bodies["png"][0]
        pushed_plain = {"_id": "plain-push", "p": {"@type": "blob", "digest": digest(png),
                                                   "length": len(png)},
                        "_attachments": {"$.p": {"digest": digest(png), "length": len(png)}}}
        stub_new = {"_id": "stub-new", "_attachments": {"blob_/p": {
            "digest": digest(png), "length": len(png), "stub": True, "revpos": 1}},
            "p": {"@type": "blob", "digest": digest(png), "length": len(png)}}
        fine = {"_id": "fine", "_attachments": {"a.png": {
            "content_type": "image/png", "data": base64.b64encode(png).decode()}}}

        def sized(identifier, size):
            # Escapes count as their decoded bytes, floats by magnitude, _id and _attachments
            # not at all; the padding makes the body exactly `size` as CouchDB measures it.
            document = {"_id": identifier, "e": "\u00e9/\n", "f": [1.5, 3.14159, 1e-5, 2e10],
                        "n": -12345, "pad": "",
                        "_attachments": {"a.txt": {"content_type": "text/plain",
                                                   "data": base64.b64encode(b"hi").decode()}}}
            document["pad"] = "x" * (size - couchdb_body_size(document))
            assert couchdb_body_size(document) == size
            text = json.dumps(document, ensure_ascii=True, separators=(",", ":"))
            # Written with an escaped slash, which CouchDB counts as one byte.
            return text.replace("\\u00e9/", "\\u00e9\\/")

        cases = [
            ("plain-push", json.dumps(pushed_plain, separators=(",", ":")), 400,
             "entry-without-data-or-stub"),
            ("stub-new", json.dumps(stub_new, separators=(",", ":")), 412, "stub-without-revision"),
            ("at-limit", sized("at-limit", 8_000_000), 201, None),
            ("over-limit", sized("over-limit", 8_000_001), 413, "couchdb-document-too-large"),
            ("fine", json.dumps(fine, separators=(",", ":")), 201, None),
        ]
        couchdb_problems = {"entry-without-data-or-stub", "stub-without-revision",
                            "couchdb-document-too-large"}
        for identifier, text, expected_status, expected_problem in cases:
            status, out, _ = suite.run(["--check"], stdin=text.encode() + b"\n")
            findings = [json.loads(line) for line in out.decode().splitlines()]
            predicted = {f["problem"] for f in findings} & couchdb_problems
            served, body = suite.request("PUT", f"/{db}/{identifier}", text.encode(),
                                         {"Content-Type": "application/json"})
            suite.check(
                served == expected_status
                and predicted == ({expected_problem} if expected_problem else set()),
                f"{db}: {identifier}: CouchDB answers {expected_status}"
                f" and --check predicts {expected_problem or 'nothing it refuses'}",
                f"CouchDB {served} {body[:120]}; --check {sorted(predicted)}")

    def run(self):
        # Several bodies: three documents each.
        self.load("push-jsonpath", "cbl-attachments --push --blobs app.cblite2 --bulk-docs 100"
                                   " app-dump.ndjson" + LOAD_PIPE,
                  (("--bulk-docs 100", "--bulk-docs 3"),))
        self.read_back("push-jsonpath", self.plain, keep_rev=False)
        self.load("push-litecore", "cbl-attachments --push --naming litecore --blobs app.cblite2"
                                   " --bulk-docs 100 app-dump.ndjson" + LOAD_PIPE,
                  (("--bulk-docs 100", "--bulk-docs 3"),))
        self.read_back("push-litecore", self.plain, keep_rev=False)
        # A dump whose documents carry their _rev, loaded keeping it.
        self.load("new-edits-false", "cbl-attachments --push --blobs app.cblite2 --bulk-docs 100"
                                     " --new-edits false app-dump.ndjson" + LOAD_PIPE,
                  (("app-dump.ndjson", "app-dump-revs.ndjson"),))
        self.read_back("new-edits-false", self.revised, keep_rev=True)
        self.second_revision()
        self.couchdb_made_attachments()
        self.refusals()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", required=True)
    parser.add_argument("--url", required=True)
    parser.add_argument("--label", default="couchdb")
    arguments = parser.parse_args()
    work = tempfile.mkdtemp(prefix="cbl-interop-")
    try:
        suite = Suite(arguments.binary, arguments.url, arguments.label, work)
        CouchDBInterop(suite).run()
        print(f"# [{arguments.label}] {suite.checks} checks, {suite.failures} failed")
        return 1 if suite.failures else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
