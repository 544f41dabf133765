/// The text of `--help`.
let helpText = """
  Usage: cbl-attachments (--push | --pull | --upgrade | --list | --check) [OPTION]... [FILE]...

  Convert between Couchbase Lite 2 blobs ({"@type":"blob",...} anywhere in a document) and the
  top-level "_attachments" that Sync Gateway, Couchbase Lite 1.x, CouchDB and PouchDB use.
  Reads JSON documents from FILEs (or standard input when there are none, or for -), writes
  one compact document per line to standard output.

  Modes (exactly one):
        --push             add an "_attachments" entry for every blob, named by its path
                           ($.photos.thumbnail); entries an earlier push made are replaced
        --pull             remove the "_attachments" entries whose digest matches a blob, and
                           "_attachments" itself when nothing is left
        --upgrade          move legacy attachments (Couchbase Lite 1.x, CouchDB, PouchDB)
                           into blobs under --into PROPERTY (default attachments); md5-
                           digests re-hashed to SHA-1 when the bytes are inline
        --list             one NDJSON row per attachment (blob or legacy): id, line, kind, name,
                           pointer, digest, length, content_type
        --check            one NDJSON finding per problem Sync Gateway would refuse or a
                           conversion would lose; a summary on standard error

  Options:
        --naming NAMING    jsonpath ($.a.b[2], the default) or litecore (blob_/a/b/2, with
                           "stub":true and "revpos", as Couchbase Lite 2.1+ sends)
        --revpos N         the revpos of litecore entries (default: the _rev generation, or 1)
        --format FORMAT    lines (default: whitespace-separated documents, NDJSON), list
                           (one JSON array of documents, as cbexport --format list writes),
                           or a REST API body, converted in place: changes (.results[].doc),
                           all-docs (.rows[].doc), bulk-docs (.docs[]), bulk-get
                           (.results[].docs[].ok, CouchDB's JSON)
        --docs PATH        where the documents are in each input value: a jq path of .NAME,
                           ."any key" and [] steps (.doc for a continuous _changes feed)
        --bulk-docs N      write _bulk_docs request bodies of N documents, one per line
        --new-edits false  with --bulk-docs: bodies end with "new_edits":false
        --blobs DIR        carry attachment bytes to and from a Couchbase Lite blob store
                           (DIR is .../Attachments or the .cblite2 folder): push writes
                           "data" read from the files, pull stores "data" as files; both
                           check every body against its digest and length
        --into PROPERTY    --upgrade: the top-level property the new blobs go in
        --update-blobs     --pull: match entries by the place their name gives (blob_/…, $…),
                           and copy a replaced attachment's digest, length and type into
                           its blob, as Couchbase Lite's replicator does
        --missing-blobs error|stub
                           push --blobs: a missing file rejects the document (error, the
                           default) or makes a stub with a warning
    -k, --keep-going       report a bad document and go on with the next (default: stop)
        --rejects FILE     save each bad document's original text to FILE (implies -k)
        --strict           treat warnings as errors (a blob without a digest, an entry
                           pull keeps for its bytes)
        --stats            print a summary on standard error at the end
        --progress         show progress on standard error while running (terminal only)
    -j, --jobs N           convert on N threads; output stays in input order
                           (default: the number of processors, at most 8)
        --unbuffered       write each document as soon as it is converted
    -h, --help             show this help and exit
        --version          show the version and exit

  Exit status: 0 every document converted; 1 a document was rejected, --check found a
  problem, or --strict saw a warning; 2 usage error, unreadable input or failed write.

  Examples:
    cbl-attachments --push dump.ndjson > for-sync-gateway.ndjson
    curl -sS 'http://sg:4985/db/_changes?include_docs=true' \\
      | cbl-attachments --pull --format changes
    cbl-attachments --push --naming litecore --bulk-docs 500 dump.ndjson \\
      | parallel --pipe -N1 curl -sS -H 'Content-Type: application/json' \\
          --data-binary @- http://sg:4985/db/_bulk_docs
    cbl-attachments --list dump.ndjson | jq -s 'group_by(.digest) | map(select(length > 1))'

  Full documentation: man cbl-attachments (in the source tree: man -l man/cbl-attachments.1)
  """
