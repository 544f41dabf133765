import LegacyAttachments

/// Every option, in the order `--help` lists them: each with its help, its man page item
/// (OPTIONS; the modes are in MODES), what reading it does, and what it requires of the others.
let optionTable: [OptionSpec] = [
  OptionSpec(

    "--push", mode: true, "add an \"_attachments\" entry for every blob, named by its path",
    "($.photos.thumbnail); entries an earlier push made are replaced",
    read: { parsed, spelling, value throws(UsageError) in
      try parsed.setMode(.push, spelling)
    }),
  OptionSpec(

    "--pull", mode: true, "remove the \"_attachments\" entries whose digest matches a blob, and",
    "\"_attachments\" itself when nothing is left",
    read: { parsed, spelling, value throws(UsageError) in
      try parsed.setMode(.pull, spelling)
    }),
  OptionSpec(

    "--upgrade", mode: true, "move legacy attachments (Couchbase Lite 1.x, CouchDB, PouchDB)",
    "into blobs under --into PROPERTY (default attachments); md5-",
    "digests re-hashed to SHA-1 when the bytes are inline",
    read: { parsed, spelling, value throws(UsageError) in
      try parsed.setMode(.upgrade, spelling)
    }),
  OptionSpec(

    "--list", mode: true, "one NDJSON row per attachment (blob or legacy): id, line, kind, name,",
    "pointer, digest, length, content_type",
    read: { parsed, spelling, value throws(UsageError) in
      try parsed.setMode(.list, spelling)
    }),
  OptionSpec(

    "--check", mode: true, "one NDJSON finding per problem Sync Gateway or Couchbase Lite",
    "would refuse or a conversion would lose; a summary on standard error",
    read: { parsed, spelling, value throws(UsageError) in
      try parsed.setMode(.check, spelling)
    }),
  OptionSpec(

    "--naming", value: "NAMING", "jsonpath ($.a.b[2], the default) or litecore (blob_/a/b/2, with",
    "\"stub\":true and \"revpos\", as Couchbase Lite 2.1+ sends)",
    manual: #"""
      .BI \-\-naming " naming"
      How
      .B \-\-push
      names the entries it makes:
      .B jsonpath
      (the default) or
      .BR litecore ;
      see
      .BR "NAMING RULES" .
      With
      .BR \-\-check ,
      it says which push
      .B metadata\-too\-large
      and
      .B document\-too\-large
      measure the output of (as
      .B \-\-revpos
      and
      .B \-\-blobs
      do); other modes do not use it, and refuse it.
      """#,
    read: { parsed, spelling, value throws(UsageError) in
      guard let naming = EntryNaming(rawValue: value!) else {
        throw UsageError(message: "--naming must be jsonpath or litecore, not '\(value!)'")
      }
      parsed.naming = naming
    },
    finish: { parsed throws(UsageError) in
      guard parsed.mode == .push || parsed.mode == .check else {
        throw UsageError(message: "--naming and --revpos apply to --push (and --check) only")
      }
      parsed.invocation.options.naming = parsed.naming!
    }),
  OptionSpec(

    "--revpos", value: "N", "the revpos of litecore entries (default: the _rev generation, or 1)",
    manual: #"""
      .BI \-\-revpos " n"
      The
      .B revpos
      of the entries made with
      .BR "\-\-naming litecore" ,
      a whole number from 1.
      By default it is the generation of the document's
      .B _rev
      .RB ( \(dq3\-abc...\(dq
      gives 3), or 1 when the document has none.
      Giving
      .B \-\-revpos
      without
      .B "\-\-naming litecore"
      is a usage error.
      """#,
    read: { parsed, spelling, value throws(UsageError) in
      guard let number = Int(value!), number >= 1 else {
        throw UsageError(message: "--revpos must be a positive whole number, not '\(value!)'")
      }
      parsed.invocation.options.revpos = number
    },
    finish: { parsed throws(UsageError) in
      guard parsed.mode == .push || parsed.mode == .check else {
        throw UsageError(message: "--naming and --revpos apply to --push (and --check) only")
      }
      guard parsed.invocation.options.naming == .litecore else {
        throw UsageError(message: "--revpos applies to --naming litecore only")
      }
    }),
  OptionSpec(

    "--format", value: "FORMAT", "lines (default: whitespace-separated documents, NDJSON), list",
    "(one JSON array of documents, as cbexport --format list writes),",
    "or a REST API body, converted in place: changes (.results[].doc),",
    "all-docs (.rows[].doc), bulk-docs (.docs[]), bulk-get",
    "(.results[].docs[].ok, CouchDB's JSON), or multipart (a MIME",
    "body: _bulk_get's multipart/mixed, a document's multipart/related)",
    manual: #"""
      .BI \-\-format " format"
      How documents are framed:
      .B lines
      (the default),
      .BR list ,
      or one of the REST API bodies
      .B changes
      (documents at
      .BR .results[].doc ),
      .B all\-docs
      .RB ( .rows[].doc ),
      .B bulk\-docs
      .RB ( .docs[] )
      and
      .B bulk\-get
      .RB ( .results[].docs[].ok ,
      CouchDB\(aqs JSON response);
      or
      .BR multipart :
      a MIME multipart body, as
      .B _bulk_get
      answers with
      .B "Accept: multipart/mixed"
      (CouchDB, and Sync Gateway always) and a document with
      .B ?attachments=true
      answers without
      .BR "Accept: application/json" ;
      see
      .BR "INPUT AND OUTPUT" .
      """#,
    read: { parsed, spelling, value throws(UsageError) in
      try parsed.readFormat(value!)
    }),
  OptionSpec(

    "--boundary", value: "B", "--format multipart: the body's boundary (default: its first line",
    "that starts with --)",
    manual: #"""
      .BI \-\-boundary " b"
      With
      .BR "\-\-format multipart" :
      the body\(aqs boundary, as its
      .B Content\-Type
      gives it (without the leading
      .BR \-\- ).
      By default it is taken from the body\(aqs first line that starts with
      .BR \-\- .
      """#,
    read: { parsed, spelling, value throws(UsageError) in
      let bytes = Array(value!.utf8)
      guard !bytes.isEmpty, bytes.count <= 200, !bytes.contains(where: { $0 < 0x20 || $0 > 0x7E })
      else {
        throw UsageError(
          message: "--boundary must be the boundary of the body's Content-Type (printable,"
            + " without the leading --), not '\(value!)'")
      }
      parsed.boundary = value
    },
    finish: { parsed throws(UsageError) in
      guard parsed.invocation.multipart != nil else {
        throw UsageError(message: "--boundary applies to --format multipart only")
      }
      parsed.invocation.multipart?.boundary = parsed.boundary
    }),
  OptionSpec(

    "--inline", "--format multipart: put each part's bytes back as \"data\" instead of",
    "storing them in --blobs DIR (push always does)",
    manual: #"""
      .B \-\-inline
      With
      .BR "\-\-format multipart" :
      put each attachment part\(aqs bytes back in its entry as
      .B data
      (base64) instead of storing them with
      .BR \-\-blobs ;
      the document is then the one the JSON form of the same request
      .RB ( ?attachments=true )
      gives.
      Push always does.
      """#,
    read: { parsed, spelling, value throws(UsageError) in
      parsed.inlineBytes = true
    },
    finish: { parsed throws(UsageError) in
      guard parsed.invocation.multipart != nil else {
        throw UsageError(message: "--inline applies to --format multipart only")
      }
      parsed.invocation.multipart?.inline = true
    }),
  OptionSpec(

    "--docs", value: "PATH", "where the documents are in each input value: a jq path of .NAME,",
    ".\"any key\" and [] steps (.doc for a continuous _changes feed)",
    manual: #"""
      .BI \-\-docs " path"
      Where the documents are inside each input value (with
      .BR "\-\-format list" ,
      inside each element): a path of jq steps
      .BI . name
      (letters, digits and underscores, not starting with a digit),
      .BI .\(dq string \(dq
      (any key, as a JSON string; keys compare decoded) and
      .B []
      (every element of an array), chained, or
      .B .
      for the value itself (the default).
      A continuous
      .B _changes
      feed is
      .BR "\-\-docs .doc" .
      Any other path is a usage error, and so is
      .B \-\-docs
      with a named envelope format.
      """#,
    read: { parsed, spelling, value throws(UsageError) in
      do throws(DocumentPathError) {
        parsed.invocation.documentPath = try DocumentPath(parsing: value!)
      } catch {
        throw UsageError(message: "--docs must be \(DocumentPathError.rule), not '\(error.path)'")
      }
    },
    finish: { parsed throws(UsageError) in
      try parsed.applyDocumentPath()
    }),
  OptionSpec(

    "--bulk-docs", value: "N", "write _bulk_docs request bodies of N documents, one per line",
    manual: #"""
      .BI \-\-bulk\-docs " n"
      Write the converted documents, whatever the input\(aqs framing, as
      .B _bulk_docs
      request bodies
      .BR {\(dqdocs\(dq:[ ... ]} ,
      .I n
      documents each (1 to 1000000; the last body may be shorter), one body per line; a body is
      written whole or not at all.
      With
      .BR \-\-pull ,
      a warning says that documents whose attachments are only blobs lose them in Sync Gateway.
      For
      .BR \-\-push ,
      .B \-\-pull
      and
      .B \-\-upgrade
      only.
      """#,
    read: { parsed, spelling, value throws(UsageError) in
      guard let number = Int(value!), number >= 1, number <= 1_000_000 else {
        throw UsageError(
          message: "--bulk-docs must be a whole number from 1 to 1000000, not '\(value!)'")
      }
      parsed.bulkDocs = number
    },
    finish: { parsed throws(UsageError) in
      guard [.push, .pull, .upgrade].contains(parsed.mode) else {
        throw UsageError(
          message:
            "--bulk-docs applies to --push, --pull and --upgrade only, not \(parsed.invocation.modeGiven!)"
        )
      }
      parsed.invocation.options.bulkDocs = BulkDocsOutput(
        documentsPerBody: parsed.bulkDocs!, newEditsFalse: parsed.newEdits == false)
    }),
  OptionSpec(

    "--new-edits", value: "false", "with --bulk-docs: bodies end with \"new_edits\":false",
    manual: #"""
      .B "\-\-new\-edits false"
      With
      .BR \-\-bulk\-docs :
      each body ends with
      .BR \(dqnew_edits\(dq:false .
      .B "\-\-new\-edits true"
      is the default and changes nothing.
      """#,
    read: { parsed, spelling, value throws(UsageError) in
      guard value == "false" || value == "true" else {
        throw UsageError(message: "--new-edits must be false (or true), not '\(value!)'")
      }
      parsed.newEdits = value == "true"
    },
    finish: { parsed throws(UsageError) in
      guard parsed.bulkDocs != nil else {
        throw UsageError(message: "--new-edits applies to --bulk-docs only")
      }
    }),
  OptionSpec(

    "--couchdb-max-document-size", value: "BYTES",
    "--check: CouchDB's [couchdb] max_document_size (default",
    "8000000; 0: not checked), for couchdb-document-too-large",
    manual: #"""
      .BI \-\-couchdb\-max\-document\-size " bytes"
      With
      .BR \-\-check :
      the
      .B "[couchdb] max_document_size"
      of the CouchDB the documents are for, which
      .B couchdb\-document\-too\-large
      findings are measured against (default 8000000, CouchDB\(aqs own); 0 checks none.
      """#,
    read: { parsed, spelling, value throws(UsageError) in
      guard let number = Int(value!), number >= 0 else {
        throw UsageError(
          message: "--couchdb-max-document-size must be a whole number of bytes (0: no limit),"
            + " not '\(value!)'")
      }
      parsed.couchDBMaxDocumentSize = number
    },
    finish: { parsed throws(UsageError) in
      guard parsed.mode == .check else {
        throw UsageError(message: "--couchdb-max-document-size applies to --check only")
      }
      let size = parsed.couchDBMaxDocumentSize!
      parsed.invocation.options.couchDBMaxDocumentSize = size == 0 ? nil : size
    }),
  OptionSpec(

    "--blobs", value: "DIR", "carry attachment bytes to and from a Couchbase Lite blob store",
    "(DIR is .../Attachments or the .cblite2 folder): push writes",
    "\"data\" read from the files, pull stores \"data\" as files; both",
    "check every body against its digest and length",
    manual: #"""
      .BI \-\-blobs " dir"
      Carry attachment bytes to and from a Couchbase Lite blob store:
      .I dir
      is the database\(aqs
      .B Attachments
      folder, or the
      .B .cblite2
      folder itself (then
      .IB dir /Attachments
      is used).
      It must exist and be a directory, checked before any input is read
      .RB ( \-\-pull
      may create its last level: a new
      .IB name .cblite2
      folder and its
      .BR Attachments ).
      See
      .BR "ATTACHMENT BODIES" .
      """#,
    read: { parsed, spelling, value throws(UsageError) in
      guard !value!.isEmpty else { throw UsageError(message: "--blobs needs a directory") }
      parsed.blobsPath = value
    },
    finish: { parsed throws(UsageError) in
      parsed.invocation.options.blobs = BlobStoreOptions(
        path: parsed.blobsPath!, missing: parsed.missingBlobs ?? .error)
    }),
  OptionSpec(
    "--into", value: "PROPERTY", "--upgrade: the top-level property the new blobs go in",
    manual: #"""
      .BI \-\-into " property"
      With
      .BR \-\-upgrade :
      the top\-level property the new blobs go in (default
      .BR attachments ).
      It is one key, taken literally; it must not be empty and must not start with
      .B _
      (Couchbase Lite strips top\-level
      .B _
      properties), otherwise it is a usage error.
      """#,
    read: { parsed, spelling, value throws(UsageError) in
      parsed.into = value
    },
    finish: { parsed throws(UsageError) in
      guard parsed.mode == .upgrade else {
        throw UsageError(message: "--into applies to --upgrade only")
      }
      let into = parsed.into!
      guard !into.isEmpty, !into.hasPrefix("_") else {
        throw UsageError(
          message:
            "--into must name a top-level property that does not start with _ (Couchbase Lite"
            + " removes those), not '\(into)'")
      }
      parsed.invocation.options.upgradeInto = into
    }),
  OptionSpec(

    "--update-blobs", "--pull: match entries by the place their name gives (blob_/…, $…),",
    "and copy a replaced attachment's digest, length and type into",
    "its blob, as Couchbase Lite's replicator does",
    manual: #"""
      .B \-\-update\-blobs
      With
      .BR \-\-pull :
      match entries by the place their name gives, as Couchbase Lite\(aqs replicator does, and copy a
      replaced attachment\(aqs digest, length and content type into its blob (see
      .BR MODES ).
      """#,
    read: { parsed, spelling, value throws(UsageError) in
      parsed.invocation.options.updateBlobs = true
    },
    finish: { parsed throws(UsageError) in
      guard parsed.mode == .pull else {
        throw UsageError(message: "--update-blobs applies to --pull only")
      }
    }),
  OptionSpec(

    "--missing-blobs", value: "error|stub",
    "push --blobs: a missing file rejects the document (error, the",
    "default) or makes a stub with a warning",
    manual: #"""
      .BI \-\-missing\-blobs " error" | stub
      With
      .B "\-\-push \-\-blobs"
      only: what a blob (or a kept real entry) whose file is missing makes:
      .B error
      (the default) rejects the document;
      .B stub
      makes its entry a stub
      .RB ( \(dqstub\(dq:true,\(dqrevpos\(dq: N ,
      N as for
      .BR "\-\-naming litecore" ;
      a kept real entry keeps its own
      .B revpos
      if it has one)
      with a warning.
      """#,
    read: { parsed, spelling, value throws(UsageError) in
      guard let missing = MissingBlobs(rawValue: value!) else {
        throw UsageError(message: "--missing-blobs must be error or stub, not '\(value!)'")
      }
      parsed.missingBlobs = missing
    },
    finish: { parsed throws(UsageError) in
      guard parsed.blobsPath != nil, parsed.mode == .push else {
        throw UsageError(message: "--missing-blobs applies to --push with --blobs only")
      }
    }),
  OptionSpec(

    "--output", short: "o", value: "FILE", "write to FILE instead of standard output, replacing it",
    "only at the end of a run that did not fail; FILE may be an",
    "input (converted in place, and replaced only if nothing was lost)",
    manual: #"""
      .BR \-o ", " \-\-output " \fIfile\fR"
      Write to
      .I file
      instead of standard output, all or nothing: the output goes to a temporary file beside it
      .RI ( .file.XXXXXX ,
      with the permission bits of
      .I file
      when it exists), which is synced and renamed over
      .I file
      at the end.
      A run that fails (status 2) leaves
      .I file
      as it was, or does not make it.
      .I file
      may be one of the inputs (by any name; standard input counts): it is then converted in place,
      and replaced only if nothing of it would be lost (every document converted, or every rejected
      one saved with
      .BR \-\-rejects );
      otherwise it is kept and the status is 2.
      .BR \-\-list ,
      .B \-\-check
      and
      .B \-\-bulk\-docs
      refuse to replace an input.
      With no input named, a
      .I file
      that has something in it is not replaced by what a terminal gives (refused at once, status 2)
      or by the output of an empty standard input (kept, status 2): that is the in-place recipe
      .RB ( "\-o dump.ndjson dump.ndjson" )
      with its input forgotten.
      Give
      .B \-
      as the input to mean standard input as it is.
      A symbolic link stays a link (its target is replaced); a file that is not a regular file
      .RB ( /dev/null ,
      a FIFO) is written directly.
      .BR "\-o \-" ,
      .BR "\-o /dev/stdout" ,
      and a
      .I file
      that is the file standard output already is, are standard output.
      The owner, group and mode of a replaced file are kept where the program may set them.
      The temporary file is removed when
      .BR SIGINT ,
      .B SIGTERM
      or
      .B SIGHUP
      ends the run (one the program was started ignoring stays ignored).
      """#,
    read: { parsed, spelling, value throws(UsageError) in
      guard !value!.isEmpty else {
        throw UsageError(message: "\(spelling) needs a file name (- for standard output)")
      }
      parsed.invocation.outputPath = value == "-" ? nil : value
    }),
  OptionSpec(

    "--keep-going", short: "k", "report a bad document and go on with the next (default: stop)",
    manual: #"""
      .BR \-k ", " \-\-keep\-going
      Report a bad document and go on with the next one, instead of stopping at the first bad
      document.
      See
      .BR DIAGNOSTICS .
      """#,
    read: { parsed, spelling, value throws(UsageError) in
      parsed.invocation.options.keepGoing = true
    }),
  OptionSpec(

    "--rejects", value: "FILE", "save each bad document's original text to FILE (implies -k)",
    manual: #"""
      .BI \-\-rejects " file"
      Save the original text of each rejected document in
      .IR file ,
      one after another, each with trailing white space removed and followed by a newline, so that
      nothing of the input is lost.
      Implies
      .BR \-\-keep\-going .
      .I file
      is created or truncated even when nothing is rejected, but never when it is one of the inputs
      (the same file, whatever its name; standard input counts) or standard output: that is an error
      (status 2, see
      .BR DIAGNOSTICS )
      found before anything is read or written.
      A character device such as
      .B /dev/null
      is always accepted.
      A failed write of
      .I file
      ends the run as a failed write of standard output does.
      """#,
    read: { parsed, spelling, value throws(UsageError) in
      guard !value!.isEmpty else { throw UsageError(message: "\(spelling) needs a file name") }
      // Where `-` names a stream elsewhere it would be standard output here, which carries the
      // converted documents: mixed with them the rejects could not be told apart.
      guard value != "-" else {
        throw UsageError(
          message: "\(spelling) - would mix the rejects into standard output; name a file"
            + " (./- for a file called -)")
      }
      parsed.invocation.rejectsPath = value
      parsed.invocation.options.keepGoing = true
    }),
  OptionSpec(

    "--strict", "treat warnings as errors (a blob without a digest, an entry",
    "pull keeps for its bytes, an entry upgrade leaves, a blob",
    "--update-blobs does not update)",
    manual: #"""
      .B \-\-strict
      Treat warnings (a blob without a string digest, an entry pull keeps for its bytes, an entry
      upgrade leaves as it is, a blob
      .B \-\-update\-blobs
      does not update) as errors: the document is rejected.
      """#,
    read: { parsed, spelling, value throws(UsageError) in
      parsed.invocation.options.strict = true
    }),
  OptionSpec(
    "--stats", "print a summary on standard error at the end",
    manual: #"""
      .B \-\-stats
      At the end, in any mode, write a summary on standard error:
      documents, blob references, entries added and removed (by
      .BR \-\-push ,
      entries of an earlier push that it replaced), warnings, errors (rejected documents; with
      .BR \-\-check ,
      documents with a finding), bytes read and written, seconds and throughput, as in
      .RS
      .PP
      .nf
      .B "cbl\-attachments: 20 documents, 20 blobs, 20 entries added, 0 removed,"
      .B "   0 warnings, 0 errors; 5810 bytes in, 8214 bytes out; 0.001 s (7.1 MB/s)"
      .fi
      .PP
      (one line).
      .RE
      .IP
      "Bytes in" are the bytes read: a run that stops at a bad document has read past it (a read\(aqs
      worth with
      .BR "\-j 1" ,
      up to a few batches with
      .BR "\-j N" )
      and counts them.
      When documents were rejected without
      .BR \-\-rejects ,
      the line ends with
      .BI "; " N " bytes skipped" :
      the input bytes of what was skipped.
      """#,
    read: { parsed, spelling, value throws(UsageError) in
      parsed.invocation.stats = true
    }),
  OptionSpec(
    "--progress", "show progress on standard error while running (terminal only)",
    manual: #"""
      .B \-\-progress
      While running, show the input's name, the MiB read, the documents done, the rate and, for
      a regular file, the percentage and the time left, on one line of standard error that is
      redrawn in place a few times a second, as in
      .RS
      .PP
      .nf
      .B "dump.ndjson: 67.0 MiB, 194923 documents, 263.7 MiB/s, 42%, 0 s left"
      .fi
      .PP
      A diagnostic clears the line before it is printed, and the line is cleared at the end.
      It is shown only when standard error is a terminal, so that
      .B \-\-progress
      can stay in scripts; nothing of it ever goes to standard output.
      .RE
      """#,
    read: { parsed, spelling, value throws(UsageError) in
      parsed.invocation.progress = true
    }),
  OptionSpec(

    "--jobs", short: "j", value: "N", "convert on N threads; output stays in input order",
    "(default: the number of processors, at most 8)",
    manual: #"""
      .BR \-j " \fIn\fP, " \-\-jobs " \fIn\fP"
      Convert on
      .I n
      threads (1 to 1024; by default the number of processors, at most 8).
      The output is the same, in input order, whatever
      .I n
      is.
      NDJSON input is cut into batches just before lines that start with
      .BR { ,
      and so are envelopes one per line (a continuous
      .B _changes
      feed, or response bodies one per line).
      One envelope whose documents are array elements and whose rows are one per line (one big
      .BR _changes ,
      .B _all_docs
      or
      .B _bulk_get
      body) is cut between its rows too, and so is list input (one array, a document per line).
      Unbuffered runs,
      .B \-\-blobs
      runs, and input from where 4 MiB hold no such line, are converted on one thread.
      With
      .BR \-\-bulk\-docs ,
      the documents are grouped into bodies after they are back in input order, so bodies are the
      same whatever
      .I n
      is.
      To use several processes or machines instead, see
      .BR "SCALING OUT" .
      """#,
    read: { parsed, spelling, value throws(UsageError) in
      guard let number = Int(value!), number >= 1, number <= 1024 else {
        throw UsageError(
          message: "\(spelling) must be a whole number from 1 to 1024, not '\(value!)'")
      }
      parsed.invocation.jobs = number
    }),
  OptionSpec(
    "--unbuffered", "write each document as soon as it is converted",
    manual: #"""
      .B \-\-unbuffered
      Write each document as soon as it is converted, instead of in blocks, for pipelines that
      follow a growing input
      .RB ( "tail \-f" ).
      """#,
    read: { parsed, spelling, value throws(UsageError) in
      parsed.invocation.unbuffered = true
    }),
  OptionSpec(
    "--help", short: "h", "show this help and exit",
    manual: #"""
      .BR \-h ", " \-\-help
      Show a summary of the usage and exit.
      """#,
    read: { parsed, spelling, value throws(UsageError) in
      parsed.invocation.help = true
    }),
  OptionSpec(
    "--version", "show the version and exit",
    manual: #"""
      .B \-\-version
      Show the version, and the version of yajl, and exit.
      """#,
    read: { parsed, spelling, value throws(UsageError) in
      parsed.invocation.version = true
    }),
]
