import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

// SPEC.md, "Attachment bodies", on the real executable: the store checked before any input is
// read, failures of the store that end the run (status 2, nothing half-written), and the
// --check and --list rows of --blobs. Digests are computed with coreutils' sha1sum.

/// `sha1-` and the base64 of the SHA-1 of `bytes`, and the file name Couchbase Lite gives it.
private func digest(of bytes: [UInt8]) throws -> (digest: String, file: String) {
  let scratch = try Scratch()
  try scratch.write("body", bytes)
  let result = try CLI.shell(
    "sha1sum body | cut -c1-40 | xxd -r -p | base64", in: scratch.directory)
  let base64 = result.out.trimmingCharacters(in: .whitespacesAndNewlines)
  return ("sha1-" + base64, base64.replacingOccurrences(of: "/", with: "_") + ".blob")
}

@Suite("CLI: --blobs (attachment bodies)")
struct BlobStoreCLITests {
  let hello = Array("hello".utf8)

  @Test("a store that does not exist or is not a directory: status 2 before any input is read")
  func storeChecked() throws {
    let scratch = try Scratch()
    try scratch.write("file", "x")
    try scratch.write("in.json", "{\"_id\":\"a\"}\n")
    expectRun(
      try CLI.run(["--push", "--blobs", "nothere", "in.json"], in: scratch.directory),
      stdout: "",
      stderr:
        "cbl-attachments: nothere: error: cannot use as a blob store: No such file or directory\n",
      status: 2)
    expectRun(
      try CLI.run(["--check", "--blobs=file", "in.json"], in: scratch.directory), stdout: "",
      stderr: "cbl-attachments: file: error: cannot use as a blob store: Not a directory\n",
      status: 2)
    // Pull may make the last level, not more.
    expectRun(
      try CLI.run(["--pull", "--blobs", "a/b", "in.json"], in: scratch.directory), stdout: "",
      stderr:
        "cbl-attachments: a/b: error: cannot use as a blob store: No such file or directory\n",
      status: 2)
    let made = try CLI.run(["--pull", "--blobs", "new", "in.json"], in: scratch.directory)
    expectRun(made, stdout: "{\"_id\":\"a\"}\n", stderr: "", status: 0)
    var isDirectory: ObjCBool = false
    #expect(
      FileManager.default.fileExists(atPath: scratch.url("new").path, isDirectory: &isDirectory)
        && isDirectory.boolValue)
    // A new `.cblite2` database: the folder and its Attachments store; push never makes one.
    let database = try CLI.run(
      ["--pull", "--blobs", "fresh.cblite2", "in.json"], in: scratch.directory)
    expectRun(database, stdout: "{\"_id\":\"a\"}\n", stderr: "", status: 0)
    #expect(
      FileManager.default.fileExists(
        atPath: scratch.url("fresh.cblite2/Attachments").path, isDirectory: &isDirectory)
        && isDirectory.boolValue)
    // Upgrade stores bodies too: it makes a new database's store as pull does.
    let upgraded = try CLI.run(
      ["--upgrade", "--blobs", "upgraded.cblite2", "in.json"], in: scratch.directory)
    expectRun(upgraded, stdout: "{\"_id\":\"a\"}\n", stderr: "", status: 0)
    #expect(
      FileManager.default.fileExists(
        atPath: scratch.url("upgraded.cblite2/Attachments").path, isDirectory: &isDirectory)
        && isDirectory.boolValue)
    expectRun(
      try CLI.run(["--push", "--blobs", "other.cblite2", "in.json"], in: scratch.directory),
      stdout: "",
      stderr:
        "cbl-attachments: other.cblite2/Attachments: error: cannot use as a blob store: No such file or directory\n",
      status: 2)
    expectRun(
      try CLI.run(["--pull", "--blobs", "a/b.cblite2", "in.json"], in: scratch.directory),
      stdout: "",
      stderr:
        "cbl-attachments: a/b.cblite2/Attachments: error: cannot use as a blob store: No such file or directory\n",
      status: 2)
  }

  @Test("--blobs naming a database folder without .cblite2: the store inside is named")
  func databaseFolderNamed() throws {
    let scratch = try Scratch()
    try FileManager.default.createDirectory(
      at: scratch.url("app/Attachments"), withIntermediateDirectories: true)
    try scratch.write("in.json", "{\"_id\":\"a\"}\n")
    for mode in ["--push", "--pull", "--check"] {
      expectRun(
        try CLI.run([mode, "--blobs", "app", "in.json"], in: scratch.directory), stdout: "",
        stderr: "cbl-attachments: app: error: cannot use as a blob store: it holds an Attachments"
          + " folder and no .blob file, as a Couchbase Lite database folder does; its store is"
          + " app/Attachments (--blobs app/Attachments)\n", status: 2)
    }
    expectRun(
      try CLI.run(["--push", "--blobs", "app/Attachments", "in.json"], in: scratch.directory),
      stdout: "{\"_id\":\"a\"}\n", stderr: "", status: 0)
    // A store with blobs of its own may hold any folder.
    try scratch.write("app/x.blob", "")
    expectRun(
      try CLI.run(["--push", "--blobs", "app", "in.json"], in: scratch.directory),
      stdout: "{\"_id\":\"a\"}\n", stderr: "", status: 0)
    // The folder of one database: the database's store is named.
    try FileManager.default.createDirectory(
      at: scratch.url("apps/main.cblite2/Attachments"), withIntermediateDirectories: true)
    expectRun(
      try CLI.run(["--push", "--blobs", "apps", "in.json"], in: scratch.directory), stdout: "",
      stderr: "cbl-attachments: apps: error: cannot use as a blob store: it holds a Couchbase Lite"
        + " database (main.cblite2) and no .blob file; its store is apps/main.cblite2 (--blobs"
        + " apps/main.cblite2)\n", status: 2)
  }

  @Test(
    "pull --update-blobs --blobs: an entry named for a blob whose sha1- digest is not one keeps its bytes"
  )
  func updateBlobsWithAnUncheckableDigest() throws {
    let (sha1, _) = try digest(of: hello)
    let scratch = try Scratch()
    try FileManager.default.createDirectory(
      at: scratch.url("store"), withIntermediateDirectories: false)
    let document =
      #"{"_id":"x","b":{"@type":"blob","digest":"\#(sha1)"},"_attachments":{"blob_/b":{"digest":"sha1-abc","data":"aGVsbG8="}}}"#
    try scratch.write("in.json", "{\"_id\":\"ok1\"}\n" + document + "\n{\"_id\":\"ok2\"}\n")
    let result = try CLI.run(
      ["--pull", "--update-blobs", "--blobs", "store", "in.json"], in: scratch.directory)
    expectRun(
      result, stdout: "{\"_id\":\"ok1\"}\n" + document + "\n{\"_id\":\"ok2\"}\n",
      stderr:
        "cbl-attachments: in.json:2:94: warning: document \"x\": _attachments entry \"blob_/b\" carries the attachment's bytes (\"data\") and is kept: removing it would lose the only copy of them\n",
      status: 0)
  }

  @Test(
    "upgrade --blobs: a store file of another size keeps the bytes inline, with a warning (strict: rejected)"
  )
  func upgradeKeepsBytesTheStoreDisagreesWith() throws {
    let (sha1, file) = try digest(of: hello)
    let scratch = try Scratch()
    try FileManager.default.createDirectory(
      at: scratch.url("store"), withIntermediateDirectories: false)
    try scratch.write("store/" + file, "xx")
    let document = #"{"_id":"x","_attachments":{"p":{"digest":"\#(sha1)","data":"aGVsbG8="}}}"#
    try scratch.write("in.json", document + "\n")
    let warning =
      "in.json:1:28: warning: document \"x\": _attachments entry \"p\" (\(sha1)): store/\(file) is already in the blob store with 2 bytes, not 5; it is kept as it is\n"
    expectRun(
      try CLI.run(["--upgrade", "--blobs", "store", "in.json"], in: scratch.directory),
      stdout:
        #"{"_id":"x","attachments":{"p":{"@type":"blob","digest":"\#(sha1)","data":"aGVsbG8=","length":5}}}"#
        + "\n",
      stderr: "cbl-attachments: " + warning, status: 0)
    expectRun(
      try CLI.run(["--upgrade", "--blobs", "store", "--strict", "in.json"], in: scratch.directory),
      stdout: "",
      stderr: "cbl-attachments: " + warning.replacingOccurrences(of: "warning:", with: "error:"),
      status: 1)
  }

  @Test(
    "pull --blobs: an md5- entry whose bytes a blob holds under their SHA-1 is stored and removed")
  func pullMatchesMD5EntriesBySHA1() throws {
    let (sha1, file) = try digest(of: hello)
    let scratch = try Scratch()
    try FileManager.default.createDirectory(
      at: scratch.url("store"), withIntermediateDirectories: false)
    let blob = #""photo":{"@type":"blob","digest":"\#(sha1)","length":5}"#
    let document =
      "{" + blob
      + #","_attachments":{"hello.txt":{"digest":"md5-XUFAKrxLKna5cZ2REBfFkg==","data":"aGVsbG8="}}}"#
    try scratch.write("in.json", document + "\n")
    // Without the store, the md5 digest matches no blob: the entry stays, untouched.
    expectRun(
      try CLI.run(["--pull", "in.json"], in: scratch.directory), stdout: document + "\n",
      stderr: "",
      status: 0)
    expectRun(
      try CLI.run(["--pull", "--blobs", "store", "in.json"], in: scratch.directory),
      stdout: "{" + blob + "}\n", stderr: "", status: 0)
    #expect(try Array(Data(contentsOf: scratch.url("store/" + file))) == hello)
  }

  /// Pulls a document whose entry carries the bytes of `hello` into a store where something
  /// (`occupy` makes it) already has the body's name: the entry must stay, with `warning`.
  func expectPullKeepsEntry(
    occupy: (_ path: String) throws -> Void, warning: (_ file: String) -> String,
    sourceLocation: SourceLocation = #_sourceLocation
  ) throws -> (scratch: Scratch, file: String) {
    let (sha1, file) = try digest(of: hello)
    let scratch = try Scratch()
    try FileManager.default.createDirectory(
      at: scratch.url("store"), withIntermediateDirectories: false)
    try occupy(scratch.url("store/" + file).path)
    let document =
      #"{"_id":"x","b":{"@type":"blob","digest":"\#(sha1)"},"_attachments":{"$.b":{"digest":"\#(sha1)","data":"aGVsbG8="}}}"#
    try scratch.write("in.json", document + "\n")
    let result = try CLI.run(["--pull", "--blobs", "store", "in.json"], in: scratch.directory)
    expectRun(
      result, stdout: document + "\n",
      stderr:
        "cbl-attachments: in.json:1:94: warning: document \"x\": _attachments entry \"$.b\" (\(sha1)): store/\(file) \(warning(file))\n",
      status: 0, sourceLocation: sourceLocation)
    return (scratch, file)
  }

  @Test("pull --blobs: a store file of another size keeps the entry and its bytes, with a warning")
  func pullKeepsBytesTheStoreDisagreesWith() throws {
    let (scratch, file) = try expectPullKeepsEntry(
      occupy: { path in
        #expect(FileManager.default.createFile(atPath: path, contents: Data("xx".utf8)))
      },
      warning: { _ in "is already in the blob store with 2 bytes, not 5; it is kept as it is" })
    #expect(try String(contentsOf: scratch.url("store/" + file), encoding: .utf8) == "xx")
  }

  @Test("pull --blobs: a store name that is no regular file (a link to nothing) keeps the entry")
  func pullKeepsEntryForALinkToNothing() throws {
    let (scratch, file) = try expectPullKeepsEntry(
      occupy: { path in
        try FileManager.default.createSymbolicLink(
          atPath: path, withDestinationPath: "/nonexistent/file")
      },
      warning: { _ in
        "is already in the blob store and is not a regular file; it is kept as it is"
      })
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: scratch.url("store").path) == [file])
  }

  @Test(
    "upgrade --blobs removes what pull --blobs removes first: a mirror with bytes is stored, not made a second blob"
  )
  func upgradeStoresMirrors() throws {
    let (sha1, file) = try digest(of: hello)
    let scratch = try Scratch()
    try FileManager.default.createDirectory(
      at: scratch.url("store"), withIntermediateDirectories: false)
    let blob = #""photo":{"@type":"blob","digest":"\#(sha1)","length":5}"#
    try scratch.write(
      "in.json",
      "{" + blob + #","_attachments":{"p":{"digest":"\#(sha1)","data":"aGVsbG8="}}}"# + "\n")
    expectRun(
      try CLI.run(["--upgrade", "--blobs", "store", "in.json"], in: scratch.directory),
      stdout: "{" + blob + "}\n", stderr: "", status: 0)
    #expect(FileManager.default.fileExists(atPath: scratch.url("store/" + file).path))
  }

  @Test("--missing-blobs: stub or error, with --push --blobs only")
  func missingBlobsUsage() throws {
    let input = Array("{}".utf8)
    expectRun(
      try CLI.run(["--push", "--missing-blobs", "stub"], stdin: input), stdout: "",
      stderr: usageError("--missing-blobs applies to --push with --blobs only"), status: 2)
    expectRun(
      try CLI.run(["--push", "--blobs", "/tmp", "--missing-blobs", "maybe"], stdin: input),
      stdout: "", stderr: usageError("--missing-blobs must be error or stub, not 'maybe'"),
      status: 2)
  }

  @Test("a store that cannot be written: the document is rejected and the run ends, status 2")
  func storeNotWritable() throws {
    let (sha1, _) = try digest(of: hello)
    let document =
      #"{"_id":"a","b":{"@type":"blob","digest":"\#(sha1)"},"_attachments":{"$.b":{"digest":"\#(sha1)","data":"aGVsbG8="}}}"#
    // /proc is a directory that nobody, root included, can make a file in.
    let result = try CLI.run(
      ["--pull", "--blobs", "/proc", "-k"], stdin: Array((document + "\n{\"_id\":\"b\"}\n").utf8))
    expectRun(
      result, stdout: "",
      stderr:
        "cbl-attachments: <stdin>:1:94: error: document \"a\": _attachments entry \"$.b\" (\(sha1)): /proc: No such file or directory (skipped 1:1 to 1:\(document.count))\n"
        + "cbl-attachments: /proc: error: cannot store in the blob store: No such file or directory; stopping\n",
      status: 2)
  }

  @Test("a full disk while a body is stored: rejected, status 2, no temporary file left")
  func fullDisk() throws {
    let scratch = try Scratch()
    var random = SplitMix64(seed: 9)
    let body = (0..<200_000).map { _ in UInt8(truncatingIfNeeded: random.next()) }
    let (sha1, _) = try digest(of: body)
    let document =
      #"{"_id":"big","b":{"@type":"blob","digest":"\#(sha1)"},"_attachments":{"$.b":{"digest":"\#(sha1)","data":"\#(Data(body).base64EncodedString())"}}}"#
    try scratch.write("in.json", document + "\n")
    try FileManager.default.createDirectory(
      at: scratch.url("store"), withIntermediateDirectories: false)
    // A file-size limit of 40 KiB stands in for a full disk: writes past it fail (EFBIG).
    let result = try CLI.shell(
      "trap '' XFSZ; ulimit -f 80; exec \"$EXE\" --pull --blobs store in.json",
      in: scratch.directory)
    expectRun(
      result, stdout: "",
      stderr:
        "cbl-attachments: in.json:1:96: error: document \"big\": _attachments entry \"$.b\" (\(sha1)): store: File too large\n"
        + "cbl-attachments: store: error: cannot store in the blob store: File too large; stopping\n",
      status: 2)
    #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.url("store").path) == [])
  }

  @Test("a read error other than a missing file rejects the document and ends the run")
  func readError() throws {
    let scratch = try Scratch()
    let (sha1, file) = try digest(of: hello)
    // The blob's file is a directory: it exists and cannot be read.
    try FileManager.default.createDirectory(
      at: scratch.url("store").appendingPathComponent(file), withIntermediateDirectories: true)
    let document = #"{"_id":"r","b":{"@type":"blob","digest":"\#(sha1)"}}"#
    expectRun(
      try CLI.run(
        ["--push", "--blobs", "store", "-k"], stdin: Array((document + "\n{}\n").utf8),
        in: scratch.directory),
      stdout: "",
      stderr:
        "cbl-attachments: <stdin>:1:16: error: document \"r\": blob at $.b (\(sha1)): store/\(file): Is a directory (skipped 1:1 to 1:\(document.count))\n"
        + "cbl-attachments: store/\(file): error: cannot read from the blob store: Is a directory; stopping\n",
      status: 2)
  }

  @Test("--check --blobs: blob-missing, blob-corrupt, length-mismatch; --list --blobs: stored")
  func checkAndList() throws {
    let scratch = try Scratch()
    let (good, goodFile) = try digest(of: hello)
    let (other, otherFile) = try digest(of: Array("other".utf8))
    let (missing, missingFile) = try digest(of: Array("missing".utf8))
    try FileManager.default.createDirectory(
      at: scratch.url("db.cblite2/Attachments"), withIntermediateDirectories: true)
    try scratch.write("db.cblite2/Attachments/" + goodFile, hello)
    // A file whose bytes are not its name's.
    try scratch.write("db.cblite2/Attachments/" + otherFile, Array("tampered".utf8))
    let documents = [
      #"{"_id":"ok","a":{"@type":"blob","digest":"\#(good)","length":5}}"#,
      #"{"_id":"len","a":{"@type":"blob","digest":"\#(good)","length":6}}"#,
      #"{"_id":"gone","a":{"@type":"blob","digest":"\#(missing)"}}"#,
      #"{"_id":"bad","_rev":"1-a","_attachments":{"x.txt":{"digest":"\#(other)","length":5,"stub":true,"revpos":1}}}"#,
      #"{"_id":"md5","a":{"@type":"blob","digest":"md5-XUFAKrxLKna5cZ2REBfFkg=="}}"#,
    ]
    try scratch.write("in.ndjson", documents.joined(separator: "\n") + "\n")
    let check = try CLI.run(
      ["--check", "--blobs", "db.cblite2", "in.ndjson"], in: scratch.directory)
    let store = "db.cblite2/Attachments"
    expectRun(
      check,
      stdout: [
        #"{"id":"len","line":2,"problem":"length-mismatch","pointer":"/a","detail":"the blob store's file \#(store)/\#(goodFile) is 5 bytes; length is 6"}"#,
        #"{"id":"gone","line":3,"problem":"blob-missing","pointer":"/a","detail":"no file \#(store)/\#(missingFile) in the blob store for \#(missing)"}"#,
        #"{"id":"bad","line":4,"problem":"blob-corrupt","pointer":"/_attachments/x.txt","detail":"the blob store's file \#(store)/\#(otherFile) holds other bytes (\#(try digest(of: Array("tampered".utf8)).digest)), not \#(other)"}"#,
        // No file can be named for an md5 digest; Couchbase Lite would not take the blob either.
        #"{"id":"md5","line":5,"problem":"md5-digest","pointer":"/a","detail":"blob at /a has an md5- digest: Couchbase Lite downloads only sha1- attachments, and names a blob by the SHA-1 of its bytes"}"#,
      ].joined(separator: "\n") + "\n",
      stderr: "cbl-attachments: checked 5 documents: 4 findings in 4 documents\n", status: 1)
    let list = try CLI.run(
      ["--list", "--blobs", "db.cblite2", "in.ndjson"], in: scratch.directory)
    #expect(list.status == 0, "\(list)")
    let stored = list.out.split(separator: "\n").map {
      String($0).components(separatedBy: "\"stored\":").last ?? ""
    }
    #expect(stored == ["true}", "true}", "false}", "true}", "null}"], "\(list.out)")
  }
}
